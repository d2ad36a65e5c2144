/* validate.h -- the validation layer's private parts shared by validate.c (selection, the entries, the reference run) and validate_check.c (comparison, capsules). */
#ifndef HOST_VALIDATE_H
#define HOST_VALIDATE_H

#include <pthread.h>
#include <stdatomic.h>

#include "internal.h"
#include "vyre/vyre_program.h"

/* Divergences remembered per instance (each is reported and written
 * once); past this many, new ones are counted and not written. */
#define HOST_VALIDATE_SEEN_MAX 256u

/* A pipeline's program as the layer keeps it: what it was created from. */
typedef struct host_vpipe {
  vyre_pipeline handle;
  void *bytes;
  uint64_t size;
  uint32_t ulp_budget;
  uint32_t workgroup[3];
} host_vpipe;

struct host_validate {
  vyre_backend *self; /* the instance callers hold */
  char id[HOST_ID_MAX + 1];
  char version[HOST_VERSION_MAX + 1];
  int is_reference;   /* validating the reference against itself: nothing to do */
  /* What $VYRE_VALIDATE selects. */
  int all;
  uint64_t every;     /* 1/N: dispatches 0, N, 2N, ... of the instance; 0 = none */
  char sha[65];       /* sha256=PREFIX, lower case; "" = none */
  uint64_t pipeline;  /* pipeline=HANDLE; 0 = none */
  int strict;
  char *dir;          /* capsule directory */
  /* The reference instance, made at the first check. */
  host_factory_fn ref_create;
  uint16_t ref_minor;
  char ref_version[HOST_VERSION_MAX + 1];
  pthread_mutex_t lock; /* ref, ref_failed, pipes, seen, notes */
  vyre_backend *ref;
  int ref_failed;
  atomic_uint_fast64_t calls; /* dispatches seen, for 1/N */
  host_vpipe *pipes;
  uint32_t pipe_count, pipe_cap;
  uint64_t seen[HOST_VALIDATE_SEEN_MAX];
  uint32_t seen_count;
  uint64_t dropped;    /* divergences past HOST_VALIDATE_SEEN_MAX */
  uint32_t notes;      /* VALIDATE_NOTE_* said once */
};

/* One-time notes (bits of host_validate.notes). */
#define VALIDATE_NOTE_MMA (1u << 0)
#define VALIDATE_NOTE_PIPELINE (1u << 1)
#define VALIDATE_NOTE_REFERENCE (1u << 2)
#define VALIDATE_NOTE_FULL (1u << 3)
#define VALIDATE_NOTE_ASYNC (1u << 4)

/* One checked call: the program and the options both backends ran. */
typedef struct host_vcall {
  const vyre_program *program; /* decoded */
  vyre_dispatch_options options; /* the effective options, no chain */
  const vyre_input *inputs;
  uint32_t input_count;
  const char *entry;            /* "dispatch", "dispatch_into" */
  const char *capsule_path;     /* from vyre_validate, or NULL */
  int strict;
} host_vcall;

/* What one backend returned. */
typedef struct host_vresult {
  vyre_status status;
  int64_t native_code;
  uint32_t count;
  const void *data[VYRE_MAX_BUFFERS];
  uint64_t size[VYRE_MAX_BUFFERS];
} host_vresult;

/*
 * Compare the candidate's result with the reference's (statuses; then
 * outputs bit for bit, floats within options.ulp_budget when one is set,
 * float-MMA outputs skipped).  Returns 1 when they agree; else 0 with a
 * one-line description in `what`.
 */
int host_validate_compare(host_validate *v, const host_vcall *c, const host_vresult *want,
                          const host_vresult *got, char *what, size_t what_size);

/*
 * Write the replay capsule of a divergence (docs/conformance.md, "Replay
 * capsules") to `path`: the program, the inputs and options of the call,
 * the reference's result as the expectation.  Creates the directory
 * named by $VYRE_VALIDATE_DIR when needed.
 */
vyre_status host_validate_capsule(const host_validate *v, const host_vcall *c,
                                  const host_vresult *want, const char *what, const char *path,
                                  vyre_error *err);

#endif /* HOST_VALIDATE_H */
