/* devices.c -- how many devices a backend has: the profile's device_count, else probing create until VYRE_NO_DEVICE (docs/abi.md, "Devices"). */
#include <stdio.h>
#include <string.h>

#include "cli.h"

vyre_status cli_backend_devices(vyre_host *host, const char *id, uint32_t *count,
                                uint32_t *index, vyre_backend **first, vyre_error *err) {
  uint32_t own_index = 0;
  if (!index) index = &own_index;
  *count = 0;
  if (first) *first = NULL;
  vyre_backend_options bo = {sizeof bo, 0, 0, 0, NULL};
  vyre_backend *b = NULL;
  vyre_status st = vyre_host_create(host, id, &bo, &b, index, err);
  if (st != VYRE_OK) return st;
  uint32_t n = 0;
  if (VYRE_HOST_HAS(b, device_profile)) {
    vyre_device_profile p;
    memset(&p, 0, sizeof p);
    p.struct_size = sizeof p;
    vyre_error e = VYRE_ERROR_INIT;
    if (b->vt->device_profile(b, &p, &e) == VYRE_OK) n = p.device_count;
  }
  if (n > CLI_MAX_DEVICES) n = CLI_MAX_DEVICES;
  if (n == 0) {
    /* A backend that does not report the count: the devices are the
     * ordinals before the first that create refuses with NO_DEVICE. */
    vyre_host_candidate c;
    memset(&c, 0, sizeof c);
    c.struct_size = sizeof c;
    vyre_host_backend_info(host, *index, &c, NULL);
    n = 1;
    while (n < CLI_MAX_DEVICES) {
      vyre_backend_options po = {sizeof po, n, 0, 0, NULL};
      vyre_backend *other = NULL;
      vyre_error e = VYRE_ERROR_INIT;
      vyre_status pst = vyre_host_create(host, c.id, &po, &other, NULL, &e);
      if (pst != VYRE_OK) {
        if (pst == VYRE_NO_DEVICE) break;
        n++; /* there, but failing for another reason: the caller will say why */
        continue;
      }
      other->vt->destroy(other);
      n++;
    }
  }
  *count = n;
  if (first) *first = b;
  else b->vt->destroy(b);
  return VYRE_OK;
}

int cli_parse_devices(const char *text, uint32_t *ordinal, int *all) {
  if (all && strcmp(text, "all") == 0) {
    *all = 1;
    return 0;
  }
  if (all) *all = 0;
  return cli_parse_u32(text, 0, CLI_MAX_DEVICES - 1, ordinal);
}
