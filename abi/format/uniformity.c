/* uniformity.c -- which values and blocks are the same for every invocation of a workgroup; barriers and subgroup operations need uniform control flow (internal.h). */
#include <stdlib.h>
#include <string.h>

#include "internal.h"

static int value_uniform(const vyre_program *p, const uint8_t *local_uniform, uint32_t i) {
  const vyre_inst *in = &p->insts[i];
  const uint8_t *u = p->uniform;
  switch (in->op) {
  case VYRE_OP_CONST:
  case VYRE_OP_BUF_LEN:
  case VYRE_OP_WORKGROUP_ID:
  case VYRE_OP_SUBGROUP_SIZE: return 1;
  case VYRE_OP_INVOCATION_ID:
  case VYRE_OP_LOCAL_ID:
  case VYRE_OP_SUBGROUP_LANE: return 0;
  case VYRE_OP_LOCAL_GET: return local_uniform[in->a];
  case VYRE_OP_LOAD: {
    uint32_t acc = p->buffers[in->a].decl.access;
    return (acc == VYRE_ACCESS_READ_ONLY || acc == VYRE_ACCESS_UNIFORM) && u[in->b];
  }
  default: break;
  }
  const vyre_op_info *info = vyre_op_lookup(in->op);
  switch ((vyre_op_class)info->op_class) {
  case VYRE_OC_BINARY:
  case VYRE_OC_COMPARE: return u[in->a] && u[in->b];
  case VYRE_OC_UNARY:
  case VYRE_OC_PREDICATE:
  case VYRE_OC_CAST: return u[in->a];
  case VYRE_OC_SELECT:
  case VYRE_OC_FMA: return u[in->a] && u[in->b] && u[in->c];
  default: return 0; /* atomics, subgroup results */
  }
}

/* Scratch of the uniformity analysis. */
typedef struct uniformity {
  uint8_t *local_uniform; /* per slot */
  uint32_t *loop_diverges; /* per LOOP: 1 + the index of a divergent return/trap inside it, else 0 */
  uint8_t *cf;            /* per open block depth: control flow uniform */
  uint32_t *cause;        /* per depth: the instruction that made it divergent, or NONE */
  uint32_t *open_loops;
} uniformity;

/* One pass of the fixpoint: derive p->uniform, locals and loop
 * divergence from the facts so far; 1 when a fact changed. */
static int uniformity_pass(vyre_program *p, uniformity *u) {
  uint32_t n = p->inst_count;
  int changed = 0;
  uint32_t depth = 0, nloops = 0;
  u->cf[0] = 1;
  u->cause[0] = NONE;
  uint32_t diverged_at = NONE; /* a non-uniform return/trap was passed */
  for (uint32_t i = 0; i < n; i++) {
    const vyre_inst *in = &p->insts[i];
    int here = u->cf[depth] && diverged_at == NONE;
    uint32_t why = diverged_at != NONE ? diverged_at : u->cause[depth];
    if (p->value_type[i] != VYRE_T_VOID) p->uniform[i] = (uint8_t)value_uniform(p, u->local_uniform, i);
    else p->uniform[i] = (uint8_t)here;
    switch (in->op) {
    case VYRE_OP_LET:
    case VYRE_OP_ASSIGN:
      if (u->local_uniform[in->a] && !(here && p->uniform[in->b])) {
        u->local_uniform[in->a] = 0;
        changed = 1;
      }
      break;
    case VYRE_OP_IF:
      depth++;
      u->cf[depth] = (uint8_t)(here && p->uniform[in->a]);
      u->cause[depth] = here && !p->uniform[in->a] ? i : why;
      p->uniform[i] = u->cf[depth];
      break;
    case VYRE_OP_ELSE:
      /* Same uniformity as its IF, which is still u->cf[depth]. */
      p->uniform[i] = u->cf[depth];
      break;
    case VYRE_OP_LOOP: {
      int uni = here && p->uniform[in->b] && p->uniform[in->c] && !u->loop_diverges[i];
      if (u->local_uniform[in->a] && !uni) {
        u->local_uniform[in->a] = 0;
        changed = 1;
      }
      depth++;
      u->cf[depth] = (uint8_t)uni;
      u->cause[depth] = uni ? NONE : (here ? i : why);
      p->uniform[i] = (uint8_t)uni;
      u->open_loops[nloops++] = i;
      break;
    }
    case VYRE_OP_BLOCK:
      depth++;
      u->cf[depth] = (uint8_t)here;
      u->cause[depth] = why;
      break;
    case VYRE_OP_END:
      if (p->insts[p->match[i]].op == VYRE_OP_LOOP) nloops--;
      depth--;
      break;
    case VYRE_OP_RETURN:
    case VYRE_OP_TRAP:
      if (!here) {
        if (diverged_at == NONE) diverged_at = i;
        /* Later iterations of every enclosing loop run with fewer
         * invocations, so the whole loop body is divergent. */
        for (uint32_t k = 0; k < nloops; k++) {
          if (!u->loop_diverges[u->open_loops[k]]) {
            u->loop_diverges[u->open_loops[k]] = i + 1u;
            changed = 1;
          }
        }
      }
      break;
    default: break;
    }
  }
  return changed;
}

/* Check the placement rules (barriers and subgroup collectives in uniform
 * control flow) with the final facts. */
static vyre_status check_placement(decoder *d, uniformity *u) {
  vyre_program *p = d->p;
  uint32_t n = p->inst_count;
  vyre_status st = VYRE_OK;
  uint32_t depth = 0;
  u->cf[0] = 1;
  u->cause[0] = NONE;
  uint32_t diverged_at = NONE;
  for (uint32_t i = 0; i < n && !st; i++) {
    const vyre_inst *in = &p->insts[i];
    int here = u->cf[depth] && diverged_at == NONE;
    uint32_t why = diverged_at != NONE ? diverged_at : u->cause[depth];
    const char *what = NULL;
    if (in->op == VYRE_OP_BARRIER) what = in->mod == VYRE_BARRIER_GRID ? "grid barrier" : "barrier";
    else if (vyre_op_lookup(in->op)->flags & VYRE_OPF_MMA)
      what = "MMA operation";
    else if (vyre_op_lookup(in->op)->flags & VYRE_OPF_COLLECTIVE)
      what = "subgroup operation";
    if (what && !here) {
      const vyre_inst *w = why != NONE ? &p->insts[why] : NULL;
      if (w && w->op == VYRE_OP_LOOP && u->loop_diverges[why] && p->uniform[w->b] &&
          p->uniform[w->c]) {
        /* The bounds are uniform: the loop diverges because an early
         * exit inside it drops invocations from later iterations. */
        uint32_t exit = u->loop_diverges[why] - 1u;
        st = fail(d, VYRE_INVALID_PROGRAM,
                  INST_FMT "%s inside the loop at instruction %u, which a %s in divergent "
                           "control flow (instruction %u) leaves early: later iterations run "
                           "without the invocations that left, so not every invocation "
                           "reaches it. Fix: guard the rest of the iteration with if instead "
                           "of the %s, or move the %s out of the loop",
                  i, mnem(in), what, why, mnem(&p->insts[exit]), exit, mnem(&p->insts[exit]),
                  what);
      } else if (w && (w->op == VYRE_OP_RETURN || w->op == VYRE_OP_TRAP))
        st = fail(d, VYRE_INVALID_PROGRAM,
                  INST_FMT "%s after a %s in divergent control flow (instruction %u): not "
                           "every invocation reaches it. Fix: guard the work with if instead "
                           "of returning early",
                  i, mnem(in), what, mnem(&p->insts[why]), why);
      else
        st = fail(d, VYRE_INVALID_PROGRAM,
                  INST_FMT "%s in control flow that differs between invocations (the "
                           "condition or bounds at instruction %u depend on the invocation). "
                           "Fix: move it out of that if/loop, or make the condition uniform "
                           "(constants, buflen, wgid, ro/uniform loads)",
                  i, mnem(in), what, why);
      break;
    }
    switch (in->op) {
    case VYRE_OP_IF:
    case VYRE_OP_LOOP:
      depth++;
      u->cf[depth] = p->uniform[i];
      u->cause[depth] = here && !p->uniform[i] ? i : why;
      break;
    case VYRE_OP_BLOCK:
      depth++;
      u->cf[depth] = (uint8_t)here;
      u->cause[depth] = why;
      break;
    case VYRE_OP_END: depth--; break;
    case VYRE_OP_RETURN:
    case VYRE_OP_TRAP:
      if (!here && diverged_at == NONE) diverged_at = i;
      break;
    default: break;
    }
  }
  return st;
}

/* Contract in internal.h. */
vyre_status vyre__analyse_uniformity(decoder *d) {
  vyre_program *p = d->p;
  uint32_t n = p->inst_count;
  uniformity u;
  u.local_uniform = malloc(p->local_count ? p->local_count : 1);
  u.loop_diverges = calloc(n, sizeof *u.loop_diverges);
  u.cf = malloc(VYRE_MAX_NESTING + 1);
  u.cause = malloc((VYRE_MAX_NESTING + 1) * sizeof *u.cause);
  u.open_loops = malloc((VYRE_MAX_NESTING + 1) * sizeof *u.open_loops);
  vyre_status st = VYRE_OK;
  if (!u.local_uniform || !u.loop_diverges || !u.cf || !u.cause || !u.open_loops) {
    st = fail(d, VYRE_OUT_OF_MEMORY, "decode: out of host memory for the uniformity analysis. Fix: free host memory");
    goto done;
  }
  memset(u.local_uniform, 1, p->local_count ? p->local_count : 1);
  int changed = 1;
  for (uint32_t pass = 0; changed && pass <= p->local_count + n + 1; pass++)
    changed = uniformity_pass(p, &u);
  st = check_placement(d, &u);
done:
  free(u.local_uniform);
  free(u.loop_diverges);
  free(u.cf);
  free(u.cause);
  free(u.open_loops);
  return st;
}
