/* elementwise.c -- progen's elementwise shape (PROGEN_ELEMENTWISE): 1-D, every access at gid.x or a constant, guarded by gid < buflen, by an early exit, or not at all. */
#include "internal.h"

void fz_body_elementwise(gen *g) {
  g->lin = fz_val(g, vyre_b_gid(g->b, 0), VYRE_T_U32, 0);
  g->cf_uniform = 0;
  if (!has(g, PROGEN_NO_RETURN) && chance(g, 25)) {
    /* The early exit: if (gid >= buflen(b)) return; ... */
    uint32_t len = fz_val(g, vyre_b_buflen(g->b, g->buf[rnd(g, g->nb)].index), VYRE_T_U32, 1);
    uint32_t c = chance(g, 50) ? vyre_b_bin(g->b, VYRE_OP_GE, g->lin, len)
                               : vyre_b_bin(g->b, VYRE_OP_LE, len, g->lin);
    vyre_b_if(g->b, c);
    vyre_b_return(g->b);
    vyre_b_end(g->b);
    fz_stmts(g, 1 + rnd(g, 10), 0);
  } else if (chance(g, 60)) {
    /* The usual guard: gid < buflen(some output). */
    uint32_t outs[MAX_BUFS], n = 0;
    for (uint32_t k = 0; k < g->nb; k++)
      if (fz_storable(g, &g->buf[k])) outs[n++] = k;
    uint32_t len = fz_val(g, vyre_b_buflen(g->b, g->buf[outs[rnd(g, n)]].index), VYRE_T_U32, 1);
    uint32_t c = fz_val(g, vyre_b_bin(g->b, VYRE_OP_LT, g->lin, len), VYRE_T_BOOL, 0);
    vyre_b_if(g->b, c);
    g->depth++;
    fz_stmts(g, 1 + rnd(g, 4), 1);
    fz_store(g);
    g->depth--;
    fz_leave_scope(g);
    vyre_b_end(g->b);
    return;
  } else {
    fz_stmts(g, 1 + rnd(g, 10), 0);
  }
  fz_store(g);
}
