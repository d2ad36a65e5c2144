# tests/runtime/local.mk -- the CUDA runtime's tests: a fake libcuda (no GPU) suite and the GPU suite.
if HAVE_CUDA
# compute-sanitizer on vyre's kernels (SKIP without the tool or a device).
TESTS += tests/runtime/sanitizer.test
EXTRA_DIST += tests/runtime/sanitizer.test tests/runtime/sanitizer/ws_race.vyre \
	tests/runtime/sanitizer/missing_barrier.vyre tests/runtime/sanitizer/divergent_barrier.vyre
# The fake driver: a shared object the plugin dlopens through VYRE_CUDA_DRIVER.
check_LTLIBRARIES += tests/runtime/fakecuda/libfakecuda.la
tests_runtime_fakecuda_libfakecuda_la_SOURCES = tests/runtime/fakecuda/fakecuda.c tests/runtime/fakecuda/fakecuda.h
tests_runtime_fakecuda_libfakecuda_la_CPPFLAGS = $(AM_CPPFLAGS) $(CUDA_CPPFLAGS)
tests_runtime_fakecuda_libfakecuda_la_LDFLAGS = $(AM_LDFLAGS) -module -avoid-version -shared -rpath /nowhere
tests_runtime_fakecuda_libfakecuda_la_LIBADD = -lpthread

if HAVE_CHECK
check_PROGRAMS += tests/runtime/check_cuda_fake tests/runtime/check_cuda_gpu
TESTS += tests/runtime/check_cuda_fake tests/runtime/check_cuda_gpu

tests_runtime_check_cuda_fake_SOURCES = tests/runtime/check_cuda_fake.c \
	tests/runtime/fakeharness.c tests/runtime/fakeharness.h \
	tests/runtime/cuda_fake/harness.c tests/runtime/cuda_fake/harness.h \
	tests/runtime/cuda_fake/core.c tests/runtime/cuda_fake/async.c \
	tests/runtime/cuda_fake/staging.c tests/runtime/cuda_fake/split.c \
	tests/runtime/cuda_fake/resident.c \
	tests/runtime/cuda_fake/interop.c tests/runtime/cuda_fake/caches.c \
	tests/runtime/cuda_fake/errors.c tests/runtime/cuda_fake/timeouts.c \
	tests/runtime/cuda_fake/sweep.c tests/runtime/cuda_fake/devices.c \
	tests/runtime/cuda_fake/jit.c \
	tests/runtime/cuda_fake/fusion.c tests/runtime/cuda_fake/fill.c \
	tests/runtime/cuda_fake/indirect.c
tests_runtime_check_cuda_fake_CPPFLAGS = $(AM_CPPFLAGS) $(CUDA_CPPFLAGS)
tests_runtime_check_cuda_fake_CFLAGS = $(AM_CFLAGS) $(CHECK_CFLAGS)
tests_runtime_check_cuda_fake_LDADD = abi/libvyre-private.la $(CHECK_LIBS) -ldl -lpthread
EXTRA_tests_runtime_check_cuda_fake_DEPENDENCIES = tests/runtime/fakecuda/libfakecuda.la \
	plugin/runtime/libvyre-cuda.la

# The fused program (plugin/runtime/fuse.c, pure IR) against its steps,
# on the reference backend: no driver involved.
check_PROGRAMS += tests/runtime/check_fuse
TESTS += tests/runtime/check_fuse
tests_runtime_check_fuse_SOURCES = tests/runtime/check_fuse.c plugin/runtime/fuse.c \
	plugin/runtime/fuse.h tests/runtime/refhost.c tests/runtime/refhost.h
tests_runtime_check_fuse_CPPFLAGS = $(AM_CPPFLAGS) -DVYRE_TEST_BUILD_DIR='"$(abs_top_builddir)"'
tests_runtime_check_fuse_CFLAGS = $(AM_CFLAGS) $(CHECK_CFLAGS)
tests_runtime_check_fuse_LDADD = host-stub/fuzz/libvyre-fuzz.la host-stub/fuzz/libvyre-progen.la \
	host-stub/conform/libvyre-conform.la \
	host-stub/loader/libvyre-host.la plugin/codegen/libvyre-codegen.la \
	plugin/ptxmath/libvyre-ptxmath.la abi/libvyre.la abi/libvyre-support.la $(CHECK_LIBS) -lm
EXTRA_tests_runtime_check_fuse_DEPENDENCIES = host-stub/ref/libvyre-ref.la

# What a fill's memset writes (plugin/runtime/fill.c, pure IR) against
# the program on the reference backend: no driver involved.
check_PROGRAMS += tests/runtime/check_fill
TESTS += tests/runtime/check_fill
tests_runtime_check_fill_SOURCES = tests/runtime/check_fill.c plugin/runtime/fill.c \
	plugin/runtime/fill.h tests/runtime/refhost.c tests/runtime/refhost.h
tests_runtime_check_fill_CPPFLAGS = $(AM_CPPFLAGS) -DVYRE_TEST_BUILD_DIR='"$(abs_top_builddir)"'
tests_runtime_check_fill_CFLAGS = $(AM_CFLAGS) $(CHECK_CFLAGS)
tests_runtime_check_fill_LDADD = host-stub/loader/libvyre-host.la plugin/codegen/libvyre-codegen.la \
	plugin/ptxmath/libvyre-ptxmath.la abi/libvyre.la abi/libvyre-support.la $(CHECK_LIBS) -lm
EXTRA_tests_runtime_check_fill_DEPENDENCIES = host-stub/ref/libvyre-ref.la

# Systematic fault injection (every driver call, every host allocation)
# and the threaded stress test, both against the fake driver.
check_PROGRAMS += tests/runtime/check_cuda_faults
TESTS += tests/runtime/check_cuda_faults
tests_runtime_check_cuda_faults_SOURCES = tests/runtime/check_cuda_faults.c \
	tests/runtime/fakeharness.c tests/runtime/fakeharness.h
tests_runtime_check_cuda_faults_CPPFLAGS = $(AM_CPPFLAGS) $(CUDA_CPPFLAGS)
tests_runtime_check_cuda_faults_CFLAGS = $(AM_CFLAGS) $(CHECK_CFLAGS)
tests_runtime_check_cuda_faults_LDADD = abi/libvyre-private.la $(CHECK_LIBS) -ldl -lpthread
EXTRA_tests_runtime_check_cuda_faults_DEPENDENCIES = tests/runtime/fakecuda/libfakecuda.la \
	plugin/runtime/libvyre-cuda.la

# The same workload with each host allocation failing in turn: this
# program's own malloc (failalloc.c), which a sanitizer's would clash
# with, so a sanitizer build has the program say SKIP.
check_PROGRAMS += tests/runtime/check_cuda_allocs
TESTS += tests/runtime/check_cuda_allocs
tests_runtime_check_cuda_allocs_SOURCES = tests/runtime/check_cuda_faults.c \
	tests/runtime/fakeharness.c tests/runtime/fakeharness.h tests/runtime/failalloc.h
if ANY_SANITIZER
tests_runtime_check_cuda_allocs_CPPFLAGS = $(AM_CPPFLAGS) $(CUDA_CPPFLAGS) -DFAULTS_ALLOCS \
	-DFAULTS_NO_FAILALLOC
EXTRA_DIST += tests/runtime/failalloc.c
else
tests_runtime_check_cuda_allocs_SOURCES += tests/runtime/failalloc.c
tests_runtime_check_cuda_allocs_CPPFLAGS = $(AM_CPPFLAGS) $(CUDA_CPPFLAGS) -DFAULTS_ALLOCS
endif
tests_runtime_check_cuda_allocs_CFLAGS = $(AM_CFLAGS) $(CHECK_CFLAGS)
tests_runtime_check_cuda_allocs_LDFLAGS = $(AM_LDFLAGS) -rdynamic
tests_runtime_check_cuda_allocs_LDADD = abi/libvyre-private.la $(CHECK_LIBS) -ldl -lpthread
EXTRA_tests_runtime_check_cuda_allocs_DEPENDENCIES = tests/runtime/fakecuda/libfakecuda.la \
	plugin/runtime/libvyre-cuda.la

# 16 threads on one instance, every output checked (the TSan build's
# main subject: configure --enable-tsan).
check_PROGRAMS += tests/runtime/check_cuda_threads
TESTS += tests/runtime/check_cuda_threads
tests_runtime_check_cuda_threads_SOURCES = tests/runtime/check_cuda_threads.c \
	tests/runtime/fakeharness.c tests/runtime/fakeharness.h
tests_runtime_check_cuda_threads_CPPFLAGS = $(AM_CPPFLAGS) $(CUDA_CPPFLAGS)
tests_runtime_check_cuda_threads_CFLAGS = $(AM_CFLAGS) $(CHECK_CFLAGS)
tests_runtime_check_cuda_threads_LDADD = abi/libvyre-private.la $(CHECK_LIBS) -ldl -lpthread
EXTRA_tests_runtime_check_cuda_threads_DEPENDENCIES = tests/runtime/fakecuda/libfakecuda.la \
	plugin/runtime/libvyre-cuda.la

check_PROGRAMS += tests/runtime/check_mma_dispatch
TESTS += tests/runtime/check_mma_dispatch
tests_runtime_check_mma_dispatch_SOURCES = tests/runtime/check_mma_dispatch.c \
	tests/runtime/fakeharness.c tests/runtime/fakeharness.h
tests_runtime_check_mma_dispatch_CPPFLAGS = $(AM_CPPFLAGS) $(CUDA_CPPFLAGS)
tests_runtime_check_mma_dispatch_CFLAGS = $(AM_CFLAGS) $(CHECK_CFLAGS)
tests_runtime_check_mma_dispatch_LDADD = abi/libvyre-private.la $(CHECK_LIBS) -ldl -lpthread
EXTRA_tests_runtime_check_mma_dispatch_DEPENDENCIES = tests/runtime/fakecuda/libfakecuda.la \
	plugin/runtime/libvyre-cuda.la

# Runs on the GPU machine, which has no Check library: link it statically,
# run with CK_FORK=no (CUDA does not survive fork).
tests_runtime_check_cuda_gpu_SOURCES = tests/runtime/check_cuda_gpu.c
tests_runtime_check_cuda_gpu_CFLAGS = $(AM_CFLAGS) $(CHECK_CFLAGS)
tests_runtime_check_cuda_gpu_LDADD = abi/libvyre-private.la $(CHECK_STATIC_LIBS) -ldl -lpthread -lm
EXTRA_tests_runtime_check_cuda_gpu_DEPENDENCIES = plugin/runtime/libvyre-cuda.la
endif
endif
# The capability table (no driver, no GPU): built from its source.
if HAVE_CHECK
check_PROGRAMS += tests/runtime/check_caps
TESTS += tests/runtime/check_caps
tests_runtime_check_caps_SOURCES = tests/runtime/check_caps.c plugin/runtime/caps.c \
	plugin/runtime/caps.h
tests_runtime_check_caps_CFLAGS = $(AM_CFLAGS) $(CHECK_CFLAGS)
tests_runtime_check_caps_LDADD = $(CHECK_LIBS)
endif
# Run by hand on a GPU machine with PyTorch (not a `make check` test: CI
# has neither): a torch tensor imported zero copy, run on torch's stream.
EXTRA_DIST += tests/runtime/interop_torch.py
