# tests/math.mk -- ptxmath: the unit suite (model accuracy, special values, ptxas), the GPU accuracy test, the long sweep.
if HAVE_CHECK
check_PROGRAMS += tests/check_ptxmath
TESTS += tests/check_ptxmath
tests_check_ptxmath_SOURCES = tests/check_ptxmath.c tests/ptxmath_ref.c tests/ptxmath_ref.h plugin/strbuf.c plugin/strbuf.h
tests_check_ptxmath_CPPFLAGS = $(AM_CPPFLAGS) -I$(top_srcdir)/plugin
tests_check_ptxmath_CFLAGS = $(AM_CFLAGS) $(CHECK_CFLAGS)
tests_check_ptxmath_LDADD = plugin/libvyre-ptxmath.la abi/libvyre-format.la $(CHECK_LIBS)
endif

# Runs on a GPU machine (exit 77 = SKIP without a driver or device); plain
# C so it needs no Check library there.
if HAVE_CUDA
check_PROGRAMS += tests/gpu_ptxmath
TESTS += tests/gpu_ptxmath
tests_gpu_ptxmath_SOURCES = tests/gpu_ptxmath.c tests/ptxmath_ref.c tests/ptxmath_ref.h plugin/strbuf.c plugin/strbuf.h
tests_gpu_ptxmath_CPPFLAGS = $(AM_CPPFLAGS) -I$(top_srcdir)/plugin $(CUDA_CPPFLAGS)
tests_gpu_ptxmath_LDADD = plugin/libvyre-ptxmath.la abi/libvyre-format.la
endif

# The long model-vs-reference sweep (docs/ulp.md): run by hand.
noinst_PROGRAMS += tests/sweep_ptxmath
tests_sweep_ptxmath_SOURCES = tests/sweep_ptxmath.c tests/ptxmath_ref.c tests/ptxmath_ref.h plugin/strbuf.c plugin/strbuf.h
tests_sweep_ptxmath_CPPFLAGS = $(AM_CPPFLAGS) -I$(top_srcdir)/plugin
tests_sweep_ptxmath_LDADD = plugin/libvyre-ptxmath.la abi/libvyre-format.la
