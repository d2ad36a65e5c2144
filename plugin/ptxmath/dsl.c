/* dsl.c -- the primitives behind dsl.h: exact C semantics of each PTX instruction, and its text. */
#include "dsl.h"
#include "abi/support/bits.h"

#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

/* Operand text.  Register operands name their register; immediates use the
 * exact PTX forms (0dHHHH... for f64, hex for integers). */
typedef struct opnd { char s[32]; } opnd;

static opnd od(pm_d a) {
  opnd o;
  if (a.r >= 0) {
    snprintf(o.s, sizeof o.s, "%%fd%d", a.r);
  } else {
    uint64_t u;
    memcpy(&u, &a.v, sizeof u);
    snprintf(o.s, sizeof o.s, "0d%016" PRIX64, u);
  }
  return o;
}

static opnd ou(pm_u a) {
  opnd o;
  if (a.r >= 0) snprintf(o.s, sizeof o.s, "%%rd%d", a.r);
  else snprintf(o.s, sizeof o.s, "0x%016" PRIX64, a.v);
  return o;
}

static opnd ow(pm_w a) {
  opnd o;
  if (a.r >= 0) snprintf(o.s, sizeof o.s, "%%r%d", a.r);
  else snprintf(o.s, sizeof o.s, "0x%08" PRIX32, a.v);
  return o;
}

static opnd op_(pm_p a) {
  opnd o;
  snprintf(o.s, sizeof o.s, "%%p%d", a.r);
  return o;
}

pm_d pm_dimm(double v) { return (pm_d){v, -1}; }
pm_u pm_uimm(uint64_t v) { return (pm_u){v, -1}; }
pm_w pm_wimm(uint32_t v) { return (pm_w){v, -1}; }

static pm_d new_d(pm_ctx *c) { return (pm_d){0.0, c->nfd++}; }
static pm_u new_u(pm_ctx *c) { return (pm_u){0, c->nrd++}; }
static pm_w new_w(pm_ctx *c) { return (pm_w){0, c->nr++}; }
static pm_p new_p(pm_ctx *c) { return (pm_p){0, c->np++}; }

static pm_d emit_d2(pm_ctx *c, const char *ins, pm_d a, pm_d b) {
  pm_d o = new_d(c);
  vyre__sb_printf(c->sb, "\t%s %s, %s, %s;\n", ins, od(o).s, od(a).s, od(b).s);
  return o;
}

static pm_d emit_d1(pm_ctx *c, const char *ins, pm_d a) {
  pm_d o = new_d(c);
  vyre__sb_printf(c->sb, "\t%s %s, %s;\n", ins, od(o).s, od(a).s);
  return o;
}

pm_d pm_dadd(pm_ctx *c, pm_d a, pm_d b) {
  if (c->emit) return emit_d2(c, "add.rn.f64", a, b);
  return pm_dimm(a.v + b.v);
}

pm_d pm_dsub(pm_ctx *c, pm_d a, pm_d b) {
  if (c->emit) return emit_d2(c, "sub.rn.f64", a, b);
  return pm_dimm(a.v - b.v);
}

pm_d pm_dmul(pm_ctx *c, pm_d a, pm_d b) {
  if (c->emit) return emit_d2(c, "mul.rn.f64", a, b);
  return pm_dimm(a.v * b.v);
}

pm_d pm_dfma(pm_ctx *c, pm_d a, pm_d b, pm_d d) {
  if (c->emit) {
    pm_d o = new_d(c);
    vyre__sb_printf(c->sb, "\tfma.rn.f64 %s, %s, %s, %s;\n", od(o).s, od(a).s, od(b).s, od(d).s);
    return o;
  }
  return pm_dimm(fma(a.v, b.v, d.v));
}

pm_d pm_ddiv(pm_ctx *c, pm_d a, pm_d b) {
  if (c->emit) return emit_d2(c, "div.rn.f64", a, b);
  return pm_dimm(a.v / b.v);
}

pm_d pm_dsqrt(pm_ctx *c, pm_d a) {
  if (c->emit) return emit_d1(c, "sqrt.rn.f64", a);
  return pm_dimm(sqrt(a.v));
}

pm_d pm_dneg(pm_ctx *c, pm_d a) {
  if (c->emit) return emit_d1(c, "neg.f64", a);
  return pm_dimm(-a.v);
}

pm_d pm_dabs(pm_ctx *c, pm_d a) {
  if (c->emit) return emit_d1(c, "abs.f64", a);
  return pm_dimm(fabs(a.v));
}

pm_d pm_drint(pm_ctx *c, pm_d a) {
  if (c->emit) return emit_d1(c, "cvt.rni.f64.f64", a);
  /* The model runs in the default rounding mode: rint is ties-to-even. */
  return pm_dimm(rint(a.v));
}

pm_d pm_dsel(pm_ctx *c, pm_p p, pm_d a, pm_d b) {
  if (c->emit) {
    pm_d o = new_d(c);
    vyre__sb_printf(c->sb, "\tselp.f64 %s, %s, %s, %s;\n", od(o).s, od(a).s, od(b).s, op_(p).s);
    return o;
  }
  return p.v ? a : b;
}

pm_d pm_d_of_f32bits(pm_ctx *c, pm_w w) {
  if (c->emit) {
    int f = c->nf++;
    pm_d o = new_d(c);
    vyre__sb_printf(c->sb, "\tmov.b32 %%f%d, %s;\n\tcvt.f64.f32 %s, %%f%d;\n", f, ow(w).s, od(o).s, f);
    return o;
  }
  return pm_dimm((double)vyre__f32_from_bits(w.v));
}

pm_w pm_f32bits_of_d(pm_ctx *c, pm_d a) {
  if (c->emit) {
    int f = c->nf++;
    pm_w o = new_w(c);
    vyre__sb_printf(c->sb, "\tcvt.rn.f32.f64 %%f%d, %s;\n\tmov.b32 %s, %%f%d;\n", f, od(a).s, ow(o).s, f);
    return o;
  }
  return pm_wimm(vyre__f32_bits((float)a.v));
}

pm_d pm_d_of_s32(pm_ctx *c, pm_w w) {
  if (c->emit) {
    pm_d o = new_d(c);
    vyre__sb_printf(c->sb, "\tcvt.rn.f64.s32 %s, %s;\n", od(o).s, ow(w).s);
    return o;
  }
  return pm_dimm((double)(int32_t)w.v);
}

pm_d pm_d_of_s64(pm_ctx *c, pm_u u) {
  if (c->emit) {
    pm_d o = new_d(c);
    vyre__sb_printf(c->sb, "\tcvt.rn.f64.s64 %s, %s;\n", od(o).s, ou(u).s);
    return o;
  }
  return pm_dimm((double)(int64_t)u.v);
}

pm_d pm_d_of_u64(pm_ctx *c, pm_u u) {
  if (c->emit) {
    pm_d o = new_d(c);
    vyre__sb_printf(c->sb, "\tcvt.rn.f64.u64 %s, %s;\n", od(o).s, ou(u).s);
    return o;
  }
  return pm_dimm((double)u.v);
}

pm_w pm_s32_of_d_rni(pm_ctx *c, pm_d a) {
  if (c->emit) {
    pm_w o = new_w(c);
    vyre__sb_printf(c->sb, "\tcvt.rni.s32.f64 %s, %s;\n", ow(o).s, od(a).s);
    return o;
  }
  /* PTX float-to-integer conversions saturate and turn NaN into 0. */
  double r = rint(a.v);
  int32_t v;
  if (isnan(r)) v = 0;
  else if (r >= 2147483647.0) v = INT32_MAX;
  else if (r <= -2147483648.0) v = INT32_MIN;
  else v = (int32_t)r;
  return pm_wimm((uint32_t)v);
}

pm_u pm_bits_of_d(pm_ctx *c, pm_d a) {
  if (c->emit) {
    pm_u o = new_u(c);
    vyre__sb_printf(c->sb, "\tmov.b64 %s, %s;\n", ou(o).s, od(a).s);
    return o;
  }
  return pm_uimm(vyre__f64_bits(a.v));
}

pm_d pm_d_of_bits(pm_ctx *c, pm_u u) {
  if (c->emit) {
    pm_d o = new_d(c);
    vyre__sb_printf(c->sb, "\tmov.b64 %s, %s;\n", od(o).s, ou(u).s);
    return o;
  }
  return pm_dimm(vyre__f64_from_bits(u.v));
}

pm_u pm_u_of_w(pm_ctx *c, pm_w w) {
  if (c->emit) {
    pm_u o = new_u(c);
    vyre__sb_printf(c->sb, "\tcvt.u64.u32 %s, %s;\n", ou(o).s, ow(w).s);
    return o;
  }
  return pm_uimm(w.v);
}

pm_w pm_w_of_u(pm_ctx *c, pm_u u) {
  if (c->emit) {
    pm_w o = new_w(c);
    vyre__sb_printf(c->sb, "\tcvt.u32.u64 %s, %s;\n", ow(o).s, ou(u).s);
    return o;
  }
  return pm_wimm((uint32_t)u.v);
}

static pm_u emit_u2(pm_ctx *c, const char *ins, pm_u a, pm_u b) {
  pm_u o = new_u(c);
  vyre__sb_printf(c->sb, "\t%s %s, %s, %s;\n", ins, ou(o).s, ou(a).s, ou(b).s);
  return o;
}

pm_u pm_uand(pm_ctx *c, pm_u a, pm_u b) {
  if (c->emit) return emit_u2(c, "and.b64", a, b);
  return pm_uimm(a.v & b.v);
}

pm_u pm_uor(pm_ctx *c, pm_u a, pm_u b) {
  if (c->emit) return emit_u2(c, "or.b64", a, b);
  return pm_uimm(a.v | b.v);
}

pm_u pm_uadd(pm_ctx *c, pm_u a, pm_u b) {
  if (c->emit) return emit_u2(c, "add.u64", a, b);
  return pm_uimm(a.v + b.v);
}

pm_u pm_usub(pm_ctx *c, pm_u a, pm_u b) {
  if (c->emit) return emit_u2(c, "sub.u64", a, b);
  return pm_uimm(a.v - b.v);
}

pm_u pm_umul_lo(pm_ctx *c, pm_u a, pm_u b) {
  if (c->emit) return emit_u2(c, "mul.lo.u64", a, b);
  return pm_uimm(a.v * b.v);
}

pm_u pm_umul_hi(pm_ctx *c, pm_u a, pm_u b) {
  if (c->emit) return emit_u2(c, "mul.hi.u64", a, b);
  return pm_uimm((uint64_t)(((unsigned __int128)a.v * b.v) >> 64));
}

pm_u pm_ushl(pm_ctx *c, pm_u a, pm_w n) {
  if (c->emit) {
    pm_u o = new_u(c);
    vyre__sb_printf(c->sb, "\tshl.b64 %s, %s, %s;\n", ou(o).s, ou(a).s, ow(n).s);
    return o;
  }
  return pm_uimm(n.v >= 64 ? 0 : a.v << n.v);
}

pm_u pm_ushr(pm_ctx *c, pm_u a, pm_w n) {
  if (c->emit) {
    pm_u o = new_u(c);
    vyre__sb_printf(c->sb, "\tshr.u64 %s, %s, %s;\n", ou(o).s, ou(a).s, ow(n).s);
    return o;
  }
  return pm_uimm(n.v >= 64 ? 0 : a.v >> n.v);
}

pm_u pm_usel(pm_ctx *c, pm_p p, pm_u a, pm_u b) {
  if (c->emit) {
    pm_u o = new_u(c);
    vyre__sb_printf(c->sb, "\tselp.b64 %s, %s, %s, %s;\n", ou(o).s, ou(a).s, ou(b).s, op_(p).s);
    return o;
  }
  return p.v ? a : b;
}

static pm_w emit_w2(pm_ctx *c, const char *ins, pm_w a, pm_w b) {
  pm_w o = new_w(c);
  vyre__sb_printf(c->sb, "\t%s %s, %s, %s;\n", ins, ow(o).s, ow(a).s, ow(b).s);
  return o;
}

pm_w pm_wand(pm_ctx *c, pm_w a, pm_w b) {
  if (c->emit) return emit_w2(c, "and.b32", a, b);
  return pm_wimm(a.v & b.v);
}

pm_w pm_wor(pm_ctx *c, pm_w a, pm_w b) {
  if (c->emit) return emit_w2(c, "or.b32", a, b);
  return pm_wimm(a.v | b.v);
}

pm_w pm_wxor(pm_ctx *c, pm_w a, pm_w b) {
  if (c->emit) return emit_w2(c, "xor.b32", a, b);
  return pm_wimm(a.v ^ b.v);
}

pm_w pm_wadd(pm_ctx *c, pm_w a, pm_w b) {
  if (c->emit) return emit_w2(c, "add.u32", a, b);
  return pm_wimm(a.v + b.v);
}

pm_w pm_wsub(pm_ctx *c, pm_w a, pm_w b) {
  if (c->emit) return emit_w2(c, "sub.u32", a, b);
  return pm_wimm(a.v - b.v);
}

pm_w pm_wshl(pm_ctx *c, pm_w a, pm_w n) {
  if (c->emit) return emit_w2(c, "shl.b32", a, n);
  return pm_wimm(n.v >= 32 ? 0 : a.v << n.v);
}

pm_w pm_wshr(pm_ctx *c, pm_w a, pm_w n) {
  if (c->emit) return emit_w2(c, "shr.u32", a, n);
  return pm_wimm(n.v >= 32 ? 0 : a.v >> n.v);
}

pm_w pm_wsel(pm_ctx *c, pm_p p, pm_w a, pm_w b) {
  if (c->emit) {
    pm_w o = new_w(c);
    vyre__sb_printf(c->sb, "\tselp.b32 %s, %s, %s, %s;\n", ow(o).s, ow(a).s, ow(b).s, op_(p).s);
    return o;
  }
  return p.v ? a : b;
}

static const char *cmp_name(pm_cmp op) {
  switch (op) {
    case PM_LT: return "lt";
    case PM_LE: return "le";
    case PM_GT: return "gt";
    case PM_GE: return "ge";
    case PM_EQ: return "eq";
    case PM_NE: return "ne";
    case PM_NAN: return "nan";
  }
  return "eq";
}

pm_p pm_setp_d(pm_ctx *c, pm_cmp op, pm_d a, pm_d b) {
  if (c->emit) {
    pm_p o = new_p(c);
    vyre__sb_printf(c->sb, "\tsetp.%s.f64 %s, %s, %s;\n", cmp_name(op), op_(o).s, od(a).s, od(b).s);
    return o;
  }
  int v = 0;
  switch (op) {
    case PM_LT: v = a.v < b.v; break;
    case PM_LE: v = a.v <= b.v; break;
    case PM_GT: v = a.v > b.v; break;
    case PM_GE: v = a.v >= b.v; break;
    case PM_EQ: v = a.v == b.v; break;
    /* PTX "ne" on floats is ordered: false when either is NaN. */
    case PM_NE: v = !isnan(a.v) && !isnan(b.v) && a.v != b.v; break;
    case PM_NAN: v = isnan(a.v) || isnan(b.v); break;
  }
  return (pm_p){v, -1};
}

static int cmp_u(pm_cmp op, uint64_t a, uint64_t b) {
  switch (op) {
    case PM_LT: return a < b;
    case PM_LE: return a <= b;
    case PM_GT: return a > b;
    case PM_GE: return a >= b;
    case PM_EQ: return a == b;
    case PM_NE: return a != b;
    case PM_NAN: return 0;
  }
  return 0;
}

pm_p pm_setp_u(pm_ctx *c, pm_cmp op, pm_u a, pm_u b) {
  if (c->emit) {
    pm_p o = new_p(c);
    vyre__sb_printf(c->sb, "\tsetp.%s.u64 %s, %s, %s;\n", cmp_name(op), op_(o).s, ou(a).s, ou(b).s);
    return o;
  }
  return (pm_p){cmp_u(op, a.v, b.v), -1};
}

pm_p pm_setp_w(pm_ctx *c, pm_cmp op, pm_w a, pm_w b) {
  if (c->emit) {
    pm_p o = new_p(c);
    vyre__sb_printf(c->sb, "\tsetp.%s.u32 %s, %s, %s;\n", cmp_name(op), op_(o).s, ow(a).s, ow(b).s);
    return o;
  }
  return (pm_p){cmp_u(op, a.v, b.v), -1};
}

pm_p pm_pand(pm_ctx *c, pm_p a, pm_p b) {
  if (c->emit) {
    pm_p o = new_p(c);
    vyre__sb_printf(c->sb, "\tand.pred %s, %s, %s;\n", op_(o).s, op_(a).s, op_(b).s);
    return o;
  }
  return (pm_p){a.v && b.v, -1};
}

pm_p pm_por(pm_ctx *c, pm_p a, pm_p b) {
  if (c->emit) {
    pm_p o = new_p(c);
    vyre__sb_printf(c->sb, "\tor.pred %s, %s, %s;\n", op_(o).s, op_(a).s, op_(b).s);
    return o;
  }
  return (pm_p){a.v || b.v, -1};
}

pm_p pm_pnot(pm_ctx *c, pm_p a) {
  if (c->emit) {
    pm_p o = new_p(c);
    vyre__sb_printf(c->sb, "\tnot.pred %s, %s;\n", op_(o).s, op_(a).s);
    return o;
  }
  return (pm_p){!a.v, -1};
}

/* .ftz on the input: a subnormal operand acts as a zero of its sign. */
static double ftz_in(uint32_t w) {
  if ((w & 0x7F800000u) == 0) w &= 0x80000000u;
  return (double)vyre__f32_from_bits(w);
}

/* .ftz on the output: a subnormal result becomes a zero of its sign. */
static uint32_t ftz_out(float f) {
  uint32_t w = vyre__f32_bits(f);
  if ((w & 0x7F800000u) == 0) w &= 0x80000000u;
  return w;
}

static pm_w emit_approx(pm_ctx *c, const char *ins, pm_w x) {
  int fi = c->nf++, fo = c->nf++;
  pm_w o = new_w(c);
  vyre__sb_printf(c->sb, "\tmov.b32 %%f%d, %s;\n\t%s %%f%d, %%f%d;\n\tmov.b32 %s, %%f%d;\n", fi, ow(x).s, ins,
            fo, fi, ow(o).s, fo);
  return o;
}

pm_w pm_rsqrt_approx(pm_ctx *c, pm_w x) {
  if (c->emit) return emit_approx(c, "rsqrt.approx.ftz.f32", x);
  c->approx_used = 1;
  return pm_wimm(ftz_out((float)(1.0 / sqrt(ftz_in(x.v)))));
}

pm_w pm_ex2_approx(pm_ctx *c, pm_w x) {
  if (c->emit) return emit_approx(c, "ex2.approx.ftz.f32", x);
  c->approx_used = 1;
  return pm_wimm(ftz_out((float)exp2(ftz_in(x.v))));
}

int pm_skip_if(pm_ctx *c, pm_p p) {
  if (!c->emit) return -1;
  int l = c->nlabel++;
  vyre__sb_printf(c->sb, "\t@%s bra $Lpm_%d;\n", op_(p).s, l);
  return l;
}

void pm_label(pm_ctx *c, int label) {
  if (c->emit && label >= 0) vyre__sb_printf(c->sb, "$Lpm_%d:\n", label);
}

pm_w pm_input(pm_ctx *c, uint32_t xbits) {
  if (c->emit) {
    pm_w o = new_w(c);
    vyre__sb_printf(c->sb, "\tmov.b32 %s, %%arg;\n", ow(o).s);
    return o;
  }
  return pm_wimm(xbits);
}

void pm_output(pm_ctx *c, pm_w w) {
  if (c->emit) {
    vyre__sb_printf(c->sb, "\tmov.b32 %%res, %s;\n", ow(w).s);
    return;
  }
  c->result = w.v;
}
