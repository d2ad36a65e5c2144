# tests/conform.mk -- the conformance harness (host-stub/conform*.c, fuzz*.c), its corpus and its tests.

# The harness as a PIC convenience library: the `vyre` CLI (conform, fuzz)
# and tests/check_conform link it, together with host-stub/libvyre-text.la
# and plugin/libvyre-codegen.la (which carries the format library).
noinst_LTLIBRARIES += host-stub/libvyre-conform.la
host_stub_libvyre_conform_la_SOURCES = \
	host-stub/conform.h \
	host-stub/conform_util.c \
	host-stub/conform_case.c \
	host-stub/conform_compare.c \
	host-stub/conform_exec.c \
	host-stub/conform_capsule.c \
	host-stub/conform_min.c \
	host-stub/conform_elf.c \
	host-stub/conform_coverage.c \
	host-stub/conform_cert.c \
	host-stub/fuzz_gen.c \
	host-stub/fuzz_ptxas.c \
	host-stub/conform_run.c \
	host-stub/fuzz_run.c
host_stub_libvyre_conform_la_CPPFLAGS = $(AM_CPPFLAGS) -I$(top_srcdir)/plugin
noinst_HEADERS += host-stub/conform_cli.h
# `vyre conform` finds the source tree's corpus when neither --corpus nor
# $VYRE_CONFORM_CORPUS names one.
host_stub_vyre_CPPFLAGS += -DVYRE_CONFORM_CORPUS_DIR='"$(abs_top_srcdir)/tests/conformance"'

# A plugin with a planted bug (the reference, with mulhi results flipped):
# the runner and the fuzzer must find, capsule and minimize it.
check_LTLIBRARIES += tests/libconform_mutant.la
tests_libconform_mutant_la_SOURCES = tests/conform_mutant.c
tests_libconform_mutant_la_CPPFLAGS = $(AM_CPPFLAGS) \
	-DMUTANT_INNER_DEFAULT='"$(abs_top_builddir)/host-stub/.libs/libvyre-ref.so"'
tests_libconform_mutant_la_LDFLAGS = -module -rpath /nowhere -avoid-version -no-undefined \
	-export-symbols-regex '^vyre_plugin_(descriptor|entry)$$'
tests_libconform_mutant_la_LIBADD = abi/libvyre-format.la -ldl -lpthread

if HAVE_CHECK
check_PROGRAMS += tests/check_conform
TESTS += tests/check_conform
tests_check_conform_SOURCES = tests/check_conform.c
tests_check_conform_CPPFLAGS = $(AM_CPPFLAGS) -I$(top_srcdir)/plugin \
	-DVYRE_TEST_BUILD_DIR='"$(abs_top_builddir)"'
tests_check_conform_CFLAGS = $(AM_CFLAGS) $(CHECK_CFLAGS)
tests_check_conform_LDADD = host-stub/libvyre-conform.la host-stub/libvyre-host.la \
	host-stub/libvyre-text.la plugin/libvyre-codegen.la plugin/libvyre-ptxmath.la \
	abi/libvyre-format.la $(CHECK_LIBS) -lm
endif

# The CLI end to end (the reference against itself over the corpus, the
# planted bug), the corpus generator's check, and ptxas fuzzing.
TESTS += tests/conform.test tests/fuzz.test tests/fuzz_ptxas.test tests/conform_corpus.test
EXTRA_DIST += tests/conform.test tests/fuzz.test tests/fuzz_ptxas.test tests/conform_corpus.test \
	tests/conformance docs/conformance.md
