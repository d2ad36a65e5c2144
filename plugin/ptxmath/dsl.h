/* dsl.h -- one algorithm text, two meanings: each pm_* primitive either computes its value in C (the model) or appends one PTX instruction. */
#ifndef VYRE_PLUGIN_PTXMATH_DSL_H
#define VYRE_PLUGIN_PTXMATH_DSL_H

#include <stdint.h>

#include "abi/support/strbuf.h"

/*
 * The transcendental algorithms (algo.c) are written once against
 * this interface.  In evaluation mode every primitive computes exactly what
 * its PTX instruction computes (IEEE-754 round-to-nearest-even f64, PTX's
 * clamped shifts, saturating conversions) so the C model and the emitted
 * PTX are the same operation sequence by construction.  In emission mode a
 * primitive appends the instruction and returns a fresh virtual register.
 *
 * Values are small structs: `r` < 0 means "immediate/evaluated value in v",
 * `r` >= 0 names register %fd<r>, %rd<r>, %r<r> or %p<r>.
 *
 * Branches: pm_skip_if() emits a forward branch over a block whose results
 * are only ever used through a later pm_*sel on the same predicate; the
 * evaluator computes both sides, which is equivalent because every
 * primitive is pure and free of undefined behaviour for any input.
 */

typedef struct pm_ctx {
  int emit;           /* 1: append PTX to sb; 0: evaluate */
  strbuf *sb;         /* body text (emission only) */
  int nfd, nrd, nr, nf, np, nlabel; /* register/label counters */
  int approx_used;    /* evaluation touched a hardware .approx stand-in */
  int cr;             /* PM_CR: finish() also computes near_tie */
  int near_tie_set;   /* near_tie holds a predicate */
  uint32_t result;    /* evaluation: the value given to pm_output */
  int near_tie_v, near_tie_r; /* the pm_p near_tie: value (evaluation), register */
} pm_ctx;

typedef struct pm_d { double v; int r; } pm_d;     /* .f64 */
typedef struct pm_u { uint64_t v; int r; } pm_u;   /* .b64 */
typedef struct pm_w { uint32_t v; int r; } pm_w;   /* .b32 */
typedef struct pm_p { int v; int r; } pm_p;        /* .pred */

/* Comparison kinds for pm_setp_*; names are the PTX CmpOp. */
typedef enum pm_cmp { PM_LT, PM_LE, PM_GT, PM_GE, PM_EQ, PM_NE, PM_NAN } pm_cmp;

pm_d pm_dimm(double v);
pm_u pm_uimm(uint64_t v);
pm_w pm_wimm(uint32_t v);

/* f64, all round-to-nearest-even (add.rn, sub.rn, mul.rn, fma.rn, div.rn, sqrt.rn). */
pm_d pm_dadd(pm_ctx *c, pm_d a, pm_d b);
pm_d pm_dsub(pm_ctx *c, pm_d a, pm_d b);
pm_d pm_dmul(pm_ctx *c, pm_d a, pm_d b);
pm_d pm_dfma(pm_ctx *c, pm_d a, pm_d b, pm_d d);
pm_d pm_ddiv(pm_ctx *c, pm_d a, pm_d b);
pm_d pm_dsqrt(pm_ctx *c, pm_d a);
pm_d pm_dneg(pm_ctx *c, pm_d a);
pm_d pm_dabs(pm_ctx *c, pm_d a);
pm_d pm_drint(pm_ctx *c, pm_d a);                 /* cvt.rni.f64.f64 */
pm_d pm_dsel(pm_ctx *c, pm_p p, pm_d a, pm_d b);  /* p ? a : b */

/* Conversions and bit moves. */
pm_d pm_d_of_f32bits(pm_ctx *c, pm_w w);   /* exact widening */
pm_w pm_f32bits_of_d(pm_ctx *c, pm_d a);   /* cvt.rn.f32.f64, IEEE (subnormals kept) */
pm_d pm_d_of_s32(pm_ctx *c, pm_w w);       /* cvt.rn.f64.s32 */
pm_d pm_d_of_s64(pm_ctx *c, pm_u u);       /* cvt.rn.f64.s64 */
pm_d pm_d_of_u64(pm_ctx *c, pm_u u);       /* cvt.rn.f64.u64 */
pm_w pm_s32_of_d_rni(pm_ctx *c, pm_d a);   /* cvt.rni.s32.f64: saturating, NaN -> 0 */
pm_u pm_bits_of_d(pm_ctx *c, pm_d a);      /* mov.b64 */
pm_d pm_d_of_bits(pm_ctx *c, pm_u u);      /* mov.b64 */
pm_u pm_u_of_w(pm_ctx *c, pm_w w);         /* cvt.u64.u32 */
pm_w pm_w_of_u(pm_ctx *c, pm_u u);         /* cvt.u32.u64: low half */

/* 64-bit integers; shift amounts >= 64 give 0 (PTX clamps). */
pm_u pm_uand(pm_ctx *c, pm_u a, pm_u b);
pm_u pm_uor(pm_ctx *c, pm_u a, pm_u b);
pm_u pm_uadd(pm_ctx *c, pm_u a, pm_u b);
pm_u pm_usub(pm_ctx *c, pm_u a, pm_u b);
pm_u pm_ushl(pm_ctx *c, pm_u a, pm_w n);
pm_u pm_ushr(pm_ctx *c, pm_u a, pm_w n);
pm_u pm_umul_lo(pm_ctx *c, pm_u a, pm_u b);
pm_u pm_umul_hi(pm_ctx *c, pm_u a, pm_u b);
pm_u pm_usel(pm_ctx *c, pm_p p, pm_u a, pm_u b);

/* 32-bit integers; shift amounts >= 32 give 0. */
pm_w pm_wand(pm_ctx *c, pm_w a, pm_w b);
pm_w pm_wor(pm_ctx *c, pm_w a, pm_w b);
pm_w pm_wxor(pm_ctx *c, pm_w a, pm_w b);
pm_w pm_wadd(pm_ctx *c, pm_w a, pm_w b);
pm_w pm_wsub(pm_ctx *c, pm_w a, pm_w b);
pm_w pm_wshl(pm_ctx *c, pm_w a, pm_w n);
pm_w pm_wshr(pm_ctx *c, pm_w a, pm_w n);
pm_w pm_wsel(pm_ctx *c, pm_p p, pm_w a, pm_w b);

/* Predicates.  f64 compares are ordered (false on NaN) except PM_NAN;
 * integer compares are unsigned (.u32/.u64). */
pm_p pm_setp_d(pm_ctx *c, pm_cmp op, pm_d a, pm_d b);
pm_p pm_setp_u(pm_ctx *c, pm_cmp op, pm_u a, pm_u b);
pm_p pm_setp_w(pm_ctx *c, pm_cmp op, pm_w a, pm_w b);
pm_p pm_pand(pm_ctx *c, pm_p a, pm_p b);
pm_p pm_por(pm_ctx *c, pm_p a, pm_p b);
pm_p pm_pnot(pm_ctx *c, pm_p a);

/* Hardware approximations (PM_FAST only).  The evaluator cannot reproduce
 * the hardware bit for bit: it returns the correctly rounded f32 of the
 * exact function and sets c->approx_used. */
pm_w pm_rsqrt_approx(pm_ctx *c, pm_w xbits);  /* rsqrt.approx.ftz.f32 */
pm_w pm_ex2_approx(pm_ctx *c, pm_w xbits);    /* ex2.approx.ftz.f32 */

/* Control flow (emission only; no-ops when evaluating). */
int pm_skip_if(pm_ctx *c, pm_p p);   /* "@p bra L"; returns L */
void pm_label(pm_ctx *c, int label);

/* Input and output of the function body. */
pm_w pm_input(pm_ctx *c, uint32_t xbits);   /* %arg, or xbits when evaluating */
void pm_output(pm_ctx *c, pm_w w);           /* %res */

#endif /* VYRE_PLUGIN_PTXMATH_DSL_H */
