"""test_dlpack.py -- DLPack 1.x and 0.x on the reference backend: a ctypes producer of both capsule kinds read as host buffers (read-only refused where vyre writes), Resident.__dlpack__ read by a ctypes consumer of both kinds, a NumPy round trip; device UUIDs (Profile.uuid, the text helpers, choosing a device by UUID)."""
import ctypes as C
import gc
import struct
import unittest

import vyre
from vyre import dlpack
from vyre.host import uuid_prefix, uuid_text
from vyretest import RefCase, example

try:
    import numpy as np
except ImportError:  # pragma: no cover - python.test needs NumPy anyway
    np = None

_new = C.pythonapi["PyCapsule_New"]
_new.restype, _new.argtypes = C.py_object, [C.c_void_p, C.c_char_p, C.c_void_p]
_valid = C.pythonapi["PyCapsule_IsValid"]
_valid.restype, _valid.argtypes = C.c_int, [C.py_object, C.c_char_p]
_get = C.pythonapi["PyCapsule_GetPointer"]
_get.restype, _get.argtypes = C.c_void_p, [C.py_object, C.c_char_p]
_rename = C.pythonapi["PyCapsule_SetName"]
_rename.restype, _rename.argtypes = C.c_int, [C.py_object, C.c_char_p]
_USED_V, _USED = b"used_dltensor_versioned", b"used_dltensor"


class Producer(object):
    """A CPU DLPack producer of f32 values over ctypes memory: versioned
    capsules when asked with max_version >= (1, 0) (flags: read-only), or
    only the 0.x protocol (legacy=True: __dlpack__ takes no max_version).
    Counts deleter calls and records how it was asked."""

    def __init__(self, values, readonly=False, legacy=False, major=1):
        self.mem = (C.c_float * len(values))(*values)
        self.n, self.readonly, self.legacy, self.major = len(values), readonly, legacy, major
        self.asked, self.deleted, self._keep = [], 0, []
        if legacy:
            self.__dlpack__ = self._legacy

    def __dlpack_device__(self):
        return (dlpack.KDL_CPU, 0)

    def _fill(self, t):
        shape = (C.c_int64 * 1)(self.n)
        t.data, t.device, t.ndim = C.addressof(self.mem), dlpack.DLDevice(dlpack.KDL_CPU, 0), 1
        t.dtype, t.shape, t.strides = dlpack.DLDataType(2, 32, 1), shape, None
        return shape

    def _legacy(self, stream=None):
        self.asked.append(("legacy", stream))
        mt = dlpack.DLManagedTensor()
        shape = self._fill(mt.dl_tensor)

        def deleter(p):
            self.deleted += 1
        cb = dlpack.DLManagedTensor._fields_[2][1](deleter)
        mt.deleter = cb
        self._keep += [mt, shape, cb]
        return _new(C.addressof(mt), b"dltensor", None)

    def __dlpack__(self, stream=None, max_version=None, dl_device=None, copy=None):
        self.asked.append(("versioned", stream, max_version))
        if max_version is None or max_version[0] < 1:
            return self._legacy(stream)
        mt = dlpack.DLManagedTensorVersioned()
        mt.version = dlpack.DLPackVersion(self.major, 0)
        mt.flags = dlpack.FLAG_READ_ONLY if self.readonly else 0
        shape = self._fill(mt.dl_tensor)

        def deleter(p):
            self.deleted += 1
        cb = dlpack.DLManagedTensorVersioned._fields_[2][1](deleter)
        mt.deleter = cb
        self._keep += [mt, shape, cb]
        return _new(C.addressof(mt), b"dltensor_versioned", None)

    def values(self):
        return list(self.mem)


def consume(obj, **kw):
    """What a C consumer does with obj.__dlpack__(**kw): (capsule kind,
    version, flags, device, dtype code/bits, the f32/bytes read, shape);
    the capsule is renamed "used_..." and the deleter called."""
    cap = obj.__dlpack__(**kw)
    if _valid(cap, b"dltensor_versioned"):
        mt = C.cast(_get(cap, b"dltensor_versioned"), C.POINTER(dlpack.DLManagedTensorVersioned))
        _rename(cap, _USED_V)
        kind, ver, flags = "versioned", (mt.contents.version.major, mt.contents.version.minor), \
            int(mt.contents.flags)
    else:
        assert _valid(cap, b"dltensor"), "a capsule of either name"
        mt = C.cast(_get(cap, b"dltensor"), C.POINTER(dlpack.DLManagedTensor))
        _rename(cap, _USED)
        kind, ver, flags = "legacy", None, 0
    t = mt.contents.dl_tensor
    n = t.shape[0]
    raw = C.string_at(t.data, n * t.dtype.bits // 8) if n else b""
    out = dict(kind=kind, version=ver, flags=flags, ndim=t.ndim,
               device=(t.device.device_type, t.device.device_id),
               dtype=(t.dtype.code, t.dtype.bits, t.dtype.lanes), n=n, raw=raw,
               strides=t.strides[0] if t.strides else None)
    mt.contents.deleter(mt)
    return out


class DLPackImport(RefCase):
    def test_versioned_and_legacy_inputs(self):
        saxpy = example("saxpy")
        for legacy in (False, True):
            x, y = Producer([0, 1, 2, 3], legacy=legacy), Producer([1, 1, 1, 1], legacy=legacy)
            (out,) = self.be.dispatch(saxpy, np.float32([2]), x, y)
            self.assertEqual(list(out), [1, 3, 5, 7])
            self.assertEqual((x.deleted, y.deleted), (1, 1), "each tensor given back once")
            first = x.asked[0]
            if legacy:
                self.assertEqual(first, ("legacy", None), "a 0.x producer is asked the 0.x way")
            else:
                self.assertEqual(first, ("versioned", None, (1, 0)),
                                 "asked for a versioned capsule first, with no stream (CPU)")

    def test_read_only_where_vyre_writes(self):
        ro = Producer([0, 0, 0, 0], readonly=True)
        with self.be.alloc(16, dtype="float32") as r:
            with self.assertRaises(vyre.InvalidArgument) as cm:
                r.download(out=ro)
            self.assertIn("read-only", cm.exception.message)
            self.assertIn("READ_ONLY", cm.exception.message)
            self.assertTrue(cm.exception.fix)
            self.assertEqual(ro.deleted, 1, "the refused tensor is given back")
            # Reading a read-only tensor is fine.
            src = Producer([5, 6, 7, 8], readonly=True)
            r.upload(src)
            self.assertEqual(list(r.download()), [5, 6, 7, 8])
            w = Producer([0, 0, 0, 0])
            r.download(out=w)
            self.assertEqual(w.values(), [5, 6, 7, 8], "a writable tensor receives the data")

    def test_other_major_refused(self):
        p = Producer([1, 2], major=2)
        with self.assertRaises(vyre.InvalidArgument) as cm:
            self.be.upload(p)
        self.assertIn("DLPack 2.0", cm.exception.message)
        self.assertEqual(p.deleted, 1, "given back although refused")

    def test_wrong_dtype(self):
        with self.assertRaises(vyre.InvalidArgument) as cm:
            self.be.dispatch(example("saxpy"), np.float32([2]), Producer([1]),
                             np.array([1], np.int32))
        self.assertIn("int32", cm.exception.message)


class DLPackExport(RefCase):
    def test_capsule_kinds(self):
        data = struct.pack("<4f", 1.5, -2, 3, 4)
        with self.be.upload(np.frombuffer(data, np.float32)) as r:
            self.assertEqual(r.__dlpack_device__(), (dlpack.KDL_CPU, 0))
            v = consume(r, max_version=(1, 0))
            self.assertEqual(v["kind"], "versioned")
            self.assertEqual(v["version"], (1, 0))
            self.assertEqual(v["flags"], dlpack.FLAG_IS_COPIED,
                             "the reference backend exports a host copy, and says so")
            self.assertEqual(v["device"], (dlpack.KDL_CPU, 0))
            self.assertEqual(v["dtype"], (2, 32, 1))
            self.assertEqual((v["ndim"], v["n"], v["strides"]), (1, 4, 1))
            self.assertEqual(v["raw"], data)
            self.assertEqual(consume(r, max_version=(1, 3))["kind"], "versioned")
            old = consume(r)
            self.assertEqual(old["kind"], "legacy", "no max_version: a 0.x consumer")
            self.assertEqual(old["raw"], data)
            self.assertEqual(consume(r, max_version=(0, 8))["kind"], "legacy")
            self.assertEqual(consume(r, dl_device=(1, 0), copy=True)["raw"], data)
        self.assertEqual(dlpack.live_exports(), 0, "every tensor handed out came back")

    def test_refusals(self):
        with self.be.upload(b"abcd") as r:
            v = consume(r, max_version=(1, 0))
            self.assertEqual((v["dtype"], v["n"]), ((1, 8, 1), 4), "no dtype: uint8 bytes")
            with self.assertRaises(BufferError) as cm:
                r.__dlpack__(copy=False)
            self.assertIn("Fix:", str(cm.exception))
            with self.assertRaises(BufferError):
                r.__dlpack__(dl_device=(dlpack.KDL_CUDA, 0))
            with self.assertRaises(BufferError):
                r.__dlpack__(stream="s")
        with self.assertRaises(vyre.InvalidHandle):
            r.__dlpack__()

    def test_unconsumed_capsule(self):
        with self.be.upload(b"abcdefgh") as r:
            cap = r.__dlpack__(max_version=(1, 0))
            self.assertEqual(dlpack.live_exports(), 1)
            del cap
            gc.collect()
            self.assertEqual(dlpack.live_exports(), 0, "a capsule dropped unused frees its tensor")

    @unittest.skipUnless(np is not None and hasattr(np, "from_dlpack"), "NumPy >= 1.22 needed")
    def test_numpy_round_trip(self):
        x = np.linspace(-3, 3, 50, dtype=np.float32)
        with self.be.upload(x) as r:
            a = np.from_dlpack(r)  # NumPy 1.x: "dltensor"; 2.1+: max_version=(1, 0)
            self.assertEqual(a.dtype, np.float32)
            self.assertEqual(a.tobytes(), x.tobytes())
            (y,) = self.be.dispatch(example("saxpy"), np.float32([1]), a, np.zeros(50, np.float32))
            self.assertEqual(y.tobytes(), x.tobytes())
            with self.be.upload(np.zeros(50, np.float32)) as r2:
                r2.upload(a)  # a NumPy array is a buffer: read directly
                self.assertEqual(r2.download().tobytes(), x.tobytes())
            del a
        gc.collect()
        self.assertEqual(dlpack.live_exports(), 0)


class Uuids(RefCase):
    def test_text(self):
        raw = bytes.fromhex("8932f937d72c4a3504112233445566ff")
        self.assertEqual(uuid_text(raw), "GPU-8932f937-d72c-4a35-0411-2233445566ff")
        self.assertIsNone(uuid_text(bytes(16)))
        self.assertEqual(uuid_prefix("GPU-8932F937-D7"), "8932f937d7")
        self.assertEqual(uuid_prefix("8932f937d72c"), "8932f937d72c")
        self.assertEqual(uuid_prefix(uuid_text(raw)), raw.hex())
        for bad in ("", "GPU-", "893-2", "8932f937--d7", "xyz", raw.hex() + "0", 5):
            self.assertIsNone(uuid_prefix(bad), bad)

    def test_reference_reports_none(self):
        p = self.be.profile()
        self.assertIsNone(p.uuid, "the reference backend reports no UUID")
        self.assertEqual(p.device_count, 1)
        with self.assertRaises(vyre.NoDevice) as cm:
            vyre.open("reference", device="GPU-1234")
        self.assertIn("device 0 (no UUID reported)", cm.exception.message)
        with self.assertRaises(vyre.InvalidArgument):
            vyre.open("reference", device="GPU-zz")


if __name__ == "__main__":
    unittest.main()
