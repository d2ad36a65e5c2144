/* budget.c -- reading vyre_limits from a call's extension chain (budget.h). */
#include "budget.h"

#include <string.h>

#include "chain.h"

static const vyre__ext_kind limits_kind = {VYRE_EXT_LIMITS, sizeof(vyre_limits), "vyre_limits",
                                           "vyre_limits"};

vyre_status vyre__limits_read(const vyre_dispatch_options *o, const char *what,
                              vyre_limits *out, vyre_error *err) {
  memset(out, 0, sizeof *out);
  const vyre_ext *e;
  vyre_status st = vyre__ext_find(o, &limits_kind, what, &e, err);
  if (st != VYRE_OK || !e) return st;
  const vyre_limits *l = (const vyre_limits *)e;
  out->head.struct_size = sizeof *out;
  out->head.type = VYRE_EXT_LIMITS;
  out->timeout_ns = l->timeout_ns;
  out->max_steps = l->max_steps;
  return VYRE_OK;
}
