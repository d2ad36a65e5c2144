/* backend.c -- the instance: per-module state wired together, create/destroy, profile, prepare, shutdown, metrics, the vtable and the interop table. */
#include "backend.h"

#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "abi/support/config.h"
#include "abi/support/sized.h"
#include "async.h"
#include "context.h"
#include "deferred.h"
#include "diskcache.h"
#include "dispatch.h"
#include "fuser.h"
#include "graph.h"
#include "interop.h"
#include "launch.h"
#include "metrics.h"
#include "modcache.h"
#include "pipeline.h"
#include "pools.h"
#include "resident.h"
#include "sequence.h"
#include "staging.h"

#define DEFAULT_PINNED_BUDGET (256ull << 20)
#define DEFAULT_DEVICE_BUDGET_CAP (2ull << 30)
/* Staging defaults, measured on an H100 host (docs/cuda-runtime.md,
 * "Large host transfers"): 16 MiB chunks moved 1 GiB faster than 2, 4,
 * 8 or 32 MiB ones; 2, 4 and 8 chunks did equally well; the host memcpy
 * kept gaining up to 16 threads. */
#define DEFAULT_STAGING_CHUNK (16ull << 20)
#define MIN_STAGING_CHUNK 256ull
#define DEFAULT_STAGING_CHUNKS 4
#define MAX_DEFAULT_COPY_THREADS 16
/* Chunked host dispatch (split.c): bytes of input and output per chunk. */
#define DEFAULT_SPLIT_CHUNK (8ull << 20)

/* The instance: each module's state, owned by that module (its header
 * says what others may call).  Modules reach the ones below them through
 * the pointers they were given at init; this file only wires and orders. */
typedef struct vc_backend {
  vyre_backend head; /* public head: must stay first */
  vc_context cx;
  vc_mempool devpool, hostpool;
  vc_streampool streams;
  vc_staging staging;
  vc_deferred deferred;
  vc_resident_store resident;
  vc_interop interop;
  vc_diskcache disk;
  vc_modcache plans;
  vc_launcher lx;
  vc_graphcache graphs;
  vc_fuser fuser;
  vc_pipelines pipelines;
  vc_dispatcher dispatcher;
  vc_async async;
  vc_sequencer sequencer;
  vc_metrics metrics;
} vc_backend;

static vc_backend *self_of(vyre_backend *self) { return (vc_backend *)self; }

static const vyre_backend_vtable vtable;

/* The pools and the staging ring over an open context (current on this
 * thread); on failure nothing of them is left. */
static vyre_status pools_init(vc_backend *b, vyre_error *err) {
  vc_context *cx = &b->cx;
  uint64_t device_budget = vc_context_profile(cx)->total_memory / 8;
  if (device_budget > DEFAULT_DEVICE_BUDGET_CAP) device_budget = DEFAULT_DEVICE_BUDGET_CAP;
  vyre_status st = vc_mempool_init(
      &b->devpool, cx, VC_POOL_DEVICE,
      vyre__env_bytes(VYRE__ENV_CUDA_POOL_DEVICE_BYTES, device_budget, 0, UINT64_MAX), err);
  if (st != VYRE_OK) goto fail_devpool;
  st = vc_mempool_init(&b->hostpool, cx, VC_POOL_PINNED,
                       vyre__env_bytes(VYRE__ENV_CUDA_POOL_PINNED_BYTES, DEFAULT_PINNED_BUDGET, 0,
                                       UINT64_MAX),
                       err);
  if (st != VYRE_OK) goto fail_hostpool;
  uint64_t chunk = vyre__env_bytes(VYRE__ENV_CUDA_STAGING_CHUNK, DEFAULT_STAGING_CHUNK,
                                   MIN_STAGING_CHUNK, UINT64_MAX);
  st = vc_streampool_init(&b->streams, cx, err);
  if (st != VYRE_OK) goto fail_streams;
  /* Copy threads: the online CPUs less a quarter (at least 2) left to the
   * driver's and the host's threads: on 16-core H100 hosts 16 threads
   * uploaded 1 GiB slower than 8, and 12 faster (BENCHMARKS.md). */
  long cpus = sysconf(_SC_NPROCESSORS_ONLN);
  long spare = cpus / 4 > 2 ? cpus / 4 : 2;
  uint64_t threads = cpus - spare < 1 ? 1 : (uint64_t)(cpus - spare);
  if (threads > MAX_DEFAULT_COPY_THREADS) threads = MAX_DEFAULT_COPY_THREADS;
  st = vc_staging_init(&b->staging, cx, &b->streams, &b->hostpool, chunk,
                       (uint32_t)vyre__env_uint(VYRE__ENV_CUDA_STAGING_CHUNKS,
                                                DEFAULT_STAGING_CHUNKS, 2, VC_STAGING_MAX_CHUNKS),
                       (uint32_t)vyre__env_uint(VYRE__ENV_CUDA_COPY_THREADS, threads, 1,
                                                VC_STAGING_MAX_THREADS),
                       err);
  if (st != VYRE_OK) goto fail_staging;
  return VYRE_OK;

fail_staging:
  vc_streampool_destroy(&b->streams);
fail_streams:
  vc_mempool_destroy(&b->hostpool);
fail_hostpool:
  vc_mempool_destroy(&b->devpool);
fail_devpool:
  return st;
}

/* Each module reports its own numbers; this order is the report's. */
static void metrics_init(vc_backend *b) {
  vc_metrics_init(&b->metrics);
  vc_mempool_add_metrics(&b->devpool, &b->metrics);
  vc_mempool_add_metrics(&b->hostpool, &b->metrics);
  vc_staging_add_metrics(&b->staging, &b->metrics);
  vc_streampool_add_metrics(&b->streams, &b->metrics);
  vc_resident_add_metrics(&b->resident, &b->metrics);
  vc_modcache_add_metrics(&b->plans, &b->metrics);
  vc_diskcache_add_metrics(&b->disk, &b->metrics);
  vc_graphs_add_metrics(&b->graphs, &b->metrics);
  vc_fuser_add_metrics(&b->fuser, &b->metrics);
  vc_launcher_add_metrics(&b->lx, &b->metrics);
  vc_dispatcher_add_metrics(&b->dispatcher, &b->metrics);
  vc_async_add_metrics(&b->async, &b->metrics);
  vc_deferred_add_metrics(&b->deferred, &b->metrics);
  vc_pipelines_add_metrics(&b->pipelines, &b->metrics);
  vc_context_add_metrics(&b->cx, &b->metrics);
}

/* Build the modules over an open context (current on this thread),
 * unwinding what was built when one fails.  The inits that only wire
 * pointers (interop, launch, dispatch, async, sequence, pipelines, the
 * disk cache, which turns itself off rather than fail) cannot fail. */
static vyre_status modules_init(vc_backend *b, vyre_error *err) {
  vc_context *cx = &b->cx;
  const vyre_device_profile *prof = vc_context_profile(cx);
  vyre_status st = pools_init(b, err);
  if (st != VYRE_OK) goto fail_pools;
  st = vc_deferred_init(&b->deferred, cx, err);
  if (st != VYRE_OK) goto fail_deferred;
  st = vc_resident_init(&b->resident, cx, &b->deferred, &b->devpool, &b->hostpool, &b->streams,
                        &b->staging, err);
  if (st != VYRE_OK) goto fail_resident;
  vc_interop_init(&b->interop, cx, &b->deferred, &b->resident);
  vc_diskcache_init(&b->disk, prof->compute_major, prof->compute_minor,
                    vc_context_device(cx)->driver_version);
  st = vc_modcache_init(&b->plans, cx, &b->disk, err);
  if (st != VYRE_OK) goto fail_plans;
  vc_launcher_init(&b->lx, cx, &b->devpool, &b->hostpool, &b->plans);
  st = vc_graphs_init(&b->graphs, cx, &b->devpool, &b->plans, &b->lx, err);
  if (st != VYRE_OK) goto fail_graphs;
  st = vc_fuser_init(&b->fuser, cx, &b->plans, &b->lx, err);
  if (st != VYRE_OK) goto fail_fuser;
  vc_pipelines_init(&b->pipelines, cx, &b->plans, &b->deferred);
  vc_dispatcher_init(&b->dispatcher, cx, &b->devpool, &b->hostpool, &b->streams, &b->lx,
                     &b->pipelines, &b->deferred, &b->staging,
                     vyre__env_bytes(VYRE__ENV_CUDA_SPLIT_CHUNK, DEFAULT_SPLIT_CHUNK, 0, UINT64_MAX));
  vc_async_init(&b->async, &b->dispatcher);
  vc_sequencer_init(&b->sequencer, cx, &b->devpool, &b->streams, &b->resident, &b->lx,
                    &b->graphs, &b->pipelines, &b->deferred, &b->fuser);
  /* Graphs bake resident pointers in: a freed buffer's graphs must go. */
  vc_resident_on_free(&b->resident, vc_graphs_forget_resident, &b->graphs);
  metrics_init(b);
  return VYRE_OK;

fail_fuser:
  vc_graphs_destroy(&b->graphs);
fail_graphs:
  vc_modcache_destroy(&b->plans);
fail_plans:
  vc_resident_destroy(&b->resident);
fail_resident:
  vc_deferred_destroy(&b->deferred);
fail_deferred:
  vc_staging_destroy(&b->staging);
  vc_streampool_destroy(&b->streams);
  vc_mempool_destroy(&b->hostpool);
  vc_mempool_destroy(&b->devpool);
fail_pools:
  return st;
}

vyre_status vc_backend_create(const vyre_backend_options *options, int transcendentals,
                              vyre_backend **out, vyre_error *err) {
  if (!out)
    return vyre_error_set(err, VYRE_INVALID_ARGUMENT, 0,
                          "cuda create: out is NULL. Fix: pass a vyre_backend * to receive the "
                          "instance");
  *out = NULL;
  vyre_backend_options o;
  vyre__sized_read(&o, sizeof o, options);
  if (o.flags)
    return vyre_error_set(err, VYRE_INVALID_ARGUMENT, 0,
                          "cuda create: unknown option flags 0x%x. Fix: pass flags = 0", o.flags);
  vc_backend *b = calloc(1, sizeof *b);
  if (!b)
    return vyre_error_set(err, VYRE_OUT_OF_MEMORY, 0,
                          "cuda create: no host memory for the instance. Fix: free host memory");
  b->head.struct_size = sizeof b->head;
  b->head.vt = &vtable;
  vyre_status st = vc_context_open(&b->cx, o.device_ordinal, transcendentals, err);
  if (st != VYRE_OK) goto fail_context;

  CUresult r = vc_context_push(&b->cx);
  if (r != CUDA_SUCCESS) {
    st = vc_cu_fail(&b->cx, err, r, "cuCtxPushCurrent", NULL, NULL);
    goto fail_push;
  }
  st = modules_init(b, err);
  vc_leave(&b->cx);
  if (st != VYRE_OK) goto fail_modules;
  *out = &b->head;
  return VYRE_OK;

fail_modules:
fail_push:
  vc_context_close(&b->cx);
fail_context:
  free(b);
  return st;
}

static void destroy(vyre_backend *self) {
  if (!self) return;
  vc_backend *b = self_of(self);
  CUresult r = vc_context_push(&b->cx);
  if (r != CUDA_SUCCESS) {
    /* Without a current context no object can be freed one by one; they
     * go with the context when it is released below. */
    vc_cu_note(&b->cx, r, "cuCtxPushCurrent");
    vc_context_orphan(&b->cx);
  }
  /* Release what we can; a lost context takes its objects with it.  Users
   * before what they use: work in flight, then what it held. */
  vc_async_destroy(&b->async);
  vc_pipelines_destroy(&b->pipelines);
  vc_deferred_destroy(&b->deferred);
  vc_graphs_destroy(&b->graphs);
  vc_fuser_destroy(&b->fuser);
  vc_resident_destroy(&b->resident);
  vc_staging_destroy(&b->staging);
  vc_modcache_destroy(&b->plans);
  vc_mempool_destroy(&b->devpool);
  vc_mempool_destroy(&b->hostpool);
  vc_streampool_destroy(&b->streams);
  if (r == CUDA_SUCCESS) vc_leave(&b->cx);
  vc_context_close(&b->cx);
  free(b);
}

static vyre_status device_profile(vyre_backend *self, vyre_device_profile *out,
                                  vyre_error *err) {
  vc_backend *b = self_of(self);
  if (!out || out->struct_size < 8)
    return vyre_error_set(err, VYRE_INVALID_ARGUMENT, 0,
                          "device_profile: out is NULL or its struct_size is too small. Fix: "
                          "pass a vyre_device_profile with struct_size = sizeof(vyre_device_profile)");
  vyre_status st = vc_deferred_enter(&b->deferred, err);
  if (st != VYRE_OK) return st;
  vyre_device_profile p = *vc_context_profile(&b->cx);
  st = vc_context_memory(&b->cx, &p.free_memory, NULL, err);
  vc_leave(&b->cx);
  if (st != VYRE_OK) return st;
  vyre__sized_write(out, &p, sizeof p);
  return VYRE_OK;
}

static vyre_status prepare(vyre_backend *self, vyre_error *err) {
  vc_backend *b = self_of(self);
  vyre_status st = vc_deferred_enter(&b->deferred, err);
  if (st != VYRE_OK) return st;
  vc_streampool *sp = &b->streams;
  CUstream s = NULL;
  CUevent e0 = NULL, e1 = NULL, d = NULL;
  st = vc_stream_acquire(sp, &s, err);
  if (st == VYRE_OK) st = vc_event_acquire(sp, 0, &d, err);
  if (st == VYRE_OK) st = vc_event_acquire(sp, 1, &e0, err);
  if (st == VYRE_OK) st = vc_event_acquire(sp, 1, &e1, err);
  vc_event_release(sp, 0, d);
  vc_event_release(sp, 1, e0);
  vc_event_release(sp, 1, e1);
  vc_stream_release(sp, s);
  vc_leave(&b->cx);
  return st;
}

static vyre_status backend_shutdown(vyre_backend *self, vyre_error *err) {
  vc_backend *b = self_of(self);
  vyre_status st = vc_deferred_enter(&b->deferred, err);
  if (st != VYRE_OK) return st;
  /* Released work first, each until its deadline at most: past one the
   * instance is lost, and synchronising the context would wait for the
   * runaway kernel. */
  vc_deferred_reap(&b->deferred, 1);
  if (vc_is_lost(&b->cx)) {
    st = vc_lost_error(&b->cx, err);
    vc_leave(&b->cx);
    return st;
  }
  CUresult r = VC_CU(&b->cx, cuCtxSynchronize, ());
  if (r != CUDA_SUCCESS) st = vc_cu_fail(&b->cx, err, r, "cuCtxSynchronize", NULL, NULL);
  vc_deferred_reap(&b->deferred, 1);
  vc_graphs_clear(&b->graphs);
  vc_fuser_clear(&b->fuser);
  vc_modcache_trim(&b->plans);
  vc_mempool_trim(&b->devpool);
  vc_mempool_trim(&b->hostpool);
  vc_staging_trim(&b->staging);
  vc_streampool_trim(&b->streams);
  vc_leave(&b->cx);
  return st;
}

static vyre_status metrics(vyre_backend *self, vyre_metric *out, uint32_t capacity,
                           uint32_t *count, vyre_error *err) {
  return vc_metrics_snapshot(&self_of(self)->metrics, out, capacity, count, err);
}

/* ------------------------------------------------------------------ */
/* The vtable: each entry hands the call to the module that owns it    */
/* ------------------------------------------------------------------ */
static vyre_status dispatch(vyre_backend *self, const vyre_program_ref *program,
                            const vyre_input *inputs, uint32_t input_count,
                            const vyre_dispatch_options *options, vyre_outputs **out,
                            vyre_timing *timing, vyre_error *err) {
  return vc_dispatch(&self_of(self)->dispatcher, program, inputs, input_count, options, out,
                     timing, err);
}

static vyre_status dispatch_into(vyre_backend *self, const vyre_program_ref *program,
                                 const vyre_input *inputs, uint32_t input_count,
                                 const vyre_dispatch_options *options, vyre_output_slot *outputs,
                                 uint32_t output_count, vyre_timing *timing, vyre_error *err) {
  return vc_dispatch_into(&self_of(self)->dispatcher, program, inputs, input_count, options,
                          outputs, output_count, timing, err);
}

static vyre_status dispatch_async(vyre_backend *self, const vyre_program_ref *program,
                                  const vyre_input *inputs, uint32_t input_count,
                                  const vyre_dispatch_options *options, vyre_pending *out,
                                  vyre_error *err) {
  return vc_dispatch_async(&self_of(self)->async, program, inputs, input_count, options, out,
                           err);
}

static vyre_status pending_poll(vyre_backend *self, vyre_pending pending, int *ready,
                                vyre_error *err) {
  return vc_pending_poll(&self_of(self)->async, pending, ready, err);
}

static vyre_status pending_wait(vyre_backend *self, vyre_pending pending, vyre_outputs **out,
                                vyre_timing *timing, vyre_error *err) {
  return vc_pending_wait(&self_of(self)->async, pending, out, timing, err);
}

static vyre_status pending_release(vyre_backend *self, vyre_pending pending, vyre_error *err) {
  return vc_pending_release(&self_of(self)->async, pending, err);
}

static void outputs_free(vyre_backend *self, vyre_outputs *outputs) {
  (void)self;
  free(outputs);
}

static vyre_status resident_alloc(vyre_backend *self, uint64_t size, vyre_resident *out,
                                  vyre_error *err) {
  return vc_resident_alloc(&self_of(self)->resident, size, out, err);
}

static vyre_status resident_free(vyre_backend *self, vyre_resident buffer, vyre_error *err) {
  return vc_resident_free(&self_of(self)->resident, buffer, err);
}

static vyre_status resident_size(vyre_backend *self, vyre_resident buffer, uint64_t *size,
                                 vyre_error *err) {
  return vc_resident_size(&self_of(self)->resident, buffer, size, err);
}

static vyre_status resident_upload(vyre_backend *self, vyre_resident buffer, const void *data,
                                   uint64_t size, vyre_error *err) {
  return vc_resident_upload(&self_of(self)->resident, buffer, data, size, err);
}

static vyre_status resident_upload_at(vyre_backend *self, vyre_resident buffer, uint64_t offset,
                                      const void *data, uint64_t size, vyre_error *err) {
  return vc_resident_upload_at(&self_of(self)->resident, buffer, offset, data, size, err);
}

static vyre_status resident_download(vyre_backend *self, vyre_resident buffer, void *dst,
                                     uint64_t capacity, vyre_error *err) {
  return vc_resident_download(&self_of(self)->resident, buffer, dst, capacity, err);
}

static vyre_status resident_download_range(vyre_backend *self, vyre_resident buffer,
                                           uint64_t offset, void *dst, uint64_t size,
                                           vyre_error *err) {
  return vc_resident_download_range(&self_of(self)->resident, buffer, offset, dst, size, err);
}

static vyre_status resident_upload_many(vyre_backend *self, const vyre_resident_copy *copies,
                                        uint32_t count, vyre_error *err) {
  return vc_resident_upload_many(&self_of(self)->resident, copies, count, err);
}

static vyre_status resident_download_many(vyre_backend *self, const vyre_resident_copy *copies,
                                          uint32_t count, vyre_error *err) {
  return vc_resident_download_many(&self_of(self)->resident, copies, count, err);
}

static vyre_status dispatch_resident(vyre_backend *self, const vyre_program_ref *program,
                                     const vyre_resident *buffers, uint32_t buffer_count,
                                     const vyre_dispatch_options *options, vyre_timing *timing,
                                     vyre_error *err) {
  return vc_dispatch_resident(&self_of(self)->sequencer, program, buffers, buffer_count,
                              options, timing, err);
}

static vyre_status dispatch_sequence(vyre_backend *self, const vyre_sequence_step *steps,
                                     uint32_t step_count, uint32_t repeat,
                                     const vyre_resident_copy *reads, uint32_t read_count,
                                     vyre_timing *timing, vyre_error *err) {
  return vc_dispatch_sequence(&self_of(self)->sequencer, steps, step_count, repeat, reads,
                              read_count, timing, err);
}

static vyre_status pipeline_create(vyre_backend *self, const void *program_bytes,
                                   uint64_t program_size, const vyre_dispatch_options *options,
                                   vyre_pipeline *out, vyre_error *err) {
  return vc_pipeline_create(&self_of(self)->pipelines, program_bytes, program_size, options, out,
                            err);
}

static vyre_status pipeline_release(vyre_backend *self, vyre_pipeline pipeline, vyre_error *err) {
  return vc_pipeline_release(&self_of(self)->pipelines, pipeline, err);
}

/* ------------------------------------------------------------------ */
/* The CUDA interop extension (vyre_cuda.h): one table for every       */
/* instance, living until the process exits; each entry finds its     */
/* instance through `self`                                             */
/* ------------------------------------------------------------------ */
static vyre_status interop_context(vyre_backend *self, void **cu_context, int32_t *cu_device,
                                   vyre_error *err) {
  return vc_interop_context(&self_of(self)->interop, cu_context, cu_device, err);
}

static vyre_status interop_import(vyre_backend *self, uint64_t device_ptr, uint64_t size,
                                  vyre_resident *out, vyre_error *err) {
  return vc_interop_import(&self_of(self)->interop, device_ptr, size, out, err);
}

static vyre_status interop_pointer(vyre_backend *self, vyre_resident buffer,
                                   uint64_t *device_ptr, uint64_t *size, vyre_error *err) {
  return vc_interop_pointer(&self_of(self)->interop, buffer, device_ptr, size, err);
}

static const vyre_cuda_interop interop_table = {
    .head = {sizeof(vyre_cuda_interop), VYRE_CUDA_INTEROP_VERSION},
    .context = interop_context,
    .resident_import = interop_import,
    .resident_pointer = interop_pointer,
};

static vyre_status get_extension(vyre_backend *self, const char *name, uint32_t version,
                                 const void **out, vyre_error *err) {
  (void)self;
  return vc_interop_lookup(&interop_table, name, version, out, err);
}

static const vyre_backend_vtable vtable = {
    .struct_size = sizeof(vyre_backend_vtable),
    .reserved = 0,
    .destroy = destroy,
    .device_profile = device_profile,
    .prepare = prepare,
    .shutdown = backend_shutdown,
    .metrics = metrics,
    .dispatch = dispatch,
    .dispatch_into = dispatch_into,
    .dispatch_async = dispatch_async,
    .pending_poll = pending_poll,
    .pending_wait = pending_wait,
    .pending_release = pending_release,
    .outputs_free = outputs_free,
    .resident_alloc = resident_alloc,
    .resident_free = resident_free,
    .resident_size = resident_size,
    .resident_upload = resident_upload,
    .resident_upload_at = resident_upload_at,
    .resident_download = resident_download,
    .resident_download_range = resident_download_range,
    .resident_upload_many = resident_upload_many,
    .resident_download_many = resident_download_many,
    .dispatch_resident = dispatch_resident,
    .dispatch_sequence = dispatch_sequence,
    .pipeline_create = pipeline_create,
    .pipeline_release = pipeline_release,
    .get_extension = get_extension,
};
