/* f32.c -- f32 arithmetic as vyre defines it (add sub mul div fma sqrt, and a double rounded to f32): the one implementation, exported for every CPU backend. */
#include <float.h>
#include <math.h>

#include "vyre/vyre_support.h"
#include "abi/support/bits.h"

/* Each result must be rounded once to binary32: no x87 excess precision.
 * libvyre builds with -std=c11, where GCC contracts nothing into an fma,
 * and no expression here has a product next to a sum anyway. */
#if !defined(FLT_EVAL_METHOD) || FLT_EVAL_METHOD != 0
#error "libvyre's f32 arithmetic needs FLT_EVAL_METHOD == 0 (SSE-style f32 arithmetic)"
#endif

#define F32_SIGN 0x80000000u
#define F32_MIN_NORMAL 0x00800000u

/* An operand as every backend reads it: a subnormal is the zero of its
 * sign, a NaN is NaN (docs/semantics.md, "Canonical values"; PTX .ftz
 * flushes its inputs the same way). */
static float operand(uint32_t bits) { return vyre__f32_from_bits(vyre_f32_canonical_bits(bits)); }

/* The canonical bits of a result: NaN -> 0x7FC00000, subnormal -> signed zero. */
static uint32_t result(float r) { return vyre_f32_canonical_bits(vyre__f32_bits(r)); }

/*
 * Underflow (docs/semantics.md, "Underflow"): a result is rounded to 24
 * significant bits as if the exponent were unbounded, and one whose
 * rounded magnitude is below 2^-126 becomes the zero of its sign (IEEE
 * 754 tininess after rounding, flushed: what PTX `.ftz` arithmetic does).
 * C rounds with gradual underflow; the two differ only when C yields
 * exactly +-2^-126 from an exact magnitude in [2^-126 - 2^-150,
 * 2^-126 - 2^-151), which 24-bit rounding leaves below 2^-126.  For that
 * case the callers redo the operation scaled by 2^64 (exact: the operands
 * involved are small), where the result is normal and C's rounding is the
 * unbounded one, and pass it here as `scaled`.
 */
static int at_min_normal(float r) { return (vyre__f32_bits(r) & ~F32_SIGN) == F32_MIN_NORMAL; }
static uint32_t after_rounding(float r, float scaled) {
  if (fabsf(scaled) < 0x1p-62f) return vyre__f32_bits(r) & F32_SIGN;
  return result(r);
}

uint32_t vyre_f32_add(uint32_t a, uint32_t b) {
  /* An exact sum of normals is never in the window: no rescaling. */
  return result(operand(a) + operand(b));
}

uint32_t vyre_f32_sub(uint32_t a, uint32_t b) { return result(operand(a) - operand(b)); }

uint32_t vyre_f32_mul(uint32_t a, uint32_t b) {
  float x = operand(a), y = operand(b), r = x * y;
  if (!at_min_normal(r)) return result(r);
  /* |x * y| ~ 2^-126: the smaller operand is below 2^-62, so scaling it
   * by 2^64 cannot overflow. */
  return after_rounding(r, fabsf(x) <= fabsf(y) ? (x * 0x1p64f) * y : x * (y * 0x1p64f));
}

uint32_t vyre_f32_div(uint32_t a, uint32_t b) {
  float x = operand(a), y = operand(b), r = x / y;
  if (!at_min_normal(r)) return result(r);
  return after_rounding(r, (x * 0x1p64f) / y); /* |x| <= 2^2 here: |y| < 2^128 */
}

uint32_t vyre_f32_fma(uint32_t a, uint32_t b, uint32_t c) {
  float x = operand(a), y = operand(b), z = operand(c);
  float r = fmaf(x, y, z);
  if (!at_min_normal(r)) return result(r);
  /* A result near 2^-126 needs |z| < 2^-60 or so unless x*y cancels it, and
   * a cancellation that leaves so little has |x*y| ~ |z| < 2^64: scaling z
   * and the smaller factor (below 2^32) by 2^64 cannot overflow. */
  float s = fabsf(x) <= fabsf(y) ? fmaf(x * 0x1p64f, y, z * 0x1p64f)
                                 : fmaf(x, y * 0x1p64f, z * 0x1p64f);
  return after_rounding(r, s);
}

uint32_t vyre_f32_sqrt(uint32_t a) {
  /* Its smallest non-zero result is 2^-63: never in the window.
   * sqrtf(-0) = -0; sqrtf(x < 0) = NaN, canonicalised. */
  return result(sqrtf(operand(a)));
}

uint32_t vyre_f32_from_f64(double x) {
  float f = (float)x;
  if (!at_min_normal(f)) return result(f);
  /* Rounded once from x * 2^64 (exact in double), normal in f32. */
  return after_rounding(f, (float)(x * 0x1p64));
}
