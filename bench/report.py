#!/usr/bin/env python3
"""report.py -- put one bench/run.sh result directory into BENCHMARKS.md.

usage: report.py RESULTS_DIR [BENCHMARKS.md]
RESULTS_DIR is what bench/run.sh wrote, kept under bench/results/.  The
section between the markers below is replaced (appended when absent) with
the machine, the ratio table, the workloads table and the plot.
"""
import json
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
    wl = workloads_table(jsonl(os.path.join(res, "workloads.jsonl")) +
                         [r for r in jsonl(os.path.join(res, "workloads_ref.jsonl"))
                          if r.get("mode") != "baseline"])
    if wl:
        sec += ["Workloads (bench/workloads/README.md):", ""] + wl + [""]
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
