#!/usr/bin/env python3
"""cr_resolve.py -- decides the records of an exhaustive sweep in multiple precision (mpmath).

usage: cr_resolve.py [--exceptions OUT] RECORDS...

RECORDS: files of lines "OP VARIANT KIND X OURS ORACLE" (hex bits), as
tests/ptxmath/cr_sweep (GPU, libdevice f64 oracle) and
tests/ptxmath/sweep_ptxmath -o (CPU, long double oracle) write them: the
inputs whose f32 result the fast oracle could not decide ("undecided"),
and those where it decided and disagreed ("mismatch").  For each record
this computes the correctly rounded, canonical result (round to nearest
even with subnormals, then a subnormal flushed to the zero of its sign, any
NaN 0x7FC00000: docs/semantics.md) with mpmath at 128 bits, again at 256
(and higher until two precisions agree and the value is clear of the
rounding boundary), and compares it with OURS.

Prints one line per (op, variant) and exits 1 if any record of a "cr"
variant is not correctly rounded.  --exceptions OUT writes "OP X Y" for
every record whose OURS is not the correct Y, for cr_table.py.
"""
import struct
import sys

try:
    import mpmath
except ImportError:  # pragma: no cover
    sys.stderr.write("cr_resolve.py: needs mpmath (pip install mpmath)\n")
    sys.exit(77)

NAN = 0x7FC00000
PINF, NINF = 0x7F800000, 0xFF800000


def f32_of_bits(b):
    return struct.unpack("<f", struct.pack("<I", b))[0]


def bits_of_f32(v):
    return struct.unpack("<I", struct.pack("<f", v))[0]


def special(op, x):
    """The result bits for an input the formulas do not cover, else None."""
    neg = x >> 31
    a = x & 0x7FFFFFFF
    if a > 0x7F800000:
        return NAN
    inf = a == 0x7F800000
    zero = a == 0
    if op == "rsqrt":
        if zero:
            return NINF if neg else PINF
        if neg:
            return NAN
        if inf:
            return 0
    elif op in ("exp", "exp2"):
        if inf:
            return 0 if neg else PINF
    elif op in ("log", "log2"):
        if zero:
            return NINF
        if neg:
            return NAN
        if inf:
            return PINF
    elif op in ("sin", "tan"):
        if inf:
            return NAN
        if zero:
            return x
    elif op == "cos":
        if inf:
            return NAN
    elif op in ("asin", "acos"):
        if a > 0x3F800000:
            return NAN
        if op == "asin" and zero:
            return x
    elif op == "atan":
        if zero:
            return x
    elif op == "sinh":
        if zero or inf:
            return x
    elif op == "cosh":
        if inf:
            return PINF
    elif op == "tanh":
        if zero:
            return x
        if inf:
            return 0xBF800000 if neg else 0x3F800000
    return None


def exact(op, xv):
    X = mpmath.mpf(xv)
    if op == "rsqrt":
        return 1 / mpmath.sqrt(X)
    if op == "exp":
        return mpmath.exp(X)
    if op == "exp2":
        return mpmath.power(2, X)
    if op == "log":
        return mpmath.log(X)
    if op == "log2":
        return mpmath.log(X) / mpmath.log(2)
    if op == "atan" and mpmath.isinf(X):
        return mpmath.pi / 2 if X > 0 else -mpmath.pi / 2
    return getattr(mpmath, op)(X)


def round_f32(v, prec):
    """(bits, clear): v rounded as vyre rounds an f32 result; clear is False
    when v lies too close to a rounding boundary for this precision."""
    if v == 0:
        return 0, True
    neg = v < 0
    a = -v if neg else v
    _, e = mpmath.frexp(a)  # a = m 2^e, m in [1/2, 1)
    E = int(e) - 1
    qexp = E - 23 if E >= -126 else -149
    t = mpmath.ldexp(a, -qexp)
    n = int(mpmath.floor(t))
    frac = t - n
    # An exact tie (exp2(-150) = 2^-150) is clear too: two precisions must still agree.
    clear = frac == 0.5 or abs(frac - mpmath.mpf(0.5)) > mpmath.ldexp(1, 40 - prec)
    if frac > 0.5 or (frac == 0.5 and n % 2 == 1):
        n += 1
    r = mpmath.ldexp(n, qexp)
    if r >= mpmath.ldexp(1, 128):
        bits = PINF
    elif r < mpmath.ldexp(1, -126):
        bits = 0  # flushed
    else:
        bits = bits_of_f32(float(r))
    return bits | (0x80000000 if neg else 0), clear


def correct(op, x):
    s = special(op, x)
    if s is not None:
        return s
    xv = f32_of_bits(x)
    prev = None
    for prec in (128, 256, 512, 1024, 2048):
        with mpmath.workprec(prec):
            bits, clear = round_f32(exact(op, xv), prec)
        if clear and bits == prev:
            return bits
        prev = bits if clear else None
    raise RuntimeError("%s 0x%08x: not decided at 2048 bits" % (op, x))


def main(argv):
    args = argv[1:]
    exc_path = None
    if len(args) >= 2 and args[0] == "--exceptions":
        exc_path, args = args[1], args[2:]
    if not args:
        sys.stderr.write(__doc__)
        return 2
    stats = {}
    exceptions = {}
    bad = 0
    for path in args:
        with open(path) as f:
            for line in f:
                if line.startswith("#") or not line.strip():
                    continue
                op, var, kind, xs, ours_s, _oracle = line.split()
                x, ours = int(xs, 16), int(ours_s, 16)
                y = correct(op, x)
                st = stats.setdefault((op, var), [0, 0, 0, 0])
                st[0 if kind == "undecided" else 1] += 1
                if ours != y:
                    st[2] += 1
                    exceptions[(op, x)] = y
                    if var == "cr":
                        bad += 1
                        if st[2] <= 5:
                            print("  %s cr: x=0x%08x ours=0x%08x correct=0x%08x" % (op, x, ours, y))
                elif kind == "mismatch":
                    st[3] += 1
    print("%-6s %-4s %10s %10s %12s %14s" % ("op", "var", "undecided", "mismatch", "ours wrong", "oracle wrong"))
    for (op, var), st in sorted(stats.items()):
        print("%-6s %-4s %10d %10d %12d %14d" % (op, var, st[0], st[1], st[2], st[3]))
    if exc_path:
        with open(exc_path, "w") as f:
            f.write("# OP X Y: inputs whose result was not correctly rounded, with the correct result\n")
            for (op, x), y in sorted(exceptions.items()):
                f.write("%s %08x %08x\n" % (op, x, y))
    print("cr_resolve.py: %d records, %d not correctly rounded%s" %
          (sum(s[0] + s[1] for s in stats.values()), len(exceptions),
           "; FAIL: %d of a correctly rounded variant" % bad if bad else ""))
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
