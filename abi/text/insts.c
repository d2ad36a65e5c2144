/* insts.c -- instruction lines: the op and its .suffix, the operand count, one parser per op class, blocks and values. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"
#include "literal.h"

/* ------------------------------------------------------------------ */
/* Instructions and blocks                                            */
/* ------------------------------------------------------------------ */
static int grow_insts(assembler *a) {
  uint32_t cap = a->inst_cap ? a->inst_cap * 2 : 256;
  uint32_t *line = realloc(a->inst_line, cap * sizeof *line);
  if (line) a->inst_line = line;
  uint32_t *col = realloc(a->inst_col, cap * sizeof *col);
  if (col) a->inst_col = col;
  uint8_t *type = realloc(a->inst_type, cap);
  if (type) a->inst_type = type;
  uint8_t *open = realloc(a->open, cap);
  if (open) a->open = open;
  const char **name = realloc(a->inst_name, cap * sizeof *name);
  if (name) a->inst_name = name;
  uint32_t *name_len = realloc(a->inst_name_len, cap * sizeof *name_len);
  if (name_len) a->inst_name_len = name_len;
  if (!line || !col || !type || !open || !name || !name_len) return -1;
  a->inst_cap = cap;
  return 0;
}

/* Append one instruction; *out receives its index. */
static vyre_status emit(assembler *a, const tok *op, vyre_op code, uint32_t type, uint32_t mod,
                        uint32_t x, uint32_t y, uint32_t z, uint32_t w, uint32_t *out) {
  if (a->ninst >= VYRE_MAX_INSTS)
    return vyre__asm_fail_at(a, a->line, op->col, VYRE_LIMIT,
                             "more than %u instructions. Fix: split the program", VYRE_MAX_INSTS);
  if (a->ninst == a->inst_cap && grow_insts(a)) return vyre__asm_oom(a);
  uint32_t i = vyre_b_inst(a->b, code, type, mod, x, y, z, w);
  if (vyre_b_inst_count(a->b) != a->ninst + 1)
    return vyre__asm_oom(a); /* the builder ran out of memory */
  a->inst_line[i] = a->line;
  a->inst_col[i] = op->col;
  a->inst_type[i] = (uint8_t)type;
  a->open[i] = 0;
  a->inst_name[i] = NULL;
  a->inst_name_len[i] = 0;
  a->ninst++;
  if (out) *out = i;
  return VYRE_OK;
}

static uint32_t current_block(const assembler *a) { return a->depth ? a->stack[a->depth - 1].inst : NONE; }

static vyre_status push_block(assembler *a, const tok *op, uint32_t inst, uint16_t code) {
  if (a->depth >= VYRE_MAX_NESTING)
    return vyre__asm_fail_at(a, a->line, op->col, VYRE_LIMIT,
                             "blocks nest deeper than %u. Fix: flatten the control flow",
                             VYRE_MAX_NESTING);
  a->stack[a->depth++] = (open_block){inst, code, a->line, op->col};
  a->open[inst] = 1;
  return VYRE_OK;
}

/* ------------------------------------------------------------------ */
/* Operands of one kind                                               */
/* ------------------------------------------------------------------ */
static vyre_status want_type(assembler *a, const tok *t, uint32_t have, uint32_t want,
                             const tok *op, const char *role) {
  if (have == want) return VYRE_OK;
  char sh[64], so[64];
  return FAIL(t, "%s is %s, but %s needs %s %s. Fix: pass a %s value (convert with `cast %s`)",
              vyre__asm_show(t, sh), vyre_type_name(have), vyre__asm_show(op, so),
              vyre_type_name(want), role, vyre_type_name(want), vyre_type_name(want));
}

static vyre_status want_mask(assembler *a, const tok *t, uint32_t have, uint32_t mask,
                             const char *mnemonic) {
  if (have < VYRE_T_COUNT_ && (mask & VYRE_TBIT(have))) return VYRE_OK;
  char sh[64], names[96];
  vyre_type_list(mask, NULL, names, sizeof names);
  return FAIL(t,
              "%s is %s, and %s does not take %s operands (it takes %s). Fix: convert with "
              "`cast`, or use an op for %s",
              vyre__asm_show(t, sh), vyre_type_name(have), mnemonic, vyre_type_name(have), names,
              vyre_type_name(have));
}

/* A matrix local where get, let, assign or loop wants a value local. */
static vyre_status matrix_refused(assembler *a, const tok *t, const local_def *l) {
  char sh[64];
  return FAIL(t,
              "local %s (line %u) is a matrix local (%s); get, let, assign and loop take value "
              "locals only. Fix: set it with mma_fill, mma_load or mma, write it out with "
              "mma_store",
              vyre__asm_show(t, sh), l->line, vyre_type_name(l->type));
}

/* A local that must be defined (let or loop) and in scope. */
static vyre_status live_local(assembler *a, const tok *t, uint32_t *slot) {
  char sh[64];
  if (!vyre__asm_map_find(&a->local_names, t->s, t->len, slot))
    return FAIL(t,
                "unknown local %s. Fix: declare it (`local %s TYPE`) and give it a value with "
                "`let`",
                vyre__asm_show(t, sh), vyre__asm_is_ident(t) ? vyre__asm_show(t, sh) : "name");
  const local_def *l = &a->locals[*slot];
  if (vyre_type_matrix_use(l->type)) return matrix_refused(a, t, l);
  if (l->state == LOCAL_DECLARED)
    return FAIL(t,
                "local %s (declared at line %u) is used before its let. Fix: initialise it "
                "with `let %s %%value` first",
                vyre__asm_show(t, sh), l->line, vyre__asm_show(t, sh));
  if (l->block != NONE && !a->open[l->block])
    return FAIL(t,
                "local %s was defined at line %u inside a block that has ended. Fix: `let` it "
                "in a block that encloses this use",
                vyre__asm_show(t, sh), l->def_line);
  return VYRE_OK;
}

/* ------------------------------------------------------------------ */
/* Instruction lines                                                  */
/* ------------------------------------------------------------------ */
static int lookup_name(const char *const *names, uint32_t count, const char *s, uint32_t len) {
  for (uint32_t i = 0; i < count; i++)
    if (strlen(names[i]) == len && memcmp(names[i], s, len) == 0) return (int)i;
  return -1;
}

static const char *const order_names[] = {
#define ORDER_NAME_(name, text) text,
    VYRE_ORDER_MAP(ORDER_NAME_)
#undef ORDER_NAME_
};
static const char *const reduce_names[] = {
#define REDUCE_NAME_(name, text) text,
    VYRE_REDUCE_MAP(REDUCE_NAME_)
#undef REDUCE_NAME_
};
static const char *const axis_names[] = {"x", "y", "z"};
static const char *const layout_names[] = {"row", "col"}; /* vyre_layout */

/* Bind `%name =` of a value line to instruction `inst`. */
static vyre_status bind_value(assembler *a, const tok *name, uint32_t inst) {
  char sh[64];
  uint32_t prev;
  if (vyre__asm_map_find(&a->value_names, name->s + 1, name->len - 1, &prev)) {
    const value_def *d = &a->vals[prev];
    if ((d->block == NONE || a->open[d->block]) && d->segment == a->segment)
      return FAIL(name,
                  "%s is already defined at line %u. Fix: pick another name (values are "
                  "defined once; use a local with let/assign for a value that changes)",
                  vyre__asm_show(name, sh), d->line);
  }
  if (a->nvals == a->val_cap) {
    uint32_t cap = a->val_cap ? a->val_cap * 2 : 256;
    value_def *grown = realloc(a->vals, cap * sizeof *grown);
    if (!grown) return vyre__asm_oom(a);
    a->vals = grown;
    a->val_cap = cap;
  }
  a->vals[a->nvals] = (value_def){inst, current_block(a), a->segment, a->line};
  if (vyre__asm_map_put(&a->value_names, name->s + 1, name->len - 1, a->nvals))
    return vyre__asm_oom(a);
  a->nvals++;
  a->inst_name[inst] = name->s;
  a->inst_name_len[inst] = name->len;
  return VYRE_OK;
}

/* Per-class operand parsers: each reads the operand tokens its class's
 * schema (VYRE_OP_CLASS_MAP) says it takes, in order, and sets the fields
 * and the result type.  Counts and suffixes were checked before. */
typedef vyre_status (*class_parse)(assembler *a, inst_line *x);

static vyre_status parse_const(assembler *a, inst_line *x) {
  vyre_status st = vyre__asm_type_ref(a, &x->arg[0], 1, &x->type);
  if (st) return st;
  uint64_t bits;
  char msg[512];
  if (vyre__text_parse_literal(x->arg[1].s, x->arg[1].len, x->type, VYRE__LITERAL_CONST, &bits,
                               msg, sizeof msg))
    return FAIL(&x->arg[1], "%s", msg);
  x->f[0] = (uint32_t)bits;
  x->f[1] = x->type == VYRE_T_U64 || x->type == VYRE_T_I64 ? (uint32_t)(bits >> 32) : 0;
  return VYRE_OK;
}

static vyre_status parse_local_get(assembler *a, inst_line *x) {
  vyre_status st = live_local(a, &x->arg[0], &x->f[0]);
  if (st) return st;
  x->type = a->locals[x->f[0]].type;
  return VYRE_OK;
}

static vyre_status parse_load(assembler *a, inst_line *x) {
  uint32_t ty;
  vyre_status st;
  if ((st = vyre__asm_buffer_ref(a, &x->arg[0], &x->f[0])) ||
      (st = vyre__asm_value_ref(a, &x->arg[1], &x->f[1], &ty)) ||
      (st = want_type(a, &x->arg[1], ty, VYRE_T_U32, x->op, "as index")))
    return st;
  x->type = vyre_type_compute(a->bufs[x->f[0]].elem);
  return VYRE_OK;
}

static vyre_status parse_buf_len(assembler *a, inst_line *x) {
  vyre_status st = vyre__asm_buffer_ref(a, &x->arg[0], &x->f[0]);
  if (st) return st;
  x->type = VYRE_T_U32;
  return VYRE_OK;
}

static vyre_status parse_builtin(assembler *a, inst_line *x) {
  (void)a;
  x->type = VYRE_T_U32;
  return VYRE_OK;
}

/* BINARY and COMPARE. */
static vyre_status parse_binary(assembler *a, inst_line *x) {
  char sh[64], so[64];
  uint32_t tx, ty;
  vyre_status st;
  if ((st = vyre__asm_value_ref(a, &x->arg[0], &x->f[0], &tx)) ||
      (st = vyre__asm_value_ref(a, &x->arg[1], &x->f[1], &ty)))
    return st;
  if (tx != ty)
    return FAIL(&x->arg[1],
                "%s is %s but %s is %s; %s takes two operands of one type. Fix: "
                "convert one with `cast`",
                vyre__asm_show(&x->arg[1], sh), vyre_type_name(ty), vyre__asm_show(&x->arg[0], so),
                vyre_type_name(tx), x->mn);
  if ((st = want_mask(a, &x->arg[0], tx, x->info->type_mask, x->mn))) return st;
  x->type = vyre_op_class_lookup(x->info->op_class)->result == VYRE_RES_BOOL ? VYRE_T_BOOL : tx;
  return VYRE_OK;
}

/* UNARY and PREDICATE. */
static vyre_status parse_unary(assembler *a, inst_line *x) {
  uint32_t tx;
  vyre_status st;
  if ((st = vyre__asm_value_ref(a, &x->arg[0], &x->f[0], &tx)) ||
      (st = want_mask(a, &x->arg[0], tx, x->info->type_mask, x->mn)))
    return st;
  x->type = vyre_op_class_lookup(x->info->op_class)->result == VYRE_RES_BOOL ? VYRE_T_BOOL : tx;
  return VYRE_OK;
}

static vyre_status parse_select(assembler *a, inst_line *x) {
  char sh[64], so[64];
  uint32_t tx, ty, tz;
  vyre_status st;
  if ((st = vyre__asm_value_ref(a, &x->arg[0], &x->f[0], &tx)) ||
      (st = vyre__asm_value_ref(a, &x->arg[1], &x->f[1], &ty)) ||
      (st = vyre__asm_value_ref(a, &x->arg[2], &x->f[2], &tz)) ||
      (st = want_type(a, &x->arg[0], tx, VYRE_T_BOOL, x->op, "as condition")))
    return st;
  if (ty != tz)
    return FAIL(&x->arg[2],
                "%s is %s but %s is %s; both arms of select share one type. Fix: "
                "convert one with `cast`",
                vyre__asm_show(&x->arg[2], sh), vyre_type_name(tz), vyre__asm_show(&x->arg[1], so),
                vyre_type_name(ty));
  x->type = ty;
  return VYRE_OK;
}

static vyre_status parse_cast(assembler *a, inst_line *x) {
  uint32_t tx;
  vyre_status st;
  if ((st = vyre__asm_type_ref(a, &x->arg[0], 1, &x->type)) ||
      (st = vyre__asm_value_ref(a, &x->arg[1], &x->f[0], &tx)))
    return st;
  return VYRE_OK;
}

static vyre_status parse_fma(assembler *a, inst_line *x) {
  for (uint32_t k = 0; k < 3; k++) {
    uint32_t t;
    vyre_status st;
    if ((st = vyre__asm_value_ref(a, &x->arg[k], &x->f[k], &t)) ||
        (st = want_type(a, &x->arg[k], t, VYRE_T_F32, x->op, "for every operand")))
      return st;
  }
  x->type = VYRE_T_F32;
  return VYRE_OK;
}

/* ATOMIC and ATOMIC_CAS (one more value operand: desired). */
static vyre_status parse_atomic(assembler *a, inst_line *x) {
  char sh[64];
  uint32_t ty, tz, tw;
  vyre_status st;
  if ((st = vyre__asm_buffer_ref(a, &x->arg[0], &x->f[0]))) return st;
  const buf_def *bd = &a->bufs[x->f[0]];
  if (!(VYRE_TM_INT & VYRE_TBIT(bd->elem)))
    return FAIL(&x->arg[0],
                "buffer %s holds %s; atomics work on u32 i32 u64 i64 buffers. Fix: "
                "declare it with an integer type",
                vyre__asm_show(&x->arg[0], sh), vyre_type_name(bd->elem));
  x->type = bd->elem;
  if ((st = vyre__asm_value_ref(a, &x->arg[1], &x->f[1], &ty)) ||
      (st = want_type(a, &x->arg[1], ty, VYRE_T_U32, x->op, "as index")) ||
      (st = vyre__asm_value_ref(a, &x->arg[2], &x->f[2], &tz)) ||
      (st = want_type(a, &x->arg[2], tz, x->type, x->op, "(the buffer's element type)")))
    return st;
  if (vyre_op_class_lookup(x->info->op_class)->operand[3] == VYRE_OPND_VALUE &&
      ((st = vyre__asm_value_ref(a, &x->arg[3], &x->f[3], &tw)) ||
       (st = want_type(a, &x->arg[3], tw, x->type, x->op, "(the buffer's element type)"))))
    return st;
  return VYRE_OK;
}

static vyre_status parse_ballot(assembler *a, inst_line *x) {
  uint32_t tx;
  vyre_status st;
  if ((st = vyre__asm_value_ref(a, &x->arg[0], &x->f[0], &tx)) ||
      (st = want_type(a, &x->arg[0], tx, VYRE_T_BOOL, x->op, "as condition")))
    return st;
  x->type = VYRE_T_U32;
  return VYRE_OK;
}

static vyre_status parse_shuffle(assembler *a, inst_line *x) {
  uint32_t tx, ty;
  vyre_status st;
  if ((st = vyre__asm_value_ref(a, &x->arg[0], &x->f[0], &tx)) ||
      (st = vyre__asm_value_ref(a, &x->arg[1], &x->f[1], &ty)) ||
      (st = want_type(a, &x->arg[1], ty, VYRE_T_U32, x->op, "as lane")))
    return st;
  x->type = tx;
  return VYRE_OK;
}

static vyre_status parse_reduce(assembler *a, inst_line *x) {
  uint32_t tx;
  vyre_status st;
  int bitwise = x->mod >= VYRE_REDUCE_AND;
  if ((st = vyre__asm_value_ref(a, &x->arg[0], &x->f[0], &tx))) return st;
  if ((st = want_mask(a, &x->arg[0], tx, bitwise ? VYRE_TM_INT : VYRE_TM_NUM,
                      bitwise ? "a bitwise reduce" : "reduce")))
    return st;
  x->type = tx;
  return VYRE_OK;
}

static vyre_status parse_let(assembler *a, inst_line *x) {
  char sh[64], so[64];
  const tok *arg = x->arg;
  uint32_t ty, slot;
  vyre_status st;
  if ((st = vyre__asm_value_ref(a, &arg[1], &x->f[1], &ty))) return st;
  if (!vyre__asm_map_find(&a->local_names, arg[0].s, arg[0].len, &slot)) {
    if ((st = vyre__asm_declare_local(a, &arg[0], ty, &slot))) return st;
  } else if (vyre_type_matrix_use(a->locals[slot].type)) {
    return matrix_refused(a, &arg[0], &a->locals[slot]);
  } else if (a->locals[slot].state != LOCAL_DECLARED) {
    return FAIL(&arg[0],
                "local %s already has its let (line %u). Fix: use `assign %s %%value` "
                "to change it",
                vyre__asm_show(&arg[0], sh), a->locals[slot].def_line, vyre__asm_show(&arg[0], so));
  }
  x->f[0] = slot;
  if ((st = want_type(a, &arg[1], ty, a->locals[slot].type, x->op, "(the local's type)"))) return st;
  a->locals[slot].state = LOCAL_LET;
  a->locals[slot].block = current_block(a);
  a->locals[slot].def_line = a->line;
  return VYRE_OK;
}

static vyre_status parse_assign(assembler *a, inst_line *x) {
  char sh[64];
  const tok *arg = x->arg;
  uint32_t ty;
  vyre_status st;
  if ((st = live_local(a, &arg[0], &x->f[0]))) return st;
  const local_def *l = &a->locals[x->f[0]];
  if (l->state == LOCAL_COUNTER)
    return FAIL(&arg[0],
                "local %s is the counter of the loop at line %u and is read-only. Fix: "
                "copy it into another local",
                vyre__asm_show(&arg[0], sh), l->def_line);
  if ((st = vyre__asm_value_ref(a, &arg[1], &x->f[1], &ty)) ||
      (st = want_type(a, &arg[1], ty, l->type, x->op, "(the local's type)")))
    return st;
  return VYRE_OK;
}

static vyre_status parse_store(assembler *a, inst_line *x) {
  char sh[64];
  const tok *arg = x->arg;
  uint32_t ty, tz;
  vyre_status st;
  if ((st = vyre__asm_buffer_ref(a, &arg[0], &x->f[0]))) return st;
  const buf_def *bd = &a->bufs[x->f[0]];
  if (bd->access == VYRE_ACCESS_READ_ONLY || bd->access == VYRE_ACCESS_UNIFORM)
    return FAIL(&arg[0], "buffer %s is %s and cannot be written. Fix: declare it rw or wo",
                vyre__asm_show(&arg[0], sh), vyre_access_name(bd->access));
  if ((st = vyre__asm_value_ref(a, &arg[1], &x->f[1], &ty)) ||
      (st = want_type(a, &arg[1], ty, VYRE_T_U32, x->op, "as index")) ||
      (st = vyre__asm_value_ref(a, &arg[2], &x->f[2], &tz)) ||
      (st = want_type(a, &arg[2], tz, vyre_type_compute(bd->elem), x->op,
                      "(the buffer's element type, widened)")))
    return st;
  return VYRE_OK;
}

static vyre_status parse_if(assembler *a, inst_line *x) {
  uint32_t tx;
  vyre_status st;
  if ((st = vyre__asm_value_ref(a, &x->arg[0], &x->f[0], &tx)) ||
      (st = want_type(a, &x->arg[0], tx, VYRE_T_BOOL, x->op, "as condition")))
    return st;
  return VYRE_OK;
}

static vyre_status parse_else(assembler *a, inst_line *x) {
  if (!a->depth || a->stack[a->depth - 1].op != VYRE_OP_IF)
    return FAIL(x->op, "else without an open if%s. Fix: else follows the body of an if, once",
                a->depth ? (a->stack[a->depth - 1].op == VYRE_OP_ELSE ? " (this if already has its else)"
                                                                      : " (the innermost open block is not an if)")
                         : "");
  return VYRE_OK;
}

static vyre_status parse_end(assembler *a, inst_line *x) {
  if (!a->depth) return FAIL(x->op, "end without an open block. Fix: remove it, or open the block "
                                    "(if, loop, block) it should close");
  return VYRE_OK;
}

/* `loop LOCAL [TYPE] %start %end`: the counter is a fresh local. */
static vyre_status parse_loop(assembler *a, inst_line *x) {
  char sh[64];
  const tok *lt = &x->arg[0], *start = &x->arg[x->nargs - 2], *stop = &x->arg[x->nargs - 1];
  uint32_t decl_type = VYRE_T_VOID, ty, tz, slot;
  vyre_status st;
  if (x->nargs == 4 && (st = vyre__asm_type_ref(a, &x->arg[1], 1, &decl_type))) return st;
  if ((st = vyre__asm_value_ref(a, start, &x->f[1], &ty)) ||
      (st = vyre__asm_value_ref(a, stop, &x->f[2], &tz)))
    return st;
  if (!vyre__asm_map_find(&a->local_names, lt->s, lt->len, &slot)) {
    if ((st = vyre__asm_declare_local(a, lt, decl_type ? decl_type : ty, &slot))) return st;
  } else {
    if (vyre_type_matrix_use(a->locals[slot].type)) return matrix_refused(a, lt, &a->locals[slot]);
    if (a->locals[slot].state != LOCAL_DECLARED)
      return FAIL(lt,
                  "local %s already has a value (line %u); a loop counter is a fresh local. "
                  "Fix: use a new name",
                  vyre__asm_show(lt, sh), a->locals[slot].def_line);
    if (decl_type && decl_type != a->locals[slot].type)
      return FAIL(&x->arg[1],
                  "local %s is declared %s at line %u. Fix: drop the type or make it %s",
                  vyre__asm_show(lt, sh), vyre_type_name(a->locals[slot].type),
                  a->locals[slot].line, vyre_type_name(a->locals[slot].type));
  }
  x->f[0] = slot;
  uint32_t ct = a->locals[slot].type;
  if (ct != VYRE_T_U32 && ct != VYRE_T_I32)
    return FAIL(lt, "loop counter %s is %s. Fix: loop counters are u32 or i32",
                vyre__asm_show(lt, sh), vyre_type_name(ct));
  if ((st = want_type(a, start, ty, ct, x->op, "(the counter's type)")) ||
      (st = want_type(a, stop, tz, ct, x->op, "(the counter's type)")))
    return st;
  x->counter_slot = slot;
  return VYRE_OK;
}

/* `barrier [workgroup|grid]`: the scope is a word, not a suffix. */
static vyre_status parse_barrier(assembler *a, inst_line *x) {
  char sh[64];
  if (x->nargs) {
    if (vyre__asm_is_word(&x->arg[0], "grid"))
      x->mod = VYRE_BARRIER_GRID;
    else if (!vyre__asm_is_word(&x->arg[0], "workgroup"))
      return FAIL(&x->arg[0],
                  "'%s' is not a barrier scope. Fix: write `barrier` (workgroup) or "
                  "`barrier grid`",
                  vyre__asm_show(&x->arg[0], sh));
  }
  if (x->mod == VYRE_BARRIER_GRID && a->depth) {
    const open_block *ob = &a->stack[a->depth - 1];
    return FAIL(x->op, "a grid barrier must be at the top level of the body (this one is inside "
                       "the %s at line %u). Fix: move it out of every if/loop/block",
                vyre_op_lookup(ob->op)->mnemonic, ob->line);
  }
  return VYRE_OK;
}

static vyre_status parse_trap(assembler *a, inst_line *x) {
  uint64_t code;
  vyre_status st = vyre__asm_parse_uint(a, &x->arg[0], UINT32_MAX, "trap code", &code);
  if (st) return st;
  x->f[0] = (uint32_t)code;
  return VYRE_OK;
}

static vyre_status parse_nothing(assembler *a, inst_line *x) {
  (void)a, (void)x;
  return VYRE_OK;
}

static const class_parse class_parsers[VYRE_OC_COUNT_] = {
    [VYRE_OC_CONST] = parse_const,       [VYRE_OC_LOCAL_GET] = parse_local_get,
    [VYRE_OC_LOAD] = parse_load,         [VYRE_OC_BUF_LEN] = parse_buf_len,
    [VYRE_OC_BUILTIN] = parse_builtin,   [VYRE_OC_BINARY] = parse_binary,
    [VYRE_OC_COMPARE] = parse_binary,    [VYRE_OC_UNARY] = parse_unary,
    [VYRE_OC_PREDICATE] = parse_unary,   [VYRE_OC_SELECT] = parse_select,
    [VYRE_OC_CAST] = parse_cast,         [VYRE_OC_FMA] = parse_fma,
    [VYRE_OC_ATOMIC] = parse_atomic,     [VYRE_OC_ATOMIC_CAS] = parse_atomic,
    [VYRE_OC_BALLOT] = parse_ballot,     [VYRE_OC_SHUFFLE] = parse_shuffle,
    [VYRE_OC_REDUCE] = parse_reduce,     [VYRE_OC_LET] = parse_let,
    [VYRE_OC_ASSIGN] = parse_assign,     [VYRE_OC_STORE] = parse_store,
    [VYRE_OC_IF] = parse_if,             [VYRE_OC_ELSE] = parse_else,
    [VYRE_OC_END] = parse_end,           [VYRE_OC_LOOP] = parse_loop,
    [VYRE_OC_BLOCK] = parse_nothing,     [VYRE_OC_RETURN] = parse_nothing,
    [VYRE_OC_BARRIER] = parse_barrier,   [VYRE_OC_TRAP] = parse_trap,
    [VYRE_OC_MMA_FILL] = vyre__asm_parse_mma, [VYRE_OC_MMA_LOAD] = vyre__asm_parse_mma,
    [VYRE_OC_MMA] = vyre__asm_parse_mma, [VYRE_OC_MMA_STORE] = vyre__asm_parse_mma,
};

/* The .suffix of the op token, by the class's mod kind (axis, memory
 * order, reduction kind, tile layout); *mod receives it. */
static vyre_status parse_suffix(assembler *a, const tok *op, const vyre_op_info *info,
                                uint32_t *mod) {
  char sh[64];
  const char *mn = info->mnemonic;
  const char *dot = memchr(op->s, '.', op->len);
  uint32_t base_len = dot ? (uint32_t)(dot - op->s) : op->len;
  tok suffix = {dot ? dot + 1 : op->s + op->len, dot ? op->len - base_len - 1 : 0,
                op->col + base_len + 1};
  vyre_mod_kind kind = (vyre_mod_kind)vyre_op_class_lookup(info->op_class)->mod;
  *mod = 0;
  if (kind == VYRE_MOD_AXIS && (info->flags & VYRE_OPF_AXIS)) {
    int ax = dot ? lookup_name(axis_names, 3, suffix.s, suffix.len) : -1;
    if (ax < 0)
      return FAIL(op, "%s needs an axis. Fix: write %s.x, %s.y or %s.z", mn, mn, mn, mn);
    *mod = (uint32_t)ax;
  } else if (kind == VYRE_MOD_ORDER) {
    if (dot) {
      int ord = lookup_name(order_names, VYRE_ORDER_COUNT_, suffix.s, suffix.len);
      if (ord < 0)
        return FAIL(&suffix,
                    "'%s' is not a memory order. Fix: use %s.relaxed, .acquire, "
                    ".release, .acq_rel or .seq_cst",
                    vyre__asm_show(&suffix, sh), mn);
      *mod = (uint32_t)ord;
    }
  } else if (kind == VYRE_MOD_REDUCE) {
    int k = dot ? lookup_name(reduce_names, VYRE_REDUCE_COUNT_, suffix.s, suffix.len) : -1;
    if (k < 0)
      return FAIL(dot ? &suffix : op, "reduce needs its kind. Fix: write reduce.add, .min, .max, "
                                      ".and, .or or .xor");
    *mod = (uint32_t)k;
  } else if (kind == VYRE_MOD_LAYOUT) {
    int k = dot ? lookup_name(layout_names, 2, suffix.s, suffix.len) : VYRE_LAYOUT_ROW;
    if (k < 0)
      return FAIL(&suffix, "'%s' is not a tile layout. Fix: write %s.row (the default) or %s.col",
                  vyre__asm_show(&suffix, sh), mn, mn);
    *mod = (uint32_t)k;
  } else if (dot) {
    return FAIL(op, "%s takes no .suffix. Fix: write %s", mn, mn);
  }
  return VYRE_OK;
}

/* The operand count the class's text form takes. */
static vyre_status check_arity(assembler *a, const inst_line *x) {
  const vyre_op_class_info *cls = vyre_op_class_lookup(x->info->op_class);
  uint32_t want_min = cls->text_min, want_max = cls->text_max;
  if (x->nargs >= want_min && x->nargs <= want_max) return VYRE_OK;
  const tok *at = x->nargs > want_max ? &x->arg[want_max] : x->op;
  /* The usage line with OP spelled as this op. */
  char use[128];
  const char *u = cls->usage, *opw = strstr(u, "OP");
  if (opw && x->info->op_class != VYRE_OC_ATOMIC)
    snprintf(use, sizeof use, "%.*s%s%s", (int)(opw - u), u, x->mn, opw + 2);
  else
    snprintf(use, sizeof use, "%s", u);
  return FAIL(at, "%s takes %u%s operand%s, found %u. Fix: write `%s`", x->mn, want_min,
              want_max > want_min ? " or more" : "", want_min == 1 && want_max == 1 ? "" : "s",
              x->nargs, use);
}

/* Block and grid-segment bookkeeping once instruction `inst` is emitted. */
static vyre_status after_emit(assembler *a, const inst_line *x, uint32_t inst) {
  switch ((vyre_op_class)x->info->op_class) {
  case VYRE_OC_IF:
  case VYRE_OC_BLOCK: return push_block(a, x->op, inst, x->info->id);
  case VYRE_OC_LOOP: {
    vyre_status st = push_block(a, x->op, inst, x->info->id);
    a->locals[x->counter_slot].state = LOCAL_COUNTER;
    a->locals[x->counter_slot].block = inst;
    a->locals[x->counter_slot].def_line = a->line;
    return st;
  }
  case VYRE_OC_ELSE:
    a->open[a->stack[a->depth - 1].inst] = 0;
    a->stack[a->depth - 1] = (open_block){inst, VYRE_OP_ELSE, a->line, x->op->col};
    a->open[inst] = 1;
    return VYRE_OK;
  case VYRE_OC_END: a->open[a->stack[--a->depth].inst] = 0; return VYRE_OK;
  case VYRE_OC_BARRIER:
    if (x->mod == VYRE_BARRIER_GRID) {
      if (a->segment + 1 >= a->grid_cap) {
        uint32_t cap = a->grid_cap ? a->grid_cap * 2 : 16;
        uint32_t *grown = realloc(a->grid_lines, cap * sizeof *grown);
        if (!grown) return vyre__asm_oom(a);
        a->grid_lines = grown;
        a->grid_cap = cap;
      }
      a->grid_lines[a->segment++] = a->line;
    }
    return VYRE_OK;
  default: return VYRE_OK;
  }
}

/* One instruction line: t[first] is the op, `name` the `%v` before `=` or NULL. */
vyre_status vyre__asm_inst(assembler *a, uint32_t first, const tok *name) {
  char sh[64];
  inst_line x;
  memset(&x, 0, sizeof x);
  x.op = &a->t[first];
  x.arg = &a->t[first + 1];
  x.nargs = a->nt - first - 1;
  x.counter_slot = NONE;
  const char *dot = memchr(x.op->s, '.', x.op->len);
  uint32_t base_len = dot ? (uint32_t)(dot - x.op->s) : x.op->len;
  x.info = vyre_op_by_mnemonic(x.op->s, base_len);
  if (!x.info)
    return FAIL(x.op,
                "unknown instruction '%s'. Fix: see docs/program-text.md for the "
                "instructions (add, load, store, if, loop, ...)",
                vyre__asm_show(x.op, sh));
  x.mn = x.info->mnemonic;
  int is_value = vyre_op_class_lookup(x.info->op_class)->result != VYRE_RES_NONE;
  if (name && !is_value)
    return FAIL(name, "%s yields no value. Fix: remove `%s =`", x.mn, vyre__asm_show(name, sh));
  vyre_status st;
  uint32_t inst = 0;
  if ((st = parse_suffix(a, x.op, x.info, &x.mod)) || (st = check_arity(a, &x)) ||
      (st = class_parsers[x.info->op_class](a, &x)))
    return st;
  uint32_t type = (vyre_op_fields(x.info) & VYRE_FIELD_TYPE) ? x.type : 0;
  if ((st = emit(a, x.op, (vyre_op)x.info->id, type, x.mod, x.f[0], x.f[1], x.f[2], x.f[3], &inst)) ||
      (st = after_emit(a, &x, inst)))
    return st;
  return name ? bind_value(a, name, inst) : VYRE_OK;
}
