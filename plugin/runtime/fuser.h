/* fuser.h -- fused sequences: consecutive elementwise steps over one index space run as one kernel; the fused plans, cached (docs/cuda-runtime.md, "Fused sequences"). */
#ifndef VYRE_PLUGIN_CUDA_FUSER_H
#define VYRE_PLUGIN_CUDA_FUSER_H

#include <pthread.h>
#include <stdint.h>

#include "context.h"
#include "launch.h"
#include "metrics.h"
#include "modcache.h"

typedef struct vc_fuse_entry vc_fuse_entry;

/* The fuser; fields private to fuser.c. */
typedef struct vc_fuser {
  pthread_mutex_t lock;
  vc_fuse_entry *head; /* most recently used first */
  uint32_t count, capacity;
  int enabled; /* VYRE_CUDA_FUSE, read at create */
  uint64_t compiles, hits, refused, runs, steps, saved;
  vc_context *cx;
  vc_modcache *plans;
  vc_launcher *lx;
} vc_fuser;

/* The launch list of one sequence call after fusion. */
typedef struct vc_fused {
  uint32_t n;                /* launches; 0: nothing fused, run the steps */
  vc_launch *Ls;             /* n launches, shaped, params staged (the caller takes them) */
  vyre_sequence_step *steps; /* per launch: its resident handles (buffers, buffer_count) */
  vyre_resident *handles;    /* what steps[].buffers point into */
  uint32_t *first;           /* per launch: the first step it runs */
  uint32_t folded;           /* steps that run inside fused launches */
} vc_fused;

/* Enabled unless VYRE_CUDA_FUSE=0.  VYRE_OK, or the failure in err
 * (nothing to destroy then). */
vyre_status vc_fuser_init(vc_fuser *f, vc_context *cx, vc_modcache *plans, vc_launcher *lx,
                          vyre_error *err);
/* Drop every cached fused plan (shutdown, destroy).  Context current
 * unless lost. */
void vc_fuser_clear(vc_fuser *f);
void vc_fuser_destroy(vc_fuser *f);
/* Add fuse.{enabled, compiles, hits, refused, entries, sequences, steps,
 * launches_saved}. */
void vc_fuser_add_metrics(vc_fuser *f, vc_metrics *m);

/*
 * Fuse a checked step list (Ls shaped and staged, one per step): each
 * maximal run of consecutive steps that qualify becomes one launch of a
 * fused plan (from the cache, or built: fuse.c, checked with
 * cg_elementwise_query, compiled once).  out->n = 0 when nothing fused
 * (or fusion is off); otherwise out holds the launch list and the Ls
 * entries it took over are emptied (vc_launch_release on them is a
 * no-op); the steps that went into fused launches keep their Ls entries
 * for the caller to release.  A fused launch takes its first step's
 * deadline.  Fusion never fails a sequence: whatever goes wrong (no
 * memory, a fused kernel that does not compile), the steps run as they
 * are; always VYRE_OK.  Context current; thread-safe.
 */
vyre_status vc_fuse_sequence(vc_fuser *f, vc_launch *Ls, const vyre_sequence_step *steps,
                             uint32_t n, vc_fused *out);
/* Free out's arrays but Ls (the caller's now). */
void vc_fused_free(vc_fused *out);
/* Count a run of a fused list, `repeat` times. */
void vc_fuser_count(vc_fuser *f, const vc_fused *fz, uint32_t steps, uint32_t repeat);

#endif /* VYRE_PLUGIN_CUDA_FUSER_H */
