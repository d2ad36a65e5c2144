/* pools.h -- the device allocation pool, the pinned host staging pool, and the stream/event pool. */
#ifndef VYRE_PLUGIN_CUDA_POOLS_H
#define VYRE_PLUGIN_CUDA_POOLS_H

#include <pthread.h>
#include <stdint.h>

#include "context.h"
#include "metrics.h"

typedef enum vc_pool_kind { VC_POOL_DEVICE = 0, VC_POOL_PINNED = 1 } vc_pool_kind;

/* One allocation: a CUdeviceptr or a pinned host pointer, and its bucket size. */
typedef struct vc_block {
  uint64_t ptr;
  uint64_t size;
} vc_block;

/* A pool of blocks; fields private to pools.c. */
typedef struct vc_mempool {
  pthread_mutex_t lock;
  vc_context *cx;
  vc_pool_kind kind;
  vc_block *cache; /* free blocks, any bucket; exact-size reuse */
  uint32_t cache_count, cache_cap;
  uint64_t cached_bytes; /* sum of cache[].size */
  uint64_t budget;       /* cached_bytes never exceeds this */
  uint64_t live_bytes;   /* handed out, not yet released */
  uint64_t hits, misses, driver_allocs, driver_frees, release_errors;
} vc_mempool;

typedef struct vc_handle_list {
  void **items;
  uint32_t count, cap;
} vc_handle_list;

/* Streams and events kept for reuse; fields private to pools.c. */
typedef struct vc_streampool {
  pthread_mutex_t lock;
  vc_context *cx;
  vc_handle_list streams, done_events, timing_events;
  uint64_t streams_created, events_created, reuses, destroy_errors;
} vc_streampool;

/* The bucket a request of n bytes is served from; 0 when n is 0 or too large. */
uint64_t vc_bucket_size(uint64_t n);

/* A pool that keeps at most `budget` bytes cached.  VYRE_OK, or the
 * failure in err (nothing to destroy then). */
vyre_status vc_mempool_init(vc_mempool *p, vc_context *cx, vc_pool_kind kind, uint64_t budget,
                            vyre_error *err);
/* Trim then free the bookkeeping; the context must be current.  Accepts
 * a pool that was never initialised (zeroed). */
void vc_mempool_destroy(vc_mempool *p);
/* A block of at least n (> 0) bytes: cached or new.  Thread-safe. */
vyre_status vc_mempool_acquire(vc_mempool *p, uint64_t n, vc_block *out, vyre_error *err);
/* Give a block back: cached within the budget, else freed.  Accepts an
 * empty block; empties *blk.  Thread-safe. */
void vc_mempool_release(vc_mempool *p, vc_block *blk);
/* Free every cached block.  Thread-safe. */
void vc_mempool_trim(vc_mempool *p);
/* Add pool.device.* or pool.pinned.* (by kind). */
void vc_mempool_add_metrics(vc_mempool *p, vc_metrics *m);

/* VYRE_OK, or the failure in err (nothing to destroy then). */
vyre_status vc_streampool_init(vc_streampool *p, vc_context *cx, vyre_error *err);
/* Destroy every cached stream/event; the context must be current. */
void vc_streampool_trim(vc_streampool *p);
void vc_streampool_destroy(vc_streampool *p);
/* A non-blocking stream, cached or new.  Thread-safe. */
vyre_status vc_stream_acquire(vc_streampool *p, CUstream *out, vyre_error *err);
/* Give an idle stream back (NULL accepted).  Thread-safe. */
void vc_stream_release(vc_streampool *p, CUstream s);
/* Destroy a stream whose state is unknown (a failed capture) instead of pooling it. */
void vc_stream_discard(vc_streampool *p, CUstream s);
/* timing = 1: an event that records time; 0: CU_EVENT_DISABLE_TIMING.  Thread-safe. */
vyre_status vc_event_acquire(vc_streampool *p, int timing, CUevent *out, vyre_error *err);
void vc_event_release(vc_streampool *p, int timing, CUevent e);
/* Add pool.streams.*, pool.events.*, pool.streams_events.*. */
void vc_streampool_add_metrics(vc_streampool *p, vc_metrics *m);

#endif /* VYRE_PLUGIN_CUDA_POOLS_H */
