# python/local.mk -- the Python package `vyre` (pure ctypes, docs/python.md): copied into the build tree, installed into $(pythondir)/vyre.
#
# <build>/python is importable as it is (PYTHONPATH=<build>/python): the
# sources are copied there when the build tree is not the source tree, and
# python/vyre/_paths.py, written from _paths.py.in, names the install
# libdir.  A package under <top>/python/vyre finds the build tree's
# libraries itself (python/vyre/_lib.py).
vyre_python_sources = python/vyre/__init__.py python/vyre/_lib.py python/vyre/errors.py \
	python/vyre/program.py python/vyre/builder.py python/vyre/_handle.py python/vyre/host.py \
	python/vyre/resident.py python/vyre/backend.py python/vyre/interop.py \
	python/vyre/dlpack.py python/vyre/_ints.py
EXTRA_DIST += $(vyre_python_sources) python/vyre/_paths.py.in \
	examples/python/numpy_basics.py examples/python/fused_sgd.py
dist_doc_DATA += docs/python.md

if HAVE_PYTHON
vyrepythondir = $(pythondir)/vyre
vyrepython_PYTHON = $(vyre_python_sources)
nodist_vyrepython_PYTHON = python/vyre/_paths.py
endif

# Installed files name no build tree: only libdir and plugindir.
python/vyre/_paths.py: $(srcdir)/python/vyre/_paths.py.in Makefile
	$(AM_V_GEN)$(MKDIR_P) python/vyre && \
	  $(SED) -e 's|@libdir[@]|$(libdir)|g' -e 's|@plugindir[@]|$(plugindir)|g' \
	    '$(srcdir)/python/vyre/_paths.py.in' >$@.tmp && mv $@.tmp $@
CLEANFILES += python/vyre/_paths.py

all-local: python/vyre/_paths.py python-copy
python-copy:
	@if test '$(srcdir)' != '.'; then \
	  $(MKDIR_P) python/vyre || exit 1; \
	  for f in $(vyre_python_sources); do \
	    cmp -s '$(srcdir)/'$$f $$f || cp '$(srcdir)/'$$f $$f || exit 1; \
	  done; \
	fi
clean-local: python-clean
python-clean:
	-rm -rf python/vyre/__pycache__ tests/python/__pycache__ examples/python/__pycache__
	-if test '$(srcdir)' != '.'; then rm -f $(vyre_python_sources); fi
.PHONY: python-copy python-clean
