/* jit.c -- check_cuda_fake's jit case: the JIT optimisation level passed and keyed, the direct PTX load (no linker), JITs of several threads running at once, and where compile time went. */
#include <pthread.h>

#include "harness.h"

/* JIT_OPT_LEVEL_DEFAULT of plugin/runtime/jit.c. */
#define DEFAULT_LEVEL 4

/* pipeline_create of p on b, then its release. */
static vyre_status create_once(vyre_backend *b, const prog *p, vyre_error *err) {
  vyre_pipeline h = 0;
  vyre_status st = b->vt->pipeline_create(b, p->bytes, p->size, NULL, &h, err);
  if (st == VYRE_OK) ck_assert_int_eq(b->vt->pipeline_release(b, h, err), VYRE_OK);
  return st;
}

/* The level a fresh instance passes the JIT when VYRE_CUDA_JIT_OPT_LEVEL
 * is `value` (NULL: unset), compiling a program no earlier call saw. */
static int level_with(const char *value, uint32_t k) {
  if (value) setenv("VYRE_CUDA_JIT_OPT_LEVEL", value, 1);
  else unsetenv("VYRE_CUDA_JIT_OPT_LEVEL");
  vyre_backend *b = mk();
  prog p = prog_scale(64, k, 64);
  vyre_error err = VYRE_ERROR_INIT;
  unsigned long links = fk.calls("cuLinkCreate");
  ck_assert_msg(create_once(b, &p, &err) == VYRE_OK, "pipeline_create: %s", err.message);
  ck_assert_msg(fk.calls("cuLinkCreate") == links + 1, "a new program is linked once");
  ck_assert_msg(metric(b, "compile.jit_opt_level") == (uint64_t)fk.jit_opt_level(),
                "compile.jit_opt_level reports the level the JIT got");
  b->vt->destroy(b);
  free(p.bytes);
  return fk.jit_opt_level();
}

START_TEST(test_jit_opt_level) {
  setenv("VYRE_CUDA_DISK_CACHE", "0", 1);
  ck_assert_msg(level_with(NULL, 2) == DEFAULT_LEVEL, "by default the JIT runs at level %d",
                DEFAULT_LEVEL);
  ck_assert_msg(level_with("0", 3) == 0, "VYRE_CUDA_JIT_OPT_LEVEL=0 reaches the JIT");
  ck_assert_msg(level_with("2", 4) == 2, "VYRE_CUDA_JIT_OPT_LEVEL=2 reaches the JIT");
  ck_assert_msg(level_with("9", 5) == 4, "a level past 4 is clamped to 4");
  ck_assert_msg(level_with("fast", 6) == DEFAULT_LEVEL, "a level that is not a count is ignored");
  assert_no_leaks_after_destroy("jit levels");
}
END_TEST

/* Each level has its own cubins on disk: a cubin built at one level is
 * never loaded by an instance asking for another. */
START_TEST(test_jit_level_disk_key) {
  prog p = prog_scale(64, 7, 64);
  vyre_error err = VYRE_ERROR_INIT;
  const char *levels[3] = {NULL, "1", NULL};
  const uint64_t want_hits[3] = {0, 0, 1};
  for (int i = 0; i < 3; i++) {
    if (levels[i]) setenv("VYRE_CUDA_JIT_OPT_LEVEL", levels[i], 1);
    else unsetenv("VYRE_CUDA_JIT_OPT_LEVEL");
    vyre_backend *b = mk();
    unsigned long links = fk.calls("cuLinkCreate");
    ck_assert_msg(create_once(b, &p, &err) == VYRE_OK, "pipeline_create: %s", err.message);
    ck_assert_msg(metric(b, "cache.disk.hits") == want_hits[i],
                  "instance %d (level %s): %llu disk hits, %llu expected", i,
                  levels[i] ? levels[i] : "default",
                  (unsigned long long)metric(b, "cache.disk.hits"),
                  (unsigned long long)want_hits[i]);
    ck_assert_uint_eq(fk.calls("cuLinkCreate"), links + (want_hits[i] ? 0 : 1));
    b->vt->destroy(b);
  }
  char cubins[512];
  snprintf(cubins, sizeof cubins, "%s/cache/cuda", tmpdir);
  ck_assert_msg(count_files(cubins, ".cubin") == 2, "one cubin per level");
  free(p.bytes);
}
END_TEST

START_TEST(test_jit_direct) {
  setenv("VYRE_CUDA_DISK_CACHE", "0", 1);
  setenv("VYRE_CUDA_JIT_DIRECT", "1", 1);
  setenv("VYRE_CUDA_JIT_OPT_LEVEL", "1", 1);
  vyre_backend *b = mk();
  fk.set_hook(play, NULL);
  hook_mode = 1;
  hook_k = 5;
  const uint32_t n = 256;
  prog p = prog_scale(n, 5, 64);
  uint32_t in[256];
  for (uint32_t i = 0; i < n; i++) in[i] = i;
  vyre_outputs *out = NULL;
  vyre_error err = VYRE_ERROR_INIT;
  ck_assert_msg(run_scale(b, &p, n, in, &out, NULL, &err) == VYRE_OK, "dispatch: %s", err.message);
  const uint32_t *o = out->items[0].data;
  for (uint32_t i = 0; i < n; i++) ck_assert_uint_eq(o[i], i * 5);
  b->vt->outputs_free(b, out);
  ck_assert_msg(fk.calls("cuModuleLoadDataEx") == 1 && fk.calls("cuLinkCreate") == 0 &&
                    fk.calls("cuModuleLoadData") == 0,
                "without a disk cache the PTX is compiled and loaded by one cuModuleLoadDataEx "
                "(%lu), no linker (%lu)",
                fk.calls("cuModuleLoadDataEx"), fk.calls("cuLinkCreate"));
  ck_assert_msg(fk.jit_opt_level() == 1, "the direct load passes the level too");
  b->vt->destroy(b);
  assert_no_leaks_after_destroy("direct jit");

  /* With the disk cache on there is a cubin to keep: the linker runs. */
  unsetenv("VYRE_CUDA_DISK_CACHE");
  b = mk();
  ck_assert_msg(create_once(b, &p, &err) == VYRE_OK, "pipeline_create: %s", err.message);
  ck_assert_uint_eq(fk.calls("cuModuleLoadDataEx"), 1);
  ck_assert_uint_eq(fk.calls("cuLinkCreate"), 1);
  ck_assert_uint_eq(metric(b, "cache.disk.writes"), 1);
  b->vt->destroy(b);
  free(p.bytes);
}
END_TEST

START_TEST(test_jit_direct_failure) {
  setenv("VYRE_CUDA_DISK_CACHE", "0", 1);
  setenv("VYRE_CUDA_JIT_DIRECT", "1", 1);
  vyre_backend *b = mk();
  prog p = prog_scale(64, 2, 64);
  vyre_error err = VYRE_ERROR_INIT;
  fk.jit_fail(1, "ptxas application ptx input, line 42; error   : Unknown symbol 'oops'");
  ck_assert_int_eq(create_once(b, &p, &err), VYRE_COMPILE);
  ck_assert_msg(strstr(err.message, "Unknown symbol 'oops'") &&
                    strstr(err.message, "cuModuleLoadDataEx") &&
                    strstr(err.message, "CUDA_ERROR_INVALID_PTX") && strstr(err.message, "Fix:"),
                "carries the JIT log, the call and a fix: %s", err.message);
  ck_assert_int_eq(err.native_code, CUDA_ERROR_INVALID_PTX);
  fakecuda_live l;
  fk.live(&l);
  ck_assert_msg(l.modules == 0, "a failed JIT leaves no module");
  /* Out of memory is the caller's to act on, not a JIT error. */
  fk.inject("cuModuleLoadDataEx", 1, CUDA_ERROR_OUT_OF_MEMORY, 1);
  ck_assert_int_eq(create_once(b, &p, &err), VYRE_OUT_OF_MEMORY);
  ck_assert_int_eq(create_once(b, &p, &err), VYRE_OK);
  b->vt->destroy(b);
  assert_no_leaks_after_destroy("direct jit failure");
  free(p.bytes);
}
END_TEST

typedef struct create_job {
  vyre_backend *b;
  prog p;
  vyre_status st;
  vyre_error err;
} create_job;

static void *create_in_thread(void *arg) {
  create_job *j = arg;
  vyre_pipeline h = 0;
  j->st = j->b->vt->pipeline_create(j->b, j->p.bytes, j->p.size, NULL, &h, &j->err);
  if (j->st == VYRE_OK) j->st = j->b->vt->pipeline_release(j->b, h, &j->err);
  return NULL;
}

/* Four threads create four new pipelines on one instance: the fake holds
 * each JIT until four are inside at once, which only happens when no
 * lock of the plugin serialises them. */
static void concurrent_creates(const char *direct) {
  setenv("VYRE_CUDA_DISK_CACHE", "0", 1);
  if (direct) setenv("VYRE_CUDA_JIT_DIRECT", direct, 1);
  vyre_backend *b = mk();
  enum { THREADS = 4 };
  create_job jobs[THREADS];
  pthread_t t[THREADS];
  fk.jit_rendezvous(THREADS);
  for (int i = 0; i < THREADS; i++) {
    jobs[i].b = b;
    jobs[i].err = (vyre_error)VYRE_ERROR_INIT;
    jobs[i].p = prog_scale(64, 100u + (uint32_t)i, 64);
    ck_assert_int_eq(pthread_create(&t[i], NULL, create_in_thread, &jobs[i]), 0);
  }
  for (int i = 0; i < THREADS; i++) {
    pthread_join(t[i], NULL);
    ck_assert_msg(jobs[i].st == VYRE_OK, "thread %d: %s", i, jobs[i].err.message);
    free(jobs[i].p.bytes);
  }
  unsigned most = fk.jit_max_concurrent();
  fk.jit_rendezvous(0);
  ck_assert_msg(most == THREADS, "%u of %d JITs ran at once (%s): the plugin serialises them",
                most, THREADS, direct ? "direct" : "linker");
  ck_assert_uint_eq(metric(b, "cache.module.compiles"), THREADS);
  b->vt->destroy(b);
  assert_no_leaks_after_destroy("concurrent jit");
}

START_TEST(test_jit_concurrent) {
  concurrent_creates(NULL);
  concurrent_creates("1");
}
END_TEST

/* compile.{codegen,jit,load}_us: a compile counts in the first two, a
 * disk hit only in the load. */
START_TEST(test_jit_time_split) {
  vyre_backend *b = mk();
  vyre_error err = VYRE_ERROR_INIT;
  prog p[20];
  for (uint32_t i = 0; i < 20; i++) {
    p[i] = prog_scale(4096, 200u + i, 64);
    ck_assert_msg(create_once(b, &p[i], &err) == VYRE_OK, "pipeline_create: %s", err.message);
  }
  ck_assert_msg(metric(b, "compile.codegen_us") > 0,
                "twenty compiles spent some time in the code generator");
  b->vt->destroy(b);
  b = mk();
  for (uint32_t i = 0; i < 20; i++) {
    ck_assert_msg(create_once(b, &p[i], &err) == VYRE_OK, "pipeline_create: %s", err.message);
    free(p[i].bytes);
  }
  ck_assert_uint_eq(metric(b, "cache.disk.hits"), 20);
  ck_assert_msg(metric(b, "compile.codegen_us") == 0 && metric(b, "compile.jit_us") == 0,
                "disk hits generate no code and run no JIT");
  b->vt->destroy(b);
}
END_TEST

void fake_jit_tests(TCase *tc) {
  tcase_add_test(tc, test_jit_opt_level);
  tcase_add_test(tc, test_jit_level_disk_key);
  tcase_add_test(tc, test_jit_direct);
  tcase_add_test(tc, test_jit_direct_failure);
  tcase_add_test(tc, test_jit_concurrent);
  tcase_add_test(tc, test_jit_time_split);
}
