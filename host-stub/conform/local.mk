# host-stub/conform/local.mk -- the conformance harness (case files, runner, comparison, capsules, minimizer, certificates): a PIC convenience library.
# Its interface is conform.h.  The CLI (host-stub/cli) and tests/conform link
# it, beside libvyre-host, libvyre-codegen, libvyre-ptxmath and libvyre.
noinst_LTLIBRARIES += host-stub/conform/libvyre-conform.la
host_stub_conform_libvyre_conform_la_SOURCES = \
	host-stub/conform/conform.h \
	host-stub/conform/internal.h \
	host-stub/conform/run.c \
	host-stub/conform/replay.c \
	host-stub/conform/report.c \
	host-stub/conform/min.c \
	host-stub/conform/exec.c \
	host-stub/conform/indirect.c \
	host-stub/conform/capsule.c \
	host-stub/conform/cert.c \
	host-stub/conform/coverage.c \
	host-stub/conform/elf.c \
	host-stub/conform/corpus.c \
	host-stub/conform/case.c \
	host-stub/conform/directive.c \
	host-stub/conform/generate.c \
	host-stub/conform/literal.c \
	host-stub/conform/compare.c \
	host-stub/conform/util.c
dist_doc_DATA += docs/conformance.md
