#!/bin/sh
# run.sh -- the math-cost benchmark in one call on a GPU machine: builds the CUDA peers (nvcc) and the driver, times the fourteen functions and the row softmax through vyre and CUDA C (mathcost), counts their SASS (sass.sh), and leaves five files in OUT_DIR.
# usage: bench/mathcost/run.sh BUILD_DIR OUT_DIR   (BUILD_DIR: a configured, built tree)
# OUT_DIR receives summary.md (the machine, the tables to paste into
# BENCHMARKS.md, the SASS counts), mathcost.jsonl (one JSON line a
# measurement), mathcost.log (the driver's stderr), sass.md and
# mathcost-work.tar.gz (the build logs, the PTX, cubins and SASS listings).
# Each part that fails says why in summary.md and the next still runs; the
# exit status is 1 when the driver failed or was not built, else 0.
# Time: about 2 minutes on an H200 with the default sizes; MATHCOST_TIMEOUT
# (seconds, default 200) bounds the driver, SASS_TIMEOUT (default 60)
# sass.sh.  MATHCOST_ARGS adds driver options (e.g. "--runs 30",
# "--only exp,softmax").  NVCC, CUDA_HOME, MATHCOST_ARCH (default sm_90) as
# for bench/workloads/peers.sh.
set -u
build=${1:?usage: run.sh BUILD_DIR OUT_DIR}
out=${2:?usage: run.sh BUILD_DIR OUT_DIR}
here=$(cd "$(dirname "$0")" && pwd)
src=$(cd "$here/../.." && pwd)
build=$(cd "$build" && pwd) || exit 1
mkdir -p "$out" || exit 1
out=$(cd "$out" && pwd)
work=$(mktemp -d "${TMPDIR:-/tmp}/mathcost.XXXXXX") || exit 1
sum=$out/summary.md
export VYRE_BUILD_DIR="$build"
# The build tree's libraries, wherever the tree was built: libtool's
# wrappers (the driver, vyre) name the directories of the machine that
# linked them, which a copied tree may not have.
LD_LIBRARY_PATH="$build/host-stub/loader/.libs:$build/abi/.libs${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
export LD_LIBRARY_PATH
say() { echo "$*" | tee -a "$sum" >&2; }
status=0
: > "$sum"
{
  echo "# mathcost $(date -u +%Y-%m-%dT%H:%M:%SZ)"
  echo
  echo '```'
  nvidia-smi --query-gpu=name,driver_version,memory.total,clocks.max.sm --format=csv,noheader 2>&1
  git -C "$src" log -1 --format='commit %h %s' 2>&1
  echo '```'
  echo
} >> "$sum"

# 1. The CUDA peers (nvcc; warnings are errors as in peers.sh).
nvcc=${NVCC:-}
if [ -z "$nvcc" ]; then
  for c in "${CUDA_HOME:-/usr/local/cuda}/bin/nvcc" "$(command -v nvcc 2>/dev/null)"; do
    if [ -n "$c" ] && [ -x "$c" ]; then nvcc=$c; break; fi
  done
fi
so=$work/libmcpeers.so
if [ -z "$nvcc" ]; then
  say "peers: no nvcc (\$NVCC, \${CUDA_HOME:-/usr/local/cuda}/bin/nvcc, PATH): vyre runs alone"
  so=none
elif ! "$nvcc" -O3 -std=c++17 -arch="${MATHCOST_ARCH:-sm_90}" -shared -Xcompiler -fPIC \
    -Xcompiler -Wall,-Wextra,-Werror -Werror all-warnings -cudart static -I"$here" \
    "$here/peers.cu" -o "$so" > "$work/peers_build.log" 2>&1; then
  say "peers: nvcc failed: $(grep -m1 -i error "$work/peers_build.log" | cut -c1-300); vyre runs alone"
  so=none
fi

# 2. The driver: make's, else compiled here against the build tree's libraries.
driver=$build/bench/mathcost/mathcost
if ! timeout 120 "${MAKE:-make}" -C "$build" bench/mathcost/mathcost > "$work/driver_build.log" 2>&1; then
  driver=$work/mathcost
  echo "make failed or does not know the driver; cc instead" >> "$work/driver_build.log"
  if ! ${CC:-cc} -O2 -std=c11 -D_GNU_SOURCE -I"$src/abi" -I"$src/host-stub/loader/include" \
      -I"$src" -I"$build" -DVYRE_MATHCOST_DIR="\"$here\"" "$here/mathcost.c" -o "$driver" \
      -L"$build/host-stub/loader/.libs" -L"$build/abi/.libs" -lvyre-host -lvyre \
      -Wl,-rpath,"$build/host-stub/loader/.libs" -Wl,-rpath,"$build/abi/.libs" -lm -ldl \
      >> "$work/driver_build.log" 2>&1; then
    say "driver: neither make nor cc built it: $(grep -m1 -i error "$work/driver_build.log" | cut -c1-300)"
    driver=
    status=1
  fi
fi

# 3. The measurements.
if [ -n "$driver" ]; then
  # shellcheck disable=SC2086 # MATHCOST_ARGS is a list of options
  timeout "${MATHCOST_TIMEOUT:-200}" "$driver" --backend cuda --peer "$so" --dir "$here" \
    --jsonl "$out/mathcost.jsonl" ${MATHCOST_ARGS:-} > "$work/tables.md" 2> "$out/mathcost.log"
  rc=$?
  [ "$rc" = 0 ] || status=1
  case $rc in
    0) ;;
    124) say "mathcost: stopped after ${MATHCOST_TIMEOUT:-200} s (timeout); the lines measured are in mathcost.jsonl" ;;
    *) say "mathcost: exit status $rc (1: a vyre run failed or broke its bound; see WRONG/failed below and mathcost.log; its last line: $(tail -1 "$out/mathcost.log" | cut -c1-300))" ;;
  esac
  cat "$work/tables.md" >> "$sum"
fi

# 4. The SASS (ptxas and cuobjdump; no GPU needed).
peers_so=$so
[ "$so" = none ] && peers_so=
timeout "${SASS_TIMEOUT:-60}" sh "$here/sass.sh" "$build" "$work/sass" $peers_so > "$out/sass.md" 2> "$work/sass.log" ||
  say "sass.sh: exit status $? ($(head -1 "$work/sass.log"))"
{ echo; cat "$out/sass.md"; } >> "$sum"

tar czf "$out/mathcost-work.tar.gz" -C "$work" . 2>/dev/null || say "tar of $work failed"
rm -rf "$work"
cat "$sum"
exit $status
