#!/usr/bin/env python3
"""report.py -- put one bench/run.sh result directory into BENCHMARKS.md.

usage: report.py RESULTS_DIR [BENCHMARKS.md]
RESULTS_DIR is what bench/run.sh wrote, kept under bench/results/.  The
section between the markers below is replaced (appended when absent) with
the machine, the ratio table, the workloads against their CUDA peers,
rooflines and host-mode bounds, every workload row, the tensor-core
matmuls against cuBLAS (mma.jsonl, bench/mma.sh), and the plot.
"""
import json
import math
import os
import sys

BEGIN = "<!-- bench/report.py: begin -->"
END = "<!-- bench/report.py: end -->"


def jsonl(path):
    out = []
    if os.path.exists(path):
        with open(path) as f:
            for line in f:
                line = line.strip()
                if line.startswith("{"):
                    try:
                        out.append(json.loads(line))
                    except ValueError:
                        pass
    return out


def workloads_table(recs):
    rows = [r for r in recs if "workload" in r]
    if not rows:
        return []
    lines = ["| workload | backend | mode | p50 | p95 | C baseline p50 | speedup | ok |",
             "|---|---|---|---|---|---|---|---|"]
    for r in rows:
        def us(k):
            v = r.get(k)
            return "%.1f us" % v if isinstance(v, (int, float)) else "—"
        sp = r.get("speedup")
        lines.append("| %s | %s | %s | %s | %s | %s | %s | %s |" % (
            r.get("workload"), r.get("backend", "—"), r.get("mode", "—"), us("p50_us"), us("p95_us"),
            us("baseline_p50_us"), "%.3gx" % sp if isinstance(sp, (int, float)) else "—",
            "yes" if r.get("ok") else "NO"))
    return lines


def case(recs, name):
    for r in recs:
        if r.get("case") == name and isinstance(r.get("gbps"), (int, float)):
            return r
    return None


def pinned(res):
    """Pinned host-to-device and device-to-host GB/s and their source, or None."""
    fl = jsonl(os.path.join(res, "floor.jsonl"))
    for tag in ("1g", "256m"):
        up, down = case(fl, "h2d_pinned_" + tag), case(fl, "d2h_pinned_" + tag)
        if up and down:
            return up["gbps"], down["gbps"], "floor.jsonl h2d/d2h_pinned_" + tag
    vy = jsonl(os.path.join(res, "vyre.jsonl"))
    up, down = case(vy, "resident_upload_1g"), case(vy, "resident_download_1g")
    if up and down:
        return up["gbps"], down["gbps"], "vyre.jsonl resident_upload/download_1g"
    return None


def roofline_table(res, recs):
    """vyre resident, the CUDA peer, the roofline and the host-mode bound, one row a workload."""
    by = {}
    for r in recs:
        if "workload" in r and r.get("mode") in ("resident", "peer", "host", "baseline"):
            by.setdefault(r["workload"], {})[r["mode"]] = r
    if not by:
        return []
    out = []
    floor_us, floor_src = None, ""
    for r in recs:
        if r.get("peer") == "cuda":
            floor_us, floor_src = r.get("launch_floor_us"), "the peer's empty kernel"
            out.append("CUDA peer on %s: launch + wait %.2f us, device copy %.0f GB/s "
                       "(cudaMemcpy) / %.0f GB/s (copy kernel)." % (
                           r.get("device"), r.get("launch_floor_us", 0), r.get("memcpy_gbps", 0),
                           r.get("copy_kernel_gbps", 0)))
        elif r.get("peer") == "skipped":
            out.append("CUDA peer: skipped (%s)." % r.get("reason"))
    if floor_us is None:
        f = [r for r in jsonl(os.path.join(res, "floor.jsonl")) if r.get("case") == "dispatch_resident_1k"]
        if f:
            floor_us, floor_src = f[0]["median_us"], "floor.jsonl dispatch_resident_1k"
    pin = pinned(res)
    out += ["", "| workload | vyre resident p50 | peer p50 | roofline | vyre/peer | vyre/roofline | "
            "peer/roofline | host p50 | host bound | host/bound | ok |",
            "|---|---|---|---|---|---|---|---|---|---|---|"]

    def us(v):
        return "%.1f us" % v if isinstance(v, (int, float)) and v > 0 else "—"

    def x(a, b):
        ok = isinstance(a, (int, float)) and isinstance(b, (int, float)) and a > 0 and b > 0
        return "%.2fx" % (a / b) if ok else "—"

    logs = []
    for name, m in by.items():
        res_, peer, host = m.get("resident", {}), m.get("peer", {}), m.get("host", {})
        v, p, roof, h = res_.get("p50_us"), peer.get("p50_us"), peer.get("roofline_us"), host.get("p50_us")
        bound = None
        if pin and floor_us is not None and "input_bytes" in host and "output_bytes" in host:
            bound = host["input_bytes"] / (pin[0] * 1e3) + host["output_bytes"] / (pin[1] * 1e3) + floor_us
        oks = [r.get("ok") for r in (res_, peer, host) if r]
        if isinstance(v, (int, float)) and isinstance(p, (int, float)) and v > 0 and p > 0 \
                and res_.get("ok") and peer.get("ok"):
            logs.append(math.log(v / p))
        out.append("| %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s |" % (
            name, us(v), us(p), us(roof), x(v, p), x(v, roof), x(p, roof), us(h), us(bound),
            x(h, bound), "yes" if oks and all(oks) else "NO"))
    out.append("")
    if logs:
        out.append("Geometric mean of vyre resident p50 / peer p50 over %d workloads: %.3fx." % (
            len(logs), math.exp(sum(logs) / len(logs))))
    out.append("Roofline: the bytes the workload must move (bench/workloads/README.md, "
               "\"Roofline\") over the larger device copy bandwidth, plus the launch + wait floor.")
    if pin and floor_us is not None:
        out.append("Host bound: input bytes at %.1f GB/s + output bytes at %.1f GB/s (pinned, %s) "
                   "+ %.2f us (%s)." % (pin[0], pin[1], pin[2], floor_us, floor_src))
    else:
        out.append("Host bound: not computed (no pinned bandwidth in floor.jsonl or vyre.jsonl, "
                   "or no launch floor).")
    return out + [""]


def mma_table(recs):
    """The tensor-core matmuls: one row per "mma_summary" line of bench/mma.sh."""
    rows = [r for r in recs if r.get("case") == "mma_summary"]
    if not rows:
        return []

    def num(v, fmt):
        return fmt % v if isinstance(v, (int, float)) else "—"
    out = ["| type | M × N × K | vyre (driver API) | plugin (resident) | peer | peer time | vyre / peer | "
           "checks |", "|---|---|---|---|---|---|---|---|"]
    for r in rows:
        unit = r.get("unit", "TFLOP/s")
        ratio = r.get("ratio")
        out.append("| %s | %s × %s × %s | %s ms, %s %s | %s ms (%s of the driver's) | %s | %s ms, %s %s | %s%s | %s |" % (
            r.get("type"), r.get("M"), r.get("N"), r.get("K"), num(r.get("vyre_ms"), "%.3f"),
            num(r.get("vyre_tflops"), "%.1f"), unit, num(r.get("plugin_ms"), "%.3f"),
            num(r.get("plugin_vs_driver"), "%.3fx"), r.get("peer", "—"), num(r.get("peer_ms"), "%.3f"),
            num(r.get("peer_tflops"), "%.1f"), unit, num(ratio, "%.2fx"),
            "" if not isinstance(ratio, (int, float)) else (" (target 0.6: %s)" % (
                "met" if r.get("meets_target") else "not met")), r.get("checks", "—")))
    return out + ["", "vyre / peer is the throughput ratio (peer time / vyre time); the checks are "
                  "bench/mma.sh's (BENCHMARKS.md, \"Tensor cores\").", ""]


def main():
    if len(sys.argv) < 2:
        sys.exit(__doc__)
    res = sys.argv[1].rstrip("/")
    doc = sys.argv[2] if len(sys.argv) > 2 else os.path.join(os.path.dirname(__file__), "..",
                                                               "BENCHMARKS.md")
    rel = os.path.relpath(res, os.path.dirname(os.path.abspath(doc)))
    machine = open(os.path.join(res, "machine.txt")).read().strip().splitlines()
    table = open(os.path.join(res, "table.md")).read().strip()
    sec = [BEGIN, "## The suite: %s" % (machine[1] if len(machine) > 1 else "GPU"), "",
           "`bench/run.sh` on %s; raw results in [%s](%s)." % (machine[0], rel, rel), "",
           "Machine: " + "; ".join(machine[1:]) + ".", "",
           "Ratios: peer time / vyre time for latency, vyre GB/s / peer GB/s for",
           "bandwidth (> 1: vyre faster). `floor` is bench/floor.c: bare driver calls",
           "and a hand-written kernel.", "", table, ""]
    if os.path.exists(os.path.join(res, "ratios.svg")):
        sec += ["![vyre's ratio to each peer](%s/ratios.svg)" % rel, ""]
    wl_recs = jsonl(os.path.join(res, "workloads.jsonl"))
    roof = roofline_table(res, wl_recs)
    if roof:
        sec += ["Workloads against their CUDA peers and rooflines (bench/workloads/README.md):", ""] + roof
    wl = workloads_table(wl_recs +
                         [r for r in jsonl(os.path.join(res, "workloads_ref.jsonl"))
                          if r.get("mode") != "baseline"])
    if wl:
        sec += ["Workloads (bench/workloads/README.md):", ""] + wl + [""]
    mma = mma_table(jsonl(os.path.join(res, "mma.jsonl")))
    if mma:
        sec += ["Tensor cores (bench/mma.sh):", ""] + mma
    sec.append(END)
    text = open(doc).read()
    if BEGIN in text and END in text:
        a, b = text.index(BEGIN), text.index(END) + len(END)
        text = text[:a] + "\n".join(sec) + text[b:]
    else:
        text = text.rstrip("\n") + "\n\n" + "\n".join(sec) + "\n"
    with open(doc, "w") as f:
        f.write(text)


if __name__ == "__main__":
    main()
