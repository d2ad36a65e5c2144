/* callcheck.c -- checks of what a host passes that need no program: extension chains, a vyre_program_ref's size (callcheck.h). */
#include "callcheck.h"

#include "errfill.h"

/* Contract in callcheck.h. */
vyre_status vyre__ext_chain_check(const vyre_ext *first, const char *what, const char *chain,
                                  vyre_error *err) {
  /* The entries seen so far: a `next` equal to one of them is a cycle.
   * At most VYRE__CHAIN_MAX, so the walk is bounded (64 * 63 / 2
   * compares at worst; a real chain has one or two entries). */
  const vyre_ext *seen[VYRE__CHAIN_MAX];
  uint32_t i = 0;
  for (const vyre_ext *e = first; e; e = e->next, i++) {
    if (i == VYRE__CHAIN_MAX)
      return vyre__error_set(err, VYRE_INVALID_ARGUMENT, 0,
                             "%s: %s has more than %u entries. Fix: end the chain with next = "
                             "NULL; chain one struct per extension",
                             what, chain, VYRE__CHAIN_MAX);
    /* Nothing past the size the caller vouched for is read. */
    if (e->struct_size < sizeof *e)
      return vyre__error_set(err, VYRE_INVALID_ARGUMENT, 0,
                             "%s: extension chain entry %u has struct_size %u, less than its "
                             "%zu-byte head (vyre_ext). Fix: set head.struct_size to the size of "
                             "the whole extension struct",
                             what, i, e->struct_size, sizeof *e);
    if (e->struct_size > VYRE__EXT_SIZE_MAX)
      return vyre__error_set(err, VYRE_INVALID_ARGUMENT, 0,
                             "%s: extension chain entry %u has struct_size %u, more than %u "
                             "(garbage: an uninitialised struct?). Fix: set head.struct_size to "
                             "the size of the whole extension struct",
                             what, i, e->struct_size, VYRE__EXT_SIZE_MAX);
    if (e->type == 0)
      return vyre__error_set(err, VYRE_INVALID_ARGUMENT, 0,
                             "%s: extension chain entry %u has type 0, which is never a type (an "
                             "uninitialised struct?). Fix: set head.type to the VYRE_EXT_* of "
                             "the struct",
                             what, i);
    seen[i] = e;
    for (uint32_t j = 0; j <= i; j++)
      if (e->next == seen[j])
        return vyre__error_set(err, VYRE_INVALID_ARGUMENT, 0,
                               "%s: %s is a cycle: entry %u's next points back to entry %u. "
                               "Fix: end the chain with next = NULL",
                               what, chain, i, j);
  }
  return VYRE_OK;
}

/* Contract in callcheck.h. */
vyre_status vyre__program_ref_size_check(uint32_t size, const char *what, vyre_error *err) {
  if (size > VYRE__EXT_SIZE_MAX)
    return vyre__error_set(err, VYRE_INVALID_ARGUMENT, 0,
                           "%s: struct_size 0x%08x (%u) is not a vyre_program_ref: built against "
                           "the 0.1 draft, whose vyre_program_ref began with the bytes pointer? "
                           "Fix: rebuild the caller against the vyre 1.x headers and initialise "
                           "it with VYRE_PROGRAM_BYTES(bytes, size) or "
                           "VYRE_PROGRAM_PIPELINE(handle)",
                           what, size, size);
  if (size == 0)
    return vyre__error_set(err, VYRE_INVALID_ARGUMENT, 0,
                           "%s: vyre_program_ref.struct_size is 0 (not initialised, or a caller "
                           "built against the 0.1 draft, which had no struct_size). Fix: "
                           "initialise it with VYRE_PROGRAM_BYTES(bytes, size) or "
                           "VYRE_PROGRAM_PIPELINE(handle); rebuild against the vyre 1.x headers",
                           what);
  if (size < sizeof(vyre_program_ref))
    return vyre__error_set(err, VYRE_INVALID_ARGUMENT, 0,
                           "%s: vyre_program_ref.struct_size is %u, at least %zu expected. Fix: "
                           "initialise it with VYRE_PROGRAM_BYTES(bytes, size) or "
                           "VYRE_PROGRAM_PIPELINE(handle)",
                           what, size, sizeof(vyre_program_ref));
  return VYRE_OK;
}
