/* literal.c -- the typed literals of case files: integers (decimal, 0x hex, max/min), floats (decimal, 0x bits, nan/inf), bools; and the unsigned numbers of directives. */
#include <ctype.h>
#include <errno.h>
#include <locale.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"
#include "abi/support/bits.h"

void cf_put_le(uint8_t *out, uint64_t v, uint32_t n) {
  for (uint32_t i = 0; i < n; i++) out[i] = (uint8_t)(v >> (8 * i));
}

int cf_word_is(const char *w, size_t len, const char *lit) {
  return strlen(lit) == len && strncmp(w, lit, len) == 0;
}

/* A C-locale strtof on a bounded word. */
static int parse_f32_decimal(const char *w, size_t len, float *out) {
  char tmp[128];
  if (len == 0 || len >= sizeof tmp) return -1;
  memcpy(tmp, w, len);
  tmp[len] = '\0';
  locale_t c = newlocale(LC_NUMERIC_MASK, "C", (locale_t)0);
  if (!c) return -1;
  char *end = NULL;
  errno = 0;
  float f = strtof_l(tmp, &end, c);
  freelocale(c);
  if (end != tmp + len) return -1;
  *out = f;
  return 0;
}

static int parse_f32_bits(const char *w, size_t len, uint32_t *bits) {
  if (cf_word_is(w, len, "nan")) {
    *bits = VYRE_F32_CANONICAL_NAN;
    return 0;
  }
  if (cf_word_is(w, len, "-nan")) {
    *bits = 0xffc00000u;
    return 0;
  }
  if (cf_word_is(w, len, "inf") || cf_word_is(w, len, "+inf")) {
    *bits = 0x7f800000u;
    return 0;
  }
  if (cf_word_is(w, len, "-inf")) {
    *bits = 0xff800000u;
    return 0;
  }
  /* Raw bits: 0x without a binary exponent. */
  if (len > 2 && w[0] == '0' && (w[1] == 'x' || w[1] == 'X') && !memchr(w, 'p', len) &&
      !memchr(w, 'P', len) && len <= 10) {
    uint64_t v = 0;
    for (size_t i = 2; i < len; i++) {
      int c = tolower((unsigned char)w[i]);
      if (!isxdigit(c)) return -1;
      v = v * 16 + (uint64_t)(isdigit(c) ? c - '0' : c - 'a' + 10);
    }
    *bits = (uint32_t)v;
    return 0;
  }
  float f;
  if (parse_f32_decimal(w, len, &f) != 0) return -1;
  memcpy(bits, &f, 4);
  return 0;
}

/* Integers: decimal (signed allowed), 0x hex, or max/min of the type. */
static int parse_int(const char *w, size_t len, uint32_t bits, int is_signed, uint64_t *out,
                     char *why, size_t why_size) {
  uint64_t mask = bits == 64 ? UINT64_MAX : ((1ull << bits) - 1);
  if (cf_word_is(w, len, "max")) {
    *out = is_signed ? mask >> 1 : mask;
    return 0;
  }
  if (cf_word_is(w, len, "min")) {
    *out = is_signed ? (1ull << (bits - 1)) : 0;
    return 0;
  }
  if (len == 0) return -1;
  int neg = 0;
  size_t i = 0;
  if (w[0] == '-' || w[0] == '+') {
    neg = w[0] == '-';
    i = 1;
  }
  uint64_t v = 0;
  int hex = len > i + 2 && w[i] == '0' && (w[i + 1] == 'x' || w[i + 1] == 'X');
  if (hex) i += 2;
  if (i >= len) return -1;
  for (; i < len; i++) {
    int c = tolower((unsigned char)w[i]);
    uint64_t d;
    if (hex && isxdigit(c)) d = (uint64_t)(isdigit(c) ? c - '0' : c - 'a' + 10);
    else if (!hex && isdigit(c)) d = (uint64_t)(c - '0');
    else return -1;
    uint64_t base = hex ? 16 : 10;
    if (v > (UINT64_MAX - d) / base) {
      snprintf(why, why_size, "does not fit %u bits", bits);
      return -1;
    }
    v = v * base + d;
  }
  if (hex && !neg) {
    if (v & ~mask) {
      snprintf(why, why_size, "has more than %u bits", bits);
      return -1;
    }
    *out = v;
    return 0;
  }
  /* Decimal: the value must lie in [signed min, unsigned max]. */
  uint64_t lim_neg = 1ull << (bits - 1);
  if (neg) {
    if (v > lim_neg) {
      snprintf(why, why_size, "is below the %u-bit minimum", bits);
      return -1;
    }
    *out = (0 - v) & mask;
    return 0;
  }
  if (v > mask) {
    snprintf(why, why_size, "is above the %u-bit maximum", bits);
    return -1;
  }
  *out = v;
  return 0;
}

int cf_parse_literal(uint32_t type, const char *w, size_t len, uint8_t *out, char *why,
                     size_t why_size) {
  why[0] = '\0';
  uint64_t v = 0;
  uint32_t bits32;
  switch (type) {
  case VYRE_T_BOOL:
    if (cf_word_is(w, len, "true")) v = 1;
    else if (cf_word_is(w, len, "false")) v = 0;
    else if (parse_int(w, len, 32, 0, &v, why, why_size) != 0) goto bad;
    cf_put_le(out, v, 4);
    return 0;
  case VYRE_T_U8: case VYRE_T_U16: case VYRE_T_U32: case VYRE_T_U64:
  case VYRE_T_I8: case VYRE_T_I16: case VYRE_T_I32: case VYRE_T_I64: {
    uint32_t size = vyre_type_size(type);
    int sgn = type >= VYRE_T_I8 && type <= VYRE_T_I64;
    if (parse_int(w, len, size * 8, sgn, &v, why, why_size) != 0) goto bad;
    cf_put_le(out, v, size);
    return 0;
  }
  case VYRE_T_F32:
    if (parse_f32_bits(w, len, &bits32) != 0) goto bad;
    cf_put_le(out, bits32, 4);
    return 0;
  case VYRE_T_F16:
  case VYRE_T_BF16: {
    /* Raw 16-bit patterns as 0x hex; anything else is read as f32 first. */
    if (len > 2 && len <= 6 && w[0] == '0' && (w[1] == 'x' || w[1] == 'X')) {
      if (parse_int(w, len, 16, 0, &v, why, why_size) != 0) goto bad;
      cf_put_le(out, v, 2);
      return 0;
    }
    if (parse_f32_bits(w, len, &bits32) != 0) goto bad;
    uint16_t h = type == VYRE_T_F16 ? vyre_f32_to_f16(bits32) : vyre_f32_to_bf16(bits32);
    cf_put_le(out, h, 2);
    return 0;
  }
  default:
    snprintf(why, why_size, "type %s has no literals", vyre_type_name(type));
    return -1;
  }
bad:
  if (!why[0]) snprintf(why, why_size, "is not a %s literal", vyre_type_name(type));
  return -1;
}

int cf_tok_u32(const cf_tok *t, uint32_t *out) {
  uint64_t v;
  char why[64];
  if (parse_int(t->s, t->n, 32, 0, &v, why, sizeof why) != 0) return -1;
  if (t->s[0] == '-') return -1;
  *out = (uint32_t)v;
  return 0;
}

int cf_tok_u64(const cf_tok *t, uint64_t *out) {
  char why[64];
  if (t->s[0] == '-') return -1;
  return parse_int(t->s, t->n, 64, 0, out, why, sizeof why);
}

