/* scalar.c -- the meaning of every op on single values, bit for bit as docs/semantics.md states it. */
#include <float.h>
#include <math.h>
#include <string.h>

#include "ref.h"
#include "abi/support/bits.h"
#include "plugin/ptxmath/ptxmath_model.h"

/* f32 results must be rounded once to binary32: no x87 excess precision.
 * The ref sources are also built with -ffp-contract=off (host-stub/ref.mk)
 * so that a*b+c is never fused behind our back. */
#if !defined(FLT_EVAL_METHOD) || FLT_EVAL_METHOD != 0
#error "the reference backend needs FLT_EVAL_METHOD == 0 (SSE-style f32 arithmetic)"
#endif

__extension__ typedef __int128 ref_i128;
__extension__ typedef unsigned __int128 ref_u128;

#define F32_SIGN 0x80000000u
#define F32_ONE 0x3f800000u
#define F32_NAN VYRE_F32_CANONICAL_NAN

/* ------------------------------------------------------------------ */
/* Bits and types                                                      */
/* ------------------------------------------------------------------ */
static float f_of(uint64_t v) { return vyre__f32_from_bits((uint32_t)v); }

/* The canonical bits of an f32 result (NaN -> 0x7FC00000, subnormal ->
 * signed zero): every f32 result leaves through here. */
static uint64_t bits_of(float f) {
  return vyre_f32_canonical_bits(vyre__f32_bits(f));
}

/* add sub mul div fma sqrt, rcp and the rounding of a transcendental to
 * f32 under the underflow rule (docs/semantics.md, "Underflow") are
 * libvyre's vyre_f32_* (abi/format/f32.c): the one implementation, which
 * third-party CPU backends call too. */

static int f32_is_nan(uint64_t v) {
  return ((uint32_t)v & 0x7f800000u) == 0x7f800000u && ((uint32_t)v & 0x7fffffu);
}

static unsigned width_of(uint32_t t) { return t == VYRE_T_U64 || t == VYRE_T_I64 ? 64u : 32u; }
static int signed_type(uint32_t t) { return t == VYRE_T_I32 || t == VYRE_T_I64; }
static uint64_t mask_of(unsigned w) { return w == 64 ? ~0ull : 0xffffffffull; }

/* Two's complement reading of the low w bits, without implementation-
 * defined conversions. */
static int64_t sval(uint64_t x, unsigned w) {
  if (w == 32) x = ((x & 0xffffffffull) ^ 0x80000000ull) - 0x80000000ull;
  return x <= (uint64_t)INT64_MAX ? (int64_t)x : -(int64_t)(~x) - 1;
}

static uint64_t smin_of(unsigned w) { return 1ull << (w - 1); }
static uint64_t smax_of(unsigned w) { return (1ull << (w - 1)) - 1u; }

static int int_less(uint32_t t, uint64_t a, uint64_t b) {
  unsigned w = width_of(t);
  return signed_type(t) ? sval(a, w) < sval(b, w) : a < b;
}

/* ------------------------------------------------------------------ */
/* f32                                                                 */
/* ------------------------------------------------------------------ */
static uint64_t f32_min(uint64_t a, uint64_t b) {
  if (f32_is_nan(a)) return b; /* NaN loses; both NaN gives b = NaN */
  if (f32_is_nan(b)) return a;
  float x = f_of(a), y = f_of(b);
  if (x < y) return a;
  if (y < x) return b;
  return (a | b) & 0xffffffffu; /* equal: -0 wins over +0 */
}

static uint64_t f32_max(uint64_t a, uint64_t b) {
  if (f32_is_nan(a)) return b;
  if (f32_is_nan(b)) return a;
  float x = f_of(a), y = f_of(b);
  if (x > y) return a;
  if (y > x) return b;
  return a & b & 0xffffffffu; /* equal: +0 wins over -0 */
}

static uint64_t f32_binary(uint32_t op, uint64_t a, uint64_t b) {
  switch (op) {
  case VYRE_OP_ADD: return vyre_f32_add((uint32_t)a, (uint32_t)b);
  case VYRE_OP_SUB: return vyre_f32_sub((uint32_t)a, (uint32_t)b);
  case VYRE_OP_MUL: return vyre_f32_mul((uint32_t)a, (uint32_t)b);
  case VYRE_OP_DIV: return vyre_f32_div((uint32_t)a, (uint32_t)b);
  case VYRE_OP_MIN: return f32_min(a, b);
  case VYRE_OP_MAX: return f32_max(a, b);
  case VYRE_OP_ABSDIFF: /* canonical NaN has no sign */
    return vyre_f32_sub((uint32_t)a, (uint32_t)b) & 0x7fffffffu;
  default: return 0;
  }
}

/* Round half to even, independent of the FPU rounding mode. */
static float round_even(float x) {
  if (!(fabsf(x) < 8388608.0f)) return x; /* 2^23 and above (and inf, NaN) are integers */
  float t = truncf(x);
  float frac = fabsf(x - t); /* exact below 2^23 */
  if (frac > 0.5f || (frac == 0.5f && fmodf(t, 2.0f) != 0.0f)) t += copysignf(1.0f, x);
  return t;
}

/* A transcendental: the correctly rounded result (PM_CR) of ptxmath's C
 * model, the same operation sequence the CUDA backend emits as PTX,
 * evaluated in f64 arithmetic that gives the same bits on every IEEE
 * machine (docs/reference-backend.md, "Transcendentals").  The model
 * takes canonical f32 (a subnormal reads as its signed zero, any NaN as
 * 0x7FC00000) and returns canonical bits; operands already are (loads
 * canonicalise), canonicalising again costs nothing and keeps the
 * contract local. */
static uint64_t f32_transcendental(uint32_t op, uint32_t bits) {
  uint32_t r;
  if (pm_model(op, PM_CR, vyre_f32_canonical_bits(bits), &r) != 0) return F32_NAN;
  return r;
}

static uint64_t f32_unary(uint32_t op, uint64_t a) {
  float x = f_of(a);
  uint32_t bits = (uint32_t)a;
  int nan = f32_is_nan(a);
  switch (op) {
  case VYRE_OP_NEG: return nan ? F32_NAN : bits ^ F32_SIGN;
  case VYRE_OP_ABS: return nan ? F32_NAN : bits & ~F32_SIGN;
  case VYRE_OP_SIGN:
    if (nan) return F32_NAN;
    if ((bits & ~F32_SIGN) == 0) return bits; /* +-0 stays */
    return (bits & F32_SIGN) | F32_ONE;
  case VYRE_OP_FLOOR: return bits_of(floorf(x));
  case VYRE_OP_CEIL: return bits_of(ceilf(x));
  case VYRE_OP_ROUND: return bits_of(round_even(x));
  case VYRE_OP_TRUNC: return bits_of(truncf(x));
  case VYRE_OP_SQRT: return vyre_f32_sqrt(bits);
  case VYRE_OP_RCP: return vyre_f32_div(F32_ONE, bits);
  case VYRE_OP_ISNAN: return (uint64_t)(nan != 0);
  case VYRE_OP_ISINF: return (uint64_t)((bits & ~F32_SIGN) == 0x7f800000u);
  case VYRE_OP_ISFINITE: return (uint64_t)((bits & 0x7f800000u) != 0x7f800000u);
  default:
    if (vyre_op_is_transcendental(op)) return f32_transcendental(op, bits);
    return 0;
  }
}

/* Integer -> f32, round to nearest even, in integer arithmetic: exact by
 * construction and independent of how the FPU (or an emulator such as
 * valgrind, which converts 64-bit integers through double) rounds. */
static uint64_t int_to_f32(uint64_t mag, int negative) {
  uint32_t sign = negative ? F32_SIGN : 0;
  if (!mag) return 0; /* +0 even for a negative zero magnitude: integers have none */
  int e = 63 - __builtin_clzll(mag); /* mag in [2^e, 2^(e+1)) */
  uint64_t m;
  if (e <= 23) {
    m = mag << (23 - e);
  } else {
    int shift = e - 23;
    m = mag >> shift;
    uint64_t rem = mag & ((1ull << shift) - 1u), half = 1ull << (shift - 1);
    if (rem > half || (rem == half && (m & 1u))) m++;
    if (m == (1ull << 24)) { /* rounded up to the next power of two */
      m >>= 1;
      e++;
    }
  }
  return sign | (uint32_t)(e + 127) << 23 | ((uint32_t)m & 0x7fffffu);
}

/* f32 -> integer: truncate toward zero, saturate, NaN -> 0.  Every
 * conversion C performs here is of a value already known to be in range
 * (C's out-of-range float->int conversion is undefined). */
static uint64_t f32_to_int(uint64_t a, uint32_t to) {
  if (f32_is_nan(a)) return 0;
  float x = f_of(a);
  switch (to) {
  case VYRE_T_I32:
    if (x >= 2147483648.0f) return 0x7fffffffu;
    if (x < -2147483648.0f) return 0x80000000u;
    return (uint64_t)(int64_t)x & 0xffffffffu;
  case VYRE_T_U32:
    if (x >= 4294967296.0f) return 0xffffffffu;
    if (x <= 0.0f) return 0;
    return (uint64_t)x;
  case VYRE_T_I64:
    if (x >= 9223372036854775808.0f) return (uint64_t)INT64_MAX;
    if (x < -9223372036854775808.0f) return 1ull << 63;
    return (uint64_t)(int64_t)x;
  case VYRE_T_U64:
    if (x >= 18446744073709551616.0f) return ~0ull;
    if (x <= 0.0f) return 0;
    return (uint64_t)x;
  default: return 0;
  }
}

/* ------------------------------------------------------------------ */
/* Integers (u32 u64 i32 i64): computed in unsigned, so wrapping never  */
/* meets C's signed-overflow UB.                                        */
/* ------------------------------------------------------------------ */
static uint64_t int_sat_add(uint32_t t, uint64_t a, uint64_t b) {
  unsigned w = width_of(t);
  uint64_t m = mask_of(w);
  if (!signed_type(t)) {
    uint64_t r = (a + b) & m;
    return r < a ? m : r;
  }
  int64_t x = sval(a, w), y = sval(b, w), r;
  int ovf = __builtin_add_overflow(x, y, &r);
  if (w == 32) ovf = r > INT32_MAX || r < INT32_MIN;
  if (ovf) return x < 0 ? smin_of(w) : smax_of(w);
  return (uint64_t)r & m;
}

static uint64_t int_sat_sub(uint32_t t, uint64_t a, uint64_t b) {
  unsigned w = width_of(t);
  uint64_t m = mask_of(w);
  if (!signed_type(t)) return a < b ? 0 : a - b;
  int64_t x = sval(a, w), y = sval(b, w), r;
  int ovf = __builtin_sub_overflow(x, y, &r);
  if (w == 32) ovf = r > INT32_MAX || r < INT32_MIN;
  if (ovf) return x < 0 ? smin_of(w) : smax_of(w);
  return (uint64_t)r & m;
}

static uint64_t int_sat_mul(uint32_t t, uint64_t a, uint64_t b) {
  unsigned w = width_of(t);
  uint64_t m = mask_of(w);
  if (!signed_type(t)) {
    if (w == 32) {
      uint64_t r = a * b; /* exact: both below 2^32 */
      return r > m ? m : r;
    }
    uint64_t r;
    return __builtin_mul_overflow(a, b, &r) ? m : r;
  }
  int64_t x = sval(a, w), y = sval(b, w), r;
  int ovf = __builtin_mul_overflow(x, y, &r);
  if (w == 32) ovf = r > INT32_MAX || r < INT32_MIN;
  if (ovf) return (x < 0) != (y < 0) ? smin_of(w) : smax_of(w);
  return (uint64_t)r & m;
}

static uint64_t int_mulhi(uint32_t t, uint64_t a, uint64_t b) {
  unsigned w = width_of(t);
  if (w == 32) {
    if (!signed_type(t)) return (a * b) >> 32;
    int64_t pr = sval(a, 32) * sval(b, 32); /* exact: |pr| <= 2^62 */
    return ((uint64_t)pr >> 32) & 0xffffffffu;
  }
  if (!signed_type(t)) return (uint64_t)(((ref_u128)a * b) >> 64);
  ref_i128 pr = (ref_i128)sval(a, 64) * sval(b, 64);
  return (uint64_t)((ref_u128)pr >> 64);
}

static uint64_t int_binary(uint32_t op, uint32_t t, uint64_t a, uint64_t b) {
  unsigned w = width_of(t);
  uint64_t m = mask_of(w);
  int s = signed_type(t);
  a &= m;
  b &= m;
  unsigned n = (unsigned)(b % w); /* shift amounts: bits read as unsigned, mod W */
  switch (op) {
  case VYRE_OP_ADD:
  case VYRE_OP_WRAP_ADD: return (a + b) & m;
  case VYRE_OP_SUB:
  case VYRE_OP_WRAP_SUB: return (a - b) & m;
  case VYRE_OP_MUL: return (a * b) & m;
  case VYRE_OP_DIV:
    if (b == 0) return s ? 0 : m;
    if (!s) return a / b;
    if (sval(b, w) == -1) return (0 - a) & m; /* MIN / -1 wraps to MIN */
    return (uint64_t)(sval(a, w) / sval(b, w)) & m;
  case VYRE_OP_MOD:
    if (b == 0) return 0;
    if (!s) return a % b;
    if (sval(b, w) == -1) return 0;
    return (uint64_t)(sval(a, w) % sval(b, w)) & m;
  case VYRE_OP_AND: return a & b;
  case VYRE_OP_OR: return a | b;
  case VYRE_OP_XOR: return a ^ b;
  case VYRE_OP_SHL: return (a << n) & m;
  case VYRE_OP_SHR:
    if (s && (a >> (w - 1))) return ~((~a & m) >> n) & m; /* arithmetic: shift in ones */
    return a >> n;
  case VYRE_OP_ROTL: return n ? ((a << n) | (a >> (w - n))) & m : a;
  case VYRE_OP_ROTR: return n ? ((a >> n) | (a << (w - n))) & m : a;
  case VYRE_OP_MIN: return int_less(t, b, a) ? b : a;
  case VYRE_OP_MAX: return int_less(t, a, b) ? b : a;
  case VYRE_OP_ABSDIFF: return int_less(t, b, a) ? (a - b) & m : (b - a) & m;
  case VYRE_OP_SAT_ADD: return int_sat_add(t, a, b);
  case VYRE_OP_SAT_SUB: return int_sat_sub(t, a, b);
  case VYRE_OP_SAT_MUL: return int_sat_mul(t, a, b);
  case VYRE_OP_MULHI: return int_mulhi(t, a, b);
  default: return 0;
  }
}

static uint64_t reverse_bits(uint64_t a, unsigned w) {
  uint64_t r = 0;
  for (unsigned i = 0; i < w; i++) r |= ((a >> i) & 1u) << (w - 1 - i);
  return r;
}

static uint64_t int_unary(uint32_t op, uint32_t t, uint64_t a) {
  unsigned w = width_of(t);
  uint64_t m = mask_of(w);
  int s = signed_type(t);
  a &= m;
  switch (op) {
  case VYRE_OP_NEG: return (0 - a) & m;
  case VYRE_OP_BITNOT: return ~a & m;
  case VYRE_OP_POPCOUNT: return (uint64_t)__builtin_popcountll(a);
  case VYRE_OP_CLZ: return a ? (uint64_t)(__builtin_clzll(a) - (64 - (int)w)) : w;
  case VYRE_OP_CTZ: return a ? (uint64_t)__builtin_ctzll(a) : w;
  case VYRE_OP_REVERSEBITS: return reverse_bits(a, w);
  case VYRE_OP_ABS: return s && sval(a, w) < 0 ? (0 - a) & m : a;
  case VYRE_OP_SIGN:
    if (!s) return a != 0;
    return sval(a, w) < 0 ? m : (a != 0);
  case VYRE_OP_UNPACK4_LOW:
  case VYRE_OP_UNPACK4_HIGH: {
    uint64_t x = op == VYRE_OP_UNPACK4_HIGH ? a >> 16 : a, r = 0;
    for (unsigned k = 0; k < 4; k++) r |= ((x >> (4 * k)) & 0xfu) << (8 * k);
    return r;
  }
  case VYRE_OP_UNPACK8_LOW:
  case VYRE_OP_UNPACK8_HIGH: {
    uint64_t x = op == VYRE_OP_UNPACK8_HIGH ? a >> 16 : a;
    return (x & 0xffu) | ((x >> 8) & 0xffu) << 16;
  }
  default: return 0;
  }
}

/* ------------------------------------------------------------------ */
/* Entry points                                                        */
/* ------------------------------------------------------------------ */
uint64_t ref_binary(uint32_t op, uint32_t t, uint64_t a, uint64_t b) {
  if (t == VYRE_T_F32) return f32_binary(op, a, b);
  if (t == VYRE_T_BOOL) {
    a = a != 0;
    b = b != 0;
    switch (op) {
    case VYRE_OP_AND:
    case VYRE_OP_LOGICAL_AND: return a & b;
    case VYRE_OP_OR:
    case VYRE_OP_LOGICAL_OR: return a | b;
    case VYRE_OP_XOR: return a ^ b;
    default: return 0;
    }
  }
  return int_binary(op, t, a, b);
}

uint64_t ref_compare(uint32_t op, uint32_t t, uint64_t a, uint64_t b) {
  if (t == VYRE_T_F32) {
    float x = f_of(a), y = f_of(b);
    switch (op) {
    case VYRE_OP_EQ: return x == y;
    case VYRE_OP_NE: return x != y;
    case VYRE_OP_LT: return x < y;
    case VYRE_OP_LE: return x <= y;
    case VYRE_OP_GT: return x > y;
    case VYRE_OP_GE: return x >= y;
    default: return 0;
    }
  }
  uint64_t m = t == VYRE_T_BOOL ? 1u : mask_of(width_of(t));
  a &= m;
  b &= m;
  switch (op) {
  case VYRE_OP_EQ: return a == b;
  case VYRE_OP_NE: return a != b;
  case VYRE_OP_LT: return int_less(t, a, b);
  case VYRE_OP_LE: return !int_less(t, b, a);
  case VYRE_OP_GT: return int_less(t, b, a);
  case VYRE_OP_GE: return !int_less(t, a, b);
  default: return 0;
  }
}

uint64_t ref_unary(uint32_t op, uint32_t t, uint64_t a) {
  if (t == VYRE_T_F32) return f32_unary(op, a);
  if (t == VYRE_T_BOOL) return op == VYRE_OP_NOT ? (uint64_t)(a == 0) : 0;
  return int_unary(op, t, a);
}

uint64_t ref_cast(uint32_t from, uint32_t to, uint64_t a) {
  if (from == to) return a;
  if (to == VYRE_T_BOOL) {
    if (from == VYRE_T_F32) return ((uint32_t)a & ~F32_SIGN) != 0; /* NaN -> true, -0 -> false */
    return (a & mask_of(width_of(from))) != 0;
  }
  if (to == VYRE_T_F32) {
    switch (from) {
    case VYRE_T_BOOL: return a ? F32_ONE : 0;
    case VYRE_T_U32: return int_to_f32(a & 0xffffffffu, 0);
    case VYRE_T_U64: return int_to_f32(a, 0);
    case VYRE_T_I32:
    case VYRE_T_I64: {
      int64_t v = sval(a, width_of(from));
      /* |v| in unsigned: 0 - (uint64_t)v is exact for INT64_MIN too */
      return v < 0 ? int_to_f32(0 - (uint64_t)v, 1) : int_to_f32((uint64_t)v, 0);
    }
    default: return 0;
    }
  }
  /* Integer target. */
  if (from == VYRE_T_F32) return f32_to_int(a, to);
  if (from == VYRE_T_BOOL) return a != 0;
  unsigned wf = width_of(from);
  uint64_t v = signed_type(from) ? (uint64_t)sval(a, wf) : a & mask_of(wf);
  return v & mask_of(width_of(to));
}

uint64_t ref_fma(uint64_t a, uint64_t b, uint64_t c) {
  return vyre_f32_fma((uint32_t)a, (uint32_t)b, (uint32_t)c);
}

uint64_t ref_reduce_step(uint32_t kind, uint32_t t, uint64_t a, uint64_t b) {
  switch (kind) {
  case VYRE_REDUCE_ADD: return ref_binary(VYRE_OP_ADD, t, a, b);
  case VYRE_REDUCE_MIN: return ref_binary(VYRE_OP_MIN, t, a, b);
  case VYRE_REDUCE_MAX: return ref_binary(VYRE_OP_MAX, t, a, b);
  case VYRE_REDUCE_AND: return ref_binary(VYRE_OP_AND, t, a, b);
  case VYRE_REDUCE_OR: return ref_binary(VYRE_OP_OR, t, a, b);
  case VYRE_REDUCE_XOR: return ref_binary(VYRE_OP_XOR, t, a, b);
  default: return 0;
  }
}

uint64_t ref_reduce_identity(uint32_t kind, uint32_t t) {
  unsigned w = width_of(t);
  int f = t == VYRE_T_F32, s = signed_type(t);
  switch (kind) {
  case VYRE_REDUCE_ADD: return f ? F32_SIGN : 0; /* -0.0 + x == x for every x */
  case VYRE_REDUCE_MIN: return f ? F32_NAN : s ? smax_of(w) : mask_of(w);
  case VYRE_REDUCE_MAX: return f ? F32_NAN : s ? smin_of(w) : 0;
  case VYRE_REDUCE_AND: return mask_of(w);
  default: return 0;
  }
}

/* ------------------------------------------------------------------ */
/* Memory.  Plain loads and stores are relaxed atomics: racing accesses */
/* of different invocations are then well defined in C (and cost       */
/* nothing on x86-64).                                                 */
/* ------------------------------------------------------------------ */
#define LD(type, base, i) __atomic_load_n((const type *)(const void *)(base) + (i), __ATOMIC_RELAXED)
#define ST(type, base, i, v) __atomic_store_n((type *)(void *)(base) + (i), (type)(v), __ATOMIC_RELAXED)

uint64_t ref_load_elem(const uint8_t *base, uint32_t elem, uint64_t i) {
  uint64_t v;
  switch (elem) {
  case VYRE_T_BOOL: return LD(uint32_t, base, i) != 0;
  case VYRE_T_U8: return LD(uint8_t, base, i);
  case VYRE_T_U16: return LD(uint16_t, base, i);
  case VYRE_T_U32:
  case VYRE_T_I32: return LD(uint32_t, base, i);
  case VYRE_T_U64:
  case VYRE_T_I64: return LD(uint64_t, base, i);
  case VYRE_T_I8:
    v = LD(uint8_t, base, i);
    return v & 0x80u ? v | 0xffffff00u : v;
  case VYRE_T_I16:
    v = LD(uint16_t, base, i);
    return v & 0x8000u ? v | 0xffff0000u : v;
  case VYRE_T_F16: return vyre_f32_canonical_bits(vyre_f16_to_f32(LD(uint16_t, base, i)));
  case VYRE_T_BF16: return vyre_f32_canonical_bits(vyre_bf16_to_f32(LD(uint16_t, base, i)));
  case VYRE_T_F32: return vyre_f32_canonical_bits(LD(uint32_t, base, i));
  default: return 0;
  }
}

void ref_store_elem(uint8_t *base, uint32_t elem, uint64_t i, uint64_t v) {
  switch (elem) {
  case VYRE_T_BOOL: ST(uint32_t, base, i, v != 0); break;
  case VYRE_T_U8:
  case VYRE_T_I8: ST(uint8_t, base, i, v & 0xffu); break;
  case VYRE_T_U16:
  case VYRE_T_I16: ST(uint16_t, base, i, v & 0xffffu); break;
  case VYRE_T_U32:
  case VYRE_T_I32:
  case VYRE_T_F32: ST(uint32_t, base, i, v & 0xffffffffu); break;
  case VYRE_T_U64:
  case VYRE_T_I64: ST(uint64_t, base, i, v); break;
  case VYRE_T_F16: ST(uint16_t, base, i, vyre_f32_to_f16((uint32_t)v)); break;
  case VYRE_T_BF16: ST(uint16_t, base, i, vyre_f32_to_bf16((uint32_t)v)); break;
  default: break;
  }
}

/* min/max need a compare-exchange loop; the rest map onto builtins.  All
 * are seq_cst, which is at least as strong as any order a program asks. */
#define ATOMIC_BODY(type, p, op, t, v, desired)                                          \
  do {                                                                                   \
    type x_ = (type)(v), old_;                                                           \
    switch (op) {                                                                        \
    case VYRE_OP_ATOMIC_ADD: return __atomic_fetch_add(p, x_, __ATOMIC_SEQ_CST);         \
    case VYRE_OP_ATOMIC_AND: return __atomic_fetch_and(p, x_, __ATOMIC_SEQ_CST);         \
    case VYRE_OP_ATOMIC_OR: return __atomic_fetch_or(p, x_, __ATOMIC_SEQ_CST);           \
    case VYRE_OP_ATOMIC_XOR: return __atomic_fetch_xor(p, x_, __ATOMIC_SEQ_CST);         \
    case VYRE_OP_ATOMIC_EXCHANGE: return __atomic_exchange_n(p, x_, __ATOMIC_SEQ_CST);   \
    case VYRE_OP_ATOMIC_CAS:                                                             \
      old_ = x_;                                                                         \
      __atomic_compare_exchange_n(p, &old_, (type)(desired), 0, __ATOMIC_SEQ_CST,        \
                                  __ATOMIC_SEQ_CST);                                     \
      return old_;                                                                       \
    case VYRE_OP_ATOMIC_MIN:                                                             \
    case VYRE_OP_ATOMIC_MAX:                                                             \
      old_ = __atomic_load_n(p, __ATOMIC_SEQ_CST);                                       \
      for (;;) {                                                                         \
        int less_ = int_less(t, x_, old_);                                               \
        type want_ = (op == VYRE_OP_ATOMIC_MIN) == less_ ? x_ : old_;                    \
        if (__atomic_compare_exchange_n(p, &old_, want_, 0, __ATOMIC_SEQ_CST,            \
                                        __ATOMIC_SEQ_CST))                               \
          return old_;                                                                   \
      }                                                                                  \
    default: return 0;                                                                   \
    }                                                                                    \
  } while (0)

uint64_t ref_atomic_elem(uint8_t *base, uint32_t op, uint32_t t, uint64_t i, uint64_t v,
                         uint64_t desired) {
  if (t == VYRE_T_U32 || t == VYRE_T_I32) {
    uint32_t *p = (uint32_t *)(void *)base + i;
    ATOMIC_BODY(uint32_t, p, op, t, v, desired);
  }
  if (t == VYRE_T_U64 || t == VYRE_T_I64) {
    uint64_t *p = (uint64_t *)(void *)base + i;
    ATOMIC_BODY(uint64_t, p, op, t, v, desired);
  }
  return 0;
}
