#!/bin/sh
# installcheck.sh -- the installed tree works on its own (make installcheck; make distcheck runs it).
#  1. no installed program, library or .pc file names the build or source tree (debug
#     information aside: checked on stripped copies);
#  2. every document an installed header cites (share/doc/vyre/NAME.md) is installed, and every
#     relative link and document name in the installed documents resolves inside docdir;
#  3. the installed `vyre conform` finds the installed reference backend and corpus;
#  4. examples/host, copied from share/doc/vyre/examples/, built from the installed headers and libraries with
#     `pkg-config --cflags --libs vyre-host` alone, runs and checks its results;
#  5. examples/plugin-template, built with `pkg-config --cflags --libs vyre-plugin` alone, exports exactly
#     vyre_plugin_descriptor and vyre_plugin_entry and passes `vyre conform --plugin`;
#  6. the manual pages are installed, one per command, and `man vyre` finds
#     vyre(1) with MANPATH at the prefix (when man is present).
#  7. when configure found a Python, the installed package ($pythondir/vyre) names neither tree,
#     imports with PYTHONPATH=$pythondir alone, loads the installed libvyre and libvyre-host and
#     runs a program on the installed reference backend.
#  8. a C++17 plugin (tests/installcheck-plugin.cc: std::vector, templates, f32 by libvyre's vyre_f32_*),
#     built with $CXX and `pkg-config --cflags --libs vyre-plugin` alone, exports exactly the two plugin
#     symbols (libstdc++'s instantiations stay local: the version script) and `vyre conform --plugin`
#     certifies it, its f32 underflow cases included; a C host (tests/installcheck-host.c), built with
#     `pkg-config --cflags --libs vyre-host` alone, opens the host, selects the C++ plugin
#     (VYRE_BACKEND), dispatches on it and checks the bits against libvyre's vyre_f32_*.
# With DESTDIR the tree is not where it was configured to live: the run
# points the dynamic linker, pkg-config, the plugin search and the corpus
# there (LD_LIBRARY_PATH, PKG_CONFIG_PATH + PKG_CONFIG_SYSROOT_DIR,
# VYRE_BACKEND_PATH, VYRE_CONFORM_CORPUS).  Without it the installed vyre
# must find its plugins and corpus unaided.
# Called by installcheck-local (Makefile.am), which passes the directories
# and tools in the environment.
for v in bindir libdir includedir docdir mandir plugindir conformdir pkgdatadir abs_top_builddir abs_top_srcdir CC CXX MAKE; do
  eval "test -n \"\${$v}\"" || { echo "installcheck: $v is not set. Fix: run make installcheck"; exit 1; }
done
D=${DESTDIR}
# shellcheck source=tests/installcheck-paths.sh
. "$abs_top_srcdir/tests/installcheck-paths.sh" || exit 1
tmp=$(mktemp -d) || exit 1
trap 'rm -rf "$tmp"' EXIT
fail() { echo "installcheck: $*"; exit 1; }
# Nothing of the build tree may leak in: the installed tree stands alone.
unset VYRE_BUILD_DIR VYRE_SRC_DIR VYRE_BACKEND VYRE_BACKEND_PATH VYRE_CONFORM_CORPUS VYRE_LIB_DIR PYTHONPATH
# Run a command of the installed tree: under DESTDIR, told where the tree
# is; else as installed.  lib=1 also sets LD_LIBRARY_PATH without DESTDIR
# (for the examples, which have no run path).
installed() {
  (
    if [ -n "$D" ] || [ "$lib" = 1 ]; then
      LD_LIBRARY_PATH=$D$libdir${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
      export LD_LIBRARY_PATH
    fi
    if [ -n "$D" ]; then
      VYRE_BACKEND_PATH=$D$plugindir VYRE_CONFORM_CORPUS=$D$conformdir
      export VYRE_BACKEND_PATH VYRE_CONFORM_CORPUS
    fi
    "$@"
  )
}
lib=0
# A plugin exports vyre_plugin_descriptor and vyre_plugin_entry, nothing
# else (an ASan build's ODR indicator of the descriptor aside).
exports_only_two() {
  got=$(nm -D --defined-only "$1" | awk 'NF >= 3 && $3 !~ /^__odr_asan/ { print $3 }' | LC_ALL=C sort | tr '\n' ' ')
  [ "$got" = "vyre_plugin_descriptor vyre_plugin_entry " ] ||
    fail "$1 exports: $got(only vyre_plugin_descriptor and vyre_plugin_entry expected; pkg-config --libs vyre-plugin passes the version script)"
  echo "  nm -D --defined-only $(basename "$1"): $got"
}

# 1. No tree paths.
for f in "$D$bindir/vyre" "$D$libdir/libvyre.so" "$D$libdir/libvyre-host.so" "$D$plugindir"/libvyre-*.so; do
  test -f "$f" || continue
  cp "$f" "$tmp/bin" && strip "$tmp/bin" || fail "cannot strip a copy of $f"
  if grep -q -e "$abs_top_builddir" -e "$abs_top_srcdir" "$tmp/bin"; then
    fail "$f names the build or source tree"
  fi
done
for f in "$D$libdir/pkgconfig/vyre.pc" "$D$libdir/pkgconfig/vyre-host.pc" "$D$libdir/pkgconfig/vyre-plugin.pc" \
  "$D$pkgdatadir/vyre-plugin.map"; do
  test -f "$f" || fail "$f is not installed"
  ! grep -q -e "$abs_top_builddir" -e "$abs_top_srcdir" "$f" || fail "$f names the build or source tree"
done

# 2. Cited documents: those the installed headers cite, and every link and
# document name of the installed documents (doc_links_check).
for ref in $(cat "$D$includedir"/vyre/*.h | grep -o 'share/doc/vyre/[A-Za-z0-9_.-]*\.md' | sort -u); do
  test -f "$D$docdir/${ref#share/doc/vyre/}" || fail "an installed header cites $ref, which is not in $D$docdir"
done
doc_links_check "$D$docdir" "$abs_top_srcdir" >"$tmp/links" ||
  { cat "$tmp/links"; fail "the installed documents cite files that are not installed in $D$docdir"; }

# 3. The installed vyre conform, on the installed reference and corpus.
(cd "$tmp" && installed "$D$bindir/vyre" conform --backend reference --filter 'ops.int/*') >"$tmp/log" 2>&1
rc=$?
tail -n 3 "$tmp/log"
[ $rc = 0 ] || fail "the installed vyre conform failed"

# 7. The Python package, before the examples (which need pkg-config).
if [ -n "$PYTHON" ] && [ "$PYTHON" != ":" ] && [ -n "$pythondir" ]; then
  test -f "$D$pythondir/vyre/__init__.py" || fail "the Python package is not installed in $D$pythondir/vyre"
  ! grep -q -e "$abs_top_builddir" -e "$abs_top_srcdir" "$D$pythondir"/vyre/*.py ||
    fail "the installed Python package names the build or source tree"
  # Under DESTDIR the libraries are not where _paths.py says: VYRE_LIB_DIR
  # names them (and installed() the plugin directory).
  (cd "$tmp" && PYTHONPATH=$D$pythondir && export PYTHONPATH &&
   if [ -n "$D" ]; then VYRE_LIB_DIR=$D$libdir; export VYRE_LIB_DIR; fi &&
   installed "$PYTHON" -B -c '
import sys, vyre
where, libvyre, host = vyre.library_paths()
prog = vyre.assemble("workgroup 64\nbuffer x ro u32\nbuffer y wo u32 [4]\n%i = gid.x\n%v = load x %i\n%w = mul %v %v\nstore y %i %w\n")
with vyre.open("reference") as be:
    (y,) = be.dispatch(prog, bytes([3, 0, 0, 0, 4, 0, 0, 0, 5, 0, 0, 0, 6, 0, 0, 0]))
raw = y.tobytes() if hasattr(y, "tobytes") else bytes(y)
got = [int.from_bytes(raw[i:i + 4], "little") for i in range(0, len(raw), 4)]
print("installcheck: import vyre: libraries from %s (%s); reference backend squared 3 4 5 6: %s"
      % (where, host, " ".join(map(str, got))))
open(sys.argv[1], "w").write("%s\n%s\n" % (libvyre, host))
sys.exit(got != [9, 16, 25, 36])
' "$tmp/loaded") >"$tmp/log" 2>&1
  rc=$?
  cat "$tmp/log"
  [ $rc = 0 ] || fail "the installed Python package does not import or run (PYTHONPATH=$D$pythondir)"
  # By real directories: a DESTDIR inside the build tree is not the build tree.
  while IFS= read -r loaded; do
    ! from_build_tree "$loaded" "$abs_top_builddir" "$D" ||
      fail "the installed Python package loaded libraries of the build tree ($loaded)"
  done <"$tmp/loaded"
else
  echo "installcheck: configure found no Python: the vyre package is not installed"
fi

# 4 and 5 build with pkg-config against the installed .pc files only.
if [ -z "$PKG_CONFIG" ]; then
  echo "installcheck: pkg-config was not found by configure: examples/host and examples/plugin-template are not built"
  exit 0
fi
PKG_CONFIG_PATH=$D$libdir/pkgconfig
export PKG_CONFIG_PATH
if [ -n "$D" ]; then
  PKG_CONFIG_SYSROOT_DIR=$D
  export PKG_CONFIG_SYSROOT_DIR
fi
# The examples' own flags, plus -Werror, plus the sanitizers the installed
# libraries were built with (they need the runtime).
cflags="-O2 -g -Wall -Wextra -Werror $SAN_FLAGS"

mkdir "$tmp/host" "$tmp/template" || exit 1
# The installed copies (share/doc/vyre/examples/), as a user starts from them.
cp "$D$docdir/examples/host/host.c" "$D$docdir/examples/host/Makefile" "$tmp/host/" || exit 1
echo "installcheck: examples/host, with \$(pkg-config --cflags --libs vyre-host):"
(cd "$tmp/host" && $MAKE --no-print-directory CC="$CC" CFLAGS="$cflags" LDFLAGS="$SAN_FLAGS" PKG_CONFIG="$PKG_CONFIG") >"$tmp/log" 2>&1 ||
  { cat "$tmp/log"; fail "examples/host does not build against the installed tree"; }
sed 's/^/  /' "$tmp/log"
# The example has no run path: the dynamic linker is told where libdir is.
lib=1
(cd "$tmp/host" && installed ./host) >"$tmp/log" 2>&1
rc=$?
sed 's/^/  /' "$tmp/log"
[ $rc = 0 ] || fail "examples/host failed"

cp "$D$docdir/examples/plugin-template/template.c" "$D$docdir/examples/plugin-template/Makefile" "$tmp/template/" || exit 1
echo "installcheck: examples/plugin-template, with \$(pkg-config --cflags --libs vyre-plugin), then vyre conform --plugin:"
(cd "$tmp/template" && $MAKE --no-print-directory CC="$CC" CFLAGS="$cflags" LDFLAGS="$SAN_FLAGS" PKG_CONFIG="$PKG_CONFIG") >"$tmp/log" 2>&1 ||
  { cat "$tmp/log"; fail "examples/plugin-template does not build against the installed tree"; }
sed 's/^/  /' "$tmp/log"
lib=0
exports_only_two "$tmp/template/libvyre-template.so"
(cd "$tmp/template" && installed "$D$bindir/vyre" conform --plugin ./libvyre-template.so) >"$tmp/log" 2>&1
rc=$?
grep -e 'static checks' -e '^  total' -e '^conform' -e 'FAIL' -e 'UNTESTED' "$tmp/log" | sed 's/^ */  /'
[ $rc = 0 ] || { cat "$tmp/log"; fail "vyre conform --plugin rejects examples/plugin-template"; }

# 8. A C++17 plugin and a C host, each with pkg-config alone.
mkdir "$tmp/cxx" "$tmp/chost" || exit 1
echo "installcheck: a C++17 plugin (tests/installcheck-plugin.cc), with $CXX -std=c++17 \$(pkg-config --cflags --libs vyre-plugin):"
# shellcheck disable=SC2046
(cd "$tmp/cxx" && $CXX -std=c++17 -fPIC -shared $cflags -o libvyre-cxxcpu.so "$abs_top_srcdir/tests/installcheck-plugin.cc" \
  $($PKG_CONFIG --cflags --libs vyre-plugin) -Wl,-z,defs $SAN_FLAGS) >"$tmp/log" 2>&1 ||
  { cat "$tmp/log"; fail "the C++ plugin does not build from the installed tree with pkg-config's vyre-plugin. Fix: install g++ (build-essential)"; }
exports_only_two "$tmp/cxx/libvyre-cxxcpu.so"
(cd "$tmp/cxx" && installed "$D$bindir/vyre" conform --plugin ./libvyre-cxxcpu.so) >"$tmp/log" 2>&1
rc=$?
grep -e 'static checks' -e '^  total' -e '^conform' -e 'FAIL' -e 'UNTESTED' "$tmp/log" | sed 's/^ */  /'
[ $rc = 0 ] || { cat "$tmp/log"; fail "vyre conform --plugin rejects the C++ plugin"; }
(cd "$tmp/cxx" && installed "$D$bindir/vyre" conform --plugin ./libvyre-cxxcpu.so --filter 'ops.f32/underflow.*') >"$tmp/log" 2>&1
passed=$(sed -n 's/^  total  *\([0-9][0-9]*\)  *0  *[0-9][0-9]*$/\1/p' "$tmp/log")
[ -n "$passed" ] || passed=0
[ "$passed" -ge 5 ] || { cat "$tmp/log"; fail "the C++ plugin passed $passed of the f32 underflow cases (add sub mul div fma expected)"; }
echo "  f32 underflow cases: $passed passed (vyre_f32_*)"
echo "installcheck: a C host (tests/installcheck-host.c), with \$(pkg-config --cflags --libs vyre-host), on the C++ plugin:"
# shellcheck disable=SC2046
(cd "$tmp/chost" && $CC -std=c11 $cflags -o host "$abs_top_srcdir/tests/installcheck-host.c" \
  $($PKG_CONFIG --cflags --libs vyre-host) $SAN_FLAGS) >"$tmp/log" 2>&1 ||
  { cat "$tmp/log"; fail "the C host does not build from the installed tree with pkg-config's vyre-host"; }
lib=1
(cd "$tmp/chost" && installed env VYRE_BACKEND_PATH="$tmp/cxx${D:+:$D$plugindir}" VYRE_BACKEND=cxxcpu ./host) >"$tmp/log" 2>&1
rc=$?
sed 's/^/  /' "$tmp/log"
[ $rc = 0 ] || fail "the C host did not select the C++ plugin, or its results differ from vyre_f32_*"
lib=0
# 6. Manual pages.
for cmd in "" $(installed "$D$bindir/vyre" --help | sed -n '/^commands:/,/^$/s/^  \([a-z-]*\) .*/\1/p'); do
  page=vyre${cmd:+-$cmd}.1
  test -f "$D$mandir/man1/$page" || fail "$page is not installed in $D$mandir/man1"
done
if command -v man >/dev/null 2>&1; then
  MANPATH=$D$mandir man -w vyre >/dev/null 2>&1 || fail "man vyre does not find vyre(1) with MANPATH=$D$mandir"
  MANPATH=$D$mandir MANPAGER=cat PAGER=cat man vyre 2>/dev/null | grep -q 'vyre-conform' ||
    fail "man vyre does not show the page"
fi
echo "installcheck: the installed tree works on its own"
