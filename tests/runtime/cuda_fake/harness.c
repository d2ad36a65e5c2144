/* harness.c -- check_cuda_fake's shared harness: the plugin and the fake libcuda loaded once, the fixture, instances, test programs and the kernel player. */
#include <dirent.h>
#include <dlfcn.h>
#include <unistd.h>

#include "harness.h"

fake_api fk;
fake_host_api host;
const vyre_registration *reg;
char plugin_path[1024], fake_path[1024];
char tmpdir[256];
static void *fake_dl;

static void rm_rf(const char *path) {
  DIR *d = opendir(path);
  if (d) {
    struct dirent *e;
    while ((e = readdir(d)) != NULL) {
      if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, "..")) continue;
      char sub[1024];
      snprintf(sub, sizeof sub, "%s/%s", path, e->d_name);
      rm_rf(sub);
    }
    closedir(d);
    rmdir(path);
  } else {
    unlink(path);
  }
}

static void setup(void) {
  static const char *clear[] = {
      "VYRE_CUDA_POOL_DEVICE_BYTES", "VYRE_CUDA_POOL_PINNED_BYTES", "VYRE_CUDA_STAGING_CHUNK",
      "VYRE_CUDA_STAGING_CHUNKS", "VYRE_CUDA_COPY_THREADS", "VYRE_CUDA_SPLIT_CHUNK",
      "VYRE_PTX_DUMP_DIR", "VYRE_CUDA_MODULE_CACHE", "VYRE_CUDA_FUSE", "VYRE_CUDA_DISK_CACHE",
      "VYRE_CUDA_JIT_OPT_LEVEL", "VYRE_CUDA_JIT_DIRECT", "FAKECUDA_DEVICES", "FAKECUDA_INIT_RESULT",
      "FAKECUDA_SM",
      "FAKECUDA_SMS", "FAKECUDA_MEM", "FAKECUDA_COOP", "FAKECUDA_MAX_BLOCKS_PER_SM", "FAKECUDA_UUID"};
  for (size_t i = 0; i < sizeof clear / sizeof clear[0]; i++) unsetenv(clear[i]);
  setenv("VYRE_CUDA_DRIVER", fake_path, 1);
  snprintf(tmpdir, sizeof tmpdir, "/tmp/vyre-cuda-fake-XXXXXX");
  ck_assert_msg(mkdtemp(tmpdir) != NULL, "a private temp dir can be made");
  char cache[512];
  snprintf(cache, sizeof cache, "%s/cache", tmpdir);
  setenv("VYRE_CACHE_DIR", cache, 1);
  fk.reset();
}

static void teardown(void) {
  char last[512];
  unsigned long v = fk.violations(last, sizeof last);
  rm_rf(tmpdir);
  ck_assert_msg(v == 0, "the plugin used the driver correctly, but the fake saw %lu misuse(s), "
                        "last: %s", v, last);
}

TCase *fake_tcase(Suite *s, const char *name, int timeout) {
  TCase *tc = tcase_create(name);
  tcase_add_checked_fixture(tc, setup, teardown);
  tcase_set_timeout(tc, timeout);
  suite_add_tcase(s, tc);
  return tc;
}

vyre_backend *mk_status(vyre_status want, vyre_error *err) {
  vyre_backend *b = NULL;
  vyre_status st = reg->create(NULL, &b, err);
  ck_assert_msg(st == want, "create returned %s (%s), expected %s", vyre_status_name(st),
                err->message, vyre_status_name(want));
  return b;
}

vyre_backend *mk(void) {
  vyre_error err = VYRE_ERROR_INIT;
  vyre_backend *b = mk_status(VYRE_OK, &err);
  ck_assert_ptr_nonnull(b);
  return b;
}

uint64_t metric(vyre_backend *b, const char *name) {
  vyre_metric m[128];
  uint32_t n = 0;
  vyre_error err = VYRE_ERROR_INIT;
  ck_assert_int_eq(b->vt->metrics(b, m, 128, &n, &err), VYRE_OK);
  ck_assert_msg(n <= 128, "metric table fits the test's buffer (%u)", n);
  for (uint32_t i = 0; i < n; i++)
    if (strcmp(m[i].name, name) == 0) return m[i].value;
  ck_abort_msg("metric %s is reported", name);
  return 0;
}

void assert_no_leaks_after_destroy(const char *what) {
  fakecuda_live l;
  fk.live(&l);
  ck_assert_msg(l.ctx_refs == 0, "%s: the primary context is released (refs %ld)", what,
                l.ctx_refs);
  ck_assert_msg(l.reclaimed == 0,
                "%s: the plugin freed every driver object itself (%lu were left for context "
                "destruction)",
                what, l.reclaimed);
}

/* A built program, checked to validate. */
static prog checked(prog p) {
  vyre_error err = VYRE_ERROR_INIT;
  vyre_program *dec = NULL;
  vyre_status st = vyre_program_decode(p.bytes, p.size, &dec, &err);
  ck_assert_msg(st == VYRE_OK, "test program validates: %s", err.message);
  vyre_program_free(dec);
  return p;
}

static prog finish(vyre_builder *b) {
  prog p = {NULL, 0};
  vyre_error err = VYRE_ERROR_INIT;
  vyre_status st = vyre_builder_finish(b, &p.bytes, &p.size, &err);
  vyre_builder_free(b);
  ck_assert_msg(st == VYRE_OK, "test program builds: %s", err.message);
  return checked(p);
}

prog prog_scale(uint32_t n, uint32_t k, uint32_t wg) { return checked(fh_prog_scale(n, k, wg)); }

prog prog_inc(uint32_t wg) { return checked(fh_prog_inc(wg)); }

prog prog_range(uint32_t n, uint32_t off, uint32_t size) {
  vyre_builder *b = vyre_builder_new(64, 1, 1);
  uint32_t out = vyre_b_buffer(b, "out", UINT32_MAX, VYRE_ACCESS_WRITE_ONLY, VYRE_T_U32, n, 0);
  vyre_b_buffer_range(b, out, off, size);
  uint32_t g = vyre_b_gid(b, 0);
  vyre_b_store(b, out, g, g);
  return finish(b);
}

prog prog_trap(uint32_t n) { return checked(fh_prog_trap(n)); }

prog prog_grid(uint32_t n, uint32_t wg) { return checked(fh_prog_grid(n, wg)); }

prog prog_bf16(uint32_t n) {
  vyre_builder *b = vyre_builder_new(64, 1, 1);
  uint32_t in = vyre_b_buffer(b, "in", UINT32_MAX, VYRE_ACCESS_READ_ONLY, VYRE_T_BF16, n, 0);
  uint32_t out = vyre_b_buffer(b, "out", UINT32_MAX, VYRE_ACCESS_WRITE_ONLY, VYRE_T_BF16, n, 0);
  uint32_t g = vyre_b_gid(b, 0);
  vyre_b_store(b, out, g, vyre_b_load(b, in, g));
  return finish(b);
}

vyre_program_ref ref_of(const prog *p) { return fh_ref(p); }

int hook_mode;
uint32_t hook_k = 2;

void play(const fakecuda_launch *l, void *user) {
  (void)user;
  const uint32_t *params = l->counts; /* the count words, by value */
  uint32_t n = params[0];
  if (hook_mode == 1) { /* scale: in, out */
    const uint32_t *in = (const uint32_t *)(uintptr_t)l->params[0];
    uint32_t *out = (uint32_t *)(uintptr_t)l->params[1];
    uint32_t nin = params[1], nout = params[2];
    for (uint32_t i = 0; i < n; i++)
      if (i < nin && i < nout) out[i] = in[i] * hook_k;
  } else if (hook_mode == 2) { /* inc: buf */
    uint32_t *buf = (uint32_t *)(uintptr_t)l->params[0];
    for (uint32_t i = 0; i < n; i++) buf[i] += 1;
  } else if (hook_mode == 3) { /* trap: nb = 1 buffer -> trap words at 2, 3 */
    uint32_t *w = (uint32_t *)(uintptr_t)l->params[l->nparams - 1];
    w[2] = 7;
    w[3] = 4 + 1; /* instruction 4 is the trap in prog_trap */
  } else if (hook_mode == 4) { /* range: out[i] = i */
    uint32_t *out = (uint32_t *)(uintptr_t)l->params[0];
    for (uint32_t i = 0; i < n; i++) out[i] = i;
  }
}

vyre_status run_scale(vyre_backend *b, const prog *p, uint32_t n, uint32_t *in,
                      vyre_outputs **out, vyre_timing *t, vyre_error *err) {
  vyre_program_ref r = ref_of(p);
  vyre_input inputs[1] = {{in, (uint64_t)n * 4u}};
  return b->vt->dispatch(b, &r, inputs, 1, NULL, out, t, err);
}

int count_files(const char *dir, const char *suffix) {
  DIR *d = opendir(dir);
  if (!d) return 0;
  int n = 0;
  struct dirent *e;
  while ((e = readdir(d)) != NULL) {
    size_t l = strlen(e->d_name), s = strlen(suffix);
    if (l >= s && strcmp(e->d_name + l - s, suffix) == 0) n++;
  }
  closedir(d);
  return n;
}

const vyre_cuda_interop *interop_of(vyre_backend *b) {
  const void *t = NULL;
  vyre_error err = VYRE_ERROR_INIT;
  ck_assert_msg(b->vt->get_extension &&
                    b->vt->get_extension(b, VYRE_CUDA_INTEROP_NAME, 1, &t, &err) == VYRE_OK,
                "the CUDA backend serves %s@1: %s", VYRE_CUDA_INTEROP_NAME, err.message);
  return t;
}

#define RESOLVE(field, name)                                                            \
  do {                                                                                  \
    *(void **)&fk.field = dlsym(fake_dl, name);                                         \
    if (!fk.field) {                                                                    \
      fprintf(stderr, "check_cuda_fake: %s missing from %s\n", name, fake_path);        \
      return 1;                                                                         \
    }                                                                                   \
  } while (0)

int fake_load(void) {
  const char *build = getenv("VYRE_BUILD_DIR");
  if (!build) build = ".";
  snprintf(plugin_path, sizeof plugin_path, "%s/plugin/runtime/.libs/libvyre-cuda.so", build);
  snprintf(fake_path, sizeof fake_path, "%s/tests/runtime/fakecuda/.libs/libfakecuda.so", build);
  void *dl = dlopen(plugin_path, RTLD_NOW | RTLD_LOCAL);
  if (!dl) {
    fprintf(stderr, "check_cuda_fake: cannot load the plugin: %s. Fix: build it (make) and set "
                    "VYRE_BUILD_DIR to the build tree\n", dlerror());
    return 1;
  }
  vyre_plugin_entry_fn entry = (vyre_plugin_entry_fn)dlsym(dl, VYRE_PLUGIN_ENTRY_SYMBOL);
  vyre_error err = VYRE_ERROR_INIT;
  if (!entry || entry(VYRE_ABI_MAJOR, VYRE_ABI_MINOR, &reg, &err) != VYRE_OK) {
    fprintf(stderr, "check_cuda_fake: plugin entry failed: %s\n", err.message);
    return 1;
  }
  fake_dl = dlopen(fake_path, RTLD_NOW | RTLD_LOCAL | RTLD_NODELETE);
  if (!fake_dl) {
    fprintf(stderr, "check_cuda_fake: cannot load the fake driver: %s\n", dlerror());
    return 1;
  }
  RESOLVE(reset, "fakecuda_reset");
  RESOLVE(get_config, "fakecuda_get_config");
  RESOLVE(set_config, "fakecuda_set_config");
  RESOLVE(inject, "fakecuda_inject");
  RESOLVE(clear_faults, "fakecuda_clear_faults");
  RESOLVE(calls, "fakecuda_calls");
  RESOLVE(names, "fakecuda_names");
  RESOLVE(live, "fakecuda_objects");
  RESOLVE(launch_count, "fakecuda_launch_count");
  RESOLVE(launch_get, "fakecuda_launch_get");
  RESOLVE(set_hook, "fakecuda_set_hook");
  RESOLVE(hold_events, "fakecuda_hold_events");
  RESOLVE(complete_events, "fakecuda_complete_events");
  RESOLVE(hang_launches, "fakecuda_hang_launches");
  RESOLVE(violations, "fakecuda_violations");
  RESOLVE(jit_fail, "fakecuda_jit_fail");
  RESOLVE(jit_opt_level, "fakecuda_jit_opt_level");
  RESOLVE(jit_rendezvous, "fakecuda_jit_rendezvous");
  RESOLVE(jit_max_concurrent, "fakecuda_jit_max_concurrent");
  RESOLVE(pageable_copies, "fakecuda_pageable_copies");
  RESOLVE(poisoned, "fakecuda_poisoned");
  RESOLVE(fault_launch, "fakecuda_fault_launch");
  RESOLVE(op_count, "fakecuda_op_count");
  RESOLVE(op_get, "fakecuda_op_get");
  RESOLVE(allow_legacy, "fakecuda_allow_legacy_stream");
  RESOLVE(ctx_release, "cuDevicePrimaryCtxRelease_v2");
  RESOLVE(set_device, "fakecuda_set_device");
  RESOLVE(device_bytes, "fakecuda_device_bytes");
#define RESOLVE_HOST(field, name)                                                       \
  do {                                                                                  \
    *(void **)&host.field = dlsym(fake_dl, name);                                       \
    if (!host.field) {                                                                  \
      fprintf(stderr, "check_cuda_fake: %s missing from %s\n", name, fake_path);        \
      return 1;                                                                         \
    }                                                                                   \
  } while (0)
  RESOLVE_HOST(retain, "cuDevicePrimaryCtxRetain");
  RESOLVE_HOST(push, "cuCtxPushCurrent_v2");
  RESOLVE_HOST(pop, "cuCtxPopCurrent_v2");
  RESOLVE_HOST(mem_alloc, "cuMemAlloc_v2");
  RESOLVE_HOST(mem_free, "cuMemFree_v2");
  RESOLVE_HOST(host_alloc, "cuMemHostAlloc");
  RESOLVE_HOST(host_free, "cuMemFreeHost");
  RESOLVE_HOST(stream_create, "cuStreamCreate");
  RESOLVE_HOST(stream_destroy, "cuStreamDestroy_v2");
  RESOLVE_HOST(begin_capture, "cuStreamBeginCapture_v2");
  RESOLVE_HOST(end_capture, "cuStreamEndCapture");
  RESOLVE_HOST(graph_destroy, "cuGraphDestroy");
  return 0;
}
