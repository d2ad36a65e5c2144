# abi/local.mk -- the contract (public headers) and libvyre, the program library both sides use (no CUDA).
vyreinclude_HEADERS += abi/vyre/vyre.h abi/vyre/vyre_program.h abi/vyre/vyre_support.h abi/vyre/vyre_text.h \
	abi/vyre/vyre_cuda.h

# libvyre: codec, validator, builder, geometry, op/type tables (format/)
# and the text form (text/), on the internal support layer (support/:
# configuration, log, growable buffer, sized structs, byte counts, clock,
# JSON writer, files, ELF reading; vyre__*).
# One set of sources, four builds (docs/architecture.md, "libvyre"):
#   abi/libvyre.la          installed, shared: exports exactly the API of
#                           vyre.h, vyre_program.h, vyre_support.h and
#                           vyre_text.h, versioned by abi/libvyre.map;
#   abi/libvyre.a           installed, static: PIC with hidden visibility,
#                           so that a plugin links a private copy and
#                           exports none of it (examples/plugin-template);
#   abi/libvyre-private.la  a PIC convenience library, the private static
#                           copy of everything for the plugins and the
#                           unit tests (internals included);
#   abi/libvyre-support.la  the support layer alone, a PIC convenience
#                           library for those that link the shared libvyre
#                           and also use the internals (libvyre-host, the
#                           CLI, the tests that link libvyre-host).
# libvyre-private and libvyre-support share their support objects; no
# convenience library contains another.
VYRE_FORMAT_SOURCES = \
	abi/format/ops.c abi/format/error.c abi/format/sha256.c abi/format/handles.c abi/format/operands.c \
	abi/format/floatbits.c abi/format/decode.c abi/format/validate.c abi/format/uniformity.c \
	abi/format/mma.c abi/format/program.c abi/format/internal.h abi/format/geometry.c abi/format/builder.c \
	abi/format/version.c abi/format/check.c abi/format/chain.c abi/format/chain.h abi/format/budget.c \
	abi/format/budget.h abi/format/indirect.c abi/format/indirect.h abi/format/needs.c abi/format/f32.c \
	abi/text/literal.c abi/text/literal.h abi/text/lex.c abi/text/operands.c \
	abi/text/directives.c abi/text/mma.c abi/text/insts.c abi/text/asm.c abi/text/internal.h abi/text/text.c
VYRE_SUPPORT_SOURCES = \
	abi/support/strbuf.c abi/support/strbuf.h abi/support/log.c abi/support/log.h \
	abi/support/config.c abi/support/config.h abi/support/sized.c abi/support/sized.h \
	abi/support/prng.h abi/support/bits.h \
	abi/support/bytes.c abi/support/bytes.h abi/support/errfill.c abi/support/errfill.h \
	abi/support/clock.c abi/support/clock.h abi/support/json.c abi/support/json.h \
	abi/support/file.c abi/support/file.h abi/support/elf.c abi/support/elf.h \
	abi/support/callcheck.c abi/support/callcheck.h abi/support/safetext.c abi/support/safetext.h \
	abi/support/uuid.c abi/support/uuid.h

noinst_LTLIBRARIES += abi/libvyre-private.la abi/libvyre-support.la
abi_libvyre_private_la_SOURCES = $(VYRE_FORMAT_SOURCES) $(VYRE_SUPPORT_SOURCES)
abi_libvyre_private_la_LIBADD = -lpthread -lm
abi_libvyre_support_la_SOURCES = $(VYRE_SUPPORT_SOURCES)
abi_libvyre_support_la_LIBADD = -lpthread

# The shared library.  Its own objects keep default visibility (AM_CFLAGS
# without -fvisibility=hidden): the version script, not the compiler,
# decides what is exported, and the support layer it links stays hidden.
# -version-number 1:0:0 (libvyre.so.1, file libvyre.so.1.0.0): the soname's
# major is the plugin ABI's major (VYRE_ABI_MAJOR); the minor counts the
# releases that added a map node since libvyre.so.1 was first released
# (1.0.0, whose nodes are VYRE_1.0 up to the newest in abi/libvyre.map);
# the revision counts releases that changed no interface.  A release that
# removes or changes a function or a struct's layout is ABI major 2 and
# libvyre.so.2.  Policy: docs/abi.md, "Library versions and sonames";
# checked by tests/soname.test.
lib_LTLIBRARIES += abi/libvyre.la
abi_libvyre_la_SOURCES = $(VYRE_FORMAT_SOURCES)
abi_libvyre_la_CFLAGS = $(VYRE_CFLAGS) $(SAN_FLAGS)
abi_libvyre_la_LIBADD = abi/libvyre-support.la -lpthread -lm
# -shared: libtool never makes a second libvyre.a (abi/libvyre.a below is it).
abi_libvyre_la_LDFLAGS = $(AM_LDFLAGS) -shared -no-undefined -version-number 1:0:0
if HAVE_LD_VERSION_SCRIPT
abi_libvyre_la_LDFLAGS += -Wl,--version-script=$(top_srcdir)/abi/libvyre.map
else
abi_libvyre_la_LDFLAGS += -export-symbols-regex '^vyre_[a-z]'
endif
EXTRA_abi_libvyre_la_DEPENDENCIES = abi/libvyre.map

# The static library, built by automake rather than libtool so that the
# rest of the tree keeps LT_INIT([disable-static]) (one compile per object).
lib_LIBRARIES += abi/libvyre.a
abi_libvyre_a_SOURCES = $(VYRE_FORMAT_SOURCES) $(VYRE_SUPPORT_SOURCES)
abi_libvyre_a_CFLAGS = $(AM_CFLAGS) -fPIC

EXTRA_DIST += abi/libvyre.map
dist_doc_DATA += docs/abi.md docs/program-format.md docs/program-text.md docs/semantics.md

# Building a plugin outside the tree (docs/abi.md, section 14):
# vyre-plugin.pc gives the headers, -fvisibility=hidden, libvyre.a by its
# path and the version script share/vyre/vyre-plugin.map, which exports
# vyre_plugin_descriptor and vyre_plugin_entry only.  Written by make, not
# configure: its paths are found from the .pc file's own directory, and
# the relative path from pkgconfigdir to pkgdatadir is known only once
# both are expanded.  A prefix that changes rewrites it (it depends on
# Makefile).
dist_pkgdata_DATA = abi/vyre-plugin.map
nodist_pkgconfig_DATA += abi/vyre-plugin.pc
CLEANFILES += abi/vyre-plugin.pc
EXTRA_DIST += abi/vyre-plugin.pc.in
abi/vyre-plugin.pc: $(srcdir)/abi/vyre-plugin.pc.in Makefile
	$(AM_V_GEN)$(MKDIR_P) abi && \
	from='$(pkgconfigdir)'; to='$(pkgdatadir)'; \
	case $$from in /*) ;; *) from=; ;; esac; case $$to in /*) ;; *) from=; ;; esac; \
	test -n "$$from" || { echo "abi/vyre-plugin.pc: pkgconfigdir '$(pkgconfigdir)' or pkgdatadir '$(pkgdatadir)' is not absolute. Fix: configure --prefix=/ABSOLUTE/PATH" >&2; exit 1; }; \
	common=$$from; up=; \
	while :; do case $$to/ in "$$common"/*) break ;; esac; common=$${common%/*}; up=../$$up; done; \
	rest=$${to#"$$common"}; rest=$${rest#/}; rel=$$up$$rest; \
	sed -e 's|@[p]refix@|$(prefix)|g' -e 's|@[e]xec_prefix@|$(exec_prefix)|g' \
	  -e 's|@[l]ibdir@|$(libdir)|g' -e 's|@[i]ncludedir@|$(includedir)|g' \
	  -e "s|@[p]c_to_pkgdatadir@|$$rel|g" -e 's|@[P]ACKAGE_VERSION@|$(PACKAGE_VERSION)|g' \
	  -e 's|@[V]YRE_PTHREAD_LIBS@|$(VYRE_PTHREAD_LIBS)|g' $(srcdir)/abi/vyre-plugin.pc.in >$@.tmp && \
	mv -f $@.tmp $@
