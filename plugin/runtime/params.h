/* params.h -- a plan's kept params block: one device block reused by launches whose params words are identical. */
#ifndef VYRE_PLUGIN_CUDA_PARAMS_H
#define VYRE_PLUGIN_CUDA_PARAMS_H

#include <pthread.h>
#include <stdint.h>

#include "pools.h"

/* Embedded in each plan (modcache.c); fields private to params.c. */
typedef struct vc_kept_params {
  pthread_mutex_t lock;
  vc_block block;
  uint32_t n;
  uint32_t *copy;
} vc_kept_params;

void vc_kept_init(vc_kept_params *k);
/* Give the block back to `devpool` and free the rest. */
void vc_kept_release(vc_kept_params *k, vc_mempool *devpool);
/* When the kept block holds exactly words[0..n): *out = it, return 1.
 * The block stays the plan's (never release it).  Thread-safe. */
int vc_kept_use(vc_kept_params *k, const uint32_t *words, uint32_t n, vc_block *out);
/* Offer a device block whose upload of words[0..n) has completed: taken
 * when none is kept yet (then *blk is emptied, return 1).  Thread-safe. */
int vc_kept_offer(vc_kept_params *k, vc_block *blk, const uint32_t *words, uint32_t n);

#endif /* VYRE_PLUGIN_CUDA_PARAMS_H */
