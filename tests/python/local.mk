# tests/python/local.mk -- the Python package's tests: python.test (CPU, the reference backend) and gpu.test (PyTorch and CuPy on a GPU); each skips (77) without what it needs.
TESTS += tests/python/python.test tests/python/gpu.test
EXTRA_DIST += tests/python/python.test tests/python/gpu.test tests/python/vyretest.py \
	tests/python/test_layout.py tests/python/test_program.py tests/python/test_dispatch.py \
	tests/python/test_resident.py tests/python/test_errors.py tests/python/test_gpu.py \
	tests/python/test_examples.py tests/python/test_interop_fake.py tests/python/test_handle.py \
	tests/python/test_dlpack.py tests/python/test_libload.py tests/python/test_ints.py \
	tests/python/test_hostile.py tests/python/test_threads.py
