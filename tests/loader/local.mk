# tests/loader/local.mk -- libvyre-host tests: stub plugins for every failure, the loader suite, ABI skew.

# Stub plugins (like the OpenCL ICD loader's driver_stub): one source,
# one -D set per variant.  -rpath makes libtool build a shared module
# that is never installed.
STUB_LDFLAGS = -module -rpath /nowhere -avoid-version -no-undefined \
	-export-symbols-regex '^(vyre_plugin_|stub_calls$$)'
STUB_LIBADD = abi/libvyre-private.la
noinst_HEADERS += tests/loader/stubs/stub_plugin.h

check_LTLIBRARIES += \
	tests/loader/stubs/libvyre-stub_good.la \
	tests/loader/stubs/libvyre-stub_fast.la \
	tests/loader/stubs/libvyre-stub_tie.la \
	tests/loader/stubs/libvyre-stub_zdup.la \
	tests/loader/stubs/libvyre-stub_factory.la \
	tests/loader/stubs/libvyre-stub_tinyvt.la \
	tests/loader/stubs/libvyre-stub_shortvt.la \
	tests/loader/stubs/libvyre-stub_major.la \
	tests/loader/stubs/libvyre-stub_newer.la \
	tests/loader/stubs/libvyre-stub_older.la \
	tests/loader/stubs/libvyre-stub_excl.la \
	tests/loader/stubs/libvyre-stub_liar.la \
	tests/loader/stubs/libvyre-stub_shortreg.la \
	tests/loader/stubs/libvyre-stub_descreg.la \
	tests/loader/stubs/libvyre-stub_shortdesc.la \
	tests/loader/stubs/libvyre-stub_magic.la \
	tests/loader/stubs/libvyre-stub_noentry.la \
	tests/loader/stubs/libvyre-stub_nodesc.la \
	tests/loader/stubs/libvyre-stub_entryfail.la \
	tests/loader/stubs/libvyre-stub_badid.la \
	tests/loader/stubs/libvyre-stub_longid.la \
	tests/loader/stubs/libvyre-stub_dupop.la \
	tests/loader/stubs/libvyre-stub_future.la \
	tests/loader/stubs/libvyre-stub_abi10.la \
	tests/loader/stubs/libunrelated.la \
	tests/loader/stubs/libhostile_evil.la \
	tests/loader/stubs/libhostile_zfail.la \
	tests/loader/stubs/libhostile_fakeref.la \
	tests/loader/stubs/libhostile_escape.la \
	tests/loader/stubs/libselect_nodiv.la \
	tests/loader/stubs/libhostile_guard.la \
	tests/loader/stubs/libjudge_tiny.la \
	tests/loader/stubs/libjudge_funcdesc.la \
	tests/loader/stubs/libjudge_major2.la \
	tests/loader/stubs/libjudge_ctor.la \
	tests/loader/stubs/libjudge_draft.la \
	tests/loader/stubs/libjudge_pre10.la \
	tests/loader/stubs/libjudge_mutable.la \
	tests/loader/stubs/libjudge_sysv.la \
	tests/loader/stubs/libjudge_imports.la

# good: the working stub: id 'stub', precedence 50
tests_loader_stubs_libvyre_stub_good_la_SOURCES = tests/loader/stubs/stub_plugin.c
tests_loader_stubs_libvyre_stub_good_la_CPPFLAGS = $(AM_CPPFLAGS)
tests_loader_stubs_libvyre_stub_good_la_LDFLAGS = $(STUB_LDFLAGS)
tests_loader_stubs_libvyre_stub_good_la_LIBADD = $(STUB_LIBADD)

# fast: works, precedence 10 (wins selection)
tests_loader_stubs_libvyre_stub_fast_la_SOURCES = tests/loader/stubs/stub_plugin.c
tests_loader_stubs_libvyre_stub_fast_la_CPPFLAGS = $(AM_CPPFLAGS) -DSTUB_ID='"fast"' -DSTUB_PRECEDENCE=10
tests_loader_stubs_libvyre_stub_fast_la_LDFLAGS = $(STUB_LDFLAGS)
tests_loader_stubs_libvyre_stub_fast_la_LIBADD = $(STUB_LIBADD)

# tie: works, same precedence as good
tests_loader_stubs_libvyre_stub_tie_la_SOURCES = tests/loader/stubs/stub_plugin.c
tests_loader_stubs_libvyre_stub_tie_la_CPPFLAGS = $(AM_CPPFLAGS) -DSTUB_ID='"tie"' -DSTUB_PRECEDENCE=50
tests_loader_stubs_libvyre_stub_tie_la_LDFLAGS = $(STUB_LDFLAGS)
tests_loader_stubs_libvyre_stub_tie_la_LIBADD = $(STUB_LIBADD)

# zdup: id 'stub' again (duplicate), sorts after good
tests_loader_stubs_libvyre_stub_zdup_la_SOURCES = tests/loader/stubs/stub_plugin.c
tests_loader_stubs_libvyre_stub_zdup_la_CPPFLAGS = $(AM_CPPFLAGS) -DSTUB_PRECEDENCE=5
tests_loader_stubs_libvyre_stub_zdup_la_LDFLAGS = $(STUB_LDFLAGS)
tests_loader_stubs_libvyre_stub_zdup_la_LIBADD = $(STUB_LIBADD)

# factory: factory fails
tests_loader_stubs_libvyre_stub_factory_la_SOURCES = tests/loader/stubs/stub_plugin.c
tests_loader_stubs_libvyre_stub_factory_la_CPPFLAGS = $(AM_CPPFLAGS) -DSTUB_ID='"factory"' -DSTUB_PRECEDENCE=1 -DSTUB_FACTORY_FAILS
tests_loader_stubs_libvyre_stub_factory_la_LDFLAGS = $(STUB_LDFLAGS)
tests_loader_stubs_libvyre_stub_factory_la_LIBADD = $(STUB_LIBADD)

# tinyvt: instance vtable too short to destroy
tests_loader_stubs_libvyre_stub_tinyvt_la_SOURCES = tests/loader/stubs/stub_plugin.c
tests_loader_stubs_libvyre_stub_tinyvt_la_CPPFLAGS = $(AM_CPPFLAGS) -DSTUB_ID='"tinyvt"' -DSTUB_VTABLE_SIZE=8
tests_loader_stubs_libvyre_stub_tinyvt_la_LDFLAGS = $(STUB_LDFLAGS)
tests_loader_stubs_libvyre_stub_tinyvt_la_LIBADD = $(STUB_LIBADD)

# shortvt: instance vtable ends before metrics
tests_loader_stubs_libvyre_stub_shortvt_la_SOURCES = tests/loader/stubs/stub_plugin.c
tests_loader_stubs_libvyre_stub_shortvt_la_CPPFLAGS = $(AM_CPPFLAGS) -DSTUB_ID='"shortvt"' -DSTUB_VTABLE_SIZE=40
tests_loader_stubs_libvyre_stub_shortvt_la_LDFLAGS = $(STUB_LDFLAGS)
tests_loader_stubs_libvyre_stub_shortvt_la_LIBADD = $(STUB_LIBADD)

# major: ABI major 2
tests_loader_stubs_libvyre_stub_major_la_SOURCES = tests/loader/stubs/stub_plugin.c
tests_loader_stubs_libvyre_stub_major_la_CPPFLAGS = $(AM_CPPFLAGS) -DSTUB_ID='"major"' -DSTUB_MAJOR=2
tests_loader_stubs_libvyre_stub_major_la_LDFLAGS = $(STUB_LDFLAGS)
tests_loader_stubs_libvyre_stub_major_la_LIBADD = $(STUB_LIBADD)

# newer: serves minors 0..3
tests_loader_stubs_libvyre_stub_newer_la_SOURCES = tests/loader/stubs/stub_plugin.c
tests_loader_stubs_libvyre_stub_newer_la_CPPFLAGS = $(AM_CPPFLAGS) -DSTUB_ID='"newer"' -DSTUB_MINOR_MIN=0 -DSTUB_MINOR_MAX=3
tests_loader_stubs_libvyre_stub_newer_la_LDFLAGS = $(STUB_LDFLAGS)
tests_loader_stubs_libvyre_stub_newer_la_LIBADD = $(STUB_LIBADD)

# older: serves minors 0..1
tests_loader_stubs_libvyre_stub_older_la_SOURCES = tests/loader/stubs/stub_plugin.c
tests_loader_stubs_libvyre_stub_older_la_CPPFLAGS = $(AM_CPPFLAGS) -DSTUB_ID='"older"' -DSTUB_MINOR_MIN=0 -DSTUB_MINOR_MAX=1
tests_loader_stubs_libvyre_stub_older_la_LDFLAGS = $(STUB_LDFLAGS)
tests_loader_stubs_libvyre_stub_older_la_LIBADD = $(STUB_LIBADD)

# excl: serves minors 3..4 only
tests_loader_stubs_libvyre_stub_excl_la_SOURCES = tests/loader/stubs/stub_plugin.c
tests_loader_stubs_libvyre_stub_excl_la_CPPFLAGS = $(AM_CPPFLAGS) -DSTUB_ID='"excl"' -DSTUB_MINOR_MIN=3 -DSTUB_MINOR_MAX=4
tests_loader_stubs_libvyre_stub_excl_la_LDFLAGS = $(STUB_LDFLAGS)
tests_loader_stubs_libvyre_stub_excl_la_LIBADD = $(STUB_LIBADD)

# liar: its registration says minor 3 (the host records the negotiated one)
tests_loader_stubs_libvyre_stub_liar_la_SOURCES = tests/loader/stubs/stub_plugin.c
tests_loader_stubs_libvyre_stub_liar_la_CPPFLAGS = $(AM_CPPFLAGS) -DSTUB_ID='"liar"' -DSTUB_MINOR_MIN=0 -DSTUB_MINOR_MAX=3 -DSTUB_LIE_MINOR
tests_loader_stubs_libvyre_stub_liar_la_LDFLAGS = $(STUB_LDFLAGS)
tests_loader_stubs_libvyre_stub_liar_la_LIBADD = $(STUB_LIBADD)

# shortreg: registration struct_size 16
tests_loader_stubs_libvyre_stub_shortreg_la_SOURCES = tests/loader/stubs/stub_plugin.c
tests_loader_stubs_libvyre_stub_shortreg_la_CPPFLAGS = $(AM_CPPFLAGS) -DSTUB_ID='"shortreg"' -DSTUB_REG_SIZE=16
tests_loader_stubs_libvyre_stub_shortreg_la_LDFLAGS = $(STUB_LDFLAGS)
tests_loader_stubs_libvyre_stub_shortreg_la_LIBADD = $(STUB_LIBADD)

# descreg: descriptor registration_size 16
tests_loader_stubs_libvyre_stub_descreg_la_SOURCES = tests/loader/stubs/stub_plugin.c
tests_loader_stubs_libvyre_stub_descreg_la_CPPFLAGS = $(AM_CPPFLAGS) -DSTUB_ID='"descreg"' -DSTUB_DESC_REG_SIZE=16
tests_loader_stubs_libvyre_stub_descreg_la_LDFLAGS = $(STUB_LDFLAGS)
tests_loader_stubs_libvyre_stub_descreg_la_LIBADD = $(STUB_LIBADD)

# shortdesc: 16-byte descriptor
tests_loader_stubs_libvyre_stub_shortdesc_la_SOURCES = tests/loader/stubs/stub_plugin.c
tests_loader_stubs_libvyre_stub_shortdesc_la_CPPFLAGS = $(AM_CPPFLAGS) -DSTUB_ID='"shortdesc"' -DSTUB_SHORT_DESC
tests_loader_stubs_libvyre_stub_shortdesc_la_LDFLAGS = $(STUB_LDFLAGS)
tests_loader_stubs_libvyre_stub_shortdesc_la_LIBADD = $(STUB_LIBADD)

# magic: wrong magic
tests_loader_stubs_libvyre_stub_magic_la_SOURCES = tests/loader/stubs/stub_plugin.c
tests_loader_stubs_libvyre_stub_magic_la_CPPFLAGS = $(AM_CPPFLAGS) -DSTUB_ID='"magic"' -DSTUB_MAGIC=0x12345678
tests_loader_stubs_libvyre_stub_magic_la_LDFLAGS = $(STUB_LDFLAGS)
tests_loader_stubs_libvyre_stub_magic_la_LIBADD = $(STUB_LIBADD)

# noentry: no vyre_plugin_entry
tests_loader_stubs_libvyre_stub_noentry_la_SOURCES = tests/loader/stubs/stub_plugin.c
tests_loader_stubs_libvyre_stub_noentry_la_CPPFLAGS = $(AM_CPPFLAGS) -DSTUB_ID='"noentry"' -DSTUB_NO_ENTRY
tests_loader_stubs_libvyre_stub_noentry_la_LDFLAGS = $(STUB_LDFLAGS)
tests_loader_stubs_libvyre_stub_noentry_la_LIBADD = $(STUB_LIBADD)

# nodesc: no vyre_plugin_descriptor
tests_loader_stubs_libvyre_stub_nodesc_la_SOURCES = tests/loader/stubs/stub_plugin.c
tests_loader_stubs_libvyre_stub_nodesc_la_CPPFLAGS = $(AM_CPPFLAGS) -DSTUB_ID='"nodesc"' -DSTUB_NO_DESCRIPTOR
tests_loader_stubs_libvyre_stub_nodesc_la_LDFLAGS = $(STUB_LDFLAGS)
tests_loader_stubs_libvyre_stub_nodesc_la_LIBADD = $(STUB_LIBADD)

# entryfail: entry returns VYRE_INTERNAL
tests_loader_stubs_libvyre_stub_entryfail_la_SOURCES = tests/loader/stubs/stub_plugin.c
tests_loader_stubs_libvyre_stub_entryfail_la_CPPFLAGS = $(AM_CPPFLAGS) -DSTUB_ID='"entryfail"' -DSTUB_ENTRY_FAILS
tests_loader_stubs_libvyre_stub_entryfail_la_LDFLAGS = $(STUB_LDFLAGS)
tests_loader_stubs_libvyre_stub_entryfail_la_LIBADD = $(STUB_LIBADD)

# badid: id with bad characters
tests_loader_stubs_libvyre_stub_badid_la_SOURCES = tests/loader/stubs/stub_plugin.c
tests_loader_stubs_libvyre_stub_badid_la_CPPFLAGS = $(AM_CPPFLAGS) -DSTUB_ID='"Bad ID!"'
tests_loader_stubs_libvyre_stub_badid_la_LDFLAGS = $(STUB_LDFLAGS)
tests_loader_stubs_libvyre_stub_badid_la_LIBADD = $(STUB_LIBADD)

# longid: 40-character id
tests_loader_stubs_libvyre_stub_longid_la_SOURCES = tests/loader/stubs/stub_plugin.c
tests_loader_stubs_libvyre_stub_longid_la_CPPFLAGS = $(AM_CPPFLAGS) -DSTUB_ID='"a234567890123456789012345678901234567890"'
tests_loader_stubs_libvyre_stub_longid_la_LDFLAGS = $(STUB_LDFLAGS)
tests_loader_stubs_libvyre_stub_longid_la_LIBADD = $(STUB_LIBADD)

# dupop: lists op 'add' twice
tests_loader_stubs_libvyre_stub_dupop_la_SOURCES = tests/loader/stubs/stub_plugin.c
tests_loader_stubs_libvyre_stub_dupop_la_CPPFLAGS = $(AM_CPPFLAGS) -DSTUB_ID='"dupop"' -DSTUB_DUP_OP
tests_loader_stubs_libvyre_stub_dupop_la_LDFLAGS = $(STUB_LDFLAGS)
tests_loader_stubs_libvyre_stub_dupop_la_LIBADD = $(STUB_LIBADD)

# future: a plugin of minor N+1 (serves 0..2): an unknown op id, an
# unknown capability bit, a longer registration
tests_loader_stubs_libvyre_stub_future_la_SOURCES = tests/loader/stubs/stub_plugin.c
tests_loader_stubs_libvyre_stub_future_la_CPPFLAGS = $(AM_CPPFLAGS) -DSTUB_ID='"future"' -DSTUB_FUTURE -DSTUB_MINOR_MIN=0 -DSTUB_MINOR_MAX=2
tests_loader_stubs_libvyre_stub_future_la_LDFLAGS = $(STUB_LDFLAGS)
tests_loader_stubs_libvyre_stub_future_la_LIBADD = $(STUB_LIBADD)

# abi10: a plugin of minor N-1 (serves 0..0, 1.0-sized registration and vtable)
tests_loader_stubs_libvyre_stub_abi10_la_SOURCES = tests/loader/stubs/stub_plugin.c
tests_loader_stubs_libvyre_stub_abi10_la_CPPFLAGS = $(AM_CPPFLAGS) -DSTUB_ID='"abi10"' -DSTUB_ABI10 -DSTUB_MINOR_MIN=0 -DSTUB_MINOR_MAX=0
tests_loader_stubs_libvyre_stub_abi10_la_LDFLAGS = $(STUB_LDFLAGS)
tests_loader_stubs_libvyre_stub_abi10_la_LIBADD = $(STUB_LIBADD)

# The hostile stubs are named libhostile_*.so, not libvyre-*.so: a
# directory scan of the stubs (tests/cli) never picks them up, tests
# name each file.
# evil: id 'evil', its entries return what $STUB_EVIL asks for
tests_loader_stubs_libhostile_evil_la_SOURCES = tests/loader/stubs/stub_plugin.c
tests_loader_stubs_libhostile_evil_la_CPPFLAGS = $(AM_CPPFLAGS) -DSTUB_ID='"evil"' -DSTUB_PRECEDENCE=800 -DSTUB_EVIL
tests_loader_stubs_libhostile_evil_la_LDFLAGS = $(STUB_LDFLAGS)
tests_loader_stubs_libhostile_evil_la_LIBADD = $(STUB_LIBADD)

# zfail: id 'stub' again, registers but its factory fails
tests_loader_stubs_libhostile_zfail_la_SOURCES = tests/loader/stubs/stub_plugin.c
tests_loader_stubs_libhostile_zfail_la_CPPFLAGS = $(AM_CPPFLAGS) -DSTUB_PRECEDENCE=1 -DSTUB_FACTORY_FAILS
tests_loader_stubs_libhostile_zfail_la_LDFLAGS = $(STUB_LDFLAGS)
tests_loader_stubs_libhostile_zfail_la_LIBADD = $(STUB_LIBADD)

# fakeref: id 'reference', registers but its factory fails (it must not
# shadow the real reference backend)
tests_loader_stubs_libhostile_fakeref_la_SOURCES = tests/loader/stubs/stub_plugin.c
tests_loader_stubs_libhostile_fakeref_la_CPPFLAGS = $(AM_CPPFLAGS) -DSTUB_ID='"reference"' -DSTUB_PRECEDENCE=1 -DSTUB_FACTORY_FAILS
tests_loader_stubs_libhostile_fakeref_la_LDFLAGS = $(STUB_LDFLAGS)
tests_loader_stubs_libhostile_fakeref_la_LIBADD = $(STUB_LIBADD)

# escape: id 'escape', terminal escapes in its version and description,
# and the evil stub's modes ($STUB_EVIL=escmsg, escname)
tests_loader_stubs_libhostile_escape_la_SOURCES = tests/loader/stubs/stub_plugin.c
tests_loader_stubs_libhostile_escape_la_CPPFLAGS = $(AM_CPPFLAGS) -DSTUB_ID='"escape"' -DSTUB_PRECEDENCE=800 -DSTUB_EVIL -DSTUB_ESCAPES
tests_loader_stubs_libhostile_escape_la_LDFLAGS = $(STUB_LDFLAGS)
tests_loader_stubs_libhostile_escape_la_LIBADD = $(STUB_LIBADD)

# nodiv: id 'nodiv', precedence 1 (before every other backend): gid
# const load store mul and add at u32, no div; f16 storage and the f16
# capability in its registration, not in its device profile.  It
# dispatches as the evil stub does with $STUB_EVIL unset (one 16-byte
# output of 0x07 bytes).  Named libselect_*.so, so that no directory
# scan picks it: tests name it (check_select, tests/cli/cli_select.test).
tests_loader_stubs_libselect_nodiv_la_SOURCES = tests/loader/stubs/stub_plugin.c
tests_loader_stubs_libselect_nodiv_la_CPPFLAGS = $(AM_CPPFLAGS) -DSTUB_ID='"nodiv"' -DSTUB_PRECEDENCE=1 -DSTUB_SELECT -DSTUB_EVIL
tests_loader_stubs_libselect_nodiv_la_LDFLAGS = $(STUB_LDFLAGS)
tests_loader_stubs_libselect_nodiv_la_LIBADD = $(STUB_LIBADD)

# guard: id 'guarded', a plugin that trusts its caller (every handle, every
# pointer) and counts the calls that reach it, for check_guard
noinst_HEADERS += tests/loader/stubs/guard_plugin.h
tests_loader_stubs_libhostile_guard_la_SOURCES = tests/loader/stubs/guard_plugin.c
tests_loader_stubs_libhostile_guard_la_LDFLAGS = -module -rpath /nowhere -avoid-version -no-undefined \
	-export-symbols-regex '^(vyre_plugin_|guard_calls$$)'
tests_loader_stubs_libhostile_guard_la_LIBADD = $(STUB_LIBADD)

# The judge stubs (libjudge_*.so: a directory scan of the stubs never
# picks them up) test what the host decides from the file alone
# (tests/loader/check_judge.c, noload.test).
# tiny: an 8-byte vyre_plugin_descriptor object (struct_size 88, magic)
tests_loader_stubs_libjudge_tiny_la_SOURCES = tests/loader/stubs/stub_plugin.c
tests_loader_stubs_libjudge_tiny_la_CPPFLAGS = $(AM_CPPFLAGS) -DSTUB_ID='"tiny"' -DSTUB_TINY_DESC
tests_loader_stubs_libjudge_tiny_la_LDFLAGS = $(STUB_LDFLAGS)
tests_loader_stubs_libjudge_tiny_la_LIBADD = $(STUB_LIBADD)

# funcdesc: a function named vyre_plugin_descriptor
tests_loader_stubs_libjudge_funcdesc_la_SOURCES = tests/loader/stubs/stub_plugin.c
tests_loader_stubs_libjudge_funcdesc_la_CPPFLAGS = $(AM_CPPFLAGS) -DSTUB_ID='"funcdesc"' -DSTUB_FUNC_DESC
tests_loader_stubs_libjudge_funcdesc_la_LDFLAGS = $(STUB_LDFLAGS)
tests_loader_stubs_libjudge_funcdesc_la_LIBADD = $(STUB_LIBADD)

# major2: ABI major 2, with a constructor that creates $STUB_CTOR_MARKER
tests_loader_stubs_libjudge_major2_la_SOURCES = tests/loader/stubs/stub_plugin.c
tests_loader_stubs_libjudge_major2_la_CPPFLAGS = $(AM_CPPFLAGS) -DSTUB_ID='"major2"' -DSTUB_MAJOR=2 -DSTUB_CTOR_MARKER
tests_loader_stubs_libjudge_major2_la_LDFLAGS = $(STUB_LDFLAGS)
tests_loader_stubs_libjudge_major2_la_LIBADD = $(STUB_LIBADD)

# ctor: a working plugin with that constructor
tests_loader_stubs_libjudge_ctor_la_SOURCES = tests/loader/stubs/stub_plugin.c
tests_loader_stubs_libjudge_ctor_la_CPPFLAGS = $(AM_CPPFLAGS) -DSTUB_ID='"ctor"' -DSTUB_CTOR_MARKER
tests_loader_stubs_libjudge_ctor_la_LDFLAGS = $(STUB_LDFLAGS)
tests_loader_stubs_libjudge_ctor_la_LIBADD = $(STUB_LIBADD)

# draft: descriptor release 0 serving minor 0 only (could be the 0.1 draft)
tests_loader_stubs_libjudge_draft_la_SOURCES = tests/loader/stubs/stub_plugin.c
tests_loader_stubs_libjudge_draft_la_CPPFLAGS = $(AM_CPPFLAGS) -DSTUB_ID='"draft"' -DSTUB_RELEASE=0 -DSTUB_ABI10 -DSTUB_MINOR_MIN=0 -DSTUB_MINOR_MAX=0
tests_loader_stubs_libjudge_draft_la_LDFLAGS = $(STUB_LDFLAGS)
tests_loader_stubs_libjudge_draft_la_LIBADD = $(STUB_LIBADD)

# pre10: descriptor release 0 serving minors 0..1 (a pre-1.0.0 build of ABI 1.1)
tests_loader_stubs_libjudge_pre10_la_SOURCES = tests/loader/stubs/stub_plugin.c
tests_loader_stubs_libjudge_pre10_la_CPPFLAGS = $(AM_CPPFLAGS) -DSTUB_ID='"pre10"' -DSTUB_RELEASE=0 -DSTUB_MINOR_MIN=0 -DSTUB_MINOR_MAX=1
tests_loader_stubs_libjudge_pre10_la_LDFLAGS = $(STUB_LDFLAGS)
tests_loader_stubs_libjudge_pre10_la_LIBADD = $(STUB_LIBADD)

# mutable: a writable descriptor its constructor changes once loaded
tests_loader_stubs_libjudge_mutable_la_SOURCES = tests/loader/stubs/stub_plugin.c
tests_loader_stubs_libjudge_mutable_la_CPPFLAGS = $(AM_CPPFLAGS) -DSTUB_ID='"mutable"' -DSTUB_MUTABLE_DESC
tests_loader_stubs_libjudge_mutable_la_LDFLAGS = $(STUB_LDFLAGS)
tests_loader_stubs_libjudge_mutable_la_LIBADD = $(STUB_LIBADD)

# sysv: a working plugin with only a DT_HASH table (no DT_GNU_HASH)
tests_loader_stubs_libjudge_sysv_la_SOURCES = tests/loader/stubs/stub_plugin.c
tests_loader_stubs_libjudge_sysv_la_CPPFLAGS = $(AM_CPPFLAGS) -DSTUB_ID='"sysv"'
tests_loader_stubs_libjudge_sysv_la_LDFLAGS = $(STUB_LDFLAGS) -Wl,--hash-style=sysv
tests_loader_stubs_libjudge_sysv_la_LIBADD = $(STUB_LIBADD)

# imports: needs a vyre_ function no libvyre has (dlopen fails; the Fix
# names vyre-plugin.pc)
tests_loader_stubs_libjudge_imports_la_SOURCES = tests/loader/stubs/stub_plugin.c
tests_loader_stubs_libjudge_imports_la_CPPFLAGS = $(AM_CPPFLAGS) -DSTUB_ID='"imports"' -DSTUB_IMPORTS_VYRE
tests_loader_stubs_libjudge_imports_la_LDFLAGS = $(STUB_LDFLAGS)
tests_loader_stubs_libjudge_imports_la_LIBADD = $(STUB_LIBADD)

# The plugins whose own code attacks the host (hostile_code.c; check_probe):
# named libhostile_*.so, never picked by a directory scan.
HOSTILE_CODE_LDFLAGS = -module -rpath /nowhere -avoid-version -no-undefined \
	-export-symbols-regex '^vyre_plugin_'
check_LTLIBRARIES += tests/loader/stubs/libhostile_segv.la tests/loader/stubs/libhostile_hang.la \
	tests/loader/stubs/libhostile_reopen.la tests/loader/stubs/libhostile_recreate.la
# segv: its constructor dereferences NULL
tests_loader_stubs_libhostile_segv_la_SOURCES = tests/loader/stubs/hostile_code.c
tests_loader_stubs_libhostile_segv_la_CPPFLAGS = $(AM_CPPFLAGS) -DHOSTILE_ID='"segv"' -DHOSTILE_CTOR_SEGV
tests_loader_stubs_libhostile_segv_la_LDFLAGS = $(HOSTILE_CODE_LDFLAGS)
tests_loader_stubs_libhostile_segv_la_LIBADD = $(STUB_LIBADD) -ldl
# hang: its entry never returns
tests_loader_stubs_libhostile_hang_la_SOURCES = tests/loader/stubs/hostile_code.c
tests_loader_stubs_libhostile_hang_la_CPPFLAGS = $(AM_CPPFLAGS) -DHOSTILE_ID='"hang"' -DHOSTILE_ENTRY_HANG
tests_loader_stubs_libhostile_hang_la_LDFLAGS = $(HOSTILE_CODE_LDFLAGS)
tests_loader_stubs_libhostile_hang_la_LIBADD = $(STUB_LIBADD) -ldl
# reopen: its entry opens a host on $HOSTILE_SEARCH_PATH
tests_loader_stubs_libhostile_reopen_la_SOURCES = tests/loader/stubs/hostile_code.c
tests_loader_stubs_libhostile_reopen_la_CPPFLAGS = $(AM_CPPFLAGS) -DHOSTILE_ID='"reopen"' -DHOSTILE_ENTRY_REOPEN
tests_loader_stubs_libhostile_reopen_la_LDFLAGS = $(HOSTILE_CODE_LDFLAGS)
tests_loader_stubs_libhostile_reopen_la_LIBADD = $(STUB_LIBADD) -ldl
# recreate: its factory creates the best backend of a host on $HOSTILE_SEARCH_PATH
tests_loader_stubs_libhostile_recreate_la_SOURCES = tests/loader/stubs/hostile_code.c
tests_loader_stubs_libhostile_recreate_la_CPPFLAGS = $(AM_CPPFLAGS) -DHOSTILE_ID='"recreate"' -DHOSTILE_CREATE_REENTER
tests_loader_stubs_libhostile_recreate_la_LDFLAGS = $(HOSTILE_CODE_LDFLAGS)
tests_loader_stubs_libhostile_recreate_la_LIBADD = $(STUB_LIBADD) -ldl

# unrelated: a library in the stub directory that is not named as a
# backend; discovery must never open it (its constructor would run)
tests_loader_stubs_libunrelated_la_SOURCES = tests/loader/stubs/unrelated.c
tests_loader_stubs_libunrelated_la_LDFLAGS = -module -rpath /nowhere -avoid-version -no-undefined

if HAVE_CHECK
# The loader suite, against the installed-style shared library.
check_PROGRAMS += tests/loader/check_loader
TESTS += tests/loader/check_loader
tests_loader_check_loader_SOURCES = tests/loader/check_loader.c
tests_loader_check_loader_CPPFLAGS = $(AM_CPPFLAGS) \
	-DVYRE_STUB_DIR='"$(abs_top_builddir)/tests/loader/stubs/.libs"'
tests_loader_check_loader_CFLAGS = $(AM_CFLAGS) $(CHECK_CFLAGS)
tests_loader_check_loader_LDADD = host-stub/loader/libvyre-host.la abi/libvyre.la $(CHECK_LIBS)

# The checking instance: caller checks, handles, lifetimes, factory statuses.
check_PROGRAMS += tests/loader/check_guard
TESTS += tests/loader/check_guard
tests_loader_check_guard_SOURCES = tests/loader/check_guard.c
tests_loader_check_guard_CPPFLAGS = $(AM_CPPFLAGS) \
	-DVYRE_STUB_DIR='"$(abs_top_builddir)/tests/loader/stubs/.libs"'
tests_loader_check_guard_CFLAGS = $(AM_CFLAGS) $(CHECK_CFLAGS)
tests_loader_check_guard_LDADD = host-stub/loader/libvyre-host.la abi/libvyre.la $(CHECK_LIBS)

# Judging a plugin from its file: hostile descriptors and crafted ELF
# files refused without dlopen, VYRE_HOST_NO_LOAD.
check_PROGRAMS += tests/loader/check_judge
TESTS += tests/loader/check_judge
tests_loader_check_judge_SOURCES = tests/loader/check_judge.c
tests_loader_check_judge_CPPFLAGS = $(tests_loader_check_loader_CPPFLAGS)
tests_loader_check_judge_CFLAGS = $(AM_CFLAGS) $(CHECK_CFLAGS)
tests_loader_check_judge_LDADD = host-stub/loader/libvyre-host.la abi/libvyre.la $(CHECK_LIBS)

# Judging a new plugin file in a child (vyre-probe), its cache, VYRE_PROBE=0;
# plugin code that re-enters libvyre-host.
check_PROGRAMS += tests/loader/check_probe
TESTS += tests/loader/check_probe
tests_loader_check_probe_SOURCES = tests/loader/check_probe.c
tests_loader_check_probe_CPPFLAGS = $(tests_loader_check_loader_CPPFLAGS)
tests_loader_check_probe_CFLAGS = $(AM_CFLAGS) $(CHECK_CFLAGS)
tests_loader_check_probe_LDADD = host-stub/loader/libvyre-host.la abi/libvyre.la $(CHECK_LIBS)

# The same suite against hosts of ABI minor N+1 (2) and N-1 (0): version
# skew both ways with plugins of minors N-1, N and N+1 (test_negotiate_plugins).
check_PROGRAMS += tests/loader/check_loader_skew tests/loader/check_loader_skew0
TESTS += tests/loader/check_loader_skew tests/loader/check_loader_skew0
tests_loader_check_loader_skew_SOURCES = tests/loader/check_loader.c host-stub/loader/host.c host-stub/loader/discover.c \
	host-stub/loader/loader.c host-stub/loader/child.c $(HOST_GUARD_SOURCES) host-stub/loader/elfcheck.c \
	host-stub/loader/elfvers.c \
	host-stub/loader/api.c $(HOST_VALIDATE_SOURCES)
tests_loader_check_loader_skew_CPPFLAGS = $(AM_CPPFLAGS) \
	-DVYRE_HOST_ABI_MINOR=2 -DVYRE_PLUGINDIR='"/nonexistent"' -DVYRE_PROBE_PROGRAM='"/nonexistent/vyre-probe"' \
	-DVYRE_STUB_DIR='"$(abs_top_builddir)/tests/loader/stubs/.libs"'
tests_loader_check_loader_skew_CFLAGS = $(AM_CFLAGS) $(CHECK_CFLAGS)
tests_loader_check_loader_skew_LDADD = abi/libvyre-private.la $(CHECK_LIBS)
tests_loader_check_loader_skew0_SOURCES = $(tests_loader_check_loader_skew_SOURCES)
tests_loader_check_loader_skew0_CPPFLAGS = $(AM_CPPFLAGS) \
	-DVYRE_HOST_ABI_MINOR=0 -DVYRE_PLUGINDIR='"/nonexistent"' -DVYRE_PROBE_PROGRAM='"/nonexistent/vyre-probe"' \
	-DVYRE_STUB_DIR='"$(abs_top_builddir)/tests/loader/stubs/.libs"'
tests_loader_check_loader_skew0_CFLAGS = $(tests_loader_check_loader_skew_CFLAGS)
tests_loader_check_loader_skew0_LDADD = $(tests_loader_check_loader_skew_LDADD)

# Choosing a backend for a program (vyre_host_create_for, select.c).
check_PROGRAMS += tests/loader/check_select
TESTS += tests/loader/check_select
tests_loader_check_select_SOURCES = tests/loader/check_select.c
tests_loader_check_select_CPPFLAGS = $(AM_CPPFLAGS) \
	-DVYRE_STUB_DIR='"$(abs_top_builddir)/tests/loader/stubs/.libs"'
tests_loader_check_select_CFLAGS = $(AM_CFLAGS) $(CHECK_CFLAGS)
tests_loader_check_select_LDADD = host-stub/loader/libvyre-host.la abi/libvyre.la $(CHECK_LIBS)
endif

# `vyre list --no-probe` runs no plugin code (shell, like tests/cli).
TESTS += tests/loader/noload.test
EXTRA_DIST += tests/loader/noload.test

# The validation layer (docs/host.md, "Validation layer"): a plugin over
# the reference with a planted add miscompile (named libmiscompile.so,
# not libvyre-*.so, so that directory scans of the stubs never list it),
# and the suite that catches it and replays its capsule with `vyre conform`.
check_LTLIBRARIES += tests/loader/stubs/libmiscompile.la
tests_loader_stubs_libmiscompile_la_SOURCES = tests/loader/stubs/miscompile.c
tests_loader_stubs_libmiscompile_la_CPPFLAGS = $(AM_CPPFLAGS) \
	-DMISCOMPILE_INNER='"$(abs_top_builddir)/host-stub/ref/.libs/libvyre-ref.so"'
tests_loader_stubs_libmiscompile_la_LDFLAGS = -module -rpath /nowhere -avoid-version -no-undefined \
	-export-symbols-regex '^(vyre_plugin_|miscompile_seen_calls$$)'
tests_loader_stubs_libmiscompile_la_LIBADD = abi/libvyre-private.la -ldl -lpthread
if HAVE_CHECK
check_PROGRAMS += tests/loader/check_validate
TESTS += tests/loader/check_validate
tests_loader_check_validate_SOURCES = tests/loader/check_validate.c
tests_loader_check_validate_CPPFLAGS = $(AM_CPPFLAGS) \
	-DVYRE_TEST_BUILD_DIR='"$(abs_top_builddir)"'
tests_loader_check_validate_CFLAGS = $(AM_CFLAGS) $(CHECK_CFLAGS)
tests_loader_check_validate_LDADD = host-stub/loader/libvyre-host.la abi/libvyre.la $(CHECK_LIBS) -ldl
endif

# The crafted-ELF sweep: one-field variants of the good stub (every dynamic
# entry's value and tag, every program-header field), each opened by a
# host; the host must survive all.  make check opens about 120 of them;
# `tests/loader/elfsweep --all` opens every one.
check_PROGRAMS += tests/loader/elfsweep
TESTS += tests/loader/elfsweep
tests_loader_elfsweep_SOURCES = tests/loader/elfsweep.c
tests_loader_elfsweep_LDADD = host-stub/loader/libvyre-host.la abi/libvyre.la
