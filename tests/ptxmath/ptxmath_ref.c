/* ptxmath_ref.c -- correctly rounded f32 references from long double libm, and ULP distances. */
#include "ptxmath_ref.h"

#include <math.h>
#include <string.h>
#include <vyre/vyre_program.h>

uint32_t pm_canon(uint32_t w) {
  uint32_t a = w & 0x7FFFFFFFu;
  if (a > 0x7F800000u) return 0x7FC00000u;
  if (a < 0x00800000u) return w & 0x80000000u;
  return w;
}

static long double ref_ld(uint32_t op, long double x) {
  switch (op) {
    case VYRE_OP_RSQRT: return 1.0L / sqrtl(x);
    case VYRE_OP_EXP: return expl(x);
    case VYRE_OP_EXP2: return exp2l(x);
    case VYRE_OP_LOG: return logl(x);
    case VYRE_OP_LOG2: return log2l(x);
    case VYRE_OP_SIN: return sinl(x);
    case VYRE_OP_COS: return cosl(x);
    case VYRE_OP_TAN: return tanl(x);
    case VYRE_OP_ASIN: return asinl(x);
    case VYRE_OP_ACOS: return acosl(x);
    case VYRE_OP_ATAN: return atanl(x);
    case VYRE_OP_SINH: return sinhl(x);
    case VYRE_OP_COSH: return coshl(x);
    case VYRE_OP_TANH: return tanhl(x);
    default: return NAN;
  }
}

const char *pm_ref_name(uint32_t op) {
  const vyre_op_info *info = vyre_op_lookup(op);
  return info ? info->mnemonic : "?";
}

uint32_t pm_ref(uint32_t op, uint32_t xbits, int *uncertain) {
  float xf;
  memcpy(&xf, &xbits, sizeof xf);
  long double y = ref_ld(op, (long double)xf);
  float f = (float)y;
  if (uncertain) {
    *uncertain = 0;
    if (isfinite(y) && y != 0 && isfinite(f) && (long double)f != y) {
      /* The rounding boundary between f and its neighbour toward y. */
      float g = nextafterf(f, (long double)f < y ? INFINITY : -INFINITY);
      long double mid;
      if (isinf(g)) mid = (long double)f + ((long double)f - nextafterf(f, 0.0f)) / 2;
      else mid = ((long double)f + (long double)g) / 2;
      if (fabsl(y - mid) <= fabsl(y) * 0x1p-58L) *uncertain = 1;
    }
  }
  uint32_t w;
  memcpy(&w, &f, sizeof w);
  return pm_canon(w);
}

static double ref_d(uint32_t op, double x) {
  switch (op) {
    case VYRE_OP_RSQRT: return 1.0 / sqrt(x);
    case VYRE_OP_EXP: return exp(x);
    case VYRE_OP_EXP2: return exp2(x);
    case VYRE_OP_LOG: return log(x);
    case VYRE_OP_LOG2: return log2(x);
    case VYRE_OP_SIN: return sin(x);
    case VYRE_OP_COS: return cos(x);
    case VYRE_OP_TAN: return tan(x);
    case VYRE_OP_ASIN: return asin(x);
    case VYRE_OP_ACOS: return acos(x);
    case VYRE_OP_ATAN: return atan(x);
    case VYRE_OP_SINH: return sinh(x);
    case VYRE_OP_COSH: return cosh(x);
    case VYRE_OP_TANH: return tanh(x);
    default: return NAN;
  }
}

static uint32_t f32_bits_of(double d) {
  float f = (float)d;
  uint32_t w;
  memcpy(&w, &f, sizeof w);
  return w;
}

uint32_t pm_ref_quick(uint32_t op, uint32_t xbits, int *uncertain) {
  float xf;
  memcpy(&xf, &xbits, sizeof xf);
  double y = ref_d(op, (double)xf);
  /* glibc's double functions are within a few 2^-53 relative: when y scaled
   * by 1 -/+ 2^-45 rounds to one f32, so does the exact value. */
  uint32_t lo = f32_bits_of(y * (1.0 - 0x1p-45)), hi = f32_bits_of(y * (1.0 + 0x1p-45));
  if (lo != hi) return pm_ref(op, xbits, uncertain);
  if (uncertain) *uncertain = 0;
  return pm_canon(f32_bits_of(y));
}

static int64_t ordinal(uint32_t w) {
  int64_t m = (int64_t)(w & 0x7FFFFFFFu);
  return (w & 0x80000000u) ? -m : m;
}

uint32_t pm_ulp_dist(uint32_t a, uint32_t b) {
  int an = (a & 0x7FFFFFFFu) > 0x7F800000u, bn = (b & 0x7FFFFFFFu) > 0x7F800000u;
  if (an || bn) return an && bn ? 0 : UINT32_MAX;
  int64_t d = ordinal(a) - ordinal(b);
  if (d < 0) d = -d;
  return d > (int64_t)UINT32_MAX ? UINT32_MAX : (uint32_t)d;
}
