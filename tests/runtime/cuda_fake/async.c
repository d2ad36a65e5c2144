/* async.c -- check_cuda_fake's async case: pendings in every order and several threads on one instance. */
#include <pthread.h>

#include "harness.h"

START_TEST(test_async_orders) {
  vyre_backend *b = mk();
  fk.set_hook(play, NULL);
  hook_mode = 1;
  hook_k = 2;
  prog p = prog_scale(64, 2, 64);
  vyre_program_ref r = ref_of(&p);
  uint32_t data[64];
  for (int i = 0; i < 64; i++) data[i] = (uint32_t)i;
  vyre_input in[1] = {{data, sizeof data}};
  vyre_error err = VYRE_ERROR_INIT;
  vyre_outputs *out = NULL;
  vyre_pending h = 0;
  int ready = -1;

  /* dispatch -> poll (not ready) -> complete -> poll (ready) -> wait */
  fk.hold_events(1);
  ck_assert_int_eq(b->vt->dispatch_async(b, &r, in, 1, NULL, &h, &err), VYRE_OK);
  ck_assert_msg(h != 0, "a pending handle");
  memset(data, 0xFF, sizeof data); /* inputs were staged before return */
  ck_assert_int_eq(b->vt->pending_poll(b, h, &ready, &err), VYRE_OK);
  ck_assert_int_eq(ready, 0);
  fk.complete_events();
  ck_assert_int_eq(b->vt->pending_poll(b, h, &ready, &err), VYRE_OK);
  ck_assert_int_eq(ready, 1);
  vyre_timing t;
  memset(&t, 0, sizeof t);
  t.struct_size = sizeof t;
  ck_assert_int_eq(b->vt->pending_wait(b, h, &out, &t, &err), VYRE_OK);
  ck_assert_uint_eq(((uint32_t *)out->items[0].data)[10], 20);
  ck_assert_msg(t.valid & VYRE_TIMING_DEVICE, "async waits report device time");
  b->vt->outputs_free(b, out);
  ck_assert_int_eq(b->vt->pending_wait(b, h, &out, NULL, &err), VYRE_INVALID_HANDLE);
  ck_assert_int_eq(b->vt->pending_poll(b, h, &ready, &err), VYRE_INVALID_HANDLE);
  ck_assert_int_eq(b->vt->pending_release(b, h, &err), VYRE_INVALID_HANDLE);

  /* wait without poll, events held: wait synchronises. */
  ck_assert_int_eq(b->vt->dispatch_async(b, &r, in, 1, NULL, &h, &err), VYRE_OK);
  ck_assert_int_eq(b->vt->pending_wait(b, h, &out, NULL, &err), VYRE_OK);
  b->vt->outputs_free(b, out);

  /* release before completion: deferred, reclaimed once done. */
  ck_assert_int_eq(b->vt->dispatch_async(b, &r, in, 1, NULL, &h, &err), VYRE_OK);
  ck_assert_int_eq(b->vt->pending_release(b, h, &err), VYRE_OK);
  ck_assert_uint_eq(metric(b, "pending.deferred"), 1);
  ck_assert_uint_eq(metric(b, "dispatch.in_flight"), 1);
  ck_assert_int_eq(b->vt->pending_release(b, h, &err), VYRE_INVALID_HANDLE);
  ck_assert_int_eq(b->vt->pending_wait(b, h, &out, NULL, &err), VYRE_INVALID_HANDLE);
  fk.complete_events();
  ck_assert_int_eq(b->vt->prepare(b, &err), VYRE_OK); /* any later call reaps */
  ck_assert_uint_eq(metric(b, "pending.deferred"), 0);
  ck_assert_uint_eq(metric(b, "dispatch.in_flight"), 0);
  ck_assert_uint_eq(metric(b, "pending.deferred_reaped"), 1);

  /* release after poll, and release of a completed one. */
  fk.hold_events(0);
  ck_assert_int_eq(b->vt->dispatch_async(b, &r, in, 1, NULL, &h, &err), VYRE_OK);
  ck_assert_int_eq(b->vt->pending_poll(b, h, &ready, &err), VYRE_OK);
  ck_assert_int_eq(b->vt->pending_release(b, h, &err), VYRE_OK);
  ck_assert_uint_eq(metric(b, "pending.deferred"), 0);

  /* A foreign handle and 0. */
  ck_assert_int_eq(b->vt->pending_wait(b, 0, &out, NULL, &err), VYRE_INVALID_HANDLE);
  ck_assert_int_eq(b->vt->pending_poll(b, 0x5000000100000001ull, &ready, &err),
                   VYRE_INVALID_HANDLE);

  /* destroy with work still pending, both held and not. */
  fk.hold_events(1);
  vyre_pending h1, h2;
  ck_assert_int_eq(b->vt->dispatch_async(b, &r, in, 1, NULL, &h1, &err), VYRE_OK);
  ck_assert_int_eq(b->vt->dispatch_async(b, &r, in, 1, NULL, &h2, &err), VYRE_OK);
  ck_assert_int_eq(b->vt->pending_release(b, h2, &err), VYRE_OK);
  b->vt->destroy(b);
  assert_no_leaks_after_destroy("async destroy with pending work");
  free(p.bytes);
}
END_TEST

/* Two threads dispatching on one instance at once. */
typedef struct thread_arg {
  vyre_backend *b;
  const prog *p;
  int failures;
} thread_arg;

static void *hammer(void *v) {
  thread_arg *a = v;
  uint32_t data[64] = {0};
  vyre_input in[1] = {{data, sizeof data}};
  vyre_program_ref r = ref_of(a->p);
  for (int i = 0; i < 40; i++) {
    vyre_error err = VYRE_ERROR_INIT;
    vyre_outputs *out = NULL;
    vyre_pending h;
    if (i % 2) {
      if (a->b->vt->dispatch(a->b, &r, in, 1, NULL, &out, NULL, &err) != VYRE_OK) a->failures++;
      a->b->vt->outputs_free(a->b, out);
    } else if (a->b->vt->dispatch_async(a->b, &r, in, 1, NULL, &h, &err) != VYRE_OK ||
               a->b->vt->pending_wait(a->b, h, &out, NULL, &err) != VYRE_OK) {
      a->failures++;
    } else {
      a->b->vt->outputs_free(a->b, out);
    }
  }
  return NULL;
}

START_TEST(test_threads) {
  vyre_backend *b = mk();
  prog p = prog_scale(64, 2, 64);
  thread_arg a[4];
  pthread_t t[4];
  for (int i = 0; i < 4; i++) {
    a[i].b = b;
    a[i].p = &p;
    a[i].failures = 0;
    pthread_create(&t[i], NULL, hammer, &a[i]);
  }
  for (int i = 0; i < 4; i++) {
    pthread_join(t[i], NULL);
    ck_assert_msg(a[i].failures == 0, "thread %d saw %d failed dispatches", i, a[i].failures);
  }
  ck_assert_uint_eq(metric(b, "cache.module.compiles") >= 1, 1);
  ck_assert_uint_eq(metric(b, "dispatch.count"), 160);
  b->vt->destroy(b);
  assert_no_leaks_after_destroy("threads");
  free(p.bytes);
}
END_TEST

void fake_async_tests(TCase *tc) {
  tcase_add_test(tc, test_async_orders);
  tcase_add_test(tc, test_threads);
}
