/* ptxmath.c -- PTX subroutines for the f32 transcendentals and their documented ULP bounds (docs/ulp.md). */
#include "ptxmath.h"

#include <stdio.h>
#include <string.h>
#include <vyre/vyre_program.h>

#include "algo.h"

/*
 * Bounds, in ULP of the f32 result measured as the distance (in
 * representable f32 steps) from the correctly rounded result:
 *
 * PM_ACCURATE: 1 (faithful) for every op.  f64 evaluation within ~2^-50
 * relative error, rounded once; docs/ulp.md has the analysis and sweeps.
 *
 * PM_FAST (hardware MUFU through .approx):
 *   rsqrt: PTX ISA 9.7.3.16 (rsqrt) states a maximum relative error of
 *          2^-22.9 over the full range: |err| <= 2^1.1 = 2.14 ULP of the
 *          exact value, so at most 2 steps from the correctly rounded one.
 *   exp2:  PTX ISA 9.7.3.21 (ex2) states a maximum relative error of 2^-22
 *          for .f32: applied to |f| <= 1/2 (result in [0.70, 1.42]) that is
 *          <= 4 ULP, at most 4 steps; the 2^n scaling is exact.
 *   exp:   as exp2 plus the rounding of x/ln2 - n to f32 (< 0.19 ULP):
 *          still at most 4 steps.
 *   log2:  none -- PTX ISA 9.7.3.20 (lg2) bounds lg2.approx by an absolute
 *          error, which is unbounded in ULP near x = 1.
 *   sin, cos: none -- PTX ISA 9.7.3.18/19 state absolute errors only.
 *   others: no hardware instruction with a stated ULP bound.
 */
int pm_has(uint32_t op, pm_variant variant) { return pm_algo_has(op, variant); }

uint32_t pm_ulp_bound(uint32_t op, pm_variant variant) {
  if (!pm_algo_has(op, variant) || variant == PM_CR) return 0;
  if (variant == PM_ACCURATE) return 1;
  switch (op) {
    case VYRE_OP_RSQRT: return 2;
    case VYRE_OP_EXP2: return 4;
    case VYRE_OP_EXP: return 4;
    default: return 0;
  }
}

/* The op's mnemonic from the format's op table ("exp", "sin", ...). */
static const char *op_stem(uint32_t op) {
  const vyre_op_info *info = vyre_op_lookup(op);
  return info ? info->mnemonic : NULL;
}

int pm_emit_func(strbuf *out, uint32_t op, pm_variant variant, char name_out[32]) {
  if (name_out) name_out[0] = '\0';
  /* One lookup, checked: at -O1 gcc 12 cannot see that a second call
   * returns the same non-NULL stem (-Wformat-truncation, issue 13.8). */
  const char *stem = op_stem(op);
  if (!out || !name_out || !pm_algo_has(op, variant) || !stem) return -1;
  static const char *const vname[] = {"acc", "fast", "cr"};
  snprintf(name_out, 32, "vyre_pm_%s_%s", stem, vname[variant]);

  strbuf body;
  vyre__sb_init(&body);
  pm_ctx c;
  memset(&c, 0, sizeof c);
  c.emit = 1;
  c.sb = &body;
  pm_algo_run(&c, op, variant, 0);

  if (variant == PM_CR)
    vyre__sb_printf(out, "// %s: f32 %s, correctly rounded (docs/ulp.md)\n", name_out, stem);
  else
    vyre__sb_printf(out, "// %s: f32 %s, %s variant, within %u ULP (docs/ulp.md)\n", name_out, stem,
              variant == PM_FAST ? "fast" : "accurate", pm_ulp_bound(op, variant));
  vyre__sb_printf(out, ".func (.reg .f32 %%res) %s (.reg .f32 %%arg)\n{\n", name_out);
  /* Register files sized by what the body used (at least 1 each). */
  vyre__sb_printf(out, "\t.reg .f64 %%fd<%d>;\n\t.reg .b64 %%rd<%d>;\n\t.reg .b32 %%r<%d>;\n", c.nfd ? c.nfd : 1,
            c.nrd ? c.nrd : 1, c.nr ? c.nr : 1);
  vyre__sb_printf(out, "\t.reg .f32 %%f<%d>;\n\t.reg .pred %%p<%d>;\n", c.nf ? c.nf : 1, c.np ? c.np : 1);
  if (body.failed) out->failed = 1;
  else if (body.len) vyre__sb_append(out, body.data, body.len);
  vyre__sb_puts(out, "\tret;\n}\n");
  vyre__sb_free(&body);
  return 0;
}
