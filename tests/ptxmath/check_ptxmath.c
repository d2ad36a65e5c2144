/* check_ptxmath.c -- ptxmath: special values, model accuracy against correctly rounded references, PTX assembly by ptxas, errors. */
#include <check.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <vyre/vyre_program.h>

#include "plugin/ptxmath/crtable.h"
#include "plugin/ptxmath/ptxmath.h"
#include "plugin/ptxmath/ptxmath_model.h"
#include "ptxmath_ref.h"

static const uint32_t ops[] = {VYRE_OP_RSQRT, VYRE_OP_EXP,  VYRE_OP_EXP2, VYRE_OP_LOG,  VYRE_OP_LOG2,
                               VYRE_OP_SIN,   VYRE_OP_COS,  VYRE_OP_TAN,  VYRE_OP_ASIN, VYRE_OP_ACOS,
                               VYRE_OP_ATAN,  VYRE_OP_SINH, VYRE_OP_COSH, VYRE_OP_TANH};
#define NOPS (sizeof ops / sizeof *ops)

static uint32_t fbits(float f) {
  uint32_t w;
  memcpy(&w, &f, sizeof w);
  return w;
}

static float bitsf(uint32_t w) {
  float f;
  memcpy(&f, &w, sizeof f);
  return f;
}

static const char *vname(int v) { return v == PM_FAST ? "fast" : v == PM_CR ? "correctly rounded" : "accurate"; }

static uint32_t model(uint32_t op, pm_variant v, uint32_t x) {
  uint32_t y = 0xDEADBEEFu;
  ck_assert_msg(pm_model(op, v, x, &y) == 0, "the model of %s must exist", pm_ref_name(op));
  return y;
}

/* ---- core: special values are exact, in both variants where they exist */

typedef struct special { uint32_t op, x, want; } special;

#define PI_2F 0x3FC90FDBu /* pi/2 rounded to f32 */
#define PIF 0x40490FDBu
#define PI_4F 0x3F490FDBu
#define INF 0x7F800000u
#define NINF 0xFF800000u
#define QNAN 0x7FC00000u
#define ONE 0x3F800000u
#define NZERO 0x80000000u

static const special specials[] = {
    {VYRE_OP_EXP, NINF, 0}, {VYRE_OP_EXP, INF, INF}, {VYRE_OP_EXP, 0, ONE}, {VYRE_OP_EXP, NZERO, ONE},
    {VYRE_OP_EXP, 0x42B20000u /* 89 */, INF}, {VYRE_OP_EXP, 0xC2D00000u /* -104 */, 0},
    {VYRE_OP_EXP, 0xC2AF0000u /* -87.5: subnormal, flushed */, 0},
    {VYRE_OP_EXP2, 0, ONE}, {VYRE_OP_EXP2, NZERO, ONE}, {VYRE_OP_EXP2, NINF, 0}, {VYRE_OP_EXP2, INF, INF},
    {VYRE_OP_EXP2, 0x43000000u /* 128 */, INF}, {VYRE_OP_EXP2, 0xC2FE0000u /* -127: flushed */, 0},
    {VYRE_OP_EXP2, 0xC2FC0000u /* -126 */, 0x00800000u},
    {VYRE_OP_LOG, 0, NINF}, {VYRE_OP_LOG, NZERO, NINF}, {VYRE_OP_LOG, 0xBF800000u, QNAN},
    {VYRE_OP_LOG, NINF, QNAN}, {VYRE_OP_LOG, INF, INF}, {VYRE_OP_LOG, ONE, 0},
    {VYRE_OP_LOG2, 0, NINF}, {VYRE_OP_LOG2, NZERO, NINF}, {VYRE_OP_LOG2, 0x80800000u, QNAN},
    {VYRE_OP_LOG2, INF, INF}, {VYRE_OP_LOG2, ONE, 0},
    {VYRE_OP_SIN, 0, 0}, {VYRE_OP_SIN, NZERO, NZERO}, {VYRE_OP_SIN, INF, QNAN}, {VYRE_OP_SIN, NINF, QNAN},
    {VYRE_OP_COS, 0, ONE}, {VYRE_OP_COS, NZERO, ONE}, {VYRE_OP_COS, INF, QNAN}, {VYRE_OP_COS, NINF, QNAN},
    {VYRE_OP_TAN, 0, 0}, {VYRE_OP_TAN, NZERO, NZERO}, {VYRE_OP_TAN, INF, QNAN}, {VYRE_OP_TAN, NINF, QNAN},
    {VYRE_OP_ASIN, 0, 0}, {VYRE_OP_ASIN, NZERO, NZERO}, {VYRE_OP_ASIN, ONE, PI_2F},
    {VYRE_OP_ASIN, 0xBF800000u, 0x80000000u | PI_2F}, {VYRE_OP_ASIN, 0x3F800001u, QNAN},
    {VYRE_OP_ASIN, 0xC0000000u, QNAN}, {VYRE_OP_ASIN, INF, QNAN},
    {VYRE_OP_ACOS, ONE, 0}, {VYRE_OP_ACOS, 0xBF800000u, PIF}, {VYRE_OP_ACOS, 0, PI_2F},
    {VYRE_OP_ACOS, NZERO, PI_2F}, {VYRE_OP_ACOS, 0x40000000u, QNAN}, {VYRE_OP_ACOS, 0xBF800001u, QNAN},
    {VYRE_OP_ACOS, NINF, QNAN},
    {VYRE_OP_ATAN, INF, PI_2F}, {VYRE_OP_ATAN, NINF, 0x80000000u | PI_2F}, {VYRE_OP_ATAN, 0, 0},
    {VYRE_OP_ATAN, NZERO, NZERO}, {VYRE_OP_ATAN, ONE, PI_4F},
    {VYRE_OP_SINH, 0, 0}, {VYRE_OP_SINH, NZERO, NZERO}, {VYRE_OP_SINH, INF, INF}, {VYRE_OP_SINH, NINF, NINF},
    {VYRE_OP_SINH, 0x42C80000u /* 100 */, INF}, {VYRE_OP_SINH, 0xC2C80000u, NINF},
    {VYRE_OP_COSH, 0, ONE}, {VYRE_OP_COSH, NZERO, ONE}, {VYRE_OP_COSH, INF, INF}, {VYRE_OP_COSH, NINF, INF},
    {VYRE_OP_COSH, 0xC2C80000u, INF},
    {VYRE_OP_TANH, 0, 0}, {VYRE_OP_TANH, NZERO, NZERO}, {VYRE_OP_TANH, INF, ONE}, {VYRE_OP_TANH, NINF, 0xBF800000u},
    {VYRE_OP_TANH, 0x41A00000u /* 20 */, ONE}, {VYRE_OP_TANH, 0xC1A00000u, 0xBF800000u},
    {VYRE_OP_RSQRT, 0, INF}, {VYRE_OP_RSQRT, NZERO, NINF}, {VYRE_OP_RSQRT, INF, 0},
    {VYRE_OP_RSQRT, 0xBF800000u, QNAN}, {VYRE_OP_RSQRT, NINF, QNAN}, {VYRE_OP_RSQRT, 0x40800000u, 0x3F000000u},
    {VYRE_OP_RSQRT, ONE, ONE}, {VYRE_OP_RSQRT, 0x3E800000u, 0x40000000u},
    {VYRE_OP_RSQRT, 0x00800000u /* 2^-126 */, 0x5F000000u /* 2^63 */},
};

START_TEST(test_specials) {
  for (size_t i = 0; i < sizeof specials / sizeof *specials; i++) {
    const special *s = &specials[i];
    for (int v = PM_ACCURATE; v <= PM_CR; v++) {
      if (!pm_has(s->op, (pm_variant)v)) continue;
      uint32_t y = model(s->op, (pm_variant)v, s->x);
      ck_assert_msg(y == s->want, "%s %s(0x%08x) must be exactly 0x%08x, got 0x%08x", vname(v),
                    pm_ref_name(s->op), s->x, s->want, y);
    }
  }
}
END_TEST

START_TEST(test_nan_in_nan_out) {
  /* Canonical and non-canonical NaN inputs give the canonical NaN. */
  const uint32_t nans[] = {QNAN, 0xFFC00000u, 0x7FFFFFFFu, 0x7F800001u, 0xFFFFFFFFu};
  for (size_t i = 0; i < NOPS; i++)
    for (int v = PM_ACCURATE; v <= PM_CR; v++) {
      if (!pm_has(ops[i], (pm_variant)v)) continue;
      for (size_t k = 0; k < sizeof nans / sizeof *nans; k++) {
        uint32_t y = model(ops[i], (pm_variant)v, nans[k]);
        ck_assert_msg(y == QNAN, "%s(0x%08x) must be the canonical NaN 0x7fc00000, got 0x%08x",
                      pm_ref_name(ops[i]), nans[k], y);
      }
    }
}
END_TEST

START_TEST(test_exact_results) {
  /* exp2(k) = 2^k and log2(2^k) = k for every normal power of two; odd
   * functions keep the sign of every input through symmetric results. */
  for (int k = -126; k <= 127; k++) {
    uint32_t p = (uint32_t)(k + 127) << 23;
    uint32_t kb = fbits((float)k);
    for (int v = PM_ACCURATE; v <= PM_CR; v++) {
      uint32_t y = model(VYRE_OP_EXP2, (pm_variant)v, kb);
      ck_assert_msg(y == p, "exp2(%d) must be exactly 2^%d (0x%08x), got 0x%08x", k, k, p, y);
    }
    uint32_t l = model(VYRE_OP_LOG2, PM_ACCURATE, p);
    ck_assert_msg(l == kb, "log2(2^%d) must be exactly %d, got %g", k, k, (double)bitsf(l));
  }
  const uint32_t odd[] = {VYRE_OP_SIN, VYRE_OP_TAN, VYRE_OP_ASIN, VYRE_OP_ATAN, VYRE_OP_SINH, VYRE_OP_TANH};
  const uint32_t even[] = {VYRE_OP_COS, VYRE_OP_COSH};
  uint64_t s = 0x9E3779B97F4A7C15u;
  for (int i = 0; i < 20000; i++) {
    s ^= s << 13, s ^= s >> 7, s ^= s << 17;
    uint32_t x = pm_canon((uint32_t)s & 0x7FFFFFFFu);
    for (size_t k = 0; k < sizeof odd / sizeof *odd; k++) {
      uint32_t a = model(odd[k], PM_ACCURATE, x), b = model(odd[k], PM_ACCURATE, x | 0x80000000u);
      if (a != QNAN)
        ck_assert_msg(b == (a ^ 0x80000000u), "%s(-x) must be -%s(x) for x = 0x%08x", pm_ref_name(odd[k]),
                      pm_ref_name(odd[k]), x);
    }
    for (size_t k = 0; k < sizeof even / sizeof *even; k++) {
      uint32_t a = model(even[k], PM_ACCURATE, x), b = model(even[k], PM_ACCURATE, x | 0x80000000u);
      ck_assert_msg(a == b, "%s(-x) must be %s(x) for x = 0x%08x", pm_ref_name(even[k]), pm_ref_name(even[k]), x);
    }
  }
}
END_TEST

/* ---- accuracy: the model against correctly rounded references --------- */

typedef struct acc_stats { uint64_t n, not_cr, undecided; uint32_t max, worst; } acc_stats;

static void acc_one(uint32_t op, pm_variant v, uint32_t x, acc_stats *st) {
  x = pm_canon(x);
  int unc;
  uint32_t r = pm_ref(op, x, &unc);
  uint32_t y = model(op, v, x);
  st->n++;
  if (unc) {
    st->undecided++;
    return;
  }
  uint32_t d = pm_ulp_dist(y, r);
  if (d) st->not_cr++;
  if (d > st->max) st->max = d, st->worst = x;
}

/* Inputs every op sees: powers of two, neighbours of interesting points,
 * Payne-Hanek hard cases, and random bit patterns (log-uniform). */
static void acc_inputs(uint32_t op, pm_variant v, int random_count, acc_stats *st) {
  for (uint32_t e = 1; e < 255; e++) {
    acc_one(op, v, e << 23, st);
    acc_one(op, v, (e << 23) | 0x80000000u, st);
    acc_one(op, v, (e << 23) - 1, st);
    acc_one(op, v, (e << 23) + 1, st);
  }
  /* Large arguments whose remainder mod pi/2 is tiny, and big values. */
  static const uint32_t hard[] = {0x5922AA80u, 0x7E967699u /* 1e38 */, 0x7F7FFFFFu, 0x6A1976F1u, 0x4B000000u,
                                  0x48000000u, 0x47FFFFFFu, 0x46C90FDBu, 0x4F000000u, 0x7E800000u,
                                  0x3F490FDBu, 0x3F490FDAu, 0x3F490FDCu, 0x3FC90FDBu, 0x40490FDBu};
  for (size_t i = 0; i < sizeof hard / sizeof *hard; i++) {
    acc_one(op, v, hard[i], st);
    acc_one(op, v, hard[i] | 0x80000000u, st);
  }
  /* The f32 neighbours of k*pi/2 for k up to 2^20 (sparse beyond 4096). */
  for (uint32_t k = 1; k < (1u << 20); k = k < 4096 ? k + 1 : k + k / 64) {
    float f = (float)((long double)k * 1.5707963267948966192313216916397514L);
    uint32_t b = fbits(f);
    for (int d = -2; d <= 2; d++) acc_one(op, v, b + (uint32_t)d, st);
  }
  /* Neighbourhoods of 1, of the range boundaries, and of thresholds. */
  static const float points[] = {1.0f, 0.5f, 0.25f, 0.75f, 20.0f, 88.7228f, -87.3365f, -103.97f, 127.999f,
                                 -126.0f, -149.0f, 89.41f, 9.01f, 0.8f, 1.4142135f, 0.7071068f};
  for (size_t i = 0; i < sizeof points / sizeof *points; i++) {
    uint32_t b = fbits(points[i]);
    for (int d = -300; d <= 300; d++) {
      acc_one(op, v, b + (uint32_t)d, st);
      acc_one(op, v, (b + (uint32_t)d) ^ 0x80000000u, st);
    }
  }
  uint64_t s = 0x2545F4914F6CDD1Du ^ op;
  for (int i = 0; i < random_count; i++) {
    s ^= s << 13, s ^= s >> 7, s ^= s << 17;
    acc_one(op, v, (uint32_t)(s >> 16), st);
  }
}

/* The reference needs the x87 64-bit significand; valgrind emulates long
 * double with 53 bits, where it cannot decide f32 rounding. */
static int reference_usable(void) {
  volatile long double a = 1.0L;
  a += 0x1p-60L;
  if (a != 1.0L) return 1;
  printf("long double has no extended precision here (valgrind?): accuracy not checked\n");
  return 0;
}

static void check_accuracy(int opi) {
  uint32_t op = ops[opi];
  if (!reference_usable()) return;
  for (int v = PM_ACCURATE; v <= PM_CR; v++) {
    uint32_t bound = pm_ulp_bound(op, (pm_variant)v);
    if (!pm_has(op, (pm_variant)v)) continue;
    acc_stats st = {0};
    acc_inputs(op, (pm_variant)v, 100000, &st);
    printf("%-6s %-9s inputs %7llu  max %u ulp (bound %u, worst 0x%08x)  not correctly rounded %llu  "
           "undecided %llu\n",
           pm_ref_name(op), v == PM_FAST ? "fast*" : vname(v), (unsigned long long)st.n, st.max, bound, st.worst,
           (unsigned long long)st.not_cr, (unsigned long long)st.undecided);
    ck_assert_msg(st.max <= bound, "%s %s: max error %u ulp at x = 0x%08x exceeds the documented bound %u",
                  vname(v), pm_ref_name(op), st.max, st.worst, bound);
    if (v == PM_ACCURATE) {
      /* f64 evaluation makes misrounding rare: more than 1 in 10^4 means a
       * polynomial or a reduction lost precision. */
      ck_assert_msg(st.not_cr * 10000 <= st.n, "accurate %s: %llu of %llu results not correctly rounded",
                    pm_ref_name(op), (unsigned long long)st.not_cr, (unsigned long long)st.n);
      ck_assert_msg(st.undecided * 1000 <= st.n, "accurate %s: %llu undecidable references", pm_ref_name(op),
                    (unsigned long long)st.undecided);
    }
  }
}

START_TEST(test_accuracy) { check_accuracy(_i); }
END_TEST

START_TEST(test_payne_hanek_hard) {
  /* 0x5922AA80 (~2.86e15) is the f32 closest to a multiple of pi/2 in
   * relative terms: sin must still be correctly rounded there. */
  if (!reference_usable()) return;
  int unc;
  uint32_t r = pm_ref(VYRE_OP_SIN, 0x5922AA80u, &unc);
  ck_assert_msg(!unc, "the reference must decide sin(0x5922aa80)");
  ck_assert_msg(model(VYRE_OP_SIN, PM_ACCURATE, 0x5922AA80u) == r, "sin(0x5922aa80) must be correctly rounded");
  r = pm_ref(VYRE_OP_COS, 0x7E967699u, &unc);
  ck_assert_msg(model(VYRE_OP_COS, PM_ACCURATE, 0x7E967699u) == r, "cos(1e38) must be correctly rounded");
  ck_assert_msg(bitsf(r) != 0 && fabsf(bitsf(r)) <= 1.0f, "cos(1e38) must be in [-1, 1]");
}
END_TEST

START_TEST(test_cr_table) {
  /* Every entry of the hard-case table: the accurate variant gets it wrong,
   * the correctly rounded one gives the entry (so its near-tie test caught
   * it), and the long double reference agrees where it can decide. */
  size_t total = 0;
  int ref_ok = reference_usable();
  for (size_t i = 0; i < NOPS; i++) {
    size_t n = 0;
    const pm_cr_entry *t = pm_cr_table(ops[i], &n);
    for (size_t k = 0; k < n; k++) {
      ck_assert_msg(k == 0 || t[k - 1].x < t[k].x, "%s table: sorted by x", pm_ref_name(ops[i]));
      ck_assert_msg(pm_canon(t[k].x) == t[k].x && pm_canon(t[k].y) == t[k].y, "%s table: canonical entries",
                    pm_ref_name(ops[i]));
      uint32_t a = model(ops[i], PM_ACCURATE, t[k].x), c = model(ops[i], PM_CR, t[k].x);
      ck_assert_msg(a != t[k].y, "%s(0x%08x): the accurate variant is right, the entry is not needed",
                    pm_ref_name(ops[i]), t[k].x);
      ck_assert_msg(c == t[k].y, "%s(0x%08x): correctly rounded gives 0x%08x, the table says 0x%08x (near-tie test "
                    "missed it?)", pm_ref_name(ops[i]), t[k].x, c, t[k].y);
      int unc;
      uint32_t r = pm_ref(ops[i], t[k].x, &unc);
      if (ref_ok && !unc)
        ck_assert_msg(r == t[k].y, "%s(0x%08x): the long double reference says 0x%08x, the table 0x%08x",
                      pm_ref_name(ops[i]), t[k].x, r, t[k].y);
      total++;
    }
  }
  ck_assert_msg(total >= 1, "the table is filled from the exhaustive sweep");
  printf("hard-case table: %zu entries, each caught by the near-tie test\n", total);
}
END_TEST

/* ---- ptxas: every function assembles, no stack or spills ---------------- */

/* A module with every (op, variant) and one kernel per function calling it. */
static char *module_text(const char *version, const char *target) {
  strbuf sb;
  vyre__sb_init(&sb);
  vyre__sb_printf(&sb, ".version %s\n.target %s\n.address_size 64\n\n", version, target);
  char names[3 * NOPS][32];
  size_t n = 0;
  for (size_t i = 0; i < NOPS; i++)
    for (int v = PM_ACCURATE; v <= PM_CR; v++)
      if (pm_emit_func(&sb, ops[i], (pm_variant)v, names[n]) == 0) n++;
  for (size_t i = 0; i < n; i++)
    vyre__sb_printf(&sb,
              ".visible .entry k_%s(.param .u64 p)\n{\n\t.reg .u64 %%a;\n\t.reg .f32 %%x<2>;\n"
              "\tld.param.u64 %%a, [p];\n\tcvta.to.global.u64 %%a, %%a;\n\tld.global.f32 %%x0, [%%a];\n"
              "\tcall.uni (%%x1), %s, (%%x0);\n\tst.global.f32 [%%a], %%x1;\n\tret;\n}\n",
              names[i], names[i]);
  return vyre__sb_take(&sb, NULL);
}

/* Runs ptxas on `text`; returns its exit status, output in *log (malloc'd). */
static int run_ptxas(const char *ptxas, const char *arch, const char *text, char **log) {
  char path[] = "/tmp/check_ptxmath_XXXXXX";
  int fd = mkstemp(path);
  ck_assert_msg(fd >= 0, "mkstemp for the PTX file must succeed");
  size_t len = strlen(text);
  ck_assert_msg(write(fd, text, len) == (ssize_t)len, "writing the PTX file must succeed");
  close(fd);
  char cmd[1024];
  snprintf(cmd, sizeof cmd, "'%s' -arch=%s -v '%s' -o /dev/null 2>&1", ptxas, arch, path);
  FILE *p = popen(cmd, "r");
  ck_assert_msg(p != NULL, "popen(%s) must succeed", cmd);
  strbuf out;
  vyre__sb_init(&out);
  char buf[4096];
  size_t got;
  while ((got = fread(buf, 1, sizeof buf, p)) > 0) vyre__sb_append(&out, buf, got);
  int status = pclose(p);
  unlink(path);
  *log = vyre__sb_take(&out, NULL);
  return status;
}

static void check_assembles(const char *version, const char *target, const char *arch) {
  const char *ptxas = getenv("PTXAS");
  ck_assert_msg(ptxas && *ptxas, "the ptxas cases run only with $PTXAS (main skips them)");
  char *text = module_text(version, target);
  ck_assert_msg(text != NULL, "building the module text must succeed");
  char *log = NULL;
  int st = run_ptxas(ptxas, arch, text, &log);
  if (st != 0 && strcmp(arch, "sm_70") == 0 && log && strstr(log, "not defined for option")) {
    /* CUDA 13's ptxas dropped sm_70; sm_75 still assembles .target sm_70. */
    printf("ptxas: this ptxas has no sm_70; assembling the sm_70 PTX for sm_75\n");
    free(log);
    st = run_ptxas(ptxas, "sm_75", text, &log);
  }
  ck_assert_msg(st == 0, "ptxas -arch=%s must accept every function; its log:\n%s", arch, log ? log : "");
  size_t frames = 0;
  for (const char *l = log; (l = strstr(l, "bytes stack frame")) != NULL; l++) {
    const char *line = l;
    while (line > log && line[-1] != '\n') line--;
    ck_assert_msg(strncmp(line, "    0 bytes stack frame, 0 bytes spill stores, 0 bytes spill loads", 66) == 0,
                  "every function must use no stack and no spills on %s:\n%.*s", arch, (int)(strchr(l, '\n') ? strchr(l, '\n') - line : 80), line);
    frames++;
  }
  ck_assert_msg(frames >= 2 * 17, "ptxas -v must report every kernel and function (saw %zu)", frames);
  free(log);
  free(text);
}

START_TEST(test_ptxas_sm90) { check_assembles("7.8", "sm_90", "sm_90"); }
END_TEST

START_TEST(test_ptxas_sm70) { check_assembles("6.0", "sm_70", "sm_70"); }
END_TEST

START_TEST(test_text_shape) {
  /* Accurate text has no .approx; fast text does; names are unique. */
  char seen[3 * NOPS][32];
  size_t n = 0;
  for (size_t i = 0; i < NOPS; i++)
    for (int v = PM_ACCURATE; v <= PM_CR; v++) {
      strbuf sb;
      vyre__sb_init(&sb);
      char name[32];
      int rc = pm_emit_func(&sb, ops[i], (pm_variant)v, name);
      if (v == PM_FAST && !pm_ulp_bound(ops[i], PM_FAST)) {
        ck_assert_msg(rc == -1 && name[0] == '\0' && sb.len == 0,
                      "a fast %s does not exist: -1, empty name, nothing appended", pm_ref_name(ops[i]));
        vyre__sb_free(&sb);
        continue;
      }
      ck_assert_msg(rc == 0, "emitting %s must succeed", pm_ref_name(ops[i]));
      ck_assert_msg(strstr(sb.data, name) != NULL, "the text must define %s", name);
      ck_assert_msg((strstr(sb.data, ".approx") != NULL) == (v == PM_FAST),
                    "%s: .approx must appear exactly in fast variants", name);
      ck_assert_msg(strstr(sb.data, ".local") == NULL && strstr(sb.data, ".global") == NULL,
                    "%s must use registers only", name);
      for (size_t k = 0; k < n; k++) ck_assert_msg(strcmp(seen[k], name) != 0, "name %s must be unique", name);
      memcpy(seen[n++], name, 32);
      /* Deterministic: a second emission is the same text. */
      strbuf again;
      vyre__sb_init(&again);
      char name2[32];
      pm_emit_func(&again, ops[i], (pm_variant)v, name2);
      ck_assert_msg(again.len == sb.len && memcmp(again.data, sb.data, sb.len) == 0, "%s must emit the same text twice",
                    name);
      vyre__sb_free(&again);
      vyre__sb_free(&sb);
    }
  ck_assert_msg(n == 2 * NOPS + 3, "14 accurate, 14 correctly rounded and 3 fast functions must exist, saw %zu", n);
}
END_TEST

/* ---- errors ------------------------------------------------------------- */

START_TEST(test_errors) {
  strbuf sb;
  vyre__sb_init(&sb);
  char name[32] = "x";
  ck_assert_msg(pm_emit_func(&sb, VYRE_OP_ADD, PM_ACCURATE, name) == -1 && name[0] == '\0',
                "add is not a transcendental: -1 and an empty name");
  ck_assert_msg(pm_emit_func(&sb, 255, PM_ACCURATE, name) == -1, "an unknown op id gives -1");
  ck_assert_msg(pm_emit_func(&sb, VYRE_OP_SIN, (pm_variant)7, name) == -1, "an unknown variant gives -1");
  ck_assert_msg(pm_emit_func(NULL, VYRE_OP_SIN, PM_ACCURATE, name) == -1, "a NULL buffer gives -1");
  ck_assert_msg(pm_emit_func(&sb, VYRE_OP_SIN, PM_ACCURATE, NULL) == -1, "a NULL name gives -1");
  ck_assert_msg(sb.len == 0, "failed calls must append nothing");
  ck_assert_msg(pm_ulp_bound(VYRE_OP_ADD, PM_ACCURATE) == 0 && pm_ulp_bound(VYRE_OP_SIN, PM_FAST) == 0 &&
                    pm_ulp_bound(VYRE_OP_LOG2, PM_FAST) == 0 && pm_ulp_bound(VYRE_OP_EXP, (pm_variant)9) == 0,
                "a variant that does not exist has bound 0");
  for (size_t i = 0; i < NOPS; i++)
    ck_assert_msg(pm_ulp_bound(ops[i], PM_ACCURATE) == 1, "accurate %s is faithful (1 ulp)", pm_ref_name(ops[i]));
  uint32_t y;
  ck_assert_msg(pm_model(VYRE_OP_COS, PM_FAST, 0, &y) == -1 && pm_model(VYRE_OP_SIN, PM_ACCURATE, 0, NULL) == -1,
                "the model refuses what does not exist");
  ck_assert_msg(pm_model_bit_exact(VYRE_OP_EXP, PM_ACCURATE) && pm_model_bit_exact(VYRE_OP_EXP, PM_CR) &&
                    !pm_model_bit_exact(VYRE_OP_EXP, PM_FAST),
                "accurate and correctly rounded variants are modelled bit for bit, fast ones are not");
  for (size_t i = 0; i < NOPS; i++)
    ck_assert_msg(pm_has(ops[i], PM_CR) && pm_ulp_bound(ops[i], PM_CR) == 0,
                  "%s has a correctly rounded variant (bound 0)", pm_ref_name(ops[i]));
  ck_assert_msg(!pm_has(VYRE_OP_ADD, PM_CR) && !pm_has(VYRE_OP_SIN, PM_FAST) && !pm_has(VYRE_OP_SIN, (pm_variant)9),
                "pm_has says no to what does not exist");
  /* A buffer whose allocation already failed stays failed, without crashing. */
  sb.failed = 1;
  ck_assert_msg(pm_emit_func(&sb, VYRE_OP_TANH, PM_ACCURATE, name) == 0 && sb.failed && sb.len == 0,
                "emission into a failed buffer leaves it failed");
  ck_assert_msg(vyre__sb_take(&sb, NULL) == NULL, "a failed buffer yields no text");
  vyre__sb_free(&sb);
}
END_TEST

/* Two programs are built from this file: check_ptxmath (everything but
 * ptxas) and ptxas_ptxmath (-DCHECK_PTXAS_ONLY: the ptxas cases, which
 * SKIP, exit 77, without a ptxas), so that no case passes without running. */
#ifdef CHECK_PTXAS_ONLY
enum { PTXAS_ONLY = 1 };
#else
enum { PTXAS_ONLY = 0 };
#endif

static Suite *ptxmath_suite(void) {
  Suite *s = suite_create("ptxmath");
  if (PTXAS_ONLY) {
    TCase *asmb = tcase_create("ptxas");
    tcase_set_timeout(asmb, 120);
    tcase_add_test(asmb, test_ptxas_sm90);
    tcase_add_test(asmb, test_ptxas_sm70);
    suite_add_tcase(s, asmb);
    return s;
  }
  TCase *core = tcase_create("core");
  tcase_add_test(core, test_specials);
  tcase_add_test(core, test_nan_in_nan_out);
  tcase_add_test(core, test_exact_results);
  tcase_add_test(core, test_text_shape);
  tcase_set_timeout(core, 60);
  suite_add_tcase(s, core);
  TCase *acc = tcase_create("accuracy");
  tcase_set_timeout(acc, 120);
  tcase_add_loop_test(acc, test_accuracy, 0, (int)NOPS);
  tcase_add_test(acc, test_payne_hanek_hard);
  tcase_add_test(acc, test_cr_table);
  suite_add_tcase(s, acc);
  TCase *err = tcase_create("errors");
  tcase_add_test(err, test_errors);
  suite_add_tcase(s, err);
  return s;
}

int main(void) {
  const char *ptxas = getenv("PTXAS");
  if (PTXAS_ONLY && (!ptxas || !*ptxas || access(ptxas, X_OK) != 0)) {
    printf("ptxas_ptxmath: SKIP: no ptxas ($PTXAS is '%s'). Fix: install the CUDA toolkit and "
           "re-run configure\n", ptxas ? ptxas : "");
    return 77;
  }
  SRunner *sr = srunner_create(ptxmath_suite());
  srunner_run_all(sr, CK_NORMAL);
  int failed = srunner_ntests_failed(sr);
  srunner_free(sr);
  return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
