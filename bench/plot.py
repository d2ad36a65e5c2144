#!/usr/bin/env python3
"""plot.py -- an SVG bar chart of vyre's ratio to each peer, case by case.

usage: plot.py OUT.svg FILE...   (the JSON lines compare.py reads)
One group of bars per case: vyre's ratio to each peer (> 1: vyre faster),
on a log scale, with the line at 1.  Written by hand: no plotting library
is needed on the GPU machine.
"""
import html
import json
import math
import sys

COLORS = ["#4c72b0", "#dd8452", "#55a868", "#c44e52", "#8172b3", "#937860"]


def load(paths):
    rows, peers = {}, []
    for path in paths:
        with open(path) as f:
            for line in f:
                line = line.strip()
                if not line.startswith("{"):
                    continue
                rec = json.loads(line)
                if "case" not in rec or "peer" not in rec or "median_us" not in rec:
                    continue
                if rec["peer"] not in peers:
                    peers.append(rec["peer"])
                rows.setdefault(rec["case"], {})[rec["peer"]] = rec
    return rows, peers


def ratio(mine, theirs):
    if "gbps" in mine and "gbps" in theirs and theirs["gbps"] > 0:
        return mine["gbps"] / theirs["gbps"]
    if mine["median_us"] > 0:
        return theirs["median_us"] / mine["median_us"]
    return None


def main():
    if len(sys.argv) < 3:
        sys.exit(__doc__)
    rows, peers = load(sys.argv[2:])
    ours = [p for p in peers if p.startswith("vyre-")]
    if not ours:
        sys.exit("plot.py: no vyre-* results")
    us, others = ours[0], [p for p in peers if not p.startswith("vyre-")]
    data = []
    for case, by in rows.items():
        if us not in by:
            continue
        bars = [(o, ratio(by[us], by[o])) for o in others if o in by]
        bars = [(o, r) for o, r in bars if r]
        if bars:
            data.append((case, bars))
    if not data:
        sys.exit("plot.py: no case has both vyre and a peer")
    lo = min(min(r for _, r in b) for _, b in data)
    hi = max(max(r for _, r in b) for _, b in data)
    lo, hi = min(lo, 0.5), max(hi, 2.0)
    lmin, lmax = math.floor(math.log2(lo)), math.ceil(math.log2(hi))
    left, width, bar, gap = 230, 560, 11, 10
    height = 60 + sum(len(b) * bar + gap for _, b in data) + 40

    def x(r):
        return left + (math.log2(r) - lmin) / (lmax - lmin) * width

    out = ['<svg xmlns="http://www.w3.org/2000/svg" width="%d" height="%d" '
           'font-family="sans-serif" font-size="11">' % (left + width + 150, height),
           '<rect width="100%" height="100%" fill="white"/>',
           '<text x="10" y="18" font-size="13">%s: ratio to each peer '
           '(&gt; 1: vyre faster; log scale)</text>' % html.escape(us)]
    for e in range(lmin, lmax + 1):
        gx = x(2.0 ** e)
        out.append('<line x1="%.1f" y1="30" x2="%.1f" y2="%d" stroke="%s"/>'
                   % (gx, gx, height - 30, "#333" if e == 0 else "#ddd"))
        out.append('<text x="%.1f" y="%d" text-anchor="middle">%gx</text>'
                   % (gx, height - 15, 2.0 ** e))
    y = 40
    for case, bars in data:
        out.append('<text x="%d" y="%.1f" text-anchor="end">%s</text>'
                   % (left - 6, y + len(bars) * bar / 2 + 4, html.escape(case)))
        for o, r in bars:
            c = COLORS[others.index(o) % len(COLORS)]
            x0, x1 = x(1.0), x(r)
            out.append('<rect x="%.1f" y="%.1f" width="%.1f" height="%d" fill="%s"/>'
                       % (min(x0, x1), y, abs(x1 - x0), bar - 1, c))
            out.append('<text x="%.1f" y="%.1f">%.2fx</text>' % (max(x0, x1) + 3, y + bar - 2, r))
            y += bar
        y += gap
    for i, o in enumerate(others):
        out.append('<rect x="%d" y="%d" width="10" height="10" fill="%s"/>'
                   % (left + width + 20, 40 + 16 * i, COLORS[i % len(COLORS)]))
        out.append('<text x="%d" y="%d">vs %s</text>' % (left + width + 34, 49 + 16 * i, html.escape(o)))
    out.append("</svg>")
    with open(sys.argv[1], "w") as f:
        f.write("\n".join(out) + "\n")


if __name__ == "__main__":
    main()
