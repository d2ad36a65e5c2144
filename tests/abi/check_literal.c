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

/* ---- the literal grammar ------------------------------------------------ */

typedef struct lit_case {
  uint32_t type;
  const char *text;
  int ok;
  uint64_t bits;       /* when ok */
  const char *needle;  /* in the message when not */
} lit_case;

static void check_cases(const lit_case *cases, size_t n, uint32_t use) {
  for (size_t k = 0; k < n; k++) {
    const lit_case *c = &cases[k];
    uint64_t bits = 0x5a5a5a5a;
    char msg[512] = "";
    int r = vyre__text_parse_literal(c->text, strlen(c->text), c->type, use, &bits, msg,
                                     sizeof msg);
    if (c->ok)
      ck_assert_msg(r == 0 && bits == c->bits, "%s %s '%s' reads as 0x%llx (got %d, 0x%llx: %s)",
                    use ? "data" : "const", vyre_type_name(c->type), c->text,
                    (unsigned long long)c->bits, r, (unsigned long long)bits, msg);
    else
      ck_assert_msg(r != 0 && strstr(msg, c->needle) && strstr(msg, "Fix: ") &&
                        bits == 0x5a5a5a5a,
                    "%s %s '%s' is refused with \"%s\", a Fix, and no bits (got %d: %s)",
                    use ? "data" : "const", vyre_type_name(c->type), c->text, c->needle, r, msg);
  }
}

START_TEST(test_literal_data) {
  static const lit_case cases[] = {
      /* no octal: `vyre run --fill 010` read 8 */
      {VYRE_T_U32, "010", 1, 10, NULL},
      {VYRE_T_I32, "-010", 1, 0xfffffff6u, NULL},
      {VYRE_T_U8, "255", 1, 255, NULL},
      {VYRE_T_U8, "0xff", 1, 255, NULL},
      {VYRE_T_U8, "256", 0, 0, "out of range for u8 (0..255)"},
      /* case files' forms (docs/conformance.md): max, min, -1 in an unsigned element */
      {VYRE_T_U8, "-1", 1, 0xff, NULL},
      {VYRE_T_U8, "-128", 1, 0x80, NULL},
      {VYRE_T_U8, "+7", 1, 7, NULL},
      {VYRE_T_U8, "-129", 0, 0, "out of range for u8 (-128..255"},
      {VYRE_T_U8, "-0x1", 0, 0, "is signed hex. Fix: write the bits in hex without a sign"},
      {VYRE_T_U8, "-", 0, 0, "u8 literal '-' is signed hex"},
      {VYRE_T_U8, "max", 1, 0xff, NULL},
      {VYRE_T_U8, "min", 1, 0, NULL},
      {VYRE_T_U64, "-1", 1, UINT64_MAX, NULL},
      {VYRE_T_U64, "-9223372036854775808", 1, 1ull << 63, NULL},
      {VYRE_T_U64, "-9223372036854775809", 0, 0, "out of range for u64"},
      {VYRE_T_I8, "max", 1, 0x7f, NULL},
      {VYRE_T_I8, "min", 1, 0x80, NULL},
      {VYRE_T_I64, "min", 1, 1ull << 63, NULL},
      {VYRE_T_I32, "maximum", 0, 0, "Fix: write a signed decimal (-42) or hex bits (0x2a), max or min"},
      {VYRE_T_BOOL, "-1", 1, 0xffffffffu, NULL},
      {VYRE_T_BOOL, "max", 1, 0xffffffffu, NULL},
      {VYRE_T_U16, "0XFFFF", 1, 0xffff, NULL},
      {VYRE_T_U16, "0x10000", 0, 0, "out of range for u16"},
      {VYRE_T_U64, "18446744073709551615", 1, UINT64_MAX, NULL},
      {VYRE_T_I8, "-128", 1, 0x80, NULL},
      {VYRE_T_I8, "+127", 1, 0x7f, NULL},
      {VYRE_T_I8, "128", 0, 0, "Fix: write a value in -128..127"},
      {VYRE_T_I8, "0x80", 1, 0x80, NULL},
      {VYRE_T_I8, "0x100", 0, 0, "not 8 bits of hex"},
      {VYRE_T_I16, "-32768", 1, 0x8000, NULL},
      {VYRE_T_I16, "-0x1", 0, 0, "not a i16 literal"},
      {VYRE_T_I64, "-1", 1, UINT64_MAX, NULL},
      {VYRE_T_BOOL, "true", 1, 1, NULL},
      {VYRE_T_BOOL, "1", 1, 1, NULL},
      {VYRE_T_BOOL, "2", 1, 2, NULL}, /* the 32-bit word a bool buffer holds */
      {VYRE_T_BOOL, "0x80000000", 1, 0x80000000u, NULL},
      {VYRE_T_BOOL, "4294967296", 0, 0, "not a bool literal"},
      {VYRE_T_BOOL, "yes", 0, 0, "not a bool literal"},
      /* f32: any bits, subnormals kept */
      {VYRE_T_F32, "1.5", 1, 0x3fc00000u, NULL},
      {VYRE_T_F32, "-0x1.8p1", 1, 0xc0400000u, NULL},
      {VYRE_T_F32, "1e-40", 1, 0x000116c2u, NULL},
      {VYRE_T_F32, "0x00000001", 1, 1, NULL},
      {VYRE_T_F32, "0x7fc00001", 1, 0x7fc00001u, NULL},
      {VYRE_T_F32, "-nan", 1, 0xffc00000u, NULL},
      {VYRE_T_F32, "+nan", 1, 0x7fc00000u, NULL},
      {VYRE_T_F32, "-inf", 1, 0xff800000u, NULL},
      {VYRE_T_F32, "1e39", 0, 0, "beyond the largest f32"},
      {VYRE_T_F32, "1e-50", 0, 0, "underflows to zero"},
      {VYRE_T_F32, "infinity", 0, 0, "not an f32 literal"},
      {VYRE_T_F32, "1,5", 0, 0, "not an f32 literal"},
      /* f16 and bf16: read as f32, rounded to nearest even */
      {VYRE_T_F16, "1.5", 1, 0x3e00, NULL},
      {VYRE_T_F16, "65504", 1, 0x7bff, NULL},
      {VYRE_T_F16, "65519", 1, 0x7bff, NULL},
      {VYRE_T_F16, "65520", 0, 0, "beyond the largest f16 (65504)"},
      {VYRE_T_F16, "6e-8", 1, 0x0001, NULL},
      {VYRE_T_F16, "1e-9", 0, 0, "f16 literal 1e-9 underflows to zero"},
      {VYRE_T_F16, "-0.0", 1, 0x8000, NULL},
      {VYRE_T_F16, "0x3c00", 1, 0x3c00, NULL},
      {VYRE_T_F16, "0x7e01", 1, 0x7e01, NULL},
      {VYRE_T_F16, "0x10000", 0, 0, "not 16 bits of hex. Fix: f16 bits are 0x0000..0xffff"},
      {VYRE_T_F16, "nan", 1, 0x7e00, NULL},
      {VYRE_T_F16, "-nan", 1, 0xfe00, NULL},
      {VYRE_T_F16, "-inf", 1, 0xfc00, NULL},
      {VYRE_T_F16, "x", 0, 0, "'x' is not an f16 literal"},
      {VYRE_T_BF16, "3.14", 1, 0x4049, NULL},
      {VYRE_T_BF16, "1.5", 1, 0x3fc0, NULL},
      {VYRE_T_BF16, "-nan", 1, 0xffc0, NULL},
      {VYRE_T_BF16, "0x1.0p1", 1, 0x4000, NULL},
      {VYRE_T_BF16, "x", 0, 0, "'x' is not a bf16 literal"},
      {VYRE_T_VOID, "1", 0, 0, "is not a storage type"},
  };
  check_cases(cases, sizeof cases / sizeof cases[0], VYRE__LITERAL_DATA);
}
END_TEST

START_TEST(test_literal_const) {
  /* A program constant: value types, canonical f32, the text form's words. */
  static const lit_case cases[] = {
      {VYRE_T_U32, "010", 1, 10, NULL},
      {VYRE_T_U32, "4294967296", 0, 0, "Fix: use u64 or a smaller value"},
      {VYRE_T_U32, "-1", 0, 0, "Fix: use an i32/i64 constant, or write the bits in hex"},
      {VYRE_T_U32, "max", 0, 0, "'max' is not a u32 literal. Fix: write a decimal (42) or hex (0x2a) number"},
      {VYRE_T_I32, "min", 0, 0, "'min' is not a i32 literal"},
      {VYRE_T_I32, "2147483648", 0, 0, "out of range for i32. Fix: use i64"},
      {VYRE_T_F32, "1e-40", 0, 0, "is subnormal, and f32 values are canonical"},
      {VYRE_T_F32, "0x00000001", 0, 0, "are not canonical (subnormals flush to zero)"},
      {VYRE_T_F32, "0x7fc00001", 0, 0, "the only NaN is 0x7fc00000"},
      {VYRE_T_F32, "-nan", 0, 0, "f32 has one canonical NaN"},
      {VYRE_T_F32, "+nan", 0, 0, "f32 has one canonical NaN"},
      {VYRE_T_BOOL, "2", 0, 0, "not a bool literal. Fix: write true or false"},
      {VYRE_T_U8, "1", 0, 0, "u8 is not a value type"},
      {VYRE_T_F16, "1.5", 0, 0, "f16 is not a value type"},
  };
  check_cases(cases, sizeof cases / sizeof cases[0], VYRE__LITERAL_CONST);
}
END_TEST

START_TEST(test_literal_format_agree) {
  /* What the formatter writes, the parser reads back (data use). */
  for (uint32_t t = 0; t < 2; t++) {
    uint32_t type = t ? VYRE_T_BF16 : VYRE_T_F16;
    for (uint32_t h = 0; h < 0x10000u; h += 7) {
      uint32_t f = t ? vyre_bf16_to_f32((uint16_t)h) : vyre_f16_to_f32((uint16_t)h);
      if ((f & 0x7f800000u) == 0x7f800000u && (f & 0x7fffffu)) continue; /* NaN: one spelling */
      const char *w = fmt(type, h, 0);
      uint64_t back = 0;
      char msg[256];
      ck_assert_msg(vyre__text_parse_literal(w, strlen(w), type, VYRE__LITERAL_DATA, &back, msg,
                                             sizeof msg) == 0 && back == h,
                    "%s 0x%04x: '%s' reads back as 0x%04llx (%s)", vyre_type_name(type), h, w,
                    (unsigned long long)back, msg);
    }
  }
}
END_TEST

/* ---- the public API (vyre_text.h, libvyre 1.1) --------------------------- */

START_TEST(test_public_parse) {
  uint64_t bits = 7;
  vyre_error err = VYRE_ERROR_INIT;
  /* Not NUL-terminated: only `length` bytes are read. */
  ck_assert_int_eq(vyre_text_parse_literal("010xyz", 3, VYRE_T_U32, VYRE_TEXT_LITERAL_DATA, &bits,
                                           &err), VYRE_OK);
  ck_assert_msg(bits == 10, "010 is ten, got %llu", (unsigned long long)bits);
  ck_assert_int_eq(vyre_text_parse_literal("1.5", 3, VYRE_T_F16, VYRE_TEXT_LITERAL_DATA, &bits,
                                           &err), VYRE_OK);
  ck_assert_uint_eq(bits, 0x3e00);
  bits = 7;
  ck_assert_int_eq(vyre_text_parse_literal("1e-40", 5, VYRE_T_F32, VYRE_TEXT_LITERAL_CONST,
                                           &bits, &err), VYRE_INVALID_ARGUMENT);
  ck_assert_msg(err.status == VYRE_INVALID_ARGUMENT && strstr(err.message, "is subnormal") &&
                    strstr(err.message, "Fix: ") && bits == 7,
                "a refused literal fills err and leaves bits: %s", err.message);
  ck_assert_int_eq(vyre_text_parse_literal("1", 1, VYRE_T_U32, VYRE_TEXT_LITERAL_DATA, NULL,
                                           &err), VYRE_INVALID_ARGUMENT);
  ck_assert_msg(strstr(err.message, "bits is NULL"), "names the NULL: %s", err.message);
  ck_assert_int_eq(vyre_text_parse_literal(NULL, 1, VYRE_T_U32, VYRE_TEXT_LITERAL_DATA, &bits,
                                           &err), VYRE_INVALID_ARGUMENT);
  ck_assert_int_eq(vyre_text_parse_literal(NULL, 0, VYRE_T_U32, VYRE_TEXT_LITERAL_DATA, &bits,
                                           NULL), VYRE_INVALID_ARGUMENT); /* empty: no literal */
  ck_assert_int_eq(vyre_text_parse_literal("1", 1, VYRE_T_U32, 2u, &bits, &err),
                   VYRE_INVALID_ARGUMENT);
  ck_assert_msg(strstr(err.message, "use 2 is unknown"), "an unknown use: %s", err.message);
}
END_TEST

START_TEST(test_public_format) {
  char out[VYRE_TEXT_FLOAT_MAX];
  ck_assert_uint_eq(vyre_text_format_float(out, sizeof out, VYRE_T_F32, f32(7840.0f), 0), 4);
  ck_assert_str_eq(out, "7840");
  ck_assert_uint_eq(vyre_text_format_float(out, sizeof out, VYRE_T_F32, f32(10.0f),
                                           VYRE_TEXT_FLOAT_POINT), 4);
  ck_assert_str_eq(out, "10.0");
  /* Bits above the type's width are not part of the value. */
  vyre_text_format_float(out, sizeof out, VYRE_T_F16, 0xffff3e00u, 0);
  ck_assert_str_eq(out, "1.5");
  /* snprintf-like: truncated, NUL-terminated, the whole length returned. */
  char small[3] = "xx";
  ck_assert_uint_eq(vyre_text_format_float(small, sizeof small, VYRE_T_F32, f32(7840.0f), 0), 4);
  ck_assert_str_eq(small, "78");
  ck_assert_uint_eq(vyre_text_format_float(NULL, 0, VYRE_T_F32, f32(0.1f), 0), 3);
  ck_assert_uint_eq(vyre_text_format_float(out, sizeof out, VYRE_T_U32, 1, 0), 0);
  ck_assert_str_eq(out, "");
  /* The widest text fits VYRE_TEXT_FLOAT_MAX. */
  ck_assert_uint_lt(vyre_text_format_float(NULL, 0, VYRE_T_F32, 0xff7fffffu, 0),
                    VYRE_TEXT_FLOAT_MAX);
  ck_assert_uint_lt(vyre_text_format_float(NULL, 0, VYRE_T_F32, 0x80000001u, 0),
                    VYRE_TEXT_FLOAT_MAX);
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
  TCase *gr = tcase_create("grammar");
  tcase_add_test(gr, test_literal_data);
  tcase_add_test(gr, test_literal_const);
  tcase_add_test(gr, test_literal_format_agree);
  suite_add_tcase(s, gr);
  TCase *pub = tcase_create("public");
  tcase_add_test(pub, test_public_parse);
  tcase_add_test(pub, test_public_format);
  suite_add_tcase(s, pub);
  return s;
}

int main(void) {
  SRunner *sr = srunner_create(literal_suite());
  srunner_run_all(sr, CK_NORMAL);
  int failed = srunner_ntests_failed(sr);
  srunner_free(sr);
  return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
