/* abi_c11_vyre.c -- vyre.h compiles alone as strict C11 (-std=c11 -pedantic -Werror, no _GNU_SOURCE). */
#include "vyre/vyre.h"

size_t abi_c11_vyre(void);

/* Sizes a C11 client sees, compared with the library's view in main. */
size_t abi_c11_vyre(void) {
  vyre_error e = VYRE_ERROR_INIT;
  return e.struct_size + sizeof(vyre_backend_vtable) + sizeof(vyre_registration) +
         sizeof(vyre_plugin_descriptor);
}
