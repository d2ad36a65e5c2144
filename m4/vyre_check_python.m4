# vyre_check_python.m4 -- the Python 3 that runs, tests and installs the `vyre` package (python/, docs/python.md).
#
# VYRE_CHECK_PYTHON
# -----------------
# PYTHON, set in the environment or on the configure line, wins (it must
# be Python >= 3.6).  Otherwise the python3 programs on PATH, then
# /usr/bin/python3, are tried in that order and the first that can
# `import numpy` is taken, else the first python3 found: on a machine
# whose first python3 (pyenv, a venv) lacks NumPy and the system one has
# it, the tests of the package then run instead of skipping.  Then
# AM_PATH_PYTHON checks the version and sets pythondir, where
# `make install` puts the package (python/local.mk).
#
# On return:
#   PYTHON                 the interpreter (":" when there is none)
#   pythondir              ${PYTHON_PREFIX}/lib/pythonX.Y/site-packages or
#                          what the interpreter's sysconfig says (AM_PATH_PYTHON)
#   vyre_python_numpy      yes/no: PYTHON imports numpy
#   vyre_python_summary    one line for the configure summary
#   AM_CONDITIONAL HAVE_PYTHON
AC_DEFUN([VYRE_CHECK_PYTHON], [
  AS_IF([test -z "$PYTHON"], [
    vyre_py_first=
    vyre_py_numpy=
    vyre_py_save_IFS=$IFS
    IFS=:
    for vyre_py_dir in $PATH /usr/bin; do
      IFS=$vyre_py_save_IFS
      test -z "$vyre_py_dir" && vyre_py_dir=.
      vyre_py_try="$vyre_py_dir/python3"
      test -f "$vyre_py_try" && test -x "$vyre_py_try" || continue
      "$vyre_py_try" -c 'import sys; sys.exit(sys.version_info < (3, 6))' >/dev/null 2>&1 || continue
      test -n "$vyre_py_first" || vyre_py_first=$vyre_py_try
      AS_IF([test -z "$vyre_py_numpy" && "$vyre_py_try" -c 'import numpy' >/dev/null 2>&1],
        [vyre_py_numpy=$vyre_py_try])
    done
    IFS=$vyre_py_save_IFS
    AS_IF([test -n "$vyre_py_numpy"], [PYTHON=$vyre_py_numpy],
      [test -n "$vyre_py_first" && PYTHON=$vyre_py_first])
  ])
  AM_PATH_PYTHON([3.6], [], [:])
  vyre_python_numpy=no
  AS_IF([test "x$PYTHON" != "x:"], [
    AC_MSG_CHECKING([whether $PYTHON imports numpy])
    AS_IF(["$PYTHON" -c 'import numpy' >/dev/null 2>&1], [vyre_python_numpy=yes])
    AC_MSG_RESULT([$vyre_python_numpy])
    AS_IF([test "x$vyre_python_numpy" = xyes],
      [vyre_python_summary="$PYTHON (package installed into $pythondir)"],
      [vyre_python_summary="$PYTHON, without NumPy (the Python tests skip; package installed into $pythondir). Fix: apt-get install python3-numpy, or configure PYTHON=/path/to/python3-with-numpy"])
  ], [vyre_python_summary="no Python 3 >= 3.6 found (the vyre Python package is not installed, its tests skip). Fix: apt-get install python3 python3-numpy"])
  AM_CONDITIONAL([HAVE_PYTHON], [test "x$PYTHON" != "x:"])
])
