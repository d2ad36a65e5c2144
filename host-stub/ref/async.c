/* async.c -- dispatch_async of the reference backend: a FIFO queue run by one worker thread, and pending handles. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "ref.h"
#include "abi/support/clock.h"

enum { PENDING_QUEUED = 0, PENDING_RUNNING, PENDING_DONE };

struct ref_pending {
  ref_pending *next; /* queue link */
  ref_job job;       /* staged by dispatch_async; released by the worker */
  /* Guarded by the backend's q_lock. */
  int state;
  int released; /* the handle is gone: whoever finishes last frees */
  /* Written by the worker before state becomes DONE. */
  vyre_status status;
  vyre_error err;
  vyre_outputs *outputs;
  uint64_t t_enqueued, t_done;
};

static void pending_free(ref_backend *b, ref_pending *pd) {
  if (!pd) return;
  ref_job_release(&pd->job);
  ref_outputs_free(&b->head, pd->outputs);
  free(pd);
}

static vyre_status bad_pending(vyre_error *err, const char *what, vyre_pending h) {
  return vyre_error_set(err, VYRE_INVALID_HANDLE, 0,
                        "%s: pending handle 0x%016llx is not a live pending dispatch of this "
                        "backend (never returned, already waited for or released, or from "
                        "another backend). Fix: wait for or release each pending handle once",
                        what, (unsigned long long)h);
}

static void *worker_main(void *arg) {
  ref_backend *b = arg;
  pthread_mutex_lock(&b->q_lock);
  for (;;) {
    while (!b->q_head && !b->worker_stop) pthread_cond_wait(&b->q_work, &b->q_lock);
    if (!b->q_head) break; /* stop requested and the queue is empty */
    ref_pending *pd = b->q_head;
    b->q_head = pd->next;
    if (!b->q_head) b->q_tail = NULL;
    if (pd->released) {
      /* Nobody can observe it any more: drop it unrun. */
      pthread_mutex_unlock(&b->q_lock);
      pending_free(b, pd);
      ref_metric_add(b, REF_M_ASYNC_DROPPED, 1);
      pthread_mutex_lock(&b->q_lock);
      b->q_unfinished--;
      pthread_cond_broadcast(&b->q_done);
      continue;
    }
    pd->state = PENDING_RUNNING;
    pthread_mutex_unlock(&b->q_lock);

    pd->err.struct_size = sizeof pd->err;
    vyre_status st = ref_job_run(b, &pd->job, &pd->err);
    if (!st) st = ref_job_outputs(b, &pd->job, &pd->outputs, &pd->err);
    /* Keep the job's times; free its buffers and plan now. */
    ref_job_release(&pd->job);
    ref_metric_add(b, REF_M_DISPATCHES, 1);
    if (st) ref_metric_add(b, REF_M_DISPATCH_ERRORS, 1);
    ref_metric_add(b, REF_M_ASYNC_COMPLETED, 1);

    pthread_mutex_lock(&b->q_lock);
    pd->status = st;
    pd->t_done = vyre__now_ns();
    pd->state = PENDING_DONE;
    b->q_unfinished--;
    int orphan = pd->released;
    pthread_cond_broadcast(&b->q_done);
    if (orphan) {
      pthread_mutex_unlock(&b->q_lock);
      pending_free(b, pd);
      pthread_mutex_lock(&b->q_lock);
    }
  }
  pthread_mutex_unlock(&b->q_lock);
  return NULL;
}

/* Start the worker; the caller holds q_lock. */
static vyre_status start_locked(ref_backend *b, vyre_error *err) {
  if (b->worker_started) return VYRE_OK;
  b->worker_stop = 0;
  int rc = pthread_create(&b->worker, NULL, worker_main, b);
  if (rc)
    return vyre_error_set(err, VYRE_OUT_OF_MEMORY, rc,
                          "dispatch_async: cannot start the reference worker thread (error %d). "
                          "Fix: raise the process's thread limit, or use dispatch",
                          rc);
  b->worker_started = 1;
  return VYRE_OK;
}

vyre_status ref_async_start(ref_backend *b, vyre_error *err) {
  pthread_mutex_lock(&b->q_lock);
  vyre_status st = start_locked(b, err);
  pthread_mutex_unlock(&b->q_lock);
  return st;
}

void ref_async_stop(ref_backend *b) {
  pthread_mutex_lock(&b->q_lock);
  int started = b->worker_started;
  b->worker_stop = 1;
  pthread_cond_broadcast(&b->q_work);
  pthread_mutex_unlock(&b->q_lock);
  if (started) pthread_join(b->worker, NULL);
  pthread_mutex_lock(&b->q_lock);
  b->worker_started = 0;
  b->worker_stop = 0;
  pthread_mutex_unlock(&b->q_lock);
}

void ref_async_drain(ref_backend *b) {
  ref_pending *pd;
  while ((pd = vyre_handles_pop_any(&b->pendings)) != NULL) pending_free(b, pd);
}

vyre_status ref_dispatch_async(ref_backend *b, const vyre_program_ref *program,
                               const vyre_input *inputs, uint32_t input_count,
                               const vyre_dispatch_options *options, vyre_pending *out,
                               vyre_error *err) {
  if (!out)
    return vyre_error_set(err, VYRE_INVALID_ARGUMENT, 0,
                          "dispatch_async: out is NULL. Fix: pass a vyre_pending * to receive "
                          "the handle");
  *out = 0;
  ref_pending *pd = calloc(1, sizeof *pd);
  if (!pd)
    return vyre_error_set(err, VYRE_OUT_OF_MEMORY, ENOMEM,
                          "dispatch_async: out of host memory. Fix: free memory, or wait for "
                          "pending dispatches");
  /* Validation and input copies happen now, so errors come back here and
   * the caller's inputs are free once this returns. */
  vyre_status st = ref_job_stage(b, program, inputs, input_count, options, &pd->job, err);
  if (st) goto fail;
  st = vyre_handles_insert(&b->pendings, pd, out);
  if (st != VYRE_OK) {
    st = vyre_handles_insert_failed(err, st, "dispatch_async", "pending dispatches",
                                    "wait for or release pending dispatches "
                                    "(pending_wait, pending_release)");
    goto fail;
  }
  pthread_mutex_lock(&b->q_lock);
  st = start_locked(b, err);
  if (st) {
    pthread_mutex_unlock(&b->q_lock);
    vyre_handles_remove(&b->pendings, *out);
    *out = 0;
    goto fail;
  }
  pd->t_enqueued = vyre__now_ns();
  pd->state = PENDING_QUEUED;
  if (b->q_tail) b->q_tail->next = pd;
  else b->q_head = pd;
  b->q_tail = pd;
  b->q_unfinished++;
  pthread_cond_signal(&b->q_work);
  pthread_mutex_unlock(&b->q_lock);
  ref_metric_add(b, REF_M_ASYNC_SUBMITTED, 1);
  return VYRE_OK;
fail:
  pending_free(b, pd);
  ref_metric_add(b, REF_M_DISPATCHES, 1);
  ref_metric_add(b, REF_M_DISPATCH_ERRORS, 1);
  return st;
}

vyre_status ref_pending_poll(ref_backend *b, vyre_pending pending, int *ready,
                             vyre_error *err) {
  if (!ready)
    return vyre_error_set(err, VYRE_INVALID_ARGUMENT, 0,
                          "pending_poll: ready is NULL. Fix: pass an int * to receive it");
  ref_pending *pd = vyre_handles_get(&b->pendings, pending);
  if (!pd) return bad_pending(err, "pending_poll", pending);
  pthread_mutex_lock(&b->q_lock);
  *ready = pd->state == PENDING_DONE;
  pthread_mutex_unlock(&b->q_lock);
  return VYRE_OK;
}

/* Drop a pending whose handle is already removed. */
static void pending_drop(ref_backend *b, ref_pending *pd) {
  pthread_mutex_lock(&b->q_lock);
  int done = pd->state == PENDING_DONE;
  if (!done) pd->released = 1; /* the worker frees it */
  pthread_mutex_unlock(&b->q_lock);
  if (done) pending_free(b, pd);
}

vyre_status ref_pending_wait(ref_backend *b, vyre_pending pending, vyre_outputs **out,
                             vyre_timing *timing, vyre_error *err) {
  if (out) *out = NULL;
  ref_pending *pd = vyre_handles_remove(&b->pendings, pending);
  if (!pd) return bad_pending(err, "pending_wait", pending);
  if (!out) {
    /* The handle goes whatever this returns. */
    pending_drop(b, pd);
    return vyre_error_set(err, VYRE_INVALID_ARGUMENT, 0,
                          "pending_wait: out is NULL; the pending dispatch was released. Fix: "
                          "pass a vyre_outputs ** (or call pending_release to drop it)");
  }
  pthread_mutex_lock(&b->q_lock);
  while (pd->state != PENDING_DONE) pthread_cond_wait(&b->q_done, &b->q_lock);
  pthread_mutex_unlock(&b->q_lock);
  uint64_t t_seen = vyre__now_ns();
  vyre_status st = pd->status;
  if (st) {
    vyre_error_copy(err, &pd->err);
  } else {
    *out = pd->outputs;
    pd->outputs = NULL;
    ref_timing_report(timing, pd->job.t_entry, pd->t_enqueued,
                      pd->job.t_run_end - pd->job.t_run_start, t_seen);
  }
  pending_free(b, pd);
  return st;
}

vyre_status ref_pending_release(ref_backend *b, vyre_pending pending, vyre_error *err) {
  ref_pending *pd = vyre_handles_remove(&b->pendings, pending);
  if (!pd) return bad_pending(err, "pending_release", pending);
  pending_drop(b, pd);
  return VYRE_OK;
}
