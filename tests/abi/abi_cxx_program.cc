// abi_cxx_program.cc -- vyre_program.h compiles alone as C++17 (-pedantic -Werror) with C linkage.
#include "vyre/vyre_program.h"

#include <type_traits>

static_assert(std::is_standard_layout<vyre_program_header>::value, "header is plain data in C++");
static_assert(std::is_standard_layout<vyre_inst>::value, "vyre_inst is plain data in C++");
static_assert(VYRE_OP_TRAP < VYRE_OP_ID_LIMIT, "op ids fit the limit");

unsigned abi_cxx_program();

unsigned abi_cxx_program() {
  const vyre_op_info *op = vyre_op_by_mnemonic("fma", 3);
  return op ? op->id : 0u;
}
