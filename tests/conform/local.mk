# tests/conform/local.mk -- the conformance harness: its unit suite, a planted-bug plugin, the CLI end to end over the corpus.

# A plugin with a planted bug (the reference, with mulhi results flipped):
# the runner and the fuzzer must find, capsule and minimize it.  Test
# artifacts, never installed: they may name the build tree.
check_LTLIBRARIES += tests/conform/libconform_mutant.la
tests_conform_libconform_mutant_la_SOURCES = tests/conform/conform_mutant.c
tests_conform_libconform_mutant_la_CPPFLAGS = $(AM_CPPFLAGS) \
	-DMUTANT_INNER_DEFAULT='"$(abs_top_builddir)/host-stub/ref/.libs/libvyre-ref.so"'
tests_conform_libconform_mutant_la_LDFLAGS = -module -rpath /nowhere -avoid-version -no-undefined \
	-export-symbols-regex '^vyre_plugin_(descriptor|entry)$$'
tests_conform_libconform_mutant_la_LIBADD = abi/libvyre-private.la -ldl -lpthread -lm

# A small backend from the same source (-DMUTANT_SMALL): a few ops, add
# and mul at u32 only, neither int64 nor out_range; it refuses programs
# beyond that.  Certifies with its other claims unreachable, not untested.
check_LTLIBRARIES += tests/conform/libconform_small.la
tests_conform_libconform_small_la_SOURCES = tests/conform/conform_mutant.c
tests_conform_libconform_small_la_CPPFLAGS = $(tests_conform_libconform_mutant_la_CPPFLAGS) -DMUTANT_SMALL
tests_conform_libconform_small_la_LDFLAGS = $(tests_conform_libconform_mutant_la_LDFLAGS)
tests_conform_libconform_small_la_LIBADD = $(tests_conform_libconform_mutant_la_LIBADD)

# Two more from it for `vyre fuzz` (tests/fuzz/fuzz.test): -DMUTANT_TINY
# (const, gid, load, add, store at u32; storage u32) and -DMUTANT_NONE
# (load, add, store: no program is within its claims).
check_LTLIBRARIES += tests/conform/libconform_tiny.la tests/conform/libconform_none.la
tests_conform_libconform_tiny_la_SOURCES = tests/conform/conform_mutant.c
tests_conform_libconform_tiny_la_CPPFLAGS = $(tests_conform_libconform_mutant_la_CPPFLAGS) -DMUTANT_TINY
tests_conform_libconform_tiny_la_LDFLAGS = $(tests_conform_libconform_mutant_la_LDFLAGS)
tests_conform_libconform_tiny_la_LIBADD = $(tests_conform_libconform_mutant_la_LIBADD)
tests_conform_libconform_none_la_SOURCES = tests/conform/conform_mutant.c
tests_conform_libconform_none_la_CPPFLAGS = $(tests_conform_libconform_mutant_la_CPPFLAGS) -DMUTANT_NONE
tests_conform_libconform_none_la_LDFLAGS = $(tests_conform_libconform_mutant_la_LDFLAGS)
tests_conform_libconform_none_la_LIBADD = $(tests_conform_libconform_mutant_la_LIBADD)

# The reference without correctly_rounded (-DMUTANT_NOCR): it refuses
# strict transcendentals, and `vyre conform` must pass it on ops.strict.
check_LTLIBRARIES += tests/conform/libconform_nocr.la
tests_conform_libconform_nocr_la_SOURCES = tests/conform/conform_mutant.c
tests_conform_libconform_nocr_la_CPPFLAGS = $(tests_conform_libconform_mutant_la_CPPFLAGS) -DMUTANT_NOCR
tests_conform_libconform_nocr_la_LDFLAGS = $(tests_conform_libconform_mutant_la_LDFLAGS)
tests_conform_libconform_nocr_la_LIBADD = $(tests_conform_libconform_mutant_la_LIBADD)

# Plugins no host can use, one per way (tests/conform/conform_broken.c):
# each loads and passes the static checks, and `vyre conform --plugin`
# must fail it; the no-device one (VYRE_NO_DEVICE) is the only SKIPPED.
BROKEN_PLUGIN_LDFLAGS = -module -rpath /nowhere -avoid-version -no-undefined \
	-export-symbols-regex '^vyre_plugin_(descriptor|entry)$$'
check_LTLIBRARIES += tests/conform/libbroken_no_dispatch.la
tests_conform_libbroken_no_dispatch_la_SOURCES = tests/conform/conform_broken.c
tests_conform_libbroken_no_dispatch_la_CPPFLAGS = $(AM_CPPFLAGS) -DBROKEN_NO_DISPATCH
tests_conform_libbroken_no_dispatch_la_LDFLAGS = $(BROKEN_PLUGIN_LDFLAGS)
tests_conform_libbroken_no_dispatch_la_LIBADD = abi/libvyre-private.la
check_LTLIBRARIES += tests/conform/libbroken_short_vtable.la
tests_conform_libbroken_short_vtable_la_SOURCES = tests/conform/conform_broken.c
tests_conform_libbroken_short_vtable_la_CPPFLAGS = $(AM_CPPFLAGS) -DBROKEN_SHORT_VTABLE
tests_conform_libbroken_short_vtable_la_LDFLAGS = $(BROKEN_PLUGIN_LDFLAGS)
tests_conform_libbroken_short_vtable_la_LIBADD = abi/libvyre-private.la
check_LTLIBRARIES += tests/conform/libbroken_vt_null.la
tests_conform_libbroken_vt_null_la_SOURCES = tests/conform/conform_broken.c
tests_conform_libbroken_vt_null_la_CPPFLAGS = $(AM_CPPFLAGS) -DBROKEN_VT_NULL
tests_conform_libbroken_vt_null_la_LDFLAGS = $(BROKEN_PLUGIN_LDFLAGS)
tests_conform_libbroken_vt_null_la_LIBADD = abi/libvyre-private.la
check_LTLIBRARIES += tests/conform/libbroken_no_destroy.la
tests_conform_libbroken_no_destroy_la_SOURCES = tests/conform/conform_broken.c
tests_conform_libbroken_no_destroy_la_CPPFLAGS = $(AM_CPPFLAGS) -DBROKEN_NO_DESTROY
tests_conform_libbroken_no_destroy_la_LDFLAGS = $(BROKEN_PLUGIN_LDFLAGS)
tests_conform_libbroken_no_destroy_la_LIBADD = abi/libvyre-private.la
check_LTLIBRARIES += tests/conform/libbroken_struct_size.la
tests_conform_libbroken_struct_size_la_SOURCES = tests/conform/conform_broken.c
tests_conform_libbroken_struct_size_la_CPPFLAGS = $(AM_CPPFLAGS) -DBROKEN_STRUCT_SIZE
tests_conform_libbroken_struct_size_la_LDFLAGS = $(BROKEN_PLUGIN_LDFLAGS)
tests_conform_libbroken_struct_size_la_LIBADD = abi/libvyre-private.la
check_LTLIBRARIES += tests/conform/libbroken_no_instance.la
tests_conform_libbroken_no_instance_la_SOURCES = tests/conform/conform_broken.c
tests_conform_libbroken_no_instance_la_CPPFLAGS = $(AM_CPPFLAGS) -DBROKEN_NO_INSTANCE
tests_conform_libbroken_no_instance_la_LDFLAGS = $(BROKEN_PLUGIN_LDFLAGS)
tests_conform_libbroken_no_instance_la_LIBADD = abi/libvyre-private.la
check_LTLIBRARIES += tests/conform/libbroken_bad_status.la
tests_conform_libbroken_bad_status_la_SOURCES = tests/conform/conform_broken.c
tests_conform_libbroken_bad_status_la_CPPFLAGS = $(AM_CPPFLAGS) -DBROKEN_BAD_STATUS
tests_conform_libbroken_bad_status_la_LDFLAGS = $(BROKEN_PLUGIN_LDFLAGS)
tests_conform_libbroken_bad_status_la_LIBADD = abi/libvyre-private.la
check_LTLIBRARIES += tests/conform/libbroken_fails.la
tests_conform_libbroken_fails_la_SOURCES = tests/conform/conform_broken.c
tests_conform_libbroken_fails_la_CPPFLAGS = $(AM_CPPFLAGS) -DBROKEN_FAILS
tests_conform_libbroken_fails_la_LDFLAGS = $(BROKEN_PLUGIN_LDFLAGS)
tests_conform_libbroken_fails_la_LIBADD = abi/libvyre-private.la
check_LTLIBRARIES += tests/conform/libbroken_no_device.la
tests_conform_libbroken_no_device_la_SOURCES = tests/conform/conform_broken.c
tests_conform_libbroken_no_device_la_CPPFLAGS = $(AM_CPPFLAGS) -DBROKEN_NO_DEVICE
tests_conform_libbroken_no_device_la_LDFLAGS = $(BROKEN_PLUGIN_LDFLAGS)
tests_conform_libbroken_no_device_la_LIBADD = abi/libvyre-private.la

if HAVE_CHECK
check_PROGRAMS += tests/conform/check_conform
TESTS += tests/conform/check_conform
tests_conform_check_conform_SOURCES = tests/conform/check_conform.c
tests_conform_check_conform_CPPFLAGS = $(AM_CPPFLAGS) -DVYRE_TEST_BUILD_DIR='"$(abs_top_builddir)"'
tests_conform_check_conform_CFLAGS = $(AM_CFLAGS) $(CHECK_CFLAGS)
tests_conform_check_conform_LDADD = host-stub/fuzz/libvyre-fuzz.la host-stub/fuzz/libvyre-progen.la \
	host-stub/conform/libvyre-conform.la \
	host-stub/loader/libvyre-host.la plugin/codegen/libvyre-codegen.la \
	plugin/ptxmath/libvyre-ptxmath.la abi/libvyre.la abi/libvyre-support.la $(CHECK_LIBS) -lm
# The ptxas batches, from the same source: SKIP (77) without a ptxas.
check_PROGRAMS += tests/conform/ptxas_conform
TESTS += tests/conform/ptxas_conform
tests_conform_ptxas_conform_SOURCES = $(tests_conform_check_conform_SOURCES)
tests_conform_ptxas_conform_CPPFLAGS = $(tests_conform_check_conform_CPPFLAGS) -DCHECK_PTXAS_ONLY
tests_conform_ptxas_conform_CFLAGS = $(tests_conform_check_conform_CFLAGS)
tests_conform_ptxas_conform_LDADD = $(tests_conform_check_conform_LDADD)
endif

# The CLI end to end (the reference against itself over the corpus, the
# planted bug) and the corpus generator's check.
TESTS += tests/conform/conform.test tests/conform/conform_corpus.test \
	tests/conform/conform_broken.test
EXTRA_DIST += tests/conform/conform.test tests/conform/conform_corpus.test \
	tests/conform/conform_broken.test tests/conformance

# The corpus is installed, so the installed `vyre conform` finds it.
conformdir = $(pkgdatadir)/conformance
install-data-local: install-conform-corpus
install-conform-corpus:
	@for f in `cd $(srcdir)/tests/conformance && find . -name '*.vyre' | LC_ALL=C sort`; do \
	  d=`dirname "$$f"`; $(MKDIR_P) "$(DESTDIR)$(conformdir)/$$d" || exit 1; \
	  $(INSTALL_DATA) "$(srcdir)/tests/conformance/$$f" "$(DESTDIR)$(conformdir)/$$f" || exit 1; \
	done
uninstall-local: uninstall-conform-corpus
uninstall-conform-corpus:
	rm -rf "$(DESTDIR)$(conformdir)"
.PHONY: install-conform-corpus uninstall-conform-corpus
