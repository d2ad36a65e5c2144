# host-stub/host.mk -- libvyre-host (plugin discovery, ABI negotiation, selection) and the `vyre` CLI.

# The plugins a build tree makes, relative to its top: searched when the
# host runs from the build tree (docs/host.md).  Add new plugins here.
VYRE_BUILD_PLUGINS = host-stub/.libs/libvyre-ref.so:plugin/.libs/libvyre-cuda.so

lib_LTLIBRARIES += host-stub/libvyre-host.la
vyreinclude_HEADERS += host-stub/vyre/vyre_host.h
noinst_HEADERS += host-stub/host_internal.h
host_stub_libvyre_host_la_SOURCES = host-stub/host.c host-stub/loader.c
host_stub_libvyre_host_la_CPPFLAGS = $(AM_CPPFLAGS) \
	-DVYRE_PLUGINDIR='"$(plugindir)"' -DVYRE_BUILD_PLUGINS='"$(VYRE_BUILD_PLUGINS)"'
host_stub_libvyre_host_la_LIBADD = abi/libvyre-format.la
# Only the vyre_host_* API is exported; the format library stays private.
host_stub_libvyre_host_la_LDFLAGS = $(AM_LDFLAGS) -no-undefined -version-info 0:0:0 \
	-export-symbols-regex '^vyre_host_'

EXTRA_DIST += docs/host.md
