/* context.c -- the device and its primary context: driver errors, the lost state, enter/leave, device probe. */
#include "context.h"

#include <stdio.h>
#include <string.h>
#include <time.h>

#include "caps.h"
#include "util.h"

static void release_context(vc_context *cx);

void vc_mark_lost(vc_context *cx, const char *reason) {
  pthread_mutex_lock(&cx->lost_lock);
  if (!atomic_load(&cx->lost)) {
    snprintf(cx->lost_reason, sizeof cx->lost_reason, "%s", reason);
    atomic_store(&cx->lost, 1);
    vc_log("device %u marked lost: %s", cx->dev.ordinal, reason);
  }
  pthread_mutex_unlock(&cx->lost_lock);
}

/* Generation of each device's primary context in this process: bumped by
 * an instance that resets it, so instances holding objects of the old one
 * know they are gone.  One slot per ordinal the host tools can name
 * (0..1024); a larger ordinal shares a slot, which costs at most a
 * spurious "lost" after a reset of the other device, never a missed one. */
#define EPOCH_SLOTS 1025
static atomic_uint ctx_epoch[EPOCH_SLOTS];
/* Per device, the primary context a timed-out kernel may still run in
 * (kept retained by its lost instance): a new instance that retains it
 * must not synchronise it, which would wait for that kernel. */
static _Atomic(CUcontext) runaway_ctx[EPOCH_SLOTS];

int vc_is_lost(vc_context *cx) {
  if (atomic_load(&cx->lost)) return 1;
  if (cx->ctx_retained && atomic_load(&ctx_epoch[cx->dev.ordinal % EPOCH_SLOTS]) != cx->epoch) {
    vc_mark_lost(cx, "another instance reset the device's primary context after a device error "
                    "(every object of this instance went with it)");
    return 1;
  }
  return 0;
}

int vc_cleanup_ok(vc_context *cx) { return !cx->orphaned && !vc_is_lost(cx); }

vyre_status vc_lost_error(vc_context *cx, vyre_error *err) {
  pthread_mutex_lock(&cx->lost_lock);
  vyre_status st = vyre_error_set(err, VYRE_DEVICE_LOST, 0,
                                  "device lost: CUDA device %u is unusable since %s. Fix: "
                                  "destroy and recreate the backend",
                                  cx->dev.ordinal, cx->lost_reason);
  pthread_mutex_unlock(&cx->lost_lock);
  return st;
}

vyre_status vc_cu_fail(vc_context *cx, vyre_error *err, CUresult r, const char *call,
                       const char *kernel, const char *fix) {
  const char *name, *text;
  vc_driver_describe(&cx->drv, r, &name, &text);
  atomic_fetch_add(&cx->n_driver_errors, 1);
  char where[128] = "";
  if (kernel && *kernel) snprintf(where, sizeof where, " (kernel %s)", kernel);
  if (vc_is_sticky(r)) {
    char reason[512];
    snprintf(reason, sizeof reason, "%s%s failed with %s (%s)", call, where, name, text);
    vc_mark_lost(cx, reason);
    /* The first failure that lost the device may have been one nobody
     * could be told about (a cleanup); name it too. */
    pthread_mutex_lock(&cx->lost_lock);
    int same = strcmp(cx->lost_reason, reason) == 0;
    vyre_status st = vyre_error_set(
        err, VYRE_DEVICE_LOST, (int64_t)r,
        "device lost: %s%s failed: %s (%s)%s%s; the CUDA context is unusable. Fix: destroy and "
        "recreate the backend",
        call, where, name, text, same ? "" : "; first failure: ", same ? "" : cx->lost_reason);
    pthread_mutex_unlock(&cx->lost_lock);
    return st;
  }
  vyre_status st = r == CUDA_ERROR_OUT_OF_MEMORY ? VYRE_OUT_OF_MEMORY : VYRE_DRIVER;
  vc_log("%s%s failed: %s (%s)", call, where, name, text);
  return vyre_error_set(err, st, (int64_t)r, "%s%s failed: %s (%s). Fix: %s", call, where, name,
                        text, fix ? fix : vc_default_fix(r));
}

void vc_cu_note(vc_context *cx, CUresult r, const char *call) {
  if (r == CUDA_SUCCESS) return;
  const char *name, *text;
  vc_driver_describe(&cx->drv, r, &name, &text);
  atomic_fetch_add(&cx->n_driver_errors, 1);
  if (vc_is_sticky(r)) {
    char reason[512];
    snprintf(reason, sizeof reason, "%s failed with %s (%s)", call, name, text);
    vc_mark_lost(cx, reason);
  }
  vc_log("%s failed during cleanup: %s (%s)", call, name, text);
}

vyre_status vc_enter(vc_context *cx, vyre_error *err) {
  if (vc_is_lost(cx)) return vc_lost_error(cx, err);
  CUresult r = VC_CU(cx, cuCtxPushCurrent, (cx->ctx));
  if (r != CUDA_SUCCESS) return vc_cu_fail(cx, err, r, "cuCtxPushCurrent", NULL, NULL);
  return VYRE_OK;
}

void vc_leave(vc_context *cx) {
  CUcontext popped = NULL;
  CUresult r = VC_CU(cx, cuCtxPopCurrent, (&popped));
  if (r != CUDA_SUCCESS) {
    /* The work of the call is done and its result stands; a failed pop
     * only leaves our context on this thread's stack.  Counted in
     * driver.ctx_pop_errors and logged (docs/cuda-runtime.md). */
    atomic_fetch_add(&cx->n_ctx_pop_errors, 1);
    vc_cu_note(cx, r, "cuCtxPopCurrent");
  }
}

/* ------------------------------------------------------------------ */
/* Device probe                                                        */
/* ------------------------------------------------------------------ */
static vyre_status attr(vc_context *cx, CUdevice_attribute a, const char *what, int *out,
                        vyre_error *err) {
  CUresult r = VC_CU(cx, cuDeviceGetAttribute, (out, a, cx->device));
  if (r != CUDA_SUCCESS) {
    vyre_status st = vc_cu_fail(cx, err, r, "cuDeviceGetAttribute", NULL, NULL);
    vyre_error_prefix(err, "probing %s of CUDA device %u", what, cx->dev.ordinal);
    return st;
  }
  return VYRE_OK;
}

static vyre_status probe(vc_context *cx, int transcendentals, vyre_error *err) {
  vyre_device_profile *p = &cx->profile;
  memset(p, 0, sizeof *p);
  p->struct_size = sizeof *p;
  p->ordinal = cx->dev.ordinal;
  snprintf(p->backend_id, sizeof p->backend_id, "cuda");
  CUresult r = VC_CU(cx, cuDeviceGetName, (p->name, (int)sizeof p->name - 1, cx->device));
  if (r != CUDA_SUCCESS) return vc_cu_fail(cx, err, r, "cuDeviceGetName", NULL, NULL);
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
    vyre_status st = attr(cx, q[i].a, q[i].what, &q[i].value, err);
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
  cx->dev.sm_count = q[2].value;
  cx->dev.cooperative = q[15].value != 0;
  cx->dev.max_threads_per_block = q[7].value;
  cx->dev.shared_per_block = q[11].value;
  p->driver_version = (uint32_t)cx->dev.driver_version;

  size_t total = 0;
  r = VC_CU(cx, cuDeviceTotalMem, (&total, cx->device));
  if (r != CUDA_SUCCESS) return vc_cu_fail(cx, err, r, "cuDeviceTotalMem", NULL, NULL);
  p->total_memory = total;
  if (cx->drv.api.f_cuDeviceGetUuid) { /* a driver without it: zeros, "not reported" */
    CUuuid u;
    r = VC_CU(cx, cuDeviceGetUuid, (&u, cx->device));
    if (r != CUDA_SUCCESS) return vc_cu_fail(cx, err, r, "cuDeviceGetUuid", NULL, NULL);
    memcpy(p->uuid, u.bytes, sizeof p->uuid);
  }

  if (p->compute_major < VC_CAPS_MIN_SM_MAJOR) {
    /* The code generator targets sm_70 and newer (docs/codegen.md). */
    return vyre_error_set(err, VYRE_NO_DEVICE, 0,
                          "CUDA device %u (%s) has compute capability %u.%u; vyre-cuda needs "
                          "7.0 or newer. Fix: select another device with device_ordinal or "
                          "CUDA_VISIBLE_DEVICES",
                          cx->dev.ordinal, p->name, p->compute_major, p->compute_minor);
  }
  if (p->subgroup_size != 32)
    return vyre_error_set(err, VYRE_NO_DEVICE, 0,
                          "CUDA device %u reports warp size %u; vyre subgroups are 32 lanes. "
                          "Fix: use a device with 32-lane warps",
                          cx->dev.ordinal, p->subgroup_size);

  const vc_caps_device d = {p->compute_major * 10 + p->compute_minor, cx->dev.cooperative,
                           transcendentals};
  p->capabilities = vc_caps_of(&d);
  p->resident_budget = vc_resident_share(p->total_memory);
  return VYRE_OK;
}

vyre_status vc_context_memory(vc_context *cx, uint64_t *free_bytes, uint64_t *total_bytes,
                              vyre_error *err) {
  size_t f = 0, t = 0;
  CUresult r = VC_CU(cx, cuMemGetInfo, (&f, &t));
  if (r != CUDA_SUCCESS) return vc_cu_fail(cx, err, r, "cuMemGetInfo", NULL, NULL);
  if (free_bytes) *free_bytes = f;
  if (total_bytes) *total_bytes = t;
  return VYRE_OK;
}

/* A sticky error that survives a primary-context reset: the CUDA driver
 * documents that such errors (illegal address and its kin) leave the
 * process's CUDA state inconsistent until the process ends, and an H200
 * confirms it (every later retain answers CUDA_ERROR_ILLEGAL_ADDRESS).
 * Say so plainly instead of offering a fix that cannot work. */
static vyre_status process_poisoned(vc_context *cx, CUresult r, const char *call,
                                    vyre_error *err) {
  const char *name, *text;
  vc_driver_describe(&cx->drv, r, &name, &text);
  return vyre_error_set(err, VYRE_DEVICE_LOST, (int64_t)r,
                        "CUDA device %u is unusable in this process: %s reports %s (%s) even "
                        "after the primary context was reset; a sticky CUDA error corrupts a "
                        "process's CUDA state until it exits. Fix: restart the process (other "
                        "processes can use the device)",
                        cx->dev.ordinal, call, name, text);
}

/* Retain the primary context and check it is healthy.  A sticky error
 * left by an instance that lost the device (and whose retain is still
 * held, by it or by someone else) poisons the primary context for every
 * retainer; cuDevicePrimaryCtxReset gives the device a fresh one. */
static vyre_status retain_context(vc_context *cx, vyre_error *err) {
  for (int attempt = 0; attempt < 2; attempt++) {
    CUresult r = VC_CU(cx, cuDevicePrimaryCtxRetain, (&cx->ctx, cx->device));
    if (r != CUDA_SUCCESS && vc_is_sticky(r) && attempt == 0) {
      /* The driver refuses to hand out a context poisoned by another
       * holder's sticky error (seen on an H200: ILLEGAL_ADDRESS from the
       * retain itself); reset it and try once more. */
      vc_log("primary context of device %u refused a retain (sticky error); resetting it",
             cx->dev.ordinal);
      cx->ctx = NULL;
      r = VC_CU(cx, cuDevicePrimaryCtxReset, (cx->device));
      if (r != CUDA_SUCCESS) return vc_cu_fail(cx, err, r, "cuDevicePrimaryCtxReset", NULL, NULL);
      atomic_fetch_add(&ctx_epoch[cx->dev.ordinal % EPOCH_SLOTS], 1u);
      continue;
    }
    if (r != CUDA_SUCCESS) {
      vyre_status st = vc_cu_fail(cx, err, r, "cuDevicePrimaryCtxRetain", NULL, NULL);
      /* A failed create owns nothing a later call could trip over. */
      atomic_store(&cx->lost, 0);
      if (vc_is_sticky(r)) return process_poisoned(cx, r, "cuDevicePrimaryCtxRetain", err);
      return st == VYRE_DEVICE_LOST ? VYRE_DRIVER : st;
    }
    cx->ctx_retained = 1;
    cx->epoch = atomic_load(&ctx_epoch[cx->dev.ordinal % EPOCH_SLOTS]);
    r = VC_CU(cx, cuCtxPushCurrent, (cx->ctx));
    if (r != CUDA_SUCCESS) return vc_cu_fail(cx, err, r, "cuCtxPushCurrent", NULL, NULL);
    /* A context a timed-out kernel may still run in is not synchronised
     * (that would wait for the kernel); a sticky error in it surfaces at
     * the first call instead. */
    int skip = atomic_load(&runaway_ctx[cx->dev.ordinal % EPOCH_SLOTS]) == cx->ctx;
    if (skip) vc_log("device %u: a timed-out kernel may still run in the primary context; "
                     "not synchronising it", cx->dev.ordinal);
    CUresult health = skip ? CUDA_SUCCESS : VC_CU(cx, cuCtxSynchronize, ());
    CUcontext popped;
    CUresult pr = VC_CU(cx, cuCtxPopCurrent, (&popped));
    if (health == CUDA_SUCCESS) {
      if (pr != CUDA_SUCCESS) return vc_cu_fail(cx, err, pr, "cuCtxPopCurrent", NULL, NULL);
      return VYRE_OK;
    }
    if (!vc_is_sticky(health) || attempt == 1) {
      vyre_status st = vc_cu_fail(cx, err, health, "cuCtxSynchronize", NULL, NULL);
      /* vc_cu_fail marked us lost; a failed create owns nothing to poison. */
      atomic_store(&cx->lost, 0);
      if (vc_is_sticky(health)) return process_poisoned(cx, health, "cuCtxSynchronize", err);
      vyre_error_prefix(err, "checking the primary context of CUDA device %u", cx->dev.ordinal);
      return st == VYRE_DEVICE_LOST ? VYRE_DRIVER : st;
    }
    vc_log("primary context of device %u holds a sticky error; resetting it", cx->dev.ordinal);
    VC_CU(cx, cuDevicePrimaryCtxRelease, (cx->device));
    cx->ctx_retained = 0;
    cx->ctx = NULL;
    r = VC_CU(cx, cuDevicePrimaryCtxReset, (cx->device));
    if (r != CUDA_SUCCESS) return vc_cu_fail(cx, err, r, "cuDevicePrimaryCtxReset", NULL, NULL);
    atomic_fetch_add(&ctx_epoch[cx->dev.ordinal % EPOCH_SLOTS], 1u);
  }
  return VYRE_OK;
}

vyre_status vc_context_open(vc_context *cx, uint32_t ordinal, int transcendentals,
                            vyre_error *err) {
  memset(cx, 0, sizeof *cx);
  vyre_status st = vc_mutex_init(&cx->lost_lock, "cuda create", "device state", err);
  if (st != VYRE_OK) return st;
  cx->dev.ordinal = ordinal;
  st = vc_driver_open(&cx->drv, err);
  if (st != VYRE_OK) goto fail;

  CUresult r = VC_CU(cx, cuInit, (0));
  if (r != CUDA_SUCCESS) {
    const char *name, *text;
    vc_driver_describe(&cx->drv, r, &name, &text);
    st = vyre_error_set(err, VYRE_NO_DEVICE, (int64_t)r,
                        "CUDA unavailable: cuInit failed: %s (%s). Fix: %s", name, text,
                        r == CUDA_ERROR_NO_DEVICE
                            ? "no CUDA device is visible; check nvidia-smi and "
                              "CUDA_VISIBLE_DEVICES"
                            : "check the NVIDIA driver installation with nvidia-smi (a driver "
                              "and kernel module of the same version must be loaded)");
    goto fail;
  }
  r = VC_CU(cx, cuDriverGetVersion, (&cx->dev.driver_version));
  cx->drv.version = cx->dev.driver_version;
  if (r != CUDA_SUCCESS) {
    st = vc_cu_fail(cx, err, r, "cuDriverGetVersion", NULL, NULL);
    goto fail;
  }
  int count = 0;
  r = VC_CU(cx, cuDeviceGetCount, (&count));
  if (r != CUDA_SUCCESS) {
    st = vc_cu_fail(cx, err, r, "cuDeviceGetCount", NULL, NULL);
    goto fail;
  }
  if (count <= 0) {
    st = vyre_error_set(err, VYRE_NO_DEVICE, 0,
                        "CUDA device %u not present: cuDeviceGetCount reports no device. Fix: "
                        "check the GPUs with nvidia-smi and CUDA_VISIBLE_DEVICES",
                        ordinal);
    goto fail;
  }
  if (ordinal >= (uint32_t)count) {
    st = vyre_error_set(err, VYRE_NO_DEVICE, 0,
                        "CUDA device %u not present: this process sees %d CUDA device%s "
                        "(ordinals 0 to %d). Fix: pass a device ordinal from 0 to %d (`vyre info "
                        "cuda` lists them), or check CUDA_VISIBLE_DEVICES",
                        ordinal, count, count == 1 ? "" : "s", count - 1, count - 1);
    goto fail;
  }
  r = VC_CU(cx, cuDeviceGet, (&cx->device, (int)ordinal));
  if (r != CUDA_SUCCESS) {
    st = vc_cu_fail(cx, err, r, "cuDeviceGet", NULL, NULL);
    goto fail;
  }
  st = probe(cx, transcendentals, err);
  if (st != VYRE_OK) goto fail;
  /* After CUDA_VISIBLE_DEVICES: the ordinals a host may pass to create. */
  cx->profile.device_count = (uint32_t)count;
  st = retain_context(cx, err);
  if (st != VYRE_OK) goto fail;
  vc_log("device %u: %s, sm_%u%u, %u SMs, %llu MiB, driver %d", ordinal, cx->profile.name,
         cx->profile.compute_major, cx->profile.compute_minor, cx->profile.compute_units,
         (unsigned long long)(cx->profile.total_memory >> 20), cx->dev.driver_version);
  return VYRE_OK;

fail:
  vc_context_close(cx);
  return st;
}

void vc_context_close(vc_context *cx) {
  if (cx->runaway && cx->ctx_retained) {
    /* Releasing the last reference would wait for the runaway kernel:
     * keep the reference and the driver for the life of the process. */
    vc_log("device %u: keeping the primary context (a timed-out kernel may still run in it)",
           cx->dev.ordinal);
    pthread_mutex_destroy(&cx->lost_lock);
    return;
  }
  release_context(cx);
  vc_driver_close(&cx->drv);
  pthread_mutex_destroy(&cx->lost_lock);
}

/* Drop the primary-context reference (idempotent). */
static void release_context(vc_context *cx) {
  if (cx->ctx_retained) {
    CUresult r = VC_CU(cx, cuDevicePrimaryCtxRelease, (cx->device));
    if (r != CUDA_SUCCESS) vc_cu_note(cx, r, "cuDevicePrimaryCtxRelease");
    cx->ctx_retained = 0;
    cx->ctx = NULL;
  }
}


const vyre_device_profile *vc_context_profile(const vc_context *cx) { return &cx->profile; }

const vc_device_info *vc_context_device(const vc_context *cx) { return &cx->dev; }

CUcontext vc_context_handle(const vc_context *cx) { return cx->ctx; }

CUdevice vc_context_cudevice(const vc_context *cx) { return cx->device; }

CUresult vc_context_push(vc_context *cx) { return VC_CU(cx, cuCtxPushCurrent, (cx->ctx)); }

void vc_context_orphan(vc_context *cx) { cx->orphaned = 1; }

void vc_context_count_error(vc_context *cx) { atomic_fetch_add(&cx->n_driver_errors, 1); }

static void read_metrics(const void *state, vc_metric_sink *s) {
  vc_context *cx = (vc_context *)state;
  vc_metric_emit(s, "driver.errors", atomic_load(&cx->n_driver_errors));
  vc_metric_emit(s, "driver.ctx_pop_errors", atomic_load(&cx->n_ctx_pop_errors));
  vc_metric_emit(s, "driver.version", (uint64_t)cx->dev.driver_version);
  vc_metric_emit(s, "device.lost", (uint64_t)vc_is_lost(cx));
}

void vc_context_add_metrics(vc_context *cx, vc_metrics *m) { vc_metrics_add(m, read_metrics, cx); }

CUresult vc_wait_until(vc_context *cx, CUevent ev, uint64_t deadline) {
  uint64_t nap = 10000; /* ns */
  for (;;) {
    CUresult r = VC_CU(cx, cuEventQuery, (ev));
    if (r != CUDA_ERROR_NOT_READY) return r;
    uint64_t left = vyre__deadline_left_ns(deadline);
    if (!left) return CUDA_ERROR_NOT_READY;
    uint64_t t = nap < left ? nap : left;
    struct timespec ts = {(time_t)(t / 1000000000u), (long)(t % 1000000000u)};
    nanosleep(&ts, NULL);
    if (nap < 1000000) nap *= 2;
  }
}

void vc_context_runaway(vc_context *cx, const char *reason) {
  pthread_mutex_lock(&cx->lost_lock);
  cx->runaway = 1;
  pthread_mutex_unlock(&cx->lost_lock);
  atomic_store(&runaway_ctx[cx->dev.ordinal % EPOCH_SLOTS], cx->ctx);
  vc_mark_lost(cx, reason);
}

vyre_status vc_timeout_fail(vc_context *cx, vyre_error *err, const char *what,
                            const char *kernel, uint64_t timeout_ns) {
  char reason[256];
  snprintf(reason, sizeof reason,
           "%s ran past its timeout of %.3f s (kernel %s may still be running)", what,
           (double)timeout_ns / 1e9, kernel && *kernel ? kernel : "(sequence)");
  vc_context_runaway(cx, reason);
  return vyre_error_set(err, VYRE_LIMIT, 0,
                        "%s: budget exceeded: %s%s%sdid not finish within its timeout of %.3f s "
                        "(vyre_limits.timeout_ns); a running CUDA kernel cannot be stopped, so "
                        "this instance is now lost (its next calls fail with VYRE_DEVICE_LOST) "
                        "and no outputs are returned. Fix: destroy this instance and create a "
                        "new one (the kernel runs on until it ends or the process exits); raise "
                        "the timeout if the program needs longer, or make its loops end",
                        what, kernel && *kernel ? "kernel " : "the work", kernel && *kernel ? kernel : "",
                        " ", (double)timeout_ns / 1e9);
}
