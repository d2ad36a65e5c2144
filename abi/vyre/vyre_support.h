/* vyre_support.h -- helpers every side uses: error records, SHA-256, handle tables, the program builder. */
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
 * the headers a program was built with): its release ("0.1.0") and the
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
 * A handle packs (tag:8 | salt:8 | generation:16 | slot+1:32).  A handle
 * from another table (tag or salt differ), a freed slot (generation
 * differs) or an index out of range is rejected, never dereferenced.
 * All calls are thread-safe.
 */
typedef struct vyre_handle_slot {
  void *object;
  uint32_t generation;
  uint32_t next_free;
} vyre_handle_slot;

typedef struct vyre_handle_table {
  pthread_mutex_t lock;
  vyre_handle_slot *slots;
  uint32_t capacity;
  uint32_t live;
  uint32_t free_head; /* slot index + 1, 0 = none */
  uint8_t tag;
  uint8_t salt;
} vyre_handle_table;

/* Kinds of handle (the tag byte). */
#define VYRE_HANDLE_RESIDENT 0x52u /* 'R' */
#define VYRE_HANDLE_PENDING 0x50u  /* 'P' */
#define VYRE_HANDLE_PIPELINE 0x4cu /* 'L' */

void vyre_handles_init(vyre_handle_table *table, uint8_t tag);
/* Frees the slot array only; the caller drains objects first. */
void vyre_handles_destroy(vyre_handle_table *table);
/* Insert a non-NULL object; 0 on success, -1 for NULL or when out of memory or slots. */
int vyre_handles_insert(vyre_handle_table *table, void *object, uint64_t *handle);
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

#ifdef __cplusplus
}
#endif
#endif /* VYRE_VYRE_SUPPORT_H */
