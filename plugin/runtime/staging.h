/* staging.h -- the staging ring: pinned chunks the instance keeps, and the copy threads that fill and drain them, for host transfers larger than one chunk. */
#ifndef VYRE_PLUGIN_CUDA_STAGING_H
#define VYRE_PLUGIN_CUDA_STAGING_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>

#include "context.h"
#include "metrics.h"
#include "pools.h"

#define VC_STAGING_MAX_CHUNKS 64
#define VC_STAGING_MAX_THREADS 64

/* One host<->device copy of a transfer. */
typedef struct vc_segment {
  CUdeviceptr dev;
  void *host;
  uint64_t size;
} vc_segment;

/* One host-side memcpy of a transfer (a granule of a chunk's piece):
 * whoever claims it copies it. */
typedef struct vc_granule {
  uint8_t *dst;
  const uint8_t *src;
  size_t len;
  uint32_t slot; /* the chunk use it belongs to */
} vc_granule;

/* The copy threads (fields private to staging.c).  A transfer publishes
 * its granules; the workers and the transfer's own thread claim them in
 * order with one compare-and-swap each, up to `limit` (the granules whose
 * chunk is ready), so no thread waits for another's part of a chunk and
 * a slow or preempted thread holds up one granule, not a chunk. */
typedef struct vc_copy_crew {
  int init;
  pthread_mutex_t lock;
  pthread_cond_t go;
  pthread_t tid[VC_STAGING_MAX_THREADS];
  uint32_t started;         /* workers running (threads - 1 once started) */
  _Atomic uint64_t next;    /* transfer generation << 32 | next granule to claim */
  _Atomic uint32_t limit;   /* granules below it may be copied now */
  _Atomic uint32_t count;   /* granules of the transfer */
  _Atomic uint32_t copied;  /* granules of the transfer copied */
  _Atomic int stop;
  _Atomic uint64_t worker_copies; /* granules the workers copied (metric) */
  uint32_t sleepers;        /* workers blocked on `go` (under lock) */
  const vc_granule *granules; /* the transfer's; read only after a claim */
  _Atomic uint32_t *left;     /* per chunk use: granules not yet copied */
} vc_copy_crew;

/* The ring (fields private to staging.c).  One transfer uses it at a
 * time (`lock` is held for the whole transfer). */
typedef struct vc_staging {
  pthread_mutex_t lock;
  vc_context *cx;
  vc_streampool *streams;
  vc_mempool *hostpool; /* trimmed when the ring cannot be allocated */
  uint64_t chunk;   /* bytes per chunk */
  uint32_t nchunks; /* ring depth */
  uint32_t threads; /* copy threads, the transfer's own included */
  int ready;        /* chunks and events allocated (lazily, once) */
  uint32_t cursor;  /* the chunk the next transfer starts with */
  void *base;       /* one cuMemHostAlloc of nchunks * chunk bytes */
  void *buf[VC_STAGING_MAX_CHUNKS];
  CUevent ev[VC_STAGING_MAX_CHUNKS];
  int busy[VC_STAGING_MAX_CHUNKS]; /* ev[k] was recorded after buf[k]'s last copy */
  vc_copy_crew crew;
  _Atomic uint64_t transfers, chunk_copies, bytes_up, bytes_down;
} vc_staging;

/*
 * A ring of `nchunks` (2..VC_STAGING_MAX_CHUNKS) pinned chunks of `chunk`
 * bytes and `threads` (1..VC_STAGING_MAX_THREADS) copy threads, counting
 * the caller's.  Nothing is allocated or started here: the chunks and
 * their events are allocated by the first transfer (and kept until
 * destroy), the workers are started then too.  When the pinned memory
 * cannot be had, the pinned pool `hostpool` is trimmed and it is tried
 * once more.  VYRE_OK, or the failure in err (s is left zeroed, which
 * vc_staging_destroy accepts).
 */
vyre_status vc_staging_init(vc_staging *s, vc_context *cx, vc_streampool *streams,
                            vc_mempool *hostpool, uint64_t chunk, uint32_t nchunks,
                            uint32_t threads, vyre_error *err);
/* Join the workers, free the chunks (context current, unless lost) and
 * events.  Accepts a zeroed, never initialised ring. */
void vc_staging_destroy(vc_staging *s);
/* Give the chunks back to the driver (shutdown); the next large transfer
 * allocates them again.  Context current.  Thread-safe. */
void vc_staging_trim(vc_staging *s);
/* Bytes above which a copy goes through the ring (1 MiB, or the chunk
 * size when smaller). */
uint64_t vc_staging_threshold(const vc_staging *s);
/* Bytes per chunk. */
uint64_t vc_staging_chunk(const vc_staging *s);
/* Add staging.{chunk_bytes, chunks, pinned_bytes, threads, transfers,
 * chunk_copies, split_copies, bytes_up, bytes_down}. */
void vc_staging_add_metrics(vc_staging *s, vc_metrics *m);

/*
 * Upload the segments on `stream`: each chunk is filled from host memory
 * (by the copy threads) while the device copies the previous ones.  On
 * VYRE_OK every host byte has been read (the caller may reuse its
 * memory) and the copies are enqueued, not necessarily done.  On failure
 * the stream has been synchronised (nothing still reads the ring) and
 * *err names the call with a Fix.  Context current.  Thread-safe
 * (transfers take turns on the ring).
 */
vyre_status vc_staging_upload(vc_staging *s, CUstream stream, const vc_segment *segs,
                              uint32_t count, vyre_error *err);
/*
 * Download the segments on `stream` (after the work already on it): the
 * device fills chunks ahead while the copy threads drain the older ones
 * into host memory.  Returns when every byte is in host memory.  On
 * failure the stream has been synchronised, the host memory holds a
 * prefix of the data, and *err says what failed.  Context current.
 * Thread-safe.
 */
vyre_status vc_staging_download(vc_staging *s, CUstream stream, const vc_segment *segs,
                                uint32_t count, vyre_error *err);

/*
 * Upload (up = 1) or download the segments as vc_staging_upload or
 * vc_staging_download do, but in pieces of up to `piece_bytes` (0: as
 * large as a chunk), whatever the transfer's size: the chunked dispatch
 * (split.c) moves each of its chunks in one piece, so that its uploads
 * and downloads take alternate chunks of the ring.
 */
vyre_status vc_staging_move(vc_staging *s, CUstream stream, const vc_segment *segs,
                            uint32_t count, int up, uint64_t piece_bytes, vyre_error *err);

#endif /* VYRE_PLUGIN_CUDA_STAGING_H */
