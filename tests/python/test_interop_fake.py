"""test_interop_fake.py -- the device-array path without a GPU: the CUDA backend on the fake libcuda (tests/runtime/fakecuda), "device tensors" with __cuda_array_interface__ or DLPack over fake device memory, imported zero copy and run on the caller's stream.

The fake's device memory is host memory and its launches only record
their arguments; a launch hook plays the saxpy kernel with NumPy on the
pointers the kernel received, so the results prove that the kernel got
the caller's memory itself.  python.test runs this module in a process
of its own with VYRE_CUDA_DRIVER naming the fake (the CUDA backend reads
it once per process).
"""
import ctypes as C
import os
import unittest

import numpy as np

import vyre
from vyre import dlpack, interop
from test_dlpack import consume
from vyretest import example

FAKE = os.environ.get("VYRE_CUDA_DRIVER", "")
N = 1000
# Two fake devices (read when the fake first runs): UUIDs tell them apart.
os.environ["FAKECUDA_DEVICES"] = "2"


class Launch(C.Structure):  # fakecuda_launch (tests/runtime/fakecuda/fakecuda.h)
    _fields_ = [("kernel", C.c_char * 64), ("grid", C.c_uint * 3), ("block", C.c_uint * 3),
                ("shared_bytes", C.c_uint), ("cooperative", C.c_int), ("from_graph", C.c_int),
                ("stream", C.c_void_p), ("nparams", C.c_uint),
                ("params", C.c_ulonglong * 72), ("counts_bytes", C.c_uint),
                ("counts", C.c_uint32 * 128)]


class Op(C.Structure):  # fakecuda_op
    _fields_ = [("call", C.c_char * 48), ("stream", C.c_void_p), ("event", C.c_void_p),
                ("dst", C.c_ulonglong), ("words", C.c_ulonglong), ("unit", C.c_uint),
                ("value", C.c_uint), ("from_graph", C.c_int)]


HOOK = C.CFUNCTYPE(None, C.POINTER(Launch), C.c_void_p)


class FakeTensor(object):
    """A device array over fake device memory, with __cuda_array_interface__."""

    def __init__(self, ptr, n, typestr="<f4", strides=None, stream=None):
        self.ptr, self.n = ptr, n
        self.__cuda_array_interface__ = {"data": (ptr, False), "shape": (n,), "typestr": typestr,
                                         "strides": strides, "version": 3}
        if stream is not None:
            self.__cuda_array_interface__["stream"] = stream

    def host(self):
        """The memory as a NumPy array (fake device memory is host memory)."""
        return np.ctypeslib.as_array(C.cast(self.ptr, C.POINTER(C.c_float)), (self.n,))


class DLPackTensor(object):
    """A CUDA DLPack producer (only __dlpack__) over fake device memory."""

    def __init__(self, ptr, n):
        self.ptr, self.n, self.deleted, self.streams = ptr, n, 0, []
        self._keep = []

    def __dlpack_device__(self):
        return (interop.KDL_CUDA, 0)

    def __dlpack__(self, stream=None):
        self.streams.append(stream)
        shape = (C.c_int64 * 1)(self.n)
        mt = interop.DLManagedTensor()
        mt.dl_tensor.data = self.ptr
        mt.dl_tensor.device = interop.DLDevice(interop.KDL_CUDA, 0)
        mt.dl_tensor.ndim = 1
        mt.dl_tensor.dtype = interop.DLDataType(2, 32, 1)  # float32
        mt.dl_tensor.shape = shape
        mt.dl_tensor.strides = None

        def deleter(p):
            self.deleted += 1
        cb = interop.DLManagedTensor._fields_[2][1](deleter)
        mt.deleter = cb
        self._keep += [shape, mt, cb]
        new = C.pythonapi.PyCapsule_New
        new.restype = C.py_object
        new.argtypes = [C.c_void_p, C.c_char_p, C.c_void_p]
        return new(C.addressof(mt), b"dltensor", None)


class VersionedTensor(object):
    """A CUDA DLPack 1.x producer over fake device memory: answers
    max_version=(1, 0) with a "dltensor_versioned" capsule (read-only when
    asked), and refuses a call without it as a 1.x-only producer may."""

    def __init__(self, ptr, n, readonly=False):
        self.ptr, self.n, self.readonly, self.deleted, self.asked = ptr, n, readonly, 0, []
        self._keep = []

    def __dlpack_device__(self):
        return (interop.KDL_CUDA, 0)

    def __dlpack__(self, *, stream=None, max_version=None, dl_device=None, copy=None):
        self.asked.append((stream, max_version))
        if max_version is None:
            raise BufferError("this producer exports DLPack 1.x only")
        shape = (C.c_int64 * 1)(self.n)
        mt = interop.DLManagedTensorVersioned()
        mt.version = interop.DLPackVersion(1, 0)
        mt.flags = dlpack.FLAG_READ_ONLY if self.readonly else 0
        t = mt.dl_tensor
        t.data, t.device, t.ndim = self.ptr, interop.DLDevice(interop.KDL_CUDA, 0), 1
        t.dtype, t.shape, t.strides = interop.DLDataType(2, 32, 1), shape, None

        def deleter(p):
            self.deleted += 1
        cb = interop.DLManagedTensorVersioned._fields_[2][1](deleter)
        mt.deleter = cb
        self._keep += [shape, mt, cb]
        new = C.pythonapi["PyCapsule_New"]
        new.restype, new.argtypes = C.py_object, [C.c_void_p, C.c_char_p, C.c_void_p]
        return new(C.addressof(mt), b"dltensor_versioned", None)


@unittest.skipUnless(FAKE and os.path.exists(FAKE), "the fake libcuda is not built (no CUDA "
                     "headers) or VYRE_CUDA_DRIVER does not name it")
class FakeInterop(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        fk = cls.fk = C.CDLL(FAKE)
        ctx = C.c_void_p()
        assert fk.cuInit(0) == 0
        assert fk.cuDevicePrimaryCtxRetain(C.byref(ctx), 0) == 0
        cls.ctx = ctx
        cls.be = vyre.open("cuda")
        cls.saxpy = example("saxpy")
        cls.played = []

        def play(launch, user):
            # saxpy's kernel: b0 = a, b1 = x, b2 = y; counts[3] = y's length.
            l_ = launch.contents
            a = C.cast(C.c_void_p(l_.params[0]), C.POINTER(C.c_float))[0]
            n = l_.counts[3]
            x = np.ctypeslib.as_array(C.cast(C.c_void_p(l_.params[1]), C.POINTER(C.c_float)), (n,))
            y = np.ctypeslib.as_array(C.cast(C.c_void_p(l_.params[2]), C.POINTER(C.c_float)), (n,))
            y[:] = np.float32(a) * x + y
            cls.played.append((l_.params[0], l_.params[1], l_.params[2], l_.stream))
        cls.hook = HOOK(play)
        fk.fakecuda_set_hook(cls.hook, None)
        # A call with device arrays and no stream named orders itself on the
        # legacy default stream: events there are no misuse (launches and
        # copies still would be).
        fk.fakecuda_allow_legacy_stream(1)

    def tearDown(self):
        last = C.create_string_buffer(512)
        n = self.fk.fakecuda_violations(last, C.c_size_t(512))
        self.assertEqual(n, 0, "the fake saw a misuse of the driver API: %s" % last.value.decode())

    @classmethod
    def tearDownClass(cls):
        cls.fk.fakecuda_set_hook(None, None)
        cls.be.close()

    def mem(self, n, fill=None):
        p = C.c_uint64()
        popped = C.c_void_p()
        self.assertEqual(self.fk.cuCtxPushCurrent_v2(self.ctx), 0)
        self.assertEqual(self.fk.cuMemAlloc_v2(C.byref(p), C.c_size_t(n * 4)), 0)
        self.fk.cuCtxPopCurrent_v2(C.byref(popped))
        t = FakeTensor(p.value, n)
        if fill is not None:
            t.host()[:] = fill
        return t

    def stream(self):
        s = C.c_void_p()
        popped = C.c_void_p()
        self.fk.cuCtxPushCurrent_v2(self.ctx)
        self.assertEqual(self.fk.cuStreamCreate(C.byref(s), 1), 0)  # CU_STREAM_NON_BLOCKING
        self.fk.cuCtxPopCurrent_v2(C.byref(popped))
        return s.value

    def ops_on(self, stream, since):
        out = []
        for i in range(since, self.fk.fakecuda_op_count()):
            op = Op()
            self.fk.fakecuda_op_get(C.c_ulong(i), C.byref(op))
            if op.stream == stream:
                out.append(op.call.decode())
        return out

    def test_zero_copy_on_the_callers_stream(self):
        a = self.mem(1, 2.5)
        x = self.mem(N, np.arange(N))
        y = self.mem(N, 1.0)
        s = self.stream()
        self.played.clear()
        ops0 = self.fk.fakecuda_op_count()
        t = self.be.dispatch_resident(self.saxpy, a, x, y, stream=s, timing=True)
        self.assertIsInstance(t, vyre.Timing)
        self.assertEqual(len(self.played), 1, "one launch")
        self.assertEqual(self.played[0][:3], (a.ptr, x.ptr, y.ptr),
                         "the kernel got the caller's pointers themselves")
        np.testing.assert_array_equal(y.host(), 2.5 * np.arange(N, dtype=np.float32) + 1)
        on = self.ops_on(s, ops0)
        self.assertTrue(on, "the call ordered itself on the caller's stream %#x" % s)
        # The imports were only for the call.
        self.assertEqual(self.be.metrics().get("resident.imported_buffers", 0), 0)

    def test_stream_from_the_interface(self):
        s = self.stream()
        a, x = self.mem(1, 1.0), self.mem(N, 1.0)
        y = self.mem(N, 0.0)
        y.__cuda_array_interface__["stream"] = s
        a.__cuda_array_interface__["stream"] = s
        ops0 = self.fk.fakecuda_op_count()
        self.be.dispatch_resident(self.saxpy, a, x, y)
        self.assertTrue(self.ops_on(s, ops0), "the array's CAI stream orders the call")
        np.testing.assert_array_equal(y.host(), np.ones(N, np.float32))

    def test_default_stream_is_the_legacy_one(self):
        a, x, y = self.mem(1, 1.0), self.mem(N, 1.0), self.mem(N, 0.0)
        self.played.clear()
        ops0 = self.fk.fakecuda_op_count()
        self.be.dispatch_resident(self.saxpy, a, x, y)
        self.assertNotEqual(self.played[0][3], None, "vyre launches on its own stream")
        self.assertTrue(self.ops_on(None, ops0), "ordered after the legacy default stream")
        np.testing.assert_array_equal(y.host(), np.ones(N, np.float32))

    def test_import_device_and_resident_pointer(self):
        y = self.mem(N, 3.0)
        with self.be.import_device(y) as r:
            self.assertTrue(r.imported)
            self.assertEqual(r.device_ptr, y.ptr)
            self.assertEqual(r.size, N * 4)
            self.assertEqual(r.dtype, "float32")
            np.testing.assert_array_equal(r.download()[:4], [3, 3, 3, 3])
            r.upload(np.float32([7]), offset=4)
            self.assertEqual(float(y.host()[1]), 7.0, "an upload lands in the caller's memory")
            a, x = self.be.upload(np.float32([2])), self.be.upload(np.ones(N, np.float32))
            self.be.dispatch_resident(self.saxpy, a, x, r)
            self.assertEqual(float(y.host()[1]), 9.0, "2 * 1 + 7, in the caller's memory")
        self.assertEqual(r.handle, 0)
        self.assertEqual(float(y.host()[0]), 5.0, "the memory stays the caller's after free")
        with self.be.alloc(64) as own:
            self.assertNotEqual(own.device_ptr, 0)

    def test_dlpack(self):
        a, x = self.mem(1, 2.0), self.mem(N, np.arange(N))
        yt = self.mem(N, 1.0)
        y = DLPackTensor(yt.ptr, N)
        s = self.stream()
        self.played.clear()
        self.be.dispatch_resident(self.saxpy, a, x, y, stream=s)
        self.assertEqual(self.played[0][2], yt.ptr)
        np.testing.assert_array_equal(yt.host(), 2 * np.arange(N, dtype=np.float32) + 1)
        self.assertEqual(y.streams, [s], "the producer is told the consumer's stream")
        self.assertEqual(y.deleted, 1, "the DLPack tensor was given back once")

    def test_dlpack_versioned_import(self):
        a, x = self.mem(1, 2.0), self.mem(N, np.arange(N))
        yt = self.mem(N, 1.0)
        y = VersionedTensor(yt.ptr, N)
        s = self.stream()
        self.played.clear()
        self.be.dispatch_resident(self.saxpy, a, x, y, stream=s)
        self.assertEqual(self.played[0][2], yt.ptr, "zero copy through the versioned capsule")
        np.testing.assert_array_equal(yt.host(), 2 * np.arange(N, dtype=np.float32) + 1)
        self.assertEqual(y.asked, [(s, (1, 0))], "asked once, for DLPack 1.0, on the call's stream")
        self.assertEqual(y.deleted, 1, "given back once")
        # Read-only: refused where the program writes, taken where it reads.
        ro = VersionedTensor(yt.ptr, N, readonly=True)
        with self.assertRaises(vyre.InvalidArgument) as cm:
            self.be.dispatch_resident(self.saxpy, a, x, ro)
        self.assertIn("read-only", cm.exception.message)
        self.assertEqual(ro.deleted, 1)
        self.be.dispatch_resident(self.saxpy, a, VersionedTensor(x.ptr, N, readonly=True), yt)
        with self.be.import_device(VersionedTensor(x.ptr, N, readonly=True)) as r:
            self.assertTrue(r.readonly)
            with self.assertRaises(vyre.InvalidArgument):
                r.upload(np.float32([1]))
            with self.assertRaises(vyre.InvalidArgument):
                self.be.dispatch_resident(self.saxpy, a, x, r)
            self.be.dispatch_resident(self.saxpy, a, r, yt)
            self.assertEqual(consume(r, max_version=(1, 0))["flags"], dlpack.FLAG_READ_ONLY,
                             "its export says read-only")

    def test_dlpack_export(self):
        with self.be.upload(np.arange(8, dtype=np.float32)) as r:
            self.assertEqual(r.__dlpack_device__(), (interop.KDL_CUDA, 0))
            for kw, kind in (({"max_version": (1, 0)}, "versioned"), ({}, "legacy")):
                v = consume(r, stream=1, **kw)
                self.assertEqual(v["kind"], kind)
                self.assertEqual(v["device"], (interop.KDL_CUDA, 0))
                self.assertEqual(v["flags"], 0, "the buffer itself, writable, no copy")
                self.assertEqual(v["raw"], np.arange(8, dtype=np.float32).tobytes(),
                                 "the buffer's memory (the fake's device memory is host memory)")
            cap = r.__dlpack__(max_version=(1, 0))
            mt = C.cast(dlpack._get(cap, b"dltensor_versioned"),
                        C.POINTER(interop.DLManagedTensorVersioned))
            self.assertEqual(mt.contents.dl_tensor.data, r.device_ptr, "zero copy")
            del mt, cap
            host = consume(r, max_version=(1, 0), dl_device=(1, 0))
            self.assertEqual((host["device"], host["flags"]), ((1, 0), dlpack.FLAG_IS_COPIED))
            with self.assertRaises(BufferError):
                r.__dlpack__(copy=True)
            with self.assertRaises(BufferError):
                r.__dlpack__(dl_device=(interop.KDL_CUDA, 1))
            with self.assertRaises(BufferError):
                r.__dlpack__(dl_device=(1, 0), copy=False)
        self.assertEqual(dlpack.live_exports(), 0)

    def test_device_by_uuid(self):
        self.assertEqual(self.be.profile().uuid, "GPU-fa4ec0da-0000-4000-8000-000000000000")
        with vyre.open("cuda", device="GPU-fa4ec0da-0001-4000-8000-000000000001") as b:
            self.assertEqual(b.device, 1)
            self.assertEqual(b.profile().ordinal, 1)
        with vyre.open("cuda", device="FA4EC0DA-0001") as b:
            self.assertEqual(b.device, 1, "a unique prefix, without GPU-, any case")
        with self.assertRaises(vyre.NoDevice) as cm:
            vyre.open("cuda", device="GPU-fa4ec0da")
        self.assertIn("2 devices of backend cuda match", cm.exception.message)
        self.assertIn("device 1 GPU-fa4ec0da-0001-4000-8000-000000000001", cm.exception.message)
        with self.assertRaises(vyre.NoDevice) as cm:
            vyre.open("cuda", device="GPU-0")
        self.assertIn("no device of backend cuda has UUID GPU-0", cm.exception.message)

    def test_refusals(self):
        a, x, y = self.mem(1, 1.0), self.mem(N, 1.0), self.mem(N, 1.0)
        cases = [
            (FakeTensor(y.ptr, N // 2, strides=(8,)), "contiguous", ".contiguous()"),
            (FakeTensor(y.ptr, N, typestr="<i4"), "i32", "float32"),
            (FakeTensor(y.ptr, N, typestr="<f8"), "f8", "float32"),
            (FakeTensor(y.ptr + 4, N - 1), "align", "Fix:"),
            (FakeTensor(y.ptr, 0), "empty", "Fix:"),
        ]
        for t, _, fix in cases:
            with self.assertRaises(vyre.InvalidArgument) as cm:
                self.be.dispatch_resident(self.saxpy, a, x, t)
            self.assertIn(fix, cm.exception.message)
        with self.assertRaises(vyre.InvalidArgument) as cm:
            self.be.dispatch(self.saxpy, a, x, y)
        self.assertIn("dispatch_resident", cm.exception.fix)
        ro = FakeTensor(y.ptr, N)
        ro.__cuda_array_interface__["data"] = (y.ptr, True)
        with self.assertRaises(vyre.InvalidArgument):
            self.be.dispatch_resident(self.saxpy, a, x, ro)
        self.assertEqual(self.be.metrics().get("resident.imported_buffers", 0), 0,
                         "a refused call leaves no import behind")
        with vyre.open("reference") as ref:
            with self.assertRaises(vyre.Unsupported) as cm:
                ref.dispatch_resident(self.saxpy, a, x, y)
            self.assertIn("cuda", cm.exception.fix)

    def test_hostile_interfaces(self):
        # Every field of the interface is checked: a hostile one raises
        # InvalidArgument (a VyreError with a Fix), not ValueError from int().
        a, x, y = self.mem(1, 1.0), self.mem(N, 1.0), self.mem(N, 1.0)
        cases = [({"typestr": "<u"}, "typestr"), ({"typestr": "<f4junk"}, "typestr"),
                 ({"shape": (-N,)}, "shape[0]"), ({"data": (-1, False)}, "device address"),
                 ({"data": (y.ptr, "yes")}, "read-only flag"), ({"stream": 2**64}, "stream"),
                 ({"strides": (4, 4)}, "strides")]
        for fields, text in cases:
            t = FakeTensor(y.ptr, N)
            t.__cuda_array_interface__.update(fields)
            for call in (lambda: self.be.import_device(t),
                         lambda: self.be.dispatch_resident(self.saxpy, a, x, t)):
                with self.assertRaises(vyre.InvalidArgument) as cm:
                    call()
                self.assertIn(text, cm.exception.message)
                self.assertTrue(cm.exception.fix)
        # A DLPack producer whose capsule names another device than it says.
        liar = DLPackTensor(y.ptr, N)
        liar.__dlpack_device__ = lambda: (interop.KDL_CUDA, 1)
        with self.assertRaises(vyre.InvalidArgument) as cm:
            self.be.dispatch_resident(self.saxpy, a, x, liar)
        self.assertEqual(liar.deleted, 1, "the refused tensor was given back")
        self.assertEqual(self.be.metrics().get("resident.imported_buffers", 0), 0)

    def test_close_from_a_producer(self):
        # A producer that closes the backend while the call that asked it is
        # in flight: that call completes on the live instance, which is
        # destroyed as the call leaves; later calls raise InvalidHandle.
        be = vyre.open("cuda")
        a, x, y = self.mem(1, 2.0), self.mem(N, np.arange(N)), self.mem(N, 1.0)

        class Closing(object):
            def __init__(self, cai):
                self._cai = cai

            @property
            def __cuda_array_interface__(self):
                be.close()
                return self._cai
        c = Closing(dict(y.__cuda_array_interface__))
        be.dispatch_resident(self.saxpy, a, x, c)
        np.testing.assert_array_equal(y.host(), 2 * np.arange(N, dtype=np.float32) + 1)
        self.assertIn("closed", repr(be))
        with self.assertRaises(vyre.InvalidHandle):
            be.metrics()


if __name__ == "__main__":
    unittest.main()
