/* interp.c -- the reference interpreter: every invocation of a launch, workgroup by workgroup, with lockstep phases for barriers and subgroup ops and segments for grid barriers. */
#include <errno.h>
#include <fenv.h>
#include <stdlib.h>
#include <string.h>

#include "ref.h"
#include "abi/support/clock.h"

/* Where an invocation stopped. */
enum { INV_RUN = 0, INV_WAIT, INV_SEGMENT, INV_DONE, INV_TRAP };

/* What stopped a launch first. */
enum { WHY_NONE = 0, WHY_TRAP, WHY_STEPS, WHY_TIME };

/* The class of every op id, plus one (0 = unassigned). */
static const uint8_t op_class[VYRE_OP_ID_LIMIT] = {
#define OP_CLASS_(name, id, text, cls, mask, flags) [id] = (uint8_t)((cls) + 1),
    VYRE_OP_MAP(OP_CLASS_)
#undef OP_CLASS_
};
#define C(name) (VYRE_OC_##name + 1)

/* One invocation's state. */
typedef struct inv {
  uint32_t pc;
  uint8_t state;
  uint32_t linear; /* local linear id */
  uint32_t lid[3];
  uint32_t gid[3];
  uint64_t *vals;   /* one slot per instruction */
  uint64_t *locals; /* one slot per local */
} inv;

/* One launch. */
typedef struct launch {
  const vyre_program *p;
  const vyre_geometry *g;
  uint8_t *const *mem;
  uint32_t wg_inv;
  uint64_t wg_total;
  uint64_t chunk; /* workgroups claimed at a time */
  int lockstep;   /* workgroup barriers or subgroup collectives */
  int grid;       /* grid barriers */
  size_t shared_stride;
  uint32_t segment;
  ref_mma_ctx mma; /* matrix locals: nmat tiles per subgroup; the bound shadow */
  uint32_t nmat, wg_tiles;
  /* Kept across grid barriers (grid programs only), per invocation of
   * the grid and per workgroup. */
  uint64_t *locals_all;
  uint32_t *pc_all;
  uint8_t *state_all;
  uint8_t *shared_all;
  ref_tile *tiles_all;
  atomic_uint_fast64_t next; /* next unclaimed workgroup */
  atomic_int stop;           /* a trap or a limit: everybody stops */
  atomic_int why;            /* WHY_*: the first reason to stop */
  /* Limits (ref_limits): flush_at is REF_BUDGET_QUANTUM when a limit is
   * set, else never, so an unlimited launch only counts in a register. */
  uint64_t flush_at;
  uint64_t max_steps, deadline;
  atomic_uint_fast64_t steps; /* steps flushed by the workers */
  atomic_int more;           /* an invocation stopped at a grid barrier */
  pthread_mutex_t trap_lock;
  int trapped;
  uint32_t trap_code, trap_inst, trap_wg[3], trap_lid[3];
} launch;

/* One thread's scratch. */
typedef struct worker {
  launch *L;
  uint64_t *vals;
  uint64_t *locals;
  uint8_t *shared;
  ref_tile *tiles;
  inv *invs;
  uint64_t steps; /* counted, not yet flushed into L->steps */
  pthread_t thread;
  int started;
} worker;

/* The loop condition: `counter < end`, signed for i32 counters. */
static int loop_less(uint32_t counter_type, uint64_t a, uint64_t b) {
  return ref_compare(VYRE_OP_LT, counter_type, a, b) != 0;
}

/* Stop the launch for `why` unless something stopped it already. */
static void stop_for(launch *L, int why) {
  int none = WHY_NONE;
  atomic_compare_exchange_strong(&L->why, &none, why);
  atomic_store(&L->stop, 1);
}

/* Flush a worker's counted steps into the launch and check the limits:
 * the step budget at every flush, the clock (when `clock` is set: work
 * remains) each time the launch's total crosses a multiple of
 * REF_BUDGET_QUANTUM.  Returns 1 when the launch must stop. */
static int budget_check(launch *L, uint64_t *pending, int clock) {
  uint64_t n = *pending;
  *pending = 0;
  uint64_t before = atomic_fetch_add_explicit(&L->steps, n, memory_order_relaxed);
  uint64_t total = before + n;
  if (L->max_steps && total > L->max_steps) stop_for(L, WHY_STEPS);
  else if (clock && L->deadline && before / REF_BUDGET_QUANTUM != total / REF_BUDGET_QUANTUM &&
           vyre__deadline_passed(L->deadline))
    stop_for(L, WHY_TIME);
  return atomic_load_explicit(&L->stop, memory_order_relaxed);
}

static void record_trap(launch *L, const uint32_t wgid[3], const inv *v, uint32_t code,
                        uint32_t pc) {
  int none = WHY_NONE;
  atomic_compare_exchange_strong(&L->why, &none, WHY_TRAP);
  pthread_mutex_lock(&L->trap_lock);
  if (!L->trapped) {
    L->trapped = 1;
    L->trap_code = code;
    L->trap_inst = pc;
    memcpy(L->trap_wg, wgid, sizeof L->trap_wg);
    memcpy(L->trap_lid, v->lid, sizeof L->trap_lid);
  }
  pthread_mutex_unlock(&L->trap_lock);
  atomic_store(&L->stop, 1);
}

/* Base and element count of buffer b as this workgroup sees it. */
static uint8_t *buffer_at(const launch *L, uint8_t *shared, uint32_t b, uint32_t *count) {
  const vyre_buffer_info *bi = &L->p->buffers[b];
  *count = L->g->buffer_elems[b];
  return bi->role == VYRE_ROLE_SHARED ? shared + bi->shared_offset : L->mem[b];
}

/*
 * Run invocation v from v->pc until it ends (DONE), reaches a workgroup
 * barrier or subgroup op (WAIT, pc at it), passes a grid barrier
 * (SEGMENT, pc after it) or traps (TRAP; also when another invocation's
 * trap stopped the launch).
 */
static int run_inv(launch *L, const uint32_t wgid[3], uint8_t *shared, inv *v,
                   uint64_t *steps) {
#define RET(r)   \
  do {           \
    *steps = s;  \
    return (r);  \
  } while (0)
  const vyre_program *p = L->p;
  const vyre_inst *insts = p->insts;
  const uint32_t *match = p->match;
  const uint8_t *vt = p->value_type;
  uint64_t *val = v->vals, *loc = v->locals;
  uint32_t n = p->inst_count, pc = v->pc, count;
  uint8_t *base;
  uint64_t s = *steps; /* one per instruction reached */
  while (pc < n) {
    const vyre_inst *in = &insts[pc];
    s++;
    switch (op_class[in->op]) {
    case C(CONST): val[pc] = in->a | (uint64_t)in->b << 32; break;
    case C(LOCAL_GET): val[pc] = loc[in->a]; break;
    case C(LOAD): {
      uint32_t idx = (uint32_t)val[in->b];
      base = buffer_at(L, shared, in->a, &count);
      val[pc] = idx < count ? ref_load_elem(base, p->buffers[in->a].decl.elem_type, idx) : 0;
      break;
    }
    case C(BUF_LEN): val[pc] = L->g->buffer_elems[in->a]; break;
    case C(BUILTIN):
      switch (in->op) {
      case VYRE_OP_INVOCATION_ID: val[pc] = v->gid[in->mod]; break;
      case VYRE_OP_WORKGROUP_ID: val[pc] = wgid[in->mod]; break;
      case VYRE_OP_LOCAL_ID: val[pc] = v->lid[in->mod]; break;
      case VYRE_OP_SUBGROUP_LANE: val[pc] = v->linear % REF_SUBGROUP; break;
      default: val[pc] = REF_SUBGROUP; break;
      }
      break;
    case C(BINARY): val[pc] = ref_binary(in->op, in->type, val[in->a], val[in->b]); break;
    case C(COMPARE): val[pc] = ref_compare(in->op, vt[in->a], val[in->a], val[in->b]); break;
    case C(UNARY):
    case C(PREDICATE): val[pc] = ref_unary(in->op, vt[in->a], val[in->a]); break;
    case C(SELECT): val[pc] = val[in->a] ? val[in->b] : val[in->c]; break;
    case C(CAST): val[pc] = ref_cast(vt[in->a], in->type, val[in->a]); break;
    case C(FMA): val[pc] = ref_fma(val[in->a], val[in->b], val[in->c]); break;
    case C(ATOMIC):
    case C(ATOMIC_CAS): {
      uint32_t idx = (uint32_t)val[in->b];
      base = buffer_at(L, shared, in->a, &count);
      val[pc] = idx < count ? ref_atomic_elem(base, in->op, in->type, idx, val[in->c],
                                              in->op == VYRE_OP_ATOMIC_CAS ? val[in->d] : 0)
                            : 0;
      if (L->mma.shadow && L->mma.shadow[in->a] && idx < count)
        ref_mma_shadow_set(L->mma.shadow[in->a], idx, -1.0);
      break;
    }
    case C(BALLOT):
    case C(SHUFFLE):
    case C(REDUCE):
    case C(MMA_FILL): case C(MMA_LOAD): case C(MMA): case C(MMA_STORE):
      v->pc = pc;
      RET(INV_WAIT);
    case C(LET):
    case C(ASSIGN): loc[in->a] = val[in->b]; break;
    case C(STORE): {
      uint32_t idx = (uint32_t)val[in->b];
      base = buffer_at(L, shared, in->a, &count);
      if (idx < count) ref_store_elem(base, p->buffers[in->a].decl.elem_type, idx, val[in->c]);
      if (L->mma.shadow && L->mma.shadow[in->a] && idx < count)
        ref_mma_shadow_set(L->mma.shadow[in->a], idx, -1.0);
      break;
    }
    case C(IF):
      /* False: jump past the matching ELSE (into its body) or END. */
      pc = val[in->a] ? pc + 1 : match[pc] + 1;
      continue;
    case C(ELSE): pc = match[pc] + 1; continue; /* the then-branch ran: skip the else */
    case C(END): {
      const vyre_inst *op = &insts[match[pc]];
      if (op->op == VYRE_OP_LOOP) {
        uint32_t slot = op->a;
        uint64_t next = (loc[slot] + 1u) & 0xffffffffu; /* < end, so no overflow */
        loc[slot] = next;
        if (loop_less(p->local_types[slot], next, val[op->c])) {
          /* A trap or a limit ends a long loop early. */
          if (s >= L->flush_at) {
            *steps = s;
            int stop = budget_check(L, steps, 1);
            s = *steps;
            if (stop) RET(INV_TRAP);
          }
          if (atomic_load_explicit(&L->stop, memory_order_relaxed)) RET(INV_TRAP);
          pc = match[pc] + 1;
          continue;
        }
      }
      break;
    }
    case C(LOOP): {
      loc[in->a] = val[in->b];
      pc = loop_less(p->local_types[in->a], val[in->b], val[in->c]) ? pc + 1 : match[pc] + 1;
      continue;
    }
    case C(BLOCK): break;
    case C(RETURN): v->pc = n; RET(INV_DONE);
    case C(BARRIER):
      if (in->mod == VYRE_BARRIER_GRID) {
        v->pc = pc + 1;
        RET(INV_SEGMENT);
      }
      v->pc = pc;
      RET(INV_WAIT);
    case C(TRAP): record_trap(L, wgid, v, in->a, pc); RET(INV_TRAP);
    default:
      /* The validator admits no other op; stop rather than guess. */
      record_trap(L, wgid, v, UINT32_MAX, pc);
      RET(INV_TRAP);
    }
    pc++;
  }
  v->pc = n;
  RET(INV_DONE);
#undef RET
}

/* Resolve the collective at `pc` for the invocations waiting there; the
 * others count as inactive lanes. */
static void resolve(launch *L, uint8_t *shared, ref_tile *tiles, inv *invs, uint32_t pc) {
  const vyre_program *p = L->p;
  const vyre_inst *in = &p->insts[pc];
  uint32_t n = L->wg_inv;
  if (in->op != VYRE_OP_BARRIER) {
    for (uint32_t base = 0; base < n; base += REF_SUBGROUP) {
      uint32_t lanes = n - base < REF_SUBGROUP ? n - base : REF_SUBGROUP;
      inv *sg = invs + base;
      int active[REF_SUBGROUP];
      for (uint32_t k = 0; k < REF_SUBGROUP; k++)
        active[k] = k < lanes && sg[k].state == INV_WAIT && sg[k].pc == pc;
      if (vyre_op_lookup(in->op)->flags & VYRE_OPF_MMA) {
        /* Once per subgroup, with lane 0's index and stride (uniform
         * control flow keeps it active; else the first active lane's). */
        uint32_t k = 0;
        while (k < lanes && !active[k]) k++;
        if (k < lanes)
          ref_mma_run(&L->mma, shared, tiles + (size_t)(base / REF_SUBGROUP) * L->nmat, in,
                      sg[k].vals);
      } else if (in->op == VYRE_OP_SUBGROUP_BALLOT) {
        uint64_t mask = 0;
        for (uint32_t k = 0; k < lanes; k++)
          if (active[k] && sg[k].vals[in->a]) mask |= 1ull << k;
        for (uint32_t k = 0; k < lanes; k++)
          if (active[k]) sg[k].vals[pc] = mask;
      } else if (in->op == VYRE_OP_SUBGROUP_SHUFFLE) {
        for (uint32_t k = 0; k < lanes; k++) {
          if (!active[k]) continue;
          uint32_t src = (uint32_t)sg[k].vals[in->b] % REF_SUBGROUP;
          sg[k].vals[pc] = active[src] ? sg[src].vals[in->a] : 0; /* typed zero */
        }
      } else {
        /* The fixed tree of docs/semantics.md "Subgroups". */
        uint64_t s[REF_SUBGROUP];
        for (uint32_t k = 0; k < REF_SUBGROUP; k++)
          s[k] = active[k] ? sg[k].vals[in->a] : ref_reduce_identity(in->mod, in->type);
        for (uint32_t off = REF_SUBGROUP / 2; off; off /= 2)
          for (uint32_t k = 0; k < off; k++) s[k] = ref_reduce_step(in->mod, in->type, s[k], s[k + off]);
        for (uint32_t k = 0; k < lanes; k++)
          if (active[k]) sg[k].vals[pc] = s[0];
      }
    }
  }
  for (uint32_t i = 0; i < n; i++) {
    if (invs[i].state == INV_WAIT && invs[i].pc == pc) {
      invs[i].state = INV_RUN;
      invs[i].pc = pc + 1;
    }
  }
}

/* Ids and starting state of local invocation i of workgroup wl. */
static void inv_setup(launch *L, uint64_t wl, const uint32_t wgid[3], uint32_t i, inv *v,
                      uint64_t *vals, uint64_t *locals) {
  const uint32_t *wg = L->g->workgroup;
  v->linear = i;
  v->lid[0] = i % wg[0];
  v->lid[1] = (i / wg[0]) % wg[1];
  v->lid[2] = i / (wg[0] * wg[1]);
  for (int k = 0; k < 3; k++) v->gid[k] = wgid[k] * wg[k] + v->lid[k]; /* u32, wraps */
  v->vals = vals;
  if (L->grid) {
    uint64_t idx = wl * L->wg_inv + i;
    v->pc = L->pc_all[idx];
    v->state = L->state_all[idx];
    v->locals = L->locals_all + idx * L->p->local_count;
  } else {
    v->pc = 0;
    v->state = INV_RUN;
    v->locals = locals;
  }
}

/* Keep where invocation i stopped for the next grid segment. */
static void inv_park(launch *L, uint64_t wl, uint32_t i, const inv *v, int outcome) {
  uint64_t idx = wl * L->wg_inv + i;
  L->pc_all[idx] = v->pc;
  if (outcome == INV_SEGMENT) {
    L->state_all[idx] = INV_RUN;
    atomic_store_explicit(&L->more, 1, memory_order_relaxed);
  } else {
    L->state_all[idx] = INV_DONE;
  }
}

/* Run workgroup wl for the current segment; -1 when the launch stops. */
static int run_workgroup(worker *w, uint64_t wl) {
  launch *L = w->L;
  const vyre_program *p = L->p;
  const vyre_geometry *g = L->g;
  uint32_t wgid[3];
  uint64_t gxy = (uint64_t)g->grid[0] * g->grid[1];
  wgid[0] = (uint32_t)(wl % g->grid[0]);
  wgid[1] = (uint32_t)((wl / g->grid[0]) % g->grid[1]);
  wgid[2] = (uint32_t)(wl / gxy);
  uint8_t *shared = L->grid ? L->shared_all + wl * L->shared_stride : w->shared;
  /* Zero at the start of the workgroup; across grid barriers it lives on. */
  if (p->shared_bytes && L->segment == 0) memset(shared, 0, p->shared_bytes);
  /* (No pointer arithmetic on a NULL tiles_all: a program without matrix
   * locals has none.) */
  ref_tile *tiles = !L->wg_tiles ? NULL : L->grid ? L->tiles_all + wl * L->wg_tiles : w->tiles;
  if (L->wg_tiles && L->segment == 0) memset(tiles, 0, L->wg_tiles * sizeof *tiles);
  uint32_t ninst = p->inst_count, nloc = p->local_count;
  /* Each invocation costs a step when its launch starts it. */
  if (L->segment == 0) w->steps += L->wg_inv;

  if (!L->lockstep) {
    inv *v = &w->invs[0];
    for (uint32_t i = 0; i < L->wg_inv; i++) {
      inv_setup(L, wl, wgid, i, v, w->vals, w->locals);
      if (v->state == INV_DONE) continue;
      int r = run_inv(L, wgid, shared, v, &w->steps);
      if (r == INV_TRAP) return -1;
      if (L->grid) inv_park(L, wl, i, v, r);
      if (w->steps >= L->flush_at && budget_check(L, &w->steps, 1)) return -1;
    }
    return 0;
  }

  inv *invs = w->invs;
  for (uint32_t i = 0; i < L->wg_inv; i++)
    inv_setup(L, wl, wgid, i, &invs[i], w->vals + (size_t)i * ninst,
              w->locals ? w->locals + (size_t)i * nloc : NULL);
  for (;;) {
    for (uint32_t i = 0; i < L->wg_inv; i++) {
      if (invs[i].state != INV_RUN) continue;
      int r = run_inv(L, wgid, shared, &invs[i], &w->steps);
      if (r == INV_TRAP) return -1;
      invs[i].state = (uint8_t)r;
    }
    if (w->steps >= L->flush_at && budget_check(L, &w->steps, 1)) return -1;
    /* The validator puts collectives in uniform control flow, so every
     * live invocation waits at one pc.  Should they differ anyway, the
     * lowest pc goes first and the others count as inactive lanes. */
    uint32_t pc = UINT32_MAX;
    for (uint32_t i = 0; i < L->wg_inv; i++)
      if (invs[i].state == INV_WAIT && invs[i].pc < pc) pc = invs[i].pc;
    if (pc == UINT32_MAX) break;
    resolve(L, shared, tiles, invs, pc);
  }
  if (L->grid)
    for (uint32_t i = 0; i < L->wg_inv; i++) inv_park(L, wl, i, &invs[i], invs[i].state);
  return 0;
}

static void *worker_main(void *arg) {
  worker *w = arg;
  launch *L = w->L;
  /* Default FP environment: round to nearest, no flush-to-zero. */
  fesetenv(FE_DFL_ENV);
  for (;;) {
    if (atomic_load_explicit(&L->stop, memory_order_relaxed)) break;
    uint64_t start = atomic_fetch_add(&L->next, L->chunk);
    if (start >= L->wg_total) break;
    uint64_t end = L->wg_total - start < L->chunk ? L->wg_total : start + L->chunk;
    for (uint64_t wl = start; wl < end; wl++)
      if (run_workgroup(w, wl) < 0) goto out;
  }
out:
  /* The last steps count too: the budget's verdict is exact. */
  if (L->flush_at != UINT64_MAX) budget_check(L, &w->steps, 0);
  return NULL;
}

/* Between two segments or launches of a limited launch: read the clock
 * once the step total has crossed another multiple of
 * REF_BUDGET_QUANTUM since the last look (a fixpoint of small launches
 * flushes only at the workers' ends). */
static void clock_between(launch *L, uint64_t *last_q) {
  if (!L->deadline) return;
  uint64_t q = atomic_load_explicit(&L->steps, memory_order_relaxed) / REF_BUDGET_QUANTUM;
  if (q == *last_q) return;
  *last_q = q;
  if (vyre__deadline_passed(L->deadline)) stop_for(L, WHY_TIME);
}

/* Free one worker's scratch and zero it. */
static void worker_clear(worker *w) {
  free(w->vals);
  free(w->locals);
  free(w->shared);
  free(w->invs);
  free(w->tiles);
  memset(w, 0, sizeof *w);
}

static void workers_free(worker *ws, uint32_t n) {
  for (uint32_t i = 0; ws && i < n; i++) worker_clear(&ws[i]);
  free(ws);
}

/* Run one segment of one launch on up to nthreads threads. */
static void run_segment(launch *L, worker *ws, uint32_t nthreads) {
  atomic_store(&L->next, 0);
  atomic_store(&L->more, 0);
  for (uint32_t i = 1; i < nthreads; i++)
    ws[i].started = pthread_create(&ws[i].thread, NULL, worker_main, &ws[i]) == 0;
  /* The caller is worker 0; threads that failed to start leave their
   * share to the others. */
  worker_main(&ws[0]);
  for (uint32_t i = 1; i < nthreads; i++) {
    if (ws[i].started) pthread_join(ws[i].thread, NULL);
    ws[i].started = 0;
  }
}

/* The launch's fixed facts: geometry, claim size, limits, and whether it
 * needs lockstep phases or grid segments. */
static void launch_init(launch *L, const vyre_program *p, const vyre_geometry *g,
                        uint8_t *const *mem, const ref_limits *lim) {
  memset(L, 0, sizeof *L);
  L->p = p;
  L->g = g;
  L->mem = mem;
  L->wg_inv = g->workgroup[0] * g->workgroup[1] * g->workgroup[2];
  L->wg_total = (uint64_t)g->grid[0] * g->grid[1] * g->grid[2];
  L->chunk = L->wg_inv >= 2048 ? 1 : 2048 / L->wg_inv;
  L->shared_stride = ((size_t)p->shared_bytes + 15u) & ~(size_t)15u;
  L->flush_at = UINT64_MAX;
  if (lim && (lim->max_steps || lim->deadline_ns)) {
    L->flush_at = REF_BUDGET_QUANTUM;
    L->max_steps = lim->max_steps;
    L->deadline = lim->deadline_ns;
  }
  for (uint32_t i = 0; i < p->inst_count; i++) {
    const vyre_inst *in = &p->insts[i];
    if ((vyre_op_lookup(in->op)->flags & VYRE_OPF_COLLECTIVE) ||
        (in->op == VYRE_OP_BARRIER && in->mod == VYRE_BARRIER_WORKGROUP))
      L->lockstep = 1;
    if (in->op == VYRE_OP_BARRIER && in->mod == VYRE_BARRIER_GRID) L->grid = 1;
  }
}

/* Memory the launch needs: per worker (*worker_bytes), and (grid
 * barriers) per invocation of the whole grid (*grid_bytes); VYRE_LIMIT
 * beyond REF_MAX_STATE_BYTES. */
static vyre_status state_bytes(const launch *L, uint64_t per_inv_state, double *worker_bytes,
                               double *grid_bytes, vyre_error *err) {
  const vyre_program *p = L->p;
  const vyre_geometry *g = L->g;
  double tiles = (double)L->wg_tiles * sizeof(ref_tile);
  *worker_bytes = (double)per_inv_state * p->inst_count * 8.0 +
                  (L->grid ? 0.0 : (double)per_inv_state * p->local_count * 8.0) +
                  (L->grid ? 0.0 : (double)L->shared_stride + tiles) +
                  (double)L->wg_inv * sizeof(inv);
  *grid_bytes = L->grid ? (double)g->invocations * (p->local_count * 8.0 + 5.0) +
                              (double)L->wg_total * ((double)L->shared_stride + tiles)
                        : 0.0;
  if (*worker_bytes + *grid_bytes > (double)REF_MAX_STATE_BYTES)
    return vyre_error_set(err, VYRE_LIMIT, 0,
                          "dispatch: the reference interpreter would need %.0f MiB of state "
                          "(%u instructions x %u locals x %llu invocations%s), over its %llu MiB "
                          "limit. Fix: use a smaller grid or workgroup, or fewer locals and "
                          "instructions",
                          (*worker_bytes + *grid_bytes) / 1048576.0, p->inst_count,
                          p->local_count, (unsigned long long)g->invocations,
                          L->grid ? " kept across grid barriers" : "",
                          (unsigned long long)(REF_MAX_STATE_BYTES >> 20));
  return VYRE_OK;
}

/* Threads: only when there is enough work to pay for them, and only as
 * many as the state limit allows. */
static uint32_t thread_count(const launch *L, uint32_t threads, double worker_bytes,
                             double grid_bytes) {
  uint64_t claims = (L->wg_total + L->chunk - 1) / L->chunk;
  uint32_t nthreads = threads ? threads : 1;
  if (claims < nthreads) nthreads = (uint32_t)claims;
  if ((double)L->g->invocations * L->p->inst_count < 65536.0) nthreads = 1;
  double room = ((double)REF_MAX_STATE_BYTES - grid_bytes) / (worker_bytes > 1.0 ? worker_bytes : 1.0);
  if (room < nthreads) nthreads = room >= 1.0 ? (uint32_t)room : 1u;
  return nthreads;
}

/* Scratch for *nthreads workers; fewer when memory runs short (then
 * *nthreads shrinks), NULL when not even one fits. */
static worker *workers_alloc(launch *L, uint64_t per_inv_state, uint32_t *nthreads) {
  const vyre_program *p = L->p;
  worker *ws = calloc(*nthreads, sizeof *ws);
  if (!ws) return NULL;
  size_t nvals = (size_t)per_inv_state * p->inst_count;
  size_t nlocs = L->grid ? 0 : (size_t)per_inv_state * p->local_count;
  uint32_t ok = 0;
  for (uint32_t i = 0; i < *nthreads; i++) {
    ws[i].L = L;
    ws[i].vals = calloc(nvals ? nvals : 1, sizeof *ws[i].vals);
    ws[i].locals = calloc(nlocs ? nlocs : 1, sizeof *ws[i].locals);
    ws[i].shared = L->grid ? NULL : calloc(L->shared_stride ? L->shared_stride : 1, 1);
    ws[i].invs = calloc(L->wg_inv, sizeof *ws[i].invs);
    ws[i].tiles = L->grid || !L->wg_tiles ? NULL : malloc(L->wg_tiles * sizeof *ws[i].tiles);
    if (!ws[i].vals || !ws[i].locals || (!L->grid && !ws[i].shared) || !ws[i].invs ||
        (!L->grid && L->wg_tiles && !ws[i].tiles))
      break;
    ok++;
  }
  if (!ok) {
    workers_free(ws, *nthreads);
    return NULL;
  }
  /* Fewer threads when memory ran short. */
  if (ok < *nthreads) {
    for (uint32_t i = ok; i < *nthreads; i++) worker_clear(&ws[i]);
    *nthreads = ok;
  }
  return ws;
}

static void grid_free(launch *L) {
  free(L->locals_all);
  free(L->pc_all);
  free(L->state_all);
  free(L->shared_all);
  free(L->tiles_all);
}

/* The state kept across grid barriers; -1 when out of memory. */
static int grid_alloc(launch *L) {
  const vyre_geometry *g = L->g;
  L->locals_all = calloc(g->invocations * L->p->local_count + 1, sizeof *L->locals_all);
  L->pc_all = calloc(g->invocations, sizeof *L->pc_all);
  L->state_all = calloc(g->invocations, 1);
  L->shared_all = calloc(L->wg_total * L->shared_stride + 1, 1);
  L->tiles_all = L->wg_tiles ? malloc(L->wg_total * L->wg_tiles * sizeof *L->tiles_all) : NULL;
  return L->locals_all && L->pc_all && L->state_all && L->shared_all &&
                 (L->tiles_all || !L->wg_tiles) ? 0 : -1;
}

/* Run `iterations` launches (each in grid segments) until done or
 * stopped, in the default FP environment; returns the launches begun. */
static uint32_t run_launches(launch *L, worker *ws, uint32_t nthreads, uint32_t iterations) {
  const vyre_geometry *g = L->g;
  fenv_t saved;
  fegetenv(&saved);
  uint32_t it;
  uint64_t last_q = 0;
  for (it = 0; it < iterations && !atomic_load(&L->stop); it++) {
    if (it) clock_between(L, &last_q);
    for (L->segment = 0; !atomic_load(&L->stop); L->segment++) {
      if (L->segment) clock_between(L, &last_q);
      run_segment(L, ws, nthreads);
      if (atomic_load(&L->stop) || !L->grid || !atomic_load(&L->more)) break;
    }
    if (L->grid) {
      /* The next launch starts every invocation afresh. */
      memset(L->pc_all, 0, g->invocations * sizeof *L->pc_all);
      memset(L->state_all, 0, g->invocations);
    }
  }
  fesetenv(&saved);
  return it;
}

/* What stopped the launch, as the dispatch's error (VYRE_OK: nothing). */
static vyre_status launch_status(const launch *L, const ref_limits *lim, vyre_error *err) {
  int ns = lim && lim->timeout_ns < 1000000u; /* below 1 ms "%.3f s" would say 0.000 s */
  if (L->why == WHY_STEPS)
    return vyre_error_set(err, VYRE_LIMIT, 0,
                          "dispatch: budget exceeded: the program ran more than its %llu steps "
                          "(vyre_limits.max_steps: a step is an invocation started or an "
                          "instruction executed) and was stopped; host outputs are discarded, "
                          "resident buffers keep what it wrote. Fix: raise max_steps (vyre "
                          "--max-steps) if the program needs more, or make its loops end",
                          (unsigned long long)L->max_steps);
  if (L->why == WHY_TIME)
    return vyre_error_set(err, VYRE_LIMIT, 0,
                          "dispatch: budget exceeded: the program was still running %.*f %s "
                          "after the call began (vyre_limits.timeout_ns) and was stopped; host "
                          "outputs are discarded, resident buffers keep what it wrote. Fix: "
                          "raise the timeout (vyre --timeout) if the program needs longer, or "
                          "make its loops end",
                          ns ? 0 : 3, (double)lim->timeout_ns / (ns ? 1 : 1e9), ns ? "ns" : "s");
  if (L->trapped)
    return vyre_error_set(err, VYRE_TRAP, (int64_t)L->trap_code,
                          "dispatch: the program trapped with code %u at instruction %u in "
                          "workgroup (%u, %u, %u), local id (%u, %u, %u); its outputs are "
                          "discarded. Fix: the trap is the program reporting a failed check; "
                          "look up what code %u means for this program",
                          L->trap_code, L->trap_inst, L->trap_wg[0], L->trap_wg[1],
                          L->trap_wg[2], L->trap_lid[0], L->trap_lid[1], L->trap_lid[2],
                          L->trap_code);
  return VYRE_OK;
}

vyre_status ref_execute(const vyre_program *p, const vyre_geometry *g, uint8_t *const *mem,
                        uint32_t iterations, uint32_t threads, const ref_limits *lim,
                        ref_exec_stats *stats, vyre_error *err) {
  return ref_execute_bounds(p, g, mem, iterations, threads, lim, stats, NULL, err);
}

vyre_status ref_execute_bounds(const vyre_program *p, const vyre_geometry *g,
                               uint8_t *const *mem, uint32_t iterations, uint32_t threads,
                               const ref_limits *lim, ref_exec_stats *stats,
                               double *const *shadow, vyre_error *err) {
  if (stats) memset(stats, 0, sizeof *stats);
  if (g->invocations == 0 || iterations == 0) return VYRE_OK; /* nothing to launch */
  launch L;
  launch_init(&L, p, g, mem, lim);
  L.mma = (ref_mma_ctx){p, g, mem, shadow, NULL};
  if (ref_mma_tile_slots(p, &L.mma.tile_of, &L.nmat) != 0) goto fail_workers;
  L.wg_tiles = (L.wg_inv + REF_SUBGROUP - 1) / REF_SUBGROUP * L.nmat;
  uint64_t per_inv_state = L.lockstep ? L.wg_inv : 1;
  double worker_bytes, grid_bytes;
  vyre_status st = state_bytes(&L, per_inv_state, &worker_bytes, &grid_bytes, err);
  if (st != VYRE_OK) goto fail_state;
  uint32_t nthreads = thread_count(&L, threads, worker_bytes, grid_bytes);
  worker *ws = workers_alloc(&L, per_inv_state, &nthreads);
  if (!ws) goto fail_workers;
  if (L.grid && grid_alloc(&L) != 0) goto fail_grid;
  pthread_mutex_init(&L.trap_lock, NULL);

  uint32_t it = run_launches(&L, ws, nthreads, iterations);
  if (stats) {
    stats->launches = it;
    stats->invocations = g->invocations * it;
    stats->threads_used = nthreads;
    stats->budget_exceeded = L.why == WHY_STEPS || L.why == WHY_TIME;
  }
  st = launch_status(&L, lim, err);
  pthread_mutex_destroy(&L.trap_lock);
  grid_free(&L);
  workers_free(ws, nthreads);
fail_state:
  free(L.mma.tile_of);
  return st;

fail_grid:
  grid_free(&L);
  workers_free(ws, nthreads);
fail_workers:
  free(L.mma.tile_of);
  return vyre_error_set(err, VYRE_OUT_OF_MEMORY, ENOMEM,
                        "dispatch: out of host memory for the interpreter state of %llu "
                        "invocations. Fix: use a smaller grid, or free memory",
                        (unsigned long long)g->invocations);
}
