/* check_ref_limits.c -- the reference backend's limits (vyre_limits: step budget and timeout): exact step counts, runaway loops, grids and fixpoints stopped, every dispatch path, chain misuse, the instance usable after. */
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "check_ref.h"

static uint64_t now_ns(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/* Options carrying `lim` in their chain. */
static vyre_dispatch_options limited(vyre_limits *lim, uint64_t timeout_ns, uint64_t max_steps) {
  memset(lim, 0, sizeof *lim);
  lim->head.struct_size = sizeof *lim;
  lim->head.type = VYRE_EXT_LIMITS;
  lim->timeout_ns = timeout_ns;
  lim->max_steps = max_steps;
  vyre_dispatch_options o = tr_opts();
  o.next = &lim->head;
  return o;
}

/* o[gid] = 7 over n u32 elements, workgroup 64: three instructions. */
static vyre_builder *store_program(uint32_t n) {
  vyre_builder *b = vyre_builder_new(64, 1, 1);
  uint32_t o = vyre_b_buffer(b, "o", UINT32_MAX, VYRE_ACCESS_WRITE_ONLY, VYRE_T_U32, n, 0);
  vyre_b_store(b, o, vyre_b_gid(b, 0), vyre_b_u32(b, 7));
  return b;
}

/* One invocation looping to 2^32 - 1 with a data dependence
 * (acc = acc * 3 + k), then o[0] = acc: runs for hours unstopped. */
static vyre_builder *forever_program(void) {
  vyre_builder *b = vyre_builder_new(1, 1, 1);
  uint32_t o = vyre_b_buffer(b, "o", UINT32_MAX, VYRE_ACCESS_WRITE_ONLY, VYRE_T_U32, 1, 0);
  uint32_t acc = vyre_b_local(b, VYRE_T_U32), k = vyre_b_local(b, VYRE_T_U32);
  vyre_b_let(b, acc, vyre_b_u32(b, 1));
  vyre_b_loop(b, k, vyre_b_u32(b, 0), vyre_b_u32(b, UINT32_MAX));
  uint32_t m = vyre_b_bin(b, VYRE_OP_MUL, vyre_b_get(b, acc), vyre_b_u32(b, 3));
  vyre_b_assign(b, acc, vyre_b_bin(b, VYRE_OP_ADD, m, vyre_b_get(b, k)));
  vyre_b_end(b);
  vyre_b_store(b, o, vyre_b_u32(b, 0), vyre_b_get(b, acc));
  return b;
}

static void assert_budget(vyre_status st, const vyre_error *err) {
  ck_assert_int_eq(st, VYRE_LIMIT);
  ck_assert_msg(strstr(err->message, "budget exceeded") != NULL, "message: %s", err->message);
  tr_assert_fix(err);
}

/* Dispatch b (no inputs) under o and check that the budget stops it;
 * returns how long the call took (ns). */
static uint64_t stopped(vyre_backend *be, vyre_builder *b, const vyre_dispatch_options *o,
                        vyre_error *err) {
  vyre_outputs *out = NULL;
  uint64_t t0 = now_ns();
  assert_budget(tr_dispatch(be, b, NULL, 0, o, &out, err), err);
  return now_ns() - t0;
}

/* Options carrying `lim` for 2^31 workgroups of one invocation. */
static vyre_dispatch_options huge_grid(vyre_limits *lim, uint64_t timeout_ns,
                                       uint64_t max_steps) {
  vyre_dispatch_options o = limited(lim, timeout_ns, max_steps);
  o.workgroup[0] = o.workgroup[1] = o.workgroup[2] = 1;
  o.grid[0] = 65536;
  o.grid[1] = 32768;
  o.grid[2] = 1;
  return o;
}

/* Options carrying `lim` for a fixpoint of 2^30 launches. */
static vyre_dispatch_options long_fixpoint(vyre_limits *lim, uint64_t timeout_ns,
                                           uint64_t max_steps) {
  vyre_dispatch_options o = limited(lim, timeout_ns, max_steps);
  o.fixpoint_iterations = 1u << 30;
  return o;
}

/* A program encoded once, for the calls that take a reference (free
 * bytes with free()). */
typedef struct encoded {
  void *bytes;
  size_t size;
  vyre_program_ref ref;
} encoded;

static encoded encode(vyre_builder *b) {
  encoded e;
  tr_encode(b, &e.bytes, &e.size);
  vyre_program_ref ref = VYRE_PROGRAM_BYTES(e.bytes, e.size);
  e.ref = ref;
  return e;
}

/* The instance still runs a program right after a budget error. */
static void assert_usable(vyre_backend *be) {
  vyre_outputs *out = tr_run_ok(be, store_program(100), NULL, 0, NULL);
  for (uint32_t i = 0; i < 100; i++) ck_assert_uint_eq(tr_u32_at(out, 0, i), 7);
  be->vt->outputs_free(be, out);
}

static uint64_t metric(vyre_backend *be, const char *name) {
  vyre_metric m[64];
  uint32_t count = 0;
  vyre_error err = VYRE_ERROR_INIT;
  ck_assert_int_eq(be->vt->metrics(be, m, 64, &count, &err), VYRE_OK);
  for (uint32_t i = 0; i < count && i < 64; i++)
    if (strcmp(m[i].name, name) == 0) return m[i].value;
  ck_abort_msg("no metric %s", name);
  return 0;
}

/* 100 elements in workgroups of 64: 128 invocations of 3 instructions,
 * each started (1 step) and run (3 steps) = 512 steps exactly, whatever
 * the thread count. */
static void exact_steps(const char *threads) {
  setenv("VYRE_REF_THREADS", threads, 1);
  vyre_backend *be = tr_new_backend();
  unsetenv("VYRE_REF_THREADS");
  vyre_error err = VYRE_ERROR_INIT;
  vyre_limits lim;
  vyre_dispatch_options o = limited(&lim, 0, 512);
  vyre_outputs *out = tr_run_ok(be, store_program(100), NULL, 0, &o);
  ck_assert_uint_eq(tr_u32_at(out, 0, 99), 7);
  be->vt->outputs_free(be, out);
  o = limited(&lim, 0, 511);
  out = NULL;
  assert_budget(tr_dispatch(be, store_program(100), NULL, 0, &o, &out, &err), &err);
  ck_assert_ptr_null(out);
  ck_assert_msg(strstr(err.message, "511 steps") != NULL, "names the budget: %s", err.message);
  /* Fixpoint: every launch counts. */
  o = limited(&lim, 0, 3 * 512);
  o.fixpoint_iterations = 3;
  out = tr_run_ok(be, store_program(100), NULL, 0, &o);
  be->vt->outputs_free(be, out);
  o.fixpoint_iterations = 4;
  stopped(be, store_program(100), &o, &err);
  ck_assert_uint_eq(metric(be, "dispatch.budget_exceeded"), 2);
  assert_usable(be);
  be->vt->destroy(be);
}

START_TEST(test_limits_exact_steps_one_thread) { exact_steps("1"); }
END_TEST

START_TEST(test_limits_exact_steps_threads) { exact_steps("4"); }
END_TEST

/* The finding's three runaways, each stopped by the step budget and by
 * the timeout well within a small multiple of it. */
START_TEST(test_limits_runaway_loop) {
  vyre_backend *be = tr_new_backend();
  vyre_error err = VYRE_ERROR_INIT;
  vyre_limits lim;
  vyre_dispatch_options o = limited(&lim, 0, 1000000);
  uint64_t took = stopped(be, forever_program(), &o, &err);
  ck_assert_msg(strstr(err.message, "1000000 steps") != NULL, "%s", err.message);
  ck_assert_msg(took < 5000000000ull, "a million steps take well under 5 s");
  o = limited(&lim, 200000000, 0); /* 200 ms */
  took = stopped(be, forever_program(), &o, &err);
  ck_assert_msg(took >= 200000000ull && took < 2000000000ull, "stopped after %llu ns",
                (unsigned long long)took);
  ck_assert_msg(strstr(err.message, "0.200 s") != NULL, "names the timeout: %s", err.message);
  assert_usable(be);
  be->vt->destroy(be);
}
END_TEST

/* A runaway of the given shape stopped both ways: by a budget of
 * max_steps over store_program(n_steps), well within 10 s, and by a
 * 150 ms timeout over store_program(n_timed), within 1.5 s. */
typedef vyre_dispatch_options (*runaway_options)(vyre_limits *lim, uint64_t timeout_ns,
                                                 uint64_t max_steps);

static void runaway_stopped(runaway_options shape, uint64_t max_steps, uint32_t n_steps,
                            uint32_t n_timed) {
  vyre_backend *be = tr_new_backend();
  vyre_error err = VYRE_ERROR_INIT;
  vyre_limits lim;
  vyre_dispatch_options o = shape(&lim, 0, max_steps);
  ck_assert_msg(stopped(be, store_program(n_steps), &o, &err) < 10000000000ull,
                "stopped in time");
  o = shape(&lim, 150000000, 0);
  uint64_t took = stopped(be, store_program(n_timed), &o, &err);
  ck_assert_msg(took < 1500000000ull, "stopped after %llu ns", (unsigned long long)took);
  assert_usable(be);
  be->vt->destroy(be);
}

START_TEST(test_limits_huge_grid) { runaway_stopped(huge_grid, 5000000, 16, 16); }
END_TEST

START_TEST(test_limits_fixpoint) { runaway_stopped(long_fixpoint, 2000000, 64, 1); }
END_TEST

/* No limit, or a limit not reached: the same results as without. */
START_TEST(test_limits_not_reached) {
  vyre_backend *be = tr_new_backend();
  vyre_limits lim;
  vyre_dispatch_options o = limited(&lim, 60000000000ull, 0);
  vyre_outputs *out = tr_run_ok(be, store_program(1000), NULL, 0, &o);
  ck_assert_uint_eq(tr_u32_at(out, 0, 999), 7);
  be->vt->outputs_free(be, out);
  o = limited(&lim, 0, 0); /* both 0: no limit */
  out = tr_run_ok(be, store_program(1000), NULL, 0, &o);
  be->vt->outputs_free(be, out);
  ck_assert_uint_eq(metric(be, "dispatch.budget_exceeded"), 0);
  be->vt->destroy(be);
}
END_TEST

START_TEST(test_limits_dispatch_into) {
  vyre_backend *be = tr_new_backend();
  vyre_error err = VYRE_ERROR_INIT;
  encoded forever = encode(forever_program());
  vyre_limits lim;
  vyre_dispatch_options o = limited(&lim, 0, 100000);
  uint32_t slot_data = 0xabcdef01u;
  vyre_output_slot slot = {&slot_data, sizeof slot_data, 0};
  assert_budget(be->vt->dispatch_into(be, &forever.ref, NULL, 0, &o, &slot, 1, NULL, &err), &err);
  ck_assert_uint_eq(slot_data, 0xabcdef01u); /* nothing written */
  free(forever.bytes);
  be->vt->destroy(be);
}
END_TEST

START_TEST(test_limits_async) {
  vyre_backend *be = tr_new_backend();
  const vyre_backend_vtable *vt = be->vt;
  vyre_error err = VYRE_ERROR_INIT;
  encoded forever = encode(forever_program()), ok = encode(store_program(10));
  vyre_limits lim;
  vyre_dispatch_options o = limited(&lim, 100000000, 0);
  vyre_pending p1 = 0, p2 = 0;
  uint64_t t0 = now_ns();
  ck_assert_int_eq(vt->dispatch_async(be, &forever.ref, NULL, 0, &o, &p1, &err), VYRE_OK);
  /* The chain was read before dispatch_async returned. */
  memset(&lim, 0, sizeof lim);
  ck_assert_int_eq(vt->dispatch_async(be, &ok.ref, NULL, 0, NULL, &p2, &err), VYRE_OK);
  vyre_outputs *out = NULL;
  assert_budget(vt->pending_wait(be, p1, &out, NULL, &err), &err);
  ck_assert_ptr_null(out);
  ck_assert_msg(now_ns() - t0 < 2000000000ull, "stopped in time");
  /* The queue goes on. */
  ck_assert_int_eq(vt->pending_wait(be, p2, &out, NULL, &err), VYRE_OK);
  ck_assert_uint_eq(tr_u32_at(out, 0, 9), 7);
  vt->outputs_free(be, out);
  free(forever.bytes);
  free(ok.bytes);
  be->vt->destroy(be);
}
END_TEST

START_TEST(test_limits_resident_and_sequence) {
  vyre_backend *be = tr_new_backend();
  const vyre_backend_vtable *vt = be->vt;
  vyre_error err = VYRE_ERROR_INIT;
  encoded forever = encode(forever_program()), ok = encode(store_program(4));
  vyre_resident r = 0, r4 = 0;
  ck_assert_int_eq(vt->resident_alloc(be, 4, &r, &err), VYRE_OK);
  ck_assert_int_eq(vt->resident_alloc(be, 16, &r4, &err), VYRE_OK);
  vyre_limits lim;
  vyre_dispatch_options o = limited(&lim, 0, 50000);
  assert_budget(vt->dispatch_resident(be, &forever.ref, &r, 1, &o, NULL, &err), &err);
  o = limited(&lim, 100000000, 0);
  uint64_t t0 = now_ns();
  assert_budget(vt->dispatch_resident(be, &forever.ref, &r, 1, &o, NULL, &err), &err);
  ck_assert_msg(now_ns() - t0 < 2000000000ull, "stopped in time");
  /* A sequence: the limited step fails, the steps before it ran, the
   * reads are not performed. */
  vyre_limits slim;
  vyre_dispatch_options so = limited(&slim, 0, 10000);
  vyre_sequence_step steps[2] = {{sizeof(vyre_sequence_step), 1, &ok.ref, &r4, NULL},
                                 {sizeof(vyre_sequence_step), 1, &forever.ref, &r, &so}};
  uint32_t host[4] = {1, 1, 1, 1};
  vyre_resident_copy rd = {r4, 0, host, sizeof host};
  assert_budget(vt->dispatch_sequence(be, steps, 2, 1, &rd, 1, NULL, &err), &err);
  ck_assert_msg(strstr(err.message, "step 1") != NULL, "names the step: %s", err.message);
  ck_assert_uint_eq(host[0], 1);
  uint32_t dev[4] = {0};
  ck_assert_int_eq(vt->resident_download(be, r4, dev, sizeof dev, &err), VYRE_OK);
  ck_assert_uint_eq(dev[3], 7);
  /* Without the limited step the sequence runs and reads. */
  ck_assert_int_eq(vt->dispatch_sequence(be, steps, 1, 2, &rd, 1, NULL, &err), VYRE_OK);
  ck_assert_uint_eq(host[3], 7);
  ck_assert_int_eq(vt->resident_free(be, r, &err), VYRE_OK);
  ck_assert_int_eq(vt->resident_free(be, r4, &err), VYRE_OK);
  free(forever.bytes);
  free(ok.bytes);
  be->vt->destroy(be);
}
END_TEST

/* Chain rules (docs/abi.md section 5) for vyre_limits. */
START_TEST(test_limits_chain_misuse) {
  vyre_backend *be = tr_new_backend();
  vyre_error err = VYRE_ERROR_INIT;
  vyre_outputs *out = NULL;
  vyre_limits lim, lim2;
  vyre_dispatch_options o = limited(&lim, 0, 1);
  /* Too short a vyre_limits. */
  lim.head.struct_size = sizeof lim - 8;
  ck_assert_int_eq(tr_dispatch(be, store_program(4), NULL, 0, &o, &out, &err),
                   VYRE_INVALID_ARGUMENT);
  ck_assert_msg(strstr(err.message, "vyre_limits") != NULL, "%s", err.message);
  tr_assert_fix(&err);
  /* Two of them. */
  o = limited(&lim, 0, 0);
  limited(&lim2, 0, 0);
  lim.head.next = &lim2.head;
  ck_assert_int_eq(tr_dispatch(be, store_program(4), NULL, 0, &o, &out, &err),
                   VYRE_INVALID_ARGUMENT);
  tr_assert_fix(&err);
  /* A type 0 entry. */
  lim2.head.type = 0;
  ck_assert_int_eq(tr_dispatch(be, store_program(4), NULL, 0, &o, &out, &err),
                   VYRE_INVALID_ARGUMENT);
  /* A cycle. */
  lim2.head.type = 0x12340001u;
  lim2.head.next = &lim.head;
  ck_assert_int_eq(tr_dispatch(be, store_program(4), NULL, 0, &o, &out, &err),
                   VYRE_INVALID_ARGUMENT);
  tr_assert_fix(&err);
  /* An unknown type before the limits is skipped; the limits still act. */
  lim2.head.next = &lim.head;
  lim.head.next = NULL;
  lim.max_steps = 3;
  o.next = &lim2.head;
  stopped(be, store_program(4), &o, &err);
  /* pipeline_create checks the chain (and ignores the limits). */
  encoded store = encode(store_program(4));
  vyre_pipeline pl = 0;
  o = limited(&lim, 0, 1);
  ck_assert_int_eq(be->vt->pipeline_create(be, store.bytes, store.size, &o, &pl, &err), VYRE_OK);
  ck_assert_int_eq(be->vt->pipeline_release(be, pl, &err), VYRE_OK);
  lim.head.struct_size = 16;
  ck_assert_int_eq(be->vt->pipeline_create(be, store.bytes, store.size, &o, &pl, &err),
                   VYRE_INVALID_ARGUMENT);
  tr_assert_fix(&err);
  free(store.bytes);
  /* 1.0-sized options have no chain: `next` is not read. */
  o.struct_size = 40;
  o.next = (const vyre_ext *)(uintptr_t)0x1;
  out = tr_run_ok(be, store_program(4), NULL, 0, &o);
  be->vt->outputs_free(be, out);
  be->vt->destroy(be);
}
END_TEST

START_TEST(test_limits_extension) {
  ck_assert_ptr_nonnull(tr_reg->extensions);
  ck_assert_msg(strstr(tr_reg->extensions, "vyre.limits@1") != NULL, "%s", tr_reg->extensions);
  vyre_backend *be = tr_new_backend();
  vyre_error err = VYRE_ERROR_INIT;
  const void *t = NULL;
  ck_assert_int_eq(be->vt->get_extension(be, VYRE_LIMITS_NAME, 1, &t, &err), VYRE_OK);
  const vyre_limits_info *info = t;
  ck_assert_uint_ge(info->head.struct_size, sizeof *info);
  ck_assert_uint_ge(info->head.version, 1);
  ck_assert_uint_eq(info->enforced, VYRE_LIMITS_TIMEOUT | VYRE_LIMITS_STEPS);
  ck_assert_int_eq(be->vt->get_extension(be, VYRE_LIMITS_NAME, 2, &t, &err), VYRE_UNSUPPORTED);
  ck_assert_ptr_null(t);
  ck_assert_int_eq(be->vt->get_extension(be, "vyre.cuda.interop", 1, &t, &err), VYRE_UNSUPPORTED);
  tr_assert_fix(&err);
  be->vt->destroy(be);
}
END_TEST

void tr_add_limits_tcases(Suite *s) {
  TCase *tc = tcase_create("limits");
  tcase_set_timeout(tc, 120);
  tcase_add_test(tc, test_limits_exact_steps_one_thread);
  tcase_add_test(tc, test_limits_exact_steps_threads);
  tcase_add_test(tc, test_limits_runaway_loop);
  tcase_add_test(tc, test_limits_huge_grid);
  tcase_add_test(tc, test_limits_fixpoint);
  tcase_add_test(tc, test_limits_not_reached);
  tcase_add_test(tc, test_limits_dispatch_into);
  tcase_add_test(tc, test_limits_async);
  tcase_add_test(tc, test_limits_resident_and_sequence);
  tcase_add_test(tc, test_limits_chain_misuse);
  tcase_add_test(tc, test_limits_extension);
  suite_add_tcase(s, tc);
}
