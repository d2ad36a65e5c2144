/* resident.c -- check_cuda_fake's resident case: resident buffers, their budget, resident dispatches and sequences, pipelines. */
#include "harness.h"

START_TEST(test_resident_basics) {
  setenv("VYRE_CUDA_STAGING_CHUNK", "4096", 1);
  vyre_backend *b = mk();
  vyre_error err = VYRE_ERROR_INIT;
  vyre_resident h = 0;
  const uint64_t size = 100000;
  ck_assert_int_eq(b->vt->resident_alloc(b, size, &h, &err), VYRE_OK);
  uint8_t *buf = malloc(size), *back = malloc(size);
  ck_assert_int_eq(b->vt->resident_download(b, h, back, size, &err), VYRE_OK);
  for (uint64_t i = 0; i < size; i++) ck_assert_msg(back[i] == 0, "new buffers are zeroed");
  for (uint64_t i = 0; i < size; i++) buf[i] = (uint8_t)(i * 7 + 3);
  unsigned long htod = fk.calls("cuMemcpyHtoDAsync"), syncs = fk.calls("cuStreamSynchronize");
  ck_assert_int_eq(b->vt->resident_upload(b, h, buf, size, &err), VYRE_OK);
  ck_assert_msg(fk.calls("cuMemcpyHtoDAsync") - htod == (size + 4095) / 4096,
                "staged in 4 KiB pinned chunks (%lu copies)", fk.calls("cuMemcpyHtoDAsync") - htod);
  ck_assert_uint_eq(fk.calls("cuStreamSynchronize") - syncs, 1);
  ck_assert_uint_eq(fk.pageable_copies(), 0);
  ck_assert_uint_eq(metric(b, "pool.pinned.live_bytes"), 0);
  memset(back, 0, size);
  ck_assert_int_eq(b->vt->resident_download(b, h, back, size, &err), VYRE_OK);
  ck_assert_msg(memcmp(buf, back, size) == 0, "pipelined download returns what was uploaded");
  uint64_t got = 0;
  ck_assert_int_eq(b->vt->resident_size(b, h, &got, &err), VYRE_OK);
  ck_assert_uint_eq(got, size);

  /* upload_at / download_range */
  uint8_t patch[10] = {1, 2, 3, 4, 5, 6, 7, 8, 9, 10}, piece[10];
  ck_assert_int_eq(b->vt->resident_upload_at(b, h, 99990, patch, 10, &err), VYRE_OK);
  ck_assert_int_eq(b->vt->resident_download_range(b, h, 99990, piece, 10, &err), VYRE_OK);
  ck_assert_int_eq(memcmp(patch, piece, 10), 0);
  ck_assert_int_eq(b->vt->resident_upload_at(b, h, 99991, patch, 10, &err), VYRE_INVALID_ARGUMENT);
  ck_assert_msg(strstr(err.message, "[99991, 100001)") && strstr(err.message, "Fix:"),
                "names the bad range: %s", err.message);
  ck_assert_int_eq(b->vt->resident_download_range(b, h, UINT64_MAX, piece, 2, &err),
                   VYRE_INVALID_ARGUMENT);
  ck_assert_int_eq(b->vt->resident_upload(b, h, buf, size - 1, &err), VYRE_INVALID_ARGUMENT);
  ck_assert_int_eq(b->vt->resident_download(b, h, back, size - 1, &err), VYRE_INVALID_ARGUMENT);
  ck_assert_int_eq(b->vt->resident_upload_at(b, h, 0, NULL, 4, &err), VYRE_INVALID_ARGUMENT);
  ck_assert_int_eq(b->vt->resident_upload_at(b, h, 5, NULL, 0, &err), VYRE_OK);
  vyre_resident scratch = 1;
  ck_assert_int_eq(b->vt->resident_alloc(b, 0, &scratch, &err), VYRE_INVALID_ARGUMENT);
  ck_assert_msg(scratch == 0, "a failed alloc leaves no handle");
  ck_assert_int_eq(b->vt->resident_alloc(b, 16, NULL, &err), VYRE_INVALID_ARGUMENT);

  /* many: one bad range and nothing is copied */
  vyre_resident h2 = 0;
  ck_assert_int_eq(b->vt->resident_alloc(b, 64, &h2, &err), VYRE_OK);
  uint8_t ones[64], twos[64], r1[64], r2[64];
  memset(ones, 1, 64);
  memset(twos, 2, 64);
  vyre_resident_copy c[3] = {{h2, 0, ones, 64}, {h, 0, twos, 64}, {h2, 60, twos, 8}};
  ck_assert_int_eq(b->vt->resident_upload_many(b, c, 3, &err), VYRE_INVALID_ARGUMENT);
  ck_assert_msg(strstr(err.message, "copy 2") != NULL, "names the bad copy: %s", err.message);
  ck_assert_int_eq(b->vt->resident_download_range(b, h2, 0, r1, 64, &err), VYRE_OK);
  for (int i = 0; i < 64; i++) ck_assert_msg(r1[i] == 0, "nothing copied before the check failed");
  syncs = fk.calls("cuStreamSynchronize");
  ck_assert_int_eq(b->vt->resident_upload_many(b, c, 2, &err), VYRE_OK);
  ck_assert_uint_eq(fk.calls("cuStreamSynchronize") - syncs, 1);
  vyre_resident_copy d[2] = {{h2, 0, r1, 64}, {h, 0, r2, 64}};
  ck_assert_int_eq(b->vt->resident_download_many(b, d, 2, &err), VYRE_OK);
  ck_assert_int_eq(memcmp(r1, ones, 64), 0);
  ck_assert_int_eq(memcmp(r2, twos, 64), 0);
  ck_assert_int_eq(b->vt->resident_download_many(b, NULL, 2, &err), VYRE_INVALID_ARGUMENT);
  ck_assert_int_eq(b->vt->resident_download_many(b, NULL, 0, &err), VYRE_OK);

  /* Stale, double-freed, foreign handles. */
  ck_assert_uint_eq(metric(b, "resident.buffers"), 2);
  ck_assert_uint_eq(metric(b, "resident.bytes"), size + 64);
  ck_assert_int_eq(b->vt->resident_free(b, h2, &err), VYRE_OK);
  ck_assert_int_eq(b->vt->resident_free(b, h2, &err), VYRE_INVALID_HANDLE);
  ck_assert_msg(strstr(err.message, "Fix:") != NULL, "stale handle error has a fix");
  ck_assert_int_eq(b->vt->resident_download(b, h2, r1, 64, &err), VYRE_INVALID_HANDLE);
  ck_assert_int_eq(b->vt->resident_size(b, 0, &got, &err), VYRE_INVALID_HANDLE);
  ck_assert_int_eq(b->vt->resident_upload_at(b, ~0ull, 0, r1, 1, &err), VYRE_INVALID_HANDLE);
  vyre_backend *other = mk();
  ck_assert_int_eq(other->vt->resident_download(other, h, r1, 64, &err), VYRE_INVALID_HANDLE);
  ck_assert_int_eq(other->vt->resident_free(other, h, &err), VYRE_INVALID_HANDLE);
  other->vt->destroy(other);
  ck_assert_uint_eq(metric(b, "resident.buffers"), 1);
  b->vt->destroy(b); /* frees the live buffer h */
  assert_no_leaks_after_destroy("resident");
  free(buf);
  free(back);
}
END_TEST

START_TEST(test_resident_budget) {
  setenv("FAKECUDA_MEM", "1048576", 1);
  fk.reset();
  vyre_backend *b = mk();
  vyre_error err = VYRE_ERROR_INIT;
  vyre_resident h = 0, h2 = 0;
  ck_assert_int_eq(b->vt->resident_alloc(b, 950000, &h, &err), VYRE_OUT_OF_MEMORY);
  ck_assert_msg(strstr(err.message, "950000 bytes requested") && strstr(err.message, "available") &&
                    strstr(err.message, "Fix:"),
                "names requested and available bytes: %s", err.message);
  ck_assert_uint_eq(h, 0);
  ck_assert_int_eq(b->vt->resident_alloc(b, 900000, &h, &err), VYRE_OK);
  ck_assert_int_eq(b->vt->resident_alloc(b, 50000, &h2, &err), VYRE_OUT_OF_MEMORY);
  ck_assert_int_eq(b->vt->resident_free(b, h, &err), VYRE_OK);
  /* Live free memory caps it too: another process holds 600 KB. */
  fakecuda_config c;
  fk.get_config(&c);
  c.reserved_mem = 600000;
  fk.set_config(&c);
  ck_assert_int_eq(b->vt->resident_alloc(b, 500000, &h, &err), VYRE_OUT_OF_MEMORY);
  ck_assert_int_eq(b->vt->resident_alloc(b, 300000, &h, &err), VYRE_OK);
  ck_assert_uint_eq(metric(b, "resident.budget_rejects"), 3);
  b->vt->destroy(b);
  assert_no_leaks_after_destroy("budget");
}
END_TEST

START_TEST(test_resident_dispatch_sequences) {
  vyre_backend *b = mk();
  fk.set_hook(play, NULL);
  hook_mode = 2;
  prog p = prog_inc(64);
  vyre_program_ref r = ref_of(&p);
  vyre_error err = VYRE_ERROR_INIT;
  vyre_resident a = 0, c = 0;
  ck_assert_int_eq(b->vt->resident_alloc(b, 1024, &a, &err), VYRE_OK);
  ck_assert_int_eq(b->vt->resident_alloc(b, 512, &c, &err), VYRE_OK);
  uint32_t init[256];
  for (int i = 0; i < 256; i++) init[i] = (uint32_t)(i * 10);
  ck_assert_int_eq(b->vt->resident_upload(b, a, init, sizeof init, &err), VYRE_OK);
  /* dispatch_resident uses the contents as they are (no zeroing). */
  ck_assert_int_eq(b->vt->dispatch_resident(b, &r, &a, 1, NULL, NULL, &err), VYRE_OK);
  uint32_t back[256];
  ck_assert_int_eq(b->vt->resident_download(b, a, back, sizeof back, &err), VYRE_OK);
  ck_assert_uint_eq(back[7], 71);
  fakecuda_launch l;
  fk.launch_get(fk.launch_count() - 1, &l);
  /* 256 elements: the logical grid is 4 workgroups of 64; the elementwise
   * fast path (8 elements per thread) needs ceil(256 / 512) = 1. */
  ck_assert_msg(l.grid[0] == 4 || l.grid[0] == 1, "grid %u is neither the logical 4 nor the "
                "elementwise 1", l.grid[0]);
  ck_assert_int_eq(b->vt->dispatch_resident(b, &r, &a, 2, NULL, NULL, &err), VYRE_INVALID_ARGUMENT);
  vyre_resident stale = c + 1;
  ck_assert_int_eq(b->vt->dispatch_resident(b, &r, &stale, 1, NULL, NULL, &err),
                   VYRE_INVALID_HANDLE);

  /* A sequence: two steps, one synchronisation, a ranged read. */
  vyre_sequence_step steps[2];
  memset(steps, 0, sizeof steps);
  steps[0].struct_size = steps[1].struct_size = sizeof steps[0];
  steps[0].program = &r;
  steps[0].buffer_count = 1;
  steps[0].buffers = &a;
  steps[1] = steps[0];
  steps[1].buffers = &c;
  uint32_t first[4];
  vyre_resident_copy read = {a, 8, first, sizeof first};
  unsigned long syncs = fk.calls("cuStreamSynchronize") + fk.calls("cuEventSynchronize");
  unsigned long launches = fk.launch_count();
  vyre_timing t;
  memset(&t, 0, sizeof t);
  t.struct_size = sizeof t;
  ck_assert_int_eq(b->vt->dispatch_sequence(b, steps, 2, 1, &read, 1, &t, &err), VYRE_OK);
  ck_assert_uint_eq(fk.calls("cuStreamSynchronize") + fk.calls("cuEventSynchronize") - syncs, 1);
  ck_assert_uint_eq(fk.launch_count() - launches, 2);
  ck_assert_uint_eq(first[0], 22);
  ck_assert_msg(t.valid & VYRE_TIMING_DEVICE, "sequence timing has device time");

  /* repeat > 1: captured once into a graph, replayed. */
  unsigned long captures = fk.calls("cuStreamBeginCapture");
  launches = fk.launch_count();
  ck_assert_int_eq(b->vt->dispatch_sequence(b, steps, 2, 3, &read, 1, NULL, &err), VYRE_OK);
  ck_assert_uint_eq(fk.calls("cuStreamBeginCapture") - captures, 1);
  ck_assert_uint_eq(fk.launch_count() - launches, 6);
  fk.launch_get(fk.launch_count() - 1, &l);
  ck_assert_int_eq(l.from_graph, 1);
  ck_assert_uint_eq(first[0], 25);
  ck_assert_uint_eq(metric(b, "graph.misses"), 1);
  ck_assert_int_eq(b->vt->dispatch_sequence(b, steps, 2, 4, &read, 1, NULL, &err), VYRE_OK);
  ck_assert_uint_eq(fk.calls("cuStreamBeginCapture") - captures, 1);
  ck_assert_uint_eq(metric(b, "graph.hits"), 1);
  ck_assert_uint_eq(first[0], 29);
  ck_assert_uint_eq(metric(b, "graph.entries"), 1);
  /* A read out of range is refused before anything runs. */
  launches = fk.launch_count();
  vyre_resident_copy bad = {c, 500, first, 16};
  ck_assert_int_eq(b->vt->dispatch_sequence(b, steps, 2, 2, &bad, 1, NULL, &err),
                   VYRE_INVALID_ARGUMENT);
  ck_assert_uint_eq(fk.launch_count(), launches);
  /* Freeing a buffer the graph uses drops the graph. */
  ck_assert_int_eq(b->vt->resident_free(b, c, &err), VYRE_OK);
  ck_assert_uint_eq(metric(b, "graph.entries"), 0);
  fakecuda_live live;
  fk.live(&live);
  ck_assert_int_eq(live.graphs, 0);
  ck_assert_int_eq(live.execs, 0);
  ck_assert_int_eq(b->vt->dispatch_sequence(b, steps, 2, 2, &read, 1, NULL, &err),
                   VYRE_INVALID_HANDLE);
  ck_assert_int_eq(b->vt->dispatch_sequence(b, NULL, 2, 2, NULL, 0, NULL, &err),
                   VYRE_INVALID_ARGUMENT);
  ck_assert_int_eq(b->vt->dispatch_sequence(b, NULL, 0, 1, &read, 1, NULL, &err), VYRE_OK);
  steps[0].struct_size = 8;
  ck_assert_int_eq(b->vt->dispatch_sequence(b, steps, 1, 1, NULL, 0, NULL, &err),
                   VYRE_INVALID_ARGUMENT);

  /* A repeated sequence keeps its graph until destroy. */
  steps[0].struct_size = sizeof steps[0];
  ck_assert_int_eq(b->vt->dispatch_sequence(b, steps, 1, 2, NULL, 0, NULL, &err), VYRE_OK);
  ck_assert_uint_eq(metric(b, "graph.entries"), 1);
  b->vt->destroy(b);
  assert_no_leaks_after_destroy("sequences");
  free(p.bytes);
}
END_TEST

START_TEST(test_pipelines) {
  vyre_backend *b = mk();
  fk.set_hook(play, NULL);
  hook_mode = 1;
  hook_k = 5;
  prog p = prog_scale(64, 5, 64);
  vyre_error err = VYRE_ERROR_INIT;
  vyre_pipeline pl = 0;
  ck_assert_int_eq(b->vt->pipeline_create(b, p.bytes, p.size, NULL, &pl, &err), VYRE_OK);
  unsigned long links = fk.calls("cuLinkAddData");
  vyre_program_ref r = VYRE_PROGRAM_PIPELINE(pl);
  uint32_t data[64];
  for (int i = 0; i < 64; i++) data[i] = (uint32_t)i;
  vyre_input in[1] = {{data, sizeof data}};
  vyre_outputs *out = NULL;
  ck_assert_int_eq(b->vt->dispatch(b, &r, in, 1, NULL, &out, NULL, &err), VYRE_OK);
  ck_assert_uint_eq(((uint32_t *)out->items[0].data)[3], 15);
  b->vt->outputs_free(b, out);
  vyre_pending h;
  ck_assert_int_eq(b->vt->dispatch_async(b, &r, in, 1, NULL, &h, &err), VYRE_OK);
  /* Releasing the pipeline while its dispatch is pending is safe. */
  ck_assert_int_eq(b->vt->pipeline_release(b, pl, &err), VYRE_OK);
  ck_assert_int_eq(b->vt->pending_wait(b, h, &out, NULL, &err), VYRE_OK);
  b->vt->outputs_free(b, out);
  ck_assert_uint_eq(fk.calls("cuLinkAddData"), links);
  ck_assert_int_eq(b->vt->dispatch(b, &r, in, 1, NULL, &out, NULL, &err), VYRE_INVALID_HANDLE);
  ck_assert_int_eq(b->vt->pipeline_release(b, pl, &err), VYRE_INVALID_HANDLE);

  vyre_dispatch_options o;
  memset(&o, 0, sizeof o);
  o.struct_size = sizeof o;
  o.workgroup[0] = 128;
  ck_assert_int_eq(b->vt->pipeline_create(b, p.bytes, p.size, &o, &pl, &err), VYRE_OK);
  r.pipeline = pl;
  o.workgroup[0] = 32;
  ck_assert_int_eq(b->vt->dispatch(b, &r, in, 1, &o, &out, NULL, &err), VYRE_INVALID_ARGUMENT);
  ck_assert_msg(strstr(err.message, "pipeline") != NULL, "names the pipeline mismatch");
  o.workgroup[0] = 128;
  ck_assert_int_eq(b->vt->dispatch(b, &r, in, 1, &o, &out, NULL, &err), VYRE_OK);
  b->vt->outputs_free(b, out);
  ck_assert_uint_eq(metric(b, "pipeline.handles"), 1);
  ck_assert_int_eq(b->vt->pipeline_create(b, "junk", 4, NULL, &pl, &err), VYRE_INVALID_PROGRAM);
  ck_assert_int_eq(b->vt->pipeline_create(b, NULL, 0, NULL, &pl, &err), VYRE_INVALID_ARGUMENT);
  b->vt->destroy(b); /* with a live pipeline */
  assert_no_leaks_after_destroy("pipelines");
  free(p.bytes);
}
END_TEST

void fake_resident_tests(TCase *tc) {
  tcase_add_test(tc, test_resident_basics);
  tcase_add_test(tc, test_resident_budget);
  tcase_add_test(tc, test_resident_dispatch_sequences);
  tcase_add_test(tc, test_pipelines);
}
