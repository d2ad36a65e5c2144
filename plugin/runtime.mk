# plugin/runtime.mk -- libvyre-cuda.so: the CUDA backend plugin (driver loaded at run time; built only with cuda.h).
if HAVE_CUDA
plugin_LTLIBRARIES += plugin/libvyre-cuda.la
plugin_libvyre_cuda_la_SOURCES = \
	plugin/cuda_internal.h plugin/context.c plugin/pools.c plugin/resident.c \
	plugin/cache.c plugin/dispatch.c plugin/plugin.c
plugin_libvyre_cuda_la_CPPFLAGS = $(AM_CPPFLAGS) $(CUDA_CPPFLAGS) -I$(top_srcdir)/plugin
plugin_libvyre_cuda_la_LDFLAGS = $(AM_LDFLAGS) -module -avoid-version -shared \
	-export-symbols-regex '^vyre_plugin_(descriptor|entry)$$'
# libvyre-codegen.la already carries abi/libvyre-format.la (a convenience
# library inside a convenience library); naming it again defines its
# symbols twice.
plugin_libvyre_cuda_la_LIBADD = plugin/libvyre-codegen.la plugin/libvyre-ptxmath.la -ldl -lpthread
endif
EXTRA_DIST += docs/cuda-runtime.md
