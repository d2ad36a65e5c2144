/* mma_check_test.c -- the tensor-core harness's GPU-free logic (mma_check.h): argument parsing, the program's interface, bf16/f16 rounding, and the sampled check against a CPU stand-in for the GPU's C (right, off by more or less than the bound, NaN, a wrong layout, int8 wrapping past 2^31). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mma_check.h"

static int failures;
#define EXPECT(cond, ...)                                         \
  do {                                                            \
    if (!(cond)) {                                                \
      failures++;                                                 \
      printf("FAIL %s:%d: %s: ", __FILE__, __LINE__, #cond);      \
      printf(__VA_ARGS__);                                        \
      printf("\n");                                               \
    }                                                             \
  } while (0)

static uint64_t rng = 12345;
static uint32_t rnd(void) {
  rng = rng * 6364136223846793005ull + 1442695040888963407ull;
  return (uint32_t)(rng >> 32);
}

static void args(void) {
  mma_type t;
  uint32_t m, n, k;
  EXPECT(!mma_type_parse("bf16", &t) && t == MMA_BF16, "bf16 is a type");
  EXPECT(!mma_type_parse("i8", &t) && t == MMA_I8 && !strcmp(mma_type_name(t), "i8"), "i8 is a type");
  EXPECT(mma_type_parse("f32", &t), "f32 is no MMA input type");
  EXPECT(!mma_size_parse("4096x2048x8192", &m, &n, &k) && m == 4096 && n == 2048 && k == 8192, "MxNxK parses");
  EXPECT(mma_size_parse("4096x4096", &m, &n, &k), "two numbers are refused");
  EXPECT(mma_size_parse("0x16x16", &m, &n, &k), "zero is refused");
  EXPECT(mma_size_parse("16x16x16x", &m, &n, &k), "trailing text is refused");
  EXPECT(mma_size_parse("16x16x4294967296", &m, &n, &k), "a size past u32 is refused");
}

static void rounding(void) {
  EXPECT(mma_f32_to_bf16(1.0f) == 0x3F80, "bf16(1)");
  EXPECT(mma_f32_to_bf16(1.0f + 0x1p-8f) == 0x3F80, "a tie goes to even");
  EXPECT(mma_f32_to_bf16(1.0f + 3 * 0x1p-8f) == 0x3F82, "a tie goes to even (up)");
  EXPECT(mma_f32_to_f16(1.0f) == 0x3C00 && mma_f32_to_f16(-2.0f) == 0xC000, "f16(1), f16(-2)");
  EXPECT(mma_f32_to_f16(65504.0f) == 0x7BFF && mma_f32_to_f16(65520.0f) == 0x7C00, "f16 max, overflow");
  EXPECT(mma_f32_to_f16(0x1p-24f) == 1 && mma_f32_to_f16(0x1p-25f) == 0 && mma_f32_to_f16(0x1.8p-25f) == 1,
         "f16 subnormals round to nearest even");
  EXPECT(mma_f32_to_f16(1.0f + 0x1p-11f) == 0x3C00 && mma_f32_to_f16(1.0f + 3 * 0x1p-11f) == 0x3C02,
         "f16 ties to even");
  int bad = 0;
  for (uint32_t h = 0; h < 0x10000; h++) {
    if ((h & 0x7C00) != 0x7C00 && mma_f32_to_f16((float)mma_f16_value((uint16_t)h)) != h) bad++;
    if ((h & 0x7F80) != 0x7F80 && mma_f32_to_bf16((float)mma_bf16_value((uint16_t)h)) != h) bad++;
  }
  EXPECT(!bad, "%d finite f16/bf16 values do not round-trip", bad);
}

static const char *write(const char *text) {
  static char path[64];
  snprintf(path, sizeof path, "mma_check_test.%ld.vyre", (long)rnd());
  FILE *f = fopen(path, "w");
  fputs(text, f);
  fclose(f);
  return path;
}

static void program(void) {
  mma_prog p;
  char err[512];
  const char *ok = write("; The grid is 2-D: --grid N/128,M/64.\nworkgroup 128\nbuffer dims uniform u32 [3]\n"
                         "buffer A ro bf16\nbuffer As workgroup bf16 [4096] ; staged\nbuffer B ro bf16\n"
                         "buffer C wo f32\nbuffer Bs workgroup bf16[2048]\n%c0 = const u32 0\n");
  EXPECT(!mma_prog_read(ok, MMA_BF16, &p, err, sizeof err), "a bf16 program reads: %s", err);
  EXPECT(p.bn == 128 && p.bm == 64, "the tile from the header: %u x %u", p.bn, p.bm);
  EXPECT(p.nbuffers == 6 && p.role[0] == MMA_DIMS && p.role[1] == MMA_A && p.role[2] == MMA_WORKGROUP &&
             p.role[3] == MMA_B && p.role[4] == MMA_C && p.role[5] == MMA_WORKGROUP,
         "roles in declaration order");
  EXPECT(p.count[0] == 3 && p.count[2] == 4096 && p.count[5] == 2048 && p.count[1] == 0, "declared counts");
  EXPECT(!mma_shape_check(&p, MMA_BF16, 4096, 4096, 4096, err, sizeof err), "4096^3 fits: %s", err);
  EXPECT(mma_shape_check(&p, MMA_BF16, 4000, 4096, 4096, err, sizeof err) && strstr(err, "multiple of 64"),
         "M not a multiple of BM: %s", err);
  EXPECT(mma_shape_check(&p, MMA_I8, 4096, 4096, 4112, err, sizeof err) && strstr(err, "K of 32"),
         "int8 K not a multiple of 32: %s", err);
  EXPECT(mma_prog_read(ok, MMA_F16, &p, err, sizeof err) && strstr(err, "buffer A (ro bf16)"),
         "an f16 run of a bf16 program is refused: %s", err);
  remove(ok);
  /* bf16 bits in u16 buffers: the tiles say the type */
  const char *bits = write("; --grid N/16,M/16\nworkgroup 32\nbuffer dims uniform u32 [3]\nbuffer A ro u16\n"
                           "buffer B ro i16\nbuffer C wo f32\nbuffer As workgroup u16 [256]\n"
                           "local a mat_a_bf16\nlocal b mat_b_bf16\nlocal c mat_acc_f32\n");
  EXPECT(!mma_prog_read(bits, MMA_BF16, &p, err, sizeof err) && p.role[1] == MMA_A && p.role[2] == MMA_B,
         "a bf16 program of u16 and i16 buffers reads: %s", err);
  EXPECT(mma_prog_read(bits, MMA_F16, &p, err, sizeof err) && strstr(err, "local a is mat_a_bf16"),
         "an f16 run of it is refused by its tiles: %s", err);
  EXPECT(mma_prog_read(bits, MMA_I8, &p, err, sizeof err), "an i8 run of it is refused: %s", err);
  remove(bits);
  const char *u32ab = write("; --grid N/16,M/16\nbuffer dims uniform u32 [3]\nbuffer A ro u32\nbuffer B ro u32\n"
                            "buffer C wo f32\n");
  EXPECT(mma_prog_read(u32ab, MMA_BF16, &p, err, sizeof err) && strstr(err, "buffer A (ro u32)"),
         "u32 is not bf16's bits: %s", err);
  remove(u32ab);
  const char *nogrid = write("buffer dims uniform u32 [3]\nbuffer A ro i8\nbuffer B ro i8\nbuffer C wo i32\n");
  EXPECT(mma_prog_read(nogrid, MMA_I8, &p, err, sizeof err) && strstr(err, "--grid N/BN,M/BM"),
         "a program without its grid line: %s", err);
  remove(nogrid);
  const char *rwdims = write("; --grid N/16,M/16\nbuffer dims rw u32 [3]\nbuffer A ro i8\nbuffer B ro i8\n"
                             "buffer C rw i32\n");
  EXPECT(mma_prog_read(rwdims, MMA_I8, &p, err, sizeof err) && strstr(err, "buffer dims (rw u32)"),
         "dims must be uniform or ro: %s", err);
  remove(rwdims);
  const char *five = write("; --grid N/16,M/16\nbuffer dims uniform u32 [3]\nbuffer A ro i8\nbuffer B ro i8\n"
                           "buffer C wo i32\nbuffer D wo i32\n");
  EXPECT(mma_prog_read(five, MMA_I8, &p, err, sizeof err) && strstr(err, "buffer D"), "a fifth buffer: %s", err);
  remove(five);
  EXPECT(mma_prog_read("/nonexistent/x.vyre", MMA_I8, &p, err, sizeof err) && strstr(err, "cannot open"),
         "a missing file: %s", err);
  const char *src = getenv("VYRE_SRC_DIR");
  if (src) {
    char path[1024];
    snprintf(path, sizeof path, "%s/bench/mma_simple.vyre", src);
    EXPECT(!mma_prog_read(path, MMA_BF16, &p, err, sizeof err) && p.bn == 16 && p.bm == 16,
           "bench/mma_simple.vyre: %s", err);
  }
}

/* A stand-in for the GPU: C = A * B with f32 sums, 16 terms at a time
 * (an order and rounding unlike the reference's), or exact int8. */
static void cpu_mma(mma_type t, uint32_t m, uint32_t n, uint32_t k, const void *a, const void *b, void *c,
                    int b_kn) {
  for (uint32_t i = 0; i < m; i++)
    for (uint32_t j = 0; j < n; j++) {
      if (t == MMA_I8) {
        uint32_t s = 0;
        for (uint32_t kk = 0; kk < k; kk++)
          s += (uint32_t)((int32_t)((const int8_t *)a)[(size_t)i * k + kk] *
                          ((const int8_t *)b)[b_kn ? (size_t)kk * n + j : (size_t)j * k + kk]);
        ((int32_t *)c)[(size_t)i * n + j] = (int32_t)s;
        continue;
      }
      float acc = 0;
      for (uint32_t k0 = 0; k0 < k; k0 += 16) {
        float part = 0;
        for (uint32_t kk = k0; kk < k0 + 16; kk++) {
          uint16_t x = ((const uint16_t *)a)[(size_t)i * k + kk];
          uint16_t y = ((const uint16_t *)b)[b_kn ? (size_t)kk * n + j : (size_t)j * k + kk];
          double p = t == MMA_BF16 ? mma_bf16_value(x) * mma_bf16_value(y) : mma_f16_value(x) * mma_f16_value(y);
          part += (float)p;
        }
        acc += part;
      }
      ((float *)c)[(size_t)i * n + j] = acc;
    }
}

static void fill(mma_type t, void *p, size_t n, int small) {
  for (size_t i = 0; i < n; i++) {
    uint32_t u = rnd();
    if (t == MMA_I8)
      ((int8_t *)p)[i] = small ? (int8_t)((int)(u % 9) - 4) : (int8_t)(u >> 24);
    else {
      float f = small ? (float)((int)(u % 9) - 4) : (float)(int32_t)u / 2147483648.0f;
      ((uint16_t *)p)[i] = t == MMA_BF16 ? mma_f32_to_bf16(f) : mma_f32_to_f16(f);
    }
  }
}

static void sampled(mma_type t) {
  const uint32_t m = 80, n = 48, k = 256;
  size_t es = t == MMA_I8 ? 1 : 2;
  void *a = malloc(m * k * es), *b = malloc(k * n * es), *c = malloc(m * n * 4);
  mma_check_result r;
  const char *tn = mma_type_name(t);
  for (int small = 1; small >= 0; small--) {
    fill(t, a, m * k, small);
    fill(t, b, k * n, small);
    cpu_mma(t, m, n, k, a, b, c, t != MMA_I8);
    int exact = small || t == MMA_I8;
    mma_check_sampled(t, m, n, k, a, b, c, MMA_SAMPLES, exact, &r);
    EXPECT(r.sampled == 64 * 64 && r.bad == 0, "%s %s: a right C passes: %u of %u bad (got %g want %g)", tn,
           small ? "small" : "random", r.bad, r.sampled, r.first_got, r.first_want);
    if (t != MMA_I8 && !small)
      EXPECT(r.worst_ratio > 0 && r.worst_ratio < 1e-3, "%s: f32 sums are far inside the bound: %g", tn,
             r.worst_ratio);
  }
  /* corners are sampled: a wrong last element is found */
  size_t last = (size_t)m * n - 1;
  if (t == MMA_I8)
    ((int32_t *)c)[last] += 1;
  else
    ((float *)c)[last] = ((float *)c)[last] + 2 * (float)mma_float_bound(k * 1.0, k);
  mma_check_sampled(t, m, n, k, a, b, c, MMA_SAMPLES, t == MMA_I8, &r);
  EXPECT(r.bad == 1 && r.first_row == m - 1 && r.first_col == n - 1, "%s: the last element, off, is found (%u bad)",
         tn, r.bad);
  if (t != MMA_I8) {
    ((float *)c)[0] = NAN;
    mma_check_sampled(t, m, n, k, a, b, c, MMA_SAMPLES, 0, &r);
    EXPECT(r.bad >= 2 && r.first_row == 0 && r.first_col == 0, "%s: a NaN fails (%u bad)", tn, r.bad);
  }
  /* B in the other layout: most elements wrong */
  cpu_mma(t, m, n, k, a, b, c, t == MMA_I8);
  mma_check_sampled(t, m, n, k, a, b, c, MMA_SAMPLES, t == MMA_I8, &r);
  EXPECT(r.bad > r.sampled / 2, "%s: B in the wrong layout fails (%u of %u bad)", tn, r.bad, r.sampled);
  free(a);
  free(b);
  free(c);
}

static void bound(void) {
  double b16 = mma_float_bound(1.0, 16);
  EXPECT(b16 >= 18 * 0x1p-22 && b16 < 19 * 0x1p-22, "one mma of sum |ab| = 1: %g", b16);
  double b = mma_float_bound(1024.0, 4096);
  EXPECT(b > 256 * 18 * 0x1p-22 * 1024 && b < 1.2, "4096 deep, sum |ab| = 1024: %g", b);
  /* just inside passes, just outside fails: one element, exact data */
  uint16_t a[16], bb[16];
  float c;
  for (int i = 0; i < 16; i++) a[i] = bb[i] = mma_f32_to_bf16(0.5f);
  mma_check_result r;
  double bd = mma_float_bound(4.0, 16);
  c = (float)(4.0 + 0.75 * bd);
  mma_check_sampled(MMA_BF16, 1, 1, 16, a, bb, &c, 1, 0, &r);
  EXPECT(r.sampled == 1 && r.bad == 0 && r.worst_ratio > 0.5 && r.worst_ratio <= 1, "inside the bound: %g",
         r.worst_ratio);
  c = (float)(4.0 + 1.5 * bd);
  mma_check_sampled(MMA_BF16, 1, 1, 16, a, bb, &c, 1, 0, &r);
  EXPECT(r.bad == 1, "outside the bound: %g", r.worst_ratio);
  c = 4.0f + 0x1p-21f;
  mma_check_sampled(MMA_BF16, 1, 1, 16, a, bb, &c, 1, 1, &r);
  EXPECT(r.bad == 1, "exact data: one ulp off fails");
}

static void int8_wrap(void) {
  /* 127 * 127 * 133152 = 2147608608 > 2^31 - 1: wraps to a negative i32 */
  const uint32_t m = 16, n = 16, k = 133152;
  int8_t *a = malloc((size_t)m * k), *b = malloc((size_t)n * k);
  int32_t c[256];
  memset(a, 127, (size_t)m * k);
  memset(b, 127, (size_t)n * k);
  cpu_mma(MMA_I8, m, n, k, a, b, c, 0);
  EXPECT(c[0] == (int32_t)(2147608608u), "the stand-in wraps: %d", c[0]);
  mma_check_result r;
  mma_check_sampled(MMA_I8, m, n, k, a, b, c, 64, 1, &r);
  EXPECT(r.bad == 0 && r.sampled == 64, "the wrapped sum is right (%u bad of %u)", r.bad, r.sampled);
  for (int i = 0; i < 256; i++) c[i] = 2147483647; /* saturated */
  mma_check_sampled(MMA_I8, m, n, k, a, b, c, 64, 1, &r);
  EXPECT(r.bad == r.sampled, "a saturated sum is wrong (%u bad)", r.bad);
  free(a);
  free(b);
}

/* For bench/mma_peers_test.py: the C bound and samples, to compare with the Python ones. */
static int print_mode(char **argv) {
  uint32_t x = (uint32_t)strtoul(argv[3], NULL, 10);
  if (!strcmp(argv[1], "--bound")) {
    printf("%.17g\n", mma_float_bound(strtod(argv[2], NULL), x));
    return 0;
  }
  uint32_t side = (uint32_t)strtoul(argv[2], NULL, 10);
  for (uint32_t i = 0; i < side; i++) printf("%u\n", mma_stratum(i, side, x));
  return 0;
}

int main(int argc, char **argv) {
  if (argc == 4 && (!strcmp(argv[1], "--bound") || !strcmp(argv[1], "--strata"))) return print_mode(argv);
  args();
  rounding();
  program();
  bound();
  sampled(MMA_BF16);
  sampled(MMA_F16);
  sampled(MMA_I8);
  int8_wrap();
  printf("%s: %d failure%s\n", failures ? "FAIL" : "PASS", failures, failures == 1 ? "" : "s");
  return failures != 0;
}
