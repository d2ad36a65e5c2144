/* dispatch.c -- host dispatch, async pending handles, timing, fixpoint, resident dispatch, sequences, graph replay, pipelines. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cuda_internal.h"

#define GRAPH_CACHE_CAPACITY 16u

/* ------------------------------------------------------------------ */
/* Types                                                               */
/* ------------------------------------------------------------------ */
/* One kernel launch, fully shaped: the plan, the geometry, the grid,
 * the buffer pointers and the params block. */
typedef struct launch {
  vc_plan *plan; /* one reference */
  vyre_geometry geo;
  uint32_t grid[3], block[3];
  uint32_t iterations;
  CUdeviceptr ptrs[VYRE_MAX_BUFFERS]; /* by kernel_index */
  uint32_t params_words;
  vc_block params_dev;
  vc_block params_host; /* pinned: the block as uploaded, then the trap readback */
  int params_shared;    /* params_dev is the plan's kept block: not ours to release */
} launch;

/* A host dispatch in flight (sync dispatch, dispatch_into, async). */
struct vc_job {
  vc_backend *b;
  launch L;
  CUstream stream;
  CUevent done, t0, t1;
  vc_block dev[VYRE_MAX_BUFFERS];   /* by buffer index */
  vc_block stage[VYRE_MAX_BUFFERS]; /* pinned staging, by buffer index */
  uint64_t t_entry, t_enqueued;
  int enqueued; /* work was put on the stream */
  vc_job *next; /* deferred-release list */
};

typedef struct vc_pipeline_obj {
  vc_plan *plan;
  vc_plan *nofast; /* the same program without the elementwise fast path */
  pthread_mutex_t lock;
} vc_pipeline_obj;

/* A captured, instantiated step list. */
struct vc_graph {
  uint8_t key[32];
  uint32_t steps;
  vc_plan **plans;
  vc_block *params_dev; /* one per step; the graph's kernels point at them */
  vyre_resident *handles;
  uint32_t handle_count;
  CUgraph graph;
  CUgraphExec exec;
  int busy, stale;
  vc_graph *next;
};

/* How to do without each capability a CUDA device may lack; the names
 * come from VYRE_CAP_MAP.  Checked in this order. */
static const struct {
  uint64_t bit;
  const char *fix;
} cap_names[] = {
    {VYRE_CAP_F16, "use a device of compute capability 5.3 or newer"},
    {VYRE_CAP_BF16, "use a device of compute capability 8.0 or newer"},
    {VYRE_CAP_SUBGROUP, "use a device with 32-lane warps"},
    {VYRE_CAP_ATOMIC64, "use 32-bit atomics"},
    {VYRE_CAP_GRID_BARRIER,
     "use a device that supports cooperative launch, or split the program at the barrier"},
    {VYRE_CAP_TRANSCENDENTAL,
     "this build of the CUDA backend has no PTX math library; use the reference backend or "
     "avoid transcendental ops"},
    {VYRE_CAP_WORKGROUP_MEMORY, "drop workgroup buffers"},
    {VYRE_CAP_ATOMICS, "drop atomics"},
    {VYRE_CAP_BARRIER, "drop barriers"},
    {VYRE_CAP_TRAP, "drop trap"},
};

/* ------------------------------------------------------------------ */
/* Plans for a program reference                                       */
/* ------------------------------------------------------------------ */
static vyre_status check_program(vc_backend *b, const vyre_program *prog, const uint32_t wg[3],
                                 vyre_error *err) {
  uint64_t missing = prog->required_caps & ~b->profile.capabilities;
  if (missing) {
    for (size_t i = 0; i < sizeof cap_names / sizeof cap_names[0]; i++)
      if (missing & cap_names[i].bit)
        return vyre_error_set(err, VYRE_UNSUPPORTED, 0,
                              "unsupported: the program needs %s, which CUDA device %u (%s, "
                              "sm_%u%u) does not offer. Fix: %s",
                              vyre_capability_text((uint32_t)__builtin_ctzll(cap_names[i].bit)),
                              b->ordinal, b->profile.name,
                              b->profile.compute_major, b->profile.compute_minor,
                              cap_names[i].fix);
    return vyre_error_set(err, VYRE_UNSUPPORTED, 0,
                          "unsupported: the program needs capabilities 0x%llx that CUDA device "
                          "%u lacks. Fix: use another backend",
                          (unsigned long long)missing, b->ordinal);
  }
  if (prog->shared_bytes > (uint32_t)b->shared_per_block)
    return vyre_error_set(err, VYRE_UNSUPPORTED, 0,
                          "unsupported: the program uses %u bytes of workgroup memory, CUDA "
                          "device %u allows %d per workgroup. Fix: use smaller workgroup buffers",
                          prog->shared_bytes, b->ordinal, b->shared_per_block);
  uint64_t threads = (uint64_t)wg[0] * wg[1] * wg[2];
  for (int i = 0; i < 3; i++)
    if (wg[i] > b->profile.max_workgroup_size[i])
      return vyre_error_set(err, VYRE_UNSUPPORTED, 0,
                            "unsupported: workgroup %u x %u x %u exceeds CUDA device %u's "
                            "block limit %u x %u x %u. Fix: use a smaller workgroup",
                            wg[0], wg[1], wg[2], b->ordinal, b->profile.max_workgroup_size[0],
                            b->profile.max_workgroup_size[1], b->profile.max_workgroup_size[2]);
  if (threads > (uint64_t)b->max_threads_per_block)
    return vyre_error_set(err, VYRE_UNSUPPORTED, 0,
                          "unsupported: workgroup of %llu invocations exceeds CUDA device %u's "
                          "%d threads per block. Fix: use a smaller workgroup",
                          (unsigned long long)threads, b->ordinal, b->max_threads_per_block);
  return VYRE_OK;
}

static void effective_workgroup(const vyre_program *prog, const vyre_dispatch_options *o,
                                uint32_t wg[3]) {
  if (o->workgroup[0] || o->workgroup[1] || o->workgroup[2]) {
    for (int i = 0; i < 3; i++) wg[i] = o->workgroup[i] ? o->workgroup[i] : 1u;
  } else {
    for (int i = 0; i < 3; i++) wg[i] = prog->header.workgroup_size[i];
  }
}

static int has_grid_override(const vyre_dispatch_options *o) {
  return o->grid[0] || o->grid[1] || o->grid[2];
}

/* Decode/validate bytes and get the plan (prog is consumed). */
static vyre_status plan_for_program(vc_backend *b, vyre_program *prog,
                                    const vyre_dispatch_options *o, uint32_t extra_flags,
                                    vc_plan **out, vyre_error *err) {
  cg_options cg;
  memset(&cg, 0, sizeof cg);
  effective_workgroup(prog, o, cg.workgroup);
  vyre_status st = check_program(b, prog, cg.workgroup, err);
  if (st != VYRE_OK) {
    vyre_program_free(prog);
    return st;
  }
  cg.sm_major = b->profile.compute_major;
  cg.sm_minor = b->profile.compute_minor;
  cg.ulp_budget = o->ulp_budget;
  /* With an explicit grid every invocation of that grid must run, so the
   * elementwise fast path (which covers [0, element count)) is off. */
  cg.flags = extra_flags | (has_grid_override(o) ? CG_NO_FASTPATH : 0u);
  return vc_plan_get(b, prog, &cg, out, err);
}

static vyre_status decode(const void *bytes, uint64_t size, vyre_program **prog,
                          vyre_error *err) {
  if (!bytes || !size)
    return vyre_error_set(err, VYRE_INVALID_ARGUMENT, 0,
                          "program: no bytes and no pipeline given. Fix: pass the program "
                          "image (bytes + size) or a pipeline handle");
  if (size > (uint64_t)SIZE_MAX)
    return vyre_error_set(err, VYRE_INVALID_PROGRAM, 0,
                          "program: %llu bytes do not fit size_t. Fix: pass a valid image",
                          (unsigned long long)size);
  return vyre_program_decode(bytes, (size_t)size, prog, err);
}

/* The plan a dispatch runs: the pipeline's, or compiled (cached) from bytes. */
static vyre_status resolve_plan(vc_backend *b, const vyre_program_ref *ref,
                                const vyre_dispatch_options *o, vc_plan **out,
                                vyre_error *err) {
  *out = NULL;
  if (!ref)
    return vyre_error_set(err, VYRE_INVALID_ARGUMENT, 0,
                          "dispatch: program is NULL. Fix: pass a vyre_program_ref");
  if (ref->pipeline) {
    vc_pipeline_obj *pipe = vyre_handles_get(&b->pipelines, ref->pipeline);
    if (!pipe)
      return vyre_error_set(err, VYRE_INVALID_HANDLE, 0,
                            "dispatch: pipeline handle 0x%016llx is not live on this backend "
                            "(released, or from another instance). Fix: pass a handle from "
                            "pipeline_create on this backend",
                            (unsigned long long)ref->pipeline);
    const uint32_t *pw = pipe->plan->cg.workgroup;
    if (o->workgroup[0] || o->workgroup[1] || o->workgroup[2]) {
      uint32_t wg[3];
      effective_workgroup(pipe->plan->program, o, wg);
      if (wg[0] != pw[0] || wg[1] != pw[1] || wg[2] != pw[2])
        return vyre_error_set(err, VYRE_INVALID_ARGUMENT, 0,
                              "dispatch: workgroup override %u x %u x %u differs from the %u x "
                              "%u x %u the pipeline was compiled for. Fix: create a pipeline "
                              "with that workgroup, or drop the override",
                              wg[0], wg[1], wg[2], pw[0], pw[1], pw[2]);
    }
    if (!has_grid_override(o) || pipe->plan->info.grid_mode != CG_GRID_ELEMENTWISE) {
      vc_plan_ref(pipe->plan);
      *out = pipe->plan;
      return VYRE_OK;
    }
    pthread_mutex_lock(&pipe->lock);
    vyre_status st = VYRE_OK;
    if (!pipe->nofast) {
      vyre_program *prog = NULL;
      st = decode(pipe->plan->program->bytes, pipe->plan->program->size, &prog, err);
      if (st == VYRE_OK) {
        vyre_dispatch_options po;
        memset(&po, 0, sizeof po);
        memcpy(po.workgroup, pw, sizeof po.workgroup);
        po.ulp_budget = pipe->plan->cg.ulp_budget;
        st = plan_for_program(b, prog, &po, CG_NO_FASTPATH, &pipe->nofast, err);
      }
    }
    if (st == VYRE_OK) {
      vc_plan_ref(pipe->nofast);
      *out = pipe->nofast;
    }
    pthread_mutex_unlock(&pipe->lock);
    return st;
  }
  vyre_program *prog = NULL;
  vyre_status st = decode(ref->bytes, ref->size, &prog, err);
  if (st != VYRE_OK) return st;
  return plan_for_program(b, prog, o, 0, out, err);
}

/* ------------------------------------------------------------------ */
/* Launch shaping                                                      */
/* ------------------------------------------------------------------ */
static vyre_status shape_launch(vc_backend *b, launch *L, const uint64_t *input_sizes,
                                const uint64_t *resident_sizes, const vyre_dispatch_options *o,
                                vyre_error *err) {
  const vc_plan *p = L->plan;
  vyre_dispatch_options eff = *o;
  /* Geometry with the workgroup the kernel was compiled for. */
  memcpy(eff.workgroup, p->cg.workgroup, sizeof eff.workgroup);
  vyre_status st =
      vyre_geometry_derive(p->program, input_sizes, resident_sizes, &eff, &L->geo, err);
  if (st != VYRE_OK) return st;
  memcpy(L->block, L->geo.workgroup, sizeof L->block);
  if (p->info.grid_mode == CG_GRID_ELEMENTWISE) {
    uint64_t per = (uint64_t)L->geo.workgroup[0] * p->info.elements_per_thread;
    uint64_t gx = per ? ((uint64_t)L->geo.element_count + per - 1) / per : 0;
    L->grid[0] = (uint32_t)gx;
    L->grid[1] = L->grid[2] = gx ? 1u : 0u;
  } else {
    memcpy(L->grid, L->geo.grid, sizeof L->grid);
  }
  for (int i = 0; i < 3; i++)
    if (L->grid[i] > b->profile.max_workgroups[i])
      return vyre_error_set(err, VYRE_LIMIT, 0,
                            "dispatch: grid %u x %u x %u exceeds CUDA device %u's limit %u x %u "
                            "x %u. Fix: use a wider workgroup or a smaller grid",
                            L->grid[0], L->grid[1], L->grid[2], b->ordinal,
                            b->profile.max_workgroups[0], b->profile.max_workgroups[1],
                            b->profile.max_workgroups[2]);
  if (p->info.uses_grid_barrier) {
    uint64_t blocks = (uint64_t)L->grid[0] * L->grid[1] * L->grid[2];
    if (!b->cooperative)
      return vyre_error_set(err, VYRE_UNSUPPORTED, 0,
                            "unsupported: kernel %s has a grid barrier and CUDA device %u has no "
                            "cooperative launch. Fix: use another device or split the program "
                            "at the barrier",
                            p->info.entry, b->ordinal);
    if (blocks > p->coop_max_blocks)
      return vyre_error_set(err, VYRE_LIMIT, 0,
                            "dispatch: kernel %s has a grid barrier, so all its %llu workgroups "
                            "must be resident at once, but CUDA device %u fits only %u (%d SMs). "
                            "Fix: use at most %u workgroups (a grid override) or a smaller "
                            "workgroup",
                            p->info.entry, (unsigned long long)blocks, b->ordinal,
                            p->coop_max_blocks, b->sm_count, p->coop_max_blocks);
  }
  L->iterations = o->fixpoint_iterations > 1 ? o->fixpoint_iterations : 1u;
  uint32_t words = vyre_params_word_count(p->program);
  L->params_words = p->info.params_words > words ? p->info.params_words : words;
  return VYRE_OK;
}

static uint32_t trap_word(const launch *L) { return 1u + L->plan->program->buffer_count; }

/* A kernel without trap or grid-barrier words only reads its params block,
 * so one block per plan can stay on the device and serve every launch with
 * the same words: no upload on the hot path of repeated dispatches. */
static int params_reusable(const launch *L) {
  return !L->plan->info.uses_trap && !L->plan->info.uses_grid_barrier;
}

/* Use the plan's kept block when it holds exactly these words. */
static int params_use_kept(vc_backend *b, launch *L) {
  vc_plan *p = L->plan;
  const uint32_t *words = (const uint32_t *)(uintptr_t)L->params_host.ptr;
  int hit = 0;
  pthread_mutex_lock(&p->params_lock);
  if (p->params_block.ptr && p->params_n == L->params_words &&
      memcmp(p->params_copy, words, (size_t)L->params_words * 4u) == 0) {
    L->params_dev = p->params_block;
    L->params_shared = 1;
    hit = 1;
  }
  pthread_mutex_unlock(&p->params_lock);
  if (hit) atomic_fetch_add(&b->n_params_reused, 1);
  return hit;
}

/* After a launch completed, the plan keeps its block if it has none yet
 * (only a completed upload can be shared: other streams read it at once). */
static void params_keep(vc_backend *b, launch *L) {
  if (!L->plan || !params_reusable(L) || L->params_shared || !L->params_dev.ptr) return;
  vc_plan *p = L->plan;
  size_t bytes = (size_t)L->params_words * 4u;
  uint32_t *copy = malloc(bytes);
  if (!copy) return;
  memcpy(copy, (const void *)(uintptr_t)L->params_host.ptr, bytes);
  pthread_mutex_lock(&p->params_lock);
  if (!p->params_block.ptr) {
    p->params_block = L->params_dev;
    p->params_copy = copy;
    p->params_n = L->params_words;
    copy = NULL;
    L->params_dev.ptr = 0;
    L->params_dev.size = 0;
  }
  pthread_mutex_unlock(&p->params_lock);
  free(copy);
  (void)b;
}

/* Stage the params block: pinned copy filled, then the plan's kept device
 * block (when reuse is allowed and the words match) or a new one to upload. */
static vyre_status stage_params(vc_backend *b, launch *L, int allow_kept, vyre_error *err) {
  uint64_t bytes = (uint64_t)L->params_words * 4u;
  vyre_status st = vc_mempool_acquire(&b->hostpool, bytes * 2u, &L->params_host, err);
  if (st != VYRE_OK) return st;
  uint32_t *words = (uint32_t *)(uintptr_t)L->params_host.ptr;
  memset(words, 0, (size_t)bytes * 2u);
  vyre_params_fill(L->plan->program, &L->geo, words);
  if (allow_kept && params_reusable(L) && params_use_kept(b, L)) return VYRE_OK;
  return vc_mempool_acquire(&b->devpool, bytes, &L->params_dev, err);
}

static vyre_status upload_params(vc_backend *b, const launch *L, CUstream s, vyre_error *err) {
  if (L->params_shared) return VYRE_OK; /* the plan's kept block holds these words */
  CUresult r = VC_CU(b, cuMemcpyHtoDAsync, ((CUdeviceptr)L->params_dev.ptr,
                                            (const void *)(uintptr_t)L->params_host.ptr,
                                            (size_t)L->params_words * 4u, s));
  if (r != CUDA_SUCCESS) return vc_cu_fail(b, err, r, "cuMemcpyHtoDAsync", L->plan->info.entry, NULL);
  return VYRE_OK;
}

/* Read the trap words back into the second half of the pinned block. */
static vyre_status read_trap(vc_backend *b, const launch *L, CUstream s, vyre_error *err) {
  if (!L->plan->info.uses_trap) return VYRE_OK;
  uint64_t off = (uint64_t)trap_word(L) * 4u;
  uint8_t *dst = (uint8_t *)(uintptr_t)L->params_host.ptr + (uint64_t)L->params_words * 4u + off;
  CUresult r = VC_CU(b, cuMemcpyDtoHAsync, (dst, (CUdeviceptr)(L->params_dev.ptr + off),
                                            VYRE_PARAMS_TRAP_WORDS * 4u, s));
  if (r != CUDA_SUCCESS) return vc_cu_fail(b, err, r, "cuMemcpyDtoHAsync", L->plan->info.entry, NULL);
  return VYRE_OK;
}

/* After completion: VYRE_TRAP when the kernel recorded a trap. */
static vyre_status check_trap(vc_backend *b, const launch *L, int step, vyre_error *err) {
  if (!L->plan->info.uses_trap) return VYRE_OK;
  const uint32_t *back =
      (const uint32_t *)(uintptr_t)L->params_host.ptr + L->params_words + trap_word(L);
  uint32_t code = back[0], inst1 = back[1];
  if (!inst1) return VYRE_OK;
  atomic_fetch_add(&b->n_traps, 1);
  char where[48] = "";
  if (step >= 0) snprintf(where, sizeof where, " in sequence step %d", step);
  return vyre_error_set(err, VYRE_TRAP, (int64_t)code,
                        "program trapped%s: trap code %u at instruction %u (kernel %s); the "
                        "outputs are discarded and the backend stays usable. Fix: the program "
                        "reached its trap on this input; check the condition guarding "
                        "instruction %u",
                        where, code, inst1 - 1u, L->plan->info.entry, inst1 - 1u);
}

static vyre_status launch_fault_kernel(vc_backend *b, CUstream s, vyre_error *err);

/* Enqueue the launch (all fixpoint iterations) on `s`; count: add them to
 * the launch metrics. */
static vyre_status enqueue_launch(vc_backend *b, const launch *L, CUstream s, int count,
                                  vyre_error *err) {
  if (!L->grid[0] || !L->grid[1] || !L->grid[2]) return VYRE_OK; /* no elements: no launch */
  const vc_plan *p = L->plan;
  CUdeviceptr vals[VYRE_MAX_BUFFERS + 1];
  void *args[VYRE_MAX_BUFFERS + 1];
  uint32_t n = p->info.kernel_buffers;
  for (uint32_t i = 0; i < n; i++) {
    vals[i] = L->ptrs[i];
    args[i] = &vals[i];
  }
  vals[n] = (CUdeviceptr)L->params_dev.ptr;
  args[n] = &vals[n];
  for (uint32_t it = 0; it < L->iterations; it++) {
    CUresult r;
    if (p->info.uses_grid_barrier) {
      r = VC_CU(b, cuLaunchCooperativeKernel, (p->fn, L->grid[0], L->grid[1], L->grid[2],
                                               L->block[0], L->block[1], L->block[2], 0, s,
                                               args));
      if (r != CUDA_SUCCESS)
        return vc_cu_fail(b, err, r, "cuLaunchCooperativeKernel", p->info.entry, NULL);
    } else {
      r = VC_CU(b, cuLaunchKernel, (p->fn, L->grid[0], L->grid[1], L->grid[2], L->block[0],
                                    L->block[1], L->block[2], 0, s, args, NULL));
      if (r != CUDA_SUCCESS) return vc_cu_fail(b, err, r, "cuLaunchKernel", p->info.entry, NULL);
    }
    if (!count) continue;
    atomic_fetch_add(&b->n_launches, 1);
    if (p->info.grid_mode == CG_GRID_ELEMENTWISE) atomic_fetch_add(&b->n_fastpath_launches, 1);
  }
  return VYRE_OK;
}

static void launch_release(vc_backend *b, launch *L) {
  vc_mempool_release(&b->hostpool, &L->params_host);
  if (!L->params_shared) vc_mempool_release(&b->devpool, &L->params_dev);
  L->params_shared = 0;
  if (L->plan) vc_plan_unref(b, L->plan);
  L->plan = NULL;
}

static double elapsed_ms(vc_backend *b, CUevent t0, CUevent t1, int *ok) {
  float ms = 0.0f;
  CUresult r = VC_CU(b, cuEventElapsedTime, (&ms, t0, t1));
  *ok = r == CUDA_SUCCESS && ms >= 0.0f;
  if (r != CUDA_SUCCESS) vc_cu_note(b, r, "cuEventElapsedTime");
  return ms;
}

static void write_timing(vyre_timing *out, const vyre_timing *t) {
  if (!out) return;
  size_t n = out->struct_size < sizeof *t ? out->struct_size : sizeof *t;
  uint32_t size = out->struct_size;
  if (n > sizeof(uint32_t)) memcpy((uint8_t *)out + 4, (const uint8_t *)t + 4, n - 4);
  out->struct_size = size;
}

static vyre_status check_timing(vyre_timing *t, vyre_error *err) {
  if (t && t->struct_size < 8)
    return vyre_error_set(err, VYRE_INVALID_ARGUMENT, 0,
                          "timing: struct_size %u is too small. Fix: set timing->struct_size = "
                          "sizeof(vyre_timing)",
                          t->struct_size);
  return VYRE_OK;
}

static vyre_status check_options(const vyre_dispatch_options *o, vyre_error *err) {
  if (o && o->struct_size < 8)
    return vyre_error_set(err, VYRE_INVALID_ARGUMENT, 0,
                          "dispatch options: struct_size %u is too small. Fix: set "
                          "struct_size = sizeof(vyre_dispatch_options)",
                          o->struct_size);
  if (o && o->flags)
    return vyre_error_set(err, VYRE_INVALID_ARGUMENT, 0,
                          "dispatch options: unknown flags 0x%x. Fix: pass flags = 0",
                          o->flags);
  return VYRE_OK;
}

/* ------------------------------------------------------------------ */
/* Host dispatch jobs                                                  */
/* ------------------------------------------------------------------ */
/* Return everything a job holds.  Its stream must be idle. */
static void job_free(vc_job *j) {
  vc_backend *b = j->b;
  for (uint32_t i = 0; i < VYRE_MAX_BUFFERS; i++) {
    vc_mempool_release(&b->devpool, &j->dev[i]);
    vc_mempool_release(&b->hostpool, &j->stage[i]);
  }
  launch_release(b, &j->L);
  vc_event_release(b, 0, j->done);
  vc_event_release(b, 1, j->t0);
  vc_event_release(b, 1, j->t1);
  vc_stream_release(b, j->stream);
  free(j);
  atomic_fetch_sub(&b->n_pending_live, 1);
}

/* Make the job's stream idle (as far as the driver lets us), then free it. */
static void job_abort(vc_job *j) {
  vc_backend *b = j->b;
  if (j->enqueued && j->stream && vc_cleanup_ok(b)) {
    CUresult r = VC_CU(b, cuStreamSynchronize, (j->stream));
    if (r != CUDA_SUCCESS) vc_cu_note(b, r, "cuStreamSynchronize");
  }
  job_free(j);
}

static void defer_job(vc_job *j) {
  vc_backend *b = j->b;
  pthread_mutex_lock(&b->deferred_lock);
  j->next = b->deferred;
  b->deferred = j;
  atomic_fetch_add(&b->deferred_count, 1);
  pthread_mutex_unlock(&b->deferred_lock);
}

void vc_reap_deferred(vc_backend *b, int wait) {
  pthread_mutex_lock(&b->deferred_lock);
  vc_job *list = b->deferred;
  b->deferred = NULL;
  atomic_store(&b->deferred_count, 0);
  pthread_mutex_unlock(&b->deferred_lock);
  vc_job *keep = NULL;
  uint32_t kept = 0;
  while (list) {
    vc_job *j = list;
    list = j->next;
    int finished = 1;
    if (vc_cleanup_ok(b) && j->done) {
      CUresult r = wait ? VC_CU(b, cuEventSynchronize, (j->done)) : VC_CU(b, cuEventQuery, (j->done));
      if (r == CUDA_ERROR_NOT_READY) {
        finished = 0;
      } else if (r != CUDA_SUCCESS) {
        vc_cu_note(b, r, wait ? "cuEventSynchronize" : "cuEventQuery");
        if (!vc_is_lost(b)) {
          /* The event cannot tell us; the stream can. */
          CUresult sr = VC_CU(b, cuStreamSynchronize, (j->stream));
          if (sr != CUDA_SUCCESS) {
            vc_cu_note(b, sr, "cuStreamSynchronize");
            finished = vc_is_lost(b) || wait;
          }
        }
      }
    }
    if (finished) {
      job_free(j);
      atomic_fetch_add(&b->n_deferred_reaped, 1);
    } else {
      j->next = keep;
      keep = j;
      kept++;
    }
  }
  if (keep) {
    pthread_mutex_lock(&b->deferred_lock);
    vc_job *tail = keep;
    while (tail->next) tail = tail->next;
    tail->next = b->deferred;
    b->deferred = keep;
    atomic_fetch_add(&b->deferred_count, kept);
    pthread_mutex_unlock(&b->deferred_lock);
  }
}

static vyre_status check_inputs(const vyre_program *prog, const vyre_input *inputs,
                                uint32_t count, uint64_t *sizes, vyre_error *err) {
  if (count != prog->input_count)
    return vyre_error_set(err, VYRE_INVALID_ARGUMENT, 0,
                          "dispatch: %u inputs given, the program takes %u (its ro, uniform and "
                          "rw buffers in declaration order). Fix: pass one vyre_input per input "
                          "buffer",
                          count, prog->input_count);
  if (count && !inputs)
    return vyre_error_set(err, VYRE_INVALID_ARGUMENT, 0,
                          "dispatch: inputs is NULL for %u inputs. Fix: pass the input array",
                          count);
  for (uint32_t i = 0; i < count; i++) {
    if (inputs[i].size && !inputs[i].data)
      return vyre_error_set(err, VYRE_INVALID_ARGUMENT, 0,
                            "dispatch: input %u has %llu bytes but no data pointer. Fix: pass "
                            "the data",
                            i, (unsigned long long)inputs[i].size);
    sizes[i] = inputs[i].size;
  }
  return VYRE_OK;
}

/* Shape a host dispatch: plan + geometry.  *out owns the plan. */
static vyre_status job_prepare(vc_backend *b, const vyre_program_ref *ref,
                               const vyre_input *inputs, uint32_t input_count,
                               const vyre_dispatch_options *o, vc_job **out, vyre_error *err) {
  *out = NULL;
  vc_job *j = calloc(1, sizeof *j);
  if (!j)
    return vyre_error_set(err, VYRE_OUT_OF_MEMORY, 0,
                          "dispatch: no host memory for the dispatch record. Fix: free host "
                          "memory");
  j->b = b;
  atomic_fetch_add(&b->n_pending_live, 1);
  vyre_status st = resolve_plan(b, ref, o, &j->L.plan, err);
  if (st != VYRE_OK) goto fail;
  uint64_t sizes[VYRE_MAX_BUFFERS];
  st = check_inputs(j->L.plan->program, inputs, input_count, sizes, err);
  if (st != VYRE_OK) goto fail;
  st = shape_launch(b, &j->L, sizes, NULL, o, err);
  if (st != VYRE_OK) goto fail;
  *out = j;
  return VYRE_OK;
fail:
  job_free(j);
  return st;
}

/* Put the whole dispatch on a stream: uploads, zeroing, params, launches,
 * readbacks, completion event.  Inputs are copied into pinned staging
 * before this returns. */
static vyre_status job_enqueue(vc_job *j, const vyre_input *inputs, int timed, vyre_error *err) {
  vc_backend *b = j->b;
  launch *L = &j->L;
  const vyre_program *prog = L->plan->program;
  const char *kernel = L->plan->info.entry;
  CUresult r;
  vyre_status st = vc_stream_acquire(b, &j->stream, err);
  if (st != VYRE_OK) return st;
  st = vc_event_acquire(b, 0, &j->done, err);
  if (st != VYRE_OK) return st;
  if (timed) {
    st = vc_event_acquire(b, 1, &j->t0, err);
    if (st != VYRE_OK) return st;
    st = vc_event_acquire(b, 1, &j->t1, err);
    if (st != VYRE_OK) return st;
  }
  for (uint32_t i = 0; i < prog->buffer_count; i++) {
    const vyre_buffer_info *bi = &prog->buffers[i];
    if (bi->role == VYRE_ROLE_SHARED) continue;
    uint64_t bytes = L->geo.buffer_bytes[i];
    L->ptrs[bi->kernel_index] = 0;
    if (!bytes) continue;
    st = vc_mempool_acquire(&b->devpool, bytes, &j->dev[i], err);
    if (st != VYRE_OK) return st;
    CUdeviceptr dev = (CUdeviceptr)j->dev[i].ptr;
    L->ptrs[bi->kernel_index] = dev;
    if (bi->role == VYRE_ROLE_INPUT || bi->role == VYRE_ROLE_INOUT) {
      st = vc_mempool_acquire(&b->hostpool, bytes, &j->stage[i], err);
      if (st != VYRE_OK) return st;
      void *stage = (void *)(uintptr_t)j->stage[i].ptr;
      memcpy(stage, inputs[bi->input_index].data, (size_t)bytes);
      r = VC_CU(b, cuMemcpyHtoDAsync, (dev, stage, (size_t)bytes, j->stream));
      if (r != CUDA_SUCCESS) return vc_cu_fail(b, err, r, "cuMemcpyHtoDAsync", kernel, NULL);
      j->enqueued = 1;
    } else {
      /* Backend-allocated outputs start zeroed (pool blocks are reused). */
      r = VC_CU(b, cuMemsetD8Async, (dev, 0, (size_t)bytes, j->stream));
      if (r != CUDA_SUCCESS) return vc_cu_fail(b, err, r, "cuMemsetD8Async", kernel, NULL);
      j->enqueued = 1;
      if (L->geo.out_size[i]) {
        st = vc_mempool_acquire(&b->hostpool, L->geo.out_size[i], &j->stage[i], err);
        if (st != VYRE_OK) return st;
      }
    }
  }
  st = stage_params(b, L, 1, err);
  if (st != VYRE_OK) return st;
  st = upload_params(b, L, j->stream, err);
  if (st != VYRE_OK) return st;
  j->enqueued = 1;
  if (timed) {
    r = VC_CU(b, cuEventRecord, (j->t0, j->stream));
    if (r != CUDA_SUCCESS) return vc_cu_fail(b, err, r, "cuEventRecord", kernel, NULL);
  }
  st = enqueue_launch(b, L, j->stream, 1, err);
  if (st != VYRE_OK) return st;
  if (b->test_fault_dispatch) {
    uint32_t seq = atomic_fetch_add(&b->n_host_dispatch_seq, 1u) + 1u;
    if (seq == b->test_fault_dispatch) {
      st = launch_fault_kernel(b, j->stream, err);
      if (st != VYRE_OK) return st;
    }
  }
  if (timed) {
    r = VC_CU(b, cuEventRecord, (j->t1, j->stream));
    if (r != CUDA_SUCCESS) return vc_cu_fail(b, err, r, "cuEventRecord", kernel, NULL);
  }
  for (uint32_t i = 0; i < prog->buffer_count; i++) {
    const vyre_buffer_info *bi = &prog->buffers[i];
    if (!bi->is_output || !L->geo.out_size[i]) continue;
    /* Only the declared output range travels back. */
    r = VC_CU(b, cuMemcpyDtoHAsync, ((void *)(uintptr_t)j->stage[i].ptr,
                                     (CUdeviceptr)(j->dev[i].ptr + L->geo.out_offset[i]),
                                     (size_t)L->geo.out_size[i], j->stream));
    if (r != CUDA_SUCCESS) return vc_cu_fail(b, err, r, "cuMemcpyDtoHAsync", kernel, NULL);
  }
  st = read_trap(b, L, j->stream, err);
  if (st != VYRE_OK) return st;
  r = VC_CU(b, cuEventRecord, (j->done, j->stream));
  if (r != CUDA_SUCCESS) return vc_cu_fail(b, err, r, "cuEventRecord", kernel, NULL);
  atomic_fetch_add(&b->n_dispatches, 1);
  return VYRE_OK;
}

/* Wait for a job; then trap check, outputs (to a new vyre_outputs or to
 * caller slots) and timing.  The job is freed (or deferred when the
 * driver cannot tell whether its work is done). */
static vyre_status job_finish(vc_job *j, vyre_outputs **out, vyre_output_slot *slots,
                              vyre_timing *timing, vyre_error *err) {
  vc_backend *b = j->b;
  const vyre_program *prog = j->L.plan->program;
  CUresult r = VC_CU(b, cuEventSynchronize, (j->done));
  if (r != CUDA_SUCCESS) {
    vyre_status st = vc_cu_fail(b, err, r, "cuEventSynchronize", j->L.plan->info.entry, NULL);
    if (!vc_is_lost(b)) {
      CUresult sr = VC_CU(b, cuStreamSynchronize, (j->stream));
      if (sr != CUDA_SUCCESS) {
        vc_cu_note(b, sr, "cuStreamSynchronize");
        if (!vc_is_lost(b)) {
          defer_job(j);
          return st;
        }
      }
    }
    job_free(j);
    return st;
  }
  uint64_t t_done = vc_now_ns();
  vyre_status st = check_trap(b, &j->L, -1, err);
  if (st == VYRE_OK) params_keep(b, &j->L);
  if (st == VYRE_OK && out) {
    uint64_t total = sizeof(vyre_outputs) + (uint64_t)prog->output_count * sizeof(vyre_output);
    for (uint32_t i = 0; i < prog->buffer_count; i++)
      if (prog->buffers[i].is_output) total += (j->L.geo.out_size[i] + 15u) & ~(uint64_t)15u;
    uint8_t *mem = total <= SIZE_MAX ? malloc((size_t)total) : NULL;
    if (!mem) {
      st = vyre_error_set(err, VYRE_OUT_OF_MEMORY, 0,
                          "dispatch: no host memory for %llu bytes of outputs. Fix: free host "
                          "memory or declare output ranges",
                          (unsigned long long)total);
    } else {
      vyre_outputs *o = (vyre_outputs *)mem;
      o->struct_size = sizeof *o;
      o->count = prog->output_count;
      o->items = (vyre_output *)(mem + sizeof *o);
      uint8_t *data = mem + sizeof *o + (size_t)prog->output_count * sizeof(vyre_output);
      data = (uint8_t *)(((uintptr_t)data + 15u) & ~(uintptr_t)15u);
      for (uint32_t i = 0; i < prog->buffer_count; i++) {
        const vyre_buffer_info *bi = &prog->buffers[i];
        if (!bi->is_output) continue;
        uint64_t n = j->L.geo.out_size[i];
        o->items[bi->output_index].data = data;
        o->items[bi->output_index].size = n;
        if (n) memcpy(data, (const void *)(uintptr_t)j->stage[i].ptr, (size_t)n);
        data += (n + 15u) & ~(uint64_t)15u;
      }
      *out = o;
    }
  } else if (st == VYRE_OK && slots) {
    for (uint32_t i = 0; i < prog->buffer_count; i++) {
      const vyre_buffer_info *bi = &prog->buffers[i];
      if (!bi->is_output) continue;
      uint64_t n = j->L.geo.out_size[i];
      vyre_output_slot *s = &slots[bi->output_index];
      if (n) memcpy(s->data, (const void *)(uintptr_t)j->stage[i].ptr, (size_t)n);
      s->size = n;
    }
  }
  if (st == VYRE_OK && timing) {
    vyre_timing t;
    memset(&t, 0, sizeof t);
    uint64_t now = vc_now_ns();
    t.wall_ns = now - j->t_entry;
    t.enqueue_ns = j->t_enqueued - j->t_entry;
    t.wait_ns = t_done - j->t_enqueued;
    t.valid = VYRE_TIMING_WALL | VYRE_TIMING_ENQUEUE | VYRE_TIMING_WAIT;
    if (j->t0 && j->t1) {
      int ok;
      double ms = elapsed_ms(b, j->t0, j->t1, &ok);
      if (ok) {
        t.device_ns = (uint64_t)(ms * 1e6);
        t.valid |= VYRE_TIMING_DEVICE;
      }
    }
    write_timing(timing, &t);
  }
  job_free(j);
  return st;
}

/* ------------------------------------------------------------------ */
/* Host dispatch entry points                                          */
/* ------------------------------------------------------------------ */
static vyre_status host_dispatch(vc_backend *b, const vyre_program_ref *program,
                                 const vyre_input *inputs, uint32_t input_count,
                                 const vyre_dispatch_options *options, vyre_outputs **out,
                                 vyre_output_slot *slots, uint32_t slot_count,
                                 vyre_timing *timing, vyre_error *err) {
  uint64_t t_entry = vc_now_ns();
  vyre_status st = check_options(options, err);
  if (st == VYRE_OK) st = check_timing(timing, err);
  if (st != VYRE_OK) return st;
  vyre_dispatch_options o;
  vc_options_read(options, &o);
  st = vc_enter(b, err);
  if (st != VYRE_OK) return st;
  vc_job *j = NULL;
  st = job_prepare(b, program, inputs, input_count, &o, &j, err);
  if (st != VYRE_OK) goto done;
  j->t_entry = t_entry;
  if (slots || !out) {
    const vyre_program *prog = j->L.plan->program;
    if (slot_count != prog->output_count || (slot_count && !slots)) {
      st = vyre_error_set(err, VYRE_INVALID_ARGUMENT, 0,
                          "dispatch_into: %u output slots given, the program has %u outputs. "
                          "Fix: pass one vyre_output_slot per output in declaration order",
                          slot_count, prog->output_count);
      job_free(j);
      goto done;
    }
    for (uint32_t i = 0; i < prog->buffer_count; i++) {
      const vyre_buffer_info *bi = &prog->buffers[i];
      if (!bi->is_output) continue;
      const vyre_output_slot *s = &slots[bi->output_index];
      uint64_t need = j->L.geo.out_size[i];
      if (s->capacity < need || (need && !s->data)) {
        st = vyre_error_set(err, VYRE_INVALID_ARGUMENT, 0,
                            "dispatch_into: output %d '%s' needs %llu bytes, its slot holds "
                            "%llu%s. Fix: give the slot at least %llu bytes",
                            bi->output_index, bi->name, (unsigned long long)need,
                            (unsigned long long)s->capacity, s->data ? "" : " (data is NULL)",
                            (unsigned long long)need);
        job_free(j);
        goto done;
      }
    }
  }
  st = job_enqueue(j, inputs, timing != NULL, err);
  if (st != VYRE_OK) {
    job_abort(j);
    goto done;
  }
  j->t_enqueued = vc_now_ns();
  st = job_finish(j, out, slots, timing, err);
done:
  vc_leave(b);
  return st;
}

vyre_status vc_dispatch(vyre_backend *self, const vyre_program_ref *program,
                        const vyre_input *inputs, uint32_t input_count,
                        const vyre_dispatch_options *options, vyre_outputs **out,
                        vyre_timing *timing, vyre_error *err) {
  if (!out)
    return vyre_error_set(err, VYRE_INVALID_ARGUMENT, 0,
                          "dispatch: out is NULL. Fix: pass a vyre_outputs * to receive the "
                          "outputs");
  *out = NULL;
  return host_dispatch(vc_self(self), program, inputs, input_count, options, out, NULL, 0,
                       timing, err);
}

vyre_status vc_dispatch_into(vyre_backend *self, const vyre_program_ref *program,
                             const vyre_input *inputs, uint32_t input_count,
                             const vyre_dispatch_options *options, vyre_output_slot *outputs,
                             uint32_t output_count, vyre_timing *timing, vyre_error *err) {
  return host_dispatch(vc_self(self), program, inputs, input_count, options, NULL, outputs,
                       output_count, timing, err);
}

vyre_status vc_dispatch_async(vyre_backend *self, const vyre_program_ref *program,
                              const vyre_input *inputs, uint32_t input_count,
                              const vyre_dispatch_options *options, vyre_pending *out,
                              vyre_error *err) {
  vc_backend *b = vc_self(self);
  uint64_t t_entry = vc_now_ns();
  if (!out)
    return vyre_error_set(err, VYRE_INVALID_ARGUMENT, 0,
                          "dispatch_async: out is NULL. Fix: pass a vyre_pending * to receive "
                          "the handle");
  *out = 0;
  vyre_status st = check_options(options, err);
  if (st != VYRE_OK) return st;
  vyre_dispatch_options o;
  vc_options_read(options, &o);
  st = vc_enter(b, err);
  if (st != VYRE_OK) return st;
  vc_job *j = NULL;
  st = job_prepare(b, program, inputs, input_count, &o, &j, err);
  if (st != VYRE_OK) goto done;
  j->t_entry = t_entry;
  /* Timing is asked for at wait, so async dispatches always record it. */
  st = job_enqueue(j, inputs, 1, err);
  if (st != VYRE_OK) {
    job_abort(j);
    goto done;
  }
  j->t_enqueued = vc_now_ns();
  if (vyre_handles_insert(&b->pending, j, out) != 0) {
    st = vyre_error_set(err, VYRE_OUT_OF_MEMORY, 0,
                        "dispatch_async: no pending handle available. Fix: wait on or release "
                        "pending dispatches");
    job_abort(j);
    *out = 0;
  }
done:
  vc_leave(b);
  return st;
}

static vyre_status pending_missing(vyre_pending h, const char *what, vyre_error *err) {
  return vyre_error_set(err, VYRE_INVALID_HANDLE, 0,
                        "%s: pending handle 0x%016llx is not live on this backend (already "
                        "waited on or released, or from another instance). Fix: wait on or "
                        "release each pending handle once",
                        what, (unsigned long long)h);
}

vyre_status vc_pending_poll(vyre_backend *self, vyre_pending pending, int *ready,
                            vyre_error *err) {
  vc_backend *b = vc_self(self);
  if (!ready)
    return vyre_error_set(err, VYRE_INVALID_ARGUMENT, 0,
                          "pending_poll: ready is NULL. Fix: pass an int to receive it");
  *ready = 0;
  vc_job *j = vyre_handles_get(&b->pending, pending);
  if (!j) return pending_missing(pending, "pending_poll", err);
  vyre_status st = vc_enter(b, err);
  if (st != VYRE_OK) return st;
  CUresult r = VC_CU(b, cuEventQuery, (j->done));
  if (r == CUDA_SUCCESS) {
    *ready = 1;
  } else if (r == CUDA_ERROR_NOT_READY) {
    *ready = 0;
  } else if (vc_is_sticky(r)) {
    st = vc_cu_fail(b, err, r, "cuEventQuery", j->L.plan->info.entry, NULL);
  } else {
    /* Failed is "ready": pending_wait reports what happened. */
    vc_cu_note(b, r, "cuEventQuery");
    *ready = 1;
  }
  vc_leave(b);
  return st;
}

vyre_status vc_pending_wait(vyre_backend *self, vyre_pending pending, vyre_outputs **out,
                            vyre_timing *timing, vyre_error *err) {
  vc_backend *b = vc_self(self);
  if (out) *out = NULL;
  vc_job *j = vyre_handles_remove(&b->pending, pending);
  if (!j) return pending_missing(pending, "pending_wait", err);
  vyre_status st = vc_enter(b, err);
  if (st != VYRE_OK) {
    /* Lost (or the context cannot be made current): the handle is
     * released all the same. */
    if (vc_is_lost(b)) job_free(j);
    else defer_job(j);
    return st;
  }
  st = check_timing(timing, err);
  if (st != VYRE_OK) {
    defer_job(j);
  } else if (!out) {
    st = vyre_error_set(err, VYRE_INVALID_ARGUMENT, 0,
                        "pending_wait: out is NULL (the pending dispatch is released). Fix: "
                        "pass a vyre_outputs * to receive the outputs");
    defer_job(j);
  } else {
    st = job_finish(j, out, NULL, timing, err);
  }
  vc_leave(b);
  return st;
}

vyre_status vc_pending_release(vyre_backend *self, vyre_pending pending, vyre_error *err) {
  vc_backend *b = vc_self(self);
  vc_job *j = vyre_handles_remove(&b->pending, pending);
  if (!j) return pending_missing(pending, "pending_release", err);
  if (vc_is_lost(b)) {
    job_free(j);
    return VYRE_OK;
  }
  /* Reclaimed when its work completes: on a later call or at destroy. */
  defer_job(j);
  CUresult r = VC_CU(b, cuCtxPushCurrent, (b->ctx));
  if (r == CUDA_SUCCESS) {
    vc_reap_deferred(b, 0);
    vc_leave(b);
  } else {
    /* The handle is released; its work is reclaimed by a later call. */
    vc_cu_note(b, r, "cuCtxPushCurrent");
  }
  return VYRE_OK;
}

void vc_outputs_free(vyre_backend *self, vyre_outputs *outputs) {
  (void)self;
  free(outputs);
}

/* ------------------------------------------------------------------ */
/* Resident dispatch and sequences                                     */
/* ------------------------------------------------------------------ */
static void graph_destroy(vc_backend *b, vc_graph *g) {
  if (!g) return;
  if (!vc_cleanup_ok(b)) g->exec = NULL, g->graph = NULL; /* go with the context */
  if (g->exec) {
    CUresult r = VC_CU(b, cuGraphExecDestroy, (g->exec));
    if (r != CUDA_SUCCESS) vc_cu_note(b, r, "cuGraphExecDestroy");
  }
  if (g->graph) {
    CUresult r = VC_CU(b, cuGraphDestroy, (g->graph));
    if (r != CUDA_SUCCESS) vc_cu_note(b, r, "cuGraphDestroy");
  }
  for (uint32_t i = 0; i < g->steps; i++) {
    if (g->params_dev) vc_mempool_release(&b->devpool, &g->params_dev[i]);
    if (g->plans && g->plans[i]) vc_plan_unref(b, g->plans[i]);
  }
  free(g->params_dev);
  free(g->plans);
  free(g->handles);
  free(g);
}

static void graph_release(vc_backend *b, vc_graph *g) {
  vc_graphcache *c = &b->graphs;
  pthread_mutex_lock(&c->lock);
  g->busy = 0;
  int destroy = g->stale;
  pthread_mutex_unlock(&c->lock);
  if (destroy) graph_destroy(b, g);
}

void vc_graphs_forget_resident(vc_backend *b, vyre_resident h) {
  vc_graphcache *c = &b->graphs;
  vc_graph *doomed = NULL;
  pthread_mutex_lock(&c->lock);
  vc_graph **pp = &c->head;
  while (*pp) {
    vc_graph *g = *pp;
    int uses = 0;
    for (uint32_t i = 0; i < g->handle_count && !uses; i++) uses = g->handles[i] == h;
    if (!uses) {
      pp = &g->next;
      continue;
    }
    *pp = g->next;
    c->count--;
    if (g->busy) {
      g->stale = 1;
    } else {
      g->next = doomed;
      doomed = g;
    }
  }
  pthread_mutex_unlock(&c->lock);
  while (doomed) {
    vc_graph *g = doomed;
    doomed = g->next;
    graph_destroy(b, g);
  }
}

static void graphs_clear(vc_backend *b) {
  vc_graphcache *c = &b->graphs;
  pthread_mutex_lock(&c->lock);
  vc_graph *list = c->head, *keep = NULL;
  c->head = NULL;
  c->count = 0;
  pthread_mutex_unlock(&c->lock);
  while (list) {
    vc_graph *g = list;
    list = g->next;
    pthread_mutex_lock(&c->lock);
    int busy = g->busy;
    if (busy) g->stale = 1;
    pthread_mutex_unlock(&c->lock);
    if (!busy) graph_destroy(b, g);
    else {
      g->next = keep;
      keep = g;
    }
  }
  (void)keep; /* busy graphs are destroyed by their user (stale) */
}

/* Key of a step list for the graph cache: every plan, launch shape,
 * buffer pointer and params word that the captured kernels bake in. */
static void sequence_key(launch *Ls, uint32_t n, const vyre_sequence_step *steps,
                         uint8_t out[32]) {
  vyre_sha256_ctx ctx;
  vyre_sha256_init(&ctx);
  for (uint32_t i = 0; i < n; i++) {
    launch *L = &Ls[i];
    vyre_sha256_update(&ctx, L->plan->key, 32);
    vyre_sha256_update(&ctx, L->grid, sizeof L->grid);
    vyre_sha256_update(&ctx, L->block, sizeof L->block);
    vyre_sha256_update(&ctx, &L->iterations, sizeof L->iterations);
    vyre_sha256_update(&ctx, L->ptrs, L->plan->info.kernel_buffers * sizeof L->ptrs[0]);
    vyre_sha256_update(&ctx, steps[i].buffers, steps[i].buffer_count * sizeof(vyre_resident));
    vyre_sha256_update(&ctx, (const void *)(uintptr_t)L->params_host.ptr,
                       (size_t)L->params_words * 4u);
  }
  vyre_sha256_final(&ctx, out);
}

/* The cached graph for key, marked busy; NULL on a miss, or when another
 * thread is replaying it (*busy = 1: take the plain path). */
static vc_graph *graph_lookup(vc_backend *b, const uint8_t key[32], int *busy) {
  vc_graphcache *c = &b->graphs;
  *busy = 0;
  pthread_mutex_lock(&c->lock);
  vc_graph **pp = &c->head, *g = NULL;
  while (*pp) {
    if (memcmp((*pp)->key, key, 32) == 0) {
      g = *pp;
      if (g->busy) {
        g = NULL;
        *busy = 1;
        break;
      }
      *pp = g->next; /* move to front */
      g->next = c->head;
      c->head = g;
      g->busy = 1;
      c->hits++;
      break;
    }
    pp = &(*pp)->next;
  }
  if (!g && !*busy) c->misses++;
  pthread_mutex_unlock(&c->lock);
  return g;
}

static void graph_insert(vc_backend *b, vc_graph *g) {
  vc_graphcache *c = &b->graphs;
  vc_graph *evict = NULL;
  pthread_mutex_lock(&c->lock);
  g->next = c->head;
  c->head = g;
  c->count++;
  if (c->count > c->capacity) {
    /* Drop the least recently used idle graph. */
    vc_graph **pp = &c->head, **victim = NULL;
    while (*pp) {
      if (!(*pp)->busy) victim = pp;
      pp = &(*pp)->next;
    }
    if (victim) {
      evict = *victim;
      *victim = evict->next;
      c->count--;
    }
  }
  pthread_mutex_unlock(&c->lock);
  if (evict) graph_destroy(b, evict);
}

/* Capture the steps' launches (no copies) on `s` into a graph. */
static vyre_status graph_capture(vc_backend *b, launch *Ls, uint32_t n,
                                 const vyre_sequence_step *steps, const uint8_t key[32],
                                 CUstream s, int *stream_bad, vc_graph **out, vyre_error *err) {
  *out = NULL;
  vc_graph *g = calloc(1, sizeof *g);
  uint32_t handles = 0;
  for (uint32_t i = 0; i < n; i++) handles += steps[i].buffer_count;
  if (g) {
    g->plans = calloc(n, sizeof *g->plans);
    g->params_dev = calloc(n, sizeof *g->params_dev);
    g->handles = calloc(handles ? handles : 1, sizeof *g->handles);
  }
  if (!g || !g->plans || !g->params_dev || !g->handles) {
    graph_destroy(b, g);
    return vyre_error_set(err, VYRE_OUT_OF_MEMORY, 0,
                          "dispatch_sequence: no host memory for a graph record. Fix: free host "
                          "memory");
  }
  memcpy(g->key, key, 32);
  g->steps = n;
  for (uint32_t i = 0; i < n; i++) {
    for (uint32_t k = 0; k < steps[i].buffer_count; k++)
      g->handles[g->handle_count++] = steps[i].buffers[k];
    /* The graph keeps the plans its kernels use. */
    g->plans[i] = Ls[i].plan;
    vc_plan_ref(g->plans[i]);
  }
  /* Thread-local capture: other threads' driver calls are unaffected. */
  CUresult r = VC_CU(b, cuStreamBeginCapture, (s, CU_STREAM_CAPTURE_MODE_THREAD_LOCAL));
  if (r != CUDA_SUCCESS) {
    vyre_status st = vc_cu_fail(b, err, r, "cuStreamBeginCapture", NULL, NULL);
    graph_destroy(b, g);
    return st;
  }
  vyre_status st = VYRE_OK;
  /* Captured launches do not run (replays count them). */
  for (uint32_t i = 0; i < n && st == VYRE_OK; i++) st = enqueue_launch(b, &Ls[i], s, 0, err);
  CUgraph graph = NULL;
  r = VC_CU(b, cuStreamEndCapture, (s, &graph));
  g->graph = graph;
  if (r != CUDA_SUCCESS) *stream_bad = 1; /* it may still be capturing */
  if (st != VYRE_OK) {
    graph_destroy(b, g);
    return st;
  }
  if (r != CUDA_SUCCESS || !graph) {
    st = r != CUDA_SUCCESS ? vc_cu_fail(b, err, r, "cuStreamEndCapture", NULL, NULL)
                           : vyre_error_set(err, VYRE_DRIVER, 0,
                                            "cuStreamEndCapture returned no graph. Fix: update "
                                            "the NVIDIA driver");
    graph_destroy(b, g);
    return st;
  }
  r = VC_CU(b, cuGraphInstantiateWithFlags, (&g->exec, graph, 0));
  if (r != CUDA_SUCCESS) {
    g->exec = NULL;
    st = vc_cu_fail(b, err, r, "cuGraphInstantiateWithFlags", NULL, NULL);
    graph_destroy(b, g);
    return st;
  }
  /* Success: the params blocks the kernels point at now belong to the
   * graph (on failure they stayed with the steps, released after the
   * stream is idle). */
  for (uint32_t i = 0; i < n; i++) {
    g->params_dev[i] = Ls[i].params_dev;
    Ls[i].params_dev.ptr = 0;
    Ls[i].params_dev.size = 0;
  }
  g->busy = 1;
  *out = g;
  return VYRE_OK;
}

/* Run steps x repeat on one stream with one synchronisation, then the
 * reads.  Shared by dispatch_resident (one step) and dispatch_sequence. */
static vyre_status run_sequence(vc_backend *b, const vyre_sequence_step *steps, uint32_t n,
                                uint32_t repeat, const vyre_resident_copy *reads,
                                uint32_t read_count, vyre_timing *timing, const char *what,
                                vyre_error *err) {
  uint64_t t_entry = vc_now_ns();
  vyre_status st = check_timing(timing, err);
  if (st != VYRE_OK) return st;
  if (n && !steps)
    return vyre_error_set(err, VYRE_INVALID_ARGUMENT, 0,
                          "%s: steps is NULL for %u steps. Fix: pass the step array", what, n);
  if (repeat == 0) repeat = 1;
  st = vc_enter(b, err);
  if (st != VYRE_OK) return st;

  launch *Ls = n ? calloc(n, sizeof *Ls) : NULL;
  vc_segment *segs = NULL;
  vc_graph *g = NULL;
  CUstream s = NULL;
  CUevent t0 = NULL, t1 = NULL;
  int enqueued = 0, any_trap = 0, cooperative = 0, stream_bad = 0;
  CUresult r;
  if (n && !Ls) {
    st = vyre_error_set(err, VYRE_OUT_OF_MEMORY, 0,
                        "%s: no host memory for %u step records. Fix: free host memory", what, n);
    goto done;
  }
  /* Check everything before any work is queued. */
  for (uint32_t i = 0; i < n; i++) {
    const vyre_sequence_step *sp = &steps[i];
    if (sp->struct_size < sizeof *sp) {
      st = vyre_error_set(err, VYRE_INVALID_ARGUMENT, 0,
                          "%s: step %u has struct_size %u, expected %zu. Fix: set struct_size "
                          "= sizeof(vyre_sequence_step)",
                          what, i, sp->struct_size, sizeof *sp);
      goto done;
    }
    st = check_options(sp->options, err);
    if (st != VYRE_OK) goto step_fail;
    vyre_dispatch_options o;
    vc_options_read(sp->options, &o);
    st = resolve_plan(b, &sp->program, &o, &Ls[i].plan, err);
    if (st != VYRE_OK) goto step_fail;
    const vyre_program *prog = Ls[i].plan->program;
    if (sp->buffer_count != prog->kernel_buffer_count || (sp->buffer_count && !sp->buffers)) {
      st = vyre_error_set(err, VYRE_INVALID_ARGUMENT, 0,
                          "%s: %u resident buffers given, the program has %u non-workgroup "
                          "buffers. Fix: pass one resident handle per non-workgroup buffer in "
                          "declaration order",
                          what, sp->buffer_count, prog->kernel_buffer_count);
      goto step_fail;
    }
    uint64_t sizes[VYRE_MAX_BUFFERS];
    for (uint32_t k = 0; k < sp->buffer_count; k++) {
      vc_resident *res = vc_resident_get(b, sp->buffers[k], what, err);
      if (!res) {
        st = VYRE_INVALID_HANDLE;
        vyre_error_prefix(err, "buffer %u", k);
        goto step_fail;
      }
      sizes[k] = res->size;
      Ls[i].ptrs[k] = res->ptr;
    }
    st = shape_launch(b, &Ls[i], NULL, sizes, &o, err);
    if (st != VYRE_OK) goto step_fail;
    /* Repeated sequences are captured into graphs that own their params. */
    st = stage_params(b, &Ls[i], repeat <= 1, err);
    if (st != VYRE_OK) goto step_fail;
    if (Ls[i].plan->info.uses_trap) any_trap = 1;
    if (Ls[i].plan->info.uses_grid_barrier) cooperative = 1;
    continue;
  step_fail:
    if (n > 1) vyre_error_prefix(err, "step %u", i);
    goto done;
  }
  if (read_count) {
    st = vc_resident_plan_copies(b, reads, read_count, 0, &segs, err);
    if (st != VYRE_OK) {
      vyre_error_prefix(err, "%s reads", what);
      goto done;
    }
  }

  st = vc_stream_acquire(b, &s, err);
  if (st != VYRE_OK) goto done;
  if (timing) {
    st = vc_event_acquire(b, 1, &t0, err);
    if (st == VYRE_OK) st = vc_event_acquire(b, 1, &t1, err);
    if (st != VYRE_OK) goto done;
  }
  /* Params first (outside any graph, so every run starts from the same
   * params, trap and grid-barrier words). */
  uint8_t key[32];
  int use_graph = repeat > 1 && n > 0 && !cooperative;
  if (use_graph) {
    sequence_key(Ls, n, steps, key);
    int busy = 0;
    g = graph_lookup(b, key, &busy);
    if (busy) use_graph = 0;
    if (g)
      for (uint32_t i = 0; i < n; i++) {
        vc_mempool_release(&b->devpool, &Ls[i].params_dev);
        Ls[i].params_dev = g->params_dev[i];
      }
  }
  for (uint32_t i = 0; i < n; i++) {
    st = upload_params(b, &Ls[i], s, err);
    if (st != VYRE_OK) goto fail_enqueued;
    enqueued = 1;
  }
  if (use_graph && !g) {
    /* Let the uploads finish first: if the capture fails, nothing that is
     * still enqueued can use the params blocks we then release. */
    r = VC_CU(b, cuStreamSynchronize, (s));
    if (r != CUDA_SUCCESS) {
      st = vc_cu_fail(b, err, r, "cuStreamSynchronize", NULL, NULL);
      goto fail_enqueued;
    }
    enqueued = 0;
    st = graph_capture(b, Ls, n, steps, key, s, &stream_bad, &g, err);
    if (st != VYRE_OK) goto fail_enqueued;
    for (uint32_t i = 0; i < n; i++) Ls[i].params_dev = g->params_dev[i];
    graph_insert(b, g);
  }
  if (t0) {
    r = VC_CU(b, cuEventRecord, (t0, s));
    if (r != CUDA_SUCCESS) {
      st = vc_cu_fail(b, err, r, "cuEventRecord", NULL, NULL);
      goto fail_enqueued;
    }
  }
  for (uint32_t rep = 0; rep < repeat; rep++) {
    if (g) {
      r = VC_CU(b, cuGraphLaunch, (g->exec, s));
      if (r != CUDA_SUCCESS) {
        st = vc_cu_fail(b, err, r, "cuGraphLaunch", NULL, NULL);
        goto fail_enqueued;
      }
      pthread_mutex_lock(&b->graphs.lock);
      b->graphs.launches++;
      pthread_mutex_unlock(&b->graphs.lock);
      for (uint32_t i = 0; i < n; i++)
        if (Ls[i].grid[0] && Ls[i].grid[1] && Ls[i].grid[2]) {
          atomic_fetch_add(&b->n_launches, Ls[i].iterations);
          if (Ls[i].plan->info.grid_mode == CG_GRID_ELEMENTWISE)
            atomic_fetch_add(&b->n_fastpath_launches, Ls[i].iterations);
        }
      continue;
    }
    for (uint32_t i = 0; i < n; i++) {
      st = enqueue_launch(b, &Ls[i], s, 1, err);
      if (st != VYRE_OK) {
        if (n > 1) vyre_error_prefix(err, "step %u", i);
        goto fail_enqueued;
      }
    }
  }
  if (t1) {
    r = VC_CU(b, cuEventRecord, (t1, s));
    if (r != CUDA_SUCCESS) {
      st = vc_cu_fail(b, err, r, "cuEventRecord", NULL, NULL);
      goto fail_enqueued;
    }
  }
  for (uint32_t i = 0; i < n; i++) {
    st = read_trap(b, &Ls[i], s, err);
    if (st != VYRE_OK) goto fail_enqueued;
  }
  uint64_t t_enqueued = vc_now_ns();
  if (any_trap || !read_count) {
    /* With traps the reads wait until we know nothing trapped. */
    r = VC_CU(b, cuStreamSynchronize, (s));
    if (r != CUDA_SUCCESS) {
      st = vc_cu_fail(b, err, r, "cuStreamSynchronize", NULL, NULL);
      goto fail_enqueued;
    }
    enqueued = 0;
    for (uint32_t i = 0; i < n; i++) {
      st = check_trap(b, &Ls[i], n > 1 ? (int)i : -1, err);
      if (st != VYRE_OK) goto done;
    }
  }
  if (read_count) {
    st = vc_transfer(b, s, segs, read_count, 0, err);
    enqueued = 0;
    if (st != VYRE_OK) {
      vyre_error_prefix(err, "%s reads", what);
      goto done;
    }
  }
  if (!g)
    for (uint32_t i = 0; i < n; i++) params_keep(b, &Ls[i]);
  atomic_fetch_add(&b->n_sequences, 1);
  if (timing) {
    vyre_timing t;
    memset(&t, 0, sizeof t);
    uint64_t now = vc_now_ns();
    t.wall_ns = now - t_entry;
    t.enqueue_ns = t_enqueued - t_entry;
    t.wait_ns = now - t_enqueued;
    t.valid = VYRE_TIMING_WALL | VYRE_TIMING_ENQUEUE | VYRE_TIMING_WAIT;
    int ok;
    double ms = elapsed_ms(b, t0, t1, &ok);
    if (ok) {
      t.device_ns = (uint64_t)(ms * 1e6);
      t.valid |= VYRE_TIMING_DEVICE;
    }
    write_timing(timing, &t);
  }
  goto done;

fail_enqueued:
  if (enqueued && !stream_bad) {
    CUresult sr = VC_CU(b, cuStreamSynchronize, (s));
    if (sr != CUDA_SUCCESS) vc_cu_note(b, sr, "cuStreamSynchronize");
  }
done:
  if (g) {
    /* Blocks owned by the graph are not the steps' to release. */
    for (uint32_t i = 0; i < n; i++) {
      Ls[i].params_dev.ptr = 0;
      Ls[i].params_dev.size = 0;
    }
    graph_release(b, g);
  }
  for (uint32_t i = 0; Ls && i < n; i++) launch_release(b, &Ls[i]);
  free(Ls);
  free(segs);
  vc_event_release(b, 1, t0);
  vc_event_release(b, 1, t1);
  if (stream_bad) vc_stream_discard(b, s);
  else vc_stream_release(b, s);
  vc_leave(b);
  return st;
}

vyre_status vc_dispatch_resident(vyre_backend *self, const vyre_program_ref *program,
                                 const vyre_resident *buffers, uint32_t buffer_count,
                                 const vyre_dispatch_options *options, vyre_timing *timing,
                                 vyre_error *err) {
  vyre_sequence_step step;
  memset(&step, 0, sizeof step);
  step.struct_size = sizeof step;
  step.buffer_count = buffer_count;
  if (!program)
    return vyre_error_set(err, VYRE_INVALID_ARGUMENT, 0,
                          "dispatch_resident: program is NULL. Fix: pass a vyre_program_ref");
  step.program = *program;
  step.buffers = buffers;
  step.options = options;
  return run_sequence(vc_self(self), &step, 1, 1, NULL, 0, timing, "dispatch_resident", err);
}

vyre_status vc_dispatch_sequence(vyre_backend *self, const vyre_sequence_step *steps,
                                 uint32_t step_count, uint32_t repeat,
                                 const vyre_resident_copy *reads, uint32_t read_count,
                                 vyre_timing *timing, vyre_error *err) {
  return run_sequence(vc_self(self), steps, step_count, repeat, reads, read_count, timing,
                      "dispatch_sequence", err);
}

/* ------------------------------------------------------------------ */
/* Pipelines                                                           */
/* ------------------------------------------------------------------ */
static void pipeline_free(vc_backend *b, vc_pipeline_obj *p) {
  if (!p) return;
  if (p->plan) vc_plan_unref(b, p->plan);
  if (p->nofast) vc_plan_unref(b, p->nofast);
  pthread_mutex_destroy(&p->lock);
  free(p);
}

vyre_status vc_pipeline_create(vyre_backend *self, const void *program_bytes,
                               uint64_t program_size, const vyre_dispatch_options *options,
                               vyre_pipeline *out, vyre_error *err) {
  vc_backend *b = vc_self(self);
  if (!out)
    return vyre_error_set(err, VYRE_INVALID_ARGUMENT, 0,
                          "pipeline_create: out is NULL. Fix: pass a vyre_pipeline * to receive "
                          "the handle");
  *out = 0;
  vyre_status st = check_options(options, err);
  if (st != VYRE_OK) return st;
  vyre_dispatch_options o;
  vc_options_read(options, &o);
  /* A grid is per dispatch; the pipeline keeps the fast path when it can. */
  memset(o.grid, 0, sizeof o.grid);
  vyre_program *prog = NULL;
  st = decode(program_bytes, program_size, &prog, err);
  if (st != VYRE_OK) return st;
  st = vc_enter(b, err);
  if (st != VYRE_OK) {
    vyre_program_free(prog);
    return st;
  }
  vc_pipeline_obj *p = calloc(1, sizeof *p);
  if (!p) {
    vyre_program_free(prog);
    st = vyre_error_set(err, VYRE_OUT_OF_MEMORY, 0,
                        "pipeline_create: no host memory. Fix: free host memory");
    goto done;
  }
  pthread_mutex_init(&p->lock, NULL);
  st = plan_for_program(b, prog, &o, 0, &p->plan, err);
  if (st != VYRE_OK) {
    pipeline_free(b, p);
    goto done;
  }
  if (vyre_handles_insert(&b->pipelines, p, out) != 0) {
    pipeline_free(b, p);
    *out = 0;
    st = vyre_error_set(err, VYRE_OUT_OF_MEMORY, 0,
                        "pipeline_create: no pipeline handle available. Fix: release pipelines");
  }
done:
  vc_leave(b);
  return st;
}

vyre_status vc_pipeline_release(vyre_backend *self, vyre_pipeline pipeline, vyre_error *err) {
  vc_backend *b = vc_self(self);
  if (!vyre_handles_get(&b->pipelines, pipeline))
    return vyre_error_set(err, VYRE_INVALID_HANDLE, 0,
                          "pipeline_release: handle 0x%016llx is not a live pipeline of this "
                          "backend (already released, or from another instance). Fix: release "
                          "each pipeline once",
                          (unsigned long long)pipeline);
  int lost = vc_is_lost(b);
  if (!lost) {
    CUresult r = VC_CU(b, cuCtxPushCurrent, (b->ctx));
    if (r != CUDA_SUCCESS) {
      vyre_status st = vc_cu_fail(b, err, r, "cuCtxPushCurrent", NULL, NULL);
      vyre_error_prefix(err, "pipeline_release (the pipeline is still live)");
      return st;
    }
  }
  /* Dispatches in flight hold their own plan references. */
  pipeline_free(b, vyre_handles_remove(&b->pipelines, pipeline));
  if (!lost) vc_leave(b);
  return VYRE_OK;
}

/* ------------------------------------------------------------------ */
/* Test hook: a kernel that stores to address 0 (docs/cuda-runtime.md)  */
/* ------------------------------------------------------------------ */
static const char fault_ptx[] =
    ".version 7.0\n"
    ".target sm_50\n"
    ".address_size 64\n"
    ".visible .entry vyre_test_fault()\n"
    "{\n"
    "  .reg .u64 %rd<2>;\n"
    "  .reg .u32 %r<2>;\n"
    "  mov.u64 %rd1, 0;\n"
    "  mov.u32 %r1, 1;\n"
    "  st.volatile.global.u32 [%rd1], %r1;\n"
    "  ret;\n"
    "}\n";

static vyre_status launch_fault_kernel(vc_backend *b, CUstream s, vyre_error *err) {
  pthread_mutex_lock(&b->fault_lock);
  CUresult r = CUDA_SUCCESS;
  const char *call = NULL;
  if (!b->fault_module) {
    call = "cuModuleLoadData";
    r = VC_CU(b, cuModuleLoadData, (&b->fault_module, fault_ptx));
    if (r != CUDA_SUCCESS) b->fault_module = NULL;
    if (r == CUDA_SUCCESS) {
      call = "cuModuleGetFunction";
      r = VC_CU(b, cuModuleGetFunction, (&b->fault_fn, b->fault_module, "vyre_test_fault"));
    }
  }
  if (r == CUDA_SUCCESS) {
    call = "cuLaunchKernel";
    r = VC_CU(b, cuLaunchKernel, (b->fault_fn, 1, 1, 1, 1, 1, 1, 0, s, NULL, NULL));
  }
  pthread_mutex_unlock(&b->fault_lock);
  vc_log("test hook: launched vyre_test_fault (VYRE_CUDA_TEST_FAULT_DISPATCH)");
  if (r != CUDA_SUCCESS) return vc_cu_fail(b, err, r, call, "vyre_test_fault", NULL);
  return VYRE_OK;
}

/* ------------------------------------------------------------------ */
/* Lifetime                                                            */
/* ------------------------------------------------------------------ */
void vc_dispatch_init(vc_backend *b) {
  vyre_handles_init(&b->pending, VYRE_HANDLE_PENDING);
  vyre_handles_init(&b->pipelines, VYRE_HANDLE_PIPELINE);
  pthread_mutex_init(&b->deferred_lock, NULL);
  pthread_mutex_init(&b->fault_lock, NULL);
  b->deferred = NULL;
  atomic_init(&b->deferred_count, 0);
  memset(&b->graphs, 0, sizeof b->graphs);
  pthread_mutex_init(&b->graphs.lock, NULL);
  b->graphs.capacity = GRAPH_CACHE_CAPACITY;
  const char *hook = getenv("VYRE_CUDA_TEST_FAULT_DISPATCH");
  b->test_fault_dispatch = hook && *hook ? (uint32_t)strtoul(hook, NULL, 10) : 0u;
}

void vc_dispatch_drain(vc_backend *b, int destroying) {
  if (destroying) {
    vc_job *j;
    while ((j = vyre_handles_pop_any(&b->pending)) != NULL) defer_job(j);
    vc_pipeline_obj *p;
    while ((p = vyre_handles_pop_any(&b->pipelines)) != NULL) pipeline_free(b, p);
  }
  vc_reap_deferred(b, 1);
  graphs_clear(b);
  if (destroying) {
    if (b->fault_module && vc_cleanup_ok(b)) {
      CUresult r = VC_CU(b, cuModuleUnload, (b->fault_module));
      if (r != CUDA_SUCCESS) vc_cu_note(b, r, "cuModuleUnload");
      b->fault_module = NULL;
    }
    vyre_handles_destroy(&b->pending);
    vyre_handles_destroy(&b->pipelines);
    pthread_mutex_destroy(&b->deferred_lock);
    pthread_mutex_destroy(&b->fault_lock);
    pthread_mutex_destroy(&b->graphs.lock);
  }
}
