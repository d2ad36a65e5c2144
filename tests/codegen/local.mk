# tests/codegen/local.mk -- codegen structure tests; ptxas assembly of every op and thousands of random programs (ptxas_codegen, SKIP without ptxas).
if HAVE_CHECK
check_PROGRAMS += tests/codegen/check_codegen
TESTS += tests/codegen/check_codegen
tests_codegen_check_codegen_SOURCES = tests/codegen/check_codegen.c
tests_codegen_check_codegen_CFLAGS = $(AM_CFLAGS) $(CHECK_CFLAGS)
tests_codegen_check_codegen_LDADD = host-stub/fuzz/libvyre-progen.la plugin/codegen/libvyre-codegen.la \
	plugin/ptxmath/libvyre-ptxmath.la abi/libvyre-private.la $(CHECK_LIBS)
# The ptxas cases, from the same source: SKIP (77) without a ptxas.
check_PROGRAMS += tests/codegen/ptxas_codegen
TESTS += tests/codegen/ptxas_codegen
tests_codegen_ptxas_codegen_SOURCES = $(tests_codegen_check_codegen_SOURCES)
tests_codegen_ptxas_codegen_CPPFLAGS = $(AM_CPPFLAGS) -DCHECK_PTXAS_ONLY
tests_codegen_ptxas_codegen_CFLAGS = $(tests_codegen_check_codegen_CFLAGS)
tests_codegen_ptxas_codegen_LDADD = $(tests_codegen_check_codegen_LDADD)
# The MMA ops and cp.async staging: PTX structure, refusals, ptxas on every case.
check_PROGRAMS += tests/codegen/check_mma
TESTS += tests/codegen/check_mma
tests_codegen_check_mma_SOURCES = tests/codegen/check_mma.c
tests_codegen_check_mma_CFLAGS = $(AM_CFLAGS) $(CHECK_CFLAGS)
tests_codegen_check_mma_LDADD = plugin/codegen/libvyre-codegen.la \
	plugin/ptxmath/libvyre-ptxmath.la abi/libvyre-private.la $(CHECK_LIBS)
endif
