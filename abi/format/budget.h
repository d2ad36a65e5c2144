/* budget.h -- reading vyre_limits (the core "vyre.limits" extension, vyre.h) from a call's extension chain, and the deadline it sets. */
#ifndef VYRE_FORMAT_BUDGET_H
#define VYRE_FORMAT_BUDGET_H

#include <stdint.h>

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

/* The deadline of a call that entered at t_entry (ns, monotonic) with
 * `timeout_ns`: 0 when there is no timeout, else t_entry + timeout_ns,
 * saturated (never 0). */
static inline uint64_t vyre__deadline(uint64_t t_entry, uint64_t timeout_ns) {
  if (!timeout_ns) return 0;
  uint64_t d = t_entry + timeout_ns;
  return d < t_entry ? UINT64_MAX : (d ? d : 1);
}

/* Seconds of a nanosecond count, for messages ("0.2 s"). */
static inline double vyre__seconds(uint64_t ns) { return (double)ns / 1e9; }

#endif /* VYRE_FORMAT_BUDGET_H */
