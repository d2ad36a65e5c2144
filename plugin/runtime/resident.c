/* resident.c -- resident buffers: handles, the 90% budget, zero-fill, and pipelined pinned-staged transfers. */
#include <stdlib.h>
#include <string.h>

#include "cuda_internal.h"

#define BUDGET_NUM 9u
#define BUDGET_DEN 10u

void vc_resident_init(vc_backend *b) {
  vyre_handles_init(&b->resident.table, VYRE_HANDLE_RESIDENT);
  pthread_mutex_init(&b->resident.lock, NULL);
  b->resident.bytes = 0;
  b->resident.count = 0;
}

void vc_resident_destroy(vc_backend *b) {
  vc_resident *r;
  while ((r = vyre_handles_pop_any(&b->resident.table)) != NULL) {
    if (vc_cleanup_ok(b)) {
      CUresult cr = VC_CU(b, cuMemFree, (r->ptr));
      if (cr != CUDA_SUCCESS) vc_cu_note(b, cr, "cuMemFree");
    }
    free(r);
  }
  vyre_handles_destroy(&b->resident.table);
  pthread_mutex_destroy(&b->resident.lock);
}

vc_resident *vc_resident_get(vc_backend *b, vyre_resident h, const char *what, vyre_error *err) {
  vc_resident *r = vyre_handles_get(&b->resident.table, h);
  if (!r)
    vyre_error_set(err, VYRE_INVALID_HANDLE, 0,
                   "%s: resident handle 0x%016llx is not a live buffer of this backend (freed, "
                   "never allocated, or from another instance). Fix: pass a handle returned by "
                   "resident_alloc on this backend and not yet freed",
                   what, (unsigned long long)h);
  return r;
}

/* ------------------------------------------------------------------ */
/* Transfers                                                           */
/* ------------------------------------------------------------------ */
typedef struct piece {
  void *host;
  uint64_t off; /* in its staging buffer */
  uint64_t len;
} piece;

typedef struct stager {
  vc_backend *b;
  CUstream stream;
  int up;
  vc_block buf[2];
  CUevent ev[2];
  uint64_t fill[2];         /* bytes used in buf[k] by the batch being built */
  uint32_t first[2], end[2]; /* pieces [first, end) waiting in buf[k] (downloads) */
  int busy[2];               /* an event was recorded after buf[k]'s copies */
  piece *pieces;
  uint32_t npieces;
  int enqueued;
} stager;

/* Wait until buffer k's copies are done and, for downloads, copy its
 * pieces out to the host. */
static vyre_status drain(stager *s, int k, vyre_error *err) {
  if (s->busy[k]) {
    CUresult r = VC_CU(s->b, cuEventSynchronize, (s->ev[k]));
    if (r != CUDA_SUCCESS) return vc_cu_fail(s->b, err, r, "cuEventSynchronize", NULL, NULL);
    s->busy[k] = 0;
  }
  if (!s->up) {
    uint8_t *base = (uint8_t *)(uintptr_t)s->buf[k].ptr;
    for (uint32_t i = s->first[k]; i < s->end[k]; i++)
      memcpy(s->pieces[i].host, base + s->pieces[i].off, s->pieces[i].len);
  }
  s->first[k] = s->end[k] = s->npieces;
  s->fill[k] = 0;
  return VYRE_OK;
}

/* Close buffer k's batch: record its event so the buffer can be reused
 * once the copies in it are done. */
static vyre_status seal(stager *s, int k, vyre_error *err) {
  if (!s->fill[k] || !s->ev[k]) return VYRE_OK;
  CUresult r = VC_CU(s->b, cuEventRecord, (s->ev[k], s->stream));
  if (r != CUDA_SUCCESS) return vc_cu_fail(s->b, err, r, "cuEventRecord", NULL, NULL);
  s->busy[k] = 1;
  return VYRE_OK;
}

vyre_status vc_transfer(vc_backend *b, CUstream stream, const vc_segment *segs, uint32_t count,
                        int to_device, vyre_error *err) {
  uint64_t total = 0, npieces = 0;
  uint64_t chunk = b->staging_chunk ? b->staging_chunk : (8u << 20);
  for (uint32_t i = 0; i < count; i++) {
    if (!vc_add_u64(total, segs[i].size, &total))
      return vyre_error_set(err, VYRE_LIMIT, 0,
                            "transfer: total size overflows 64 bits. Fix: split the transfer");
    npieces += segs[i].size / chunk + 2;
  }
  if (total == 0) return VYRE_OK;
  uint64_t cs = total < chunk ? total : chunk;
  int nbuf = total > cs ? 2 : 1;

  stager s;
  memset(&s, 0, sizeof s);
  s.b = b;
  s.stream = stream;
  s.up = to_device;
  vyre_status st = VYRE_OK;
  CUresult r;
  if (npieces > UINT32_MAX / 2 || !(s.pieces = malloc((size_t)npieces * sizeof *s.pieces))) {
    return vyre_error_set(err, VYRE_OUT_OF_MEMORY, 0,
                          "transfer: no host memory for %llu staging records. Fix: transfer "
                          "fewer ranges at once",
                          (unsigned long long)npieces);
  }
  for (int k = 0; k < nbuf; k++) {
    st = vc_mempool_acquire(&b->hostpool, cs, &s.buf[k], err);
    if (st != VYRE_OK) goto fail_buffers;
    if (nbuf == 2) {
      st = vc_event_acquire(b, 0, &s.ev[k], err);
      if (st != VYRE_OK) goto fail_buffers;
    }
  }

  int k = 0;
  for (uint32_t i = 0; i < count; i++) {
    uint64_t done = 0;
    while (done < segs[i].size) {
      if (s.fill[k] == cs) {
        /* Buffer k is full: seal it, move to the other one, and make sure
         * the other one's previous batch has finished. */
        st = seal(&s, k, err);
        if (st != VYRE_OK) goto fail_enqueued;
        k = (k + 1) % nbuf;
        st = drain(&s, k, err);
        if (st != VYRE_OK) goto fail_enqueued;
      }
      uint64_t len = segs[i].size - done;
      if (len > cs - s.fill[k]) len = cs - s.fill[k];
      uint8_t *stage = (uint8_t *)(uintptr_t)s.buf[k].ptr + s.fill[k];
      uint8_t *host = (uint8_t *)segs[i].host + done;
      CUdeviceptr dev = segs[i].dev + done;
      if (to_device) {
        memcpy(stage, host, (size_t)len);
        r = VC_CU(b, cuMemcpyHtoDAsync, (dev, stage, (size_t)len, stream));
        if (r != CUDA_SUCCESS) {
          st = vc_cu_fail(b, err, r, "cuMemcpyHtoDAsync", NULL, NULL);
          goto fail_enqueued;
        }
      } else {
        r = VC_CU(b, cuMemcpyDtoHAsync, (stage, dev, (size_t)len, stream));
        if (r != CUDA_SUCCESS) {
          st = vc_cu_fail(b, err, r, "cuMemcpyDtoHAsync", NULL, NULL);
          goto fail_enqueued;
        }
        if (s.first[k] == s.end[k]) s.first[k] = s.npieces;
        s.pieces[s.npieces].host = host;
        s.pieces[s.npieces].off = s.fill[k];
        s.pieces[s.npieces].len = len;
        s.npieces++;
        s.end[k] = s.npieces;
      }
      s.enqueued = 1;
      s.fill[k] += len;
      done += len;
    }
  }
  /* One synchronisation for the whole transfer. */
  r = VC_CU(b, cuStreamSynchronize, (stream));
  if (r != CUDA_SUCCESS) {
    st = vc_cu_fail(b, err, r, "cuStreamSynchronize", NULL, NULL);
    s.enqueued = 0;
    goto fail_buffers;
  }
  s.busy[0] = s.busy[1] = 0;
  if (!to_device) {
    /* Copy out in issue order: the older batch first. */
    int older = nbuf == 2 && s.first[k ^ 1] < s.first[k] ? k ^ 1 : k;
    drain(&s, older, err);
    if (nbuf == 2) drain(&s, older ^ 1, err);
  }
  goto done;

fail_enqueued:
  if (s.enqueued) {
    /* The staging buffers go back to the pool: nothing may still read or
     * write them. */
    CUresult sr = VC_CU(b, cuStreamSynchronize, (stream));
    if (sr != CUDA_SUCCESS) vc_cu_note(b, sr, "cuStreamSynchronize");
  }
fail_buffers:
done:
  for (int j = 0; j < 2; j++) {
    vc_event_release(b, 0, s.ev[j]);
    vc_mempool_release(&b->hostpool, &s.buf[j]);
  }
  free(s.pieces);
  return st;
}

/* ------------------------------------------------------------------ */
/* Resident entry points                                               */
/* ------------------------------------------------------------------ */
/* Bytes resident buffers may hold in total now: 90% of the device,
 * and no more new bytes than 90% of what is free right now. */
static uint64_t live_budget(uint64_t total, uint64_t free_now, uint64_t resident) {
  uint64_t cap = (uint64_t)((unsigned __int128)total * BUDGET_NUM / BUDGET_DEN);
  if (resident >= cap) return resident;
  uint64_t headroom = cap - resident;
  uint64_t live = (uint64_t)((unsigned __int128)free_now * BUDGET_NUM / BUDGET_DEN);
  return resident + (headroom < live ? headroom : live);
}

vyre_status vc_resident_alloc(vyre_backend *self, uint64_t size, vyre_resident *out,
                              vyre_error *err) {
  vc_backend *b = vc_self(self);
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
  vyre_status st = vc_enter(b, err);
  if (st != VYRE_OK) return st;

  vc_resident *res = NULL;
  CUstream stream = NULL;
  uint64_t free_now = 0, total = 0;
  int reserved = 0;
  for (int attempt = 0; attempt < 2; attempt++) {
    st = vc_context_memory(b, &free_now, &total, err);
    if (st != VYRE_OK) goto fail;
    if (b->profile.total_memory) total = b->profile.total_memory;
    pthread_mutex_lock(&b->resident.lock);
    uint64_t budget = live_budget(total, free_now, b->resident.bytes);
    uint64_t want;
    int fits = vc_add_u64(b->resident.bytes, size, &want) && want <= budget;
    if (fits) {
      b->resident.bytes = want;
      b->resident.count++;
      reserved = 1;
    }
    uint64_t available = budget - b->resident.bytes;
    uint64_t resident_now = b->resident.bytes;
    pthread_mutex_unlock(&b->resident.lock);
    if (fits) break;
    if (attempt == 0) {
      /* Memory cached by the dispatch pool counts against free memory;
       * give it back and look again. */
      vc_mempool_trim(&b->devpool);
      continue;
    }
    pthread_mutex_lock(&b->resident.lock);
    b->resident.budget_rejects++;
    pthread_mutex_unlock(&b->resident.lock);
    st = vyre_error_set(err, VYRE_OUT_OF_MEMORY, 0,
                        "resident_alloc: %llu bytes requested, %llu available under the "
                        "resident budget (90%% of %llu device bytes, %llu free now, %llu already "
                        "resident). Fix: free resident buffers or allocate less",
                        (unsigned long long)size, (unsigned long long)available,
                        (unsigned long long)total, (unsigned long long)free_now,
                        (unsigned long long)resident_now);
    goto fail;
  }

  res = calloc(1, sizeof *res);
  if (!res) {
    st = vyre_error_set(err, VYRE_OUT_OF_MEMORY, 0,
                        "resident_alloc: no host memory for the buffer record. Fix: free host "
                        "memory");
    goto fail;
  }
  res->size = size;
  CUresult r = VC_CU(b, cuMemAlloc, (&res->ptr, (size_t)size));
  if (r == CUDA_ERROR_OUT_OF_MEMORY) {
    vc_mempool_trim(&b->devpool);
    r = VC_CU(b, cuMemAlloc, (&res->ptr, (size_t)size));
  }
  if (r != CUDA_SUCCESS) {
    res->ptr = 0;
    st = vc_cu_fail(b, err, r, "cuMemAlloc", NULL, NULL);
    vyre_error_prefix(err, "resident_alloc of %llu bytes", (unsigned long long)size);
    goto fail;
  }
  /* New buffers are zero-filled (vyre.h). */
  st = vc_stream_acquire(b, &stream, err);
  if (st != VYRE_OK) goto fail;
  r = VC_CU(b, cuMemsetD8Async, (res->ptr, 0, (size_t)size, stream));
  if (r != CUDA_SUCCESS) {
    st = vc_cu_fail(b, err, r, "cuMemsetD8Async", NULL, NULL);
    goto fail;
  }
  r = VC_CU(b, cuStreamSynchronize, (stream));
  if (r != CUDA_SUCCESS) {
    st = vc_cu_fail(b, err, r, "cuStreamSynchronize", NULL, NULL);
    goto fail;
  }
  vc_stream_release(b, stream);
  stream = NULL;
  if (vyre_handles_insert(&b->resident.table, res, out) != 0) {
    st = vyre_error_set(err, VYRE_OUT_OF_MEMORY, 0,
                        "resident_alloc: the handle table is full or out of host memory. Fix: "
                        "free resident buffers");
    goto fail;
  }
  vc_leave(b);
  return VYRE_OK;

fail:
  if (stream) {
    CUresult sr = VC_CU(b, cuStreamSynchronize, (stream));
    if (sr != CUDA_SUCCESS) vc_cu_note(b, sr, "cuStreamSynchronize");
    vc_stream_release(b, stream);
  }
  if (res) {
    if (res->ptr) {
      CUresult fr = VC_CU(b, cuMemFree, (res->ptr));
      if (fr != CUDA_SUCCESS) vc_cu_note(b, fr, "cuMemFree");
    }
    free(res);
  }
  if (reserved) {
    pthread_mutex_lock(&b->resident.lock);
    b->resident.bytes -= size;
    b->resident.count--;
    pthread_mutex_unlock(&b->resident.lock);
  }
  *out = 0;
  vc_leave(b);
  return st;
}

vyre_status vc_resident_free(vyre_backend *self, vyre_resident buffer, vyre_error *err) {
  vc_backend *b = vc_self(self);
  if (!vyre_handles_get(&b->resident.table, buffer))
    return vyre_error_set(err, VYRE_INVALID_HANDLE, 0,
                          "resident_free: handle 0x%016llx is not a live buffer of this backend "
                          "(already freed, never allocated, or from another instance). Fix: "
                          "free each handle once, on the backend that made it",
                          (unsigned long long)buffer);
  /* On a lost instance the handle still goes away; its memory goes with
   * the context.  Otherwise a context that cannot be made current leaves
   * everything as it was. */
  int lost = vc_is_lost(b);
  if (!lost) {
    CUresult r = VC_CU(b, cuCtxPushCurrent, (b->ctx));
    if (r != CUDA_SUCCESS) {
      vyre_status st = vc_cu_fail(b, err, r, "cuCtxPushCurrent", NULL, NULL);
      vyre_error_prefix(err, "resident_free (the handle is still live)");
      return st;
    }
  }
  vc_resident *res = vyre_handles_remove(&b->resident.table, buffer);
  vyre_status st = VYRE_OK;
  if (res) {
    pthread_mutex_lock(&b->resident.lock);
    b->resident.bytes -= res->size;
    b->resident.count--;
    pthread_mutex_unlock(&b->resident.lock);
    /* Graphs captured over this buffer must never replay. */
    vc_graphs_forget_resident(b, buffer);
    if (vc_cleanup_ok(b)) {
      CUresult r = VC_CU(b, cuMemFree, (res->ptr));
      if (r != CUDA_SUCCESS) {
        st = vc_cu_fail(b, err, r, "cuMemFree", NULL, NULL);
        vyre_error_prefix(err, "resident_free (the handle is released)");
      }
    }
    free(res);
  }
  if (!lost) vc_leave(b);
  return st;
}

vyre_status vc_resident_size(vyre_backend *self, vyre_resident buffer, uint64_t *size,
                             vyre_error *err) {
  vc_backend *b = vc_self(self);
  if (!size)
    return vyre_error_set(err, VYRE_INVALID_ARGUMENT, 0,
                          "resident_size: size is NULL. Fix: pass a uint64_t to receive it");
  vc_resident *res = vc_resident_get(b, buffer, "resident_size", err);
  if (!res) return VYRE_INVALID_HANDLE;
  *size = res->size;
  return VYRE_OK;
}

/* Check one copy against its buffer; fills the segment. */
static vyre_status check_copy(vc_backend *b, const char *what, vyre_resident h, uint64_t offset,
                              const void *host, uint64_t size, vc_segment *seg,
                              vyre_error *err) {
  vc_resident *res = vc_resident_get(b, h, what, err);
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

static vyre_status run_transfer(vc_backend *b, const vc_segment *segs, uint32_t n, int up,
                                vyre_error *err) {
  vyre_status st = vc_enter(b, err);
  if (st != VYRE_OK) return st;
  CUstream stream = NULL;
  st = vc_stream_acquire(b, &stream, err);
  if (st == VYRE_OK) {
    st = vc_transfer(b, stream, segs, n, up, err);
    vc_stream_release(b, stream);
  }
  vc_leave(b);
  return st;
}

vyre_status vc_resident_upload(vyre_backend *self, vyre_resident buffer, const void *data,
                               uint64_t size, vyre_error *err) {
  vc_backend *b = vc_self(self);
  vc_resident *res = vc_resident_get(b, buffer, "resident_upload", err);
  if (!res) return VYRE_INVALID_HANDLE;
  if (size != res->size)
    return vyre_error_set(err, VYRE_INVALID_ARGUMENT, 0,
                          "resident_upload: %llu bytes given for a %llu-byte buffer. Fix: pass "
                          "exactly the buffer's size, or use resident_upload_at for a part",
                          (unsigned long long)size, (unsigned long long)res->size);
  vc_segment seg;
  vyre_status st = check_copy(b, "resident_upload", buffer, 0, data, size, &seg, err);
  if (st != VYRE_OK) return st;
  return run_transfer(b, &seg, 1, 1, err);
}

vyre_status vc_resident_upload_at(vyre_backend *self, vyre_resident buffer, uint64_t offset,
                                  const void *data, uint64_t size, vyre_error *err) {
  vc_backend *b = vc_self(self);
  vc_segment seg;
  vyre_status st = check_copy(b, "resident_upload_at", buffer, offset, data, size, &seg, err);
  if (st != VYRE_OK) return st;
  return run_transfer(b, &seg, 1, 1, err);
}

vyre_status vc_resident_download(vyre_backend *self, vyre_resident buffer, void *dst,
                                 uint64_t capacity, vyre_error *err) {
  vc_backend *b = vc_self(self);
  vc_resident *res = vc_resident_get(b, buffer, "resident_download", err);
  if (!res) return VYRE_INVALID_HANDLE;
  if (capacity < res->size)
    return vyre_error_set(err, VYRE_INVALID_ARGUMENT, 0,
                          "resident_download: destination holds %llu bytes, the buffer has "
                          "%llu. Fix: pass at least %llu bytes, or use resident_download_range",
                          (unsigned long long)capacity, (unsigned long long)res->size,
                          (unsigned long long)res->size);
  vc_segment seg;
  vyre_status st = check_copy(b, "resident_download", buffer, 0, dst, res->size, &seg, err);
  if (st != VYRE_OK) return st;
  return run_transfer(b, &seg, 1, 0, err);
}

vyre_status vc_resident_download_range(vyre_backend *self, vyre_resident buffer,
                                       uint64_t offset, void *dst, uint64_t size,
                                       vyre_error *err) {
  vc_backend *b = vc_self(self);
  vc_segment seg;
  vyre_status st =
      check_copy(b, "resident_download_range", buffer, offset, dst, size, &seg, err);
  if (st != VYRE_OK) return st;
  return run_transfer(b, &seg, 1, 0, err);
}

vyre_status vc_resident_plan_copies(vc_backend *b, const vyre_resident_copy *copies,
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
    vyre_status st = check_copy(b, what, copies[i].buffer, copies[i].offset, copies[i].host,
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

vyre_status vc_resident_upload_many(vyre_backend *self, const vyre_resident_copy *copies,
                                    uint32_t count, vyre_error *err) {
  vc_backend *b = vc_self(self);
  vc_segment *segs;
  vyre_status st = vc_resident_plan_copies(b, copies, count, 1, &segs, err);
  if (st != VYRE_OK || !count) return st;
  st = run_transfer(b, segs, count, 1, err);
  free(segs);
  return st;
}

vyre_status vc_resident_download_many(vyre_backend *self, const vyre_resident_copy *copies,
                                      uint32_t count, vyre_error *err) {
  vc_backend *b = vc_self(self);
  vc_segment *segs;
  vyre_status st = vc_resident_plan_copies(b, copies, count, 0, &segs, err);
  if (st != VYRE_OK || !count) return st;
  st = run_transfer(b, segs, count, 0, err);
  free(segs);
  return st;
}
