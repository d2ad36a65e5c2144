/* math.c -- transcendentals: choose the ptxmath variant the ulp budget allows, emit it once, call it. */
#include <string.h>

#include "internal.h"

#ifdef CG_WITH_PTXMATH
#include "plugin/ptxmath/ptxmath.h"
#endif

void cg_math(cg_ctx *c, uint32_t i) {
  const vyre_inst *in = &c->p->insts[i];
  const vyre_op_info *info = vyre_op_lookup(in->op);
  const char *name = info ? info->mnemonic : "?";
#ifdef CG_WITH_PTXMATH
  uint32_t budget = c->o->ulp_budget;
  uint32_t fast = pm_ulp_bound(in->op, PM_FAST), acc = pm_ulp_bound(in->op, PM_ACCURATE);
  pm_variant v;
  /* The smallest budget that works: the tighter of the variants that exist. */
  uint32_t need = acc;
  if (fast && (!need || fast < need)) need = fast;
  if (!need) {
    cg_fail(c, VYRE_INTERNAL, "codegen: the math library has no variant of '%s' (instruction "
            "%u). Fix: report this as a bug", name, i);
    return;
  }
  if (budget == 0 && pm_has(in->op, PM_CR)) {
    v = PM_CR;
  } else if (budget == 0) {
    cg_fail(c, VYRE_UNSUPPORTED,
            "'%s' (instruction %u) is unsupported under strict (ulp budget 0): the math library "
            "has no correctly rounded variant of it. Fix: pass a ulp budget >= %u",
            name, i, need);
    return;
  } else if (fast && budget >= fast) {
    v = PM_FAST;
  } else if (acc && budget >= acc) {
    v = PM_ACCURATE;
  } else {
    cg_fail(c, VYRE_UNSUPPORTED,
            "'%s' (instruction %u) is unsupported under a ulp budget of %u: the most accurate "
            "sequence is within %u ulp. Fix: pass a ulp budget >= %u",
            name, i, budget, need, need);
    return;
  }
  uint32_t bit = (in->op - VYRE_OP_RSQRT) * 3u + (uint32_t)v;
  char fname[32];
  if (!(c->math_emitted & (1ull << bit))) {
    if (pm_emit_func(&c->funcs, in->op, v, fname) != 0) {
      cg_fail(c, VYRE_INTERNAL, "codegen: the math library has no %s variant of '%s'. Fix: "
              "report this as a bug", v == PM_FAST ? "fast" : v == PM_CR ? "correctly rounded" : "accurate", name);
      return;
    }
    vyre__sb_puts(&c->funcs, "\n");
    c->math_emitted |= 1ull << bit;
    memcpy(c->math_names[bit], fname, sizeof fname);
  }
  const char *fa = cg_tf(c), *fr = cg_tf(c);
  cg_emit(c, "mov.b32 %s, %s;", fa, cg_val(c, in->a));
  cg_emit(c, "call (%s), %s, (%s);", fr, c->math_names[bit], fa);
  cg_emit(c, "mov.b32 %s, %s;", cg_val(c, i), fr);
#else
  cg_fail(c, VYRE_UNSUPPORTED,
          "'%s' (instruction %u) is unsupported: this build of the CUDA backend has no "
          "transcendental library (plugin/ptxmath). Fix: rebuild with the math part, or avoid "
          "transcendental ops",
          name, i);
#endif
}
