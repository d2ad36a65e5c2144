/* devices.c -- how many devices a backend has (the profile's device_count, else probing create until VYRE_NO_DEVICE: docs/abi.md, "Devices"), and which one a --device UUID names. */
#include <stdio.h>
#include <string.h>

#include "abi/support/uuid.h"
#include "cli.h"
#include "vyre/vyre_support.h"

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

int cli_parse_devices(const char *text, uint32_t *ordinal, int *all, const char **uuid) {
  if (uuid) *uuid = NULL;
  if (all) *all = 0;
  if (all && strcmp(text, "all") == 0) {
    *all = 1;
    return 0;
  }
  if (cli_parse_u32(text, 0, CLI_MAX_DEVICES - 1, ordinal) == 0) return 0;
  char hex[33];
  size_t digits = 0;
  int gpu = 0;
  if (!uuid || vyre__uuid_parse_prefix(text, hex, &digits, &gpu) != 0) return -1;
  if (!gpu && strspn(text, "0123456789") == strlen(text)) return -1; /* an ordinal too large */
  *uuid = text;
  return 0;
}

/* Append device d's line ("device 1 GPU-..." or why it has none) to list. */
static void list_device(char *list, size_t size, uint32_t d, const char *what) {
  size_t used = strlen(list);
  if (used < size) snprintf(list + used, size - used, "%sdevice %u %s", used ? ", " : "", d, what);
}

vyre_status cli_device_by_uuid(vyre_host *host, const char *id, const char *uuid,
                               uint32_t *ordinal, vyre_error *err) {
  char hex[33];
  size_t digits = 0;
  if (vyre__uuid_parse_prefix(uuid, hex, &digits, NULL) != 0)
    return vyre_error_set(err, VYRE_INVALID_ARGUMENT, 0,
                          "device '%s' is neither an ordinal nor a device UUID. Fix: pass an "
                          "ordinal or a UUID as `vyre info` prints it (GPU-xxxxxxxx-...)", uuid);
  uint32_t count = 0, index = 0;
  vyre_backend *b = NULL;
  vyre_status st = cli_backend_devices(host, id, &count, &index, &b, err);
  if (st != VYRE_OK) return st;
  vyre_host_candidate c;
  memset(&c, 0, sizeof c);
  c.struct_size = sizeof c;
  vyre_host_backend_info(host, index, &c, NULL);
  char list[1200] = "";
  uint32_t hits = 0;
  for (uint32_t d = 0; d < count; d++) {
    vyre_error e = VYRE_ERROR_INIT;
    if (d > 0) {
      vyre_backend_options bo = {sizeof bo, d, 0, 0, NULL};
      if (vyre_host_create(host, c.id, &bo, &b, NULL, &e) != VYRE_OK) {
        list_device(list, sizeof list, d, "(unavailable)");
        continue;
      }
    }
    vyre_device_profile p;
    memset(&p, 0, sizeof p);
    p.struct_size = sizeof p;
    char text[VYRE__UUID_TEXT_SIZE];
    if (VYRE_HOST_HAS(b, device_profile) && b->vt->device_profile(b, &p, &e) == VYRE_OK) {
      list_device(list, sizeof list, d,
                  vyre__uuid_is_zero(p.uuid) ? "(no UUID reported)" : vyre__uuid_format(p.uuid, text));
      if (vyre__uuid_matches(p.uuid, hex, digits)) {
        *ordinal = d;
        hits++;
      }
    } else {
      list_device(list, sizeof list, d, "(no profile)");
    }
    b->vt->destroy(b);
  }
  if (hits == 1) return VYRE_OK;
  if (hits == 0)
    return vyre_error_set(err, VYRE_NO_DEVICE, 0,
                          "no device of backend %s has UUID %s: %s. Fix: pass one of these "
                          "UUIDs (a unique prefix is enough) or an ordinal",
                          c.id, uuid, list);
  return vyre_error_set(err, VYRE_NO_DEVICE, 0,
                        "%u devices of backend %s match UUID prefix %s: %s. Fix: give more of "
                        "the UUID, enough to tell them apart",
                        hits, c.id, uuid, list);
}
