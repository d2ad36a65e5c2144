#!/bin/sh
# build.sh -- `make fuzz`: build the libFuzzer targets tests/fuzz/libfuzz/fuzz_NAME.c (clang, -fsanitize=fuzzer,address,undefined) and their seed corpora (docs/fuzzing.md).
# Called by tests/fuzz/local.mk with FUZZ_CC, FUZZ_CFLAGS, FUZZ_CPPFLAGS, FUZZ_TARGETS,
# FUZZ_LIB_FILES, srcdir and builddir in the environment; VYRE is the built `vyre`.
set -eu
obj="$builddir/tests/fuzz/obj"
out="$builddir/tests/fuzz/bin"
mkdir -p "$obj" "$out"
# The library sources, instrumented, into one archive: a target links only
# the members it needs.  An object is rebuilt when its source or any
# header of the tree is newer.
objs=
for src in $FUZZ_LIB_FILES; do
  case "$src" in *.c) ;; *) continue ;; esac
  o="$obj/$(echo "$src" | sed 's|/|_|g; s|\.c$|.o|')"
  if ! test -f "$o" || test "$srcdir/$src" -nt "$o" ||
     test -n "$(find "$srcdir/abi" "$srcdir/host-stub" "$srcdir/plugin" -name '*.h' -newer "$o" 2>/dev/null | head -1)"; then
    echo "  FUZZCC   $src"
    $FUZZ_CC $FUZZ_CPPFLAGS $FUZZ_CFLAGS -fsanitize=fuzzer-no-link -c "$srcdir/$src" -o "$o"
  fi
  objs="$objs $o"
done
rm -f "$obj/libfuzzdeps.a"
ar rcs "$obj/libfuzzdeps.a" $objs
for t in $FUZZ_TARGETS; do
  echo "  FUZZLD   tests/fuzz/bin/fuzz_$t"
  $FUZZ_CC $FUZZ_CPPFLAGS $FUZZ_CFLAGS -fsanitize=fuzzer "$srcdir/tests/fuzz/libfuzz/fuzz_$t.c" \
    "$obj/libfuzzdeps.a" -lm -ldl -lpthread -o "$out/fuzz_$t"
done
# Seeds, made from examples/ and the conformance corpus (nothing binary
# is committed): text programs and case files for asm, case and refrun;
# their binary images for decode; the small plugins of the build tree
# for elf.  Committed regression inputs live in tests/fuzz/corpus/NAME/.
seeds="$builddir/tests/fuzz/seeds"
for t in $FUZZ_TARGETS; do rm -rf "$seeds/$t"; mkdir -p "$seeds/$t"; done
k=0
for f in "$srcdir"/examples/*.vyre $(find "$srcdir/tests/conformance" -name '*.vyre' | LC_ALL=C sort); do
  k=$((k + 1))
  for t in asm case refrun; do
    if test -d "$seeds/$t"; then cp "$f" "$seeds/$t/seed$k.vyre"; fi
  done
  if test -d "$seeds/decode"; then "$VYRE" asm "$f" -o "$seeds/decode/seed$k.vyrb" 2>/dev/null || :; fi
done
for t in elf elfcheck elfread; do
  if test -d "$seeds/$t"; then
    for f in $(find "$builddir" -name '*.so' -size -64k -path '*/.libs/*' | LC_ALL=C sort); do
      cp "$f" "$seeds/$t/$(basename "$f")"
    done
  fi
done
