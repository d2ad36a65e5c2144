/* mma.c -- progen's MMA sections (race-free shape): tiles loaded from storage and from workgroup memory after the barrier, K loops of mma, each subgroup storing into its own span of an output nothing reads back. */
#include <stdio.h>

#include "internal.h"

/* Share of race-free programs with MMA sections when neither PROGEN_MMA
 * nor PROGEN_NO_MMA says. */
#define MMA_PERCENT 16
#define NONE 0xffu

static int is_float_comp(uint8_t t) { return t == VYRE_T_F16 || t == VYRE_T_BF16; }

int fz_mma_wanted(const gen *g) {
  if (g->flags & PROGEN_NO_MMA) return 0;
  if (g->flags & PROGEN_MMA) return 1;
  /* A stream of its own: a program drawn without MMA is the one a run
   * without MMA makes. */
  uint64_t s = g->rng ^ 0x6d6d615f66757a7aull;
  return vyre__splitmix64(&s) % 100 < MMA_PERCENT;
}

static uint8_t pick_comp(gen *g) {
  uint8_t cand[4], n = 0;
  if (!has(g, PROGEN_NO_F16)) cand[n++] = VYRE_T_F16;
  if (!has(g, PROGEN_NO_BF16)) cand[n++] = VYRE_T_BF16;
  cand[n++] = VYRE_T_I8;
  cand[n++] = VYRE_T_U8;
  return cand[rnd(g, n)];
}

/* Element counts of MMA inputs: some shorter than a tile (reads past the
 * end give 0), some holding a K loop's worth. */
static uint32_t input_count(gen *g) {
  static const uint32_t counts[] = {40, 256, 300, 512, 700, 1024, 2048, 4200};
  return counts[rnd(g, N(counts))] + rnd(g, 9);
}

static uint8_t add(gen *g, const char *stem, uint32_t s, uint8_t kind, vyre_access access,
                   uint8_t type, uint32_t count, uint32_t flags) {
  char name[16];
  snprintf(name, sizeof name, "%s%u", stem, s);
  fz_add_buf(g, name, kind == K_TILE ? 0 : UINT32_MAX, kind, access, type, count, flags);
  return (uint8_t)(g->nb - 1);
}

void fz_declare_mma(gen *g) {
  g->nmma = chance(g, 25) ? 2 : 1;
  uint32_t subgroups = g->invocations / 32;
  for (uint32_t s = 0; s < g->nmma && g->nb + 5 <= MAX_BUFS; s++) {
    uint8_t comp = pick_comp(g);
    uint8_t acc = is_float_comp(comp) ? VYRE_T_F32 : VYRE_T_I32;
    g->mmas[s].comp = comp;
    vyre_access in = chance(g, 20) ? VYRE_ACCESS_UNIFORM : VYRE_ACCESS_READ_ONLY;
    for (int k = 0; k < 2; k++) {
      uint32_t n = input_count(g);
      int sized = chance(g, 50); /* count 0: sized by the input */
      uint8_t i = add(g, k ? "mb" : "ma", s, K_IN, in, comp, sized ? 0 : n, 0);
      g->buf[i].count = n;
      if (k) g->mmas[s].b = i;
      else g->mmas[s].a = i;
    }
    g->mmas[s].c = chance(g, 50) ? add(g, "mc", s, K_IN, in, acc, 200 + rnd(g, 400), 0) : NONE;
    g->mmas[s].tile = !has(g, PROGEN_NO_WORKGROUP_MEMORY) && chance(g, 40)
                          ? add(g, "mt", s, K_TILE, VYRE_ACCESS_WORKGROUP, comp,
                                g->wgs * (1 + rnd(g, 4)), 0)
                          : NONE;
    static const uint32_t strides[] = {16, 16, 17, 20, 24, 32, 33, 48};
    uint32_t stride = strides[rnd(g, N(strides))], span = 15 * stride + 16;
    uint32_t count = subgroups * span;
    if (chance(g, 30)) count -= rnd(g, span); /* the last tile runs past the end */
    if (!count) count = 1;
    /* Float results only where nothing reads them back (the bound holds
     * for what mma_store wrote); integer ones also to in/out buffers. */
    uint32_t r = rnd(g, is_float_comp(comp) ? 2 : 3);
    vyre_access access = r == 0 ? VYRE_ACCESS_WRITE_ONLY : VYRE_ACCESS_READ_WRITE;
    uint32_t flags = r == 1 ? VYRE_BUF_OUTPUT : 0;
    g->mmas[s].out = add(g, "mo", s, K_MMA, access, acc, count, flags);
    g->mmas[s].stride = stride;
    g->mmas[s].span = span;
  }
}

void fz_mma_stage(gen *g) {
  for (uint32_t s = 0; s < g->nmma; s++) {
    if (g->mmas[s].tile == NONE) continue;
    const gbuf *t = &g->buf[g->mmas[s].tile];
    uint8_t ct = (uint8_t)vyre_type_compute(t->type);
    /* Invocation l alone writes elements l, l + wgs, ...: no race. */
    for (uint32_t j = 0; j < t->count / g->wgs; j++) {
      uint32_t idx = fz_lidlin(g);
      if (j) idx = fz_val(g, vyre_b_bin(g->b, VYRE_OP_ADD, idx, fz_u32c(g, j * g->wgs)),
                          VYRE_T_U32, 0);
      vyre_b_store(g->b, t->index, idx, fz_value(g, ct, 2, 0));
    }
  }
}

/* A tile index: near the start (plus k * step in a K loop), near or past
 * the end, far beyond it, or differing across lanes (lane 0's counts). */
static uint32_t tile_index(gen *g, uint32_t count, uint32_t kv, uint32_t step) {
  vyre_builder *b = g->b;
  switch (rnd(g, 10)) {
  case 0: return fz_u32c(g, 0xffffff00u + rnd(g, 256));
  case 1: return fz_u32c(g, count > 64 ? count - rnd(g, 64) : count);
  case 2: {
    uint32_t x = fz_value(g, VYRE_T_U32, 1, 0);
    return fz_val(g, vyre_b_bin(b, VYRE_OP_AND, x, fz_u32c(g, 2047)), VYRE_T_U32, 0);
  }
  default: {
    uint32_t base = fz_u32c(g, rnd(g, 3) ? rnd(g, 40) : 8 * rnd(g, 8));
    if (kv == UINT32_MAX) return base;
    uint32_t off = vyre_b_bin(b, VYRE_OP_MUL, kv, fz_u32c(g, step));
    return fz_val(g, vyre_b_bin(b, VYRE_OP_ADD, base, off), VYRE_T_U32, 0);
  }
  }
}

/* A load stride: the tile's width or more, 0..2 (rows overlap: fine for
 * loads), or differing across lanes. */
static uint32_t load_stride(gen *g, uint32_t width) {
  switch (rnd(g, 8)) {
  case 0: return fz_u32c(g, rnd(g, 3));
  case 1: {
    uint32_t l = fz_lidlin(g);
    return fz_val(g, vyre_b_bin(g->b, VYRE_OP_ADD, l, fz_u32c(g, width)), VYRE_T_U32, 0);
  }
  default: return fz_u32c(g, width + (rnd(g, 2) ? 0 : rnd(g, 40)));
  }
}

/* mma_load of `slot` (use: VYRE_MAT_A/B) from buffer k, at K step kv. */
static void load_tile(gen *g, uint32_t slot, uint32_t type, uint8_t k, uint32_t kv) {
  uint32_t rows, cols;
  vyre_type_matrix_dims(type, &rows, &cols);
  vyre_layout layout = (vyre_layout)rnd(g, 2);
  uint32_t width = layout == VYRE_LAYOUT_ROW ? cols : rows;
  /* In a K loop, A steps along its columns and B along its rows. */
  uint32_t step = vyre_type_matrix_use(type) == VYRE_MAT_A ? cols : rows * width;
  uint32_t idx = tile_index(g, g->buf[k].count, kv, step);
  vyre_b_mma_load(g->b, layout, slot, g->buf[k].index, idx, load_stride(g, width));
}

/* One section: C by fill, load or zeros; one mma or a K loop of them;
 * D stored into the subgroup's own span of its output. */
static void section(gen *g, uint32_t s) {
  vyre_builder *b = g->b;
  uint8_t comp = g->mmas[s].comp;
  int fl = is_float_comp(comp);
  uint8_t acc_t = fl ? VYRE_T_F32 : VYRE_T_I32;
  uint32_t ta_t = vyre_type_matrix(VYRE_MAT_A, comp), tb_t = vyre_type_matrix(VYRE_MAT_B, comp);
  uint32_t tc_t = vyre_type_matrix(VYRE_MAT_ACC, acc_t);
  uint32_t ta = vyre_b_local(b, (vyre_type)ta_t), tb = vyre_b_local(b, (vyre_type)tb_t);
  uint32_t acc = vyre_b_local(b, (vyre_type)tc_t);
  uint32_t r = rnd(g, 3);
  if (r == 1) vyre_b_mma_fill(b, acc, fz_value(g, acc_t, 2, 1)); /* uniform: one value */
  else if (r == 2 && g->mmas[s].c != NONE) load_tile(g, acc, tc_t, g->mmas[s].c, UINT32_MAX);
  uint8_t asrc = g->mmas[s].tile != NONE && chance(g, 50) ? g->mmas[s].tile : g->mmas[s].a;
  uint32_t n = 1 + rnd(g, 4);
  if (chance(g, 50)) {
    /* A K loop of n steps: uniform bounds, so the ops stay in uniform flow. */
    uint32_t k = vyre_b_local(b, VYRE_T_U32);
    vyre_b_loop(b, k, vyre_b_u32(b, 0), vyre_b_u32(b, n));
    g->depth++;
    uint32_t kv = fz_val(g, vyre_b_get(b, k), VYRE_T_U32, 1);
    load_tile(g, ta, ta_t, asrc, kv);
    load_tile(g, tb, tb_t, g->mmas[s].b, kv);
    vyre_b_mma(b, acc, ta, tb, acc);
    g->depth--;
    vyre_b_end(b);
    fz_leave_scope(g);
  } else {
    for (uint32_t i = 0; i < n; i++) {
      if (i == 0 || chance(g, 50)) load_tile(g, ta, ta_t, asrc, UINT32_MAX);
      if (i == 0 || chance(g, 50)) load_tile(g, tb, tb_t, g->mmas[s].b, UINT32_MAX);
      vyre_b_mma(b, acc, ta, tb, acc);
    }
  }
  if (fl) g->uses_fmma = 1;
  /* Subgroup sg (lane 0: lin = 32 sg) owns [sg span, (sg + 1) span). */
  const gbuf *o = &g->buf[g->mmas[s].out];
  uint32_t sg = fz_val(g, vyre_b_bin(b, VYRE_OP_SHR, fz_lin(g), fz_u32c(g, 5)), VYRE_T_U32, 0);
  uint32_t idx = fz_val(g, vyre_b_bin(b, VYRE_OP_MUL, sg, fz_u32c(g, g->mmas[s].span)),
                        VYRE_T_U32, 0);
  vyre_b_mma_store(b, (vyre_layout)rnd(g, 2), o->index, idx, fz_u32c(g, g->mmas[s].stride), acc);
}

void fz_mma_sections(gen *g) {
  for (uint32_t s = 0; s < g->nmma; s++) section(g, s);
}
