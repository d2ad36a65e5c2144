"""test_resident.py -- resident buffers (alloc, upload, download, ranges, free), resident dispatch and sequences from Python."""
import unittest

import numpy as np

import vyre
from vyretest import RefCase, example


class ResidentTest(RefCase):
    def test_alloc_upload_download(self):
        with self.be.alloc(64, dtype="uint32") as r:
            self.assertEqual(r.size, 64)
            np.testing.assert_array_equal(r.download(), np.zeros(16, np.uint32))
            r.upload(np.arange(16, dtype=np.uint32))
            np.testing.assert_array_equal(r.download(), np.arange(16, dtype=np.uint32))
            r.upload(np.uint32([100, 101]), offset=8)  # upload_at
            self.assertEqual(r.download(offset=8, size=8).tolist(), [100, 101])
            self.assertEqual(r.download(dtype="uint8").nbytes, 64)
            out = bytearray(16)
            self.assertIs(r.download(out=out), out)
            self.assertEqual(np.frombuffer(out, np.uint32).tolist(), [0, 1, 100, 101])
            r.upload(b"\xff" * 4, offset=60)
            self.assertEqual(int(r.download()[15]), 0xFFFFFFFF)
            h = r.handle
        self.assertEqual(r.handle, 0)
        self.assertIn("freed", repr(r))
        r.free()  # idempotent
        with self.assertRaises(vyre.InvalidHandle):
            r.download()
        self.assertNotEqual(h, 0)
        self.assertEqual(self.be.metrics()["resident.live.buffers"], 0)

    def test_upload_keeps_dtype(self):
        x = np.linspace(-1, 1, 33, dtype=np.float32)
        with self.be.upload(x) as r:
            self.assertEqual(r.dtype, "float32")
            self.assertEqual(r.download().tobytes(), x.tobytes())
        with self.be.upload(b"abcd") as r:
            self.assertIsNone(r.dtype)
            self.assertEqual(r.download().tobytes(), b"abcd")
        with self.assertRaises(vyre.InvalidArgument):
            self.be.upload([1, 2, 3])  # no element type

    def test_range_errors(self):
        with self.be.alloc(16) as r:
            with self.assertRaises(vyre.VyreError) as cm:
                r.upload(b"x" * 8, offset=12)
            self.assertTrue(cm.exception.fix, cm.exception.message)
            with self.assertRaises(vyre.VyreError):
                r.download(offset=8, size=16)
            with self.assertRaises(vyre.InvalidArgument):
                r.download(offset=20)
            with self.assertRaises(vyre.VyreError):
                r.upload(b"x" * 17)

    def test_dispatch_resident(self):
        p = example("saxpy")
        x = np.arange(300, dtype=np.float32)
        y = np.ones(300, dtype=np.float32)
        with self.be.upload(np.float32([3])) as a, self.be.upload(x) as rx, self.be.upload(y) as ry:
            t = self.be.dispatch_resident(p, a, rx, ry, timing=True)
            self.assertGreater(t.wall_ns, 0)
            np.testing.assert_array_equal(ry.download(), 3 * x + 1)
            self.assertIsNone(self.be.dispatch_resident(p, a, rx, ry))
            np.testing.assert_array_equal(ry.download(), 6 * x + 1)
            with self.assertRaises(vyre.InvalidArgument) as cm:
                self.be.dispatch_resident(p, a, rx)
            self.assertIn("3 buffer", cm.exception.message)
            with self.assertRaises(vyre.InvalidArgument):
                self.be.dispatch_resident(p, a, rx, y)  # host memory: upload it first

    def test_sequence(self):
        p = example("saxpy")
        x = np.arange(64, dtype=np.float32)
        with self.be.upload(np.float32([1])) as a, self.be.upload(x) as rx, \
                self.be.alloc(256, dtype="float32") as ry:
            reads = self.be.sequence([vyre.Step(p, [a, rx, ry]), (p, [a, rx, ry])], repeat=5,
                                     reads=[ry, (ry, 16, 8)])
            np.testing.assert_array_equal(reads[0], 10 * x)
            np.testing.assert_array_equal(reads[1], 10 * x[4:6])
            (r,), t = self.be.sequence([vyre.Step(p, [a, rx, ry], workgroup=32, grid=1)],
                                       reads=[ry], timing=True)
            np.testing.assert_array_equal(r[:32], 11 * x[:32])
            np.testing.assert_array_equal(r[32:], 10 * x[32:])
            self.assertIsInstance(t, vyre.Timing)
            with self.be.compile(p) as pl:
                (r,) = self.be.sequence([(pl, [a, rx, ry])], reads=[ry])
                np.testing.assert_array_equal(r[:32], 12 * x[:32])
            with self.assertRaises(vyre.InvalidArgument):
                self.be.sequence([])

    def test_indirect(self):
        # Thread 0 of each workgroup of 4 marks it; the grid (bound) is 8,
        # the count is read from a resident buffer when the step runs.
        p = vyre.assemble("workgroup 4\nbuffer o rw u32 [8]\n%l = lid.x\n%z = const u32 0\n"
                          "%f = eq %l %z\nif %f\n  %w = wgid.x\n  %one = const u32 1\n"
                          "  store o %w %one\nend\n")
        self.assertIn("indirect_dispatch", self.be.capabilities)
        with self.be.alloc(32, dtype="uint32") as o, \
                self.be.upload(np.uint32([7, 3, 1, 1])) as cnt:
            self.be.dispatch_resident(p, o, grid=8, indirect=(cnt, 4))
            self.assertEqual(o.download().tolist(), [1, 1, 1, 0, 0, 0, 0, 0])
            cnt.upload(np.uint32([9, 1, 1]), offset=4)
            with self.assertRaises(vyre.LimitExceeded) as cm:
                self.be.sequence([vyre.Step(p, [o], grid=8, indirect=(cnt, 4))])
            self.assertIn("count 9 on axis x", cm.exception.message)
            with self.assertRaises(vyre.InvalidArgument):
                self.be.dispatch_resident(p, o, grid=8, indirect=(cnt, 2))
            with self.assertRaises(vyre.InvalidArgument):
                self.be.dispatch_resident(p, o, indirect="cnt")

    def test_foreign_handles(self):
        with vyre.open("reference") as other:
            r = other.alloc(16)
            with self.assertRaises(vyre.InvalidArgument):
                self.be.dispatch_resident(example("histogram"), r, r)
            pl = other.compile(example("histogram"))
            with self.assertRaises(vyre.InvalidArgument):
                self.be.dispatch(pl, np.zeros(4, np.uint32))
            # An indirect count or a sequence read of another instance: its
            # handle means nothing here.
            p = vyre.assemble("workgroup 4\nbuffer o rw u32 [8]\nreturn\n")
            with self.be.alloc(32) as o:
                with self.assertRaises(vyre.InvalidArgument) as cm:
                    self.be.dispatch_resident(p, o, grid=8, indirect=r)
                self.assertIn("indirect is a resident buffer of another backend", cm.exception.message)
                with self.assertRaises(vyre.InvalidArgument) as cm:
                    self.be.sequence([(p, [o])], reads=[r])
                self.assertIn("read 0 is a resident buffer of another backend", cm.exception.message)
        # Closing a backend releases its handles; freeing later is harmless.
        r.free()
        pl.release()


if __name__ == "__main__":
    unittest.main()
