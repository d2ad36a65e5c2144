# abi/local.mk -- the ABI headers and the program-format library (no CUDA), used by every other part.
vyreinclude_HEADERS += abi/vyre/vyre.h abi/vyre/vyre_program.h abi/vyre/vyre_support.h

# A PIC convenience library linked into the host library, each plugin and
# the tests, so plugins import nothing from the host.
noinst_LTLIBRARIES += abi/libvyre-format.la
abi_libvyre_format_la_SOURCES = \
	abi/ops.c abi/error.c abi/sha256.c abi/handles.c abi/floatbits.c \
	abi/program.c abi/geometry.c abi/builder.c
abi_libvyre_format_la_LIBADD = -lpthread
