#!/usr/bin/env python3
"""numpy_basics.py -- the vyre Python package with NumPy: list the backends, open the best, run an example program and one built in Python, check both against NumPy.

    PYTHONPATH=BUILD/python python3 examples/python/numpy_basics.py [--backend ID]

Runs on the best backend found (CUDA with an NVIDIA GPU, else the CPU
reference backend); exits 1 when a result differs from NumPy's.
"""
import argparse
import os
import sys

import numpy as np

import vyre

HERE = os.path.dirname(os.path.abspath(__file__))


def softsign_program():
    """y[i] = x[i] / (1 + |x[i]|), clamped to [-lo, lo]: built with vyre.Builder."""
    b = vyre.Builder(256)
    lo = b.buffer("lo", "f32", "uniform", count=1)
    x = b.buffer("x", "f32", "ro")
    y = b.buffer("y", "f32", "rw")  # sized by its input; returned (rw = input and output)
    i = b.gid()
    with b.if_(i < x.len()):
        v = x[i]
        s = v / (b.abs(v) + 1.0)
        bound = lo[b.u32(0)]
        y[i] = b.min(b.max(s, -bound), bound)
    return b.finish(name="softsign")


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--backend", help="backend id (default: the best)")
    args = ap.parse_args()

    for info in vyre.backends():
        print("backend %-10s %-12s %s" % (info.id or "?", info.status,
                                         info.reason or info.description))
    ok = True
    with vyre.open(args.backend) as be:
        print("using %s on %s" % (be.id, be.profile().name))

        # 1. examples/saxpy.vyre: y = a * x + y with one rounding (fma).
        saxpy = vyre.load(os.path.join(HERE, "..", "saxpy.vyre"))
        x = np.linspace(-4, 4, 10000, dtype=np.float32)
        y = np.full(10000, 0.25, dtype=np.float32)
        (out,), t = be.dispatch(saxpy, 2.5, x, y, timing=True)
        # The exact a * x + y (in double: 27 bits), rounded once to f32, as fma is.
        want = (2.5 * x.astype(np.float64) + y.astype(np.float64)).astype(np.float32)
        same = out.tobytes() == want.tobytes()
        ok &= same
        print("saxpy on %d elements: %s (%.3f ms wall)" % (
            len(x), "bit-exact with NumPy" if same else "DIFFERS from NumPy", t.wall_ns / 1e6))

        # 2. A program built in Python, in and out through a bytearray.
        prog = softsign_program()
        print("built %r: buffers %s, %d instructions" % (
            prog.name, ", ".join(b.name for b in prog.buffers), prog.inst_count))
        xs = np.random.default_rng(0).standard_normal(4096).astype(np.float32) * 8
        dst = bytearray(xs.nbytes)
        be.dispatch(prog, np.float32([0.9]), xs, np.zeros_like(xs), out=[dst])
        got = np.frombuffer(dst, dtype=np.float32)
        s = xs / (np.abs(xs) + np.float32(1))
        want = np.minimum(np.maximum(s, np.float32(-0.9)), np.float32(0.9))
        same = got.tobytes() == want.tobytes()
        ok &= same
        print("softsign + clamp on %d elements: %s" % (
            len(xs), "bit-exact with NumPy" if same else "DIFFERS from NumPy"))

        # 3. Resident buffers: the data stays on the backend between runs.
        xi = np.arange(-5000, 5000, dtype=np.float32)  # integers: every partial sum is exact
        with be.upload(xi) as rx, be.upload(np.zeros_like(xi)) as ry, \
                be.upload(np.float32([1])) as ra:
            reads = be.sequence([(saxpy, [ra, rx, ry])], repeat=8, reads=[ry])
        same = np.array_equal(reads[0], 8 * xi)
        ok &= same
        print("8 resident saxpy steps in one sequence: %s" % ("y = 8x exactly" if same else "WRONG"))
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
