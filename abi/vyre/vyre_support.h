/* vyre_support.h -- helpers every side uses: error records, argument checks, what a program needs, SHA-256, handle tables, the program builder. */
#ifndef VYRE_VYRE_SUPPORT_H
#define VYRE_VYRE_SUPPORT_H

#include <pthread.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include "vyre.h"
#include "vyre_program.h"

#ifdef __cplusplus
extern "C" {
#endif

#if defined(__GNUC__)
#define VYRE_PRINTF(f, a) __attribute__((format(printf, f, a)))
#else
#define VYRE_PRINTF(f, a)
#endif

/* ------------------------------------------------------------------ */
/* The library's version                                               */
/* ------------------------------------------------------------------ */
/* The libvyre linked at run time (unlike VYRE_ABI_MAJOR/MINOR, which are
 * the headers a program was built with): its release ("1.0.0") and the
 * ABI it speaks.  Any pointer may be NULL.  Static data; thread-safe. */
const char *vyre_version(uint32_t *abi_major, uint32_t *abi_minor);

/* ------------------------------------------------------------------ */
/* Error records                                                       */
/* ------------------------------------------------------------------ */

/* Fill *err (may be NULL) with status, native code and a formatted
 * message; returns `status` so callers can `return vyre_error_set(...)`. */
vyre_status vyre_error_set(vyre_error *err, vyre_status status, int64_t native,
                           const char *fmt, ...) VYRE_PRINTF(4, 5);
vyre_status vyre_error_vset(vyre_error *err, vyre_status status, int64_t native,
                            const char *fmt, va_list ap);
/* Put "context: " in front of an existing message (no-op on NULL). */
void vyre_error_prefix(vyre_error *err, const char *fmt, ...) VYRE_PRINTF(2, 3);
/* Reset to VYRE_OK with an empty message. */
void vyre_error_clear(vyre_error *err);
/* Copy src into dst honouring dst->struct_size. */
void vyre_error_copy(vyre_error *dst, const vyre_error *src);

/* ------------------------------------------------------------------ */
/* Argument checks (since libvyre VYRE_1.1)                             */
/* ------------------------------------------------------------------ */
/* The checks every backend makes where a host's call enters it, with
 * one wording for all (share/doc/vyre/abi.md section 11, "Argument
 * checks").  Each returns VYRE_OK, or fills *err (may be NULL) and
 * returns the failure; `what` names the entry in the message
 * ("dispatch", "dispatch_resident"; NULL reads "vyre").  Pure;
 * thread-safe. */

/* VYRE_INVALID_ARGUMENT when `program` is NULL ("WHAT: program is NULL.
 * Fix: ...") or its struct_size is below sizeof(vyre_program_ref); since
 * vyre 1.0.0 also when it is 0 or above 64 KiB (named as a caller built
 * against the 0.1 draft). */
vyre_status vyre_check_program_ref(const vyre_program_ref *program, const char *what,
                                   vyre_error *err);
/* VYRE_INVALID_ARGUMENT when input_count is not `expected` (the
 * program's vyre_program.input_count), when `inputs` is NULL with a
 * count, or when an input has a size but NULL data. */
vyre_status vyre_check_inputs(const vyre_input *inputs, uint32_t input_count, uint32_t expected,
                              const char *what, vyre_error *err);
/* For a plugin's vyre_plugin_entry: VYRE_ABI_MISMATCH when host_major is
 * not VYRE_ABI_MAJOR, or host_minor is below minor_min, the oldest minor
 * the plugin serves; minor_max (its newest, usually VYRE_ABI_MINOR) is
 * named in the message.  `plugin` names the plugin ("cuda plugin"). */
vyre_status vyre_check_host_abi(const char *plugin, uint16_t host_major, uint16_t host_minor,
                                uint16_t minor_min, uint16_t minor_max, vyre_error *err);

/* ------------------------------------------------------------------ */
/* What a program needs from a backend (since libvyre VYRE_1.1.2)     */
/* ------------------------------------------------------------------ */

/*
 * The ops a program uses and the types each is used at, the capabilities
 * and the buffers' storage types: what a backend must offer to run it
 * (share/doc/vyre/program-format.md, "What a program needs").  Hosts
 * match it against registrations to choose a backend
 * (vyre_host_create_for), the conformance harness and the fuzzer to skip
 * what a backend does not claim.  Size-prefixed and append-only: set
 * struct_size = sizeof(vyre_needs); a reader uses only what struct_size
 * covers (vyre.h).
 */
typedef struct vyre_needs {
  uint32_t struct_size;
  uint32_t reserved;       /* 0 */
  uint64_t capabilities;   /* VYRE_CAP_* */
  uint64_t storage_types;  /* bit (1 << vyre_type) of each buffer's element type */
  uint64_t ops[4];         /* op id k is used: bit (k & 63) of ops[k >> 6]
                              (VYRE_NEEDS_HAS_OP) */
  uint32_t op_types[256];  /* per op id: VYRE_TBIT of each type the op is used
                              at (the type vyre_registration.op_types names);
                              0 for an op used without a type (statements) */
} vyre_needs;
#define VYRE_NEEDS_HAS_OP(needs, op) \
  ((uint32_t)(op) < 256u && (((needs)->ops[(uint32_t)(op) >> 6] >> ((uint32_t)(op) & 63u)) & 1u))
VYRE_STATIC_ASSERT(offsetof(vyre_needs, ops) == 24 && offsetof(vyre_needs, op_types) == 56 &&
                       sizeof(vyre_needs) == 56 + 256 * 4,
                   "vyre_needs layout");

/*
 * Fill *out (caller sets out->struct_size) with what `program` (decoded,
 * so valid) needs when run with `options` (may be NULL):
 *   - ops: every op id of an instruction; op_types: per op, the type each
 *     instruction is claimed at: for compares and predicates the operand
 *     type (their result is always bool), none for statements (ops whose
 *     table type mask is 0), else the instruction's type field (a load's
 *     widened type, a cast's target type, an atomic's element type);
 *   - capabilities: the program's required_caps, plus int64 when an
 *     instruction's type is u64 or i64 (a u64/i64 buffer no instruction
 *     loads, stores or updates needs only its storage type), out_range
 *     for a buffer with VYRE_BUF_OUT_RANGE, fixpoint for
 *     options->fixpoint_iterations > 1, indirect_dispatch and resident
 *     for a vyre_indirect chained on options, correctly_rounded for a
 *     program with a transcendental op under options->ulp_budget 0
 *     (strict; also NULL options);
 *   - storage_types: every buffer's element type.
 * VYRE_INVALID_ARGUMENT for NULL program or out, a struct_size below 4 or
 * above 64 KiB, or a malformed options chain.  Pure; thread-safe.
 */
vyre_status vyre_program_needs(const vyre_program *program, const vyre_dispatch_options *options,
                               vyre_needs *out, vyre_error *err);

/*
 * How many items of `needs` an offer lacks (0: it covers them all).  The
 * offer is a registration's (or vyre_host_candidate's) ops, op_types
 * (op_count masks parallel to ops; NULL or a 0 mask: every type the op's
 * class allows; an op listed twice is offered at the union), storage
 * types and capabilities (for an instance, those of its device profile).
 * why (may be NULL) receives every missing item, "; "-separated, cut at
 * why_size bytes: "op div not claimed", "op add not claimed at f32",
 * "capability int64 not offered", "storage type u64 not offered".  NULL
 * needs (or a bad struct_size) counts as one item.  Pure; thread-safe.
 */
uint32_t vyre_needs_unmet(const vyre_needs *needs, const uint16_t *ops, const uint32_t *op_types,
                          uint32_t op_count, uint64_t storage_types, uint64_t capabilities,
                          char *why, size_t why_size);

/* ------------------------------------------------------------------ */
/* SHA-256 (FIPS 180-4)                                                */
/* ------------------------------------------------------------------ */
typedef struct vyre_sha256_ctx {
  uint32_t h[8];
  uint64_t length;
  uint8_t block[64];
  uint32_t used;
} vyre_sha256_ctx;

void vyre_sha256_init(vyre_sha256_ctx *ctx);
void vyre_sha256_update(vyre_sha256_ctx *ctx, const void *data, size_t size);
void vyre_sha256_final(vyre_sha256_ctx *ctx, uint8_t out[32]);
void vyre_sha256(const void *data, size_t size, uint8_t out[32]);
/* 32 bytes -> 64 lowercase hex chars + NUL. */
void vyre_hex(const uint8_t *bytes, size_t size, char *out);

/* ------------------------------------------------------------------ */
/* Handle tables: 64-bit generation-checked handles for plugin objects */
/* ------------------------------------------------------------------ */
/*
 * A handle packs, from the top bit down,
 *
 *   salt:16 | generation:32 | slot+1:16
 *
 * and is never 0 (slot+1 is at least 1).  A handle is accepted only by
 * the table that made it, only while its object is there:
 *   - salt: each table draws one from a process-wide counter (table n
 *     gets n * 0x9e37 + 0x2b41 mod 2^16; the step is odd, so the first
 *     65,536 tables of a process all differ, consecutive ones in many
 *     bits), so a handle of another table -- another instance, or another
 *     kind of object (the kind passed to init needs no bits of its own)
 *     -- is refused.  Table n and table n + 65,536 share a salt.
 *   - generation: each slot counts its reuses; a removed handle's slot
 *     hands out the next generation, so the removed handle stays stale.
 *     A slot whose generation would wrap (after 2^32 - 1 reuses) is
 *     retired, never handed out again: no generation of a slot repeats,
 *     so a stale handle never becomes valid again.
 *   - slot: at most VYRE_HANDLES_MAX (65,535) live handles per table;
 *     insert returns VYRE_LIMIT beyond that (and when every slot is live
 *     or retired).
 * A handle from another table, a removed or retired slot, a slot past the
 * table or slot 0 is rejected, never dereferenced.  All calls are
 * thread-safe.  The fields are public so that tables can be embedded;
 * only handles.c writes them (tests/abi/check_format.c moves a free
 * slot's generation to the end of its range, to reach the wrap without
 * 2^32 reuses).
 */
typedef struct vyre_handle_slot {
  void *object;        /* NULL while free or retired */
  uint32_t generation; /* of the handle naming the slot now (or next, while free) */
  uint32_t next_free;  /* next free slot index + 1, 0 = none */
} vyre_handle_slot;

typedef struct vyre_handle_table {
  pthread_mutex_t lock;
  vyre_handle_slot *slots;
  uint32_t capacity;  /* slots allocated, at most VYRE_HANDLES_MAX */
  uint32_t live;
  uint32_t free_head; /* slot index + 1, 0 = none */
  uint32_t retired;   /* slots whose generations ran out */
  uint16_t salt;
  uint8_t tag;        /* the kind it was made for (VYRE_HANDLE_*) */
} vyre_handle_table;

/* Most live handles in one table (the 16-bit slot field, 0 excluded). */
#define VYRE_HANDLES_MAX 65535u

/* Kinds of handle (vyre_handles_init's tag). */
#define VYRE_HANDLE_RESIDENT 0x52u /* 'R' */
#define VYRE_HANDLE_PENDING 0x50u  /* 'P' */
#define VYRE_HANDLE_PIPELINE 0x4cu /* 'L' */

/* A new empty table for objects of kind `tag`, with the next salt.  Cannot
 * fail: the lock is PTHREAD_MUTEX_INITIALIZER's default mutex. */
void vyre_handles_init(vyre_handle_table *table, uint8_t tag);
/* Frees the slot array only; the caller drains objects first.  Accepts NULL. */
void vyre_handles_destroy(vyre_handle_table *table);
/* Insert a non-NULL object and store its handle in *handle.  VYRE_OK;
 * VYRE_LIMIT when VYRE_HANDLES_MAX handles are live (or the free slots
 * are retired); VYRE_OUT_OF_MEMORY when the slot array cannot grow;
 * VYRE_INVALID_ARGUMENT for a NULL object or handle.  *handle is
 * untouched on failure. */
vyre_status vyre_handles_insert(vyre_handle_table *table, void *object, uint64_t *handle);
/* Fill *err (may be NULL) for a failed insert and return the status to
 * report: VYRE_LIMIT or VYRE_OUT_OF_MEMORY with a message naming `call`
 * ("resident_alloc") and the `objects` ("resident buffers"), whose Fix
 * ends with `fix` ("free the resident buffers you no longer use
 * (resident_free)"); VYRE_INTERNAL for any other status; VYRE_OK for
 * VYRE_OK. */
vyre_status vyre_handles_insert_failed(vyre_error *err, vyre_status status, const char *call,
                                       const char *objects, const char *fix);
/* The object, or NULL when the handle is not live in this table. */
void *vyre_handles_get(vyre_handle_table *table, uint64_t handle);
/* Remove and return the object, or NULL when the handle is not live. */
void *vyre_handles_remove(vyre_handle_table *table, uint64_t handle);
/* Remove and return any live object (for draining at destroy), or NULL. */
void *vyre_handles_pop_any(vyre_handle_table *table);
uint32_t vyre_handles_live(vyre_handle_table *table);

/* ------------------------------------------------------------------ */
/* Program builder: encodes programs for hosts and tests               */
/* ------------------------------------------------------------------ */
/*
 * Build a program in code.  Every call appends; value-producing calls
 * return the new value id.  Type errors are not checked here (the encoder
 * writes what it is told); vyre_program_decode is the validator.  A builder
 * that ran out of memory remembers it and fails at vyre_builder_finish.
 */
typedef struct vyre_builder vyre_builder;

vyre_builder *vyre_builder_new(uint32_t wg_x, uint32_t wg_y, uint32_t wg_z);
void vyre_builder_free(vyre_builder *b);
void vyre_builder_set_workgroup(vyre_builder *b, uint32_t x, uint32_t y, uint32_t z);

/* Declare a buffer; returns its index.  binding: for non-workgroup
 * buffers the next binding is used when binding == UINT32_MAX. */
uint32_t vyre_b_buffer(vyre_builder *b, const char *name, uint32_t binding,
                       vyre_access access, vyre_type elem, uint32_t count, uint32_t flags);
void vyre_b_buffer_range(vyre_builder *b, uint32_t buffer, uint32_t offset, uint32_t size);
uint32_t vyre_b_local(vyre_builder *b, vyre_type type);

/* Raw instruction.  Returns its index. */
uint32_t vyre_b_inst(vyre_builder *b, vyre_op op, uint32_t type, uint32_t mod, uint32_t a,
                     uint32_t bb, uint32_t c, uint32_t d);
/* The result type the builder recorded for value id v (VOID if none). */
uint32_t vyre_b_type_of(const vyre_builder *b, uint32_t v);

uint32_t vyre_b_const(vyre_builder *b, vyre_type type, uint64_t bits);
uint32_t vyre_b_u32(vyre_builder *b, uint32_t v);
uint32_t vyre_b_i32(vyre_builder *b, int32_t v);
uint32_t vyre_b_u64(vyre_builder *b, uint64_t v);
uint32_t vyre_b_i64(vyre_builder *b, int64_t v);
uint32_t vyre_b_f32(vyre_builder *b, float v);
uint32_t vyre_b_bool(vyre_builder *b, int v);
uint32_t vyre_b_gid(vyre_builder *b, uint32_t axis);
uint32_t vyre_b_builtin(vyre_builder *b, vyre_op op, uint32_t axis);
uint32_t vyre_b_load(vyre_builder *b, uint32_t buffer, uint32_t index);
uint32_t vyre_b_buflen(vyre_builder *b, uint32_t buffer);
uint32_t vyre_b_get(vyre_builder *b, uint32_t slot);
/* Binary, compare, unary, predicate: the type follows the operand. */
uint32_t vyre_b_bin(vyre_builder *b, vyre_op op, uint32_t x, uint32_t y);
uint32_t vyre_b_un(vyre_builder *b, vyre_op op, uint32_t x);
uint32_t vyre_b_select(vyre_builder *b, uint32_t cond, uint32_t t, uint32_t f);
uint32_t vyre_b_cast(vyre_builder *b, vyre_type to, uint32_t x);
uint32_t vyre_b_fma(vyre_builder *b, uint32_t x, uint32_t y, uint32_t z);
uint32_t vyre_b_atomic(vyre_builder *b, vyre_op op, uint32_t buffer, uint32_t index,
                       uint32_t value, vyre_order order);
uint32_t vyre_b_cas(vyre_builder *b, uint32_t buffer, uint32_t index, uint32_t expected,
                    uint32_t desired, vyre_order order);
uint32_t vyre_b_ballot(vyre_builder *b, uint32_t cond);
uint32_t vyre_b_shuffle(vyre_builder *b, uint32_t value, uint32_t lane);
uint32_t vyre_b_reduce(vyre_builder *b, vyre_reduce kind, uint32_t value);
void vyre_b_let(vyre_builder *b, uint32_t slot, uint32_t value);
void vyre_b_assign(vyre_builder *b, uint32_t slot, uint32_t value);
void vyre_b_store(vyre_builder *b, uint32_t buffer, uint32_t index, uint32_t value);
void vyre_b_if(vyre_builder *b, uint32_t cond);
void vyre_b_else(vyre_builder *b);
void vyre_b_end(vyre_builder *b);
void vyre_b_loop(vyre_builder *b, uint32_t slot, uint32_t start, uint32_t end);
void vyre_b_block(vyre_builder *b);
void vyre_b_return(vyre_builder *b);
void vyre_b_barrier(vyre_builder *b, vyre_barrier_scope scope);
void vyre_b_trap(vyre_builder *b, uint32_t code);
/* The MMA statements (vyre_program.h; vyre_b_local declares matrix
 * locals too).  Each sets the instruction's type to the component type
 * of its locals (the accumulator's for mma_fill and mma_store, the
 * tile's for mma_load, A's for mma); slots are local indices, buffer a
 * buffer index, value, index and stride value ids. */
void vyre_b_mma_fill(vyre_builder *b, uint32_t slot, uint32_t value);
void vyre_b_mma_load(vyre_builder *b, vyre_layout layout, uint32_t slot, uint32_t buffer,
                     uint32_t index, uint32_t stride);
void vyre_b_mma(vyre_builder *b, uint32_t d, uint32_t a, uint32_t bm, uint32_t c);
void vyre_b_mma_store(vyre_builder *b, vyre_layout layout, uint32_t buffer, uint32_t index,
                      uint32_t stride, uint32_t slot);
uint32_t vyre_b_inst_count(const vyre_builder *b);

/* Encode.  *bytes receives malloc'd memory the caller frees with free(). */
vyre_status vyre_builder_finish(vyre_builder *b, void **bytes, size_t *size,
                                vyre_error *err);

/* ------------------------------------------------------------------ */
/* f32 canonical form and f16/bf16 conversions                        */
/* (share/doc/vyre/semantics.md, "f32" and "Memory")                  */
/* ------------------------------------------------------------------ */
#define VYRE_F32_CANONICAL_NAN 0x7fc00000u
#define VYRE_F16_CANONICAL_NAN 0x7e00u
#define VYRE_BF16_CANONICAL_NAN 0x7fc0u
/* NaN -> 0x7FC00000, subnormal -> signed zero, else unchanged. */
uint32_t vyre_f32_canonical_bits(uint32_t bits);
float vyre_f32_canonical(float x);
/* f32 bits -> f16/bf16 bits, round to nearest even, NaN canonical. */
uint16_t vyre_f32_to_f16(uint32_t bits);
uint16_t vyre_f32_to_bf16(uint32_t bits);
/* f16/bf16 bits -> f32 bits, exact (not canonicalised). */
uint32_t vyre_f16_to_f32(uint16_t h);
uint32_t vyre_bf16_to_f32(uint16_t h);

/* ------------------------------------------------------------------ */
/* f32 arithmetic as vyre defines it (libvyre 1.0.0, VYRE_1.1.2;       */
/* share/doc/vyre/semantics.md, "f32" and "Underflow")                 */
/* ------------------------------------------------------------------ */
/* On f32 bits, bit for bit what every backend must compute, for CPU and
 * emulation backends (the reference backend calls these): a subnormal
 * operand reads as the zero of its sign; the exact result is rounded to
 * nearest even as if the exponent were unbounded (fma rounds once), and a
 * rounded magnitude below 2^-126 gives the zero of the exact result's
 * sign (tininess after rounding, then flush: what PTX .ftz computes, and
 * not what C's x * y gives); a NaN result is 0x7FC00000.  sqrt(-0) = -0,
 * sqrt(x < 0) = NaN.  They use the FPU: call them in the default
 * floating-point environment (round to nearest, FTZ/DAZ off, which C
 * programs start with; the reference backend sets FE_DFL_ENV on its
 * launch threads).  Thread-safe; no state. */
uint32_t vyre_f32_add(uint32_t a, uint32_t b);
uint32_t vyre_f32_sub(uint32_t a, uint32_t b);
uint32_t vyre_f32_mul(uint32_t a, uint32_t b);
uint32_t vyre_f32_div(uint32_t a, uint32_t b); /* rcp x = vyre_f32_div(0x3f800000, x) */
uint32_t vyre_f32_fma(uint32_t a, uint32_t b, uint32_t c); /* a * b + c */
uint32_t vyre_f32_sqrt(uint32_t a);
/* x rounded to f32 by the same rule (for a result computed in double,
 * such as a transcendental): nearest even, tiny -> signed zero, NaN
 * canonical. */
uint32_t vyre_f32_from_f64(double x);

#ifdef __cplusplus
}
#endif
#endif /* VYRE_VYRE_SUPPORT_H */
