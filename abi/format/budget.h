/* budget.h -- reading vyre_limits (the core "vyre.limits" extension, vyre.h) from a call's extension chain (the deadline it sets: vyre__deadline, clock.h). */
#ifndef VYRE_FORMAT_BUDGET_H
#define VYRE_FORMAT_BUDGET_H

#include <stdint.h>

#include "abi/support/clock.h" /* vyre__deadline, for the deadline a vyre_limits sets */
#include "vyre/vyre.h"

/*
 * The vyre_limits chained on `o` (NULL, or options whose struct_size
 * stops before `next`: no chain) into *out; *out is all zero (no limit)
 * when there is none.  The chain is walked and checked by vyre__ext_find
 * (chain.h): every entry's struct_size covers its head, its type is not
 * 0, the chain ends within VYRE__CHAIN_MAX entries; a vyre_limits must be
 * whole (struct_size >= sizeof) and alone.  Other types are skipped.
 * Failures are VYRE_INVALID_ARGUMENT naming `what`, with a Fix.  Reads
 * only the caller's memory; thread-safe.
 */
vyre_status vyre__limits_read(const vyre_dispatch_options *o, const char *what,
                              vyre_limits *out, vyre_error *err);

#endif /* VYRE_FORMAT_BUDGET_H */
