#!/bin/sh
# run.sh -- the whole benchmark suite in one call on one GPU: the raw Driver-API floor, `vyre bench`, the compute-bound examples, PyTorch and CuPy (bench/peers.py), the workloads beside their CUDA peers and the tensor-core matmuls beside cuBLAS (bench/mma.sh); then the ratio table and the plot.
# usage: bench/run.sh BUILD_DIR OUT_DIR [SIZES]   (SIZES: comma-separated element counts)
#        bench/run.sh mathcost BUILD_DIR OUT_DIR   (the math-cost benchmark alone, bench/mathcost/README.md)
# OUT_DIR gets each part's raw JSON lines (floor.jsonl, vyre.jsonl,
# compute.jsonl, peers.jsonl, workloads.jsonl (vyre, the CUDA peers built by
# bench/workloads/peers.sh, the rooflines), workloads_ref.jsonl, mma.jsonl
# (bench/mma.sh at 4096^3; its own files in mma/)), the log of each part (*.log), machine.txt,
# table.md (bench/compare.py) and ratios.svg (bench/plot.py).  Copy OUT_DIR
# to bench/results/DATE-GPU/ and run bench/report.py on it to refresh
# BENCHMARKS.md.  A part that cannot run (no PyTorch, say) is logged and
# left out; the others still run.  The whole run ends with the math-cost
# benchmark (bench/mathcost/run.sh: its files in OUT_DIR/mathcost/, its
# tables in OUT_DIR/mathcost/summary.md).
set -u
if [ "${1:-}" = mathcost ]; then
  shift
  exec "$(cd "$(dirname "$0")" && pwd)/mathcost/run.sh" "$@"
fi
build=${1:?build dir}
out=${2:?output dir}
sizes=${3:-1048576,16777216,268435456}
here=$(cd "$(dirname "$0")" && pwd)
mkdir -p "$out"
vyre=$build/host-stub/cli/vyre
{
  date -u +%Y-%m-%dT%H:%M:%SZ
  nvidia-smi --query-gpu=name,driver_version,memory.total,clocks.max.sm --format=csv,noheader 2>&1
  python3 -c 'import torch; print("torch", torch.__version__)' 2>&1 | tail -1
  python3 -c 'import cupy; print("cupy", cupy.__version__)' 2>&1 | tail -1
  nproc
} > "$out/machine.txt"
cat "$out/machine.txt"

part() { # part NAME COMMAND...: JSON lines to NAME.jsonl, stderr to NAME.log
  name=$1
  shift
  echo "== $name: $*" >&2
  "$@" > "$out/$name.jsonl" 2> "$out/$name.log" || echo "== $name: exit $?" | tee -a "$out/$name.log" >&2
}

part floor "$build/bench/floor" --sizes "$sizes"
part vyre "$vyre" bench --backend cuda --sizes "$sizes" --jsonl
part compute "$here/compute.sh" "$build"
PYTHONUNBUFFERED=1 part peers python3 "$here/peers.py" $(echo "$sizes" | tr , ' ')
if [ -x "$build/bench/workloads/workloads" ]; then
  # The workloads' hand-written CUDA peers (nvcc); without them the driver
  # reports "peer: skipped (...)" and the reason is in peers_build.log.
  echo "== peers_build: $here/workloads/peers.sh $build" >&2
  "$here/workloads/peers.sh" "$build" > "$out/peers_build.log" 2>&1 ||
    echo "== peers_build: failed, the workloads run without their CUDA peers: $(tail -1 "$out/peers_build.log")" >&2
  part workloads "$build/bench/workloads/workloads" --backend cuda --json
  # The reference backend once per workload, for its time (an interpreter).
  part workloads_ref "$build/bench/workloads/workloads" --backend reference --mode host --runs 1 \
    --baseline-runs 3 --json
fi
# The tensor-core matmuls (examples/matmul_mma_*.vyre) against torch.matmul
# and torch._int_mm, checked; a failed check is logged in mma.log.
part mma "$here/mma.sh" "$build" "$out/mma" 4096x4096x4096
# The transcendentals' cost and the row softmax beside CUDA C (about 2 minutes).
echo "== mathcost: $here/mathcost/run.sh $build $out/mathcost" >&2
"$here/mathcost/run.sh" "$build" "$out/mathcost" > "$out/mathcost.log" 2>&1 ||
  echo "== mathcost: exit $?" | tee -a "$out/mathcost.log" >&2
python3 "$here/compare.py" "$out/vyre.jsonl" "$out/compute.jsonl" "$out/floor.jsonl" \
  "$out/peers.jsonl" > "$out/table.md"
python3 "$here/plot.py" "$out/ratios.svg" "$out/vyre.jsonl" "$out/compute.jsonl" "$out/peers.jsonl"
cat "$out/table.md"
