/* pool.c -- a fixed pool of threads for the C baselines: one generation counter, every thread runs each job once; threads spin briefly before they sleep, as OpenMP runtimes do, so a job starts in microseconds. */
#include <pthread.h>
#include <stdlib.h>

#include "workloads.h"

/* Spins of a waiting thread before it sleeps on the condition variable
 * (a few hundred microseconds). */
#define SPINS 4096

static inline void cpu_relax(void) {
#if defined(__x86_64__) || defined(__i386__)
  __builtin_ia32_pause();
#endif
}

/* generation, pending and quit are read without the mutex while spinning
 * (__atomic); they are written with it held, so a sleeper cannot miss a
 * change. */
struct wl_pool {
  pthread_t *threads;
  uint32_t count; /* threads, the caller's included */
  pthread_mutex_t mu;
  pthread_cond_t go, done;
  uint64_t generation;
  uint32_t pending;
  int quit;
  wl_par_fn fn;
  void *ctx;
};

typedef struct worker_arg {
  wl_pool *pool;
  uint32_t tid;
} worker_arg;

static void *worker(void *p) {
  worker_arg *a = p;
  wl_pool *pool = a->pool;
  uint32_t tid = a->tid;
  free(a);
  uint64_t seen = 0;
  for (;;) {
    for (int i = 0; i < SPINS && __atomic_load_n(&pool->generation, __ATOMIC_ACQUIRE) == seen &&
                    !__atomic_load_n(&pool->quit, __ATOMIC_ACQUIRE);
         i++)
      cpu_relax();
    pthread_mutex_lock(&pool->mu);
    while (!pool->quit && pool->generation == seen) pthread_cond_wait(&pool->go, &pool->mu);
    if (pool->quit) {
      pthread_mutex_unlock(&pool->mu);
      return NULL;
    }
    seen = pool->generation;
    wl_par_fn fn = pool->fn;
    void *ctx = pool->ctx;
    pthread_mutex_unlock(&pool->mu);
    fn(ctx, tid, pool->count);
    pthread_mutex_lock(&pool->mu);
    if (__atomic_sub_fetch(&pool->pending, 1, __ATOMIC_ACQ_REL) == 0) pthread_cond_signal(&pool->done);
    pthread_mutex_unlock(&pool->mu);
  }
}

wl_pool *wl_pool_new(uint32_t threads) {
  wl_pool *pool = calloc(1, sizeof *pool);
  if (!pool) return NULL;
  pool->count = threads ? threads : 1;
  pool->threads = calloc(pool->count, sizeof *pool->threads);
  if (!pool->threads) goto fail_threads;
  if (pthread_mutex_init(&pool->mu, NULL)) goto fail_mu;
  if (pthread_cond_init(&pool->go, NULL)) goto fail_go;
  if (pthread_cond_init(&pool->done, NULL)) goto fail_done;
  for (uint32_t t = 1; t < pool->count; t++) {
    worker_arg *a = malloc(sizeof *a);
    if (a) *a = (worker_arg){pool, t};
    if (!a || pthread_create(&pool->threads[t], NULL, worker, a)) {
      free(a);
      pool->count = t; /* wl_pool_free joins the ones that started */
      wl_pool_free(pool);
      return NULL;
    }
  }
  return pool;
fail_done:
  pthread_cond_destroy(&pool->go);
fail_go:
  pthread_mutex_destroy(&pool->mu);
fail_mu:
  free(pool->threads);
fail_threads:
  free(pool);
  return NULL;
}

void wl_pool_free(wl_pool *pool) {
  if (!pool) return;
  pthread_mutex_lock(&pool->mu);
  __atomic_store_n(&pool->quit, 1, __ATOMIC_RELEASE);
  pthread_cond_broadcast(&pool->go);
  pthread_mutex_unlock(&pool->mu);
  for (uint32_t t = 1; t < pool->count; t++) pthread_join(pool->threads[t], NULL);
  pthread_cond_destroy(&pool->done);
  pthread_cond_destroy(&pool->go);
  pthread_mutex_destroy(&pool->mu);
  free(pool->threads);
  free(pool);
}

uint32_t wl_pool_threads(const wl_pool *pool) { return pool->count; }

void wl_pool_run(wl_pool *pool, wl_par_fn fn, void *ctx) {
  pthread_mutex_lock(&pool->mu);
  pool->fn = fn;
  pool->ctx = ctx;
  __atomic_store_n(&pool->pending, pool->count - 1, __ATOMIC_RELAXED);
  __atomic_store_n(&pool->generation, pool->generation + 1, __ATOMIC_RELEASE);
  pthread_cond_broadcast(&pool->go);
  pthread_mutex_unlock(&pool->mu);
  fn(ctx, 0, pool->count);
  for (int i = 0; i < SPINS && __atomic_load_n(&pool->pending, __ATOMIC_ACQUIRE); i++) cpu_relax();
  pthread_mutex_lock(&pool->mu);
  while (__atomic_load_n(&pool->pending, __ATOMIC_ACQUIRE)) pthread_cond_wait(&pool->done, &pool->mu);
  pthread_mutex_unlock(&pool->mu);
}

void wl_chunk(uint64_t n, uint32_t tid, uint32_t nthreads, uint64_t *lo, uint64_t *hi) {
  *lo = n * tid / nthreads;
  *hi = n * (tid + 1) / nthreads;
}
