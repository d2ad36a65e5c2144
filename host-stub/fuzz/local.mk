# host-stub/fuzz/local.mk -- the differential fuzzer (runner, ptxas batches) and the random-program generator: PIC convenience libraries.

# libvyre-progen: the one random-program generator (progen.h), on libvyre's
# builder.  `vyre fuzz`, the codegen tests and the format corpus link it,
# each beside libvyre.
noinst_LTLIBRARIES += host-stub/fuzz/libvyre-progen.la
host_stub_fuzz_libvyre_progen_la_SOURCES = host-stub/fuzz/progen.c host-stub/fuzz/progen.h \
	host-stub/fuzz/internal.h host-stub/fuzz/value.c host-stub/fuzz/stmt.c \
	host-stub/fuzz/buffer.c host-stub/fuzz/racefree.c host-stub/fuzz/coverage.c \
	host-stub/fuzz/elementwise.c host-stub/fuzz/inputs.c host-stub/fuzz/mma.c

# libvyre-fuzz runs generated programs through the conformance harness
# (host-stub/conform); whoever links it links libvyre-progen and
# libvyre-conform beside it.
noinst_LTLIBRARIES += host-stub/fuzz/libvyre-fuzz.la
host_stub_fuzz_libvyre_fuzz_la_SOURCES = \
	host-stub/fuzz/ptxas.c \
	host-stub/fuzz/run.c \
	host-stub/fuzz/seqgen.c host-stub/fuzz/seqrun.c
noinst_HEADERS += host-stub/fuzz/fuzz.h
