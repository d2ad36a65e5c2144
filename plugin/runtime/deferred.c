/* deferred.c -- the deferred-release list: released work kept until its completion event fires (deferred.h). */
#include "deferred.h"

#include <string.h>

#include "util.h"

vyre_status vc_deferred_init(vc_deferred *d, vc_context *cx, vyre_error *err) {
  memset(d, 0, sizeof *d);
  d->cx = cx;
  vyre_status st = vc_mutex_init(&d->lock, "cuda create", "deferred work", err);
  if (st != VYRE_OK) return st;
  atomic_init(&d->count, 0);
  atomic_init(&d->reaped, 0);
  return VYRE_OK;
}

void vc_deferred_destroy(vc_deferred *d) {
  if (!d->cx) return;
  vc_deferred_reap(d, 1);
  pthread_mutex_destroy(&d->lock);
  d->cx = NULL;
}

void vc_deferred_push(vc_deferred *d, vc_deferred_item *item) {
  pthread_mutex_lock(&d->lock);
  item->next = d->head;
  d->head = item;
  atomic_fetch_add(&d->count, 1);
  pthread_mutex_unlock(&d->lock);
}

/* 1 when the item's work is over (or can no longer be waited for). */
static int finished(vc_deferred *d, vc_deferred_item *it, int wait) {
  vc_context *cx = d->cx;
  if (!vc_cleanup_ok(cx) || !it->done) return 1;
  if (wait && it->deadline && vc_wait_until(cx, it->done, it->deadline) == CUDA_ERROR_NOT_READY) {
    vc_context_runaway(cx, "a released async dispatch ran past its timeout (its kernel may "
                           "still be running)");
    return 1;
  }
  /* A wait is on the item's own stream (as vc_job_finish's, for
   * compute-sanitizer); a look is an event query. */
  CUresult r = wait ? VC_CU(cx, cuStreamSynchronize, (it->stream)) : VC_CU(cx, cuEventQuery, (it->done));
  if (r == CUDA_ERROR_NOT_READY) return 0;
  if (r == CUDA_SUCCESS) return 1;
  vc_cu_note(cx, r, wait ? "cuStreamSynchronize" : "cuEventQuery");
  if (vc_is_lost(cx)) return 1;
  if (wait) return 1; /* neither can tell: give up on it */
  /* The event cannot tell us; the stream can. */
  CUresult sr = VC_CU(cx, cuStreamSynchronize, (it->stream));
  if (sr == CUDA_SUCCESS) return 1;
  vc_cu_note(cx, sr, "cuStreamSynchronize");
  return vc_is_lost(cx);
}

void vc_deferred_reap(vc_deferred *d, int wait) {
  pthread_mutex_lock(&d->lock);
  vc_deferred_item *list = d->head;
  d->head = NULL;
  atomic_store(&d->count, 0);
  pthread_mutex_unlock(&d->lock);
  vc_deferred_item *keep = NULL;
  uint32_t kept = 0;
  while (list) {
    vc_deferred_item *it = list;
    list = it->next;
    if (finished(d, it, wait)) {
      it->release(it);
      atomic_fetch_add(&d->reaped, 1);
    } else {
      it->next = keep;
      keep = it;
      kept++;
    }
  }
  if (keep) {
    pthread_mutex_lock(&d->lock);
    vc_deferred_item *tail = keep;
    while (tail->next) tail = tail->next;
    tail->next = d->head;
    d->head = keep;
    atomic_fetch_add(&d->count, kept);
    pthread_mutex_unlock(&d->lock);
  }
}

vyre_status vc_deferred_enter(vc_deferred *d, vyre_error *err) {
  vyre_status st = vc_enter(d->cx, err);
  if (st == VYRE_OK && atomic_load(&d->count)) vc_deferred_reap(d, 0);
  return st;
}

static void read_metrics(const void *state, vc_metric_sink *s) {
  vc_deferred *d = (vc_deferred *)state;
  vc_metric_emit(s, "pending.deferred", atomic_load(&d->count));
  vc_metric_emit(s, "pending.deferred_reaped", atomic_load(&d->reaped));
}

void vc_deferred_add_metrics(vc_deferred *d, vc_metrics *m) { vc_metrics_add(m, read_metrics, d); }
