# tests/format.mk -- tests of the ABI headers and the program-format library (abi/).

# The public headers compile alone as strict C11 and C++17: each of these
# sources includes one header first, with only the flags named here (no
# AM_CFLAGS, no _GNU_SOURCE), and the programs call the library.
check_PROGRAMS += tests/abi_headers_c11 tests/abi_headers_cxx
TESTS += tests/abi_headers_c11 tests/abi_headers_cxx
tests_abi_headers_c11_SOURCES = tests/abi_c11_vyre.c tests/abi_c11_program.c tests/abi_c11_support.c
tests_abi_headers_c11_CPPFLAGS = -I$(top_srcdir)/abi
tests_abi_headers_c11_CFLAGS = -std=c11 -Wall -Wextra -pedantic -Werror $(SAN_FLAGS)
tests_abi_headers_c11_LDADD = abi/libvyre-format.la
tests_abi_headers_cxx_SOURCES = tests/abi_cxx_vyre.cc tests/abi_cxx_program.cc tests/abi_cxx.cc
tests_abi_headers_cxx_CPPFLAGS = -I$(top_srcdir)/abi -I$(top_srcdir)/host-stub/include
tests_abi_headers_cxx_CXXFLAGS = -std=c++17 -Wall -Wextra -pedantic -Werror $(SAN_FLAGS)
tests_abi_headers_cxx_LDADD = abi/libvyre-format.la

if HAVE_CHECK
check_PROGRAMS += tests/check_abi tests/check_format
TESTS += tests/check_abi tests/check_format
tests_check_abi_SOURCES = tests/check_abi.c
tests_check_abi_CFLAGS = $(AM_CFLAGS) $(CHECK_CFLAGS)
tests_check_abi_LDADD = abi/libvyre-format.la $(CHECK_LIBS)
tests_check_format_SOURCES = tests/check_format.c tests/check_format.h \
	tests/check_format_reject.c tests/check_format_fuzz.c tests/format_corpus.c tests/format_corpus.h
tests_check_format_CFLAGS = $(AM_CFLAGS) $(CHECK_CFLAGS)
tests_check_format_LDADD = abi/libvyre-format.la $(CHECK_LIBS) -lm
endif

# The text form (host-stub/libvyre-text.la): round trips, literals, errors, fuzzing.
if HAVE_CHECK
check_PROGRAMS += tests/check_text
TESTS += tests/check_text
tests_check_text_SOURCES = tests/check_text.c tests/format_corpus.c tests/format_corpus.h
tests_check_text_CPPFLAGS = $(AM_CPPFLAGS) -DVYRE_TEST_SRCDIR='"$(abs_top_srcdir)"'
tests_check_text_CFLAGS = $(AM_CFLAGS) $(CHECK_CFLAGS)
tests_check_text_LDADD = host-stub/libvyre-text.la abi/libvyre-format.la $(CHECK_LIBS)
endif
