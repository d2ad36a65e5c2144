/* launch.h -- one kernel launch, fully shaped: geometry, grid, params block, trap words; the dispatch counters. */
#ifndef VYRE_PLUGIN_CUDA_LAUNCH_H
#define VYRE_PLUGIN_CUDA_LAUNCH_H

#include <stdatomic.h>
#include <stdint.h>

#include "context.h"
#include "metrics.h"
#include "modcache.h"
#include "pools.h"
#include "abi/support/sized.h"
#include "vyre/vyre_program.h"

/* The launch module's state; fields private to launch.c. */
typedef struct vc_launcher {
  vc_context *cx;
  vc_mempool *devpool, *hostpool;
  vc_modcache *plans;
  atomic_ullong dispatches, launches, fastpath_launches, sequences, params_skipped, traps,
      in_flight, fills;
} vc_launcher;

/* One kernel launch.  Filled by vc_launch_shape and vc_launch_stage_params;
 * its owner (a job, a sequence) reads grid, ptrs and the params blocks. */
typedef struct vc_launch {
  vc_plan *plan;        /* one reference */
  const vc_kernel *k;   /* the plan's kernel (set by vc_launch_shape) */
  vyre_geometry geo;
  uint32_t grid[3], block[3];
  uint32_t iterations;
  uint64_t deadline, timeout_ns; /* vyre_limits (0: none): enqueueing a long
                                    fixpoint stops past the deadline */
  CUdeviceptr ptrs[VYRE_MAX_BUFFERS]; /* by kernel_index */
  CUdeviceptr indirect;                /* indirect dispatch: the three counts (the
                                          kernel's `indirect` parameter); 0: none */
  vyre_resident indirect_handle;       /* the resident buffer holding them */
  uint32_t params_words;
  vc_block params_dev;  /* kernels with trap or grid words only; else empty */
  vc_block params_host; /* pinned: the words (the counts argument, the block as
                           uploaded), then the trap readback */
} vc_launch;

void vc_launcher_init(vc_launcher *lx, vc_context *cx, vc_mempool *devpool, vc_mempool *hostpool,
                      vc_modcache *plans);
/* Add dispatch.{count, launches, fastpath_launches, sequences,
 * params_skipped, traps, in_flight, fills}. */
void vc_launcher_add_metrics(vc_launcher *lx, vc_metrics *m);
/* Counters kept here for the dispatch modules (thread-safe). */
void vc_launcher_count_dispatch(vc_launcher *lx);
void vc_launcher_count_sequence(vc_launcher *lx);
void vc_launcher_in_flight(vc_launcher *lx, int delta);

/*
 * Shape L (L->plan set) for these input sizes (host dispatch) or
 * resident sizes: geometry with the kernel's workgroup, the grid of its
 * grid mode, device limits, cooperative limits, fixpoint iterations and
 * params size.  Nothing is allocated.
 */
vyre_status vc_launch_shape(vc_launcher *lx, vc_launch *L, const uint64_t *input_sizes,
                            const uint64_t *resident_sizes, const vyre_dispatch_options *o,
                            vyre_error *err);
/* Fill the pinned params words; a kernel with trap or grid words also
 * gets a device block to upload them to. */
vyre_status vc_launch_stage_params(vc_launcher *lx, vc_launch *L, vyre_error *err);
/* Enqueue the params upload on s (nothing for a kernel without a block). */
vyre_status vc_launch_upload_params(vc_launcher *lx, const vc_launch *L, CUstream s,
                                    vyre_error *err);
/* Enqueue the launch (all fixpoint iterations) on s; count: add them to
 * the launch counters (captured launches do not run).  A fill program
 * (fill.h) on an aligned buffer is one driver memset instead (counted
 * in dispatch.fills, not launches): the same bytes, no kernel. */
vyre_status vc_launch_enqueue(vc_launcher *lx, const vc_launch *L, CUstream s, int count,
                              vyre_error *err);
/* What one replay of L adds to the launch counters (graph launch). */
void vc_launch_replay_counts(const vc_launch *L, uint32_t *launches, uint32_t *fastpath,
                             uint32_t *fills);
void vc_launcher_count_replays(vc_launcher *lx, uint64_t launches, uint64_t fastpath,
                               uint64_t fills);
/* Enqueue the trap words' readback on s (kernels with a trap). */
vyre_status vc_launch_read_trap(vc_launcher *lx, const vc_launch *L, CUstream s, vyre_error *err);
/* After completion: VYRE_TRAP when the kernel recorded a trap, VYRE_LIMIT
 * when an indirect count was past the launched grid (nothing ran); step
 * >= 0 names the sequence step. */
vyre_status vc_launch_check_trap(vc_launcher *lx, const vc_launch *L, int step, vyre_error *err);
/* Release the params blocks and the plan reference. */
void vc_launch_release(vc_launcher *lx, vc_launch *L);

/* Copy a caller's size-prefixed options into a zeroed full struct. */
static inline void vc_options_read(const vyre_dispatch_options *in, vyre_dispatch_options *out) {
  vyre__sized_read(out, sizeof *out, in);
}
/* Caller structs: struct_size and flags checked. */
vyre_status vc_check_options(const vyre_dispatch_options *o, vyre_error *err);
vyre_status vc_check_timing(vyre_timing *t, vyre_error *err);
/* Copy t into the caller's (smaller or larger) vyre_timing. */
void vc_write_timing(vyre_timing *out, const vyre_timing *t);
/* cuEventElapsedTime between two recorded events; *ok = 0 when unknown. */
double vc_elapsed_ms(vc_context *cx, CUevent t0, CUevent t1, int *ok);

#endif /* VYRE_PLUGIN_CUDA_LAUNCH_H */
