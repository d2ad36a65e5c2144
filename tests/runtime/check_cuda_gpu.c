/* check_cuda_gpu.c -- the CUDA plugin on a real GPU, bit for bit against the reference plugin; SKIP (77) without a device. */
#include <check.h>
#include <dlfcn.h>
#include <pthread.h>
#include <math.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "vyre/vyre.h"
#include "vyre/vyre_cuda.h"
#include "vyre/vyre_program.h"
#include "vyre/vyre_support.h"

/*
 * Run on the GPU machine from the build tree:
 *   VYRE_BUILD_DIR=$PWD tests/runtime/check_cuda_gpu
 * It loads plugin/runtime/.libs/libvyre-cuda.so and host-stub/ref/.libs/libvyre-ref.so
 * through their own vyre_plugin_entry, runs every program on both and
 * compares the outputs byte for byte.  CUDA does not survive fork, so the
 * suite runs without Check's fork mode whatever CK_FORK says.
 */

static const vyre_registration *cuda_reg, *ref_reg;
static vyre_backend *cuda, *ref;
static int n_programs, n_features, n_bytes_mb;
static char cache_dir[256];

/* ------------------------------------------------------------------ */
/* Helpers                                                             */
/* ------------------------------------------------------------------ */
typedef struct prog {
  void *bytes;
  size_t size;
} prog;

static prog finish(vyre_builder *b, const char *what) {
  prog p = {NULL, 0};
  vyre_error err = VYRE_ERROR_INIT;
  vyre_status st = vyre_builder_finish(b, &p.bytes, &p.size, &err);
  vyre_builder_free(b);
  ck_assert_msg(st == VYRE_OK, "%s builds: %s", what, err.message);
  vyre_program *dec = NULL;
  st = vyre_program_decode(p.bytes, p.size, &dec, &err);
  ck_assert_msg(st == VYRE_OK, "%s validates: %s", what, err.message);
  vyre_program_free(dec);
  return p;
}

static vyre_program_ref ref_of(const prog *p) {
  vyre_program_ref r = VYRE_PROGRAM_BYTES(p->bytes, p->size);
  return r;
}

static uint64_t metric(vyre_backend *b, const char *name) {
  vyre_metric m[128];
  uint32_t n = 0;
  vyre_error err = VYRE_ERROR_INIT;
  ck_assert_int_eq(b->vt->metrics(b, m, 128, &n, &err), VYRE_OK);
  for (uint32_t i = 0; i < n && i < 128; i++)
    if (strcmp(m[i].name, name) == 0) return m[i].value;
  ck_abort_msg("metric %s is reported", name);
  return 0;
}

static void same_outputs(const char *what, const vyre_outputs *a, const vyre_outputs *b) {
  ck_assert_msg(a->count == b->count, "%s: %u outputs from the reference, %u from CUDA", what,
                a->count, b->count);
  for (uint32_t i = 0; i < a->count; i++) {
    ck_assert_msg(a->items[i].size == b->items[i].size,
                  "%s: output %u is %llu bytes on the reference, %llu on CUDA", what, i,
                  (unsigned long long)a->items[i].size, (unsigned long long)b->items[i].size);
    if (memcmp(a->items[i].data, b->items[i].data, (size_t)a->items[i].size) == 0) continue;
    const uint8_t *x = a->items[i].data, *y = b->items[i].data;
    uint64_t k = 0;
    while (x[k] == y[k]) k++;
    uint64_t w = k / 4 * 4;
    uint32_t xv = 0, yv = 0;
    memcpy(&xv, x + w, a->items[i].size - w >= 4 ? 4 : (size_t)(a->items[i].size - w));
    memcpy(&yv, y + w, a->items[i].size - w >= 4 ? 4 : (size_t)(a->items[i].size - w));
    ck_abort_msg("%s: output %u differs first at byte %llu (word %llu): reference 0x%08x, CUDA "
                 "0x%08x",
                 what, i, (unsigned long long)k, (unsigned long long)(k / 4), xv, yv);
  }
}

static uint64_t input_bytes(const vyre_input *in, uint32_t n) {
  uint64_t t = 0;
  for (uint32_t i = 0; i < n; i++) t += in[i].size;
  return t;
}

/* Run on both backends; both must succeed with identical outputs. */
static void compare(const char *what, const prog *p, const vyre_input *in, uint32_t nin,
                    const vyre_dispatch_options *o) {
  vyre_program_ref r = ref_of(p);
  vyre_outputs *a = NULL, *b = NULL;
  vyre_error ea = VYRE_ERROR_INIT, eb = VYRE_ERROR_INIT;
  vyre_status sa = ref->vt->dispatch(ref, &r, in, nin, o, &a, NULL, &ea);
  ck_assert_msg(sa == VYRE_OK, "%s: the reference fails: %s", what, ea.message);
  vyre_status sb = cuda->vt->dispatch(cuda, &r, in, nin, o, &b, NULL, &eb);
  ck_assert_msg(sb == VYRE_OK, "%s: CUDA fails: %s", what, eb.message);
  same_outputs(what, a, b);
  ref->vt->outputs_free(ref, a);
  cuda->vt->outputs_free(cuda, b);
  n_programs++;
  n_bytes_mb += (int)(input_bytes(in, nin) >> 20);
}

static uint32_t rng_state = 0x12345678u;
static uint32_t rnd(void) {
  rng_state ^= rng_state << 13;
  rng_state ^= rng_state >> 17;
  rng_state ^= rng_state << 5;
  return rng_state;
}

/* f32 bit patterns worth testing, then random ones. */
static const uint32_t f32_special[] = {
    0x00000000, 0x80000000, 0x3f800000, 0xbf800000, 0x7f800000, 0xff800000, 0x7fc00000,
    0xffc00000, 0x7fc00001, 0xffffffff, 0x7fa00000, 0x00000001, 0x807fffff, 0x00800000,
    0x80800000, 0x7f7fffff, 0xff7fffff, 0x3f000000, 0x3fc00000, 0x40200000, 0xbfc00000,
    0x4b000001, 0x4effffff, 0xcf000000, 0x4f800000, 0xdf000000, 0x5f800000, 0x34000000,
    0x3effffff, 0x3f000001, 0x40400000, 0x40490fdb};

static void fill_f32(uint32_t *v, uint32_t n, uint32_t salt) {
  uint32_t ns = sizeof f32_special / sizeof f32_special[0];
  for (uint32_t i = 0; i < n; i++) {
    if (i < ns * ns) {
      v[i] = salt ? f32_special[i % ns] : f32_special[(i / ns) % ns];
    } else {
      uint32_t r = rnd();
      /* Mostly moderate magnitudes, some anything-goes. */
      v[i] = (r & 7) ? (r & 0x807fffffu) | ((0x70u + (r >> 24) % 32u) << 23) : r;
    }
  }
}

static const uint32_t u32_special[] = {0,          1,          2,          3,          31,
                                       32,         33,         63,         64,         0x7fffffff,
                                       0x80000000, 0x80000001, 0xfffffffe, 0xffffffff, 0x10000,
                                       0xffff,     12345,      0xdeadbeef};

static void fill_u32(uint32_t *v, uint32_t n, int second) {
  uint32_t ns = sizeof u32_special / sizeof u32_special[0];
  for (uint32_t i = 0; i < n; i++) {
    if (i < ns * ns) v[i] = second ? u32_special[i % ns] : u32_special[(i / ns) % ns];
    else v[i] = (rnd() & 3) ? rnd() : rnd() % 70;
  }
}

/* ------------------------------------------------------------------ */
/* Programs                                                            */
/* ------------------------------------------------------------------ */
/* f32 elementwise math: one output per op. */
static prog prog_f32_math(uint32_t n) {
  vyre_builder *b = vyre_builder_new(128, 1, 1);
  uint32_t A = vyre_b_buffer(b, "a", UINT32_MAX, VYRE_ACCESS_READ_ONLY, VYRE_T_F32, 0, 0);
  uint32_t B = vyre_b_buffer(b, "b", UINT32_MAX, VYRE_ACCESS_READ_ONLY, VYRE_T_F32, 0, 0);
  static const vyre_op bin[] = {VYRE_OP_ADD, VYRE_OP_SUB, VYRE_OP_MUL, VYRE_OP_DIV,
                                VYRE_OP_MIN, VYRE_OP_MAX, VYRE_OP_ABSDIFF};
  static const vyre_op un[] = {VYRE_OP_SQRT, VYRE_OP_FLOOR, VYRE_OP_CEIL, VYRE_OP_ROUND,
                               VYRE_OP_TRUNC, VYRE_OP_ABS, VYRE_OP_NEG, VYRE_OP_SIGN, VYRE_OP_RCP};
  uint32_t out[32], no = 0;
  char name[16];
  for (size_t i = 0; i < sizeof bin / sizeof bin[0] + sizeof un / sizeof un[0] + 1; i++) {
    snprintf(name, sizeof name, "o%zu", i);
    out[no++] = vyre_b_buffer(b, name, UINT32_MAX, VYRE_ACCESS_READ_WRITE, VYRE_T_F32, n,
                              VYRE_BUF_OUTPUT);
  }
  uint32_t oi = vyre_b_buffer(b, "toi", UINT32_MAX, VYRE_ACCESS_READ_WRITE, VYRE_T_I32, n, VYRE_BUF_OUTPUT);
  uint32_t ou = vyre_b_buffer(b, "tou", UINT32_MAX, VYRE_ACCESS_READ_WRITE, VYRE_T_U32, n, VYRE_BUF_OUTPUT);
  uint32_t oc = vyre_b_buffer(b, "cmp", UINT32_MAX, VYRE_ACCESS_READ_WRITE, VYRE_T_U32, n, VYRE_BUF_OUTPUT);
  uint32_t g = vyre_b_gid(b, 0);
  uint32_t x = vyre_b_load(b, A, g), y = vyre_b_load(b, B, g);
  uint32_t k = 0;
  for (size_t i = 0; i < sizeof bin / sizeof bin[0]; i++)
    vyre_b_store(b, out[k++], g, vyre_b_bin(b, bin[i], x, y));
  for (size_t i = 0; i < sizeof un / sizeof un[0]; i++)
    vyre_b_store(b, out[k++], g, vyre_b_un(b, un[i], x));
  vyre_b_store(b, out[k++], g, vyre_b_fma(b, x, y, x));
  vyre_b_store(b, oi, g, vyre_b_cast(b, VYRE_T_I32, x));
  vyre_b_store(b, ou, g, vyre_b_cast(b, VYRE_T_U32, y));
  uint32_t lt = vyre_b_bin(b, VYRE_OP_LT, x, y), ne = vyre_b_bin(b, VYRE_OP_NE, x, y);
  uint32_t nan = vyre_b_un(b, VYRE_OP_ISNAN, x), inf = vyre_b_un(b, VYRE_OP_ISINF, y);
  uint32_t bits = vyre_b_bin(
      b, VYRE_OP_OR,
      vyre_b_bin(b, VYRE_OP_OR, vyre_b_cast(b, VYRE_T_U32, lt),
                 vyre_b_bin(b, VYRE_OP_SHL, vyre_b_cast(b, VYRE_T_U32, ne), vyre_b_u32(b, 1))),
      vyre_b_bin(b, VYRE_OP_OR,
                 vyre_b_bin(b, VYRE_OP_SHL, vyre_b_cast(b, VYRE_T_U32, nan), vyre_b_u32(b, 2)),
                 vyre_b_bin(b, VYRE_OP_SHL, vyre_b_cast(b, VYRE_T_U32, inf), vyre_b_u32(b, 3))));
  vyre_b_store(b, oc, g, bits);
  return finish(b, "f32 math");
}

/* u32 and i32 integer ops with edge values. */
static prog prog_int_math(uint32_t n) {
  vyre_builder *b = vyre_builder_new(64, 1, 1);
  uint32_t X = vyre_b_buffer(b, "x", UINT32_MAX, VYRE_ACCESS_READ_ONLY, VYRE_T_U32, 0, 0);
  uint32_t Y = vyre_b_buffer(b, "y", UINT32_MAX, VYRE_ACCESS_READ_ONLY, VYRE_T_U32, 0, 0);
  static const vyre_op ubin[] = {VYRE_OP_DIV,     VYRE_OP_MOD,     VYRE_OP_SHL,  VYRE_OP_SHR,
                                 VYRE_OP_ROTL,    VYRE_OP_ROTR,    VYRE_OP_MULHI, VYRE_OP_SAT_ADD,
                                 VYRE_OP_SAT_SUB, VYRE_OP_SAT_MUL, VYRE_OP_ABSDIFF, VYRE_OP_MUL,
                                 VYRE_OP_MIN};
  static const vyre_op uun[] = {VYRE_OP_POPCOUNT, VYRE_OP_CLZ, VYRE_OP_CTZ, VYRE_OP_REVERSEBITS,
                                VYRE_OP_UNPACK4_LOW, VYRE_OP_UNPACK8_HIGH};
  static const vyre_op ibin[] = {VYRE_OP_DIV, VYRE_OP_MOD, VYRE_OP_SHR, VYRE_OP_MULHI,
                                 VYRE_OP_MIN, VYRE_OP_SAT_ADD, VYRE_OP_SAT_MUL, VYRE_OP_ABSDIFF};
  static const vyre_op iun[] = {VYRE_OP_ABS, VYRE_OP_SIGN, VYRE_OP_NEG, VYRE_OP_CLZ};
  size_t nu = sizeof ubin / sizeof ubin[0] + sizeof uun / sizeof uun[0];
  size_t ni = sizeof ibin / sizeof ibin[0] + sizeof iun / sizeof iun[0];
  uint32_t out[64];
  char name[16];
  for (size_t i = 0; i < nu + ni; i++) {
    snprintf(name, sizeof name, "o%zu", i);
    out[i] = vyre_b_buffer(b, name, UINT32_MAX, VYRE_ACCESS_READ_WRITE,
                           i < nu ? VYRE_T_U32 : VYRE_T_I32, n, VYRE_BUF_OUTPUT);
  }
  uint32_t g = vyre_b_gid(b, 0);
  uint32_t x = vyre_b_load(b, X, g), y = vyre_b_load(b, Y, g);
  uint32_t sx = vyre_b_cast(b, VYRE_T_I32, x), sy = vyre_b_cast(b, VYRE_T_I32, y);
  size_t k = 0;
  for (size_t i = 0; i < sizeof ubin / sizeof ubin[0]; i++)
    vyre_b_store(b, out[k++], g, vyre_b_bin(b, ubin[i], x, y));
  for (size_t i = 0; i < sizeof uun / sizeof uun[0]; i++)
    vyre_b_store(b, out[k++], g, vyre_b_un(b, uun[i], x));
  for (size_t i = 0; i < sizeof ibin / sizeof ibin[0]; i++)
    vyre_b_store(b, out[k++], g, vyre_b_bin(b, ibin[i], sx, sy));
  for (size_t i = 0; i < sizeof iun / sizeof iun[0]; i++)
    vyre_b_store(b, out[k++], g, vyre_b_un(b, iun[i], sx));
  return finish(b, "integer math");
}

/* y = a * x + y (mul then add: two roundings), a from a uniform buffer. */
static prog prog_saxpy(void) {
  vyre_builder *b = vyre_builder_new(256, 1, 1);
  uint32_t A = vyre_b_buffer(b, "a", UINT32_MAX, VYRE_ACCESS_UNIFORM, VYRE_T_F32, 1, 0);
  uint32_t X = vyre_b_buffer(b, "x", UINT32_MAX, VYRE_ACCESS_READ_ONLY, VYRE_T_F32, 0, 0);
  uint32_t Y = vyre_b_buffer(b, "y", UINT32_MAX, VYRE_ACCESS_READ_WRITE, VYRE_T_F32, 0, 0);
  uint32_t g = vyre_b_gid(b, 0);
  uint32_t a = vyre_b_load(b, A, vyre_b_u32(b, 0));
  uint32_t ax = vyre_b_bin(b, VYRE_OP_MUL, a, vyre_b_load(b, X, g));
  vyre_b_store(b, Y, g, vyre_b_bin(b, VYRE_OP_ADD, ax, vyre_b_load(b, Y, g)));
  return finish(b, "saxpy");
}

/* 256-bin histogram with atomics. */
static prog prog_histogram(void) {
  vyre_builder *b = vyre_builder_new(256, 1, 1);
  uint32_t IN = vyre_b_buffer(b, "in", UINT32_MAX, VYRE_ACCESS_READ_ONLY, VYRE_T_U32, 0, 0);
  uint32_t H = vyre_b_buffer(b, "hist", UINT32_MAX, VYRE_ACCESS_READ_WRITE, VYRE_T_U32, 256,
                             VYRE_BUF_OUTPUT);
  uint32_t g = vyre_b_gid(b, 0);
  uint32_t v = vyre_b_load(b, IN, g);
  uint32_t bin = vyre_b_bin(b, VYRE_OP_AND, v, vyre_b_u32(b, 255));
  uint32_t inb = vyre_b_bin(b, VYRE_OP_LT, g, vyre_b_buflen(b, IN));
  vyre_b_if(b, inb);
  vyre_b_atomic(b, VYRE_OP_ATOMIC_ADD, H, bin, vyre_b_u32(b, 1), VYRE_ORDER_RELAXED);
  vyre_b_end(b);
  return finish(b, "histogram");
}

/* Workgroup-memory tree reduction with barriers; one sum per workgroup. */
static prog prog_block_reduce(uint32_t wg, uint32_t blocks) {
  vyre_builder *b = vyre_builder_new(wg, 1, 1);
  uint32_t IN = vyre_b_buffer(b, "in", UINT32_MAX, VYRE_ACCESS_READ_ONLY, VYRE_T_U32, 0, 0);
  uint32_t OUT = vyre_b_buffer(b, "out", UINT32_MAX, VYRE_ACCESS_READ_WRITE, VYRE_T_U32, blocks,
                               VYRE_BUF_OUTPUT);
  uint32_t SH = vyre_b_buffer(b, "sh", 0, VYRE_ACCESS_WORKGROUP, VYRE_T_U32, wg, 0);
  uint32_t g = vyre_b_gid(b, 0);
  uint32_t lid = vyre_b_builtin(b, VYRE_OP_LOCAL_ID, 0);
  vyre_b_store(b, SH, lid, vyre_b_load(b, IN, g));
  vyre_b_barrier(b, VYRE_BARRIER_WORKGROUP);
  uint32_t steps = 0;
  while ((1u << steps) < wg) steps++;
  uint32_t k = vyre_b_local(b, VYRE_T_U32);
  vyre_b_loop(b, k, vyre_b_u32(b, 0), vyre_b_u32(b, steps));
  uint32_t stride = vyre_b_bin(b, VYRE_OP_SHR, vyre_b_u32(b, wg / 2), vyre_b_get(b, k));
  uint32_t l2 = vyre_b_builtin(b, VYRE_OP_LOCAL_ID, 0);
  vyre_b_if(b, vyre_b_bin(b, VYRE_OP_LT, l2, stride));
  uint32_t s = vyre_b_bin(b, VYRE_OP_ADD, vyre_b_load(b, SH, l2),
                          vyre_b_load(b, SH, vyre_b_bin(b, VYRE_OP_ADD, l2, stride)));
  vyre_b_store(b, SH, l2, s);
  vyre_b_end(b);
  vyre_b_barrier(b, VYRE_BARRIER_WORKGROUP);
  vyre_b_end(b);
  uint32_t l3 = vyre_b_builtin(b, VYRE_OP_LOCAL_ID, 0);
  vyre_b_if(b, vyre_b_bin(b, VYRE_OP_EQ, l3, vyre_b_u32(b, 0)));
  vyre_b_store(b, OUT, vyre_b_builtin(b, VYRE_OP_WORKGROUP_ID, 0), vyre_b_load(b, SH, l3));
  vyre_b_end(b);
  return finish(b, "block reduce");
}

/* Subgroup ballot, shuffle and reductions. */
static prog prog_subgroup(uint32_t wg, uint32_t n) {
  vyre_builder *b = vyre_builder_new(wg, 1, 1);
  uint32_t IN = vyre_b_buffer(b, "in", UINT32_MAX, VYRE_ACCESS_READ_ONLY, VYRE_T_U32, 0, 0);
  uint32_t F = vyre_b_buffer(b, "f", UINT32_MAX, VYRE_ACCESS_READ_ONLY, VYRE_T_F32, 0, 0);
  uint32_t out[8];
  char name[8];
  for (int i = 0; i < 8; i++) {
    snprintf(name, sizeof name, "o%d", i);
    out[i] = vyre_b_buffer(b, name, UINT32_MAX, VYRE_ACCESS_READ_WRITE,
                           i == 7 ? VYRE_T_F32 : VYRE_T_U32, n, VYRE_BUF_OUTPUT);
  }
  uint32_t g = vyre_b_gid(b, 0);
  uint32_t v = vyre_b_load(b, IN, g), f = vyre_b_load(b, F, g);
  uint32_t lane = vyre_b_builtin(b, VYRE_OP_SUBGROUP_LANE, 0);
  uint32_t odd = vyre_b_bin(b, VYRE_OP_NE, vyre_b_bin(b, VYRE_OP_AND, v, vyre_b_u32(b, 1)),
                            vyre_b_u32(b, 0));
  vyre_b_store(b, out[0], g, vyre_b_ballot(b, odd));
  uint32_t src = vyre_b_bin(b, VYRE_OP_ADD, lane, vyre_b_u32(b, 5));
  vyre_b_store(b, out[1], g, vyre_b_shuffle(b, v, src));
  vyre_b_store(b, out[2], g, vyre_b_reduce(b, VYRE_REDUCE_ADD, v));
  vyre_b_store(b, out[3], g, vyre_b_reduce(b, VYRE_REDUCE_MIN, v));
  vyre_b_store(b, out[4], g, vyre_b_reduce(b, VYRE_REDUCE_MAX, v));
  vyre_b_store(b, out[5], g, vyre_b_reduce(b, VYRE_REDUCE_XOR, v));
  vyre_b_store(b, out[6], g, vyre_b_bin(b, VYRE_OP_ADD, lane,
                                         vyre_b_builtin(b, VYRE_OP_SUBGROUP_SIZE, 0)));
  vyre_b_store(b, out[7], g, vyre_b_reduce(b, VYRE_REDUCE_ADD, f));
  return finish(b, "subgroup");
}

/* Narrow storage types: load (widen), compute, store (narrow). */
static prog prog_storage(uint32_t n) {
  vyre_builder *b = vyre_builder_new(64, 1, 1);
  uint32_t H = vyre_b_buffer(b, "h", UINT32_MAX, VYRE_ACCESS_READ_ONLY, VYRE_T_F16, 0, 0);
  uint32_t BF = vyre_b_buffer(b, "bf", UINT32_MAX, VYRE_ACCESS_READ_ONLY, VYRE_T_BF16, 0, 0);
  uint32_t U8 = vyre_b_buffer(b, "u8", UINT32_MAX, VYRE_ACCESS_READ_ONLY, VYRE_T_U8, 0, 0);
  uint32_t I16 = vyre_b_buffer(b, "i16", UINT32_MAX, VYRE_ACCESS_READ_ONLY, VYRE_T_I16, 0, 0);
  uint32_t oh = vyre_b_buffer(b, "oh", UINT32_MAX, VYRE_ACCESS_READ_WRITE, VYRE_T_F16, n, VYRE_BUF_OUTPUT);
  uint32_t ob = vyre_b_buffer(b, "ob", UINT32_MAX, VYRE_ACCESS_READ_WRITE, VYRE_T_BF16, n, VYRE_BUF_OUTPUT);
  uint32_t ou = vyre_b_buffer(b, "ou", UINT32_MAX, VYRE_ACCESS_READ_WRITE, VYRE_T_U8, n, VYRE_BUF_OUTPUT);
  uint32_t oi = vyre_b_buffer(b, "oi", UINT32_MAX, VYRE_ACCESS_READ_WRITE, VYRE_T_I16, n, VYRE_BUF_OUTPUT);
  uint32_t of = vyre_b_buffer(b, "of", UINT32_MAX, VYRE_ACCESS_READ_WRITE, VYRE_T_F32, n, VYRE_BUF_OUTPUT);
  uint32_t g = vyre_b_gid(b, 0);
  uint32_t h = vyre_b_load(b, H, g), bf = vyre_b_load(b, BF, g);
  uint32_t two = vyre_b_f32(b, 2.0f), half = vyre_b_f32(b, 0.5f);
  vyre_b_store(b, oh, g, vyre_b_bin(b, VYRE_OP_MUL, h, two));
  vyre_b_store(b, ob, g, vyre_b_bin(b, VYRE_OP_ADD, bf, half));
  vyre_b_store(b, ou, g, vyre_b_bin(b, VYRE_OP_ADD, vyre_b_load(b, U8, g), vyre_b_u32(b, 200)));
  vyre_b_store(b, oi, g, vyre_b_bin(b, VYRE_OP_MUL, vyre_b_load(b, I16, g), vyre_b_i32(b, -3)));
  vyre_b_store(b, of, g, vyre_b_bin(b, VYRE_OP_ADD, h, bf));
  return finish(b, "storage types");
}

/* Out-of-bounds loads, stores and atomics. */
static prog prog_oob(void) {
  vyre_builder *b = vyre_builder_new(64, 1, 1);
  uint32_t IN = vyre_b_buffer(b, "in", UINT32_MAX, VYRE_ACCESS_READ_ONLY, VYRE_T_U32, 100, 0);
  uint32_t OUT = vyre_b_buffer(b, "out", UINT32_MAX, VYRE_ACCESS_READ_WRITE, VYRE_T_U32, 200, VYRE_BUF_OUTPUT);
  uint32_t OLD = vyre_b_buffer(b, "old", UINT32_MAX, VYRE_ACCESS_READ_WRITE, VYRE_T_U32, 200, VYRE_BUF_OUTPUT);
  uint32_t g = vyre_b_gid(b, 0);
  uint32_t v = vyre_b_load(b, IN, vyre_b_bin(b, VYRE_OP_ADD, g, vyre_b_u32(b, 50)));
  vyre_b_store(b, OUT, g, v);
  /* Always past the end (200 elements): a store that must do nothing.  (An
   * index that lands inside would race with out[g] of another invocation.) */
  vyre_b_store(b, OUT, vyre_b_bin(b, VYRE_OP_ADD, g, vyre_b_u32(b, 200)), vyre_b_u32(b, 0xEEEEEEEEu));
  uint32_t far = vyre_b_bin(b, VYRE_OP_ADD, g, vyre_b_u32(b, 0x7ffffff0u));
  vyre_b_store(b, OLD, g,
               vyre_b_atomic(b, VYRE_OP_ATOMIC_ADD, OUT, far, vyre_b_u32(b, 1), VYRE_ORDER_SEQ_CST));
  return finish(b, "out of bounds");
}

/* buf[gid] += 1 (resident, sequences, fixpoint). */
static prog prog_inc(void) {
  vyre_builder *b = vyre_builder_new(64, 1, 1);
  uint32_t buf = vyre_b_buffer(b, "buf", UINT32_MAX, VYRE_ACCESS_READ_WRITE, VYRE_T_U32, 0, 0);
  uint32_t g = vyre_b_gid(b, 0);
  vyre_b_store(b, buf, g, vyre_b_bin(b, VYRE_OP_ADD, vyre_b_load(b, buf, g), vyre_b_u32(b, 1)));
  return finish(b, "inc");
}

/* buf[gid] = buf[gid] * 3 + 1 (a second sequence step). */
static prog prog_mad(void) {
  vyre_builder *b = vyre_builder_new(64, 1, 1);
  uint32_t buf = vyre_b_buffer(b, "buf", UINT32_MAX, VYRE_ACCESS_READ_WRITE, VYRE_T_U32, 0, 0);
  uint32_t g = vyre_b_gid(b, 0);
  uint32_t v = vyre_b_bin(b, VYRE_OP_MUL, vyre_b_load(b, buf, g), vyre_b_u32(b, 3));
  vyre_b_store(b, buf, g, vyre_b_bin(b, VYRE_OP_ADD, v, vyre_b_u32(b, 1)));
  return finish(b, "mad");
}

/* Grid barrier: every invocation writes, the grid syncs, each reads its
 * neighbour's value. */
static prog prog_grid(uint32_t n) {
  vyre_builder *b = vyre_builder_new(128, 1, 1);
  uint32_t buf = vyre_b_buffer(b, "buf", UINT32_MAX, VYRE_ACCESS_READ_WRITE, VYRE_T_U32, n, VYRE_BUF_OUTPUT);
  uint32_t out = vyre_b_buffer(b, "out", UINT32_MAX, VYRE_ACCESS_WRITE_ONLY, VYRE_T_U32, n, 0);
  uint32_t g = vyre_b_gid(b, 0);
  vyre_b_store(b, buf, g, vyre_b_bin(b, VYRE_OP_MUL, g, vyre_b_u32(b, 7)));
  vyre_b_barrier(b, VYRE_BARRIER_GRID);
  uint32_t g2 = vyre_b_gid(b, 0);
  uint32_t nb = vyre_b_bin(b, VYRE_OP_MOD, vyre_b_bin(b, VYRE_OP_ADD, g2, vyre_b_u32(b, 1)),
                           vyre_b_u32(b, n));
  vyre_b_store(b, out, g2, vyre_b_load(b, buf, nb));
  return finish(b, "grid barrier");
}

/* if gid == 77: trap 42 */
static prog prog_trap(void) {
  vyre_builder *b = vyre_builder_new(64, 1, 1);
  uint32_t out = vyre_b_buffer(b, "out", UINT32_MAX, VYRE_ACCESS_WRITE_ONLY, VYRE_T_U32, 256, 0);
  uint32_t g = vyre_b_gid(b, 0);
  vyre_b_if(b, vyre_b_bin(b, VYRE_OP_EQ, g, vyre_b_u32(b, 77)));
  vyre_b_trap(b, 42);
  vyre_b_end(b);
  vyre_b_store(b, out, g, g);
  return finish(b, "trap");
}

/* ------------------------------------------------------------------ */
/* programs                                                            */
/* ------------------------------------------------------------------ */
START_TEST(test_f32_math) {
  const uint32_t n = 32 * 32 + 3000;
  uint32_t *a = malloc(n * 4), *b = malloc(n * 4);
  fill_f32(a, n, 0);
  fill_f32(b, n, 1);
  prog p = prog_f32_math(n);
  vyre_input in[2] = {{a, n * 4}, {b, n * 4}};
  compare("f32 math (specials, NaN payloads, subnormals)", &p, in, 2, NULL);
  free(p.bytes);
  free(a);
  free(b);
}
END_TEST

/* Strict (NULL options: ulp budget 0): every transcendental correctly
 * rounded (PM_CR), bit for bit against the reference, which evaluates the
 * same variant in C; CUDA claims correctly_rounded for it. */
START_TEST(test_strict_transcendentals) {
  ck_assert_msg(cuda_reg->capabilities & VYRE_CAP_CORRECTLY_ROUNDED,
                "CUDA (built with the math library) claims correctly_rounded");
  vyre_device_profile prof;
  memset(&prof, 0, sizeof prof);
  prof.struct_size = sizeof prof;
  vyre_error err = VYRE_ERROR_INIT;
  ck_assert_int_eq(cuda->vt->device_profile(cuda, &prof, &err), VYRE_OK);
  ck_assert_msg(prof.capabilities & VYRE_CAP_CORRECTLY_ROUNDED, "and so does its device");
  const uint32_t n = 32 * 32 + 30000;
  uint32_t *a = malloc(n * 4);
  fill_f32(a, n, 0);
  vyre_input in[1] = {{a, n * 4}};
  uint32_t count = 0;
  const vyre_op_info *all = vyre_op_all(&count);
  for (uint32_t k = 0; k < count; k++) {
    if (!(all[k].flags & VYRE_OPF_TRANSCENDENTAL)) continue;
    vyre_builder *b = vyre_builder_new(256, 1, 1);
    uint32_t x = vyre_b_buffer(b, "x", UINT32_MAX, VYRE_ACCESS_READ_ONLY, VYRE_T_F32, 0, 0);
    uint32_t out = vyre_b_buffer(b, "out", UINT32_MAX, VYRE_ACCESS_WRITE_ONLY, VYRE_T_F32, n, 0);
    uint32_t g = vyre_b_gid(b, 0);
    vyre_b_store(b, out, g, vyre_b_un(b, all[k].id, vyre_b_load(b, x, g)));
    prog p = finish(b, all[k].mnemonic);
    char what[64];
    snprintf(what, sizeof what, "%s under strict", all[k].mnemonic);
    compare(what, &p, in, 1, NULL);
    free(p.bytes);
  }
  free(a);
}
END_TEST

START_TEST(test_int_math) {
  const uint32_t n = 18 * 18 + 4000;
  uint32_t *x = malloc(n * 4), *y = malloc(n * 4);
  fill_u32(x, n, 0);
  fill_u32(y, n, 1);
  prog p = prog_int_math(n);
  vyre_input in[2] = {{x, n * 4}, {y, n * 4}};
  compare("integer math (div/mod by 0, MIN/-1, shifts >= 32)", &p, in, 2, NULL);
  free(p.bytes);
  free(x);
  free(y);
}
END_TEST

START_TEST(test_saxpy_large) {
  const uint32_t n = 16u << 20;
  float a = 1.5f;
  uint32_t *x = malloc((size_t)n * 4), *y = malloc((size_t)n * 4);
  ck_assert_msg(x && y, "host memory for 2 x 64 MiB");
  for (uint32_t i = 0; i < n; i++) {
    x[i] = (rnd() & 0x807fffffu) | (0x78u + i % 16u) << 23;
    y[i] = (rnd() & 0x807fffffu) | (0x7cu + i % 8u) << 23;
  }
  prog p = prog_saxpy();
  vyre_input in[3] = {{&a, 4}, {x, (uint64_t)n * 4}, {y, (uint64_t)n * 4}};
  uint64_t fast = metric(cuda, "dispatch.fastpath_launches");
  uint64_t split = metric(cuda, "dispatch.split");
  compare("saxpy 16M", &p, in, 3, NULL);
  ck_assert_msg(metric(cuda, "dispatch.fastpath_launches") > fast,
                "the 16M saxpy ran on codegen's elementwise fast path "
                "(dispatch.fastpath_launches did not grow)");
  /* 12 bytes an element: 25 chunks of 8 MiB (docs/cuda-runtime.md,
   * "Chunked host dispatch"), bit for bit the reference's. */
  ck_assert_msg(getenv("VYRE_CUDA_SPLIT_CHUNK") || metric(cuda, "dispatch.split") > split,
                "the 16M saxpy ran in chunks (dispatch.split did not grow)");
  free(p.bytes);
  free(x);
  free(y);
}
END_TEST

/* The elementwise path at every kind of edge: a block's span of 2048
 * elements (256 threads x 8) straddled, filled, half filled (the second
 * quad of each thread wholly past the count: predicated off), tiny, and x
 * shorter than y (elements past len(x) run as invocations reading 0). */
START_TEST(test_elementwise_edges) {
  static const uint32_t sizes[] = {1, 3, 4, 5, 1000, 1023, 1024, 1025, 1028, 2044, 2047,
                                   2048, 2049, 3072, 3073, 4100, 6144};
  prog p = prog_saxpy();
  float a = -2.25f;
  uint32_t *x = malloc(8192 * 4), *y = malloc(8192 * 4);
  ck_assert(x && y);
  for (uint32_t i = 0; i < 8192; i++) {
    x[i] = (rnd() & 0x807fffffu) | (0x78u + i % 16u) << 23;
    y[i] = (rnd() & 0x807fffffu) | (0x7cu + i % 8u) << 23;
  }
  uint64_t fast = metric(cuda, "dispatch.fastpath_launches");
  for (size_t k = 0; k < sizeof sizes / sizeof sizes[0]; k++) {
    for (uint32_t shorter = 0; shorter < 2; shorter++) {
      uint32_t n = sizes[k], nx = shorter ? n - n / 3 : n;
      char name[64];
      snprintf(name, sizeof name, "saxpy n = %u, len(x) = %u", n, nx);
      vyre_input in[3] = {{&a, 4}, {x, (uint64_t)nx * 4}, {y, (uint64_t)n * 4}};
      compare(name, &p, in, 3, NULL);
    }
  }
  ck_assert_msg(metric(cuda, "dispatch.fastpath_launches") >= fast + 34,
                "every size ran on the elementwise path");
  free(p.bytes);
  free(x);
  free(y);
}
END_TEST

/* Large host transfers go through the staging ring in chunks (16 MiB by
 * default): buffers of several chunks and an unaligned tail must arrive
 * byte for byte, in dispatch, dispatch_into, async and resident copies. */
START_TEST(test_staging_bytes) {
  const uint32_t n = (5u << 20) + 333u; /* 20 MiB + 1332 bytes: 2 chunks */
  const uint64_t bytes = (uint64_t)n * 4u;
  vyre_builder *bb = vyre_builder_new(256, 1, 1);
  uint32_t in = vyre_b_buffer(bb, "in", UINT32_MAX, VYRE_ACCESS_READ_ONLY, VYRE_T_U32, 0, 0);
  uint32_t out = vyre_b_buffer(bb, "out", UINT32_MAX, VYRE_ACCESS_WRITE_ONLY, VYRE_T_U32, n, 0);
  uint32_t g = vyre_b_gid(bb, 0);
  vyre_b_store(bb, out, g, vyre_b_bin(bb, VYRE_OP_XOR, vyre_b_load(bb, in, g), g));
  prog p = finish(bb, "xor with the index");
  vyre_program_ref r = ref_of(&p);
  uint32_t *x = malloc(bytes), *y = malloc(bytes);
  ck_assert_msg(x && y, "host memory for 2 x 20 MiB");
  for (uint32_t i = 0; i < n; i++) x[i] = rnd();
  vyre_input inputs[1] = {{x, bytes}};
  vyre_error err = VYRE_ERROR_INIT;
  uint64_t transfers = metric(cuda, "staging.transfers");

  vyre_outputs *o = NULL;
  ck_assert_msg(cuda->vt->dispatch(cuda, &r, inputs, 1, NULL, &o, NULL, &err) == VYRE_OK,
                "staged dispatch: %s", err.message);
  ck_assert_uint_eq(o->items[0].size, bytes);
  const uint32_t *w = o->items[0].data;
  for (uint32_t i = 0; i < n; i++)
    if (w[i] != (x[i] ^ i)) ck_abort_msg("dispatch: word %u is 0x%08x, expected 0x%08x", i, w[i], x[i] ^ i);
  cuda->vt->outputs_free(cuda, o);

  vyre_output_slot slot = {y, bytes, 0};
  memset(y, 0, bytes);
  ck_assert_int_eq(cuda->vt->dispatch_into(cuda, &r, inputs, 1, NULL, &slot, 1, NULL, &err),
                   VYRE_OK);
  for (uint32_t i = 0; i < n; i++)
    if (y[i] != (x[i] ^ i)) ck_abort_msg("dispatch_into: word %u is 0x%08x", i, y[i]);

  /* Async: the input may change as soon as dispatch_async returns. */
  vyre_pending h = 0;
  ck_assert_int_eq(cuda->vt->dispatch_async(cuda, &r, inputs, 1, NULL, &h, &err), VYRE_OK);
  memcpy(y, x, bytes);
  memset(x, 0x5A, bytes);
  ck_assert_int_eq(cuda->vt->pending_wait(cuda, h, &o, NULL, &err), VYRE_OK);
  w = o->items[0].data;
  for (uint32_t i = 0; i < n; i++)
    if (w[i] != (y[i] ^ i)) ck_abort_msg("dispatch_async: word %u is 0x%08x", i, w[i]);
  cuda->vt->outputs_free(cuda, o);
  ck_assert_msg(metric(cuda, "staging.transfers") >= transfers + 6,
                "inputs and outputs of 20 MiB went through the staging ring");

  /* Resident: upload 20 MiB + 1332 at an odd offset, read it back whole. */
  vyre_resident res = 0;
  ck_assert_int_eq(cuda->vt->resident_alloc(cuda, bytes + 7, &res, &err), VYRE_OK);
  ck_assert_int_eq(cuda->vt->resident_upload_at(cuda, res, 7, y, bytes, &err), VYRE_OK);
  uint8_t *back = malloc(bytes + 7);
  ck_assert_ptr_nonnull(back);
  ck_assert_int_eq(cuda->vt->resident_download(cuda, res, back, bytes + 7, &err), VYRE_OK);
  for (int i = 0; i < 7; i++) ck_assert_msg(back[i] == 0, "byte %d before the upload is zero", i);
  ck_assert_msg(memcmp(back + 7, y, bytes) == 0, "a staged resident round trip returns the bytes");
  ck_assert_int_eq(cuda->vt->resident_free(cuda, res, &err), VYRE_OK);
  n_features++;
  free(back);
  free(x);
  free(y);
  free(p.bytes);
}
END_TEST

START_TEST(test_histogram) {
  const uint32_t n = 1u << 20;
  uint32_t *v = malloc(n * 4);
  for (uint32_t i = 0; i < n; i++) v[i] = rnd() % 1000u;
  prog p = prog_histogram();
  vyre_input in[1] = {{v, n * 4}};
  compare("histogram with atomics", &p, in, 1, NULL);
  free(p.bytes);
  free(v);
}
END_TEST

START_TEST(test_block_reduce) {
  static const uint32_t wgs[] = {256, 64, 1024};
  for (size_t k = 0; k < sizeof wgs / sizeof wgs[0]; k++) {
    uint32_t wg = wgs[k], blocks = 97, n = wg * blocks;
    uint32_t *v = malloc(n * 4);
    for (uint32_t i = 0; i < n; i++) v[i] = rnd();
    prog p = prog_block_reduce(wg, blocks);
    vyre_input in[1] = {{v, n * 4}};
    char what[64];
    snprintf(what, sizeof what, "workgroup-memory reduction, wg %u", wg);
    compare(what, &p, in, 1, NULL);
    free(p.bytes);
    free(v);
  }
}
END_TEST

START_TEST(test_subgroups) {
  static const uint32_t wgs[] = {48, 64, 96, 1000};
  for (size_t k = 0; k < sizeof wgs / sizeof wgs[0]; k++) {
    uint32_t wg = wgs[k], n = wg * 7;
    uint32_t *v = malloc(n * 4), *f = malloc(n * 4);
    fill_u32(v, n, 0);
    fill_f32(f, n, 1);
    prog p = prog_subgroup(wg, n);
    vyre_input in[2] = {{v, n * 4}, {f, n * 4}};
    char what[64];
    snprintf(what, sizeof what, "subgroup ballot/shuffle/reduce, wg %u", wg);
    compare(what, &p, in, 2, NULL);
    free(p.bytes);
    free(v);
    free(f);
  }
}
END_TEST

START_TEST(test_storage_types) {
  const uint32_t n = 8192;
  uint16_t *h = malloc(n * 2), *bf = malloc(n * 2), *i16 = malloc(n * 2);
  uint8_t *u8 = malloc(n);
  static const uint16_t hs[] = {0x0000, 0x8000, 0x3c00, 0x7c00, 0xfc00, 0x7e00, 0x7d01, 0x0001,
                                0x03ff, 0x0400, 0x7bff, 0xfbff, 0x3555, 0x5bff, 0x5c00};
  static const uint16_t bs[] = {0x0000, 0x8000, 0x3f80, 0x7f80, 0xff80, 0x7fc0, 0x7fc1, 0x0001,
                                0x007f, 0x0080, 0x7f7f, 0xff7f, 0x3eab, 0x4b7f};
  for (uint32_t i = 0; i < n; i++) {
    h[i] = i < 15 ? hs[i] : (uint16_t)rnd();
    bf[i] = i < 14 ? bs[i] : (uint16_t)rnd();
    u8[i] = (uint8_t)rnd();
    i16[i] = i == 0 ? 0x8000 : i == 1 ? 0x7fff : (uint16_t)rnd();
  }
  prog p = prog_storage(n);
  vyre_input in[4] = {{h, n * 2}, {bf, n * 2}, {u8, n}, {i16, n * 2}};
  compare("storage types f16/bf16/u8/i16", &p, in, 4, NULL);
  free(p.bytes);
  free(h);
  free(bf);
  free(u8);
  free(i16);
}
END_TEST

START_TEST(test_oob) {
  uint32_t v[100];
  for (uint32_t i = 0; i < 100; i++) v[i] = i * 3 + 1;
  prog p = prog_oob();
  vyre_input in[1] = {{v, sizeof v}};
  compare("out-of-bounds loads, stores and atomics", &p, in, 1, NULL);
  free(p.bytes);
}
END_TEST

/* ------------------------------------------------------------------ */
/* features                                                            */
/* ------------------------------------------------------------------ */
/* The same resident workload on one backend; returns the downloaded words. */
static void resident_run(vyre_backend *b, const prog *inc, uint32_t *words, uint32_t n,
                         uint32_t *range) {
  vyre_error err = VYRE_ERROR_INIT;
  vyre_resident h = 0;
  ck_assert_msg(b->vt->resident_alloc(b, (uint64_t)n * 4, &h, &err) == VYRE_OK, "alloc: %s",
                err.message);
  uint32_t *zero = calloc(n, 4);
  ck_assert_int_eq(b->vt->resident_download(b, h, words, (uint64_t)n * 4, &err), VYRE_OK);
  ck_assert_msg(memcmp(zero, words, (size_t)n * 4) == 0, "new resident buffers are zeroed");
  free(zero);
  for (uint32_t i = 0; i < n; i++) words[i] = i * 11u;
  ck_assert_int_eq(b->vt->resident_upload(b, h, words, (uint64_t)n * 4, &err), VYRE_OK);
  uint32_t patch[3] = {7, 8, 9};
  ck_assert_int_eq(b->vt->resident_upload_at(b, h, 40, patch, sizeof patch, &err), VYRE_OK);
  vyre_program_ref r = ref_of(inc);
  for (int k = 0; k < 3; k++)
    ck_assert_msg(b->vt->dispatch_resident(b, &r, &h, 1, NULL, NULL, &err) == VYRE_OK,
                  "dispatch_resident: %s", err.message);
  ck_assert_int_eq(b->vt->resident_download(b, h, words, (uint64_t)n * 4, &err), VYRE_OK);
  ck_assert_int_eq(b->vt->resident_download_range(b, h, 4000, range, 64, &err), VYRE_OK);
  ck_assert_int_eq(b->vt->resident_free(b, h, &err), VYRE_OK);
}

START_TEST(test_resident) {
  const uint32_t n = 3u << 20; /* 12 MiB: more than one staging chunk */
  uint32_t *a = malloc((size_t)n * 4), *c = malloc((size_t)n * 4);
  uint32_t ra[16], rc[16];
  prog inc = prog_inc();
  resident_run(ref, &inc, a, n, ra);
  resident_run(cuda, &inc, c, n, rc);
  ck_assert_msg(memcmp(a, c, (size_t)n * 4) == 0, "resident buffers agree");
  ck_assert_msg(memcmp(ra, rc, sizeof ra) == 0, "ranged downloads agree");
  /* words 10..12 were patched to 7, 8, 9 by upload_at, then incremented 3 times */
  ck_assert_uint_eq(c[9], 9 * 11 + 3);
  ck_assert_uint_eq(c[10], 7 + 3);
  ck_assert_uint_eq(c[12], 9 + 3);
  n_features++;
  free(inc.bytes);
  free(a);
  free(c);
}
END_TEST

START_TEST(test_async_timed) {
  const uint32_t n = 1u << 20;
  uint32_t *v = malloc(n * 4);
  for (uint32_t i = 0; i < n; i++) v[i] = i;
  prog inc = prog_inc();
  vyre_program_ref r = ref_of(&inc);
  vyre_input in[1] = {{v, n * 4}};
  vyre_error err = VYRE_ERROR_INIT;
  vyre_outputs *want = NULL, *got = NULL;
  ck_assert_int_eq(ref->vt->dispatch(ref, &r, in, 1, NULL, &want, NULL, &err), VYRE_OK);
  /* release before wait, then a normal async round trip */
  vyre_pending h1, h2;
  ck_assert_msg(cuda->vt->dispatch_async(cuda, &r, in, 1, NULL, &h1, &err) == VYRE_OK, "%s",
                err.message);
  ck_assert_int_eq(cuda->vt->pending_release(cuda, h1, &err), VYRE_OK);
  ck_assert_int_eq(cuda->vt->dispatch_async(cuda, &r, in, 1, NULL, &h2, &err), VYRE_OK);
  memset(v, 0, n * 4); /* inputs were staged before dispatch_async returned */
  int ready = 0;
  for (int spins = 0; !ready && spins < 1000000; spins++)
    ck_assert_int_eq(cuda->vt->pending_poll(cuda, h2, &ready, &err), VYRE_OK);
  vyre_timing t = {.struct_size = sizeof t};
  ck_assert_int_eq(cuda->vt->pending_wait(cuda, h2, &got, &t, &err), VYRE_OK);
  same_outputs("async", want, got);
  ck_assert_msg(t.valid & VYRE_TIMING_DEVICE, "device time is reported (valid 0x%x)", t.valid);
  ck_assert_msg(t.device_ns > 0 && t.wall_ns > 0, "times are measured");
  cuda->vt->outputs_free(cuda, got);
  /* timed sync dispatch */
  for (uint32_t i = 0; i < n; i++) v[i] = i;
  vyre_timing t2 = {.struct_size = sizeof t2};
  ck_assert_int_eq(cuda->vt->dispatch(cuda, &r, in, 1, NULL, &got, &t2, &err), VYRE_OK);
  same_outputs("timed", want, got);
  ck_assert_msg((t2.valid & 15u) == 15u, "wall, device, enqueue and wait are all filled");
  printf("check_cuda_gpu: 1M-element inc: wall %.1f us, device %.1f us, enqueue %.1f us, wait "
         "%.1f us\n",
         t2.wall_ns / 1e3, t2.device_ns / 1e3, t2.enqueue_ns / 1e3, t2.wait_ns / 1e3);
  cuda->vt->outputs_free(cuda, got);
  ref->vt->outputs_free(ref, want);
  n_features += 3;
  free(inc.bytes);
  free(v);
}
END_TEST

/* inc(A), mad(B), inc(A); with `one_space` mad runs on A too: three
 * steps over one index space, one fused kernel on the CUDA backend. */
static void sequence_run(vyre_backend *b, const prog *inc, const prog *mad, uint32_t *ra,
                         uint32_t *rb, uint32_t repeat, int one_space) {
  vyre_error err = VYRE_ERROR_INIT;
  vyre_resident A, B;
  ck_assert_int_eq(b->vt->resident_alloc(b, 4096 * 4, &A, &err), VYRE_OK);
  ck_assert_int_eq(b->vt->resident_alloc(b, 1000 * 4, &B, &err), VYRE_OK);
  uint32_t init[4096];
  for (uint32_t i = 0; i < 4096; i++) init[i] = i;
  vyre_resident_copy up[2] = {{A, 0, init, 4096 * 4}, {B, 0, init, 1000 * 4}};
  ck_assert_int_eq(b->vt->resident_upload_many(b, up, 2, &err), VYRE_OK);
  vyre_sequence_step s[3];
  memset(s, 0, sizeof s);
  for (int i = 0; i < 3; i++) {
    s[i].struct_size = sizeof s[i];
    s[i].buffer_count = 1;
  }
  const vyre_program_ref r_inc = ref_of(inc), r_mad = ref_of(mad);
  s[0].program = &r_inc;
  s[0].buffers = &A;
  s[1].program = &r_mad;
  s[1].buffers = one_space ? &A : &B;
  s[2].program = &r_inc;
  s[2].buffers = &A;
  vyre_resident_copy reads[2] = {{A, 400, ra, 64}, {B, 0, rb, 64}};
  for (int round = 0; round < 2; round++)
    ck_assert_msg(b->vt->dispatch_sequence(b, s, 3, repeat, reads, 2, NULL, &err) == VYRE_OK,
                  "sequence: %s", err.message);
  b->vt->resident_free(b, A, NULL);
  b->vt->resident_free(b, B, NULL);
}

START_TEST(test_sequences) {
  prog inc = prog_inc(), mad = prog_mad();
  uint32_t ra[16], rb[16], ca[16], cb[16];
  sequence_run(ref, &inc, &mad, ra, rb, 1, 0);
  sequence_run(cuda, &inc, &mad, ca, cb, 1, 0);
  ck_assert_msg(!memcmp(ra, ca, 64) && !memcmp(rb, cb, 64), "sequence reads agree");
  uint64_t hits = metric(cuda, "graph.hits");
  sequence_run(ref, &inc, &mad, ra, rb, 5, 0);
  sequence_run(cuda, &inc, &mad, ca, cb, 5, 0);
  ck_assert_msg(!memcmp(ra, ca, 64) && !memcmp(rb, cb, 64), "repeated sequence reads agree");
  ck_assert_msg(metric(cuda, "graph.hits") > hits, "the repeated sequence replayed its graph");
  /* Fused (docs/cuda-runtime.md, "Fused sequences"): the same reads. */
  uint64_t fused = metric(cuda, "fuse.steps");
  for (uint32_t repeat = 1; repeat <= 5; repeat += 4) {
    sequence_run(ref, &inc, &mad, ra, rb, repeat, 1);
    sequence_run(cuda, &inc, &mad, ca, cb, repeat, 1);
    ck_assert_msg(!memcmp(ra, ca, 64) && !memcmp(rb, cb, 64), "fused sequence reads agree");
  }
  ck_assert_msg(metric(cuda, "fuse.steps") > fused, "the one-space sequence ran fused");
  n_features += 2;
  free(inc.bytes);
  free(mad.bytes);
}
END_TEST

/* 16 threads share the one CUDA instance, each mixing sync, async,
 * resident, sequence and graph-replay dispatches on its own data, every
 * output checked (issue 13: concurrency on the GPU). */
#define MT_THREADS 16
#define MT_ROUNDS 120

typedef struct mt_job {
  uint32_t id;
  vyre_program_ref mad_ref;  /* by bytes */
  vyre_program_ref inc_ref;  /* by pipeline */
  char failure[2400];
  uint32_t checked;
} mt_job;

static void mt_fail(mt_job *j, uint32_t round, const char *what, const vyre_error *e) {
  if (!j->failure[0])
    snprintf(j->failure, sizeof j->failure, "thread %u round %u: %s: %s", j->id, round, what,
             e ? e->message : "wrong output");
}

static void *mt_thread(void *arg) {
  mt_job *j = arg;
  uint32_t seed = 0x9e3779b9u * (j->id + 1);
  uint32_t *in = calloc(4096, 4), *back = calloc(4096, 4);
  vyre_resident h = 0;
  vyre_error e = VYRE_ERROR_INIT;
  if (!in || !back) {
    mt_fail(j, 0, "host memory", NULL);
    goto out;
  }
  if (cuda->vt->resident_alloc(cuda, 4096 * 4, &h, &e) != VYRE_OK) {
    mt_fail(j, 0, "resident_alloc", &e);
    goto out;
  }
  for (uint32_t r = 0; r < MT_ROUNDS && !j->failure[0]; r++) {
    seed = seed * 1664525u + 1013904223u;
    uint32_t n = 1 + (seed >> 8) % 4096;
    for (uint32_t i = 0; i < n; i++) in[i] = seed ^ (i * 2654435761u);
    vyre_input input = {in, (uint64_t)n * 4};
    vyre_outputs *o = NULL;
    switch (r % 4) {
    case 0: /* sync dispatch of bytes */
      if (cuda->vt->dispatch(cuda, &j->mad_ref, &input, 1, NULL, &o, NULL, &e) != VYRE_OK) {
        mt_fail(j, r, "dispatch", &e);
        break;
      }
      for (uint32_t i = 0; i < n; i++)
        if (((const uint32_t *)o->items[0].data)[i] != in[i] * 3u + 1u) mt_fail(j, r, "dispatch", NULL);
      cuda->vt->outputs_free(cuda, o);
      break;
    case 1: { /* async, the input changed as soon as the call returns */
      vyre_pending p = 0;
      if (cuda->vt->dispatch_async(cuda, &j->mad_ref, &input, 1, NULL, &p, &e) != VYRE_OK) {
        mt_fail(j, r, "dispatch_async", &e);
        break;
      }
      memcpy(back, in, (size_t)n * 4);
      memset(in, 0xA5, (size_t)n * 4);
      if (cuda->vt->pending_wait(cuda, p, &o, NULL, &e) != VYRE_OK) {
        mt_fail(j, r, "pending_wait", &e);
        break;
      }
      for (uint32_t i = 0; i < n; i++)
        if (((const uint32_t *)o->items[0].data)[i] != back[i] * 3u + 1u)
          mt_fail(j, r, "dispatch_async", NULL);
      cuda->vt->outputs_free(cuda, o);
      break;
    }
    case 2: /* resident: upload, dispatch through the pipeline, download */
      if (cuda->vt->resident_upload(cuda, h, in, 4096 * 4, &e) != VYRE_OK ||
          cuda->vt->dispatch_resident(cuda, &j->inc_ref, &h, 1, NULL, NULL, &e) != VYRE_OK ||
          cuda->vt->resident_download(cuda, h, back, 4096 * 4, &e) != VYRE_OK) {
        mt_fail(j, r, "resident", &e);
        break;
      }
      for (uint32_t i = 0; i < n; i++)
        if (back[i] != in[i] + 1u) mt_fail(j, r, "dispatch_resident", NULL);
      break;
    default: { /* a sequence of 3 steps, repeated 4 times (graph replay), a read */
      vyre_sequence_step st[3];
      memset(st, 0, sizeof st);
      for (int k = 0; k < 3; k++) {
        st[k].struct_size = sizeof st[k];
        st[k].program = &j->inc_ref;
        st[k].buffer_count = 1;
        st[k].buffers = &h;
      }
      vyre_resident_copy rd = {h, 0, back, (uint64_t)n * 4};
      if (cuda->vt->resident_upload(cuda, h, in, 4096 * 4, &e) != VYRE_OK ||
          cuda->vt->dispatch_sequence(cuda, st, 3, 4, &rd, 1, NULL, &e) != VYRE_OK) {
        mt_fail(j, r, "dispatch_sequence", &e);
        break;
      }
      for (uint32_t i = 0; i < n; i++)
        if (back[i] != in[i] + 12u) mt_fail(j, r, "dispatch_sequence", NULL);
      break;
    }
    }
    j->checked++;
  }
out:
  if (h) cuda->vt->resident_free(cuda, h, NULL);
  free(in);
  free(back);
  return NULL;
}

START_TEST(test_threads) {
  prog mad = prog_mad(), inc = prog_inc();
  vyre_error err = VYRE_ERROR_INIT;
  vyre_pipeline pl = 0;
  ck_assert_msg(cuda->vt->pipeline_create(cuda, inc.bytes, inc.size, NULL, &pl, &err) == VYRE_OK,
                "pipeline_create: %s", err.message);
  static mt_job jobs[MT_THREADS];
  pthread_t tid[MT_THREADS];
  uint64_t hits = metric(cuda, "graph.hits");
  for (uint32_t t = 0; t < MT_THREADS; t++) {
    memset(&jobs[t], 0, sizeof jobs[t]);
    jobs[t].id = t;
    jobs[t].mad_ref = ref_of(&mad);
    jobs[t].inc_ref = (vyre_program_ref)VYRE_PROGRAM_PIPELINE(pl);
    ck_assert_int_eq(pthread_create(&tid[t], NULL, mt_thread, &jobs[t]), 0);
  }
  uint32_t checked = 0;
  for (uint32_t t = 0; t < MT_THREADS; t++) {
    pthread_join(tid[t], NULL);
    ck_assert_msg(!jobs[t].failure[0], "%s", jobs[t].failure);
    checked += jobs[t].checked;
  }
  ck_assert_uint_eq(checked, MT_THREADS * MT_ROUNDS);
  ck_assert_msg(metric(cuda, "graph.hits") > hits, "repeated sequences replayed graphs");
  ck_assert_int_eq(cuda->vt->pipeline_release(cuda, pl, &err), VYRE_OK);
  printf("check_cuda_gpu: %u threads x %u mixed dispatches on one instance, every output "
         "checked\n", MT_THREADS, MT_ROUNDS);
  n_features++;
  free(mad.bytes);
  free(inc.bytes);
}
END_TEST

START_TEST(test_fixpoint) {
  uint32_t v[5000];
  for (uint32_t i = 0; i < 5000; i++) v[i] = i;
  prog inc = prog_inc();
  vyre_input in[1] = {{v, sizeof v}};
  vyre_dispatch_options o = {.struct_size = sizeof o, .fixpoint_iterations = 7};
  compare("fixpoint x7", &inc, in, 1, &o);
  n_features++;
  free(inc.bytes);
}
END_TEST

START_TEST(test_grid_barrier) {
  vyre_device_profile p = {.struct_size = sizeof p};
  vyre_error err = VYRE_ERROR_INIT;
  ck_assert_int_eq(cuda->vt->device_profile(cuda, &p, &err), VYRE_OK);
  if (!(p.capabilities & VYRE_CAP_GRID_BARRIER)) {
    printf("check_cuda_gpu: device has no cooperative launch; grid barrier checks skipped\n");
    return;
  }
  uint32_t blocks = p.compute_units < 16 ? p.compute_units : 16;
  prog g = prog_grid(128 * blocks);
  compare("grid barrier (cooperative launch)", &g, NULL, 0, NULL);
  /* A grid that cannot be co-resident is refused with a clear error. */
  vyre_program_ref r = ref_of(&g);
  vyre_dispatch_options o = {.struct_size = sizeof o};
  o.grid[0] = 1u << 22;
  vyre_outputs *out = NULL;
  ck_assert_int_eq(cuda->vt->dispatch(cuda, &r, NULL, 0, &o, &out, NULL, &err), VYRE_LIMIT);
  ck_assert_msg(strstr(err.message, "at most") && strstr(err.message, "Fix:"),
                "the refusal names the limit: %s", err.message);
  n_features += 2;
  free(g.bytes);
}
END_TEST

/* ------------------------------------------------------------------ */
/* Indirect dispatch (vyre_indirect): the kernel prologue on the device */
/* ------------------------------------------------------------------ */
/* Thread 0 of each workgroup of 64 adds 1 to o[wgid.x + 4 * wgid.y]. */
static prog prog_mark(void) {
  vyre_builder *b = vyre_builder_new(64, 1, 1);
  uint32_t o = vyre_b_buffer(b, "o", UINT32_MAX, VYRE_ACCESS_READ_WRITE, VYRE_T_U32, 0, 0);
  vyre_b_if(b, vyre_b_bin(b, VYRE_OP_EQ, vyre_b_builtin(b, VYRE_OP_LOCAL_ID, 0), vyre_b_u32(b, 0)));
  uint32_t i = vyre_b_bin(b, VYRE_OP_ADD, vyre_b_builtin(b, VYRE_OP_WORKGROUP_ID, 0),
                          vyre_b_bin(b, VYRE_OP_MUL, vyre_b_builtin(b, VYRE_OP_WORKGROUP_ID, 1),
                                     vyre_b_u32(b, 4)));
  vyre_b_store(b, o, i, vyre_b_bin(b, VYRE_OP_ADD, vyre_b_load(b, o, i), vyre_b_u32(b, 1)));
  vyre_b_end(b);
  return finish(b, "indirect mark");
}

/* c[1] += 1: the count an earlier step writes. */
static prog prog_bump(void) {
  vyre_builder *b = vyre_builder_new(1, 1, 1);
  uint32_t c = vyre_b_buffer(b, "c", UINT32_MAX, VYRE_ACCESS_READ_WRITE, VYRE_T_U32, 0, 0);
  uint32_t one = vyre_b_u32(b, 1);
  vyre_b_store(b, c, one, vyre_b_bin(b, VYRE_OP_ADD, vyre_b_load(b, c, one), one));
  return finish(b, "indirect bump");
}

typedef struct ind_run {
  vyre_resident o, cnt;
  vyre_indirect ind;
  vyre_dispatch_options opts; /* grid 4 x 3 x 1, the chain */
} ind_run;

static void ind_open(vyre_backend *be, ind_run *r, uint64_t o_bytes, const uint32_t c[4]) {
  vyre_error err = VYRE_ERROR_INIT;
  memset(r, 0, sizeof *r);
  ck_assert_int_eq(be->vt->resident_alloc(be, o_bytes, &r->o, &err), VYRE_OK);
  ck_assert_int_eq(be->vt->resident_alloc(be, 16, &r->cnt, &err), VYRE_OK);
  ck_assert_int_eq(be->vt->resident_upload(be, r->cnt, c, 16, &err), VYRE_OK);
  void *zero = calloc(1, (size_t)o_bytes);
  ck_assert_int_eq(be->vt->resident_upload(be, r->o, zero, o_bytes, &err), VYRE_OK);
  free(zero);
  r->ind.head.struct_size = sizeof r->ind;
  r->ind.head.type = VYRE_EXT_INDIRECT;
  r->ind.buffer = r->cnt;
  r->ind.offset = 4;
  r->opts.struct_size = sizeof r->opts;
  r->opts.grid[0] = 4;
  r->opts.grid[1] = 3;
  r->opts.grid[2] = 1;
  r->opts.next = &r->ind.head;
}

static void ind_close(vyre_backend *be, ind_run *r, void *o, uint64_t o_bytes) {
  vyre_error err = VYRE_ERROR_INIT;
  ck_assert_int_eq(be->vt->resident_download(be, r->o, o, o_bytes, &err), VYRE_OK);
  ck_assert_int_eq(be->vt->resident_free(be, r->o, &err), VYRE_OK);
  ck_assert_int_eq(be->vt->resident_free(be, r->cnt, &err), VYRE_OK);
}

/* prog_mark with counts x y z on the 4 x 3 bound: status, marks, message. */
static vyre_status ind_mark(vyre_backend *be, const prog *mark, const uint32_t xyz[3],
                            uint32_t o[12], vyre_error *err) {
  const uint32_t c[4] = {0, xyz[0], xyz[1], xyz[2]};
  ind_run r;
  ind_open(be, &r, 48, c);
  vyre_program_ref pr = ref_of(mark);
  vyre_status st = be->vt->dispatch_resident(be, &pr, &r.o, 1, &r.opts, NULL, err);
  ind_close(be, &r, o, 48);
  return st;
}

/* `calls` sequences of (bump the count, mark indirect) x repeat, from a
 * count of 0 x 1 x 1: each replay reads the count the bump before it wrote. */
static vyre_status ind_replay(vyre_backend *be, const prog *mark, const prog *bump,
                              uint32_t calls, uint32_t o[12], vyre_error *err) {
  const uint32_t c[4] = {0, 0, 1, 1};
  ind_run r;
  ind_open(be, &r, 48, c);
  vyre_program_ref mref = ref_of(mark), bref = ref_of(bump);
  vyre_dispatch_options one = {.struct_size = sizeof one, .grid = {1, 1, 1}};
  vyre_sequence_step steps[2] = {
      {.struct_size = sizeof steps[0], .program = &bref, .buffers = &r.cnt, .buffer_count = 1,
       .options = &one},
      {.struct_size = sizeof steps[0], .program = &mref, .buffers = &r.o, .buffer_count = 1,
       .options = &r.opts}};
  vyre_status st = VYRE_OK;
  for (uint32_t k = 0; k < calls; k++)
    st = be->vt->dispatch_sequence(be, steps, 2, 3, NULL, 0, NULL, err);
  ind_close(be, &r, o, 48);
  return st;
}

/* prog_grid over n invocations, `wgs` of its workgroups by the count. */
static vyre_status ind_grid(vyre_backend *be, const prog *g, uint32_t n, uint32_t wgs,
                            uint32_t *out, vyre_error *err) {
  const uint32_t c[4] = {0, wgs, 1, 1};
  ind_run r;
  ind_open(be, &r, (uint64_t)n * 4u, c);
  vyre_resident bufs[2];
  ck_assert_int_eq(be->vt->resident_alloc(be, (uint64_t)n * 4u, &bufs[0], err), VYRE_OK);
  uint32_t *zero = calloc(n, 4);
  ck_assert_int_eq(be->vt->resident_upload(be, bufs[0], zero, (uint64_t)n * 4u, err), VYRE_OK);
  free(zero);
  bufs[1] = r.o;
  memset(r.opts.grid, 0, sizeof r.opts.grid);
  vyre_program_ref pr = ref_of(g);
  vyre_status st = be->vt->dispatch_resident(be, &pr, bufs, 2, &r.opts, NULL, err);
  vyre_error e2 = VYRE_ERROR_INIT;
  ck_assert_int_eq(be->vt->resident_free(be, bufs[0], &e2), VYRE_OK);
  ind_close(be, &r, out, (uint64_t)n * 4u);
  return st;
}

START_TEST(test_indirect) {
  ck_assert_msg(cuda_reg->capabilities & VYRE_CAP_INDIRECT_DISPATCH, "CUDA offers it");
  prog mark = prog_mark(), bump = prog_bump();
  static const uint32_t counts[][3] = {{2, 2, 1}, {1, 1, 1}, {0, 3, 1}, {4, 3, 0}, {4, 3, 1},
                                       {3, 1, 1}, {5, 1, 1}, {4, 4, 1}, {1, 1, 2}};
  for (size_t k = 0; k < sizeof counts / sizeof counts[0]; k++) {
    uint32_t a[12], c[12];
    vyre_error ea = VYRE_ERROR_INIT, ec = VYRE_ERROR_INIT;
    vyre_status sa = ind_mark(ref, &mark, counts[k], a, &ea);
    vyre_status sc = ind_mark(cuda, &mark, counts[k], c, &ec);
    ck_assert_msg(sa == sc, "counts %u %u %u: reference %d (%s), CUDA %d (%s)", counts[k][0],
                  counts[k][1], counts[k][2], sa, ea.message, sc, ec.message);
    ck_assert_msg(memcmp(a, c, sizeof a) == 0, "counts %u %u %u: the workgroups that ran differ",
                  counts[k][0], counts[k][1], counts[k][2]);
    if (sc == VYRE_LIMIT)
      ck_assert_msg(strstr(ec.message, "on axis") && strstr(ec.message, "4 x 3 x 1"), "%s",
                    ec.message);
  }
  /* Replays read the count every time; the second call reuses the graph
   * (its last two replays are past the bound: VYRE_LIMIT on both). */
  uint32_t a[12], c[12];
  vyre_error ea = VYRE_ERROR_INIT, ec = VYRE_ERROR_INIT;
  uint64_t hits = metric(cuda, "graph.hits");
  vyre_status sa = ind_replay(ref, &mark, &bump, 2, a, &ea);
  vyre_status sc = ind_replay(cuda, &mark, &bump, 2, c, &ec);
  ck_assert_msg(sa == VYRE_LIMIT && sc == VYRE_LIMIT, "reference %s / CUDA %s", ea.message,
                ec.message);
  ck_assert_msg(strstr(ec.message, "step 1"), "%s", ec.message);
  ck_assert_msg(memcmp(a, c, sizeof a) == 0 && c[0] == 4 && c[1] == 3 && c[2] == 2 && c[3] == 1,
                "counts 1, 2, 3 then 4: o[0..3] = 4 3 2 1 (CUDA %u %u %u %u)", c[0], c[1], c[2],
                c[3]);
  ck_assert_msg(metric(cuda, "graph.hits") > hits, "the second call replays the cached graph");
  /* A grid barrier waits only for the workgroups the count runs. */
  vyre_device_profile p = {.struct_size = sizeof p};
  ck_assert_int_eq(cuda->vt->device_profile(cuda, &p, &ec), VYRE_OK);
  if (p.capabilities & VYRE_CAP_GRID_BARRIER) {
    uint32_t blocks = p.compute_units < 16 ? p.compute_units : 16, n = 128 * blocks;
    prog g = prog_grid(n);
    uint32_t *ga = calloc(n, 4), *gc = calloc(n, 4);
    sa = ind_grid(ref, &g, n, blocks / 2, ga, &ea);
    sc = ind_grid(cuda, &g, n, blocks / 2, gc, &ec);
    ck_assert_msg(sa == VYRE_OK && sc == VYRE_OK, "%s / %s", ea.message, ec.message);
    ck_assert_msg(memcmp(ga, gc, (size_t)n * 4) == 0, "grid barrier under a partial count");
    free(ga);
    free(gc);
    free(g.bytes);
  }
  n_features += 3;
  free(mark.bytes);
  free(bump.bytes);
}
END_TEST

START_TEST(test_trap) {
  prog t = prog_trap();
  vyre_program_ref r = ref_of(&t);
  vyre_outputs *a = NULL, *b = NULL;
  vyre_error ea = VYRE_ERROR_INIT, eb = VYRE_ERROR_INIT;
  vyre_status sa = ref->vt->dispatch(ref, &r, NULL, 0, NULL, &a, NULL, &ea);
  vyre_status sb = cuda->vt->dispatch(cuda, &r, NULL, 0, NULL, &b, NULL, &eb);
  ck_assert_msg(sa == VYRE_TRAP && sb == VYRE_TRAP, "both trap: reference %s, CUDA %s (%s)",
                vyre_status_name(sa), vyre_status_name(sb), eb.message);
  ck_assert_int_eq(ea.native_code, 42);
  ck_assert_int_eq(eb.native_code, 42);
  ck_assert_msg(b == NULL, "a trapped dispatch returns no outputs");
  /* The instance stays usable. */
  prog inc = prog_inc();
  uint32_t v[300] = {0};
  vyre_input in[1] = {{v, sizeof v}};
  compare("after a trap", &inc, in, 1, NULL);
  n_features++;
  free(inc.bytes);
  free(t.bytes);
}
END_TEST

START_TEST(test_disk_cache) {
  /* prog_inc was compiled by the main instance into the private cache
   * dir; a second instance finds it there. */
  prog inc = prog_inc();
  uint32_t v[300] = {0};
  vyre_input in[1] = {{v, sizeof v}};
  compare("inc", &inc, in, 1, NULL);
  vyre_backend *second = NULL;
  vyre_error err = VYRE_ERROR_INIT;
  ck_assert_int_eq(cuda_reg->create(NULL, &second, &err), VYRE_OK);
  vyre_program_ref r = ref_of(&inc);
  vyre_outputs *out = NULL;
  ck_assert_int_eq(second->vt->dispatch(second, &r, in, 1, NULL, &out, NULL, &err), VYRE_OK);
  ck_assert_msg(metric(second, "cache.disk.hits") >= 1,
                "a second instance loads the cubin from the disk cache (%s)", cache_dir);
  second->vt->outputs_free(second, out);
  second->vt->destroy(second);
  n_features++;
  free(inc.bytes);
}
END_TEST

/* A launch fault spoils the process's CUDA state for good (the driver's
 * documented rule for illegal-address-class errors, and what an H200
 * does), so the fault runs in a child process: this program again with
 * --device-lost-child.  The child checks the lost instance fails fast with
 * the cause and a fix, and that a new instance in that process either
 * works or says plainly that the process must restart. */
extern char **environ;

/* A kernel that stores to address 0: on a GPU an illegal address, a
 * sticky error (programs cannot fault by design, so the test brings its
 * own kernel; the plugin has no hook for it). */
static const char fault_ptx[] =
    ".version 7.0\n"
    ".target sm_50\n"
    ".address_size 64\n"
    ".visible .entry vyre_test_fault()\n"
    "{\n"
    "  .reg .u64 %rd<2>;\n"
    "  .reg .u32 %r<2>;\n"
    "  mov.u64 %rd1, 0;\n"
    "  mov.u32 %r1, 1;\n"
    "  st.volatile.global.u32 [%rd1], %r1;\n"
    "  ret;\n"
    "}\n";

/* Launch vyre_test_fault in device 0's primary context, the one the
 * plugin's instances share, through libcuda itself.  Returns the CUresult
 * that cuCtxSynchronize reports (700, CUDA_ERROR_ILLEGAL_ADDRESS, on a
 * GPU), or -1 with *why set when the driver cannot be driven. */
static int fault_primary_context(char *why, size_t cap) {
  const char *path = getenv("VYRE_CUDA_DRIVER");
  void *dl = dlopen(path && *path ? path : "libcuda.so.1", RTLD_NOW | RTLD_LOCAL | RTLD_NODELETE);
  if (!dl) {
    snprintf(why, cap, "dlopen libcuda: %s", dlerror());
    return -1;
  }
  int (*init)(unsigned) = NULL, (*dev_get)(int *, int) = NULL;
  int (*retain)(void **, int) = NULL, (*release)(int) = NULL;
  int (*push)(void *) = NULL, (*pop)(void **) = NULL, (*load)(void **, const void *) = NULL;
  int (*get_fn)(void **, void *, const char *) = NULL, (*sync)(void) = NULL;
  int (*launch)(void *, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned,
                void *, void **, void **) = NULL;
  *(void **)&init = dlsym(dl, "cuInit");
  *(void **)&dev_get = dlsym(dl, "cuDeviceGet");
  *(void **)&retain = dlsym(dl, "cuDevicePrimaryCtxRetain");
  *(void **)&release = dlsym(dl, "cuDevicePrimaryCtxRelease_v2");
  *(void **)&push = dlsym(dl, "cuCtxPushCurrent_v2");
  *(void **)&pop = dlsym(dl, "cuCtxPopCurrent_v2");
  *(void **)&load = dlsym(dl, "cuModuleLoadData");
  *(void **)&get_fn = dlsym(dl, "cuModuleGetFunction");
  *(void **)&launch = dlsym(dl, "cuLaunchKernel");
  *(void **)&sync = dlsym(dl, "cuCtxSynchronize");
  if (!init || !dev_get || !retain || !release || !push || !pop || !load || !get_fn || !launch ||
      !sync) {
    snprintf(why, cap, "libcuda lacks an entry point the fault needs");
    return -1;
  }
  int dev = 0, r;
  void *ctx = NULL, *mod = NULL, *fn = NULL, *popped = NULL;
  if ((r = init(0)) || (r = dev_get(&dev, 0)) || (r = retain(&ctx, dev))) {
    snprintf(why, cap, "cuInit/cuDeviceGet/cuDevicePrimaryCtxRetain: CUresult %d", r);
    return -1;
  }
  if ((r = push(ctx))) {
    release(dev);
    snprintf(why, cap, "cuCtxPushCurrent: CUresult %d", r);
    return -1;
  }
  int result = -1;
  if ((r = load(&mod, fault_ptx)) || (r = get_fn(&fn, mod, "vyre_test_fault")) ||
      (r = launch(fn, 1, 1, 1, 1, 1, 1, 0, NULL, NULL, NULL))) {
    snprintf(why, cap, "loading or launching vyre_test_fault: CUresult %d", r);
  } else {
    result = sync();
    snprintf(why, cap, "cuCtxSynchronize after vyre_test_fault: CUresult %d", result);
  }
  /* The module goes with the (now unusable) context. */
  pop(&popped);
  release(dev);
  return result;
}

/* Runs in the child, as a one-test suite of its own. */
START_TEST(test_lost_child) {
  vyre_error err = VYRE_ERROR_INIT;
  vyre_backend *x = NULL;
  ck_assert_msg(cuda_reg->create(NULL, &x, &err) == VYRE_OK, "create: %s", err.message);
  /* The instance's primary context takes an illegal address. */
  char why[256];
  int fault = fault_primary_context(why, sizeof why);
  ck_assert_msg(fault == 700, "the fault kernel poisons the primary context: %s", why);
  prog inc = prog_inc();
  vyre_program_ref r = ref_of(&inc);
  uint32_t v[300] = {0};
  vyre_input in[1] = {{v, sizeof v}};
  vyre_outputs *out = NULL;
  ck_assert_int_eq(x->vt->dispatch(x, &r, in, 1, NULL, &out, NULL, &err), VYRE_DEVICE_LOST);
  ck_assert_msg(strstr(err.message, "CUDA_ERROR_ILLEGAL_ADDRESS") && strstr(err.message, "Fix:"),
                "device lost names the cause and a fix: %s", err.message);
  ck_assert_int_eq(x->vt->dispatch(x, &r, in, 1, NULL, &out, NULL, &err), VYRE_DEVICE_LOST);
  ck_assert_msg(strstr(err.message, "device lost") != NULL, "later calls fail fast: %s",
                err.message);
  x->vt->destroy(x);
  x = NULL;
  vyre_status st = cuda_reg->create(NULL, &x, &err);
  if (st == VYRE_OK) {
    /* A driver that recovers in-process: then the new instance must work. */
    ck_assert_msg(x->vt->dispatch(x, &r, in, 1, NULL, &out, NULL, &err) == VYRE_OK,
                  "a new instance after the lost one: %s", err.message);
    x->vt->outputs_free(x, out);
    x->vt->destroy(x);
    printf("device-lost child: a new instance in the same process works\n");
  } else {
    ck_assert_msg(st == VYRE_DEVICE_LOST && strstr(err.message, "restart the process"),
                  "a new instance in the spoiled process says so: %s", err.message);
    printf("device-lost child: a new instance in the same process is refused: %s\n",
           err.message);
  }
  free(inc.bytes);
}
END_TEST

static int device_lost_child(void) {
  Suite *s = suite_create("cuda_gpu_lost_child");
  TCase *tc = tcase_create("lost");
  tcase_set_timeout(tc, 300);
  tcase_add_test(tc, test_lost_child);
  suite_add_tcase(s, tc);
  SRunner *sr = srunner_create(s);
  srunner_set_fork_status(sr, CK_NOFORK);
  srunner_run_all(sr, CK_NORMAL);
  int failed = srunner_ntests_failed(sr);
  srunner_free(sr);
  fflush(stdout);
  return failed ? 1 : 0;
}

START_TEST(test_device_lost) {
  char *argv[] = {(char *)"check_cuda_gpu", (char *)"--device-lost-child", NULL};
  pid_t pid;
  fflush(stdout);
  int rc = posix_spawn(&pid, "/proc/self/exe", NULL, NULL, argv, environ);
  ck_assert_msg(rc == 0, "spawn the device-lost child: %s", strerror(rc));
  int status = 0;
  ck_assert_msg(waitpid(pid, &status, 0) == pid, "wait for the device-lost child");
  ck_assert_msg(WIFEXITED(status) && WEXITSTATUS(status) == 0,
                "the device-lost child saw the expected behaviour (status %d)", status);
  /* This process, and its instance, are untouched by the child's fault. */
  prog inc = prog_inc();
  uint32_t v[300];
  for (uint32_t i = 0; i < 300; i++) v[i] = i;
  vyre_input in[1] = {{v, sizeof v}};
  compare("after a device lost in another process", &inc, in, 1, NULL);
  n_features++;
  free(inc.bytes);
}
END_TEST

/* ------------------------------------------------------------------ */
/* timeout: a kernel that runs for many seconds, dispatched with a     */
/* 200 ms timeout (vyre_limits), in a child process of its own         */
/* ------------------------------------------------------------------ */
static uint64_t mono_ns(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/* One invocation: acc = acc * 3 + k for k from 0 to 2^32 - 2, then
 * o[0] = acc.  The data dependence keeps every iteration (tens of
 * seconds on an H100), yet the kernel ends on its own. */
static prog prog_forever(void) {
  vyre_builder *b = vyre_builder_new(1, 1, 1);
  uint32_t o = vyre_b_buffer(b, "o", UINT32_MAX, VYRE_ACCESS_WRITE_ONLY, VYRE_T_U32, 1, 0);
  uint32_t acc = vyre_b_local(b, VYRE_T_U32), k = vyre_b_local(b, VYRE_T_U32);
  vyre_b_let(b, acc, vyre_b_u32(b, 1));
  vyre_b_loop(b, k, vyre_b_u32(b, 0), vyre_b_u32(b, UINT32_MAX));
  uint32_t m = vyre_b_bin(b, VYRE_OP_MUL, vyre_b_get(b, acc), vyre_b_u32(b, 3));
  vyre_b_assign(b, acc, vyre_b_bin(b, VYRE_OP_ADD, m, vyre_b_get(b, k)));
  vyre_b_end(b);
  vyre_b_store(b, o, vyre_b_u32(b, 0), vyre_b_get(b, acc));
  return finish(b, "forever");
}

/* out[gid] = in[gid] + 5 over n u32. */
static prog prog_plus5(void) {
  vyre_builder *b = vyre_builder_new(64, 1, 1);
  uint32_t in = vyre_b_buffer(b, "in", UINT32_MAX, VYRE_ACCESS_READ_ONLY, VYRE_T_U32, 0, 0);
  uint32_t out = vyre_b_buffer(b, "out", UINT32_MAX, VYRE_ACCESS_WRITE_ONLY, VYRE_T_U32, 1000, 0);
  uint32_t g = vyre_b_gid(b, 0);
  vyre_b_store(b, out, g, vyre_b_bin(b, VYRE_OP_ADD, vyre_b_load(b, in, g), vyre_b_u32(b, 5)));
  return finish(b, "plus5");
}

static void check_plus5(vyre_backend *x, const char *what) {
  prog p = prog_plus5();
  vyre_program_ref r = ref_of(&p);
  uint32_t v[1000];
  for (uint32_t i = 0; i < 1000; i++) v[i] = i * 7u;
  vyre_input in[1] = {{v, sizeof v}};
  vyre_outputs *out = NULL;
  vyre_error err = VYRE_ERROR_INIT;
  ck_assert_msg(x->vt->dispatch(x, &r, in, 1, NULL, &out, NULL, &err) == VYRE_OK, "%s: %s", what,
                err.message);
  ck_assert_uint_eq(out->count, 1);
  ck_assert_uint_eq(out->items[0].size, sizeof v);
  const uint32_t *o = out->items[0].data;
  for (uint32_t i = 0; i < 1000; i++)
    ck_assert_msg(o[i] == i * 7u + 5u, "%s: out[%u] = %u", what, i, o[i]);
  x->vt->outputs_free(x, out);
  free(p.bytes);
}

START_TEST(test_timeout_child) {
  vyre_error err = VYRE_ERROR_INIT;
  vyre_backend *x = NULL;
  ck_assert_msg(cuda_reg->create(NULL, &x, &err) == VYRE_OK, "create: %s", err.message);
  check_plus5(x, "before the timeout");
  prog p = prog_forever();
  vyre_program_ref r = ref_of(&p);
  vyre_limits lim = {{sizeof lim, VYRE_EXT_LIMITS, NULL}, 200000000ull, 0};
  vyre_dispatch_options o = {.struct_size = sizeof o, .next = &lim.head};
  vyre_outputs *out = NULL;
  uint64_t t0 = mono_ns();
  vyre_status st = x->vt->dispatch(x, &r, NULL, 0, &o, &out, NULL, &err);
  uint64_t took = mono_ns() - t0;
  printf("timeout child: the runaway dispatch returned %s after %.3f s: %s\n",
         vyre_status_name(st), took / 1e9, err.message);
  ck_assert_msg(st == VYRE_LIMIT, "the runaway dispatch fails with VYRE_LIMIT: %s (%s)",
                vyre_status_name(st), err.message);
  ck_assert_msg(strstr(err.message, "budget exceeded") && strstr(err.message, "Fix:"), "%s",
                err.message);
  ck_assert_ptr_null(out);
  /* 200 ms plus the first compile of the kernel; well within 5 s. */
  ck_assert_msg(took >= 200000000ull && took < 5000000000ull, "returned after %.3f s",
                took / 1e9);
  /* The instance is lost: fail fast. */
  t0 = mono_ns();
  ck_assert_int_eq(x->vt->dispatch(x, &r, NULL, 0, NULL, &out, NULL, &err), VYRE_DEVICE_LOST);
  ck_assert_msg(strstr(err.message, "timeout") && strstr(err.message, "Fix:"), "%s", err.message);
  ck_assert_msg(mono_ns() - t0 < 100000000ull, "lost calls fail fast");
  t0 = mono_ns();
  x->vt->destroy(x);
  printf("timeout child: destroying the lost instance took %.3f s\n", (mono_ns() - t0) / 1e9);
  /* A new instance (this process holds no other) is correct. */
  x = NULL;
  t0 = mono_ns();
  ck_assert_msg(cuda_reg->create(NULL, &x, &err) == VYRE_OK, "a new instance: %s", err.message);
  printf("timeout child: a new instance in %.3f s\n", (mono_ns() - t0) / 1e9);
  check_plus5(x, "a new instance after the timeout");
  /* A timeout that is not reached changes nothing. */
  prog q = prog_plus5();
  vyre_program_ref qr = ref_of(&q);
  uint32_t v[1000] = {0};
  vyre_input in[1] = {{v, sizeof v}};
  lim.timeout_ns = 10000000000ull;
  ck_assert_msg(x->vt->dispatch(x, &qr, in, 1, &o, &out, NULL, &err) == VYRE_OK, "%s",
                err.message);
  ck_assert_uint_eq(((const uint32_t *)out->items[0].data)[999], 5);
  x->vt->outputs_free(x, out);
  x->vt->destroy(x);
  free(q.bytes);
  free(p.bytes);
}
END_TEST

static int timeout_child(void) {
  /* The parent's selection (CK_RUN_CASE=lost...) must not skip the one
   * test the child exists for. */
  static const char *const sel[] = {"CK_RUN_CASE", "CK_RUN_SUITE", "CK_INCLUDE_TAGS",
                                    "CK_EXCLUDE_TAGS"};
  for (size_t i = 0; i < sizeof sel / sizeof sel[0]; i++) unsetenv(sel[i]);
  Suite *s = suite_create("cuda_gpu_timeout_child");
  TCase *tc = tcase_create("timeout");
  tcase_set_timeout(tc, 300);
  tcase_add_test(tc, test_timeout_child);
  suite_add_tcase(s, tc);
  SRunner *sr = srunner_create(s);
  srunner_set_fork_status(sr, CK_NOFORK);
  srunner_run_all(sr, CK_NORMAL);
  int failed = srunner_ntests_failed(sr), ran = srunner_ntests_run(sr);
  srunner_free(sr);
  fflush(stdout);
  return failed || ran != 1 ? 1 : 0;
}

/* The child: a process of its own, so that its lost instance is the only
 * holder of the primary context (another holder would keep the runaway
 * kernel's context, and a new instance's health check would wait for
 * the kernel). */
START_TEST(test_timeout) {
  char *argv[] = {(char *)"check_cuda_gpu", (char *)"--timeout-child", NULL};
  pid_t pid;
  fflush(stdout);
  uint64_t t0 = mono_ns();
  int rc = posix_spawn(&pid, "/proc/self/exe", NULL, NULL, argv, environ);
  ck_assert_msg(rc == 0, "spawn the timeout child: %s", strerror(rc));
  int status = 0;
  ck_assert_msg(waitpid(pid, &status, 0) == pid, "wait for the timeout child");
  printf("timeout: the child process ran %.3f s\n", (mono_ns() - t0) / 1e9);
  ck_assert_msg(WIFEXITED(status) && WEXITSTATUS(status) == 0,
                "the timeout child saw the expected behaviour (status %d)", status);
  /* This process's instance is untouched. */
  check_plus5(cuda, "the parent's instance after the child's timeout");
  n_features++;
}
END_TEST

/* ------------------------------------------------------------------ */
/* interop: the CUDA interop extension with memory and streams the     */
/* test makes itself through libcuda, as a host application would     */
/* ------------------------------------------------------------------ */
typedef struct host_driver {
  int (*push)(void *);
  int (*pop)(void **);
  int (*mem_alloc)(uint64_t *, size_t);
  int (*mem_free)(uint64_t);
  int (*htod)(uint64_t, const void *, size_t);
  int (*dtoh)(void *, uint64_t, size_t);
  int (*memset32)(uint64_t, unsigned, size_t, void *);
  int (*stream_create)(void **, unsigned);
  int (*stream_destroy)(void *);
  int (*stream_sync)(void *);
  int (*host_func)(void *, void (*)(void *), void *);
  int (*event_create)(void **, unsigned);
  int (*event_record)(void *, void *);
  int (*event_sync)(void *);
  int (*event_destroy)(void *);
} host_driver;

/* libcuda's entry points the test uses (the library the plugin loaded:
 * dlopen hands back the same one). */
static void host_driver_load(host_driver *d) {
  const char *path = getenv("VYRE_CUDA_DRIVER");
  void *dl = dlopen(path && *path ? path : "libcuda.so.1", RTLD_NOW | RTLD_LOCAL | RTLD_NODELETE);
  ck_assert_msg(dl != NULL, "libcuda loads: %s", dlerror());
  static const char *names[] = {"cuCtxPushCurrent_v2", "cuCtxPopCurrent_v2", "cuMemAlloc_v2",
                                "cuMemFree_v2",        "cuMemcpyHtoD_v2",    "cuMemcpyDtoH_v2",
                                "cuMemsetD32Async",    "cuStreamCreate",     "cuStreamDestroy_v2",
                                "cuStreamSynchronize", "cuLaunchHostFunc",   "cuEventCreate",
                                "cuEventRecord",       "cuEventSynchronize", "cuEventDestroy_v2"};
  void **slots = (void **)d;
  _Static_assert(sizeof(host_driver) == sizeof names / sizeof names[0] * sizeof(void *),
                 "one name per entry");
  for (size_t i = 0; i < sizeof names / sizeof names[0]; i++) {
    slots[i] = dlsym(dl, names[i]);
    ck_assert_msg(slots[i] != NULL, "libcuda exports %s", names[i]);
  }
}

/* A host function enqueued on the host's stream: holds the stream back so
 * that work vyre did not order after it would visibly run too early. */
static void hold_stream(void *user) { usleep((useconds_t)(uintptr_t)user); }

#define CU_OK(call) ck_assert_msg((call) == 0, "%s succeeds", #call)

START_TEST(test_interop) {
  host_driver d;
  host_driver_load(&d);
  vyre_error err = VYRE_ERROR_INIT;
  const void *ext = NULL;
  ck_assert_msg(cuda->vt->get_extension(cuda, VYRE_CUDA_INTEROP_NAME, 1, &ext, &err) == VYRE_OK,
                "get_extension: %s", err.message);
  const vyre_cuda_interop *cu = ext;
  void *ctx = NULL;
  int32_t dev = -1;
  ck_assert_int_eq(cu->context(cuda, &ctx, &dev, &err), VYRE_OK);
  ck_assert_msg(ctx != NULL && dev == 0, "the instance runs in device 0's primary context");
  CU_OK(d.push(ctx));
  void *hs = NULL;
  CU_OK(d.stream_create(&hs, 1 /* CU_STREAM_NON_BLOCKING */));

  /* 64 MiB allocated outside vyre, filled, imported without a copy. */
  const uint32_t n = 16u << 20;
  const size_t bytes = (size_t)n * 4;
  uint32_t *host = malloc(bytes);
  for (uint32_t i = 0; i < n; i++) host[i] = i;
  uint64_t mem = 0;
  CU_OK(d.mem_alloc(&mem, bytes));
  CU_OK(d.htod(mem, host, bytes));
  vyre_resident h = 0;
  ck_assert_msg(cu->resident_import(cuda, mem, bytes, &h, &err) == VYRE_OK, "import: %s",
                err.message);
  uint64_t ptr = 0, size = 0;
  ck_assert_int_eq(cu->resident_pointer(cuda, h, &ptr, &size, &err), VYRE_OK);
  ck_assert_msg(ptr == mem && size == bytes, "resident_pointer of the import is the memory");
  ck_assert_uint_eq(metric(cuda, "resident.imported_bytes"), bytes);

  /* Stream order, before: the host's stream is held 100 ms, then a
   * memset writes 1000 everywhere; the dispatch must see the memset.
   * The program is compiled first: a cold compile inside the ordered
   * call could outlast the hold and hide a missing join. */
  prog inc = prog_inc();
  vyre_program_ref r = ref_of(&inc);
  ck_assert_int_eq(cuda->vt->dispatch_resident(cuda, &r, &h, 1, NULL, NULL, &err), VYRE_OK);
  vyre_cuda_stream cs = {{sizeof cs, VYRE_EXT_CUDA_STREAM, NULL}, hs};
  vyre_dispatch_options o = {.struct_size = sizeof o, .next = &cs.head};
  CU_OK(d.host_func(hs, hold_stream, (void *)(uintptr_t)100000));
  CU_OK(d.memset32(mem, 1000, n, hs));
  struct timespec w0, w1;
  clock_gettime(CLOCK_MONOTONIC, &w0);
  ck_assert_msg(cuda->vt->dispatch_resident(cuda, &r, &h, 1, &o, NULL, &err) == VYRE_OK,
                "dispatch_resident on the host's stream: %s", err.message);
  clock_gettime(CLOCK_MONOTONIC, &w1);
  double wall_ms = (w1.tv_sec - w0.tv_sec) * 1e3 + (w1.tv_nsec - w0.tv_nsec) / 1e6;
  CU_OK(d.dtoh(host, mem, bytes));
  for (uint32_t i = 0; i < n; i += 4099)
    ck_assert_msg(host[i] == 1001, "word %u is %u: the kernel ran after the host's memset (1000) "
                  "and added 1", i, host[i]);
  ck_assert_uint_eq(host[n - 1], 1001);
  ck_assert_msg(wall_ms > 50, "the call waited for the held host stream (%.1f ms)", wall_ms);

  /* The same on the legacy default stream. */
  vyre_cuda_stream legacy = {{sizeof legacy, VYRE_EXT_CUDA_STREAM, NULL}, NULL};
  vyre_dispatch_options ol = {.struct_size = sizeof ol, .next = &legacy.head};
  CU_OK(d.host_func(NULL, hold_stream, (void *)(uintptr_t)50000));
  CU_OK(d.memset32(mem, 5, n, NULL));
  ck_assert_msg(cuda->vt->dispatch_resident(cuda, &r, &h, 1, &ol, NULL, &err) == VYRE_OK,
                "dispatch_resident on the legacy stream: %s", err.message);
  CU_OK(d.dtoh(host, mem, bytes));
  ck_assert_msg(host[0] == 6 && host[n / 2] == 6 && host[n - 1] == 6,
                "after the legacy stream's memset (5) and one increment: %u %u %u", host[0],
                host[n / 2], host[n - 1]);

  /* A sub-range import: the kernel touches exactly that range. */
  vyre_resident part = 0;
  ck_assert_int_eq(cu->resident_import(cuda, mem + 4096, 4096, &part, &err), VYRE_OK);
  ck_assert_int_eq(cuda->vt->dispatch_resident(cuda, &r, &part, 1, NULL, NULL, &err), VYRE_OK);
  CU_OK(d.dtoh(host, mem, 3 * 4096));
  ck_assert_msg(host[1023] == 6 && host[1024] == 7 && host[2047] == 7 && host[2048] == 6,
                "only words [1024, 2048) were incremented: %u %u %u %u", host[1023], host[1024],
                host[2047], host[2048]);
  ck_assert_int_eq(cuda->vt->resident_free(cuda, part, &err), VYRE_OK);

  /* Graph replay over the import on the host's stream; freeing the handle
   * drops the graph, and the memory stays the host's. */
  vyre_sequence_step step = {sizeof step, 1, &r, &h, &o};
  uint32_t first[4];
  vyre_resident_copy read = {h, 0, first, sizeof first};
  uint64_t entries = metric(cuda, "graph.entries");
  CU_OK(d.memset32(mem, 10, n, hs));
  for (int k = 0; k < 2; k++)
    ck_assert_msg(cuda->vt->dispatch_sequence(cuda, &step, 1, 4, &read, 1, NULL, &err) == VYRE_OK,
                  "sequence over the import: %s", err.message);
  ck_assert_msg(first[0] == 18 && first[3] == 18, "10 + 2 x 4 increments: %u", first[0]);
  ck_assert_uint_eq(metric(cuda, "graph.entries"), entries + 1);
  ck_assert_int_eq(cuda->vt->resident_free(cuda, h, &err), VYRE_OK);
  ck_assert_uint_eq(metric(cuda, "graph.entries"), entries);
  ck_assert_uint_eq(metric(cuda, "resident.imported_bytes"), 0);
  CU_OK(d.dtoh(host, mem + (uint64_t)(n - 1) * 4, 4));
  ck_assert_uint_eq(host[0], 18);

  /* Stream order, after: the host's later work waits for an async
   * dispatch's (64 MiB in and out). */
  for (uint32_t i = 0; i < n; i++) host[i] = i;
  vyre_input in[1] = {{host, bytes}};
  vyre_pending pend = 0;
  CU_OK(d.stream_sync(hs));
  ck_assert_msg(cuda->vt->dispatch_async(cuda, &r, in, 1, &o, &pend, &err) == VYRE_OK,
                "dispatch_async on the host's stream: %s", err.message);
  void *ev = NULL;
  CU_OK(d.event_create(&ev, 2 /* CU_EVENT_DISABLE_TIMING */));
  CU_OK(d.event_record(ev, hs));
  CU_OK(d.event_sync(ev));
  int ready = 0;
  ck_assert_int_eq(cuda->vt->pending_poll(cuda, pend, &ready, &err), VYRE_OK);
  ck_assert_msg(ready == 1, "work enqueued on the host's stream after dispatch_async ran after "
                            "the dispatch's own work");
  vyre_outputs *out = NULL;
  ck_assert_int_eq(cuda->vt->pending_wait(cuda, pend, &out, NULL, &err), VYRE_OK);
  ck_assert_uint_eq(((uint32_t *)out->items[0].data)[n - 1], n);
  cuda->vt->outputs_free(cuda, out);
  CU_OK(d.event_destroy(ev));

  /* resident_pointer of vyre's own buffer, read outside vyre. */
  vyre_resident own = 0;
  ck_assert_int_eq(cuda->vt->resident_alloc(cuda, 4096, &own, &err), VYRE_OK);
  for (uint32_t i = 0; i < 1024; i++) host[i] = 0xC0DE0000u + i;
  ck_assert_int_eq(cuda->vt->resident_upload(cuda, own, host, 4096, &err), VYRE_OK);
  ck_assert_int_eq(cu->resident_pointer(cuda, own, &ptr, &size, &err), VYRE_OK);
  uint32_t back[1024];
  CU_OK(d.dtoh(back, ptr, sizeof back));
  ck_assert_msg(size == 4096 && memcmp(back, host, sizeof back) == 0,
                "cuMemcpyDtoH of resident_pointer reads what resident_upload wrote");
  ck_assert_int_eq(cuda->vt->resident_free(cuda, own, &err), VYRE_OK);

  /* Refusals on a real driver: misaligned, past the end, not device memory. */
  vyre_resident bad = 0;
  ck_assert_int_eq(cu->resident_import(cuda, mem + 8, 64, &bad, &err), VYRE_INVALID_ARGUMENT);
  ck_assert_int_eq(cu->resident_import(cuda, mem + bytes - 16, 32, &bad, &err),
                   VYRE_INVALID_ARGUMENT);
  ck_assert_msg(strstr(err.message, "run past") != NULL, "past the end: %s", err.message);
  ck_assert_int_eq(cu->resident_import(cuda, (uint64_t)(uintptr_t)back & ~15ull, 64, &bad, &err),
                   VYRE_INVALID_ARGUMENT);
  /* Plain host memory: unknown to CUDA, or host memory where the kernel
   * lets the GPU reach pageable memory (HMM): refused either way. */
  ck_assert_msg(strstr(err.message, "not memory CUDA knows") || strstr(err.message, "host memory"),
                "host stack: %s", err.message);
  printf("check_cuda_gpu: interop: 64 MiB imported zero copy, ordered on a host stream (the "
         "call waited %.1f ms for the 100 ms hold) and the legacy stream, replayed in a graph, "
         "freed by the host\n",
         wall_ms);

  CU_OK(d.mem_free(mem));
  CU_OK(d.stream_destroy(hs));
  void *popped = NULL;
  CU_OK(d.pop(&popped));
  n_features += 6;
  free(host);
  free(inc.bytes);
}
END_TEST

/* ------------------------------------------------------------------ */
/* devices: one instance per device, several threads each              */
/* ------------------------------------------------------------------ */
#define DEV_THREADS 3
#define DEV_ROUNDS 20
#define DEV_N 100003u

typedef struct dev_job {
  vyre_backend *b;
  vyre_program_ref prog;
  uint32_t k, thread;
  char failure[300];
} dev_job;

/* out[i] = in[i] * k (u32), k = device + 3: a result computed on another
 * device's instance would be wrong. */
static prog prog_times(uint32_t k) {
  vyre_builder *b = vyre_builder_new(256, 1, 1);
  uint32_t in = vyre_b_buffer(b, "in", UINT32_MAX, VYRE_ACCESS_READ_ONLY, VYRE_T_U32, 0, 0);
  uint32_t out = vyre_b_buffer(b, "out", UINT32_MAX, VYRE_ACCESS_WRITE_ONLY, VYRE_T_U32, DEV_N, 0);
  uint32_t g = vyre_b_gid(b, 0);
  vyre_b_store(b, out, g, vyre_b_bin(b, VYRE_OP_MUL, vyre_b_load(b, in, g), vyre_b_u32(b, k)));
  return finish(b, "prog_times");
}

static void *dev_thread(void *arg) {
  dev_job *j = arg;
  uint32_t *in = malloc(DEV_N * 4u);
  if (!in) {
    snprintf(j->failure, sizeof j->failure, "out of host memory");
    return NULL;
  }
  for (uint32_t r = 0; r < DEV_ROUNDS && !j->failure[0]; r++) {
    for (uint32_t i = 0; i < DEV_N; i++) in[i] = i * 2654435761u + j->thread + r;
    vyre_input inputs[1] = {{in, DEV_N * 4u}};
    vyre_outputs *out = NULL;
    vyre_error e = VYRE_ERROR_INIT;
    if (j->b->vt->dispatch(j->b, &j->prog, inputs, 1, NULL, &out, NULL, &e) != VYRE_OK) {
      snprintf(j->failure, sizeof j->failure, "k %u thread %u round %u: %.200s", j->k, j->thread,
               r, e.message);
      break;
    }
    const uint32_t *o = out->items[0].data;
    for (uint32_t i = 0; i < DEV_N; i++)
      if (o[i] != in[i] * j->k) {
        snprintf(j->failure, sizeof j->failure, "k %u thread %u round %u: out[%u] = %u, want %u",
                 j->k, j->thread, r, i, o[i], in[i] * j->k);
        break;
      }
    j->b->vt->outputs_free(j->b, out);
  }
  free(in);
  return NULL;
}

START_TEST(test_devices) {
  vyre_device_profile p = {.struct_size = sizeof p};
  vyre_error err = VYRE_ERROR_INIT;
  ck_assert_int_eq(cuda->vt->device_profile(cuda, &p, &err), VYRE_OK);
  uint32_t count = p.device_count;
  ck_assert_msg(count >= 1 && count <= 64, "the profile counts the devices (%u)", count);
  vyre_backend *b[64] = {NULL};
  prog progs[64];
  static dev_job jobs[64][DEV_THREADS];
  pthread_t tid[64][DEV_THREADS];
  for (uint32_t d = 0; d < count; d++) {
    vyre_backend_options o = {sizeof o, d, 0, 0, NULL};
    ck_assert_msg(cuda_reg->create(&o, &b[d], &err) == VYRE_OK, "create on device %u: %s", d,
                  err.message);
    vyre_device_profile pd = {.struct_size = sizeof pd};
    ck_assert_int_eq(b[d]->vt->device_profile(b[d], &pd, &err), VYRE_OK);
    ck_assert_uint_eq(pd.ordinal, d);
    ck_assert_uint_eq(pd.device_count, count);
    /* cuDeviceGetUuid_v2: every real device has one, and its own. */
    static uint8_t uuids[64][16];
    memcpy(uuids[d], pd.uuid, 16);
    static const uint8_t zero[16];
    ck_assert_msg(memcmp(pd.uuid, zero, 16) != 0, "device %u reports its UUID", d);
    for (uint32_t e = 0; e < d; e++)
      ck_assert_msg(memcmp(uuids[e], pd.uuid, 16) != 0, "devices %u and %u have distinct UUIDs",
                    e, d);
    char u[40];
    for (int i = 0, at = 0; i < 16; i++) {
      if (i == 4 || i == 6 || i == 8 || i == 10) u[at++] = '-';
      at += snprintf(u + at, sizeof u - (size_t)at, "%02x", pd.uuid[i]);
    }
    printf("check_cuda_gpu: device %u: %s, sm_%u%u, %llu MiB, GPU-%s\n", d, pd.name,
           pd.compute_major, pd.compute_minor, (unsigned long long)(pd.total_memory >> 20), u);
    progs[d] = prog_times(d + 3);
  }
  for (uint32_t d = 0; d < count; d++)
    for (uint32_t t = 0; t < DEV_THREADS; t++) {
      jobs[d][t] = (dev_job){b[d], ref_of(&progs[d]), d + 3, t, ""};
      ck_assert_int_eq(pthread_create(&tid[d][t], NULL, dev_thread, &jobs[d][t]), 0);
    }
  for (uint32_t d = 0; d < count; d++)
    for (uint32_t t = 0; t < DEV_THREADS; t++) {
      pthread_join(tid[d][t], NULL);
      ck_assert_msg(!jobs[d][t].failure[0], "device %u: %s", d, jobs[d][t].failure);
    }
  for (uint32_t d = 0; d < count; d++) {
    ck_assert_uint_eq(metric(b[d], "dispatch.count"), DEV_THREADS * DEV_ROUNDS);
    b[d]->vt->destroy(b[d]);
    free(progs[d].bytes);
  }
  /* One past the last ordinal. */
  vyre_backend_options o = {sizeof o, count, 0, 0, NULL};
  vyre_backend *none = NULL;
  ck_assert_int_eq(cuda_reg->create(&o, &none, &err), VYRE_NO_DEVICE);
  ck_assert_msg(strstr(err.message, "not present") && strstr(err.message, "Fix:"),
                "a missing device says so: %s", err.message);
  printf("check_cuda_gpu: %u device%s x %u threads x %u dispatches, one instance per device, "
         "every output checked\n", count, count == 1 ? "" : "s", DEV_THREADS, DEV_ROUNDS);
  n_features++;
}
END_TEST

/* ------------------------------------------------------------------ */
static Suite *suite(void) {
  Suite *s = suite_create("cuda_gpu");
  TCase *progs = tcase_create("programs");
  tcase_set_timeout(progs, 600);
  tcase_add_test(progs, test_f32_math);
  tcase_add_test(progs, test_strict_transcendentals);
  tcase_add_test(progs, test_int_math);
  tcase_add_test(progs, test_saxpy_large);
  tcase_add_test(progs, test_elementwise_edges);
  tcase_add_test(progs, test_histogram);
  tcase_add_test(progs, test_block_reduce);
  tcase_add_test(progs, test_subgroups);
  tcase_add_test(progs, test_storage_types);
  tcase_add_test(progs, test_oob);
  suite_add_tcase(s, progs);
  TCase *feat = tcase_create("features");
  tcase_set_timeout(feat, 600);
  tcase_add_test(feat, test_resident);
  tcase_add_test(feat, test_staging_bytes);
  tcase_add_test(feat, test_async_timed);
  tcase_add_test(feat, test_sequences);
  tcase_add_test(feat, test_threads);
  tcase_add_test(feat, test_fixpoint);
  tcase_add_test(feat, test_grid_barrier);
  tcase_add_test(feat, test_trap);
  tcase_add_test(feat, test_indirect);
  tcase_add_test(feat, test_disk_cache);
  suite_add_tcase(s, feat);
  TCase *interop = tcase_create("interop");
  tcase_set_timeout(interop, 600);
  tcase_add_test(interop, test_interop);
  suite_add_tcase(s, interop);
  TCase *devices = tcase_create("devices");
  tcase_set_timeout(devices, 600);
  tcase_add_test(devices, test_devices);
  suite_add_tcase(s, devices);
  TCase *lost = tcase_create("lost");
  tcase_set_timeout(lost, 600);
  tcase_add_test(lost, test_device_lost);
  tcase_add_test(lost, test_timeout);
  suite_add_tcase(s, lost);
  return s;
}

static const vyre_registration *load(const char *path, vyre_error *err) {
  void *dl = dlopen(path, RTLD_NOW | RTLD_LOCAL);
  if (!dl) {
    vyre_error_set(err, VYRE_IO, 0, "dlopen(%s): %s", path, dlerror());
    return NULL;
  }
  vyre_plugin_entry_fn entry = (vyre_plugin_entry_fn)dlsym(dl, VYRE_PLUGIN_ENTRY_SYMBOL);
  const vyre_registration *r = NULL;
  if (!entry) {
    vyre_error_set(err, VYRE_IO, 0, "%s has no %s", path, VYRE_PLUGIN_ENTRY_SYMBOL);
    return NULL;
  }
  if (entry(VYRE_ABI_MAJOR, VYRE_ABI_MINOR, &r, err) != VYRE_OK) return NULL;
  return r; /* never dlclosed, like a host */
}

int main(int argc, char **argv) {
  const char *build = getenv("VYRE_BUILD_DIR");
  if (!build) build = ".";
  char cuda_path[1024], ref_path[1024];
  snprintf(cuda_path, sizeof cuda_path, "%s/plugin/runtime/.libs/libvyre-cuda.so", build);
  snprintf(ref_path, sizeof ref_path, "%s/host-stub/ref/.libs/libvyre-ref.so", build);
  snprintf(cache_dir, sizeof cache_dir, "/tmp/vyre-cuda-gpu-XXXXXX");
  if (!mkdtemp(cache_dir)) {
    perror("check_cuda_gpu: mkdtemp");
    return 1;
  }
  setenv("VYRE_CACHE_DIR", cache_dir, 1);
  vyre_error err = VYRE_ERROR_INIT;
  cuda_reg = load(cuda_path, &err);
  if (!cuda_reg) {
    fprintf(stderr, "check_cuda_gpu: cannot load the CUDA plugin: %s\n", err.message);
    return 1;
  }
  if (argc > 1 && (strcmp(argv[1], "--device-lost-child") == 0 ||
                   strcmp(argv[1], "--timeout-child") == 0)) {
    int bad = strcmp(argv[1], "--timeout-child") == 0 ? timeout_child() : device_lost_child();
    char rm[300];
    snprintf(rm, sizeof rm, "rm -rf '%s'", cache_dir);
    if (system(rm) != 0) fprintf(stderr, "check_cuda_gpu: could not remove %s\n", cache_dir);
    /* The runaway kernel may still run: this process's exit waits for
     * it in the driver (61 s on an H100, also with _exit). */
    return bad;
  }
  vyre_status st = cuda_reg->create(NULL, &cuda, &err);
  if (st == VYRE_NO_DEVICE) {
    printf("check_cuda_gpu: SKIP: %s\n", err.message);
    rmdir(cache_dir);
    return 77;
  }
  if (st != VYRE_OK) {
    fprintf(stderr, "check_cuda_gpu: CUDA backend create failed: %s\n", err.message);
    return 1;
  }
  ref_reg = load(ref_path, &err);
  if (!ref_reg || ref_reg->create(NULL, &ref, &err) != VYRE_OK) {
    fprintf(stderr, "check_cuda_gpu: the reference backend (%s) is needed to compare against: "
                    "%s. Fix: build host-stub/libvyre-ref.la in this tree\n",
            ref_path, err.message);
    cuda->vt->destroy(cuda);
    return 1;
  }
  vyre_device_profile p = {.struct_size = sizeof p};
  if (cuda->vt->device_profile(cuda, &p, &err) == VYRE_OK)
    printf("check_cuda_gpu: %s, sm_%u%u, %u SMs, %llu MiB, driver %u\n", p.name, p.compute_major,
           p.compute_minor, p.compute_units, (unsigned long long)(p.total_memory >> 20),
           p.driver_version);

  SRunner *sr = srunner_create(suite());
  srunner_set_fork_status(sr, CK_NOFORK); /* CUDA does not survive fork */
  srunner_run_all(sr, CK_NORMAL);
  int failed = srunner_ntests_failed(sr), run = srunner_ntests_run(sr);
  srunner_free(sr);
  printf("check_cuda_gpu: %d programs matched the reference bit for bit (%d MiB of inputs), "
         "%d feature checks passed; %d of %d tests failed\n",
         n_programs, n_bytes_mb, n_features, failed, run);
  if (cuda) cuda->vt->destroy(cuda);
  ref->vt->destroy(ref);
  char cmd[300];
  snprintf(cmd, sizeof cmd, "rm -rf '%s'", cache_dir);
  if (system(cmd) != 0) fprintf(stderr, "check_cuda_gpu: could not remove %s\n", cache_dir);
  return failed ? 1 : 0;
}
