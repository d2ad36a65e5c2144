/* api.c -- libvyre-host's pure helpers: names, versions, minor negotiation and the vtable probe, called by the other loader files and by hosts. */
#include "config.h"

#include <stddef.h>
#include <string.h>

#include "internal.h"

/* ------------------------------------------------------------------ */
/* Names                                                               */
/* ------------------------------------------------------------------ */

const char *vyre_host_status_name(uint32_t status) {
  switch (status) {
  case VYRE_HOST_LOADED: return "loaded";
  case VYRE_HOST_READY: return "ready";
  case VYRE_HOST_UNAVAILABLE: return "unavailable";
  case VYRE_HOST_SKIPPED: return "skipped";
  case VYRE_HOST_LISTED: return "listed";
  default: return "?";
  }
}

const char *vyre_host_origin_name(uint32_t origin) {
  switch (origin) {
  case VYRE_HOST_FROM_OPTIONS: return "options";
  case VYRE_HOST_FROM_ENV: return "VYRE_BACKEND_PATH";
  case VYRE_HOST_FROM_BUILD: return "build tree";
  case VYRE_HOST_FROM_PLUGINDIR: return "plugin dir";
  default: return "?";
  }
}

/* The names live in libvyre's one capability table (VYRE_CAP_MAP). */
const char *vyre_host_capability_name(uint32_t bit) { return vyre_capability_name(bit); }

const char *vyre_host_version(uint32_t *abi_major, uint32_t *abi_minor) {
  if (abi_major) *abi_major = VYRE_ABI_MAJOR;
  if (abi_minor) *abi_minor = VYRE_HOST_ABI_MINOR;
  return PACKAGE_VERSION;
}

vyre_status vyre_host_negotiate_minor(uint16_t host_minor, uint16_t min, uint16_t max,
                                      uint16_t *out) {
  if (min > max) return VYRE_ABI_MISMATCH;
  uint16_t agreed = host_minor < max ? host_minor : max;
  if (agreed < min) return VYRE_ABI_MISMATCH;
  if (out) *out = agreed;
  return VYRE_OK;
}

int vyre_host_vtable_has(const vyre_backend *backend, size_t offset) {
  if (!backend || backend->struct_size < HOST_BACKEND_MIN || !backend->vt) return 0;
  const vyre_backend_vtable *vt = backend->vt;
  if (offset % sizeof(void (*)(void)) != 0 || offset < offsetof(vyre_backend_vtable, destroy))
    return 0;
  if ((size_t)vt->struct_size < offset + sizeof(void (*)(void))) return 0;
  /* Read the slot as bytes: the entry may be beyond this host's struct
   * when the plugin is newer, but never beyond the plugin's. */
  void (*fn)(void) = NULL;
  memcpy(&fn, (const char *)vt + offset, sizeof fn);
  return fn != NULL;
}
