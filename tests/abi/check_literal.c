/* check_literal.c -- the text form's typed literals (abi/text/literal.h): the one literal grammar and the shortest float formatter. */
#include <check.h>
#include <locale.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "abi/support/bits.h"
#include "abi/text/literal.h"

/* ---- the float formatter ------------------------------------------------ */

static const char *fmt(uint32_t type, uint64_t bits, uint32_t flags) {
  static char out[VYRE__TEXT_FLOAT_MAX];
  size_t n = vyre__text_format_float(out, type, bits, flags);
  ck_assert_msg(n == strlen(out), "the length returned is the string's");
  return out;
}

static uint32_t f32(float f) { return vyre__f32_bits(f); }

START_TEST(test_float_f32) {
  /* `vyre run` printed these as 1e+01, 1.6e+02, 7.84e+03. */
  ck_assert_str_eq(fmt(VYRE_T_F32, f32(10.0f), 0), "10");
  ck_assert_str_eq(fmt(VYRE_T_F32, f32(160.0f), 0), "160");
  ck_assert_str_eq(fmt(VYRE_T_F32, f32(7840.0f), 0), "7840");
  ck_assert_str_eq(fmt(VYRE_T_F32, f32(0.1f), 0), "0.1");
  ck_assert_str_eq(fmt(VYRE_T_F32, f32(1e-7f), 0), "1e-07");
  ck_assert_str_eq(fmt(VYRE_T_F32, f32(3.4e38f), 0), "3.4e+38");
  ck_assert_str_eq(fmt(VYRE_T_F32, f32(3.4028235e38f), 0), "3.4028235e+38");
  ck_assert_str_eq(fmt(VYRE_T_F32, f32(-2.5f), 0), "-2.5");
  ck_assert_str_eq(fmt(VYRE_T_F32, f32(0.0f), 0), "0");
  ck_assert_str_eq(fmt(VYRE_T_F32, 0x80000000u, 0), "-0");
  ck_assert_str_eq(fmt(VYRE_T_F32, 0x00000001u, 0), "1e-45");         /* smallest subnormal */
  ck_assert_str_eq(fmt(VYRE_T_F32, 0x007fffffu, 0), "1.1754942e-38"); /* largest subnormal */
  ck_assert_str_eq(fmt(VYRE_T_F32, 0x7fc00000u, 0), "nan");
  ck_assert_str_eq(fmt(VYRE_T_F32, 0xffc00001u, 0), "nan");
  ck_assert_str_eq(fmt(VYRE_T_F32, 0x7f800000u, 0), "inf");
  ck_assert_str_eq(fmt(VYRE_T_F32, 0xff800000u, 0), "-inf");
  /* The text form's flag: always reads as a float. */
  ck_assert_str_eq(fmt(VYRE_T_F32, f32(10.0f), VYRE__TEXT_FLOAT_POINT), "10.0");
  ck_assert_str_eq(fmt(VYRE_T_F32, 0x80000000u, VYRE__TEXT_FLOAT_POINT), "-0.0");
  ck_assert_str_eq(fmt(VYRE_T_F32, f32(0.1f), VYRE__TEXT_FLOAT_POINT), "0.1");
  ck_assert_str_eq(fmt(VYRE_T_F32, f32(1e-7f), VYRE__TEXT_FLOAT_POINT), "1e-07");
  ck_assert_str_eq(fmt(VYRE_T_F32, 0x7f800000u, VYRE__TEXT_FLOAT_POINT), "inf");
  /* Positional up to 1e16: the exact integer, 16 digits at most. */
  ck_assert_str_eq(fmt(VYRE_T_F32, f32(-1.2345678e15f), VYRE__TEXT_FLOAT_POINT),
                   "-1234567813922816.0");
  ck_assert_str_eq(fmt(VYRE_T_F32, f32(-9.9999998e15f), VYRE__TEXT_FLOAT_POINT), "-1e+16");
}
END_TEST

START_TEST(test_float_f16_bf16) {
  ck_assert_str_eq(fmt(VYRE_T_F16, 0x4900u, 0), "10");  /* 10 */
  ck_assert_str_eq(fmt(VYRE_T_F16, 0x5900u, 0), "160"); /* 160 */
  ck_assert_str_eq(fmt(VYRE_T_F16, 0x6fa8u, 0), "7840");
  ck_assert_str_eq(fmt(VYRE_T_F16, 0x7bffu, 0), "65504"); /* f16 max */
  ck_assert_str_eq(fmt(VYRE_T_F16, 0x2e66u, 0), "0.1");   /* f16 nearest 0.1 */
  ck_assert_str_eq(fmt(VYRE_T_F16, 0x0001u, 0), "6e-08"); /* smallest subnormal, 2^-24 */
  ck_assert_str_eq(fmt(VYRE_T_F16, 0x03ffu, 0), "0.000061"); /* largest subnormal */
  ck_assert_str_eq(fmt(VYRE_T_F16, 0x8000u, 0), "-0");
  ck_assert_str_eq(fmt(VYRE_T_F16, 0x7c00u, 0), "inf");
  ck_assert_str_eq(fmt(VYRE_T_F16, 0xfe00u, 0), "nan");
  ck_assert_str_eq(fmt(VYRE_T_BF16, 0x4120u, 0), "10");
  ck_assert_str_eq(fmt(VYRE_T_BF16, 0x4320u, 0), "160");
  ck_assert_str_eq(fmt(VYRE_T_BF16, 0x45f5u, 0), "7840");
  ck_assert_str_eq(fmt(VYRE_T_BF16, 0x4049u, 0), "3.14");  /* 3.140625 */
  ck_assert_str_eq(fmt(VYRE_T_BF16, 0x3dcdu, 0), "0.1");   /* 0.10009765625 */
  ck_assert_str_eq(fmt(VYRE_T_BF16, 0x7f7fu, 0), "3.39e+38"); /* bf16 max */
  ck_assert_str_eq(fmt(VYRE_T_BF16, 0x0001u, 0), "9e-41");    /* a subnormal */
  ck_assert_str_eq(fmt(VYRE_T_BF16, 0x8000u, VYRE__TEXT_FLOAT_POINT), "-0.0");
  /* Every finite pattern reads back through strtof and the rounding of its type. */
  for (uint32_t t = 0; t < 2; t++) {
    uint32_t type = t ? VYRE_T_BF16 : VYRE_T_F16;
    for (uint32_t h = 0; h < 0x10000u; h++) {
      uint32_t f = t ? vyre_bf16_to_f32((uint16_t)h) : vyre_f16_to_f32((uint16_t)h);
      if ((f & 0x7f800000u) == 0x7f800000u) continue;
      const char *s = fmt(type, h, 0);
      uint32_t back = vyre__f32_bits(strtof(s, NULL));
      uint32_t hb = t ? vyre_f32_to_bf16(back) : vyre_f32_to_f16(back);
      ck_assert_msg(hb == h, "%s 0x%04x is written '%s', which reads back as 0x%04x",
                    t ? "bf16" : "f16", h, s, hb);
    }
  }
}
END_TEST

START_TEST(test_float_reads_back) {
  /* Random f32 patterns (subnormals included) read back exactly. */
  uint64_t s = 0x9e3779b97f4a7c15ull;
  for (int k = 0; k < 20000; k++) {
    s ^= s << 13, s ^= s >> 7, s ^= s << 17;
    uint32_t bits = (uint32_t)s;
    if ((bits & 0x7f800000u) == 0x7f800000u) continue;
    const char *w = fmt(VYRE_T_F32, bits, 0);
    ck_assert_msg(vyre__f32_bits(strtof(w, NULL)) == bits, "0x%08x: '%s' reads back", bits, w);
  }
}
END_TEST

START_TEST(test_float_locale) {
  /* A host that chose a decimal comma still gets "0.5". */
  if (!setlocale(LC_ALL, "de_DE.UTF-8") && !setlocale(LC_ALL, "fr_FR.UTF-8")) return;
  ck_assert_str_eq(fmt(VYRE_T_F32, f32(0.5f), 0), "0.5");
  setlocale(LC_ALL, "C");
}
END_TEST

static Suite *literal_suite(void) {
  Suite *s = suite_create("literal");
  TCase *fl = tcase_create("float");
  tcase_add_test(fl, test_float_f32);
  tcase_add_test(fl, test_float_f16_bf16);
  tcase_add_test(fl, test_float_reads_back);
  tcase_add_test(fl, test_float_locale);
  suite_add_tcase(s, fl);
  return s;
}

int main(void) {
  SRunner *sr = srunner_create(literal_suite());
  srunner_run_all(sr, CK_NORMAL);
  int failed = srunner_ntests_failed(sr);
  srunner_free(sr);
  return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
