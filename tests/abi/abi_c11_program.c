/* abi_c11_program.c -- vyre_program.h and vyre_text.h compile alone as strict C99 and C11 (-std=c99/c11 -pedantic -Werror, no _GNU_SOURCE). */
#include "vyre/vyre_program.h"
#include "vyre/vyre_text.h"

size_t abi_c11_program(void);

size_t abi_c11_program(void) {
  const vyre_op_info *add = vyre_op_lookup(VYRE_OP_ADD);
  char num[VYRE_TEXT_FLOAT_MAX];
  uint64_t bits = 0;
  vyre_status st = vyre_text_parse_literal("1.5", 3, VYRE_T_F32, VYRE_TEXT_LITERAL_DATA, &bits,
                                           NULL);
  size_t n = vyre_text_format_float(num, sizeof num, VYRE_T_F32, bits, VYRE_TEXT_FLOAT_POINT);
  return sizeof(vyre_program_header) + sizeof(vyre_buffer_decl) + sizeof(vyre_inst) +
         (add ? add->id : 0u) +
         (st == VYRE_OK && bits == 0x3fc00000u && n == 3 ? 0u : 1000u); /* "1.5" both ways */
}
