/* shard.h -- what both multi-GPU examples share: the saxpy program text, the workload, one shard's run on one device, and the CPU check. */
#ifndef VYRE_EXAMPLE_SHARD_H
#define VYRE_EXAMPLE_SHARD_H

#include <math.h>
#include <stdlib.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include <vyre/vyre_host.h>
#include <vyre/vyre_support.h>
#include <vyre/vyre_text.h>

/* y[i] = a * x[i] + y[i], one rounding (fma): examples/saxpy.vyre. */
static const char shard_saxpy_text[] =
    "; y[i] = a * x[i] + y[i]\n"
    "workgroup 256\n"
    "buffer a uniform f32 [1]\n"
    "buffer x ro f32\n"
    "buffer y rw f32\n"
    "%i  = gid.x\n"
    "%n  = buflen y\n"
    "%in = lt %i %n\n"
    "if %in\n"
    "  %zero = const u32 0\n"
    "  %av   = load a %zero\n"
    "  %xv   = load x %i\n"
    "  %yv   = load y %i\n"
    "  %r    = fma %av %xv %yv\n"
    "  store y %i %r\n"
    "end\n";

#define SHARD_A 0.5f
#define SHARD_BYTES_PER_ELEMENT 12.0 /* x read, y read and written */

/* The workload, element i of the whole array: exact in f32, so the GPU and
 * the CPU agree bit for bit. */
static inline float shard_x(uint64_t i) { return (float)(i % 4093u) * 0.25f; }
static inline float shard_y(uint64_t i) { return 1.0f + (float)(i % 7u); }

/* What `passes` dispatches make of element i. */
static inline float shard_expect(uint64_t i, uint32_t passes) {
  float y = shard_y(i);
  for (uint32_t p = 0; p < passes; p++) y = fmaf(SHARD_A, shard_x(i), y);
  return y;
}

/* Elements [*first, *first + *count) of n go to shard k of `shards`. */
static inline void shard_range(uint64_t n, uint32_t shards, uint32_t k, uint64_t *first,
                               uint64_t *count) {
  uint64_t base = n / shards, extra = n % shards;
  *first = k * base + (k < extra ? k : extra);
  *count = base + (k < extra ? 1 : 0);
}

static inline double shard_now(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

/* One shard on one instance: the times of its three phases. */
typedef struct shard_times {
  double upload_s, kernels_s, download_s;
} shard_times;

/* Prepared work on one instance: the pipeline and the resident buffers. */
typedef struct shard_job {
  vyre_backend *b;
  vyre_pipeline pipe;
  vyre_resident buf[3]; /* a, x, y */
  vyre_resident scratch; /* one element: the untimed warm-up's y */
  uint64_t count;
} shard_job;

/* Compile the program and allocate a, x and y for `count` elements. */
static inline vyre_status shard_prepare(shard_job *j, vyre_backend *b, uint64_t count,
                                        vyre_error *err) {
  memset(j, 0, sizeof *j);
  j->b = b;
  j->count = count;
  if (!VYRE_HOST_HAS(b, pipeline_create) || !VYRE_HOST_HAS(b, dispatch_resident) ||
      !VYRE_HOST_HAS(b, resident_alloc))
    return vyre_error_set(err, VYRE_UNSUPPORTED, 0,
                          "the backend lacks pipelines or resident buffers. Fix: use the cuda "
                          "or reference backend (VYRE_BACKEND)");
  if (count == 0 || count > UINT32_MAX)
    return vyre_error_set(err, VYRE_LIMIT, 0,
                          "a shard of %llu elements: a buffer holds 1 to 2^32-1. Fix: use "
                          "more devices or fewer elements (-n)",
                          (unsigned long long)count);
  void *bytes = NULL;
  size_t size = 0;
  vyre_status st = vyre_text_assemble(shard_saxpy_text, sizeof shard_saxpy_text - 1,
                                      "saxpy.vyre", &bytes, &size, err);
  if (st == VYRE_OK) st = b->vt->pipeline_create(b, bytes, size, NULL, &j->pipe, err);
  free(bytes);
  uint64_t sizes[3] = {4, count * 4, count * 4};
  for (int k = 0; st == VYRE_OK && k < 3; k++)
    st = b->vt->resident_alloc(b, sizes[k], &j->buf[k], err);
  if (st == VYRE_OK) st = b->vt->resident_alloc(b, 4, &j->scratch, err);
  return st;
}

static inline vyre_status shard_upload(shard_job *j, const float *x, const float *y,
                                       double *seconds, vyre_error *err) {
  double t0 = shard_now();
  float a = SHARD_A;
  vyre_status st = j->b->vt->resident_upload(j->b, j->buf[0], &a, 4, err);
  if (st == VYRE_OK) st = j->b->vt->resident_upload(j->b, j->buf[1], x, j->count * 4, err);
  if (st == VYRE_OK) st = j->b->vt->resident_upload(j->b, j->buf[2], y, j->count * 4, err);
  *seconds = shard_now() - t0;
  return st;
}

/* One untimed dispatch on a one-element y (the scratch buffer), so the
 * timed ones do not pay for loading the kernel (CUDA loads modules lazily
 * at their first launch).  y is untouched. */
static inline vyre_status shard_warmup(shard_job *j, vyre_error *err) {
  vyre_program_ref prog = VYRE_PROGRAM_PIPELINE(j->pipe);
  vyre_resident bufs[3] = {j->buf[0], j->buf[1], j->scratch};
  return j->b->vt->dispatch_resident(j->b, &prog, bufs, 3, NULL, NULL, err);
}

/* `passes` dispatches of y = a*x + y; each waits for its kernel. */
static inline vyre_status shard_kernels(shard_job *j, uint32_t passes, double *seconds,
                                        vyre_error *err) {
  vyre_program_ref prog = VYRE_PROGRAM_PIPELINE(j->pipe);
  double t0 = shard_now();
  vyre_status st = VYRE_OK;
  for (uint32_t p = 0; st == VYRE_OK && p < passes; p++)
    st = j->b->vt->dispatch_resident(j->b, &prog, j->buf, 3, NULL, NULL, err);
  *seconds = shard_now() - t0;
  return st;
}

static inline vyre_status shard_download(shard_job *j, float *y, double *seconds,
                                         vyre_error *err) {
  double t0 = shard_now();
  vyre_status st = j->b->vt->resident_download(j->b, j->buf[2], y, j->count * 4, err);
  *seconds = shard_now() - t0;
  return st;
}

static inline void shard_release(shard_job *j) {
  if (!j->b) return;
  for (int k = 0; k < 3; k++)
    if (j->buf[k]) j->b->vt->resident_free(j->b, j->buf[k], NULL);
  if (j->scratch) j->b->vt->resident_free(j->b, j->scratch, NULL);
  if (j->pipe) j->b->vt->pipeline_release(j->b, j->pipe, NULL);
  memset(j, 0, sizeof *j);
}

/* Compare y (elements first..first+count of the whole array) with the CPU,
 * bit for bit.  Returns the number of mismatches; the first is printed. */
static inline uint64_t shard_check(const float *y, uint64_t first, uint64_t count,
                                   uint32_t passes) {
  uint64_t bad = 0;
  for (uint64_t k = 0; k < count; k++) {
    float want = shard_expect(first + k, passes);
    if (memcmp(&want, &y[k], 4) != 0) {
      if (!bad)
        fprintf(stderr, "mismatch at element %llu: got %.9g, expected %.9g\n",
                (unsigned long long)(first + k), (double)y[k], (double)want);
      bad++;
    }
  }
  return bad;
}

/* The devices of the backend `b` runs on (its profile's device_count;
 * 0 from an older backend: probe create until VYRE_NO_DEVICE). */
static inline uint32_t shard_device_count(vyre_host *host, const char *id, vyre_backend *b) {
  vyre_device_profile p;
  memset(&p, 0, sizeof p);
  p.struct_size = sizeof p;
  vyre_error err = VYRE_ERROR_INIT;
  if (VYRE_HOST_HAS(b, device_profile) && b->vt->device_profile(b, &p, &err) == VYRE_OK &&
      p.device_count)
    return p.device_count;
  uint32_t n = 1;
  for (;; n++) {
    vyre_backend_options o = {sizeof o, n, 0, 0, NULL};
    vyre_backend *other = NULL;
    if (vyre_host_create(host, id, &o, &other, NULL, &err) != VYRE_OK) break;
    other->vt->destroy(other);
  }
  return n;
}

#endif /* VYRE_EXAMPLE_SHARD_H */
