/* tolerance.c -- the reference's MMA bound side channel (tolerance.h): find the chained ref_mma_bound, run a host dispatch with per-element bound shadows, and fill the caller's arrays. */
#include <errno.h>
#include <stdlib.h>

#include "ref.h"
#include "tolerance.h"
#include "abi/format/chain.h"

vyre_status ref_mma_bound_find(const vyre_dispatch_options *o, const ref_mma_bound **out,
                               vyre_error *err) {
  static const vyre__ext_kind kind = {REF_EXT_MMA_BOUND, sizeof(ref_mma_bound), "ref_mma_bound",
                                      "ref_mma_bound"};
  const vyre_ext *found = NULL;
  vyre_status st = vyre__ext_find(o, &kind, "dispatch", &found, err);
  *out = (const ref_mma_bound *)found;
  return st;
}

/* Copy each f32 output's shadow (or -1.0) into the caller's arrays. */
static void bounds_fill(const vyre_program *p, const vyre_geometry *g, double *const *shadow,
                        const ref_mma_bound *mb) {
  for (uint32_t i = 0; i < p->buffer_count; i++) {
    int o = p->buffers[i].output_index;
    if (o < 0 || (uint32_t)o >= mb->output_count || !mb->bound || !mb->bound[o]) continue;
    uint64_t first = g->out_offset[i] / 4, n = g->out_size[i] / 4;
    for (uint64_t j = 0; j < n; j++) mb->bound[o][j] = shadow[i] ? shadow[i][first + j] : -1.0;
  }
}

vyre_status ref_mma_execute(const vyre_program *p, const vyre_geometry *g, uint8_t *const *mem,
                            uint32_t iterations, uint32_t threads, const ref_limits *lim,
                            ref_exec_stats *stats, const ref_mma_bound *mb, vyre_error *err) {
  if (!mb) return ref_execute(p, g, mem, iterations, threads, lim, stats, err);
  double *shadow[VYRE_MAX_BUFFERS] = {0};
  vyre_status st = VYRE_OK;
  for (uint32_t i = 0; i < p->buffer_count; i++) {
    const vyre_buffer_info *bi = &p->buffers[i];
    if (bi->output_index < 0 || bi->decl.elem_type != VYRE_T_F32) continue;
    uint64_t n = g->buffer_bytes[i] / 4;
    shadow[i] = malloc((size_t)(n ? n : 1) * sizeof(double));
    if (!shadow[i]) {
      st = vyre_error_set(err, VYRE_OUT_OF_MEMORY, ENOMEM,
                          "dispatch: out of host memory for the MMA bounds of output '%s'. Fix: "
                          "use smaller outputs, or chain no ref_mma_bound",
                          bi->name);
      goto done;
    }
    for (uint64_t j = 0; j < n; j++) shadow[i][j] = -1.0;
  }
  st = ref_execute_bounds(p, g, mem, iterations, threads, lim, stats, shadow, err);
  if (!st) bounds_fill(p, g, shadow, mb);
done:
  for (uint32_t i = 0; i < VYRE_MAX_BUFFERS; i++) free(shadow[i]);
  return st;
}
