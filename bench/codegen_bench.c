/* codegen_bench.c -- time cg_emit_ptx on a 10,000-instruction program (a program to run by hand, not a test). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "host-stub/fuzz/progen.h"
#include "plugin/codegen/codegen.h"
#include "vyre/vyre_support.h"

static double now_ms(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

/* The program of fz_progen_bench_program (host-stub/fuzz/progen.h), decoded. */
static vyre_program *big_program(uint32_t target, int elementwise) {
  void *bytes = NULL;
  size_t size = 0;
  vyre_error err = VYRE_ERROR_INIT;
  vyre_program *p = NULL;
  if (fz_progen_bench_program(target, elementwise, &bytes, &size, &err) ||
      vyre_program_decode(bytes, size, &p, &err)) {
    fprintf(stderr, "codegen_bench: %s\n", err.message);
    p = NULL;
  }
  free(bytes);
  return p;
}

static int cmp_double(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return x < y ? -1 : x > y;
}

static int bench(const char *label, const vyre_program *p, uint32_t major, uint32_t minor) {
  cg_options o;
  memset(&o, 0, sizeof o);
  o.sm_major = major;
  o.sm_minor = minor;
  o.ulp_budget = 4;
  o.workgroup[0] = 256;
  o.workgroup[1] = o.workgroup[2] = 1;
  enum { RUNS = 51 };
  double t[RUNS];
  size_t bytes = 0;
  cg_kernel_info info;
  for (int r = 0; r < RUNS; r++) {
    char *ptx = NULL;
    size_t len = 0;
    vyre_error err = VYRE_ERROR_INIT;
    double t0 = now_ms();
    vyre_status st = cg_emit_ptx(p, &o, &ptx, &len, &info, &err);
    t[r] = now_ms() - t0;
    if (st) {
      fprintf(stderr, "codegen_bench: %s\n", err.message);
      return 1;
    }
    bytes = len;
    free(ptx);
  }
  qsort(t, RUNS, sizeof t[0], cmp_double);
  printf("%-28s sm_%u%u  %6u insts  %8zu bytes PTX  median %.3f ms  min %.3f ms  (%.0f ns/inst)%s\n",
         label, major, minor, p->inst_count, bytes, t[RUNS / 2], t[0],
         t[RUNS / 2] * 1e6 / p->inst_count,
         info.grid_mode == CG_GRID_ELEMENTWISE ? "  [elementwise]" : "");
  return 0;
}

int main(int argc, char **argv) {
  int only_general = argc > 1 && strcmp(argv[1], "general") == 0;
  vyre_program *general = big_program(10000, 0);
  vyre_program *ew = big_program(4000, 1); /* the elementwise path takes <= 4096 */
  if (!general || !ew) return 1;
  int rc = bench("general, 10k instructions", general, 9, 0);
  if (!only_general) {
    rc |= bench("general, 10k instructions", general, 7, 5);
    rc |= bench("elementwise, 4k (x9 copies)", ew, 9, 0);
  }
  vyre_program_free(general);
  vyre_program_free(ew);
  return rc;
}
