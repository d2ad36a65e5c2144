/* fuser.c -- which consecutive steps of a sequence share one kernel, their fused plans (built once, cached) and the launch list that replaces them (fuser.h). */
#include "fuser.h"

#include <stdlib.h>
#include <string.h>

#include "abi/support/config.h"
#include "fuse.h"
#include "util.h"
#include "vyre/vyre_support.h"

#define FUSE_CACHE_CAPACITY 64u
/* A fused body beyond the elementwise path's instruction limit would take
 * the general path (docs/codegen.md "Elementwise path"): a run of steps
 * is cut before it grows past it. */
#define FUSE_MAX_INSTS 4096u

/* One fused step list seen before: its plan, or NULL when it was refused. */
struct vc_fuse_entry {
  uint8_t key[32];
  vc_plan *plan;
  vc_fuse_entry *next;
};

vyre_status vc_fuser_init(vc_fuser *f, vc_context *cx, vc_modcache *plans, vc_launcher *lx,
                          vyre_error *err) {
  memset(f, 0, sizeof *f);
  vyre_status st = vc_mutex_init(&f->lock, "cuda create", "fuser", err);
  if (st != VYRE_OK) return st;
  f->capacity = FUSE_CACHE_CAPACITY;
  f->enabled = vyre__env_uint(VYRE__ENV_CUDA_FUSE, 1, 0, 1) != 0;
  f->cx = cx;
  f->plans = plans;
  f->lx = lx;
  return VYRE_OK;
}

void vc_fuser_clear(vc_fuser *f) {
  if (!f->cx) return;
  pthread_mutex_lock(&f->lock);
  vc_fuse_entry *e = f->head;
  f->head = NULL;
  f->count = 0;
  pthread_mutex_unlock(&f->lock);
  while (e) {
    vc_fuse_entry *next = e->next;
    vc_plan_unref(f->plans, e->plan);
    free(e);
    e = next;
  }
}

void vc_fuser_destroy(vc_fuser *f) {
  if (!f->cx) return;
  vc_fuser_clear(f);
  pthread_mutex_destroy(&f->lock);
  f->cx = NULL;
}

/* A step that may join a fused launch: elementwise (codegen said so when
 * it compiled the step), one launch, no trap or grid words, elements to
 * run, and no resident handle bound twice. */
static int candidate(const vc_launch *L, const vyre_sequence_step *sp) {
  const cg_kernel_info *ki = &L->k->info;
  if (ki->grid_mode != CG_GRID_ELEMENTWISE || L->iterations != 1 || ki->uses_trap ||
      L->indirect || ki->uses_grid_barrier || !L->grid[0] ||
      sp->buffer_count != ki->kernel_buffers)
    return 0;
  for (uint32_t a = 0; a < sp->buffer_count; a++)
    for (uint32_t b = a + 1; b < sp->buffer_count; b++)
      if (sp->buffers[a] == sp->buffers[b]) return 0;
  return 1;
}

/* Same index space: element count, grid, block, and the same codegen
 * options (workgroup, ulp budget, target). */
static int compatible(const vc_launch *a, const vc_launch *b) {
  return a->geo.element_count == b->geo.element_count &&
         memcmp(a->grid, b->grid, sizeof a->grid) == 0 &&
         memcmp(a->block, b->block, sizeof a->block) == 0 &&
         memcmp(&a->k->cg, &b->k->cg, sizeof a->k->cg) == 0;
}

/* Slots of steps [a, b): each resident handle its own, by first use.
 * slot[] holds one word per buffer of each step, in order. */
static uint32_t assign_slots(const vyre_sequence_step *steps, uint32_t a, uint32_t b,
                             uint32_t *slot, vyre_resident *handle) {
  uint32_t slots = 0, at = 0;
  for (uint32_t i = a; i < b; i++)
    for (uint32_t k = 0; k < steps[i].buffer_count; k++) {
      vyre_resident h = steps[i].buffers[k];
      uint32_t s = 0;
      while (s < slots && handle[s] != h) s++;
      if (s == slots && slots < VYRE_MAX_BUFFERS) handle[slots++] = h;
      slot[at++] = s < VYRE_MAX_BUFFERS ? s : VYRE_MAX_BUFFERS;
    }
  return slots;
}

static void group_key(const vc_launch *Ls, const vyre_sequence_step *steps, uint32_t a,
                      uint32_t b, const uint32_t *slot, uint8_t out[32]) {
  vyre_sha256_ctx ctx;
  vyre_sha256_init(&ctx);
  uint32_t at = 0;
  for (uint32_t i = a; i < b; i++) {
    vyre_sha256_update(&ctx, Ls[i].k->key, 32);
    vyre_sha256_update(&ctx, &steps[i].buffer_count, sizeof steps[i].buffer_count);
    vyre_sha256_update(&ctx, slot + at, steps[i].buffer_count * sizeof *slot);
    at += steps[i].buffer_count;
  }
  vyre_sha256_final(&ctx, out);
}

/* The cached entry for key (1: *plan referenced, or NULL when refused). */
static int cache_find(vc_fuser *f, const uint8_t key[32], vc_plan **plan) {
  pthread_mutex_lock(&f->lock);
  vc_fuse_entry **pp = &f->head;
  for (; *pp; pp = &(*pp)->next)
    if (memcmp((*pp)->key, key, 32) == 0) break;
  vc_fuse_entry *e = *pp;
  if (e) {
    *pp = e->next; /* to the front */
    e->next = f->head;
    f->head = e;
    f->hits++;
    *plan = e->plan;
    if (e->plan) vc_plan_ref(e->plan);
  }
  pthread_mutex_unlock(&f->lock);
  return e != NULL;
}

/* Remember key's outcome (plan may be NULL: refused); the cache takes a
 * reference.  Without memory nothing is remembered, which costs a rebuild. */
static void cache_insert(vc_fuser *f, const uint8_t key[32], vc_plan *plan) {
  vc_fuse_entry *e = calloc(1, sizeof *e), *evict = NULL;
  if (!e) return;
  memcpy(e->key, key, 32);
  e->plan = plan;
  if (plan) vc_plan_ref(plan);
  pthread_mutex_lock(&f->lock);
  for (vc_fuse_entry *o = f->head; o; o = o->next)
    if (memcmp(o->key, key, 32) == 0) { /* another thread built it meanwhile */
      pthread_mutex_unlock(&f->lock);
      vc_plan_unref(f->plans, e->plan);
      free(e);
      return;
    }
  e->next = f->head;
  f->head = e;
  if (++f->count > f->capacity) {
    vc_fuse_entry **pp = &f->head;
    while ((*pp)->next) pp = &(*pp)->next;
    evict = *pp;
    *pp = NULL;
    f->count--;
  }
  if (plan) f->compiles++;
  else f->refused++;
  pthread_mutex_unlock(&f->lock);
  if (evict) {
    vc_plan_unref(f->plans, evict->plan);
    free(evict);
  }
}

/* Build the fused program of steps [a, b) and its plan; NULL when it
 * cannot be built, does not take the elementwise path, or does not
 * compile (the steps then run as they are, each compiled already). */
static vc_plan *build_plan(vc_fuser *f, const vc_launch *Ls, uint32_t a, uint32_t b,
                           const uint32_t *slot, uint32_t slots) {
  vc_fuse_step *fs = calloc(b - a, sizeof *fs);
  if (!fs) return NULL;
  uint32_t at = 0;
  for (uint32_t i = a; i < b; i++) {
    const vyre_program *p = Ls[i].k->program;
    fs[i - a].program = p;
    fs[i - a].slot = slot + at;
    at += p->kernel_buffer_count;
  }
  const cg_options *cg = &Ls[a].k->cg;
  void *bytes = NULL;
  size_t size = 0;
  vyre_program *prog = NULL;
  vc_plan *plan = NULL;
  vyre_status st = vc_fuse_build(fs, b - a, slots, cg->workgroup, &bytes, &size, NULL);
  free(fs);
  if (st == VYRE_OK) st = vyre_program_decode(bytes, size, &prog, NULL);
  free(bytes);
  if (st != VYRE_OK) return NULL;
  if (!cg_elementwise_query(prog, cg)) {
    vyre_program_free(prog);
    return NULL;
  }
  vyre_error e = VYRE_ERROR_INIT;
  if (vc_plan_get(f->plans, prog, cg, &plan, &e) != VYRE_OK) {
    vc_log("fused kernel not compiled, the steps run one by one: %s", e.message);
    return NULL;
  }
  if (vc_plan_kernel(plan)->info.grid_mode != CG_GRID_ELEMENTWISE) {
    vc_plan_unref(f->plans, plan);
    return NULL;
  }
  return plan;
}

/* The fused plan of steps [a, b): cached, or built and cached; NULL when
 * they do not fuse. */
static vc_plan *group_plan(vc_fuser *f, const vc_launch *Ls, const vyre_sequence_step *steps,
                           uint32_t a, uint32_t b) {
  uint32_t slot[FUSE_MAX_INSTS], words = 0;
  vyre_resident handle[VYRE_MAX_BUFFERS];
  for (uint32_t i = a; i < b; i++) words += steps[i].buffer_count;
  if (words > FUSE_MAX_INSTS) return NULL;
  uint32_t slots = assign_slots(steps, a, b, slot, handle);
  for (uint32_t k = 0; k < words; k++)
    if (slot[k] >= VYRE_MAX_BUFFERS) return NULL; /* over 64 buffers */
  uint8_t key[32];
  vc_plan *plan = NULL;
  group_key(Ls, steps, a, b, slot, key);
  if (cache_find(f, key, &plan)) return plan;
  plan = build_plan(f, Ls, a, b, slot, slots);
  cache_insert(f, key, plan);
  return plan;
}

/* Fuse [a, b): whole when it qualifies, else its longest prefix that
 * does, then the rest the same way.  A refusal is monotone (adding a step
 * only adds accesses and instructions), so a binary search finds that
 * prefix.  plan[k] gets each fused run's plan, end[k] its end. */
static void fuse_range(vc_fuser *f, const vc_launch *Ls, const vyre_sequence_step *steps,
                       uint32_t a, uint32_t b, vc_plan **plan, uint32_t *end) {
  while (b - a >= 2) {
    vc_plan *best = group_plan(f, Ls, steps, a, b);
    uint32_t lo = best ? b : a + 1, hi = b;
    while (hi - lo > 1) { /* [a, lo) fuses (or is one step), [a, hi) does not */
      uint32_t mid = lo + (hi - lo) / 2;
      vc_plan *p = group_plan(f, Ls, steps, a, mid);
      if (p) {
        vc_plan_unref(f->plans, best);
        best = p;
        lo = mid;
      } else {
        hi = mid;
      }
    }
    if (best) {
      plan[a] = best;
      end[a] = lo;
    }
    a = lo;
  }
}

/* Shape fused launch L for steps [a, b) on their resident buffers; the
 * handles of its slots into h.  VYRE_UNSUPPORTED (err untouched) when its
 * index space is not the steps'. */
static vyre_status shape_fused(vc_fuser *f, vc_launch *Ls, const vyre_sequence_step *steps,
                               uint32_t a, uint32_t b, vc_launch *L, vyre_resident *h,
                               uint32_t *slots, vyre_error *err) {
  uint32_t slot[FUSE_MAX_INSTS];
  uint64_t sizes[VYRE_MAX_BUFFERS];
  *slots = assign_slots(steps, a, b, slot, h);
  uint32_t at = 0;
  for (uint32_t i = a; i < b; i++) {
    const vyre_program *p = Ls[i].k->program;
    for (uint32_t bi = 0; bi < p->buffer_count; bi++) {
      uint32_t ki = p->buffers[bi].kernel_index, s = slot[at + ki];
      L->ptrs[s] = Ls[i].ptrs[ki];
      sizes[s] = Ls[i].geo.buffer_bytes[bi];
    }
    at += steps[i].buffer_count;
  }
  vyre_dispatch_options o;
  memset(&o, 0, sizeof o);
  o.struct_size = sizeof o;
  vyre_status st = vc_launch_shape(f->lx, L, NULL, sizes, &o, err);
  if (st != VYRE_OK) return st;
  if (L->geo.element_count != Ls[a].geo.element_count ||
      memcmp(L->grid, Ls[a].grid, sizeof L->grid) != 0)
    return VYRE_UNSUPPORTED;
  L->deadline = Ls[a].deadline;
  L->timeout_ns = Ls[a].timeout_ns;
  return vc_launch_stage_params(f->lx, L, err);
}

void vc_fused_free(vc_fused *out) {
  free(out->steps);
  free(out->handles);
  free(out->first);
  out->steps = NULL;
  out->handles = NULL;
  out->first = NULL;
}

/* Lay out the launch list once the groups are known (plan[a], end[a]). */
static vyre_status make_list(vc_fuser *f, vc_launch *Ls, const vyre_sequence_step *steps,
                             uint32_t n, vc_plan **plan, const uint32_t *end, vc_fused *out,
                             vyre_error *err) {
  uint32_t launches = 0, handles = 0;
  for (uint32_t i = 0; i < n; i = plan[i] ? end[i] : i + 1) launches++;
  for (uint32_t i = 0; i < n; i++) handles += steps[i].buffer_count;
  out->Ls = calloc(launches, sizeof *out->Ls);
  out->steps = calloc(launches, sizeof *out->steps);
  out->handles = calloc(handles ? handles : 1, sizeof *out->handles);
  out->first = calloc(launches, sizeof *out->first);
  if (!out->Ls || !out->steps || !out->handles || !out->first)
    return vyre_error_set(err, VYRE_OUT_OF_MEMORY, 0,
                          "dispatch_sequence: no host memory for the fused launch list. Fix: "
                          "free host memory");
  uint32_t j = 0, at = 0;
  vyre_status st = VYRE_OK;
  for (uint32_t i = 0; i < n && st == VYRE_OK; j++) {
    vyre_sequence_step *sp = &out->steps[j];
    sp->struct_size = sizeof *sp;
    sp->program = steps[i].program;
    sp->buffers = out->handles + at;
    out->first[j] = i;
    if (!plan[i]) {
      out->Ls[j] = Ls[i];
      memset(&Ls[i], 0, sizeof Ls[i]);
      sp->buffer_count = steps[i].buffer_count;
      memcpy(out->handles + at, steps[i].buffers, sp->buffer_count * sizeof(vyre_resident));
      at += sp->buffer_count;
      i++;
      continue;
    }
    out->Ls[j].plan = plan[i];
    plan[i] = NULL; /* the launch holds it now */
    st = shape_fused(f, Ls, steps, i, end[i], &out->Ls[j], out->handles + at, &sp->buffer_count,
                     err);
    at += sp->buffer_count;
    out->folded += end[i] - i;
    i = end[i];
  }
  out->n = j;
  return st;
}

/* Undo make_list: the launches it took over go back to Ls (theirs is
 * empty), the fused ones are released. */
static void unmake_list(vc_fuser *f, vc_launch *Ls, vc_fused *out) {
  for (uint32_t j = 0; out->Ls && out->first && j < out->n; j++) {
    uint32_t i = out->first[j];
    if (!Ls[i].plan) Ls[i] = out->Ls[j];
    else vc_launch_release(f->lx, &out->Ls[j]);
  }
  free(out->Ls);
  vc_fused_free(out);
  memset(out, 0, sizeof *out);
}

vyre_status vc_fuse_sequence(vc_fuser *f, vc_launch *Ls, const vyre_sequence_step *steps,
                             uint32_t n, vc_fused *out) {
  memset(out, 0, sizeof *out);
  if (!f->enabled || n < 2) return VYRE_OK;
  /* Most sequences (a clear step, then a kernel over another size) have
   * no two neighbours in one index space: nothing is allocated for them. */
  uint32_t pair = 0;
  while (pair + 1 < n && !(candidate(&Ls[pair], &steps[pair]) &&
                           candidate(&Ls[pair + 1], &steps[pair + 1]) &&
                           compatible(&Ls[pair], &Ls[pair + 1])))
    pair++;
  if (pair + 1 >= n) return VYRE_OK;
  vc_plan **plan = calloc(n, sizeof *plan);
  uint32_t *end = calloc(n, sizeof *end);
  if (!plan || !end) {
    free(plan);
    free(end);
    return VYRE_OK; /* no memory to plan fusion: the steps run as they are */
  }
  int any = 0;
  for (uint32_t i = 0; i < n;) {
    if (!candidate(&Ls[i], &steps[i])) {
      i++;
      continue;
    }
    uint32_t j = i + 1, insts = Ls[i].k->program->inst_count;
    while (j < n && candidate(&Ls[j], &steps[j]) && compatible(&Ls[i], &Ls[j]) &&
           insts + Ls[j].k->program->inst_count <= FUSE_MAX_INSTS)
      insts += Ls[j++].k->program->inst_count;
    fuse_range(f, Ls, steps, i, j, plan, end);
    i = j;
  }
  for (uint32_t i = 0; i < n; i++) any |= plan[i] != NULL;
  if (any) {
    /* Whatever fails here, the steps can still run as they are. */
    vyre_error e = VYRE_ERROR_INIT;
    if (make_list(f, Ls, steps, n, plan, end, out, &e) != VYRE_OK) unmake_list(f, Ls, out);
  }
  for (uint32_t i = 0; i < n; i++) vc_plan_unref(f->plans, plan[i]);
  free(plan);
  free(end);
  return VYRE_OK;
}

void vc_fuser_count(vc_fuser *f, const vc_fused *fz, uint32_t steps, uint32_t repeat) {
  if (!fz->n) return;
  pthread_mutex_lock(&f->lock);
  f->runs++;
  f->steps += (uint64_t)fz->folded * repeat;
  f->saved += (uint64_t)(steps - fz->n) * repeat;
  pthread_mutex_unlock(&f->lock);
}

static void read_metrics(const void *state, vc_metric_sink *s) {
  vc_fuser *f = (vc_fuser *)state;
  pthread_mutex_lock(&f->lock);
  uint64_t c = f->compiles, h = f->hits, r = f->refused, e = f->count, runs = f->runs,
           st = f->steps, sv = f->saved;
  pthread_mutex_unlock(&f->lock);
  vc_metric_emit(s, "fuse.enabled", (uint64_t)f->enabled);
  vc_metric_emit(s, "fuse.compiles", c);
  vc_metric_emit(s, "fuse.hits", h);
  vc_metric_emit(s, "fuse.refused", r);
  vc_metric_emit(s, "fuse.entries", e);
  vc_metric_emit(s, "fuse.sequences", runs);
  vc_metric_emit(s, "fuse.steps", st);
  vc_metric_emit(s, "fuse.launches_saved", sv);
}

void vc_fuser_add_metrics(vc_fuser *f, vc_metrics *m) { vc_metrics_add(m, read_metrics, f); }
