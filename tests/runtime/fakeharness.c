/* fakeharness.c -- what the fault-sweep and thread suites share: the plugin and the fake libcuda loaded once, test programs, kernels played on the host. */
#include "fakeharness.h"

#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "vyre/vyre_program.h"
#include "vyre/vyre_support.h"

fh_fake fh;
const vyre_registration *fh_reg;
char fh_fake_path[1024];
static void *fake_dl;

/* ------------------------------------------------------------------ */
/* The kernel player                                                   */
/* ------------------------------------------------------------------ */
#define MAX_KERNELS 32
static pthread_mutex_t learn_lock = PTHREAD_MUTEX_INITIALIZER;
static struct {
  char name[64];
  fh_kind kind;
  uint32_t k;
} kernels[MAX_KERNELS];
static unsigned nkernels;

/* The launch hook: runs without the fake's lock, on the launching thread;
 * kernels of different threads touch different buffers. */
static void play(const fakecuda_launch *l, void *user) {
  (void)user;
  fh_kind kind = 0;
  uint32_t k = 0;
  pthread_mutex_lock(&learn_lock);
  for (unsigned i = 0; i < nkernels; i++)
    if (strcmp(kernels[i].name, l->kernel) == 0) {
      kind = kernels[i].kind;
      k = kernels[i].k;
    }
  pthread_mutex_unlock(&learn_lock);
  const uint32_t *c = l->counts; /* element count, then each buffer's */
  uint32_t n = c[0];
  switch (kind) {
  case FH_SCALE: {
    const uint32_t *in = (const uint32_t *)(uintptr_t)l->params[0];
    uint32_t *out = (uint32_t *)(uintptr_t)l->params[1];
    for (uint32_t i = 0; i < n; i++)
      if (i < c[1] && i < c[2]) out[i] = in[i] * k;
    break;
  }
  case FH_INC: {
    uint32_t *buf = (uint32_t *)(uintptr_t)l->params[0];
    for (uint32_t i = 0; i < n && i < c[1]; i++) buf[i] += k ? k : 1u;
    break;
  }
  case FH_TRAP: { /* one buffer: the trap words follow the two count words */
    uint32_t *w = (uint32_t *)(uintptr_t)l->params[l->nparams - 1];
    if (w) {
      w[2] = 7;
      w[3] = 4 + 1; /* instruction 4 is the trap */
    }
    break;
  }
  case FH_GRID: {
    uint32_t *buf = (uint32_t *)(uintptr_t)l->params[0];
    uint32_t *out = (uint32_t *)(uintptr_t)l->params[1];
    for (uint32_t i = 0; i < n && i < c[1]; i++) buf[i] = i;
    for (uint32_t i = 0; i < n && i < c[2]; i++) out[i] = i + 1 < c[1] ? buf[i + 1] : 0;
    break;
  }
  default:
    break;
  }
}

void fh_learn(fh_kind kind, uint32_t k) {
  unsigned long n = fh.launch_count();
  fakecuda_launch l;
  if (!n || fh.launch_get(n - 1, &l) != 0) return;
  pthread_mutex_lock(&learn_lock);
  unsigned i = 0;
  while (i < nkernels && strcmp(kernels[i].name, l.kernel) != 0) i++;
  if (i < MAX_KERNELS) {
    snprintf(kernels[i].name, sizeof kernels[i].name, "%s", l.kernel);
    kernels[i].kind = kind;
    kernels[i].k = k;
    if (i == nkernels) nkernels++;
  }
  pthread_mutex_unlock(&learn_lock);
}

void fh_reset(void) {
  fh.reset();
  fh.set_hook(play, NULL);
}

void fh_forget(void) {
  pthread_mutex_lock(&learn_lock);
  nkernels = 0;
  pthread_mutex_unlock(&learn_lock);
}

/* ------------------------------------------------------------------ */
/* Programs                                                            */
/* ------------------------------------------------------------------ */
static fh_prog finish(vyre_builder *b) {
  fh_prog p = {NULL, 0};
  vyre_error err = VYRE_ERROR_INIT;
  vyre_status st = vyre_builder_finish(b, &p.bytes, &p.size, &err);
  vyre_builder_free(b);
  if (st != VYRE_OK) {
    fprintf(stderr, "fakeharness: a test program does not build: %s\n", err.message);
    abort();
  }
  return p;
}

fh_prog fh_prog_scale(uint32_t n, uint32_t k, uint32_t wg) {
  vyre_builder *b = vyre_builder_new(wg, 1, 1);
  uint32_t in = vyre_b_buffer(b, "in", UINT32_MAX, VYRE_ACCESS_READ_ONLY, VYRE_T_U32, 0, 0);
  uint32_t out = vyre_b_buffer(b, "out", UINT32_MAX, VYRE_ACCESS_WRITE_ONLY, VYRE_T_U32, n, 0);
  uint32_t g = vyre_b_gid(b, 0);
  uint32_t v = vyre_b_load(b, in, g);
  vyre_b_store(b, out, g, vyre_b_bin(b, VYRE_OP_MUL, v, vyre_b_u32(b, k)));
  return finish(b);
}

fh_prog fh_prog_inc(uint32_t wg) {
  vyre_builder *b = vyre_builder_new(wg, 1, 1);
  uint32_t buf = vyre_b_buffer(b, "buf", UINT32_MAX, VYRE_ACCESS_READ_WRITE, VYRE_T_U32, 0, 0);
  uint32_t g = vyre_b_gid(b, 0);
  uint32_t v = vyre_b_load(b, buf, g);
  vyre_b_store(b, buf, g, vyre_b_bin(b, VYRE_OP_ADD, v, vyre_b_u32(b, 1)));
  return finish(b);
}

fh_prog fh_prog_trap(uint32_t n) {
  vyre_builder *b = vyre_builder_new(32, 1, 1);
  uint32_t out = vyre_b_buffer(b, "out", UINT32_MAX, VYRE_ACCESS_WRITE_ONLY, VYRE_T_U32, n, 0);
  uint32_t g = vyre_b_gid(b, 0);
  vyre_b_if(b, vyre_b_bin(b, VYRE_OP_EQ, g, vyre_b_u32(b, 5)));
  vyre_b_trap(b, 7);
  vyre_b_end(b);
  vyre_b_store(b, out, g, vyre_b_u32(b, 1));
  return finish(b);
}

fh_prog fh_prog_grid(uint32_t n, uint32_t wg) {
  vyre_builder *b = vyre_builder_new(wg, 1, 1);
  uint32_t buf = vyre_b_buffer(b, "buf", UINT32_MAX, VYRE_ACCESS_READ_WRITE, VYRE_T_U32, n,
                               VYRE_BUF_OUTPUT);
  uint32_t out = vyre_b_buffer(b, "out", UINT32_MAX, VYRE_ACCESS_WRITE_ONLY, VYRE_T_U32, n, 0);
  uint32_t g = vyre_b_gid(b, 0);
  vyre_b_store(b, buf, g, g);
  vyre_b_barrier(b, VYRE_BARRIER_GRID);
  g = vyre_b_gid(b, 0);
  uint32_t nb = vyre_b_bin(b, VYRE_OP_ADD, g, vyre_b_u32(b, 1));
  vyre_b_store(b, out, g, vyre_b_load(b, buf, nb));
  return finish(b);
}

vyre_program_ref fh_ref(const fh_prog *p) {
  vyre_program_ref r = VYRE_PROGRAM_BYTES(p->bytes, p->size);
  return r;
}

/* ------------------------------------------------------------------ */
/* Environment and metrics                                             */
/* ------------------------------------------------------------------ */
void fh_env(uint64_t chunk, unsigned threads) {
  static const char *clear[] = {
      "VYRE_CUDA_POOL_DEVICE_BYTES", "VYRE_CUDA_POOL_PINNED_BYTES", "VYRE_CUDA_STAGING_CHUNKS",
      "VYRE_PTX_DUMP_DIR", "VYRE_CUDA_MODULE_CACHE", "VYRE_CUDA_FUSE", "VYRE_CUDA_JIT_OPT_LEVEL",
      "VYRE_CUDA_JIT_DIRECT", "FAKECUDA_DEVICES", "FAKECUDA_INIT_RESULT",
      "FAKECUDA_SM", "FAKECUDA_SMS", "FAKECUDA_MEM", "FAKECUDA_COOP",
      "FAKECUDA_MAX_BLOCKS_PER_SM"};
  for (size_t i = 0; i < sizeof clear / sizeof clear[0]; i++) unsetenv(clear[i]);
  setenv("VYRE_CUDA_DRIVER", fh_fake_path, 1);
  setenv("VYRE_CUDA_DISK_CACHE", "0", 1);
  char v[32];
  if (chunk) {
    snprintf(v, sizeof v, "%llu", (unsigned long long)chunk);
    setenv("VYRE_CUDA_STAGING_CHUNK", v, 1);
  } else {
    unsetenv("VYRE_CUDA_STAGING_CHUNK");
  }
  snprintf(v, sizeof v, "%u", threads ? threads : 1);
  setenv("VYRE_CUDA_COPY_THREADS", v, 1);
}

uint64_t fh_metric(vyre_backend *b, const char *name) {
  vyre_metric m[160];
  uint32_t n = 0;
  if (b->vt->metrics(b, m, 160, &n, NULL) != VYRE_OK) return UINT64_MAX;
  for (uint32_t i = 0; i < n && i < 160; i++)
    if (strcmp(m[i].name, name) == 0) return m[i].value;
  return UINT64_MAX;
}

/* ------------------------------------------------------------------ */
/* Loading                                                             */
/* ------------------------------------------------------------------ */
#define RESOLVE(field, name)                                                          \
  do {                                                                                \
    *(void **)&fh.field = dlsym(fake_dl, name);                                       \
    if (!fh.field) {                                                                  \
      fprintf(stderr, "%s: %s missing from %s\n", who, name, fh_fake_path);           \
      return -1;                                                                      \
    }                                                                                 \
  } while (0)

int fh_load(const char *who) {
  const char *build = getenv("VYRE_BUILD_DIR");
  if (!build) build = ".";
  char plugin_path[1024];
  snprintf(plugin_path, sizeof plugin_path, "%s/plugin/runtime/.libs/libvyre-cuda.so", build);
  snprintf(fh_fake_path, sizeof fh_fake_path, "%s/tests/runtime/fakecuda/.libs/libfakecuda.so",
           build);
  void *dl = dlopen(plugin_path, RTLD_NOW | RTLD_LOCAL);
  if (!dl) {
    fprintf(stderr, "%s: cannot load the plugin: %s. Fix: build it (make) and set "
                    "VYRE_BUILD_DIR to the build tree\n", who, dlerror());
    return -1;
  }
  vyre_plugin_entry_fn entry = (vyre_plugin_entry_fn)dlsym(dl, VYRE_PLUGIN_ENTRY_SYMBOL);
  vyre_error err = VYRE_ERROR_INIT;
  if (!entry || entry(VYRE_ABI_MAJOR, VYRE_ABI_MINOR, &fh_reg, &err) != VYRE_OK) {
    fprintf(stderr, "%s: plugin entry failed: %s\n", who, err.message);
    return -1;
  }
  fake_dl = dlopen(fh_fake_path, RTLD_NOW | RTLD_LOCAL | RTLD_NODELETE);
  if (!fake_dl) {
    fprintf(stderr, "%s: cannot load the fake driver: %s\n", who, dlerror());
    return -1;
  }
  RESOLVE(reset, "fakecuda_reset");
  RESOLVE(inject, "fakecuda_inject");
  RESOLVE(clear_faults, "fakecuda_clear_faults");
  RESOLVE(calls, "fakecuda_calls");
  RESOLVE(live, "fakecuda_objects");
  RESOLVE(set_hook, "fakecuda_set_hook");
  RESOLVE(violations, "fakecuda_violations");
  RESOLVE(poisoned, "fakecuda_poisoned");
  RESOLVE(allow_legacy, "fakecuda_allow_legacy_stream");
  RESOLVE(launch_count, "fakecuda_launch_count");
  RESOLVE(launch_get, "fakecuda_launch_get");
  RESOLVE(total_calls, "fakecuda_total_calls");
  RESOLVE(inject_call, "fakecuda_inject_call");
  RESOLVE(call_fault_fired, "fakecuda_call_fault_fired");
  RESOLVE(ctx_release, "cuDevicePrimaryCtxRelease_v2");
  RESOLVE(ctx_pop, "cuCtxPopCurrent_v2");
  fh_env(0, 1);
  fh_reset();
  return 0;
}
