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
# AM_PATH_PYTHON checks the version; configure says which interpreter
# it took and why.  pythondir, where `make install` puts the package
# (python/local.mk), is the first directory of the interpreter's sys.path
# under the prefix that ends in -packages (Debian's python3 searches
# PREFIX/lib/python3/dist-packages and PREFIX/lib/pythonX.Y/dist-packages
# for /usr/local, never site-packages), so that the installed package
# imports without PYTHONPATH; when sys.path holds none (another prefix),
# automake's choice, and the summary says to set PYTHONPATH.
#
# On return:
#   PYTHON                 the interpreter (":" when there is none)
#   pythondir              ${prefix}/DIR on the interpreter's sys.path, else
#                          ${PYTHON_PREFIX}/lib/pythonX.Y/site-packages or what
#                          the interpreter's sysconfig says (AM_PATH_PYTHON)
#   vyre_python_why        why this interpreter (for the summary)
#   vyre_python_numpy      yes/no: PYTHON imports numpy
#   vyre_python_summary    one line for the configure summary
#   AM_CONDITIONAL HAVE_PYTHON
AC_DEFUN([VYRE_CHECK_PYTHON], [
  vyre_python_why="PYTHON given"
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
    AS_IF([test -n "$vyre_py_numpy" && test "x$vyre_py_numpy" = "x$vyre_py_first"],
      [PYTHON=$vyre_py_numpy; vyre_python_why="the first python3 on PATH, and it imports numpy"],
      [test -n "$vyre_py_numpy"],
      [PYTHON=$vyre_py_numpy; vyre_python_why="it imports numpy; $vyre_py_first, first on PATH, does not"],
      [test -n "$vyre_py_first"],
      [PYTHON=$vyre_py_first; vyre_python_why="the first python3 on PATH; no python3 on PATH imports numpy"])
  ])
  AM_PATH_PYTHON([3.6], [], [:])
  vyre_python_numpy=no
  AS_IF([test "x$PYTHON" != "x:"], [
    AC_MSG_CHECKING([which python3 runs the vyre package])
    AC_MSG_RESULT([$PYTHON ($vyre_python_why)])
    AC_MSG_CHECKING([whether $PYTHON imports numpy])
    AS_IF(["$PYTHON" -c 'import numpy' >/dev/null 2>&1], [vyre_python_numpy=yes])
    AC_MSG_RESULT([$vyre_python_numpy])
    # Where the interpreter looks under the prefix (NONE: the default prefix).
    vyre_py_prefix=$prefix
    test "x$vyre_py_prefix" = xNONE && vyre_py_prefix=$ac_default_prefix
    AC_MSG_CHECKING([for a directory of $PYTHON's sys.path under $vyre_py_prefix])
    vyre_py_site=`"$PYTHON" -c 'import sys
p = sys.argv@<:@1@:>@.rstrip("/") + "/"
print(next((d.replace(p, "", 1) for d in sys.path if d.startswith(p) and d.endswith("-packages")), ""))' "$vyre_py_prefix" 2>/dev/null`
    AS_IF([test -n "$vyre_py_site"],
      [pythondir="\${prefix}/$vyre_py_site"
       AC_MSG_RESULT([$vyre_py_prefix/$vyre_py_site])
       vyre_python_where="package installed into $pythondir, on its sys.path"],
      [AC_MSG_RESULT([none (the package is installed into $pythondir)])
       vyre_python_where="package installed into $pythondir, which $PYTHON does not search: set PYTHONPATH to it"])
    AS_IF([test "x$vyre_python_numpy" = xyes],
      [vyre_python_summary="$PYTHON ($vyre_python_why; $vyre_python_where)"],
      [vyre_python_summary="$PYTHON, without NumPy ($vyre_python_why): NumPy arrays, examples/python and the Python tests are off, they skip; $vyre_python_where. Fix: apt-get install python3-numpy, or configure PYTHON=/path/to/python3-with-numpy"])
  ], [vyre_python_summary="no Python 3 >= 3.6 found (the vyre Python package is not installed, its tests skip). Fix: apt-get install python3 python3-numpy"])
  AM_CONDITIONAL([HAVE_PYTHON], [test "x$PYTHON" != "x:"])
])
