# plugin/runtime.mk -- libvyre-cuda.so: the CUDA backend plugin (driver loaded at run time; built only with cuda.h).
if HAVE_CUDA
plugin_LTLIBRARIES += plugin/libvyre-cuda.la
plugin_libvyre_cuda_la_SOURCES = \
	plugin/cuda_internal.h plugin/context.c plugin/pools.c plugin/resident.c \
	plugin/cache.c plugin/dispatch.c plugin/plugin.c
plugin_libvyre_cuda_la_CPPFLAGS = $(AM_CPPFLAGS) $(CUDA_CPPFLAGS) -I$(top_srcdir)/plugin
plugin_libvyre_cuda_la_LDFLAGS = $(AM_LDFLAGS) -module -avoid-version -shared \
	-export-symbols-regex '^vyre_plugin_(descriptor|entry)$$'
plugin_libvyre_cuda_la_LIBADD = plugin/libvyre-codegen.la abi/libvyre-format.la -ldl -lpthread
endif
