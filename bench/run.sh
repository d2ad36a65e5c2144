#!/bin/sh
# run.sh -- on a GPU machine: `vyre bench` and the PyTorch/CuPy peers in one run, then the ratio table.
# usage: bench/run.sh BUILD_DIR OUT_DIR [SIZES]   (SIZES: comma-separated element counts)
set -eu
build=${1:?build dir}
out=${2:?output dir}
sizes=${3:-1048576,16777216,268435456}
here=$(cd "$(dirname "$0")" && pwd)
mkdir -p "$out"
"$build/host-stub/cli/vyre" bench --backend cuda --sizes "$sizes" --json | tee "$out/vyre.jsonl"
PYTHONUNBUFFERED=1 python3 "$here/peers.py" $(echo "$sizes" | tr , ' ') | tee "$out/peers.jsonl"
python3 "$here/compare.py" "$out/vyre.jsonl" "$out/peers.jsonl" | tee "$out/table.md"
