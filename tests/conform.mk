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
