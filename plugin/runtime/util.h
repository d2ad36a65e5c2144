/* util.h -- small helpers every runtime module may use: the log, a checked mutex init, checked addition, a fast hash. */
#ifndef VYRE_PLUGIN_CUDA_UTIL_H
#define VYRE_PLUGIN_CUDA_UTIL_H

#include <pthread.h>
#include <stdint.h>
#include <string.h>

#include "abi/support/clock.h" /* the one clock: vyre__now_ns, deadlines */
#include "abi/support/log.h"
#include "vyre/vyre.h"

/* Debug tracing (VYRE_LOG=debug) through the one log; never the only
 * signal of a failure. */
#define vc_log(...) vyre__log("vyre-cuda", __VA_ARGS__)

/* pthread_mutex_init of the lock of `what`, made by the entry point
 * `call` (both name it in the message): VYRE_OK, or VYRE_OUT_OF_MEMORY
 * with err set. */
static inline vyre_status vc_mutex_init(pthread_mutex_t *m, const char *call, const char *what,
                                        vyre_error *err) {
  int rc = pthread_mutex_init(m, NULL);
  if (rc == 0) return VYRE_OK;
  return vyre_error_set(err, VYRE_OUT_OF_MEMORY, rc,
                        "%s: pthread_mutex_init of the %s lock failed (error %d). Fix: free host "
                        "memory or raise the process's limits",
                        call, what, rc);
}

/* a + b into *out; 0 on overflow. */
static inline int vc_add_u64(uint64_t a, uint64_t b, uint64_t *out) {
  if (a > UINT64_MAX - b) return 0;
  *out = a + b;
  return 1;
}

/* A finaliser that spreads every input bit over the word (MurmurHash3's). */
static inline uint64_t vc_mix64(uint64_t h) {
  h ^= h >> 33;
  h *= 0xff51afd7ed558ccdull;
  h ^= h >> 33;
  h *= 0xc4ceb9fe1a85ec53ull;
  h ^= h >> 33;
  return h;
}

/*
 * A fast 64-bit hash of size bytes (several GB/s: two multiply-xor lanes
 * over 8-byte words), for cache keys confirmed by comparing the bytes and
 * for detecting torn or damaged files.  Not a content hash: anyone can
 * make collisions, so never the only proof that two inputs are equal.
 * Every step is a bijection of the state, so one changed word always
 * changes the result.
 */
static inline uint64_t vc_hash64(const void *data, uint64_t size, uint64_t seed) {
  const uint8_t *b = data;
  uint64_t h = 0x9e3779b97f4a7c15ull ^ seed ^ size, a = 0x2545f4914f6cdd1dull, w;
  uint64_t i = 0;
  for (; i + 16 <= size; i += 16) {
    memcpy(&w, b + i, 8);
    h = (h ^ w) * 0x9e3779b97f4a7c15ull;
    memcpy(&w, b + i + 8, 8);
    a = (a ^ w) * 0xc2b2ae3d27d4eb4full;
  }
  for (; i < size; i++) h = (h ^ b[i]) * 0x100000001b3ull;
  return vc_mix64(h ^ vc_mix64(a));
}

#endif /* VYRE_PLUGIN_CUDA_UTIL_H */
