# tests/fuzz/local.mk -- the fuzzer end to end (the planted bug found and minimized) and ptxas fuzzing.
TESTS += tests/fuzz/fuzz.test tests/fuzz/fuzz_ptxas.test
EXTRA_DIST += tests/fuzz/fuzz.test tests/fuzz/fuzz_ptxas.test
