"""interop.py -- device arrays (PyTorch, CuPy, any __cuda_array_interface__ or DLPack producer) seen as raw device memory, zero copy; CPU DLPack producers as host memory."""

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
    return from_dlpack(obj, what, s, dev)


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
        arr.ptr, arr.nbytes, arr.type = dlpack.layout(taken.tensor, what, _fix_contiguous(what))
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
