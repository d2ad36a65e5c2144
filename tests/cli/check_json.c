/* check_json.c -- the JSON writer behind every `vyre ... --json` (abi/support/json.c): escaping, invalid UTF-8, numbers, nesting, misuse. */
#include <check.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "abi/support/json.h"

/* A writer over an in-memory stream; text() closes it and returns what
 * was written (freed by the next call). */
static char *buf;
static size_t buf_size;
static FILE *mem;

static vyre__json open_writer(void) {
  free(buf);
  buf = NULL;
  mem = open_memstream(&buf, &buf_size);
  ck_assert_msg(mem != NULL, "open_memstream failed");
  vyre__json w;
  vyre__json_init(&w, mem);
  return w;
}

static const char *text(void) {
  fclose(mem);
  mem = NULL;
  return buf;
}

/* The string literal vyre__json_escape writes for n bytes of s. */
static const char *escaped(const char *s, size_t n) {
  vyre__json w = open_writer();
  (void)w;
  vyre__json_escape(mem, s, n);
  return text();
}

#define EXPECT_ESCAPE(in, want)                                                          \
  ck_assert_msg(strcmp(escaped(in, sizeof(in) - 1), want) == 0, "escape of %s: got %s, want %s", \
                #in, buf, want)

START_TEST(test_plain_and_short_escapes) {
  EXPECT_ESCAPE("abc", "\"abc\"");
  EXPECT_ESCAPE("", "\"\"");
  EXPECT_ESCAPE("a\"b\\c", "\"a\\\"b\\\\c\"");
  EXPECT_ESCAPE("\b\f\n\r\t", "\"\\b\\f\\n\\r\\t\"");
  EXPECT_ESCAPE("/", "\"/\"");
}
END_TEST

START_TEST(test_control_characters) {
  /* Every byte below 0x20 and DEL is escaped; none is written raw. */
  for (int c = 1; c < 0x20; c++) {
    char in[2] = {(char)c, 0};
    const char *out = escaped(in, 1);
    for (const char *p = out; *p; p++)
      ck_assert_msg((unsigned char)*p >= 0x20, "byte 0x%02x is written raw: %s", c, out);
  }
  EXPECT_ESCAPE("\x01", "\"\\u0001\"");
  EXPECT_ESCAPE("\x1f", "\"\\u001f\"");
  EXPECT_ESCAPE("\x7f", "\"\\u007f\"");
  /* A NUL inside the given length is text too. */
  ck_assert_str_eq(escaped("a\0b", 3), "\"a\\u0000b\"");
}
END_TEST

START_TEST(test_utf8) {
  /* Valid sequences of 2, 3 and 4 bytes pass through. */
  EXPECT_ESCAPE("\xc3\xa9", "\"\xc3\xa9\"");
  EXPECT_ESCAPE("\xe2\x82\xac", "\"\xe2\x82\xac\"");
  EXPECT_ESCAPE("\xf0\x9f\x98\x80", "\"\xf0\x9f\x98\x80\"");
  EXPECT_ESCAPE("\xf4\x8f\xbf\xbf", "\"\xf4\x8f\xbf\xbf\"");
  /* Invalid bytes: one U+FFFD each, and the text around them kept. */
  EXPECT_ESCAPE("a\xffz", "\"a\\ufffdz\"");
  EXPECT_ESCAPE("\x80", "\"\\ufffd\"");                      /* a lone continuation */
  EXPECT_ESCAPE("\xc3", "\"\\ufffd\"");                      /* cut short at the end */
  EXPECT_ESCAPE("\xc3z", "\"\\ufffdz\"");                    /* cut short by ASCII */
  EXPECT_ESCAPE("\xc0\xaf", "\"\\ufffd\\ufffd\"");           /* overlong '/' */
  EXPECT_ESCAPE("\xe0\x80\xaf", "\"\\ufffd\\ufffd\\ufffd\""); /* overlong, 3 bytes */
  EXPECT_ESCAPE("\xed\xa0\x80", "\"\\ufffd\\ufffd\\ufffd\""); /* a surrogate, U+D800 */
  EXPECT_ESCAPE("\xf4\x90\x80\x80", "\"\\ufffd\\ufffd\\ufffd\\ufffd\""); /* past U+10FFFF */
  EXPECT_ESCAPE("\xf8\x88\x80\x80\x80", "\"\\ufffd\\ufffd\\ufffd\\ufffd\\ufffd\"");
}
END_TEST

START_TEST(test_nesting_and_numbers) {
  vyre__json w = open_writer();
  vyre__json_object_begin(&w);
  vyre__json_key(&w, "a");
  vyre__json_array_begin(&w);
  vyre__json_uint(&w, 18446744073709551615ull);
  vyre__json_int(&w, -9223372036854775807ll - 1);
  vyre__json_double(&w, 0.1);
  vyre__json_double(&w, -2.5e-300);
  vyre__json_double(&w, NAN);
  vyre__json_double(&w, INFINITY);
  vyre__json_bool(&w, 1);
  vyre__json_bool(&w, 0);
  vyre__json_null(&w);
  vyre__json_string(&w, NULL);
  vyre__json_raw(&w, "1.5");
  vyre__json_array_end(&w);
  vyre__json_key(&w, "b");
  vyre__json_object_begin(&w);
  vyre__json_object_end(&w);
  vyre__json_key(&w, "c");
  vyre__json_array_begin(&w);
  vyre__json_array_end(&w);
  vyre__json_key(&w, "k\"ey");
  vyre__json_string_n(&w, "xy", 1);
  vyre__json_object_end(&w);
  vyre__json_end(&w);
  ck_assert_str_eq(text(), "{\"a\":[18446744073709551615,-9223372036854775808,0.1,-2.5e-300,"
                           "null,null,true,false,null,null,1.5],\"b\":{},\"c\":[],"
                           "\"k\\\"ey\":\"x\"}\n");
}
END_TEST

START_TEST(test_doubles_read_back) {
  /* The shortest of 15 to 17 digits that reads back as the same double. */
  const double values[] = {1.0, 1.0 / 3.0, 123456.789, 5e-324, 1.7976931348623157e308, -0.0};
  for (size_t i = 0; i < sizeof values / sizeof values[0]; i++) {
    vyre__json w = open_writer();
    vyre__json_double(&w, values[i]);
    const char *out = text();
    ck_assert_msg(strtod(out, NULL) == values[i], "%.17g was written as %s", values[i], out);
  }
}
END_TEST

START_TEST(test_misuse_stays_valid) {
  /* A value without a key in an object is dropped; a key without a value
   * gets null; unclosed levels are closed by vyre__json_end; a second top-level
   * value is dropped. */
  vyre__json w = open_writer();
  vyre__json_object_begin(&w);
  vyre__json_uint(&w, 1);
  vyre__json_key(&w, "a");
  vyre__json_key(&w, "b");
  vyre__json_uint(&w, 2);
  vyre__json_key(&w, "c");
  vyre__json_object_end(&w);
  vyre__json_uint(&w, 3);
  vyre__json_end(&w);
  ck_assert_str_eq(text(), "{\"a\":2,\"c\":null}\n");
  w = open_writer();
  vyre__json_array_begin(&w);
  vyre__json_object_begin(&w);
  vyre__json_key(&w, "x");
  vyre__json_end(&w);
  ck_assert_str_eq(text(), "[{\"x\":null}]\n");
  /* Nesting past VYRE__JSON_MAX_DEPTH is refused, and what is written still closes. */
  w = open_writer();
  for (int i = 0; i < VYRE__JSON_MAX_DEPTH + 5; i++) vyre__json_array_begin(&w);
  vyre__json_end(&w);
  const char *out = text();
  size_t opens = strspn(out, "[");
  ck_assert_msg(opens == VYRE__JSON_MAX_DEPTH - 1, "%zu levels opened", opens);
  ck_assert_msg(strspn(out + opens, "]") == opens, "every level is closed: %s", out);
}
END_TEST

START_TEST(test_stdout_documents) {
  unsigned before = vyre__json_stdout_documents();
  vyre__json w = open_writer();
  vyre__json_null(&w);
  vyre__json_end(&w);
  text();
  ck_assert_uint_eq(vyre__json_stdout_documents(), before); /* another stream */
  vyre__json_count_stdout_document();
  ck_assert_uint_eq(vyre__json_stdout_documents(), before + 1);
}
END_TEST

static Suite *cli_json_suite(void) {
  Suite *s = suite_create("cli_json");
  TCase *core = tcase_create("core");
  tcase_add_test(core, test_nesting_and_numbers);
  tcase_add_test(core, test_doubles_read_back);
  tcase_add_test(core, test_stdout_documents);
  suite_add_tcase(s, core);
  TCase *strings = tcase_create("strings");
  tcase_add_test(strings, test_plain_and_short_escapes);
  tcase_add_test(strings, test_control_characters);
  tcase_add_test(strings, test_utf8);
  suite_add_tcase(s, strings);
  TCase *errors = tcase_create("errors");
  tcase_add_test(errors, test_misuse_stays_valid);
  suite_add_tcase(s, errors);
  return s;
}

int main(void) {
  SRunner *sr = srunner_create(cli_json_suite());
  srunner_run_all(sr, CK_NORMAL);
  int failed = srunner_ntests_failed(sr);
  srunner_free(sr);
  free(buf);
  return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
