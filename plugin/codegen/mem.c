/* mem.c -- loads, stores and atomics with bounds checks, storage types, subgroups, trap and the grid barrier. */
#include <string.h>

#include "internal.h"

const char *cg_raw_ty(uint32_t elem_type) {
  switch (vyre_type_size(elem_type)) {
  case 1: return "u8";
  case 2: return "u16";
  case 8: return "u64";
  default: return "u32";
  }
}

static int is_shared(cg_ctx *c, uint32_t b) { return c->p->buffers[b].role == VYRE_ROLE_SHARED; }

static int raw64(uint32_t elem_type) { return vyre_type_size(elem_type) == 8; }

void cg_raw_to_value(cg_ctx *c, uint32_t et, const char *raw, const char *dst) {
  switch (et) {
  case VYRE_T_BOOL: cg_emit(c, "setp.ne.u32 %s, %s, 0;", dst, raw); return;
  /* Not bfe.s32: CUDA 13.0's ptxas folds `bfe.s32 x, 0, 8` followed by
   * cvt.rn.f32.u32 into I2F.S8, converting the byte as signed (found by
   * vyre fuzz on an H200; .probe-style repro in docs/codegen.md).  cvt.s32.s8
   * is the same sign extension and is compiled correctly. */
  case VYRE_T_I8: cg_emit(c, "cvt.s32.s8 %s, %s;", dst, raw); return;
  case VYRE_T_I16: cg_emit(c, "cvt.s32.s16 %s, %s;", dst, raw); return;
  case VYRE_T_U8: cg_emit(c, "and.b32 %s, %s, 0xff;", dst, raw); return;
  case VYRE_T_U16: cg_emit(c, "and.b32 %s, %s, 0xffff;", dst, raw); return;
  case VYRE_T_F16: {
    /* Exact: every f16 (subnormals included) is a normal f32 or zero. */
    const char *h = cg_t16(c);
    cg_emit(c, "cvt.u16.u32 %s, %s;", h, raw);
    cg_emit(c, "cvt.f32.f16 %s, %s;", dst, h);
    return;
  }
  case VYRE_T_BF16: {
    const char *w = cg_t32(c);
    cg_emit(c, "shl.b32 %s, %s, 16;", w, raw);
    cg_flush_subnormal(c, dst, w);
    return;
  }
  case VYRE_T_F32: cg_flush_subnormal(c, dst, raw); return;
  case VYRE_T_U64:
  case VYRE_T_I64: cg_emit(c, "mov.b64 %s, %s;", dst, raw); return;
  default: cg_emit(c, "mov.b32 %s, %s;", dst, raw); return;
  }
}

const char *cg_value_to_raw(cg_ctx *c, uint32_t et, const char *val) {
  switch (et) {
  case VYRE_T_BOOL: {
    const char *t = cg_t32(c);
    cg_emit(c, "selp.u32 %s, 1, 0, %s;", t, val);
    return t;
  }
  case VYRE_T_F32: return cg_canon_nan(c, val);
  case VYRE_T_F16: {
    /* cvt.rn rounds to nearest even, keeps f16 subnormals and overflows to
     * infinity; NaN gets the canonical 0x7E00. */
    const char *h = cg_t16(c), *t = cg_t32(c), *q = cg_tp(c);
    cg_emit(c, "cvt.rn.f16.f32 %s, %s;", h, val);
    cg_emit(c, "cvt.u32.u16 %s, %s;", t, h);
    cg_emit(c, "testp.notanumber.f32 %s, %s;", q, val);
    cg_emit(c, "selp.b32 %s, 0x7e00, %s, %s;", t, t, q);
    return t;
  }
  case VYRE_T_BF16: {
    /* Integer round-to-nearest-even (works on sm_70, which lacks cvt.bf16). */
    const char *l = cg_t32(c), *t = cg_t32(c), *q = cg_tp(c);
    cg_emit(c, "bfe.u32 %s, %s, 16, 1;", l, val);
    cg_emit(c, "add.u32 %s, %s, 0x7fff;", t, val);
    cg_emit(c, "add.u32 %s, %s, %s;", t, t, l);
    cg_emit(c, "shr.u32 %s, %s, 16;", t, t);
    cg_emit(c, "testp.notanumber.f32 %s, %s;", q, val);
    cg_emit(c, "selp.b32 %s, 0x7fc0, %s, %s;", t, t, q);
    return t;
  }
  default: return val;
  }
}

/* The address of element `index` of buffer b: a .b64 global address or a
 * .b32 shared address (vyre_smem + the buffer's shared_offset + index * size). */
static const char *element_address(cg_ctx *c, uint32_t b, const char *index) {
  uint32_t size = c->p->buffers[b].elem_size;
  if (is_shared(c, b)) {
    const char *a = cg_t32(c);
    cg_emit(c, "mad.lo.u32 %s, %s, %u, %%smbase;", a, index, size);
    uint32_t off = c->p->buffers[b].shared_offset;
    if (off) cg_emit(c, "add.u32 %s, %s, %u;", a, a, off);
    return a;
  }
  const char *off = cg_t64(c), *a = cg_t64(c);
  if (size == 1) cg_emit(c, "cvt.u64.u32 %s, %s;", off, index);
  else cg_emit(c, "mul.wide.u32 %s, %s, %u;", off, index, size);
  cg_emit(c, "add.s64 %s, %s, %s;", a, cg_name(c, "%bp", b), off);
  return a;
}

/* Global accesses at `x + k` (k a u32 constant, x + k provably without
 * wrap: x a multiple of a power of two above k, or x's range with k below
 * 2^32) address element x and add k * size as the instruction's immediate
 * offset, so accesses at x, x + 1, x + 2 share one 64-bit address (ptxas
 * cannot fold it: (x + k) * size differs from x * size + k * size when the
 * u32 sum wraps).  The bounds test stays on x + k itself.  Returns x and
 * sets *off to k * size, or returns the index with *off 0. */
#define CG_MAX_IMM_OFFSET (1u << 20)
static uint32_t offset_base(cg_ctx *c, uint32_t b, uint32_t index, uint32_t *off) {
  const vyre_program *p = c->p;
  const vyre_inst *in = &p->insts[index];
  *off = 0;
  if (is_shared(c, b) || in->op != VYRE_OP_ADD || in->type != VYRE_T_U32) return index;
  uint32_t x = in->a, kv = in->b;
  if (p->insts[kv].op != VYRE_OP_CONST) {
    x = in->b;
    kv = in->a;
  }
  const vyre_inst *ki = &p->insts[kv];
  if (ki->op != VYRE_OP_CONST || ki->type != VYRE_T_U32 || p->insts[x].op == VYRE_OP_CONST)
    return index;
  uint32_t k = ki->a, size = p->buffers[b].elem_size;
  if (k == 0 || k >= CG_MAX_IMM_OFFSET / size) return index;
  int no_wrap = (c->al[x] < 32u && k < (1u << c->al[x])) ||
                (uint64_t)cg_hi_at(c, x) + k <= UINT32_MAX;
  if (!no_wrap) return index;
  *off = k * size;
  return x;
}

/* The address operand "addr+off", or addr alone for offset 0. */
static const char *at_offset(cg_ctx *c, const char *addr, uint32_t off) {
  if (!off) return addr;
  char pre[40];
  size_t n = strlen(addr);
  if (n > sizeof pre - 2) n = sizeof pre - 2; /* register names are far shorter */
  memcpy(pre, addr, n);
  pre[n] = '+';
  pre[n + 1] = '\0';
  return cg_name(c, pre, off);
}

/* A predicate for index < count, or NULL when the bound is already proven. */
static const char *bounds_pred(cg_ctx *c, uint32_t b, uint32_t index) {
  if (cg_index_in_bounds(c, b, index)) return NULL;
  const char *q = cg_tp(c);
  cg_emit(c, "setp.lt.u32 %s, %s, %s;", q, cg_val(c, index), cg_len(c, b));
  return q;
}

/* The bounds predicate (NULL: proven) and address operand of an access to
 * element `index` of buffer b.  At x + k (offset_base) into a declared
 * count C > k the test is x < C - k: the same, as x + k does not wrap. */
static const char *access_at(cg_ctx *c, uint32_t b, uint32_t index, const char **addr) {
  uint32_t off, x = offset_base(c, b, index, &off);
  uint32_t count = c->p->buffers[b].decl.count, k = off / c->p->buffers[b].elem_size;
  const char *q = NULL;
  if (off && count > k && !cg_index_in_bounds(c, b, index)) {
    /* x is a multiple of m = 2^al[x]: x < C - k exactly when x is below C
     * - k rounded up to a multiple of m, which is C itself for every k <
     * m when m divides C: the accesses at x, x + 1, ... then share one
     * predicate. */
    uint64_t m = (uint64_t)1 << c->al[x], bound = (count - k + m - 1u) / m * m;
    q = cg_tp(c);
    cg_emit(c, "setp.lt.u32 %s, %s, %u;", q, cg_val(c, x),
            bound <= UINT32_MAX ? (uint32_t)bound : count - k);
  } else {
    q = bounds_pred(c, b, index);
  }
  *addr = at_offset(c, element_address(c, b, cg_val(c, x)), off);
  return q;
}

static int index_is_gid(cg_ctx *c, uint32_t index) {
  const vyre_inst *in = &c->p->insts[index];
  return in->op == VYRE_OP_INVOCATION_ID && in->mod == 0;
}

/* The raw bits of a load are its value: 32-bit integers, and f32 that
 * needs no flush.  Workgroup memory only ever holds f32 values a program
 * computed (zero at start, then stores), and f32 values are never
 * subnormal (docs/semantics.md), so its loads need no flush; nor does a
 * load whose every use flushes its inputs itself (.ftz arithmetic,
 * cg_analyse). */
static int raw_is_value(cg_ctx *c, uint32_t i, uint32_t b, uint32_t et) {
  if (et == VYRE_T_U32 || et == VYRE_T_I32) return 1;
  return et == VYRE_T_F32 && (is_shared(c, b) || c->noflush[i]);
}

/* A vector group's leader (analysis.c): one ld.v2/v4 into the
 * registers of all its loads.  Workgroup groups need every index proven in
 * bounds (else 0: the loads go one by one).  Global groups test the last
 * element at run time: the leader index L is a multiple of the group size,
 * so L + n - 1 does not wrap and L + n - 1 < count puts all of them in
 * bounds; otherwise each load runs alone with its own test. */
static int vector_load(cg_ctx *c, uint32_t i) {
  const vyre_inst *in = &c->p->insts[i];
  uint32_t b = in->a, m[4], n = 0, et = c->p->buffers[b].decl.elem_type;
  for (uint32_t j = i; j != CG_NONE && n < 4; j = c->vnext[j]) m[n++] = j;
  int proven = n == c->vsize[i], shared = is_shared(c, b);
  for (uint32_t k = 0; k < n && proven; k++)
    proven = cg_index_in_bounds(c, b, c->p->insts[m[k]].b);
  /* A run-time tested group whose loads need a flush stays scalar: the
   * flush is a use of the loaded bits right at the load, and the branch of
   * the test pins it there, so the warp waits for the load before it can
   * issue anything after the group (matmul_tiled's slice loads on an H100:
   * 3.73 ms with such groups, 3.56 ms without; docs/codegen.md).  Without a
   * flush nothing uses the bits early (sum.vyre: 352 us vs 365 us). */
  int flushes = 0;
  for (uint32_t k = 0; k < n; k++) flushes |= !raw_is_value(c, m[k], b, et);
  int ok = n == c->vsize[i] && (proven || (!shared && !flushes));
  for (uint32_t k = 1; k < n; k++) c->vskip[m[k]] = (uint8_t)ok;
  if (!ok) return 0;
  const char *lead = cg_val(c, in->b);
  const char *addr = element_address(c, b, lead);
  const char *r[4];
  for (uint32_t k = 0; k < n; k++)
    r[k] = raw_is_value(c, m[k], b, et) ? cg_val(c, m[k]) : cg_t32(c);
  uint32_t acc = c->p->buffers[b].decl.access;
  const char *space = shared ? "shared"
                      : (acc == VYRE_ACCESS_READ_ONLY || acc == VYRE_ACCESS_UNIFORM) ? "global.nc"
                                                                                      : "global";
  uint32_t lab = cg_new_label(c);
  if (!proven) {
    const char *last = cg_t32(c), *q = cg_tp(c);
    cg_emit(c, "add.u32 %s, %s, %u;", last, lead, n - 1u);
    cg_emit(c, "setp.lt.u32 %s, %s, %s;", q, last, cg_len(c, b));
    cg_emit(c, "@%s bra $VL%u;", q, lab);
    for (uint32_t k = 0; k < n; k++) {
      const char *ik = cg_t32(c), *qk = cg_tp(c);
      cg_emit(c, "add.u32 %s, %s, %u;", ik, lead, k);
      cg_emit(c, "setp.lt.u32 %s, %s, %s;", qk, ik, cg_len(c, b));
      cg_emit(c, "mov.b32 %s, 0;", r[k]);
      cg_emit(c, "@%s ld.%s.u32 %s, [%s+%u];", qk, space, r[k], addr, 4u * k);
    }
    cg_emit(c, "bra $VD%u;", lab);
    cg_line(c, "$VL%u:", lab);
  }
  if (n == 4)
    cg_emit(c, "ld.%s.v4.b32 {%s, %s, %s, %s}, [%s];", space, r[0], r[1], r[2], r[3], addr);
  else
    cg_emit(c, "ld.%s.v2.b32 {%s, %s}, [%s];", space, r[0], r[1], addr);
  if (!proven) cg_line(c, "$VD%u:", lab);
  for (uint32_t k = 0; k < n; k++)
    if (!raw_is_value(c, m[k], b, et)) cg_raw_to_value(c, et, r[k], cg_val(c, m[k]));
  return 1;
}

void cg_load(cg_ctx *c, uint32_t i) {
  const vyre_inst *in = &c->p->insts[i];
  uint32_t b = in->a, et = c->p->buffers[b].decl.elem_type;
  cg_async_touch(c, b);
  const char *dst = cg_val(c, i);
  int direct = raw_is_value(c, i, b, et);
  if (c->mode == CG_MODE_VEC && index_is_gid(c, in->b)) {
    const char *cur = cg_name(c, raw64(et) ? "%u" : "%t", c->cur_raw[b * CG_EPT + c->copy]);
    if (direct) cg_emit(c, "mov.b32 %s, %s;", dst, cur);
    else cg_raw_to_value(c, et, cur, dst);
    return;
  }
  if (c->vskip[i]) return; /* its group's vector load filled it */
  if (c->vsize[i] && vector_load(c, i)) return;
  const char *addr;
  const char *q = access_at(c, b, in->b, &addr);
  const char *raw = direct ? dst : raw64(et) ? cg_t64(c) : cg_t32(c);
  uint32_t acc = c->p->buffers[b].decl.access;
  const char *space = is_shared(c, b) ? "shared"
                      : (acc == VYRE_ACCESS_READ_ONLY || acc == VYRE_ACCESS_UNIFORM) ? "global.nc"
                                                                                      : "global";
  if (q) {
    cg_emit(c, "mov.%s %s, 0;", raw64(et) ? "b64" : "b32", raw);
    cg_emit(c, "@%s ld.%s.%s %s, [%s];", q, space, cg_raw_ty(et), raw, addr);
  } else {
    cg_emit(c, "ld.%s.%s %s, [%s];", space, cg_raw_ty(et), raw, addr);
  }
  if (!direct) cg_raw_to_value(c, et, raw, dst);
}

void cg_store(cg_ctx *c, uint32_t i) {
  const vyre_inst *in = &c->p->insts[i];
  uint32_t b = in->a, et = c->p->buffers[b].decl.elem_type;
  cg_async_touch(c, b);
  /* NaN bits in workgroup memory are never observable (only f32 loads
   * read it back, and every global store canonicalises): no fix-up there. */
  const char *raw = et == VYRE_T_F32 && is_shared(c, b) ? cg_val(c, in->c)
                                                        : cg_value_to_raw(c, et, cg_val(c, in->c));
  if (c->mode == CG_MODE_VEC) {
    /* Every store of the vector path is at gid: update the element's raw
     * bits; the vector store at the end writes them. */
    const char *cur = cg_name(c, raw64(et) ? "%u" : "%t", c->cur_raw[b * CG_EPT + c->copy]);
    const char *pred = cg_vpred(c);
    if (pred) cg_emit(c, "@%s mov.%s %s, %s;", pred, raw64(et) ? "b64" : "b32", cur, raw);
    else cg_emit(c, "mov.%s %s, %s;", raw64(et) ? "b64" : "b32", cur, raw);
    return;
  }
  const char *addr;
  const char *q = access_at(c, b, in->b, &addr);
  const char *space = is_shared(c, b) ? "shared" : "global";
  if (q) cg_emit(c, "@%s st.%s.%s [%s], %s;", q, space, cg_raw_ty(et), addr, raw);
  else cg_emit(c, "st.%s.%s [%s], %s;", space, cg_raw_ty(et), addr, raw);
}

/* A 64-bit read-modify-write on workgroup memory (add, and, or, xor, min,
 * max) as an explicit compare-and-swap loop.  sm_90 has no such shared
 * atomic: ptxas emulates it with a CAS spin loop of its own, and CUDA 13.0
 * does not reconverge the subgroup after that loop, so a later shfl.sync or
 * vote.sync reads lanes still spinning (a wrong result, seen by the fuzzer:
 * docs/codegen.md, "Toolchain workarounds").  A loop written in the PTX is
 * one ptxas reconverges before the next subgroup op.  r gets the value the
 * successful swap replaced, as the atomic returns it. */
static void cas_loop(cg_ctx *c, const char *q, const char *op, const char *ty, const char *sem,
                     int seq_cst, const char *r, const char *addr, const char *val) {
  uint32_t lab = cg_new_label(c);
  const char *old = cg_t64(c), *nw = cg_t64(c), *got = cg_t64(c), *again = cg_tp(c);
  if (q) cg_emit(c, "@!%s bra $AD%u;", q, lab);
  if (seq_cst) cg_emit(c, "fence.sc.cta;");
  cg_emit(c, "ld.relaxed.cta.shared.b64 %s, [%s];", old, addr);
  cg_line(c, "$AL%u:", lab);
  cg_emit(c, "%s.%s %s, %s, %s;", op, ty, nw, old, val);
  cg_emit(c, "atom.%s.cta.shared.cas.b64 %s, [%s], %s, %s;", sem, got, addr, old, nw);
  cg_emit(c, "setp.ne.b64 %s, %s, %s;", again, got, old);
  cg_emit(c, "mov.b64 %s, %s;", old, got);
  cg_emit(c, "@%s bra $AL%u;", again, lab);
  cg_emit(c, "mov.b64 %s, %s;", r, old);
  cg_line(c, "$AD%u:", lab);
}

void cg_atomic(cg_ctx *c, uint32_t i) {
  const vyre_inst *in = &c->p->insts[i];
  uint32_t b = in->a, t = in->type;
  cg_async_touch(c, b);
  int w64 = cg_is64(t), sgn = t == VYRE_T_I32 || t == VYRE_T_I64;
  const char *r = cg_val(c, i);
  const char *addr;
  const char *q = access_at(c, b, in->b, &addr);
  const char *op, *ty;
  switch (in->op) {
  case VYRE_OP_ATOMIC_ADD: op = "add"; ty = w64 ? "u64" : (sgn ? "s32" : "u32"); break;
  case VYRE_OP_ATOMIC_AND: op = "and"; ty = w64 ? "b64" : "b32"; break;
  case VYRE_OP_ATOMIC_OR: op = "or"; ty = w64 ? "b64" : "b32"; break;
  case VYRE_OP_ATOMIC_XOR: op = "xor"; ty = w64 ? "b64" : "b32"; break;
  case VYRE_OP_ATOMIC_MIN: op = "min"; ty = cg_ity(t); break;
  case VYRE_OP_ATOMIC_MAX: op = "max"; ty = cg_ity(t); break;
  case VYRE_OP_ATOMIC_EXCHANGE: op = "exch"; ty = w64 ? "b64" : "b32"; break;
  default: op = "cas"; ty = w64 ? "b64" : "b32"; break;
  }
  /* C++ -> PTX memory-model mapping (PTX ISA "Memory Consistency Model"):
   * seq_cst RMW = fence.sc + atom.acq_rel; the others map directly. */
  static const char *const sems[] = {"relaxed", "acquire", "release", "acq_rel", "acq_rel"};
  int shared = is_shared(c, b);
  const char *scope = shared ? "cta" : "gpu";
  const char *pred = q ? q : NULL;
  char guard[48] = "";
  if (pred) {
    size_t pl = strlen(pred);
    guard[0] = '@';
    memcpy(guard + 1, pred, pl);
    guard[1 + pl] = ' ';
    guard[2 + pl] = '\0';
  }
  if (q) cg_emit(c, "mov.%s %s, 0;", w64 ? "b64" : "b32", r);
  if (shared && w64 && in->op != VYRE_OP_ATOMIC_CAS && in->op != VYRE_OP_ATOMIC_EXCHANGE) {
    cas_loop(c, q, op, ty, sems[in->mod], in->mod == VYRE_ORDER_SEQ_CST, r, addr,
             cg_val(c, in->c));
    return;
  }
  if (in->mod == VYRE_ORDER_SEQ_CST) cg_emit(c, "%sfence.sc.%s;", guard, scope);
  if (in->op == VYRE_OP_ATOMIC_CAS)
    cg_emit(c, "%satom.%s.%s.%s.cas.%s %s, [%s], %s, %s;", guard, sems[in->mod], scope,
            shared ? "shared" : "global", ty, r, addr, cg_val(c, in->c), cg_val(c, in->d));
  else
    cg_emit(c, "%satom.%s.%s.%s.%s.%s %s, [%s], %s;", guard, sems[in->mod], scope,
            shared ? "shared" : "global", op, ty, r, addr, cg_val(c, in->c));
}

/* ------------------------------------------------------------------ */
/* Subgroups: 32 lanes; the last warp of a workgroup may be partial     */
/* ------------------------------------------------------------------ */
static const char *member_mask(cg_ctx *c) { return c->partial_warp ? "%lmask" : "0xffffffff"; }

/* The source goes through %opz (a run-time zero, see emit_prologue) so
 * ptxas never constant-folds a shuffle: CUDA 13.0 folds one whose source it
 * knows into a wrong constant (docs/codegen.md, "Toolchain workarounds"). */
static void shfl32(cg_ctx *c, const char *mode, const char *dst, const char *src,
                   const char *lane) {
  const char *x = cg_t32(c);
  cg_emit(c, "xor.b32 %s, %s, %%opz;", x, src);
  cg_emit(c, "shfl.sync.%s.b32 %s, %s, %s, 0x1f, %s;", mode, dst, x, lane, member_mask(c));
}

/* Shuffle a value of type t (bool, 32 or 64 bits). */
static void shfl_value(cg_ctx *c, uint32_t t, const char *mode, const char *dst, const char *src,
                       const char *lane) {
  if (t == VYRE_T_BOOL) {
    const char *x = cg_t32(c), *y = cg_t32(c);
    cg_emit(c, "selp.u32 %s, 1, 0, %s;", x, src);
    shfl32(c, mode, y, x, lane);
    cg_emit(c, "setp.ne.u32 %s, %s, 0;", dst, y);
  } else if (cg_is64(t)) {
    const char *lo = cg_t32(c), *hi = cg_t32(c), *lo2 = cg_t32(c), *hi2 = cg_t32(c);
    cg_emit(c, "mov.b64 {%s, %s}, %s;", lo, hi, src);
    shfl32(c, mode, lo2, lo, lane);
    shfl32(c, mode, hi2, hi, lane);
    cg_emit(c, "mov.b64 %s, {%s, %s};", dst, lo2, hi2);
  } else {
    shfl32(c, mode, dst, src, lane);
  }
}

static const char *tmp_of(cg_ctx *c, uint32_t t) {
  if (t == VYRE_T_BOOL) return cg_tp(c);
  return cg_is64(t) ? cg_t64(c) : cg_t32(c);
}

static const char *reduce_identity(uint32_t kind, uint32_t t) {
  int s = t == VYRE_T_I32 || t == VYRE_T_I64, w = cg_is64(t);
  switch (kind) {
  case VYRE_REDUCE_ADD: return t == VYRE_T_F32 ? "0x80000000" : "0";
  case VYRE_REDUCE_MIN:
    if (t == VYRE_T_F32) return "0x7fc00000";
    if (w) return s ? "0x7fffffffffffffff" : "0xffffffffffffffff";
    return s ? "0x7fffffff" : "0xffffffff";
  case VYRE_REDUCE_MAX:
    if (t == VYRE_T_F32) return "0x7fc00000";
    if (w) return s ? "0x8000000000000000" : "0";
    return s ? "0x80000000" : "0";
  case VYRE_REDUCE_AND: return w ? "0xffffffffffffffff" : "0xffffffff";
  default: return "0";
  }
}

static void reduce_step(cg_ctx *c, uint32_t kind, uint32_t t, const char *dst, const char *a,
                        const char *b) {
  if (t == VYRE_T_F32) {
    if (kind == VYRE_REDUCE_ADD) cg_emit(c, "add.rn.ftz.f32 %s, %s, %s;", dst, a, b);
    else cg_f32_minmax(c, dst, a, b, kind == VYRE_REDUCE_MAX);
    return;
  }
  static const char *const ops[] = {"add", "min", "max", "and", "or", "xor"};
  const char *ty = kind >= VYRE_REDUCE_AND ? cg_bty(t) : cg_ity(t);
  cg_emit(c, "%s.%s %s, %s, %s;", ops[kind], ty, dst, a, b);
}

void cg_subgroup(cg_ctx *c, uint32_t i) {
  const vyre_inst *in = &c->p->insts[i];
  uint32_t t = c->p->value_type[i];
  const char *r = cg_val(c, i);
  if (in->op == VYRE_OP_SUBGROUP_BALLOT) {
    /* Lanes outside the member mask do not exist: their bits stay 0. */
    cg_emit(c, "vote.sync.ballot.b32 %s, %s, %s;", r, cg_val(c, in->a), member_mask(c));
    return;
  }
  if (in->op == VYRE_OP_SUBGROUP_SHUFFLE) {
    const char *j = cg_t32(c);
    cg_emit(c, "and.b32 %s, %s, 31;", j, cg_val(c, in->b));
    shfl_value(c, t, "idx", r, cg_val(c, in->a), j);
    if (c->partial_warp) {
      /* A lane that does not exist yields the typed zero. */
      const char *q = cg_tp(c);
      cg_emit(c, "setp.lt.u32 %s, %s, %%lcount;", q, j);
      if (t == VYRE_T_BOOL) cg_emit(c, "and.pred %s, %s, %s;", r, r, q);
      else cg_emit(c, "selp.%s %s, %s, 0, %s;", cg_bty(t), r, r, q);
    }
    return;
  }
  /* reduce: the fixed tree of docs/semantics.md, so f32 sums round alike
   * on every backend. */
  uint32_t kind = in->mod;
  const char *id = reduce_identity(kind, t);
  const char *s = tmp_of(c, t), *lane = NULL;
  cg_mov(c, t, s, cg_val(c, in->a));
  if (c->partial_warp) {
    lane = cg_t32(c);
    cg_emit(c, "and.b32 %s, %%ltid, 31;", lane);
  }
  for (uint32_t off = 16; off >= 1; off /= 2) {
    const char *got = tmp_of(c, t), *ns = tmp_of(c, t);
    char offs[4] = {(char)('0' + off / 10), (char)('0' + off % 10), 0, 0};
    if (off < 10) {
      offs[0] = (char)('0' + off);
      offs[1] = 0;
    }
    shfl_value(c, t, "down", got, s, offs);
    if (c->partial_warp) {
      const char *k = cg_t32(c), *q = cg_tp(c);
      cg_emit(c, "add.u32 %s, %s, %u;", k, lane, off);
      cg_emit(c, "setp.lt.u32 %s, %s, %%lcount;", q, k);
      cg_emit(c, "selp.%s %s, %s, %s, %s;", cg_bty(t), got, got, id, q);
    }
    reduce_step(c, kind, t, ns, s, got);
    s = ns;
    if (off == 1) break;
  }
  shfl_value(c, t, "idx", r, s, "0");
}

/* ------------------------------------------------------------------ */
/* trap and the grid barrier                                           */
/* ------------------------------------------------------------------ */
static void leave(cg_ctx *c) {
  if (c->need_done && c->grid_seen < c->ngrid) {
    cg_emit(c, "mov.pred %%done, 1;");
    cg_emit(c, "bra $GB%u;", c->grid_seen);
  } else {
    cg_emit(c, "exit;");
  }
}

void cg_trap(cg_ctx *c, uint32_t i) {
  const vyre_inst *in = &c->p->insts[i];
  uint32_t nb = c->p->buffer_count;
  const char *t = cg_t32(c), *q = cg_tp(c);
  /* Claim the trap words (first trap wins), then leave; the PTX trap
   * instruction would kill the CUDA context. */
  cg_emit(c, "atom.global.cas.b32 %s, [%%pp+%u], 0, %u;", t, 4u * (nb + 2u), i + 1u);
  cg_emit(c, "setp.eq.u32 %s, %s, 0;", q, t);
  cg_emit(c, "@%s st.global.u32 [%%pp+%u], %u;", q, 4u * (nb + 1u), in->a);
  leave(c);
}

void cg_grid_barrier(cg_ctx *c, uint32_t i) {
  (void)i;
  uint32_t k = c->grid_seen++;
  uint32_t nb = c->p->buffer_count;
  uint32_t cnt = 4u * (nb + 3u), gen = 4u * (nb + 4u);
  const char *q = cg_tp(c), *g = cg_t32(c), *o = cg_t32(c), *n = cg_t32(c), *m = cg_t32(c);
  const char *ql = cg_tp(c), *x = cg_t32(c), *qs = cg_tp(c);
  cg_line(c, "$GB%u:", k);
  cg_emit(c, "bar.sync 0;");
  cg_emit(c, "setp.ne.u32 %s, %%ltid, 0;", q);
  cg_emit(c, "@%s bra $GBW%u;", q, k);
  /* Thread 0 arrives for its workgroup: read the generation, count in; the
   * last arriver resets the count and releases the next generation. */
  cg_emit(c, "fence.acq_rel.gpu;");
  cg_emit(c, "ld.relaxed.gpu.global.u32 %s, [%%pp+%u];", g, gen);
  cg_emit(c, "atom.acq_rel.gpu.global.add.u32 %s, [%%pp+%u], 1;", o, cnt);
  if (c->o->flags & CG_INDIRECT) {
    cg_emit(c, "mov.u32 %s, %%icn;", n); /* indirect: the workgroups that run */
  } else {
    cg_emit(c, "mov.u32 %s, %%nctaid.x;", n);
    cg_emit(c, "mov.u32 %s, %%nctaid.y;", m);
    cg_emit(c, "mul.lo.u32 %s, %s, %s;", n, n, m);
    cg_emit(c, "mov.u32 %s, %%nctaid.z;", m);
    cg_emit(c, "mul.lo.u32 %s, %s, %s;", n, n, m);
  }
  cg_emit(c, "sub.u32 %s, %s, 1;", n, n);
  cg_emit(c, "setp.eq.u32 %s, %s, %s;", ql, o, n);
  cg_emit(c, "@!%s bra $GBS%u;", ql, k);
  cg_emit(c, "st.relaxed.gpu.global.u32 [%%pp+%u], 0;", cnt);
  cg_emit(c, "add.u32 %s, %s, 1;", g, g);
  cg_emit(c, "st.release.gpu.global.u32 [%%pp+%u], %s;", gen, g);
  cg_emit(c, "bra $GBW%u;", k);
  cg_line(c, "$GBS%u:", k);
  cg_emit(c, "ld.acquire.gpu.global.u32 %s, [%%pp+%u];", x, gen);
  cg_emit(c, "setp.eq.u32 %s, %s, %s;", qs, x, g);
  cg_emit(c, "@%s bra $GBS%u;", qs, k);
  cg_line(c, "$GBW%u:", k);
  cg_emit(c, "bar.sync 0;");
  if (c->need_done) {
    /* Workgroups that returned before this barrier still arrive at the later ones. */
    if (c->grid_seen < c->ngrid) cg_emit(c, "@%%done bra $GB%u;", c->grid_seen);
    else cg_emit(c, "@%%done exit;");
  }
}
