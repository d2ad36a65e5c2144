// abi_cxx_vyre.cc -- vyre.h compiles alone as C++11 and C++17 (-pedantic -Werror) with C linkage.
#include "vyre/vyre.h"
#include "vyre/vyre_cuda.h"

#include <type_traits>

static_assert(std::is_standard_layout<vyre_error>::value, "vyre_error is plain data in C++");
static_assert(std::is_trivially_copyable<vyre_backend_vtable>::value, "vtable is plain data in C++");
static_assert(std::is_standard_layout<vyre_registration>::value, "registration is plain data");

std::size_t abi_cxx_vyre();

// A descriptor as docs/abi.md writes it compiles as C++11 too: external
// linkage and C naming come from VYRE_PLUGIN_EXPORT (abi_cxx_plugin.cc, in
// the C++17 build, is the whole registration form, vyre_plugin_descriptor).
VYRE_PLUGIN_EXPORT const vyre_descriptor abi_cxx_descriptor =
    VYRE_DESCRIPTOR_INIT(0, VYRE_ABI_MINOR, "c++ client");
static_assert(sizeof(vyre_status) == 4, "vyre_status is 32 bits in C++ too");

std::size_t abi_cxx_vyre() {
  vyre_error e = VYRE_ERROR_INIT;
  return e.struct_size + sizeof(vyre_backend_vtable) + sizeof(vyre_registration) +
         abi_cxx_descriptor.struct_size - sizeof(vyre_descriptor) +
         (abi_cxx_descriptor.release == VYRE_DESCRIPTOR_RELEASE ? 0 : 1000);
}
