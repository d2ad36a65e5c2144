/* ptxmath_model.h -- the C model of the ptxmath subroutines: the same operation sequence as the emitted PTX, evaluated on the host. */
#ifndef VYRE_PLUGIN_PTXMATH_MODEL_H
#define VYRE_PLUGIN_PTXMATH_MODEL_H

#include <stdint.h>

#include "ptxmath.h"

/*
 * Evaluate (op, variant) on the f32 whose bits are `xbits`, storing the
 * result bits in *result.  For PM_ACCURATE the result is bit-identical to
 * what the emitted PTX computes on any input.  For PM_FAST the hardware
 * .approx instruction is replaced by the correctly rounded value of its
 * function, so only the code around it is modelled (pm_model_bit_exact()
 * says 0).  Returns 0, or -1 when the variant does not exist.  Pure and
 * thread-safe; needs the default floating-point environment
 * (round-to-nearest, no flush-to-zero).
 */
int pm_model(uint32_t op, pm_variant variant, uint32_t xbits, uint32_t *result);

/* 1 when pm_model reproduces the GPU bit for bit for (op, variant). */
int pm_model_bit_exact(uint32_t op, pm_variant variant);

#endif /* VYRE_PLUGIN_PTXMATH_MODEL_H */
