/* sequence.h -- dispatch over resident buffers: one step (dispatch_resident) or a step list repeated, with ranged reads. */
#ifndef VYRE_PLUGIN_CUDA_SEQUENCE_H
#define VYRE_PLUGIN_CUDA_SEQUENCE_H

#include "context.h"
#include "deferred.h"
#include "fuser.h"
#include "graph.h"
#include "hoststream.h"
#include "launch.h"
#include "pipeline.h"
#include "pools.h"
#include "resident.h"

/* What sequences use; fields private to sequence.c. */
typedef struct vc_sequencer {
  vc_context *cx;
  vc_mempool *devpool;
  vc_streampool *streams;
  vc_resident_store *resident;
  vc_launcher *lx;
  vc_graphcache *graphs;
  vc_pipelines *pipelines;
  vc_deferred *deferred;
  vc_fuser *fuser;
} vc_sequencer;

void vc_sequencer_init(vc_sequencer *q, vc_context *cx, vc_mempool *devpool,
                       vc_streampool *streams, vc_resident_store *resident, vc_launcher *lx,
                       vc_graphcache *graphs, vc_pipelines *pipelines, vc_deferred *deferred,
                       vc_fuser *fuser);

/* vtable->dispatch_resident and ->dispatch_sequence (vyre.h).  Thread-safe. */
vyre_status vc_dispatch_resident(vc_sequencer *q, const vyre_program_ref *program,
                                 const vyre_resident *buffers, uint32_t buffer_count,
                                 const vyre_dispatch_options *options, vyre_timing *timing,
                                 vyre_error *err);
vyre_status vc_dispatch_sequence(vc_sequencer *q, const vyre_sequence_step *steps,
                                 uint32_t step_count, uint32_t repeat,
                                 const vyre_resident_copy *reads, uint32_t read_count,
                                 vyre_timing *timing, vyre_error *err);

#endif /* VYRE_PLUGIN_CUDA_SEQUENCE_H */
