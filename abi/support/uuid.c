/* uuid.c -- device UUIDs: NVIDIA's text form and prefix matching (uuid.h). */
#include "uuid.h"

#include <ctype.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>

static const char hexdig[] = "0123456789abcdef";

int vyre__uuid_is_zero(const uint8_t uuid[16]) {
  for (int i = 0; i < 16; i++)
    if (uuid[i]) return 0;
  return 1;
}

char *vyre__uuid_format(const uint8_t uuid[16], char *out) {
  if (vyre__uuid_is_zero(uuid)) {
    snprintf(out, VYRE__UUID_TEXT_SIZE, "none");
    return out;
  }
  memcpy(out, "GPU-", 4);
  size_t o = 4;
  for (int i = 0; i < 16; i++) {
    if (i == 4 || i == 6 || i == 8 || i == 10) out[o++] = '-';
    out[o++] = hexdig[uuid[i] >> 4];
    out[o++] = hexdig[uuid[i] & 15];
  }
  out[o] = '\0';
  return out;
}

int vyre__uuid_parse_prefix(const char *text, char hex[33], size_t *digits, int *gpu_prefix) {
  if (!text) return -1;
  int gpu = strncasecmp(text, "GPU-", 4) == 0;
  if (gpu) text += 4;
  size_t n = 0;
  for (const char *c = text; *c; c++) {
    if (*c == '-') {
      /* Only where the canonical form has one, and not twice. */
      if (n != 8 && n != 12 && n != 16 && n != 20) return -1;
      if (c > text && c[-1] == '-') return -1;
      continue;
    }
    if (!isxdigit((unsigned char)*c) || n == 32) return -1;
    hex[n++] = (char)tolower((unsigned char)*c);
  }
  if (n == 0) return -1;
  hex[n] = '\0';
  *digits = n;
  if (gpu_prefix) *gpu_prefix = gpu;
  return 0;
}

int vyre__uuid_matches(const uint8_t uuid[16], const char *hex, size_t digits) {
  if (vyre__uuid_is_zero(uuid) || digits > 32) return 0;
  for (size_t i = 0; i < digits; i++) {
    uint8_t nib = (uint8_t)(i % 2 ? uuid[i / 2] & 15 : uuid[i / 2] >> 4);
    if (hex[i] != hexdig[nib]) return 0;
  }
  return 1;
}
