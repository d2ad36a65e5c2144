/* operands.c -- the operand readers the directives and the instructions share: values, types, locals, numbers. */
#include <stdlib.h>
#include <string.h>

#include "internal.h"
#include "literal.h"

/* A %value operand that is visible here; its instruction and type. */
vyre_status vyre__asm_value_ref(assembler *a, const tok *t, uint32_t *inst, uint32_t *type) {
  char sh[64];
  if (!vyre__asm_value_name_ok(t)) {
    if (t->len && t->s[0] == '%')
      return FAIL(t,
                  "'%s' is not a value name. Fix: value names are %% followed by letters, "
                  "digits or _ (%%x, %%0)",
                  vyre__asm_show(t, sh));
    return FAIL(t,
                "expected a value (%%name), found '%s'. Fix: operands are values defined on "
                "earlier lines; write a constant as `%%c = const u32 %s` first and use %%c",
                vyre__asm_show(t, sh), vyre__asm_show(t, sh));
  }
  uint32_t v;
  if (!vyre__asm_map_find(&a->value_names, t->s + 1, t->len - 1, &v)) {
    uint32_t later = vyre__asm_later_definition(a, t);
    if (later)
      return FAIL(t,
                  "%s is used before its definition at line %u. Fix: move the definition above "
                  "this line (operands name values defined on earlier lines)",
                  vyre__asm_show(t, sh), later);
    return FAIL(t, "unknown value %s. Fix: define it on an earlier line (`%s = ...`)",
                vyre__asm_show(t, sh), vyre__asm_show(t, sh));
  }
  const value_def *d = &a->vals[v];
  if (d->block != NONE && !a->open[d->block])
    return FAIL(t,
                "%s (line %u) was defined inside a block that has ended (the block opened at "
                "line %u). Fix: values do not leave their block; carry it out in a local "
                "(`let` before the block, `assign` inside)",
                vyre__asm_show(t, sh), d->line, a->inst_line[d->block]);
  if (d->segment != a->segment)
    return FAIL(t,
                "%s (line %u) was defined before the grid barrier at line %u. Fix: values do "
                "not cross grid barriers; carry it in a local",
                vyre__asm_show(t, sh), d->line, a->grid_lines[d->segment]);
  *inst = d->inst;
  *type = a->inst_type[d->inst];
  return VYRE_OK;
}

vyre_status vyre__asm_buffer_ref(assembler *a, const tok *t, uint32_t *idx) {
  char sh[64];
  if (!vyre__asm_map_find(&a->buffer_names, t->s, t->len, idx))
    return FAIL(t, "unknown buffer '%s'. Fix: declare it before its use, e.g. `buffer %s rw u32`",
                vyre__asm_show(t, sh), vyre__asm_is_ident(t) ? vyre__asm_show(t, sh) : "name");
  return VYRE_OK;
}

vyre_status vyre__asm_type_ref(assembler *a, const tok *t, int value_only, uint32_t *type) {
  char sh[64];
  char types[96];
  int ty = vyre_type_by_name(t->s, t->len);
  if (ty < 0)
    return FAIL(t, "'%s' is not a type. Fix: use one of %s", vyre__asm_show(t, sh),
                vyre_type_list(VYRE_TM_STORAGE, NULL, types, sizeof types));
  if (vyre_type_matrix_use((uint32_t)ty))
    return FAIL(t, "%s is a matrix type: only a local has one (`local NAME %s`). Fix: use %s",
                vyre_type_name((uint32_t)ty), vyre_type_name((uint32_t)ty),
                vyre_type_list(value_only ? VYRE_TM_VALUE : VYRE_TM_STORAGE, " or ", types,
                               sizeof types));
  if (value_only && !vyre_type_is_value((uint32_t)ty))
    return FAIL(t, "%s is a storage type; values are %s. Fix: use %s (a store to a %s buffer "
                   "narrows it)",
                vyre_type_name((uint32_t)ty), vyre_type_list(VYRE_TM_VALUE, " or ", types, sizeof types),
                vyre_type_name(vyre_type_compute((uint32_t)ty)), vyre_type_name((uint32_t)ty));
  *type = (uint32_t)ty;
  return VYRE_OK;
}

/* Declare a local slot named t; *slot receives it. */
vyre_status vyre__asm_declare_local(assembler *a, const tok *t, uint32_t type, uint32_t *slot) {
  char sh[64];
  if (!vyre__asm_is_ident(t))
    return FAIL(t, "'%s' is not a local name. Fix: names are identifiers ([A-Za-z_][A-Za-z0-9_]*)",
                vyre__asm_show(t, sh));
  uint32_t prev;
  if (vyre__asm_map_find(&a->local_names, t->s, t->len, &prev))
    return FAIL(t, "local %s is already declared at line %u. Fix: pick another name",
                vyre__asm_show(t, sh), a->locals[prev].line);
  if (a->nlocals >= VYRE_MAX_LOCALS)
    return vyre__asm_fail_at(a, a->line, t->col, VYRE_LIMIT,
                             "more than %u locals. Fix: reuse locals or "
                             "split the program",
                             VYRE_MAX_LOCALS);
  if (a->nlocals == a->local_cap) {
    uint32_t cap = a->local_cap ? a->local_cap * 2 : 32;
    local_def *grown = realloc(a->locals, cap * sizeof *grown);
    if (!grown) return vyre__asm_oom(a);
    a->locals = grown;
    a->local_cap = cap;
  }
  uint32_t s = vyre_b_local(a->b, (vyre_type)type);
  if (s != a->nlocals || vyre__asm_map_put(&a->local_names, t->s, t->len, s))
    return vyre__asm_oom(a);
  a->locals[s] = (local_def){(uint8_t)type, LOCAL_DECLARED, NONE, a->line, 0, t->s, t->len};
  a->nlocals++;
  *slot = s;
  return VYRE_OK;
}

vyre_status vyre__asm_parse_uint(assembler *a, const tok *t, uint64_t max, const char *what,
                                 uint64_t *out) {
  char sh[64];
  if (vyre__text_parse_uint(t->s, t->len, max, out))
    return FAIL(t, "%s '%s' is not a number in 0..%llu. Fix: write a decimal or 0x hex number",
                what, vyre__asm_show(t, sh), (unsigned long long)max);
  return VYRE_OK;
}
