/* async.h -- asynchronous host dispatch: pending handles to poll, wait on or release. */
#ifndef VYRE_PLUGIN_CUDA_ASYNC_H
#define VYRE_PLUGIN_CUDA_ASYNC_H

#include "dispatch.h"
#include "metrics.h"
#include "vyre/vyre_support.h"

/* The pending-handle table; fields private to async.c. */
typedef struct vc_async {
  vc_dispatcher *d;
  vyre_handle_table pending;
} vc_async;

void vc_async_init(vc_async *a, vc_dispatcher *d);
/* Hand every live pending dispatch to the deferred list, then free the
 * table (destroy). */
void vc_async_destroy(vc_async *a);
/* Add pending.handles. */
void vc_async_add_metrics(vc_async *a, vc_metrics *m);

/* vtable->dispatch_async, ->pending_poll, ->pending_wait, ->pending_release
 * (vyre.h): free-threaded; one pending handle is used by one thread. */
vyre_status vc_dispatch_async(vc_async *a, const vyre_program_ref *program,
                              const vyre_input *inputs, uint32_t input_count,
                              const vyre_dispatch_options *options, vyre_pending *out,
                              vyre_error *err);
vyre_status vc_pending_poll(vc_async *a, vyre_pending pending, int *ready, vyre_error *err);
vyre_status vc_pending_wait(vc_async *a, vyre_pending pending, vyre_outputs **out,
                            vyre_timing *timing, vyre_error *err);
vyre_status vc_pending_release(vc_async *a, vyre_pending pending, vyre_error *err);

#endif /* VYRE_PLUGIN_CUDA_ASYNC_H */
