/* log.c -- the one log: VYRE_LOG read once per process, tracing and warnings to stderr, and the environment's numbers checked with a warning (log.h, config.h). */
#include "log.h"

#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "config.h"

enum { LEVEL_OFF, LEVEL_WARN, LEVEL_DEBUG };

static pthread_once_t level_once = PTHREAD_ONCE_INIT;
static int level = LEVEL_WARN;

static void level_init(void) {
  const char *v = vyre__env(VYRE__ENV_LOG);
  if (!v) return;
  if (strstr(v, "debug") || strstr(v, "trace")) level = LEVEL_DEBUG;
  else if (!strcmp(v, "off") || !strcmp(v, "quiet") || !strcmp(v, "none")) level = LEVEL_OFF;
  else if (strcmp(v, "warn") != 0)
    fprintf(stderr, "vyre: VYRE_LOG='%s' is not a log level: warnings only. Fix: set it to debug, "
                    "trace, warn or off\n", v);
}

int vyre__log_debug(void) {
  pthread_once(&level_once, level_init);
  return level >= LEVEL_DEBUG;
}

/* One fputs per line, so lines of concurrent threads do not interleave. */
static void emit(const char *who, const char *fmt, va_list ap) {
  char line[2048];
  int n = snprintf(line, sizeof line, "%s: ", who);
  if (n < 0 || (size_t)n >= sizeof line) n = 0;
  vsnprintf(line + n, sizeof line - (size_t)n, fmt, ap);
  size_t len = strlen(line);
  if (len + 1 < sizeof line) {
    line[len] = '\n';
    line[len + 1] = '\0';
  } else {
    line[sizeof line - 2] = '\n';
  }
  fputs(line, stderr);
}

void vyre__log(const char *who, const char *fmt, ...) {
  if (!vyre__log_debug()) return;
  va_list ap;
  va_start(ap, fmt);
  emit(who, fmt, ap);
  va_end(ap);
}

void vyre__warn(const char *who, const char *fmt, ...) {
  pthread_once(&level_once, level_init);
  if (level == LEVEL_OFF) return;
  va_list ap;
  va_start(ap, fmt);
  emit(who, fmt, ap);
  va_end(ap);
}

/* config.c finds what is wrong with a number; the log says it. */
static uint64_t env_number(vyre__env_id id, uint64_t fallback, uint64_t min, uint64_t max) {
  char problem[512];
  uint64_t v;
  if (vyre__env_count(id, fallback, min, max, &v, problem, sizeof problem) != 0)
    vyre__warn("vyre", "%s", problem);
  return v;
}

uint64_t vyre__env_uint(vyre__env_id id, uint64_t fallback, uint64_t min, uint64_t max) {
  return env_number(id, fallback, min, max);
}

uint64_t vyre__env_bytes(vyre__env_id id, uint64_t fallback, uint64_t min, uint64_t max) {
  return env_number(id, fallback, min, max);
}
