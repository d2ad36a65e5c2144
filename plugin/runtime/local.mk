# plugin/runtime/local.mk -- libvyre-cuda.so: the CUDA backend plugin (driver loaded at run time; built only with cuda.h).
if HAVE_CUDA
plugin_LTLIBRARIES += plugin/runtime/libvyre-cuda.la
plugin_runtime_libvyre_cuda_la_SOURCES = \
	plugin/runtime/cuda_internal.h plugin/runtime/context.c plugin/runtime/pools.c \
	plugin/runtime/resident.c plugin/runtime/cache.c plugin/runtime/dispatch.c plugin/runtime/plugin.c
plugin_runtime_libvyre_cuda_la_CPPFLAGS = $(AM_CPPFLAGS) $(CUDA_CPPFLAGS)
# A dlopen'd module exporting only the descriptor and the entry.
plugin_runtime_libvyre_cuda_la_LDFLAGS = $(AM_LDFLAGS) -module -avoid-version -shared \
	-export-symbols-regex '^vyre_plugin_(descriptor|entry)$$'
plugin_runtime_libvyre_cuda_la_LIBADD = plugin/codegen/libvyre-codegen.la \
	plugin/ptxmath/libvyre-ptxmath.la abi/libvyre.la -ldl -lpthread
endif
EXTRA_DIST += docs/cuda-runtime.md
