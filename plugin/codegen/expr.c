/* expr.c -- lowering of value instructions: constants, ids, integer and f32 arithmetic, casts, select. */
#include <string.h>

#include "internal.h"

static int is_signed(uint32_t t) { return t == VYRE_T_I32 || t == VYRE_T_I64; }

static const char *max_of(uint32_t t) {
  switch (t) {
  case VYRE_T_U32: return "0xffffffff";
  case VYRE_T_I32: return "0x7fffffff";
  case VYRE_T_U64: return "0xffffffffffffffff";
  default: return "0x7fffffffffffffff";
  }
}

static void int_div(cg_ctx *c, uint32_t t, const char *r, const char *a, const char *b, int rem) {
  const char *bt = cg_bty(t), *ty = cg_ity(t);
  const char *qz = cg_tp(c), *bs = cg_is64(t) ? cg_t64(c) : cg_t32(c);
  cg_emit(c, "setp.eq.%s %s, %s, 0;", ty, qz, b);
  if (!is_signed(t)) {
    /* x/0 = MAX, x%0 = 0 (x % 1 = 0). */
    cg_emit(c, "selp.%s %s, 1, %s, %s;", bt, bs, b, qz);
    cg_emit(c, "%s.%s %s, %s, %s;", rem ? "rem" : "div", ty, r, a, bs);
    if (!rem) cg_emit(c, "selp.%s %s, %s, %s, %s;", bt, r, max_of(t), r, qz);
    return;
  }
  /* Signed: x/0 = 0, MIN/-1 = MIN (= -MIN wrapped), x%0 = 0, x%-1 = 0. */
  const char *qm = cg_tp(c), *qx = cg_tp(c);
  cg_emit(c, "setp.eq.%s %s, %s, -1;", ty, qm, b);
  cg_emit(c, "or.pred %s, %s, %s;", qx, qz, qm);
  cg_emit(c, "selp.%s %s, 1, %s, %s;", bt, bs, b, qx);
  cg_emit(c, "%s.%s %s, %s, %s;", rem ? "rem" : "div", ty, r, a, bs);
  if (!rem) {
    const char *na = cg_is64(t) ? cg_t64(c) : cg_t32(c);
    cg_emit(c, "neg.%s %s, %s;", ty, na, a);
    cg_emit(c, "selp.%s %s, %s, %s, %s;", bt, r, na, r, qm);
    cg_emit(c, "selp.%s %s, 0, %s, %s;", bt, r, r, qz);
  }
}

static const char *tmp_of(cg_ctx *c, uint32_t t) { return cg_is64(t) ? cg_t64(c) : cg_t32(c); }

static void shift_amount(cg_ctx *c, uint32_t t, const char *s, const char *b) {
  if (cg_is64(t)) {
    cg_emit(c, "cvt.u32.u64 %s, %s;", s, b);
    cg_emit(c, "and.b32 %s, %s, 63;", s, s);
  } else {
    cg_emit(c, "and.b32 %s, %s, 31;", s, b);
  }
}

static void saturating(cg_ctx *c, uint32_t op, uint32_t t, const char *r, const char *a,
                       const char *b) {
  const char *bt = cg_bty(t), *ty = cg_ity(t);
  int s64 = t == VYRE_T_I64;
  if (op == VYRE_OP_SAT_MUL) {
    const char *q = cg_tp(c);
    if (t == VYRE_T_U32 || t == VYRE_T_U64) {
      const char *h = tmp_of(c, t);
      cg_emit(c, "mul.hi.%s %s, %s, %s;", ty, h, a, b);
      cg_emit(c, "mul.lo.%s %s, %s, %s;", ty, r, a, b);
      cg_emit(c, "setp.ne.%s %s, %s, 0;", ty, q, h);
      cg_emit(c, "selp.%s %s, %s, %s, %s;", bt, r, max_of(t), r, q);
    } else if (t == VYRE_T_I32) {
      const char *w = cg_t64(c);
      cg_emit(c, "mul.wide.s32 %s, %s, %s;", w, a, b);
      cg_emit(c, "min.s64 %s, %s, 2147483647;", w, w);
      cg_emit(c, "max.s64 %s, %s, -2147483648;", w, w);
      cg_emit(c, "cvt.u32.u64 %s, %s;", r, w);
    } else {
      const char *h = cg_t64(c), *sl = cg_t64(c), *sg = cg_t64(c);
      cg_emit(c, "mul.hi.s64 %s, %s, %s;", h, a, b);
      cg_emit(c, "mul.lo.s64 %s, %s, %s;", r, a, b);
      cg_emit(c, "shr.s64 %s, %s, 63;", sl, r);
      cg_emit(c, "setp.ne.s64 %s, %s, %s;", q, h, sl);
      cg_emit(c, "xor.b64 %s, %s, %s;", sg, a, b);
      cg_emit(c, "shr.s64 %s, %s, 63;", sg, sg);
      cg_emit(c, "xor.b64 %s, %s, %s;", sg, sg, max_of(t));
      cg_emit(c, "selp.b64 %s, %s, %s, %s;", r, sg, r, q);
    }
    return;
  }
  int add = op == VYRE_OP_SAT_ADD;
  if (t == VYRE_T_I32) {
    /* Not add.sat/sub.sat.s32: on an H200 (CUDA 13.0) `sub.sat.s32` of
     * 0x30D402C6 - 0xB0D402C6 gave the wrapped 0x80000000 instead of
     * INT32_MAX (found by vyre fuzz; docs/codegen.md).  The exact 64-bit
     * result clamped to the i32 range cannot overflow. */
    const char *wa = cg_t64(c), *wb = cg_t64(c);
    cg_emit(c, "cvt.s64.s32 %s, %s;", wa, a);
    cg_emit(c, "cvt.s64.s32 %s, %s;", wb, b);
    cg_emit(c, "%s.s64 %s, %s, %s;", add ? "add" : "sub", wa, wa, wb);
    cg_emit(c, "min.s64 %s, %s, 2147483647;", wa, wa);
    cg_emit(c, "max.s64 %s, %s, -2147483648;", wa, wa);
    cg_emit(c, "cvt.u32.u64 %s, %s;", r, wa);
    return;
  }
  if (!s64) {
    /* Unsigned: wrap means the sum fell below a / the difference went negative. */
    const char *q = cg_tp(c), *x = tmp_of(c, t);
    cg_emit(c, "%s.%s %s, %s, %s;", add ? "add" : "sub", ty, x, a, b);
    if (add) {
      cg_emit(c, "setp.lt.%s %s, %s, %s;", ty, q, x, a);
      cg_emit(c, "selp.%s %s, %s, %s, %s;", bt, r, max_of(t), x, q);
    } else {
      cg_emit(c, "setp.lt.%s %s, %s, %s;", ty, q, a, b);
      cg_emit(c, "selp.%s %s, 0, %s, %s;", bt, r, x, q);
    }
    return;
  }
  /* i64: overflow when the result's sign disagrees with the operands'. */
  const char *x = cg_t64(c), *t1 = cg_t64(c), *t2 = cg_t64(c), *sat = cg_t64(c), *q = cg_tp(c);
  cg_emit(c, "%s.s64 %s, %s, %s;", add ? "add" : "sub", x, a, b);
  if (add) {
    cg_emit(c, "xor.b64 %s, %s, %s;", t1, a, x);
    cg_emit(c, "xor.b64 %s, %s, %s;", t2, b, x);
  } else {
    cg_emit(c, "xor.b64 %s, %s, %s;", t1, a, b);
    cg_emit(c, "xor.b64 %s, %s, %s;", t2, a, x);
  }
  cg_emit(c, "and.b64 %s, %s, %s;", t1, t1, t2);
  cg_emit(c, "setp.lt.s64 %s, %s, 0;", q, t1);
  cg_emit(c, "shr.s64 %s, %s, 63;", sat, a);
  cg_emit(c, "xor.b64 %s, %s, %s;", sat, sat, max_of(t));
  cg_emit(c, "selp.b64 %s, %s, %s, %s;", r, sat, x, q);
}

/* One operand of an and is a u32 constant m2 and the other `x & m1` (m1 a
 * constant, x not): 1 with x, m1 and m2. */
static int masked_operand(const cg_ctx *c, uint32_t a, uint32_t b, uint32_t *x, uint32_t *m1,
                          uint32_t *m2) {
  const vyre_program *p = c->p;
  uint32_t inner = a;
  if (!cg_const_u32(c, b, m2)) {
    if (!cg_const_u32(c, a, m2)) return 0;
    inner = b;
  }
  const vyre_inst *in = &p->insts[inner];
  if (in->op != VYRE_OP_AND || p->value_type[inner] != VYRE_T_U32) return 0;
  if (cg_const_u32(c, in->b, m1)) *x = in->a;
  else if (cg_const_u32(c, in->a, m1)) *x = in->b;
  else return 0;
  return p->insts[*x].op != VYRE_OP_CONST;
}

static void binary(cg_ctx *c, uint32_t i) {
  const vyre_inst *in = &c->p->insts[i];
  uint32_t t = c->p->value_type[in->a];
  const char *r = cg_val(c, i), *a = cg_val(c, in->a), *b = cg_val(c, in->b);
  const char *ty = cg_ity(t), *bt = cg_bty(t);
  if (t == VYRE_T_BOOL) {
    const char *op = "and";
    if (in->op == VYRE_OP_OR || in->op == VYRE_OP_LOGICAL_OR) op = "or";
    else if (in->op == VYRE_OP_XOR) op = "xor";
    cg_emit(c, "%s.pred %s, %s, %s;", op, r, a, b);
    return;
  }
  if (t == VYRE_T_F32) {
    switch (in->op) {
    case VYRE_OP_ADD: cg_emit(c, "add.rn.ftz.f32 %s, %s, %s;", r, a, b); return;
    case VYRE_OP_SUB: cg_emit(c, "sub.rn.ftz.f32 %s, %s, %s;", r, a, b); return;
    case VYRE_OP_MUL: cg_emit(c, "mul.rn.ftz.f32 %s, %s, %s;", r, a, b); return;
    case VYRE_OP_DIV: cg_emit(c, "div.rn.ftz.f32 %s, %s, %s;", r, a, b); return;
    case VYRE_OP_MIN: cg_f32_minmax(c, r, a, b, 0); return;
    case VYRE_OP_MAX: cg_f32_minmax(c, r, a, b, 1); return;
    case VYRE_OP_ABSDIFF: {
      const char *d = cg_t32(c);
      cg_emit(c, "sub.rn.ftz.f32 %s, %s, %s;", d, a, b);
      cg_emit(c, "abs.ftz.f32 %s, %s;", r, d);
      return;
    }
    default: break;
    }
  }
  switch (in->op) {
  case VYRE_OP_ADD:
  case VYRE_OP_WRAP_ADD: cg_emit(c, "add.%s %s, %s, %s;", ty, r, a, b); return;
  case VYRE_OP_SUB:
  case VYRE_OP_WRAP_SUB: cg_emit(c, "sub.%s %s, %s, %s;", ty, r, a, b); return;
  case VYRE_OP_MUL: cg_emit(c, "mul.lo.%s %s, %s, %s;", ty, r, a, b); return;
  case VYRE_OP_DIV: int_div(c, t, r, a, b, 0); return;
  case VYRE_OP_MOD: int_div(c, t, r, a, b, 1); return;
  case VYRE_OP_AND: {
    /* (x & M1) & M2 is x & (M1 & M2): reading x lets the inner and die
     * when this was its last use (ptxas keeps it otherwise). */
    uint32_t m2, m1, x;
    if (t == VYRE_T_U32 && masked_operand(c, in->a, in->b, &x, &m1, &m2)) {
      cg_emit(c, "and.b32 %s, %s, %u;", r, cg_val(c, x), m1 & m2);
      return;
    }
    cg_emit(c, "and.%s %s, %s, %s;", bt, r, a, b);
    return;
  }
  case VYRE_OP_OR: cg_emit(c, "or.%s %s, %s, %s;", bt, r, a, b); return;
  case VYRE_OP_XOR: cg_emit(c, "xor.%s %s, %s, %s;", bt, r, a, b); return;
  case VYRE_OP_SHL:
  case VYRE_OP_SHR: {
    /* PTX clamps shift amounts at the width; the IR takes them mod W. */
    const char *s = cg_t32(c);
    shift_amount(c, t, s, b);
    if (in->op == VYRE_OP_SHL) cg_emit(c, "shl.%s %s, %s, %s;", bt, r, a, s);
    else cg_emit(c, "shr.%s %s, %s, %s;", ty, r, a, s);
    return;
  }
  case VYRE_OP_ROTL:
  case VYRE_OP_ROTR: {
    int left = in->op == VYRE_OP_ROTL;
    if (!cg_is64(t)) {
      /* shf.wrap takes the amount mod 32. */
      cg_emit(c, "shf.%c.wrap.b32 %s, %s, %s, %s;", left ? 'l' : 'r', r, a, a, b);
      return;
    }
    const char *s = cg_t32(c), *ns = cg_t32(c), *x = cg_t64(c), *y = cg_t64(c);
    shift_amount(c, t, s, b);
    cg_emit(c, "neg.s32 %s, %s;", ns, s);
    cg_emit(c, "and.b32 %s, %s, 63;", ns, ns);
    cg_emit(c, "%s.b64 %s, %s, %s;", left ? "shl" : "shr", x, a, s);
    cg_emit(c, "%s.b64 %s, %s, %s;", left ? "shr" : "shl", y, a, ns);
    cg_emit(c, "or.b64 %s, %s, %s;", r, x, y);
    return;
  }
  case VYRE_OP_MIN: cg_emit(c, "min.%s %s, %s, %s;", ty, r, a, b); return;
  case VYRE_OP_MAX: cg_emit(c, "max.%s %s, %s, %s;", ty, r, a, b); return;
  case VYRE_OP_ABSDIFF: {
    const char *x = tmp_of(c, t), *y = tmp_of(c, t), *q = cg_tp(c);
    cg_emit(c, "sub.%s %s, %s, %s;", ty, x, a, b);
    cg_emit(c, "sub.%s %s, %s, %s;", ty, y, b, a);
    cg_emit(c, "setp.gt.%s %s, %s, %s;", ty, q, a, b);
    cg_emit(c, "selp.%s %s, %s, %s, %s;", bt, r, x, y, q);
    return;
  }
  case VYRE_OP_SAT_ADD:
  case VYRE_OP_SAT_SUB:
  case VYRE_OP_SAT_MUL: saturating(c, in->op, t, r, a, b); return;
  case VYRE_OP_MULHI: cg_emit(c, "mul.hi.%s %s, %s, %s;", ty, r, a, b); return;
  default: break;
  }
  cg_fail(c, VYRE_INTERNAL, "codegen: instruction %u: binary op %u on %s has no lowering. Fix: "
          "report this as a bug", i, in->op, vyre_type_name(t));
}

/* `(x & M) < K` (also `K > x & M`, and the negations >= and <=) with K a
 * power of two and M < 2K: x & M < 2K, so it is below K exactly when its
 * bit K is clear, which is (x & (M & K)) == 0.  x is tested directly, so
 * the and dies when that was its last use.  Returns 0 when i is not of
 * that shape. */
static int masked_compare(cg_ctx *c, uint32_t i) {
  const vyre_program *p = c->p;
  const vyre_inst *in = &p->insts[i];
  uint32_t v = in->a, kv = in->b, k, m, x;
  if (in->op == VYRE_OP_GT || in->op == VYRE_OP_LE) {
    v = in->b;
    kv = in->a;
  } else if (in->op != VYRE_OP_LT && in->op != VYRE_OP_GE) {
    return 0;
  }
  const vyre_inst *a = &p->insts[v];
  if (a->op != VYRE_OP_AND || p->value_type[v] != VYRE_T_U32 || !cg_const_u32(c, kv, &k))
    return 0;
  if (cg_const_u32(c, a->b, &m)) x = a->a;
  else if (cg_const_u32(c, a->a, &m)) x = a->b;
  else return 0;
  if (!k || (k & (k - 1u)) || (uint64_t)m >= 2u * (uint64_t)k) return 0;
  /* lt, and gt with K on the left: below K; ge, le: not below K. */
  int below = in->op == VYRE_OP_LT || in->op == VYRE_OP_GT;
  const char *t = cg_t32(c);
  cg_emit(c, "and.b32 %s, %s, %u;", t, cg_val(c, x), m & k);
  cg_emit(c, "setp.%s.u32 %s, %s, 0;", below ? "eq" : "ne", cg_val(c, i), t);
  return 1;
}

static void compare(cg_ctx *c, uint32_t i) {
  const vyre_inst *in = &c->p->insts[i];
  uint32_t t = c->p->value_type[in->a];
  const char *r = cg_val(c, i), *a = cg_val(c, in->a), *b = cg_val(c, in->b);
  if (t == VYRE_T_BOOL) {
    if (in->op == VYRE_OP_NE) {
      cg_emit(c, "xor.pred %s, %s, %s;", r, a, b);
    } else {
      const char *x = cg_tp(c);
      cg_emit(c, "xor.pred %s, %s, %s;", x, a, b);
      cg_emit(c, "not.pred %s, %s;", r, x);
    }
    return;
  }
  if (t == VYRE_T_U32 && masked_compare(c, i)) return;
  static const char *const ops[] = {"eq", "ne", "lt", "le", "gt", "ge"};
  const char *op = ops[in->op - VYRE_OP_EQ];
  if (t == VYRE_T_F32) {
    /* IEEE: ordered compares are false on NaN; ne is unordered (true). */
    if (in->op == VYRE_OP_NE) op = "neu";
    cg_emit(c, "setp.%s.ftz.f32 %s, %s, %s;", op, r, a, b);
    return;
  }
  cg_emit(c, "setp.%s.%s %s, %s, %s;", op, cg_ity(t), r, a, b);
}

static void unpack(cg_ctx *c, uint32_t op, const char *r, const char *a) {
  if (op == VYRE_OP_UNPACK8_LOW || op == VYRE_OP_UNPACK8_HIGH) {
    /* prmt: result bytes (b0, 0, b1, 0) / (b2, 0, b3, 0); selector 4 = a zero byte. */
    cg_emit(c, "prmt.b32 %s, %s, 0, %s;", r, a, op == VYRE_OP_UNPACK8_LOW ? "0x4140" : "0x4342");
    return;
  }
  /* Spread nibbles 0..3 (or 4..7) of x to the low nibble of bytes 0..3. */
  const char *x = cg_t32(c), *y = cg_t32(c);
  if (op == VYRE_OP_UNPACK4_LOW) cg_emit(c, "and.b32 %s, %s, 0xffff;", x, a);
  else cg_emit(c, "shr.u32 %s, %s, 16;", x, a);
  cg_emit(c, "shl.b32 %s, %s, 8;", y, x);
  cg_emit(c, "or.b32 %s, %s, %s;", x, x, y);
  cg_emit(c, "and.b32 %s, %s, 0x00ff00ff;", x, x);
  cg_emit(c, "shl.b32 %s, %s, 4;", y, x);
  cg_emit(c, "or.b32 %s, %s, %s;", x, x, y);
  cg_emit(c, "and.b32 %s, %s, 0x0f0f0f0f;", r, x);
}

static void unary(cg_ctx *c, uint32_t i) {
  const vyre_inst *in = &c->p->insts[i];
  uint32_t t = c->p->value_type[in->a];
  const char *r = cg_val(c, i), *a = cg_val(c, in->a);
  const char *ty = cg_ity(t), *bt = cg_bty(t);
  if (vyre_op_is_transcendental(in->op)) {
    cg_math(c, i);
    return;
  }
  if (t == VYRE_T_F32) {
    switch (in->op) {
    case VYRE_OP_NEG: cg_emit(c, "neg.ftz.f32 %s, %s;", r, a); return;
    case VYRE_OP_ABS: cg_emit(c, "abs.ftz.f32 %s, %s;", r, a); return;
    case VYRE_OP_SIGN: {
      /* NaN -> NaN, +-0 -> +-0, else +-1. */
      const char *s = cg_t32(c), *qz = cg_tp(c);
      cg_emit(c, "and.b32 %s, %s, %x;", s, a, 0x80000000u);
      cg_emit(c, "or.b32 %s, %s, %x;", s, s, 0x3f800000u);
      cg_emit(c, "setp.equ.ftz.f32 %s, %s, 0f00000000;", qz, a); /* zero or NaN */
      cg_emit(c, "selp.b32 %s, %s, %s, %s;", r, a, s, qz);
      return;
    }
    case VYRE_OP_FLOOR: cg_emit(c, "cvt.rmi.ftz.f32.f32 %s, %s;", r, a); return;
    case VYRE_OP_CEIL: cg_emit(c, "cvt.rpi.ftz.f32.f32 %s, %s;", r, a); return;
    case VYRE_OP_ROUND: cg_emit(c, "cvt.rni.ftz.f32.f32 %s, %s;", r, a); return;
    case VYRE_OP_TRUNC: cg_emit(c, "cvt.rzi.ftz.f32.f32 %s, %s;", r, a); return;
    case VYRE_OP_SQRT: cg_emit(c, "sqrt.rn.ftz.f32 %s, %s;", r, a); return;
    case VYRE_OP_RCP: cg_emit(c, "rcp.rn.ftz.f32 %s, %s;", r, a); return;
    default: break;
    }
  }
  switch (in->op) {
  case VYRE_OP_NEG: cg_emit(c, "neg.%s %s, %s;", cg_is64(t) ? "s64" : "s32", r, a); return;
  case VYRE_OP_BITNOT: cg_emit(c, "not.%s %s, %s;", bt, r, a); return;
  case VYRE_OP_NOT: cg_emit(c, "not.pred %s, %s;", r, a); return;
  case VYRE_OP_POPCOUNT:
  case VYRE_OP_CLZ:
  case VYRE_OP_CTZ: {
    const char *src = a;
    if (in->op == VYRE_OP_CTZ) {
      /* ctz(x) = clz(reverse(x)); both give W for 0. */
      src = tmp_of(c, t);
      cg_emit(c, "brev.%s %s, %s;", bt, src, a);
    }
    const char *op = in->op == VYRE_OP_POPCOUNT ? "popc" : "clz";
    if (cg_is64(t)) {
      const char *x = cg_t32(c);
      cg_emit(c, "%s.b64 %s, %s;", op, x, src);
      cg_emit(c, "cvt.u64.u32 %s, %s;", r, x);
    } else {
      cg_emit(c, "%s.b32 %s, %s;", op, r, src);
    }
    return;
  }
  case VYRE_OP_REVERSEBITS: cg_emit(c, "brev.%s %s, %s;", bt, r, a); return;
  case VYRE_OP_ABS:
    if (!is_signed(t)) {
      cg_mov(c, t, r, a);
    } else {
      /* abs(MIN) = MIN: negate explicitly (wraps). */
      const char *x = tmp_of(c, t), *q = cg_tp(c);
      cg_emit(c, "neg.%s %s, %s;", ty, x, a);
      cg_emit(c, "setp.lt.%s %s, %s, 0;", ty, q, a);
      cg_emit(c, "selp.%s %s, %s, %s, %s;", bt, r, x, a, q);
    }
    return;
  case VYRE_OP_SIGN: {
    const char *qp = cg_tp(c);
    if (!is_signed(t)) {
      cg_emit(c, "setp.ne.%s %s, %s, 0;", ty, qp, a);
      cg_emit(c, "selp.%s %s, 1, 0, %s;", bt, r, qp);
    } else {
      const char *qn = cg_tp(c), *x = tmp_of(c, t);
      cg_emit(c, "setp.gt.%s %s, %s, 0;", ty, qp, a);
      cg_emit(c, "setp.lt.%s %s, %s, 0;", ty, qn, a);
      cg_emit(c, "selp.%s %s, 1, 0, %s;", bt, x, qp);
      cg_emit(c, "selp.%s %s, -1, %s, %s;", bt, r, x, qn);
    }
    return;
  }
  case VYRE_OP_UNPACK4_LOW:
  case VYRE_OP_UNPACK4_HIGH:
  case VYRE_OP_UNPACK8_LOW:
  case VYRE_OP_UNPACK8_HIGH: unpack(c, in->op, r, a); return;
  default: break;
  }
  cg_fail(c, VYRE_INTERNAL, "codegen: instruction %u: unary op %u on %s has no lowering. Fix: "
          "report this as a bug", i, in->op, vyre_type_name(t));
}

static void cast(cg_ctx *c, uint32_t i) {
  const vyre_inst *in = &c->p->insts[i];
  uint32_t from = c->p->value_type[in->a], to = in->type;
  const char *r = cg_val(c, i), *a = cg_val(c, in->a);
  if (from == to) {
    cg_mov(c, to, r, a);
    return;
  }
  if (from == VYRE_T_BOOL) {
    if (to == VYRE_T_F32) cg_emit(c, "selp.b32 %s, 0f3f800000, 0f00000000, %s;", r, a);
    else cg_emit(c, "selp.%s %s, 1, 0, %s;", cg_bty(to), r, a);
    return;
  }
  if (to == VYRE_T_BOOL) {
    if (from == VYRE_T_F32) cg_emit(c, "setp.neu.f32 %s, %s, 0f00000000;", r, a); /* NaN: true */
    else cg_emit(c, "setp.ne.%s %s, %s, 0;", cg_ity(from), r, a);
    return;
  }
  if (from == VYRE_T_F32) {
    /* cvt.rzi saturates to the target range.  NaN: the 32-bit forms give
     * 0 on sm_90 (checked on an H200), but cvt.rzi.s64/u64.f32 give
     * 0x8000000000000000 there (found by vyre conform on the H200), so
     * the 64-bit targets and older archs select 0 explicitly. */
    if (c->sm >= 90 && !cg_is64(to)) {
      cg_emit(c, "cvt.rzi.%s.f32 %s, %s;", cg_ity(to), r, a);
      return;
    }
    const char *x = tmp_of(c, to), *q = cg_tp(c);
    cg_emit(c, "cvt.rzi.%s.f32 %s, %s;", cg_ity(to), x, a);
    cg_emit(c, "testp.notanumber.f32 %s, %s;", q, a);
    cg_emit(c, "selp.%s %s, 0, %s, %s;", cg_bty(to), r, x, q);
    return;
  }
  if (to == VYRE_T_F32) {
    cg_emit(c, "cvt.rn.f32.%s %s, %s;", cg_ity(from), r, a);
    return;
  }
  /* int -> int */
  if (cg_is64(from) == cg_is64(to)) {
    cg_mov(c, to, r, a);
  } else if (cg_is64(to)) {
    cg_emit(c, "cvt.%s.%s %s, %s;", is_signed(from) ? "s64" : "u64", cg_ity(from), r, a);
  } else {
    cg_emit(c, "cvt.u32.u64 %s, %s;", r, a);
  }
}

static void select_value(cg_ctx *c, uint32_t i) {
  const vyre_inst *in = &c->p->insts[i];
  uint32_t t = c->p->value_type[i];
  const char *r = cg_val(c, i), *cond = cg_val(c, in->a), *x = cg_val(c, in->b),
             *y = cg_val(c, in->c);
  if (t == VYRE_T_BOOL) {
    const char *p1 = cg_tp(c), *p2 = cg_tp(c), *nc = cg_tp(c);
    cg_emit(c, "and.pred %s, %s, %s;", p1, cond, x);
    cg_emit(c, "not.pred %s, %s;", nc, cond);
    cg_emit(c, "and.pred %s, %s, %s;", p2, nc, y);
    cg_emit(c, "or.pred %s, %s, %s;", r, p1, p2);
    return;
  }
  cg_emit(c, "selp.%s %s, %s, %s, %s;", cg_bty(t), r, x, y, cond);
}

static void builtin(cg_ctx *c, uint32_t i) {
  const vyre_inst *in = &c->p->insts[i];
  const char *r = cg_val(c, i);
  static const char axes[] = "xyz";
  switch (in->op) {
  case VYRE_OP_INVOCATION_ID:
    if (in->mod == 0 && c->gid_reg) {
      cg_emit(c, "mov.b32 %s, %s;", r, c->gid_reg);
    } else {
      const char *t = cg_t32(c), *l = cg_t32(c);
      cg_emit(c, "mov.u32 %s, %%ctaid.%c;", t, axes[in->mod]);
      cg_emit(c, "mov.u32 %s, %%tid.%c;", l, axes[in->mod]);
      cg_emit(c, "mad.lo.u32 %s, %s, %u, %s;", r, t, c->wg[in->mod], l);
    }
    return;
  case VYRE_OP_WORKGROUP_ID: cg_emit(c, "mov.u32 %s, %%ctaid.%c;", r, axes[in->mod]); return;
  case VYRE_OP_LOCAL_ID: cg_emit(c, "mov.u32 %s, %%tid.%c;", r, axes[in->mod]); return;
  case VYRE_OP_SUBGROUP_LANE: cg_emit(c, "and.b32 %s, %%ltid, 31;", r); return;
  case VYRE_OP_SUBGROUP_SIZE: cg_emit(c, "mov.u32 %s, 32;", r); return;
  default: break;
  }
}

void cg_expr(cg_ctx *c, uint32_t i) {
  const vyre_inst *in = &c->p->insts[i];
  uint32_t t = c->p->value_type[i];
  switch ((vyre_op_class)c->op_class[in->op]) {
  case VYRE_OC_CONST:
    if (t == VYRE_T_BOOL) cg_emit(c, "mov.pred %s, %u;", cg_val(c, i), in->a);
    else if (cg_is64(t)) cg_emit(c, "mov.b64 %s, %X;", cg_val(c, i), (uint64_t)in->b << 32 | in->a);
    /* f32 constants are opaque to the JIT (xor with %opz, a run-time zero):
     * the 580 driver's JIT folds f32 arithmetic on known values with a wrong
     * rounding (docs/codegen.md, "Toolchain workarounds"). */
    else if (t == VYRE_T_F32) cg_emit(c, "xor.b32 %s, %%opz, %x;", cg_val(c, i), in->a);
    else cg_emit(c, "mov.b32 %s, %x;", cg_val(c, i), in->a);
    return;
  case VYRE_OC_LOCAL_GET: cg_mov(c, t, cg_val(c, i), cg_local(c, in->a)); return;
  case VYRE_OC_LOAD: cg_load(c, i); return;
  case VYRE_OC_BUF_LEN: cg_emit(c, "mov.u32 %s, %s;", cg_val(c, i), cg_len(c, in->a)); return;
  case VYRE_OC_BUILTIN: builtin(c, i); return;
  case VYRE_OC_BINARY: binary(c, i); return;
  case VYRE_OC_COMPARE: compare(c, i); return;
  case VYRE_OC_UNARY: unary(c, i); return;
  case VYRE_OC_PREDICATE: {
    static const char *const tests[] = {"notanumber", "infinite", "finite"};
    cg_emit(c, "testp.%s.f32 %s, %s;", tests[in->op - VYRE_OP_ISNAN], cg_val(c, i),
            cg_val(c, in->a));
    return;
  }
  case VYRE_OC_SELECT: select_value(c, i); return;
  case VYRE_OC_CAST: cast(c, i); return;
  case VYRE_OC_FMA:
    cg_emit(c, "fma.rn.ftz.f32 %s, %s, %s, %s;", cg_val(c, i), cg_val(c, in->a), cg_val(c, in->b),
            cg_val(c, in->c));
    return;
  case VYRE_OC_ATOMIC:
  case VYRE_OC_ATOMIC_CAS: cg_atomic(c, i); return;
  case VYRE_OC_BALLOT:
  case VYRE_OC_SHUFFLE:
  case VYRE_OC_REDUCE: cg_subgroup(c, i); return;
  default: break;
  }
  cg_fail(c, VYRE_INTERNAL, "codegen: instruction %u: op %u has no value lowering. Fix: report "
          "this as a bug", i, in->op);
}
