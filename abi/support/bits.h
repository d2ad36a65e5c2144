/* bits.h -- the bits of an f32 or f64 and back (through memcpy, which the compiler folds; no aliasing). */
#ifndef VYRE_SUPPORT_BITS_H
#define VYRE_SUPPORT_BITS_H

#include <stdint.h>
#include <string.h>

static inline uint32_t vyre__f32_bits(float f) {
  uint32_t u;
  memcpy(&u, &f, sizeof u);
  return u;
}

static inline float vyre__f32_from_bits(uint32_t u) {
  float f;
  memcpy(&f, &u, sizeof f);
  return f;
}

static inline uint64_t vyre__f64_bits(double d) {
  uint64_t u;
  memcpy(&u, &d, sizeof u);
  return u;
}

static inline double vyre__f64_from_bits(uint64_t u) {
  double d;
  memcpy(&d, &u, sizeof d);
  return d;
}

#endif /* VYRE_SUPPORT_BITS_H */
