/* graph.c -- the graph cache: capture of a step list's launches, instantiation, replay, LRU, invalidation (graph.h). */
#include "graph.h"

#include <stdlib.h>
#include <string.h>

#include "util.h"
#include "vyre/vyre_support.h"

#define GRAPH_CACHE_CAPACITY 16u

/* A captured, instantiated step list. */
struct vc_graph {
  uint8_t key[32];
  uint32_t steps;
  vc_plan **plans;
  vc_block *params_dev; /* one per step; the graph's kernels point at them */
  vyre_resident *handles;
  uint32_t handle_count;
  CUgraph graph;
  CUgraphExec exec;
  int busy, stale;
  /* The fast key: the caller's step list as passed (vc_graph_set_fast);
   * NULL until a run that may take the fast path has used this graph. */
  uint8_t *fast;
  size_t fast_len;
  uint64_t fast_hash;
  uint32_t replay_launches, replay_fastpath, replay_fills; /* per replay, for the counters */
  vc_graph *next;
};


vyre_status vc_graphs_init(vc_graphcache *c, vc_context *cx, vc_mempool *devpool,
                           vc_modcache *plans, vc_launcher *lx, vyre_error *err) {
  memset(c, 0, sizeof *c);
  vyre_status st = vc_mutex_init(&c->lock, "cuda create", "graph cache", err);
  if (st != VYRE_OK) return st;
  c->capacity = GRAPH_CACHE_CAPACITY;
  c->cx = cx;
  c->devpool = devpool;
  c->plans = plans;
  c->lx = lx;
  return VYRE_OK;
}

static void graph_destroy(vc_graphcache *c, vc_graph *g) {
  if (!g) return;
  vc_context *cx = c->cx;
  if (!vc_cleanup_ok(cx)) g->exec = NULL, g->graph = NULL; /* go with the context */
  if (g->exec) {
    CUresult r = VC_CU(cx, cuGraphExecDestroy, (g->exec));
    if (r != CUDA_SUCCESS) vc_cu_note(cx, r, "cuGraphExecDestroy");
  }
  if (g->graph) {
    CUresult r = VC_CU(cx, cuGraphDestroy, (g->graph));
    if (r != CUDA_SUCCESS) vc_cu_note(cx, r, "cuGraphDestroy");
  }
  for (uint32_t i = 0; i < g->steps; i++) {
    if (g->params_dev) vc_mempool_release(c->devpool, &g->params_dev[i]);
    if (g->plans && g->plans[i]) vc_plan_unref(c->plans, g->plans[i]);
  }
  free(g->params_dev);
  free(g->plans);
  free(g->handles);
  free(g->fast);
  free(g);
}

void vc_graph_release(vc_graphcache *c, vc_graph *g) {
  pthread_mutex_lock(&c->lock);
  g->busy = 0;
  int destroy = g->stale;
  pthread_mutex_unlock(&c->lock);
  if (destroy) graph_destroy(c, g);
}

void vc_graphs_forget_resident(void *user, vyre_resident h) {
  vc_graphcache *c = user;
  vc_graph *doomed = NULL;
  pthread_mutex_lock(&c->lock);
  vc_graph **pp = &c->head;
  while (*pp) {
    vc_graph *g = *pp;
    int uses = 0;
    for (uint32_t i = 0; i < g->handle_count && !uses; i++) uses = g->handles[i] == h;
    if (!uses) {
      pp = &g->next;
      continue;
    }
    *pp = g->next;
    c->count--;
    if (g->busy) {
      g->stale = 1;
    } else {
      g->next = doomed;
      doomed = g;
    }
  }
  pthread_mutex_unlock(&c->lock);
  while (doomed) {
    vc_graph *g = doomed;
    doomed = g->next;
    graph_destroy(c, g);
  }
}

void vc_graphs_clear(vc_graphcache *c) {
  pthread_mutex_lock(&c->lock);
  vc_graph *list = c->head, *keep = NULL;
  c->head = NULL;
  c->count = 0;
  pthread_mutex_unlock(&c->lock);
  while (list) {
    vc_graph *g = list;
    list = g->next;
    pthread_mutex_lock(&c->lock);
    int busy = g->busy;
    if (busy) g->stale = 1;
    pthread_mutex_unlock(&c->lock);
    if (!busy) graph_destroy(c, g);
    else {
      g->next = keep;
      keep = g;
    }
  }
  (void)keep; /* busy graphs are destroyed by their user (stale) */
}

void vc_graph_key(const vc_launch *Ls, uint32_t n, const vyre_sequence_step *steps,
                  uint8_t out[32]) {
  vyre_sha256_ctx ctx;
  vyre_sha256_init(&ctx);
  for (uint32_t i = 0; i < n; i++) {
    const vc_launch *L = &Ls[i];
    vyre_sha256_update(&ctx, L->k->key, 32);
    vyre_sha256_update(&ctx, L->grid, sizeof L->grid);
    vyre_sha256_update(&ctx, L->block, sizeof L->block);
    vyre_sha256_update(&ctx, &L->iterations, sizeof L->iterations);
    vyre_sha256_update(&ctx, L->ptrs, L->k->info.kernel_buffers * sizeof L->ptrs[0]);
    vyre_sha256_update(&ctx, steps[i].buffers, steps[i].buffer_count * sizeof(vyre_resident));
    vyre_sha256_update(&ctx, &L->indirect, sizeof L->indirect);
    vyre_sha256_update(&ctx, &L->indirect_handle, sizeof L->indirect_handle);
    vyre_sha256_update(&ctx, (const void *)(uintptr_t)L->params_host.ptr,
                       (size_t)L->params_words * 4u);
  }
  vyre_sha256_final(&ctx, out);
}

uint64_t vc_graph_fast_hash(const uint8_t *m, size_t len) {
  uint64_t h = 0x243f6a8885a308d3ull ^ len;
  size_t i = 0;
  for (; i + 8 <= len; i += 8) {
    uint64_t w;
    memcpy(&w, m + i, 8);
    h = (h ^ w) * 0x9e3779b97f4a7c15ull;
    h ^= h >> 29;
  }
  for (; i < len; i++) h = (h ^ m[i]) * 0x100000001b3ull;
  return h;
}

static int fast_matches(const vc_graph *g, const uint8_t *m, size_t len, uint64_t hash) {
  return g->fast && g->fast_hash == hash && g->fast_len == len && memcmp(g->fast, m, len) == 0;
}

static int full_matches(const vc_graph *g, const uint8_t *key) {
  return memcmp(g->key, key, 32) == 0;
}

/* The lookup both keys share: the first graph `match` accepts, made busy. */
static vc_graph *lookup(vc_graphcache *c, int (*match)(const vc_graph *, const void *),
                        const void *arg, int fast, int *busy) {
  *busy = 0;
  pthread_mutex_lock(&c->lock);
  vc_graph **pp = &c->head, *g = NULL;
  while (*pp) {
    if (match(*pp, arg)) {
      g = *pp;
      if (g->busy) {
        g = NULL;
        *busy = 1;
        break;
      }
      *pp = g->next; /* move to front */
      g->next = c->head;
      c->head = g;
      g->busy = 1;
      c->hits++;
      if (fast) c->fast_hits++;
      break;
    }
    pp = &(*pp)->next;
  }
  if (!g && !*busy) c->misses++;
  pthread_mutex_unlock(&c->lock);
  return g;
}

static int match_full(const vc_graph *g, const void *key) { return full_matches(g, key); }

typedef struct fast_arg {
  const uint8_t *m;
  size_t len;
  uint64_t hash;
} fast_arg;

static int match_fast(const vc_graph *g, const void *arg) {
  const fast_arg *a = arg;
  return fast_matches(g, a->m, a->len, a->hash);
}

vc_graph *vc_graph_lookup(vc_graphcache *c, const uint8_t key[32], int *busy) {
  return lookup(c, match_full, key, 0, busy);
}

vc_graph *vc_graph_lookup_fast(vc_graphcache *c, const uint8_t *m, size_t len, uint64_t hash,
                               int *busy) {
  fast_arg a = {m, len, hash};
  return lookup(c, match_fast, &a, 1, busy);
}

void vc_graph_set_fast(vc_graphcache *c, vc_graph *g, const uint8_t *m, size_t len,
                       uint64_t hash, uint32_t launches, uint32_t fastpath, uint32_t fills) {
  uint8_t *copy = malloc(len ? len : 1);
  if (!copy) return; /* no fast key: the full path still finds the graph */
  memcpy(copy, m, len);
  /* Other threads' lookups read the key under the lock. */
  pthread_mutex_lock(&c->lock);
  if (!g->fast) {
    g->fast = copy;
    copy = NULL;
    g->fast_len = len;
    g->fast_hash = hash;
    g->replay_launches = launches;
    g->replay_fastpath = fastpath;
    g->replay_fills = fills;
  }
  pthread_mutex_unlock(&c->lock);
  free(copy);
}

void vc_graph_replay_counts(const vc_graph *g, uint32_t *launches, uint32_t *fastpath,
                            uint32_t *fills) {
  *launches = g->replay_launches;
  *fastpath = g->replay_fastpath;
  *fills = g->replay_fills;
}

void vc_graph_insert(vc_graphcache *c, vc_graph *g) {
  vc_graph *evict = NULL;
  pthread_mutex_lock(&c->lock);
  g->next = c->head;
  c->head = g;
  c->count++;
  if (c->count > c->capacity) {
    /* Drop the least recently used idle graph. */
    vc_graph **pp = &c->head, **victim = NULL;
    while (*pp) {
      if (!(*pp)->busy) victim = pp;
      pp = &(*pp)->next;
    }
    if (victim) {
      evict = *victim;
      *victim = evict->next;
      c->count--;
    }
  }
  pthread_mutex_unlock(&c->lock);
  if (evict) graph_destroy(c, evict);
}

vyre_status vc_graph_capture(vc_graphcache *c, vc_launch *Ls, uint32_t n,
                             const vyre_sequence_step *steps, const uint8_t key[32], CUstream s,
                             int *stream_bad, vc_graph **out, vyre_error *err) {
  vc_context *cx = c->cx;
  *out = NULL;
  vc_graph *g = calloc(1, sizeof *g);
  uint32_t handles = 0;
  for (uint32_t i = 0; i < n; i++) handles += steps[i].buffer_count + (Ls[i].indirect != 0);
  if (g) {
    g->plans = calloc(n, sizeof *g->plans);
    g->params_dev = calloc(n, sizeof *g->params_dev);
    g->handles = calloc(handles ? handles : 1, sizeof *g->handles);
  }
  if (!g || !g->plans || !g->params_dev || !g->handles) {
    graph_destroy(c, g);
    return vyre_error_set(err, VYRE_OUT_OF_MEMORY, 0,
                          "dispatch_sequence: no host memory for a graph record. Fix: free host "
                          "memory");
  }
  memcpy(g->key, key, 32);
  g->steps = n;
  for (uint32_t i = 0; i < n; i++) {
    for (uint32_t k = 0; k < steps[i].buffer_count; k++)
      g->handles[g->handle_count++] = steps[i].buffers[k];
    /* Freeing the counts' buffer forgets the graph too. */
    if (Ls[i].indirect) g->handles[g->handle_count++] = Ls[i].indirect_handle;
    /* The graph keeps the plans its kernels use. */
    g->plans[i] = Ls[i].plan;
    vc_plan_ref(g->plans[i]);
  }
  /* Thread-local capture: other threads' driver calls are unaffected. */
  CUresult r = VC_CU(cx, cuStreamBeginCapture, (s, CU_STREAM_CAPTURE_MODE_THREAD_LOCAL));
  if (r != CUDA_SUCCESS) {
    vyre_status st = vc_cu_fail(cx, err, r, "cuStreamBeginCapture", NULL, NULL);
    graph_destroy(c, g);
    return st;
  }
  vyre_status st = VYRE_OK;
  /* Captured launches do not run (replays count them). */
  for (uint32_t i = 0; i < n && st == VYRE_OK; i++) st = vc_launch_enqueue(c->lx, &Ls[i], s, 0, err);
  CUgraph graph = NULL;
  r = VC_CU(cx, cuStreamEndCapture, (s, &graph));
  g->graph = graph;
  if (r != CUDA_SUCCESS) *stream_bad = 1; /* it may still be capturing */
  if (st != VYRE_OK) {
    graph_destroy(c, g);
    return st;
  }
  if (r != CUDA_SUCCESS || !graph) {
    st = r != CUDA_SUCCESS ? vc_cu_fail(cx, err, r, "cuStreamEndCapture", NULL, NULL)
                           : vyre_error_set(err, VYRE_DRIVER, 0,
                                            "cuStreamEndCapture returned no graph. Fix: update "
                                            "the NVIDIA driver");
    graph_destroy(c, g);
    return st;
  }
  r = VC_CU(cx, cuGraphInstantiateWithFlags, (&g->exec, graph, 0));
  if (r != CUDA_SUCCESS) {
    g->exec = NULL;
    st = vc_cu_fail(cx, err, r, "cuGraphInstantiateWithFlags", NULL, NULL);
    graph_destroy(c, g);
    return st;
  }
  /* Success: the params blocks the kernels point at now belong to the
   * graph (on failure they stayed with the steps, released after the
   * stream is idle). */
  for (uint32_t i = 0; i < n; i++) {
    g->params_dev[i] = Ls[i].params_dev;
    Ls[i].params_dev.ptr = 0;
    Ls[i].params_dev.size = 0;
  }
  g->busy = 1;
  *out = g;
  return VYRE_OK;
}

vc_block vc_graph_params(const vc_graph *g, uint32_t i) { return g->params_dev[i]; }

vyre_status vc_graph_launch(vc_graphcache *c, vc_graph *g, CUstream s, vyre_error *err) {
  CUresult r = VC_CU(c->cx, cuGraphLaunch, (g->exec, s));
  if (r != CUDA_SUCCESS) return vc_cu_fail(c->cx, err, r, "cuGraphLaunch", NULL, NULL);
  pthread_mutex_lock(&c->lock);
  c->launches++;
  pthread_mutex_unlock(&c->lock);
  return VYRE_OK;
}

void vc_graphs_destroy(vc_graphcache *c) {
  if (!c->cx) return;
  vc_graphs_clear(c);
  pthread_mutex_destroy(&c->lock);
  c->cx = NULL;
}

static void read_metrics(const void *state, vc_metric_sink *s) {
  vc_graphcache *c = (vc_graphcache *)state;
  pthread_mutex_lock(&c->lock);
  uint64_t gh = c->hits, gm = c->misses, ge = c->count, gl = c->launches, gf = c->fast_hits;
  pthread_mutex_unlock(&c->lock);
  vc_metric_emit(s, "graph.hits", gh);
  vc_metric_emit(s, "graph.fast_hits", gf);
  vc_metric_emit(s, "graph.misses", gm);
  vc_metric_emit(s, "graph.entries", ge);
  vc_metric_emit(s, "graph.launches", gl);
}

void vc_graphs_add_metrics(vc_graphcache *c, vc_metrics *m) { vc_metrics_add(m, read_metrics, c); }
