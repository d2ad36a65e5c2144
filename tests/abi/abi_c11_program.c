/* abi_c11_program.c -- vyre_program.h compiles alone as strict C11 (-std=c11 -pedantic -Werror, no _GNU_SOURCE). */
#include "vyre/vyre_program.h"

size_t abi_c11_program(void);

size_t abi_c11_program(void) {
  const vyre_op_info *add = vyre_op_lookup(VYRE_OP_ADD);
  return sizeof(vyre_program_header) + sizeof(vyre_buffer_decl) + sizeof(vyre_inst) +
         (add ? add->id : 0u);
}
