/* modcache.c -- plans: program -> PTX -> cubin -> CUfunction, refcounted, in an in-memory LRU over the disk cache (modcache.h). */
#include "modcache.h"

#include <stdlib.h>
#include <string.h>

#include "abi/support/config.h"
#include "util.h"
#include "vyre/vyre_support.h"

#define MODCACHE_CAPACITY 64u
#define PLAN_BINDINGS 2

/* One first-level binding: image bytes (those of plan->program) and the
 * settings they were planned under.  Lives in its plan; chained in a
 * bucket while the plan is cached. */
struct vc_bytes_entry {
  uint64_t hash;
  uint32_t workgroup[3], ulp_budget, flags;
  int bound;
  struct vc_plan *plan;
  vc_bytes_entry *next;
};

struct vc_plan {
  atomic_uint refs;
  vc_kernel k;           /* k.program is `program` */
  vyre_program *program; /* owned */
  CUmodule module;
  struct vc_plan *prev, *next; /* LRU list, guarded by the cache lock */
  int cached;
  vc_bytes_entry bind[PLAN_BINDINGS]; /* guarded by the cache lock */
};

static void put_u32(uint8_t *p, uint32_t v) {
  for (int i = 0; i < 4; i++) p[i] = (uint8_t)(v >> (8 * i));
}

/* ------------------------------------------------------------------ */
/* Memory cache                                                        */
/* ------------------------------------------------------------------ */
vyre_status vc_modcache_init(vc_modcache *c, vc_context *cx, vc_diskcache *disk,
                             vyre_error *err) {
  memset(c, 0, sizeof *c);
  atomic_init(&c->codegen_ns, 0);
  atomic_init(&c->jit_ns, 0);
  atomic_init(&c->load_ns, 0);
  vyre_status st = vc_mutex_init(&c->lock, "cuda create", "module cache", err);
  if (st != VYRE_OK) return st;
  c->cx = cx;
  c->disk = disk;
  c->capacity = (uint32_t)vyre__env_uint(VYRE__ENV_CUDA_MODULE_CACHE, MODCACHE_CAPACITY, 1, 65536);
  vc_jit_config_read(&c->jit);
  /* Two buckets per plan: chains stay short at every capacity.  Without
   * the memory every lookup takes the decoding path, which still works. */
  uint32_t n = 64;
  while (n < 2u * c->capacity) n *= 2u;
  c->buckets = calloc(n, sizeof *c->buckets);
  c->bucket_mask = c->buckets ? n - 1u : 0;
  return VYRE_OK;
}

static void plan_free(vc_modcache *c, vc_plan *p) {
  vc_jit_unload(c->cx, p->module);
  vyre_program_free(p->program);
  free(p);
}

void vc_plan_ref(vc_plan *plan) { atomic_fetch_add(&plan->refs, 1); }

void vc_plan_unref(vc_modcache *c, vc_plan *plan) {
  if (plan && atomic_fetch_sub(&plan->refs, 1) == 1) plan_free(c, plan);
}

const vc_kernel *vc_plan_kernel(const vc_plan *plan) { return &plan->k; }

/* ------------------------------------------------------------------ */
/* First level: image bytes -> plan                                    */
/* ------------------------------------------------------------------ */
void vc_bytes_key_init(vc_bytes_key *k, const void *bytes, uint64_t size, const uint32_t wg[3],
                       uint32_t ulp_budget, uint32_t flags) {
  k->bytes = bytes;
  k->size = size;
  memcpy(k->workgroup, wg, sizeof k->workgroup);
  k->ulp_budget = ulp_budget;
  k->flags = flags;
  /* Not a content hash: equal keys are confirmed byte for byte. */
  uint64_t h = vc_hash64(bytes, size, 0);
  h = vc_mix64(h ^ ((uint64_t)wg[0] << 32 | wg[1]));
  h = vc_mix64(h ^ ((uint64_t)wg[2] << 32 | ulp_budget) ^ ((uint64_t)flags << 17));
  k->hash = h;
}

static int entry_matches(const vc_bytes_entry *e, const vc_bytes_key *k) {
  const vyre_program *prog = e->plan->program;
  return e->hash == k->hash && e->ulp_budget == k->ulp_budget && e->flags == k->flags &&
         memcmp(e->workgroup, k->workgroup, sizeof e->workgroup) == 0 && prog->size == k->size &&
         memcmp(prog->bytes, k->bytes, (size_t)k->size) == 0;
}

/* Lock held: drop the plan's bindings from the buckets. */
static void plan_unbind(vc_modcache *c, vc_plan *p) {
  for (int i = 0; i < PLAN_BINDINGS; i++) {
    vc_bytes_entry *e = &p->bind[i];
    if (!e->bound) continue;
    for (vc_bytes_entry **at = &c->buckets[e->hash & c->bucket_mask]; *at; at = &(*at)->next) {
      if (*at == e) {
        *at = e->next;
        break;
      }
    }
    e->bound = 0;
    e->next = NULL;
  }
}

static void lru_unlink(vc_modcache *c, vc_plan *p);
static void lru_push_front(vc_modcache *c, vc_plan *p);

int vc_plan_find_bytes(vc_modcache *c, const vc_bytes_key *k, vc_plan **out) {
  *out = NULL;
  if (!c->buckets) return 0;
  pthread_mutex_lock(&c->lock);
  for (vc_bytes_entry *e = c->buckets[k->hash & c->bucket_mask]; e; e = e->next) {
    if (!entry_matches(e, k)) continue;
    vc_plan *p = e->plan;
    if (c->head != p) {
      lru_unlink(c, p);
      lru_push_front(c, p);
    }
    vc_plan_ref(p);
    c->hits++;
    c->byte_hits++;
    pthread_mutex_unlock(&c->lock);
    *out = p;
    return 1;
  }
  pthread_mutex_unlock(&c->lock);
  return 0;
}

void vc_plan_bind_bytes(vc_modcache *c, vc_plan *plan, const vc_bytes_key *k) {
  if (!c->buckets) return;
  pthread_mutex_lock(&c->lock);
  /* Only a cached plan: an evicted one could not be unbound later. */
  if (plan->cached) {
    vc_bytes_entry *slot = NULL;
    for (int i = 0; i < PLAN_BINDINGS; i++) {
      vc_bytes_entry *e = &plan->bind[i];
      if (e->bound && entry_matches(e, k)) {
        slot = NULL;
        break;
      }
      if (!e->bound && !slot) slot = e;
    }
    if (slot && plan->program->size == k->size &&
        memcmp(plan->program->bytes, k->bytes, (size_t)k->size) == 0) {
      slot->hash = k->hash;
      memcpy(slot->workgroup, k->workgroup, sizeof slot->workgroup);
      slot->ulp_budget = k->ulp_budget;
      slot->flags = k->flags;
      slot->plan = plan;
      slot->bound = 1;
      vc_bytes_entry **head = &c->buckets[k->hash & c->bucket_mask];
      slot->next = *head;
      *head = slot;
    }
  }
  pthread_mutex_unlock(&c->lock);
}

static void lru_unlink(vc_modcache *c, vc_plan *p) {
  if (p->prev) p->prev->next = p->next;
  else c->head = p->next;
  if (p->next) p->next->prev = p->prev;
  else c->tail = p->prev;
  p->prev = p->next = NULL;
  p->cached = 0;
  c->count--;
}

static void lru_push_front(vc_modcache *c, vc_plan *p) {
  p->prev = NULL;
  p->next = c->head;
  if (c->head) c->head->prev = p;
  c->head = p;
  if (!c->tail) c->tail = p;
  p->cached = 1;
  c->count++;
}

void vc_modcache_trim(vc_modcache *c) {
  for (;;) {
    pthread_mutex_lock(&c->lock);
    vc_plan *p = c->head;
    while (p && atomic_load(&p->refs) > 1) p = p->next;
    if (p) {
      plan_unbind(c, p);
      lru_unlink(c, p);
    }
    pthread_mutex_unlock(&c->lock);
    if (!p) break;
    vc_plan_unref(c, p);
  }
}

void vc_modcache_destroy(vc_modcache *c) {
  if (!c->cx) return;
  for (;;) {
    pthread_mutex_lock(&c->lock);
    vc_plan *p = c->head;
    if (p) {
      plan_unbind(c, p);
      lru_unlink(c, p);
    }
    pthread_mutex_unlock(&c->lock);
    if (!p) break;
    vc_plan_unref(c, p);
  }
  pthread_mutex_destroy(&c->lock);
  free(c->buckets);
  c->buckets = NULL;
  c->cx = NULL;
}

/* ------------------------------------------------------------------ */
/* Building a plan                                                     */
/* ------------------------------------------------------------------ */
/* The plan key: the program, the codegen options, the generator and the
 * JIT optimisation level (a cubin on disk is one level's). */
static void plan_key(const vyre_program *prog, const cg_options *cg, uint32_t opt_level,
                     uint8_t out[32]) {
  uint8_t w[4 * 10];
  put_u32(w, CG_VERSION);
  put_u32(w + 4, cg->sm_major);
  put_u32(w + 8, cg->sm_minor);
  put_u32(w + 12, cg->ulp_budget);
  put_u32(w + 16, cg->workgroup[0]);
  put_u32(w + 20, cg->workgroup[1]);
  put_u32(w + 24, cg->workgroup[2]);
  put_u32(w + 28, cg->flags);
  put_u32(w + 32, (uint32_t)sizeof(cg_kernel_info));
  put_u32(w + 36, opt_level);
  vyre_sha256_ctx ctx;
  vyre_sha256_init(&ctx);
  vyre_sha256_update(&ctx, prog->sha256, 32);
  vyre_sha256_update(&ctx, w, sizeof w);
  vyre_sha256_update(&ctx, cg_source_id, strlen(cg_source_id));
  vyre_sha256_final(&ctx, out);
}

/* Load a cubin into the plan. */
static vyre_status load_plan(vc_modcache *c, vc_plan *p, const void *cubin, vyre_error *err) {
  const uint32_t *wg = p->k.cg.workgroup;
  vc_jit_module m = {NULL, NULL, 0};
  uint64_t t0 = vyre__now_ns();
  vyre_status st = vc_jit_load(c->cx, cubin, &p->k.info, wg[0] * wg[1] * wg[2], &m, err);
  atomic_fetch_add(&c->load_ns, vyre__now_ns() - t0);
  p->module = m.module;
  p->k.fn = m.fn;
  p->k.coop_max_blocks = m.coop_max_blocks;
  return st;
}

static vyre_status build_plan(vc_modcache *c, vc_plan *p, vyre_error *err) {
  vc_kernel *k = &p->k;
  int disk = vc_diskcache_enabled(c->disk);
  vyre_status st;
  if (disk) {
    uint8_t *payload = NULL;
    uint64_t size = 0;
    int got = vc_diskcache_read(c->disk, k->key, &payload, &size);
    if (got == 1) {
      memcpy(&k->info, payload, sizeof k->info);
      k->info.entry[sizeof k->info.entry - 1] = '\0';
      st = load_plan(c, p, payload + sizeof k->info, err);
      free(payload);
      if (st == VYRE_OK) {
        vc_diskcache_count_hit(c->disk);
        return VYRE_OK;
      }
      if (vc_is_lost(c->cx)) return st;
      /* A cubin the driver refuses (for example written by a different
       * driver build with the same version number): rebuild it. */
      vc_jit_unload(c->cx, p->module);
      p->module = NULL;
      k->fn = NULL;
      vc_diskcache_count_refused(c->disk);
      vyre_error_clear(err);
    }
    vc_diskcache_count_miss(c->disk);
  }

  char *ptx = NULL;
  size_t len = 0;
  memset(&k->info, 0, sizeof k->info);
  uint64_t t0 = vyre__now_ns();
  st = cg_emit_ptx(p->program, &k->cg, &ptx, &len, &k->info, err);
  uint64_t t1 = vyre__now_ns();
  atomic_fetch_add(&c->codegen_ns, t1 - t0);
  if (st != VYRE_OK) return st;
  k->info.entry[sizeof k->info.entry - 1] = '\0';
  if (k->info.kernel_buffers != p->program->kernel_buffer_count ||
      k->info.elements_per_thread == 0) {
    free(ptx);
    return vyre_error_set(err, VYRE_INTERNAL, 0,
                          "codegen returned kernel %s with %u buffer parameters and %u "
                          "elements per thread for a program with %u kernel buffers. Fix: "
                          "report a codegen bug",
                          k->info.entry, k->info.kernel_buffers, k->info.elements_per_thread,
                          p->program->kernel_buffer_count);
  }
  vc_jit_dump_ptx(k->key, k->info.entry, ptx, len);
  /* A kernel with MMA ops is compiled whole-program, in one driver call,
   * and not kept on disk: the linker compiles PTX as relocatable code,
   * which costs such a register-heavy kernel registers and occupancy
   * (examples/matmul_mma_i8.vyre: 146 registers instead of 128, one
   * workgroup an SM instead of two, 1.65x the time on an H200;
   * docs/cuda-runtime.md, "Compile"). */
  int whole = (p->program->features & VYRE_FEAT_MMA) != 0;
  if ((!disk && c->jit.direct) || whole) {
    /* No cubin to keep: compile and load in one driver call. */
    const uint32_t *wg = k->cg.workgroup;
    vc_jit_module m = {NULL, NULL, 0};
    t1 = vyre__now_ns();
    st = vc_jit_load_ptx(c->cx, &c->jit, &k->info, ptx, wg[0] * wg[1] * wg[2], &m, err);
    atomic_fetch_add(&c->jit_ns, vyre__now_ns() - t1);
    free(ptx);
    p->module = m.module;
    k->fn = m.fn;
    k->coop_max_blocks = m.coop_max_blocks;
    return st;
  }
  void *cubin = NULL;
  size_t cubin_size = 0;
  t1 = vyre__now_ns();
  st = vc_jit_link(c->cx, &c->jit, &k->info, ptx, len, &cubin, &cubin_size, err);
  atomic_fetch_add(&c->jit_ns, vyre__now_ns() - t1);
  free(ptx);
  if (st != VYRE_OK) return st;
  if (disk) vc_diskcache_write(c->disk, k->key, &k->info, cubin, cubin_size);
  st = load_plan(c, p, cubin, err);
  free(cubin);
  return st;
}

vyre_status vc_plan_get(vc_modcache *c, vyre_program *program, const cg_options *cg,
                        vc_plan **out, vyre_error *err) {
  *out = NULL;
  uint8_t key[32];
  plan_key(program, cg, c->jit.opt_level, key);

  pthread_mutex_lock(&c->lock);
  for (vc_plan *p = c->head; p; p = p->next) {
    if (memcmp(p->k.key, key, 32) == 0) {
      lru_unlink(c, p);
      lru_push_front(c, p);
      vc_plan_ref(p);
      c->hits++;
      pthread_mutex_unlock(&c->lock);
      vyre_program_free(program);
      *out = p;
      return VYRE_OK;
    }
  }
  c->misses++;
  pthread_mutex_unlock(&c->lock);

  vc_plan *p = calloc(1, sizeof *p);
  if (!p) {
    vyre_program_free(program);
    return vyre_error_set(err, VYRE_OUT_OF_MEMORY, 0,
                          "compiling: no host memory for a plan. Fix: free host memory");
  }
  atomic_init(&p->refs, 1);
  memcpy(p->k.key, key, 32);
  p->program = program;
  p->k.program = program;
  p->k.cg = *cg;
  vyre_status st = build_plan(c, p, err);
  if (st != VYRE_OK) {
    plan_free(c, p);
    return st;
  }
  vc_fill_detect(program, p->k.info.grid_mode == CG_GRID_ELEMENTWISE, &p->k.fill);

  /* Another thread may have built the same plan meanwhile: keep one. */
  pthread_mutex_lock(&c->lock);
  c->compiles++;
  for (vc_plan *q = c->head; q; q = q->next) {
    if (memcmp(q->k.key, key, 32) == 0) {
      vc_plan_ref(q);
      pthread_mutex_unlock(&c->lock);
      plan_free(c, p);
      *out = q;
      return VYRE_OK;
    }
  }
  vc_plan_ref(p); /* the cache's reference */
  lru_push_front(c, p);
  vc_plan *evict = NULL;
  if (c->count > c->capacity) {
    evict = c->tail;
    plan_unbind(c, evict);
    lru_unlink(c, evict);
    c->evictions++;
  }
  pthread_mutex_unlock(&c->lock);
  if (evict) vc_plan_unref(c, evict);
  *out = p;
  return VYRE_OK;
}

static void read_metrics(const void *state, vc_metric_sink *s) {
  vc_modcache *c = (vc_modcache *)state;
  pthread_mutex_lock(&c->lock);
  uint64_t mh = c->hits, mb = c->byte_hits, mm = c->misses, me = c->count;
  uint64_t mcap = c->capacity, mev = c->evictions, mco = c->compiles;
  pthread_mutex_unlock(&c->lock);
  vc_metric_emit(s, "cache.module.hits", mh);
  vc_metric_emit(s, "cache.module.byte_hits", mb);
  vc_metric_emit(s, "cache.module.misses", mm);
  vc_metric_emit(s, "cache.module.entries", me);
  vc_metric_emit(s, "cache.module.capacity", mcap);
  vc_metric_emit(s, "cache.module.evictions", mev);
  vc_metric_emit(s, "cache.module.compiles", mco);
  vc_metric_emit(s, "compile.codegen_us", atomic_load(&c->codegen_ns) / 1000u);
  vc_metric_emit(s, "compile.jit_us", atomic_load(&c->jit_ns) / 1000u);
  vc_metric_emit(s, "compile.load_us", atomic_load(&c->load_ns) / 1000u);
  vc_metric_emit(s, "compile.jit_opt_level", c->jit.opt_level);
}

void vc_modcache_add_metrics(vc_modcache *c, vc_metrics *m) { vc_metrics_add(m, read_metrics, c); }
