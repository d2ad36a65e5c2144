# tests/cli/local.mk -- the `vyre` command end to end (shell; no Check needed) and the examples/ programs checked against examples/data.
# Under `make check-valgrind` they run vyre itself under memcheck.
TESTS += tests/cli/cli_list.test tests/cli/cli_run.test tests/cli/cli_bench.test tests/cli/examples.test \
	tests/cli/cli_plugins.test tests/cli/cli_hostile.test tests/cli/cli_limits.test tests/cli/cli_devices.test \
	tests/cli/cli_json.test tests/cli/cli_term.test tests/cli/cli_man.test tests/cli/cli_values.test tests/cli/cli_files.test \
	tests/cli/cli_select.test tests/cli/cli_open.test
EXTRA_DIST += tests/cli/cli_select.test tests/cli/cli_open.test
EXTRA_DIST += tests/cli/cli_json.test tests/cli/cli_term.test tests/cli/cli_man.test tests/cli/cli_values.test tests/cli/cli_files.test \
	tests/json_schema_check.py
EXTRA_DIST += tests/cli/cli_lib.sh tests/cli/cli_hostile.test tests/cli/cli_limits.test \
	tests/cli/limits/loop_forever.vyre tests/cli/limits/store7.vyre tests/cli/cli_list.test tests/cli/cli_run.test tests/cli/cli_bench.test \
	tests/cli/cli_plugins.test tests/cli/cli_devices.test \
	tests/cli/examples.test
# examples/data (inputs, expected outputs, manifest.json) is written by
# examples/gen.py and ships as a directory; check.py verifies it is current.
EXTRA_DIST += docs/examples.md examples/gen.py examples/check.py examples/data \
	examples/saxpy.vyre examples/f32math.vyre examples/u32math.vyre examples/histogram.vyre \
	examples/reduce.vyre examples/scan.vyre examples/matmul.vyre examples/bitonic_step.vyre \
	examples/bitonic_sort.vyre examples/subgroup.vyre examples/grid_scan.vyre examples/bytescan.vyre \
	examples/matmul_tiled.vyre examples/matmul_tiled.py examples/sum.vyre \
	examples/matmul_mma_bf16.vyre examples/matmul_mma_f16.vyre examples/matmul_mma_i8.vyre examples/matmul_mma.py

# The JSON writer behind every --json (abi/support/json.c), as the CLI uses it.
if HAVE_CHECK
check_PROGRAMS += tests/cli/check_json
TESTS += tests/cli/check_json
tests_cli_check_json_SOURCES = tests/cli/check_json.c
tests_cli_check_json_CFLAGS = $(AM_CFLAGS) $(CHECK_CFLAGS)
tests_cli_check_json_LDADD = abi/libvyre-support.la $(CHECK_LIBS) -lm
endif
