# tests/codegen/local.mk -- codegen structure tests, plus ptxas assembly of every op and thousands of random programs when PTXAS is set.
if HAVE_CHECK
check_PROGRAMS += tests/codegen/check_codegen
TESTS += tests/codegen/check_codegen
tests_codegen_check_codegen_SOURCES = tests/codegen/check_codegen.c
tests_codegen_check_codegen_CFLAGS = $(AM_CFLAGS) $(CHECK_CFLAGS)
tests_codegen_check_codegen_LDADD = host-stub/fuzz/libvyre-progen.la plugin/codegen/libvyre-codegen.la \
	plugin/ptxmath/libvyre-ptxmath.la abi/libvyre.la $(CHECK_LIBS)
endif
