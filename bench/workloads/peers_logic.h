/* peers_logic.h -- the arithmetic of the CUDA peers' kernels, one item at a time, in C that compiles both as CUDA device code (peers_kernels.cu) and as host C (peer_logic_test.c checks it against the C baselines without a GPU). */
#ifndef VYRE_BENCH_PEERS_LOGIC_H
#define VYRE_BENCH_PEERS_LOGIC_H

#include <stdint.h>

#ifdef __CUDACC__
#define WLP_HD __host__ __device__ __forceinline__
#else
#include <math.h>
#define WLP_HD static inline
#endif

/* ------------------------------------------------------------------ */
/* Intrinsics, with host versions of the same bits                     */
/* ------------------------------------------------------------------ */
/* Byte n of the result is byte (s >> 4n) & 7 of the 8 bytes {b, a};
 * selectors here never set bit 3 of a nibble. */
WLP_HD uint32_t wlp_prmt(uint32_t a, uint32_t b, uint32_t s) {
#ifdef __CUDA_ARCH__
  return __byte_perm(a, b, s);
#else
  uint64_t v = (uint64_t)b << 32 | a;
  uint32_t r = 0;
  for (int i = 0; i < 4; i++) r |= (uint32_t)((v >> (8 * ((s >> (4 * i)) & 7))) & 255) << (8 * i);
  return r;
#endif
}

WLP_HD uint32_t wlp_popc(uint32_t x) {
#ifdef __CUDA_ARCH__
  return (uint32_t)__popc(x);
#else
  return (uint32_t)__builtin_popcount(x);
#endif
}

/* c + the dot of a's and b's four signed bytes */
WLP_HD int32_t wlp_dp4a(uint32_t a, uint32_t b, int32_t c) {
#ifdef __CUDA_ARCH__
  return __dp4a((int)a, (int)b, c);
#else
  for (int i = 0; i < 4; i++) c += (int32_t)(int8_t)(a >> (8 * i)) * (int32_t)(int8_t)(b >> (8 * i));
  return c;
#endif
}

WLP_HD uint32_t wlp_rotl15(uint32_t x) {
#ifdef __CUDA_ARCH__
  return __funnelshift_l(x, x, 15);
#else
  return x << 15 | x >> 17;
#endif
}

/* a * b + c rounded once (the program's fma) */
WLP_HD float wlp_fma(float a, float b, float c) {
#ifdef __CUDA_ARCH__
  return __fmaf_rn(a, b, c);
#else
  return fmaf(a, b, c);
#endif
}

/* ------------------------------------------------------------------ */
/* rule_eval: the three count compares of a rule at once (SWAR bytes)   */
/* ------------------------------------------------------------------ */
typedef struct wlp_rule {
  uint32_t sel;  /* PRMT selector: a | b << 4 | c << 8 */
  uint32_t tlo;  /* (ta | tb << 8 | tc << 16) & 0x7f7f7f7f */
  uint32_t nt;   /* ~(ta | tb << 8 | tc << 16) */
  uint32_t lut, smin, smax;
} wlp_rule;

/* Rule r's words (a | b<<8 | c<<16 | lut<<24; ta | tb<<8 | tc<<16; smin; smax). */
WLP_HD wlp_rule wlp_rule_decode(uint32_t r0, uint32_t r1, uint32_t smin, uint32_t smax) {
  wlp_rule q;
  uint32_t t = r1 & 0x00ffffffu;
  q.sel = (r0 & 7) | ((r0 >> 8) & 7) << 4 | ((r0 >> 16) & 7) << 8;
  q.tlo = t & 0x7f7f7f7fu;
  q.nt = ~t;
  q.lut = r0 >> 24;
  q.smin = smin;
  q.smax = smax;
  return q;
}

/* 1 when the rule holds for the item (w0, w1: its 8 counts; size).  The
 * counts a, b, c land in bytes 0-2 by one PRMT; x >= t per byte is the
 * carry out of x + ~t + 1, maj(x, ~t, carry into bit 7), and the carry
 * into bit 7 is bit 7 of (x | 0x80) - (t & 0x7f), which never borrows
 * across bytes.  The three carries (bits 7, 15, 23) move to bits 24-26 by
 * one multiply: bit 7 * 2^17, bit 15 * 2^10, bit 23 * 2^3, with the cross
 * terms below bit 24 or above bit 31. */
WLP_HD uint32_t wlp_rule_hit(const wlp_rule *q, uint32_t w0, uint32_t w1, uint32_t size) {
  uint32_t x = wlp_prmt(w0, w1, q->sel);
  uint32_t d = (x | 0x80808080u) - q->tlo;
  uint32_t ge = ((x & q->nt) | (x & d) | (q->nt & d)) & 0x00808080u;
  uint32_t idx = (ge * 0x20408u) >> 24;
  uint32_t s = (size >= q->smin) & (size <= q->smax);
  return (q->lut >> idx) & s;
}

/* ------------------------------------------------------------------ */
/* quantified                                                           */
/* ------------------------------------------------------------------ */
typedef struct wlp_cond {
  uint32_t lo, span, k, kind;
} wlp_cond;

WLP_HD wlp_cond wlp_cond_decode(uint32_t r0, uint32_t r1) {
  wlp_cond c;
  uint32_t lo = r0 & 0xffff, hi = r0 >> 16;
  c.lo = lo;
  c.span = hi > lo ? hi - lo : 0; /* ssub: saturating */
  c.k = r1 & 0xffff;
  c.kind = r1 >> 16;
  return c;
}

/* How many of the 6 offsets o[] are present (not 0xffff). */
WLP_HD uint32_t wlp_present(const uint32_t o[6]) {
  uint32_t p = 0;
  for (int j = 0; j < 6; j++) p += o[j] != 0xffff;
  return p;
}

/* 1 when the condition holds: m = offsets with o - lo < span (unsigned). */
WLP_HD uint32_t wlp_cond_hit(const wlp_cond *c, const uint32_t o[6], uint32_t present) {
  if (c->kind >= 3) return present == c->k;
  uint32_t m = 0;
  for (int j = 0; j < 6; j++) m += o[j] - c->lo < c->span;
  return c->kind == 0 ? m >= c->k : c->kind == 1 ? m == 6 : m == 0;
}

/* ------------------------------------------------------------------ */
/* fused_filter                                                         */
/* ------------------------------------------------------------------ */
WLP_HD uint32_t wlp_cheap_ok(uint32_t size, uint32_t flags, const uint32_t par[4]) {
  return (size >= par[0]) & (size <= par[1]) & ((flags & par[2]) == par[2]) & ((flags & par[3]) == 0);
}

/* the three Bloom bit positions of a hash */
WLP_HD void wlp_bloom_bits(uint32_t hash, uint32_t p[3]) {
  uint32_t r = wlp_rotl15(hash * 0x9e3779b1u), h2 = r > 1 ? r : 1;
  p[0] = hash & 0x7ffff;
  p[1] = (hash + h2) & 0x7ffff;
  p[2] = (hash + h2 + h2) & 0x7ffff;
}

/* ------------------------------------------------------------------ */
/* int4_linear: group g of a row, 16 weight words and 32 input words    */
/* ------------------------------------------------------------------ */
/* signed nibbles 0, 2, 4, 6 (lo) or 1, 3, 5, 7 (hi) of w as signed bytes:
 * per byte ((n ^ 8) + 0x78) ^ 0x80, which never carries out of the byte */
WLP_HD uint32_t wlp_nibbles_lo(uint32_t w) {
  return (((w & 0x0f0f0f0fu) ^ 0x08080808u) + 0x78787878u) ^ 0x80808080u;
}
WLP_HD uint32_t wlp_nibbles_hi(uint32_t w) { return wlp_nibbles_lo(w >> 4); }

/* c + weight word w (inputs 8j .. 8j + 7) times input words a (8j .. 8j + 3)
 * and b (8j + 4 .. 8j + 7): the even inputs pair with the low nibbles */
WLP_HD int32_t wlp_int4_word(uint32_t w, uint32_t a, uint32_t b, int32_t c) {
  c = wlp_dp4a(wlp_nibbles_lo(w), wlp_prmt(a, b, 0x6420), c);
  return wlp_dp4a(wlp_nibbles_hi(w), wlp_prmt(a, b, 0x7531), c);
}

/* ------------------------------------------------------------------ */
/* bitmap_scatter                                                       */
/* ------------------------------------------------------------------ */
/* the low len bits (shift amounts mod 32, as the program's shl) */
WLP_HD uint32_t wlp_len_mask(uint32_t len) {
  return len == 32 ? 0xffffffffu : (1u << (len & 31)) - 1;
}

#define WLP_PAT_WORDS 2048 /* pat_bits: 65536 pattern bits */
#define WLP_SCAT_T 1024    /* threads a block (the program's workgroup) */

/* the word and bit of an event's pattern (its id's low 16 bits, as the
 * program's and with 0xffff) */
WLP_HD uint32_t wlp_pat_word(uint32_t id) { return (id & 0xffff) >> 5; }
WLP_HD uint32_t wlp_pat_bit(uint32_t id) { return 1u << (id & 31); }

/* bits [start, start + len) of pos_bits read as u64 words (little
 * endian: u64 word d holds u32 words 2d, 2d + 1): *lo in word *sd, *hi
 * in word *sd + 1 (0 when the range ends in word *sd; it fits 32 bits) */
WLP_HD void wlp_cover64(uint32_t start, uint32_t len, uint32_t *sd, uint64_t *lo, uint32_t *hi) {
  uint32_t m = wlp_len_mask(len), sb = start & 63;
  *sd = start >> 6;
  *lo = (uint64_t)m << sb;
  *hi = sb > 32 ? m >> (64 - sb) : 0;
}

/* the private word that thread t of block blk flushes in step k (k = 0,
 * 1): each word once per block, a warp's 32 words one 128-byte line, the
 * start rotated by 17 lines a block so that blocks flushing together hit
 * different lines */
WLP_HD uint32_t wlp_flush_word(uint32_t t, uint32_t k, uint32_t blk) {
  return (t + WLP_SCAT_T * k + 544u * blk) & (WLP_PAT_WORDS - 1);
}

/* ------------------------------------------------------------------ */
/* entropy: a block of WLP_ENT_T threads, WLP_ENT_W windows a thread;   */
/* thread lid's u8 bins at byte (b/4 * WLP_ENT_T + lid) * 4 + b % 4     */
/* ------------------------------------------------------------------ */
#define WLP_ENT_T 64
#ifndef WLP_ENT_W /* windows a thread: 8, 16 or 32 (PEERS_FLAGS=-DWLP_ENT_W=16) */
#define WLP_ENT_W 32
#endif
#if WLP_ENT_W != 8 && WLP_ENT_W != 16 && WLP_ENT_W != 32
/* a power of 2 divides the window count; whole uint4 of results; 48 KiB of
 * static shared memory */
#error "WLP_ENT_W: 8, 16 or 32"
#endif
/* the block's input span in words: 3 a window, plus the last one's 60 */
#define WLP_ENT_SPAN (3 * WLP_ENT_T * WLP_ENT_W + 60)
/* a thread's own words: 3 a window */
#define WLP_ENT_TW (3 * WLP_ENT_W)
/* word i of the span sits in shared memory at i + 4 (i / 96): thread lid
 * starts at 100 lid, so the 8 lanes of each quarter warp of a 16-byte load
 * are on 8 distinct groups of 4 banks (25 lid mod 8 = lid mod 8) */
#define WLP_ENT_STAGE (WLP_ENT_SPAN + 4 * ((WLP_ENT_SPAN - 1) / WLP_ENT_TW) + 4)

WLP_HD uint32_t wlp_ent_pad(uint32_t i) { return i + 4 * (i / WLP_ENT_TW); }

WLP_HD uint8_t *wlp_bin(uint8_t *hb, uint32_t by) {
  return hb + (by & 0xfc) * WLP_ENT_T + (by & 3);
}

/* the 4 bytes of v enter (count + 1, plus dt of the old count) */
WLP_HD uint32_t wlp_ent_in(uint8_t *hb, const uint32_t *t, uint32_t v, uint32_t sum) {
  for (int b = 0; b < 4; b++) {
    uint8_t *bin = wlp_bin(hb, (v >> (8 * b)) & 255);
    uint32_t c = *bin;
    *bin = (uint8_t)(c + 1);
    sum += t[c];
  }
  return sum;
}

/* the 4 bytes of v leave (count - 1, minus dt of the new count); each
 * entered before, so no count goes below 0 */
WLP_HD uint32_t wlp_ent_out(uint8_t *hb, const uint32_t *t, uint32_t v, uint32_t sum) {
  for (int b = 0; b < 4; b++) {
    uint8_t *bin = wlp_bin(hb, (v >> (8 * b)) & 255);
    uint32_t c = *bin - 1u;
    *bin = (uint8_t)c;
    sum -= t[c];
  }
  return sum;
}

/* The same for a word's 4 bytes at once (batch): the 4 bins are loaded
 * before any is stored, and a byte equal to an earlier one of the word
 * counts those first (in: +1 each, out: -1 each); the stores go in
 * order, so a repeated bin ends with the last, right, count.  The chain
 * of dependent shared-memory round trips is then one a word, not one a
 * byte, for 6 compares and adds more. */
WLP_HD void wlp_ent_dups(uint32_t v, uint32_t *d) {
  uint32_t b0 = v & 255, b1 = (v >> 8) & 255, b2 = (v >> 16) & 255, b3 = v >> 24;
  d[0] = 0;
  d[1] = b1 == b0;
  d[2] = (b2 == b0) + (b2 == b1);
  d[3] = (b3 == b0) + (b3 == b1) + (b3 == b2);
}

WLP_HD uint32_t wlp_ent_in4(uint8_t *hb, const uint32_t *t, uint32_t v, uint32_t sum) {
  uint8_t *bin[4];
  uint32_t c[4], d[4];
  for (int b = 0; b < 4; b++) bin[b] = wlp_bin(hb, (v >> (8 * b)) & 255);
  for (int b = 0; b < 4; b++) c[b] = *bin[b];
  wlp_ent_dups(v, d);
  for (int b = 0; b < 4; b++) {
    c[b] += d[b];
    *bin[b] = (uint8_t)(c[b] + 1);
  }
  for (int b = 0; b < 4; b++) sum += t[c[b]];
  return sum;
}

WLP_HD uint32_t wlp_ent_out4(uint8_t *hb, const uint32_t *t, uint32_t v, uint32_t sum) {
  uint8_t *bin[4];
  uint32_t c[4], d[4];
  for (int b = 0; b < 4; b++) bin[b] = wlp_bin(hb, (v >> (8 * b)) & 255);
  for (int b = 0; b < 4; b++) c[b] = *bin[b];
  wlp_ent_dups(v, d);
  for (int b = 0; b < 4; b++) {
    c[b] = c[b] - 1u - d[b];
    *bin[b] = (uint8_t)c[b];
  }
  for (int b = 0; b < 4; b++) sum -= t[c[b]];
  return sum;
}

/* 4 words from the stage, 16-byte aligned: one ld.shared.v4 on the GPU */
WLP_HD void wlp_ent_q(const uint32_t *s, uint32_t *v) {
#ifdef __CUDA_ARCH__
  uint4 q = *(const uint4 *)s;
  v[0] = q.x, v[1] = q.y, v[2] = q.z, v[3] = q.w;
#else
  for (int k = 0; k < 4; k++) v[k] = s[k];
#endif
}

/* One thread's WLP_ENT_W windows from its words in the stage (s: the
 * stage at wlp_ent_pad(3 WLP_ENT_W lid), 100 lid for 32 windows): the
 * first window's words 0-59, then per window w its words 3w + 60 .. 3w + 62
 * enter, the result is kept and its words 3w .. 3w + 2 leave (but the last
 * window's), 4 windows (3 aligned groups each way) a step: for 32 windows
 * 240 + 32 x 12 + 31 x 12 = 996 bin updates (31.1 a window).  r[k] holds
 * the results of windows 2k (low half) and 2k + 1.  batch: a word's bytes
 * at once (wlp_ent_in4), else one by one. */
WLP_HD void wlp_ent_thread(uint8_t *hb, const uint32_t *t, const uint32_t *s, uint32_t *r,
                            int batch) {
  uint32_t sum = 0;
#ifdef __CUDA_ARCH__
#pragma unroll
#endif
  for (uint32_t j = 0; j < 15; j++) {
    uint32_t v[4];
    wlp_ent_q(s + wlp_ent_pad(4 * j), v);
    for (int k = 0; k < 4; k++)
      sum = batch ? wlp_ent_in4(hb, t, v[k], sum) : wlp_ent_in(hb, t, v[k], sum);
  }
#ifdef __CUDA_ARCH__
#pragma unroll
#endif
  for (uint32_t m = 0; m < WLP_ENT_W / 4; m++) {
    uint32_t iv[12], ov[12];
    for (uint32_t g = 0; g < 3; g++) {
      wlp_ent_q(s + wlp_ent_pad(60 + 12 * m + 4 * g), iv + 4 * g);
      wlp_ent_q(s + wlp_ent_pad(12 * m + 4 * g), ov + 4 * g);
    }
    for (int i = 0; i < 4; i++) {
      for (int k = 0; k < 3; k++)
        sum = batch ? wlp_ent_in4(hb, t, iv[3 * i + k], sum)
                    : wlp_ent_in(hb, t, iv[3 * i + k], sum);
      uint32_t e = sum >> 11, w = 4 * m + i;
      r[w / 2] = w % 2 ? r[w / 2] | e << 16 : e;
      if (w + 1 < WLP_ENT_W) /* the last window's words need not leave */
        for (int k = 0; k < 3; k++)
          sum = batch ? wlp_ent_out4(hb, t, ov[3 * i + k], sum)
                      : wlp_ent_out(hb, t, ov[3 * i + k], sum);
    }
  }
}

#endif /* VYRE_BENCH_PEERS_LOGIC_H */
