/* dispatch.c -- host dispatch jobs (stage, zero, launch, read back, complete) and the dispatch / dispatch_into entry points. */
#include "dispatch.h"

#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "abi/format/budget.h"
#include "indirect.h"
#include "split.h"
#include "util.h"

/* A host dispatch in flight. */
struct vc_job {
  vc_dispatcher *d;
  vc_deferred_item deferred; /* done and stream are the job's */
  vc_launch L;
  vc_host_stream host; /* the caller's stream (vyre_cuda_stream), if any */
  CUstream stream;
  CUevent done, t0, t1;
  vc_block dev[VYRE_MAX_BUFFERS];   /* by buffer index */
  vc_block stage[VYRE_MAX_BUFFERS]; /* pinned staging, by buffer index (small buffers) */
  uint64_t t_entry, t_enqueued;
  uint64_t timeout_ns, deadline; /* vyre_limits: 0 = wait as long as it takes */
  int enqueued; /* work was put on the stream */
  int ring_in, ring_out; /* the inputs, the outputs travel through the staging ring */
  CUstream stream2;      /* a chunked dispatch's second stream */
  CUevent join;          /* orders its two streams */
  vyre_outputs *outs;    /* outputs made before finish (outputs_read) */
  int outputs_read;      /* the outputs are in place before finish: chunked, or read early */
};

void vc_dispatcher_init(vc_dispatcher *d, vc_context *cx, vc_mempool *devpool,
                        vc_mempool *hostpool, vc_streampool *streams, vc_launcher *lx,
                        vc_pipelines *pipelines, vc_deferred *deferred, vc_staging *staging,
                        uint64_t split_bytes) {
  d->cx = cx;
  d->split_bytes = split_bytes;
  atomic_init(&d->split_dispatches, 0);
  atomic_init(&d->split_chunks, 0);
  d->devpool = devpool;
  d->hostpool = hostpool;
  d->streams = streams;
  d->lx = lx;
  d->pipelines = pipelines;
  d->deferred = deferred;
  d->staging = staging;
}

static void read_metrics(const void *state, vc_metric_sink *m) {
  vc_dispatcher *d = (vc_dispatcher *)state;
  vc_metric_emit(m, "dispatch.split", atomic_load(&d->split_dispatches));
  vc_metric_emit(m, "dispatch.split_chunks", atomic_load(&d->split_chunks));
}

void vc_dispatcher_add_metrics(vc_dispatcher *d, vc_metrics *m) {
  vc_metrics_add(m, read_metrics, d);
}

/* A dispatch's inputs (or its outputs) travel through the ring together
 * when they add up to more than the ring's threshold, small ones with
 * the large: in one pass, every copy thread on every byte (a 2 MiB
 * output read back through a pool block was one thread's memcpy).
 * Otherwise each goes through a pinned pool block (the latency path). */
static int through_ring(const vc_dispatcher *d, uint64_t bytes) {
  return bytes > vc_staging_threshold(d->staging);
}

/* Sets j->ring_in and j->ring_out from the geometry's sizes. */
static void choose_paths(vc_job *j) {
  const vyre_program *prog = j->L.k->program;
  uint64_t in = 0, out = 0;
  for (uint32_t i = 0; i < prog->buffer_count; i++) {
    const vyre_buffer_info *bi = &prog->buffers[i];
    /* Sizes are bounded by the geometry: no sum of them wraps. */
    if (bi->role == VYRE_ROLE_INPUT || bi->role == VYRE_ROLE_INOUT)
      in += j->L.geo.buffer_bytes[i];
    if (bi->is_output) out += j->L.geo.out_size[i];
  }
  j->ring_in = through_ring(j->d, in);
  j->ring_out = through_ring(j->d, out);
}

/* Return everything a job holds.  Its stream must be idle. */
void vc_job_free(vc_job *j) {
  vc_dispatcher *d = j->d;
  for (uint32_t i = 0; i < VYRE_MAX_BUFFERS; i++) {
    vc_mempool_release(d->devpool, &j->dev[i]);
    vc_mempool_release(d->hostpool, &j->stage[i]);
  }
  vc_launch_release(d->lx, &j->L);
  vc_event_release(d->streams, 0, j->done);
  vc_event_release(d->streams, 1, j->t0);
  vc_event_release(d->streams, 1, j->t1);
  vc_event_release(d->streams, 0, j->join);
  vc_stream_release(d->streams, j->stream);
  vc_stream_release(d->streams, j->stream2);
  free(j->outs);
  free(j);
  vc_launcher_in_flight(d->lx, -1);
}

/* Make the job's stream idle (as far as the driver lets us), then free it. */
void vc_job_abort(vc_job *j) {
  vc_context *cx = j->d->cx;
  if (j->enqueued && j->stream && vc_cleanup_ok(cx)) {
    CUresult r = VC_CU(cx, cuStreamSynchronize, (j->stream));
    if (r != CUDA_SUCCESS) vc_cu_note(cx, r, "cuStreamSynchronize");
  }
  if (j->enqueued && j->stream2 && vc_cleanup_ok(cx)) {
    CUresult r = VC_CU(cx, cuStreamSynchronize, (j->stream2));
    if (r != CUDA_SUCCESS) vc_cu_note(cx, r, "cuStreamSynchronize");
  }
  vc_job_free(j);
}

static void job_release_deferred(vc_deferred_item *item) {
  vc_job_free((vc_job *)((char *)item - offsetof(vc_job, deferred)));
}

void vc_job_defer(vc_job *j) {
  j->deferred.done = j->done;
  j->deferred.stream = j->stream;
  j->deferred.deadline = j->deadline;
  j->deferred.release = job_release_deferred;
  vc_deferred_push(j->d->deferred, &j->deferred);
}

vyre_status vc_job_poll(vc_job *j, int *ready, vyre_error *err) {
  vc_context *cx = j->d->cx;
  CUresult r = VC_CU(cx, cuEventQuery, (j->done));
  if (r == CUDA_SUCCESS) {
    *ready = 1;
  } else if (r == CUDA_ERROR_NOT_READY) {
    /* Past its deadline it has failed: pending_wait says so at once. */
    *ready = vyre__deadline_passed(j->deadline);
  } else if (vc_is_sticky(r)) {
    return vc_cu_fail(cx, err, r, "cuEventQuery", j->L.k->info.entry, NULL);
  } else {
    /* Failed is "ready": pending_wait reports what happened. */
    vc_cu_note(cx, r, "cuEventQuery");
    *ready = 1;
  }
  return VYRE_OK;
}

/* The inputs against the program (libvyre's one wording), and their sizes. */
static vyre_status check_inputs(const vyre_program *prog, const vyre_input *inputs,
                                uint32_t count, uint64_t *sizes, vyre_error *err) {
  vyre_status st = vyre_check_inputs(inputs, count, prog->input_count, "dispatch", err);
  if (st != VYRE_OK) return st;
  for (uint32_t i = 0; i < count; i++) sizes[i] = inputs[i].size;
  return VYRE_OK;
}

/* Plan + geometry for these inputs, with the context current. */
static vyre_status job_prepare(vc_dispatcher *d, const vyre_program_ref *ref,
                               const vyre_input *inputs, uint32_t input_count,
                               const vyre_dispatch_options *o, uint64_t t_entry, vc_job **out,
                               vyre_error *err) {
  *out = NULL;
  vc_job *j = calloc(1, sizeof *j);
  if (!j)
    return vyre_error_set(err, VYRE_OUT_OF_MEMORY, 0,
                          "dispatch: no host memory for the dispatch record. Fix: free host "
                          "memory");
  j->d = d;
  j->t_entry = t_entry;
  vc_launcher_in_flight(d->lx, 1);
  vyre_status st = vc_pipeline_resolve(d->pipelines, ref, o, 0, &j->L.plan, err);
  if (st != VYRE_OK) goto fail;
  uint64_t sizes[VYRE_MAX_BUFFERS];
  st = check_inputs(vc_plan_kernel(j->L.plan)->program, inputs, input_count, sizes, err);
  if (st != VYRE_OK) goto fail;
  st = vc_launch_shape(d->lx, &j->L, sizes, NULL, o, err);
  if (st != VYRE_OK) goto fail;
  *out = j;
  return VYRE_OK;
fail:
  vc_job_free(j);
  return st;
}

vyre_status vc_job_begin(vc_dispatcher *d, const vyre_program_ref *ref,
                         const vyre_input *inputs, uint32_t input_count,
                         const vyre_dispatch_options *options, vyre_timing *timing,
                         uint64_t t_entry, vc_job **out, vyre_error *err) {
  *out = NULL;
  vyre_status st = vc_check_options(options, err);
  vc_host_stream host;
  vyre_limits lim;
  if (st == VYRE_OK) st = vc_host_stream_read(options, "dispatch", &host, err);
  if (st == VYRE_OK) st = vyre__limits_read(options, "dispatch", &lim, err);
  if (st == VYRE_OK) st = vyre__indirect_refuse(options, "dispatch", err);
  if (st == VYRE_OK) st = vc_check_timing(timing, err);
  if (st != VYRE_OK) return st;
  vyre_dispatch_options o;
  vc_options_read(options, &o);
  st = vc_deferred_enter(d->deferred, err);
  if (st != VYRE_OK) return st;
  st = job_prepare(d, ref, inputs, input_count, &o, t_entry, out, err);
  if (st != VYRE_OK) {
    vc_leave(d->cx);
  } else {
    (*out)->host = host;
    (*out)->timeout_ns = lim.timeout_ns;
    (*out)->deadline = vyre__deadline(t_entry, lim.timeout_ns);
    (*out)->L.deadline = (*out)->deadline;
    (*out)->L.timeout_ns = lim.timeout_ns;
  }
  return st;
}

/* The device blocks of every buffer on j's stream: inputs uploaded (the
 * large ones in one pass over the staging ring), outputs zeroed, staging
 * blocks for the readbacks. */
static vyre_status stage_buffers(vc_job *j, const vyre_input *inputs, vyre_error *err) {
  vc_dispatcher *d = j->d;
  vc_context *cx = d->cx;
  vc_launch *L = &j->L;
  const vyre_program *prog = L->k->program;
  const char *kernel = L->k->info.entry;
  CUresult r;
  vyre_status st;
  vc_segment big[VYRE_MAX_BUFFERS];
  uint32_t nbig = 0;
  choose_paths(j);
  for (uint32_t i = 0; i < prog->buffer_count; i++) {
    const vyre_buffer_info *bi = &prog->buffers[i];
    if (bi->role == VYRE_ROLE_SHARED) continue;
    uint64_t bytes = L->geo.buffer_bytes[i];
    L->ptrs[bi->kernel_index] = 0;
    if (!bytes) continue;
    st = vc_mempool_acquire(d->devpool, bytes, &j->dev[i], err);
    if (st != VYRE_OK) return st;
    CUdeviceptr dev = (CUdeviceptr)j->dev[i].ptr;
    L->ptrs[bi->kernel_index] = dev;
    if ((bi->role == VYRE_ROLE_INPUT || bi->role == VYRE_ROLE_INOUT) && j->ring_in) {
      /* Uploaded below, all large inputs in one pass over the ring. */
      big[nbig].dev = dev;
      big[nbig].host = (void *)inputs[bi->input_index].data;
      big[nbig].size = bytes;
      nbig++;
    } else if (bi->role == VYRE_ROLE_INPUT || bi->role == VYRE_ROLE_INOUT) {
      st = vc_mempool_acquire(d->hostpool, bytes, &j->stage[i], err);
      if (st != VYRE_OK) return st;
      void *stage = (void *)(uintptr_t)j->stage[i].ptr;
      memcpy(stage, inputs[bi->input_index].data, (size_t)bytes);
      r = VC_CU(cx, cuMemcpyHtoDAsync, (dev, stage, (size_t)bytes, j->stream));
      if (r != CUDA_SUCCESS) return vc_cu_fail(cx, err, r, "cuMemcpyHtoDAsync", kernel, NULL);
      j->enqueued = 1;
    } else {
      /* Backend-allocated outputs start zeroed (pool blocks are reused). */
      r = VC_CU(cx, cuMemsetD8Async, (dev, 0, (size_t)bytes, j->stream));
      if (r != CUDA_SUCCESS) return vc_cu_fail(cx, err, r, "cuMemsetD8Async", kernel, NULL);
      j->enqueued = 1;
    }
    /* The readback's pinned block, unless the input's serves (an inout
     * buffer's output range lies within it). */
    if (bi->is_output && L->geo.out_size[i] && !j->ring_out && !j->stage[i].ptr) {
      st = vc_mempool_acquire(d->hostpool, L->geo.out_size[i], &j->stage[i], err);
      if (st != VYRE_OK) return st;
    }
  }
  if (nbig) {
    /* Enqueued as chunks fill; on failure the stream is already idle. */
    st = vc_staging_upload(d->staging, j->stream, big, nbig, err);
    if (st != VYRE_OK) {
      vyre_error_prefix(err, "dispatch of %s: uploading %u input(s)", kernel, nbig);
      return st;
    }
    j->enqueued = 1;
  }
  return VYRE_OK;
}

/* Put the whole dispatch on a stream: uploads, zeroing, params, launches,
 * readbacks, completion event. */
static vyre_status enqueue(vc_job *j, const vyre_input *inputs, int timed, vyre_error *err) {
  vc_dispatcher *d = j->d;
  vc_context *cx = d->cx;
  vc_launch *L = &j->L;
  const vyre_program *prog = L->k->program;
  const char *kernel = L->k->info.entry;
  CUresult r;
  vyre_status st = vc_stream_acquire(d->streams, &j->stream, err);
  if (st != VYRE_OK) return st;
  st = vc_event_acquire(d->streams, 0, &j->done, err);
  if (st != VYRE_OK) return st;
  if (timed) {
    st = vc_event_acquire(d->streams, 1, &j->t0, err);
    if (st != VYRE_OK) return st;
    st = vc_event_acquire(d->streams, 1, &j->t1, err);
    if (st != VYRE_OK) return st;
  }
  /* After the host's work on its stream, before any of ours. */
  st = vc_host_stream_join(cx, d->streams, &j->host, j->stream, err);
  if (st != VYRE_OK) return st;
  if (j->host.set) j->enqueued = 1;
  st = stage_buffers(j, inputs, err);
  if (st != VYRE_OK) return st;
  st = vc_launch_stage_params(d->lx, L, err);
  if (st != VYRE_OK) return st;
  st = vc_launch_upload_params(d->lx, L, j->stream, err);
  if (st != VYRE_OK) return st;
  j->enqueued = 1;
  if (timed) {
    r = VC_CU(cx, cuEventRecord, (j->t0, j->stream));
    if (r != CUDA_SUCCESS) return vc_cu_fail(cx, err, r, "cuEventRecord", kernel, NULL);
  }
  st = vc_launch_enqueue(d->lx, L, j->stream, 1, err);
  if (st != VYRE_OK) return st;
  if (timed) {
    r = VC_CU(cx, cuEventRecord, (j->t1, j->stream));
    if (r != CUDA_SUCCESS) return vc_cu_fail(cx, err, r, "cuEventRecord", kernel, NULL);
  }
  for (uint32_t i = 0; i < prog->buffer_count; i++) {
    const vyre_buffer_info *bi = &prog->buffers[i];
    if (!bi->is_output || !L->geo.out_size[i]) continue;
    /* Large outputs are read back by finish, through the ring. */
    if (j->ring_out) continue;
    /* Only the declared output range travels back. */
    r = VC_CU(cx, cuMemcpyDtoHAsync, ((void *)(uintptr_t)j->stage[i].ptr,
                                     (CUdeviceptr)(j->dev[i].ptr + L->geo.out_offset[i]),
                                     (size_t)L->geo.out_size[i], j->stream));
    if (r != CUDA_SUCCESS) return vc_cu_fail(cx, err, r, "cuMemcpyDtoHAsync", kernel, NULL);
  }
  st = vc_launch_read_trap(d->lx, L, j->stream, err);
  if (st != VYRE_OK) return st;
  r = VC_CU(cx, cuEventRecord, (j->done, j->stream));
  if (r != CUDA_SUCCESS) return vc_cu_fail(cx, err, r, "cuEventRecord", kernel, NULL);
  /* The host's later work on its stream waits for all of ours (what makes
   * the order hold for dispatch_async; a waiting call has finished anyway). */
  st = vc_host_stream_release(cx, &j->host, j->done, err);
  if (st != VYRE_OK) return st;
  vc_launcher_count_dispatch(d->lx);
  return VYRE_OK;
}

vyre_status vc_job_enqueue(vc_job *j, const vyre_input *inputs, int timed, vyre_error *err) {
  vyre_status st = enqueue(j, inputs, timed, err);
  if (st == VYRE_OK) j->t_enqueued = vyre__now_ns();
  return st;
}

/* Copy a finished job's outputs to their destinations (the items of o,
 * or the caller's slots): small ones from their pinned blocks, large
 * ones from the device through the staging ring.  The job's stream is
 * idle afterwards, also on failure. */
static vyre_status read_outputs(vc_job *j, vyre_outputs *o, vyre_output_slot *slots,
                                vyre_error *err) {
  vc_dispatcher *d = j->d;
  const vyre_program *prog = j->L.k->program;
  vc_segment big[VYRE_MAX_BUFFERS];
  uint32_t nbig = 0;
  for (uint32_t i = 0; i < prog->buffer_count; i++) {
    const vyre_buffer_info *bi = &prog->buffers[i];
    if (!bi->is_output) continue;
    uint64_t n = j->L.geo.out_size[i];
    void *dst = o ? o->items[bi->output_index].data : slots[bi->output_index].data;
    if (slots) slots[bi->output_index].size = n;
    if (!n) continue;
    if (j->ring_out) {
      big[nbig].dev = (CUdeviceptr)(j->dev[i].ptr + j->L.geo.out_offset[i]);
      big[nbig].host = dst;
      big[nbig].size = n;
      nbig++;
    } else {
      memcpy(dst, (const void *)(uintptr_t)j->stage[i].ptr, (size_t)n);
    }
  }
  if (!nbig) return VYRE_OK;
  vyre_status st = vc_staging_download(d->staging, j->stream, big, nbig, err);
  if (st != VYRE_OK)
    vyre_error_prefix(err, "dispatch of %s: reading back %u output(s)", j->L.k->info.entry,
                      nbig);
  return st;
}

/* A new outputs block for the job's outputs (one malloc, items then
 * 16-byte aligned data), sizes filled in. */
static vyre_status outputs_alloc(vc_job *j, vyre_outputs **out, vyre_error *err) {
  const vyre_program *prog = j->L.k->program;
  uint64_t total = sizeof(vyre_outputs) + (uint64_t)prog->output_count * sizeof(vyre_output);
  for (uint32_t i = 0; i < prog->buffer_count; i++)
    if (prog->buffers[i].is_output) total += (j->L.geo.out_size[i] + 15u) & ~(uint64_t)15u;
  uint8_t *mem = total <= SIZE_MAX ? malloc((size_t)total) : NULL;
  if (!mem)
    return vyre_error_set(err, VYRE_OUT_OF_MEMORY, 0,
                          "dispatch: no host memory for %llu bytes of outputs. Fix: free host "
                          "memory or declare output ranges",
                          (unsigned long long)total);
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
    data += (n + 15u) & ~(uint64_t)15u;
  }
  *out = o;
  return VYRE_OK;
}

/* Wait for a job; then trap check, outputs (to a new vyre_outputs or to
 * caller slots) and timing.  The job is freed (or deferred when the
 * driver cannot tell whether its work is done). */
vyre_status vc_job_finish(vc_job *j, vyre_outputs **out, vyre_output_slot *slots,
                          vyre_timing *timing, vyre_error *err) {
  vc_dispatcher *d = j->d;
  vc_context *cx = d->cx;
  CUresult r = CUDA_SUCCESS;
  const char *call = "cuStreamSynchronize";
  if (j->deadline) {
    /* A timeout: poll instead of blocking in the driver. */
    r = vc_wait_until(cx, j->done, j->deadline);
    if (r == CUDA_ERROR_NOT_READY) {
      vyre_status st = vc_timeout_fail(cx, err, "dispatch", j->L.k->info.entry, j->timeout_ns);
      /* The instance is lost: nothing is freed one by one, and nothing
       * waits for the stream. */
      vc_job_free(j);
      return st;
    }
    if (r != CUDA_SUCCESS) call = "cuEventQuery";
  }
  /* The stream is the job's alone and `done` is its last work, so waiting
   * for the stream waits for exactly the job (after a timed poll it
   * returns at once).  It is the stream, not the event, because
   * compute-sanitizer's racecheck delivers a kernel's hazards only at a
   * stream or context synchronisation (with an event wait alone it
   * reports nothing and its own thread dies at the next cuMemFree):
   * docs/cuda-runtime.md, "Under compute-sanitizer". */
  if (r == CUDA_SUCCESS) r = VC_CU(cx, cuStreamSynchronize, (j->stream));
  if (r != CUDA_SUCCESS) {
    vyre_status st = vc_cu_fail(cx, err, r, call, j->L.k->info.entry, NULL);
    if (!vc_is_lost(cx)) {
      /* The stream could not say; if the job's event cannot either, its
       * work may still be running: keep the job until it can. */
      CUresult er = VC_CU(cx, cuEventQuery, (j->done));
      if (er != CUDA_SUCCESS) {
        vc_cu_note(cx, er, "cuEventQuery");
        if (!vc_is_lost(cx)) {
          vc_job_defer(j);
          return st;
        }
      }
    }
    vc_job_free(j);
    return st;
  }
  uint64_t t_done = vyre__now_ns();
  vyre_status st = vc_launch_check_trap(d->lx, &j->L, -1, err);
  if (st == VYRE_OK && out && j->outputs_read) {
    *out = j->outs;
    j->outs = NULL;
  } else if (st == VYRE_OK && out) {
    vyre_outputs *o = NULL;
    st = outputs_alloc(j, &o, err);
    if (st == VYRE_OK) st = read_outputs(j, o, NULL, err);
    if (st == VYRE_OK) *out = o;
    else free(o);
  } else if (st == VYRE_OK && slots && !j->outputs_read) {
    st = read_outputs(j, NULL, slots, err);
  }
  if (st == VYRE_OK && timing) {
    vyre_timing t;
    memset(&t, 0, sizeof t);
    uint64_t now = vyre__now_ns();
    t.wall_ns = now - j->t_entry;
    t.enqueue_ns = j->t_enqueued - j->t_entry;
    t.wait_ns = t_done - j->t_enqueued;
    t.valid = VYRE_TIMING_WALL | VYRE_TIMING_ENQUEUE | VYRE_TIMING_WAIT;
    if (j->t0 && j->t1) {
      int ok;
      double ms = vc_elapsed_ms(cx, j->t0, j->t1, &ok);
      if (ok) {
        t.device_ns = (uint64_t)(ms * 1e6);
        t.valid |= VYRE_TIMING_DEVICE;
      }
    }
    vc_write_timing(timing, &t);
  }
  vc_job_free(j);
  return st;
}

/* The chunked path's prologue on the job's stream: every buffer's device
 * block, the whole inputs up, the outputs zeroed; params words staged. */
static vyre_status split_prologue(vc_job *j, const vyre_input *inputs, const uint8_t *cls,
                                  CUdeviceptr *dev, vyre_error *err) {
  vc_dispatcher *d = j->d;
  vc_context *cx = d->cx;
  vc_launch *L = &j->L;
  const vyre_program *prog = L->k->program;
  for (uint32_t i = 0; i < prog->buffer_count; i++) {
    const vyre_buffer_info *bi = &prog->buffers[i];
    uint64_t bytes = L->geo.buffer_bytes[i];
    dev[i] = 0;
    if (bi->role == VYRE_ROLE_SHARED) continue;
    L->ptrs[bi->kernel_index] = 0;
    if (!bytes) continue;
    vyre_status st = vc_mempool_acquire(d->devpool, bytes, &j->dev[i], err);
    if (st != VYRE_OK) return st;
    dev[i] = L->ptrs[bi->kernel_index] = (CUdeviceptr)j->dev[i].ptr;
    j->enqueued = 1;
    if (bi->role == VYRE_ROLE_INPUT || bi->role == VYRE_ROLE_INOUT) {
      if (cls[i] == VC_SPLIT_CHUNK) continue; /* by the chunks */
      vc_segment seg = {dev[i], (void *)(uintptr_t)inputs[bi->input_index].data, bytes};
      st = vc_staging_upload(d->staging, j->stream, &seg, 1, err);
      if (st != VYRE_OK) return st;
    } else {
      CUresult r = VC_CU(cx, cuMemsetD8Async, (dev[i], 0, (size_t)bytes, j->stream));
      if (r != CUDA_SUCCESS)
        return vc_cu_fail(cx, err, r, "cuMemsetD8Async", L->k->info.entry, NULL);
    }
  }
  return vc_launch_stage_params(d->lx, L, err);
}

/* Make `later` wait for the work on `first` so far. */
static vyre_status split_order(vc_job *j, CUstream first, CUstream later, vyre_error *err) {
  vc_context *cx = j->d->cx;
  CUresult r = VC_CU(cx, cuEventRecord, (j->join, first));
  if (r != CUDA_SUCCESS) return vc_cu_fail(cx, err, r, "cuEventRecord", j->L.k->info.entry, NULL);
  r = VC_CU(cx, cuStreamWaitEvent, (later, j->join, 0));
  if (r != CUDA_SUCCESS)
    return vc_cu_fail(cx, err, r, "cuStreamWaitEvent", j->L.k->info.entry, NULL);
  return VYRE_OK;
}

/* A chunked dispatch (split.h), run to the end: prologue on the job's
 * stream, the chunks on both streams, then the whole outputs back on the
 * job's stream and its completion event.  The outputs are in place (a
 * new block in j->outs, or the caller's slots) when it returns. */
static vyre_status split_enqueue(vc_job *j, const vyre_input *inputs, int to_block,
                                 vyre_output_slot *slots, const uint8_t *cls, uint32_t elems,
                                 int timed, vyre_error *err) {
  vc_dispatcher *d = j->d;
  vc_context *cx = d->cx;
  const vyre_program *prog = j->L.k->program;
  const void *src[VYRE_MAX_BUFFERS] = {0};
  void *dst[VYRE_MAX_BUFFERS] = {0};
  CUdeviceptr dev[VYRE_MAX_BUFFERS];
  vyre_status st = to_block ? outputs_alloc(j, &j->outs, err) : VYRE_OK;
  for (uint32_t i = 0; st == VYRE_OK && i < prog->buffer_count; i++) {
    const vyre_buffer_info *bi = &prog->buffers[i];
    if (bi->input_index >= 0) src[i] = inputs[bi->input_index].data;
    if (!bi->is_output) continue;
    dst[i] = j->outs ? j->outs->items[bi->output_index].data : slots[bi->output_index].data;
    if (slots) slots[bi->output_index].size = j->L.geo.out_size[i];
  }
  j->outputs_read = 1;
  if (st == VYRE_OK) st = vc_stream_acquire(d->streams, &j->stream, err);
  if (st == VYRE_OK) st = vc_stream_acquire(d->streams, &j->stream2, err);
  if (st == VYRE_OK) st = vc_event_acquire(d->streams, 0, &j->done, err);
  if (st == VYRE_OK) st = vc_event_acquire(d->streams, 0, &j->join, err);
  if (st == VYRE_OK && timed) st = vc_event_acquire(d->streams, 1, &j->t0, err);
  if (st == VYRE_OK && timed) st = vc_event_acquire(d->streams, 1, &j->t1, err);
  if (st == VYRE_OK) st = split_prologue(j, inputs, cls, dev, err);
  CUresult r = CUDA_SUCCESS;
  if (st == VYRE_OK && timed) r = VC_CU(cx, cuEventRecord, (j->t0, j->stream));
  if (st == VYRE_OK && r == CUDA_SUCCESS) st = split_order(j, j->stream, j->stream2, err);
  vc_split_job sj = {d->lx, d->staging, &j->L, cls, dev, src, dst, {j->stream, j->stream2},
                     elems};
  if (st == VYRE_OK && r == CUDA_SUCCESS) st = vc_split_run(&sj, err);
  if (st == VYRE_OK && r == CUDA_SUCCESS) st = split_order(j, j->stream2, j->stream, err);
  if (st == VYRE_OK && r == CUDA_SUCCESS && timed) r = VC_CU(cx, cuEventRecord, (j->t1, j->stream));
  for (uint32_t i = 0; st == VYRE_OK && r == CUDA_SUCCESS && i < prog->buffer_count; i++) {
    if (!prog->buffers[i].is_output || cls[i] == VC_SPLIT_CHUNK || !j->L.geo.out_size[i]) continue;
    vc_segment seg = {dev[i] + j->L.geo.out_offset[i], dst[i], j->L.geo.out_size[i]};
    st = vc_staging_download(d->staging, j->stream, &seg, 1, err);
  }
  if (st == VYRE_OK && r == CUDA_SUCCESS) r = VC_CU(cx, cuEventRecord, (j->done, j->stream));
  if (st == VYRE_OK && r != CUDA_SUCCESS)
    st = vc_cu_fail(cx, err, r, "cuEventRecord", j->L.k->info.entry, NULL);
  if (st != VYRE_OK) return st;
  j->t_enqueued = vyre__now_ns();
  atomic_fetch_add(&d->split_dispatches, 1);
  atomic_fetch_add(&d->split_chunks, (j->L.geo.element_count + elems - 1) / elems);
  vc_launcher_count_dispatch(d->lx);
  return VYRE_OK;
}

/* A waiting call's outputs that come back through the ring start back
 * as soon as the kernel ends: the readback's copies are enqueued right
 * behind it, and the threads copy out as they land, instead of after
 * finish's wait (a host wake-up and the first copy's latency later).
 * Not for a kernel with a trap (its outputs must not reach the caller's
 * memory before the check) nor a call with a timeout (the readback waits
 * in the driver). */
static vyre_status read_early(vc_job *j, int to_block, vyre_output_slot *slots,
                              vyre_error *err) {
  if (!j->ring_out || j->deadline || j->L.k->info.uses_trap) return VYRE_OK;
  vyre_status st = to_block ? outputs_alloc(j, &j->outs, err) : VYRE_OK;
  if (st == VYRE_OK) st = read_outputs(j, j->outs, j->outs ? NULL : slots, err);
  if (st == VYRE_OK) j->outputs_read = 1;
  return st;
}

/* The elements per chunk when this job runs in chunks (cls filled), else
 * 0: chunking on, no host stream to order on (the chunks use two of
 * their own) and no timeout (the chunks wait in the driver). */
static uint32_t split_elems(vc_job *j, uint8_t *cls) {
  vc_dispatcher *d = j->d;
  if (!d->split_bytes || j->host.set || j->deadline || !vc_split_classify(&j->L, cls)) return 0;
  return vc_split_chunk_elems(&j->L, cls, d->split_bytes, vc_staging_chunk(d->staging));
}

static vyre_status host_dispatch(vc_dispatcher *d, const vyre_program_ref *program,
                                 const vyre_input *inputs, uint32_t input_count,
                                 const vyre_dispatch_options *options, vyre_outputs **out,
                                 vyre_output_slot *slots, uint32_t slot_count,
                                 vyre_timing *timing, vyre_error *err) {
  uint64_t t_entry = vyre__now_ns();
  vc_job *j = NULL;
  vyre_status st =
      vc_job_begin(d, program, inputs, input_count, options, timing, t_entry, &j, err);
  if (st != VYRE_OK) return st;
  if (slots || !out) {
    const vyre_program *prog = j->L.k->program;
    if (slot_count != prog->output_count || (slot_count && !slots)) {
      st = vyre_error_set(err, VYRE_INVALID_ARGUMENT, 0,
                          "dispatch_into: %u output slots given, the program has %u outputs. "
                          "Fix: pass one vyre_output_slot per output in declaration order",
                          slot_count, prog->output_count);
      vc_job_free(j);
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
        vc_job_free(j);
        goto done;
      }
    }
  }
  uint8_t cls[VYRE_MAX_BUFFERS];
  uint32_t elems = split_elems(j, cls);
  if (elems)
    st = split_enqueue(j, inputs, out != NULL, slots, cls, elems, timing != NULL, err);
  else
    st = vc_job_enqueue(j, inputs, timing != NULL, err);
  if (st == VYRE_OK && !elems) st = read_early(j, out != NULL, slots, err);
  if (st != VYRE_OK) {
    vc_job_abort(j);
    goto done;
  }
  st = vc_job_finish(j, out, slots, timing, err);
done:
  vc_leave(d->cx);
  return st;
}

vyre_status vc_dispatch(vc_dispatcher *d, const vyre_program_ref *program,
                        const vyre_input *inputs, uint32_t input_count,
                        const vyre_dispatch_options *options, vyre_outputs **out,
                        vyre_timing *timing, vyre_error *err) {
  if (!out)
    return vyre_error_set(err, VYRE_INVALID_ARGUMENT, 0,
                          "dispatch: out is NULL. Fix: pass a vyre_outputs * to receive the "
                          "outputs");
  *out = NULL;
  return host_dispatch(d, program, inputs, input_count, options, out, NULL, 0,
                       timing, err);
}

vyre_status vc_dispatch_into(vc_dispatcher *d, const vyre_program_ref *program,
                             const vyre_input *inputs, uint32_t input_count,
                             const vyre_dispatch_options *options, vyre_output_slot *outputs,
                             uint32_t output_count, vyre_timing *timing, vyre_error *err) {
  return host_dispatch(d, program, inputs, input_count, options, NULL, outputs,
                       output_count, timing, err);
}

