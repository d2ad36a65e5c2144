/* fuzz_gen.c -- random VALID, race-free programs and inputs for differential fuzzing (vyre fuzz). */
/*
 * Race freedom (docs/conformance.md, "Fuzzing") comes from the program's
 * shape, not from luck:
 *   - every invocation has a unique linear id `lin`; plain stores to global
 *     buffers go only to index lin + c (c fixed per buffer), so no two
 *     invocations write one element; a buffer that is also read is read
 *     only at that same index;
 *   - ro/uniform inputs are never written, so loads anywhere are fine;
 *   - contended atomics (`acc`, `wacc`) use one commutative op per buffer
 *     per program and their old values are thrown away; uncontended ones
 *     (`own`, at the invocation's own index) may use any op and keep it;
 *   - workgroup memory: phase A stores `tile[local linear id]` and does the
 *     `wacc` atomics, a top-level barrier ends it, phase B only reads;
 *   - grid scratch `gsc`: own-index stores before the grid barrier, reads
 *     anywhere after it;
 *   - transcendental results only reach write-only outputs (never another
 *     op), so the ULP tolerance cannot be amplified;
 *   - every trap of a program uses one code; returns and traps come last
 *     (after every barrier and subgroup op).
 */
#include <stdlib.h>
#include <string.h>

#include "abi/support/prng.h"
#include "fuzz.h"

#define MAX_VALS 2048
#define MAX_LOCS 128
#define MAX_BUFS 16

enum { K_IN, K_OUT, K_ACC, K_OWN, K_TILE, K_WACC, K_GSC };

typedef struct fv {
  uint32_t id;
  uint8_t type, uniform;
  uint16_t depth;
} fv;

typedef struct floc {
  uint32_t slot;
  uint8_t type, uniform, counter;
  uint16_t depth;
} floc;

typedef struct fbuf {
  uint32_t index;
  uint8_t kind, access, type, readable; /* readable: may be loaded (own index for outputs) */
  uint32_t count;  /* declared count; for count-0 inputs the input's element count */
  uint32_t off;    /* own-index offset: stores go to lin + off */
  vyre_op op;      /* the one atomic op of ACC/WACC */
} fbuf;

typedef struct fz {
  uint64_t rng;
  uint32_t flags;
  vyre_builder *b;
  uint32_t wg[3], wgs, n, grid, invocations;
  fbuf buf[MAX_BUFS];
  uint32_t nb;
  fv vals[MAX_VALS];
  uint32_t nv;
  floc locs[MAX_LOCS];
  uint32_t nl;
  uint32_t depth;
  int cf_uniform;
  int phase; /* 0: tile/wacc writes; 1: after the workgroup barrier; 2: after the grid barrier */
  int grid_done;
  int tail;  /* returns/traps allowed */
  uint32_t lin, lidlin; /* value ids, UINT32_MAX when not in scope */
  uint32_t trap_code;
  int uses_trans;
  uint32_t max_insts;
} fz;

static uint64_t next(fz *g) { return vyre__splitmix64(&g->rng); }
static uint32_t rnd(fz *g, uint32_t n) { return n ? (uint32_t)(next(g) % n) : 0; }
static int chance(fz *g, uint32_t pct) { return rnd(g, 100) < pct; }
static int has(fz *g, uint32_t f) { return (g->flags & f) != 0; }
static uint32_t ninst(fz *g) { return vyre_b_inst_count(g->b); }
static int room(fz *g) { return ninst(g) < g->max_insts; }

#define N(a) (sizeof(a) / sizeof((a)[0]))
static const uint8_t vtypes[] = {VYRE_T_BOOL, VYRE_T_U32, VYRE_T_U32, VYRE_T_U64, VYRE_T_I32,
                                 VYRE_T_I64, VYRE_T_F32, VYRE_T_F32};
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

static int is_int(uint8_t t) {
  return t == VYRE_T_U32 || t == VYRE_T_U64 || t == VYRE_T_I32 || t == VYRE_T_I64;
}

static uint32_t val(fz *g, uint32_t id, uint8_t t, int uniform) {
  if (g->nv < MAX_VALS) {
    fv *v = &g->vals[g->nv++];
    v->id = id;
    v->type = t;
    v->uniform = (uint8_t)(uniform != 0);
    v->depth = (uint16_t)g->depth;
  }
  return id;
}

static int is_uniform(fz *g, uint32_t id) {
  for (uint32_t k = g->nv; k-- > 0;)
    if (g->vals[k].id == id) return g->vals[k].uniform;
  return 0;
}

static uint32_t pick(fz *g, uint8_t t, int uni) {
  uint32_t cand[48], n = 0;
  for (uint32_t k = g->nv; k-- > 0 && n < 48;)
    if (g->vals[k].type == t && (!uni || g->vals[k].uniform)) cand[n++] = g->vals[k].id;
  return n ? cand[rnd(g, n)] : UINT32_MAX;
}

static uint32_t konst(fz *g, uint8_t t) {
  uint64_t bits;
  if (t == VYRE_T_BOOL) {
    bits = rnd(g, 2);
  } else if (t == VYRE_T_F32) {
    static const uint32_t sp[] = {0x00000000u, 0x80000000u, 0x3f800000u, 0xbf800000u,
                                  0x7f800000u, 0xff800000u, 0x7fc00000u, 0x00800000u,
                                  0x7f7fffffu, 0x3f000000u, 0x40200000u, 0x4b800000u,
                                  0xcf000000u, 0x5f000000u, 0x40490fdbu};
    if (chance(g, 35)) {
      bits = sp[rnd(g, N(sp))];
    } else {
      float f = (float)((int32_t)rnd(g, 4001) - 2000) / (float)(1u << rnd(g, 10));
      uint32_t u;
      memcpy(&u, &f, 4);
      bits = vyre_f32_canonical_bits(u);
    }
  } else {
    static const int64_t edge[] = {0, 1, -1, 2, 3, 7, 31, 32, 33, 63, 64, 65, 255, 65535,
                                   0x7fffffff, (int64_t)0x80000000ll, INT64_MAX, INT64_MIN};
    uint32_t r = rnd(g, 4);
    bits = r == 0 ? (uint64_t)edge[rnd(g, N(edge))] : r == 1 ? next(g) : rnd(g, 100);
    if (t == VYRE_T_U32 || t == VYRE_T_I32) bits &= 0xffffffffu;
  }
  return val(g, vyre_b_const(g->b, (vyre_type)t, bits), t, 1);
}

static uint32_t u32c(fz *g, uint32_t v) { return val(g, vyre_b_u32(g->b, v), VYRE_T_U32, 1); }

/* The linear invocation id and the local linear id (re-made after a grid barrier). */
static uint32_t lin(fz *g) {
  if (g->lin != UINT32_MAX) return g->lin;
  vyre_builder *b = g->b;
  uint32_t id;
  if (g->wg[1] == 1 && g->wg[2] == 1) {
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
    g->lidlin = val(g, l, VYRE_T_U32, 0);
    id = vyre_b_bin(b, VYRE_OP_ADD, base, l);
  }
  g->lin = id;
  return val(g, id, VYRE_T_U32, 0);
}

static uint32_t lidlin(fz *g) {
  if (g->lidlin != UINT32_MAX) return g->lidlin;
  if (g->wg[1] == 1 && g->wg[2] == 1) {
    g->lidlin = val(g, vyre_b_builtin(g->b, VYRE_OP_LOCAL_ID, 0), VYRE_T_U32, 0);
    return g->lidlin;
  }
  g->lin = UINT32_MAX;
  lin(g);
  return g->lidlin;
}

static uint32_t own_index(fz *g, const fbuf *fb) {
  uint32_t l = lin(g);
  if (!fb->off) return l;
  return val(g, vyre_b_bin(g->b, VYRE_OP_ADD, l, u32c(g, fb->off)), VYRE_T_U32, 0);
}

static uint32_t gen(fz *g, uint8_t t, int depth, int uni);

/* An index into an input buffer: anywhere, in or out of bounds. */
static uint32_t any_index(fz *g, uint32_t count, int uni) {
  uint32_t c = count ? count : 8;
  switch (rnd(g, uni ? 3 : 6)) {
  case 0: return u32c(g, rnd(g, c + c / 4 + 3));
  case 1: {
    uint32_t v = pick(g, VYRE_T_U32, uni);
    if (v != UINT32_MAX) return v;
    return u32c(g, rnd(g, c));
  }
  case 2: {
    uint32_t x = gen(g, VYRE_T_U32, 1, uni);
    uint32_t m = u32c(g, chance(g, 50) ? 63 : 1023);
    return val(g, vyre_b_bin(g->b, VYRE_OP_AND, x, m), VYRE_T_U32, uni && is_uniform(g, x));
  }
  case 3: return lin(g);
  case 4: {
    uint32_t x = lin(g);
    return val(g, vyre_b_bin(g->b, VYRE_OP_ADD, x, u32c(g, rnd(g, 5))), VYRE_T_U32, 0);
  }
  default: {
    uint32_t x = lin(g);
    return val(g, vyre_b_bin(g->b, VYRE_OP_XOR, x, u32c(g, rnd(g, 64))), VYRE_T_U32, 0);
  }
  }
}

/* Convert value v of type `from` to `to` (a cast, or v itself). */
static uint32_t as(fz *g, uint32_t v, uint8_t from, uint8_t to, int uniform) {
  if (from == to) return v;
  return val(g, vyre_b_cast(g->b, (vyre_type)to, v), to, uniform);
}

/* A load that yields (after a cast) type t; UINT32_MAX when no buffer can. */
static uint32_t load(fz *g, uint8_t t, int uni) {
  uint32_t cand[MAX_BUFS], n = 0;
  for (uint32_t k = 0; k < g->nb; k++) {
    const fbuf *fb = &g->buf[k];
    if (fb->kind == K_IN) cand[n++] = k;
    else if (!uni && fb->kind == K_OUT && fb->readable) cand[n++] = k;
    else if (!uni && fb->kind == K_TILE && g->phase >= 1) cand[n++] = k;
    else if (!uni && fb->kind == K_WACC && g->phase >= 1) cand[n++] = k;
    else if (!uni && fb->kind == K_GSC && g->phase == 2) cand[n++] = k;
    else if (!uni && fb->kind == K_OWN) cand[n++] = k;
  }
  if (!n) return UINT32_MAX;
  const fbuf *fb = &g->buf[cand[rnd(g, n)]];
  uint32_t idx;
  int idx_uni = 0;
  if (fb->kind == K_OUT || fb->kind == K_OWN) {
    idx = own_index(g, fb);
  } else {
    idx = any_index(g, fb->count, uni && fb->kind == K_IN);
    idx_uni = is_uniform(g, idx);
  }
  int lu = fb->kind == K_IN && idx_uni;
  uint8_t ct = (uint8_t)vyre_type_compute(fb->type);
  uint32_t v = val(g, vyre_b_load(g->b, fb->index, idx), ct, lu);
  return as(g, v, ct, t, lu);
}

static uint32_t get_local(fz *g, uint8_t t, int uni) {
  uint32_t cand[MAX_LOCS], n = 0;
  for (uint32_t k = 0; k < g->nl; k++)
    if (g->locs[k].type == t && (!uni || g->locs[k].uniform)) cand[n++] = k;
  if (!n) return UINT32_MAX;
  const floc *l = &g->locs[cand[rnd(g, n)]];
  return val(g, vyre_b_get(g->b, l->slot), t, l->uniform);
}

static uint32_t leaf(fz *g, uint8_t t, int uni) {
  uint32_t r = rnd(g, 12), v = UINT32_MAX;
  if (r < 3) v = pick(g, t, uni);
  else if (r < 6) v = load(g, t, uni);
  else if (r < 8) v = get_local(g, t, uni);
  else if (r < 10 && t == VYRE_T_U32) {
    vyre_builder *b = g->b;
    uint32_t k = rnd(g, uni ? 3 : 7), axis = rnd(g, 3);
    switch (k) {
    case 0: v = val(g, vyre_b_buflen(b, g->buf[rnd(g, g->nb)].index), t, 1); break;
    case 1: v = val(g, vyre_b_builtin(b, VYRE_OP_WORKGROUP_ID, axis), t, 1); break;
    case 2:
      if (!has(g, FZ_NO_SUBGROUP)) v = val(g, vyre_b_builtin(b, VYRE_OP_SUBGROUP_SIZE, 0), t, 1);
      break;
    case 3: v = val(g, vyre_b_gid(b, axis), t, 0); break;
    case 4: v = val(g, vyre_b_builtin(b, VYRE_OP_LOCAL_ID, axis), t, 0); break;
    case 5:
      if (!has(g, FZ_NO_SUBGROUP)) v = val(g, vyre_b_builtin(b, VYRE_OP_SUBGROUP_LANE, 0), t, 0);
      break;
    default: v = lin(g); break;
    }
  }
  return v != UINT32_MAX ? v : konst(g, t);
}

/* An uncontended atomic on `own` (at the invocation's own index): any op. */
static uint32_t own_atomic(fz *g, uint8_t t) {
  for (uint32_t k = 0; k < g->nb; k++) {
    const fbuf *fb = &g->buf[k];
    if (fb->kind != K_OWN || fb->type != t) continue;
    uint32_t idx = own_index(g, fb);
    vyre_order order = (vyre_order)rnd(g, VYRE_ORDER_COUNT_);
    uint32_t v = gen(g, t, 1, 0);
    if (chance(g, 20)) {
      uint32_t d = gen(g, t, 1, 0);
      return val(g, vyre_b_cas(g->b, fb->index, idx, v, d, order), t, 0);
    }
    vyre_op op = (vyre_op)(VYRE_OP_ATOMIC_ADD + rnd(g, 7));
    return val(g, vyre_b_atomic(g->b, op, fb->index, idx, v, order), t, 0);
  }
  return UINT32_MAX;
}

static uint32_t gen(fz *g, uint8_t t, int depth, int uni) {
  if (depth <= 0 || !room(g) || chance(g, 20)) return leaf(g, t, uni);
  vyre_builder *b = g->b;
  uint32_t r = rnd(g, 100);
  if (r < 7) {
    uint32_t c = gen(g, VYRE_T_BOOL, depth - 1, uni);
    uint32_t x = gen(g, t, depth - 1, uni), y = gen(g, t, depth - 1, uni);
    return val(g, vyre_b_select(b, c, x, y), t,
               is_uniform(g, c) && is_uniform(g, x) && is_uniform(g, y));
  }
  if (r < 15) {
    uint8_t from = all_vtypes[rnd(g, N(all_vtypes))];
    uint32_t x = gen(g, from, depth - 1, uni);
    return as(g, x, from, t, is_uniform(g, x));
  }
  if (r < 20 && !uni && !has(g, FZ_NO_ATOMICS) && is_int(t)) {
    uint32_t v = own_atomic(g, t);
    if (v != UINT32_MAX) return v;
  }
  if (r < 27 && !uni && g->cf_uniform && !has(g, FZ_NO_SUBGROUP)) {
    uint32_t k = rnd(g, 3);
    if (k == 0 && t == VYRE_T_U32) {
      uint32_t c = gen(g, VYRE_T_BOOL, depth - 1, 0);
      return val(g, vyre_b_ballot(b, c), t, 0);
    }
    if (k == 1 || t == VYRE_T_BOOL) {
      uint32_t x = gen(g, t, depth - 1, 0);
      uint32_t l = chance(g, 50) ? gen(g, VYRE_T_U32, 1, 0) : u32c(g, rnd(g, 40));
      return val(g, vyre_b_shuffle(b, x, l), t, 0);
    }
    uint32_t x = gen(g, t, depth - 1, 0);
    vyre_reduce kind = (vyre_reduce)(t == VYRE_T_F32 ? rnd(g, 3) : rnd(g, 6));
    return val(g, vyre_b_reduce(b, kind, x), t, 0);
  }
  if (t == VYRE_T_BOOL) {
    uint32_t k = rnd(g, 4);
    if (k == 0) {
      uint8_t ct = all_vtypes[rnd(g, N(all_vtypes))];
      uint32_t x = gen(g, ct, depth - 1, uni), y = gen(g, ct, depth - 1, uni);
      vyre_op op = (vyre_op)(VYRE_OP_EQ + rnd(g, ct == VYRE_T_BOOL ? 2 : 6));
      return val(g, vyre_b_bin(b, op, x, y), t, is_uniform(g, x) && is_uniform(g, y));
    }
    if (k == 1) {
      static const vyre_op ops[] = {VYRE_OP_LOGICAL_AND, VYRE_OP_LOGICAL_OR, VYRE_OP_AND,
                                    VYRE_OP_OR, VYRE_OP_XOR};
      uint32_t x = gen(g, t, depth - 1, uni), y = gen(g, t, depth - 1, uni);
      return val(g, vyre_b_bin(b, ops[rnd(g, N(ops))], x, y), t,
                 is_uniform(g, x) && is_uniform(g, y));
    }
    if (k == 2) {
      uint32_t x = gen(g, VYRE_T_F32, depth - 1, uni);
      return val(g, vyre_b_un(b, (vyre_op)(VYRE_OP_ISNAN + rnd(g, 3)), x), t, is_uniform(g, x));
    }
    uint32_t x = gen(g, t, depth - 1, uni);
    return val(g, vyre_b_un(b, VYRE_OP_NOT, x), t, is_uniform(g, x));
  }
  if (t == VYRE_T_F32) {
    uint32_t k = rnd(g, 10);
    if (k < 5) {
      uint32_t x = gen(g, t, depth - 1, uni), y = gen(g, t, depth - 1, uni);
      return val(g, vyre_b_bin(b, f_bin[rnd(g, N(f_bin))], x, y), t,
                 is_uniform(g, x) && is_uniform(g, y));
    }
    if (k < 6) {
      uint32_t x = gen(g, t, depth - 1, uni), y = gen(g, t, depth - 1, uni),
               z = gen(g, t, depth - 1, uni);
      return val(g, vyre_b_fma(b, x, y, z), t,
                 is_uniform(g, x) && is_uniform(g, y) && is_uniform(g, z));
    }
    uint32_t x = gen(g, t, depth - 1, uni);
    return val(g, vyre_b_un(b, f_un[rnd(g, N(f_un))], x), t, is_uniform(g, x));
  }
  uint32_t k = rnd(g, 10);
  if (k < 6) {
    uint32_t x = gen(g, t, depth - 1, uni), y = gen(g, t, depth - 1, uni);
    return val(g, vyre_b_bin(b, int_bin[rnd(g, N(int_bin))], x, y), t,
               is_uniform(g, x) && is_uniform(g, y));
  }
  uint32_t x = gen(g, t, depth - 1, uni);
  vyre_op op = int_un[rnd(g, N(int_un))];
  if (t == VYRE_T_U32 && k == 9) op = (vyre_op)(VYRE_OP_UNPACK4_LOW + rnd(g, 4));
  return val(g, vyre_b_un(b, op, x), t, is_uniform(g, x));
}

/* ------------------------------------------------------------------ */
/* Statements                                                          */
/* ------------------------------------------------------------------ */

static void leave_scope(fz *g) {
  while (g->nv && g->vals[g->nv - 1].depth > g->depth) g->nv--;
  while (g->nl && g->locs[g->nl - 1].depth > g->depth) g->nl--;
  if (g->lin != UINT32_MAX) {
    /* lin may have been defined inside the block that just closed. */
    int alive = 0;
    for (uint32_t k = 0; k < g->nv; k++) alive |= g->vals[k].id == g->lin;
    if (!alive) g->lin = UINT32_MAX;
  }
  if (g->lidlin != UINT32_MAX) {
    int alive = 0;
    for (uint32_t k = 0; k < g->nv; k++) alive |= g->vals[k].id == g->lidlin;
    if (!alive) g->lidlin = UINT32_MAX;
  }
}

static void stmts(fz *g, uint32_t count, int level);

static void s_store(fz *g) {
  uint32_t cand[MAX_BUFS], n = 0;
  for (uint32_t k = 0; k < g->nb; k++) {
    const fbuf *fb = &g->buf[k];
    if (fb->kind == K_OUT || (fb->kind == K_TILE && g->phase == 0) ||
        (fb->kind == K_GSC && g->phase < 2 && !g->grid_done) || fb->kind == K_OWN)
      cand[n++] = k;
  }
  if (!n) return;
  const fbuf *fb = &g->buf[cand[rnd(g, n)]];
  uint8_t ct = (uint8_t)vyre_type_compute(fb->type);
  uint32_t idx;
  if (fb->kind == K_TILE) idx = lidlin(g);
  else if (fb->kind == K_OUT && chance(g, 8))
    /* Past the end for every invocation: a no-op everywhere. */
    idx = val(g, vyre_b_bin(g->b, VYRE_OP_ADD, val(g, vyre_b_buflen(g->b, fb->index), VYRE_T_U32, 1),
                            lin(g)), VYRE_T_U32, 0);
  else idx = own_index(g, fb);
  /* Transcendentals only flow into outputs nobody reads back. */
  if (ct == VYRE_T_F32 && fb->kind == K_OUT && !fb->readable && !has(g, FZ_NO_TRANSCENDENTAL) &&
      chance(g, 30)) {
    uint32_t x = gen(g, VYRE_T_F32, 2, 0);
    uint32_t v = vyre_b_un(g->b, f_trans[rnd(g, N(f_trans))], x);
    g->uses_trans = 1;
    vyre_b_store(g->b, fb->index, idx, v);
    return;
  }
  vyre_b_store(g->b, fb->index, idx, gen(g, ct, 3, 0));
}

static void s_contended(fz *g) {
  uint32_t cand[MAX_BUFS], n = 0;
  for (uint32_t k = 0; k < g->nb; k++)
    if (g->buf[k].kind == K_ACC || (g->buf[k].kind == K_WACC && g->phase == 0)) cand[n++] = k;
  if (!n) return;
  const fbuf *fb = &g->buf[cand[rnd(g, n)]];
  uint32_t idx;
  if (chance(g, 10)) {
    idx = u32c(g, fb->count + rnd(g, 3)); /* out of bounds: nothing happens */
  } else {
    uint32_t x = gen(g, VYRE_T_U32, 1, 0);
    idx = val(g, vyre_b_bin(g->b, VYRE_OP_AND, x, u32c(g, fb->count - 1)), VYRE_T_U32, 0);
  }
  uint32_t v = gen(g, fb->type, 2, 0);
  /* The old value depends on the order of arrival: nobody may use it. */
  vyre_b_atomic(g->b, fb->op, fb->index, idx, v, (vyre_order)rnd(g, VYRE_ORDER_COUNT_));
}

static void s_let(fz *g) {
  if (g->nl >= MAX_LOCS) return;
  uint8_t t = vtypes[rnd(g, N(vtypes))];
  int want_uni = g->cf_uniform && chance(g, 40);
  uint32_t v = gen(g, t, 3, want_uni);
  int uni = g->cf_uniform && is_uniform(g, v);
  uint32_t slot = vyre_b_local(g->b, (vyre_type)t);
  vyre_b_let(g->b, slot, v);
  floc *l = &g->locs[g->nl++];
  l->slot = slot;
  l->type = t;
  l->uniform = (uint8_t)uni;
  l->counter = 0;
  l->depth = (uint16_t)g->depth;
}

static void s_assign(fz *g) {
  uint32_t cand[MAX_LOCS], n = 0;
  for (uint32_t k = 0; k < g->nl; k++)
    if (!g->locs[k].counter && (!g->locs[k].uniform || g->cf_uniform)) cand[n++] = k;
  if (!n) return;
  floc *l = &g->locs[cand[rnd(g, n)]];
  uint32_t v = gen(g, l->type, 3, l->uniform);
  /* A uniform local stays uniform: the barriers placed by its value depend on it. */
  if (l->uniform && !is_uniform(g, v)) return;
  vyre_b_assign(g->b, l->slot, v);
}

static void s_if(fz *g, int level) {
  int uni = g->cf_uniform && chance(g, 40);
  uint32_t c = gen(g, VYRE_T_BOOL, 2, uni);
  uni = uni && is_uniform(g, c);
  vyre_b_if(g->b, c);
  int saved = g->cf_uniform;
  g->cf_uniform = saved && uni;
  g->depth++;
  stmts(g, 1 + rnd(g, 3), level + 1);
  g->depth--;
  leave_scope(g);
  if (chance(g, 40)) {
    vyre_b_else(g->b);
    g->depth++;
    stmts(g, 1 + rnd(g, 3), level + 1);
    g->depth--;
    leave_scope(g);
  }
  vyre_b_end(g->b);
  g->cf_uniform = saved;
}

static void s_loop(fz *g, int level) {
  if (g->nl >= MAX_LOCS) return;
  int i32 = chance(g, 30);
  uint8_t t = i32 ? VYRE_T_I32 : VYRE_T_U32;
  int uni = g->cf_uniform && chance(g, 50);
  uint32_t start = val(g, vyre_b_const(g->b, (vyre_type)t, i32 ? (uint32_t)(int32_t)((int)rnd(g, 5) - 2)
                                                               : rnd(g, 3)), t, 1);
  uint32_t span;
  if (uni && chance(g, 50)) {
    span = val(g, vyre_b_const(g->b, (vyre_type)t, rnd(g, 6)), t, 1);
  } else {
    uint32_t x = gen(g, t, 1, uni);
    span = val(g, vyre_b_bin(g->b, VYRE_OP_AND, x, val(g, vyre_b_const(g->b, (vyre_type)t, 7), t, 1)),
               t, is_uniform(g, x));
  }
  /* end = start + (small): at most 7 iterations, whatever the values. */
  uint32_t end = val(g, vyre_b_bin(g->b, VYRE_OP_ADD, start, span), t, is_uniform(g, span));
  uni = uni && is_uniform(g, end);
  uint32_t slot = vyre_b_local(g->b, (vyre_type)t);
  vyre_b_loop(g->b, slot, start, end);
  int saved = g->cf_uniform;
  g->cf_uniform = saved && uni;
  g->depth++;
  floc *l = &g->locs[g->nl++];
  l->slot = slot;
  l->type = t;
  l->uniform = (uint8_t)(saved && uni);
  l->counter = 1;
  l->depth = (uint16_t)g->depth;
  stmts(g, 1 + rnd(g, 3), level + 1);
  g->depth--;
  leave_scope(g);
  vyre_b_end(g->b);
  g->cf_uniform = saved;
}

static void stmts(fz *g, uint32_t count, int level) {
  for (uint32_t i = 0; i < count && room(g); i++) {
    uint32_t r = rnd(g, 100);
    if (r < 22) s_store(g);
    else if (r < 36) s_let(g);
    else if (r < 46) s_assign(g);
    else if (r < 56 && !has(g, FZ_NO_ATOMICS)) s_contended(g);
    else if (r < 68 && level < 3) s_if(g, level);
    else if (r < 76 && level < 3) s_loop(g, level);
    else if (r < 80 && level < 3) {
      vyre_b_block(g->b);
      g->depth++;
      stmts(g, 1 + rnd(g, 2), level + 1);
      g->depth--;
      leave_scope(g);
      vyre_b_end(g->b);
    } else if (r < 84 && g->cf_uniform && !has(g, FZ_NO_WORKGROUP_MEMORY)) {
      vyre_b_barrier(g->b, VYRE_BARRIER_WORKGROUP);
    } else {
      s_store(g);
    }
  }
}

/* ------------------------------------------------------------------ */
/* Buffers, inputs, the whole program                                  */
/* ------------------------------------------------------------------ */

static uint8_t storage_type(fz *g, int ints_only) {
  static const uint8_t all[] = {VYRE_T_BOOL, VYRE_T_U8,  VYRE_T_U16, VYRE_T_U32,
                                VYRE_T_U64,  VYRE_T_I8,  VYRE_T_I16, VYRE_T_I32,
                                VYRE_T_I64,  VYRE_T_F16, VYRE_T_BF16, VYRE_T_F32,
                                VYRE_T_U32,  VYRE_T_F32, VYRE_T_I32};
  for (;;) {
    uint8_t t = all[rnd(g, N(all))];
    if (ints_only && !is_int(t)) continue;
    if (t == VYRE_T_F16 && has(g, FZ_NO_F16)) continue;
    if (t == VYRE_T_BF16 && has(g, FZ_NO_BF16)) continue;
    return t;
  }
}

static uint8_t atomic_type(fz *g) {
  static const uint8_t t64[] = {VYRE_T_U32, VYRE_T_I32, VYRE_T_U64, VYRE_T_I64};
  return t64[rnd(g, has(g, FZ_NO_ATOMIC64) ? 2 : 4)];
}

static fbuf *add_buf(fz *g, const char *name, uint8_t kind, vyre_access access, uint8_t type,
                     uint32_t count, uint32_t flags) {
  fbuf *fb = &g->buf[g->nb++];
  memset(fb, 0, sizeof *fb);
  fb->index = vyre_b_buffer(g->b, name, access == VYRE_ACCESS_WORKGROUP ? 0 : UINT32_MAX, access,
                            (vyre_type)type, count, flags);
  fb->kind = kind;
  fb->access = (uint8_t)access;
  fb->type = type;
  fb->count = count;
  return fb;
}

static void declare(fz *g) {
  static const uint32_t wgx[] = {1, 16, 32, 32, 48, 64, 64, 100, 128, 256};
  static const uint32_t ns[] = {1, 5, 32, 64, 100, 256, 300, 1000};
  int multi = chance(g, 20);
  if (multi) {
    static const uint32_t shapes[][3] = {{8, 4, 1}, {16, 3, 1}, {4, 4, 2}, {32, 2, 1}, {6, 5, 3}};
    const uint32_t *s = shapes[rnd(g, N(shapes))];
    g->wg[0] = s[0];
    g->wg[1] = s[1];
    g->wg[2] = s[2];
  } else {
    g->wg[0] = wgx[rnd(g, N(wgx))];
    g->wg[1] = g->wg[2] = 1;
  }
  vyre_builder_set_workgroup(g->b, g->wg[0], g->wg[1], g->wg[2]);
  g->wgs = g->wg[0] * g->wg[1] * g->wg[2];
  g->n = ns[rnd(g, N(ns))];
  g->grid = (g->n + g->wg[0] - 1) / g->wg[0];
  g->invocations = g->grid * g->wgs;
  char name[16];
  uint32_t nin = 1 + rnd(g, 3);
  for (uint32_t i = 0; i < nin; i++) {
    snprintf(name, sizeof name, "in%u", i);
    uint32_t count = chance(g, 50) ? 0 : 1 + rnd(g, g->n + 8);
    fbuf *fb = add_buf(g, name, K_IN, chance(g, 20) ? VYRE_ACCESS_UNIFORM : VYRE_ACCESS_READ_ONLY,
                       storage_type(g, 0), count, 0);
    if (!count) {
      static const uint32_t sizes[] = {0, 1, 7, 64};
      uint32_t pickn = rnd(g, 5);
      fb->count = pickn < 4 ? sizes[pickn] : g->n; /* the input's element count */
    }
  }
  uint32_t nout = 1 + rnd(g, 3);
  for (uint32_t i = 0; i < nout; i++) {
    snprintf(name, sizeof name, "out%u", i);
    /* out0 sets the element count; the others may be shorter or longer. */
    uint32_t count = i == 0 ? g->n : (chance(g, 50) ? g->n : 1 + rnd(g, g->n + 16));
    uint32_t r = rnd(g, 3);
    vyre_access acc = r == 0 ? VYRE_ACCESS_WRITE_ONLY : VYRE_ACCESS_READ_WRITE;
    uint32_t flags = r == 1 ? VYRE_BUF_OUTPUT : 0; /* r == 2: in/out */
    if (i == 0 && r == 2) flags = VYRE_BUF_OUTPUT;  /* keep out0's count fixed */
    fbuf *fb = add_buf(g, name, K_OUT, acc, storage_type(g, 0), count, flags);
    fb->readable = acc == VYRE_ACCESS_READ_WRITE;
    fb->off = chance(g, 80) ? 0 : (chance(g, 50) ? 1 + rnd(g, 3) : count + rnd(g, 4));
    uint32_t es = vyre_type_size(fb->type);
    if (chance(g, 15) && count > 2) {
      uint32_t first = rnd(g, count / 2), len = 1 + rnd(g, count - first - 1);
      vyre_b_buffer_range(g->b, fb->index, first * es, len * es);
    }
  }
  if (!has(g, FZ_NO_ATOMICS)) {
    if (chance(g, 50)) {
      static const uint32_t ks[] = {1, 2, 4, 8};
      static const vyre_op ops[] = {VYRE_OP_ATOMIC_ADD, VYRE_OP_ATOMIC_AND, VYRE_OP_ATOMIC_OR,
                                    VYRE_OP_ATOMIC_XOR, VYRE_OP_ATOMIC_MIN, VYRE_OP_ATOMIC_MAX};
      fbuf *fb = add_buf(g, "acc", K_ACC, VYRE_ACCESS_READ_WRITE, atomic_type(g), ks[rnd(g, 4)], 0);
      fb->op = ops[rnd(g, N(ops))];
    }
    if (chance(g, 35)) add_buf(g, "own", K_OWN, VYRE_ACCESS_READ_WRITE, atomic_type(g), g->n,
                               VYRE_BUF_OUTPUT);
  }
  if (!has(g, FZ_NO_WORKGROUP_MEMORY) && chance(g, 35)) {
    add_buf(g, "tile", K_TILE, VYRE_ACCESS_WORKGROUP, storage_type(g, 0), g->wgs, 0);
    if (!has(g, FZ_NO_ATOMICS) && chance(g, 50)) {
      static const vyre_op ops[] = {VYRE_OP_ATOMIC_ADD, VYRE_OP_ATOMIC_OR, VYRE_OP_ATOMIC_MAX,
                                    VYRE_OP_ATOMIC_MIN, VYRE_OP_ATOMIC_XOR, VYRE_OP_ATOMIC_AND};
      fbuf *fb = add_buf(g, "wacc", K_WACC, VYRE_ACCESS_WORKGROUP, atomic_type(g),
                         chance(g, 50) ? 4 : 32, 0);
      fb->op = ops[rnd(g, N(ops))];
    }
  }
  if (!has(g, FZ_NO_GRID_BARRIER) && chance(g, 12))
    add_buf(g, "gsc", K_GSC, VYRE_ACCESS_READ_WRITE, storage_type(g, 0), g->invocations, 0);
}

static void body(fz *g) {
  lin(g);
  int wmem = 0, grid = 0;
  for (uint32_t k = 0; k < g->nb; k++) {
    wmem |= g->buf[k].kind == K_TILE || g->buf[k].kind == K_WACC;
    grid |= g->buf[k].kind == K_GSC;
  }
  stmts(g, 3 + rnd(g, 5), 0);
  if (wmem) {
    vyre_b_barrier(g->b, VYRE_BARRIER_WORKGROUP);
    g->phase = 1;
    stmts(g, 2 + rnd(g, 4), 0);
  } else {
    g->phase = 1;
  }
  if (grid) {
    /* Make sure something crosses the barrier through gsc. */
    for (uint32_t k = 0; k < g->nb; k++)
      if (g->buf[k].kind == K_GSC)
        vyre_b_store(g->b, g->buf[k].index, lin(g),
                     gen(g, (uint8_t)vyre_type_compute(g->buf[k].type), 2, 0));
    vyre_b_barrier(g->b, VYRE_BARRIER_GRID);
    g->phase = 2;
    g->grid_done = 1;
    g->nv = 0; /* values do not cross a grid barrier */
    g->lin = g->lidlin = UINT32_MAX;
    lin(g);
    stmts(g, 2 + rnd(g, 4), 0);
  }
  /* The tail: early returns and traps, after every collective. */
  g->tail = 1;
  if (!has(g, FZ_NO_TRAP) && chance(g, 8)) {
    uint32_t x = lin(g);
    uint32_t c = val(g, vyre_b_bin(g->b, VYRE_OP_EQ, x, u32c(g, rnd(g, g->n + 4))), VYRE_T_BOOL, 0);
    if (chance(g, 40)) {
      uint32_t y = gen(g, VYRE_T_BOOL, 2, 0);
      c = val(g, vyre_b_bin(g->b, VYRE_OP_LOGICAL_AND, c, y), VYRE_T_BOOL, 0);
    }
    vyre_b_if(g->b, c);
    vyre_b_trap(g->b, g->trap_code);
    vyre_b_end(g->b);
    g->cf_uniform = 0; /* what follows a divergent trap is not uniform */
  }
  if (chance(g, 15)) {
    uint32_t c = gen(g, VYRE_T_BOOL, 2, 0);
    vyre_b_if(g->b, c);
    vyre_b_return(g->b);
    vyre_b_end(g->b);
    g->cf_uniform = 0;
  }
  /* Every program writes out0 at least once. */
  const fbuf *o0 = NULL;
  for (uint32_t k = 0; k < g->nb && !o0; k++)
    if (g->buf[k].kind == K_OUT) o0 = &g->buf[k];
  if (o0)
    vyre_b_store(g->b, o0->index, own_index(g, o0),
                 gen(g, (uint8_t)vyre_type_compute(o0->type), 3, 0));
}

static vyre_status make_inputs(fz *g, const vyre_program *p, fz_program *out, vyre_error *err) {
  out->input_count = p->input_count;
  out->inputs = calloc(p->input_count ? p->input_count : 1, sizeof *out->inputs);
  if (!out->inputs) return vyre_error_set(err, VYRE_OUT_OF_MEMORY, 0, "fuzz: out of memory");
  for (uint32_t i = 0; i < p->buffer_count; i++) {
    const vyre_buffer_info *bf = &p->buffers[i];
    if (bf->input_index < 0) continue;
    uint32_t count = bf->decl.count;
    if (count == 0) {
      for (uint32_t k = 0; k < g->nb; k++)
        if (g->buf[k].index == i) count = g->buf[k].count;
    }
    uint64_t size = (uint64_t)count * bf->elem_size;
    uint8_t *d = malloc(size ? size : 1);
    if (!d) return vyre_error_set(err, VYRE_OUT_OF_MEMORY, 0, "fuzz: out of memory");
    int zero_acc = strcmp(bf->name, "acc") == 0 && chance(g, 50);
    for (uint32_t e = 0; e < count; e++) {
      if (zero_acc) memset(d + (uint64_t)e * bf->elem_size, 0, bf->elem_size);
      else cf_random_element(bf->decl.elem_type, &g->rng, d + (uint64_t)e * bf->elem_size);
    }
    out->inputs[bf->input_index].data = d;
    out->inputs[bf->input_index].size = size;
  }
  return VYRE_OK;
}

void fz_program_free(fz_program *p) {
  if (!p) return;
  if (p->inputs)
    for (uint32_t i = 0; i < p->input_count; i++) free((void *)p->inputs[i].data);
  free(p->inputs);
  free(p->bytes);
  memset(p, 0, sizeof *p);
}

vyre_status fz_generate(uint64_t seed, uint64_t index, uint32_t flags, fz_program *out,
                        vyre_error *err) {
  memset(out, 0, sizeof *out);
  vyre_error last = VYRE_ERROR_INIT;
  /* A generator slip (a program the validator refuses) gets another
   * deterministic attempt; several in a row are a bug worth reporting. */
  for (uint32_t attempt = 0; attempt < 8; attempt++) {
    fz *g = calloc(1, sizeof *g);
    if (!g) return vyre_error_set(err, VYRE_OUT_OF_MEMORY, 0, "fuzz: out of memory");
    uint64_t st0 = seed * 0x9e3779b97f4a7c15ull ^ (index + 1) * 0xd1b54a32d192ed03ull ^ attempt;
    g->rng = st0;
    vyre__splitmix64(&g->rng);
    g->flags = flags;
    g->b = vyre_builder_new(1, 1, 1);
    g->lin = g->lidlin = UINT32_MAX;
    g->cf_uniform = 1;
    g->max_insts = 60 + rnd(g, 140);
    g->trap_code = 1 + rnd(g, 1000);
    if (!g->b) {
      free(g);
      return vyre_error_set(err, VYRE_OUT_OF_MEMORY, 0, "fuzz: out of memory");
    }
    declare(g);
    body(g);
    void *bytes = NULL;
    size_t size = 0;
    vyre_status st = vyre_builder_finish(g->b, &bytes, &size, &last);
    vyre_builder_free(g->b);
    vyre_program *p = NULL;
    if (st == VYRE_OK) st = vyre_program_decode(bytes, size, &p, &last);
    if (st == VYRE_OK) {
      out->bytes = bytes;
      out->size = size;
      out->options.struct_size = sizeof out->options;
      out->options.ulp_budget = g->uses_trans ? 1 : 0;
      st = make_inputs(g, p, out, err);
      vyre_program_free(p);
      free(g);
      if (st != VYRE_OK) fz_program_free(out);
      return st;
    }
    free(bytes);
    free(g);
    if (st == VYRE_OUT_OF_MEMORY) break;
  }
  vyre_error_copy(err, &last);
  vyre_error_prefix(err, "fuzz: program %llu of seed %llu is invalid after 8 attempts (a "
                         "generator bug; please report the seed)",
                    (unsigned long long)index, (unsigned long long)seed);
  return last.status ? (vyre_status)last.status : VYRE_INTERNAL;
}
