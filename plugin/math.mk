# plugin/math.mk -- the PTX transcendental library (ptxmath): a PIC convenience library the CUDA plugin links.
# It does not contain plugin/strbuf.c: the codegen library (plugin/codegen.mk)
# provides it, and a program linking this library alone adds strbuf.c itself.
noinst_LTLIBRARIES += plugin/libvyre-ptxmath.la
plugin_libvyre_ptxmath_la_SOURCES = \
	plugin/ptxmath.c plugin/ptxmath_algo.c plugin/ptxmath_dsl.c plugin/ptxmath_model.c \
	plugin/ptxmath.h plugin/ptxmath_algo.h plugin/ptxmath_dsl.h plugin/ptxmath_model.h
plugin_libvyre_ptxmath_la_CPPFLAGS = $(AM_CPPFLAGS) -I$(top_srcdir)/plugin
# The C model must perform each f64 operation exactly as written: no
# contraction of a*b+c into an fma that the PTX does not have.
plugin_libvyre_ptxmath_la_CFLAGS = $(AM_CFLAGS) -ffp-contract=off
EXTRA_DIST += docs/ulp.md
