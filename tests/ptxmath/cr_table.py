#!/usr/bin/env python3
"""cr_table.py -- writes plugin/ptxmath/crtable.c from the exceptions of an exhaustive sweep.

usage: cr_table.py EXCEPTIONS [OUT]

EXCEPTIONS: lines "OP X Y" (OP a mnemonic: exp, sin, ...; X the canonical
f32 input and Y its correctly rounded, canonical result, both 8 hex
digits), as cr_resolve.py writes them from a cr_sweep run of the accurate
variant: every input where that variant's result is not the correctly
rounded one.  Lines starting with '#' are comments.  OUT defaults to
stdout.  docs/ulp.md, "Correct rounding", has the whole procedure.
"""
import sys

OPS = ["rsqrt", "exp", "exp2", "log", "log2", "sin", "cos", "tan", "asin", "acos",
       "atan", "sinh", "cosh", "tanh"]


def main(argv):
    if len(argv) not in (2, 3):
        sys.stderr.write(__doc__)
        return 2
    table = {op: {} for op in OPS}
    with open(argv[1]) as f:
        for n, line in enumerate(f, 1):
            line = line.split("#", 1)[0].strip()
            if not line:
                continue
            parts = line.split()
            if len(parts) != 3 or parts[0] not in table:
                sys.stderr.write("cr_table.py: %s:%d: expected 'OP X Y', got %r\n" % (argv[1], n, line))
                return 1
            x, y = int(parts[1], 16), int(parts[2], 16)
            old = table[parts[0]].get(x)
            if old is not None and old != y:
                sys.stderr.write("cr_table.py: %s:%d: %s 0x%08x listed twice with different results\n"
                                 % (argv[1], n, parts[0], x))
                return 1
            table[parts[0]][x] = y
    out = ["/* crtable.c -- the inputs whose accurate f32 result is not the correctly rounded one:",
           " * written by tests/ptxmath/cr_table.py from an exhaustive sweep (docs/ulp.md); do not edit. */",
           '#include "crtable.h"', "", "#include <vyre/vyre_program.h>", ""]
    total = 0
    for op in OPS:
        rows = sorted(table[op].items())
        if not rows:
            continue
        total += len(rows)
        out.append("static const pm_cr_entry t_%s[] = {" % op)
        for i in range(0, len(rows), 4):
            out.append("    " + " ".join("{0x%08Xu, 0x%08Xu}," % r for r in rows[i:i + 4]))
        out.append("};")
        out.append("")
    out.append("const pm_cr_entry *pm_cr_table(uint32_t op, size_t *n) {")
    out.append("  switch (op) {")
    for op in OPS:
        if table[op]:
            out.append("  case VYRE_OP_%s: *n = sizeof t_%s / sizeof *t_%s; return t_%s;" % (op.upper(), op, op, op))
    out.append("  default: *n = 0; return NULL;")
    out.append("  }")
    out.append("}")
    text = "\n".join(out) + "\n"
    if len(argv) == 3:
        with open(argv[2], "w") as f:
            f.write(text)
    else:
        sys.stdout.write(text)
    sys.stderr.write("cr_table.py: %d entries\n" % total)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
