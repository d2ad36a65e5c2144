# bench/mathcost/local.mk -- the math-cost benchmark (bench/mathcost/README.md): the driver that times each transcendental and a row softmax through vyre beside CUDA C.
noinst_PROGRAMS += bench/mathcost/mathcost
noinst_HEADERS += bench/mathcost/mathcost.h
bench_mathcost_mathcost_SOURCES = bench/mathcost/mathcost.c
# The programs are read from the source tree at run time (--dir overrides).
bench_mathcost_mathcost_CPPFLAGS = $(AM_CPPFLAGS) \
	-DVYRE_MATHCOST_DIR='"$(abs_top_srcdir)/bench/mathcost"'
# -ldl: the CUDA peers (libmcpeers.so) are opened at run time, never linked.
bench_mathcost_mathcost_LDADD = host-stub/loader/libvyre-host.la abi/libvyre.la -lm -ldl
# The CUDA peers and the scripts: built and run by run.sh on a GPU machine,
# never by make (the build needs no CUDA toolkit).
EXTRA_DIST += bench/mathcost/README.md bench/mathcost/mathcost.test bench/mathcost/unary.vyre \
	bench/mathcost/softmax.vyre bench/mathcost/softmax_gen.sh bench/mathcost/peers.cu \
	bench/mathcost/run.sh bench/mathcost/sass.sh
# Every function and the softmax at a small size on the reference backend,
# checked against double-precision libm; softmax.vyre is softmax_gen.sh's
# output; every program's PTX at each budget assembles with ptxas.
TESTS += bench/mathcost/mathcost.test
