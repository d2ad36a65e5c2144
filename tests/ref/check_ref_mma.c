/* check_ref_mma.c -- the MMA ops on the reference backend against hand-computed tiles: layouts, strides, lane 0, out-of-range rows, integer wrap, f16/bf16 specials and exact rounding, the error bound side channel, strict mode and the workgroup rule. */
#include "config.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "check_ref.h"
#include "host-stub/ref/tolerance.h"

/* ------------------------------------------------------------------ */
/* Helpers                                                             */
/* ------------------------------------------------------------------ */
static uint16_t h16(float f) { return vyre_f32_to_f16(tr_fbits(f)); }
static uint16_t bf(float f) { return vyre_f32_to_bf16(tr_fbits(f)); }
static float fval(uint32_t bits) {
  float f;
  memcpy(&f, &bits, 4);
  return f;
}

static int is_float(uint32_t comp) { return comp == VYRE_T_F16 || comp == VYRE_T_BF16; }
static uint32_t k_of(uint32_t comp) { return is_float(comp) ? 16u : 32u; }
static uint32_t acc_of(uint32_t comp) { return is_float(comp) ? VYRE_T_F32 : VYRE_T_I32; }

/* One tile operand: its buffer's bytes and where the tile sits. */
typedef struct operand {
  const void *data;
  uint32_t count; /* elements */
  uint32_t layout, index, stride;
} operand;

/* One D = A * B + C on 32 invocations: A, B (component comp) and C
 * (the accumulator type; NULL data: mma_fill with c_fill) from buffers,
 * D stored to a d_count-element output. */
typedef struct mma_case {
  uint32_t comp;
  operand a, b, c;
  uint64_t c_fill;
  uint32_t d_count, d_layout, d_index, d_stride;
  uint32_t ulp;
  int raw; /* A, B, C (and an i32 D) in integer buffers of the components' sizes */
} mma_case;

/* The buffer type of a tile of component comp: itself, or with raw an
 * integer type of its size (f16/bf16: A u16, B i16; i8 <-> u8; C and D u32). */
static uint32_t buf_type(const mma_case *m, uint32_t comp, int is_b) {
  if (!m->raw) return comp;
  switch (comp) {
  case VYRE_T_F16:
  case VYRE_T_BF16: return is_b ? VYRE_T_I16 : VYRE_T_U16;
  case VYRE_T_I8: return VYRE_T_U8;
  case VYRE_T_U8: return VYRE_T_I8;
  default: return VYRE_T_U32;
  }
}

static size_t elem_bytes(uint32_t t) { return t == VYRE_T_I8 || t == VYRE_T_U8 ? 1 : t == VYRE_T_F16 || t == VYRE_T_BF16 ? 2 : 4; }

static vyre_builder *mma_program(const mma_case *m) {
  uint32_t acc = acc_of(m->comp);
  vyre_builder *b = vyre_builder_new(32, 1, 1);
  uint32_t A = vyre_b_buffer(b, "a", UINT32_MAX, VYRE_ACCESS_READ_ONLY, buf_type(m, m->comp, 0), 0, 0);
  uint32_t B = vyre_b_buffer(b, "b", UINT32_MAX, VYRE_ACCESS_READ_ONLY, buf_type(m, m->comp, 1), 0, 0);
  uint32_t C = m->c.data ? vyre_b_buffer(b, "c", UINT32_MAX, VYRE_ACCESS_READ_ONLY, buf_type(m, acc, 0), 0, 0) : 0;
  /* mma_store of an f32 accumulator takes an f32 buffer only. */
  uint32_t D = vyre_b_buffer(b, "d", UINT32_MAX, VYRE_ACCESS_WRITE_ONLY,
                             acc == VYRE_T_F32 ? acc : buf_type(m, acc, 0), m->d_count, 0);
  uint32_t la = vyre_b_local(b, vyre_type_matrix(VYRE_MAT_A, m->comp));
  uint32_t lb = vyre_b_local(b, vyre_type_matrix(VYRE_MAT_B, m->comp));
  uint32_t lc = vyre_b_local(b, vyre_type_matrix(VYRE_MAT_ACC, acc));
  vyre_b_inst(b, VYRE_OP_MMA_LOAD, m->comp, m->a.layout, la, A, vyre_b_u32(b, m->a.index),
              vyre_b_u32(b, m->a.stride));
  vyre_b_inst(b, VYRE_OP_MMA_LOAD, m->comp, m->b.layout, lb, B, vyre_b_u32(b, m->b.index),
              vyre_b_u32(b, m->b.stride));
  if (m->c.data)
    vyre_b_inst(b, VYRE_OP_MMA_LOAD, acc, m->c.layout, lc, C, vyre_b_u32(b, m->c.index),
                vyre_b_u32(b, m->c.stride));
  else
    vyre_b_inst(b, VYRE_OP_MMA_FILL, acc, 0, lc, vyre_b_const(b, acc, m->c_fill), 0, 0);
  vyre_b_inst(b, VYRE_OP_MMA, m->comp, 0, lc, la, lb, lc);
  vyre_b_inst(b, VYRE_OP_MMA_STORE, acc, m->d_layout, D, vyre_b_u32(b, m->d_index),
              vyre_b_u32(b, m->d_stride), lc);
  return b;
}

/* Run m (one workgroup); the output is D.  bounds (NULL: none) receives
 * the side channel's values for D. */
static vyre_outputs *mma_run(vyre_backend *be, const mma_case *m, double *bounds) {
  uint32_t acc = acc_of(m->comp);
  vyre_input in[3] = {{m->a.data, m->a.count * elem_bytes(m->comp)},
                      {m->b.data, m->b.count * elem_bytes(m->comp)},
                      {m->c.data, m->c.count * elem_bytes(acc)}};
  vyre_dispatch_options o = tr_opts();
  o.grid[0] = o.grid[1] = o.grid[2] = 1;
  o.ulp_budget = m->ulp;
  ref_mma_bound mb = {{sizeof mb, REF_EXT_MMA_BOUND, NULL}, 1, 0, &bounds};
  if (bounds) o.next = &mb.head;
  return tr_run_ok(be, mma_program(m), in, m->c.data ? 3 : 2, &o);
}

/* Small integers everywhere: every sum is exact in f32 and in i32. */
static int32_t pattern(uint32_t which, uint32_t r, uint32_t c) {
  return (int32_t)((r * 7u + c * 3u + which * 5u) % 9u) - 4;
}

/* ------------------------------------------------------------------ */
/* Layouts, strides, lanes, bounds of buffers                          */
/* ------------------------------------------------------------------ */
/* The same product four ways for each type: A row-major, A given
 * transposed (col layout), B strided with an offset, D stored col. */
START_TEST(test_mma_layouts_every_type) {
  static const uint32_t comps[] = {VYRE_T_F16, VYRE_T_BF16, VYRE_T_I8, VYRE_T_U8};
  vyre_backend *be = tr_new_backend();
  for (uint32_t t = 0; t < 4; t++) {
    uint32_t comp = comps[t], K = k_of(comp), SB = 21, OB = 3;
    int unsig = comp == VYRE_T_U8;
    uint16_t a16[16 * 32], at16[32 * 16], b16[OB + 32 * 21];
    uint8_t a8[16 * 32], at8[32 * 16], b8[OB + 32 * 21];
    int32_t want[256];
    memset(b16, 0, sizeof b16);
    memset(b8, 0, sizeof b8);
    for (uint32_t i = 0; i < 16; i++)
      for (uint32_t k = 0; k < K; k++) {
        int32_t v = pattern(0, i, k) + (unsig ? 4 : 0);
        uint16_t h = comp == VYRE_T_F16 ? h16((float)v) : bf((float)v);
        a16[i * K + k] = at16[k * 16 + i] = h;
        a8[i * K + k] = at8[k * 16 + i] = (uint8_t)v;
      }
    for (uint32_t k = 0; k < K; k++)
      for (uint32_t j = 0; j < 16; j++) {
        int32_t v = pattern(1, k, j) + (unsig ? 4 : 0);
        b16[OB + k * SB + j] = comp == VYRE_T_F16 ? h16((float)v) : bf((float)v);
        b8[OB + k * SB + j] = (uint8_t)v;
      }
    for (uint32_t i = 0; i < 16; i++)
      for (uint32_t j = 0; j < 16; j++) {
        int32_t s = 7;
        for (uint32_t k = 0; k < K; k++)
          s += (pattern(0, i, k) + (unsig ? 4 : 0)) * (pattern(1, k, j) + (unsig ? 4 : 0));
        want[i * 16 + j] = s;
      }
    int fl = is_float(comp);
    uint64_t seven = fl ? tr_fbits(7.0f) : 7u;
    for (uint32_t form = 0; form < 2; form++) {
      mma_case m = {comp,
                    {form ? (fl ? (const void *)at16 : at8) : (fl ? (const void *)a16 : a8), 16 * K,
                     form, 0, form ? 16 : K},
                    {fl ? (const void *)b16 : b8, OB + K * SB, VYRE_LAYOUT_ROW, OB, SB},
                    {NULL, 0, 0, 0, 0}, seven, 256, form, 0, 16, 1, 0};
      vyre_outputs *out = mma_run(be, &m, NULL);
      for (uint32_t i = 0; i < 16; i++)
        for (uint32_t j = 0; j < 16; j++) {
          uint32_t e = form ? j * 16 + i : i * 16 + j;
          uint32_t w = fl ? tr_fbits((float)want[i * 16 + j]) : (uint32_t)want[i * 16 + j];
          ck_assert_msg(tr_u32_at(out, 0, e) == w,
                        "%s form %u: D[%u][%u] = 0x%08x, want 0x%08x (%d)", vyre_type_name(comp),
                        form, i, j, tr_u32_at(out, 0, e), w, want[i * 16 + j]);
        }
      be->vt->outputs_free(be, out);
    }
  }
  be->vt->destroy(be);
}
END_TEST

/* Rows past the end of A read as 0; D elements past the output's end
 * are dropped (the output keeps its size); D is stored col-major. */
START_TEST(test_mma_out_of_range) {
  vyre_backend *be = tr_new_backend();
  uint8_t a[16 * 32 - 40], bm[32 * 16]; /* A's last row and a bit of the one before are missing */
  for (uint32_t e = 0; e < sizeof a; e++) a[e] = 1;
  for (uint32_t e = 0; e < sizeof bm; e++) bm[e] = 2;
  mma_case m = {VYRE_T_U8, {a, sizeof a, 0, 0, 32}, {bm, sizeof bm, 0, 0, 16}, {NULL, 0, 0, 0, 0},
                0, 200, VYRE_LAYOUT_COL, 0, 16, 0, 0};
  vyre_outputs *out = mma_run(be, &m, NULL);
  ck_assert_uint_eq(out->items[0].size, 200 * 4);
  for (uint32_t e = 0; e < 200; e++) {
    uint32_t i = e % 16; /* D stored col-major: columns 13+ are dropped, every row shows */
    /* Row i of A has min(32, max(0, len - 32 i)) ones. */
    int64_t ones = (int64_t)sizeof a - 32 * (int64_t)i;
    ones = ones < 0 ? 0 : ones > 32 ? 32 : ones;
    ck_assert_msg(tr_u32_at(out, 0, e) == (uint32_t)(2 * ones), "D[%u] = %u, want %lld", e,
                  tr_u32_at(out, 0, e), (long long)(2 * ones));
  }
  be->vt->outputs_free(be, out);
  be->vt->destroy(be);
}
END_TEST

/* Index and stride come from lane 0: every other lane asks for a
 * different tile.  Two subgroups of one workgroup hold separate tiles,
 * and an accumulator lives on across a loop of four K steps. */
START_TEST(test_mma_lane0_subgroups_k_loop) {
  vyre_backend *be = tr_new_backend();
  enum { KT = 4 }; /* K steps of 32: A is 16 x 128 per subgroup, B 128 x 16 */
  static int8_t a[2 * 16 * 128], bm[128 * 16];
  for (uint32_t s = 0; s < 2; s++)
    for (uint32_t i = 0; i < 16; i++)
      for (uint32_t k = 0; k < 128; k++) a[s * 2048 + i * 128 + k] = (int8_t)pattern(s, i, k);
  for (uint32_t k = 0; k < 128; k++)
    for (uint32_t j = 0; j < 16; j++) bm[k * 16 + j] = (int8_t)pattern(2, k, j);
  vyre_builder *b = vyre_builder_new(64, 1, 1);
  uint32_t A = vyre_b_buffer(b, "a", UINT32_MAX, VYRE_ACCESS_READ_ONLY, VYRE_T_I8, 0, 0);
  uint32_t B = vyre_b_buffer(b, "b", UINT32_MAX, VYRE_ACCESS_READ_ONLY, VYRE_T_I8, 0, 0);
  uint32_t D = vyre_b_buffer(b, "d", UINT32_MAX, VYRE_ACCESS_WRITE_ONLY, VYRE_T_I32, 512, 0);
  uint32_t la = vyre_b_local(b, VYRE_T_MAT_A_I8), lb = vyre_b_local(b, VYRE_T_MAT_B_I8);
  uint32_t acc = vyre_b_local(b, VYRE_T_MAT_ACC_I32), k = vyre_b_local(b, VYRE_T_U32);
  uint32_t lid = vyre_b_builtin(b, VYRE_OP_LOCAL_ID, 0);
  uint32_t lane = vyre_b_builtin(b, VYRE_OP_SUBGROUP_LANE, 0);
  uint32_t sg = vyre_b_bin(b, VYRE_OP_DIV, lid, vyre_b_u32(b, 32));
  /* Lane 0: subgroup s's tile; lane L > 0: junk L * 1000 and stride 128 + L. */
  uint32_t junk = vyre_b_bin(b, VYRE_OP_MUL, lane, vyre_b_u32(b, 1000));
  uint32_t stride = vyre_b_bin(b, VYRE_OP_ADD, vyre_b_u32(b, 128), lane);
  uint32_t abase = vyre_b_bin(b, VYRE_OP_ADD, vyre_b_bin(b, VYRE_OP_MUL, sg, vyre_b_u32(b, 2048)), junk);
  vyre_b_loop(b, k, vyre_b_u32(b, 0), vyre_b_u32(b, KT));
  uint32_t kv = vyre_b_get(b, k);
  uint32_t ai = vyre_b_bin(b, VYRE_OP_ADD, abase, vyre_b_bin(b, VYRE_OP_MUL, kv, vyre_b_u32(b, 32)));
  uint32_t bi = vyre_b_bin(b, VYRE_OP_ADD, junk, vyre_b_bin(b, VYRE_OP_MUL, kv, vyre_b_u32(b, 512)));
  vyre_b_inst(b, VYRE_OP_MMA_LOAD, VYRE_T_I8, 0, la, A, ai, stride);
  vyre_b_inst(b, VYRE_OP_MMA_LOAD, VYRE_T_I8, 0, lb, B, bi,
              vyre_b_bin(b, VYRE_OP_SUB, stride, vyre_b_u32(b, 112)));
  vyre_b_inst(b, VYRE_OP_MMA, VYRE_T_I8, 0, acc, la, lb, acc);
  vyre_b_end(b);
  uint32_t di = vyre_b_bin(b, VYRE_OP_ADD, vyre_b_bin(b, VYRE_OP_MUL, sg, vyre_b_u32(b, 256)), junk);
  vyre_b_inst(b, VYRE_OP_MMA_STORE, VYRE_T_I32, 0, D, di,
              vyre_b_bin(b, VYRE_OP_SUB, stride, vyre_b_u32(b, 112)), acc);
  vyre_input in[2] = {{a, sizeof a}, {bm, sizeof bm}};
  vyre_dispatch_options o = tr_opts();
  o.grid[0] = 1;
  vyre_outputs *out = tr_run_ok(be, b, in, 2, &o);
  for (uint32_t s = 0; s < 2; s++)
    for (uint32_t i = 0; i < 16; i++)
      for (uint32_t j = 0; j < 16; j++) {
        int32_t w = 0;
        for (uint32_t kk = 0; kk < 128; kk++) w += pattern(s, i, kk) * pattern(2, kk, j);
        uint32_t got = tr_u32_at(out, 0, s * 256 + i * 16 + j);
        ck_assert_msg(got == (uint32_t)w, "subgroup %u D[%u][%u] = %d, want %d", s, i, j,
                      (int32_t)got, w);
      }
  be->vt->outputs_free(be, out);
  be->vt->destroy(be);
}
END_TEST

/* A tile staged in workgroup memory at index 5 with stride 24, and the
 * result stored col-major into workgroup memory before it is copied out. */
START_TEST(test_mma_workgroup_memory) {
  vyre_backend *be = tr_new_backend();
  static uint16_t a[256], bm[256];
  for (uint32_t e = 0; e < 256; e++) {
    a[e] = h16((float)pattern(0, e / 16, e % 16));
    bm[e] = h16((float)pattern(1, e / 16, e % 16));
  }
  vyre_builder *b = vyre_builder_new(32, 1, 1);
  uint32_t A = vyre_b_buffer(b, "a", UINT32_MAX, VYRE_ACCESS_READ_ONLY, VYRE_T_F16, 0, 0);
  uint32_t B = vyre_b_buffer(b, "b", UINT32_MAX, VYRE_ACCESS_READ_ONLY, VYRE_T_F16, 0, 0);
  uint32_t D = vyre_b_buffer(b, "d", UINT32_MAX, VYRE_ACCESS_WRITE_ONLY, VYRE_T_F32, 256, 0);
  uint32_t SA = vyre_b_buffer(b, "sa", UINT32_MAX, VYRE_ACCESS_WORKGROUP, VYRE_T_F16, 5 + 16 * 24, 0);
  uint32_t SD = vyre_b_buffer(b, "sd", UINT32_MAX, VYRE_ACCESS_WORKGROUP, VYRE_T_F32, 256, 0);
  uint32_t la = vyre_b_local(b, VYRE_T_MAT_A_F16), lb = vyre_b_local(b, VYRE_T_MAT_B_F16);
  uint32_t acc = vyre_b_local(b, VYRE_T_MAT_ACC_F32), e = vyre_b_local(b, VYRE_T_U32);
  uint32_t e2 = vyre_b_local(b, VYRE_T_U32);
  uint32_t lid = vyre_b_builtin(b, VYRE_OP_LOCAL_ID, 0);
  /* Each invocation stages 8 of A's elements: sa[5 + r * 24 + c] = a[r * 16 + c]. */
  vyre_b_loop(b, e, vyre_b_bin(b, VYRE_OP_MUL, lid, vyre_b_u32(b, 8)),
              vyre_b_bin(b, VYRE_OP_MUL, vyre_b_bin(b, VYRE_OP_ADD, lid, vyre_b_u32(b, 1)), vyre_b_u32(b, 8)));
  uint32_t ev = vyre_b_get(b, e);
  uint32_t r = vyre_b_bin(b, VYRE_OP_DIV, ev, vyre_b_u32(b, 16)), c = vyre_b_bin(b, VYRE_OP_MOD, ev, vyre_b_u32(b, 16));
  uint32_t si = vyre_b_bin(b, VYRE_OP_ADD, vyre_b_u32(b, 5),
                           vyre_b_bin(b, VYRE_OP_ADD, vyre_b_bin(b, VYRE_OP_MUL, r, vyre_b_u32(b, 24)), c));
  vyre_b_store(b, SA, si, vyre_b_load(b, A, ev));
  vyre_b_end(b);
  vyre_b_barrier(b, VYRE_BARRIER_WORKGROUP);
  vyre_b_inst(b, VYRE_OP_MMA_LOAD, VYRE_T_F16, 0, la, SA, vyre_b_u32(b, 5), vyre_b_u32(b, 24));
  vyre_b_inst(b, VYRE_OP_MMA_LOAD, VYRE_T_F16, 0, lb, B, vyre_b_u32(b, 0), vyre_b_u32(b, 16));
  vyre_b_inst(b, VYRE_OP_MMA, VYRE_T_F16, 0, acc, la, lb, acc);
  vyre_b_inst(b, VYRE_OP_MMA_STORE, VYRE_T_F32, VYRE_LAYOUT_COL, SD, vyre_b_u32(b, 0), vyre_b_u32(b, 16), acc);
  vyre_b_barrier(b, VYRE_BARRIER_WORKGROUP);
  vyre_b_loop(b, e2, vyre_b_bin(b, VYRE_OP_MUL, lid, vyre_b_u32(b, 8)),
              vyre_b_bin(b, VYRE_OP_MUL, vyre_b_bin(b, VYRE_OP_ADD, lid, vyre_b_u32(b, 1)), vyre_b_u32(b, 8)));
  vyre_b_store(b, D, vyre_b_get(b, e2), vyre_b_load(b, SD, vyre_b_get(b, e2)));
  vyre_b_end(b);
  vyre_input in[2] = {{a, sizeof a}, {bm, sizeof bm}};
  vyre_dispatch_options o = tr_opts();
  o.grid[0] = 1;
  o.ulp_budget = 1;
  vyre_outputs *out = tr_run_ok(be, b, in, 2, &o);
  for (uint32_t i = 0; i < 16; i++)
    for (uint32_t j = 0; j < 16; j++) {
      int32_t w = 0;
      for (uint32_t k = 0; k < 16; k++) w += pattern(0, i, k) * pattern(1, k, j);
      ck_assert_msg(tr_u32_at(out, 0, j * 16 + i) == tr_fbits((float)w),
                    "D[%u][%u] (col-major in sd) = %g, want %d", i, j,
                    (double)fval(tr_u32_at(out, 0, j * 16 + i)), w);
    }
  be->vt->outputs_free(be, out);
  be->vt->destroy(be);
}
END_TEST

/* ------------------------------------------------------------------ */
/* Integer edges                                                       */
/* ------------------------------------------------------------------ */
static uint32_t int_d00(vyre_backend *be, uint32_t comp, uint8_t av, uint8_t bv, uint32_t c) {
  uint8_t a[512], bm[512];
  memset(a, av, sizeof a);
  memset(bm, bv, sizeof bm);
  mma_case m = {comp, {a, 512, 0, 0, 32}, {bm, 512, 0, 0, 16}, {NULL, 0, 0, 0, 0}, c, 256, 0, 0, 16, 0, 0};
  vyre_outputs *out = mma_run(be, &m, NULL);
  uint32_t v = tr_u32_at(out, 0, 0);
  for (uint32_t e = 1; e < 256; e++) ck_assert_uint_eq(tr_u32_at(out, 0, e), v);
  be->vt->outputs_free(be, out);
  return v;
}

START_TEST(test_mma_integer_edges) {
  vyre_backend *be = tr_new_backend();
  ck_assert_uint_eq(int_d00(be, VYRE_T_U8, 255, 255, 0), 255u * 255u * 32u); /* 2080800 */
  ck_assert_uint_eq(int_d00(be, VYRE_T_I8, 0x80, 0x80, 0), 128u * 128u * 32u);  /* -128 * -128 */
  ck_assert_uint_eq(int_d00(be, VYRE_T_I8, 0x80, 0x7f, 0), (uint32_t)(-128 * 127 * 32));
  /* Near 2^31: 2147483647 - 100000 + 524288 wraps to a negative i32. */
  ck_assert_uint_eq(int_d00(be, VYRE_T_I8, 0x80, 0x80, 2147383647u),
                    (uint32_t)(2147383647u + 524288u));
  ck_assert_int_eq((int32_t)int_d00(be, VYRE_T_I8, 0x80, 0x80, 2147383647u), -2147059361);
  /* From below: INT32_MIN + -(128 * 127 * 32) wraps up. */
  ck_assert_uint_eq(int_d00(be, VYRE_T_I8, 0x80, 0x7f, 0x80000000u),
                    0x80000000u - 128u * 127u * 32u);
  /* u8 and i8 read the same byte differently. */
  ck_assert_uint_eq(int_d00(be, VYRE_T_U8, 0x80, 0xff, 0), 128u * 255u * 32u);
  ck_assert_uint_eq(int_d00(be, VYRE_T_I8, 0x80, 0xff, 0), 128u * 32u);
  be->vt->destroy(be);
}
END_TEST

/* ------------------------------------------------------------------ */
/* Float edges and rounding                                            */
/* ------------------------------------------------------------------ */
/* D row 0 from A row 0 and B column 0 (every other element 0), C[0][0]
 * = c; returns D[0][0]'s bits and its bound. */
static uint32_t float_d00(vyre_backend *be, uint32_t comp, const uint16_t *arow,
                          const uint16_t *bcol, uint32_t c, double *bound) {
  uint16_t a[256], bm[256];
  float cf[256];
  memset(a, 0, sizeof a);
  memset(bm, 0, sizeof bm);
  memset(cf, 0, sizeof cf);
  memcpy(&cf[0], &c, 4);
  for (uint32_t k = 0; k < 16; k++) {
    a[k] = arow[k];
    bm[k * 16] = bcol[k];
  }
  double bounds[256];
  mma_case m = {comp, {a, 256, 0, 0, 16}, {bm, 256, 0, 0, 16}, {cf, 256, 0, 0, 16}, 0, 256, 0, 0, 16, 1, 0};
  vyre_outputs *out = mma_run(be, &m, bounds);
  uint32_t v = tr_u32_at(out, 0, 0);
  *bound = bounds[0];
  be->vt->outputs_free(be, out);
  return v;
}

static double bound_of(double S) { return S > 0x1p127 ? INFINITY : 18.0 * (0x1p-22 * S + 0x1p-126); }

START_TEST(test_mma_float_rounding) {
  vyre_backend *be = tr_new_backend();
  uint16_t ar[16], bc[16];
  double bd;
  /* 1 + 16 * 2^-24: summed in f32 one term at a time each addition ties
   * back to 1; rounded once it is exactly 1 + 2^-20. */
  for (int k = 0; k < 16; k++) ar[k] = bc[k] = h16(0x1p-12f);
  uint32_t d = float_d00(be, VYRE_T_F16, ar, bc, tr_fbits(1.0f), &bd);
  ck_assert_msg(d == tr_fbits(1.0f + 0x1p-20f), "exact sum rounded once: got %a", (double)fval(d));
  ck_assert_msg(bd == bound_of(1.0 + 16 * 0x1p-24), "bound %a", bd);
  /* Cancellation: 2^30 - 2^30 + 2^-24 + C = 3 is 3 + 2^-24, not 3 + 0 or 2^30-rounded. */
  for (int k = 0; k < 16; k++) ar[k] = bc[k] = 0;
  ar[0] = h16(32768.0f), bc[0] = h16(32768.0f);
  ar[1] = h16(-32768.0f), bc[1] = h16(32768.0f);
  ar[2] = h16(0x1p-12f), bc[2] = h16(0x1p-12f);
  d = float_d00(be, VYRE_T_F16, ar, bc, tr_fbits(3.0f), &bd);
  ck_assert_msg(d == tr_fbits(3.0f), "3 + 2^-24 rounds to 3: got %a", (double)fval(d));
  /* An f32 ulp of 3 is 2^-22: 3 + 2^-23 is a tie, to even 3. */
  ar[2] = h16(0x1p-12f), bc[2] = h16(0x1p-11f);
  d = float_d00(be, VYRE_T_F16, ar, bc, tr_fbits(3.0f), &bd);
  ck_assert_msg(d == tr_fbits(3.0f), "3 + 2^-23 ties to even: got %a", (double)fval(d));
  ar[3] = h16(0x1p-14f), bc[3] = h16(0x1p-14f); /* + 2^-28: past the tie, rounds up */
  d = float_d00(be, VYRE_T_F16, ar, bc, tr_fbits(3.0f), &bd);
  ck_assert_msg(d == tr_fbits(3.0f + 0x1p-22f), "3 + 2^-23 + 2^-28 rounds up: got %a",
                (double)fval(d));
  ck_assert_msg(bd == bound_of(3.0 + 0x1p30 + 0x1p30 + 0x1p-23 + 0x1p-28), "bound %a", bd);
  /* f16 max squared, 16 times: 16 * 65504^2 = 68652384256 exactly. */
  for (int k = 0; k < 16; k++) ar[k] = bc[k] = 0x7bff;
  d = float_d00(be, VYRE_T_F16, ar, bc, 0, &bd);
  ck_assert_msg(d == tr_fbits(68652384256.0f), "16 * 65504^2: got %a", (double)fval(d));
  be->vt->destroy(be);
}
END_TEST

START_TEST(test_mma_float_subnormals_and_range) {
  vyre_backend *be = tr_new_backend();
  uint16_t ar[16], bc[16];
  double bd;
  memset(ar, 0, sizeof ar);
  memset(bc, 0, sizeof bc);
  /* bf16's smallest subnormal 2^-133 times 1 is an f32 subnormal, kept. */
  ar[0] = 0x0001, bc[0] = bf(1.0f);
  ck_assert_uint_eq(float_d00(be, VYRE_T_BF16, ar, bc, 0, &bd), 0x00010000u);
  ck_assert_msg(bd == bound_of(0x1p-133), "bound %a", bd);
  /* f16's smallest subnormal 2^-24 squared is 2^-48, a normal f32. */
  ar[0] = 0x0001, bc[0] = 0x0001;
  ck_assert_uint_eq(float_d00(be, VYRE_T_F16, ar, bc, 0, &bd), tr_fbits(0x1p-48f));
  /* 2^-150 (half the smallest f32 subnormal) ties to even 0; three of
   * them (1.5 units) round to 2 units; the f32 subnormal C is kept. */
  ar[0] = bf(0x1p-75f), bc[0] = bf(0x1p-75f);
  ck_assert_uint_eq(float_d00(be, VYRE_T_BF16, ar, bc, 0, &bd), 0u);
  ar[1] = ar[2] = bc[1] = bc[2] = bf(0x1p-75f);
  ck_assert_uint_eq(float_d00(be, VYRE_T_BF16, ar, bc, 0, &bd), 2u);
  ck_assert_uint_eq(float_d00(be, VYRE_T_BF16, ar, bc, 0x80000005u, &bd), 0x80000004u);
  /* 2^-266 (two bf16 subnormals) vanishes; -0 + -0 products stay -0. */
  memset(ar, 0, sizeof ar);
  memset(bc, 0, sizeof bc);
  ar[0] = bc[0] = 0x0001;
  ck_assert_uint_eq(float_d00(be, VYRE_T_BF16, ar, bc, 0x80000000u, &bd), 0u);
  for (int k = 0; k < 16; k++) ar[k] = 0x8000;
  ck_assert_uint_eq(float_d00(be, VYRE_T_BF16, ar, bc, 0x80000000u, &bd), 0x80000000u);
  /* bf16 2^127 * 2 = 2^128: overflow to inf, bound +inf (S > 2^127). */
  memset(ar, 0, sizeof ar);
  memset(bc, 0, sizeof bc);
  ar[0] = bf(0x1p127f), bc[0] = bf(2.0f);
  ck_assert_uint_eq(float_d00(be, VYRE_T_BF16, ar, bc, 0, &bd), 0x7f800000u);
  ck_assert_msg(isinf(bd) && bd > 0, "bound +inf, got %a", bd);
  /* ... and minus it again: the exact sum is 1, no partial overflow. */
  ar[1] = bf(-0x1p127f), bc[1] = bf(2.0f);
  ar[2] = bf(1.0f), bc[2] = bf(1.0f);
  ck_assert_uint_eq(float_d00(be, VYRE_T_BF16, ar, bc, 0, &bd), tr_fbits(1.0f));
  ck_assert_msg(isinf(bd), "bound +inf once S > 2^127, got %a", bd);
  /* The largest products, 2^254 and -2^254, cancel exactly below 2^-120. */
  memset(ar, 0, sizeof ar);
  ar[0] = bc[0] = bf(0x1p127f);
  ar[1] = bf(-0x1p127f), bc[1] = bf(0x1p127f);
  ar[2] = bf(0x1p-100f), bc[2] = bf(0x1p-20f);
  ck_assert_uint_eq(float_d00(be, VYRE_T_BF16, ar, bc, 0, &bd), tr_fbits(0x1p-120f));
  be->vt->destroy(be);
}
END_TEST

/* Tiles in integer buffers of the components' sizes (u16/i16 for f16 and
 * bf16, u8 for i8 and i8 for u8, u32 for the accumulators) are their bits:
 * the same bytes give the same D as in buffers of the components, bf16
 * and f16 subnormals unflushed, a C NaN canonicalised as from f32. */
START_TEST(test_mma_raw_buffers) {
  static const uint32_t comps[] = {VYRE_T_F16, VYRE_T_BF16, VYRE_T_I8, VYRE_T_U8};
  vyre_backend *be = tr_new_backend();
  uint16_t a16[16 * 32], b16[32 * 16];
  uint8_t a8[16 * 32], b8[32 * 16];
  uint32_t c32[256];
  for (uint32_t t = 0; t < 4; t++) {
    uint32_t comp = comps[t], K = k_of(comp);
    int fl = is_float(comp);
    for (uint32_t e = 0; e < 16 * K; e++) {
      /* Small values and, every fifth element, a subnormal of either sign. */
      uint16_t v = comp == VYRE_T_F16 ? h16((float)pattern(0, e / K, e % K))
                                      : bf((float)pattern(0, e / K, e % K));
      a16[e] = e % 5 == 0 ? (uint16_t)(0x0001u + e + (e & 8u ? 0x8000u : 0u)) : v;
      b16[e] = e % 5 == 1 ? (uint16_t)(0x0040u + e) : (uint16_t)(v ^ 0x8000u);
      a8[e] = (uint8_t)(e * 37u + 11u), b8[e] = (uint8_t)(e * 91u + 200u);
    }
    for (uint32_t e = 0; e < 256; e++) c32[e] = fl ? tr_fbits((float)pattern(2, e, e)) : e * 0x01010101u;
    c32[3] = fl ? 0x7fc12345u : 0x80000000u; /* a NaN with a payload */
    c32[4] = 0x00000007u;                   /* an f32 subnormal */
    uint32_t d[2][256];
    for (int raw = 0; raw < 2; raw++) {
      mma_case m = {comp, {fl ? (const void *)a16 : a8, 16 * K, 0, 0, K},
                    {fl ? (const void *)b16 : b8, 16 * K, 0, 0, 16},
                    {c32, 256, 0, 0, 16}, 0, 256, 0, 0, 16, 1, raw};
      vyre_outputs *out = mma_run(be, &m, NULL);
      for (uint32_t e = 0; e < 256; e++) d[raw][e] = tr_u32_at(out, 0, e);
      be->vt->outputs_free(be, out);
    }
    for (uint32_t e = 0; e < 256; e++)
      ck_assert_msg(d[1][e] == d[0][e], "%s: D element %u from integer buffers 0x%08x, from %s "
                    "buffers 0x%08x", vyre_type_name(comp), e, d[1][e], vyre_type_name(comp), d[0][e]);
  }
  /* bf16's smallest subnormal from a u16 buffer times 1: 2^-133, kept. */
  uint16_t ar[256], bc[256];
  uint32_t c0[256];
  memset(ar, 0, sizeof ar), memset(bc, 0, sizeof bc), memset(c0, 0, sizeof c0);
  ar[0] = 0x0001, bc[0] = bf(1.0f);
  c0[1] = 0x7fc12345u;
  mma_case m = {VYRE_T_BF16, {ar, 256, 0, 0, 16}, {bc, 256, 0, 0, 16}, {c0, 256, 0, 0, 16},
                0, 256, 0, 0, 16, 1, 1};
  vyre_outputs *out = mma_run(be, &m, NULL);
  ck_assert_uint_eq(tr_u32_at(out, 0, 0), 0x00010000u);
  ck_assert_uint_eq(tr_u32_at(out, 0, 1), VYRE_F32_CANONICAL_NAN);
  be->vt->outputs_free(be, out);
  be->vt->destroy(be);
}
END_TEST

START_TEST(test_mma_float_specials) {
  vyre_backend *be = tr_new_backend();
  uint16_t ar[16], bc[16];
  double bd;
  const uint16_t inf = 0x7c00, ninf = 0xfc00, nan = 0x7e01;
  memset(ar, 0, sizeof ar);
  memset(bc, 0, sizeof bc);
  for (int k = 0; k < 16; k++) ar[k] = bc[k] = h16(1.0f);
  ar[3] = nan;
  ck_assert_uint_eq(float_d00(be, VYRE_T_F16, ar, bc, 0, &bd), VYRE_F32_CANONICAL_NAN);
  ar[3] = inf;
  ck_assert_uint_eq(float_d00(be, VYRE_T_F16, ar, bc, 0, &bd), 0x7f800000u);
  ck_assert_msg(bd == 0.0, "an infinite result is exact");
  ck_assert_uint_eq(float_d00(be, VYRE_T_F16, ar, bc, tr_fbits(-INFINITY), &bd),
                    VYRE_F32_CANONICAL_NAN); /* C counts as a term */
  ar[4] = ninf;
  ck_assert_uint_eq(float_d00(be, VYRE_T_F16, ar, bc, 0, &bd), VYRE_F32_CANONICAL_NAN);
  ar[4] = h16(1.0f);
  bc[3] = 0; /* inf * 0 */
  ck_assert_uint_eq(float_d00(be, VYRE_T_F16, ar, bc, 0, &bd), VYRE_F32_CANONICAL_NAN);
  bc[3] = 0x8001; /* inf * (-tiny) = -inf */
  ck_assert_uint_eq(float_d00(be, VYRE_T_F16, ar, bc, 0, &bd), 0xff800000u);
  ar[3] = h16(1.0f);
  /* A NaN C, and an infinite C with finite products. */
  ck_assert_uint_eq(float_d00(be, VYRE_T_F16, ar, bc, 0x7f812345u, &bd), VYRE_F32_CANONICAL_NAN);
  ck_assert_uint_eq(float_d00(be, VYRE_T_F16, ar, bc, 0xff800000u, &bd), 0xff800000u);
  be->vt->destroy(be);
}
END_TEST

/* Random f16 tiles of mixed magnitudes and signs against __float128:
 * every term is a multiple of 2^-48 below 2^37 (C: 2^-43 .. 2^21), so
 * quad precision holds the sum exactly and its conversion to float is
 * the one correct rounding. */
START_TEST(test_mma_float_random_vs_quad) {
  vyre_backend *be = tr_new_backend();
  uint16_t a[256], bm[256];
  float cf[256];
  uint64_t seed = 0x9e3779b97f4a7c15ull;
  for (int round = 0; round < 8; round++) {
    for (int e = 0; e < 256; e++) {
      seed = seed * 6364136223846793005ull + 1442695040888963407ull;
      a[e] = (uint16_t)((seed >> 20) & 0xffffu);
      bm[e] = (uint16_t)((seed >> 40) & 0xffffu);
      if ((a[e] & 0x7c00u) == 0x7c00u) a[e] &= 0xbfffu; /* no inf/NaN */
      if ((bm[e] & 0x7c00u) == 0x7c00u) bm[e] &= 0xbfffu;
      cf[e] = ldexpf((float)((int32_t)(seed >> 8) % 100000), (int)(seed % 24) - 37);
    }
    double bounds[256];
    mma_case m = {VYRE_T_F16, {a, 256, 0, 0, 16}, {bm, 256, 0, 0, 16}, {cf, 256, 0, 0, 16}, 0, 256, 0, 0, 16, 1, 0};
    vyre_outputs *out = mma_run(be, &m, bounds);
    for (uint32_t i = 0; i < 16; i++)
      for (uint32_t j = 0; j < 16; j++) {
        __float128 sum = cf[i * 16 + j];
        double S = fabs((double)cf[i * 16 + j]);
        for (uint32_t k = 0; k < 16; k++) {
          float x = fval(vyre_f16_to_f32(a[i * 16 + k])), y = fval(vyre_f16_to_f32(bm[k * 16 + j]));
          sum += (__float128)x * (__float128)y;
          S += fabs((double)x * (double)y);
        }
        uint32_t want = tr_fbits((float)sum), got = tr_u32_at(out, 0, i * 16 + j);
        ck_assert_msg(got == want,
                      "round %d D[%u][%u] = %a, want %a", round, i, j, (double)fval(got),
                      (double)fval(want));
        ck_assert_msg(fabs(bounds[i * 16 + j] - bound_of(S)) <= 1e-9 * bound_of(S),
                      "bound of D[%u][%u]: %a, want %a", i, j, bounds[i * 16 + j], bound_of(S));
      }
    be->vt->outputs_free(be, out);
  }
  be->vt->destroy(be);
}
END_TEST

/* Tiles live across a grid barrier, one set per subgroup of the grid. */
START_TEST(test_mma_grid_barrier) {
  vyre_backend *be = tr_new_backend();
  vyre_builder *b = vyre_builder_new(64, 1, 1);
  uint32_t D = vyre_b_buffer(b, "d", UINT32_MAX, VYRE_ACCESS_WRITE_ONLY, VYRE_T_I32, 4 * 256, 0);
  uint32_t acc = vyre_b_local(b, VYRE_T_MAT_ACC_I32);
  uint32_t g = vyre_b_gid(b, 0);
  uint32_t sg = vyre_b_bin(b, VYRE_OP_DIV, g, vyre_b_u32(b, 32));
  vyre_b_inst(b, VYRE_OP_MMA_FILL, VYRE_T_I32, 0, acc,
              vyre_b_cast(b, VYRE_T_I32, vyre_b_bin(b, VYRE_OP_ADD, sg, vyre_b_u32(b, 100))), 0, 0);
  vyre_b_barrier(b, VYRE_BARRIER_GRID);
  sg = vyre_b_bin(b, VYRE_OP_DIV, vyre_b_gid(b, 0), vyre_b_u32(b, 32)); /* values do not cross it */
  vyre_b_inst(b, VYRE_OP_MMA_STORE, VYRE_T_I32, 0, D, vyre_b_bin(b, VYRE_OP_MUL, sg, vyre_b_u32(b, 256)),
              vyre_b_u32(b, 16), acc);
  vyre_dispatch_options o = tr_opts();
  o.grid[0] = 2;
  vyre_outputs *out = tr_run_ok(be, b, NULL, 0, &o);
  for (uint32_t e = 0; e < 4 * 256; e++)
    ck_assert_msg(tr_u32_at(out, 0, e) == 100 + e / 256, "d[%u] = %u, want %u", e,
                  tr_u32_at(out, 0, e), 100 + e / 256);
  be->vt->outputs_free(be, out);
  be->vt->destroy(be);
}
END_TEST

/* ------------------------------------------------------------------ */
/* The bound side channel                                              */
/* ------------------------------------------------------------------ */
/* acc = 0; twice acc += ones(A) * ones(B); store acc to d; then lane 0
 * stores 5.0 to d[3] (a plain store resets its bound); i32 output q
 * takes an integer tile; d[256..263] are never written. */
START_TEST(test_mma_bound_side_channel) {
  vyre_backend *be = tr_new_backend();
  uint16_t ones[256];
  for (int e = 0; e < 256; e++) ones[e] = bf(1.0f);
  vyre_builder *b = vyre_builder_new(32, 1, 1);
  uint32_t A = vyre_b_buffer(b, "a", UINT32_MAX, VYRE_ACCESS_READ_ONLY, VYRE_T_BF16, 0, 0);
  uint32_t D = vyre_b_buffer(b, "d", UINT32_MAX, VYRE_ACCESS_WRITE_ONLY, VYRE_T_F32, 264, 0);
  uint32_t Q = vyre_b_buffer(b, "q", UINT32_MAX, VYRE_ACCESS_WRITE_ONLY, VYRE_T_I32, 256, 0);
  uint32_t la = vyre_b_local(b, VYRE_T_MAT_A_BF16), lb = vyre_b_local(b, VYRE_T_MAT_B_BF16);
  uint32_t acc = vyre_b_local(b, VYRE_T_MAT_ACC_F32), iacc = vyre_b_local(b, VYRE_T_MAT_ACC_I32);
  uint32_t z = vyre_b_u32(b, 0), s = vyre_b_u32(b, 16);
  vyre_b_inst(b, VYRE_OP_MMA_LOAD, VYRE_T_BF16, 0, la, A, z, s);
  vyre_b_inst(b, VYRE_OP_MMA_LOAD, VYRE_T_BF16, 0, lb, A, z, s);
  vyre_b_inst(b, VYRE_OP_MMA_FILL, VYRE_T_F32, 0, acc, vyre_b_f32(b, 0.0f), 0, 0);
  vyre_b_inst(b, VYRE_OP_MMA, VYRE_T_BF16, 0, acc, la, lb, acc);
  vyre_b_inst(b, VYRE_OP_MMA, VYRE_T_BF16, 0, acc, la, lb, acc);
  vyre_b_inst(b, VYRE_OP_MMA_STORE, VYRE_T_F32, 0, D, z, s, acc);
  vyre_b_inst(b, VYRE_OP_MMA_FILL, VYRE_T_I32, 0, iacc, vyre_b_i32(b, -9), 0, 0);
  vyre_b_inst(b, VYRE_OP_MMA_STORE, VYRE_T_I32, 0, Q, z, s, iacc);
  uint32_t lid = vyre_b_builtin(b, VYRE_OP_LOCAL_ID, 0);
  vyre_b_if(b, vyre_b_bin(b, VYRE_OP_EQ, lid, z));
  vyre_b_store(b, D, vyre_b_u32(b, 3), vyre_b_f32(b, 5.0f));
  vyre_b_end(b);
  vyre_input in[1] = {{ones, sizeof ones}};
  double bd[264], bq[256];
  for (int e = 0; e < 264; e++) bd[e] = 42.0;
  for (int e = 0; e < 256; e++) bq[e] = 42.0;
  double *arrays[2] = {bd, bq};
  ref_mma_bound mb = {{sizeof mb, REF_EXT_MMA_BOUND, NULL}, 2, 0, arrays};
  vyre_dispatch_options o = tr_opts();
  o.grid[0] = 1;
  o.ulp_budget = 1;
  o.next = &mb.head;
  void *bytes;
  size_t size;
  tr_encode(b, &bytes, &size);
  vyre_program_ref prog = VYRE_PROGRAM_BYTES(bytes, size);
  vyre_outputs *out = NULL;
  vyre_error err = VYRE_ERROR_INIT;
  ck_assert_int_eq(be->vt->dispatch(be, &prog, in, 1, &o, &out, NULL, &err), VYRE_OK);
  double b1 = 18.0 * (0x1p-22 * 16.0 + 0x1p-126);
  double b2 = b1 + 18.0 * (0x1p-22 * (16.0 + b1 + 16.0) + 0x1p-126);
  for (uint32_t e = 0; e < 264; e++) {
    double want = e < 256 && e != 3 ? b2 : -1.0;
    ck_assert_msg(bd[e] == want, "bound of d[%u] = %a, want %a", e, bd[e], want);
    if (e < 256 && e != 3) ck_assert_uint_eq(tr_u32_at(out, 0, e), tr_fbits(32.0f));
  }
  for (uint32_t e = 0; e < 256; e++) ck_assert_msg(bq[e] == -1.0, "i32 output q: -1 everywhere");
  /* dispatch_into writes the same; a NULL array is skipped. */
  static float dd[264];
  static int32_t qq[256];
  vyre_output_slot slots[2] = {{dd, sizeof dd, 0}, {qq, sizeof qq, 0}};
  double bd2[264];
  arrays[0] = NULL, arrays[1] = bd2;
  for (int e = 0; e < 264; e++) bd2[e] = 42.0;
  mb.output_count = 2;
  ck_assert_int_eq(be->vt->dispatch_into(be, &prog, in, 1, &o, slots, 2, NULL, &err), VYRE_OK);
  for (int e = 0; e < 256; e++) ck_assert_msg(bd2[e] == -1.0, "q through dispatch_into: -1");
  ck_assert_msg(bd2[256] == 42.0, "only q's 256 words are written");
  arrays[0] = bd2, arrays[1] = NULL;
  ck_assert_int_eq(be->vt->dispatch_into(be, &prog, in, 1, &o, slots, 2, NULL, &err), VYRE_OK);
  for (uint32_t e = 0; e < 264; e++)
    ck_assert_msg(bd2[e] == bd[e], "dispatch_into: bound of d[%u] = %a, want %a", e, bd2[e], bd[e]);
  free(bytes);
  ck_assert_msg(ref_mma_within(tr_fbits(32.0f + 0x1p-18f), tr_fbits(32.0f), b2),
                "one f32 ulp of 32 is within the bound");
  ck_assert_msg(!ref_mma_within(tr_fbits(32.0f + 0x1p-10f), tr_fbits(32.0f), b2),
                "2^-10 is not");
  ck_assert_msg(ref_mma_within(0x7fc00001u, VYRE_F32_CANONICAL_NAN, 0.0), "NaN matches NaN");
  ck_assert_msg(ref_mma_within(tr_fbits(1e30f), 0x7f800000u, INFINITY), "unconstrained");
  ck_assert_msg(ref_mma_within(VYRE_F32_CANONICAL_NAN, 0x7f800000u, INFINITY),
                "NaN too: overflowing partial sums of both signs meet");
  ck_assert_msg(!ref_mma_within(tr_fbits(1e30f), 0x7f800000u, 0.0), "inf must be equal");
  be->vt->outputs_free(be, out);
  be->vt->destroy(be);
}
END_TEST

/* An unconstrained accumulator (S > 2^127) stays unconstrained through a
 * later mma, even one whose terms are infinite: a backend may hold a
 * finite value, an infinity or a NaN there, so the reference's "that
 * infinity exactly" would hold it to a value it need not have. */
START_TEST(test_mma_unconstrained_chain) {
  vyre_backend *be = tr_new_backend();
  uint16_t in_a[256], in_b[256];
  for (int e = 0; e < 256; e++) in_a[e] = bf(0x1p120f), in_b[e] = bf(0x1p4f);
  vyre_builder *b = vyre_builder_new(32, 1, 1);
  uint32_t A = vyre_b_buffer(b, "a", UINT32_MAX, VYRE_ACCESS_READ_ONLY, VYRE_T_BF16, 0, 0);
  uint32_t B = vyre_b_buffer(b, "b", UINT32_MAX, VYRE_ACCESS_READ_ONLY, VYRE_T_BF16, 0, 0);
  uint32_t D = vyre_b_buffer(b, "d", UINT32_MAX, VYRE_ACCESS_WRITE_ONLY, VYRE_T_F32, 512, 0);
  uint32_t la = vyre_b_local(b, VYRE_T_MAT_A_BF16), lb = vyre_b_local(b, VYRE_T_MAT_B_BF16);
  uint32_t acc = vyre_b_local(b, VYRE_T_MAT_ACC_F32);
  uint32_t z = vyre_b_u32(b, 0), s = vyre_b_u32(b, 16);
  vyre_b_mma_load(b, VYRE_LAYOUT_ROW, la, A, z, s);
  vyre_b_mma_load(b, VYRE_LAYOUT_ROW, lb, B, z, s);
  vyre_b_mma_fill(b, acc, vyre_b_f32(b, 0.0f));
  vyre_b_mma(b, acc, la, lb, acc); /* 16 * 2^124 = 2^128: S > 2^127 */
  vyre_b_mma_store(b, VYRE_LAYOUT_ROW, D, z, s, acc);
  vyre_b_mma_load(b, VYRE_LAYOUT_ROW, lb, B, vyre_b_u32(b, 256), s); /* past the end: zeros... */
  vyre_b_mma(b, acc, la, lb, acc); /* ... so only C counts: still unconstrained */
  vyre_b_mma_store(b, VYRE_LAYOUT_ROW, D, vyre_b_u32(b, 256), s, acc);
  vyre_input in[2] = {{in_a, sizeof in_a}, {in_b, sizeof in_b}};
  double bd[512];
  double *arrays[1] = {bd};
  ref_mma_bound mb = {{sizeof mb, REF_EXT_MMA_BOUND, NULL}, 1, 0, arrays};
  vyre_dispatch_options o = tr_opts();
  o.grid[0] = 1;
  o.ulp_budget = 1;
  o.next = &mb.head;
  void *bytes;
  size_t size;
  tr_encode(b, &bytes, &size);
  vyre_program_ref prog = VYRE_PROGRAM_BYTES(bytes, size);
  vyre_outputs *out = NULL;
  vyre_error err = VYRE_ERROR_INIT;
  ck_assert_int_eq(be->vt->dispatch(be, &prog, in, 2, &o, &out, NULL, &err), VYRE_OK);
  for (uint32_t e = 0; e < 512; e++) {
    ck_assert_msg(isinf(bd[e]), "bound of d[%u] = %a, want +inf", e, bd[e]);
    ck_assert_uint_eq(tr_u32_at(out, 0, e), 0x7f800000u); /* the reference's own value */
  }
  ck_assert_msg(ref_mma_within(VYRE_F32_CANONICAL_NAN, 0x7f800000u, bd[300]), "any value");
  ck_assert_msg(ref_mma_within(tr_fbits(-1.0f), 0x7f800000u, bd[300]), "any value");
  free(bytes);
  be->vt->outputs_free(be, out);
  be->vt->destroy(be);
}
END_TEST

/* The chain is checked like any other: two of them, or one too short. */
START_TEST(test_mma_bound_chain_errors) {
  vyre_backend *be = tr_new_backend();
  double *none = NULL;
  ref_mma_bound m2 = {{sizeof m2, REF_EXT_MMA_BOUND, NULL}, 1, 0, &none};
  ref_mma_bound m1 = {{sizeof m1, REF_EXT_MMA_BOUND, &m2.head}, 1, 0, &none};
  float x[4] = {1, 2, 3, 4}, y[4] = {0};
  vyre_input in[2] = {{x, sizeof x}, {y, sizeof y}};
  vyre_dispatch_options o = tr_opts();
  o.next = &m1.head;
  vyre_outputs *out = NULL;
  vyre_error err = VYRE_ERROR_INIT;
  ck_assert_int_eq(tr_dispatch(be, tr_saxpy_program(2.0f), in, 2, &o, &out, &err), VYRE_INVALID_ARGUMENT);
  tr_assert_fix(&err);
  m1.head.next = NULL;
  m1.head.struct_size = 16;
  ck_assert_int_eq(tr_dispatch(be, tr_saxpy_program(2.0f), in, 2, &o, &out, &err), VYRE_INVALID_ARGUMENT);
  /* A well-formed one on a program without MMA: every element -1. */
  double bd[4] = {7, 7, 7, 7}, *arr = bd;
  m1.head.struct_size = sizeof m1;
  m1.bound = &arr;
  out = tr_run_ok(be, tr_saxpy_program(2.0f), in, 2, &o);
  for (int e = 0; e < 4; e++) ck_assert_msg(bd[e] == -1.0, "saxpy's y[%d]: plain stores", e);
  be->vt->outputs_free(be, out);
  be->vt->destroy(be);
}
END_TEST

/* ------------------------------------------------------------------ */
/* Strict mode, the workgroup rule, registration                       */
/* ------------------------------------------------------------------ */
START_TEST(test_mma_strict_and_workgroup) {
  vyre_backend *be = tr_new_backend();
  static uint16_t h[256];
  static uint8_t i8[512];
  mma_case m = {VYRE_T_F16, {h, 256, 0, 0, 16}, {h, 256, 0, 0, 16}, {NULL, 0, 0, 0, 0}, 0, 256, 0, 0, 16, 0, 0};
  vyre_input in[2] = {{h, sizeof h}, {h, sizeof h}};
  vyre_dispatch_options o = tr_opts();
  vyre_outputs *out = NULL;
  vyre_error err = VYRE_ERROR_INIT;
  static const uint32_t floats[] = {VYRE_T_F16, VYRE_T_BF16};
  for (int t = 0; t < 2; t++) {
    m.comp = floats[t];
    ck_assert_int_eq(tr_dispatch(be, mma_program(&m), in, 2, &o, &out, &err), VYRE_UNSUPPORTED);
    ck_assert_msg(strstr(err.message, "unsupported under strict") &&
                      strstr(err.message, "Fix: pass a ulp budget (any non-zero value accepts the MMA error bound)"),
                  "strict refusal wording: %s", err.message);
  }
  /* Integer MMA is exact: strict takes it. */
  m = (mma_case){VYRE_T_I8, {i8, 512, 0, 0, 32}, {i8, 512, 0, 0, 16}, {NULL, 0, 0, 0, 0}, 0, 256, 0, 0, 16, 0, 0};
  vyre_input in8[2] = {{i8, sizeof i8}, {i8, sizeof i8}};
  o.grid[0] = 1;
  ck_assert_int_eq(tr_dispatch(be, mma_program(&m), in8, 2, &o, &out, &err), VYRE_OK);
  be->vt->outputs_free(be, out);
  out = NULL;
  /* A workgroup override of 48 (or 16 x 3) invocations: refused; 64 x 1 and 16 x 2 run. */
  static const uint32_t wgs[4][3] = {{48, 1, 1}, {16, 3, 1}, {64, 1, 1}, {16, 2, 1}};
  for (int w = 0; w < 4; w++) {
    memcpy(o.workgroup, wgs[w], sizeof o.workgroup);
    vyre_status st = tr_dispatch(be, mma_program(&m), in8, 2, &o, &out, &err);
    ck_assert_msg(st == (w < 2 ? VYRE_INVALID_ARGUMENT : VYRE_OK), "workgroup %u x %u: %s %s",
                  wgs[w][0], wgs[w][1], vyre_status_name(st), err.message);
    if (w < 2) {
      tr_assert_fix(&err);
      ck_assert_msg(strstr(err.message, "multiple of 32") != NULL, "says why: %s", err.message);
    }
    if (out) be->vt->outputs_free(be, out);
    out = NULL;
  }
  be->vt->destroy(be);
}
END_TEST

START_TEST(test_mma_registration) {
  const vyre_registration *r = tr_reg;
  ck_assert_msg(r->capabilities & VYRE_CAP_TENSOR_CORES, "the reference has tensor_cores");
  static const struct {
    uint16_t op;
    uint32_t mask;
  } want[] = {
      {VYRE_OP_MMA_FILL, VYRE_TBIT(VYRE_T_F32) | VYRE_TBIT(VYRE_T_I32)},
      {VYRE_OP_MMA_LOAD, VYRE_TBIT(VYRE_T_F16) | VYRE_TBIT(VYRE_T_BF16) | VYRE_TBIT(VYRE_T_I8) |
                             VYRE_TBIT(VYRE_T_U8) | VYRE_TBIT(VYRE_T_F32) | VYRE_TBIT(VYRE_T_I32)},
      {VYRE_OP_MMA, VYRE_TBIT(VYRE_T_F16) | VYRE_TBIT(VYRE_T_BF16) | VYRE_TBIT(VYRE_T_I8) |
                        VYRE_TBIT(VYRE_T_U8)},
      {VYRE_OP_MMA_STORE, VYRE_TBIT(VYRE_T_F32) | VYRE_TBIT(VYRE_T_I32)},
  };
  for (int w = 0; w < 4; w++) {
    int at = -1;
    for (uint32_t k = 0; k < r->op_count; k++)
      if (r->ops[k] == want[w].op) at = (int)k;
    ck_assert_msg(at >= 0, "op %u is claimed", want[w].op);
    uint32_t mask = r->op_types && r->op_types[at] ? r->op_types[at] : vyre_op_lookup(want[w].op)->type_mask;
    ck_assert_msg(mask == want[w].mask, "op %u types 0x%x, want 0x%x", want[w].op, mask, want[w].mask);
  }
  ck_assert_msg(!(r->storage_types & VYRE_TM_MATRIX), "matrix types are not storage types");
}
END_TEST

void tr_add_mma_tcases(Suite *s) {
  TCase *tc = tcase_create("mma");
  tcase_set_timeout(tc, 60);
  tcase_add_test(tc, test_mma_registration);
  tcase_add_test(tc, test_mma_unconstrained_chain);
  tcase_add_test(tc, test_mma_layouts_every_type);
  tcase_add_test(tc, test_mma_out_of_range);
  tcase_add_test(tc, test_mma_lane0_subgroups_k_loop);
  tcase_add_test(tc, test_mma_workgroup_memory);
  tcase_add_test(tc, test_mma_integer_edges);
  tcase_add_test(tc, test_mma_float_rounding);
  tcase_add_test(tc, test_mma_float_subnormals_and_range);
  tcase_add_test(tc, test_mma_float_specials);
  tcase_add_test(tc, test_mma_raw_buffers);
  tcase_add_test(tc, test_mma_float_random_vs_quad);
  tcase_add_test(tc, test_mma_grid_barrier);
  suite_add_tcase(s, tc);
  tc = tcase_create("mma_errors");
  tcase_add_test(tc, test_mma_bound_side_channel);
  tcase_add_test(tc, test_mma_bound_chain_errors);
  tcase_add_test(tc, test_mma_strict_and_workgroup);
  suite_add_tcase(s, tc);
}
