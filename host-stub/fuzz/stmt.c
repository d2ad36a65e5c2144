/* stmt.c -- progen's statements: stores (with boundary probes), contended atomics, locals, if/else, loops, blocks, barriers, returns and traps. */
#include "internal.h"

static const uint8_t vtypes[] = {VYRE_T_BOOL, VYRE_T_U32, VYRE_T_U32, VYRE_T_U64, VYRE_T_I32,
                                 VYRE_T_I64, VYRE_T_F32, VYRE_T_F32};

void fz_leave_scope(gen *g) {
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

/* A nested statement list: one scope deeper. */
static void nested(gen *g, uint32_t count, int level) {
  g->depth++;
  fz_stmts(g, count, level + 1);
  g->depth--;
  fz_leave_scope(g);
}

int fz_storable(gen *g, const gbuf *fb) {
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
    uint32_t v = fz_load(g, VYRE_T_F32, 0);
    if (v != UINT32_MAX) return v;
  }
  return fz_val(g, vyre_b_const(g->b, VYRE_T_F32, fz_edge_f32(g)), VYRE_T_F32, 1);
}

/* An f32 constant 2^e (1 + frac 2^-23) with a random sign. */
static uint32_t f32_const(gen *g, int e, uint32_t frac) {
  uint32_t bits = (rnd(g, 2) ? 0x80000000u : 0u) | (uint32_t)(e + 127) << 23 | frac;
  return fz_val(g, vyre_b_const(g->b, VYRE_T_F32, bits), VYRE_T_F32, 1);
}

static uint32_t boundary_probe(gen *g) {
  /* Exponents summing to -127 and significands around 1 and 2: products
   * 2^-126 (1 - 2^-24) and neighbours, the underflow window's edges. */
  static const int16_t lo[] = {-126, -100, -64, -27};
  static const uint32_t fracs[] = {0x000000u, 0x7fffffu, 0x7ffffeu, 0x000001u, 0x7fffffu};
  if (chance(g, 25)) { /* inputs (a share from the pool) and pool constants */
    uint32_t x = edge_operand(g), y = edge_operand(g);
    return fz_val(g, vyre_b_bin(g->b, chance(g, 50) ? VYRE_OP_MUL : VYRE_OP_DIV, x, y), VYRE_T_F32, 0);
  }
  int e1 = lo[rnd(g, N(lo))], e2 = -127 - e1;
  uint32_t x = f32_const(g, e1, fracs[rnd(g, N(fracs))]);
  switch (rnd(g, 3)) {
  case 0: return fz_val(g, vyre_b_bin(g->b, VYRE_OP_MUL, x, f32_const(g, e2, fracs[rnd(g, N(fracs))])),
                     VYRE_T_F32, 0);
  case 1: /* x / 2^(-e2) = x 2^e2: the same products as quotients */
    return fz_val(g, vyre_b_bin(g->b, VYRE_OP_DIV, x, f32_const(g, -e2, fracs[rnd(g, 2) ? 0 : 3])),
               VYRE_T_F32, 0);
  default: {
    static const uint32_t addends[] = {0x00000000u, 0x80000000u, 0x00800000u, 0x80800000u,
                                       0x01000000u, 0x81000000u};
    uint32_t y = f32_const(g, e2, fracs[rnd(g, N(fracs))]);
    uint32_t z = fz_val(g, vyre_b_const(g->b, VYRE_T_F32, addends[rnd(g, N(addends))]), VYRE_T_F32, 1);
    return fz_val(g, vyre_b_fma(g->b, x, y, z), VYRE_T_F32, 0);
  }
  }
}

/* Whether the boundary probes' ops are claimed. */
static int probe_ok(const gen *g) {
  return can(g, VYRE_OP_MUL, VYRE_T_F32) && can(g, VYRE_OP_DIV, VYRE_T_F32) &&
         can(g, VYRE_OP_FMA, VYRE_T_F32) && can(g, VYRE_OP_LOAD, VYRE_T_F32);
}

void fz_store(gen *g) {
  uint32_t cand[MAX_BUFS], n = 0;
  if (!can_do(g, VYRE_OP_STORE)) return;
  for (uint32_t k = 0; k < g->nb; k++)
    if (fz_storable(g, &g->buf[k])) cand[n++] = k;
  if (!n) return;
  const gbuf *fb = &g->buf[cand[rnd(g, n)]];
  uint8_t ct = (uint8_t)vyre_type_compute(fb->type);
  uint32_t idx;
  if (fb->kind == K_ANY) idx = fz_any_index(g, fb->count, 0);
  else if (fb->kind == K_TILE) idx = fz_lidlin(g);
  else if (fb->kind == K_OUT && can(g, VYRE_OP_BUF_LEN, VYRE_T_U32) &&
           can(g, VYRE_OP_ADD, VYRE_T_U32) && chance(g, 8))
    /* Past the end for every invocation: a no-op everywhere. */
    idx = fz_val(g, vyre_b_bin(g->b, VYRE_OP_ADD, fz_val(g, vyre_b_buflen(g->b, fb->index), VYRE_T_U32, 1),
                            fz_lin(g)), VYRE_T_U32, 0);
  else idx = fz_own_index(g, fb);
  /* Transcendentals only flow into outputs nobody reads back. */
  if (ct == VYRE_T_F32 && fb->kind == K_OUT && !fb->readable &&
      !has(g, PROGEN_NO_TRANSCENDENTAL) && chance(g, 30)) {
    uint32_t x = fz_value(g, VYRE_T_F32, 2, 0);
    vyre_op op = fz_transcendental(g);
    if (can(g, op, VYRE_T_F32)) {
      g->uses_trans = 1;
      x = vyre_b_un(g->b, op, x);
    }
    vyre_b_store(g->b, fb->index, idx, x);
    return;
  }
  if (ct == VYRE_T_F32 && probe_ok(g) && chance(g, 25)) {
    vyre_b_store(g->b, fb->index, idx, boundary_probe(g));
    return;
  }
  vyre_b_store(g->b, fb->index, idx, fz_value(g, ct, 3, 0));
}

static void s_contended(gen *g) {
  uint32_t cand[MAX_BUFS], n = 0;
  for (uint32_t k = 0; k < g->nb; k++)
    if (g->buf[k].kind == K_ACC || (g->buf[k].kind == K_WACC && g->phase == 0)) cand[n++] = k;
  if (!n) return;
  const gbuf *fb = &g->buf[cand[rnd(g, n)]];
  uint32_t idx;
  if (!can(g, VYRE_OP_AND, VYRE_T_U32) || chance(g, 10)) {
    idx = fz_u32c(g, fb->count + rnd(g, 3)); /* out of bounds: nothing happens */
  } else {
    uint32_t x = fz_value(g, VYRE_T_U32, 1, 0);
    idx = fz_val(g, vyre_b_bin(g->b, VYRE_OP_AND, x, fz_u32c(g, fb->count - 1)), VYRE_T_U32, 0);
  }
  uint32_t v = fz_value(g, fb->type, 2, 0);
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
  if (g->nl >= MAX_LOCS || !can_do(g, VYRE_OP_LET)) return;
  uint8_t t = value && chance(g, 50) ? VYRE_T_U32 : vtypes[rnd(g, N(vtypes))];
  if (!can_value(g, t)) return;
  int want_uni = !value && uniform_here(g) && chance(g, 40);
  uint32_t v = fz_value(g, t, value ? 2 : 3, want_uni);
  uint32_t slot = vyre_b_local(g->b, (vyre_type)t);
  vyre_b_let(g->b, slot, v);
  new_local(g, slot, t, g->cf_uniform && !g->diverged && fz_is_uniform(g, v), 0);
}

static void s_assign(gen *g) {
  uint32_t cand[MAX_LOCS], n = 0;
  if (!can_do(g, VYRE_OP_ASSIGN)) return;
  for (uint32_t k = 0; k < g->nl; k++)
    if (!g->locs[k].counter && (!g->locs[k].uniform || (g->cf_uniform && !g->diverged)))
      cand[n++] = k;
  if (!n) return;
  gloc *l = &g->locs[cand[rnd(g, n)]];
  uint32_t v = fz_value(g, l->type, 3, l->uniform);
  /* A uniform local stays uniform: the barriers placed by its value depend on it. */
  if (l->uniform && !fz_is_uniform(g, v)) return;
  vyre_b_assign(g->b, l->slot, v);
}

static void s_if(gen *g, int level) {
  if (!can_do(g, VYRE_OP_IF) || !can_do(g, VYRE_OP_END) || !can_value(g, VYRE_T_BOOL)) return;
  int uni = g->cf_uniform && !ew(g) && chance(g, 40);
  uint32_t c = fz_value(g, VYRE_T_BOOL, 2, uni);
  uni = uni && fz_is_uniform(g, c);
  vyre_b_if(g->b, c);
  int saved = g->cf_uniform;
  g->cf_uniform = saved && uni;
  nested(g, 1 + rnd(g, 3), level);
  if (chance(g, 40) && can_do(g, VYRE_OP_ELSE)) {
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
  if (!can_value(g, t) || !can(g, VYRE_OP_ADD, t) || !can(g, VYRE_OP_AND, t)) return;
  int uni = g->cf_uniform && chance(g, 50);
  uint32_t first = i32 ? (uint32_t)(int32_t)((int)rnd(g, 5) - 2) : rnd(g, 3);
  uint32_t start = fz_val(g, vyre_b_const(g->b, (vyre_type)t, first), t, 1);
  uint32_t span;
  if (uni && chance(g, 50)) {
    span = fz_val(g, vyre_b_const(g->b, (vyre_type)t, rnd(g, 6)), t, 1);
  } else {
    uint32_t x = fz_value(g, t, 1, uni);
    uint32_t seven = fz_val(g, vyre_b_const(g->b, (vyre_type)t, 7), t, 1);
    span = fz_val(g, vyre_b_bin(g->b, VYRE_OP_AND, x, seven), t, fz_is_uniform(g, x));
  }
  /* end = start + (small): at most 7 iterations, whatever the values. */
  uint32_t end = fz_val(g, vyre_b_bin(g->b, VYRE_OP_ADD, start, span), t, fz_is_uniform(g, span));
  uni = uni && fz_is_uniform(g, end);
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

void fz_grid_barrier(gen *g) {
  vyre_b_barrier(g->b, VYRE_BARRIER_GRID);
  g->nv = 0; /* values do not cross a grid barrier */
  g->lin = g->lidlin = UINT32_MAX;
}

void fz_stmts(gen *g, uint32_t count, int level) {
  for (uint32_t i = 0; i < count && room(g); i++) {
    uint32_t r = rnd(g, 100);
    if (r < 22) fz_store(g);
    else if (r < 36) s_let(g, 0);
    else if (r < 46) s_assign(g);
    else if (r < 56 && !has(g, PROGEN_NO_ATOMICS) && rf(g)) s_contended(g);
    else if (r < 56 && !rf(g)) s_let(g, 1);
    else if (r < 68 && level < 3) s_if(g, level);
    else if (r < 76 && level < 3 && !ew(g) && !has(g, PROGEN_NO_LOOPS)) s_loop(g, level);
    else if (r < 80 && level < 3 && can_do(g, VYRE_OP_BLOCK) && can_do(g, VYRE_OP_END)) {
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
      fz_grid_barrier(g);
    } else {
      fz_store(g);
    }
  }
}
