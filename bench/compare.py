#!/usr/bin/env python3
"""compare.py -- a Markdown ratio table from `vyre bench --jsonl` and bench/peers.py lines.

usage: compare.py FILE...   (JSON lines: {"peer", "case", "median_us", "gbps"?})
Latency cases: lower is better, ratio = peer time / vyre time (> 1: vyre faster).
Bandwidth cases: ratio = vyre GB/s / peer GB/s (> 1: vyre faster).
"""
import json
import sys


def main():
    rows = {}
    peers = []
    for path in sys.argv[1:]:
        with open(path) as f:
            for line in f:
                line = line.strip()
                if not line.startswith("{"):
                    continue
                rec = json.loads(line)
                if "case" not in rec:
                    continue
                peer = rec["peer"]
                if peer not in peers:
                    peers.append(peer)
                rows.setdefault(rec["case"], {})[peer] = rec
    ours = [p for p in peers if p.startswith("vyre-")]
    others = [p for p in peers if not p.startswith("vyre-")]
    if not ours:
        sys.exit("compare.py: no vyre-* results in the input")
    us = ours[0]
    head = ["case", us] + others + ["%s vs %s" % (us, o) for o in others]
    print("| " + " | ".join(head) + " |")
    print("|" + "---|" * len(head))

    def show(rec):
        if rec is None:
            return "—"
        if "gbps" in rec:
            return "%.1f GB/s (%.1f us)" % (rec["gbps"], rec["median_us"])
        return "%.2f us" % rec["median_us"]

    for case, by in rows.items():
        mine = by.get(us)
        cells = [case, show(mine)] + [show(by.get(o)) for o in others]
        for o in others:
            theirs = by.get(o)
            if not mine or not theirs:
                cells.append("—")
            elif "gbps" in mine and "gbps" in theirs:
                cells.append("%.2fx" % (mine["gbps"] / theirs["gbps"]))
            else:
                cells.append("%.2fx" % (theirs["median_us"] / mine["median_us"]))
        print("| " + " | ".join(cells) + " |")


if __name__ == "__main__":
    main()
