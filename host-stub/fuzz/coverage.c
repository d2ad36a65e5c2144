/* coverage.c -- progen's default shape (coverage for lowering and ptxas) and PROGEN_DECL_VARIETY: buffers without roles, of every access mode, binding, name and byte range. */
#include <stdio.h>

#include "internal.h"

static const char *const name_pool[] = {
    "x", "y", "out", "hist", "_tmp", "Data9", "tile", "ro", "u32", "output", "range", "loop",
    "end", "l0", "buffer", "a_rather_long_buffer_name_that_is_exactly_63_bytes_long_xxxxxxx"};

/* Buffers without roles (K_ANY): every access mode, fixed or input-sized;
 * PROGEN_DECL_VARIETY adds bindings, names and byte ranges. */
void fz_declare_any(gen *g) {
  int variety = has(g, PROGEN_DECL_VARIETY);
  uint32_t n = 1 + rnd(g, 5), binding = variety ? rnd(g, 3) : UINT32_MAX;
  uint8_t used[N(name_pool)] = {0};
  int any_out = 0;
  for (uint32_t k = 0; k < n; k++) {
    uint8_t t = fz_storage_type(g);
    if (chance(g, 40)) t = chance(g, 50) ? VYRE_T_F32 : VYRE_T_U32;
    uint32_t a = rnd(g, VYRE_ACCESS_COUNT_);
    if (a == VYRE_ACCESS_WORKGROUP && (ew(g) || has(g, PROGEN_NO_WORKGROUP_MEMORY)))
      a = VYRE_ACCESS_READ_WRITE;
    uint32_t flags = 0, count = 0;
    if (a == VYRE_ACCESS_WORKGROUP) {
      count = 1 + rnd(g, 300);
    } else if (a == VYRE_ACCESS_WRITE_ONLY) {
      count = 1 + rnd(g, 600);
      if (variety && chance(g, 25)) flags = VYRE_BUF_OUTPUT;
    } else if (a == VYRE_ACCESS_READ_WRITE && chance(g, 30)) {
      flags = VYRE_BUF_OUTPUT;
      count = 1 + rnd(g, 600);
    } else if (chance(g, 30)) {
      count = 1 + rnd(g, 600);
    }
    if (ew(g) && a == VYRE_ACCESS_UNIFORM && !count) count = 1 + rnd(g, 4);
    char name[VYRE_MAX_NAME + 1];
    uint32_t pn = rnd(g, N(name_pool));
    if (variety && !used[pn]) {
      used[pn] = 1;
      snprintf(name, sizeof name, "%s", name_pool[pn]);
    } else {
      snprintf(name, sizeof name, "b%u", k);
    }
    if (variety && a != VYRE_ACCESS_WORKGROUP) binding += 1 + (chance(g, 25) ? rnd(g, 5) : 0);
    gbuf *fb = fz_add_buf(g, name, binding, K_ANY, (vyre_access)a, t, count, flags);
    int out = a == VYRE_ACCESS_READ_WRITE || a == VYRE_ACCESS_WRITE_ONLY;
    if (variety && out && chance(g, 33)) {
      uint32_t total = count ? count * vyre_type_size(t) : 4096u;
      uint32_t off = rnd(g, total + 1);
      vyre_b_buffer_range(g->b, fb->index, off, rnd(g, total - off + 1));
    }
    any_out |= out;
  }
  char name[16];
  snprintf(name, sizeof name, "b%u", n);
  if (!any_out)
    fz_add_buf(g, name, UINT32_MAX, K_ANY, VYRE_ACCESS_READ_WRITE,
            chance(g, 50) ? VYRE_T_F32 : VYRE_T_U32, 0, 0);
}

void fz_body_coverage(gen *g) {
  fz_stmts(g, 1 + rnd(g, 10), 0);
  fz_store(g);
}
