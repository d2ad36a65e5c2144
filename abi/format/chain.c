/* chain.c -- the one walker of a call's extension chain (chain.h). */
#include "chain.h"

#include <stddef.h>

#include "vyre/vyre_support.h"
#include "abi/support/callcheck.h"

/* Contract in chain.h. */
vyre_status vyre__ext_find(const vyre_dispatch_options *o, const vyre__ext_kind *kind,
                           const char *what, const vyre_ext **found, vyre_error *err) {
  *found = NULL;
  /* Options from a 1.0 caller end before `next`: they have no chain. */
  if (!o || o->struct_size < offsetof(vyre_dispatch_options, next) + sizeof o->next)
    return VYRE_OK;
  vyre_status st = vyre__ext_chain_check(o->next, what, "the options' extension chain", err);
  if (st != VYRE_OK) return st;
  const vyre_ext *hit = NULL;
  uint32_t i = 0;
  for (const vyre_ext *e = o->next; e; e = e->next, i++) {
    if (e->type != kind->type) continue; /* not this one: skipped (vyre.h) */
    if (e->struct_size < kind->size)
      return vyre_error_set(err, VYRE_INVALID_ARGUMENT, 0,
                            "%s: %s (chain entry %u) has struct_size %u, %u expected. Fix: set "
                            "head.struct_size = sizeof(%s)",
                            what, kind->name, i, e->struct_size, kind->size, kind->name);
    if (hit)
      return vyre_error_set(err, VYRE_INVALID_ARGUMENT, 0,
                            "%s: the extension chain holds two %s entries (the second is entry "
                            "%u). Fix: chain one %s per call",
                            what, kind->name, i, kind->one);
    hit = e;
  }
  *found = hit;
  return VYRE_OK;
}
