/* sequence.c -- resident dispatch and sequences: check every step, then params, launches (or a graph replay), traps and reads on one stream. */
#include "sequence.h"

#include <stdlib.h>
#include <string.h>

#include "abi/format/budget.h"
#include "indirect.h"
#include "util.h"

void vc_sequencer_init(vc_sequencer *q, vc_context *cx, vc_mempool *devpool,
                       vc_streampool *streams, vc_resident_store *resident, vc_launcher *lx,
                       vc_graphcache *graphs, vc_pipelines *pipelines, vc_deferred *deferred,
                       vc_fuser *fuser) {
  q->cx = cx;
  q->devpool = devpool;
  q->streams = streams;
  q->resident = resident;
  q->lx = lx;
  q->graphs = graphs;
  q->pipelines = pipelines;
  q->deferred = deferred;
  q->fuser = fuser;
}

/* One call of run_sequence: its arguments and what it holds. */
typedef struct seq_run {
  vc_sequencer *q;
  const vyre_sequence_step *steps;
  uint32_t n, repeat;
  const vyre_resident_copy *reads;
  uint32_t read_count;
  const char *what;
  vc_launch *Ls;
  vc_segment *segs;
  vc_graph *g;
  vc_host_stream host; /* step 0's vyre_cuda_stream, if any */
  CUstream s;
  CUevent t0, t1;
  CUevent done; /* recorded after the work when there is a deadline */
  int enqueued, any_trap, cooperative, stream_bad;
  uint64_t t_entry, t_enqueued;
  uint64_t timeout_ns, deadline; /* the smallest vyre_limits timeout of the steps */
  /* The fast key (vc_graph_lookup_fast): the step list as passed. */
  uint8_t *fast;
  size_t fast_len;
  uint64_t fast_hash;
  int fast_hit; /* the graph was found by it: no step was resolved */
  /* Fusion (fuser.h): with fz.n, Ls/steps/n are the fused launch list and
   * Ls0/n0 the steps' own launches (those fused launches replaced). */
  vc_fused fz;
  vc_launch *Ls0;
  uint32_t n0;
} seq_run;

/* The step launch i runs (its first, for a fused launch); steps: whether
 * the call has more than one step (errors then name it). */
static int step_of(const seq_run *R, uint32_t i, int *steps) {
  *steps = (R->fz.n ? R->n0 : R->n) > 1;
  return (int)(R->fz.n ? R->fz.first[i] : i);
}

/* Check step i and shape its launch; nothing is queued. */
static vyre_status check_step(seq_run *R, uint32_t i, vyre_error *err) {
  vc_sequencer *q = R->q;
  const vyre_sequence_step *sp = &R->steps[i];
  const char *what = R->what;
  if (sp->struct_size != sizeof *sp)
    return vyre_error_set(err, VYRE_INVALID_ARGUMENT, 0,
                          "%s: step %u has struct_size %u, expected %zu (steps are frozen array "
                          "elements). Fix: set struct_size = sizeof(vyre_sequence_step)",
                          what, i, sp->struct_size, sizeof *sp);
  vyre_status st = vc_check_options(sp->options, err);
  if (st != VYRE_OK) return st;
  vc_host_stream hs;
  st = vc_host_stream_read(sp->options, what, &hs, err);
  if (st != VYRE_OK) return st;
  /* The whole sequence runs on one stream: the first step's options say
   * which host stream it follows (vyre_cuda.h). */
  if (i == 0)
    R->host = hs;
  else if (hs.set && (!R->host.set || hs.stream != R->host.stream))
    return vyre_error_set(err, VYRE_INVALID_ARGUMENT, 0,
                          "%s: step %u chains vyre_cuda_stream %p, but a sequence is ordered on "
                          "the stream its first step chains (%s). Fix: chain the stream on "
                          "step 0's options only",
                          what, i, (void *)hs.stream, R->host.set ? "another one" : "none");
  const vyre_indirect *ind;
  st = vyre__indirect_read(sp->options, what, &ind, err);
  if (st != VYRE_OK) return st;
  vyre_dispatch_options o;
  vc_options_read(sp->options, &o);
  vc_launch *L = &R->Ls[i];
  if (ind) {
    st = vc_indirect_resolve(q->resident, ind, what, &L->indirect, err);
    if (st != VYRE_OK) return st;
    L->indirect_handle = ind->buffer;
  }
  /* Indirect: the kernel with the count prologue, on the logical grid. */
  uint32_t flags = ind ? CG_INDIRECT | CG_NO_FASTPATH : 0u;
  st = vc_pipeline_resolve(q->pipelines, sp->program, &o, flags, &L->plan, err);
  if (st != VYRE_OK) return st;
  const vyre_program *prog = vc_plan_kernel(L->plan)->program;
  if (sp->buffer_count != prog->kernel_buffer_count || (sp->buffer_count && !sp->buffers))
    return vyre_error_set(err, VYRE_INVALID_ARGUMENT, 0,
                          "%s: %u resident buffers given, the program has %u non-workgroup "
                          "buffers. Fix: pass one resident handle per non-workgroup buffer in "
                          "declaration order",
                          what, sp->buffer_count, prog->kernel_buffer_count);
  uint64_t sizes[VYRE_MAX_BUFFERS];
  for (uint32_t k = 0; k < sp->buffer_count; k++) {
    st = vc_resident_lookup(q->resident, sp->buffers[k], what, &L->ptrs[k], &sizes[k], err);
    if (st != VYRE_OK) {
      vyre_error_prefix(err, "buffer %u", k);
      return st;
    }
  }
  st = vc_launch_shape(q->lx, L, NULL, sizes, &o, err);
  if (st != VYRE_OK) return st;
  L->deadline = R->deadline;
  L->timeout_ns = R->timeout_ns;
  st = vc_launch_stage_params(q->lx, L, err);
  if (st != VYRE_OK) return st;
  if (L->k->info.uses_trap) R->any_trap = 1;
  if (L->k->info.uses_grid_barrier) R->cooperative = 1;
  return VYRE_OK;
}

/* The fast key of a repeated step list: each step's pipeline handle,
 * options and resident handles as passed.  0 (no key) when a step gives
 * its program as bytes (their contents may change between calls), chains
 * extensions, or is malformed (the full path reports it). */
static int make_fast_key(seq_run *R) {
  if (R->repeat <= 1 || !R->n) return 0;
  size_t len = 0;
  for (uint32_t i = 0; i < R->n; i++) {
    const vyre_sequence_step *sp = &R->steps[i];
    if (sp->struct_size != sizeof *sp || !sp->program ||
        sp->program->struct_size < sizeof *sp->program || !sp->program->pipeline ||
        (sp->buffer_count && !sp->buffers) || sp->buffer_count > VYRE_MAX_BUFFERS)
      return 0;
    if (sp->options && (sp->options->struct_size < 8 ||
                        (sp->options->struct_size >= sizeof *sp->options && sp->options->next)))
      return 0;
    len += sizeof(uint64_t) + sizeof(vyre_dispatch_options) + sizeof(uint32_t) +
           (size_t)sp->buffer_count * sizeof(vyre_resident);
  }
  uint8_t *m = malloc(len);
  if (!m) return 0;
  size_t at = 0;
  for (uint32_t i = 0; i < R->n; i++) {
    const vyre_sequence_step *sp = &R->steps[i];
    vyre_dispatch_options o;
    memset(&o, 0, sizeof o);
    vc_options_read(sp->options, &o);
    o.struct_size = 0; /* a shorter struct means the same as its zeroed tail */
    memcpy(m + at, &sp->program->pipeline, sizeof(uint64_t));
    at += sizeof(uint64_t);
    memcpy(m + at, &o, sizeof o);
    at += sizeof o;
    memcpy(m + at, &sp->buffer_count, sizeof(uint32_t));
    at += sizeof(uint32_t);
    if (sp->buffer_count) memcpy(m + at, sp->buffers, sp->buffer_count * sizeof(vyre_resident));
    at += (size_t)sp->buffer_count * sizeof(vyre_resident);
  }
  R->fast = m;
  R->fast_len = len;
  R->fast_hash = vc_graph_fast_hash(m, len);
  return 1;
}

/* The cached graph of a step list checked before, found by its fast key;
 * its pipelines must still be live (its resident handles are: freeing one
 * forgets the graph).  On any doubt the full path runs. */
static void try_fast(seq_run *R) {
  vc_sequencer *q = R->q;
  if (!make_fast_key(R)) return;
  int busy = 0;
  vc_graph *g = vc_graph_lookup_fast(q->graphs, R->fast, R->fast_len, R->fast_hash, &busy);
  if (!g) return;
  for (uint32_t i = 0; i < R->n; i++) {
    vyre_pipeline p = R->steps[i].program->pipeline;
    if ((i == 0 || p != R->steps[i - 1].program->pipeline) && !vc_pipeline_live(q->pipelines, p)) {
      vc_graph_release(q->graphs, g); /* the full path reports the stale handle */
      return;
    }
  }
  R->g = g;
  R->fast_hit = 1;
}

/* Check everything before any work is queued: every step, every read. */
static vyre_status check_all(seq_run *R, vyre_error *err) {
  /* A fast hit's steps were checked when its graph was made. */
  for (uint32_t i = 0; !R->fast_hit && i < R->n; i++) {
    vyre_status st = check_step(R, i, err);
    if (st != VYRE_OK) {
      /* A bad struct_size is reported as it is (it names the step). */
      if (R->n > 1 && R->steps[i].struct_size == sizeof R->steps[i])
        vyre_error_prefix(err, "step %u", i);
      return st;
    }
  }
  if (R->read_count) {
    vyre_status st = vc_resident_plan_copies(R->q->resident, R->reads, R->read_count, 0, &R->segs,
                                             err);
    if (st != VYRE_OK) {
      vyre_error_prefix(err, "%s reads", R->what);
      return st;
    }
  }
  return VYRE_OK;
}

/* What one replay of the run's graph adds to the launch counters: from
 * the graph on a fast hit (no step was shaped), else from the steps. */
static void replay_counts(const seq_run *R, uint32_t *launches, uint32_t *fastpath,
                          uint32_t *fills) {
  if (R->fast_hit) {
    vc_graph_replay_counts(R->g, launches, fastpath, fills);
    return;
  }
  *launches = *fastpath = *fills = 0;
  for (uint32_t i = 0; i < R->n; i++) {
    uint32_t l, f, m;
    vc_launch_replay_counts(&R->Ls[i], &l, &f, &m);
    *launches += l;
    *fastpath += f;
    *fills += m;
  }
}

/* A graph found or captured by the full path takes the run's fast key,
 * when every step is one the fast path can replay unchecked: no trap
 * words to reset. */
static void set_fast(seq_run *R) {
  if (!R->fast || R->any_trap || R->cooperative) return;
  uint32_t launches, fastpath, fills;
  replay_counts(R, &launches, &fastpath, &fills);
  vc_graph_set_fast(R->q->graphs, R->g, R->fast, R->fast_len, R->fast_hash, launches, fastpath,
                    fills);
}

/* Params first (outside any graph, so every run starts from the same
 * params, trap and grid-barrier words); with repeat > 1 the launches are
 * captured into a graph, or the cached one is used. */
static vyre_status enqueue_params(seq_run *R, vyre_error *err) {
  vc_sequencer *q = R->q;
  uint32_t n = R->n;
  uint8_t key[32];
  if (R->fast_hit) return VYRE_OK; /* no step of it has a params block */
  int use_graph = R->repeat > 1 && n > 0 && !R->cooperative;
  if (use_graph) {
    vc_graph_key(R->Ls, n, R->steps, key);
    int busy = 0;
    R->g = vc_graph_lookup(q->graphs, key, &busy);
    if (busy) use_graph = 0;
    if (R->g)
      for (uint32_t i = 0; i < n; i++) {
        vc_mempool_release(q->devpool, &R->Ls[i].params_dev);
        R->Ls[i].params_dev = vc_graph_params(R->g, i);
      }
  }
  for (uint32_t i = 0; i < n; i++) {
    vyre_status st = vc_launch_upload_params(q->lx, &R->Ls[i], R->s, err);
    if (st != VYRE_OK) return st;
    R->enqueued = 1;
  }
  if (R->g) set_fast(R);
  if (!use_graph || R->g) return VYRE_OK;
  /* Let the uploads finish first: if the capture fails, nothing that is
   * still enqueued can use the params blocks we then release. */
  CUresult r = VC_CU(q->cx, cuStreamSynchronize, (R->s));
  if (r != CUDA_SUCCESS) return vc_cu_fail(q->cx, err, r, "cuStreamSynchronize", NULL, NULL);
  R->enqueued = 0;
  vyre_status st =
      vc_graph_capture(q->graphs, R->Ls, n, R->steps, key, R->s, &R->stream_bad, &R->g, err);
  if (st != VYRE_OK) return st;
  for (uint32_t i = 0; i < n; i++) R->Ls[i].params_dev = vc_graph_params(R->g, i);
  set_fast(R);
  vc_graph_insert(q->graphs, R->g);
  return VYRE_OK;
}

/* The launches, `repeat` times (graph replays or plain launches), between
 * the timing events, then the trap words' readback. */
static vyre_status enqueue_runs(seq_run *R, vyre_error *err) {
  vc_sequencer *q = R->q;
  CUresult r;
  vyre_status st;
  R->enqueued = 1; /* from here a failure leaves work to wait for */
  if (R->t0) {
    r = VC_CU(q->cx, cuEventRecord, (R->t0, R->s));
    if (r != CUDA_SUCCESS) return vc_cu_fail(q->cx, err, r, "cuEventRecord", NULL, NULL);
  }
  for (uint32_t rep = 0; rep < R->repeat; rep++) {
    if (R->g) {
      st = vc_graph_launch(q->graphs, R->g, R->s, err);
      if (st != VYRE_OK) return st;
      continue;
    }
    for (uint32_t i = 0; i < R->n; i++) {
      st = vc_launch_enqueue(q->lx, &R->Ls[i], R->s, 1, err);
      if (st != VYRE_OK) {
        int many, step = step_of(R, i, &many);
        if (many) vyre_error_prefix(err, "step %d", step);
        return st;
      }
    }
  }
  if (R->g) {
    uint32_t launches, fastpath, fills;
    replay_counts(R, &launches, &fastpath, &fills);
    vc_launcher_count_replays(q->lx, (uint64_t)launches * R->repeat,
                              (uint64_t)fastpath * R->repeat, (uint64_t)fills * R->repeat);
  }
  if (R->t1) {
    r = VC_CU(q->cx, cuEventRecord, (R->t1, R->s));
    if (r != CUDA_SUCCESS) return vc_cu_fail(q->cx, err, r, "cuEventRecord", NULL, NULL);
  }
  for (uint32_t i = 0; !R->fast_hit && i < R->n; i++) {
    st = vc_launch_read_trap(q->lx, &R->Ls[i], R->s, err);
    if (st != VYRE_OK) return st;
  }
  return VYRE_OK;
}

/* Wait, check traps, perform the reads; every path leaves the stream idle
 * (R->enqueued = 0) unless it failed before synchronising. */
static vyre_status complete(seq_run *R, vyre_error *err) {
  vc_sequencer *q = R->q;
  vyre_status st;
  if (R->any_trap || !R->read_count) {
    /* With traps the reads wait until we know nothing trapped. */
    CUresult r = VC_CU(q->cx, cuStreamSynchronize, (R->s));
    if (r != CUDA_SUCCESS) return vc_cu_fail(q->cx, err, r, "cuStreamSynchronize", NULL, NULL);
    R->enqueued = 0;
    for (uint32_t i = 0; !R->fast_hit && i < R->n; i++) {
      int many, step = step_of(R, i, &many);
      st = vc_launch_check_trap(q->lx, &R->Ls[i], many ? step : -1, err);
      if (st != VYRE_OK) return st;
    }
  }
  if (R->read_count) {
    st = vc_transfer(q->resident, R->s, R->segs, R->read_count, 0, err);
    R->enqueued = 0;
    if (st != VYRE_OK) {
      vyre_error_prefix(err, "%s reads", R->what);
      return st;
    }
  }
  return VYRE_OK;
}

static void write_run_timing(seq_run *R, vyre_timing *timing) {
  vyre_timing t;
  memset(&t, 0, sizeof t);
  uint64_t now = vyre__now_ns();
  t.wall_ns = now - R->t_entry;
  t.enqueue_ns = R->t_enqueued - R->t_entry;
  t.wait_ns = now - R->t_enqueued;
  t.valid = VYRE_TIMING_WALL | VYRE_TIMING_ENQUEUE | VYRE_TIMING_WAIT;
  int ok;
  double ms = vc_elapsed_ms(R->q->cx, R->t0, R->t1, &ok);
  if (ok) {
    t.device_ns = (uint64_t)(ms * 1e6);
    t.valid |= VYRE_TIMING_DEVICE;
  }
  vc_write_timing(timing, &t);
}

/* Return everything the run holds; a failed run's stream is first made
 * idle when work may still use it. */
static void run_release(seq_run *R, vyre_status st) {
  vc_sequencer *q = R->q;
  if (st != VYRE_OK && R->enqueued && !R->stream_bad && !vc_is_lost(q->cx)) {
    CUresult sr = VC_CU(q->cx, cuStreamSynchronize, (R->s));
    if (sr != CUDA_SUCCESS) vc_cu_note(q->cx, sr, "cuStreamSynchronize");
  }
  if (R->g) {
    /* Blocks owned by the graph are not the steps' to release. */
    for (uint32_t i = 0; R->Ls && i < R->n; i++) {
      R->Ls[i].params_dev.ptr = 0;
      R->Ls[i].params_dev.size = 0;
    }
    vc_graph_release(q->graphs, R->g);
  }
  for (uint32_t i = 0; R->Ls && i < R->n; i++) vc_launch_release(q->lx, &R->Ls[i]);
  free(R->Ls);
  for (uint32_t i = 0; R->Ls0 && i < R->n0; i++) vc_launch_release(q->lx, &R->Ls0[i]);
  free(R->Ls0);
  vc_fused_free(&R->fz);
  free(R->segs);
  free(R->fast);
  vc_event_release(q->streams, 1, R->t0);
  vc_event_release(q->streams, 1, R->t1);
  vc_event_release(q->streams, 0, R->done);
  if (R->stream_bad) vc_stream_discard(q->streams, R->s);
  else vc_stream_release(q->streams, R->s);
}

/* The work of a run once the context is current. */
static vyre_status run_steps(seq_run *R, vyre_timing *timing, vyre_error *err) {
  vc_sequencer *q = R->q;
  try_fast(R);
  if (!R->fast_hit && R->n) R->Ls = calloc(R->n, sizeof *R->Ls);
  if (!R->fast_hit && R->n && !R->Ls)
    return vyre_error_set(err, VYRE_OUT_OF_MEMORY, 0,
                          "%s: no host memory for %u step records. Fix: free host memory",
                          R->what, R->n);
  vyre_status st = check_all(R, err);
  if (st != VYRE_OK) return st;
  if (!R->fast_hit) {
    /* From here on the run works on the fused launch list, if any; a
     * fast hit's graph was captured from it. */
    vc_fuse_sequence(q->fuser, R->Ls, R->steps, R->n, &R->fz);
    if (R->fz.n) {
      R->Ls0 = R->Ls;
      R->n0 = R->n;
      R->Ls = R->fz.Ls;
      R->fz.Ls = NULL;
      R->steps = R->fz.steps;
      R->n = R->fz.n;
    }
  }
  st = vc_stream_acquire(q->streams, &R->s, err);
  if (st != VYRE_OK) return st;
  if (timing) {
    st = vc_event_acquire(q->streams, 1, &R->t0, err);
    if (st == VYRE_OK) st = vc_event_acquire(q->streams, 1, &R->t1, err);
    if (st != VYRE_OK) return st;
  }
  /* After the host's work on its stream.  No join back is needed: the
   * call returns only once its stream is idle, so whatever the host
   * enqueues afterwards already follows it. */
  st = vc_host_stream_join(q->cx, q->streams, &R->host, R->s, err);
  if (st != VYRE_OK) return st;
  if (R->host.set) R->enqueued = 1;
  st = enqueue_params(R, err);
  if (st == VYRE_OK) st = enqueue_runs(R, err);
  if (st != VYRE_OK) return st;
  R->t_enqueued = vyre__now_ns();
  if (R->deadline) {
    /* A timeout: poll an event after the work instead of blocking in the
     * driver. */
    st = vc_event_acquire(q->streams, 0, &R->done, err);
    if (st != VYRE_OK) return st;
    CUresult r = VC_CU(q->cx, cuEventRecord, (R->done, R->s));
    if (r != CUDA_SUCCESS) return vc_cu_fail(q->cx, err, r, "cuEventRecord", NULL, NULL);
    r = vc_wait_until(q->cx, R->done, R->deadline);
    if (r == CUDA_ERROR_NOT_READY)
      return vc_timeout_fail(q->cx, err, R->what,
                             R->Ls && R->n == 1 ? R->Ls[0].k->info.entry : NULL, R->timeout_ns);
  }
  st = complete(R, err);
  if (st != VYRE_OK) return st;
  vc_launcher_count_sequence(q->lx);
  vc_fuser_count(q->fuser, &R->fz, R->n0, R->repeat);
  if (timing) write_run_timing(R, timing);
  return VYRE_OK;
}

/* Run steps x repeat on one stream with one synchronisation, then the
 * reads.  Shared by dispatch_resident (one step) and dispatch_sequence. */
static vyre_status run_sequence(vc_sequencer *q, const vyre_sequence_step *steps, uint32_t n,
                                uint32_t repeat, const vyre_resident_copy *reads,
                                uint32_t read_count, vyre_timing *timing, const char *what,
                                vyre_error *err) {
  seq_run R;
  memset(&R, 0, sizeof R);
  R.t_entry = vyre__now_ns();
  vyre_status st = vc_check_timing(timing, err);
  if (st != VYRE_OK) return st;
  if (n && !steps)
    return vyre_error_set(err, VYRE_INVALID_ARGUMENT, 0,
                          "%s: steps is NULL for %u steps. Fix: pass the step array", what, n);
  R.q = q;
  R.steps = steps;
  R.n = n;
  R.repeat = repeat ? repeat : 1;
  R.reads = reads;
  R.read_count = read_count;
  R.what = what;
  /* Every step's vyre_limits (the fast path resolves no step): the call
   * waits at most the smallest timeout. */
  for (uint32_t i = 0; i < n; i++) {
    if (steps[i].struct_size != sizeof steps[i] || !steps[i].options) continue;
    vyre_limits lim;
    st = vyre__limits_read(steps[i].options, what, &lim, err);
    if (st != VYRE_OK) {
      if (n > 1) vyre_error_prefix(err, "step %u", i);
      return st;
    }
    if (lim.timeout_ns && (!R.timeout_ns || lim.timeout_ns < R.timeout_ns))
      R.timeout_ns = lim.timeout_ns;
  }
  R.deadline = vyre__deadline(R.t_entry, R.timeout_ns);
  st = vc_deferred_enter(q->deferred, err);
  if (st != VYRE_OK) return st;
  st = run_steps(&R, timing, err);
  run_release(&R, st);
  vc_leave(q->cx);
  return st;
}

vyre_status vc_dispatch_resident(vc_sequencer *q, const vyre_program_ref *program,
                                 const vyre_resident *buffers, uint32_t buffer_count,
                                 const vyre_dispatch_options *options, vyre_timing *timing,
                                 vyre_error *err) {
  vyre_sequence_step step;
  memset(&step, 0, sizeof step);
  step.struct_size = sizeof step;
  step.buffer_count = buffer_count;
  vyre_status st = vyre_check_program_ref(program, "dispatch_resident", err);
  if (st != VYRE_OK) return st;
  step.program = program;
  step.buffers = buffers;
  step.options = options;
  return run_sequence(q, &step, 1, 1, NULL, 0, timing, "dispatch_resident", err);
}

vyre_status vc_dispatch_sequence(vc_sequencer *q, const vyre_sequence_step *steps,
                                 uint32_t step_count, uint32_t repeat,
                                 const vyre_resident_copy *reads, uint32_t read_count,
                                 vyre_timing *timing, vyre_error *err) {
  return run_sequence(q, steps, step_count, repeat, reads, read_count, timing,
                      "dispatch_sequence", err);
}
