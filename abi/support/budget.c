/* budget.c -- reading vyre_limits from a call's extension chain (budget.h). */
#include "budget.h"

#include <stddef.h>
#include <string.h>

#include "vyre/vyre_support.h"

vyre_status vyre__limits_read(const vyre_dispatch_options *o, const char *what,
                              vyre_limits *out, vyre_error *err) {
  memset(out, 0, sizeof *out);
  /* Options from a 1.0 caller end before `next`: they have no chain. */
  if (!o || o->struct_size < offsetof(vyre_dispatch_options, next) + sizeof o->next)
    return VYRE_OK;
  int found = 0;
  uint32_t i = 0;
  for (const vyre_ext *e = o->next; e; e = e->next, i++) {
    if (i == VYRE__CHAIN_MAX)
      return vyre_error_set(err, VYRE_INVALID_ARGUMENT, 0,
                            "%s: the options' extension chain has more than %u entries (a "
                            "cycle?). Fix: end the chain with next = NULL",
                            what, VYRE__CHAIN_MAX);
    if (e->struct_size < sizeof *e)
      return vyre_error_set(err, VYRE_INVALID_ARGUMENT, 0,
                            "%s: extension chain entry %u has struct_size %u, less than its "
                            "%zu-byte head (vyre_ext). Fix: set head.struct_size to the size of "
                            "the whole extension struct",
                            what, i, e->struct_size, sizeof *e);
    if (e->type == 0)
      return vyre_error_set(err, VYRE_INVALID_ARGUMENT, 0,
                            "%s: extension chain entry %u has type 0, which is never a type (an "
                            "uninitialised struct?). Fix: set head.type to the VYRE_EXT_* of "
                            "the struct",
                            what, i);
    if (e->type != VYRE_EXT_LIMITS) continue; /* not this one: skipped (vyre.h) */
    if (e->struct_size < sizeof(vyre_limits))
      return vyre_error_set(err, VYRE_INVALID_ARGUMENT, 0,
                            "%s: vyre_limits (chain entry %u) has struct_size %u, %zu "
                            "expected. Fix: set head.struct_size = sizeof(vyre_limits)",
                            what, i, e->struct_size, sizeof(vyre_limits));
    if (found)
      return vyre_error_set(err, VYRE_INVALID_ARGUMENT, 0,
                            "%s: the extension chain holds two vyre_limits entries (the second "
                            "is entry %u). Fix: chain one vyre_limits per call",
                            what, i);
    found = 1;
    const vyre_limits *l = (const vyre_limits *)e;
    out->head.struct_size = sizeof *out;
    out->head.type = VYRE_EXT_LIMITS;
    out->timeout_ns = l->timeout_ns;
    out->max_steps = l->max_steps;
  }
  return VYRE_OK;
}
