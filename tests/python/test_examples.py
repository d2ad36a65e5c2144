"""test_examples.py -- the checked cases of examples/data/manifest.json run through the Python package on the reference backend, every output compared byte for byte with its expected file."""
import json
import os
import unittest

import numpy as np

import vyre
from vyretest import EXAMPLES, RefCase


def parse_value(text, dtype):
    if text in ("true", "false"):
        return dtype.type(text == "true")
    return float(text) if dtype.kind == "f" else int(text, 0)


def make_input(kind, spec, binfo, outputs):
    """One input buffer from a `vyre run` input option (docs/examples.md)."""
    dt = np.dtype(binfo.dtype)
    if kind == "--input":
        if spec.startswith("@out:"):
            return outputs[spec[5:]]
        with open(os.path.join(EXAMPLES, spec[1:]), "rb") as f:
            return np.frombuffer(f.read(), dtype=dt)
    value, _, count = spec.partition(":")
    n = int(count) if count else binfo.count
    v = parse_value(value, dt)
    if kind == "--fill":
        return np.full(n, v, dtype=dt)
    # --iota: START, START+1, ... (floats START+k rounded, integers wrap).
    if dt.kind == "f":
        return (np.float64(v) + np.arange(n, dtype=np.float64)).astype(dt)
    return ((int(v) + np.arange(n, dtype=np.int64)) % (1 << (8 * dt.itemsize))).astype(
        dt if dt.kind == "u" else dt.str.replace("i", "u")).view(dt)


def ulp_distance(a, b):
    ia = a.view(np.int32).astype(np.int64)
    ib = b.view(np.int32).astype(np.int64)
    ia = np.where(ia < 0, -(ia & 0x7FFFFFFF), ia)
    ib = np.where(ib < 0, -(ib & 0x7FFFFFFF), ib)
    return np.abs(ia - ib)


class Manifest(RefCase):
    def test_cases(self):
        with open(os.path.join(EXAMPLES, "data", "manifest.json")) as f:
            cases = json.load(f)["cases"]
        ran = 0
        for case in cases:
            prog = vyre.load(os.path.join(EXAMPLES, case["program"]))
            outputs = {}
            for run in case["runs"]:
                args, inputs, opts = list(run["args"]), [], {}
                while args:
                    flag, val = args.pop(0), args.pop(0)
                    if flag in ("--input", "--fill", "--iota"):
                        binfo = prog.inputs[len(inputs)]
                        inputs.append(make_input(flag, val, binfo, outputs))
                    elif flag == "--grid":
                        opts["grid"] = tuple(int(v) for v in val.split(","))
                    elif flag == "--wg":
                        opts["workgroup"] = tuple(int(v) for v in val.split(","))
                    elif flag == "--ulp":
                        opts["ulp"] = int(val)
                    else:
                        self.fail("%s: the test does not know %s" % (case["name"], flag))
                res = self.be.dispatch(prog, *inputs, **opts)
                outputs = {b.name: r for b, r in zip(prog.outputs, res)}
                for exp in run["expect"]:
                    got = outputs[exp["name"]]
                    with open(os.path.join(EXAMPLES, exp["file"]), "rb") as f:
                        want = f.read()
                    what = "%s: output %s" % (case["name"], exp["name"])
                    if exp.get("ulp", 0) == 0:
                        self.assertEqual(got.tobytes(), want, what + " differs")
                    else:
                        w = np.frombuffer(want, np.float32)
                        self.assertLessEqual(int(ulp_distance(got, w).max()), exp["ulp"], what)
                ran += 1
        self.assertGreaterEqual(ran, 22, "every case ran")


if __name__ == "__main__":
    unittest.main()
