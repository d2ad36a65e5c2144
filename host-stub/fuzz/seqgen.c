/* seqgen.c -- random resident sequences for `vyre fuzz --sequences`: steps of random elementwise programs over a shared pool of buffers, with the occasional step that must not fuse (docs/fuzzing.md, "Sequences"). */
#include <stdlib.h>
#include <string.h>

#include "abi/support/prng.h"
#include "fuzz.h"

typedef struct sgen {
  uint64_t rng;
  vyre_builder *b;
  const fz_seq *q;
  const uint32_t *bind; /* the step's pool buffers, by its buffer index */
  uint32_t nb, stored;  /* buffers; how many (the first ones) it stores */
  uint32_t gid, vals[FZ_SEQ_MAX_BIND];
  uint32_t t;           /* the compute type the stores take */
} sgen;

static uint32_t rnd(uint64_t *s, uint32_t n) { return n ? (uint32_t)(vyre__splitmix64(s) % n) : 0; }
static int chance(uint64_t *s, uint32_t pct) { return rnd(s, 100) < pct; }

static uint32_t compute_type(uint32_t storage) {
  switch (storage) {
  case VYRE_T_U8: return VYRE_T_U32;
  case VYRE_T_F16: return VYRE_T_F32;
  default: return storage;
  }
}

static uint32_t cast_to(sgen *g, uint32_t v, uint32_t from, uint32_t to) {
  return from == to ? v : vyre_b_cast(g->b, (vyre_type)to, v);
}

static uint32_t constant(sgen *g, uint32_t t) {
  static const uint32_t f32s[] = {0x3f800000u, 0xbf000000u, 0x40490fdbu, 0x00000000u,
                                  0x80000000u, 0x7f800000u, 0x3a83126fu, 0x42c80000u};
  if (t == VYRE_T_F32) return vyre_b_const(g->b, VYRE_T_F32, f32s[rnd(&g->rng, 8)]);
  uint64_t bits = vyre__splitmix64(&g->rng);
  if (chance(&g->rng, 50)) bits &= 15u;
  return vyre_b_const(g->b, (vyre_type)t, bits);
}

/* A leaf of type t: a loaded value, gid, or a constant. */
static uint32_t leaf(sgen *g, uint32_t t) {
  uint32_t k = rnd(&g->rng, g->nb + 2);
  if (k < g->nb) {
    uint32_t st = g->q->type[g->bind[k]];
    return cast_to(g, g->vals[k], compute_type(st), t);
  }
  if (k == g->nb) return cast_to(g, g->gid, VYRE_T_U32, t);
  return constant(g, t);
}

static uint32_t expr(sgen *g, uint32_t t, int depth) {
  if (depth <= 0 || chance(&g->rng, 30)) return leaf(g, t);
  static const vyre_op iops[] = {VYRE_OP_ADD, VYRE_OP_SUB, VYRE_OP_MUL, VYRE_OP_XOR,
                                 VYRE_OP_AND, VYRE_OP_OR,  VYRE_OP_MIN, VYRE_OP_MAX,
                                 VYRE_OP_SHR, VYRE_OP_SHL};
  static const vyre_op fops[] = {VYRE_OP_ADD, VYRE_OP_SUB, VYRE_OP_MUL,
                                 VYRE_OP_MIN, VYRE_OP_MAX, VYRE_OP_DIV};
  uint32_t x = expr(g, t, depth - 1), y = expr(g, t, depth - 1);
  if (t == VYRE_T_F32) {
    if (chance(&g->rng, 15)) return vyre_b_fma(g->b, x, y, leaf(g, t));
    return vyre_b_bin(g->b, fops[rnd(&g->rng, 6)], x, y);
  }
  return vyre_b_bin(g->b, iops[rnd(&g->rng, 10)], x, y);
}

/* The loads every expression may use: each buffer at gid, or (a twist
 * that keeps the step from fusing, or its fused body from taking the
 * elementwise path) a read-only one at gid + 1 or at 0. */
static void load_all(sgen *g) {
  for (uint32_t k = 0; k < g->nb; k++) {
    uint32_t idx = g->gid;
    if (k >= g->stored && chance(&g->rng, 8))
      idx = chance(&g->rng, 50) ? vyre_b_bin(g->b, VYRE_OP_ADD, g->gid, vyre_b_u32(g->b, 1))
                                : vyre_b_u32(g->b, 0);
    g->vals[k] = vyre_b_load(g->b, k, idx);
  }
}

/* The stores of the step: each stored buffer at gid (some only when a
 * compare holds), or an atomic add there on a 32-bit integer buffer. */
static void store_all(sgen *g) {
  for (uint32_t k = 0; k < g->stored; k++) {
    uint32_t st = g->q->type[g->bind[k]], t = compute_type(st);
    uint32_t v = expr(g, t, 1 + (int)rnd(&g->rng, 3));
    if ((st == VYRE_T_U32 || st == VYRE_T_I32) && chance(&g->rng, 6)) {
      vyre_b_atomic(g->b, VYRE_OP_ATOMIC_ADD, k, g->gid, v, VYRE_ORDER_RELAXED);
      continue;
    }
    int cond = chance(&g->rng, 25);
    if (cond) vyre_b_if(g->b, vyre_b_bin(g->b, VYRE_OP_LT, expr(g, t, 1), expr(g, t, 1)));
    vyre_b_store(g->b, k, g->gid, v);
    if (cond) vyre_b_end(g->b);
  }
}

/* Step `s` of q: its program into q->prog[s]. */
static vyre_status gen_step(fz_seq *q, uint32_t s, uint64_t *rng, vyre_error *err) {
  sgen g;
  memset(&g, 0, sizeof g);
  g.rng = *rng;
  g.q = q;
  g.bind = q->bind[s];
  g.nb = q->nbind[s];
  g.stored = 1 + (g.nb > 1 && chance(&g.rng, 30));
  uint32_t wg = q->wg;
  if (chance(&g.rng, 8)) wg = wg == 64 ? 128 : 64; /* another workgroup: not fused with it */
  g.b = vyre_builder_new(wg, 1, 1);
  if (!g.b) return vyre_error_set(err, VYRE_OUT_OF_MEMORY, 0, "fuzz: out of memory");
  for (uint32_t k = 0; k < g.nb; k++) {
    char name[8] = {'b', (char)('0' + k), 0};
    vyre_access acc = k < g.stored ? VYRE_ACCESS_READ_WRITE : VYRE_ACCESS_READ_ONLY;
    vyre_b_buffer(g.b, name, UINT32_MAX, acc, (vyre_type)q->type[g.bind[k]], 0, 0);
  }
  g.gid = vyre_b_gid(g.b, 0);
  uint32_t guard = rnd(&g.rng, 3);
  if (guard == 1) { /* the early exit */
    uint32_t len = vyre_b_buflen(g.b, rnd(&g.rng, g.nb));
    vyre_b_if(g.b, chance(&g.rng, 50) ? vyre_b_bin(g.b, VYRE_OP_GE, g.gid, len)
                                      : vyre_b_bin(g.b, VYRE_OP_LE, len, g.gid));
    vyre_b_return(g.b);
    vyre_b_end(g.b);
  } else if (guard == 2) { /* the usual guard */
    vyre_b_if(g.b, vyre_b_bin(g.b, VYRE_OP_LT, g.gid, vyre_b_buflen(g.b, 0)));
  }
  load_all(&g);
  store_all(&g);
  if (guard == 2) vyre_b_end(g.b);
  vyre_status st = vyre_builder_finish(g.b, &q->prog[s], &q->size[s], err);
  vyre_builder_free(g.b);
  *rng = g.rng;
  return st;
}

/* The pool's initial contents: random bits; f32 a mix of ordinary values
 * and specials. */
static void fill(fz_seq *q, uint32_t k, uint64_t *rng) {
  uint8_t *d = q->init[k];
  if (q->type[k] == VYRE_T_F32) {
    static const uint32_t sp[] = {0x7fc00000u, 0x7f800000u, 0xff800000u, 0x80000000u,
                                  0x00000001u, 0x3f800000u};
    for (uint64_t i = 0; i + 4 <= q->bytes[k]; i += 4) {
      uint32_t w = chance(rng, 10) ? sp[rnd(rng, 6)]
                                   : 0x3c000000u + (uint32_t)(vyre__splitmix64(rng) % 0x0c000000u);
      if (chance(rng, 50)) w |= 0x80000000u;
      memcpy(d + i, &w, 4);
    }
    return;
  }
  for (uint64_t i = 0; i < q->bytes[k]; i++) d[i] = (uint8_t)vyre__splitmix64(rng);
}

/* The pool: 2..5 buffers of one element count (now and then one longer,
 * a step over which covers another index space). */
static vyre_status gen_pool(fz_seq *q, uint64_t *rng, vyre_error *err) {
  static const uint32_t counts[] = {1, 7, 64, 1000, 1024, 2051, 4096, 65536};
  static const uint32_t types[] = {VYRE_T_U32, VYRE_T_I32, VYRE_T_F32, VYRE_T_U64,
                                   VYRE_T_F16, VYRE_T_U8,  VYRE_T_F32, VYRE_T_U32};
  static const uint32_t wgs[] = {64, 128, 256, 32, 100};
  uint32_t n = counts[rnd(rng, 8)];
  q->wg = wgs[rnd(rng, 5)];
  q->nbuf = 2 + rnd(rng, 4);
  for (uint32_t k = 0; k < q->nbuf; k++) {
    q->type[k] = types[rnd(rng, 8)];
    uint64_t elems = n + (k == q->nbuf - 1 && chance(rng, 25) ? 1 + rnd(rng, 64) : 0);
    q->bytes[k] = elems * vyre_type_size(q->type[k]);
    q->init[k] = malloc(q->bytes[k]);
    if (!q->init[k]) return vyre_error_set(err, VYRE_OUT_OF_MEMORY, 0, "fuzz: out of memory");
    fill(q, k, rng);
  }
  return VYRE_OK;
}

vyre_status fz_seq_generate(uint64_t seed, uint64_t index, fz_seq *q, vyre_error *err) {
  memset(q, 0, sizeof *q);
  uint64_t rng = seed * 0xd1b54a32d192ed03ull ^ (index + 1) * 0x9e3779b97f4a7c15ull ^ 0x5e9ull;
  vyre_status st = gen_pool(q, &rng, err);
  q->nstep = 2 + rnd(&rng, 7);
  q->repeat = 1 + rnd(&rng, 3);
  q->pipelines = chance(&rng, 50);
  for (uint32_t s = 0; s < q->nstep && st == VYRE_OK; s++) {
    /* 1..3 distinct pool buffers; the first is stored. */
    uint32_t want = 1 + rnd(&rng, q->nbuf < FZ_SEQ_MAX_BIND ? q->nbuf : FZ_SEQ_MAX_BIND);
    while (q->nbind[s] < want) {
      uint32_t k = rnd(&rng, q->nbuf), dup = 0;
      for (uint32_t j = 0; j < q->nbind[s]; j++) dup |= q->bind[s][j] == k;
      if (!dup) q->bind[s][q->nbind[s]++] = k;
    }
    st = gen_step(q, s, &rng, err);
  }
  if (st != VYRE_OK) {
    vyre_error_prefix(err, "fuzz: sequence %llu of seed %llu", (unsigned long long)index,
                      (unsigned long long)seed);
    fz_seq_free(q);
  }
  return st;
}

void fz_seq_free(fz_seq *q) {
  for (uint32_t s = 0; s < FZ_SEQ_MAX_STEPS; s++) free(q->prog[s]);
  for (uint32_t k = 0; k < FZ_SEQ_MAX_BUFS; k++) free(q->init[k]);
  memset(q, 0, sizeof *q);
}
