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

static int word_is(const char *s, size_t len, const char *w) {
  return len == strlen(w) && memcmp(s, w, len) == 0;
}

/* The facts of a float type its messages quote. */
typedef struct float_kind {
  uint32_t type;
  const char *name;      /* "f32" */
  const char *an;        /* its article: "an f32", "a bf16" */
  unsigned bits;         /* its width */
  const char *max;       /* the largest finite value */
  const char *one_half;       /* the bits of 1.5, for the Fix of a bad literal */
  const char *minus_one_half; /* the bits of -1.5 */
} float_kind;

static const float_kind f32_kind = {VYRE_T_F32, "f32", "an", 32, "3.4028235e38", "0x3fc00000",
                                    "0xbfc00000"};
static const float_kind f16_kind = {VYRE_T_F16, "f16", "an", 16, "65504", "0x3e00", "0xbe00"};
static const float_kind bf16_kind = {VYRE_T_BF16, "bf16", "a",     16,
                                     "3.3895314e38", "0x3fc0", "0xbfc0"};

/* Read a decimal or hex float with strtof, rounded to the kind's type; -1
 * with msg on anything that is not an exact, finite value of it (and, for
 * a constant, canonical). */
static int parse_float_text(const char *s, size_t len, const float_kind *k, int data,
                            uint64_t *bits, char *msg, size_t ms) {
  char tmp[512];
  if (len >= sizeof tmp) {
    snprintf(msg, ms, "the %s literal is %zu characters long. Fix: write at most 511 (9 "
                      "significant digits are always enough)", k->name, len);
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
    snprintf(msg, ms, "'%s' is not %s %s literal. Fix: write a decimal (1.5, -2e-3), a hex "
                      "float (0x1.8p3), bits (%s), nan, inf or -inf", tmp, k->an, k->name,
             k->one_half);
    return -1;
  }
  uint32_t b = vyre__f32_bits(f);
  uint64_t v = f32_as_float(k->type, b);
  uint32_t back = float_as_f32(k->type, v);
  if ((back & 0x7fffffffu) == 0x7f800000u) {
    snprintf(msg, ms, "%s literal %s is beyond the largest %s (%s). Fix: write inf "
                      "or -inf if infinity is meant", k->name, tmp, k->name, k->max);
    return -1;
  }
  if (!data && (b & 0x7f800000u) == 0 && (b & 0x7fffffu)) {
    snprintf(msg, ms, "f32 literal %s is subnormal, and f32 values are canonical (subnormals "
                      "flush to zero). Fix: write 0.0 (or -0.0), or a value of magnitude at "
                      "least 1.1754944e-38", tmp);
    return -1;
  }
  if ((back & 0x7fffffffu) == 0 && (range || (b & 0x7fffffffu))) {
    snprintf(msg, ms, "%s literal %s underflows to zero. Fix: write 0.0 (or -0.0) if zero is "
                      "meant", k->name, tmp);
    return -1;
  }
  *bits = v;
  return 0;
}

/* Bits written in hex: 0x and at most the type's width; a constant's
 * f32 bits must be canonical. */
static int parse_float_bits(const char *s, size_t len, const float_kind *k, int data,
                            uint64_t *bits, char *msg, size_t ms) {
  uint64_t v;
  if (parse_uint(s, len, k->bits == 32 ? 0xffffffffu : 0xffffu, &v)) {
    snprintf(msg, ms, "'%.*s' is not %u bits of hex. Fix: %s bits are %s..%s",
             (int)(len > 64 ? 64 : len), s, k->bits, k->name,
             k->bits == 32 ? "0x00000000" : "0x0000", k->bits == 32 ? "0xffffffff" : "0xffff");
    return -1;
  }
  if (!data && vyre_f32_canonical_bits((uint32_t)v) != v) {
    snprintf(msg, ms, "f32 bits 0x%08x are not canonical (%s). Fix: write %s", (unsigned)v,
             (v & 0x7f800000u) == 0x7f800000u ? "the only NaN is 0x7fc00000"
                                              : "subnormals flush to zero",
             (v & 0x7f800000u) == 0x7f800000u ? "nan" : (v >> 31 ? "-0.0" : "0.0"));
    return -1;
  }
  *bits = v;
  return 0;
}

static int parse_float(const char *s, size_t len, const float_kind *k, int data, uint64_t *bits,
                       char *msg, size_t ms) {
  uint32_t sign = len && s[0] == '-' ? 0x80000000u : 0;
  if (word_is(s, len, "nan") || (data && word_is(s, len, "+nan"))) {
    *bits = f32_as_float(k->type, VYRE_F32_CANONICAL_NAN);
    return 0;
  }
  if (word_is(s, len, "inf") || word_is(s, len, "+inf") || word_is(s, len, "-inf")) {
    *bits = f32_as_float(k->type, sign | 0x7f800000u);
    return 0;
  }
  if (word_is(s, len, "-nan") || word_is(s, len, "+nan")) {
    if (data) { /* input data may hold the negative quiet NaN */
      *bits = f32_as_float(k->type, sign | VYRE_F32_CANONICAL_NAN) | (k->bits == 16 ? 0x8000u : 0);
      return 0;
    }
    snprintf(msg, ms, "'%.4s': f32 has one canonical NaN (0x7fc00000). Fix: write nan", s);
    return -1;
  }
  size_t at = len && (s[0] == '-' || s[0] == '+') ? 1 : 0;
  if (is_hex_prefix(s + at, len - at)) {
    int has_p = memchr(s, 'p', len) || memchr(s, 'P', len);
    if (has_p) return parse_float_text(s, len, k, data, bits, msg, ms);
    if (at || memchr(s, '.', len)) {
      snprintf(msg, ms, "'%.*s' is neither %s bits nor a hex float. Fix: a hex float needs a p "
                        "exponent (-0x1.8p3); bits are unsigned hex (%s)",
               (int)(len > 64 ? 64 : len), s, k->name, k->minus_one_half);
      return -1;
    }
    return parse_float_bits(s, len, k, data, bits, msg, ms);
  }
  /* Plain decimal only: strtof would also take "infinity" or "nan(...)". */
  int digits = 0;
  for (size_t i = 0; i < len; i++) {
    char c = s[i];
    if (c >= '0' && c <= '9') digits = 1;
    else if (c != '.' && c != 'e' && c != 'E' && c != '+' && c != '-') digits = -100;
  }
  if (digits <= 0) {
    snprintf(msg, ms, "'%.*s' is not %s %s literal. Fix: write a decimal (1.5, -2e-3), a hex "
                      "float (0x1.8p3), bits (%s), nan, inf or -inf",
             (int)(len > 64 ? 64 : len), s, k->an, k->name, k->one_half);
    return -1;
  }
  return parse_float_text(s, len, k, data, bits, msg, ms);
}

/* true, false, 1, 0; input data may hold any 32-bit word (nonzero is
 * true), written as a u32 literal (parse_unsigned, below). */
static int parse_unsigned(const char *s, size_t len, uint32_t type, int data, uint64_t *bits,
                          char *msg, size_t ms);
static int parse_bool(const char *s, size_t len, int data, uint64_t *bits, char *msg,
                      size_t ms) {
  uint64_t v;
  if (word_is(s, len, "true") || word_is(s, len, "1")) *bits = 1;
  else if (word_is(s, len, "false") || word_is(s, len, "0")) *bits = 0;
  else if (data && parse_unsigned(s, len, VYRE_T_U32, 1, &v, msg, ms) == 0) *bits = v;
  else {
    snprintf(msg, ms, "'%.*s' is not a bool literal. Fix: write true or false%s",
             (int)(len > 64 ? 64 : len), s, data ? " (or the 32-bit word, 0..0xffffffff)" : "");
    return -1;
  }
  return 0;
}

/* Input data only: `max` and `min` of an integer type. */
static int parse_extreme(const char *s, size_t len, uint32_t type, uint64_t *bits) {
  unsigned width = 8 * vyre_type_size(type);
  uint64_t mask = width == 64 ? UINT64_MAX : (1ull << width) - 1;
  int is_signed = type == VYRE_T_I8 || type == VYRE_T_I16 || type == VYRE_T_I32 ||
                  type == VYRE_T_I64;
  if (word_is(s, len, "max")) *bits = is_signed ? mask >> 1 : mask;
  else if (word_is(s, len, "min")) *bits = is_signed ? 1ull << (width - 1) : 0;
  else return -1;
  return 0;
}

/* u8 u16 u32 u64: decimal or 0x hex, no sign; input data also takes
 * max, min and a negative decimal down to the signed minimum of the
 * width, stored as its two's complement (-1 is all ones). */
static int parse_unsigned(const char *s, size_t len, uint32_t type, int data, uint64_t *bits,
                          char *msg, size_t ms) {
  const char *tn = vyre_type_name(type);
  int shown = (int)(len > 64 ? 64 : len);
  uint32_t size = vyre_type_size(type);
  uint64_t max = size == 8 ? UINT64_MAX : (1ull << (8 * size)) - 1, v;
  if (data && parse_extreme(s, len, type, bits) == 0) return 0;
  if (data && len > 1 && (s[0] == '-' || s[0] == '+') && !is_hex_prefix(s + 1, len - 1)) {
    uint64_t low = 1ull << (8 * size - 1); /* the signed minimum's magnitude */
    int r = parse_uint(s + 1, len - 1, s[0] == '-' ? low : max, &v);
    if (r == -2) {
      snprintf(msg, ms, "'%.*s' is out of range for %s (-%llu..%llu, negatives stored as two's "
                        "complement). Fix: write a value in that range", shown, s, tn,
               (unsigned long long)low, (unsigned long long)max);
      return -1;
    }
    if (r == 0) {
      *bits = (s[0] == '-' ? (uint64_t)0 - v : v) & max;
      return 0;
    }
  }
  if (len && (s[0] == '-' || (data && s[0] == '+'))) {
    snprintf(msg, ms, "%s literal '%.*s' is %s. Fix: %s", tn, shown, s,
             data ? "signed hex" : "negative",
             data ? "write the bits in hex without a sign (0x...)"
                  : "use an i32/i64 constant, or write the bits in hex (0x...)");
    return -1;
  }
  int r = parse_uint(s, len, max, &v);
  if (r == -2) {
    const char *fix = data                 ? "write a smaller value"
                      : type == VYRE_T_U32 ? "use u64 or a smaller value"
                                           : "use wrapping arithmetic or a smaller value";
    snprintf(msg, ms, "'%.*s' is out of range for %s (0..%llu). Fix: %s", shown, s, tn,
             (unsigned long long)max, fix);
    return -1;
  }
  if (r) {
    snprintf(msg, ms, "'%.*s' is not a %s literal. Fix: write a decimal (42) or hex (0x2a) "
                      "number%s", shown, s, tn, data ? ", max or min" : "");
    return -1;
  }
  *bits = v;
  return 0;
}

/* i8 i16 i32 i64: a signed decimal, or the two's complement bits in hex. */
static int parse_signed(const char *s, size_t len, uint32_t type, int data, uint64_t *bits,
                        char *msg, size_t ms) {
  const char *tn = vyre_type_name(type);
  int shown = (int)(len > 64 ? 64 : len);
  unsigned width = 8 * vyre_type_size(type);
  uint64_t mask = width == 64 ? UINT64_MAX : (1ull << width) - 1, v;
  if (data && parse_extreme(s, len, type, bits) == 0) return 0;
  if (is_hex_prefix(s, len)) { /* the two's complement bits */
    if (parse_uint(s, len, mask, &v)) {
      snprintf(msg, ms, "'%.*s' is not %u bits of hex. Fix: write at most %u hex digits", shown,
               s, width, width / 4);
      return -1;
    }
    *bits = v;
    return 0;
  }
  int neg = len && s[0] == '-';
  size_t at = len && (s[0] == '-' || s[0] == '+') ? 1 : 0;
  uint64_t limit = neg ? 1ull << (width - 1) : (1ull << (width - 1)) - 1;
  if (at == len || is_hex_prefix(s + at, len - at)) {
    snprintf(msg, ms, "'%.*s' is not a %s literal. Fix: write a signed decimal (-42) or the "
                      "bits in hex without a sign (0xffffffd6)", shown, s, tn);
    return -1;
  }
  int r = parse_uint(s + at, len - at, limit, &v);
  if (r == -2) {
    char range[64];
    long long top = (long long)((1ull << (width - 1)) - 1);
    snprintf(range, sizeof range, "a value in %lld..%lld", -top - 1, top);
    snprintf(msg, ms, "'%.*s' is out of range for %s. Fix: %s %s", shown, s, tn,
             data ? "write" : "use",
             data ? range : width == 64 ? "a value in -2^63..2^63-1" : "i64");
    return -1;
  }
  if (r) {
    snprintf(msg, ms, "'%.*s' is not a %s literal. Fix: write a signed decimal (-42) or hex "
                      "bits (0x2a)%s", shown, s, tn, data ? ", max or min" : "");
    return -1;
  }
  v = neg ? (uint64_t)0 - v : v;
  *bits = v & mask;
  return 0;
}

/* Contract in literal.h. */
int vyre__text_parse_literal(const char *s, size_t len, uint32_t type, uint32_t use,
                             uint64_t *bits, char *msg, size_t ms) {
  int data = use == VYRE__LITERAL_DATA;
  char types[96];
  if (!data && !vyre_type_is_value(type)) {
    snprintf(msg, ms, "%s is not a value type. Fix: constants are %s", vyre_type_name(type),
             vyre_type_list(VYRE_TM_VALUE, " or ", types, sizeof types));
    return -1;
  }
  switch (type) {
  case VYRE_T_BOOL: return parse_bool(s, len, data, bits, msg, ms);
  case VYRE_T_U8:
  case VYRE_T_U16:
  case VYRE_T_U32:
  case VYRE_T_U64: return parse_unsigned(s, len, type, data, bits, msg, ms);
  case VYRE_T_I8:
  case VYRE_T_I16:
  case VYRE_T_I32:
  case VYRE_T_I64: return parse_signed(s, len, type, data, bits, msg, ms);
  case VYRE_T_F32: return parse_float(s, len, &f32_kind, data, bits, msg, ms);
  case VYRE_T_F16: return parse_float(s, len, &f16_kind, data, bits, msg, ms);
  case VYRE_T_BF16: return parse_float(s, len, &bf16_kind, data, bits, msg, ms);
  default:
    snprintf(msg, ms, "%s is not a storage type. Fix: literals are of %s", vyre_type_name(type),
             vyre_type_list(VYRE_TM_STORAGE, " or ", types, sizeof types));
    return -1;
  }
}

/* Contract in vyre_text.h. */
vyre_status vyre_text_parse_literal(const char *text, size_t length, uint32_t type, uint32_t use,
                                    uint64_t *bits, vyre_error *err) {
  if (!bits || (!text && length))
    return vyre_error_set(err, VYRE_INVALID_ARGUMENT, 0, "vyre_text_parse_literal: %s is NULL. "
                          "Fix: pass the literal's text and a place for its bits",
                          bits ? "text" : "bits");
  if (use != VYRE_TEXT_LITERAL_CONST && use != VYRE_TEXT_LITERAL_DATA)
    return vyre_error_set(err, VYRE_INVALID_ARGUMENT, 0, "vyre_text_parse_literal: use %u is "
                          "unknown. Fix: pass VYRE_TEXT_LITERAL_CONST or VYRE_TEXT_LITERAL_DATA",
                          (unsigned)use);
  char msg[VYRE_ERROR_MESSAGE_MAX];
  if (vyre__text_parse_literal(text ? text : "", length, type, use, bits, msg, sizeof msg) != 0)
    return vyre_error_set(err, VYRE_INVALID_ARGUMENT, 0, "%s", msg);
  return VYRE_OK;
}

/* Contract in vyre_text.h. */
size_t vyre_text_format_float(char *out, size_t size, uint32_t type, uint64_t bits,
                              uint32_t flags) {
  char text[VYRE__TEXT_FLOAT_MAX] = "";
  size_t n = 0;
  if (type == VYRE_T_F32 || type == VYRE_T_F16 || type == VYRE_T_BF16)
    n = vyre__text_format_float(text, type, bits & (type == VYRE_T_F32 ? 0xffffffffu : 0xffffu),
                                flags & VYRE_TEXT_FLOAT_POINT);
  if (out && size) {
    size_t put = n < size ? n : size - 1;
    memcpy(out, text, put);
    out[put] = '\0';
  }
  return n;
}
