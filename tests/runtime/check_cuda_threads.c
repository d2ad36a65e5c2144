/* check_cuda_threads.c -- 16 threads share one CUDA instance on the fake driver: sync, async, resident, sequence, graph replay and staging-ring dispatches mixed, every output checked. */
#include <check.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fakeharness.h"
#include "vyre/vyre.h"
#include "vyre/vyre_support.h"

#define THREADS 16
#define SMALL 256u  /* words: the pinned pool */
#define BIG 2048u   /* words: 8 KiB, four staging chunks: the ring */
#define CHUNK 2048u /* VYRE_CUDA_STAGING_CHUNK */
#define K_SMALL 3u
#define K_BIG 5u
#define KINDS 6

static vyre_backend *inst;
static fh_prog p_small, p_big, p_inc;
static vyre_pipeline inc_pl;
static const unsigned rounds = 300;

typedef struct job {
  uint32_t id;
  unsigned done[KINDS];
  char failure[2600];
} job;

#define FAIL(j, ...)                                            \
  do {                                                          \
    snprintf((j)->failure, sizeof (j)->failure, __VA_ARGS__);   \
    return -1;                                                  \
  } while (0)

static int check_words(job *j, const char *what, unsigned round, const uint32_t *got,
                       const uint32_t *want, uint32_t n) {
  for (uint32_t i = 0; i < n; i++)
    if (got[i] != want[i])
      FAIL(j, "thread %u round %u, %s: word %u is %u, expected %u", j->id, round, what, i, got[i],
           want[i]);
  return 0;
}

static int check_scaled(job *j, const char *what, unsigned round, const vyre_outputs *o,
                        const uint32_t *in, uint32_t n, uint32_t k) {
  if (!o || o->count != 1 || o->items[0].size != (uint64_t)n * 4u)
    FAIL(j, "thread %u round %u, %s: the outputs have the wrong shape", j->id, round, what);
  const uint32_t *got = o->items[0].data;
  for (uint32_t i = 0; i < n; i++)
    if (got[i] != in[i] * k)
      FAIL(j, "thread %u round %u, %s: word %u is %u, expected %u", j->id, round, what, i,
           got[i], in[i] * k);
  return 0;
}

/* One round of kind `kind`; 0, or -1 with j->failure set. */
static int one(job *j, unsigned round, unsigned kind, vyre_resident own, uint32_t *own_words) {
  vyre_backend *b = inst;
  vyre_error e = VYRE_ERROR_INIT;
  uint32_t in[BIG], back[BIG], want[BIG];
  uint32_t seed = j->id * 1000003u + round * 7919u;
  for (uint32_t i = 0; i < BIG; i++) in[i] = seed + i * 13u;
  vyre_program_ref rs = fh_ref(&p_small), rb = fh_ref(&p_big), ri = fh_ref(&p_inc);
  vyre_program_ref rp = VYRE_PROGRAM_PIPELINE(inc_pl);
  vyre_input small_in[1] = {{in, SMALL * 4u}}, big_in[1] = {{in, BIG * 4u}};
  vyre_outputs *out = NULL;
  vyre_status st;
  int bad = 0;
  switch (kind) {
  case 0: { /* sync, timed */
    vyre_timing t = {.struct_size = sizeof t};
    st = b->vt->dispatch(b, &rs, small_in, 1, NULL, &out, &t, &e);
    if (st != VYRE_OK) FAIL(j, "thread %u round %u, dispatch: %s", j->id, round, e.message);
    bad = check_scaled(j, "dispatch", round, out, in, SMALL, K_SMALL);
    b->vt->outputs_free(b, out);
    break;
  }
  case 1: { /* async: the input overwritten at once, polled, waited; every fourth released */
    vyre_pending h = 0;
    uint32_t copy[SMALL];
    memcpy(copy, in, sizeof copy);
    st = b->vt->dispatch_async(b, &rs, small_in, 1, NULL, &h, &e);
    if (st != VYRE_OK) FAIL(j, "thread %u round %u, dispatch_async: %s", j->id, round, e.message);
    memset(in, 0xEE, SMALL * 4u);
    if (round % 4 == 3) {
      st = b->vt->pending_release(b, h, &e);
      if (st != VYRE_OK) FAIL(j, "thread %u round %u, release: %s", j->id, round, e.message);
      break;
    }
    int ready = 0;
    st = b->vt->pending_poll(b, h, &ready, &e);
    if (st != VYRE_OK) {
      b->vt->pending_release(b, h, NULL);
      FAIL(j, "thread %u round %u, poll: %s", j->id, round, e.message);
    }
    st = b->vt->pending_wait(b, h, &out, NULL, &e);
    if (st != VYRE_OK) FAIL(j, "thread %u round %u, wait: %s", j->id, round, e.message);
    bad = check_scaled(j, "dispatch_async", round, out, copy, SMALL, K_SMALL);
    b->vt->outputs_free(b, out);
    break;
  }
  case 2: { /* resident: a buffer of its own for the round, dispatched by bytes */
    vyre_resident r = 0;
    st = b->vt->resident_alloc(b, SMALL * 4u, &r, &e);
    if (st == VYRE_OK) st = b->vt->resident_upload(b, r, in, SMALL * 4u, &e);
    if (st == VYRE_OK) st = b->vt->dispatch_resident(b, &ri, &r, 1, NULL, NULL, &e);
    if (st == VYRE_OK) st = b->vt->resident_download(b, r, back, SMALL * 4u, &e);
    vyre_status fst = r ? b->vt->resident_free(b, r, NULL) : VYRE_OK;
    if (st != VYRE_OK || fst != VYRE_OK)
      FAIL(j, "thread %u round %u, resident: %s (free: %s)", j->id, round, e.message,
           vyre_status_name(fst));
    for (uint32_t i = 0; i < SMALL; i++) want[i] = in[i] + 1u;
    bad = check_words(j, "resident dispatch", round, back, want, SMALL);
    break;
  }
  case 3: { /* a sequence on the thread's buffer, replayed as a graph (the fast path) */
    vyre_sequence_step step = {sizeof step, 1, &rp, &own, NULL};
    vyre_resident_copy read = {own, 0, back, SMALL * 4u};
    st = b->vt->dispatch_sequence(b, &step, 1, 3, &read, 1, NULL, &e);
    if (st != VYRE_OK) FAIL(j, "thread %u round %u, sequence: %s", j->id, round, e.message);
    for (uint32_t i = 0; i < SMALL; i++) own_words[i] += 3u;
    bad = check_words(j, "sequence x3 (graph)", round, back, own_words, SMALL);
    break;
  }
  case 4: { /* a sequence of bytes, two steps, ranged read */
    vyre_sequence_step steps[2] = {{sizeof steps[0], 1, &ri, &own, NULL},
                                   {sizeof steps[1], 1, &rp, &own, NULL}};
    vyre_resident_copy read = {own, 64, back, 128};
    st = b->vt->dispatch_sequence(b, steps, 2, 2, &read, 1, NULL, &e);
    if (st != VYRE_OK) FAIL(j, "thread %u round %u, byte sequence: %s", j->id, round, e.message);
    for (uint32_t i = 0; i < SMALL; i++) own_words[i] += 4u;
    bad = check_words(j, "sequence of bytes x2", round, back, own_words + 16, 32);
    break;
  }
  default: { /* through the staging ring both ways, into the caller's slot */
    vyre_output_slot slot = {back, sizeof back, 0};
    st = b->vt->dispatch_into(b, &rb, big_in, 1, NULL, &slot, 1, NULL, &e);
    if (st != VYRE_OK) FAIL(j, "thread %u round %u, dispatch_into: %s", j->id, round, e.message);
    for (uint32_t i = 0; i < BIG; i++) want[i] = in[i] * K_BIG;
    bad = check_words(j, "dispatch_into (staging ring)", round, back, want, BIG);
    break;
  }
  }
  if (!bad) j->done[kind]++;
  return bad;
}

static void *worker(void *arg) {
  job *j = arg;
  vyre_error e = VYRE_ERROR_INIT;
  vyre_resident own = 0;
  uint32_t words[SMALL];
  for (uint32_t i = 0; i < SMALL; i++) words[i] = j->id << 16 | i;
  if (inst->vt->resident_alloc(inst, sizeof words, &own, &e) != VYRE_OK ||
      inst->vt->resident_upload(inst, own, words, sizeof words, &e) != VYRE_OK) {
    snprintf(j->failure, sizeof j->failure, "thread %u: its buffer: %s", j->id, e.message);
    return NULL;
  }
  for (unsigned round = 0; round < rounds; round++)
    if (one(j, round, (j->id + round) % KINDS, own, words) != 0) break;
  if (inst->vt->resident_free(inst, own, &e) != VYRE_OK && !j->failure[0])
    snprintf(j->failure, sizeof j->failure, "thread %u: resident_free: %s", j->id, e.message);
  return NULL;
}

START_TEST(test_threads) {
  vyre_error e = VYRE_ERROR_INIT;
  fh_reset();
  ck_assert_msg(fh_reg->create(NULL, &inst, &e) == VYRE_OK, "create: %s", e.message);
  /* Teach the player the kernels, on one thread. */
  uint32_t zero[BIG] = {0};
  vyre_input small_in[1] = {{zero, SMALL * 4u}}, big_in[1] = {{zero, BIG * 4u}};
  struct {
    fh_prog *p;
    const vyre_input *in;
    fh_kind kind;
    uint32_t k;
  } list[] = {{&p_small, small_in, FH_SCALE, K_SMALL}, {&p_big, big_in, FH_SCALE, K_BIG},
              {&p_inc, small_in, FH_INC, 0}};
  for (size_t i = 0; i < sizeof list / sizeof list[0]; i++) {
    vyre_program_ref r = fh_ref(list[i].p);
    vyre_outputs *out = NULL;
    ck_assert_msg(inst->vt->dispatch(inst, &r, list[i].in, 1, NULL, &out, NULL, &e) == VYRE_OK,
                  "learning kernel %zu: %s", i, e.message);
    fh_learn(list[i].kind, list[i].k);
    inst->vt->outputs_free(inst, out);
  }
  ck_assert_msg(inst->vt->pipeline_create(inst, p_inc.bytes, p_inc.size, NULL, &inc_pl, &e) ==
                    VYRE_OK, "pipeline_create: %s", e.message);
  {
    /* The byte sequence's two inc steps run as one fused kernel: two
     * increments (docs/cuda-runtime.md, "Fused sequences"). */
    vyre_program_ref ri = fh_ref(&p_inc), rp = VYRE_PROGRAM_PIPELINE(inc_pl);
    vyre_resident scratch = 0;
    ck_assert_int_eq(inst->vt->resident_alloc(inst, SMALL * 4u, &scratch, &e), VYRE_OK);
    vyre_sequence_step steps[2] = {{sizeof steps[0], 1, &ri, &scratch, NULL},
                                   {sizeof steps[1], 1, &rp, &scratch, NULL}};
    ck_assert_msg(inst->vt->dispatch_sequence(inst, steps, 2, 1, NULL, 0, NULL, &e) == VYRE_OK,
                  "learning the fused kernel: %s", e.message);
    fh_learn(FH_INC, 2);
    ck_assert_int_eq(inst->vt->resident_free(inst, scratch, &e), VYRE_OK);
  }
  static job jobs[THREADS];
  pthread_t tid[THREADS];
  for (uint32_t t = 0; t < THREADS; t++) {
    memset(&jobs[t], 0, sizeof jobs[t]);
    jobs[t].id = t;
    ck_assert_int_eq(pthread_create(&tid[t], NULL, worker, &jobs[t]), 0);
  }
  unsigned done[KINDS] = {0}, total = 0;
  for (uint32_t t = 0; t < THREADS; t++) pthread_join(tid[t], NULL);
  for (uint32_t t = 0; t < THREADS; t++) {
    ck_assert_msg(!jobs[t].failure[0], "%s", jobs[t].failure);
    for (unsigned k = 0; k < KINDS; k++) {
      done[k] += jobs[t].done[k];
      total += jobs[t].done[k];
    }
  }
  ck_assert_uint_eq(total, THREADS * rounds);
  ck_assert_msg(fh_metric(inst, "graph.hits") > 0, "repeated sequences replayed graphs");
  ck_assert_msg(fh_metric(inst, "staging.transfers") > 0, "big buffers took the staging ring");
  ck_assert_int_eq(inst->vt->pipeline_release(inst, inc_pl, &e), VYRE_OK);
  inst->vt->destroy(inst);
  inst = NULL;
  fakecuda_live l;
  fh.live(&l);
  ck_assert_msg(l.ctx_refs == 0 && l.reclaimed == 0, "the instance freed every driver object");
  char last[512];
  ck_assert_msg(fh.violations(last, sizeof last) == 0, "the driver was used correctly: %s", last);
  printf("check_cuda_threads: %u threads x %u mixed dispatches on one instance (%u sync, %u "
         "async, %u resident, %u graph-replayed sequences, %u byte sequences, %u through the "
         "staging ring), every output checked\n",
         THREADS, rounds, done[0], done[1], done[2], done[3], done[4], done[5]);
}
END_TEST

static void setup(void) {
  fh_env(CHUNK, 2);
  p_small = fh_prog_scale(SMALL, K_SMALL, 64);
  p_big = fh_prog_scale(BIG, K_BIG, 64);
  p_inc = fh_prog_inc(64);
}

static void teardown(void) {
  free(p_small.bytes);
  free(p_big.bytes);
  free(p_inc.bytes);
  fh_forget();
}

int main(void) {
  if (fh_load("check_cuda_threads") != 0) return 1;
  Suite *s = suite_create("cuda_threads");
  TCase *tc = tcase_create("threads");
  tcase_add_checked_fixture(tc, setup, teardown);
  tcase_set_timeout(tc, 600);
  tcase_add_test(tc, test_threads);
  suite_add_tcase(s, tc);
  SRunner *sr = srunner_create(s);
  srunner_run_all(sr, CK_NORMAL);
  int failed = srunner_ntests_failed(sr);
  srunner_free(sr);
  return failed ? 1 : 0;
}
