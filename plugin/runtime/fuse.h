/* fuse.h -- the fused program of consecutive elementwise sequence steps: their bodies one after another over shared buffer slots (pure IR, no driver). */
#ifndef VYRE_PLUGIN_CUDA_FUSE_H
#define VYRE_PLUGIN_CUDA_FUSE_H

#include <stddef.h>
#include <stdint.h>

#include "vyre/vyre_program.h"

/* One step as the fuser sees it: its validated program and, per kernel
 * buffer (kernel_index order), the fused program's buffer slot. */
typedef struct vc_fuse_step {
  const vyre_program *program;
  const uint32_t *slot;
} vc_fuse_step;

/*
 * The program that runs, per invocation, step 0's body, then step 1's,
 * ... (docs/cuda-runtime.md, "Fused sequences"): one buffer per slot
 * (0 .. slots - 1, declared in slot order: the fused launch binds slot s
 * to the resident buffer the steps bound to s), fresh locals per step,
 * values renumbered, and each step's early-exit guards `if (gid >=
 * buflen(b)) { return } end` turned into `if (gid < buflen(b)) { rest of
 * the step } end`, so that one step's exit does not skip the next.
 * Workgroup wg.  VYRE_OK with *bytes (malloc'd) and *size; VYRE_UNSUPPORTED
 * when the steps cannot share one body (a return other than such a guard,
 * a workgroup buffer, a slot two steps declare with different element
 * types or counts); VYRE_OUT_OF_MEMORY.  err may be NULL.  Thread-safe.
 */
vyre_status vc_fuse_build(const vc_fuse_step *steps, uint32_t n, uint32_t slots,
                          const uint32_t wg[3], void **bytes, size_t *size, vyre_error *err);

#endif /* VYRE_PLUGIN_CUDA_FUSE_H */
