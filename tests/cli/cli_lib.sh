# cli_lib.sh -- helpers for the `vyre` command tests: run it (under valgrind for make check-valgrind) and check exit codes and output.
# Sourced by tests/cli/cli_*.test; needs VYRE_BUILD_DIR and VYRE_SRC_DIR (make check sets them).

: "${VYRE_BUILD_DIR:?run this test through make check (VYRE_BUILD_DIR is not set)}"
: "${VYRE_SRC_DIR:?run this test through make check (VYRE_SRC_DIR is not set)}"

TOP_BUILD="$VYRE_BUILD_DIR"
VYRE_BIN="$TOP_BUILD/host-stub/cli/vyre"
STUB_DIR="$VYRE_BUILD_DIR/tests/loader/stubs/.libs"
failures=0
checks=0
work=$(mktemp -d "${TMPDIR:-/tmp}/vyre-cli-XXXXXX") || exit 99
trap 'rm -rf "$work"' EXIT
unset VYRE_BACKEND VYRE_BACKEND_PATH VYRE_LOG

# make check-valgrind passes VALGRIND on the command line: run vyre under
# memcheck then (through libtool, so the real binary is checked).
if test -n "${VALGRIND:-}"; then
  run_vyre() {
    "$TOP_BUILD/libtool" --mode=execute "$VALGRIND" --quiet --error-exitcode=99 \
      --leak-check=full --errors-for-leak-kinds=definite,indirect "$VYRE_BIN" "$@"
  }
  echo "running vyre under $VALGRIND"
else
  run_vyre() { "$VYRE_BIN" "$@"; }
fi

# vyre ARGS...: run, keeping stdout in $work/out, stderr in $work/err, status in $rc.
vyre() {
  run_vyre "$@" >"$work/out" 2>"$work/err"
  rc=$?
  if test "$rc" = 99; then
    echo "FAIL: valgrind found errors in: vyre $*" >&2
    cat "$work/err" >&2
    failures=$((failures + 1))
  fi
  # A sanitizer build (configure --enable-sanitizers) may exit 1, which
  # some checks expect: look at what it printed instead.
  if grep -E "AddressSanitizer|LeakSanitizer|runtime error:" "$work/err" >/dev/null; then
    echo "FAIL: sanitizer report from: vyre $*" >&2
    cat "$work/err" >&2
    failures=$((failures + 1))
  fi
}

fail() {
  echo "FAIL: $*" >&2
  echo "  command stdout:" >&2; sed 's/^/    /' "$work/out" >&2
  echo "  command stderr:" >&2; sed 's/^/    /' "$work/err" >&2
  failures=$((failures + 1))
}

# expect_rc N WHAT: the last command exited with N.
expect_rc() {
  checks=$((checks + 1))
  test "$rc" = "$1" || fail "$2: exit status $rc, expected $1"
}

# expect_out PATTERN WHAT / expect_err PATTERN WHAT: fixed-string grep.
expect_out() {
  checks=$((checks + 1))
  grep -F -e "$1" "$work/out" >/dev/null || fail "$2: stdout lacks '$1'"
}
expect_err() {
  checks=$((checks + 1))
  grep -F -e "$1" "$work/err" >/dev/null || fail "$2: stderr lacks '$1'"
}
expect_no_out() {
  checks=$((checks + 1))
  if grep -F -e "$1" "$work/out" >/dev/null; then fail "$2: stdout has '$1'"; fi
}
expect_no_err() {
  checks=$((checks + 1))
  if grep -F -e "$1" "$work/err" >/dev/null; then fail "$2: stderr has '$1'"; fi
}

finish() {
  echo "$checks checks, $failures failures"
  test "$failures" = 0
}
