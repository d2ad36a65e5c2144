/* context.c -- loading libcuda at run time, the driver entry table, driver errors, device probe and the primary context. */
#include <dlfcn.h>
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "cuda_internal.h"

#define DEFAULT_DRIVER "libcuda.so.1"

static pthread_once_t log_once = PTHREAD_ONCE_INIT;
static int log_debug;

static void log_init(void) {
  const char *v = getenv("VYRE_LOG");
  log_debug = v && (strstr(v, "debug") || strstr(v, "trace"));
}

void vc_log(const char *fmt, ...) {
  pthread_once(&log_once, log_init);
  if (!log_debug) return;
  char line[1024];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(line, sizeof line, fmt, ap);
  va_end(ap);
  fprintf(stderr, "vyre-cuda: %s\n", line);
}

uint64_t vc_now_ns(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/* Codes after which the context cannot be used again (CUDA driver API
 * reference, "Error Handling": "the process must terminate and relaunch"
 * for the context; a fresh primary context recovers). */
int vc_is_sticky(CUresult r) {
  switch (r) {
  case CUDA_ERROR_ILLEGAL_ADDRESS:
  case CUDA_ERROR_LAUNCH_FAILED:
  case CUDA_ERROR_LAUNCH_TIMEOUT:
  case CUDA_ERROR_ILLEGAL_INSTRUCTION:
  case CUDA_ERROR_MISALIGNED_ADDRESS:
  case CUDA_ERROR_INVALID_ADDRESS_SPACE:
  case CUDA_ERROR_INVALID_PC:
  case CUDA_ERROR_HARDWARE_STACK_ERROR:
  case CUDA_ERROR_ASSERT:
  case CUDA_ERROR_ECC_UNCORRECTABLE:
  case CUDA_ERROR_NVLINK_UNCORRECTABLE:
  case CUDA_ERROR_CONTEXT_IS_DESTROYED:
    return 1;
  default:
    return 0;
  }
}

/* Name and text of a CUresult; the lookups can fail themselves. */
static void describe(vc_backend *b, CUresult r, const char **name, const char **text) {
  *name = NULL;
  *text = NULL;
  if (b && b->api.f_cuGetErrorName && VC_CU(b, cuGetErrorName, (r, name)) != CUDA_SUCCESS)
    *name = NULL;
  if (b && b->api.f_cuGetErrorString && VC_CU(b, cuGetErrorString, (r, text)) != CUDA_SUCCESS)
    *text = NULL;
  if (!*name) *name = "unrecognised CUresult";
  if (!*text) *text = "the driver has no description for this code";
}

static const char *default_fix(CUresult r) {
  if (vc_is_sticky(r)) return "destroy and recreate the backend";
  switch (r) {
  case CUDA_ERROR_OUT_OF_MEMORY:
    return "free resident buffers or pipelines, dispatch smaller inputs, or call shutdown to "
           "return cached memory";
  case CUDA_ERROR_NOT_INITIALIZED:
  case CUDA_ERROR_NO_DEVICE:
  case CUDA_ERROR_INVALID_DEVICE:
    return "check the device with nvidia-smi and CUDA_VISIBLE_DEVICES";
  case CUDA_ERROR_INVALID_PTX:
  case CUDA_ERROR_UNSUPPORTED_PTX_VERSION:
    return "update the NVIDIA driver; if that does not help, report a codegen bug with the PTX "
           "(set VYRE_PTX_DUMP_DIR)";
  case CUDA_ERROR_COOPERATIVE_LAUNCH_TOO_LARGE:
    return "use fewer workgroups for a program with a grid barrier";
  case CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES:
    return "use a smaller workgroup";
  default:
    return "retry; if it persists, run with VYRE_LOG=debug and check the driver installation "
           "(nvidia-smi)";
  }
}

void vc_mark_lost(vc_backend *b, const char *reason) {
  pthread_mutex_lock(&b->lost_lock);
  if (!atomic_load(&b->lost)) {
    snprintf(b->lost_reason, sizeof b->lost_reason, "%s", reason);
    atomic_store(&b->lost, 1);
    vc_log("device %u marked lost: %s", b->ordinal, reason);
  }
  pthread_mutex_unlock(&b->lost_lock);
}

/* Generation of each device's primary context in this process: bumped by
 * an instance that resets it, so instances holding objects of the old one
 * know they are gone. */
#define EPOCH_SLOTS 64
static atomic_uint ctx_epoch[EPOCH_SLOTS];

int vc_is_lost(vc_backend *b) {
  if (atomic_load(&b->lost)) return 1;
  if (b->ctx_retained && atomic_load(&ctx_epoch[b->ordinal % EPOCH_SLOTS]) != b->epoch) {
    vc_mark_lost(b, "another instance reset the device's primary context after a device error "
                    "(every object of this instance went with it)");
    return 1;
  }
  return 0;
}

int vc_cleanup_ok(vc_backend *b) { return !b->orphaned && !vc_is_lost(b); }

vyre_status vc_lost_error(vc_backend *b, vyre_error *err) {
  pthread_mutex_lock(&b->lost_lock);
  vyre_status st = vyre_error_set(err, VYRE_DEVICE_LOST, 0,
                                  "device lost: CUDA device %u is unusable since %s. Fix: "
                                  "destroy and recreate the backend",
                                  b->ordinal, b->lost_reason);
  pthread_mutex_unlock(&b->lost_lock);
  return st;
}

vyre_status vc_cu_fail(vc_backend *b, vyre_error *err, CUresult r, const char *call,
                       const char *kernel, const char *fix) {
  const char *name, *text;
  describe(b, r, &name, &text);
  atomic_fetch_add(&b->n_driver_errors, 1);
  char where[128] = "";
  if (kernel && *kernel) snprintf(where, sizeof where, " (kernel %s)", kernel);
  if (vc_is_sticky(r)) {
    char reason[512];
    snprintf(reason, sizeof reason, "%s%s failed with %s (%s)", call, where, name, text);
    vc_mark_lost(b, reason);
    /* The first failure that lost the device may have been one nobody
     * could be told about (a cleanup); name it too. */
    pthread_mutex_lock(&b->lost_lock);
    int same = strcmp(b->lost_reason, reason) == 0;
    vyre_status st = vyre_error_set(
        err, VYRE_DEVICE_LOST, (int64_t)r,
        "device lost: %s%s failed: %s (%s)%s%s; the CUDA context is unusable. Fix: destroy and "
        "recreate the backend",
        call, where, name, text, same ? "" : "; first failure: ", same ? "" : b->lost_reason);
    pthread_mutex_unlock(&b->lost_lock);
    return st;
  }
  vyre_status st = r == CUDA_ERROR_OUT_OF_MEMORY ? VYRE_OUT_OF_MEMORY : VYRE_DRIVER;
  vc_log("%s%s failed: %s (%s)", call, where, name, text);
  return vyre_error_set(err, st, (int64_t)r, "%s%s failed: %s (%s). Fix: %s", call, where, name,
                        text, fix ? fix : default_fix(r));
}

void vc_cu_note(vc_backend *b, CUresult r, const char *call) {
  if (r == CUDA_SUCCESS) return;
  const char *name, *text;
  describe(b, r, &name, &text);
  atomic_fetch_add(&b->n_driver_errors, 1);
  if (vc_is_sticky(r)) {
    char reason[512];
    snprintf(reason, sizeof reason, "%s failed with %s (%s)", call, name, text);
    vc_mark_lost(b, reason);
  }
  vc_log("%s failed during cleanup: %s (%s)", call, name, text);
}

vyre_status vc_enter(vc_backend *b, vyre_error *err) {
  if (vc_is_lost(b)) return vc_lost_error(b, err);
  CUresult r = VC_CU(b, cuCtxPushCurrent, (b->ctx));
  if (r != CUDA_SUCCESS) return vc_cu_fail(b, err, r, "cuCtxPushCurrent", NULL, NULL);
  if (atomic_load(&b->deferred_count)) vc_reap_deferred(b, 0);
  return VYRE_OK;
}

void vc_leave(vc_backend *b) {
  CUcontext popped = NULL;
  CUresult r = VC_CU(b, cuCtxPopCurrent, (&popped));
  if (r != CUDA_SUCCESS) {
    /* The work of the call is done and its result stands; a failed pop
     * only leaves our context on this thread's stack.  Counted in
     * driver.ctx_pop_errors and logged (docs/cuda-runtime.md). */
    atomic_fetch_add(&b->n_ctx_pop_errors, 1);
    vc_cu_note(b, r, "cuCtxPopCurrent");
  }
}

/* ------------------------------------------------------------------ */
/* Driver loading                                                      */
/* ------------------------------------------------------------------ */
#if CUDA_VERSION >= 12000
typedef CUresult(CUDAAPI *vc_pfn_getproc_v2)(const char *symbol, void **pfn, int version,
                                              cuuint64_t flags,
                                              CUdriverProcAddressQueryResult *status);
#endif
typedef CUresult(CUDAAPI *vc_pfn_getproc_v1)(const char *symbol, void **pfn, int version,
                                              cuuint64_t flags);

static vyre_status load_driver(vc_backend *b, vyre_error *err) {
  const char *path = getenv("VYRE_CUDA_DRIVER");
  if (!path || !*path) path = DEFAULT_DRIVER;
  dlerror();
  /* RTLD_NODELETE: libcuda keeps threads and atexit handlers; it must
   * never be unmapped, even when the last instance closes it. */
  b->dl = dlopen(path, RTLD_NOW | RTLD_LOCAL | RTLD_NODELETE);
  if (!b->dl) {
    const char *why = dlerror();
    return vyre_error_set(err, VYRE_NO_DEVICE, 0,
                          "CUDA driver not loaded: dlopen(\"%s\") failed: %s. Fix: install the "
                          "NVIDIA driver (it provides libcuda.so.1), or set VYRE_CUDA_DRIVER to "
                          "the path of libcuda.so",
                          path, why ? why : "unknown error");
  }
#if CUDA_VERSION >= 12000
  vc_pfn_getproc_v2 getproc2 = (vc_pfn_getproc_v2)dlsym(b->dl, "cuGetProcAddress_v2");
#endif
  vc_pfn_getproc_v1 getproc1 = (vc_pfn_getproc_v1)dlsym(b->dl, "cuGetProcAddress");
#if CUDA_VERSION >= 12000
  if (!getproc2 && !getproc1)
#else
  if (!getproc1)
#endif
    return vyre_error_set(err, VYRE_NO_DEVICE, 0,
                          "CUDA driver unusable: %s exports neither cuGetProcAddress_v2 nor "
                          "cuGetProcAddress (driver older than CUDA 11.3?). Fix: update the "
                          "NVIDIA driver",
                          path);
#define VC_RESOLVE_(name, version, params)                                                        \
  do {                                                                                     \
    void *fn = NULL;                                                                       \
    CUresult r;                                                                            \
    int why = 0;                                                                           \
    RESOLVE_CALL(#name, version, &fn, r, why);                                                      \
    if (r != CUDA_SUCCESS || !fn)                                                          \
      return vyre_error_set(err, VYRE_NO_DEVICE, (int64_t)r,                               \
                            "CUDA driver unusable: cuGetProcAddress(\"%s\", %d) failed "   \
                            "(CUresult %d%s). Fix: update the NVIDIA driver to one that "  \
                            "supports CUDA %d.%d",                                         \
                            #name, version, (int)r,                                         \
                            why == 2 ? ", version not sufficient"                          \
                                     : why == 1 ? ", symbol not found" : "",               \
                            CUDA_VERSION / 1000, CUDA_VERSION % 1000 / 10);                \
    memcpy(&b->api.f_##name, &fn, sizeof fn);                                              \
  } while (0);
#if CUDA_VERSION >= 12000
#define RESOLVE_CALL(sym, ver, fnp, r, why)                                             \
  do {                                                                                  \
    if (getproc2) {                                                                     \
      CUdriverProcAddressQueryResult qs = CU_GET_PROC_ADDRESS_SUCCESS;                  \
      r = getproc2(sym, fnp, ver, CU_GET_PROC_ADDRESS_DEFAULT, &qs);           \
      why = (int)qs;                                                                    \
    } else {                                                                            \
      r = getproc1(sym, fnp, ver, CU_GET_PROC_ADDRESS_DEFAULT);                          \
    }                                                                                   \
  } while (0)
#else
#define RESOLVE_CALL(sym, ver, fnp, r, why) (r = getproc1(sym, fnp, ver, CU_GET_PROC_ADDRESS_DEFAULT))
#endif
  VC_DRIVER_API(VC_RESOLVE_)
#undef RESOLVE_CALL
#undef VC_RESOLVE_
  vc_log("driver %s loaded, %d entry points resolved for CUDA %d", path,
         (int)(sizeof(vc_api) / sizeof(void (*)(void))), CUDA_VERSION);
  return VYRE_OK;
}

/* ------------------------------------------------------------------ */
/* Device probe                                                        */
/* ------------------------------------------------------------------ */
static vyre_status attr(vc_backend *b, CUdevice_attribute a, const char *what, int *out,
                        vyre_error *err) {
  CUresult r = VC_CU(b, cuDeviceGetAttribute, (out, a, b->device));
  if (r != CUDA_SUCCESS) {
    vyre_status st = vc_cu_fail(b, err, r, "cuDeviceGetAttribute", NULL, NULL);
    vyre_error_prefix(err, "probing %s of CUDA device %u", what, b->ordinal);
    return st;
  }
  return VYRE_OK;
}

static vyre_status probe(vc_backend *b, vyre_error *err) {
  vyre_device_profile *p = &b->profile;
  memset(p, 0, sizeof *p);
  p->struct_size = sizeof *p;
  p->ordinal = b->ordinal;
  snprintf(p->backend_id, sizeof p->backend_id, "cuda");
  CUresult r = VC_CU(b, cuDeviceGetName, (p->name, (int)sizeof p->name - 1, b->device));
  if (r != CUDA_SUCCESS) return vc_cu_fail(b, err, r, "cuDeviceGetName", NULL, NULL);
  p->name[sizeof p->name - 1] = '\0';

  struct {
    CUdevice_attribute a;
    const char *what;
    int value;
  } q[] = {
      {CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR, "compute capability", 0},
      {CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR, "compute capability", 0},
      {CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT, "SM count", 0},
      {CU_DEVICE_ATTRIBUTE_WARP_SIZE, "warp size", 0},
      {CU_DEVICE_ATTRIBUTE_MAX_BLOCK_DIM_X, "max block x", 0},
      {CU_DEVICE_ATTRIBUTE_MAX_BLOCK_DIM_Y, "max block y", 0},
      {CU_DEVICE_ATTRIBUTE_MAX_BLOCK_DIM_Z, "max block z", 0},
      {CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_BLOCK, "max threads per block", 0},
      {CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_X, "max grid x", 0},
      {CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_Y, "max grid y", 0},
      {CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_Z, "max grid z", 0},
      {CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK, "shared memory per block", 0},
      {CU_DEVICE_ATTRIBUTE_L2_CACHE_SIZE, "L2 size", 0},
      {CU_DEVICE_ATTRIBUTE_GLOBAL_MEMORY_BUS_WIDTH, "memory bus width", 0},
      {CU_DEVICE_ATTRIBUTE_MEMORY_CLOCK_RATE, "memory clock", 0},
      {CU_DEVICE_ATTRIBUTE_COOPERATIVE_LAUNCH, "cooperative launch support", 0},
  };
  for (size_t i = 0; i < sizeof q / sizeof q[0]; i++) {
    vyre_status st = attr(b, q[i].a, q[i].what, &q[i].value, err);
    if (st != VYRE_OK) return st;
    if (q[i].value < 0) q[i].value = 0;
  }
  p->compute_major = (uint32_t)q[0].value;
  p->compute_minor = (uint32_t)q[1].value;
  p->compute_units = (uint32_t)q[2].value;
  p->subgroup_size = (uint32_t)q[3].value;
  for (int i = 0; i < 3; i++) p->max_workgroup_size[i] = (uint32_t)q[4 + i].value;
  p->max_invocations_per_workgroup = (uint32_t)q[7].value;
  for (int i = 0; i < 3; i++) p->max_workgroups[i] = (uint32_t)q[8 + i].value;
  p->shared_memory_per_workgroup = (uint32_t)q[11].value;
  p->l2_bytes = (uint64_t)q[12].value;
  p->memory_bus_bits = (uint32_t)q[13].value;
  p->memory_clock_khz = (uint32_t)q[14].value;
  b->sm_count = q[2].value;
  b->cooperative = q[15].value != 0;
  b->max_threads_per_block = q[7].value;
  b->shared_per_block = q[11].value;
  p->driver_version = (uint32_t)b->driver_version;

  size_t total = 0;
  r = VC_CU(b, cuDeviceTotalMem, (&total, b->device));
  if (r != CUDA_SUCCESS) return vc_cu_fail(b, err, r, "cuDeviceTotalMem", NULL, NULL);
  p->total_memory = total;

  if (p->compute_major < 7) {
    /* The code generator targets sm_70 and newer (docs/codegen.md). */
    return vyre_error_set(err, VYRE_NO_DEVICE, 0,
                          "CUDA device %u (%s) has compute capability %u.%u; vyre-cuda needs "
                          "7.0 or newer. Fix: select another device with device_ordinal or "
                          "CUDA_VISIBLE_DEVICES",
                          b->ordinal, p->name, p->compute_major, p->compute_minor);
  }
  if (p->subgroup_size != 32)
    return vyre_error_set(err, VYRE_NO_DEVICE, 0,
                          "CUDA device %u reports warp size %u; vyre subgroups are 32 lanes. "
                          "Fix: use a device with 32-lane warps",
                          b->ordinal, p->subgroup_size);

  uint32_t sm = p->compute_major * 10 + p->compute_minor;
  uint64_t caps = VYRE_CAP_SUBGROUP | VYRE_CAP_ATOMIC64 | VYRE_CAP_ASYNC | VYRE_CAP_RESIDENT |
                  VYRE_CAP_SEQUENCE | VYRE_CAP_TIMING | VYRE_CAP_PIPELINE | VYRE_CAP_FIXPOINT |
                  VYRE_CAP_TRAP | VYRE_CAP_GRAPH_REPLAY |
                  VYRE_CAP_WORKGROUP_MEMORY | VYRE_CAP_ATOMICS | VYRE_CAP_BARRIER;
  if (sm >= 53) caps |= VYRE_CAP_F16;
  if (sm >= 80) caps |= VYRE_CAP_BF16;
  if (b->cooperative) caps |= VYRE_CAP_GRID_BARRIER;
  if (vc_codegen_has_transcendentals()) caps |= VYRE_CAP_TRANSCENDENTAL;
  p->capabilities = caps;
  return VYRE_OK;
}

vyre_status vc_context_memory(vc_backend *b, uint64_t *free_bytes, uint64_t *total_bytes,
                              vyre_error *err) {
  size_t f = 0, t = 0;
  CUresult r = VC_CU(b, cuMemGetInfo, (&f, &t));
  if (r != CUDA_SUCCESS) return vc_cu_fail(b, err, r, "cuMemGetInfo", NULL, NULL);
  if (free_bytes) *free_bytes = f;
  if (total_bytes) *total_bytes = t;
  return VYRE_OK;
}

/* A sticky error that survives a primary-context reset: the CUDA driver
 * documents that such errors (illegal address and its kin) leave the
 * process's CUDA state inconsistent until the process ends, and an H200
 * confirms it (every later retain answers CUDA_ERROR_ILLEGAL_ADDRESS).
 * Say so plainly instead of offering a fix that cannot work. */
static vyre_status process_poisoned(vc_backend *b, CUresult r, const char *call,
                                    vyre_error *err) {
  const char *name, *text;
  describe(b, r, &name, &text);
  return vyre_error_set(err, VYRE_DEVICE_LOST, (int64_t)r,
                        "CUDA device %u is unusable in this process: %s reports %s (%s) even "
                        "after the primary context was reset; a sticky CUDA error corrupts a "
                        "process's CUDA state until it exits. Fix: restart the process (other "
                        "processes can use the device)",
                        b->ordinal, call, name, text);
}

/* Retain the primary context and check it is healthy.  A sticky error
 * left by an instance that lost the device (and whose retain is still
 * held, by it or by someone else) poisons the primary context for every
 * retainer; cuDevicePrimaryCtxReset gives the device a fresh one. */
static vyre_status retain_context(vc_backend *b, vyre_error *err) {
  for (int attempt = 0; attempt < 2; attempt++) {
    CUresult r = VC_CU(b, cuDevicePrimaryCtxRetain, (&b->ctx, b->device));
    if (r != CUDA_SUCCESS && vc_is_sticky(r) && attempt == 0) {
      /* The driver refuses to hand out a context poisoned by another
       * holder's sticky error (seen on an H200: ILLEGAL_ADDRESS from the
       * retain itself); reset it and try once more. */
      vc_log("primary context of device %u refused a retain (sticky error); resetting it",
             b->ordinal);
      b->ctx = NULL;
      r = VC_CU(b, cuDevicePrimaryCtxReset, (b->device));
      if (r != CUDA_SUCCESS) return vc_cu_fail(b, err, r, "cuDevicePrimaryCtxReset", NULL, NULL);
      atomic_fetch_add(&ctx_epoch[b->ordinal % EPOCH_SLOTS], 1u);
      continue;
    }
    if (r != CUDA_SUCCESS) {
      vyre_status st = vc_cu_fail(b, err, r, "cuDevicePrimaryCtxRetain", NULL, NULL);
      /* A failed create owns nothing a later call could trip over. */
      atomic_store(&b->lost, 0);
      if (vc_is_sticky(r)) return process_poisoned(b, r, "cuDevicePrimaryCtxRetain", err);
      return st == VYRE_DEVICE_LOST ? VYRE_DRIVER : st;
    }
    b->ctx_retained = 1;
    b->epoch = atomic_load(&ctx_epoch[b->ordinal % EPOCH_SLOTS]);
    r = VC_CU(b, cuCtxPushCurrent, (b->ctx));
    if (r != CUDA_SUCCESS) return vc_cu_fail(b, err, r, "cuCtxPushCurrent", NULL, NULL);
    CUresult health = VC_CU(b, cuCtxSynchronize, ());
    CUcontext popped;
    CUresult pr = VC_CU(b, cuCtxPopCurrent, (&popped));
    if (health == CUDA_SUCCESS) {
      if (pr != CUDA_SUCCESS) return vc_cu_fail(b, err, pr, "cuCtxPopCurrent", NULL, NULL);
      return VYRE_OK;
    }
    if (!vc_is_sticky(health) || attempt == 1) {
      vyre_status st = vc_cu_fail(b, err, health, "cuCtxSynchronize", NULL, NULL);
      /* vc_cu_fail marked us lost; a failed create owns nothing to poison. */
      atomic_store(&b->lost, 0);
      if (vc_is_sticky(health)) return process_poisoned(b, health, "cuCtxSynchronize", err);
      vyre_error_prefix(err, "checking the primary context of CUDA device %u", b->ordinal);
      return st == VYRE_DEVICE_LOST ? VYRE_DRIVER : st;
    }
    vc_log("primary context of device %u holds a sticky error; resetting it", b->ordinal);
    VC_CU(b, cuDevicePrimaryCtxRelease, (b->device));
    b->ctx_retained = 0;
    b->ctx = NULL;
    r = VC_CU(b, cuDevicePrimaryCtxReset, (b->device));
    if (r != CUDA_SUCCESS) return vc_cu_fail(b, err, r, "cuDevicePrimaryCtxReset", NULL, NULL);
    atomic_fetch_add(&ctx_epoch[b->ordinal % EPOCH_SLOTS], 1u);
  }
  return VYRE_OK;
}

vyre_status vc_context_open(vc_backend *b, uint32_t ordinal, vyre_error *err) {
  b->ordinal = ordinal;
  vyre_status st = load_driver(b, err);
  if (st != VYRE_OK) goto fail;

  CUresult r = VC_CU(b, cuInit, (0));
  if (r != CUDA_SUCCESS) {
    const char *name, *text;
    describe(b, r, &name, &text);
    st = vyre_error_set(err, VYRE_NO_DEVICE, (int64_t)r,
                        "CUDA unavailable: cuInit failed: %s (%s). Fix: %s", name, text,
                        r == CUDA_ERROR_NO_DEVICE
                            ? "no CUDA device is visible; check nvidia-smi and "
                              "CUDA_VISIBLE_DEVICES"
                            : "check the NVIDIA driver installation with nvidia-smi (a driver "
                              "and kernel module of the same version must be loaded)");
    goto fail;
  }
  r = VC_CU(b, cuDriverGetVersion, (&b->driver_version));
  if (r != CUDA_SUCCESS) {
    st = vc_cu_fail(b, err, r, "cuDriverGetVersion", NULL, NULL);
    goto fail;
  }
  int count = 0;
  r = VC_CU(b, cuDeviceGetCount, (&count));
  if (r != CUDA_SUCCESS) {
    st = vc_cu_fail(b, err, r, "cuDeviceGetCount", NULL, NULL);
    goto fail;
  }
  if (count <= 0 || ordinal >= (uint32_t)count) {
    st = vyre_error_set(err, VYRE_NO_DEVICE, 0,
                        "CUDA device %u not present: the driver reports %d device(s). Fix: use "
                        "a device ordinal below %d, or check CUDA_VISIBLE_DEVICES",
                        ordinal, count, count);
    goto fail;
  }
  r = VC_CU(b, cuDeviceGet, (&b->device, (int)ordinal));
  if (r != CUDA_SUCCESS) {
    st = vc_cu_fail(b, err, r, "cuDeviceGet", NULL, NULL);
    goto fail;
  }
  st = probe(b, err);
  if (st != VYRE_OK) goto fail;
  st = retain_context(b, err);
  if (st != VYRE_OK) goto fail;
  vc_log("device %u: %s, sm_%u%u, %u SMs, %llu MiB, driver %d", ordinal, b->profile.name,
         b->profile.compute_major, b->profile.compute_minor, b->profile.compute_units,
         (unsigned long long)(b->profile.total_memory >> 20), b->driver_version);
  return VYRE_OK;

fail:
  vc_context_close(b);
  return st;
}

void vc_context_close(vc_backend *b) {
  if (b->ctx_retained) {
    CUresult r = VC_CU(b, cuDevicePrimaryCtxRelease, (b->device));
    if (r != CUDA_SUCCESS) vc_cu_note(b, r, "cuDevicePrimaryCtxRelease");
    b->ctx_retained = 0;
    b->ctx = NULL;
  }
  if (b->dl) {
    dlclose(b->dl);
    b->dl = NULL;
  }
  memset(&b->api, 0, sizeof b->api);
}
