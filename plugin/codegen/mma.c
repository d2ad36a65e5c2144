/* mma.c -- the MMA ops on sm_80+: matrix locals as registers, mma.sync, ldmatrix and vector fast paths beside a bounds-checked per-element path (docs/codegen.md "Tensor cores"). */
#include <string.h>

#include "internal.h"

/*
 * Fragments (PTX ISA "Matrix fragments for mma.m16n8k16" and
 * "mma.m16n8k32"): lane l has g = l >> 2 and t = l & 3.  A matrix local
 * is CG_MMA_REGS .b32 registers %mx<slot * 8 + j>:
 *   A 16-bit (16x16): reg j holds row g + 8(j&1), k 2t + 8(j>>1) + {0,1}
 *   B 16-bit (16x16): reg j holds k 2t + 8(j&1) + {0,1}, n g + 8(j>>1)
 *   A 8-bit (16x32):  reg j holds row g + 8(j&1), k 4t + 16(j>>1) + {0..3}
 *   B 8-bit (32x16):  reg j holds k 4t + 16(j&1) + {0..3}, n g + 8(j>>1)
 *   accumulator:      reg j holds row g + 8((j&3)>>1), n 2t + (j&1) + 8(j>>2)
 * so B's regs 0-1 and the accumulator's 0-3 are the n = 0..7 half of one
 * m16n8 instruction, regs 2-3 and 4-7 the n = 8..15 half.
 */

/* What a matrix local is. */
typedef struct mat {
  int use;          /* VYRE_MAT_A, _B, _ACC */
  uint32_t comp;    /* component type */
  uint32_t esize;   /* bytes per element */
  uint32_t rows, cols;
  uint32_t nregs;   /* 4 (A, B) or 8 (accumulator) */
  uint32_t per_reg; /* elements per register */
} mat;

static mat mat_of(const cg_ctx *c, uint32_t slot) {
  mat m;
  uint32_t t = c->p->local_types[slot];
  m.use = vyre_type_matrix_use(t);
  m.comp = vyre_type_matrix_component(t);
  m.esize = vyre_type_size(m.comp);
  vyre_type_matrix_dims(t, &m.rows, &m.cols);
  m.nregs = m.use == VYRE_MAT_ACC ? 8u : 4u;
  m.per_reg = m.use == VYRE_MAT_ACC ? 1u : 4u / m.esize;
  return m;
}

static const char *mreg(cg_ctx *c, uint32_t slot, uint32_t j) {
  return cg_name(c, "%mx", slot * CG_MMA_REGS + j);
}

/* Element e of register j: its tile row and column as a lane part (the
 * name of a per-lane register: %mg = g, %mt2 = 2t, %mt4 = 4t) plus a
 * constant. */
typedef struct epos {
  const char *rl, *cl;
  uint32_t rk, ck;
} epos;

static epos elem_pos(const mat *m, uint32_t j, uint32_t e) {
  epos p;
  if (m->use == VYRE_MAT_ACC) {
    p.rl = "%mg";
    p.rk = 8u * ((j & 3u) >> 1);
    p.cl = "%mt2";
    p.ck = (j & 1u) + 8u * (j >> 2);
  } else if (m->use == VYRE_MAT_A) {
    p.rl = "%mg";
    p.rk = 8u * (j & 1u);
    p.cl = m->esize == 2 ? "%mt2" : "%mt4";
    p.ck = (m->esize == 2 ? 8u : 16u) * (j >> 1) + e;
  } else {
    p.rl = m->esize == 2 ? "%mt2" : "%mt4";
    p.rk = (m->esize == 2 ? 8u : 16u) * (j & 1u) + e;
    p.cl = "%mg";
    p.ck = 8u * (j >> 1);
  }
  return p;
}

/* ------------------------------------------------------------------ */
/* Subgroup-uniform values                                             */
/* ------------------------------------------------------------------ */
/* 1 when value v is the same in every lane of a subgroup: workgroup-
 * uniform values, lid.y and lid.z (and lid.x >> k for k >= 5, lid.x / a
 * multiple of 32) when a subgroup lies in one x row, and arithmetic on
 * such values.  Then index and stride need no broadcast from lane 0. */
static int lid_rows(const cg_ctx *c) { return c->wg[0] % 32u == 0; }

static void mark_subgroup_uniform(cg_ctx *c) {
  const vyre_program *p = c->p;
  for (uint32_t i = 0; i < c->n; i++) {
    const vyre_inst *in = &p->insts[i];
    uint8_t u = p->uniform ? p->uniform[i] : 0;
    if (p->value_type[i] == VYRE_T_VOID) continue;
    if (!u && in->op == VYRE_OP_LOCAL_ID) u = in->mod > 0 && lid_rows(c);
    if (!u && (in->op == VYRE_OP_SHR || in->op == VYRE_OP_DIV) && lid_rows(c) &&
        p->insts[in->a].op == VYRE_OP_LOCAL_ID && p->insts[in->a].mod == 0) {
      uint32_t k;
      if (cg_const_u32(c, in->b, &k))
        u = in->op == VYRE_OP_SHR ? (k >= 5u && k < 32u) : (k && k % 32u == 0);
    }
    if (!u) {
      uint32_t cls = c->op_class[in->op];
      if (cls == VYRE_OC_BINARY || cls == VYRE_OC_COMPARE) u = c->su[in->a] && c->su[in->b];
      else if (cls == VYRE_OC_UNARY || cls == VYRE_OC_CAST) u = c->su[in->a];
      else if (cls == VYRE_OC_SELECT || cls == VYRE_OC_FMA)
        u = c->su[in->a] && c->su[in->b] && c->su[in->c];
    }
    c->su[i] = u;
  }
}

/* Value v as lane 0 has it. */
static const char *lane0(cg_ctx *c, uint32_t v) {
  if (c->su[v]) return cg_val(c, v);
  const char *t = cg_t32(c);
  cg_emit(c, "shfl.sync.idx.b32 %s, %s, 0, 31, -1;", t, cg_val(c, v));
  return t;
}

void cg_mma_prologue(cg_ctx *c) {
  if (!(c->p->features & VYRE_FEAT_MMA)) return;
  mark_subgroup_uniform(c);
  cg_emit(c, "mov.u32 %%mlane, %%laneid;");
  cg_emit(c, "shr.u32 %%mg, %%mlane, 2;");
  cg_emit(c, "and.b32 %%mt, %%mlane, 3;");
  cg_emit(c, "shl.b32 %%mt2, %%mt, 1;");
  cg_emit(c, "shl.b32 %%mt4, %%mt, 2;");
  cg_emit(c, "and.b32 %%mr, %%mlane, 7;");
  cg_emit(c, "bfe.u32 %%mq0, %%mlane, 3, 1;");
  cg_emit(c, "bfe.u32 %%mq1, %%mlane, 4, 1;");
  /* Matrix locals start as zeros. */
  for (uint32_t s = 0; s < c->p->local_count; s++)
    if (vyre_type_matrix_use(c->p->local_types[s]))
      for (uint32_t j = 0; j < CG_MMA_REGS; j++) cg_emit(c, "mov.b32 %s, 0;", mreg(c, s, j));
}

/* ------------------------------------------------------------------ */
/* Checks made before lowering                                          */
/* ------------------------------------------------------------------ */
vyre_status cg_mma_check(const vyre_program *p, const cg_options *o, vyre_error *err) {
  if (!(p->features & VYRE_FEAT_MMA)) return VYRE_OK;
  if (o->sm_major < 8)
    return vyre_error_set(err, VYRE_UNSUPPORTED, 0,
                          "codegen: the program uses MMA ops (tensor cores), which need "
                          "mma.sync on compute capability 8.0 or later; the target is %u.%u. "
                          "Fix: run it on an sm_80 or later GPU (A100, H100, ...) or on the "
                          "reference backend",
                          o->sm_major, o->sm_minor);
  for (uint32_t i = 0; i < p->inst_count; i++) {
    const vyre_inst *in = &p->insts[i];
    if (in->op == VYRE_OP_MMA && (in->type == VYRE_T_F16 || in->type == VYRE_T_BF16) &&
        o->ulp_budget == 0)
      return vyre_error_set(err, VYRE_UNSUPPORTED, 0,
                            "codegen: float mma (instruction %u, %s) is unsupported under "
                            "strict (ulp budget 0): tensor cores do not round each addition. "
                            "Fix: pass a ulp budget (any non-zero value accepts the MMA error "
                            "bound)",
                            i, vyre_type_name(in->type));
    if ((in->op == VYRE_OP_MMA_LOAD || in->op == VYRE_OP_MMA_STORE) &&
        (o->workgroup[0] * o->workgroup[1] * o->workgroup[2]) % 32u)
      return vyre_error_set(err, VYRE_INVALID_ARGUMENT, 0,
                            "codegen: workgroup %u x %u x %u is not a whole number of "
                            "subgroups, which the MMA ops need. Fix: use a workgroup whose "
                            "invocation count is a multiple of 32",
                            o->workgroup[0], o->workgroup[1], o->workgroup[2]);
  }
  return VYRE_OK;
}

/* ------------------------------------------------------------------ */
/* mma_fill and mma                                                     */
/* ------------------------------------------------------------------ */
static void lower_fill(cg_ctx *c, const vyre_inst *in) {
  const char *v = lane0(c, in->b);
  for (uint32_t j = 0; j < CG_MMA_REGS; j++) cg_emit(c, "mov.b32 %s, %s;", mreg(c, in->a, j), v);
}

static void lower_mma(cg_ctx *c, const vyre_inst *in) {
  static const char *const shapes[] = {"m16n8k16.row.col.f32.f16.f16.f32",
                                       "m16n8k16.row.col.f32.bf16.bf16.f32",
                                       "m16n8k32.row.col.s32.s8.s8.s32",
                                       "m16n8k32.row.col.s32.u8.u8.s32"};
  uint32_t k = in->type == VYRE_T_F16 ? 0 : in->type == VYRE_T_BF16 ? 1 : in->type == VYRE_T_I8 ? 2 : 3;
  for (uint32_t h = 0; h < 2; h++) {
    const char *d[4], *a[4], *b[2], *s[4];
    for (uint32_t j = 0; j < 4; j++) {
      d[j] = mreg(c, in->a, 4 * h + j);
      a[j] = mreg(c, in->b, j);
      s[j] = mreg(c, in->d, 4 * h + j);
    }
    b[0] = mreg(c, in->c, 2 * h);
    b[1] = mreg(c, in->c, 2 * h + 1);
    cg_emit(c, "mma.sync.aligned.%s {%s, %s, %s, %s}, {%s, %s, %s, %s}, {%s, %s}, {%s, %s, %s, %s};",
            shapes[k], d[0], d[1], d[2], d[3], a[0], a[1], a[2], a[3], b[0], b[1], s[0], s[1],
            s[2], s[3]);
  }
}

/* ------------------------------------------------------------------ */
/* Tiles in memory                                                      */
/* ------------------------------------------------------------------ */
/* One mma_load or mma_store: the buffer, the tile and where it lies. */
typedef struct tile {
  uint32_t b, slot, layout;
  uint32_t index, stride; /* value ids */
  const char *ix, *st;    /* lane 0's values */
  mat m;
  uint32_t mrows, mcols;  /* the tile as it lies in memory: rows of stride */
  int shared;
} tile;

static tile tile_of(cg_ctx *c, uint32_t b, uint32_t index, uint32_t stride, uint32_t slot,
                    uint32_t layout) {
  tile t;
  t.b = b;
  t.slot = slot;
  t.layout = layout;
  t.index = index;
  t.stride = stride;
  t.m = mat_of(c, slot);
  t.mrows = layout == VYRE_LAYOUT_ROW ? t.m.rows : t.m.cols;
  t.mcols = layout == VYRE_LAYOUT_ROW ? t.m.cols : t.m.rows;
  t.shared = c->p->buffers[b].role == VYRE_ROLE_SHARED;
  t.ix = lane0(c, index);
  t.st = lane0(c, stride);
  return t;
}

/* The fast paths need the whole tile in the buffer and index and stride
 * multiples of `mult` elements.  Returns 1 when that is proven, else
 * emits the run-time test into a fresh predicate *q and returns 0. */
static int fast_ok(cg_ctx *c, const tile *t, uint32_t mult, const char **q) {
  uint32_t count = c->p->buffers[t->b].decl.count, need = 0;
  while ((1u << need) < mult) need++;
  uint64_t last = (uint64_t)cg_hi_at(c, t->index) + (uint64_t)(t->mrows - 1) * cg_hi_at(c, t->stride) +
                  t->mcols - 1;
  int in_range = count && last < count;
  int aligned = c->al[t->index] >= need && c->al[t->stride] >= need;
  if (in_range && aligned) return 1;
  const char *p = cg_tp(c);
  *q = p;
  if (!in_range) {
    const char *l = cg_t64(c), *x = cg_t64(c), *n = cg_t64(c);
    cg_emit(c, "cvt.u64.u32 %s, %s;", x, t->ix);
    cg_emit(c, "add.u64 %s, %s, %u;", x, x, t->mcols - 1);
    cg_emit(c, "mad.wide.u32 %s, %s, %u, %s;", l, t->st, t->mrows - 1, x);
    cg_emit(c, "cvt.u64.u32 %s, %s;", n, cg_len(c, t->b));
    cg_emit(c, "setp.lt.u64 %s, %s, %s;", p, l, n);
  } else {
    cg_emit(c, "setp.eq.u32 %s, 1, 1;", p);
  }
  if (!aligned && mult > 1) {
    const char *o = cg_t32(c), *a = cg_tp(c);
    cg_emit(c, "or.b32 %s, %s, %s;", o, t->ix, t->st);
    cg_emit(c, "and.b32 %s, %s, %u;", o, o, mult - 1u);
    cg_emit(c, "setp.eq.and.u32 %s, %s, 0, %s;", a, o, p);
    *q = a;
  }
  return 0;
}

/* Address of element `off` (a u32 register, in range) of the tile's buffer. */
static const char *elem_addr32(cg_ctx *c, const tile *t, const char *off) {
  if (t->shared) {
    const char *a = cg_t32(c);
    cg_emit(c, "mad.lo.u32 %s, %s, %u, %%smbase;", a, off, t->m.esize);
    uint32_t so = c->p->buffers[t->b].shared_offset;
    if (so) cg_emit(c, "add.u32 %s, %s, %u;", a, a, so);
    return a;
  }
  const char *a = cg_t64(c);
  cg_emit(c, "mad.wide.u32 %s, %s, %u, %s;", a, off, t->m.esize, cg_name(c, "%bp", t->b));
  return a;
}

/* The u32 element offset index + R * stride + C of lane part (rl + rk,
 * cl + ck) in a tile proven in range (no wrap). */
static const char *fast_off(cg_ctx *c, const tile *t, const char *rl, uint32_t rk, const char *cl,
                            uint32_t ck) {
  const char *r = cg_t32(c), *o = cg_t32(c);
  if (rk) cg_emit(c, "add.u32 %s, %s, %u;", r, rl, rk);
  else cg_emit(c, "mov.u32 %s, %s;", r, rl);
  cg_emit(c, "mad.lo.u32 %s, %s, %s, %s;", o, r, t->st, t->ix);
  cg_emit(c, "add.u32 %s, %s, %s;", o, o, cl);
  if (ck) cg_emit(c, "add.u32 %s, %s, %u;", o, o, ck);
  return o;
}

static const char *space(const tile *t) { return t->shared ? "shared" : "global"; }

/* A/B from workgroup memory: one ldmatrix.x4 (.trans when k is not the
 * contiguous axis: A col, B row; 16-bit only). */
static void load_ldmatrix(cg_ctx *c, const tile *t) {
  int kcontig = (t->m.use == VYRE_MAT_A) == (t->layout == VYRE_LAYOUT_ROW);
  uint32_t kblock = t->m.esize == 2 ? 8u : 16u;
  const char *ob = t->m.use == VYRE_MAT_A ? "%mq0" : "%mq1";
  const char *kb = t->m.use == VYRE_MAT_A ? "%mq1" : "%mq0";
  const char *r = cg_t32(c), *col = cg_t32(c);
  /* lane l gives the address of row l & 7 of matrix l >> 3 */
  cg_emit(c, "mad.lo.u32 %s, %s, 8, %%mr;", r, kcontig ? ob : kb);
  cg_emit(c, "mul.lo.u32 %s, %s, %u;", col, kcontig ? kb : ob, kcontig ? kblock : 8u);
  const char *o = fast_off(c, t, r, 0, col, 0);
  const char *a = elem_addr32(c, t, o);
  cg_emit(c, "ldmatrix.sync.aligned.m8n8.x4%s.shared.b16 {%s, %s, %s, %s}, [%s];",
          kcontig ? "" : ".trans", mreg(c, t->slot, 0), mreg(c, t->slot, 1),
          mreg(c, t->slot, 2), mreg(c, t->slot, 3), a);
}

/* A/B with k contiguous (A row, B col) or an accumulator in row layout:
 * one 4-byte (A/B) or 8-byte (two accumulator columns) access per group. */
static void vector_access(cg_ctx *c, const tile *t, int store) {
  int acc = t->m.use == VYRE_MAT_ACC;
  uint32_t step = acc ? 2u : 1u;
  for (uint32_t j = 0; j < t->m.nregs; j += step) {
    epos p = elem_pos(&t->m, j, 0);
    const char *o = t->layout == VYRE_LAYOUT_ROW ? fast_off(c, t, p.rl, p.rk, p.cl, p.ck)
                                                 : fast_off(c, t, p.cl, p.ck, p.rl, p.rk);
    const char *a = elem_addr32(c, t, o);
    if (acc && store)
      cg_emit(c, "st.%s.v2.b32 [%s], {%s, %s};", space(t), a, mreg(c, t->slot, j),
              mreg(c, t->slot, j + 1));
    else if (acc)
      cg_emit(c, "ld.%s.v2.b32 {%s, %s}, [%s];", space(t), mreg(c, t->slot, j),
              mreg(c, t->slot, j + 1), a);
    else
      cg_emit(c, "ld.%s.b32 %s, [%s];", space(t), mreg(c, t->slot, j), a);
  }
}

/* The general path: every element on its own, at its exact 64-bit
 * offset, read as 0 (stored nowhere) at or beyond the buffer's count. */
static void element_access(cg_ctx *c, const tile *t, int store) {
  const char *n = cg_t64(c), *x = cg_t64(c);
  cg_emit(c, "cvt.u64.u32 %s, %s;", n, cg_len(c, t->b));
  cg_emit(c, "cvt.u64.u32 %s, %s;", x, t->ix);
  for (uint32_t j = 0; j < t->m.nregs; j++) {
    const char *parts[4];
    for (uint32_t e = 0; e < t->m.per_reg; e++) {
      epos p = elem_pos(&t->m, j, e);
      if (t->layout == VYRE_LAYOUT_COL) {
        epos q = {p.cl, p.rl, p.ck, p.rk};
        p = q;
      }
      /* off = index + (rl + rk) * stride + cl + ck, exactly */
      const char *o = cg_t64(c), *cw = cg_t64(c), *q = cg_tp(c);
      cg_emit(c, "mad.wide.u32 %s, %s, %s, %s;", o, p.rl, t->st, x);
      cg_emit(c, "cvt.u64.u32 %s, %s;", cw, p.cl);
      cg_emit(c, "add.u64 %s, %s, %s;", o, o, cw);
      if (p.ck) cg_emit(c, "add.u64 %s, %s, %u;", o, o, p.ck);
      /* + rk * stride: rk is any constant below 32 (with the layout
       * swapped it is the column part: an element offset e, 8 or 16 more) */
      if (p.rk) {
        const char *rw = cg_t64(c);
        cg_emit(c, "mul.wide.u32 %s, %s, %u;", rw, t->st, p.rk);
        cg_emit(c, "add.u64 %s, %s, %s;", o, o, rw);
      }
      cg_emit(c, "setp.lt.u64 %s, %s, %s;", q, o, n);
      const char *o32 = cg_t32(c);
      cg_emit(c, "cvt.u32.u64 %s, %s;", o32, o);
      const char *a = elem_addr32(c, t, o32);
      const char *ty = t->m.esize == 1 ? "u8" : t->m.esize == 2 ? "u16" : "b32";
      if (store) {
        cg_emit(c, "@%s st.%s.%s [%s], %s;", q, space(t), ty, a, mreg(c, t->slot, j));
        continue;
      }
      const char *v = t->m.per_reg == 1 ? mreg(c, t->slot, j) : cg_t32(c);
      cg_emit(c, "mov.b32 %s, 0;", v);
      cg_emit(c, "@%s ld.%s.%s %s, [%s];", q, space(t), ty, v, a);
      parts[e] = v;
    }
    if (store || t->m.per_reg == 1) continue;
    const char *r = mreg(c, t->slot, j);
    if (t->m.per_reg == 2) {
      cg_emit(c, "prmt.b32 %s, %s, %s, 0x5410;", r, parts[0], parts[1]);
    } else {
      const char *lo = cg_t32(c), *hi = cg_t32(c);
      cg_emit(c, "prmt.b32 %s, %s, %s, 0x0040;", lo, parts[0], parts[1]);
      cg_emit(c, "prmt.b32 %s, %s, %s, 0x0040;", hi, parts[2], parts[3]);
      cg_emit(c, "prmt.b32 %s, %s, %s, 0x5410;", r, lo, hi);
    }
  }
}

/* The fast path of a tile, or 0 when it has none: 1 ldmatrix, 2 vector. */
static int fast_kind(const tile *t, int store, uint32_t *mult) {
  int kcontig = t->m.use == VYRE_MAT_ACC ? t->layout == VYRE_LAYOUT_ROW
                                          : (t->m.use == VYRE_MAT_A) == (t->layout == VYRE_LAYOUT_ROW);
  if (!store && t->shared && t->m.use != VYRE_MAT_ACC && (kcontig || t->m.esize == 2)) {
    *mult = 16u / t->m.esize; /* every ldmatrix row on 16 bytes */
    return 1;
  }
  if (!kcontig) return 0;
  *mult = t->m.use == VYRE_MAT_ACC ? 2u : 4u / t->m.esize;
  return 2;
}

/* bf16 copied into workgroup memory by cp.async is not yet flushed (async.c). */
static void flush_copied(cg_ctx *c, const tile *t, int store) {
  if (store || !t->shared || t->m.comp != VYRE_T_BF16 || !c->async_bf16 || !c->async_bf16[t->b])
    return;
  for (uint32_t j = 0; j < t->m.nregs; j++) cg_async_flush_bf16(c, mreg(c, t->slot, j));
}

static void lower_tile(cg_ctx *c, const tile *t, int store) {
  uint32_t mult = 1;
  int kind = fast_kind(t, store, &mult);
  if (t->shared) cg_async_touch(c, t->b);
  if (!kind) {
    element_access(c, t, store);
    flush_copied(c, t, store);
    return;
  }
  const char *q = NULL;
  int proven = fast_ok(c, t, mult, &q);
  uint32_t l = cg_new_label(c);
  if (!proven) cg_emit(c, "@!%s bra.uni $MG%u;", q, l);
  if (kind == 1) load_ldmatrix(c, t);
  else vector_access(c, t, store);
  if (!proven) {
    cg_emit(c, "bra.uni $ME%u;", l);
    cg_line(c, "$MG%u:", l);
    element_access(c, t, store);
    cg_line(c, "$ME%u:", l);
  }
  flush_copied(c, t, store);
}

void cg_mma(cg_ctx *c, uint32_t i) {
  const vyre_inst *in = &c->p->insts[i];
  switch (in->op) {
  case VYRE_OP_MMA_FILL: lower_fill(c, in); return;
  case VYRE_OP_MMA: lower_mma(c, in); return;
  case VYRE_OP_MMA_LOAD: {
    tile t = tile_of(c, in->b, in->c, in->d, in->a, in->mod);
    lower_tile(c, &t, 0);
    return;
  }
  case VYRE_OP_MMA_STORE: {
    tile t = tile_of(c, in->a, in->b, in->c, in->d, in->mod);
    lower_tile(c, &t, 1);
    return;
  }
  default: break;
  }
  cg_fail(c, VYRE_INTERNAL, "codegen: instruction %u: op %u is no MMA op. Fix: report this as a bug",
          i, in->op);
}
