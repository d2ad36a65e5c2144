"""test_ints.py -- every integer the package hands to C is range-checked first: out of the C type's range, negative where unsigned, a bool or a non-integer raise InvalidArgument with a Fix, never a silently truncated value (issue 24, finding 11)."""
import unittest

import numpy as np

import vyre
from vyre import _ints
from vyretest import RefCase, example


class Checker(unittest.TestCase):
    def refused(self, fn, *texts):
        with self.assertRaises(vyre.InvalidArgument) as cm:
            fn()
        e = cm.exception
        self.assertTrue(e.fix, "the refusal has a Fix: %s" % e.message)
        for t in texts:
            self.assertIn(t, e.message)
        return e

    def test_ranges(self):
        self.assertEqual(_ints.u32(0, "x"), 0)
        self.assertEqual(_ints.u32(2**32 - 1, "x"), 2**32 - 1)
        self.assertEqual(_ints.u64(2**64 - 1, "x"), 2**64 - 1)
        self.assertEqual(_ints.checked(-2**31, "int", "x"), -2**31)
        self.assertEqual(_ints.u32(np.uint16(7), "x"), 7, "NumPy integers are integers")
        self.refused(lambda: _ints.u32(2**32, "x"), "x 4294967296 is over 4294967295")
        self.refused(lambda: _ints.u64(2**64 + 16, "x"), "over 18446744073709551615")
        self.refused(lambda: _ints.u64(-1, "x"), "x -1 is below 0")
        self.refused(lambda: _ints.u32(0, "x", low=1), "below 1")
        self.refused(lambda: _ints.checked(2**31, "int", "x"), "C int")
        for b in (True, False, np.bool_(True)):
            self.refused(lambda: _ints.u32(b, "x"), "is a bool where an integer is meant")
        for v in (1.0, "1", None, [1]):
            self.refused(lambda: _ints.u64(v, "x"), "is not an integer")

    def test_status_name(self):
        self.assertEqual(vyre.status_name(0), "VYRE_OK")
        self.assertEqual(vyre.status_name(99), "VYRE_UNKNOWN_STATUS")
        self.refused(lambda: vyre.status_name(2**40), "status code 1099511627776", "C int")
        self.refused(lambda: vyre.status_name(True), "bool")
        # An exception made with any number still says what it is.
        self.assertEqual(vyre.VyreError("x", code=2**40).status, "VYRE_UNKNOWN_STATUS")

    def test_builder(self):
        self.refused(lambda: vyre.Builder(2**32 + 64), "workgroup x 4294967360")
        self.refused(lambda: vyre.Builder((64, True)), "workgroup y True is a bool")
        self.refused(lambda: vyre.Builder(None), "workgroup")
        b = vyre.Builder(64)
        self.refused(lambda: b.set_workgroup((1, 1, 2**32)), "workgroup z")
        self.refused(lambda: b.buffer("x", "u32", count=2**32), "count of buffer 'x'")
        self.refused(lambda: b.buffer("x", "u32", count=True), "bool")
        self.refused(lambda: b.buffer("x", "u32", binding=-1), "binding of buffer 'x' -1")
        self.refused(lambda: b.buffer("x", "u32", out_range=(0, 2**32)), "out_range size")
        self.refused(lambda: b.buffer("x", "u32", out_range=4), "is not (byte offset, byte size)")
        self.refused(lambda: b.u32(2**32), "u32 constant 4294967296")
        self.refused(lambda: b.u32(True), "bool")
        self.refused(lambda: b.u32(2.5), "not an integer")
        self.refused(lambda: b.i32(2**31), "i32 constant")
        self.refused(lambda: b.i64(-2**63 - 1), "i64 constant")
        self.refused(lambda: b.u64(-1), "u64 constant -1 is below 0")
        self.refused(lambda: b.trap(2**32), "trap code")
        self.refused(lambda: b.gid(True), "axis")
        self.refused(lambda: b.local(True), "not a vyre type")
        self.refused(lambda: b.const("f16", 1), "constants are of a value type")
        self.refused(lambda: b.f32(1e300), "is not a f32 constant")
        self.assertEqual(b.i32(-1).type, "i32")
        self.assertEqual(b.u64(2**64 - 1).type, "u64")
        b.close()


class Calls(RefCase):
    def refused(self, fn, *texts):
        return Checker.refused(self, fn, *texts)

    def test_alloc(self):
        self.refused(lambda: self.be.alloc(2**64 + 16), "resident size 18446744073709551632")
        self.refused(lambda: self.be.alloc(True), "resident size True is a bool")
        self.refused(lambda: self.be.alloc(-1), "below 0")
        self.refused(lambda: self.be.alloc(16.0), "not an integer")
        with self.be.alloc(np.uint64(16)) as r:
            self.assertEqual(r.size, 16)
        self.assertEqual(self.be.metrics()["resident.live.buffers"], 0, "nothing was allocated")

    def test_resident_ranges(self):
        with self.be.alloc(16) as r:
            self.refused(lambda: r.upload(b"abcd", offset=2**64), "upload offset")
            self.refused(lambda: r.upload(b"abcd", offset=True), "bool")
            self.refused(lambda: r.download(offset=-1), "download offset -1")
            self.refused(lambda: r.download(size=2**64), "download size")
            self.refused(lambda: r.download(offset=8, size=16), "past the buffer's 16 bytes")
            self.refused(lambda: r.download(offset=17), "past the buffer's 16 bytes")
            self.assertEqual(bytes(r.download(offset=16)), b"", "an empty range at the end")

    def test_dispatch_options(self):
        p, x, y = example("saxpy"), np.arange(8, dtype=np.float32), np.ones(8, np.float32)
        self.refused(lambda: self.be.dispatch(p, 2.0, x, y, workgroup=2**32 + 64),
                     "workgroup x 4294967360 is over 4294967295")
        self.refused(lambda: self.be.dispatch(p, 2.0, x, y, workgroup=True), "bool")
        self.refused(lambda: self.be.dispatch(p, 2.0, x, y, grid=(1, 2**32)), "grid y")
        self.refused(lambda: self.be.dispatch(p, 2.0, x, y, grid=(1, 1, 1, 1)), "1 to 3")
        self.refused(lambda: self.be.dispatch(p, 2.0, x, y, fixpoint=2**32), "fixpoint")
        self.refused(lambda: self.be.dispatch(p, 2.0, x, y, fixpoint=True), "bool")
        self.refused(lambda: self.be.dispatch(p, 2.0, x, y, ulp=-1), "ulp -1")
        self.refused(lambda: self.be.dispatch_async(p, 2.0, x, y, workgroup=2**32 + 64),
                     "workgroup x")
        self.refused(lambda: self.be.compile(p, workgroup=0), "workgroup x 0 is below 1")
        (out,) = self.be.dispatch(p, 2.0, x, y, workgroup=np.uint32(64))
        self.assertEqual(out.tolist(), (2 * x + 1).tolist())

    def test_resident_dispatch_and_sequence(self):
        p = example("saxpy")
        a, x, y = (self.be.upload(np.ones(n, np.float32)) for n in (1, 8, 8))
        ind = self.be.alloc(12)
        try:
            self.refused(lambda: self.be.dispatch_resident(p, a, x, y, indirect=(ind, -4)),
                         "indirect byte offset -4")
            self.refused(lambda: self.be.dispatch_resident(p, a, x, y, indirect=(ind, True)),
                         "bool")
            self.refused(lambda: self.be.sequence([(p, [a, x, y])], repeat=2**32), "repeat")
            self.refused(lambda: self.be.sequence([(p, [a, x, y])], repeat=True), "bool")
            self.refused(lambda: self.be.sequence([(p, [a, x, y])], reads=[(y, 2**64)]),
                         "read 0 offset")
            self.refused(lambda: self.be.sequence([(p, [a, x, y])], reads=[(y, 0, 64)]),
                         "past the buffer's 32 bytes")
            self.refused(lambda: self.be.sequence([(p, [a, x, y])], reads=[(y, 40)]),
                         "past the buffer's 32 bytes")
            (got,) = self.be.sequence([(p, [a, x, y])], reads=[(y, 4)])
            self.assertEqual(got.tolist(), [2.0] * 7, "(Resident, offset) reads to the end")
        finally:
            for r in (a, x, y, ind):
                r.free()

    def test_open(self):
        self.refused(lambda: vyre.open("reference", device=True), "device True is a bool")
        self.refused(lambda: vyre.open("reference", device=2**32), "device 4294967296")
        self.refused(lambda: vyre.open(program=example("saxpy"), device=2**32 + 1), "device")
        self.refused(lambda: self.be.dispatch(example("saxpy"), 2.0, b"\0" * 4, b"\0" * 4,
                                              stream=-1), "stream -1")


if __name__ == "__main__":
    unittest.main()
