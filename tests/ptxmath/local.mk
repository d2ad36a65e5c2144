# tests/ptxmath/local.mk -- ptxmath: the unit suite (model accuracy, special values, ptxas), the GPU accuracy test, the long sweep.
PTXMATH_TEST_LIBS = plugin/ptxmath/libvyre-ptxmath.la abi/libvyre-private.la
if HAVE_CHECK
check_PROGRAMS += tests/ptxmath/check_ptxmath
TESTS += tests/ptxmath/check_ptxmath
tests_ptxmath_check_ptxmath_SOURCES = tests/ptxmath/check_ptxmath.c tests/ptxmath/ptxmath_ref.c \
	tests/ptxmath/ptxmath_ref.h
tests_ptxmath_check_ptxmath_CFLAGS = $(AM_CFLAGS) $(CHECK_CFLAGS)
tests_ptxmath_check_ptxmath_LDADD = $(PTXMATH_TEST_LIBS) $(CHECK_LIBS)
# The ptxas cases, from the same source: SKIP (77) without a ptxas.
check_PROGRAMS += tests/ptxmath/ptxas_ptxmath
TESTS += tests/ptxmath/ptxas_ptxmath
tests_ptxmath_ptxas_ptxmath_SOURCES = $(tests_ptxmath_check_ptxmath_SOURCES)
tests_ptxmath_ptxas_ptxmath_CPPFLAGS = $(AM_CPPFLAGS) -DCHECK_PTXAS_ONLY
tests_ptxmath_ptxas_ptxmath_CFLAGS = $(tests_ptxmath_check_ptxmath_CFLAGS)
tests_ptxmath_ptxas_ptxmath_LDADD = $(tests_ptxmath_check_ptxmath_LDADD)
endif

# Runs on a GPU machine (exit 77 = SKIP without a driver or device); plain
# C so it needs no Check library there.
if HAVE_CUDA
check_PROGRAMS += tests/ptxmath/gpu_ptxmath
TESTS += tests/ptxmath/gpu_ptxmath
tests_ptxmath_gpu_ptxmath_SOURCES = tests/ptxmath/gpu_ptxmath.c tests/ptxmath/cudrv.c tests/ptxmath/cudrv.h \
	tests/ptxmath/ptxmath_ref.c \
	tests/ptxmath/ptxmath_ref.h
tests_ptxmath_gpu_ptxmath_CPPFLAGS = $(AM_CPPFLAGS) $(CUDA_CPPFLAGS)
tests_ptxmath_gpu_ptxmath_LDADD = $(PTXMATH_TEST_LIBS)

# The exhaustive sweep of every f32 input against cr_oracle.cu (docs/ulp.md,
# "Correct rounding"): run by hand on a GPU machine, tests/ptxmath/cr-sweep.sh.
noinst_PROGRAMS += tests/ptxmath/cr_sweep
tests_ptxmath_cr_sweep_SOURCES = tests/ptxmath/cr_sweep.c tests/ptxmath/cudrv.c tests/ptxmath/cudrv.h
tests_ptxmath_cr_sweep_CPPFLAGS = $(AM_CPPFLAGS) $(CUDA_CPPFLAGS)
tests_ptxmath_cr_sweep_LDADD = $(PTXMATH_TEST_LIBS)
endif
EXTRA_DIST += tests/ptxmath/cr_oracle.cu tests/ptxmath/cr_resolve.py tests/ptxmath/cr_table.py \
	tests/ptxmath/cr-sweep.sh tests/ptxmath/cr/exceptions.txt

# The long model-vs-reference sweep (docs/ulp.md): run by hand.
noinst_PROGRAMS += tests/ptxmath/sweep_ptxmath
tests_ptxmath_sweep_ptxmath_SOURCES = tests/ptxmath/sweep_ptxmath.c tests/ptxmath/ptxmath_ref.c \
	tests/ptxmath/ptxmath_ref.h
tests_ptxmath_sweep_ptxmath_LDADD = $(PTXMATH_TEST_LIBS)
