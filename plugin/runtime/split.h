/* split.h -- chunked host dispatch: an elementwise program's dispatch cut into chunks whose uploads, kernels and readbacks overlap on two streams. */
#ifndef VYRE_PLUGIN_CUDA_SPLIT_H
#define VYRE_PLUGIN_CUDA_SPLIT_H

#include <stdint.h>

#include "launch.h"
#include "staging.h"

/* Buffer classes of a chunked dispatch (vc_split_classify). */
#define VC_SPLIT_WHOLE 0u /* passed whole and unchanged to every chunk */
#define VC_SPLIT_CHUNK 1u /* accessed at gid: offset and cut per chunk */

/*
 * Can L (shaped for a host dispatch) run as chunks, each a launch over
 * elements [s, e) with every gid-indexed buffer's pointer advanced by s
 * elements, bit for bit as the one launch?  The kernel ABI has no gid
 * base (docs/kernel-abi.md), so this holds only when gid is never a
 * value: 1 when
 *   - the code generator chose the elementwise path (its analysis,
 *     cg_elementwise_eligible: every store at gid, every other load at an
 *     index the same for all elements from a buffer nothing stores, no
 *     loops, barriers, atomics, subgroup ops or traps);
 *   - every use of gid is the index of a load or store, or a comparison
 *     with the length of a buffer accessed at gid; every use of such a
 *     length is such a comparison;
 *   - no buffer is accessed both at gid and elsewhere;
 *   - every buffer accessed at gid has at least element_count elements,
 *     and an output exactly that many (no tail past the last chunk);
 *   - at most VC_STEP_MAX_SEGS such inputs, and as many outputs.
 * cls[b] receives each buffer's VC_SPLIT_* class.  Pure; thread-safe.
 */
int vc_split_classify(const vc_launch *L, uint8_t *cls);

/* What a chunked dispatch works on (the job's, owned by dispatch.c). */
typedef struct vc_split_job {
  vc_launcher *lx;
  vc_staging *staging;
  const vc_launch *L;       /* shaped, params words staged */
  const uint8_t *cls;       /* by buffer index (vc_split_classify) */
  const CUdeviceptr *dev;   /* by buffer index: the whole device buffer */
  const void *const *src;   /* by buffer index: the host input, or NULL */
  void *const *dst;         /* by buffer index: the output's destination, or NULL */
  CUstream stream[2];       /* chunk c runs on stream[c & 1] */
  uint32_t chunk_elems;     /* a multiple of 4096 */
} vc_split_job;

/*
 * The elements per chunk for about `chunk_bytes` of input and output per
 * chunk, at most one staging chunk of both, a multiple of 4096; 0 when
 * the dispatch would not make two chunks.
 */
uint32_t vc_split_chunk_elems(const vc_launch *L, const uint8_t *cls, uint64_t chunk_bytes,
                              uint64_t staging_chunk);

/*
 * Run the chunks as steps of the staging ring (vc_staging_steps): chunk
 * c's inputs are copied into a ring chunk and go up on stream[c & 1],
 * its launch follows there, then its outputs come back into the same
 * ring chunk and the copy threads copy them out while later chunks'
 * inputs go in; neighbouring chunks' uploads, kernels and readbacks
 * overlap on the two streams.  Returns when every chunk's outputs are in
 * host memory.  Buffers of class VC_SPLIT_WHOLE are the caller's to
 * upload before and read back after; both streams must already be
 * ordered after that upload.  On failure both streams have been
 * synchronised.  Context current.
 */
vyre_status vc_split_run(const vc_split_job *sj, vyre_error *err);

#endif /* VYRE_PLUGIN_CUDA_SPLIT_H */
