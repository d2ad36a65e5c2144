# tests/examples.mk -- the programs of examples/ end to end: tests/examples.test runs examples/check.py, which compares every output with examples/data.

TESTS += tests/examples.test
# examples/data (inputs, expected outputs, manifest.json) is written by
# examples/gen.py and ships as a directory; check.py verifies it is current.
EXTRA_DIST += tests/examples.test docs/examples.md examples/gen.py examples/check.py examples/data \
	examples/saxpy.vyre examples/f32math.vyre examples/u32math.vyre examples/histogram.vyre \
	examples/reduce.vyre examples/scan.vyre examples/matmul.vyre examples/bitonic_step.vyre \
	examples/bitonic_sort.vyre examples/subgroup.vyre examples/grid_scan.vyre examples/bytescan.vyre
