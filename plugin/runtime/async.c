/* async.c -- asynchronous host dispatch: pending handles, poll, wait, release into the deferred list (async.h). */
#include "async.h"

#include <string.h>

#include "util.h"

void vc_async_init(vc_async *a, vc_dispatcher *d) {
  a->d = d;
  vyre_handles_init(&a->pending, VYRE_HANDLE_PENDING);
}

void vc_async_destroy(vc_async *a) {
  if (!a->d) return;
  vc_job *j;
  while ((j = vyre_handles_pop_any(&a->pending)) != NULL) vc_job_defer(j);
  vyre_handles_destroy(&a->pending);
  a->d = NULL;
}

static void read_metrics(const void *state, vc_metric_sink *s) {
  vc_async *a = (vc_async *)state;
  vc_metric_emit(s, "pending.handles", vyre_handles_live(&a->pending));
}

void vc_async_add_metrics(vc_async *a, vc_metrics *m) { vc_metrics_add(m, read_metrics, a); }

vyre_status vc_dispatch_async(vc_async *a, const vyre_program_ref *program,
                              const vyre_input *inputs, uint32_t input_count,
                              const vyre_dispatch_options *options, vyre_pending *out,
                              vyre_error *err) {
  vc_dispatcher *d = a->d;
  uint64_t t_entry = vyre__now_ns();
  if (!out)
    return vyre_error_set(err, VYRE_INVALID_ARGUMENT, 0,
                          "dispatch_async: out is NULL. Fix: pass a vyre_pending * to receive "
                          "the handle");
  *out = 0;
  vc_job *j = NULL;
  vyre_status st = vc_job_begin(d, program, inputs, input_count, options, NULL, t_entry, &j, err);
  if (st != VYRE_OK) return st;
  /* Timing is asked for at wait, so async dispatches always record it. */
  st = vc_job_enqueue(j, inputs, 1, err);
  if (st != VYRE_OK) {
    vc_job_abort(j);
    goto done;
  }
  st = vyre_handles_insert(&a->pending, j, out);
  if (st != VYRE_OK) {
    st = vyre_handles_insert_failed(err, st, "dispatch_async", "pending dispatches",
                                    "wait for or release pending dispatches "
                                    "(pending_wait, pending_release)");
    vc_job_abort(j);
    *out = 0;
  }
done:
  vc_leave(d->cx);
  return st;
}

static vyre_status pending_missing(vyre_pending h, const char *what, vyre_error *err) {
  return vyre_error_set(err, VYRE_INVALID_HANDLE, 0,
                        "%s: pending handle 0x%016llx is not live on this backend (already "
                        "waited on or released, or from another instance). Fix: wait on or "
                        "release each pending handle once",
                        what, (unsigned long long)h);
}

vyre_status vc_pending_poll(vc_async *a, vyre_pending pending, int *ready,
                            vyre_error *err) {
  vc_dispatcher *d = a->d;
  if (!ready)
    return vyre_error_set(err, VYRE_INVALID_ARGUMENT, 0,
                          "pending_poll: ready is NULL. Fix: pass an int to receive it");
  *ready = 0;
  vc_job *j = vyre_handles_get(&a->pending, pending);
  if (!j) return pending_missing(pending, "pending_poll", err);
  vyre_status st = vc_deferred_enter(d->deferred, err);
  if (st != VYRE_OK) return st;
  st = vc_job_poll(j, ready, err);
  vc_leave(d->cx);
  return st;
}

vyre_status vc_pending_wait(vc_async *a, vyre_pending pending, vyre_outputs **out,
                            vyre_timing *timing, vyre_error *err) {
  vc_dispatcher *d = a->d;
  if (out) *out = NULL;
  vc_job *j = vyre_handles_remove(&a->pending, pending);
  if (!j) return pending_missing(pending, "pending_wait", err);
  vyre_status st = vc_deferred_enter(d->deferred, err);
  if (st != VYRE_OK) {
    /* Lost (or the context cannot be made current): the handle is
     * released all the same. */
    if (vc_is_lost(d->cx)) vc_job_free(j);
    else vc_job_defer(j);
    return st;
  }
  st = vc_check_timing(timing, err);
  if (st != VYRE_OK) {
    vc_job_defer(j);
  } else if (!out) {
    st = vyre_error_set(err, VYRE_INVALID_ARGUMENT, 0,
                        "pending_wait: out is NULL (the pending dispatch is released). Fix: "
                        "pass a vyre_outputs * to receive the outputs");
    vc_job_defer(j);
  } else {
    st = vc_job_finish(j, out, NULL, timing, err);
  }
  vc_leave(d->cx);
  return st;
}

vyre_status vc_pending_release(vc_async *a, vyre_pending pending, vyre_error *err) {
  vc_dispatcher *d = a->d;
  vc_job *j = vyre_handles_remove(&a->pending, pending);
  if (!j) return pending_missing(pending, "pending_release", err);
  if (vc_is_lost(d->cx)) {
    vc_job_free(j);
    return VYRE_OK;
  }
  /* Reclaimed when its work completes: on a later call or at destroy. */
  vc_job_defer(j);
  CUresult r = vc_context_push(d->cx);
  if (r == CUDA_SUCCESS) {
    vc_deferred_reap(d->deferred, 0);
    vc_leave(d->cx);
  } else {
    /* The handle is released; its work is reclaimed by a later call. */
    vc_cu_note(d->cx, r, "cuCtxPushCurrent");
  }
  return VYRE_OK;
}

