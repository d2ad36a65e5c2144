/* guard.h -- libvyre-host's checking instance, shared by guard*.c: the wrapper object, the checks of what a plugin returns. */
#ifndef HOST_GUARD_H
#define HOST_GUARD_H

#include <pthread.h>
#include <stdint.h>

#include "internal.h"
#include "abi/support/sized.h"
#include "vyre/vyre_program.h"

#define GUARD_MAGIC 0x4452415547455259ull /* "YREGUARD" */

/* What a dispatch must return: one output per output buffer of its
 * program, each of the byte size the program's geometry gives. */
typedef struct expect {
  int count_known, sizes_known;
  uint32_t count;
  uint64_t size[VYRE_MAX_BUFFERS];
} expect;

/* A pending dispatch (its expected outputs) or a pipeline (its program). */
typedef struct track {
  int is_pipeline;
  uint64_t handle;
  expect want;            /* pending */
  vyre_program *program;  /* pipeline: owned, decoded at its first dispatch */
  void *bytes;            /* pipeline: a copy of its image until then */
  uint64_t size;
} track;

typedef struct host_guard {
  vyre_backend head;      /* what callers hold; head.vt == &vt */
  vyre_backend_vtable vt; /* an entry is set exactly where the plugin's is */
  uint64_t magic;
  vyre_backend *inner;    /* the plugin's instance */
  char id[HOST_ID_MAX + 1];
  char *path;             /* the plugin file, for messages */
  pthread_mutex_t lock;   /* guards the cache and the tracks */
  void *cache_bytes;      /* the last program seen as bytes, and its decoding */
  uint64_t cache_size;
  vyre_program *cache;
  track *tracks;
  uint32_t track_count, track_cap;
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

/* The pending (is_pipeline 0) or pipeline track of `handle`, or NULL.
 * add replaces a track of a reused handle; NULL when out of memory.  drop
 * frees what the track owns.  All three with g->lock held. */
track *host_track_find(host_guard *g, int is_pipeline, uint64_t handle);
track *host_track_add(host_guard *g, int is_pipeline, uint64_t handle);
void host_track_drop(host_guard *g, track *t);

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
