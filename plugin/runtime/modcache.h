/* modcache.h -- plans (program -> PTX -> cubin -> CUfunction), shared and refcounted, in an in-memory LRU. */
#ifndef VYRE_PLUGIN_CUDA_MODCACHE_H
#define VYRE_PLUGIN_CUDA_MODCACHE_H

#include <pthread.h>
#include <stdint.h>

#include "context.h"
#include "diskcache.h"
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
} vc_kernel;

/* The cache; fields private to modcache.c. */
typedef struct vc_modcache {
  pthread_mutex_t lock;
  vc_plan *head, *tail; /* most recently used first */
  uint32_t count, capacity;
  uint64_t hits, misses, evictions, compiles;
  vc_context *cx;
  vc_diskcache *disk;
} vc_modcache;

/* Capacity from VYRE_CUDA_MODULE_CACHE (1..65536, default 64). */
void vc_modcache_init(vc_modcache *c, vc_context *cx, vc_diskcache *disk);
/* Drop every cached plan no one else holds (shutdown).  Context current. */
void vc_modcache_trim(vc_modcache *c);
/* Drop every cached plan (destroy).  Context current unless lost. */
void vc_modcache_destroy(vc_modcache *c);
/* Add cache.module.{hits, misses, entries, capacity, evictions, compiles}. */
void vc_modcache_add_metrics(vc_modcache *c, vc_metrics *m);

/*
 * The plan for `program` (consumed: owned by the plan or freed) under cg
 * options `cg`: from the memory cache, the disk cache, or codegen + JIT.
 * *out holds one reference (vc_plan_unref).  Context current; thread-safe.
 */
vyre_status vc_plan_get(vc_modcache *c, vyre_program *program, const cg_options *cg,
                        vc_plan **out, vyre_error *err);
void vc_plan_ref(vc_plan *plan);
/* Drop a reference (NULL accepted); the last one unloads the module. */
void vc_plan_unref(vc_modcache *c, vc_plan *plan);
/* The plan's kernel (valid while a reference is held). */
const vc_kernel *vc_plan_kernel(const vc_plan *plan);

#endif /* VYRE_PLUGIN_CUDA_MODCACHE_H */
