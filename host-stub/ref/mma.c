/* mma.c -- the MMA ops of the reference interpreter: subgroup tiles, loads and stores by layout, integer MMA wrapped mod 2^32, float MMA summed exactly and rounded once with its error bound, and the strict-mode rule. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "ref.h"

/* ------------------------------------------------------------------ */
/* The exact accumulator                                               */
/* ------------------------------------------------------------------ */
/* A fixed-point number whose bit 0 weighs 2^-EX_LSB.  Every term of a
 * float MMA is a multiple of 2^-266 (the product of two bf16 subnormals
 * 2^-133; f32 C: 2^-149) below 2^257 in magnitude (two bf16 maxima), and
 * 17 of them sum below 2^262: 704 bits hold any sum exactly with room
 * for the sign.  Terms are added without carries into signed 64-bit
 * limbs of 32-bit digits (17 terms add less than 2^37 to a limb); the
 * carries are propagated once, into 64-bit two's complement words, when
 * the sum is rounded. */
#define EX_WORDS 11
#define EX_LIMBS (2 * EX_WORDS)
#define EX_LSB 320
typedef struct exact {
  int64_t limb[EX_LIMBS];
} exact;
typedef struct exact_words {
  uint64_t w[EX_WORDS];
} exact_words;

/* x += d (finite, exact: d is a multiple of 2^-EX_LSB). */
static void exact_add(exact *x, double d) {
  if (d == 0.0) return;
  /* d is a normal double (every term is at least 2^-266): |d| = mant *
   * 2^(biased exponent - 1075) with the implicit bit in mant. */
  uint64_t bits;
  memcpy(&bits, &d, sizeof bits);
  uint64_t mant = (bits & 0xfffffffffffffull) | 1ull << 52;
  int pos = (int)((bits >> 52) & 0x7ffu) - 1075 + EX_LSB; /* the weight of mant's bit 0: >= 0 */
  uint32_t li = (uint32_t)pos / 32u;
  unsigned __int128 m = (unsigned __int128)mant << ((uint32_t)pos % 32u); /* < 2^85: 3 digits */
  int64_t c0 = (int64_t)(uint32_t)m, c1 = (int64_t)(uint32_t)(m >> 32), c2 = (int64_t)(uint32_t)(m >> 64);
  if (bits >> 63) c0 = -c0, c1 = -c1, c2 = -c2;
  x->limb[li] += c0;
  x->limb[li + 1] += c1;
  x->limb[li + 2] += c2;
}

/* The value of x as 704-bit two's complement words. */
static exact_words exact_normalize(const exact *x) {
  exact_words a;
  int64_t carry = 0;
  for (int i = 0; i < EX_LIMBS; i++) {
    int64_t t = x->limb[i] + carry;
    uint64_t digit = (uint64_t)t & 0xffffffffu;
    carry = (t - (int64_t)digit) / 4294967296; /* exact: the floor of t / 2^32 */
    if (i % 2 == 0) a.w[i / 2] = digit;
    else a.w[i / 2] |= digit << 32;
  }
  return a; /* carry is 0 or -1 (the sign), which the top words already hold */
}

static int exact_bit(const exact_words *x, int i) { return (int)(x->w[i / 64] >> (i % 64)) & 1; }

/* The f32 bits of x rounded once to nearest-even: subnormals kept,
 * magnitudes from 2^128 on (after rounding) become infinities.  An exact
 * zero is +0, or -0 when `neg_zero`. */
static uint32_t exact_round(const exact *x, int neg_zero) {
  exact_words a = exact_normalize(x);
  uint32_t sign = 0;
  if (a.w[EX_WORDS - 1] >> 63) {
    sign = 0x80000000u;
    uint64_t carry = 1;
    for (int i = 0; i < EX_WORDS; i++) {
      a.w[i] = ~a.w[i] + carry;
      carry = carry && a.w[i] == 0;
    }
  }
  int top = EX_WORDS - 1;
  while (top >= 0 && !a.w[top]) top--;
  if (top < 0) return neg_zero ? 0x80000000u : 0u;
  int h = top * 64 + 63 - __builtin_clzll(a.w[top]);
  /* Keep 24 bits, or down to 2^-149 (subnormals). */
  int lo = h - 23 < EX_LSB - 149 ? EX_LSB - 149 : h - 23;
  uint64_t mant = 0;
  if (h >= lo) {
    /* Bits lo .. h (at most 24) straddle at most two words. */
    uint32_t wi = (uint32_t)lo / 64u, sh = (uint32_t)lo % 64u;
    mant = a.w[wi] >> sh;
    if (sh && wi + 1 < EX_WORDS) mant |= a.w[wi + 1] << (64u - sh);
    mant &= (1ull << (h - lo + 1)) - 1u;
  }
  /* Below the guard bit lo - 1: bits 0 .. lo - 2, whole words then part of one. */
  int guard = exact_bit(&a, lo - 1), sticky = 0, below = lo - 1;
  for (int i = 0; i < below / 64; i++) sticky |= a.w[i] != 0;
  if (below % 64) sticky |= (a.w[below / 64] & ((1ull << (below % 64)) - 1u)) != 0;
  if (guard && (sticky || (mant & 1u))) mant++;
  /* mant * 2^(lo - EX_LSB) is an f32 value, or >= 2^128: the cast is
   * exact, or overflows to infinity under round to nearest. */
  float f = (float)ldexp((double)mant, lo - EX_LSB);
  uint32_t bits;
  memcpy(&bits, &f, sizeof bits);
  return bits | sign;
}

/* ------------------------------------------------------------------ */
/* Elements                                                            */
/* ------------------------------------------------------------------ */
/* The exact value of f16 or bf16 bits (subnormals included). */
static double half_value(uint32_t bits, uint32_t component) {
  if (component == VYRE_T_BF16) {
    uint32_t f32 = bits << 16;
    float f;
    memcpy(&f, &f32, sizeof f);
    return (double)f;
  }
  uint32_t e = (bits >> 10) & 0x1fu, m = bits & 0x3ffu;
  double mag = e == 31u ? (m ? NAN : INFINITY) : e ? ldexp((double)(m | 0x400u), (int)e - 25)
                                                   : ldexp((double)m, -24);
  return bits & 0x8000u ? -mag : mag;
}

static double f32_value(uint32_t bits) {
  float f;
  memcpy(&f, &bits, sizeof f);
  return (double)f;
}

/* One accumulator element of a float MMA: d = c + sum_k a[k] * b[k],
 * with a (A's row i) and b (B's column j) decoded, and its bound from
 * c's. */
static void float_dot(const double *a_row, const double *b_col, uint32_t cbits, double cbound,
                      uint32_t *dbits, double *dbound) {
  const uint32_t K = 16;
  double c = f32_value(cbits);
  int nan = isnan(c), pinf = c == INFINITY, ninf = c == -INFINITY;
  int neg_zero = c == 0.0 && signbit(c);
  exact x;
  memset(&x, 0, sizeof x);
  double mags = 0.0;
  for (uint32_t k = 0; k < K; k++) {
    double a = a_row[k], b = b_col[k];
    if (isnan(a) || isnan(b) || (isinf(a) && b == 0.0) || (isinf(b) && a == 0.0)) {
      nan = 1;
      continue;
    }
    double prod = a * b; /* exact: at most 22 significant bits, within double's range */
    if (isinf(prod)) {
      pinf |= prod > 0;
      ninf |= prod < 0;
      continue;
    }
    neg_zero &= prod == 0.0 && signbit(prod);
    exact_add(&x, prod);
    mags += fabs(prod);
  }
  /* An unconstrained C (bound +inf: a backend may hold any value there,
   * an infinity or a NaN included) leaves D unconstrained too. */
  if (nan || (pinf && ninf)) {
    *dbits = VYRE_F32_CANONICAL_NAN;
    *dbound = isinf(cbound) ? INFINITY : 0.0;
    return;
  }
  if (pinf || ninf) {
    *dbits = pinf ? 0x7f800000u : 0xff800000u;
    *dbound = isinf(cbound) ? INFINITY : 0.0;
    return;
  }
  exact_add(&x, c);
  *dbits = exact_round(&x, neg_zero);
  double S = fabs(c) + cbound + mags;
  *dbound = S > 0x1p127 ? INFINITY : cbound + (K + 2) * (0x1p-22 * S + 0x1p-126);
}

/* ------------------------------------------------------------------ */
/* The four ops on one subgroup's tiles                                */
/* ------------------------------------------------------------------ */
#define LD(type, base, i) __atomic_load_n((const type *)(const void *)(base) + (i), __ATOMIC_RELAXED)
#define ST(type, base, i, v) __atomic_store_n((type *)(void *)(base) + (i), (type)(v), __ATOMIC_RELAXED)

void ref_mma_shadow_set(double *shadow, uint64_t index, double v) {
  __atomic_store(&shadow[index], &v, __ATOMIC_RELAXED);
}

/* The buffer an mma_load or mma_store names, as its workgroup sees it. */
typedef struct ref_mma_buf {
  uint8_t *base;
  uint32_t elem;  /* the tile's component: the buffer holds it or an integer
                     type of its size, read as the component's bits */
  uint32_t count; /* elements */
  double *shadow; /* its bound shadow, or NULL */
} ref_mma_buf;

/* Buffer element `e` of `buf` as a tile element: its bits as the
 * component buf->elem, whatever integer type of that size the buffer
 * declares (vyre_mma_buffer_types). */
static uint32_t load_elem(const ref_mma_buf *buf, uint64_t e) {
  if (e >= buf->count) return 0;
  switch (buf->elem) {
  case VYRE_T_F16:
  case VYRE_T_BF16: return LD(uint16_t, buf->base, e);
  case VYRE_T_I8: return (uint32_t)(int32_t)(int8_t)LD(uint8_t, buf->base, e);
  case VYRE_T_U8: return LD(uint8_t, buf->base, e);
  case VYRE_T_F32: {
    uint32_t v = LD(uint32_t, buf->base, e);
    return (v & 0x7fffffffu) > 0x7f800000u ? VYRE_F32_CANONICAL_NAN : v; /* a NaN is a NaN */
  }
  default: return LD(uint32_t, buf->base, e); /* i32 */
  }
}

/* Buffer element of tile element (r, c): index + r * stride + c (row) or
 * index + c * stride + r (col), exact in 64 bits. */
static uint64_t elem_at(uint32_t layout, uint64_t index, uint64_t stride, uint32_t r,
                        uint32_t c) {
  return layout == VYRE_LAYOUT_COL ? index + c * stride + r : index + r * stride + c;
}

static void mma_multiply(const vyre_program *p, const vyre_inst *in, const uint32_t *tile_of,
                         ref_tile *tiles) {
  ref_tile *D = &tiles[tile_of[in->a]];
  const ref_tile *A = &tiles[tile_of[in->b]], *B = &tiles[tile_of[in->c]],
                 *C = &tiles[tile_of[in->d]];
  ref_tile out; /* D may be C */
  (void)p;
  if (in->type == VYRE_T_F16 || in->type == VYRE_T_BF16) {
    double a[256], bt[256]; /* A by rows, B by columns, decoded once */
    for (uint32_t e = 0; e < 256; e++) {
      a[e] = half_value(A->v[e], in->type);
      bt[(e % 16) * 16 + e / 16] = half_value(B->v[e], in->type);
    }
    for (uint32_t i = 0; i < 16; i++)
      for (uint32_t j = 0; j < 16; j++)
        float_dot(a + i * 16, bt + j * 16, C->v[i * 16 + j], C->bound[i * 16 + j],
                  &out.v[i * 16 + j], &out.bound[i * 16 + j]);
  } else {
    /* i8 values sit sign-extended, u8 zero-extended: the products and
     * the sum wrap modulo 2^32 in uint32_t. */
    for (uint32_t i = 0; i < 16; i++)
      for (uint32_t j = 0; j < 16; j++) {
        uint32_t s = C->v[i * 16 + j];
        for (uint32_t k = 0; k < 32; k++) s += A->v[i * 32 + k] * B->v[k * 16 + j];
        out.v[i * 16 + j] = s;
        out.bound[i * 16 + j] = 0.0;
      }
  }
  memcpy(D->v, out.v, 256 * sizeof out.v[0]);
  memcpy(D->bound, out.bound, sizeof out.bound);
}

void ref_mma_run(const ref_mma_ctx *x, uint8_t *shared, ref_tile *tiles, const vyre_inst *in,
                 const uint64_t *vals) {
  const vyre_program *p = x->p;
  const uint32_t *tile_of = x->tile_of;
  uint32_t rows, cols, b = in->op == VYRE_OP_MMA_LOAD ? in->b : in->a;
  ref_mma_buf bufv = {NULL, 0, 0, NULL}, *buf = &bufv;
  if (in->op == VYRE_OP_MMA_LOAD || in->op == VYRE_OP_MMA_STORE) {
    const vyre_buffer_info *bi = &p->buffers[b];
    bufv.base = bi->role == VYRE_ROLE_SHARED ? shared + bi->shared_offset : x->mem[b];
    bufv.elem = in->type; /* a u16 buffer of a bf16 tile holds bf16 bits; a u32 one of an
                             f32 accumulator f32 bits (NaN canonicalised as from f32) */
    bufv.count = x->g->buffer_elems[b];
    bufv.shadow = x->shadow ? x->shadow[b] : NULL;
  }
  switch (in->op) {
  case VYRE_OP_MMA_FILL: {
    ref_tile *t = &tiles[tile_of[in->a]];
    uint32_t v = (uint32_t)vals[in->b];
    for (uint32_t e = 0; e < 256; e++) t->v[e] = v;
    memset(t->bound, 0, sizeof t->bound);
    break;
  }
  case VYRE_OP_MMA_LOAD: {
    ref_tile *t = &tiles[tile_of[in->a]];
    vyre_type_matrix_dims(p->local_types[in->a], &rows, &cols);
    uint64_t index = (uint32_t)vals[in->c], stride = (uint32_t)vals[in->d];
    for (uint32_t r = 0; r < rows; r++)
      for (uint32_t c = 0; c < cols; c++)
        t->v[r * cols + c] = load_elem(buf, elem_at(in->mod, index, stride, r, c));
    memset(t->bound, 0, sizeof t->bound);
    break;
  }
  case VYRE_OP_MMA: mma_multiply(p, in, tile_of, tiles); break;
  case VYRE_OP_MMA_STORE: {
    const ref_tile *t = &tiles[tile_of[in->d]];
    int f32 = p->local_types[in->d] == VYRE_T_MAT_ACC_F32;
    uint64_t index = (uint32_t)vals[in->b], stride = (uint32_t)vals[in->c];
    for (uint32_t r = 0; r < 16; r++)
      for (uint32_t c = 0; c < 16; c++) {
        uint64_t e = elem_at(in->mod, index, stride, r, c);
        if (e >= buf->count) continue;
        ST(uint32_t, buf->base, e, t->v[r * 16 + c]);
        if (buf->shadow) ref_mma_shadow_set(buf->shadow, e, f32 ? t->bound[r * 16 + c] : -1.0);
      }
    break;
  }
  default: break;
  }
}

int ref_mma_tile_slots(const vyre_program *p, uint32_t **tile_of, uint32_t *count) {
  *tile_of = NULL;
  *count = 0;
  for (uint32_t s = 0; s < p->local_count; s++)
    if (vyre_type_matrix_use(p->local_types[s])) ++*count;
  if (!*count) return 0;
  *tile_of = malloc(p->local_count * sizeof **tile_of);
  if (!*tile_of) return -1;
  uint32_t n = 0;
  for (uint32_t s = 0; s < p->local_count; s++)
    (*tile_of)[s] = vyre_type_matrix_use(p->local_types[s]) ? n++ : UINT32_MAX;
  return 0;
}

/* ------------------------------------------------------------------ */
/* Dispatch rules                                                      */
/* ------------------------------------------------------------------ */
vyre_status ref_mma_check_strict(const vyre_program *p, uint32_t ulp_budget, vyre_error *err) {
  if (ulp_budget) return VYRE_OK;
  for (uint32_t i = 0; i < p->inst_count; i++) {
    const vyre_inst *in = &p->insts[i];
    if (in->op == VYRE_OP_MMA && (in->type == VYRE_T_F16 || in->type == VYRE_T_BF16))
      return vyre_error_set(err, VYRE_UNSUPPORTED, 0,
                            "dispatch: instruction %u (mma of %s tiles) is unsupported under "
                            "strict (ulp budget 0): tensor cores do not round a float MMA "
                            "correctly, so no backend computes it exactly. Fix: pass a ulp "
                            "budget (any non-zero value accepts the MMA error bound)",
                            i, vyre_type_name(in->type));
  }
  return VYRE_OK;
}
