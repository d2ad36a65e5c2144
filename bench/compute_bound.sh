#!/bin/sh
# compute_bound.sh -- on a GPU machine: matmul_tiled / matmul / sum PTX from `vyre emit-ptx`, timed by bench/compute_bound.c, then the torch peers, in one run.
# usage: bench/compute_bound.sh BUILD_DIR OUT_DIR   (needs gcc, the CUDA headers and libcuda; PyTorch for the peers)
set -eu
build=${1:?build dir}
out=${2:?output dir}
here=$(cd "$(dirname "$0")" && pwd)
src=$(dirname "$here")
cuda=${CUDA_HOME:-/usr/local/cuda}
mkdir -p "$out"
for k in matmul_tiled matmul sum; do
  "$build/host-stub/cli/vyre" emit-ptx "$src/examples/$k.vyre" --arch sm_90 -o "$out/$k.ptx"
done
gcc -O2 -std=c11 "$here/compute_bound.c" -I"$cuda/include" -L"$cuda/lib64/stubs" -lcuda -lm -o "$out/compute_bound"
{
  "$out/compute_bound" matmul "$out/matmul_tiled.ptx" "$out/matmul.ptx" 4096 4096 4096 30
  python3 "$here/compute_bound_peers.py"
  "$out/compute_bound" sum "$out/sum.ptx" 268435456 2048,1056 30
} | tee "$out/compute_bound.jsonl"
