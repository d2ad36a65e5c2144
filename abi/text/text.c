/* text.c -- the program text form's top: the disassembler (the assembler is asm.c, literals literal.c). */
#include <stdlib.h>

#include "literal.h"
#include "vyre/vyre_text.h"

static const char axis_names[3] = {'x', 'y', 'z'};

/* One line, read off the class schema: mnemonic, the mod as its .suffix
 * (barrier: its scope word), a declared type, then the operands by kind. */
static void emit_inst(strbuf *b, const vyre_program *p, uint32_t i) {
  const vyre_inst *in = &p->insts[i];
  const vyre_op_info *info = vyre_op_lookup(in->op);
  const vyre_op_class_info *cls = vyre_op_class_lookup(info->op_class);
  for (uint32_t k = 0; k < p->depth[i]; k++) vyre__sb_append(b, "  ", 2);
  if (p->value_type[i] != VYRE_T_VOID) vyre__sb_printf(b, "%%%u = ", i);
  vyre__sb_printf(b, "%s", info->mnemonic);
  switch ((vyre_mod_kind)cls->mod) {
  case VYRE_MOD_AXIS:
    if (info->flags & VYRE_OPF_AXIS) vyre__sb_printf(b, ".%c", axis_names[in->mod]);
    break;
  case VYRE_MOD_ORDER: vyre__sb_printf(b, ".%s", vyre_order_name(in->mod)); break;
  case VYRE_MOD_REDUCE: vyre__sb_printf(b, ".%s", vyre_reduce_name(in->mod)); break;
  case VYRE_MOD_SCOPE:
    if (in->mod == VYRE_BARRIER_GRID) vyre__sb_append(b, " grid", 5);
    break;
  case VYRE_MOD_LAYOUT: vyre__sb_printf(b, ".%s", vyre_layout_name(in->mod)); break;
  case VYRE_MOD_NONE: break;
  }
  if (info->op_class == VYRE_OC_CONST) {
    /* Its two literal words are one typed literal. */
    vyre__sb_printf(b, " %s ", vyre_type_name(in->type));
    vyre__text_format_const(b, in->type, (uint64_t)in->b << 32 | in->a);
    vyre__sb_append(b, "\n", 1);
    return;
  }
  if (cls->result == VYRE_RES_DECLARED) vyre__sb_printf(b, " %s", vyre_type_name(in->type));
  const uint32_t field[4] = {in->a, in->b, in->c, in->d};
  for (uint32_t k = 0; k < 4; k++) {
    switch ((vyre_operand_kind)cls->operand[k]) {
    case VYRE_OPND_VALUE: vyre__sb_printf(b, " %%%u", field[k]); break;
    case VYRE_OPND_SLOT: vyre__sb_printf(b, " l%u", field[k]); break;
    case VYRE_OPND_BUFFER: vyre__sb_printf(b, " %s", p->buffers[field[k]].name); break;
    case VYRE_OPND_IMM: vyre__sb_printf(b, " %u", field[k]); break;
    case VYRE_OPND_NONE: break;
    }
  }
  vyre__sb_append(b, "\n", 1);
}

/* Contract in vyre_text.h: validates first; *text is malloc'd for the
 * caller; thread-safe (the C locale object is created once). */
vyre_status vyre_text_disassemble(const void *bytes, size_t size, char **text, vyre_error *err) {
  if (!text)
    return vyre_error_set(err, VYRE_INVALID_ARGUMENT, 0,
                          "disassemble: text is NULL. Fix: pass a char ** to receive the text");
  *text = NULL;
  vyre_program *p = NULL;
  vyre_status st = vyre_program_decode(bytes, size, &p, err);
  if (st) {
    vyre_error_prefix(err, "disassemble");
    return st;
  }
  strbuf b = {0};
  char hash[65];
  vyre_program_hash_hex(p, hash);
  vyre__sb_printf(&b, "; vyre program text (docs/program-text.md), sha256 %s\n", hash);
  const uint32_t *wg = p->header.workgroup_size;
  vyre__sb_printf(&b, "workgroup %u %u %u\n", wg[0], wg[1], wg[2]);
  uint32_t next_binding = 0;
  for (uint32_t i = 0; i < p->buffer_count; i++) {
    const vyre_buffer_info *bi = &p->buffers[i];
    const vyre_buffer_decl *d = &bi->decl;
    vyre__sb_printf(&b, "buffer %s %s %s", bi->name, vyre_access_name(d->access),
                    vyre_type_name(d->elem_type));
    if (d->count) vyre__sb_printf(&b, " [%u]", d->count);
    if (d->flags & VYRE_BUF_OUTPUT) vyre__sb_append(&b, " output", 7);
    if (d->flags & VYRE_BUF_OUT_RANGE)
      vyre__sb_printf(&b, " range %u %u", d->out_range_offset, d->out_range_size);
    if (d->access != VYRE_ACCESS_WORKGROUP) {
      if (d->binding != next_binding) vyre__sb_printf(&b, " @%u", d->binding);
      next_binding = d->binding + 1u;
    }
    vyre__sb_append(&b, "\n", 1);
  }
  for (uint32_t s = 0; s < p->local_count; s++)
    vyre__sb_printf(&b, "local l%u %s\n", s, vyre_type_name(p->local_types[s]));
  vyre__sb_append(&b, "\n", 1);
  for (uint32_t i = 0; i < p->inst_count; i++) emit_inst(&b, p, i);
  vyre_program_free(p);
  if (b.failed) {
    free(b.data);
    return vyre_error_set(err, VYRE_OUT_OF_MEMORY, 0,
                          "disassemble: out of host memory for the program text. Fix: free host memory");
  }
  *text = b.data;
  return VYRE_OK;
}
