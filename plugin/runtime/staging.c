/* staging.c -- the staging ring: pinned chunks kept by the instance, filled and drained by a small crew of copy threads while the device copies the neighbouring chunks. */
#include "staging.h"

#include <signal.h>
#include <stdlib.h>
#include <string.h>

#include "util.h"

#if defined(__SSE2__)
#include <emmintrin.h>
#endif

/* A chunk's memcpy is split over the crew only when each part gets at
 * least this much: handing out a part costs some microseconds. */
#define SPLIT_MIN_PART (256u << 10)
/* Transfers above this many bytes (or one chunk, if smaller) take the
 * ring; each is cut into pieces of about a tenth of it, at least
 * MIN_PIECE and at most one chunk, so that even a transfer of a few MiB
 * overlaps its host copies with the device's (12.6 MB dispatches on an
 * H100: 2.05 ms through one pinned block, 0.60 ms through the ring). */
#define RING_THRESHOLD (2u << 20)
#define MIN_PIECE (1u << 20)
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
static void *crew_main(void *arg) {
  struct vc_copy_worker *w = arg;
  vc_copy_crew *c = w->crew;
  /* Workers start before the first round (crew_start), which may be
   * posted before this thread runs: count from 0, not from now. */
  uint64_t seen = 0;
  for (;;) {
    uint64_t r = atomic_load_explicit(&c->round, memory_order_acquire);
    for (uint32_t i = 0; r == seen && i < SPIN_ROUNDS && !atomic_load(&c->stop); i++) {
      cpu_relax();
      r = atomic_load_explicit(&c->round, memory_order_acquire);
    }
    if (r == seen) {
      pthread_mutex_lock(&c->lock);
      c->sleepers++;
      while ((r = atomic_load(&c->round)) == seen && !atomic_load(&c->stop))
        pthread_cond_wait(&c->go, &c->lock);
      c->sleepers--;
      pthread_mutex_unlock(&c->lock);
    }
    if (atomic_load(&c->stop)) break;
    /* A round is posted only when the previous one is complete, so r is
     * seen + 1. */
    seen = r;
    if (c->part[w->index].len)
      copy_stream(c->part[w->index].dst, c->part[w->index].src, c->part[w->index].len);
    if (atomic_fetch_sub_explicit(&c->pending, 1, memory_order_acq_rel) == 1) {
      pthread_mutex_lock(&c->lock);
      if (c->waiting) pthread_cond_signal(&c->done);
      pthread_mutex_unlock(&c->lock);
    }
  }
  return NULL;
}

/* Start up to threads - 1 workers; fewer if the system refuses (the
 * copies then use fewer threads; nothing fails). */
static void crew_start(vc_copy_crew *c, uint32_t threads) {
  if (pthread_mutex_init(&c->lock, NULL)) return;
  if (pthread_cond_init(&c->go, NULL)) goto fail_go;
  if (pthread_cond_init(&c->done, NULL)) goto fail_done;
  c->init = 1;
  /* Workers take no signals: the host's handlers run on its own threads. */
  sigset_t all, old;
  sigfillset(&all);
  pthread_sigmask(SIG_SETMASK, &all, &old);
  for (uint32_t i = 1; i < threads; i++) {
    c->worker[i].crew = c;
    c->worker[i].index = i;
    if (pthread_create(&c->tid[i], NULL, crew_main, &c->worker[i])) {
      vc_log("staging: started %u of %u copy threads; the others are refused by the system",
             i, threads);
      break;
    }
    c->started = i;
  }
  pthread_sigmask(SIG_SETMASK, &old, NULL);
  return;
fail_done:
  pthread_cond_destroy(&c->go);
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
  pthread_cond_destroy(&c->done);
  pthread_cond_destroy(&c->go);
  pthread_mutex_destroy(&c->lock);
  c->init = 0;
  c->started = 0;
}

/* memcpy, split over the crew when it is large enough to gain (parts of
 * at least SPLIT_MIN_PART, copied with streaming stores). */
static void crew_copy(vc_staging *s, void *dst, const void *src, size_t len) {
  vc_copy_crew *c = &s->crew;
  uint32_t t = c->started + 1;
  if (t > len / SPLIT_MIN_PART) t = (uint32_t)(len / SPLIT_MIN_PART);
  if (t <= 1) {
    if (len >= SPLIT_MIN_PART) copy_stream(dst, src, len);
    else memcpy(dst, src, len);
    return;
  }
  /* Parts on 4 KiB boundaries: no two threads write one page. */
  size_t part = ((len + t - 1) / t + 4095u) & ~(size_t)4095u;
  uint8_t *d = dst;
  const uint8_t *sp = src;
  for (uint32_t i = 1; i <= c->started; i++) {
    size_t at = (size_t)i * part;
    size_t n = i < t && at < len ? (len - at < part ? len - at : part) : 0;
    c->part[i].dst = d + at;
    c->part[i].src = sp + at;
    c->part[i].len = n;
  }
  atomic_store_explicit(&c->pending, c->started, memory_order_relaxed);
  /* Release: the parts are visible to whoever sees the new round. */
  atomic_fetch_add_explicit(&c->round, 1, memory_order_release);
  pthread_mutex_lock(&c->lock);
  if (c->sleepers) pthread_cond_broadcast(&c->go);
  pthread_mutex_unlock(&c->lock);
  copy_stream(d, sp, part < len ? part : len);
  for (uint32_t i = 0; atomic_load_explicit(&c->pending, memory_order_acquire) && i < SPIN_ROUNDS;
       i++)
    cpu_relax();
  if (atomic_load_explicit(&c->pending, memory_order_acquire)) {
    pthread_mutex_lock(&c->lock);
    c->waiting = 1;
    while (atomic_load(&c->pending)) pthread_cond_wait(&c->done, &c->lock);
    c->waiting = 0;
    pthread_mutex_unlock(&c->lock);
  }
  atomic_fetch_add(&s->split_copies, 1);
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

/* Part of a segment waiting in a chunk (downloads copy it out). */
typedef struct piece {
  uint8_t *host;
  uint64_t off, len;
} piece;

/* One transfer's walk over the ring. */
typedef struct walk {
  vc_staging *s;
  CUstream stream;
  int up;
  uint32_t k;    /* the chunk being filled */
  uint64_t fill; /* bytes of it in use */
  uint64_t cap;  /* bytes of a chunk this transfer fills before moving on */
  piece *pieces; /* downloads */
  uint32_t npieces;
  uint32_t first[VC_STAGING_MAX_CHUNKS], end[VC_STAGING_MAX_CHUNKS]; /* pieces per chunk */
  int enqueued;
} walk;

/* Make chunk k free: wait for its last copies and, for downloads, copy
 * its pieces out to the host. */
static vyre_status drain(walk *w, uint32_t k, vyre_error *err) {
  vc_staging *s = w->s;
  if (s->busy[k]) {
    CUresult r = VC_CU(s->cx, cuEventSynchronize, (s->ev[k]));
    if (r != CUDA_SUCCESS) return vc_cu_fail(s->cx, err, r, "cuEventSynchronize", NULL, NULL);
    s->busy[k] = 0;
  }
  if (!w->up) {
    const uint8_t *base = s->buf[k];
    for (uint32_t i = w->first[k]; i < w->end[k]; i++)
      crew_copy(s, w->pieces[i].host, base + w->pieces[i].off, (size_t)w->pieces[i].len);
  }
  w->first[k] = w->end[k] = 0;
  return VYRE_OK;
}

/* Close chunk k: an event after its copies says when it is free again. */
static vyre_status seal(walk *w, uint32_t k, vyre_error *err) {
  vc_staging *s = w->s;
  if (!w->fill) return VYRE_OK;
  CUresult r = VC_CU(s->cx, cuEventRecord, (s->ev[k], w->stream));
  if (r != CUDA_SUCCESS) return vc_cu_fail(s->cx, err, r, "cuEventRecord", NULL, NULL);
  s->busy[k] = 1;
  atomic_fetch_add(&s->chunk_copies, 1);
  return VYRE_OK;
}

static vyre_status walk_segments(walk *w, const vc_segment *segs, uint32_t count,
                                 vyre_error *err) {
  vc_staging *s = w->s;
  vc_context *cx = s->cx;
  vyre_status st = drain(w, w->k, err);
  if (st != VYRE_OK) return st;
  for (uint32_t i = 0; i < count; i++) {
    uint64_t done = 0;
    while (done < segs[i].size) {
      if (w->fill == w->cap) {
        st = seal(w, w->k, err);
        if (st != VYRE_OK) return st;
        w->k = (w->k + 1) % s->nchunks;
        w->fill = 0;
        st = drain(w, w->k, err);
        if (st != VYRE_OK) return st;
      }
      uint64_t len = segs[i].size - done;
      if (len > w->cap - w->fill) len = w->cap - w->fill;
      uint8_t *stage = (uint8_t *)s->buf[w->k] + w->fill;
      uint8_t *host = (uint8_t *)segs[i].host + done;
      CUdeviceptr dev = segs[i].dev + done;
      CUresult r;
      if (w->up) {
        crew_copy(s, stage, host, (size_t)len);
        r = VC_CU(cx, cuMemcpyHtoDAsync, (dev, stage, (size_t)len, w->stream));
        if (r != CUDA_SUCCESS) return vc_cu_fail(cx, err, r, "cuMemcpyHtoDAsync", NULL, NULL);
      } else {
        r = VC_CU(cx, cuMemcpyDtoHAsync, (stage, dev, (size_t)len, w->stream));
        if (r != CUDA_SUCCESS) return vc_cu_fail(cx, err, r, "cuMemcpyDtoHAsync", NULL, NULL);
        if (w->first[w->k] == w->end[w->k]) w->first[w->k] = w->npieces;
        w->pieces[w->npieces].host = host;
        w->pieces[w->npieces].off = w->fill;
        w->pieces[w->npieces].len = len;
        w->end[w->k] = ++w->npieces;
      }
      w->enqueued = 1;
      w->fill += len;
      done += len;
    }
  }
  st = seal(w, w->k, err);
  if (st != VYRE_OK) return st;
  if (!w->up) {
    /* Copy out in issue order: the oldest chunk is the one after k. */
    for (uint32_t n = 1; n <= s->nchunks; n++) {
      st = drain(w, (w->k + n) % s->nchunks, err);
      if (st != VYRE_OK) return st;
    }
  }
  return VYRE_OK;
}

static vyre_status transfer(vc_staging *s, CUstream stream, const vc_segment *segs,
                            uint32_t count, int up, vyre_error *err) {
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
  w.cap = (total / 10 + 4095u) & ~(uint64_t)4095u;
  if (w.cap < MIN_PIECE) w.cap = MIN_PIECE;
  if (w.cap > s->chunk) w.cap = s->chunk;
  for (uint32_t i = 0; i < count; i++) npieces += segs[i].size / w.cap + 2;
  w.s = s;
  w.stream = stream;
  w.up = up;
  if (!up && (npieces > UINT32_MAX / 2 || !(w.pieces = malloc((size_t)npieces * sizeof *w.pieces))))
    return vyre_error_set(err, VYRE_OUT_OF_MEMORY, 0,
                          "transfer: no host memory for %llu staging records. Fix: transfer "
                          "fewer ranges at once",
                          (unsigned long long)npieces);
  pthread_mutex_lock(&s->lock);
  vyre_status st = ring_ready(s, err);
  if (st == VYRE_OK) {
    w.k = s->cursor;
    st = walk_segments(&w, segs, count, err);
    s->cursor = (w.k + 1) % s->nchunks;
    if (st != VYRE_OK && w.enqueued) {
      /* Nothing may still read or write the ring, or the host memory. */
      CUresult r = VC_CU(s->cx, cuStreamSynchronize, (stream));
      if (r != CUDA_SUCCESS) vc_cu_note(s->cx, r, "cuStreamSynchronize");
    }
  }
  pthread_mutex_unlock(&s->lock);
  free(w.pieces);
  if (st == VYRE_OK) {
    atomic_fetch_add(&s->transfers, 1);
    atomic_fetch_add(up ? &s->bytes_up : &s->bytes_down, total);
  }
  return st;
}

vyre_status vc_staging_upload(vc_staging *s, CUstream stream, const vc_segment *segs,
                              uint32_t count, vyre_error *err) {
  return transfer(s, stream, segs, count, 1, err);
}

vyre_status vc_staging_download(vc_staging *s, CUstream stream, const vc_segment *segs,
                                uint32_t count, vyre_error *err) {
  return transfer(s, stream, segs, count, 0, err);
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
  vc_metric_emit(m, "staging.split_copies", atomic_load(&s->split_copies));
  vc_metric_emit(m, "staging.bytes_up", atomic_load(&s->bytes_up));
  vc_metric_emit(m, "staging.bytes_down", atomic_load(&s->bytes_down));
}

void vc_staging_add_metrics(vc_staging *s, vc_metrics *m) { vc_metrics_add(m, read_metrics, s); }
