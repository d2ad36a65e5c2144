/* pipeline.h -- pipelines (programs compiled ahead) and the plan a dispatch's program reference runs. */
#ifndef VYRE_PLUGIN_CUDA_PIPELINE_H
#define VYRE_PLUGIN_CUDA_PIPELINE_H

#include "context.h"
#include "deferred.h"
#include "metrics.h"
#include "modcache.h"
#include "vyre/vyre_support.h"

/* The pipeline table; fields private to pipeline.c. */
typedef struct vc_pipelines {
  vyre_handle_table table;
  vc_context *cx;
  vc_modcache *plans;
  vc_deferred *deferred;
} vc_pipelines;

void vc_pipelines_init(vc_pipelines *pl, vc_context *cx, vc_modcache *plans, vc_deferred *deferred);
/* Release every pipeline and the table (destroy; context current unless lost). */
void vc_pipelines_destroy(vc_pipelines *pl);
/* Add pipeline.handles. */
void vc_pipelines_add_metrics(vc_pipelines *pl, vc_metrics *m);

/* vtable->pipeline_create / pipeline_release (vyre.h). */
vyre_status vc_pipeline_create(vc_pipelines *pl, const void *program_bytes, uint64_t program_size,
                               const vyre_dispatch_options *options, vyre_pipeline *out,
                               vyre_error *err);
vyre_status vc_pipeline_release(vc_pipelines *pl, vyre_pipeline pipeline, vyre_error *err);

/* 1 when `pipeline` is a live handle of this instance.  Thread-safe. */
int vc_pipeline_live(vc_pipelines *pl, vyre_pipeline pipeline);
/*
 * The plan a dispatch runs: the pipeline's (checked against the
 * workgroup override; a grid override on an elementwise kernel gets a
 * variant without the fast path, compiled once), or compiled (cached)
 * from the reference's bytes.  flags: CG_INDIRECT | CG_NO_FASTPATH for an
 * indirect dispatch (a pipeline gets that variant, compiled once), else 0.
 * *out holds one reference.  Context current.
 */
vyre_status vc_pipeline_resolve(vc_pipelines *pl, const vyre_program_ref *ref,
                                const vyre_dispatch_options *o, uint32_t flags, vc_plan **out,
                                vyre_error *err);

#endif /* VYRE_PLUGIN_CUDA_PIPELINE_H */
