# bench/local.mk -- the raw Driver-API floor (bench/floor.c: bare driver calls and a hand-written kernel; libcuda opened at run time, built only with cuda.h); bench/run.sh runs it beside `vyre bench` and the peers.
if HAVE_CUDA
noinst_PROGRAMS += bench/floor
bench_floor_SOURCES = bench/floor.c
bench_floor_CPPFLAGS = $(AM_CPPFLAGS) $(CUDA_CPPFLAGS)
bench_floor_LDADD = -ldl
endif
EXTRA_DIST += bench/plot.py bench/report.py
EXTRA_DIST += bench/compute.sh
