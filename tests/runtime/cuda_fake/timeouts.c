/* timeouts.c -- check_cuda_fake's errors case, the dispatch timeout (vyre_limits.timeout_ns) on every dispatch path. */
#include <time.h>
#include <unistd.h>

#include "harness.h"

static uint64_t now_ns(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static vyre_dispatch_options timeout_opts(vyre_limits *lim, uint64_t ns) {
  memset(lim, 0, sizeof *lim);
  lim->head.struct_size = sizeof *lim;
  lim->head.type = VYRE_EXT_LIMITS;
  lim->timeout_ns = ns;
  lim->max_steps = 1; /* not enforced by CUDA: ignored */
  vyre_dispatch_options o = {.struct_size = sizeof o};
  o.next = &lim->head;
  return o;
}

static void assert_timeout(vyre_status st, const vyre_error *err, uint64_t t0, uint64_t ns) {
  uint64_t took = now_ns() - t0;
  ck_assert_msg(st == VYRE_LIMIT, "a hung dispatch fails with VYRE_LIMIT, got %s: %s",
                vyre_status_name(st), err->message);
  ck_assert_msg(strstr(err->message, "budget exceeded") && strstr(err->message, "lost") &&
                    strstr(err->message, "Fix:"),
                "says what happened and how to fix it: %s", err->message);
  /* A small multiple of the timeout, with room for valgrind. */
  ck_assert_msg(took >= ns && took < ns + 10000000000ull, "failed after %llu ns (timeout %llu)",
                (unsigned long long)took, (unsigned long long)ns);
}

/* The instance is lost: calls fail fast; destroy releases the context;
 * a new instance (the kernels done or not) works. */
static void assert_lost_then_fresh(vyre_backend *b, const prog *p) {
  uint32_t in[64] = {0};
  vyre_outputs *out = NULL;
  vyre_error err = VYRE_ERROR_INIT;
  unsigned long pushes = fk.calls("cuCtxPushCurrent");
  ck_assert_int_eq(run_scale(b, p, 64, in, &out, NULL, &err), VYRE_DEVICE_LOST);
  ck_assert_msg(strstr(err.message, "timeout") && strstr(err.message, "Fix: destroy"),
                "the lost state names the timeout: %s", err.message);
  ck_assert_uint_eq(fk.calls("cuCtxPushCurrent"), pushes);
  ck_assert_uint_eq(metric(b, "device.lost"), 1);
  fakecuda_live l;
  fk.live(&l);
  long refs = l.ctx_refs;
  ck_assert_int_ge(refs, 1);
  b->vt->destroy(b);
  /* The context reference is kept: releasing it would wait for the
   * kernel. */
  fk.live(&l);
  ck_assert_int_eq(l.ctx_refs, refs);
  ck_assert_int_eq(fk.poisoned(), 0);
  /* A new instance shares it without synchronising it (with the kernel
   * still hung, a synchronisation would be misuse: teardown checks). */
  unsigned long syncs = fk.calls("cuCtxSynchronize");
  vyre_backend *c = mk();
  ck_assert_uint_eq(fk.calls("cuCtxSynchronize"), syncs);
  fk.hang_launches(0);
  for (uint32_t i = 0; i < 64; i++) in[i] = i;
  fk.set_hook(play, NULL);
  hook_mode = 1;
  hook_k = 3;
  ck_assert_int_eq(run_scale(c, p, 64, in, &out, NULL, &err), VYRE_OK);
  for (uint32_t i = 0; i < 64; i++) ck_assert_uint_eq(((uint32_t *)out->items[0].data)[i], 3 * i);
  hook_mode = 0;
  hook_k = 2;
  fk.set_hook(NULL, NULL);
  c->vt->outputs_free(c, out);
  c->vt->destroy(c);
  fk.live(&l);
  ck_assert_int_eq(l.ctx_refs, refs);
}

/* The process exit that frees what timed-out instances kept (so that the
 * next test, also without fork, starts with no context held). */
static void drop_kept_contexts(void) {
  fk.hang_launches(0);
  fakecuda_live l;
  for (fk.live(&l); l.ctx_refs > 0; fk.live(&l)) ck_assert_int_eq(fk.ctx_release(0), CUDA_SUCCESS);
}

/* What every timeout test starts from: an instance (returned), the scale
 * program (64 u32 words times 2) and its input of 64 zero words. */
typedef struct timeout_case {
  prog p;
  uint32_t in[64];
  vyre_input inputs[1];
  vyre_program_ref r;
} timeout_case;

static vyre_backend *timeout_case_open(timeout_case *f) {
  vyre_backend *b = mk();
  f->p = prog_scale(64, 2, 64);
  memset(f->in, 0, sizeof f->in);
  f->inputs[0] = (vyre_input){f->in, sizeof f->in};
  f->r = ref_of(&f->p);
  return b;
}

START_TEST(test_timeout_not_reached) {
  timeout_case f;
  vyre_backend *b = timeout_case_open(&f);
  vyre_outputs *out = NULL;
  vyre_error err = VYRE_ERROR_INIT;
  /* Without a timeout the wait blocks in the driver: no polling. */
  ck_assert_int_eq(run_scale(b, &f.p, 64, f.in, &out, NULL, &err), VYRE_OK);
  b->vt->outputs_free(b, out);
  unsigned long q = fk.calls("cuEventQuery"), s = fk.calls("cuStreamSynchronize");
  ck_assert_int_eq(run_scale(b, &f.p, 64, f.in, &out, NULL, &err), VYRE_OK);
  b->vt->outputs_free(b, out);
  ck_assert_uint_eq(fk.calls("cuEventQuery"), q);
  ck_assert_uint_eq(fk.calls("cuStreamSynchronize"), s + 1);
  /* A timeout not reached: the same result, the work polled. */
  vyre_limits lim;
  vyre_dispatch_options o = timeout_opts(&lim, 5000000000ull);
  ck_assert_int_eq(b->vt->dispatch(b, &f.r, f.inputs, 1, &o, &out, NULL, &err), VYRE_OK);
  ck_assert_uint_eq(out->count, 1);
  b->vt->outputs_free(b, out);
  ck_assert_uint_gt(fk.calls("cuEventQuery"), q);
  vyre_resident h;
  ck_assert_int_eq(b->vt->resident_alloc(b, 256, &h, &err), VYRE_OK);
  vyre_resident hs[2] = {h, h};
  ck_assert_int_eq(b->vt->dispatch_resident(b, &f.r, hs, 2, &o, NULL, &err), VYRE_OK);
  ck_assert_int_eq(b->vt->resident_free(b, h, &err), VYRE_OK);
  /* The extension says what is enforced. */
  const void *t = NULL;
  ck_assert_int_eq(b->vt->get_extension(b, VYRE_LIMITS_NAME, 1, &t, &err), VYRE_OK);
  ck_assert_uint_eq(((const vyre_limits_info *)t)->enforced, VYRE_LIMITS_TIMEOUT);
  ck_assert_int_eq(b->vt->get_extension(b, VYRE_LIMITS_NAME, 2, &t, &err), VYRE_UNSUPPORTED);
  /* pipeline_create checks the chain and ignores the limits; a dispatch
   * of the pipeline applies its own. */
  vyre_pipeline pl = 0;
  ck_assert_int_eq(b->vt->pipeline_create(b, f.p.bytes, f.p.size, &o, &pl, &err), VYRE_OK);
  vyre_program_ref pr = VYRE_PROGRAM_PIPELINE(pl);
  ck_assert_int_eq(b->vt->dispatch(b, &pr, f.inputs, 1, &o, &out, NULL, &err), VYRE_OK);
  b->vt->outputs_free(b, out);
  ck_assert_int_eq(b->vt->pipeline_release(b, pl, &err), VYRE_OK);
  /* A malformed vyre_limits is refused before anything runs. */
  lim.head.struct_size = 16;
  unsigned long launches = fk.launch_count();
  ck_assert_int_eq(b->vt->dispatch(b, &f.r, f.inputs, 1, &o, &out, NULL, &err),
                   VYRE_INVALID_ARGUMENT);
  ck_assert_msg(strstr(err.message, "vyre_limits") && strstr(err.message, "Fix:"), "%s",
                err.message);
  ck_assert_uint_eq(fk.launch_count(), launches);
  ck_assert_int_eq(b->vt->pipeline_create(b, f.p.bytes, f.p.size, &o, &pl, &err),
                   VYRE_INVALID_ARGUMENT);
  ck_assert_msg(strstr(err.message, "pipeline_create") != NULL, "%s", err.message);
  b->vt->destroy(b);
  free(f.p.bytes);
}
END_TEST

START_TEST(test_timeout_dispatch) {
  timeout_case f;
  vyre_backend *b = timeout_case_open(&f);
  vyre_outputs *out = NULL;
  vyre_error err = VYRE_ERROR_INIT;
  vyre_limits lim;
  vyre_dispatch_options o = timeout_opts(&lim, 50000000ull); /* 50 ms */
  fk.hang_launches(1);
  uint64_t t0 = now_ns();
  vyre_status st = b->vt->dispatch(b, &f.r, f.inputs, 1, &o, &out, NULL, &err);
  assert_timeout(st, &err, t0, 50000000ull);
  ck_assert_ptr_null(out);
  ck_assert_msg(strstr(err.message, "dispatch") != NULL, "%s", err.message);
  assert_lost_then_fresh(b, &f.p);

  /* 2^30 fixpoint launches: enqueueing them stops at the deadline too. */
  b = mk();
  o = timeout_opts(&lim, 50000000ull);
  o.fixpoint_iterations = 1u << 30;
  unsigned long before = fk.launch_count();
  t0 = now_ns();
  st = b->vt->dispatch(b, &f.r, f.inputs, 1, &o, &out, NULL, &err);
  assert_timeout(st, &err, t0, 50000000ull);
  ck_assert_msg(fk.launch_count() - before < (1ul << 30), "stopped enqueueing");
  assert_lost_then_fresh(b, &f.p);

  /* dispatch_into writes no slot. */
  b = mk();
  fk.hang_launches(1);
  uint32_t slot_data[64];
  memset(slot_data, 0xab, sizeof slot_data);
  vyre_output_slot slot = {slot_data, sizeof slot_data, 0};
  t0 = now_ns();
  st = b->vt->dispatch_into(b, &f.r, f.inputs, 1, &o, &slot, 1, NULL, &err);
  assert_timeout(st, &err, t0, 50000000ull);
  ck_assert_uint_eq(slot_data[0], 0xabababab);
  ck_assert_uint_eq(slot.size, 0);
  assert_lost_then_fresh(b, &f.p);
  free(f.p.bytes);
  drop_kept_contexts();
}
END_TEST

START_TEST(test_timeout_async) {
  timeout_case f;
  vyre_backend *b = timeout_case_open(&f);
  vyre_outputs *out = NULL;
  vyre_error err = VYRE_ERROR_INIT;
  /* Compiled first, so that the timed call is quick even under valgrind. */
  ck_assert_int_eq(run_scale(b, &f.p, 64, f.in, &out, NULL, &err), VYRE_OK);
  b->vt->outputs_free(b, out);
  out = NULL;
  vyre_limits lim;
  vyre_dispatch_options o = timeout_opts(&lim, 1000000000ull); /* 1 s */
  fk.hang_launches(1);
  vyre_pending pend = 0;
  uint64_t t0 = now_ns();
  ck_assert_int_eq(b->vt->dispatch_async(b, &f.r, f.inputs, 1, &o, &pend, &err), VYRE_OK);
  memset(&lim, 0, sizeof lim); /* read before dispatch_async returned */
  int ready = 1;
  ck_assert_int_eq(b->vt->pending_poll(b, pend, &ready, &err), VYRE_OK);
  ck_assert_msg(ready == 0 || now_ns() - t0 >= 1000000000ull, "not ready before its deadline");
  /* Past the deadline the dispatch counts as failed: ready. */
  while (now_ns() - t0 < 1010000000ull) usleep(5000);
  ck_assert_int_eq(b->vt->pending_poll(b, pend, &ready, &err), VYRE_OK);
  ck_assert_int_eq(ready, 1);
  assert_timeout(b->vt->pending_wait(b, pend, &out, NULL, &err), &err, t0, 1000000000ull);
  ck_assert_ptr_null(out);
  ck_assert_int_eq(b->vt->pending_wait(b, pend, &out, NULL, &err), VYRE_INVALID_HANDLE);
  assert_lost_then_fresh(b, &f.p);

  /* Released before its wait: destroy waits until the deadline only,
   * then gives up (no wait forever). */
  b = mk();
  fk.hang_launches(1);
  o = timeout_opts(&lim, 50000000ull);
  ck_assert_int_eq(b->vt->dispatch_async(b, &f.r, f.inputs, 1, &o, &pend, &err), VYRE_OK);
  ck_assert_int_eq(b->vt->pending_release(b, pend, &err), VYRE_OK);
  fakecuda_live l;
  fk.live(&l);
  long refs = l.ctx_refs;
  t0 = now_ns();
  b->vt->destroy(b);
  ck_assert_msg(now_ns() - t0 < 2000000000ull, "destroy returned");
  fk.live(&l);
  ck_assert_int_eq(l.ctx_refs, refs); /* kept, as after a timed-out wait */
  /* Released, then shutdown: it waits until the deadline only, and says
   * the instance is lost (no synchronisation of the hung context). */
  b = mk();
  o = timeout_opts(&lim, 50000000ull);
  ck_assert_int_eq(b->vt->dispatch_async(b, &f.r, f.inputs, 1, &o, &pend, &err), VYRE_OK);
  ck_assert_int_eq(b->vt->pending_release(b, pend, &err), VYRE_OK);
  t0 = now_ns();
  ck_assert_int_eq(b->vt->shutdown(b, &err), VYRE_DEVICE_LOST);
  ck_assert_msg(strstr(err.message, "timeout") && strstr(err.message, "Fix:"), "%s", err.message);
  ck_assert_msg(now_ns() - t0 < 10000000000ull, "shutdown returned");
  b->vt->destroy(b);
  fk.hang_launches(0);
  b = mk();
  ck_assert_int_eq(run_scale(b, &f.p, 64, f.in, &out, NULL, &err), VYRE_OK);
  b->vt->outputs_free(b, out);
  b->vt->destroy(b);
  free(f.p.bytes);
  drop_kept_contexts();
}
END_TEST

START_TEST(test_timeout_resident_sequence) {
  timeout_case f;
  vyre_backend *b = timeout_case_open(&f);
  prog p = prog_inc(64);
  vyre_program_ref r = ref_of(&p);
  vyre_error err = VYRE_ERROR_INIT;
  vyre_resident h;
  ck_assert_int_eq(b->vt->resident_alloc(b, 256, &h, &err), VYRE_OK);
  vyre_limits lim;
  vyre_dispatch_options o = timeout_opts(&lim, 50000000ull);
  fk.hang_launches(1);
  uint64_t t0 = now_ns();
  assert_timeout(b->vt->dispatch_resident(b, &r, &h, 1, &o, NULL, &err), &err, t0,
                 50000000ull);
  ck_assert_msg(strstr(err.message, "dispatch_resident") != NULL, "%s", err.message);
  /* The handle can still be freed. */
  ck_assert_int_eq(b->vt->resident_free(b, h, &err), VYRE_OK);
  assert_lost_then_fresh(b, &f.p);

  /* A sequence waits at most the smallest timeout of its steps (here the
   * second step's); its reads are not performed. */
  b = mk();
  ck_assert_int_eq(b->vt->resident_alloc(b, 256, &h, &err), VYRE_OK);
  vyre_limits lim2;
  vyre_dispatch_options o1 = timeout_opts(&lim, 10000000000ull), o2 = timeout_opts(&lim2, 50000000ull);
  vyre_sequence_step steps[2] = {{sizeof steps[0], 1, &r, &h, &o1}, {sizeof steps[0], 1, &r, &h, &o2}};
  uint32_t back[64];
  memset(back, 0xcd, sizeof back);
  vyre_resident_copy rd = {h, 0, back, sizeof back};
  fk.hang_launches(1);
  t0 = now_ns();
  assert_timeout(b->vt->dispatch_sequence(b, steps, 2, 3, &rd, 1, NULL, &err), &err, t0,
                 50000000ull);
  ck_assert_msg(strstr(err.message, "dispatch_sequence") != NULL, "%s", err.message);
  ck_assert_uint_eq(back[0], 0xcdcdcdcd);
  assert_lost_then_fresh(b, &f.p);
  free(p.bytes);
  free(f.p.bytes);
  drop_kept_contexts();
}
END_TEST

void fake_timeout_tests(TCase *tc) {
  tcase_add_test(tc, test_timeout_not_reached);
  tcase_add_test(tc, test_timeout_dispatch);
  tcase_add_test(tc, test_timeout_async);
  tcase_add_test(tc, test_timeout_resident_sequence);
}
