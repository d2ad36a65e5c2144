/* crew.h -- the copy threads of the staging ring: a transfer's host memcpys cut into granules that the workers and the transfer's own thread claim in order. */
#ifndef VYRE_PLUGIN_CUDA_CREW_H
#define VYRE_PLUGIN_CUDA_CREW_H

#include <pthread.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>

#define VC_STAGING_MAX_THREADS 64

/* One host-side memcpy of a transfer (a granule of a chunk's piece):
 * whoever claims it copies it. */
typedef struct vc_granule {
  uint8_t *dst;
  const uint8_t *src;
  size_t len;
  uint32_t slot; /* the chunk use it belongs to */
} vc_granule;

/* The copy threads (fields private to staging.c).  A transfer publishes
 * its granules; the workers and the transfer's own thread claim them in
 * order with one compare-and-swap each, up to `limit` (the granules whose
 * chunk is ready), so no thread waits for another's part of a chunk and
 * a slow or preempted thread holds up one granule, not a chunk. */
typedef struct vc_copy_crew {
  int init;
  pthread_mutex_t lock;
  pthread_cond_t go;
  pthread_t tid[VC_STAGING_MAX_THREADS];
  uint32_t started;         /* workers running (threads - 1 once started) */
  _Atomic uint64_t next;    /* transfer generation << 32 | next granule to claim */
  _Atomic uint32_t limit;   /* granules below it may be copied now */
  _Atomic uint32_t count;   /* granules of the transfer */
  _Atomic uint32_t inflight; /* claims being tried or copied (vc_crew_cancel) */
  _Atomic int stop;
  _Atomic uint64_t worker_copies; /* granules the workers copied (metric) */
  uint32_t sleepers;        /* workers blocked on `go` (under lock) */
  const vc_granule *granules; /* the transfer's; read only after a claim */
  _Atomic uint32_t *left;     /* per chunk use: granules not yet copied */
} vc_copy_crew;

static inline void vc_cpu_relax(void) {
#if defined(__x86_64__) || defined(__i386__)
  __builtin_ia32_pause();
#elif defined(__aarch64__)
  __asm__ __volatile__("yield");
#endif
}

/* Start up to threads - 1 workers (they block every signal); fewer if
 * the system refuses (the copies then use fewer threads; nothing fails).
 * c zeroed before. */
void vc_crew_start(vc_copy_crew *c, uint32_t threads);
/* Stop and join the workers; accepts a crew never started. */
void vc_crew_stop(vc_copy_crew *c);
/* Publish a transfer's `count` granules and their per-part counters
 * `left` (none claimable until c->limit grows: the caller raises it with
 * a release store as parts become ready); returns the transfer's
 * generation.  workers = 0: the workers leave it alone (the caller
 * copies in order).  One transfer at a time (the caller's lock). */
uint64_t vc_crew_post(vc_copy_crew *c, const vc_granule *g, uint32_t count,
                      _Atomic uint32_t *left, int workers);
/* Claim the next granule of transfer `gen`: 1 and *out when one was
 * claimed, 0 when the next one is not ready yet, -1 when none is left
 * (or the transfer is over).  Thread-safe. */
int vc_crew_claim(vc_copy_crew *c, uint64_t gen, uint32_t *out);
/* Copy granule i, then count it in its part's `left` (release): the
 * transfer's own thread, copying in order without claims. */
void vc_crew_copy_one(vc_copy_crew *c, uint32_t i);
/* The same for a granule vc_crew_claim handed out (ends its claim). */
void vc_crew_copy_claimed(vc_copy_crew *c, uint32_t i);
/* End transfer `gen` early: nothing more is claimed, and the copies
 * already claimed are done when it returns. */
void vc_crew_cancel(vc_copy_crew *c, uint64_t gen);

#endif /* VYRE_PLUGIN_CUDA_CREW_H */
