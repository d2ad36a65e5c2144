/* mma.c -- the operands of the MMA lines (mma_fill, mma_load, mma, mma_store): matrix locals, tile buffers, and the component type the text form leaves unwritten. */
#include "internal.h"

static const char *use_name(int use) {
  return use == VYRE_MAT_A ? "an A tile (mat_a_*)"
         : use == VYRE_MAT_B ? "a B tile (mat_b_*)"
                             : "an accumulator (mat_acc_f32 or mat_acc_i32)";
}

/* Token t names a declared matrix local of use `use` (0: any use). */
static vyre_status matrix_local(assembler *a, const inst_line *x, const tok *t, int use,
                                uint32_t *slot, uint32_t *type) {
  char sh[64], ex[64];
  if (!vyre__asm_map_find(&a->local_names, t->s, t->len, slot))
    return FAIL(t, "unknown local %s; %s takes matrix locals. Fix: declare it, e.g. `local %s "
                   "mat_acc_f32`",
                vyre__asm_show(t, sh), x->mn,
                vyre__asm_is_ident(t) ? vyre__asm_show(t, ex) : "acc");
  uint32_t ty = a->locals[*slot].type;
  int u = vyre_type_matrix_use(ty);
  if (!u)
    return FAIL(t, "local %s is %s, not a matrix local; %s takes matrix locals. Fix: declare "
                   "one with a matrix type, e.g. `local acc mat_acc_f32`",
                vyre__asm_show(t, sh), vyre_type_name(ty), x->mn);
  if (use && u != use)
    return FAIL(t, "local %s is %s, but %s needs %s here. Fix: name %s local",
                vyre__asm_show(t, sh), vyre_type_name(ty), x->mn, use_name(use),
                use_name(use));
  *type = ty;
  return VYRE_OK;
}

/* Token t is a %value of type `want` (`role` says what for). */
static vyre_status typed_value(assembler *a, const inst_line *x, const tok *t, uint32_t want,
                               const char *role, uint32_t *inst) {
  char sh[64];
  uint32_t ty;
  vyre_status st = vyre__asm_value_ref(a, t, inst, &ty);
  if (st || ty == want) return st;
  return FAIL(t, "%s is %s, but %s needs %s %s. Fix: pass a %s value (convert with `cast %s`)",
              vyre__asm_show(t, sh), vyre_type_name(ty), x->mn, vyre_type_name(want), role,
              vyre_type_name(want), vyre_type_name(want));
}

/* Token t names a buffer holding the component type of tile `type` (local
 * token lt) or an integer type of its size (vyre_mma_buffer_types),
 * readable (mma_load) or writable (mma_store). */
static vyre_status tile_buffer(assembler *a, const inst_line *x, const tok *t, int writes,
                               const tok *lt, uint32_t type, uint32_t *idx) {
  char sh[64], sl[64];
  vyre_status st = vyre__asm_buffer_ref(a, t, idx);
  if (st) return st;
  const buf_def *bd = &a->bufs[*idx];
  if (!writes && bd->access == VYRE_ACCESS_WRITE_ONLY)
    return FAIL(t, "buffer %s is write-only and cannot be read. Fix: declare it rw",
                vyre__asm_show(t, sh));
  if (writes && (bd->access == VYRE_ACCESS_READ_ONLY || bd->access == VYRE_ACCESS_UNIFORM))
    return FAIL(t, "buffer %s is %s and cannot be written. Fix: declare it rw or wo",
                vyre__asm_show(t, sh), vyre_access_name(bd->access));
  uint32_t comp = vyre_type_matrix_component(type);
  uint32_t ok = vyre_mma_buffer_types(comp);
  if (writes && comp == VYRE_T_F32) ok = VYRE_TBIT(VYRE_T_F32); /* floats: the bound applies */
  char list[96];
  if (bd->elem >= 32 || !(ok & VYRE_TBIT(bd->elem)))
    return FAIL(t, "buffer %s holds %s, but %s (%s) has %s elements; %s moves them unconverted. "
                   "Fix: use a %s buffer (its bits are moved as %s), or a matrix local whose "
                   "component a %s buffer can hold",
                vyre__asm_show(t, sh), vyre_type_name(bd->elem), vyre__asm_show(lt, sl),
                vyre_type_name(type), vyre_type_name(comp), x->mn,
                vyre_type_list(ok, " or ", list, sizeof list), vyre_type_name(comp),
                vyre_type_name(bd->elem));
  return VYRE_OK;
}

/* `mma D A B C`: A and B of one component, C and D its accumulator. */
static vyre_status parse_mma_op(assembler *a, inst_line *x) {
  char sh[64], so[64];
  const tok *arg = x->arg;
  uint32_t td, ta, tb, tc;
  vyre_status st;
  if ((st = matrix_local(a, x, &arg[0], VYRE_MAT_ACC, &x->f[0], &td)) ||
      (st = matrix_local(a, x, &arg[1], VYRE_MAT_A, &x->f[1], &ta)) ||
      (st = matrix_local(a, x, &arg[2], VYRE_MAT_B, &x->f[2], &tb)) ||
      (st = matrix_local(a, x, &arg[3], VYRE_MAT_ACC, &x->f[3], &tc)))
    return st;
  uint32_t comp = vyre_type_matrix_component(ta);
  if (vyre_type_matrix_component(tb) != comp)
    return FAIL(&arg[2], "%s is %s but %s is %s; A and B share one component type. Fix: "
                         "declare %s %s",
                vyre__asm_show(&arg[2], sh), vyre_type_name(tb), vyre__asm_show(&arg[1], so),
                vyre_type_name(ta), vyre__asm_show(&arg[2], sh),
                vyre_type_name(vyre_type_matrix(VYRE_MAT_B, comp)));
  int is_float = comp == VYRE_T_F16 || comp == VYRE_T_BF16;
  uint32_t acc = vyre_type_matrix(VYRE_MAT_ACC, is_float ? VYRE_T_F32 : VYRE_T_I32);
  for (uint32_t k = 0; k < 4; k += 3) {
    uint32_t have = k ? tc : td;
    if (have != acc)
      return FAIL(&arg[k], "%s is %s, but %s inputs accumulate into %s. Fix: declare %s %s",
                  vyre__asm_show(&arg[k], sh), vyre_type_name(have), vyre_type_name(comp),
                  vyre_type_name(acc), vyre__asm_show(&arg[k], so), vyre_type_name(acc));
  }
  x->type = comp;
  return VYRE_OK;
}

/* Contract in internal.h. */
vyre_status vyre__asm_parse_mma(assembler *a, inst_line *x) {
  const tok *arg = x->arg;
  uint32_t t;
  vyre_status st;
  switch (x->info->op_class) {
  case VYRE_OC_MMA_FILL: /* mma_fill MATRIX %value */
    if ((st = matrix_local(a, x, &arg[0], VYRE_MAT_ACC, &x->f[0], &t))) return st;
    x->type = vyre_type_matrix_component(t);
    return typed_value(a, x, &arg[1], x->type, "(the accumulator's component type)", &x->f[1]);
  case VYRE_OC_MMA_LOAD: /* mma_load MATRIX BUFFER %index %stride */
    if ((st = matrix_local(a, x, &arg[0], 0, &x->f[0], &t)) ||
        (st = tile_buffer(a, x, &arg[1], 0, &arg[0], t, &x->f[1])) ||
        (st = typed_value(a, x, &arg[2], VYRE_T_U32, "as index", &x->f[2])) ||
        (st = typed_value(a, x, &arg[3], VYRE_T_U32, "as stride", &x->f[3])))
      return st;
    x->type = vyre_type_matrix_component(t);
    return VYRE_OK;
  case VYRE_OC_MMA: return parse_mma_op(a, x);
  default: /* mma_store BUFFER %index %stride MATRIX */
    if ((st = matrix_local(a, x, &arg[3], VYRE_MAT_ACC, &x->f[3], &t)) ||
        (st = tile_buffer(a, x, &arg[0], 1, &arg[3], t, &x->f[0])) ||
        (st = typed_value(a, x, &arg[1], VYRE_T_U32, "as index", &x->f[1])) ||
        (st = typed_value(a, x, &arg[2], VYRE_T_U32, "as stride", &x->f[2])))
      return st;
    x->type = vyre_type_matrix_component(t);
    return VYRE_OK;
  }
}
