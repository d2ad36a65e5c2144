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
endif

# Codegen speed (docs/codegen.md): not a test, a program to run by hand.
noinst_PROGRAMS += bench/codegen_bench
bench_codegen_bench_SOURCES = bench/codegen_bench.c
bench_codegen_bench_LDADD = host-stub/fuzz/libvyre-progen.la plugin/codegen/libvyre-codegen.la \
	plugin/ptxmath/libvyre-ptxmath.la abi/libvyre-private.la

# The suite's scripts and the peers' programs (bench/run.sh).
EXTRA_DIST += bench/plot.py bench/report.py bench/compute.sh bench/peers.py bench/compare.py bench/run.sh \
	bench/ftz_cost.cu bench/const_fma.vyre bench/compute_bound.sh bench/compute_bound.c \
	bench/compute_bound_peers.py
