/* vyre.h -- the versioned C ABI between a vyre host and a backend plugin. */
#ifndef VYRE_VYRE_H
#define VYRE_VYRE_H

/*
 * LANGUAGE: the installed headers need C99 or C++11 or later (tests/abi
 * compiles them alone as C99, C11, C++11 and C++17 with -pedantic
 * -Werror).  Their layout checks are static assertions: static_assert in
 * C++, _Static_assert from C11, and with GCC or Clang in C99 too.
 *
 * COMPATIBILITY RULE (docs/abi.md, installed as share/doc/vyre/abi.md,
 * states every rule with its reasons)
 *   - VYRE_ABI_MAJOR must match exactly between host and plugin.
 *   - The minor version is negotiated to the lower of the two: a host built
 *     against minor H and a plugin serving minors [lo, hi] agree on
 *     min(H, hi), and refuse when that is below lo.  The HOST records the
 *     negotiated minor (and passes it to `create` in
 *     vyre_backend_options.abi_minor); the plugin's registration is one
 *     immutable object that serves every minor.
 *   - A struct passed singly across the boundary starts with `uint32_t
 *     struct_size` and is append-only.  A reader uses only the first
 *     min(its own sizeof, struct_size) bytes and treats the rest as zero;
 *     a writer writes only that many.  Structs used as array elements
 *     (vyre_input, vyre_output, vyre_output_slot, vyre_resident_copy,
 *     vyre_metric, vyre_sequence_step) are FROZEN: their layout never
 *     changes within major 1; what a call needs beyond them goes into its
 *     options' extension chain.
 *   - Enumerations and bit sets are append-only.  An unknown op id or
 *     capability bit in a registration is ignored by the host (and
 *     reported); an unknown value passed to a call is an error, never UB.
 *   - Every entry of a function table may be NULL (not provided); a caller
 *     checks the entry (and the table's struct_size) before calling it.
 *     A plugin that leaves an entry NULL does not claim the capability
 *     that needs it (VYRE_CAP_ASYNC: dispatch_async and pending_*;
 *     VYRE_CAP_RESIDENT: resident_*, dispatch_resident; VYRE_CAP_SEQUENCE:
 *     dispatch_sequence; VYRE_CAP_PIPELINE: pipeline_*).
 *
 * ABI HISTORY (minor: what it appended)
 *   1.0  the baseline.
 *   1.1  vyre_registration.op_types and .extensions,
 *        vyre_backend_vtable.get_extension, vyre_dispatch_options.next,
 *        vyre_backend_options.next; extension chains (vyre_ext); the
 *        capability bits int64 and out_range (granted to 1.0-layout
 *        registrations by the host).  Later, as an extension within 1.1
 *        (no minor change): vyre_limits, "vyre.limits@1"; the
 *        capability bits tensor_cores (the MMA ops and matrix types of
 *        vyre_program.h), indirect_dispatch (vyre_indirect,
 *        "vyre.indirect@1") and correctly_rounded (transcendentals
 *        under strict; a host that predates the bit drops it).
 *
 * OWNERSHIP RULE (every pointer crossing the boundary)
 *   - Everything a caller passes in is borrowed for the duration of the call
 *     only, unless a function says otherwise.
 *   - The descriptor, vyre_registration, its strings and its arrays are
 *     owned by the plugin, immutable, and live until the process exits
 *     (hosts never dlclose a plugin).
 *   - A vyre_backend is owned by the caller of `create` and released with
 *     vtable->destroy (which accepts NULL).
 *   - A vyre_outputs returned by dispatch/pending_wait is owned by the caller
 *     and released with vtable->outputs_free on the same backend, BEFORE
 *     that backend's destroy: outputs do not outlive their backend (destroy
 *     does not free them, and outputs_free needs the instance).
 *   - Extension function tables returned by get_extension are owned by the
 *     plugin and live until the process exits; the functions in them take
 *     the instance and are valid until its destroy.
 *   - Resident buffers, pending dispatches and pipelines are 64-bit handles
 *     (never pointers) owned by the caller and released with their free/
 *     release call.  A stale, released or foreign handle is an error
 *     (VYRE_INVALID_HANDLE), never a crash.
 *   - vyre_error is caller-owned storage; a plugin writes at most
 *     min(sizeof(vyre_error), err->struct_size) bytes into it.
 *
 * THREADING RULE
 *   - vyre_plugin_entry may be called from any thread, concurrently, any
 *     number of times (once per host that loads the plugin); it returns
 *     the same immutable registration every time and has no side effect a
 *     host could observe.
 *   - registration->create may be called from any thread, concurrently;
 *     each call makes an independent instance.
 *   - A vyre_backend is free-threaded: every vtable entry (and every
 *     extension function) may be called from any number of threads at once.
 *   - One pending handle, one resident handle and one pipeline handle are
 *     used by one thread at a time (their release must not race their use).
 *   - `destroy` must not race any other call on the same backend.
 *
 * ERRORS
 *   Every entry returns vyre_status; on failure it fills *err (when non-NULL)
 *   with the status, the native code (CUresult, errno, ...) and a message of
 *   the form "what failed: why. Fix: how".  Nothing aborts or exits.
 */

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#define VYRE_STATIC_ASSERT(cond, msg) static_assert(cond, msg)
#elif defined(__STDC_VERSION__) && __STDC_VERSION__ >= 201112L
#define VYRE_STATIC_ASSERT(cond, msg) _Static_assert(cond, msg)
#elif defined(__GNUC__)
/* C99: GCC and Clang take _Static_assert as an extension. */
#define VYRE_STATIC_ASSERT(cond, msg) __extension__ _Static_assert(cond, msg)
#else
/* Another C99 compiler: no check (every C11, C++ and GNU build makes it). */
#define VYRE_STATIC_ASSERT(cond, msg) struct vyre_static_assert_skipped_
#endif

#define VYRE_ABI_MAJOR 1
#define VYRE_ABI_MINOR 1

/* ------------------------------------------------------------------ */
/* Status codes: one list makes the enum, the names and the texts.     */
/* Append only.                                                        */
/* ------------------------------------------------------------------ */
#define VYRE_STATUS_MAP(X)                                                   \
  X(OK, "success")                                                           \
  X(INVALID_ARGUMENT, "invalid argument")                                    \
  X(INVALID_PROGRAM, "invalid program")                                      \
  X(UNSUPPORTED, "unsupported by this backend or device")                    \
  X(OUT_OF_MEMORY, "out of memory")                                          \
  X(NO_DEVICE, "no usable device")                                           \
  X(DRIVER, "driver call failed")                                            \
  X(DEVICE_LOST, "device lost")                                              \
  X(COMPILE, "kernel compilation failed")                                    \
  X(INVALID_HANDLE, "invalid or stale handle")                               \
  X(NOT_READY, "not ready")                                                  \
  X(ABI_MISMATCH, "ABI version mismatch")                                    \
  X(IO, "input/output error")                                                \
  X(TRAP, "program executed trap")                                           \
  X(LIMIT, "size or count limit exceeded")                                   \
  X(INTERNAL, "internal error")

typedef enum vyre_status {
#define VYRE_STATUS_ENUM_(name, text) VYRE_##name,
  VYRE_STATUS_MAP(VYRE_STATUS_ENUM_)
#undef VYRE_STATUS_ENUM_
  VYRE_STATUS_COUNT_,
  /* Keeps the enum 32 bits wide whatever the compiler's enum options
   * (-fshort-enums); never a real status. */
  VYRE_STATUS_FORCE32_ = 0x7fffffff
} vyre_status;

/* Longest message an error record carries, NUL included. */
#define VYRE_ERROR_MESSAGE_MAX 2048

/* An error record.  Caller-owned; initialise struct_size with
 * VYRE_ERROR_INIT or sizeof(vyre_error). */
typedef struct vyre_error {
  uint32_t struct_size;
  int32_t status;      /* vyre_status */
  int64_t native_code; /* CUresult, errno, ...; 0 when there is none */
  char message[VYRE_ERROR_MESSAGE_MAX]; /* "what failed: why. Fix: how" */
} vyre_error;
#define VYRE_ERROR_INIT {sizeof(vyre_error), 0, 0, {0}}

/* ------------------------------------------------------------------ */
/* Capabilities (bits of vyre_registration.capabilities and           */
/* vyre_device_profile.capabilities).  Append only.                   */
/* ------------------------------------------------------------------ */
#define VYRE_CAP_F16 (1ull << 0)             /* f16 storage buffers */
#define VYRE_CAP_BF16 (1ull << 1)            /* bf16 storage buffers */
#define VYRE_CAP_SUBGROUP (1ull << 2)        /* ballot/shuffle/reduce, 32 lanes */
#define VYRE_CAP_ATOMIC64 (1ull << 3)        /* atomics on u64/i64 */
#define VYRE_CAP_GRID_BARRIER (1ull << 4)    /* grid-wide barrier */
#define VYRE_CAP_ASYNC (1ull << 5)           /* dispatch_async + pending */
#define VYRE_CAP_RESIDENT (1ull << 6)        /* resident buffers + dispatch */
#define VYRE_CAP_SEQUENCE (1ull << 7)        /* resident sequences */
#define VYRE_CAP_TIMING (1ull << 8)          /* device timing in vyre_timing */
#define VYRE_CAP_PIPELINE (1ull << 9)        /* compile-ahead pipelines */
#define VYRE_CAP_FIXPOINT (1ull << 10)       /* fixpoint_iterations > 1 */
#define VYRE_CAP_TRAP (1ull << 11)           /* trap reported as VYRE_TRAP */
#define VYRE_CAP_TRANSCENDENTAL (1ull << 12) /* exp/log/sin/... within budget */
#define VYRE_CAP_GRAPH_REPLAY (1ull << 13)   /* repeated sequences replay a graph */
#define VYRE_CAP_WORKGROUP_MEMORY (1ull << 14)
#define VYRE_CAP_ATOMICS (1ull << 15)        /* atomics on u32/i32 */
#define VYRE_CAP_BARRIER (1ull << 16)        /* workgroup barrier */
#define VYRE_CAP_INT64 (1ull << 17)          /* u64/i64 values (not only storage) */
#define VYRE_CAP_OUT_RANGE (1ull << 18)      /* output ranges (VYRE_BUF_OUT_RANGE) */
#define VYRE_CAP_TENSOR_CORES (1ull << 19)   /* the MMA ops (mma_fill, mma_load, mma, mma_store) */
#define VYRE_CAP_INDIRECT_DISPATCH (1ull << 20) /* workgroup counts read from a resident
                                                   buffer when the dispatch runs (vyre_indirect) */
#define VYRE_CAP_CORRECTLY_ROUNDED (1ull << 21) /* every transcendental op served is correctly
                                                   rounded on every f32 input: strict (ulp
                                                   budget 0) accepts them, compared bit for bit */

/* The capabilities' names: X(NAME, identifier, words).  The identifier is
 * what people type and tools print ("grid_barrier"; `vyre info`, the
 * conformance "requires" line); the words go into messages ("the program
 * needs grid barrier").  Every VYRE_CAP_* bit has one row; bit order. */
#define VYRE_CAP_MAP(X)                                       \
  X(F16, "f16", "f16 storage")                                \
  X(BF16, "bf16", "bf16 storage")                             \
  X(SUBGROUP, "subgroup", "subgroups")                        \
  X(ATOMIC64, "atomic64", "64-bit atomics")                   \
  X(GRID_BARRIER, "grid_barrier", "grid barrier")             \
  X(ASYNC, "async", "asynchronous dispatch")                  \
  X(RESIDENT, "resident", "resident buffers")                 \
  X(SEQUENCE, "sequence", "resident sequences")               \
  X(TIMING, "timing", "device timing")                        \
  X(PIPELINE, "pipeline", "compile-ahead pipelines")          \
  X(FIXPOINT, "fixpoint", "fixpoint iterations")              \
  X(TRAP, "trap", "trap")                                     \
  X(TRANSCENDENTAL, "transcendental", "transcendentals")      \
  X(GRAPH_REPLAY, "graph_replay", "graph replay")             \
  X(WORKGROUP_MEMORY, "workgroup_memory", "workgroup memory") \
  X(ATOMICS, "atomics", "atomics")                            \
  X(BARRIER, "barrier", "workgroup barrier")               \
  X(INT64, "int64", "64-bit integer arithmetic")              \
  X(OUT_RANGE, "out_range", "output ranges")                  \
  X(TENSOR_CORES, "tensor_cores", "tensor cores (MMA)")        \
  X(INDIRECT_DISPATCH, "indirect_dispatch", "indirect dispatch")   \
  X(CORRECTLY_ROUNDED, "correctly_rounded", "correctly rounded transcendentals")

/* Identifier of capability bit `bit` (0..63: VYRE_CAP_F16 is bit 0), e.g.
 * "grid_barrier", or NULL for an unassigned bit.  Static data. */
const char *vyre_capability_name(uint32_t bit);
/* The same capability in words for messages ("grid barrier"), or NULL. */
const char *vyre_capability_text(uint32_t bit);
/* Bit number of the capability identified `name` (len bytes, exact
 * match), or -1. */
int vyre_capability_by_name(const char *name, size_t len);

/* ------------------------------------------------------------------ */
/* Devices                                                             */
/* ------------------------------------------------------------------ */
typedef struct vyre_device_profile {
  uint32_t struct_size;
  uint32_t ordinal;             /* device ordinal the instance runs on */
  char name[128];               /* NUL-terminated */
  char backend_id[32];          /* "cuda", "reference" */
  uint32_t compute_major;       /* compute capability; 0 on CPU */
  uint32_t compute_minor;
  uint32_t compute_units;       /* SMs / CPU threads used */
  uint32_t subgroup_size;       /* 32 */
  uint32_t max_workgroup_size[3];
  uint32_t max_invocations_per_workgroup;
  uint32_t max_workgroups[3];
  uint32_t shared_memory_per_workgroup; /* bytes */
  uint64_t total_memory;        /* bytes */
  uint64_t free_memory;         /* bytes, when probed */
  uint64_t l2_bytes;
  uint32_t memory_bus_bits;
  uint32_t memory_clock_khz;
  uint32_t driver_version;      /* e.g. 13000 for CUDA 13.0; 0 on CPU */
  uint32_t device_count;        /* devices this backend can run on in this
                                   process: ordinals 0..device_count-1 (CUDA:
                                   cuDeviceGetCount, after
                                   CUDA_VISIBLE_DEVICES); 0: not reported (a
                                   backend built before the field had a name
                                   wrote 0 here): probe with create, which
                                   returns VYRE_NO_DEVICE past the last
                                   ordinal.  share/doc/vyre/abi.md, section
                                   "Devices" */
  uint64_t capabilities;        /* VYRE_CAP_* this device really has */
  uint64_t resident_budget;     /* bytes resident buffers may use */
  /* Appended within ABI 1.1 (at offset 272; read it only when struct_size
     covers it): the device's UUID, the 16 bytes NVIDIA prints as
     "GPU-xxxxxxxx-xxxx-xxxx-xxxx-xxxxxxxxxxxx" (CUDA: cuDeviceGetUuid_v2,
     which names a MIG instance; nvidia-smi -L).  All zero: not reported
     (the reference backend, a plugin built before the field, a driver
     without cuDeviceGetUuid).  share/doc/vyre/abi.md, section "Devices" */
  uint8_t uuid[16];
} vyre_device_profile;

/* ------------------------------------------------------------------ */
/* Dispatch                                                            */
/* ------------------------------------------------------------------ */
typedef uint64_t vyre_resident; /* resident buffer handle; 0 is never valid */
typedef uint64_t vyre_pending;  /* pending dispatch handle; 0 is never valid */
typedef uint64_t vyre_pipeline; /* compiled pipeline handle; 0 is never valid */

/* ------------------------------------------------------------------ */
/* Extension chains (ABI 1.1)                                          */
/* ------------------------------------------------------------------ */
/* The head of every struct chained from an options struct's `next`.  A
 * backend walks the chain and acts on the types it knows; it skips a type
 * it does not know, so a host that depends on one first checks that
 * get_extension serves it.  Types are allocated by the header that
 * defines the extension (vyre_cuda.h: 0x4355xxxx, "CU"); 0 is never a
 * type.  The chain is borrowed for the call. */
typedef struct vyre_ext {
  uint32_t struct_size; /* of the whole extension struct */
  uint32_t type;        /* VYRE_EXT_* of the defining header */
  const struct vyre_ext *next;
} vyre_ext;

/* A program given either as bytes (see vyre_program.h) or as a pipeline
 * made by pipeline_create.  When pipeline != 0 the bytes are ignored.
 * Initialise with VYRE_PROGRAM_BYTES / VYRE_PROGRAM_PIPELINE, or set
 * struct_size = sizeof(vyre_program_ref). */
typedef struct vyre_program_ref {
  uint32_t struct_size;
  uint32_t flags; /* reserved, 0 */
  const void *bytes;
  uint64_t size;
  vyre_pipeline pipeline;
} vyre_program_ref;
#define VYRE_PROGRAM_BYTES(bytes, size) \
  {sizeof(vyre_program_ref), 0, (bytes), (uint64_t)(size), 0}
#define VYRE_PROGRAM_PIPELINE(pipeline) {sizeof(vyre_program_ref), 0, NULL, 0, (pipeline)}

/* One input buffer, borrowed for the call (async: until dispatch_async
 * returns; the backend stages a copy).  Frozen (an array element). */
typedef struct vyre_input {
  const void *data;
  uint64_t size; /* bytes */
} vyre_input;

/* One output, owned by the vyre_outputs that holds it.  Frozen. */
typedef struct vyre_output {
  void *data;
  uint64_t size; /* bytes */
} vyre_output;

/* Outputs of a dispatch, in the program's declaration order of output
 * buffers.  Owned by the caller; free with vtable->outputs_free. */
typedef struct vyre_outputs {
  uint32_t struct_size;
  uint32_t count;
  vyre_output *items;
} vyre_outputs;

/* A caller-owned output slot for dispatch_into: the backend writes at most
 * `capacity` bytes at `data` and sets `size`.  Too small a slot is
 * VYRE_INVALID_ARGUMENT naming the size needed, and nothing is written.
 * Frozen (an array element). */
typedef struct vyre_output_slot {
  void *data;
  uint64_t capacity;
  uint64_t size; /* out */
} vyre_output_slot;

#define VYRE_TIMING_WALL (1u << 0)
#define VYRE_TIMING_DEVICE (1u << 1)
#define VYRE_TIMING_ENQUEUE (1u << 2)
#define VYRE_TIMING_WAIT (1u << 3)

/* Timing of one dispatch.  Passing a non-NULL vyre_timing asks for it (and
 * for device events on backends that have them). */
typedef struct vyre_timing {
  uint32_t struct_size;
  uint32_t valid; /* VYRE_TIMING_* bits of the fields filled in */
  uint64_t wall_ns;    /* call entry to outputs ready */
  uint64_t device_ns;  /* first launch start to last launch end on the device */
  uint64_t enqueue_ns; /* call entry to all work enqueued */
  uint64_t wait_ns;    /* enqueue end to completion observed */
} vyre_timing;

/* Dispatch options.  Zero-initialise and set struct_size; zero fields mean
 * "the program's own value".  `next` (1.1) chains extension structs for
 * this call (vyre_ext; e.g. vyre_cuda_stream in vyre_cuda.h). */
typedef struct vyre_dispatch_options {
  uint32_t struct_size;
  uint32_t flags;                 /* reserved, 0 */
  uint32_t workgroup[3];          /* override the program's workgroup size */
  uint32_t grid[3];               /* override the derived grid */
  uint32_t fixpoint_iterations;   /* launches on the same buffers; 0 or 1 = one */
  uint32_t ulp_budget;            /* 0 = strict: correctly rounded ops only */
  const vyre_ext *next;           /* 1.1: extension chain, NULL = none */
} vyre_dispatch_options;

/* ------------------------------------------------------------------ */
/* Resident buffers and sequences                                      */
/* ------------------------------------------------------------------ */
/* One host<->resident copy of `size` bytes at byte `offset` of `buffer`.
 * Frozen (an array element). */
typedef struct vyre_resident_copy {
  vyre_resident buffer;
  uint64_t offset;
  void *host; /* source for uploads (read only), destination for downloads */
  uint64_t size;
} vyre_resident_copy;

/* One step of a resident sequence: a program over resident buffers, one per
 * non-workgroup buffer of the program in declaration order.  An array
 * element, so frozen: struct_size must be sizeof(vyre_sequence_step) (it
 * is checked, never used as a stride); a step grows through its
 * options' extension chain. */
typedef struct vyre_sequence_step {
  uint32_t struct_size;
  uint32_t buffer_count;
  const vyre_program_ref *program;
  const vyre_resident *buffers;
  const vyre_dispatch_options *options; /* may be NULL */
} vyre_sequence_step;

/* ------------------------------------------------------------------ */
/* Metrics                                                             */
/* ------------------------------------------------------------------ */
/* Frozen (an array element). */
typedef struct vyre_metric {
  char name[56]; /* NUL-terminated, dotted: "pool.device.hits" */
  uint64_t value;
} vyre_metric;

/* ------------------------------------------------------------------ */
/* The backend instance                                                */
/* ------------------------------------------------------------------ */
typedef struct vyre_backend vyre_backend;
typedef struct vyre_backend_vtable vyre_backend_vtable;

/* Public head of every backend instance; the plugin's private state
 * follows it in memory. */
struct vyre_backend {
  uint32_t struct_size;
  uint32_t reserved;
  const vyre_backend_vtable *vt;
};

/*
 * The instance's function table.  Every entry: `self` is the instance,
 * `err` may be NULL, the return is VYRE_OK or the failure also written
 * to *err.  Sizes are bytes.  Threading and ownership: see the top of
 * this file.
 */
struct vyre_backend_vtable {
  uint32_t struct_size;
  uint32_t reserved;

  /* Release everything the instance owns (handles included).  NULL is
   * accepted.  Must not race other calls on the instance. */
  void (*destroy)(vyre_backend *self);

  /* Fill *out (caller sets out->struct_size) with the device's profile. */
  vyre_status (*device_profile)(vyre_backend *self, vyre_device_profile *out,
                                vyre_error *err);

  /* Warm up: create contexts/streams so the first dispatch is not slow. */
  vyre_status (*prepare)(vyre_backend *self, vyre_error *err);

  /* Wait for all work, release cached resources; the instance stays
   * usable (resources are re-created on demand). */
  vyre_status (*shutdown)(vyre_backend *self, vyre_error *err);

  /* Copy up to `capacity` metrics into out; *count receives how many
   * exist (may exceed capacity). */
  vyre_status (*metrics)(vyre_backend *self, vyre_metric *out, uint32_t capacity,
                         uint32_t *count, vyre_error *err);

  /* Run a program on host buffers and wait.  inputs: one per input buffer
   * (ReadOnly, Uniform, ReadWrite without the output flag) in declaration
   * order.  *out receives the outputs (caller frees with outputs_free).
   * timing may be NULL. */
  vyre_status (*dispatch)(vyre_backend *self, const vyre_program_ref *program,
                          const vyre_input *inputs, uint32_t input_count,
                          const vyre_dispatch_options *options, vyre_outputs **out,
                          vyre_timing *timing, vyre_error *err);

  /* As dispatch, but the outputs go to caller-owned slots, one per output
   * in declaration order. */
  vyre_status (*dispatch_into)(vyre_backend *self, const vyre_program_ref *program,
                               const vyre_input *inputs, uint32_t input_count,
                               const vyre_dispatch_options *options,
                               vyre_output_slot *outputs, uint32_t output_count,
                               vyre_timing *timing, vyre_error *err);

  /* Enqueue a dispatch and return at once; inputs are copied before this
   * returns.  *out receives a pending handle. */
  vyre_status (*dispatch_async)(vyre_backend *self, const vyre_program_ref *program,
                                const vyre_input *inputs, uint32_t input_count,
                                const vyre_dispatch_options *options,
                                vyre_pending *out, vyre_error *err);

  /* *ready = 1 when the pending dispatch has completed (or failed). */
  vyre_status (*pending_poll)(vyre_backend *self, vyre_pending pending, int *ready,
                              vyre_error *err);

  /* Wait for completion and take the outputs (and timing when non-NULL).
   * The handle is released by this call whatever it returns. */
  vyre_status (*pending_wait)(vyre_backend *self, vyre_pending pending,
                              vyre_outputs **out, vyre_timing *timing, vyre_error *err);

  /* Drop a pending dispatch at any point (before or instead of wait);
   * the work completes on its own and its resources are reclaimed. */
  vyre_status (*pending_release)(vyre_backend *self, vyre_pending pending,
                                 vyre_error *err);

  /* Free outputs returned by dispatch or pending_wait.  NULL is accepted. */
  void (*outputs_free)(vyre_backend *self, vyre_outputs *outputs);

  /* Resident buffers: device memory the caller keeps between dispatches.
   * A new buffer is zero-filled. */
  vyre_status (*resident_alloc)(vyre_backend *self, uint64_t size, vyre_resident *out,
                                vyre_error *err);
  vyre_status (*resident_free)(vyre_backend *self, vyre_resident buffer,
                               vyre_error *err);
  vyre_status (*resident_size)(vyre_backend *self, vyre_resident buffer, uint64_t *size,
                               vyre_error *err);
  /* Replace the whole buffer: size must equal the buffer's size. */
  vyre_status (*resident_upload)(vyre_backend *self, vyre_resident buffer,
                                 const void *data, uint64_t size, vyre_error *err);
  vyre_status (*resident_upload_at)(vyre_backend *self, vyre_resident buffer,
                                    uint64_t offset, const void *data, uint64_t size,
                                    vyre_error *err);
  /* Read the whole buffer: capacity must be at least its size. */
  vyre_status (*resident_download)(vyre_backend *self, vyre_resident buffer, void *dst,
                                   uint64_t capacity, vyre_error *err);
  vyre_status (*resident_download_range)(vyre_backend *self, vyre_resident buffer,
                                         uint64_t offset, void *dst, uint64_t size,
                                         vyre_error *err);
  /* Many copies, issued together with one synchronisation.  All ranges
   * are checked before any copy starts. */
  vyre_status (*resident_upload_many)(vyre_backend *self, const vyre_resident_copy *copies,
                                      uint32_t count, vyre_error *err);
  vyre_status (*resident_download_many)(vyre_backend *self,
                                        const vyre_resident_copy *copies, uint32_t count,
                                        vyre_error *err);

  /* Run a program over resident buffers (one per non-workgroup buffer in
   * declaration order; contents are used as they are, nothing is zeroed)
   * and wait. */
  vyre_status (*dispatch_resident)(vyre_backend *self, const vyre_program_ref *program,
                                   const vyre_resident *buffers, uint32_t buffer_count,
                                   const vyre_dispatch_options *options,
                                   vyre_timing *timing, vyre_error *err);

  /* Run `steps` in order on one queue, the whole list `repeat` times
   * (0 or 1 = once), with one synchronisation, then perform `reads`
   * (ranged downloads).  timing may be NULL. */
  vyre_status (*dispatch_sequence)(vyre_backend *self, const vyre_sequence_step *steps,
                                   uint32_t step_count, uint32_t repeat,
                                   const vyre_resident_copy *reads, uint32_t read_count,
                                   vyre_timing *timing, vyre_error *err);

  /* Compile ahead: validate, lower and load a program once; use the handle
   * in vyre_program_ref.pipeline.  options may be NULL (the ulp budget and
   * workgroup override are part of what is compiled). */
  vyre_status (*pipeline_create)(vyre_backend *self, const void *program_bytes,
                                 uint64_t program_size,
                                 const vyre_dispatch_options *options,
                                 vyre_pipeline *out, vyre_error *err);
  vyre_status (*pipeline_release)(vyre_backend *self, vyre_pipeline pipeline,
                                  vyre_error *err);

  /* 1.1.  The function table of extension `name` (e.g. "vyre.cuda.interop")
   * at revision `version` or a later, compatible one: *out receives a
   * plugin-owned table that starts with vyre_extension_head (its version
   * says which revision it is).  VYRE_UNSUPPORTED, *out NULL, when the
   * instance does not serve the extension at that revision.
   * Two "self" pointers: the functions IN the table take the plugin's own
   * instance.  Through libvyre-host, `self` here is the host-made instance
   * (b), and the table's functions get vyre_host_backend_native(b)
   * (vyre_host.h); the table is not wrapped, so the host checks nothing
   * those functions are given. */
  vyre_status (*get_extension)(vyre_backend *self, const char *name, uint32_t version,
                               const void **out, vyre_error *err);
};

/* The head of every extension function table.  A table is append-only
 * within one extension name (revisions add entries at the end); a new
 * incompatible table takes a new name. */
typedef struct vyre_extension_head {
  uint32_t struct_size;
  uint32_t version;
} vyre_extension_head;

/* ------------------------------------------------------------------ */
/* Limits: the core extension "vyre.limits" (share/doc/vyre/abi.md)   */
/* ------------------------------------------------------------------ */
/* A backend that serves it lists "vyre.limits@1" in
 * registration->extensions, and get_extension(VYRE_LIMITS_NAME, 1)
 * returns a vyre_limits_info saying which limits it enforces.  A backend
 * that does not serve it skips a chained vyre_limits like any unknown
 * type (the call then runs without limits), so a host that depends on
 * the limits checks get_extension first. */
#define VYRE_LIMITS_NAME "vyre.limits"
#define VYRE_LIMITS_VERSION 1
/* Chain type of vyre_limits ("VY" 0001: types of vyre.h are 0x5659xxxx). */
#define VYRE_EXT_LIMITS 0x56590001u

/* Chained on vyre_dispatch_options.next (of dispatch, dispatch_into,
 * dispatch_async, dispatch_resident and a sequence step's options): the
 * call fails with VYRE_LIMIT, message "...: budget exceeded: ... Fix:
 * ...", when its work goes past a limit.  0 = no limit.  A chain holds at
 * most one; struct_size must cover the whole struct. */
typedef struct vyre_limits {
  vyre_ext head;       /* {sizeof(vyre_limits), VYRE_EXT_LIMITS, next} */
  uint64_t timeout_ns; /* wall-clock time from the call's entry to its
                          completion (VYRE_LIMITS_TIMEOUT) */
  uint64_t max_steps;  /* interpreter steps: one per invocation started and
                          one per instruction executed, summed over the
                          whole dispatch (VYRE_LIMITS_STEPS) */
} vyre_limits;

/* Bits of vyre_limits_info.enforced. */
#define VYRE_LIMITS_TIMEOUT (1u << 0) /* timeout_ns is enforced */
#define VYRE_LIMITS_STEPS (1u << 1)   /* max_steps is enforced; a backend
                                         without this bit ignores it */

/* The table get_extension(VYRE_LIMITS_NAME, 1) returns (plugin-owned,
 * immutable): no functions, only what the instance enforces. */
typedef struct vyre_limits_info {
  vyre_extension_head head; /* struct_size, version (>= 1) */
  uint32_t enforced;        /* VYRE_LIMITS_* */
  uint32_t reserved;        /* 0 */
} vyre_limits_info;

/* ------------------------------------------------------------------ */
/* Indirect dispatch: the core extension "vyre.indirect"               */
/* (share/doc/vyre/abi.md, "Indirect dispatch")                        */
/* ------------------------------------------------------------------ */
/* A backend that serves it has VYRE_CAP_INDIRECT_DISPATCH, lists
 * "vyre.indirect@1" in registration->extensions, and
 * get_extension(VYRE_INDIRECT_NAME, 1) returns a bare vyre_extension_head.
 * A backend that does not serve it skips a chained vyre_indirect like any
 * unknown type (the dispatch would run its whole derived grid), so a host
 * checks the capability or get_extension first. */
#define VYRE_INDIRECT_NAME "vyre.indirect"
#define VYRE_INDIRECT_VERSION 1
#define VYRE_EXT_INDIRECT 0x56590002u

/* Chained on the options of dispatch_resident or of a sequence step (a
 * dispatch on host buffers refuses it with VYRE_INVALID_ARGUMENT): the
 * workgroup count is not the derived grid (or options.grid) but three
 * u32 words, x y z, read from resident buffer `buffer` at byte `offset`
 * when the dispatch executes on the device -- after the earlier steps of
 * its sequence, on every replay of a graph.  The derived grid (or
 * options.grid) is the bound: the launch is sized for it when the call
 * is made.  At execution, a count of 0 on any axis runs no invocation
 * (not an error); a count beyond the bound on any axis runs no
 * invocation and the call fails with VYRE_LIMIT naming the step, the
 * count and the bound (the other steps run).  `buffer` must be one of the
 * caller's resident buffers, offset a multiple of 4 with offset + 12 <=
 * its size (checked when the call is made).  A chain holds at most one. */
typedef struct vyre_indirect {
  vyre_ext head;        /* {sizeof(vyre_indirect), VYRE_EXT_INDIRECT, next} */
  vyre_resident buffer; /* holds the counts */
  uint64_t offset;      /* bytes; a multiple of 4 */
} vyre_indirect;

/* ------------------------------------------------------------------ */
/* Registration                                                        */
/* ------------------------------------------------------------------ */
/* Options of `create`.  Zero-initialise and set struct_size. */
typedef struct vyre_backend_options {
  uint32_t struct_size;
  uint32_t device_ordinal;
  uint32_t flags;     /* reserved, 0 */
  uint32_t abi_minor; /* the negotiated minor; the host sets it (0 from a
                         caller that does not know it: treat as 1.0) */
  const vyre_ext *next; /* 1.1: extension chain, NULL = none */
} vyre_backend_options;

/* What a plugin offers.  Owned by the plugin; immutable; lives until
 * process exit; the same object serves every minor the plugin serves. */
typedef struct vyre_registration {
  uint32_t struct_size;
  uint16_t abi_major;        /* == VYRE_ABI_MAJOR */
  uint16_t abi_minor;        /* the minor this struct's layout has (the
                                plugin's VYRE_ABI_MINOR); not negotiated */
  const char *id;            /* "cuda"; [a-z0-9_-]{1,31} */
  const char *version;       /* backend version, e.g. "1.0.0" */
  const char *description;   /* one line for `vyre list` */
  int32_t precedence;        /* lower wins: cuda 5, reference 900 */
  uint32_t op_count;
  const uint16_t *ops;       /* supported op ids (vyre_program.h); ids the
                                host does not know are ignored */
  uint64_t capabilities;     /* VYRE_CAP_* the plugin can offer at best */
  uint64_t storage_types;    /* bit (1 << vyre_type) per supported buffer type */
  /* Create an instance on device options->device_ordinal (options may be
   * NULL: ordinal 0, ABI 1.0).  On failure *out stays NULL and err says
   * why. */
  vyre_status (*create)(const vyre_backend_options *options, vyre_backend **out,
                        vyre_error *err);
  /* 1.1.  NULL, or op_count masks parallel to ops: bit (1 << vyre_type) of
   * each type the op is supported at (the instruction's `type`; for
   * conversions, the result type; for compares and predicates, whose
   * type is bool, the operand type: the types of the op table's mask).
   * A 0 mask, like a NULL array, means every type the op's class allows;
   * statements have no type.  share/doc/vyre/conformance.md ("Skipped vs failed")
   * says how a host matches programs against it. */
  const uint32_t *op_types;
  /* 1.1.  NULL, or the extensions get_extension serves, space-separated
   * "name@version" words, e.g. "vyre.cuda.interop@1" (for `vyre list`). */
  const char *extensions;
} vyre_registration;

/* The descriptor every plugin exports as the const symbol
 * `vyre_plugin_descriptor`; a host reads it before running plugin code.
 * The type is vyre_descriptor, so the symbol's name is free:
 *
 *   VYRE_PLUGIN_EXPORT const vyre_descriptor vyre_plugin_descriptor =
 *       VYRE_DESCRIPTOR_INIT(0, VYRE_ABI_MINOR, "myplugin 1.0");
 *
 * compiles as C and as C++.  The layout is frozen. */
#define VYRE_PLUGIN_MAGIC 0x4c505956u /* "VYPL" in memory order */
#define VYRE_PLUGIN_DESCRIPTOR_SYMBOL "vyre_plugin_descriptor"
#define VYRE_PLUGIN_ENTRY_SYMBOL "vyre_plugin_entry"

typedef struct vyre_descriptor {
  uint32_t struct_size;
  uint32_t magic;              /* VYRE_PLUGIN_MAGIC */
  uint16_t abi_major;
  uint16_t abi_minor_min;      /* oldest minor the plugin serves */
  uint16_t abi_minor_max;      /* newest minor the plugin serves */
  uint16_t release;            /* VYRE_DESCRIPTOR_RELEASE at plugin build; 0 = before 1.0.0 */
  uint32_t registration_size;  /* sizeof(vyre_registration) at plugin build */
  uint32_t vtable_size;        /* sizeof(vyre_backend_vtable) at plugin build */
  char build_id[64];           /* NUL-terminated */
} vyre_descriptor;

/* vyre_descriptor.release: 1 = built from the headers of vyre 1.0.0 or
 * later.  0 (the field was reserved before) = an older build. */
#define VYRE_DESCRIPTOR_RELEASE 1u

/* A descriptor serving minors [minor_min, minor_max] with this header's
 * struct sizes; build_id is a string literal (at most 63 bytes). */
#define VYRE_DESCRIPTOR_INIT(minor_min, minor_max, build_id)                                    \
  {sizeof(vyre_descriptor), VYRE_PLUGIN_MAGIC, VYRE_ABI_MAJOR, (minor_min), (minor_max),          \
   (uint16_t)VYRE_DESCRIPTOR_RELEASE,                                                           \
   (uint32_t)sizeof(vyre_registration), (uint32_t)sizeof(vyre_backend_vtable), build_id}

/* Marks the two exported plugin symbols: C linkage, default visibility. */
#if defined(__GNUC__)
#define VYRE_PLUGIN_VISIBLE_ __attribute__((visibility("default")))
#else
#define VYRE_PLUGIN_VISIBLE_
#endif
#ifdef __cplusplus
#define VYRE_PLUGIN_EXPORT extern "C" VYRE_PLUGIN_VISIBLE_
#else
#define VYRE_PLUGIN_EXPORT VYRE_PLUGIN_VISIBLE_
#endif

/* The one entry function, exported as `vyre_plugin_entry`.  The host
 * passes its ABI version; the plugin returns (in *out) its one immutable
 * registration, or VYRE_ABI_MISMATCH (wrong major, or no served minor)
 * with a reason in *err.  Threading: see the top of this file. */
typedef vyre_status (*vyre_plugin_entry_fn)(uint16_t host_abi_major,
                                            uint16_t host_abi_minor,
                                            const vyre_registration **out,
                                            vyre_error *err);

/* Layout checks (LP64 and ILP32 alike where pointers are involved). */
VYRE_STATIC_ASSERT(sizeof(vyre_error) == 16 + VYRE_ERROR_MESSAGE_MAX, "vyre_error layout");
VYRE_STATIC_ASSERT(offsetof(vyre_error, native_code) == 8, "vyre_error.native_code");
VYRE_STATIC_ASSERT(offsetof(vyre_error, message) == 16, "vyre_error.message");
VYRE_STATIC_ASSERT(sizeof(vyre_device_profile) == 288, "vyre_device_profile layout");
VYRE_STATIC_ASSERT(offsetof(vyre_device_profile, uuid) == 272, "profile.uuid");
VYRE_STATIC_ASSERT(offsetof(vyre_device_profile, compute_major) == 168, "profile.compute_major");
VYRE_STATIC_ASSERT(offsetof(vyre_device_profile, total_memory) == 216, "profile.total_memory");
VYRE_STATIC_ASSERT(offsetof(vyre_device_profile, device_count) == 252, "profile.device_count");
VYRE_STATIC_ASSERT(offsetof(vyre_device_profile, capabilities) == 256, "profile.capabilities");
VYRE_STATIC_ASSERT(sizeof(vyre_timing) == 40, "vyre_timing layout");
VYRE_STATIC_ASSERT(offsetof(vyre_timing, device_ns) == 16, "vyre_timing.device_ns");
VYRE_STATIC_ASSERT(sizeof(vyre_status) == 4, "vyre_status is 32 bits");
VYRE_STATIC_ASSERT(offsetof(vyre_dispatch_options, next) == 40, "options.next");
VYRE_STATIC_ASSERT(sizeof(vyre_dispatch_options) == 40 + sizeof(void *), "vyre_dispatch_options layout");
VYRE_STATIC_ASSERT(offsetof(vyre_dispatch_options, fixpoint_iterations) == 32, "options.fixpoint");
VYRE_STATIC_ASSERT(offsetof(vyre_dispatch_options, ulp_budget) == 36, "options.ulp_budget");
VYRE_STATIC_ASSERT(sizeof(vyre_metric) == 64, "vyre_metric layout");
VYRE_STATIC_ASSERT(offsetof(vyre_metric, value) == 56, "vyre_metric.value");
VYRE_STATIC_ASSERT(offsetof(vyre_backend_options, next) == 16, "backend_options.next");
VYRE_STATIC_ASSERT(offsetof(vyre_descriptor, registration_size) == 16, "descriptor.registration_size");
VYRE_STATIC_ASSERT(offsetof(vyre_descriptor, build_id) == 24, "descriptor.build_id");
VYRE_STATIC_ASSERT(sizeof(vyre_descriptor) == 88, "vyre_descriptor layout");
VYRE_STATIC_ASSERT(offsetof(vyre_program_ref, bytes) == 8, "program_ref.bytes");
VYRE_STATIC_ASSERT(offsetof(vyre_program_ref, pipeline) == 8 + sizeof(void *) + (sizeof(void *) == 4 ? 4 : 0) + 8, "program_ref.pipeline");
VYRE_STATIC_ASSERT(sizeof(vyre_input) == 16 && sizeof(vyre_output) == 16, "vyre_input/vyre_output layout");
VYRE_STATIC_ASSERT(sizeof(vyre_output_slot) == 24, "vyre_output_slot layout");
VYRE_STATIC_ASSERT(offsetof(vyre_ext, next) == 8, "vyre_ext.next");
VYRE_STATIC_ASSERT(sizeof(vyre_extension_head) == 8, "vyre_extension_head layout");
VYRE_STATIC_ASSERT(offsetof(vyre_limits, max_steps) == offsetof(vyre_limits, timeout_ns) + 8 &&
                       sizeof(vyre_limits) == offsetof(vyre_limits, max_steps) + 8,
                   "vyre_limits layout");
VYRE_STATIC_ASSERT(sizeof(vyre_limits_info) == 16, "vyre_limits_info layout");
VYRE_STATIC_ASSERT(offsetof(vyre_indirect, buffer) == sizeof(vyre_ext) &&
                       sizeof(vyre_indirect) == sizeof(vyre_ext) + 16,
                   "vyre_indirect layout");
VYRE_STATIC_ASSERT(offsetof(vyre_backend, vt) == 8, "vyre_backend.vt");
VYRE_STATIC_ASSERT(offsetof(vyre_backend_vtable, destroy) == 8, "vtable.destroy");
VYRE_STATIC_ASSERT(offsetof(vyre_backend_vtable, get_extension) == 8 + 25 * sizeof(void (*)(void)), "vtable.get_extension (1.1)");
VYRE_STATIC_ASSERT(sizeof(vyre_backend_vtable) == 8 + 26 * sizeof(void (*)(void)), "vtable layout");
VYRE_STATIC_ASSERT(offsetof(vyre_registration, id) == 8, "registration.id");
VYRE_STATIC_ASSERT(offsetof(vyre_registration, op_types) == 8 + 3 * sizeof(void *) + 8 + sizeof(void *) + 16 + sizeof(void (*)(void)), "registration.op_types (1.1)");
VYRE_STATIC_ASSERT(sizeof(vyre_registration) == 8 + 5 * sizeof(void *) + 8 + sizeof(void *) + 16 + sizeof(void (*)(void)), "registration layout");
VYRE_STATIC_ASSERT(sizeof(vyre_resident_copy) == 24 + sizeof(void *) + (sizeof(void *) == 4 ? 4 : 0), "vyre_resident_copy layout");

#ifdef __cplusplus
}
#endif
#endif /* VYRE_VYRE_H */
