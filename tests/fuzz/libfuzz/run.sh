#!/bin/sh
# run.sh -- `make fuzz-run FUZZ_SECONDS=N`: run each libFuzzer target of FUZZ_TARGETS for N seconds, one job, over its seeds and committed corpus (docs/fuzzing.md).
# Exits 1 when a target finds a crash, a leak or a timeout (the input is kept under tests/fuzz/work/NAME-crashes/).
set -u
status=0
for t in $FUZZ_TARGETS; do
  work="$builddir/tests/fuzz/work/$t"
  crashes="$builddir/tests/fuzz/work/$t-crashes"
  mkdir -p "$work" "$crashes"
  dirs="$work $builddir/tests/fuzz/seeds/$t"
  if test -d "$srcdir/tests/fuzz/corpus/$t"; then dirs="$dirs $srcdir/tests/fuzz/corpus/$t"; fi
  echo "fuzz-run: $t for $FUZZ_SECONDS s"
  # elf seeds are whole plugins; the others are small texts.
  maxlen=8192
  case $t in elf | elfread) maxlen=65536 ;; esac
  if ! "$builddir/tests/fuzz/bin/fuzz_$t" -max_total_time="$FUZZ_SECONDS" -jobs=1 -workers=1 \
       -max_len=$maxlen -timeout=60 -rss_limit_mb=3072 -print_final_stats=1 \
       -artifact_prefix="$crashes/" $dirs >"$builddir/tests/fuzz/work/$t.log" 2>&1; then
    echo "fuzz-run: $t FAILED: see tests/fuzz/work/$t.log and $crashes/" >&2
    tail -40 "$builddir/tests/fuzz/work/$t.log" >&2
    status=1
  fi
  grep -E '^stat::number_of_executed_units|^stat::average_exec_per_sec' "$builddir/tests/fuzz/work/$t.log" |
    sed "s/^/  $t /"
done
exit $status
