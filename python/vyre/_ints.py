"""_ints.py -- the one check of every integer the package hands to C: an integer (not a bool) within the C type's range, else InvalidArgument with a Fix.

ctypes converts a Python int to a C integer by truncation (2**40 as a
uint32_t is 0) and takes True as 1; every argument and struct field of
an integer type is therefore passed through checked() first.
"""
import ctypes as C
import operator

from .errors import invalid

# C type -> (lowest, highest, how messages name it).
_PTR_BITS = 8 * C.sizeof(C.c_void_p)
RANGES = {
    "u32": (0, (1 << 32) - 1, "a 32-bit unsigned integer"),
    "u64": (0, (1 << 64) - 1, "a 64-bit unsigned integer"),
    "i32": (-(1 << 31), (1 << 31) - 1, "a 32-bit signed integer"),
    "i64": (-(1 << 63), (1 << 63) - 1, "a 64-bit signed integer"),
    "int": (-(1 << (8 * C.sizeof(C.c_int) - 1)), (1 << (8 * C.sizeof(C.c_int) - 1)) - 1,
            "a C int"),
    "ptr": (0, (1 << _PTR_BITS) - 1, "an address"),
}


def is_bool(value):
    """True for a bool, and for NumPy's bool_ (which still converts with __index__)."""
    t = type(value)
    return isinstance(value, bool) or (t.__name__ in ("bool_", "bool") and
                                       t.__module__ == "numpy")


def checked(value, ctype, what, low=None, fix=None):
    """value as a Python int: an int or any integer with __index__ (NumPy's
    integers), not a bool, from max(low, the C type's lowest) to the C
    type's highest (ctype: "u32", "u64", "i32", "i64", "int" or "ptr").
    Anything else raises InvalidArgument naming `what`, the range and `fix`
    (default: pass an int in that range)."""
    lo, hi, name = RANGES[ctype]
    if low is not None and low > lo:
        lo = low
    if type(value) is int and lo <= value <= hi:  # the common case, first
        return value
    fix = fix or "pass an int from %d to %d" % (lo, hi)
    if is_bool(value):
        raise invalid("%s %r is a bool where an integer is meant. Fix: %s" % (what, value, fix))
    try:
        v = int(operator.index(value))
    except Exception:
        raise invalid("%s %r is not an integer (%s). Fix: %s" % (what, value, type(value).__name__,
                                                                  fix))
    if v < lo:
        raise invalid("%s %d is below %d, the least %s takes. Fix: %s" % (
            what, v, lo, "it" if lo > RANGES[ctype][0] else name, fix))
    if v > hi:
        raise invalid("%s %d is over %d, the most %s holds. Fix: %s" % (what, v, hi, name, fix))
    return v


def u32(value, what, low=None, fix=None):
    """checked(value, "u32", ...)."""
    return checked(value, "u32", what, low, fix)


def u64(value, what, low=None, fix=None):
    """checked(value, "u64", ...)."""
    return checked(value, "u64", what, low, fix)


def triple(v, what):
    """A workgroup size or grid: an int or 1 to 3 ints, each from 1 to
    2**32-1, as (x, y, z) with missing axes 1; None is (0, 0, 0) (not set)."""
    if v is None:
        return (0, 0, 0)
    t = tuple(v) if isinstance(v, (tuple, list)) else (v,)
    if not 1 <= len(t) <= 3:
        raise invalid("%s %r is not 1 to 3 positive ints. Fix: pass e.g. 256 or (16, 16)"
                      % (what, v))
    if not all(type(x) is int and 0 < x < 1 << 32 for x in t):
        t = tuple(u32(x, "%s %s" % (what, "xyz"[i]), low=1,
                      fix="pass 1 to 3 ints from 1 to 4294967295, e.g. 256 or (16, 16)")
                  for i, x in enumerate(t))
    return t + (1,) * (3 - len(t))
