#!/bin/bash
# gpu25.sh: the correctly rounded transcendentals, strict mode and the math-cost benchmark on the device
# (tree = cr25 with issue24-probe merged); logs under $OUT.
R=$PWD
ln -sfn $R/build-carry25 $R/build-gpu
B=$R/build-gpu; V=$B/host-stub/cli/vyre
L=$OUT/h; mkdir -p "$L"
export XDG_CACHE_HOME=/tmp/xdg25
S=$(date +%s)
# 1. The benchmark alone on the GPU (MAKE=true: the carried driver is already built).
MAKE=true timeout 280 bench/run.sh mathcost $B $OUT/mc > "$L/mathcost_run.txt" 2>&1; echo "mathcost rc=$? $(( $(date +%s) - S )) s" >> "$L/sum.txt"
# 2. Correctness, in parallel.
( cd $B && VYRE_BUILD_DIR=$PWD timeout 300 tests/runtime/check_cuda_gpu > "$L/check_cuda_gpu.txt" 2>&1; echo "check_cuda_gpu rc=$?" >> "$L/sum.txt" ) &
( timeout 400 $V conform --backend cuda --corpus tests/conformance --capsules "$L/confcaps" > "$L/conform.txt" 2>&1; echo "conform rc=$?" >> "$L/sum.txt" ) &
( timeout 400 $V fuzz --backend cuda --seed $((S % 100000)) --count 1000 --capsules "$L/gencaps" > "$L/gen.txt" 2>&1; echo "fuzz seed $((S % 100000)) rc=$?" >> "$L/sum.txt" ) &
( cd $B && VYRE_BUILD_DIR=$PWD VYRE_SRC_DIR=$R timeout 300 sh $R/tests/python/gpu.test > "$L/python_gpu.txt" 2>&1; echo "python gpu.test rc=$?" >> "$L/sum.txt" ) &
wait
( timeout 200 $B/tests/ptxmath/gpu_ptxmath -t 16 > "$L/gpu_ptxmath.txt" 2>&1; echo "gpu_ptxmath rc=$?" >> "$L/sum.txt" )
( timeout 120 sh tests/ptxmath/cr-sweep.sh $B $L/crsweep cr > "$L/cr_sweep.txt" 2>&1; echo "cr-sweep rc=$?" >> "$L/sum.txt"; gzip -f $L/crsweep/cr.records 2>/dev/null )
{ $V info cuda | grep -i -E 'correctly|capab'; $V conform --backend cuda --replay tests/conformance/ops.strict/sin.f32.strict.table.vyre 2>&1 | tail -4; $V emit-ptx --arch sm_90 --ulp 0 tests/conformance/ops.strict/sin.f32.strict.table.vyre | grep -c 'selp.b32' ; } > "$L/info.txt" 2>&1
echo "elapsed $(( $(date +%s) - S )) s" >> "$L/sum.txt"
tail -n 1 "$L/gen.txt" >> "$L/sum.txt"; tail -n 3 "$L/conform.txt" >> "$L/sum.txt"
tail -n 2 "$L/check_cuda_gpu.txt" "$L/python_gpu.txt" "$L/gpu_ptxmath.txt" "$L/cr_sweep.txt" >> "$L/sum.txt"
rm -rf "$L/confcaps" "$L/gencaps"
cd "$OUT" && tar czf h.tgz h && cp h/sum.txt sum.txt && rm -rf h
ls -la $OUT $OUT/mc
