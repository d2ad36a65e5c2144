/* cuda_internal.h -- private types of libvyre-cuda: the driver entry table, the instance, pools, caches, jobs. */
#ifndef VYRE_PLUGIN_CUDA_INTERNAL_H
#define VYRE_PLUGIN_CUDA_INTERNAL_H

#include <pthread.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>

#include <cuda.h>
#include <cudaTypedefs.h>

#include "plugin/codegen/codegen.h"
#include "vyre/vyre.h"
#include "vyre/vyre_program.h"
#include "vyre/vyre_support.h"

#if CUDA_VERSION < 11040
#error "libvyre-cuda needs cuda.h from CUDA 11.4 or newer (cuGraphInstantiateWithFlags, cuGetProcAddress)"
#endif

/*
 * Every driver entry point the plugin uses: X(base name, CUDA version of
 * the prototype, parameter list).  Each is resolved with
 * cuGetProcAddress(base name, that version): the driver hands back the
 * newest implementation whose ABI is that prototype's.  Asking with the
 * header's CUDA_VERSION instead is wrong: CUDA 13 answers
 * "cuCtxSynchronize" with cuCtxSynchronize_v2(CUcontext).  The version
 * and prototype are checked at compile time against cudaTypedefs.h's
 * PFN_<name>_v<version>.  The list is also what the fake-driver tests
 * iterate over.  Call sites use VC_CU(b, name, (args)) so the name they
 * report in errors is the base name from this list.
 */
#define VC_DRIVER_API(X)                                                                     \
  X(cuInit, 2000, (unsigned int flags))                                                            \
  X(cuDriverGetVersion, 2020, (int *version))                                                      \
  X(cuDeviceGetCount, 2000, (int *count))                                                          \
  X(cuDeviceGet, 2000, (CUdevice * device, int ordinal))                                           \
  X(cuDeviceGetName, 2000, (char *name, int len, CUdevice dev))                                    \
  X(cuDeviceGetAttribute, 2000, (int *value, CUdevice_attribute attrib, CUdevice dev))             \
  X(cuDeviceTotalMem, 3020, (size_t * bytes, CUdevice dev))                                        \
  X(cuDevicePrimaryCtxRetain, 7000, (CUcontext * ctx, CUdevice dev))                               \
  X(cuDevicePrimaryCtxRelease, 11000, (CUdevice dev))                                               \
  X(cuDevicePrimaryCtxReset, 11000, (CUdevice dev))                                                 \
  X(cuCtxPushCurrent, 4000, (CUcontext ctx))                                                       \
  X(cuCtxPopCurrent, 4000, (CUcontext * ctx))                                                      \
  X(cuCtxSynchronize, 2000, (void))                                                                \
  X(cuMemGetInfo, 3020, (size_t * free_bytes, size_t * total_bytes))                               \
  X(cuMemAlloc, 3020, (CUdeviceptr * dptr, size_t bytes))                                          \
  X(cuMemFree, 3020, (CUdeviceptr dptr))                                                           \
  X(cuMemHostAlloc, 2020, (void **pp, size_t bytes, unsigned int flags))                           \
  X(cuMemFreeHost, 2000, (void *p))                                                                \
  X(cuMemcpyHtoDAsync, 3020, (CUdeviceptr dst, const void *src, size_t bytes, CUstream stream))    \
  X(cuMemcpyDtoHAsync, 3020, (void *dst, CUdeviceptr src, size_t bytes, CUstream stream))          \
  X(cuMemsetD8Async, 3020, (CUdeviceptr dst, unsigned char value, size_t n, CUstream stream))      \
  X(cuStreamCreate, 2000, (CUstream * stream, unsigned int flags))                                 \
  X(cuStreamDestroy, 4000, (CUstream stream))                                                      \
  X(cuStreamSynchronize, 2000, (CUstream stream))                                                  \
  X(cuEventCreate, 2000, (CUevent * event, unsigned int flags))                                    \
  X(cuEventDestroy, 4000, (CUevent event))                                                         \
  X(cuEventRecord, 2000, (CUevent event, CUstream stream))                                         \
  X(cuEventQuery, 2000, (CUevent event))                                                           \
  X(cuEventSynchronize, 2000, (CUevent event))                                                     \
  X(cuEventElapsedTime, 2000, (float *ms, CUevent start, CUevent end))                             \
  X(cuModuleLoadData, 2000, (CUmodule * module, const void *image))                                \
  X(cuModuleUnload, 2000, (CUmodule module))                                                       \
  X(cuModuleGetFunction, 2000, (CUfunction * fn, CUmodule module, const char *name))               \
  X(cuLinkCreate, 6050, (unsigned int n, CUjit_option *options, void **values, CUlinkState *state)) \
  X(cuLinkAddData, 6050, (CUlinkState state, CUjitInputType type, void *data, size_t size,         \
                    const char *name, unsigned int n, CUjit_option *options, void **values))  \
  X(cuLinkComplete, 5050, (CUlinkState state, void **cubin, size_t *size))                         \
  X(cuLinkDestroy, 5050, (CUlinkState state))                                                      \
  X(cuLaunchKernel, 4000, (CUfunction fn, unsigned int gx, unsigned int gy, unsigned int gz,       \
                     unsigned int bx, unsigned int by, unsigned int bz, unsigned int smem,   \
                     CUstream stream, void **params, void **extra))                          \
  X(cuLaunchCooperativeKernel, 9000, (CUfunction fn, unsigned int gx, unsigned int gy,             \
                                unsigned int gz, unsigned int bx, unsigned int by,           \
                                unsigned int bz, unsigned int smem, CUstream stream,         \
                                void **params))                                              \
  X(cuOccupancyMaxActiveBlocksPerMultiprocessor, 6050,                                             \
    (int *blocks, CUfunction fn, int block_size, size_t dynamic_smem))                       \
  X(cuStreamBeginCapture, 10010, (CUstream stream, CUstreamCaptureMode mode))                       \
  X(cuStreamEndCapture, 10000, (CUstream stream, CUgraph * graph))                                  \
  X(cuGraphInstantiateWithFlags, 11040, (CUgraphExec * exec, CUgraph graph, unsigned long long flags)) \
  X(cuGraphLaunch, 10000, (CUgraphExec exec, CUstream stream))                                      \
  X(cuGraphExecDestroy, 10000, (CUgraphExec exec))                                                  \
  X(cuGraphDestroy, 10000, (CUgraph graph))                                                         \
  X(cuGetErrorName, 6000, (CUresult error, const char **text))                                     \
  X(cuGetErrorString, 6000, (CUresult error, const char **text))

/* Our own function-pointer types, one per entry point. */
#define VC_PFN_TYPEDEF_(name, version, params) typedef CUresult(CUDAAPI *vc_pfn_##name) params;
VC_DRIVER_API(VC_PFN_TYPEDEF_)
#undef VC_PFN_TYPEDEF_

/* Our prototypes are the driver's at the version we ask for. */
#define VC_PFN_CHECK_(name, version, params)                                             \
  _Static_assert(__builtin_types_compatible_p(vc_pfn_##name, PFN_##name##_v##version),    \
                 #name " prototype differs from cudaTypedefs.h PFN_" #name "_v" #version);
VC_DRIVER_API(VC_PFN_CHECK_)
#undef VC_PFN_CHECK_

typedef struct vc_api {
#define VC_PFN_FIELD_(name, version, params) vc_pfn_##name f_##name;
  VC_DRIVER_API(VC_PFN_FIELD_)
#undef VC_PFN_FIELD_
} vc_api;

/* Call a resolved entry point by its base name. */
#define VC_CU(b, name, args) ((b)->api.f_##name args)

typedef struct vc_backend vc_backend;

/* ------------------------------------------------------------------ */
/* Pools (pools.c)                                                     */
/* ------------------------------------------------------------------ */
typedef enum vc_pool_kind { VC_POOL_DEVICE = 0, VC_POOL_PINNED = 1 } vc_pool_kind;

/* One allocation: a CUdeviceptr or a pinned host pointer, and its bucket size. */
typedef struct vc_block {
  uint64_t ptr;
  uint64_t size;
} vc_block;

typedef struct vc_mempool {
  pthread_mutex_t lock;
  vc_backend *b;
  vc_pool_kind kind;
  vc_block *cache;      /* free blocks, any bucket; exact-size reuse */
  uint32_t cache_count, cache_cap;
  uint64_t cached_bytes; /* sum of cache[].size */
  uint64_t budget;       /* cached_bytes never exceeds this */
  uint64_t live_bytes;   /* handed out, not yet released */
  uint64_t hits, misses, driver_allocs, driver_frees, release_errors;
} vc_mempool;

typedef struct vc_handle_list {
  void **items;
  uint32_t count, cap;
} vc_handle_list;

typedef struct vc_streampool {
  pthread_mutex_t lock;
  vc_handle_list streams, done_events, timing_events;
  uint64_t streams_created, events_created, reuses, destroy_errors;
} vc_streampool;

/* ------------------------------------------------------------------ */
/* Plans and caches (cache.c)                                          */
/* ------------------------------------------------------------------ */
/* A program lowered and loaded for this device: shared, refcounted. */
typedef struct vc_plan {
  atomic_uint refs;
  uint8_t key[32];
  vyre_program *program; /* owned */
  cg_options cg;
  cg_kernel_info info;
  CUmodule module;
  CUfunction fn;
  uint32_t coop_max_blocks; /* co-resident blocks (grid barrier kernels), 0 otherwise */
  /* A params block kept on the device for kernels that never write it (no
   * trap or grid-barrier words): launches with the same words reuse it. */
  pthread_mutex_t params_lock;
  vc_block params_block;
  uint32_t params_n;
  uint32_t *params_copy;
  struct vc_plan *prev, *next; /* LRU list, guarded by the cache lock */
  int cached;
} vc_plan;

typedef struct vc_modcache {
  pthread_mutex_t lock;
  vc_plan *head, *tail; /* most recently used first */
  uint32_t count, capacity;
  uint64_t hits, misses, evictions, compiles;
} vc_modcache;

typedef struct vc_diskcache {
  int enabled;
  char dir[1024];
  atomic_ullong hits, misses, writes, corrupt, write_errors;
} vc_diskcache;

/* ------------------------------------------------------------------ */
/* Resident buffers (resident.c)                                       */
/* ------------------------------------------------------------------ */
typedef struct vc_resident {
  CUdeviceptr ptr;
  uint64_t size;
} vc_resident;

typedef struct vc_resident_store {
  vyre_handle_table table;
  pthread_mutex_t lock;
  uint64_t bytes; /* sum of live sizes */
  uint64_t count;
  uint64_t budget_rejects;
} vc_resident_store;

/* One host<->device copy of a transfer. */
typedef struct vc_segment {
  CUdeviceptr dev;
  void *host;
  uint64_t size;
} vc_segment;

/* ------------------------------------------------------------------ */
/* Jobs, pipelines, graphs (dispatch.c)                                */
/* ------------------------------------------------------------------ */
typedef struct vc_job vc_job;
typedef struct vc_graph vc_graph;

typedef struct vc_graphcache {
  pthread_mutex_t lock;
  vc_graph *head; /* most recently used first */
  uint32_t count, capacity;
  uint64_t hits, misses, launches, captures_refused;
} vc_graphcache;

/* ------------------------------------------------------------------ */
/* The instance                                                        */
/* ------------------------------------------------------------------ */
struct vc_backend {
  vyre_backend head; /* public head: must stay first */

  /* driver (context.c) */
  void *dl;
  vc_api api;
  int driver_version;
  CUdevice device;
  CUcontext ctx;
  int ctx_retained;
  uint32_t ordinal;
  vyre_device_profile profile;
  int sm_count, cooperative, max_threads_per_block, shared_per_block;
  atomic_int lost;
  pthread_mutex_t lost_lock;
  char lost_reason[768];
  unsigned epoch;  /* primary-context generation seen at create (context.c) */
  int orphaned;    /* destroy could not make the context current */

  /* pools (pools.c) */
  vc_mempool devpool, hostpool;
  vc_streampool streams;
  uint64_t staging_chunk;

  /* resident buffers (resident.c) */
  vc_resident_store resident;

  /* caches (cache.c) */
  vc_modcache modcache;
  vc_diskcache disk;

  /* dispatch (dispatch.c) */
  vyre_handle_table pending, pipelines;
  pthread_mutex_t deferred_lock;
  vc_job *deferred;
  atomic_uint deferred_count;
  vc_graphcache graphs;
  uint32_t test_fault_dispatch; /* VYRE_CUDA_TEST_FAULT_DISPATCH: see docs/cuda-runtime.md */
  pthread_mutex_t fault_lock;
  CUmodule fault_module;
  CUfunction fault_fn;

  /* counters */
  atomic_ullong n_dispatches, n_launches, n_driver_errors, n_ctx_pop_errors, n_pending_live,
      n_deferred_reaped, n_sequences, n_traps, n_fastpath_launches, n_params_reused;
  atomic_uint n_host_dispatch_seq;
};

/* ------------------------------------------------------------------ */
/* context.c                                                           */
/* ------------------------------------------------------------------ */
/* Debug tracing (VYRE_LOG=debug); never the only signal of a failure. */
void vc_log(const char *fmt, ...) VYRE_PRINTF(1, 2);
uint64_t vc_now_ns(void);

/* 1 when `r` leaves the context unusable (illegal address, launch failure...). */
int vc_is_sticky(CUresult r);

/*
 * Turn a failed driver call into *err: names the call, the CUresult name
 * and text (their own failures are handled), the kernel when non-NULL and
 * a Fix (`fix` NULL: one chosen by the code).  A sticky code marks the
 * instance lost and yields VYRE_DEVICE_LOST; out of memory yields
 * VYRE_OUT_OF_MEMORY; the rest VYRE_DRIVER.  Thread-safe.
 */
vyre_status vc_cu_fail(vc_backend *b, vyre_error *err, CUresult r, const char *call,
                       const char *kernel, const char *fix);
/* Record a failure nobody can be told about (a free during cleanup): counts
 * it, marks the instance lost when sticky, logs at debug. */
void vc_cu_note(vc_backend *b, CUresult r, const char *call);

/* Mark the instance lost with a reason (first reason wins). */
void vc_mark_lost(vc_backend *b, const char *reason);
/* 1 once a sticky error was seen, or another instance reset the primary
 * context this instance's objects lived in. */
int vc_is_lost(vc_backend *b);
/* 1 when freeing driver objects one by one makes sense: not lost (a lost
 * context takes its objects with it when it is reset or released) and
 * the context is current. */
int vc_cleanup_ok(vc_backend *b);
/* VYRE_DEVICE_LOST with the stored reason. */
vyre_status vc_lost_error(vc_backend *b, vyre_error *err);

/* Every entry point brackets its driver work with enter/leave: fail fast
 * when lost, push the instance's context on this thread, reap finished
 * deferred releases; leave pops the context. */
vyre_status vc_enter(vc_backend *b, vyre_error *err);
void vc_leave(vc_backend *b);

/* Load the driver, resolve entry points, init, probe device `ordinal`,
 * retain its primary context.  On failure everything acquired is released
 * and err says why (VYRE_NO_DEVICE when there is no usable driver/device). */
vyre_status vc_context_open(vc_backend *b, uint32_t ordinal, vyre_error *err);
/* Release the primary context and the driver library (idempotent). */
void vc_context_close(vc_backend *b);
/* Refresh free memory in the profile. */
vyre_status vc_context_memory(vc_backend *b, uint64_t *free_bytes, uint64_t *total_bytes,
                              vyre_error *err);

/* ------------------------------------------------------------------ */
/* pools.c                                                             */
/* ------------------------------------------------------------------ */
/* The bucket a request of n bytes is served from; 0 when n is 0 or too large. */
uint64_t vc_bucket_size(uint64_t n);
void vc_mempool_init(vc_mempool *p, vc_backend *b, vc_pool_kind kind, uint64_t budget);
/* Trim then free the bookkeeping; the context must be current. */
void vc_mempool_destroy(vc_mempool *p);
/* A block of at least n (> 0) bytes: cached or new.  Thread-safe. */
vyre_status vc_mempool_acquire(vc_mempool *p, uint64_t n, vc_block *out, vyre_error *err);
/* Give a block back: cached within the budget, else freed.  Accepts an
 * empty block.  Thread-safe. */
void vc_mempool_release(vc_mempool *p, vc_block *blk);
/* Free every cached block.  Thread-safe. */
void vc_mempool_trim(vc_mempool *p);

void vc_streampool_init(vc_streampool *p);
/* Destroy every cached stream/event; the context must be current. */
void vc_streampool_trim(vc_backend *b);
void vc_streampool_destroy(vc_backend *b);
vyre_status vc_stream_acquire(vc_backend *b, CUstream *out, vyre_error *err);
void vc_stream_release(vc_backend *b, CUstream s);
/* Destroy a stream whose state is unknown (a failed capture) instead of pooling it. */
void vc_stream_discard(vc_backend *b, CUstream s);
/* timing = 1: an event that records time; 0: CU_EVENT_DISABLE_TIMING. */
vyre_status vc_event_acquire(vc_backend *b, int timing, CUevent *out, vyre_error *err);
void vc_event_release(vc_backend *b, int timing, CUevent e);

/* ------------------------------------------------------------------ */
/* resident.c                                                          */
/* ------------------------------------------------------------------ */
void vc_resident_init(vc_backend *b);
void vc_resident_destroy(vc_backend *b);
/* Look up a live handle; NULL (and INVALID_HANDLE in err) otherwise. */
vc_resident *vc_resident_get(vc_backend *b, vyre_resident h, const char *what, vyre_error *err);
/* Copy segments between host and device on `stream`, staged through
 * pinned chunks with double buffering, then synchronise the stream once.
 * to_device: 1 upload, 0 download. */
vyre_status vc_transfer(vc_backend *b, CUstream stream, const vc_segment *segs, uint32_t count,
                        int to_device, vyre_error *err);
vyre_status vc_resident_alloc(vyre_backend *self, uint64_t size, vyre_resident *out,
                              vyre_error *err);
vyre_status vc_resident_free(vyre_backend *self, vyre_resident buffer, vyre_error *err);
vyre_status vc_resident_size(vyre_backend *self, vyre_resident buffer, uint64_t *size,
                             vyre_error *err);
vyre_status vc_resident_upload(vyre_backend *self, vyre_resident buffer, const void *data,
                               uint64_t size, vyre_error *err);
vyre_status vc_resident_upload_at(vyre_backend *self, vyre_resident buffer, uint64_t offset,
                                  const void *data, uint64_t size, vyre_error *err);
vyre_status vc_resident_download(vyre_backend *self, vyre_resident buffer, void *dst,
                                 uint64_t capacity, vyre_error *err);
vyre_status vc_resident_download_range(vyre_backend *self, vyre_resident buffer,
                                       uint64_t offset, void *dst, uint64_t size,
                                       vyre_error *err);
vyre_status vc_resident_upload_many(vyre_backend *self, const vyre_resident_copy *copies,
                                    uint32_t count, vyre_error *err);
vyre_status vc_resident_download_many(vyre_backend *self, const vyre_resident_copy *copies,
                                      uint32_t count, vyre_error *err);
/* Check copies against their buffers and build segments (caller frees
 * *segs).  Nothing is copied. */
vyre_status vc_resident_plan_copies(vc_backend *b, const vyre_resident_copy *copies,
                                    uint32_t count, int upload, vc_segment **segs,
                                    vyre_error *err);

/* ------------------------------------------------------------------ */
/* cache.c                                                             */
/* ------------------------------------------------------------------ */
void vc_modcache_init(vc_backend *b);
/* Drop every cached plan no one else holds (shutdown) or all (destroy). */
void vc_modcache_trim(vc_backend *b);
void vc_modcache_destroy(vc_backend *b);
void vc_diskcache_init(vc_backend *b);
/*
 * The plan for `program` (consumed: owned by the plan or freed) under cg
 * options `cg`: from the memory cache, the disk cache, or codegen + JIT.
 * *out holds one reference (vc_plan_unref).  Thread-safe.
 */
vyre_status vc_plan_get(vc_backend *b, vyre_program *program, const cg_options *cg,
                        vc_plan **out, vyre_error *err);
void vc_plan_ref(vc_plan *plan);
void vc_plan_unref(vc_backend *b, vc_plan *plan);

/* ------------------------------------------------------------------ */
/* dispatch.c                                                          */
/* ------------------------------------------------------------------ */
void vc_dispatch_init(vc_backend *b);
/* Wait for and release everything in flight: pending handles, deferred
 * releases, pipelines (destroy only), graphs. */
void vc_dispatch_drain(vc_backend *b, int destroying);
/* Finish deferred releases whose work has completed (wait = 1: all). */
void vc_reap_deferred(vc_backend *b, int wait);
/* Forget cached graphs that use resident handle h (it is being freed). */
void vc_graphs_forget_resident(vc_backend *b, vyre_resident h);

vyre_status vc_dispatch(vyre_backend *self, const vyre_program_ref *program,
                        const vyre_input *inputs, uint32_t input_count,
                        const vyre_dispatch_options *options, vyre_outputs **out,
                        vyre_timing *timing, vyre_error *err);
vyre_status vc_dispatch_into(vyre_backend *self, const vyre_program_ref *program,
                             const vyre_input *inputs, uint32_t input_count,
                             const vyre_dispatch_options *options, vyre_output_slot *outputs,
                             uint32_t output_count, vyre_timing *timing, vyre_error *err);
vyre_status vc_dispatch_async(vyre_backend *self, const vyre_program_ref *program,
                              const vyre_input *inputs, uint32_t input_count,
                              const vyre_dispatch_options *options, vyre_pending *out,
                              vyre_error *err);
vyre_status vc_pending_poll(vyre_backend *self, vyre_pending pending, int *ready,
                            vyre_error *err);
vyre_status vc_pending_wait(vyre_backend *self, vyre_pending pending, vyre_outputs **out,
                            vyre_timing *timing, vyre_error *err);
vyre_status vc_pending_release(vyre_backend *self, vyre_pending pending, vyre_error *err);
void vc_outputs_free(vyre_backend *self, vyre_outputs *outputs);
vyre_status vc_dispatch_resident(vyre_backend *self, const vyre_program_ref *program,
                                 const vyre_resident *buffers, uint32_t buffer_count,
                                 const vyre_dispatch_options *options, vyre_timing *timing,
                                 vyre_error *err);
vyre_status vc_dispatch_sequence(vyre_backend *self, const vyre_sequence_step *steps,
                                 uint32_t step_count, uint32_t repeat,
                                 const vyre_resident_copy *reads, uint32_t read_count,
                                 vyre_timing *timing, vyre_error *err);
vyre_status vc_pipeline_create(vyre_backend *self, const void *program_bytes,
                               uint64_t program_size, const vyre_dispatch_options *options,
                               vyre_pipeline *out, vyre_error *err);
vyre_status vc_pipeline_release(vyre_backend *self, vyre_pipeline pipeline, vyre_error *err);

/* ------------------------------------------------------------------ */
/* plugin.c                                                            */
/* ------------------------------------------------------------------ */
/* 1 when the linked code generator lowers transcendentals (it does only
 * with the PTX math library); probed once.  Thread-safe. */
int vc_codegen_has_transcendentals(void);

/* ------------------------------------------------------------------ */
/* small helpers                                                       */
/* ------------------------------------------------------------------ */
/* a + b into *out; 0 on overflow. */
static inline int vc_add_u64(uint64_t a, uint64_t b, uint64_t *out) {
  if (a > UINT64_MAX - b) return 0;
  *out = a + b;
  return 1;
}

/* Copy a caller's size-prefixed options into a zeroed full struct. */
static inline void vc_options_read(const vyre_dispatch_options *in, vyre_dispatch_options *out) {
  uint8_t *dst = (uint8_t *)out;
  for (size_t i = 0; i < sizeof *out; i++) dst[i] = 0;
  if (!in) return;
  size_t n = in->struct_size < sizeof *out ? in->struct_size : sizeof *out;
  const uint8_t *src = (const uint8_t *)in;
  for (size_t i = 0; i < n; i++) dst[i] = src[i];
  out->struct_size = (uint32_t)sizeof *out;
}

static inline vc_backend *vc_self(vyre_backend *self) { return (vc_backend *)self; }

#endif /* VYRE_PLUGIN_CUDA_INTERNAL_H */
