# host-stub/loader/local.mk -- libvyre-host: plugin discovery, ABI negotiation, selection.

# The plugins a build tree makes, relative to its top: searched when the
# host runs from the build tree (docs/host.md).  Add new plugins here.
VYRE_BUILD_PLUGINS = host-stub/ref/.libs/libvyre-ref.so:plugin/runtime/.libs/libvyre-cuda.so

lib_LTLIBRARIES += host-stub/loader/libvyre-host.la
vyreinclude_HEADERS += host-stub/loader/include/vyre/vyre_host.h
host_stub_loader_libvyre_host_la_SOURCES = host-stub/loader/host.c host-stub/loader/loader.c \
	host-stub/loader/host_internal.h
host_stub_loader_libvyre_host_la_CPPFLAGS = $(AM_CPPFLAGS) \
	-DVYRE_PLUGINDIR='"$(plugindir)"' -DVYRE_BUILD_PLUGINS='"$(VYRE_BUILD_PLUGINS)"'
host_stub_loader_libvyre_host_la_LIBADD = abi/libvyre.la
# Only the vyre_host_* API is exported; libvyre stays private.
host_stub_loader_libvyre_host_la_LDFLAGS = $(AM_LDFLAGS) -no-undefined -version-info 0:0:0 \
	-export-symbols-regex '^vyre_host_'
EXTRA_DIST += docs/host.md
