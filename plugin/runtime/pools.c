/* pools.c -- the device allocation pool, the pinned host staging pool, and the stream/event pool. */
#include "pools.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "util.h"

#define MIN_BUCKET 256ull
#define POW2_LIMIT (256ull << 20) /* above this, buckets are multiples of LARGE_STEP */
#define LARGE_STEP (32ull << 20)
#define MAX_CACHED_BLOCKS 1024u
#define MAX_CACHED_STREAMS 32u
#define MAX_CACHED_EVENTS 128u

/* Power-of-two buckets up to 256 MiB (so a block serves any request down
 * to half its size); 32 MiB steps above, so a 300 MiB buffer does not
 * claim 512 MiB of device memory. */
uint64_t vc_bucket_size(uint64_t n) {
  if (n == 0) return 0;
  if (n <= MIN_BUCKET) return MIN_BUCKET;
  if (n <= POW2_LIMIT) {
    uint64_t s = MIN_BUCKET;
    while (s < n) s <<= 1;
    return s;
  }
  if (n > UINT64_MAX - (LARGE_STEP - 1)) return 0;
  return (n + LARGE_STEP - 1) / LARGE_STEP * LARGE_STEP;
}

static const char *pool_name(const vc_mempool *p) {
  return p->kind == VC_POOL_DEVICE ? "device" : "pinned host";
}

vyre_status vc_mempool_init(vc_mempool *p, vc_context *cx, vc_pool_kind kind, uint64_t budget,
                            vyre_error *err) {
  memset(p, 0, sizeof *p);
  const char *what = kind == VC_POOL_DEVICE ? "device pool" : "pinned pool";
  vyre_status st = vc_mutex_init(&p->lock, "cuda create", what, err);
  if (st != VYRE_OK) return st;
  p->cx = cx;
  p->kind = kind;
  p->budget = budget;
  return VYRE_OK;
}

static CUresult driver_alloc(vc_mempool *p, uint64_t size, uint64_t *ptr) {
  vc_context *cx = p->cx;
  if (p->kind == VC_POOL_DEVICE) {
    CUdeviceptr d = 0;
    CUresult r = VC_CU(cx, cuMemAlloc, (&d, (size_t)size));
    *ptr = d;
    return r;
  }
  void *h = NULL;
  CUresult r = VC_CU(cx, cuMemHostAlloc, (&h, (size_t)size, CU_MEMHOSTALLOC_PORTABLE));
  *ptr = (uint64_t)(uintptr_t)h;
  return r;
}

static void driver_free(vc_mempool *p, uint64_t ptr) {
  vc_context *cx = p->cx;
  if (!vc_cleanup_ok(cx)) return; /* goes with the context */
  CUresult r;
  const char *call;
  if (p->kind == VC_POOL_DEVICE) {
    r = VC_CU(cx, cuMemFree, ((CUdeviceptr)ptr));
    call = "cuMemFree";
  } else {
    r = VC_CU(cx, cuMemFreeHost, ((void *)(uintptr_t)ptr));
    call = "cuMemFreeHost";
  }
  pthread_mutex_lock(&p->lock);
  p->driver_frees++;
  if (r != CUDA_SUCCESS) p->release_errors++;
  pthread_mutex_unlock(&p->lock);
  if (r != CUDA_SUCCESS) vc_cu_note(cx, r, call);
}

/* Take a cached block of exactly `size`; 1 when found.  Lock held. */
static int take_cached(vc_mempool *p, uint64_t size, vc_block *out) {
  for (uint32_t i = p->cache_count; i-- > 0;) {
    if (p->cache[i].size == size) {
      *out = p->cache[i];
      p->cache[i] = p->cache[--p->cache_count];
      p->cached_bytes -= size;
      return 1;
    }
  }
  return 0;
}

vyre_status vc_mempool_acquire(vc_mempool *p, uint64_t n, vc_block *out, vyre_error *err) {
  out->ptr = 0;
  out->size = 0;
  uint64_t size = vc_bucket_size(n);
  if (!size)
    return vyre_error_set(err, VYRE_LIMIT, 0,
                          "%s pool: cannot allocate %llu bytes. Fix: split the data into "
                          "smaller buffers",
                          pool_name(p), (unsigned long long)n);
  pthread_mutex_lock(&p->lock);
  uint64_t live;
  if (!vc_add_u64(p->live_bytes, size, &live)) {
    pthread_mutex_unlock(&p->lock);
    return vyre_error_set(err, VYRE_LIMIT, 0,
                          "%s pool: live byte count would overflow adding %llu bytes. Fix: "
                          "release buffers before allocating more",
                          pool_name(p), (unsigned long long)size);
  }
  if (take_cached(p, size, out)) {
    p->hits++;
    p->live_bytes = live;
    pthread_mutex_unlock(&p->lock);
    return VYRE_OK;
  }
  p->misses++;
  pthread_mutex_unlock(&p->lock);

  uint64_t ptr = 0;
  CUresult r = driver_alloc(p, size, &ptr);
  if (r == CUDA_ERROR_OUT_OF_MEMORY) {
    /* Cached blocks of other sizes may be what stands in the way. */
    vc_mempool_trim(p);
    r = driver_alloc(p, size, &ptr);
  }
  if (r == CUDA_SUCCESS && ptr == 0) {
    return vyre_error_set(err, VYRE_DRIVER, 0,
                          "%s pool: %s returned a null pointer for %llu bytes after reporting "
                          "success. Fix: update the NVIDIA driver",
                          pool_name(p), p->kind == VC_POOL_DEVICE ? "cuMemAlloc" : "cuMemHostAlloc",
                          (unsigned long long)size);
  }
  if (r != CUDA_SUCCESS) {
    vyre_status st = vc_cu_fail(p->cx, err, r,
                                p->kind == VC_POOL_DEVICE ? "cuMemAlloc" : "cuMemHostAlloc", NULL,
                                NULL);
    vyre_error_prefix(err, "%s pool: allocating %llu bytes (bucket of %llu)", pool_name(p),
                      (unsigned long long)n, (unsigned long long)size);
    return st;
  }
  pthread_mutex_lock(&p->lock);
  p->driver_allocs++;
  if (!vc_add_u64(p->live_bytes, size, &p->live_bytes)) {
    pthread_mutex_unlock(&p->lock);
    driver_free(p, ptr);
    return vyre_error_set(err, VYRE_LIMIT, 0,
                          "%s pool: live byte count would overflow. Fix: release buffers "
                          "before allocating more",
                          pool_name(p));
  }
  pthread_mutex_unlock(&p->lock);
  out->ptr = ptr;
  out->size = size;
  return VYRE_OK;
}

void vc_mempool_release(vc_mempool *p, vc_block *blk) {
  if (!blk || !blk->ptr || !blk->size) return;
  vc_block give = *blk;
  blk->ptr = 0;
  blk->size = 0;
  int keep = 0;
  pthread_mutex_lock(&p->lock);
  if (p->live_bytes >= give.size) {
    p->live_bytes -= give.size;
  } else {
    /* Accounting drifted (a bug): never wrap; record it as an error. */
    p->release_errors++;
    p->live_bytes = 0;
  }
  uint64_t cached;
  /* A lost context's memory is not worth keeping: free it (the driver
   * reports errors we only count). */
  if (!vc_is_lost(p->cx) && vc_add_u64(p->cached_bytes, give.size, &cached) &&
      cached <= p->budget && p->cache_count < MAX_CACHED_BLOCKS) {
    if (p->cache_count == p->cache_cap) {
      uint32_t cap = p->cache_cap ? p->cache_cap * 2 : 16;
      vc_block *grown = realloc(p->cache, cap * sizeof *grown);
      if (grown) {
        p->cache = grown;
        p->cache_cap = cap;
      }
    }
    if (p->cache_count < p->cache_cap) {
      p->cache[p->cache_count++] = give;
      p->cached_bytes = cached;
      keep = 1;
    }
  }
  pthread_mutex_unlock(&p->lock);
  if (!keep) driver_free(p, give.ptr);
}

void vc_mempool_trim(vc_mempool *p) {
  for (;;) {
    vc_block blk = {0, 0};
    pthread_mutex_lock(&p->lock);
    if (p->cache_count) {
      blk = p->cache[--p->cache_count];
      p->cached_bytes -= blk.size;
    }
    pthread_mutex_unlock(&p->lock);
    if (!blk.ptr) break;
    driver_free(p, blk.ptr);
  }
}

void vc_mempool_destroy(vc_mempool *p) {
  if (!p->cx) return;
  vc_mempool_trim(p);
  free(p->cache);
  p->cache = NULL;
  p->cache_cap = 0;
  pthread_mutex_destroy(&p->lock);
  p->cx = NULL;
}

/* ------------------------------------------------------------------ */
/* Streams and events                                                  */
/* ------------------------------------------------------------------ */
static int list_push(vc_handle_list *l, void *item, uint32_t limit) {
  if (l->count >= limit) return 0;
  if (l->count == l->cap) {
    uint32_t cap = l->cap ? l->cap * 2 : 8;
    void **grown = realloc(l->items, cap * sizeof *grown);
    if (!grown) return 0;
    l->items = grown;
    l->cap = cap;
  }
  l->items[l->count++] = item;
  return 1;
}

static void *list_pop(vc_handle_list *l) { return l->count ? l->items[--l->count] : NULL; }

vyre_status vc_streampool_init(vc_streampool *p, vc_context *cx, vyre_error *err) {
  memset(p, 0, sizeof *p);
  vyre_status st = vc_mutex_init(&p->lock, "cuda create", "stream pool", err);
  if (st != VYRE_OK) return st;
  p->cx = cx;
  return VYRE_OK;
}

vyre_status vc_stream_acquire(vc_streampool *p, CUstream *out, vyre_error *err) {
  vc_context *cx = p->cx;
  pthread_mutex_lock(&p->lock);
  CUstream s = (CUstream)list_pop(&p->streams);
  if (s) p->reuses++;
  pthread_mutex_unlock(&p->lock);
  if (!s) {
    /* Non-blocking: never serialise with the legacy default stream that
     * the host application may be using. */
    CUresult r = VC_CU(cx, cuStreamCreate, (&s, CU_STREAM_NON_BLOCKING));
    if (r != CUDA_SUCCESS) return vc_cu_fail(cx, err, r, "cuStreamCreate", NULL, NULL);
    if (!s)
      return vyre_error_set(err, VYRE_DRIVER, 0,
                            "cuStreamCreate returned a null stream after reporting success. "
                            "Fix: update the NVIDIA driver");
    pthread_mutex_lock(&p->lock);
    p->streams_created++;
    pthread_mutex_unlock(&p->lock);
  }
  *out = s;
  return VYRE_OK;
}

void vc_stream_release(vc_streampool *p, CUstream s) {
  if (!s) return;
  vc_context *cx = p->cx;
  int kept = 0;
  if (!vc_is_lost(cx)) {
    pthread_mutex_lock(&p->lock);
    kept = list_push(&p->streams, s, MAX_CACHED_STREAMS);
    pthread_mutex_unlock(&p->lock);
  }
  if (!kept && vc_cleanup_ok(cx)) {
    CUresult r = VC_CU(cx, cuStreamDestroy, (s));
    if (r != CUDA_SUCCESS) {
      pthread_mutex_lock(&p->lock);
      p->destroy_errors++;
      pthread_mutex_unlock(&p->lock);
      vc_cu_note(cx, r, "cuStreamDestroy");
    }
  }
}

void vc_stream_discard(vc_streampool *p, CUstream s) {
  vc_context *cx = p->cx;
  if (!s || !vc_cleanup_ok(cx)) return;
  CUresult r = VC_CU(cx, cuStreamDestroy, (s));
  if (r != CUDA_SUCCESS) {
    pthread_mutex_lock(&p->lock);
    p->destroy_errors++;
    pthread_mutex_unlock(&p->lock);
    vc_cu_note(cx, r, "cuStreamDestroy");
  }
}

vyre_status vc_event_acquire(vc_streampool *p, int timing, CUevent *out, vyre_error *err) {
  vc_context *cx = p->cx;
  vc_handle_list *l = timing ? &p->timing_events : &p->done_events;
  pthread_mutex_lock(&p->lock);
  CUevent e = (CUevent)list_pop(l);
  if (e) p->reuses++;
  pthread_mutex_unlock(&p->lock);
  if (!e) {
    CUresult r = VC_CU(cx, cuEventCreate, (&e, timing ? CU_EVENT_DEFAULT : CU_EVENT_DISABLE_TIMING));
    if (r != CUDA_SUCCESS) return vc_cu_fail(cx, err, r, "cuEventCreate", NULL, NULL);
    if (!e)
      return vyre_error_set(err, VYRE_DRIVER, 0,
                            "cuEventCreate returned a null event after reporting success. Fix: "
                            "update the NVIDIA driver");
    pthread_mutex_lock(&p->lock);
    p->events_created++;
    pthread_mutex_unlock(&p->lock);
  }
  *out = e;
  return VYRE_OK;
}

void vc_event_release(vc_streampool *p, int timing, CUevent e) {
  if (!e) return;
  vc_context *cx = p->cx;
  int kept = 0;
  if (!vc_is_lost(cx)) {
    pthread_mutex_lock(&p->lock);
    kept = list_push(timing ? &p->timing_events : &p->done_events, e, MAX_CACHED_EVENTS);
    pthread_mutex_unlock(&p->lock);
  }
  if (!kept && vc_cleanup_ok(cx)) {
    CUresult r = VC_CU(cx, cuEventDestroy, (e));
    if (r != CUDA_SUCCESS) {
      pthread_mutex_lock(&p->lock);
      p->destroy_errors++;
      pthread_mutex_unlock(&p->lock);
      vc_cu_note(cx, r, "cuEventDestroy");
    }
  }
}

void vc_streampool_trim(vc_streampool *p) {
  vc_context *cx = p->cx;
  for (;;) {
    pthread_mutex_lock(&p->lock);
    CUstream s = (CUstream)list_pop(&p->streams);
    CUevent d = s ? NULL : (CUevent)list_pop(&p->done_events);
    CUevent t = (s || d) ? NULL : (CUevent)list_pop(&p->timing_events);
    pthread_mutex_unlock(&p->lock);
    CUresult r = CUDA_SUCCESS;
    const char *call = NULL;
    if ((s || d || t) && !vc_cleanup_ok(cx)) continue; /* goes with the context */
    if (s) {
      r = VC_CU(cx, cuStreamDestroy, (s));
      call = "cuStreamDestroy";
    } else if (d || t) {
      r = VC_CU(cx, cuEventDestroy, (d ? d : t));
      call = "cuEventDestroy";
    } else {
      break;
    }
    if (r != CUDA_SUCCESS) {
      pthread_mutex_lock(&p->lock);
      p->destroy_errors++;
      pthread_mutex_unlock(&p->lock);
      vc_cu_note(cx, r, call);
    }
  }
}

void vc_streampool_destroy(vc_streampool *p) {
  if (!p->cx) return;
  vc_streampool_trim(p);
  free(p->streams.items);
  free(p->done_events.items);
  free(p->timing_events.items);
  memset(&p->streams, 0, sizeof p->streams);
  memset(&p->done_events, 0, sizeof p->done_events);
  memset(&p->timing_events, 0, sizeof p->timing_events);
  pthread_mutex_destroy(&p->lock);
  p->cx = NULL;
}

/* ------------------------------------------------------------------ */
/* Metrics                                                             */
/* ------------------------------------------------------------------ */
static void read_mempool(const void *state, vc_metric_sink *s) {
  vc_mempool *p = (vc_mempool *)state;
  const char *prefix = p->kind == VC_POOL_DEVICE ? "pool.device" : "pool.pinned";
  char name[56];
  struct {
    uint64_t hits, misses, cached_bytes, cache_count, live_bytes, budget, driver_allocs,
        driver_frees, release_errors;
  } c;
  pthread_mutex_lock(&p->lock);
  c.hits = p->hits;
  c.misses = p->misses;
  c.cached_bytes = p->cached_bytes;
  c.cache_count = p->cache_count;
  c.live_bytes = p->live_bytes;
  c.budget = p->budget;
  c.driver_allocs = p->driver_allocs;
  c.driver_frees = p->driver_frees;
  c.release_errors = p->release_errors;
  pthread_mutex_unlock(&p->lock);
#define POOL_METRIC_(field, text)                     \
  snprintf(name, sizeof name, "%s.%s", prefix, text); \
  vc_metric_emit(s, name, c.field);
  POOL_METRIC_(hits, "hits")
  POOL_METRIC_(misses, "misses")
  POOL_METRIC_(cached_bytes, "cached_bytes")
  POOL_METRIC_(cache_count, "cached_blocks")
  POOL_METRIC_(live_bytes, "live_bytes")
  POOL_METRIC_(budget, "budget_bytes")
  POOL_METRIC_(driver_allocs, "driver_allocs")
  POOL_METRIC_(driver_frees, "driver_frees")
  POOL_METRIC_(release_errors, "release_errors")
#undef POOL_METRIC_
}

void vc_mempool_add_metrics(vc_mempool *p, vc_metrics *m) { vc_metrics_add(m, read_mempool, p); }

static void read_streampool(const void *state, vc_metric_sink *s) {
  vc_streampool *p = (vc_streampool *)state;
  pthread_mutex_lock(&p->lock);
  uint64_t sc = p->streams.count, scr = p->streams_created;
  uint64_t ec = p->done_events.count + p->timing_events.count;
  uint64_t ecr = p->events_created, reuse = p->reuses, derr = p->destroy_errors;
  pthread_mutex_unlock(&p->lock);
  vc_metric_emit(s, "pool.streams.cached", sc);
  vc_metric_emit(s, "pool.streams.created", scr);
  vc_metric_emit(s, "pool.events.cached", ec);
  vc_metric_emit(s, "pool.events.created", ecr);
  vc_metric_emit(s, "pool.streams_events.reuses", reuse);
  vc_metric_emit(s, "pool.streams_events.destroy_errors", derr);
}

void vc_streampool_add_metrics(vc_streampool *p, vc_metrics *m) {
  vc_metrics_add(m, read_streampool, p);
}
