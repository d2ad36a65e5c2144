# host-stub/conform/local.mk -- the conformance harness (case files, runner, comparison, capsules, minimizer, certificates): a PIC convenience library.
# Its interface is conform.h.  The CLI (host-stub/cli) and tests/conform link
# it, beside libvyre-host, libvyre-codegen, libvyre-ptxmath and libvyre.
noinst_LTLIBRARIES += host-stub/conform/libvyre-conform.la
host_stub_conform_libvyre_conform_la_SOURCES = \
	host-stub/conform/conform.h \
	host-stub/conform/conform_util.c \
	host-stub/conform/conform_case.c \
	host-stub/conform/conform_compare.c \
	host-stub/conform/conform_exec.c \
	host-stub/conform/conform_capsule.c \
	host-stub/conform/conform_min.c \
	host-stub/conform/conform_elf.c \
	host-stub/conform/conform_coverage.c \
	host-stub/conform/conform_cert.c \
	host-stub/conform/conform_run.c
dist_doc_DATA += docs/conformance.md
