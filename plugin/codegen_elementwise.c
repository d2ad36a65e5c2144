/* codegen_elementwise.c -- the vectorised elementwise fast path (docs/codegen.md "Elementwise path"). */
#include "codegen_internal.h"

int cg_elementwise_eligible(cg_ctx *c) {
  (void)c;
  return 0;
}

void cg_elementwise_body(cg_ctx *c) { (void)c; }
