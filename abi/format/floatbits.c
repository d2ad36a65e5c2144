/* floatbits.c -- f32 canonical form and exact f16/bf16 conversions, bit by bit (no FPU modes involved). */
#include <string.h>

#include "vyre/vyre_support.h"

uint32_t vyre_f32_canonical_bits(uint32_t bits) {
  uint32_t exp = (bits >> 23) & 0xffu, man = bits & 0x7fffffu;
  if (exp == 0xffu && man) return VYRE_F32_CANONICAL_NAN;
  if (exp == 0 && man) return bits & 0x80000000u;
  return bits;
}

float vyre_f32_canonical(float x) {
  uint32_t b;
  memcpy(&b, &x, 4);
  b = vyre_f32_canonical_bits(b);
  memcpy(&x, &b, 4);
  return x;
}

/* Round-to-nearest-even f32 -> IEEE binary16, subnormal results kept. */
uint16_t vyre_f32_to_f16(uint32_t bits) {
  uint32_t sign = (bits >> 16) & 0x8000u;
  uint32_t exp = (bits >> 23) & 0xffu, man = bits & 0x7fffffu;
  if (exp == 0xffu) return (uint16_t)(man ? VYRE_F16_CANONICAL_NAN : (sign | 0x7c00u));
  int32_t e = (int32_t)exp - 127 + 15;
  if (e >= 31) return (uint16_t)(sign | 0x7c00u);
  if (e <= 0) {
    /* Subnormal or zero in f16: shift the full significand. */
    if (e < -10) return (uint16_t)sign;
    uint32_t m = man | 0x800000u;
    uint32_t shift = (uint32_t)(14 - e);
    uint32_t h = m >> shift;
    uint32_t rem = m & ((1u << shift) - 1u), half = 1u << (shift - 1u);
    if (rem > half || (rem == half && (h & 1u))) h++;
    return (uint16_t)(sign | h);
  }
  uint32_t h = ((uint32_t)e << 10) | (man >> 13);
  uint32_t rem = man & 0x1fffu;
  if (rem > 0x1000u || (rem == 0x1000u && (h & 1u))) h++; /* may carry into inf: correct */
  return (uint16_t)(sign | h);
}

uint16_t vyre_f32_to_bf16(uint32_t bits) {
  if ((bits & 0x7f800000u) == 0x7f800000u && (bits & 0x7fffffu))
    return (uint16_t)VYRE_BF16_CANONICAL_NAN;
  uint32_t lsb = (bits >> 16) & 1u;
  return (uint16_t)((bits + 0x7fffu + lsb) >> 16);
}

uint32_t vyre_f16_to_f32(uint16_t h) {
  uint32_t sign = (uint32_t)(h & 0x8000u) << 16;
  uint32_t exp = (h >> 10) & 0x1fu, man = h & 0x3ffu;
  if (exp == 0x1fu) return sign | 0x7f800000u | (man << 13);
  if (exp == 0) {
    if (!man) return sign;
    /* Normalise the f16 subnormal: it is a normal f32. */
    int32_t e = -14;
    while (!(man & 0x400u)) {
      man <<= 1;
      e--;
    }
    man &= 0x3ffu;
    return sign | (uint32_t)(e + 127) << 23 | (man << 13);
  }
  return sign | (exp - 15u + 127u) << 23 | (man << 13);
}

uint32_t vyre_bf16_to_f32(uint16_t h) { return (uint32_t)h << 16; }
