/* pipeline.c -- pipelines (programs compiled ahead) and the plan a program reference runs (pipeline.h). */
#include "pipeline.h"

#include <stdlib.h>
#include <string.h>

#include "abi/format/budget.h"
#include "hoststream.h"
#include "launch.h"
#include "program.h"
#include "util.h"

typedef struct vc_pipeline_obj {
  vc_plan *plan;
  vc_plan *nofast; /* the same program without the elementwise fast path */
  vc_plan *indirect; /* the same program with the indirect prologue (CG_INDIRECT) */
  pthread_mutex_t lock;
} vc_pipeline_obj;

void vc_pipelines_init(vc_pipelines *pl, vc_context *cx, vc_modcache *plans, vc_deferred *deferred) {
  memset(pl, 0, sizeof *pl);
  vyre_handles_init(&pl->table, VYRE_HANDLE_PIPELINE);
  pl->cx = cx;
  pl->plans = plans;
  pl->deferred = deferred;
}

int vc_pipeline_live(vc_pipelines *pl, vyre_pipeline pipeline) {
  return pipeline && vyre_handles_get(&pl->table, pipeline) != NULL;
}

/* The pipeline's variant *slot compiled with `flags` (once, under the
 * pipeline's lock), one reference into *out. */
static vyre_status variant(vc_pipelines *pl, vc_pipeline_obj *pipe, vc_plan **slot,
                           uint32_t flags, vc_plan **out, vyre_error *err) {
  const vc_kernel *pk = vc_plan_kernel(pipe->plan);
  pthread_mutex_lock(&pipe->lock);
  vyre_status st = VYRE_OK;
  if (!*slot) {
    vyre_program *prog = NULL;
    st = vc_program_decode(pk->program->bytes, pk->program->size, &prog, err);
    if (st == VYRE_OK) {
      vyre_dispatch_options po;
      memset(&po, 0, sizeof po);
      memcpy(po.workgroup, pk->cg.workgroup, sizeof po.workgroup);
      po.ulp_budget = pk->cg.ulp_budget;
      st = vc_program_plan(pl->cx, pl->plans, prog, &po, flags, slot, err);
    }
  }
  if (st == VYRE_OK) {
    vc_plan_ref(*slot);
    *out = *slot;
  }
  pthread_mutex_unlock(&pipe->lock);
  return st;
}

vyre_status vc_pipeline_resolve(vc_pipelines *pl, const vyre_program_ref *ref,
                                const vyre_dispatch_options *o, uint32_t flags, vc_plan **out,
                                vyre_error *err) {
  *out = NULL;
  vyre_status arg_st = vyre_check_program_ref(ref, "dispatch", err);
  if (arg_st != VYRE_OK) return arg_st;
  if (ref->pipeline) {
    vc_pipeline_obj *pipe = vyre_handles_get(&pl->table, ref->pipeline);
    if (!pipe)
      return vyre_error_set(err, VYRE_INVALID_HANDLE, 0,
                            "dispatch: pipeline handle 0x%016llx is not live on this backend "
                            "(released, or from another instance). Fix: pass a handle from "
                            "pipeline_create on this backend",
                            (unsigned long long)ref->pipeline);
    const vc_kernel *pk = vc_plan_kernel(pipe->plan);
    const uint32_t *pw = pk->cg.workgroup;
    if (o->workgroup[0] || o->workgroup[1] || o->workgroup[2]) {
      uint32_t wg[3];
      vc_program_workgroup(pk->program, o, wg);
      if (wg[0] != pw[0] || wg[1] != pw[1] || wg[2] != pw[2])
        return vyre_error_set(err, VYRE_INVALID_ARGUMENT, 0,
                              "dispatch: workgroup override %u x %u x %u differs from the %u x "
                              "%u x %u the pipeline was compiled for. Fix: create a pipeline "
                              "with that workgroup, or drop the override",
                              wg[0], wg[1], wg[2], pw[0], pw[1], pw[2]);
    }
    /* An indirect dispatch runs the variant with the prologue (a pipeline
     * made without it still serves: the flag is part of the plan key). */
    if (flags & CG_INDIRECT) return variant(pl, pipe, &pipe->indirect, flags, out, err);
    if (!vc_has_grid_override(o) || pk->info.grid_mode != CG_GRID_ELEMENTWISE) {
      vc_plan_ref(pipe->plan);
      *out = pipe->plan;
      return VYRE_OK;
    }
    return variant(pl, pipe, &pipe->nofast, CG_NO_FASTPATH, out, err);
  }
  return vc_program_plan_bytes(pl->cx, pl->plans, ref->bytes, ref->size, o, flags, out, err);
}

static void pipeline_free(vc_pipelines *pl, vc_pipeline_obj *p) {
  if (!p) return;
  if (p->plan) vc_plan_unref(pl->plans, p->plan);
  if (p->nofast) vc_plan_unref(pl->plans, p->nofast);
  if (p->indirect) vc_plan_unref(pl->plans, p->indirect);
  pthread_mutex_destroy(&p->lock);
  free(p);
}

vyre_status vc_pipeline_create(vc_pipelines *pl, const void *program_bytes, uint64_t program_size,
                               const vyre_dispatch_options *options, vyre_pipeline *out,
                               vyre_error *err) {
  if (!out)
    return vyre_error_set(err, VYRE_INVALID_ARGUMENT, 0,
                          "pipeline_create: out is NULL. Fix: pass a vyre_pipeline * to receive "
                          "the handle");
  *out = 0;
  vyre_status st = vc_check_options(options, err);
  /* The chain is checked like a dispatch's; a stream in it orders nothing
   * here (pipeline_create enqueues no work). */
  vc_host_stream unused;
  vyre_limits no_limits; /* limits belong to each dispatch: checked, ignored */
  if (st == VYRE_OK) st = vc_host_stream_read(options, "pipeline_create", &unused, err);
  if (st == VYRE_OK) st = vyre__limits_read(options, "pipeline_create", &no_limits, err);
  if (st != VYRE_OK) return st;
  vyre_dispatch_options o;
  vc_options_read(options, &o);
  /* A grid is per dispatch; the pipeline keeps the fast path when it can. */
  memset(o.grid, 0, sizeof o.grid);
  st = vc_deferred_enter(pl->deferred, err);
  if (st != VYRE_OK) return st;
  vc_pipeline_obj *p = calloc(1, sizeof *p);
  if (!p) {
    st = vyre_error_set(err, VYRE_OUT_OF_MEMORY, 0,
                        "pipeline_create: no host memory. Fix: free host memory");
    goto done;
  }
  st = vc_mutex_init(&p->lock, "pipeline_create", "pipeline", err);
  if (st != VYRE_OK) {
    free(p);
    goto done;
  }
  st = vc_program_plan_bytes(pl->cx, pl->plans, program_bytes, program_size, &o, 0, &p->plan,
                             err);
  if (st != VYRE_OK) {
    pipeline_free(pl, p);
    goto done;
  }
  st = vyre_handles_insert(&pl->table, p, out);
  if (st != VYRE_OK) {
    pipeline_free(pl, p);
    *out = 0;
    st = vyre_handles_insert_failed(err, st, "pipeline_create", "pipelines",
                                    "release the pipelines you no longer use "
                                    "(pipeline_release)");
  }
done:
  vc_leave(pl->cx);
  return st;
}

vyre_status vc_pipeline_release(vc_pipelines *pl, vyre_pipeline pipeline, vyre_error *err) {
  vc_context *cx = pl->cx;
  if (!vyre_handles_get(&pl->table, pipeline))
    return vyre_error_set(err, VYRE_INVALID_HANDLE, 0,
                          "pipeline_release: handle 0x%016llx is not a live pipeline of this "
                          "backend (already released, or from another instance). Fix: release "
                          "each pipeline once",
                          (unsigned long long)pipeline);
  int lost = vc_is_lost(cx);
  if (!lost) {
    CUresult r = vc_context_push(cx);
    if (r != CUDA_SUCCESS) {
      vyre_status st = vc_cu_fail(cx, err, r, "cuCtxPushCurrent", NULL, NULL);
      vyre_error_prefix(err, "pipeline_release (the pipeline is still live)");
      return st;
    }
  }
  /* Dispatches in flight hold their own plan references. */
  pipeline_free(pl, vyre_handles_remove(&pl->table, pipeline));
  if (!lost) vc_leave(cx);
  return VYRE_OK;
}

void vc_pipelines_destroy(vc_pipelines *pl) {
  if (!pl->cx) return;
  vc_pipeline_obj *p;
  while ((p = vyre_handles_pop_any(&pl->table)) != NULL) pipeline_free(pl, p);
  vyre_handles_destroy(&pl->table);
  pl->cx = NULL;
}

static void read_metrics(const void *state, vc_metric_sink *s) {
  vc_pipelines *pl = (vc_pipelines *)state;
  vc_metric_emit(s, "pipeline.handles", vyre_handles_live(&pl->table));
}

void vc_pipelines_add_metrics(vc_pipelines *pl, vc_metrics *m) { vc_metrics_add(m, read_metrics, pl); }
