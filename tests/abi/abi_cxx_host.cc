// abi_cxx_host.cc -- vyre_host.h compiles alone as C++11 and C++17 (-pedantic -Werror) with C linkage; declarations only.
#include "vyre/vyre_host.h"

#include <type_traits>

static_assert(std::is_standard_layout<vyre_host_candidate>::value, "the candidate is plain data in C++");

std::size_t abi_cxx_host();

// vyre_host_options' size as this client sees it (8 + two pointers).
std::size_t abi_cxx_host() {
  vyre_host_options o = {};
  o.struct_size = sizeof o;
  return o.struct_size;
}
