# plugin/ptxmath/local.mk -- the PTX transcendental library and its C model: a PIC convenience library.
# Its interface is ptxmath.h (and ptxmath_model.h for the C model); it uses
# libvyre's growable buffer, which whoever links it links beside it.
noinst_LTLIBRARIES += plugin/ptxmath/libvyre-ptxmath.la
plugin_ptxmath_libvyre_ptxmath_la_SOURCES = \
	plugin/ptxmath/ptxmath.c plugin/ptxmath/model.c plugin/ptxmath/algo.c plugin/ptxmath/dsl.c \
	plugin/ptxmath/crtable.c
noinst_HEADERS += plugin/ptxmath/ptxmath.h plugin/ptxmath/ptxmath_model.h \
	plugin/ptxmath/algo.h plugin/ptxmath/dsl.h plugin/ptxmath/crtable.h \
	plugin/ptxmath/model_names.h
# The C model must perform each f64 operation exactly as written: no
# contraction of a*b+c into an fma that the PTX does not have.
plugin_ptxmath_libvyre_ptxmath_la_CFLAGS = $(AM_CFLAGS) -ffp-contract=off
dist_doc_DATA += docs/ulp.md
