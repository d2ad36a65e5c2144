/* racefree.c -- progen's race-free shape (PROGEN_RACE_FREE): buffers in their roles and the phased body whose results do not depend on scheduling (internal.h says how). */
#include <stdio.h>

#include "internal.h"

/* The race-free roles: in*, out*, acc, own, tile, wacc, gsc. */
void fz_declare_race_free(gen *g) {
  static const uint32_t ns[] = {1, 5, 32, 64, 100, 256, 300, 1000};
  g->n = ns[rnd(g, N(ns))];
  g->grid = (g->n + g->wg[0] - 1) / g->wg[0];
  g->invocations = g->grid * g->wgs;
  char name[16];
  uint32_t nin = 1 + rnd(g, 3);
  for (uint32_t i = 0; i < nin; i++) {
    snprintf(name, sizeof name, "in%u", i);
    uint32_t count = chance(g, 50) ? 0 : 1 + rnd(g, g->n + 8);
    gbuf *fb = fz_add_buf(g, name, UINT32_MAX, K_IN,
                       chance(g, 20) ? VYRE_ACCESS_UNIFORM : VYRE_ACCESS_READ_ONLY,
                       fz_storage_type(g), count, 0);
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
    gbuf *fb = fz_add_buf(g, name, UINT32_MAX, K_OUT, acc, fz_storage_type(g), count, flags);
    fb->off = chance(g, 80) ? 0 : (chance(g, 50) ? 1 + rnd(g, 3) : count + rnd(g, 4));
    if (!can(g, VYRE_OP_ADD, VYRE_T_U32)) fb->off = 0; /* lin + off needs add */
    uint32_t es = vyre_type_size(fb->type);
    if ((!g->claims || (g->claims->caps & VYRE_CAP_OUT_RANGE)) && chance(g, 15) && count > 2) {
      uint32_t first = rnd(g, count / 2), len = 1 + rnd(g, count - first - 1);
      vyre_b_buffer_range(g->b, fb->index, first * es, len * es);
    }
  }
  static const vyre_op commutative[] = {VYRE_OP_ATOMIC_ADD, VYRE_OP_ATOMIC_AND, VYRE_OP_ATOMIC_OR,
                                        VYRE_OP_ATOMIC_XOR, VYRE_OP_ATOMIC_MIN, VYRE_OP_ATOMIC_MAX};
  if (!has(g, PROGEN_NO_ATOMICS)) {
    if (chance(g, 50)) {
      static const uint32_t ks[] = {1, 2, 4, 8};
      gbuf *fb = fz_add_buf(g, "acc", UINT32_MAX, K_ACC, VYRE_ACCESS_READ_WRITE, fz_atomic_type(g),
                         ks[rnd(g, 4)], 0);
      fz_choose(g, commutative, N(commutative), fb->type, &fb->op);
    }
    if (chance(g, 35))
      fz_add_buf(g, "own", UINT32_MAX, K_OWN, VYRE_ACCESS_READ_WRITE, fz_atomic_type(g), g->n,
              VYRE_BUF_OUTPUT);
  }
  if (!has(g, PROGEN_NO_WORKGROUP_MEMORY) && chance(g, 35)) {
    fz_add_buf(g, "tile", 0, K_TILE, VYRE_ACCESS_WORKGROUP, fz_storage_type(g), g->wgs, 0);
    if (!has(g, PROGEN_NO_ATOMICS) && chance(g, 50)) {
      gbuf *fb = fz_add_buf(g, "wacc", 0, K_WACC, VYRE_ACCESS_WORKGROUP, fz_atomic_type(g),
                         chance(g, 50) ? 4 : 32, 0);
      fz_choose(g, commutative, N(commutative), fb->type, &fb->op);
    }
  }
  if (g->mma) fz_declare_mma(g);
  if (!has(g, PROGEN_NO_GRID_BARRIER) && chance(g, 12))
    fz_add_buf(g, "gsc", UINT32_MAX, K_GSC, VYRE_ACCESS_READ_WRITE, fz_storage_type(g),
            g->invocations, 0);
}

void fz_body_race_free(gen *g) {
  fz_lin(g);
  if (g->mma) fz_mma_stage(g);
  int wmem = 0, grid = 0;
  for (uint32_t k = 0; k < g->nb; k++) {
    wmem |= g->buf[k].kind == K_TILE || g->buf[k].kind == K_WACC;
    grid |= g->buf[k].kind == K_GSC;
  }
  fz_stmts(g, 3 + rnd(g, 5), 0);
  g->phase = 1;
  if (wmem) {
    vyre_b_barrier(g->b, VYRE_BARRIER_WORKGROUP);
    fz_stmts(g, 2 + rnd(g, 4), 0);
  }
  if (g->mma) fz_mma_sections(g);
  if (grid) {
    /* Make sure something crosses the barrier through gsc. */
    for (uint32_t k = 0; k < g->nb; k++)
      if (g->buf[k].kind == K_GSC)
        vyre_b_store(g->b, g->buf[k].index, fz_lin(g),
                     fz_value(g, (uint8_t)vyre_type_compute(g->buf[k].type), 2, 0));
    fz_grid_barrier(g);
    g->phase = 2;
    g->grid_done = 1;
    fz_lin(g);
    fz_stmts(g, 2 + rnd(g, 4), 0);
  }
  /* The tail: early returns and traps, after every collective. */
  if (!has(g, PROGEN_NO_TRAP) && chance(g, 8)) {
    uint32_t x = fz_lin(g);
    uint32_t c = fz_val(g, vyre_b_bin(g->b, VYRE_OP_EQ, x, fz_u32c(g, rnd(g, g->n + 4))), VYRE_T_BOOL, 0);
    if (chance(g, 40) && can(g, VYRE_OP_LOGICAL_AND, VYRE_T_BOOL)) {
      uint32_t y = fz_value(g, VYRE_T_BOOL, 2, 0);
      c = fz_val(g, vyre_b_bin(g->b, VYRE_OP_LOGICAL_AND, c, y), VYRE_T_BOOL, 0);
    }
    vyre_b_if(g->b, c);
    vyre_b_trap(g->b, g->trap_code);
    vyre_b_end(g->b);
    g->cf_uniform = 0; /* what follows a divergent trap is not uniform */
  }
  if (!has(g, PROGEN_NO_RETURN) && chance(g, 15)) {
    uint32_t c = fz_value(g, VYRE_T_BOOL, 2, 0);
    vyre_b_if(g->b, c);
    vyre_b_return(g->b);
    vyre_b_end(g->b);
    g->cf_uniform = 0;
  }
  /* Every program writes out0 at least once. */
  const gbuf *o0 = NULL;
  for (uint32_t k = 0; k < g->nb && !o0; k++)
    if (g->buf[k].kind == K_OUT) o0 = &g->buf[k];
  if (o0 && can_do(g, VYRE_OP_STORE))
    vyre_b_store(g->b, o0->index, fz_own_index(g, o0),
                 fz_value(g, (uint8_t)vyre_type_compute(o0->type), 3, 0));
}
