"""interop.py -- device arrays (PyTorch, CuPy, any __cuda_array_interface__ or DLPack producer) seen as raw device memory, zero copy."""
import ctypes as C

from .errors import invalid
from .program import NUMPY_DTYPE

# DLPack (dlpack.h, v0.8 "dltensor" capsules).
KDL_CPU, KDL_CUDA, KDL_CUDA_HOST, KDL_CUDA_MANAGED = 1, 2, 3, 13
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
    pass


DLManagedTensor._fields_ = [("dl_tensor", DLTensor), ("manager_ctx", C.c_void_p),
                            ("deleter", C.CFUNCTYPE(None, C.POINTER(DLManagedTensor)))]

_capsule_get = C.pythonapi.PyCapsule_GetPointer
_capsule_get.restype = C.c_void_p
_capsule_get.argtypes = [C.py_object, C.c_char_p]
_capsule_valid = C.pythonapi.PyCapsule_IsValid
_capsule_valid.restype = C.c_int
_capsule_valid.argtypes = [C.py_object, C.c_char_p]
_capsule_set_name = C.pythonapi.PyCapsule_SetName
_capsule_set_name.restype = C.c_int
_capsule_set_name.argtypes = [C.py_object, C.c_char_p]
# The capsule keeps this pointer: a module constant lives as long as it.
_USED = b"used_dltensor"

# typestr kind + bytes -> the vyre storage type it matches (for checks).
_TYPESTR = {("f", 4): "f32", ("f", 2): "f16", ("u", 4): "u32", ("i", 4): "i32", ("u", 8): "u64",
            ("i", 8): "i64", ("u", 2): "u16", ("i", 2): "i16", ("u", 1): "u8", ("i", 1): "i8",
            ("b", 1): "bool8", ("f", 8): "f64"}


def _module(obj):
    return (type(obj).__module__ or "").split(".")[0]


def _cai(obj):
    """(obj.__cuda_array_interface__, the object that gave it), or (None, obj).
    A torch tensor that requires grad refuses the interface: its .detach()
    shares the memory and gives it."""
    try:
        cai = obj.__cuda_array_interface__
        if isinstance(cai, dict):
            return cai, obj
    except Exception:
        pass
    if _module(obj) == "torch" and hasattr(obj, "detach"):
        try:
            src = obj.detach()
            cai = src.__cuda_array_interface__
            if isinstance(cai, dict):
                return cai, src
        except Exception:
            pass
    return None, obj


def _dlpack_device(obj):
    fn = getattr(obj, "__dlpack_device__", None)
    if fn is None or not hasattr(obj, "__dlpack__"):
        return None
    try:
        dev = fn()
        return int(dev[0]), int(dev[1])
    except Exception:
        return None


def is_device_array(obj):
    """True for an object vyre takes as device memory: a __cuda_array_interface__
    or a DLPack producer whose device is CUDA (or CUDA managed)."""
    if isinstance(obj, (bytes, bytearray, memoryview, int, float)):
        return False
    cai, _ = _cai(obj)
    if cai is not None:
        return True
    dev = _dlpack_device(obj)
    return dev is not None and dev[0] in (KDL_CUDA, KDL_CUDA_MANAGED)


class DeviceArray(object):
    """Device memory borrowed from a framework object: ptr, nbytes, type
    (vyre storage type name it matches, or None), device (ordinal or None),
    stream (the framework's current stream handle, or None), obj (kept alive).
    release() gives back a DLPack tensor; it is a no-op otherwise."""

    def __init__(self, obj, ptr, nbytes, type_name, device, readonly, kind):
        # type_name: the vyre type the elements are ("f32"), else the
        # producer's own spelling ("<c8", "float64") for messages.
        self.obj, self.ptr, self.nbytes, self.type = obj, ptr, nbytes, type_name
        self.device, self.readonly, self.kind = device, readonly, kind
        self._managed = None

    def release(self):
        m, self._managed = self._managed, None
        if m is not None and m.contents.deleter:
            m.contents.deleter(m)

    def __del__(self):
        self.release()


def _contiguous(shape, strides, itemsize):
    """strides (bytes; None = C order) describe a C-contiguous array of shape."""
    if strides is None:
        return True
    expect = itemsize
    for n, s in zip(reversed(list(shape)), reversed(list(strides))):
        if n != 1 and s != expect:
            return False
        expect *= n
    return True


def _fix_contiguous(what):
    return ("%s is not contiguous: vyre reads a buffer as one dense range. Fix: pass "
            "tensor.contiguous() (PyTorch) or cupy.ascontiguousarray(a)" % what)


def framework_stream(obj):
    """The current stream of obj's framework on obj's device (a CUstream
    handle as an int; 0 is the legacy default stream), or None when obj is
    of no framework vyre knows."""
    mod = _module(obj)
    if mod == "torch":
        import torch
        return int(torch.cuda.current_stream(obj.device).cuda_stream)
    if mod == "cupy":
        import cupy
        with cupy.cuda.Device(obj.device.id):
            return int(cupy.cuda.get_current_stream().ptr)
    return None


def device_array(obj, what, stream=None):
    """obj as a DeviceArray.  `what` names it in messages; `stream` is the
    consumer stream a DLPack producer is told (None: the legacy default)."""
    cai, src = _cai(obj)
    if cai is not None:
        data = cai.get("data") or (0, False)
        shape = tuple(cai.get("shape", ()))
        typestr = cai.get("typestr", "|u1")
        kind, size = typestr[1], int(typestr[2:])
        if typestr[0] == ">" and size > 1:
            raise invalid("%s is big-endian (%s). Fix: pass a little-endian array" % (what, typestr))
        count = 1
        for n in shape:
            count *= n
        if not _contiguous(shape, cai.get("strides"), size):
            raise invalid(_fix_contiguous(what))
        if cai.get("mask") is not None:
            raise invalid("%s is a masked array. Fix: pass its data" % what)
        device = None
        if _module(src) == "torch":
            device = src.device.index
        elif _module(src) == "cupy":
            device = src.device.id
        arr = DeviceArray(src, int(data[0]), count * size, _TYPESTR.get((kind, size), typestr),
                          device, bool(data[1]), "cuda_array_interface")
        arr.cai_stream = cai.get("stream")
        return arr
    dev = _dlpack_device(obj)
    if dev is None or dev[0] not in (KDL_CUDA, KDL_CUDA_MANAGED):
        raise invalid("%s (%s) is not device memory vyre can import. Fix: pass a CUDA tensor with "
                      "__cuda_array_interface__ or __dlpack__ (PyTorch, CuPy, ...)"
                      % (what, type(obj).__name__))
    # DLPack's stream argument: 1 = the legacy default stream (vyre's 0).
    s = 1 if not stream else int(stream)
    try:
        capsule = obj.__dlpack__(stream=s)
    except TypeError:
        capsule = obj.__dlpack__()
    if not _capsule_valid(capsule, b"dltensor"):
        raise invalid("%s's __dlpack__ gave no 'dltensor' capsule (a used or versioned one). "
                      "Fix: pass a fresh tensor, or one with __cuda_array_interface__" % what)
    mt = C.cast(_capsule_get(capsule, b"dltensor"), C.POINTER(DLManagedTensor))
    _capsule_set_name(capsule, _USED)  # ours now: we call its deleter
    arr = DeviceArray(obj, 0, 0, None, dev[1], False, "dlpack")
    arr._managed = mt
    t = mt.contents.dl_tensor
    if t.dtype.lanes != 1 or t.dtype.bits % 8:
        arr.release()
        raise invalid("%s has a vector or sub-byte dtype. Fix: pass a plain numeric tensor" % what)
    size = t.dtype.bits // 8
    shape = [t.shape[i] for i in range(t.ndim)]
    strides = [t.strides[i] * size for i in range(t.ndim)] if t.strides else None
    if not _contiguous(shape, strides, size):
        arr.release()
        raise invalid(_fix_contiguous(what))
    count = 1
    for n in shape:
        count *= n
    code = _DL_CODES.get(t.dtype.code, "?")
    names = {("float", 4): "f32", ("float", 2): "f16", ("bfloat", 2): "bf16", ("uint", 4): "u32",
             ("int", 4): "i32", ("uint", 8): "u64", ("int", 8): "i64", ("uint", 2): "u16",
             ("int", 2): "i16", ("uint", 1): "u8", ("int", 1): "i8", ("bool", 1): "bool8"}
    arr.ptr = (t.data or 0) + t.byte_offset
    arr.nbytes = count * size
    arr.type = names.get((code, size), "%s%d" % (code, t.dtype.bits))
    arr.cai_stream = None
    return arr


def check_type(arr, binfo, what):
    """Refuse a device array whose element type is not the buffer's."""
    want = binfo.type
    ok = arr.type == want or (want == "bf16" and arr.type in ("u16", "i16", "bf16")) or \
        (want == "bool" and arr.type in ("u32", "i32"))
    if not ok:
        raise invalid("%s holds %s elements, the program's buffer '%s' is %s. Fix: pass a tensor "
                      "of the buffer's type (NumPy dtype %s), e.g. t.to(torch.%s) or "
                      "a.astype(cupy.%s)" % (what, arr.type, binfo.name, want,
                                             NUMPY_DTYPE.get(want, "?"),
                                             _TORCH.get(want, "?"), NUMPY_DTYPE.get(want, "?")))


_TORCH = {"f32": "float32", "f16": "float16", "bf16": "bfloat16", "u8": "uint8", "i8": "int8",
          "i16": "int16", "i32": "int32", "i64": "int64", "u16": "uint16", "u32": "uint32",
          "u64": "uint64", "bool": "int32"}
