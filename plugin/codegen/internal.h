/* internal.h -- state shared by the codegen files; calls run one way, top to bottom:
 * codegen.c -> elementwise.c -> lower.c -> expr.c -> math.c, mem.c, mma.c, async.c -> emit.c (analysis.c beside). */
#ifndef VYRE_PLUGIN_CODEGEN_INTERNAL_H
#define VYRE_PLUGIN_CODEGEN_INTERNAL_H

#include <stdarg.h>
#include <stdint.h>

#include "codegen.h"
#include "abi/support/strbuf.h"
#include "vyre/vyre_support.h"

#define CG_NONE UINT32_MAX
#define CG_RING 512 /* names stay valid for the next 511 names made */
#define CG_MAX_FACTS 512
#define CG_EPT 8    /* elements per thread of the elementwise path */
#define CG_QUADS 2  /* CG_EPT / 4: groups of 4 consecutive elements */
#define CG_EW_MAX_INSTS 4096u /* larger programs take the general path */
#define CG_MMA_REGS 8u  /* .b32 registers of a matrix local (mma.c) */

/* Body lowering modes. */
enum { CG_MODE_GENERAL = 0, CG_MODE_VEC = 1 };

/* A known bound: value `key` (a canonical value id) is below `bound` (a
 * value id) in the current region. */
typedef struct cg_fact {
  uint32_t key;
  uint32_t bound;
} cg_fact;

typedef struct cg_fmt cg_fmt; /* a parsed format string (emit.c) */

/* A group of cp.async copies in flight (async.c): elements [k, k + n)
 * past value `root` of workgroup buffer `buffer`. */
typedef struct cg_async_rec {
  uint32_t buffer, root, k, n;
} cg_async_rec;

typedef struct cg_ctx {
  const vyre_program *p;
  const cg_options *o;
  vyre_error *err;
  vyre_status st;      /* first failure; emission continues harmlessly after it */
  strbuf body;         /* the entry body's instructions */
  strbuf funcs;        /* .func definitions emitted before the entry */
  uint32_t n;          /* instruction count */
  uint32_t wg[3], nthreads;
  uint32_t sm;         /* 70, 75, 80, 86, 90 ... */
  uint32_t nt32, nt64, ntp, nt16, ntf; /* temporaries handed out */
  uint32_t label;      /* fresh label counter */
  uint32_t copy;       /* register copy of the body being lowered */
  uint32_t ncopies;
  int mode;            /* CG_MODE_* */
  const char *gid_reg; /* gid.x override (elementwise), NULL = from %ctaid/%tid */
  char ring[CG_RING][48];
  unsigned ring_i;
  /* control-flow facts for bounds-check elision */
  cg_fact facts[CG_MAX_FACTS];
  uint32_t nfacts;
  uint32_t *fact_mark; /* per block opener: nfacts when it was opened */
  /* grid barriers */
  uint32_t ngrid;      /* grid barriers in the program */
  uint32_t grid_seen;  /* grid barriers lowered so far */
  int need_done;       /* returns/traps must run later grid barriers */
  /* subgroups */
  int partial_warp;    /* the workgroup's last warp is partial */
  /* elementwise: per instruction, depends on gid (value differs per element) */
  uint8_t *dep;
  uint32_t vpred;      /* VEC: %q number of the current region's predicate, CG_NONE = always */
  uint32_t *pred_stack;
  uint32_t pred_depth;
  uint32_t *cur_raw;   /* VEC: [buffer * CG_EPT + e] raw temp of the element at gid */
  uint8_t *vec_static; /* VEC: per IF, 1 = condition true on the vector path, 2 = false */
  int tail_continue;   /* elementwise tail: return goes to the next element */
  uint8_t *ew_flags;   /* elementwise: per buffer EW_* */
  char gid_name[24];   /* the register gid_reg names */
  uint8_t *is_counter; /* per local slot: declared by a loop */
  uint32_t *if_of;     /* per ELSE: its IF */
  char (*vname)[16];   /* per value: its copy-0 register name, made on first use */
  cg_fmt *fmts;        /* parsed format strings, by address */
  uint8_t op_class[VYRE_OP_ID_LIMIT]; /* vyre_op_class by op id (validated ids only) */
  /* transcendental functions already emitted: bit per (op - RSQRT) * 2 + variant */
  uint64_t math_emitted;
  char math_names[64][32];
  /* analysis.c: per value */
  uint32_t *hi;        /* largest value a u32 can hold (UINT32_MAX: unknown) */
  uint8_t *al;         /* log2 of a power of two known to divide a u32 */
  uint8_t *noflush;    /* f32 load: every use is .ftz arithmetic, no subnormal flush */
  uint8_t *vsize;      /* workgroup load leading a vector group: 2 or 4, else 0 */
  uint32_t *vnext;     /* the next load of its vector group, CG_NONE at the end */
  uint8_t *vskip;      /* load already done by its group's vector load */
  uint32_t utag;       /* label tag of the unrolled loop body being lowered (0: none) */
  uint32_t utag_next;  /* the last tag handed out */
  uint8_t *su;         /* mma.c: per value, the same in every lane of a subgroup */
  /* async.c: cp.async copies */
  uint8_t *cpa;        /* per instruction: its part in a copy group (NULL: none, below sm_80) */
  uint32_t *cpa_n;     /* per group leader: elements in the group */
  uint8_t *async_bf16; /* per buffer: bf16 copies land there unflushed */
  cg_async_rec *pend;  /* copies in flight */
  uint32_t npend, cap_pend;
} cg_ctx;

/* ---- the emitter (emit.c): formatter, names, type helpers, facts ---- */
/* Append one instruction line: a tiny printf supporting %s %u %d %x %X(u64 hex)
 * %U(u64 decimal) %c and %%; much faster than vsnprintf. */
void cg_emit(cg_ctx *c, const char *fmt, ...);
/* Append a raw line (labels). Same format language, no indent. */
void cg_line(cg_ctx *c, const char *fmt, ...);
/* Record the first failure; returns it. */
vyre_status cg_fail(cg_ctx *c, vyre_status st, const char *fmt, ...) VYRE_PRINTF(3, 4);

/* Register names (valid until CG_RING more names are made). */
const char *cg_val(cg_ctx *c, uint32_t v);  /* the register of value v in the current copy */
const char *cg_local(cg_ctx *c, uint32_t slot);
const char *cg_t32(cg_ctx *c);  /* fresh .b32 temporary */
const char *cg_t64(cg_ctx *c);  /* fresh .b64 temporary */
const char *cg_tp(cg_ctx *c);   /* fresh .pred temporary */
const char *cg_t16(cg_ctx *c);  /* fresh .b16 temporary */
const char *cg_tf(cg_ctx *c);   /* fresh .f32 temporary (call arguments) */
const char *cg_name(cg_ctx *c, const char *prefix, uint32_t k); /* "%prefix<k>" */
/* VEC: the current region's predicate name, or NULL when it always holds. */
const char *cg_vpred(cg_ctx *c);
uint32_t cg_new_label(cg_ctx *c);

/* Type helpers. */
int cg_is64(uint32_t t);
const char *cg_ity(uint32_t t); /* u32 s32 u64 s64 f32 */
const char *cg_bty(uint32_t t); /* b32 b64 pred */

/* Facts. */
int cg_index_in_bounds(cg_ctx *c, uint32_t buffer, uint32_t index);
/* 1 when value v is a u32 constant, its value in *out. */
int cg_const_u32(const cg_ctx *c, uint32_t v, uint32_t *out);
/* The largest value the u32 value v can hold here: its static range (hi)
 * narrowed by the facts of the enclosing region (UINT32_MAX: unknown). */
uint32_t cg_hi_at(cg_ctx *c, uint32_t v);
/* Push the facts that hold where `cond` is true (negated 0) or false (1). */
void cg_facts_from(cg_ctx *c, uint32_t cond, int negated);
/* The element count of buffer b as an operand (immediate or register). */
const char *cg_len(cg_ctx *c, uint32_t b);

/* Moves and f32 helpers (emit.c), under both expressions and memory. */
/* Copy value `src` (a register or immediate) of type t into `dst`. */
void cg_mov(cg_ctx *c, uint32_t t, const char *dst, const char *src);
/* f32 value register -> canonical f32 bits in a fresh temp (NaN -> 0x7FC00000). */
const char *cg_canon_nan(cg_ctx *c, const char *v);
/* Flush a subnormal f32 (bits in `in`) to its signed zero, into `out`. */
void cg_flush_subnormal(cg_ctx *c, const char *out, const char *in);
/* f32 min/max into dst with NaN and signed-zero rules (docs/semantics.md). */
void cg_f32_minmax(cg_ctx *c, const char *dst, const char *a, const char *b, int is_max);

/* ---- expressions (expr.c) ---- */
void cg_expr(cg_ctx *c, uint32_t i);

/* ---- memory, atomics, subgroups, barriers, trap (mem.c) ---- */
void cg_load(cg_ctx *c, uint32_t i);
void cg_store(cg_ctx *c, uint32_t i);
void cg_atomic(cg_ctx *c, uint32_t i);
void cg_subgroup(cg_ctx *c, uint32_t i);
void cg_trap(cg_ctx *c, uint32_t i);
void cg_grid_barrier(cg_ctx *c, uint32_t i);
/* Raw storage bits (b32 / b64 temp) -> the value register of inst `dst_val`'s type. */
void cg_raw_to_value(cg_ctx *c, uint32_t elem_type, const char *raw, const char *dst);
/* Value register -> raw storage bits in a fresh temp (b32, or b64 for 8-byte types). */
const char *cg_value_to_raw(cg_ctx *c, uint32_t elem_type, const char *val);
/* "ld.global.u16"-style width suffix of a storage type: u8 u16 u32 u64. */
const char *cg_raw_ty(uint32_t elem_type);

/* ---- tensor cores (mma.c) ---- */
/* UNSUPPORTED for an MMA program on a target below sm_80 or a float mma
 * under strict; INVALID_ARGUMENT for a workgroup not a multiple of 32. */
vyre_status cg_mma_check(const vyre_program *p, const cg_options *o, vyre_error *err);
/* The lane registers and zeroed matrix locals, at the top of the body. */
void cg_mma_prologue(cg_ctx *c);
/* mma_fill, mma_load, mma, mma_store. */
void cg_mma(cg_ctx *c, uint32_t i);

/* ---- asynchronous staging (async.c) ---- */
/* Find the copy groups (sm_80+): VYRE_OK or VYRE_OUT_OF_MEMORY; what it
 * made is freed by cg_async_free. */
vyre_status cg_async_analyse(cg_ctx *c);
void cg_async_free(cg_ctx *c);
/* 1 when instruction i emits nothing (a copy's load, a group member). */
int cg_async_skip(const cg_ctx *c, uint32_t i);
/* Store i as its group's cp.async: 1, or 0 when it is no group leader. */
int cg_async_store(cg_ctx *c, uint32_t i);
/* Wait for every copy in flight (none: nothing emitted). */
void cg_async_wait(cg_ctx *c);
/* Wait when copies into workgroup buffer b are in flight. */
void cg_async_touch(cg_ctx *c, uint32_t b);
/* Flush the two bf16 subnormals of register r to signed zero. */
void cg_async_flush_bf16(cg_ctx *c, const char *r);

/* ---- transcendentals (math.c) ---- */
void cg_math(cg_ctx *c, uint32_t i);

/* ---- elementwise fast path (elementwise.c) ---- */
/* 1 when the program qualifies (docs/codegen.md "Elementwise path"). */
int cg_elementwise_eligible(cg_ctx *c);
/* Emit the whole elementwise kernel body. */
void cg_elementwise_body(cg_ctx *c);

/* ---- static analysis (analysis.c) ---- */
/* Fill hi, al, noflush and the vector groups: VYRE_OK, or
 * VYRE_OUT_OF_MEMORY (err not set: the caller says what failed).  What it
 * made, even when it fails, is freed by cg_analysis_free. */
vyre_status cg_analyse(cg_ctx *c);
void cg_analysis_free(cg_ctx *c);

/* ---- the body walker (lower.c) ---- */
/* Lower instructions [from, to) in the current mode and copy. */
void cg_lower_range(cg_ctx *c, uint32_t from, uint32_t to);

#endif /* VYRE_PLUGIN_CODEGEN_INTERNAL_H */
