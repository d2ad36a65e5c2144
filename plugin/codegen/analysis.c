/* analysis.c -- static facts about values that let the lowering drop work: u32 ranges, index alignment, loads whose flush an ftz use makes redundant, vector groups of workgroup loads. */
#include <stdlib.h>
#include <string.h>

#include "internal.h"

#define AL_CAP 8u /* alignments are kept as log2, capped (vectors need 2) */

static uint32_t ctz32(uint32_t x) {
  uint32_t n = 0;
  if (!x) return AL_CAP;
  while (!(x & 1u) && n < AL_CAP) {
    x >>= 1;
    n++;
  }
  return n;
}

static uint32_t cap(uint32_t a) { return a > AL_CAP ? AL_CAP : a; }

static int is_u32_const(const vyre_program *p, uint32_t v, uint32_t *k) {
  const vyre_inst *in = &p->insts[v];
  if (in->op != VYRE_OP_CONST || in->type != VYRE_T_U32) return 0;
  *k = in->a;
  return 1;
}

/* The largest u32 a value can hold, UINT32_MAX when nothing better is
 * known (which proves nothing: no count reaches 2^32).  Computed in
 * program order; every operand is defined before its use. */
static uint32_t range_of(cg_ctx *c, uint32_t i, const uint32_t *slot_hi) {
  const vyre_program *p = c->p;
  const vyre_inst *in = &p->insts[i];
  const uint32_t *hi = c->hi;
  uint64_t r = UINT32_MAX, k;
  uint32_t kc;
  switch (in->op) {
  case VYRE_OP_CONST: return in->type == VYRE_T_U32 ? in->a : UINT32_MAX;
  case VYRE_OP_LOCAL_ID: return c->wg[in->mod] - 1u;
  case VYRE_OP_SUBGROUP_LANE: return 31u;
  case VYRE_OP_SUBGROUP_SIZE: return 32u;
  case VYRE_OP_BUF_LEN: {
    uint32_t n = p->buffers[in->a].decl.count;
    return n ? n : UINT32_MAX;
  }
  case VYRE_OP_LOCAL_GET: return slot_hi[in->a];
  case VYRE_OP_ADD: r = (uint64_t)hi[in->a] + hi[in->b]; break;
  case VYRE_OP_MUL: r = (uint64_t)hi[in->a] * hi[in->b]; break;
  case VYRE_OP_SHL:
    if (!is_u32_const(p, in->b, &kc)) return UINT32_MAX;
    r = (uint64_t)hi[in->a] << (kc & 31u);
    break;
  case VYRE_OP_SHR:
    r = hi[in->a];
    if (is_u32_const(p, in->b, &kc)) r >>= kc & 31u;
    break;
  case VYRE_OP_AND: r = hi[in->a] < hi[in->b] ? hi[in->a] : hi[in->b]; break;
  case VYRE_OP_OR:
  case VYRE_OP_XOR: {
    k = hi[in->a] > hi[in->b] ? hi[in->a] : hi[in->b];
    for (r = 1; r <= k; r <<= 1) {
    }
    r -= 1; /* all bits up to the highest either may have */
    break;
  }
  case VYRE_OP_MIN: r = hi[in->a] < hi[in->b] ? hi[in->a] : hi[in->b]; break;
  case VYRE_OP_MAX: r = hi[in->a] > hi[in->b] ? hi[in->a] : hi[in->b]; break;
  case VYRE_OP_DIV:
    /* x / 0 is MAX: only a non-zero constant divisor bounds it. */
    if (!is_u32_const(p, in->b, &kc) || !kc) return UINT32_MAX;
    r = hi[in->a] / kc;
    break;
  case VYRE_OP_MOD: /* x % 0 = 0 and x % y <= x */
    r = hi[in->a];
    if (is_u32_const(p, in->b, &kc) && kc && kc - 1u < r) r = kc - 1u;
    break;
  case VYRE_OP_SELECT: r = hi[in->b] > hi[in->c] ? hi[in->b] : hi[in->c]; break;
  case VYRE_OP_CAST:
    if (p->value_type[in->a] == VYRE_T_BOOL) return 1u;
    if (p->value_type[in->a] == VYRE_T_U32) return hi[in->a];
    return UINT32_MAX;
  default: return UINT32_MAX;
  }
  return r > UINT32_MAX ? UINT32_MAX : (uint32_t)r;
}

/* log2 of a power of two that divides the value (u32 arithmetic wraps
 * modulo 2^32, which every such power divides). */
static uint32_t align_of(cg_ctx *c, uint32_t i) {
  const vyre_program *p = c->p;
  const vyre_inst *in = &p->insts[i];
  const uint8_t *al = c->al;
  uint32_t kc;
  switch (in->op) {
  case VYRE_OP_CONST: return in->type == VYRE_T_U32 ? ctz32(in->a) : 0;
  case VYRE_OP_MUL: return cap((uint32_t)al[in->a] + al[in->b]);
  case VYRE_OP_SHL:
    if (!is_u32_const(p, in->b, &kc)) return 0;
    return cap(al[in->a] + (kc & 31u));
  case VYRE_OP_ADD:
  case VYRE_OP_SUB:
  case VYRE_OP_OR:
  case VYRE_OP_XOR:
  case VYRE_OP_SELECT: {
    uint32_t x = in->op == VYRE_OP_SELECT ? in->b : in->a, y = in->op == VYRE_OP_SELECT ? in->c : in->b;
    return al[x] < al[y] ? al[x] : al[y];
  }
  case VYRE_OP_AND: return al[in->a] > al[in->b] ? al[in->a] : al[in->b];
  default: return 0;
  }
}

#define VG_CONST_BASE UINT32_MAX /* the base of a constant index: 0 */

/* index = base + off (u32 constants folded through up to 4 adds; a
 * constant index has base VG_CONST_BASE). */
static void split_index(const vyre_program *p, uint32_t v, uint32_t *base, uint32_t *off) {
  uint32_t o = 0, k;
  if (is_u32_const(p, v, &k)) {
    *base = VG_CONST_BASE;
    *off = k;
    return;
  }
  for (int depth = 0; depth < 4; depth++) {
    const vyre_inst *in = &p->insts[v];
    if (in->op == VYRE_OP_ADD && in->type == VYRE_T_U32) {
      if (is_u32_const(p, in->b, &k)) {
        o += k;
        v = in->a;
        continue;
      }
      if (is_u32_const(p, in->a, &k)) {
        o += k;
        v = in->b;
        continue;
      }
    }
    break;
  }
  *base = v;
  *off = o;
}

/* Statements that end a run of loads that may be merged: control flow,
 * barriers, and anything that writes memory the run could read. */
static int ends_run(const cg_ctx *c, uint32_t j, uint32_t buffer) {
  const vyre_program *p = c->p;
  const vyre_inst *in = &p->insts[j];
  switch (in->op) {
  case VYRE_OP_LET:
  case VYRE_OP_ASSIGN: return 0;
  case VYRE_OP_STORE: return in->a == buffer;
  default: break;
  }
  if (p->value_type[j] != VYRE_T_VOID) {
    /* Value ops: only atomics on the same buffer write memory. */
    uint8_t oc = c->op_class[in->op];
    if (oc == VYRE_OC_ATOMIC || oc == VYRE_OC_ATOMIC_CAS) return in->a == buffer;
    return 0;
  }
  return 1;
}

#define VG_SCAN 256u /* how far past a leader its members are looked for */

/* Group loads of one buffer of 4-byte elements at base + k, base + k + 1,
 * ... (k a multiple of the group size, base provably a multiple of it) in
 * one straight run: one ld.shared.v4 / ld.global.v4 (or .v2) for them.
 * Global buffers are 16-byte aligned (docs/kernel-abi.md), workgroup
 * buffers when their offset is. */
static void find_vector_groups(cg_ctx *c) {
  const vyre_program *p = c->p;
  for (uint32_t i = 0; i < c->n; i++) {
    const vyre_inst *in = &p->insts[i];
    if (in->op != VYRE_OP_LOAD || c->vnext[i] != CG_NONE || c->vsize[i]) continue;
    const vyre_buffer_info *bi = &p->buffers[in->a];
    if (bi->elem_size != 4 || (bi->role == VYRE_ROLE_SHARED && (bi->shared_offset & 15u)))
      continue;
    uint32_t et = bi->decl.elem_type;
    if (et != VYRE_T_F32 && et != VYRE_T_U32 && et != VYRE_T_I32) continue;
    uint32_t base, off;
    split_index(p, in->b, &base, &off);
    /* Only an even first index can lead a group: most loads stop here. */
    if (off % 2u || (base != VG_CONST_BASE && c->al[base] < 1)) continue;
    uint32_t member[4] = {i, CG_NONE, CG_NONE, CG_NONE};
    uint32_t stop = c->n - i > VG_SCAN ? i + VG_SCAN : c->n;
    for (uint32_t j = i + 1; j < stop; j++) {
      const vyre_inst *jn = &p->insts[j];
      if (ends_run(c, j, in->a)) break;
      if (jn->op != VYRE_OP_LOAD || jn->a != in->a || c->vsize[j] || c->vnext[j] != CG_NONE)
        continue;
      uint32_t jb, jo;
      split_index(p, jn->b, &jb, &jo);
      if (jb != base || jo - off < 1u || jo - off > 3u) continue;
      if (member[jo - off] == CG_NONE) member[jo - off] = j;
    }
    uint32_t size = 0, al = base == VG_CONST_BASE ? AL_CAP : c->al[base];
    if (member[1] != CG_NONE && member[2] != CG_NONE && member[3] != CG_NONE && off % 4u == 0 &&
        al >= 2)
      size = 4;
    else if (member[1] != CG_NONE && off % 2u == 0 && al >= 1)
      size = 2;
    if (!size) continue;
    c->vsize[i] = (uint8_t)size;
    for (uint32_t k = 0; k + 1 < size; k++) c->vnext[member[k]] = member[k + 1];
  }
}

vyre_status cg_analyse(cg_ctx *c) {
  const vyre_program *p = c->p;
  uint32_t n = c->n, nl = p->local_count ? p->local_count : 1;
  c->hi = malloc((size_t)(n ? n : 1) * sizeof *c->hi);
  c->al = calloc(n ? n : 1, 1);
  c->noflush = calloc(n ? n : 1, 1);
  c->vsize = calloc(n ? n : 1, 1);
  c->vskip = calloc(n ? n : 1, 1);
  c->vnext = malloc((size_t)(n ? n : 1) * sizeof *c->vnext);
  uint32_t *slot_hi = malloc((size_t)nl * sizeof *slot_hi);
  if (!c->hi || !c->al || !c->noflush || !c->vsize || !c->vskip || !c->vnext || !slot_hi) {
    free(slot_hi);
    return VYRE_OUT_OF_MEMORY;
  }
  /* A u32 loop counter is below every constant end of the loops that use
   * its slot; other locals are unknown. */
  for (uint32_t s = 0; s < nl; s++) slot_hi[s] = UINT32_MAX;
  uint8_t *seen = calloc(nl, 1);
  if (!seen) {
    free(slot_hi);
    return VYRE_OUT_OF_MEMORY;
  }
  for (uint32_t i = 0; i < n; i++) {
    const vyre_inst *in = &p->insts[i];
    if (in->op != VYRE_OP_LOOP || p->local_types[in->a] != VYRE_T_U32) continue;
    uint32_t end, lim = UINT32_MAX;
    if (is_u32_const(p, in->c, &end)) lim = end ? end - 1u : 0u;
    if (!seen[in->a] || slot_hi[in->a] < lim) slot_hi[in->a] = lim;
    seen[in->a] = 1;
  }
  free(seen);
  for (uint32_t i = 0; i < n; i++) {
    c->vnext[i] = CG_NONE;
    c->hi[i] = UINT32_MAX;
    if (p->value_type[i] == VYRE_T_U32 || p->value_type[i] == VYRE_T_BOOL) {
      c->hi[i] = range_of(c, i, slot_hi);
      c->al[i] = (uint8_t)align_of(c, i);
    }
  }
  free(slot_hi);

  /* An f32 load whose every use is an operand of an f32 add, sub, mul or
   * fma needs no subnormal flush: those are .ftz, which flushes subnormal
   * inputs to the zero of their sign, just as the flush would. */
  const vyre_op_class_info *classes[VYRE_OC_COUNT_];
  for (uint32_t k = 0; k < VYRE_OC_COUNT_; k++) classes[k] = vyre_op_class_lookup(k);
  for (uint32_t i = 0; i < n; i++)
    if (p->insts[i].op == VYRE_OP_LOAD && p->value_type[i] == VYRE_T_F32) c->noflush[i] = 1;
  for (uint32_t i = 0; i < n; i++) {
    const vyre_inst *in = &p->insts[i];
    const vyre_op_class_info *ci = classes[c->op_class[in->op]];
    if (!ci) continue;
    int ftz_use = (in->op == VYRE_OP_ADD || in->op == VYRE_OP_SUB || in->op == VYRE_OP_MUL ||
                   in->op == VYRE_OP_FMA) && p->value_type[i] == VYRE_T_F32;
    const uint32_t f[4] = {in->a, in->b, in->c, in->d};
    for (int k = 0; k < 4; k++)
      if (ci->operand[k] == VYRE_OPND_VALUE && f[k] < n && !ftz_use) c->noflush[f[k]] = 0;
  }
  find_vector_groups(c);
  return VYRE_OK;
}

void cg_analysis_free(cg_ctx *c) {
  free(c->hi);
  free(c->al);
  free(c->noflush);
  free(c->vsize);
  free(c->vskip);
  free(c->vnext);
}
