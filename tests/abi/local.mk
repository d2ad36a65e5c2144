# tests/abi/local.mk -- tests of the public headers and libvyre (format, validator, builder, text form).

# The public headers compile alone as strict C99, C11, C++11 and C++17 (the
# languages vyre.h says they need): each of these sources includes one
# header first, with only the flags named here (no AM_CFLAGS, no
# _GNU_SOURCE), and the programs call the installed shared libvyre as any
# client would.  The C++14-and-later programs also compile and run
# docs/abi.md's C++ registration form (abi_cxx_plugin.cc), which
# headers.test keeps equal to the document.  The other suites link the
# private copy (abi/libvyre-private.la), internals included.
abi_headers_c_sources = tests/abi/abi_c11_vyre.c tests/abi/abi_c11_program.c \
	tests/abi/abi_c11_support.c tests/abi/abi_c_host.c
abi_headers_cxx_sources = tests/abi/abi_cxx_vyre.cc tests/abi/abi_cxx_program.cc \
	tests/abi/abi_cxx_host.cc tests/abi/abi_cxx.cc
abi_headers_cppflags = -I$(top_srcdir)/abi -I$(top_srcdir)/host-stub/loader/include
abi_headers_warnings = -Wall -Wextra -pedantic -Werror $(SAN_FLAGS)
check_PROGRAMS += tests/abi/abi_headers_c11 tests/abi/abi_headers_cxx \
	tests/abi/abi_headers_c99 tests/abi/abi_headers_cxx11
TESTS += tests/abi/abi_headers_c11 tests/abi/abi_headers_cxx \
	tests/abi/abi_headers_c99 tests/abi/abi_headers_cxx11 tests/abi/headers.test
EXTRA_DIST += tests/abi/headers.test
tests_abi_abi_headers_c11_SOURCES = $(abi_headers_c_sources)
tests_abi_abi_headers_c11_CPPFLAGS = $(abi_headers_cppflags)
tests_abi_abi_headers_c11_CFLAGS = -std=c11 $(abi_headers_warnings)
tests_abi_abi_headers_c11_LDADD = abi/libvyre.la
tests_abi_abi_headers_c99_SOURCES = $(abi_headers_c_sources)
tests_abi_abi_headers_c99_CPPFLAGS = $(abi_headers_cppflags)
tests_abi_abi_headers_c99_CFLAGS = -std=c99 $(abi_headers_warnings)
tests_abi_abi_headers_c99_LDADD = abi/libvyre.la
tests_abi_abi_headers_cxx_SOURCES = $(abi_headers_cxx_sources) tests/abi/abi_cxx_plugin.cc
tests_abi_abi_headers_cxx_CPPFLAGS = $(abi_headers_cppflags)
tests_abi_abi_headers_cxx_CXXFLAGS = -std=c++17 $(abi_headers_warnings)
tests_abi_abi_headers_cxx_LDADD = abi/libvyre.la
tests_abi_abi_headers_cxx11_SOURCES = $(abi_headers_cxx_sources)
tests_abi_abi_headers_cxx11_CPPFLAGS = $(abi_headers_cppflags)
tests_abi_abi_headers_cxx11_CXXFLAGS = -std=c++11 $(abi_headers_warnings)
tests_abi_abi_headers_cxx11_LDADD = abi/libvyre.la

if HAVE_CHECK
check_PROGRAMS += tests/abi/check_abi tests/abi/check_format tests/abi/check_text tests/abi/check_support \
	tests/abi/check_util tests/abi/check_elf tests/abi/check_argcheck
TESTS += tests/abi/check_abi tests/abi/check_format tests/abi/check_text tests/abi/check_support \
	tests/abi/check_util tests/abi/check_elf tests/abi/check_argcheck
check_PROGRAMS += tests/abi/check_chain tests/abi/check_literal tests/abi/check_needs tests/abi/check_open
TESTS += tests/abi/check_chain tests/abi/check_literal tests/abi/check_needs tests/abi/check_open
tests_abi_check_abi_SOURCES = tests/abi/check_abi.c
tests_abi_check_abi_CFLAGS = $(AM_CFLAGS) $(CHECK_CFLAGS)
tests_abi_check_abi_LDADD = abi/libvyre-private.la $(CHECK_LIBS)
tests_abi_check_format_SOURCES = tests/abi/check_format.c tests/abi/check_format.h \
	tests/abi/check_format_reject.c tests/abi/check_format_fuzz.c \
	tests/abi/format_corpus.c tests/abi/format_corpus.h
tests_abi_check_format_CFLAGS = $(AM_CFLAGS) $(CHECK_CFLAGS)
tests_abi_check_format_LDADD = host-stub/fuzz/libvyre-progen.la abi/libvyre-private.la $(CHECK_LIBS) -lm
# The text form: round trips, literals, errors, fuzzing.
tests_abi_check_text_SOURCES = tests/abi/check_text.c tests/abi/format_corpus.c tests/abi/format_corpus.h
tests_abi_check_text_CPPFLAGS = $(AM_CPPFLAGS) -DVYRE_TEST_SRCDIR='"$(abs_top_srcdir)"'
tests_abi_check_text_CFLAGS = $(AM_CFLAGS) $(CHECK_CFLAGS)
tests_abi_check_text_LDADD = host-stub/fuzz/libvyre-progen.la abi/libvyre-private.la $(CHECK_LIBS)
# The support layer: environment, sized structs, the growable buffer.
tests_abi_check_support_SOURCES = tests/abi/check_support.c
tests_abi_check_support_CFLAGS = $(AM_CFLAGS) $(CHECK_CFLAGS)
tests_abi_check_support_LDADD = abi/libvyre-private.la $(CHECK_LIBS)
# The text form's literals: the one literal grammar, the float formatter.
tests_abi_check_literal_SOURCES = tests/abi/check_literal.c
tests_abi_check_literal_CFLAGS = $(AM_CFLAGS) $(CHECK_CFLAGS)
tests_abi_check_literal_LDADD = abi/libvyre-private.la $(CHECK_LIBS)
# The extension-chain walker and the vyre_limits reader.
tests_abi_check_chain_SOURCES = tests/abi/check_chain.c
tests_abi_check_chain_CFLAGS = $(AM_CFLAGS) $(CHECK_CFLAGS)
tests_abi_check_chain_LDADD = abi/libvyre-private.la $(CHECK_LIBS)
# The host-side utility layer: JSON writer, files, clock.
tests_abi_check_util_SOURCES = tests/abi/check_util.c
tests_abi_check_util_CFLAGS = $(AM_CFLAGS) $(CHECK_CFLAGS)
tests_abi_check_util_LDADD = abi/libvyre-private.la $(CHECK_LIBS)
# The one checked open: regular files only, the library check, the directory walk.
tests_abi_check_open_SOURCES = tests/abi/check_open.c
tests_abi_check_open_CFLAGS = $(AM_CFLAGS) $(CHECK_CFLAGS)
tests_abi_check_open_LDADD = abi/libvyre-private.la $(CHECK_LIBS) -ldl
# The ELF reader on crafted, truncated and corrupted files.
tests_abi_check_elf_SOURCES = tests/abi/check_elf.c
tests_abi_check_elf_CFLAGS = $(AM_CFLAGS) $(CHECK_CFLAGS)
tests_abi_check_elf_LDADD = abi/libvyre-private.la $(CHECK_LIBS)
# The public argument checks of vyre_support.h, through the shared libvyre.
tests_abi_check_argcheck_SOURCES = tests/abi/check_argcheck.c
tests_abi_check_argcheck_CFLAGS = $(AM_CFLAGS) $(CHECK_CFLAGS)
tests_abi_check_argcheck_LDADD = abi/libvyre.la $(CHECK_LIBS)
# What a program needs and what an offer lacks (vyre_support.h), through the shared libvyre.
tests_abi_check_needs_SOURCES = tests/abi/check_needs.c
tests_abi_check_needs_CFLAGS = $(AM_CFLAGS) $(CHECK_CFLAGS)
tests_abi_check_needs_LDADD = abi/libvyre.la $(CHECK_LIBS)
endif
# libvyre's exported f32 arithmetic (vyre_f32_*), through the shared
# libvyre as a third-party backend calls it: the corpus's underflow cases
# (read from tests/conformance/ops.f32) bit for bit.
if HAVE_CHECK
check_PROGRAMS += tests/abi/check_f32
TESTS += tests/abi/check_f32
tests_abi_check_f32_SOURCES = tests/abi/check_f32.c
tests_abi_check_f32_CPPFLAGS = $(AM_CPPFLAGS) -DVYRE_TEST_SRCDIR='"$(abs_top_srcdir)"'
tests_abi_check_f32_CFLAGS = $(AM_CFLAGS) $(CHECK_CFLAGS)
tests_abi_check_f32_LDADD = abi/libvyre.la $(CHECK_LIBS) -lm
endif
