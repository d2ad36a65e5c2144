/* params.c -- kept params blocks: launches with the same words skip the host-to-device copy (params.h). */
#include "params.h"

#include <stdlib.h>
#include <string.h>

void vc_kept_init(vc_kept_params *k) {
  memset(k, 0, sizeof *k);
  pthread_mutex_init(&k->lock, NULL);
}

void vc_kept_release(vc_kept_params *k, vc_mempool *devpool) {
  vc_mempool_release(devpool, &k->block);
  free(k->copy);
  k->copy = NULL;
  pthread_mutex_destroy(&k->lock);
}

int vc_kept_use(vc_kept_params *k, const uint32_t *words, uint32_t n, vc_block *out) {
  int hit = 0;
  pthread_mutex_lock(&k->lock);
  if (k->block.ptr && k->n == n && memcmp(k->copy, words, (size_t)n * 4u) == 0) {
    *out = k->block;
    hit = 1;
  }
  pthread_mutex_unlock(&k->lock);
  return hit;
}

int vc_kept_offer(vc_kept_params *k, vc_block *blk, const uint32_t *words, uint32_t n) {
  size_t bytes = (size_t)n * 4u;
  uint32_t *copy = malloc(bytes);
  if (!copy) return 0;
  memcpy(copy, words, bytes);
  int taken = 0;
  pthread_mutex_lock(&k->lock);
  if (!k->block.ptr) {
    k->block = *blk;
    k->copy = copy;
    k->n = n;
    copy = NULL;
    blk->ptr = 0;
    blk->size = 0;
    taken = 1;
  }
  pthread_mutex_unlock(&k->lock);
  free(copy);
  return taken;
}
