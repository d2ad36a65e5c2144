/* hoststream.c -- the host's CUstream: reading vyre_cuda_stream from a call's extension chain, and the event joins before and after the call's work. */
#include "hoststream.h"

#include "abi/format/chain.h"
#include "vyre/vyre_cuda.h"
#include "vyre/vyre_support.h"

#define STREAM_FIX                                                                           \
  "pass a live CUstream of the instance's context (vyre_cuda_interop.context), or NULL for " \
  "the legacy default stream"

static const vyre__ext_kind stream_kind = {VYRE_EXT_CUDA_STREAM, sizeof(vyre_cuda_stream),
                                           "vyre_cuda_stream", "stream"};

vyre_status vc_host_stream_read(const vyre_dispatch_options *o, const char *what,
                                vc_host_stream *out, vyre_error *err) {
  out->set = 0;
  out->stream = NULL;
  const vyre_ext *e;
  vyre_status st = vyre__ext_find(o, &stream_kind, what, &e, err);
  if (st != VYRE_OK || !e) return st;
  out->set = 1;
  out->stream = (CUstream)((const vyre_cuda_stream *)e)->stream;
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
