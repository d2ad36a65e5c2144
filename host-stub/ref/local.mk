# host-stub/ref/local.mk -- libvyre-ref.so: the reference CPU backend plugin, the conformance oracle.
plugin_LTLIBRARIES += host-stub/ref/libvyre-ref.la
host_stub_ref_libvyre_ref_la_SOURCES = \
	host-stub/ref/ref.h \
	host-stub/ref/plugin.c \
	host-stub/ref/backend.c \
	host-stub/ref/resident.c \
	host-stub/ref/dispatch.c \
	host-stub/ref/indirect.c \
	host-stub/ref/async.c \
	host-stub/ref/interp.c \
	host-stub/ref/scalar.c \
	host-stub/ref/mma.c \
	host-stub/ref/tolerance.c \
	host-stub/ref/tolerance.h \
	host-stub/ref/util.c
# f32 results round once per op: nothing may be contracted into an fma.
# Buffers are reinterpreted between element types: no strict aliasing.
host_stub_ref_libvyre_ref_la_CFLAGS = $(AM_CFLAGS) -ffp-contract=off -fno-strict-aliasing
# A dlopen'd module exporting only the descriptor and the entry.
host_stub_ref_libvyre_ref_la_LDFLAGS = $(AM_LDFLAGS) -module -avoid-version -shared \
	-export-symbols-regex '^vyre_plugin_(descriptor|entry)$$'
# The transcendentals are ptxmath's C model (scalar.c): its convenience
# library and the libvyre buffer it leans on are linked in.
host_stub_ref_libvyre_ref_la_LIBADD = plugin/ptxmath/libvyre-ptxmath.la abi/libvyre-private.la -lm \
	-lpthread
# Installed with the documents that cite it (docs/abi.md, docs/python.md).
dist_doc_DATA += docs/reference-backend.md
