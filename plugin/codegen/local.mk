# plugin/codegen/local.mk -- IR -> PTX lowering (pure C, no CUDA header): a PIC convenience library.
# Its interface is codegen.h.  It calls ptxmath (plugin/ptxmath) and libvyre
# (abi), which whoever links it links beside it.
noinst_LTLIBRARIES += plugin/codegen/libvyre-codegen.la
plugin_codegen_libvyre_codegen_la_SOURCES = \
	plugin/codegen/codegen.c plugin/codegen/codegen_expr.c plugin/codegen/codegen_mem.c \
	plugin/codegen/codegen_math.c plugin/codegen/codegen_elementwise.c \
	plugin/codegen/codegen_analysis.c
plugin_codegen_libvyre_codegen_la_CPPFLAGS = $(AM_CPPFLAGS) -DCG_WITH_PTXMATH
noinst_HEADERS += plugin/codegen/codegen.h plugin/codegen/codegen_internal.h

# Codegen speed (docs/codegen.md): not a test, a program to run by hand.
noinst_PROGRAMS += bench/codegen_bench
bench_codegen_bench_SOURCES = bench/codegen_bench.c
bench_codegen_bench_LDADD = plugin/codegen/libvyre-codegen.la plugin/ptxmath/libvyre-ptxmath.la abi/libvyre-private.la
dist_doc_DATA += docs/kernel-abi.md docs/codegen.md
