/* crew.c -- the copy threads of the staging ring: granules of host memcpy claimed in order by the workers and the transfer's own thread (crew.h). */
#include "crew.h"

#include <signal.h>
#include <string.h>

#include "vyre/vyre_support.h"
#include "util.h"

#if defined(__SSE2__)
#include <emmintrin.h>
#endif

/* Granules of at least this many bytes are copied with streaming stores. */
#define STREAM_MIN (64u << 10)
/* Between two chunks of a transfer the crew spins this many times
 * before it sleeps: the next chunk usually comes within microseconds,
 * and waking a sleeping thread costs more than that. */
#define SPIN_ROUNDS 20000u

/* memcpy of a large block with streaming stores: the destination (a
 * staging chunk the device reads next, or host memory far larger than
 * the caches) is not read first and does not evict the caches.  On an
 * H100 host, streaming into pinned memory beat memcpy from 8 threads up
 * (bench/xfer_probe, 1 GiB: 30.7 vs 23.5 GB/s at 8 threads, 41.0 vs 33.0
 * at 16); out of it the probe was mixed (1 GiB: 30.3 vs 38.2 GB/s at 16
 * threads, 256 MiB: 29.2 vs 24.3), and the ring's downloads with it
 * measured 50.6 GB/s of 53.8 (docs/cuda-runtime.md). */
static void copy_stream(void *dst, const void *src, size_t n) {
#if defined(__SSE2__)
  uint8_t *d = dst;
  const uint8_t *s = src;
  size_t head = (16u - ((uintptr_t)d & 15u)) & 15u;
  if (head > n) head = n;
  memcpy(d, s, head);
  d += head;
  s += head;
  n -= head;
  for (size_t i = n / 64u; i; i--) {
    __m128i a = _mm_loadu_si128((const __m128i *)(const void *)s);
    __m128i b = _mm_loadu_si128((const __m128i *)(const void *)(s + 16));
    __m128i c = _mm_loadu_si128((const __m128i *)(const void *)(s + 32));
    __m128i e = _mm_loadu_si128((const __m128i *)(const void *)(s + 48));
    _mm_stream_si128((__m128i *)(void *)d, a);
    _mm_stream_si128((__m128i *)(void *)(d + 16), b);
    _mm_stream_si128((__m128i *)(void *)(d + 32), c);
    _mm_stream_si128((__m128i *)(void *)(d + 48), e);
    s += 64;
    d += 64;
  }
  /* Streaming stores are weakly ordered: complete them before the part
   * is reported done (and before the device may read the chunk). */
  _mm_sfence();
  memcpy(d, s, n % 64u);
#else
  memcpy(dst, src, n);
#endif
}

/* Claim the next granule of transfer `gen`: 1 and *out when one was
 * claimed (counted in `inflight` until vc_crew_copy_claimed), 0 when the
 * next one's chunk is not ready yet, -1 when the transfer has no granule
 * left to claim (or is over). */
int vc_crew_claim(vc_copy_crew *c, uint64_t gen, uint32_t *out) {
  uint64_t v = atomic_load_explicit(&c->next, memory_order_acquire);
  for (;;) {
    if (v >> 32 != gen) return -1;
    uint32_t i = (uint32_t)v;
    if (i >= atomic_load_explicit(&c->count, memory_order_relaxed)) return -1;
    if (i >= atomic_load_explicit(&c->limit, memory_order_acquire)) return 0;
    /* In flight before the claim can succeed: vc_crew_cancel, once no
     * claim can succeed any more, waits for `inflight` to drain. */
    atomic_fetch_add_explicit(&c->inflight, 1, memory_order_seq_cst);
    /* Acquire: the granule table of the transfer the claim belongs to. */
    if (atomic_compare_exchange_strong_explicit(&c->next, &v, v + 1, memory_order_seq_cst,
                                                memory_order_acquire)) {
      *out = i;
      return 1;
    }
    atomic_fetch_sub_explicit(&c->inflight, 1, memory_order_release);
  }
}

void vc_crew_copy_one(vc_copy_crew *c, uint32_t i) {
  const vc_granule *g = &c->granules[i];
  _Atomic uint32_t *left = &c->left[g->slot];
  if (g->len >= STREAM_MIN) copy_stream(g->dst, g->src, g->len);
  else memcpy(g->dst, g->src, g->len);
  /* Release, and the last touch of the transfer's tables: the thread
   * that sees the part complete may free them. */
  atomic_fetch_sub_explicit(left, 1, memory_order_release);
}

void vc_crew_copy_claimed(vc_copy_crew *c, uint32_t i) {
  vc_crew_copy_one(c, i);
  atomic_fetch_sub_explicit(&c->inflight, 1, memory_order_release);
}

static void *crew_main(void *arg) {
  vc_copy_crew *c = arg;
  /* Workers start before the first transfer is posted, which may be
   * before this thread runs: count from generation 0, not from now. */
  uint64_t seen = 0;
  for (;;) {
    uint64_t gen = atomic_load_explicit(&c->next, memory_order_acquire) >> 32;
    for (uint32_t i = 0; gen == seen && i < SPIN_ROUNDS && !atomic_load(&c->stop); i++) {
      vc_cpu_relax();
      gen = atomic_load_explicit(&c->next, memory_order_acquire) >> 32;
    }
    if (gen == seen) {
      pthread_mutex_lock(&c->lock);
      c->sleepers++;
      while ((gen = atomic_load(&c->next) >> 32) == seen && !atomic_load(&c->stop))
        pthread_cond_wait(&c->go, &c->lock);
      c->sleepers--;
      pthread_mutex_unlock(&c->lock);
    }
    if (atomic_load(&c->stop)) break;
    seen = gen;
    uint32_t i;
    int r;
    while ((r = vc_crew_claim(c, gen, &i)) >= 0) {
      if (r) {
        vc_crew_copy_claimed(c, i);
        atomic_fetch_add_explicit(&c->worker_copies, 1, memory_order_relaxed);
      } else {
        vc_cpu_relax();
      }
    }
  }
  return NULL;
}

/* Start up to threads - 1 workers; fewer if the system refuses (the
 * copies then use fewer threads; nothing fails). */
void vc_crew_start(vc_copy_crew *c, uint32_t threads) {
  if (pthread_mutex_init(&c->lock, NULL)) return;
  if (pthread_cond_init(&c->go, NULL)) goto fail_go;
  c->init = 1;
  /* Workers take no signals: the host's handlers run on its own threads. */
  sigset_t all, old;
  sigfillset(&all);
  pthread_sigmask(SIG_SETMASK, &all, &old);
  for (uint32_t i = 1; i < threads; i++) {
    if (pthread_create(&c->tid[i], NULL, crew_main, c)) {
      vc_log("staging: started %u of %u copy threads; the others are refused by the system",
             i, threads);
      break;
    }
    c->started = i;
  }
  pthread_sigmask(SIG_SETMASK, &old, NULL);
  return;
fail_go:
  pthread_mutex_destroy(&c->lock);
}

void vc_crew_stop(vc_copy_crew *c) {
  if (!c->init) return;
  pthread_mutex_lock(&c->lock);
  atomic_store(&c->stop, 1);
  pthread_cond_broadcast(&c->go);
  pthread_mutex_unlock(&c->lock);
  for (uint32_t i = 1; i <= c->started; i++) pthread_join(c->tid[i], NULL);
  pthread_cond_destroy(&c->go);
  pthread_mutex_destroy(&c->lock);
  c->init = 0;
  c->started = 0;
}

/* Publish a transfer's granules (none claimable until `limit` grows);
 * returns its generation.  The ring lock is held: one transfer at a
 * time. */
uint64_t vc_crew_post(vc_copy_crew *c, const vc_granule *g, uint32_t count,
                          _Atomic uint32_t *left, int workers) {
  uint64_t gen = (atomic_load_explicit(&c->next, memory_order_relaxed) >> 32) + 1;
  /* Generation 0 is the workers' "none seen yet". */
  if ((uint32_t)gen == 0) gen++;
  gen &= 0xffffffffu;
  c->granules = g;
  c->left = left;
  atomic_store_explicit(&c->count, count, memory_order_relaxed);
  atomic_store_explicit(&c->limit, 0, memory_order_relaxed);
  /* Release: the table and the counters above come with the generation.
   * A transfer that must copy in order (workers = 0) is posted to the
   * workers as already claimed: its own thread copies alone. */
  atomic_store_explicit(&c->next, gen << 32 | (workers ? 0u : count), memory_order_release);
  if (workers && c->init) {
    pthread_mutex_lock(&c->lock);
    if (c->sleepers) pthread_cond_broadcast(&c->go);
    pthread_mutex_unlock(&c->lock);
  }
  return gen;
}

/* End a transfer early: nothing more is claimed, and the copies already
 * claimed are finished before this returns (they read or write the
 * caller's memory). */
void vc_crew_cancel(vc_copy_crew *c, uint64_t gen) {
  uint32_t count = atomic_load_explicit(&c->count, memory_order_relaxed);
  atomic_store_explicit(&c->next, gen << 32 | count, memory_order_seq_cst);
  while (atomic_load_explicit(&c->inflight, memory_order_seq_cst)) vc_cpu_relax();
}
