/* split.c -- check_cuda_fake's split case: host dispatches of elementwise programs run in chunks over two streams (plugin/runtime/split.c), their launch and copy pattern, the programs that must not be cut; and the early readback of a whole dispatch's outputs. */
#include "harness.h"

/* prog_inc on 1,000,003 words: 8 bytes up and down per element, so
 * 1 MiB chunks hold 131,072 elements and the dispatch makes 8 of them
 * (the last one short). */
#define N 1000003u
#define CHUNK_ELEMS 131072u
#define CHUNKS ((N + CHUNK_ELEMS - 1) / CHUNK_ELEMS)

static void split_env(const char *bytes) {
  setenv("VYRE_CUDA_SPLIT_CHUNK", bytes, 1);
  setenv("VYRE_CUDA_COPY_THREADS", "3", 1);
}

static uint32_t *words(void) {
  uint32_t *w = malloc((size_t)N * 4u);
  ck_assert_ptr_nonnull(w);
  for (uint32_t i = 0; i < N; i++) w[i] = i * 2654435761u ^ 0x5bd1e995u;
  return w;
}

/* The stream-ordered calls since `from`: the index of the k-th call named
 * `call` (-1 when there are fewer), and its stream. */
static long nth_op(unsigned long from, const char *call, unsigned k, void **stream) {
  fakecuda_op op;
  for (unsigned long i = from; fk.op_get(i, &op) == 0; i++)
    if (strcmp(op.call, call) == 0 && k-- == 0) {
      if (stream) *stream = op.stream;
      return (long)i;
    }
  return -1;
}

/* play, and the host's waits for the device so far at each launch. */
static unsigned long waits_at[64];
static unsigned nlaunch;
static void play_and_count(const fakecuda_launch *l, void *user) {
  if (nlaunch < 64) waits_at[nlaunch++] = fk.calls("cuEventSynchronize");
  play(l, user);
}

/* The ring keeps the device busy: with its 4 chunks, 4 chunks go to the
 * device before the host waits for the first to come back (the events
 * are held: only a wait completes them). */
START_TEST(test_split_depth) {
  split_env("1M");
  vyre_backend *b = mk();
  fk.set_hook(play_and_count, NULL);
  hook_mode = 2;
  nlaunch = 0;
  prog p = prog_inc(128);
  vyre_program_ref r = ref_of(&p);
  uint32_t *in = words();
  vyre_input inputs[1] = {{in, (uint64_t)N * 4u}};
  vyre_error err = VYRE_ERROR_INIT;
  vyre_outputs *out = NULL;
  unsigned long waits = fk.calls("cuEventSynchronize");
  fk.hold_events(1);
  ck_assert_msg(b->vt->dispatch(b, &r, inputs, 1, NULL, &out, NULL, &err) == VYRE_OK,
                "chunked dispatch with held events: %s", err.message);
  fk.hold_events(0);
  ck_assert_uint_eq(nlaunch, CHUNKS);
  for (uint32_t c = 0; c < 4; c++)
    ck_assert_msg(waits_at[c] == waits, "chunk %u is launched before the host waits (%lu waits)",
                  c, waits_at[c] - waits);
  ck_assert_msg(waits_at[4] > waits, "chunk 4 reuses chunk 0's ring chunk: after a wait");
  const uint32_t *o = out->items[0].data;
  for (uint32_t i = 0; i < N; i++) ck_assert_uint_eq(o[i], in[i] + 1u);
  b->vt->outputs_free(b, out);
  b->vt->destroy(b);
  assert_no_leaks_after_destroy("chunked dispatch depth");
  free(in);
  free(p.bytes);
}
END_TEST

START_TEST(test_split_dispatch) {
  split_env("1M");
  vyre_backend *b = mk();
  fk.set_hook(play, NULL);
  hook_mode = 2;
  prog p = prog_inc(128);
  vyre_program_ref r = ref_of(&p);
  uint32_t *in = words();
  vyre_input inputs[1] = {{in, (uint64_t)N * 4u}};
  vyre_error err = VYRE_ERROR_INIT;
  vyre_outputs *out = NULL;
  unsigned long launches = fk.launch_count(), ops = fk.op_count();
  ck_assert_msg(b->vt->dispatch(b, &r, inputs, 1, NULL, &out, NULL, &err) == VYRE_OK,
                "chunked dispatch: %s", err.message);
  const uint32_t *o = out->items[0].data;
  ck_assert_uint_eq(out->items[0].size, (uint64_t)N * 4u);
  for (uint32_t i = 0; i < N; i++)
    if (o[i] != in[i] + 1u) ck_abort_msg("word %u is 0x%08x, expected 0x%08x", i, o[i], in[i] + 1u);
  ck_assert_uint_eq(metric(b, "dispatch.split"), 1);
  ck_assert_uint_eq(metric(b, "dispatch.split_chunks"), CHUNKS);
  ck_assert_uint_eq(fk.launch_count() - launches, CHUNKS);

  /* One launch per chunk: its pointer advanced to the chunk's first
   * element, its count words the chunk's, its grid the chunk's blocks of
   * 128 threads x 8 elements; consecutive chunks on the two streams. */
  fakecuda_launch first, l, prev;
  ck_assert_int_eq(fk.launch_get(launches, &first), 0);
  for (uint32_t c = 0; c < CHUNKS; c++) {
    ck_assert_int_eq(fk.launch_get(launches + c, &l), 0);
    uint32_t count = c + 1 < CHUNKS ? CHUNK_ELEMS : N - c * CHUNK_ELEMS;
    ck_assert_msg(l.params[0] == first.params[0] + (uint64_t)c * CHUNK_ELEMS * 4u,
                  "chunk %u's buffer pointer starts at its first element", c);
    ck_assert_msg(l.counts[0] == count && l.counts[1] == count,
                  "chunk %u's count words say %u elements (got %u, %u)", c, count, l.counts[0],
                  l.counts[1]);
    ck_assert_uint_eq(l.grid[0], (count + 1023u) / 1024u);
    if (c) ck_assert_msg(l.stream != prev.stream, "chunks %u and %u use both streams", c - 1, c);
    if (c > 1) {
      fakecuda_launch two;
      ck_assert_int_eq(fk.launch_get(launches + c - 2, &two), 0);
      ck_assert_msg(l.stream == two.stream, "chunks alternate between two streams");
    }
    prev = l;
  }
  /* Each chunk's upload, launch and readback in that order, on its
   * chunk's stream. */
  for (uint32_t c = 0; c < CHUNKS; c++) {
    void *up_s = NULL, *k_s = NULL, *down_s = NULL;
    long up = nth_op(ops, "cuMemcpyHtoDAsync", c, &up_s);
    long k = nth_op(ops, "cuLaunchKernel", c, &k_s);
    long down = nth_op(ops, "cuMemcpyDtoHAsync", c, &down_s);
    ck_assert_msg(up >= 0 && k > up && down > k, "chunk %u: upload, launch, readback in order", c);
    ck_assert_msg(up_s == k_s && down_s == k_s, "chunk %u's copies share its launch's stream", c);
  }
  ck_assert_uint_eq(fk.pageable_copies(), 0);

  /* dispatch_into: the same bytes straight into the caller's slot. */
  vyre_output_slot slot = {malloc((size_t)N * 4u), (uint64_t)N * 4u, 0};
  ck_assert_int_eq(b->vt->dispatch_into(b, &r, inputs, 1, NULL, &slot, 1, NULL, &err), VYRE_OK);
  ck_assert_uint_eq(slot.size, (uint64_t)N * 4u);
  ck_assert_msg(memcmp(slot.data, o, (size_t)N * 4u) == 0, "dispatch_into matches dispatch");
  b->vt->outputs_free(b, out);
  b->vt->destroy(b);
  assert_no_leaks_after_destroy("chunked dispatch");

  /* Chunking off: one launch, the same bytes. */
  split_env("0");
  b = mk();
  launches = fk.launch_count();
  ck_assert_int_eq(b->vt->dispatch(b, &r, inputs, 1, NULL, &out, NULL, &err), VYRE_OK);
  ck_assert_uint_eq(fk.launch_count() - launches, 1);
  ck_assert_uint_eq(metric(b, "dispatch.split"), 0);
  ck_assert_msg(memcmp(out->items[0].data, slot.data, (size_t)N * 4u) == 0,
                "chunked and whole dispatches give the same bytes");
  b->vt->outputs_free(b, out);
  b->vt->destroy(b);
  assert_no_leaks_after_destroy("whole dispatch");
  free(slot.data);
  free(in);
  free(p.bytes);
}
END_TEST

/* buf[gid] = buf[gid] + gid: elementwise, but gid is a value, which a
 * chunk would see from 0 again (the kernel ABI has no gid base). */
static prog prog_add_gid(void) {
  vyre_builder *bl = vyre_builder_new(128, 1, 1);
  uint32_t buf = vyre_b_buffer(bl, "buf", UINT32_MAX, VYRE_ACCESS_READ_WRITE, VYRE_T_U32, 0, 0);
  uint32_t g = vyre_b_gid(bl, 0);
  vyre_b_store(bl, buf, g, vyre_b_bin(bl, VYRE_OP_ADD, vyre_b_load(bl, buf, g), g));
  prog p = {NULL, 0};
  vyre_error err = VYRE_ERROR_INIT;
  ck_assert_msg(vyre_builder_finish(bl, &p.bytes, &p.size, &err) == VYRE_OK, "%s", err.message);
  vyre_builder_free(bl);
  return p;
}

START_TEST(test_split_declined) {
  split_env("1M");
  vyre_backend *b = mk();
  uint32_t *in = words();
  vyre_input inputs[1] = {{in, (uint64_t)N * 4u}};
  vyre_error err = VYRE_ERROR_INIT;
  vyre_outputs *out = NULL;
  prog p = prog_add_gid();
  vyre_program_ref r = ref_of(&p);
  unsigned long launches = fk.launch_count();
  ck_assert_int_eq(b->vt->dispatch(b, &r, inputs, 1, NULL, &out, NULL, &err), VYRE_OK);
  b->vt->outputs_free(b, out);
  ck_assert_msg(fk.launch_count() - launches == 1 && metric(b, "dispatch.split") == 0,
                "a program that reads gid as a value runs as one launch");
  /* Too small for two chunks: one launch. */
  prog q = prog_inc(128);
  vyre_program_ref rq = ref_of(&q);
  vyre_input small[1] = {{in, 200000u * 4u}};
  launches = fk.launch_count();
  ck_assert_int_eq(b->vt->dispatch(b, &rq, small, 1, NULL, &out, NULL, &err), VYRE_OK);
  b->vt->outputs_free(b, out);
  ck_assert_uint_eq(fk.launch_count() - launches, 1);
  /* A timeout keeps the one launch too (the chunks wait in the driver). */
  vyre_limits lim;
  memset(&lim, 0, sizeof lim);
  lim.head.struct_size = sizeof lim;
  lim.head.type = VYRE_EXT_LIMITS;
  lim.timeout_ns = 60000000000ull;
  vyre_dispatch_options o = {.struct_size = sizeof o};
  o.next = &lim.head;
  launches = fk.launch_count();
  ck_assert_int_eq(b->vt->dispatch(b, &rq, inputs, 1, &o, &out, NULL, &err), VYRE_OK);
  b->vt->outputs_free(b, out);
  ck_assert_uint_eq(fk.launch_count() - launches, 1);
  ck_assert_uint_eq(metric(b, "dispatch.split"), 0);
  b->vt->destroy(b);
  assert_no_leaks_after_destroy("declined splits");
  free(in);
  free(p.bytes);
  free(q.bytes);
}
END_TEST

/* A driver failure in the middle of the chunks: the call fails naming
 * it, both streams are idle, nothing leaks, the instance still works. */
START_TEST(test_split_failures) {
  split_env("1M");
  vyre_backend *b = mk();
  fk.set_hook(play, NULL);
  hook_mode = 2;
  prog p = prog_inc(128);
  vyre_program_ref r = ref_of(&p);
  uint32_t *in = words();
  vyre_input inputs[1] = {{in, (uint64_t)N * 4u}};
  vyre_error err = VYRE_ERROR_INIT;
  vyre_outputs *out = NULL;
  static const char *calls[] = {"cuLaunchKernel", "cuMemcpyHtoDAsync", "cuMemcpyDtoHAsync",
                                "cuEventRecord"};
  for (unsigned k = 0; k < sizeof calls / sizeof calls[0]; k++) {
    fk.inject(calls[k], 3, CUDA_ERROR_INVALID_VALUE, 1);
    vyre_status st = b->vt->dispatch(b, &r, inputs, 1, NULL, &out, NULL, &err);
    ck_assert_msg(st == VYRE_DRIVER && strstr(err.message, calls[k]) && out == NULL,
                  "%s #3 fails the chunked dispatch: %s [%s]", calls[k], err.message,
                  vyre_status_name(st));
    ck_assert_uint_eq(metric(b, "pool.pinned.live_bytes"), 0);
    fk.clear_faults();
    ck_assert_msg(b->vt->dispatch(b, &r, inputs, 1, NULL, &out, NULL, &err) == VYRE_OK,
                  "dispatch after %s failed: %s", calls[k], err.message);
    const uint32_t *o = out->items[0].data;
    for (uint32_t i = 0; i < N; i += 4099) ck_assert_uint_eq(o[i], in[i] + 1u);
    b->vt->outputs_free(b, out);
  }
  b->vt->destroy(b);
  assert_no_leaks_after_destroy("chunked dispatch failures");
  free(in);
  free(p.bytes);
}
END_TEST

/* Unchunked, a waiting dispatch's outputs above the ring's threshold
 * come back right behind the kernel, before the call waits for its
 * stream: a failing wait finds them already in the caller's slot. */
START_TEST(test_early_readback) {
  split_env("0");
  vyre_backend *b = mk();
  fk.set_hook(play, NULL);
  hook_mode = 1;
  hook_k = 3;
  prog p = prog_scale(N, 3, 128);
  vyre_program_ref r = ref_of(&p);
  uint32_t *in = words();
  vyre_input inputs[1] = {{in, (uint64_t)N * 4u}};
  vyre_error err = VYRE_ERROR_INIT;
  vyre_output_slot slot = {calloc(N, 4u), (uint64_t)N * 4u, 0};
  fk.inject("cuStreamSynchronize", 1, CUDA_ERROR_INVALID_VALUE, 1);
  ck_assert_int_eq(b->vt->dispatch_into(b, &r, inputs, 1, NULL, &slot, 1, NULL, &err),
                   VYRE_DRIVER);
  const uint32_t *o = slot.data;
  for (uint32_t i = 0; i < N; i += 997)
    ck_assert_msg(o[i] == in[i] * 3u, "word %u was read back before the wait", i);
  fk.clear_faults();
  memset(slot.data, 0, (size_t)N * 4u);
  ck_assert_int_eq(b->vt->dispatch_into(b, &r, inputs, 1, NULL, &slot, 1, NULL, &err), VYRE_OK);
  for (uint32_t i = 0; i < N; i++) ck_assert_uint_eq(o[i], in[i] * 3u);
  ck_assert_uint_eq(metric(b, "dispatch.split"), 0);
  b->vt->destroy(b);
  assert_no_leaks_after_destroy("early readback");
  free(slot.data);
  free(in);
  free(p.bytes);
}
END_TEST

void fake_split_tests(TCase *tc) {
  tcase_add_test(tc, test_early_readback);
  tcase_add_test(tc, test_split_dispatch);
  tcase_add_test(tc, test_split_depth);
  tcase_add_test(tc, test_split_declined);
  tcase_add_test(tc, test_split_failures);
}
