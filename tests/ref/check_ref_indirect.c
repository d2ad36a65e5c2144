/* check_ref_indirect.c -- indirect dispatch on the reference backend: the capability and extension, counts 0 / partial / equal / past the bound on each axis, the refusals, and sequences whose count an earlier step writes. */
#include <stdlib.h>
#include <string.h>

#include "check_ref.h"

/* Thread 0 of each workgroup adds 1 to o[wgid.x + 4 * wgid.y]: which
 * workgroups ran, on a 4 x 3 grid (options.grid) of 16 invocations. */
static void mark_program(void **bytes, size_t *size) {
  vyre_builder *b = vyre_builder_new(16, 1, 1);
  uint32_t o = vyre_b_buffer(b, "o", UINT32_MAX, VYRE_ACCESS_READ_WRITE, VYRE_T_U32, 0, 0);
  vyre_b_if(b, vyre_b_bin(b, VYRE_OP_EQ, vyre_b_builtin(b, VYRE_OP_LOCAL_ID, 0), vyre_b_u32(b, 0)));
  uint32_t wx = vyre_b_builtin(b, VYRE_OP_WORKGROUP_ID, 0);
  uint32_t wy = vyre_b_builtin(b, VYRE_OP_WORKGROUP_ID, 1);
  uint32_t i = vyre_b_bin(b, VYRE_OP_ADD, wx, vyre_b_bin(b, VYRE_OP_MUL, wy, vyre_b_u32(b, 4)));
  vyre_b_store(b, o, i, vyre_b_bin(b, VYRE_OP_ADD, vyre_b_load(b, o, i), vyre_b_u32(b, 1)));
  vyre_b_end(b);
  tr_encode(b, bytes, size);
}

/* c[1..3] = 2, 1, 1 (a count an earlier step writes), one invocation. */
static void count_program(void **bytes, size_t *size) {
  vyre_builder *b = vyre_builder_new(1, 1, 1);
  uint32_t c = vyre_b_buffer(b, "c", UINT32_MAX, VYRE_ACCESS_READ_WRITE, VYRE_T_U32, 0, 0);
  vyre_b_store(b, c, vyre_b_u32(b, 1), vyre_b_u32(b, 2));
  vyre_b_store(b, c, vyre_b_u32(b, 2), vyre_b_u32(b, 1));
  vyre_b_store(b, c, vyre_b_u32(b, 3), vyre_b_u32(b, 1));
  tr_encode(b, bytes, size);
}

typedef struct fixture {
  vyre_backend *be;
  vyre_program_ref ref;
  void *bytes;
  vyre_resident o, cnt;
  vyre_indirect ind;
  vyre_dispatch_options opts;
} fixture;

static void setup(fixture *f) {
  memset(f, 0, sizeof *f);
  f->be = tr_new_backend();
  size_t size;
  mark_program(&f->bytes, &size);
  f->ref.struct_size = sizeof f->ref;
  f->ref.bytes = f->bytes;
  f->ref.size = size;
  vyre_error err = VYRE_ERROR_INIT;
  ck_assert_int_eq(f->be->vt->resident_alloc(f->be, 48, &f->o, &err), VYRE_OK);
  ck_assert_int_eq(f->be->vt->resident_alloc(f->be, 16, &f->cnt, &err), VYRE_OK);
  f->ind.head.struct_size = sizeof f->ind;
  f->ind.head.type = VYRE_EXT_INDIRECT;
  f->ind.buffer = f->cnt;
  f->ind.offset = 4;
  f->opts = tr_opts();
  f->opts.grid[0] = 4;
  f->opts.grid[1] = 3;
  f->opts.grid[2] = 1;
  f->opts.next = &f->ind.head;
}

static void teardown(fixture *f) {
  f->be->vt->destroy(f->be);
  free(f->bytes);
}

/* Dispatch with counts x y z (at byte 4); o is zeroed first, read after. */
static vyre_status run_counts(fixture *f, uint32_t x, uint32_t y, uint32_t z, uint32_t o[12],
                              vyre_error *err) {
  uint32_t w[4] = {0, x, y, z}, zero[12] = {0};
  const vyre_backend_vtable *vt = f->be->vt;
  ck_assert_int_eq(vt->resident_upload(f->be, f->cnt, w, sizeof w, err), VYRE_OK);
  ck_assert_int_eq(vt->resident_upload(f->be, f->o, zero, sizeof zero, err), VYRE_OK);
  vyre_status st = vt->dispatch_resident(f->be, &f->ref, &f->o, 1, &f->opts, NULL, err);
  vyre_error e2 = VYRE_ERROR_INIT;
  ck_assert_int_eq(vt->resident_download(f->be, f->o, o, 48, &e2), VYRE_OK);
  return st;
}

static uint32_t ran(const uint32_t o[12]) {
  uint32_t n = 0;
  for (int i = 0; i < 12; i++) n += o[i];
  return n;
}

START_TEST(test_indirect_offered) {
  ck_assert_msg(tr_reg->capabilities & VYRE_CAP_INDIRECT_DISPATCH, "the reference offers it");
  ck_assert_msg(strstr(tr_reg->extensions, "vyre.indirect@1"), "extensions: %s",
                tr_reg->extensions);
  vyre_backend *be = tr_new_backend();
  const void *t = NULL;
  vyre_error err = VYRE_ERROR_INIT;
  ck_assert_int_eq(be->vt->get_extension(be, VYRE_INDIRECT_NAME, 1, &t, &err), VYRE_OK);
  ck_assert_uint_eq(((const vyre_extension_head *)t)->version, 1);
  ck_assert_int_eq(be->vt->get_extension(be, VYRE_INDIRECT_NAME, 2, &t, &err), VYRE_UNSUPPORTED);
  be->vt->destroy(be);
}
END_TEST

START_TEST(test_indirect_counts) {
  fixture f;
  setup(&f);
  uint32_t o[12];
  vyre_error err = VYRE_ERROR_INIT;
  ck_assert_int_eq(run_counts(&f, 2, 2, 1, o, &err), VYRE_OK);
  ck_assert_msg(ran(o) == 4 && o[0] && o[1] && o[4] && o[5],
                "a 2 x 2 count runs workgroups (0..1, 0..1) of the 4 x 3 bound");
  ck_assert_int_eq(run_counts(&f, 1, 1, 1, o, &err), VYRE_OK);
  ck_assert_msg(ran(o) == 1 && o[0] == 1, "a count of 1 runs workgroup 0");
  ck_assert_int_eq(run_counts(&f, 4, 3, 0, o, &err), VYRE_OK);
  ck_assert_msg(ran(o) == 0, "0 on an axis runs nothing, and is no error");
  ck_assert_int_eq(run_counts(&f, 0, 3, 1, o, &err), VYRE_OK);
  ck_assert_uint_eq(ran(o), 0);
  ck_assert_int_eq(run_counts(&f, 4, 3, 1, o, &err), VYRE_OK);
  ck_assert_msg(ran(o) == 12, "the count equal to the bound runs it all");
  ck_assert_int_eq(run_counts(&f, 5, 1, 1, o, &err), VYRE_LIMIT);
  ck_assert_msg(strstr(err.message, "count 5 on axis x") && strstr(err.message, "4 x 3 x 1"),
                "names count, axis and bound: %s", err.message);
  tr_assert_fix(&err);
  ck_assert_msg(ran(o) == 0, "past the bound nothing runs");
  ck_assert_int_eq(run_counts(&f, 1, 1, 2, o, &err), VYRE_LIMIT);
  ck_assert_msg(strstr(err.message, "count 2 on axis z"), "%s", err.message);
  /* Without the chain: the whole bound. */
  f.opts.next = NULL;
  ck_assert_int_eq(run_counts(&f, 0, 0, 0, o, &err), VYRE_OK);
  ck_assert_uint_eq(ran(o), 12);
  teardown(&f);
}
END_TEST

START_TEST(test_indirect_refusals) {
  fixture f;
  setup(&f);
  const vyre_backend_vtable *vt = f.be->vt;
  vyre_error err = VYRE_ERROR_INIT;
  uint32_t host[12] = {0};
  vyre_input in = {host, sizeof host};
  vyre_outputs *out = NULL;
  ck_assert_int_eq(vt->dispatch(f.be, &f.ref, &in, 1, &f.opts, &out, NULL, &err),
                   VYRE_INVALID_ARGUMENT);
  tr_assert_fix(&err);
  vyre_pending pend = 0;
  ck_assert_int_eq(vt->dispatch_async(f.be, &f.ref, &in, 1, &f.opts, &pend, &err),
                   VYRE_INVALID_ARGUMENT);
  f.ind.buffer = f.cnt + 99;
  ck_assert_int_eq(vt->dispatch_resident(f.be, &f.ref, &f.o, 1, &f.opts, NULL, &err),
                   VYRE_INVALID_HANDLE);
  f.ind.buffer = f.cnt;
  f.ind.offset = 6;
  ck_assert_int_eq(vt->dispatch_resident(f.be, &f.ref, &f.o, 1, &f.opts, NULL, &err),
                   VYRE_INVALID_ARGUMENT);
  f.ind.offset = 8;
  ck_assert_int_eq(vt->dispatch_resident(f.be, &f.ref, &f.o, 1, &f.opts, NULL, &err),
                   VYRE_INVALID_ARGUMENT);
  tr_assert_fix(&err);
  f.ind.offset = 0;
  vyre_indirect second = f.ind;
  f.ind.head.next = &second.head;
  ck_assert_int_eq(vt->dispatch_resident(f.be, &f.ref, &f.o, 1, &f.opts, NULL, &err),
                   VYRE_INVALID_ARGUMENT);
  teardown(&f);
}
END_TEST

START_TEST(test_indirect_sequence) {
  fixture f;
  setup(&f);
  const vyre_backend_vtable *vt = f.be->vt;
  vyre_error err = VYRE_ERROR_INIT;
  void *cbytes;
  size_t csize;
  count_program(&cbytes, &csize);
  vyre_program_ref cref = {sizeof cref, 0, cbytes, csize, 0};
  uint32_t zero[12] = {0}, o[12];
  ck_assert_int_eq(vt->resident_upload(f.be, f.cnt, zero, 16, &err), VYRE_OK);
  ck_assert_int_eq(vt->resident_upload(f.be, f.o, zero, sizeof zero, &err), VYRE_OK);
  vyre_dispatch_options copts = tr_opts();
  copts.grid[0] = copts.grid[1] = copts.grid[2] = 1;
  vyre_sequence_step steps[3];
  memset(steps, 0, sizeof steps);
  steps[0].struct_size = steps[1].struct_size = steps[2].struct_size = sizeof steps[0];
  steps[0].program = &cref;
  steps[0].buffer_count = 1;
  steps[0].buffers = &f.cnt;
  steps[0].options = &copts;
  steps[1].program = &f.ref;
  steps[1].buffer_count = 1;
  steps[1].buffers = &f.o;
  steps[1].options = &f.opts;
  /* Step 0 writes 2 x 1 x 1; step 1 runs that many, twice (repeat). */
  ck_assert_int_eq(vt->dispatch_sequence(f.be, steps, 2, 2, NULL, 0, NULL, &err), VYRE_OK);
  ck_assert_int_eq(vt->resident_download(f.be, f.o, o, sizeof o, &err), VYRE_OK);
  ck_assert_msg(o[0] == 2 && o[1] == 2 && ran(o) == 4, "the count the earlier step wrote");
  /* Past the bound in step 1 of 3: steps 0 and 2 run, the call names step 1. */
  uint32_t big[4] = {0, 9, 1, 1};
  vyre_dispatch_options plain = f.opts;
  plain.next = NULL;
  steps[0] = steps[1];
  steps[0].options = &plain;
  ck_assert_int_eq(vt->resident_upload(f.be, f.cnt, big, 16, &err), VYRE_OK);
  steps[2] = steps[0];
  ck_assert_int_eq(vt->resident_upload(f.be, f.o, zero, sizeof zero, &err), VYRE_OK);
  ck_assert_int_eq(vt->dispatch_sequence(f.be, steps, 3, 1, NULL, 0, NULL, &err), VYRE_LIMIT);
  ck_assert_msg(strstr(err.message, "sequence step 1") && strstr(err.message, "count 9"), "%s",
                err.message);
  ck_assert_int_eq(vt->resident_download(f.be, f.o, o, sizeof o, &err), VYRE_OK);
  ck_assert_msg(ran(o) == 24, "the other two steps ran the whole bound each (%u)", ran(o));
  free(cbytes);
  teardown(&f);
}
END_TEST

void tr_add_indirect_tcases(Suite *s) {
  TCase *tc = tcase_create("indirect");
  tcase_set_timeout(tc, 60);
  tcase_add_test(tc, test_indirect_offered);
  tcase_add_test(tc, test_indirect_counts);
  tcase_add_test(tc, test_indirect_refusals);
  tcase_add_test(tc, test_indirect_sequence);
  suite_add_tcase(s, tc);
}
