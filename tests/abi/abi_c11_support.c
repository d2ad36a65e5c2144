/* abi_c11_support.c -- vyre_support.h compiles alone as strict C99 and C11 (-std=c99/c11 -pedantic -Werror, no _GNU_SOURCE); main of both checks. */
#include "vyre/vyre_support.h"

#include <stdio.h>
#include <stdlib.h>

size_t abi_c11_vyre(void);
size_t abi_c11_program(void);
size_t abi_c_host(void);

#if __STDC_VERSION__ >= 201112L
#define NAME "abi_headers_c11"
#else
#define NAME "abi_headers_c99"
#endif

int main(void) {
  size_t want_vyre = sizeof(vyre_error) + sizeof(vyre_backend_vtable) + sizeof(vyre_registration) +
                     sizeof(vyre_descriptor);
  size_t want_program = 64 + 32 + 20 + VYRE_OP_ADD;
  size_t want_host = 8 + 2 * sizeof(void *);
  if (abi_c11_vyre() != want_vyre || abi_c11_program() != want_program ||
      abi_c_host() != want_host) {
    fprintf(stderr, NAME ": a strict C client sees other struct sizes (%zu/%zu/%zu, "
                    "expected %zu/%zu/%zu)\n",
            abi_c11_vyre(), abi_c11_program(), abi_c_host(), want_vyre, want_program, want_host);
    return EXIT_FAILURE;
  }
  /* The library linked at run time speaks the headers' ABI. */
  uint32_t major = 0, minor = 0;
  const char *release = vyre_version(&major, &minor);
  if (!release || !release[0] || major != VYRE_ABI_MAJOR || minor != VYRE_ABI_MINOR) {
    fprintf(stderr, NAME ": vyre_version says %s, ABI %u.%u; the headers say ABI %u.%u\n",
            release ? release : "NULL", (unsigned)major, (unsigned)minor, VYRE_ABI_MAJOR,
            VYRE_ABI_MINOR);
    return EXIT_FAILURE;
  }
  /* The builder and the decoder link and work from a strict C client. */
  vyre_builder *b = vyre_builder_new(1, 1, 1);
  if (!b) return EXIT_FAILURE;
  vyre_b_return(b);
  void *bytes = NULL;
  size_t size = 0;
  vyre_error err = VYRE_ERROR_INIT;
  vyre_program *p = NULL;
  int ok = vyre_builder_finish(b, &bytes, &size, &err) == VYRE_OK &&
           vyre_program_decode(bytes, size, &p, &err) == VYRE_OK;
  vyre_program_free(p);
  free(bytes);
  vyre_builder_free(b);
  if (!ok) fprintf(stderr, NAME ": %s\n", err.message);
  return ok ? EXIT_SUCCESS : EXIT_FAILURE;
}
