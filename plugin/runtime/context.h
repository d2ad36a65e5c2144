/* context.h -- the device and its primary context: driver errors, the lost state, enter/leave, the device profile. */
#ifndef VYRE_PLUGIN_CUDA_CONTEXT_H
#define VYRE_PLUGIN_CUDA_CONTEXT_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>

#include "driver.h"
#include "metrics.h"
#include "vyre/vyre.h"

/* Device limits the rest of the runtime checks programs against. */
typedef struct vc_device_info {
  uint32_t ordinal;
  int sm_count, cooperative, max_threads_per_block, shared_per_block;
  int driver_version;
} vc_device_info;

/* The context module's state; its fields are private to context.c (other
 * modules use the functions below and VC_CU). */
typedef struct vc_context {
  vc_driver drv;
  CUdevice device;
  CUcontext ctx;
  int ctx_retained;
  vc_device_info dev;
  vyre_device_profile profile;
  atomic_int lost;
  pthread_mutex_t lost_lock;
  char lost_reason[768];
  unsigned epoch; /* primary-context generation seen at open */
  int orphaned;   /* destroy could not make the context current */
  int runaway;    /* a call timed out: a kernel may still run in ctx */
  atomic_ullong n_driver_errors, n_ctx_pop_errors;
} vc_context;

/* The driver's entry table (the driver stays loaded while the context is
 * open). */
static inline const vc_api *vc_context_api(const vc_context *cx) { return &cx->drv.api; }

/* Call a resolved entry point by its base name: VC_CU(cx, cuMemAlloc, (&p, n)). */
#define VC_CU(cx, name, args) (vc_context_api(cx)->f_##name args)

/*
 * Load the driver, init, probe device `ordinal`, retain its primary
 * context and check it is healthy.  `transcendentals`: VC_MATH, VC_MATH_CR
 * bits (caps.h): VYRE_CAP_TRANSCENDENTAL and VYRE_CAP_CORRECTLY_ROUNDED in
 * the profile.  On failure
 * everything acquired is released and err says why (VYRE_NO_DEVICE when
 * there is no usable driver/device).  Not thread-safe for one *cx.
 */
vyre_status vc_context_open(vc_context *cx, uint32_t ordinal, int transcendentals,
                            vyre_error *err);
/* Release the primary context and the driver library; *cx is then dead.
 * After a timeout (vc_timeout_fail) neither is released: the driver would
 * wait for the runaway kernel (an H100 waited out a 60 s kernel), so the
 * reference and the library stay for the life of the process. */
void vc_context_close(vc_context *cx);
/* Add driver.{errors, ctx_pop_errors, version} and device.lost. */
void vc_context_add_metrics(vc_context *cx, vc_metrics *m);

/* The profile probed at open (free_memory not filled in) and the limits. */
const vyre_device_profile *vc_context_profile(const vc_context *cx);
const vc_device_info *vc_context_device(const vc_context *cx);
/* The CUcontext the instance runs in (its device's primary context) and
 * its CUdevice: fixed from open to close (the interop extension hands
 * them out). */
CUcontext vc_context_handle(const vc_context *cx);
CUdevice vc_context_cudevice(const vc_context *cx);
/* Free and total device memory now (cuMemGetInfo).  Context current. */
vyre_status vc_context_memory(vc_context *cx, uint64_t *free_bytes, uint64_t *total_bytes,
                              vyre_error *err);

/*
 * Every entry point brackets its driver work with enter/leave: enter
 * fails fast when lost and pushes the instance's context on this thread;
 * leave pops it (a failed pop is counted and logged: the call's result
 * stands).  Thread-safe.
 */
vyre_status vc_enter(vc_context *cx, vyre_error *err);
void vc_leave(vc_context *cx);
/* cuCtxPushCurrent of the instance's context, for callers that report a
 * failure their own way; pair a success with vc_leave. */
CUresult vc_context_push(vc_context *cx);
/* destroy could not make the context current: from now on nothing is
 * freed one by one (vc_cleanup_ok is 0). */
void vc_context_orphan(vc_context *cx);

/*
 * Turn a failed driver call into *err: names the call, the CUresult name
 * and text (their own failures are handled), the kernel when non-NULL and
 * a Fix (`fix` NULL: one chosen by the code).  A sticky code marks the
 * instance lost and yields VYRE_DEVICE_LOST; out of memory yields
 * VYRE_OUT_OF_MEMORY; the rest VYRE_DRIVER.  Thread-safe.
 */
vyre_status vc_cu_fail(vc_context *cx, vyre_error *err, CUresult r, const char *call,
                       const char *kernel, const char *fix);
/* Record a failure nobody can be told about (a free during cleanup): counts
 * it, marks the instance lost when sticky, logs at debug.  r may be
 * CUDA_SUCCESS (nothing happens).  Thread-safe. */
void vc_cu_note(vc_context *cx, CUresult r, const char *call);
/* Count a driver failure reported some other way (driver.errors). */
void vc_context_count_error(vc_context *cx);

/* Mark the instance lost with a reason (first reason wins).  Thread-safe. */
void vc_mark_lost(vc_context *cx, const char *reason);
/* 1 once a sticky error was seen, or another instance reset the primary
 * context this instance's objects lived in.  Thread-safe. */
int vc_is_lost(vc_context *cx);
/* 1 when freeing driver objects one by one makes sense: not lost (a lost
 * context takes its objects with it when it is reset or released) and
 * the context is current. */
int vc_cleanup_ok(vc_context *cx);
/* VYRE_DEVICE_LOST with the stored reason. */
vyre_status vc_lost_error(vc_context *cx, vyre_error *err);

/*
 * Wait for event `ev` until `deadline` (a vyre__now_ns value; nonzero) by
 * polling cuEventQuery, sleeping 10 us doubling to 1 ms between polls.
 * Returns CUDA_SUCCESS when the event completed, CUDA_ERROR_NOT_READY
 * when the deadline came first, or the failed query's code.  Only calls
 * with a timeout use it: without one the callers block in the driver as
 * before.  Context current; thread-safe.
 */
CUresult vc_wait_until(vc_context *cx, CUevent ev, uint64_t deadline);
/*
 * A call ran past its timeout (vyre_limits.timeout_ns): its kernel cannot
 * be stopped, so mark the instance lost (later calls: VYRE_DEVICE_LOST),
 * remember the context as one a kernel may still run in (close keeps it;
 * a later open of the same context skips its synchronising health
 * check), and return VYRE_LIMIT "<what>: budget exceeded: ..." naming the
 * kernel (may be NULL) and the timeout, with a Fix.  Thread-safe.
 */
/* A kernel of this instance ran past its timeout and may still run: mark
 * the instance lost with `reason` and keep the context (the part of
 * vc_timeout_fail that reports nothing).  Thread-safe. */
void vc_context_runaway(vc_context *cx, const char *reason);
vyre_status vc_timeout_fail(vc_context *cx, vyre_error *err, const char *what,
                            const char *kernel, uint64_t timeout_ns);

/* The share of device memory resident buffers may hold, of the total and
 * of what is free at an allocation: 90% (DESIGN.md, docs/cuda-runtime.md). */
static inline uint64_t vc_resident_share(uint64_t bytes) {
  return (uint64_t)((unsigned __int128)bytes * 9u / 10u);
}

#endif /* VYRE_PLUGIN_CUDA_CONTEXT_H */
