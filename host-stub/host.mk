# host-stub/host.mk -- libvyre-host (plugin discovery, ABI negotiation, selection) and the `vyre` CLI.

# The plugins a build tree makes, relative to its top: searched when the
# host runs from the build tree (docs/host.md).  Add new plugins here.
VYRE_BUILD_PLUGINS = host-stub/.libs/libvyre-ref.so:plugin/.libs/libvyre-cuda.so

lib_LTLIBRARIES += host-stub/libvyre-host.la
vyreinclude_HEADERS += host-stub/include/vyre/vyre_host.h
noinst_HEADERS += host-stub/host_internal.h
host_stub_libvyre_host_la_SOURCES = host-stub/host.c host-stub/loader.c
host_stub_libvyre_host_la_CPPFLAGS = $(AM_CPPFLAGS) \
	-DVYRE_PLUGINDIR='"$(plugindir)"' -DVYRE_BUILD_PLUGINS='"$(VYRE_BUILD_PLUGINS)"'
host_stub_libvyre_host_la_LIBADD = abi/libvyre-format.la
# Only the vyre_host_* API is exported; the format library stays private.
host_stub_libvyre_host_la_LDFLAGS = $(AM_LDFLAGS) -no-undefined -version-info 0:0:0 \
	-export-symbols-regex '^vyre_host_'

EXTRA_DIST += docs/host.md

# The `vyre` command.  New commands: one vyre_cli_NAME.c each (vyre_cli.h).
bin_PROGRAMS += host-stub/vyre
noinst_HEADERS += host-stub/vyre_cli.h
host_stub_vyre_SOURCES = host-stub/vyre_cli.c host-stub/vyre_cli_list.c host-stub/vyre_cli_run.c \
	host-stub/vyre_cli_asm.c host-stub/vyre_cli_ptx.c host-stub/vyre_cli_bench.c \
	host-stub/conform_cli.c host-stub/fuzz_cli.c
host_stub_vyre_CPPFLAGS = $(AM_CPPFLAGS) -I$(top_srcdir)/plugin
host_stub_vyre_LDADD = host-stub/libvyre-conform.la host-stub/libvyre-host.la host-stub/libvyre-text.la \
	plugin/libvyre-codegen.la plugin/libvyre-ptxmath.la abi/libvyre-format.la -lm

# `make demo`: the backends found, then example programs on the best one.
DEMO_EXAMPLES = examples/saxpy.vyre examples/histogram.vyre examples/bitonic_sort.vyre
EXTRA_DIST += $(DEMO_EXAMPLES)
demo: host-stub/vyre $(plugin_LTLIBRARIES)
	@echo '$$ vyre list'; ./host-stub/vyre list
	@echo; echo '$$ vyre run examples/saxpy.vyre --fill 2 --iota 0:16 --fill 1:16 --timed'
	@./host-stub/vyre run $(srcdir)/examples/saxpy.vyre --fill 2 --iota 0:16 --fill 1:16 --timed
	@echo; echo '$$ vyre run examples/histogram.vyre --iota 0:1000'
	@./host-stub/vyre run $(srcdir)/examples/histogram.vyre --iota 0:1000
	@echo; echo '$$ vyre run examples/bitonic_sort.vyre --random 7:16'
	@./host-stub/vyre run $(srcdir)/examples/bitonic_sort.vyre --random 7:16
	@echo; echo 'more: docs/examples.md; all of them, checked: make check TESTS=tests/examples.test'
.PHONY: demo
