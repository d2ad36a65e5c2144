#!/bin/sh
# compute.sh -- the compute-bound cases through vyre's runtime: examples/matmul_tiled.vyre at 4096^3 (matmul_4096) and examples/sum.vyre's two passes over 256 Mi f32 (sum_256m), device time (vyre run --timed, median), as JSON lines for bench/compare.py.
# usage: bench/compute.sh BUILD_DIR [REPEAT]   (on a GPU machine; prints JSON lines)
set -eu
build=${1:?build dir}
repeat=${2:-20}
src=$(cd "$(dirname "$0")/.." && pwd)
vyre=$build/host-stub/cli/vyre
# The device median in us from `vyre run --timed` ("device  MIN / MEDIAN / MEAN").
median() {
  awk '$1 == "device" { v = $5; u = $6; if (u == "ms") v *= 1000; else if (u == "s") v *= 1000000; print v }'
}
n=4096
mm=$("$vyre" run "$src/examples/matmul_tiled.vyre" --backend cuda --fill $n:3 --random 1:$((n * n)) \
  --random 2:$((n * n)) --random 3:$((n * n)) --grid $((n / 128)),$((n / 128)) --timed \
  --repeat "$repeat" --show 0 | median)
echo "{\"peer\": \"vyre-cuda\", \"case\": \"matmul_4096\", \"median_us\": $mm}"
e=$((256 << 20))
p1=$("$vyre" run "$src/examples/sum.vyre" --backend cuda --fill 2048:1 --random 1:$e --grid 2048 \
  --timed --repeat "$repeat" --show 0 | median)
p2=$("$vyre" run "$src/examples/sum.vyre" --backend cuda --fill 1:1 --random 2:2048 --grid 1 \
  --timed --repeat "$repeat" --show 0 | median)
awk -v a="$p1" -v b="$p2" -v e="$e" 'BEGIN { t = a + b; printf "{\"peer\": \"vyre-cuda\", \"case\": \"sum_256m\", \"median_us\": %.3f, \"gbps\": %.1f, \"pass1_us\": %.3f, \"pass2_us\": %.3f}\n", t, 4 * e / (t * 1e3), a, b }'
