/* modcache.h -- plans (program -> PTX -> cubin -> CUfunction), shared and refcounted, in an in-memory LRU. */
#ifndef VYRE_PLUGIN_CUDA_MODCACHE_H
#define VYRE_PLUGIN_CUDA_MODCACHE_H

#include <pthread.h>
#include <stdint.h>

#include "context.h"
#include "diskcache.h"
#include "fill.h"
#include "jit.h"
#include "metrics.h"
#include "plugin/codegen/codegen.h"
#include "pools.h"
#include "vyre/vyre_program.h"

/* A program lowered and loaded for this device: opaque, refcounted. */
typedef struct vc_plan vc_plan;

/* What a plan offers its users; immutable once vc_plan_get returned it. */
typedef struct vc_kernel {
  const vyre_program *program;
  cg_options cg;
  cg_kernel_info info;
  CUfunction fn;
  uint8_t key[32];
  uint32_t coop_max_blocks; /* co-resident blocks (grid barrier kernels), 0 otherwise */
  vc_fill fill;             /* a fill program: run as a memset (fill.h) */
} vc_kernel;

/* A program image and the dispatch settings that, with this cache's
 * device, decide its plan: the first-level key (vc_plan_find_bytes). */
typedef struct vc_bytes_key {
  const void *bytes;
  uint64_t size;
  uint32_t workgroup[3]; /* the dispatch's workgroup override, all 0 = the program's */
  uint32_t ulp_budget;
  uint32_t flags;        /* CG_* the plan was asked with (the grid override's included) */
  uint64_t hash;         /* of all the above: vc_bytes_key_init */
} vc_bytes_key;

typedef struct vc_bytes_entry vc_bytes_entry;

/* The cache; fields private to modcache.c. */
typedef struct vc_modcache {
  pthread_mutex_t lock;
  vc_plan *head, *tail; /* most recently used first */
  uint32_t count, capacity;
  uint64_t hits, misses, evictions, compiles;
  uint64_t byte_hits;       /* hits by image bytes: no decode, no checks */
  vc_bytes_entry **buckets; /* image hash -> plans; NULL = no first level */
  uint32_t bucket_mask;
  vc_context *cx;
  vc_diskcache *disk;
  vc_jit_config jit; /* read at init; its optimisation level is part of every plan key */
  /* Where the misses' time went (ns): code generation, the JIT (with the
   * load when the JIT loads too), cubin loads (after a JIT or from disk). */
  atomic_ullong codegen_ns, jit_ns, load_ns;
} vc_modcache;

/* Capacity from VYRE_CUDA_MODULE_CACHE (1..65536, default 64), the JIT's
 * settings from VYRE_CUDA_JIT_OPT_LEVEL and VYRE_CUDA_JIT_DIRECT.  Without
 * memory for the hash buckets every lookup takes the decoding path, which
 * still works.  VYRE_OK, or the failure in err (nothing to destroy then). */
vyre_status vc_modcache_init(vc_modcache *c, vc_context *cx, vc_diskcache *disk,
                             vyre_error *err);
/* Drop every cached plan no one else holds (shutdown).  Context current. */
void vc_modcache_trim(vc_modcache *c);
/* Drop every cached plan (destroy).  Context current unless lost. */
void vc_modcache_destroy(vc_modcache *c);
/* Add cache.module.{hits, byte_hits, misses, entries, capacity, evictions,
 * compiles} and compile.{codegen_us, jit_us, load_us, jit_opt_level}. */
void vc_modcache_add_metrics(vc_modcache *c, vc_metrics *m);

/*
 * The plan for `program` (consumed: owned by the plan or freed) under cg
 * options `cg`: from the memory cache, the disk cache, or codegen + JIT.
 * *out holds one reference (vc_plan_unref).  Context current; thread-safe.
 */
vyre_status vc_plan_get(vc_modcache *c, vyre_program *program, const cg_options *cg,
                        vc_plan **out, vyre_error *err);
/* Fill k (hash included) for an image and the dispatch settings that
 * choose its plan.  k->bytes is borrowed. */
void vc_bytes_key_init(vc_bytes_key *k, const void *bytes, uint64_t size, const uint32_t wg[3],
                       uint32_t ulp_budget, uint32_t flags);
/*
 * The first level: the cached plan bound to exactly these image bytes and
 * settings (vc_plan_bind_bytes), found by hash and confirmed by comparing
 * the bytes, so no decode, validation or device check runs.  1: *out holds
 * one reference (counted as a hit); 0: none.  Thread-safe.
 */
int vc_plan_find_bytes(vc_modcache *c, const vc_bytes_key *k, vc_plan **out);
/* Bind `plan` (which vc_plan_get returned for the image of k, decoded,
 * checked and planned under k's settings) to k, while the plan stays
 * cached; a plan takes two bindings, later ones are ignored.  Thread-safe. */
void vc_plan_bind_bytes(vc_modcache *c, vc_plan *plan, const vc_bytes_key *k);
void vc_plan_ref(vc_plan *plan);
/* Drop a reference (NULL accepted); the last one unloads the module. */
void vc_plan_unref(vc_modcache *c, vc_plan *plan);
/* The plan's kernel (valid while a reference is held). */
const vc_kernel *vc_plan_kernel(const vc_plan *plan);

#endif /* VYRE_PLUGIN_CUDA_MODCACHE_H */
