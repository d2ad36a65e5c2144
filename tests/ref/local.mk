# tests/ref/local.mk -- check_ref: the reference backend through its plugin interface (dlopen of the built libvyre-ref.so, which `make check` builds first as part of `all`).
if HAVE_CHECK
check_PROGRAMS += tests/ref/check_ref
TESTS += tests/ref/check_ref
tests_ref_check_ref_SOURCES = tests/ref/check_ref.c tests/ref/check_ref_ops.c tests/ref/check_ref_api.c \
	tests/ref/check_ref_limits.c tests/ref/check_ref_mma.c tests/ref/check_ref_indirect.c \
	tests/ref/check_ref.h
tests_ref_check_ref_CFLAGS = $(AM_CFLAGS) $(CHECK_CFLAGS)
tests_ref_check_ref_LDADD = abi/libvyre-private.la $(CHECK_LIBS) -ldl -lpthread -lm
endif
