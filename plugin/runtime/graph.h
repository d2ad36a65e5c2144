/* graph.h -- captured, instantiated step lists of repeated sequences, cached (LRU) under everything their kernels bake in. */
#ifndef VYRE_PLUGIN_CUDA_GRAPH_H
#define VYRE_PLUGIN_CUDA_GRAPH_H

#include <pthread.h>
#include <stdint.h>

#include "context.h"
#include "launch.h"
#include "metrics.h"
#include "modcache.h"
#include "pools.h"

/* A captured graph: opaque. */
typedef struct vc_graph vc_graph;

/* The graph cache; fields private to graph.c. */
typedef struct vc_graphcache {
  pthread_mutex_t lock;
  vc_graph *head; /* most recently used first */
  uint32_t count, capacity;
  uint64_t hits, misses, launches, fast_hits; /* fast_hits: hits by the fast key */
  vc_context *cx;
  vc_mempool *devpool;
  vc_modcache *plans;
  vc_launcher *lx;
} vc_graphcache;

/* VYRE_OK, or the failure in err (nothing to destroy then). */
vyre_status vc_graphs_init(vc_graphcache *c, vc_context *cx, vc_mempool *devpool,
                           vc_modcache *plans, vc_launcher *lx, vyre_error *err);
/* Drop every idle graph; busy ones go when their user releases them. */
void vc_graphs_clear(vc_graphcache *c);
/* Clear, then free the cache (destroy). */
void vc_graphs_destroy(vc_graphcache *c);
/* Forget cached graphs that use resident handle h (it is being freed):
 * a vc_resident_freed_fn, `user` is the cache. */
void vc_graphs_forget_resident(void *user, vyre_resident h);
/* Add graph.{hits, fast_hits, misses, entries, launches}. */
void vc_graphs_add_metrics(vc_graphcache *c, vc_metrics *m);

/* Key of a step list: every plan, launch shape, buffer pointer, handle
 * and params word the captured kernels bake in. */
void vc_graph_key(const vc_launch *Ls, uint32_t n, const vyre_sequence_step *steps,
                  uint8_t out[32]);
/* The cached graph for key, marked busy; NULL on a miss, or when another
 * thread is replaying it (*busy = 1: take the plain path).  Thread-safe. */
vc_graph *vc_graph_lookup(vc_graphcache *c, const uint8_t key[32], int *busy);
/*
 * The fast key: the caller's step list as passed (pipeline handles,
 * options, resident handles), for a graph every step of which was checked
 * once and has no trap words.  A hit may skip resolving the steps: the
 * resident handles are live (freeing one forgets its graphs) and the
 * caller checks the pipeline handles.  Same busy rule as vc_graph_lookup.
 */
uint64_t vc_graph_fast_hash(const uint8_t *m, size_t len);
vc_graph *vc_graph_lookup_fast(vc_graphcache *c, const uint8_t *m, size_t len, uint64_t hash,
                               int *busy);
/* Give g (busy, ours) its fast key, once; launches, fastpath and fills
 * are the counts one replay adds to the dispatch counters. */
void vc_graph_set_fast(vc_graphcache *c, vc_graph *g, const uint8_t *m, size_t len,
                       uint64_t hash, uint32_t launches, uint32_t fastpath, uint32_t fills);
void vc_graph_replay_counts(const vc_graph *g, uint32_t *launches, uint32_t *fastpath,
                            uint32_t *fills);
/*
 * Capture the steps' launches (no copies) on s into a new graph, marked
 * busy and owning the steps' params blocks (emptied in Ls).  On failure
 * nothing is kept; *stream_bad = 1 when s may still be capturing (discard
 * it).  Context current.
 */
vyre_status vc_graph_capture(vc_graphcache *c, vc_launch *Ls, uint32_t n,
                             const vyre_sequence_step *steps, const uint8_t key[32], CUstream s,
                             int *stream_bad, vc_graph **out, vyre_error *err);
/* Put a captured graph into the cache (it stays busy). */
void vc_graph_insert(vc_graphcache *c, vc_graph *g);
/* The params block step i's kernel reads. */
vc_block vc_graph_params(const vc_graph *g, uint32_t i);
/* Enqueue one replay on s (counted in graph.launches). */
vyre_status vc_graph_launch(vc_graphcache *c, vc_graph *g, CUstream s, vyre_error *err);
/* The caller is done with a busy graph (destroyed if it went stale). */
void vc_graph_release(vc_graphcache *c, vc_graph *g);

#endif /* VYRE_PLUGIN_CUDA_GRAPH_H */
