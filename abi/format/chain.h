/* chain.h -- the one walker of a call's extension chain (vyre_ext, docs/abi.md section 5): every reader of a chained struct finds it here. */
#ifndef VYRE_FORMAT_CHAIN_H
#define VYRE_FORMAT_CHAIN_H

#include <stdint.h>

#include "vyre/vyre.h"
#include "abi/support/callcheck.h"

/* The chained struct a reader looks for, and its words in messages. */
typedef struct vyre__ext_kind {
  uint32_t type;    /* its VYRE_EXT_* (never 0) */
  uint32_t size;    /* the least struct_size it needs: sizeof the struct */
  const char *name; /* the struct's name: "vyre_limits" */
  const char *one;  /* what a duplicate's Fix says to chain one of: "vyre_limits", "stream" */
} vyre__ext_kind;

/*
 * The one entry of `kind` chained on `o` into *found (NULL when there is
 * none).  `o` may be NULL, or options whose struct_size stops before
 * `next` (a 1.0 caller): no chain.  Checks the whole chain first with
 * vyre__ext_chain_check (callcheck.h: every entry's struct_size within its
 * vyre_ext head and 64 KiB, no type 0, no cycle, at most VYRE__CHAIN_MAX
 * entries: the checks libvyre-host makes before a plugin is called), then
 * the entry of kind->type covers kind->size and is alone.  Other
 * types are skipped.  Failures are VYRE_INVALID_ARGUMENT naming `what`
 * (the call: "dispatch"), with a Fix, and *found NULL.  *found points into
 * the caller's chain (borrowed for the call); reads only the caller's
 * memory; thread-safe.
 */
vyre_status vyre__ext_find(const vyre_dispatch_options *o, const vyre__ext_kind *kind,
                           const char *what, const vyre_ext **found, vyre_error *err);

#endif /* VYRE_FORMAT_CHAIN_H */
