/* algo.h -- entry to the shared algorithm text of ptxmath (internal to the math library and its tests). */
#ifndef VYRE_PLUGIN_PTXMATH_ALGO_H
#define VYRE_PLUGIN_PTXMATH_ALGO_H

#include <stdint.h>

#include "ptxmath.h"
#include "dsl.h"

/* 1 when `variant` of `op` exists, else 0. */
int pm_algo_has(uint32_t op, pm_variant variant);

/*
 * Run the algorithm of (op, variant) through `c`: emission appends the
 * function body (input %arg, output %res) to c->sb; evaluation stores the
 * result bits for input `xbits` in c->result.  Returns 0, or -1 when the
 * variant does not exist.  Pure; thread-safe for distinct contexts.
 */
int pm_algo_run(pm_ctx *c, uint32_t op, pm_variant variant, uint32_t xbits);

#endif /* VYRE_PLUGIN_PTXMATH_ALGO_H */
