# f32model.py -- exact models of vyre's integer, f32, f16/bf16 and cast semantics (docs/semantics.md), for the corpus generator's golden outputs.
"""Bit-exact reference models written from docs/semantics.md alone.

Every function takes and returns raw bits (ints).  f32 arithmetic is done
exactly with fractions, rounded once to nearest even to 24 significant bits
as if the exponent were unbounded, and a result whose rounded magnitude is
below 2^-126 becomes the zero of its sign (IEEE 754 tininess detected after
rounding, flushed); then NaN -> 0x7FC00000.  f16/bf16 narrowing keeps the
16-bit formats' subnormals (gradual underflow at their own boundary).
These models are independent of the C reference backend: where the two
disagree, the corpus' expect-output lines make `vyre conform` fail.
"""
from fractions import Fraction
import math

NAN = 0x7FC00000
PINF = 0x7F800000
NINF = 0xFF800000


# ---------------------------------------------------------------- integers
def mask(w):
    return (1 << w) - 1


def sx(v, w):
    """Unsigned w-bit pattern -> Python int (two's complement)."""
    v &= mask(w)
    return v - (1 << w) if v >> (w - 1) else v


def wrap(v, w):
    return v & mask(w)


def int_binop(op, x, y, w, signed):
    m = mask(w)
    x &= m
    y &= m
    a = sx(x, w) if signed else x
    b = sx(y, w) if signed else y
    lo, hi = (-(1 << (w - 1)), (1 << (w - 1)) - 1) if signed else (0, m)
    sat = lambda v: wrap(max(lo, min(hi, v)), w)
    if op in ("add", "wadd"):
        return wrap(a + b, w)
    if op in ("sub", "wsub"):
        return wrap(a - b, w)
    if op == "mul":
        return wrap(a * b, w)
    if op == "div":
        if b == 0:
            return m if not signed else 0
        if signed and a == lo and b == -1:
            return wrap(lo, w)
        q = abs(a) // abs(b)
        return wrap(q if (a < 0) == (b < 0) else -q, w)
    if op == "mod":
        if b == 0:
            return 0
        if signed and a == lo and b == -1:
            return 0
        r = abs(a) % abs(b)
        return wrap(-r if a < 0 else r, w)
    if op == "and":
        return x & y
    if op == "or":
        return x | y
    if op == "xor":
        return x ^ y
    s = y % w  # the amount's bits read as unsigned, mod the width
    if op == "shl":
        return wrap(x << s, w)
    if op == "shr":
        return wrap(a >> s, w) if signed else x >> s
    if op == "rotl":
        return wrap((x << s) | (x >> ((w - s) % w)), w) if s else x
    if op == "rotr":
        return wrap((x >> s) | (x << ((w - s) % w)), w) if s else x
    if op == "min":
        return wrap(min(a, b), w)
    if op == "max":
        return wrap(max(a, b), w)
    if op == "absdiff":
        return wrap(a - b, w) if a > b else wrap(b - a, w)
    if op == "sadd":
        return sat(a + b)
    if op == "ssub":
        return sat(a - b)
    if op == "smul":
        return sat(a * b)
    if op == "mulhi":
        return wrap((a * b) >> w, w)
    if op in ("eq", "ne", "lt", "le", "gt", "ge"):
        return int({"eq": a == b, "ne": a != b, "lt": a < b, "le": a <= b, "gt": a > b,
                    "ge": a >= b}[op])
    raise ValueError(op)


def int_unop(op, x, w, signed):
    x &= mask(w)
    a = sx(x, w) if signed else x
    if op == "neg":
        return wrap(-a, w)
    if op == "bitnot":
        return wrap(~x, w)
    if op == "popcount":
        return bin(x).count("1")
    if op == "clz":
        return w - x.bit_length()
    if op == "ctz":
        return w if x == 0 else (x & -x).bit_length() - 1
    if op == "reversebits":
        return int(format(x, "0%db" % w)[::-1], 2)
    if op == "abs":
        return wrap(-a, w) if signed and a < 0 else x
    if op == "sign":
        if signed:
            return wrap((a > 0) - (a < 0), w)
        return int(x != 0)
    if op in ("unpack4lo", "unpack4hi"):
        base = 0 if op == "unpack4lo" else 4
        return sum(((x >> (4 * (base + k))) & 0xF) << (8 * k) for k in range(4))
    if op in ("unpack8lo", "unpack8hi"):
        base = 0 if op == "unpack8lo" else 2
        return sum(((x >> (8 * (base + k))) & 0xFF) << (16 * k) for k in range(2))
    raise ValueError(op)


# ---------------------------------------------------------------- f32
def is_nan(b):
    return (b & 0x7F800000) == 0x7F800000 and (b & 0x7FFFFF) != 0


def is_inf(b):
    return (b & 0x7FFFFFFF) == 0x7F800000


def sign(b):
    return b >> 31


def canon(b):
    b &= 0xFFFFFFFF
    if is_nan(b):
        return NAN
    if (b & 0x7F800000) == 0 and (b & 0x7FFFFF):
        return b & 0x80000000
    return b


def value(b):
    """Exact value of finite f32 bits as a Fraction."""
    e = (b >> 23) & 0xFF
    m = b & 0x7FFFFF
    if e == 0:
        v = Fraction(m, 1 << 149)
    else:
        v = Fraction(m | 0x800000) * Fraction(2) ** (e - 150)
    return -v if sign(b) else v


def round_fraction(v, neg_zero=False, mant=23, emin=-126, emax=127, exp_bits=8, gradual=True):
    """Round an exact rational to the nearest binary float (ties to even);
    returns (sign, biased exponent, mantissa) bits of the format.  Overflow
    gives infinity.  gradual: IEEE gradual underflow (subnormals on the grid
    of the smallest exponent); otherwise the rounding is to mant+1 bits with
    an unbounded exponent and a result below the smallest normal becomes the
    zero of its sign (tininess after rounding, flushed)."""
    s = 1 if (v < 0 or (v == 0 and neg_zero)) else 0
    a = -v if v < 0 else v
    bias = (1 << (exp_bits - 1)) - 1
    if a == 0:
        return s << (mant + exp_bits)
    # a = q * 2^e with q an integer of mant+1 bits (or fewer when subnormal).
    e = a.numerator.bit_length() - a.denominator.bit_length()
    while Fraction(2) ** e > a:
        e -= 1
    while Fraction(2) ** (e + 1) <= a:
        e += 1
    if gradual:
        e = max(e, emin)  # subnormals share the smallest exponent
    scale = Fraction(2) ** (mant - e)
    q = a * scale
    n = q.numerator // q.denominator
    rem = q - n
    if rem > Fraction(1, 2) or (rem == Fraction(1, 2) and n & 1):
        n += 1
    if n >> (mant + 1):
        n >>= 1
        e += 1
    if e > emax:
        return (s << (mant + exp_bits)) | (((1 << exp_bits) - 1) << mant)
    if e < emin:
        return s << (mant + exp_bits)  # tiny after rounding: flushed
    if n >> mant:
        return (s << (mant + exp_bits)) | ((e + bias) << mant) | (n & mask(mant))
    return (s << (mant + exp_bits)) | n  # subnormal


def f32_round(v, neg_zero=False):
    """An f32 arithmetic result: tininess after rounding, flushed."""
    return canon(round_fraction(v, neg_zero, gradual=False))


def f32_binop(op, x, y):
    x, y = canon(x), canon(y)
    if op in ("min", "max"):
        if is_nan(x) and is_nan(y):
            return NAN
        if is_nan(x):
            return y
        if is_nan(y):
            return x
        if (x & 0x7FFFFFFF) == 0 and (y & 0x7FFFFFFF) == 0:
            neg = sign(x) or sign(y)
            both = sign(x) and sign(y)
            if op == "min":
                return 0x80000000 if neg else 0
            return 0x80000000 if both else 0
        vx = -math.inf if x == NINF else math.inf if x == PINF else value(x)
        vy = -math.inf if y == NINF else math.inf if y == PINF else value(y)
        return x if ((vx < vy) if op == "min" else (vx > vy)) else y
    if op == "absdiff":
        return f32_unop("abs", f32_binop("sub", x, y))
    if op in ("eq", "ne", "lt", "le", "gt", "ge"):
        if is_nan(x) or is_nan(y):
            return int(op == "ne")
        vx = -math.inf if x == NINF else math.inf if x == PINF else value(x)
        vy = -math.inf if y == NINF else math.inf if y == PINF else value(y)
        return int({"eq": vx == vy, "ne": vx != vy, "lt": vx < vy, "le": vx <= vy,
                    "gt": vx > vy, "ge": vx >= vy}[op])
    if is_nan(x) or is_nan(y):
        return NAN
    if op in ("add", "sub"):
        if op == "sub":
            y ^= 0x80000000
        if is_inf(x) or is_inf(y):
            if is_inf(x) and is_inf(y) and sign(x) != sign(y):
                return NAN
            return x if is_inf(x) else y
        v = value(x) + value(y)
        if v == 0:
            return f32_round(v, neg_zero=bool(sign(x) and sign(y)))
        return f32_round(v)
    if op == "mul":
        s = sign(x) ^ sign(y)
        if is_inf(x) or is_inf(y):
            if (x & 0x7FFFFFFF) == 0 or (y & 0x7FFFFFFF) == 0:
                return NAN
            return NINF if s else PINF
        return f32_round(value(x) * value(y), neg_zero=bool(s))
    if op == "div":
        s = sign(x) ^ sign(y)
        zx, zy = (x & 0x7FFFFFFF) == 0, (y & 0x7FFFFFFF) == 0
        if (zx and zy) or (is_inf(x) and is_inf(y)):
            return NAN
        if is_inf(x) or zy:
            return NINF if s else PINF
        if is_inf(y) or zx:
            return 0x80000000 if s else 0
        return f32_round(value(x) / value(y), neg_zero=bool(s))
    raise ValueError(op)


def f32_fma(x, y, z):
    x, y, z = canon(x), canon(y), canon(z)
    if is_nan(x) or is_nan(y) or is_nan(z):
        return NAN
    ps = sign(x) ^ sign(y)
    if is_inf(x) or is_inf(y):
        if (x & 0x7FFFFFFF) == 0 or (y & 0x7FFFFFFF) == 0:
            return NAN
        if is_inf(z) and sign(z) != ps:
            return NAN
        return NINF if ps else PINF
    if is_inf(z):
        return z
    p = value(x) * value(y)
    v = p + value(z)
    if v == 0:
        # Exact zero: -0 only when both addends are (negative) zeros.
        pz = p == 0
        neg = pz and ps and sign(z) and (z & 0x7FFFFFFF) == 0
        return f32_round(v, neg_zero=bool(neg))
    return f32_round(v)


def isqrt_round(v):
    """Correctly rounded f32 sqrt of a positive Fraction."""
    # Scale so that the integer square root has plenty of bits, keep a sticky bit.
    k = 0
    while v * Fraction(4) ** k < Fraction(2) ** 120:
        k += 1
    while v * Fraction(4) ** k >= Fraction(2) ** 124:
        k -= 1
    t = v * Fraction(4) ** k
    n = t.numerator // t.denominator
    r = math.isqrt(n)
    exact = r * r == n and t.denominator == 1
    # r has ~61 bits: add a sticky half-bit when inexact so ties are not faked.
    approx = Fraction(2 * r + (0 if exact else 1), 2) / Fraction(2) ** k
    return f32_round(approx)


def f32_unop(op, x):
    x = canon(x)
    if op == "neg":
        return NAN if is_nan(x) else x ^ 0x80000000
    if op == "abs":
        return NAN if is_nan(x) else x & 0x7FFFFFFF
    if op == "isnan":
        return int(is_nan(x))
    if op == "isinf":
        return int(is_inf(x))
    if op == "isfinite":
        return int(not is_inf(x) and not is_nan(x))
    if is_nan(x):
        return NAN
    if op == "sign":
        if (x & 0x7FFFFFFF) == 0:
            return x
        return 0xBF800000 if sign(x) else 0x3F800000
    if op in ("floor", "ceil", "trunc", "round"):
        if is_inf(x) or (x & 0x7FFFFFFF) == 0:
            return x
        v = value(x)
        if op == "floor":
            r = math.floor(v)
        elif op == "ceil":
            r = math.ceil(v)
        elif op == "trunc":
            r = math.trunc(v)
        else:
            r = round(v)  # Python rounds half to even
        return f32_round(Fraction(r), neg_zero=bool(sign(x)))
    if op == "sqrt":
        if (x & 0x7FFFFFFF) == 0:
            return x
        if sign(x):
            return NAN
        if is_inf(x):
            return x
        return isqrt_round(value(x))
    if op == "rcp":
        return f32_binop("div", 0x3F800000, x)
    raise ValueError(op)


# ---------------------------------------------------------------- casts
VALUE_TYPES = ("bool", "u32", "u64", "i32", "i64", "f32")
WIDTH = {"u32": 32, "u64": 64, "i32": 32, "i64": 64}


def cast(frm, to, x):
    """Cast the bits x of value type frm to value type to (semantics.md "Casts")."""
    if frm == to:
        return canon(x) if frm == "f32" else x
    if frm == "bool":
        v = 1 if x else 0
        return 0x3F800000 if (to == "f32" and v) else (0 if to == "f32" else v)
    if to == "bool":
        if frm == "f32":
            return int((canon(x) & 0x7FFFFFFF) != 0 or is_nan(canon(x)))
        return int(x != 0)
    if frm == "f32":
        x = canon(x)
        w = WIDTH[to]
        signed = to[0] == "i"
        lo, hi = (-(1 << (w - 1)), (1 << (w - 1)) - 1) if signed else (0, mask(w))
        if is_nan(x):
            return 0
        if is_inf(x):
            return wrap(lo if sign(x) else hi, w)
        t = math.trunc(value(x))
        return wrap(max(lo, min(hi, t)), w)
    n = sx(x, WIDTH[frm]) if frm[0] == "i" else x
    if to == "f32":
        return f32_round(Fraction(n))
    w = WIDTH[to]
    return wrap(n, w)


# ---------------------------------------------------------------- f16 / bf16
def f16_to_f32(h):
    s = (h >> 15) & 1
    e = (h >> 10) & 0x1F
    m = h & 0x3FF
    if e == 0x1F:
        return (s << 31) | 0x7F800000 | (m << 13)
    if e == 0:
        if m == 0:
            return s << 31
        v = Fraction(m, 1 << 24)
        return round_fraction(-v if s else v)  # exact: every f16 is an f32
    return (s << 31) | ((e - 15 + 127) << 23) | (m << 13)


def bf16_to_f32(h):
    return (h & 0xFFFF) << 16


def f32_to_f16(b):
    if is_nan(b):
        return 0x7E00
    if is_inf(b):
        return 0xFC00 if sign(b) else 0x7C00
    if (b & 0x7FFFFFFF) == 0:
        return 0x8000 if sign(b) else 0
    return round_fraction(value(b), mant=10, emin=-14, emax=15, exp_bits=5)


def f32_to_bf16(b):
    if is_nan(b):
        return 0x7FC0
    if is_inf(b):
        return 0xFF80 if sign(b) else 0x7F80
    if (b & 0x7FFFFFFF) == 0:
        return 0x8000 if sign(b) else 0
    return round_fraction(value(b), mant=7, emin=-126, emax=127, exp_bits=8)
