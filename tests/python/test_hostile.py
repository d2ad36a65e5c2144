"""test_hostile.py -- hostile device-array descriptions: every field of a __cuda_array_interface__ dict and of a DLPack tensor is checked before it is used, and a bad one raises InvalidArgument (a VyreError, with a Fix), never a plain ValueError, a truncated number or a read of memory the tensor does not describe (issue 24, finding 17's Python part).  The DLPack cases run on the reference backend (CPU tensors are host buffers); the interface cases call interop.device_array, which needs no GPU (test_interop_fake passes one through the CUDA backend on the fake driver)."""
import ctypes as C
import unittest

import vyre
from vyre import dlpack, interop
from test_dlpack import Producer
from vyretest import RefCase

GOOD = {"data": (0x10000, False), "shape": (4,), "typestr": "<f4", "version": 3}


class Interface(object):
    def __init__(self, **fields):
        self.__cuda_array_interface__ = dict(GOOD, **fields)


class CudaArrayInterface(unittest.TestCase):
    def refused(self, obj, *texts):
        with self.assertRaises(vyre.InvalidArgument) as cm:
            interop.device_array(obj, "the array")
        e = cm.exception
        self.assertIsInstance(e, vyre.VyreError)
        self.assertTrue(e.fix, e.message)
        for t in texts:
            self.assertIn(t, e.message)

    def test_good(self):
        a = interop.device_array(Interface(), "the array")
        self.assertEqual((a.ptr, a.nbytes, a.type, a.readonly), (0x10000, 16, "f32", False))
        a = interop.device_array(Interface(shape=(2, 3), strides=(3, 1), typestr="|u1",
                                           data=(0x10000, True), stream=None), "the array")
        self.assertEqual((a.nbytes, a.type, a.readonly), (6, "u8", True))

    def test_typestr(self):
        for ts in ("<u", "<f", "", "f4", "<f4x", "<f0", "<f99", "<z4", "<\u00b2", "<f\u0664",
                   4, None, b"<f4"):
            self.refused(Interface(typestr=ts), "typestr")
        self.refused(Interface(typestr=">f4"), "big-endian")

    def test_data(self):
        for d in ("abc", (1,), (1, False, 0), 7):
            self.refused(Interface(data=d), "data")
        self.refused(Interface(data=(-1, False)), "device address -1 is below 0")
        self.refused(Interface(data=(2**64, False)), "device address")
        self.refused(Interface(data=(1.5, False)), "not an integer")
        self.refused(Interface(data=(True, False)), "bool")
        self.refused(Interface(data=(0x10000, "no")), "read-only flag")
        self.refused(Interface(data=(0, False)), "a non-empty array has a device address")
        self.refused(Interface(data=None), "a non-empty array has a device address")

    def test_shape_and_strides(self):
        self.refused(Interface(shape=4), "shape")
        self.refused(Interface(shape=(-1,)), "shape[0] -1 is below 0")
        self.refused(Interface(shape=(2**64,)), "shape[0]")
        self.refused(Interface(shape=(True,)), "bool")
        self.refused(Interface(shape=(1.5,)), "not an integer")
        self.refused(Interface(shape=(1,) * 65), "at most 64")
        self.refused(Interface(shape=(2**40, 2**40)), "byte size", "2**64")
        self.refused(Interface(strides="x"), "strides")
        self.refused(Interface(strides=(4, 4)), "one byte stride per dimension")
        self.refused(Interface(strides=(1.5,)), "not an integer")
        self.refused(Interface(strides=(-4,)), "not contiguous")
        self.refused(Interface(strides=(8,)), "not contiguous")

    def test_other_fields(self):
        self.refused(Interface(mask=object()), "masked")
        self.refused(Interface(version="3"), "version")
        self.refused(Interface(version=True), "version")
        for s in (-1, 2**64, "s", 1.0, True):
            self.refused(Interface(stream=s), "stream")

    def test_not_an_interface(self):
        class NotADict(object):
            __cuda_array_interface__ = [("typestr", "<f4")]
        self.assertFalse(vyre.is_device_array(NotADict()))
        self.refused(NotADict(), "is not device memory vyre can import")


class Hostile(Producer):
    """A CPU DLPack producer whose tensor `mutate` spoils after it is filled."""

    def __init__(self, mutate, n=4):
        Producer.__init__(self, [1.0] * n)
        self.mutate = mutate

    def _fill(self, t):
        shape = Producer._fill(self, t)
        self.mutate(t, self._keep)  # keep: what must live as long as the producer
        return shape


def _dims(t, keep, extents):
    arr = (C.c_int64 * len(extents))(*extents)
    t.ndim, t.shape = len(extents), arr
    keep.append(arr)


class DLPackFields(RefCase):
    def refused(self, mutate, *texts, legacy=False):
        p = Hostile(mutate)
        if legacy:
            p.__dlpack__ = p._legacy
        with self.assertRaises(vyre.InvalidArgument) as cm:
            self.be.upload(p)
        e = cm.exception
        self.assertTrue(e.fix, e.message)
        for t in texts:
            self.assertIn(t, e.message)
        self.assertEqual(p.deleted, 1, "the refused tensor is given back once")

    def test_fields(self):
        def setter(**kw):
            def mutate(t, keep):
                for k, v in kw.items():
                    setattr(t, k, v)
            return mutate
        self.refused(setter(ndim=-1), "ndim -1")
        self.refused(setter(ndim=65), "ndim 65")
        self.refused(setter(shape=None), "a NULL shape")
        self.refused(setter(data=None), "a NULL data pointer")
        self.refused(setter(byte_offset=2**64 - 8), "byte_offset")
        self.refused(setter(dtype=dlpack.DLDataType(2, 0, 1)), "sub-byte")
        self.refused(setter(dtype=dlpack.DLDataType(2, 12, 1)), "sub-byte")
        self.refused(setter(dtype=dlpack.DLDataType(2, 32, 2)), "vector")
        # A CUDA tensor from a producer that says it is on the CPU is never read as host memory.
        self.refused(setter(device=dlpack.DLDevice(dlpack.KDL_CUDA, 0)), "device (2, 0)",
                     "(1, 0)")
        self.refused(setter(device=dlpack.DLDevice(dlpack.KDL_CUDA, 0)), "device", legacy=True)

    def test_shapes(self):
        def shaped(*extents):
            return lambda t, keep: _dims(t, keep, extents)
        self.refused(shaped(-5), "shape [-5]")
        self.refused(shaped(2**62), "bytes at address")
        self.refused(shaped(2**31, 2**31, 4), "bytes at address")

        def strided(t, keep):
            s = (C.c_int64 * 1)(-1)
            t.strides = s
            keep.append(s)
        self.refused(strided, "not contiguous")

    def test_good_still_reads(self):
        p = Hostile(lambda t, keep: None)
        with self.be.upload(p) as r:
            self.assertEqual(r.download(dtype="float32").tolist(), [1.0] * 4)
        self.assertEqual(p.deleted, 2, "upload reads it twice (size, then data), gives it back twice")


if __name__ == "__main__":
    unittest.main()
