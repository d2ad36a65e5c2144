/* diskcache.h -- the on-disk cubin cache: one verified file per plan key, device arch and driver version. */
#ifndef VYRE_PLUGIN_CUDA_DISKCACHE_H
#define VYRE_PLUGIN_CUDA_DISKCACHE_H

#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>

#include "metrics.h"
#include "plugin/codegen/codegen.h"

/* Fields private to diskcache.c. */
typedef struct vc_diskcache {
  int enabled;
  char dir[1024];
  uint32_t sm_major, sm_minor;
  int driver_version;
  atomic_ullong hits, misses, writes, corrupt, write_errors;
} vc_diskcache;

/* Read VYRE_CUDA_DISK_CACHE and the cache directory (VYRE_CACHE_DIR,
 * XDG_CACHE_HOME, HOME); entries are keyed for this device arch and
 * driver version.  The directory is made on the first write. */
void vc_diskcache_init(vc_diskcache *d, uint32_t sm_major, uint32_t sm_minor, int driver_version);
/* 1 when the cache is on. */
int vc_diskcache_enabled(const vc_diskcache *d);
/*
 * The entry for a plan key.  1: *payload (malloc'd, the caller frees) is
 * *size verified bytes: cg_kernel_info then the cubin; 0: absent; -1:
 * present but corrupt (removed, counted).  Thread-safe; other processes
 * may write concurrently.
 */
int vc_diskcache_read(vc_diskcache *d, const uint8_t plan_key[32], uint8_t **payload,
                      uint64_t *size);
/* Store info + cubin under the plan key (atomically: temp file and
 * rename).  A failure is counted and logged, never an error. */
void vc_diskcache_write(vc_diskcache *d, const uint8_t plan_key[32], const cg_kernel_info *info,
                        const void *cubin, size_t cubin_size);
/* Outcomes the caller decides: an entry used, a verified entry the
 * driver refused (counted as corrupt), a build without an entry. */
void vc_diskcache_count_hit(vc_diskcache *d);
void vc_diskcache_count_refused(vc_diskcache *d);
void vc_diskcache_count_miss(vc_diskcache *d);
/* Add cache.disk.{enabled, hits, misses, writes, corrupt, write_errors}. */
void vc_diskcache_add_metrics(vc_diskcache *d, vc_metrics *m);

#endif /* VYRE_PLUGIN_CUDA_DISKCACHE_H */
