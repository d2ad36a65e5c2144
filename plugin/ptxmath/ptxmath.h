/* ptxmath.h -- PTX subroutines for f32 transcendentals: an accurate variant (f64 inside) and fast .approx ones. */
#ifndef VYRE_PLUGIN_PTXMATH_H
#define VYRE_PLUGIN_PTXMATH_H

#include <stdint.h>

#include "abi/support/strbuf.h"

typedef enum pm_variant {
  PM_ACCURATE = 0, /* faithful: within pm_ulp_bound(op, PM_ACCURATE) ULP on every f32 input */
  PM_FAST = 1,     /* hardware .approx forms; only where a hard ULP bound exists */
  PM_CR = 2        /* correctly rounded on every f32 input (docs/ulp.md, "Correct rounding") */
} pm_variant;

/* 1 when `variant` of `op` exists (PM_CR: for every op PM_ACCURATE has). */
int pm_has(uint32_t op, pm_variant variant);

/*
 * The documented worst-case error, in ULP of the f32 result, of `variant`
 * of `op` (one of VYRE_OP_RSQRT, EXP, EXP2, LOG, LOG2, SIN, COS, TAN, ASIN,
 * ACOS, ATAN, SINH, COSH, TANH), measured against the correctly rounded
 * result.  0 when that variant does not exist, and for PM_CR, whose
 * results are the correctly rounded ones (pm_has tells whether it exists).
 * docs/ulp.md lists them.
 */
uint32_t pm_ulp_bound(uint32_t op, pm_variant variant);

/*
 * Append to `out` the PTX definition of a function
 *     .func (.reg .f32 %res) NAME (.reg .f32 %arg)
 * computing `op` on a canonical f32 (no subnormals, NaN = 0x7FC00000) and
 * returning a canonical f32 (docs/semantics.md), with every special value
 * exact.  NAME (written to name_out) is unique per (op, variant).  The
 * text uses only sm_70+ / PTX ISA 6.0+ instructions and declares only
 * registers local to the function.  Returns 0, or -1 when the variant does
 * not exist for op.
 */
int pm_emit_func(strbuf *out, uint32_t op, pm_variant variant, char name_out[32]);

#endif /* VYRE_PLUGIN_PTXMATH_H */
