"""test_handle.py -- every handle (Backend, Resident, Pipeline, Pending) on one base: close() is idempotent, `with` closes, use after close raises InvalidHandle saying what and how to fix it."""
import gc
import unittest

import numpy as np

import vyre
from vyre._handle import Handle
from vyretest import example


class HandleTest(unittest.TestCase):
    def setUp(self):
        self.be = vyre.open("reference")
        self.saxpy = example("saxpy")
        self.x = np.arange(8, dtype=np.float32)
        self.y = np.ones(8, dtype=np.float32)

    def tearDown(self):
        self.be.close()

    def invalid(self, fn, text):
        with self.assertRaises(vyre.InvalidHandle) as cm:
            fn()
        self.assertIn(text, str(cm.exception), "the message says what is closed and the fix")

    def test_one_base(self):
        for cls in (vyre.Backend, vyre.Resident, vyre.Pipeline, vyre.Pending):
            self.assertTrue(issubclass(cls, Handle), "%s is a Handle" % cls.__name__)

    def test_backend(self):
        be = vyre.open("reference")
        with be as same:
            self.assertIs(same, be, "with gives the backend itself")
        self.assertIn("closed", repr(be))
        be.close()  # idempotent
        self.invalid(be.metrics, "backend reference is closed. Fix: vyre.open() a new one")

    def test_resident(self):
        r = self.be.alloc(16)
        with r as same:
            self.assertIs(same, r)
        self.assertEqual(r.handle, 0, "leaving the block frees it")
        r.free()
        r.close()  # both names, idempotent
        self.invalid(r.download, "this resident buffer is freed. Fix: allocate a new one")
        self.assertEqual(self.be.metrics()["resident.live.buffers"], 0)

    def test_pipeline(self):
        pl = self.be.compile(self.saxpy)
        pl.release()
        pl.release()
        pl.close()
        self.invalid(lambda: self.be.dispatch(pl, 2.0, self.x, self.y),
                     "the pipeline is released. Fix: compile it again")

    def test_pending(self):
        p = self.be.dispatch_async(self.saxpy, 2.0, self.x, self.y)
        (y,) = p.wait()
        self.assertEqual(y.tolist(), (2.0 * self.x + 1).tolist())
        self.invalid(p.wait, "this pending dispatch was waited or released. Fix: wait() once")
        with self.be.dispatch_async(self.saxpy, 2.0, self.x, self.y) as p:
            pass
        self.assertEqual(p.handle, 0, "leaving the block releases it")
        p.release()
        self.invalid(p.poll, "waited or released")

    def test_collected(self):
        r = self.be.alloc(16)
        self.be.compile(self.saxpy)
        del r
        gc.collect()
        self.assertEqual(self.be.metrics()["resident.live.buffers"], 0,
                         "a collected resident buffer is freed")

    def test_children_of_a_closed_backend(self):
        be = vyre.open("reference")
        r = be.alloc(16)
        be.close()
        self.invalid(r.download, "backend reference is closed")
        r.free()  # nothing left to free: no error


if __name__ == "__main__":
    unittest.main()
