/* staging.c -- the staging ring: pinned chunks kept by the instance, filled and drained by a small crew of copy threads while the device copies the neighbouring chunks. */
#include "staging.h"

#include <signal.h>
#include <stdlib.h>
#include <string.h>

#include "util.h"

#if defined(__SSE2__)
#include <emmintrin.h>
#endif

/* A chunk's pieces are copied in granules of about a piece over the
 * copy threads, within these bounds: one claim costs a compare-and-swap,
 * and a granule is what one slow thread can hold back. */
#define MIN_GRANULE (64u << 10)
#define MAX_GRANULE (1u << 20)
/* Granules of at least this many bytes are copied with streaming stores. */
#define STREAM_MIN (64u << 10)
/* Transfers above this many bytes (or one chunk, if smaller) take the
 * ring; each is cut into pieces of about a tenth of it, at least
 * MIN_PIECE and at most one chunk, so that even a transfer of a few MiB
 * overlaps its host copies with the device's (12.6 MB dispatches on an
 * H100: 2.05 ms through one pinned block, 0.60 ms through the ring).
 * Below the threshold a pinned pool block and one thread's memcpy serve
 * (no events, no threads); that memcpy runs at 8-12 GB/s, so from 1 MiB
 * up the copy threads win (the bus moves 1 MiB in about 20 us). */
#define RING_THRESHOLD (1u << 20)
#define MIN_PIECE (512u << 10)
/* Between two chunks of a transfer the crew spins this many times
 * before it sleeps: the next chunk usually comes within microseconds,
 * and waking a sleeping thread costs more than that. */
#define SPIN_ROUNDS 20000u

static inline void cpu_relax(void) {
#if defined(__x86_64__) || defined(__i386__)
  __builtin_ia32_pause();
#elif defined(__aarch64__)
  __asm__ __volatile__("yield");
#endif
}

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

/* ------------------------------------------------------------------ */
/* The copy crew                                                       */
/* ------------------------------------------------------------------ */
/* Claim the next granule of transfer `gen`: 1 and *out when one was
 * claimed, 0 when the next one's chunk is not ready yet, -1 when the
 * transfer has no granule left to claim (or is over). */
static int crew_claim(vc_copy_crew *c, uint64_t gen, uint32_t *out) {
  uint64_t v = atomic_load_explicit(&c->next, memory_order_acquire);
  for (;;) {
    if (v >> 32 != gen) return -1;
    uint32_t i = (uint32_t)v;
    if (i >= atomic_load_explicit(&c->count, memory_order_relaxed)) return -1;
    if (i >= atomic_load_explicit(&c->limit, memory_order_acquire)) return 0;
    /* Acquire: the granule table of the transfer the claim belongs to. */
    if (atomic_compare_exchange_weak_explicit(&c->next, &v, v + 1, memory_order_acq_rel,
                                              memory_order_acquire)) {
      *out = i;
      return 1;
    }
  }
}

/* Copy granule i and count it (its chunk use's `left` last: the thread
 * that waits for it then sees the bytes). */
static void crew_copy_one(vc_copy_crew *c, uint32_t i) {
  const vc_granule *g = &c->granules[i];
  if (g->len >= STREAM_MIN) copy_stream(g->dst, g->src, g->len);
  else memcpy(g->dst, g->src, g->len);
  atomic_fetch_add_explicit(&c->copied, 1, memory_order_release);
  atomic_fetch_sub_explicit(&c->left[g->slot], 1, memory_order_release);
}

static void *crew_main(void *arg) {
  vc_copy_crew *c = arg;
  /* Workers start before the first transfer is posted, which may be
   * before this thread runs: count from generation 0, not from now. */
  uint64_t seen = 0;
  for (;;) {
    uint64_t gen = atomic_load_explicit(&c->next, memory_order_acquire) >> 32;
    for (uint32_t i = 0; gen == seen && i < SPIN_ROUNDS && !atomic_load(&c->stop); i++) {
      cpu_relax();
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
    while ((r = crew_claim(c, gen, &i)) >= 0) {
      if (r) {
        crew_copy_one(c, i);
        atomic_fetch_add_explicit(&c->worker_copies, 1, memory_order_relaxed);
      } else {
        cpu_relax();
      }
    }
  }
  return NULL;
}

/* Start up to threads - 1 workers; fewer if the system refuses (the
 * copies then use fewer threads; nothing fails). */
static void crew_start(vc_copy_crew *c, uint32_t threads) {
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

static void crew_stop(vc_copy_crew *c) {
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
static uint64_t crew_post(vc_copy_crew *c, const vc_granule *g, uint32_t count,
                          _Atomic uint32_t *left, int workers) {
  uint64_t gen = (atomic_load_explicit(&c->next, memory_order_relaxed) >> 32) + 1;
  /* Generation 0 is the workers' "none seen yet". */
  if ((uint32_t)gen == 0) gen++;
  gen &= 0xffffffffu;
  c->granules = g;
  c->left = left;
  atomic_store_explicit(&c->count, count, memory_order_relaxed);
  atomic_store_explicit(&c->copied, 0, memory_order_relaxed);
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
static void crew_cancel(vc_copy_crew *c, uint64_t gen) {
  uint32_t count = atomic_load_explicit(&c->count, memory_order_relaxed);
  uint64_t old = atomic_exchange_explicit(&c->next, gen << 32 | count, memory_order_acq_rel);
  uint32_t claimed = (uint32_t)old < count ? (uint32_t)old : count;
  while (atomic_load_explicit(&c->copied, memory_order_acquire) < claimed) cpu_relax();
}

/* ------------------------------------------------------------------ */
/* The ring                                                            */
/* ------------------------------------------------------------------ */
vyre_status vc_staging_init(vc_staging *s, vc_context *cx, vc_streampool *streams,
                            vc_mempool *hostpool, uint64_t chunk, uint32_t nchunks,
                            uint32_t threads, vyre_error *err) {
  memset(s, 0, sizeof *s);
  vyre_status st = vc_mutex_init(&s->lock, "cuda create", "staging ring", err);
  if (st != VYRE_OK) return st;
  s->cx = cx;
  s->streams = streams;
  s->hostpool = hostpool;
  s->chunk = chunk;
  s->nchunks = nchunks < 2 ? 2 : nchunks > VC_STAGING_MAX_CHUNKS ? VC_STAGING_MAX_CHUNKS : nchunks;
  s->threads = threads < 1 ? 1 : threads > VC_STAGING_MAX_THREADS ? VC_STAGING_MAX_THREADS : threads;
  return VYRE_OK;
}

static void ring_free(vc_staging *s) {
  vc_context *cx = s->cx;
  for (uint32_t k = 0; k < s->nchunks; k++) {
    /* An upload returns with its last copies in flight: they must be
     * done before the memory goes. */
    if (s->busy[k] && vc_cleanup_ok(cx)) {
      CUresult r = VC_CU(cx, cuEventSynchronize, (s->ev[k]));
      if (r != CUDA_SUCCESS) vc_cu_note(cx, r, "cuEventSynchronize");
    }
    vc_event_release(s->streams, 0, s->ev[k]);
    s->ev[k] = NULL;
    s->buf[k] = NULL;
    s->busy[k] = 0;
  }
  if (s->base && vc_cleanup_ok(cx)) {
    CUresult r = VC_CU(cx, cuMemFreeHost, (s->base));
    if (r != CUDA_SUCCESS) vc_cu_note(cx, r, "cuMemFreeHost");
  }
  s->base = NULL;
  __atomic_store_n(&s->ready, 0, __ATOMIC_RELEASE);
}

void vc_staging_destroy(vc_staging *s) {
  if (!s->cx) return;
  crew_stop(&s->crew);
  if (s->ready) ring_free(s);
  pthread_mutex_destroy(&s->lock);
  s->cx = NULL;
}

uint64_t vc_staging_chunk(const vc_staging *s) { return s->chunk; }

uint64_t vc_staging_threshold(const vc_staging *s) {
  return s->chunk < RING_THRESHOLD ? s->chunk : RING_THRESHOLD;
}

void vc_staging_trim(vc_staging *s) {
  pthread_mutex_lock(&s->lock);
  if (s->ready) ring_free(s);
  pthread_mutex_unlock(&s->lock);
}

/* The chunks, their events and the crew, the first time (ring lock held,
 * context current).  On failure nothing is kept: a later transfer tries
 * again. */
static vyre_status ring_ready(vc_staging *s, vyre_error *err) {
  if (s->ready) return VYRE_OK;
  vc_context *cx = s->cx;
  uint64_t bytes = s->chunk * s->nchunks;
  if (bytes / s->nchunks != s->chunk || bytes > SIZE_MAX)
    return vyre_error_set(err, VYRE_LIMIT, 0,
                          "staging: %u chunks of %llu bytes overflow this host's size_t. Fix: "
                          "lower VYRE_CUDA_STAGING_CHUNK",
                          s->nchunks, (unsigned long long)s->chunk);
  CUresult r = VC_CU(cx, cuMemHostAlloc, (&s->base, (size_t)bytes, CU_MEMHOSTALLOC_PORTABLE));
  if (r == CUDA_ERROR_OUT_OF_MEMORY) {
    /* Pinned blocks the pool keeps cached count against the same limit. */
    vc_mempool_trim(s->hostpool);
    r = VC_CU(cx, cuMemHostAlloc, (&s->base, (size_t)bytes, CU_MEMHOSTALLOC_PORTABLE));
  }
  if (r != CUDA_SUCCESS) {
    s->base = NULL;
    vyre_status st = vc_cu_fail(cx, err, r, "cuMemHostAlloc", NULL,
                                "free pinned host memory, or lower VYRE_CUDA_STAGING_CHUNK or "
                                "VYRE_CUDA_STAGING_CHUNKS");
    vyre_error_prefix(err, "staging ring of %u x %llu bytes", s->nchunks,
                      (unsigned long long)s->chunk);
    return st;
  }
  for (uint32_t k = 0; k < s->nchunks; k++) {
    s->buf[k] = (uint8_t *)s->base + (size_t)k * (size_t)s->chunk;
    vyre_status st = vc_event_acquire(s->streams, 0, &s->ev[k], err);
    if (st != VYRE_OK) {
      ring_free(s);
      return st;
    }
  }
  if (!s->crew.init && s->threads > 1) crew_start(&s->crew, s->threads);
  s->cursor = 0;
  __atomic_store_n(&s->ready, 1, __ATOMIC_RELEASE);
  return VYRE_OK;
}

/* Part of a segment in one use of a chunk. */
typedef struct piece {
  uint8_t *host;
  CUdeviceptr dev;
  uint64_t off, len; /* where in the chunk */
} piece;

/* One use of a chunk by a transfer: pieces [first, end), granules
 * before gend (from the previous slot's gend). */
typedef struct slot {
  uint32_t k, first, end, gend;
} slot;

/* One transfer's plan and its progress. */
typedef struct walk {
  vc_staging *s;
  CUstream stream;
  int up;
  int serial;   /* downloads to overlapping host ranges: copied in order, on one thread */
  uint64_t gen; /* the crew's generation of this transfer */
  piece *pieces;
  slot *slots;
  vc_granule *granules;
  _Atomic uint32_t *left; /* per slot */
  uint32_t npieces, nslots, ngranules;
  uint32_t mine; /* serial: the next granule */
  int enqueued;
} walk;

/* Cut the segments into chunk uses of at most cap bytes, starting at the
 * ring's cursor, and each piece into granules of at most gran bytes. */
static void plan(walk *w, const vc_segment *segs, uint32_t count, uint64_t cap, uint64_t gran) {
  vc_staging *s = w->s;
  uint32_t k = s->cursor;
  uint64_t fill = 0;
  slot *sl = NULL;
  for (uint32_t i = 0; i < count; i++) {
    for (uint64_t done = 0; done < segs[i].size;) {
      if (!sl || fill == cap) {
        if (sl) k = (k + 1) % s->nchunks;
        sl = &w->slots[w->nslots++];
        sl->k = k;
        sl->first = sl->end = w->npieces;
        atomic_init(&w->left[w->nslots - 1], 0);
        fill = 0;
      }
      uint64_t len = segs[i].size - done;
      if (len > cap - fill) len = cap - fill;
      piece *p = &w->pieces[w->npieces++];
      p->host = (uint8_t *)segs[i].host + done;
      p->dev = segs[i].dev + done;
      p->off = fill;
      p->len = len;
      sl->end = w->npieces;
      uint8_t *stage = (uint8_t *)s->buf[k] + fill;
      for (uint64_t o = 0; o < len; o += gran) {
        vc_granule *g = &w->granules[w->ngranules++];
        g->len = (size_t)(len - o < gran ? len - o : gran);
        g->dst = w->up ? stage + o : p->host + o;
        g->src = w->up ? p->host + o : stage + o;
        g->slot = w->nslots - 1;
        atomic_fetch_add_explicit(&w->left[w->nslots - 1], 1, memory_order_relaxed);
      }
      sl->gend = w->ngranules;
      fill += len;
      done += len;
    }
  }
  s->cursor = (k + 1) % s->nchunks;
}

/* Enqueue slot j's device copies, then its chunk's event. */
static vyre_status send(walk *w, uint32_t j, vyre_error *err) {
  vc_staging *s = w->s;
  vc_context *cx = s->cx;
  const slot *sl = &w->slots[j];
  uint8_t *base = s->buf[sl->k];
  CUresult r;
  if (!w->up && s->busy[sl->k]) {
    /* A previous transfer's copy (maybe on another stream) may still
     * read the chunk: ours waits for it on the device. */
    r = VC_CU(cx, cuStreamWaitEvent, (w->stream, s->ev[sl->k], 0));
    if (r != CUDA_SUCCESS) return vc_cu_fail(cx, err, r, "cuStreamWaitEvent", NULL, NULL);
  }
  for (uint32_t i = sl->first; i < sl->end; i++) {
    const piece *p = &w->pieces[i];
    if (w->up) {
      r = VC_CU(cx, cuMemcpyHtoDAsync, (p->dev, base + p->off, (size_t)p->len, w->stream));
      if (r != CUDA_SUCCESS) return vc_cu_fail(cx, err, r, "cuMemcpyHtoDAsync", NULL, NULL);
    } else {
      r = VC_CU(cx, cuMemcpyDtoHAsync, (base + p->off, p->dev, (size_t)p->len, w->stream));
      if (r != CUDA_SUCCESS) return vc_cu_fail(cx, err, r, "cuMemcpyDtoHAsync", NULL, NULL);
    }
    w->enqueued = 1;
  }
  r = VC_CU(cx, cuEventRecord, (s->ev[sl->k], w->stream));
  if (r != CUDA_SUCCESS) return vc_cu_fail(cx, err, r, "cuEventRecord", NULL, NULL);
  s->busy[sl->k] = 1;
  atomic_fetch_add(&s->chunk_copies, 1);
  return VYRE_OK;
}

/* Is chunk k's last device copy done?  Blocks only when `block` (the
 * transfer's thread has nothing else to do); 0 and CUDA_ERROR_NOT_READY
 * when it is still running. */
static CUresult chunk_wait(vc_staging *s, uint32_t k, int block) {
  if (!s->busy[k]) return CUDA_SUCCESS;
  CUresult r = block ? VC_CU(s->cx, cuEventSynchronize, (s->ev[k]))
                     : VC_CU(s->cx, cuEventQuery, (s->ev[k]));
  if (r == CUDA_SUCCESS) s->busy[k] = 0;
  return r;
}

static vyre_status wait_fail(vc_staging *s, CUresult r, int block, vyre_error *err) {
  return vc_cu_fail(s->cx, err, r, block ? "cuEventSynchronize" : "cuEventQuery", NULL, NULL);
}

/* The transfer's thread copies one granule when one is ready: 1 if it
 * did. */
static int help(walk *w) {
  vc_copy_crew *c = &w->s->crew;
  uint32_t i;
  if (w->serial) {
    if (w->mine >= atomic_load_explicit(&c->limit, memory_order_relaxed)) return 0;
    crew_copy_one(c, w->mine++);
    return 1;
  }
  if (crew_claim(c, w->gen, &i) != 1) return 0;
  crew_copy_one(c, i);
  return 1;
}

static int slot_copied(const walk *w, uint32_t j) {
  return atomic_load_explicit(&w->left[j], memory_order_acquire) == 0;
}

/* Upload: open slot a to the copiers once its chunk's previous copy is
 * done (up to a ring ahead of the device), send slot e once its
 * granules are copied; help copy in between. */
static vyre_status run_upload(walk *w, vyre_error *err) {
  vc_staging *s = w->s;
  uint32_t a = 0, e = 0;
  while (e < w->nslots) {
    int moved = 0;
    while (a < w->nslots && a < e + s->nchunks) {
      int block = a == e;
      CUresult r = chunk_wait(s, w->slots[a].k, block);
      if (r == CUDA_ERROR_NOT_READY && !block) break;
      if (r != CUDA_SUCCESS) return wait_fail(s, r, block, err);
      atomic_store_explicit(&s->crew.limit, w->slots[a].gend, memory_order_release);
      a++;
      moved = 1;
    }
    if (e < a && slot_copied(w, e)) {
      vyre_status st = send(w, e, err);
      if (st != VYRE_OK) return st;
      e++;
      continue;
    }
    if (!moved && !help(w)) cpu_relax();
  }
  return VYRE_OK;
}

/* Download: send slot e into its chunk once the chunk's previous piece
 * is copied out (the device fills up to a ring ahead), open slot r to
 * the copiers once its device copy is done, and help copy out. */
static vyre_status run_download(walk *w, vyre_error *err) {
  vc_staging *s = w->s;
  uint32_t e = 0, r = 0, d = 0;
  while (d < w->nslots) {
    if (e < w->nslots && e < d + s->nchunks) {
      vyre_status st = send(w, e, err);
      if (st != VYRE_OK) return st;
      e++;
      continue;
    }
    if (r < e) {
      /* Every opened slot copied out: nothing to do but wait. */
      int block = r == d;
      CUresult q = chunk_wait(s, w->slots[r].k, block);
      if (q == CUDA_SUCCESS) {
        atomic_store_explicit(&s->crew.limit, w->slots[r].gend, memory_order_release);
        r++;
        continue;
      }
      if (q != CUDA_ERROR_NOT_READY || block) return wait_fail(s, q, block, err);
    }
    while (d < r && slot_copied(w, d)) d++;
    if (d < w->nslots && !help(w)) cpu_relax();
  }
  return VYRE_OK;
}

/* Host ranges of a download that overlap (the later must win, as on one
 * thread); more than 64 ranges are not compared and count as
 * overlapping. */
static int overlapping(const vc_segment *segs, uint32_t count) {
  if (count > 64) return 1;
  for (uint32_t i = 0; i < count; i++)
    for (uint32_t j = i + 1; j < count; j++) {
      uintptr_t a = (uintptr_t)segs[i].host, b = (uintptr_t)segs[j].host;
      if (segs[i].size && segs[j].size && a < b + segs[j].size && b < a + segs[i].size)
        return 1;
    }
  return 0;
}

/* The transfer's tables, in one block; the piece count bound is the
 * caller's. */
static vyre_status walk_alloc(walk *w, uint64_t npieces, uint64_t ngranules, vyre_error *err) {
  uint64_t bytes = npieces * (sizeof(piece) + sizeof(slot) + sizeof(_Atomic uint32_t)) +
                   ngranules * sizeof(vc_granule) + 64u;
  uint8_t *m = npieces <= UINT32_MAX / 2 && ngranules <= UINT32_MAX / 2 && bytes <= SIZE_MAX
                   ? malloc((size_t)bytes)
                   : NULL;
  if (!m)
    return vyre_error_set(err, VYRE_OUT_OF_MEMORY, 0,
                          "transfer: no host memory for %llu staging records. Fix: transfer "
                          "fewer ranges at once",
                          (unsigned long long)(npieces + ngranules));
  w->granules = (vc_granule *)(void *)m;
  w->pieces = (piece *)(void *)(m + ngranules * sizeof(vc_granule));
  w->slots = (slot *)(void *)((uint8_t *)w->pieces + npieces * sizeof(piece));
  w->left = (_Atomic uint32_t *)(void *)((uint8_t *)w->slots + npieces * sizeof(slot));
  return VYRE_OK;
}

static vyre_status transfer(vc_staging *s, CUstream stream, const vc_segment *segs,
                            uint32_t count, int up, uint64_t piece_bytes, vyre_error *err) {
  uint64_t total = 0, npieces = 0;
  for (uint32_t i = 0; i < count; i++)
    if (!vc_add_u64(total, segs[i].size, &total))
      return vyre_error_set(err, VYRE_LIMIT, 0,
                            "transfer: total size overflows 64 bits. Fix: split the transfer");
  if (!total) return VYRE_OK;
  walk w;
  memset(&w, 0, sizeof w);
  /* Pieces of about a tenth of the transfer, 4 KiB aligned, within
   * [MIN_PIECE, chunk]. */
  uint64_t cap = (total / 10 + 4095u) & ~(uint64_t)4095u;
  if (cap < MIN_PIECE) cap = MIN_PIECE;
  if (piece_bytes) cap = piece_bytes;
  if (cap > s->chunk) cap = s->chunk;
  /* Granules: a piece shared by every copy thread, 4 KiB aligned,
   * within [MIN_GRANULE, MAX_GRANULE]. */
  uint64_t gran = ((cap < total ? cap : total) / s->threads + 4095u) & ~(uint64_t)4095u;
  if (gran < MIN_GRANULE) gran = MIN_GRANULE;
  if (gran > MAX_GRANULE) gran = MAX_GRANULE;
  for (uint32_t i = 0; i < count; i++) npieces += segs[i].size / cap + 2;
  w.s = s;
  w.stream = stream;
  w.up = up;
  w.serial = !up && overlapping(segs, count);
  vyre_status st = walk_alloc(&w, npieces, total / gran + npieces, err);
  if (st != VYRE_OK) return st;
  pthread_mutex_lock(&s->lock);
  st = ring_ready(s, err);
  if (st == VYRE_OK) {
    plan(&w, segs, count, cap, gran);
    w.gen = crew_post(&s->crew, w.granules, w.ngranules, w.left, !w.serial);
    st = up ? run_upload(&w, err) : run_download(&w, err);
    if (st != VYRE_OK) {
      /* Nothing may still read or write the ring, or the host memory. */
      if (!w.serial) crew_cancel(&s->crew, w.gen);
      if (w.enqueued) {
        CUresult r = VC_CU(s->cx, cuStreamSynchronize, (stream));
        if (r != CUDA_SUCCESS) vc_cu_note(s->cx, r, "cuStreamSynchronize");
      }
    }
  }
  pthread_mutex_unlock(&s->lock);
  free(w.granules);
  if (st == VYRE_OK) {
    atomic_fetch_add(&s->transfers, 1);
    atomic_fetch_add(up ? &s->bytes_up : &s->bytes_down, total);
  }
  return st;
}

vyre_status vc_staging_upload(vc_staging *s, CUstream stream, const vc_segment *segs,
                              uint32_t count, vyre_error *err) {
  return transfer(s, stream, segs, count, 1, 0, err);
}

vyre_status vc_staging_download(vc_staging *s, CUstream stream, const vc_segment *segs,
                                uint32_t count, vyre_error *err) {
  return transfer(s, stream, segs, count, 0, 0, err);
}

vyre_status vc_staging_move(vc_staging *s, CUstream stream, const vc_segment *segs,
                            uint32_t count, int up, uint64_t piece_bytes, vyre_error *err) {
  return transfer(s, stream, segs, count, up, piece_bytes ? piece_bytes : UINT64_MAX, err);
}

static void read_metrics(const void *state, vc_metric_sink *m) {
  vc_staging *s = (vc_staging *)state;
  vc_metric_emit(m, "staging.chunk_bytes", s->chunk);
  vc_metric_emit(m, "staging.chunks", s->nchunks);
  /* Written under the ring lock by the first transfer; a stale read here
   * shows 0 for a moment, never garbage. */
  vc_metric_emit(m, "staging.pinned_bytes",
                 __atomic_load_n(&s->ready, __ATOMIC_RELAXED) ? s->chunk * s->nchunks : 0);
  vc_metric_emit(m, "staging.threads", s->threads);
  vc_metric_emit(m, "staging.transfers", atomic_load(&s->transfers));
  vc_metric_emit(m, "staging.chunk_copies", atomic_load(&s->chunk_copies));
  vc_metric_emit(m, "staging.split_copies", atomic_load(&s->crew.worker_copies));
  vc_metric_emit(m, "staging.bytes_up", atomic_load(&s->bytes_up));
  vc_metric_emit(m, "staging.bytes_down", atomic_load(&s->bytes_down));
}

void vc_staging_add_metrics(vc_staging *s, vc_metrics *m) { vc_metrics_add(m, read_metrics, s); }
