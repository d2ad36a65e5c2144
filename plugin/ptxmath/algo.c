/* algo.c -- the f32 transcendental algorithms, written once: evaluated they are the C model, emitted they are the PTX. */
#include "algo.h"
#include "crtable.h"

#include <vyre/vyre_program.h>

/*
 * Method (docs/ulp.md has the error analysis and the measured errors):
 * widen the f32 argument to f64 (exact), reduce it, evaluate a Taylor
 * polynomial in f64 whose truncation error is below 2^-53 on the reduced
 * range, and round once to f32.  The f64 result is within a few f64 ulp
 * (~2^-50 relative) of the exact value, so the f32 result is faithful and
 * correctly rounded except when the exact value lies within ~2^-50 of an
 * f32 rounding boundary.  Special values are fixed up on the bits at the
 * end.  Only add/sub/mul/fma/div/sqrt in f64 (all .rn) and integer ops are
 * used; PTX has no f64 transcendental.
 *
 * Constants were produced with mpmath at 400 bits (the hex literals are
 * the f64 roundings, or the stated truncations).
 */

#define D(v) pm_dimm(v)
#define W(v) pm_wimm(v)
#define U(v) pm_uimm(v)

/* 2/pi, bits 1..256 after the binary point; word 0 is the 64 zero bits
 * before it, so a 128-bit window may start left of the point. */
static const uint64_t two_over_pi_bits[5] = {
    0x0000000000000000u, 0xA2F9836E4E441529u, 0xFC2757D1F534DDC0u,
    0xDB6295993C439041u, 0xFE5163ABDEBBC561u};

/* pi/2 = PIO2_1 + PIO2_2 + PIO2_3 (+ 2^-117 rel.): PIO2_1 and PIO2_2 have
 * 30 significant bits so k * PIO2_j is exact for |k| < 2^23. */
static const double PIO2_1 = 0x1.921fb548p+0;
static const double PIO2_2 = -0x1.de973dc8p-31;
static const double PIO2_3 = -0x1.9d9cceba3f91fp-62;
static const double PIO2_HI = 0x1.921fb54442d18p+0; /* pi/2 rounded */
static const double PIO2_LO = 0x1.1a62633145c07p-54; /* pi/2 - PIO2_HI */
static const double PIO4_HI = 0x1.921fb54442d18p-1;
static const double PIO4_LO = 0x1.1a62633145c07p-55;
static const double TWO_OVER_PI = 0x1.45f306dc9c883p-1;
static const double ATAN_HALF_HI = 0x1.dac670561bb4fp-2; /* atan(1/2) */
static const double ATAN_HALF_LO = 0x1.a2b7f222f65e2p-56;
/* ln 2 = LN2_HI + LN2_LO; LN2_HI has 29 significant bits so k * LN2_HI is
 * exact for |k| < 2^24. */
static const double LN2_HI = 0x1.62e42ffp-1;
static const double LN2_LO = -0x1.718432a1b0e26p-35;
static const double LN2 = 0x1.62e42fefa39efp-1;
static const double INV_LN2 = 0x1.71547652b82fep+0;
static const double SQRT2 = 0x1.6a09e667f3bcdp+0;

/* 1/n! for n = 1..13: e^r = 1 + r * (1 + r/2 + r^2/6 + ...), |r| <= ln2/2;
 * the first omitted term r^14/14! < 2^-57. */
static const double exp_coef[13] = {
    0x1p+0, 0x1p-1, 0x1.5555555555555p-3, 0x1.5555555555555p-5,
    0x1.1111111111111p-7, 0x1.6c16c16c16c17p-10, 0x1.a01a01a01a01ap-13,
    0x1.a01a01a01a01ap-16, 0x1.71de3a556c734p-19, 0x1.27e4fb7789f5cp-22,
    0x1.ae64567f544e4p-26, 0x1.1eed8eff8d898p-29, 0x1.6124613a86d09p-33};

/* (-1)^n/(2n+1)!, n = 1..8: sin r = r + r^3 * S(r^2), |r| <= pi/4. */
static const double sin_coef[8] = {
    -0x1.5555555555555p-3, 0x1.1111111111111p-7, -0x1.a01a01a01a01ap-13,
    0x1.71de3a556c734p-19, -0x1.ae64567f544e4p-26, 0x1.6124613a86d09p-33,
    -0x1.ae7f3e733b81fp-41, 0x1.952c77030ad4ap-49};

/* (-1)^n/(2n)!, n = 1..9: cos r = 1 + r^2 * C(r^2). */
static const double cos_coef[9] = {
    -0x1p-1, 0x1.5555555555555p-5, -0x1.6c16c16c16c17p-10,
    0x1.a01a01a01a01ap-16, -0x1.27e4fb7789f5cp-22, 0x1.1eed8eff8d898p-29,
    -0x1.93974a8c07c9dp-37, 0x1.ae7f3e733b81fp-45, -0x1.6827863b97d97p-53};

/* 1/(2n+1)!, n = 1..7: sinh a = a + a^3 * S(a^2), |a| < 1/2. */
static const double sinh_coef[7] = {
    0x1.5555555555555p-3, 0x1.1111111111111p-7, 0x1.a01a01a01a01ap-13,
    0x1.71de3a556c734p-19, 0x1.ae64567f544e4p-26, 0x1.6124613a86d09p-33,
    0x1.ae7f3e733b81fp-41};

/* (-1)^n/(2n+1), n = 1..12: atan u = u + u^3 * T(u^2), |u| <= 1/4. */
static const double atan_coef[12] = {
    -0x1.5555555555555p-2, 0x1.999999999999ap-3, -0x1.2492492492492p-3,
    0x1.c71c71c71c71cp-4, -0x1.745d1745d1746p-4, 0x1.3b13b13b13b14p-4,
    -0x1.1111111111111p-4, 0x1.e1e1e1e1e1e1ep-5, -0x1.af286bca1af28p-5,
    0x1.8618618618618p-5, -0x1.642c8590b2164p-5, 0x1.47ae147ae147bp-5};

/* 1/(2n+1), n = 1..10: log m = 2s * (1 + s^2 * R(s^2)), |s| <= 0.1716. */
static const double log_coef[10] = {
    0x1.5555555555555p-2, 0x1.999999999999ap-3, 0x1.2492492492492p-3,
    0x1.c71c71c71c71cp-4, 0x1.745d1745d1746p-4, 0x1.3b13b13b13b14p-4,
    0x1.1111111111111p-4, 0x1.e1e1e1e1e1e1ep-5, 0x1.af286bca1af28p-5,
    0x1.8618618618618p-5};

/* k[0] + z*(k[1] + z*(... + z*k[n-1])) with one fma per step. */
static pm_d horner(pm_ctx *c, pm_d z, const double *k, int n) {
  pm_d acc = pm_dfma(c, z, D(k[n - 1]), D(k[n - 2]));
  for (int i = n - 3; i >= 0; i--) acc = pm_dfma(c, acc, z, D(k[i]));
  return acc;
}

/* Round to f32 once, flush a subnormal result to the zero of its sign,
 * and make any NaN the canonical 0x7FC00000. */
static pm_w finish_w(pm_ctx *c, pm_w w) {
  pm_w a = pm_wand(c, w, W(0x7FFFFFFFu));
  pm_p tiny = pm_setp_w(c, PM_LT, a, W(0x00800000u));
  w = pm_wsel(c, tiny, pm_wand(c, w, W(0x80000000u)), w);
  pm_p nan = pm_setp_w(c, PM_GT, a, W(0x7F800000u));
  return pm_wsel(c, nan, W(0x7FC00000u), w);
}

/* Correct rounding (PM_CR): the f64 value r is within ~2^-50 relative of
 * the exact one, so its f32 rounding can differ from the correctly rounded
 * result only when r lies near a rounding boundary (a tie between two f32,
 * the overflow threshold, or the flush threshold).  r scaled down and up by
 * 2^-40 rounds to two different f32 exactly when such a boundary lies
 * within 2^-40 relative of r: that is near_tie.  The inputs whose result
 * this rounding gets wrong were all found by running every f32 input
 * (tests/ptxmath/cr_sweep, docs/ulp.md); each is near_tie, and its correct
 * result is in crtable.c. */
#define CR_NEAR (0x1p-40)

static pm_w finish(pm_ctx *c, pm_d r) {
  if (c->cr) {
    pm_w lo = pm_f32bits_of_d(c, pm_dmul(c, r, D(1.0 - CR_NEAR)));
    pm_w hi = pm_f32bits_of_d(c, pm_dmul(c, r, D(1.0 + CR_NEAR)));
    pm_p t = pm_setp_w(c, PM_NE, lo, hi);
    c->near_tie_v = t.v;
    c->near_tie_r = t.r;
    c->near_tie_set = 1;
  }
  return finish_w(c, pm_f32bits_of_d(c, r));
}

/* PM_CR: when the accurate result y was near a tie, the table's result for
 * x replaces it (a chain of compares, run only then). */
static pm_w cr_fix(pm_ctx *c, pm_w x, pm_w y, uint32_t op) {
  size_t n = 0;
  const pm_cr_entry *t = pm_cr_table(op, &n);
  if (!c->near_tie_set || n == 0) return y;
  pm_p near = {c->near_tie_v, c->near_tie_r};
  int skip = pm_skip_if(c, pm_pnot(c, near));
  pm_w v = y;
  for (size_t i = 0; i < n; i++) v = pm_wsel(c, pm_setp_w(c, PM_EQ, x, W(t[i].x)), W(t[i].y), v);
  pm_label(c, skip);
  return pm_wsel(c, near, v, y);
}

/* x clamped to [lo, hi]; NaN stays NaN (ordered compares are false). */
static pm_d clamp(pm_ctx *c, pm_d x, double lo, double hi) {
  x = pm_dsel(c, pm_setp_d(c, PM_GT, x, D(hi)), D(hi), x);
  return pm_dsel(c, pm_setp_d(c, PM_LT, x, D(lo)), D(lo), x);
}

/* p * 2^k for |k| <= 1000: the power of two is built in the exponent field. */
static pm_d scale2(pm_ctx *c, pm_d p, pm_w k) {
  pm_w e = pm_wadd(c, k, W(1023));
  pm_u bits = pm_ushl(c, pm_u_of_w(c, e), W(52));
  return pm_dmul(c, p, pm_d_of_bits(c, bits));
}

/* e^r for |r| <= ln2/2 (+ rounding). */
static pm_d exp_poly(pm_ctx *c, pm_d r) {
  pm_d q = horner(c, r, exp_coef, 13);
  return pm_dfma(c, r, q, D(1.0));
}

/* e^y for y an f32 value (or 2 * one) in [-300, 300].  Cody-Waite: with
 * k = rint(y / ln2), y - k * LN2_HI is exact (both are multiples of 2^-29
 * when k != 0, and the difference is below 1/2), then one fma adds k * LN2_LO. */
static pm_d exp_core(pm_ctx *c, pm_d y) {
  pm_d k = pm_drint(c, pm_dmul(c, y, D(INV_LN2)));
  pm_d nk = pm_dneg(c, k);
  pm_d r = pm_dfma(c, nk, D(LN2_HI), y);
  r = pm_dfma(c, nk, D(LN2_LO), r);
  return scale2(c, exp_poly(c, r), pm_s32_of_d_rni(c, k));
}

static pm_p is_nonfinite(pm_ctx *c, pm_w ax) { return pm_setp_w(c, PM_GE, ax, W(0x7F800000u)); }
static pm_p is_zero(pm_ctx *c, pm_w ax) { return pm_setp_w(c, PM_EQ, ax, W(0)); }
static pm_p is_neg(pm_ctx *c, pm_w x) { return pm_setp_w(c, PM_GT, x, W(0x7FFFFFFFu)); }

static pm_w algo_rsqrt(pm_ctx *c, pm_w x) {
  /* sqrt(-0) = -0 gives rsqrt(-0) = -inf; x < 0 gives NaN; +inf gives +0. */
  pm_d xd = pm_d_of_f32bits(c, x);
  return finish(c, pm_ddiv(c, D(1.0), pm_dsqrt(c, xd)));
}

static pm_w algo_exp(pm_ctx *c, pm_w x) {
  /* e^-110 flushes to 0 and e^100 overflows: the clamp keeps k small. */
  pm_d y = clamp(c, pm_d_of_f32bits(c, x), -110.0, 100.0);
  return finish(c, exp_core(c, y));
}

static pm_w algo_exp2(pm_ctx *c, pm_w x) {
  /* y - rint(y) is exact; 2^n is exact, so exp2(integer) is exact. */
  pm_d y = clamp(c, pm_d_of_f32bits(c, x), -200.0, 200.0);
  pm_d n = pm_drint(c, y);
  pm_d r = pm_dmul(c, pm_dsub(c, y, n), D(LN2));
  return finish(c, scale2(c, exp_poly(c, r), pm_s32_of_d_rni(c, n)));
}

/* log of a positive finite x: x = m * 2^e, m in [sqrt(1/2), sqrt(2)];
 * f = m - 1 is exact (Sterbenz), s = f / (2 + f), log m = 2 atanh s. */
static void log_parts(pm_ctx *c, pm_d xd, pm_d *logm, pm_d *e) {
  pm_u u = pm_bits_of_d(c, xd);
  pm_w ex = pm_w_of_u(c, pm_ushr(c, u, W(52)));
  pm_d ed = pm_d_of_s32(c, pm_wsub(c, ex, W(1023)));
  pm_u mb = pm_uor(c, pm_uand(c, u, U(0x000FFFFFFFFFFFFFu)), U(0x3FF0000000000000u));
  pm_d m = pm_d_of_bits(c, mb);
  pm_p big = pm_setp_d(c, PM_GT, m, D(SQRT2));
  m = pm_dsel(c, big, pm_dmul(c, m, D(0.5)), m);
  *e = pm_dsel(c, big, pm_dadd(c, ed, D(1.0)), ed);
  pm_d f = pm_dsub(c, m, D(1.0));
  pm_d s = pm_ddiv(c, f, pm_dadd(c, f, D(2.0)));
  pm_d s2 = pm_dadd(c, s, s);
  pm_d z = pm_dmul(c, s, s);
  pm_d rr = horner(c, z, log_coef, 10);
  *logm = pm_dfma(c, s2, pm_dmul(c, z, rr), s2);
}

/* log(+-0) = -inf, log(x < 0) = NaN, log(+inf) = +inf, NaN -> NaN. */
static pm_w log_specials(pm_ctx *c, pm_w x, pm_w res) {
  pm_w ax = pm_wand(c, x, W(0x7FFFFFFFu));
  res = pm_wsel(c, pm_setp_w(c, PM_EQ, x, W(0x7F800000u)), W(0x7F800000u), res);
  res = pm_wsel(c, is_neg(c, x), W(0x7FC00000u), res);
  res = pm_wsel(c, pm_setp_w(c, PM_GT, ax, W(0x7F800000u)), W(0x7FC00000u), res);
  return pm_wsel(c, is_zero(c, ax), W(0xFF800000u), res);
}

static pm_w algo_log(pm_ctx *c, pm_w x) {
  pm_d logm, e;
  log_parts(c, pm_d_of_f32bits(c, x), &logm, &e);
  /* e * LN2_HI is exact; the sum is at least |e| ln2 / 2 when e != 0. */
  pm_d r = pm_dfma(c, e, D(LN2_HI), pm_dfma(c, e, D(LN2_LO), logm));
  return log_specials(c, x, finish(c, r));
}

static pm_w algo_log2(pm_ctx *c, pm_w x) {
  pm_d logm, e;
  log_parts(c, pm_d_of_f32bits(c, x), &logm, &e);
  /* One rounding: log2(2^k) = k exactly, since log m = 0 there. */
  pm_d r = pm_dfma(c, logm, D(INV_LN2), e);
  return log_specials(c, x, finish(c, r));
}

/*
 * x = q * pi/2 + r, |r| <= pi/4 (+ rounding), q mod 4 in *q.
 * |x| < 2^17: Cody-Waite with k = rint(x * 2/pi): x - k * PIO2_1 is exact
 * (multiples of 2^-29 below 1), then two fmas; the closest an f32 below
 * 2^17 comes to a multiple of pi/2 keeps the result accurate to ~2^-52.
 * |x| >= 2^17: Payne-Hanek on the 24-bit integer significand M (x = M *
 * 2^(E-23)): bits of 2/pi above position E-24 only add multiples of 4
 * quadrants, so a 128-bit window W of 2/pi from there gives x*2/pi mod 4 =
 * (M * W mod 2^128) * 2^-126, with error below 2^-102 quadrants.
 */
static void trig_reduce(pm_ctx *c, pm_w x, pm_w ax, pm_d xd, pm_d *r_out, pm_w *q_out) {
  pm_d k = pm_drint(c, pm_dmul(c, xd, D(TWO_OVER_PI)));
  pm_d nk = pm_dneg(c, k);
  pm_d rcw = pm_dfma(c, nk, D(PIO2_1), xd);
  rcw = pm_dfma(c, nk, D(PIO2_2), rcw);
  rcw = pm_dfma(c, nk, D(PIO2_3), rcw);
  pm_w qcw = pm_s32_of_d_rni(c, k);

  pm_p small = pm_setp_w(c, PM_LT, ax, W(0x48000000u)); /* |x| < 2^17 */
  int skip = pm_skip_if(c, small);
  /* Bit index of the window start in two_over_pi_bits: (E - 24) + 63. */
  pm_w b0 = pm_wsub(c, pm_wshr(c, ax, W(23)), W(88));
  pm_w wi = pm_wshr(c, b0, W(6));
  pm_w sh = pm_wand(c, b0, W(63));
  pm_w nsh = pm_wsub(c, W(64), sh); /* 64 when sh = 0: the shift gives 0 */
  pm_p w0 = pm_setp_w(c, PM_EQ, wi, W(0));
  pm_p w1 = pm_setp_w(c, PM_EQ, wi, W(1));
  const uint64_t *t = two_over_pi_bits;
  pm_u a0 = pm_usel(c, w0, U(t[0]), pm_usel(c, w1, U(t[1]), U(t[2])));
  pm_u a1 = pm_usel(c, w0, U(t[1]), pm_usel(c, w1, U(t[2]), U(t[3])));
  pm_u a2 = pm_usel(c, w0, U(t[2]), pm_usel(c, w1, U(t[3]), U(t[4])));
  pm_u whi = pm_uor(c, pm_ushl(c, a0, sh), pm_ushr(c, a1, nsh));
  pm_u wlo = pm_uor(c, pm_ushl(c, a1, sh), pm_ushr(c, a2, nsh));
  pm_u m = pm_u_of_w(c, pm_wor(c, pm_wand(c, ax, W(0x007FFFFFu)), W(0x00800000u)));
  pm_u plo = pm_umul_lo(c, m, wlo);
  pm_u phi = pm_uadd(c, pm_umul_lo(c, m, whi), pm_umul_hi(c, m, wlo));
  /* Fraction as a signed 128-bit value: rounding q to nearest is just
   * reading the fraction's top bit as a sign. */
  pm_u ahi = pm_uor(c, pm_ushl(c, phi, W(2)), pm_ushr(c, plo, W(62)));
  pm_u alo = pm_ushl(c, plo, W(2));
  pm_w qph = pm_w_of_u(c, pm_uadd(c, pm_ushr(c, phi, W(62)), pm_ushr(c, ahi, W(63))));
  pm_d v = pm_dfma(c, pm_d_of_s64(c, ahi), D(0x1p-64), pm_dmul(c, pm_d_of_u64(c, alo), D(0x1p-128)));
  pm_d rph = pm_dfma(c, v, D(PIO2_HI), pm_dmul(c, v, D(PIO2_LO)));
  pm_p neg = is_neg(c, x);
  rph = pm_dsel(c, neg, pm_dneg(c, rph), rph);
  qph = pm_wsel(c, neg, pm_wsub(c, W(0), qph), qph);
  pm_label(c, skip);

  *r_out = pm_dsel(c, small, rcw, rph);
  *q_out = pm_wand(c, pm_wsel(c, small, qcw, qph), W(3));
}

typedef enum trig_kind { TRIG_SIN, TRIG_COS, TRIG_TAN } trig_kind;

static pm_w algo_trig(pm_ctx *c, pm_w x, trig_kind kind) {
  pm_w ax = pm_wand(c, x, W(0x7FFFFFFFu));
  pm_d xd = pm_d_of_f32bits(c, x);
  pm_d r;
  pm_w q;
  trig_reduce(c, x, ax, xd, &r, &q);
  pm_d z = pm_dmul(c, r, r);
  pm_d s = pm_dfma(c, r, pm_dmul(c, z, horner(c, z, sin_coef, 8)), r);
  pm_d co = pm_dfma(c, z, horner(c, z, cos_coef, 9), D(1.0));
  pm_p odd = pm_setp_w(c, PM_NE, pm_wand(c, q, W(1)), W(0));
  pm_d res;
  if (kind == TRIG_TAN) {
    res = pm_ddiv(c, pm_dsel(c, odd, pm_dneg(c, co), s), pm_dsel(c, odd, s, co));
  } else {
    pm_w qq = kind == TRIG_SIN ? q : pm_wadd(c, q, W(1));
    pm_p flip = pm_setp_w(c, PM_NE, pm_wand(c, qq, W(2)), W(0));
    res = kind == TRIG_SIN ? pm_dsel(c, odd, co, s) : pm_dsel(c, odd, s, co);
    res = pm_dsel(c, flip, pm_dneg(c, res), res);
  }
  pm_w out = finish(c, res);
  out = pm_wsel(c, is_nonfinite(c, ax), W(0x7FC00000u), out);
  if (kind != TRIG_COS) out = pm_wsel(c, is_zero(c, ax), x, out); /* keep -0 */
  return out;
}

/* atan t for t >= 0 (t may be +inf or NaN).  t > 1 uses pi/2 - atan(1/t);
 * then atan a = atan c + atan((a - c)/(1 + c a)) with c in {0, 1/2, 1}
 * leaves |u| <= 1/4; a - c is exact (Sterbenz) on each interval. */
static pm_d atan_core(pm_ctx *c, pm_d t) {
  pm_p inv = pm_setp_d(c, PM_GT, t, D(1.0));
  pm_d a = pm_dsel(c, inv, pm_ddiv(c, D(1.0), t), t);
  pm_p mid = pm_setp_d(c, PM_GE, a, D(0.25));
  pm_p hi = pm_setp_d(c, PM_GE, a, D(0.75));
  pm_d cc = pm_dsel(c, hi, D(1.0), pm_dsel(c, mid, D(0.5), D(0.0)));
  pm_d u = pm_ddiv(c, pm_dsub(c, a, cc), pm_dfma(c, cc, a, D(1.0)));
  pm_d z = pm_dmul(c, u, u);
  pm_d p = pm_dfma(c, u, pm_dmul(c, z, horner(c, z, atan_coef, 12)), u);
  pm_d bhi = pm_dsel(c, hi, D(PIO4_HI), pm_dsel(c, mid, D(ATAN_HALF_HI), D(0.0)));
  pm_d blo = pm_dsel(c, hi, D(PIO4_LO), pm_dsel(c, mid, D(ATAN_HALF_LO), D(0.0)));
  pm_d res = pm_dadd(c, bhi, pm_dadd(c, blo, p));
  pm_d rinv = pm_dadd(c, pm_dsub(c, D(PIO2_HI), res), D(PIO2_LO));
  return pm_dsel(c, inv, rinv, res);
}

static pm_w algo_atan(pm_ctx *c, pm_w x) {
  pm_w ax = pm_wand(c, x, W(0x7FFFFFFFu));
  pm_d xd = pm_d_of_f32bits(c, x);
  pm_d r = atan_core(c, pm_dabs(c, xd));
  r = pm_dsel(c, is_neg(c, x), pm_dneg(c, r), r);
  return pm_wsel(c, is_zero(c, ax), x, finish(c, r));
}

static pm_w algo_asin(pm_ctx *c, pm_w x) {
  /* asin x = atan(|x| / sqrt((1-|x|)(1+|x|))); |x| = 1 gives atan(inf). */
  pm_w ax = pm_wand(c, x, W(0x7FFFFFFFu));
  pm_d a = pm_dabs(c, pm_d_of_f32bits(c, x));
  pm_d den = pm_dsqrt(c, pm_dmul(c, pm_dsub(c, D(1.0), a), pm_dadd(c, D(1.0), a)));
  pm_d r = atan_core(c, pm_ddiv(c, a, den));
  r = pm_dsel(c, is_neg(c, x), pm_dneg(c, r), r);
  pm_w out = finish(c, r);
  out = pm_wsel(c, pm_setp_w(c, PM_GT, ax, W(0x3F800000u)), W(0x7FC00000u), out);
  return pm_wsel(c, is_zero(c, ax), x, out);
}

static pm_w algo_acos(pm_ctx *c, pm_w x) {
  /* acos x = 2 atan(sqrt((1-x)/(1+x))): acos 1 = 0 exactly, acos -1 = pi. */
  pm_w ax = pm_wand(c, x, W(0x7FFFFFFFu));
  pm_d xd = pm_d_of_f32bits(c, x);
  pm_d t = pm_dsqrt(c, pm_ddiv(c, pm_dsub(c, D(1.0), xd), pm_dadd(c, D(1.0), xd)));
  pm_d r = pm_dmul(c, atan_core(c, t), D(2.0));
  pm_w out = finish(c, r);
  return pm_wsel(c, pm_setp_w(c, PM_GT, ax, W(0x3F800000u)), W(0x7FC00000u), out);
}

typedef enum hyp_kind { HYP_SINH, HYP_COSH, HYP_TANH } hyp_kind;

static pm_w algo_hyp(pm_ctx *c, pm_w x, hyp_kind kind) {
  pm_w ax = pm_wand(c, x, W(0x7FFFFFFFu));
  pm_d a = pm_dabs(c, pm_d_of_f32bits(c, x));
  pm_d res;
  if (kind == HYP_COSH) {
    /* (e^a + e^-a)/2: no cancellation; e^100 is past the f32 range. */
    pm_d e = exp_core(c, clamp(c, a, 0.0, 100.0));
    res = pm_dmul(c, pm_dadd(c, e, pm_ddiv(c, D(1.0), e)), D(0.5));
    return finish(c, res);
  }
  /* |x| < 1/2: the series, which keeps relative accuracy near 0. */
  pm_p small = pm_setp_d(c, PM_LT, a, D(0.5));
  pm_d z = pm_dmul(c, a, a);
  pm_d sm = pm_dfma(c, a, pm_dmul(c, z, horner(c, z, sinh_coef, 7)), a);
  if (kind == HYP_SINH) {
    pm_d e = exp_core(c, clamp(c, a, 0.0, 100.0));
    pm_d big = pm_dmul(c, pm_dsub(c, e, pm_ddiv(c, D(1.0), e)), D(0.5));
    res = pm_dsel(c, small, sm, big);
  } else {
    /* tanh a = (1 - e^-2a)/(1 + e^-2a); tanh 20 rounds to 1 in f32. */
    pm_d f = exp_core(c, pm_dmul(c, clamp(c, a, 0.0, 20.0), D(-2.0)));
    pm_d big = pm_ddiv(c, pm_dsub(c, D(1.0), f), pm_dadd(c, D(1.0), f));
    pm_d tsm = pm_ddiv(c, sm, pm_dsqrt(c, pm_dfma(c, sm, sm, D(1.0))));
    res = pm_dsel(c, small, tsm, big);
  }
  res = pm_dsel(c, is_neg(c, x), pm_dneg(c, res), res);
  return pm_wsel(c, is_zero(c, ax), x, finish(c, res));
}

/* PM_FAST ------------------------------------------------------------- */

static pm_w fast_rsqrt(pm_ctx *c, pm_w x) {
  /* PTX ISA 9.7.3.16 (rsqrt): +-0 -> +-inf, +inf -> +0, x < 0 -> NaN. */
  return finish_w(c, pm_rsqrt_approx(c, x));
}

/* 2^y for y = n + f, |f| <= 1/2 exact in f32: ex2.approx on f only, so
 * its relative bound holds on a range where it is a ULP bound, f = 0
 * gives 1 exactly (PTX ISA 9.7.3.21: ex2(+-0) = 1), and the scaling by
 * 2^n is exact in f64. */
static pm_w fast_exp2_of(pm_ctx *c, pm_d n, pm_d f) {
  pm_w e = pm_ex2_approx(c, pm_f32bits_of_d(c, f));
  return finish(c, scale2(c, pm_d_of_f32bits(c, e), pm_s32_of_d_rni(c, n)));
}

static pm_w fast_exp2(pm_ctx *c, pm_w x) {
  pm_d y = clamp(c, pm_d_of_f32bits(c, x), -200.0, 200.0);
  pm_d n = pm_drint(c, y);
  return fast_exp2_of(c, n, pm_dsub(c, y, n));
}

static pm_w fast_exp(pm_ctx *c, pm_w x) {
  /* t = x / ln2 in f64 (error < 2^-45); only f's rounding to f32 (< 2^-26)
   * adds to the hardware error. */
  pm_d y = clamp(c, pm_d_of_f32bits(c, x), -110.0, 100.0);
  pm_d t = pm_dmul(c, y, D(INV_LN2));
  pm_d n = pm_drint(c, t);
  return fast_exp2_of(c, n, pm_dsub(c, t, n));
}

int pm_algo_has(uint32_t op, pm_variant variant) {
  if (variant == PM_CR) variant = PM_ACCURATE;
  switch (op) {
    case VYRE_OP_RSQRT:
    case VYRE_OP_EXP:
    case VYRE_OP_EXP2:
      return variant == PM_ACCURATE || variant == PM_FAST;
    case VYRE_OP_LOG:
    case VYRE_OP_LOG2:
    case VYRE_OP_SIN:
    case VYRE_OP_COS:
    case VYRE_OP_TAN:
    case VYRE_OP_ASIN:
    case VYRE_OP_ACOS:
    case VYRE_OP_ATAN:
    case VYRE_OP_SINH:
    case VYRE_OP_COSH:
    case VYRE_OP_TANH:
      return variant == PM_ACCURATE;
    default:
      return 0;
  }
}

int pm_algo_run(pm_ctx *c, uint32_t op, pm_variant variant, uint32_t xbits) {
  if (!pm_algo_has(op, variant)) return -1;
  pm_w x = pm_input(c, xbits);
  pm_w y;
  if (variant == PM_FAST) {
    switch (op) {
      case VYRE_OP_RSQRT: y = fast_rsqrt(c, x); break;
      case VYRE_OP_EXP2: y = fast_exp2(c, x); break;
      default: y = fast_exp(c, x); break;
    }
    pm_output(c, y);
    return 0;
  }
  c->cr = variant == PM_CR;
  c->near_tie_set = 0;
  switch (op) {
    case VYRE_OP_RSQRT: y = algo_rsqrt(c, x); break;
    case VYRE_OP_EXP: y = algo_exp(c, x); break;
    case VYRE_OP_EXP2: y = algo_exp2(c, x); break;
    case VYRE_OP_LOG: y = algo_log(c, x); break;
    case VYRE_OP_LOG2: y = algo_log2(c, x); break;
    case VYRE_OP_SIN: y = algo_trig(c, x, TRIG_SIN); break;
    case VYRE_OP_COS: y = algo_trig(c, x, TRIG_COS); break;
    case VYRE_OP_TAN: y = algo_trig(c, x, TRIG_TAN); break;
    case VYRE_OP_ASIN: y = algo_asin(c, x); break;
    case VYRE_OP_ACOS: y = algo_acos(c, x); break;
    case VYRE_OP_ATAN: y = algo_atan(c, x); break;
    case VYRE_OP_SINH: y = algo_hyp(c, x, HYP_SINH); break;
    case VYRE_OP_COSH: y = algo_hyp(c, x, HYP_COSH); break;
    default: y = algo_hyp(c, x, HYP_TANH); break;
  }
  if (c->cr) y = cr_fix(c, x, y, op);
  pm_output(c, y);
  return 0;
}
