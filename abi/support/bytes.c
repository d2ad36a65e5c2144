/* bytes.c -- counts and byte counts as people write them: digits and an optional K/M/G/T suffix (bytes.h). */
#include "bytes.h"

#include <stddef.h>

/* The digits at *s as a uint64_t; *s moves past them.  -1 when there
 * are none or the value overflows. */
static int digits(const char **s, uint64_t *out) {
  const char *p = *s;
  uint64_t x = 0;
  if (*p < '0' || *p > '9') return -1;
  for (; *p >= '0' && *p <= '9'; p++) {
    unsigned d = (unsigned)(*p - '0');
    if (x > (UINT64_MAX - d) / 10) return -1;
    x = x * 10 + d;
  }
  *s = p;
  *out = x;
  return 0;
}

int vyre__parse_count(const char *s, uint64_t *out) {
  uint64_t x;
  if (!s || digits(&s, &x) != 0 || *s) return -1;
  *out = x;
  return 0;
}

int vyre__parse_bytes(const char *s, uint64_t *out) {
  uint64_t x;
  if (!s || digits(&s, &x) != 0) return -1;
  unsigned shift = 0;
  switch (*s) {
  case '\0': break;
  case 'k': case 'K': shift = 10; break;
  case 'm': case 'M': shift = 20; break;
  case 'g': case 'G': shift = 30; break;
  case 't': case 'T': shift = 40; break;
  default: return -1;
  }
  if (shift && *++s) return -1;
  if (shift && x > (UINT64_MAX >> shift)) return -1;
  *out = x << shift;
  return 0;
}
