# tests/host.mk -- libvyre-host tests: stub plugins for every failure, the loader suite, the CLI scripts.

# Stub plugins (like the OpenCL ICD loader's driver_stub): one source,
# one -D set per variant.  -rpath makes libtool build a shared module
# that is never installed.
STUB_LDFLAGS = -module -rpath /nowhere -avoid-version -no-undefined \
	-export-symbols-regex '^(vyre_plugin_|stub_calls$$)'
STUB_LIBADD = abi/libvyre-format.la
noinst_HEADERS += tests/stubs/stub_plugin.h

check_LTLIBRARIES += \
	tests/stubs/libstub_good.la \
	tests/stubs/libstub_fast.la \
	tests/stubs/libstub_tie.la \
	tests/stubs/libstub_zdup.la \
	tests/stubs/libstub_factory.la \
	tests/stubs/libstub_tinyvt.la \
	tests/stubs/libstub_shortvt.la \
	tests/stubs/libstub_major.la \
	tests/stubs/libstub_newer.la \
	tests/stubs/libstub_older.la \
	tests/stubs/libstub_excl.la \
	tests/stubs/libstub_liar.la \
	tests/stubs/libstub_shortreg.la \
	tests/stubs/libstub_descreg.la \
	tests/stubs/libstub_shortdesc.la \
	tests/stubs/libstub_magic.la \
	tests/stubs/libstub_noentry.la \
	tests/stubs/libstub_nodesc.la \
	tests/stubs/libstub_entryfail.la \
	tests/stubs/libstub_badid.la \
	tests/stubs/libstub_longid.la \
	tests/stubs/libstub_badop.la

# good: the working stub: id 'stub', precedence 50
tests_stubs_libstub_good_la_SOURCES = tests/stubs/stub_plugin.c
tests_stubs_libstub_good_la_CPPFLAGS = $(AM_CPPFLAGS)
tests_stubs_libstub_good_la_LDFLAGS = $(STUB_LDFLAGS)
tests_stubs_libstub_good_la_LIBADD = $(STUB_LIBADD)

# fast: works, precedence 10 (wins selection)
tests_stubs_libstub_fast_la_SOURCES = tests/stubs/stub_plugin.c
tests_stubs_libstub_fast_la_CPPFLAGS = $(AM_CPPFLAGS) -DSTUB_ID='"fast"' -DSTUB_PRECEDENCE=10
tests_stubs_libstub_fast_la_LDFLAGS = $(STUB_LDFLAGS)
tests_stubs_libstub_fast_la_LIBADD = $(STUB_LIBADD)

# tie: works, same precedence as good
tests_stubs_libstub_tie_la_SOURCES = tests/stubs/stub_plugin.c
tests_stubs_libstub_tie_la_CPPFLAGS = $(AM_CPPFLAGS) -DSTUB_ID='"tie"' -DSTUB_PRECEDENCE=50
tests_stubs_libstub_tie_la_LDFLAGS = $(STUB_LDFLAGS)
tests_stubs_libstub_tie_la_LIBADD = $(STUB_LIBADD)

# zdup: id 'stub' again (duplicate), sorts after good
tests_stubs_libstub_zdup_la_SOURCES = tests/stubs/stub_plugin.c
tests_stubs_libstub_zdup_la_CPPFLAGS = $(AM_CPPFLAGS) -DSTUB_PRECEDENCE=5
tests_stubs_libstub_zdup_la_LDFLAGS = $(STUB_LDFLAGS)
tests_stubs_libstub_zdup_la_LIBADD = $(STUB_LIBADD)

# factory: factory fails
tests_stubs_libstub_factory_la_SOURCES = tests/stubs/stub_plugin.c
tests_stubs_libstub_factory_la_CPPFLAGS = $(AM_CPPFLAGS) -DSTUB_ID='"factory"' -DSTUB_PRECEDENCE=1 -DSTUB_FACTORY_FAILS
tests_stubs_libstub_factory_la_LDFLAGS = $(STUB_LDFLAGS)
tests_stubs_libstub_factory_la_LIBADD = $(STUB_LIBADD)

# tinyvt: instance vtable too short to destroy
tests_stubs_libstub_tinyvt_la_SOURCES = tests/stubs/stub_plugin.c
tests_stubs_libstub_tinyvt_la_CPPFLAGS = $(AM_CPPFLAGS) -DSTUB_ID='"tinyvt"' -DSTUB_VTABLE_SIZE=8
tests_stubs_libstub_tinyvt_la_LDFLAGS = $(STUB_LDFLAGS)
tests_stubs_libstub_tinyvt_la_LIBADD = $(STUB_LIBADD)

# shortvt: instance vtable ends before metrics
tests_stubs_libstub_shortvt_la_SOURCES = tests/stubs/stub_plugin.c
tests_stubs_libstub_shortvt_la_CPPFLAGS = $(AM_CPPFLAGS) -DSTUB_ID='"shortvt"' -DSTUB_VTABLE_SIZE=40
tests_stubs_libstub_shortvt_la_LDFLAGS = $(STUB_LDFLAGS)
tests_stubs_libstub_shortvt_la_LIBADD = $(STUB_LIBADD)

# major: ABI major 2
tests_stubs_libstub_major_la_SOURCES = tests/stubs/stub_plugin.c
tests_stubs_libstub_major_la_CPPFLAGS = $(AM_CPPFLAGS) -DSTUB_ID='"major"' -DSTUB_MAJOR=2
tests_stubs_libstub_major_la_LDFLAGS = $(STUB_LDFLAGS)
tests_stubs_libstub_major_la_LIBADD = $(STUB_LIBADD)

# newer: serves minors 0..3
tests_stubs_libstub_newer_la_SOURCES = tests/stubs/stub_plugin.c
tests_stubs_libstub_newer_la_CPPFLAGS = $(AM_CPPFLAGS) -DSTUB_ID='"newer"' -DSTUB_MINOR_MIN=0 -DSTUB_MINOR_MAX=3
tests_stubs_libstub_newer_la_LDFLAGS = $(STUB_LDFLAGS)
tests_stubs_libstub_newer_la_LIBADD = $(STUB_LIBADD)

# older: serves minors 0..1
tests_stubs_libstub_older_la_SOURCES = tests/stubs/stub_plugin.c
tests_stubs_libstub_older_la_CPPFLAGS = $(AM_CPPFLAGS) -DSTUB_ID='"older"' -DSTUB_MINOR_MIN=0 -DSTUB_MINOR_MAX=1
tests_stubs_libstub_older_la_LDFLAGS = $(STUB_LDFLAGS)
tests_stubs_libstub_older_la_LIBADD = $(STUB_LIBADD)

# excl: serves minors 3..4 only
tests_stubs_libstub_excl_la_SOURCES = tests/stubs/stub_plugin.c
tests_stubs_libstub_excl_la_CPPFLAGS = $(AM_CPPFLAGS) -DSTUB_ID='"excl"' -DSTUB_MINOR_MIN=3 -DSTUB_MINOR_MAX=4
tests_stubs_libstub_excl_la_LDFLAGS = $(STUB_LDFLAGS)
tests_stubs_libstub_excl_la_LIBADD = $(STUB_LIBADD)

# liar: claims minor 3 whatever was negotiated
tests_stubs_libstub_liar_la_SOURCES = tests/stubs/stub_plugin.c
tests_stubs_libstub_liar_la_CPPFLAGS = $(AM_CPPFLAGS) -DSTUB_ID='"liar"' -DSTUB_MINOR_MIN=0 -DSTUB_MINOR_MAX=3 -DSTUB_LIE_MINOR
tests_stubs_libstub_liar_la_LDFLAGS = $(STUB_LDFLAGS)
tests_stubs_libstub_liar_la_LIBADD = $(STUB_LIBADD)

# shortreg: registration struct_size 16
tests_stubs_libstub_shortreg_la_SOURCES = tests/stubs/stub_plugin.c
tests_stubs_libstub_shortreg_la_CPPFLAGS = $(AM_CPPFLAGS) -DSTUB_ID='"shortreg"' -DSTUB_REG_SIZE=16
tests_stubs_libstub_shortreg_la_LDFLAGS = $(STUB_LDFLAGS)
tests_stubs_libstub_shortreg_la_LIBADD = $(STUB_LIBADD)

# descreg: descriptor registration_size 16
tests_stubs_libstub_descreg_la_SOURCES = tests/stubs/stub_plugin.c
tests_stubs_libstub_descreg_la_CPPFLAGS = $(AM_CPPFLAGS) -DSTUB_ID='"descreg"' -DSTUB_DESC_REG_SIZE=16
tests_stubs_libstub_descreg_la_LDFLAGS = $(STUB_LDFLAGS)
tests_stubs_libstub_descreg_la_LIBADD = $(STUB_LIBADD)

# shortdesc: 16-byte descriptor
tests_stubs_libstub_shortdesc_la_SOURCES = tests/stubs/stub_plugin.c
tests_stubs_libstub_shortdesc_la_CPPFLAGS = $(AM_CPPFLAGS) -DSTUB_ID='"shortdesc"' -DSTUB_SHORT_DESC
tests_stubs_libstub_shortdesc_la_LDFLAGS = $(STUB_LDFLAGS)
tests_stubs_libstub_shortdesc_la_LIBADD = $(STUB_LIBADD)

# magic: wrong magic
tests_stubs_libstub_magic_la_SOURCES = tests/stubs/stub_plugin.c
tests_stubs_libstub_magic_la_CPPFLAGS = $(AM_CPPFLAGS) -DSTUB_ID='"magic"' -DSTUB_MAGIC=0x12345678
tests_stubs_libstub_magic_la_LDFLAGS = $(STUB_LDFLAGS)
tests_stubs_libstub_magic_la_LIBADD = $(STUB_LIBADD)

# noentry: no vyre_plugin_entry
tests_stubs_libstub_noentry_la_SOURCES = tests/stubs/stub_plugin.c
tests_stubs_libstub_noentry_la_CPPFLAGS = $(AM_CPPFLAGS) -DSTUB_ID='"noentry"' -DSTUB_NO_ENTRY
tests_stubs_libstub_noentry_la_LDFLAGS = $(STUB_LDFLAGS)
tests_stubs_libstub_noentry_la_LIBADD = $(STUB_LIBADD)

# nodesc: no vyre_plugin_descriptor
tests_stubs_libstub_nodesc_la_SOURCES = tests/stubs/stub_plugin.c
tests_stubs_libstub_nodesc_la_CPPFLAGS = $(AM_CPPFLAGS) -DSTUB_ID='"nodesc"' -DSTUB_NO_DESCRIPTOR
tests_stubs_libstub_nodesc_la_LDFLAGS = $(STUB_LDFLAGS)
tests_stubs_libstub_nodesc_la_LIBADD = $(STUB_LIBADD)

# entryfail: entry returns VYRE_INTERNAL
tests_stubs_libstub_entryfail_la_SOURCES = tests/stubs/stub_plugin.c
tests_stubs_libstub_entryfail_la_CPPFLAGS = $(AM_CPPFLAGS) -DSTUB_ID='"entryfail"' -DSTUB_ENTRY_FAILS
tests_stubs_libstub_entryfail_la_LDFLAGS = $(STUB_LDFLAGS)
tests_stubs_libstub_entryfail_la_LIBADD = $(STUB_LIBADD)

# badid: id with bad characters
tests_stubs_libstub_badid_la_SOURCES = tests/stubs/stub_plugin.c
tests_stubs_libstub_badid_la_CPPFLAGS = $(AM_CPPFLAGS) -DSTUB_ID='"Bad ID!"'
tests_stubs_libstub_badid_la_LDFLAGS = $(STUB_LDFLAGS)
tests_stubs_libstub_badid_la_LIBADD = $(STUB_LIBADD)

# longid: 40-character id
tests_stubs_libstub_longid_la_SOURCES = tests/stubs/stub_plugin.c
tests_stubs_libstub_longid_la_CPPFLAGS = $(AM_CPPFLAGS) -DSTUB_ID='"a234567890123456789012345678901234567890"'
tests_stubs_libstub_longid_la_LDFLAGS = $(STUB_LDFLAGS)
tests_stubs_libstub_longid_la_LIBADD = $(STUB_LIBADD)

# badop: lists op id 250
tests_stubs_libstub_badop_la_SOURCES = tests/stubs/stub_plugin.c
tests_stubs_libstub_badop_la_CPPFLAGS = $(AM_CPPFLAGS) -DSTUB_ID='"badop"' -DSTUB_BAD_OP
tests_stubs_libstub_badop_la_LDFLAGS = $(STUB_LDFLAGS)
tests_stubs_libstub_badop_la_LIBADD = $(STUB_LIBADD)

if HAVE_CHECK
# The loader suite, against the installed-style shared library.
check_PROGRAMS += tests/check_loader
TESTS += tests/check_loader
tests_check_loader_SOURCES = tests/check_loader.c
tests_check_loader_CPPFLAGS = $(AM_CPPFLAGS) -I$(top_srcdir)/tests/stubs \
	-DVYRE_STUB_DIR='"$(abs_top_builddir)/tests/stubs/.libs"'
tests_check_loader_CFLAGS = $(AM_CFLAGS) $(CHECK_CFLAGS)
tests_check_loader_LDADD = host-stub/libvyre-host.la abi/libvyre-format.la $(CHECK_LIBS)

# The same suite against a host that speaks ABI minor 2: version skew
# (plugin newer, plugin older, ranges that exclude the host).
check_PROGRAMS += tests/check_loader_skew
TESTS += tests/check_loader_skew
tests_check_loader_skew_SOURCES = tests/check_loader.c host-stub/host.c host-stub/loader.c
tests_check_loader_skew_CPPFLAGS = $(AM_CPPFLAGS) -I$(top_srcdir)/tests/stubs \
	-DVYRE_HOST_ABI_MINOR=2 -DVYRE_PLUGINDIR='"/nonexistent"' \
	-DVYRE_STUB_DIR='"$(abs_top_builddir)/tests/stubs/.libs"'
tests_check_loader_skew_CFLAGS = $(AM_CFLAGS) $(CHECK_CFLAGS)
tests_check_loader_skew_LDADD = abi/libvyre-format.la $(CHECK_LIBS)
endif

# The `vyre` command end to end (shell; no Check needed).  Under
# `make check-valgrind` they run vyre itself under memcheck.
TESTS += tests/cli_list.test tests/cli_run.test tests/cli_bench.test
EXTRA_DIST += tests/cli_lib.sh tests/cli_list.test tests/cli_run.test tests/cli_bench.test bench/peers.py bench/compare.py bench/run.sh
