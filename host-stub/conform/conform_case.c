/* conform_case.c -- conformance case files: `;@` directives over program text, literal and seeded inputs, the corpus listing and hash, what a case needs. */
#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <locale.h>
#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "abi/support/prng.h"
#include "conform.h"
#include "abi/support/sized.h"
#include "vyre/vyre_text.h"
#include "abi/support/bits.h"

/* Longest generated input: 64 Mi elements keeps a typo from eating memory. */
#define CF_MAX_GENERATED (1u << 26)
/* All the data of one case (inputs and expected outputs, generated or
 * written out) at most: a 100-byte capsule must not ask for 32 GiB
 * (64 buffers of 64 Mi u64 each).  docs/conformance.md, "Files the
 * harness reads". */
#define CF_MAX_CASE_DATA ((uint64_t)256 << 20)

/* ------------------------------------------------------------------ */
/* Literals                                                            */
/* ------------------------------------------------------------------ */

static void put_le(uint8_t *out, uint64_t v, uint32_t n) {
  for (uint32_t i = 0; i < n; i++) out[i] = (uint8_t)(v >> (8 * i));
}

static int word_is(const char *w, size_t len, const char *lit) {
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
  if (word_is(w, len, "nan")) {
    *bits = VYRE_F32_CANONICAL_NAN;
    return 0;
  }
  if (word_is(w, len, "-nan")) {
    *bits = 0xffc00000u;
    return 0;
  }
  if (word_is(w, len, "inf") || word_is(w, len, "+inf")) {
    *bits = 0x7f800000u;
    return 0;
  }
  if (word_is(w, len, "-inf")) {
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
  if (word_is(w, len, "max")) {
    *out = is_signed ? mask >> 1 : mask;
    return 0;
  }
  if (word_is(w, len, "min")) {
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
    if (word_is(w, len, "true")) v = 1;
    else if (word_is(w, len, "false")) v = 0;
    else if (parse_int(w, len, 32, 0, &v, why, why_size) != 0) goto bad;
    put_le(out, v, 4);
    return 0;
  case VYRE_T_U8: case VYRE_T_U16: case VYRE_T_U32: case VYRE_T_U64:
  case VYRE_T_I8: case VYRE_T_I16: case VYRE_T_I32: case VYRE_T_I64: {
    uint32_t size = vyre_type_size(type);
    int sgn = type >= VYRE_T_I8 && type <= VYRE_T_I64;
    if (parse_int(w, len, size * 8, sgn, &v, why, why_size) != 0) goto bad;
    put_le(out, v, size);
    return 0;
  }
  case VYRE_T_F32:
    if (parse_f32_bits(w, len, &bits32) != 0) goto bad;
    put_le(out, bits32, 4);
    return 0;
  case VYRE_T_F16:
  case VYRE_T_BF16: {
    /* Raw 16-bit patterns as 0x hex; anything else is read as f32 first. */
    if (len > 2 && len <= 6 && w[0] == '0' && (w[1] == 'x' || w[1] == 'X')) {
      if (parse_int(w, len, 16, 0, &v, why, why_size) != 0) goto bad;
      put_le(out, v, 2);
      return 0;
    }
    if (parse_f32_bits(w, len, &bits32) != 0) goto bad;
    uint16_t h = type == VYRE_T_F16 ? vyre_f32_to_f16(bits32) : vyre_f32_to_bf16(bits32);
    put_le(out, h, 2);
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

/* ------------------------------------------------------------------ */
/* Seeded values                                                       */
/* ------------------------------------------------------------------ */

static const uint32_t f32_specials[] = {
    0x00000000u, 0x80000000u, 0x3f800000u, 0xbf800000u, 0x7f800000u, 0xff800000u,
    0x7fc00000u, 0xffc00000u, 0x7f800001u, 0x7fbfffffu, 0xffffffffu, 0x00000001u,
    0x807fffffu, 0x00800000u, 0x80800000u, 0x7f7fffffu, 0xff7fffffu, 0x3f000000u,
    0x3fc00000u, 0x40200000u, 0x4b800001u, 0x4f000000u, 0xcf000000u, 0x5f000000u};
static const uint16_t f16_specials[] = {0x0000, 0x8000, 0x3c00, 0xbc00, 0x7c00, 0xfc00,
                                        0x7e00, 0x7c01, 0xfe00, 0x0001, 0x83ff, 0x0400,
                                        0x7bff, 0xfbff, 0x3800, 0x3e00};
static const uint16_t bf16_specials[] = {0x0000, 0x8000, 0x3f80, 0xbf80, 0x7f80, 0xff80,
                                         0x7fc0, 0x7f81, 0xffc0, 0x0001, 0x807f, 0x0080,
                                         0x7f7f, 0xff7f, 0x3f00, 0x3fc0};

void cf_random_element(uint32_t type, uint64_t *rng, uint8_t *out) {
  uint64_t r = vyre__splitmix64(rng);
  uint64_t pick = vyre__splitmix64(rng);
  uint32_t size = vyre_type_size(type);
  switch (type) {
  case VYRE_T_BOOL: {
    static const uint32_t b[] = {0, 1, 0, 1, 0, 1, 2, 0x80000000u, 0xffffffffu};
    put_le(out, b[r % 9], 4);
    return;
  }
  case VYRE_T_F32:
    if (pick % 4 == 0) {
      put_le(out, f32_specials[r % (sizeof f32_specials / 4)], 4);
    } else if (pick % 4 == 1) {
      put_le(out, (uint32_t)r, 4);
    } else {
      /* A moderate value: sign, 24-bit significand, exponent in [-12, 12]. */
      float f = ldexpf((float)(r & 0xffffff) / 16777216.0f, (int)((r >> 24) % 25) - 12);
      if ((r >> 40) & 1) f = -f;
      put_le(out, vyre__f32_bits(f), 4);
    }
    return;
  case VYRE_T_F16:
    if (pick % 4 == 0) put_le(out, f16_specials[r % 16], 2);
    else if (pick % 4 == 1) put_le(out, (uint16_t)r, 2);
    else put_le(out, (uint16_t)(0x3000 + r % 0x1800) | (uint16_t)((r >> 20) & 0x8000), 2);
    return;
  case VYRE_T_BF16:
    if (pick % 4 == 0) put_le(out, bf16_specials[r % 16], 2);
    else if (pick % 4 == 1) put_le(out, (uint16_t)r, 2);
    else put_le(out, (uint16_t)(0x3a00 + r % 0x0b00) | (uint16_t)((r >> 20) & 0x8000), 2);
    return;
  default: {
    /* Integers: random bits, one in four an edge value. */
    uint64_t mask = size == 8 ? UINT64_MAX : ((1ull << (size * 8)) - 1);
    uint64_t v = r;
    if (pick % 4 == 0) {
      int sgn = type >= VYRE_T_I8 && type <= VYRE_T_I64;
      uint64_t edges[] = {0, 1, mask, sgn ? mask >> 1 : mask - 1, sgn ? (mask >> 1) + 1 : 2,
                          2, 31, 32};
      v = edges[r % 8];
    } else if (pick % 4 == 1) {
      v = r % 100;
    }
    put_le(out, v & mask, size);
    return;
  }
  }
}

/* A value in [lo, hi] (ints) or [lo, hi) (floats) from literal bytes. */
static void range_element(uint32_t type, uint64_t *rng, const uint8_t *lo, const uint8_t *hi,
                          uint8_t *out) {
  uint32_t size = vyre_type_size(type);
  uint64_t r = vyre__splitmix64(rng);
  double u = (double)(r >> 11) / 9007199254740992.0;
  if (type == VYRE_T_F32 || type == VYRE_T_F16 || type == VYRE_T_BF16) {
    float a, b;
    uint32_t ab, bb;
    if (type == VYRE_T_F32) {
      memcpy(&ab, lo, 4);
      memcpy(&bb, hi, 4);
    } else {
      uint16_t h1 = (uint16_t)(lo[0] | lo[1] << 8), h2 = (uint16_t)(hi[0] | hi[1] << 8);
      ab = type == VYRE_T_F16 ? vyre_f16_to_f32(h1) : vyre_bf16_to_f32(h1);
      bb = type == VYRE_T_F16 ? vyre_f16_to_f32(h2) : vyre_bf16_to_f32(h2);
    }
    memcpy(&a, &ab, 4);
    memcpy(&b, &bb, 4);
    float f = (float)((double)a + ((double)b - (double)a) * u);
    uint32_t fb;
    memcpy(&fb, &f, 4);
    if (type == VYRE_T_F32) put_le(out, fb, 4);
    else put_le(out, type == VYRE_T_F16 ? vyre_f32_to_f16(fb) : vyre_f32_to_bf16(fb), 2);
    return;
  }
  uint64_t a = 0, b = 0;
  for (uint32_t i = 0; i < size; i++) {
    a |= (uint64_t)lo[i] << (8 * i);
    b |= (uint64_t)hi[i] << (8 * i);
  }
  int sgn = type >= VYRE_T_I8 && type <= VYRE_T_I64;
  if (sgn && size < 8) {
    /* Sign-extend so that the span is computed on the real values. */
    uint64_t sbit = 1ull << (size * 8 - 1);
    a = (a ^ sbit) - sbit;
    b = (b ^ sbit) - sbit;
  }
  uint64_t span = b - a + 1; /* 0 means the whole 64-bit range */
  uint64_t v = a + (span ? r % span : r);
  put_le(out, v, size);
}

/* ------------------------------------------------------------------ */
/* Directives                                                          */
/* ------------------------------------------------------------------ */

typedef struct tok {
  const char *s;
  size_t n;
} tok;

#define MAX_TOKS 4096

typedef struct parse_ctx {
  cf_case *c;
  const char *path;
  uint32_t line;
  vyre_error *err;
  uint64_t data; /* bytes of input and expected-output data so far */
} parse_ctx;

static vyre_status perr(parse_ctx *px, vyre_status st, const char *fmt, ...) VYRE_PRINTF(3, 4);
static vyre_status perr(parse_ctx *px, vyre_status st, const char *fmt, ...) {
  char msg[1536];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(msg, sizeof msg, fmt, ap);
  va_end(ap);
  return vyre_error_set(px->err, st, 0, "%s:%u: %s", px->path, px->line, msg);
}

static int tok_u32(const tok *t, uint32_t *out) {
  uint64_t v;
  char why[64];
  if (parse_int(t->s, t->n, 32, 0, &v, why, sizeof why) != 0) return -1;
  if (t->s[0] == '-') return -1;
  *out = (uint32_t)v;
  return 0;
}

static int tok_u64(const tok *t, uint64_t *out) {
  char why[64];
  if (t->s[0] == '-') return -1;
  return parse_int(t->s, t->n, 64, 0, out, why, sizeof why);
}

static int find_buffer(const vyre_program *p, const tok *t) {
  for (uint32_t i = 0; i < p->buffer_count; i++)
    if (strlen(p->buffers[i].name) == t->n && strncmp(p->buffers[i].name, t->s, t->n) == 0)
      return (int)i;
  return -1;
}

/* Run a generator (toks[0] = its name) appending elements of `type` to b. */
static vyre_status generate(parse_ctx *px, uint32_t type, const tok *toks, uint32_t n,
                            strbuf *b) {
  uint32_t size = vyre_type_size(type);
  uint8_t e[8], e2[8];
  char why[128];
  const tok *g = &toks[0];
  if (word_is(g->s, g->n, "values")) {
    for (uint32_t i = 1; i < n; i++) {
      if (cf_parse_literal(type, toks[i].s, toks[i].n, e, why, sizeof why) != 0)
        return perr(px, VYRE_INVALID_ARGUMENT, "value '%.*s' %s. Fix: write a %s literal "
                    "(docs/conformance.md, \"Literals\")", (int)toks[i].n, toks[i].s, why,
                    vyre_type_name(type));
      vyre__sb_append(b, e, size);
    }
    return VYRE_OK;
  }
  if (word_is(g->s, g->n, "hex")) {
    for (uint32_t i = 1; i < n; i++) {
      if (toks[i].n % 2)
        return perr(px, VYRE_INVALID_ARGUMENT, "hex group '%.*s' has an odd number of digits. "
                    "Fix: write whole bytes", (int)toks[i].n, toks[i].s);
      for (size_t k = 0; k < toks[i].n; k += 2) {
        int hi = tolower((unsigned char)toks[i].s[k]), lo = tolower((unsigned char)toks[i].s[k + 1]);
        if (!isxdigit(hi) || !isxdigit(lo))
          return perr(px, VYRE_INVALID_ARGUMENT, "'%.*s' is not hex. Fix: use 0-9a-f",
                      (int)toks[i].n, toks[i].s);
        uint8_t byte = (uint8_t)(((isdigit(hi) ? hi - '0' : hi - 'a' + 10) << 4) |
                                 (isdigit(lo) ? lo - '0' : lo - 'a' + 10));
        vyre__sb_append(b, &byte, 1);
      }
    }
    return VYRE_OK;
  }
  /* The count is word 1, or word 2 after the seed of random/range: a line
   * one word short has no such word (toks past n are stale or unset). */
  uint32_t count = 0;
  uint32_t at = word_is(g->s, g->n, "random") || word_is(g->s, g->n, "range") ? 2 : 1;
  if (n <= at || tok_u32(&toks[at], &count) != 0) goto usage;
  if (count > CF_MAX_GENERATED)
    return perr(px, VYRE_LIMIT, "%u elements is more than the %u a generator makes. Fix: use "
                "fewer", count, CF_MAX_GENERATED);
  if (px->data + (uint64_t)count * size > CF_MAX_CASE_DATA)
    return perr(px, VYRE_LIMIT, "%u more elements make the case's data more than %llu bytes. "
                "Fix: use fewer", count, (unsigned long long)CF_MAX_CASE_DATA);
  if (word_is(g->s, g->n, "zeros")) {
    if (n != 2) goto usage;
    memset(e, 0, sizeof e);
    for (uint32_t i = 0; i < count; i++) vyre__sb_append(b, e, size);
    return VYRE_OK;
  }
  if (word_is(g->s, g->n, "fill")) {
    if (n != 3) goto usage;
    if (cf_parse_literal(type, toks[2].s, toks[2].n, e, why, sizeof why) != 0)
      return perr(px, VYRE_INVALID_ARGUMENT, "fill value '%.*s' %s. Fix: write a %s literal",
                  (int)toks[2].n, toks[2].s, why, vyre_type_name(type));
    for (uint32_t i = 0; i < count; i++) vyre__sb_append(b, e, size);
    return VYRE_OK;
  }
  if (word_is(g->s, g->n, "iota")) {
    if (n < 2 || n > 4) goto usage;
    double start = 0, step = 1;
    char num[64];
    for (uint32_t k = 2; k < n; k++) {
      char *end = NULL;
      snprintf(num, sizeof num, "%.*s", (int)toks[k].n, toks[k].s);
      double v = strtod(num, &end);
      if (toks[k].n >= sizeof num || *end) goto usage;
      if (k == 2) start = v;
      else step = v;
    }
    for (uint32_t i = 0; i < count; i++) {
      double v = start + step * (double)i;
      if (type == VYRE_T_F32 || type == VYRE_T_F16 || type == VYRE_T_BF16) {
        float f = (float)v;
        uint32_t fb;
        memcpy(&fb, &f, 4);
        if (type == VYRE_T_F32) put_le(e, fb, 4);
        else put_le(e, type == VYRE_T_F16 ? vyre_f32_to_f16(fb) : vyre_f32_to_bf16(fb), 2);
      } else if (type == VYRE_T_BOOL) {
        put_le(e, v != 0, 4);
      } else {
        put_le(e, (uint64_t)(int64_t)v, size);
      }
      vyre__sb_append(b, e, size);
    }
    return VYRE_OK;
  }
  if (word_is(g->s, g->n, "random")) {
    uint64_t seed;
    if (n != 3 || tok_u64(&toks[1], &seed) != 0) goto usage;
    uint64_t rng = seed ^ 0x5eed0f1e5ull;
    for (uint32_t i = 0; i < count; i++) {
      cf_random_element(type, &rng, e);
      vyre__sb_append(b, e, size);
    }
    return VYRE_OK;
  }
  if (word_is(g->s, g->n, "range")) {
    uint64_t seed;
    if (n != 5 || tok_u64(&toks[1], &seed) != 0) goto usage;
    if (cf_parse_literal(type, toks[3].s, toks[3].n, e, why, sizeof why) != 0 ||
        cf_parse_literal(type, toks[4].s, toks[4].n, e2, why, sizeof why) != 0)
      return perr(px, VYRE_INVALID_ARGUMENT, "range bounds '%.*s' '%.*s': %s. Fix: write two "
                  "%s literals", (int)toks[3].n, toks[3].s, (int)toks[4].n, toks[4].s, why,
                  vyre_type_name(type));
    uint64_t rng = seed ^ 0x5eed0f1e5ull;
    uint8_t x[8];
    for (uint32_t i = 0; i < count; i++) {
      range_element(type, &rng, e, e2, x);
      vyre__sb_append(b, x, size);
    }
    return VYRE_OK;
  }
usage:
  return perr(px, VYRE_INVALID_ARGUMENT,
              "bad data generator '%.*s'. Fix: use one of `values V...`, `hex BYTES...`, "
              "`zeros N`, `fill N V`, `iota N [START [STEP]]`, `random SEED N`, "
              "`range SEED N LO HI`", (int)g->n, g->s);
}

static int status_by_name(const tok *t) {
  for (int s = 0; s < VYRE_STATUS_COUNT_; s++) {
    const char *name = vyre_status_name(s) + 5; /* past "VYRE_" */
    if (strlen(name) != t->n) continue;
    size_t i = 0;
    while (i < t->n && tolower((unsigned char)name[i]) == tolower((unsigned char)t->s[i])) i++;
    if (i == t->n) return s;
  }
  return -1;
}

static int hexval(int c) {
  c = tolower(c);
  return isdigit(c) ? c - '0' : (c >= 'a' && c <= 'f') ? c - 'a' + 10 : -1;
}

/* Per-buffer data being assembled from `input` / `expect-output` lines. */
typedef struct pending {
  strbuf in[CF_MAX_IO];
  strbuf out[CF_MAX_IO];
  int in_set[CF_MAX_IO], out_set[CF_MAX_IO];
} pending;

static vyre_status dims(parse_ctx *px, const tok *t, uint32_t n, uint32_t out[3],
                        const char *what) {
  if (n < 2 || n > 4) goto bad;
  out[0] = out[1] = out[2] = 1;
  for (uint32_t i = 1; i < n; i++)
    if (tok_u32(&t[i], &out[i - 1]) != 0 || out[i - 1] == 0) goto bad;
  return VYRE_OK;
bad:
  return perr(px, VYRE_INVALID_ARGUMENT, "`%s` takes 1 to 3 positive numbers. Fix: `;@ %s X [Y "
              "[Z]]`", what, what);
}

static vyre_status directive(parse_ctx *px, pending *pd, tok *t, uint32_t n) {
  cf_case *c = px->c;
  const vyre_program *p = c->decoded;
  const tok *k = &t[0];
#define KEY(lit) word_is(k->s, k->n, lit)
  if (KEY("case") || KEY("category")) {
    if (n != 2) return perr(px, VYRE_INVALID_ARGUMENT, "`%.*s` takes one word. Fix: `;@ %.*s NAME`",
                            (int)k->n, k->s, (int)k->n, k->s);
    char *dst = KEY("case") ? c->name : c->category;
    size_t cap = KEY("case") ? sizeof c->name : sizeof c->category;
    if (t[1].n >= cap)
      return perr(px, VYRE_INVALID_ARGUMENT, "name too long (%zu bytes). Fix: at most %zu", t[1].n,
                  cap - 1);
    memcpy(dst, t[1].s, t[1].n);
    dst[t[1].n] = '\0';
    return VYRE_OK;
  }
  if (KEY("about") || KEY("origin") || KEY("backend")) {
    const char *from = n > 1 ? t[1].s : k->s + k->n;
    const char *to = n > 1 ? t[n - 1].s + t[n - 1].n : from;
    size_t len = (size_t)(to - from);
    if (KEY("about")) {
      free(c->about);
      c->about = strndup(from, len);
      if (!c->about) return perr(px, VYRE_OUT_OF_MEMORY, "out of memory. Fix: free memory");
    } else {
      char *dst = KEY("origin") ? c->origin : c->backend;
      size_t cap = KEY("origin") ? sizeof c->origin : sizeof c->backend;
      snprintf(dst, cap, "%.*s", (int)len, from);
    }
    return VYRE_OK;
  }
  if (KEY("input") || KEY("input+") || KEY("expect-output") || KEY("expect-output+")) {
    int is_in = KEY("input") || KEY("input+");
    int append = k->s[k->n - 1] == '+';
    if (n < 3)
      return perr(px, VYRE_INVALID_ARGUMENT, "`%.*s` needs a buffer and a generator. Fix: `;@ "
                  "%.*s BUFFER values 1 2 3`", (int)k->n, k->s, (int)k->n, k->s);
    int bi = find_buffer(p, &t[1]);
    if (bi < 0)
      return perr(px, VYRE_INVALID_ARGUMENT, "no buffer named '%.*s'. Fix: name a buffer the "
                  "program declares", (int)t[1].n, t[1].s);
    const vyre_buffer_info *bf = &p->buffers[bi];
    if (is_in && bf->input_index < 0)
      return perr(px, VYRE_INVALID_ARGUMENT, "buffer %s takes no input (%s%s). Fix: give inputs "
                  "only to ro, uniform and rw buffers without the output flag", bf->name,
                  vyre_access_name(bf->decl.access), bf->is_output ? ", output" : "");
    if (!is_in && !bf->is_output)
      return perr(px, VYRE_INVALID_ARGUMENT, "buffer %s is not an output. Fix: expect outputs "
                  "only of rw and wo buffers", bf->name);
    strbuf *b = is_in ? &pd->in[bi] : &pd->out[bi];
    int *set = is_in ? &pd->in_set[bi] : &pd->out_set[bi];
    if (*set && !append)
      return perr(px, VYRE_INVALID_ARGUMENT, "buffer %s already has data. Fix: use `%.*s+` to "
                  "append", bf->name, (int)k->n, k->s);
    if (!*set && append)
      return perr(px, VYRE_INVALID_ARGUMENT, "`%.*s` appends to nothing. Fix: start with `%.*s`",
                  (int)k->n, k->s, (int)k->n - 1, k->s);
    *set = 1;
    size_t before = b->len;
    vyre_status st = generate(px, bf->decl.elem_type, &t[2], n - 2, b);
    if (st == VYRE_OK && b->failed) st = perr(px, VYRE_OUT_OF_MEMORY, "out of memory. Fix: smaller inputs");
    px->data += b->len - before;
    if (st == VYRE_OK && px->data > CF_MAX_CASE_DATA)
      st = perr(px, VYRE_LIMIT, "the case's data is more than %llu bytes. Fix: use less",
                (unsigned long long)CF_MAX_CASE_DATA);
    return st;
  }
  if (KEY("expect")) {
    int s = n >= 2 ? status_by_name(&t[1]) : -1;
    if (s < 0 || n > 3)
      return perr(px, VYRE_INVALID_ARGUMENT, "bad expectation. Fix: `;@ expect ok`, `;@ expect "
                  "trap [CODE]`, `;@ expect unsupported`, or another status name");
    c->expect = s;
    if (n == 3) {
      uint32_t code;
      if (s != VYRE_TRAP || tok_u32(&t[2], &code) != 0)
        return perr(px, VYRE_INVALID_ARGUMENT, "only `expect trap` takes a code (0..4294967295). "
                    "Fix: drop it or fix the number");
      c->expect_code_set = 1;
      c->expect_code = code;
    }
    return VYRE_OK;
  }
  if (KEY("ulp") || KEY("tolerance") || KEY("fixpoint")) {
    uint32_t v;
    if (n != 2 || tok_u32(&t[1], &v) != 0)
      return perr(px, VYRE_INVALID_ARGUMENT, "`%.*s` takes one number. Fix: `;@ %.*s N`",
                  (int)k->n, k->s, (int)k->n, k->s);
    if (KEY("ulp")) c->options.ulp_budget = v;
    else if (KEY("tolerance")) c->tolerance = v;
    else c->options.fixpoint_iterations = v;
    return VYRE_OK;
  }
  if (KEY("workgroup")) return dims(px, t, n, c->options.workgroup, "workgroup");
  if (KEY("grid")) return dims(px, t, n, c->options.grid, "grid");
  if (KEY("requires")) {
    for (uint32_t i = 1; i < n; i++) {
      int bit = vyre_capability_by_name(t[i].s, t[i].n);
      if (bit < 0)
        return perr(px, VYRE_INVALID_ARGUMENT, "unknown capability '%.*s'. Fix: use a name of "
                    "docs/conformance.md (\"requires\")", (int)t[i].n, t[i].s);
      c->extra_caps |= 1ull << bit;
    }
    return VYRE_OK;
  }
  if (KEY("ops")) {
    if (n < 2)
      return perr(px, VYRE_INVALID_ARGUMENT, "`ops` names the ops under test. Fix: `;@ ops add`");
    for (uint32_t i = 1; i < n; i++) {
      const vyre_op_info *info = vyre_op_by_mnemonic(t[i].s, t[i].n);
      if (!info)
        return perr(px, VYRE_INVALID_ARGUMENT, "unknown op '%.*s'. Fix: use a mnemonic of "
                    "docs/program-format.md", (int)t[i].n, t[i].s);
      c->focus[info->id >> 6] |= 1ull << (info->id & 63);
    }
    c->focus_set = 1;
    return VYRE_OK;
  }
  if (KEY("capsule")) {
    c->is_capsule = 1;
    return VYRE_OK;
  }
  if (KEY("program-sha256")) {
    if (n != 2 || t[1].n != 64)
      return perr(px, VYRE_INVALID_ARGUMENT, "`program-sha256` takes 64 hex digits. Fix: copy "
                  "the hash whole");
    for (int i = 0; i < 32; i++) {
      int hi = hexval((unsigned char)t[1].s[2 * i]), lo = hexval((unsigned char)t[1].s[2 * i + 1]);
      if (hi < 0 || lo < 0)
        return perr(px, VYRE_INVALID_ARGUMENT, "`program-sha256` is not hex. Fix: copy the hash");
      c->sha256[i] = (uint8_t)(hi << 4 | lo);
    }
    c->sha_set = 1;
    return VYRE_OK;
  }
  /* What a capsule recorded about the failing run: for people, not replayed. */
  if (KEY("device") || KEY("note") || KEY("mismatch") || KEY("status-backend") ||
      KEY("status-reference") || KEY("output-backend") || KEY("output-reference") ||
      KEY("output-backend+") || KEY("output-reference+"))
    return VYRE_OK;
#undef KEY
  return perr(px, VYRE_INVALID_ARGUMENT, "unknown directive '%.*s'. Fix: see docs/conformance.md "
              "(\"Case files\"); ordinary comments start with `;` without `@`", (int)k->n, k->s);
}

/* ------------------------------------------------------------------ */
/* Cases                                                               */
/* ------------------------------------------------------------------ */

static void default_names(cf_case *c, const char *path) {
  const char *slash = strrchr(path, '/');
  const char *base = slash ? slash + 1 : path;
  size_t n = strlen(base);
  if (n > 5 && strcmp(base + n - 5, ".vyre") == 0) n -= 5;
  snprintf(c->name, sizeof c->name, "%.*s", (int)n, base);
  if (slash && slash > path) {
    const char *d = slash;
    while (d > path && d[-1] != '/') d--;
    snprintf(c->category, sizeof c->category, "%.*s", (int)(slash - d), d);
  } else {
    snprintf(c->category, sizeof c->category, "misc");
  }
}

static cf_case *case_new(const char *path) {
  cf_case *c = calloc(1, sizeof *c);
  if (!c) return NULL;
  c->path = strdup(path ? path : "<memory>");
  if (!c->path) {
    free(c);
    return NULL;
  }
  c->options.struct_size = sizeof c->options;
  c->expect = VYRE_OK;
  c->tolerance = UINT32_MAX; /* "not set": becomes the ulp budget */
  default_names(c, c->path);
  return c;
}

void cf_case_free(cf_case *c) {
  if (!c) return;
  for (uint32_t i = 0; i < CF_MAX_IO; i++) {
    free(c->input[i].bytes);
    free(c->golden[i].bytes);
  }
  vyre_program_free(c->decoded);
  free(c->program);
  free(c->text);
  free(c->about);
  free(c->path);
  free(c);
}

/* Check the inputs against the declarations; give fixed-count inputs
 * without data zeros. */
static vyre_status finish_inputs(cf_case *c, vyre_error *err) {
  const vyre_program *p = c->decoded;
  for (uint32_t i = 0; i < p->buffer_count; i++) {
    const vyre_buffer_info *bf = &p->buffers[i];
    if (bf->input_index < 0) continue;
    uint64_t want = (uint64_t)bf->decl.count * bf->elem_size;
    cf_data *d = &c->input[i];
    if (!d->present) {
      if (bf->decl.count == 0)
        return vyre_error_set(err, VYRE_INVALID_ARGUMENT, 0,
                              "%s: buffer %s is sized by its input but the case gives none. "
                              "Fix: add `;@ input %s ...`", c->path, bf->name, bf->name);
      d->bytes = calloc(1, want ? want : 1);
      if (!d->bytes) return vyre_error_set(err, VYRE_OUT_OF_MEMORY, 0, "out of memory");
      d->size = want;
      d->present = 1;
      continue;
    }
    if (bf->decl.count && d->size != want)
      return vyre_error_set(err, VYRE_INVALID_ARGUMENT, 0,
                            "%s: the input of %s has %llu bytes but [%u] %s needs %llu. Fix: "
                            "give exactly %u elements", c->path, bf->name,
                            (unsigned long long)d->size, bf->decl.count,
                            vyre_type_name(bf->decl.elem_type), (unsigned long long)want,
                            bf->decl.count);
    if (d->size % bf->elem_size)
      return vyre_error_set(err, VYRE_INVALID_ARGUMENT, 0,
                            "%s: the input of %s is %llu bytes, not whole %s elements. Fix: "
                            "give whole elements", c->path, bf->name,
                            (unsigned long long)d->size, vyre_type_name(bf->decl.elem_type));
  }
  return VYRE_OK;
}

vyre_status cf_case_parse(const char *text, size_t length, const char *path, cf_case **out,
                          vyre_error *err) {
  *out = NULL;
  cf_case *c = case_new(path);
  pending *pd = calloc(1, sizeof *pd);
  tok *toks = malloc(MAX_TOKS * sizeof *toks);
  vyre_status st = VYRE_OUT_OF_MEMORY;
  if (!c || !pd || !toks) {
    vyre_error_set(err, st, 0, "loading case %s: out of memory. Fix: free memory", path);
    goto fail;
  }
  c->text = malloc(length + 1);
  if (!c->text) {
    vyre_error_set(err, st, 0, "loading case %s: out of memory. Fix: free memory", path);
    goto fail;
  }
  memcpy(c->text, text, length);
  c->text[length] = '\0';
  c->text_size = length;

  st = vyre_text_assemble(text, length, c->path, &c->program, &c->program_size, err);
  if (st != VYRE_OK) goto fail;
  st = vyre_program_decode(c->program, c->program_size, &c->decoded, err);
  if (st != VYRE_OK) {
    vyre_error_prefix(err, "%s", c->path);
    goto fail;
  }

  parse_ctx px = {c, c->path, 0, err, 0};
  const char *s = text, *end = text + length;
  while (s < end) {
    px.line++;
    const char *eol = memchr(s, '\n', (size_t)(end - s));
    if (!eol) eol = end;
    const char *q = s;
    while (q < eol && (*q == ' ' || *q == '\t')) q++;
    if (eol - q >= 2 && q[0] == ';' && q[1] == '@') {
      uint32_t n = 0;
      const char *w = q + 2;
      for (;;) {
        while (w < eol && (*w == ' ' || *w == '\t' || *w == '\r')) w++;
        if (w >= eol) break;
        const char *ws = w;
        while (w < eol && *w != ' ' && *w != '\t' && *w != '\r') w++;
        if (n == MAX_TOKS) {
          st = perr(&px, VYRE_LIMIT, "more than %d words on one line. Fix: continue with "
                    "`input+`", MAX_TOKS);
          goto fail;
        }
        toks[n].s = ws;
        toks[n].n = (size_t)(w - ws);
        n++;
      }
      if (n == 0) {
        st = perr(&px, VYRE_INVALID_ARGUMENT, "empty directive. Fix: write `;@ KEY ARGS`");
        goto fail;
      }
      st = directive(&px, pd, toks, n);
      if (st != VYRE_OK) goto fail;
    }
    s = eol + 1;
  }

  for (uint32_t i = 0; i < c->decoded->buffer_count && i < CF_MAX_IO; i++) {
    if (pd->in_set[i]) {
      c->input[i].present = 1;
      c->input[i].size = pd->in[i].len;
      c->input[i].bytes = pd->in[i].data ? (uint8_t *)pd->in[i].data : calloc(1, 1);
      pd->in[i].data = NULL;
      if (!c->input[i].bytes) {
        st = vyre_error_set(err, VYRE_OUT_OF_MEMORY, 0, "out of memory");
        goto fail;
      }
    }
    if (pd->out_set[i]) {
      c->golden[i].present = 1;
      c->golden[i].size = pd->out[i].len;
      c->golden[i].bytes = pd->out[i].data ? (uint8_t *)pd->out[i].data : calloc(1, 1);
      pd->out[i].data = NULL;
      if (!c->golden[i].bytes) {
        st = vyre_error_set(err, VYRE_OUT_OF_MEMORY, 0, "out of memory");
        goto fail;
      }
    }
  }
  if (c->tolerance == UINT32_MAX) c->tolerance = c->options.ulp_budget;
  st = finish_inputs(c, err);
  if (st != VYRE_OK) goto fail;
  /* An edited capsule is still worth replaying: the runner notes it. */
  c->sha_mismatch = c->sha_set && memcmp(c->sha256, c->decoded->sha256, 32) != 0;
  for (uint32_t i = 0; i < CF_MAX_IO; i++) {
    vyre__sb_free(&pd->in[i]);
    vyre__sb_free(&pd->out[i]);
  }
  free(pd);
  free(toks);
  *out = c;
  return VYRE_OK;
fail:
  if (pd)
    for (uint32_t i = 0; i < CF_MAX_IO; i++) {
      vyre__sb_free(&pd->in[i]);
      vyre__sb_free(&pd->out[i]);
    }
  free(pd);
  free(toks);
  cf_case_free(c);
  return st;
}

vyre_status cf_case_load(const char *path, cf_case **out, vyre_error *err) {
  void *data = NULL;
  size_t size = 0;
  *out = NULL;
  vyre_status st = cf_read_file(path, CF_MAX_CASE_BYTES, &data, &size, err);
  if (st != VYRE_OK) return st;
  st = cf_case_parse(data, size, path, out, err);
  free(data);
  return st;
}

vyre_status cf_case_set_program(cf_case *c, const void *bytes, size_t size, vyre_error *err) {
  vyre_program *p = NULL;
  vyre_status st = vyre_program_decode(bytes, size, &p, err);
  if (st != VYRE_OK) return st;
  void *copy = malloc(size);
  if (!copy) {
    vyre_program_free(p);
    return vyre_error_set(err, VYRE_OUT_OF_MEMORY, 0, "out of memory");
  }
  memcpy(copy, bytes, size);
  vyre_program_free(c->decoded);
  free(c->program);
  c->decoded = p;
  c->program = copy;
  c->program_size = size;
  return VYRE_OK;
}

vyre_status cf_case_from_program(const void *bytes, size_t size, const vyre_input *inputs,
                                 const vyre_dispatch_options *options, const char *name,
                                 const char *category, cf_case **out, vyre_error *err) {
  *out = NULL;
  cf_case *c = case_new("<generated>");
  if (!c) return vyre_error_set(err, VYRE_OUT_OF_MEMORY, 0, "out of memory");
  vyre_status st = cf_case_set_program(c, bytes, size, err);
  if (st != VYRE_OK) goto fail;
  st = vyre_text_disassemble(bytes, size, &c->text, err);
  if (st != VYRE_OK) goto fail;
  c->text_size = strlen(c->text);
  snprintf(c->name, sizeof c->name, "%s", name ? name : "generated");
  snprintf(c->category, sizeof c->category, "%s", category ? category : "generated");
  if (options) vyre__sized_read(&c->options, sizeof c->options, options);
  c->tolerance = c->options.ulp_budget;
  const vyre_program *p = c->decoded;
  for (uint32_t i = 0; i < p->buffer_count; i++) {
    int32_t k = p->buffers[i].input_index;
    if (k < 0) continue;
    cf_data *d = &c->input[i];
    d->size = inputs[k].size;
    d->bytes = malloc(d->size ? d->size : 1);
    if (!d->bytes) {
      st = vyre_error_set(err, VYRE_OUT_OF_MEMORY, 0, "out of memory");
      goto fail;
    }
    if (d->size) memcpy(d->bytes, inputs[k].data, d->size);
    d->present = 1;
  }
  st = finish_inputs(c, err);
  if (st != VYRE_OK) goto fail;
  *out = c;
  return VYRE_OK;
fail:
  cf_case_free(c);
  return st;
}

void cf_case_inputs(const cf_case *c, vyre_input *inputs, uint32_t *count) {
  const vyre_program *p = c->decoded;
  for (uint32_t i = 0; i < p->buffer_count; i++) {
    int32_t k = p->buffers[i].input_index;
    if (k < 0) continue;
    inputs[k].data = c->input[i].bytes;
    inputs[k].size = c->input[i].size;
  }
  *count = p->input_count;
}

/* ------------------------------------------------------------------ */
/* Needs and offers                                                    */
/* ------------------------------------------------------------------ */

uint32_t cf_inst_type(const vyre_program *p, uint32_t i) {
  const vyre_inst *in = &p->insts[i];
  const vyre_op_info *info = vyre_op_lookup(in->op);
  if (!info || info->type_mask == 0) return VYRE_T_VOID;
  if (info->op_class == VYRE_OC_COMPARE || info->op_class == VYRE_OC_PREDICATE)
    return in->a < i ? p->value_type[in->a] : VYRE_T_VOID;
  return in->type;
}

void cf_program_needs(const vyre_program *p, const vyre_dispatch_options *options,
                      cf_needs *out) {
  memset(out, 0, sizeof *out);
  out->caps = p->required_caps;
  for (uint32_t i = 0; i < p->inst_count; i++) {
    uint32_t op = p->insts[i].op;
    cf_opset_add(&out->ops, op);
    uint32_t t = cf_inst_type(p, i);
    if (t == VYRE_T_VOID || t >= VYRE_T_COUNT_ || op >= 256) continue;
    out->op_types[op] |= VYRE_TBIT(t);
    /* Every u64/i64 value is made by an instruction of that type (a load,
     * a constant, a cast, an atomic...), so this finds them all; a buffer
     * no instruction touches needs only its storage type. */
    if (t == VYRE_T_U64 || t == VYRE_T_I64) out->caps |= VYRE_CAP_INT64;
  }
  if (options && options->fixpoint_iterations > 1) out->caps |= VYRE_CAP_FIXPOINT;
  for (uint32_t i = 0; i < p->buffer_count; i++) {
    out->storage_types |= 1ull << p->buffers[i].decl.elem_type;
    if (p->buffers[i].decl.flags & VYRE_BUF_OUT_RANGE) out->caps |= VYRE_CAP_OUT_RANGE;
  }
}

void cf_offer_claim(cf_offer *offer, uint32_t op, uint32_t types) {
  if (op >= 256) return;
  const vyre_op_info *info = vyre_op_lookup(op);
  uint32_t all = info ? info->type_mask : 0;
  /* A mask naming only types the op cannot have claims nothing usable. */
  if (types && all && !(types & all)) return;
  cf_opset_add(&offer->ops, op);
  offer->op_types[op] = (types && all) ? (types & all) : 0;
}

/* Count one missing item and append it, "; "-separated, to why[] (cut
 * at why_size). */
typedef struct why_text {
  char *s;
  size_t size, used;
  uint32_t missing;
} why_text;

static void why_add(why_text *w, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void why_add(why_text *w, const char *fmt, ...) {
  w->missing++;
  if (w->used + 1 >= w->size) return;
  if (w->used) w->used += (size_t)snprintf(w->s + w->used, w->size - w->used, "; ");
  if (w->used + 1 >= w->size) {
    w->used = w->size - 1;
    return;
  }
  va_list ap;
  va_start(ap, fmt);
  int n = vsnprintf(w->s + w->used, w->size - w->used, fmt, ap);
  va_end(ap);
  w->used += n < 0 ? 0 : (size_t)n;
  if (w->used >= w->size) w->used = w->size - 1;
}

int cf_offer_covers(const cf_offer *offer, const cf_needs *needs, char *why, size_t why_size) {
  why_text w = {why, why_size, 0, 0};
  if (why_size) why[0] = '\0';
  for (uint32_t op = 0; op < 256; op++) {
    if (!cf_opset_has(&needs->ops, op)) continue;
    const vyre_op_info *info = vyre_op_lookup(op);
    const char *name = info ? info->mnemonic : "?";
    if (!cf_opset_has(&offer->ops, op)) {
      why_add(&w, "op %s not claimed", name);
      continue;
    }
    uint32_t types = offer->op_types[op] ? needs->op_types[op] & ~offer->op_types[op] : 0;
    if (types) {
      char list[128];
      why_add(&w, "op %s not claimed at %s", name,
              vyre_type_list(types, NULL, list, sizeof list));
    }
  }
  uint64_t caps = needs->caps & ~offer->caps;
  for (uint32_t bit = 0; bit < 64; bit++) {
    if (!((caps >> bit) & 1)) continue;
    const char *name = vyre_capability_name(bit);
    if (name) why_add(&w, "capability %s not offered", name);
    else why_add(&w, "capability bit %u not offered", bit);
  }
  uint64_t types = needs->storage_types & ~offer->storage_types;
  for (uint32_t t = 0; t < 64; t++)
    if ((types >> t) & 1) why_add(&w, "storage type %s not offered", vyre_type_name(t));
  return w.missing == 0;
}

/* ------------------------------------------------------------------ */
/* The corpus                                                          */
/* ------------------------------------------------------------------ */

typedef struct plist {
  char **v;
  uint32_t n, cap;
  int failed;
} plist;

static void plist_add(plist *l, const char *s) {
  if (l->failed) return;
  if (l->n == l->cap) {
    uint32_t cap = l->cap ? l->cap * 2 : 256;
    char **v = realloc(l->v, cap * sizeof *v);
    if (!v) {
      l->failed = 1;
      return;
    }
    l->v = v;
    l->cap = cap;
  }
  l->v[l->n] = strdup(s);
  if (!l->v[l->n]) l->failed = 1;
  else l->n++;
}

static int cmp_str(const void *a, const void *b) {
  return strcmp(*(char *const *)a, *(char *const *)b);
}

/* The directories on the path from the corpus root to the one walked:
 * a directory symlink back to one of them is a loop, not followed. */
#define CF_MAX_CORPUS_DEPTH 16
typedef struct dir_id {
  dev_t dev;
  ino_t ino;
} dir_id;

static vyre_status walk(const char *dir, plist *l, dir_id *path, int depth, vyre_error *err) {
  DIR *d = opendir(dir);
  if (!d)
    return vyre_error_set(err, VYRE_IO, errno, "cannot read corpus directory %s: %s. Fix: pass "
                          "--corpus DIR", dir, strerror(errno));
  struct stat self;
  if (fstat(dirfd(d), &self) != 0) {
    closedir(d);
    return vyre_error_set(err, VYRE_IO, errno, "cannot read corpus directory %s: %s. Fix: pass "
                          "--corpus DIR", dir, strerror(errno));
  }
  path[depth].dev = self.st_dev;
  path[depth].ino = self.st_ino;
  struct dirent *e;
  vyre_status st = VYRE_OK;
  while ((e = readdir(d)) != NULL && st == VYRE_OK) {
    if (e->d_name[0] == '.') continue;
    char sub[4096];
    if ((size_t)snprintf(sub, sizeof sub, "%s/%s", dir, e->d_name) >= sizeof sub) continue;
    struct stat sb;
    if (stat(sub, &sb) != 0) continue;
    if (S_ISDIR(sb.st_mode)) {
      int loop = 0;
      for (int k = 0; k <= depth && !loop; k++)
        loop = path[k].dev == sb.st_dev && path[k].ino == sb.st_ino;
      /* A loop, or deeper than any corpus: not walked (docs/conformance.md). */
      if (loop || depth + 1 > CF_MAX_CORPUS_DEPTH) continue;
      st = walk(sub, l, path, depth + 1, err);
    } else if (S_ISREG(sb.st_mode)) {
      size_t n = strlen(e->d_name);
      if (n > 5 && strcmp(e->d_name + n - 5, ".vyre") == 0) plist_add(l, sub);
    }
  }
  closedir(d);
  return st;
}

vyre_status cf_corpus_list(const char *dir, char ***paths, uint32_t *count, vyre_error *err) {
  plist l = {0};
  *paths = NULL;
  *count = 0;
  dir_id path[CF_MAX_CORPUS_DEPTH + 1];
  vyre_status st = walk(dir, &l, path, 0, err);
  if (st == VYRE_OK && l.failed) st = vyre_error_set(err, VYRE_OUT_OF_MEMORY, 0, "out of memory");
  if (st != VYRE_OK) {
    cf_corpus_list_free(l.v, l.n);
    return st;
  }
  if (l.n) qsort(l.v, l.n, sizeof *l.v, cmp_str);
  *paths = l.v;
  *count = l.n;
  return VYRE_OK;
}

void cf_corpus_list_free(char **paths, uint32_t count) {
  if (!paths) return;
  for (uint32_t i = 0; i < count; i++) free(paths[i]);
  free(paths);
}

vyre_status cf_corpus_hash(const char *dir, char **paths, uint32_t count, char hex[65],
                           vyre_error *err) {
  vyre_sha256_ctx ctx;
  vyre_sha256_init(&ctx);
  size_t dl = strlen(dir);
  for (uint32_t i = 0; i < count; i++) {
    const char *rel = paths[i];
    if (strncmp(rel, dir, dl) == 0 && rel[dl] == '/') rel += dl + 1;
    vyre_sha256_update(&ctx, rel, strlen(rel) + 1);
    void *data = NULL;
    size_t size = 0;
    vyre_status st = cf_read_file(paths[i], CF_MAX_CASE_BYTES, &data, &size, err);
    if (st != VYRE_OK) return st;
    vyre_sha256_update(&ctx, data, size);
    vyre_sha256_update(&ctx, "", 1);
    free(data);
  }
  uint8_t d[32];
  vyre_sha256_final(&ctx, d);
  vyre_hex(d, 32, hex);
  return VYRE_OK;
}
