/* dispatch.c -- host, caller-slot, resident and sequence dispatch of the reference backend, and its pipelines. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ref.h"
#include "abi/format/indirect.h"
#include "abi/support/clock.h"
#include "abi/support/sized.h"

/* ------------------------------------------------------------------ */
/* Plans: a validated program and what was compiled in with it         */
/* ------------------------------------------------------------------ */
void ref_plan_unref(ref_plan *plan) {
  if (!plan) return;
  if (atomic_fetch_sub(&plan->refs, 1u) != 1u) return;
  vyre_program_free(plan->prog);
  free(plan);
}

static vyre_status check_workgroup(const uint32_t wg[3], vyre_error *err) {
  if (!wg[0] && !wg[1] && !wg[2]) return VYRE_OK;
  uint64_t inv = 1;
  for (int i = 0; i < 3; i++) inv *= wg[i] ? wg[i] : 1u;
  if (inv > VYRE_MAX_WORKGROUP_INVOCATIONS)
    return vyre_error_set(err, VYRE_LIMIT, 0,
                          "dispatch: workgroup override %u x %u x %u exceeds %u invocations. "
                          "Fix: choose a smaller override",
                          wg[0], wg[1], wg[2], VYRE_MAX_WORKGROUP_INVOCATIONS);
  return VYRE_OK;
}

static vyre_status decode_plan(const void *bytes, uint64_t size, const vyre_dispatch_options *o,
                               int from_pipeline, ref_plan **out, vyre_error *err) {
  *out = NULL;
  if (!bytes || !size)
    return vyre_error_set(err, VYRE_INVALID_ARGUMENT, 0,
                          "dispatch: the program has no bytes (and no pipeline). Fix: pass the "
                          "program image, or a pipeline from pipeline_create");
  if (size > SIZE_MAX)
    return vyre_error_set(err, VYRE_LIMIT, 0, "dispatch: a %llu-byte program does not fit in "
                          "memory. Fix: pass a smaller program", (unsigned long long)size);
  vyre_program *prog = NULL;
  vyre_status st = vyre_program_decode(bytes, (size_t)size, &prog, err);
  if (st) return st;
  /* Strict (ulp budget 0) admits the transcendentals: the reference
   * computes them correctly rounded (VYRE_CAP_CORRECTLY_ROUNDED, scalar.c);
   * it still refuses a float MMA, held to a bound (mma.c). */
  if ((st = check_workgroup(o->workgroup, err)) ||
      (st = ref_mma_check_strict(prog, o->ulp_budget, err))) {
    vyre_program_free(prog);
    return st;
  }
  ref_plan *plan = calloc(1, sizeof *plan);
  if (!plan) {
    vyre_program_free(prog);
    return vyre_error_set(err, VYRE_OUT_OF_MEMORY, ENOMEM,
                          "dispatch: out of host memory for the program. Fix: free memory");
  }
  atomic_init(&plan->refs, 1u);
  plan->prog = prog;
  plan->ulp_budget = o->ulp_budget;
  memcpy(plan->workgroup, o->workgroup, sizeof plan->workgroup);
  plan->from_pipeline = from_pipeline;
  *out = plan;
  return VYRE_OK;
}

/*
 * Resolve a program reference into a plan the caller then holds a
 * reference on, and merge the options: a pipeline's ulp budget and
 * workgroup override win (docs/reference-backend.md).
 */
static vyre_status plan_get(ref_backend *b, const vyre_program_ref *ref,
                            vyre_dispatch_options *opts, ref_plan **out, vyre_error *err) {
  *out = NULL;
  vyre_status st = vyre_check_program_ref(ref, "dispatch", err);
  if (st) return st;
  if (!ref->pipeline) return decode_plan(ref->bytes, ref->size, opts, 0, out, err);
  pthread_mutex_lock(&b->pipe_lock);
  ref_plan *plan = vyre_handles_get(&b->pipelines, ref->pipeline);
  if (plan) atomic_fetch_add(&plan->refs, 1u);
  pthread_mutex_unlock(&b->pipe_lock);
  if (!plan)
    return vyre_error_set(err, VYRE_INVALID_HANDLE, 0,
                          "dispatch: pipeline handle 0x%016llx is not a live pipeline of this "
                          "backend (never created, released, or from another backend). Fix: "
                          "pass a handle from pipeline_create that was not released",
                          (unsigned long long)ref->pipeline);
  const uint32_t *w = opts->workgroup;
  if ((w[0] || w[1] || w[2]) && memcmp(w, plan->workgroup, sizeof plan->workgroup) != 0) {
    ref_plan_unref(plan);
    return vyre_error_set(err, VYRE_INVALID_ARGUMENT, 0,
                          "dispatch: workgroup override %u x %u x %u differs from the one "
                          "pipeline 0x%016llx was created with. Fix: pass no workgroup override "
                          "(the pipeline's applies), or create a pipeline with this one",
                          w[0], w[1], w[2], (unsigned long long)ref->pipeline);
  }
  memcpy(opts->workgroup, plan->workgroup, sizeof plan->workgroup);
  opts->ulp_budget = plan->ulp_budget;
  *out = plan;
  return VYRE_OK;
}

/* ------------------------------------------------------------------ */
/* Host dispatch in phases                                             */
/* ------------------------------------------------------------------ */
void ref_job_release(ref_job *job) {
  for (uint32_t i = 0; i < VYRE_MAX_BUFFERS; i++) {
    free(job->mem[i]);
    job->mem[i] = NULL;
  }
  ref_plan_unref(job->plan);
  job->plan = NULL;
}

vyre_status ref_job_stage(ref_backend *b, const vyre_program_ref *program,
                          const vyre_input *inputs, uint32_t input_count,
                          const vyre_dispatch_options *options, ref_job *job, vyre_error *err) {
  memset(job, 0, sizeof *job);
  job->t_entry = vyre__now_ns();
  vyre_status st = ref_read_options(options, &job->options, &job->lim, job->t_entry, err);
  if (!st) st = vyre__indirect_refuse(options, "dispatch", err);
  if (st) return st;
  if ((st = plan_get(b, program, &job->options, &job->plan, err))) return st;
  const vyre_program *p = job->plan->prog;
  if ((st = vyre_check_inputs(inputs, input_count, p->input_count, "dispatch", err))) return st;
  uint64_t sizes[VYRE_MAX_BUFFERS];
  for (uint32_t i = 0; i < input_count; i++) sizes[i] = inputs[i].size;
  if ((st = vyre_geometry_derive(p, sizes, NULL, &job->options, &job->geo, err))) return st;
  uint64_t staged = 0;
  for (uint32_t i = 0; i < p->buffer_count; i++) {
    const vyre_buffer_info *bi = &p->buffers[i];
    uint64_t bytes = job->geo.buffer_bytes[i];
    if (bi->role == VYRE_ROLE_SHARED || !bytes) continue;
    if (bytes > SIZE_MAX) goto oom;
    if (bi->input_index >= 0) {
      job->mem[i] = malloc((size_t)bytes);
      if (!job->mem[i]) goto oom;
      memcpy(job->mem[i], inputs[bi->input_index].data, (size_t)bytes);
      staged += bytes;
    } else {
      job->mem[i] = calloc((size_t)bytes, 1); /* outputs start zeroed */
      if (!job->mem[i]) goto oom;
    }
  }
  ref_metric_add(b, REF_M_BYTES_IN, staged);
  job->iterations = job->options.fixpoint_iterations ? job->options.fixpoint_iterations : 1u;
  job->t_staged = vyre__now_ns();
  return VYRE_OK;
oom:
  return vyre_error_set(err, VYRE_OUT_OF_MEMORY, ENOMEM,
                        "dispatch: out of host memory staging the program's buffers. Fix: use "
                        "smaller buffers");
}

/* Count one launch's work in the metrics. */
static void count_exec(ref_backend *b, const ref_exec_stats *stats, uint64_t ns,
                       vyre_status st) {
  ref_metric_add(b, REF_M_LAUNCHES, stats->launches);
  ref_metric_add(b, REF_M_INVOCATIONS, stats->invocations);
  ref_metric_add(b, REF_M_EXEC_NS, ns);
  ref_metric_max(b, REF_M_THREADS_USED, stats->threads_used);
  if (st == VYRE_TRAP) ref_metric_add(b, REF_M_TRAPS, 1);
  if (stats->budget_exceeded) ref_metric_add(b, REF_M_BUDGET, 1);
}

vyre_status ref_job_run(ref_backend *b, ref_job *job, vyre_error *err) {
  ref_exec_stats stats;
  job->t_run_start = vyre__now_ns();
  vyre_status st = ref_mma_execute(job->plan->prog, &job->geo, job->mem, job->iterations,
                                   b->threads, &job->lim, &stats, job->bounds, err);
  job->t_run_end = vyre__now_ns();
  count_exec(b, &stats, job->t_run_end - job->t_run_start, st);
  return st;
}

void ref_outputs_free(vyre_backend *self, vyre_outputs *outputs) {
  (void)self;
  if (!outputs) return;
  for (uint32_t i = 0; i < outputs->count; i++) free(outputs->items[i].data);
  free(outputs->items);
  free(outputs);
}

vyre_status ref_job_outputs(ref_backend *b, ref_job *job, vyre_outputs **out, vyre_error *err) {
  const vyre_program *p = job->plan->prog;
  vyre_outputs *o = calloc(1, sizeof *o);
  if (!o) goto oom;
  o->struct_size = sizeof *o;
  o->items = calloc(p->output_count ? p->output_count : 1, sizeof *o->items);
  if (!o->items) goto oom;
  o->count = p->output_count;
  uint64_t moved = 0;
  for (uint32_t i = 0; i < p->buffer_count; i++) {
    int k = p->buffers[i].output_index;
    if (k < 0) continue;
    uint64_t off = job->geo.out_offset[i], size = job->geo.out_size[i];
    vyre_output *item = &o->items[k];
    item->size = size;
    if (!size) continue;
    if (off == 0 && size == job->geo.buffer_bytes[i]) {
      /* The whole buffer: hand the staging memory over. */
      item->data = job->mem[i];
      job->mem[i] = NULL;
    } else {
      item->data = malloc((size_t)size);
      if (!item->data) goto oom;
      memcpy(item->data, job->mem[i] + off, (size_t)size);
    }
    moved += size;
  }
  ref_metric_add(b, REF_M_BYTES_OUT, moved);
  *out = o;
  return VYRE_OK;
oom:
  ref_outputs_free(&b->head, o);
  return vyre_error_set(err, VYRE_OUT_OF_MEMORY, ENOMEM,
                        "dispatch: out of host memory for the outputs. Fix: use smaller outputs");
}

static void job_timing(const ref_job *job, vyre_timing *timing) {
  ref_timing_report(timing, job->t_entry, job->t_staged, job->t_run_end - job->t_run_start,
                    vyre__now_ns());
}

static void count_dispatch(ref_backend *b, vyre_status st) {
  ref_metric_add(b, REF_M_DISPATCHES, 1);
  if (st) ref_metric_add(b, REF_M_DISPATCH_ERRORS, 1);
}

vyre_status ref_dispatch(ref_backend *b, const vyre_program_ref *program,
                         const vyre_input *inputs, uint32_t input_count,
                         const vyre_dispatch_options *options, vyre_outputs **out,
                         vyre_timing *timing, vyre_error *err) {
  if (!out)
    return vyre_error_set(err, VYRE_INVALID_ARGUMENT, 0,
                          "dispatch: out is NULL. Fix: pass a vyre_outputs ** to receive the "
                          "outputs");
  *out = NULL;
  ref_job job;
  vyre_status st = ref_job_stage(b, program, inputs, input_count, options, &job, err);
  if (!st) st = ref_mma_bound_find(options, &job.bounds, err);
  if (!st) st = ref_job_run(b, &job, err);
  if (!st) st = ref_job_outputs(b, &job, out, err);
  if (!st) job_timing(&job, timing);
  ref_job_release(&job);
  count_dispatch(b, st);
  return st;
}

vyre_status ref_dispatch_into(ref_backend *b, const vyre_program_ref *program,
                              const vyre_input *inputs, uint32_t input_count,
                              const vyre_dispatch_options *options, vyre_output_slot *outputs,
                              uint32_t output_count, vyre_timing *timing, vyre_error *err) {
  ref_job job;
  vyre_status st = ref_job_stage(b, program, inputs, input_count, options, &job, err);
  if (!st) st = ref_mma_bound_find(options, &job.bounds, err);
  if (st) goto done;
  const vyre_program *p = job.plan->prog;
  if (output_count != p->output_count || (output_count && !outputs)) {
    st = vyre_error_set(err, VYRE_INVALID_ARGUMENT, 0,
                        "dispatch_into: %u output slots given (%s), the program returns %u "
                        "outputs. Fix: pass one vyre_output_slot per output in declaration "
                        "order",
                        output_count, outputs ? "non-NULL" : "NULL", p->output_count);
    goto done;
  }
  /* Every slot is checked before anything runs or is written. */
  for (uint32_t i = 0; i < p->buffer_count; i++) {
    int k = p->buffers[i].output_index;
    if (k < 0) continue;
    uint64_t need = job.geo.out_size[i];
    if (outputs[k].capacity < need || (need && !outputs[k].data)) {
      st = vyre_error_set(err, VYRE_INVALID_ARGUMENT, 0,
                          "dispatch_into: output slot %d ('%s') has capacity %llu%s, the output "
                          "is %llu bytes. Fix: pass a slot of at least %llu bytes",
                          k, p->buffers[i].name, (unsigned long long)outputs[k].capacity,
                          outputs[k].data ? "" : " and no memory", (unsigned long long)need,
                          (unsigned long long)need);
      goto done;
    }
  }
  if ((st = ref_job_run(b, &job, err))) goto done;
  uint64_t moved = 0;
  for (uint32_t i = 0; i < p->buffer_count; i++) {
    int k = p->buffers[i].output_index;
    if (k < 0) continue;
    uint64_t size = job.geo.out_size[i];
    if (size) memcpy(outputs[k].data, job.mem[i] + job.geo.out_offset[i], (size_t)size);
    outputs[k].size = size;
    moved += size;
  }
  ref_metric_add(b, REF_M_BYTES_OUT, moved);
  job_timing(&job, timing);
done:
  ref_job_release(&job);
  count_dispatch(b, st);
  return st;
}

/* ------------------------------------------------------------------ */
/* Resident dispatch and sequences                                     */
/* ------------------------------------------------------------------ */

/* Map a step's resident handles onto the program's buffers and derive
 * its geometry; the caller holds store_lock shared. */
static vyre_status bind_resident(ref_backend *b, const vyre_program *p,
                                 const vyre_resident *buffers, uint32_t buffer_count,
                                 const vyre_dispatch_options *opts, uint8_t **mem,
                                 vyre_geometry *geo, vyre_error *err) {
  if (buffer_count != p->kernel_buffer_count || (buffer_count && !buffers))
    return vyre_error_set(err, VYRE_INVALID_ARGUMENT, 0,
                          "dispatch_resident: %u resident buffers given (%s), the program binds "
                          "%u (every buffer except workgroup ones, in declaration order). Fix: "
                          "pass one resident buffer per binding",
                          buffer_count, buffers ? "non-NULL" : "NULL", p->kernel_buffer_count);
  uint64_t sizes[VYRE_MAX_BUFFERS];
  memset(mem, 0, VYRE_MAX_BUFFERS * sizeof *mem);
  for (uint32_t i = 0; i < p->buffer_count; i++) {
    const vyre_buffer_info *bi = &p->buffers[i];
    if (bi->role == VYRE_ROLE_SHARED) continue;
    uint32_t k = bi->kernel_index;
    mem[i] = ref_resident_data(b, buffers[k], &sizes[k]);
    if (!mem[i])
      return vyre_error_set(err, VYRE_INVALID_HANDLE, 0,
                            "dispatch_resident: buffer %u ('%s'): resident handle 0x%016llx is "
                            "not a live resident buffer of this backend. Fix: pass a handle "
                            "that resident_alloc returned and that was not freed",
                            k, bi->name, (unsigned long long)buffers[k]);
  }
  return vyre_geometry_derive(p, NULL, sizes, opts, geo, err);
}

vyre_status ref_dispatch_resident(ref_backend *b, const vyre_program_ref *program,
                                  const vyre_resident *buffers, uint32_t buffer_count,
                                  const vyre_dispatch_options *options, vyre_timing *timing,
                                  vyre_error *err) {
  uint64_t t0 = vyre__now_ns();
  vyre_dispatch_options opts;
  ref_limits lim;
  ref_plan *plan = NULL;
  vyre_status st = ref_read_options(options, &opts, &lim, t0, err);
  if (!st) st = plan_get(b, program, &opts, &plan, err);
  if (st) goto done;
  uint8_t *mem[VYRE_MAX_BUFFERS];
  vyre_geometry *geo = malloc(sizeof *geo);
  if (!geo) {
    st = vyre_error_set(err, VYRE_OUT_OF_MEMORY, ENOMEM,
                        "dispatch_resident: out of host memory. Fix: free memory");
    goto done;
  }
  pthread_rwlock_rdlock(&b->store_lock);
  st = bind_resident(b, plan->prog, buffers, buffer_count, &opts, mem, geo, err);
  const uint8_t *counts = NULL;
  if (!st) st = ref_indirect_bind(b, options, "dispatch_resident", &counts, err);
  if (!st) {
    ref_exec_stats stats;
    uint64_t t1 = vyre__now_ns();
    int over;
    st = ref_indirect_execute(plan->prog, geo, mem,
                              opts.fixpoint_iterations ? opts.fixpoint_iterations : 1u, counts, -1,
                              b->threads, &lim, &stats, &over, err);
    uint64_t t2 = vyre__now_ns();
    count_exec(b, &stats, t2 - t1, st);
    if (!st) ref_timing_report(timing, t0, t1, t2 - t1, t2);
  }
  pthread_rwlock_unlock(&b->store_lock);
  free(geo);
done:
  ref_plan_unref(plan);
  count_dispatch(b, st);
  return st;
}

/* A checked sequence's steps, `rounds` times (store_lock held).  An
 * indirect count past its bound fails the call but not the other steps:
 * the first such report is kept and the run goes on; any other failure
 * stops it.  *exec_ns: the time spent executing. */
static vyre_status run_rounds(ref_backend *b, ref_plan **plans, const vyre_geometry *geos,
                              uint8_t **mems, const uint32_t *iters, const ref_limits *lims,
                              const uint8_t **counts, uint32_t step_count, uint32_t rounds,
                              uint64_t *exec_ns, vyre_error *err) {
  vyre_error over_err = VYRE_ERROR_INIT;
  for (uint32_t r = 0; r < rounds; r++) {
    for (uint32_t s = 0; s < step_count; s++) {
      ref_exec_stats stats;
      uint64_t e0 = vyre__now_ns();
      int over;
      vyre_error one = VYRE_ERROR_INIT;
      vyre_status st = ref_indirect_execute(
          plans[s]->prog, &geos[s], mems + (size_t)s * VYRE_MAX_BUFFERS, iters[s], counts[s],
          step_count > 1 ? (int)s : -1, b->threads, &lims[s], &stats, &over, &one);
      uint64_t e1 = vyre__now_ns();
      *exec_ns += e1 - e0;
      count_exec(b, &stats, e1 - e0, st);
      if (st && over) {
        if (!over_err.status) over_err = one;
      } else if (st) {
        vyre_error_copy(err, &one);
        vyre_error_prefix(err, "dispatch_sequence: step %u of round %u", s, r);
        return st;
      }
    }
  }
  /* Like a trap: the caller then performs no reads. */
  if (over_err.status) vyre_error_copy(err, &over_err);
  return (vyre_status)over_err.status;
}

vyre_status ref_dispatch_sequence(ref_backend *b, const vyre_sequence_step *steps,
                                  uint32_t step_count, uint32_t repeat,
                                  const vyre_resident_copy *reads, uint32_t read_count,
                                  vyre_timing *timing, vyre_error *err) {
  uint64_t t0 = vyre__now_ns();
  if ((step_count && !steps) || (read_count && !reads))
    return vyre_error_set(err, VYRE_INVALID_ARGUMENT, 0,
                          "dispatch_sequence: steps or reads is NULL with a non-zero count (%u "
                          "steps, %u reads). Fix: pass the arrays",
                          step_count, read_count);
  vyre_status st = VYRE_OK;
  ref_plan **plans = calloc(step_count ? step_count : 1, sizeof *plans);
  vyre_geometry *geos = calloc(step_count ? step_count : 1, sizeof *geos);
  uint8_t **mems = calloc((size_t)(step_count ? step_count : 1) * VYRE_MAX_BUFFERS, sizeof *mems);
  uint32_t *iters = calloc(step_count ? step_count : 1, sizeof *iters);
  const uint8_t **counts = calloc(step_count ? step_count : 1, sizeof *counts);
  ref_limits *lims = calloc(step_count ? step_count : 1, sizeof *lims);
  if (!plans || !geos || !mems || !iters || !lims || !counts) {
    st = vyre_error_set(err, VYRE_OUT_OF_MEMORY, ENOMEM,
                        "dispatch_sequence: out of host memory for %u steps. Fix: free memory or "
                        "split the sequence",
                        step_count);
    goto fail_alloc;
  }
  pthread_rwlock_rdlock(&b->store_lock);
  /* Everything is checked before the first step runs. */
  for (uint32_t s = 0; s < step_count && !st; s++) {
    vyre_sequence_step step;
    size_t n = vyre__sized_read(&step, sizeof step, &steps[s]);
    vyre_dispatch_options opts;
    if (n < sizeof step || steps[s].struct_size != sizeof step)
      st = vyre_error_set(err, VYRE_INVALID_ARGUMENT, 0,
                          "struct_size %u is not %zu (steps are frozen array elements). Fix: "
                          "set steps[i].struct_size = "
                          "sizeof(vyre_sequence_step)",
                          steps[s].struct_size, sizeof step);
    if (!st) st = ref_read_options(step.options, &opts, &lims[s], t0, err);
    if (!st) st = plan_get(b, step.program, &opts, &plans[s], err);
    if (!st)
      st = bind_resident(b, plans[s]->prog, step.buffers, step.buffer_count, &opts,
                         mems + (size_t)s * VYRE_MAX_BUFFERS, &geos[s], err);
    if (!st) st = ref_indirect_bind(b, step.options, "dispatch_sequence", &counts[s], err);
    if (!st) iters[s] = opts.fixpoint_iterations ? opts.fixpoint_iterations : 1u;
    if (st) vyre_error_prefix(err, "dispatch_sequence: step %u", s);
  }
  for (uint32_t i = 0; i < read_count && !st; i++) {
    uint64_t total;
    uint8_t *data = ref_resident_data(b, reads[i].buffer, &total);
    if (!data)
      st = vyre_error_set(err, VYRE_INVALID_HANDLE, 0,
                          "dispatch_sequence: read %u: resident handle 0x%016llx is not a live "
                          "resident buffer of this backend. Fix: pass a handle from "
                          "resident_alloc that was not freed",
                          i, (unsigned long long)reads[i].buffer);
    else if (reads[i].size > total || reads[i].offset > total - reads[i].size ||
             (reads[i].size && !reads[i].host))
      st = vyre_error_set(err, VYRE_INVALID_ARGUMENT, 0,
                          "dispatch_sequence: read %u: range [%llu, +%llu) is outside the "
                          "%llu-byte buffer, or host is NULL. Fix: read within the buffer into "
                          "host memory",
                          i, (unsigned long long)reads[i].offset,
                          (unsigned long long)reads[i].size, (unsigned long long)total);
  }
  uint64_t t1 = vyre__now_ns(), exec_ns = 0;
  uint32_t rounds = repeat ? repeat : 1u;
  if (!st) st = run_rounds(b, plans, geos, mems, iters, lims, counts, step_count, rounds,
                          &exec_ns, err);
  uint64_t moved = 0;
  for (uint32_t i = 0; i < read_count && !st; i++) {
    uint64_t total;
    uint8_t *data = ref_resident_data(b, reads[i].buffer, &total);
    if (reads[i].size) memcpy(reads[i].host, data + reads[i].offset, (size_t)reads[i].size);
    moved += reads[i].size;
  }
  pthread_rwlock_unlock(&b->store_lock);
  ref_metric_add(b, REF_M_BYTES_OUT, moved);
  if (!st) {
    ref_metric_add(b, REF_M_SEQUENCES, 1);
    ref_timing_report(timing, t0, t1, exec_ns, vyre__now_ns());
  }
fail_alloc:
  for (uint32_t s = 0; plans && s < step_count; s++) ref_plan_unref(plans[s]);
  free(plans);
  free(geos);
  free(mems);
  free(iters);
  free(lims);
  free(counts);
  count_dispatch(b, st);
  return st;
}

/* ------------------------------------------------------------------ */
/* Pipelines                                                           */
/* ------------------------------------------------------------------ */
vyre_status ref_pipeline_create(ref_backend *b, const void *program_bytes,
                                uint64_t program_size, const vyre_dispatch_options *options,
                                vyre_pipeline *out, vyre_error *err) {
  if (!out)
    return vyre_error_set(err, VYRE_INVALID_ARGUMENT, 0,
                          "pipeline_create: out is NULL. Fix: pass a vyre_pipeline * to receive "
                          "the handle");
  *out = 0;
  vyre_dispatch_options opts;
  ref_plan *plan;
  vyre_status st = ref_read_options(options, &opts, NULL, 0, err);
  if (!st) st = decode_plan(program_bytes, program_size, &opts, 1, &plan, err);
  if (st) {
    vyre_error_prefix(err, "pipeline_create");
    return st;
  }
  st = vyre_handles_insert(&b->pipelines, plan, out);
  if (st != VYRE_OK) {
    ref_plan_unref(plan);
    return vyre_handles_insert_failed(err, st, "pipeline_create", "pipelines",
                                      "release the pipelines you no longer use "
                                    "(pipeline_release)");
  }
  ref_metric_add(b, REF_M_PIPELINES_CREATED, 1);
  return VYRE_OK;
}

vyre_status ref_pipeline_release(ref_backend *b, vyre_pipeline pipeline, vyre_error *err) {
  pthread_mutex_lock(&b->pipe_lock);
  ref_plan *plan = vyre_handles_remove(&b->pipelines, pipeline);
  pthread_mutex_unlock(&b->pipe_lock);
  if (!plan)
    return vyre_error_set(err, VYRE_INVALID_HANDLE, 0,
                          "pipeline_release: handle 0x%016llx is not a live pipeline of this "
                          "backend (never created, already released, or from another backend). "
                          "Fix: release each pipeline once",
                          (unsigned long long)pipeline);
  /* In-flight async jobs keep their own reference. */
  ref_plan_unref(plan);
  return VYRE_OK;
}

void ref_pipeline_drain(ref_backend *b) {
  ref_plan *plan;
  while ((plan = vyre_handles_pop_any(&b->pipelines)) != NULL) ref_plan_unref(plan);
}
