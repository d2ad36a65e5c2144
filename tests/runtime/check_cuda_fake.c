/* check_cuda_fake.c -- the CUDA plugin against a fake libcuda: pools, resident store, dispatch plumbing, caches, errors, fault sweeps. */
#include <check.h>
#include <dirent.h>
#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <stddef.h>

#include <cuda.h>

#include "fakecuda/fakecuda.h"
#include "vyre/vyre.h"
#include "vyre/vyre_cuda.h"
#include "vyre/vyre_program.h"
#include "vyre/vyre_support.h"

/* ------------------------------------------------------------------ */
/* Harness: the plugin and the fake, loaded once                       */
/* ------------------------------------------------------------------ */
static char plugin_path[1024], fake_path[1024];
static const vyre_registration *reg;
static void *fake_dl;
static struct {
  fakecuda_reset_fn reset;
  fakecuda_get_config_fn get_config;
  fakecuda_set_config_fn set_config;
  fakecuda_inject_fn inject;
  fakecuda_clear_faults_fn clear_faults;
  fakecuda_calls_fn calls;
  fakecuda_names_fn names;
  fakecuda_live_fn live;
  fakecuda_launch_count_fn launch_count;
  fakecuda_launch_get_fn launch_get;
  fakecuda_set_hook_fn set_hook;
  fakecuda_hold_events_fn hold_events;
  fakecuda_complete_events_fn complete_events;
  fakecuda_hang_launches_fn hang_launches;
  fakecuda_violations_fn violations;
  fakecuda_jit_fail_fn jit_fail;
  fakecuda_pageable_copies_fn pageable_copies;
  fakecuda_poisoned_fn poisoned;
  fakecuda_fault_launch_fn fault_launch;
  fakecuda_op_count_fn op_count;
  fakecuda_op_get_fn op_get;
  fakecuda_allow_legacy_fn allow_legacy;
  CUresult (*ctx_release)(CUdevice);
  fakecuda_set_device_fn set_device;
  fakecuda_device_bytes_fn device_bytes;
} fk;

/* The fake's own entry points, for tests that play the host application
 * (its memory, streams and captures, in a context it retained). */
static struct {
  CUresult (*retain)(CUcontext *, CUdevice);
  CUresult (*push)(CUcontext);
  CUresult (*pop)(CUcontext *);
  CUresult (*mem_alloc)(CUdeviceptr *, size_t);
  CUresult (*mem_free)(CUdeviceptr);
  CUresult (*host_alloc)(void **, size_t, unsigned int);
  CUresult (*host_free)(void *);
  CUresult (*stream_create)(CUstream *, unsigned int);
  CUresult (*stream_destroy)(CUstream);
  CUresult (*begin_capture)(CUstream, CUstreamCaptureMode);
  CUresult (*end_capture)(CUstream, CUgraph *);
  CUresult (*graph_destroy)(CUgraph);
} host;

static char tmpdir[256];

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
      "VYRE_CUDA_STAGING_CHUNKS", "VYRE_CUDA_COPY_THREADS",
      "VYRE_PTX_DUMP_DIR", "VYRE_CUDA_MODULE_CACHE",
      "VYRE_CUDA_DISK_CACHE", "FAKECUDA_DEVICES", "FAKECUDA_INIT_RESULT", "FAKECUDA_SM",
      "FAKECUDA_SMS", "FAKECUDA_MEM", "FAKECUDA_COOP", "FAKECUDA_MAX_BLOCKS_PER_SM"};
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

/* ------------------------------------------------------------------ */
/* Helpers                                                             */
/* ------------------------------------------------------------------ */
static vyre_backend *mk_status(vyre_status want, vyre_error *err) {
  vyre_backend *b = NULL;
  vyre_status st = reg->create(NULL, &b, err);
  ck_assert_msg(st == want, "create returned %s (%s), expected %s", vyre_status_name(st),
                err->message, vyre_status_name(want));
  return b;
}

static vyre_backend *mk(void) {
  vyre_error err = VYRE_ERROR_INIT;
  vyre_backend *b = mk_status(VYRE_OK, &err);
  ck_assert_ptr_nonnull(b);
  return b;
}

static uint64_t metric(vyre_backend *b, const char *name) {
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

static void assert_no_leaks_after_destroy(const char *what) {
  fakecuda_live l;
  fk.live(&l);
  ck_assert_msg(l.ctx_refs == 0, "%s: the primary context is released (refs %ld)", what,
                l.ctx_refs);
  ck_assert_msg(l.reclaimed == 0,
                "%s: the plugin freed every driver object itself (%lu were left for context "
                "destruction)",
                what, l.reclaimed);
}

typedef struct prog {
  void *bytes;
  size_t size;
} prog;

static prog finish(vyre_builder *b) {
  prog p = {NULL, 0};
  vyre_error err = VYRE_ERROR_INIT;
  vyre_status st = vyre_builder_finish(b, &p.bytes, &p.size, &err);
  vyre_builder_free(b);
  ck_assert_msg(st == VYRE_OK, "test program builds: %s", err.message);
  vyre_program *dec = NULL;
  st = vyre_program_decode(p.bytes, p.size, &dec, &err);
  ck_assert_msg(st == VYRE_OK, "test program validates: %s", err.message);
  vyre_program_free(dec);
  return p;
}

/* out[gid] = in[gid] * k  (u32; in sized by input, out fixed at n) */
static prog prog_scale(uint32_t n, uint32_t k, uint32_t wg) {
  vyre_builder *b = vyre_builder_new(wg, 1, 1);
  uint32_t in = vyre_b_buffer(b, "in", UINT32_MAX, VYRE_ACCESS_READ_ONLY, VYRE_T_U32, 0, 0);
  uint32_t out = vyre_b_buffer(b, "out", UINT32_MAX, VYRE_ACCESS_WRITE_ONLY, VYRE_T_U32, n, 0);
  uint32_t g = vyre_b_gid(b, 0);
  uint32_t v = vyre_b_load(b, in, g);
  vyre_b_store(b, out, g, vyre_b_bin(b, VYRE_OP_MUL, v, vyre_b_u32(b, k)));
  return finish(b);
}

/* buf[gid] += 1  (u32 rw, sized by input / resident) */
static prog prog_inc(uint32_t wg) {
  vyre_builder *b = vyre_builder_new(wg, 1, 1);
  uint32_t buf = vyre_b_buffer(b, "buf", UINT32_MAX, VYRE_ACCESS_READ_WRITE, VYRE_T_U32, 0, 0);
  uint32_t g = vyre_b_gid(b, 0);
  uint32_t v = vyre_b_load(b, buf, g);
  vyre_b_store(b, buf, g, vyre_b_bin(b, VYRE_OP_ADD, v, vyre_b_u32(b, 1)));
  return finish(b);
}

/* out (n u32, only bytes [off, off+size) read back) = gid */
static prog prog_range(uint32_t n, uint32_t off, uint32_t size) {
  vyre_builder *b = vyre_builder_new(64, 1, 1);
  uint32_t out = vyre_b_buffer(b, "out", UINT32_MAX, VYRE_ACCESS_WRITE_ONLY, VYRE_T_U32, n, 0);
  vyre_b_buffer_range(b, out, off, size);
  uint32_t g = vyre_b_gid(b, 0);
  vyre_b_store(b, out, g, g);
  return finish(b);
}

/* if gid == 5: trap 7; out[gid] = 1 */
static prog prog_trap(uint32_t n) {
  vyre_builder *b = vyre_builder_new(32, 1, 1);
  uint32_t out = vyre_b_buffer(b, "out", UINT32_MAX, VYRE_ACCESS_WRITE_ONLY, VYRE_T_U32, n, 0);
  uint32_t g = vyre_b_gid(b, 0);
  vyre_b_if(b, vyre_b_bin(b, VYRE_OP_EQ, g, vyre_b_u32(b, 5)));
  vyre_b_trap(b, 7);
  vyre_b_end(b);
  vyre_b_store(b, out, g, vyre_b_u32(b, 1));
  return finish(b);
}

/* store, grid barrier, load the neighbour */
static prog prog_grid(uint32_t n, uint32_t wg) {
  vyre_builder *b = vyre_builder_new(wg, 1, 1);
  uint32_t buf = vyre_b_buffer(b, "buf", UINT32_MAX, VYRE_ACCESS_READ_WRITE, VYRE_T_U32, n,
                               VYRE_BUF_OUTPUT);
  uint32_t out = vyre_b_buffer(b, "out", UINT32_MAX, VYRE_ACCESS_WRITE_ONLY, VYRE_T_U32, n, 0);
  uint32_t g = vyre_b_gid(b, 0);
  vyre_b_store(b, buf, g, g);
  vyre_b_barrier(b, VYRE_BARRIER_GRID);
  g = vyre_b_gid(b, 0); /* values do not cross a grid barrier */
  uint32_t nb = vyre_b_bin(b, VYRE_OP_ADD, g, vyre_b_u32(b, 1));
  vyre_b_store(b, out, g, vyre_b_load(b, buf, nb));
  return finish(b);
}

/* out (bf16, n) = in (bf16) */
static prog prog_bf16(uint32_t n) {
  vyre_builder *b = vyre_builder_new(64, 1, 1);
  uint32_t in = vyre_b_buffer(b, "in", UINT32_MAX, VYRE_ACCESS_READ_ONLY, VYRE_T_BF16, n, 0);
  uint32_t out = vyre_b_buffer(b, "out", UINT32_MAX, VYRE_ACCESS_WRITE_ONLY, VYRE_T_BF16, n, 0);
  uint32_t g = vyre_b_gid(b, 0);
  vyre_b_store(b, out, g, vyre_b_load(b, in, g));
  return finish(b);
}

static vyre_program_ref ref_of(const prog *p) {
  vyre_program_ref r = VYRE_PROGRAM_BYTES(p->bytes, p->size);
  return r;
}

/* Launch hooks: the test plays the kernels the fake only records. */
static int hook_mode;
static uint32_t hook_k = 2;
static void play(const fakecuda_launch *l, void *user) {
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

static vyre_status run_scale(vyre_backend *b, const prog *p, uint32_t n, uint32_t *in,
                             vyre_outputs **out, vyre_timing *t, vyre_error *err) {
  vyre_program_ref r = ref_of(p);
  vyre_input inputs[1] = {{in, (uint64_t)n * 4u}};
  return b->vt->dispatch(b, &r, inputs, 1, NULL, out, t, err);
}

/* ------------------------------------------------------------------ */
/* core                                                                */
/* ------------------------------------------------------------------ */
START_TEST(test_registration) {
  ck_assert_str_eq(reg->id, "cuda");
  ck_assert_int_eq(reg->precedence, 5);
  ck_assert_uint_eq(reg->abi_major, VYRE_ABI_MAJOR);
  ck_assert_msg(reg->op_count > 60, "the op list names what codegen lowers (%u ops)",
                reg->op_count);
  int has_add = 0, has_exp = 0;
  for (uint32_t i = 0; i < reg->op_count; i++) {
    has_add |= reg->ops[i] == VYRE_OP_ADD;
    has_exp |= reg->ops[i] == VYRE_OP_EXP;
  }
  ck_assert_msg(has_add, "add is lowered");
  ck_assert_msg(((reg->capabilities & VYRE_CAP_TRANSCENDENTAL) != 0) == (has_exp != 0),
                "the transcendental capability and the exp op are offered together or not");
  ck_assert_msg(reg->capabilities & VYRE_CAP_RESIDENT, "resident buffers are offered");
  ck_assert_msg(reg->storage_types & (1u << VYRE_T_BF16), "bf16 storage is offered");
  void *dl = dlopen(plugin_path, RTLD_NOW | RTLD_LOCAL);
  ck_assert_ptr_nonnull(dl);
  const vyre_descriptor *d = dlsym(dl, VYRE_PLUGIN_DESCRIPTOR_SYMBOL);
  ck_assert_msg(d != NULL, "vyre_plugin_descriptor is exported");
  ck_assert_uint_eq(d->magic, VYRE_PLUGIN_MAGIC);
  ck_assert_uint_eq(d->abi_major, VYRE_ABI_MAJOR);
  ck_assert_uint_eq(d->registration_size, sizeof(vyre_registration));
  ck_assert_uint_eq(d->vtable_size, sizeof(vyre_backend_vtable));
  ck_assert_msg(dlsym(dl, "vc_dispatch") == NULL && dlsym(dl, "cg_emit_ptx") == NULL &&
                    dlsym(dl, "vyre_program_decode") == NULL,
                "the plugin exports nothing but its descriptor and entry");
  vyre_plugin_entry_fn entry = (vyre_plugin_entry_fn)dlsym(dl, VYRE_PLUGIN_ENTRY_SYMBOL);
  const vyre_registration *r2 = NULL;
  vyre_error err = VYRE_ERROR_INIT;
  ck_assert_int_eq(entry(VYRE_ABI_MAJOR + 1, 0, &r2, &err), VYRE_ABI_MISMATCH);
  ck_assert_msg(strstr(err.message, "Fix:") != NULL, "ABI mismatch says how to fix it");
  ck_assert_int_eq(entry(VYRE_ABI_MAJOR, 7, &r2, &err), VYRE_OK);
  ck_assert_uint_eq(r2->abi_minor, VYRE_ABI_MINOR);
  dlclose(dl);
}
END_TEST

START_TEST(test_profile) {
  vyre_backend *b = mk();
  vyre_device_profile p;
  memset(&p, 0, sizeof p);
  p.struct_size = sizeof p;
  vyre_error err = VYRE_ERROR_INIT;
  ck_assert_int_eq(b->vt->device_profile(b, &p, &err), VYRE_OK);
  ck_assert_str_eq(p.name, "Fake CUDA Device");
  ck_assert_str_eq(p.backend_id, "cuda");
  ck_assert_uint_eq(p.compute_major, 9);
  ck_assert_uint_eq(p.compute_units, 132);
  ck_assert_uint_eq(p.subgroup_size, 32);
  ck_assert_uint_eq(p.max_invocations_per_workgroup, 1024);
  ck_assert_uint_eq(p.total_memory, 1ull << 30);
  ck_assert_msg(p.free_memory > 0 && p.free_memory <= p.total_memory, "free memory is probed");
  ck_assert_uint_eq(p.driver_version, 13000);
  ck_assert_uint_eq(p.resident_budget, (uint64_t)((1ull << 30) * 9 / 10));
  ck_assert_msg(p.capabilities & VYRE_CAP_BF16, "sm_90 has bf16");
  ck_assert_msg(p.capabilities & VYRE_CAP_GRID_BARRIER, "cooperative launch gives grid barriers");
  ck_assert_int_eq(b->vt->prepare(b, &err), VYRE_OK);
  ck_assert_uint_eq(metric(b, "pool.streams.cached"), 1);
  const vyre_backend_vtable *vt = b->vt;
  vt->destroy(b);
  vt->destroy(NULL);
  assert_no_leaks_after_destroy("profile");

  /* A smaller profile struct gets only its own bytes. */
  setenv("FAKECUDA_SM", "75", 1);
  setenv("FAKECUDA_COOP", "0", 1);
  fk.reset();
  b = mk();
  struct {
    vyre_device_profile p;
    uint8_t guard[16];
  } small;
  memset(&small, 0xEE, sizeof small);
  small.p.struct_size = 8 + 128;
  ck_assert_int_eq(b->vt->device_profile(b, &small.p, &err), VYRE_OK);
  ck_assert_str_eq(small.p.name, "Fake CUDA Device");
  ck_assert_msg(((uint8_t *)&small.p)[8 + 128] == 0xEE, "nothing past struct_size is written");
  p.struct_size = sizeof p;
  ck_assert_int_eq(b->vt->device_profile(b, &p, &err), VYRE_OK);
  ck_assert_msg(!(p.capabilities & VYRE_CAP_BF16), "sm_75 has no bf16");
  ck_assert_msg(p.capabilities & VYRE_CAP_F16, "sm_75 has f16");
  ck_assert_msg(!(p.capabilities & VYRE_CAP_GRID_BARRIER), "no cooperative launch, no grid barrier");
  b->vt->destroy(b);
}
END_TEST

START_TEST(test_dispatch_roundtrip) {
  vyre_backend *b = mk();
  fk.set_hook(play, NULL);
  hook_mode = 1;
  hook_k = 3;
  const uint32_t n = 1000;
  prog p = prog_scale(n, 3, 128);
  uint32_t in[1000];
  for (uint32_t i = 0; i < n; i++) in[i] = i + 1;
  vyre_outputs *out = NULL;
  vyre_error err = VYRE_ERROR_INIT;
  ck_assert_msg(run_scale(b, &p, n, in, &out, NULL, &err) == VYRE_OK, "dispatch: %s", err.message);
  ck_assert_uint_eq(out->count, 1);
  ck_assert_uint_eq(out->items[0].size, n * 4);
  const uint32_t *o = out->items[0].data;
  for (uint32_t i = 0; i < n; i++) ck_assert_uint_eq(o[i], (i + 1) * 3);
  b->vt->outputs_free(b, out);
  b->vt->outputs_free(b, NULL);
  ck_assert_uint_eq(fk.pageable_copies(), 0);

  /* The launch: logical grid ceil(1000/128) = 8, block 128, parameters
   * (in, out, counts, params), counts = {count, len(in), len(out)} by
   * value, params = 0 (no trap or grid words). */
  ck_assert_uint_eq(fk.launch_count(), 1);
  fakecuda_launch l;
  ck_assert_int_eq(fk.launch_get(0, &l), 0);
  ck_assert_uint_eq(l.nparams, 4);
  ck_assert_uint_eq(l.counts_bytes, 12);
  ck_assert_uint_eq(l.counts[0], n);
  ck_assert_uint_eq(l.counts[1], n);
  ck_assert_uint_eq(l.params[3], 0);
  ck_assert_uint_eq(l.block[0], 128);
  ck_assert_uint_eq(l.block[1], 1);
  ck_assert_uint_eq(l.grid[1], 1);
  if (metric(b, "dispatch.fastpath_launches") == 0) {
    ck_assert_msg(l.grid[0] == 8, "logical grid: ceil(1000 / 128) workgroups, got %u", l.grid[0]);
  } else {
    /* Elementwise path: ceil(n / (wg.x * elements_per_thread)) blocks,
     * fewer than the logical grid, still covering every element. */
    uint32_t ept = (n + l.grid[0] * 128 - 1) / (l.grid[0] * 128);
    ck_assert_msg(ept >= 2 && l.grid[0] == (n + 128 * ept - 1) / (128 * ept),
                  "elementwise grid %u for %u elements of workgroup 128", l.grid[0], n);
  }
  ck_assert_int_eq(l.cooperative, 0);
  ck_assert_msg(l.stream != NULL, "launches go to a plugin stream, not the legacy stream");

  /* Outputs start zeroed: with no kernel at all the fake's garbage must
   * not show through. */
  hook_mode = 0;
  ck_assert_int_eq(run_scale(b, &p, n, in, &out, NULL, &err), VYRE_OK);
  for (uint32_t i = 0; i < n; i++) ck_assert_uint_eq(((uint32_t *)out->items[0].data)[i], 0);
  b->vt->outputs_free(b, out);
  b->vt->destroy(b);
  assert_no_leaks_after_destroy("roundtrip");
  free(p.bytes);
}
END_TEST

/* The count words a launch passed by value, and its params block pointer,
 * seen by a hook. */
static uint32_t seen_params[16];
static unsigned seen_counts_bytes;
static unsigned long long seen_block;
static void grab_params(const fakecuda_launch *l, void *user) {
  (void)user;
  memcpy(seen_params, l->counts, sizeof seen_params);
  seen_counts_bytes = l->counts_bytes;
  seen_block = l->params[l->nparams - 1];
}

START_TEST(test_params_and_ranges) {
  vyre_backend *b = mk();
  fk.set_hook(grab_params, NULL);
  prog p = prog_scale(300, 2, 64);
  uint32_t in[250] = {0};
  vyre_outputs *out = NULL;
  vyre_error err = VYRE_ERROR_INIT;
  ck_assert_int_eq(run_scale(b, &p, 250, in, &out, NULL, &err), VYRE_OK);
  ck_assert_msg(seen_params[0] == 300, "word 0 is the element count (max over outputs): %u",
                seen_params[0]);
  ck_assert_uint_eq(seen_params[1], 250);
  ck_assert_uint_eq(seen_params[2], 300);
  ck_assert_msg(seen_counts_bytes == 4 * (1 + 2), "counts: word 0 and one per buffer (%u bytes)",
                seen_counts_bytes);
  ck_assert_msg(seen_block == 0, "a kernel without trap or grid words gets no params block");
  b->vt->outputs_free(b, out);
  ck_assert_uint_eq(metric(b, "dispatch.params_skipped"), 1);

  /* Nothing but the input is uploaded, and other sizes reach the kernel. */
  unsigned long h2d = fk.calls("cuMemcpyHtoDAsync");
  ck_assert_int_eq(run_scale(b, &p, 200, in, &out, NULL, &err), VYRE_OK);
  b->vt->outputs_free(b, out);
  ck_assert_msg(fk.calls("cuMemcpyHtoDAsync") == h2d + 1, "only the input is uploaded (%lu)",
                fk.calls("cuMemcpyHtoDAsync") - h2d);
  ck_assert_uint_eq(metric(b, "dispatch.params_skipped"), 2);
  ck_assert_msg(seen_params[1] == 200, "new sizes reach the kernel: %u", seen_params[1]);
  free(p.bytes);
  /* A kernel that writes its params (trap words) gets a block, uploaded
   * zeroed before every launch, and the counts by value too. */
  p = prog_trap(64);
  vyre_program_ref tr = ref_of(&p);
  for (int k = 0; k < 2; k++) {
    h2d = fk.calls("cuMemcpyHtoDAsync");
    vyre_status ts = b->vt->dispatch(b, &tr, NULL, 0, NULL, &out, NULL, &err);
    if (ts == VYRE_OK) b->vt->outputs_free(b, out);
    ck_assert_msg(seen_block != 0, "a trap kernel has its params block");
    ck_assert_uint_eq(fk.calls("cuMemcpyHtoDAsync"), h2d + 1);
    const uint32_t *blk = (const uint32_t *)(uintptr_t)seen_block;
    ck_assert_msg(blk[0] == seen_params[0] && blk[2] == 0 && blk[3] == 0,
                  "the block holds the same words, trap words zeroed");
  }
  ck_assert_uint_eq(metric(b, "dispatch.params_skipped"), 2);
  free(p.bytes);

  /* Ranged output: only bytes [40, 40 + 24) of 100 u32 come back. */
  fk.set_hook(play, NULL);
  hook_mode = 4;
  p = prog_range(100, 40, 24);
  vyre_program_ref r = ref_of(&p);
  ck_assert_int_eq(b->vt->dispatch(b, &r, NULL, 0, NULL, &out, NULL, &err), VYRE_OK);
  ck_assert_uint_eq(out->items[0].size, 24);
  for (uint32_t i = 0; i < 6; i++) ck_assert_uint_eq(((uint32_t *)out->items[0].data)[i], 10 + i);
  b->vt->outputs_free(b, out);

  /* dispatch_into: a slot too small is refused before anything runs. */
  unsigned long launches = fk.launch_count();
  uint8_t small[16];
  memset(small, 0x77, sizeof small);
  vyre_output_slot slot = {small, sizeof small, 0};
  ck_assert_int_eq(b->vt->dispatch_into(b, &r, NULL, 0, NULL, &slot, 1, NULL, &err),
                   VYRE_INVALID_ARGUMENT);
  ck_assert_msg(strstr(err.message, "needs 24 bytes") != NULL, "names the size needed: %s",
                err.message);
  ck_assert_uint_eq(fk.launch_count(), launches);
  ck_assert_uint_eq(small[0], 0x77);
  ck_assert_int_eq(b->vt->dispatch_into(b, &r, NULL, 0, NULL, &slot, 2, NULL, &err),
                   VYRE_INVALID_ARGUMENT);
  uint32_t big[8];
  vyre_output_slot ok = {big, sizeof big, 0};
  ck_assert_int_eq(b->vt->dispatch_into(b, &r, NULL, 0, NULL, &ok, 1, NULL, &err), VYRE_OK);
  ck_assert_uint_eq(ok.size, 24);
  ck_assert_uint_eq(big[0], 10);
  b->vt->destroy(b);
  free(p.bytes);
}
END_TEST

START_TEST(test_timing_fixpoint_grid) {
  vyre_backend *b = mk();
  prog p = prog_inc(64);
  uint32_t data[256] = {0};
  vyre_input in[1] = {{data, sizeof data}};
  vyre_program_ref r = ref_of(&p);
  vyre_dispatch_options o;
  memset(&o, 0, sizeof o);
  o.struct_size = sizeof o;
  o.fixpoint_iterations = 5;
  vyre_timing t;
  memset(&t, 0, sizeof t);
  t.struct_size = sizeof t;
  vyre_outputs *out = NULL;
  vyre_error err = VYRE_ERROR_INIT;
  fk.set_hook(play, NULL);
  hook_mode = 2;
  ck_assert_int_eq(b->vt->dispatch(b, &r, in, 1, &o, &out, &t, &err), VYRE_OK);
  ck_assert_uint_eq(fk.launch_count(), 5);
  ck_assert_uint_eq(((uint32_t *)out->items[0].data)[17], 5);
  ck_assert_msg((t.valid & (VYRE_TIMING_WALL | VYRE_TIMING_DEVICE | VYRE_TIMING_ENQUEUE |
                            VYRE_TIMING_WAIT)) ==
                    (VYRE_TIMING_WALL | VYRE_TIMING_DEVICE | VYRE_TIMING_ENQUEUE | VYRE_TIMING_WAIT),
                "all four timings are filled (valid 0x%x)", t.valid);
  ck_assert_msg(t.device_ns >= 4000 && t.device_ns <= 6000,
                "device time spans the 5 launches (fake: 1 us per operation): %llu ns",
                (unsigned long long)t.device_ns);
  ck_assert_msg(t.wall_ns >= t.enqueue_ns, "wall covers enqueue");
  b->vt->outputs_free(b, out);

  /* A grid override launches exactly that grid and turns the fast path off. */
  memset(&o, 0, sizeof o);
  o.struct_size = sizeof o;
  o.grid[0] = 3;
  o.grid[1] = 2;
  uint64_t compiles = metric(b, "cache.module.compiles");
  ck_assert_int_eq(b->vt->dispatch(b, &r, in, 1, &o, &out, NULL, &err), VYRE_OK);
  fakecuda_launch l;
  fk.launch_get(fk.launch_count() - 1, &l);
  ck_assert_uint_eq(l.grid[0], 3);
  ck_assert_uint_eq(l.grid[1], 2);
  ck_assert_uint_eq(l.grid[2], 1);
  ck_assert_uint_eq(metric(b, "cache.module.compiles"), compiles + 1);
  b->vt->outputs_free(b, out);

  /* A workgroup override is compiled in and launched. */
  o.grid[0] = o.grid[1] = 0;
  o.workgroup[0] = 32;
  ck_assert_int_eq(b->vt->dispatch(b, &r, in, 1, &o, &out, NULL, &err), VYRE_OK);
  fk.launch_get(fk.launch_count() - 1, &l);
  ck_assert_uint_eq(l.block[0], 32);
  b->vt->outputs_free(b, out);

  /* A smaller timing struct is honoured. */
  struct {
    uint32_t size, valid;
    uint64_t wall;
    uint64_t guard;
  } tiny = {16, 0, 0, 0xDEADull};
  ck_assert_int_eq(b->vt->dispatch(b, &r, in, 1, NULL, &out, (vyre_timing *)&tiny, &err), VYRE_OK);
  ck_assert_msg(tiny.valid & VYRE_TIMING_WALL, "wall time written");
  ck_assert_msg(tiny.guard == 0xDEADull, "nothing past struct_size is written");
  b->vt->outputs_free(b, out);
  b->vt->destroy(b);
  assert_no_leaks_after_destroy("timing");
  free(p.bytes);
}
END_TEST

START_TEST(test_trap_and_empty) {
  vyre_backend *b = mk();
  fk.set_hook(play, NULL);
  hook_mode = 3;
  prog p = prog_trap(64);
  vyre_program_ref r = ref_of(&p);
  vyre_outputs *out = NULL;
  vyre_error err = VYRE_ERROR_INIT;
  ck_assert_int_eq(b->vt->dispatch(b, &r, NULL, 0, NULL, &out, NULL, &err), VYRE_TRAP);
  ck_assert_ptr_null(out);
  ck_assert_int_eq(err.native_code, 7);
  ck_assert_msg(strstr(err.message, "trap code 7 at instruction 4") && strstr(err.message, "Fix:"),
                "names code and instruction: %s", err.message);
  ck_assert_uint_eq(metric(b, "dispatch.traps"), 1);
  /* Still usable; the trap words of the next run start at zero. */
  hook_mode = 0;
  ck_assert_int_eq(b->vt->dispatch(b, &r, NULL, 0, NULL, &out, NULL, &err), VYRE_OK);
  b->vt->outputs_free(b, out);
  free(p.bytes);

  /* No elements: nothing is launched, outputs are empty. */
  p = prog_inc(64);
  r = ref_of(&p);
  unsigned long launches = fk.launch_count();
  uint32_t dummy = 0;
  vyre_input in[1] = {{&dummy, 0}};
  ck_assert_int_eq(b->vt->dispatch(b, &r, in, 1, NULL, &out, NULL, &err), VYRE_OK);
  ck_assert_uint_eq(fk.launch_count(), launches);
  ck_assert_uint_eq(out->count, 1);
  ck_assert_uint_eq(out->items[0].size, 0);
  b->vt->outputs_free(b, out);
  b->vt->destroy(b);
  assert_no_leaks_after_destroy("trap");
  free(p.bytes);
}
END_TEST

/* ------------------------------------------------------------------ */
/* async                                                               */
/* ------------------------------------------------------------------ */
START_TEST(test_async_orders) {
  vyre_backend *b = mk();
  fk.set_hook(play, NULL);
  hook_mode = 1;
  hook_k = 2;
  prog p = prog_scale(64, 2, 64);
  vyre_program_ref r = ref_of(&p);
  uint32_t data[64];
  for (int i = 0; i < 64; i++) data[i] = (uint32_t)i;
  vyre_input in[1] = {{data, sizeof data}};
  vyre_error err = VYRE_ERROR_INIT;
  vyre_outputs *out = NULL;
  vyre_pending h = 0;
  int ready = -1;

  /* dispatch -> poll (not ready) -> complete -> poll (ready) -> wait */
  fk.hold_events(1);
  ck_assert_int_eq(b->vt->dispatch_async(b, &r, in, 1, NULL, &h, &err), VYRE_OK);
  ck_assert_msg(h != 0, "a pending handle");
  memset(data, 0xFF, sizeof data); /* inputs were staged before return */
  ck_assert_int_eq(b->vt->pending_poll(b, h, &ready, &err), VYRE_OK);
  ck_assert_int_eq(ready, 0);
  fk.complete_events();
  ck_assert_int_eq(b->vt->pending_poll(b, h, &ready, &err), VYRE_OK);
  ck_assert_int_eq(ready, 1);
  vyre_timing t;
  memset(&t, 0, sizeof t);
  t.struct_size = sizeof t;
  ck_assert_int_eq(b->vt->pending_wait(b, h, &out, &t, &err), VYRE_OK);
  ck_assert_uint_eq(((uint32_t *)out->items[0].data)[10], 20);
  ck_assert_msg(t.valid & VYRE_TIMING_DEVICE, "async waits report device time");
  b->vt->outputs_free(b, out);
  ck_assert_int_eq(b->vt->pending_wait(b, h, &out, NULL, &err), VYRE_INVALID_HANDLE);
  ck_assert_int_eq(b->vt->pending_poll(b, h, &ready, &err), VYRE_INVALID_HANDLE);
  ck_assert_int_eq(b->vt->pending_release(b, h, &err), VYRE_INVALID_HANDLE);

  /* wait without poll, events held: wait synchronises. */
  ck_assert_int_eq(b->vt->dispatch_async(b, &r, in, 1, NULL, &h, &err), VYRE_OK);
  ck_assert_int_eq(b->vt->pending_wait(b, h, &out, NULL, &err), VYRE_OK);
  b->vt->outputs_free(b, out);

  /* release before completion: deferred, reclaimed once done. */
  ck_assert_int_eq(b->vt->dispatch_async(b, &r, in, 1, NULL, &h, &err), VYRE_OK);
  ck_assert_int_eq(b->vt->pending_release(b, h, &err), VYRE_OK);
  ck_assert_uint_eq(metric(b, "pending.deferred"), 1);
  ck_assert_uint_eq(metric(b, "dispatch.in_flight"), 1);
  ck_assert_int_eq(b->vt->pending_release(b, h, &err), VYRE_INVALID_HANDLE);
  ck_assert_int_eq(b->vt->pending_wait(b, h, &out, NULL, &err), VYRE_INVALID_HANDLE);
  fk.complete_events();
  ck_assert_int_eq(b->vt->prepare(b, &err), VYRE_OK); /* any later call reaps */
  ck_assert_uint_eq(metric(b, "pending.deferred"), 0);
  ck_assert_uint_eq(metric(b, "dispatch.in_flight"), 0);
  ck_assert_uint_eq(metric(b, "pending.deferred_reaped"), 1);

  /* release after poll, and release of a completed one. */
  fk.hold_events(0);
  ck_assert_int_eq(b->vt->dispatch_async(b, &r, in, 1, NULL, &h, &err), VYRE_OK);
  ck_assert_int_eq(b->vt->pending_poll(b, h, &ready, &err), VYRE_OK);
  ck_assert_int_eq(b->vt->pending_release(b, h, &err), VYRE_OK);
  ck_assert_uint_eq(metric(b, "pending.deferred"), 0);

  /* A foreign handle and 0. */
  ck_assert_int_eq(b->vt->pending_wait(b, 0, &out, NULL, &err), VYRE_INVALID_HANDLE);
  ck_assert_int_eq(b->vt->pending_poll(b, 0x5000000100000001ull, &ready, &err),
                   VYRE_INVALID_HANDLE);

  /* destroy with work still pending, both held and not. */
  fk.hold_events(1);
  vyre_pending h1, h2;
  ck_assert_int_eq(b->vt->dispatch_async(b, &r, in, 1, NULL, &h1, &err), VYRE_OK);
  ck_assert_int_eq(b->vt->dispatch_async(b, &r, in, 1, NULL, &h2, &err), VYRE_OK);
  ck_assert_int_eq(b->vt->pending_release(b, h2, &err), VYRE_OK);
  b->vt->destroy(b);
  assert_no_leaks_after_destroy("async destroy with pending work");
  free(p.bytes);
}
END_TEST

/* Two threads dispatching on one instance at once. */
typedef struct thread_arg {
  vyre_backend *b;
  const prog *p;
  int failures;
} thread_arg;

static void *hammer(void *v) {
  thread_arg *a = v;
  uint32_t data[64] = {0};
  vyre_input in[1] = {{data, sizeof data}};
  vyre_program_ref r = ref_of(a->p);
  for (int i = 0; i < 40; i++) {
    vyre_error err = VYRE_ERROR_INIT;
    vyre_outputs *out = NULL;
    vyre_pending h;
    if (i % 2) {
      if (a->b->vt->dispatch(a->b, &r, in, 1, NULL, &out, NULL, &err) != VYRE_OK) a->failures++;
      a->b->vt->outputs_free(a->b, out);
    } else if (a->b->vt->dispatch_async(a->b, &r, in, 1, NULL, &h, &err) != VYRE_OK ||
               a->b->vt->pending_wait(a->b, h, &out, NULL, &err) != VYRE_OK) {
      a->failures++;
    } else {
      a->b->vt->outputs_free(a->b, out);
    }
  }
  return NULL;
}

START_TEST(test_threads) {
  vyre_backend *b = mk();
  prog p = prog_scale(64, 2, 64);
  thread_arg a[4];
  pthread_t t[4];
  for (int i = 0; i < 4; i++) {
    a[i].b = b;
    a[i].p = &p;
    a[i].failures = 0;
    pthread_create(&t[i], NULL, hammer, &a[i]);
  }
  for (int i = 0; i < 4; i++) {
    pthread_join(t[i], NULL);
    ck_assert_msg(a[i].failures == 0, "thread %d saw %d failed dispatches", i, a[i].failures);
  }
  ck_assert_uint_eq(metric(b, "cache.module.compiles") >= 1, 1);
  ck_assert_uint_eq(metric(b, "dispatch.count"), 160);
  b->vt->destroy(b);
  assert_no_leaks_after_destroy("threads");
  free(p.bytes);
}
END_TEST

/* ------------------------------------------------------------------ */
/* staging: host transfers larger than one chunk                       */
/* ------------------------------------------------------------------ */
/* A ring of 3 chunks of 1 MiB and 3 copy threads; buffers of 2.7 MiB
 * (two whole chunks and an unaligned tail), so the copies are split
 * over the crew (a part is at least 256 KiB) and the ring wraps. */
#define BIG_N 700001u
#define CHUNK (1u << 20)

static void staging_env(const char *threads) {
  setenv("VYRE_CUDA_STAGING_CHUNK", "1M", 1);
  setenv("VYRE_CUDA_STAGING_CHUNKS", "3", 1);
  setenv("VYRE_CUDA_COPY_THREADS", threads, 1);
}

static uint32_t *big_input(void) {
  uint32_t *in = malloc((size_t)BIG_N * 4u);
  ck_assert_ptr_nonnull(in);
  for (uint32_t i = 0; i < BIG_N; i++) in[i] = i * 2654435761u + 1u;
  return in;
}

static void check_scaled(const uint32_t *in, const uint32_t *out, uint32_t k, const char *what) {
  for (uint32_t i = 0; i < BIG_N; i++)
    if (out[i] != in[i] * k)
      ck_abort_msg("%s: word %u is 0x%08x, expected 0x%08x", what, i, out[i], in[i] * k);
}

static const uint64_t big_bytes = (uint64_t)BIG_N * 4u;
static uint64_t chunks_of(uint64_t bytes) { return (bytes + CHUNK - 1) / CHUNK; }

static void staged_dispatches(const char *threads) {
  staging_env(threads);
  vyre_backend *b = mk();
  fk.set_hook(play, NULL);
  hook_mode = 1;
  hook_k = 3;
  prog p = prog_scale(BIG_N, 3, 128);
  vyre_program_ref r = ref_of(&p);
  uint32_t *in = big_input();
  vyre_input inputs[1] = {{in, big_bytes}};
  vyre_error err = VYRE_ERROR_INIT;
  ck_assert_uint_eq(metric(b, "staging.pinned_bytes"), 0);

  /* dispatch: the input goes up in 3 chunks, the output comes back in 3. */
  vyre_outputs *out = NULL;
  ck_assert_msg(b->vt->dispatch(b, &r, inputs, 1, NULL, &out, NULL, &err) == VYRE_OK,
                "staged dispatch: %s", err.message);
  ck_assert_uint_eq(out->items[0].size, big_bytes);
  check_scaled(in, out->items[0].data, 3, "dispatch");
  b->vt->outputs_free(b, out);
  ck_assert_uint_eq(metric(b, "staging.transfers"), 2);
  ck_assert_uint_eq(metric(b, "staging.chunk_copies"), 2 * chunks_of(big_bytes));
  ck_assert_uint_eq(metric(b, "staging.bytes_up"), big_bytes);
  ck_assert_uint_eq(metric(b, "staging.bytes_down"), big_bytes);
  ck_assert_uint_eq(metric(b, "staging.pinned_bytes"), 3 * CHUNK);
  if (strcmp(threads, "1") == 0)
    ck_assert_msg(metric(b, "staging.split_copies") == 0, "one thread copies alone");
  else
    ck_assert_msg(metric(b, "staging.split_copies") > 0, "1 MiB chunks are split over the crew");
  ck_assert_msg(metric(b, "pool.pinned.live_bytes") == 0 &&
                    metric(b, "pool.pinned.cached_bytes") < big_bytes,
                "large buffers are not staged whole through the pinned pool");
  ck_assert_uint_eq(fk.pageable_copies(), 0);

  /* The hot path allocates no pinned memory: the ring is kept. */
  unsigned long host_allocs = fk.calls("cuMemHostAlloc");
  vyre_output_slot slot = {malloc(big_bytes), big_bytes, 0};
  ck_assert_int_eq(b->vt->dispatch_into(b, &r, inputs, 1, NULL, &slot, 1, NULL, &err), VYRE_OK);
  ck_assert_uint_eq(slot.size, big_bytes);
  check_scaled(in, slot.data, 3, "dispatch_into");

  /* Async: the input is read before dispatch_async returns. */
  vyre_pending h = 0;
  fk.hold_events(1);
  ck_assert_int_eq(b->vt->dispatch_async(b, &r, inputs, 1, NULL, &h, &err), VYRE_OK);
  uint32_t *saved = malloc(big_bytes);
  memcpy(saved, in, big_bytes);
  memset(in, 0xAB, big_bytes);
  fk.complete_events();
  fk.hold_events(0);
  ck_assert_int_eq(b->vt->pending_wait(b, h, &out, NULL, &err), VYRE_OK);
  check_scaled(saved, out->items[0].data, 3, "dispatch_async");
  b->vt->outputs_free(b, out);
  memcpy(in, saved, big_bytes);
  /* Released before completion: deferred, then reaped. */
  ck_assert_int_eq(b->vt->dispatch_async(b, &r, inputs, 1, NULL, &h, &err), VYRE_OK);
  ck_assert_int_eq(b->vt->pending_release(b, h, &err), VYRE_OK);
  ck_assert_uint_eq(fk.calls("cuMemHostAlloc"), host_allocs);

  /* Small buffers keep the pool path: the ring is not touched. */
  uint64_t transfers = metric(b, "staging.transfers");
  prog small = prog_scale(1024, 3, 128);
  ck_assert_int_eq(run_scale(b, &small, 1024, in, &out, NULL, &err), VYRE_OK);
  b->vt->outputs_free(b, out);
  ck_assert_uint_eq(metric(b, "staging.transfers"), transfers);

  /* shutdown gives the ring back; the next large transfer takes it again. */
  ck_assert_int_eq(b->vt->shutdown(b, &err), VYRE_OK);
  ck_assert_uint_eq(metric(b, "staging.pinned_bytes"), 0);
  ck_assert_int_eq(b->vt->dispatch_into(b, &r, inputs, 1, NULL, &slot, 1, NULL, &err), VYRE_OK);
  check_scaled(in, slot.data, 3, "after shutdown");
  b->vt->destroy(b);
  assert_no_leaks_after_destroy("staged dispatches");
  free(slot.data);
  free(saved);
  free(in);
  free(p.bytes);
  free(small.bytes);
}

START_TEST(test_staging_dispatch) { staged_dispatches("3"); }
END_TEST

START_TEST(test_staging_dispatch_one_thread) { staged_dispatches("1"); }
END_TEST

START_TEST(test_staging_resident) {
  staging_env("4");
  vyre_backend *b = mk();
  vyre_error err = VYRE_ERROR_INIT;
  const uint64_t size = 3 * CHUNK + 13;
  vyre_resident h = 0, h2 = 0;
  ck_assert_int_eq(b->vt->resident_alloc(b, size, &h, &err), VYRE_OK);
  ck_assert_int_eq(b->vt->resident_alloc(b, size, &h2, &err), VYRE_OK);
  uint8_t *buf = malloc(size), *back = malloc(size), *back2 = malloc(size);
  for (uint64_t i = 0; i < size; i++) buf[i] = (uint8_t)(i * 131 + (i >> 12));
  unsigned long syncs = fk.calls("cuStreamSynchronize");
  ck_assert_int_eq(b->vt->resident_upload(b, h, buf, size, &err), VYRE_OK);
  ck_assert_uint_eq(fk.calls("cuStreamSynchronize") - syncs, 1);
  ck_assert_uint_eq(metric(b, "staging.chunk_copies"), chunks_of(size));
  memset(back, 0, size);
  ck_assert_int_eq(b->vt->resident_download(b, h, back, size, &err), VYRE_OK);
  ck_assert_msg(memcmp(buf, back, size) == 0, "a staged upload and download round trip");

  /* Several ranges in one call share chunks: pieces of both buffers. */
  vyre_resident_copy up[3] = {{h2, 0, buf + 5, CHUNK + 7},
                              {h2, CHUNK + 7, buf, size - CHUNK - 7},
                              {h, 100, buf + 1, 1000}};
  ck_assert_int_eq(b->vt->resident_upload_many(b, up, 3, &err), VYRE_OK);
  memset(back, 0, size);
  memset(back2, 0, size);
  vyre_resident_copy down[2] = {{h, 0, back, size}, {h2, 0, back2, size}};
  ck_assert_int_eq(b->vt->resident_download_many(b, down, 2, &err), VYRE_OK);
  ck_assert_int_eq(memcmp(back2, buf + 5, CHUNK + 7), 0);
  ck_assert_int_eq(memcmp(back2 + CHUNK + 7, buf, size - CHUNK - 7), 0);
  ck_assert_int_eq(memcmp(back, buf, 100), 0);
  ck_assert_int_eq(memcmp(back + 100, buf + 1, 1000), 0);
  ck_assert_int_eq(memcmp(back + 1100, buf + 1100, size - 1100), 0);
  ck_assert_uint_eq(fk.pageable_copies(), 0);
  ck_assert_uint_eq(metric(b, "pool.pinned.live_bytes"), 0);

  /* Two threads' large transfers take turns on the ring. */
  ck_assert_int_eq(b->vt->resident_free(b, h, &err), VYRE_OK);
  ck_assert_int_eq(b->vt->resident_free(b, h2, &err), VYRE_OK);
  b->vt->destroy(b);
  assert_no_leaks_after_destroy("staged resident");
  free(buf);
  free(back);
  free(back2);
}
END_TEST

/* A driver failure in the middle of a chunked copy: the call fails naming
 * the driver call with a Fix, nothing leaks, the instance still works. */
static void staged_failure(vyre_backend *b, const char *call, unsigned long nth, int resident) {
  prog p = prog_scale(BIG_N, 3, 128);
  vyre_program_ref r = ref_of(&p);
  uint32_t *in = big_input();
  vyre_input inputs[1] = {{in, big_bytes}};
  vyre_error err = VYRE_ERROR_INIT;
  vyre_outputs *out = NULL;
  vyre_resident h = 0;
  if (resident) ck_assert_int_eq(b->vt->resident_alloc(b, big_bytes, &h, &err), VYRE_OK);
  fk.inject(call, nth, CUDA_ERROR_INVALID_VALUE, 1);
  vyre_status st;
  if (!resident) {
    st = b->vt->dispatch(b, &r, inputs, 1, NULL, &out, NULL, &err);
  } else {
    st = b->vt->resident_upload(b, h, in, big_bytes, &err);
    if (st == VYRE_OK) st = b->vt->resident_download(b, h, in, big_bytes, &err);
  }
  ck_assert_msg(st == VYRE_DRIVER, "%s #%lu mid-transfer fails the call: %s [%s]", call, nth,
                err.message, vyre_status_name(st));
  ck_assert_msg(out == NULL, "no outputs from a failed dispatch");
  ck_assert_msg(strstr(err.message, call) && strstr(err.message, "Fix:"),
                "the error names %s and has a fix: %s", call, err.message);
  ck_assert_uint_eq(fk.calls(call) >= nth, 1);
  ck_assert_uint_eq(metric(b, "pool.pinned.live_bytes"), 0);
  /* Still usable, and the ring is not left half used. */
  if (!resident) {
    ck_assert_msg(b->vt->dispatch(b, &r, inputs, 1, NULL, &out, NULL, &err) == VYRE_OK,
                  "dispatch after %s failed: %s", call, err.message);
    check_scaled(in, out->items[0].data, 3, "after a failed transfer");
    b->vt->outputs_free(b, out);
  } else {
    uint32_t *back = malloc(big_bytes);
    ck_assert_int_eq(b->vt->resident_upload(b, h, in, big_bytes, &err), VYRE_OK);
    ck_assert_int_eq(b->vt->resident_download(b, h, back, big_bytes, &err), VYRE_OK);
    ck_assert_int_eq(memcmp(back, in, big_bytes), 0);
    free(back);
    ck_assert_int_eq(b->vt->resident_free(b, h, &err), VYRE_OK);
  }
  free(in);
  free(p.bytes);
}

/* With the default 16 MiB chunks, a transfer of a few MiB (above the 2 MiB
 * threshold) is cut into pieces of about a tenth of it (at least 1 MiB)
 * that go round the ring, so host copies overlap the device's. */
START_TEST(test_staging_pieces) {
  unsetenv("VYRE_CUDA_STAGING_CHUNK");
  unsetenv("VYRE_CUDA_STAGING_CHUNKS");
  setenv("VYRE_CUDA_COPY_THREADS", "3", 1);
  vyre_backend *b = mk();
  vyre_error err = VYRE_ERROR_INIT;
  const uint64_t size = 12600000u + 13u;
  const uint64_t cap = (size / 10 + 4095u) & ~(uint64_t)4095u; /* 1,261,568 */
  vyre_resident h = 0;
  ck_assert_int_eq(b->vt->resident_alloc(b, size, &h, &err), VYRE_OK);
  uint8_t *buf = malloc(size), *back = malloc(size);
  ck_assert(buf && back);
  for (uint64_t i = 0; i < size; i++) buf[i] = (uint8_t)(i * 7 + (i >> 13));
  ck_assert_int_eq(b->vt->resident_upload(b, h, buf, size, &err), VYRE_OK);
  ck_assert_uint_eq(metric(b, "staging.chunk_copies"), (size + cap - 1) / cap);
  ck_assert_uint_eq(metric(b, "staging.chunk_bytes"), 16u << 20);
  memset(back, 0, size);
  ck_assert_int_eq(b->vt->resident_download(b, h, back, size, &err), VYRE_OK);
  ck_assert_msg(memcmp(buf, back, size) == 0, "pieces round trip byte for byte");
  ck_assert_uint_eq(metric(b, "staging.chunk_copies"), 2 * ((size + cap - 1) / cap));
  /* At or below 2 MiB the pinned pool serves the copy, not the ring. */
  uint64_t copies = metric(b, "staging.chunk_copies");
  vyre_resident_copy two = {h, 0, buf, 2u << 20};
  ck_assert_msg(b->vt->resident_upload_many(b, &two, 1, &err) == VYRE_OK, "2 MiB upload: %s",
                err.message);
  ck_assert_uint_eq(metric(b, "staging.chunk_copies"), copies);
  ck_assert_int_eq(b->vt->resident_free(b, h, &err), VYRE_OK);
  free(buf);
  free(back);
  b->vt->destroy(b);
  assert_no_leaks_after_destroy("staging pieces");
  unsetenv("VYRE_CUDA_COPY_THREADS");
}
END_TEST

START_TEST(test_staging_failures) {
  staging_env("3");
  vyre_backend *b = mk();
  fk.set_hook(play, NULL);
  hook_mode = 1;
  hook_k = 3;
  staged_failure(b, "cuMemcpyHtoDAsync", 2, 0);  /* the input's second chunk */
  staged_failure(b, "cuMemcpyDtoHAsync", 3, 0);  /* the output's last chunk */
  staged_failure(b, "cuEventRecord", 2, 0);      /* sealing a chunk */
  staged_failure(b, "cuEventSynchronize", 2, 0); /* waiting for a chunk */
  staged_failure(b, "cuMemcpyHtoDAsync", 3, 1);
  staged_failure(b, "cuMemcpyDtoHAsync", 2, 1);
  staged_failure(b, "cuEventSynchronize", 1, 1);
  b->vt->destroy(b);
  assert_no_leaks_after_destroy("staged failures");

  /* The ring itself cannot be allocated: the call fails with a Fix, and
   * the next large transfer tries again. */
  b = mk();
  prog p = prog_scale(BIG_N, 3, 128);
  vyre_program_ref r = ref_of(&p);
  uint32_t *in = big_input();
  vyre_input inputs[1] = {{in, big_bytes}};
  vyre_error err = VYRE_ERROR_INIT;
  vyre_outputs *out = NULL;
  fk.inject("cuMemHostAlloc", 1, CUDA_ERROR_OUT_OF_MEMORY, 0);
  ck_assert_int_eq(b->vt->dispatch(b, &r, inputs, 1, NULL, &out, NULL, &err), VYRE_OUT_OF_MEMORY);
  ck_assert_msg(strstr(err.message, "staging ring") && strstr(err.message, "VYRE_CUDA_STAGING_CHUNK"),
                "names the ring and the knob: %s", err.message);
  fk.clear_faults();
  ck_assert_int_eq(b->vt->dispatch(b, &r, inputs, 1, NULL, &out, NULL, &err), VYRE_OK);
  check_scaled(in, out->items[0].data, 3, "after the ring could be allocated");
  b->vt->outputs_free(b, out);
  b->vt->destroy(b);
  assert_no_leaks_after_destroy("staging ring allocation failure");

  /* One refusal: the pinned pool is trimmed and the ring allocated on
   * the second try. */
  b = mk();
  prog small = prog_scale(1000, 3, 128);
  ck_assert_int_eq(run_scale(b, &small, 1000, in, &out, NULL, &err), VYRE_OK); /* fills the pool */
  b->vt->outputs_free(b, out);
  free(small.bytes);
  ck_assert_uint_eq(metric(b, "staging.pinned_bytes"), 0);
  ck_assert_msg(metric(b, "pool.pinned.cached_bytes") > 0, "the pinned pool keeps blocks");
  uint64_t frees = metric(b, "pool.pinned.driver_frees");
  fk.inject("cuMemHostAlloc", 1, CUDA_ERROR_OUT_OF_MEMORY, 1);
  ck_assert_msg(b->vt->dispatch(b, &r, inputs, 1, NULL, &out, NULL, &err) == VYRE_OK,
                "the ring is allocated after the pool is trimmed: %s", err.message);
  check_scaled(in, out->items[0].data, 3, "after a trimmed retry");
  b->vt->outputs_free(b, out);
  ck_assert_msg(metric(b, "pool.pinned.driver_frees") > frees,
                "the pool's cached pinned blocks were freed before the retry");
  b->vt->destroy(b);
  assert_no_leaks_after_destroy("staging ring allocation failure");
  free(in);
  free(p.bytes);
}
END_TEST

typedef struct big_arg {
  vyre_backend *b;
  const prog *p;
  int failures;
} big_arg;

static void *big_hammer(void *arg) {
  big_arg *a = arg;
  uint32_t *in = big_input();
  vyre_input inputs[1] = {{in, big_bytes}};
  vyre_program_ref r = ref_of(a->p);
  for (int i = 0; i < 3; i++) {
    vyre_error err = VYRE_ERROR_INIT;
    vyre_outputs *out = NULL;
    if (a->b->vt->dispatch(a->b, &r, inputs, 1, NULL, &out, NULL, &err) != VYRE_OK) {
      a->failures++;
      continue;
    }
    const uint32_t *o = out->items[0].data;
    for (uint32_t k = 0; k < BIG_N; k++)
      if (o[k] != in[k] * 3) {
        a->failures++;
        break;
      }
    a->b->vt->outputs_free(a->b, out);
  }
  free(in);
  return NULL;
}

START_TEST(test_staging_threads) {
  staging_env("2");
  vyre_backend *b = mk();
  fk.set_hook(play, NULL);
  hook_mode = 1;
  hook_k = 3;
  prog p = prog_scale(BIG_N, 3, 128);
  big_arg a[3];
  pthread_t t[3];
  for (int i = 0; i < 3; i++) {
    a[i].b = b;
    a[i].p = &p;
    a[i].failures = 0;
    pthread_create(&t[i], NULL, big_hammer, &a[i]);
  }
  for (int i = 0; i < 3; i++) {
    pthread_join(t[i], NULL);
    ck_assert_msg(a[i].failures == 0, "thread %d saw %d failed or wrong dispatches", i,
                  a[i].failures);
  }
  ck_assert_uint_eq(metric(b, "staging.transfers"), 18);
  b->vt->destroy(b);
  assert_no_leaks_after_destroy("staging threads");
  free(p.bytes);
}
END_TEST

/* ------------------------------------------------------------------ */
/* resident                                                            */
/* ------------------------------------------------------------------ */
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

/* A repeated sequence of pipeline steps checked once: later calls with the
 * same step list find its graph by the list as passed (graph.fast_hits),
 * resolve nothing, and still refuse a released pipeline or a freed buffer. */
START_TEST(test_graph_fast_path) {
  vyre_backend *b = mk();
  fk.set_hook(play, NULL);
  hook_mode = 2;
  prog p = prog_inc(64);
  vyre_error err = VYRE_ERROR_INIT;
  vyre_pipeline pl = 0;
  ck_assert_int_eq(b->vt->pipeline_create(b, p.bytes, p.size, NULL, &pl, &err), VYRE_OK);
  vyre_program_ref r = VYRE_PROGRAM_PIPELINE(pl);
  vyre_resident a = 0, c = 0;
  ck_assert_int_eq(b->vt->resident_alloc(b, 1024, &a, &err), VYRE_OK);
  ck_assert_int_eq(b->vt->resident_alloc(b, 512, &c, &err), VYRE_OK);
  vyre_sequence_step steps[3];
  memset(steps, 0, sizeof steps);
  for (int i = 0; i < 3; i++) {
    steps[i].struct_size = sizeof steps[i];
    steps[i].program = &r;
    steps[i].buffer_count = 1;
    steps[i].buffers = i == 1 ? &c : &a;
  }
  uint32_t first[2];
  vyre_resident_copy read = {a, 0, first, sizeof first};
  unsigned long captures = fk.calls("cuStreamBeginCapture");
  /* a: +2 per replay, c: +1; 3 replays, then 5, then 2. */
  ck_assert_int_eq(b->vt->dispatch_sequence(b, steps, 3, 3, &read, 1, NULL, &err), VYRE_OK);
  ck_assert_uint_eq(first[0], 6);
  ck_assert_uint_eq(metric(b, "graph.fast_hits"), 0);
  uint64_t launches = metric(b, "dispatch.launches");
  ck_assert_int_eq(b->vt->dispatch_sequence(b, steps, 3, 5, &read, 1, NULL, &err), VYRE_OK);
  ck_assert_uint_eq(first[0], 16);
  ck_assert_uint_eq(metric(b, "graph.fast_hits"), 1);
  ck_assert_uint_eq(metric(b, "dispatch.launches") - launches, 15);
  ck_assert_uint_eq(fk.calls("cuStreamBeginCapture") - captures, 1);
  /* Options are part of the list: two fixpoint iterations are another graph. */
  vyre_dispatch_options o;
  memset(&o, 0, sizeof o);
  o.struct_size = sizeof o;
  o.fixpoint_iterations = 2;
  steps[2].options = &o;
  ck_assert_int_eq(b->vt->dispatch_sequence(b, steps, 3, 2, &read, 1, NULL, &err), VYRE_OK);
  ck_assert_uint_eq(first[0], 16 + 2 * 3);
  ck_assert_uint_eq(fk.calls("cuStreamBeginCapture") - captures, 2);
  ck_assert_uint_eq(metric(b, "graph.fast_hits"), 1);
  ck_assert_int_eq(b->vt->dispatch_sequence(b, steps, 3, 2, &read, 1, NULL, &err), VYRE_OK);
  ck_assert_uint_eq(first[0], 22 + 2 * 3);
  ck_assert_uint_eq(metric(b, "graph.fast_hits"), 2);
  /* A read out of range is still refused before anything runs. */
  unsigned long before = fk.launch_count();
  vyre_resident_copy bad = {a, 2000, first, 16};
  ck_assert_int_eq(b->vt->dispatch_sequence(b, steps, 3, 2, &bad, 1, NULL, &err),
                   VYRE_INVALID_ARGUMENT);
  ck_assert_uint_eq(fk.launch_count(), before);
  /* A freed buffer drops the graphs using it: the stale handle is refused. */
  ck_assert_int_eq(b->vt->resident_free(b, c, &err), VYRE_OK);
  ck_assert_int_eq(b->vt->dispatch_sequence(b, steps, 3, 2, &read, 1, NULL, &err),
                   VYRE_INVALID_HANDLE);
  ck_assert_uint_eq(fk.launch_count(), before);
  /* A released pipeline's handle is refused, though a graph still matches. */
  steps[1].buffers = &a;
  steps[2].options = NULL;
  ck_assert_int_eq(b->vt->dispatch_sequence(b, steps, 3, 2, &read, 1, NULL, &err), VYRE_OK);
  ck_assert_int_eq(b->vt->dispatch_sequence(b, steps, 3, 2, &read, 1, NULL, &err), VYRE_OK);
  uint64_t hits = metric(b, "graph.fast_hits");
  ck_assert_uint_eq(metric(b, "graph.entries"), 1);
  before = fk.launch_count();
  ck_assert_int_eq(b->vt->pipeline_release(b, pl, &err), VYRE_OK);
  ck_assert_int_eq(b->vt->dispatch_sequence(b, steps, 3, 2, &read, 1, NULL, &err),
                   VYRE_INVALID_HANDLE);
  ck_assert_uint_eq(fk.launch_count(), before);
  /* (the fast key matched; the handle check sent it to the full path) */
  ck_assert_uint_eq(metric(b, "graph.fast_hits"), hits + 1);
  b->vt->destroy(b);
  assert_no_leaks_after_destroy("graph fast path");
  free(p.bytes);
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

/* ------------------------------------------------------------------ */
/* pools                                                               */
/* ------------------------------------------------------------------ */
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

/* ------------------------------------------------------------------ */
/* caches                                                              */
/* ------------------------------------------------------------------ */
static int count_files(const char *dir, const char *suffix) {
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

/* ------------------------------------------------------------------ */
/* errors                                                              */
/* ------------------------------------------------------------------ */
START_TEST(test_no_driver_no_device) {
  vyre_error err = VYRE_ERROR_INIT;
  setenv("VYRE_CUDA_DRIVER", "/nonexistent/libcuda.so.1", 1);
  vyre_backend *b = mk_status(VYRE_NO_DEVICE, &err);
  ck_assert_ptr_null(b);
  ck_assert_msg(strstr(err.message, "dlopen") && strstr(err.message, "/nonexistent/libcuda.so.1") &&
                    strstr(err.message, "No such file") && strstr(err.message, "Fix:"),
                "keeps the dlerror text and a fix: %s", err.message);
  /* The plugin still registers. */
  const vyre_registration *r2 = NULL;
  void *dl = dlopen(plugin_path, RTLD_NOW | RTLD_LOCAL);
  vyre_plugin_entry_fn entry = (vyre_plugin_entry_fn)dlsym(dl, VYRE_PLUGIN_ENTRY_SYMBOL);
  ck_assert_int_eq(entry(VYRE_ABI_MAJOR, VYRE_ABI_MINOR, &r2, &err), VYRE_OK);
  ck_assert_str_eq(r2->id, "cuda");
  dlclose(dl);

  setenv("VYRE_CUDA_DRIVER", "/bin/sh", 1);
  b = mk_status(VYRE_NO_DEVICE, &err);
  ck_assert_msg(strstr(err.message, "dlopen") != NULL, "not a library: %s", err.message);

  setenv("VYRE_CUDA_DRIVER", fake_path, 1);
  setenv("FAKECUDA_DEVICES", "0", 1);
  fk.reset();
  b = mk_status(VYRE_NO_DEVICE, &err);
  ck_assert_msg(strstr(err.message, "cuInit") && strstr(err.message, "CUDA_ERROR_NO_DEVICE") &&
                    strstr(err.message, "Fix:"),
                "no device: %s", err.message);
  ck_assert_int_eq(err.native_code, CUDA_ERROR_NO_DEVICE);

  setenv("FAKECUDA_DEVICES", "1", 1);
  fk.reset();
  vyre_backend_options o = {sizeof o, 0, 1, 0, NULL};
  ck_assert_int_eq(reg->create(&o, &b, &err), VYRE_INVALID_ARGUMENT);
  o.flags = 0;
  o.device_ordinal = 3;
  ck_assert_int_eq(reg->create(&o, &b, &err), VYRE_NO_DEVICE);
  ck_assert_msg(strstr(err.message, "device 3 not present") != NULL, "ordinal: %s", err.message);

  fk.inject("cuInit", 1, CUDA_ERROR_NOT_INITIALIZED, 1);
  b = mk_status(VYRE_NO_DEVICE, &err);
  ck_assert_msg(strstr(err.message, "CUDA_ERROR_NOT_INITIALIZED") != NULL, "cuInit: %s", err.message);
  setenv("FAKECUDA_SM", "61", 1);
  fk.reset();
  b = mk_status(VYRE_NO_DEVICE, &err);
  ck_assert_msg(strstr(err.message, "7.0 or newer") != NULL, "old device: %s", err.message);
  assert_no_leaks_after_destroy("no device");
}
END_TEST

START_TEST(test_unsupported_and_invalid) {
  setenv("FAKECUDA_SM", "75", 1);
  setenv("FAKECUDA_COOP", "0", 1);
  fk.reset();
  vyre_backend *b = mk();
  vyre_error err = VYRE_ERROR_INIT;
  vyre_outputs *out = NULL;
  prog p = prog_bf16(64);
  vyre_program_ref r = ref_of(&p);
  uint16_t h[64] = {0};
  vyre_input in[1] = {{h, sizeof h}};
  ck_assert_int_eq(b->vt->dispatch(b, &r, in, 1, NULL, &out, NULL, &err), VYRE_UNSUPPORTED);
  ck_assert_msg(strstr(err.message, "bf16") && strstr(err.message, "8.0"), "bf16: %s", err.message);
  free(p.bytes);
  p = prog_grid(64, 64);
  r = ref_of(&p);
  ck_assert_int_eq(b->vt->dispatch(b, &r, NULL, 0, NULL, &out, NULL, &err), VYRE_UNSUPPORTED);
  ck_assert_msg(strstr(err.message, "grid barrier") && strstr(err.message, "Fix:"), "grid: %s",
                err.message);
  b->vt->destroy(b);

  /* Invalid bytes, counts and sizes. */
  fk.reset();
  b = mk();
  vyre_program_ref junk = VYRE_PROGRAM_BYTES("not a program at all, certainly", 32);
  ck_assert_int_eq(b->vt->dispatch(b, &junk, NULL, 0, NULL, &out, NULL, &err), VYRE_INVALID_PROGRAM);
  ck_assert_int_eq(b->vt->dispatch(b, NULL, NULL, 0, NULL, &out, NULL, &err), VYRE_INVALID_ARGUMENT);
  ck_assert_int_eq(b->vt->dispatch(b, &r, NULL, 0, NULL, NULL, NULL, &err), VYRE_INVALID_ARGUMENT);
  free(p.bytes);
  p = prog_scale(64, 2, 64);
  r = ref_of(&p);
  ck_assert_int_eq(b->vt->dispatch(b, &r, NULL, 0, NULL, &out, NULL, &err), VYRE_INVALID_ARGUMENT);
  ck_assert_msg(strstr(err.message, "0 inputs given, the program takes 1") != NULL, "count: %s",
                err.message);
  uint32_t three[3];
  vyre_input odd[1] = {{three, 7}};
  ck_assert_int_eq(b->vt->dispatch(b, &r, odd, 1, NULL, &out, NULL, &err), VYRE_INVALID_ARGUMENT);
  vyre_input nodata[1] = {{NULL, 8}};
  ck_assert_int_eq(b->vt->dispatch(b, &r, nodata, 1, NULL, &out, NULL, &err), VYRE_INVALID_ARGUMENT);
  vyre_dispatch_options o;
  memset(&o, 0, sizeof o);
  o.struct_size = sizeof o;
  o.flags = 4;
  vyre_input ok[1] = {{three, 12}};
  ck_assert_int_eq(b->vt->dispatch(b, &r, ok, 1, &o, &out, NULL, &err), VYRE_INVALID_ARGUMENT);
  o.flags = 0;
  o.workgroup[0] = 2048;
  ck_assert_int_eq(b->vt->dispatch(b, &r, ok, 1, &o, &out, NULL, &err), VYRE_UNSUPPORTED);
  ck_assert_uint_eq(fk.launch_count(), 0);
  b->vt->destroy(b);
  assert_no_leaks_after_destroy("invalid");
  free(p.bytes);
}
END_TEST

/* The driver's own error lookups can fail; the message still names the call. */
START_TEST(test_error_text) {
  vyre_backend *b = mk();
  prog p = prog_scale(64, 2, 64);
  uint32_t in[64] = {0};
  vyre_outputs *out = NULL;
  vyre_error err = VYRE_ERROR_INIT;
  fk.inject("cuMemHostAlloc", 1, CUDA_ERROR_INVALID_VALUE, 1);
  fk.inject("cuGetErrorName", 1, CUDA_ERROR_INVALID_VALUE, 1);
  fk.inject("cuGetErrorString", 1, CUDA_ERROR_NOT_INITIALIZED, 1);
  ck_assert_int_eq(run_scale(b, &p, 64, in, &out, NULL, &err), VYRE_DRIVER);
  ck_assert_msg(strstr(err.message, "cuMemHostAlloc") && strstr(err.message, "unrecognised CUresult") &&
                    strstr(err.message, "no description") && strstr(err.message, "Fix:"),
                "falls back when the lookups fail: %s", err.message);
  ck_assert_int_eq(err.native_code, CUDA_ERROR_INVALID_VALUE);
  /* With working lookups: name and text, and the pool context. */
  fk.inject("cuMemHostAlloc", 1, CUDA_ERROR_INVALID_VALUE, 1);
  ck_assert_int_eq(run_scale(b, &p, 64, in, &out, NULL, &err), VYRE_DRIVER);
  ck_assert_msg(strstr(err.message, "pinned host pool") &&
                    strstr(err.message, "CUDA_ERROR_INVALID_VALUE (invalid argument)"),
                "names the pool, the code and its text: %s", err.message);
  /* A small error record is honoured. */
  struct {
    vyre_error e;
  } small;
  memset(&small, 0x11, sizeof small);
  small.e.struct_size = 16 + 20;
  fk.inject("cuMemHostAlloc", 1, CUDA_ERROR_INVALID_VALUE, 1);
  ck_assert_int_eq(run_scale(b, &p, 64, in, &out, NULL, &small.e), VYRE_DRIVER);
  ck_assert_msg(strlen(small.e.message) == 19 && (uint8_t)small.e.message[20] == 0x11,
                "at most struct_size bytes are written");
  ck_assert_int_eq(run_scale(b, &p, 64, in, &out, NULL, &err), VYRE_OK);
  b->vt->outputs_free(b, out);
  b->vt->destroy(b);
  assert_no_leaks_after_destroy("error text");
  free(p.bytes);
}
END_TEST

START_TEST(test_cooperative) {
  setenv("FAKECUDA_MAX_BLOCKS_PER_SM", "2", 1);
  setenv("FAKECUDA_SMS", "4", 1);
  fk.reset();
  vyre_backend *b = mk();
  vyre_error err = VYRE_ERROR_INIT;
  vyre_outputs *out = NULL;
  prog p = prog_grid(8 * 64, 64); /* 8 workgroups = 2 per SM x 4 SMs: fits */
  vyre_program_ref r = ref_of(&p);
  ck_assert_int_eq(b->vt->dispatch(b, &r, NULL, 0, NULL, &out, NULL, &err), VYRE_OK);
  b->vt->outputs_free(b, out);
  fakecuda_launch l;
  fk.launch_get(fk.launch_count() - 1, &l);
  ck_assert_int_eq(l.cooperative, 1);
  ck_assert_uint_eq(l.grid[0], 8);
  free(p.bytes);
  p = prog_grid(9 * 64, 64);
  r = ref_of(&p);
  unsigned long launches = fk.launch_count();
  ck_assert_int_eq(b->vt->dispatch(b, &r, NULL, 0, NULL, &out, NULL, &err), VYRE_LIMIT);
  ck_assert_msg(strstr(err.message, "9 workgroups") && strstr(err.message, "fits only 8") &&
                    strstr(err.message, "Fix: use at most 8"),
                "refusal names the limit: %s", err.message);
  ck_assert_uint_eq(fk.launch_count(), launches);
  /* A grid override within the limit works. */
  vyre_dispatch_options o;
  memset(&o, 0, sizeof o);
  o.struct_size = sizeof o;
  o.grid[0] = 4;
  ck_assert_int_eq(b->vt->dispatch(b, &r, NULL, 0, &o, &out, NULL, &err), VYRE_OK);
  b->vt->outputs_free(b, out);
  b->vt->destroy(b);
  assert_no_leaks_after_destroy("cooperative");
  free(p.bytes);
}
END_TEST

START_TEST(test_device_lost) {
  vyre_backend *b = mk();
  prog p = prog_scale(64, 2, 64);
  uint32_t in[64] = {0};
  vyre_outputs *out = NULL;
  vyre_error err = VYRE_ERROR_INIT;
  vyre_resident h;
  ck_assert_int_eq(b->vt->resident_alloc(b, 256, &h, &err), VYRE_OK);
  vyre_pending pend;
  vyre_program_ref r = ref_of(&p);
  vyre_input inputs[1] = {{in, sizeof in}};
  fk.hold_events(1);
  ck_assert_int_eq(b->vt->dispatch_async(b, &r, inputs, 1, NULL, &pend, &err), VYRE_OK);
  fk.hold_events(0);
  fk.inject("cuStreamSynchronize", 1, CUDA_ERROR_ILLEGAL_ADDRESS, 1);
  ck_assert_int_eq(run_scale(b, &p, 64, in, &out, NULL, &err), VYRE_DEVICE_LOST);
  ck_assert_msg(strstr(err.message, "cuStreamSynchronize") &&
                    strstr(err.message, "CUDA_ERROR_ILLEGAL_ADDRESS") &&
                    strstr(err.message, "destroy and recreate"),
                "names the call, the code and the fix: %s", err.message);
  ck_assert_uint_eq(metric(b, "device.lost"), 1);
  /* Later calls fail fast without touching the driver. */
  unsigned long before = fk.calls("cuCtxPushCurrent");
  ck_assert_int_eq(run_scale(b, &p, 64, in, &out, NULL, &err), VYRE_DEVICE_LOST);
  ck_assert_msg(strstr(err.message, "device lost") && strstr(err.message, "Fix: destroy and recreate"),
                "fail fast: %s", err.message);
  ck_assert_uint_eq(fk.calls("cuCtxPushCurrent"), before);
  ck_assert_int_eq(b->vt->resident_alloc(b, 16, &h, &err), VYRE_DEVICE_LOST);
  ck_assert_int_eq(b->vt->shutdown(b, &err), VYRE_DEVICE_LOST);
  ck_assert_int_eq(b->vt->pending_wait(b, pend, &out, NULL, &err), VYRE_DEVICE_LOST);
  ck_assert_int_eq(b->vt->pending_release(b, pend, &err), VYRE_INVALID_HANDLE);
  vyre_device_profile prof = {.struct_size = sizeof prof};
  ck_assert_int_eq(b->vt->device_profile(b, &prof, &err), VYRE_DEVICE_LOST);
  b->vt->destroy(b);
  fakecuda_live l;
  fk.live(&l);
  ck_assert_int_eq(l.ctx_refs, 0);

  /* The process stays spoiled (the real driver's rule, seen on an H200):
   * a new instance says so and what to do, and holds nothing. */
  ck_assert_int_eq(fk.poisoned(), CUDA_ERROR_ILLEGAL_ADDRESS);
  vyre_backend *x = NULL;
  ck_assert_int_eq(reg->create(NULL, &x, &err), VYRE_DEVICE_LOST);
  ck_assert_msg(x == NULL, "a failed create hands out nothing");
  ck_assert_msg(strstr(err.message, "unusable in this process") &&
                    strstr(err.message, "CUDA_ERROR_ILLEGAL_ADDRESS") &&
                    strstr(err.message, "Fix: restart the process"),
                "a new instance in the spoiled process explains it: %s", err.message);
  fk.live(&l);
  ck_assert_int_eq(l.ctx_refs, 0);

  /* A new process (fakecuda_reset) uses the device again. */
  fk.reset();
  b = mk();
  ck_assert_int_eq(run_scale(b, &p, 64, in, &out, NULL, &err), VYRE_OK);
  b->vt->outputs_free(b, out);

  /* Lost while another instance holds the primary context: that one is
   * lost too at its next call, and no new instance is made. */
  vyre_backend *c = mk();
  fk.inject("cuLaunchKernel", 1, CUDA_ERROR_LAUNCH_FAILED, 1);
  ck_assert_int_eq(run_scale(b, &p, 64, in, &out, NULL, &err), VYRE_DEVICE_LOST);
  ck_assert_int_eq(fk.poisoned(), CUDA_ERROR_LAUNCH_FAILED);
  ck_assert_int_eq(run_scale(c, &p, 64, in, &out, NULL, &err), VYRE_DEVICE_LOST);
  ck_assert_int_eq(reg->create(NULL, &x, &err), VYRE_DEVICE_LOST);
  ck_assert_msg(strstr(err.message, "restart the process") != NULL, "%s", err.message);
  b->vt->destroy(b);
  c->vt->destroy(c);
  fk.live(&l);
  ck_assert_int_eq(l.ctx_refs, 0);
  fk.reset();
  free(p.bytes);
}
END_TEST

/* A kernel that faults on the device (what a store to address 0 does on a
 * GPU; programs cannot, by design): the fake poisons the context after
 * the 2nd dispatch's launch succeeded, so the failure surfaces at a later
 * call of that dispatch, as on a GPU. */
START_TEST(test_kernel_fault) {
  vyre_backend *b = mk();
  prog p = prog_scale(64, 2, 64);
  uint32_t in[64] = {0};
  vyre_outputs *out = NULL;
  vyre_error err = VYRE_ERROR_INIT;
  unsigned long launches = fk.launch_count();
  fk.fault_launch(2, CUDA_ERROR_ILLEGAL_ADDRESS);
  ck_assert_int_eq(run_scale(b, &p, 64, in, &out, NULL, &err), VYRE_OK);
  b->vt->outputs_free(b, out);
  ck_assert_int_eq(run_scale(b, &p, 64, in, &out, NULL, &err), VYRE_DEVICE_LOST);
  ck_assert_msg(strstr(err.message, "CUDA_ERROR_ILLEGAL_ADDRESS") != NULL, "%s", err.message);
  ck_assert_msg(strstr(err.message, "Fix:") != NULL, "device lost names a fix: %s", err.message);
  ck_assert_int_eq(fk.poisoned(), CUDA_ERROR_ILLEGAL_ADDRESS);
  ck_assert_msg(fk.launch_count() == launches + 2,
                "the faulting kernel was launched (and nothing after it): %lu launches",
                fk.launch_count() - launches);
  fakecuda_launch first, l;
  fk.launch_get(fk.launch_count() - 2, &first);
  fk.launch_get(fk.launch_count() - 1, &l);
  ck_assert_str_eq(l.kernel, first.kernel);
  ck_assert_int_eq(run_scale(b, &p, 64, in, &out, NULL, &err), VYRE_DEVICE_LOST);
  ck_assert_msg(strstr(err.message, "device lost") != NULL, "later calls fail fast: %s",
                err.message);
  b->vt->destroy(b);
  fk.reset(); /* a new process: the fault spoiled this one's CUDA state */
  b = mk();
  ck_assert_int_eq(run_scale(b, &p, 64, in, &out, NULL, &err), VYRE_OK);
  b->vt->outputs_free(b, out);
  b->vt->destroy(b);
  free(p.bytes);
}
END_TEST

/* ------------------------------------------------------------------ */
/* limits: the dispatch timeout (vyre_limits.timeout_ns)               */
/* ------------------------------------------------------------------ */
static uint64_t now_ns(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static vyre_dispatch_options timeout_opts(vyre_limits *lim, uint64_t ns) {
  memset(lim, 0, sizeof *lim);
  lim->head.struct_size = sizeof *lim;
  lim->head.type = VYRE_EXT_LIMITS;
  lim->timeout_ns = ns;
  lim->max_steps = 1; /* not enforced by CUDA: ignored */
  vyre_dispatch_options o = {.struct_size = sizeof o};
  o.next = &lim->head;
  return o;
}

static void assert_timeout(vyre_status st, const vyre_error *err, uint64_t t0, uint64_t ns) {
  uint64_t took = now_ns() - t0;
  ck_assert_msg(st == VYRE_LIMIT, "a hung dispatch fails with VYRE_LIMIT, got %s: %s",
                vyre_status_name(st), err->message);
  ck_assert_msg(strstr(err->message, "budget exceeded") && strstr(err->message, "lost") &&
                    strstr(err->message, "Fix:"),
                "says what happened and how to fix it: %s", err->message);
  /* A small multiple of the timeout, with room for valgrind. */
  ck_assert_msg(took >= ns && took < ns + 10000000000ull, "failed after %llu ns (timeout %llu)",
                (unsigned long long)took, (unsigned long long)ns);
}

/* The instance is lost: calls fail fast; destroy releases the context;
 * a new instance (the kernels done or not) works. */
static void assert_lost_then_fresh(vyre_backend *b, const prog *p) {
  uint32_t in[64] = {0};
  vyre_outputs *out = NULL;
  vyre_error err = VYRE_ERROR_INIT;
  unsigned long pushes = fk.calls("cuCtxPushCurrent");
  ck_assert_int_eq(run_scale(b, p, 64, in, &out, NULL, &err), VYRE_DEVICE_LOST);
  ck_assert_msg(strstr(err.message, "timeout") && strstr(err.message, "Fix: destroy"),
                "the lost state names the timeout: %s", err.message);
  ck_assert_uint_eq(fk.calls("cuCtxPushCurrent"), pushes);
  ck_assert_uint_eq(metric(b, "device.lost"), 1);
  fakecuda_live l;
  fk.live(&l);
  long refs = l.ctx_refs;
  ck_assert_int_ge(refs, 1);
  b->vt->destroy(b);
  /* The context reference is kept: releasing it would wait for the
   * kernel. */
  fk.live(&l);
  ck_assert_int_eq(l.ctx_refs, refs);
  ck_assert_int_eq(fk.poisoned(), 0);
  /* A new instance shares it without synchronising it (with the kernel
   * still hung, a synchronisation would be misuse: teardown checks). */
  unsigned long syncs = fk.calls("cuCtxSynchronize");
  vyre_backend *c = mk();
  ck_assert_uint_eq(fk.calls("cuCtxSynchronize"), syncs);
  fk.hang_launches(0);
  for (uint32_t i = 0; i < 64; i++) in[i] = i;
  fk.set_hook(play, NULL);
  hook_mode = 1;
  hook_k = 3;
  ck_assert_int_eq(run_scale(c, p, 64, in, &out, NULL, &err), VYRE_OK);
  for (uint32_t i = 0; i < 64; i++) ck_assert_uint_eq(((uint32_t *)out->items[0].data)[i], 3 * i);
  hook_mode = 0;
  hook_k = 2;
  fk.set_hook(NULL, NULL);
  c->vt->outputs_free(c, out);
  c->vt->destroy(c);
  fk.live(&l);
  ck_assert_int_eq(l.ctx_refs, refs);
}

/* The process exit that frees what timed-out instances kept (so that the
 * next test, also without fork, starts with no context held). */
static void drop_kept_contexts(void) {
  fk.hang_launches(0);
  fakecuda_live l;
  for (fk.live(&l); l.ctx_refs > 0; fk.live(&l)) ck_assert_int_eq(fk.ctx_release(0), CUDA_SUCCESS);
}

START_TEST(test_timeout_not_reached) {
  vyre_backend *b = mk();
  prog p = prog_scale(64, 2, 64);
  uint32_t in[64] = {0};
  vyre_input inputs[1] = {{in, sizeof in}};
  vyre_program_ref r = ref_of(&p);
  vyre_outputs *out = NULL;
  vyre_error err = VYRE_ERROR_INIT;
  /* Without a timeout the wait blocks in the driver: no polling. */
  ck_assert_int_eq(run_scale(b, &p, 64, in, &out, NULL, &err), VYRE_OK);
  b->vt->outputs_free(b, out);
  unsigned long q = fk.calls("cuEventQuery"), s = fk.calls("cuStreamSynchronize");
  ck_assert_int_eq(run_scale(b, &p, 64, in, &out, NULL, &err), VYRE_OK);
  b->vt->outputs_free(b, out);
  ck_assert_uint_eq(fk.calls("cuEventQuery"), q);
  ck_assert_uint_eq(fk.calls("cuStreamSynchronize"), s + 1);
  /* A timeout not reached: the same result, the work polled. */
  vyre_limits lim;
  vyre_dispatch_options o = timeout_opts(&lim, 5000000000ull);
  ck_assert_int_eq(b->vt->dispatch(b, &r, inputs, 1, &o, &out, NULL, &err), VYRE_OK);
  ck_assert_uint_eq(out->count, 1);
  b->vt->outputs_free(b, out);
  ck_assert_uint_gt(fk.calls("cuEventQuery"), q);
  vyre_resident h;
  ck_assert_int_eq(b->vt->resident_alloc(b, 256, &h, &err), VYRE_OK);
  vyre_resident hs[2] = {h, h};
  ck_assert_int_eq(b->vt->dispatch_resident(b, &r, hs, 2, &o, NULL, &err), VYRE_OK);
  ck_assert_int_eq(b->vt->resident_free(b, h, &err), VYRE_OK);
  /* The extension says what is enforced. */
  const void *t = NULL;
  ck_assert_int_eq(b->vt->get_extension(b, VYRE_LIMITS_NAME, 1, &t, &err), VYRE_OK);
  ck_assert_uint_eq(((const vyre_limits_info *)t)->enforced, VYRE_LIMITS_TIMEOUT);
  ck_assert_int_eq(b->vt->get_extension(b, VYRE_LIMITS_NAME, 2, &t, &err), VYRE_UNSUPPORTED);
  /* pipeline_create checks the chain and ignores the limits; a dispatch
   * of the pipeline applies its own. */
  vyre_pipeline pl = 0;
  ck_assert_int_eq(b->vt->pipeline_create(b, p.bytes, p.size, &o, &pl, &err), VYRE_OK);
  vyre_program_ref pr = VYRE_PROGRAM_PIPELINE(pl);
  ck_assert_int_eq(b->vt->dispatch(b, &pr, inputs, 1, &o, &out, NULL, &err), VYRE_OK);
  b->vt->outputs_free(b, out);
  ck_assert_int_eq(b->vt->pipeline_release(b, pl, &err), VYRE_OK);
  /* A malformed vyre_limits is refused before anything runs. */
  lim.head.struct_size = 16;
  unsigned long launches = fk.launch_count();
  ck_assert_int_eq(b->vt->dispatch(b, &r, inputs, 1, &o, &out, NULL, &err),
                   VYRE_INVALID_ARGUMENT);
  ck_assert_msg(strstr(err.message, "vyre_limits") && strstr(err.message, "Fix:"), "%s",
                err.message);
  ck_assert_uint_eq(fk.launch_count(), launches);
  ck_assert_int_eq(b->vt->pipeline_create(b, p.bytes, p.size, &o, &pl, &err),
                   VYRE_INVALID_ARGUMENT);
  ck_assert_msg(strstr(err.message, "pipeline_create") != NULL, "%s", err.message);
  b->vt->destroy(b);
  free(p.bytes);
}
END_TEST

START_TEST(test_timeout_dispatch) {
  vyre_backend *b = mk();
  prog p = prog_scale(64, 2, 64);
  uint32_t in[64] = {0};
  vyre_input inputs[1] = {{in, sizeof in}};
  vyre_program_ref r = ref_of(&p);
  vyre_outputs *out = NULL;
  vyre_error err = VYRE_ERROR_INIT;
  vyre_limits lim;
  vyre_dispatch_options o = timeout_opts(&lim, 50000000ull); /* 50 ms */
  fk.hang_launches(1);
  uint64_t t0 = now_ns();
  vyre_status st = b->vt->dispatch(b, &r, inputs, 1, &o, &out, NULL, &err);
  assert_timeout(st, &err, t0, 50000000ull);
  ck_assert_ptr_null(out);
  ck_assert_msg(strstr(err.message, "dispatch") != NULL, "%s", err.message);
  assert_lost_then_fresh(b, &p);

  /* 2^30 fixpoint launches: enqueueing them stops at the deadline too. */
  b = mk();
  o = timeout_opts(&lim, 50000000ull);
  o.fixpoint_iterations = 1u << 30;
  unsigned long before = fk.launch_count();
  t0 = now_ns();
  st = b->vt->dispatch(b, &r, inputs, 1, &o, &out, NULL, &err);
  assert_timeout(st, &err, t0, 50000000ull);
  ck_assert_msg(fk.launch_count() - before < (1ul << 30), "stopped enqueueing");
  assert_lost_then_fresh(b, &p);

  /* dispatch_into writes no slot. */
  b = mk();
  fk.hang_launches(1);
  uint32_t slot_data[64];
  memset(slot_data, 0xab, sizeof slot_data);
  vyre_output_slot slot = {slot_data, sizeof slot_data, 0};
  t0 = now_ns();
  st = b->vt->dispatch_into(b, &r, inputs, 1, &o, &slot, 1, NULL, &err);
  assert_timeout(st, &err, t0, 50000000ull);
  ck_assert_uint_eq(slot_data[0], 0xabababab);
  ck_assert_uint_eq(slot.size, 0);
  assert_lost_then_fresh(b, &p);
  free(p.bytes);
  drop_kept_contexts();
}
END_TEST

START_TEST(test_timeout_async) {
  vyre_backend *b = mk();
  prog p = prog_scale(64, 2, 64);
  uint32_t in[64] = {0};
  vyre_input inputs[1] = {{in, sizeof in}};
  vyre_program_ref r = ref_of(&p);
  vyre_outputs *out = NULL;
  vyre_error err = VYRE_ERROR_INIT;
  /* Compiled first, so that the timed call is quick even under valgrind. */
  ck_assert_int_eq(run_scale(b, &p, 64, in, &out, NULL, &err), VYRE_OK);
  b->vt->outputs_free(b, out);
  out = NULL;
  vyre_limits lim;
  vyre_dispatch_options o = timeout_opts(&lim, 1000000000ull); /* 1 s */
  fk.hang_launches(1);
  vyre_pending pend = 0;
  uint64_t t0 = now_ns();
  ck_assert_int_eq(b->vt->dispatch_async(b, &r, inputs, 1, &o, &pend, &err), VYRE_OK);
  memset(&lim, 0, sizeof lim); /* read before dispatch_async returned */
  int ready = 1;
  ck_assert_int_eq(b->vt->pending_poll(b, pend, &ready, &err), VYRE_OK);
  ck_assert_msg(ready == 0 || now_ns() - t0 >= 1000000000ull, "not ready before its deadline");
  /* Past the deadline the dispatch counts as failed: ready. */
  while (now_ns() - t0 < 1010000000ull) usleep(5000);
  ck_assert_int_eq(b->vt->pending_poll(b, pend, &ready, &err), VYRE_OK);
  ck_assert_int_eq(ready, 1);
  assert_timeout(b->vt->pending_wait(b, pend, &out, NULL, &err), &err, t0, 1000000000ull);
  ck_assert_ptr_null(out);
  ck_assert_int_eq(b->vt->pending_wait(b, pend, &out, NULL, &err), VYRE_INVALID_HANDLE);
  assert_lost_then_fresh(b, &p);

  /* Released before its wait: destroy waits until the deadline only,
   * then gives up (no wait forever). */
  b = mk();
  fk.hang_launches(1);
  o = timeout_opts(&lim, 50000000ull);
  ck_assert_int_eq(b->vt->dispatch_async(b, &r, inputs, 1, &o, &pend, &err), VYRE_OK);
  ck_assert_int_eq(b->vt->pending_release(b, pend, &err), VYRE_OK);
  fakecuda_live l;
  fk.live(&l);
  long refs = l.ctx_refs;
  t0 = now_ns();
  b->vt->destroy(b);
  ck_assert_msg(now_ns() - t0 < 2000000000ull, "destroy returned");
  fk.live(&l);
  ck_assert_int_eq(l.ctx_refs, refs); /* kept, as after a timed-out wait */
  /* Released, then shutdown: it waits until the deadline only, and says
   * the instance is lost (no synchronisation of the hung context). */
  b = mk();
  o = timeout_opts(&lim, 50000000ull);
  ck_assert_int_eq(b->vt->dispatch_async(b, &r, inputs, 1, &o, &pend, &err), VYRE_OK);
  ck_assert_int_eq(b->vt->pending_release(b, pend, &err), VYRE_OK);
  t0 = now_ns();
  ck_assert_int_eq(b->vt->shutdown(b, &err), VYRE_DEVICE_LOST);
  ck_assert_msg(strstr(err.message, "timeout") && strstr(err.message, "Fix:"), "%s", err.message);
  ck_assert_msg(now_ns() - t0 < 10000000000ull, "shutdown returned");
  b->vt->destroy(b);
  fk.hang_launches(0);
  b = mk();
  ck_assert_int_eq(run_scale(b, &p, 64, in, &out, NULL, &err), VYRE_OK);
  b->vt->outputs_free(b, out);
  b->vt->destroy(b);
  free(p.bytes);
  drop_kept_contexts();
}
END_TEST

START_TEST(test_timeout_resident_sequence) {
  vyre_backend *b = mk();
  prog p = prog_inc(64), s = prog_scale(64, 2, 64);
  vyre_program_ref r = ref_of(&p);
  vyre_error err = VYRE_ERROR_INIT;
  vyre_resident h;
  ck_assert_int_eq(b->vt->resident_alloc(b, 256, &h, &err), VYRE_OK);
  vyre_limits lim;
  vyre_dispatch_options o = timeout_opts(&lim, 50000000ull);
  fk.hang_launches(1);
  uint64_t t0 = now_ns();
  assert_timeout(b->vt->dispatch_resident(b, &r, &h, 1, &o, NULL, &err), &err, t0,
                 50000000ull);
  ck_assert_msg(strstr(err.message, "dispatch_resident") != NULL, "%s", err.message);
  /* The handle can still be freed. */
  ck_assert_int_eq(b->vt->resident_free(b, h, &err), VYRE_OK);
  assert_lost_then_fresh(b, &s);

  /* A sequence waits at most the smallest timeout of its steps (here the
   * second step's); its reads are not performed. */
  b = mk();
  ck_assert_int_eq(b->vt->resident_alloc(b, 256, &h, &err), VYRE_OK);
  vyre_limits lim2;
  vyre_dispatch_options o1 = timeout_opts(&lim, 10000000000ull), o2 = timeout_opts(&lim2, 50000000ull);
  vyre_sequence_step steps[2] = {{sizeof steps[0], 1, &r, &h, &o1}, {sizeof steps[0], 1, &r, &h, &o2}};
  uint32_t back[64];
  memset(back, 0xcd, sizeof back);
  vyre_resident_copy rd = {h, 0, back, sizeof back};
  fk.hang_launches(1);
  t0 = now_ns();
  assert_timeout(b->vt->dispatch_sequence(b, steps, 2, 3, &rd, 1, NULL, &err), &err, t0,
                 50000000ull);
  ck_assert_msg(strstr(err.message, "dispatch_sequence") != NULL, "%s", err.message);
  ck_assert_uint_eq(back[0], 0xcdcdcdcd);
  assert_lost_then_fresh(b, &s);
  free(p.bytes);
  free(s.bytes);
  drop_kept_contexts();
}
END_TEST

/* ------------------------------------------------------------------ */
/* interop: the CUDA interop extension (vyre_cuda.h)                   */
/* ------------------------------------------------------------------ */
/* The test plays the host application: it makes device memory and
 * streams itself, through the fake's entry points, in a context it
 * retained (so its memory outlives the instance, as a host's would). */
static CUcontext host_retain(CUdevice dev) {
  CUcontext ctx = NULL;
  ck_assert_int_eq(host.retain(&ctx, dev), CUDA_SUCCESS);
  return ctx;
}

static CUdeviceptr host_mem(CUcontext ctx, size_t n) {
  CUdeviceptr p = 0;
  CUcontext popped;
  ck_assert_int_eq(host.push(ctx), CUDA_SUCCESS);
  ck_assert_int_eq(host.mem_alloc(&p, n), CUDA_SUCCESS);
  ck_assert_int_eq(host.pop(&popped), CUDA_SUCCESS);
  return p;
}

static void host_mem_free(CUcontext ctx, CUdeviceptr p) {
  CUcontext popped;
  ck_assert_int_eq(host.push(ctx), CUDA_SUCCESS);
  ck_assert_msg(host.mem_free(p) == CUDA_SUCCESS, "the host's memory is still live: vyre did not "
                                                 "free it");
  ck_assert_int_eq(host.pop(&popped), CUDA_SUCCESS);
}

static CUstream host_stream(CUcontext ctx) {
  CUstream s = NULL;
  CUcontext popped;
  ck_assert_int_eq(host.push(ctx), CUDA_SUCCESS);
  ck_assert_int_eq(host.stream_create(&s, CU_STREAM_NON_BLOCKING), CUDA_SUCCESS);
  ck_assert_int_eq(host.pop(&popped), CUDA_SUCCESS);
  return s;
}

static void host_stream_destroy(CUcontext ctx, CUstream s) {
  CUcontext popped;
  ck_assert_int_eq(host.push(ctx), CUDA_SUCCESS);
  ck_assert_int_eq(host.stream_destroy(s), CUDA_SUCCESS);
  ck_assert_int_eq(host.pop(&popped), CUDA_SUCCESS);
}

static const vyre_cuda_interop *interop_of(vyre_backend *b) {
  const void *t = NULL;
  vyre_error err = VYRE_ERROR_INIT;
  ck_assert_msg(b->vt->get_extension &&
                    b->vt->get_extension(b, VYRE_CUDA_INTEROP_NAME, 1, &t, &err) == VYRE_OK,
                "the CUDA backend serves %s@1: %s", VYRE_CUDA_INTEROP_NAME, err.message);
  return t;
}

START_TEST(test_interop_extension) {
  ck_assert_msg(reg->extensions &&
                    strcmp(reg->extensions, "vyre.cuda.interop@1 vyre.limits@1") == 0,
                "registration.extensions lists the interop and limits extensions (%s)",
                reg->extensions ? reg->extensions : "NULL");
  vyre_backend *b = mk();
  vyre_error err = VYRE_ERROR_INIT;
  const vyre_cuda_interop *cu = interop_of(b);
  ck_assert_uint_eq(cu->head.version, VYRE_CUDA_INTEROP_VERSION);
  ck_assert_uint_ge(cu->head.struct_size, sizeof *cu);
  ck_assert_msg(cu->context && cu->resident_import && cu->resident_pointer,
                "every entry of revision 1 is there");
  vyre_backend *other = mk();
  ck_assert_msg(interop_of(other) == cu, "one table for every instance");
  other->vt->destroy(other);

  /* Refusals: VYRE_UNSUPPORTED, *out NULL, a Fix. */
  static const struct {
    const char *name;
    uint32_t version;
  } bad[] = {{VYRE_CUDA_INTEROP_NAME, 0},
             {VYRE_CUDA_INTEROP_NAME, VYRE_CUDA_INTEROP_VERSION + 1},
             {"vyre.cuda.interop2", 1},
             {"vyre.metal.interop", 1},
             {"", 1}};
  for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
    const void *t = &err;
    ck_assert_int_eq(b->vt->get_extension(b, bad[i].name, bad[i].version, &t, &err),
                     VYRE_UNSUPPORTED);
    ck_assert_msg(t == NULL, "a refused extension leaves *out NULL ('%s' %u)", bad[i].name,
                  bad[i].version);
    ck_assert_msg(strstr(err.message, "Fix:") != NULL, "the refusal says how to fix it: %s",
                  err.message);
  }
  const void *t = &err;
  ck_assert_int_eq(b->vt->get_extension(b, NULL, 1, &t, &err), VYRE_INVALID_ARGUMENT);
  ck_assert_ptr_null(t);
  ck_assert_int_eq(b->vt->get_extension(b, VYRE_CUDA_INTEROP_NAME, 1, NULL, &err),
                   VYRE_INVALID_ARGUMENT);

  /* context(): the device's primary context, the one a host retains. */
  void *ctx = NULL;
  int32_t dev = -1;
  ck_assert_int_eq(cu->context(b, &ctx, &dev, &err), VYRE_OK);
  ck_assert_int_eq(dev, 0);
  CUcontext mine = host_retain(0);
  ck_assert_msg(mine == (CUcontext)ctx, "the instance runs in the primary context");
  fk.ctx_release(0);
  ck_assert_int_eq(cu->context(b, NULL, NULL, &err), VYRE_OK);
  b->vt->destroy(b);
  assert_no_leaks_after_destroy("interop extension");
}
END_TEST

/* An import refused with VYRE_INVALID_ARGUMENT whose message holds `why`. */
static void import_refused(vyre_backend *b, const vyre_cuda_interop *cu, uint64_t ptr,
                           uint64_t size, const char *why) {
  vyre_error err = VYRE_ERROR_INIT;
  vyre_resident h = 7;
  vyre_status st = cu->resident_import(b, ptr, size, &h, &err);
  ck_assert_msg(st == VYRE_INVALID_ARGUMENT, "import of 0x%llx + %llu is refused (%s: %s)",
                (unsigned long long)ptr, (unsigned long long)size, vyre_status_name(st),
                err.message);
  ck_assert_msg(strstr(err.message, why) && strstr(err.message, "Fix:"),
                "the refusal says '%s' and how to fix it: %s", why, err.message);
  ck_assert_msg(h == 0, "a refused import leaves no handle");
}

START_TEST(test_interop_import) {
  vyre_backend *b = mk();
  const vyre_cuda_interop *cu = interop_of(b);
  vyre_error err = VYRE_ERROR_INIT;
  CUcontext ctx = host_retain(0);
  const size_t n = 4096;
  CUdeviceptr mem = host_mem(ctx, n);
  uint32_t *words = (uint32_t *)(uintptr_t)mem; /* fake device memory is host memory */
  for (uint32_t i = 0; i < n / 4; i++) words[i] = i * 3u;
  unsigned long frees = fk.calls("cuMemFree");

  vyre_resident h = 0;
  ck_assert_int_eq(cu->resident_import(b, mem, n, &h, &err), VYRE_OK);
  uint64_t size = 0, ptr = 0;
  ck_assert_int_eq(b->vt->resident_size(b, h, &size, &err), VYRE_OK);
  ck_assert_uint_eq(size, n);
  ck_assert_int_eq(cu->resident_pointer(b, h, &ptr, &size, &err), VYRE_OK);
  ck_assert_msg(ptr == mem && size == n, "resident_pointer of an import is the host's memory");
  ck_assert_int_eq(cu->resident_pointer(b, h, NULL, NULL, &err), VYRE_OK);
  ck_assert_uint_eq(metric(b, "resident.imported_buffers"), 1);
  ck_assert_uint_eq(metric(b, "resident.imported_bytes"), n);
  ck_assert_msg(metric(b, "resident.buffers") == 0 && metric(b, "resident.bytes") == 0,
                "an import is not counted against the resident budget");

  /* Zero copy: vyre's transfers and kernels see the host's memory. */
  uint32_t back[8];
  ck_assert_int_eq(b->vt->resident_download_range(b, h, 16, back, sizeof back, &err), VYRE_OK);
  ck_assert_uint_eq(back[0], 4 * 3);
  uint32_t patch[2] = {111, 222};
  ck_assert_int_eq(b->vt->resident_upload_at(b, h, 8, patch, sizeof patch, &err), VYRE_OK);
  ck_assert_msg(words[2] == 111 && words[3] == 222, "an upload lands in the host's memory");
  fk.set_hook(play, NULL);
  hook_mode = 2;
  prog p = prog_inc(64);
  vyre_program_ref r = ref_of(&p);
  ck_assert_int_eq(b->vt->dispatch_resident(b, &r, &h, 1, NULL, NULL, &err), VYRE_OK);
  fakecuda_launch l;
  fk.launch_get(fk.launch_count() - 1, &l);
  ck_assert_msg(l.params[0] == mem, "the kernel gets the host's pointer itself");
  ck_assert_msg(words[0] == 1 && words[2] == 112 && words[1023] == 1023u * 3u + 1u,
                "the kernel ran on the host's memory");
  vyre_resident_copy many[1] = {{h, 0, back, 8}};
  ck_assert_int_eq(b->vt->resident_download_many(b, many, 1, &err), VYRE_OK);
  ck_assert_uint_eq(back[1], 4);

  /* A range inside the allocation. */
  vyre_resident part = 0;
  ck_assert_int_eq(cu->resident_import(b, mem + 64, 1024, &part, &err), VYRE_OK);
  ck_assert_int_eq(cu->resident_pointer(b, part, &ptr, &size, &err), VYRE_OK);
  ck_assert_msg(ptr == mem + 64 && size == 1024, "a sub-range keeps its address and size");
  ck_assert_int_eq(b->vt->resident_download_range(b, part, 1020, back, 4, &err), VYRE_OK);
  ck_assert_int_eq(b->vt->resident_download_range(b, part, 1021, back, 4, &err),
                   VYRE_INVALID_ARGUMENT);

  /* Refusals. */
  ck_assert_int_eq(cu->resident_import(b, mem, n, NULL, &err), VYRE_INVALID_ARGUMENT);
  import_refused(b, cu, mem, 0, "size is 0");
  import_refused(b, cu, 0, 64, "device_ptr is 0");
  import_refused(b, cu, mem + 4, 64, "aligned");
  import_refused(b, cu, UINT64_MAX - 15, 32, "overflows");
  import_refused(b, cu, mem + 16, n, "run past their allocation");
  import_refused(b, cu, mem + n - 16, 17, "run past their allocation");
  uint8_t *stranger = aligned_alloc(256, 256);
  import_refused(b, cu, (uintptr_t)stranger, 256, "not memory CUDA knows of");
  free(stranger);
  void *pinned = NULL;
  CUcontext popped;
  ck_assert_int_eq(host.push(ctx), CUDA_SUCCESS);
  ck_assert_int_eq(host.host_alloc(&pinned, 4096, CU_MEMHOSTALLOC_PORTABLE), CUDA_SUCCESS);
  ck_assert_int_eq(host.pop(&popped), CUDA_SUCCESS);
  import_refused(b, cu, (uintptr_t)pinned, 4096, "host memory");
  ck_assert_int_eq(host.host_free(pinned), CUDA_SUCCESS);
  ck_assert_int_eq(cu->resident_pointer(b, h + (1ull << 32), &ptr, &size, &err),
                   VYRE_INVALID_HANDLE);
  ck_assert_msg(ptr == 0 && size == 0 && strstr(err.message, "Fix:"),
                "a stale handle has no pointer: %s", err.message);

  /* resident_pointer of vyre's own buffer. */
  vyre_resident own = 0;
  ck_assert_int_eq(b->vt->resident_alloc(b, 100, &own, &err), VYRE_OK);
  ck_assert_int_eq(cu->resident_pointer(b, own, &ptr, &size, &err), VYRE_OK);
  ck_assert_msg(ptr != 0 && size == 100 && ((uint8_t *)(uintptr_t)ptr)[99] == 0,
                "resident_pointer gives vyre's zero-filled allocation");
  ck_assert_int_eq(b->vt->resident_free(b, own, &err), VYRE_OK);

  /* Free forgets: the host's memory stays. */
  ck_assert_int_eq(b->vt->resident_free(b, h, &err), VYRE_OK);
  ck_assert_int_eq(b->vt->resident_free(b, h, &err), VYRE_INVALID_HANDLE);
  ck_assert_int_eq(b->vt->resident_download_range(b, h, 0, back, 4, &err), VYRE_INVALID_HANDLE);
  ck_assert_msg(fk.calls("cuMemFree") - frees == 1, "only vyre's own buffer was freed");
  ck_assert_uint_eq(metric(b, "resident.imported_buffers"), 1);
  ck_assert_uint_eq(metric(b, "resident.imported_bytes"), 1024);
  ck_assert_uint_eq(words[5], 16);
  /* destroy forgets the live import `part` too. */
  b->vt->destroy(b);
  host_mem_free(ctx, mem); /* still live: destroy did not free it */
  fk.ctx_release(0);
  assert_no_leaks_after_destroy("interop import");
  free(p.bytes);
}
END_TEST

START_TEST(test_interop_import_device) {
  /* Memory of another device is refused, naming both. */
  setenv("FAKECUDA_DEVICES", "2", 1);
  fk.reset();
  vyre_backend *b = mk(); /* device 0 */
  const vyre_cuda_interop *cu = interop_of(b);
  CUcontext ctx1 = host_retain(1);
  CUdeviceptr mem = host_mem(ctx1, 1024);
  import_refused(b, cu, mem, 1024, "memory of CUDA device 1; this instance runs on device 0");
  host_mem_free(ctx1, mem);
  b->vt->destroy(b);
  fk.ctx_release(1);
  assert_no_leaks_after_destroy("interop device");
}
END_TEST

START_TEST(test_interop_graphs) {
  /* An imported buffer in a replayed graph: freeing its handle drops
   * the graph before the host may free the memory. */
  vyre_backend *b = mk();
  const vyre_cuda_interop *cu = interop_of(b);
  vyre_error err = VYRE_ERROR_INIT;
  CUcontext ctx = host_retain(0);
  CUdeviceptr mem = host_mem(ctx, 1024);
  memset((void *)(uintptr_t)mem, 0, 1024);
  fk.set_hook(play, NULL);
  hook_mode = 2;
  prog p = prog_inc(64);
  vyre_program_ref r = ref_of(&p);
  vyre_resident h = 0;
  ck_assert_int_eq(cu->resident_import(b, mem, 1024, &h, &err), VYRE_OK);
  vyre_sequence_step step = {sizeof step, 1, &r, &h, NULL};
  uint32_t first = 0;
  vyre_resident_copy read = {h, 0, &first, 4};
  ck_assert_int_eq(b->vt->dispatch_sequence(b, &step, 1, 3, &read, 1, NULL, &err), VYRE_OK);
  ck_assert_int_eq(b->vt->dispatch_sequence(b, &step, 1, 3, &read, 1, NULL, &err), VYRE_OK);
  ck_assert_uint_eq(first, 6);
  ck_assert_uint_eq(metric(b, "graph.entries"), 1);
  ck_assert_uint_eq(metric(b, "graph.hits"), 1);
  ck_assert_int_eq(b->vt->resident_free(b, h, &err), VYRE_OK);
  ck_assert_uint_eq(metric(b, "graph.entries"), 0);
  fakecuda_live live;
  fk.live(&live);
  ck_assert_msg(live.graphs == 0 && live.execs == 0, "the graph that baked the pointer in is gone");
  /* The same memory again, under a new handle: a new graph. */
  ck_assert_int_eq(cu->resident_import(b, mem, 1024, &h, &err), VYRE_OK);
  read.buffer = h;
  ck_assert_int_eq(b->vt->dispatch_sequence(b, &step, 1, 2, &read, 1, NULL, &err), VYRE_OK);
  ck_assert_uint_eq(first, 8);
  ck_assert_uint_eq(metric(b, "graph.misses"), 2);
  b->vt->destroy(b);
  host_mem_free(ctx, mem);
  fk.ctx_release(0);
  assert_no_leaks_after_destroy("interop graphs");
  free(p.bytes);
}
END_TEST

/* The stream-ordered calls made since op index `from` (at most cap). */
static unsigned long ops_since(unsigned long from, fakecuda_op *out, unsigned long cap) {
  unsigned long n = fk.op_count() - from;
  ck_assert_msg(n <= cap, "%lu stream-ordered calls fit the test's buffer", n);
  for (unsigned long i = 0; i < n; i++) ck_assert_int_eq(fk.op_get(from + i, &out[i]), 0);
  return n;
}

/* The calls since `from` are one join: the host's stream records an
 * event, ours waits for it, then all of the call's work is on ours; with
 * `back`, the host's stream finally waits for our completion event. */
static void assert_joined(unsigned long from, CUstream hs, int back, const char *what) {
  fakecuda_op op[512];
  unsigned long n = ops_since(from, op, 512);
  ck_assert_msg(n >= 3, "%s: the call enqueued its work (%lu calls)", what, n);
  ck_assert_msg(!strcmp(op[0].call, "cuEventRecord") && op[0].stream == (void *)hs,
                "%s: the first call records an event on the host's stream (%s on %p)", what,
                op[0].call, op[0].stream);
  ck_assert_msg(!strcmp(op[1].call, "cuStreamWaitEvent") && op[1].event == op[0].event &&
                    op[1].stream != (void *)hs && op[1].stream != NULL,
                "%s: then vyre's stream waits for it (%s)", what, op[1].call);
  void *ours = op[1].stream;
  unsigned long end = back ? n - 1 : n;
  for (unsigned long i = 2; i < end; i++)
    ck_assert_msg(op[i].stream == ours, "%s: call %lu (%s) is on vyre's stream, after the wait",
                  what, i, op[i].call);
  if (back) {
    ck_assert_msg(!strcmp(op[n - 2].call, "cuEventRecord") &&
                      !strcmp(op[n - 1].call, "cuStreamWaitEvent") &&
                      op[n - 1].stream == (void *)hs && op[n - 1].event == op[n - 2].event,
                  "%s: the host's stream finally waits for vyre's completion event", what);
  }
}

START_TEST(test_interop_stream) {
  vyre_backend *b = mk();
  vyre_error err = VYRE_ERROR_INIT;
  CUcontext ctx = host_retain(0);
  CUstream hs = host_stream(ctx);
  fk.set_hook(play, NULL);
  hook_mode = 1;
  hook_k = 2;
  prog ps = prog_scale(256, 2, 64), pi = prog_inc(64);
  vyre_program_ref rs = ref_of(&ps), ri = ref_of(&pi);
  uint32_t in[256];
  for (int i = 0; i < 256; i++) in[i] = (uint32_t)i;
  vyre_input inputs[1] = {{in, sizeof in}};
  vyre_cuda_stream cs = {{sizeof cs, VYRE_EXT_CUDA_STREAM, NULL}, hs};
  vyre_dispatch_options o = {.struct_size = sizeof o, .next = &cs.head};

  /* dispatch, dispatch_into, dispatch_async: joined both ways. */
  vyre_outputs *out = NULL;
  unsigned long from = fk.op_count(), waits = fk.calls("cuStreamWaitEvent");
  ck_assert_int_eq(b->vt->dispatch(b, &rs, inputs, 1, &o, &out, NULL, &err), VYRE_OK);
  assert_joined(from, hs, 1, "dispatch");
  ck_assert_uint_eq(fk.calls("cuStreamWaitEvent") - waits, 2);
  ck_assert_uint_eq(((uint32_t *)out->items[0].data)[7], 14);
  b->vt->outputs_free(b, out);
  uint32_t slot_data[256];
  vyre_output_slot slot = {slot_data, sizeof slot_data, 0};
  from = fk.op_count();
  ck_assert_int_eq(b->vt->dispatch_into(b, &rs, inputs, 1, &o, &slot, 1, NULL, &err), VYRE_OK);
  assert_joined(from, hs, 1, "dispatch_into");
  vyre_pending pend = 0;
  from = fk.op_count();
  ck_assert_int_eq(b->vt->dispatch_async(b, &rs, inputs, 1, &o, &pend, &err), VYRE_OK);
  assert_joined(from, hs, 1, "dispatch_async");
  ck_assert_int_eq(b->vt->pending_wait(b, pend, &out, NULL, &err), VYRE_OK);
  b->vt->outputs_free(b, out);
  /* Without the extension nothing waits. */
  waits = fk.calls("cuStreamWaitEvent");
  ck_assert_int_eq(b->vt->dispatch(b, &rs, inputs, 1, NULL, &out, NULL, &err), VYRE_OK);
  b->vt->outputs_free(b, out);
  ck_assert_uint_eq(fk.calls("cuStreamWaitEvent") - waits, 0);

  /* Resident dispatch and sequences: joined before (they return idle). */
  hook_mode = 2;
  vyre_resident a = 0;
  ck_assert_int_eq(b->vt->resident_alloc(b, 1024, &a, &err), VYRE_OK);
  from = fk.op_count();
  ck_assert_int_eq(b->vt->dispatch_resident(b, &ri, &a, 1, &o, NULL, &err), VYRE_OK);
  assert_joined(from, hs, 0, "dispatch_resident");
  vyre_sequence_step steps[2] = {{sizeof steps[0], 1, &ri, &a, &o}, {sizeof steps[0], 1, &ri, &a, NULL}};
  uint32_t word = 0;
  vyre_resident_copy read = {a, 0, &word, 4};
  from = fk.op_count();
  ck_assert_int_eq(b->vt->dispatch_sequence(b, steps, 2, 3, &read, 1, NULL, &err), VYRE_OK);
  assert_joined(from, hs, 0, "dispatch_sequence (graph)");
  ck_assert_uint_eq(word, 7);
  steps[1].options = &o; /* the same stream on a later step is fine */
  ck_assert_int_eq(b->vt->dispatch_sequence(b, steps, 2, 1, NULL, 0, NULL, &err), VYRE_OK);
  steps[0].options = NULL; /* a later step cannot choose the stream */
  unsigned long launches = fk.launch_count();
  ck_assert_int_eq(b->vt->dispatch_sequence(b, steps, 2, 1, NULL, 0, NULL, &err),
                   VYRE_INVALID_ARGUMENT);
  ck_assert_msg(strstr(err.message, "step 0") && strstr(err.message, "Fix:"),
                "a stream on step 1 only is refused: %s", err.message);
  ck_assert_uint_eq(fk.launch_count(), launches);

  /* Unknown chain entries are skipped; the stream behind them counts. */
  struct {
    vyre_ext head;
    uint64_t payload[2];
  } unknown = {{sizeof unknown, 0x12345678u, &cs.head}, {0, 0}};
  o.next = &unknown.head;
  from = fk.op_count();
  ck_assert_int_eq(b->vt->dispatch_resident(b, &ri, &a, 1, &o, NULL, &err), VYRE_OK);
  assert_joined(from, hs, 0, "behind an unknown entry");
  unknown.head.next = NULL;
  waits = fk.calls("cuStreamWaitEvent");
  ck_assert_int_eq(b->vt->dispatch_resident(b, &ri, &a, 1, &o, NULL, &err), VYRE_OK);
  ck_assert_uint_eq(fk.calls("cuStreamWaitEvent") - waits, 0);
  /* Options from a 1.0 caller end before `next`: it is never read. */
  vyre_dispatch_options old = {.struct_size = offsetof(vyre_dispatch_options, next)};
  old.next = (const vyre_ext *)(uintptr_t)1;
  ck_assert_int_eq(b->vt->dispatch_resident(b, &ri, &a, 1, &old, NULL, &err), VYRE_OK);

  /* Malformed chains are refused before anything runs. */
  vyre_cuda_stream cs2 = cs;
  struct {
    vyre_ext head;
  } tiny = {{4, 0x12345678u, NULL}}, zero = {{sizeof(vyre_ext), 0, NULL}}, loop;
  loop.head.struct_size = sizeof loop;
  loop.head.type = 0x777u;
  loop.head.next = &loop.head;
  vyre_cuda_stream short_cs = {{sizeof(vyre_ext), VYRE_EXT_CUDA_STREAM, NULL}, hs};
  cs2.head.next = &cs.head;
  cs.head.next = NULL;
  const struct {
    const vyre_ext *chain;
    const char *why;
  } bad[] = {{&tiny.head, "less than its"},
             {&zero.head, "type 0"},
             {&loop.head, "cycle"},
             {&short_cs.head, "vyre_cuda_stream (chain entry 0) has struct_size"},
             {&cs2.head, "two vyre_cuda_stream"}};
  launches = fk.launch_count();
  for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
    o.next = bad[i].chain;
    ck_assert_int_eq(b->vt->dispatch(b, &rs, inputs, 1, &o, &out, NULL, &err),
                     VYRE_INVALID_ARGUMENT);
    ck_assert_msg(strstr(err.message, bad[i].why) && strstr(err.message, "Fix:"),
                  "chain %zu refused for '%s': %s", i, bad[i].why, err.message);
    ck_assert_int_eq(b->vt->dispatch_resident(b, &ri, &a, 1, &o, NULL, &err),
                     VYRE_INVALID_ARGUMENT);
    vyre_pipeline pl = 0;
    ck_assert_int_eq(b->vt->pipeline_create(b, pi.bytes, pi.size, &o, &pl, &err),
                     VYRE_INVALID_ARGUMENT);
  }
  ck_assert_uint_eq(fk.launch_count(), launches);
  o.next = &cs.head;
  vyre_pipeline pl = 0;
  ck_assert_int_eq(b->vt->pipeline_create(b, pi.bytes, pi.size, &o, &pl, &err), VYRE_OK);
  ck_assert_int_eq(b->vt->pipeline_release(b, pl, &err), VYRE_OK);

  /* A stream under capture is refused: vyre's work cannot join a graph. */
  CUcontext popped;
  ck_assert_int_eq(host.push(ctx), CUDA_SUCCESS);
  ck_assert_int_eq(host.begin_capture(hs, CU_STREAM_CAPTURE_MODE_THREAD_LOCAL), CUDA_SUCCESS);
  ck_assert_int_eq(b->vt->dispatch_resident(b, &ri, &a, 1, &o, NULL, &err),
                   VYRE_INVALID_ARGUMENT);
  ck_assert_msg(strstr(err.message, "captured") && strstr(err.message, "Fix:"),
                "a capturing stream is refused: %s", err.message);
  CUgraph g = NULL;
  ck_assert_int_eq(host.end_capture(hs, &g), CUDA_SUCCESS);
  ck_assert_int_eq(host.graph_destroy(g), CUDA_SUCCESS);
  ck_assert_int_eq(host.pop(&popped), CUDA_SUCCESS);

  /* A dead stream is a driver error that names the call and the fix. */
  CUstream dead = host_stream(ctx);
  host_stream_destroy(ctx, dead);
  cs.stream = dead;
  ck_assert_int_eq(b->vt->dispatch_resident(b, &ri, &a, 1, &o, NULL, &err), VYRE_DRIVER);
  ck_assert_msg(strstr(err.message, "vyre_cuda_stream") && strstr(err.message, "Fix:"),
                "a bad stream is named: %s", err.message);
  char last[512];
  ck_assert_msg(fk.violations(last, sizeof last) == 1, "the fake saw the dead stream once: %s",
                last);
  fk.reset(); /* forgets that misuse (and the hook, counts and trace) */
  fk.set_hook(play, NULL);

  /* NULL is the legacy default stream. */
  fk.allow_legacy(1);
  cs.stream = NULL;
  from = fk.op_count();
  ck_assert_int_eq(b->vt->dispatch(b, &rs, inputs, 1, &o, &out, NULL, &err), VYRE_OK);
  b->vt->outputs_free(b, out);
  assert_joined(from, NULL, 1, "dispatch on the legacy stream");

  ck_assert_int_eq(b->vt->resident_free(b, a, &err), VYRE_OK);
  b->vt->destroy(b);
  host_stream_destroy(ctx, hs);
  fk.ctx_release(0);
  assert_no_leaks_after_destroy("interop stream");
  free(ps.bytes);
  free(pi.bytes);
}
END_TEST

/* ------------------------------------------------------------------ */
/* fault sweep: fail every driver call of a workload in turn            */
/* ------------------------------------------------------------------ */
/* Calls whose failure happens during cleanup or is recoverable: the
 * workload may succeed, and (for frees) the object is left to context
 * destruction. */
static int cleanup_call(const char *name) {
  static const char *list[] = {"cuMemFree", "cuMemFreeHost", "cuStreamDestroy", "cuEventDestroy",
                               "cuModuleUnload", "cuLinkDestroy", "cuGraphExecDestroy",
                               "cuGraphDestroy", "cuCtxPopCurrent", "cuDevicePrimaryCtxRelease",
                               "cuEventElapsedTime", "cuEventQuery", "cuGetErrorName",
                               "cuGetErrorString", "cuModuleLoadData"};
  for (size_t i = 0; i < sizeof list / sizeof list[0]; i++)
    if (strcmp(list[i], name) == 0) return 1;
  return 0;
}

typedef struct sweep_programs {
  prog scale, inc, trap, grid;
} sweep_programs;

/* A representative workload; returns the first failure (and its message). */
static vyre_status workload(vyre_backend *b, const sweep_programs *sp, vyre_error *err) {
  vyre_status st;
  uint32_t in[256];
  for (int i = 0; i < 256; i++) in[i] = (uint32_t)i;
  vyre_outputs *out = NULL;
  vyre_timing t = {.struct_size = sizeof t};
  vyre_program_ref rs = ref_of(&sp->scale), ri = ref_of(&sp->inc);
  vyre_input inputs[1] = {{in, sizeof in}};
#define TRY(call)                \
  do {                           \
    st = (call);                 \
    if (st != VYRE_OK) return st; \
  } while (0)
  TRY(b->vt->prepare(b, err));
  TRY(b->vt->dispatch(b, &rs, inputs, 1, NULL, &out, &t, err));
  b->vt->outputs_free(b, out);
  out = NULL;
  vyre_pending h;
  TRY(b->vt->dispatch_async(b, &rs, inputs, 1, NULL, &h, err));
  int ready;
  st = b->vt->pending_poll(b, h, &ready, err);
  if (st != VYRE_OK) {
    b->vt->pending_release(b, h, NULL);
    return st;
  }
  TRY(b->vt->pending_wait(b, h, &out, &t, err));
  b->vt->outputs_free(b, out);
  out = NULL;
  TRY(b->vt->dispatch_async(b, &rs, inputs, 1, NULL, &h, err));
  TRY(b->vt->pending_release(b, h, err));
  vyre_resident a = 0;
  TRY(b->vt->resident_alloc(b, sizeof in, &a, err));
  st = b->vt->resident_upload(b, a, in, sizeof in, err);
  vyre_sequence_step step = {sizeof step, 1, &ri, &a, NULL};
  uint32_t back[16];
  vyre_resident_copy read = {a, 0, back, sizeof back};
  if (st == VYRE_OK) st = b->vt->dispatch_resident(b, &ri, &a, 1, NULL, &t, err);
  if (st == VYRE_OK) st = b->vt->dispatch_sequence(b, &step, 1, 3, &read, 1, &t, err);
  if (st == VYRE_OK) st = b->vt->resident_download(b, a, in, sizeof in, err);
  vyre_error ferr = VYRE_ERROR_INIT;
  vyre_status fst = b->vt->resident_free(b, a, &ferr);
  if (st != VYRE_OK) return st;
  if (fst != VYRE_OK) {
    vyre_error_copy(err, &ferr);
    return fst;
  }
  /* The interop extension: an import (of part of vyre's own buffer, so
   * the test makes no driver call of its own), dispatches ordered on the
   * legacy default stream. */
  const void *ext = NULL;
  TRY(b->vt->get_extension(b, VYRE_CUDA_INTEROP_NAME, 1, &ext, err));
  const vyre_cuda_interop *cu = ext;
  vyre_resident own = 0, imp = 0;
  TRY(b->vt->resident_alloc(b, sizeof in, &own, err));
  uint64_t dptr = 0;
  st = cu->resident_pointer(b, own, &dptr, NULL, err);
  if (st == VYRE_OK) st = cu->resident_import(b, dptr + 256, 512, &imp, err);
  vyre_cuda_stream cs = {{sizeof cs, VYRE_EXT_CUDA_STREAM, NULL}, NULL};
  vyre_dispatch_options so = {.struct_size = sizeof so, .next = &cs.head};
  if (st == VYRE_OK) st = b->vt->dispatch_resident(b, &ri, &imp, 1, &so, NULL, err);
  if (st == VYRE_OK) st = b->vt->dispatch(b, &rs, inputs, 1, &so, &out, NULL, err);
  b->vt->outputs_free(b, out);
  out = NULL;
  ferr = (vyre_error)VYRE_ERROR_INIT;
  fst = imp ? b->vt->resident_free(b, imp, &ferr) : VYRE_OK;
  if (fst == VYRE_OK) fst = b->vt->resident_free(b, own, &ferr);
  if (st != VYRE_OK) return st;
  if (fst != VYRE_OK) {
    vyre_error_copy(err, &ferr);
    return fst;
  }
  vyre_program_ref rg = ref_of(&sp->grid);
  TRY(b->vt->dispatch(b, &rg, NULL, 0, NULL, &out, NULL, err));
  b->vt->outputs_free(b, out);
  out = NULL;
  vyre_pipeline pl;
  TRY(b->vt->pipeline_create(b, sp->trap.bytes, sp->trap.size, NULL, &pl, err));
  vyre_program_ref rp = VYRE_PROGRAM_PIPELINE(pl);
  st = b->vt->dispatch(b, &rp, NULL, 0, NULL, &out, NULL, err);
  b->vt->outputs_free(b, out);
  b->vt->pipeline_release(b, pl, NULL);
  if (st != VYRE_OK) return st;
  return b->vt->shutdown(b, err);
#undef TRY
}

static void sweep(int code, int sticky) {
  setenv("VYRE_CUDA_DISK_CACHE", "0", 1);
  setenv("VYRE_CUDA_STAGING_CHUNK", "512", 1);
  sweep_programs sp = {prog_scale(256, 2, 64), prog_inc(64), prog_trap(64), prog_grid(128, 64)};
  vyre_error err = VYRE_ERROR_INIT;

  /* A clean run gives the list of calls and how often each is made. */
  fk.reset();
  fk.allow_legacy(1);
  vyre_backend *b = mk();
  ck_assert_msg(workload(b, &sp, &err) == VYRE_OK, "clean workload: %s", err.message);
  b->vt->destroy(b);
  const char *names[128];
  unsigned n = fk.names(names, 128);
  char copy[128][64];
  unsigned long counts[128];
  for (unsigned i = 0; i < n; i++) {
    snprintf(copy[i], sizeof copy[i], "%s", names[i]);
    counts[i] = fk.calls(names[i]);
  }
  unsigned tried = 0, failed = 0;
  for (unsigned i = 0; i < n; i++) {
    /* The first six calls, and the last one (usually in shutdown or destroy). */
    unsigned long limit = counts[i] < 7 ? counts[i] : 7;
    for (unsigned long step = 1; step <= limit; step++) {
      unsigned long k = step < 7 ? step : counts[i];
      fk.reset();
      fk.allow_legacy(1);
      fk.inject(copy[i], k, code, 1);
      vyre_error e = VYRE_ERROR_INIT;
      vyre_backend *x = NULL;
      vyre_status st = reg->create(NULL, &x, &e);
      if (st == VYRE_OK) {
        st = workload(x, &sp, &e);
      }
      tried++;
      int fired = fk.calls(copy[i]) >= k; /* else it fires in destroy */
      if (st != VYRE_OK) {
        failed++;
        /* A sticky code spoils the process; when a later call is the one
         * that sees it (create's retain), the error says that instead. */
        int spoiled = sticky && strstr(e.message, "unusable in this process") != NULL;
        ck_assert_msg(strstr(e.message, copy[i]) != NULL || spoiled,
                      "failing call %lu of %s (code %d) gives an error naming it: %s [%s]", k,
                      copy[i], code, e.message, vyre_status_name(st));
        ck_assert_msg(strstr(e.message, "Fix:") != NULL, "the error has a fix: %s", e.message);
        if (x && !sticky) {
          /* Not sticky: the instance is still usable. */
          vyre_error e2 = VYRE_ERROR_INIT;
          vyre_status again = workload(x, &sp, &e2);
          ck_assert_msg(again == VYRE_OK,
                        "after call %lu of %s failed with a non-sticky code the instance works: "
                        "%s",
                        k, copy[i], e2.message);
        }
        if (x && sticky && st == VYRE_DEVICE_LOST) {
          vyre_error e2 = VYRE_ERROR_INIT;
          ck_assert_int_eq(workload(x, &sp, &e2), VYRE_DEVICE_LOST);
        }
      } else if (fired) {
        /* Out of memory on an allocation is retried after trimming the pools. */
        int retried = code == CUDA_ERROR_OUT_OF_MEMORY &&
                      (!strcmp(copy[i], "cuMemAlloc") || !strcmp(copy[i], "cuMemHostAlloc"));
        /* A sticky error at the very end (shutdown, destroy) reaches nobody
         * who could report it; create's health check tried a reset. */
        int reset = fk.calls("cuDevicePrimaryCtxReset") > 0;
        ck_assert_msg(retried || reset || cleanup_call(copy[i]) ||
                          (x && metric(x, "driver.errors") > 0),
                      "call %lu of %s failed (code %d) yet nothing was reported", k, copy[i],
                      code);
      }
      if (x) x->vt->destroy(x);
      /* destroy cannot report; without a current context it leaves the
       * objects to the context's destruction. */
      int orphaned = !fired && fk.calls(copy[i]) >= k && !strcmp(copy[i], "cuCtxPushCurrent");
      fakecuda_live l;
      fk.live(&l);
      if (strcmp(copy[i], "cuDevicePrimaryCtxRelease") == 0 && l.ctx_refs > 0) {
        fk.ctx_release(0); /* the plugin could not; balance it for the next round */
        fk.live(&l);
      }
      ck_assert_msg(l.ctx_refs == 0, "after failing %s #%lu the context is released", copy[i], k);
      if (!cleanup_call(copy[i]) && !sticky && !orphaned)
        ck_assert_msg(l.reclaimed == 0,
                      "after failing %s #%lu the plugin freed all it made (%lu objects left)",
                      copy[i], k, l.reclaimed);
      char last[512];
      ck_assert_msg(fk.violations(last, sizeof last) == 0,
                    "after failing %s #%lu the driver was used correctly: %s", copy[i], k, last);
    }
  }
  unsigned used = 0;
  for (unsigned i = 0; i < n; i++) used += counts[i] > 0;
  fprintf(stderr,
          "fault sweep (code %d): %u injected failures over the %u entry points the workload "
          "calls, %u surfaced as errors\n",
          code, tried, used, failed);
  ck_assert_msg(tried > 100, "the sweep covered the workload's calls (%u)", tried);
  free(sp.scale.bytes);
  free(sp.inc.bytes);
  free(sp.trap.bytes);
  free(sp.grid.bytes);
}

START_TEST(test_fault_sweep) { sweep(CUDA_ERROR_INVALID_VALUE, 0); }
END_TEST

START_TEST(test_fault_sweep_sticky) { sweep(CUDA_ERROR_LAUNCH_FAILED, 1); }
END_TEST

START_TEST(test_fault_sweep_oom) { sweep(CUDA_ERROR_OUT_OF_MEMORY, 0); }
END_TEST

/* ------------------------------------------------------------------ */
/* ------------------------------------------------------------------ */
/* devices: several devices, one instance each, used from threads     */
/* ------------------------------------------------------------------ */
#define MD_DEVICES 4
#define MD_THREADS 3
#define MD_ROUNDS 12
#define MD_N 1000u

/* Plays prog_scale by the device the launch ran on: device d's program
 * multiplies by d + 2, so a launch in the wrong context gives a wrong
 * result. */
static void play_by_device(const fakecuda_launch *l, void *user) {
  (void)user;
  const uint32_t *in = (const uint32_t *)(uintptr_t)l->params[0];
  uint32_t *out = (uint32_t *)(uintptr_t)l->params[1];
  uint32_t n = l->counts[0], nin = l->counts[1], nout = l->counts[2];
  for (uint32_t i = 0; i < n && i < nin && i < nout; i++) out[i] = in[i] * (uint32_t)(l->device + 2);
}

typedef struct md_arg {
  vyre_backend *b;
  const prog *p;
  uint32_t device, thread;
  int failures;
  char first[256];
} md_arg;

static void *md_worker(void *v) {
  md_arg *a = v;
  uint32_t data[MD_N];
  for (int round = 0; round < MD_ROUNDS; round++) {
    for (uint32_t i = 0; i < MD_N; i++) data[i] = i * 2654435761u + a->thread * 7u + (uint32_t)round;
    vyre_outputs *out = NULL;
    vyre_error err = VYRE_ERROR_INIT;
    vyre_status st = run_scale(a->b, a->p, MD_N, data, &out, NULL, &err);
    int bad = st != VYRE_OK || out->count != 1 || out->items[0].size != MD_N * 4u;
    for (uint32_t i = 0; !bad && i < MD_N; i++)
      bad = ((const uint32_t *)out->items[0].data)[i] != data[i] * (a->device + 2);
    if (bad && !a->failures)
      snprintf(a->first, sizeof a->first, "round %d: %.200s", round,
               st != VYRE_OK ? err.message : "wrong result");
    a->failures += bad;
    if (st == VYRE_OK) a->b->vt->outputs_free(a->b, out);
  }
  return NULL;
}

static vyre_backend *mk_on(uint32_t ordinal) {
  vyre_backend_options o = {sizeof o, ordinal, 0, 0, NULL};
  vyre_backend *b = NULL;
  vyre_error err = VYRE_ERROR_INIT;
  vyre_status st = reg->create(&o, &b, &err);
  ck_assert_msg(st == VYRE_OK, "create on device %u: %s", ordinal, err.message);
  return b;
}

START_TEST(test_devices_concurrent) {
  setenv("FAKECUDA_DEVICES", "4", 1);
  fk.reset();
  fakecuda_device d2 = {"Fake Ampere", 512ull << 20, 8, 0, 108};
  fakecuda_device d3 = {"", 256ull << 20, 0, 0, 0};
  fk.set_device(2, &d2);
  fk.set_device(3, &d3);
  vyre_backend *b[MD_DEVICES];
  const vyre_cuda_interop *cu = NULL;
  void *ctx[MD_DEVICES];
  for (uint32_t d = 0; d < MD_DEVICES; d++) {
    b[d] = mk_on(d);
    vyre_device_profile p;
    memset(&p, 0, sizeof p);
    p.struct_size = sizeof p;
    vyre_error err = VYRE_ERROR_INIT;
    ck_assert_int_eq(b[d]->vt->device_profile(b[d], &p, &err), VYRE_OK);
    ck_assert_msg(p.ordinal == d, "instance %u reports ordinal %u", d, p.ordinal);
    ck_assert_msg(p.device_count == MD_DEVICES, "device %u's profile counts %u devices, expected 4",
                  d, p.device_count);
    ck_assert_uint_eq(p.total_memory, d == 2 ? 512ull << 20 : d == 3 ? 256ull << 20 : 1ull << 30);
    ck_assert_uint_eq(p.compute_major, d == 2 ? 8 : 9);
    ck_assert_uint_eq(p.compute_units, d == 2 ? 108 : 132);
    char want[64];
    if (d == 2) snprintf(want, sizeof want, "Fake Ampere");
    else if (d == 0) snprintf(want, sizeof want, "Fake CUDA Device");
    else snprintf(want, sizeof want, "Fake CUDA Device %u", d);
    ck_assert_str_eq(p.name, want);
    cu = interop_of(b[d]);
    int32_t dev = -1;
    ck_assert_int_eq(cu->context(b[d], &ctx[d], &dev, &err), VYRE_OK);
    ck_assert_msg(dev == (int32_t)d, "instance %u runs on CUdevice %d", d, dev);
    for (uint32_t e = 0; e < d; e++)
      ck_assert_msg(ctx[e] != ctx[d], "devices %u and %u have their own primary contexts", e, d);
  }

  /* Every device, several threads each, at once. */
  fk.set_hook(play_by_device, NULL);
  prog p[MD_DEVICES];
  md_arg a[MD_DEVICES][MD_THREADS];
  pthread_t t[MD_DEVICES][MD_THREADS];
  for (uint32_t d = 0; d < MD_DEVICES; d++) p[d] = prog_scale(MD_N, d + 2, 128);
  unsigned long launches0 = fk.launch_count();
  for (uint32_t d = 0; d < MD_DEVICES; d++)
    for (uint32_t k = 0; k < MD_THREADS; k++) {
      a[d][k] = (md_arg){b[d], &p[d], d, k, 0, ""};
      ck_assert_int_eq(pthread_create(&t[d][k], NULL, md_worker, &a[d][k]), 0);
    }
  for (uint32_t d = 0; d < MD_DEVICES; d++)
    for (uint32_t k = 0; k < MD_THREADS; k++) {
      pthread_join(t[d][k], NULL);
      ck_assert_msg(a[d][k].failures == 0, "device %u thread %u: %d bad dispatches, first: %s", d,
                    k, a[d][k].failures, a[d][k].first);
    }
  /* Each launch ran in the context of the device whose instance made it. */
  unsigned long per[MD_DEVICES] = {0};
  for (unsigned long i = launches0; i < fk.launch_count(); i++) {
    fakecuda_launch l;
    ck_assert_int_eq(fk.launch_get(i, &l), 0);
    ck_assert_msg(l.device >= 0 && l.device < MD_DEVICES, "launch %lu has a device (%d)", i,
                  l.device);
    ck_assert_msg(l.context == ctx[l.device], "launch %lu ran in device %d's primary context", i,
                  l.device);
    per[l.device]++;
  }
  for (uint32_t d = 0; d < MD_DEVICES; d++) {
    ck_assert_msg(per[d] == MD_THREADS * MD_ROUNDS, "device %u ran %lu launches, expected %d", d,
                  per[d], MD_THREADS * MD_ROUNDS);
    ck_assert_uint_eq(metric(b[d], "dispatch.count"), MD_THREADS * MD_ROUNDS);
    ck_assert_msg(fk.device_bytes(d) > 0, "device %u's pools hold its own memory", d);
  }

  /* A resident buffer lands on its instance's device only. */
  unsigned long long before[MD_DEVICES];
  for (uint32_t d = 0; d < MD_DEVICES; d++) before[d] = fk.device_bytes(d);
  vyre_resident h = 0;
  vyre_error err = VYRE_ERROR_INIT;
  ck_assert_int_eq(b[1]->vt->resident_alloc(b[1], 3u << 20, &h, &err), VYRE_OK);
  for (uint32_t d = 0; d < MD_DEVICES; d++)
    ck_assert_msg(d == 1 ? fk.device_bytes(d) >= before[d] + (3u << 20)
                         : fk.device_bytes(d) == before[d],
                  "3 MiB resident on device 1 changed device %u's memory %llu -> %llu", d,
                  before[d], fk.device_bytes(d));
  ck_assert_int_eq(b[1]->vt->resident_free(b[1], h, &err), VYRE_OK);

  /* One device's instance goes; the others keep their memory and work. */
  b[0]->vt->destroy(b[0]);
  ck_assert_msg(fk.device_bytes(0) == 0, "device 0's memory is all freed (%llu left)",
                fk.device_bytes(0));
  for (uint32_t d = 1; d < MD_DEVICES; d++) {
    ck_assert_msg(fk.device_bytes(d) > 0, "device %u keeps its memory", d);
    md_arg one = {b[d], &p[d], d, 9, 0, ""};
    md_worker(&one);
    ck_assert_msg(one.failures == 0, "device %u after device 0 went: %s", d, one.first);
  }
  for (uint32_t d = 1; d < MD_DEVICES; d++) b[d]->vt->destroy(b[d]);
  assert_no_leaks_after_destroy("devices");
  for (uint32_t d = 0; d < MD_DEVICES; d++) free(p[d].bytes);
}
END_TEST

/* The disk cache keeps one cubin per compute capability: the same program
 * on an sm_90 and an sm_80 device compiles twice, and each device then
 * finds its own. */
START_TEST(test_devices_disk_cache) {
  char cubins[512];
  snprintf(cubins, sizeof cubins, "%s/cache/cuda", tmpdir);
  setenv("FAKECUDA_DEVICES", "3", 1);
  fk.reset();
  fakecuda_device d1 = {"", 0, 8, 0, 0};
  fk.set_device(1, &d1);
  prog p = prog_scale(64, 2, 64);
  uint32_t in[64] = {0};
  vyre_outputs *out = NULL;
  vyre_error err = VYRE_ERROR_INIT;
  for (int pass = 0; pass < 2; pass++)
    for (uint32_t d = 0; d < 3; d++) {
      vyre_backend *b = mk_on(d);
      ck_assert_int_eq(run_scale(b, &p, 64, in, &out, NULL, &err), VYRE_OK);
      b->vt->outputs_free(b, out);
      /* Device 2 (sm_90, like device 0) finds device 0's cubin. */
      int hit = pass == 1 || d == 2;
      ck_assert_msg(metric(b, "cache.disk.hits") == (uint64_t)hit,
                    "pass %d device %u: disk cache %s", pass, d, hit ? "hit" : "miss");
      b->vt->destroy(b);
    }
  ck_assert_int_eq(count_files(cubins, ".cubin"), 2);
  assert_no_leaks_after_destroy("devices disk cache");
  free(p.bytes);
}
END_TEST

/* A bad ordinal: VYRE_NO_DEVICE naming the ordinal and the count, with
 * a fix; a device the backend cannot use does not spoil the others. */
START_TEST(test_devices_bad_ordinal) {
  setenv("FAKECUDA_DEVICES", "2", 1);
  fk.reset();
  vyre_error err = VYRE_ERROR_INIT;
  vyre_backend *b = NULL;
  uint32_t bad[] = {2, 7, 1024, UINT32_MAX};
  for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
    vyre_backend_options o = {sizeof o, bad[i], 0, 0, NULL};
    ck_assert_int_eq(reg->create(&o, &b, &err), VYRE_NO_DEVICE);
    ck_assert_ptr_null(b);
    char want[64];
    snprintf(want, sizeof want, "CUDA device %u not present", bad[i]);
    ck_assert_msg(strstr(err.message, want) && strstr(err.message, "sees 2 CUDA devices") &&
                      strstr(err.message, "ordinals 0 to 1") && strstr(err.message, "Fix:"),
                  "ordinal %u: %s", bad[i], err.message);
  }
  setenv("FAKECUDA_DEVICES", "1", 1);
  fk.reset();
  vyre_backend_options o1 = {sizeof o1, 1, 0, 0, NULL};
  ck_assert_int_eq(reg->create(&o1, &b, &err), VYRE_NO_DEVICE);
  ck_assert_msg(strstr(err.message, "sees 1 CUDA device (ordinals 0 to 0)") != NULL,
                "one device: %s", err.message);

  setenv("FAKECUDA_DEVICES", "2", 1);
  fk.reset();
  fakecuda_device old = {"Fake Pascal", 0, 6, 1, 0};
  fk.set_device(1, &old);
  vyre_backend_options o = {sizeof o, 1, 0, 0, NULL};
  ck_assert_int_eq(reg->create(&o, &b, &err), VYRE_NO_DEVICE);
  ck_assert_msg(strstr(err.message, "CUDA device 1 (Fake Pascal)") &&
                    strstr(err.message, "7.0 or newer") && strstr(err.message, "Fix:"),
                "old device: %s", err.message);
  b = mk_on(0);
  vyre_device_profile p;
  memset(&p, 0, sizeof p);
  p.struct_size = sizeof p;
  ck_assert_int_eq(b->vt->device_profile(b, &p, &err), VYRE_OK);
  ck_assert_uint_eq(p.device_count, 2);
  b->vt->destroy(b);
  assert_no_leaks_after_destroy("bad ordinal");
}
END_TEST

static Suite *suite(void) {
  Suite *s = suite_create("cuda_fake");
  TCase *core = tcase_create("core");
  tcase_add_checked_fixture(core, setup, teardown);
  tcase_set_timeout(core, 60);
  tcase_add_test(core, test_registration);
  tcase_add_test(core, test_profile);
  tcase_add_test(core, test_dispatch_roundtrip);
  tcase_add_test(core, test_params_and_ranges);
  tcase_add_test(core, test_graph_fast_path);
  tcase_add_test(core, test_timing_fixpoint_grid);
  tcase_add_test(core, test_trap_and_empty);
  tcase_add_test(core, test_cooperative);
  suite_add_tcase(s, core);

  TCase *async = tcase_create("async");
  tcase_add_checked_fixture(async, setup, teardown);
  tcase_set_timeout(async, 60);
  tcase_add_test(async, test_async_orders);
  tcase_add_test(async, test_threads);
  suite_add_tcase(s, async);

  TCase *staging = tcase_create("staging");
  tcase_add_checked_fixture(staging, setup, teardown);
  tcase_set_timeout(staging, 120);
  tcase_add_test(staging, test_staging_dispatch);
  tcase_add_test(staging, test_staging_dispatch_one_thread);
  tcase_add_test(staging, test_staging_resident);
  tcase_add_test(staging, test_staging_pieces);
  tcase_add_test(staging, test_staging_failures);
  tcase_add_test(staging, test_staging_threads);
  suite_add_tcase(s, staging);

  TCase *res = tcase_create("resident");
  tcase_add_checked_fixture(res, setup, teardown);
  tcase_set_timeout(res, 60);
  tcase_add_test(res, test_resident_basics);
  tcase_add_test(res, test_resident_budget);
  tcase_add_test(res, test_resident_dispatch_sequences);
  tcase_add_test(res, test_pipelines);
  suite_add_tcase(s, res);

  TCase *interop = tcase_create("interop");
  tcase_add_checked_fixture(interop, setup, teardown);
  tcase_set_timeout(interop, 60);
  tcase_add_test(interop, test_interop_extension);
  tcase_add_test(interop, test_interop_import);
  tcase_add_test(interop, test_interop_import_device);
  tcase_add_test(interop, test_interop_graphs);
  tcase_add_test(interop, test_interop_stream);
  suite_add_tcase(s, interop);

  TCase *pools = tcase_create("pools");
  tcase_add_checked_fixture(pools, setup, teardown);
  tcase_set_timeout(pools, 60);
  tcase_add_test(pools, test_pools);
  suite_add_tcase(s, pools);

  TCase *caches = tcase_create("caches");
  tcase_add_checked_fixture(caches, setup, teardown);
  tcase_set_timeout(caches, 60);
  tcase_add_test(caches, test_module_cache);
  tcase_add_test(caches, test_byte_cache);
  tcase_add_test(caches, test_disk_cache);
  tcase_add_test(caches, test_disk_cache_concurrent);
  tcase_add_test(caches, test_jit_failure);
  suite_add_tcase(s, caches);

  TCase *errors = tcase_create("errors");
  tcase_add_checked_fixture(errors, setup, teardown);
  tcase_set_timeout(errors, 600);
  tcase_add_test(errors, test_no_driver_no_device);
  tcase_add_test(errors, test_unsupported_and_invalid);
  tcase_add_test(errors, test_error_text);
  tcase_add_test(errors, test_device_lost);
  tcase_add_test(errors, test_kernel_fault);
  tcase_add_test(errors, test_timeout_not_reached);
  tcase_add_test(errors, test_timeout_dispatch);
  tcase_add_test(errors, test_timeout_async);
  tcase_add_test(errors, test_timeout_resident_sequence);
  tcase_add_test(errors, test_fault_sweep);
  tcase_add_test(errors, test_fault_sweep_sticky);
  tcase_add_test(errors, test_fault_sweep_oom);
  suite_add_tcase(s, errors);
  TCase *devices = tcase_create("devices");
  tcase_add_checked_fixture(devices, setup, teardown);
  tcase_set_timeout(devices, 120);
  tcase_add_test(devices, test_devices_concurrent);
  tcase_add_test(devices, test_devices_disk_cache);
  tcase_add_test(devices, test_devices_bad_ordinal);
  suite_add_tcase(s, devices);
  return s;
}

#define RESOLVE(field, name)                                                            \
  do {                                                                                  \
    *(void **)&fk.field = dlsym(fake_dl, name);                                         \
    if (!fk.field) {                                                                    \
      fprintf(stderr, "check_cuda_fake: %s missing from %s\n", name, fake_path);        \
      return 1;                                                                         \
    }                                                                                   \
  } while (0)

int main(void) {
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

  SRunner *sr = srunner_create(suite());
  srunner_run_all(sr, CK_NORMAL);
  int failed = srunner_ntests_failed(sr);
  srunner_free(sr);
  /* Hosts never dlclose plugins; neither do we. */
  return failed ? 1 : 0;
}
