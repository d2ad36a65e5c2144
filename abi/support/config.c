/* config.c -- the one reader of the environment: names, secure_getenv for paths, checked numbers; the floor of support (calls no log) (config.h). */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>

#include "bytes.h"

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

/* Decimal digits only, at least one: a count, however long. */
static int all_digits(const char *v) {
  if (!*v) return 0;
  for (; *v; v++)
    if (*v < '0' || *v > '9') return 0;
  return 1;
}

int vyre__env_count_as(vyre__env_id id, uint64_t fallback, const char *fallback_words,
                       uint64_t min, uint64_t max, uint64_t *value, char *problem,
                       size_t problem_size) {
  *value = fallback;
  if (problem && problem_size) problem[0] = '\0';
  const char *v = vyre__env(id);
  if (!v) return 0;
  const char *name = vyre__env_name(id);
  int bytes = vars[id].kind == KIND_BYTES;
  uint64_t x;
  /* A count of digits past 2^64 - 1 is above every range: clamped to the
   * maximum like any other value above it (docs/environment.md). */
  int parsed = (bytes ? vyre__parse_bytes(v, &x) : vyre__parse_count(v, &x)) == 0;
  int overflow = !parsed && !bytes && all_digits(v);
  if (overflow) x = UINT64_MAX;
  if (!parsed && !overflow) {
    if (problem && problem_size) {
      char used[160];
      if (fallback_words)
        snprintf(used, sizeof used, "%s (%llu)", fallback_words, (unsigned long long)fallback);
      else
        snprintf(used, sizeof used, "%llu", (unsigned long long)fallback);
      snprintf(problem, problem_size,
               "%s='%s' is not %s: using %s. Fix: set it to %s, or unset it", name, v,
               bytes ? "a byte count" : "a count", used,
               bytes ? VYRE__BYTES_GRAMMAR : "a decimal number");
    }
    return -1;
  }
  if (x < min || x > max) {
    *value = x < min ? min : max;
    if (problem && problem_size)
      snprintf(problem, problem_size,
               "%s=%s is outside %llu..%llu: using %llu. Fix: set it within the range", name, v,
               (unsigned long long)min, (unsigned long long)max, (unsigned long long)*value);
    return -1;
  }
  *value = x;
  return 0;
}

int vyre__env_count(vyre__env_id id, uint64_t fallback, uint64_t min, uint64_t max,
                    uint64_t *value, char *problem, size_t problem_size) {
  return vyre__env_count_as(id, fallback, NULL, min, max, value, problem, problem_size);
}
