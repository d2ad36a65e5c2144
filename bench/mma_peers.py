#!/usr/bin/env python3
"""mma_peers.py -- the plugin run and the peers of bench/mma.sh, and its summary.

usage:
  mma_peers.py --build BUILD [--programs DIR] [--types "bf16 f16 i8"]
               [--sizes "MxNxK ..."] [--reps N]
      For each size and type: examples/matmul_mma_TYPE.vyre through the
      plugin (the vyre Python package of BUILD: pipeline_create, then
      dispatch_resident on resident buffers imported zero copy from PyTorch
      tensors, device time from the plugin's timing), its C checked (int8:
      every element equal to torch._int_mm's; bf16/f16: 4096 sampled
      elements against a float64 dot product, within the MMA bound of
      docs/semantics.md), then the peer on the same tensors:
      torch.matmul(A, B) (bf16 or f16 in and out; B K x N row-major) and
      torch._int_mm(A, B) (int8 in, int32 out), compared with B as the
      N x K tensor's transposed view (the bytes vyre reads, and cuBLAS's
      fast layout) and also timed with B a K x N row-major tensor (a
      slower cuBLAS path: 6x on an H200), reported but not compared.  CUDA events, 3 warm-up calls, the median of REPS.  One JSON
      line per result.  Without PyTorch or a GPU it prints one "skipped"
      line saying why and exits 0.  Exit 1 when a check failed.
  mma_peers.py --summarize FILE [--types ...] [--sizes ...]
      Reads bench/mma.sh's JSON lines and prints one "mma_summary" line per
      type and size: vyre's time (driver API) and TFLOP/s (TOP/s for int8),
      the plugin's time and its ratio to the driver's, the peer's, the
      throughput ratio vyre / peer against the 0.6 target, and whether every
      check passed.  Exit 1 when a check failed or a result is missing
      (plugin and peer results may be missing when a "skipped" line says
      why).
"""
import argparse
import json
import math
import os
import re
import struct
import sys

TYPES = ("bf16", "f16", "i8")
TARGET = 0.6
SAMPLES = 4096
PEERS = {"bf16": "torch.matmul bf16 (bf16 out)", "f16": "torch.matmul f16 (f16 out)",
         "i8": "torch._int_mm int8 (int32 out, B the transposed view of vyre's N x K B)"}


def parse_size(s):
    """'MxNxK' -> (M, N, K), positive integers; ValueError otherwise."""
    parts = s.split("x")
    if len(parts) != 3 or not all(p.isdigit() and int(p) > 0 for p in parts):
        raise ValueError("%r is not MxNxK (three positive integers)" % s)
    return tuple(int(p) for p in parts)


def parse_sizes(text):
    return [parse_size(s) for s in text.replace(",", " ").split()]


def parse_types(text):
    ts = text.replace(",", " ").split()
    bad = [t for t in ts if t not in TYPES]
    if bad or not ts:
        raise ValueError("types %r: pick from %s" % (text, " ".join(TYPES)))
    return ts


def program_tile(path):
    """(BN, BM) from the program header's "--grid N/BN,M/BM"."""
    with open(path) as f:
        m = re.search(r"--grid N/(\d+),M/(\d+)", f.read())
    if not m:
        raise ValueError("%s: its header does not say its grid as \"--grid N/BN,M/BM\"" % path)
    return int(m.group(1)), int(m.group(2))


def float_bound(sum_abs, k):
    """bench/mma_check.c's mma_float_bound: the MMA bound of docs/semantics.md
    carried through K/16 chained mma, plus the reference's rounding per step,
    for an element whose sum of |A[i][k] * B[k][j]| is sum_abs (a float or a
    tensor)."""
    steps = k // 16
    b = sum_abs * 0
    for _ in range(steps):
        b = b + 18 * (2.0 ** -22 * (sum_abs + b) + 2.0 ** -126)
    return (b + steps * 2.0 ** -24 * (sum_abs + b)) * (1 + 2.0 ** -10)


def strata(side, n):
    """bench/mma_check.c's sampled rows (or columns): side strata over [0, n),
    the first and last giving 0 and n - 1."""
    out = []
    for i in range(side):
        if i == 0:
            out.append(0)
        elif i == side - 1:
            out.append(n - 1)
        else:
            lo, hi = i * n // side, (i + 1) * n // side
            h = ((i * 0x9E3779B9) & 0xFFFFFFFF) >> 7
            out.append(lo + h % (hi - lo) if hi > lo else lo)
    return out


def finite(v):
    """v, or None (JSON null) when it is NaN or infinite."""
    return v if math.isfinite(v) else None


def check_float(got, want, sum_abs, k):
    """(bad, max_abs_err, worst_ratio) of sampled values (lists or tensors of
    float): bad counts elements off the exact value by more than the bound
    (a NaN is bad)."""
    bad, worst, maxerr = 0, 0.0, 0.0
    for g, w, s in zip(got, want, sum_abs):
        g, w, s = float(g), float(w), float(s)
        err = abs(g - w)
        bound = float_bound(s, k)
        if not err <= bound:
            bad += 1
        if err != err:
            maxerr = err
        elif maxerr == maxerr:
            maxerr = max(maxerr, err)
        if bound > 0 and err / bound > worst:
            worst = err / bound
    return bad, maxerr, worst


# ---------------------------------------------------------------------------
# The summary (no GPU needed)
# ---------------------------------------------------------------------------


def read_jsonl(path):
    recs = []
    with open(path) as f:
        for line in f:
            line = line.strip()
            if line.startswith("{"):
                try:
                    recs.append(json.loads(line))
                except ValueError:
                    pass
    return recs


def summarize(recs, types, sizes):
    """(summary records, ok): one per type and size, in that order."""
    skipped = [r for r in recs if r.get("case") == "skipped"]
    out, ok = [], True
    for (m, n, k) in sizes:
        for t in types:
            def pick(case, **kw):
                return [r for r in recs if r.get("case") == case and r.get("type") == t and
                        (r.get("M"), r.get("N"), r.get("K")) == (m, n, k) and
                        all(r.get(a) == b for a, b in kw.items())]
            problems = []
            drv = pick("vyre_mma", path="driver")
            plg = pick("vyre_mma", path="plugin")
            peers = pick("torch_peer", primary=True)
            peer = [r for r in peers if "median_ms" in r]
            checks = pick("vyre_mma_check")
            if not drv:
                problems.append("no driver-API time")
            if not [c for c in checks if c.get("path") == "driver"]:
                problems.append("no driver-API check")
            if not skipped:
                if not plg:
                    problems.append("no plugin time")
                if not [c for c in checks if c.get("path") == "plugin"]:
                    problems.append("no plugin check")
                if not peer:
                    problems.append("no peer time" + "".join(" (%s)" % r["error"] for r in peers if "error" in r))
            for c in checks:
                if c.get("ok") is not True:
                    problems.append("%s check failed (%s data, %s bad of %s)" % (
                        c.get("path"), c.get("data", "?"), c.get("mismatches"), c.get("sampled")))
            rec = {"case": "mma_summary", "type": t, "M": m, "N": n, "K": k,
                   "unit": "TOP/s" if t == "i8" else "TFLOP/s"}
            if drv:
                rec["vyre_ms"] = drv[0]["median_ms"]
                rec["vyre_tflops"] = round(2.0 * m * n * k / (drv[0]["median_ms"] * 1e-3) / 1e12, 2)
            if plg:
                rec["plugin_ms"] = plg[0]["median_ms"]
                if drv:
                    rec["plugin_vs_driver"] = round(plg[0]["median_ms"] / drv[0]["median_ms"], 3)
            if peer:
                rec["peer"] = peer[0].get("peer")
                rec["peer_ms"] = peer[0]["median_ms"]
                rec["peer_tflops"] = round(2.0 * m * n * k / (peer[0]["median_ms"] * 1e-3) / 1e12, 2)
                if drv:
                    ratio = peer[0]["median_ms"] / drv[0]["median_ms"]
                    rec["ratio"] = round(ratio, 3)
                    rec["target"] = TARGET
                    rec["meets_target"] = ratio >= TARGET
            elif skipped:
                rec["peer"] = "skipped: " + skipped[0].get("reason", "?")
            rec["checks"] = "ok" if not problems else "FAILED: " + "; ".join(problems)
            ok = ok and not problems
            out.append(rec)
    return out, ok


# ---------------------------------------------------------------------------
# On the GPU
# ---------------------------------------------------------------------------


def timeit(torch, fn, reps):
    for _ in range(3):
        fn()
    torch.cuda.synchronize()
    ts = []
    for _ in range(reps):
        a, b = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        a.record()
        fn()
        b.record()
        b.synchronize()
        ts.append(a.elapsed_time(b))
    ts.sort()
    return ts[len(ts) // 2], ts[0]


def plugin_time(be, pipe, bufs, grid, ulp, reps):
    """(median, min) in ms of the device time the plugin reports for
    dispatch_resident(pipe, *bufs) on `grid`, after 3 untimed calls."""
    for _ in range(3):
        be.dispatch_resident(pipe, *bufs, grid=grid, ulp=ulp)
    ts = []
    for _ in range(reps):
        tm = be.dispatch_resident(pipe, *bufs, grid=grid, ulp=ulp, timing=True)
        if tm.device_ns is None:
            raise RuntimeError("the plugin's timing has no device time (%r)" % (tm,))
        ts.append(tm.device_ns / 1e6)
    ts.sort()
    return ts[len(ts) // 2], ts[0]


def sampled_int8_check(torch, A, Bnk, C, m, n):
    """(sampled, bad): bench/mma_check.c's samples of an int8 C (B N x K)
    against exact int64 dot products, wrapped to int32."""
    side = int(math.ceil(math.sqrt(SAMPLES)))
    rows = torch.tensor(strata(side, m), device=A.device)
    cols = torch.tensor(strata(side, n), device=A.device)
    a, b = A.index_select(0, rows).long(), Bnk.index_select(0, cols).long()
    want = (a.unsqueeze(1) * b.unsqueeze(0)).sum(2)            # side x side, exact in int64
    want = ((want + 2 ** 31) % 2 ** 32 - 2 ** 31).int()
    got = C.index_select(0, rows).index_select(1, cols)
    return side * side, int((got != want).sum().item())


def sampled_float_check(torch, A, B, C, m, n, k):
    """(sampled, bad, max_abs_err, worst_ratio): bench/mma_check.c's samples,
    each against a float64 dot product on the GPU (products of bf16/f16 are
    exact in float64)."""
    side = int(math.ceil(math.sqrt(SAMPLES)))
    rows = torch.tensor(strata(side, m), device=A.device)
    cols = torch.tensor(strata(side, n), device=A.device)
    a = A.index_select(0, rows).double()            # side x K
    b = B.index_select(1, cols).double()            # K x side
    want = a @ b                                    # side x side
    sum_abs = a.abs() @ b.abs()
    got = C.index_select(0, rows).index_select(1, cols).double()
    bound = float_bound(sum_abs, k)
    err = (got - want).abs()
    bad = int((~(err <= bound)).sum().item())
    worst = float((err / bound).nan_to_num(nan=float("inf")).max().item())
    return side * side, bad, float(err.max().item()), worst


def run_one(torch, vyre, be, t, path, size, reps):
    """The plugin run, its check and the peers for one type and size; True when the check passed."""
    m, n, k = size
    bn, bm = program_tile(path)
    out = []
    gen = torch.Generator(device="cuda")
    gen.manual_seed(20261128)
    dev = "cuda"
    if t == "i8":
        A = torch.randint(-128, 128, (m, k), dtype=torch.int8, device=dev, generator=gen)
        Bv = torch.randint(-128, 128, (n, k), dtype=torch.int8, device=dev, generator=gen)  # N x K: vyre's B
        Bp = Bv.t().contiguous()                                                           # K x N: the peer's
        C = torch.full((m, n), -1, dtype=torch.int32, device=dev)
        ulp = None
    else:
        dt = torch.bfloat16 if t == "bf16" else torch.float16
        A = (torch.rand((m, k), device=dev, generator=gen) * 2 - 1).to(dt)
        Bv = Bp = (torch.rand((k, n), device=dev, generator=gen) * 2 - 1).to(dt)
        C = torch.full((m, n), float("nan"), dtype=torch.float32, device=dev)
        ulp = 1  # float MMA is refused under strict (ulp 0)
    torch.cuda.synchronize()
    pipe = be.compile(vyre.load(path), ulp=ulp)
    dims = be.upload(struct.pack("<3I", m, n, k))
    bufs = (dims, be.import_device(A), be.import_device(Bv), be.import_device(C))
    grid = (n // bn, m // bm, 1)
    be.dispatch_resident(pipe, *bufs, grid=grid, ulp=ulp)
    base = {"type": t, "M": m, "N": n, "K": k}
    if t == "i8":
        try:
            diff = int((C != torch._int_mm(A, Bp)).sum().item())
            sampled, rule = m * n, "bit-exact, every element against torch._int_mm"
        except (AttributeError, RuntimeError) as e:  # no _int_mm: exact int64 dot products of the samples
            sys.stderr.write("mma_peers.py: torch._int_mm failed (%s); checking samples\n" % e)
            sampled, diff = sampled_int8_check(torch, A, Bv, C, m, n)
            rule = "bit-exact, sampled elements against int64 dot products"
        chk = dict(base, case="vyre_mma_check", path="plugin", data="random", sampled=sampled, mismatches=diff,
                   rule=rule, ok=diff == 0)
    else:
        sampled, bad, maxerr, worst = sampled_float_check(torch, A, Bv, C, m, n, k)
        chk = dict(base, case="vyre_mma_check", path="plugin", data="random", sampled=sampled, mismatches=bad,
                   max_abs_err=finite(maxerr), worst_err_over_bound=finite(worst),
                   rule="mma bound (docs/semantics.md)",
                   ok=bad == 0)
    out.append(chk)
    med, mn = plugin_time(be, pipe, bufs, grid, ulp, reps)
    out.append(dict(base, case="vyre_mma", path="plugin", program=path, grid=list(grid[:2]), reps=reps,
                    median_ms=round(med, 4), min_ms=round(mn, 4),
                    tflops=round(2.0 * m * n * k / (med * 1e-3) / 1e12, 2)))
    for r in bufs:
        r.close()
    pipe.close()
    if t == "i8":
        peers = [(PEERS[t], True, lambda: torch._int_mm(A, Bv.t())),
                 ("torch._int_mm int8 (int32 out, B K x N row-major)", False,
                  lambda: torch._int_mm(A, Bp))]
    else:
        peers = [(PEERS[t], True, lambda: torch.matmul(A, Bp))]
    for name, primary, fn in peers:
        try:
            med, mn = timeit(torch, fn, reps)
        except RuntimeError as e:
            out.append(dict(base, case="torch_peer", peer=name, primary=primary, error=str(e).splitlines()[0]))
            continue
        out.append(dict(base, case="torch_peer", peer=name, primary=primary, reps=reps, median_ms=round(med, 4),
                        min_ms=round(mn, 4), tflops=round(2.0 * m * n * k / (med * 1e-3) / 1e12, 2),
                        torch=torch.__version__))
    for r in out:
        print(json.dumps(r))
    sys.stdout.flush()
    if not chk["ok"]:
        sys.stderr.write("mma_peers.py: %s %dx%dx%d through the plugin: %d of %d checked elements wrong\n" % (
            t, m, n, k, chk["mismatches"], chk["sampled"]))
    return chk["ok"]


def gpu(a):
    try:
        import torch
    except ImportError as e:
        print(json.dumps({"case": "skipped", "part": "plugin and peers", "reason": "no PyTorch (%s)" % e}))
        return 0
    if not torch.cuda.is_available():
        print(json.dumps({"case": "skipped", "part": "plugin and peers",
                          "reason": "PyTorch %s sees no CUDA device" % torch.__version__}))
        return 0
    sys.path.insert(0, os.path.join(os.path.abspath(a.build), "python"))
    import vyre
    ok = True
    with vyre.open("cuda") as be:
        for size in a.sizes:
            for t in a.types:
                path = os.path.join(a.programs, "matmul_mma_%s.vyre" % t)
                try:
                    ok = run_one(torch, vyre, be, t, path, size, a.reps) and ok
                except Exception as e:  # report it, go on with the next case; the exit status says it
                    sys.stderr.write("mma_peers.py: %s %s through the plugin: %s: %s\n" % (
                        t, "x".join(map(str, size)), type(e).__name__, e))
                    ok = False
    return 0 if ok else 1


def main(argv):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--build", help="the build directory (its python/ holds the vyre package)")
    ap.add_argument("--programs", default=os.path.join(os.path.dirname(os.path.abspath(__file__)), "..",
                                                       "examples"))
    ap.add_argument("--types", default="bf16 f16 i8")
    ap.add_argument("--sizes", default="4096x4096x4096")
    ap.add_argument("--reps", type=int, default=30)
    ap.add_argument("--summarize", metavar="FILE")
    a = ap.parse_args(argv[1:])
    try:
        a.types, a.sizes = parse_types(a.types), parse_sizes(a.sizes)
    except ValueError as e:
        ap.error(str(e))
    if a.summarize:
        recs, ok = summarize(read_jsonl(a.summarize), a.types, a.sizes)
        for r in recs:
            print(json.dumps(r))
        return 0 if ok else 1
    if not a.build:
        ap.error("--build BUILD or --summarize FILE")
    if a.reps < 1:
        ap.error("--reps must be at least 1")
    return gpu(a)


if __name__ == "__main__":
    sys.exit(main(sys.argv))
