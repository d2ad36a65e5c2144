/* indirect.c -- indirect dispatch on the reference: the chained vyre_indirect checked against the resident store, and launches on the grid its counts hold (ref.h). */
#include <stdio.h>
#include <string.h>

#include "abi/format/indirect.h"
#include "ref.h"

vyre_status ref_indirect_bind(ref_backend *b, const vyre_dispatch_options *o, const char *what,
                              const uint8_t **counts, vyre_error *err) {
  *counts = NULL;
  const vyre_indirect *ind;
  vyre_status st = vyre__indirect_read(o, what, &ind, err);
  if (st || !ind) return st;
  uint64_t size = 0;
  const uint8_t *data = ref_resident_data(b, ind->buffer, &size);
  if (!data)
    return vyre_error_set(err, VYRE_INVALID_HANDLE, 0,
                          "%s: vyre_indirect buffer: resident handle 0x%016llx is not a live "
                          "resident buffer of this backend. Fix: pass a handle that "
                          "resident_alloc returned and that was not freed",
                          what, (unsigned long long)ind->buffer);
  if ((st = vyre__indirect_range(ind, size, what, err))) return st;
  *counts = data + ind->offset;
  return VYRE_OK;
}

vyre_status ref_indirect_execute(const vyre_program *p, const vyre_geometry *g,
                                 uint8_t *const *mem, uint32_t iterations, const uint8_t *counts,
                                 int step, uint32_t threads, const ref_limits *lim,
                                 ref_exec_stats *stats, int *over, vyre_error *err) {
  *over = 0;
  if (!counts) return ref_execute(p, g, mem, iterations, threads, lim, stats, err);
  if (stats) memset(stats, 0, sizeof *stats);
  if (!g->grid[0] || !g->grid[1] || !g->grid[2]) return VYRE_OK;
  vyre_geometry run = *g;
  for (uint32_t it = 0; it < iterations; it++) {
    /* Read when the launch starts: an earlier step, or iteration, may
     * have written them. */
    uint32_t c[3];
    memcpy(c, counts, sizeof c);
    for (int k = 0; k < 3; k++) {
      if (c[k] <= g->grid[k]) continue;
      char where[48] = "";
      *over = 1;
      if (step >= 0) snprintf(where, sizeof where, " in sequence step %d", step);
      return vyre_error_set(err, VYRE_LIMIT, (int64_t)c[k],
                            "indirect dispatch%s: workgroup count %u on axis %c exceeds the "
                            "bound %u x %u x %u the dispatch was sized for (the derived grid or "
                            "options.grid); no invocation of this dispatch ran. Fix: keep the "
                            "counts within the bound, or dispatch with a larger grid "
                            "(options.grid)",
                            where, c[k], "xyz"[k], g->grid[0], g->grid[1], g->grid[2]);
    }
    if (!c[0] || !c[1] || !c[2]) continue;
    memcpy(run.grid, c, sizeof c);
    ref_exec_stats one;
    vyre_status st = ref_execute(p, &run, mem, 1, threads, lim, &one, err);
    if (stats) {
      stats->launches += one.launches;
      stats->invocations += one.invocations;
      if (one.threads_used > stats->threads_used) stats->threads_used = one.threads_used;
      stats->budget_exceeded |= one.budget_exceeded;
    }
    if (st) return st;
  }
  return VYRE_OK;
}
