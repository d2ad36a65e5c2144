#!/bin/bash
# run1.sh: the exhaustive sweep of the accurate variant (every f32 input, 14 functions) against the libdevice oracle.
set -u
L=$OUT; cd build-cr1
N=$(command -v nvcc || echo /usr/local/cuda/bin/nvcc)
$N --version | tail -2 > $L/nvcc.txt
$N -ptx -arch=sm_90 -o cr_oracle.ptx ../tests/ptxmath/cr_oracle.cu 2>&1 | tee -a $L/nvcc.txt
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader >> $L/nvcc.txt
( time ./cr_sweep -o cr_oracle.ptx -v acc -r $L/acc.records ) > $L/acc.txt 2>&1
echo "rc=$?" >> $L/acc.txt
python3 -c "import mpmath; print('mpmath', mpmath.__version__)" >> $L/nvcc.txt 2>&1
cat $L/acc.txt; wc -l $L/acc.records
gzip -k $L/acc.records; ls -la $L
