/* check_f32.c -- libvyre's exported f32 arithmetic (vyre_f32_*), through the shared library: the corpus's underflow cases bit for bit, flushed operands, canonical NaN. */
#include <check.h>
#include <ctype.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "vyre/vyre_support.h"

#define MAX_VALUES 512
#define MAX_BUFFERS 4

/* The values of one corpus case (tests/conformance, "case format" in
 * docs/conformance.md): its inputs in declaration order and its output. */
typedef struct corpus_case {
  uint32_t in[MAX_BUFFERS][MAX_VALUES];
  uint32_t in_count[MAX_BUFFERS];
  uint32_t inputs;
  uint32_t out[MAX_VALUES];
  uint32_t out_count;
} corpus_case;

/* Append the hex words after "values" on a ";@ input[+] NAME values ..."
 * or ";@ expect-output[+] NAME values ..." line. */
static void read_values(const char *line, uint32_t *into, uint32_t *count) {
  const char *p = strstr(line, " values ");
  ck_assert_msg(p != NULL, "a corpus values line without ' values ': %s", line);
  p += 8;
  for (;;) {
    while (*p == ' ') p++;
    if (!isxdigit((unsigned char)*p)) break;
    char *end;
    unsigned long v = strtoul(p, &end, 0);
    ck_assert_msg(end != p && *count < MAX_VALUES, "a bad value in: %s", line);
    into[(*count)++] = (uint32_t)v;
    p = end;
  }
}

static void read_case(const char *name, corpus_case *c) {
  const char *src = getenv("VYRE_SRC_DIR");
  char path[4096];
  snprintf(path, sizeof path, "%s/tests/conformance/ops.f32/%s.vyre", src ? src : VYRE_TEST_SRCDIR,
           name);
  FILE *f = fopen(path, "r");
  ck_assert_msg(f != NULL, "cannot open the corpus case %s", path);
  memset(c, 0, sizeof *c);
  char line[8192];
  while (fgets(line, sizeof line, f)) {
    if (strncmp(line, ";@ input+ ", 10) == 0) {
      ck_assert(c->inputs > 0);
      read_values(line, c->in[c->inputs - 1], &c->in_count[c->inputs - 1]);
    } else if (strncmp(line, ";@ input ", 9) == 0) {
      ck_assert_msg(c->inputs < MAX_BUFFERS, "%s: too many inputs", path);
      c->inputs++;
      read_values(line, c->in[c->inputs - 1], &c->in_count[c->inputs - 1]);
    } else if (strncmp(line, ";@ expect-output", 16) == 0) {
      read_values(line, c->out, &c->out_count);
    }
  }
  fclose(f);
  ck_assert_msg(c->out_count > 0, "%s: no expected output", path);
  for (uint32_t i = 0; i < c->inputs; i++)
    ck_assert_msg(c->in_count[i] == c->out_count, "%s: input %u has %u values, the output %u",
                  path, i, c->in_count[i], c->out_count);
}

/* Every element of the case through fn; the bits must be the corpus's. */
static void check_case(const char *name, uint32_t want_inputs,
                       uint32_t (*fn)(const corpus_case *c, uint32_t i)) {
  static corpus_case c;
  read_case(name, &c);
  ck_assert_msg(c.inputs == want_inputs, "%s: %u inputs, expected %u", name, c.inputs, want_inputs);
  for (uint32_t i = 0; i < c.out_count; i++) {
    uint32_t got = fn(&c, i);
    ck_assert_msg(got == c.out[i],
                  "%s element %u: operands 0x%08x 0x%08x 0x%08x give 0x%08x, the corpus "
                  "expects 0x%08x (docs/semantics.md, \"Underflow\")",
                  name, i, c.in[0][i], c.inputs > 1 ? c.in[1][i] : 0,
                  c.inputs > 2 ? c.in[2][i] : 0, got, c.out[i]);
  }
}

static uint32_t run_add(const corpus_case *c, uint32_t i) {
  return vyre_f32_add(c->in[0][i], c->in[1][i]);
}
static uint32_t run_sub(const corpus_case *c, uint32_t i) {
  return vyre_f32_sub(c->in[0][i], c->in[1][i]);
}
static uint32_t run_mul(const corpus_case *c, uint32_t i) {
  return vyre_f32_mul(c->in[0][i], c->in[1][i]);
}
static uint32_t run_div(const corpus_case *c, uint32_t i) {
  return vyre_f32_div(c->in[0][i], c->in[1][i]);
}
static uint32_t run_rcp(const corpus_case *c, uint32_t i) {
  return vyre_f32_div(0x3f800000u, c->in[0][i]);
}
static uint32_t run_fma(const corpus_case *c, uint32_t i) {
  return vyre_f32_fma(c->in[0][i], c->in[1][i], c->in[2][i]);
}

START_TEST(test_corpus_mul) { check_case("underflow.mul.f32", 2, run_mul); }
END_TEST
START_TEST(test_corpus_div) { check_case("underflow.div.f32", 2, run_div); }
END_TEST
START_TEST(test_corpus_rcp) { check_case("underflow.rcp.f32", 1, run_rcp); }
END_TEST
START_TEST(test_corpus_fma) { check_case("underflow.fma.f32", 3, run_fma); }
END_TEST
START_TEST(test_corpus_add) { check_case("underflow.add.f32", 2, run_add); }
END_TEST
START_TEST(test_corpus_sub) { check_case("underflow.sub.f32", 2, run_sub); }
END_TEST

static float f32_of(uint32_t u) {
  float f;
  memcpy(&f, &u, sizeof f);
  return f;
}
static uint32_t bits_of(float f) {
  uint32_t u;
  memcpy(&u, &f, sizeof u);
  return u;
}

/* The worked examples of docs/semantics.md, "Underflow" (m = 2^-126). */
START_TEST(test_semantics_examples) {
  ck_assert_uint_eq(vyre_f32_mul(0x3f7fffffu, 0x00800000u), 0x00000000u);
  ck_assert_uint_eq(vyre_f32_mul(0xbf7fffffu, 0x00800000u), 0x80000000u);
  ck_assert_uint_eq(vyre_f32_mul(0x3f7ffffeu, 0x00800000u), 0x00000000u);
  ck_assert_uint_eq(vyre_f32_mul(0x3f800001u, 0x00800000u), 0x00800001u);
  ck_assert_uint_eq(vyre_f32_fma(0x3f7fffffu, 0x00800000u, 0x80000000u), 0x00000000u);
  /* m - 2^-151 is a tie that goes to the even m; m - 3*2^-151 to m - 2^-149, tiny. */
  ck_assert_uint_eq(vyre_f32_mul(bits_of(18631.0f * 0x1p-70f), bits_of(1801.0f * 0x1p-81f)),
                    0x00800000u);
  ck_assert_uint_eq(vyre_f32_mul(bits_of(479.0f * 0x1p-80f), bits_of(70051.0f * 0x1p-71f)),
                    0x00000000u);
  /* The same rule for a value computed in double. */
  ck_assert_uint_eq(vyre_f32_from_f64(0x1p-126 - 0x1p-150), 0x00000000u);
  ck_assert_uint_eq(vyre_f32_from_f64(-(0x1p-126 - 0x1p-150)), 0x80000000u);
  ck_assert_uint_eq(vyre_f32_from_f64(0x1p-126 - 0x1p-151), 0x00800000u);
  ck_assert_uint_eq(vyre_f32_from_f64(1.0 / 3.0), bits_of(1.0f / 3.0f));
  ck_assert_uint_eq(vyre_f32_from_f64(1e300), 0x7f800000u);
}
END_TEST

/* Where C's own arithmetic differs: why a CPU backend calls these. */
START_TEST(test_not_c) {
  volatile float x = f32_of(0x3f7fffffu), y = f32_of(0x00800000u);
  float c = x * y; /* gradual underflow: rounds up to 2^-126 */
  ck_assert_msg(bits_of(c) == 0x00800000u, "C gives 0x%08x for 0x3f7fffff * 0x00800000", bits_of(c));
  ck_assert_uint_eq(vyre_f32_mul(0x3f7fffffu, 0x00800000u), 0x00000000u);
}
END_TEST

/* Operands and results are canonical: subnormal operands read as the zero
 * of their sign, every NaN result is 0x7FC00000, subnormal results flush. */
START_TEST(test_canonical) {
  ck_assert_uint_eq(vyre_f32_mul(0x00000001u, 0x7f000000u), 0x00000000u);  /* 2^-149 read as 0 */
  ck_assert_uint_eq(vyre_f32_mul(0x80000001u, 0x7f000000u), 0x80000000u);
  ck_assert_uint_eq(vyre_f32_add(0x00400000u, 0x00400000u), 0x00000000u);  /* not 2^-126 */
  ck_assert_uint_eq(vyre_f32_add(0x00800000u, 0x00000001u), 0x00800000u);
  ck_assert_uint_eq(vyre_f32_div(0x3f800000u, 0x00000001u), 0x7f800000u);  /* 1 / +0 */
  ck_assert_uint_eq(vyre_f32_sub(0x00c00000u, 0x00800000u), 0x00000000u);  /* 2^-127: flushed */
  ck_assert_uint_eq(vyre_f32_mul(0x7f800001u, 0x3f800000u), VYRE_F32_CANONICAL_NAN);
  ck_assert_uint_eq(vyre_f32_add(0xffc12345u, 0x3f800000u), VYRE_F32_CANONICAL_NAN);
  ck_assert_uint_eq(vyre_f32_mul(0x7f800000u, 0x00000000u), VYRE_F32_CANONICAL_NAN); /* inf * 0 */
  ck_assert_uint_eq(vyre_f32_div(0x00000000u, 0x80000000u), VYRE_F32_CANONICAL_NAN); /* 0 / -0 */
  ck_assert_uint_eq(vyre_f32_fma(0x7f800000u, 0x3f800000u, 0xff800000u), VYRE_F32_CANONICAL_NAN);
  ck_assert_uint_eq(vyre_f32_sqrt(0xbf800000u), VYRE_F32_CANONICAL_NAN);
  ck_assert_uint_eq(vyre_f32_sqrt(0x80000000u), 0x80000000u); /* sqrt(-0) = -0 */
  ck_assert_uint_eq(vyre_f32_sqrt(0x80000001u), 0x80000000u); /* a negative subnormal is -0 */
  ck_assert_uint_eq(vyre_f32_sqrt(0x40800000u), 0x40000000u);
  ck_assert_uint_eq(vyre_f32_from_f64(-NAN), VYRE_F32_CANONICAL_NAN);
  /* Ordinary values round to nearest even, fma once. */
  ck_assert_uint_eq(vyre_f32_add(0x3f800000u, 0x33800000u), 0x3f800000u); /* 1 + 2^-24: tie, even */
  ck_assert_uint_eq(vyre_f32_add(0x3f800001u, 0x33800000u), 0x3f800002u); /* tie, to even */
  ck_assert_uint_eq(vyre_f32_fma(0x3f800001u, 0x3f800001u, 0xbf800002u), 0x28800000u); /* 2^-46 */
  ck_assert_uint_eq(vyre_f32_mul(0x3f800001u, 0x3f800001u), 0x3f800002u);
}
END_TEST

static Suite *f32_suite(void) {
  Suite *s = suite_create("f32");
  TCase *tc = tcase_create("corpus");
  tcase_add_test(tc, test_corpus_mul);
  tcase_add_test(tc, test_corpus_div);
  tcase_add_test(tc, test_corpus_rcp);
  tcase_add_test(tc, test_corpus_fma);
  tcase_add_test(tc, test_corpus_add);
  tcase_add_test(tc, test_corpus_sub);
  suite_add_tcase(s, tc);
  tc = tcase_create("core");
  tcase_add_test(tc, test_semantics_examples);
  tcase_add_test(tc, test_not_c);
  tcase_add_test(tc, test_canonical);
  suite_add_tcase(s, tc);
  return s;
}

int main(void) {
  SRunner *sr = srunner_create(f32_suite());
  srunner_run_all(sr, CK_NORMAL);
  int failed = srunner_ntests_failed(sr);
  srunner_free(sr);
  return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
