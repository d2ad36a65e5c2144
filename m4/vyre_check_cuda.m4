# vyre_check_cuda.m4 -- find the CUDA toolkit header (cuda.h) and ptxas.
#
# VYRE_CHECK_CUDA
# ---------------
# Adds --with-cuda=DIR|yes|no (default: auto).  Only cuda.h is needed: the
# plugin loads libcuda at run time, so nothing links against it.  Search
# order for auto/yes: $CUDA_HOME, $CUDA_PATH, /usr/local/cuda.
#
# On return:
#   CUDA_CPPFLAGS   -I flag for cuda.h (AC_SUBST)
#   PTXAS           path to ptxas, or empty (AC_SUBST)
#   vyre_have_cuda  yes/no;  vyre_cuda_reason  why it is off, for the summary
#   AM_CONDITIONAL HAVE_CUDA, HAVE_PTXAS
# --with-cuda=yes or --with-cuda=DIR without a usable cuda.h is a hard error
# naming every path searched.
AC_DEFUN([VYRE_CHECK_CUDA], [
  AC_ARG_WITH([cuda],
    [AS_HELP_STRING([--with-cuda=DIR|yes|no],
      [CUDA toolkit root holding include/cuda.h (default: auto; tries $CUDA_HOME, $CUDA_PATH, /usr/local/cuda)])],
    [vyre_with_cuda=$withval], [vyre_with_cuda=auto])

  vyre_have_cuda=no
  vyre_cuda_reason=
  vyre_cuda_root=
  vyre_cuda_searched=
  CUDA_CPPFLAGS=
  PTXAS=

  AS_CASE([$vyre_with_cuda],
    [no], [vyre_cuda_reason="disabled by --with-cuda=no"],
    [yes|auto], [vyre_cuda_candidates="$CUDA_HOME $CUDA_PATH /usr/local/cuda"],
    [vyre_cuda_candidates="$vyre_with_cuda"])

  AS_IF([test "x$vyre_with_cuda" != xno], [
    for vyre_dir in $vyre_cuda_candidates; do
      vyre_cuda_searched="$vyre_cuda_searched $vyre_dir/include/cuda.h"
      AS_IF([test -f "$vyre_dir/include/cuda.h"], [vyre_cuda_root=$vyre_dir; break])
    done
    AS_IF([test -n "$vyre_cuda_root"], [
      vyre_save_CPPFLAGS=$CPPFLAGS
      CPPFLAGS="$CPPFLAGS -I$vyre_cuda_root/include"
      AC_MSG_CHECKING([for a usable cuda.h in $vyre_cuda_root/include])
      AC_COMPILE_IFELSE([AC_LANG_PROGRAM([[#include <cuda.h>
#if CUDA_VERSION < 11030
#error cuGetProcAddress needs CUDA 11.3 headers or newer
#endif]], [[CUresult r = CUDA_SUCCESS; (void)r;]])],
        [AC_MSG_RESULT([yes]); vyre_have_cuda=yes; CUDA_CPPFLAGS="-I$vyre_cuda_root/include"],
        [AC_MSG_RESULT([no]); vyre_cuda_reason="$vyre_cuda_root/include/cuda.h does not compile or is older than CUDA 11.3"])
      CPPFLAGS=$vyre_save_CPPFLAGS
    ], [vyre_cuda_reason="no cuda.h in:$vyre_cuda_searched"])
    AS_IF([test "x$vyre_have_cuda" = xno && test "x$vyre_with_cuda" != xauto],
      [AC_MSG_ERROR([--with-cuda=$vyre_with_cuda was asked for but $vyre_cuda_reason. Fix: install the CUDA toolkit headers (cuda.h) or pass --with-cuda=DIR naming the toolkit root, or --with-cuda=no to build without the CUDA plugin.])])
  ])

  AC_ARG_VAR([PTXAS], [ptxas used by make check to assemble generated PTX])
  vyre_ptxas_path="$PATH"
  AS_IF([test -n "$vyre_cuda_root"], [vyre_ptxas_path="$vyre_cuda_root/bin$PATH_SEPARATOR$PATH"])
  AC_PATH_PROG([PTXAS], [ptxas], [], [$vyre_ptxas_path])

  AC_SUBST([CUDA_CPPFLAGS])
  AM_CONDITIONAL([HAVE_CUDA], [test "x$vyre_have_cuda" = xyes])
  AM_CONDITIONAL([HAVE_PTXAS], [test -n "$PTXAS"])
])
