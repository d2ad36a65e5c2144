# plugin/runtime/local.mk -- libvyre-cuda.so: the CUDA backend plugin (driver loaded at run time; built only with cuda.h).
# One file per module, one header per module saying what others may call
# (docs/cuda-runtime.md has the call graph).
if HAVE_CUDA
plugin_LTLIBRARIES += plugin/runtime/libvyre-cuda.la
plugin_runtime_libvyre_cuda_la_SOURCES = \
	plugin/runtime/util.h plugin/runtime/metrics.c plugin/runtime/metrics.h \
	plugin/runtime/caps.c plugin/runtime/caps.h \
	plugin/runtime/driver.c plugin/runtime/driver.h plugin/runtime/context.c plugin/runtime/context.h \
	plugin/runtime/pools.c plugin/runtime/pools.h \
	plugin/runtime/staging.c plugin/runtime/staging.h plugin/runtime/split.c plugin/runtime/split.h plugin/runtime/crew.c plugin/runtime/crew.h plugin/runtime/deferred.c plugin/runtime/deferred.h \
	plugin/runtime/resident.c plugin/runtime/resident.h plugin/runtime/interop.c plugin/runtime/interop.h \
	plugin/runtime/hoststream.c plugin/runtime/hoststream.h plugin/runtime/indirect.c plugin/runtime/indirect.h \
	plugin/runtime/diskcache.c plugin/runtime/diskcache.h plugin/runtime/jit.c plugin/runtime/jit.h \
	plugin/runtime/modcache.c plugin/runtime/modcache.h \
	plugin/runtime/program.c plugin/runtime/program.h plugin/runtime/pipeline.c plugin/runtime/pipeline.h \
	plugin/runtime/launch.c plugin/runtime/launch.h plugin/runtime/graph.c plugin/runtime/graph.h \
	plugin/runtime/dispatch.c plugin/runtime/dispatch.h plugin/runtime/async.c plugin/runtime/async.h \
	plugin/runtime/fuse.c plugin/runtime/fuse.h plugin/runtime/fuser.c plugin/runtime/fuser.h \
	plugin/runtime/fill.c plugin/runtime/fill.h \
	plugin/runtime/sequence.c plugin/runtime/sequence.h \
	plugin/runtime/backend.c plugin/runtime/backend.h plugin/runtime/plugin.c
plugin_runtime_libvyre_cuda_la_CPPFLAGS = $(AM_CPPFLAGS) $(CUDA_CPPFLAGS)
# A dlopen'd module exporting only the descriptor and the entry.
plugin_runtime_libvyre_cuda_la_LDFLAGS = $(AM_LDFLAGS) -module -avoid-version -shared \
	-export-symbols-regex '^vyre_plugin_(descriptor|entry)$$'
plugin_runtime_libvyre_cuda_la_LIBADD = plugin/codegen/libvyre-codegen.la \
	plugin/ptxmath/libvyre-ptxmath.la abi/libvyre-private.la -ldl -lpthread
endif
# Installed whether or not the plugin is built: the installed documents cite it.
dist_doc_DATA += docs/cuda-runtime.md
