/* check_needs.c -- vyre_program_needs and vyre_needs_unmet (vyre_support.h) through the shared libvyre: what a program needs, what an offer in registration form lacks, and the argument errors. */
#include <check.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "vyre/vyre_support.h"
#include "vyre/vyre_text.h"

/* The decoded program of `text` (freed by the caller). */
static vyre_program *program_of(const char *text) {
  void *bytes = NULL;
  size_t size = 0;
  vyre_error err = VYRE_ERROR_INIT;
  ck_assert_msg(vyre_text_assemble(text, strlen(text), "needs.vyre", &bytes, &size, &err) ==
                    VYRE_OK,
                "the test program assembles: %s", err.message);
  vyre_program *p = NULL;
  ck_assert_msg(vyre_program_decode(bytes, size, &p, &err) == VYRE_OK, "decodes: %s", err.message);
  free(bytes);
  return p;
}

static vyre_needs needs_of(const char *text, const vyre_dispatch_options *o) {
  vyre_program *p = program_of(text);
  vyre_needs n;
  memset(&n, 0xa5, sizeof n);
  n.struct_size = sizeof n;
  vyre_error err = VYRE_ERROR_INIT;
  ck_assert_msg(vyre_program_needs(p, o, &n, &err) == VYRE_OK, "needs: %s", err.message);
  vyre_program_free(p);
  return n;
}

static const char *const div_u32 =
    "workgroup 4\nbuffer a ro u32 [4]\nbuffer out wo u32 [4]\n"
    "%i = gid.x\n%x = load a %i\n%y = div %x %x\nstore out %i %y\n";

/* A registration's lists: gid load store add mul (every type), no div. */
static const uint16_t small_ops[] = {VYRE_OP_INVOCATION_ID, VYRE_OP_LOAD, VYRE_OP_STORE,
                                     VYRE_OP_ADD, VYRE_OP_MUL};
static const uint32_t small_types[] = {0, 0, 0, 0, 0};
#define SMALL_COUNT (uint32_t)(sizeof small_ops / sizeof small_ops[0])
#define STORAGE_U32 ((uint64_t)VYRE_TBIT(VYRE_T_U32))

START_TEST(test_needs_of_program) {
  vyre_needs n = needs_of(div_u32, NULL);
  ck_assert_msg(VYRE_NEEDS_HAS_OP(&n, VYRE_OP_DIV) && VYRE_NEEDS_HAS_OP(&n, VYRE_OP_STORE) &&
                    !VYRE_NEEDS_HAS_OP(&n, VYRE_OP_ADD),
                "the ops the program uses, and only those");
  ck_assert_msg(n.op_types[VYRE_OP_DIV] == VYRE_TBIT(VYRE_T_U32) && n.op_types[VYRE_OP_STORE] == 0,
                "div at u32, store (a statement) at no type");
  ck_assert_msg(n.storage_types == STORAGE_U32 && n.capabilities == 0 && n.reserved == 0,
                "u32 storage, no capability, every byte written (0x%llx)",
                (unsigned long long)n.capabilities);
  ck_assert_msg(!VYRE_NEEDS_HAS_OP(&n, 300), "an op id past 255 is never needed");
}
END_TEST

/* Options add fixpoint; a chained vyre_indirect adds indirect dispatch
 * and resident buffers. */
START_TEST(test_needs_of_options) {
  vyre_dispatch_options o;
  memset(&o, 0, sizeof o);
  o.struct_size = sizeof o;
  o.fixpoint_iterations = 2;
  vyre_needs n = needs_of(div_u32, &o);
  ck_assert_msg(n.capabilities == VYRE_CAP_FIXPOINT, "fixpoint_iterations 2: fixpoint");
  vyre_indirect ind;
  memset(&ind, 0, sizeof ind);
  ind.head.struct_size = sizeof ind;
  ind.head.type = VYRE_EXT_INDIRECT;
  o.fixpoint_iterations = 1;
  o.next = &ind.head;
  n = needs_of(div_u32, &o);
  ck_assert_msg(n.capabilities == (VYRE_CAP_INDIRECT_DISPATCH | VYRE_CAP_RESIDENT),
                "a chained vyre_indirect: indirect_dispatch and resident");
}
END_TEST

/* A transcendental under strict (budget 0, and NULL options) needs
 * correctly_rounded as well as transcendental; under a budget only the
 * latter; a strict program without one needs neither. */
START_TEST(test_needs_correctly_rounded) {
  static const char *const exp_f32 =
      "workgroup 4\nbuffer a ro f32 [4]\nbuffer out wo f32 [4]\n"
      "%i = gid.x\n%x = load a %i\n%y = exp %x\nstore out %i %y\n";
  vyre_dispatch_options o;
  memset(&o, 0, sizeof o);
  o.struct_size = sizeof o;
  vyre_needs n = needs_of(exp_f32, &o);
  ck_assert_msg(n.capabilities == (VYRE_CAP_TRANSCENDENTAL | VYRE_CAP_CORRECTLY_ROUNDED),
                "exp under ulp 0: transcendental and correctly_rounded (0x%llx)",
                (unsigned long long)n.capabilities);
  n = needs_of(exp_f32, NULL);
  ck_assert_msg(n.capabilities & VYRE_CAP_CORRECTLY_ROUNDED, "NULL options are strict");
  char why[256];
  ck_assert_msg(vyre_needs_unmet(&n, NULL, NULL, 0, 0, ~VYRE_CAP_CORRECTLY_ROUNDED, why,
                                 sizeof why) >= 1 &&
                    strstr(why, "capability correctly_rounded not offered"),
                "an offer without the bit lacks it by name: '%s'", why);
  o.ulp_budget = 1;
  n = needs_of(exp_f32, &o);
  ck_assert_msg(n.capabilities == VYRE_CAP_TRANSCENDENTAL, "exp under ulp 1: transcendental only");
  o.ulp_budget = 0;
  n = needs_of(div_u32, &o);
  ck_assert_msg(n.capabilities == 0, "no transcendental, strict: nothing");
}
END_TEST

START_TEST(test_unmet_names_everything) {
  vyre_needs n = needs_of(div_u32, NULL);
  char why[256];
  ck_assert_msg(vyre_needs_unmet(&n, small_ops, small_types, SMALL_COUNT, STORAGE_U32, 0, why,
                                 sizeof why) == 1,
                "one item missing");
  ck_assert_msg(strcmp(why, "op div not claimed") == 0, "names the op: '%s'", why);
  n = needs_of("workgroup 4\nbuffer a ro u64 [4]\nbuffer out wo u64 [4]\n"
               "%i = gid.x\n%x = load a %i\n%y = add %x %x\nstore out %i %y\n",
               NULL);
  const uint32_t add_u32[] = {0, 0, 0, VYRE_TBIT(VYRE_T_U32), 0};
  ck_assert_msg(vyre_needs_unmet(&n, small_ops, add_u32, SMALL_COUNT, STORAGE_U32, 0, why,
                                 sizeof why) == 3,
                "add at u64, int64, storage u64: %s", why);
  ck_assert_msg(strcmp(why, "op add not claimed at u64; capability int64 not offered; storage "
                            "type u64 not offered") == 0,
                "every missing item named, in order: '%s'", why);
  ck_assert_msg(vyre_needs_unmet(&n, small_ops, NULL, SMALL_COUNT,
                                 STORAGE_U32 | VYRE_TBIT(VYRE_T_U64), VYRE_CAP_INT64, why,
                                 sizeof why) == 0 &&
                    why[0] == '\0',
                "NULL op_types: every type; covered: '%s'", why);
}
END_TEST

/* An op listed twice is offered at the union of its masks; op ids past
 * 255 are ignored; a short why is cut, the count stays. */
START_TEST(test_unmet_offer_forms) {
  vyre_needs n = needs_of("workgroup 4\nbuffer a ro f32 [4]\nbuffer out wo f32 [4]\n"
                          "%i = gid.x\n%x = load a %i\n%y = mul %x %x\nstore out %i %y\n",
                          NULL);
  const uint16_t ops[] = {999, VYRE_OP_INVOCATION_ID, VYRE_OP_LOAD, VYRE_OP_STORE, VYRE_OP_MUL,
                          VYRE_OP_MUL};
  const uint32_t types[] = {0, 0, 0, 0, VYRE_TBIT(VYRE_T_U32), VYRE_TBIT(VYRE_T_F32)};
  uint64_t f32 = VYRE_TBIT(VYRE_T_F32);
  ck_assert_msg(vyre_needs_unmet(&n, ops, types, 6, f32, 0, NULL, 0) == 0,
                "mul at u32 and at f32: the union covers f32");
  ck_assert_msg(vyre_needs_unmet(&n, ops, types, 5, f32, 0, NULL, 0) == 1,
                "mul at u32 only: not at f32");
  char tiny[6];
  ck_assert_msg(vyre_needs_unmet(&n, NULL, NULL, 0, 0, 0, tiny, sizeof tiny) == 5 &&
                    strlen(tiny) < sizeof tiny,
                "nothing offered: 4 ops and the storage type, the text cut to fit");
}
END_TEST

START_TEST(test_errors) {
  vyre_program *p = program_of(div_u32);
  vyre_needs n;
  memset(&n, 0, sizeof n);
  vyre_error err = VYRE_ERROR_INIT;
  ck_assert_msg(vyre_program_needs(p, NULL, &n, &err) == VYRE_INVALID_ARGUMENT &&
                    strstr(err.message, "struct_size 0") && strstr(err.message, "Fix:"),
                "struct_size 0 is refused: %s", err.message);
  ck_assert_msg(vyre_program_needs(NULL, NULL, &n, &err) == VYRE_INVALID_ARGUMENT,
                "NULL program");
  ck_assert_msg(vyre_program_needs(p, NULL, NULL, NULL) == VYRE_INVALID_ARGUMENT, "NULL out");
  /* An older caller's smaller struct: only its bytes are written. */
  unsigned char small[64];
  memset(small, 0xee, sizeof small);
  uint32_t size = 32;
  memcpy(small, &size, sizeof size);
  ck_assert_msg(vyre_program_needs(p, NULL, (vyre_needs *)(void *)small, NULL) == VYRE_OK,
                "a 32-byte vyre_needs is filled");
  ck_assert_msg(small[32] == 0xee && small[63] == 0xee, "nothing past its struct_size");
  uint64_t ops0;
  memcpy(&ops0, small + 24, sizeof ops0);
  ck_assert_msg(ops0 & (1ull << VYRE_OP_INVOCATION_ID), "its first op word is there");
  vyre_dispatch_options o;
  memset(&o, 0, sizeof o);
  o.struct_size = sizeof o;
  vyre_ext zero;
  memset(&zero, 0, sizeof zero);
  zero.struct_size = sizeof zero;
  o.next = &zero;
  n.struct_size = sizeof n;
  ck_assert_msg(vyre_program_needs(p, &o, &n, &err) == VYRE_INVALID_ARGUMENT,
                "a chain entry of type 0 is refused: %s", err.message);
  vyre_program_free(p);
  char why[128];
  ck_assert_msg(vyre_needs_unmet(NULL, small_ops, small_types, SMALL_COUNT, 0, 0, why,
                                 sizeof why) == 1 &&
                    strstr(why, "vyre_needs"),
                "NULL needs is one unmet item: %s", why);
}
END_TEST

static Suite *needs_suite(void) {
  Suite *s = suite_create("needs");
  TCase *core = tcase_create("core");
  tcase_add_test(core, test_needs_of_program);
  tcase_add_test(core, test_needs_of_options);
  tcase_add_test(core, test_needs_correctly_rounded);
  tcase_add_test(core, test_unmet_names_everything);
  tcase_add_test(core, test_unmet_offer_forms);
  suite_add_tcase(s, core);
  TCase *errors = tcase_create("errors");
  tcase_add_test(errors, test_errors);
  suite_add_tcase(s, errors);
  return s;
}

int main(void) {
  SRunner *sr = srunner_create(needs_suite());
  srunner_run_all(sr, CK_NORMAL);
  int failed = srunner_ntests_failed(sr);
  srunner_free(sr);
  return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
