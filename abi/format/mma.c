/* mma.c -- the checks of the matrix multiply-accumulate ops: matrix locals, tile buffers, component types and the workgroup size (internal.h). */
#include "internal.h"

static const char *use_name(int use) {
  return use == VYRE_MAT_A ? "an A tile (mat_a_*)"
         : use == VYRE_MAT_B ? "a B tile (mat_b_*)"
                             : "an accumulator (mat_acc_f32 or mat_acc_i32)";
}

/* Operand `which` names local `slot` of a matrix type, of use `use` (0:
 * any); its type goes to *type.  Matrix locals need no let: they start
 * as zeros (docs/semantics.md). */
static vyre_status matrix_slot(decoder *d, uint32_t i, const char *which, uint32_t slot, int use,
                               uint32_t *type) {
  const vyre_program *p = d->p;
  const vyre_inst *in = &p->insts[i];
  vyre_status st = vyre__operand_slot(d, i, slot, 0);
  if (st) return st;
  uint32_t t = p->local_types[slot];
  int u = vyre_type_matrix_use(t);
  if (!u)
    return fail(d, VYRE_INVALID_PROGRAM,
                INST_FMT "operand %s = local %u is %s, not a matrix local. Fix: name a local "
                         "declared with a matrix type (mat_a_*, mat_b_*, mat_acc_*)",
                i, mnem(in), which, slot, vyre_type_name(t));
  if (use && u != use)
    return fail(d, VYRE_INVALID_PROGRAM,
                INST_FMT "operand %s = local %u is %s, but it must be %s. Fix: name %s local",
                i, mnem(in), which, slot, vyre_type_name(t), use_name(use), use_name(use));
  *type = t;
  return VYRE_OK;
}

/* inst.type is the component type `want` (of `what`, for the message). */
static vyre_status component_type(decoder *d, uint32_t i, uint32_t want, const char *what) {
  const vyre_inst *in = &d->p->insts[i];
  if (in->type == want) return VYRE_OK;
  return fail(d, VYRE_INVALID_PROGRAM,
              INST_FMT "type %s differs from %s's component type %s. Fix: set the type to %s "
                       "(the text form and the builder set it from the locals)",
              i, mnem(in), vyre_type_name(in->type), what, vyre_type_name(want),
              vyre_type_name(want));
}

/* The buffer of a tile holds the tile's component type or an integer
 * storage type of its size (vyre_mma_buffer_types): the bits are moved. */
static vyre_status tile_buffer(decoder *d, uint32_t i, const vyre_buffer_info *buf,
                               uint32_t slot, uint32_t type) {
  uint32_t comp = vyre_type_matrix_component(type);
  uint32_t ok = vyre_mma_buffer_types(comp);
  if (buf->decl.elem_type < 32 && (ok & VYRE_TBIT(buf->decl.elem_type))) return VYRE_OK;
  char list[96];
  return fail(d, VYRE_INVALID_PROGRAM,
              INST_FMT "buffer '%s' holds %s, but local %u (%s) has %s elements. Fix: use a "
                       "%s buffer (its bits are moved as %s), or a matrix local whose "
                       "component a %s buffer can hold",
              i, mnem(&d->p->insts[i]), buf->name, vyre_type_name(buf->decl.elem_type), slot,
              vyre_type_name(type), vyre_type_name(comp), vyre_type_list(ok, " or ", list, sizeof list),
              vyre_type_name(comp), vyre_type_name(buf->decl.elem_type));
}

/* mma_fill SLOT %value: an accumulator and a value of its component. */
static vyre_status check_fill(decoder *d, uint32_t i) {
  const vyre_inst *in = &d->p->insts[i];
  uint32_t t;
  vyre_status st;
  if ((st = matrix_slot(d, i, "a", in->a, VYRE_MAT_ACC, &t))) return st;
  uint32_t comp = vyre_type_matrix_component(t);
  if ((st = vyre__operand(d, i, "value", in->b, comp))) return st;
  return component_type(d, i, comp, "the accumulator");
}

/* mma_load SLOT BUFFER %index %stride: any tile, from a readable buffer
 * of its component type. */
static vyre_status check_load(decoder *d, uint32_t i) {
  const vyre_inst *in = &d->p->insts[i];
  const vyre_buffer_info *buf;
  uint32_t t;
  vyre_status st;
  if ((st = matrix_slot(d, i, "a", in->a, 0, &t)) ||
      (st = vyre__operand_buffer(d, i, in->b, &buf)))
    return st;
  if (buf->decl.access == VYRE_ACCESS_WRITE_ONLY)
    return fail(d, VYRE_INVALID_PROGRAM,
                INST_FMT "buffer '%s' is write-only. Fix: declare it rw (with the output flag "
                         "if the backend should allocate it)",
                i, mnem(in), buf->name);
  if ((st = tile_buffer(d, i, buf, in->a, t)) ||
      (st = vyre__operand(d, i, "index", in->c, VYRE_T_U32)) ||
      (st = vyre__operand(d, i, "stride", in->d, VYRE_T_U32)))
    return st;
  return component_type(d, i, vyre_type_matrix_component(t), "the tile");
}

/* mma D A B C: A and B of one input component, C and D its accumulator. */
static vyre_status check_mma(decoder *d, uint32_t i) {
  const vyre_inst *in = &d->p->insts[i];
  uint32_t td, ta, tb, tc;
  vyre_status st;
  if ((st = matrix_slot(d, i, "D", in->a, VYRE_MAT_ACC, &td)) ||
      (st = matrix_slot(d, i, "A", in->b, VYRE_MAT_A, &ta)) ||
      (st = matrix_slot(d, i, "B", in->c, VYRE_MAT_B, &tb)) ||
      (st = matrix_slot(d, i, "C", in->d, VYRE_MAT_ACC, &tc)))
    return st;
  uint32_t comp = vyre_type_matrix_component(ta);
  if (vyre_type_matrix_component(tb) != comp)
    return fail(d, VYRE_INVALID_PROGRAM,
                INST_FMT "A (local %u) is %s but B (local %u) is %s. Fix: A and B share one "
                         "component type; declare B %s",
                i, mnem(in), in->b, vyre_type_name(ta), in->c, vyre_type_name(tb),
                vyre_type_name(vyre_type_matrix(VYRE_MAT_B, comp)));
  int is_float = comp == VYRE_T_F16 || comp == VYRE_T_BF16;
  uint32_t acc = vyre_type_matrix(VYRE_MAT_ACC, is_float ? VYRE_T_F32 : VYRE_T_I32);
  if (td != acc || tc != acc)
    return fail(d, VYRE_INVALID_PROGRAM,
                INST_FMT "D (local %u) is %s and C (local %u) is %s, but %s inputs accumulate "
                         "into %s. Fix: declare C and D %s",
                i, mnem(in), in->a, vyre_type_name(td), in->d, vyre_type_name(tc),
                vyre_type_name(comp), vyre_type_name(acc), vyre_type_name(acc));
  return component_type(d, i, comp, "A and B");
}

/* mma_store BUFFER %index %stride SLOT: an accumulator into a writable
 * buffer of its component type. */
static vyre_status check_store(decoder *d, uint32_t i) {
  const vyre_inst *in = &d->p->insts[i];
  const vyre_buffer_info *buf;
  uint32_t t;
  vyre_status st;
  if ((st = vyre__operand_buffer(d, i, in->a, &buf))) return st;
  if (buf->decl.access == VYRE_ACCESS_READ_ONLY || buf->decl.access == VYRE_ACCESS_UNIFORM)
    return fail(d, VYRE_INVALID_PROGRAM,
                INST_FMT "buffer '%s' is %s. Fix: declare it rw or wo to write it", i, mnem(in),
                buf->name, vyre_access_name(buf->decl.access));
  if ((st = vyre__operand(d, i, "index", in->b, VYRE_T_U32)) ||
      (st = vyre__operand(d, i, "stride", in->c, VYRE_T_U32)) ||
      (st = matrix_slot(d, i, "d", in->d, VYRE_MAT_ACC, &t)) ||
      (st = tile_buffer(d, i, buf, in->d, t)))
    return st;
  if (vyre_type_matrix_component(t) == VYRE_T_F32 && buf->decl.elem_type != VYRE_T_F32)
    return fail(d, VYRE_INVALID_PROGRAM,
                INST_FMT "buffer '%s' holds %s: an f32 accumulator is stored into an f32 buffer "
                         "only (its elements are floats held to the MMA error bound, not bits). "
                         "Fix: store it into an f32 buffer",
                i, mnem(in), buf->name, vyre_type_name(buf->decl.elem_type));
  return component_type(d, i, vyre_type_matrix_component(t), "the accumulator");
}

/* Contract in internal.h. */
vyre_status vyre__check_mma(decoder *d, uint32_t i, const vyre_op_info *info) {
  vyre_status st;
  switch (info->op_class) {
  case VYRE_OC_MMA_FILL: st = check_fill(d, i); break;
  case VYRE_OC_MMA_LOAD: st = check_load(d, i); break;
  case VYRE_OC_MMA: st = check_mma(d, i); break;
  default: st = check_store(d, i); break;
  }
  if (st) return st;
  /* A tile belongs to a subgroup of 32 invocations: a partial one has none. */
  const uint32_t *wg = d->p->header.workgroup_size;
  uint64_t inv = (uint64_t)wg[0] * wg[1] * wg[2];
  if (inv % 32u)
    return fail(d, VYRE_INVALID_PROGRAM,
                INST_FMT "the workgroup %u x %u x %u has %llu invocations, not a multiple of "
                         "32 (MMA ops run on whole subgroups of 32). Fix: make the workgroup "
                         "size a multiple of 32, e.g. `workgroup 128`",
                i, mnem(&d->p->insts[i]), wg[0], wg[1], wg[2], (unsigned long long)inv);
  return VYRE_OK;
}
