"""test_program.py -- programs from Python: assemble, load, validate, encode, disassemble, and the builder (checked by running what it builds)."""
import os
import tempfile
import unittest

import numpy as np

import vyre
from vyretest import RefCase, example

SAXPY_TEXT = """workgroup 64
buffer a uniform f32 [1]
buffer x ro f32
buffer y rw f32
%i = gid.x
%n = buflen y
%in = lt %i %n
if %in
  %z = const u32 0
  %av = load a %z
  %xv = load x %i
  %yv = load y %i
  %r = fma %av %xv %yv
  store y %i %r
end
"""


class Programs(unittest.TestCase):
    def test_assemble_and_metadata(self):
        p = vyre.assemble(SAXPY_TEXT)
        self.assertEqual(p.workgroup, (64, 1, 1))
        self.assertEqual([b.name for b in p.buffers], ["a", "x", "y"])
        self.assertEqual([b.name for b in p.inputs], ["a", "x", "y"])
        self.assertEqual([b.name for b in p.outputs], ["y"])
        self.assertEqual([b.name for b in p.kernel_buffers], ["a", "x", "y"])
        a, x, y = p.buffers
        self.assertEqual((a.type, a.access, a.count, a.role, a.dtype), ("f32", "uniform", 1, "input", "float32"))
        self.assertEqual((x.access, x.count, x.role), ("ro", 0, "input"))
        self.assertEqual((y.access, y.role, y.is_output, y.output_index), ("rw", "inout", True, 0))
        self.assertEqual(p.buffer("x").index, 1)
        self.assertEqual(len(p.hash), 64)
        self.assertEqual(p.bytes[:4], b"VYRP")
        self.assertEqual(p.size, len(p.bytes))
        self.assertEqual(p.inst_count, 11)

    def test_round_trip(self):
        p = example("saxpy")
        text = p.disassemble()
        self.assertIn("buffer a uniform f32 [1]", text)
        q = vyre.assemble(text)
        self.assertEqual(q.bytes, p.bytes, "assembling the disassembly gives identical bytes")
        self.assertEqual(q.hash, p.hash)
        self.assertEqual(q, p)
        self.assertIs(p.validate(), p)
        self.assertEqual(p.encode(), p.bytes)
        self.assertEqual(vyre.Program(bytearray(p.bytes)).hash, p.hash)
        self.assertEqual(vyre.Program(memoryview(p.bytes)).hash, p.hash)

    def test_load_and_save(self):
        p = example("histogram")
        with tempfile.TemporaryDirectory() as d:
            binary = os.path.join(d, "h.vyrb")
            text = os.path.join(d, "h.vyre")
            p.save(binary)
            p.save(text)
            with open(binary, "rb") as f:
                self.assertEqual(f.read(), p.bytes)
            self.assertEqual(vyre.load(binary), p)
            self.assertEqual(vyre.load(text), p)
            with self.assertRaises(vyre.IOFailure) as cm:
                vyre.load(os.path.join(d, "missing.vyre"))
            self.assertIn("missing.vyre", cm.exception.message)
            self.assertTrue(cm.exception.fix)

    def test_bad_text(self):
        with self.assertRaises(vyre.InvalidProgram) as cm:
            vyre.assemble("workgroup 64\n%x = frobnicate\n", filename="bad.vyre")
        e = cm.exception
        self.assertEqual(e.status, "VYRE_INVALID_PROGRAM")
        self.assertTrue(e.message.startswith("bad.vyre:2:"), e.message)
        self.assertTrue(e.fix, "the assembler's message carries a Fix")
        self.assertIn("Fix:", str(e))

    def test_bad_bytes(self):
        p = example("saxpy")
        for bad in (b"", b"VYRP", p.bytes[:-4], b"\0" * 64):
            with self.assertRaises(vyre.VyreError) as cm:
                vyre.Program(bad)
            self.assertIn(cm.exception.status, ("VYRE_INVALID_PROGRAM", "VYRE_LIMIT"))
            self.assertTrue(cm.exception.fix, cm.exception.message)
        with self.assertRaises(vyre.InvalidArgument):
            vyre.Program(12)


class BuilderTest(RefCase):
    def test_elementwise(self):
        b = vyre.Builder(64)
        x = b.buffer("x", "u32", "ro")
        y = b.buffer("y", "u32", "wo", count=100)
        i = b.gid()
        with b.if_(i < x.len()):
            v = x[i]
            y[i] = (b.popcount(v) * 3 + 1) ^ (v >> 2)
        with b.else_():
            y[i] = b.u32(7)
        p = b.finish()
        xs = (np.arange(100, dtype=np.uint64) * 2654435761 % (1 << 32)).astype(np.uint32)
        (out,) = self.be.dispatch(p, xs[:90])
        pc = np.array([bin(int(v)).count("1") for v in xs[:90]], dtype=np.uint32)
        want = np.concatenate([(pc * 3 + 1) ^ (xs[:90] >> 2), np.full(10, 7, np.uint32)])
        self.assertEqual(out.dtype, np.uint32)
        np.testing.assert_array_equal(out, want)

    def test_else_after_a_nested_if(self):
        # The else_ belongs to the outer if: the inner block's END is
        # written when the outer one closes, not after the else_.
        b = vyre.Builder(1)
        y = b.buffer("y", "u32", "wo", count=2)
        c = b.buffer("c", "u32", "ro")
        with b.if_(c[b.u32(0)].eq(1)):
            with b.if_(c[b.u32(1)].eq(1)):
                y[b.u32(0)] = b.u32(11)
        with b.else_():
            y[b.u32(1)] = b.u32(22)
        p = b.finish()
        for c0, c1, want in ((1, 1, [11, 0]), (1, 0, [0, 0]), (0, 1, [0, 22]), (0, 0, [0, 22])):
            (out,) = self.be.dispatch(p, np.uint32([c0, c1]))
            self.assertEqual(out.tolist(), want, "c = (%d, %d)" % (c0, c1))

    def test_text_of_a_built_program(self):
        b = vyre.Builder((16, 2))
        a = b.buffer("a", "f32", "rw")
        i = b.gid()
        a[i] = b.sqrt(a[i]) + 1.5
        p = b.finish()
        self.assertEqual(p.workgroup, (16, 2, 1))
        text = p.disassemble()
        self.assertIn("sqrt", text)
        self.assertIn("const f32 1.5", text)
        self.assertEqual(vyre.assemble(text), p)

    def test_loop_locals_select_cast(self):
        # out[i] = sum_{k < i % 8} (f32)k, and select for a clamp.
        b = vyre.Builder(32)
        out = b.buffer("out", "f32", "wo", count=64)
        lim = b.buffer("lim", "f32", "wo", count=64)
        i = b.gid()
        acc = b.local("f32")
        b.let(acc, 0.0)
        with b.loop(0, i % 8) as k:
            acc.set(acc.get() + b.cast("f32", k.get()))
        out[i] = acc.get()
        fi = b.cast("f32", i)
        lim[i] = b.select(fi > 10.0, b.f32(10.0), fi)
        p = b.finish()
        o, l_ = self.be.dispatch(p)
        idx = np.arange(64)
        want = np.array([sum(range(j % 8)) for j in idx], dtype=np.float32)
        np.testing.assert_array_equal(o, want)
        np.testing.assert_array_equal(l_, np.minimum(idx, 10).astype(np.float32))

    def test_atomics_barrier_workgroup(self):
        # A histogram of the low 2 bits through a workgroup tile.
        b = vyre.Builder(64)
        data = b.buffer("data", "u32", "ro")
        hist = b.buffer("hist", "u32", "rw", count=4, output=True)
        tile = b.buffer("tile", "u32", "workgroup", count=4)
        lid = b.lid()
        with b.if_(lid < 4):
            tile[lid] = b.u32(0)
        b.barrier()
        with b.if_(lid < data.len()):
            b.atomic("add", tile, data[lid] & 3, 1)
        b.barrier()
        with b.if_(lid < 4):
            hist[lid] = tile[lid]
        p = b.finish()
        d = np.array([0, 1, 1, 2, 2, 2, 3, 3, 3, 3, 7, 5], dtype=np.uint32)
        (h,) = self.be.dispatch(p, d)
        np.testing.assert_array_equal(h, np.bincount(d & 3, minlength=4).astype(np.uint32))

    def test_subgroup_reduce_and_ballot(self):
        b = vyre.Builder(32)
        x = b.buffer("x", "u32", "ro", count=32)
        s = b.buffer("s", "u32", "wo", count=32)
        m = b.buffer("m", "u32", "wo", count=32)
        i = b.gid()
        v = x[i]
        s[i] = b.reduce("add", v)
        m[i] = b.ballot(v > 15)
        p = b.finish()
        xs = np.arange(32, dtype=np.uint32)
        sums, masks = self.be.dispatch(p, xs)
        np.testing.assert_array_equal(sums, np.full(32, xs.sum(), np.uint32))
        np.testing.assert_array_equal(masks, np.full(32, 0xFFFF0000, np.uint32))

    def test_signed_and_64bit_constants(self):
        b = vyre.Builder(1)
        o = b.buffer("o", "i64", "wo", count=2)
        q = b.buffer("q", "i32", "wo", count=1)
        o[b.u32(0)] = b.i64(-(1 << 40))
        o[b.u32(1)] = b.i64(123) * 2
        q[b.u32(0)] = b.i32(-7) / 2
        p = b.finish()
        o_, q_ = self.be.dispatch(p)
        np.testing.assert_array_equal(o_, np.array([-(1 << 40), 246], np.int64))
        self.assertEqual(int(q_[0]), -3)

    def test_builder_errors(self):
        b = vyre.Builder(64)
        with self.assertRaises(vyre.InvalidArgument) as cm:
            b.buffer("x", "f33")
        self.assertIn("Fix:", cm.exception.message)
        with self.assertRaises(vyre.InvalidArgument):
            b.buffer("x", "u32", access="readonly")
        with self.assertRaises(vyre.InvalidArgument):
            b.u32(-1)
        with self.assertRaises(vyre.InvalidArgument):
            b.i32(1 << 31)
        with self.assertRaises(vyre.InvalidArgument):
            b.else_()
        with self.assertRaises(AttributeError):
            b.frobnicate
        with self.assertRaises(vyre.InvalidArgument):
            bool(b.gid())
        with self.assertRaises(vyre.InvalidArgument):
            vyre.Builder(0)
        # A type error is the validator's, at finish.
        b2 = vyre.Builder(64)
        y = b2.buffer("y", "u32", "rw")
        y[b2.gid()] = b2.f32(1.0)
        with self.assertRaises(vyre.InvalidProgram) as cm:
            b2.finish()
        self.assertTrue(cm.exception.fix)
        with self.assertRaises(vyre.InvalidArgument):
            b2.gid()  # spent


if __name__ == "__main__":
    unittest.main()
