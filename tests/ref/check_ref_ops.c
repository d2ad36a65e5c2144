/* check_ref_ops.c -- table-driven edge cases of every op over every type it takes, expected bits written out by hand from docs/semantics.md. */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check_ref.h"

/* Readable literals.  I32(-7) is only the two's complement spelling of a
 * literal, not a computation of an expected result. */
#define I32(v) ((uint64_t)(uint32_t)(int32_t)(v))
#define I64(v) ((uint64_t)(int64_t)(v))
#define U32MAX 0xffffffffull
#define I32MIN 0x80000000ull
#define I32MAX 0x7fffffffull
#define U64MAX 0xffffffffffffffffull
#define I64MIN 0x8000000000000000ull
#define I64MAX 0x7fffffffffffffffull

#define F_0 0x00000000ull
#define F_N0 0x80000000ull
#define F_1 0x3f800000ull
#define F_N1 0xbf800000ull
#define F_2 0x40000000ull
#define F_3 0x40400000ull
#define F_4 0x40800000ull
#define F_HALF 0x3f000000ull
#define F_NHALF 0xbf000000ull
#define F_1_5 0x3fc00000ull
#define F_N1_5 0xbfc00000ull
#define F_2_5 0x40200000ull
#define F_N2_5 0xc0200000ull
#define F_3_5 0x40600000ull
#define F_INF 0x7f800000ull
#define F_NINF 0xff800000ull
#define F_NAN 0x7fc00000ull
#define F_MAX 0x7f7fffffull  /* largest finite */
#define F_NMAX 0xff7fffffull
#define F_MIN 0x00800000ull  /* smallest normal, 2^-126 */
#define F_NMIN 0x80800000ull
#define F_SUB 0x00000001ull  /* smallest subnormal: loads as +0 */
#define F_NSUB 0x807fffffull /* a negative subnormal: loads as -0 */
#define F_PI_2 0x3fc90fdbull
#define F_PI 0x40490fdbull
#define F_2P24 0x4b800000ull /* 16777216 */

typedef struct opcase {
  uint16_t op;
  uint8_t ta; /* operand type (select: the arms' type) */
  uint8_t tr; /* result type */
  uint64_t a, b, c;
  uint64_t want;
  int line;
} opcase;

#define T(x) VYRE_T_##x
#define BIN(op, t, a, b, r) {VYRE_OP_##op, T(t), T(t), a, b, 0, r, __LINE__}
#define CMP(op, t, a, b, r) {VYRE_OP_##op, T(t), T(BOOL), a, b, 0, r, __LINE__}
#define UN(op, t, a, r) {VYRE_OP_##op, T(t), T(t), a, 0, 0, r, __LINE__}
#define PRED(op, a, r) {VYRE_OP_##op, T(F32), T(BOOL), a, 0, 0, r, __LINE__}
#define CAST(from, to, a, r) {VYRE_OP_CAST, T(from), T(to), a, 0, 0, r, __LINE__}
#define SEL(t, cond, x, y, r) {VYRE_OP_SELECT, T(t), T(t), cond, x, y, r, __LINE__}
#define FMA(x, y, z, r) {VYRE_OP_FMA, T(F32), T(F32), x, y, z, r, __LINE__}

/* ------------------------------------------------------------------ */
/* Integers                                                            */
/* ------------------------------------------------------------------ */
static const opcase int_cases[] = {
    /* u32 */
    BIN(ADD, U32, U32MAX, 1, 0),
    BIN(ADD, U32, I32MAX, 1, I32MIN),
    BIN(ADD, U32, 0, 0, 0),
    BIN(SUB, U32, 0, 1, U32MAX),
    BIN(SUB, U32, 5, 3, 2),
    BIN(MUL, U32, U32MAX, U32MAX, 1),
    BIN(MUL, U32, 0x10000, 0x10000, 0),
    BIN(MUL, U32, 3, 5, 15),
    BIN(DIV, U32, 7, 0, U32MAX),
    BIN(DIV, U32, 0, 0, U32MAX),
    BIN(DIV, U32, 7, 2, 3),
    BIN(DIV, U32, U32MAX, 1, U32MAX),
    BIN(DIV, U32, I32MIN, U32MAX, 0),
    BIN(MOD, U32, 7, 0, 0),
    BIN(MOD, U32, 7, 3, 1),
    BIN(MOD, U32, U32MAX, 16, 15),
    BIN(AND, U32, 0xf0f0f0f0, 0xff00ff00, 0xf000f000),
    BIN(OR, U32, 0xf0f0f0f0, 0xff00ff00, 0xfff0fff0),
    BIN(XOR, U32, 0xf0f0f0f0, 0xff00ff00, 0x0ff00ff0),
    BIN(SHL, U32, 1, 31, I32MIN),
    BIN(SHL, U32, 1, 32, 1),
    BIN(SHL, U32, 1, 33, 2),
    BIN(SHL, U32, U32MAX, U32MAX, I32MIN),
    BIN(SHR, U32, I32MIN, 31, 1),
    BIN(SHR, U32, I32MIN, 32, I32MIN),
    BIN(SHR, U32, U32MAX, 4, 0x0fffffff),
    BIN(ROTL, U32, 0x80000001, 1, 3),
    BIN(ROTL, U32, 0x12345678, 4, 0x23456781),
    BIN(ROTL, U32, 0x12345678, 32, 0x12345678),
    BIN(ROTL, U32, 0x12345678, 36, 0x23456781),
    BIN(ROTR, U32, 0x80000001, 1, 0xc0000000),
    BIN(ROTR, U32, 0x12345678, 4, 0x81234567),
    BIN(ROTR, U32, 0x12345678, 0, 0x12345678),
    BIN(MIN, U32, U32MAX, 0, 0),
    BIN(MIN, U32, 3, 9, 3),
    BIN(MAX, U32, U32MAX, 0, U32MAX),
    BIN(MAX, U32, 3, 9, 9),
    BIN(ABSDIFF, U32, 0, U32MAX, U32MAX),
    BIN(ABSDIFF, U32, 10, 3, 7),
    BIN(ABSDIFF, U32, 3, 10, 7),
    BIN(SAT_ADD, U32, U32MAX, 1, U32MAX),
    BIN(SAT_ADD, U32, 0xfffffffe, 1, U32MAX),
    BIN(SAT_ADD, U32, 0x80000000, 0x80000000, U32MAX),
    BIN(SAT_ADD, U32, 1, 2, 3),
    BIN(SAT_SUB, U32, 0, 1, 0),
    BIN(SAT_SUB, U32, 5, 3, 2),
    BIN(SAT_SUB, U32, 3, 5, 0),
    BIN(SAT_MUL, U32, 0x10000, 0x10000, U32MAX),
    BIN(SAT_MUL, U32, 0xffff, 0x10001, U32MAX),
    BIN(SAT_MUL, U32, I32MIN, 2, U32MAX),
    BIN(SAT_MUL, U32, 3, 5, 15),
    BIN(WRAP_ADD, U32, U32MAX, 2, 1),
    BIN(WRAP_SUB, U32, 0, 1, U32MAX),
    BIN(MULHI, U32, U32MAX, U32MAX, 0xfffffffe),
    BIN(MULHI, U32, 0x10000, 0x10000, 1),
    BIN(MULHI, U32, 2, 3, 0),
    /* i32 */
    BIN(ADD, I32, I32MAX, 1, I32MIN),
    BIN(ADD, I32, I32(-1), 1, 0),
    BIN(SUB, I32, I32MIN, 1, I32MAX),
    BIN(MUL, I32, I32MIN, I32(-1), I32MIN),
    BIN(MUL, I32, I32(-1), I32(-1), 1),
    BIN(MUL, I32, 0x10000, 0x10000, 0),
    BIN(DIV, I32, 7, 0, 0),
    BIN(DIV, I32, I32MIN, 0, 0),
    BIN(DIV, I32, I32MIN, I32(-1), I32MIN),
    BIN(DIV, I32, I32(-7), 2, I32(-3)),
    BIN(DIV, I32, 7, I32(-2), I32(-3)),
    BIN(DIV, I32, I32(-1), I32(-1), 1),
    BIN(MOD, I32, 7, 0, 0),
    BIN(MOD, I32, I32MIN, I32(-1), 0),
    BIN(MOD, I32, I32(-7), 2, I32(-1)),
    BIN(MOD, I32, 7, I32(-2), 1),
    BIN(MOD, I32, I32(-7), I32(-2), I32(-1)),
    BIN(AND, I32, I32(-1), 0x1234, 0x1234),
    BIN(OR, I32, I32MIN, 1, 0x80000001),
    BIN(XOR, I32, I32(-1), I32MAX, I32MIN),
    BIN(SHL, I32, 1, 31, I32MIN),
    BIN(SHL, I32, I32(-1), 1, I32(-2)),
    BIN(SHL, I32, 1, I32(-1), I32MIN), /* amount bits 0xffffffff mod 32 = 31 */
    BIN(SHL, I32, 1, 32, 1),
    BIN(SHR, I32, I32MIN, 31, I32(-1)),
    BIN(SHR, I32, I32MIN, 32, I32MIN),
    BIN(SHR, I32, I32MIN, I32(-1), I32(-1)),
    BIN(SHR, I32, I32MAX, 30, 1),
    BIN(SHR, I32, I32(-16), 2, I32(-4)),
    BIN(ROTL, I32, 0x80000001, 1, 3),
    BIN(ROTL, I32, 0x12345678, I32(-4), 0x81234567), /* 0xfffffffc mod 32 = 28 */
    BIN(ROTR, I32, 1, 1, I32MIN),
    BIN(ROTR, I32, 0x12345678, 36, 0x81234567),
    BIN(MIN, I32, I32(-1), 0, I32(-1)),
    BIN(MIN, I32, I32MIN, I32MAX, I32MIN),
    BIN(MAX, I32, I32(-1), 0, 0),
    BIN(MAX, I32, I32MIN, I32MAX, I32MAX),
    BIN(ABSDIFF, I32, I32MAX, I32MIN, U32MAX), /* 2^32 - 1 wraps to -1 */
    BIN(ABSDIFF, I32, I32(-5), 3, 8),
    BIN(ABSDIFF, I32, 3, I32(-5), 8),
    BIN(ABSDIFF, I32, I32MIN, 0, I32MIN),
    BIN(SAT_ADD, I32, I32MAX, 1, I32MAX),
    BIN(SAT_ADD, I32, I32MIN, I32(-1), I32MIN),
    BIN(SAT_ADD, I32, I32(-1), 1, 0),
    BIN(SAT_ADD, I32, I32MAX, I32MIN, I32(-1)),
    BIN(SAT_SUB, I32, I32MIN, 1, I32MIN),
    BIN(SAT_SUB, I32, I32MAX, I32(-1), I32MAX),
    BIN(SAT_SUB, I32, 0, I32MIN, I32MAX),
    BIN(SAT_SUB, I32, I32(-1), I32MAX, I32MIN), /* exactly MIN: no saturation */
    BIN(SAT_MUL, I32, I32MIN, I32(-1), I32MAX),
    BIN(SAT_MUL, I32, 0x10000, 0x10000, I32MAX),
    BIN(SAT_MUL, I32, 0x10000, I32(-65536), I32MIN),
    BIN(SAT_MUL, I32, I32(-3), 5, I32(-15)),
    BIN(SAT_MUL, I32, 0x40000000, 2, I32MAX),
    BIN(SAT_MUL, I32, I32(-0x40000000), 2, I32MIN), /* exactly MIN */
    BIN(WRAP_ADD, I32, I32MAX, 1, I32MIN),
    BIN(WRAP_SUB, I32, I32MIN, 1, I32MAX),
    BIN(MULHI, I32, I32(-1), I32(-1), 0),
    BIN(MULHI, I32, I32MIN, I32MIN, 0x40000000),
    BIN(MULHI, I32, I32MIN, I32(-1), 0),
    BIN(MULHI, I32, I32(-1), 1, U32MAX),
    BIN(MULHI, I32, I32MAX, I32MAX, 0x3fffffff),
    /* u64 */
    BIN(ADD, U64, U64MAX, 1, 0),
    BIN(ADD, U64, 0xffffffff, 1, 0x100000000ull),
    BIN(SUB, U64, 0, 1, U64MAX),
    BIN(MUL, U64, 0x100000000ull, 0x100000000ull, 0),
    BIN(MUL, U64, U64MAX, U64MAX, 1),
    BIN(DIV, U64, 7, 0, U64MAX),
    BIN(DIV, U64, U64MAX, 2, I64MAX),
    BIN(DIV, U64, I64MIN, U64MAX, 0),
    BIN(MOD, U64, 7, 0, 0),
    BIN(MOD, U64, U64MAX, 10, 5),
    BIN(AND, U64, 0xff000000ff000000ull, 0xf0f0f0f0f0f0f0f0ull, 0xf0000000f0000000ull),
    BIN(OR, U64, 0xff00000000000000ull, 0xff, 0xff000000000000ffull),
    BIN(XOR, U64, U64MAX, 0x00ff00ff00ff00ffull, 0xff00ff00ff00ff00ull),
    BIN(SHL, U64, 1, 63, I64MIN),
    BIN(SHL, U64, 1, 64, 1),
    BIN(SHL, U64, 1, 65, 2),
    BIN(SHL, U64, 1, 32, 0x100000000ull),
    BIN(SHR, U64, I64MIN, 63, 1),
    BIN(SHR, U64, I64MIN, 64, I64MIN),
    BIN(SHR, U64, U64MAX, 60, 15),
    BIN(ROTL, U64, 0x8000000000000001ull, 1, 3),
    BIN(ROTL, U64, 0x0123456789abcdefull, 68, 0x123456789abcdef0ull),
    BIN(ROTR, U64, 1, 1, I64MIN),
    BIN(ROTR, U64, 0x0123456789abcdefull, 4, 0xf0123456789abcdeull),
    BIN(MIN, U64, U64MAX, 0, 0),
    BIN(MAX, U64, U64MAX, 0, U64MAX),
    BIN(ABSDIFF, U64, 0, U64MAX, U64MAX),
    BIN(ABSDIFF, U64, 10, 3, 7),
    BIN(SAT_ADD, U64, U64MAX, 1, U64MAX),
    BIN(SAT_ADD, U64, 1, 2, 3),
    BIN(SAT_SUB, U64, 0, 1, 0),
    BIN(SAT_SUB, U64, 5, 3, 2),
    BIN(SAT_MUL, U64, 0x100000000ull, 0x100000000ull, U64MAX),
    BIN(SAT_MUL, U64, 0xffffffffull, 0x100000001ull, U64MAX),
    BIN(SAT_MUL, U64, 3, 5, 15),
    BIN(WRAP_ADD, U64, U64MAX, 2, 1),
    BIN(WRAP_SUB, U64, 0, 2, 0xfffffffffffffffeull),
    BIN(MULHI, U64, U64MAX, U64MAX, 0xfffffffffffffffeull),
    BIN(MULHI, U64, 0x100000000ull, 0x100000000ull, 1),
    BIN(MULHI, U64, 2, 3, 0),
    /* i64 */
    BIN(ADD, I64, I64MAX, 1, I64MIN),
    BIN(SUB, I64, I64MIN, 1, I64MAX),
    BIN(MUL, I64, I64MIN, I64(-1), I64MIN),
    BIN(MUL, I64, I64(-3), 5, I64(-15)),
    BIN(DIV, I64, 7, 0, 0),
    BIN(DIV, I64, I64MIN, I64(-1), I64MIN),
    BIN(DIV, I64, I64(-7), 2, I64(-3)),
    BIN(DIV, I64, I64MIN, 2, 0xc000000000000000ull),
    BIN(MOD, I64, 7, 0, 0),
    BIN(MOD, I64, I64MIN, I64(-1), 0),
    BIN(MOD, I64, I64(-7), 2, I64(-1)),
    BIN(MOD, I64, 7, I64(-2), 1),
    BIN(AND, I64, I64(-1), I64MIN, I64MIN),
    BIN(OR, I64, I64MIN, 1, 0x8000000000000001ull),
    BIN(XOR, I64, I64(-1), I64MAX, I64MIN),
    BIN(SHL, I64, 1, 63, I64MIN),
    BIN(SHL, I64, 1, I64(-1), I64MIN), /* amount mod 64 = 63 */
    BIN(SHR, I64, I64MIN, 63, I64(-1)),
    BIN(SHR, I64, I64MIN, 64, I64MIN),
    BIN(SHR, I64, I64(-256), 4, I64(-16)),
    BIN(SHR, I64, I64MAX, 62, 1),
    BIN(ROTL, I64, 0x8000000000000001ull, 1, 3),
    BIN(ROTR, I64, 3, 1, 0x8000000000000001ull),
    BIN(MIN, I64, I64(-1), 0, I64(-1)),
    BIN(MIN, I64, I64MIN, I64MAX, I64MIN),
    BIN(MAX, I64, I64(-1), 0, 0),
    BIN(MAX, I64, I64MIN, I64MAX, I64MAX),
    BIN(ABSDIFF, I64, I64MAX, I64MIN, U64MAX),
    BIN(ABSDIFF, I64, I64(-5), 3, 8),
    BIN(SAT_ADD, I64, I64MAX, 1, I64MAX),
    BIN(SAT_ADD, I64, I64MIN, I64(-1), I64MIN),
    BIN(SAT_ADD, I64, I64MAX, I64MIN, I64(-1)),
    BIN(SAT_SUB, I64, I64MIN, 1, I64MIN),
    BIN(SAT_SUB, I64, 0, I64MIN, I64MAX),
    BIN(SAT_SUB, I64, I64(-1), I64MAX, I64MIN),
    BIN(SAT_MUL, I64, I64MIN, I64(-1), I64MAX),
    BIN(SAT_MUL, I64, 0x100000000ll, 0x100000000ll, I64MAX),
    BIN(SAT_MUL, I64, 0x100000000ll, I64(-0x100000000ll), I64MIN),
    BIN(SAT_MUL, I64, I64(-3), 5, I64(-15)),
    BIN(WRAP_ADD, I64, I64MAX, 1, I64MIN),
    BIN(WRAP_SUB, I64, I64MIN, 1, I64MAX),
    BIN(MULHI, I64, I64(-1), I64(-1), 0),
    BIN(MULHI, I64, I64MIN, I64MIN, 0x4000000000000000ull),
    BIN(MULHI, I64, I64(-1), 1, U64MAX),
    BIN(MULHI, I64, I64MIN, I64(-1), 0),
    /* bool: and/or/xor are logical; a stored 2 loads as true */
    BIN(AND, BOOL, 1, 1, 1),
    BIN(AND, BOOL, 1, 0, 0),
    BIN(AND, BOOL, 2, 1, 1),
    BIN(OR, BOOL, 0, 0, 0),
    BIN(OR, BOOL, 0, 1, 1),
    BIN(XOR, BOOL, 1, 1, 0),
    BIN(XOR, BOOL, 1, 0, 1),
    BIN(XOR, BOOL, 2, 1, 0),
    BIN(LOGICAL_AND, BOOL, 1, 0, 0),
    BIN(LOGICAL_AND, BOOL, 1, 1, 1),
    BIN(LOGICAL_OR, BOOL, 0, 0, 0),
    BIN(LOGICAL_OR, BOOL, 1, 0, 1),
};

static const opcase cmp_cases[] = {
    CMP(EQ, U32, 1, 1, 1),
    CMP(EQ, U32, 1, 2, 0),
    CMP(NE, U32, 1, 2, 1),
    CMP(LT, U32, U32MAX, 0, 0),
    CMP(LT, U32, 0, U32MAX, 1),
    CMP(LE, U32, U32MAX, U32MAX, 1),
    CMP(GT, U32, I32MIN, I32MAX, 1),
    CMP(GE, U32, 0, 1, 0),
    CMP(EQ, I32, I32(-1), U32MAX, 1),
    CMP(LT, I32, I32(-1), 0, 1),
    CMP(LT, I32, I32MIN, I32MAX, 1),
    CMP(LE, I32, I32MAX, I32MAX, 1),
    CMP(LE, I32, 0, I32(-1), 0),
    CMP(GT, I32, I32MIN, I32MAX, 0),
    CMP(GE, I32, I32(-1), I32MIN, 1),
    CMP(NE, I32, I32MIN, I32MIN, 0),
    CMP(EQ, U64, 0x100000000ull, 0, 0),
    CMP(LT, U64, U64MAX, 0, 0),
    CMP(GT, U64, U64MAX, 0, 1),
    CMP(GE, U64, I64MIN, I64MAX, 1),
    CMP(LE, U64, 0x100000000ull, 0xffffffffull, 0),
    CMP(NE, U64, 0x100000000ull, 0, 1),
    CMP(LT, I64, I64(-1), 0, 1),
    CMP(GT, I64, U64MAX, 0, 0),
    CMP(GE, I64, I64MIN, I64MIN, 1),
    CMP(GE, I64, I64MIN, I64MAX, 0),
    CMP(LE, I64, I64(-2), I64(-1), 1),
    CMP(EQ, I64, I64MIN, I64MIN, 1),
    CMP(NE, I64, 1, 0x100000001ull, 1),
    CMP(EQ, BOOL, 1, 1, 1),
    CMP(EQ, BOOL, 0, 1, 0),
    CMP(EQ, BOOL, 2, 1, 1),
    CMP(NE, BOOL, 0, 1, 1),
    CMP(NE, BOOL, 0, 0, 0),
    /* f32: IEEE, -0 == +0, NaN unordered */
    CMP(EQ, F32, F_N0, F_0, 1),
    CMP(EQ, F32, F_NAN, F_NAN, 0),
    CMP(EQ, F32, F_INF, F_INF, 1),
    CMP(EQ, F32, F_SUB, F_0, 1), /* the subnormal loads as +0 */
    CMP(NE, F32, F_NAN, F_NAN, 1),
    CMP(NE, F32, F_N0, F_0, 0),
    CMP(NE, F32, F_1, F_2, 1),
    CMP(LT, F32, F_NAN, F_1, 0),
    CMP(LT, F32, F_1, F_NAN, 0),
    CMP(LT, F32, F_N0, F_0, 0),
    CMP(LT, F32, F_NINF, F_NMAX, 1),
    CMP(LE, F32, F_N0, F_0, 1),
    CMP(LE, F32, F_NAN, F_NAN, 0),
    CMP(GT, F32, F_1, F_N1, 1),
    CMP(GT, F32, F_NAN, F_NAN, 0),
    CMP(GE, F32, F_0, F_N0, 1),
    CMP(GE, F32, F_INF, F_NAN, 0),
};

static const opcase int_unary_cases[] = {
    UN(NEG, U32, 1, U32MAX),
    UN(NEG, U32, 0, 0),
    UN(NEG, U32, I32MIN, I32MIN),
    UN(BITNOT, U32, 0, U32MAX),
    UN(BITNOT, U32, 0x0f0f0f0f, 0xf0f0f0f0),
    UN(POPCOUNT, U32, U32MAX, 32),
    UN(POPCOUNT, U32, 0, 0),
    UN(POPCOUNT, U32, 0x80000001, 2),
    UN(CLZ, U32, 0, 32),
    UN(CLZ, U32, 1, 31),
    UN(CLZ, U32, I32MIN, 0),
    UN(CLZ, U32, 0x00010000, 15),
    UN(CTZ, U32, 0, 32),
    UN(CTZ, U32, I32MIN, 31),
    UN(CTZ, U32, 1, 0),
    UN(CTZ, U32, 0x00010000, 16),
    UN(REVERSEBITS, U32, 1, I32MIN),
    UN(REVERSEBITS, U32, 0x12345678, 0x1e6a2c48),
    UN(REVERSEBITS, U32, U32MAX, U32MAX),
    UN(REVERSEBITS, U32, 0, 0),
    UN(ABS, U32, U32MAX, U32MAX),
    UN(SIGN, U32, 0, 0),
    UN(SIGN, U32, U32MAX, 1),
    UN(SIGN, U32, 7, 1),
    UN(NEG, I32, I32MIN, I32MIN),
    UN(NEG, I32, I32(-1), 1),
    UN(NEG, I32, I32MAX, 0x80000001),
    UN(BITNOT, I32, I32(-1), 0),
    UN(POPCOUNT, I32, I32(-1), 32),
    UN(POPCOUNT, I32, I32MIN, 1),
    UN(CLZ, I32, I32(-1), 0),
    UN(CLZ, I32, 1, 31),
    UN(CLZ, I32, 0, 32),
    UN(CTZ, I32, I32MIN, 31),
    UN(CTZ, I32, 0, 32),
    UN(REVERSEBITS, I32, 1, I32MIN),
    UN(ABS, I32, I32MIN, I32MIN),
    UN(ABS, I32, I32(-5), 5),
    UN(ABS, I32, 5, 5),
    UN(ABS, I32, 0, 0),
    UN(SIGN, I32, I32(-7), I32(-1)),
    UN(SIGN, I32, I32MIN, I32(-1)),
    UN(SIGN, I32, 0, 0),
    UN(SIGN, I32, I32MAX, 1),
    UN(NEG, U64, 1, U64MAX),
    UN(NEG, U64, I64MIN, I64MIN),
    UN(BITNOT, U64, 0, U64MAX),
    UN(POPCOUNT, U64, U64MAX, 64),
    UN(POPCOUNT, U64, 0x100000001ull, 2),
    UN(CLZ, U64, 0, 64),
    UN(CLZ, U64, 1, 63),
    UN(CLZ, U64, 0x100000000ull, 31),
    UN(CTZ, U64, 0, 64),
    UN(CTZ, U64, I64MIN, 63),
    UN(CTZ, U64, 0x100000000ull, 32),
    UN(REVERSEBITS, U64, 1, I64MIN),
    UN(REVERSEBITS, U64, 0x0000000000000f0full, 0xf0f0000000000000ull),
    UN(ABS, U64, U64MAX, U64MAX),
    UN(SIGN, U64, I64MIN, 1),
    UN(SIGN, U64, 0, 0),
    UN(NEG, I64, I64MIN, I64MIN),
    UN(NEG, I64, 5, I64(-5)),
    UN(BITNOT, I64, I64MAX, I64MIN),
    UN(POPCOUNT, I64, I64(-1), 64),
    UN(CLZ, I64, I64(-1), 0),
    UN(CLZ, I64, 0, 64),
    UN(CTZ, I64, 0, 64),
    UN(CTZ, I64, I64MIN, 63),
    UN(REVERSEBITS, I64, I64MIN, 1),
    UN(ABS, I64, I64MIN, I64MIN),
    UN(ABS, I64, I64(-9), 9),
    UN(SIGN, I64, I64(-1), I64(-1)),
    UN(SIGN, I64, I64MIN, I64(-1)),
    UN(SIGN, I64, 0, 0),
    UN(SIGN, I64, 0x100000000ull, 1),
    UN(NOT, BOOL, 0, 1),
    UN(NOT, BOOL, 1, 0),
    UN(NOT, BOOL, 2, 0),
    UN(UNPACK4_LOW, U32, 0x87654321, 0x04030201),
    UN(UNPACK4_HIGH, U32, 0x87654321, 0x08070605),
    UN(UNPACK4_LOW, U32, U32MAX, 0x0f0f0f0f),
    UN(UNPACK4_HIGH, U32, 0, 0),
    UN(UNPACK8_LOW, U32, 0x87654321, 0x00430021),
    UN(UNPACK8_HIGH, U32, 0x87654321, 0x00870065),
    UN(UNPACK8_LOW, U32, U32MAX, 0x00ff00ff),
    UN(UNPACK8_HIGH, U32, 0x0000ffff, 0),
};

/* ------------------------------------------------------------------ */
/* f32                                                                 */
/* ------------------------------------------------------------------ */
static const opcase f32_cases[] = {
    BIN(ADD, F32, F_1, F_1, F_2),
    BIN(ADD, F32, F_0, F_N0, F_0),
    BIN(ADD, F32, F_N0, F_N0, F_N0),
    BIN(ADD, F32, F_INF, F_NINF, F_NAN),
    BIN(ADD, F32, F_INF, F_1, F_INF),
    BIN(ADD, F32, F_NAN, F_1, F_NAN),
    BIN(ADD, F32, F_MAX, F_MAX, F_INF),
    BIN(ADD, F32, F_2P24, F_1, F_2P24),              /* tie: to even */
    BIN(ADD, F32, 0x4b800001, F_1, 0x4b800002),      /* 16777218 + 1: tie, up to even */
    BIN(ADD, F32, F_SUB, F_0, F_0),                  /* subnormal input loads as +0 */
    BIN(ADD, F32, F_NSUB, F_N0, F_N0),               /* ... and a negative one as -0 */
    BIN(ADD, F32, 0xffffffff, F_1, F_NAN),           /* a non-canonical NaN loads canonical */
    BIN(SUB, F32, F_INF, F_INF, F_NAN),
    BIN(SUB, F32, F_1, F_1, F_0),
    BIN(SUB, F32, F_N0, F_0, F_N0),
    BIN(SUB, F32, 0x00800001, F_MIN, F_0),           /* 2^-149 result: flushed to +0 */
    BIN(SUB, F32, F_MIN, 0x00800001, F_N0),          /* ... and to -0 */
    BIN(MUL, F32, F_0, F_INF, F_NAN),
    BIN(MUL, F32, F_N1, F_0, F_N0),
    BIN(MUL, F32, F_MIN, F_HALF, F_0),               /* subnormal product */
    BIN(MUL, F32, F_NMIN, F_HALF, F_N0),
    BIN(MUL, F32, F_MAX, F_2, F_INF),
    BIN(MUL, F32, F_3, F_HALF, F_1_5),
    BIN(MUL, F32, 0x3f800001, 0x3f800001, 0x3f800002), /* (1+2^-23)^2 rounds down */
    BIN(DIV, F32, F_1, F_0, F_INF),
    BIN(DIV, F32, F_N1, F_0, F_NINF),
    BIN(DIV, F32, F_1, F_N0, F_NINF),
    BIN(DIV, F32, F_0, F_0, F_NAN),
    BIN(DIV, F32, F_INF, F_INF, F_NAN),
    BIN(DIV, F32, F_1, F_3, 0x3eaaaaab),
    BIN(DIV, F32, F_1, F_INF, F_0),
    BIN(DIV, F32, F_N1, F_INF, F_N0),
    BIN(DIV, F32, F_MIN, F_2, F_0),
    BIN(MIN, F32, F_NAN, F_1, F_1),
    BIN(MIN, F32, F_1, F_NAN, F_1),
    BIN(MIN, F32, F_NAN, F_NAN, F_NAN),
    BIN(MIN, F32, F_N0, F_0, F_N0),
    BIN(MIN, F32, F_0, F_N0, F_N0),
    BIN(MIN, F32, F_NINF, F_1, F_NINF),
    BIN(MIN, F32, F_2, F_1, F_1),
    BIN(MAX, F32, F_NAN, F_1, F_1),
    BIN(MAX, F32, F_1, F_NAN, F_1),
    BIN(MAX, F32, F_NAN, F_NAN, F_NAN),
    BIN(MAX, F32, F_N0, F_0, F_0),
    BIN(MAX, F32, F_0, F_N0, F_0),
    BIN(MAX, F32, F_INF, F_1, F_INF),
    BIN(MAX, F32, F_N1, F_NINF, F_N1),
    BIN(ABSDIFF, F32, F_1, F_3, F_2),
    BIN(ABSDIFF, F32, F_3, F_1, F_2),
    BIN(ABSDIFF, F32, F_INF, F_INF, F_NAN),
    BIN(ABSDIFF, F32, F_N0, F_0, F_0),
    BIN(ABSDIFF, F32, F_NAN, F_1, F_NAN),
    BIN(ABSDIFF, F32, F_NINF, F_INF, F_INF),
    BIN(ABSDIFF, F32, F_MAX, F_NMAX, F_INF),
    UN(NEG, F32, F_0, F_N0),
    UN(NEG, F32, F_N0, F_0),
    UN(NEG, F32, F_NAN, F_NAN),
    UN(NEG, F32, F_INF, F_NINF),
    UN(NEG, F32, F_1, F_N1),
    UN(ABS, F32, F_N0, F_0),
    UN(ABS, F32, F_NINF, F_INF),
    UN(ABS, F32, F_NAN, F_NAN),
    UN(ABS, F32, F_N1, F_1),
    UN(SIGN, F32, F_NAN, F_NAN),
    UN(SIGN, F32, F_N0, F_N0),
    UN(SIGN, F32, F_0, F_0),
    UN(SIGN, F32, F_NINF, F_N1),
    UN(SIGN, F32, 0x40a00000, F_1),
    UN(SIGN, F32, F_NMIN, F_N1),
    UN(FLOOR, F32, F_NHALF, F_N1),
    UN(FLOOR, F32, F_HALF, F_0),
    UN(FLOOR, F32, F_N0, F_N0),
    UN(FLOOR, F32, F_1_5, F_1),
    UN(FLOOR, F32, F_N1_5, 0xc0000000),
    UN(FLOOR, F32, F_INF, F_INF),
    UN(FLOOR, F32, F_NAN, F_NAN),
    UN(CEIL, F32, F_NHALF, F_N0),
    UN(CEIL, F32, F_HALF, F_1),
    UN(CEIL, F32, F_1_5, F_2),
    UN(CEIL, F32, F_N1_5, F_N1),
    UN(CEIL, F32, F_NINF, F_NINF),
    UN(ROUND, F32, F_HALF, F_0),
    UN(ROUND, F32, F_1_5, F_2),
    UN(ROUND, F32, F_2_5, F_2),
    UN(ROUND, F32, F_N2_5, 0xc0000000),
    UN(ROUND, F32, F_3_5, F_4),
    UN(ROUND, F32, F_NHALF, F_N0),
    UN(ROUND, F32, 0xbecccccd, F_N0),                /* -0.4 */
    UN(ROUND, F32, 0x3f19999a, F_1),                 /* 0.6 */
    UN(ROUND, F32, 0x4afffffF, 0x4b000000),          /* 8388607.5: tie, up to even */
    UN(ROUND, F32, 0x4a800001, 0x4a800000),          /* 4194304.5: tie, down to even */
    UN(ROUND, F32, 0x4b000001, 0x4b000001),          /* 8388609: already integral */
    UN(ROUND, F32, F_INF, F_INF),
    UN(ROUND, F32, F_NAN, F_NAN),
    UN(TRUNC, F32, F_N1_5, F_N1),
    UN(TRUNC, F32, F_1_5, F_1),
    UN(TRUNC, F32, F_NHALF, F_N0),
    UN(TRUNC, F32, F_NINF, F_NINF),
    UN(TRUNC, F32, F_NAN, F_NAN),
    UN(SQRT, F32, F_4, F_2),
    UN(SQRT, F32, F_N0, F_N0),
    UN(SQRT, F32, F_0, F_0),
    UN(SQRT, F32, F_N1, F_NAN),
    UN(SQRT, F32, F_NINF, F_NAN),
    UN(SQRT, F32, F_INF, F_INF),
    UN(SQRT, F32, F_2, 0x3fb504f3),
    UN(RCP, F32, F_0, F_INF),
    UN(RCP, F32, F_N0, F_NINF),
    UN(RCP, F32, F_INF, F_0),
    UN(RCP, F32, F_NINF, F_N0),
    UN(RCP, F32, F_2, F_HALF),
    UN(RCP, F32, F_3, 0x3eaaaaab),
    UN(RCP, F32, F_MAX, F_0), /* 2^-128-ish is subnormal: flushed */
    UN(RCP, F32, F_NMAX, F_N0),
    UN(RCP, F32, F_NAN, F_NAN),
    /* Transcendentals: the exact special values of docs/semantics.md. */
    UN(RSQRT, F32, F_4, F_HALF),
    UN(RSQRT, F32, F_1, F_1),
    UN(RSQRT, F32, F_0, F_INF),
    UN(RSQRT, F32, F_N0, F_NINF),
    UN(RSQRT, F32, F_INF, F_0),
    UN(RSQRT, F32, F_N1, F_NAN),
    UN(RSQRT, F32, F_NAN, F_NAN),
    UN(EXP, F32, F_0, F_1),
    UN(EXP, F32, F_N0, F_1),
    UN(EXP, F32, F_NINF, F_0),
    UN(EXP, F32, F_INF, F_INF),
    UN(EXP, F32, F_NAN, F_NAN),
    UN(EXP, F32, 0x42b20000, F_INF),                 /* exp(89) overflows */
    UN(EXP, F32, 0xc2d00000, F_0),                   /* exp(-104) underflows */
    UN(EXP2, F32, F_0, F_1),
    UN(EXP2, F32, F_1, F_2),
    UN(EXP2, F32, 0x41200000, 0x44800000),           /* 2^10 = 1024 */
    UN(EXP2, F32, F_N1, F_HALF),
    UN(EXP2, F32, F_NINF, F_0),
    UN(EXP2, F32, F_INF, F_INF),
    UN(EXP2, F32, 0x43000000, F_INF),                /* 2^128 */
    UN(EXP2, F32, 0xc2fc0000, F_MIN),                /* 2^-126 */
    UN(EXP2, F32, 0xc2fe0000, F_0),                  /* 2^-127 is subnormal */
    UN(LOG, F32, F_1, F_0),
    UN(LOG, F32, F_0, F_NINF),
    UN(LOG, F32, F_N0, F_NINF),
    UN(LOG, F32, F_N1, F_NAN),
    UN(LOG, F32, F_INF, F_INF),
    UN(LOG, F32, F_NINF, F_NAN),
    UN(LOG, F32, F_NAN, F_NAN),
    UN(LOG2, F32, F_1, F_0),
    UN(LOG2, F32, F_2, F_1),
    UN(LOG2, F32, 0x44800000, 0x41200000),           /* log2(1024) = 10 */
    UN(LOG2, F32, F_HALF, F_N1),
    UN(LOG2, F32, F_MIN, 0xc2fc0000),                /* -126 */
    UN(LOG2, F32, F_0, F_NINF),
    UN(LOG2, F32, F_N1, F_NAN),
    UN(LOG2, F32, F_INF, F_INF),
    UN(SIN, F32, F_0, F_0),
    UN(SIN, F32, F_N0, F_N0),
    UN(SIN, F32, F_INF, F_NAN),
    UN(SIN, F32, F_NINF, F_NAN),
    UN(SIN, F32, F_NAN, F_NAN),
    UN(COS, F32, F_0, F_1),
    UN(COS, F32, F_N0, F_1),
    UN(COS, F32, F_INF, F_NAN),
    UN(TAN, F32, F_0, F_0),
    UN(TAN, F32, F_N0, F_N0),
    UN(TAN, F32, F_NINF, F_NAN),
    UN(ASIN, F32, F_0, F_0),
    UN(ASIN, F32, F_N0, F_N0),
    UN(ASIN, F32, F_1, F_PI_2),
    UN(ASIN, F32, F_N1, 0xbfc90fdb),
    UN(ASIN, F32, F_2, F_NAN),
    UN(ACOS, F32, F_1, F_0),
    UN(ACOS, F32, F_N1, F_PI),
    UN(ACOS, F32, F_0, F_PI_2),
    UN(ACOS, F32, F_2, F_NAN),
    UN(ATAN, F32, F_0, F_0),
    UN(ATAN, F32, F_N0, F_N0),
    UN(ATAN, F32, F_INF, F_PI_2),
    UN(ATAN, F32, F_NINF, 0xbfc90fdb),
    UN(ATAN, F32, F_NAN, F_NAN),
    UN(SINH, F32, F_0, F_0),
    UN(SINH, F32, F_N0, F_N0),
    UN(SINH, F32, F_INF, F_INF),
    UN(SINH, F32, F_NINF, F_NINF),
    UN(SINH, F32, 0x42c80000, F_INF),                /* sinh(100) overflows */
    UN(COSH, F32, F_0, F_1),
    UN(COSH, F32, F_INF, F_INF),
    UN(COSH, F32, F_NINF, F_INF),
    UN(COSH, F32, F_NAN, F_NAN),
    UN(TANH, F32, F_0, F_0),
    UN(TANH, F32, F_N0, F_N0),
    UN(TANH, F32, F_INF, F_1),
    UN(TANH, F32, F_NINF, F_N1),
    UN(TANH, F32, 0x41a00000, F_1),                  /* tanh(20) rounds to 1 */
    PRED(ISNAN, F_NAN, 1),
    PRED(ISNAN, 0xffc00001, 1),
    PRED(ISNAN, F_INF, 0),
    PRED(ISNAN, F_0, 0),
    PRED(ISINF, F_INF, 1),
    PRED(ISINF, F_NINF, 1),
    PRED(ISINF, F_NAN, 0),
    PRED(ISINF, F_MAX, 0),
    PRED(ISFINITE, F_INF, 0),
    PRED(ISFINITE, F_NAN, 0),
    PRED(ISFINITE, F_MAX, 1),
    PRED(ISFINITE, F_N0, 1),
    PRED(ISFINITE, F_SUB, 1),
    FMA(F_1, F_1, F_1, F_2),
    FMA(0x3f800001, 0x3f800001, 0xbf800002, 0x28800000), /* the product's rounding error, 2^-46 */
    FMA(F_MAX, F_2, F_NMAX, F_MAX),                  /* fused: no overflow in between */
    FMA(F_INF, F_0, F_1, F_NAN),
    FMA(F_MIN, F_HALF, F_0, F_0),                    /* subnormal result flushed */
    FMA(F_NMIN, F_HALF, F_N0, F_N0),
    FMA(F_0, F_N1, F_0, F_0),
    FMA(F_0, F_N1, F_N0, F_N0),
    FMA(F_1, F_1, F_NAN, F_NAN),
};

/* ------------------------------------------------------------------ */
/* Casts and select                                                    */
/* ------------------------------------------------------------------ */
static const opcase cast_cases[] = {
    CAST(U32, I32, U32MAX, U32MAX),
    CAST(U32, U64, U32MAX, 0xffffffffull),
    CAST(U32, I64, I32MIN, 0x80000000ull),
    CAST(U32, BOOL, 0, 0),
    CAST(U32, BOOL, 0x100, 1),
    CAST(U32, F32, U32MAX, 0x4f800000),
    CAST(U32, F32, 0x01000001, F_2P24),              /* 16777217: tie, to even */
    CAST(U32, F32, 0x01000003, 0x4b800002),          /* 16777219: tie, up to even */
    CAST(U32, F32, 0, F_0),
    CAST(I32, U32, I32(-1), U32MAX),
    CAST(I32, U64, I32(-1), U64MAX),                 /* sign-extends */
    CAST(I32, I64, I32MIN, 0xffffffff80000000ull),
    CAST(I32, BOOL, I32MIN, 1),
    CAST(I32, F32, I32(-1), F_N1),
    CAST(I32, F32, I32MIN, 0xcf000000),
    CAST(I32, F32, I32MAX, 0x4f000000),
    CAST(U64, U32, 0x123456789ull, 0x23456789),
    CAST(U64, I32, 0xffffffff00000001ull, 1),
    CAST(U64, I64, U64MAX, U64MAX),
    CAST(U64, BOOL, 0x100000000ull, 1),              /* a set high bit counts */
    CAST(U64, BOOL, 0, 0),
    CAST(U64, F32, U64MAX, 0x5f800000),
    CAST(U64, F32, 0x8000008000000001ull, 0x5f000001), /* above the tie: up (no double rounding) */
    CAST(U64, F32, 0x8000008000000000ull, 0x5f000000), /* exactly the tie: to even */
    CAST(I64, U32, I64(-1), U32MAX),
    CAST(I64, I32, 0xffffffff00000001ull, 1),
    CAST(I64, U64, I64MIN, I64MIN),
    CAST(I64, BOOL, I64MIN, 1),
    CAST(I64, F32, I64MIN, 0xdf000000),
    CAST(I64, F32, I64(-1), F_N1),
    CAST(I64, F32, 0x4000004000000001ull, 0x5e800001),
    CAST(BOOL, U32, 1, 1),
    CAST(BOOL, U32, 0, 0),
    CAST(BOOL, I64, 1, 1),
    CAST(BOOL, U64, 2, 1),                           /* a stored 2 loads as true */
    CAST(BOOL, F32, 1, F_1),
    CAST(BOOL, F32, 0, F_0),
    CAST(F32, I32, F_NAN, 0),
    CAST(F32, I32, F_INF, I32MAX),
    CAST(F32, I32, F_NINF, I32MIN),
    CAST(F32, I32, 0x4f000000, I32MAX),              /* 2^31 */
    CAST(F32, I32, 0x4effffff, 0x7fffff80),          /* largest below 2^31 */
    CAST(F32, I32, 0xcf000000, I32MIN),              /* -2^31 exactly */
    CAST(F32, I32, 0xcf000001, I32MIN),              /* below -2^31 */
    CAST(F32, I32, F_N1_5, I32(-1)),
    CAST(F32, I32, 0x3ff33333, 1),                   /* 1.9 truncates */
    CAST(F32, I32, F_N0, 0),
    CAST(F32, I32, F_HALF, 0),
    CAST(F32, U32, F_N1, 0),
    CAST(F32, U32, F_NHALF, 0),
    CAST(F32, U32, F_NAN, 0),
    CAST(F32, U32, F_INF, U32MAX),
    CAST(F32, U32, F_NINF, 0),
    CAST(F32, U32, 0x4f800000, U32MAX),              /* 2^32 */
    CAST(F32, U32, 0x4f7fffff, 0xffffff00),          /* largest below 2^32 */
    CAST(F32, U32, 0x406ccccd, 3),                   /* 3.7 */
    CAST(F32, I64, 0x5f000000, I64MAX),              /* 2^63 */
    CAST(F32, I64, 0xdf000000, I64MIN),
    CAST(F32, I64, 0xdf000001, I64MIN),
    CAST(F32, I64, 0x5effffff, 0x7fffff8000000000ull),
    CAST(F32, I64, F_NAN, 0),
    CAST(F32, I64, F_NINF, I64MIN),
    CAST(F32, I64, F_N1_5, I64(-1)),
    CAST(F32, U64, 0x5f800000, U64MAX),              /* 2^64 */
    CAST(F32, U64, 0x5f7fffff, 0xffffff0000000000ull),
    CAST(F32, U64, F_N1, 0),
    CAST(F32, U64, F_NAN, 0),
    CAST(F32, U64, F_INF, U64MAX),
    CAST(F32, BOOL, F_NAN, 1),
    CAST(F32, BOOL, F_N0, 0),
    CAST(F32, BOOL, F_0, 0),
    CAST(F32, BOOL, F_1, 1),
    CAST(F32, BOOL, F_SUB, 0),                       /* loads as +0 */
    CAST(F32, BOOL, F_NINF, 1),
    CAST(U32, U32, 0xdeadbeef, 0xdeadbeef),
    CAST(F32, F32, F_NAN, F_NAN),
    CAST(F32, F32, F_N0, F_N0),
    SEL(U32, 1, 0x11, 0x22, 0x11),
    SEL(U32, 0, 0x11, 0x22, 0x22),
    SEL(U32, 2, 0x11, 0x22, 0x11),                   /* a stored 2 is true */
    SEL(U64, 0, 1, U64MAX, U64MAX),
    SEL(I64, 1, I64MIN, 0, I64MIN),
    SEL(F32, 1, F_N0, F_0, F_N0),
    SEL(F32, 0, F_1, F_NAN, F_NAN),
    SEL(BOOL, 0, 1, 0, 0),
    SEL(I32, 1, I32(-1), 0, I32(-1)),
};

/* ------------------------------------------------------------------ */
/* Runner: one dispatch per run of cases sharing op and types          */
/* ------------------------------------------------------------------ */
static uint32_t elem_size(uint32_t t) { return t == VYRE_T_U64 || t == VYRE_T_I64 ? 8u : 4u; }

static int arity(const opcase *c) {
  const vyre_op_info *info = vyre_op_lookup(c->op);
  switch (info->op_class) {
  case VYRE_OC_BINARY:
  case VYRE_OC_COMPARE: return 2;
  case VYRE_OC_SELECT:
  case VYRE_OC_FMA: return 3;
  default: return 1;
  }
}

static void put(uint8_t *buf, uint32_t size, uint32_t i, uint64_t v) {
  if (size == 8) memcpy(buf + (size_t)i * 8, &v, 8);
  else {
    uint32_t w = (uint32_t)v;
    memcpy(buf + (size_t)i * 4, &w, 4);
  }
}

static uint64_t get(const uint8_t *buf, uint32_t size, uint32_t i) {
  if (size == 8) {
    uint64_t v;
    memcpy(&v, buf + (size_t)i * 8, 8);
    return v;
  }
  uint32_t w;
  memcpy(&w, buf + (size_t)i * 4, 4);
  return w;
}

/* Run cases[0..n) (same op and types); returns the mismatches. */
static int run_group(vyre_backend *be, const opcase *cases, uint32_t n) {
  const opcase *c0 = &cases[0];
  int k = arity(c0);
  uint32_t types[3] = {c0->ta, c0->ta, c0->ta};
  if (c0->op == VYRE_OP_SELECT) types[0] = VYRE_T_BOOL;
  vyre_builder *b = vyre_builder_new(64, 1, 1);
  uint32_t in[3];
  static const char *const names[3] = {"a", "b", "c"};
  for (int j = 0; j < k; j++)
    in[j] = vyre_b_buffer(b, names[j], UINT32_MAX, VYRE_ACCESS_READ_ONLY, types[j], 0, 0);
  uint32_t out = vyre_b_buffer(b, "r", UINT32_MAX, VYRE_ACCESS_WRITE_ONLY, c0->tr, n, 0);
  uint32_t g = vyre_b_gid(b, 0);
  vyre_b_if(b, vyre_b_bin(b, VYRE_OP_LT, g, vyre_b_u32(b, n)));
  uint32_t v[3];
  for (int j = 0; j < k; j++) v[j] = vyre_b_load(b, in[j], g);
  uint32_t r;
  switch (k) {
  case 1:
    r = c0->op == VYRE_OP_CAST ? vyre_b_cast(b, c0->tr, v[0]) : vyre_b_un(b, c0->op, v[0]);
    break;
  case 2: r = vyre_b_bin(b, c0->op, v[0], v[1]); break;
  default:
    r = c0->op == VYRE_OP_FMA ? vyre_b_fma(b, v[0], v[1], v[2]) : vyre_b_select(b, v[0], v[1], v[2]);
    break;
  }
  vyre_b_store(b, out, g, r);
  vyre_b_end(b);

  uint8_t *data[3];
  vyre_input inputs[3];
  for (int j = 0; j < k; j++) {
    uint32_t es = elem_size(types[j]);
    data[j] = calloc(n, es);
    for (uint32_t i = 0; i < n; i++)
      put(data[j], es, i, j == 0 ? cases[i].a : j == 1 ? cases[i].b : cases[i].c);
    inputs[j].data = data[j];
    inputs[j].size = (uint64_t)n * es;
  }
  vyre_dispatch_options o;
  memset(&o, 0, sizeof o);
  o.struct_size = sizeof o;
  o.ulp_budget = 1; /* transcendentals are in the tables */
  vyre_outputs *outs = NULL;
  vyre_error err = VYRE_ERROR_INIT;
  vyre_status st = tr_dispatch(be, b, inputs, (uint32_t)k, &o, &outs, &err);
  for (int j = 0; j < k; j++) free(data[j]);
  const vyre_op_info *info = vyre_op_lookup(c0->op);
  ck_assert_msg(st == VYRE_OK, "%s %s (line %d): dispatch failed: %s", info->mnemonic,
                vyre_type_name(c0->ta), c0->line, err.message);
  uint32_t es = elem_size(c0->tr);
  ck_assert_uint_eq(outs->items[0].size, (uint64_t)n * es);
  int bad = 0;
  for (uint32_t i = 0; i < n; i++) {
    uint64_t got = get(outs->items[0].data, es, i);
    if (got != cases[i].want) {
      fprintf(stderr,
              "check_ref_ops.c:%d: %s %s->%s (0x%" PRIx64 ", 0x%" PRIx64 ", 0x%" PRIx64
              ") = 0x%" PRIx64 ", expected 0x%" PRIx64 "\n",
              cases[i].line, info->mnemonic, vyre_type_name(c0->ta), vyre_type_name(c0->tr),
              cases[i].a, cases[i].b, cases[i].c, got, cases[i].want);
      bad++;
    }
  }
  be->vt->outputs_free(be, outs);
  return bad;
}

static int run_table(const opcase *cases, size_t count) {
  vyre_backend *be = tr_new_backend();
  int bad = 0;
  for (size_t i = 0; i < count;) {
    size_t j = i + 1;
    while (j < count && cases[j].op == cases[i].op && cases[j].ta == cases[i].ta &&
           cases[j].tr == cases[i].tr)
      j++;
    bad += run_group(be, cases + i, (uint32_t)(j - i));
    i = j;
  }
  be->vt->destroy(be);
  return bad;
}

#define RUN_TABLE(t)                                                                     \
  do {                                                                                   \
    int bad_ = run_table(t, sizeof t / sizeof t[0]);                                     \
    ck_assert_msg(bad_ == 0, "%d of %zu cases of " #t " gave other bits than semantics.md " \
                  "(listed on stderr)", bad_, sizeof t / sizeof t[0]);                   \
  } while (0)

START_TEST(test_int_binary) { RUN_TABLE(int_cases); }
END_TEST

START_TEST(test_compare) { RUN_TABLE(cmp_cases); }
END_TEST

START_TEST(test_int_unary) { RUN_TABLE(int_unary_cases); }
END_TEST

START_TEST(test_f32) { RUN_TABLE(f32_cases); }
END_TEST

START_TEST(test_cast_select) { RUN_TABLE(cast_cases); }
END_TEST

/* Every op id of the format that computes a value on operands shows up in
 * a table above (coverage of the table itself). */
START_TEST(test_tables_cover_every_op) {
  static const struct {
    const opcase *t;
    size_t n;
  } tables[] = {{int_cases, sizeof int_cases / sizeof int_cases[0]},
                {cmp_cases, sizeof cmp_cases / sizeof cmp_cases[0]},
                {int_unary_cases, sizeof int_unary_cases / sizeof int_unary_cases[0]},
                {f32_cases, sizeof f32_cases / sizeof f32_cases[0]},
                {cast_cases, sizeof cast_cases / sizeof cast_cases[0]}};
  uint32_t count;
  const vyre_op_info *ops = vyre_op_all(&count);
  for (uint32_t i = 0; i < count; i++) {
    uint32_t cls = ops[i].op_class;
    if (cls != VYRE_OC_BINARY && cls != VYRE_OC_COMPARE && cls != VYRE_OC_UNARY &&
        cls != VYRE_OC_PREDICATE && cls != VYRE_OC_CAST && cls != VYRE_OC_SELECT &&
        cls != VYRE_OC_FMA)
      continue;
    /* Every accepted operand type of the op must appear. */
    for (uint32_t t = 1; t < VYRE_T_COUNT_; t++) {
      if (!(ops[i].type_mask & VYRE_TBIT(t))) continue;
      int seen = 0;
      for (size_t k = 0; k < sizeof tables / sizeof tables[0] && !seen; k++)
        for (size_t j = 0; j < tables[k].n && !seen; j++) {
          const opcase *c = &tables[k].t[j];
          if (c->op != ops[i].id) continue;
          /* cast's mask lists targets; everything else lists operands. */
          seen = ops[i].op_class == VYRE_OC_CAST ? c->tr == t : c->ta == t;
        }
      ck_assert_msg(seen, "op %s over %s has no edge case in the tables", ops[i].mnemonic,
                    vyre_type_name(t));
    }
  }
}
END_TEST

TCase *tr_ops_tcase(void) {
  TCase *tc = tcase_create("ops");
  tcase_set_timeout(tc, 60);
  tcase_add_test(tc, test_tables_cover_every_op);
  tcase_add_test(tc, test_int_binary);
  tcase_add_test(tc, test_compare);
  tcase_add_test(tc, test_int_unary);
  tcase_add_test(tc, test_f32);
  tcase_add_test(tc, test_cast_select);
  return tc;
}
