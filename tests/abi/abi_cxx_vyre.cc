// abi_cxx_vyre.cc -- vyre.h compiles alone as C++17 (-pedantic -Werror) with C linkage.
#include "vyre/vyre.h"

#include <type_traits>

static_assert(std::is_standard_layout<vyre_error>::value, "vyre_error is plain data in C++");
static_assert(std::is_trivially_copyable<vyre_backend_vtable>::value, "vtable is plain data in C++");
static_assert(std::is_standard_layout<vyre_registration>::value, "registration is plain data");

std::size_t abi_cxx_vyre();

std::size_t abi_cxx_vyre() {
  vyre_error e = VYRE_ERROR_INIT;
  return e.struct_size + sizeof(vyre_backend_vtable) + sizeof(vyre_registration);
}
