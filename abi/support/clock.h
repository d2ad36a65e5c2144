/* clock.h -- the one clock: CLOCK_MONOTONIC in nanoseconds, elapsed time and deadlines on it. */
#ifndef VYRE_SUPPORT_CLOCK_H
#define VYRE_SUPPORT_CLOCK_H

#include <stdint.h>

/* Now on CLOCK_MONOTONIC, in nanoseconds (since an unspecified start,
 * never going back).  Thread-safe. */
uint64_t vyre__now_ns(void);

/* Now on the same clock in seconds, for rates and reports. */
double vyre__now_seconds(void);

/* Nanoseconds since `start` (a vyre__now_ns value); 0 when `start` lies
 * in the future (never wraps). */
uint64_t vyre__elapsed_ns(uint64_t start);

/* The deadline of a call that entered at t_entry (a vyre__now_ns value)
 * with `timeout_ns`: 0 (none) when there is no timeout, else t_entry +
 * timeout_ns, saturated (never 0). */
static inline uint64_t vyre__deadline(uint64_t t_entry, uint64_t timeout_ns) {
  if (!timeout_ns) return 0;
  uint64_t d = t_entry + timeout_ns;
  return d < t_entry ? UINT64_MAX : (d ? d : 1);
}

/* 1 when `deadline` (0 = none, as vyre__deadline makes them) has passed. */
int vyre__deadline_passed(uint64_t deadline);

/* Nanoseconds left until `deadline`: UINT64_MAX when there is none (0),
 * 0 once it has passed. */
uint64_t vyre__deadline_left_ns(uint64_t deadline);

#endif /* VYRE_SUPPORT_CLOCK_H */
