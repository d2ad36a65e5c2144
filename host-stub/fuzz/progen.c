/* progen.c -- the random-program generator (progen.h): one attempt per seed picks the workgroup and the shape, builds, validates and makes inputs; and the codegen benchmark's program. */
#include <stdlib.h>
#include <string.h>

#include "internal.h"

#define ATTEMPTS 8

/* Whether the linear id of a 2-D or 3-D workgroup (fz_lin) is claimed. */
static int multi_dim_ok(const gen *g) {
  return can(g, VYRE_OP_WORKGROUP_ID, VYRE_T_U32) && can(g, VYRE_OP_LOCAL_ID, VYRE_T_U32) &&
         can(g, VYRE_OP_MUL, VYRE_T_U32) && can(g, VYRE_OP_ADD, VYRE_T_U32) &&
         can_value(g, VYRE_T_U32);
}

static void pick_workgroup(gen *g, const progen_options *o) {
  static const uint32_t shapes[][3] = {{64, 1, 1}, {32, 1, 1}, {1, 1, 1},  {33, 1, 1},
                                       {100, 1, 1}, {128, 1, 1}, {8, 4, 1}, {4, 4, 2},
                                       {7, 3, 1},  {256, 1, 1}, {48, 1, 1}, {16, 1, 1},
                                       {16, 3, 1}, {32, 2, 1}, {6, 5, 3}};
  static const uint32_t ew_x[] = {32, 64, 100, 128, 256, 7};
  /* MMA: whole subgroups (a multiple of 32 invocations). */
  static const uint32_t mma_shapes[][3] = {{32, 1, 1}, {64, 1, 1}, {128, 1, 1}, {256, 1, 1},
                                           {8, 4, 1},  {32, 2, 1}, {16, 2, 2}, {96, 1, 1}};
  uint32_t *wg = g->wg;
  if (o && (o->workgroup[0] || o->workgroup[1] || o->workgroup[2])) {
    for (int k = 0; k < 3; k++) wg[k] = o->workgroup[k] ? o->workgroup[k] : 1;
  } else if (g->mma) {
    const uint32_t *s = mma_shapes[rnd(g, N(mma_shapes))];
    for (int k = 0; k < 3; k++) wg[k] = s[k];
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
    /* Claims without the ops of a 2-D/3-D linear id: one of the 1-D shapes. */
    if (s[1] * s[2] > 1 && !multi_dim_ok(g)) s = shapes[rnd(g, 6)];
    for (int k = 0; k < 3; k++) wg[k] = s[k];
  }
  vyre_builder_set_workgroup(g->b, wg[0], wg[1], wg[2]);
  g->wgs = wg[0] * wg[1] * wg[2];
}

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
  g->mma = rf(g) && fz_mma_wanted(g);
  pick_workgroup(g, o);
  if (g->mma && g->wgs % 32) g->mma = 0; /* a workgroup override that is not whole subgroups */
  if (rf(g)) {
    fz_declare_race_free(g);
    fz_body_race_free(g);
  } else {
    fz_declare_any(g);
    if (ew(g)) fz_body_elementwise(g);
    else fz_body_coverage(g);
  }
  vyre_status st = vyre_builder_finish(g->b, &out->bytes, &out->size, err);
  vyre_program *p = NULL;
  if (st == VYRE_OK) st = vyre_program_decode(out->bytes, out->size, &p, err);
  if (st == VYRE_OK) {
    out->ulp_budget = g->uses_trans || g->uses_fmma ? 1 : 0;
    st = fz_make_inputs(g, p, out, err);
    if (st == VYRE_OK && g->uses_trans && !g->uses_fmma && has(g, PROGEN_STRICT_TRANSCENDENTAL) &&
        chance(g, 50))
      out->ulp_budget = 0;
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
    /* Claims steer the race-free shape only (progen_claims). */
    g->claims = o && (g->flags & PROGEN_RACE_FREE) ? o->claims : NULL;
    g->flags |= fz_claims_flags(g);
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
