"""builder.py -- a small Pythonic program builder over libvyre's C builder (vyre_support.h)."""
import ctypes as C
import struct
import threading

from . import _ints, _lib
from .errors import check, invalid
from .program import ACCESS, Program, type_id

_ORDERS = ["relaxed", "acquire", "release", "acq_rel", "seq_cst"]
_REDUCES = ["add", "min", "max", "and", "or", "xor"]
# vyre_op_class numbers (VYRE_OP_CLASS_MAP's order) the generic op call uses.
_OC_BINARY, _OC_COMPARE, _OC_UNARY, _OC_PREDICATE = 5, 6, 7, 8
_OP_BUILTIN = {"gid": 5, "wgid": 6, "lid": 7, "lane": 8, "sgsize": 9}
_OP_ATOMIC = {"add": 128, "and": 129, "or": 130, "xor": 131, "min": 132, "max": 133, "xchg": 134}


def _index(names, name, what):
    try:
        return names.index(name)
    except ValueError:
        raise invalid("'%s' is not a %s. Fix: use one of %s" % (name, what, ", ".join(names)))


class Value(object):
    """A value id of the program being built, with its type name.

    Arithmetic operators build instructions: + - * / % & | ^ << >> (add sub
    mul div mod and or xor shl shr), unary - and ~ (neg, bitnot), and the
    comparisons < <= > >= (lt le gt ge).  Equality is .eq(other) /
    .ne(other) (== keeps its Python meaning).  A Python int, float or bool
    operand becomes a constant of this value's type.
    """

    __slots__ = ("b", "id", "type")

    def __init__(self, builder, vid):
        self.b = builder
        self.id = vid
        self.type = builder._type_name(vid)

    def _bin(self, mnemonic, other, swap=False):
        o = self.b._value(other, self.type)
        return self.b.op(mnemonic, o, self) if swap else self.b.op(mnemonic, self, o)

    def __add__(self, o): return self._bin("add", o)
    def __radd__(self, o): return self._bin("add", o, True)
    def __sub__(self, o): return self._bin("sub", o)
    def __rsub__(self, o): return self._bin("sub", o, True)
    def __mul__(self, o): return self._bin("mul", o)
    def __rmul__(self, o): return self._bin("mul", o, True)
    def __truediv__(self, o): return self._bin("div", o)
    def __rtruediv__(self, o): return self._bin("div", o, True)
    __floordiv__ = __truediv__
    __rfloordiv__ = __rtruediv__
    def __mod__(self, o): return self._bin("mod", o)
    def __rmod__(self, o): return self._bin("mod", o, True)
    def __and__(self, o): return self._bin("and", o)
    def __rand__(self, o): return self._bin("and", o, True)
    def __or__(self, o): return self._bin("or", o)
    def __ror__(self, o): return self._bin("or", o, True)
    def __xor__(self, o): return self._bin("xor", o)
    def __rxor__(self, o): return self._bin("xor", o, True)
    def __lshift__(self, o): return self._bin("shl", o)
    def __rshift__(self, o): return self._bin("shr", o)
    def __lt__(self, o): return self._bin("lt", o)
    def __le__(self, o): return self._bin("le", o)
    def __gt__(self, o): return self._bin("gt", o)
    def __ge__(self, o): return self._bin("ge", o)
    def __neg__(self): return self.b.op("neg", self)
    def __invert__(self): return self.b.op("bitnot", self)
    def eq(self, o): return self._bin("eq", o)
    def ne(self, o): return self._bin("ne", o)

    def __bool__(self):
        raise invalid("a vyre Value has no truth value while the program is being built. Fix: "
                      "use `with b.if_(cond):` for a branch, or .eq() for equality")

    def __repr__(self):
        return "%%%d:%s" % (self.id, self.type)


class Buffer(object):
    """A declared buffer: buf[i] loads (a Value), buf[i] = v stores, buf.len() is buflen."""

    __slots__ = ("b", "index", "name", "type")

    def __init__(self, builder, index, name, type_name):
        self.b, self.index, self.name, self.type = builder, index, name, type_name

    def __getitem__(self, i):
        return self.b.load(self, i)

    def __setitem__(self, i, v):
        self.b.store(self, i, v)

    def len(self):
        return self.b.buflen(self)

    def __repr__(self):
        return "<vyre.Buffer %s %s>" % (self.name, self.type)


class Local(object):
    """A local slot: .get() reads it (a Value), .set(v) assigns it."""

    __slots__ = ("b", "slot", "type", "defined")

    def __init__(self, builder, slot, type_name):
        self.b, self.slot, self.type, self.defined = builder, slot, type_name, False

    def get(self):
        return self.b.get(self)

    def set(self, v):
        self.b.assign(self, v)


class _Scope(object):
    def __init__(self, builder, value=None):
        self.b = builder
        self.value = value

    def __enter__(self):
        return self.value

    def __exit__(self, *exc):
        self.b._close_scope()
        return False


class Builder(object):
    """Build a program in code; finish() returns the validated Program.

    Builder(workgroup=(64, 1, 1)): the workgroup size (an int is (x, 1, 1)).
    Declarations: buffer(), local().  Values: const/u32/i32/u64/i64/f32/
    boolean, gid/wgid/lid(axis), lane(), sgsize(), load, buflen, get, op(),
    and every unary or binary op by its mnemonic as a method
    (b.sqrt(x), b.min(x, y), b.popcount(x)), select, cast, fma, atomic,
    cas, ballot, shuffle, reduce.  Statements: let, assign, store,
    barrier, ret, trap; control flow as context managers: if_, else_,
    loop, block.  Type errors are the validator's, raised by finish().
    Every call into C holds the builder's lock, so that close() or finish()
    in another thread waits for it (one thread building is the sensible
    use; several are safe, their instructions interleaved).
    """

    def __init__(self, workgroup=(64, 1, 1)):
        wg = _ints.triple(() if workgroup is None else workgroup, "workgroup")
        self._lock = threading.Lock()
        self._pending_ends = []  # closed if-blocks whose END waits for a possible else_
        self._locals = []
        self._b = _lib.vyre_builder_new(*wg)
        if not self._b:
            raise MemoryError("vyre_builder_new: out of memory")

    def __del__(self):
        if getattr(self, "_lock", None) is not None:
            self.close()

    def close(self):
        """Free an unfinished builder (after a call in flight on it).  Idempotent."""
        with self._lock:
            b, self._b = getattr(self, "_b", None), None
            if b:
                _lib.vyre_builder_free(b)

    def _c(self, fn, *args, flush=True):
        """fn(the C builder, *args) under the builder's lock: args are plain
        values already (no code of the caller's runs while it is held);
        InvalidArgument once finished.  Pending if-block ENDs are written
        first unless flush is False."""
        with self._lock:
            if not self._b:
                raise invalid("this builder is finished. Fix: make a new vyre.Builder")
            # An if-block's END is written once we know no else_ follows.
            while flush and self._pending_ends:
                self._pending_ends.pop()
                _lib.vyre_b_end(self._b)
            return fn(self._b, *args) if fn is not None else None

    def _type_name(self, vid):
        return _lib.vyre_type_name(self._c(_lib.vyre_b_type_of, vid, flush=False)).decode()

    def _v(self, vid):
        return Value(self, vid)

    def _value(self, x, type_name="u32"):
        """x as a Value: a Value as it is, a Python number as a constant of type_name."""
        if isinstance(x, Value):
            if x.b is not self:
                raise invalid("a Value of another builder. Fix: use values of this builder only")
            return x
        if isinstance(x, Local):
            return self.get(x)
        if isinstance(x, (bool, int, float)):
            return self.const(type_name if type_name != "void" else "u32", x)
        raise invalid("%r is not a vyre Value or a number. Fix: pass a Value made by this builder"
                      % (x,))

    def set_workgroup(self, workgroup):
        wg = _ints.triple(() if workgroup is None else workgroup, "workgroup")
        self._c(_lib.vyre_builder_set_workgroup, *wg)

    # Declarations ------------------------------------------------------

    def buffer(self, name, type, access="rw", count=0, output=False, binding=None,
               out_range=None):
        """Declare a buffer; returns a Buffer.

        access: "ro", "rw", "wo", "uniform" or "workgroup"; count: elements
        (0 = sized by its input; workgroup buffers need one); output: the
        output flag (a backend-allocated, zero-filled output); binding: the
        next one when None; out_range: (byte offset, byte size) read back.
        """
        raw = str(name).encode()
        acc = _index(ACCESS, access, "buffer access")
        bind = 0xFFFFFFFF if binding is None else _ints.u32(binding, "binding of buffer '%s'" % name)
        n = _ints.u32(count, "count of buffer '%s'" % name,
                      fix="pass an element count from 0 (sized by its input) to 4294967295")
        t = type_id(type)
        rng = None
        if out_range is not None:
            r = tuple(out_range) if isinstance(out_range, (tuple, list)) else ()
            if len(r) != 2:
                raise invalid("out_range %r of buffer '%s' is not (byte offset, byte size). Fix: "
                              "pass two ints" % (out_range, name))
            rng = tuple(_ints.u32(v, "out_range %s of buffer '%s'" % (w, name))
                        for v, w in zip(r, ("offset", "size")))
        idx = self._c(_lib.vyre_b_buffer, raw, bind, acc, t, n, 1 if output else 0)
        if rng is not None:
            self._c(_lib.vyre_b_buffer_range, idx, *rng)
        return Buffer(self, idx, str(name), _lib.vyre_type_name(t).decode())

    def local(self, type="u32"):
        """Declare a local slot of `type`; returns a Local (define it with let)."""
        t = type_id(type)
        slot = self._c(_lib.vyre_b_local, t)
        loc = Local(self, slot, _lib.vyre_type_name(t).decode())
        self._locals.append(loc)
        return loc

    # Values ------------------------------------------------------------

    def const(self, type, value):
        """A constant of `type` ("u32", "f32", "bool", ...) with the Python value `value`."""
        t = type_id(type)
        name = _lib.vyre_type_name(t).decode()
        if name in ("i32", "i64", "u32", "u64"):
            v = _ints.checked(value, name, "%s constant" % name,
                              fix="pass an int in %s's range" % name)
            bits = v & ((1 << (32 if name[1:] == "32" else 64)) - 1)
        elif name == "bool":
            bits = 1 if value else 0
        elif name == "f32":
            try:
                bits = struct.unpack("<I", struct.pack("<f", float(value)))[0]
            except (OverflowError, ValueError, TypeError):
                raise invalid("%r is not a f32 constant. Fix: pass a number in f32's range"
                              % (value,))
        else:
            raise invalid("constants are of a value type (bool u32 u64 i32 i64 f32), not %s. "
                          "Fix: make the constant u32/i32/f32 and cast or store it" % name)
        return self._v(self._c(_lib.vyre_b_const, t, bits))

    def u32(self, v): return self.const("u32", v)
    def i32(self, v): return self.const("i32", v)
    def u64(self, v): return self.const("u64", v)
    def i64(self, v): return self.const("i64", v)
    def f32(self, v): return self.const("f32", v)
    def boolean(self, v): return self.const("bool", v)

    def _builtin(self, name, axis):
        if _ints.is_bool(axis) or axis not in (0, 1, 2):
            axis = _index(["x", "y", "z"], axis, "axis")
        return self._v(self._c(_lib.vyre_b_builtin, _OP_BUILTIN[name], int(axis)))

    def gid(self, axis=0): return self._builtin("gid", axis)
    def wgid(self, axis=0): return self._builtin("wgid", axis)
    def lid(self, axis=0): return self._builtin("lid", axis)
    def lane(self): return self._v(self._c(_lib.vyre_b_builtin, _OP_BUILTIN["lane"], 0))
    def sgsize(self): return self._v(self._c(_lib.vyre_b_builtin, _OP_BUILTIN["sgsize"], 0))

    def load(self, buf, index):
        i = self._value(index)
        return self._v(self._c(_lib.vyre_b_load, buf.index, i.id))

    def buflen(self, buf):
        return self._v(self._c(_lib.vyre_b_buflen, buf.index))

    def get(self, local):
        return self._v(self._c(_lib.vyre_b_get, local.slot))

    def op(self, mnemonic, *args):
        """Any unary, predicate, binary or compare op by its mnemonic ("add", "sqrt", "isnan")."""
        raw = str(mnemonic).encode()
        info = _lib.vyre_op_by_mnemonic(raw, len(raw))
        if not info:
            raise invalid("'%s' is no vyre op. Fix: use a mnemonic of program-text.md" % mnemonic)
        cls = info.contents.op_class
        if cls in (_OC_BINARY, _OC_COMPARE):
            if len(args) != 2:
                raise invalid("%s takes two operands. Fix: pass two values" % mnemonic)
            first = self._value(args[0], args[1].type if isinstance(args[1], Value) else "u32")
            second = self._value(args[1], first.type)
            return self._v(self._c(_lib.vyre_b_bin, info.contents.id, first.id, second.id))
        if cls in (_OC_UNARY, _OC_PREDICATE):
            if len(args) != 1:
                raise invalid("%s takes one operand. Fix: pass one value" % mnemonic)
            x = self._value(args[0])
            return self._v(self._c(_lib.vyre_b_un, info.contents.id, x.id))
        raise invalid("'%s' is not a unary or binary op. Fix: use its own builder method "
                      "(load, select, cast, fma, atomic, ...)" % mnemonic)

    def __getattr__(self, name):
        # b.sqrt(x), b.min(x, y): every unary/binary op by its mnemonic.
        if name.startswith("_"):
            raise AttributeError(name)
        raw = name.encode()
        info = _lib.vyre_op_by_mnemonic(raw, len(raw))
        if not info or info.contents.op_class not in (_OC_BINARY, _OC_COMPARE, _OC_UNARY,
                                                      _OC_PREDICATE):
            raise AttributeError("vyre.Builder has no attribute or op '%s'" % name)
        return lambda *args: self.op(name, *args)

    def select(self, cond, if_true, if_false):
        t = self._value(if_true, if_false.type if isinstance(if_false, Value) else "u32")
        f = self._value(if_false, t.type)
        c = self._value(cond, "bool")
        return self._v(self._c(_lib.vyre_b_select, c.id, t.id, f.id))

    def cast(self, type, x):
        t, v = type_id(type), self._value(x)
        return self._v(self._c(_lib.vyre_b_cast, t, v.id))

    def fma(self, x, y, z):
        x, y, z = (self._value(v, "f32") for v in (x, y, z))
        return self._v(self._c(_lib.vyre_b_fma, x.id, y.id, z.id))

    def atomic(self, kind, buf, index, value, order="relaxed"):
        """atomic_KIND (add and or xor min max xchg) on buf[index]; returns the old value."""
        if kind not in _OP_ATOMIC:
            raise invalid("'%s' is no atomic. Fix: use one of %s" % (kind, ", ".join(_OP_ATOMIC)))
        i, v = self._value(index), self._value(value, buf.type)
        o = _index(_ORDERS, order, "memory order")
        return self._v(self._c(_lib.vyre_b_atomic, _OP_ATOMIC[kind], buf.index, i.id, v.id, o))

    def cas(self, buf, index, expected, desired, order="relaxed"):
        i = self._value(index)
        e, d = self._value(expected, buf.type), self._value(desired, buf.type)
        o = _index(_ORDERS, order, "memory order")
        return self._v(self._c(_lib.vyre_b_cas, buf.index, i.id, e.id, d.id, o))

    def ballot(self, cond):
        c = self._value(cond, "bool")
        return self._v(self._c(_lib.vyre_b_ballot, c.id))

    def shuffle(self, value, lane):
        v, n = self._value(value), self._value(lane)
        return self._v(self._c(_lib.vyre_b_shuffle, v.id, n.id))

    def reduce(self, kind, value):
        k, v = _index(_REDUCES, kind, "reduction"), self._value(value)
        return self._v(self._c(_lib.vyre_b_reduce, k, v.id))

    # Statements ----------------------------------------------------------

    def let(self, local, value):
        v = self._value(value, local.type)
        self._c(_lib.vyre_b_let, local.slot, v.id)
        local.defined = True

    def assign(self, local, value):
        v = self._value(value, local.type)
        self._c(_lib.vyre_b_assign, local.slot, v.id)

    def store(self, buf, index, value):
        i = self._value(index)
        v = self._value(value, buf.type if buf.type in ("u32", "u64", "i32", "i64", "f32", "bool")
                        else ("f32" if buf.type in ("f16", "bf16") else
                              "i32" if buf.type.startswith("i") else "u32"))
        self._c(_lib.vyre_b_store, buf.index, i.id, v.id)

    def barrier(self, grid=False):
        self._c(_lib.vyre_b_barrier, 1 if grid else 0)

    def ret(self):
        self._c(_lib.vyre_b_return)

    def trap(self, code):
        self._c(_lib.vyre_b_trap, _ints.u32(code, "trap code"))

    def _close_scope(self):
        self._c(_lib.vyre_b_end)

    def if_(self, cond):
        """with b.if_(cond): ... -- an if block; an else_ block may follow it at once."""
        c = self._value(cond, "bool")
        self._c(_lib.vyre_b_if, c.id)
        b = self

        class _If(_Scope):
            def __exit__(self, *exc):
                b._c(None)  # the ENDs of if-blocks nested in this one
                b._pending_ends.append(1)  # END written lazily: else_ may follow
                return False
        return _If(self)

    def else_(self):
        """with b.else_(): ... -- right after an if_ block."""
        if not self._pending_ends:
            raise invalid("else_ without an if_ block just before it. Fix: open else_ right "
                          "after the `with b.if_(...)` block")
        self._pending_ends.pop()
        self._c(_lib.vyre_b_else, flush=False)
        return _Scope(self)

    def loop(self, start, end, type="u32"):
        """with b.loop(start, end) as i: ... -- i (a Local) runs over [start, end)."""
        s = self._value(start, type)
        e = self._value(end, type)
        loc = self.local(type)
        self._c(_lib.vyre_b_loop, loc.slot, s.id, e.id)
        return _Scope(self, loc)

    def block(self):
        """with b.block(): ... -- a block (return inside leaves it)."""
        self._c(_lib.vyre_b_block)
        return _Scope(self)

    # The result ----------------------------------------------------------

    def finish(self, name=None):
        """Encode, validate and return the Program; the builder is spent."""
        err = _lib.new_error()
        out = C.c_void_p()
        size = C.c_size_t()
        try:
            check(self._c(_lib.vyre_builder_finish, C.byref(out), C.byref(size), C.byref(err)),
                  err, "vyre_builder_finish")
            try:
                data = C.string_at(out, size.value)
            finally:
                _lib.libc_free(out)
        finally:
            self.close()
        return Program(data, name=name or "built program")
