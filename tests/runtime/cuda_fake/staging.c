/* staging.c -- check_cuda_fake's staging case: host transfers larger than one chunk, through the pinned ring and the copy threads. */
#include <pthread.h>

#include "harness.h"

/* A ring of 3 chunks of 1 MiB and 3 copy threads; buffers of 2.7 MiB
 * (two whole chunks and an unaligned tail), so the copies are split
 * over the crew (a part is at least 256 KiB) and the ring wraps. */
#define BIG_N 700001u
#define CHUNK (1u << 20)

/* The ring alone: these dispatches are not run in chunks (split.c has
 * its own case). */
static void staging_env(const char *threads) {
  setenv("VYRE_CUDA_SPLIT_CHUNK", "0", 1);
  setenv("VYRE_CUDA_STAGING_CHUNK", "1M", 1);
  setenv("VYRE_CUDA_STAGING_CHUNKS", "3", 1);
  setenv("VYRE_CUDA_COPY_THREADS", threads, 1);
}

static uint32_t *big_input(void) {
  uint32_t *in = malloc((size_t)BIG_N * 4u);
  ck_assert_ptr_nonnull(in);
  for (uint32_t i = 0; i < BIG_N; i++) in[i] = i * 2654435761u + 1u;
  return in;
}

static void check_scaled(const uint32_t *in, const uint32_t *out, uint32_t k, const char *what) {
  for (uint32_t i = 0; i < BIG_N; i++)
    if (out[i] != in[i] * k)
      ck_abort_msg("%s: word %u is 0x%08x, expected 0x%08x", what, i, out[i], in[i] * k);
}

static const uint64_t big_bytes = (uint64_t)BIG_N * 4u;
/* Chunk uses of one transfer of `bytes`: pieces of a tenth of it, 4 KiB
 * aligned, at least 512 KiB and at most a chunk. */
static uint64_t chunks_of(uint64_t bytes) {
  uint64_t cap = (bytes / 10 + 4095u) & ~(uint64_t)4095u;
  if (cap < (512u << 10)) cap = 512u << 10;
  if (cap > CHUNK) cap = CHUNK;
  return (bytes + cap - 1) / cap;
}

static void staged_dispatches(const char *threads) {
  staging_env(threads);
  vyre_backend *b = mk();
  fk.set_hook(play, NULL);
  hook_mode = 1;
  hook_k = 3;
  prog p = prog_scale(BIG_N, 3, 128);
  vyre_program_ref r = ref_of(&p);
  uint32_t *in = big_input();
  vyre_input inputs[1] = {{in, big_bytes}};
  vyre_error err = VYRE_ERROR_INIT;
  ck_assert_uint_eq(metric(b, "staging.pinned_bytes"), 0);

  /* dispatch: the input goes up in 3 chunks, the output comes back in 3. */
  vyre_outputs *out = NULL;
  ck_assert_msg(b->vt->dispatch(b, &r, inputs, 1, NULL, &out, NULL, &err) == VYRE_OK,
                "staged dispatch: %s", err.message);
  ck_assert_uint_eq(out->items[0].size, big_bytes);
  check_scaled(in, out->items[0].data, 3, "dispatch");
  b->vt->outputs_free(b, out);
  ck_assert_uint_eq(metric(b, "staging.transfers"), 2);
  ck_assert_uint_eq(metric(b, "staging.chunk_copies"), 2 * chunks_of(big_bytes));
  ck_assert_uint_eq(metric(b, "staging.bytes_up"), big_bytes);
  ck_assert_uint_eq(metric(b, "staging.bytes_down"), big_bytes);
  ck_assert_uint_eq(metric(b, "staging.pinned_bytes"), 3 * CHUNK);
  if (strcmp(threads, "1") == 0)
    ck_assert_msg(metric(b, "staging.split_copies") == 0, "one thread copies alone");
  ck_assert_msg(metric(b, "pool.pinned.live_bytes") == 0 &&
                    metric(b, "pool.pinned.cached_bytes") < big_bytes,
                "large buffers are not staged whole through the pinned pool");
  ck_assert_uint_eq(fk.pageable_copies(), 0);

  /* The hot path allocates no pinned memory: the ring is kept. */
  unsigned long host_allocs = fk.calls("cuMemHostAlloc");
  vyre_output_slot slot = {malloc(big_bytes), big_bytes, 0};
  ck_assert_int_eq(b->vt->dispatch_into(b, &r, inputs, 1, NULL, &slot, 1, NULL, &err), VYRE_OK);
  ck_assert_uint_eq(slot.size, big_bytes);
  check_scaled(in, slot.data, 3, "dispatch_into");
  /* The workers take granules: within a few transfers even on a loaded
   * machine (the transfer's own thread copies what they do not). */
  for (int i = 0; strcmp(threads, "1") != 0 && i < 50 && !metric(b, "staging.split_copies"); i++)
    ck_assert_int_eq(b->vt->dispatch_into(b, &r, inputs, 1, NULL, &slot, 1, NULL, &err), VYRE_OK);
  if (strcmp(threads, "1") != 0)
    ck_assert_msg(metric(b, "staging.split_copies") > 0, "the worker threads copy granules");

  /* Async: the input is read before dispatch_async returns. */
  vyre_pending h = 0;
  fk.hold_events(1);
  ck_assert_int_eq(b->vt->dispatch_async(b, &r, inputs, 1, NULL, &h, &err), VYRE_OK);
  uint32_t *saved = malloc(big_bytes);
  memcpy(saved, in, big_bytes);
  memset(in, 0xAB, big_bytes);
  fk.complete_events();
  fk.hold_events(0);
  ck_assert_int_eq(b->vt->pending_wait(b, h, &out, NULL, &err), VYRE_OK);
  check_scaled(saved, out->items[0].data, 3, "dispatch_async");
  b->vt->outputs_free(b, out);
  memcpy(in, saved, big_bytes);
  /* Released before completion: deferred, then reaped. */
  ck_assert_int_eq(b->vt->dispatch_async(b, &r, inputs, 1, NULL, &h, &err), VYRE_OK);
  ck_assert_int_eq(b->vt->pending_release(b, h, &err), VYRE_OK);
  ck_assert_uint_eq(fk.calls("cuMemHostAlloc"), host_allocs);

  /* Small buffers keep the pool path: the ring is not touched. */
  uint64_t transfers = metric(b, "staging.transfers");
  prog small = prog_scale(1024, 3, 128);
  ck_assert_int_eq(run_scale(b, &small, 1024, in, &out, NULL, &err), VYRE_OK);
  b->vt->outputs_free(b, out);
  ck_assert_uint_eq(metric(b, "staging.transfers"), transfers);

  /* shutdown gives the ring back; the next large transfer takes it again. */
  ck_assert_int_eq(b->vt->shutdown(b, &err), VYRE_OK);
  ck_assert_uint_eq(metric(b, "staging.pinned_bytes"), 0);
  ck_assert_int_eq(b->vt->dispatch_into(b, &r, inputs, 1, NULL, &slot, 1, NULL, &err), VYRE_OK);
  check_scaled(in, slot.data, 3, "after shutdown");
  b->vt->destroy(b);
  assert_no_leaks_after_destroy("staged dispatches");
  free(slot.data);
  free(saved);
  free(in);
  free(p.bytes);
  free(small.bytes);
}

START_TEST(test_staging_dispatch) { staged_dispatches("3"); }
END_TEST

START_TEST(test_staging_dispatch_one_thread) { staged_dispatches("1"); }
END_TEST

START_TEST(test_staging_resident) {
  staging_env("4");
  vyre_backend *b = mk();
  vyre_error err = VYRE_ERROR_INIT;
  const uint64_t size = 3 * CHUNK + 13;
  vyre_resident h = 0, h2 = 0;
  ck_assert_int_eq(b->vt->resident_alloc(b, size, &h, &err), VYRE_OK);
  ck_assert_int_eq(b->vt->resident_alloc(b, size, &h2, &err), VYRE_OK);
  uint8_t *buf = malloc(size), *back = malloc(size), *back2 = malloc(size);
  for (uint64_t i = 0; i < size; i++) buf[i] = (uint8_t)(i * 131 + (i >> 12));
  unsigned long syncs = fk.calls("cuStreamSynchronize");
  ck_assert_int_eq(b->vt->resident_upload(b, h, buf, size, &err), VYRE_OK);
  ck_assert_uint_eq(fk.calls("cuStreamSynchronize") - syncs, 1);
  ck_assert_uint_eq(metric(b, "staging.chunk_copies"), chunks_of(size));
  memset(back, 0, size);
  ck_assert_int_eq(b->vt->resident_download(b, h, back, size, &err), VYRE_OK);
  ck_assert_msg(memcmp(buf, back, size) == 0, "a staged upload and download round trip");

  /* Several ranges in one call share chunks: pieces of both buffers. */
  vyre_resident_copy up[3] = {{h2, 0, buf + 5, CHUNK + 7},
                              {h2, CHUNK + 7, buf, size - CHUNK - 7},
                              {h, 100, buf + 1, 1000}};
  ck_assert_int_eq(b->vt->resident_upload_many(b, up, 3, &err), VYRE_OK);
  memset(back, 0, size);
  memset(back2, 0, size);
  vyre_resident_copy down[2] = {{h, 0, back, size}, {h2, 0, back2, size}};
  ck_assert_int_eq(b->vt->resident_download_many(b, down, 2, &err), VYRE_OK);
  ck_assert_int_eq(memcmp(back2, buf + 5, CHUNK + 7), 0);
  ck_assert_int_eq(memcmp(back2 + CHUNK + 7, buf, size - CHUNK - 7), 0);
  ck_assert_int_eq(memcmp(back, buf, 100), 0);
  ck_assert_int_eq(memcmp(back + 100, buf + 1, 1000), 0);
  ck_assert_int_eq(memcmp(back + 1100, buf + 1100, size - 1100), 0);
  ck_assert_uint_eq(fk.pageable_copies(), 0);
  ck_assert_uint_eq(metric(b, "pool.pinned.live_bytes"), 0);

  /* Two threads' large transfers take turns on the ring. */
  ck_assert_int_eq(b->vt->resident_free(b, h, &err), VYRE_OK);
  ck_assert_int_eq(b->vt->resident_free(b, h2, &err), VYRE_OK);
  b->vt->destroy(b);
  assert_no_leaks_after_destroy("staged resident");
  free(buf);
  free(back);
  free(back2);
}
END_TEST

/* A driver failure in the middle of a chunked copy: the call fails naming
 * the driver call with a Fix, nothing leaks, the instance still works. */
static void staged_failure(vyre_backend *b, const char *call, unsigned long nth, int resident) {
  prog p = prog_scale(BIG_N, 3, 128);
  vyre_program_ref r = ref_of(&p);
  uint32_t *in = big_input();
  vyre_input inputs[1] = {{in, big_bytes}};
  vyre_error err = VYRE_ERROR_INIT;
  vyre_outputs *out = NULL;
  vyre_resident h = 0;
  if (resident) ck_assert_int_eq(b->vt->resident_alloc(b, big_bytes, &h, &err), VYRE_OK);
  fk.inject(call, nth, CUDA_ERROR_INVALID_VALUE, 1);
  vyre_status st;
  if (!resident) {
    st = b->vt->dispatch(b, &r, inputs, 1, NULL, &out, NULL, &err);
  } else {
    st = b->vt->resident_upload(b, h, in, big_bytes, &err);
    if (st == VYRE_OK) st = b->vt->resident_download(b, h, in, big_bytes, &err);
  }
  ck_assert_msg(st == VYRE_DRIVER, "%s #%lu mid-transfer fails the call: %s [%s]", call, nth,
                err.message, vyre_status_name(st));
  ck_assert_msg(out == NULL, "no outputs from a failed dispatch");
  ck_assert_msg(strstr(err.message, call) && strstr(err.message, "Fix:"),
                "the error names %s and has a fix: %s", call, err.message);
  ck_assert_uint_eq(fk.calls(call) >= nth, 1);
  ck_assert_uint_eq(metric(b, "pool.pinned.live_bytes"), 0);
  /* Still usable, and the ring is not left half used. */
  if (!resident) {
    ck_assert_msg(b->vt->dispatch(b, &r, inputs, 1, NULL, &out, NULL, &err) == VYRE_OK,
                  "dispatch after %s failed: %s", call, err.message);
    check_scaled(in, out->items[0].data, 3, "after a failed transfer");
    b->vt->outputs_free(b, out);
  } else {
    uint32_t *back = malloc(big_bytes);
    ck_assert_int_eq(b->vt->resident_upload(b, h, in, big_bytes, &err), VYRE_OK);
    ck_assert_int_eq(b->vt->resident_download(b, h, back, big_bytes, &err), VYRE_OK);
    ck_assert_int_eq(memcmp(back, in, big_bytes), 0);
    free(back);
    ck_assert_int_eq(b->vt->resident_free(b, h, &err), VYRE_OK);
  }
  free(in);
  free(p.bytes);
}

/* With the default 16 MiB chunks, a transfer of a few MiB (above the 1 MiB
 * threshold) is cut into pieces of about a tenth of it (at least 512 KiB)
 * that go round the ring, so host copies overlap the device's. */
START_TEST(test_staging_pieces) {
  unsetenv("VYRE_CUDA_STAGING_CHUNK");
  unsetenv("VYRE_CUDA_STAGING_CHUNKS");
  setenv("VYRE_CUDA_COPY_THREADS", "3", 1);
  vyre_backend *b = mk();
  vyre_error err = VYRE_ERROR_INIT;
  const uint64_t size = 12600000u + 13u;
  const uint64_t cap = (size / 10 + 4095u) & ~(uint64_t)4095u; /* 1,261,568 */
  vyre_resident h = 0;
  ck_assert_int_eq(b->vt->resident_alloc(b, size, &h, &err), VYRE_OK);
  uint8_t *buf = malloc(size), *back = malloc(size);
  ck_assert(buf && back);
  for (uint64_t i = 0; i < size; i++) buf[i] = (uint8_t)(i * 7 + (i >> 13));
  ck_assert_int_eq(b->vt->resident_upload(b, h, buf, size, &err), VYRE_OK);
  ck_assert_uint_eq(metric(b, "staging.chunk_copies"), (size + cap - 1) / cap);
  ck_assert_uint_eq(metric(b, "staging.chunk_bytes"), 16u << 20);
  memset(back, 0, size);
  ck_assert_int_eq(b->vt->resident_download(b, h, back, size, &err), VYRE_OK);
  ck_assert_msg(memcmp(buf, back, size) == 0, "pieces round trip byte for byte");
  ck_assert_uint_eq(metric(b, "staging.chunk_copies"), 2 * ((size + cap - 1) / cap));
  /* At or below 1 MiB the pinned pool serves the copy, not the ring. */
  uint64_t copies = metric(b, "staging.chunk_copies");
  vyre_resident_copy two = {h, 0, buf, 1u << 20};
  ck_assert_msg(b->vt->resident_upload_many(b, &two, 1, &err) == VYRE_OK, "1 MiB upload: %s",
                err.message);
  ck_assert_uint_eq(metric(b, "staging.chunk_copies"), copies);
  /* Just above it: the ring, in pieces of 512 KiB (three of them). */
  vyre_resident_copy above = {h, 0, buf, (1u << 20) + 4096u};
  ck_assert_int_eq(b->vt->resident_upload_many(b, &above, 1, &err), VYRE_OK);
  ck_assert_uint_eq(metric(b, "staging.chunk_copies"), copies + 3);
  ck_assert_int_eq(b->vt->resident_free(b, h, &err), VYRE_OK);
  free(buf);
  free(back);
  b->vt->destroy(b);
  assert_no_leaks_after_destroy("staging pieces");
  unsetenv("VYRE_CUDA_COPY_THREADS");
}
END_TEST

START_TEST(test_staging_failures) {
  staging_env("3");
  vyre_backend *b = mk();
  fk.set_hook(play, NULL);
  hook_mode = 1;
  hook_k = 3;
  staged_failure(b, "cuMemcpyHtoDAsync", 2, 0);  /* the input's second chunk */
  staged_failure(b, "cuMemcpyDtoHAsync", 3, 0);  /* the output's last chunk */
  staged_failure(b, "cuEventRecord", 2, 0);      /* sealing a chunk */
  staged_failure(b, "cuEventSynchronize", 1, 0); /* waiting for a chunk */
  staged_failure(b, "cuMemcpyHtoDAsync", 3, 1);
  staged_failure(b, "cuMemcpyDtoHAsync", 2, 1);
  staged_failure(b, "cuEventSynchronize", 1, 1);
  b->vt->destroy(b);
  assert_no_leaks_after_destroy("staged failures");

  /* The ring itself cannot be allocated: the call fails with a Fix, and
   * the next large transfer tries again. */
  b = mk();
  prog p = prog_scale(BIG_N, 3, 128);
  vyre_program_ref r = ref_of(&p);
  uint32_t *in = big_input();
  vyre_input inputs[1] = {{in, big_bytes}};
  vyre_error err = VYRE_ERROR_INIT;
  vyre_outputs *out = NULL;
  fk.inject("cuMemHostAlloc", 1, CUDA_ERROR_OUT_OF_MEMORY, 0);
  ck_assert_int_eq(b->vt->dispatch(b, &r, inputs, 1, NULL, &out, NULL, &err), VYRE_OUT_OF_MEMORY);
  ck_assert_msg(strstr(err.message, "staging ring") && strstr(err.message, "VYRE_CUDA_STAGING_CHUNK"),
                "names the ring and the knob: %s", err.message);
  fk.clear_faults();
  ck_assert_int_eq(b->vt->dispatch(b, &r, inputs, 1, NULL, &out, NULL, &err), VYRE_OK);
  check_scaled(in, out->items[0].data, 3, "after the ring could be allocated");
  b->vt->outputs_free(b, out);
  b->vt->destroy(b);
  assert_no_leaks_after_destroy("staging ring allocation failure");

  /* One refusal: the pinned pool is trimmed and the ring allocated on
   * the second try. */
  b = mk();
  prog small = prog_scale(1000, 3, 128);
  ck_assert_int_eq(run_scale(b, &small, 1000, in, &out, NULL, &err), VYRE_OK); /* fills the pool */
  b->vt->outputs_free(b, out);
  free(small.bytes);
  ck_assert_uint_eq(metric(b, "staging.pinned_bytes"), 0);
  ck_assert_msg(metric(b, "pool.pinned.cached_bytes") > 0, "the pinned pool keeps blocks");
  uint64_t frees = metric(b, "pool.pinned.driver_frees");
  fk.inject("cuMemHostAlloc", 1, CUDA_ERROR_OUT_OF_MEMORY, 1);
  ck_assert_msg(b->vt->dispatch(b, &r, inputs, 1, NULL, &out, NULL, &err) == VYRE_OK,
                "the ring is allocated after the pool is trimmed: %s", err.message);
  check_scaled(in, out->items[0].data, 3, "after a trimmed retry");
  b->vt->outputs_free(b, out);
  ck_assert_msg(metric(b, "pool.pinned.driver_frees") > frees,
                "the pool's cached pinned blocks were freed before the retry");
  b->vt->destroy(b);
  assert_no_leaks_after_destroy("staging ring allocation failure");
  free(in);
  free(p.bytes);
}
END_TEST

typedef struct big_arg {
  vyre_backend *b;
  const prog *p;
  int failures;
} big_arg;

static void *big_hammer(void *arg) {
  big_arg *a = arg;
  uint32_t *in = big_input();
  vyre_input inputs[1] = {{in, big_bytes}};
  vyre_program_ref r = ref_of(a->p);
  for (int i = 0; i < 3; i++) {
    vyre_error err = VYRE_ERROR_INIT;
    vyre_outputs *out = NULL;
    if (a->b->vt->dispatch(a->b, &r, inputs, 1, NULL, &out, NULL, &err) != VYRE_OK) {
      a->failures++;
      continue;
    }
    const uint32_t *o = out->items[0].data;
    for (uint32_t k = 0; k < BIG_N; k++)
      if (o[k] != in[k] * 3) {
        a->failures++;
        break;
      }
    a->b->vt->outputs_free(a->b, out);
  }
  free(in);
  return NULL;
}

START_TEST(test_staging_threads) {
  staging_env("2");
  vyre_backend *b = mk();
  fk.set_hook(play, NULL);
  hook_mode = 1;
  hook_k = 3;
  prog p = prog_scale(BIG_N, 3, 128);
  big_arg a[3];
  pthread_t t[3];
  for (int i = 0; i < 3; i++) {
    a[i].b = b;
    a[i].p = &p;
    a[i].failures = 0;
    pthread_create(&t[i], NULL, big_hammer, &a[i]);
  }
  for (int i = 0; i < 3; i++) {
    pthread_join(t[i], NULL);
    ck_assert_msg(a[i].failures == 0, "thread %d saw %d failed or wrong dispatches", i,
                  a[i].failures);
  }
  ck_assert_uint_eq(metric(b, "staging.transfers"), 18);
  b->vt->destroy(b);
  assert_no_leaks_after_destroy("staging threads");
  free(p.bytes);
}
END_TEST

void fake_staging_tests(TCase *tc) {
  tcase_add_test(tc, test_staging_dispatch);
  tcase_add_test(tc, test_staging_dispatch_one_thread);
  tcase_add_test(tc, test_staging_resident);
  tcase_add_test(tc, test_staging_pieces);
  tcase_add_test(tc, test_staging_failures);
  tcase_add_test(tc, test_staging_threads);
}
