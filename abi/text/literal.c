/* literal.c -- typed literals of the text form: the one grammar (literal.h) and the canonical spelling the disassembler writes. */
#include <errno.h>
#include <locale.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "literal.h"
#include "abi/support/bits.h"

/* Decimal floats are read and written in the "C" locale whatever the
 * host program chose with setlocale: "1.5" must mean the same text
 * everywhere.  uselocale is per thread, so this stays thread-safe. */
static pthread_once_t c_locale_once = PTHREAD_ONCE_INIT;
static locale_t c_locale;

static void make_c_locale(void) { c_locale = newlocale(LC_ALL_MASK, "C", (locale_t)0); }

static locale_t enter_c_locale(void) {
  pthread_once(&c_locale_once, make_c_locale);
  return c_locale ? uselocale(c_locale) : (locale_t)0;
}

static void leave_c_locale(locale_t old) {
  if (c_locale) uselocale(old);
}

/* The f32 value of a float of `type` (f32, f16, bf16) with bits `bits`. */
static uint32_t float_as_f32(uint32_t type, uint64_t bits) {
  if (type == VYRE_T_F16) return vyre_f16_to_f32((uint16_t)bits);
  if (type == VYRE_T_BF16) return vyre_bf16_to_f32((uint16_t)bits);
  return (uint32_t)bits;
}

/* An f32 as a float of `type`: round to nearest even (vyre_f32_to_f16/bf16). */
static uint64_t f32_as_float(uint32_t type, uint32_t f32) {
  if (type == VYRE_T_F16) return vyre_f32_to_f16(f32);
  if (type == VYRE_T_BF16) return vyre_f32_to_bf16(f32);
  return f32;
}

/* Contract in literal.h. */
size_t vyre__text_format_float(char out[VYRE__TEXT_FLOAT_MAX], uint32_t type, uint64_t bits,
                               uint32_t flags) {
  uint32_t f = float_as_f32(type, bits);
  if ((f & 0x7f800000u) == 0x7f800000u && (f & 0x7fffffu))
    return (size_t)snprintf(out, VYRE__TEXT_FLOAT_MAX, "nan");
  if ((f & 0x7fffffffu) == 0x7f800000u)
    return (size_t)snprintf(out, VYRE__TEXT_FLOAT_MAX, "%sinf", f >> 31 ? "-" : "");
  char sci[64], pos[64];
  double x = (double)vyre__f32_from_bits(f);
  uint64_t want = type == VYRE_T_F32 ? bits : f32_as_float(type, f);
  locale_t old = enter_c_locale();
  /* The fewest significant digits that read back (9 always do for f32,
   * and so for the narrower types). */
  int digits = 1;
  for (; digits < 9; digits++) {
    snprintf(sci, sizeof sci, "%.*e", digits - 1, x);
    if (f32_as_float(type, vyre__f32_bits(strtof(sci, NULL))) == want) break;
  }
  snprintf(sci, sizeof sci, "%.*e", digits - 1, x);
  /* The same digits in positional form where that is short (1e-5 up
   * to 1e16), else in scientific form. */
  int exp10 = atoi(strchr(sci, 'e') + 1);
  if (exp10 >= -5 && exp10 < 16)
    snprintf(pos, sizeof pos, "%.*f", digits - 1 - exp10 > 0 ? digits - 1 - exp10 : 0, x);
  else
    snprintf(pos, sizeof pos, "%s", sci);
  leave_c_locale(old);
  if ((flags & VYRE__TEXT_FLOAT_POINT) && !strpbrk(pos, ".e")) strcat(pos, ".0");
  return (size_t)snprintf(out, VYRE__TEXT_FLOAT_MAX, "%s", pos);
}

/* The shortest decimal that reads back to the same f32, always with a
 * '.' or an exponent so that it reads as a float. */
static void format_f32(strbuf *b, uint32_t bits) {
  char out[VYRE__TEXT_FLOAT_MAX];
  size_t n = vyre__text_format_float(out, VYRE_T_F32, bits, VYRE__TEXT_FLOAT_POINT);
  vyre__sb_append(b, out, n);
}

void vyre__text_format_const(strbuf *b, uint32_t type, uint64_t bits) {
  switch (type) {
  case VYRE_T_BOOL: vyre__sb_printf(b, "%s", bits ? "true" : "false"); break;
  case VYRE_T_U32: vyre__sb_printf(b, "%lu", (unsigned long)(uint32_t)bits); break;
  case VYRE_T_U64: vyre__sb_printf(b, "%llu", (unsigned long long)bits); break;
  case VYRE_T_I32: vyre__sb_printf(b, "%ld", (long)(int32_t)(uint32_t)bits); break;
  case VYRE_T_I64: vyre__sb_printf(b, "%lld", (long long)(int64_t)bits); break;
  case VYRE_T_F32: format_f32(b, (uint32_t)bits); break;
  default: vyre__sb_printf(b, "0x%llx", (unsigned long long)bits); break;
  }
}

static int hex_digit(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

/* 0 = ok, -1 = not a number, -2 = above max. */
static int parse_uint(const char *s, size_t len, uint64_t max, uint64_t *out) {
  uint64_t v = 0;
  int over = 0;
  if (len > 2 && s[0] == '0' && (s[1] == 'x' || s[1] == 'X')) {
    for (size_t i = 2; i < len; i++) {
      int d = hex_digit(s[i]);
      if (d < 0) return -1;
      if (v > (UINT64_MAX >> 4)) over = 1;
      v = v << 4 | (uint64_t)d;
    }
  } else {
    if (len == 0) return -1;
    for (size_t i = 0; i < len; i++) {
      if (s[i] < '0' || s[i] > '9') return -1;
      uint64_t d = (uint64_t)(s[i] - '0');
      if (v > (UINT64_MAX - d) / 10) over = 1;
      v = v * 10 + d;
    }
  }
  if (over || v > max) return -2;
  *out = v;
  return 0;
}

int vyre__text_parse_uint(const char *s, size_t len, uint64_t max, uint64_t *out) {
  return parse_uint(s, len, max, out) == 0 ? 0 : -1;
}

static int is_hex_prefix(const char *s, size_t len) {
  return len >= 2 && s[0] == '0' && (s[1] == 'x' || s[1] == 'X');
}

/* Read a decimal or hex float with strtof; -1 with msg on anything that
 * is not an exact, canonical, finite f32. */
static int parse_f32_text(const char *s, size_t len, uint64_t *bits, char *msg, size_t ms) {
  char tmp[512];
  if (len >= sizeof tmp) {
    snprintf(msg, ms, "the f32 literal is %zu characters long. Fix: write at most 511 (9 "
                      "significant digits are always enough)", len);
    return -1;
  }
  memcpy(tmp, s, len);
  tmp[len] = '\0';
  locale_t old = enter_c_locale();
  errno = 0;
  char *end = NULL;
  float f = strtof(tmp, &end);
  int range = errno == ERANGE;
  leave_c_locale(old);
  if (end != tmp + len) {
    snprintf(msg, ms, "'%s' is not an f32 literal. Fix: write a decimal (1.5, -2e-3), a hex "
                      "float (0x1.8p3), bits (0x3fc00000), nan, inf or -inf", tmp);
    return -1;
  }
  uint32_t b = vyre__f32_bits(f);
  if ((b & 0x7fffffffu) == 0x7f800000u) {
    snprintf(msg, ms, "f32 literal %s is beyond the largest f32 (3.4028235e38). Fix: write inf "
                      "or -inf if infinity is meant", tmp);
    return -1;
  }
  if ((b & 0x7f800000u) == 0 && (b & 0x7fffffu)) {
    snprintf(msg, ms, "f32 literal %s is subnormal, and f32 values are canonical (subnormals "
                      "flush to zero). Fix: write 0.0 (or -0.0), or a value of magnitude at "
                      "least 1.1754944e-38", tmp);
    return -1;
  }
  if ((b & 0x7fffffffu) == 0 && range) {
    snprintf(msg, ms, "f32 literal %s underflows to zero. Fix: write 0.0 (or -0.0) if zero is "
                      "meant", tmp);
    return -1;
  }
  *bits = b;
  return 0;
}

static int parse_f32(const char *s, size_t len, uint64_t *bits, char *msg, size_t ms) {
  if ((len == 3 && memcmp(s, "nan", 3) == 0)) {
    *bits = VYRE_F32_CANONICAL_NAN;
    return 0;
  }
  if ((len == 3 && memcmp(s, "inf", 3) == 0) || (len == 4 && memcmp(s, "+inf", 4) == 0)) {
    *bits = 0x7f800000u;
    return 0;
  }
  if (len == 4 && memcmp(s, "-inf", 4) == 0) {
    *bits = 0xff800000u;
    return 0;
  }
  if (len == 4 && (memcmp(s, "-nan", 4) == 0 || memcmp(s, "+nan", 4) == 0)) {
    snprintf(msg, ms, "'%.4s': f32 has one canonical NaN (0x7fc00000). Fix: write nan", s);
    return -1;
  }
  size_t at = len && (s[0] == '-' || s[0] == '+') ? 1 : 0;
  if (is_hex_prefix(s + at, len - at)) {
    int has_p = memchr(s, 'p', len) || memchr(s, 'P', len);
    if (has_p) return parse_f32_text(s, len, bits, msg, ms);
    if (at || memchr(s, '.', len)) {
      snprintf(msg, ms, "'%.*s' is neither f32 bits nor a hex float. Fix: a hex float needs a p "
                        "exponent (-0x1.8p3); bits are unsigned hex (0xbfc00000)",
               (int)(len > 64 ? 64 : len), s);
      return -1;
    }
    uint64_t v;
    if (parse_uint(s, len, 0xffffffffu, &v)) {
      snprintf(msg, ms, "'%.*s' is not 32 bits of hex. Fix: f32 bits are 0x00000000..0xffffffff",
               (int)(len > 64 ? 64 : len), s);
      return -1;
    }
    if (vyre_f32_canonical_bits((uint32_t)v) != v) {
      snprintf(msg, ms, "f32 bits 0x%08x are not canonical (%s). Fix: write %s", (unsigned)v,
               (v & 0x7f800000u) == 0x7f800000u ? "the only NaN is 0x7fc00000"
                                                : "subnormals flush to zero",
               (v & 0x7f800000u) == 0x7f800000u ? "nan" : (v >> 31 ? "-0.0" : "0.0"));
      return -1;
    }
    *bits = v;
    return 0;
  }
  /* Plain decimal only: strtof would also take "infinity" or "nan(...)". */
  int digits = 0;
  for (size_t i = 0; i < len; i++) {
    char c = s[i];
    if (c >= '0' && c <= '9') digits = 1;
    else if (c != '.' && c != 'e' && c != 'E' && c != '+' && c != '-') digits = -100;
  }
  if (digits <= 0) {
    snprintf(msg, ms, "'%.*s' is not an f32 literal. Fix: write a decimal (1.5, -2e-3), a hex "
                      "float (0x1.8p3), bits (0x3fc00000), nan, inf or -inf",
             (int)(len > 64 ? 64 : len), s);
    return -1;
  }
  return parse_f32_text(s, len, bits, msg, ms);
}

int vyre__text_parse_const(const char *s, size_t len, uint32_t type, uint64_t *bits, char *msg,
                     size_t ms) {
  const char *tn = vyre_type_name(type);
  int shown = (int)(len > 64 ? 64 : len);
  uint64_t v;
  switch (type) {
  case VYRE_T_BOOL:
    if ((len == 4 && memcmp(s, "true", 4) == 0) || (len == 1 && s[0] == '1')) *bits = 1;
    else if ((len == 5 && memcmp(s, "false", 5) == 0) || (len == 1 && s[0] == '0')) *bits = 0;
    else {
      snprintf(msg, ms, "'%.*s' is not a bool literal. Fix: write true or false", shown, s);
      return -1;
    }
    return 0;
  case VYRE_T_U32:
  case VYRE_T_U64: {
    uint64_t max = type == VYRE_T_U32 ? 0xffffffffull : UINT64_MAX;
    if (len && s[0] == '-') {
      snprintf(msg, ms, "%s literal '%.*s' is negative. Fix: use an i32/i64 constant, or write "
                        "the bits in hex (0x...)", tn, shown, s);
      return -1;
    }
    int r = parse_uint(s, len, max, &v);
    if (r == -2) {
      snprintf(msg, ms, "'%.*s' is out of range for %s (0..%llu). Fix: use %s or a smaller "
                        "value", shown, s, tn, (unsigned long long)max,
               type == VYRE_T_U32 ? "u64" : "wrapping arithmetic");
      return -1;
    }
    if (r) {
      snprintf(msg, ms, "'%.*s' is not a %s literal. Fix: write a decimal (42) or hex (0x2a) "
                        "number", shown, s, tn);
      return -1;
    }
    *bits = v;
    return 0;
  }
  case VYRE_T_I32:
  case VYRE_T_I64: {
    int wide = type == VYRE_T_I64;
    uint64_t umax = wide ? UINT64_MAX : 0xffffffffull;
    if (is_hex_prefix(s, len)) { /* the two's complement bits */
      int r = parse_uint(s, len, umax, &v);
      if (r) {
        snprintf(msg, ms, "'%.*s' is not %d bits of hex. Fix: write at most %d hex digits", shown,
                 s, wide ? 64 : 32, wide ? 16 : 8);
        return -1;
      }
      *bits = v;
      return 0;
    }
    int neg = len && s[0] == '-';
    size_t at = len && (s[0] == '-' || s[0] == '+') ? 1 : 0;
    uint64_t limit = wide ? (neg ? (1ull << 63) : (1ull << 63) - 1)
                          : (neg ? (1ull << 31) : (1ull << 31) - 1);
    if (at == len || is_hex_prefix(s + at, len - at)) {
      snprintf(msg, ms, "'%.*s' is not a %s literal. Fix: write a signed decimal (-42) or the "
                        "bits in hex without a sign (0xffffffd6)", shown, s, tn);
      return -1;
    }
    int r = parse_uint(s + at, len - at, limit, &v);
    if (r == -2) {
      snprintf(msg, ms, "'%.*s' is out of range for %s. Fix: use %s", shown, s, tn,
               wide ? "a value in -2^63..2^63-1" : "i64");
      return -1;
    }
    if (r) {
      snprintf(msg, ms, "'%.*s' is not a %s literal. Fix: write a signed decimal (-42) or hex "
                        "bits (0x2a)", shown, s, tn);
      return -1;
    }
    v = neg ? (uint64_t)0 - v : v;
    *bits = wide ? v : (uint32_t)v;
    return 0;
  }
  case VYRE_T_F32: return parse_f32(s, len, bits, msg, ms);
  default: {
    char values[64];
    snprintf(msg, ms, "%s is not a value type. Fix: constants are %s", tn,
             vyre_type_list(VYRE_TM_VALUE, " or ", values, sizeof values));
    return -1;
  }
  }
}
