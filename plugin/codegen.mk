# plugin/codegen.mk -- IR -> PTX lowering (pure C, no CUDA headers), a PIC convenience library the runtime links.
noinst_LTLIBRARIES += plugin/libvyre-codegen.la
plugin_libvyre_codegen_la_SOURCES = \
	plugin/codegen.c plugin/codegen_expr.c plugin/codegen_mem.c plugin/codegen_math.c \
	plugin/codegen_elementwise.c plugin/strbuf.c
plugin_libvyre_codegen_la_CPPFLAGS = $(AM_CPPFLAGS) -I$(top_srcdir)/plugin -DCG_WITH_PTXMATH
# Carries the objects of abi/libvyre-format.la (do not name that one again).
# It calls plugin/libvyre-ptxmath.la, which every program or plugin linking
# this library links beside it.
plugin_libvyre_codegen_la_LIBADD = abi/libvyre-format.la
noinst_HEADERS += plugin/codegen.h plugin/codegen_internal.h plugin/strbuf.h

# Codegen speed (docs/codegen.md): not a test, a program to run by hand.
noinst_PROGRAMS += bench/codegen_bench
bench_codegen_bench_SOURCES = bench/codegen_bench.c
bench_codegen_bench_CPPFLAGS = $(AM_CPPFLAGS) -I$(top_srcdir)/plugin
bench_codegen_bench_LDADD = plugin/libvyre-codegen.la plugin/libvyre-ptxmath.la
EXTRA_DIST += docs/kernel-abi.md docs/codegen.md
