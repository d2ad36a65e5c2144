/* progen.c -- random valid vyre programs (uniformity-aware, validated before return) and random inputs. */
#include "progen.h"

#include "abi/support/prng.h"

#include <stdlib.h>
#include <string.h>

#define MAX_VALS 4096
#define MAX_LOCALS 256
#define MAX_BUFS 8

typedef struct pv {
  uint32_t id;
  uint8_t type;
  uint8_t uniform;
  uint16_t depth;
  uint16_t segment; /* grid-barrier segment */
} pv;

typedef struct plocal {
  uint32_t slot;
  uint8_t type;
  uint8_t uniform; /* every write so far is uniform: keep it that way */
  uint8_t counter; /* a loop counter: read-only */
  uint16_t depth;
} plocal;

typedef struct pbuf {
  uint8_t access, type;
  uint32_t count;
  int output;
} pbuf;

typedef struct gen {
  uint64_t rng;
  vyre_builder *b;
  uint32_t flags, max_insts;
  uint32_t wg[3];
  pbuf buf[MAX_BUFS];
  uint32_t nbuf;
  pv vals[MAX_VALS];
  uint32_t nvals;
  plocal locals[MAX_LOCALS];
  uint32_t nlocals;
  uint32_t depth;
  int uniform_cf;
  int diverged;
  int in_loop;
  uint16_t segment;
  uint32_t gid; /* elementwise: the gid value of the current segment, or UINT32_MAX */
} gen;

static uint64_t next(gen *g) { return vyre__splitmix64(&g->rng); }
static uint32_t rnd(gen *g, uint32_t n) { return n ? (uint32_t)(next(g) % n) : 0; }
static int chance(gen *g, uint32_t percent) { return rnd(g, 100) < percent; }
static int has(gen *g, uint32_t flag) { return (g->flags & flag) != 0; }
static int ew(gen *g) { return has(g, PROGEN_ELEMENTWISE); }
static uint32_t insts(gen *g) { return vyre_b_inst_count(g->b); }
static int budget_left(gen *g) { return insts(g) < g->max_insts; }

static const uint8_t value_types[] = {VYRE_T_BOOL, VYRE_T_U32, VYRE_T_U64,
                                      VYRE_T_I32, VYRE_T_I64, VYRE_T_F32};
static uint8_t rand_type(gen *g) {
  /* Weighted towards u32 and f32, the common cases. */
  static const uint8_t w[] = {VYRE_T_BOOL, VYRE_T_U32, VYRE_T_U32, VYRE_T_U64, VYRE_T_I32,
                              VYRE_T_I64, VYRE_T_F32, VYRE_T_F32};
  return w[rnd(g, sizeof w)];
}

static uint32_t add_val(gen *g, uint32_t id, uint8_t type, int uniform) {
  if (g->nvals < MAX_VALS) {
    pv *v = &g->vals[g->nvals++];
    v->id = id;
    v->type = type;
    v->uniform = (uint8_t)(uniform != 0);
    v->depth = (uint16_t)g->depth;
    v->segment = g->segment;
  }
  return id;
}

static int val_uniform(gen *g, uint32_t id) {
  for (uint32_t k = g->nvals; k-- > 0;)
    if (g->vals[k].id == id) return g->vals[k].uniform;
  return 0;
}

/* An existing value of type t (uniform if asked); UINT32_MAX when none. */
static uint32_t pick_val(gen *g, uint8_t t, int need_uniform) {
  uint32_t cand[64], n = 0;
  for (uint32_t k = g->nvals; k-- > 0 && n < 64;) {
    const pv *v = &g->vals[k];
    if (v->type == t && (!need_uniform || v->uniform)) cand[n++] = v->id;
  }
  return n ? cand[rnd(g, n)] : UINT32_MAX;
}

static uint32_t f32_special(gen *g) {
  static const uint32_t s[] = {0x7fc00000u, 0x7f800000u, 0xff800000u, 0x80000000u, 0x00000000u,
                               0x3f800000u, 0xbf800000u, 0x00800000u, 0x7f7fffffu, 0x3f000000u,
                               0x40490fdbu, 0x4b800000u, 0xcf000000u, 0x5f000000u};
  return s[rnd(g, sizeof s / sizeof s[0])];
}

static uint32_t gen_const(gen *g, uint8_t t) {
  uint64_t bits;
  switch (t) {
  case VYRE_T_BOOL: bits = rnd(g, 2); break;
  case VYRE_T_F32:
    if (chance(g, 30)) {
      bits = f32_special(g);
    } else {
      float f = (float)((int32_t)rnd(g, 2001) - 1000) / (float)(1u << rnd(g, 8));
      uint32_t u;
      memcpy(&u, &f, 4);
      bits = vyre_f32_canonical_bits(u);
    }
    break;
  default: {
    static const int64_t edge[] = {0, 1, -1, 2, 3, 31, 32, 33, 63, 64, 255, 65535, 0x7fffffff,
                                   (int64_t)0x80000000ll, INT64_MAX, INT64_MIN};
    uint32_t r = rnd(g, 4);
    if (r == 0) bits = (uint64_t)edge[rnd(g, sizeof edge / sizeof edge[0])];
    else if (r == 1) bits = next(g);
    else bits = rnd(g, 100);
    if (!(t == VYRE_T_U64 || t == VYRE_T_I64)) bits &= 0xffffffffu;
    break;
  }
  }
  return add_val(g, vyre_b_const(g->b, (vyre_type)t, bits), t, 1);
}

static uint32_t gen_value(gen *g, uint8_t t, int depth, int uni);

/* An index for buffer b: in and out of bounds, gid, lid, constants, values. */
static uint32_t gen_index(gen *g, uint32_t b, int uni) {
  uint32_t count = g->buf[b].count ? g->buf[b].count : 64;
  if (ew(g)) return g->gid; /* the caller handles constant indices */
  uint32_t r = rnd(g, uni ? 3 : 7);
  switch (r) {
  case 0: return add_val(g, vyre_b_u32(g->b, rnd(g, count + count / 4 + 2)), VYRE_T_U32, 1);
  case 1: {
    uint32_t v = pick_val(g, VYRE_T_U32, uni);
    if (v != UINT32_MAX) return v;
    return add_val(g, vyre_b_u32(g->b, rnd(g, count)), VYRE_T_U32, 1);
  }
  case 2: return gen_value(g, VYRE_T_U32, 1, uni);
  case 3: return add_val(g, vyre_b_gid(g->b, 0), VYRE_T_U32, 0);
  case 4: return add_val(g, vyre_b_builtin(g->b, VYRE_OP_LOCAL_ID, 0), VYRE_T_U32, 0);
  case 5: {
    uint32_t x = add_val(g, vyre_b_gid(g->b, 0), VYRE_T_U32, 0);
    uint32_t k = add_val(g, vyre_b_u32(g->b, rnd(g, 3)), VYRE_T_U32, 1);
    return add_val(g, vyre_b_bin(g->b, VYRE_OP_ADD, x, k), VYRE_T_U32, 0);
  }
  default: {
    uint32_t x = gen_value(g, VYRE_T_U32, 1, 0);
    uint32_t m = add_val(g, vyre_b_u32(g->b, 127), VYRE_T_U32, 1);
    return add_val(g, vyre_b_bin(g->b, VYRE_OP_AND, x, m), VYRE_T_U32, 0);
  }
  }
}

static int readable(const pbuf *pb) { return pb->access != VYRE_ACCESS_WRITE_ONLY; }

/* A load yielding type t, or UINT32_MAX when no buffer fits. */
static uint32_t gen_load(gen *g, uint8_t t, int uni) {
  uint32_t cand[MAX_BUFS], n = 0;
  for (uint32_t k = 0; k < g->nbuf; k++) {
    const pbuf *pb = &g->buf[k];
    if (!readable(pb) || vyre_type_compute(pb->type) != t) continue;
    int ro = pb->access == VYRE_ACCESS_READ_ONLY || pb->access == VYRE_ACCESS_UNIFORM;
    if (uni && !ro) continue;
    if (ew(g) && uni) continue;
    cand[n++] = k;
  }
  if (!n) return UINT32_MAX;
  uint32_t b = cand[rnd(g, n)];
  uint32_t idx;
  int idx_uni;
  if (ew(g)) {
    /* Constant indices only on buffers that are never stored. */
    const pbuf *pb = &g->buf[b];
    int ro = pb->access == VYRE_ACCESS_READ_ONLY || pb->access == VYRE_ACCESS_UNIFORM;
    if (ro && chance(g, 25)) {
      idx = add_val(g, vyre_b_u32(g->b, rnd(g, pb->count ? pb->count + 1 : 4)), VYRE_T_U32, 1);
      idx_uni = 1;
    } else {
      idx = g->gid;
      idx_uni = 0;
    }
  } else {
    idx = gen_index(g, b, uni);
    idx_uni = val_uniform(g, idx);
  }
  int ro = g->buf[b].access == VYRE_ACCESS_READ_ONLY || g->buf[b].access == VYRE_ACCESS_UNIFORM;
  return add_val(g, vyre_b_load(g->b, b, idx), t, ro && idx_uni);
}

static uint32_t gen_atomic(gen *g, uint8_t t) {
  uint32_t cand[MAX_BUFS], n = 0;
  for (uint32_t k = 0; k < g->nbuf; k++) {
    const pbuf *pb = &g->buf[k];
    if ((pb->access == VYRE_ACCESS_READ_WRITE || pb->access == VYRE_ACCESS_WORKGROUP) &&
        pb->type == t)
      cand[n++] = k;
  }
  if (!n) return UINT32_MAX;
  uint32_t b = cand[rnd(g, n)];
  uint32_t idx = gen_index(g, b, 0);
  vyre_order order = (vyre_order)rnd(g, VYRE_ORDER_COUNT_);
  uint32_t v = gen_value(g, t, 1, 0);
  if (chance(g, 15)) {
    uint32_t d = gen_value(g, t, 1, 0);
    return add_val(g, vyre_b_cas(g->b, b, idx, v, d, order), t, 0);
  }
  vyre_op op = (vyre_op)(VYRE_OP_ATOMIC_ADD + rnd(g, 7));
  return add_val(g, vyre_b_atomic(g->b, op, b, idx, v, order), t, 0);
}

static int subgroup_ok(gen *g) {
  return !ew(g) && !has(g, PROGEN_NO_SUBGROUP) && g->uniform_cf && !g->diverged;
}

static const vyre_op int_bin[] = {VYRE_OP_ADD, VYRE_OP_SUB, VYRE_OP_MUL, VYRE_OP_DIV,
                                  VYRE_OP_MOD, VYRE_OP_AND, VYRE_OP_OR, VYRE_OP_XOR,
                                  VYRE_OP_SHL, VYRE_OP_SHR, VYRE_OP_ROTL, VYRE_OP_ROTR,
                                  VYRE_OP_MIN, VYRE_OP_MAX, VYRE_OP_ABSDIFF, VYRE_OP_SAT_ADD,
                                  VYRE_OP_SAT_SUB, VYRE_OP_SAT_MUL, VYRE_OP_WRAP_ADD,
                                  VYRE_OP_WRAP_SUB, VYRE_OP_MULHI};
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
#define N(a) (sizeof(a) / sizeof((a)[0]))

static uint32_t leaf(gen *g, uint8_t t, int uni) {
  uint32_t r = rnd(g, 10);
  if (r < 4) {
    uint32_t v = pick_val(g, t, uni);
    if (v != UINT32_MAX) return v;
  }
  if (r < 6) {
    uint32_t v = gen_load(g, t, uni);
    if (v != UINT32_MAX) return v;
  }
  if (t == VYRE_T_U32 && r < 8) {
    if (ew(g)) {
      if (!uni && chance(g, 50)) return g->gid;
      return add_val(g, vyre_b_buflen(g->b, rnd(g, g->nbuf)), VYRE_T_U32, 1);
    }
    uint32_t k = rnd(g, uni ? 3 : 6);
    uint32_t axis = rnd(g, 3);
    switch (k) {
    case 0: return add_val(g, vyre_b_buflen(g->b, rnd(g, g->nbuf)), VYRE_T_U32, 1);
    case 1: return add_val(g, vyre_b_builtin(g->b, VYRE_OP_WORKGROUP_ID, axis), VYRE_T_U32, 1);
    case 2:
      if (has(g, PROGEN_NO_SUBGROUP)) break;
      return add_val(g, vyre_b_builtin(g->b, VYRE_OP_SUBGROUP_SIZE, 0), VYRE_T_U32, 1);
    case 3: return add_val(g, vyre_b_gid(g->b, axis), VYRE_T_U32, 0);
    case 4: return add_val(g, vyre_b_builtin(g->b, VYRE_OP_LOCAL_ID, axis), VYRE_T_U32, 0);
    default:
      if (has(g, PROGEN_NO_SUBGROUP)) break;
      return add_val(g, vyre_b_builtin(g->b, VYRE_OP_SUBGROUP_LANE, 0), VYRE_T_U32, 0);
    }
  }
  return gen_const(g, t);
}

static uint32_t gen_value(gen *g, uint8_t t, int depth, int uni) {
  if (depth <= 0 || !budget_left(g) || chance(g, 25)) return leaf(g, t, uni);
  vyre_builder *b = g->b;
  uint32_t r = rnd(g, 100);
  if (r < 8) {
    /* select */
    uint32_t c = gen_value(g, VYRE_T_BOOL, depth - 1, uni);
    uint32_t x = gen_value(g, t, depth - 1, uni), y = gen_value(g, t, depth - 1, uni);
    return add_val(g, vyre_b_select(b, c, x, y), t, uni && val_uniform(g, c) && val_uniform(g, x) && val_uniform(g, y));
  }
  if (r < 16) {
    /* cast from another type */
    uint8_t from = value_types[rnd(g, N(value_types))];
    uint32_t x = gen_value(g, from, depth - 1, uni);
    return add_val(g, vyre_b_cast(b, (vyre_type)t, x), t, val_uniform(g, x));
  }
  if (r < 22 && !uni && !ew(g) && !has(g, PROGEN_NO_ATOMICS) && t != VYRE_T_BOOL &&
      t != VYRE_T_F32) {
    uint32_t v = gen_atomic(g, t);
    if (v != UINT32_MAX) return v;
  }
  if (r < 28 && !uni && subgroup_ok(g)) {
    uint32_t k = rnd(g, 3);
    if (k == 0 && t == VYRE_T_U32) {
      uint32_t c = gen_value(g, VYRE_T_BOOL, depth - 1, 0);
      return add_val(g, vyre_b_ballot(b, c), t, 0);
    }
    if (k == 1 || t == VYRE_T_BOOL) {
      uint32_t x = gen_value(g, t, depth - 1, 0);
      uint32_t l = chance(g, 50) ? gen_value(g, VYRE_T_U32, 0, 0)
                                 : add_val(g, vyre_b_u32(b, rnd(g, 40)), VYRE_T_U32, 1);
      return add_val(g, vyre_b_shuffle(b, x, l), t, 0);
    }
    uint32_t x = gen_value(g, t, depth - 1, 0);
    vyre_reduce kind = (vyre_reduce)(t == VYRE_T_F32 ? rnd(g, 3) : rnd(g, 6));
    return add_val(g, vyre_b_reduce(b, kind, x), t, 0);
  }
  if (t == VYRE_T_BOOL) {
    uint32_t k = rnd(g, 4);
    if (k == 0) {
      uint8_t ct = value_types[rnd(g, N(value_types))];
      uint32_t x = gen_value(g, ct, depth - 1, uni), y = gen_value(g, ct, depth - 1, uni);
      vyre_op op = ct == VYRE_T_BOOL ? (vyre_op)(VYRE_OP_EQ + rnd(g, 2))
                                     : (vyre_op)(VYRE_OP_EQ + rnd(g, 6));
      return add_val(g, vyre_b_bin(b, op, x, y), t, val_uniform(g, x) && val_uniform(g, y));
    }
    if (k == 1) {
      static const vyre_op ops[] = {VYRE_OP_LOGICAL_AND, VYRE_OP_LOGICAL_OR, VYRE_OP_AND,
                                    VYRE_OP_OR, VYRE_OP_XOR};
      uint32_t x = gen_value(g, t, depth - 1, uni), y = gen_value(g, t, depth - 1, uni);
      return add_val(g, vyre_b_bin(b, ops[rnd(g, N(ops))], x, y), t,
                     val_uniform(g, x) && val_uniform(g, y));
    }
    if (k == 2) {
      uint32_t x = gen_value(g, VYRE_T_F32, depth - 1, uni);
      return add_val(g, vyre_b_un(b, (vyre_op)(VYRE_OP_ISNAN + rnd(g, 3)), x), t,
                     val_uniform(g, x));
    }
    uint32_t x = gen_value(g, t, depth - 1, uni);
    return add_val(g, vyre_b_un(b, VYRE_OP_NOT, x), t, val_uniform(g, x));
  }
  if (t == VYRE_T_F32) {
    uint32_t k = rnd(g, 10);
    if (k < 5) {
      uint32_t x = gen_value(g, t, depth - 1, uni), y = gen_value(g, t, depth - 1, uni);
      return add_val(g, vyre_b_bin(b, f_bin[rnd(g, N(f_bin))], x, y), t,
                     val_uniform(g, x) && val_uniform(g, y));
    }
    if (k < 6) {
      uint32_t x = gen_value(g, t, depth - 1, uni), y = gen_value(g, t, depth - 1, uni),
               z = gen_value(g, t, depth - 1, uni);
      return add_val(g, vyre_b_fma(b, x, y, z), t,
                     val_uniform(g, x) && val_uniform(g, y) && val_uniform(g, z));
    }
    uint32_t x = gen_value(g, t, depth - 1, uni);
    vyre_op op = f_un[rnd(g, N(f_un))];
    if (k == 9 && !has(g, PROGEN_NO_TRANSCENDENTAL)) op = f_trans[rnd(g, N(f_trans))];
    return add_val(g, vyre_b_un(b, op, x), t, val_uniform(g, x));
  }
  /* integers */
  uint32_t k = rnd(g, 10);
  if (k < 6) {
    uint32_t x = gen_value(g, t, depth - 1, uni), y = gen_value(g, t, depth - 1, uni);
    return add_val(g, vyre_b_bin(b, int_bin[rnd(g, N(int_bin))], x, y), t,
                   val_uniform(g, x) && val_uniform(g, y));
  }
  uint32_t x = gen_value(g, t, depth - 1, uni);
  vyre_op op = int_un[rnd(g, N(int_un))];
  if (t == VYRE_T_U32 && k == 9) op = (vyre_op)(VYRE_OP_UNPACK4_LOW + rnd(g, 4));
  return add_val(g, vyre_b_un(b, op, x), t, val_uniform(g, x));
}

/* ------------------------------------------------------------------ */
/* Statements                                                          */
/* ------------------------------------------------------------------ */
static void drop_scope(gen *g) {
  while (g->nvals && g->vals[g->nvals - 1].depth > g->depth) g->nvals--;
  while (g->nlocals && g->locals[g->nlocals - 1].depth > g->depth) g->nlocals--;
}

static void gen_block(gen *g, int level);

static void gen_store(gen *g) {
  uint32_t cand[MAX_BUFS], n = 0;
  for (uint32_t k = 0; k < g->nbuf; k++) {
    uint8_t a = g->buf[k].access;
    if (a == VYRE_ACCESS_READ_WRITE || a == VYRE_ACCESS_WRITE_ONLY ||
        (a == VYRE_ACCESS_WORKGROUP && !ew(g)))
      cand[n++] = k;
  }
  if (!n) return;
  uint32_t b = cand[rnd(g, n)];
  uint32_t idx = ew(g) ? g->gid : gen_index(g, b, 0);
  uint32_t v = gen_value(g, (uint8_t)vyre_type_compute(g->buf[b].type), 3, 0);
  vyre_b_store(g->b, b, idx, v);
}

static void gen_let(gen *g) {
  if (g->nlocals >= MAX_LOCALS) return;
  uint8_t t = rand_type(g);
  int uni = g->uniform_cf && !g->diverged && chance(g, 50);
  uint32_t v = gen_value(g, t, 3, uni);
  uint32_t slot = vyre_b_local(g->b, (vyre_type)t);
  vyre_b_let(g->b, slot, v);
  plocal *l = &g->locals[g->nlocals++];
  l->slot = slot;
  l->type = t;
  l->uniform = (uint8_t)(g->uniform_cf && !g->diverged && val_uniform(g, v));
  l->counter = 0;
  l->depth = (uint16_t)g->depth;
}

static void gen_assign(gen *g) {
  uint32_t cand[MAX_LOCALS], n = 0;
  for (uint32_t k = 0; k < g->nlocals; k++)
    if (!g->locals[k].counter) cand[n++] = k;
  if (!n) {
    gen_let(g);
    return;
  }
  plocal *l = &g->locals[cand[rnd(g, n)]];
  int need_uni = l->uniform;
  if (need_uni && (!g->uniform_cf || g->diverged)) return; /* would make it non-uniform */
  uint32_t v = gen_value(g, l->type, 3, need_uni);
  vyre_b_assign(g->b, l->slot, v);
}

static void push_locals_get(gen *g) {
  /* Make the locals in scope readable as values. */
  if (!g->nlocals || !chance(g, 60)) return;
  plocal *l = &g->locals[rnd(g, g->nlocals)];
  add_val(g, vyre_b_get(g->b, l->slot), l->type, l->uniform);
}

static void gen_if(gen *g, int level) {
  int want_uni = !ew(g) && g->uniform_cf && !g->diverged && chance(g, 50);
  uint32_t c = gen_value(g, VYRE_T_BOOL, 2, want_uni);
  int outer = g->uniform_cf;
  vyre_b_if(g->b, c);
  g->depth++;
  g->uniform_cf = outer && !g->diverged && val_uniform(g, c);
  gen_block(g, level + 1);
  g->depth--;
  drop_scope(g);
  if (chance(g, 40)) {
    vyre_b_else(g->b);
    g->depth++;
    gen_block(g, level + 1);
    g->depth--;
    drop_scope(g);
  }
  vyre_b_end(g->b);
  g->uniform_cf = outer;
}

static void gen_loop(gen *g, int level) {
  if (g->nlocals >= MAX_LOCALS) return;
  int i32 = chance(g, 30);
  vyre_type t = i32 ? VYRE_T_I32 : VYRE_T_U32;
  int32_t lo = (int32_t)rnd(g, 3) - (i32 ? 1 : 0);
  int32_t hi = lo + (int32_t)rnd(g, 4);
  uint32_t s = add_val(g, vyre_b_const(g->b, t, (uint32_t)lo), (uint8_t)t, 1);
  uint32_t e = add_val(g, vyre_b_const(g->b, t, (uint32_t)hi), (uint8_t)t, 1);
  uint32_t slot = vyre_b_local(g->b, t);
  vyre_b_loop(g->b, slot, s, e);
  g->depth++;
  plocal *l = &g->locals[g->nlocals++];
  l->slot = slot;
  l->type = (uint8_t)t;
  l->uniform = (uint8_t)(g->uniform_cf && !g->diverged);
  l->counter = 1;
  l->depth = (uint16_t)g->depth;
  int was = g->in_loop;
  g->in_loop = 1;
  gen_block(g, level + 1);
  g->in_loop = was;
  g->depth--;
  drop_scope(g);
  vyre_b_end(g->b);
}

static void gen_statement(gen *g, int level) {
  uint32_t r = rnd(g, 100);
  if (r < 22) {
    gen_store(g);
  } else if (r < 36) {
    gen_let(g);
  } else if (r < 46) {
    gen_assign(g);
  } else if (r < 54) {
    push_locals_get(g);
  } else if (r < 66) {
    if (level < 3) gen_if(g, level);
  } else if (r < 72) {
    if (level < 3 && !ew(g) && !has(g, PROGEN_NO_LOOPS)) gen_loop(g, level);
  } else if (r < 76) {
    if (level < 3) {
      vyre_b_block(g->b);
      g->depth++;
      gen_block(g, level + 1);
      g->depth--;
      drop_scope(g);
      vyre_b_end(g->b);
    }
  } else if (r < 82) {
    if (!ew(g) && !has(g, PROGEN_NO_BARRIER) && g->uniform_cf && !g->diverged)
      vyre_b_barrier(g->b, VYRE_BARRIER_WORKGROUP);
  } else if (r < 90) {
    /* a value statement: an atomic or subgroup op kept in a local */
    uint8_t t = chance(g, 50) ? VYRE_T_U32 : rand_type(g);
    uint32_t v = gen_value(g, t, 2, 0);
    if (g->nlocals < MAX_LOCALS) {
      uint32_t slot = vyre_b_local(g->b, (vyre_type)t);
      vyre_b_let(g->b, slot, v);
      plocal *l = &g->locals[g->nlocals++];
      l->slot = slot;
      l->type = t;
      l->uniform = 0;
      l->counter = 0;
      l->depth = (uint16_t)g->depth;
    }
  } else if (r < 93) {
    if (!ew(g) && !g->in_loop && level > 0 && !has(g, PROGEN_NO_RETURN) && chance(g, 50)) {
      vyre_b_return(g->b);
      if (!g->uniform_cf) g->diverged = 1;
    }
  } else if (r < 95) {
    if (!ew(g) && !g->in_loop && level > 0 && !has(g, PROGEN_NO_TRAP) && chance(g, 50)) {
      vyre_b_trap(g->b, 1u + rnd(g, 1000));
      if (!g->uniform_cf) g->diverged = 1;
    }
  } else {
    if (level == 0 && !ew(g) && !has(g, PROGEN_NO_GRID_BARRIER) && !g->diverged &&
        chance(g, 40)) {
      vyre_b_barrier(g->b, VYRE_BARRIER_GRID);
      g->segment++;
      g->nvals = 0; /* values do not cross a grid barrier */
    } else {
      gen_store(g);
    }
  }
}

static void gen_block(gen *g, int level) {
  uint32_t n = 1 + rnd(g, level == 0 ? 10 : 4);
  for (uint32_t k = 0; k < n && budget_left(g); k++) gen_statement(g, level);
}

static void gen_buffers(gen *g) {
  static const uint8_t all_types[] = {VYRE_T_BOOL, VYRE_T_U8,  VYRE_T_U16, VYRE_T_U32,
                                      VYRE_T_U64,  VYRE_T_I8,  VYRE_T_I16, VYRE_T_I32,
                                      VYRE_T_I64,  VYRE_T_F16, VYRE_T_BF16, VYRE_T_F32};
  static const uint8_t wide_types[] = {VYRE_T_BOOL, VYRE_T_U32, VYRE_T_U64, VYRE_T_I32,
                                       VYRE_T_I64, VYRE_T_F32};
  uint32_t n = 1 + rnd(g, 5);
  char name[8] = "b0";
  int any_out = 0;
  for (uint32_t k = 0; k < n; k++) {
    pbuf *pb = &g->buf[g->nbuf];
    uint8_t t = has(g, PROGEN_NO_STORAGE_TYPES) ? wide_types[rnd(g, N(wide_types))]
                                                : all_types[rnd(g, N(all_types))];
    if (chance(g, 40)) t = chance(g, 50) ? VYRE_T_F32 : VYRE_T_U32;
    uint32_t a = rnd(g, 5);
    if (a == VYRE_ACCESS_WORKGROUP && (ew(g) || has(g, PROGEN_NO_WORKGROUP_MEMORY)))
      a = VYRE_ACCESS_READ_WRITE;
    uint32_t flags = 0, count = 0;
    if (a == VYRE_ACCESS_WORKGROUP) {
      count = 1 + rnd(g, 300);
    } else if (a == VYRE_ACCESS_WRITE_ONLY) {
      count = 1 + rnd(g, 600);
    } else if (a == VYRE_ACCESS_READ_WRITE && chance(g, 30)) {
      flags = VYRE_BUF_OUTPUT;
      count = 1 + rnd(g, 600);
    } else if (chance(g, 30)) {
      count = 1 + rnd(g, 600);
    }
    if (ew(g) && a == VYRE_ACCESS_UNIFORM && !count) count = 1 + rnd(g, 4);
    name[1] = (char)('0' + k);
    vyre_b_buffer(g->b, name, UINT32_MAX, (vyre_access)a, (vyre_type)t, count, flags);
    pb->access = (uint8_t)a;
    pb->type = t;
    pb->count = count;
    pb->output = a == VYRE_ACCESS_READ_WRITE || a == VYRE_ACCESS_WRITE_ONLY;
    any_out |= pb->output;
    g->nbuf++;
  }
  if (!any_out) {
    pbuf *pb = &g->buf[g->nbuf];
    uint8_t t = chance(g, 50) ? VYRE_T_F32 : VYRE_T_U32;
    vyre_b_buffer(g->b, "out", UINT32_MAX, VYRE_ACCESS_READ_WRITE, (vyre_type)t, 0, 0);
    pb->access = VYRE_ACCESS_READ_WRITE;
    pb->type = t;
    pb->count = 0;
    pb->output = 1;
    g->nbuf++;
  }
}

vyre_status progen_generate(uint64_t seed, const progen_options *o, void **bytes, size_t *size,
                            vyre_error *err) {
  *bytes = NULL;
  *size = 0;
  gen *g = calloc(1, sizeof *g);
  if (!g) return vyre_error_set(err, VYRE_OUT_OF_MEMORY, 0, "progen: out of memory");
  g->rng = seed * 0x2545f4914f6cdd1dull + 0x1234567u;
  g->flags = o ? o->flags : 0;
  g->max_insts = o && o->max_insts ? o->max_insts : 80;
  if (o && (o->workgroup[0] || o->workgroup[1] || o->workgroup[2])) {
    for (int k = 0; k < 3; k++) g->wg[k] = o->workgroup[k] ? o->workgroup[k] : 1;
  } else if (ew(g)) {
    static const uint32_t xs[] = {32, 64, 100, 128, 256, 7};
    g->wg[0] = xs[rnd(g, N(xs))];
    g->wg[1] = g->wg[2] = 1;
  } else {
    static const uint32_t shapes[][3] = {{64, 1, 1}, {32, 1, 1}, {1, 1, 1},  {33, 1, 1},
                                         {100, 1, 1}, {128, 1, 1}, {8, 4, 1}, {4, 4, 2},
                                         {7, 3, 1},  {256, 1, 1}, {48, 1, 1}};
    const uint32_t *s = shapes[rnd(g, N(shapes))];
    for (int k = 0; k < 3; k++) g->wg[k] = s[k];
  }
  g->b = vyre_builder_new(g->wg[0], g->wg[1], g->wg[2]);
  vyre_status st;
  if (!g->b) {
    st = vyre_error_set(err, VYRE_OUT_OF_MEMORY, 0, "progen: out of memory");
    goto done;
  }
  g->uniform_cf = 1;
  g->gid = UINT32_MAX;
  gen_buffers(g);
  if (ew(g)) {
    g->gid = add_val(g, vyre_b_gid(g->b, 0), VYRE_T_U32, 0);
    if (!has(g, PROGEN_NO_RETURN) && chance(g, 25)) {
      /* The early-exit form: if (gid >= buflen(b)) return; ... */
      uint32_t len = add_val(g, vyre_b_buflen(g->b, rnd(g, g->nbuf)), VYRE_T_U32, 1);
      uint32_t c = chance(g, 50) ? vyre_b_bin(g->b, VYRE_OP_GE, g->gid, len)
                                 : vyre_b_bin(g->b, VYRE_OP_LE, len, g->gid);
      vyre_b_if(g->b, c);
      vyre_b_return(g->b);
      vyre_b_end(g->b);
      gen_block(g, 0);
      gen_store(g);
    } else if (chance(g, 60)) {
      /* The usual guard: gid < buflen(some output). */
      uint32_t outs[MAX_BUFS], n = 0;
      for (uint32_t k = 0; k < g->nbuf; k++)
        if (g->buf[k].output) outs[n++] = k;
      uint32_t len = add_val(g, vyre_b_buflen(g->b, outs[rnd(g, n)]), VYRE_T_U32, 1);
      uint32_t c = add_val(g, vyre_b_bin(g->b, VYRE_OP_LT, g->gid, len), VYRE_T_BOOL, 0);
      vyre_b_if(g->b, c);
      g->depth++;
      g->uniform_cf = 0;
      gen_block(g, 1);
      gen_store(g);
      g->depth--;
      drop_scope(g);
      vyre_b_end(g->b);
    } else {
      gen_block(g, 0);
      gen_store(g);
    }
  } else {
    gen_block(g, 0);
    gen_store(g);
  }
  st = vyre_builder_finish(g->b, bytes, size, err);
  if (st) goto done;
  vyre_program *p = NULL;
  st = vyre_program_decode(*bytes, *size, &p, err);
  if (st) {
    vyre_error_prefix(err, "progen seed %llu made an invalid program (a generator bug)",
                      (unsigned long long)seed);
    free(*bytes);
    *bytes = NULL;
    *size = 0;
  }
  vyre_program_free(p);
done:
  vyre_builder_free(g->b);
  free(g);
  return st;
}

/* ------------------------------------------------------------------ */
/* Inputs                                                              */
/* ------------------------------------------------------------------ */
static uint32_t rand_f32_bits(gen *g) {
  uint32_t r = rnd(g, 10);
  if (r == 0) return f32_special(g);
  if (r == 1) {
    static const uint32_t s[] = {0x7f800001u, 0xffc00001u, 0x00000001u, 0x807fffffu,
                                 0x7fffffffu, 0x00400000u};
    return s[rnd(g, N(s))]; /* NaN payloads and subnormals: canonicalised by loads */
  }
  if (r == 2) return (uint32_t)next(g);
  float f = (float)((int32_t)rnd(g, 20001) - 10000) / 100.0f;
  uint32_t u;
  memcpy(&u, &f, 4);
  return u;
}

static uint64_t rand_int_bits(gen *g) {
  static const uint64_t edge[] = {0, 1, 0xffffffffffffffffull, 0x7fffffffull, 0x80000000ull,
                                  0x7fffffffffffffffull, 0x8000000000000000ull, 2, 31, 32, 64};
  uint32_t r = rnd(g, 4);
  if (r == 0) return edge[rnd(g, N(edge))];
  if (r == 1) return next(g);
  return rnd(g, 200);
}

vyre_status progen_inputs(const vyre_program *p, uint64_t seed, uint32_t elements,
                          vyre_input **inputs, vyre_error *err) {
  *inputs = calloc(p->input_count ? p->input_count : 1, sizeof **inputs);
  if (!*inputs) return vyre_error_set(err, VYRE_OUT_OF_MEMORY, 0, "progen: out of memory");
  gen g;
  memset(&g, 0, sizeof g);
  g.rng = seed ^ 0x5bd1e995u;
  for (uint32_t k = 0; k < p->buffer_count; k++) {
    const vyre_buffer_info *bi = &p->buffers[k];
    if (bi->input_index < 0) continue;
    uint32_t n = bi->decl.count ? bi->decl.count : elements;
    size_t bytes = (size_t)n * bi->elem_size;
    uint8_t *d = malloc(bytes ? bytes : 1);
    if (!d) {
      progen_inputs_free(p, *inputs);
      *inputs = NULL;
      return vyre_error_set(err, VYRE_OUT_OF_MEMORY, 0, "progen: out of memory");
    }
    for (uint32_t e = 0; e < n; e++) {
      uint8_t *at = d + (size_t)e * bi->elem_size;
      uint64_t v;
      switch (bi->decl.elem_type) {
      case VYRE_T_F32: v = rand_f32_bits(&g); break;
      case VYRE_T_F16: v = rnd(&g, 8) == 0 ? 0x7c01u + rnd(&g, 4) : vyre_f32_to_f16(rand_f32_bits(&g)); break;
      case VYRE_T_BF16: v = rnd(&g, 8) == 0 ? 0x0001u + rnd(&g, 4) : (rand_f32_bits(&g) >> 16); break;
      case VYRE_T_BOOL: v = rnd(&g, 3) == 0 ? next(&g) : rnd(&g, 2); break;
      default: v = rand_int_bits(&g); break;
      }
      memcpy(at, &v, bi->elem_size); /* little-endian host */
    }
    (*inputs)[bi->input_index].data = d;
    (*inputs)[bi->input_index].size = bytes;
  }
  return VYRE_OK;
}

void progen_inputs_free(const vyre_program *p, vyre_input *inputs) {
  if (!inputs) return;
  for (uint32_t k = 0; p && k < p->input_count; k++) free((void *)inputs[k].data);
  free(inputs);
}
