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
	abi/format/budget.h abi/format/indirect.c abi/format/indirect.h \
	abi/text/literal.c abi/text/literal.h abi/text/lex.c abi/text/operands.c \
	abi/text/directives.c abi/text/mma.c abi/text/insts.c abi/text/asm.c abi/text/internal.h abi/text/text.c
VYRE_SUPPORT_SOURCES = \
	abi/support/strbuf.c abi/support/strbuf.h abi/support/log.c abi/support/log.h \
	abi/support/config.c abi/support/config.h abi/support/sized.c abi/support/sized.h \
	abi/support/prng.h abi/support/bits.h \
	abi/support/bytes.c abi/support/bytes.h abi/support/errfill.c abi/support/errfill.h \
	abi/support/clock.c abi/support/clock.h abi/support/json.c abi/support/json.h \
	abi/support/file.c abi/support/file.h abi/support/elf.c abi/support/elf.h \
	abi/support/callcheck.c abi/support/callcheck.h

noinst_LTLIBRARIES += abi/libvyre-private.la abi/libvyre-support.la
abi_libvyre_private_la_SOURCES = $(VYRE_FORMAT_SOURCES) $(VYRE_SUPPORT_SOURCES)
abi_libvyre_private_la_LIBADD = -lpthread
abi_libvyre_support_la_SOURCES = $(VYRE_SUPPORT_SOURCES)
abi_libvyre_support_la_LIBADD = -lpthread

# The shared library.  Its own objects keep default visibility (AM_CFLAGS
# without -fvisibility=hidden): the version script, not the compiler,
# decides what is exported, and the support layer it links stays hidden.
# -version-info 2:0:2 (libvyre.so.0): the interface VYRE_1.0, VYRE_1.1
# (the argument checks) and VYRE_1.1.1 (the MMA ops' tables and builder
# calls), each of which only added functions, so current and age moved
# together.  A release that only adds functions puts them in a new
# map node and bumps current and age; one that removes or changes any
# bumps current and sets age to 0 (a new SONAME).  Docs:
# docs/architecture.md.
lib_LTLIBRARIES += abi/libvyre.la
abi_libvyre_la_SOURCES = $(VYRE_FORMAT_SOURCES)
abi_libvyre_la_CFLAGS = $(VYRE_CFLAGS) $(SAN_FLAGS)
abi_libvyre_la_LIBADD = abi/libvyre-support.la -lpthread
# -shared: libtool never makes a second libvyre.a (abi/libvyre.a below is it).
abi_libvyre_la_LDFLAGS = $(AM_LDFLAGS) -shared -no-undefined -version-info 2:0:2
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
