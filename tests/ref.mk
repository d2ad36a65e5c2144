# tests/ref.mk -- check_ref: the reference backend through its plugin interface (dlopen of the built libvyre-ref.so, which `make check` builds first as part of `all`).
if HAVE_CHECK
check_PROGRAMS += tests/check_ref
TESTS += tests/check_ref
tests_check_ref_SOURCES = tests/check_ref.c tests/check_ref_ops.c tests/check_ref_api.c \
	tests/check_ref.h
tests_check_ref_CFLAGS = $(AM_CFLAGS) $(CHECK_CFLAGS)
tests_check_ref_LDADD = abi/libvyre-format.la $(CHECK_LIBS) -ldl -lpthread -lm
endif
