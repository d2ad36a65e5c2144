/* hoststream.c -- the host's CUstream: reading vyre_cuda_stream from a call's extension chain, and the event joins before and after the call's work. */
#include "hoststream.h"

#include <stddef.h>

#include "vyre/vyre_cuda.h"
#include "vyre/vyre_support.h"

/* A longer chain is taken for a cycle. */
#define MAX_CHAIN 64u

#define STREAM_FIX                                                                           \
  "pass a live CUstream of the instance's context (vyre_cuda_interop.context), or NULL for " \
  "the legacy default stream"

vyre_status vc_host_stream_read(const vyre_dispatch_options *o, const char *what,
                                vc_host_stream *out, vyre_error *err) {
  out->set = 0;
  out->stream = NULL;
  /* Options from a 1.0 caller end before `next`: they have no chain. */
  if (!o || o->struct_size < offsetof(vyre_dispatch_options, next) + sizeof o->next)
    return VYRE_OK;
  uint32_t i = 0;
  for (const vyre_ext *e = o->next; e; e = e->next, i++) {
    if (i == MAX_CHAIN)
      return vyre_error_set(err, VYRE_INVALID_ARGUMENT, 0,
                            "%s: the options' extension chain has more than %u entries (a "
                            "cycle?). Fix: end the chain with next = NULL",
                            what, MAX_CHAIN);
    /* Nothing past the size the caller vouched for is read. */
    if (e->struct_size < sizeof *e)
      return vyre_error_set(err, VYRE_INVALID_ARGUMENT, 0,
                            "%s: extension chain entry %u has struct_size %u, less than its "
                            "%zu-byte head (vyre_ext). Fix: set head.struct_size to the size of "
                            "the whole extension struct",
                            what, i, e->struct_size, sizeof *e);
    if (e->type == 0)
      return vyre_error_set(err, VYRE_INVALID_ARGUMENT, 0,
                            "%s: extension chain entry %u has type 0, which is never a type (an "
                            "uninitialised struct?). Fix: set head.type to the VYRE_EXT_* of "
                            "the struct",
                            what, i);
    if (e->type != VYRE_EXT_CUDA_STREAM) continue; /* not ours: skipped (vyre.h) */
    if (e->struct_size < sizeof(vyre_cuda_stream))
      return vyre_error_set(err, VYRE_INVALID_ARGUMENT, 0,
                            "%s: vyre_cuda_stream (chain entry %u) has struct_size %u, %zu "
                            "expected. Fix: set head.struct_size = sizeof(vyre_cuda_stream)",
                            what, i, e->struct_size, sizeof(vyre_cuda_stream));
    if (out->set)
      return vyre_error_set(err, VYRE_INVALID_ARGUMENT, 0,
                            "%s: the extension chain holds two vyre_cuda_stream entries (the "
                            "second is entry %u). Fix: chain one stream per call",
                            what, i);
    out->set = 1;
    out->stream = (CUstream)((const vyre_cuda_stream *)e)->stream;
  }
  return VYRE_OK;
}

vyre_status vc_host_stream_join(vc_context *cx, vc_streampool *sp, const vc_host_stream *hs,
                                CUstream ours, vyre_error *err) {
  if (!hs || !hs->set) return VYRE_OK;
  /* Work vyre waits for cannot be captured into the host's graph: joining
   * a capturing stream would pull ours into the capture and spoil it. */
  CUstreamCaptureStatus cap = CU_STREAM_CAPTURE_STATUS_NONE;
  CUresult r = VC_CU(cx, cuStreamIsCapturing, (hs->stream, &cap));
  if (r != CUDA_SUCCESS) {
    vyre_status st = vc_cu_fail(cx, err, r, "cuStreamIsCapturing", NULL, STREAM_FIX);
    vyre_error_prefix(err, "vyre_cuda_stream %p", (void *)hs->stream);
    return st;
  }
  if (cap != CU_STREAM_CAPTURE_STATUS_NONE)
    return vyre_error_set(err, VYRE_INVALID_ARGUMENT, 0,
                          "vyre_cuda_stream %p is being captured into a CUDA graph (capture "
                          "status %d); vyre's calls synchronise and cannot be captured. Fix: "
                          "end the capture (cuStreamEndCapture) before the call, or chain "
                          "another stream",
                          (void *)hs->stream, (int)cap);
  CUevent ev = NULL;
  vyre_status st = vc_event_acquire(sp, 0, &ev, err);
  if (st != VYRE_OK) return st;
  r = VC_CU(cx, cuEventRecord, (ev, hs->stream));
  if (r != CUDA_SUCCESS) {
    st = vc_cu_fail(cx, err, r, "cuEventRecord", NULL, STREAM_FIX);
    vyre_error_prefix(err, "vyre_cuda_stream %p", (void *)hs->stream);
  } else {
    r = VC_CU(cx, cuStreamWaitEvent, (ours, ev, 0));
    if (r != CUDA_SUCCESS) st = vc_cu_fail(cx, err, r, "cuStreamWaitEvent", NULL, NULL);
  }
  /* The wait holds on to the record it saw: the event may be recorded
   * again by its next user at once. */
  vc_event_release(sp, 0, ev);
  return st;
}

vyre_status vc_host_stream_release(vc_context *cx, const vc_host_stream *hs, CUevent done,
                                   vyre_error *err) {
  if (!hs || !hs->set) return VYRE_OK;
  CUresult r = VC_CU(cx, cuStreamWaitEvent, (hs->stream, done, 0));
  if (r == CUDA_SUCCESS) return VYRE_OK;
  vyre_status st = vc_cu_fail(cx, err, r, "cuStreamWaitEvent", NULL, STREAM_FIX);
  vyre_error_prefix(err, "vyre_cuda_stream %p", (void *)hs->stream);
  return st;
}
