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

/* 1 when `deadline` (a vyre__now_ns value; 0 = none, as budget.h's
 * vyre__deadline makes them) has passed. */
int vyre__deadline_passed(uint64_t deadline);

/* Nanoseconds left until `deadline`: UINT64_MAX when there is none (0),
 * 0 once it has passed. */
uint64_t vyre__deadline_left_ns(uint64_t deadline);

#endif /* VYRE_SUPPORT_CLOCK_H */
