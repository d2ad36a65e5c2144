/* codegen_bench.c -- time cg_emit_ptx on a 10,000-instruction program (a program to run by hand, not a test). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "plugin/codegen/codegen.h"
#include "vyre/vyre_support.h"

static double now_ms(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

/* A program of about `target` instructions: a realistic mix of loads,
 * f32 and integer arithmetic, compares, selects, locals, ifs and stores. */
static vyre_program *big_program(uint32_t target, int elementwise) {
  vyre_builder *b = vyre_builder_new(256, 1, 1);
  uint32_t x = vyre_b_buffer(b, "x", UINT32_MAX, VYRE_ACCESS_READ_ONLY, VYRE_T_F32, 0, 0);
  uint32_t y = vyre_b_buffer(b, "y", UINT32_MAX, VYRE_ACCESS_READ_WRITE, VYRE_T_F32, 0, 0);
  uint32_t k = vyre_b_buffer(b, "k", UINT32_MAX, VYRE_ACCESS_READ_WRITE, VYRE_T_U32, 0, 0);
  uint32_t acc = vyre_b_local(b, VYRE_T_F32), cnt = vyre_b_local(b, VYRE_T_U32);
  uint32_t g = vyre_b_gid(b, 0);
  vyre_b_let(b, acc, vyre_b_load(b, x, g));
  vyre_b_let(b, cnt, vyre_b_load(b, k, g));
  uint32_t round = 0;
  while (vyre_b_inst_count(b) + 30 < target) {
    uint32_t a = vyre_b_get(b, acc), c = vyre_b_get(b, cnt);
    uint32_t idx = elementwise ? g : vyre_b_bin(b, VYRE_OP_AND, vyre_b_bin(b, VYRE_OP_ADD, g, c), vyre_b_u32(b, 1023));
    uint32_t v = vyre_b_load(b, x, idx);
    uint32_t m = vyre_b_fma(b, a, v, vyre_b_f32(b, 0.5f + (float)(round % 7)));
    uint32_t d = vyre_b_bin(b, VYRE_OP_DIV, m, vyre_b_bin(b, VYRE_OP_ADD, v, vyre_b_f32(b, 3.0f)));
    uint32_t mx = vyre_b_bin(b, VYRE_OP_MAX, d, vyre_b_un(b, VYRE_OP_FLOOR, m));
    uint32_t ci = vyre_b_bin(b, VYRE_OP_XOR, vyre_b_bin(b, VYRE_OP_MUL, c, vyre_b_u32(b, 2654435761u)),
                             vyre_b_bin(b, VYRE_OP_SHR, c, vyre_b_u32(b, 13)));
    uint32_t q = vyre_b_bin(b, VYRE_OP_MOD, ci, vyre_b_u32(b, 97 + round));
    uint32_t cond = vyre_b_bin(b, VYRE_OP_LT, mx, vyre_b_cast(b, VYRE_T_F32, q));
    vyre_b_if(b, cond);
    vyre_b_assign(b, acc, vyre_b_select(b, vyre_b_bin(b, VYRE_OP_GT, mx, a), mx, a));
    vyre_b_else(b);
    vyre_b_assign(b, cnt, vyre_b_bin(b, VYRE_OP_SAT_ADD, ci, q));
    vyre_b_end(b);
    if (round % 8 == 7) {
      vyre_b_store(b, y, g, vyre_b_get(b, acc));
      vyre_b_store(b, k, g, vyre_b_get(b, cnt));
    }
    round++;
  }
  vyre_b_store(b, y, g, vyre_b_get(b, acc));
  void *bytes = NULL;
  size_t size = 0;
  vyre_error err = VYRE_ERROR_INIT;
  vyre_program *p = NULL;
  if (vyre_builder_finish(b, &bytes, &size, &err) ||
      vyre_program_decode(bytes, size, &p, &err)) {
    fprintf(stderr, "codegen_bench: %s\n", err.message);
    p = NULL;
  }
  vyre_builder_free(b);
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
