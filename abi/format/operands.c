/* operands.c -- the operand checks every instruction check shares: values, types, buffers and local slots (internal.h). */
#include "internal.h"

/* Contracts in internal.h. */
vyre_status vyre__operand_value(decoder *d, uint32_t i, const char *which, uint32_t v,
                                uint32_t *type) {
  vyre_program *p = d->p;
  const vyre_inst *in = &p->insts[i];
  if (v >= i)
    return fail(d, VYRE_INVALID_PROGRAM,
                INST_FMT "operand %s = %%%u is not an earlier instruction. Fix: operands name "
                         "values defined before their use",
                i, mnem(in), which, v);
  if (p->value_type[v] == VYRE_T_VOID)
    return fail(d, VYRE_INVALID_PROGRAM,
                INST_FMT "operand %s = %%%u is a statement (%s), not a value. Fix: name an "
                         "expression instruction",
                i, mnem(in), which, v, mnem(&p->insts[v]));
  if (d->scope[v] != NONE && !d->open[d->scope[v]])
    return fail(d, VYRE_INVALID_PROGRAM,
                INST_FMT "operand %s = %%%u was defined inside a block that has ended (at "
                         "instruction %u). Fix: values do not escape their block; carry them "
                         "out in a local (let/assign)",
                i, mnem(in), which, v, d->scope[v]);
  if (d->segment[v] != d->grid_segment)
    return fail(d, VYRE_INVALID_PROGRAM,
                INST_FMT "operand %s = %%%u was defined before a grid barrier. Fix: values do "
                         "not cross grid barriers; carry them in a local",
                i, mnem(in), which, v);
  *type = p->value_type[v];
  return VYRE_OK;
}

vyre_status vyre__operand_type(decoder *d, uint32_t i, const char *which, uint32_t got,
                               uint32_t want) {
  if (got == want) return VYRE_OK;
  return fail(d, VYRE_INVALID_PROGRAM,
              INST_FMT "operand %s has type %s, expected %s. Fix: pass a %s value, e.g. "
                       "convert it first with `cast %s`",
              i, mnem(&d->p->insts[i]), which, vyre_type_name(got), vyre_type_name(want),
              vyre_type_name(want), vyre_type_name(want));
}

vyre_status vyre__operand(decoder *d, uint32_t i, const char *which, uint32_t v, uint32_t want) {
  uint32_t t;
  vyre_status st = vyre__operand_value(d, i, which, v, &t);
  return st ? st : vyre__operand_type(d, i, which, t, want);
}

vyre_status vyre__operand_buffer(decoder *d, uint32_t i, uint32_t buf,
                                 const vyre_buffer_info **out) {
  if (buf >= d->p->buffer_count)
    return fail(d, VYRE_INVALID_PROGRAM,
                INST_FMT "buffer %u does not exist (the program declares %u). Fix: name a "
                         "declared buffer",
                i, mnem(&d->p->insts[i]), buf, d->p->buffer_count);
  *out = &d->p->buffers[buf];
  return VYRE_OK;
}

vyre_status vyre__operand_slot(decoder *d, uint32_t i, uint32_t slot, int must_be_live) {
  vyre_program *p = d->p;
  if (slot >= p->local_count)
    return fail(d, VYRE_INVALID_PROGRAM,
                INST_FMT "local %u does not exist (the program declares %u). Fix: declare the "
                         "local",
                i, mnem(&p->insts[i]), slot, p->local_count);
  if (must_be_live) {
    if (!d->local_def[slot])
      return fail(d, VYRE_INVALID_PROGRAM,
                  INST_FMT "local %u is used before its let. Fix: initialise it with let first",
                  i, mnem(&p->insts[i]), slot);
    if (d->local_scope[slot] != NONE && !d->open[d->local_scope[slot]])
      return fail(d, VYRE_INVALID_PROGRAM,
                  INST_FMT "local %u was declared in a block that has ended. Fix: declare it "
                           "(let) in a block that encloses this use",
                  i, mnem(&p->insts[i]), slot);
  }
  return VYRE_OK;
}

