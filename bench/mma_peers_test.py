#!/usr/bin/env python3
"""mma_peers_test.py -- bench/mma_peers.py's logic without a GPU: argument parsing, the program's tile, the bound and the samples (the same as bench/mma_check.c's when MMA_CHECK_TEST names bench/mma_check_test), the float check with a CPU stand-in, and the summary and its exit status."""
import json
import os
import subprocess
import sys
import tempfile
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import mma_peers as mp  # noqa: E402


def rec(case, t="bf16", size=(64, 64, 64), **kw):
    r = {"case": case, "type": t, "M": size[0], "N": size[1], "K": size[2]}
    r.update(kw)
    return r


def full_run(t="bf16", size=(64, 64, 64), drv_ms=1.0, peer_ms=0.8, plugin_ms=1.01):
    return [rec("vyre_mma_check", t, size, path="driver", data="small integers", ok=True, mismatches=0, sampled=4096),
            rec("vyre_mma_check", t, size, path="driver", data="random", ok=True, mismatches=0, sampled=4096),
            rec("vyre_mma", t, size, path="driver", median_ms=drv_ms),
            rec("vyre_mma_check", t, size, path="plugin", data="random", ok=True, mismatches=0, sampled=4096),
            rec("vyre_mma", t, size, path="plugin", median_ms=plugin_ms),
            rec("torch_peer", t, size, peer=mp.PEERS[t], primary=True, median_ms=peer_ms),
            rec("torch_peer", t, size, peer="other", primary=False, median_ms=peer_ms / 2)]


class Parsing(unittest.TestCase):
    def test_sizes(self):
        self.assertEqual(mp.parse_sizes("4096x4096x4096, 8192x8192x8192"),
                         [(4096, 4096, 4096), (8192, 8192, 8192)])
        for bad in ("4096x4096", "0x1x1", "1x1x1x", "ax1x1", "-1x2x3"):
            self.assertRaises(ValueError, mp.parse_size, bad)

    def test_types(self):
        self.assertEqual(mp.parse_types("bf16,i8"), ["bf16", "i8"])
        self.assertRaises(ValueError, mp.parse_types, "f32")
        self.assertRaises(ValueError, mp.parse_types, "")

    def test_tile(self):
        self.assertEqual(mp.program_tile(os.path.join(HERE, "mma_simple.vyre")), (16, 16))
        with tempfile.NamedTemporaryFile("w", suffix=".vyre", delete=False) as f:
            f.write("; The grid is 2-D: --grid N/128,M/256.\nworkgroup 256\n")
        try:
            self.assertEqual(mp.program_tile(f.name), (128, 256))
            with open(f.name, "w") as g:
                g.write("workgroup 256\n")
            self.assertRaises(ValueError, mp.program_tile, f.name)
        finally:
            os.unlink(f.name)

    def test_main_usage(self):
        p = subprocess.run([sys.executable, "-B", os.path.join(HERE, "mma_peers.py"), "--types", "f32",
                            "--summarize", "/dev/null"], stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        self.assertEqual(p.returncode, 2)
        self.assertIn(b"pick from", p.stderr)


class Bound(unittest.TestCase):
    def test_one_mma(self):
        b = mp.float_bound(1.0, 16)
        self.assertTrue(18 * 2.0 ** -22 <= b < 19 * 2.0 ** -22, b)

    def test_deep(self):
        b = mp.float_bound(1024.0, 4096)
        self.assertTrue(256 * 18 * 2.0 ** -22 * 1024 < b < 1.2, b)

    def test_same_as_c(self):
        exe = os.environ.get("MMA_CHECK_TEST")
        if not exe:
            self.skipTest("MMA_CHECK_TEST is not set (bench/mma.test sets it)")
        for s, k in ((1.0, 16), (1024.0, 4096), (3.5e6, 8192), (0.0, 32)):
            out = subprocess.check_output([exe, "--bound", repr(s), str(k)]).decode()
            self.assertAlmostEqual(float(out), mp.float_bound(s, k), delta=abs(float(out)) * 1e-12)
        for side, n in ((64, 4096), (64, 48), (8, 100), (64, 8192)):
            out = subprocess.check_output([exe, "--strata", str(side), str(n)]).decode().split()
            self.assertEqual([int(x) for x in out], mp.strata(side, n))

    def test_strata_spread(self):
        s = mp.strata(64, 4096)
        self.assertEqual((s[0], s[-1]), (0, 4095))
        self.assertEqual(s, sorted(s))
        self.assertTrue(all(i * 64 <= x < (i + 1) * 64 for i, x in enumerate(s)))


class FloatCheck(unittest.TestCase):
    """check_float on a CPU stand-in: 16-term f32 partial sums of bf16-like values."""

    def setUp(self):
        import random
        rnd = random.Random(7)
        self.k = 256
        a = [rnd.randint(-128, 127) / 128.0 for _ in range(self.k)]
        b = [rnd.randint(-128, 127) / 128.0 for _ in range(self.k)]
        self.want = sum(x * y for x, y in zip(a, b))
        self.sum_abs = sum(abs(x * y) for x, y in zip(a, b))
        import struct

        def f32(x):
            return struct.unpack("<f", struct.pack("<f", x))[0]
        acc = 0.0
        for k0 in range(0, self.k, 16):
            part = 0.0
            for x, y in zip(a[k0:k0 + 16], b[k0:k0 + 16]):
                part = f32(part + x * y)
            acc = f32(acc + part)
        self.got = acc

    def test_right(self):
        bad, maxerr, worst = mp.check_float([self.got], [self.want], [self.sum_abs], self.k)
        self.assertEqual(bad, 0)
        self.assertLess(worst, 1e-2)

    def test_off(self):
        bound = mp.float_bound(self.sum_abs, self.k)
        bad, _, worst = mp.check_float([self.want + 0.9 * bound, self.want + 1.1 * bound, float("nan")],
                                       [self.want] * 3, [self.sum_abs] * 3, self.k)
        self.assertEqual(bad, 2, "1.1x the bound and a NaN fail, 0.9x passes")
        self.assertGreater(worst, 1.0)


class Summary(unittest.TestCase):
    S = [(64, 64, 64)]

    def test_all_ok(self):
        recs, ok = mp.summarize(full_run("bf16") + full_run("i8", peer_ms=0.5), ["bf16", "i8"], self.S)
        self.assertTrue(ok)
        self.assertEqual([r["type"] for r in recs], ["bf16", "i8"])
        r = recs[0]
        self.assertEqual(r["checks"], "ok")
        self.assertAlmostEqual(r["ratio"], 0.8)
        self.assertTrue(r["meets_target"])
        self.assertAlmostEqual(r["plugin_vs_driver"], 1.01)
        self.assertEqual(r["peer"], mp.PEERS["bf16"], "the primary peer, not the faster other one")
        self.assertAlmostEqual(r["vyre_tflops"], round(2 * 64 ** 3 / 1e-3 / 1e12, 2))
        self.assertEqual(recs[1]["unit"], "TOP/s")
        self.assertFalse(recs[1]["meets_target"], "0.5 is below the 0.6 target")

    def test_failed_check(self):
        run = full_run()
        run[1]["ok"] = False
        run[1]["mismatches"] = 3
        recs, ok = mp.summarize(run, ["bf16"], self.S)
        self.assertFalse(ok)
        self.assertIn("driver check failed (random data, 3 bad", recs[0]["checks"])

    def test_missing(self):
        run = [r for r in full_run() if not (r["case"] == "vyre_mma" and r["path"] == "plugin")]
        recs, ok = mp.summarize(run, ["bf16"], self.S)
        self.assertFalse(ok)
        self.assertIn("no plugin time", recs[0]["checks"])
        recs, ok = mp.summarize(full_run(), ["bf16", "f16"], self.S)
        self.assertFalse(ok, "f16 has no results at all")
        self.assertIn("no driver-API time", recs[1]["checks"])

    def test_peer_error(self):
        run = [r for r in full_run() if r["case"] != "torch_peer"]
        run.append(rec("torch_peer", peer=mp.PEERS["bf16"], primary=True, error="CUBLAS_STATUS_NOT_SUPPORTED"))
        recs, ok = mp.summarize(run, ["bf16"], self.S)
        self.assertFalse(ok)
        self.assertIn("no peer time (CUBLAS_STATUS_NOT_SUPPORTED)", recs[0]["checks"])
        self.assertNotIn("ratio", recs[0])

    def test_skipped_peers(self):
        run = full_run()[:3] + [{"case": "skipped", "part": "plugin and peers", "reason": "no PyTorch (x)"}]
        recs, ok = mp.summarize(run, ["bf16"], self.S)
        self.assertTrue(ok, recs)
        self.assertEqual(recs[0]["peer"], "skipped: no PyTorch (x)")
        self.assertNotIn("ratio", recs[0])

    def test_exit_status(self):
        with tempfile.NamedTemporaryFile("w", suffix=".jsonl", delete=False) as f:
            f.write("not json\n" + "\n".join(json.dumps(r) for r in full_run()) + "\n")
        try:
            cmd = [sys.executable, "-B", os.path.join(HERE, "mma_peers.py"), "--summarize", f.name,
                   "--types", "bf16", "--sizes", "64x64x64"]
            p = subprocess.run(cmd, stdout=subprocess.PIPE)
            self.assertEqual(p.returncode, 0)
            self.assertEqual(json.loads(p.stdout.decode())["checks"], "ok")
            p = subprocess.run(cmd[:-1] + ["32x32x32"], stdout=subprocess.PIPE)
            self.assertEqual(p.returncode, 1, "no results for that size")
        finally:
            os.unlink(f.name)

    def test_no_torch(self):
        p = subprocess.run([sys.executable, "-B", "-c",
                            "import sys; sys.modules['torch'] = None; sys.path.insert(0, %r); "
                            "import mma_peers; sys.exit(mma_peers.main(['x', '--build', '/nowhere']))" % HERE],
                           stdout=subprocess.PIPE)
        self.assertEqual(p.returncode, 0)
        r = json.loads(p.stdout.decode())
        self.assertEqual(r["case"], "skipped")
        self.assertIn("no PyTorch", r["reason"])


class PluginPath(unittest.TestCase):
    """The plugin calls of the GPU run (compile, upload, dispatch_resident,
    the timing) on the reference backend with bench/mma_simple.vyre and
    NumPy-backed resident buffers instead of imported PyTorch tensors."""

    def test_reference(self):
        build = os.environ.get("VYRE_BUILD_DIR")
        try:
            import numpy as np
        except ImportError:
            self.skipTest("no NumPy")
        if not build:
            self.skipTest("VYRE_BUILD_DIR is not set (bench/mma.test sets it)")
        sys.path.insert(0, os.path.join(build, "python"))
        import vyre
        import struct
        path = os.path.join(HERE, "mma_simple.vyre")
        bn, bm = mp.program_tile(path)
        m, n, k = 32, 48, 32
        a = np.array([(i % 7) - 3 for i in range(m * k)], dtype=np.float32)
        b = np.array([(i % 5) - 2 for i in range(k * n)], dtype=np.float32)
        with vyre.open("reference") as be:
            pipe = be.compile(vyre.load(path), ulp=1)
            bufs = (be.upload(struct.pack("<3I", m, n, k)),
                    be.upload((a.view(np.uint32) >> 16).astype(np.uint16)),
                    be.upload((b.view(np.uint32) >> 16).astype(np.uint16)),
                    be.upload(np.full(m * n, np.nan, dtype=np.float32)))
            med, mn = mp.plugin_time(be, pipe, bufs, (n // bn, m // bm, 1), 1, 3)
            got = bufs[3].download()
            for r in bufs:
                r.close()
            pipe.close()
        self.assertTrue(0 < mn <= med, (mn, med))
        want = (a.reshape(m, k).astype(np.float64) @ b.reshape(k, n)).reshape(-1)
        self.assertTrue(np.array_equal(got, want), "C = A B exactly on the grid from the header")


class SampledChecks(unittest.TestCase):
    """The GPU run's sampled checks (sampled_float_check, sampled_int8_check)
    on a NumPy stand-in for the few torch calls they make."""

    def setUp(self):
        try:
            import numpy as np
        except ImportError:
            self.skipTest("no NumPy")
        self.np = np

        class T(object):  # the tensor methods the checks call
            def __init__(self, a):
                self.a = np.asarray(a)
                self.device = "cpu"

            def _w(self, o):
                return o.a if isinstance(o, T) else o

            def index_select(self, dim, idx):
                return T(np.take(self.a, idx.a, axis=dim))

            def double(self):
                return T(self.a.astype(np.float64))

            def long(self):
                return T(self.a.astype(np.int64))

            def int(self):
                return T(self.a.astype(np.int32))

            def abs(self):
                return T(np.abs(self.a))

            def unsqueeze(self, d):
                return T(np.expand_dims(self.a, d))

            def sum(self, *dim):
                return T(self.a.sum(*dim))

            def max(self):
                return T(self.a.max())

            def item(self):
                return self.a.item()

            def nan_to_num(self, nan):
                return T(np.nan_to_num(self.a, nan=nan))

            def __matmul__(self, o):
                return T(self.a @ o.a)

            def __invert__(self):
                return T(~self.a)

        for name, op in (("add", "__add__"), ("radd", "__radd__"), ("sub", "__sub__"), ("mul", "__mul__"),
                         ("rmul", "__rmul__"), ("truediv", "__truediv__"), ("mod", "__mod__"), ("le", "__le__"),
                         ("ne", "__ne__")):
            setattr(T, op, (lambda op: lambda self, o: T(getattr(self.a, op)(self._w(o))))(op))

        class FakeTorch(object):
            @staticmethod
            def tensor(v, device=None):
                return T(np.array(v))
        self.T, self.torch = T, FakeTorch

    def test_float(self):
        np, T = self.np, self.T
        m, n, k = 72, 72, 64
        rng = np.random.RandomState(3)
        A = (rng.randint(-128, 128, (m, k)) / 128.0).astype(np.float32)
        B = (rng.randint(-128, 128, (k, n)) / 128.0).astype(np.float32)
        C = (A @ B).astype(np.float32)  # f32 sums: inside the bound
        sampled, bad, maxerr, worst = mp.sampled_float_check(self.torch, T(A), T(B), T(C), m, n, k)
        self.assertEqual((sampled, bad), (4096, 0))
        self.assertLess(worst, 1e-2)
        C[m - 1, n - 1] += 1.0
        C[0, 0] = np.nan
        sampled, bad, _, worst = mp.sampled_float_check(self.torch, T(A), T(B), T(C), m, n, k)
        self.assertGreaterEqual(bad, 2, "the last element, off, and a NaN are found")
        self.assertEqual(worst, float("inf"))
        _, bad, _, _ = mp.sampled_float_check(self.torch, T(A), T(B), T((A @ B).T.copy()), m, n, k)
        self.assertGreater(bad, 2048, "a transposed C fails")

    def test_int8(self):
        np, T = self.np, self.T
        m, n, k = 40, 48, 4096
        A = np.full((m, k), -128, dtype=np.int8)
        Bnk = np.full((n, k), -128, dtype=np.int8)
        Bnk[:, 0] = 127
        exact = (A.astype(np.int64) @ Bnk.T.astype(np.int64))
        C = ((exact + 2 ** 31) % 2 ** 32 - 2 ** 31).astype(np.int32)
        self.assertEqual(mp.sampled_int8_check(self.torch, T(A), T(Bnk), T(C), m, n), (4096, 0))
        self.assertEqual(mp.sampled_int8_check(self.torch, T(A), T(Bnk), T(C + 1), m, n), (4096, 4096))


class Report(unittest.TestCase):
    """bench/report.py's tensor-core table from the summary lines."""

    def test_table(self):
        import report
        recs, _ = mp.summarize(full_run("bf16") + full_run("i8", peer_ms=0.5), ["bf16", "i8"], [(64, 64, 64)])
        lines = report.mma_table(recs + [{"case": "vyre_mma"}])
        self.assertEqual(len([x for x in lines if x.startswith("| bf16") or x.startswith("| i8")]), 2)
        self.assertIn("0.80x (target 0.6: met)", lines[2])
        self.assertIn("0.50x (target 0.6: not met)", lines[3])
        self.assertIn("TOP/s", lines[3])
        self.assertEqual(report.mma_table([{"case": "vyre_mma"}]), [], "no summary, no table")
        skipped, _ = mp.summarize(full_run()[:3] + [{"case": "skipped", "reason": "no PyTorch"}], ["bf16"],
                                  [(64, 64, 64)])
        self.assertIn("| skipped: no PyTorch | — ms", report.mma_table(skipped)[2])


if __name__ == "__main__":
    unittest.main(verbosity=1)
