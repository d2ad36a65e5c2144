// abi_cxx.cc -- vyre_support.h and vyre_text.h compile as C++11 and C++17 (-pedantic -Werror); the C library links and runs from C++; in C++14 and later, docs/abi.md's C++ registration form (abi_cxx_plugin.cc) answers its entry.
#include "vyre/vyre_support.h"
#include "vyre/vyre_text.h"

#include <cstdio>
#include <cstdlib>
#include <cstring>

#if __cplusplus >= 201402L
#define NAME "abi_headers_cxx"
// abi_cxx_plugin.cc: the registration form needs C++14's constexpr.
extern "C" const vyre_descriptor vyre_plugin_descriptor;
extern "C" vyre_status vyre_plugin_entry(uint16_t host_major, uint16_t host_minor,
                                         const vyre_registration **out, vyre_error *err);

static bool plugin_form_answers() {
  const vyre_registration *reg = nullptr;
  vyre_error err = VYRE_ERROR_INIT;
  if (vyre_plugin_descriptor.release != VYRE_DESCRIPTOR_RELEASE ||
      vyre_plugin_descriptor.abi_minor_max != VYRE_ABI_MINOR ||
      vyre_plugin_entry(VYRE_ABI_MAJOR, VYRE_ABI_MINOR, &reg, &err) != VYRE_OK || !reg ||
      reg->struct_size != sizeof(vyre_registration) || std::strcmp(reg->id, "myplugin") != 0 ||
      reg->op_count != 2 || reg->ops[1] != VYRE_OP_MUL || !reg->create || reg->op_types) {
    std::fprintf(stderr, NAME ": the C++ registration form does not answer as docs/abi.md says: %s\n",
                 err.message);
    return false;
  }
  vyre_backend *b = nullptr;
  if (reg->create(nullptr, &b, &err) != VYRE_NO_DEVICE || b) return false;
  // Another major: refused in libvyre's wording, the registration not handed out.
  reg = nullptr;
  if (vyre_plugin_entry(VYRE_ABI_MAJOR + 1, 0, &reg, &err) != VYRE_ABI_MISMATCH || reg ||
      !std::strstr(err.message, "Fix:")) {
    std::fprintf(stderr, NAME ": the C++ registration form accepts ABI %d.0\n", VYRE_ABI_MAJOR + 1);
    return false;
  }
  return true;
}
#else
#define NAME "abi_headers_cxx11"
static bool plugin_form_answers() { return true; }
#endif

std::size_t abi_cxx_vyre();
unsigned abi_cxx_program();
std::size_t abi_cxx_host();

int main() {
  if (abi_cxx_vyre() != sizeof(vyre_error) + sizeof(vyre_backend_vtable) + sizeof(vyre_registration) ||
      abi_cxx_program() != VYRE_OP_FMA || abi_cxx_host() != 8 + 2 * sizeof(void *)) {
    std::fprintf(stderr, NAME ": C++ sees other sizes or ops than C\n");
    return EXIT_FAILURE;
  }
  if (!plugin_form_answers()) return EXIT_FAILURE;
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
  if (!ok) std::fprintf(stderr, NAME ": %s\n", err.message);
  vyre_program_free(p);
  std::free(bytes);
  vyre_builder_free(b);
  return ok ? EXIT_SUCCESS : EXIT_FAILURE;
}
