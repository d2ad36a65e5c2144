/* config.c -- the one reader of the environment: names, secure_getenv for paths, validated numbers (config.h). */
#include "config.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "log.h"

enum { KIND_TEXT, KIND_PATH, KIND_UINT, KIND_BYTES };

static const struct {
  const char *name;
  int kind;
} vars[] = {
#define VYRE__ENV_ROW_(id, name, kind) {name, KIND_##kind},
    VYRE__ENV_MAP(VYRE__ENV_ROW_)
#undef VYRE__ENV_ROW_
};

const char *vyre__env_name(vyre__env_id id) {
  return (unsigned)id < VYRE__ENV_COUNT_ ? vars[id].name : "?";
}

const char *vyre__env(vyre__env_id id) {
  if ((unsigned)id >= VYRE__ENV_COUNT_) return NULL;
  const char *v;
#if defined(__GLIBC__)
  /* A set-user-ID program must not load code or data a caller names. */
  v = vars[id].kind == KIND_PATH ? secure_getenv(vars[id].name) : getenv(vars[id].name);
#else
  v = getenv(vars[id].name);
#endif
  return v && *v ? v : NULL;
}

/* Parses "123", and with `suffixes` "123K|M|G" (binary multiples).
 * 0 on success. */
static int parse_count(const char *v, int suffixes, uint64_t *out) {
  if (*v < '0' || *v > '9') return -1;
  char *end = NULL;
  errno = 0;
  unsigned long long x = strtoull(v, &end, 10);
  if (errno) return -1;
  unsigned shift = 0;
  if (suffixes && *end) {
    switch (*end) {
    case 'k': case 'K': shift = 10; break;
    case 'm': case 'M': shift = 20; break;
    case 'g': case 'G': shift = 30; break;
    default: return -1;
    }
    end++;
  }
  if (*end) return -1;
  if (shift && x > (UINT64_MAX >> shift)) return -1;
  *out = (uint64_t)x << shift;
  return 0;
}

static uint64_t read_count(vyre__env_id id, int suffixes, uint64_t fallback, uint64_t min,
                           uint64_t max) {
  const char *v = vyre__env(id);
  if (!v) return fallback;
  const char *name = vyre__env_name(id);
  uint64_t x;
  if (parse_count(v, suffixes, &x) != 0) {
    vyre__warn("vyre", "%s='%s' is not %s: using %llu. Fix: set it to %s, or unset it", name, v,
               suffixes ? "a byte count" : "a count", (unsigned long long)fallback,
               suffixes ? "a number of bytes with an optional K, M or G suffix" : "a decimal number");
    return fallback;
  }
  if (x < min || x > max) {
    uint64_t c = x < min ? min : max;
    vyre__warn("vyre", "%s=%s is outside %llu..%llu: using %llu. Fix: set it within the range", name,
               v, (unsigned long long)min, (unsigned long long)max, (unsigned long long)c);
    return c;
  }
  return x;
}

uint64_t vyre__env_uint(vyre__env_id id, uint64_t fallback, uint64_t min, uint64_t max) {
  return read_count(id, 0, fallback, min, max);
}

uint64_t vyre__env_bytes(vyre__env_id id, uint64_t fallback, uint64_t min, uint64_t max) {
  return read_count(id, 1, fallback, min, max);
}
