/* model.c -- evaluates the shared algorithm text (algo.c) in C: the model of the emitted PTX, compiled as one unit so it runs at native speed. */
#include "ptxmath_model.h"

#include <string.h>

/*
 * The model includes its own copy of dsl.c and algo.c under other external
 * names (model_names.h), so that pm_model can be flattened: every primitive
 * is inlined with c->emit known to be 0, which removes the emission code
 * and the calls (about 6x faster than calling dsl.c's primitives, which the
 * reference backend and the exhaustive CPU sweep need).  The operation
 * sequence and each operation's C semantics are those of dsl.c and algo.c
 * unchanged, and the library is compiled with -ffp-contract=off, so the
 * results are the same bits.
 */
#include "model_names.h"
#include "dsl.c"
#include "algo.c"

__attribute__((flatten)) int pm_model(uint32_t op, pm_variant variant, uint32_t xbits, uint32_t *result) {
  pm_ctx c;
  memset(&c, 0, sizeof c);
  if (!result || pm_algo_run(&c, op, variant, xbits) != 0) return -1;
  *result = c.result;
  return 0;
}

int pm_model_bit_exact(uint32_t op, pm_variant variant) {
  return pm_algo_has(op, variant) && variant != PM_FAST;
}
