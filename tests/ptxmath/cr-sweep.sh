#!/bin/sh
# cr-sweep.sh -- the exhaustive proof of the correctly rounded transcendentals (docs/ulp.md, "Correct rounding").
#
# usage: tests/ptxmath/cr-sweep.sh BUILD OUTDIR [cr|acc]
#
# On a GPU machine with nvcc: builds the oracle (tests/ptxmath/cr_oracle.cu)
# to PTX, runs BUILD/tests/ptxmath/cr_sweep over all 2^32 f32 patterns of the
# fourteen functions (variant cr by default; acc finds the hard cases for
# crtable.c), then decides every record in multiple precision with
# cr_resolve.py (mpmath) when python3 has it.  Writes OUTDIR/sweep.txt,
# OUTDIR/VARIANT.records and OUTDIR/resolve.txt; with acc also
# OUTDIR/exceptions.txt, the input of cr_table.py.  Exit 0 when every input
# is correctly rounded (cr) or the sweep ran (acc), 1 otherwise, 77 without a GPU.
# The CPU half: BUILD/tests/ptxmath/sweep_ptxmath -q -v cr -o FILE (hours on a
# few cores), then cr_resolve.py FILE.
set -u
BUILD=${1:?usage: cr-sweep.sh BUILD OUTDIR [cr|acc]}
OUT=${2:?usage: cr-sweep.sh BUILD OUTDIR [cr|acc]}
VAR=${3:-cr}
SRC=$(cd "$(dirname "$0")/../.." && pwd)
NVCC=${NVCC:-$(command -v nvcc || echo /usr/local/cuda/bin/nvcc)}
mkdir -p "$OUT" || exit 1
if ! "$NVCC" -ptx -arch=sm_90 -o "$OUT/cr_oracle.ptx" "$SRC/tests/ptxmath/cr_oracle.cu"; then
  echo "cr-sweep.sh: building the oracle with $NVCC failed. Fix: set NVCC to a CUDA 12+ nvcc" >&2
  exit 1
fi
"$BUILD/tests/ptxmath/cr_sweep" -o "$OUT/cr_oracle.ptx" -v "$VAR" -r "$OUT/$VAR.records" > "$OUT/sweep.txt"
rc=$?
cat "$OUT/sweep.txt"
[ $rc -eq 77 ] && exit 77
[ "$VAR" = cr ] && [ $rc -ne 0 ] && exit 1
if ! python3 -c 'import mpmath' 2>/dev/null; then
  echo "cr-sweep.sh: no mpmath here: decide $OUT/$VAR.records elsewhere with tests/ptxmath/cr_resolve.py"
  exit 0
fi
EXC=
[ "$VAR" = acc ] && EXC="--exceptions $OUT/exceptions.txt"
# shellcheck disable=SC2086
python3 "$SRC/tests/ptxmath/cr_resolve.py" $EXC "$OUT/$VAR.records" > "$OUT/resolve.txt"
rc=$?
cat "$OUT/resolve.txt"
[ "$VAR" = acc ] && exit 0
exit $rc
