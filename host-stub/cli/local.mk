# host-stub/cli/local.mk -- the `vyre` command.  New commands: one NAME.c each (cli.h).
bin_PROGRAMS += host-stub/cli/vyre
noinst_HEADERS += host-stub/cli/cli.h host-stub/cli/conform.h \
	host-stub/cli/term.h host-stub/cli/run.h host-stub/cli/bench.h
host_stub_cli_vyre_SOURCES = host-stub/cli/main.c host-stub/cli/util.c host-stub/cli/list.c \
	host-stub/cli/run.c host-stub/cli/run_input.c host-stub/cli/run_output.c \
	host-stub/cli/asm.c host-stub/cli/ptx.c \
	host-stub/cli/bench.c host-stub/cli/bench_case.c host-stub/cli/bench_compile.c \
	host-stub/cli/bench_report.c host-stub/cli/conform.c host-stub/cli/fuzz.c \
	host-stub/cli/devices.c host-stub/cli/term.c
host_stub_cli_vyre_LDADD = host-stub/fuzz/libvyre-fuzz.la host-stub/fuzz/libvyre-progen.la \
	host-stub/conform/libvyre-conform.la \
	host-stub/loader/libvyre-host.la plugin/codegen/libvyre-codegen.la \
	plugin/ptxmath/libvyre-ptxmath.la abi/libvyre.la abi/libvyre-support.la -lm

# `make demo`: the backends found, then example programs on the best one.
DEMO_EXAMPLES = examples/saxpy.vyre examples/histogram.vyre examples/bitonic_sort.vyre
EXTRA_DIST += $(DEMO_EXAMPLES)
demo: host-stub/cli/vyre $(plugin_LTLIBRARIES)
	@echo '$$ vyre list'; ./host-stub/cli/vyre list
	@echo; echo '$$ vyre run examples/saxpy.vyre --fill 2 --iota 0:16 --fill 1:16 --timed'
	@./host-stub/cli/vyre run $(srcdir)/examples/saxpy.vyre --fill 2 --iota 0:16 --fill 1:16 --timed
	@echo; echo '$$ vyre run examples/histogram.vyre --iota 0:1000'
	@./host-stub/cli/vyre run $(srcdir)/examples/histogram.vyre --iota 0:1000
	@echo; echo '$$ vyre run examples/bitonic_sort.vyre --random 7:16'
	@./host-stub/cli/vyre run $(srcdir)/examples/bitonic_sort.vyre --random 7:16
	@echo; echo 'more: docs/examples.md; all of them, checked: make check TESTS=tests/cli/examples.test'
.PHONY: demo
# `vyre conform` reads the installed corpus (tests/conform/local.mk installs
# it) when neither --corpus nor the environment names one: its directory is
# VYRE_CONFORM_CORPUS_DIR of config-paths.h (Makefile.am).
host_stub_cli_vyre_CPPFLAGS = $(AM_CPPFLAGS) -include config-paths.h

# Manual pages: vyre(1) and vyre-COMMAND(1), rendered by the vyre just
# built from the very strings its --help prints (`vyre help --man`), so the
# two cannot disagree; tests/cli/cli_man.test checks one page per command
# and that each page says what --help says.  Built, not distributed.
VYRE_MAN_PAGES = host-stub/cli/vyre.1 host-stub/cli/vyre-list.1 host-stub/cli/vyre-info.1 \
	host-stub/cli/vyre-run.1 host-stub/cli/vyre-asm.1 host-stub/cli/vyre-disasm.1 \
	host-stub/cli/vyre-emit-ptx.1 host-stub/cli/vyre-bench.1 host-stub/cli/vyre-conform.1 \
	host-stub/cli/vyre-fuzz.1 host-stub/cli/vyre-help.1 host-stub/cli/vyre-version.1
nodist_man1_MANS = $(VYRE_MAN_PAGES)
CLEANFILES += $(VYRE_MAN_PAGES)
$(VYRE_MAN_PAGES): host-stub/cli/vyre$(EXEEXT)
	$(AM_V_GEN)page=`basename $@ .1`; command=`echo "$$page" | sed -n 's/^vyre-//p'`; \
	  host-stub/cli/vyre help --man $$command > $@-t && mv -f $@-t $@

# The command line's reference and the schemas of its --json documents.
dist_doc_DATA += docs/cli.md
vyreschemadir = $(docdir)/schemas
dist_vyreschema_DATA = docs/schemas/vyre-list.schema.json docs/schemas/vyre-info.schema.json \
	docs/schemas/vyre-run.schema.json docs/schemas/vyre-conform.schema.json \
	docs/schemas/vyre-fuzz.schema.json docs/schemas/vyre-bench.schema.json \
	docs/schemas/vyre-error.schema.json
