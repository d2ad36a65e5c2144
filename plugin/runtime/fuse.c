/* fuse.c -- one program from consecutive elementwise steps: their bodies in order over shared buffer slots, guards turned inside out (fuse.h). */
#include "fuse.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "vyre/vyre_support.h"

/* A slot's declaration, merged over the steps that bind it. */
typedef struct slot_decl {
  int seen, writes, reads_only, all_uniform;
  uint32_t elem_type, count;
} slot_decl;

/* What fusing one step needs: the builder, the step, its value map. */
typedef struct fuse_ctx {
  vyre_builder *b;
  const vyre_program *p;
  const uint32_t *slot; /* by kernel_index */
  uint32_t *val;        /* step value id -> fused value id */
  uint32_t local_base;
} fuse_ctx;

static vyre_status unsupported(vyre_error *err, const char *why, uint32_t step) {
  return vyre_error_set(err, VYRE_UNSUPPORTED, 0, "fuse: step %u %s", step, why);
}

/* Merge every step's buffer declarations into one per slot. */
static vyre_status merge_decls(const vc_fuse_step *steps, uint32_t n, uint32_t slots,
                               slot_decl *d, vyre_error *err) {
  for (uint32_t s = 0; s < n; s++) {
    const vyre_program *p = steps[s].program;
    for (uint32_t i = 0; i < p->buffer_count; i++) {
      const vyre_buffer_info *bi = &p->buffers[i];
      if (bi->role == VYRE_ROLE_SHARED)
        return unsupported(err, "has a workgroup buffer", s);
      uint32_t k = steps[s].slot[bi->kernel_index];
      if (k >= slots) return unsupported(err, "binds a buffer to no slot", s);
      slot_decl *x = &d[k];
      if (!x->seen) {
        x->seen = 1;
        x->elem_type = bi->decl.elem_type;
        x->count = bi->decl.count;
        x->all_uniform = 1;
      } else if (x->elem_type != bi->decl.elem_type || x->count != bi->decl.count) {
        return unsupported(err, "declares a shared buffer with another element type or count",
                           s);
      }
      if (bi->is_output) x->writes = 1;
      if (bi->decl.access != VYRE_ACCESS_UNIFORM) x->all_uniform = 0;
    }
  }
  for (uint32_t k = 0; k < slots; k++)
    if (!d[k].seen) return vyre_error_set(err, VYRE_INTERNAL, 0, "fuse: slot %u is unused", k);
  return VYRE_OK;
}

/* The negation of an early-exit condition ("gid >= buflen(b)", "buflen(b)
 * <= gid", or a disjunction of such) in the positive form the elementwise
 * path reads as a bound (docs/codegen.md): emitted after the step's own
 * values, so every operand is mapped.  UINT32_MAX when cond has another
 * shape. */
static uint32_t negate_guard(fuse_ctx *f, uint32_t cond, int depth) {
  const vyre_inst *in = &f->p->insts[cond];
  if (depth > 8) return UINT32_MAX;
  vyre_op op;
  switch (in->op) {
  case VYRE_OP_GE: op = VYRE_OP_LT; break;
  case VYRE_OP_LE: op = VYRE_OP_GT; break;
  case VYRE_OP_LOGICAL_OR: op = VYRE_OP_LOGICAL_AND; break;
  case VYRE_OP_OR: op = VYRE_OP_AND; break;
  default: return UINT32_MAX;
  }
  if (op == VYRE_OP_LT || op == VYRE_OP_GT)
    return vyre_b_inst(f->b, op, in->type, in->mod, f->val[in->a], f->val[in->b], 0, 0);
  if (in->op == VYRE_OP_OR && f->p->value_type[cond] != VYRE_T_BOOL) return UINT32_MAX;
  uint32_t x = negate_guard(f, in->a, depth + 1);
  uint32_t y = x == UINT32_MAX ? UINT32_MAX : negate_guard(f, in->b, depth + 1);
  if (y == UINT32_MAX) return UINT32_MAX;
  return vyre_b_inst(f->b, op, in->type, in->mod, x, y, 0, 0);
}

/* Instruction i with its operands mapped: values renumbered, slots moved
 * past the earlier steps' locals, buffers to their fused slots. */
static uint32_t emit_mapped(fuse_ctx *f, uint32_t i) {
  const vyre_inst *in = &f->p->insts[i];
  const vyre_op_info *oi = vyre_op_lookup(in->op);
  const vyre_op_class_info *ci = vyre_op_class_lookup(oi->op_class);
  uint32_t field[4] = {in->a, in->b, in->c, in->d};
  for (int k = 0; k < 4; k++) {
    switch (ci->operand[k]) {
    case VYRE_OPND_VALUE: field[k] = f->val[field[k]]; break;
    case VYRE_OPND_SLOT: field[k] += f->local_base; break;
    case VYRE_OPND_BUFFER: field[k] = f->slot[f->p->buffers[field[k]].kernel_index]; break;
    default: break;
    }
  }
  return vyre_b_inst(f->b, (vyre_op)in->op, in->type, in->mod, field[0], field[1], field[2],
                     field[3]);
}

/* Append step s's body; its early-exit guards become ifs closed at the
 * step's end. */
static vyre_status fuse_body(fuse_ctx *f, uint32_t s, vyre_error *err) {
  const vyre_program *p = f->p;
  uint32_t open = 0;
  for (uint32_t i = 0; i < p->inst_count; i++) {
    const vyre_inst *in = &p->insts[i];
    f->val[i] = UINT32_MAX;
    if (in->op == VYRE_OP_IF && i + 2 < p->inst_count && p->insts[i + 1].op == VYRE_OP_RETURN &&
        p->match[i] == i + 2 && p->depth[i] == 0) {
      uint32_t pos = negate_guard(f, in->a, 0);
      if (pos == UINT32_MAX) return unsupported(err, "has an early exit of another shape", s);
      vyre_b_if(f->b, pos);
      open++;
      i += 2; /* the return and its end */
      continue;
    }
    if (in->op == VYRE_OP_RETURN) return unsupported(err, "returns outside an early exit", s);
    uint32_t v = emit_mapped(f, i);
    if (p->value_type[i] != VYRE_T_VOID) f->val[i] = v;
  }
  while (open--) vyre_b_end(f->b);
  return VYRE_OK;
}

static void declare(vyre_builder *b, const slot_decl *d, uint32_t slots) {
  for (uint32_t k = 0; k < slots; k++) {
    char name[16];
    snprintf(name, sizeof name, "s%u", k);
    vyre_access acc = d[k].writes        ? VYRE_ACCESS_READ_WRITE
                      : d[k].all_uniform ? VYRE_ACCESS_UNIFORM
                                         : VYRE_ACCESS_READ_ONLY;
    vyre_b_buffer(b, name, k, acc, (vyre_type)d[k].elem_type, d[k].count, 0);
  }
}

vyre_status vc_fuse_build(const vc_fuse_step *steps, uint32_t n, uint32_t slots,
                          const uint32_t wg[3], void **bytes, size_t *size, vyre_error *err) {
  *bytes = NULL;
  *size = 0;
  if (slots == 0 || slots > VYRE_MAX_BUFFERS)
    return vyre_error_set(err, VYRE_UNSUPPORTED, 0, "fuse: %u buffer slots", slots);
  slot_decl d[VYRE_MAX_BUFFERS];
  memset(d, 0, sizeof d);
  vyre_status st = merge_decls(steps, n, slots, d, err);
  if (st != VYRE_OK) return st;
  uint32_t most = 1;
  for (uint32_t s = 0; s < n; s++)
    if (steps[s].program->inst_count > most) most = steps[s].program->inst_count;
  fuse_ctx f;
  memset(&f, 0, sizeof f);
  f.b = vyre_builder_new(wg[0], wg[1], wg[2]);
  f.val = malloc((size_t)most * sizeof *f.val);
  if (!f.b || !f.val) {
    st = vyre_error_set(err, VYRE_OUT_OF_MEMORY, 0, "fuse: out of host memory");
    goto done;
  }
  declare(f.b, d, slots);
  uint32_t locals = 0;
  for (uint32_t s = 0; s < n && st == VYRE_OK; s++) {
    f.p = steps[s].program;
    f.slot = steps[s].slot;
    f.local_base = locals;
    locals += f.p->local_count;
    if (locals > VYRE_MAX_LOCALS) {
      st = unsupported(err, "brings the locals over the limit", s);
      break;
    }
    for (uint32_t l = 0; l < f.p->local_count; l++)
      vyre_b_local(f.b, (vyre_type)f.p->local_types[l]);
    st = fuse_body(&f, s, err);
  }
  if (st == VYRE_OK) st = vyre_builder_finish(f.b, bytes, size, err);
done:
  vyre_builder_free(f.b);
  free(f.val);
  return st;
}
