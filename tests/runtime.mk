# tests/runtime.mk -- the CUDA runtime's tests: a fake libcuda (no GPU) suite and the GPU suite.
if HAVE_CUDA
# The fake driver: a shared object the plugin dlopens through VYRE_CUDA_DRIVER.
check_LTLIBRARIES += tests/fakecuda/libfakecuda.la
tests_fakecuda_libfakecuda_la_SOURCES = tests/fakecuda/fakecuda.c tests/fakecuda/fakecuda.h
tests_fakecuda_libfakecuda_la_CPPFLAGS = $(AM_CPPFLAGS) $(CUDA_CPPFLAGS)
tests_fakecuda_libfakecuda_la_LDFLAGS = $(AM_LDFLAGS) -module -avoid-version -shared -rpath /nowhere
tests_fakecuda_libfakecuda_la_LIBADD = -lpthread

if HAVE_CHECK
check_PROGRAMS += tests/check_cuda_fake tests/check_cuda_gpu
TESTS += tests/check_cuda_fake tests/check_cuda_gpu

tests_check_cuda_fake_SOURCES = tests/check_cuda_fake.c
tests_check_cuda_fake_CPPFLAGS = $(AM_CPPFLAGS) $(CUDA_CPPFLAGS) -I$(top_srcdir)/tests/fakecuda
tests_check_cuda_fake_CFLAGS = $(AM_CFLAGS) $(CHECK_CFLAGS)
tests_check_cuda_fake_LDADD = abi/libvyre-format.la $(CHECK_LIBS) -ldl -lpthread
EXTRA_tests_check_cuda_fake_DEPENDENCIES = tests/fakecuda/libfakecuda.la plugin/libvyre-cuda.la

# Runs on the GPU machine, which has no Check library: link it statically,
# run with CK_FORK=no (CUDA does not survive fork).
tests_check_cuda_gpu_SOURCES = tests/check_cuda_gpu.c
tests_check_cuda_gpu_CPPFLAGS = $(AM_CPPFLAGS)
tests_check_cuda_gpu_CFLAGS = $(AM_CFLAGS) $(CHECK_CFLAGS)
tests_check_cuda_gpu_LDADD = abi/libvyre-format.la $(CHECK_STATIC_LIBS) -ldl -lpthread -lm
EXTRA_tests_check_cuda_gpu_DEPENDENCIES = plugin/libvyre-cuda.la
endif
endif
