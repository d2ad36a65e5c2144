/* resident.c -- resident buffers: handles, the 90% budget, zero-fill, imported device memory, and their staged transfers (small: a pinned pool block; large: the staging ring). */
#include "resident.h"

#include <stdlib.h>
#include <string.h>

#include "util.h"


/* A resident buffer: an exact-size cuMemAlloc allocation, or (imported)
 * a range of device memory the host owns and frees. */
typedef struct vc_resident {
  CUdeviceptr ptr;
  uint64_t size;
  int imported;
} vc_resident;

vyre_status vc_resident_init(vc_resident_store *r, vc_context *cx, vc_deferred *deferred,
                             vc_mempool *devpool, vc_mempool *hostpool, vc_streampool *streams,
                             vc_staging *staging, vyre_error *err) {
  memset(r, 0, sizeof *r);
  vyre_status st = vc_mutex_init(&r->lock, "cuda create", "resident store", err);
  if (st != VYRE_OK) return st;
  vyre_handles_init(&r->table, VYRE_HANDLE_RESIDENT);
  r->cx = cx;
  r->deferred = deferred;
  r->devpool = devpool;
  r->hostpool = hostpool;
  r->streams = streams;
  r->staging = staging;
  return VYRE_OK;
}

void vc_resident_on_free(vc_resident_store *r, vc_resident_freed_fn fn, void *user) {
  r->on_free = fn;
  r->on_free_user = user;
}

void vc_resident_destroy(vc_resident_store *store) {
  if (!store->cx) return;
  vc_context *cx = store->cx;
  vc_resident *r;
  while ((r = vyre_handles_pop_any(&store->table)) != NULL) {
    if (!r->imported && vc_cleanup_ok(cx)) {
      CUresult cr = VC_CU(cx, cuMemFree, (r->ptr));
      if (cr != CUDA_SUCCESS) vc_cu_note(cx, cr, "cuMemFree");
    }
    free(r);
  }
  vyre_handles_destroy(&store->table);
  pthread_mutex_destroy(&store->lock);
  store->cx = NULL;
}

/* Look up a live handle; NULL (and INVALID_HANDLE in err) otherwise. */
static vc_resident *resident_get(vc_resident_store *store, vyre_resident h, const char *what,
                                 vyre_error *err) {
  vc_resident *r = vyre_handles_get(&store->table, h);
  if (!r)
    vyre_error_set(err, VYRE_INVALID_HANDLE, 0,
                   "%s: resident handle 0x%016llx is not a live buffer of this backend (freed, "
                   "never allocated, or from another instance). Fix: pass a handle returned by "
                   "resident_alloc (or resident_import) on this backend and not yet freed",
                   what, (unsigned long long)h);
  return r;
}

vyre_status vc_resident_lookup(vc_resident_store *r, vyre_resident h, const char *what,
                               CUdeviceptr *ptr, uint64_t *size, vyre_error *err) {
  vc_resident *res = resident_get(r, h, what, err);
  if (!res) return VYRE_INVALID_HANDLE;
  *ptr = res->ptr;
  *size = res->size;
  return VYRE_OK;
}

/* ------------------------------------------------------------------ */
/* Transfers                                                           */
/* ------------------------------------------------------------------ */
vyre_status vc_transfer(vc_resident_store *rs, CUstream stream, const vc_segment *segs,
                        uint32_t count, int to_device, vyre_error *err) {
  vc_context *cx = rs->cx;
  uint64_t total = 0;
  for (uint32_t i = 0; i < count; i++)
    if (!vc_add_u64(total, segs[i].size, &total))
      return vyre_error_set(err, VYRE_LIMIT, 0,
                            "transfer: total size overflows 64 bits. Fix: split the transfer");
  if (total == 0) return VYRE_OK;
  CUresult r;
  if (total > vc_staging_threshold(rs->staging)) {
    /* Pipelined through the ring; a download returns with the bytes in
     * host memory, an upload once they are read: wait for the device. */
    vyre_status st = to_device ? vc_staging_upload(rs->staging, stream, segs, count, err)
                               : vc_staging_download(rs->staging, stream, segs, count, err);
    if (st != VYRE_OK || !to_device) return st;
    r = VC_CU(cx, cuStreamSynchronize, (stream));
    if (r != CUDA_SUCCESS) return vc_cu_fail(cx, err, r, "cuStreamSynchronize", NULL, NULL);
    return VYRE_OK;
  }

  /* At most one chunk: one pinned block, one synchronisation. */
  vc_block blk = {0, 0};
  vyre_status st = vc_mempool_acquire(rs->hostpool, total, &blk, err);
  if (st != VYRE_OK) return st;
  uint8_t *stage = (uint8_t *)(uintptr_t)blk.ptr;
  int enqueued = 0;
  uint64_t off = 0;
  for (uint32_t i = 0; i < count; i++) {
    if (!segs[i].size) continue;
    if (to_device) {
      memcpy(stage + off, segs[i].host, (size_t)segs[i].size);
      r = VC_CU(cx, cuMemcpyHtoDAsync, (segs[i].dev, stage + off, (size_t)segs[i].size, stream));
      if (r != CUDA_SUCCESS) {
        st = vc_cu_fail(cx, err, r, "cuMemcpyHtoDAsync", NULL, NULL);
        goto fail;
      }
    } else {
      r = VC_CU(cx, cuMemcpyDtoHAsync, (stage + off, segs[i].dev, (size_t)segs[i].size, stream));
      if (r != CUDA_SUCCESS) {
        st = vc_cu_fail(cx, err, r, "cuMemcpyDtoHAsync", NULL, NULL);
        goto fail;
      }
    }
    enqueued = 1;
    off += segs[i].size;
  }
  r = VC_CU(cx, cuStreamSynchronize, (stream));
  if (r != CUDA_SUCCESS) {
    st = vc_cu_fail(cx, err, r, "cuStreamSynchronize", NULL, NULL);
    enqueued = 0;
    goto fail;
  }
  if (!to_device) {
    /* Copy out in issue order (overlapping destinations: the later wins). */
    off = 0;
    for (uint32_t i = 0; i < count; i++) {
      if (segs[i].size) memcpy(segs[i].host, stage + off, (size_t)segs[i].size);
      off += segs[i].size;
    }
  }
  vc_mempool_release(rs->hostpool, &blk);
  return VYRE_OK;

fail:
  if (enqueued) {
    /* The block goes back to the pool: nothing may still read or write it. */
    CUresult sr = VC_CU(cx, cuStreamSynchronize, (stream));
    if (sr != CUDA_SUCCESS) vc_cu_note(cx, sr, "cuStreamSynchronize");
  }
  vc_mempool_release(rs->hostpool, &blk);
  return st;
}

/* ------------------------------------------------------------------ */
/* Resident entry points                                               */
/* ------------------------------------------------------------------ */
/* Bytes resident buffers may hold in total now: 90% of the device,
 * and no more new bytes than 90% of what is free right now. */
static uint64_t live_budget(uint64_t total, uint64_t free_now, uint64_t resident) {
  uint64_t cap = vc_resident_share(total);
  if (resident >= cap) return resident;
  uint64_t headroom = cap - resident;
  uint64_t live = vc_resident_share(free_now);
  return resident + (headroom < live ? headroom : live);
}

/* Count `size` more bytes (and one more buffer) against the resident
 * budget; when they do not fit, the dispatch pool's cached memory is
 * given back and the budget looked at once more. */
static vyre_status budget_reserve(vc_resident_store *rs, uint64_t size, vyre_error *err) {
  vc_context *cx = rs->cx;
  uint64_t free_now = 0, total = 0;
  for (int attempt = 0;; attempt++) {
    vyre_status st = vc_context_memory(cx, &free_now, &total, err);
    if (st != VYRE_OK) return st;
    if (vc_context_profile(cx)->total_memory) total = vc_context_profile(cx)->total_memory;
    pthread_mutex_lock(&rs->lock);
    uint64_t budget = live_budget(total, free_now, rs->bytes);
    uint64_t want;
    int fits = vc_add_u64(rs->bytes, size, &want) && want <= budget;
    if (fits) {
      rs->bytes = want;
      rs->count++;
    }
    uint64_t available = budget - rs->bytes;
    uint64_t resident_now = rs->bytes;
    pthread_mutex_unlock(&rs->lock);
    if (fits) return VYRE_OK;
    if (attempt == 0) {
      /* Memory cached by the dispatch pool counts against free memory;
       * give it back and look again. */
      vc_mempool_trim(rs->devpool);
      continue;
    }
    pthread_mutex_lock(&rs->lock);
    rs->budget_rejects++;
    pthread_mutex_unlock(&rs->lock);
    return vyre_error_set(err, VYRE_OUT_OF_MEMORY, 0,
                          "resident_alloc: %llu bytes requested, %llu available under the "
                          "resident budget (90%% of %llu device bytes, %llu free now, %llu "
                          "already resident). Fix: free resident buffers or allocate less",
                          (unsigned long long)size, (unsigned long long)available,
                          (unsigned long long)total, (unsigned long long)free_now,
                          (unsigned long long)resident_now);
  }
}

vyre_status vc_resident_alloc(vc_resident_store *rs, uint64_t size, vyre_resident *out,
                              vyre_error *err) {
  vc_context *cx = rs->cx;
  if (!out)
    return vyre_error_set(err, VYRE_INVALID_ARGUMENT, 0,
                          "resident_alloc: out is NULL. Fix: pass a vyre_resident to receive "
                          "the handle");
  *out = 0;
  if (size == 0)
    return vyre_error_set(err, VYRE_INVALID_ARGUMENT, 0,
                          "resident_alloc: size is 0. Fix: allocate at least one byte");
  if (size > (uint64_t)SIZE_MAX)
    return vyre_error_set(err, VYRE_LIMIT, 0,
                          "resident_alloc: %llu bytes do not fit this host's size_t. Fix: "
                          "allocate less",
                          (unsigned long long)size);
  vyre_status st = vc_deferred_enter(rs->deferred, err);
  if (st != VYRE_OK) return st;

  vc_resident *res = NULL;
  CUstream stream = NULL;
  int reserved = 0;
  st = budget_reserve(rs, size, err);
  if (st != VYRE_OK) goto fail;
  reserved = 1;

  res = calloc(1, sizeof *res);
  if (!res) {
    st = vyre_error_set(err, VYRE_OUT_OF_MEMORY, 0,
                        "resident_alloc: no host memory for the buffer record. Fix: free host "
                        "memory");
    goto fail;
  }
  res->size = size;
  CUresult r = VC_CU(cx, cuMemAlloc, (&res->ptr, (size_t)size));
  if (r == CUDA_ERROR_OUT_OF_MEMORY) {
    vc_mempool_trim(rs->devpool);
    r = VC_CU(cx, cuMemAlloc, (&res->ptr, (size_t)size));
  }
  if (r != CUDA_SUCCESS) {
    res->ptr = 0;
    st = vc_cu_fail(cx, err, r, "cuMemAlloc", NULL, NULL);
    vyre_error_prefix(err, "resident_alloc of %llu bytes", (unsigned long long)size);
    goto fail;
  }
  /* New buffers are zero-filled (vyre.h). */
  st = vc_stream_acquire(rs->streams, &stream, err);
  if (st != VYRE_OK) goto fail;
  r = VC_CU(cx, cuMemsetD8Async, (res->ptr, 0, (size_t)size, stream));
  if (r != CUDA_SUCCESS) {
    st = vc_cu_fail(cx, err, r, "cuMemsetD8Async", NULL, NULL);
    goto fail;
  }
  r = VC_CU(cx, cuStreamSynchronize, (stream));
  if (r != CUDA_SUCCESS) {
    st = vc_cu_fail(cx, err, r, "cuStreamSynchronize", NULL, NULL);
    goto fail;
  }
  vc_stream_release(rs->streams, stream);
  stream = NULL;
  st = vyre_handles_insert(&rs->table, res, out);
  if (st != VYRE_OK) {
    st = vyre_handles_insert_failed(err, st, "resident_alloc", "resident buffers",
                                    "free the resident buffers you no longer use "
                                    "(resident_free)");
    goto fail;
  }
  vc_leave(cx);
  return VYRE_OK;

fail:
  if (stream) {
    CUresult sr = VC_CU(cx, cuStreamSynchronize, (stream));
    if (sr != CUDA_SUCCESS) vc_cu_note(cx, sr, "cuStreamSynchronize");
    vc_stream_release(rs->streams, stream);
  }
  if (res) {
    if (res->ptr) {
      CUresult fr = VC_CU(cx, cuMemFree, (res->ptr));
      if (fr != CUDA_SUCCESS) vc_cu_note(cx, fr, "cuMemFree");
    }
    free(res);
  }
  if (reserved) {
    pthread_mutex_lock(&rs->lock);
    rs->bytes -= size;
    rs->count--;
    pthread_mutex_unlock(&rs->lock);
  }
  *out = 0;
  vc_leave(cx);
  return st;
}

vyre_status vc_resident_free(vc_resident_store *rs, vyre_resident buffer, vyre_error *err) {
  vc_context *cx = rs->cx;
  if (!vyre_handles_get(&rs->table, buffer))
    return vyre_error_set(err, VYRE_INVALID_HANDLE, 0,
                          "resident_free: handle 0x%016llx is not a live buffer of this backend "
                          "(already freed, never allocated, or from another instance). Fix: "
                          "free each handle once, on the backend that made it",
                          (unsigned long long)buffer);
  /* On a lost instance the handle still goes away; its memory goes with
   * the context.  Otherwise a context that cannot be made current leaves
   * everything as it was. */
  int lost = vc_is_lost(cx);
  if (!lost) {
    CUresult r = vc_context_push(cx);
    if (r != CUDA_SUCCESS) {
      vyre_status st = vc_cu_fail(cx, err, r, "cuCtxPushCurrent", NULL, NULL);
      vyre_error_prefix(err, "resident_free (the handle is still live)");
      return st;
    }
  }
  vc_resident *res = vyre_handles_remove(&rs->table, buffer);
  vyre_status st = VYRE_OK;
  if (res) {
    pthread_mutex_lock(&rs->lock);
    if (res->imported) {
      rs->imported_bytes -= res->size;
      rs->imported_count--;
    } else {
      rs->bytes -= res->size;
      rs->count--;
    }
    pthread_mutex_unlock(&rs->lock);
    /* Whatever baked this buffer in (cached graphs) must never run again:
     * an imported buffer's memory may be freed by its owner from now on. */
    if (rs->on_free) rs->on_free(rs->on_free_user, buffer);
    /* Imported memory belongs to the host: forgetting the handle is all. */
    if (!res->imported && vc_cleanup_ok(cx)) {
      CUresult r = VC_CU(cx, cuMemFree, (res->ptr));
      if (r != CUDA_SUCCESS) {
        st = vc_cu_fail(cx, err, r, "cuMemFree", NULL, NULL);
        vyre_error_prefix(err, "resident_free (the handle is released)");
      }
    }
    free(res);
  }
  if (!lost) vc_leave(cx);
  return st;
}

vyre_status vc_resident_import(vc_resident_store *rs, CUdeviceptr ptr, uint64_t size,
                               vyre_resident *out, vyre_error *err) {
  *out = 0;
  vc_resident *res = calloc(1, sizeof *res);
  if (!res)
    return vyre_error_set(err, VYRE_OUT_OF_MEMORY, 0,
                          "resident_import: no host memory for the buffer record. Fix: free "
                          "host memory");
  res->ptr = ptr;
  res->size = size;
  res->imported = 1;
  /* Counted before the handle exists, so a concurrent free of it never
   * takes the counters below zero. */
  pthread_mutex_lock(&rs->lock);
  rs->imported_bytes += size;
  rs->imported_count++;
  pthread_mutex_unlock(&rs->lock);
  if (vyre_handles_insert(&rs->table, res, out) != 0) {
    pthread_mutex_lock(&rs->lock);
    rs->imported_bytes -= size;
    rs->imported_count--;
    pthread_mutex_unlock(&rs->lock);
    free(res);
    *out = 0;
    return vyre_error_set(err, VYRE_OUT_OF_MEMORY, 0,
                          "resident_import: the handle table is full or out of host memory. "
                          "Fix: free resident buffers");
  }
  return VYRE_OK;
}

vyre_status vc_resident_size(vc_resident_store *rs, vyre_resident buffer, uint64_t *size,
                             vyre_error *err) {
  if (!size)
    return vyre_error_set(err, VYRE_INVALID_ARGUMENT, 0,
                          "resident_size: size is NULL. Fix: pass a uint64_t to receive it");
  vc_resident *res = resident_get(rs, buffer, "resident_size", err);
  if (!res) return VYRE_INVALID_HANDLE;
  *size = res->size;
  return VYRE_OK;
}

/* Check one copy against its buffer; fills the segment. */
static vyre_status check_copy(vc_resident_store *rs, const char *what, vyre_resident h, uint64_t offset,
                              const void *host, uint64_t size, vc_segment *seg,
                              vyre_error *err) {
  vc_resident *res = resident_get(rs, h, what, err);
  if (!res) return VYRE_INVALID_HANDLE;
  uint64_t end = 0;
  if (!vc_add_u64(offset, size, &end))
    return vyre_error_set(err, VYRE_INVALID_ARGUMENT, 0,
                          "%s: offset %llu + size %llu overflows 64 bits. Fix: keep offset + "
                          "size within the %llu-byte buffer",
                          what, (unsigned long long)offset, (unsigned long long)size,
                          (unsigned long long)res->size);
  if (end > res->size)
    return vyre_error_set(err, VYRE_INVALID_ARGUMENT, 0,
                          "%s: bytes [%llu, %llu) are outside the %llu-byte buffer 0x%016llx. "
                          "Fix: keep offset + size within the buffer",
                          what, (unsigned long long)offset, (unsigned long long)end,
                          (unsigned long long)res->size, (unsigned long long)h);
  if (size && !host)
    return vyre_error_set(err, VYRE_INVALID_ARGUMENT, 0,
                          "%s: host pointer is NULL for %llu bytes. Fix: pass the host memory",
                          what, (unsigned long long)size);
  seg->dev = res->ptr + offset;
  seg->host = (void *)host;
  seg->size = size;
  return VYRE_OK;
}

static vyre_status run_transfer(vc_resident_store *rs, const vc_segment *segs, uint32_t n, int up,
                                vyre_error *err) {
  vc_context *cx = rs->cx;
  vyre_status st = vc_deferred_enter(rs->deferred, err);
  if (st != VYRE_OK) return st;
  CUstream stream = NULL;
  st = vc_stream_acquire(rs->streams, &stream, err);
  if (st == VYRE_OK) {
    st = vc_transfer(rs, stream, segs, n, up, err);
    vc_stream_release(rs->streams, stream);
  }
  vc_leave(cx);
  return st;
}

vyre_status vc_resident_upload(vc_resident_store *rs, vyre_resident buffer, const void *data,
                               uint64_t size, vyre_error *err) {
  vc_resident *res = resident_get(rs, buffer, "resident_upload", err);
  if (!res) return VYRE_INVALID_HANDLE;
  if (size != res->size)
    return vyre_error_set(err, VYRE_INVALID_ARGUMENT, 0,
                          "resident_upload: %llu bytes given for a %llu-byte buffer. Fix: pass "
                          "exactly the buffer's size, or use resident_upload_at for a part",
                          (unsigned long long)size, (unsigned long long)res->size);
  vc_segment seg;
  vyre_status st = check_copy(rs, "resident_upload", buffer, 0, data, size, &seg, err);
  if (st != VYRE_OK) return st;
  return run_transfer(rs, &seg, 1, 1, err);
}

vyre_status vc_resident_upload_at(vc_resident_store *rs, vyre_resident buffer, uint64_t offset,
                                  const void *data, uint64_t size, vyre_error *err) {
  vc_segment seg;
  vyre_status st = check_copy(rs, "resident_upload_at", buffer, offset, data, size, &seg, err);
  if (st != VYRE_OK) return st;
  return run_transfer(rs, &seg, 1, 1, err);
}

vyre_status vc_resident_download(vc_resident_store *rs, vyre_resident buffer, void *dst,
                                 uint64_t capacity, vyre_error *err) {
  vc_resident *res = resident_get(rs, buffer, "resident_download", err);
  if (!res) return VYRE_INVALID_HANDLE;
  if (capacity < res->size)
    return vyre_error_set(err, VYRE_INVALID_ARGUMENT, 0,
                          "resident_download: destination holds %llu bytes, the buffer has "
                          "%llu. Fix: pass at least %llu bytes, or use resident_download_range",
                          (unsigned long long)capacity, (unsigned long long)res->size,
                          (unsigned long long)res->size);
  vc_segment seg;
  vyre_status st = check_copy(rs, "resident_download", buffer, 0, dst, res->size, &seg, err);
  if (st != VYRE_OK) return st;
  return run_transfer(rs, &seg, 1, 0, err);
}

vyre_status vc_resident_download_range(vc_resident_store *rs, vyre_resident buffer,
                                       uint64_t offset, void *dst, uint64_t size,
                                       vyre_error *err) {
  vc_segment seg;
  vyre_status st =
      check_copy(rs, "resident_download_range", buffer, offset, dst, size, &seg, err);
  if (st != VYRE_OK) return st;
  return run_transfer(rs, &seg, 1, 0, err);
}

vyre_status vc_resident_plan_copies(vc_resident_store *rs, const vyre_resident_copy *copies,
                                    uint32_t count, int upload, vc_segment **segs,
                                    vyre_error *err) {
  const char *what = upload ? "resident_upload_many" : "resident_download_many";
  *segs = NULL;
  if (count && !copies)
    return vyre_error_set(err, VYRE_INVALID_ARGUMENT, 0,
                          "%s: copies is NULL for %u copies. Fix: pass the copy array", what,
                          count);
  if (!count) return VYRE_OK;
  vc_segment *s = calloc(count, sizeof *s);
  if (!s)
    return vyre_error_set(err, VYRE_OUT_OF_MEMORY, 0,
                          "%s: no host memory for %u copy records. Fix: copy fewer at once",
                          what, count);
  for (uint32_t i = 0; i < count; i++) {
    vyre_status st = check_copy(rs, what, copies[i].buffer, copies[i].offset, copies[i].host,
                                copies[i].size, &s[i], err);
    if (st != VYRE_OK) {
      vyre_error_prefix(err, "copy %u", i);
      free(s);
      return st;
    }
  }
  *segs = s;
  return VYRE_OK;
}

vyre_status vc_resident_upload_many(vc_resident_store *rs, const vyre_resident_copy *copies,
                                    uint32_t count, vyre_error *err) {
  vc_segment *segs;
  vyre_status st = vc_resident_plan_copies(rs, copies, count, 1, &segs, err);
  if (st != VYRE_OK || !count) return st;
  st = run_transfer(rs, segs, count, 1, err);
  free(segs);
  return st;
}

vyre_status vc_resident_download_many(vc_resident_store *rs, const vyre_resident_copy *copies,
                                      uint32_t count, vyre_error *err) {
  vc_segment *segs;
  vyre_status st = vc_resident_plan_copies(rs, copies, count, 0, &segs, err);
  if (st != VYRE_OK || !count) return st;
  st = run_transfer(rs, segs, count, 0, err);
  free(segs);
  return st;
}

static void read_metrics(const void *state, vc_metric_sink *s) {
  vc_resident_store *r = (vc_resident_store *)state;
  pthread_mutex_lock(&r->lock);
  uint64_t rb = r->bytes, rc = r->count, rr = r->budget_rejects;
  uint64_t ib = r->imported_bytes, ic = r->imported_count;
  pthread_mutex_unlock(&r->lock);
  vc_metric_emit(s, "resident.buffers", rc);
  vc_metric_emit(s, "resident.bytes", rb);
  vc_metric_emit(s, "resident.budget_bytes", vc_context_profile(r->cx)->resident_budget);
  vc_metric_emit(s, "resident.budget_rejects", rr);
  vc_metric_emit(s, "resident.imported_buffers", ic);
  vc_metric_emit(s, "resident.imported_bytes", ib);
}

void vc_resident_add_metrics(vc_resident_store *r, vc_metrics *m) {
  vc_metrics_add(m, read_metrics, r);
}
