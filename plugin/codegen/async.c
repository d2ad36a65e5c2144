/* async.c -- global -> workgroup copies as cp.async on sm_80+: adjacent element copies grouped into 4/8/16-byte copies, and the waits that keep the program's order (docs/codegen.md "Asynchronous staging"). */
#include <stdlib.h>
#include <string.h>

#include "internal.h"

/*
 * A copy is `store W i %x` where %x = `load G j` is used by nothing else,
 * W is a workgroup buffer, G a read-only storage buffer of the same
 * element type, and that type's load-store round trip keeps the bits (up
 * to NaN payloads, which workgroup memory never shows: mem.c cg_store):
 * i8 u8 i16 u16 i32 u32 f16, and bf16, whose load flushes subnormals to
 * zero -- every later read of W flushes them instead (a load does;
 * mma_load from W does, cg_async_flush_bf16).  As G is never written and
 * no storage write lies between the load and the store, the load may move
 * to the store.  Copies that follow each other in program
 * order, with no statement between them, at W index x + k and G index
 * y + k for consecutive constants k, form a group of up to 16 bytes,
 * written as one cp.async.
 *
 * Waits: every cp.async is a commit group; cp.async.wait_group N (N the
 * groups issued after the one needed) completes a copy and all older
 * ones.  A thread waits for its copies into a buffer before it touches
 * that buffer otherwise, before a copy that may overlap one in flight
 * (same index root and overlapping constants, else any), and before a
 * workgroup barrier for the copies into every buffer the code after the
 * barrier may touch up to the next barrier at its depth (following a
 * loop into its next iteration and out of it): other invocations see the
 * data only after that barrier.  Copies stay in flight across a loop's
 * back edge when the body ends with the buffers in flight it began with
 * (else it waits for all, at the end and at the exit); every other block
 * boundary (if, else, end, return, trap, an unrolled iteration) waits
 * for all.  So multi-buffered programs (one buffer per stage) keep
 * copies in flight over several stages.
 */

/* Per instruction (c->cpa): */
enum { CPA_NONE = 0, CPA_LEAD = 1, CPA_MEMBER = 2, CPA_LOAD = 3 };

static int copy_type(uint32_t t) {
  return t == VYRE_T_I8 || t == VYRE_T_U8 || t == VYRE_T_I16 || t == VYRE_T_U16 ||
         t == VYRE_T_I32 || t == VYRE_T_U32 || t == VYRE_T_F16 || t == VYRE_T_BF16;
}

/* v as root + k for u32 `add` chains with constant operands. */
static uint32_t peel(const vyre_program *p, uint32_t v, uint32_t *k) {
  *k = 0;
  for (int depth = 0; depth < 8; depth++) {
    const vyre_inst *in = &p->insts[v];
    if (in->op != VYRE_OP_ADD || in->type != VYRE_T_U32) break;
    const vyre_inst *a = &p->insts[in->a], *b = &p->insts[in->b];
    if (b->op == VYRE_OP_CONST && a->op != VYRE_OP_CONST) {
      *k += b->a;
      v = in->a;
    } else if (a->op == VYRE_OP_CONST && b->op != VYRE_OP_CONST) {
      *k += a->a;
      v = in->b;
    } else {
      break;
    }
  }
  return v;
}

/* The load feeding copy store s, or CG_NONE when s is no copy. */
static uint32_t copy_source(const cg_ctx *c, uint32_t s, const uint32_t *uses) {
  const vyre_program *p = c->p;
  const vyre_inst *st = &p->insts[s];
  if (st->op != VYRE_OP_STORE || p->buffers[st->a].role != VYRE_ROLE_SHARED) return CG_NONE;
  const vyre_inst *ld = &p->insts[st->c];
  if (ld->op != VYRE_OP_LOAD || uses[st->c] != 1) return CG_NONE;
  const vyre_buffer_info *g = &p->buffers[ld->a], *w = &p->buffers[st->a];
  if (g->role == VYRE_ROLE_SHARED || g->decl.access != VYRE_ACCESS_READ_ONLY) return CG_NONE;
  if (g->decl.elem_type != w->decl.elem_type || !copy_type(w->decl.elem_type)) return CG_NONE;
  /* The read moves from the load to the store: no write to storage
   * memory between them (another binding may share G's memory). */
  for (uint32_t i = st->c + 1; i < s; i++) {
    const vyre_inst *in = &p->insts[i];
    uint32_t cls = c->op_class[in->op];
    if ((cls == VYRE_OC_STORE || cls == VYRE_OC_ATOMIC || cls == VYRE_OC_ATOMIC_CAS ||
         cls == VYRE_OC_MMA_STORE) &&
        p->buffers[in->a].role != VYRE_ROLE_SHARED)
      return CG_NONE;
  }
  return st->c;
}

/* Value uses of every instruction. */
static uint32_t *count_uses(const vyre_program *p) {
  uint32_t *uses = calloc(p->inst_count ? p->inst_count : 1, sizeof *uses);
  if (!uses) return NULL;
  for (uint32_t i = 0; i < p->inst_count; i++) {
    const vyre_inst *in = &p->insts[i];
    const vyre_op_info *info = vyre_op_lookup(in->op);
    const vyre_op_class_info *ci = info ? vyre_op_class_lookup(info->op_class) : NULL;
    if (!ci) continue;
    const uint32_t f[4] = {in->a, in->b, in->c, in->d};
    for (int k = 0; k < 4; k++)
      if (ci->operand[k] == VYRE_OPND_VALUE && f[k] < p->inst_count) uses[f[k]]++;
  }
  return uses;
}

/* Close the group that starts at copy store `lead` with n members. */
static void close_group(cg_ctx *c, uint32_t lead, uint32_t n) {
  if (lead == CG_NONE) return;
  c->cpa_n[lead] = n;
}

vyre_status cg_async_analyse(cg_ctx *c) {
  const vyre_program *p = c->p;
  if (c->sm < 80) return VYRE_OK;
  uint32_t *uses = count_uses(p);
  c->cpa = calloc(c->n ? c->n : 1, 1);
  c->cpa_n = calloc(c->n ? c->n : 1, sizeof *c->cpa_n);
  c->async_bf16 = calloc(p->buffer_count ? p->buffer_count : 1, 1);
  c->loop_seq = calloc(c->n ? c->n : 1, sizeof *c->loop_seq);
  c->loop_nseq = calloc(c->n ? c->n : 1, sizeof *c->loop_nseq);
  if (!uses || !c->cpa || !c->cpa_n || !c->async_bf16 || !c->loop_seq || !c->loop_nseq) {
    free(uses);
    return VYRE_OUT_OF_MEMORY;
  }
  uint32_t lead = CG_NONE, n = 0, wroot = 0, wk = 0, groot = 0, gk = 0, max = 0;
  for (uint32_t i = 0; i < c->n; i++) {
    const vyre_inst *in = &p->insts[i];
    if (p->value_type[i] != VYRE_T_VOID) continue; /* values never end a group */
    uint32_t ld = copy_source(c, i, uses);
    if (ld == CG_NONE) {
      close_group(c, lead, n);
      lead = CG_NONE;
      continue;
    }
    uint32_t ka, kb, ra = peel(p, in->b, &ka), rb = peel(p, p->insts[ld].b, &kb);
    uint32_t et = p->buffers[in->a].decl.elem_type;
    if (lead != CG_NONE && n < max && in->a == p->insts[lead].a &&
        p->insts[ld].a == p->insts[p->insts[lead].c].a && ra == wroot && ka == wk + n &&
        rb == groot && kb == gk + n) {
      c->cpa[i] = CPA_MEMBER;
      c->cpa[ld] = CPA_LOAD;
      n++;
      continue;
    }
    close_group(c, lead, n);
    lead = i;
    n = 1;
    wroot = ra, wk = ka, groot = rb, gk = kb;
    max = 16u / vyre_type_size(et);
    c->cpa[i] = CPA_LEAD;
    c->cpa[ld] = CPA_LOAD;
    if (et == VYRE_T_BF16) c->async_bf16[in->a] = 1;
  }
  close_group(c, lead, n);
  free(uses);
  return VYRE_OK;
}

void cg_async_free(cg_ctx *c) {
  for (uint32_t i = 0; c->loop_seq && i < c->n; i++) free(c->loop_seq[i]);
  free(c->loop_seq);
  free(c->loop_nseq);
  free(c->cpa);
  free(c->cpa_n);
  free(c->async_bf16);
  free(c->pend);
}

int cg_async_skip(const cg_ctx *c, uint32_t i) {
  return c->cpa && c->mode == CG_MODE_GENERAL &&
         (c->cpa[i] == CPA_LOAD || c->cpa[i] == CPA_MEMBER);
}

/* ------------------------------------------------------------------ */
/* Waits                                                                */
/* ------------------------------------------------------------------ */
/* Every cp.async is its own commit group, so entry e of c->pend (oldest
 * first) is complete once at most npend - 1 - e groups are pending. */
static void wait_through(cg_ctx *c, uint32_t e) {
  uint32_t newer = c->npend - 1u - e;
  cg_emit(c, "cp.async.wait_group %u;", newer);
  memmove(c->pend, c->pend + e + 1, newer * sizeof *c->pend);
  c->npend = newer;
}

void cg_async_wait(cg_ctx *c) {
  if (c->npend) wait_through(c, c->npend - 1u);
}

void cg_async_touch(cg_ctx *c, uint32_t b) {
  for (uint32_t k = c->npend; k-- > 0;)
    if (c->pend[k].buffer == b) {
      wait_through(c, k);
      return;
    }
}

/* Mark the buffers instructions [from, to) may touch, up to a barrier at
 * their own depth (1 when one ends the scan); at the end of an enclosing
 * loop, its next iteration up to barrier `bar` too.  -1: over budget. */
static int scan(cg_ctx *c, uint32_t from, uint32_t to, uint32_t bar, uint8_t *set,
                uint32_t *budget) {
  const vyre_program *p = c->p;
  uint32_t depth = 0;
  for (uint32_t j = from; j < to; j++) {
    if (!(*budget)--) return -1;
    const vyre_inst *in = &p->insts[j];
    switch (in->op) {
    case VYRE_OP_BARRIER:
      if (!depth) return 1;
      continue;
    case VYRE_OP_LOOP:
      if (!depth) {
        /* its body up to its first barrier, or after it (no trip) */
        if (scan(c, j + 1u, p->match[j], bar, set, budget) < 0) return -1;
        j = p->match[j];
        continue;
      }
      depth++;
      continue;
    case VYRE_OP_IF:
    case VYRE_OP_BLOCK: depth++; continue;
    case VYRE_OP_END:
      if (depth) {
        depth--;
      } else if (p->insts[p->match[j]].op == VYRE_OP_LOOP && p->match[j] + 1u < bar) {
        if (scan(c, p->match[j] + 1u, bar, bar, set, budget) < 0) return -1;
      }
      continue;
    default: break;
    }
    const vyre_op_class_info *ci = vyre_op_class_lookup(c->op_class[in->op]);
    const uint32_t f[4] = {in->a, in->b, in->c, in->d};
    for (int k = 0; ci && k < 4; k++)
      if (ci->operand[k] == VYRE_OPND_BUFFER && f[k] < p->buffer_count) set[f[k]] = 1;
  }
  return 0;
}

void cg_async_barrier(cg_ctx *c, uint32_t i) {
  if (!c->npend) return;
  uint32_t nb = c->p->buffer_count, budget = 1u << 16;
  uint8_t *set = calloc(nb ? nb : 1, 1);
  if (!set || c->p->insts[i].mod != VYRE_BARRIER_WORKGROUP ||
      scan(c, i + 1u, c->n, i, set, &budget) < 0) {
    free(set);
    cg_async_wait(c);
    return;
  }
  /* Copies into the buffers touched after the barrier (by any
   * invocation: another's copy lands only once its own wait ran) */
  for (uint32_t k = c->npend; k-- > 0;)
    if (set[c->pend[k].buffer]) {
      wait_through(c, k);
      break;
    }
  free(set);
}

/* Entries kept across a block boundary lose their addresses (roots are
 * values of one pass through the code). */
static void forget_addresses(cg_ctx *c) {
  for (uint32_t k = 0; k < c->npend; k++) c->pend[k].root = CG_NONE;
}

void cg_async_loop(cg_ctx *c, uint32_t i) {
  if (!c->loop_seq) return; /* no copies below sm_80 */
  forget_addresses(c);
  c->loop_seq[i] = NULL;
  c->loop_nseq[i] = c->npend;
  if (!c->npend) return;
  uint32_t *seq = malloc(c->npend * sizeof *seq);
  if (!seq) {
    cg_async_wait(c);
    c->loop_nseq[i] = 0;
    return;
  }
  for (uint32_t k = 0; k < c->npend; k++) seq[k] = c->pend[k].buffer;
  c->loop_seq[i] = seq;
}

int cg_async_loop_end(cg_ctx *c, uint32_t loop) {
  if (!c->loop_seq) return 0;
  /* The waits in the body assumed the copies in flight at the loop's
   * entry: the next iteration must start with the same (or none). */
  int same = c->npend == c->loop_nseq[loop];
  for (uint32_t k = 0; same && k < c->npend; k++) same = c->pend[k].buffer == c->loop_seq[loop][k];
  free(c->loop_seq[loop]);
  c->loop_seq[loop] = NULL;
  if (same) {
    forget_addresses(c);
    return 0;
  }
  cg_async_wait(c);
  return 1; /* the exit at the top still has the entry's copies: wait there too */
}

/* Record a copy of elements [k, k + n) past value `root` into buffer b,
 * after waiting for the newest one in flight it may overlap. */
static void add_pending(cg_ctx *c, uint32_t b, uint32_t root, uint32_t k, uint32_t n) {
  for (uint32_t j = c->npend; j-- > 0;) {
    cg_async_rec *r = &c->pend[j];
    if (r->buffer != b) continue;
    if (r->root == CG_NONE || r->root != root || !(k + n <= r->k || r->k + r->n <= k)) {
      wait_through(c, j);
      break;
    }
  }
  if (c->npend == c->cap_pend) {
    uint32_t cap = c->cap_pend ? 2 * c->cap_pend : 16;
    cg_async_rec *grown = cap <= 4096 ? realloc(c->pend, cap * sizeof *grown) : NULL;
    if (!grown) {
      cg_async_wait(c); /* a wait forgets every record */
    } else {
      c->pend = grown;
      c->cap_pend = cap;
    }
  }
  if (c->npend < c->cap_pend) {
    cg_async_rec rec = {b, root, k, n};
    c->pend[c->npend++] = rec;
  }
}

/* ------------------------------------------------------------------ */
/* The copy                                                             */
/* ------------------------------------------------------------------ */
/* Elements one by one (the group is not aligned): raw bits, 0 beyond the end. */
static void copy_elements(cg_ctx *c, uint32_t b, uint32_t g, const char *wi, const char *gj,
                          uint32_t n, uint32_t esize) {
  (void)b;
  const char *ty = esize == 1 ? "u8" : esize == 2 ? "u16" : "b32";
  const char *len = cg_t64(c), *j64 = cg_t64(c);
  cg_emit(c, "cvt.u64.u32 %s, %s;", len, cg_len(c, g));
  cg_emit(c, "cvt.u64.u32 %s, %s;", j64, gj);
  for (uint32_t k = 0; k < n; k++) {
    const char *jk = cg_t64(c), *q = cg_tp(c), *v = cg_t32(c), *ga = cg_t64(c), *sa = cg_t32(c);
    cg_emit(c, "add.u64 %s, %s, %u;", jk, j64, k);
    cg_emit(c, "setp.lt.u64 %s, %s, %s;", q, jk, len);
    cg_emit(c, "mad.lo.u64 %s, %s, %u, %s;", ga, jk, esize, cg_name(c, "%bp", g));
    cg_emit(c, "mov.b32 %s, 0;", v);
    cg_emit(c, "@%s ld.global.%s %s, [%s];", q, ty, v, ga);
    cg_emit(c, "add.u32 %s, %s, %u;", sa, wi, k * esize);
    cg_emit(c, "st.shared.%s [%s], %s;", ty, sa, v);
  }
}

int cg_async_store(cg_ctx *c, uint32_t s) {
  const vyre_program *p = c->p;
  if (!c->cpa || c->mode != CG_MODE_GENERAL || c->cpa[s] != CPA_LEAD) return 0;
  const vyre_inst *st = &p->insts[s];
  const vyre_inst *ld = &p->insts[st->c];
  uint32_t b = st->a, g = ld->a, n = c->cpa_n[s];
  uint32_t esize = vyre_type_size(p->buffers[b].decl.elem_type), bytes = n * esize;
  uint32_t k, root = peel(p, st->b, &k);
  /* the addresses: workgroup (u32) and global (u64) */
  const char *wa = cg_t32(c), *ga = cg_t64(c), *j = cg_val(c, ld->b);
  cg_emit(c, "mad.lo.u32 %s, %s, %u, %%smbase;", wa, cg_val(c, st->b), esize);
  if (p->buffers[b].shared_offset) cg_emit(c, "add.u32 %s, %s, %u;", wa, wa, p->buffers[b].shared_offset);
  cg_emit(c, "mad.wide.u32 %s, %s, %u, %s;", ga, j, esize, cg_name(c, "%bp", g));
  uint32_t size = bytes >= 16 ? 16 : bytes >= 8 ? 8 : bytes >= 4 ? 4 : 0;
  if (size != bytes) {
    /* 1, 2, 3, 5.. elements' bytes: no cp.async size; plain copies. */
    cg_async_touch(c, b); /* plain stores after the copies in flight */
    copy_elements(c, b, g, wa, j, n, esize);
    return 1;
  }
  add_pending(c, b, root, k, n);
  /* bytes that exist: min(count - j, n) elements, 0 at or past the end */
  uint32_t count = p->buffers[g].decl.count;
  const char *src = NULL;
  if (!(count && (uint64_t)cg_hi_at(c, ld->b) + n <= count)) {
    const char *q = cg_tp(c), *r = cg_t32(c);
    cg_emit(c, "setp.lt.u32 %s, %s, %s;", q, j, cg_len(c, g));
    cg_emit(c, "sub.u32 %s, %s, %s;", r, cg_len(c, g), j);
    cg_emit(c, "min.u32 %s, %s, %u;", r, r, n);
    cg_emit(c, "selp.b32 %s, %s, 0, %s;", r, r, q);
    if (esize > 1) cg_emit(c, "mul.lo.u32 %s, %s, %u;", r, r, esize);
    src = r;
  }
  /* both addresses on `size` bytes: else element copies */
  uint32_t l = cg_new_label(c);
  const char *lo = cg_t32(c), *al = cg_tp(c);
  cg_emit(c, "cvt.u32.u64 %s, %s;", lo, ga);
  cg_emit(c, "or.b32 %s, %s, %s;", lo, lo, wa);
  cg_emit(c, "and.b32 %s, %s, %u;", lo, lo, size - 1u);
  cg_emit(c, "setp.ne.u32 %s, %s, 0;", al, lo);
  cg_emit(c, "@%s bra $CA%u;", al, l);
  if (src)
    cg_emit(c, "cp.async.%s.shared.global [%s], [%s], %u, %s;", size == 16 ? "cg" : "ca", wa, ga,
            size, src);
  else
    cg_emit(c, "cp.async.%s.shared.global [%s], [%s], %u;", size == 16 ? "cg" : "ca", wa, ga, size);
  cg_emit(c, "bra $CB%u;", l);
  cg_line(c, "$CA%u:", l);
  copy_elements(c, b, g, wa, j, n, esize);
  cg_line(c, "$CB%u:", l);
  cg_emit(c, "cp.async.commit_group;"); /* on both paths: group counts stay per copy */
  return 1;
}

/* bf16 subnormals in register r (two bf16) to signed zero: the flush a
 * load would have made.  Each half widened to f32, multiplied by 1 with
 * .ftz (which flushes exactly the subnormals, keeps signs, infinities and
 * NaN as NaN) and packed back (exact: the values are bf16): two of the
 * five instructions go to the FMA pipe, not the integer one. */
void cg_async_flush_bf16(cg_ctx *c, const char *r) {
  const char *lo = cg_t32(c), *hi = cg_t32(c);
  cg_emit(c, "prmt.b32 %s, %s, 0, 0x1044;", lo, r);
  cg_emit(c, "and.b32 %s, %s, 0xffff0000;", hi, r);
  cg_emit(c, "mul.rn.ftz.f32 %s, %s, 0f3F800000;", lo, lo);
  cg_emit(c, "mul.rn.ftz.f32 %s, %s, 0f3F800000;", hi, hi);
  cg_emit(c, "cvt.rn.bf16x2.f32 %s, %s, %s;", r, hi, lo);
}
