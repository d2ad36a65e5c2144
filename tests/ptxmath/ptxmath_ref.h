/* ptxmath_ref.h -- correctly rounded f32 references for the transcendentals (long double libm) and ULP distance, for the ptxmath tests. */
#ifndef VYRE_TESTS_PTXMATH_REF_H
#define VYRE_TESTS_PTXMATH_REF_H

#include <stdint.h>

/*
 * The correctly rounded, canonicalised (subnormal -> signed zero, NaN ->
 * 0x7FC00000) f32 result of `op` at the f32 `xbits`, from the x87
 * long double libm (64-bit significand, errors of a few 2^-64).
 * *uncertain (may be NULL) is set to 1 when the long double value lies
 * within 2^-58 relative of an f32 rounding boundary, where that precision
 * cannot decide the rounding; 0 otherwise.  Thread-safe.
 */
uint32_t pm_ref(uint32_t op, uint32_t xbits, int *uncertain);

/*
 * As pm_ref, first from the double libm (a few times faster): where the
 * double value scaled by 1 -/+ 2^-45 rounds to one f32 that is the result,
 * else pm_ref decides (and may set *uncertain).  The exhaustive CPU sweep
 * uses it (sweep_ptxmath -q).
 */
uint32_t pm_ref_quick(uint32_t op, uint32_t xbits, int *uncertain);

/* Distance in representable f32 steps between two canonical f32 (+0 and
 * -0 count as equal; NaN vs NaN is 0, NaN vs a number is UINT32_MAX). */
uint32_t pm_ulp_dist(uint32_t a, uint32_t b);

/* Canonicalise f32 bits: NaN -> 0x7FC00000, subnormal -> signed zero. */
uint32_t pm_canon(uint32_t bits);

/* The op's mnemonic ("sin"), or "?" */
const char *pm_ref_name(uint32_t op);

#endif /* VYRE_TESTS_PTXMATH_REF_H */
