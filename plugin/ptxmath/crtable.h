/* crtable.h -- the inputs whose accurate f32 result is not the correctly rounded one, with the correct result: found by running every f32 input. */
#ifndef VYRE_PLUGIN_PTXMATH_CRTABLE_H
#define VYRE_PLUGIN_PTXMATH_CRTABLE_H

#include <stddef.h>
#include <stdint.h>

/* x: a canonical f32 input (bits); y: the correctly rounded, canonical result. */
typedef struct pm_cr_entry {
  uint32_t x, y;
} pm_cr_entry;

/*
 * The entries of `op` (VYRE_OP_RSQRT ... VYRE_OP_TANH), sorted by x, with
 * their count in *n; NULL and 0 for an op without any.  Every x listed is
 * one where PM_ACCURATE's result differs from the correctly rounded one;
 * tests/ptxmath/cr_table.py writes crtable.c from the exhaustive sweep
 * (docs/ulp.md, "Correct rounding").
 */
const pm_cr_entry *pm_cr_table(uint32_t op, size_t *n);

#endif /* VYRE_PLUGIN_PTXMATH_CRTABLE_H */
