#!/bin/sh
# peers.sh -- build the workloads' CUDA peers (peers.cu, peers_kernels.cu) into BUILD_DIR/bench/workloads/libwlpeers.so with nvcc, for the workloads driver's peer mode.
# usage: bench/workloads/peers.sh BUILD_DIR   (nvcc: $NVCC, else $CUDA_HOME/bin/nvcc, else nvcc on PATH)
# Exit status 0 when built; 1 with the reason on stderr when nvcc is missing
# or fails.  The reason is also left in BUILD_DIR/bench/workloads/libwlpeers.why,
# which the driver quotes in its "peer: skipped (...)" line.  PEERS_ARCH
# overrides the target (default sm_90); PEERS_FLAGS adds nvcc flags.
set -u
build=${1:?usage: peers.sh BUILD_DIR}
here=$(cd "$(dirname "$0")" && pwd)
dir=$build/bench/workloads
out=$dir/libwlpeers.so
mkdir -p "$dir" || exit 1
rm -f "$out" "$dir/libwlpeers.why" # a failed build must not leave an older library to time
fail() {
  echo "peers.sh: $1" >&2
  echo "$1" > "$dir/libwlpeers.why"
  exit 1
}
nvcc=${NVCC:-}
if [ -z "$nvcc" ]; then
  for c in "${CUDA_HOME:-/usr/local/cuda}/bin/nvcc" "$(command -v nvcc 2>/dev/null)"; do
    if [ -n "$c" ] && [ -x "$c" ]; then nvcc=$c; break; fi
  done
fi
[ -n "$nvcc" ] || fail "no nvcc (looked at \$NVCC, \${CUDA_HOME:-/usr/local/cuda}/bin/nvcc and PATH). Fix: install the CUDA toolkit or set NVCC"
# Warnings are errors, host and device side.
log=$dir/libwlpeers.log
"$nvcc" -O3 -std=c++17 -arch="${PEERS_ARCH:-sm_90}" -shared -Xcompiler -fPIC \
  -Xcompiler -Wall,-Wextra,-Werror -Werror all-warnings -cudart static \
  -I"$here" ${PEERS_FLAGS:-} "$here/peers.cu" "$here/peers_kernels.cu" -o "$out.tmp" > "$log" 2>&1
rc=$?
if [ "$rc" != 0 ]; then
  cat "$log" >&2
  rm -f "$out.tmp"
  first=$(grep -m1 -i -e 'error' -e 'fatal' "$log" | cut -c1-300)
  [ -n "$first" ] || first="no message"
  fail "$nvcc failed, exit status $rc: $first; the whole log in $log"
fi
cat "$log"
mv "$out.tmp" "$out" && echo "peers.sh: built $out"
