// abi_cxx.cc -- vyre_support.h and vyre_text.h compile as C++17 (-pedantic -Werror); the C library links and runs from C++.
#include "vyre/vyre_support.h"
#include "vyre/vyre_text.h"

#include <cstdio>
#include <cstdlib>
#include <cstring>

std::size_t abi_cxx_vyre();
unsigned abi_cxx_program();

int main() {
  if (abi_cxx_vyre() != sizeof(vyre_error) + sizeof(vyre_backend_vtable) + sizeof(vyre_registration) ||
      abi_cxx_program() != VYRE_OP_FMA) {
    std::fprintf(stderr, "abi_headers_cxx: C++ sees other sizes or ops than C\n");
    return EXIT_FAILURE;
  }
  vyre_builder *b = vyre_builder_new(64, 1, 1);
  if (!b) return EXIT_FAILURE;
  uint32_t x = vyre_b_buffer(b, "x", UINT32_MAX, VYRE_ACCESS_READ_WRITE, VYRE_T_F32, 0, 0);
  uint32_t i = vyre_b_gid(b, 0);
  uint32_t v = vyre_b_load(b, x, i);
  vyre_b_store(b, x, i, vyre_b_bin(b, VYRE_OP_ADD, v, v));
  void *bytes = nullptr;
  std::size_t size = 0;
  vyre_error err = VYRE_ERROR_INIT;
  vyre_program *p = nullptr;
  bool ok = vyre_builder_finish(b, &bytes, &size, &err) == VYRE_OK &&
            vyre_program_decode(bytes, size, &p, &err) == VYRE_OK && p->inst_count == 4 &&
            std::strcmp(p->buffers[0].name, "x") == 0;
  if (!ok) std::fprintf(stderr, "abi_headers_cxx: %s\n", err.message);
  vyre_program_free(p);
  std::free(bytes);
  vyre_builder_free(b);
  return ok ? EXIT_SUCCESS : EXIT_FAILURE;
}
