/* guard.h -- libvyre-host's checking instance, shared by guard*.c: the wrapper object, the checks of what a plugin returns. */
#ifndef HOST_GUARD_H
#define HOST_GUARD_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>

#include "internal.h"
#include "abi/support/sized.h"
#include "vyre/vyre_program.h"

#define GUARD_MAGIC 0x4452415547455259ull /* "YREGUARD": a live instance */
#define GUARD_DEAD 0x44414544444e5942ull  /* "BYNDDEAD": destroyed, in quarantine */

/* What a dispatch must return: one output per output buffer of its
 * program, each of the byte size the program's geometry gives.  A call
 * whose geometry libvyre refuses (an input count or size the program does
 * not take, a workgroup or grid override over the limits) has no outputs
 * to check: `refused` holds why, and VYRE_OK for it is a violation. */
typedef struct expect {
  int count_known, sizes_known;
  uint32_t count;
  char refused[256]; /* "" unless the call's geometry is refused */
  uint64_t size[VYRE_MAX_BUFFERS];
} expect;

/* What the guard keeps of a pipeline: its program, so that its
 * dispatches are checked. */
typedef struct host_pipeline_info {
  vyre_program *program; /* owned, decoded at its first dispatch */
  void *bytes;           /* a copy of its image until then */
  uint64_t size;
} host_pipeline_info;

/* What an instance has handed out (guard_handles.c), by kind; the info
 * each keeps: */
#define HOST_KIND_RESIDENT 1u /* NULL */
#define HOST_KIND_PIPELINE 2u /* host_pipeline_info *, or NULL (not checked) */
#define HOST_KIND_PENDING 3u  /* expect *, or NULL (not checked) */
#define HOST_KIND_OUTPUTS 4u  /* NULL; the key is the vyre_outputs pointer */

/* Live handles and outputs one instance may hold; beyond, the call that
 * would make one more fails with VYRE_LIMIT (plugins hold fewer:
 * vyre_handles tables hold 65,535 per kind). */
#define HOST_HANDLES_MAX (1u << 22)

typedef struct host_slot {
  uint64_t key;
  uint32_t kind; /* 0: empty */
  void *info;
} host_slot;

typedef struct host_handles {
  host_slot *slots; /* mask + 1 of them, or NULL */
  uint32_t mask, count;
} host_handles;

typedef struct host_guard {
  vyre_backend head;      /* what callers hold; head.vt == &vt */
  vyre_backend_vtable vt; /* an entry is set exactly where the plugin's is */
  uint64_t magic;         /* GUARD_MAGIC, GUARD_DEAD once destroyed */
  vyre_backend *inner;    /* the plugin's instance */
  char id[HOST_ID_MAX + 1];
  char *path;             /* the plugin file, for messages */
  pthread_mutex_t lock;   /* guards the cache and the handles */
  void *cache_bytes;      /* the last program seen as bytes, and its decoding */
  uint64_t cache_size;
  vyre_program *cache;
  host_handles handles;   /* everything handed out and not yet released */
  _Atomic int extended;   /* get_extension served a table that may make handles
                             (any but vyre.limits, vyre.indirect): handles the
                             host did not see are then the plugin's to judge */
  host_validate *validate; /* validate.c */
  int validating;          /* $VYRE_VALIDATE selects this instance's dispatches */
  atomic_int validate_pending; /* the layer holds checked async dispatches */
} host_guard;

/* A fresh error record for the plugin to write; only the head is cleared
 * (the message is 2 KiB and this is on every call). */
#define PLUGIN_ERROR(e) \
  vyre_error e;         \
  e.struct_size = sizeof e; e.status = 0; e.native_code = 0; e.message[0] = '\0'

/* A contract violation: VYRE_INTERNAL naming the backend and the entry
 * ("dispatch"), with the Fix that names the plugin file. */
vyre_status host_violation(const host_guard *g, vyre_error *err, const char *entry,
                                 const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 4, 5)))
#endif
    ;

/* Pass the plugin's status and message on: VYRE_OK as is; a status that is
 * no vyre_status becomes a violation naming the raw value; the message is
 * cut at its last byte if the plugin left no NUL. */
vyre_status host_finish(const host_guard *g, const char *entry, vyre_status st,
                              vyre_error *e, vyre_error *err);

/* The handle set (guard_handles.c); the caller holds g->lock.  put
 * records (kind, key) with `info` (0; -1 when out of memory or over
 * HOST_HANDLES_MAX); a key already there gets the new info and *old the
 * one it had.  has answers 1 and *info (may be NULL) when recorded; take
 * does the same and removes it.  each calls fn on every record; free
 * releases the table, not the infos. */
int host_handles_put(host_handles *s, uint32_t kind, uint64_t key, void *info, void **old);
int host_handles_has(const host_handles *s, uint32_t kind, uint64_t key, void **info);
int host_handles_take(host_handles *s, uint32_t kind, uint64_t key, void **info);
void host_handles_each(host_handles *s, void (*fn)(host_slot *slot, void *ctx), void *ctx);
void host_handles_free(host_handles *s);

/* Free a pipeline's info (NULL accepted). */
void host_pipeline_info_free(host_pipeline_info *p);

/* Record what an entry handed out (taking g->lock).  On failure (out of
 * memory, or HOST_HANDLES_MAX held) `info` is freed and the status is
 * VYRE_OUT_OF_MEMORY or VYRE_LIMIT naming `entry`: the caller undoes the
 * plugin's call. */
vyre_status host_record(host_guard *g, const char *entry, uint32_t kind, uint64_t key,
                        void *info, vyre_error *err);
/* Remove a record (taking g->lock): 1 when it was there.  Its info goes
 * to *info when `info` is non-NULL (the caller frees it), else is freed. */
int host_forget(host_guard *g, uint32_t kind, uint64_t key, void **info);
/* At destroy, before the plugin's destroy: free the outputs still held
 * (with the plugin's outputs_free), every info, and the set. */
void host_retire(host_guard *g);

/* ------------------------------------------------------------------ */
/* What callers pass (guard_args.c): checked once, before the plugin   */
/* ------------------------------------------------------------------ */
/* Each returns VYRE_OK, or VYRE_INVALID_ARGUMENT / VYRE_INVALID_HANDLE
 * with one line "WHAT: ... Fix: ..." in *err (docs/abi.md, "What a plugin
 * may rely on when called through libvyre-host").  Those taking `g` look
 * handles up in its set (taking g->lock). */
vyre_status host_check_program(host_guard *g, const char *what, const vyre_program_ref *program,
                               vyre_error *err);
vyre_status host_check_options(host_guard *g, const char *what,
                               const vyre_dispatch_options *options, vyre_error *err);
vyre_status host_check_inputs(const char *what, const vyre_input *inputs, uint32_t count,
                              vyre_error *err);
vyre_status host_check_slots(const char *what, const vyre_output_slot *slots, uint32_t count,
                             vyre_error *err);
vyre_status host_check_handle(host_guard *g, const char *what, uint32_t kind, uint64_t handle,
                              vyre_error *err);
vyre_status host_check_residents(host_guard *g, const char *what, const vyre_resident *buffers,
                                 uint32_t count, vyre_error *err);
vyre_status host_check_copies(host_guard *g, const char *what, const vyre_resident_copy *copies,
                              uint32_t count, vyre_error *err);
vyre_status host_check_sequence(host_guard *g, const vyre_sequence_step *steps, uint32_t count,
                                const vyre_resident_copy *reads, uint32_t read_count,
                                vyre_error *err);
vyre_status host_check_bytes(const char *what, const char *name, const void *data, uint64_t size,
                             vyre_error *err);

/* What the program of a dispatch must return into *w (everything unknown
 * when the host cannot decode it).  Takes g->lock. */
void host_expect_for(host_guard *g, const vyre_program_ref *program,
                           const vyre_input *inputs, uint32_t input_count,
                           const vyre_dispatch_options *options, expect *w);

/* Check outputs the plugin returned with VYRE_OK against *w. */
vyre_status host_check_outputs(const host_guard *g, const char *entry,
                                     const vyre_outputs *o, const expect *w, vyre_error *err);

/* The caller's timing record, as a full-size copy the plugin writes. */
static inline vyre_timing *host_timing_in(const vyre_timing *caller, vyre_timing *copy) {
  if (!caller) return NULL;
  vyre__sized_read(copy, sizeof *copy, caller);
  return copy;
}
static inline void host_timing_out(vyre_timing *caller, const vyre_timing *copy) {
  if (caller) vyre__sized_write(caller, copy, sizeof *copy);
}

#endif /* HOST_GUARD_H */
