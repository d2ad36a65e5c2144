/* check_ref_api.c -- resident buffers, sequences, pipelines, async pendings, metrics, profile and misuse of the reference backend's vtable. */
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "check_ref.h"

/* x[i] = x[i] * mul + add over a u32 buffer sized by its contents. */
static void scale_program(uint32_t mul, uint32_t add, void **bytes, size_t *size) {
  vyre_builder *b = vyre_builder_new(16, 1, 1);
  uint32_t x = vyre_b_buffer(b, "x", UINT32_MAX, VYRE_ACCESS_READ_WRITE, VYRE_T_U32, 0, 0);
  uint32_t g = vyre_b_gid(b, 0);
  vyre_b_if(b, vyre_b_bin(b, VYRE_OP_LT, g, vyre_b_buflen(b, x)));
  uint32_t v = vyre_b_bin(b, VYRE_OP_MUL, vyre_b_load(b, x, g), vyre_b_u32(b, mul));
  vyre_b_store(b, x, g, vyre_b_bin(b, VYRE_OP_ADD, v, vyre_b_u32(b, add)));
  vyre_b_end(b);
  tr_encode(b, bytes, size);
}

/* ------------------------------------------------------------------ */
/* resident                                                            */
/* ------------------------------------------------------------------ */
START_TEST(test_resident_basics) {
  vyre_backend *be = tr_new_backend();
  const vyre_backend_vtable *vt = be->vt;
  vyre_error err = VYRE_ERROR_INIT;
  vyre_resident r = 0;
  ck_assert_int_eq(vt->resident_alloc(be, 100, &r, &err), VYRE_OK);
  ck_assert_uint_ne(r, 0);
  uint64_t size = 0;
  ck_assert_int_eq(vt->resident_size(be, r, &size, &err), VYRE_OK);
  ck_assert_uint_eq(size, 100);
  unsigned char buf[128], src[100];
  memset(buf, 0xee, sizeof buf);
  ck_assert_int_eq(vt->resident_download(be, r, buf, sizeof buf, &err), VYRE_OK);
  for (int i = 0; i < 100; i++) ck_assert_msg(buf[i] == 0, "a new buffer is zero-filled");
  ck_assert_uint_eq(buf[100], 0xee);
  for (int i = 0; i < 100; i++) src[i] = (unsigned char)i;
  ck_assert_int_eq(vt->resident_upload(be, r, src, 100, &err), VYRE_OK);
  ck_assert_int_eq(vt->resident_upload(be, r, src, 99, &err), VYRE_INVALID_ARGUMENT);
  tr_assert_fix(&err);
  ck_assert_int_eq(vt->resident_upload_at(be, r, 90, src, 10, &err), VYRE_OK);
  ck_assert_int_eq(vt->resident_upload_at(be, r, 91, src, 10, &err), VYRE_INVALID_ARGUMENT);
  ck_assert_int_eq(vt->resident_upload_at(be, r, UINT64_MAX, src, 2, &err), VYRE_INVALID_ARGUMENT);
  ck_assert_int_eq(vt->resident_upload_at(be, r, 0, NULL, 2, &err), VYRE_INVALID_ARGUMENT);
  ck_assert_int_eq(vt->resident_download(be, r, buf, 99, &err), VYRE_INVALID_ARGUMENT);
  tr_assert_fix(&err);
  memset(buf, 0, sizeof buf);
  ck_assert_int_eq(vt->resident_download_range(be, r, 88, buf, 12, &err), VYRE_OK);
  ck_assert_uint_eq(buf[0], 88);
  ck_assert_uint_eq(buf[1], 89);
  ck_assert_uint_eq(buf[2], 0); /* src[0], written at 90 */
  ck_assert_uint_eq(buf[11], 9);
  ck_assert_int_eq(vt->resident_download_range(be, r, 95, buf, 10, &err), VYRE_INVALID_ARGUMENT);
  ck_assert_int_eq(vt->resident_download_range(be, r, 100, buf, 0, &err), VYRE_OK);
  ck_assert_int_eq(vt->resident_free(be, r, &err), VYRE_OK);
  be->vt->destroy(be);
}
END_TEST

/* Stale, double-freed, foreign and made-up handles are errors, never
 * crashes. */
START_TEST(test_resident_handle_misuse) {
  vyre_backend *be = tr_new_backend(), *other = tr_new_backend();
  const vyre_backend_vtable *vt = be->vt;
  vyre_error err = VYRE_ERROR_INIT;
  vyre_resident r, r2, theirs;
  unsigned char buf[8] = {0};
  uint64_t size;
  ck_assert_int_eq(vt->resident_alloc(be, 8, &r, &err), VYRE_OK);
  ck_assert_int_eq(vt->resident_alloc(other, 8, &theirs, &err), VYRE_OK);
  ck_assert_int_eq(vt->resident_free(be, r, &err), VYRE_OK);
  ck_assert_int_eq(vt->resident_free(be, r, &err), VYRE_INVALID_HANDLE);
  tr_assert_fix(&err);
  ck_assert_int_eq(vt->resident_size(be, r, &size, &err), VYRE_INVALID_HANDLE);
  ck_assert_int_eq(vt->resident_upload(be, r, buf, 8, &err), VYRE_INVALID_HANDLE);
  ck_assert_int_eq(vt->resident_download(be, r, buf, 8, &err), VYRE_INVALID_HANDLE);
  /* The slot is reused, the old handle stays dead. */
  ck_assert_int_eq(vt->resident_alloc(be, 8, &r2, &err), VYRE_OK);
  ck_assert_uint_ne(r, r2);
  ck_assert_int_eq(vt->resident_size(be, r, &size, &err), VYRE_INVALID_HANDLE);
  ck_assert_int_eq(vt->resident_size(be, r2, &size, &err), VYRE_OK);
  ck_assert_int_eq(vt->resident_size(be, theirs, &size, &err), VYRE_INVALID_HANDLE);
  ck_assert_int_eq(vt->resident_free(be, theirs, &err), VYRE_INVALID_HANDLE);
  ck_assert_int_eq(vt->resident_size(be, 0, &size, &err), VYRE_INVALID_HANDLE);
  ck_assert_int_eq(vt->resident_size(be, 0x1234, &size, &err), VYRE_INVALID_HANDLE);
  ck_assert_int_eq(vt->resident_size(be, ~0ull, &size, &err), VYRE_INVALID_HANDLE);
  ck_assert_int_eq(vt->resident_size(be, r2, NULL, &err), VYRE_INVALID_ARGUMENT);
  ck_assert_int_eq(vt->resident_alloc(be, 0, &r, &err), VYRE_INVALID_ARGUMENT);
  ck_assert_int_eq(vt->resident_alloc(be, 8, NULL, &err), VYRE_INVALID_ARGUMENT);
  vyre_device_profile prof;
  prof.struct_size = sizeof prof;
  ck_assert_int_eq(vt->device_profile(be, &prof, &err), VYRE_OK);
  ck_assert_int_eq(vt->resident_alloc(be, prof.resident_budget + 1, &r, &err), VYRE_OUT_OF_MEMORY);
  tr_assert_fix(&err);
  ck_assert_uint_eq(r, 0);
  /* Handles of another kind are foreign too. */
  vyre_pipeline pl;
  void *bytes;
  size_t bsize;
  scale_program(1, 1, &bytes, &bsize);
  ck_assert_int_eq(vt->pipeline_create(be, bytes, bsize, NULL, &pl, &err), VYRE_OK);
  ck_assert_int_eq(vt->resident_free(be, pl, &err), VYRE_INVALID_HANDLE);
  ck_assert_int_eq(vt->pipeline_release(be, r2, &err), VYRE_INVALID_HANDLE);
  ck_assert_int_eq(vt->pipeline_release(be, pl, &err), VYRE_OK);
  free(bytes);
  /* destroy frees what is still live (r2, theirs): valgrind checks it. */
  other->vt->destroy(other);
  be->vt->destroy(be);
}
END_TEST

START_TEST(test_resident_many) {
  vyre_backend *be = tr_new_backend();
  const vyre_backend_vtable *vt = be->vt;
  vyre_error err = VYRE_ERROR_INIT;
  vyre_resident a, b;
  ck_assert_int_eq(vt->resident_alloc(be, 16, &a, &err), VYRE_OK);
  ck_assert_int_eq(vt->resident_alloc(be, 8, &b, &err), VYRE_OK);
  unsigned char s1[16], s2[8], d1[16], d2[8];
  memset(s1, 1, sizeof s1);
  memset(s2, 2, sizeof s2);
  /* One bad range: nothing at all is copied. */
  vyre_resident_copy up[2] = {{a, 0, s1, 16}, {b, 4, s2, 8}};
  ck_assert_int_eq(vt->resident_upload_many(be, up, 2, &err), VYRE_INVALID_ARGUMENT);
  ck_assert_msg(strstr(err.message, "copy 1 of 2") != NULL, "names the bad copy: %s", err.message);
  ck_assert_int_eq(vt->resident_download(be, a, d1, 16, &err), VYRE_OK);
  for (int i = 0; i < 16; i++) ck_assert_msg(d1[i] == 0, "buffer a untouched by a failed batch");
  up[1].buffer = 0xdead;
  up[1].offset = 0;
  ck_assert_int_eq(vt->resident_upload_many(be, up, 2, &err), VYRE_INVALID_HANDLE);
  up[1].buffer = b;
  ck_assert_int_eq(vt->resident_upload_many(be, up, 2, &err), VYRE_OK);
  ck_assert_int_eq(vt->resident_upload_many(be, NULL, 0, &err), VYRE_OK);
  ck_assert_int_eq(vt->resident_upload_many(be, NULL, 1, &err), VYRE_INVALID_ARGUMENT);
  memset(d1, 9, sizeof d1);
  memset(d2, 9, sizeof d2);
  vyre_resident_copy down[2] = {{a, 8, d1, 8}, {b, 0, d2, 9}};
  ck_assert_int_eq(vt->resident_download_many(be, down, 2, &err), VYRE_INVALID_ARGUMENT);
  for (int i = 0; i < 8; i++) ck_assert_msg(d1[i] == 9, "host memory untouched by a failed batch");
  down[1].size = 8;
  ck_assert_int_eq(vt->resident_download_many(be, down, 2, &err), VYRE_OK);
  for (int i = 0; i < 8; i++) {
    ck_assert_uint_eq(d1[i], 1);
    ck_assert_uint_eq(d2[i], 2);
  }
  ck_assert_uint_eq(d1[8], 9);
  ck_assert_int_eq(vt->resident_free(be, a, &err), VYRE_OK);
  ck_assert_int_eq(vt->resident_free(be, b, &err), VYRE_OK);
  be->vt->destroy(be);
}
END_TEST

/* One instance holds at most VYRE_HANDLES_MAX resident buffers at once:
 * the next alloc is VYRE_LIMIT with a Fix (and gives its budget back),
 * and works again after a free. */
START_TEST(test_resident_handle_limit) {
  vyre_backend *be = tr_new_backend();
  const vyre_backend_vtable *vt = be->vt;
  vyre_error err = VYRE_ERROR_INIT;
  vyre_resident *r = malloc(VYRE_HANDLES_MAX * sizeof *r);
  ck_assert_ptr_nonnull(r);
  for (uint32_t i = 0; i < VYRE_HANDLES_MAX; i++)
    ck_assert_msg(vt->resident_alloc(be, 1, &r[i], &err) == VYRE_OK, "alloc %u: %s", i, err.message);
  vyre_resident extra = 0;
  ck_assert_int_eq(vt->resident_alloc(be, 1, &extra, &err), VYRE_LIMIT);
  ck_assert_msg(strstr(err.message, "resident_alloc: no handle left") &&
                    strstr(err.message, "65535 live resident buffers"),
                "the message names the call and the limit: %s", err.message);
  tr_assert_fix(&err);
  ck_assert_int_eq(vt->resident_free(be, r[100], &err), VYRE_OK);
  ck_assert_int_eq(vt->resident_alloc(be, 1, &r[100], &err), VYRE_OK);
  for (uint32_t i = 0; i < VYRE_HANDLES_MAX; i++)
    ck_assert_msg(vt->resident_free(be, r[i], &err) == VYRE_OK, "free %u: %s", i, err.message);
  free(r);
  be->vt->destroy(be);
}
END_TEST

START_TEST(test_dispatch_resident) {
  vyre_backend *be = tr_new_backend();
  const vyre_backend_vtable *vt = be->vt;
  vyre_error err = VYRE_ERROR_INIT;
  /* x (rw, count 0) += y (ro, count 8); z is an output-flagged count-4
   * buffer used as it is (resident buffers are never zeroed). */
  vyre_builder *b = vyre_builder_new(4, 1, 1);
  uint32_t x = vyre_b_buffer(b, "x", UINT32_MAX, VYRE_ACCESS_READ_WRITE, VYRE_T_U32, 0, 0);
  uint32_t y = vyre_b_buffer(b, "y", UINT32_MAX, VYRE_ACCESS_READ_ONLY, VYRE_T_U32, 8, 0);
  uint32_t z = vyre_b_buffer(b, "z", UINT32_MAX, VYRE_ACCESS_READ_WRITE, VYRE_T_U32, 4, VYRE_BUF_OUTPUT);
  uint32_t g = vyre_b_gid(b, 0);
  vyre_b_store(b, x, g, vyre_b_bin(b, VYRE_OP_ADD, vyre_b_load(b, x, g), vyre_b_load(b, y, g)));
  vyre_b_atomic(b, VYRE_OP_ATOMIC_ADD, z, vyre_b_u32(b, 0), vyre_b_u32(b, 1), VYRE_ORDER_RELAXED);
  void *bytes;
  size_t size;
  tr_encode(b, &bytes, &size);
  vyre_program_ref ref = VYRE_PROGRAM_BYTES(bytes, size);
  vyre_resident rx, ry, rz;
  ck_assert_int_eq(vt->resident_alloc(be, 32, &rx, &err), VYRE_OK);
  ck_assert_int_eq(vt->resident_alloc(be, 64, &ry, &err), VYRE_OK); /* larger than declared */
  ck_assert_int_eq(vt->resident_alloc(be, 16, &rz, &err), VYRE_OK);
  uint32_t xs[8], ys[16], zs[4] = {100, 0, 0, 0};
  for (int i = 0; i < 8; i++) xs[i] = (uint32_t)i;
  for (int i = 0; i < 16; i++) ys[i] = 10u * (uint32_t)i;
  ck_assert_int_eq(vt->resident_upload(be, rx, xs, sizeof xs, &err), VYRE_OK);
  ck_assert_int_eq(vt->resident_upload(be, ry, ys, sizeof ys, &err), VYRE_OK);
  ck_assert_int_eq(vt->resident_upload(be, rz, zs, sizeof zs, &err), VYRE_OK);
  vyre_resident bufs[3] = {rx, ry, rz};
  vyre_timing t = {sizeof t, 0, 0, 0, 0, 0};
  ck_assert_int_eq(vt->dispatch_resident(be, &ref, bufs, 3, NULL, &t, &err), VYRE_OK);
  ck_assert_uint_eq(t.valid, 0xf);
  vyre_dispatch_options o = tr_opts();
  o.fixpoint_iterations = 2;
  ck_assert_int_eq(vt->dispatch_resident(be, &ref, bufs, 3, &o, NULL, &err), VYRE_OK);
  ck_assert_int_eq(vt->resident_download(be, rx, xs, sizeof xs, &err), VYRE_OK);
  ck_assert_int_eq(vt->resident_download(be, rz, zs, sizeof zs, &err), VYRE_OK);
  for (uint32_t i = 0; i < 8; i++) ck_assert_uint_eq(xs[i], i + 3 * 10 * i);
  ck_assert_uint_eq(zs[0], 100 + 3 * 8); /* 8 invocations (the largest buffer), 3 launches */
  /* Misuse. */
  ck_assert_int_eq(vt->dispatch_resident(be, &ref, bufs, 2, NULL, NULL, &err), VYRE_INVALID_ARGUMENT);
  ck_assert_int_eq(vt->dispatch_resident(be, &ref, NULL, 3, NULL, NULL, &err), VYRE_INVALID_ARGUMENT);
  vyre_resident small;
  ck_assert_int_eq(vt->resident_alloc(be, 16, &small, &err), VYRE_OK);
  vyre_resident bad[3] = {rx, small, rz}; /* y needs 8 elements */
  ck_assert_int_eq(vt->dispatch_resident(be, &ref, bad, 3, NULL, NULL, &err), VYRE_INVALID_ARGUMENT);
  tr_assert_fix(&err);
  ck_assert_int_eq(vt->resident_free(be, small, &err), VYRE_OK);
  bad[1] = small; /* now freed */
  ck_assert_int_eq(vt->dispatch_resident(be, &ref, bad, 3, NULL, NULL, &err), VYRE_INVALID_HANDLE);
  ck_assert_msg(strstr(err.message, "'y'") != NULL, "names the buffer: %s", err.message);
  free(bytes);
  be->vt->destroy(be); /* frees rx, ry, rz */
}
END_TEST

START_TEST(test_dispatch_sequence) {
  vyre_backend *be = tr_new_backend();
  const vyre_backend_vtable *vt = be->vt;
  vyre_error err = VYRE_ERROR_INIT;
  void *p1, *p2;
  size_t s1, s2;
  scale_program(2, 0, &p1, &s1);
  scale_program(1, 1, &p2, &s2);
  vyre_resident x;
  ck_assert_int_eq(vt->resident_alloc(be, 40, &x, &err), VYRE_OK);
  uint32_t xs[10];
  for (uint32_t i = 0; i < 10; i++) xs[i] = i;
  ck_assert_int_eq(vt->resident_upload(be, x, xs, sizeof xs, &err), VYRE_OK);
  vyre_sequence_step steps[2];
  memset(steps, 0, sizeof steps);
  const vyre_program_ref r1 = VYRE_PROGRAM_BYTES(p1, s1), r2 = VYRE_PROGRAM_BYTES(p2, s2);
  steps[0] = (vyre_sequence_step){sizeof steps[0], 1, &r1, &x, NULL};
  steps[1] = (vyre_sequence_step){sizeof steps[1], 1, &r2, &x, NULL};
  uint32_t got[4] = {0};
  vyre_resident_copy reads[1] = {{x, 8, got, 16}}; /* elements 2..5 */
  vyre_timing t = {sizeof t, 0, 0, 0, 0, 0};
  ck_assert_int_eq(vt->dispatch_sequence(be, steps, 2, 3, reads, 1, &t, &err), VYRE_OK);
  /* ((2x+1)*2+1)*2+1 = 8x + 7, steps in order, three rounds */
  for (uint32_t i = 0; i < 4; i++) ck_assert_uint_eq(got[i], 8 * (i + 2) + 7);
  ck_assert_uint_eq(t.valid, 0xf);
  /* Everything is checked before anything runs: a bad second step or a
   * bad read leaves x as it was. */
  vyre_resident dead;
  ck_assert_int_eq(vt->resident_alloc(be, 4, &dead, &err), VYRE_OK);
  ck_assert_int_eq(vt->resident_free(be, dead, &err), VYRE_OK);
  steps[1].buffers = &dead;
  ck_assert_int_eq(vt->dispatch_sequence(be, steps, 2, 1, reads, 1, NULL, &err), VYRE_INVALID_HANDLE);
  ck_assert_msg(strstr(err.message, "step 1") != NULL, "names the step: %s", err.message);
  steps[1].buffers = &x;
  reads[0].size = 64;
  ck_assert_int_eq(vt->dispatch_sequence(be, steps, 2, 1, reads, 1, NULL, &err), VYRE_INVALID_ARGUMENT);
  steps[1].struct_size = 4;
  reads[0].size = 16;
  ck_assert_int_eq(vt->dispatch_sequence(be, steps, 2, 1, reads, 1, NULL, &err), VYRE_INVALID_ARGUMENT);
  steps[1].struct_size = sizeof steps[1];
  ck_assert_int_eq(vt->dispatch_sequence(be, NULL, 2, 1, NULL, 0, NULL, &err), VYRE_INVALID_ARGUMENT);
  uint32_t now[10];
  ck_assert_int_eq(vt->resident_download(be, x, now, sizeof now, &err), VYRE_OK);
  for (uint32_t i = 0; i < 10; i++) ck_assert_uint_eq(now[i], 8 * i + 7);
  /* repeat 0 runs once; no steps just reads. */
  ck_assert_int_eq(vt->dispatch_sequence(be, steps, 1, 0, NULL, 0, NULL, &err), VYRE_OK);
  ck_assert_int_eq(vt->dispatch_sequence(be, NULL, 0, 5, reads, 1, NULL, &err), VYRE_OK);
  ck_assert_uint_eq(got[0], 2 * (8 * 2 + 7));
  free(p1);
  free(p2);
  be->vt->destroy(be);
}
END_TEST

/* ------------------------------------------------------------------ */
/* pipelines                                                           */
/* ------------------------------------------------------------------ */
START_TEST(test_pipelines) {
  vyre_backend *be = tr_new_backend(), *other = tr_new_backend();
  const vyre_backend_vtable *vt = be->vt;
  vyre_error err = VYRE_ERROR_INIT;
  void *bytes;
  size_t size;
  scale_program(3, 1, &bytes, &size);
  vyre_pipeline pl = 0;
  ck_assert_int_eq(vt->pipeline_create(be, bytes, size, NULL, &pl, &err), VYRE_OK);
  ck_assert_uint_ne(pl, 0);
  free(bytes); /* the pipeline keeps its own copy */
  uint32_t xs[5] = {1, 2, 3, 4, 5};
  vyre_input in = {xs, sizeof xs};
  vyre_program_ref ref = VYRE_PROGRAM_PIPELINE(pl); /* bytes ignored */
  vyre_outputs *out = NULL;
  ck_assert_int_eq(vt->dispatch(be, &ref, &in, 1, NULL, &out, NULL, &err), VYRE_OK);
  for (uint32_t i = 0; i < 5; i++) ck_assert_uint_eq(tr_u32_at(out, 0, i), 3 * xs[i] + 1);
  vt->outputs_free(be, out);
  ck_assert_int_eq(other->vt->dispatch(other, &ref, &in, 1, NULL, &out, NULL, &err), VYRE_INVALID_HANDLE);
  ck_assert_int_eq(vt->pipeline_release(be, pl, &err), VYRE_OK);
  ck_assert_int_eq(vt->pipeline_release(be, pl, &err), VYRE_INVALID_HANDLE);
  tr_assert_fix(&err);
  ck_assert_int_eq(vt->dispatch(be, &ref, &in, 1, NULL, &out, NULL, &err), VYRE_INVALID_HANDLE);
  ck_assert_ptr_null(out);

  /* A compiled-in workgroup override and ulp budget. */
  vyre_builder *b = vyre_builder_new(64, 1, 1);
  uint32_t o = vyre_b_buffer(b, "o", UINT32_MAX, VYRE_ACCESS_WRITE_ONLY, VYRE_T_F32, 64, 0);
  uint32_t g = vyre_b_gid(b, 0);
  vyre_b_store(b, o, g, vyre_b_bin(b, VYRE_OP_ADD, vyre_b_un(b, VYRE_OP_EXP, vyre_b_f32(b, 0.0f)),
                                   vyre_b_cast(b, VYRE_T_F32, vyre_b_builtin(b, VYRE_OP_WORKGROUP_ID, 0))));
  tr_encode(b, &bytes, &size);
  vyre_dispatch_options po = tr_opts();
  /* Strict admits exp (the reference claims correctly_rounded). */
  ck_assert_msg(vt->pipeline_create(be, bytes, size, &po, &pl, &err) == VYRE_OK,
                "a strict pipeline with exp: %s", err.message);
  ck_assert_int_eq(vt->pipeline_release(be, pl, &err), VYRE_OK);
  po.ulp_budget = 2;
  po.workgroup[0] = 16;
  ck_assert_int_eq(vt->pipeline_create(be, bytes, size, &po, &pl, &err), VYRE_OK);
  ref.pipeline = pl;
  /* Dispatch options with budget 0 and no override: the pipeline's apply. */
  ck_assert_int_eq(vt->dispatch(be, &ref, NULL, 0, NULL, &out, NULL, &err), VYRE_OK);
  for (uint32_t i = 0; i < 64; i++)
    ck_assert_msg(tr_u32_at(out, 0, i) == tr_fbits(1.0f + (float)(i / 16)),
                  "element %u ran in workgroup %u of width 16", i, i / 16);
  vt->outputs_free(be, out);
  vyre_dispatch_options d = tr_opts();
  d.workgroup[0] = 32;
  ck_assert_int_eq(vt->dispatch(be, &ref, NULL, 0, &d, &out, NULL, &err), VYRE_INVALID_ARGUMENT);
  tr_assert_fix(&err);
  d.workgroup[0] = 16;
  ck_assert_int_eq(vt->dispatch(be, &ref, NULL, 0, &d, &out, NULL, &err), VYRE_OK);
  vt->outputs_free(be, out);
  /* Bad programs and arguments. */
  ck_assert_int_eq(vt->pipeline_create(be, "garbage!", 8, NULL, &pl, &err), VYRE_INVALID_PROGRAM);
  ck_assert_int_eq(vt->pipeline_create(be, NULL, 0, NULL, &pl, &err), VYRE_INVALID_ARGUMENT);
  ck_assert_int_eq(vt->pipeline_create(be, bytes, size, NULL, NULL, &err), VYRE_INVALID_ARGUMENT);
  po.workgroup[1] = 128;
  ck_assert_int_eq(vt->pipeline_create(be, bytes, size, &po, &pl, &err), VYRE_LIMIT);
  free(bytes);
  /* The live pipeline is released by destroy. */
  other->vt->destroy(other);
  be->vt->destroy(be);
}
END_TEST

/* ------------------------------------------------------------------ */
/* async                                                               */
/* ------------------------------------------------------------------ */

/* A program that takes a while: each of n invocations loops `iters` times. */
static void slow_program(uint32_t n, uint32_t iters, void **bytes, size_t *size) {
  vyre_builder *b = vyre_builder_new(64, 1, 1);
  uint32_t o = vyre_b_buffer(b, "o", UINT32_MAX, VYRE_ACCESS_WRITE_ONLY, VYRE_T_U32, n, 0);
  uint32_t acc = vyre_b_local(b, VYRE_T_U32), k = vyre_b_local(b, VYRE_T_U32);
  vyre_b_let(b, acc, vyre_b_u32(b, 0));
  vyre_b_loop(b, k, vyre_b_u32(b, 0), vyre_b_u32(b, iters));
  vyre_b_assign(b, acc, vyre_b_bin(b, VYRE_OP_ADD, vyre_b_get(b, acc), vyre_b_get(b, k)));
  vyre_b_end(b);
  vyre_b_store(b, o, vyre_b_gid(b, 0), vyre_b_get(b, acc));
  tr_encode(b, bytes, size);
}

START_TEST(test_async_wait_poll) {
  vyre_backend *be = tr_new_backend();
  const vyre_backend_vtable *vt = be->vt;
  vyre_error err = VYRE_ERROR_INIT;
  void *bytes;
  size_t size;
  scale_program(5, 0, &bytes, &size);
  vyre_program_ref ref = VYRE_PROGRAM_BYTES(bytes, size);
  uint32_t xs[33];
  for (uint32_t i = 0; i < 33; i++) xs[i] = i;
  vyre_input in = {xs, sizeof xs};
  vyre_pending p = 0;
  ck_assert_int_eq(vt->dispatch_async(be, &ref, &in, 1, NULL, &p, &err), VYRE_OK);
  ck_assert_uint_ne(p, 0);
  /* The inputs were copied before dispatch_async returned. */
  memset(xs, 0xff, sizeof xs);
  int ready = 0;
  for (int spins = 0; !ready && spins < 100000; spins++) {
    ck_assert_int_eq(vt->pending_poll(be, p, &ready, &err), VYRE_OK);
    if (!ready) nanosleep(&(struct timespec){0, 100000}, NULL);
  }
  ck_assert_msg(ready, "the dispatch completes");
  vyre_outputs *out = NULL;
  vyre_timing t = {sizeof t, 0, 0, 0, 0, 0};
  ck_assert_int_eq(vt->pending_wait(be, p, &out, &t, &err), VYRE_OK);
  for (uint32_t i = 0; i < 33; i++) ck_assert_uint_eq(tr_u32_at(out, 0, i), 5 * i);
  ck_assert_uint_eq(t.valid, 0xf);
  ck_assert_msg(t.wall_ns >= t.enqueue_ns && t.wall_ns >= t.device_ns, "wall covers the rest");
  vt->outputs_free(be, out);
  /* The handle is gone after wait. */
  ck_assert_int_eq(vt->pending_poll(be, p, &ready, &err), VYRE_INVALID_HANDLE);
  ck_assert_int_eq(vt->pending_wait(be, p, &out, NULL, &err), VYRE_INVALID_HANDLE);
  ck_assert_int_eq(vt->pending_release(be, p, &err), VYRE_INVALID_HANDLE);
  tr_assert_fix(&err);
  /* Validation errors come back from dispatch_async itself. */
  ck_assert_int_eq(vt->dispatch_async(be, &ref, &in, 0, NULL, &p, &err), VYRE_INVALID_ARGUMENT);
  ck_assert_uint_eq(p, 0);
  ck_assert_int_eq(vt->dispatch_async(be, &ref, &in, 1, NULL, NULL, &err), VYRE_INVALID_ARGUMENT);
  /* wait with out NULL fails, and still releases the handle. */
  ck_assert_int_eq(vt->dispatch_async(be, &ref, &in, 1, NULL, &p, &err), VYRE_OK);
  ck_assert_int_eq(vt->pending_wait(be, p, NULL, NULL, &err), VYRE_INVALID_ARGUMENT);
  ck_assert_int_eq(vt->pending_poll(be, p, &ready, &err), VYRE_INVALID_HANDLE);
  free(bytes);
  be->vt->destroy(be);
}
END_TEST

/* Release before wait, at every stage: queued, running, done. */
START_TEST(test_async_release_before_wait) {
  vyre_backend *be = tr_new_backend();
  const vyre_backend_vtable *vt = be->vt;
  vyre_error err = VYRE_ERROR_INIT;
  void *slow, *fast;
  size_t slow_size, fast_size;
  slow_program(1024, 500, &slow, &slow_size);
  scale_program(2, 0, &fast, &fast_size);
  vyre_program_ref sref = VYRE_PROGRAM_BYTES(slow, slow_size), fref = VYRE_PROGRAM_BYTES(fast, fast_size);
  vyre_pending p[6];
  for (int i = 0; i < 6; i++)
    ck_assert_int_eq(vt->dispatch_async(be, &sref, NULL, 0, NULL, &p[i], &err), VYRE_OK);
  /* p[0] is likely running, the rest queued. */
  for (int i = 0; i < 6; i += 2) ck_assert_int_eq(vt->pending_release(be, p[i], &err), VYRE_OK);
  ck_assert_int_eq(vt->pending_release(be, p[0], &err), VYRE_INVALID_HANDLE);
  uint32_t xs[3] = {1, 2, 3};
  vyre_input in = {xs, sizeof xs};
  vyre_pending q;
  ck_assert_int_eq(vt->dispatch_async(be, &fref, &in, 1, NULL, &q, &err), VYRE_OK);
  vyre_outputs *out = NULL;
  ck_assert_int_eq(vt->pending_wait(be, p[1], &out, NULL, &err), VYRE_OK);
  ck_assert_uint_eq(tr_u32_at(out, 0, 1023), 500u * 499u / 2u);
  vt->outputs_free(be, out);
  ck_assert_int_eq(vt->pending_wait(be, q, &out, NULL, &err), VYRE_OK);
  ck_assert_uint_eq(tr_u32_at(out, 0, 2), 6);
  vt->outputs_free(be, out);
  /* Done, then released without a wait. */
  ck_assert_int_eq(vt->dispatch_async(be, &fref, &in, 1, NULL, &q, &err), VYRE_OK);
  ck_assert_int_eq(vt->shutdown(be, &err), VYRE_OK); /* waits for all queued work */
  int ready = 0;
  ck_assert_int_eq(vt->pending_poll(be, q, &ready, &err), VYRE_OK);
  ck_assert_int_eq(ready, 1);
  ck_assert_int_eq(vt->pending_poll(be, p[3], &ready, &err), VYRE_OK);
  ck_assert_int_eq(ready, 1);
  ck_assert_int_eq(vt->pending_release(be, q, &err), VYRE_OK);
  /* p[3] and p[5] are never waited for: destroy reclaims them. */
  free(slow);
  free(fast);
  be->vt->destroy(be);
}
END_TEST

START_TEST(test_async_trap_and_pipeline) {
  vyre_backend *be = tr_new_backend();
  const vyre_backend_vtable *vt = be->vt;
  vyre_error err = VYRE_ERROR_INIT;
  vyre_builder *b = vyre_builder_new(8, 1, 1);
  uint32_t o = vyre_b_buffer(b, "o", UINT32_MAX, VYRE_ACCESS_WRITE_ONLY, VYRE_T_U32, 64, 0);
  uint32_t g = vyre_b_gid(b, 0);
  vyre_b_if(b, vyre_b_bin(b, VYRE_OP_EQ, g, vyre_b_u32(b, 9)));
  vyre_b_trap(b, 7);
  vyre_b_end(b);
  vyre_b_store(b, o, g, g);
  void *bytes;
  size_t size;
  tr_encode(b, &bytes, &size);
  vyre_pipeline pl;
  ck_assert_int_eq(vt->pipeline_create(be, bytes, size, NULL, &pl, &err), VYRE_OK);
  free(bytes);
  vyre_program_ref ref = VYRE_PROGRAM_PIPELINE(pl);
  vyre_pending p;
  ck_assert_int_eq(vt->dispatch_async(be, &ref, NULL, 0, NULL, &p, &err), VYRE_OK);
  /* Releasing the pipeline does not pull it from under the queued job. */
  ck_assert_int_eq(vt->pipeline_release(be, pl, &err), VYRE_OK);
  vyre_outputs *out = (vyre_outputs *)0x1;
  vyre_error werr = VYRE_ERROR_INIT;
  ck_assert_int_eq(vt->pending_wait(be, p, &out, NULL, &werr), VYRE_TRAP);
  ck_assert_ptr_null(out);
  ck_assert_int_eq(werr.native_code, 7);
  ck_assert_msg(strstr(werr.message, "code 7") != NULL, "the trap code travels: %s", werr.message);
  be->vt->destroy(be);
}
END_TEST

/* ------------------------------------------------------------------ */
/* instance: profile, metrics, prepare/shutdown, bad arguments          */
/* ------------------------------------------------------------------ */
START_TEST(test_device_profile) {
  setenv("VYRE_REF_THREADS", "3", 1);
  vyre_backend *be = tr_new_backend();
  unsetenv("VYRE_REF_THREADS");
  vyre_error err = VYRE_ERROR_INIT;
  vyre_device_profile p;
  memset(&p, 0, sizeof p);
  p.struct_size = sizeof p;
  ck_assert_int_eq(be->vt->device_profile(be, &p, &err), VYRE_OK);
  ck_assert_uint_eq(p.struct_size, sizeof p);
  ck_assert_str_eq(p.name, "vyre reference CPU interpreter");
  ck_assert_str_eq(p.backend_id, "reference");
  ck_assert_uint_eq(p.ordinal, 0);
  ck_assert_uint_eq(p.compute_units, 3);
  ck_assert_uint_eq(p.subgroup_size, 32);
  ck_assert_uint_eq(p.max_invocations_per_workgroup, 1024);
  ck_assert_uint_eq(p.shared_memory_per_workgroup, 49152);
  ck_assert_uint_eq(p.max_workgroups[0], 0x7fffffffu);
  ck_assert_uint_gt(p.total_memory, 0);
  ck_assert_uint_gt(p.resident_budget, 0);
  ck_assert_uint_le(p.resident_budget, p.total_memory);
  ck_assert_uint_eq(p.capabilities, tr_reg->capabilities);
  ck_assert_uint_eq(p.driver_version, 0);
  /* An older, shorter record: nothing past its struct_size is written. */
  unsigned char raw[sizeof p];
  memset(raw, 0xcd, sizeof raw);
  vyre_device_profile *small = (vyre_device_profile *)raw;
  small->struct_size = (uint32_t)offsetof(vyre_device_profile, backend_id);
  ck_assert_int_eq(be->vt->device_profile(be, small, &err), VYRE_OK);
  ck_assert_str_eq(small->name, "vyre reference CPU interpreter");
  for (size_t i = offsetof(vyre_device_profile, backend_id); i < sizeof raw; i++)
    ck_assert_msg(raw[i] == 0xcd, "byte %zu past struct_size written", i);
  small->struct_size = 0;
  ck_assert_int_eq(be->vt->device_profile(be, small, &err), VYRE_INVALID_ARGUMENT);
  ck_assert_int_eq(be->vt->device_profile(be, NULL, &err), VYRE_INVALID_ARGUMENT);
  be->vt->destroy(be);
}
END_TEST

static uint64_t metric(vyre_backend *be, const char *name) {
  vyre_metric m[64];
  uint32_t count = 0;
  ck_assert_int_eq(be->vt->metrics(be, m, 64, &count, NULL), VYRE_OK);
  for (uint32_t i = 0; i < count && i < 64; i++)
    if (!strcmp(m[i].name, name)) return m[i].value;
  ck_abort_msg("metric %s is missing", name);
  return 0;
}

START_TEST(test_metrics) {
  vyre_backend *be = tr_new_backend();
  vyre_error err = VYRE_ERROR_INIT;
  uint32_t count = 0;
  ck_assert_int_eq(be->vt->metrics(be, NULL, 0, &count, &err), VYRE_OK);
  ck_assert_uint_gt(count, 10);
  ck_assert_int_eq(be->vt->metrics(be, NULL, 4, &count, &err), VYRE_INVALID_ARGUMENT);
  ck_assert_int_eq(be->vt->metrics(be, NULL, 0, NULL, &err), VYRE_INVALID_ARGUMENT);
  vyre_metric m[2];
  ck_assert_int_eq(be->vt->metrics(be, m, 2, &count, &err), VYRE_OK);
  ck_assert_uint_gt(count, 2); /* count says how many exist */
  ck_assert_uint_eq(metric(be, "dispatch.count"), 0);
  void *bytes;
  size_t size;
  scale_program(1, 1, &bytes, &size);
  vyre_program_ref ref = VYRE_PROGRAM_BYTES(bytes, size);
  uint32_t xs[100] = {0};
  vyre_input in = {xs, sizeof xs};
  vyre_outputs *out;
  ck_assert_int_eq(be->vt->dispatch(be, &ref, &in, 1, NULL, &out, NULL, &err), VYRE_OK);
  be->vt->outputs_free(be, out);
  ck_assert_int_eq(be->vt->dispatch(be, &ref, &in, 0, NULL, &out, NULL, &err), VYRE_INVALID_ARGUMENT);
  vyre_resident r;
  ck_assert_int_eq(be->vt->resident_alloc(be, 1000, &r, &err), VYRE_OK);
  ck_assert_uint_eq(metric(be, "dispatch.count"), 2);
  ck_assert_uint_eq(metric(be, "dispatch.errors"), 1);
  ck_assert_uint_eq(metric(be, "launch.count"), 1);
  ck_assert_uint_eq(metric(be, "launch.invocations"), 112); /* 7 workgroups of 16 */
  ck_assert_uint_eq(metric(be, "transfer.host_to_backend.bytes"), 400);
  ck_assert_uint_eq(metric(be, "transfer.backend_to_host.bytes"), 400);
  ck_assert_uint_eq(metric(be, "resident.live.buffers"), 1);
  ck_assert_uint_eq(metric(be, "resident.live.bytes"), 1000);
  ck_assert_int_eq(be->vt->resident_free(be, r, &err), VYRE_OK);
  ck_assert_uint_eq(metric(be, "resident.live.bytes"), 0);
  ck_assert_uint_eq(metric(be, "resident.peak.bytes"), 1000);
  vyre_metric all[64];
  ck_assert_int_eq(be->vt->metrics(be, all, 64, &count, &err), VYRE_OK);
  for (uint32_t i = 0; i < count; i++) {
    ck_assert_msg(memchr(all[i].name, 0, sizeof all[i].name) != NULL, "names are NUL-terminated");
    for (uint32_t j = 0; j < i; j++) ck_assert_str_ne(all[i].name, all[j].name);
  }
  free(bytes);
  be->vt->destroy(be);
}
END_TEST

START_TEST(test_prepare_shutdown) {
  vyre_backend *be = tr_new_backend();
  vyre_error err = VYRE_ERROR_INIT;
  ck_assert_int_eq(be->vt->prepare(be, &err), VYRE_OK);
  ck_assert_int_eq(be->vt->prepare(be, &err), VYRE_OK);
  ck_assert_int_eq(be->vt->shutdown(be, &err), VYRE_OK);
  /* Usable after shutdown. */
  void *bytes;
  size_t size;
  scale_program(1, 2, &bytes, &size);
  vyre_program_ref ref = VYRE_PROGRAM_BYTES(bytes, size);
  uint32_t xs[2] = {5, 6};
  vyre_input in = {xs, sizeof xs};
  vyre_pending p;
  ck_assert_int_eq(be->vt->dispatch_async(be, &ref, &in, 1, NULL, &p, &err), VYRE_OK);
  vyre_outputs *out;
  ck_assert_int_eq(be->vt->pending_wait(be, p, &out, NULL, &err), VYRE_OK);
  ck_assert_uint_eq(tr_u32_at(out, 0, 1), 8);
  be->vt->outputs_free(be, out);
  ck_assert_int_eq(be->vt->shutdown(be, &err), VYRE_OK);
  free(bytes);
  be->vt->destroy(be);
}
END_TEST

START_TEST(test_bad_arguments) {
  vyre_backend *be = tr_new_backend();
  const vyre_backend_vtable *vt = be->vt;
  vyre_error err = VYRE_ERROR_INIT;
  vyre_outputs *out = (vyre_outputs *)0x1;
  void *bytes;
  size_t size;
  scale_program(1, 0, &bytes, &size);
  vyre_program_ref ref = VYRE_PROGRAM_BYTES(bytes, size);
  uint32_t xs[4] = {0};
  vyre_input in = {xs, sizeof xs};
  /* A foreign or NULL instance. */
  struct {
    vyre_backend head;
    char rest[64];
  } alien;
  memset(&alien, 0, sizeof alien);
  vyre_backend_vtable vt2 = *vt;
  alien.head.vt = &vt2;
  ck_assert_int_eq(vt->dispatch(NULL, &ref, &in, 1, NULL, &out, NULL, &err), VYRE_INVALID_ARGUMENT);
  ck_assert_int_eq(vt->dispatch(&alien.head, &ref, &in, 1, NULL, &out, NULL, &err), VYRE_INVALID_ARGUMENT);
  tr_assert_fix(&err);
  ck_assert_int_eq(vt->prepare(NULL, &err), VYRE_INVALID_ARGUMENT);
  ck_assert_int_eq(vt->resident_free(NULL, 1, NULL), VYRE_INVALID_ARGUMENT); /* err may be NULL */
  /* Programs. */
  ck_assert_int_eq(vt->dispatch(be, NULL, &in, 1, NULL, &out, NULL, &err), VYRE_INVALID_ARGUMENT);
  ck_assert_ptr_null(out);
  ck_assert_str_eq(err.message, "dispatch: program is NULL. Fix: pass a vyre_program_ref");
  vyre_program_ref short_ref = ref;
  short_ref.struct_size = 4;
  ck_assert_int_eq(vt->dispatch(be, &short_ref, &in, 1, NULL, &out, NULL, &err),
                   VYRE_INVALID_ARGUMENT);
  ck_assert_msg(strstr(err.message, "dispatch: vyre_program_ref.struct_size is 4") != NULL,
                "names the size: %s", err.message);
  vyre_program_ref junk = VYRE_PROGRAM_BYTES("0123456789abcdef", 16);
  ck_assert_int_eq(vt->dispatch(be, &junk, &in, 1, NULL, &out, NULL, &err), VYRE_INVALID_PROGRAM);
  tr_assert_fix(&err);
  unsigned char *copy = malloc(size);
  memcpy(copy, bytes, size);
  copy[64 + 32 + 20] = 0xff; /* the second instruction's op id: unassigned */
  vyre_program_ref bad = VYRE_PROGRAM_BYTES(copy, size);
  ck_assert_int_eq(vt->dispatch(be, &bad, &in, 1, NULL, &out, NULL, &err), VYRE_INVALID_PROGRAM);
  ck_assert_int_eq(vt->dispatch(be, &ref, &in, 1, NULL, NULL, NULL, &err), VYRE_INVALID_ARGUMENT);
  /* Inputs. */
  ck_assert_int_eq(vt->dispatch(be, &ref, &in, 2, NULL, &out, NULL, &err), VYRE_INVALID_ARGUMENT);
  ck_assert_int_eq(vt->dispatch(be, &ref, NULL, 1, NULL, &out, NULL, &err), VYRE_INVALID_ARGUMENT);
  /* The argument checks every backend shares (vyre_check_inputs,
   * docs/abi.md section 11): one wording. */
  ck_assert_msg(strstr(err.message, "dispatch: inputs is NULL with input_count 1. Fix: pass an "
                                    "array of input_count vyre_input") != NULL,
                "the shared wording: %s", err.message);
  vyre_input odd = {xs, 7};
  ck_assert_int_eq(vt->dispatch(be, &ref, &odd, 1, NULL, &out, NULL, &err), VYRE_INVALID_ARGUMENT);
  tr_assert_fix(&err);
  vyre_input nodata = {NULL, 8};
  ck_assert_int_eq(vt->dispatch(be, &ref, &nodata, 1, NULL, &out, NULL, &err), VYRE_INVALID_ARGUMENT);
  ck_assert_msg(strstr(err.message, "dispatch: input 0 has 8 bytes but its data is NULL. Fix: "
                                    "pass the input's memory, or size 0") != NULL,
                "the shared wording: %s", err.message);
  /* Options. */
  vyre_dispatch_options o = tr_opts();
  o.flags = 1;
  ck_assert_int_eq(vt->dispatch(be, &ref, &in, 1, &o, &out, NULL, &err), VYRE_INVALID_ARGUMENT);
  o = tr_opts();
  o.struct_size = 4;
  ck_assert_int_eq(vt->dispatch(be, &ref, &in, 1, &o, &out, NULL, &err), VYRE_INVALID_ARGUMENT);
  /* An error record of an older, shorter layout is written only so far. */
  vyre_error se;
  memset(&se, 0x77, sizeof se);
  se.struct_size = 40; /* 24 message bytes */
  ck_assert_int_eq(vt->dispatch(be, &junk, &in, 1, NULL, &out, NULL, &se), VYRE_INVALID_PROGRAM);
  ck_assert_int_eq(se.status, VYRE_INVALID_PROGRAM);
  const unsigned char *raw = (const unsigned char *)&se;
  ck_assert_uint_eq(raw[39], 0);
  for (size_t i = 40; i < 64; i++) ck_assert_uint_eq(raw[i], 0x77);
  /* An empty input sized buffer: nothing to launch, an empty output. */
  vyre_input empty = {NULL, 0};
  ck_assert_int_eq(vt->dispatch(be, &ref, &empty, 1, NULL, &out, NULL, &err), VYRE_OK);
  ck_assert_uint_eq(out->count, 1);
  ck_assert_uint_eq(out->items[0].size, 0);
  vt->outputs_free(be, out);
  free(copy);
  free(bytes);
  be->vt->destroy(be);
}
END_TEST

void tr_add_api_tcases(Suite *s) {
  TCase *tc = tcase_create("resident");
  tcase_add_test(tc, test_resident_basics);
  tcase_add_test(tc, test_resident_handle_misuse);
  tcase_add_test(tc, test_resident_many);
  tcase_add_test(tc, test_resident_handle_limit);
  tcase_add_test(tc, test_dispatch_resident);
  tcase_add_test(tc, test_dispatch_sequence);
  suite_add_tcase(s, tc);

  tc = tcase_create("pipeline");
  tcase_add_test(tc, test_pipelines);
  suite_add_tcase(s, tc);

  tc = tcase_create("async");
  tcase_set_timeout(tc, 60);
  tcase_add_test(tc, test_async_wait_poll);
  tcase_add_test(tc, test_async_release_before_wait);
  tcase_add_test(tc, test_async_trap_and_pipeline);
  suite_add_tcase(s, tc);

  tc = tcase_create("errors");
  tcase_add_test(tc, test_device_profile);
  tcase_add_test(tc, test_metrics);
  tcase_add_test(tc, test_prepare_shutdown);
  tcase_add_test(tc, test_bad_arguments);
  suite_add_tcase(s, tc);
}
