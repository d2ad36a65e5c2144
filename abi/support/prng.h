/* prng.h -- splitmix64, the one pseudo-random generator of the tree (generated programs, inputs, fuzzing, the CLI's --random). */
#ifndef VYRE_SUPPORT_PRNG_H
#define VYRE_SUPPORT_PRNG_H

#include <stdint.h>

/*
 * Advance *state and return its next 64 pseudo-random bits (splitmix64:
 * Steele, Lea and Flood, "Fast splittable pseudorandom number generators",
 * OOPSLA 2014).  Any state is valid, zero included; the same state gives
 * the same sequence on every machine.  Pure: one state per thread.
 */
static inline uint64_t vyre__splitmix64(uint64_t *state) {
  uint64_t z = (*state += 0x9e3779b97f4a7c15ull);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
  return z ^ (z >> 31);
}

#endif /* VYRE_SUPPORT_PRNG_H */
