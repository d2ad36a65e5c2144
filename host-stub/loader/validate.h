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
  /* Checked async dispatches awaiting their pending_wait (validate_async.c). */
  struct host_vpending **pendings;
  uint32_t pending_count, pending_cap;
  atomic_int *pending_flag; /* the guard's: pending_count != 0 */
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

/* The options a call passes on: the caller's, or a copy whose chain
 * lacks every vyre_validate (the nodes before the last one copied). */
typedef struct host_vstrip {
  const vyre_dispatch_options *use;
  vyre_dispatch_options copy;
  vyre_validate ext; /* zeroed when the chain has none */
  int found;
  unsigned char *heap;
} host_vstrip;

/* Take vyre_validate off the chain of o into *s (out of memory: an
 * error, nothing to release); unstrip writes the extension's outcome and
 * releases the copy. */
vyre_status host_validate_strip(const vyre_dispatch_options *o, host_vstrip *s, vyre_error *err);
void host_validate_unstrip(host_vstrip *s, uint32_t outcome);

/* Set up one call of `entry`: the chain stripped into *s, *c filled (the
 * effective options without a chain), the program's bytes, and whether
 * the call is checked. */
vyre_status host_validate_begin(host_validate *v, const char *entry,
                                const vyre_program_ref *program, const vyre_input *inputs,
                                uint32_t input_count, const vyre_dispatch_options *options,
                                host_vstrip *s, host_vcall *c, const void **bytes,
                                uint64_t *size, int *check_it, vyre_error *err);

/* Say something once per instance (note: a VALIDATE_NOTE_* bit; fmt
 * takes the backend id and `detail`). */
void host_validate_note(host_validate *v, uint32_t note, const char *fmt, const char *detail);

/* Run c on the reference: 1 with *program (decoded; c->program points
 * at it), *want and *ro (the reference's outputs) to release with
 * host_validate_reference_free; 0 when it cannot be checked (noted). */
int host_validate_run_reference(host_validate *v, host_vcall *c, const void *bytes,
                                uint64_t size, vyre_program **program, host_vresult *want,
                                vyre_outputs **ro);
void host_validate_reference_free(host_validate *v, vyre_program *program, vyre_outputs *ro);

/* Compare and, on a divergence, report, write the capsule and (strict)
 * fail: VYRE_OK or VYRE_INTERNAL; *outcome AGREED or DIVERGED. */
vyre_status host_validate_judge(host_validate *v, const host_vcall *c, const host_vresult *want,
                                const host_vresult *got, uint32_t *outcome, vyre_error *err);

/* One checked async dispatch awaiting its wait: what the capsule needs
 * (the program, the options, a copy of the inputs) and the reference's
 * result. */
typedef struct host_vpending {
  vyre_pending handle;
  host_vcall call;         /* inputs point into `copy`; capsule_path into `path` */
  vyre_input inputs[VYRE_MAX_BUFFERS];
  unsigned char *copy;     /* the inputs' bytes */
  char *path;              /* the extension's capsule path, or NULL */
  vyre_program *program;
  vyre_outputs *ro;        /* the reference's outputs */
  host_vresult want;
} host_vpending;

/* Release one (NULL accepted). */
void host_validate_pending_free(host_validate *v, host_vpending *p);

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
