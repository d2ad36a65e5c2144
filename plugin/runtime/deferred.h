/* deferred.h -- work released before it completed (pending_release): kept until its event fires, reclaimed by later calls. */
#ifndef VYRE_PLUGIN_CUDA_DEFERRED_H
#define VYRE_PLUGIN_CUDA_DEFERRED_H

#include <pthread.h>
#include <stdatomic.h>

#include "context.h"
#include "metrics.h"

/* Embedded in the owner's record (a host dispatch job).  `release` frees
 * the whole record; it is called without the list's lock, with the
 * context current, once `done` has fired or the stream is idle (or the
 * context is gone). */
typedef struct vc_deferred_item {
  CUevent done;
  CUstream stream;
  /* vyre_limits' deadline of the released work (0: none): a waiting
   * reap (destroy) polls until then, and past it marks the instance
   * lost instead of blocking. */
  uint64_t deadline;
  void (*release)(struct vc_deferred_item *item);
  struct vc_deferred_item *next;
} vc_deferred_item;

/* The list; fields private to deferred.c. */
typedef struct vc_deferred {
  vc_context *cx;
  pthread_mutex_t lock;
  vc_deferred_item *head;
  atomic_uint count;
  atomic_ullong reaped;
} vc_deferred;

/* VYRE_OK, or the failure in err (nothing to destroy then). */
vyre_status vc_deferred_init(vc_deferred *d, vc_context *cx, vyre_error *err);
/* Reclaims everything (wait = 1) then frees the list; context current. */
void vc_deferred_destroy(vc_deferred *d);
/* Keep `item` until its work completes.  Thread-safe. */
void vc_deferred_push(vc_deferred *d, vc_deferred_item *item);
/* Release the items whose work has completed (wait = 1: wait for all).
 * The context must be current.  Thread-safe. */
void vc_deferred_reap(vc_deferred *d, int wait);
/* vc_enter, then reap what has completed: the entry of every call that
 * may find released work finished ("reclaimed by the first later call"). */
vyre_status vc_deferred_enter(vc_deferred *d, vyre_error *err);
/* Add pending.deferred and pending.deferred_reaped. */
void vc_deferred_add_metrics(vc_deferred *d, vc_metrics *m);

#endif /* VYRE_PLUGIN_CUDA_DEFERRED_H */
