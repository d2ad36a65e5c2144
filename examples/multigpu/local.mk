# examples/multigpu/local.mk -- the multi-GPU examples (docs/multi-gpu.md): one process with a thread and an instance per device, and one MPI rank per device (built when configure finds mpicc).
# Built with `make` (uninstalled, against the build tree's libvyre-host) so
# that a built tree runs them on a GPU machine as they are.
noinst_PROGRAMS += examples/multigpu/multigpu
examples_multigpu_multigpu_SOURCES = examples/multigpu/multigpu.c examples/multigpu/shard.h
examples_multigpu_multigpu_LDADD = host-stub/loader/libvyre-host.la abi/libvyre.la -lpthread -lm

if HAVE_MPI
noinst_PROGRAMS += examples/multigpu/multigpu_mpi
examples_multigpu_multigpu_mpi_SOURCES = examples/multigpu/multigpu_mpi.c examples/multigpu/shard.h
examples_multigpu_multigpu_mpi_CPPFLAGS = $(AM_CPPFLAGS) $(MPI_CPPFLAGS)
examples_multigpu_multigpu_mpi_LDADD = host-stub/loader/libvyre-host.la abi/libvyre.la -lpthread -lm
# Linked by the MPI compiler wrapper, which adds the MPI libraries.
examples_multigpu_multigpu_mpi_LINK = $(LIBTOOL) $(AM_V_lt) --tag=CC $(AM_LIBTOOLFLAGS) \
	$(LIBTOOLFLAGS) --mode=link $(MPICC) $(AM_CFLAGS) $(CFLAGS) $(AM_LDFLAGS) $(LDFLAGS) -o $@
else
EXTRA_DIST += examples/multigpu/multigpu_mpi.c
endif

# The one-process example on the reference backend (one device) and the
# MPI one through mpirun -np 2 (skipped without mpirun or the program).
TESTS += tests/examples/multigpu.test tests/examples/multigpu_mpi.test
EXTRA_DIST += tests/examples/multigpu.test tests/examples/multigpu_mpi.test \
	examples/multigpu/README.md
AM_TESTS_ENVIRONMENT += MPIRUN='$(MPIRUN)'; export MPIRUN;
dist_doc_DATA += docs/multi-gpu.md
