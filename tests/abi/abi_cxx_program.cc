// abi_cxx_program.cc -- vyre_program.h and vyre_text.h compile alone as C++11 and C++17 (-pedantic -Werror) with C linkage.
#include "vyre/vyre_program.h"
#include "vyre/vyre_text.h"

#include <type_traits>

static_assert(std::is_standard_layout<vyre_program_header>::value, "header is plain data in C++");
static_assert(std::is_standard_layout<vyre_inst>::value, "vyre_inst is plain data in C++");
static_assert(VYRE_OP_TRAP < VYRE_OP_ID_LIMIT, "op ids fit the limit");

unsigned abi_cxx_program();

unsigned abi_cxx_program() {
  const vyre_op_info *op = vyre_op_by_mnemonic("fma", 3);
  char num[VYRE_TEXT_FLOAT_MAX];
  uint64_t bits = 0;
  vyre_status st = vyre_text_parse_literal("010", 3, VYRE_T_U32, VYRE_TEXT_LITERAL_DATA, &bits,
                                           nullptr);
  size_t n = vyre_text_format_float(num, sizeof num, VYRE_T_F32, 0x41200000u, 0);
  return (op ? op->id : 0u) + (st == VYRE_OK && bits == 10u && n == 2 ? 0u : 1000u); // 010 is ten, 10.0f is "10"
}
