/* tolerance.h -- the reference backend's MMA error-bound side channel (private to host-stub: conform and fuzz chain it on a host dispatch to learn how far another backend's float MMA result may lie from the reference's). */
#ifndef VYRE_REF_TOLERANCE_H
#define VYRE_REF_TOLERANCE_H

#include <math.h>
#include <stdint.h>
#include <string.h>

#include "vyre/vyre.h"

/*
 * Chained on vyre_dispatch_options.next of a host dispatch (dispatch or
 * dispatch_into) on the reference backend.  For every 4-byte element j
 * of returned output o (vyre_outputs order) with bound[o] != NULL and
 * o < output_count, the reference writes bound[o][j]:
 *   - for an output of element type f32: -1.0 when the element was not
 *     last written by an mma_store of a mat_acc_f32 tile (compare it by
 *     the usual rules: bytes, or ulps under a budget), else the element's
 *     error bound (docs/semantics.md, "Matrix multiply-accumulate"): a
 *     value >= 0, +inf when the result is unconstrained (any value,
 *     NaN included);
 *   - for an output of any other element type: -1.0 for each of its
 *     size / 4 (rounded down) words.
 * Written only when the dispatch succeeds.  Other backends skip the
 * chained struct (a type they do not know); the reference ignores it on
 * resident, sequence and async dispatches.  Two of them in one chain, or
 * a struct_size below sizeof(ref_mma_bound): VYRE_INVALID_ARGUMENT.
 * The caller owns every array; each bound[o] holds out.size / 4 doubles.
 */
#define REF_EXT_MMA_BOUND 0x52460001u /* "RF": private to host-stub */
typedef struct ref_mma_bound {
  vyre_ext head;         /* {sizeof(ref_mma_bound), REF_EXT_MMA_BOUND, next} */
  uint32_t output_count; /* entries of `bound` */
  uint32_t reserved;
  double **bound;        /* bound[o]: caller-allocated, one double per 4-byte element of
                            the returned output o (vyre_outputs order), or NULL to skip */
} ref_mma_bound;

/*
 * Whether f32 result `got` (bits) is acceptable against the reference's
 * `want` (bits) under `bound`, the value the side channel wrote for the
 * element (>= 0): an infinite bound takes anything, NaN included; else a
 * NaN want takes any NaN, an infinite want takes only that infinity, and
 * otherwise |got - want| <= bound with got not NaN.  For elements whose bound is
 * -1.0 the caller compares by its usual rules instead.  Pure.
 */
static inline int ref_mma_within(uint32_t got, uint32_t want, double bound) {
  float g, w;
  memcpy(&g, &got, sizeof g);
  memcpy(&w, &want, sizeof w);
  if (isinf(bound)) return 1; /* unconstrained: any value, NaN included */
  if (isnan(w)) return isnan(g);
  if (isnan(g)) return 0;
  if (isinf(w)) return g == w;
  return fabs((double)g - (double)w) <= bound;
}

#endif /* VYRE_REF_TOLERANCE_H */
