# bench/workloads/local.mk -- the workload suite (bench/workloads/README.md): the vyre programs, their C baselines and the driver that times and checks both.
noinst_PROGRAMS += bench/workloads/workloads
noinst_HEADERS += bench/workloads/workloads.h bench/workloads/peers.h bench/workloads/peers_logic.h
bench_workloads_workloads_SOURCES = bench/workloads/workloads.c bench/workloads/suite.c \
	bench/workloads/pool.c bench/workloads/peer.c bench/workloads/survivors.c
# The programs are read from the source tree at run time (--dir overrides).
bench_workloads_workloads_CPPFLAGS = $(AM_CPPFLAGS) \
	-DVYRE_WORKLOADS_DIR='"$(abs_top_srcdir)/bench/workloads"'
bench_workloads_workloads_CFLAGS = $(AM_CFLAGS) -pthread
# -ldl: the CUDA peers (libwlpeers.so) are opened at run time, never linked.
bench_workloads_workloads_LDADD = host-stub/loader/libvyre-host.la abi/libvyre.la -lpthread -lm -ldl
WORKLOADS_VYRE = bench/workloads/clear.vyre bench/workloads/rule_eval.vyre \
	bench/workloads/bitmap_scatter.vyre bench/workloads/offset_agg.vyre \
	bench/workloads/entropy.vyre bench/workloads/quantified.vyre \
	bench/workloads/compaction.vyre bench/workloads/reach.vyre \
	bench/workloads/fused_filter.vyre bench/workloads/int4_linear.vyre \
	bench/workloads/survivors_compact.vyre bench/workloads/survivors_process.vyre
# The CUDA peers: built by peers.sh with nvcc on a GPU machine (bench/run.sh
# runs it), never by make (the build needs no CUDA toolkit).
EXTRA_DIST += bench/workloads/README.md bench/workloads/workloads.test bench/workloads/offset_agg.test \
	bench/workloads/bitmap_scatter.test \
	$(WORKLOADS_VYRE) bench/workloads/peers.sh bench/workloads/peers.cu \
	bench/workloads/peers_kernels.cu bench/workloads/peers_impl.h
# Every workload at a small scale on the reference backend, checked
# against its C baseline: correctness without a GPU.
TESTS += bench/workloads/workloads.test
# offset_agg.vyre's packed workgroup counters under the worst case.
TESTS += bench/workloads/offset_agg.test
# bitmap_scatter.vyre where its invocations' second four events are live.
TESTS += bench/workloads/bitmap_scatter.test
# The CUDA peers' arithmetic (peers_logic.h, shared with peers_kernels.cu)
# and their kernels' work split replayed on the host against the baselines.
check_PROGRAMS += bench/workloads/peer_logic_test
bench_workloads_peer_logic_test_SOURCES = bench/workloads/peer_logic_test.c \
	bench/workloads/suite.c bench/workloads/pool.c
bench_workloads_peer_logic_test_CFLAGS = $(AM_CFLAGS) -pthread
bench_workloads_peer_logic_test_LDADD = -lpthread -lm
TESTS += bench/workloads/peer_logic_test
# A CPU stand-in for libwlpeers.so: workloads.test drives the peer mode
# (dlopen, the ABI, a right and a wrong peer, the roofline) through it.
check_LTLIBRARIES += bench/workloads/libwlpeers-stub.la
bench_workloads_libwlpeers_stub_la_SOURCES = bench/workloads/peer_stub.c
bench_workloads_libwlpeers_stub_la_LDFLAGS = -module -rpath /nowhere -avoid-version -no-undefined
