/* value.c -- progen's expressions: constants (the f32 edge pool), invocation ids, loads, atomics and subgroup values, and expression trees of every type, tracked for uniformity. */
#include "abi/support/bits.h"
#include "internal.h"

static const uint8_t all_vtypes[] = {VYRE_T_BOOL, VYRE_T_U32, VYRE_T_U64, VYRE_T_I32,
                                     VYRE_T_I64, VYRE_T_F32};
static const vyre_op int_bin[] = {
    VYRE_OP_ADD, VYRE_OP_SUB, VYRE_OP_MUL, VYRE_OP_DIV, VYRE_OP_MOD, VYRE_OP_AND,
    VYRE_OP_OR, VYRE_OP_XOR, VYRE_OP_SHL, VYRE_OP_SHR, VYRE_OP_ROTL, VYRE_OP_ROTR,
    VYRE_OP_MIN, VYRE_OP_MAX, VYRE_OP_ABSDIFF, VYRE_OP_SAT_ADD, VYRE_OP_SAT_SUB,
    VYRE_OP_SAT_MUL, VYRE_OP_WRAP_ADD, VYRE_OP_WRAP_SUB, VYRE_OP_MULHI};
static const vyre_op int_un[] = {VYRE_OP_NEG, VYRE_OP_BITNOT, VYRE_OP_POPCOUNT, VYRE_OP_CLZ,
                                 VYRE_OP_CTZ, VYRE_OP_REVERSEBITS, VYRE_OP_ABS, VYRE_OP_SIGN};
static const vyre_op f_bin[] = {VYRE_OP_ADD, VYRE_OP_SUB, VYRE_OP_MUL, VYRE_OP_DIV,
                                VYRE_OP_MIN, VYRE_OP_MAX, VYRE_OP_ABSDIFF};
static const vyre_op f_un[] = {VYRE_OP_NEG, VYRE_OP_ABS, VYRE_OP_SIGN, VYRE_OP_FLOOR,
                               VYRE_OP_CEIL, VYRE_OP_ROUND, VYRE_OP_TRUNC, VYRE_OP_SQRT,
                               VYRE_OP_RCP};
static const vyre_op f_trans[] = {VYRE_OP_RSQRT, VYRE_OP_EXP, VYRE_OP_EXP2, VYRE_OP_LOG,
                                  VYRE_OP_LOG2, VYRE_OP_SIN, VYRE_OP_COS, VYRE_OP_TAN,
                                  VYRE_OP_ASIN, VYRE_OP_ACOS, VYRE_OP_ATAN, VYRE_OP_SINH,
                                  VYRE_OP_COSH, VYRE_OP_TANH};
static const uint32_t f32_specials[] = {0x00000000u, 0x80000000u, 0x3f800000u, 0xbf800000u,
                                        0x7f800000u, 0xff800000u, 0x7fc00000u, 0x00800000u,
                                        0x7f7fffffu, 0x3f000000u, 0x40200000u, 0x4b800000u,
                                        0xcf000000u, 0x5f000000u, 0x40490fdbu};

/*
 * The edge pool (docs/conformance.md, "Fuzzing"): powers of two across the
 * whole exponent range, each with the significands just below and above a
 * power of two, chosen so that products and quotients of two pool values
 * land on both sides of the f32 underflow boundary 2^-126 and of
 * 2^-126 - 2^-150 (exponent pairs summing to -126 or -127: (-1, -126),
 * (-64, -63), (-27, -100), ...), plus the specials above.  A share of the
 * f32 constants and inputs comes from here.
 */
uint32_t fz_edge_f32(gen *g) {
  static const int16_t exps[] = {-126, -125, -124, -100, -99, -64, -63, -62, -27, -26,
                                 -1,   0,    1,    23,   24,  62,  63,  64,  100, 127};
  static const uint32_t fracs[] = {0x000000u, 0x000001u, 0x000002u, 0x7fffffu,
                                   0x7ffffeu, 0x400000u, 0x3fffffu, 0x400001u};
  /* Halves of the boundary: exponent pairs summing to -127, significands 1
   * and 2 - 2^-23 (their product is 2^-126 (1 - 2^-24)) and neighbours. */
  static const int16_t halves[] = {-126, -1, -100, -27, -64, -63, 0, -26};
  static const uint32_t near_one[] = {0x000000u, 0x7fffffu, 0x7ffffeu, 0x000001u};
  uint32_t sign = rnd(g, 2) ? 0x80000000u : 0u;
  switch (rnd(g, 5)) {
  case 0: return fz_f32_special(g);
  case 1:
  case 2: return sign | (uint32_t)(halves[rnd(g, N(halves))] + 127) << 23 | near_one[rnd(g, N(near_one))];
  default: return sign | (uint32_t)(exps[rnd(g, N(exps))] + 127) << 23 | fracs[rnd(g, N(fracs))];
  }
}

uint32_t fz_f32_special(gen *g) { return f32_specials[rnd(g, N(f32_specials))]; }

int fz_choose(gen *g, const vyre_op *list, uint32_t n, uint32_t t, vyre_op *out) {
  vyre_op ok[64];
  uint32_t k = 0;
  for (uint32_t i = 0; i < n && k < N(ok); i++)
    if (can(g, list[i], t)) ok[k++] = list[i];
  if (!k) return 0;
  *out = ok[rnd(g, k)];
  return 1;
}

vyre_op fz_transcendental(gen *g) {
  vyre_op op = f_trans[0];
  if (!fz_choose(g, f_trans, N(f_trans), VYRE_T_F32, &op)) (void)rnd(g, N(f_trans));
  return op;
}

uint32_t fz_val(gen *g, uint32_t id, uint8_t t, int uniform) {
  if (g->nv < MAX_VALS) {
    gval *v = &g->vals[g->nv++];
    v->id = id;
    v->type = t;
    v->uniform = (uint8_t)(uniform != 0);
    v->depth = (uint16_t)g->depth;
  }
  return id;
}

int fz_is_uniform(gen *g, uint32_t id) {
  for (uint32_t k = g->nv; k-- > 0;)
    if (g->vals[k].id == id) return g->vals[k].uniform;
  return 0;
}

static uint32_t pick(gen *g, uint8_t t, int uni) {
  uint32_t cand[48], n = 0;
  for (uint32_t k = g->nv; k-- > 0 && n < 48;)
    if (g->vals[k].type == t && (!uni || g->vals[k].uniform)) cand[n++] = g->vals[k].id;
  return n ? cand[rnd(g, n)] : UINT32_MAX;
}

static uint32_t konst(gen *g, uint8_t t) {
  uint64_t bits;
  if (t == VYRE_T_BOOL) {
    bits = rnd(g, 2);
  } else if (t == VYRE_T_F32) {
    if (chance(g, 35)) {
      bits = fz_f32_special(g);
    } else if (chance(g, 40)) {
      bits = fz_edge_f32(g);
    } else {
      float f = (float)((int32_t)rnd(g, 4001) - 2000) / (float)(1u << rnd(g, 10));
      bits = vyre_f32_canonical_bits(vyre__f32_bits(f));
    }
  } else {
    static const int64_t edge[] = {0,          1,          -1,        2,         3,
                                   7,          31,         32,        33,        63,
                                   64,         65,         255,       65535,     0x7fffffff,
                                   (int64_t)0x80000000ll, (int64_t)0xffffffffll,
                                   (int64_t)0xfffffffell, (int64_t)0x80000001ll,
                                   INT64_MAX,  INT64_MIN,  INT64_MIN + 1, -2};
    uint32_t r = rnd(g, 4);
    bits = r == 0 ? (uint64_t)edge[rnd(g, N(edge))] : r == 1 ? next(g) : rnd(g, 100);
    if (t == VYRE_T_U32 || t == VYRE_T_I32) bits &= 0xffffffffu;
  }
  return fz_val(g, vyre_b_const(g->b, (vyre_type)t, bits), t, 1);
}

uint32_t fz_u32c(gen *g, uint32_t v) { return fz_val(g, vyre_b_u32(g->b, v), VYRE_T_U32, 1); }

/* The linear invocation id and the local linear id (re-made after a grid barrier). */
uint32_t fz_lin(gen *g) {
  if (g->lin != UINT32_MAX) return g->lin;
  vyre_builder *b = g->b;
  uint32_t id;
  if (g->wg[1] == 1 && g->wg[2] == 1 && can(g, VYRE_OP_INVOCATION_ID, VYRE_T_U32)) {
    id = vyre_b_gid(b, 0);
  } else {
    uint32_t w = vyre_b_builtin(b, VYRE_OP_WORKGROUP_ID, 0);
    uint32_t s = vyre_b_u32(b, g->wgs);
    uint32_t base = vyre_b_bin(b, VYRE_OP_MUL, w, s);
    uint32_t x = vyre_b_builtin(b, VYRE_OP_LOCAL_ID, 0);
    uint32_t y = vyre_b_builtin(b, VYRE_OP_LOCAL_ID, 1);
    uint32_t z = vyre_b_builtin(b, VYRE_OP_LOCAL_ID, 2);
    uint32_t wx = vyre_b_u32(b, g->wg[0]), wxy = vyre_b_u32(b, g->wg[0] * g->wg[1]);
    uint32_t l = vyre_b_bin(b, VYRE_OP_ADD, x, vyre_b_bin(b, VYRE_OP_MUL, y, wx));
    l = vyre_b_bin(b, VYRE_OP_ADD, l, vyre_b_bin(b, VYRE_OP_MUL, z, wxy));
    g->lidlin = fz_val(g, l, VYRE_T_U32, 0);
    id = vyre_b_bin(b, VYRE_OP_ADD, base, l);
  }
  g->lin = id;
  return fz_val(g, id, VYRE_T_U32, 0);
}

uint32_t fz_lidlin(gen *g) {
  if (g->lidlin != UINT32_MAX) return g->lidlin;
  if (g->wg[1] == 1 && g->wg[2] == 1) {
    g->lidlin = fz_val(g, vyre_b_builtin(g->b, VYRE_OP_LOCAL_ID, 0), VYRE_T_U32, 0);
    return g->lidlin;
  }
  g->lin = UINT32_MAX;
  fz_lin(g);
  return g->lidlin;
}

uint32_t fz_own_index(gen *g, const gbuf *fb) {
  uint32_t l = fz_lin(g);
  if (!fb->off) return l;
  return fz_val(g, vyre_b_bin(g->b, VYRE_OP_ADD, l, fz_u32c(g, fb->off)), VYRE_T_U32, 0);
}

/* An index anywhere, in or out of bounds (elementwise: gid.x). */
uint32_t fz_any_index(gen *g, uint32_t count, int uni) {
  uint32_t c = count ? count : 8;
  if (ew(g)) return fz_lin(g);
  static const vyre_op case_op[] = {VYRE_OP_CONST, VYRE_OP_CONST, VYRE_OP_AND, VYRE_OP_CONST,
                                    VYRE_OP_ADD, VYRE_OP_XOR};
  uint32_t r = rnd(g, uni ? 3 : 6);
  /* An op not claimed: the invocation's own index, or a constant. */
  if (!can(g, case_op[r], VYRE_T_U32)) r = uni ? 0 : 3;
  switch (r) {
  case 0: return fz_u32c(g, rnd(g, c + c / 4 + 3));
  case 1: {
    uint32_t v = pick(g, VYRE_T_U32, uni);
    if (v != UINT32_MAX) return v;
    return fz_u32c(g, rnd(g, c));
  }
  case 2: {
    uint32_t x = fz_value(g, VYRE_T_U32, 1, uni);
    uint32_t m = fz_u32c(g, chance(g, 50) ? 63 : 1023);
    return fz_val(g, vyre_b_bin(g->b, VYRE_OP_AND, x, m), VYRE_T_U32, uni && fz_is_uniform(g, x));
  }
  case 3: return fz_lin(g);
  case 4: {
    uint32_t x = fz_lin(g);
    return fz_val(g, vyre_b_bin(g->b, VYRE_OP_ADD, x, fz_u32c(g, rnd(g, 5))), VYRE_T_U32, 0);
  }
  default: {
    uint32_t x = fz_lin(g);
    return fz_val(g, vyre_b_bin(g->b, VYRE_OP_XOR, x, fz_u32c(g, rnd(g, 64))), VYRE_T_U32, 0);
  }
  }
}

/* Convert value v of type `from` to `to` (a cast, or v itself). */
static uint32_t as(gen *g, uint32_t v, uint8_t from, uint8_t to, int uniform) {
  if (from == to) return v;
  return fz_val(g, vyre_b_cast(g->b, (vyre_type)to, v), to, uniform);
}

static int loadable(gen *g, const gbuf *fb, int uni) {
  switch (fb->kind) {
  case K_IN: return 1;
  case K_OUT: return !uni && fb->readable;
  case K_TILE:
  case K_WACC: return !uni && g->phase >= 1;
  case K_GSC: return !uni && g->phase == 2;
  case K_OWN: return !uni;
  case K_ACC: return 0; /* contended: what it holds depends on the order of the atomics */
  case K_MMA: return 0; /* MMA tiles: float ones only bounded, and no lane sees another's */
  default: return fb->readable && (!uni || is_ro(fb->access));
  }
}

/* A load that yields (after a cast) type t; UINT32_MAX when no buffer can. */
uint32_t fz_load(gen *g, uint8_t t, int uni) {
  uint32_t cand[MAX_BUFS], n = 0;
  if (uni && ew(g)) return UINT32_MAX;
  for (uint32_t k = 0; k < g->nb; k++) {
    uint8_t ct = (uint8_t)vyre_type_compute(g->buf[k].type);
    if (loadable(g, &g->buf[k], uni) && can(g, VYRE_OP_LOAD, ct) &&
        (ct == t || can(g, VYRE_OP_CAST, t)))
      cand[n++] = k;
  }
  if (!n) return UINT32_MAX;
  const gbuf *fb = &g->buf[cand[rnd(g, n)]];
  uint32_t idx;
  if (fb->kind == K_OUT || fb->kind == K_OWN) idx = fz_own_index(g, fb);
  else if (ew(g) && is_ro(fb->access) && chance(g, 25))
    idx = fz_u32c(g, rnd(g, fb->count ? fb->count + 1 : 4)); /* never stored: any element */
  else idx = fz_any_index(g, fb->count, uni && is_ro(fb->access));
  int lu = is_ro(fb->access) && fz_is_uniform(g, idx);
  uint8_t ct = (uint8_t)vyre_type_compute(fb->type);
  uint32_t v = fz_val(g, vyre_b_load(g->b, fb->index, idx), ct, lu);
  return as(g, v, ct, t, lu);
}

static uint32_t get_local(gen *g, uint8_t t, int uni) {
  uint32_t cand[MAX_LOCS], n = 0;
  if (!can(g, VYRE_OP_LOCAL_GET, t)) return UINT32_MAX;
  for (uint32_t k = 0; k < g->nl; k++)
    if (g->locs[k].type == t && (!uni || g->locs[k].uniform)) cand[n++] = k;
  if (!n) return UINT32_MAX;
  const gloc *l = &g->locs[cand[rnd(g, n)]];
  return fz_val(g, vyre_b_get(g->b, l->slot), t, l->uniform);
}

static uint32_t builtin(gen *g, int uni) {
  vyre_builder *b = g->b;
  uint32_t k = ew(g) ? (!uni && chance(g, 50) ? 6 : 0) : rnd(g, uni ? 3 : 7), axis = rnd(g, 3);
  static const vyre_op kop[] = {VYRE_OP_BUF_LEN,       VYRE_OP_WORKGROUP_ID, VYRE_OP_SUBGROUP_SIZE,
                                VYRE_OP_INVOCATION_ID, VYRE_OP_LOCAL_ID,     VYRE_OP_SUBGROUP_LANE};
  if (k < N(kop) && !can(g, kop[k], VYRE_T_U32)) return UINT32_MAX; /* not claimed: a leaf */
  switch (k) {
  case 0: return fz_val(g, vyre_b_buflen(b, g->buf[rnd(g, g->nb)].index), VYRE_T_U32, 1);
  case 1: return fz_val(g, vyre_b_builtin(b, VYRE_OP_WORKGROUP_ID, axis), VYRE_T_U32, 1);
  case 2:
    if (has(g, PROGEN_NO_SUBGROUP)) return UINT32_MAX;
    return fz_val(g, vyre_b_builtin(b, VYRE_OP_SUBGROUP_SIZE, 0), VYRE_T_U32, 1);
  case 3: return fz_val(g, vyre_b_gid(b, axis), VYRE_T_U32, 0);
  case 4: return fz_val(g, vyre_b_builtin(b, VYRE_OP_LOCAL_ID, axis), VYRE_T_U32, 0);
  case 5:
    if (has(g, PROGEN_NO_SUBGROUP)) return UINT32_MAX;
    return fz_val(g, vyre_b_builtin(b, VYRE_OP_SUBGROUP_LANE, 0), VYRE_T_U32, 0);
  default: return fz_lin(g);
  }
}

static uint32_t leaf(gen *g, uint8_t t, int uni) {
  uint32_t r = rnd(g, 12), v = UINT32_MAX;
  if (r < 3) v = pick(g, t, uni);
  else if (r < 6) v = fz_load(g, t, uni);
  else if (r < 8) v = get_local(g, t, uni);
  else if (r < 10 && t == VYRE_T_U32) v = builtin(g, uni);
  return v != UINT32_MAX ? v : konst(g, t);
}

/* An atomic whose old value is used: at the invocation's own index
 * (race-free) or anywhere. */
static uint32_t atomic_value(gen *g, uint8_t t) {
  uint32_t cand[MAX_BUFS], n = 0;
  for (uint32_t k = 0; k < g->nb; k++) {
    const gbuf *fb = &g->buf[k];
    int ok = fb->kind == K_OWN ||
             (fb->kind == K_ANY && (fb->access == VYRE_ACCESS_READ_WRITE ||
                                    fb->access == VYRE_ACCESS_WORKGROUP));
    if (ok && fb->type == t) cand[n++] = k;
  }
  if (!n || (vyre_type_size(t) == 8 && has(g, PROGEN_NO_ATOMIC64)) || !fz_atomic_ok(g, t))
    return UINT32_MAX;
  const gbuf *fb = &g->buf[cand[rnd(g, n)]];
  uint32_t idx = fb->kind == K_OWN ? fz_own_index(g, fb) : fz_any_index(g, fb->count, 0);
  vyre_order order = (vyre_order)rnd(g, VYRE_ORDER_COUNT_);
  uint32_t v = fz_value(g, t, 1, 0);
  if (chance(g, 20)) {
    uint32_t d = fz_value(g, t, 1, 0);
    return fz_val(g, vyre_b_cas(g->b, fb->index, idx, v, d, order), t, 0);
  }
  vyre_op op = (vyre_op)(VYRE_OP_ATOMIC_ADD + rnd(g, 7));
  return fz_val(g, vyre_b_atomic(g->b, op, fb->index, idx, v, order), t, 0);
}

static uint32_t subgroup_value(gen *g, uint8_t t, int depth) {
  vyre_builder *b = g->b;
  uint32_t k = rnd(g, 3);
  /* The op of this draw; not claimed (at t, or its operands): a leaf. */
  int ok = k == 0 && t == VYRE_T_U32
               ? can(g, VYRE_OP_SUBGROUP_BALLOT, t) && can_value(g, VYRE_T_BOOL)
           : k == 1 || t == VYRE_T_BOOL ? can(g, VYRE_OP_SUBGROUP_SHUFFLE, t) && can_value(g, VYRE_T_U32)
                                        : can(g, VYRE_OP_SUBGROUP_REDUCE, t);
  if (!ok) return leaf(g, t, 0);
  if (k == 0 && t == VYRE_T_U32) {
    uint32_t c = fz_value(g, VYRE_T_BOOL, depth - 1, 0);
    return fz_val(g, vyre_b_ballot(b, c), t, 0);
  }
  if (k == 1 || t == VYRE_T_BOOL) {
    uint32_t x = fz_value(g, t, depth - 1, 0);
    uint32_t l = chance(g, 50) ? fz_value(g, VYRE_T_U32, 1, 0) : fz_u32c(g, rnd(g, 40));
    return fz_val(g, vyre_b_shuffle(b, x, l), t, 0);
  }
  uint32_t x = fz_value(g, t, depth - 1, 0);
  vyre_reduce kind = (vyre_reduce)(t == VYRE_T_F32 ? rnd(g, 3) : rnd(g, VYRE_REDUCE_COUNT_));
  return fz_val(g, vyre_b_reduce(b, kind, x), t, 0);
}

static uint32_t bool_value(gen *g, int depth, int uni) {
  vyre_builder *b = g->b;
  const uint8_t t = VYRE_T_BOOL;
  uint32_t k = rnd(g, 4);
  /* The draws (operands first, then the op) are those of a run without
   * claims, so a backend claiming everything gets the same programs; an
   * op not claimed there gives a leaf instead (the operands stay unused). */
  vyre_op op;
  if (k == 0) {
    static const vyre_op cmp[] = {VYRE_OP_EQ, VYRE_OP_NE, VYRE_OP_LT,
                                  VYRE_OP_LE, VYRE_OP_GT, VYRE_OP_GE};
    uint8_t ct = all_vtypes[rnd(g, N(all_vtypes))];
    if (!can_value(g, ct)) return leaf(g, t, uni);
    uint32_t x = fz_value(g, ct, depth - 1, uni), y = fz_value(g, ct, depth - 1, uni);
    if (!fz_choose(g, cmp, ct == VYRE_T_BOOL ? 2 : 6, ct, &op)) return leaf(g, t, uni);
    return fz_val(g, vyre_b_bin(b, op, x, y), t, fz_is_uniform(g, x) && fz_is_uniform(g, y));
  }
  if (k == 1) {
    static const vyre_op ops[] = {VYRE_OP_LOGICAL_AND, VYRE_OP_LOGICAL_OR, VYRE_OP_AND,
                                  VYRE_OP_OR, VYRE_OP_XOR};
    uint32_t x = fz_value(g, t, depth - 1, uni), y = fz_value(g, t, depth - 1, uni);
    if (!fz_choose(g, ops, N(ops), t, &op)) return leaf(g, t, uni);
    return fz_val(g, vyre_b_bin(b, op, x, y), t, fz_is_uniform(g, x) && fz_is_uniform(g, y));
  }
  if (k == 2) {
    static const vyre_op pred[] = {VYRE_OP_ISNAN, VYRE_OP_ISINF, VYRE_OP_ISFINITE};
    if (!can_value(g, VYRE_T_F32)) return leaf(g, t, uni);
    uint32_t x = fz_value(g, VYRE_T_F32, depth - 1, uni);
    if (!fz_choose(g, pred, N(pred), VYRE_T_F32, &op)) return leaf(g, t, uni);
    return fz_val(g, vyre_b_un(b, op, x), t, fz_is_uniform(g, x));
  }
  if (!can(g, VYRE_OP_NOT, t)) return leaf(g, t, uni);
  uint32_t x = fz_value(g, t, depth - 1, uni);
  return fz_val(g, vyre_b_un(b, VYRE_OP_NOT, x), t, fz_is_uniform(g, x));
}

/* Arithmetic of type t: binary ops, fma (f32), unary ops. */
static uint32_t arith_value(gen *g, uint8_t t, int depth, int uni) {
  vyre_builder *b = g->b;
  int f = t == VYRE_T_F32;
  uint32_t k = rnd(g, 10);
  vyre_op op;
  if (k < (f ? 5u : 6u)) {
    uint32_t x = fz_value(g, t, depth - 1, uni), y = fz_value(g, t, depth - 1, uni);
    if (!(f ? fz_choose(g, f_bin, N(f_bin), t, &op) : fz_choose(g, int_bin, N(int_bin), t, &op)))
      return leaf(g, t, uni); /* none claimed at t */
    return fz_val(g, vyre_b_bin(b, op, x, y), t, fz_is_uniform(g, x) && fz_is_uniform(g, y));
  }
  if (f && k < 6) {
    if (!can(g, VYRE_OP_FMA, t)) return leaf(g, t, uni);
    uint32_t x = fz_value(g, t, depth - 1, uni), y = fz_value(g, t, depth - 1, uni),
             z = fz_value(g, t, depth - 1, uni);
    return fz_val(g, vyre_b_fma(b, x, y, z), t,
               fz_is_uniform(g, x) && fz_is_uniform(g, y) && fz_is_uniform(g, z));
  }
  uint32_t x = fz_value(g, t, depth - 1, uni);
  if (!(f ? fz_choose(g, f_un, N(f_un), t, &op) : fz_choose(g, int_un, N(int_un), t, &op)))
    return leaf(g, t, uni); /* none claimed at t */
  if (t == VYRE_T_U32 && k == 9) {
    vyre_op unpack = (vyre_op)(VYRE_OP_UNPACK4_LOW + rnd(g, 4));
    if (can(g, unpack, t)) op = unpack;
  }
  /* Race-free programs keep transcendentals out of expressions (s_store). */
  if (f && k == 9 && !rf(g) && !has(g, PROGEN_NO_TRANSCENDENTAL)) {
    vyre_op tr = fz_transcendental(g);
    if (can(g, tr, t)) {
      op = tr;
      g->uses_trans = 1;
    }
  }
  return fz_val(g, vyre_b_un(b, op, x), t, fz_is_uniform(g, x));
}

uint32_t fz_value(gen *g, uint8_t t, int depth, int uni) {
  if (depth <= 0 || !room(g) || chance(g, 20)) return leaf(g, t, uni);
  uint32_t r = rnd(g, 100);
  if (r < 7 && can(g, VYRE_OP_SELECT, t) && can_value(g, VYRE_T_BOOL)) {
    uint32_t c = fz_value(g, VYRE_T_BOOL, depth - 1, uni);
    uint32_t x = fz_value(g, t, depth - 1, uni), y = fz_value(g, t, depth - 1, uni);
    return fz_val(g, vyre_b_select(g->b, c, x, y), t,
               fz_is_uniform(g, c) && fz_is_uniform(g, x) && fz_is_uniform(g, y));
  }
  if (r < 15) {
    uint8_t from = all_vtypes[rnd(g, N(all_vtypes))];
    if (from != t && (!can(g, VYRE_OP_CAST, t) || !can_value(g, from))) from = t;
    uint32_t x = fz_value(g, from, depth - 1, uni);
    return as(g, x, from, t, fz_is_uniform(g, x));
  }
  if (r < 20 && !uni && !ew(g) && !has(g, PROGEN_NO_ATOMICS) && is_int(t)) {
    uint32_t v = atomic_value(g, t);
    if (v != UINT32_MAX) return v;
  }
  if (r < 27 && !uni && uniform_here(g) && !has(g, PROGEN_NO_SUBGROUP))
    return subgroup_value(g, t, depth);
  if (t == VYRE_T_BOOL) return bool_value(g, depth, uni);
  return arith_value(g, t, depth, uni);
}
