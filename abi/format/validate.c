/* validate.c -- the checks of one instruction: operands, types, blocks, locals and the features it needs (internal.h). */
#include <string.h>

#include "internal.h"

/* Local `slot` is not a matrix local: get, let, assign and loop take
 * value locals only. */
static vyre_status not_matrix(decoder *d, uint32_t i, uint32_t slot) {
  uint32_t t = d->p->local_types[slot];
  if (!vyre_type_matrix_use(t)) return VYRE_OK;
  return fail(d, VYRE_INVALID_PROGRAM,
              INST_FMT "local %u is a matrix local (%s); get, let, assign and loop take value "
                       "locals only. Fix: set it with mma_fill, mma_load or mma and write it "
                       "out with mma_store",
              i, mnem(&d->p->insts[i]), slot, vyre_type_name(t));
}

static vyre_status define_slot(decoder *d, uint32_t i, uint32_t slot, uint8_t how) {
  vyre_status st = vyre__operand_slot(d, i, slot, 0);
  if (st) return st;
  if (d->local_def[slot])
    return fail(d, VYRE_INVALID_PROGRAM,
                INST_FMT "local %u is declared twice. Fix: each local has exactly one let (or "
                         "loop); use assign to change it",
                i, mnem(&d->p->insts[i]), slot);
  d->local_def[slot] = how;
  d->local_scope[slot] = d->depth ? d->stack[d->depth - 1] : NONE;
  return VYRE_OK;
}

static vyre_status push_block(decoder *d, uint32_t i) {
  if (d->depth >= VYRE_MAX_NESTING)
    return fail(d, VYRE_LIMIT,
                INST_FMT "blocks nest deeper than %u. Fix: flatten the control flow", i,
                mnem(&d->p->insts[i]), VYRE_MAX_NESTING);
  d->stack[d->depth++] = i;
  d->open[i] = 1;
  return VYRE_OK;
}

/* Per-class checks.  Each checks the operands its class's schema
 * (VYRE_OP_CLASS_MAP) gives it, in the order the messages promise, and
 * sets the features the class implies; check_inst does what the schema
 * says for every class (unused fields zero, value or statement, op-flag
 * features). */
typedef vyre_status (*class_check)(decoder *d, uint32_t i, const vyre_op_info *info);

static int type_in_mask(const vyre_op_info *info, uint32_t t) {
  return t < VYRE_T_COUNT_ && (info->type_mask & VYRE_TBIT(t)) != 0;
}

static void need(vyre_program *p, uint32_t feature, uint64_t cap) {
  p->features |= feature;
  p->required_caps |= cap;
}

/* The range check of mod, by the class's mod kind. */
static vyre_status check_mod(decoder *d, uint32_t i, const vyre_op_info *info) {
  const vyre_inst *in = &d->p->insts[i];
  switch ((vyre_mod_kind)vyre_op_class_lookup(info->op_class)->mod) {
  case VYRE_MOD_AXIS:
    if (in->mod > 2)
      return fail(d, VYRE_INVALID_PROGRAM, INST_FMT "axis %u is not x, y or z. Fix: use "
                  "axis 0..2", i, mnem(in), in->mod);
    break;
  case VYRE_MOD_ORDER:
    if (in->mod >= VYRE_ORDER_COUNT_)
      return fail(d, VYRE_INVALID_PROGRAM, INST_FMT "memory order %u is unknown. Fix: use "
                  "relaxed acquire release acq_rel or seq_cst", i, mnem(in), in->mod);
    break;
  case VYRE_MOD_REDUCE:
    if (in->mod >= VYRE_REDUCE_COUNT_)
      return fail(d, VYRE_INVALID_PROGRAM, INST_FMT "reduction kind %u is unknown. Fix: use "
                  "add (0), min (1), max (2), and (3), or (4) or xor (5)", i, mnem(in), in->mod);
    break;
  case VYRE_MOD_SCOPE:
    if (in->mod > VYRE_BARRIER_GRID)
      return fail(d, VYRE_INVALID_PROGRAM, INST_FMT "barrier scope %u is unknown. Fix: use "
                  "workgroup (0) or grid (1)", i, mnem(in), in->mod);
    break;
  case VYRE_MOD_LAYOUT:
    if (in->mod > VYRE_LAYOUT_COL)
      return fail(d, VYRE_INVALID_PROGRAM, INST_FMT "tile layout %u is unknown. Fix: use "
                  "row (0) or col (1)", i, mnem(in), in->mod);
    break;
  case VYRE_MOD_NONE: break;
  }
  return VYRE_OK;
}

/* A result type the class fixes (u32, f32) but the instruction differs. */
static vyre_status want_result(decoder *d, uint32_t i, uint32_t want, const char *what,
                               const char *fix) {
  if (d->p->insts[i].type == want) return VYRE_OK;
  return fail(d, VYRE_INVALID_PROGRAM, INST_FMT "%s must be %s. Fix: %s", i,
              mnem(&d->p->insts[i]), what, vyre_type_name(want), fix);
}

static vyre_status check_const(decoder *d, uint32_t i, const vyre_op_info *info) {
  const vyre_inst *in = &d->p->insts[i];
  uint32_t t = in->type;
  if (!type_in_mask(info, t))
    return fail(d, VYRE_INVALID_PROGRAM, INST_FMT "type %u is not a value type. Fix: use %s", i,
                mnem(in), t, TYPE_LIST(VYRE_TM_VALUE, " or "));
  if (t != VYRE_T_U64 && t != VYRE_T_I64 && in->b != 0)
    return fail(d, VYRE_INVALID_PROGRAM, INST_FMT "a 32-bit constant has high bits 0x%x. Fix: "
                "zero operand b", i, mnem(in), in->b);
  if (t == VYRE_T_BOOL && in->a > 1)
    return fail(d, VYRE_INVALID_PROGRAM, INST_FMT "bool constant %u is not 0 or 1. Fix: use "
                "true or false", i, mnem(in), in->a);
  if (t == VYRE_T_F32 && vyre_f32_canonical_bits(in->a) != in->a)
    return fail(d, VYRE_INVALID_PROGRAM, INST_FMT "f32 constant 0x%08x is not canonical "
                "(NaN must be 0x7fc00000, subnormals are flushed). Fix: write the canonical "
                "value", i, mnem(in), in->a);
  return VYRE_OK;
}

static vyre_status check_local_get(decoder *d, uint32_t i, const vyre_op_info *info) {
  (void)info;
  vyre_program *p = d->p;
  const vyre_inst *in = &p->insts[i];
  vyre_status st;
  if ((st = vyre__operand_slot(d, i, in->a, 0)) || (st = not_matrix(d, i, in->a)) ||
      (st = vyre__operand_slot(d, i, in->a, 1)))
    return st;
  if (in->type != p->local_types[in->a])
    return fail(d, VYRE_INVALID_PROGRAM, INST_FMT "type %s differs from local %u's type %s. "
                "Fix: use the local's type", i, mnem(in), vyre_type_name(in->type), in->a,
                vyre_type_name(p->local_types[in->a]));
  return VYRE_OK;
}

static vyre_status check_load(decoder *d, uint32_t i, const vyre_op_info *info) {
  (void)info;
  const vyre_inst *in = &d->p->insts[i];
  const vyre_buffer_info *buf;
  vyre_status st;
  if ((st = vyre__operand_buffer(d, i, in->a, &buf))) return st;
  if (buf->decl.access == VYRE_ACCESS_WRITE_ONLY)
    return fail(d, VYRE_INVALID_PROGRAM, INST_FMT "buffer '%s' is write-only. Fix: declare "
                "it rw (with the output flag if the backend should allocate it)", i, mnem(in),
                buf->name);
  if ((st = vyre__operand(d, i, "index", in->b, VYRE_T_U32))) return st;
  uint32_t yields = vyre_type_compute(buf->decl.elem_type);
  if (in->type != yields)
    return fail(d, VYRE_INVALID_PROGRAM, INST_FMT "type %s, but loading '%s' (%s) yields %s. "
                "Fix: set the load's type to %s", i, mnem(in), vyre_type_name(in->type),
                buf->name, vyre_type_name(buf->decl.elem_type), vyre_type_name(yields),
                vyre_type_name(yields));
  return VYRE_OK;
}

static vyre_status check_buf_len(decoder *d, uint32_t i, const vyre_op_info *info) {
  (void)info;
  const vyre_buffer_info *buf;
  vyre_status st = vyre__operand_buffer(d, i, d->p->insts[i].a, &buf);
  return st ? st : want_result(d, i, VYRE_T_U32, "type", "buflen is u32");
}

static vyre_status check_builtin(decoder *d, uint32_t i, const vyre_op_info *info) {
  vyre_status st = want_result(d, i, VYRE_T_U32, "type", "ids are u32");
  if (st) return st;
  return (info->flags & VYRE_OPF_AXIS) ? check_mod(d, i, info) : VYRE_OK;
}

/* The result of binary/compare/unary/predicate: bool for the classes whose
 * rule says so, else the operand type. */
static vyre_status check_result_rule(decoder *d, uint32_t i, const vyre_op_info *info,
                                     uint32_t operand_type) {
  uint32_t t = d->p->insts[i].type;
  uint32_t want = vyre_op_class_lookup(info->op_class)->result == VYRE_RES_BOOL
                      ? (uint32_t)VYRE_T_BOOL
                      : operand_type;
  if (t == want) return VYRE_OK;
  return fail(d, VYRE_INVALID_PROGRAM, INST_FMT "result type %s should be %s. Fix: set the "
              "instruction type", i, mnem(&d->p->insts[i]), vyre_type_name(t),
              vyre_type_name(want));
}

static vyre_status check_binary(decoder *d, uint32_t i, const vyre_op_info *info) {
  const vyre_inst *in = &d->p->insts[i];
  uint32_t ta, tb;
  vyre_status st;
  if ((st = vyre__operand_value(d, i, "a", in->a, &ta)) || (st = vyre__operand_value(d, i, "b", in->b, &tb))) return st;
  if (ta != tb)
    return fail(d, VYRE_INVALID_PROGRAM, INST_FMT "operands have types %s and %s. Fix: cast "
                "one so both match", i, mnem(in), vyre_type_name(ta), vyre_type_name(tb));
  if (!type_in_mask(info, ta))
    return fail(d, VYRE_INVALID_PROGRAM, INST_FMT "does not accept %s operands. Fix: see "
                "docs/program-format.md for the types each op takes", i, mnem(in),
                vyre_type_name(ta));
  return check_result_rule(d, i, info, ta);
}

static vyre_status check_unary(decoder *d, uint32_t i, const vyre_op_info *info) {
  const vyre_inst *in = &d->p->insts[i];
  uint32_t ta;
  vyre_status st = vyre__operand_value(d, i, "a", in->a, &ta);
  if (st) return st;
  if (!type_in_mask(info, ta))
    return fail(d, VYRE_INVALID_PROGRAM, INST_FMT "does not accept a %s operand. Fix: see "
                "docs/program-format.md for the types each op takes", i, mnem(in),
                vyre_type_name(ta));
  return check_result_rule(d, i, info, ta);
}

static vyre_status check_select(decoder *d, uint32_t i, const vyre_op_info *info) {
  (void)info;
  const vyre_inst *in = &d->p->insts[i];
  uint32_t tb, tc;
  vyre_status st;
  if ((st = vyre__operand(d, i, "condition", in->a, VYRE_T_BOOL))) return st;
  if ((st = vyre__operand_value(d, i, "b", in->b, &tb)) || (st = vyre__operand_value(d, i, "c", in->c, &tc))) return st;
  if (tb != tc || in->type != tb)
    return fail(d, VYRE_INVALID_PROGRAM, INST_FMT "arms have types %s and %s, result %s. Fix: "
                "both arms and the result share one type", i, mnem(in), vyre_type_name(tb),
                vyre_type_name(tc), vyre_type_name(in->type));
  return VYRE_OK;
}

static vyre_status check_cast(decoder *d, uint32_t i, const vyre_op_info *info) {
  const vyre_inst *in = &d->p->insts[i];
  uint32_t ta;
  vyre_status st = vyre__operand_value(d, i, "a", in->a, &ta);
  if (st) return st;
  if (!type_in_mask(info, in->type))
    return fail(d, VYRE_INVALID_PROGRAM, INST_FMT "target type %s is not a value type. Fix: "
                "cast to %s (narrow types are storage only)", i, mnem(in),
                vyre_type_name(in->type), TYPE_LIST(VYRE_TM_VALUE, " or "));
  return VYRE_OK;
}

static vyre_status check_fma(decoder *d, uint32_t i, const vyre_op_info *info) {
  (void)info;
  const vyre_inst *in = &d->p->insts[i];
  vyre_status st;
  if ((st = vyre__operand(d, i, "a", in->a, VYRE_T_F32)) || (st = vyre__operand(d, i, "b", in->b, VYRE_T_F32)) ||
      (st = vyre__operand(d, i, "c", in->c, VYRE_T_F32)))
    return st;
  return want_result(d, i, VYRE_T_F32, "result type", "fma is f32");
}

/* ATOMIC and ATOMIC_CAS (which also has d = desired). */
static vyre_status check_atomic(decoder *d, uint32_t i, const vyre_op_info *info) {
  vyre_program *p = d->p;
  const vyre_inst *in = &p->insts[i];
  uint32_t t = in->type;
  const vyre_buffer_info *buf;
  vyre_status st;
  if ((st = vyre__operand_buffer(d, i, in->a, &buf))) return st;
  if (buf->decl.access != VYRE_ACCESS_READ_WRITE && buf->decl.access != VYRE_ACCESS_WORKGROUP)
    return fail(d, VYRE_INVALID_PROGRAM, INST_FMT "buffer '%s' is %s; atomics need rw or "
                "workgroup. Fix: declare it rw (add the output flag for a zeroed output)", i,
                mnem(in), buf->name, vyre_access_name(buf->decl.access));
  if (!type_in_mask(info, buf->decl.elem_type))
    return fail(d, VYRE_INVALID_PROGRAM, INST_FMT "buffer '%s' holds %s; atomics work on u32 "
                "i32 u64 i64. Fix: change the element type", i, mnem(in), buf->name,
                vyre_type_name(buf->decl.elem_type));
  if (t != buf->decl.elem_type)
    return fail(d, VYRE_INVALID_PROGRAM, INST_FMT "type %s differs from buffer '%s' (%s). "
                "Fix: set the type to the element type", i, mnem(in), vyre_type_name(t),
                buf->name, vyre_type_name(buf->decl.elem_type));
  if ((st = vyre__operand(d, i, "index", in->b, VYRE_T_U32)) || (st = vyre__operand(d, i, "value", in->c, t)))
    return st;
  if (vyre_op_class_lookup(info->op_class)->operand[3] == VYRE_OPND_VALUE &&
      (st = vyre__operand(d, i, "desired", in->d, t)))
    return st;
  if ((st = check_mod(d, i, info))) return st;
  need(p, VYRE_FEAT_ATOMIC, VYRE_CAP_ATOMICS);
  if (t == VYRE_T_U64 || t == VYRE_T_I64) need(p, VYRE_FEAT_ATOMIC64, VYRE_CAP_ATOMIC64);
  return VYRE_OK;
}

static vyre_status check_ballot(decoder *d, uint32_t i, const vyre_op_info *info) {
  (void)info;
  vyre_status st = vyre__operand(d, i, "a", d->p->insts[i].a, VYRE_T_BOOL);
  return st ? st : want_result(d, i, VYRE_T_U32, "result type", "a ballot is a u32 lane mask");
}

static vyre_status check_shuffle(decoder *d, uint32_t i, const vyre_op_info *info) {
  (void)info;
  const vyre_inst *in = &d->p->insts[i];
  vyre_status st;
  if ((st = vyre__operand(d, i, "value", in->a, in->type)) ||
      (st = vyre__operand(d, i, "lane", in->b, VYRE_T_U32)))
    return st;
  return VYRE_OK;
}

static vyre_status check_reduce(decoder *d, uint32_t i, const vyre_op_info *info) {
  const vyre_inst *in = &d->p->insts[i];
  uint32_t t = in->type;
  vyre_status st;
  if ((st = vyre__operand(d, i, "value", in->a, t)) || (st = check_mod(d, i, info))) return st;
  if (!type_in_mask(info, t) || (t == VYRE_T_F32 && in->mod >= VYRE_REDUCE_AND))
    return fail(d, VYRE_INVALID_PROGRAM, INST_FMT "reduce %s over %s is not defined. Fix: "
                "add/min/max take integers or f32; and/or/xor take integers", i, mnem(in),
                vyre_reduce_name(in->mod), vyre_type_name(t));
  return VYRE_OK;
}

static vyre_status check_let(decoder *d, uint32_t i, const vyre_op_info *info) {
  (void)info;
  const vyre_inst *in = &d->p->insts[i];
  uint32_t tb;
  vyre_status st;
  if ((st = vyre__operand_value(d, i, "value", in->b, &tb))) return st;
  if ((st = vyre__operand_slot(d, i, in->a, 0)) || (st = not_matrix(d, i, in->a)) ||
      (st = define_slot(d, i, in->a, 1)))
    return st;
  return vyre__operand_type(d, i, "value", tb, d->p->local_types[in->a]);
}

static vyre_status check_assign(decoder *d, uint32_t i, const vyre_op_info *info) {
  (void)info;
  const vyre_inst *in = &d->p->insts[i];
  uint32_t tb;
  vyre_status st;
  if ((st = vyre__operand_slot(d, i, in->a, 0)) || (st = not_matrix(d, i, in->a)) ||
      (st = vyre__operand_slot(d, i, in->a, 1)))
    return st;
  if (d->local_def[in->a] == 2)
    return fail(d, VYRE_INVALID_PROGRAM, INST_FMT "local %u is a loop counter. Fix: loop "
                "counters are read-only; copy it into another local", i, mnem(in), in->a);
  if ((st = vyre__operand_value(d, i, "value", in->b, &tb))) return st;
  return vyre__operand_type(d, i, "value", tb, d->p->local_types[in->a]);
}

static vyre_status check_store(decoder *d, uint32_t i, const vyre_op_info *info) {
  (void)info;
  const vyre_inst *in = &d->p->insts[i];
  const vyre_buffer_info *buf;
  vyre_status st;
  if ((st = vyre__operand_buffer(d, i, in->a, &buf))) return st;
  if (buf->decl.access == VYRE_ACCESS_READ_ONLY || buf->decl.access == VYRE_ACCESS_UNIFORM)
    return fail(d, VYRE_INVALID_PROGRAM, INST_FMT "buffer '%s' is %s. Fix: declare it rw or "
                "wo to write it", i, mnem(in), buf->name, vyre_access_name(buf->decl.access));
  if ((st = vyre__operand(d, i, "index", in->b, VYRE_T_U32)) ||
      (st = vyre__operand(d, i, "value", in->c, vyre_type_compute(buf->decl.elem_type))))
    return st;
  return VYRE_OK;
}

static vyre_status check_if(decoder *d, uint32_t i, const vyre_op_info *info) {
  (void)info;
  vyre_status st = vyre__operand(d, i, "condition", d->p->insts[i].a, VYRE_T_BOOL);
  return st ? st : push_block(d, i);
}

static vyre_status check_else(decoder *d, uint32_t i, const vyre_op_info *info) {
  (void)info;
  vyre_program *p = d->p;
  uint32_t top = d->depth ? d->stack[d->depth - 1] : NONE;
  if (top == NONE || p->insts[top].op != VYRE_OP_IF || p->match[top] != NONE)
    return fail(d, VYRE_INVALID_PROGRAM, INST_FMT "does not follow an open if. Fix: else "
                "belongs to the innermost if, once", i, mnem(&p->insts[i]));
  p->match[top] = i;
  d->open[top] = 0;
  d->depth--;
  return push_block(d, i);
}

static vyre_status check_end(decoder *d, uint32_t i, const vyre_op_info *info) {
  (void)info;
  vyre_program *p = d->p;
  if (!d->depth)
    return fail(d, VYRE_INVALID_PROGRAM, INST_FMT "closes no block. Fix: remove the stray "
                "end", i, mnem(&p->insts[i]));
  uint32_t top = d->stack[--d->depth];
  d->open[top] = 0;
  p->match[i] = top;
  if (p->insts[top].op == VYRE_OP_ELSE) {
    /* The IF points at its ELSE; the ELSE points at this END. */
    p->match[top] = i;
  } else {
    if (p->match[top] == NONE) p->match[top] = i;
  }
  return VYRE_OK;
}

static vyre_status check_loop(decoder *d, uint32_t i, const vyre_op_info *info) {
  (void)info;
  vyre_program *p = d->p;
  const vyre_inst *in = &p->insts[i];
  vyre_status st;
  if ((st = vyre__operand_slot(d, i, in->a, 0)) || (st = not_matrix(d, i, in->a))) return st;
  uint32_t lt = p->local_types[in->a];
  if (lt != VYRE_T_U32 && lt != VYRE_T_I32)
    return fail(d, VYRE_INVALID_PROGRAM, INST_FMT "loop counter local %u is %s. Fix: loop "
                "counters are u32 or i32", i, mnem(in), in->a, vyre_type_name(lt));
  if ((st = vyre__operand(d, i, "start", in->b, lt)) || (st = vyre__operand(d, i, "end", in->c, lt)))
    return st;
  if ((st = push_block(d, i))) return st;
  if ((st = define_slot(d, i, in->a, 2))) return st;
  p->features |= VYRE_FEAT_LOOP;
  return VYRE_OK;
}

static vyre_status check_block(decoder *d, uint32_t i, const vyre_op_info *info) {
  (void)info;
  return push_block(d, i);
}

static vyre_status check_return(decoder *d, uint32_t i, const vyre_op_info *info) {
  (void)i, (void)info;
  d->p->features |= VYRE_FEAT_RETURN;
  return VYRE_OK;
}

static vyre_status check_barrier(decoder *d, uint32_t i, const vyre_op_info *info) {
  const vyre_inst *in = &d->p->insts[i];
  vyre_status st = check_mod(d, i, info);
  if (st) return st;
  if (in->mod == VYRE_BARRIER_GRID) {
    if (d->depth)
      return fail(d, VYRE_INVALID_PROGRAM, INST_FMT "a grid barrier must be at the top level "
                  "of the body. Fix: move it out of every if/loop/block", i, mnem(in));
    d->grid_segment++;
    need(d->p, VYRE_FEAT_GRID_BARRIER, VYRE_CAP_GRID_BARRIER);
  } else {
    need(d->p, VYRE_FEAT_BARRIER, VYRE_CAP_BARRIER);
  }
  return VYRE_OK;
}

static vyre_status check_trap(decoder *d, uint32_t i, const vyre_op_info *info) {
  (void)i, (void)info;
  need(d->p, VYRE_FEAT_TRAP, VYRE_CAP_TRAP);
  return VYRE_OK;
}

/* The four MMA classes: the layout of mma_load and mma_store, then mma.c. */
static vyre_status check_mma_class(decoder *d, uint32_t i, const vyre_op_info *info) {
  vyre_status st = check_mod(d, i, info);
  return st ? st : vyre__check_mma(d, i, info);
}

static const class_check class_checks[VYRE_OC_COUNT_] = {
    [VYRE_OC_CONST] = check_const,       [VYRE_OC_LOCAL_GET] = check_local_get,
    [VYRE_OC_LOAD] = check_load,         [VYRE_OC_BUF_LEN] = check_buf_len,
    [VYRE_OC_BUILTIN] = check_builtin,   [VYRE_OC_BINARY] = check_binary,
    [VYRE_OC_COMPARE] = check_binary,    [VYRE_OC_UNARY] = check_unary,
    [VYRE_OC_PREDICATE] = check_unary,   [VYRE_OC_SELECT] = check_select,
    [VYRE_OC_CAST] = check_cast,         [VYRE_OC_FMA] = check_fma,
    [VYRE_OC_ATOMIC] = check_atomic,     [VYRE_OC_ATOMIC_CAS] = check_atomic,
    [VYRE_OC_BALLOT] = check_ballot,     [VYRE_OC_SHUFFLE] = check_shuffle,
    [VYRE_OC_REDUCE] = check_reduce,     [VYRE_OC_LET] = check_let,
    [VYRE_OC_ASSIGN] = check_assign,     [VYRE_OC_STORE] = check_store,
    [VYRE_OC_IF] = check_if,             [VYRE_OC_ELSE] = check_else,
    [VYRE_OC_END] = check_end,           [VYRE_OC_LOOP] = check_loop,
    [VYRE_OC_BLOCK] = check_block,       [VYRE_OC_RETURN] = check_return,
    [VYRE_OC_BARRIER] = check_barrier,   [VYRE_OC_TRAP] = check_trap,
    [VYRE_OC_MMA_FILL] = check_mma_class, [VYRE_OC_MMA_LOAD] = check_mma_class,
    [VYRE_OC_MMA] = check_mma_class,     [VYRE_OC_MMA_STORE] = check_mma_class,
};

/* The checks of one instruction; sets value_type[i] (contract in internal.h). */
vyre_status vyre__validate_inst(decoder *d, uint32_t i) {
  vyre_program *p = d->p;
  const vyre_inst *in = &p->insts[i];
  const vyre_op_info *info = vyre_op_lookup(in->op);
  if (!info)
    return fail(d, VYRE_INVALID_PROGRAM,
                "invalid program: instruction %u: unknown op id %u. Fix: the program was made "
                "for a newer format or is corrupt; see `vyre info` for supported ops",
                i, in->op);
  vyre_status st = class_checks[info->op_class](d, i, info);
  if (st) return st;
  if (info->flags & VYRE_OPF_SUBGROUP) need(p, VYRE_FEAT_SUBGROUP, VYRE_CAP_SUBGROUP);
  if (info->flags & VYRE_OPF_TRANSCENDENTAL) need(p, VYRE_FEAT_TRANSCENDENTAL, VYRE_CAP_TRANSCENDENTAL);
  if (info->flags & VYRE_OPF_MMA) need(p, VYRE_FEAT_MMA, VYRE_CAP_TENSOR_CORES);
  /* Canonical encoding: every field the class does not use is zero. */
  uint32_t used = vyre_op_fields(info);
  if ((!(used & VYRE_FIELD_A) && in->a) || (!(used & VYRE_FIELD_B) && in->b) ||
      (!(used & VYRE_FIELD_C) && in->c) || (!(used & VYRE_FIELD_D) && in->d) ||
      (!(used & VYRE_FIELD_TYPE) && in->type) || (!(used & VYRE_FIELD_MOD) && in->mod))
    return fail(d, VYRE_INVALID_PROGRAM,
                INST_FMT "sets an operand, type or modifier field it does not use. Fix: zero "
                         "unused fields (one program, one encoding)",
                i, mnem(in));
  int is_value = vyre_op_class_lookup(info->op_class)->result != VYRE_RES_NONE;
  p->value_type[i] = is_value ? (uint8_t)in->type : VYRE_T_VOID;
  return VYRE_OK;
}
