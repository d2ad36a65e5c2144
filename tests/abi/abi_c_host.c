/* abi_c_host.c -- vyre_host.h compiles alone as strict C99 and C11 (-pedantic -Werror, no _GNU_SOURCE); declarations only, nothing of libvyre-host is called. */
#include "vyre/vyre_host.h"

size_t abi_c_host(void);

/* vyre_host_options' size as this client sees it (8 + two pointers). */
size_t abi_c_host(void) {
  vyre_host_options o = {0};
  o.struct_size = sizeof o;
  return o.struct_size;
}
