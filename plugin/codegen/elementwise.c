/* elementwise.c -- the vectorised elementwise fast path (docs/codegen.md "Elementwise path"). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"

static int is_gid(const vyre_program *p, uint32_t v) {
  return p->insts[v].op == VYRE_OP_INVOCATION_ID && p->insts[v].mod == 0;
}

/* The bound guards of the vector path.  As an `if` condition (negated = 0),
 * cond is "gid < buflen(b)" or "buflen(b) > gid", or a conjunction of such:
 * true on the vector path once every such b is part of the vector bound.
 * As an early-return condition (negated = 1) it is the negation,
 * "gid >= buflen(b)" or "buflen(b) <= gid", or a disjunction: false there.
 * Marks each b in in_bound; 0 when cond has another shape. */
static int bound_guard(cg_ctx *c, uint32_t cond, uint8_t *in_bound, int negated, int depth) {
  const vyre_program *p = c->p;
  const vyre_inst *in = &p->insts[cond];
  if (depth > 8) return 0;
  uint32_t join = negated ? VYRE_OP_LOGICAL_OR : VYRE_OP_LOGICAL_AND;
  uint32_t bit = negated ? VYRE_OP_OR : VYRE_OP_AND;
  if (in->op == join || (in->op == bit && in->type == VYRE_T_BOOL))
    return bound_guard(c, in->a, in_bound, negated, depth + 1) &&
           bound_guard(c, in->b, in_bound, negated, depth + 1);
  uint32_t x, len;
  if (in->op == (negated ? VYRE_OP_GE : VYRE_OP_LT)) {
    x = in->a;
    len = in->b;
  } else if (in->op == (negated ? VYRE_OP_LE : VYRE_OP_GT)) {
    x = in->b;
    len = in->a;
  } else {
    return 0;
  }
  if (p->value_type[x] != VYRE_T_U32 || !is_gid(p, x) || p->insts[len].op != VYRE_OP_BUF_LEN)
    return 0;
  in_bound[p->insts[len].a] = 1;
  return 1;
}

/* Per buffer: what the vector path does with it. */
#define EW_LOAD 1u      /* loaded at gid: preload the vectors */
#define EW_STORE 2u     /* stored at gid: vector store at the end */
#define EW_UNCOND 4u    /* some store always runs on the vector path */
#define EW_BOUND 8u     /* its length bounds the vector path */

/* 1 when any value operand of `in` (by its class's schema) depends on
 * the element. */
static uint8_t operand_dep(const cg_ctx *c, const vyre_inst *in) {
  const vyre_op_class_info *cls = vyre_op_class_lookup(c->op_class[in->op]);
  const uint32_t field[4] = {in->a, in->b, in->c, in->d};
  uint8_t dep = 0;
  for (uint32_t k = 0; k < 4; k++)
    if (cls->operand[k] == VYRE_OPND_VALUE) dep |= c->dep[field[k]];
  return dep;
}

/* Per instruction, whether its value differs per element (c->dep); 0 when
 * the program has an instruction or an index the path does not take. */
static int mark_dependence(cg_ctx *c, const uint8_t *stored) {
  const vyre_program *p = c->p;
  int ok = 1;
  for (uint32_t i = 0; i < p->inst_count && ok; i++) {
    const vyre_inst *in = &p->insts[i];
    switch ((vyre_op_class)c->op_class[in->op]) {
    case VYRE_OC_CONST:
    case VYRE_OC_BUF_LEN: break;
    case VYRE_OC_LOCAL_GET: c->dep[i] = 1; break;
    case VYRE_OC_BUILTIN:
      if (in->op != VYRE_OP_INVOCATION_ID || in->mod != 0) ok = 0;
      c->dep[i] = 1;
      break;
    case VYRE_OC_LOAD:
      if (is_gid(p, in->b)) c->dep[i] = 1;
      else if (c->dep[in->b] || stored[in->a]) ok = 0; /* a per-element or racing index */
      break;
    case VYRE_OC_BINARY:
    case VYRE_OC_COMPARE:
    case VYRE_OC_UNARY:
    case VYRE_OC_PREDICATE:
    case VYRE_OC_CAST:
    case VYRE_OC_SELECT:
    case VYRE_OC_FMA: c->dep[i] = operand_dep(c, in); break;
    case VYRE_OC_STORE:
      if (!is_gid(p, in->b)) ok = 0;
      break;
    case VYRE_OC_LET:
    case VYRE_OC_ASSIGN:
    case VYRE_OC_IF:
    case VYRE_OC_ELSE:
    case VYRE_OC_END:
    case VYRE_OC_BLOCK: break;
    case VYRE_OC_RETURN:
      /* Only the early-exit guard `if (gid >= buflen(b)) { return } end`
       * at the top level (checked with the guards in mark_regions). */
      if (i == 0 || p->insts[i - 1].op != VYRE_OP_IF || p->match[i - 1] != i + 1 ||
          p->depth[i - 1] != 0)
        ok = 0;
      break;
    default: ok = 0; break; /* loops, barriers, atomics, subgroups, trap */
    }
  }
  return ok;
}

/* Which regions always run on the vector path (c->vec_static), and what
 * each buffer needs (c->ew_flags); `stack` holds VYRE_MAX_NESTING + 2
 * bytes, `bound` one zeroed byte per buffer.  0 when a return is not an
 * early-exit guard on a buffer length. */
static int mark_regions(cg_ctx *c, uint8_t *stack, uint8_t *bound) {
  const vyre_program *p = c->p;
  uint32_t depth = 0;
  int ok = 1;
  stack[0] = 1;
  for (uint32_t i = 0; i < p->inst_count; i++) {
    const vyre_inst *in = &p->insts[i];
    switch (in->op) {
    case VYRE_OP_IF:
      if (i + 1 < p->inst_count && p->insts[i + 1].op == VYRE_OP_RETURN) {
        if (!bound_guard(c, in->a, bound, 1, 0)) ok = 0;
        c->vec_static[i] = 2;
      } else {
        c->vec_static[i] = (uint8_t)bound_guard(c, in->a, bound, 0, 0);
      }
      stack[depth + 1] = (uint8_t)(stack[depth] && c->vec_static[i] == 1);
      depth++;
      break;
    case VYRE_OP_ELSE: stack[depth] = 0; break;
    case VYRE_OP_BLOCK:
      stack[depth + 1] = stack[depth];
      depth++;
      break;
    case VYRE_OP_END: depth--; break;
    case VYRE_OP_LOAD:
      if (is_gid(p, in->b)) c->ew_flags[in->a] |= EW_LOAD;
      break;
    case VYRE_OP_STORE:
      c->ew_flags[in->a] |= EW_STORE;
      if (stack[depth]) c->ew_flags[in->a] |= EW_UNCOND;
      break;
    default: break;
    }
  }
  for (uint32_t b = 0; b < p->buffer_count; b++)
    if (bound[b] || (c->ew_flags[b] & (EW_LOAD | EW_STORE))) c->ew_flags[b] |= EW_BOUND;
  return ok;
}

int cg_elementwise_eligible(cg_ctx *c) {
  const vyre_program *p = c->p;
  /* Bodies beyond CG_EW_MAX_INSTS are compute-bound anyway; eight copies
   * of them would only slow codegen and ptxas. */
  if (c->wg[1] != 1 || c->wg[2] != 1 || p->shared_bytes || p->inst_count > CG_EW_MAX_INSTS ||
      (p->features & VYRE_FEAT_MMA))
    return 0;
  size_t nb = p->buffer_count ? p->buffer_count : 1;
  c->dep = calloc(p->inst_count, 1);
  c->vec_static = calloc(p->inst_count, 1);
  c->ew_flags = calloc(nb, 1);
  uint8_t *stored = calloc(nb, 1), *bound = calloc(nb, 1);
  uint8_t *stack = malloc(VYRE_MAX_NESTING + 2);
  /* Out of memory: the general path, which needs none of these tables. */
  int ok = c->dep && c->vec_static && c->ew_flags && stored && bound && stack;
  if (ok) {
    for (uint32_t i = 0; i < p->inst_count; i++)
      if (p->insts[i].op == VYRE_OP_STORE) stored[p->insts[i].a] = 1;
    ok = mark_dependence(c, stored) && mark_regions(c, stack, bound);
  }
  free(stored);
  free(bound);
  free(stack);
  if (!ok) {
    free(c->dep);
    free(c->vec_static);
    free(c->ew_flags);
    c->dep = NULL;
    c->vec_static = NULL;
    c->ew_flags = NULL;
  }
  return ok;
}

static const char *vec_ty(uint32_t et) { return et == VYRE_T_F32 ? "f32" : "u32"; }

/* The address of quad q of buffer b (elements of `size` bytes, from the
 * quad's base index) and the names of its four per-copy registers; shared
 * by the vector loads and stores. */
static const char *quad_operands(cg_ctx *c, uint32_t b, uint32_t q, const char *base,
                                 uint32_t size, char n[4][12]) {
  const char *off = cg_t64(c), *a = cg_t64(c);
  cg_emit(c, "mul.wide.u32 %s, %s, %u;", off, base, size);
  cg_emit(c, "add.s64 %s, %s, %s;", a, cg_name(c, "%bp", b), off);
  const uint32_t *r = &c->cur_raw[b * CG_EPT + q * 4];
  const char *pre = size == 8 ? "%u" : "%t";
  for (int k = 0; k < 4; k++) snprintf(n[k], sizeof n[k], "%s%u", pre, r[k]);
  return a;
}

/* Per buffer the vector path loads (or stores conditionally): the
 * thread's elements as vectors into per-copy registers. */
static void ew_preload(cg_ctx *c, char quad_base[CG_QUADS][16], char guard[CG_QUADS][16]) {
  const vyre_program *p = c->p;
  uint32_t nb = p->buffer_count;
  for (uint32_t b = 0; b < nb; b++) {
    uint8_t f = c->ew_flags[b];
    if (!(f & (EW_LOAD | EW_STORE))) continue;
    uint32_t et = p->buffers[b].decl.elem_type, size = p->buffers[b].elem_size;
    for (uint32_t e = 0; e < CG_EPT; e++) c->cur_raw[b * CG_EPT + e] = size == 8 ? c->nt64++ : c->nt32++;
    if (!((f & EW_LOAD) || ((f & EW_STORE) && !(f & EW_UNCOND)))) continue;
    /* Preload: the loads read it, or a conditional store must write the
     * old bits back for the elements it skips (only this invocation
     * touches element gid, so that is invisible). */
    uint32_t acc = p->buffers[b].decl.access;
    const char *nc = acc == VYRE_ACCESS_READ_ONLY || acc == VYRE_ACCESS_UNIFORM ? ".nc" : "";
    for (uint32_t q = 0; q < CG_QUADS; q++) {
      char n[4][12];
      const char *a = quad_operands(c, b, q, quad_base[q], size, n);
      const char *n0 = n[0], *n1 = n[1], *n2 = n[2], *n3 = n[3], *g = guard[q];
      if (size == 4) {
        cg_emit(c, "%sld.global%s.v4.%s {%s, %s, %s, %s}, [%s];", g, nc, vec_ty(et), n0, n1, n2, n3,
                a);
      } else if (size == 8) {
        cg_emit(c, "%sld.global%s.v2.u64 {%s, %s}, [%s];", g, nc, n0, n1, a);
        cg_emit(c, "%sld.global%s.v2.u64 {%s, %s}, [%s+16];", g, nc, n2, n3, a);
      } else if (size == 2) {
        cg_emit(c, "%sld.global%s.v2.u32 {%s, %s}, [%s];", g, nc, n0, n2, a);
        cg_emit(c, "shr.u32 %s, %s, 16;", n1, n0);
        cg_emit(c, "shr.u32 %s, %s, 16;", n3, n2);
      } else {
        cg_emit(c, "%sld.global%s.u32 %s, [%s];", g, nc, n0, a);
        cg_emit(c, "shr.u32 %s, %s, 8;", n1, n0);
        cg_emit(c, "shr.u32 %s, %s, 16;", n2, n0);
        cg_emit(c, "shr.u32 %s, %s, 24;", n3, n0);
      }
      (void)et;
    }
  }
}

/* Per stored buffer: the per-copy registers back out as vectors. */
static void ew_store(cg_ctx *c, char quad_base[CG_QUADS][16], char guard[CG_QUADS][16]) {
  const vyre_program *p = c->p;
  uint32_t nb = p->buffer_count;
  for (uint32_t b = 0; b < nb; b++) {
    if (!(c->ew_flags[b] & EW_STORE)) continue;
    uint32_t et = p->buffers[b].decl.elem_type, size = p->buffers[b].elem_size;
    for (uint32_t q = 0; q < CG_QUADS; q++) {
      char n[4][12];
      const char *a = quad_operands(c, b, q, quad_base[q], size, n);
      const char *n0 = n[0], *n1 = n[1], *n2 = n[2], *n3 = n[3], *g = guard[q];
      if (size == 4) {
        cg_emit(c, "%sst.global.v4.%s [%s], {%s, %s, %s, %s};", g, vec_ty(et), a, n0, n1, n2, n3);
      } else if (size == 8) {
        cg_emit(c, "%sst.global.v2.u64 [%s], {%s, %s};", g, a, n0, n1);
        cg_emit(c, "%sst.global.v2.u64 [%s+16], {%s, %s};", g, a, n2, n3);
      } else if (size == 2) {
        const char *w0 = cg_t32(c), *w1 = cg_t32(c);
        cg_emit(c, "prmt.b32 %s, %s, %s, 0x5410;", w0, n0, n1);
        cg_emit(c, "prmt.b32 %s, %s, %s, 0x5410;", w1, n2, n3);
        cg_emit(c, "%sst.global.v2.u32 [%s], {%s, %s};", g, a, w0, w1);
      } else {
        const char *x = cg_t32(c), *y = cg_t32(c), *w = cg_t32(c);
        cg_emit(c, "prmt.b32 %s, %s, %s, 0x0040;", x, n0, n1);
        cg_emit(c, "prmt.b32 %s, %s, %s, 0x0040;", y, n2, n3);
        cg_emit(c, "prmt.b32 %s, %s, %s, 0x5410;", w, x, y);
        cg_emit(c, "%sst.global.u32 [%s], %s;", g, a, w);
      }
    }
  }
}

/* Scalar tail: the thread's elements one at a time, each an invocation
 * of the program with full bounds checks, skipping gid >= count. */
static void ew_tail(cg_ctx *c, const char *tid4) {
  uint32_t wg = c->wg[0];
  cg_line(c, "$EWTAIL:");
  const char *k = cg_t32(c), *cnt64 = cg_t64(c), *g64 = cg_t64(c), *qq = cg_tp(c),
             *tmp = cg_t32(c);
  char kname[16], cname[16], gname[16], tname[16];
  snprintf(kname, sizeof kname, "%s", k);
  snprintf(cname, sizeof cname, "%s", cnt64);
  snprintf(gname, sizeof gname, "%s", g64);
  snprintf(tname, sizeof tname, "%s", tmp);
  cg_emit(c, "cvt.u64.u32 %s, %%gidx;", cname);
  cg_emit(c, "mov.u32 %s, 0;", kname);
  cg_line(c, "$EWNEXT:");
  /* element k: quad k>>2, lane k&3 */
  cg_emit(c, "shr.u32 %s, %s, 2;", tname, kname);
  cg_emit(c, "mul.lo.u32 %s, %s, %u;", tname, tname, wg * 4u);
  cg_emit(c, "add.u32 %s, %s, %s;", tname, tname, tid4);
  cg_emit(c, "cvt.u64.u32 %s, %s;", gname, tname);
  cg_emit(c, "and.b32 %s, %s, 3;", tname, kname);
  cg_emit(c, "cvt.u64.u32 %s, %s;", g64 = cg_t64(c), tname);
  {
    char lane64[16];
    snprintf(lane64, sizeof lane64, "%s", g64);
    cg_emit(c, "add.s64 %s, %s, %s;", gname, gname, lane64);
  }
  cg_emit(c, "add.s64 %s, %s, %%ebase;", gname, gname);
  cg_emit(c, "setp.ge.u64 %s, %s, %s;", qq, gname, cname);
  cg_emit(c, "@%s exit;", qq); /* later elements are further out */
  snprintf(c->gid_name, sizeof c->gid_name, "%%t%u", c->nt32++);
  cg_emit(c, "cvt.u32.u64 %s, %s;", c->gid_name, gname);
  c->mode = CG_MODE_GENERAL;
  c->copy = CG_EPT;
  c->nfacts = 0;
  c->tail_continue = 1;
  cg_lower_range(c, 0, c->n);
  c->tail_continue = 0;
  cg_line(c, "$EWCONT:");
  cg_emit(c, "add.u32 %s, %s, 1;", kname, kname);
  cg_emit(c, "setp.lt.u32 %s, %s, %u;", qq = cg_tp(c), kname, CG_EPT);
  cg_emit(c, "@%s bra $EWNEXT;", qq);
}

void cg_elementwise_body(cg_ctx *c) {
  const vyre_program *p = c->p;
  uint32_t wg = c->wg[0], nb = p->buffer_count;
  c->cur_raw = calloc((size_t)(nb ? nb : 1) * CG_EPT, sizeof *c->cur_raw);
  if (!c->cur_raw) {
    cg_fail(c, VYRE_OUT_OF_MEMORY, "codegen: out of host memory. Fix: free host memory");
    return;
  }
  c->ncopies = CG_EPT + 1; /* copies 0..7: vector elements; copy 8: the scalar tail */
  /* count, and the bound of the vector path: min(count, len(b) for bound b). */
  cg_emit(c, "ld.param.u32 %%minlen, [counts];");
  cg_emit(c, "mov.u32 %%gidx, %%minlen;"); /* %gidx keeps the count for the tail */
  for (uint32_t b = 0; b < nb; b++)
    if (c->ew_flags[b] & EW_BOUND) cg_emit(c, "min.u32 %%minlen, %%minlen, %s;", cg_len(c, b));
  const char *cta = cg_t32(c);
  cg_emit(c, "mov.u32 %s, %%ctaid.x;", cta);
  cg_emit(c, "mul.wide.u32 %%ebase, %s, %u;", cta, wg * CG_EPT);
  /* The vector path takes a thread whose first quad lies below every
   * bound (minlen) and whose every later quad lies either below minlen
   * too, or wholly at or past the element count: such a quad has no
   * element to run, so its loads and stores are predicated off (a
   * dispatch smaller than a block's span stays vectorised).  Any other
   * thread runs the scalar tail. */
  char tid4[16]; /* held across the whole body: keep a copy, the ring moves on */
  snprintf(tid4, sizeof tid4, "%s", cg_t32(c));
  cg_emit(c, "shl.b32 %s, %%ltid, 2;", tid4);
  char lim[16], cnt[16];
  snprintf(lim, sizeof lim, "%s", cg_t64(c));
  snprintf(cnt, sizeof cnt, "%s", cg_t64(c));
  cg_emit(c, "cvt.u64.u32 %s, %%minlen;", lim);
  cg_emit(c, "cvt.u64.u32 %s, %%gidx;", cnt);
  char quad_base[CG_QUADS][16], guard[CG_QUADS][16];
  for (uint32_t q = 0; q < CG_QUADS; q++) {
    const char *e64 = cg_t64(c), *e = cg_t32(c);
    cg_emit(c, "cvt.u64.u32 %s, %s;", e64, tid4);
    cg_emit(c, "add.s64 %s, %s, %%ebase;", e64, e64);
    if (q) cg_emit(c, "add.s64 %s, %s, %u;", e64, e64, q * wg * 4u);
    const char *end = cg_t64(c), *in = cg_tp(c);
    cg_emit(c, "add.s64 %s, %s, 4;", end, e64);
    cg_emit(c, "setp.le.u64 %s, %s, %s;", in, end, lim);
    guard[q][0] = 0;
    if (q) {
      snprintf(guard[q], sizeof guard[q], "@%s ", in);
      const char *past = cg_tp(c), *ok = cg_tp(c);
      cg_emit(c, "setp.ge.u64 %s, %s, %s;", past, e64, cnt);
      cg_emit(c, "or.pred %s, %s, %s;", ok, in, past);
      cg_emit(c, "@!%s bra $EWTAIL;", ok);
    } else {
      cg_emit(c, "@!%s bra $EWTAIL;", in);
    }
    cg_emit(c, "cvt.u32.u64 %s, %s;", e, e64);
    snprintf(quad_base[q], sizeof quad_base[q], "%s", e);
  }
  ew_preload(c, quad_base, guard);
  c->mode = CG_MODE_VEC;
  c->gid_reg = c->gid_name;
  for (uint32_t e = 0; e < CG_EPT && !c->st; e++) {
    c->copy = e;
    snprintf(c->gid_name, sizeof c->gid_name, "%%t%u", c->nt32++);
    cg_emit(c, "add.u32 %s, %s, %u;", c->gid_name, quad_base[e / 4], e % 4);
    c->vpred = CG_NONE;
    c->pred_depth = 0;
    cg_lower_range(c, 0, c->n);
  }
  ew_store(c, quad_base, guard);
  cg_emit(c, "exit;");
  ew_tail(c, tid4);
}
