/* abi_c11_vyre.c -- vyre.h compiles alone as strict C99 and C11 (-std=c99/c11 -pedantic -Werror, no _GNU_SOURCE). */
#include "vyre/vyre.h"
#include "vyre/vyre_cuda.h"

size_t abi_c11_vyre(void);

/* The descriptor as docs/abi.md tells a plugin author to write it: the
 * type and the exported symbol have different names, so this compiles
 * (as C99 and C11 here, as C++ in abi_cxx_plugin.cc). */
VYRE_PLUGIN_EXPORT const vyre_descriptor vyre_plugin_descriptor =
    VYRE_DESCRIPTOR_INIT(0, VYRE_ABI_MINOR, "strict c client");

/* Sizes a strict C client sees, compared with the library's view in main;
 * 1000 more when VYRE_DESCRIPTOR_INIT did not set the release marker. */
size_t abi_c11_vyre(void) {
  vyre_error e = VYRE_ERROR_INIT;
  return e.struct_size + sizeof(vyre_backend_vtable) + sizeof(vyre_registration) +
         vyre_plugin_descriptor.struct_size +
         (vyre_plugin_descriptor.release == VYRE_DESCRIPTOR_RELEASE ? 0 : 1000);
}
