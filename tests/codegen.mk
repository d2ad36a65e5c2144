# tests/codegen.mk -- codegen structure tests, plus ptxas assembly of every op and thousands of random programs when PTXAS is set.
if HAVE_CHECK
check_PROGRAMS += tests/check_codegen
TESTS += tests/check_codegen
tests_check_codegen_SOURCES = tests/check_codegen.c tests/progen.c tests/progen.h
tests_check_codegen_CPPFLAGS = $(AM_CPPFLAGS) -I$(top_srcdir)/plugin -I$(top_srcdir)/tests
tests_check_codegen_CFLAGS = $(AM_CFLAGS) $(CHECK_CFLAGS)
tests_check_codegen_LDADD = plugin/libvyre-codegen.la plugin/libvyre-ptxmath.la $(CHECK_LIBS)
endif
