# bench/local.mk -- every build rule of bench/ (bench/workloads/local.mk has the workloads): programs run by hand, not tests.
# The raw Driver-API floor (bench/floor.c: bare driver calls and a
# hand-written kernel; libcuda opened at run time, built only with
# cuda.h); bench/run.sh runs it beside `vyre bench` and the peers.  The
# floors large host transfers are measured against (run by hand on a GPU
# machine: bench/xfer_probe [MiB]); docs/cuda-runtime.md has figures.
if HAVE_CUDA
noinst_PROGRAMS += bench/floor bench/xfer_probe
bench_floor_SOURCES = bench/floor.c
bench_floor_CPPFLAGS = $(AM_CPPFLAGS) $(CUDA_CPPFLAGS)
bench_floor_LDADD = -ldl
bench_xfer_probe_SOURCES = bench/xfer_probe.c
bench_xfer_probe_CPPFLAGS = $(AM_CPPFLAGS) $(CUDA_CPPFLAGS)
bench_xfer_probe_LDADD = -ldl -lpthread
# The tensor-core matmuls timed through the driver (bench/mma.sh compiles
# the same sources on the GPU machine; built here so they stay warning-free).
noinst_PROGRAMS += bench/mma
bench_mma_SOURCES = bench/mma.c bench/mma_check.c bench/mma_check.h
bench_mma_CPPFLAGS = $(AM_CPPFLAGS) $(CUDA_CPPFLAGS)
bench_mma_LDADD = -ldl -lm
endif

# bench/mma.sh's logic that needs no GPU: the sampled check of C with a
# CPU stand-in (mma_check_test), the Python side and the scripts (mma.test).
check_PROGRAMS += bench/mma_check_test
bench_mma_check_test_SOURCES = bench/mma_check_test.c bench/mma_check.c bench/mma_check.h
bench_mma_check_test_LDADD = -lm
TESTS += bench/mma_check_test bench/mma.test

# Codegen speed (docs/codegen.md): not a test, a program to run by hand.
noinst_PROGRAMS += bench/codegen_bench
bench_codegen_bench_SOURCES = bench/codegen_bench.c
bench_codegen_bench_LDADD = host-stub/fuzz/libvyre-progen.la plugin/codegen/libvyre-codegen.la \
	plugin/ptxmath/libvyre-ptxmath.la abi/libvyre-private.la

# The suite's scripts and the peers' programs (bench/run.sh).
EXTRA_DIST += bench/plot.py bench/report.py bench/compute.sh bench/peers.py bench/compare.py bench/run.sh \
	bench/ftz_cost.cu bench/const_fma.vyre bench/compute_bound.sh bench/compute_bound.c \
	bench/compute_bound_peers.py bench/mma.sh bench/mma_peers.py bench/mma_peers_test.py bench/mma.test \
	bench/mma_simple.vyre

# The per-call cost of libvyre-host's checking instance and its validation
# layer (BENCHMARKS.md, "Validation layer overhead"): run by hand.
noinst_PROGRAMS += bench/guard_overhead
bench_guard_overhead_SOURCES = bench/guard_overhead.c
bench_guard_overhead_LDADD = host-stub/loader/libvyre-host.la abi/libvyre.la
