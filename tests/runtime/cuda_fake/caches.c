/* caches.c -- check_cuda_fake's pools and caches cases: the device and pinned pools, the module, byte and disk caches, JIT failures. */
#include <dirent.h>
#include <pthread.h>
#include <sys/stat.h>
#include <unistd.h>

#include "harness.h"

START_TEST(test_pools) {
  vyre_backend *b = mk();
  prog p = prog_scale(1000, 2, 64);
  uint32_t in[1000] = {0};
  vyre_outputs *out = NULL;
  vyre_error err = VYRE_ERROR_INIT;
  ck_assert_int_eq(run_scale(b, &p, 1000, in, &out, NULL, &err), VYRE_OK);
  b->vt->outputs_free(b, out);
  unsigned long allocs = fk.calls("cuMemAlloc"), hostallocs = fk.calls("cuMemHostAlloc");
  uint64_t hits = metric(b, "pool.device.hits");
  for (int i = 0; i < 5; i++) {
    ck_assert_int_eq(run_scale(b, &p, 1000, in, &out, NULL, &err), VYRE_OK);
    b->vt->outputs_free(b, out);
  }
  ck_assert_msg(fk.calls("cuMemAlloc") == allocs && fk.calls("cuMemHostAlloc") == hostallocs,
                "repeated dispatches reuse pooled device and pinned blocks");
  /* in and out from the pool; the kernel reads its counts by value and
   * has no params block */
  ck_assert_uint_eq(metric(b, "pool.device.hits"), hits + 10);
  ck_assert_uint_eq(metric(b, "dispatch.params_skipped"), 6);
  ck_assert_uint_eq(metric(b, "pool.device.live_bytes"), 0);
  ck_assert_msg(metric(b, "pool.device.cached_bytes") == 4096 + 4096,
                "blocks are cached in power-of-two buckets (%llu)",
                (unsigned long long)metric(b, "pool.device.cached_bytes"));
  ck_assert_uint_eq(metric(b, "pool.streams.created"), 1);
  ck_assert_uint_eq(metric(b, "pool.events.created"), 1);
  /* shutdown trims every cache; the instance stays usable. */
  ck_assert_int_eq(b->vt->shutdown(b, &err), VYRE_OK);
  ck_assert_uint_eq(metric(b, "pool.device.cached_bytes"), 0);
  ck_assert_uint_eq(metric(b, "pool.pinned.cached_bytes"), 0);
  ck_assert_uint_eq(metric(b, "cache.module.entries"), 0);
  fakecuda_live l;
  fk.live(&l);
  ck_assert_int_eq(l.device_allocs, 0);
  ck_assert_int_eq(l.host_allocs, 0);
  ck_assert_int_eq(l.streams, 0);
  ck_assert_int_eq(l.events, 0);
  ck_assert_int_eq(l.modules, 0);
  ck_assert_int_eq(run_scale(b, &p, 1000, in, &out, NULL, &err), VYRE_OK);
  b->vt->outputs_free(b, out);
  b->vt->destroy(b);
  assert_no_leaks_after_destroy("pools");

  /* A zero budget caches nothing. */
  setenv("VYRE_CUDA_POOL_DEVICE_BYTES", "0", 1);
  setenv("VYRE_CUDA_POOL_PINNED_BYTES", "0", 1);
  b = mk();
  for (int i = 0; i < 2; i++) {
    ck_assert_int_eq(run_scale(b, &p, 1000, in, &out, NULL, &err), VYRE_OK);
    b->vt->outputs_free(b, out);
  }
  ck_assert_uint_eq(metric(b, "pool.device.cached_bytes"), 0);
  ck_assert_uint_eq(metric(b, "pool.device.hits"), 0);
  /* in and out of both runs; no params blocks */
  ck_assert_uint_eq(metric(b, "pool.device.driver_frees"), 4);
  ck_assert_uint_eq(metric(b, "dispatch.params_skipped"), 2);
  b->vt->destroy(b);
  free(p.bytes);
}
END_TEST

static void first_file(const char *dir, const char *suffix, char *out, size_t size) {
  DIR *d = opendir(dir);
  ck_assert_ptr_nonnull(d);
  struct dirent *e;
  out[0] = '\0';
  while ((e = readdir(d)) != NULL) {
    size_t l = strlen(e->d_name), s = strlen(suffix);
    if (l >= s && strcmp(e->d_name + l - s, suffix) == 0) {
      snprintf(out, size, "%s/%s", dir, e->d_name);
      break;
    }
  }
  closedir(d);
}

START_TEST(test_module_cache) {
  setenv("VYRE_CUDA_MODULE_CACHE", "2", 1);
  setenv("VYRE_CUDA_DISK_CACHE", "0", 1);
  vyre_backend *b = mk();
  prog p[3] = {prog_scale(64, 2, 64), prog_scale(64, 3, 64), prog_scale(64, 4, 64)};
  uint32_t in[64] = {0};
  vyre_outputs *out = NULL;
  vyre_error err = VYRE_ERROR_INIT;
  for (int i = 0; i < 2; i++) {
    ck_assert_int_eq(run_scale(b, &p[0], 64, in, &out, NULL, &err), VYRE_OK);
    b->vt->outputs_free(b, out);
  }
  ck_assert_uint_eq(metric(b, "cache.module.hits"), 1);
  ck_assert_uint_eq(metric(b, "cache.module.misses"), 1);
  ck_assert_uint_eq(fk.calls("cuLinkAddData"), 1);
  for (int i = 1; i < 3; i++) {
    ck_assert_int_eq(run_scale(b, &p[i], 64, in, &out, NULL, &err), VYRE_OK);
    b->vt->outputs_free(b, out);
  }
  ck_assert_uint_eq(metric(b, "cache.module.evictions"), 1);
  ck_assert_uint_eq(metric(b, "cache.module.entries"), 2);
  fakecuda_live l;
  fk.live(&l);
  ck_assert_int_eq(l.modules, 2);
  ck_assert_uint_eq(metric(b, "cache.disk.enabled"), 0);
  b->vt->destroy(b);
  assert_no_leaks_after_destroy("module cache");
  for (int i = 0; i < 3; i++) free(p[i].bytes);
}
END_TEST

/* Dispatch p's bytes (from wherever they lie) with options o. */
static vyre_status run_bytes(vyre_backend *b, const void *bytes, size_t size,
                             const vyre_dispatch_options *o, vyre_error *err) {
  uint32_t in[64] = {0};
  vyre_input inputs[1] = {{in, sizeof in}};
  vyre_program_ref r = VYRE_PROGRAM_BYTES(bytes, size);
  vyre_outputs *out = NULL;
  vyre_status st = b->vt->dispatch(b, &r, inputs, 1, o, &out, NULL, err);
  if (st == VYRE_OK) b->vt->outputs_free(b, out);
  return st;
}

START_TEST(test_byte_cache) {
  /* The first level: image bytes + settings -> plan, no decode on a hit. */
  setenv("VYRE_CUDA_DISK_CACHE", "0", 1);
  setenv("VYRE_CUDA_MODULE_CACHE", "3", 1);
  vyre_backend *b = mk();
  prog p = prog_scale(64, 2, 64), q = prog_scale(64, 3, 64);
  vyre_error err = VYRE_ERROR_INIT;
  ck_assert_int_eq(run_bytes(b, p.bytes, p.size, NULL, &err), VYRE_OK);
  ck_assert_int_eq(run_bytes(b, p.bytes, p.size, NULL, &err), VYRE_OK);
  ck_assert_uint_eq(metric(b, "cache.module.misses"), 1);
  ck_assert_uint_eq(metric(b, "cache.module.byte_hits"), 1);
  ck_assert_uint_eq(metric(b, "cache.module.hits"), 1);
  ck_assert_uint_eq(fk.calls("cuLinkAddData"), 1);

  /* Equal bytes elsewhere in memory hit; the key is the content. */
  void *copy = malloc(p.size);
  ck_assert_ptr_nonnull(copy);
  memcpy(copy, p.bytes, p.size);
  ck_assert_int_eq(run_bytes(b, copy, p.size, NULL, &err), VYRE_OK);
  ck_assert_uint_eq(metric(b, "cache.module.byte_hits"), 2);

  /* Another program misses. */
  ck_assert_int_eq(run_bytes(b, q.bytes, q.size, NULL, &err), VYRE_OK);
  ck_assert_uint_eq(metric(b, "cache.module.misses"), 2);
  ck_assert_uint_eq(fk.calls("cuLinkAddData"), 2);

  /* Settings are part of the key: a ulp budget or a workgroup override
   * is a different entry (compiled under other codegen options). */
  vyre_dispatch_options o;
  memset(&o, 0, sizeof o);
  o.struct_size = sizeof o;
  o.ulp_budget = 4;
  ck_assert_int_eq(run_bytes(b, p.bytes, p.size, &o, &err), VYRE_OK);
  ck_assert_uint_eq(metric(b, "cache.module.byte_hits"), 2);
  ck_assert_uint_eq(fk.calls("cuLinkAddData"), 3);
  ck_assert_int_eq(run_bytes(b, p.bytes, p.size, &o, &err), VYRE_OK);
  ck_assert_uint_eq(metric(b, "cache.module.byte_hits"), 3);
  /* An override equal to the program's workgroup reaches the same plan
   * through the second level, then gets a binding of its own. */
  o.ulp_budget = 0;
  o.workgroup[0] = 64;
  ck_assert_int_eq(run_bytes(b, p.bytes, p.size, &o, &err), VYRE_OK);
  ck_assert_uint_eq(fk.calls("cuLinkAddData"), 3);
  ck_assert_uint_eq(metric(b, "cache.module.byte_hits"), 3);
  ck_assert_int_eq(run_bytes(b, p.bytes, p.size, &o, &err), VYRE_OK);
  ck_assert_uint_eq(metric(b, "cache.module.byte_hits"), 4);
  /* A grid override turns the fast path off: another plan. */
  memset(o.workgroup, 0, sizeof o.workgroup);
  o.grid[0] = 1;
  ck_assert_int_eq(run_bytes(b, p.bytes, p.size, &o, &err), VYRE_OK);
  ck_assert_uint_eq(fk.calls("cuLinkAddData"), 4);

  /* A pipeline made from the bytes hits too. */
  vyre_pipeline pipe = 0;
  uint64_t before = metric(b, "cache.module.byte_hits");
  ck_assert_int_eq(b->vt->pipeline_create(b, p.bytes, p.size, NULL, &pipe, &err), VYRE_OK);
  ck_assert_uint_eq(metric(b, "cache.module.byte_hits"), before + 1);
  ck_assert_int_eq(b->vt->pipeline_release(b, pipe, &err), VYRE_OK);

  /* Evicted plans leave the first level: capacity 3, four plans made, so
   * the oldest (q) was evicted and compiles again, found by nothing stale. */
  ck_assert_uint_eq(metric(b, "cache.module.evictions") >= 1, 1);
  unsigned long links = fk.calls("cuLinkAddData");
  ck_assert_int_eq(run_bytes(b, q.bytes, q.size, NULL, &err), VYRE_OK);
  ck_assert_uint_eq(fk.calls("cuLinkAddData"), links + 1);
  ck_assert_int_eq(run_bytes(b, q.bytes, q.size, NULL, &err), VYRE_OK);
  ck_assert_uint_eq(fk.calls("cuLinkAddData"), links + 1);

  /* Invalid bytes still fail the way decoding says, every time. */
  memset(copy, 0xff, 16);
  for (int i = 0; i < 2; i++)
    ck_assert_int_eq(run_bytes(b, copy, p.size, NULL, &err), VYRE_INVALID_PROGRAM);
  b->vt->destroy(b);
  assert_no_leaks_after_destroy("byte cache");
  free(copy);
  free(p.bytes);
  free(q.bytes);
}
END_TEST

START_TEST(test_disk_cache) {
  char dump[512], cubins[512];
  snprintf(dump, sizeof dump, "%s/ptx", tmpdir);
  snprintf(cubins, sizeof cubins, "%s/cache/cuda", tmpdir);
  mkdir(dump, 0700);
  setenv("VYRE_PTX_DUMP_DIR", dump, 1);
  prog p = prog_scale(64, 2, 64);
  uint32_t in[64] = {0};
  vyre_outputs *out = NULL;
  vyre_error err = VYRE_ERROR_INIT;

  vyre_backend *b = mk();
  ck_assert_int_eq(run_scale(b, &p, 64, in, &out, NULL, &err), VYRE_OK);
  b->vt->outputs_free(b, out);
  ck_assert_uint_eq(metric(b, "cache.disk.misses"), 1);
  ck_assert_uint_eq(metric(b, "cache.disk.writes"), 1);
  b->vt->destroy(b);
  ck_assert_int_eq(count_files(cubins, ".cubin"), 1);
  ck_assert_int_eq(count_files(dump, ".ptx"), 1);
  char ptx[1024];
  struct stat dumped;
  first_file(dump, ".ptx", ptx, sizeof ptx);
  ck_assert_int_eq(stat(ptx, &dumped), 0);

  /* A second instance hits the disk: no codegen, no JIT. */
  unsigned long links = fk.calls("cuLinkAddData");
  b = mk();
  ck_assert_int_eq(run_scale(b, &p, 64, in, &out, NULL, &err), VYRE_OK);
  b->vt->outputs_free(b, out);
  ck_assert_uint_eq(metric(b, "cache.disk.hits"), 1);
  ck_assert_uint_eq(fk.calls("cuLinkAddData"), links);
  b->vt->destroy(b);

  /* A corrupt entry is detected and rebuilt. */
  char path[1024];
  first_file(cubins, ".cubin", path, sizeof path);
  FILE *f = fopen(path, "r+b");
  ck_assert_ptr_nonnull(f);
  fseek(f, 200, SEEK_SET);
  fputc('X', f);
  fclose(f);
  b = mk();
  ck_assert_int_eq(run_scale(b, &p, 64, in, &out, NULL, &err), VYRE_OK);
  b->vt->outputs_free(b, out);
  ck_assert_uint_eq(metric(b, "cache.disk.corrupt"), 1);
  ck_assert_uint_eq(metric(b, "cache.disk.writes"), 1);
  b->vt->destroy(b);
  /* The rebuild dumped its PTX again, as a new file renamed over the old
   * one (never rewritten in place, where a reader could see half). */
  struct stat redumped;
  ck_assert_int_eq(stat(ptx, &redumped), 0);
  ck_assert_msg(redumped.st_ino != dumped.st_ino, "the PTX dump is replaced atomically");
  ck_assert_int_eq(count_files(dump, "") - 2, 1); /* no temp files left ('.' and '..') */
  /* Truncated too. */
  ck_assert_int_eq(truncate(path, 10), 0);
  b = mk();
  ck_assert_int_eq(run_scale(b, &p, 64, in, &out, NULL, &err), VYRE_OK);
  b->vt->outputs_free(b, out);
  ck_assert_uint_eq(metric(b, "cache.disk.corrupt"), 1);
  b->vt->destroy(b);
  b = mk();
  ck_assert_int_eq(run_scale(b, &p, 64, in, &out, NULL, &err), VYRE_OK);
  b->vt->outputs_free(b, out);
  ck_assert_uint_eq(metric(b, "cache.disk.hits"), 1);
  b->vt->destroy(b);
  ck_assert_int_eq(count_files(cubins, ".cubin"), 1);
  ck_assert_int_eq(count_files(cubins, "") - 2, 1); /* no temp files left ('.' and '..') */

  /* An entry of another format (the header's format word, after the
   * magic) is a miss, not corruption, and this build's entry replaces it. */
  f = fopen(path, "r+b");
  ck_assert_ptr_nonnull(f);
  fseek(f, 8, SEEK_SET);
  const uint8_t format1[4] = {1, 0, 0, 0};
  ck_assert_uint_eq(fwrite(format1, 1, 4, f), 4);
  fclose(f);
  b = mk();
  ck_assert_int_eq(run_scale(b, &p, 64, in, &out, NULL, &err), VYRE_OK);
  b->vt->outputs_free(b, out);
  ck_assert_uint_eq(metric(b, "cache.disk.misses"), 1);
  ck_assert_uint_eq(metric(b, "cache.disk.corrupt"), 0);
  ck_assert_uint_eq(metric(b, "cache.disk.writes"), 1);
  b->vt->destroy(b);
  b = mk();
  ck_assert_int_eq(run_scale(b, &p, 64, in, &out, NULL, &err), VYRE_OK);
  b->vt->outputs_free(b, out);
  ck_assert_uint_eq(metric(b, "cache.disk.hits"), 1);
  b->vt->destroy(b);

  /* An unwritable cache directory is not an error. */
  setenv("VYRE_CACHE_DIR", "/proc/vyre-cannot-exist", 1);
  b = mk();
  ck_assert_int_eq(run_scale(b, &p, 64, in, &out, NULL, &err), VYRE_OK);
  b->vt->outputs_free(b, out);
  ck_assert_uint_eq(metric(b, "cache.disk.write_errors"), 1);
  b->vt->destroy(b);
  assert_no_leaks_after_destroy("disk cache");
  free(p.bytes);
}
END_TEST

static void *compile_in_thread(void *v) {
  const prog *p = v;
  vyre_backend *b = NULL;
  vyre_error err = VYRE_ERROR_INIT;
  if (reg->create(NULL, &b, &err) != VYRE_OK) return (void *)1;
  uint32_t in[64] = {0};
  vyre_outputs *out = NULL;
  vyre_program_ref r = ref_of(p);
  vyre_input inputs[1] = {{in, sizeof in}};
  vyre_status st = b->vt->dispatch(b, &r, inputs, 1, NULL, &out, NULL, &err);
  b->vt->outputs_free(b, out);
  b->vt->destroy(b);
  return st == VYRE_OK ? NULL : (void *)2;
}

START_TEST(test_disk_cache_concurrent) {
  prog p = prog_scale(64, 9, 64);
  pthread_t t[4];
  for (int i = 0; i < 4; i++) pthread_create(&t[i], NULL, compile_in_thread, &p);
  for (int i = 0; i < 4; i++) {
    void *r;
    pthread_join(t[i], &r);
    ck_assert_msg(r == NULL, "instance %d compiled and dispatched with a shared cache dir", i);
  }
  char cubins[512];
  snprintf(cubins, sizeof cubins, "%s/cache/cuda", tmpdir);
  ck_assert_int_eq(count_files(cubins, ".cubin"), 1);
  ck_assert_msg(count_files(cubins, "") == 3, "one entry and no temp files are left");
  /* And the surviving entry is whole. */
  vyre_backend *b = mk();
  uint32_t in[64] = {0};
  vyre_outputs *out = NULL;
  vyre_error err = VYRE_ERROR_INIT;
  ck_assert_int_eq(run_scale(b, &p, 64, in, &out, NULL, &err), VYRE_OK);
  b->vt->outputs_free(b, out);
  ck_assert_uint_eq(metric(b, "cache.disk.hits"), 1);
  ck_assert_uint_eq(metric(b, "cache.disk.corrupt"), 0);
  b->vt->destroy(b);
  free(p.bytes);
}
END_TEST

START_TEST(test_jit_failure) {
  setenv("VYRE_CUDA_DISK_CACHE", "0", 1);
  vyre_backend *b = mk();
  prog p = prog_scale(64, 2, 64);
  uint32_t in[64] = {0};
  vyre_outputs *out = NULL;
  vyre_error err = VYRE_ERROR_INIT;
  fk.jit_fail(1, "ptxas application ptx input, line 42; error   : Unknown symbol 'oops'");
  ck_assert_int_eq(run_scale(b, &p, 64, in, &out, NULL, &err), VYRE_COMPILE);
  ck_assert_msg(strstr(err.message, "Unknown symbol 'oops'") && strstr(err.message, "cuLinkAddData") &&
                    strstr(err.message, "CUDA_ERROR_INVALID_PTX") && strstr(err.message, "Fix:"),
                "carries the JIT log, the call and a fix: %s", err.message);
  ck_assert_int_eq(err.native_code, CUDA_ERROR_INVALID_PTX);
  ck_assert_int_eq(run_scale(b, &p, 64, in, &out, NULL, &err), VYRE_OK);
  b->vt->outputs_free(b, out);
  b->vt->destroy(b);
  assert_no_leaks_after_destroy("jit failure");
  free(p.bytes);
}
END_TEST

void fake_pools_tests(TCase *tc) {
  tcase_add_test(tc, test_pools);
}

void fake_caches_tests(TCase *tc) {
  tcase_add_test(tc, test_module_cache);
  tcase_add_test(tc, test_byte_cache);
  tcase_add_test(tc, test_disk_cache);
  tcase_add_test(tc, test_disk_cache_concurrent);
  tcase_add_test(tc, test_jit_failure);
}
