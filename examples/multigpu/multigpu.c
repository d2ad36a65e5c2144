/* multigpu.c -- one process, every device: y = a*x + y over a large array split across all devices of a backend, one thread and one instance per device, checked bit for bit on the CPU, with the scaling over one device. */
/*
 * Usage: multigpu [--backend ID] [--devices K] [-n ELEMENTS] [--passes P]
 *
 * The backend is the best one here (CUDA with a GPU, else the reference
 * backend, which has one device) unless --backend or VYRE_BACKEND names
 * one.  The array of n f32 elements is split into one contiguous shard
 * per device; each device gets a thread of its own that creates its own
 * instance (vyre_backend_options.device_ordinal), uploads its shard,
 * runs P passes of y = a*x + y (all devices start together) and
 * downloads the result.  With more than one device the whole array is
 * first run on device 0 alone: the baseline of the scaling line.  Every
 * element is compared bit for bit with the CPU (fmaf, P times).
 *
 * Output (docs/multi-gpu.md): one line per device with its shard, upload,
 * kernel and download times and kernel GB/s (12 bytes per element per
 * pass), a total line, a "scaling:" line and a "check:" line.  Exit
 * status 0 when every element matches, 1 when one does not or a device
 * fails, 2 for a bad command line.
 */
#if !defined(_GNU_SOURCE) && !defined(_POSIX_C_SOURCE)
#define _POSIX_C_SOURCE 200809L /* clock_gettime and pthread barriers under -std=c11 */
#endif
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "shard.h"

#define MAX_DEVICES 64

typedef struct worker {
  vyre_host *host;
  const char *id;
  uint32_t ordinal;
  uint64_t first, count;
  uint32_t passes;
  const float *x;
  float *y; /* this shard's slice of the whole y: input, then result */
  pthread_barrier_t *start; /* every device's kernels start together */
  char name[128];
  shard_times t;
  vyre_status st;
  vyre_error err;
} worker;

static void *run_worker(void *arg) {
  worker *w = arg;
  w->err = (vyre_error)VYRE_ERROR_INIT;
  vyre_backend_options o = {sizeof o, w->ordinal, 0, 0, NULL};
  vyre_backend *b = NULL;
  shard_job job;
  memset(&job, 0, sizeof job);
  w->st = vyre_host_create(w->host, w->id, &o, &b, NULL, &w->err);
  if (w->st == VYRE_OK) {
    vyre_device_profile p;
    memset(&p, 0, sizeof p);
    p.struct_size = sizeof p;
    if (b->vt->device_profile(b, &p, &w->err) == VYRE_OK)
      snprintf(w->name, sizeof w->name, "%s", p.name);
    w->st = shard_prepare(&job, b, w->count, &w->err);
  }
  if (w->st == VYRE_OK) w->st = shard_upload(&job, w->x + w->first, w->y, &w->t.upload_s, &w->err);
  if (w->st == VYRE_OK) w->st = shard_warmup(&job, &w->err);
  /* Wait for the others even after a failure, so no thread waits forever. */
  if (w->start) pthread_barrier_wait(w->start);
  if (w->st == VYRE_OK) w->st = shard_kernels(&job, w->passes, &w->t.kernels_s, &w->err);
  if (w->st == VYRE_OK) w->st = shard_download(&job, w->y, &w->t.download_s, &w->err);
  shard_release(&job);
  if (b) b->vt->destroy(b);
  return NULL;
}

static double gbps(uint64_t elements, uint32_t passes, double seconds) {
  return seconds > 0 ? SHARD_BYTES_PER_ELEMENT * (double)elements * passes / seconds / 1e9 : 0;
}

static int usage(const char *why) {
  fprintf(stderr,
          "multigpu: %s\nusage: multigpu [--backend ID] [--devices K] [-n ELEMENTS] "
          "[--passes P]\n",
          why);
  return 2;
}

/* Run the whole array split over devices 0..k-1; 0 when every device
 * worked. */
static int run_split(vyre_host *host, const char *id, uint32_t k, uint64_t n, uint32_t passes,
                     const float *x, float *y, worker *w, double *wall) {
  pthread_t th[MAX_DEVICES];
  pthread_barrier_t start;
  pthread_barrier_init(&start, NULL, k);
  for (uint64_t i = 0; i < n; i++) y[i] = shard_y(i);
  double t0 = shard_now();
  for (uint32_t d = 0; d < k; d++) {
    memset(&w[d], 0, sizeof w[d]);
    w[d].host = host;
    w[d].id = id;
    w[d].ordinal = d;
    shard_range(n, k, d, &w[d].first, &w[d].count);
    w[d].passes = passes;
    w[d].x = x;
    w[d].y = y + w[d].first;
    w[d].start = &start;
    if (pthread_create(&th[d], NULL, run_worker, &w[d]) != 0) {
      fprintf(stderr, "multigpu: cannot start a thread for device %u\n", d);
      exit(1); /* the started threads would wait at the barrier forever */
    }
  }
  int failed = 0;
  for (uint32_t d = 0; d < k; d++) {
    pthread_join(th[d], NULL);
    if (w[d].st != VYRE_OK) {
      fprintf(stderr, "multigpu: device %u: %s\n", d, w[d].err.message);
      failed = 1;
    }
  }
  *wall = shard_now() - t0;
  pthread_barrier_destroy(&start);
  return failed;
}

int main(int argc, char **argv) {
  const char *id = NULL;
  uint32_t want_devices = 0, passes = 10;
  uint64_t n = 0;
  for (int i = 1; i < argc; i++) {
    const char *v = i + 1 < argc ? argv[i + 1] : NULL;
    char *end = NULL;
    if (!strcmp(argv[i], "--backend") && v) {
      id = v;
    } else if (!strcmp(argv[i], "--devices") && v) {
      unsigned long k = strtoul(v, &end, 10);
      if (*end || k == 0 || k > MAX_DEVICES) return usage("--devices takes 1 to 64");
      want_devices = (uint32_t)k;
    } else if (!strcmp(argv[i], "-n") && v) {
      unsigned long long k = strtoull(v, &end, 0);
      if (*end || k == 0 || k > (1ull << 34)) return usage("-n takes 1 to 2^34 elements");
      n = k;
    } else if (!strcmp(argv[i], "--passes") && v) {
      unsigned long k = strtoul(v, &end, 10);
      if (*end || k == 0 || k > 100000) return usage("--passes takes 1 to 100000");
      passes = (uint32_t)k;
    } else {
      return usage("unknown or incomplete option");
    }
    i++;
  }

  vyre_host *host = NULL;
  vyre_error err = VYRE_ERROR_INIT;
  if (vyre_host_open(NULL, &host, &err) != VYRE_OK) {
    fprintf(stderr, "multigpu: %s\n", err.message);
    return 1;
  }
  /* The backend and its device count, from an instance on device 0. */
  vyre_backend_options o0 = {sizeof o0, 0, 0, 0, NULL};
  vyre_backend *b0 = NULL;
  uint32_t index = 0;
  if (vyre_host_create(host, id, &o0, &b0, &index, &err) != VYRE_OK) {
    fprintf(stderr, "multigpu: %s\n", err.message);
    vyre_host_close(host);
    return 1;
  }
  vyre_host_candidate c;
  memset(&c, 0, sizeof c);
  c.struct_size = sizeof c;
  vyre_host_backend_info(host, index, &c, NULL);
  char backend[64];
  snprintf(backend, sizeof backend, "%s", c.id ? c.id : "?");
  uint32_t count = shard_device_count(host, backend, b0);
  vyre_device_profile p0;
  memset(&p0, 0, sizeof p0);
  p0.struct_size = sizeof p0;
  int cpu = b0->vt->device_profile(b0, &p0, &err) == VYRE_OK && p0.compute_major == 0;
  b0->vt->destroy(b0);
  if (want_devices > count) {
    fprintf(stderr,
            "multigpu: --devices %u, but backend %s has %u device%s. Fix: pass --devices %u "
            "or fewer\n",
            want_devices, backend, count, count == 1 ? "" : "s", count);
    vyre_host_close(host);
    return 1;
  }
  uint32_t k = want_devices ? want_devices : count > MAX_DEVICES ? MAX_DEVICES : count;
  if (!n) n = cpu ? (1u << 20) : (1u << 26);

  float *x = malloc(n * sizeof *x), *y = malloc(n * sizeof *y);
  worker *w = calloc(MAX_DEVICES, sizeof *w);
  if (!x || !y || !w) {
    fprintf(stderr, "multigpu: out of host memory for %llu elements. Fix: pass a smaller -n\n",
            (unsigned long long)n);
    free(x);
    free(y);
    free(w);
    vyre_host_close(host);
    return 1;
  }
  for (uint64_t i = 0; i < n; i++) x[i] = shard_x(i);
  printf("multigpu: backend %s, %u device%s of %u, %llu f32 elements, y = a*x + y %u times "
         "(%.0f bytes per element per pass)\n",
         backend, k, k == 1 ? "" : "s", count, (unsigned long long)n, passes,
         SHARD_BYTES_PER_ELEMENT);

  int rc = 0;
  double wall = 0, base_kernels = 0;
  /* The baseline: everything on device 0 alone. */
  if (k > 1) {
    if (run_split(host, backend, 1, n, passes, x, y, w, &wall)) {
      rc = 1;
      goto done;
    }
    base_kernels = w[0].t.kernels_s;
    printf("baseline: device 0 alone: kernels %.3f ms, %.1f GB/s\n", base_kernels * 1e3,
           gbps(n, passes, base_kernels));
  }
  if (run_split(host, backend, k, n, passes, x, y, w, &wall)) {
    rc = 1;
    goto done;
  }
  double kernels = 0, upload = 0, download = 0;
  for (uint32_t d = 0; d < k; d++) {
    printf("device %u (%s): %llu elements: upload %.3f ms, kernels %.3f ms (%.1f GB/s), "
           "download %.3f ms\n",
           d, w[d].name, (unsigned long long)w[d].count, w[d].t.upload_s * 1e3,
           w[d].t.kernels_s * 1e3, gbps(w[d].count, passes, w[d].t.kernels_s),
           w[d].t.download_s * 1e3);
    if (w[d].t.kernels_s > kernels) kernels = w[d].t.kernels_s;
    if (w[d].t.upload_s > upload) upload = w[d].t.upload_s;
    if (w[d].t.download_s > download) download = w[d].t.download_s;
  }
  if (k == 1) base_kernels = kernels;
  printf("total: %u device%s: kernels %.3f ms (the slowest device), %.1f GB/s; end to end "
         "%.3f ms\n",
         k, k == 1 ? "" : "s", kernels * 1e3, gbps(n, passes, kernels), wall * 1e3);
  double speedup = kernels > 0 ? base_kernels / kernels : 0;
  printf("scaling: %u device%s: %.2fx the kernel throughput of device 0 alone (%.0f%% of "
         "linear)\n",
         k, k == 1 ? "" : "s", speedup, 100.0 * speedup / k);
  uint64_t bad = shard_check(y, 0, n, passes);
  if (bad) {
    printf("check: %llu of %llu elements differ from the CPU\n", (unsigned long long)bad,
           (unsigned long long)n);
    rc = 1;
  } else {
    printf("check: all %llu elements bit-exact against the CPU\n", (unsigned long long)n);
  }
done:
  free(x);
  free(y);
  free(w);
  vyre_host_close(host);
  return rc;
}
