# abi/local.mk -- the contract (public headers) and libvyre, the program library both sides use (no CUDA).
vyreinclude_HEADERS += abi/vyre/vyre.h abi/vyre/vyre_program.h abi/vyre/vyre_support.h abi/vyre/vyre_text.h \
	abi/vyre/vyre_cuda.h

# libvyre: codec, validator, builder, geometry, op/type tables (format/),
# the text form (text/) and the internal support layer (support/: log,
# growable buffer, PRNG, configuration).  A PIC convenience library: each
# plugin, the host library, the CLI and the tests link it exactly once, so
# plugins import nothing from the host.  It contains no other library.
noinst_LTLIBRARIES += abi/libvyre.la
abi_libvyre_la_SOURCES = \
	abi/format/ops.c abi/format/error.c abi/format/sha256.c abi/format/handles.c \
	abi/format/floatbits.c abi/format/program.c abi/format/geometry.c abi/format/builder.c \
	abi/format/version.c \
	abi/text/text.c abi/text/text_asm.c abi/text/text_internal.h \
	abi/support/strbuf.c abi/support/strbuf.h abi/support/log.c abi/support/log.h \
	abi/support/config.c abi/support/config.h abi/support/sized.c abi/support/sized.h \
	abi/support/prng.h abi/support/bits.h
abi_libvyre_la_LIBADD = -lpthread
EXTRA_DIST += docs/program-format.md docs/program-text.md docs/semantics.md
