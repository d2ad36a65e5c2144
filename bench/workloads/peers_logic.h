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
/* entropy: thread lid's u8 bins at byte (b/4 * 128 + lid) * 4 + b % 4  */
/* ------------------------------------------------------------------ */
#define WLP_ENT_T 128

WLP_HD uint8_t *wlp_bin(uint8_t *hb, uint32_t by) { return hb + ((by & 0xfc) << 7) + (by & 3); }

WLP_HD uint32_t wlp_ent_add(uint8_t *hb, const uint32_t *t, uint32_t by, uint32_t sum) {
  uint8_t *bin = wlp_bin(hb, by);
  uint32_t c = *bin;
  *bin = (uint8_t)(c + 1);
  return sum + t[c];
}

/* one word of a slide: per byte, the leaving byte (count - 1, minus dt of
 * it; a load past the table reads 0), then the entering one */
WLP_HD uint32_t wlp_ent_slide(uint8_t *hb, const uint32_t *t, uint32_t ov, uint32_t iv, uint32_t sum) {
  for (int b = 0; b < 4; b++) {
    uint8_t *obin = wlp_bin(hb, (ov >> (8 * b)) & 255);
    uint32_t oc = *obin - 1u;
    *obin = (uint8_t)oc;
    sum -= oc < 256 ? t[oc] : 0;
    sum = wlp_ent_add(hb, t, (iv >> (8 * b)) & 255, sum);
  }
  return sum;
}

#endif /* VYRE_BENCH_PEERS_LOGIC_H */
