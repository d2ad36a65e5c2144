/* staging.h -- the staging ring: pinned chunks the instance keeps, filled and drained by the copy threads (crew.h), for host transfers above 1 MiB and the chunked dispatch's steps. */
#ifndef VYRE_PLUGIN_CUDA_STAGING_H
#define VYRE_PLUGIN_CUDA_STAGING_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>

#include "context.h"
#include "crew.h"
#include "metrics.h"
#include "pools.h"

#define VC_STAGING_MAX_CHUNKS 64

/* One host<->device copy of a transfer. */
typedef struct vc_segment {
  CUdeviceptr dev;
  void *host;
  uint64_t size;
} vc_segment;

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

/* Ranges of one step of vc_staging_steps. */
#define VC_STEP_MAX_SEGS 16
typedef struct vc_step_io {
  vc_segment in[VC_STEP_MAX_SEGS];  /* host -> device before the step's work */
  vc_segment out[VC_STEP_MAX_SEGS]; /* device -> host after it */
  uint32_t nin, nout;
} vc_step_io;
/* Fill step c's ranges (their bytes together at most one chunk). */
typedef void (*vc_step_describe_fn)(void *user, uint32_t step, vc_step_io *io);
/* Enqueue step c's device work on `stream`, after its inputs' copies. */
typedef vyre_status (*vc_step_device_fn)(void *user, uint32_t step, CUstream stream,
                                         vyre_error *err);

/*
 * A pipeline of `nsteps` steps over the ring, holding it throughout:
 * step c takes one ring chunk for its inputs and outputs and runs on
 * streams[c & 1]: its inputs are copied into the chunk by the copy
 * threads, then its device side is enqueued (the inputs' copies, `device`,
 * the outputs' copies into the chunk, the chunk's event), and once that
 * event is done the copy threads copy its outputs out, which frees the
 * chunk for step c + nchunks.  The threads fill later steps' inputs while
 * they drain earlier steps' outputs, and the device's uploads, work and
 * readbacks of neighbouring steps overlap on the two streams.  Returns
 * when every output is in host memory.  On failure both streams have
 * been synchronised and *err says what failed.  Context current.
 * Thread-safe (transfers take turns on the ring).
 */
vyre_status vc_staging_steps(vc_staging *s, const CUstream streams[2], uint32_t nsteps,
                             vc_step_describe_fn describe, vc_step_device_fn device, void *user,
                             vyre_error *err);

#endif /* VYRE_PLUGIN_CUDA_STAGING_H */
