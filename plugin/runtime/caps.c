/* caps.c -- the capability table (caps.h): the device profile's bits, the registration's, and the Fix for each a device lacks. */
#include "caps.h"

#include <stddef.h>

#include "vyre/vyre.h"

/* What a capability needs of a device beyond the backend's minimum. */
typedef enum { NEED_NOTHING, NEED_SM, NEED_COOPERATIVE, NEED_MATH, NEED_MATH_CR } need_kind;

/* One row per capability the backend can offer.  The rows with a Fix come
 * first, in the order a program's missing capabilities are reported.
 * Minimum SMs: PTX ISA "Half precision" (f16 from sm_53) and "bf16" (sm_80). */
static const struct {
  uint64_t bit;
  need_kind need;
  uint32_t min_sm; /* NEED_SM: major * 10 + minor */
  const char *fix; /* NULL: every device the backend serves has it */
} table[] = {
    {VYRE_CAP_F16, NEED_SM, 53, "use a device of compute capability 5.3 or newer"},
    {VYRE_CAP_BF16, NEED_SM, 80, "use a device of compute capability 8.0 or newer"},
    /* mma.sync m16n8k16 (f16, bf16) and m16n8k32 (s8, u8), ldmatrix, cp.async: sm_80. */
    {VYRE_CAP_TENSOR_CORES, NEED_SM, 80,
     "run the MMA ops on a device of compute capability 8.0 or newer (A100, H100, ...) or on "
     "the reference backend"},
    /* Devices with another warp size are refused at open (context.c). */
    {VYRE_CAP_SUBGROUP, NEED_NOTHING, 0, "use a device with 32-lane warps"},
    {VYRE_CAP_ATOMIC64, NEED_NOTHING, 0, "use 32-bit atomics"},
    {VYRE_CAP_GRID_BARRIER, NEED_COOPERATIVE, 0,
     "use a device that supports cooperative launch, or split the program at the barrier"},
    {VYRE_CAP_TRANSCENDENTAL, NEED_MATH, 0,
     "this build of the CUDA backend has no PTX math library; use the reference backend or "
     "avoid transcendental ops"},
    /* PM_CR, chosen by codegen under ulp budget 0 (docs/ulp.md). */
    {VYRE_CAP_CORRECTLY_ROUNDED, NEED_MATH_CR, 0,
     "pass a ulp budget >= 1 (this build's PTX math library has no correctly rounded variant), "
     "or use the reference backend"},
    {VYRE_CAP_WORKGROUP_MEMORY, NEED_NOTHING, 0, "drop workgroup buffers"},
    {VYRE_CAP_ATOMICS, NEED_NOTHING, 0, "drop atomics"},
    {VYRE_CAP_BARRIER, NEED_NOTHING, 0, "drop barriers"},
    {VYRE_CAP_TRAP, NEED_NOTHING, 0, "drop trap"},
    {VYRE_CAP_ASYNC, NEED_NOTHING, 0, NULL},
    {VYRE_CAP_RESIDENT, NEED_NOTHING, 0, NULL},
    {VYRE_CAP_SEQUENCE, NEED_NOTHING, 0, NULL},
    {VYRE_CAP_TIMING, NEED_NOTHING, 0, NULL},
    {VYRE_CAP_PIPELINE, NEED_NOTHING, 0, NULL},
    {VYRE_CAP_FIXPOINT, NEED_NOTHING, 0, NULL},
    {VYRE_CAP_GRAPH_REPLAY, NEED_NOTHING, 0, NULL},
    {VYRE_CAP_INT64, NEED_NOTHING, 0, NULL},
    {VYRE_CAP_OUT_RANGE, NEED_NOTHING, 0, NULL},
    {VYRE_CAP_INDIRECT_DISPATCH, NEED_NOTHING, 0, NULL}, /* vyre_indirect (sequence.c) */
};

uint64_t vc_caps_of(const vc_caps_device *d) {
  uint64_t caps = 0;
  for (size_t i = 0; i < sizeof table / sizeof table[0]; i++) {
    int has = 1;
    switch (table[i].need) {
    case NEED_NOTHING: break;
    case NEED_SM: has = d->sm >= table[i].min_sm; break;
    case NEED_COOPERATIVE: has = d->cooperative != 0; break;
    case NEED_MATH: has = (d->transcendentals & VC_MATH) != 0; break;
    case NEED_MATH_CR: has = (d->transcendentals & (VC_MATH | VC_MATH_CR)) == (VC_MATH | VC_MATH_CR); break;
    }
    if (has) caps |= table[i].bit;
  }
  return caps;
}

uint64_t vc_caps_offered(int transcendentals) {
  const vc_caps_device best = {UINT32_MAX, 1, transcendentals};
  return vc_caps_of(&best);
}

const char *vc_caps_fix(uint64_t missing, uint64_t *bit) {
  for (size_t i = 0; i < sizeof table / sizeof table[0]; i++) {
    if (table[i].fix && (missing & table[i].bit)) {
      *bit = table[i].bit;
      return table[i].fix;
    }
  }
  *bit = 0;
  return NULL;
}
