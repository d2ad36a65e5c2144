#!/bin/bash
# gpu23.sh: issue 23 on the device: GPU suites, python/DLPack with torch, UUIDs, conformance (certificate), plain fuzz,
# validation layer on CUDA, dispatch cost against the d022aa3 baseline; logs under $OUT.
B=build-gpu
L=$OUT/g; mkdir -p "$L"
export XDG_CACHE_HOME=$PWD/$B/tests/cache
V=$PWD/$B/host-stub/cli/vyre
S=$(date +%s)
nvidia-smi -L > "$L/device.txt" 2>&1
# 1. correctness, in parallel
( cd $B && VYRE_BUILD_DIR=$PWD timeout 300 tests/runtime/check_cuda_gpu > "$L/check_cuda_gpu.txt" 2>&1; echo "check_cuda_gpu rc=$?" >> "$L/sum.txt" ) &
( cd $B && VYRE_BUILD_DIR=$PWD timeout 300 tests/ptxmath/gpu_ptxmath > "$L/gpu_ptxmath.txt" 2>&1; echo "gpu_ptxmath rc=$?" >> "$L/sum.txt" ) &
( timeout 400 $V conform --backend cuda --certificate "$L/cert.json" --capsules "$L/confcaps" > "$L/conform.txt" 2>&1; echo "conform rc=$?" >> "$L/sum.txt" ) &
for k in 0 1 2; do
  ( timeout 400 $V fuzz --backend cuda --seed $((S % 100000 + k)) --count 1000 --capsules "$L/gencaps$k" > "$L/gen$k.txt" 2>&1; echo "fuzz-gen$k seed $((S % 100000 + k)) rc=$?" >> "$L/sum.txt" ) &
done
( cd $B && VYRE_BUILD_DIR=$PWD VYRE_SRC_DIR=$PWD/.. timeout 300 sh ../tests/python/gpu.test > "$L/python_gpu.txt" 2>&1; echo "python gpu.test rc=$?" >> "$L/sum.txt" ) &
wait
# 2. UUIDs and --device by UUID
{
  U=$(nvidia-smi -L | sed -n '1s/.*UUID: \(GPU-[^)]*\)).*/\1/p'); echo "nvidia-smi uuid: $U"
  $V info cuda | grep -E '^device|uuid:'
  $V info cuda --device "${U:0:12}" | head -4
  $V run examples/saxpy.vyre --backend cuda --device "$U" --fill 2 --iota 0:16 --fill 1:16; echo "run by uuid rc=$?"
  $V list; $V list --no-probe; echo "list --no-probe rc=$?"
  readelf -d $B/abi/.libs/libvyre.so | grep SONAME
  ( cd $B && PYTHONPATH=$PWD/python python3 -c "import numpy as np,torch,vyre; be=vyre.open('cuda'); r=be.upload(np.arange(8,dtype=np.float32)); t=torch.from_dlpack(r); print(t.device, t.data_ptr()==r.device_ptr); t.mul_(2); torch.cuda.synchronize(); print(r.download()); print(r.__dlpack__(max_version=(1,0)), be.profile().uuid)" )
} > "$L/uuid.txt" 2>&1
# 3. validation layer on CUDA: the corpus under VYRE_VALIDATE=all (conform's dispatches go through the checking instance)
mkdir -p "$L/val" && ( cd "$L/val" && VYRE_VALIDATE=all timeout 300 $V conform --backend cuda --capsules "$L/val/caps" > "$L/val/conform.txt" 2>&1; echo "conform under VYRE_VALIDATE=all rc=$? capsules=$(ls vyre-validate 2>/dev/null | wc -l)" >> "$L/sum.txt" )
# 4. dispatch cost: baseline d022aa3 (build-base) vs this tree, interleaved, then the layer on
BV=$PWD/build-base/vyre
for r in 1 2 3 4 5; do
  XDG_CACHE_HOME=$PWD/build-base/cache $BV bench --backend cuda --cases roundtrip_1k,dispatch_bytes_1k,dispatch_resident_1k --iters 20000 > "$L/bench_base$r.txt" 2>&1
  $V bench --backend cuda --cases roundtrip_1k,dispatch_bytes_1k,dispatch_resident_1k --iters 20000 > "$L/bench_new$r.txt" 2>&1
done
$B/bench/guard_overhead cuda 200000 7 > "$L/guard_overhead.txt" 2>&1
( cd "$L/val" && VYRE_VALIDATE=all $V bench --backend cuda --cases roundtrip_1k --iters 2000 > "$L/bench_val_all.txt" 2>&1 )
( cd "$L/val" && VYRE_VALIDATE=1/100 $V bench --backend cuda --cases roundtrip_1k --iters 20000 > "$L/bench_val_100.txt" 2>&1 )
timeout 200 python3 examples/check.py --vyre $V --backend cuda > "$L/examples.txt" 2>&1; echo "examples-cuda rc=$?" >> "$L/sum.txt"; tail -n 2 "$L/examples.txt" >> "$L/sum.txt"
echo "elapsed $(( $(date +%s) - S )) s" >> "$L/sum.txt"
for f in "$L"/gen*.txt; do tail -n 1 "$f" >> "$L/sum.txt"; done
tail -n 4 "$L/conform.txt" >> "$L/sum.txt"; tail -n 3 "$L/val/conform.txt" >> "$L/sum.txt"
tail -n 3 "$L/check_cuda_gpu.txt" "$L/python_gpu.txt" >> "$L/sum.txt"
cd "$OUT" && tar czf g.tgz g && cp g/sum.txt sum.txt && rm -rf g
