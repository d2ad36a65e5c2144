/* check_argcheck.c -- the argument checks every backend makes (vyre_check_program_ref, vyre_check_inputs, vyre_check_host_abi), each message word for word. */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "vyre/vyre_support.h"

START_TEST(test_program_ref) {
  vyre_error err = VYRE_ERROR_INIT;
  static const unsigned char bytes[4] = {0};
  vyre_program_ref ok = VYRE_PROGRAM_BYTES(bytes, sizeof bytes);
  ck_assert_int_eq(vyre_check_program_ref(&ok, "dispatch", &err), VYRE_OK);
  vyre_program_ref pipe = VYRE_PROGRAM_PIPELINE(42);
  ck_assert_int_eq(vyre_check_program_ref(&pipe, "dispatch", &err), VYRE_OK);
  ck_assert_int_eq(vyre_check_program_ref(NULL, "dispatch", &err), VYRE_INVALID_ARGUMENT);
  ck_assert_str_eq(err.message, "dispatch: program is NULL. Fix: pass a vyre_program_ref");
  ck_assert_int_eq(vyre_check_program_ref(NULL, "dispatch_resident", &err),
                   VYRE_INVALID_ARGUMENT);
  ck_assert_str_eq(err.message,
                   "dispatch_resident: program is NULL. Fix: pass a vyre_program_ref");
  vyre_program_ref old = ok;
  old.struct_size = 8;
  ck_assert_int_eq(vyre_check_program_ref(&old, "dispatch", &err), VYRE_INVALID_ARGUMENT);
  char want[512];
  snprintf(want, sizeof want,
           "dispatch: vyre_program_ref.struct_size is 8, at least %zu expected. Fix: initialise "
           "it with VYRE_PROGRAM_BYTES(bytes, size) or VYRE_PROGRAM_PIPELINE(handle)",
           sizeof(vyre_program_ref));
  ck_assert_str_eq(err.message, want);
  /* A caller built against the 0.1 draft: the low half of its bytes
   * pointer lands in struct_size (issue 23, finding 4). */
  old.struct_size = 0x5a3b2c10u;
  ck_assert_int_eq(vyre_check_program_ref(&old, "dispatch", &err), VYRE_INVALID_ARGUMENT);
  ck_assert_str_eq(err.message,
                   "dispatch: struct_size 0x5a3b2c10 (1513827344) is not a vyre_program_ref: "
                   "built against the 0.1 draft, whose vyre_program_ref began with the bytes "
                   "pointer? Fix: rebuild the caller against the vyre 1.x headers and initialise "
                   "it with VYRE_PROGRAM_BYTES(bytes, size) or VYRE_PROGRAM_PIPELINE(handle)");
  old.struct_size = 65537;
  ck_assert_int_eq(vyre_check_program_ref(&old, "dispatch", &err), VYRE_INVALID_ARGUMENT);
  old.struct_size = 65536; /* a later, larger layout: read up to what this reader knows */
  ck_assert_int_eq(vyre_check_program_ref(&old, "dispatch", &err), VYRE_OK);
  old.struct_size = 0;
  ck_assert_int_eq(vyre_check_program_ref(&old, "dispatch", &err), VYRE_INVALID_ARGUMENT);
  ck_assert_msg(strstr(err.message, "struct_size is 0 (not initialised, or a caller built "
                                    "against the 0.1 draft"),
                "%s", err.message);
  ck_assert_int_eq(vyre_check_program_ref(NULL, NULL, NULL), VYRE_INVALID_ARGUMENT);
  ck_assert_int_eq(vyre_check_program_ref(NULL, NULL, &err), VYRE_INVALID_ARGUMENT);
  ck_assert_str_eq(err.message, "vyre: program is NULL. Fix: pass a vyre_program_ref");
}
END_TEST

START_TEST(test_inputs) {
  vyre_error err = VYRE_ERROR_INIT;
  static const float a[4];
  vyre_input in[2] = {{a, sizeof a}, {NULL, 0}};
  ck_assert_int_eq(vyre_check_inputs(in, 2, 2, "dispatch", &err), VYRE_OK);
  ck_assert_int_eq(vyre_check_inputs(NULL, 0, 0, "dispatch", &err), VYRE_OK);
  ck_assert_int_eq(vyre_check_inputs(in, 1, 2, "dispatch", &err), VYRE_INVALID_ARGUMENT);
  ck_assert_str_eq(err.message,
                   "dispatch: 1 inputs given, the program takes 2 (its ro, uniform and rw "
                   "buffers without the output flag, in declaration order). Fix: pass one "
                   "vyre_input per input buffer");
  ck_assert_int_eq(vyre_check_inputs(NULL, 3, 3, "dispatch", &err), VYRE_INVALID_ARGUMENT);
  ck_assert_str_eq(err.message, "dispatch: inputs is NULL with input_count 3. Fix: pass an "
                                "array of input_count vyre_input");
  in[1].size = 16;
  ck_assert_int_eq(vyre_check_inputs(in, 2, 2, "dispatch", &err), VYRE_INVALID_ARGUMENT);
  ck_assert_str_eq(err.message, "dispatch: input 1 has 16 bytes but its data is NULL. Fix: pass "
                                "the input's memory, or size 0");
}
END_TEST

START_TEST(test_host_abi) {
  vyre_error err = VYRE_ERROR_INIT;
  ck_assert_int_eq(vyre_check_host_abi("cuda plugin", VYRE_ABI_MAJOR, VYRE_ABI_MINOR, 0,
                                       VYRE_ABI_MINOR, &err),
                   VYRE_OK);
  ck_assert_int_eq(vyre_check_host_abi("cuda plugin", VYRE_ABI_MAJOR, 60000, 0, VYRE_ABI_MINOR,
                                       &err),
                   VYRE_OK); /* a newer minor is served at ours */
  ck_assert_int_eq(vyre_check_host_abi("cuda plugin", VYRE_ABI_MAJOR + 1, 0, 0, VYRE_ABI_MINOR,
                                       &err),
                   VYRE_ABI_MISMATCH);
  char want[512];
  snprintf(want, sizeof want,
           "cuda plugin: the host speaks ABI %u.0, this plugin ABI %u.0 to %u.%u (majors must "
           "match). Fix: rebuild the host and the plugins from one vyre release",
           VYRE_ABI_MAJOR + 1, VYRE_ABI_MAJOR, VYRE_ABI_MAJOR, VYRE_ABI_MINOR);
  ck_assert_str_eq(err.message, want);
  ck_assert_int_eq(vyre_check_host_abi("reference plugin", VYRE_ABI_MAJOR, 1, 2, 5, &err),
                   VYRE_ABI_MISMATCH);
  snprintf(want, sizeof want,
           "reference plugin: the host speaks ABI %u.1, older than the oldest this plugin "
           "serves (%u.2). Fix: update the host, or use the plugin of the host's vyre release",
           VYRE_ABI_MAJOR, VYRE_ABI_MAJOR);
  ck_assert_str_eq(err.message, want);
}
END_TEST

/* A caller's older, smaller error record is never written past. */
START_TEST(test_small_record) {
  struct {
    vyre_error err;
    char guard[8];
  } r;
  memset(&r, 0x5a, sizeof r);
  r.err.struct_size = (uint32_t)(offsetof(vyre_error, message) + 16);
  ck_assert_int_eq(vyre_check_program_ref(NULL, "dispatch", &r.err), VYRE_INVALID_ARGUMENT);
  ck_assert_msg(strlen(r.err.message) == 15, "the message is cut to the record");
  ck_assert_msg((unsigned char)r.err.message[16] == 0x5a, "nothing past struct_size is written");
}
END_TEST

static Suite *argcheck_suite(void) {
  Suite *s = suite_create("argcheck");
  TCase *tc = tcase_create("errors");
  tcase_add_test(tc, test_program_ref);
  tcase_add_test(tc, test_inputs);
  tcase_add_test(tc, test_host_abi);
  tcase_add_test(tc, test_small_record);
  suite_add_tcase(s, tc);
  return s;
}

int main(void) {
  SRunner *sr = srunner_create(argcheck_suite());
  srunner_run_all(sr, CK_NORMAL);
  int failed = srunner_ntests_failed(sr);
  srunner_free(sr);
  return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
