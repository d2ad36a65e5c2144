/* resident.h -- resident buffers (handles, the 90% budget, zero-fill, imported device memory) and their staged transfers. */
#ifndef VYRE_PLUGIN_CUDA_RESIDENT_H
#define VYRE_PLUGIN_CUDA_RESIDENT_H

#include <pthread.h>
#include <stdint.h>

#include "context.h"
#include "deferred.h"
#include "metrics.h"
#include "pools.h"
#include "staging.h"
#include "vyre/vyre_support.h"

/* Called when a live buffer is freed, after its handle is gone and before
 * its memory is (the owner of anything that baked its pointer in drops it). */
typedef void (*vc_resident_freed_fn)(void *user, vyre_resident handle);

/* The resident store; fields private to resident.c. */
typedef struct vc_resident_store {
  vyre_handle_table table;
  pthread_mutex_t lock;
  uint64_t bytes; /* sum of live sizes of the buffers vyre allocated */
  uint64_t count;
  uint64_t imported_bytes, imported_count; /* imported buffers: outside the budget */
  uint64_t budget_rejects;
  vc_context *cx;
  vc_staging *staging;
  vc_deferred *deferred;
  vc_mempool *devpool, *hostpool;
  vc_streampool *streams;
  vc_resident_freed_fn on_free;
  void *on_free_user;
} vc_resident_store;

/* Transfers of at most one chunk go through a pinned block of `hostpool`;
 * larger ones through the staging ring.  VYRE_OK, or the failure in err
 * (nothing to destroy then). */
vyre_status vc_resident_init(vc_resident_store *r, vc_context *cx, vc_deferred *deferred,
                             vc_mempool *devpool, vc_mempool *hostpool, vc_streampool *streams,
                             vc_staging *staging, vyre_error *err);
/* Free every buffer (context current, unless lost) and the table. */
void vc_resident_destroy(vc_resident_store *r);
/* Subscribe to frees (one subscriber; create time only). */
void vc_resident_on_free(vc_resident_store *r, vc_resident_freed_fn fn, void *user);
/* Add resident.{buffers, bytes, budget_bytes, budget_rejects,
 * imported_buffers, imported_bytes}. */
void vc_resident_add_metrics(vc_resident_store *r, vc_metrics *m);

/* A live handle's device pointer and size; VYRE_INVALID_HANDLE (naming
 * `what`) otherwise.  Thread-safe (the handle is used by one thread at a
 * time, vyre.h). */
vyre_status vc_resident_lookup(vc_resident_store *r, vyre_resident h, const char *what,
                               CUdeviceptr *ptr, uint64_t *size, vyre_error *err);
/* Copy segments between host and device on `stream`, staged through one
 * pinned pool block (at most one chunk in all) or the staging ring's
 * pipelined chunks, then synchronise the stream once.
 * to_device: 1 upload, 0 download.  Context current. */
vyre_status vc_transfer(vc_resident_store *r, CUstream stream, const vc_segment *segs,
                        uint32_t count, int to_device, vyre_error *err);
/* Check copies against their buffers and build segments (caller frees
 * *segs).  Nothing is copied. */
vyre_status vc_resident_plan_copies(vc_resident_store *r, const vyre_resident_copy *copies,
                                    uint32_t count, int upload, vc_segment **segs,
                                    vyre_error *err);

/*
 * Wrap `size` bytes of device memory at `ptr` that the host owns as a
 * resident handle (*out), without copying: the caller (interop.c) has
 * checked the range.  The buffer is not counted against the resident
 * budget; resident_free and destroy forget it and never free the memory.
 * Thread-safe; needs no current context.
 */
vyre_status vc_resident_import(vc_resident_store *r, CUdeviceptr ptr, uint64_t size,
                               vyre_resident *out, vyre_error *err);

/* The vtable's resident entry points (vyre.h), each thread-safe as vyre.h says. */
vyre_status vc_resident_alloc(vc_resident_store *r, uint64_t size, vyre_resident *out,
                              vyre_error *err);
vyre_status vc_resident_free(vc_resident_store *r, vyre_resident buffer, vyre_error *err);
vyre_status vc_resident_size(vc_resident_store *r, vyre_resident buffer, uint64_t *size,
                             vyre_error *err);
vyre_status vc_resident_upload(vc_resident_store *r, vyre_resident buffer, const void *data,
                               uint64_t size, vyre_error *err);
vyre_status vc_resident_upload_at(vc_resident_store *r, vyre_resident buffer, uint64_t offset,
                                  const void *data, uint64_t size, vyre_error *err);
vyre_status vc_resident_download(vc_resident_store *r, vyre_resident buffer, void *dst,
                                 uint64_t capacity, vyre_error *err);
vyre_status vc_resident_download_range(vc_resident_store *r, vyre_resident buffer,
                                       uint64_t offset, void *dst, uint64_t size,
                                       vyre_error *err);
vyre_status vc_resident_upload_many(vc_resident_store *r, const vyre_resident_copy *copies,
                                    uint32_t count, vyre_error *err);
vyre_status vc_resident_download_many(vc_resident_store *r, const vyre_resident_copy *copies,
                                      uint32_t count, vyre_error *err);

#endif /* VYRE_PLUGIN_CUDA_RESIDENT_H */
