#!/bin/bash
# gpu24.sh: the issue-24 branch (cli24 + open24 + py24 merged) on the device; logs under $OUT.
R=$PWD
mkdir -p /work/wt/issue24 && tar xzf build-carry24/src24.tgz -C /work/wt/issue24 && ln -sfn $R/build-carry24 /work/wt/issue24/build
cd /work/wt/issue24 || exit 1
B=build; V=$PWD/$B/host-stub/cli/vyre
L=$OUT/h; mkdir -p "$L"
export XDG_CACHE_HOME=/tmp/xdg24
S=$(date +%s)
( cd $B && VYRE_BUILD_DIR=$PWD timeout 300 tests/runtime/check_cuda_gpu > "$L/check_cuda_gpu.txt" 2>&1; echo "check_cuda_gpu rc=$?" >> "$L/sum.txt" ) &
( timeout 400 $V conform --backend cuda --corpus tests/conformance --capsules "$L/confcaps" > "$L/conform.txt" 2>&1; echo "conform rc=$?" >> "$L/sum.txt" ) &
( timeout 400 $V fuzz --backend cuda --seed $((S % 100000)) --count 1000 --capsules "$L/gencaps" > "$L/gen.txt" 2>&1; echo "fuzz seed $((S % 100000)) rc=$?" >> "$L/sum.txt" ) &
( cd $B && VYRE_BUILD_DIR=$PWD VYRE_SRC_DIR=/work/wt/issue24 timeout 300 sh /work/wt/issue24/tests/python/gpu.test > "$L/python_gpu.txt" 2>&1; echo "python gpu.test rc=$?" >> "$L/sum.txt" ) &
wait
( cd tests/python && VYRE_THREADS_BACKEND=cuda PYTHONPATH=/work/wt/issue24/build/python:. timeout 200 python3 -B -m unittest -v test_threads > "$L/threads_cuda.txt" 2>&1; echo "test_threads cuda rc=$?" >> "$L/sum.txt" )
{
  LC=$(ldconfig -p | awk '/libcuda.so.1 /{print $NF; exit}'); echo "libcuda: $LC"
  VYRE_CUDA_DRIVER=$LC $V list; echo "list with VYRE_CUDA_DRIVER rc=$?"
  head -c 20000 "$LC" > /tmp/cut.so
  VYRE_CUDA_DRIVER=/tmp/cut.so $V list; echo "list with a truncated driver rc=$?"
  d=$(mktemp -d); for i in 1 2; do VYRE_CACHE_DIR=$d $V run examples/saxpy.vyre --backend cuda --fill 2 --iota 0:4 --fill 1:4; echo "run $i rc=$?"; done
  ls $d | head; rm -rf $d
  $V bench --backend cuda --cases compile_cold,compile_warm_hit,compile_disk_hit
  $V bench --backend cuda --cases roundtrip_1k,dispatch_bytes_1k,dispatch_resident_1k --iters 20000
} > "$L/open.txt" 2>&1
echo "elapsed $(( $(date +%s) - S )) s" >> "$L/sum.txt"
tail -n 1 "$L/gen.txt" >> "$L/sum.txt"; tail -n 3 "$L/conform.txt" >> "$L/sum.txt"
tail -n 2 "$L/check_cuda_gpu.txt" "$L/python_gpu.txt" "$L/threads_cuda.txt" >> "$L/sum.txt"
cd "$OUT" && tar czf h.tgz h && cp h/sum.txt sum.txt && rm -rf h
