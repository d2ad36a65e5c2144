/* hoststream.h -- the host's CUstream (vyre_cuda_stream chained on a call's options) and the event joins that order a call's work on it. */
#ifndef VYRE_PLUGIN_CUDA_HOSTSTREAM_H
#define VYRE_PLUGIN_CUDA_HOSTSTREAM_H

#include "context.h"
#include "pools.h"
#include "vyre/vyre.h"

/* The host's stream a call is ordered on (vyre_cuda.h, STREAM ORDER). */
typedef struct vc_host_stream {
  int set;         /* a vyre_cuda_stream was chained */
  CUstream stream; /* NULL: the legacy default stream */
} vc_host_stream;

/*
 * Walk the extension chain of `o` (NULL, or options whose struct_size
 * stops before `next`: no chain): every entry must have a struct_size
 * that covers its head (and, for a type this plugin knows, its whole
 * struct) and a type other than 0, and the chain must end within 64
 * entries; types this plugin does not know are skipped.  *out receives
 * the one vyre_cuda_stream (two are refused).  `what` names the call in
 * errors (VYRE_INVALID_ARGUMENT, with a Fix).  Reads only the caller's
 * memory; thread-safe.
 */
vyre_status vc_host_stream_read(const vyre_dispatch_options *o, const char *what,
                                vc_host_stream *out, vyre_error *err);

/*
 * Order the call after the host's work: record an event on the host's
 * stream and make `ours` wait for it, before the call's first copy or
 * launch on `ours`.  Nothing when hs is NULL or not set.  Context current;
 * thread-safe.
 */
vyre_status vc_host_stream_join(vc_context *cx, vc_streampool *sp, const vc_host_stream *hs,
                                CUstream ours, vyre_error *err);

/*
 * Order the host's later work after the call: make the host's stream
 * wait for `done`, recorded on the call's stream after its last work.
 * Nothing when hs is NULL or not set.  Context current; thread-safe.
 */
vyre_status vc_host_stream_release(vc_context *cx, const vc_host_stream *hs, CUevent done,
                                   vyre_error *err);

#endif /* VYRE_PLUGIN_CUDA_HOSTSTREAM_H */
