/* progen.c -- the random-program generator (progen.h): valid programs of three shapes, declaration variety, random inputs. */
/*
 * One engine: value and local tracking with uniformity, expression trees,
 * statements and buffers are shared; the shape flags decide which buffers
 * exist and where a statement may write.
 *
 * Race freedom (PROGEN_RACE_FREE; docs/conformance.md, "Fuzzing") comes
 * from the program's shape, not from luck:
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
 * Otherwise (K_ANY buffers) loads, stores and atomics go anywhere, and
 * returns and traps may come mid-program; after a divergent one no barrier
 * or subgroup op follows.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "abi/support/prng.h"
#include "progen.h"
#include "abi/support/bits.h"

#define MAX_VALS 4096
#define MAX_LOCS 256
#define MAX_BUFS 16
#define ATTEMPTS 8

/* Buffer kinds: the race-free roles, or K_ANY (no discipline). */
enum { K_IN, K_OUT, K_ACC, K_OWN, K_TILE, K_WACC, K_GSC, K_ANY };

typedef struct gval {
  uint32_t id;
  uint8_t type, uniform;
  uint16_t depth;
} gval;

typedef struct gloc {
  uint32_t slot;
  uint8_t type, uniform, counter; /* uniform: every write so far is; counter: read-only */
  uint16_t depth;
} gloc;

typedef struct gbuf {
  uint32_t index;
  uint8_t kind, access, type, readable; /* readable: may be loaded (own index for outputs) */
  uint32_t count; /* declared count; for count-0 race-free inputs the input's element count */
  uint32_t off;   /* own-index offset: stores go to lin + off */
  vyre_op op;     /* the one atomic op of ACC/WACC */
} gbuf;

typedef struct gen {
  uint64_t rng;
  uint32_t flags, max_insts, elements;
  vyre_builder *b;
  uint32_t wg[3], wgs, n, grid, invocations;
  gbuf buf[MAX_BUFS];
  uint32_t nb;
  gval vals[MAX_VALS];
  uint32_t nv;
  gloc locs[MAX_LOCS];
  uint32_t nl;
  uint32_t depth;
  int cf_uniform, diverged, in_loop;
  int phase; /* race-free: 0 tile/wacc writes; 1 after the workgroup barrier; 2 after the grid barrier */
  int grid_done;
  uint32_t lin, lidlin; /* value ids, UINT32_MAX when not in scope; elementwise: lin is gid.x */
  uint32_t trap_code;
  int uses_trans;
} gen;

static uint64_t next(gen *g) { return vyre__splitmix64(&g->rng); }
static uint32_t rnd(gen *g, uint32_t n) { return n ? (uint32_t)(next(g) % n) : 0; }
static int chance(gen *g, uint32_t pct) { return rnd(g, 100) < pct; }
static int has(gen *g, uint32_t f) { return (g->flags & f) != 0; }
static int rf(gen *g) { return has(g, PROGEN_RACE_FREE); }
static int ew(gen *g) { return has(g, PROGEN_ELEMENTWISE); }
static int room(gen *g) { return vyre_b_inst_count(g->b) < g->max_insts; }
/* Collectives (barriers, subgroup ops) are allowed here. */
static int uniform_here(gen *g) { return g->cf_uniform && !g->diverged && !ew(g); }

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
static uint32_t edge_f32(gen *g) {
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
  case 0: return f32_specials[rnd(g, N(f32_specials))];
  case 1:
  case 2: return sign | (uint32_t)(halves[rnd(g, N(halves))] + 127) << 23 | near_one[rnd(g, N(near_one))];
  default: return sign | (uint32_t)(exps[rnd(g, N(exps))] + 127) << 23 | fracs[rnd(g, N(fracs))];
  }
}

static int is_int(uint8_t t) {
  return t == VYRE_T_U32 || t == VYRE_T_U64 || t == VYRE_T_I32 || t == VYRE_T_I64;
}

static int is_ro(uint8_t access) {
  return access == VYRE_ACCESS_READ_ONLY || access == VYRE_ACCESS_UNIFORM;
}

/* ------------------------------------------------------------------ */
/* Values                                                              */
/* ------------------------------------------------------------------ */

static uint32_t val(gen *g, uint32_t id, uint8_t t, int uniform) {
  if (g->nv < MAX_VALS) {
    gval *v = &g->vals[g->nv++];
    v->id = id;
    v->type = t;
    v->uniform = (uint8_t)(uniform != 0);
    v->depth = (uint16_t)g->depth;
  }
  return id;
}

static int is_uniform(gen *g, uint32_t id) {
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
      bits = f32_specials[rnd(g, N(f32_specials))];
    } else if (chance(g, 40)) {
      bits = edge_f32(g);
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
  return val(g, vyre_b_const(g->b, (vyre_type)t, bits), t, 1);
}

static uint32_t u32c(gen *g, uint32_t v) { return val(g, vyre_b_u32(g->b, v), VYRE_T_U32, 1); }

/* The linear invocation id and the local linear id (re-made after a grid barrier). */
static uint32_t lin(gen *g) {
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

static uint32_t lidlin(gen *g) {
  if (g->lidlin != UINT32_MAX) return g->lidlin;
  if (g->wg[1] == 1 && g->wg[2] == 1) {
    g->lidlin = val(g, vyre_b_builtin(g->b, VYRE_OP_LOCAL_ID, 0), VYRE_T_U32, 0);
    return g->lidlin;
  }
  g->lin = UINT32_MAX;
  lin(g);
  return g->lidlin;
}

static uint32_t own_index(gen *g, const gbuf *fb) {
  uint32_t l = lin(g);
  if (!fb->off) return l;
  return val(g, vyre_b_bin(g->b, VYRE_OP_ADD, l, u32c(g, fb->off)), VYRE_T_U32, 0);
}

static uint32_t gen_value(gen *g, uint8_t t, int depth, int uni);

/* An index anywhere, in or out of bounds (elementwise: gid.x). */
static uint32_t any_index(gen *g, uint32_t count, int uni) {
  uint32_t c = count ? count : 8;
  if (ew(g)) return lin(g);
  switch (rnd(g, uni ? 3 : 6)) {
  case 0: return u32c(g, rnd(g, c + c / 4 + 3));
  case 1: {
    uint32_t v = pick(g, VYRE_T_U32, uni);
    if (v != UINT32_MAX) return v;
    return u32c(g, rnd(g, c));
  }
  case 2: {
    uint32_t x = gen_value(g, VYRE_T_U32, 1, uni);
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
static uint32_t as(gen *g, uint32_t v, uint8_t from, uint8_t to, int uniform) {
  if (from == to) return v;
  return val(g, vyre_b_cast(g->b, (vyre_type)to, v), to, uniform);
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
  default: return fb->readable && (!uni || is_ro(fb->access));
  }
}

/* A load that yields (after a cast) type t; UINT32_MAX when no buffer can. */
static uint32_t load(gen *g, uint8_t t, int uni) {
  uint32_t cand[MAX_BUFS], n = 0;
  if (uni && ew(g)) return UINT32_MAX;
  for (uint32_t k = 0; k < g->nb; k++)
    if (loadable(g, &g->buf[k], uni)) cand[n++] = k;
  if (!n) return UINT32_MAX;
  const gbuf *fb = &g->buf[cand[rnd(g, n)]];
  uint32_t idx;
  if (fb->kind == K_OUT || fb->kind == K_OWN) idx = own_index(g, fb);
  else if (ew(g) && is_ro(fb->access) && chance(g, 25))
    idx = u32c(g, rnd(g, fb->count ? fb->count + 1 : 4)); /* never stored: any element */
  else idx = any_index(g, fb->count, uni && is_ro(fb->access));
  int lu = is_ro(fb->access) && is_uniform(g, idx);
  uint8_t ct = (uint8_t)vyre_type_compute(fb->type);
  uint32_t v = val(g, vyre_b_load(g->b, fb->index, idx), ct, lu);
  return as(g, v, ct, t, lu);
}

static uint32_t get_local(gen *g, uint8_t t, int uni) {
  uint32_t cand[MAX_LOCS], n = 0;
  for (uint32_t k = 0; k < g->nl; k++)
    if (g->locs[k].type == t && (!uni || g->locs[k].uniform)) cand[n++] = k;
  if (!n) return UINT32_MAX;
  const gloc *l = &g->locs[cand[rnd(g, n)]];
  return val(g, vyre_b_get(g->b, l->slot), t, l->uniform);
}

static uint32_t builtin(gen *g, int uni) {
  vyre_builder *b = g->b;
  uint32_t k = ew(g) ? (!uni && chance(g, 50) ? 6 : 0) : rnd(g, uni ? 3 : 7), axis = rnd(g, 3);
  switch (k) {
  case 0: return val(g, vyre_b_buflen(b, g->buf[rnd(g, g->nb)].index), VYRE_T_U32, 1);
  case 1: return val(g, vyre_b_builtin(b, VYRE_OP_WORKGROUP_ID, axis), VYRE_T_U32, 1);
  case 2:
    if (has(g, PROGEN_NO_SUBGROUP)) return UINT32_MAX;
    return val(g, vyre_b_builtin(b, VYRE_OP_SUBGROUP_SIZE, 0), VYRE_T_U32, 1);
  case 3: return val(g, vyre_b_gid(b, axis), VYRE_T_U32, 0);
  case 4: return val(g, vyre_b_builtin(b, VYRE_OP_LOCAL_ID, axis), VYRE_T_U32, 0);
  case 5:
    if (has(g, PROGEN_NO_SUBGROUP)) return UINT32_MAX;
    return val(g, vyre_b_builtin(b, VYRE_OP_SUBGROUP_LANE, 0), VYRE_T_U32, 0);
  default: return lin(g);
  }
}

static uint32_t leaf(gen *g, uint8_t t, int uni) {
  uint32_t r = rnd(g, 12), v = UINT32_MAX;
  if (r < 3) v = pick(g, t, uni);
  else if (r < 6) v = load(g, t, uni);
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
  if (!n || (vyre_type_size(t) == 8 && has(g, PROGEN_NO_ATOMIC64))) return UINT32_MAX;
  const gbuf *fb = &g->buf[cand[rnd(g, n)]];
  uint32_t idx = fb->kind == K_OWN ? own_index(g, fb) : any_index(g, fb->count, 0);
  vyre_order order = (vyre_order)rnd(g, VYRE_ORDER_COUNT_);
  uint32_t v = gen_value(g, t, 1, 0);
  if (chance(g, 20)) {
    uint32_t d = gen_value(g, t, 1, 0);
    return val(g, vyre_b_cas(g->b, fb->index, idx, v, d, order), t, 0);
  }
  vyre_op op = (vyre_op)(VYRE_OP_ATOMIC_ADD + rnd(g, 7));
  return val(g, vyre_b_atomic(g->b, op, fb->index, idx, v, order), t, 0);
}

static uint32_t subgroup_value(gen *g, uint8_t t, int depth) {
  vyre_builder *b = g->b;
  uint32_t k = rnd(g, 3);
  if (k == 0 && t == VYRE_T_U32) {
    uint32_t c = gen_value(g, VYRE_T_BOOL, depth - 1, 0);
    return val(g, vyre_b_ballot(b, c), t, 0);
  }
  if (k == 1 || t == VYRE_T_BOOL) {
    uint32_t x = gen_value(g, t, depth - 1, 0);
    uint32_t l = chance(g, 50) ? gen_value(g, VYRE_T_U32, 1, 0) : u32c(g, rnd(g, 40));
    return val(g, vyre_b_shuffle(b, x, l), t, 0);
  }
  uint32_t x = gen_value(g, t, depth - 1, 0);
  vyre_reduce kind = (vyre_reduce)(t == VYRE_T_F32 ? rnd(g, 3) : rnd(g, VYRE_REDUCE_COUNT_));
  return val(g, vyre_b_reduce(b, kind, x), t, 0);
}

static uint32_t bool_value(gen *g, int depth, int uni) {
  vyre_builder *b = g->b;
  const uint8_t t = VYRE_T_BOOL;
  uint32_t k = rnd(g, 4);
  if (k == 0) {
    uint8_t ct = all_vtypes[rnd(g, N(all_vtypes))];
    uint32_t x = gen_value(g, ct, depth - 1, uni), y = gen_value(g, ct, depth - 1, uni);
    vyre_op op = (vyre_op)(VYRE_OP_EQ + rnd(g, ct == VYRE_T_BOOL ? 2 : 6));
    return val(g, vyre_b_bin(b, op, x, y), t, is_uniform(g, x) && is_uniform(g, y));
  }
  if (k == 1) {
    static const vyre_op ops[] = {VYRE_OP_LOGICAL_AND, VYRE_OP_LOGICAL_OR, VYRE_OP_AND,
                                  VYRE_OP_OR, VYRE_OP_XOR};
    uint32_t x = gen_value(g, t, depth - 1, uni), y = gen_value(g, t, depth - 1, uni);
    return val(g, vyre_b_bin(b, ops[rnd(g, N(ops))], x, y), t,
               is_uniform(g, x) && is_uniform(g, y));
  }
  if (k == 2) {
    uint32_t x = gen_value(g, VYRE_T_F32, depth - 1, uni);
    return val(g, vyre_b_un(b, (vyre_op)(VYRE_OP_ISNAN + rnd(g, 3)), x), t, is_uniform(g, x));
  }
  uint32_t x = gen_value(g, t, depth - 1, uni);
  return val(g, vyre_b_un(b, VYRE_OP_NOT, x), t, is_uniform(g, x));
}

/* Arithmetic of type t: binary ops, fma (f32), unary ops. */
static uint32_t arith_value(gen *g, uint8_t t, int depth, int uni) {
  vyre_builder *b = g->b;
  int f = t == VYRE_T_F32;
  uint32_t k = rnd(g, 10);
  if (k < (f ? 5u : 6u)) {
    uint32_t x = gen_value(g, t, depth - 1, uni), y = gen_value(g, t, depth - 1, uni);
    vyre_op op = f ? f_bin[rnd(g, N(f_bin))] : int_bin[rnd(g, N(int_bin))];
    return val(g, vyre_b_bin(b, op, x, y), t, is_uniform(g, x) && is_uniform(g, y));
  }
  if (f && k < 6) {
    uint32_t x = gen_value(g, t, depth - 1, uni), y = gen_value(g, t, depth - 1, uni),
             z = gen_value(g, t, depth - 1, uni);
    return val(g, vyre_b_fma(b, x, y, z), t,
               is_uniform(g, x) && is_uniform(g, y) && is_uniform(g, z));
  }
  uint32_t x = gen_value(g, t, depth - 1, uni);
  vyre_op op = f ? f_un[rnd(g, N(f_un))] : int_un[rnd(g, N(int_un))];
  if (t == VYRE_T_U32 && k == 9) op = (vyre_op)(VYRE_OP_UNPACK4_LOW + rnd(g, 4));
  /* Race-free programs keep transcendentals out of expressions (s_store). */
  if (f && k == 9 && !rf(g) && !has(g, PROGEN_NO_TRANSCENDENTAL)) {
    op = f_trans[rnd(g, N(f_trans))];
    g->uses_trans = 1;
  }
  return val(g, vyre_b_un(b, op, x), t, is_uniform(g, x));
}

static uint32_t gen_value(gen *g, uint8_t t, int depth, int uni) {
  if (depth <= 0 || !room(g) || chance(g, 20)) return leaf(g, t, uni);
  uint32_t r = rnd(g, 100);
  if (r < 7) {
    uint32_t c = gen_value(g, VYRE_T_BOOL, depth - 1, uni);
    uint32_t x = gen_value(g, t, depth - 1, uni), y = gen_value(g, t, depth - 1, uni);
    return val(g, vyre_b_select(g->b, c, x, y), t,
               is_uniform(g, c) && is_uniform(g, x) && is_uniform(g, y));
  }
  if (r < 15) {
    uint8_t from = all_vtypes[rnd(g, N(all_vtypes))];
    uint32_t x = gen_value(g, from, depth - 1, uni);
    return as(g, x, from, t, is_uniform(g, x));
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

/* ------------------------------------------------------------------ */
/* Statements                                                          */
/* ------------------------------------------------------------------ */

static void leave_scope(gen *g) {
  while (g->nv && g->vals[g->nv - 1].depth > g->depth) g->nv--;
  while (g->nl && g->locs[g->nl - 1].depth > g->depth) g->nl--;
  /* lin may have been defined inside the block that just closed. */
  uint32_t *ids[2] = {&g->lin, &g->lidlin};
  for (int i = 0; i < 2; i++) {
    if (*ids[i] == UINT32_MAX) continue;
    int alive = 0;
    for (uint32_t k = 0; k < g->nv; k++) alive |= g->vals[k].id == *ids[i];
    if (!alive) *ids[i] = UINT32_MAX;
  }
}

static void stmts(gen *g, uint32_t count, int level);

/* A nested statement list: one scope deeper. */
static void nested(gen *g, uint32_t count, int level) {
  g->depth++;
  stmts(g, count, level + 1);
  g->depth--;
  leave_scope(g);
}

static int storable(gen *g, const gbuf *fb) {
  switch (fb->kind) {
  case K_OUT:
  case K_OWN: return 1;
  case K_TILE: return g->phase == 0;
  case K_GSC: return g->phase < 2 && !g->grid_done;
  case K_ANY: return !is_ro(fb->access) && (fb->access != VYRE_ACCESS_WORKGROUP || !ew(g));
  default: return 0;
  }
}

/*
 * A boundary probe: mul, div or fma of edge-pool operands (constants, or
 * loads of inputs, a share of which come from the pool too), stored as
 * it is, so that a result in the underflow window reaches an output
 * instead of vanishing into a later add of an ordinary value.
 */
static uint32_t edge_operand(gen *g) {
  if (chance(g, 40)) {
    uint32_t v = load(g, VYRE_T_F32, 0);
    if (v != UINT32_MAX) return v;
  }
  return val(g, vyre_b_const(g->b, VYRE_T_F32, edge_f32(g)), VYRE_T_F32, 1);
}

/* An f32 constant 2^e (1 + frac 2^-23) with a random sign. */
static uint32_t f32_const(gen *g, int e, uint32_t frac) {
  uint32_t bits = (rnd(g, 2) ? 0x80000000u : 0u) | (uint32_t)(e + 127) << 23 | frac;
  return val(g, vyre_b_const(g->b, VYRE_T_F32, bits), VYRE_T_F32, 1);
}

static uint32_t boundary_probe(gen *g) {
  /* Exponents summing to -127 and significands around 1 and 2: products
   * 2^-126 (1 - 2^-24) and neighbours, the underflow window's edges. */
  static const int16_t lo[] = {-126, -100, -64, -27};
  static const uint32_t fracs[] = {0x000000u, 0x7fffffu, 0x7ffffeu, 0x000001u, 0x7fffffu};
  if (chance(g, 25)) { /* inputs (a share from the pool) and pool constants */
    uint32_t x = edge_operand(g), y = edge_operand(g);
    return val(g, vyre_b_bin(g->b, chance(g, 50) ? VYRE_OP_MUL : VYRE_OP_DIV, x, y), VYRE_T_F32, 0);
  }
  int e1 = lo[rnd(g, N(lo))], e2 = -127 - e1;
  uint32_t x = f32_const(g, e1, fracs[rnd(g, N(fracs))]);
  switch (rnd(g, 3)) {
  case 0: return val(g, vyre_b_bin(g->b, VYRE_OP_MUL, x, f32_const(g, e2, fracs[rnd(g, N(fracs))])),
                     VYRE_T_F32, 0);
  case 1: /* x / 2^(-e2) = x 2^e2: the same products as quotients */
    return val(g, vyre_b_bin(g->b, VYRE_OP_DIV, x, f32_const(g, -e2, fracs[rnd(g, 2) ? 0 : 3])),
               VYRE_T_F32, 0);
  default: {
    static const uint32_t addends[] = {0x00000000u, 0x80000000u, 0x00800000u, 0x80800000u,
                                       0x01000000u, 0x81000000u};
    uint32_t y = f32_const(g, e2, fracs[rnd(g, N(fracs))]);
    uint32_t z = val(g, vyre_b_const(g->b, VYRE_T_F32, addends[rnd(g, N(addends))]), VYRE_T_F32, 1);
    return val(g, vyre_b_fma(g->b, x, y, z), VYRE_T_F32, 0);
  }
  }
}

static void s_store(gen *g) {
  uint32_t cand[MAX_BUFS], n = 0;
  for (uint32_t k = 0; k < g->nb; k++)
    if (storable(g, &g->buf[k])) cand[n++] = k;
  if (!n) return;
  const gbuf *fb = &g->buf[cand[rnd(g, n)]];
  uint8_t ct = (uint8_t)vyre_type_compute(fb->type);
  uint32_t idx;
  if (fb->kind == K_ANY) idx = any_index(g, fb->count, 0);
  else if (fb->kind == K_TILE) idx = lidlin(g);
  else if (fb->kind == K_OUT && chance(g, 8))
    /* Past the end for every invocation: a no-op everywhere. */
    idx = val(g, vyre_b_bin(g->b, VYRE_OP_ADD, val(g, vyre_b_buflen(g->b, fb->index), VYRE_T_U32, 1),
                            lin(g)), VYRE_T_U32, 0);
  else idx = own_index(g, fb);
  /* Transcendentals only flow into outputs nobody reads back. */
  if (ct == VYRE_T_F32 && fb->kind == K_OUT && !fb->readable &&
      !has(g, PROGEN_NO_TRANSCENDENTAL) && chance(g, 30)) {
    uint32_t x = gen_value(g, VYRE_T_F32, 2, 0);
    uint32_t v = vyre_b_un(g->b, f_trans[rnd(g, N(f_trans))], x);
    g->uses_trans = 1;
    vyre_b_store(g->b, fb->index, idx, v);
    return;
  }
  if (ct == VYRE_T_F32 && chance(g, 25)) {
    vyre_b_store(g->b, fb->index, idx, boundary_probe(g));
    return;
  }
  vyre_b_store(g->b, fb->index, idx, gen_value(g, ct, 3, 0));
}

static void s_contended(gen *g) {
  uint32_t cand[MAX_BUFS], n = 0;
  for (uint32_t k = 0; k < g->nb; k++)
    if (g->buf[k].kind == K_ACC || (g->buf[k].kind == K_WACC && g->phase == 0)) cand[n++] = k;
  if (!n) return;
  const gbuf *fb = &g->buf[cand[rnd(g, n)]];
  uint32_t idx;
  if (chance(g, 10)) {
    idx = u32c(g, fb->count + rnd(g, 3)); /* out of bounds: nothing happens */
  } else {
    uint32_t x = gen_value(g, VYRE_T_U32, 1, 0);
    idx = val(g, vyre_b_bin(g->b, VYRE_OP_AND, x, u32c(g, fb->count - 1)), VYRE_T_U32, 0);
  }
  uint32_t v = gen_value(g, fb->type, 2, 0);
  /* The old value depends on the order of arrival: nobody may use it. */
  vyre_b_atomic(g->b, fb->op, fb->index, idx, v, (vyre_order)rnd(g, VYRE_ORDER_COUNT_));
}

static gloc *new_local(gen *g, uint32_t slot, uint8_t t, int uniform, int counter) {
  gloc *l = &g->locs[g->nl++];
  l->slot = slot;
  l->type = t;
  l->uniform = (uint8_t)(uniform != 0);
  l->counter = (uint8_t)counter;
  l->depth = (uint16_t)g->depth;
  return l;
}

/* let: a fresh local, or (value) an atomic/subgroup result kept in one. */
static void s_let(gen *g, int value) {
  if (g->nl >= MAX_LOCS) return;
  uint8_t t = value && chance(g, 50) ? VYRE_T_U32 : vtypes[rnd(g, N(vtypes))];
  int want_uni = !value && uniform_here(g) && chance(g, 40);
  uint32_t v = gen_value(g, t, value ? 2 : 3, want_uni);
  uint32_t slot = vyre_b_local(g->b, (vyre_type)t);
  vyre_b_let(g->b, slot, v);
  new_local(g, slot, t, g->cf_uniform && !g->diverged && is_uniform(g, v), 0);
}

static void s_assign(gen *g) {
  uint32_t cand[MAX_LOCS], n = 0;
  for (uint32_t k = 0; k < g->nl; k++)
    if (!g->locs[k].counter && (!g->locs[k].uniform || (g->cf_uniform && !g->diverged)))
      cand[n++] = k;
  if (!n) return;
  gloc *l = &g->locs[cand[rnd(g, n)]];
  uint32_t v = gen_value(g, l->type, 3, l->uniform);
  /* A uniform local stays uniform: the barriers placed by its value depend on it. */
  if (l->uniform && !is_uniform(g, v)) return;
  vyre_b_assign(g->b, l->slot, v);
}

static void s_if(gen *g, int level) {
  int uni = g->cf_uniform && !ew(g) && chance(g, 40);
  uint32_t c = gen_value(g, VYRE_T_BOOL, 2, uni);
  uni = uni && is_uniform(g, c);
  vyre_b_if(g->b, c);
  int saved = g->cf_uniform;
  g->cf_uniform = saved && uni;
  nested(g, 1 + rnd(g, 3), level);
  if (chance(g, 40)) {
    vyre_b_else(g->b);
    nested(g, 1 + rnd(g, 3), level);
  }
  vyre_b_end(g->b);
  g->cf_uniform = saved;
}

static void s_loop(gen *g, int level) {
  if (g->nl >= MAX_LOCS) return;
  int i32 = chance(g, 30);
  uint8_t t = i32 ? VYRE_T_I32 : VYRE_T_U32;
  int uni = g->cf_uniform && chance(g, 50);
  uint32_t first = i32 ? (uint32_t)(int32_t)((int)rnd(g, 5) - 2) : rnd(g, 3);
  uint32_t start = val(g, vyre_b_const(g->b, (vyre_type)t, first), t, 1);
  uint32_t span;
  if (uni && chance(g, 50)) {
    span = val(g, vyre_b_const(g->b, (vyre_type)t, rnd(g, 6)), t, 1);
  } else {
    uint32_t x = gen_value(g, t, 1, uni);
    uint32_t seven = val(g, vyre_b_const(g->b, (vyre_type)t, 7), t, 1);
    span = val(g, vyre_b_bin(g->b, VYRE_OP_AND, x, seven), t, is_uniform(g, x));
  }
  /* end = start + (small): at most 7 iterations, whatever the values. */
  uint32_t end = val(g, vyre_b_bin(g->b, VYRE_OP_ADD, start, span), t, is_uniform(g, span));
  uni = uni && is_uniform(g, end);
  uint32_t slot = vyre_b_local(g->b, (vyre_type)t);
  vyre_b_loop(g->b, slot, start, end);
  int saved = g->cf_uniform, was = g->in_loop;
  g->cf_uniform = saved && uni;
  g->in_loop = 1;
  g->depth++;
  new_local(g, slot, t, g->cf_uniform && !g->diverged, 1);
  g->depth--;
  nested(g, 1 + rnd(g, 3), level);
  vyre_b_end(g->b);
  g->cf_uniform = saved;
  g->in_loop = was;
}

/* Without the race-free discipline: a return or trap mid-program, or a
 * grid barrier at the top level. */
static void s_exit(gen *g, int level) {
  if (ew(g) || g->in_loop || level == 0 || !chance(g, 50)) return;
  if (rnd(g, 2) == 0) {
    if (has(g, PROGEN_NO_RETURN)) return;
    vyre_b_return(g->b);
  } else {
    if (has(g, PROGEN_NO_TRAP)) return;
    vyre_b_trap(g->b, 1u + rnd(g, 1000));
  }
  if (!g->cf_uniform) g->diverged = 1;
}

static void s_grid_barrier(gen *g) {
  vyre_b_barrier(g->b, VYRE_BARRIER_GRID);
  g->nv = 0; /* values do not cross a grid barrier */
  g->lin = g->lidlin = UINT32_MAX;
}

static void stmts(gen *g, uint32_t count, int level) {
  for (uint32_t i = 0; i < count && room(g); i++) {
    uint32_t r = rnd(g, 100);
    if (r < 22) s_store(g);
    else if (r < 36) s_let(g, 0);
    else if (r < 46) s_assign(g);
    else if (r < 56 && !has(g, PROGEN_NO_ATOMICS) && rf(g)) s_contended(g);
    else if (r < 56 && !rf(g)) s_let(g, 1);
    else if (r < 68 && level < 3) s_if(g, level);
    else if (r < 76 && level < 3 && !ew(g) && !has(g, PROGEN_NO_LOOPS)) s_loop(g, level);
    else if (r < 80 && level < 3) {
      vyre_b_block(g->b);
      nested(g, 1 + rnd(g, 2), level);
      vyre_b_end(g->b);
    } else if (r < 84 && uniform_here(g) && !has(g, PROGEN_NO_BARRIER) &&
               !has(g, PROGEN_NO_WORKGROUP_MEMORY)) {
      vyre_b_barrier(g->b, VYRE_BARRIER_WORKGROUP);
    } else if (r < 89 && !rf(g)) {
      s_exit(g, level);
    } else if (r < 92 && !rf(g) && level == 0 && uniform_here(g) &&
               !has(g, PROGEN_NO_GRID_BARRIER) && chance(g, 40)) {
      s_grid_barrier(g);
    } else {
      s_store(g);
    }
  }
}

/* ------------------------------------------------------------------ */
/* Buffers and workgroups                                              */
/* ------------------------------------------------------------------ */

static uint8_t storage_type(gen *g) {
  static const uint8_t all[] = {VYRE_T_BOOL, VYRE_T_U8,  VYRE_T_U16, VYRE_T_U32,
                                VYRE_T_U64,  VYRE_T_I8,  VYRE_T_I16, VYRE_T_I32,
                                VYRE_T_I64,  VYRE_T_F16, VYRE_T_BF16, VYRE_T_F32,
                                VYRE_T_U32,  VYRE_T_F32, VYRE_T_I32};
  for (;;) {
    uint8_t t = all[rnd(g, N(all))];
    if (t == VYRE_T_F16 && has(g, PROGEN_NO_F16)) continue;
    if (t == VYRE_T_BF16 && has(g, PROGEN_NO_BF16)) continue;
    if (has(g, PROGEN_NO_STORAGE_TYPES) && vyre_type_size(t) < 4) continue;
    return t;
  }
}

static uint8_t atomic_type(gen *g) {
  static const uint8_t t64[] = {VYRE_T_U32, VYRE_T_I32, VYRE_T_U64, VYRE_T_I64};
  return t64[rnd(g, has(g, PROGEN_NO_ATOMIC64) ? 2 : 4)];
}

static gbuf *add_buf(gen *g, const char *name, uint32_t binding, uint8_t kind, vyre_access access,
                     uint8_t type, uint32_t count, uint32_t flags) {
  gbuf *fb = &g->buf[g->nb++];
  memset(fb, 0, sizeof *fb);
  fb->index = vyre_b_buffer(g->b, name, binding, access, (vyre_type)type, count, flags);
  fb->kind = kind;
  fb->access = (uint8_t)access;
  fb->type = type;
  fb->count = count;
  fb->readable = access != VYRE_ACCESS_WRITE_ONLY;
  return fb;
}

/* The race-free roles: in*, out*, acc, own, tile, wacc, gsc. */
static void declare_race_free(gen *g) {
  static const uint32_t ns[] = {1, 5, 32, 64, 100, 256, 300, 1000};
  g->n = ns[rnd(g, N(ns))];
  g->grid = (g->n + g->wg[0] - 1) / g->wg[0];
  g->invocations = g->grid * g->wgs;
  char name[16];
  uint32_t nin = 1 + rnd(g, 3);
  for (uint32_t i = 0; i < nin; i++) {
    snprintf(name, sizeof name, "in%u", i);
    uint32_t count = chance(g, 50) ? 0 : 1 + rnd(g, g->n + 8);
    gbuf *fb = add_buf(g, name, UINT32_MAX, K_IN,
                       chance(g, 20) ? VYRE_ACCESS_UNIFORM : VYRE_ACCESS_READ_ONLY,
                       storage_type(g), count, 0);
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
    gbuf *fb = add_buf(g, name, UINT32_MAX, K_OUT, acc, storage_type(g), count, flags);
    fb->off = chance(g, 80) ? 0 : (chance(g, 50) ? 1 + rnd(g, 3) : count + rnd(g, 4));
    uint32_t es = vyre_type_size(fb->type);
    if (chance(g, 15) && count > 2) {
      uint32_t first = rnd(g, count / 2), len = 1 + rnd(g, count - first - 1);
      vyre_b_buffer_range(g->b, fb->index, first * es, len * es);
    }
  }
  static const vyre_op commutative[] = {VYRE_OP_ATOMIC_ADD, VYRE_OP_ATOMIC_AND, VYRE_OP_ATOMIC_OR,
                                        VYRE_OP_ATOMIC_XOR, VYRE_OP_ATOMIC_MIN, VYRE_OP_ATOMIC_MAX};
  if (!has(g, PROGEN_NO_ATOMICS)) {
    if (chance(g, 50)) {
      static const uint32_t ks[] = {1, 2, 4, 8};
      gbuf *fb = add_buf(g, "acc", UINT32_MAX, K_ACC, VYRE_ACCESS_READ_WRITE, atomic_type(g),
                         ks[rnd(g, 4)], 0);
      fb->op = commutative[rnd(g, N(commutative))];
    }
    if (chance(g, 35))
      add_buf(g, "own", UINT32_MAX, K_OWN, VYRE_ACCESS_READ_WRITE, atomic_type(g), g->n,
              VYRE_BUF_OUTPUT);
  }
  if (!has(g, PROGEN_NO_WORKGROUP_MEMORY) && chance(g, 35)) {
    add_buf(g, "tile", 0, K_TILE, VYRE_ACCESS_WORKGROUP, storage_type(g), g->wgs, 0);
    if (!has(g, PROGEN_NO_ATOMICS) && chance(g, 50)) {
      gbuf *fb = add_buf(g, "wacc", 0, K_WACC, VYRE_ACCESS_WORKGROUP, atomic_type(g),
                         chance(g, 50) ? 4 : 32, 0);
      fb->op = commutative[rnd(g, N(commutative))];
    }
  }
  if (!has(g, PROGEN_NO_GRID_BARRIER) && chance(g, 12))
    add_buf(g, "gsc", UINT32_MAX, K_GSC, VYRE_ACCESS_READ_WRITE, storage_type(g),
            g->invocations, 0);
}

static const char *const name_pool[] = {
    "x", "y", "out", "hist", "_tmp", "Data9", "tile", "ro", "u32", "output", "range", "loop",
    "end", "l0", "buffer", "a_rather_long_buffer_name_that_is_exactly_63_bytes_long_xxxxxxx"};

/* Buffers without roles (K_ANY): every access mode, fixed or input-sized;
 * PROGEN_DECL_VARIETY adds bindings, names and byte ranges. */
static void declare_any(gen *g) {
  int variety = has(g, PROGEN_DECL_VARIETY);
  uint32_t n = 1 + rnd(g, 5), binding = variety ? rnd(g, 3) : UINT32_MAX;
  uint8_t used[N(name_pool)] = {0};
  int any_out = 0;
  for (uint32_t k = 0; k < n; k++) {
    uint8_t t = storage_type(g);
    if (chance(g, 40)) t = chance(g, 50) ? VYRE_T_F32 : VYRE_T_U32;
    uint32_t a = rnd(g, VYRE_ACCESS_COUNT_);
    if (a == VYRE_ACCESS_WORKGROUP && (ew(g) || has(g, PROGEN_NO_WORKGROUP_MEMORY)))
      a = VYRE_ACCESS_READ_WRITE;
    uint32_t flags = 0, count = 0;
    if (a == VYRE_ACCESS_WORKGROUP) {
      count = 1 + rnd(g, 300);
    } else if (a == VYRE_ACCESS_WRITE_ONLY) {
      count = 1 + rnd(g, 600);
      if (variety && chance(g, 25)) flags = VYRE_BUF_OUTPUT;
    } else if (a == VYRE_ACCESS_READ_WRITE && chance(g, 30)) {
      flags = VYRE_BUF_OUTPUT;
      count = 1 + rnd(g, 600);
    } else if (chance(g, 30)) {
      count = 1 + rnd(g, 600);
    }
    if (ew(g) && a == VYRE_ACCESS_UNIFORM && !count) count = 1 + rnd(g, 4);
    char name[VYRE_MAX_NAME + 1];
    uint32_t pn = rnd(g, N(name_pool));
    if (variety && !used[pn]) {
      used[pn] = 1;
      snprintf(name, sizeof name, "%s", name_pool[pn]);
    } else {
      snprintf(name, sizeof name, "b%u", k);
    }
    if (variety && a != VYRE_ACCESS_WORKGROUP) binding += 1 + (chance(g, 25) ? rnd(g, 5) : 0);
    gbuf *fb = add_buf(g, name, binding, K_ANY, (vyre_access)a, t, count, flags);
    int out = a == VYRE_ACCESS_READ_WRITE || a == VYRE_ACCESS_WRITE_ONLY;
    if (variety && out && chance(g, 33)) {
      uint32_t total = count ? count * vyre_type_size(t) : 4096u;
      uint32_t off = rnd(g, total + 1);
      vyre_b_buffer_range(g->b, fb->index, off, rnd(g, total - off + 1));
    }
    any_out |= out;
  }
  char name[16];
  snprintf(name, sizeof name, "b%u", n);
  if (!any_out)
    add_buf(g, name, UINT32_MAX, K_ANY, VYRE_ACCESS_READ_WRITE,
            chance(g, 50) ? VYRE_T_F32 : VYRE_T_U32, 0, 0);
}

static void pick_workgroup(gen *g, const progen_options *o) {
  static const uint32_t shapes[][3] = {{64, 1, 1}, {32, 1, 1}, {1, 1, 1},  {33, 1, 1},
                                       {100, 1, 1}, {128, 1, 1}, {8, 4, 1}, {4, 4, 2},
                                       {7, 3, 1},  {256, 1, 1}, {48, 1, 1}, {16, 1, 1},
                                       {16, 3, 1}, {32, 2, 1}, {6, 5, 3}};
  static const uint32_t ew_x[] = {32, 64, 100, 128, 256, 7};
  uint32_t *wg = g->wg;
  if (o && (o->workgroup[0] || o->workgroup[1] || o->workgroup[2])) {
    for (int k = 0; k < 3; k++) wg[k] = o->workgroup[k] ? o->workgroup[k] : 1;
  } else if (ew(g)) {
    wg[0] = ew_x[rnd(g, N(ew_x))];
    wg[1] = wg[2] = 1;
  } else if (has(g, PROGEN_DECL_VARIETY)) {
    /* Up to 1024 invocations, some dimensions not powers of two. */
    wg[0] = 1u << rnd(g, 11);
    wg[1] = wg[2] = 1;
    if (rnd(g, 3) == 0) wg[1] = 1u << rnd(g, (10 - (uint32_t)__builtin_ctz(wg[0])) + 1);
    if (rnd(g, 4) == 0 && wg[0] * wg[1] < 1024) wg[2] = 1u + rnd(g, 1024 / (wg[0] * wg[1]));
    if (rnd(g, 5) == 0 && wg[0] > 3) wg[0] -= rnd(g, 3);
  } else {
    const uint32_t *s = shapes[rnd(g, N(shapes))];
    for (int k = 0; k < 3; k++) wg[k] = s[k];
  }
  vyre_builder_set_workgroup(g->b, wg[0], wg[1], wg[2]);
  g->wgs = wg[0] * wg[1] * wg[2];
}

/* ------------------------------------------------------------------ */
/* Bodies                                                              */
/* ------------------------------------------------------------------ */

static void body_race_free(gen *g) {
  lin(g);
  int wmem = 0, grid = 0;
  for (uint32_t k = 0; k < g->nb; k++) {
    wmem |= g->buf[k].kind == K_TILE || g->buf[k].kind == K_WACC;
    grid |= g->buf[k].kind == K_GSC;
  }
  stmts(g, 3 + rnd(g, 5), 0);
  g->phase = 1;
  if (wmem) {
    vyre_b_barrier(g->b, VYRE_BARRIER_WORKGROUP);
    stmts(g, 2 + rnd(g, 4), 0);
  }
  if (grid) {
    /* Make sure something crosses the barrier through gsc. */
    for (uint32_t k = 0; k < g->nb; k++)
      if (g->buf[k].kind == K_GSC)
        vyre_b_store(g->b, g->buf[k].index, lin(g),
                     gen_value(g, (uint8_t)vyre_type_compute(g->buf[k].type), 2, 0));
    s_grid_barrier(g);
    g->phase = 2;
    g->grid_done = 1;
    lin(g);
    stmts(g, 2 + rnd(g, 4), 0);
  }
  /* The tail: early returns and traps, after every collective. */
  if (!has(g, PROGEN_NO_TRAP) && chance(g, 8)) {
    uint32_t x = lin(g);
    uint32_t c = val(g, vyre_b_bin(g->b, VYRE_OP_EQ, x, u32c(g, rnd(g, g->n + 4))), VYRE_T_BOOL, 0);
    if (chance(g, 40)) {
      uint32_t y = gen_value(g, VYRE_T_BOOL, 2, 0);
      c = val(g, vyre_b_bin(g->b, VYRE_OP_LOGICAL_AND, c, y), VYRE_T_BOOL, 0);
    }
    vyre_b_if(g->b, c);
    vyre_b_trap(g->b, g->trap_code);
    vyre_b_end(g->b);
    g->cf_uniform = 0; /* what follows a divergent trap is not uniform */
  }
  if (!has(g, PROGEN_NO_RETURN) && chance(g, 15)) {
    uint32_t c = gen_value(g, VYRE_T_BOOL, 2, 0);
    vyre_b_if(g->b, c);
    vyre_b_return(g->b);
    vyre_b_end(g->b);
    g->cf_uniform = 0;
  }
  /* Every program writes out0 at least once. */
  const gbuf *o0 = NULL;
  for (uint32_t k = 0; k < g->nb && !o0; k++)
    if (g->buf[k].kind == K_OUT) o0 = &g->buf[k];
  if (o0)
    vyre_b_store(g->b, o0->index, own_index(g, o0),
                 gen_value(g, (uint8_t)vyre_type_compute(o0->type), 3, 0));
}

static void body_elementwise(gen *g) {
  g->lin = val(g, vyre_b_gid(g->b, 0), VYRE_T_U32, 0);
  g->cf_uniform = 0;
  if (!has(g, PROGEN_NO_RETURN) && chance(g, 25)) {
    /* The early exit: if (gid >= buflen(b)) return; ... */
    uint32_t len = val(g, vyre_b_buflen(g->b, g->buf[rnd(g, g->nb)].index), VYRE_T_U32, 1);
    uint32_t c = chance(g, 50) ? vyre_b_bin(g->b, VYRE_OP_GE, g->lin, len)
                               : vyre_b_bin(g->b, VYRE_OP_LE, len, g->lin);
    vyre_b_if(g->b, c);
    vyre_b_return(g->b);
    vyre_b_end(g->b);
    stmts(g, 1 + rnd(g, 10), 0);
  } else if (chance(g, 60)) {
    /* The usual guard: gid < buflen(some output). */
    uint32_t outs[MAX_BUFS], n = 0;
    for (uint32_t k = 0; k < g->nb; k++)
      if (storable(g, &g->buf[k])) outs[n++] = k;
    uint32_t len = val(g, vyre_b_buflen(g->b, g->buf[outs[rnd(g, n)]].index), VYRE_T_U32, 1);
    uint32_t c = val(g, vyre_b_bin(g->b, VYRE_OP_LT, g->lin, len), VYRE_T_BOOL, 0);
    vyre_b_if(g->b, c);
    g->depth++;
    stmts(g, 1 + rnd(g, 4), 1);
    s_store(g);
    g->depth--;
    leave_scope(g);
    vyre_b_end(g->b);
    return;
  } else {
    stmts(g, 1 + rnd(g, 10), 0);
  }
  s_store(g);
}

/* ------------------------------------------------------------------ */
/* Inputs                                                              */
/* ------------------------------------------------------------------ */

static uint32_t random_f32_bits(gen *g) {
  uint32_t r = rnd(g, 10);
  if (r == 0) return f32_specials[rnd(g, N(f32_specials))];
  if (r == 1) {
    static const uint32_t s[] = {0x7f800001u, 0xffc00001u, 0x00000001u, 0x807fffffu,
                                 0x7fffffffu, 0x00400000u};
    return s[rnd(g, N(s))]; /* NaN payloads and subnormals: canonicalised by loads */
  }
  if (r == 2) return (uint32_t)next(g);
  if (r <= 5) return edge_f32(g);
  float f = (float)((int32_t)rnd(g, 20001) - 10000) / 100.0f;
  return vyre__f32_bits(f);
}

static uint64_t random_element(gen *g, uint32_t type) {
  static const uint64_t edge[] = {0, 1, 0xffffffffffffffffull, 0x7fffffffull, 0x80000000ull,
                                  0x7fffffffffffffffull, 0x8000000000000000ull, 2, 31, 32, 64};
  switch (type) {
  case VYRE_T_F32: return random_f32_bits(g);
  case VYRE_T_F16: return rnd(g, 8) == 0 ? 0x7c01u + rnd(g, 4) : vyre_f32_to_f16(random_f32_bits(g));
  case VYRE_T_BF16: return rnd(g, 8) == 0 ? 0x0001u + rnd(g, 4) : (random_f32_bits(g) >> 16);
  case VYRE_T_BOOL: return rnd(g, 3) == 0 ? next(g) : rnd(g, 2);
  default: {
    uint32_t r = rnd(g, 4);
    if (r == 0) return edge[rnd(g, N(edge))];
    if (r == 1) return next(g);
    return rnd(g, 200);
  }
  }
}

static vyre_status make_inputs(gen *g, const vyre_program *p, progen_program *out,
                               vyre_error *err) {
  out->input_count = p->input_count;
  out->inputs = calloc(p->input_count ? p->input_count : 1, sizeof *out->inputs);
  if (!out->inputs) return vyre_error_set(err, VYRE_OUT_OF_MEMORY, 0, "progen: out of memory");
  for (uint32_t i = 0; i < p->buffer_count; i++) {
    const vyre_buffer_info *bf = &p->buffers[i];
    if (bf->input_index < 0) continue;
    const gbuf *fb = NULL;
    for (uint32_t k = 0; k < g->nb; k++)
      if (g->buf[k].index == i) fb = &g->buf[k];
    uint32_t count = bf->decl.count ? bf->decl.count : rf(g) && fb ? fb->count : g->elements;
    uint64_t size = (uint64_t)count * bf->elem_size;
    uint8_t *d = calloc(size ? size : 1, 1);
    if (!d) return vyre_error_set(err, VYRE_OUT_OF_MEMORY, 0, "progen: out of memory");
    out->inputs[bf->input_index].data = d;
    out->inputs[bf->input_index].size = size;
    if (fb && fb->kind == K_ACC && chance(g, 50)) continue; /* a zeroed accumulator */
    for (uint32_t e = 0; e < count; e++) {
      uint64_t v = random_element(g, bf->decl.elem_type);
      memcpy(d + (uint64_t)e * bf->elem_size, &v, bf->elem_size); /* little-endian host */
    }
  }
  return VYRE_OK;
}

/* ------------------------------------------------------------------ */
/* The whole program                                                   */
/* ------------------------------------------------------------------ */

void fz_progen_program_free(progen_program *p) {
  if (!p) return;
  if (p->inputs)
    for (uint32_t i = 0; i < p->input_count; i++) free((void *)p->inputs[i].data);
  free(p->inputs);
  free(p->bytes);
  memset(p, 0, sizeof *p);
}

/* One attempt: the builder's status, or the validator's. */
static vyre_status attempt(gen *g, const progen_options *o, progen_program *out, vyre_error *err) {
  g->lin = g->lidlin = UINT32_MAX;
  g->cf_uniform = 1;
  g->max_insts = o && o->max_insts ? o->max_insts : rf(g) ? 60 + rnd(g, 140) : 80;
  g->elements = o && o->elements ? o->elements : 64;
  g->trap_code = 1 + rnd(g, 1000);
  pick_workgroup(g, o);
  if (rf(g)) {
    declare_race_free(g);
    body_race_free(g);
  } else {
    declare_any(g);
    if (ew(g)) {
      body_elementwise(g);
    } else {
      stmts(g, 1 + rnd(g, 10), 0);
      s_store(g);
    }
  }
  vyre_status st = vyre_builder_finish(g->b, &out->bytes, &out->size, err);
  vyre_program *p = NULL;
  if (st == VYRE_OK) st = vyre_program_decode(out->bytes, out->size, &p, err);
  if (st == VYRE_OK) {
    out->ulp_budget = g->uses_trans ? 1 : 0;
    st = make_inputs(g, p, out, err);
  }
  vyre_program_free(p);
  return st;
}

vyre_status fz_progen_generate(uint64_t seed, const progen_options *o, progen_program *out,
                               vyre_error *err) {
  memset(out, 0, sizeof *out);
  vyre_error last = VYRE_ERROR_INIT;
  /* A generator slip (a program the validator refuses) gets another
   * deterministic attempt; several in a row are a bug worth reporting. */
  for (uint32_t k = 0; k < ATTEMPTS; k++) {
    gen *g = calloc(1, sizeof *g);
    if (!g) return vyre_error_set(err, VYRE_OUT_OF_MEMORY, 0, "progen: out of memory");
    g->rng = seed ^ (uint64_t)k * 0xd1b54a32d192ed03ull;
    g->flags = o ? o->flags : 0;
    g->b = vyre_builder_new(1, 1, 1);
    vyre_status st = g->b ? attempt(g, o, out, &last)
                          : vyre_error_set(&last, VYRE_OUT_OF_MEMORY, 0, "progen: out of memory");
    vyre_builder_free(g->b);
    free(g);
    if (st == VYRE_OK) return VYRE_OK;
    fz_progen_program_free(out);
    if (st == VYRE_OUT_OF_MEMORY) break;
  }
  vyre_error_copy(err, &last);
  if (last.status != VYRE_OUT_OF_MEMORY)
    vyre_error_prefix(err, "progen: seed %llu (flags %#x) made no valid program in %u attempts "
                           "(a generator bug; please report the seed and flags)",
                      (unsigned long long)seed, o ? o->flags : 0u, ATTEMPTS);
  return last.status ? (vyre_status)last.status : VYRE_INTERNAL;
}

vyre_status fz_progen_bench_program(uint32_t target, int elementwise, void **bytes, size_t *size,
                                    vyre_error *err) {
  *bytes = NULL;
  *size = 0;
  vyre_builder *b = vyre_builder_new(256, 1, 1);
  if (!b) return vyre_error_set(err, VYRE_OUT_OF_MEMORY, 0, "progen: out of memory");
  uint32_t x = vyre_b_buffer(b, "x", UINT32_MAX, VYRE_ACCESS_READ_ONLY, VYRE_T_F32, 0, 0);
  uint32_t y = vyre_b_buffer(b, "y", UINT32_MAX, VYRE_ACCESS_READ_WRITE, VYRE_T_F32, 0, 0);
  uint32_t k = vyre_b_buffer(b, "k", UINT32_MAX, VYRE_ACCESS_READ_WRITE, VYRE_T_U32, 0, 0);
  uint32_t acc = vyre_b_local(b, VYRE_T_F32), cnt = vyre_b_local(b, VYRE_T_U32);
  uint32_t g = vyre_b_gid(b, 0);
  vyre_b_let(b, acc, vyre_b_load(b, x, g));
  vyre_b_let(b, cnt, vyre_b_load(b, k, g));
  uint32_t round = 0;
  while (vyre_b_inst_count(b) + 30 < target) {
    uint32_t a = vyre_b_get(b, acc), c = vyre_b_get(b, cnt);
    uint32_t idx = elementwise ? g : vyre_b_bin(b, VYRE_OP_AND, vyre_b_bin(b, VYRE_OP_ADD, g, c), vyre_b_u32(b, 1023));
    uint32_t v = vyre_b_load(b, x, idx);
    uint32_t m = vyre_b_fma(b, a, v, vyre_b_f32(b, 0.5f + (float)(round % 7)));
    uint32_t d = vyre_b_bin(b, VYRE_OP_DIV, m, vyre_b_bin(b, VYRE_OP_ADD, v, vyre_b_f32(b, 3.0f)));
    uint32_t mx = vyre_b_bin(b, VYRE_OP_MAX, d, vyre_b_un(b, VYRE_OP_FLOOR, m));
    uint32_t ci = vyre_b_bin(b, VYRE_OP_XOR, vyre_b_bin(b, VYRE_OP_MUL, c, vyre_b_u32(b, 2654435761u)),
                             vyre_b_bin(b, VYRE_OP_SHR, c, vyre_b_u32(b, 13)));
    uint32_t q = vyre_b_bin(b, VYRE_OP_MOD, ci, vyre_b_u32(b, 97 + round));
    uint32_t cond = vyre_b_bin(b, VYRE_OP_LT, mx, vyre_b_cast(b, VYRE_T_F32, q));
    vyre_b_if(b, cond);
    vyre_b_assign(b, acc, vyre_b_select(b, vyre_b_bin(b, VYRE_OP_GT, mx, a), mx, a));
    vyre_b_else(b);
    vyre_b_assign(b, cnt, vyre_b_bin(b, VYRE_OP_SAT_ADD, ci, q));
    vyre_b_end(b);
    if (round % 8 == 7) {
      vyre_b_store(b, y, g, vyre_b_get(b, acc));
      vyre_b_store(b, k, g, vyre_b_get(b, cnt));
    }
    round++;
  }
  vyre_b_store(b, y, g, vyre_b_get(b, acc));
  vyre_status st = vyre_builder_finish(b, bytes, size, err);
  vyre_builder_free(b);
  return st;
}
