"""interop.py -- device arrays (PyTorch, CuPy, any __cuda_array_interface__ or DLPack producer) seen as raw device memory, zero copy; CPU DLPack producers as host memory."""

import re

from . import _ints
from .errors import invalid
from .program import NUMPY_DTYPE

# DLPack (dlpack.h) lives in dlpack.py; its names stay reachable here.
from .dlpack import (KDL_CPU, KDL_CUDA, KDL_CUDA_HOST, KDL_CUDA_MANAGED, DLDataType,  # noqa: F401
                     DLDevice, DLManagedTensor, DLManagedTensorVersioned, DLPackVersion, DLTensor)
from . import dlpack

# typestr kind + bytes -> the vyre storage type it matches (for checks).
_TYPESTR = {("f", 4): "f32", ("f", 2): "f16", ("u", 4): "u32", ("i", 4): "i32", ("u", 8): "u64",
            ("i", 8): "i64", ("u", 2): "u16", ("i", 2): "i16", ("u", 1): "u8", ("i", 1): "i8",
            ("b", 1): "bool8", ("f", 8): "f64"}


# The most dimensions an array may have (NumPy's NPY_MAXDIMS).
_MAX_DIMS = 64


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
        self._taken = None  # a dlpack.Taken: the producer's tensor until release()

    def release(self):
        t, self._taken = self._taken, None
        if t is not None:
            t.release()

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
        ptr, readonly, shape, kind, size = read_cai(cai, what)
        device = None
        if _module(src) == "torch":
            device = src.device.index
        elif _module(src) == "cupy":
            device = src.device.id
        count = 1
        for n in shape:
            count *= n
        nbytes = _ints.u64(count * size, "%s's byte size" % what,
                           fix="pass an array of fewer than 2**64 bytes")
        if ptr == 0 and nbytes:
            raise _cai_fail(what, "data", cai.get("data"), "a non-empty array has a device "
                            "address other than 0")
        arr = DeviceArray(src, ptr, nbytes, _TYPESTR.get((kind, size), cai["typestr"]),
                          device, readonly, "cuda_array_interface")
        arr.cai_stream = cai.get("stream")
        return arr
    dev = _dlpack_device(obj)
    if dev is None or dev[0] not in (KDL_CUDA, KDL_CUDA_MANAGED):
        raise invalid("%s (%s) is not device memory vyre can import. Fix: pass a CUDA tensor with "
                      "__cuda_array_interface__ or __dlpack__ (PyTorch, CuPy, ...)"
                      % (what, type(obj).__name__))
    # DLPack's stream argument: 1 = the legacy default stream (vyre's 0).
    s = 1 if not stream else int(stream)
    return from_dlpack(obj, what, s, dev)


def _cai_fail(what, field, value, fix):
    return invalid("%s's __cuda_array_interface__ has %s %r. Fix: %s (the interface's "
                   "version 3: numba.readthedocs.io, 'CUDA Array Interface')"
                   % (what, field, value, fix))


def read_cai(cai, what):
    """(address, read-only, shape, kind letter, item size) of a
    __cuda_array_interface__ dict, every field checked: data (address,
    read-only flag), shape (ints >= 0), typestr ("<f4": byte order, kind,
    item size), strides (None or ints, one per dimension, describing C
    order), mask (None), stream (None or an address).  InvalidArgument
    names the first field that is not what the interface says."""
    try:
        cai = dict(cai)
    except Exception as exc:
        raise invalid("%s's __cuda_array_interface__ cannot be read (%s). Fix: pass an object whose "
                      "interface is a plain dict" % (what, exc))
    version = cai.get("version", 0)
    if _ints.is_bool(version) or not isinstance(version, int) or version < 0:
        raise _cai_fail(what, "version", version, "version is an int (3 today)")
    data = cai.get("data")
    if data is None:
        data = (0, False)
    if not isinstance(data, (tuple, list)) or len(data) != 2:
        raise _cai_fail(what, "data", data, "data is (address as an int, read-only as a bool)")
    ptr = _ints.checked(data[0], "ptr", "%s's device address" % what,
                        fix="the interface's data[0] is the array's device address")
    if not _ints.is_bool(data[1]) and not (type(data[1]) is int and data[1] in (0, 1)):
        raise _cai_fail(what, "data[1]", data[1], "data[1] is the read-only flag, a bool")
    shape = cai.get("shape", ())
    if not isinstance(shape, (tuple, list)) or len(shape) > _MAX_DIMS:
        raise _cai_fail(what, "shape", shape, "shape is a tuple of at most %d ints" % _MAX_DIMS)
    shape = tuple(_ints.checked(n, "u64", "%s's shape[%d]" % (what, i),
                                fix="each dimension is a count from 0") for i, n in enumerate(shape))
    typestr = cai.get("typestr", "|u1")
    if not isinstance(typestr, str) or not re.match(r"[<>|=][biufcmMOSUV][0-9]{1,2}\Z", typestr) \
            or not 0 < int(typestr[2:]) <= 64:
        raise _cai_fail(what, "typestr", typestr, "typestr is byte order, kind and item size "
                        "in bytes (1 to 64), e.g. '<f4' for float32")
    kind, size = typestr[1], int(typestr[2:])
    if typestr[0] == ">" and size > 1:
        raise invalid("%s is big-endian (%s). Fix: pass a little-endian array" % (what, typestr))
    strides = cai.get("strides")
    if strides is not None:
        if not isinstance(strides, (tuple, list)) or len(strides) != len(shape):
            raise _cai_fail(what, "strides", strides, "strides is None (C order) or one byte "
                            "stride per dimension (%d)" % len(shape))
        strides = tuple(_ints.checked(x, "i64", "%s's strides[%d]" % (what, i),
                                      fix="each stride is a byte count")
                        for i, x in enumerate(strides))
    if not _contiguous(shape, strides, size):
        raise invalid(_fix_contiguous(what))
    if cai.get("mask") is not None:
        raise invalid("%s is a masked array. Fix: pass its data" % what)
    s = cai.get("stream")
    if s is not None:
        _ints.checked(s, "ptr", "%s's stream" % what,
                      fix="the interface's stream is None or a CUstream address")
    return ptr, bool(data[1]), shape, kind, size


def cai_stream(obj):
    """The stream entry of obj's __cuda_array_interface__ (checked as an
    address), or None when it has none."""
    cai, _ = _cai(obj)
    if cai is None or cai.get("stream") is None:
        return None
    return _ints.checked(cai["stream"], "ptr", "the __cuda_array_interface__ stream",
                         fix="the interface's stream is None or a CUstream address")


def from_dlpack(obj, what, stream, dev):
    """A DeviceArray over the tensor obj.__dlpack__ gives (versioned capsule
    first, dlpack.call_dlpack); stream: the DLPack stream argument (None for
    a CPU tensor); dev: obj's __dlpack_device__ pair.  The tensor is given
    back by release() (or collection)."""
    taken = dlpack.take(dlpack.call_dlpack(obj, stream), what)
    arr = DeviceArray(obj, 0, 0, None, dev[1] if dev[0] != KDL_CPU else None, taken.readonly,
                      "dlpack")
    arr._taken = taken
    try:
        arr.ptr, arr.nbytes, arr.type = dlpack.layout(taken.tensor, what, _fix_contiguous(what),
                                                      dev)
    except Exception:
        arr.release()
        raise
    arr.cai_stream = None
    return arr


def cpu_dlpack(obj):
    """True for a DLPack producer whose tensor is in host memory (kDLCPU):
    what host buffers also take (a NumPy array and a buffer are read
    directly)."""
    dev = _dlpack_device(obj)
    return dev is not None and dev[0] == KDL_CPU


def host_array(obj, what):
    """A CPU DLPack producer's tensor as a DeviceArray over host memory
    (device None); release() gives it back."""
    return from_dlpack(obj, what, None, (KDL_CPU, 0))


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
