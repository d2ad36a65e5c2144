/* indirect.c -- indirect dispatch against the fake: the capability and extension, the kernel's `indirect` parameter, counts 0 / partial / over the bound, every refusal, sequences, and graph replays that read the count each time. */
#include "harness.h"
#include "plugin/codegen/codegen.h" /* CG_INDIRECT_TRAP: the prologue's report */

/* The kernel player for prog_inc (one u32 buffer, workgroup 64) with the
 * indirect prologue: a launch with the `indirect` parameter (the 4th)
 * reads the counts when it runs, as the kernel does; past the launched
 * grid it fills the trap words as the prologue does; else only the
 * workgroups below the count add 1.  Without it: every element. */
static uint32_t seen[64][3];
static unsigned seen_n;

static void play_indirect(const fakecuda_launch *l, void *user) {
  (void)user;
  uint32_t *buf = (uint32_t *)(uintptr_t)l->params[0];
  uint32_t n = l->counts[0], run = n;
  if (l->nparams == 4) {
    const uint32_t *c = (const uint32_t *)(uintptr_t)l->params[3];
    if (seen_n < 64) memcpy(seen[seen_n++], c, 12);
    for (uint32_t k = 0; k < 3; k++)
      if (c[k] > l->grid[k]) {
        uint32_t *w = (uint32_t *)(uintptr_t)l->params[2]; /* 1 buffer: trap words 2, 3 */
        w[2] = c[k];
        w[3] = CG_INDIRECT_TRAP + k;
        return;
      }
    uint64_t wgs = (uint64_t)c[0] * c[1] * c[2];
    run = wgs * 64u < n ? (uint32_t)(wgs * 64u) : n;
  }
  for (uint32_t i = 0; i < run; i++) buf[i] += 1;
}

/* The counts x y z at byte 4 of a 16-byte resident buffer. */
static void set_counts(vyre_backend *b, vyre_resident cnt, uint32_t x, uint32_t y, uint32_t z) {
  uint32_t w[4] = {0xdead, x, y, z};
  vyre_error err = VYRE_ERROR_INIT;
  ck_assert_int_eq(b->vt->resident_upload(b, cnt, w, sizeof w, &err), VYRE_OK);
}

static vyre_indirect ind_of(vyre_resident cnt, uint64_t offset) {
  vyre_indirect ind;
  memset(&ind, 0, sizeof ind);
  ind.head.struct_size = sizeof ind;
  ind.head.type = VYRE_EXT_INDIRECT;
  ind.buffer = cnt;
  ind.offset = offset;
  return ind;
}

static vyre_dispatch_options opts_of(vyre_indirect *ind) {
  vyre_dispatch_options o;
  memset(&o, 0, sizeof o);
  o.struct_size = sizeof o;
  o.next = &ind->head;
  return o;
}

START_TEST(test_indirect_offered) {
  ck_assert_msg(reg->capabilities & VYRE_CAP_INDIRECT_DISPATCH,
                "the CUDA backend offers indirect_dispatch on every device");
  ck_assert_msg(strstr(reg->extensions, "vyre.indirect@1") != NULL,
                "registration->extensions lists vyre.indirect@1: '%s'", reg->extensions);
  vyre_backend *b = mk();
  const void *t = NULL;
  vyre_error err = VYRE_ERROR_INIT;
  ck_assert_int_eq(b->vt->get_extension(b, VYRE_INDIRECT_NAME, 1, &t, &err), VYRE_OK);
  const vyre_extension_head *h = t;
  ck_assert_msg(h && h->version == 1 && h->struct_size == sizeof *h, "a bare head, version 1");
  ck_assert_int_eq(b->vt->get_extension(b, VYRE_INDIRECT_NAME, 2, &t, &err), VYRE_UNSUPPORTED);
  ck_assert_msg(strstr(err.message, "Fix:"), "the refusal has a Fix: %s", err.message);
  b->vt->destroy(b);
}
END_TEST

START_TEST(test_indirect_resident) {
  vyre_backend *b = mk();
  fk.set_hook(play_indirect, NULL);
  seen_n = 0;
  prog p = prog_inc(64);
  vyre_program_ref r = ref_of(&p);
  vyre_error err = VYRE_ERROR_INIT;
  vyre_resident a = 0, cnt = 0;
  ck_assert_int_eq(b->vt->resident_alloc(b, 1024, &a, &err), VYRE_OK); /* 256 u32: bound 4 x 1 x 1 */
  ck_assert_int_eq(b->vt->resident_alloc(b, 16, &cnt, &err), VYRE_OK);
  uint32_t zero[256] = {0}, back[256];
  ck_assert_int_eq(b->vt->resident_upload(b, a, zero, sizeof zero, &err), VYRE_OK);
  vyre_indirect ind = ind_of(cnt, 4);
  vyre_dispatch_options o = opts_of(&ind);

  /* A partial count: 2 of the 4 workgroups run; the launch is the bound. */
  set_counts(b, cnt, 2, 1, 1);
  ck_assert_int_eq(b->vt->dispatch_resident(b, &r, &a, 1, &o, NULL, &err), VYRE_OK);
  fakecuda_launch l;
  fk.launch_get(fk.launch_count() - 1, &l);
  ck_assert_msg(l.nparams == 4, "the indirect kernel has the `indirect` parameter (%u params)",
                l.nparams);
  ck_assert_msg(l.grid[0] == 4 && l.grid[1] == 1 && l.grid[2] == 1,
                "the launch is sized for the bound (the logical grid), got %u x %u x %u",
                l.grid[0], l.grid[1], l.grid[2]);
  const vyre_cuda_interop *x = interop_of(b);
  uint64_t cp = 0;
  ck_assert_int_eq(x->resident_pointer(b, cnt, &cp, NULL, &err), VYRE_OK);
  ck_assert_msg(l.params[3] == (unsigned long long)cp + 4, "the parameter is buffer + offset");
  ck_assert_int_eq(b->vt->resident_download(b, a, back, sizeof back, &err), VYRE_OK);
  ck_assert_msg(back[127] == 1 && back[128] == 0, "workgroups 0 and 1 ran, 2 and 3 did not");

  /* 0 on an axis: nothing runs, OK. */
  set_counts(b, cnt, 4, 0, 1);
  ck_assert_int_eq(b->vt->dispatch_resident(b, &r, &a, 1, &o, NULL, &err), VYRE_OK);
  ck_assert_int_eq(b->vt->resident_download(b, a, back, sizeof back, &err), VYRE_OK);
  ck_assert_msg(back[0] == 1 && back[255] == 0, "a zero count runs nothing");
  /* Equal to the bound: everything. */
  set_counts(b, cnt, 4, 1, 1);
  ck_assert_int_eq(b->vt->dispatch_resident(b, &r, &a, 1, &o, NULL, &err), VYRE_OK);
  ck_assert_int_eq(b->vt->resident_download(b, a, back, sizeof back, &err), VYRE_OK);
  ck_assert_msg(back[0] == 2 && back[255] == 1, "the count equal to the bound runs it all");
  /* Over the bound: VYRE_LIMIT naming count and bound; nothing ran. */
  set_counts(b, cnt, 1, 3, 1);
  ck_assert_int_eq(b->vt->dispatch_resident(b, &r, &a, 1, &o, NULL, &err), VYRE_LIMIT);
  ck_assert_msg(strstr(err.message, "count 3 on axis y") && strstr(err.message, "4 x 1 x 1") &&
                    strstr(err.message, "Fix:"),
                "the message names the count, the axis and the bound: %s", err.message);
  ck_assert_int_eq(b->vt->resident_download(b, a, back, sizeof back, &err), VYRE_OK);
  ck_assert_msg(back[0] == 2, "an over-bound count runs nothing");
  ck_assert_uint_eq(metric(b, "dispatch.traps"), 0);

  /* The same program without the chain: the kernel without the parameter
   * (the flag is part of the plan key), every element. */
  ck_assert_int_eq(b->vt->dispatch_resident(b, &r, &a, 1, NULL, NULL, &err), VYRE_OK);
  fk.launch_get(fk.launch_count() - 1, &l);
  ck_assert_msg(l.nparams == 3, "no `indirect` parameter without the chain (%u)", l.nparams);
  /* A pipeline made without it serves both. */
  vyre_pipeline pipe = 0;
  ck_assert_int_eq(b->vt->pipeline_create(b, p.bytes, p.size, NULL, &pipe, &err), VYRE_OK);
  vyre_program_ref pr;
  memset(&pr, 0, sizeof pr);
  pr.struct_size = sizeof pr;
  pr.pipeline = pipe;
  set_counts(b, cnt, 1, 1, 1);
  ck_assert_int_eq(b->vt->dispatch_resident(b, &pr, &a, 1, &o, NULL, &err), VYRE_OK);
  fk.launch_get(fk.launch_count() - 1, &l);
  ck_assert_msg(l.nparams == 4, "a pipeline dispatched indirect runs the indirect variant");
  ck_assert_int_eq(b->vt->dispatch_resident(b, &pr, &a, 1, NULL, NULL, &err), VYRE_OK);
  fk.launch_get(fk.launch_count() - 1, &l);
  ck_assert_msg(l.nparams == 3, "and its own kernel without the chain");
  ck_assert_int_eq(b->vt->pipeline_release(b, pipe, &err), VYRE_OK);
  b->vt->destroy(b);
  assert_no_leaks_after_destroy("indirect resident");
  free(p.bytes);
}
END_TEST

START_TEST(test_indirect_errors) {
  vyre_backend *b = mk();
  fk.set_hook(play_indirect, NULL);
  prog p = prog_inc(64);
  vyre_program_ref r = ref_of(&p);
  vyre_error err = VYRE_ERROR_INIT;
  vyre_resident a = 0, cnt = 0;
  ck_assert_int_eq(b->vt->resident_alloc(b, 1024, &a, &err), VYRE_OK);
  ck_assert_int_eq(b->vt->resident_alloc(b, 16, &cnt, &err), VYRE_OK);
  unsigned long launches = fk.launch_count();
  /* A host dispatch has no resident buffer to read from. */
  vyre_indirect ind = ind_of(cnt, 0);
  vyre_dispatch_options o = opts_of(&ind);
  uint32_t in[64] = {0};
  vyre_input inputs[1] = {{in, sizeof in}};
  vyre_outputs *out = NULL;
  ck_assert_int_eq(b->vt->dispatch(b, &r, inputs, 1, &o, &out, NULL, &err),
                   VYRE_INVALID_ARGUMENT);
  ck_assert_msg(strstr(err.message, "vyre_indirect") && strstr(err.message, "Fix:"), "%s",
                err.message);
  vyre_pending pend = 0;
  ck_assert_int_eq(b->vt->dispatch_async(b, &r, inputs, 1, &o, &pend, &err),
                   VYRE_INVALID_ARGUMENT);
  /* Not a live handle. */
  ind = ind_of(cnt + 77, 0);
  ck_assert_int_eq(b->vt->dispatch_resident(b, &r, &a, 1, &o, NULL, &err), VYRE_INVALID_HANDLE);
  ck_assert_msg(strstr(err.message, "vyre_indirect buffer") && strstr(err.message, "Fix:"), "%s",
                err.message);
  /* Misaligned, and past the end (4 + 12 > 16 is fine, 8 + 12 is not). */
  ind = ind_of(cnt, 2);
  ck_assert_int_eq(b->vt->dispatch_resident(b, &r, &a, 1, &o, NULL, &err),
                   VYRE_INVALID_ARGUMENT);
  ind = ind_of(cnt, 8);
  ck_assert_int_eq(b->vt->dispatch_resident(b, &r, &a, 1, &o, NULL, &err),
                   VYRE_INVALID_ARGUMENT);
  ck_assert_msg(strstr(err.message, "offset 8") && strstr(err.message, "Fix:"), "%s",
                err.message);
  ind = ind_of(cnt, UINT64_MAX - 3);
  ck_assert_int_eq(b->vt->dispatch_resident(b, &r, &a, 1, &o, NULL, &err),
                   VYRE_INVALID_ARGUMENT);
  /* Two in one chain; one cut short. */
  ind = ind_of(cnt, 0);
  vyre_indirect second = ind_of(cnt, 4);
  ind.head.next = &second.head;
  ck_assert_int_eq(b->vt->dispatch_resident(b, &r, &a, 1, &o, NULL, &err),
                   VYRE_INVALID_ARGUMENT);
  ind.head.next = NULL;
  ind.head.struct_size = sizeof(vyre_ext);
  ck_assert_int_eq(b->vt->dispatch_resident(b, &r, &a, 1, &o, NULL, &err),
                   VYRE_INVALID_ARGUMENT);
  ck_assert_uint_eq(fk.launch_count(), launches);
  b->vt->destroy(b);
  free(p.bytes);
}
END_TEST

START_TEST(test_indirect_sequence_graph) {
  vyre_backend *b = mk();
  fk.set_hook(play_indirect, NULL);
  seen_n = 0;
  prog p = prog_inc(64);
  vyre_program_ref r = ref_of(&p);
  vyre_error err = VYRE_ERROR_INIT;
  vyre_resident a = 0, c = 0, cnt = 0;
  ck_assert_int_eq(b->vt->resident_alloc(b, 1024, &a, &err), VYRE_OK);
  ck_assert_int_eq(b->vt->resident_alloc(b, 1024, &c, &err), VYRE_OK);
  ck_assert_int_eq(b->vt->resident_alloc(b, 16, &cnt, &err), VYRE_OK);
  uint32_t zero[256] = {0}, back[256];
  ck_assert_int_eq(b->vt->resident_upload(b, a, zero, sizeof zero, &err), VYRE_OK);
  ck_assert_int_eq(b->vt->resident_upload(b, c, zero, sizeof zero, &err), VYRE_OK);
  vyre_indirect ind = ind_of(cnt, 4);
  vyre_dispatch_options o = opts_of(&ind);
  vyre_sequence_step steps[2];
  memset(steps, 0, sizeof steps);
  steps[0].struct_size = steps[1].struct_size = sizeof steps[0];
  steps[0].program = steps[1].program = &r;
  steps[0].buffer_count = steps[1].buffer_count = 1;
  steps[0].buffers = &a;
  steps[1].buffers = &c;
  steps[1].options = &o; /* step 1 is indirect */

  /* repeat 3: one capture; every replay reads the count. */
  set_counts(b, cnt, 1, 1, 1);
  unsigned long captures = fk.calls("cuStreamBeginCapture");
  ck_assert_int_eq(b->vt->dispatch_sequence(b, steps, 2, 3, NULL, 0, NULL, &err), VYRE_OK);
  ck_assert_uint_eq(fk.calls("cuStreamBeginCapture") - captures, 1);
  ck_assert_uint_eq(seen_n, 3);
  ck_assert_int_eq(b->vt->resident_download(b, c, back, sizeof back, &err), VYRE_OK);
  ck_assert_msg(back[63] == 3 && back[64] == 0, "3 replays of 1 workgroup");
  /* New counts, the same graph: the replays see them. */
  set_counts(b, cnt, 3, 1, 1);
  ck_assert_int_eq(b->vt->dispatch_sequence(b, steps, 2, 3, NULL, 0, NULL, &err), VYRE_OK);
  ck_assert_uint_eq(fk.calls("cuStreamBeginCapture") - captures, 1);
  ck_assert_uint_eq(metric(b, "graph.hits"), 1);
  ck_assert_uint_eq(seen_n, 6);
  ck_assert_msg(seen[5][0] == 3, "the last replay read the new count (%u)", seen[5][0]);
  fakecuda_launch l;
  fk.launch_get(fk.launch_count() - 1, &l);
  ck_assert_int_eq(l.from_graph, 1);
  ck_assert_int_eq(b->vt->resident_download(b, c, back, sizeof back, &err), VYRE_OK);
  ck_assert_msg(back[0] == 6 && back[191] == 3 && back[192] == 0, "3 more replays of 3 workgroups");
  /* Over the bound in step 1: step 0 still ran; the call names step 1. */
  set_counts(b, cnt, 9, 1, 1);
  ck_assert_int_eq(b->vt->dispatch_sequence(b, steps, 2, 1, NULL, 0, NULL, &err), VYRE_LIMIT);
  ck_assert_msg(strstr(err.message, "step 1") && strstr(err.message, "count 9 on axis x"), "%s",
                err.message);
  ck_assert_int_eq(b->vt->resident_download(b, a, back, sizeof back, &err), VYRE_OK);
  ck_assert_msg(back[0] == 7, "the other step ran (%u)", back[0]);
  ck_assert_int_eq(b->vt->resident_download(b, c, back, sizeof back, &err), VYRE_OK);
  ck_assert_msg(back[0] == 6, "the over-bound step did not");
  /* Another counts buffer is another graph; freeing one forgets its graph. */
  uint64_t entries = metric(b, "graph.entries");
  ck_assert_int_eq(b->vt->resident_free(b, cnt, &err), VYRE_OK);
  ck_assert_uint_eq(metric(b, "graph.entries"), entries - 1);
  ck_assert_int_eq(b->vt->dispatch_sequence(b, steps, 2, 2, NULL, 0, NULL, &err),
                   VYRE_INVALID_HANDLE);
  b->vt->destroy(b);
  assert_no_leaks_after_destroy("indirect sequences");
  free(p.bytes);
}
END_TEST

void fake_indirect_tests(TCase *tc) {
  tcase_add_test(tc, test_indirect_offered);
  tcase_add_test(tc, test_indirect_resident);
  tcase_add_test(tc, test_indirect_errors);
  tcase_add_test(tc, test_indirect_sequence_graph);
}
