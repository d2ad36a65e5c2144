/* suite.c -- the nine workloads: deterministic data, the multithreaded C baseline of each, and how its outputs are compared (bench/workloads/README.md). */
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC optimize("O3") /* the baselines are compiled as a tuned CPU build would be */
#endif
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "abi/support/prng.h"
#include "workloads.h"

#define FULL_ITEMS (1u << 20)

/* Hot baseline loops get an AVX2 clone picked at load time (GCC ifunc),
 * so the binary still runs on any x86-64.  Not under ThreadSanitizer: the
 * ifunc resolver runs during relocation, before the TSan runtime is set
 * up, and its instrumented entry crashes the program at load. */
#if defined(__GNUC__) && !defined(__clang__) && defined(__x86_64__) && !defined(__SANITIZE_THREAD__)
#define WL_SIMD __attribute__((target_clones("avx2", "default")))
#else
#define WL_SIMD
#endif

/* Items at `scale`: a multiple of 256, at least 256. */
static uint32_t scaled(uint32_t full, double scale) {
  double v = (double)full * scale;
  uint32_t n = v < 256 ? 256u : (uint32_t)v;
  return (n + 255u) & ~255u;
}

static uint32_t rnd32(uint64_t *s) { return (uint32_t)(vyre__splitmix64(s) >> 32); }

static void set_var(wl_instance *w, const char *name, uint64_t value) {
  w->var_name[w->var_count] = name;
  w->var_value[w->var_count++] = value;
}

static void add_buf(wl_instance *w, const void *data, uint64_t size, int is_output, int clear) {
  w->buf[w->buf_count++] = (wl_buffer){size, data, is_output, clear};
  if (data) w->input_bytes += size;
}

/* The state of most workloads: up to four arrays the instance owns. */
typedef struct arrays {
  void *a[4];
} arrays;

static arrays *arrays_new(wl_instance *w, const uint64_t sizes[4]) {
  arrays *s = calloc(1, sizeof *s);
  if (!s) return NULL;
  w->state = s;
  for (int i = 0; i < 4; i++)
    if (sizes[i] && !(s->a[i] = calloc(1, sizes[i]))) return NULL;
  return s;
}

static void release_common(wl_instance *w) {
  arrays *s = w->state;
  if (s)
    for (int i = 0; i < 4; i++) free(s->a[i]);
  free(s);
  for (int k = 0; k < WL_MAX_BUFFERS; k++) free(w->expect[k]);
  free(w->scratch);
  memset(w, 0, sizeof *w);
}

/* expect[k] for every output, sized like its buffer. */
static int alloc_expect(wl_instance *w) {
  uint32_t k = 0;
  for (uint32_t i = 0; i < w->buf_count; i++)
    if (w->buf[i].is_output && !(w->expect[k++] = calloc(1, w->buf[i].size))) return -1;
  return 0;
}

/* ================================================================== */
/* rule_eval: 32 rules over 8 match counts and a size                   */
/* ================================================================== */
typedef struct rule {
  uint8_t a, b, c, lut, ta, tb, tc;
  uint32_t smin, smax;
} rule;

/* Truth tables (bit A + 2B + 4C) of the expressions rules use. */
static const uint8_t rule_luts[8] = {
    0xa8, /* A & (B | C) */
    0x08, /* A & B & !C */
    0xe0, /* (A | B) & C */
    0x22, /* A & !B */
    0xfe, /* A | B | C */
    0x66, /* A ^ B */
    0xe8, /* at least two of A, B, C */
    0x44, /* !A & B */
};

static int rule_eval_gen(wl_instance *w, double scale) {
  uint32_t n = scaled(FULL_ITEMS, scale);
  arrays *s = arrays_new(w, (uint64_t[4]){(uint64_t)n * 12, 128 * 4, 0, 0});
  if (!s) return -1;
  uint32_t *items = s->a[0], *rules = s->a[1];
  uint64_t st = 0x72756c65;
  for (uint32_t i = 0; i < n; i++) {
    uint32_t cw[2] = {0, 0};
    for (int p = 0; p < 8; p++) {
      uint32_t r = rnd32(&st);
      uint32_t cnt = (r & 3) == 0 ? 1 + (r >> 2) % 12 : 0; /* a quarter of patterns hit */
      cw[p / 4] |= cnt << (8 * (p % 4));
    }
    items[3 * i] = cw[0];
    items[3 * i + 1] = cw[1];
    items[3 * i + 2] = 1 + rnd32(&st) % (1u << 20);
  }
  for (int r = 0; r < 32; r++) {
    uint32_t a = rnd32(&st) % 8, b = rnd32(&st) % 8, c = rnd32(&st) % 8, lut = rule_luts[r % 8];
    uint32_t ta = 1 + rnd32(&st) % 3, tb = 1 + rnd32(&st) % 3, tc = 1 + rnd32(&st) % 3;
    uint32_t smin = rnd32(&st) % (1u << 18), smax = smin + (1u << 17) + rnd32(&st) % (1u << 19);
    rules[4 * r] = a | b << 8 | c << 16 | lut << 24;
    rules[4 * r + 1] = ta | tb << 8 | tc << 16;
    rules[4 * r + 2] = smin;
    rules[4 * r + 3] = smax;
  }
  w->items = n;
  w->grid = (n + 2047) / 2048; /* 8 items per invocation */
  set_var(w, "N", n);
  add_buf(w, items, (uint64_t)n * 12, 0, 0);
  add_buf(w, rules, 128 * 4, 0, 0);
  add_buf(w, NULL, (uint64_t)n * 4, 1, 0);
  return alloc_expect(w);
}

typedef struct par_ctx {
  wl_instance *w;
  void *scratch;
  uint32_t phase;
} par_ctx;

/* Items in blocks of RB, counts transposed (one array per pattern), then
 * rule by rule over the block: every inner loop is branch-free and
 * vectorises. */
#define RB 256

/* One rule over a block: a variable shift per item picks the truth-table
 * bit (vpsrlvd); restrict tells the vectoriser the arrays are apart.  Not
 * inlined: GCC vectorises this loop only out of line. */
#if defined(__GNUC__)
__attribute__((noinline))
#endif
WL_SIMD static void rule_apply(uint32_t *restrict m, const uint32_t *restrict ca,
                              const uint32_t *restrict cb, const uint32_t *restrict cc,
                              const uint32_t *restrict sz, uint32_t nb, const rule *q, uint32_t r) {
  uint32_t ta = q->ta, tb = q->tb, tc = q->tc, smin = q->smin, span = q->smax - q->smin, lut = q->lut;
  for (uint32_t i = 0; i < nb; i++) {
    uint32_t idx = (uint32_t)(ca[i] >= ta) | (uint32_t)(cb[i] >= tb) << 1 | (uint32_t)(cc[i] >= tc) << 2;
    m[i] |= ((lut >> idx) & (uint32_t)(sz[i] - smin <= span) & 1) << r;
  }
}

WL_SIMD static void rule_eval_block(const uint32_t *items, uint32_t nb, const rule *R,
                                    uint32_t *mask) {
  uint32_t c[8][RB], sz[RB], m[RB];
  for (uint32_t i = 0; i < nb; i++) {
    uint32_t w0 = items[3 * i], w1 = items[3 * i + 1];
    for (int k = 0; k < 4; k++) {
      c[k][i] = (w0 >> (8 * k)) & 255;
      c[k + 4][i] = (w1 >> (8 * k)) & 255;
    }
    sz[i] = items[3 * i + 2];
    m[i] = 0;
  }
  for (uint32_t r = 0; r < 32; r++) {
    const rule *q = &R[r];
    const uint32_t *ca = c[q->a], *cb = c[q->b], *cc = c[q->c];
    rule_apply(m, ca, cb, cc, sz, nb, q, r);
  }
  memcpy(mask, m, (size_t)nb * 4);
}

static void rule_eval_par(void *p, uint32_t tid, uint32_t nt) {
  wl_instance *w = ((par_ctx *)p)->w;
  const uint32_t *items = w->buf[0].data, *rw = w->buf[1].data;
  uint32_t *mask = w->expect[0];
  rule R[32];
  for (int r = 0; r < 32; r++) {
    uint32_t r0 = rw[4 * r], r1 = rw[4 * r + 1];
    R[r] = (rule){r0 & 7, (r0 >> 8) & 7, (r0 >> 16) & 7, (uint8_t)(r0 >> 24),
                  r1 & 255, (r1 >> 8) & 255, (r1 >> 16) & 255, rw[4 * r + 2], rw[4 * r + 3]};
  }
  uint64_t lo, hi;
  wl_chunk(w->items, tid, nt, &lo, &hi);
  for (uint64_t i = lo; i < hi; i += RB) {
    uint32_t nb = hi - i < RB ? (uint32_t)(hi - i) : RB;
    rule_eval_block(items + 3 * i, nb, R, mask + i);
  }
}

static void rule_eval_base(wl_instance *w, wl_pool *pool) {
  par_ctx c = {w, NULL, 0};
  wl_pool_run(pool, rule_eval_par, &c);
}

/* ================================================================== */
/* bitmap_scatter: pattern bits and covered-byte bits of match events   */
/* ================================================================== */
static int bitmap_scatter_gen(wl_instance *w, double scale) {
  uint32_t n = scaled(FULL_ITEMS, scale);
  uint32_t mw = n / 2; /* 16 bits of text per event */
  uint64_t span = (uint64_t)mw * 32;
  arrays *s = arrays_new(w, (uint64_t[4]){(uint64_t)n * 12, 0, 0, 0});
  if (!s) return -1;
  uint32_t *ev = s->a[0];
  uint64_t st = 0x62697473;
  for (uint32_t i = 0; i < n; i++) {
    uint32_t r1 = rnd32(&st) & 0xffff, r2 = rnd32(&st) & 0xffff;
    ev[3 * i] = (r1 * r2) >> 16; /* few patterns match often, most rarely */
    ev[3 * i + 1] = (uint32_t)(vyre__splitmix64(&st) % (span - 32));
    ev[3 * i + 2] = 1 + rnd32(&st) % 32;
  }
  w->items = n;
  uint32_t per = 4 * ((n + 527) / 528); /* events per workgroup: 8 per invocation, <= 8192 */
  w->grid = (n + per - 1) / per;         /* 132 at full size: one per SM of an H100/H200 */
  set_var(w, "N", n);
  set_var(w, "MW", mw);
  set_var(w, "R", per);
  set_var(w, "MD", mw / 2); /* pos_bits as u64 words (mw is a multiple of 128) */
  add_buf(w, ev, (uint64_t)n * 12, 0, 0);
  add_buf(w, NULL, 2048 * 4, 1, 1); /* cleared each resident run: the real scatter, not a rerun */
  add_buf(w, NULL, (uint64_t)mw * 4, 1, 1);
  return alloc_expect(w);
}

/* Each thread ORs its events into a private bitmap pair (no atomics: a
 * locked RMW per event costs more than the merge), then the threads OR
 * the private bitmaps together, each a range of words. */
static void bitmap_scatter_par(void *p, uint32_t tid, uint32_t nt) {
  par_ctx *c = p;
  wl_instance *w = c->w;
  uint64_t words = 2048 + w->buf[2].size / 4; /* pat then pos, one array */
  uint32_t *priv = c->scratch;
  uint64_t lo, hi;
  if (c->phase == 0) {
    uint32_t *mine = priv + tid * words, *pat = mine, *pos = mine + 2048;
    memset(mine, 0, words * 4);
    const uint32_t *ev = w->buf[0].data;
    wl_chunk(w->items, tid, nt, &lo, &hi);
    for (uint64_t i = lo; i < hi; i++) {
      uint32_t pt = ev[3 * i], start = ev[3 * i + 1], len = ev[3 * i + 2];
      pat[pt >> 5] |= 1u << (pt & 31);
      uint64_t m = (len == 32 ? 0xffffffffull : (1ull << len) - 1) << (start & 31);
      pos[start >> 5] |= (uint32_t)m;
      pos[(start >> 5) + 1] |= (uint32_t)(m >> 32); /* in range: start < span - 32 */
    }
    return;
  }
  uint32_t *pat = w->expect[0], *pos = w->expect[1];
  wl_chunk(words, tid, nt, &lo, &hi);
  for (uint64_t i = lo; i < hi; i++) {
    uint32_t m = 0;
    for (uint32_t t = 0; t < nt; t++) m |= priv[t * words + i];
    if (i < 2048) pat[i] = m;
    else pos[i - 2048] = m;
  }
}

static void bitmap_scatter_base(wl_instance *w, wl_pool *pool) {
  uint64_t words = 2048 + w->buf[2].size / 4;
  if (!w->scratch) w->scratch = malloc(wl_pool_threads(pool) * words * 4);
  if (!w->scratch) return;
  par_ctx c = {w, w->scratch, 0};
  wl_pool_run(pool, bitmap_scatter_par, &c);
  c.phase = 1;
  wl_pool_run(pool, bitmap_scatter_par, &c);
}

/* ================================================================== */
/* offset_agg: count, length sum, max end, min offset per pattern       */
/* ================================================================== */
#define AGG_PATTERNS 4096

static int offset_agg_gen(wl_instance *w, double scale) {
  uint32_t n = scaled(FULL_ITEMS, scale);
  arrays *s = arrays_new(w, (uint64_t[4]){(uint64_t)n * 12, 0, 0, 0});
  if (!s) return -1;
  uint32_t *rec = s->a[0];
  uint64_t st = 0x61676772;
  for (uint32_t i = 0; i < n; i++) {
    uint32_t p1 = rnd32(&st) % AGG_PATTERNS, p2 = rnd32(&st) % AGG_PATTERNS;
    rec[3 * i] = p1 < p2 ? p1 : p2;
    rec[3 * i + 1] = rnd32(&st) % (1u << 24);
    rec[3 * i + 2] = 1 + rnd32(&st) % 256;
  }
  w->items = n;
  uint32_t per = 4 * ((n + 527) / 528); /* records per workgroup: 8 per invocation, <= 8192 */
  w->grid = (n + per - 1) / per;         /* 132 at full size: one per SM of an H100/H200 */
  set_var(w, "N", n);
  set_var(w, "R", per);
  add_buf(w, rec, (uint64_t)n * 12, 0, 0);
  add_buf(w, NULL, AGG_PATTERNS * 16, 1, 1);
  return alloc_expect(w);
}

static void offset_agg_par(void *p, uint32_t tid, uint32_t nt) {
  par_ctx *c = p;
  wl_instance *w = c->w;
  uint32_t *priv = c->scratch; /* per thread: AGG_PATTERNS x 4 */
  uint64_t lo, hi;
  if (c->phase == 0) {
    uint32_t *mine = priv + (size_t)tid * AGG_PATTERNS * 4;
    memset(mine, 0, AGG_PATTERNS * 16);
    const uint32_t *rec = w->buf[0].data;
    wl_chunk(w->items, tid, nt, &lo, &hi);
    for (uint64_t i = lo; i < hi; i++) {
      uint32_t *s = mine + 4 * rec[3 * i];
      uint32_t off = rec[3 * i + 1], len = rec[3 * i + 2], end = off + len, inv = ~off;
      s[0]++;
      s[1] += len;
      if (end > s[2]) s[2] = end;
      if (inv > s[3]) s[3] = inv;
    }
    return;
  }
  uint32_t *out = w->expect[0];
  wl_chunk(AGG_PATTERNS, tid, nt, &lo, &hi);
  for (uint64_t q = lo; q < hi; q++) {
    uint32_t a = 0, b = 0, e = 0, f = 0;
    for (uint32_t t = 0; t < nt; t++) {
      const uint32_t *s = priv + ((size_t)t * AGG_PATTERNS + q) * 4;
      a += s[0];
      b += s[1];
      if (s[2] > e) e = s[2];
      if (s[3] > f) f = s[3];
    }
    out[4 * q] = a;
    out[4 * q + 1] = b;
    out[4 * q + 2] = e;
    out[4 * q + 3] = f;
  }
}

static void offset_agg_base(wl_instance *w, wl_pool *pool) {
  if (!w->scratch) w->scratch = malloc((size_t)wl_pool_threads(pool) * AGG_PATTERNS * 16);
  if (!w->scratch) return;
  par_ctx c = {w, w->scratch, 0};
  wl_pool_run(pool, offset_agg_par, &c);
  c.phase = 1;
  wl_pool_run(pool, offset_agg_par, &c);
}

/* ================================================================== */
/* entropy: sum_b T[count_b] of every 252-byte window, stride 12       */
/* ================================================================== */
#define ENT_WINDOW_WORDS 63

static int entropy_gen(wl_instance *w, double scale) {
  uint32_t nw = scaled(FULL_ITEMS, scale);
  uint64_t words = (uint64_t)nw * 3 + 60; /* the last window ends at the last byte */
  arrays *s = arrays_new(w, (uint64_t[4]){words * 4, 256 * 4, 0, 0});
  if (!s) return -1;
  uint8_t *bytes = s->a[0];
  uint32_t *dt = s->a[1];
  uint64_t st = 0x656e7470;
  static const char text[] = "etaoinshrdlu cmfwypvbgkjqxz ETAOIN.,\n0123456789";
  /* 4 KiB regions: compressed-looking random bytes, text, sparse zeros. */
  for (uint64_t at = 0; at < words * 4; at += 4096) {
    uint32_t kind = rnd32(&st) % 3;
    uint64_t end = at + 4096 < words * 4 ? at + 4096 : words * 4;
    for (uint64_t i = at; i < end; i++) {
      uint32_t r = rnd32(&st);
      bytes[i] = kind == 0   ? (uint8_t)r
                 : kind == 1 ? (uint8_t)text[(r >> 8) % (sizeof text - 1)]
                             : ((r & 15) == 0 ? (uint8_t)(r >> 8) : 0);
    }
  }
  uint32_t T[257];
  for (uint32_t c = 0; c <= 256; c++) T[c] = c < 2 ? 0 : (uint32_t)llround(c * log2(c) * 65536.0);
  for (uint32_t c = 0; c < 256; c++) dt[c] = T[c + 1] - T[c];
  w->items = nw;
  w->grid = (nw / 32 + 63) / 64; /* 32 windows an invocation, 64 a workgroup */
  set_var(w, "NW", nw);
  add_buf(w, bytes, words * 4, 0, 0);
  add_buf(w, dt, 256 * 4, 0, 0);
  add_buf(w, NULL, (uint64_t)nw * 2, 1, 0); /* u16: the sum >> 11 */
  return alloc_expect(w);
}

static void entropy_par(void *p, uint32_t tid, uint32_t nt) {
  wl_instance *w = ((par_ctx *)p)->w;
  const uint8_t *bytes = w->buf[0].data;
  const uint32_t *dt = w->buf[1].data;
  uint16_t *ent = w->expect[0];
  uint64_t lo, hi;
  wl_chunk(w->items, tid, nt, &lo, &hi);
  if (lo >= hi) return;
  uint8_t h[256];
  memset(h, 0, sizeof h);
  uint32_t sum = 0;
  const uint8_t *b = bytes + lo * 12;
  for (int i = 0; i < ENT_WINDOW_WORDS * 4; i++) sum += dt[h[b[i]]++];
  ent[lo] = (uint16_t)(sum >> 11);
  for (uint64_t win = lo + 1; win < hi; win++) {
    const uint8_t *out = bytes + (win - 1) * 12, *in = out + ENT_WINDOW_WORDS * 4;
    for (int i = 0; i < 12; i++) {
      sum -= dt[--h[out[i]]];
      sum += dt[h[in[i]]++];
    }
    ent[win] = (uint16_t)(sum >> 11);
  }
}

static void entropy_base(wl_instance *w, wl_pool *pool) {
  par_ctx c = {w, NULL, 0};
  wl_pool_run(pool, entropy_par, &c);
}

/* ================================================================== */
/* quantified: 16 "k of / all of / none of / exactly k" conditions      */
/* ================================================================== */
static int quantified_gen(wl_instance *w, double scale) {
  uint32_t n = scaled(FULL_ITEMS, scale);
  arrays *s = arrays_new(w, (uint64_t[4]){(uint64_t)n * 12, 32 * 4, 0, 0});
  if (!s) return -1;
  uint16_t *off = s->a[0];
  uint32_t *cond = s->a[1];
  uint64_t st = 0x7175616e;
  for (uint64_t i = 0; i < (uint64_t)n * 6; i++) {
    uint32_t r = rnd32(&st);
    off[i] = (r & 7) < 5 ? (uint16_t)((r >> 8) % 4096) : 0xffff; /* 5 in 8 present */
  }
  for (uint32_t q = 0; q < 16; q++) {
    uint32_t lo = rnd32(&st) % 2048, hi = lo + 1024 + rnd32(&st) % 2048;
    uint32_t kind = q % 4, k = kind == 3 ? 2 + rnd32(&st) % 4 : 1 + rnd32(&st) % 3;
    cond[2 * q] = lo | hi << 16;
    cond[2 * q + 1] = k | kind << 16;
  }
  w->items = n;
  w->grid = (n + 2047) / 2048; /* 8 items per invocation */
  set_var(w, "N", n);
  add_buf(w, off, (uint64_t)n * 12, 0, 0);
  add_buf(w, cond, 32 * 4, 0, 0);
  add_buf(w, NULL, (uint64_t)n * 2, 1, 0);
  return alloc_expect(w);
}

/* Blocks of QB items, offsets transposed; lo <= o < hi is one unsigned
 * compare, o - lo < hi - lo, which also rejects an absent 0xffff since
 * hi <= 0xffff. */
#define QB 256

typedef struct qcond {
  uint32_t lo, span, k, kind;
} qcond;

WL_SIMD static void quantified_block(const uint16_t *off, uint32_t nb, const qcond *Q,
                                     uint16_t *mask) {
  uint32_t o[6][QB], pres[QB], m[QB], in[QB];
  for (uint32_t i = 0; i < nb; i++) {
    uint32_t p = 0;
    for (int j = 0; j < 6; j++) {
      o[j][i] = off[6 * i + j];
      p += o[j][i] != 0xffff;
    }
    pres[i] = p;
    m[i] = 0;
  }
  for (uint32_t q = 0; q < 16; q++) {
    uint32_t lo = Q[q].lo, span = Q[q].span, k = Q[q].k;
    if (Q[q].kind == 3) {
      for (uint32_t i = 0; i < nb; i++) m[i] |= (uint32_t)(pres[i] == k) << q;
      continue;
    }
    for (uint32_t i = 0; i < nb; i++) {
      uint32_t c = 0;
      for (int j = 0; j < 6; j++) c += o[j][i] - lo < span;
      in[i] = c;
    }
    switch (Q[q].kind) {
    case 0:
      for (uint32_t i = 0; i < nb; i++) m[i] |= (uint32_t)(in[i] >= k) << q;
      break;
    case 1:
      for (uint32_t i = 0; i < nb; i++) m[i] |= (uint32_t)(in[i] == 6) << q;
      break;
    default:
      for (uint32_t i = 0; i < nb; i++) m[i] |= (uint32_t)(in[i] == 0) << q;
      break;
    }
  }
  for (uint32_t i = 0; i < nb; i++) mask[i] = (uint16_t)m[i];
}

static void quantified_par(void *p, uint32_t tid, uint32_t nt) {
  wl_instance *w = ((par_ctx *)p)->w;
  const uint16_t *off = w->buf[0].data;
  const uint32_t *cond = w->buf[1].data;
  uint16_t *mask = w->expect[0];
  qcond Q[16];
  for (int q = 0; q < 16; q++) {
    uint32_t lo = cond[2 * q] & 0xffff, hi = cond[2 * q] >> 16;
    Q[q] = (qcond){lo, hi > lo ? hi - lo : 0, cond[2 * q + 1] & 0xffff, cond[2 * q + 1] >> 16};
  }
  uint64_t lo, hi;
  wl_chunk(w->items, tid, nt, &lo, &hi);
  for (uint64_t i = lo; i < hi; i += QB) {
    uint32_t nb = hi - i < QB ? (uint32_t)(hi - i) : QB;
    quantified_block(off + 6 * i, nb, Q, mask + i);
  }
}

static void quantified_base(wl_instance *w, wl_pool *pool) {
  par_ctx c = {w, NULL, 0};
  wl_pool_run(pool, quantified_par, &c);
}

/* ================================================================== */
/* compaction: the indices of the records that pass, packed             */
/* ================================================================== */
static int compaction_gen(wl_instance *w, double scale) {
  uint32_t n = scaled(FULL_ITEMS, scale);
  arrays *s = arrays_new(w, (uint64_t[4]){(uint64_t)n * 12, 16, 0, 0});
  if (!s) return -1;
  uint32_t *rec = s->a[0], *par = s->a[1];
  uint64_t st = 0x636f6d70;
  for (uint32_t i = 0; i < n; i++) {
    rec[3 * i] = rnd32(&st);
    rec[3 * i + 1] = rnd32(&st) % 1000;
    rec[3 * i + 2] = rnd32(&st) & 0xff;
  }
  par[0] = 700; /* 30% of scores ... */
  par[1] = 0x3; /* ... and a quarter of flags: 7.5% kept */
  par[2] = 0x1;
  w->items = n;
  set_var(w, "N", n);
  set_var(w, "CAP", n / 4);
  w->grid = (n + 1023) / 1024; /* four records per invocation */
  add_buf(w, rec, (uint64_t)n * 12, 0, 0);
  add_buf(w, par, 16, 0, 0);
  add_buf(w, NULL, 4, 1, 1);
  add_buf(w, NULL, (uint64_t)n, 1, 0); /* n / 4 indices */
  return alloc_expect(w);
}

static void compaction_par(void *p, uint32_t tid, uint32_t nt) {
  par_ctx *c = p;
  wl_instance *w = c->w;
  uint32_t *counts = c->scratch; /* per thread, then its first slot */
  const uint32_t *rec = w->buf[0].data, *par = w->buf[1].data;
  uint32_t minv = par[0], fm = par[1], fw = par[2];
  uint64_t lo, hi;
  wl_chunk(w->items, tid, nt, &lo, &hi);
  if (c->phase == 0) {
    uint32_t k = 0;
    for (uint64_t i = lo; i < hi; i++) k += (rec[3 * i + 1] >= minv) & ((rec[3 * i + 2] & fm) == fw);
    counts[tid] = k;
    return;
  }
  uint32_t *out = (uint32_t *)w->expect[1] + counts[tid];
  for (uint64_t i = lo; i < hi; i++)
    if ((rec[3 * i + 1] >= minv) & ((rec[3 * i + 2] & fm) == fw)) *out++ = (uint32_t)i;
}

static void compaction_base(wl_instance *w, wl_pool *pool) {
  uint32_t nt = wl_pool_threads(pool);
  if (!w->scratch) w->scratch = calloc(nt + 1, 4);
  if (!w->scratch) return;
  uint32_t *counts = w->scratch;
  par_ctx c = {w, counts, 0};
  wl_pool_run(pool, compaction_par, &c);
  uint32_t run = 0;
  for (uint32_t t = 0; t < nt; t++) {
    uint32_t k = counts[t];
    counts[t] = run;
    run += k;
  }
  *(uint32_t *)w->expect[0] = run;
  c.phase = 1;
  wl_pool_run(pool, compaction_par, &c);
}

static int cmp_u32(const void *a, const void *b) {
  uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
  return x < y ? -1 : x > y;
}

/* The GPU list is in workgroup-claim order: compare it sorted. */
static int compaction_check(const wl_instance *w, void *const *got, char *why, size_t why_size) {
  uint32_t want = *(const uint32_t *)w->expect[0], have = *(const uint32_t *)got[0];
  if (have != want) {
    snprintf(why, why_size, "count is %u, the baseline's %u", have, want);
    return -1;
  }
  if (have > w->buf[3].size / 4) {
    snprintf(why, why_size, "%u kept, over the output's %llu slots", have,
             (unsigned long long)(w->buf[3].size / 4));
    return -1;
  }
  qsort(got[1], have, 4, cmp_u32);
  const uint32_t *g = got[1], *e = w->expect[1];
  for (uint32_t i = 0; i < have; i++)
    if (g[i] != e[i]) {
      snprintf(why, why_size, "sorted index %u is %u, the baseline's %u", i, g[i], e[i]);
      return -1;
    }
  return 0;
}

/* ================================================================== */
/* reach: one BFS step over a call graph in CSR form                    */
/* ================================================================== */
static int reach_gen(wl_instance *w, double scale) {
  uint32_t v = scaled(FULL_ITEMS, scale) / 4, vw = v / 32;
  uint64_t st = 0x72656163;
  uint32_t *deg = malloc((size_t)v * 4);
  if (!deg) return -1;
  uint64_t e = 0;
  for (uint32_t u = 0; u < v; u++) {
    uint32_t r = rnd32(&st);
    deg[u] = r % 20 == 0 ? 16 + (r >> 8) % 240 : 1 + (r >> 8) % 8; /* a few callers call many */
    e += deg[u];
  }
  arrays *s = arrays_new(w, (uint64_t[4]){((uint64_t)v + 1) * 4, e * 4, (uint64_t)vw * 4, (uint64_t)vw * 4});
  if (!s) {
    free(deg);
    return -1;
  }
  uint32_t *row = s->a[0], *col = s->a[1], *front = s->a[2], *vis = s->a[3];
  uint32_t at = 0;
  for (uint32_t u = 0; u < v; u++) {
    row[u] = at;
    for (uint32_t k = 0; k < deg[u]; k++) {
      uint32_t r = rnd32(&st);
      /* a fifth of calls go to the 1 in 256 nodes that are hubs (logging, alloc) */
      col[at++] = r % 5 == 0 ? (rnd32(&st) % (v / 256)) * 256 : rnd32(&st) % v;
    }
  }
  row[v] = at;
  free(deg);
  for (uint32_t u = 0; u < v; u++) {
    uint32_t r = rnd32(&st) % 100;
    if (r < 15) front[u >> 5] |= 1u << (u & 31);
    if (r < 35) vis[u >> 5] |= 1u << (u & 31);
  }
  w->items = v;
  w->grid = (v + 255) / 256; /* one invocation per node */
  set_var(w, "V", v);
  set_var(w, "VW", vw);
  add_buf(w, row, ((uint64_t)v + 1) * 4, 0, 0);
  add_buf(w, col, e * 4, 0, 0);
  add_buf(w, front, (uint64_t)vw * 4, 0, 0);
  add_buf(w, vis, (uint64_t)vw * 4, 0, 0);
  add_buf(w, NULL, (uint64_t)vw * 4, 1, 1); /* cleared each resident run */
  return alloc_expect(w);
}

static void reach_par(void *p, uint32_t tid, uint32_t nt) {
  par_ctx *c = p;
  wl_instance *w = c->w;
  uint32_t vw = (uint32_t)(w->buf[2].size / 4);
  uint32_t *priv = c->scratch;
  uint64_t lo, hi;
  if (c->phase == 0) {
    uint32_t *mine = priv + (size_t)tid * vw;
    memset(mine, 0, (size_t)vw * 4);
    const uint32_t *row = w->buf[0].data, *col = w->buf[1].data, *front = w->buf[2].data,
                   *vis = w->buf[3].data;
    wl_chunk(vw, tid, nt, &lo, &hi); /* by frontier word: 32 nodes at a time */
    for (uint64_t fw = lo; fw < hi; fw++) {
      for (uint32_t bits = front[fw]; bits; bits &= bits - 1) {
        uint32_t u = (uint32_t)fw * 32 + (uint32_t)__builtin_ctz(bits);
        for (uint32_t k = row[u]; k < row[u + 1]; k++) {
          uint32_t t = col[k], bit = 1u << (t & 31);
          if (!(vis[t >> 5] & bit)) mine[t >> 5] |= bit;
        }
      }
    }
    return;
  }
  uint32_t *next = w->expect[0];
  wl_chunk(vw, tid, nt, &lo, &hi);
  for (uint64_t i = lo; i < hi; i++) {
    uint32_t m = 0;
    for (uint32_t t = 0; t < nt; t++) m |= priv[(size_t)t * vw + i];
    next[i] = m;
  }
}

static void reach_base(wl_instance *w, wl_pool *pool) {
  uint32_t vw = (uint32_t)(w->buf[2].size / 4);
  if (!w->scratch) w->scratch = malloc((size_t)wl_pool_threads(pool) * vw * 4); /* per thread: next */
  if (!w->scratch) return;
  par_ctx c = {w, w->scratch, 0};
  wl_pool_run(pool, reach_par, &c);
  c.phase = 1;
  wl_pool_run(pool, reach_par, &c);
}

/* ================================================================== */
/* fused_filter: size, flags and a Bloom filter, as a bitmap            */
/* ================================================================== */
#define BLOOM_BITS (1u << 19)

static uint32_t bloom_h2(uint32_t hash) {
  uint32_t m = hash * 0x9e3779b1u;
  uint32_t r = (m << 15) | (m >> 17);
  return r ? r : 1;
}

static int fused_filter_gen(wl_instance *w, double scale) {
  uint32_t n = scaled(FULL_ITEMS, scale);
  arrays *s = arrays_new(w, (uint64_t[4]){(uint64_t)n * 12, 16, BLOOM_BITS / 8, 50000 * 4});
  if (!s) return -1;
  uint32_t *it = s->a[0], *par = s->a[1], *bloom = s->a[2], *keys = s->a[3];
  uint64_t st = 0x66696c74;
  for (int k = 0; k < 50000; k++) {
    uint32_t h = keys[k] = rnd32(&st), h2 = bloom_h2(h);
    for (uint32_t j = 0; j < 3; j++) {
      uint32_t b = (h + j * h2) & (BLOOM_BITS - 1);
      bloom[b >> 5] |= 1u << (b & 31);
    }
  }
  for (uint32_t i = 0; i < n; i++) {
    it[3 * i] = rnd32(&st) % (1u << 20);
    it[3 * i + 1] = rnd32(&st) & 0xffff;
    uint32_t r = rnd32(&st);
    it[3 * i + 2] = r % 10 < 3 ? keys[(r >> 8) % 50000] : rnd32(&st); /* 30% known hashes */
  }
  par[0] = 1000;
  par[1] = 900000;
  par[2] = 0x5;
  par[3] = 0x100;
  w->items = n;
  w->grid = (n + 1023) / 1024; /* four items per invocation */
  set_var(w, "N", n);
  set_var(w, "NW", n / 32);
  add_buf(w, it, (uint64_t)n * 12, 0, 0);
  add_buf(w, par, 16, 0, 0);
  add_buf(w, bloom, BLOOM_BITS / 8, 0, 0);
  add_buf(w, NULL, (uint64_t)n / 8, 1, 0);
  return alloc_expect(w);
}

/* Branch-free: the flags are random, so short-circuit branches would
 * mispredict; the three probes hit a 64 KB table that stays in cache. */
WL_SIMD static uint32_t fused_filter_word(const uint32_t *x, const uint32_t *par,
                                          const uint32_t *bloom) {
  uint32_t smin = par[0], span = par[1] - par[0], must = par[2], mnot = par[3], word = 0;
  for (uint32_t l = 0; l < 32; l++, x += 3) {
    uint32_t h = x[2], m = h * 0x9e3779b1u, r = (m << 15) | (m >> 17), h2 = r ? r : 1;
    uint32_t b0 = h & (BLOOM_BITS - 1), b1 = (h + h2) & (BLOOM_BITS - 1),
             b2 = (h + 2 * h2) & (BLOOM_BITS - 1);
    uint32_t ok = (x[0] - smin <= span) & ((x[1] & must) == must) & ((x[1] & mnot) == 0);
    ok &= (bloom[b0 >> 5] >> (b0 & 31)) & (bloom[b1 >> 5] >> (b1 & 31)) & (bloom[b2 >> 5] >> (b2 & 31));
    word |= (ok & 1) << l;
  }
  return word;
}

static void fused_filter_par(void *p, uint32_t tid, uint32_t nt) {
  wl_instance *w = ((par_ctx *)p)->w;
  const uint32_t *it = w->buf[0].data, *par = w->buf[1].data, *bloom = w->buf[2].data;
  uint32_t *pass = w->expect[0];
  uint64_t lo, hi;
  wl_chunk(w->items / 32, tid, nt, &lo, &hi);
  for (uint64_t wi = lo; wi < hi; wi++) pass[wi] = fused_filter_word(it + 3 * wi * 32, par, bloom);
}

static void fused_filter_base(wl_instance *w, wl_pool *pool) {
  par_ctx c = {w, NULL, 0};
  wl_pool_run(pool, fused_filter_par, &c);
}

/* ================================================================== */
/* int4_linear: y = W x, INT4 weights in groups of 128 with f32 scales  */
/* ================================================================== */
#define I4_OUT 256
#define I4_IN 4096
#define I4_GROUPS (I4_IN / 128)

static int int4_linear_gen(wl_instance *w, double scale) {
  (void)scale; /* 1M MACs is small at any scale */
  arrays *s = arrays_new(w, (uint64_t[4]){I4_OUT * I4_IN / 2, I4_IN, I4_OUT * I4_GROUPS * 4, 0});
  if (!s) return -1;
  uint32_t *wt = s->a[0], *x = s->a[1];
  float *sc = s->a[2];
  uint64_t st = 0x696e7434;
  for (uint32_t i = 0; i < I4_OUT * I4_IN / 8; i++) wt[i] = rnd32(&st);
  for (uint32_t i = 0; i < I4_IN / 4; i++) x[i] = rnd32(&st);
  for (uint32_t i = 0; i < I4_OUT * I4_GROUPS; i++) sc[i] = (float)(1 + rnd32(&st) % 1000) / 65536.0f;
  w->items = (uint64_t)I4_OUT * I4_IN;
  w->grid = I4_OUT;
  add_buf(w, wt, I4_OUT * I4_IN / 2, 0, 0);
  add_buf(w, x, I4_IN, 0, 0);
  add_buf(w, sc, I4_OUT * I4_GROUPS * 4, 0, 0);
  add_buf(w, NULL, I4_OUT * 4, 1, 0);
  return alloc_expect(w);
}

/* One row: its nibbles unpacked to int16, then 32 group dots of 128
 * int16 products (pmaddwd), summed in the program's order. */
WL_SIMD static float int4_row(const uint8_t *row, const int16_t *x, const float *sc) {
  int16_t wv[I4_IN];
  for (uint32_t b = 0; b < I4_IN / 2; b++) {
    wv[2 * b] = (int16_t)((int8_t)(uint8_t)(row[b] << 4) >> 4);
    wv[2 * b + 1] = (int16_t)((int8_t)row[b] >> 4);
  }
  float acc = 0.0f;
  for (uint32_t g = 0; g < I4_GROUPS; g++) {
    int32_t dot = 0;
    for (uint32_t k = g * 128; k < g * 128 + 128; k++) dot += (int32_t)wv[k] * x[k];
    acc = fmaf(sc[g], (float)dot, acc); /* one rounding each, as the program */
  }
  return acc;
}

static void int4_linear_par(void *p, uint32_t tid, uint32_t nt) {
  wl_instance *w = ((par_ctx *)p)->w;
  const uint8_t *wt = w->buf[0].data;
  const int8_t *x8 = w->buf[1].data;
  const float *sc = w->buf[2].data;
  float *y = w->expect[0];
  int16_t x[I4_IN];
  for (uint32_t k = 0; k < I4_IN; k++) x[k] = x8[k];
  uint64_t lo, hi;
  wl_chunk(I4_OUT, tid, nt, &lo, &hi);
  for (uint64_t o = lo; o < hi; o++) y[o] = int4_row(wt + o * (I4_IN / 2), x, sc + o * I4_GROUPS);
}

static void int4_linear_base(wl_instance *w, wl_pool *pool) {
  par_ctx c = {w, NULL, 0};
  wl_pool_run(pool, int4_linear_par, &c);
}

/* ================================================================== */
const wl_workload wl_suite[] = {
    {"rule_eval", "rule-condition evaluation: 32 rules over 8 match counts + size", rule_eval_gen,
     rule_eval_base, NULL, release_common},
    {"bitmap_scatter", "string/pattern bitmap scatter: pattern + covered-byte bits", bitmap_scatter_gen,
     bitmap_scatter_base, NULL, release_common},
    {"offset_agg", "offset/count aggregation per pattern (4096)", offset_agg_gen, offset_agg_base,
     NULL, release_common},
    {"entropy", "rolling-window byte entropy (252 B windows, stride 12)", entropy_gen, entropy_base,
     NULL, release_common},
    {"quantified", "quantified condition loops: 16 conditions x 6 offsets", quantified_gen,
     quantified_base, NULL, release_common},
    {"compaction", "sparse output compaction (7.5% kept)", compaction_gen, compaction_base,
     compaction_check, release_common},
    {"reach", "call-graph reachability step, CSR", reach_gen, reach_base, NULL, release_common},
    {"fused_filter", "fused compound filter: size, flags, Bloom, as a bitmap", fused_filter_gen,
     fused_filter_base, NULL, release_common},
    {"int4_linear", "grouped INT4 linear, 256 x 4096 (1M MAC)", int4_linear_gen, int4_linear_base,
     NULL, release_common},
};
const uint32_t wl_suite_count = sizeof wl_suite / sizeof wl_suite[0];
