/* fill.h -- programs whose whole effect is `store buf[gid.x] = constant`: found once per plan, run as a driver memset instead of a kernel (docs/cuda-runtime.md, "Fills"). */
#ifndef VYRE_PLUGIN_CUDA_FILL_H
#define VYRE_PLUGIN_CUDA_FILL_H

#include <stdint.h>

#include "vyre/vyre_program.h"

/* What a fill program writes: words of `unit` bytes holding `pattern`,
 * words_per_elem of them per element of program buffer `buffer`, for
 * every gid below the buffer's length, the element count and the guards. */
typedef struct vc_fill {
  uint8_t is_fill;
  uint8_t unit;           /* 1, 2 or 4: cuMemsetD8/D16/D32Async */
  uint8_t words_per_elem; /* 1, or 2 for a 64-bit element whose halves agree */
  uint8_t elementwise;    /* compiled on the elementwise path */
  uint32_t buffer;        /* declaration index */
  uint32_t kernel_index;
  uint32_t pattern;       /* the word, in its low `unit` bytes */
  uint32_t limit;         /* `gid < limit` guards (UINT32_MAX: none) */
  uint64_t limit_buffers; /* bit k: a `gid < buflen(buffer k)` guard */
} vc_fill;

/*
 * Decide whether `program` is a fill (elementwise != 0 when its kernel
 * took the elementwise path, cg_kernel_info.grid_mode ==
 * CG_GRID_ELEMENTWISE: it covers the element count; otherwise every
 * invocation of the grid runs, docs/semantics.md): its
 * instructions are only gid.x, constants, buflen, `gid >= X` / `gid < X`
 * compares (X a u32 constant or a buflen), early-exit guards `if (gid >=
 * X) { return } end` or one guard block `if (gid < X) ... end`, and
 * exactly one `store buf gid c` of a constant c whose bits the store
 * writes unchanged (integer or bool elements of 1, 2 or 4 bytes, f32 of
 * an f32 constant, 64-bit integers whose two halves are equal; never
 * f16/bf16, which round).  No load, atomic, loop, barrier or trap.  *out
 * is zeroed when it is not.  Pure; thread-safe.
 */
void vc_fill_detect(const vyre_program *program, int elementwise, vc_fill *out);

/* The memset words of one launch: every element below min(buffer
 * length, the gids that run, guards), words_per_elem each.  counts: the
 * launch's count words as the kernel gets them (words[0] the element
 * count, words[1 + b] buffer b's length: vyre_params_fill, or a chunk's
 * own); the gids that run are counts[0] on the elementwise path, else
 * grid.x * block.x (none when an axis is 0). */
uint64_t vc_fill_words(const vc_fill *f, const uint32_t *counts, const uint32_t grid[3],
                       const uint32_t block[3]);

#endif /* VYRE_PLUGIN_CUDA_FILL_H */
