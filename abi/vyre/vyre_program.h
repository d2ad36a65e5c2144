/* vyre_program.h -- the pointer-free program format, its op table and the codec/validator. */
#ifndef VYRE_VYRE_PROGRAM_H
#define VYRE_VYRE_PROGRAM_H

/*
 * A program is one little-endian byte image, identical in memory and on
 * disk (share/doc/vyre/program-format.md is the full specification):
 *
 *   vyre_program_header          64 bytes at offset 0
 *   vyre_buffer_decl[buffers]    32 bytes each, at header.buffer_offset
 *   uint8_t local_types[locals]  at header.local_offset (vyre_type per slot)
 *   vyre_inst[insts]             20 bytes each, at header.inst_offset
 *   char strings[string_size]    buffer names, at header.string_offset
 *
 * Sections are 4-byte aligned, in that order, without gaps other than
 * zero padding to the next multiple of 4, and end exactly at total_size.
 * All reserved fields and unused operand fields are zero, so a program has
 * exactly one encoding and its SHA-256 is a stable content hash.
 *
 * Instruction i that produces a value defines value id i.  Operands name
 * value ids of earlier instructions whose block is still open.  Control
 * flow is structured: IF/ELSE/END, LOOP/END and BLOCK/END nest.
 */

#include <stddef.h>
#include <stdint.h>

#include "vyre.h"

#ifdef __cplusplus
extern "C" {
#endif

#define VYRE_PROGRAM_MAGIC 0x50525956u /* "VYRP" in memory order */
#define VYRE_PROGRAM_VERSION 1u
#define VYRE_PROGRAM_HEADER_SIZE 64u

/* Validator limits (a program beyond them is VYRE_LIMIT). */
#define VYRE_MAX_BUFFERS 64u
#define VYRE_MAX_LOCALS 65536u
#define VYRE_MAX_INSTS (1u << 22)
#define VYRE_MAX_NESTING 256u
#define VYRE_MAX_STRINGS (1u << 20)
#define VYRE_MAX_NAME 63u
#define VYRE_MAX_WORKGROUP_INVOCATIONS 1024u
#define VYRE_MAX_WORKGROUP_BYTES 49152u
/* The largest image the limits allow (header, 64 buffer declarations,
 * 65536 locals, 2^22 instructions, 2^20 string bytes; every section a
 * multiple of 4): 85002304 bytes.  A reader of program files reads no
 * more (share/doc/vyre/program-format.md, "Size"). */
#define VYRE_PROGRAM_MAX_SIZE                                                        \
  (VYRE_PROGRAM_HEADER_SIZE + VYRE_MAX_BUFFERS * 32u + VYRE_MAX_LOCALS +             \
   VYRE_MAX_INSTS * 20u + VYRE_MAX_STRINGS)

/* Element and value types.  Value types (what an expression yields):
 * bool u32 u64 i32 i64 f32.  The others are storage types: loads widen
 * them (u8/u16 zero-extend to u32, i8/i16 sign-extend to i32, f16/bf16
 * convert to f32) and stores narrow them. */
#define VYRE_TYPE_MAP(X)  \
  X(VOID, "void", 0)      \
  X(BOOL, "bool", 4)      \
  X(U8, "u8", 1)          \
  X(U16, "u16", 2)        \
  X(U32, "u32", 4)        \
  X(U64, "u64", 8)        \
  X(I8, "i8", 1)          \
  X(I16, "i16", 2)        \
  X(I32, "i32", 4)        \
  X(I64, "i64", 8)        \
  X(F16, "f16", 2)        \
  X(BF16, "bf16", 2)      \
  X(F32, "f32", 4)         \
  X(MAT_A_F16, "mat_a_f16", 0)   \
  X(MAT_A_BF16, "mat_a_bf16", 0) \
  X(MAT_A_I8, "mat_a_i8", 0)     \
  X(MAT_A_U8, "mat_a_u8", 0)     \
  X(MAT_B_F16, "mat_b_f16", 0)   \
  X(MAT_B_BF16, "mat_b_bf16", 0) \
  X(MAT_B_I8, "mat_b_i8", 0)     \
  X(MAT_B_U8, "mat_b_u8", 0)     \
  X(MAT_ACC_F32, "mat_acc_f32", 0) \
  X(MAT_ACC_I32, "mat_acc_i32", 0)

/* The matrix types (mat_*) are neither value nor storage types: they are
 * the types of matrix locals, a subgroup's tile that only the MMA ops
 * (mma_fill, mma_load, mma, mma_store) read and write.  Use A (M x K),
 * B (K x N) or accumulator (M x N), and the component type; the shape
 * follows from the component (vyre_mma_shape: 16x16x16 for f16/bf16,
 * 16x16x32 for i8/u8).  share/doc/vyre/semantics.md, "Matrix
 * multiply-accumulate". */

typedef enum vyre_type {
#define VYRE_TYPE_ENUM_(name, text, size) VYRE_T_##name,
  VYRE_TYPE_MAP(VYRE_TYPE_ENUM_)
#undef VYRE_TYPE_ENUM_
  VYRE_T_COUNT_,
  /* 32 bits whatever the enum options; never a value. */
  VYRE_TYPE_FORCE32_ = 0x7fffffff
} vyre_type;

#define VYRE_TBIT(t) (1u << (t))
#define VYRE_TM_INT (VYRE_TBIT(VYRE_T_U32) | VYRE_TBIT(VYRE_T_U64) | VYRE_TBIT(VYRE_T_I32) | VYRE_TBIT(VYRE_T_I64))
#define VYRE_TM_INT32 (VYRE_TBIT(VYRE_T_U32) | VYRE_TBIT(VYRE_T_I32))
#define VYRE_TM_FLOAT VYRE_TBIT(VYRE_T_F32)
#define VYRE_TM_NUM (VYRE_TM_INT | VYRE_TM_FLOAT)
#define VYRE_TM_BOOL VYRE_TBIT(VYRE_T_BOOL)
#define VYRE_TM_VALUE (VYRE_TM_NUM | VYRE_TM_BOOL)
#define VYRE_TM_U32 VYRE_TBIT(VYRE_T_U32)
#define VYRE_TM_STORAGE (VYRE_TM_VALUE | VYRE_TBIT(VYRE_T_U8) | VYRE_TBIT(VYRE_T_U16) | VYRE_TBIT(VYRE_T_I8) | VYRE_TBIT(VYRE_T_I16) | VYRE_TBIT(VYRE_T_F16) | VYRE_TBIT(VYRE_T_BF16))
/* MMA: the component types of A/B tiles, of accumulators, and the matrix types. */
#define VYRE_TM_MMA_IN (VYRE_TBIT(VYRE_T_F16) | VYRE_TBIT(VYRE_T_BF16) | VYRE_TBIT(VYRE_T_I8) | VYRE_TBIT(VYRE_T_U8))
#define VYRE_TM_MMA_ACC (VYRE_TBIT(VYRE_T_F32) | VYRE_TBIT(VYRE_T_I32))
#define VYRE_TM_MATRIX                                                                       \
  (VYRE_TBIT(VYRE_T_MAT_A_F16) | VYRE_TBIT(VYRE_T_MAT_A_BF16) | VYRE_TBIT(VYRE_T_MAT_A_I8) | \
   VYRE_TBIT(VYRE_T_MAT_A_U8) | VYRE_TBIT(VYRE_T_MAT_B_F16) | VYRE_TBIT(VYRE_T_MAT_B_BF16) | \
   VYRE_TBIT(VYRE_T_MAT_B_I8) | VYRE_TBIT(VYRE_T_MAT_B_U8) | VYRE_TBIT(VYRE_T_MAT_ACC_F32) | \
   VYRE_TBIT(VYRE_T_MAT_ACC_I32))

/* Buffer access modes. */
#define VYRE_ACCESS_MAP(X)          \
  X(READ_ONLY, "ro")                \
  X(READ_WRITE, "rw")               \
  X(WRITE_ONLY, "wo")               \
  X(UNIFORM, "uniform")             \
  X(WORKGROUP, "workgroup")

typedef enum vyre_access {
#define VYRE_ACCESS_ENUM_(name, text) VYRE_ACCESS_##name,
  VYRE_ACCESS_MAP(VYRE_ACCESS_ENUM_)
#undef VYRE_ACCESS_ENUM_
  VYRE_ACCESS_COUNT_,
  /* 32 bits whatever the enum options; never a value. */
  VYRE_ACCESS_FORCE32_ = 0x7fffffff
} vyre_access;

/* vyre_buffer_decl.flags */
#define VYRE_BUF_OUTPUT 0x1u    /* backend-allocated, zero-filled output */
#define VYRE_BUF_OUT_RANGE 0x2u /* only out_range_offset/size is read back */

/*
 * The operand schema.  Every op belongs to one class; the class says what
 * each instruction field holds, so the validator, the text assembler and
 * disassembler and the backends read one description instead of each
 * restating it (share/doc/vyre/program-format.md is the prose).
 */
/* What one of the operand fields a, b, c, d holds. */
typedef enum vyre_operand_kind {
  VYRE_OPND_NONE = 0, /* unused: must be zero */
  VYRE_OPND_VALUE,    /* value id of an earlier instruction */
  VYRE_OPND_SLOT,     /* local slot */
  VYRE_OPND_BUFFER,   /* buffer index (declaration order) */
  VYRE_OPND_IMM       /* literal word (constant bits, trap code) */
} vyre_operand_kind;

/* The type of the value a class yields (and what vyre_inst.type holds). */
typedef enum vyre_result_rule {
  VYRE_RES_NONE = 0, /* a statement: no value, type is zero */
  VYRE_RES_DECLARED, /* the type field, as written (const, cast) */
  VYRE_RES_OPERAND,  /* the type of the value operands (select: of its arms) */
  VYRE_RES_BOOL,
  VYRE_RES_U32,
  VYRE_RES_F32,
  VYRE_RES_LOCAL,    /* the type of local a */
  VYRE_RES_LOADED,   /* buffer a's element type, widened (vyre_type_compute) */
  VYRE_RES_ELEMENT   /* buffer a's element type */
} vyre_result_rule;

/* What vyre_inst.mod holds (text: a .suffix, or barrier's scope word). */
typedef enum vyre_mod_kind {
  VYRE_MOD_NONE = 0, /* unused: must be zero */
  VYRE_MOD_AXIS,     /* 0..2 = x y z; only ops with VYRE_OPF_AXIS */
  VYRE_MOD_ORDER,    /* vyre_order */
  VYRE_MOD_REDUCE,   /* vyre_reduce */
  VYRE_MOD_SCOPE,    /* vyre_barrier_scope */
  VYRE_MOD_LAYOUT    /* vyre_layout (mma_load, mma_store) */
} vyre_mod_kind;

/*
 * The classes: X(NAME, result rule, kind of a, b, c, d, mod kind, text
 * operands min, max, text usage line).  The value classes (result rule
 * other than NONE) come first.
 */
#define VYRE_OP_CLASS_MAP(X)                                                                  \
  X(CONST, DECLARED, IMM, IMM, NONE, NONE, NONE, 2, 2, "%v = const TYPE LITERAL")             \
  X(LOCAL_GET, LOCAL, SLOT, NONE, NONE, NONE, NONE, 1, 1, "%v = get LOCAL")                   \
  X(LOAD, LOADED, BUFFER, VALUE, NONE, NONE, NONE, 2, 2, "%v = load BUFFER %index")           \
  X(BUF_LEN, U32, BUFFER, NONE, NONE, NONE, NONE, 1, 1, "%v = buflen BUFFER")                 \
  X(BUILTIN, U32, NONE, NONE, NONE, NONE, AXIS, 0, 0,                                         \
    "%v = gid.x (wgid.y, lid.z, lane, sgsize): no operands")                                  \
  X(BINARY, OPERAND, VALUE, VALUE, NONE, NONE, NONE, 2, 2, "%v = OP %a %b")                   \
  X(COMPARE, BOOL, VALUE, VALUE, NONE, NONE, NONE, 2, 2, "%v = OP %a %b")                     \
  X(UNARY, OPERAND, VALUE, NONE, NONE, NONE, NONE, 1, 1, "%v = OP %a")                        \
  X(PREDICATE, BOOL, VALUE, NONE, NONE, NONE, NONE, 1, 1, "%v = OP %a")                       \
  X(SELECT, OPERAND, VALUE, VALUE, VALUE, NONE, NONE, 3, 3,                                   \
    "%v = select %cond %if_true %if_false")                                                   \
  X(CAST, DECLARED, VALUE, NONE, NONE, NONE, NONE, 2, 2, "%v = cast TYPE %a")                 \
  X(FMA, F32, VALUE, VALUE, VALUE, NONE, NONE, 3, 3, "%v = fma %a %b %c")                     \
  X(ATOMIC, ELEMENT, BUFFER, VALUE, VALUE, NONE, ORDER, 3, 3,                                 \
    "%old = atomic_OP[.ORDER] BUFFER %index %value")                                          \
  X(ATOMIC_CAS, ELEMENT, BUFFER, VALUE, VALUE, VALUE, ORDER, 4, 4,                            \
    "%old = atomic_cas[.ORDER] BUFFER %index %expected %desired")                             \
  X(BALLOT, U32, VALUE, NONE, NONE, NONE, NONE, 1, 1, "%v = ballot %cond")                    \
  X(SHUFFLE, OPERAND, VALUE, VALUE, NONE, NONE, NONE, 2, 2, "%v = shuffle %value %lane")      \
  X(REDUCE, OPERAND, VALUE, NONE, NONE, NONE, REDUCE, 1, 1, "%v = reduce.KIND %value")        \
  X(LET, NONE, SLOT, VALUE, NONE, NONE, NONE, 2, 2, "let LOCAL %value")                       \
  X(ASSIGN, NONE, SLOT, VALUE, NONE, NONE, NONE, 2, 2, "assign LOCAL %value")                 \
  X(STORE, NONE, BUFFER, VALUE, VALUE, NONE, NONE, 3, 3, "store BUFFER %index %value")        \
  X(IF, NONE, VALUE, NONE, NONE, NONE, NONE, 1, 1, "if %cond")                                \
  X(ELSE, NONE, NONE, NONE, NONE, NONE, NONE, 0, 0, "else")                                   \
  X(END, NONE, NONE, NONE, NONE, NONE, NONE, 0, 0, "end")                                     \
  X(LOOP, NONE, SLOT, VALUE, VALUE, NONE, NONE, 3, 4, "loop LOCAL [TYPE] %start %end")        \
  X(BLOCK, NONE, NONE, NONE, NONE, NONE, NONE, 0, 0, "block")                                 \
  X(RETURN, NONE, NONE, NONE, NONE, NONE, NONE, 0, 0, "return")                               \
  X(BARRIER, NONE, NONE, NONE, NONE, NONE, SCOPE, 0, 1, "barrier [workgroup|grid]")           \
  X(TRAP, NONE, IMM, NONE, NONE, NONE, NONE, 1, 1, "trap CODE")                              \
  X(MMA_FILL, NONE, SLOT, VALUE, NONE, NONE, NONE, 2, 2, "mma_fill MATRIX %value")             \
  X(MMA_LOAD, NONE, SLOT, BUFFER, VALUE, VALUE, LAYOUT, 4, 4,                                 \
    "mma_load[.row|.col] MATRIX BUFFER %index %stride")                                       \
  X(MMA, NONE, SLOT, SLOT, SLOT, SLOT, NONE, 4, 4, "mma D A B C")                              \
  X(MMA_STORE, NONE, BUFFER, VALUE, VALUE, SLOT, LAYOUT, 4, 4,                                \
    "mma_store[.row|.col] BUFFER %index %stride MATRIX")

typedef enum vyre_op_class {
#define VYRE_OP_CLASS_ENUM_(name, res, a, b, c, d, mod, tmin, tmax, usage) VYRE_OC_##name,
  VYRE_OP_CLASS_MAP(VYRE_OP_CLASS_ENUM_)
#undef VYRE_OP_CLASS_ENUM_
} vyre_op_class;
/* Outside the enum, so that switches over vyre_op_class stay exhaustive. */
#define VYRE_OP_CLASS_ONE_(name, res, a, b, c, d, mod, tmin, tmax, usage) +1
enum { VYRE_OC_COUNT_ = 0 VYRE_OP_CLASS_MAP(VYRE_OP_CLASS_ONE_) };
#undef VYRE_OP_CLASS_ONE_

/* Per-op flags (the last column of VYRE_OP_MAP). */
#define VYRE_OPF_AXIS 0x1u           /* mod is an axis (gid, wgid, lid) */
#define VYRE_OPF_SUBGROUP 0x2u       /* needs VYRE_CAP_SUBGROUP */
#define VYRE_OPF_COLLECTIVE 0x8u     /* a subgroup collective: every lane takes part, so it must
                                      * sit in uniform control flow */
#define VYRE_OPF_TRANSCENDENTAL 0x4u /* an f32 transcendental: needs VYRE_CAP_TRANSCENDENTAL and
                                      * a ulp budget; rcp and sqrt are not (exact or IEEE-rounded) */
#define VYRE_OPF_MMA 0x10u           /* a matrix multiply-accumulate op: needs
                                      * VYRE_CAP_TENSOR_CORES; also COLLECTIVE */

/* vyre_inst fields (vyre_op_fields): bits of a b c d type mod. */
#define VYRE_FIELD_A 0x01u
#define VYRE_FIELD_B 0x02u
#define VYRE_FIELD_C 0x04u
#define VYRE_FIELD_D 0x08u
#define VYRE_FIELD_TYPE 0x10u
#define VYRE_FIELD_MOD 0x20u

/*
 * The op table: X(NAME, id, mnemonic, class, operand type mask, flags).
 * Ids are stable and append-only.  The mask lists the value types the op
 * accepts (for CAST: the target types; for LOAD/STORE/atomics: checked
 * against the buffer; 0: not type-polymorphic).  Flags are VYRE_OPF_*.
 */
#define VYRE_OP_MAP(X)                                                                                         \
  X(CONST, 1, "const", VYRE_OC_CONST, VYRE_TM_VALUE, 0)                                                        \
  X(LOCAL_GET, 2, "get", VYRE_OC_LOCAL_GET, VYRE_TM_VALUE, 0)                                                  \
  X(LOAD, 3, "load", VYRE_OC_LOAD, VYRE_TM_VALUE, 0)                                                           \
  X(BUF_LEN, 4, "buflen", VYRE_OC_BUF_LEN, VYRE_TM_U32, 0)                                                     \
  X(INVOCATION_ID, 5, "gid", VYRE_OC_BUILTIN, VYRE_TM_U32, VYRE_OPF_AXIS)                                      \
  X(WORKGROUP_ID, 6, "wgid", VYRE_OC_BUILTIN, VYRE_TM_U32, VYRE_OPF_AXIS)                                      \
  X(LOCAL_ID, 7, "lid", VYRE_OC_BUILTIN, VYRE_TM_U32, VYRE_OPF_AXIS)                                           \
  X(SUBGROUP_LANE, 8, "lane", VYRE_OC_BUILTIN, VYRE_TM_U32, VYRE_OPF_SUBGROUP)                                 \
  X(SUBGROUP_SIZE, 9, "sgsize", VYRE_OC_BUILTIN, VYRE_TM_U32, VYRE_OPF_SUBGROUP)                               \
  X(ADD, 16, "add", VYRE_OC_BINARY, VYRE_TM_NUM, 0)                                                            \
  X(SUB, 17, "sub", VYRE_OC_BINARY, VYRE_TM_NUM, 0)                                                            \
  X(MUL, 18, "mul", VYRE_OC_BINARY, VYRE_TM_NUM, 0)                                                            \
  X(DIV, 19, "div", VYRE_OC_BINARY, VYRE_TM_NUM, 0)                                                            \
  X(MOD, 20, "mod", VYRE_OC_BINARY, VYRE_TM_INT, 0)                                                            \
  X(AND, 21, "and", VYRE_OC_BINARY, VYRE_TM_INT | VYRE_TM_BOOL, 0)                                             \
  X(OR, 22, "or", VYRE_OC_BINARY, VYRE_TM_INT | VYRE_TM_BOOL, 0)                                               \
  X(XOR, 23, "xor", VYRE_OC_BINARY, VYRE_TM_INT | VYRE_TM_BOOL, 0)                                             \
  X(SHL, 24, "shl", VYRE_OC_BINARY, VYRE_TM_INT, 0)                                                            \
  X(SHR, 25, "shr", VYRE_OC_BINARY, VYRE_TM_INT, 0)                                                            \
  X(ROTL, 26, "rotl", VYRE_OC_BINARY, VYRE_TM_INT, 0)                                                          \
  X(ROTR, 27, "rotr", VYRE_OC_BINARY, VYRE_TM_INT, 0)                                                          \
  X(EQ, 28, "eq", VYRE_OC_COMPARE, VYRE_TM_VALUE, 0)                                                           \
  X(NE, 29, "ne", VYRE_OC_COMPARE, VYRE_TM_VALUE, 0)                                                           \
  X(LT, 30, "lt", VYRE_OC_COMPARE, VYRE_TM_NUM, 0)                                                             \
  X(LE, 31, "le", VYRE_OC_COMPARE, VYRE_TM_NUM, 0)                                                             \
  X(GT, 32, "gt", VYRE_OC_COMPARE, VYRE_TM_NUM, 0)                                                             \
  X(GE, 33, "ge", VYRE_OC_COMPARE, VYRE_TM_NUM, 0)                                                             \
  X(LOGICAL_AND, 34, "land", VYRE_OC_BINARY, VYRE_TM_BOOL, 0)                                                  \
  X(LOGICAL_OR, 35, "lor", VYRE_OC_BINARY, VYRE_TM_BOOL, 0)                                                    \
  X(MIN, 36, "min", VYRE_OC_BINARY, VYRE_TM_NUM, 0)                                                            \
  X(MAX, 37, "max", VYRE_OC_BINARY, VYRE_TM_NUM, 0)                                                            \
  X(ABSDIFF, 38, "absdiff", VYRE_OC_BINARY, VYRE_TM_NUM, 0)                                                    \
  X(SAT_ADD, 39, "sadd", VYRE_OC_BINARY, VYRE_TM_INT, 0)                                                       \
  X(SAT_SUB, 40, "ssub", VYRE_OC_BINARY, VYRE_TM_INT, 0)                                                       \
  X(SAT_MUL, 41, "smul", VYRE_OC_BINARY, VYRE_TM_INT, 0)                                                       \
  X(WRAP_ADD, 42, "wadd", VYRE_OC_BINARY, VYRE_TM_INT, 0)                                                      \
  X(WRAP_SUB, 43, "wsub", VYRE_OC_BINARY, VYRE_TM_INT, 0)                                                      \
  X(MULHI, 44, "mulhi", VYRE_OC_BINARY, VYRE_TM_INT, 0)                                                        \
  X(NEG, 64, "neg", VYRE_OC_UNARY, VYRE_TM_NUM, 0)                                                             \
  X(BITNOT, 65, "bitnot", VYRE_OC_UNARY, VYRE_TM_INT, 0)                                                       \
  X(NOT, 66, "not", VYRE_OC_UNARY, VYRE_TM_BOOL, 0)                                                            \
  X(POPCOUNT, 67, "popcount", VYRE_OC_UNARY, VYRE_TM_INT, 0)                                                   \
  X(CLZ, 68, "clz", VYRE_OC_UNARY, VYRE_TM_INT, 0)                                                             \
  X(CTZ, 69, "ctz", VYRE_OC_UNARY, VYRE_TM_INT, 0)                                                             \
  X(REVERSEBITS, 70, "reversebits", VYRE_OC_UNARY, VYRE_TM_INT, 0)                                             \
  X(ABS, 71, "abs", VYRE_OC_UNARY, VYRE_TM_NUM, 0)                                                             \
  X(SIGN, 72, "sign", VYRE_OC_UNARY, VYRE_TM_NUM, 0)                                                           \
  X(FLOOR, 73, "floor", VYRE_OC_UNARY, VYRE_TM_FLOAT, 0)                                                       \
  X(CEIL, 74, "ceil", VYRE_OC_UNARY, VYRE_TM_FLOAT, 0)                                                         \
  X(ROUND, 75, "round", VYRE_OC_UNARY, VYRE_TM_FLOAT, 0)                                                       \
  X(TRUNC, 76, "trunc", VYRE_OC_UNARY, VYRE_TM_FLOAT, 0)                                                       \
  X(SQRT, 77, "sqrt", VYRE_OC_UNARY, VYRE_TM_FLOAT, 0)                                                         \
  X(RSQRT, 78, "rsqrt", VYRE_OC_UNARY, VYRE_TM_FLOAT, VYRE_OPF_TRANSCENDENTAL)                                 \
  X(RCP, 79, "rcp", VYRE_OC_UNARY, VYRE_TM_FLOAT, 0)                                                           \
  X(EXP, 80, "exp", VYRE_OC_UNARY, VYRE_TM_FLOAT, VYRE_OPF_TRANSCENDENTAL)                                     \
  X(EXP2, 81, "exp2", VYRE_OC_UNARY, VYRE_TM_FLOAT, VYRE_OPF_TRANSCENDENTAL)                                   \
  X(LOG, 82, "log", VYRE_OC_UNARY, VYRE_TM_FLOAT, VYRE_OPF_TRANSCENDENTAL)                                     \
  X(LOG2, 83, "log2", VYRE_OC_UNARY, VYRE_TM_FLOAT, VYRE_OPF_TRANSCENDENTAL)                                   \
  X(SIN, 84, "sin", VYRE_OC_UNARY, VYRE_TM_FLOAT, VYRE_OPF_TRANSCENDENTAL)                                     \
  X(COS, 85, "cos", VYRE_OC_UNARY, VYRE_TM_FLOAT, VYRE_OPF_TRANSCENDENTAL)                                     \
  X(TAN, 86, "tan", VYRE_OC_UNARY, VYRE_TM_FLOAT, VYRE_OPF_TRANSCENDENTAL)                                     \
  X(ASIN, 87, "asin", VYRE_OC_UNARY, VYRE_TM_FLOAT, VYRE_OPF_TRANSCENDENTAL)                                   \
  X(ACOS, 88, "acos", VYRE_OC_UNARY, VYRE_TM_FLOAT, VYRE_OPF_TRANSCENDENTAL)                                   \
  X(ATAN, 89, "atan", VYRE_OC_UNARY, VYRE_TM_FLOAT, VYRE_OPF_TRANSCENDENTAL)                                   \
  X(SINH, 90, "sinh", VYRE_OC_UNARY, VYRE_TM_FLOAT, VYRE_OPF_TRANSCENDENTAL)                                   \
  X(COSH, 91, "cosh", VYRE_OC_UNARY, VYRE_TM_FLOAT, VYRE_OPF_TRANSCENDENTAL)                                   \
  X(TANH, 92, "tanh", VYRE_OC_UNARY, VYRE_TM_FLOAT, VYRE_OPF_TRANSCENDENTAL)                                   \
  X(ISNAN, 93, "isnan", VYRE_OC_PREDICATE, VYRE_TM_FLOAT, 0)                                                   \
  X(ISINF, 94, "isinf", VYRE_OC_PREDICATE, VYRE_TM_FLOAT, 0)                                                   \
  X(ISFINITE, 95, "isfinite", VYRE_OC_PREDICATE, VYRE_TM_FLOAT, 0)                                             \
  X(UNPACK4_LOW, 96, "unpack4lo", VYRE_OC_UNARY, VYRE_TM_U32, 0)                                               \
  X(UNPACK4_HIGH, 97, "unpack4hi", VYRE_OC_UNARY, VYRE_TM_U32, 0)                                              \
  X(UNPACK8_LOW, 98, "unpack8lo", VYRE_OC_UNARY, VYRE_TM_U32, 0)                                               \
  X(UNPACK8_HIGH, 99, "unpack8hi", VYRE_OC_UNARY, VYRE_TM_U32, 0)                                              \
  X(SELECT, 112, "select", VYRE_OC_SELECT, VYRE_TM_VALUE, 0)                                                   \
  X(CAST, 113, "cast", VYRE_OC_CAST, VYRE_TM_VALUE, 0)                                                         \
  X(FMA, 114, "fma", VYRE_OC_FMA, VYRE_TM_FLOAT, 0)                                                            \
  X(ATOMIC_ADD, 128, "atomic_add", VYRE_OC_ATOMIC, VYRE_TM_INT, 0)                                             \
  X(ATOMIC_AND, 129, "atomic_and", VYRE_OC_ATOMIC, VYRE_TM_INT, 0)                                             \
  X(ATOMIC_OR, 130, "atomic_or", VYRE_OC_ATOMIC, VYRE_TM_INT, 0)                                               \
  X(ATOMIC_XOR, 131, "atomic_xor", VYRE_OC_ATOMIC, VYRE_TM_INT, 0)                                             \
  X(ATOMIC_MIN, 132, "atomic_min", VYRE_OC_ATOMIC, VYRE_TM_INT, 0)                                             \
  X(ATOMIC_MAX, 133, "atomic_max", VYRE_OC_ATOMIC, VYRE_TM_INT, 0)                                             \
  X(ATOMIC_EXCHANGE, 134, "atomic_xchg", VYRE_OC_ATOMIC, VYRE_TM_INT, 0)                                       \
  X(ATOMIC_CAS, 135, "atomic_cas", VYRE_OC_ATOMIC_CAS, VYRE_TM_INT, 0)                                         \
  X(SUBGROUP_BALLOT, 144, "ballot", VYRE_OC_BALLOT, VYRE_TM_U32, VYRE_OPF_SUBGROUP | VYRE_OPF_COLLECTIVE)      \
  X(SUBGROUP_SHUFFLE, 145, "shuffle", VYRE_OC_SHUFFLE, VYRE_TM_VALUE, VYRE_OPF_SUBGROUP | VYRE_OPF_COLLECTIVE) \
  X(SUBGROUP_REDUCE, 146, "reduce", VYRE_OC_REDUCE, VYRE_TM_NUM, VYRE_OPF_SUBGROUP | VYRE_OPF_COLLECTIVE)      \
  X(MMA_FILL, 147, "mma_fill", VYRE_OC_MMA_FILL, VYRE_TM_MMA_ACC, VYRE_OPF_MMA | VYRE_OPF_COLLECTIVE)          \
  X(MMA_LOAD, 148, "mma_load", VYRE_OC_MMA_LOAD, VYRE_TM_MMA_IN | VYRE_TM_MMA_ACC,                            \
    VYRE_OPF_MMA | VYRE_OPF_COLLECTIVE)                                                                        \
  X(MMA, 149, "mma", VYRE_OC_MMA, VYRE_TM_MMA_IN, VYRE_OPF_MMA | VYRE_OPF_COLLECTIVE)                         \
  X(MMA_STORE, 150, "mma_store", VYRE_OC_MMA_STORE, VYRE_TM_MMA_ACC, VYRE_OPF_MMA | VYRE_OPF_COLLECTIVE)       \
  X(LET, 192, "let", VYRE_OC_LET, 0, 0)                                                                        \
  X(ASSIGN, 193, "assign", VYRE_OC_ASSIGN, 0, 0)                                                               \
  X(STORE, 194, "store", VYRE_OC_STORE, 0, 0)                                                                  \
  X(IF, 195, "if", VYRE_OC_IF, 0, 0)                                                                           \
  X(ELSE, 196, "else", VYRE_OC_ELSE, 0, 0)                                                                     \
  X(END, 197, "end", VYRE_OC_END, 0, 0)                                                                        \
  X(LOOP, 198, "loop", VYRE_OC_LOOP, 0, 0)                                                                     \
  X(BLOCK, 199, "block", VYRE_OC_BLOCK, 0, 0)                                                                  \
  X(RETURN, 200, "return", VYRE_OC_RETURN, 0, 0)                                                               \
  X(BARRIER, 201, "barrier", VYRE_OC_BARRIER, 0, 0)                                                            \
  X(TRAP, 202, "trap", VYRE_OC_TRAP, 0, 0)

typedef enum vyre_op {
  VYRE_OP_INVALID = 0,
#define VYRE_OP_ENUM_(name, id, text, cls, mask, flags) VYRE_OP_##name = id,
  VYRE_OP_MAP(VYRE_OP_ENUM_)
#undef VYRE_OP_ENUM_
  VYRE_OP_ID_LIMIT = 256, /* every op id is below this */
  /* 32 bits whatever the enum options; never a value. */
  VYRE_OP_FORCE32_ = 0x7fffffff
} vyre_op;

/* Atomic memory orderings (vyre_inst.mod of atomics). */
#define VYRE_ORDER_MAP(X) \
  X(RELAXED, "relaxed")   \
  X(ACQUIRE, "acquire")   \
  X(RELEASE, "release")   \
  X(ACQ_REL, "acq_rel")   \
  X(SEQ_CST, "seq_cst")
typedef enum vyre_order {
#define VYRE_ORDER_ENUM_(name, text) VYRE_ORDER_##name,
  VYRE_ORDER_MAP(VYRE_ORDER_ENUM_)
#undef VYRE_ORDER_ENUM_
  VYRE_ORDER_COUNT_,
  /* 32 bits whatever the enum options; never a value. */
  VYRE_ORDER_FORCE32_ = 0x7fffffff
} vyre_order;

/* Subgroup reductions (vyre_inst.mod of reduce). */
#define VYRE_REDUCE_MAP(X) \
  X(ADD, "add")            \
  X(MIN, "min")            \
  X(MAX, "max")            \
  X(AND, "and")            \
  X(OR, "or")              \
  X(XOR, "xor")
typedef enum vyre_reduce {
#define VYRE_REDUCE_ENUM_(name, text) VYRE_REDUCE_##name,
  VYRE_REDUCE_MAP(VYRE_REDUCE_ENUM_)
#undef VYRE_REDUCE_ENUM_
  VYRE_REDUCE_COUNT_,
  /* 32 bits whatever the enum options; never a value. */
  VYRE_REDUCE_FORCE32_ = 0x7fffffff
} vyre_reduce;

/* Barrier scopes (vyre_inst.mod of barrier). */
typedef enum vyre_barrier_scope {
  VYRE_BARRIER_WORKGROUP = 0,
  VYRE_BARRIER_GRID = 1,
  /* 32 bits whatever the enum options; never a value. */
  VYRE_BARRIER_SCOPE_FORCE32_ = 0x7fffffff
} vyre_barrier_scope;

/* Tile layouts in memory (vyre_inst.mod of mma_load and mma_store):
 * element (r, c) of a tile at `index` with `stride` is element
 * index + r * stride + c (ROW) or index + c * stride + r (COL). */
typedef enum vyre_layout {
  VYRE_LAYOUT_ROW = 0,
  VYRE_LAYOUT_COL = 1,
  /* 32 bits whatever the enum options; never a value. */
  VYRE_LAYOUT_FORCE32_ = 0x7fffffff
} vyre_layout;

/* The on-disk structures. */
typedef struct vyre_program_header {
  uint32_t magic;          /* VYRE_PROGRAM_MAGIC */
  uint16_t version;        /* VYRE_PROGRAM_VERSION */
  uint16_t header_size;    /* 64 */
  uint32_t total_size;     /* bytes of the whole image */
  uint32_t flags;          /* reserved, 0 */
  uint32_t workgroup_size[3];
  uint32_t buffer_count;
  uint32_t buffer_offset;
  uint32_t local_count;
  uint32_t local_offset;
  uint32_t inst_count;
  uint32_t inst_offset;
  uint32_t string_size;
  uint32_t string_offset;
  uint32_t reserved;       /* 0 */
} vyre_program_header;

typedef struct vyre_buffer_decl {
  uint32_t name_offset;    /* into the string section */
  uint32_t name_size;      /* bytes, no NUL; 1..VYRE_MAX_NAME */
  uint32_t binding;        /* strictly increasing over non-workgroup buffers; 0 for workgroup */
  uint8_t access;          /* vyre_access */
  uint8_t elem_type;       /* vyre_type (storage type) */
  uint8_t flags;           /* VYRE_BUF_* */
  uint8_t reserved0;
  uint32_t count;          /* elements; 0 = sized by its input */
  uint32_t out_range_offset; /* bytes, with VYRE_BUF_OUT_RANGE */
  uint32_t out_range_size;   /* bytes, with VYRE_BUF_OUT_RANGE */
  uint32_t reserved1;
} vyre_buffer_decl;

typedef struct vyre_inst {
  uint16_t op;   /* vyre_op */
  uint8_t type;  /* result type (value ops) or stored/compared type; 0 otherwise */
  uint8_t mod;   /* axis, order, reduce kind, barrier scope; 0 otherwise */
  uint32_t a, b, c, d;
} vyre_inst;

VYRE_STATIC_ASSERT(sizeof(vyre_program_header) == VYRE_PROGRAM_HEADER_SIZE, "header layout");
VYRE_STATIC_ASSERT(offsetof(vyre_program_header, workgroup_size) == 16, "header.workgroup_size");
VYRE_STATIC_ASSERT(offsetof(vyre_program_header, inst_offset) == 48, "header.inst_offset");
VYRE_STATIC_ASSERT(sizeof(vyre_buffer_decl) == 32, "buffer decl layout");
VYRE_STATIC_ASSERT(offsetof(vyre_buffer_decl, count) == 16, "buffer decl.count");
VYRE_STATIC_ASSERT(sizeof(vyre_inst) == 20, "instruction layout");
VYRE_STATIC_ASSERT(VYRE_PROGRAM_MAX_SIZE == 85002304u, "the largest program image");
VYRE_STATIC_ASSERT(offsetof(vyre_inst, a) == 4, "inst.a");

/* ------------------------------------------------------------------ */
/* Op and type queries                                                 */
/* ------------------------------------------------------------------ */
typedef struct vyre_op_info {
  uint16_t id;
  uint8_t op_class; /* vyre_op_class */
  uint8_t flags;    /* VYRE_OPF_* */
  uint32_t type_mask;
  const char *name;     /* "ADD" */
  const char *mnemonic; /* "add" */
} vyre_op_info;

/* Info for op id `op`, or NULL when the id is unassigned.  Static data. */
const vyre_op_info *vyre_op_lookup(uint32_t op);
/* Op by mnemonic ("add"), or NULL. */
const vyre_op_info *vyre_op_by_mnemonic(const char *mnemonic, size_t len);
/* Every assigned op, in id order; *count receives how many. */
const vyre_op_info *vyre_op_all(uint32_t *count);
/* 1 when op is an f32 transcendental (VYRE_OPF_TRANSCENDENTAL), else 0. */
int vyre_op_is_transcendental(uint32_t op);

/* One row of VYRE_OP_CLASS_MAP. */
typedef struct vyre_op_class_info {
  uint8_t result;     /* vyre_result_rule */
  uint8_t operand[4]; /* vyre_operand_kind of a, b, c, d */
  uint8_t mod;        /* vyre_mod_kind */
  uint8_t text_min;   /* operands the text form takes, at least */
  uint8_t text_max;   /* and at most */
  const char *name;   /* "BINARY" */
  const char *usage;  /* the text form, "%v = OP %a %b" */
} vyre_op_class_info;

/* Schema of class `op_class`, or NULL when there is no such class.  Static data. */
const vyre_op_class_info *vyre_op_class_lookup(uint32_t op_class);
/* The VYRE_FIELD_* bits an instruction of this op uses (the type field:
 * every value op, and the MMA statements, which carry their component
 * type); the canonical encoding has every other field zero.  info must
 * not be NULL. */
uint32_t vyre_op_fields(const vyre_op_info *info);

const char *vyre_type_name(uint32_t type);     /* "f32", or "?" */
uint32_t vyre_type_size(uint32_t type);        /* bytes in a buffer; 0 for void/unknown */
int vyre_type_by_name(const char *name, size_t len); /* vyre_type, or -1 */
/* The value type a load of storage type t yields (u8 -> u32, f16 -> f32...);
 * VYRE_T_VOID for a type that is not a storage type (void, mat_*). */
uint32_t vyre_type_compute(uint32_t storage_type);
int vyre_type_is_value(uint32_t type);
/* The names of the types in `mask` (VYRE_TBIT bits), in type order,
 * space-separated; with `last` (e.g. " or ") joining the final one:
 * "bool u32 u64 i32 i64 or f32".  Writes at most size bytes, NUL included;
 * returns out.  For messages, so that type lists come from VYRE_TYPE_MAP. */
const char *vyre_type_list(uint32_t mask, const char *last, char *out, size_t size);
const char *vyre_access_name(uint32_t access);  /* "ro", or "?" */
int vyre_access_by_name(const char *name, size_t len);
const char *vyre_order_name(uint32_t order);
const char *vyre_reduce_name(uint32_t kind);
const char *vyre_layout_name(uint32_t layout);  /* "row", "col", or "?" */

/* Matrix types (mat_*): VYRE_MAT_A, _B or _ACC for a matrix type, 0 for
 * any other type. */
#define VYRE_MAT_A 1
#define VYRE_MAT_B 2
#define VYRE_MAT_ACC 3
int vyre_type_matrix_use(uint32_t type);
/* The component type of matrix type `type` (mat_a_bf16 -> bf16,
 * mat_acc_i32 -> i32), or VYRE_T_VOID for a type that is not one. */
uint32_t vyre_type_matrix_component(uint32_t type);
/* The matrix type of (use, component), or VYRE_T_VOID when there is none. */
uint32_t vyre_type_matrix(int use, uint32_t component);
/* The MMA shape of A/B component type `component`: M x N x K = 16 x 16 x
 * 16 for f16 and bf16, 16 x 16 x 32 for i8 and u8.  Returns 0 (and
 * zeros) for any other type, else 1. */
int vyre_mma_shape(uint32_t component, uint32_t *m, uint32_t *n, uint32_t *k);
/* The element types (VYRE_TBIT mask) of a buffer that mma_load or
 * mma_store may name for a tile of component type `component`: the
 * component itself or an integer storage type of its size, whose bits are
 * read and written as the component (f16, bf16: + u16 i16; i8, u8: i8 u8;
 * f32: + u32 i32; i32: + u32), except that mma_store of an f32
 * accumulator takes an f32 buffer only (its elements are floats held to
 * the MMA error bound).  0 for a type that is no component. */
uint32_t vyre_mma_buffer_types(uint32_t component);
/* Rows and columns of a tile of matrix type `type` (A: M x K, B: K x N,
 * accumulator: M x N; accumulators are 16 x 16).  Returns 0 for a type
 * that is not a matrix type, else 1. */
int vyre_type_matrix_dims(uint32_t type, uint32_t *rows, uint32_t *cols);
const char *vyre_status_name(int status);       /* "VYRE_OK" */
const char *vyre_status_text(int status);       /* "success" */

/* ------------------------------------------------------------------ */
/* Decoded program                                                     */
/* ------------------------------------------------------------------ */

/* vyre_program.features */
#define VYRE_FEAT_BARRIER (1u << 0)
#define VYRE_FEAT_GRID_BARRIER (1u << 1)
#define VYRE_FEAT_SUBGROUP (1u << 2)
#define VYRE_FEAT_ATOMIC (1u << 3)
#define VYRE_FEAT_ATOMIC64 (1u << 4)
#define VYRE_FEAT_TRAP (1u << 5)
#define VYRE_FEAT_TRANSCENDENTAL (1u << 6)
#define VYRE_FEAT_F16 (1u << 7)
#define VYRE_FEAT_BF16 (1u << 8)
#define VYRE_FEAT_WORKGROUP_MEMORY (1u << 9)
#define VYRE_FEAT_RETURN (1u << 10)
#define VYRE_FEAT_LOOP (1u << 11)
#define VYRE_FEAT_MMA (1u << 12)

/* Buffer roles at dispatch (share/doc/vyre/program-format.md, "Buffer declaration"). */
typedef enum vyre_role {
  VYRE_ROLE_INPUT = 0,  /* ReadOnly, Uniform */
  VYRE_ROLE_INOUT = 1,  /* ReadWrite without the output flag */
  VYRE_ROLE_OUTPUT = 2, /* WriteOnly, or the output flag: backend-allocated, zeroed */
  VYRE_ROLE_SHARED = 3,  /* Workgroup */
  /* 32 bits whatever the enum options; never a value. */
  VYRE_ROLE_FORCE32_ = 0x7fffffff
} vyre_role;

typedef struct vyre_buffer_info {
  vyre_buffer_decl decl;
  char name[VYRE_MAX_NAME + 1];
  uint8_t role;          /* vyre_role */
  uint8_t is_output;     /* returned to the host after dispatch */
  uint8_t reserved[2];
  int32_t input_index;   /* position among inputs, or -1 */
  int32_t output_index;  /* position among outputs, or -1 */
  uint32_t elem_size;    /* bytes per element */
  uint32_t kernel_index; /* position among kernel pointer params, or -1u (workgroup) */
  uint32_t shared_offset;/* byte offset in workgroup memory (workgroup buffers) */
} vyre_buffer_info;

/*
 * A validated program.  Every array is owned by the struct; free with
 * vyre_program_free.  Derived tables index by instruction.
 */
typedef struct vyre_program {
  vyre_program_header header;
  uint32_t buffer_count;
  vyre_buffer_info *buffers;
  uint32_t local_count;
  uint8_t *local_types;
  uint32_t inst_count;
  vyre_inst *insts;
  uint8_t *value_type;   /* result type of inst i, VYRE_T_VOID for statements */
  uint32_t *match;       /* IF -> its ELSE or END; ELSE -> END; LOOP/BLOCK -> END; END -> opener */
  uint8_t *uniform;      /* 1 when inst i's value (or, for control ops, its block) is workgroup-uniform */
  uint8_t *depth;        /* nesting depth of inst i (0 = top level); saturates at 255 */
  uint32_t input_count;
  uint32_t output_count;
  uint32_t kernel_buffer_count; /* non-workgroup buffers */
  uint32_t shared_bytes;        /* total workgroup memory per workgroup */
  uint32_t features;            /* VYRE_FEAT_* */
  uint64_t required_caps;       /* VYRE_CAP_* the program needs */
  uint32_t max_depth;
  uint32_t reserved;
  uint8_t sha256[32];           /* content hash of the bytes */
  void *bytes;                  /* a private aligned copy of the image */
  uint64_t size;
} vyre_program;

/*
 * Decode and validate untrusted bytes.  Never reads outside [bytes,
 * bytes+size).  On success *out receives a new program (free with
 * vyre_program_free).  On failure *out is NULL and err names the
 * instruction index (when there is one), what is wrong, and a Fix.
 */
vyre_status vyre_program_decode(const void *bytes, size_t size, vyre_program **out,
                                vyre_error *err);
void vyre_program_free(vyre_program *program);

/* The content hash (SHA-256 of the image) as 64 lowercase hex chars + NUL. */
void vyre_program_hash_hex(const vyre_program *program, char out[65]);

/* ------------------------------------------------------------------ */
/* Dispatch geometry (shared so that every backend derives it alike)   */
/* ------------------------------------------------------------------ */
typedef struct vyre_geometry {
  uint32_t workgroup[3];
  uint32_t grid[3];
  uint32_t element_count;         /* params word 0 */
  uint32_t buffer_elems[VYRE_MAX_BUFFERS]; /* per buffer, declaration order */
  uint64_t buffer_bytes[VYRE_MAX_BUFFERS];
  uint64_t out_offset[VYRE_MAX_BUFFERS];   /* readback range of outputs */
  uint64_t out_size[VYRE_MAX_BUFFERS];
  uint64_t invocations;           /* grid x wg, all axes */
} vyre_geometry;

/*
 * Derive buffer sizes, readback ranges, workgroup and grid.  input_sizes
 * holds one byte size per input (program->input_count of them); for
 * resident dispatch pass resident_sizes (one per kernel buffer) instead and
 * input_sizes NULL.  options may be NULL.  Fails with INVALID_ARGUMENT on
 * a size that does not fit the declaration, LIMIT on a grid too large.
 */
vyre_status vyre_geometry_derive(const vyre_program *program, const uint64_t *input_sizes,
                                 const uint64_t *resident_sizes,
                                 const vyre_dispatch_options *options, vyre_geometry *out,
                                 vyre_error *err);

/* Number of u32 words of the kernel params block (share/doc/vyre/kernel-abi.md). */
uint32_t vyre_params_word_count(const vyre_program *program);
/* Fill the params block: words[0] = element count, words[1+i] = element
 * count of buffer i, then zeroed trap and grid-barrier words. */
void vyre_params_fill(const vyre_program *program, const vyre_geometry *geometry,
                      uint32_t *words);
#define VYRE_PARAMS_TRAP_WORDS 2u   /* trap code, instruction index + 1 */
#define VYRE_PARAMS_GRID_WORDS 2u   /* grid barrier arrival count, generation */

#ifdef __cplusplus
}
#endif
#endif /* VYRE_VYRE_PROGRAM_H */
