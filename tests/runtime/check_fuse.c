/* check_fuse.c -- the fused program (plugin/runtime/fuse.c) means what its steps mean: the fusable runs of random sequences, run fused (one dispatch) and step by step on the reference backend, agree bit for bit; and what fuse.c refuses. */
#include <check.h>
#include <stdlib.h>
#include <string.h>

#include "host-stub/fuzz/fuzz.h"
#include "plugin/codegen/codegen.h"
#include "plugin/runtime/fuse.h"
#include "refhost.h"
#include "vyre/vyre_host.h"

/* One sequence's steps, decoded, with what fusion looks at. */
typedef struct steps {
  const fz_seq *q;
  vyre_program *p[FZ_SEQ_MAX_STEPS];
  int ew[FZ_SEQ_MAX_STEPS];         /* codegen takes the elementwise path */
  uint64_t count[FZ_SEQ_MAX_STEPS]; /* element count: its longest stored buffer */
} steps;

static cg_options cg_of(const vyre_program *p) {
  cg_options o;
  memset(&o, 0, sizeof o);
  o.sm_major = 9;
  memcpy(o.workgroup, p->header.workgroup_size, sizeof o.workgroup);
  return o;
}

static void decode_all(steps *S, const fz_seq *q) {
  memset(S, 0, sizeof *S);
  S->q = q;
  for (uint32_t s = 0; s < q->nstep; s++) {
    vyre_error err = VYRE_ERROR_INIT;
    ck_assert_msg(vyre_program_decode(q->prog[s], q->size[s], &S->p[s], &err) == VYRE_OK, "%s",
                  err.message);
    cg_options o = cg_of(S->p[s]);
    S->ew[s] = cg_elementwise_query(S->p[s], &o);
    for (uint32_t k = 0; k < S->p[s]->buffer_count; k++) {
      uint32_t pool = q->bind[s][S->p[s]->buffers[k].kernel_index];
      uint64_t n = q->bytes[pool] / vyre_type_size(q->type[pool]);
      if (S->p[s]->buffers[k].is_output && n > S->count[s]) S->count[s] = n;
    }
  }
}

static void free_all(steps *S) {
  for (uint32_t s = 0; s < FZ_SEQ_MAX_STEPS; s++) vyre_program_free(S->p[s]);
}

/* The fused program of steps [a, e), when it builds and takes the
 * elementwise path; its slots' pool buffers into pool[]. */
static int build(const steps *S, uint32_t a, uint32_t e, void **bytes, size_t *size,
                 uint32_t *pool, uint32_t *slots) {
  uint32_t map[FZ_SEQ_MAX_STEPS][FZ_SEQ_MAX_BIND];
  vc_fuse_step fs[FZ_SEQ_MAX_STEPS];
  *slots = 0;
  for (uint32_t s = a; s < e; s++) {
    for (uint32_t k = 0; k < S->q->nbind[s]; k++) {
      uint32_t b = S->q->bind[s][k], x = 0;
      while (x < *slots && pool[x] != b) x++;
      if (x == *slots) pool[(*slots)++] = b;
      map[s][k] = x;
    }
    fs[s - a].program = S->p[s];
    fs[s - a].slot = map[s];
  }
  if (vc_fuse_build(fs, e - a, *slots, S->p[a]->header.workgroup_size, bytes, size, NULL) !=
      VYRE_OK)
    return 0;
  vyre_program *f = NULL;
  vyre_error err = VYRE_ERROR_INIT;
  ck_assert_msg(vyre_program_decode(*bytes, *size, &f, &err) == VYRE_OK,
                "a fused program validates: %s", err.message);
  cg_options o = cg_of(f);
  int ok = cg_elementwise_query(f, &o);
  vyre_program_free(f);
  if (!ok) {
    free(*bytes);
    *bytes = NULL;
  }
  return ok;
}

/* Upload the pool to fresh buffers; h[] receives them. */
static void pool_up(const fz_seq *q, vyre_resident *h) {
  vyre_error err = VYRE_ERROR_INIT;
  for (uint32_t k = 0; k < q->nbuf; k++) {
    ck_assert_int_eq(ref->vt->resident_alloc(ref, q->bytes[k], &h[k], &err), VYRE_OK);
    ck_assert_int_eq(ref->vt->resident_upload(ref, h[k], q->init[k], q->bytes[k], &err), VYRE_OK);
  }
}

/* Download and free the pool; the bytes, concatenated, into out. */
static void pool_down(const fz_seq *q, vyre_resident *h, uint8_t *out) {
  vyre_error err = VYRE_ERROR_INIT;
  for (uint32_t k = 0; k < q->nbuf; k++) {
    ck_assert_int_eq(ref->vt->resident_download(ref, h[k], out, q->bytes[k], &err), VYRE_OK);
    out += q->bytes[k];
    ref->vt->resident_free(ref, h[k], NULL);
  }
}

/* Steps [a, e) one by one, and the fused program once: the same bytes. */
static void compare(const steps *S, uint32_t a, uint32_t e, const void *bytes, size_t size,
                    const uint32_t *pool, uint32_t slots, uint64_t index) {
  const fz_seq *q = S->q;
  uint64_t total = 0;
  for (uint32_t k = 0; k < q->nbuf; k++) total += q->bytes[k];
  uint8_t *want = malloc(total + 1), *got = malloc(total + 1);
  ck_assert(want && got);
  vyre_resident h[FZ_SEQ_MAX_BUFS], bound[FZ_SEQ_MAX_STEPS][FZ_SEQ_MAX_BIND], fh[VYRE_MAX_BUFFERS];
  vyre_program_ref r[FZ_SEQ_MAX_STEPS];
  vyre_sequence_step st[FZ_SEQ_MAX_STEPS];
  vyre_error err = VYRE_ERROR_INIT;
  pool_up(q, h);
  for (uint32_t s = a; s < e; s++) {
    vyre_program_ref one = VYRE_PROGRAM_BYTES(q->prog[s], q->size[s]);
    r[s] = one;
    for (uint32_t k = 0; k < q->nbind[s]; k++) bound[s][k] = h[q->bind[s][k]];
    vyre_sequence_step step = {sizeof step, q->nbind[s], &r[s], bound[s], NULL};
    st[s - a] = step;
  }
  ck_assert_msg(ref->vt->dispatch_sequence(ref, st, e - a, 1, NULL, 0, NULL, &err) == VYRE_OK,
                "sequence %llu steps %u..%u: %s", (unsigned long long)index, a, e - 1, err.message);
  pool_down(q, h, want);
  pool_up(q, h);
  for (uint32_t x = 0; x < slots; x++) fh[x] = h[pool[x]];
  vyre_program_ref fr = VYRE_PROGRAM_BYTES(bytes, size);
  ck_assert_msg(ref->vt->dispatch_resident(ref, &fr, fh, slots, NULL, NULL, &err) == VYRE_OK,
                "fused sequence %llu steps %u..%u: %s", (unsigned long long)index, a, e - 1,
                err.message);
  pool_down(q, h, got);
  ck_assert_msg(memcmp(want, got, total) == 0,
                "sequence %llu (seed 11), steps %u..%u: the fused program and the steps one by "
                "one disagree on the reference",
                (unsigned long long)index, a, e - 1);
  free(want);
  free(got);
}

/* The runs the fuser would try: consecutive elementwise steps of one
 * workgroup and element count; each one's longest fusable prefix. */
static uint32_t check_sequence(uint64_t index) {
  fz_seq q;
  vyre_error err = VYRE_ERROR_INIT;
  ck_assert_msg(fz_seq_generate(11, index, &q, &err) == VYRE_OK, "%s", err.message);
  steps S;
  decode_all(&S, &q);
  uint32_t fused = 0;
  for (uint32_t a = 0; a < q.nstep;) {
    uint32_t b = a + 1;
    while (S.ew[a] && b < q.nstep && S.ew[b] && S.count[b] == S.count[a] &&
           S.p[b]->header.workgroup_size[0] == S.p[a]->header.workgroup_size[0])
      b++;
    uint32_t e = b;
    for (; e >= a + 2; e--) {
      void *bytes = NULL;
      size_t size = 0;
      uint32_t pool[VYRE_MAX_BUFFERS], slots;
      if (!build(&S, a, e, &bytes, &size, pool, &slots)) continue;
      compare(&S, a, e, bytes, size, pool, slots, index);
      free(bytes);
      fused += e - a;
      break;
    }
    a = e >= a + 2 ? e : a + 1;
  }
  free_all(&S);
  fz_seq_free(&q);
  return fused;
}

START_TEST(test_fused_means_the_steps) {
  uint32_t fused = 0;
  for (uint64_t i = 0; i < 150; i++) fused += check_sequence(i);
  ck_assert_msg(fused >= 150, "the random sequences have fusable runs (%u steps fused)", fused);
}
END_TEST

/* A step with `return` outside an early exit, and two steps that view
 * one slot with different element types: not one body. */
START_TEST(test_refused) {
  vyre_builder *b = vyre_builder_new(64, 1, 1);
  uint32_t x = vyre_b_buffer(b, "x", UINT32_MAX, VYRE_ACCESS_READ_WRITE, VYRE_T_U32, 0, 0);
  uint32_t g = vyre_b_gid(b, 0);
  vyre_b_store(b, x, g, g);
  vyre_b_if(b, vyre_b_bin(b, VYRE_OP_EQ, g, vyre_b_u32(b, 3)));
  vyre_b_return(b);
  vyre_b_end(b);
  vyre_b_store(b, x, g, vyre_b_u32(b, 1));
  void *bytes[2];
  size_t size[2];
  vyre_error err = VYRE_ERROR_INIT;
  ck_assert_int_eq(vyre_builder_finish(b, &bytes[0], &size[0], &err), VYRE_OK);
  vyre_builder_free(b);
  b = vyre_builder_new(64, 1, 1);
  x = vyre_b_buffer(b, "x", UINT32_MAX, VYRE_ACCESS_READ_WRITE, VYRE_T_F32, 0, 0);
  g = vyre_b_gid(b, 0);
  vyre_b_store(b, x, g, vyre_b_f32(b, 1.0f));
  ck_assert_int_eq(vyre_builder_finish(b, &bytes[1], &size[1], &err), VYRE_OK);
  vyre_builder_free(b);
  vyre_program *p[2];
  for (int k = 0; k < 2; k++)
    ck_assert_int_eq(vyre_program_decode(bytes[k], size[k], &p[k], &err), VYRE_OK);
  const uint32_t slot0 = 0, wg[3] = {64, 1, 1};
  vc_fuse_step fs[2] = {{p[0], &slot0}, {p[0], &slot0}};
  void *out = NULL;
  size_t n = 0;
  ck_assert_int_eq(vc_fuse_build(fs, 2, 1, wg, &out, &n, &err), VYRE_UNSUPPORTED);
  ck_assert_msg(strstr(err.message, "early exit") != NULL, "the return is named: %s", err.message);
  fs[0].program = p[1];
  fs[1].program = p[1];
  ck_assert_int_eq(vc_fuse_build(fs, 2, 1, wg, &out, &n, &err), VYRE_OK);
  free(out);
  fs[1].program = p[0];
  ck_assert_int_eq(vc_fuse_build(fs, 2, 1, wg, &out, &n, &err), VYRE_UNSUPPORTED);
  ck_assert_ptr_null(out);
  for (int k = 0; k < 2; k++) {
    vyre_program_free(p[k]);
    free(bytes[k]);
  }
}
END_TEST

int main(void) {
  Suite *s = suite_create("fuse");
  TCase *tc = tcase_create("core");
  tcase_add_checked_fixture(tc, refhost_setup, refhost_teardown);
  tcase_set_timeout(tc, 300);
  tcase_add_test(tc, test_fused_means_the_steps);
  tcase_add_test(tc, test_refused);
  suite_add_tcase(s, tc);
  SRunner *sr = srunner_create(s);
  srunner_run_all(sr, CK_NORMAL);
  int failed = srunner_ntests_failed(sr);
  srunner_free(sr);
  return failed ? 1 : 0;
}
