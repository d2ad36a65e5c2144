/* check_chain.c -- the extension-chain walker (abi/format/chain.h) and the vyre_limits reader on it (abi/format/budget.h). */
#include <check.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "abi/format/budget.h"
#include "abi/format/chain.h"
#include "vyre/vyre_support.h"

/* A made-up chained struct of some other extension: the walker skips it. */
#define EXT_OTHER 0x54540001u
typedef struct other_ext {
  vyre_ext head;
  uint64_t payload;
} other_ext;

static const vyre__ext_kind other_kind = {EXT_OTHER, sizeof(other_ext), "other_ext", "other"};

static vyre_dispatch_options options_with(const vyre_ext *next) {
  vyre_dispatch_options o;
  memset(&o, 0, sizeof o);
  o.struct_size = sizeof o;
  o.next = next;
  return o;
}

static vyre_limits limits(uint64_t timeout, uint64_t steps, const vyre_ext *next) {
  vyre_limits l;
  memset(&l, 0, sizeof l);
  l.head.struct_size = sizeof l;
  l.head.type = VYRE_EXT_LIMITS;
  l.head.next = next;
  l.timeout_ns = timeout;
  l.max_steps = steps;
  return l;
}

static other_ext other(const vyre_ext *next) {
  other_ext x;
  memset(&x, 0, sizeof x);
  x.head.struct_size = sizeof x;
  x.head.type = EXT_OTHER;
  x.head.next = next;
  return x;
}

/* Expect a VYRE_INVALID_ARGUMENT whose message contains `want`. */
static void expect_refused(const vyre_dispatch_options *o, const vyre__ext_kind *kind,
                           const char *want) {
  vyre_error err = VYRE_ERROR_INIT;
  const vyre_ext *found = (const vyre_ext *)o;
  vyre_status st = vyre__ext_find(o, kind, "dispatch", &found, &err);
  ck_assert_msg(st == VYRE_INVALID_ARGUMENT, "the chain is refused (status %d, '%s')", (int)st,
                err.message);
  ck_assert_msg(found == NULL, "nothing is found when the chain is refused");
  ck_assert_msg(strstr(err.message, want) != NULL, "message '%s' says '%s'", err.message, want);
  ck_assert_msg(strncmp(err.message, "dispatch: ", 10) == 0, "message '%s' names the call",
                err.message);
  ck_assert_msg(strstr(err.message, "Fix: ") != NULL, "message '%s' has a Fix", err.message);
}

START_TEST(test_find_none) {
  vyre_error err = VYRE_ERROR_INIT;
  const vyre_ext *found = (const vyre_ext *)&err;
  ck_assert_int_eq(vyre__ext_find(NULL, &other_kind, "dispatch", &found, &err), VYRE_OK);
  ck_assert_msg(found == NULL, "NULL options chain nothing");
  vyre_dispatch_options o = options_with(NULL);
  found = (const vyre_ext *)&err;
  ck_assert_int_eq(vyre__ext_find(&o, &other_kind, "dispatch", &found, &err), VYRE_OK);
  ck_assert_msg(found == NULL, "next = NULL chains nothing");
  vyre_limits l = limits(5, 0, NULL);
  o = options_with(&l.head);
  ck_assert_int_eq(vyre__ext_find(&o, &other_kind, "dispatch", &found, &err), VYRE_OK);
  ck_assert_msg(found == NULL, "a chain without the type finds nothing");
}
END_TEST

START_TEST(test_find_one) {
  vyre_error err = VYRE_ERROR_INIT;
  other_ext x = other(NULL);
  vyre_limits l = limits(5, 7, &x.head);
  vyre_dispatch_options o = options_with(&l.head);
  const vyre_ext *found = NULL;
  ck_assert_int_eq(vyre__ext_find(&o, &other_kind, "dispatch", &found, &err), VYRE_OK);
  ck_assert_msg(found == &x.head, "the entry of the type is found after one of another type");
  vyre_limits out;
  ck_assert_int_eq(vyre__limits_read(&o, "dispatch", &out, &err), VYRE_OK);
  ck_assert_msg(out.timeout_ns == 5 && out.max_steps == 7, "the limits are read");
  ck_assert_msg(out.head.struct_size == sizeof out && out.head.type == VYRE_EXT_LIMITS &&
                    out.head.next == NULL,
                "the copy's head is its own, not the caller's");
  /* A larger struct of a later revision is fine. */
  struct {
    other_ext x;
    uint64_t later;
  } big;
  memset(&big, 0, sizeof big);
  big.x = other(NULL);
  big.x.head.struct_size = sizeof big;
  o = options_with(&big.x.head);
  ck_assert_int_eq(vyre__ext_find(&o, &other_kind, "dispatch", &found, &err), VYRE_OK);
  ck_assert_msg(found == &big.x.head, "a struct larger than the kind's size is taken");
}
END_TEST

START_TEST(test_pre_1_1_options) {
  /* A 1.0 caller's options end before `next`: whatever follows is not read. */
  vyre_error err = VYRE_ERROR_INIT;
  vyre_dispatch_options o = options_with((const vyre_ext *)(uintptr_t)0x10);
  o.struct_size = (uint32_t)offsetof(vyre_dispatch_options, next);
  const vyre_ext *found = (const vyre_ext *)&err;
  ck_assert_int_eq(vyre__ext_find(&o, &other_kind, "dispatch", &found, &err), VYRE_OK);
  ck_assert_msg(found == NULL, "options without `next` have no chain");
  vyre_limits out;
  out.timeout_ns = 9;
  ck_assert_int_eq(vyre__limits_read(&o, "dispatch", &out, &err), VYRE_OK);
  ck_assert_msg(out.timeout_ns == 0 && out.max_steps == 0, "no limits: all zero");
}
END_TEST

START_TEST(test_bad_entries) {
  other_ext x = other(NULL);
  vyre_limits l = limits(1, 0, &x.head);
  vyre_dispatch_options o = options_with(&l.head);
  /* Checked on every entry, of every type. */
  l.head.struct_size = sizeof(vyre_ext) - 1;
  expect_refused(&o, &other_kind, "extension chain entry 0 has struct_size 15, less than its "
                                  "16-byte head (vyre_ext)");
  l.head.struct_size = sizeof l;
  x.head.type = 0;
  expect_refused(&o, &other_kind, "extension chain entry 1 has type 0, which is never a type");
  x.head.type = EXT_OTHER;
  x.head.struct_size = sizeof x - 1;
  expect_refused(&o, &other_kind, "other_ext (chain entry 1) has struct_size 23, 24 expected. "
                                  "Fix: set head.struct_size = sizeof(other_ext)");
  /* ... but a short struct of a type not looked for is skipped whole. */
  vyre_error err = VYRE_ERROR_INIT;
  vyre_limits out;
  ck_assert_int_eq(vyre__limits_read(&o, "dispatch", &out, &err), VYRE_OK);
  ck_assert_msg(out.timeout_ns == 1, "limits read past a short entry of another type");
  l.head.struct_size = sizeof l - 1;
  ck_assert_int_eq(vyre__limits_read(&o, "pipeline_create", &out, &err), VYRE_INVALID_ARGUMENT);
  ck_assert_str_eq(err.message, "pipeline_create: vyre_limits (chain entry 0) has struct_size 31, "
                                "32 expected. Fix: set head.struct_size = sizeof(vyre_limits)");
}
END_TEST

START_TEST(test_duplicate) {
  other_ext x2 = other(NULL);
  vyre_limits l = limits(1, 0, &x2.head);
  other_ext x1 = other(&l.head);
  vyre_dispatch_options o = options_with(&x1.head);
  expect_refused(&o, &other_kind, "the extension chain holds two other_ext entries (the second "
                                  "is entry 2). Fix: chain one other per call");
  vyre_limits l2 = limits(2, 0, NULL);
  vyre_limits l1 = limits(1, 0, &l2.head);
  o = options_with(&l1.head);
  vyre_error err = VYRE_ERROR_INIT;
  vyre_limits out;
  ck_assert_int_eq(vyre__limits_read(&o, "dispatch", &out, &err), VYRE_INVALID_ARGUMENT);
  ck_assert_str_eq(err.message, "dispatch: the extension chain holds two vyre_limits entries (the "
                                "second is entry 1). Fix: chain one vyre_limits per call");
}
END_TEST

START_TEST(test_cycle_bound) {
  /* 64 entries end the chain in time; a 65th, or a cycle, does not. */
  other_ext *xs = calloc(VYRE__CHAIN_MAX + 1, sizeof *xs);
  ck_assert_ptr_nonnull(xs);
  for (uint32_t i = 0; i <= VYRE__CHAIN_MAX; i++) {
    xs[i].head.struct_size = sizeof xs[i];
    xs[i].head.type = EXT_OTHER + 1 + i;
    xs[i].head.next = i < VYRE__CHAIN_MAX ? &xs[i + 1].head : NULL;
  }
  xs[VYRE__CHAIN_MAX - 1].head.next = NULL;
  xs[VYRE__CHAIN_MAX - 1].head.type = EXT_OTHER;
  vyre_dispatch_options o = options_with(&xs[0].head);
  vyre_error err = VYRE_ERROR_INIT;
  const vyre_ext *found = NULL;
  ck_assert_int_eq(vyre__ext_find(&o, &other_kind, "dispatch", &found, &err), VYRE_OK);
  ck_assert_msg(found == &xs[VYRE__CHAIN_MAX - 1].head, "the 64th entry is found");
  xs[VYRE__CHAIN_MAX - 1].head.next = &xs[VYRE__CHAIN_MAX].head;
  expect_refused(&o, &other_kind, "the options' extension chain has more than 64 entries. Fix: "
                                  "end the chain with next = NULL");
  xs[1].head.next = &xs[0].head;
  expect_refused(&o, &other_kind, "the options' extension chain is a cycle: entry 1's next points "
                                  "back to entry 0. Fix: end the chain with next = NULL");
  free(xs);
}
END_TEST

START_TEST(test_cycle_and_size_bounds) {
  /* A vyre_limits that points to itself is a cycle, not "two entries";
   * an entry over 64 KiB is garbage (issue 24, finding 16). */
  vyre_limits l = limits(1, 0, NULL);
  l.head.next = &l.head;
  vyre_dispatch_options o = options_with(&l.head);
  vyre_error err = VYRE_ERROR_INIT;
  vyre_limits out;
  ck_assert_int_eq(vyre__limits_read(&o, "dispatch", &out, &err), VYRE_INVALID_ARGUMENT);
  ck_assert_str_eq(err.message, "dispatch: the options' extension chain is a cycle: entry 0's next "
                                "points back to entry 0. Fix: end the chain with next = NULL");
  uint32_t sizes[] = {70000u, 0xffffffffu};
  for (unsigned k = 0; k < 2; k++) {
    other_ext x = other(NULL);
    x.head.struct_size = sizes[k];
    o = options_with(&x.head);
    expect_refused(&o, &other_kind, "extension chain entry 0 has struct_size");
    expect_refused(&o, &other_kind, "more than 65536 (garbage: an uninitialised struct?)");
  }
}
END_TEST

static Suite *chain_suite(void) {
  Suite *s = suite_create("chain");
  TCase *core = tcase_create("core");
  tcase_add_test(core, test_find_none);
  tcase_add_test(core, test_find_one);
  tcase_add_test(core, test_pre_1_1_options);
  suite_add_tcase(s, core);
  TCase *errors = tcase_create("errors");
  tcase_add_test(errors, test_bad_entries);
  tcase_add_test(errors, test_duplicate);
  tcase_add_test(errors, test_cycle_bound);
  tcase_add_test(errors, test_cycle_and_size_bounds);
  suite_add_tcase(s, errors);
  return s;
}

int main(void) {
  SRunner *sr = srunner_create(chain_suite());
  srunner_run_all(sr, CK_NORMAL);
  int failed = srunner_ntests_failed(sr);
  srunner_free(sr);
  return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
