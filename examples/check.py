#!/usr/bin/env python3
# check.py -- runs every case of examples/data/manifest.json with `vyre run --json` and compares each output byte for byte with its expected file.
#
#   python3 examples/check.py [--vyre PATH] [--backend ID] [--only NAME[,NAME...]]
#                             [--no-data-check] [--verbose]
#
# --vyre defaults to $VYRE_BUILD_DIR/host-stub/cli/vyre, --backend to
# $VYRE_EXAMPLES_BACKEND, else "reference".  First it checks that
# examples/data is what examples/gen.py writes (so the committed expectations
# are the generator's), then prints one line per case and a final
# "N passed, N failed" line; the exit status is 1 when anything failed.
# Under `make check-valgrind` ($VALGRIND set) the first run of each case is under memcheck.
#
# `vyre run --json` prints every value: integers in decimal, floats as the
# shortest decimal that reads back to the same value ("nan", "inf", "-inf" as
# strings).  Each value is turned back into its element bytes exactly (floats
# through exact rational rounding), so the comparison is of the bytes the
# backend returned; the one thing JSON does not carry is a NaN's payload,
# which becomes the canonical NaN of the type (docs/semantics.md).

import filecmp
import json
import os
import shutil
import struct
import subprocess
import sys
import tempfile
from fractions import Fraction

HERE = os.path.dirname(os.path.abspath(__file__))
NO_BACKEND = "cannot be used:"  # vyre run's message when the backend's factory fails
RUN_TIMEOUT = 300  # seconds per vyre run; the reference backend needs well under one

# ---------------------------------------------------------------------------
# JSON values -> element bytes
# ---------------------------------------------------------------------------

INT_TYPES = {"u8": ("<B", False), "u16": ("<H", False), "u32": ("<I", False), "u64": ("<Q", False),
             "i8": ("<b", True), "i16": ("<h", True), "i32": ("<i", True), "i64": ("<q", True)}
# name: (significand bits after the point, exponent bits, canonical NaN bits)
FLOAT_TYPES = {"f32": (23, 8, 0x7FC00000), "f16": (10, 5, 0x7E00), "bf16": (7, 8, 0x7FC0)}
ELEM_SIZE = {"bool": 4, "u8": 1, "u16": 2, "u32": 4, "u64": 8, "i8": 1, "i16": 2, "i32": 4, "i64": 8,
             "f16": 2, "bf16": 2, "f32": 4}


def float_bits(text, type_):
    """The bits of the `type_` value nearest to the decimal `text` (round to
    nearest even, gradual underflow, overflow to infinity)."""
    frac, ebits, nan = FLOAT_TYPES[type_]
    bias = (1 << (ebits - 1)) - 1
    sign = 0
    if text.startswith("-"):
        sign, text = 1, text[1:]
    elif text.startswith("+"):
        text = text[1:]
    top = sign << (frac + ebits)
    if text == "nan":
        return nan
    if text == "inf":
        return top | (((1 << ebits) - 1) << frac)
    q = Fraction(text)
    if q == 0:
        return top
    e = q.numerator.bit_length() - q.denominator.bit_length()
    if q < Fraction(2) ** e:
        e -= 1
    ulp = max(e, 1 - bias) - frac  # spacing of representable values around q
    scaled = q / Fraction(2) ** ulp
    m, r = divmod(scaled.numerator, scaled.denominator)
    if 2 * r > scaled.denominator or (2 * r == scaled.denominator and m & 1):
        m += 1
    # m * 2**ulp: normal when m has frac + 1 bits, subnormal when fewer.
    if m >> (frac + 1):  # rounding carried into the next binade
        m >>= 1
        ulp += 1
    if m >> frac:
        biased = ulp + frac + bias
        if biased >= (1 << ebits) - 1:
            return top | (((1 << ebits) - 1) << frac)
        return top | (biased << frac) | (m & ((1 << frac) - 1))
    return top | m


def value_bytes(value, type_):
    """One JSON value (numbers kept as their text) as element bytes."""
    if type_ == "bool":
        if not isinstance(value, bool):
            raise ValueError("%r is not a bool" % (value,))
        return struct.pack("<I", int(value))
    if type_ in INT_TYPES:
        fmt, _ = INT_TYPES[type_]
        return struct.pack(fmt, int(value))
    if type_ in FLOAT_TYPES:
        b = float_bits(str(value), type_)
        return struct.pack("<I" if type_ == "f32" else "<H", b)
    raise ValueError("unknown element type %r" % type_)


def f32_key(u):
    """f32 bits on a line where neighbours differ by 1 (+0 and -0 both 0)."""
    return -(u & 0x7FFFFFFF) if u & 0x80000000 else u


def show_elem(data, i, type_):
    size = ELEM_SIZE[type_]
    chunk = data[i * size:(i + 1) * size]
    if type_ == "f32":
        u = struct.unpack("<I", chunk)[0]
        return "%r (0x%08x)" % (struct.unpack("<f", chunk)[0], u)
    if type_ in INT_TYPES:
        return str(struct.unpack(INT_TYPES[type_][0], chunk)[0])
    return chunk.hex()


def compare(got, want, type_, ulp):
    """None when equal (within ulp for f32), else a description of the first differences."""
    if len(got) != len(want):
        return "%d bytes, expected %d" % (len(got), len(want))
    if got == want:
        return None
    size = ELEM_SIZE[type_]
    bad = []
    for i in range(len(want) // size):
        g, w = got[i * size:(i + 1) * size], want[i * size:(i + 1) * size]
        if g == w:
            continue
        if ulp and type_ == "f32":
            gu, wu = struct.unpack("<I", g)[0], struct.unpack("<I", w)[0]
            special = lambda u: (u & 0x7F800000) == 0x7F800000  # inf or NaN: exact only
            if not special(gu) and not special(wu) and abs(f32_key(gu) - f32_key(wu)) <= ulp:
                continue
        bad.append(i)
    if not bad:
        return None
    lines = ["%d of %d elements differ%s" % (len(bad), len(want) // size, " by more than %d ulp" % ulp if ulp else "")]
    for i in bad[:5]:
        lines.append("  [%d] got %s, expected %s" % (i, show_elem(got, i, type_), show_elem(want, i, type_)))
    return "\n".join(lines)


# ---------------------------------------------------------------------------
# Running vyre
# ---------------------------------------------------------------------------


def vyre_command(vyre, memcheck):
    valgrind = os.environ.get("VALGRIND")
    if not valgrind or not memcheck:
        return [vyre]
    libtool = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(vyre))), "libtool")
    cmd = [valgrind, "--quiet", "--error-exitcode=99", "--leak-check=full",
           "--errors-for-leak-kinds=definite,indirect", vyre]
    return ([libtool, "--mode=execute"] if os.path.exists(libtool) else []) + cmd


def run_case(case, vyre, backend, work, verbose):
    """(ok, detail) for one case: every run in order, outputs checked."""
    program = os.path.join(HERE, case["program"])
    previous = {}
    checked = 0
    for r, run in enumerate(case["runs"]):
        args = []
        for a in run["args"]:
            if a.startswith("@data/"):
                args.append(os.path.join(HERE, "data", a[len("@data/"):]))
            elif a.startswith("@out:"):
                name = a[len("@out:"):]
                if name not in previous:
                    return False, "run %d: the previous run has no output %r" % (r + 1, name)
                path = os.path.join(work, "%s.%d.%s" % (case["name"], r, name))
                with open(path, "wb") as f:
                    f.write(previous[name])
                args.append(path)
            else:
                args.append(a)
        # Under valgrind, the first run of a case is enough to check the
        # program's path through vyre; a chain's later runs repeat it.
        cmd = vyre_command(vyre, r == 0) + ["run", program] + args + ["--backend", backend, "--json"]
        where = "run %d of %d" % (r + 1, len(case["runs"])) if len(case["runs"]) > 1 else "run"
        if verbose:
            print("  $ " + " ".join(cmd))
        try:
            p = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, timeout=RUN_TIMEOUT)
        except subprocess.TimeoutExpired:
            return False, "%s: vyre did not finish in %d s" % (where, RUN_TIMEOUT)
        except OSError as e:
            return False, "%s: cannot start %s: %s" % (where, cmd[0], e)
        err = p.stderr.decode(errors="replace")
        if p.returncode != 0:
            return False, "%s: vyre exited with %d:\n%s" % (where, p.returncode, err.strip())
        for marker in ("AddressSanitizer", "LeakSanitizer", "runtime error:"):
            if marker in err:
                return False, "%s: sanitizer report:\n%s" % (where, err.strip())
        try:
            doc = json.loads(p.stdout.decode(), parse_float=str, parse_int=str)
            outputs = doc["outputs"]
        except (ValueError, KeyError) as e:
            return False, "%s: unreadable JSON from vyre (%s)" % (where, e)
        previous = {}
        for o in outputs:
            try:
                previous[o["name"]] = b"".join(value_bytes(v, o["type"]) for v in o["values"])
            except (ValueError, KeyError, struct.error) as e:
                return False, "%s: output %r: %s" % (where, o.get("name"), e)
        expect = run["expect"]
        if expect and [o["name"] for o in outputs] != [e["name"] for e in expect]:
            return False, "%s: outputs %s, expected %s" % (
                where, [o["name"] for o in outputs], [e["name"] for e in expect])
        for o, e in zip(outputs, expect):
            if o["type"] != e["type"] or int(o["count"]) != e["count"]:
                return False, "%s: output %s is %s x %s, expected %s x %d" % (
                    where, e["name"], o["type"], o["count"], e["type"], e["count"])
            with open(os.path.join(HERE, e["file"]), "rb") as f:
                want = f.read()
            diff = compare(previous[e["name"]], want, e["type"], e.get("ulp", 0))
            if diff:
                return False, "%s: output %s: %s" % (where, e["name"], diff)
            checked += 1
    return True, "%d run%s, %d output%s" % (len(case["runs"]), "" if len(case["runs"]) == 1 else "s",
                                             checked, "" if checked == 1 else "s")


def check_data(work):
    """(ok, detail): examples/data is byte for byte what gen.py writes now."""
    fresh = os.path.join(work, "fresh")
    p = subprocess.run([sys.executable, "-B", os.path.join(HERE, "gen.py"), "--out", fresh],
                       stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    if p.returncode != 0:
        return False, "gen.py failed:\n" + p.stderr.decode(errors="replace").strip()
    data = os.path.join(HERE, "data")
    have = set(os.listdir(data)) if os.path.isdir(data) else set()
    made = set(os.listdir(fresh))
    problems = []
    if made - have:
        problems.append("missing: " + " ".join(sorted(made - have)))
    if have - made:
        problems.append("not written by gen.py: " + " ".join(sorted(have - made)))
    _, mismatch, errors = filecmp.cmpfiles(data, fresh, sorted(made & have), shallow=False)
    if mismatch or errors:
        problems.append("differ: " + " ".join(sorted(mismatch + errors)))
    if problems:
        return False, "; ".join(problems) + ". Fix: run python3 examples/gen.py and commit examples/data"
    # Every program has a case, and the distribution ships every program.
    with open(os.path.join(fresh, "manifest.json")) as f:
        used = set(c["program"] for c in json.load(f)["cases"])
    programs = sorted(n for n in os.listdir(HERE) if n.endswith(".vyre"))
    idle = [n for n in programs if n not in used]
    if idle:
        return False, "no case runs %s. Fix: add one to gen.py" % " ".join(idle)
    mk = os.path.join(os.path.dirname(HERE), "tests", "examples.mk")
    if os.path.exists(mk):
        with open(mk) as f:
            text = f.read()
        unlisted = [n for n in programs if "examples/" + n not in text]
        if unlisted:
            return False, "tests/examples.mk does not ship %s. Fix: add it to EXTRA_DIST there" % " ".join(unlisted)
    return True, "%d files match gen.py; %d programs, all run" % (len(made), len(programs))


def main(argv):
    import argparse
    ap = argparse.ArgumentParser(description="Run examples/*.vyre and compare their outputs with examples/data.")
    ap.add_argument("--vyre", help="the vyre command (default: $VYRE_BUILD_DIR/host-stub/cli/vyre)")
    ap.add_argument("--backend", default=os.environ.get("VYRE_EXAMPLES_BACKEND") or "reference",
                    help="backend id (default: $VYRE_EXAMPLES_BACKEND, else reference)")
    ap.add_argument("--only", help="comma-separated case names")
    ap.add_argument("--no-data-check", action="store_true", help="skip comparing examples/data with gen.py")
    ap.add_argument("--verbose", "-v", action="store_true", help="print the commands")
    a = ap.parse_args(argv[1:])
    vyre = a.vyre
    if not vyre:
        build = os.environ.get("VYRE_BUILD_DIR")
        if not build:
            sys.stderr.write("check.py: no vyre to run: VYRE_BUILD_DIR is not set. Fix: pass --vyre PATH "
                             "or run it through make check\n")
            return 2
        vyre = os.path.join(build, "host-stub", "vyre")
    if not os.access(vyre, os.X_OK):
        sys.stderr.write("check.py: %s is not an executable. Fix: build it (make) or pass --vyre PATH\n" % vyre)
        return 2
    with open(os.path.join(HERE, "data", "manifest.json")) as f:
        cases = json.load(f)["cases"]
    if a.only:
        wanted = set(a.only.split(","))
        unknown = wanted - set(c["name"] for c in cases)
        if unknown:
            sys.stderr.write("check.py: no case named %s. Fix: pick from %s\n" % (
                ", ".join(sorted(unknown)), ", ".join(c["name"] for c in cases)))
            return 2
        cases = [c for c in cases if c["name"] in wanted]
    print("examples on backend '%s' with %s%s" % (a.backend, vyre, " under " + os.environ["VALGRIND"]
                                                   if os.environ.get("VALGRIND") else ""))
    passed = failed = 0
    work = tempfile.mkdtemp(prefix="vyre-examples-")
    try:
        if not a.no_data_check:
            ok, detail = check_data(work)
            print("%s  %-18s %s" % ("PASS" if ok else "FAIL", "data", detail))
            passed, failed = passed + ok, failed + (not ok)
        for case in cases:
            ok, detail = run_case(case, vyre, a.backend, work, a.verbose)
            label = "%-18s %s" % (case["name"], case["program"])
            if ok:
                print("PASS  %s: %s" % (label, detail))
                passed += 1
            else:
                print("FAIL  %s (%s)\n      %s" % (label, case["about"], detail.replace("\n", "\n      ")))
                failed += 1
                if NO_BACKEND in detail or "backend '%s' not found" % a.backend in detail:
                    left = len(cases) - (cases.index(case) + 1)
                    print("FAIL  the other %d cases: backend '%s' is not usable here" % (left, a.backend))
                    failed += left
                    break
    finally:
        shutil.rmtree(work, ignore_errors=True)
    print("%d passed, %d failed" % (passed, failed))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
