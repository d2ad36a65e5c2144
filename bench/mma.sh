#!/bin/sh
# mma.sh -- on a GPU machine: the tensor-core matmuls (examples/matmul_mma_{bf16,f16,i8}.vyre) lowered by `vyre emit-ptx`, timed and checked through the driver API (bench/mma.c) and through the plugin, beside torch.matmul / torch._int_mm (bench/mma_peers.py), in one run.
# usage: bench/mma.sh BUILD_DIR OUT_DIR [SIZES] [REPS]
#   SIZES: space- or comma-separated MxNxK (default: 4096x4096x4096,8192x8192x8192)
#   REPS:  timed launches per case, the median reported (default 30)
# Environment: MMA_PROGRAM_DIR (default: examples/) holds matmul_mma_TYPE.vyre;
# MMA_TYPES (default: "bf16 f16 i8"); CC (default gcc); CUDA_HOME (default /usr/local/cuda).
# Needs gcc, cuda.h and the driver; PyTorch for the plugin run and the peers
# (without it they are skipped, and the log says why).
# OUT_DIR gets TYPE.ptx, mma.jsonl (every JSON line: checks, times, the
# summary lines with the ratios) and mma.log.  Exit status 1 when a check
# failed or a part could not run; the ratio target (0.6) is reported, not
# enforced.
set -u
build=${1:?build dir}
out=${2:?output dir}
sizes=$(echo "${3:-4096x4096x4096,8192x8192x8192}" | tr , ' ')
reps=${4:-30}
here=$(cd "$(dirname "$0")" && pwd)
src=$(dirname "$here")
progs=${MMA_PROGRAM_DIR:-$src/examples}
types=${MMA_TYPES:-bf16 f16 i8}
cuda=${CUDA_HOME:-/usr/local/cuda}
vyre=$build/host-stub/cli/vyre
mkdir -p "$out" || exit 1
log=$out/mma.log
jsonl=$out/mma.jsonl
: > "$jsonl"
: > "$log"
fail=0
say() { echo "mma.sh: $*" | tee -a "$log" >&2; }

# shellcheck disable=SC2086 # CC may carry flags
${CC:-gcc} -O2 -std=c11 -Wall -Wextra "$here/mma.c" "$here/mma_check.c" -I"$here" -I"$cuda/include" \
  -ldl -lm -o "$out/mma" 2>> "$log" || { say "building bench/mma.c failed (see $log)"; exit 1; }

for t in $types; do
  prog=$progs/matmul_mma_$t.vyre
  ulp=
  [ "$t" = i8 ] || ulp="--ulp 1" # float MMA is refused under strict (docs/semantics.md)
  # shellcheck disable=SC2086
  if ! "$vyre" emit-ptx "$prog" --arch sm_90 $ulp -o "$out/$t.ptx" --info 2>> "$log"; then
    say "$t: vyre emit-ptx $prog failed (see $log)"
    fail=1
    continue
  fi
  for s in $sizes; do
    echo "== driver $t $s" >> "$log"
    "$out/mma" "$t" "$prog" "$out/$t.ptx" "$s" "$reps" >> "$jsonl" 2>> "$log" ||
      { say "$t $s: bench/mma failed: $(tail -1 "$log")"; fail=1; }
  done
done

echo "== plugin and peers" >> "$log"
# shellcheck disable=SC2086
PYTHONUNBUFFERED=1 python3 "$here/mma_peers.py" --build "$build" --programs "$progs" --types "$types" \
  --sizes "$sizes" --reps "$reps" >> "$jsonl" 2>> "$log" ||
  { say "mma_peers.py failed: $(tail -1 "$log")"; fail=1; }

python3 "$here/mma_peers.py" --summarize "$jsonl" --types "$types" --sizes "$sizes" > "$out/summary.jsonl" 2>> "$log" ||
  { say "the summary reports a failed check or a missing result (see $out/summary.jsonl)"; fail=1; }
cat "$out/summary.jsonl" >> "$jsonl"
cat "$jsonl"
[ "$fail" = 0 ] || say "FAILED (details in $log)"
exit "$fail"
