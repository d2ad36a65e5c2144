/* util.h -- small helpers every runtime module may use: the log, checked addition, the clock. */
#ifndef VYRE_PLUGIN_CUDA_UTIL_H
#define VYRE_PLUGIN_CUDA_UTIL_H

#include <stdint.h>
#include <time.h>

#include "abi/support/log.h"

/* Debug tracing (VYRE_LOG=debug) through the one log; never the only
 * signal of a failure. */
#define vc_log(...) vyre__log("vyre-cuda", __VA_ARGS__)

/* a + b into *out; 0 on overflow. */
static inline int vc_add_u64(uint64_t a, uint64_t b, uint64_t *out) {
  if (a > UINT64_MAX - b) return 0;
  *out = a + b;
  return 1;
}

/* CLOCK_MONOTONIC in nanoseconds. */
static inline uint64_t vc_now_ns(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

#endif /* VYRE_PLUGIN_CUDA_UTIL_H */
