# host-stub/loader/local.mk -- libvyre-host: plugin discovery, ABI negotiation, selection.

# The plugins a build tree makes, relative to its top: searched when the
# host runs from the build tree (docs/host.md).  Add new plugins here.
VYRE_BUILD_PLUGINS = host-stub/ref/.libs/libvyre-ref.so:plugin/runtime/.libs/libvyre-cuda.so

# The checking instance (guard*.c), also built into tests/loader's skew hosts.
HOST_GUARD_SOURCES = host-stub/loader/guard.c host-stub/loader/guard_expect.c \
	host-stub/loader/guard_args.c host-stub/loader/guard_handles.c
# The validation layer the checking instance calls (validate*.c), likewise.
HOST_VALIDATE_SOURCES = host-stub/loader/validate.c host-stub/loader/validate_check.c \
	host-stub/loader/validate_async.c

lib_LTLIBRARIES += host-stub/loader/libvyre-host.la
vyreinclude_HEADERS += host-stub/loader/include/vyre/vyre_host.h
host_stub_loader_libvyre_host_la_SOURCES = host-stub/loader/host.c host-stub/loader/discover.c host-stub/loader/loader.c \
	host-stub/loader/child.c \
	$(HOST_GUARD_SOURCES) host-stub/loader/guard.h \
	host-stub/loader/elfcheck.c host-stub/loader/elfvers.c host-stub/loader/api.c \
	host-stub/loader/select.c host-stub/loader/elfcheck.h host-stub/loader/internal.h \
	$(HOST_VALIDATE_SOURCES) host-stub/loader/validate.h
host_stub_loader_libvyre_host_la_CPPFLAGS = $(AM_CPPFLAGS) \
	-include config-paths.h -DVYRE_BUILD_PLUGINS='"$(VYRE_BUILD_PLUGINS)"'
# libvyre's API from the installed shared libvyre (a dependency, not a
# copy); the support layer (environment, log, sized structs) as a private
# static copy.
host_stub_loader_libvyre_host_la_LIBADD = abi/libvyre.la abi/libvyre-support.la
# Exactly the vyre_host_* API is exported, versioned by libvyre-host.map.
# -shared: no static libvyre-host (a host program dlopens plugins anyway,
# and the archive would carry a second support layer).  -version-number
# 1:0:0 (libvyre-host.so.1): the soname's major is the plugin ABI's major,
# as for libvyre (abi/local.mk; docs/abi.md, "Library versions and sonames").
host_stub_loader_libvyre_host_la_LDFLAGS = $(AM_LDFLAGS) -shared -no-undefined -version-number 1:0:0
if HAVE_LD_VERSION_SCRIPT
host_stub_loader_libvyre_host_la_LDFLAGS += -Wl,--version-script=$(top_srcdir)/host-stub/loader/libvyre-host.map
else
host_stub_loader_libvyre_host_la_LDFLAGS += -export-symbols-regex '^vyre_host_'
endif
EXTRA_host_stub_loader_libvyre_host_la_DEPENDENCIES = host-stub/loader/libvyre-host.map
EXTRA_DIST += host-stub/loader/libvyre-host.map
dist_doc_DATA += docs/host.md

# vyre-probe: the child that loads a plugin file met for the first time
# (child.c runs it; docs/host.md, "Judging a new plugin in a child").  It
# links no vyre library (only the headers and -ldl), so the build tree's
# copy is the program itself, found next to the library like the
# build-tree plugins.
pkglibexec_PROGRAMS = host-stub/loader/vyre-probe
host_stub_loader_vyre_probe_SOURCES = host-stub/loader/probe.c
host_stub_loader_vyre_probe_LDADD = -ldl
