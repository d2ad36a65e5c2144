# vyre_ld_version_script.m4 -- does the linker take a GNU ld version script (symbol versions)?
#
# VYRE_CHECK_LD_VERSION_SCRIPT
# ----------------------------
# Links a shared object with -Wl,--version-script naming a two-node script
# (the second node inherits the first, as a later VYRE_1.1 would), after
# checking that the linker rejects a script with a syntax error: a linker
# that ignores the option silently is taken as not supporting it.
#
# On return:
#   vyre_cv_ld_version_script  yes/no (cached), also AC_SUBST as VYRE_LD_VERSION_SCRIPT
#   AM_CONDITIONAL HAVE_LD_VERSION_SCRIPT
# With `yes` the installed libraries are linked with their .map files
# (abi/libvyre.map, host-stub/loader/libvyre-host.map) and their symbols
# carry versions; with `no` libtool's -export-symbols-regex exports the
# same names without versions.
AC_DEFUN([VYRE_CHECK_LD_VERSION_SCRIPT], [
  AC_CACHE_CHECK([whether the linker accepts GNU ld version scripts],
    [vyre_cv_ld_version_script], [
    vyre_save_LDFLAGS=$LDFLAGS
    vyre_cv_ld_version_script=no
    echo 'this is { not a version script' >conftest.map
    LDFLAGS="$vyre_save_LDFLAGS -shared -Wl,--version-script=conftest.map"
    AC_LINK_IFELSE([AC_LANG_PROGRAM([[int vyre_conftest_a(void) { return 1; }]], [[]])],
      [vyre_ld_accepts_garbage=yes], [vyre_ld_accepts_garbage=no])
    AS_IF([test "x$vyre_ld_accepts_garbage" = xno], [
      cat >conftest.map <<'_VYRE_EOF'
VYRE_CONFTEST_1.0 {
  global:
    vyre_conftest_a;
  local:
    *;
};
VYRE_CONFTEST_1.1 {
  global:
    vyre_conftest_b;
} VYRE_CONFTEST_1.0;
_VYRE_EOF
      AC_LINK_IFELSE([AC_LANG_PROGRAM([[int vyre_conftest_a(void) { return 1; }
int vyre_conftest_b(void) { return 2; }]], [[]])],
        [vyre_cv_ld_version_script=yes])
    ])
    rm -f conftest.map
    LDFLAGS=$vyre_save_LDFLAGS
  ])
  AC_SUBST([VYRE_LD_VERSION_SCRIPT], [$vyre_cv_ld_version_script])
  AM_CONDITIONAL([HAVE_LD_VERSION_SCRIPT], [test "x$vyre_cv_ld_version_script" = xyes])
])
