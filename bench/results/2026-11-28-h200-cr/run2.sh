#!/bin/bash
# run2.sh: the correctly rounded variant over every f32 input: on the GPU against libdevice (cr_sweep),
# the GPU against the C model (gpu_ptxmath), and the C model (the reference backend's code) on the CPU
# against glibc double / long double (sweep_ptxmath -q), all 14 functions.
set -u
L=$OUT; cd build-cr2
N=$(command -v nvcc || echo /usr/local/cuda/bin/nvcc)
$N -ptx -arch=sm_90 -o cr_oracle.ptx ../tests/ptxmath/cr_oracle.cu
{ nvidia-smi --query-gpu=name,driver_version --format=csv,noheader; nproc; lscpu | grep 'Model name'; ldd --version | head -1; } > $L/machine.txt
( time ./cr_sweep -o cr_oracle.ptx -v cr -r $L/cr.records ) > $L/cr_sweep.txt 2>&1; echo "rc=$?" >> $L/cr_sweep.txt
( time timeout 150 ./gpu_ptxmath -t 16 ) > $L/gpu_ptxmath.txt 2>&1; echo "rc=$?" >> $L/gpu_ptxmath.txt
( time timeout 400 ./sweep_ptxmath -q -v cr -t 16 -o $L/cpu.records ) > $L/cpu_sweep.txt 2>&1; echo "rc=$?" >> $L/cpu_sweep.txt
cat $L/cr_sweep.txt $L/gpu_ptxmath.txt $L/cpu_sweep.txt | tail -70
