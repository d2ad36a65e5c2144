/* version.c -- vyre_version: which libvyre is linked at run time. */
#include "config.h"

#include "vyre/vyre_support.h"

const char *vyre_version(uint32_t *abi_major, uint32_t *abi_minor) {
  if (abi_major) *abi_major = VYRE_ABI_MAJOR;
  if (abi_minor) *abi_minor = VYRE_ABI_MINOR;
  return PACKAGE_VERSION;
}
