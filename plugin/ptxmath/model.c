/* model.c -- evaluates the shared algorithm text (algo.c) in C: the model of the emitted PTX. */
#include "ptxmath_model.h"

#include <string.h>

#include "algo.h"

int pm_model(uint32_t op, pm_variant variant, uint32_t xbits, uint32_t *result) {
  pm_ctx c;
  memset(&c, 0, sizeof c);
  if (!result || pm_algo_run(&c, op, variant, xbits) != 0) return -1;
  *result = c.result;
  return 0;
}

int pm_model_bit_exact(uint32_t op, pm_variant variant) {
  return pm_algo_has(op, variant) && variant != PM_FAST;
}
