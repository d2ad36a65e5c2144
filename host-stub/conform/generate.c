/* generate.c -- the data generators of `input` and `expect-output` lines (values, hex, zeros, fill, iota, random, range) as a table, and seeded random elements. */
#include <ctype.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"
#include "abi/support/prng.h"
#include "abi/support/bits.h"

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
    cf_put_le(out, b[r % 9], 4);
    return;
  }
  case VYRE_T_F32:
    if (pick % 4 == 0) {
      cf_put_le(out, f32_specials[r % (sizeof f32_specials / 4)], 4);
    } else if (pick % 4 == 1) {
      cf_put_le(out, (uint32_t)r, 4);
    } else {
      /* A moderate value: sign, 24-bit significand, exponent in [-12, 12]. */
      float f = ldexpf((float)(r & 0xffffff) / 16777216.0f, (int)((r >> 24) % 25) - 12);
      if ((r >> 40) & 1) f = -f;
      cf_put_le(out, vyre__f32_bits(f), 4);
    }
    return;
  case VYRE_T_F16:
    if (pick % 4 == 0) cf_put_le(out, f16_specials[r % 16], 2);
    else if (pick % 4 == 1) cf_put_le(out, (uint16_t)r, 2);
    else cf_put_le(out, (uint16_t)(0x3000 + r % 0x1800) | (uint16_t)((r >> 20) & 0x8000), 2);
    return;
  case VYRE_T_BF16:
    if (pick % 4 == 0) cf_put_le(out, bf16_specials[r % 16], 2);
    else if (pick % 4 == 1) cf_put_le(out, (uint16_t)r, 2);
    else cf_put_le(out, (uint16_t)(0x3a00 + r % 0x0b00) | (uint16_t)((r >> 20) & 0x8000), 2);
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
    cf_put_le(out, v & mask, size);
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
    if (type == VYRE_T_F32) cf_put_le(out, fb, 4);
    else cf_put_le(out, type == VYRE_T_F16 ? vyre_f32_to_f16(fb) : vyre_f32_to_bf16(fb), 2);
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
  cf_put_le(out, v, size);
}

/* ------------------------------------------------------------------ */
/* Generators                                                          */
/* ------------------------------------------------------------------ */

/* One generator call: toks[0] is its name, elements of `type` (`size`
 * bytes each) go to b; count is the element count where the generator
 * takes one. */
typedef struct gen_args {
  cf_parse_ctx *px;
  uint32_t type, size, count;
  const cf_tok *toks;
  uint32_t n;
  strbuf *b;
} gen_args;

static vyre_status usage(const gen_args *a) {
  const cf_tok *g = &a->toks[0];
  return cf_parse_error(a->px, VYRE_INVALID_ARGUMENT,
                        "bad data generator '%.*s'. Fix: use one of `values V...`, `hex "
                        "BYTES...`, `zeros N`, `fill N V`, `iota N [START [STEP]]`, `random "
                        "SEED N`, `range SEED N LO HI`",
                        (int)g->n, g->s);
}

static vyre_status gen_values(const gen_args *a) {
  const cf_tok *toks = a->toks;
  uint8_t e[8];
  char why[512];
  for (uint32_t i = 1; i < a->n; i++) {
    if (cf_parse_literal(a->type, toks[i].s, toks[i].n, e, why, sizeof why) != 0)
      return cf_parse_error(a->px, VYRE_INVALID_ARGUMENT, "values: %s (docs/conformance.md, "
                            "\"Literals\")", why);
    vyre__sb_append(a->b, e, a->size);
  }
  return VYRE_OK;
}

static vyre_status gen_hex(const gen_args *a) {
  const cf_tok *toks = a->toks;
  for (uint32_t i = 1; i < a->n; i++) {
    if (toks[i].n % 2)
      return cf_parse_error(a->px, VYRE_INVALID_ARGUMENT,
                            "hex group '%.*s' has an odd number of digits. "
                            "Fix: write whole bytes",
                            (int)toks[i].n, toks[i].s);
    for (size_t k = 0; k < toks[i].n; k += 2) {
      int hi = tolower((unsigned char)toks[i].s[k]), lo = tolower((unsigned char)toks[i].s[k + 1]);
      if (!isxdigit(hi) || !isxdigit(lo))
        return cf_parse_error(a->px, VYRE_INVALID_ARGUMENT, "'%.*s' is not hex. Fix: use 0-9a-f",
                    (int)toks[i].n, toks[i].s);
      uint8_t byte = (uint8_t)(((isdigit(hi) ? hi - '0' : hi - 'a' + 10) << 4) |
                               (isdigit(lo) ? lo - '0' : lo - 'a' + 10));
      vyre__sb_append(a->b, &byte, 1);
    }
  }
  return VYRE_OK;
}

static vyre_status gen_zeros(const gen_args *a) {
  uint8_t e[8];
  if (a->n != 2) return usage(a);
  memset(e, 0, sizeof e);
  for (uint32_t i = 0; i < a->count; i++) vyre__sb_append(a->b, e, a->size);
  return VYRE_OK;
}

static vyre_status gen_fill(const gen_args *a) {
  const cf_tok *toks = a->toks;
  uint8_t e[8];
  char why[512];
  if (a->n != 3) return usage(a);
  if (cf_parse_literal(a->type, toks[2].s, toks[2].n, e, why, sizeof why) != 0)
    return cf_parse_error(a->px, VYRE_INVALID_ARGUMENT, "fill value: %s", why);
  for (uint32_t i = 0; i < a->count; i++) vyre__sb_append(a->b, e, a->size);
  return VYRE_OK;
}

/* START + k * STEP: START and STEP are literals of the element type
 * (default 0 and 1); integers wrap (a negative STEP counts down, also in
 * an unsigned type), floats are computed in double from the type's
 * values and rounded to the type, a bool is 1 where the sum (a 32-bit
 * word) is not 0. */
static vyre_status gen_iota(const gen_args *a) {
  const cf_tok *toks = a->toks;
  uint32_t type = a->type;
  int is_float = type == VYRE_T_F32 || type == VYRE_T_F16 || type == VYRE_T_BF16;
  uint8_t e[8];
  char why[512];
  if (a->n < 2 || a->n > 4) return usage(a);
  uint64_t bits[2] = {0, 1}; /* START, STEP */
  if (is_float) bits[1] = type == VYRE_T_F32 ? 0x3f800000u : type == VYRE_T_F16 ? 0x3c00u : 0x3f80u;
  for (uint32_t k = 2; k < a->n; k++) {
    uint8_t le[8] = {0};
    if (cf_parse_literal(type, toks[k].s, toks[k].n, le, why, sizeof why) != 0)
      return cf_parse_error(a->px, VYRE_INVALID_ARGUMENT, "iota %s: %s",
                            k == 2 ? "START" : "STEP", why);
    bits[k - 2] = 0;
    for (uint32_t j = 0; j < a->size; j++) bits[k - 2] |= (uint64_t)le[j] << (8 * j);
  }
  double start = 0, step = 0;
  if (is_float) {
    uint32_t f[2];
    for (int k = 0; k < 2; k++)
      f[k] = type == VYRE_T_F32   ? (uint32_t)bits[k]
             : type == VYRE_T_F16 ? vyre_f16_to_f32((uint16_t)bits[k])
                                  : vyre_bf16_to_f32((uint16_t)bits[k]);
    float fs, fd;
    memcpy(&fs, &f[0], 4);
    memcpy(&fd, &f[1], 4);
    start = fs;
    step = fd;
  }
  for (uint32_t i = 0; i < a->count; i++) {
    if (is_float) {
      float f = (float)(start + step * (double)i);
      uint32_t fb;
      memcpy(&fb, &f, 4);
      if (type == VYRE_T_F32) cf_put_le(e, fb, 4);
      else cf_put_le(e, type == VYRE_T_F16 ? vyre_f32_to_f16(fb) : vyre_f32_to_bf16(fb), 2);
    } else if (type == VYRE_T_BOOL) {
      cf_put_le(e, (uint32_t)(bits[0] + bits[1] * i) != 0, 4);
    } else {
      cf_put_le(e, bits[0] + bits[1] * i, a->size);
    }
    vyre__sb_append(a->b, e, a->size);
  }
  return VYRE_OK;
}

static vyre_status gen_random(const gen_args *a) {
  uint8_t e[8];
  uint64_t seed;
  if (a->n != 3 || cf_tok_u64(&a->toks[1], &seed) != 0) return usage(a);
  uint64_t rng = seed ^ 0x5eed0f1e5ull;
  for (uint32_t i = 0; i < a->count; i++) {
    cf_random_element(a->type, &rng, e);
    vyre__sb_append(a->b, e, a->size);
  }
  return VYRE_OK;
}

/* Whether LO <= HI as values of the type (signed, unsigned or float;
 * a NaN bound is out of order). */
static int range_in_order(uint32_t type, const uint8_t *lo, const uint8_t *hi) {
  uint32_t size = vyre_type_size(type);
  uint64_t a = 0, b = 0;
  for (uint32_t i = 0; i < size; i++) {
    a |= (uint64_t)lo[i] << (8 * i);
    b |= (uint64_t)hi[i] << (8 * i);
  }
  if (type == VYRE_T_F32 || type == VYRE_T_F16 || type == VYRE_T_BF16) {
    uint32_t ab = type == VYRE_T_F32   ? (uint32_t)a
                  : type == VYRE_T_F16 ? vyre_f16_to_f32((uint16_t)a)
                                       : vyre_bf16_to_f32((uint16_t)a);
    uint32_t bb = type == VYRE_T_F32   ? (uint32_t)b
                  : type == VYRE_T_F16 ? vyre_f16_to_f32((uint16_t)b)
                                       : vyre_bf16_to_f32((uint16_t)b);
    float fa, fb;
    memcpy(&fa, &ab, 4);
    memcpy(&fb, &bb, 4);
    return fa <= fb;
  }
  if (type >= VYRE_T_I8 && type <= VYRE_T_I64) {
    uint64_t sbit = 1ull << (size * 8 - 1);
    return (int64_t)((a ^ sbit) - sbit) <= (int64_t)((b ^ sbit) - sbit);
  }
  return a <= b;
}

static vyre_status gen_range(const gen_args *a) {
  const cf_tok *toks = a->toks;
  uint8_t e[8], e2[8];
  char why[512];
  uint64_t seed;
  if (a->n != 5 || cf_tok_u64(&toks[1], &seed) != 0) return usage(a);
  if (cf_parse_literal(a->type, toks[3].s, toks[3].n, e, why, sizeof why) != 0 ||
      cf_parse_literal(a->type, toks[4].s, toks[4].n, e2, why, sizeof why) != 0)
    return cf_parse_error(a->px, VYRE_INVALID_ARGUMENT, "range bounds '%.*s' '%.*s': %s",
                          (int)toks[3].n, toks[3].s, (int)toks[4].n, toks[4].s, why);
  if (!range_in_order(a->type, e, e2))
    return cf_parse_error(a->px, VYRE_INVALID_ARGUMENT,
                          "range LO '%.*s' is above HI '%.*s'. Fix: write `range SEED N LO HI` "
                          "with LO <= HI",
                          (int)toks[3].n, toks[3].s, (int)toks[4].n, toks[4].s);
  uint64_t rng = seed ^ 0x5eed0f1e5ull;
  uint8_t x[8];
  for (uint32_t i = 0; i < a->count; i++) {
    range_element(a->type, &rng, e, e2, x);
    vyre__sb_append(a->b, x, a->size);
  }
  return VYRE_OK;
}

/* One row per generator: its name, what runs it, and the word holding
 * its element count (0: it takes none; 2: after the seed). */
static const struct generator {
  const char *name;
  vyre_status (*run)(const gen_args *a);
  uint32_t count_at;
} generators[] = {
    {"values", gen_values, 0}, {"hex", gen_hex, 0},       {"zeros", gen_zeros, 1},
    {"fill", gen_fill, 1},     {"iota", gen_iota, 1},     {"random", gen_random, 2},
    {"range", gen_range, 2},
};

/* Room for exactly `extra` more bytes (and the NUL strbuf keeps): a
 * 256 MiB input must cost 256 MiB, not the 512 MiB of strbuf's doubling.
 * 0 when out of memory (b->failed is set). */
static int reserve_exact(strbuf *b, uint64_t extra) {
  if (b->failed) return 0;
  if (b->len + extra + 1 <= b->cap) return 1;
  char *grown = realloc(b->data, (size_t)(b->len + extra + 1));
  if (!grown) {
    b->failed = 1;
    return 0;
  }
  b->data = grown;
  b->cap = (size_t)(b->len + extra + 1);
  return 1;
}

/* The bytes a generator line makes, known before it runs: count x size,
 * or for values and hex what their words give. */
static uint64_t generated_bytes(const struct generator *g, const gen_args *a) {
  if (!g || g->count_at) return (uint64_t)a->count * a->size;
  if (g->run == gen_values) return (uint64_t)(a->n - 1) * a->size;
  uint64_t bytes = 0;
  for (uint32_t i = 1; i < a->n; i++) bytes += a->toks[i].n / 2;
  return bytes;
}

vyre_status cf_generate(cf_parse_ctx *px, uint32_t type, const cf_tok *toks, uint32_t n,
                        strbuf *b) {
  gen_args a = {px, type, vyre_type_size(type), 0, toks, n, b};
  const struct generator *g = NULL;
  for (size_t i = 0; i < sizeof generators / sizeof generators[0] && !g; i++)
    if (cf_word_is(toks[0].s, toks[0].n, generators[i].name)) g = &generators[i];
  /* The count is word 1, or word 2 after the seed of random/range: a line
   * one word short has no such word (toks past n are stale or unset).  An
   * unknown generator is read as one with a count at word 1. */
  uint32_t at = g ? g->count_at : 1;
  if (at) {
    if (n <= at || cf_tok_u32(&toks[at], &a.count) != 0) return usage(&a);
    if (a.count > CF_MAX_GENERATED)
      return cf_parse_error(px, VYRE_LIMIT, "%u elements is more than the %u a generator makes. "
                            "Fix: use fewer", a.count, CF_MAX_GENERATED);
  }
  if (!g) return usage(&a);
  /* Every generator's bytes are counted against the case's bound before
   * a byte is allocated, and then allocated once. */
  uint64_t bytes = generated_bytes(g, &a);
  if (px->data + bytes > CF_MAX_CASE_DATA)
    return cf_parse_error(px, VYRE_LIMIT, "this line's %llu bytes make the case's data more than "
                          "%llu bytes (%llu before it). Fix: generate less",
                          (unsigned long long)bytes, (unsigned long long)CF_MAX_CASE_DATA,
                          (unsigned long long)px->data);
  if (!reserve_exact(b, bytes))
    return cf_parse_error(px, VYRE_OUT_OF_MEMORY, "out of memory for %llu bytes of data. Fix: "
                          "generate less, or free memory", (unsigned long long)bytes);
  return g->run(&a);
}
