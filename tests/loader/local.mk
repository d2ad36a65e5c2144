# tests/loader/local.mk -- libvyre-host tests: stub plugins for every failure, the loader suite, ABI skew.

# Stub plugins (like the OpenCL ICD loader's driver_stub): one source,
# one -D set per variant.  -rpath makes libtool build a shared module
# that is never installed.
STUB_LDFLAGS = -module -rpath /nowhere -avoid-version -no-undefined \
	-export-symbols-regex '^(vyre_plugin_|stub_calls$$)'
STUB_LIBADD = abi/libvyre.la
noinst_HEADERS += tests/loader/stubs/stub_plugin.h

check_LTLIBRARIES += \
	tests/loader/stubs/libstub_good.la \
	tests/loader/stubs/libstub_fast.la \
	tests/loader/stubs/libstub_tie.la \
	tests/loader/stubs/libstub_zdup.la \
	tests/loader/stubs/libstub_factory.la \
	tests/loader/stubs/libstub_tinyvt.la \
	tests/loader/stubs/libstub_shortvt.la \
	tests/loader/stubs/libstub_major.la \
	tests/loader/stubs/libstub_newer.la \
	tests/loader/stubs/libstub_older.la \
	tests/loader/stubs/libstub_excl.la \
	tests/loader/stubs/libstub_liar.la \
	tests/loader/stubs/libstub_shortreg.la \
	tests/loader/stubs/libstub_descreg.la \
	tests/loader/stubs/libstub_shortdesc.la \
	tests/loader/stubs/libstub_magic.la \
	tests/loader/stubs/libstub_noentry.la \
	tests/loader/stubs/libstub_nodesc.la \
	tests/loader/stubs/libstub_entryfail.la \
	tests/loader/stubs/libstub_badid.la \
	tests/loader/stubs/libstub_longid.la \
	tests/loader/stubs/libstub_badop.la

# good: the working stub: id 'stub', precedence 50
tests_loader_stubs_libstub_good_la_SOURCES = tests/loader/stubs/stub_plugin.c
tests_loader_stubs_libstub_good_la_CPPFLAGS = $(AM_CPPFLAGS)
tests_loader_stubs_libstub_good_la_LDFLAGS = $(STUB_LDFLAGS)
tests_loader_stubs_libstub_good_la_LIBADD = $(STUB_LIBADD)

# fast: works, precedence 10 (wins selection)
tests_loader_stubs_libstub_fast_la_SOURCES = tests/loader/stubs/stub_plugin.c
tests_loader_stubs_libstub_fast_la_CPPFLAGS = $(AM_CPPFLAGS) -DSTUB_ID='"fast"' -DSTUB_PRECEDENCE=10
tests_loader_stubs_libstub_fast_la_LDFLAGS = $(STUB_LDFLAGS)
tests_loader_stubs_libstub_fast_la_LIBADD = $(STUB_LIBADD)

# tie: works, same precedence as good
tests_loader_stubs_libstub_tie_la_SOURCES = tests/loader/stubs/stub_plugin.c
tests_loader_stubs_libstub_tie_la_CPPFLAGS = $(AM_CPPFLAGS) -DSTUB_ID='"tie"' -DSTUB_PRECEDENCE=50
tests_loader_stubs_libstub_tie_la_LDFLAGS = $(STUB_LDFLAGS)
tests_loader_stubs_libstub_tie_la_LIBADD = $(STUB_LIBADD)

# zdup: id 'stub' again (duplicate), sorts after good
tests_loader_stubs_libstub_zdup_la_SOURCES = tests/loader/stubs/stub_plugin.c
tests_loader_stubs_libstub_zdup_la_CPPFLAGS = $(AM_CPPFLAGS) -DSTUB_PRECEDENCE=5
tests_loader_stubs_libstub_zdup_la_LDFLAGS = $(STUB_LDFLAGS)
tests_loader_stubs_libstub_zdup_la_LIBADD = $(STUB_LIBADD)

# factory: factory fails
tests_loader_stubs_libstub_factory_la_SOURCES = tests/loader/stubs/stub_plugin.c
tests_loader_stubs_libstub_factory_la_CPPFLAGS = $(AM_CPPFLAGS) -DSTUB_ID='"factory"' -DSTUB_PRECEDENCE=1 -DSTUB_FACTORY_FAILS
tests_loader_stubs_libstub_factory_la_LDFLAGS = $(STUB_LDFLAGS)
tests_loader_stubs_libstub_factory_la_LIBADD = $(STUB_LIBADD)

# tinyvt: instance vtable too short to destroy
tests_loader_stubs_libstub_tinyvt_la_SOURCES = tests/loader/stubs/stub_plugin.c
tests_loader_stubs_libstub_tinyvt_la_CPPFLAGS = $(AM_CPPFLAGS) -DSTUB_ID='"tinyvt"' -DSTUB_VTABLE_SIZE=8
tests_loader_stubs_libstub_tinyvt_la_LDFLAGS = $(STUB_LDFLAGS)
tests_loader_stubs_libstub_tinyvt_la_LIBADD = $(STUB_LIBADD)

# shortvt: instance vtable ends before metrics
tests_loader_stubs_libstub_shortvt_la_SOURCES = tests/loader/stubs/stub_plugin.c
tests_loader_stubs_libstub_shortvt_la_CPPFLAGS = $(AM_CPPFLAGS) -DSTUB_ID='"shortvt"' -DSTUB_VTABLE_SIZE=40
tests_loader_stubs_libstub_shortvt_la_LDFLAGS = $(STUB_LDFLAGS)
tests_loader_stubs_libstub_shortvt_la_LIBADD = $(STUB_LIBADD)

# major: ABI major 2
tests_loader_stubs_libstub_major_la_SOURCES = tests/loader/stubs/stub_plugin.c
tests_loader_stubs_libstub_major_la_CPPFLAGS = $(AM_CPPFLAGS) -DSTUB_ID='"major"' -DSTUB_MAJOR=2
tests_loader_stubs_libstub_major_la_LDFLAGS = $(STUB_LDFLAGS)
tests_loader_stubs_libstub_major_la_LIBADD = $(STUB_LIBADD)

# newer: serves minors 0..3
tests_loader_stubs_libstub_newer_la_SOURCES = tests/loader/stubs/stub_plugin.c
tests_loader_stubs_libstub_newer_la_CPPFLAGS = $(AM_CPPFLAGS) -DSTUB_ID='"newer"' -DSTUB_MINOR_MIN=0 -DSTUB_MINOR_MAX=3
tests_loader_stubs_libstub_newer_la_LDFLAGS = $(STUB_LDFLAGS)
tests_loader_stubs_libstub_newer_la_LIBADD = $(STUB_LIBADD)

# older: serves minors 0..1
tests_loader_stubs_libstub_older_la_SOURCES = tests/loader/stubs/stub_plugin.c
tests_loader_stubs_libstub_older_la_CPPFLAGS = $(AM_CPPFLAGS) -DSTUB_ID='"older"' -DSTUB_MINOR_MIN=0 -DSTUB_MINOR_MAX=1
tests_loader_stubs_libstub_older_la_LDFLAGS = $(STUB_LDFLAGS)
tests_loader_stubs_libstub_older_la_LIBADD = $(STUB_LIBADD)

# excl: serves minors 3..4 only
tests_loader_stubs_libstub_excl_la_SOURCES = tests/loader/stubs/stub_plugin.c
tests_loader_stubs_libstub_excl_la_CPPFLAGS = $(AM_CPPFLAGS) -DSTUB_ID='"excl"' -DSTUB_MINOR_MIN=3 -DSTUB_MINOR_MAX=4
tests_loader_stubs_libstub_excl_la_LDFLAGS = $(STUB_LDFLAGS)
tests_loader_stubs_libstub_excl_la_LIBADD = $(STUB_LIBADD)

# liar: claims minor 3 whatever was negotiated
tests_loader_stubs_libstub_liar_la_SOURCES = tests/loader/stubs/stub_plugin.c
tests_loader_stubs_libstub_liar_la_CPPFLAGS = $(AM_CPPFLAGS) -DSTUB_ID='"liar"' -DSTUB_MINOR_MIN=0 -DSTUB_MINOR_MAX=3 -DSTUB_LIE_MINOR
tests_loader_stubs_libstub_liar_la_LDFLAGS = $(STUB_LDFLAGS)
tests_loader_stubs_libstub_liar_la_LIBADD = $(STUB_LIBADD)

# shortreg: registration struct_size 16
tests_loader_stubs_libstub_shortreg_la_SOURCES = tests/loader/stubs/stub_plugin.c
tests_loader_stubs_libstub_shortreg_la_CPPFLAGS = $(AM_CPPFLAGS) -DSTUB_ID='"shortreg"' -DSTUB_REG_SIZE=16
tests_loader_stubs_libstub_shortreg_la_LDFLAGS = $(STUB_LDFLAGS)
tests_loader_stubs_libstub_shortreg_la_LIBADD = $(STUB_LIBADD)

# descreg: descriptor registration_size 16
tests_loader_stubs_libstub_descreg_la_SOURCES = tests/loader/stubs/stub_plugin.c
tests_loader_stubs_libstub_descreg_la_CPPFLAGS = $(AM_CPPFLAGS) -DSTUB_ID='"descreg"' -DSTUB_DESC_REG_SIZE=16
tests_loader_stubs_libstub_descreg_la_LDFLAGS = $(STUB_LDFLAGS)
tests_loader_stubs_libstub_descreg_la_LIBADD = $(STUB_LIBADD)

# shortdesc: 16-byte descriptor
tests_loader_stubs_libstub_shortdesc_la_SOURCES = tests/loader/stubs/stub_plugin.c
tests_loader_stubs_libstub_shortdesc_la_CPPFLAGS = $(AM_CPPFLAGS) -DSTUB_ID='"shortdesc"' -DSTUB_SHORT_DESC
tests_loader_stubs_libstub_shortdesc_la_LDFLAGS = $(STUB_LDFLAGS)
tests_loader_stubs_libstub_shortdesc_la_LIBADD = $(STUB_LIBADD)

# magic: wrong magic
tests_loader_stubs_libstub_magic_la_SOURCES = tests/loader/stubs/stub_plugin.c
tests_loader_stubs_libstub_magic_la_CPPFLAGS = $(AM_CPPFLAGS) -DSTUB_ID='"magic"' -DSTUB_MAGIC=0x12345678
tests_loader_stubs_libstub_magic_la_LDFLAGS = $(STUB_LDFLAGS)
tests_loader_stubs_libstub_magic_la_LIBADD = $(STUB_LIBADD)

# noentry: no vyre_plugin_entry
tests_loader_stubs_libstub_noentry_la_SOURCES = tests/loader/stubs/stub_plugin.c
tests_loader_stubs_libstub_noentry_la_CPPFLAGS = $(AM_CPPFLAGS) -DSTUB_ID='"noentry"' -DSTUB_NO_ENTRY
tests_loader_stubs_libstub_noentry_la_LDFLAGS = $(STUB_LDFLAGS)
tests_loader_stubs_libstub_noentry_la_LIBADD = $(STUB_LIBADD)

# nodesc: no vyre_plugin_descriptor
tests_loader_stubs_libstub_nodesc_la_SOURCES = tests/loader/stubs/stub_plugin.c
tests_loader_stubs_libstub_nodesc_la_CPPFLAGS = $(AM_CPPFLAGS) -DSTUB_ID='"nodesc"' -DSTUB_NO_DESCRIPTOR
tests_loader_stubs_libstub_nodesc_la_LDFLAGS = $(STUB_LDFLAGS)
tests_loader_stubs_libstub_nodesc_la_LIBADD = $(STUB_LIBADD)

# entryfail: entry returns VYRE_INTERNAL
tests_loader_stubs_libstub_entryfail_la_SOURCES = tests/loader/stubs/stub_plugin.c
tests_loader_stubs_libstub_entryfail_la_CPPFLAGS = $(AM_CPPFLAGS) -DSTUB_ID='"entryfail"' -DSTUB_ENTRY_FAILS
tests_loader_stubs_libstub_entryfail_la_LDFLAGS = $(STUB_LDFLAGS)
tests_loader_stubs_libstub_entryfail_la_LIBADD = $(STUB_LIBADD)

# badid: id with bad characters
tests_loader_stubs_libstub_badid_la_SOURCES = tests/loader/stubs/stub_plugin.c
tests_loader_stubs_libstub_badid_la_CPPFLAGS = $(AM_CPPFLAGS) -DSTUB_ID='"Bad ID!"'
tests_loader_stubs_libstub_badid_la_LDFLAGS = $(STUB_LDFLAGS)
tests_loader_stubs_libstub_badid_la_LIBADD = $(STUB_LIBADD)

# longid: 40-character id
tests_loader_stubs_libstub_longid_la_SOURCES = tests/loader/stubs/stub_plugin.c
tests_loader_stubs_libstub_longid_la_CPPFLAGS = $(AM_CPPFLAGS) -DSTUB_ID='"a234567890123456789012345678901234567890"'
tests_loader_stubs_libstub_longid_la_LDFLAGS = $(STUB_LDFLAGS)
tests_loader_stubs_libstub_longid_la_LIBADD = $(STUB_LIBADD)

# badop: lists op id 250
tests_loader_stubs_libstub_badop_la_SOURCES = tests/loader/stubs/stub_plugin.c
tests_loader_stubs_libstub_badop_la_CPPFLAGS = $(AM_CPPFLAGS) -DSTUB_ID='"badop"' -DSTUB_BAD_OP
tests_loader_stubs_libstub_badop_la_LDFLAGS = $(STUB_LDFLAGS)
tests_loader_stubs_libstub_badop_la_LIBADD = $(STUB_LIBADD)

if HAVE_CHECK
# The loader suite, against the installed-style shared library.
check_PROGRAMS += tests/loader/check_loader
TESTS += tests/loader/check_loader
tests_loader_check_loader_SOURCES = tests/loader/check_loader.c
tests_loader_check_loader_CPPFLAGS = $(AM_CPPFLAGS) \
	-DVYRE_STUB_DIR='"$(abs_top_builddir)/tests/loader/stubs/.libs"'
tests_loader_check_loader_CFLAGS = $(AM_CFLAGS) $(CHECK_CFLAGS)
tests_loader_check_loader_LDADD = host-stub/loader/libvyre-host.la abi/libvyre.la $(CHECK_LIBS)

# The same suite against a host that speaks ABI minor 2: version skew
# (plugin newer, plugin older, ranges that exclude the host).
check_PROGRAMS += tests/loader/check_loader_skew
TESTS += tests/loader/check_loader_skew
tests_loader_check_loader_skew_SOURCES = tests/loader/check_loader.c host-stub/loader/host.c host-stub/loader/loader.c
tests_loader_check_loader_skew_CPPFLAGS = $(AM_CPPFLAGS) \
	-DVYRE_HOST_ABI_MINOR=2 -DVYRE_PLUGINDIR='"/nonexistent"' \
	-DVYRE_STUB_DIR='"$(abs_top_builddir)/tests/loader/stubs/.libs"'
tests_loader_check_loader_skew_CFLAGS = $(AM_CFLAGS) $(CHECK_CFLAGS)
tests_loader_check_loader_skew_LDADD = abi/libvyre.la $(CHECK_LIBS)
endif
