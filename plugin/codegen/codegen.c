/* codegen.c -- the top of the code generator: target checks, the kernel's prologue and header, the per-program tables, cg_emit_ptx. */
#include <stdlib.h>
#include <string.h>

#include "internal.h"

/* ------------------------------------------------------------------ */
/* Target                                                              */
/* ------------------------------------------------------------------ */
/* The lowest PTX ISA that knows each target (PTX ISA "Release notes" /
 * "Target ISA notes"): the lowest version keeps old drivers able to JIT it. */
static const struct {
  uint32_t sm, major, minor;
} ptx_versions[] = {
    {70, 6, 0}, {72, 6, 1}, {75, 6, 3}, {80, 7, 0}, {86, 7, 1}, {87, 7, 4},
    {88, 9, 0}, {89, 7, 8}, {90, 7, 8}, {100, 8, 6}, {101, 8, 6}, {103, 8, 8},
    {110, 9, 0}, {120, 8, 7}, {121, 8, 8},
};

static int target_version(uint32_t sm, uint32_t *major, uint32_t *minor) {
  for (size_t k = 0; k < sizeof ptx_versions / sizeof ptx_versions[0]; k++) {
    if (ptx_versions[k].sm == sm) {
      *major = ptx_versions[k].major;
      *minor = ptx_versions[k].minor;
      return 1;
    }
  }
  return 0;
}

/* ------------------------------------------------------------------ */
/* The kernel                                                          */
/* ------------------------------------------------------------------ */
/* 1 when the program has an f32 constant (they go through %opz). */
static int has_f32_const(const vyre_program *p) {
  for (uint32_t i = 0; i < p->inst_count; i++)
    if (p->insts[i].op == VYRE_OP_CONST && p->insts[i].type == VYRE_T_F32) return 1;
  return 0;
}

/* Workgroup memory starts zeroed: every thread clears 16-byte chunks,
 * chunk ltid + k * nthreads.  The chunk and thread counts are known, so
 * up to CG_ZERO_STORES stores are written out (the last one predicated
 * when the threads do not divide the chunks): no loop, no branch, one
 * address; compaction's 3 chunks were a 40-instruction loop nest after
 * ptxas unrolled it. */
#define CG_ZERO_STORES 32u
static void zero_shared(cg_ctx *c) {
  uint32_t chunks = (c->p->shared_bytes + 15u) / 16u, nt = c->nthreads;
  uint32_t full = chunks / nt, rem = chunks % nt;
  cg_emit(c, "mov.u32 %%smbase, vyre_smem;");
  if (full + (rem != 0) <= CG_ZERO_STORES) {
    cg_emit(c, "mad.lo.u32 %%t1, %%ltid, 16, %%smbase;");
    for (uint32_t k = 0; k < full; k++)
      cg_emit(c, "st.shared.v4.b32 [%%t1+%u], {0, 0, 0, 0};", 16u * nt * k);
    if (rem) {
      cg_emit(c, "setp.lt.u32 %%q0, %%ltid, %u;", rem);
      cg_emit(c, "@%%q0 st.shared.v4.b32 [%%t1+%u], {0, 0, 0, 0};", 16u * nt * full);
    }
    cg_emit(c, "bar.sync 0;");
    return;
  }
  cg_emit(c, "mov.u32 %%t0, %%ltid;");
  cg_line(c, "$ZERO:");
  cg_emit(c, "setp.ge.u32 %%q0, %%t0, %u;", chunks);
  cg_emit(c, "@%%q0 bra $ZEROED;");
  cg_emit(c, "mad.lo.u32 %%t1, %%t0, 16, %%smbase;");
  cg_emit(c, "st.shared.v4.b32 [%%t1], {0, 0, 0, 0};");
  cg_emit(c, "add.u32 %%t0, %%t0, %u;", nt);
  cg_emit(c, "bra $ZERO;");
  cg_line(c, "$ZEROED:");
  cg_emit(c, "bar.sync 0;");
}

/* Indirect dispatch: read the three counts; past the launched grid on
 * any axis, thread 0 of workgroup (0,0,0) claims the trap words (as a
 * trap would: the first claim wins) and every workgroup leaves; else a
 * workgroup at or past the count on any axis leaves.  Before the
 * workgroup-memory clear and its barrier: whole workgroups exit. */
static void indirect_prologue(cg_ctx *c) {
  static const char axes[] = "xyz";
  uint32_t nb = c->p->buffer_count;
  cg_emit(c, "ld.param.u64 %%ip, [indirect];");
  cg_emit(c, "cvta.to.global.u64 %%ip, %%ip;");
  for (int k = 0; k < 3; k++) cg_emit(c, "ld.global.u32 %%ic%d, [%%ip+%d];", k, 4 * k);
  /* %ic3: the first axis past its bound (z, y, x checked: x wins), or -1. */
  cg_emit(c, "mov.u32 %%ic3, -1;");
  for (int k = 2; k >= 0; k--) {
    cg_emit(c, "mov.u32 %%ic4, %%nctaid.%c;", axes[k]);
    cg_emit(c, "setp.gt.u32 %%iq0, %%ic%d, %%ic4;", k);
    cg_emit(c, "@%%iq0 mov.u32 %%ic3, %d;", k);
  }
  cg_emit(c, "setp.eq.u32 %%iq0, %%ic3, -1;");
  cg_emit(c, "@%%iq0 bra $INDIRECT_IN;");
  cg_emit(c, "mov.u32 %%ic4, %%ctaid.x;");
  cg_emit(c, "mov.u32 %%ic5, %%ctaid.y;");
  cg_emit(c, "or.b32 %%ic4, %%ic4, %%ic5;");
  cg_emit(c, "mov.u32 %%ic5, %%ctaid.z;");
  cg_emit(c, "or.b32 %%ic4, %%ic4, %%ic5;");
  cg_emit(c, "mov.u32 %%ic5, %%tid.x;");
  cg_emit(c, "or.b32 %%ic4, %%ic4, %%ic5;");
  cg_emit(c, "mov.u32 %%ic5, %%tid.y;");
  cg_emit(c, "or.b32 %%ic4, %%ic4, %%ic5;");
  cg_emit(c, "mov.u32 %%ic5, %%tid.z;");
  cg_emit(c, "or.b32 %%ic4, %%ic4, %%ic5;");
  cg_emit(c, "setp.ne.u32 %%iq0, %%ic4, 0;");
  cg_emit(c, "@%%iq0 exit;");
  cg_emit(c, "add.u32 %%ic4, %%ic3, %u;", CG_INDIRECT_TRAP);
  cg_emit(c, "atom.global.cas.b32 %%ic5, [%%pp+%u], 0, %%ic4;", 4u * (nb + 2u));
  cg_emit(c, "setp.ne.u32 %%iq0, %%ic5, 0;");
  cg_emit(c, "@%%iq0 exit;");
  /* The count of that axis: x, else y, else z. */
  cg_emit(c, "setp.eq.u32 %%iq0, %%ic3, 1;");
  cg_emit(c, "selp.b32 %%ic5, %%ic1, %%ic2, %%iq0;");
  cg_emit(c, "setp.eq.u32 %%iq0, %%ic3, 0;");
  cg_emit(c, "selp.b32 %%ic5, %%ic0, %%ic5, %%iq0;");
  cg_emit(c, "st.global.u32 [%%pp+%u], %%ic5;", 4u * (nb + 1u));
  cg_emit(c, "exit;");
  cg_line(c, "$INDIRECT_IN:");
  for (int k = 0; k < 3; k++) {
    cg_emit(c, "mov.u32 %%ic4, %%ctaid.%c;", axes[k]);
    cg_emit(c, "setp.ge.u32 %%iq0, %%ic4, %%ic%d;", k);
    cg_emit(c, "@%%iq0 exit;");
  }
  /* The grid barrier counts the workgroups that run (mem.c). */
  cg_emit(c, "mul.lo.u32 %%icn, %%ic0, %%ic1;");
  cg_emit(c, "mul.lo.u32 %%icn, %%icn, %%ic2;");
}

static void emit_prologue(cg_ctx *c) {
  const vyre_program *p = c->p;
  cg_emit(c, "ld.param.u64 %%pp, [params];");
  cg_emit(c, "cvta.to.global.u64 %%pp, %%pp;");
  if (c->o->flags & CG_INDIRECT) indirect_prologue(c);
  for (uint32_t b = 0; b < p->buffer_count; b++) {
    const vyre_buffer_info *bi = &p->buffers[b];
    if (bi->role == VYRE_ROLE_SHARED) continue;
    cg_emit(c, "ld.param.u64 %s, [b%u];", cg_name(c, "%bp", b), bi->kernel_index);
    cg_emit(c, "cvta.to.global.u64 %s, %s;", cg_name(c, "%bp", b), cg_name(c, "%bp", b));
    if (!bi->decl.count)
      cg_emit(c, "ld.param.u32 %s, [counts+%u];", cg_name(c, "%len", b), 4u * (1u + b));
  }
  cg_emit(c, "mov.u32 %%ltid, %%tid.x;");
  if (c->wg[1] > 1 || c->wg[2] > 1) {
    cg_emit(c, "mov.u32 %%ty, %%tid.y;");
    cg_emit(c, "mov.u32 %%tz, %%tid.z;");
    cg_emit(c, "mad.lo.u32 %%ty, %%tz, %u, %%ty;", c->wg[1]);
    cg_emit(c, "mad.lo.u32 %%ltid, %%ty, %u, %%ltid;", c->wg[0]);
  }
  if ((p->features & VYRE_FEAT_SUBGROUP) || has_f32_const(p)) {
    /* A zero ptxas cannot see through: the launch passes no dynamic shared
     * memory, so %dynamic_smem_size is 0 at run time.  Shuffle sources are
     * xor'ed with it (mem.c shfl32): CUDA 13.0's ptxas folds a
     * shfl.sync of a value it knows at compile time into a wrong constant
     * (found by vyre fuzz on an H200; docs/codegen.md).  So are f32
     * constants (cg_expr): the 580 driver's JIT folds f32 arithmetic on
     * known values with a wrong rounding (vyre fuzz on an H100). */
    cg_emit(c, "mov.u32 %%opz, %%dynamic_smem_size;");
  }
  if (c->partial_warp) {
    /* Lanes that exist in this warp: all, or the tail of the last warp. */
    uint32_t last = c->nthreads / 32u, tail = c->nthreads % 32u;
    cg_emit(c, "shr.u32 %%t0, %%ltid, 5;");
    cg_emit(c, "setp.eq.u32 %%q0, %%t0, %u;", last);
    cg_emit(c, "selp.b32 %%lmask, %x, -1, %%q0;", (1u << tail) - 1u);
    cg_emit(c, "selp.b32 %%lcount, %u, 32, %%q0;", tail);
  }
  if (p->shared_bytes) zero_shared(c);
  if (c->need_done) cg_emit(c, "mov.pred %%done, 0;");
}

/* The module text before the body: header, math functions, entry, declarations. */
static void assemble_header(cg_ctx *c, strbuf *out, const cg_kernel_info *info) {
  const vyre_program *p = c->p;
  vyre__sb_printf(out, "//\n// vyre codegen %u: program ", CG_VERSION);
  char hex[65];
  vyre_program_hash_hex(p, hex);
  vyre__sb_puts(out, hex);
  vyre__sb_printf(out, "\n//\n.version %u.%u\n.target sm_%u\n.address_size 64\n\n", info->ptx_isa_major,
            info->ptx_isa_minor, c->sm);
  if (c->funcs.len) vyre__sb_append(out, c->funcs.data, c->funcs.len);
  vyre__sb_printf(out, ".visible .entry %s(\n", info->entry);
  for (uint32_t k = 0; k < p->kernel_buffer_count; k++) vyre__sb_printf(out, "\t.param .u64 b%u,\n", k);
  /* The count words by value (constant bank: no memory round trip before
   * the first load); the params block only for trap and grid words. */
  vyre__sb_printf(out, "\t.param .align 4 .b8 counts[%u],\n", 4u * (1u + p->buffer_count));
  if (c->o->flags & CG_INDIRECT)
    vyre__sb_puts(out, "\t.param .u64 params,\n\t.param .u64 indirect\n)\n");
  else
    vyre__sb_puts(out, "\t.param .u64 params\n)\n");
  vyre__sb_printf(out, ".reqntid %u, %u, %u\n{\n", c->wg[0], c->wg[1], c->wg[2]);
  uint32_t nv = c->n * c->ncopies, nl = (p->local_count ? p->local_count : 1) * c->ncopies;
  vyre__sb_printf(out, "\t.reg .b32 %%v<%u>;\n\t.reg .b64 %%w<%u>;\n\t.reg .pred %%p<%u>;\n", nv, nv, nv);
  vyre__sb_printf(out, "\t.reg .b32 %%lv<%u>;\n\t.reg .b64 %%lw<%u>;\n\t.reg .pred %%lp<%u>;\n", nl, nl, nl);
  vyre__sb_printf(out, "\t.reg .b32 %%t<%u>;\n\t.reg .b64 %%u<%u>;\n\t.reg .pred %%q<%u>;\n",
            c->nt32 + 2, c->nt64 + 1, c->ntp + 1);
  vyre__sb_printf(out, "\t.reg .b16 %%h<%u>;\n\t.reg .f32 %%fa<%u>;\n", c->nt16 + 1, c->ntf + 1);
  uint32_t nb = p->buffer_count ? p->buffer_count : 1;
  vyre__sb_printf(out, "\t.reg .b64 %%pp, %%bp<%u>;\n\t.reg .b32 %%len<%u>;\n", nb, nb);
  vyre__sb_puts(out, "\t.reg .b32 %ltid, %ty, %tz, %lmask, %lcount, %smbase, %gidx, %minlen, %opz;\n");
  vyre__sb_puts(out, "\t.reg .b64 %ebase;\n\t.reg .pred %done;\n");
  if (p->features & VYRE_FEAT_MMA)
    vyre__sb_printf(out, "\t.reg .b32 %%mx<%u>, %%mlane, %%mg, %%mt, %%mt2, %%mt4, %%mr, %%mq0, %%mq1;\n",
                    p->local_count * CG_MMA_REGS);
  if (c->o->flags & CG_INDIRECT)
    vyre__sb_puts(out, "\t.reg .b64 %ip;\n\t.reg .b32 %ic<6>, %icn;\n\t.reg .pred %iq0;\n");
  if (p->shared_bytes)
    vyre__sb_printf(out, "\t.shared .align 16 .b8 vyre_smem[%u];\n", (p->shared_bytes + 15u) & ~15u);
}

/* The per-program tables: op classes, grid barriers, loop counters, the
 * if of each else, and whether a return or trap must still reach a later
 * grid barrier. */
static void scan_program(cg_ctx *c) {
  const vyre_program *program = c->p;
  uint32_t nops;
  const vyre_op_info *ops = vyre_op_all(&nops);
  for (uint32_t k = 0; k < nops; k++) c->op_class[ops[k].id] = ops[k].op_class;
  for (uint32_t i = 0; i < c->n; i++) {
    const vyre_inst *in = &program->insts[i];
    if (in->op == VYRE_OP_BARRIER && in->mod == VYRE_BARRIER_GRID) c->ngrid++;
    if (in->op == VYRE_OP_LOOP) c->is_counter[in->a] = 1;
    if (in->op == VYRE_OP_IF && program->insts[program->match[i]].op == VYRE_OP_ELSE)
      c->if_of[program->match[i]] = i;
  }
  if (c->ngrid) {
    /* A return or trap before the last grid barrier must still arrive at
     * the grid barriers after it. */
    uint32_t last = 0;
    for (uint32_t i = 0; i < c->n; i++) {
      const vyre_inst *in = &program->insts[i];
      if (in->op == VYRE_OP_BARRIER && in->mod == VYRE_BARRIER_GRID) last = i;
    }
    for (uint32_t i = 0; i < last; i++) {
      const vyre_inst *in = &program->insts[i];
      if (in->op == VYRE_OP_RETURN || in->op == VYRE_OP_TRAP) c->need_done = 1;
    }
  }
}

/* What the runtime needs to know of the kernel (the logical grid until the
 * elementwise path takes it). */
static void kernel_info(const cg_ctx *c, cg_kernel_info *info) {
  const vyre_program *program = c->p;
  char hex[65];
  vyre_program_hash_hex(program, hex);
  memcpy(info->entry, "vyre_", 5);
  memcpy(info->entry + 5, hex, 16);
  info->entry[21] = '\0';
  info->kernel_buffers = program->kernel_buffer_count;
  info->params_words = vyre_params_word_count(program);
  info->shared_bytes = program->shared_bytes;
  info->grid_mode = CG_GRID_LOGICAL;
  info->elements_per_thread = 1;
  info->uses_grid_barrier = c->ngrid != 0;
  /* Indirect: the trap words report an over-bound count. */
  info->uses_trap = (program->features & VYRE_FEAT_TRAP) != 0 || (c->o->flags & CG_INDIRECT);
}

/* Frees a context and everything it holds; fields never allocated are
 * NULL or zeroed. */
static void ctx_free(cg_ctx *c) {
  vyre__sb_free(&c->body);
  vyre__sb_free(&c->funcs);
  free(c->dep);
  free(c->cur_raw);
  free(c->vec_static);
  free(c->ew_flags);
  free(c->fact_mark);
  free(c->pred_stack);
  free(c->is_counter);
  free(c->if_of);
  free(c->vname);
  free(c->fmts);
  free(c->su);
  cg_async_free(c);
  cg_analysis_free(c);
  free(c);
}

/* The target and the workgroup: the PTX ISA version into info. */
static vyre_status check_options(const cg_options *options, cg_kernel_info *info,
                                 vyre_error *err) {
  uint32_t sm = options->sm_major * 10u + options->sm_minor;
  if (options->sm_minor > 9 || !target_version(sm, &info->ptx_isa_major, &info->ptx_isa_minor))
    return vyre_error_set(err, VYRE_INVALID_ARGUMENT, 0,
                          "codegen: compute capability %u.%u is not a target this code generator "
                          "knows (sm_70, 72, 75, 80, 86, 87, 88, 89, 90, 100, 101, 103, 110, 120, "
                          "121). Fix: pass the device's compute capability",
                          options->sm_major, options->sm_minor);
  uint64_t inv = (uint64_t)options->workgroup[0] * options->workgroup[1] * options->workgroup[2];
  if (inv == 0 || inv > VYRE_MAX_WORKGROUP_INVOCATIONS)
    return vyre_error_set(err, VYRE_INVALID_ARGUMENT, 0,
                          "codegen: workgroup %u x %u x %u is empty or over %u invocations. Fix: "
                          "pass the workgroup size the kernel will be launched with",
                          options->workgroup[0], options->workgroup[1], options->workgroup[2],
                          VYRE_MAX_WORKGROUP_INVOCATIONS);
  return VYRE_OK;
}

/* A context for lowering program (options checked): its tables made, the
 * program scanned and analysed.  *out is freed with ctx_free. */
static vyre_status ctx_new(const vyre_program *program, const cg_options *options,
                           vyre_error *err, cg_ctx **out) {
  static const char oom[] = "codegen: out of host memory. Fix: free host memory";
  cg_ctx *c = calloc(1, sizeof *c);
  *out = NULL;
  if (!c) return vyre_error_set(err, VYRE_OUT_OF_MEMORY, 0, oom);
  c->p = program;
  c->o = options;
  c->err = err;
  c->n = program->inst_count;
  c->sm = options->sm_major * 10u + options->sm_minor;
  c->ncopies = 1;
  c->utag_next = 64; /* unrolled-body label tags start past every register copy */
  for (int k = 0; k < 3; k++) c->wg[k] = options->workgroup[k];
  c->nthreads = options->workgroup[0] * options->workgroup[1] * options->workgroup[2];
  c->partial_warp = (c->nthreads % 32u) != 0;
  c->fact_mark = malloc((size_t)c->n * sizeof *c->fact_mark);
  c->pred_stack = malloc((VYRE_MAX_NESTING + 2) * sizeof *c->pred_stack);
  c->is_counter = calloc(program->local_count ? program->local_count : 1, 1);
  c->if_of = malloc((size_t)c->n * sizeof *c->if_of);
  c->vname = calloc(c->n, sizeof *c->vname);
  c->su = calloc(c->n ? c->n : 1, 1);
  c->vpred = CG_NONE;
  if (!c->fact_mark || !c->pred_stack || !c->is_counter || !c->if_of || !c->vname || !c->su)
    goto fail;
  scan_program(c);
  if (cg_analyse(c) != VYRE_OK || cg_async_analyse(c) != VYRE_OK) goto fail;
  *out = c;
  return VYRE_OK;

fail:
  ctx_free(c);
  return vyre_error_set(err, VYRE_OUT_OF_MEMORY, 0, oom);
}

/* The body after the prologue: the elementwise path or the general one. */
static void lower_body(cg_ctx *c, cg_kernel_info *info) {
  if (!(c->o->flags & (CG_NO_FASTPATH | CG_INDIRECT)) && cg_elementwise_eligible(c)) {
    vyre__sb_reserve(&c->body, (size_t)c->n * 48u * CG_EPT);
    info->grid_mode = CG_GRID_ELEMENTWISE;
    info->elements_per_thread = CG_EPT;
    cg_elementwise_body(c);
  } else {
    c->mode = CG_MODE_GENERAL;
    c->copy = 0;
    cg_mma_prologue(c);
    cg_lower_range(c, 0, c->n);
  }
}

/* The header (written last: it declares how many registers were used)
 * goes into the `gap` bytes left in front of the body.  *ptx: the whole
 * text, taken from c. */
static vyre_status finish_text(cg_ctx *c, const cg_kernel_info *info, size_t gap, char **ptx,
                               size_t *length) {
  static const char oom[] = "codegen: out of host memory for the PTX text. Fix: free host memory";
  vyre__sb_puts(&c->body, "\texit;\n}\n");
  strbuf head;
  vyre__sb_init(&head);
  assemble_header(c, &head, info);
  if (head.failed || c->body.failed || c->funcs.failed) {
    vyre__sb_free(&head);
    return vyre_error_set(c->err, VYRE_OUT_OF_MEMORY, 0, oom);
  }
  if (head.len <= gap) {
    /* The header at the front, the body moved down over the rest of the
     * gap (with its NUL): the text carries no padding. */
    size_t body_len = c->body.len - gap;
    memcpy(c->body.data, head.data, head.len);
    memmove(c->body.data + head.len, c->body.data + gap, body_len + 1);
    c->body.len = head.len + body_len;
    *ptx = vyre__sb_take(&c->body, length);
  } else {
    /* Large math functions: header + body in a new buffer. */
    vyre__sb_append(&head, c->body.data + gap, c->body.len - gap);
    *ptx = vyre__sb_take(&head, length);
  }
  vyre__sb_free(&head);
  if (!*ptx) return vyre_error_set(c->err, VYRE_OUT_OF_MEMORY, 0, oom);
  return VYRE_OK;
}

vyre_status cg_emit_ptx(const vyre_program *program, const cg_options *options, char **ptx,
                        size_t *length, cg_kernel_info *info, vyre_error *err) {
  if (ptx) *ptx = NULL;
  if (length) *length = 0;
  if (!program || !options || !ptx || !info)
    return vyre_error_set(err, VYRE_INVALID_ARGUMENT, 0,
                          "codegen: program, options, ptx and info must not be NULL. Fix: pass "
                          "a decoded program, options and output pointers");
  memset(info, 0, sizeof *info);
  vyre_status st = check_options(options, info, err);
  if (st == VYRE_OK) st = cg_mma_check(program, options, err);
  if (st != VYRE_OK) return st;
  cg_ctx *c;
  st = ctx_new(program, options, err, &c);
  if (st != VYRE_OK) return st;
  kernel_info(c, info);

  /* About 48 bytes of PTX per instruction: one allocation instead of a
   * chain of doublings. */
  vyre__sb_reserve(&c->body, 4096 + (size_t)c->n * 64u);
  /* A gap for the header in front of the body (finish_text): no second
   * buffer for the whole text. */
  size_t gap = 2048u + 40u * program->buffer_count;
  for (size_t k = 0; k < gap; k += 64)
    vyre__sb_append(&c->body, "                                                                ",
                    gap - k < 64 ? gap - k : 64);
  emit_prologue(c);
  lower_body(c, info);
  st = c->st ? c->st : finish_text(c, info, gap, ptx, length);
  ctx_free(c);
  if (st != VYRE_OK && length) *length = 0;
  return st;
}

int cg_elementwise_query(const vyre_program *program, const cg_options *options) {
  if (!program || !options || (options->flags & (CG_NO_FASTPATH | CG_INDIRECT))) return 0;
  cg_kernel_info info;
  memset(&info, 0, sizeof info);
  if (check_options(options, &info, NULL) != VYRE_OK) return 0;
  cg_ctx *c;
  if (ctx_new(program, options, NULL, &c) != VYRE_OK) return 0;
  int ok = cg_elementwise_eligible(c);
  ctx_free(c);
  return ok;
}
