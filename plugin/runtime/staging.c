/* staging.c -- the staging ring: pinned chunks kept by the instance, filled and drained by the copy threads (crew.c) while the device copies the neighbouring chunks; host transfers, and pipelines of steps (upload, device work, readback). */
#include "staging.h"

#include <stdlib.h>
#include <string.h>

#include "util.h"

/* A chunk's pieces are copied in granules of about a piece over the
 * copy threads, within these bounds: one claim costs a compare-and-swap,
 * and a granule is what one slow thread can hold back. */
#define MIN_GRANULE (64u << 10)
#define MAX_GRANULE (1u << 20)
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
  vc_crew_stop(&s->crew);
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
  if (!s->crew.init && s->threads > 1) vc_crew_start(&s->crew, s->threads);
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
    vc_crew_copy_one(c, w->mine++);
    return 1;
  }
  if (vc_crew_claim(c, w->gen, &i) != 1) return 0;
  vc_crew_copy_claimed(c, i);
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
    if (!moved && !help(w)) vc_cpu_relax();
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
    if (d < w->nslots && !help(w)) vc_cpu_relax();
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
  uint64_t cap = (total / 10 + 4095u) & ~(uint64_t)4095u;
  if (cap < MIN_PIECE) cap = MIN_PIECE;
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
    w.gen = vc_crew_post(&s->crew, w.granules, w.ngranules, w.left, !w.serial);
    st = up ? run_upload(&w, err) : run_download(&w, err);
    if (st != VYRE_OK) {
      /* Nothing may still read or write the ring, or the host memory. */
      if (!w.serial) vc_crew_cancel(&s->crew, w.gen);
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
  return transfer(s, stream, segs, count, 1, err);
}

vyre_status vc_staging_download(vc_staging *s, CUstream stream, const vc_segment *segs,
                                uint32_t count, vyre_error *err) {
  return transfer(s, stream, segs, count, 0, err);
}

/* ------------------------------------------------------------------ */
/* Steps: a pipeline of uploads, device work and readbacks              */
/* ------------------------------------------------------------------ */
/* Step c uses ring chunk (cursor + c) % nchunks for its inputs (from
 * offset 0) and then its outputs; its parts are A = 2c (inputs in) and
 * B = 2c + 1 (outputs out).  The crew claims granules in the order the
 * parts become ready: A(0..n-1) while the first n chunks are free, then
 * B(c) (once step c's device work is done) followed by A(c + n) (once
 * B(c) has emptied the chunk). */
typedef struct stepper {
  vc_staging *s;
  const CUstream *streams;
  uint32_t nsteps, n, cursor;
  vc_step_device_fn device;
  void *user;
  vc_step_io *io;
  uint64_t *in_bytes;     /* per step */
  uint32_t *seq, *posa;   /* parts in claim order; A(c)'s position there */
  uint32_t *gend;         /* per position: granule end */
  vc_granule *granules;
  _Atomic uint32_t *left; /* per part */
  uint32_t ngranules;
  uint64_t gen, up, down;
  int enqueued;
} stepper;

static uint32_t step_chunk(const stepper *t, uint32_t c) {
  return (t->cursor + c) % t->s->nchunks;
}

/* One part's granules, appended. */
static void step_granules(stepper *t, uint32_t part, uint64_t gran) {
  uint32_t c = part >> 1, b = part & 1u;
  const vc_step_io *io = &t->io[c];
  uint8_t *stage = (uint8_t *)t->s->buf[step_chunk(t, c)] + (b ? t->in_bytes[c] : 0);
  const vc_segment *seg = b ? io->out : io->in;
  atomic_init(&t->left[part], 0);
  for (uint32_t i = 0; i < (b ? io->nout : io->nin); i++) {
    for (uint64_t o = 0; o < seg[i].size; o += gran) {
      vc_granule *g = &t->granules[t->ngranules++];
      g->len = (size_t)(seg[i].size - o < gran ? seg[i].size - o : gran);
      g->dst = b ? (uint8_t *)seg[i].host + o : stage + o;
      g->src = b ? stage + o : (const uint8_t *)seg[i].host + o;
      g->slot = part;
      atomic_fetch_add_explicit(&t->left[part], 1, memory_order_relaxed);
    }
    stage += seg[i].size;
  }
}

/* Step c's device side on its stream: its inputs up, its work, its
 * outputs into the chunk, the chunk's event. */
static vyre_status step_send(stepper *t, uint32_t c, vyre_error *err) {
  vc_staging *s = t->s;
  vc_context *cx = s->cx;
  uint32_t k = step_chunk(t, c);
  CUstream st = t->streams[c & 1u];
  const vc_step_io *io = &t->io[c];
  uint8_t *stage = s->buf[k];
  CUresult r;
  for (uint32_t i = 0; i < io->nin; i++, t->enqueued = 1) {
    r = VC_CU(cx, cuMemcpyHtoDAsync, (io->in[i].dev, stage, (size_t)io->in[i].size, st));
    if (r != CUDA_SUCCESS) return vc_cu_fail(cx, err, r, "cuMemcpyHtoDAsync", NULL, NULL);
    stage += io->in[i].size;
  }
  t->enqueued = 1;
  vyre_status vs = t->device(t->user, c, st, err);
  if (vs != VYRE_OK) return vs;
  for (uint32_t i = 0; i < io->nout; i++) {
    r = VC_CU(cx, cuMemcpyDtoHAsync, (stage, io->out[i].dev, (size_t)io->out[i].size, st));
    if (r != CUDA_SUCCESS) return vc_cu_fail(cx, err, r, "cuMemcpyDtoHAsync", NULL, NULL);
    stage += io->out[i].size;
  }
  r = VC_CU(cx, cuEventRecord, (s->ev[k], st));
  if (r != CUDA_SUCCESS) return vc_cu_fail(cx, err, r, "cuEventRecord", NULL, NULL);
  s->busy[k] = 1;
  atomic_fetch_add(&s->chunk_copies, 1);
  return VYRE_OK;
}

/* Is the part at sequence position p ready to be copied?  1 yes, 0 not
 * yet, -1 a wait failed (*st and *err say how).  block: nothing else to
 * do. */
static int step_ready(stepper *t, uint32_t p, uint32_t sent, int block, vyre_status *st,
                      vyre_error *err) {
  uint32_t part = t->seq[p], c = part >> 1;
  if (!(part & 1u) && c >= t->n)
    return atomic_load_explicit(&t->left[2 * (c - t->n) + 1], memory_order_acquire) == 0;
  if ((part & 1u) && c >= sent) return 0;
  CUresult r = chunk_wait(t->s, step_chunk(t, c), block);
  if (r == CUDA_SUCCESS) return 1;
  if (r == CUDA_ERROR_NOT_READY && !block) return 0;
  *st = wait_fail(t->s, r, block, err);
  return -1;
}

static vyre_status step_run(stepper *t, vyre_error *err) {
  vc_copy_crew *crew = &t->s->crew;
  uint32_t nparts = 2 * t->nsteps, p = 0, d = 0, e = 0, i;
  while (d < nparts) {
    while (d < p && atomic_load_explicit(&t->left[t->seq[d]], memory_order_acquire) == 0) d++;
    /* Sending first: a step whose inputs are in goes to the device
     * before the thread waits for anything. */
    if (e < t->nsteps && t->posa[e] < p &&
        atomic_load_explicit(&t->left[2 * e], memory_order_acquire) == 0) {
      vyre_status st = step_send(t, e++, err);
      if (st != VYRE_OK) return st;
      continue;
    }
    if (p < nparts) {
      vyre_status st = VYRE_OK;
      int ready = step_ready(t, p, e, d == p, &st, err);
      if (ready < 0) return st;
      if (ready) {
        atomic_store_explicit(&crew->limit, t->gend[p], memory_order_release);
        p++;
        continue;
      }
    }
    if (vc_crew_claim(crew, t->gen, &i) == 1) vc_crew_copy_claimed(crew, i);
    else vc_cpu_relax();
  }
  return VYRE_OK;
}

/* The claim order and the granule table; tables from one allocation. */
static vyre_status step_plan(stepper *t, vc_step_describe_fn describe, vyre_error *err) {
  vc_staging *s = t->s;
  uint32_t ns = t->nsteps, segs = 0;
  uint64_t total = 0;
  size_t head = (size_t)ns * (sizeof(vc_step_io) + sizeof(uint64_t) + 3 * 2 * sizeof(uint32_t) +
                              2 * sizeof(_Atomic uint32_t));
  uint8_t *m = malloc(head);
  if (!m) goto oom;
  t->io = (vc_step_io *)(void *)m;
  t->in_bytes = (uint64_t *)(void *)(m + (size_t)ns * sizeof(vc_step_io));
  t->left = (_Atomic uint32_t *)(void *)(t->in_bytes + ns);
  t->seq = (uint32_t *)(void *)(t->left + 2 * ns);
  t->posa = t->seq + 2 * ns;
  t->gend = t->posa + 2 * ns;
  for (uint32_t c = 0; c < ns; c++) {
    vc_step_io *io = &t->io[c];
    describe(t->user, c, io);
    uint64_t in = 0, out = 0;
    for (uint32_t i = 0; i < io->nin; i++) in += io->in[i].size;
    for (uint32_t i = 0; i < io->nout; i++) out += io->out[i].size;
    if (in + out > s->chunk) {
      free(m);
      return vyre_error_set(err, VYRE_INTERNAL, 0,
                            "staging: step %u moves %llu bytes, more than a %llu-byte chunk. "
                            "Fix: report this as a bug",
                            c, (unsigned long long)(in + out), (unsigned long long)s->chunk);
    }
    t->in_bytes[c] = in;
    t->up += in;
    t->down += out;
    total += in + out;
    segs += io->nin + io->nout;
  }
  uint64_t gran = (total / ns / s->threads + 4095u) & ~(uint64_t)4095u;
  if (gran < MIN_GRANULE) gran = MIN_GRANULE;
  if (gran > MAX_GRANULE) gran = MAX_GRANULE;
  t->granules = malloc((size_t)(total / gran + segs + 1) * sizeof(vc_granule));
  if (!t->granules) {
    free(m);
    goto oom;
  }
  uint32_t np = 0;
  for (uint32_t c = 0; c < t->n; c++) t->seq[np++] = 2 * c;
  for (uint32_t c = 0; c < ns; c++) {
    t->seq[np++] = 2 * c + 1;
    if (c + t->n < ns) t->seq[np++] = 2 * (c + t->n);
  }
  for (uint32_t q = 0; q < np; q++) {
    if (!(t->seq[q] & 1u)) t->posa[t->seq[q] >> 1] = q;
    step_granules(t, t->seq[q], gran);
    t->gend[q] = t->ngranules;
  }
  return VYRE_OK;
oom:
  t->io = NULL;
  return vyre_error_set(err, VYRE_OUT_OF_MEMORY, 0,
                        "staging: no host memory for the plan of %u steps. Fix: free host "
                        "memory",
                        ns);
}

vyre_status vc_staging_steps(vc_staging *s, const CUstream streams[2], uint32_t nsteps,
                             vc_step_describe_fn describe, vc_step_device_fn device, void *user,
                             vyre_error *err) {
  if (!nsteps) return VYRE_OK;
  stepper t;
  memset(&t, 0, sizeof t);
  t.s = s;
  t.streams = streams;
  t.nsteps = nsteps;
  t.device = device;
  t.user = user;
  pthread_mutex_lock(&s->lock);
  vyre_status st = ring_ready(s, err);
  if (st == VYRE_OK) {
    t.cursor = s->cursor;
    t.n = nsteps < s->nchunks ? nsteps : s->nchunks;
    st = step_plan(&t, describe, err);
  }
  if (st == VYRE_OK) {
    t.gen = vc_crew_post(&s->crew, t.granules, t.ngranules, t.left, 1);
    st = step_run(&t, err);
    s->cursor = (t.cursor + nsteps) % s->nchunks;
    if (st != VYRE_OK) {
      /* Nothing may still read or write the ring, or the host memory. */
      vc_crew_cancel(&s->crew, t.gen);
      for (int k = 0; k < 2 && t.enqueued; k++) {
        CUresult r = VC_CU(s->cx, cuStreamSynchronize, (streams[k]));
        if (r != CUDA_SUCCESS) vc_cu_note(s->cx, r, "cuStreamSynchronize");
      }
    }
    free(t.granules);
    free(t.io);
  }
  pthread_mutex_unlock(&s->lock);
  if (st == VYRE_OK) {
    atomic_fetch_add(&s->transfers, 1);
    atomic_fetch_add(&s->bytes_up, t.up);
    atomic_fetch_add(&s->bytes_down, t.down);
  }
  return st;
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
