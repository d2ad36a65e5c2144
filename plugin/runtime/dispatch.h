/* dispatch.h -- host dispatch: a job stages inputs, zeroes outputs, launches, reads back; dispatch and dispatch_into. */
#ifndef VYRE_PLUGIN_CUDA_DISPATCH_H
#define VYRE_PLUGIN_CUDA_DISPATCH_H

#include <stdatomic.h>
#include <stdint.h>

#include "context.h"
#include "deferred.h"
#include "hoststream.h"
#include "launch.h"
#include "pipeline.h"
#include "pools.h"
#include "staging.h"

/* The host dispatch module's state: what its jobs use (fields private to
 * dispatch.c). */
typedef struct vc_dispatcher {
  vc_context *cx;
  vc_mempool *devpool, *hostpool;
  vc_streampool *streams;
  vc_launcher *lx;
  vc_pipelines *pipelines;
  vc_deferred *deferred;
  vc_staging *staging;
  uint64_t split_bytes; /* chunked dispatch: bytes per chunk, 0 = off (split.h) */
  _Atomic uint64_t split_dispatches, split_chunks;
} vc_dispatcher;

/* A host dispatch in flight (sync dispatch, dispatch_into, async): opaque. */
typedef struct vc_job vc_job;

/* split_bytes: about this many bytes of input and output per chunk of a
 * chunked dispatch (VYRE_CUDA_SPLIT_CHUNK; 0 turns it off). */
void vc_dispatcher_init(vc_dispatcher *d, vc_context *cx, vc_mempool *devpool,
                        vc_mempool *hostpool, vc_streampool *streams, vc_launcher *lx,
                        vc_pipelines *pipelines, vc_deferred *deferred, vc_staging *staging,
                        uint64_t split_bytes);
/* Add dispatch.{split, split_chunks}: host dispatches run in chunks, and
 * their chunks. */
void vc_dispatcher_add_metrics(vc_dispatcher *d, vc_metrics *m);

/* vtable->dispatch and ->dispatch_into (vyre.h).  Thread-safe. */
vyre_status vc_dispatch(vc_dispatcher *d, const vyre_program_ref *program,
                        const vyre_input *inputs, uint32_t input_count,
                        const vyre_dispatch_options *options, vyre_outputs **out,
                        vyre_timing *timing, vyre_error *err);
vyre_status vc_dispatch_into(vc_dispatcher *d, const vyre_program_ref *program,
                             const vyre_input *inputs, uint32_t input_count,
                             const vyre_dispatch_options *options, vyre_output_slot *outputs,
                             uint32_t output_count, vyre_timing *timing, vyre_error *err);

/*
 * The job API the async module builds on.
 * begin: the prologue of every host dispatch: the caller's options (their
 * extension chain included: a vyre_cuda_stream orders the job on the
 * host's stream) and timing (may be NULL) checked and read, the context
 * entered (deferred
 * work reaped), plan + geometry for these inputs (t_entry is the call's
 * entry time).  On VYRE_OK the context is current (vc_leave when done) and
 * *out owns the plan; on failure nothing is held.  The rest run with the
 * context current.
 * enqueue: put the whole dispatch on a stream (inputs are copied into
 * pinned memory before it returns: a pool block each, or the staging
 * ring's chunks for an input larger than one chunk), after the host
 * stream's work and
 * before its later work when one was chained; on failure vc_job_abort
 * the job.
 * finish: wait, check traps, produce outputs (a new vyre_outputs in *out,
 * or the caller's slots; an output larger than one chunk is read back
 * now, through the staging ring, straight into its destination) and
 * timing; the job is freed or deferred.
 * poll: is the work done? (a failed query other than sticky counts as
 * done: finish reports what happened).
 * abort: make the stream idle as far as possible, then free.
 * defer: hand the job to the deferred-release list.
 */
vyre_status vc_job_begin(vc_dispatcher *d, const vyre_program_ref *ref,
                         const vyre_input *inputs, uint32_t input_count,
                         const vyre_dispatch_options *options, vyre_timing *timing,
                         uint64_t t_entry, vc_job **out, vyre_error *err);
vyre_status vc_job_enqueue(vc_job *j, const vyre_input *inputs, int timed, vyre_error *err);
vyre_status vc_job_finish(vc_job *j, vyre_outputs **out, vyre_output_slot *slots,
                          vyre_timing *timing, vyre_error *err);
vyre_status vc_job_poll(vc_job *j, int *ready, vyre_error *err);
void vc_job_abort(vc_job *j);
void vc_job_free(vc_job *j);
void vc_job_defer(vc_job *j);

#endif /* VYRE_PLUGIN_CUDA_DISPATCH_H */
