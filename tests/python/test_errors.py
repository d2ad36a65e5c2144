"""test_errors.py -- every failure is a VyreError subclass carrying the status, the native code, the message and its Fix text."""
import unittest

import numpy as np

import vyre
from vyre import errors
from vyretest import RefCase, example


class ErrorClasses(unittest.TestCase):
    def test_one_class_per_status(self):
        names = {"VYRE_INVALID_ARGUMENT": vyre.InvalidArgument,
                 "VYRE_INVALID_PROGRAM": vyre.InvalidProgram,
                 "VYRE_UNSUPPORTED": vyre.Unsupported, "VYRE_OUT_OF_MEMORY": vyre.OutOfMemory,
                 "VYRE_NO_DEVICE": vyre.NoDevice, "VYRE_DRIVER": vyre.DriverError,
                 "VYRE_DEVICE_LOST": vyre.DeviceLost, "VYRE_COMPILE": vyre.CompileError,
                 "VYRE_INVALID_HANDLE": vyre.InvalidHandle, "VYRE_NOT_READY": vyre.NotReady,
                 "VYRE_ABI_MISMATCH": vyre.AbiMismatch, "VYRE_IO": vyre.IOFailure,
                 "VYRE_TRAP": vyre.Trap, "VYRE_LIMIT": vyre.LimitExceeded,
                 "VYRE_INTERNAL": vyre.InternalError}
        for code in range(1, 16):
            status = vyre.status_name(code)
            cls = names[status]
            self.assertEqual(cls.code, code)
            self.assertTrue(issubclass(cls, vyre.VyreError))
            e = errors.error(code, "x failed: y. Fix: do z", 42)
            self.assertIs(type(e), cls)
            self.assertEqual((e.status, e.code, e.native_code), (status, code, 42))
            self.assertEqual(e.fix, "do z")
            self.assertEqual(str(e), status + ": x failed: y. Fix: do z")
        self.assertTrue(issubclass(vyre.InvalidArgument, ValueError))
        self.assertTrue(issubclass(vyre.OutOfMemory, MemoryError))
        self.assertEqual(vyre.status_name(99), "VYRE_UNKNOWN_STATUS")
        self.assertEqual(errors.error(99, "odd").fix, "")


class Raised(RefCase):
    def test_wrong_inputs(self):
        p = example("saxpy")
        x = np.ones(8, np.float32)
        cases = [
            ((p, 2.0, x), "takes 3 input"),                      # too few
            ((p, 2.0, x.astype(np.float64), x), "float64"),       # wrong dtype
            ((p, 2.0, x, object()), "no buffer"),                 # not a buffer
            ((p, 2.0, x, np.ones(8, np.int32)), "int32"),
            (("not a program", 1), "not a program"),
        ]
        for args, text in cases:
            with self.assertRaises(vyre.InvalidArgument) as cm:
                self.be.dispatch(*args)
            e = cm.exception
            self.assertIn(text, e.message)
            self.assertEqual(e.status, "VYRE_INVALID_ARGUMENT")
            self.assertTrue(e.fix, e.message)

    def test_backend_errors_carry_the_backends_text(self):
        # The backend's own check: 3 bytes are not a whole f32.
        with self.assertRaises(vyre.InvalidArgument) as cm:
            self.be.dispatch(example("saxpy"), 2.0, b"abc", b"abcd")
        self.assertIn("not a whole number", cm.exception.message)
        self.assertIn("pass a multiple of 4 bytes", cm.exception.fix)
        # A uniform [1] buffer given two elements.
        with self.assertRaises(vyre.InvalidArgument) as cm:
            self.be.dispatch(example("saxpy"), np.float32([1, 2]), b"", b"")
        self.assertTrue(cm.exception.fix)

    def test_trap(self):
        p = vyre.assemble("workgroup 1\nbuffer o wo u32 [1]\ntrap 7\n")
        with self.assertRaises(vyre.Trap) as cm:
            self.be.dispatch(p)
        e = cm.exception
        self.assertEqual((e.status, e.code), ("VYRE_TRAP", 13))
        self.assertIn("7", e.message)


if __name__ == "__main__":
    unittest.main()


class OpenForProgram(unittest.TestCase):
    """vyre.open(program=...): the backend that covers the program (vyre_host_create_for)."""

    def test_chosen_backend_runs_it(self):
        p = example("saxpy")
        be = vyre.open(program=p)
        try:
            self.assertIn(be.id, ("cuda", "reference"))
            self.assertEqual(be.info.id, be.id)
        finally:
            be.close()
        be = vyre.open(program=p.bytes)  # an image works as well as a Program
        be.close()

    def test_refusals(self):
        p = example("saxpy")
        with self.assertRaises(errors.InvalidArgument) as c:
            vyre.open("reference", program=p)
        self.assertIn("Fix: pass either id or program", str(c.exception))
        with self.assertRaises(errors.InvalidArgument):
            vyre.open(program=p, device="GPU-1234")
        with self.assertRaises(errors.InvalidProgram):
            vyre.open(program=b"not a program")
