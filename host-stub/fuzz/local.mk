# host-stub/fuzz/local.mk -- the differential fuzzer (program generator, runner, ptxas batches): a PIC convenience library.
# It runs programs through the conformance harness (host-stub/conform), which
# whoever links it links beside it.
noinst_LTLIBRARIES += host-stub/fuzz/libvyre-fuzz.la
host_stub_fuzz_libvyre_fuzz_la_SOURCES = \
	host-stub/fuzz/fuzz_gen.c \
	host-stub/fuzz/fuzz_ptxas.c \
	host-stub/fuzz/fuzz_run.c
noinst_HEADERS += host-stub/fuzz/fuzz.h
