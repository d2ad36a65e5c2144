/* lower.c -- the body walker: statements and control flow (if/else, loops and their unrolling, return, barriers) over the expression and memory lowering. */
#include "internal.h"


/* `if (cond) { return | trap } end`: the code after it runs where cond is false. */
static int is_early_exit(const vyre_program *p, uint32_t opener, uint32_t end) {
  if (p->insts[opener].op != VYRE_OP_IF || end != opener + 2) return 0;
  uint16_t op = p->insts[opener + 1].op;
  return op == VYRE_OP_RETURN || op == VYRE_OP_TRAP;
}

static void vec_push_pred(cg_ctx *c, uint32_t pred) {
  c->pred_stack[c->pred_depth++] = c->vpred;
  c->vpred = pred;
}

static void lower_if_vec(cg_ctx *c, uint32_t i) {
  const vyre_inst *in = &c->p->insts[i];
  if (c->vec_static && c->vec_static[i] == 1) {
    vec_push_pred(c, c->vpred);
    return;
  }
  if (c->vec_static && c->vec_static[i] == 2) {
    /* Statically false on the vector path (an early-exit guard). */
    uint32_t k = c->ntp++;
    cg_emit(c, "mov.pred %s, 0;", cg_name(c, "%q", k));
    vec_push_pred(c, k);
    return;
  }
  uint32_t k = c->ntp++;
  const char *q = cg_name(c, "%q", k);
  if (c->vpred != CG_NONE) cg_emit(c, "and.pred %s, %s, %s;", q, cg_vpred(c), cg_val(c, in->a));
  else cg_emit(c, "mov.pred %s, %s;", q, cg_val(c, in->a));
  vec_push_pred(c, k);
}

/* Inside a loop's body every read of its u32 counter `slot` is below `end`. */
static void push_counter_fact(cg_ctx *c, uint32_t slot, uint32_t end) {
  if (c->nfacts >= CG_MAX_FACTS) return; /* facts only remove checks: dropping one is safe */
  c->facts[c->nfacts].key = 0x85000000u | slot;
  c->facts[c->nfacts].bound = end;
  c->nfacts++;
}

/* Labels are per register copy, and per iteration of an unrolled loop. */
static uint32_t label_copy(const cg_ctx *c) { return c->utag ? c->utag : c->copy; }

static void lower_assign(cg_ctx *c, const vyre_inst *in) {
  uint32_t t = c->p->local_types[in->a];
  const char *dst = cg_local(c, in->a), *src = cg_val(c, in->b);
  if (c->mode == CG_MODE_VEC && c->vpred != CG_NONE && in->op == VYRE_OP_ASSIGN)
    cg_emit(c, "@%s mov.%s %s, %s;", cg_vpred(c), cg_bty(t), dst, src);
  else
    cg_mov(c, t, dst, src);
}

static void lower_if(cg_ctx *c, uint32_t i) {
  const vyre_program *p = c->p;
  if (c->mode == CG_MODE_VEC) {
    lower_if_vec(c, i);
    return;
  }
  if (c->fact_mark) c->fact_mark[i] = c->nfacts;
  cg_facts_from(c, p->insts[i].a, 0);
  cg_emit(c, "@!%s bra%s $L%u_%u;", cg_val(c, p->insts[i].a), p->uniform[i] ? ".uni" : "",
          label_copy(c), p->match[i]);
}

static void lower_else(cg_ctx *c, uint32_t i) {
  const vyre_program *p = c->p;
  uint32_t ifi = c->if_of[i];
  if (c->mode != CG_MODE_VEC) {
    if (c->fact_mark && ifi != CG_NONE) c->nfacts = c->fact_mark[ifi];
    cg_emit(c, "bra%s $L%u_%u;", p->uniform[i] ? ".uni" : "", label_copy(c), p->match[i]);
    cg_line(c, "$L%u_%u:", label_copy(c), i);
    return;
  }
  /* The else region runs where the enclosing predicate holds and the
   * condition does not. */
  uint32_t outer = c->pred_stack[--c->pred_depth];
  c->vpred = outer;
  uint32_t k = c->ntp++;
  const char *q = cg_name(c, "%q", k);
  if (c->vec_static && c->vec_static[ifi] == 1) {
    cg_emit(c, "mov.pred %s, 0;", q); /* statically false on the vector path */
  } else if (outer != CG_NONE) {
    const char *nq = cg_tp(c);
    cg_emit(c, "not.pred %s, %s;", nq, cg_val(c, p->insts[ifi].a));
    cg_emit(c, "and.pred %s, %s, %s;", q, cg_vpred(c), nq);
  } else {
    cg_emit(c, "not.pred %s, %s;", q, cg_val(c, p->insts[ifi].a));
  }
  vec_push_pred(c, k);
}

static void lower_end(cg_ctx *c, uint32_t i) {
  const vyre_program *p = c->p;
  uint32_t opener = p->match[i], copy = label_copy(c);
  const vyre_inst *op = &p->insts[opener];
  if (c->mode == CG_MODE_VEC) {
    if (op->op == VYRE_OP_IF || op->op == VYRE_OP_ELSE || op->op == VYRE_OP_BLOCK) {
      c->vpred = c->pred_stack[--c->pred_depth];
    }
    return;
  }
  if (op->op == VYRE_OP_LOOP) {
    const char *ctr = cg_local(c, op->a);
    cg_emit(c, "add.%s %s, %s, 1;", cg_ity(p->local_types[op->a]), ctr, ctr);
    cg_emit(c, "bra%s $T%u_%u;", p->uniform[opener] ? ".uni" : "", copy, opener);
  }
  if (c->fact_mark) {
    uint32_t root = op->op == VYRE_OP_ELSE ? c->if_of[opener] : opener;
    c->nfacts = c->fact_mark[root];
    /* Past `if (i >= n) return;` every invocation still here has i < n;
     * the fact lasts until the enclosing block ends. */
    if (is_early_exit(p, opener, i)) cg_facts_from(c, op->a, 1);
  }
  cg_line(c, "$L%u_%u:", copy, i);
}

static void lower_loop(cg_ctx *c, uint32_t i) {
  const vyre_program *p = c->p;
  const vyre_inst *in = &p->insts[i];
  uint32_t t = p->local_types[in->a], copy = label_copy(c);
  const char *ctr = cg_local(c, in->a);
  cg_mov(c, t, ctr, cg_val(c, in->b));
  if (c->fact_mark) c->fact_mark[i] = c->nfacts;
  cg_line(c, "$T%u_%u:", copy, i);
  const char *q = cg_tp(c);
  cg_emit(c, "setp.ge.%s %s, %s, %s;", cg_ity(t), q, cg_local(c, in->a), cg_val(c, in->c));
  cg_emit(c, "@%s bra%s $L%u_%u;", q, p->uniform[i] ? ".uni" : "", copy, p->match[i]);
  if (t == VYRE_T_U32 && c->fact_mark) push_counter_fact(c, in->a, in->c);
}

static void lower_return(cg_ctx *c) {
  if (c->mode == CG_MODE_VEC) return; /* only `if (gid >= len) return`: never on the vector path */
  if (c->tail_continue) {
    cg_emit(c, "bra $EWCONT;"); /* the tail's next element */
    return;
  }
  if (c->need_done && c->grid_seen < c->ngrid) {
    cg_emit(c, "mov.pred %%done, 1;");
    cg_emit(c, "bra $GB%u;", c->grid_seen);
  } else {
    cg_emit(c, "exit;");
  }
}

static void lower_statement(cg_ctx *c, uint32_t i) {
  const vyre_inst *in = &c->p->insts[i];
  /* Copies in flight never cross a block boundary or a barrier (async.c). */
  switch (in->op) {
  case VYRE_OP_IF: case VYRE_OP_ELSE: case VYRE_OP_END: case VYRE_OP_LOOP: case VYRE_OP_BLOCK:
  case VYRE_OP_RETURN: case VYRE_OP_BARRIER: case VYRE_OP_TRAP: cg_async_wait(c); break;
  default: break;
  }
  switch (in->op) {
  case VYRE_OP_LET:
  case VYRE_OP_ASSIGN: lower_assign(c, in); break;
  case VYRE_OP_STORE:
    if (!cg_async_store(c, i)) cg_store(c, i);
    break;
  case VYRE_OP_IF: lower_if(c, i); break;
  case VYRE_OP_ELSE: lower_else(c, i); break;
  case VYRE_OP_END: lower_end(c, i); break;
  case VYRE_OP_LOOP: lower_loop(c, i); break;
  case VYRE_OP_BLOCK:
    if (c->mode == CG_MODE_VEC) vec_push_pred(c, c->vpred);
    else if (c->fact_mark) c->fact_mark[i] = c->nfacts;
    break;
  case VYRE_OP_RETURN: lower_return(c); break;
  case VYRE_OP_BARRIER:
    if (in->mod == VYRE_BARRIER_GRID) cg_grid_barrier(c, i);
    else cg_emit(c, "bar.sync 0;");
    break;
  case VYRE_OP_TRAP: cg_trap(c, i); break;
  case VYRE_OP_MMA_FILL:
  case VYRE_OP_MMA_LOAD:
  case VYRE_OP_MMA:
  case VYRE_OP_MMA_STORE: cg_mma(c, i); break;
  default:
    cg_fail(c, VYRE_INTERNAL, "codegen: instruction %u: op %u has no lowering. Fix: report this "
            "as a bug", i, in->op);
    break;
  }
}

/* Constant-trip loops are unrolled fully when the trip count is at most
 * CG_UNROLL_TRIPS and trips x body at most CG_UNROLL_INSTS instructions
 * (counting nested unrolled loops): the counter becomes a constant per
 * copy, which ptxas folds into the addresses. */
#define CG_UNROLL_TRIPS 64u
#define CG_UNROLL_INSTS 8192u

/* Instructions the body of loop i emits once unrolled, or UINT32_MAX when
 * it is over the limit. */
static uint32_t unrolled_size(cg_ctx *c, uint32_t i, int depth);

/* Trip count of loop i when both bounds are constants, else UINT32_MAX. */
static uint32_t const_trips(cg_ctx *c, uint32_t i) {
  const vyre_program *p = c->p;
  const vyre_inst *in = &p->insts[i], *s = &p->insts[in->b], *e = &p->insts[in->c];
  if (s->op != VYRE_OP_CONST || e->op != VYRE_OP_CONST) return UINT32_MAX;
  if (p->local_types[in->a] == VYRE_T_U32) return e->a > s->a ? e->a - s->a : 0u;
  int32_t a = (int32_t)s->a, b = (int32_t)e->a;
  return b > a ? (uint32_t)((int64_t)b - a) : 0u;
}

static uint32_t unrolled_size(cg_ctx *c, uint32_t i, int depth) {
  const vyre_program *p = c->p;
  uint32_t trips = const_trips(c, i), end = p->match[i];
  if (trips > CG_UNROLL_TRIPS || depth > 8) return UINT32_MAX;
  uint64_t body = 0;
  for (uint32_t j = i + 1; j < end; j++) {
    if (p->insts[j].op == VYRE_OP_LOOP) {
      uint32_t inner = unrolled_size(c, j, depth + 1);
      body += inner == UINT32_MAX ? p->match[j] - j : inner;
      j = p->match[j];
    } else {
      body++;
    }
  }
  uint64_t total = body * trips;
  return total > CG_UNROLL_INSTS ? UINT32_MAX : (uint32_t)total;
}

static void lower_unrolled(cg_ctx *c, uint32_t i) {
  const vyre_program *p = c->p;
  const vyre_inst *in = &p->insts[i];
  uint32_t trips = const_trips(c, i), start = p->insts[in->b].a, saved = c->utag;
  uint32_t t = p->local_types[in->a];
  const char *name = NULL;
  for (uint32_t k = 0; k < trips && !c->st; k++) {
    uint32_t mark = c->nfacts;
    cg_async_wait(c);
    c->utag = ++c->utag_next;
    name = cg_local(c, in->a);
    if (t == VYRE_T_U32) cg_emit(c, "mov.b32 %s, %u;", name, start + k);
    else cg_emit(c, "mov.b32 %s, %d;", name, (int)(start + k));
    if (t == VYRE_T_U32) push_counter_fact(c, in->a, in->c);
    cg_lower_range(c, i + 1, p->match[i]);
    c->nfacts = mark;
  }
  c->utag = saved;
}

void cg_lower_range(cg_ctx *c, uint32_t from, uint32_t to) {
  const vyre_program *p = c->p;
  for (uint32_t i = from; i < to && !c->st; i++) {
    if (cg_async_skip(c, i)) continue;
    if (p->insts[i].op == VYRE_OP_LOOP && c->mode == CG_MODE_GENERAL &&
        unrolled_size(c, i, 0) != UINT32_MAX) {
      lower_unrolled(c, i);
      i = p->match[i];
      continue;
    }
    if (p->value_type[i] != VYRE_T_VOID) {
      /* Gid-invariant values of the vector path are computed once, in copy 0. */
      if (c->mode == CG_MODE_VEC && c->copy > 0 && c->dep && !c->dep[i]) continue;
      cg_expr(c, i);
    } else {
      lower_statement(c, i);
    }
  }
}
