# plugin/codegen/local.mk -- IR -> PTX lowering (pure C, no CUDA header): a PIC convenience library.
# Its interface is codegen.h.  It calls ptxmath (plugin/ptxmath) and libvyre
# (abi), which whoever links it links beside it.
noinst_LTLIBRARIES += plugin/codegen/libvyre-codegen.la
plugin_codegen_libvyre_codegen_la_SOURCES = \
	plugin/codegen/codegen.c plugin/codegen/elementwise.c plugin/codegen/lower.c \
	plugin/codegen/expr.c plugin/codegen/math.c plugin/codegen/mem.c plugin/codegen/emit.c \
	plugin/codegen/analysis.c plugin/codegen/mma.c plugin/codegen/async.c
plugin_codegen_libvyre_codegen_la_CPPFLAGS = $(AM_CPPFLAGS) -DCG_WITH_PTXMATH

# cg_source_id (codegen.h), defined in source_id.c: a checksum of every
# source that shapes the PTX, made by the build and part of every plan and
# disk cache key, so an edited code generator never reuses a cubin of the
# old one, CG_VERSION bumped or not.  cksum is POSIX; the file is made in
# the build tree.
CG_SOURCE_ID_INPUTS = $(plugin_codegen_libvyre_codegen_la_SOURCES) \
	plugin/codegen/codegen.h plugin/codegen/internal.h \
	$(plugin_ptxmath_libvyre_ptxmath_la_SOURCES) plugin/ptxmath/ptxmath.h \
	plugin/ptxmath/algo.h plugin/ptxmath/dsl.h
nodist_plugin_codegen_libvyre_codegen_la_SOURCES = plugin/codegen/source_id.c
CLEANFILES += plugin/codegen/source_id.c
plugin/codegen/source_id.c: $(CG_SOURCE_ID_INPUTS)
	$(AM_V_GEN)$(MKDIR_P) plugin/codegen && \
	sum=`(cd $(srcdir) && cat $(CG_SOURCE_ID_INPUTS)) | cksum | sed 's/[^0-9][^0-9]*/-/g; s/-$$//'` && \
	{ echo '/* source_id.c -- made by plugin/codegen/local.mk: cksum of the code generator'"'"'s sources. */'; \
	  echo '#include "plugin/codegen/codegen.h"'; \
	  echo "const char cg_source_id[] = \"$$sum\";"; } >$@.tmp && mv $@.tmp $@
noinst_HEADERS += plugin/codegen/codegen.h plugin/codegen/internal.h

dist_doc_DATA += docs/kernel-abi.md docs/codegen.md
