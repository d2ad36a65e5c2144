/* fusion.c -- fused sequences on the fake driver: consecutive elementwise steps over one index space launch one kernel; cross-index reads, atomics, other sizes and VYRE_CUDA_FUSE=0 launch one per step. */
#include "harness.h"

static prog fin(vyre_builder *b) {
  prog p = {NULL, 0};
  vyre_error err = VYRE_ERROR_INIT;
  ck_assert_msg(vyre_builder_finish(b, &p.bytes, &p.size, &err) == VYRE_OK, "%s", err.message);
  vyre_builder_free(b);
  return p;
}

/* buf[gid] += k, behind the early exit `if (gid >= buflen(buf)) return`. */
static prog prog_add_guarded(uint32_t k) {
  vyre_builder *b = vyre_builder_new(64, 1, 1);
  uint32_t buf = vyre_b_buffer(b, "buf", UINT32_MAX, VYRE_ACCESS_READ_WRITE, VYRE_T_U32, 0, 0);
  uint32_t g = vyre_b_gid(b, 0);
  vyre_b_if(b, vyre_b_bin(b, VYRE_OP_GE, g, vyre_b_buflen(b, buf)));
  vyre_b_return(b);
  vyre_b_end(b);
  vyre_b_store(b, buf, g, vyre_b_bin(b, VYRE_OP_ADD, vyre_b_load(b, buf, g), vyre_b_u32(b, k)));
  return fin(b);
}

/* out[gid] = in[0] + gid: a broadcast read, elementwise on its own. */
static prog prog_broadcast(void) {
  vyre_builder *b = vyre_builder_new(64, 1, 1);
  uint32_t in = vyre_b_buffer(b, "in", UINT32_MAX, VYRE_ACCESS_READ_ONLY, VYRE_T_U32, 0, 0);
  uint32_t out = vyre_b_buffer(b, "out", UINT32_MAX, VYRE_ACCESS_READ_WRITE, VYRE_T_U32, 0, 0);
  uint32_t g = vyre_b_gid(b, 0);
  vyre_b_store(b, out, g, vyre_b_bin(b, VYRE_OP_ADD, vyre_b_load(b, in, vyre_b_u32(b, 0)), g));
  return fin(b);
}

/* out[gid] = in[gid + 1]: a read at another index. */
static prog prog_shift(void) {
  vyre_builder *b = vyre_builder_new(64, 1, 1);
  uint32_t in = vyre_b_buffer(b, "in", UINT32_MAX, VYRE_ACCESS_READ_ONLY, VYRE_T_U32, 0, 0);
  uint32_t out = vyre_b_buffer(b, "out", UINT32_MAX, VYRE_ACCESS_READ_WRITE, VYRE_T_U32, 0, 0);
  uint32_t g = vyre_b_gid(b, 0);
  uint32_t v = vyre_b_load(b, in, vyre_b_bin(b, VYRE_OP_ADD, g, vyre_b_u32(b, 1)));
  vyre_b_store(b, out, g, v);
  return fin(b);
}

/* atomic_add(buf[gid], 1). */
static prog prog_atomic(void) {
  vyre_builder *b = vyre_builder_new(64, 1, 1);
  uint32_t buf = vyre_b_buffer(b, "buf", UINT32_MAX, VYRE_ACCESS_READ_WRITE, VYRE_T_U32, 0, 0);
  uint32_t g = vyre_b_gid(b, 0);
  vyre_b_atomic(b, VYRE_OP_ATOMIC_ADD, buf, g, vyre_b_u32(b, 1), VYRE_ORDER_RELAXED);
  return fin(b);
}

typedef struct fuse_case {
  vyre_backend *b;
  prog p[2];
  vyre_program_ref r[2];
  vyre_resident h[3];
  vyre_sequence_step s[4];
} fuse_case;

/* An instance, programs p0 and p1, three resident buffers of bytes[k]. */
static void fc_open(fuse_case *c, prog p0, prog p1, const uint64_t bytes[3]) {
  vyre_error err = VYRE_ERROR_INIT;
  memset(c->s, 0, sizeof c->s);
  c->b = mk();
  c->p[0] = p0;
  c->p[1] = p1;
  for (int k = 0; k < 2; k++) c->r[k] = ref_of(&c->p[k]);
  for (int k = 0; k < 3; k++)
    ck_assert_int_eq(c->b->vt->resident_alloc(c->b, bytes[k], &c->h[k], &err), VYRE_OK);
}

static void fc_step(fuse_case *c, int i, int prog_index, const vyre_resident *buffers,
                    uint32_t count) {
  c->s[i].struct_size = sizeof c->s[i];
  c->s[i].program = &c->r[prog_index];
  c->s[i].buffers = buffers;
  c->s[i].buffer_count = count;
}

/* Run the first n steps `repeat` times; the kernels launched (replays
 * included). */
static unsigned long fc_run(fuse_case *c, uint32_t n, uint32_t repeat) {
  vyre_error err = VYRE_ERROR_INIT;
  unsigned long before = fk.launch_count();
  ck_assert_msg(c->b->vt->dispatch_sequence(c->b, c->s, n, repeat, NULL, 0, NULL, &err) ==
                    VYRE_OK,
                "%s", err.message);
  return fk.launch_count() - before;
}

static void fc_close(fuse_case *c, const char *what) {
  c->b->vt->destroy(c->b);
  assert_no_leaks_after_destroy(what);
  free(c->p[0].bytes);
  free(c->p[1].bytes);
}

START_TEST(test_fuse_one_kernel) {
  fuse_case c;
  const uint64_t bytes[3] = {4096, 4096, 4096};
  fc_open(&c, prog_inc(64), prog_add_guarded(5), bytes);
  /* inc(a), add5(a), inc(b), add5(a): one index space, one kernel. */
  fc_step(&c, 0, 0, &c.h[0], 1);
  fc_step(&c, 1, 1, &c.h[0], 1);
  fc_step(&c, 2, 0, &c.h[1], 1);
  fc_step(&c, 3, 1, &c.h[0], 1);
  ck_assert_uint_eq(fc_run(&c, 4, 1), 1);
  ck_assert_uint_eq(metric(c.b, "fuse.enabled"), 1);
  ck_assert_uint_eq(metric(c.b, "fuse.compiles"), 1);
  ck_assert_uint_eq(metric(c.b, "fuse.steps"), 4);
  ck_assert_uint_eq(metric(c.b, "fuse.launches_saved"), 3);
  ck_assert_uint_eq(metric(c.b, "dispatch.launches"), 1);
  fakecuda_launch l;
  ck_assert_int_eq(fk.launch_get(fk.launch_count() - 1, &l), 0);
  ck_assert_msg(l.nparams == 4,
                "the fused kernel binds the two buffers once each (then the counts and the "
                "params block), got %u parameters",
                l.nparams);
  /* The same list again: the fused plan comes from the cache, compiled once. */
  ck_assert_uint_eq(fc_run(&c, 4, 1), 1);
  ck_assert_uint_eq(metric(c.b, "fuse.compiles"), 1);
  ck_assert_uint_eq(metric(c.b, "fuse.hits"), 1);
  /* Repeated: the graph holds the one fused kernel, replayed 10 times. */
  unsigned long captures = fk.calls("cuStreamBeginCapture");
  ck_assert_uint_eq(fc_run(&c, 4, 10), 10);
  ck_assert_uint_eq(fc_run(&c, 4, 10), 10);
  ck_assert_uint_eq(fk.calls("cuStreamBeginCapture") - captures, 1);
  ck_assert_uint_eq(metric(c.b, "graph.hits"), 1);
  ck_assert_uint_eq(metric(c.b, "dispatch.launches"), 22);
  /* Through pipelines the graph is found by the step list as passed (the
   * fast path): its one fused kernel is replayed, nothing is fused again. */
  vyre_error err = VYRE_ERROR_INIT;
  vyre_pipeline pl[2];
  for (int k = 0; k < 2; k++) {
    ck_assert_int_eq(c.b->vt->pipeline_create(c.b, c.p[k].bytes, c.p[k].size, NULL, &pl[k], &err),
                     VYRE_OK);
    c.r[k] = (vyre_program_ref)VYRE_PROGRAM_PIPELINE(pl[k]);
  }
  ck_assert_uint_eq(fc_run(&c, 4, 10), 10);
  uint64_t steps = metric(c.b, "fuse.steps");
  ck_assert_uint_eq(fc_run(&c, 4, 10), 10);
  ck_assert_uint_eq(metric(c.b, "graph.fast_hits"), 1);
  ck_assert_uint_eq(metric(c.b, "fuse.steps"), steps);
  ck_assert_uint_eq(metric(c.b, "dispatch.launches"), 42);
  fc_close(&c, "fused sequence");
}
END_TEST

START_TEST(test_fuse_off) {
  setenv("VYRE_CUDA_FUSE", "0", 1);
  fuse_case c;
  const uint64_t bytes[3] = {4096, 4096, 4096};
  fc_open(&c, prog_inc(64), prog_add_guarded(5), bytes);
  fc_step(&c, 0, 0, &c.h[0], 1);
  fc_step(&c, 1, 1, &c.h[0], 1);
  fc_step(&c, 2, 0, &c.h[1], 1);
  ck_assert_uint_eq(fc_run(&c, 3, 1), 3);
  ck_assert_uint_eq(fc_run(&c, 3, 4), 12);
  ck_assert_uint_eq(metric(c.b, "fuse.enabled"), 0);
  ck_assert_uint_eq(metric(c.b, "fuse.steps"), 0);
  fc_close(&c, "fusion off");
  unsetenv("VYRE_CUDA_FUSE");
}
END_TEST

START_TEST(test_fuse_refused) {
  fuse_case c;
  /* a and b: 1024 words; c: 2048. */
  const uint64_t bytes[3] = {4096, 4096, 8192};
  fc_open(&c, prog_inc(64), prog_broadcast(), bytes);
  vyre_resident ab[2] = {c.h[0], c.h[1]}, ba[2] = {c.h[1], c.h[0]};
  /* Other sizes: inc(a), inc(c). */
  fc_step(&c, 0, 0, &c.h[0], 1);
  fc_step(&c, 1, 0, &c.h[2], 1);
  ck_assert_uint_eq(fc_run(&c, 2, 1), 2);
  /* A broadcast read of what an earlier step wrote: inc(a), b = a[0] + gid.
   * Each step is elementwise, the fused body is not (codegen's analysis). */
  fc_step(&c, 1, 1, ab, 2);
  ck_assert_uint_eq(fc_run(&c, 2, 1), 2);
  ck_assert_uint_eq(metric(c.b, "fuse.refused"), 1);
  /* The same read before anything writes a: fused. */
  fc_step(&c, 0, 1, ab, 2);
  fc_step(&c, 1, 0, &c.h[1], 1);
  ck_assert_uint_eq(fc_run(&c, 2, 1), 1);
  /* ... but not once b's writer feeds it back: a = b[0] + gid. */
  fc_step(&c, 2, 1, ba, 2);
  ck_assert_uint_eq(fc_run(&c, 3, 1), 2);
  ck_assert_uint_eq(metric(c.b, "fuse.steps"), 2 + 2);
  fc_close(&c, "refused fusion");
}
END_TEST

START_TEST(test_fuse_not_elementwise) {
  fuse_case c;
  const uint64_t bytes[3] = {4096, 4096, 4096};
  fc_open(&c, prog_shift(), prog_atomic(), bytes);
  vyre_resident ab[2] = {c.h[0], c.h[1]};
  /* A read at gid + 1, then atomics, then the read again: one each. */
  fc_step(&c, 0, 0, ab, 2);
  fc_step(&c, 1, 1, &c.h[0], 1);
  fc_step(&c, 2, 0, ab, 2);
  ck_assert_uint_eq(fc_run(&c, 3, 1), 3);
  ck_assert_uint_eq(metric(c.b, "fuse.steps"), 0);
  ck_assert_uint_eq(metric(c.b, "fuse.compiles") + metric(c.b, "fuse.refused"), 0);
  /* The same buffer twice in one step is never fused either. */
  prog inc = prog_inc(64);
  free(c.p[1].bytes);
  c.p[1] = inc;
  c.r[1] = ref_of(&c.p[1]);
  vyre_resident aa[2] = {c.h[0], c.h[0]};
  fc_step(&c, 0, 0, aa, 2);
  fc_step(&c, 1, 1, &c.h[0], 1);
  ck_assert_uint_eq(fc_run(&c, 2, 1), 2);
  fc_close(&c, "no fusion");
}
END_TEST

void fake_fusion_tests(TCase *tc) {
  tcase_add_test(tc, test_fuse_one_kernel);
  tcase_add_test(tc, test_fuse_off);
  tcase_add_test(tc, test_fuse_refused);
  tcase_add_test(tc, test_fuse_not_elementwise);
}
