#!/usr/bin/env python3
# gen.py -- writes the inputs and the independently computed expected outputs of examples/*.vyre, and the manifest that examples/check.py runs.
#
#   python3 examples/gen.py [--out DIR]      (default: examples/data)
#
# Everything here is plain Python 3 (no numpy) and deterministic: the same
# bytes on every machine, so the files are committed and check.py verifies
# that they still match this script.  The expected values follow
# docs/semantics.md: f32 results are rounded to nearest even and
# canonicalised (NaN -> 0x7fc00000, subnormal -> signed zero), float sums
# are done in the exact order of the program (its tree, its loop).
#
# Files: DIR/<case>.<buffer>.in (raw little-endian input), DIR/<case>.<output>.out
# (raw expected output) and DIR/manifest.json, a list of cases:
#   {"name", "program", "about", "runs": [{"args": [...], "expect": [...]}]}
# An argument "@data/F" is a file of DIR; "@out:NAME" is output NAME of the
# previous run of the case, written to a file.  "expect" lists the outputs
# in order: {"name", "type", "count", "file", "ulp"}; ulp > 0 allows that
# many units in the last place (transcendentals, see docs/ulp.md).

import json
import math
import operator
import os
import re
import struct
import sys

MASK32 = 0xFFFFFFFF
NAN = float("nan")

# ---------------------------------------------------------------------------
# Deterministic numbers (splitmix64, the same generator `vyre run --random` uses)
# ---------------------------------------------------------------------------


class Rng:
    def __init__(self, seed):
        self.state = seed & 0xFFFFFFFFFFFFFFFF

    def next64(self):
        self.state = (self.state + 0x9E3779B97F4A7C15) & 0xFFFFFFFFFFFFFFFF
        z = self.state
        z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & 0xFFFFFFFFFFFFFFFF
        z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & 0xFFFFFFFFFFFFFFFF
        return z ^ (z >> 31)

    def u32(self):
        return self.next64() >> 32

    def below(self, n):
        return self.next64() % n

    def unit(self):
        """An f32 uniform in [-1, 1) with a full 24-bit significand range."""
        return (self.next64() >> 40) / 8388608.0 - 1.0


# ---------------------------------------------------------------------------
# f32 arithmetic as docs/semantics.md defines it
# ---------------------------------------------------------------------------


def bits(x):
    return struct.unpack("<I", struct.pack("<f", x))[0]


def from_bits(u):
    return struct.unpack("<f", struct.pack("<I", u))[0]


def canon(x):
    """A canonical f32 value: NaN stays NaN (its bits are 0x7fc00000 when
    packed), a subnormal becomes the zero of its sign."""
    if x != x:
        return NAN
    if x != 0 and abs(x) < 2.0 ** -126:
        return math.copysign(0.0, x)
    return x


def f32(x):
    """Round a double to f32 (nearest even, overflow to infinity), then
    canonicalise.  For one +, -, *, / or sqrt of f32 operands computed in
    double this is the correctly rounded f32 result: double has more than
    2 * 24 + 2 bits, so rounding twice is harmless (Figueroa, 1995)."""
    if x != x:
        return NAN
    try:
        y = struct.unpack("<f", struct.pack("<f", x))[0]
    except OverflowError:
        y = math.copysign(math.inf, x)
    return canon(y)


def load_f32(u):
    """What a program sees when it loads f32 bits u."""
    return canon(from_bits(u))


def fadd(a, b):
    return f32(a + b)


def fmul(a, b):
    return f32(a * b)


def fdiv(a, b):
    if b == 0:
        if a == 0 or a != a:
            return NAN
        neg = (math.copysign(1, a) < 0) != (math.copysign(1, b) < 0)
        return -math.inf if neg else math.inf
    return f32(a / b)


def fsqrt(a):
    if a != a or a < 0:
        return NAN
    if a == 0 or a == math.inf:
        return a
    return f32(math.sqrt(a))


def round_ratio(num, exp2):
    """num * 2**exp2 (num a nonzero int) rounded to f32, nearest even."""
    neg = num < 0
    num = abs(num)
    e = num.bit_length() - 1 + exp2  # 2**e <= value < 2**(e+1)
    ulp = max(e, -126) - 23  # the spacing of f32 values there
    shift = ulp - exp2
    if shift > 0:
        m, r = num >> shift, num & ((1 << shift) - 1)
        half = 1 << (shift - 1)
        if r > half or (r == half and m & 1):
            m += 1
    else:
        m = num << -shift
    if m and m.bit_length() - 1 + ulp >= 128:
        v = math.inf
    else:
        v = math.ldexp(m, ulp)
    return canon(-v if neg else v)


def fma(a, b, c):
    """a * b + c rounded once."""
    if not (math.isfinite(a) and math.isfinite(b) and math.isfinite(c)):
        return f32(a * b + c)  # inf/NaN cases: the double result is exact
    na, da = a.as_integer_ratio()
    nb, db = b.as_integer_ratio()
    nc, dc = c.as_integer_ratio()
    ea = -(da.bit_length() - 1)
    eb = -(db.bit_length() - 1)
    ec = -(dc.bit_length() - 1)
    p, ep = na * nb, ea + eb
    lo = min(ep, ec)
    total = (p << (ep - lo)) + (nc << (ec - lo))
    if total == 0:
        # An exact zero: -0 only when both addends are zeros of sign -.
        prod_neg = (math.copysign(1, a) < 0) != (math.copysign(1, b) < 0)
        if p == 0 and nc == 0 and prod_neg and math.copysign(1, c) < 0:
            return -0.0
        return 0.0
    return round_ratio(total, lo)


def signbit(x):
    return math.copysign(1, x) < 0


def fmin(a, b):
    if a != a:
        return b
    if b != b:
        return a
    if a == 0 and b == 0:
        return -0.0 if signbit(a) or signbit(b) else 0.0
    return a if a < b else b


def fmax(a, b):
    if a != a:
        return b
    if b != b:
        return a
    if a == 0 and b == 0:
        return 0.0 if not signbit(a) or not signbit(b) else -0.0
    return a if a > b else b


def fround_even(x):
    if not math.isfinite(x):
        return x
    r = float(round(x))  # Python rounds half to even
    return math.copysign(r, x) if r == 0 else r


def cast_i32(x):
    if x != x:
        return 0
    if x >= 2147483648.0:
        return 2147483647
    if x <= -2147483648.0:
        return -2147483648
    return int(x)  # truncates toward zero


def exp_f32(x):
    """exp(x) correctly rounded to f32.  Refuses inputs whose double result
    lies too near an f32 rounding boundary to be sure of the rounding."""
    if x != x:
        return NAN
    if x == math.inf:
        return math.inf
    if x == -math.inf:
        return 0.0
    try:
        e = math.exp(x)
    except OverflowError:
        return math.inf
    lo, hi = f32(e * (1 - 2.0 ** -40)), f32(e * (1 + 2.0 ** -40))
    if bits(lo) != bits(hi) and e < 3.0e38:
        raise ValueError("exp(%r) is too close to an f32 rounding boundary; pick another input" % x)
    return f32(e)


def pack(fmt, values):
    return struct.pack("<%d%s" % (len(values), fmt), *values)


def f32_bytes(values):
    return b"".join(struct.pack("<I", 0x7FC00000) if v != v else struct.pack("<f", v) for v in values)


def u32_bytes(values):
    return pack("I", [v & MASK32 for v in values])


def i32_bytes(values):
    return pack("i", values)


# ---------------------------------------------------------------------------
# Cases
# ---------------------------------------------------------------------------


class Writer:
    def __init__(self, out):
        self.out = out
        self.cases = []
        self.files = {}

    def file(self, name, data):
        assert name not in self.files, name
        self.files[name] = data
        return "@data/" + name

    def expect(self, case, name, type_, data, ulp=0):
        size = {"f32": 4, "u32": 4, "i32": 4}[type_]
        assert len(data) % size == 0
        fname = "%s.%s.out" % (case, name)
        self.file(fname, data)
        return {"name": name, "type": type_, "count": len(data) // size, "file": "data/" + fname,
                "ulp": ulp}

    def case(self, name, program, about, runs):
        self.cases.append({"name": name, "program": program, "about": about, "runs": runs})

    def write(self):
        os.makedirs(self.out, exist_ok=True)
        for name, data in sorted(self.files.items()):
            with open(os.path.join(self.out, name), "wb") as f:
                f.write(data)
        with open(os.path.join(self.out, "manifest.json"), "w") as f:
            json.dump({"cases": self.cases}, f, indent=1)
            f.write("\n")


def gen_saxpy(w):
    r = Rng(101)
    a = f32(2.5)
    # Full-precision values so that fma's single rounding matters.
    x = [f32(r.unit() * 100) for _ in range(1000)]
    y = [f32(r.unit() * 100) for _ in range(1000)]

    def saxpy(xs, ys):
        return [fma(a, xs[i] if i < len(xs) else 0.0, ys[i]) for i in range(len(ys))]

    w.case("saxpy", "saxpy.vyre", "y = a * x + y with one rounding, 1000 elements (4 workgroups, the last partial)", [{
        "args": ["--fill", "2.5", "--input", w.file("saxpy.x.in", f32_bytes(x)),
                 "--input", w.file("saxpy.y.in", f32_bytes(y))],
        "expect": [w.expect("saxpy", "y", "f32", f32_bytes(saxpy(x, y)))]}])
    # x shorter than y: loads past the end of x give 0.0, so y keeps its value there.
    xs = x[:700]
    w.case("saxpy_short_x", "saxpy.vyre", "x has 700 elements, y 1000: out-of-bounds loads give 0.0", [{
        "args": ["--fill", "2.5", "--input", w.file("saxpy_short_x.x.in", f32_bytes(xs)),
                 "--input", "@data/saxpy.y.in"],
        "expect": [w.expect("saxpy_short_x", "y", "f32", f32_bytes(saxpy(xs, y)))]}])


def gen_f32math(w):
    r = Rng(202)
    n = 512
    # Edge cases first, as raw bits (subnormals and NaNs with payloads are
    # canonicalised by the load), then random values.
    pairs = [
        (0x7FC00000, 0x3F800000),  # NaN, 1
        (0x7F800000, 0x40000000),  # inf, 2
        (0xFF800000, 0x7F800000),  # -inf, inf
        (0x00000000, 0x00000000),  # 0 / 0
        (0x80000000, 0x00000000),  # -0 / 0
        (0x3F800000, 0x00000000),  # 1 / 0
        (0xBF800000, 0x00000000),  # -1 / 0
        (0x3F800000, 0x80000000),  # 1 / -0
        (0x00000001, 0x3F800000),  # subnormal x -> +0
        (0x80000005, 0x807FFFFF),  # subnormals -> -0
        (0x7FC01234, 0x7FFFFFFF),  # NaN payloads
        (0x7149F2CA, 0x3F800000),  # 1e30: x*x overflows
        (0xF149F2CA, 0x7149F2CA),  # -1e30, 1e30
        (0x7F7FFFFF, 0x7F7FFFFF),  # FLT_MAX
        (bits(0.125), bits(3.0)),  # round(0.5) = 0
        (bits(0.375), bits(4.0)),  # round(1.5) = 2
        (bits(0.625), bits(5.0)),  # round(2.5) = 2
        (bits(-0.625), bits(-5.0)),  # round(-2.5) = -2
        (bits(-0.0625), bits(1.0)),  # round(-0.25) = -0
        (bits(2.5), bits(-2.5)),  # |x| == |y|
        (bits(100.0), bits(1.0)),  # exp overflows to inf
        (bits(-100.0), bits(1.0)),  # exp underflows (subnormal -> +0)
        (bits(88.5), bits(1.0)),  # exp near the top
        (bits(-87.0), bits(1.0)),  # exp near the bottom
        (bits(32767.99), bits(1.0)),  # 16.16: 2147483000-ish
        (bits(40000.0), bits(1.0)),  # 16.16 saturates high
        (bits(-40000.0), bits(1.0)),  # 16.16 saturates low
        (bits(3.0), bits(4.0)),  # hyp 5
        (bits(0.1), bits(0.7)),
        (bits(-0.5), bits(0.5)),  # the clamp bounds
    ]
    xb = [p[0] for p in pairs]
    yb = [p[1] for p in pairs]
    while len(xb) < n:
        xb.append(bits(f32(r.unit() * 4)))
        yb.append(bits(f32(r.unit() * 4)))
    lo, hi = -0.5, 0.5
    x = [load_f32(u) for u in xb]
    y = [load_f32(u) for u in yb]
    hyp, clamp, larger, quot, quarter, fixed, ex = [], [], [], [], [], [], []
    for a, b in zip(x, y):
        hyp.append(fsqrt(fma(a, a, fmul(b, b))))
        clamp.append(fmin(fmax(a, lo), hi))
        larger.append(a if abs(a) > abs(b) else b)
        quot.append(fdiv(a, b))
        quarter.append(fdiv(fround_even(fmul(a, 4.0)), 4.0))
        fixed.append(cast_i32(fmul(a, 65536.0)))
        ex.append(exp_f32(a))
    c = "f32math"
    w.case(c, "f32math.vyre", "sqrt, fma, min/max, abs, select, div, round, cast, exp (--ulp 1) with NaN, inf, -0 and subnormal inputs", [{
        "args": ["--input", w.file(c + ".x.in", u32_bytes(xb)), "--input", w.file(c + ".y.in", u32_bytes(yb)),
                 "--iota", "-0.5:2", "--ulp", "1"],
        "expect": [w.expect(c, "hyp", "f32", f32_bytes(hyp)),
                   w.expect(c, "clamp", "f32", f32_bytes(clamp)),
                   w.expect(c, "larger", "f32", f32_bytes(larger)),
                   w.expect(c, "quot", "f32", f32_bytes(quot)),
                   w.expect(c, "quarter", "f32", f32_bytes(quarter)),
                   w.expect(c, "fixed", "i32", i32_bytes(fixed)),
                   w.expect(c, "ex", "f32", f32_bytes(ex), ulp=1)]}])


def s32(u):
    u &= MASK32
    return u - (1 << 32) if u & 0x80000000 else u


def rotl(x, k):
    k %= 32
    return ((x << k) | (x >> (32 - k))) & MASK32 if k else x


def clz(x):
    return 32 - x.bit_length()


def ctz(x):
    return 32 if x == 0 else (x & -x).bit_length() - 1


def rev32(x):
    return int("{:032b}".format(x)[::-1], 2)


def gen_u32math(w):
    r = Rng(303)
    n = 512
    pairs = [
        (0, 0), (0, MASK32), (MASK32, 0), (MASK32, MASK32), (1, 31), (1, 32), (1, 33),
        (0x80000000, MASK32),  # i32 MIN / -1 = MIN
        (0x80000000, 0xF0000000),  # MIN / (-1 after >> 28)
        (0x12345678, 0x0FFFFFFF),  # divisor y >> 28 = 0
        (0xDEADBEEF, 0x10000000), (0x80000001, 0x9FFFFFFF), (12345, 40), (0xFFFF0000, 0x0000FFFF),
        (0x7FFFFFFF, 0x7FFFFFFF), (0x80000000, 0x80000000), (3, 0x20000000), (0x55555555, 0xAAAAAAAA),
    ]
    xs = [p[0] for p in pairs]
    ys = [p[1] for p in pairs]
    while len(xs) < n:
        xs.append(r.u32())
        # Small shift counts, zero divisors and full-range values alike.
        k = r.below(4)
        ys.append(r.below(64) if k == 0 else r.u32() >> 4 if k == 1 else r.u32())
    out = {k: [] for k in ("rot", "shift", "bits", "hi", "sat", "mix", "sdiv", "sshr")}
    for a, b in zip(xs, ys):
        rotr_b_a = rotl(b, (32 - a % 32) % 32)
        out["rot"].append(rotl(a, b) ^ rotr_b_a)
        out["shift"].append(((a << (b % 32)) & MASK32) | (b >> (a % 32)))
        out["bits"].append(bin(a).count("1") | clz(b) << 8 | ctz(a) << 16 | (rev32(b) & 0xFF) << 24)
        out["hi"].append((a * b) >> 32)
        sat = min(a + b, MASK32) ^ max(a - b, 0) ^ min(a * (b & 0xFFFF), MASK32)
        out["sat"].append(sat)
        d, e = b >> 28, b >> 29
        q = a // d if d else MASK32
        md = a % e if e else 0
        out["mix"].append(((a * 0x9E3779B9 - b) & MASK32) ^ abs(a - b) ^ q ^ md)
        ia, ib = s32(a), s32(b)
        ibs = ib >> 28  # arithmetic, -8..7
        if ibs == 0:
            sq = 0
        elif ia == -(1 << 31) and ibs == -1:
            sq = ia
        else:
            sq = abs(ia) // abs(ibs) * (1 if (ia < 0) == (ibs < 0) else -1)
        out["sdiv"].append(sq)
        out["sshr"].append(ia >> (b % 32))
    c = "u32math"
    w.case(c, "u32math.vyre", "rotates, shifts mod 32, popcount/clz/ctz/reversebits, mulhi, saturating ops, x/0, i32 division and arithmetic shift", [{
        "args": ["--input", w.file(c + ".x.in", u32_bytes(xs)), "--input", w.file(c + ".y.in", u32_bytes(ys))],
        "expect": [w.expect(c, k, "i32" if k in ("sdiv", "sshr") else "u32",
                            i32_bytes(v) if k in ("sdiv", "sshr") else u32_bytes(v))
                   for k, v in out.items()]}])


def gen_histogram(w):
    r = Rng(404)
    data = [r.u32() for _ in range(5000)]

    def hist(words):
        h = [0] * 16
        for v in words:
            h[v & 15] += 1
        return h

    c = "histogram"
    w.case(c, "histogram.vyre", "16-bin histogram of 5000 random words: workgroup-memory atomics, barriers, a strided loop", [{
        "args": ["--input", w.file(c + ".data.in", u32_bytes(data))],
        "expect": [w.expect(c, "hist", "u32", u32_bytes(hist(data)))]}])
    c = "histogram_small"
    w.case(c, "histogram.vyre", "37 words, fewer than the workgroup", [{
        "args": ["--iota", "100:37"],
        "expect": [w.expect(c, "hist", "u32", u32_bytes(hist(range(100, 137))))]}])


def tree_sum(block):
    """The sum of 256 values in the program's tree order (reduce.vyre)."""
    s = list(block)
    stride = 128
    while stride:
        for i in range(stride):
            s[i] = fadd(s[i], s[i + stride])
        stride //= 2
    return s[0]


def gen_reduce(w):
    r = Rng(505)
    x = [f32(r.unit()) for _ in range(4000)]
    groups = 16

    def partials(xs, grid):
        out = [0.0] * 64
        for g in range(grid):
            block = [xs[i] if i < len(xs) else 0.0 for i in range(g * 256, g * 256 + 256)]
            out[g] = tree_sum(block)
        return out

    p1 = partials(x, groups)
    p2 = partials(p1, 1)
    c = "reduce"
    w.case(c, "reduce.vyre", "4000 f32 summed in two passes: 16 workgroup partial sums (tree in workgroup memory), then one workgroup over the partials", [
        {"args": ["--input", w.file(c + ".x.in", f32_bytes(x)), "--grid", str(groups)],
         "expect": [w.expect(c, "partial", "f32", f32_bytes(p1))]},
        {"args": ["--input", "@out:partial", "--grid", "1"],
         "expect": [w.expect(c + "_total", "partial", "f32", f32_bytes(p2))]}])


def block_scan(data, n_out_totals=64):
    out, totals = [], [0] * n_out_totals
    for b in range(0, len(data), 256):
        acc = 0
        for v in data[b:b + 256]:
            acc = (acc + v) & MASK32
            out.append(acc)
        if b // 256 < n_out_totals:
            totals[b // 256] = acc
    return out, totals


def gen_scan(w):
    r = Rng(606)
    data = [r.u32() for _ in range(1000)]  # full range: the sums wrap
    out, totals = block_scan(data)
    c = "scan"
    w.case(c, "scan.vyre", "inclusive scan of each 256-element block (Hillis-Steele, barriers in a uniform loop) and the block totals", [{
        "args": ["--input", w.file(c + ".data.in", u32_bytes(data))],
        "expect": [w.expect(c, "data", "u32", u32_bytes(out)), w.expect(c, "totals", "u32", u32_bytes(totals))]}])


def matmul(M, N, K, A, B, C):
    tiles = (K + 15) // 16
    out = list(C)
    for row in range(M):
        for col in range(N):
            acc = 0.0
            for k in range(tiles * 16):  # the padded tail adds fma(0, 0, acc)
                a = A[row * K + k] if k < K else 0.0
                b = B[k * N + col] if k < K else 0.0
                acc = fma(a, b, acc)
            out[row * N + col] = fadd(acc, C[row * N + col])
    return out


def gen_matmul(w):
    r = Rng(707)
    M, N, K = 40, 48, 72
    A = [f32(r.unit()) for _ in range(M * K)]
    B = [f32(r.unit()) for _ in range(K * N)]
    C = [f32(r.unit()) for _ in range(M * N)]
    c = "matmul"
    w.case(c, "matmul.vyre", "C = A B + C, 40 x 72 times 72 x 48: 16 x 16 tiles in workgroup memory, a 3 x 3 grid with partial edge tiles", [{
        "args": ["--input", w.file(c + ".dims.in", u32_bytes([M, N, K])), "--input", w.file(c + ".A.in", f32_bytes(A)),
                 "--input", w.file(c + ".B.in", f32_bytes(B)), "--input", w.file(c + ".C.in", f32_bytes(C)),
                 "--grid", "3,3"],
        "expect": [w.expect(c, "C", "f32", f32_bytes(matmul(M, N, K, A, B, C)))]}])
    # The header's example: dims from an iota (M 16, N 17, K 18).
    M, N, K = 16, 17, 18
    c = "matmul_iota"
    w.case(c, "matmul.vyre", "dims 16, 17, 18 from --iota, A ones, B halves, C ones: C = 10", [{
        "args": ["--iota", "16:3", "--fill", "1:288", "--fill", "0.5:306", "--fill", "1:272", "--grid", "2,1"],
        "expect": [w.expect(c, "C", "f32", f32_bytes(matmul(M, N, K, [1.0] * 288, [0.5] * 306, [1.0] * 272)))]}])


def gen_matmul_tiled(w):
    # matmul_tiled.vyre sums in the same order as matmul.vyre (k ascending
    # from +0.0, one rounding per fma, then + C), so the same model.
    r = Rng(717)
    M, N, K = 128, 256, 24
    A = [f32(r.unit()) for _ in range(M * K)]
    B = [f32(r.unit()) for _ in range(K * N)]
    C = [f32(r.unit()) for _ in range(M * N)]
    c = "matmul_tiled"
    w.case(c, "matmul_tiled.vyre", "C = A B + C, 128 x 24 times 24 x 256: 128 x 128 blocks, 8 x 8 per invocation; a 3 x 2 grid whose extra workgroups return", [{
        "args": ["--input", w.file(c + ".dims.in", u32_bytes([M, N, K])), "--input", w.file(c + ".A.in", f32_bytes(A)),
                 "--input", w.file(c + ".B.in", f32_bytes(B)), "--input", w.file(c + ".C.in", f32_bytes(C)),
                 "--grid", "3,2"],
        "expect": [w.expect(c, "C", "f32", f32_bytes(matmul(M, N, K, A, B, C)))]}])


def sum_partials(x, groups, count=2048):
    """sum.vyre: each invocation adds its 8 loads per step (4 adjacent at
    4 * lid, 4 at 1024 + 4 * lid) in order from -0.0, a subgroup tree, then
    the 8 subgroup sums in order."""
    span = groups * 2048
    steps = (len(x) + span - 1) // span
    out = [0.0] * count
    for g in range(groups):
        lanes = []
        for l in range(256):
            acc = -0.0
            for t in range(steps):
                for j in range(8):
                    i = t * span + g * 2048 + (j // 4) * 1024 + 4 * l + j % 4
                    acc = fadd(acc, x[i] if i < len(x) else 0.0)
            lanes.append(acc)
        sg = []
        for k in range(8):
            s = lanes[32 * k:32 * k + 32]
            for off in (16, 8, 4, 2, 1):
                for i in range(off):
                    s[i] = fadd(s[i], s[i + off])
            sg.append(s[0])
        total = sg[0]
        for v in sg[1:]:
            total = fadd(total, v)
        out[g] = total
    return out


def gen_sum(w):
    r = Rng(727)
    x = [f32(r.unit()) for _ in range(20000)]
    p1 = sum_partials(x, 3)
    p2 = sum_partials(p1, 1)
    c = "sum"
    w.case(c, "sum.vyre", "20000 f32 summed in two passes: 3 workgroups sweep the input 8 loads per step (a partial tail step), then one workgroup over the partials", [
        {"args": ["--fill", "3:1", "--input", w.file(c + ".x.in", f32_bytes(x)), "--grid", "3"],
         "expect": [w.expect(c, "partial", "f32", f32_bytes(p1))]},
        {"args": ["--fill", "1:1", "--input", "@out:partial", "--grid", "1"],
         "expect": [w.expect(c + "_total", "partial", "f32", f32_bytes(p2))]}])


def bitonic_stage(data, k, j):
    d = list(data)
    for i in range(len(d)):
        l = i ^ j
        if l > i and l < len(d):
            up = (i & k) == 0
            if (d[i] > d[l]) if up else (d[i] < d[l]):
                d[i], d[l] = d[l], d[i]
    return d


def gen_bitonic(w):
    r = Rng(808)
    one = [r.u32() for _ in range(64)]
    c = "bitonic_step"
    w.case(c, "bitonic_step.vyre", "one compare-exchange stage (k 8, j 4) of a bitonic sort of 64 keys", [{
        "args": ["--input", w.file(c + ".data.in", u32_bytes(one)), "--fill", "8", "--fill", "4"],
        "expect": [w.expect(c, "data", "u32", u32_bytes(bitonic_stage(one, 8, 4)))]}])

    # The whole sort of 512 keys as 45 dispatches of the stage program.
    n = 512
    keys = [r.below(100000) for _ in range(n)]  # duplicates likely
    runs = []
    k = 2
    first = w.file("bitonic_steps.data.in", u32_bytes(keys))
    while k <= n:
        j = k // 2
        while j >= 1:
            runs.append({"args": ["--input", first if not runs else "@out:data", "--fill", str(k), "--fill", str(j)],
                         "expect": []})
            j //= 2
        k *= 2
    runs[-1]["expect"] = [w.expect("bitonic_steps", "data", "u32", u32_bytes(sorted(keys)))]
    w.case("bitonic_steps", "bitonic_step.vyre", "sorting 512 keys with %d dispatches of the stage program, each output feeding the next" % len(runs), runs)

    data = [r.below(5000) for _ in range(1000)] + [MASK32] * 5 + [0] * 3  # ties, and keys equal to the padding
    c = "bitonic_sort"
    expect = []
    for b in range(0, len(data), 256):
        expect += sorted(data[b:b + 256])
    w.case(c, "bitonic_sort.vyre", "every 256-key block of 1008 keys sorted in workgroup memory in one dispatch (the last block padded)", [{
        "args": ["--input", w.file(c + ".data.in", u32_bytes(data))],
        "expect": [w.expect(c, "data", "u32", u32_bytes(expect))]}])


def subgroup_model(x, wg):
    """sum, top, mask, slot, next of subgroup.vyre for workgroup size wg."""
    n = len(x)
    grid = (n + wg - 1) // wg
    out = {k: [0] * n for k in ("sum", "top", "mask", "slot", "next")}
    for g in range(grid):
        for sub in range(0, wg, 32):
            lanes = min(32, wg - sub)  # the active lanes
            gids = [g * wg + sub + k for k in range(lanes)]
            v = [x[i] if i < n else 0.0 for i in gids]
            s = v + [-0.0] * (32 - lanes)  # inactive lanes: the identity
            m = v + [NAN] * (32 - lanes)
            off = 16
            while off:
                for k in range(off):
                    s[k] = fadd(s[k], s[k + off])
                    m[k] = fmax(m[k], m[k + off])
                off //= 2
            ballot = 0
            for k in range(lanes):
                if v[k] > 0:
                    ballot |= 1 << k
            for k, i in enumerate(gids):
                if i >= n:
                    continue
                out["sum"][i] = s[0]
                out["top"][i] = m[0]
                out["mask"][i] = ballot
                out["slot"][i] = bin(ballot & ((1 << k) - 1)).count("1") if v[k] > 0 else MASK32
                src = (k + 1) % 32
                out["next"][i] = v[src] if src < lanes else 0.0
    return out


def gen_subgroup(w):
    r = Rng(909)
    x = [f32(r.unit()) for _ in range(1024)]
    x[100] = NAN  # subgroup 3: the sum is NaN, the max ignores it
    x[200] = 0.0
    x[201] = -0.0
    for i in range(256, 288):
        x[i] = -abs(x[i]) if x[i] == x[i] else x[i]  # subgroup 8: no positive lane
    xin = w.file("subgroup.x.in", f32_bytes(x))
    for c, wg, about in (("subgroup", 64, "reduce add/max, ballot, a ballot-popcount compaction slot and shuffle over 32-lane subgroups"),
                         ("subgroup_wg48", 48, "the same with --wg 48: every second subgroup has 16 inactive lanes")):
        out = subgroup_model(x, wg)
        args = ["--input", xin] + (["--wg", str(wg)] if wg != 64 else [])
        w.case(c, "subgroup.vyre", about, [{
            "args": args,
            "expect": [w.expect(c, "sum", "f32", f32_bytes(out["sum"])), w.expect(c, "top", "f32", f32_bytes(out["top"])),
                       w.expect(c, "mask", "u32", u32_bytes(out["mask"])), w.expect(c, "slot", "u32", u32_bytes(out["slot"])),
                       w.expect(c, "next", "f32", f32_bytes(out["next"]))]}])


def gen_grid_scan(w):
    r = Rng(1010)
    data = [r.u32() for _ in range(1000)]
    scanned, acc = [], 0
    for v in data:
        acc = (acc + v) & MASK32
        scanned.append(acc)
    _, totals = block_scan(data)
    c = "grid_scan"
    w.case(c, "grid_scan.vyre", "a global scan of 1000 words in one dispatch: block scans, a grid barrier, then block offsets", [{
        "args": ["--input", w.file(c + ".data.in", u32_bytes(data))],
        "expect": [w.expect(c, "data", "u32", u32_bytes(scanned)), w.expect(c, "totals", "u32", u32_bytes(totals))]}])
    n = 4096
    seq = list(range(n))
    _, totals = block_scan(seq)
    c = "grid_scan_16wg"
    w.case(c, "grid_scan.vyre", "0, 1, ..., 4095 over 16 co-resident workgroups", [{
        "args": ["--iota", "0:%d" % n],
        "expect": [w.expect(c, "data", "u32", u32_bytes([i * (i + 1) // 2 & MASK32 for i in range(n)])),
                   w.expect(c, "totals", "u32", u32_bytes(totals))]}])


WORDS = ("the quick brown fox jumps over lazy dog running singing thing bring ring "
         "a an of to in is it that with for on as was be by this are from at or ing").split()


def gen_bytescan(w):
    r = Rng(1111)
    lines = []
    size = 0
    while size < 12000:
        line = " ".join(WORDS[r.below(len(WORDS))] for _ in range(1 + r.below(14)))
        lines.append(line)
        size += len(line) + 1
    text = ("\n".join(lines) + "\n").encode()
    abab = b"ab" * 150 + b"\n" + b"aba"  # overlapping matches, one ending at the last byte

    def scan(t, pattern):
        hits = [i for i in range(len(t) - len(pattern) + 1) if t[i:i + len(pattern)] == pattern]
        return [t.count(b"\n"), len(hits)], [hits[0] if hits else MASK32]

    tin = w.file("bytescan.text.in", text)
    for c, t, pattern in (("bytescan", tin, b"ing "), ("bytescan_absent", tin, b"qzx"),
                          ("bytescan_overlap", w.file("bytescan_overlap.text.in", abab), b"aba")):
        raw = text if c != "bytescan_overlap" else abab
        counts, first = scan(raw, pattern)
        w.case(c, "bytescan.vyre", "lines, matches and the first match of %r in %d bytes" % (pattern.decode(), len(raw)), [{
            "args": ["--input", t, "--input", w.file(c + ".pat.in", pattern.ljust(8, b"\0")),
                     "--fill", str(len(pattern)), "--fill", str(MASK32)],
            "expect": [w.expect(c, "counts", "u32", u32_bytes(counts)), w.expect(c, "first", "u32", u32_bytes(first))]}])


# The tensor-core matmuls (examples/matmul_mma_*.vyre, written by
# examples/matmul_mma.py): C = A B, A M x K row-major, B K x N row-major
# (bf16, f16) or N x K row-major (i8), C M x N f32 / i32.  Float MMA is
# exact only within a bound (docs/semantics.md), so the float data are
# multiples of 1/4 in [-8, 8): every product is a multiple of 1/16 and every
# partial sum (at most 64 * 64) is exact in f32, whatever the order or the
# hardware's alignment, and the result is the exact sum bit for bit.  Int8
# MMA is exact: values across -128..127, and a case whose sums pass 2^31
# and wrap.  The grid comes from the program's "--grid N/BN,M/BM"; a
# program not in examples/ yet has no case (see docs/examples.md).
MMA_SENTINEL = {"f32": "0.1", "i32": "2125315823"}  # C's initial value: an element left unwritten shows


def mma_tile(program):
    path = os.path.join(os.path.dirname(os.path.abspath(__file__)), program)
    if not os.path.exists(path):
        return None
    with open(path) as f:
        m = re.search(r"--grid N/(\d+),M/(\d+)", f.read())
    if not m:
        raise SystemExit("gen.py: %s does not say its grid as \"--grid N/BN,M/BM\"" % program)
    return int(m.group(1)), int(m.group(2))


def mma_product(A, B, M, N, K, b_nk):
    """C = A B exactly, Python integers (A, B as integers)."""
    cols = [B[j * K:(j + 1) * K] if b_nk else B[j::N] for j in range(N)]
    return [sum(map(operator.mul, A[i * K:(i + 1) * K], cols[j])) for i in range(M) for j in range(N)]


def gen_mma(w):
    # Two workgroups of each program's tile (bf16/f16: 128 x 256, i8: 128 x
    # 128), K = 4 of their K slices.
    for t, seed, (M, N, K) in (("bf16", 1201, (256, 256, 64)), ("f16", 1202, (256, 256, 64)),
                               ("i8", 1203, (128, 256, 256))):
        program = "matmul_mma_%s.vyre" % t
        tile = mma_tile(program)
        if tile is None:
            continue
        grid = "%d,%d" % (N // tile[0], M // tile[1])
        r = Rng(seed)
        c = "mma_" + t
        if t == "i8":
            A = [r.below(256) - 128 for _ in range(M * K)]
            B = [r.below(256) - 128 for _ in range(N * K)]
            A[:4], B[:4] = [-128, -128, 127, 127], [-128, 127, -128, 127]  # the extremes meet
            C = [s32(v & MASK32) for v in mma_product(A, B, M, N, K, True)]
            ab = pack("b", A), pack("b", B)
            out, ctype, about = i32_bytes(C), "i32", "C = A B, int8 in (-128..127), i32 out, B N x K"
        else:
            A = [r.below(64) - 32 for _ in range(M * K)]  # quarters: A[i] / 4
            B = [r.below(64) - 32 for _ in range(K * N)]
            C = [v / 16.0 for v in mma_product(A, B, M, N, K, False)]
            if t == "bf16":
                ab = tuple(pack("H", [bits(v / 4.0) >> 16 for v in X]) for X in (A, B))
            else:
                ab = tuple(pack("e", [v / 4.0 for v in X]) for X in (A, B))
            out, ctype, about = f32_bytes(C), "f32", "C = A B, %s quarters in [-8, 8), every partial sum exact in f32" % t
        assert str(MMA_SENTINEL[ctype]) not in map(str, C)
        args = ["--input", w.file(c + ".dims.in", u32_bytes([M, N, K])), "--input", w.file(c + ".A.in", ab[0]),
                "--input", w.file(c + ".B.in", ab[1]), "--fill", "%s:%d" % (MMA_SENTINEL[ctype], M * N),
                "--grid", grid]
        if t != "i8":
            args += ["--ulp", "1"]  # float MMA is refused under strict (ulp 0)
        w.case(c, program, "%s, %d x %d times %d x %d: a %s grid" % (about, M, K, K, N, grid), [{
            "args": args, "expect": [w.expect(c, "C", ctype, out)]}])
        if t != "i8":
            continue
        # -128 * -128 = 2^14 per term: K = 131200 terms sum to 2149580800,
        # past 2^31 - 1, which wraps to -2145386496 (modulo 2^32).
        Kw = 131200
        c = "mma_i8_wrap"
        want = s32((Kw * 16384) & MASK32)
        w.case(c, program, "A and B all -128, K = %d: every sum is %d, which wraps to %d" % (Kw, Kw * 16384, want), [{
            "args": ["--input", w.file(c + ".dims.in", u32_bytes([128, 128, Kw])), "--fill", "-128:%d" % (128 * Kw),
                     "--fill", "-128:%d" % (128 * Kw), "--fill", "%s:16384" % MMA_SENTINEL["i32"], "--grid",
                     "%d,%d" % (128 // tile[0], 128 // tile[1])],
            "expect": [w.expect(c, "C", "i32", i32_bytes([want] * 16384))]}])


def main(argv):
    out = os.path.join(os.path.dirname(os.path.abspath(__file__)), "data")
    if len(argv) == 3 and argv[1] == "--out":
        out = argv[2]
    elif len(argv) != 1:
        sys.stderr.write("usage: gen.py [--out DIR]\n")
        return 2
    w = Writer(out)
    for gen in (gen_saxpy, gen_f32math, gen_u32math, gen_histogram, gen_reduce, gen_scan, gen_matmul,
                gen_matmul_tiled, gen_sum, gen_bitonic, gen_subgroup, gen_grid_scan, gen_bytescan, gen_mma):
        gen(w)
    w.write()
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
