/* min.c -- the minimizer: delta debugging over statements and blocks of a failing program, keeping it valid and failing. */
#include <stdlib.h>
#include <string.h>

#include "conform.h"

/* Which operand fields of an instruction of class `cls` hold value ids. */
static uint32_t value_fields(uint32_t cls) {
  enum { A = 1, B = 2, C = 4, D = 8 };
  switch (cls) {
  case VYRE_OC_LOAD: return B;
  case VYRE_OC_BINARY:
  case VYRE_OC_COMPARE: return A | B;
  case VYRE_OC_UNARY:
  case VYRE_OC_PREDICATE:
  case VYRE_OC_CAST:
  case VYRE_OC_BALLOT:
  case VYRE_OC_REDUCE:
  case VYRE_OC_IF: return A;
  case VYRE_OC_SELECT:
  case VYRE_OC_FMA: return A | B | C;
  case VYRE_OC_ATOMIC: return B | C;
  case VYRE_OC_ATOMIC_CAS: return B | C | D;
  case VYRE_OC_SHUFFLE: return A | B;
  case VYRE_OC_LET:
  case VYRE_OC_ASSIGN: return B;
  case VYRE_OC_STORE: return B | C;
  case VYRE_OC_LOOP: return B | C;
  case VYRE_OC_MMA_FILL: return B;
  case VYRE_OC_MMA_LOAD: return C | D;
  case VYRE_OC_MMA_STORE: return B | C;
  default: return 0;
  }
}

/* Which operand fields hold local slots (the MMA ops name matrix locals
 * in several). */
static uint32_t slot_fields(uint32_t cls) {
  switch (cls) {
  case VYRE_OC_LOCAL_GET:
  case VYRE_OC_LET:
  case VYRE_OC_ASSIGN:
  case VYRE_OC_LOOP:
  case VYRE_OC_MMA_FILL:
  case VYRE_OC_MMA_LOAD: return 1;
  case VYRE_OC_MMA: return 0xf;
  case VYRE_OC_MMA_STORE: return 8;
  default: return 0;
  }
}

static uint32_t *field(vyre_inst *in, int k) {
  return k == 0 ? &in->a : k == 1 ? &in->b : k == 2 ? &in->c : &in->d;
}

static uint32_t op_class(uint32_t op) {
  const vyre_op_info *info = vyre_op_lookup(op);
  return info ? info->op_class : VYRE_OC_END;
}

static int is_opener(uint32_t cls) {
  return cls == VYRE_OC_IF || cls == VYRE_OC_LOOP || cls == VYRE_OC_BLOCK;
}

static int uses_slot(uint32_t cls) {
  return cls == VYRE_OC_LOCAL_GET || cls == VYRE_OC_LET || cls == VYRE_OC_ASSIGN ||
         cls == VYRE_OC_LOOP;
}

/* The END closing the block opened at i. */
static uint32_t block_end(const vyre_program *p, uint32_t i) {
  uint32_t e = p->match[i];
  if (e < p->inst_count && p->insts[e].op == VYRE_OP_ELSE) e = p->match[e];
  return e < p->inst_count ? e : i;
}

static void remove_range(uint8_t *rm, uint32_t from, uint32_t to) {
  for (uint32_t k = from; k <= to; k++) rm[k] = 1;
}

/*
 * Extend a removal set until the rest is self-consistent: users of removed
 * values go (a block opener that uses one takes its whole block), and so
 * do the gets/assigns of a local whose declaring let or loop went.
 */
static void close_removal(const vyre_program *p, uint8_t *rm, uint8_t *slot_gone) {
  int changed = 1;
  while (changed) {
    changed = 0;
    memset(slot_gone, 0, p->local_count ? p->local_count : 1);
    for (uint32_t i = 0; i < p->inst_count; i++) {
      uint32_t cls = op_class(p->insts[i].op);
      if (rm[i] && (cls == VYRE_OC_LET || cls == VYRE_OC_LOOP) && p->insts[i].a < p->local_count)
        slot_gone[p->insts[i].a] = 1;
    }
    for (uint32_t i = 0; i < p->inst_count; i++) {
      if (rm[i]) continue;
      const vyre_inst *in = &p->insts[i];
      uint32_t cls = op_class(in->op);
      int drop = uses_slot(cls) && in->a < p->local_count && slot_gone[in->a] &&
                 cls != VYRE_OC_LET && cls != VYRE_OC_LOOP;
      uint32_t vf = value_fields(cls);
      vyre_inst copy = *in;
      for (int k = 0; k < 4 && !drop; k++)
        if ((vf >> k) & 1) {
          uint32_t v = *field(&copy, k);
          if (v < p->inst_count && rm[v]) drop = 1;
        }
      if (!drop) continue;
      if (is_opener(cls)) remove_range(rm, i, block_end(p, i));
      else rm[i] = 1;
      changed = 1;
    }
  }
}

/* Follow redirections (uses of a bypassed value go to its operand). */
static uint32_t resolve(const uint32_t *redirect, uint32_t v, uint32_t n) {
  for (uint32_t hops = 0; redirect && v < n && redirect[v] != UINT32_MAX && hops < n; hops++)
    v = redirect[v];
  return v;
}

/* Pure values nobody uses go too (repeated until none is left). */
static void dead_values(const vyre_program *p, uint8_t *rm, uint32_t *uses, const uint32_t *redirect) {
  int changed = 1;
  while (changed) {
    changed = 0;
    memset(uses, 0, p->inst_count * sizeof *uses);
    for (uint32_t i = 0; i < p->inst_count; i++) {
      if (rm[i]) continue;
      vyre_inst copy = p->insts[i];
      uint32_t vf = value_fields(op_class(copy.op));
      for (int k = 0; k < 4; k++)
        if ((vf >> k) & 1) {
          uint32_t v = resolve(redirect, *field(&copy, k), p->inst_count);
          if (v < p->inst_count) uses[v]++;
        }
    }
    for (uint32_t i = 0; i < p->inst_count; i++) {
      if (rm[i] || uses[i] || p->value_type[i] == VYRE_T_VOID) continue;
      uint32_t cls = op_class(p->insts[i].op);
      if (cls == VYRE_OC_ATOMIC || cls == VYRE_OC_ATOMIC_CAS) continue; /* side effects */
      rm[i] = 1;
      changed = 1;
    }
  }
}

typedef struct minimizer {
  cf_case *c;
  cf_still_fails_fn fn;
  void *ctx;
  uint32_t max_tries;
  cf_min_stats *stats;
  uint8_t *rm, *slot_gone;
  uint32_t *uses, *newid, *newslot;
  uint32_t *redirect; /* per instruction: use this value instead, or UINT32_MAX */
  int oom;
} minimizer;

/*
 * Encode the current program without the instructions in rm (constify:
 * instruction index turned into a zero constant, or UINT32_MAX).  0 on
 * success with *bytes and *size; -1 when the result cannot be encoded (a
 * dangling reference or nothing left).
 */
static int encode(minimizer *m, uint32_t constify, void **bytes, size_t *size) {
  const vyre_program *p = m->c->decoded;
  uint32_t kept = 0;
  for (uint32_t i = 0; i < p->inst_count; i++) {
    m->newid[i] = m->rm[i] ? UINT32_MAX : kept;
    if (!m->rm[i]) kept++;
  }
  if (kept == 0) return -1;
  /* Locals still mentioned keep their order, renumbered densely. */
  memset(m->newslot, 0xff, (p->local_count ? p->local_count : 1) * sizeof *m->newslot);
  uint8_t *used = m->slot_gone;
  memset(used, 0, p->local_count ? p->local_count : 1);
  for (uint32_t i = 0; i < p->inst_count; i++) {
    if (m->rm[i] || i == constify) continue;
    vyre_inst in = p->insts[i];
    uint32_t sf = slot_fields(op_class(in.op));
    for (int k = 0; k < 4; k++)
      if (((sf >> k) & 1) && *field(&in, k) < p->local_count) used[*field(&in, k)] = 1;
  }
  vyre_builder *b = vyre_builder_new(p->header.workgroup_size[0], p->header.workgroup_size[1],
                                     p->header.workgroup_size[2]);
  if (!b) {
    m->oom = 1;
    return -1;
  }
  for (uint32_t i = 0; i < p->buffer_count; i++) {
    const vyre_buffer_decl *d = &p->buffers[i].decl;
    uint32_t bi = vyre_b_buffer(b, p->buffers[i].name, d->binding, (vyre_access)d->access,
                                (vyre_type)d->elem_type, d->count, d->flags & VYRE_BUF_OUTPUT);
    if (d->flags & VYRE_BUF_OUT_RANGE)
      vyre_b_buffer_range(b, bi, d->out_range_offset, d->out_range_size);
  }
  for (uint32_t s = 0; s < p->local_count; s++)
    if (used[s]) m->newslot[s] = vyre_b_local(b, (vyre_type)p->local_types[s]);
  int bad = 0;
  for (uint32_t i = 0; i < p->inst_count && !bad; i++) {
    if (m->rm[i]) continue;
    vyre_inst in = p->insts[i];
    if (i == constify) {
      vyre_b_const(b, (vyre_type)p->value_type[i], 0);
      continue;
    }
    uint32_t cls = op_class(in.op);
    uint32_t vf = value_fields(cls);
    for (int k = 0; k < 4; k++) {
      if (!((vf >> k) & 1)) continue;
      uint32_t *f = field(&in, k);
      *f = resolve(m->redirect, *f, p->inst_count);
      if (*f >= p->inst_count || m->newid[*f] == UINT32_MAX) bad = 1;
      else *f = m->newid[*f];
    }
    uint32_t sf = slot_fields(cls);
    for (int k = 0; k < 4; k++) {
      if (!((sf >> k) & 1)) continue;
      uint32_t *f = field(&in, k);
      if (*f >= p->local_count || m->newslot[*f] == UINT32_MAX) bad = 1;
      else *f = m->newslot[*f];
    }
    vyre_b_inst(b, (vyre_op)in.op, in.type, in.mod, in.a, in.b, in.c, in.d);
  }
  if (bad) {
    vyre_builder_free(b);
    return -1;
  }
  vyre_error err = VYRE_ERROR_INIT;
  vyre_status st = vyre_builder_finish(b, bytes, size, &err);
  vyre_builder_free(b);
  if (st == VYRE_OUT_OF_MEMORY) m->oom = 1;
  return st == VYRE_OK ? 0 : -1;
}

/*
 * Try the candidate in m->rm (plus constify): encode, validate, run the
 * predicate.  On success the case holds the new program and 1 is
 * returned; otherwise the case is unchanged and 0 is returned.
 */
static int attempt(minimizer *m, uint32_t constify) {
  if (m->stats->tries >= m->max_tries || m->oom) return 0;
  void *bytes = NULL;
  size_t size = 0;
  if (encode(m, constify, &bytes, &size) != 0) return 0;
  cf_case *c = m->c;
  void *old_bytes = c->program;
  size_t old_size = c->program_size;
  vyre_program *old_p = c->decoded;
  vyre_program *np = NULL;
  vyre_error err = VYRE_ERROR_INIT;
  if (size == old_size && memcmp(bytes, old_bytes, size) == 0) {
    free(bytes);
    return 0; /* no change */
  }
  if (vyre_program_decode(bytes, size, &np, &err) != VYRE_OK) {
    free(bytes);
    return 0;
  }
  c->program = bytes;
  c->program_size = size;
  c->decoded = np;
  m->stats->tries++;
  if (m->fn(m->ctx, c)) {
    m->stats->accepted++;
    free(old_bytes);
    vyre_program_free(old_p);
    return 1;
  }
  c->program = old_bytes;
  c->program_size = old_size;
  c->decoded = old_p;
  free(bytes);
  vyre_program_free(np);
  return 0;
}

static int grow(minimizer *m) {
  const vyre_program *p = m->c->decoded;
  size_t n = p->inst_count + 1, l = p->local_count + 1;
  free(m->rm);
  free(m->slot_gone);
  free(m->uses);
  free(m->newid);
  free(m->newslot);
  free(m->redirect);
  m->redirect = malloc(n * sizeof *m->redirect);
  if (m->redirect) memset(m->redirect, 0xff, n * sizeof *m->redirect);
  m->rm = calloc(n, 1);
  m->slot_gone = calloc(l, 1);
  m->uses = calloc(n, sizeof *m->uses);
  m->newid = calloc(n, sizeof *m->newid);
  m->newslot = calloc(l, sizeof *m->newslot);
  if (!m->rm || !m->slot_gone || !m->uses || !m->newid || !m->newslot || !m->redirect) m->oom = 1;
  return !m->oom;
}

/* Statement units: every instruction that does something by itself
 * (stores, lets, assigns, atomics, barriers, return, trap, the MMA ops) and every
 * block, as [first, last] ranges in program order. */
static uint32_t units(const vyre_program *p, uint32_t (*u)[2]) {
  uint32_t n = 0;
  for (uint32_t i = 0; i < p->inst_count; i++) {
    uint32_t cls = op_class(p->insts[i].op);
    switch (cls) {
    case VYRE_OC_IF:
    case VYRE_OC_LOOP:
    case VYRE_OC_BLOCK:
      u[n][0] = i;
      u[n][1] = block_end(p, i);
      n++;
      break;
    case VYRE_OC_LET: case VYRE_OC_ASSIGN: case VYRE_OC_STORE: case VYRE_OC_ATOMIC:
    case VYRE_OC_ATOMIC_CAS: case VYRE_OC_BARRIER: case VYRE_OC_RETURN: case VYRE_OC_TRAP:
    case VYRE_OC_MMA_FILL: case VYRE_OC_MMA_LOAD: case VYRE_OC_MMA: case VYRE_OC_MMA_STORE:
      u[n][0] = u[n][1] = i;
      n++;
      break;
    default:
      break;
    }
  }
  return n;
}

/* Delta debugging over the statement units: chunks of n/2, n/4, ... 1. */
static int pass_units(minimizer *m) {
  int progress = 0;
  uint32_t (*u)[2] = NULL;
  uint32_t chunk = 0;
  for (;;) {
    const vyre_program *p = m->c->decoded;
    free(u);
    u = malloc((p->inst_count + 1) * sizeof *u);
    if (!u || !grow(m)) {
      m->oom = 1;
      break;
    }
    uint32_t n = units(p, u);
    if (n == 0) break;
    if (chunk == 0 || chunk > n) chunk = (n + 1) / 2;
    int hit = 0;
    for (uint32_t start = 0; start < n && !hit; start += chunk) {
      if (m->stats->tries >= m->max_tries || m->oom) goto out;
      memset(m->rm, 0, p->inst_count);
      for (uint32_t k = start; k < n && k < start + chunk; k++) remove_range(m->rm, u[k][0], u[k][1]);
      close_removal(p, m->rm, m->slot_gone);
      dead_values(p, m->rm, m->uses, NULL);
      if (attempt(m, UINT32_MAX)) hit = progress = 1;
    }
    if (hit) continue; /* same chunk size on the smaller program */
    if (chunk == 1) break;
    chunk = (chunk + 1) / 2;
  }
out:
  free(u);
  return progress;
}

/* Replace `if`/`block` by one of their branches. */
static int pass_unwrap(minimizer *m) {
  int progress = 0;
  for (uint32_t i = 0;; i++) {
    if (!grow(m)) break;
    const vyre_program *p = m->c->decoded;
    if (i >= p->inst_count) break;
    uint32_t cls = op_class(p->insts[i].op);
    if (cls != VYRE_OC_IF && cls != VYRE_OC_BLOCK) continue;
    uint32_t end = block_end(p, i);
    uint32_t els = p->match[i] < p->inst_count && p->insts[p->match[i]].op == VYRE_OP_ELSE
                       ? p->match[i] : UINT32_MAX;
    /* Keep the first branch. */
    memset(m->rm, 0, p->inst_count);
    m->rm[i] = 1;
    if (els != UINT32_MAX) remove_range(m->rm, els, end);
    else m->rm[end] = 1;
    close_removal(p, m->rm, m->slot_gone);
    dead_values(p, m->rm, m->uses, NULL);
    if (attempt(m, UINT32_MAX)) {
      progress = 1;
      i--; /* look at what now sits at i */
      continue;
    }
    if (els == UINT32_MAX) continue;
    if (!grow(m)) break;
    p = m->c->decoded;
    memset(m->rm, 0, p->inst_count);
    remove_range(m->rm, i, els);
    m->rm[end] = 1;
    close_removal(p, m->rm, m->slot_gone);
    dead_values(p, m->rm, m->uses, NULL);
    if (attempt(m, UINT32_MAX)) {
      progress = 1;
      i--;
    }
    if (m->stats->tries >= m->max_tries || m->oom) break;
  }
  return progress;
}

/* Bypass a value: its users take one of its operands of the same type
 * instead (`add %x %y` -> `%x`), shortening expression chains. */
static int pass_bypass(minimizer *m) {
  int progress = 0;
  for (uint32_t i = 0;; i++) {
    if (!grow(m)) break;
    const vyre_program *p = m->c->decoded;
    if (i >= p->inst_count || m->stats->tries >= m->max_tries) break;
    uint32_t cls = op_class(p->insts[i].op);
    if (p->value_type[i] == VYRE_T_VOID || cls == VYRE_OC_ATOMIC || cls == VYRE_OC_ATOMIC_CAS)
      continue;
    uint32_t vf = value_fields(cls);
    vyre_inst copy = p->insts[i];
    for (int k = 0; k < 4; k++) {
      if (!((vf >> k) & 1)) continue;
      uint32_t j = *field(&copy, k);
      if (j >= i || p->value_type[j] != p->value_type[i]) continue;
      memset(m->rm, 0, p->inst_count);
      memset(m->redirect, 0xff, (p->inst_count + 1) * sizeof *m->redirect);
      m->redirect[i] = j;
      m->rm[i] = 1;
      dead_values(p, m->rm, m->uses, m->redirect);
      if (attempt(m, UINT32_MAX)) {
        progress = 1;
        break;
      }
    }
    if (m->oom) break;
  }
  return progress;
}

/* Replace computed values by zero constants, cutting expression trees. */
static int pass_constify(minimizer *m) {
  int progress = 0;
  for (uint32_t i = 0;; i++) {
    if (!grow(m)) break;
    vyre_program *p = m->c->decoded;
    if (i >= p->inst_count || m->stats->tries >= m->max_tries) break;
    uint32_t cls = op_class(p->insts[i].op);
    if (p->value_type[i] == VYRE_T_VOID || cls == VYRE_OC_CONST) continue;
    memset(m->rm, 0, p->inst_count);
    /* The operands of i may now die: mark i as a const for the liveness scan. */
    vyre_inst saved = p->insts[i];
    p->insts[i].op = VYRE_OP_CONST;
    dead_values(p, m->rm, m->uses, NULL);
    p->insts[i] = saved;
    m->rm[i] = 0;
    if (attempt(m, i)) progress = 1;
  }
  return progress;
}

vyre_status cf_minimize(cf_case *c, cf_still_fails_fn still_fails, void *ctx,
                        uint32_t max_tries, cf_min_stats *stats, vyre_error *err) {
  cf_min_stats local = {0};
  if (!stats) stats = &local;
  memset(stats, 0, sizeof *stats);
  stats->insts_before = c->decoded->inst_count;
  minimizer m = {c, still_fails, ctx, max_tries ? max_tries : 2000, stats, NULL, NULL, NULL,
                 NULL, NULL, NULL, 0};
  int progress = 1;
  while (progress && !m.oom && stats->tries < m.max_tries) {
    progress = 0;
    progress |= pass_units(&m);
    progress |= pass_unwrap(&m);
    progress |= pass_bypass(&m);
    progress |= pass_constify(&m);
  }
  free(m.rm);
  free(m.slot_gone);
  free(m.uses);
  free(m.newid);
  free(m.newslot);
  free(m.redirect);
  stats->insts_after = c->decoded->inst_count;
  if (m.oom) return vyre_error_set(err, VYRE_OUT_OF_MEMORY, 0, "minimizing: out of memory");
  return VYRE_OK;
}

vyre_status cf_minimize_to_capsule(cf_case *c, const cf_target *t, const cf_pair *pair,
                                   uint32_t tries, const char *origin, const char *note_tail,
                                   const char *path, cf_min_capsule *out, vyre_error *err) {
  memset(out, 0, sizeof *out);
  cf_pair p = *pair;
  vyre_status st = cf_minimize(c, cf_pair_still_fails, &p, tries ? tries : 1000, &out->stats, err);
  if (st != VYRE_OK || out->stats.accepted == 0) return st;
  cf_result want, got;
  cf_run_reference(pair->reference, c, &want);
  cf_run(pair->backend, c, &got);
  cf_diff d;
  cf_compare(c, &want, &got, &d);
  snprintf(out->note, sizeof out->note, "minimized from %u to %u instructions (%u tries)%s%s",
           out->stats.insts_before, out->stats.insts_after, out->stats.tries,
           note_tail ? "; " : "", note_tail ? note_tail : "");
  cf_capsule_info info = {origin, t->id, t->version, t->has_profile ? t->profile.name : NULL,
                          &got, &want, &d, out->note};
  st = cf_capsule_write(path, c, &info, err);
  out->written = st == VYRE_OK;
  cf_result_free(&want);
  cf_result_free(&got);
  return st;
}
