/* crtable.c -- the inputs whose accurate f32 result is not the correctly rounded one:
 * written by tests/ptxmath/cr_table.py from an exhaustive sweep (docs/ulp.md); do not edit. */
#include "crtable.h"

#include <vyre/vyre_program.h>

const pm_cr_entry *pm_cr_table(uint32_t op, size_t *n) {
  switch (op) {
  default: *n = 0; return NULL;
  }
}
