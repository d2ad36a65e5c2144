/* clock.c -- the one clock: CLOCK_MONOTONIC, elapsed time, deadlines (clock.h). */
#include "clock.h"

#include <time.h>

uint64_t vyre__now_ns(void) {
  struct timespec ts;
  /* CLOCK_MONOTONIC cannot fail with a valid pointer on Linux. */
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

double vyre__now_seconds(void) { return (double)vyre__now_ns() / 1e9; }

uint64_t vyre__elapsed_ns(uint64_t start) {
  uint64_t now = vyre__now_ns();
  return now > start ? now - start : 0;
}

int vyre__deadline_passed(uint64_t deadline) { return deadline && vyre__now_ns() >= deadline; }

uint64_t vyre__deadline_left_ns(uint64_t deadline) {
  if (!deadline) return UINT64_MAX;
  uint64_t now = vyre__now_ns();
  return now < deadline ? deadline - now : 0;
}
