/* callcheck.h -- checks of what a host passes that need no program: the generic checks of an extension chain (vyre_ext, docs/abi.md section 5) and of a vyre_program_ref's size, shared by libvyre (its chain reader, vyre_check_program_ref) and libvyre-host's checking instance, so both word a mistake the same way. */
#ifndef VYRE_SUPPORT_CALLCHECK_H
#define VYRE_SUPPORT_CALLCHECK_H

#include <stdint.h>

#include "vyre/vyre.h"

/* A chain longer than this is refused (no call needs more; a longer one
 * is garbage or a cycle the walk did not reach). */
#define VYRE__CHAIN_MAX 64u
/* An entry larger than this is garbage (docs/abi.md section 2). */
#define VYRE__EXT_SIZE_MAX 65536u

/*
 * Check the chain that starts at `first` (NULL: no chain, VYRE_OK) once,
 * reading only the vyre_ext head of each entry: every struct_size covers
 * the 16-byte head and is at most VYRE__EXT_SIZE_MAX, no type is 0, no
 * entry's `next` points back to an entry of the chain (a cycle, named as
 * such, with both indices), the chain ends within VYRE__CHAIN_MAX
 * entries.  A failure is VYRE_INVALID_ARGUMENT, one line "WHAT: ... Fix:
 * ...", where WHAT is `what` ("dispatch") and `chain` names the chain
 * ("the options' extension chain").  Reads only the caller's memory;
 * thread-safe.
 */
vyre_status vyre__ext_chain_check(const vyre_ext *first, const char *what, const char *chain,
                                  vyre_error *err);

/*
 * The struct_size of a vyre_program_ref, the one field read before the
 * size is known good: VYRE_INVALID_ARGUMENT "WHAT: ... Fix: ..." for 0 or
 * more than 64 KiB (named as a caller built against the 0.1 draft, whose
 * vyre_program_ref began with the bytes pointer: its low half lands
 * here), or below sizeof(vyre_program_ref); else VYRE_OK.  Pure.
 */
vyre_status vyre__program_ref_size_check(uint32_t size, const char *what, vyre_error *err);

#endif /* VYRE_SUPPORT_CALLCHECK_H */
