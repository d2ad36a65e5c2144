/* ref.h -- internal interfaces of the reference CPU backend (libvyre-ref.so), prefix ref_. */
#ifndef VYRE_REF_REF_H
#define VYRE_REF_REF_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>

#include "vyre/vyre.h"
#include "vyre/vyre_program.h"
#include "vyre/vyre_support.h"

#define REF_BACKEND_ID "reference"
#define REF_DEVICE_NAME "vyre reference CPU interpreter"
#define REF_PRECEDENCE 900
#define REF_SUBGROUP 32u

/* The most host memory one launch may use for interpreter state (per-
 * invocation values and locals, workgroup memory kept across grid
 * barriers).  Beyond it a dispatch is refused with VYRE_LIMIT. */
#define REF_MAX_STATE_BYTES (1ull << 30)

/* Every capability the reference really implements (no graph replay);
 * correctly_rounded: its transcendentals are ptxmath's PM_CR (scalar.c). */
#define REF_CAPABILITIES                                                               \
  (VYRE_CAP_F16 | VYRE_CAP_BF16 | VYRE_CAP_SUBGROUP | VYRE_CAP_ATOMIC64 |              \
   VYRE_CAP_GRID_BARRIER | VYRE_CAP_ASYNC | VYRE_CAP_RESIDENT | VYRE_CAP_SEQUENCE |     \
   VYRE_CAP_TIMING | VYRE_CAP_PIPELINE | VYRE_CAP_FIXPOINT | VYRE_CAP_TRAP |            \
   VYRE_CAP_TRANSCENDENTAL | VYRE_CAP_WORKGROUP_MEMORY | VYRE_CAP_ATOMICS |             \
   VYRE_CAP_BARRIER | VYRE_CAP_INT64 | VYRE_CAP_OUT_RANGE | VYRE_CAP_TENSOR_CORES |     \
   VYRE_CAP_INDIRECT_DISPATCH | VYRE_CAP_CORRECTLY_ROUNDED)

/* ------------------------------------------------------------------ */
/* scalar.c: the meaning of every op on one value (docs/semantics.md).  */
/* Values travel in 64-bit slots: bool is 0/1, 32-bit types hold their */
/* bit pattern zero-extended, f32 its (canonical) bits.  All pure and  */
/* thread-safe.                                                         */
/* ------------------------------------------------------------------ */

/* Binary ops (class BINARY) on operands of value type t. */
uint64_t ref_binary(uint32_t op, uint32_t t, uint64_t a, uint64_t b);
/* Compares (class COMPARE) on operands of value type t; returns 0 or 1. */
uint64_t ref_compare(uint32_t op, uint32_t t, uint64_t a, uint64_t b);
/* Unary ops and f32 predicates (classes UNARY, PREDICATE) on an operand of type t. */
uint64_t ref_unary(uint32_t op, uint32_t t, uint64_t a);
/* cast from value type `from` to value type `to`. */
uint64_t ref_cast(uint32_t from, uint32_t to, uint64_t a);
/* fma on f32 bits, rounded once and canonicalised. */
uint64_t ref_fma(uint64_t a, uint64_t b, uint64_t c);
/* One step of a subgroup reduction of kind `kind` over type t. */
uint64_t ref_reduce_step(uint32_t kind, uint32_t t, uint64_t a, uint64_t b);
/* The identity a reduction starts inactive lanes with. */
uint64_t ref_reduce_identity(uint32_t kind, uint32_t t);

/* Element `index` of a buffer of storage type `elem` at `base` (aligned
 * for the type), widened to its compute type; f32 results canonical. */
uint64_t ref_load_elem(const uint8_t *base, uint32_t elem, uint64_t index);
/* Store compute-type value v narrowed to storage type `elem`. */
void ref_store_elem(uint8_t *base, uint32_t elem, uint64_t index, uint64_t v);
/* Atomic op (ATOMIC_ADD..ATOMIC_CAS) on element `index` of a u32/i32/
 * u64/i64 buffer; returns the old value.  Safe against concurrent
 * callers on the same element. */
uint64_t ref_atomic_elem(uint8_t *base, uint32_t op, uint32_t t, uint64_t index, uint64_t v,
                         uint64_t desired);

/* ------------------------------------------------------------------ */
/* interp.c: running a validated program over staged buffers.          */
/* ------------------------------------------------------------------ */
/* A dispatch's limits (vyre_limits, vyre.h); 0 fields = none. */
typedef struct ref_limits {
  uint64_t max_steps;   /* steps: one per invocation a launch starts, one
                           per instruction executed, over the whole call */
  uint64_t timeout_ns;  /* as given (for messages) */
  uint64_t deadline_ns; /* vyre__now_ns() value it must end by */
} ref_limits;

/* How often (in steps, per thread) a limited launch adds its steps up and
 * reads the clock. */
#define REF_BUDGET_QUANTUM 4096u

typedef struct ref_exec_stats {
  uint64_t launches;
  uint64_t invocations;
  uint32_t threads_used; /* most threads one launch used */
  int budget_exceeded;   /* stopped by its limits */
} ref_exec_stats;

/*
 * Run `iterations` (>= 1) launches of program p with geometry g.  mem
 * holds one pointer per buffer in declaration order (NULL for workgroup
 * buffers, and allowed for buffers of 0 bytes); each holds
 * g->buffer_bytes[i] bytes at least and stays owned by the caller.  Uses
 * up to `threads` threads (the caller's included).  `lim` (NULL: none)
 * stops the launch once its steps pass lim->max_steps or the clock passes
 * lim->deadline_ns: VYRE_LIMIT "budget exceeded".  Returns VYRE_OK,
 * VYRE_TRAP (err names the code and instruction; buffer contents are then
 * unspecified), VYRE_LIMIT (state too large, or a budget exceeded; buffer
 * contents then unspecified) or VYRE_OUT_OF_MEMORY.  stats may be NULL.
 * Thread-safe: launches share nothing.
 */
vyre_status ref_execute(const vyre_program *p, const vyre_geometry *g, uint8_t *const *mem,
                        uint32_t iterations, uint32_t threads, const ref_limits *lim,
                        ref_exec_stats *stats, vyre_error *err);

/* As ref_execute; shadow (NULL: none) holds, per buffer, NULL or one
 * double per 4-byte element that each write sets: an mma_store of a
 * mat_acc_f32 tile to the element's error bound, any other store or
 * atomic to -1.0 (the MMA bound side channel, tolerance.h). */
vyre_status ref_execute_bounds(const vyre_program *p, const vyre_geometry *g,
                               uint8_t *const *mem, uint32_t iterations, uint32_t threads,
                               const ref_limits *lim, ref_exec_stats *stats,
                               double *const *shadow, vyre_error *err);

/* ------------------------------------------------------------------ */
/* mma.c: the MMA ops (docs/semantics.md, "Matrix multiply-accumulate") */
/* ------------------------------------------------------------------ */
#define REF_TILE_ELEMS 512u /* the largest tile: A of i8/u8, 16 x 32 */
/* One matrix local of one subgroup; all zeros is the starting tile. */
typedef struct ref_tile {
  /* Element (r, c) at r * cols + c: f16/bf16 bits, i8 sign- and u8
   * zero-extended, f32 bits (NaN canonical, subnormals kept), i32. */
  uint32_t v[REF_TILE_ELEMS];
  double bound[256]; /* mat_acc_f32: each element's error bound */
} ref_tile;

/* What the MMA ops of one launch see: its program, geometry, buffers
 * (ref_execute's mem), bound shadow (ref_execute_bounds, or NULL), and
 * the tile of each local slot (ref_mma_tile_slots). */
typedef struct ref_mma_ctx {
  const vyre_program *p;
  const vyre_geometry *g;
  uint8_t *const *mem;
  double *const *shadow;
  uint32_t *tile_of;
} ref_mma_ctx;

/* Execute MMA op `in` (mma_fill, mma_load, mma, mma_store) once for one
 * subgroup of a workgroup whose workgroup memory is `shared`: tiles are
 * the subgroup's, vals the values of the lane whose index and stride
 * count (lane 0).  Not thread-safe on the same tiles. */
void ref_mma_run(const ref_mma_ctx *x, uint8_t *shared, ref_tile *tiles, const vyre_inst *in,
                 const uint64_t *vals);
/* shadow[index] = v, a relaxed atomic store. */
void ref_mma_shadow_set(double *shadow, uint64_t index, double v);
/* The matrix locals of p: *count of them, and *tile_of (malloc'd, one
 * entry per local: its tile, or UINT32_MAX) when *count > 0, else NULL.
 * Returns -1 when out of memory. */
int ref_mma_tile_slots(const vyre_program *p, uint32_t **tile_of, uint32_t *count);
/* Strict mode: a float mma (f16/bf16) under ulp budget 0 is
 * VYRE_UNSUPPORTED. */
vyre_status ref_mma_check_strict(const vyre_program *p, uint32_t ulp_budget, vyre_error *err);

/* ------------------------------------------------------------------ */
/* tolerance.c: the MMA bound side channel of tolerance.h               */
/* ------------------------------------------------------------------ */
struct ref_mma_bound;
/* The ref_mma_bound (tolerance.h) chained on o into *out (NULL: none);
 * VYRE_INVALID_ARGUMENT for a malformed chain or a duplicate. */
vyre_status ref_mma_bound_find(const vyre_dispatch_options *o, const struct ref_mma_bound **out,
                               vyre_error *err);
/* ref_execute, and with mb (NULL: none) fill its arrays for p's outputs
 * when the run succeeds (tolerance.h says what). */
vyre_status ref_mma_execute(const vyre_program *p, const vyre_geometry *g, uint8_t *const *mem,
                            uint32_t iterations, uint32_t threads, const ref_limits *lim,
                            ref_exec_stats *stats, const struct ref_mma_bound *mb,
                            vyre_error *err);

/* ------------------------------------------------------------------ */
/* The backend instance (backend.c, resident.c, dispatch.c, async.c).  */
/* ------------------------------------------------------------------ */

/* Metrics: one list makes the enum and the names. */
#define REF_METRIC_MAP(X)                                  \
  X(DISPATCHES, "dispatch.count")                          \
  X(DISPATCH_ERRORS, "dispatch.errors")                    \
  X(TRAPS, "dispatch.traps")                               \
  X(BUDGET, "dispatch.budget_exceeded")                    \
  X(LAUNCHES, "launch.count")                              \
  X(INVOCATIONS, "launch.invocations")                     \
  X(EXEC_NS, "launch.exec_ns")                             \
  X(THREADS_USED, "launch.max_threads")                    \
  X(BYTES_IN, "transfer.host_to_backend.bytes")            \
  X(BYTES_OUT, "transfer.backend_to_host.bytes")           \
  X(RESIDENT_LIVE, "resident.live.buffers")                \
  X(RESIDENT_BYTES, "resident.live.bytes")                 \
  X(RESIDENT_PEAK, "resident.peak.bytes")                  \
  X(RESIDENT_BUDGET, "resident.budget.bytes")              \
  X(SEQUENCES, "sequence.count")                           \
  X(ASYNC_SUBMITTED, "async.submitted")                    \
  X(ASYNC_COMPLETED, "async.completed")                    \
  X(ASYNC_DROPPED, "async.dropped")                        \
  X(PENDING_LIVE, "pending.live")                          \
  X(PIPELINES_CREATED, "pipeline.created")                 \
  X(PIPELINE_LIVE, "pipeline.live")                        \
  X(THREADS, "config.threads")

typedef enum ref_metric_id {
#define REF_METRIC_ENUM_(name, text) REF_M_##name,
  REF_METRIC_MAP(REF_METRIC_ENUM_)
#undef REF_METRIC_ENUM_
  REF_M_COUNT_
} ref_metric_id;

/* A decoded, validated program plus what was compiled in with it;
 * shared by pipelines and in-flight async jobs through refs. */
typedef struct ref_plan {
  atomic_uint refs;
  vyre_program *prog;
  uint32_t ulp_budget;
  uint32_t workgroup[3]; /* compiled workgroup override; all 0 = none */
  int from_pipeline;
} ref_plan;

typedef struct ref_pending ref_pending;

typedef struct ref_backend {
  vyre_backend head; /* first: the public part */
  uint32_t threads;
  uint64_t resident_budget;
  uint64_t total_memory;

  vyre_handle_table residents;
  vyre_handle_table pendings;
  vyre_handle_table pipelines;
  /* Resident buffers live while a reader holds this: dispatches and
   * copies take it shared, free and destroy take it exclusive. */
  pthread_rwlock_t store_lock;
  pthread_mutex_t budget_lock; /* resident byte accounting */
  pthread_mutex_t pipe_lock;   /* pipeline lookup + plan reference */

  /* The async queue: one worker runs jobs in submission order. */
  pthread_mutex_t q_lock;
  pthread_cond_t q_work; /* a job was queued, or the worker must stop */
  pthread_cond_t q_done; /* a job finished */
  ref_pending *q_head, *q_tail;
  uint32_t q_unfinished; /* queued or running */
  int worker_started;
  int worker_stop;
  pthread_t worker;

  atomic_uint_fast64_t metrics[REF_M_COUNT_];
} ref_backend;

/* backend.c: the top; the vtable, whose entries check the instance
 * (NULL or not a reference one: VYRE_INVALID_ARGUMENT) before they call
 * the functions below with it. */
vyre_status ref_backend_create(const vyre_backend_options *options, vyre_backend **out,
                               vyre_error *err);

/* util.c: helpers of every file, calling none of them. */
void ref_metric_add(ref_backend *b, ref_metric_id id, uint64_t v);
void ref_metric_max(ref_backend *b, ref_metric_id id, uint64_t v);
/* Fill the caller's timing record (NULL: nothing), honouring its
 * struct_size: wall = entry to end, enqueue = entry to enqueued, wait =
 * enqueued to end, device = exec_ns; all four valid bits. */
void ref_timing_report(vyre_timing *timing, uint64_t t_entry, uint64_t t_enqueued,
                       uint64_t exec_ns, uint64_t t_end);
/* Read caller options (may be NULL) honouring struct_size; zero rest.
 * Their chain's vyre_limits go to *lim (NULL: checked, then ignored),
 * with the deadline counted from t_entry. */
vyre_status ref_read_options(const vyre_dispatch_options *in, vyre_dispatch_options *out,
                             ref_limits *lim, uint64_t t_entry, vyre_error *err);

/* The vtable entries below (resident.c, dispatch.c, async.c) follow the
 * contracts of abi/vyre/vyre.h on the instance b, which backend.c has
 * checked; docs/reference-backend.md says what the reference does where
 * vyre.h leaves a choice. */

/* indirect.c: indirect dispatch (vyre_indirect, vyre.h) of a resident
 * dispatch or sequence step; the caller holds store_lock shared. */
/* The vyre_indirect chained on `o`, checked: NULL *counts when there is
 * none, else the address of its three u32 counts in the resident buffer.
 * A second one, a short one or a bad offset: VYRE_INVALID_ARGUMENT; a
 * handle that is not live: VYRE_INVALID_HANDLE; each naming `what`. */
vyre_status ref_indirect_bind(ref_backend *b, const vyre_dispatch_options *o, const char *what,
                              const uint8_t **counts, vyre_error *err);
/* Run `iterations` launches of p over g (as ref_execute), each one on the
 * grid the counts hold when it starts (counts NULL: g's grid): a 0 runs
 * nothing; past g's grid on an axis: nothing, VYRE_LIMIT naming `step`
 * (-1: none), the count and the bound, and *over = 1 (else 0).  An empty
 * g runs nothing and reads no count (the CUDA backend launches nothing). */
vyre_status ref_indirect_execute(const vyre_program *p, const vyre_geometry *g,
                                 uint8_t *const *mem, uint32_t iterations, const uint8_t *counts,
                                 int step, uint32_t threads, const ref_limits *lim,
                                 ref_exec_stats *stats, int *over, vyre_error *err);

/* resident.c */
vyre_status ref_resident_alloc(ref_backend *b, uint64_t size, vyre_resident *out,
                               vyre_error *err);
vyre_status ref_resident_free(ref_backend *b, vyre_resident buffer, vyre_error *err);
vyre_status ref_resident_size(ref_backend *b, vyre_resident buffer, uint64_t *size,
                              vyre_error *err);
vyre_status ref_resident_upload(ref_backend *b, vyre_resident buffer, const void *data,
                                uint64_t size, vyre_error *err);
vyre_status ref_resident_upload_at(ref_backend *b, vyre_resident buffer, uint64_t offset,
                                   const void *data, uint64_t size, vyre_error *err);
vyre_status ref_resident_download(ref_backend *b, vyre_resident buffer, void *dst,
                                  uint64_t capacity, vyre_error *err);
vyre_status ref_resident_download_range(ref_backend *b, vyre_resident buffer,
                                        uint64_t offset, void *dst, uint64_t size,
                                        vyre_error *err);
vyre_status ref_resident_upload_many(ref_backend *b, const vyre_resident_copy *copies,
                                     uint32_t count, vyre_error *err);
vyre_status ref_resident_download_many(ref_backend *b, const vyre_resident_copy *copies,
                                       uint32_t count, vyre_error *err);
/* The bytes and size of a live resident buffer; the caller holds
 * store_lock (shared or exclusive).  NULL data when the handle is not live. */
uint8_t *ref_resident_data(ref_backend *b, vyre_resident buffer, uint64_t *size);
/* Free every resident buffer (destroy). */
void ref_resident_drain(ref_backend *b);

/* dispatch.c */
vyre_status ref_dispatch(ref_backend *b, const vyre_program_ref *program,
                         const vyre_input *inputs, uint32_t input_count,
                         const vyre_dispatch_options *options, vyre_outputs **out,
                         vyre_timing *timing, vyre_error *err);
vyre_status ref_dispatch_into(ref_backend *b, const vyre_program_ref *program,
                              const vyre_input *inputs, uint32_t input_count,
                              const vyre_dispatch_options *options, vyre_output_slot *outputs,
                              uint32_t output_count, vyre_timing *timing, vyre_error *err);
void ref_outputs_free(vyre_backend *self, vyre_outputs *outputs);
vyre_status ref_dispatch_resident(ref_backend *b, const vyre_program_ref *program,
                                  const vyre_resident *buffers, uint32_t buffer_count,
                                  const vyre_dispatch_options *options, vyre_timing *timing,
                                  vyre_error *err);
vyre_status ref_dispatch_sequence(ref_backend *b, const vyre_sequence_step *steps,
                                  uint32_t step_count, uint32_t repeat,
                                  const vyre_resident_copy *reads, uint32_t read_count,
                                  vyre_timing *timing, vyre_error *err);
vyre_status ref_pipeline_create(ref_backend *b, const void *program_bytes,
                                uint64_t program_size, const vyre_dispatch_options *options,
                                vyre_pipeline *out, vyre_error *err);
vyre_status ref_pipeline_release(ref_backend *b, vyre_pipeline pipeline, vyre_error *err);
void ref_pipeline_drain(ref_backend *b);

/* A host dispatch split in phases so the async queue can run the middle
 * one on its worker: stage (validate, derive geometry, copy inputs), run,
 * collect outputs. */
typedef struct ref_job {
  ref_plan *plan;
  vyre_dispatch_options options;
  vyre_geometry geo;
  uint8_t *mem[VYRE_MAX_BUFFERS];
  uint32_t iterations;
  ref_limits lim;
  uint64_t t_entry, t_staged, t_run_start, t_run_end;
  const struct ref_mma_bound *bounds; /* host dispatch: tolerance.h's side channel, or NULL */
} ref_job;

vyre_status ref_job_stage(ref_backend *b, const vyre_program_ref *program,
                          const vyre_input *inputs, uint32_t input_count,
                          const vyre_dispatch_options *options, ref_job *job, vyre_error *err);
vyre_status ref_job_run(ref_backend *b, ref_job *job, vyre_error *err);
/* Move the outputs into a new vyre_outputs (free with ref_outputs_free). */
vyre_status ref_job_outputs(ref_backend *b, ref_job *job, vyre_outputs **out, vyre_error *err);
void ref_job_release(ref_job *job);
void ref_plan_unref(ref_plan *plan);

/* async.c */
vyre_status ref_dispatch_async(ref_backend *b, const vyre_program_ref *program,
                               const vyre_input *inputs, uint32_t input_count,
                               const vyre_dispatch_options *options, vyre_pending *out,
                               vyre_error *err);
vyre_status ref_pending_poll(ref_backend *b, vyre_pending pending, int *ready,
                             vyre_error *err);
vyre_status ref_pending_wait(ref_backend *b, vyre_pending pending, vyre_outputs **out,
                             vyre_timing *timing, vyre_error *err);
vyre_status ref_pending_release(ref_backend *b, vyre_pending pending, vyre_error *err);
/* Start the worker (prepare); idempotent. */
vyre_status ref_async_start(ref_backend *b, vyre_error *err);
/* Wait for every queued job, then stop and join the worker (shutdown,
 * destroy).  The queue restarts on the next dispatch_async. */
void ref_async_stop(ref_backend *b);
/* Free pendings still held by handles (destroy, after ref_async_stop). */
void ref_async_drain(ref_backend *b);

#endif /* VYRE_REF_REF_H */
