"""test_dispatch.py -- host dispatch from Python: NumPy arrays and every kind of buffer in, NumPy arrays (or the caller's buffers) out, bit-exact against NumPy."""
import array
import unittest

import numpy as np

import vyre
from vyretest import RefCase, example


def f32_fma(a, x, y):
    # One rounding: the exact product-sum in double (24+24 bits fit), then f32.
    return (np.float64(a) * x.astype(np.float64) + y.astype(np.float64)).astype(np.float32)


class Listing(unittest.TestCase):
    def test_backends(self):
        bs = vyre.backends()
        ids = [b.id for b in bs]
        self.assertIn("reference", ids)
        ref = bs[ids.index("reference")]
        self.assertEqual(ref.status, "ready")
        self.assertEqual(ref.precedence, 900)
        self.assertEqual(ref.abi, (1, 1))
        self.assertIn("resident", ref.capabilities)
        self.assertEqual(ref.reason, "")
        self.assertTrue(ref.path.endswith("libvyre-ref.so"), ref.path)
        for b in bs:
            self.assertIn(b.status, ("loaded", "ready", "unavailable", "skipped"))
            if b.status in ("skipped", "unavailable"):
                self.assertIn("Fix:", b.reason)
        self.assertEqual([b.index for b in bs], list(range(len(bs))))
        self.assertEqual(len(vyre.backends(probe=False)), len(bs))

    def test_open(self):
        with vyre.open() as be:  # the best that works
            best = be.id
            self.assertIn(best, [b.id for b in vyre.backends() if b.status == "ready"])
            self.assertEqual(be.profile().backend_id, best)
        self.assertIn("closed", repr(be))
        with self.assertRaises(vyre.InvalidHandle):
            be.profile()
        with vyre.open("reference") as be:
            p = be.profile()
            self.assertEqual(p.backend_id, "reference")
            self.assertEqual(p.compute_capability, (0, 0))
            self.assertEqual(p.subgroup_size, 32)
            self.assertGreater(p.total_memory, 0)
            self.assertIn("async", be.capabilities)
            self.assertEqual(be.info.id, "reference")
            self.assertTrue(be.has("dispatch_sequence"))
            be.prepare()
            be.shutdown()
            self.assertIn("dispatch.count", be.metrics())
        with self.assertRaises(vyre.VyreError) as cm:
            vyre.open("no-such-backend")
        self.assertIn("no-such-backend", cm.exception.message)
        self.assertTrue(cm.exception.fix)
        with self.assertRaises(vyre.InvalidArgument):
            vyre.open("reference", device=-1)


class Dispatch(RefCase):
    def setUp(self):
        self.saxpy = example("saxpy")
        rng = np.random.default_rng(5)
        self.x = rng.standard_normal(1000).astype(np.float32)
        self.y = rng.standard_normal(1000).astype(np.float32)
        self.want = f32_fma(np.float32(2.5), self.x, self.y)

    def check(self, out):
        self.assertEqual(out.dtype, np.float32)
        self.assertEqual(out.tobytes(), self.want.tobytes(), "bit-exact: one fma rounding")

    def test_numpy(self):
        (y,) = self.be.dispatch(self.saxpy, np.float32([2.5]), self.x, self.y)
        self.check(y)
        self.assertEqual(self.y[0], self.y[0])  # the input is not written
        (y,) = self.be.dispatch(self.saxpy, 2.5, self.x, self.y)  # a number for a [1] buffer
        self.check(y)
        (y,) = self.be.dispatch(self.saxpy, [2.5], list(self.x), self.y)
        self.check(y)
        # A non-contiguous array is copied to a contiguous one.
        x2 = np.repeat(self.x, 2)[::2]
        self.assertFalse(x2.flags.c_contiguous)
        (y,) = self.be.dispatch(self.saxpy, 2.5, x2, self.y)
        self.check(y)

    def test_buffer_protocol(self):
        a = np.float32([2.5]).tobytes()
        kinds = [
            (bytes(a), bytes(self.x.tobytes()), bytes(self.y.tobytes())),
            (bytearray(a), bytearray(self.x.tobytes()), bytearray(self.y.tobytes())),
            (memoryview(a), memoryview(self.x), memoryview(self.y.tobytes())),
            (array.array("f", [2.5]), array.array("f", self.x.tobytes()), array.array("f", self.y.tobytes())),
        ]
        for k in kinds:
            (y,) = self.be.dispatch(self.saxpy, *k)
            self.check(y)
        # A strided memoryview is read in its logical order.
        mv = memoryview(np.repeat(self.x, 2))[::2]
        (y,) = self.be.dispatch(self.saxpy, a, mv, self.y)
        self.check(y)

    def test_out(self):
        out = np.empty(1000, np.float32)
        res = self.be.dispatch(self.saxpy, 2.5, self.x, self.y, out=[out])
        self.assertIs(res[0], out)
        self.check(out)
        ba = bytearray(4000)
        res = self.be.dispatch(self.saxpy, 2.5, self.x, self.y, out=ba)
        self.assertIs(res[0], ba)
        self.assertEqual(bytes(ba), self.want.tobytes())
        arr = array.array("f", bytes(4000))
        self.be.dispatch(self.saxpy, 2.5, self.x, self.y, out=[memoryview(arr)])
        self.assertEqual(arr.tobytes(), self.want.tobytes())
        with self.assertRaises(vyre.InvalidArgument) as cm:
            self.be.dispatch(self.saxpy, 2.5, self.x, self.y, out=[bytearray(16)])
        self.assertIn("Fix:", cm.exception.message)
        with self.assertRaises(vyre.InvalidArgument):
            self.be.dispatch(self.saxpy, 2.5, self.x, self.y, out=[bytes(4000)])

    def test_timing_async_pipeline(self):
        (y,), t = self.be.dispatch(self.saxpy, 2.5, self.x, self.y, timing=True)
        self.check(y)
        self.assertIsInstance(t, vyre.Timing)
        self.assertGreater(t.wall_ns, 0)
        pend = self.be.dispatch_async(self.saxpy, 2.5, self.x, self.y)
        pend.poll()
        (y,) = pend.wait()
        self.check(y)
        with self.assertRaises(vyre.InvalidHandle):
            pend.wait()
        pend = self.be.dispatch_async(self.saxpy, 2.5, self.x, self.y, timing=True)
        (y,), t = pend.wait()
        self.check(y)
        self.be.dispatch_async(self.saxpy, 2.5, self.x, self.y).release()
        with self.be.compile(self.saxpy) as pl:
            self.assertIs(pl.program, self.saxpy)
            (y,) = self.be.dispatch(pl, 2.5, self.x, self.y)
            self.check(y)
        with self.assertRaises(vyre.InvalidHandle):
            self.be.dispatch(pl, 2.5, self.x, self.y)

    def test_options(self):
        # A grid of one 64-wide workgroup covers only the first 64 elements.
        (y,) = self.be.dispatch(self.saxpy, 2.5, self.x, self.y, workgroup=64, grid=1)
        self.assertEqual(y[:64].tobytes(), self.want[:64].tobytes())
        self.assertEqual(y[64:].tobytes(), self.y[64:].tobytes())
        # fixpoint: three launches on the same buffers.
        (y,) = self.be.dispatch(self.saxpy, 1.0, np.ones(8, np.float32), np.zeros(8, np.float32),
                                fixpoint=3)
        np.testing.assert_array_equal(y, np.full(8, 3, np.float32))
        with self.assertRaises(vyre.InvalidArgument):
            self.be.dispatch(self.saxpy, 2.5, self.x, self.y, workgroup=(0,))

    def test_examples_against_numpy(self):
        # histogram: the low nibble of every word.
        d = (np.arange(5000, dtype=np.uint64) * 40503 % 65536).astype(np.uint32)
        (h,) = self.be.dispatch(example("histogram"), d)
        np.testing.assert_array_equal(h, np.bincount(d & 15, minlength=16).astype(np.uint32))
        # scan: inclusive prefix sums of each 256-block, in place, and block totals.
        s = (np.arange(700, dtype=np.uint32) * 7) % 13
        data, totals = self.be.dispatch(example("scan"), s)
        blocks = [s[i:i + 256] for i in range(0, 700, 256)]
        np.testing.assert_array_equal(data, np.concatenate([np.cumsum(b, dtype=np.uint32) for b in blocks]))
        np.testing.assert_array_equal(totals[:3], [b.sum(dtype=np.uint32) for b in blocks])
        # bitonic_sort: every 256-key block sorted.
        keys = np.random.default_rng(1).integers(0, 1 << 32, 512, dtype=np.uint64).astype(np.uint32)
        (srt,) = self.be.dispatch(example("bitonic_sort"), keys)
        np.testing.assert_array_equal(srt, np.concatenate([np.sort(keys[:256]), np.sort(keys[256:])]))


if __name__ == "__main__":
    unittest.main()
