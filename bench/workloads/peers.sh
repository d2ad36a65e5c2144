#!/bin/sh
# peers.sh -- build the workloads' CUDA peers (peers.cu, peers_kernels.cu) into BUILD_DIR/bench/workloads/libwlpeers.so with nvcc, for the workloads driver's peer mode.
# usage: bench/workloads/peers.sh BUILD_DIR   (nvcc: $NVCC, else $CUDA_HOME/bin/nvcc, else nvcc on PATH)
# Exit status 0 when built; 1 with the reason on stderr when nvcc is missing
# or fails (the driver then reports "peer: skipped (...)").  PEERS_ARCH
# overrides the target (default sm_90); PEERS_FLAGS adds nvcc flags.
set -u
build=${1:?usage: peers.sh BUILD_DIR}
here=$(cd "$(dirname "$0")" && pwd)
nvcc=${NVCC:-}
if [ -z "$nvcc" ]; then
  for c in "${CUDA_HOME:-/usr/local/cuda}/bin/nvcc" "$(command -v nvcc 2>/dev/null)"; do
    if [ -n "$c" ] && [ -x "$c" ]; then nvcc=$c; break; fi
  done
fi
if [ -z "$nvcc" ]; then
  rm -f "$build/bench/workloads/libwlpeers.so"
  echo "peers.sh: no nvcc (looked at \$NVCC, \${CUDA_HOME:-/usr/local/cuda}/bin/nvcc and PATH). Fix: install the CUDA toolkit or set NVCC" >&2
  exit 1
fi
mkdir -p "$build/bench/workloads" || exit 1
out=$build/bench/workloads/libwlpeers.so
rm -f "$out" # a failed build must not leave an older library for the driver to time
# Warnings are errors, host and device side.
if ! "$nvcc" -O3 -std=c++17 -arch="${PEERS_ARCH:-sm_90}" -shared -Xcompiler -fPIC \
  -Xcompiler -Wall,-Wextra,-Werror -Werror all-warnings -cudart static \
  -I"$here" ${PEERS_FLAGS:-} "$here/peers.cu" "$here/peers_kernels.cu" -o "$out.tmp"; then
  rm -f "$out.tmp"
  echo "peers.sh: $nvcc failed to build $out (see above)" >&2
  exit 1
fi
mv "$out.tmp" "$out" && echo "peers.sh: built $out"
