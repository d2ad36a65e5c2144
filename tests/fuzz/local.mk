# tests/fuzz/local.mk -- the fuzzer end to end (the planted bug found and minimized) and ptxas fuzzing.
TESTS += tests/fuzz/fuzz.test tests/fuzz/fuzz_ptxas.test tests/fuzz/fuzz_sequences.test
EXTRA_DIST += tests/fuzz/fuzz.test tests/fuzz/fuzz_ptxas.test tests/fuzz/fuzz_sequences.test

# In-tree libFuzzer targets (docs/fuzzing.md): tests/fuzz/libfuzz/fuzz_NAME.c,
# one per NAME below (built as tests/fuzz/bin/fuzz_NAME); regression inputs under tests/fuzz/corpus/NAME/.
# `make fuzz` builds them with clang (configure looks for one that links
# -fsanitize=fuzzer); `make fuzz-run FUZZ_SECONDS=N` runs each N seconds.
FUZZ_TARGETS = decode asm case elf refrun elfcheck elfread
# The sources the targets link, instrumented into one archive.
FUZZ_LIB_FILES = $(VYRE_FORMAT_SOURCES) $(VYRE_SUPPORT_SOURCES) \
	$(host_stub_conform_libvyre_conform_la_SOURCES) $(host_stub_ref_libvyre_ref_la_SOURCES) \
	$(plugin_ptxmath_libvyre_ptxmath_la_SOURCES) \
	host-stub/loader/elfcheck.c
FUZZ_SECONDS = 60
# Include paths as AM_CPPFLAGS, absolute; a target's extra defines go here.
FUZZ_CPPFLAGS = -I$(abs_top_srcdir)/abi -I$(abs_top_srcdir)/host-stub/loader/include \
	-I$(abs_top_srcdir) -I$(abs_top_builddir) -D_GNU_SOURCE
FUZZ_CFLAGS = -g -O1 -std=c11 -fno-omit-frame-pointer -fsanitize=address,undefined \
	-fno-sanitize-recover=undefined -ffp-contract=off -fno-strict-aliasing
EXTRA_DIST += tests/fuzz/libfuzz/build.sh tests/fuzz/libfuzz/run.sh \
	tests/fuzz/libfuzz/fuzz_decode.c tests/fuzz/libfuzz/fuzz_asm.c tests/fuzz/libfuzz/fuzz_case.c \
	tests/fuzz/libfuzz/fuzz_elf.c tests/fuzz/libfuzz/fuzz_refrun.c tests/fuzz/libfuzz/fuzz_elfcheck.c \
	tests/fuzz/libfuzz/fuzz_elfread.c \
	tests/fuzz/corpus
# Installed: docs/cli.md and docs/conformance.md cite it.
dist_doc_DATA += docs/fuzzing.md
fuzz_env = FUZZ_CC='$(FUZZ_CC)' FUZZ_CFLAGS='$(FUZZ_CFLAGS)' FUZZ_TARGETS='$(FUZZ_TARGETS)' \
	FUZZ_CPPFLAGS='$(FUZZ_CPPFLAGS)' \
	FUZZ_LIB_FILES='$(FUZZ_LIB_FILES)' FUZZ_SECONDS='$(FUZZ_SECONDS)' \
	srcdir='$(abs_top_srcdir)' builddir='$(abs_top_builddir)' VYRE='$(abs_top_builddir)/host-stub/cli/vyre'
if HAVE_LIBFUZZER
fuzz: host-stub/cli/vyre$(EXEEXT)
	@$(fuzz_env) $(SHELL) $(srcdir)/tests/fuzz/libfuzz/build.sh
fuzz-run: fuzz
	@$(fuzz_env) $(SHELL) $(srcdir)/tests/fuzz/libfuzz/run.sh
else
fuzz fuzz-run:
	@echo "make $@: no clang that links -fsanitize=fuzzer ($(FUZZ_CC_REASON)). Fix: install clang and its runtime (Debian: clang libclang-rt-dev) and re-run configure, or pass FUZZ_CC=clang-14 to configure" >&2; exit 1
endif
clean-local: clean-fuzz
clean-fuzz:
	rm -rf tests/fuzz/obj tests/fuzz/bin tests/fuzz/seeds tests/fuzz/work
.PHONY: fuzz fuzz-run clean-fuzz
