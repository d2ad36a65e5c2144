# mmamodel.py -- exact models of the MMA ops (docs/semantics.md, "Matrix multiply-accumulate"): tiles read and written by layout, integer MMA wrapped mod 2^32, float MMA summed exactly, for the corpus generator's golden outputs.
"""Models of mma_fill, mma_load, mma and mma_store written from
docs/semantics.md alone, over raw element bits (ints).

Tiles are lists of rows.  A float tile element is its raw bits in the
component type (f16, bf16 or f32); an integer one is a Python int.  The
float mma returns, per element, either ("nan",), ("inf", sign) or
("exact", Fraction): the exact value of C + sum A*B before the reference's
single rounding.  `golden_f32` turns that into the f32 bits every backend
must come within the bound of, or None when the exact value is not an f32
(then a case carries no golden for that output: only the reference's
rounding, within the bound, is checked).
"""
from fractions import Fraction

import f32model as M

# M x N x K per A/B component (vyre_mma_shape).
SHAPE = {"f16": (16, 16, 16), "bf16": (16, 16, 16), "i8": (16, 16, 32), "u8": (16, 16, 32)}
ACC = {"f16": "f32", "bf16": "f32", "i8": "i32", "u8": "i32"}


def dims(use, comp):
    """(rows, cols) of a tile: A M x K, B K x N, accumulator M x N."""
    m, n, k = SHAPE.get(comp, (16, 16, 16))
    return {"a": (m, k), "b": (k, n), "acc": (16, 16)}[use]


def pos(index, stride, layout, r, c):
    return index + r * stride + c if layout == "row" else index + c * stride + r


def load(buf, index, stride, layout, rows, cols):
    """mma_load: element (r, c) from buf, 0 beyond its end."""
    out = []
    for r in range(rows):
        row = []
        for c in range(cols):
            p = pos(index, stride, layout, r, c)
            row.append(buf[p] if p < len(buf) else 0)
        out.append(row)
    return out


def store(buf, index, stride, layout, tile):
    """mma_store into buf (a list, modified): elements beyond its end dropped."""
    for r, row in enumerate(tile):
        for c, v in enumerate(row):
            p = pos(index, stride, layout, r, c)
            if p < len(buf):
                buf[p] = v


def fill(value):
    return [[value] * 16 for _ in range(16)]


def to_f32_bits(bits, comp):
    """A loaded element as f32 bits, exactly (no flush, subnormals kept)."""
    if comp == "f16":
        return M.f16_to_f32(bits)
    if comp == "bf16":
        return M.bf16_to_f32(bits)
    return bits & 0xFFFFFFFF


def _term(bits):
    """("nan",), ("inf", sign) or ("fin", Fraction) of f32 bits."""
    if M.is_nan(bits):
        return ("nan",)
    if M.is_inf(bits):
        return ("inf", M.sign(bits))
    return ("fin", M.value(bits))


def mma_int(a, b, c, comp):
    """D = C + A B, exact, wrapped mod 2^32 (two's complement); i32 results."""
    def v(x):
        return M.sx(x, 8) if comp == "i8" else x & 0xFF
    m, n, k = SHAPE[comp]
    return [[M.sx(c[i][j] + sum(v(a[i][q]) * v(b[q][j]) for q in range(k)), 32)
             for j in range(n)] for i in range(m)]


def mma_float(a, b, c, comp):
    """Per element the exact result before rounding: ("nan",),
    ("inf", sign) or ("exact", Fraction).  c holds f32 bits, or results of
    an earlier mma_float (chained accumulators)."""
    m, n, k = SHAPE[comp]
    out = []
    for i in range(m):
        row = []
        for j in range(n):
            cv = c[i][j] if isinstance(c[i][j], tuple) else _term(c[i][j])
            nan = cv[0] == "nan"
            pinf = cv[0] == "inf" and cv[1] == 0
            ninf = cv[0] == "inf" and cv[1] == 1
            total = cv[1] if cv[0] in ("fin", "exact") else Fraction(0)
            for q in range(k):
                x, y = _term(to_f32_bits(a[i][q], comp)), _term(to_f32_bits(b[q][j], comp))
                if x[0] == "nan" or y[0] == "nan":
                    nan = True
                elif x[0] == "inf" or y[0] == "inf":
                    other = y if x[0] == "inf" else x
                    if other[0] == "fin" and other[1] == 0:
                        nan = True  # inf * 0
                    else:
                        s = (x[1] if x[0] == "inf" else int(x[1] < 0)) ^ \
                            (y[1] if y[0] == "inf" else int(y[1] < 0))
                        pinf |= s == 0
                        ninf |= s == 1
                else:
                    total += x[1] * y[1]
            if nan or (pinf and ninf):
                row.append(("nan",))
            elif pinf or ninf:
                row.append(("inf", 1 if ninf else 0))
            else:
                row.append(("exact", total))
        out.append(row)
    return out


def golden_f32(r):
    """The f32 bits of a float-mma result element when they are exact
    (NaN: 0x7FC00000, any NaN matches; inf), else None."""
    if r[0] == "nan":
        return M.NAN
    if r[0] == "inf":
        return M.NINF if r[1] else M.PINF
    bits = M.round_fraction(r[1], gradual=True)
    if M.is_inf(bits) or M.value(bits) != r[1]:
        return None
    return bits


def f32_of(x):
    """Exact f32 bits of a finite Python number (must be representable)."""
    bits = M.round_fraction(Fraction(x), gradual=True)
    assert M.value(bits) == Fraction(x), x
    return bits


def f16_of(x):
    bits = M.round_fraction(Fraction(x), mant=10, emin=-14, emax=15, exp_bits=5)
    assert M.value(M.f16_to_f32(bits)) == Fraction(x), x
    return bits


def bf16_of(x):
    bits = M.round_fraction(Fraction(x), mant=7, emin=-126, emax=127, exp_bits=8)
    assert M.value(M.bf16_to_f32(bits)) == Fraction(x), x
    return bits


def half_of(x, comp):
    return f16_of(x) if comp == "f16" else bf16_of(x)
