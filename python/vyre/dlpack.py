"""dlpack.py -- DLPack capsules both ways: taking a tensor a producer gives (DLPack 1.x "dltensor_versioned" first, the 0.x "dltensor" from older producers) and making one for a consumer (Resident.__dlpack__)."""
import ctypes as C

from .errors import invalid

# dlpack.h: device types, the 1.x flags, the newest version vyre reads and writes.
KDL_CPU, KDL_CUDA, KDL_CUDA_HOST, KDL_CUDA_MANAGED = 1, 2, 3, 13
FLAG_READ_ONLY = 1  # DLPACK_FLAG_BITMASK_READ_ONLY
FLAG_IS_COPIED = 2  # DLPACK_FLAG_BITMASK_IS_COPIED
VERSION = (1, 0)
_DL_CODES = {0: "int", 1: "uint", 2: "float", 4: "bfloat", 6: "bool"}


class DLDevice(C.Structure):
    _fields_ = [("device_type", C.c_int32), ("device_id", C.c_int32)]


class DLDataType(C.Structure):
    _fields_ = [("code", C.c_uint8), ("bits", C.c_uint8), ("lanes", C.c_uint16)]


class DLTensor(C.Structure):
    _fields_ = [("data", C.c_void_p), ("device", DLDevice), ("ndim", C.c_int32),
                ("dtype", DLDataType), ("shape", C.POINTER(C.c_int64)),
                ("strides", C.POINTER(C.c_int64)), ("byte_offset", C.c_uint64)]


class DLManagedTensor(C.Structure):
    """DLPack 0.x: capsule "dltensor"."""


DLManagedTensor._fields_ = [("dl_tensor", DLTensor), ("manager_ctx", C.c_void_p),
                            ("deleter", C.CFUNCTYPE(None, C.POINTER(DLManagedTensor)))]


class DLPackVersion(C.Structure):
    _fields_ = [("major", C.c_uint32), ("minor", C.c_uint32)]


class DLManagedTensorVersioned(C.Structure):
    """DLPack 1.x: capsule "dltensor_versioned".  version, manager_ctx and
    deleter stay where they are in every later version (the ABI-stable head)."""


DLManagedTensorVersioned._fields_ = [
    ("version", DLPackVersion), ("manager_ctx", C.c_void_p),
    ("deleter", C.CFUNCTYPE(None, C.POINTER(DLManagedTensorVersioned))),
    ("flags", C.c_uint64), ("dl_tensor", DLTensor)]


def _capi(name, restype, argtypes):
    f = C.pythonapi[name]  # a fresh function object: its own argtypes
    f.restype, f.argtypes = restype, argtypes
    return f


_get = _capi("PyCapsule_GetPointer", C.c_void_p, [C.py_object, C.c_char_p])
_valid = _capi("PyCapsule_IsValid", C.c_int, [C.py_object, C.c_char_p])
_set_name = _capi("PyCapsule_SetName", C.c_int, [C.py_object, C.c_char_p])
_new = _capi("PyCapsule_New", C.py_object, [C.c_void_p, C.c_char_p, C.c_void_p])
_get_raw = _capi("PyCapsule_GetPointer", C.c_void_p, [C.c_void_p, C.c_char_p])
_valid_raw = _capi("PyCapsule_IsValid", C.c_int, [C.c_void_p, C.c_char_p])

# A capsule keeps the name pointer it was given: module constants live as long.
NAME, USED = b"dltensor", b"used_dltensor"
NAME_V, USED_V = b"dltensor_versioned", b"used_dltensor_versioned"


# ---------------------------------------------------------------------------
# Taking a producer's tensor
# ---------------------------------------------------------------------------


def call_dlpack(obj, stream):
    """obj.__dlpack__(max_version=(1, 0), stream=stream); a producer that
    predates DLPack 1.0 refuses max_version (TypeError) and is asked the
    legacy way.  stream None leaves the argument out (CPU tensors)."""
    kw = {} if stream is None else {"stream": stream}
    try:
        return obj.__dlpack__(max_version=VERSION, **kw)
    except TypeError:
        pass
    try:
        return obj.__dlpack__(**kw)
    except TypeError:
        if not kw:
            raise
        return obj.__dlpack__()


class Taken(object):
    """A tensor taken from a capsule (renamed "used_..."): tensor (the
    DLTensor), flags (0 for a 0.x capsule), versioned, readonly, copied.
    release() calls the producer's deleter, once; so does collection."""

    def __init__(self, mt, versioned):
        self._mt, self.versioned = mt, versioned
        self.tensor = mt.contents.dl_tensor
        self.flags = int(mt.contents.flags) if versioned else 0
        self.readonly = bool(self.flags & FLAG_READ_ONLY)
        self.copied = bool(self.flags & FLAG_IS_COPIED)

    def release(self):
        mt, self._mt = self._mt, None
        if mt is not None and mt.contents.deleter:
            mt.contents.deleter(mt)

    def __del__(self):
        self.release()


def take(capsule, what):
    """The Taken tensor of a producer's capsule; the capsule is renamed so
    that its destructor leaves the tensor to us.  A versioned capsule of
    another major is given back (deleter called) and refused."""
    if _valid(capsule, NAME_V):
        mt = C.cast(_get(capsule, NAME_V), C.POINTER(DLManagedTensorVersioned))
        _set_name(capsule, USED_V)
        v = mt.contents.version
        if v.major != VERSION[0]:
            if mt.contents.deleter:
                mt.contents.deleter(mt)
            raise invalid("%s is a DLPack %d.%d tensor; vyre reads DLPack 1.x and 0.x. Fix: ask "
                          "the producer for max_version=(1, 0), or pass the data as a NumPy array"
                          % (what, v.major, v.minor))
        return Taken(mt, True)
    if _valid(capsule, NAME):
        mt = C.cast(_get(capsule, NAME), C.POINTER(DLManagedTensor))
        _set_name(capsule, USED)
        return Taken(mt, False)
    raise invalid("%s's __dlpack__ gave no 'dltensor_versioned' or 'dltensor' capsule (a used "
                  "one?). Fix: pass a fresh tensor, or one with __cuda_array_interface__" % what)


_VYRE_TYPE = {("float", 4): "f32", ("float", 2): "f16", ("bfloat", 2): "bf16", ("uint", 4): "u32",
              ("int", 4): "i32", ("uint", 8): "u64", ("int", 8): "i64", ("uint", 2): "u16",
              ("int", 2): "i16", ("uint", 1): "u8", ("int", 1): "i8", ("bool", 1): "bool8",
              ("float", 8): "f64"}


# The most dimensions a tensor may have (NumPy's NPY_MAXDIMS).
MAX_DIMS = 64


def _bad(what, field, value, fix):
    return invalid("%s's DLPack tensor has %s %s. Fix: %s" % (what, field, value, fix))


def layout(t, what, fix_contiguous, device=None):
    """(address, nbytes, type name) of a dense DLTensor: the vyre storage
    type its elements are ("f32"), else the DLPack spelling ("float64").
    Every field is checked before it is used: ndim (0 to 64, shape not
    NULL), the dtype (whole bytes, one lane), the shape (no negative
    extent), the size and address (within 64 bits; data not NULL when
    there are bytes) and, with `device` ((type, id) of __dlpack_device__),
    that the tensor is where its producer said."""
    if not 0 <= t.ndim <= MAX_DIMS:
        raise _bad(what, "ndim", t.ndim, "pass a tensor of 0 to %d dimensions" % MAX_DIMS)
    if t.ndim and not t.shape:
        raise _bad(what, "a NULL shape for ndim", t.ndim, "the producer is broken: pass a NumPy "
                   "array or a tensor of another framework")
    if t.dtype.lanes != 1 or t.dtype.bits == 0 or t.dtype.bits % 8:
        raise invalid("%s has a vector or sub-byte dtype. Fix: pass a plain numeric tensor" % what)
    if device is not None and (t.device.device_type, t.device.device_id) != tuple(device):
        raise _bad(what, "device", (t.device.device_type, t.device.device_id),
                   "its __dlpack_device__ says %r: pass a tensor whose capsule agrees" % (device,))
    size = t.dtype.bits // 8
    shape = [t.shape[i] for i in range(t.ndim)]
    if any(n < 0 for n in shape):
        raise _bad(what, "shape", shape, "each extent is a count from 0")
    strides = [t.strides[i] * size for i in range(t.ndim)] if t.strides else None
    expect = size
    for n, s in zip(reversed(shape), reversed(strides or [])):
        if n != 1 and s != expect:
            raise invalid(fix_contiguous)
        expect *= n
    count = 1
    for n in shape:
        count *= n
    nbytes, addr = count * size, (t.data or 0) + t.byte_offset
    if nbytes >> 64 or (addr + nbytes) >> (8 * C.sizeof(C.c_void_p)):
        raise _bad(what, "%d bytes at address %#x + byte_offset" % (nbytes, t.data or 0),
                   t.byte_offset, "pass a tensor that fits the address space")
    if nbytes and not t.data:
        raise _bad(what, "a NULL data pointer for", "%d bytes" % nbytes,
                   "the producer is broken: pass a NumPy array or a tensor of another framework")
    code = _DL_CODES.get(t.dtype.code, "?")
    return addr, nbytes, _VYRE_TYPE.get((code, size), "%s%d" % (code, t.dtype.bits))


# ---------------------------------------------------------------------------
# Making a capsule for a consumer
# ---------------------------------------------------------------------------

# NumPy dtype name -> (DLDataTypeCode, bits).
_DL_OF = {"float32": (2, 32), "float16": (2, 16), "float64": (2, 64), "uint8": (1, 8),
          "uint16": (1, 16), "uint32": (1, 32), "uint64": (1, 64), "int8": (0, 8),
          "int16": (0, 16), "int32": (0, 32), "int64": (0, 64), "bool": (6, 8)}

# Every tensor handed out and not yet given back: the managed struct's
# address -> what must outlive it (the struct, shape, strides, memory).
_exports = {}


def _forget(p):
    _exports.pop(C.cast(p, C.c_void_p).value, None)


_DELETER = DLManagedTensor._fields_[2][1](_forget)
_DELETER_V = DLManagedTensorVersioned._fields_[2][1](_forget)


@C.CFUNCTYPE(None, C.c_void_p)
def _capsule_gone(cap):
    # Never consumed (still named "dltensor..."): the capsule owned the tensor.
    for name in (NAME_V, NAME):
        if _valid_raw(cap, name):
            _exports.pop(_get_raw(cap, name), None)
            return


def live_exports():
    """How many tensors handed out are not given back yet (for tests)."""
    return len(_exports)


def export(ptr, nbytes, dtype, device, flags, keep, versioned):
    """A capsule holding `nbytes` at address `ptr` on `device` ((type, id))
    as a 1-D C-contiguous tensor of NumPy dtype `dtype` (None, or a size
    that is no whole number of elements: uint8).  Versioned ("dltensor_versioned",
    DLPack 1.0, with `flags`) or 0.x ("dltensor", no flags).  `keep` lives
    until the consumer calls the deleter (or the capsule is dropped unused)."""
    code, bits = _DL_OF.get(str(dtype), (1, 8)) if dtype is not None else (1, 8)
    if nbytes % (bits // 8):
        code, bits = 1, 8
    shape = (C.c_int64 * 1)(nbytes // (bits // 8))
    strides = (C.c_int64 * 1)(1)
    if versioned:
        mt = DLManagedTensorVersioned()
        mt.version = DLPackVersion(*VERSION)
        mt.flags = flags
        mt.deleter = _DELETER_V
    else:
        mt = DLManagedTensor()
        mt.deleter = _DELETER
    t = mt.dl_tensor
    t.data, t.device, t.ndim = ptr or None, DLDevice(*device), 1
    t.dtype, t.shape, t.strides, t.byte_offset = DLDataType(code, bits, 1), shape, strides, 0
    addr = C.addressof(mt)
    _exports[addr] = (mt, shape, strides, keep)
    return _new(addr, NAME_V if versioned else NAME, C.cast(_capsule_gone, C.c_void_p))
