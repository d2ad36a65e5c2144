// peers.cu -- the harness of the CUDA peers (peers.h): device selection, the launch floor and copy bandwidth, and one peer run (upload once, time launch + synchronise, download, free).
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "peers_impl.h"

static int g_device = -1, g_sms = 0;

static double now_us(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec * 1e6 + (double)ts.tv_nsec / 1e3;
}

static void say(char *why, size_t why_size, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(why, why_size, fmt, ap);
  va_end(ap);
}

/* A failed CUDA call: what failed, the error's name and text, the kernel. */
static int cuda_fail(char *why, size_t why_size, const char *call, cudaError_t e, const char *kernel) {
  say(why, why_size, "%s failed: %s (%s)%s%s. Fix: check the driver and the device (nvidia-smi)",
      call, cudaGetErrorName(e), cudaGetErrorString(e), kernel && *kernel ? ", kernel " : "",
      kernel ? kernel : "");
  return -1;
}

#define TRY(call, kernel)                                      \
  do {                                                         \
    cudaError_t e_ = (call);                                   \
    if (e_ != cudaSuccess) {                                   \
      rc = cuda_fail(why, why_size, #call, e_, (kernel));      \
      goto done;                                               \
    }                                                          \
  } while (0)

static int cmp_double(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return x < y ? -1 : x > y;
}

extern "C" int wl_peer_abi(void) { return WL_PEER_ABI; }

extern "C" int wl_peer_open(uint32_t device, char *why, size_t why_size) {
  int n = 0, rc = 0;
  TRY(cudaGetDeviceCount(&n), NULL);
  if ((int)device >= n) {
    say(why, why_size, "no CUDA device %u (%d present)", device, n);
    return -1;
  }
  TRY(cudaSetDevice((int)device), NULL);
  TRY(cudaDeviceGetAttribute(&g_sms, cudaDevAttrMultiProcessorCount, (int)device), NULL);
  TRY(cudaFree(0), NULL); /* create the primary context now, not in a timed call */
  g_device = (int)device;
done:
  return rc;
}

/* Wait for stream s the way vyre's dispatch does (docs/cuda-runtime.md:
 * it polls an event rather than sleeping in the driver), so that the
 * comparison measures the kernels, not two ways of waiting:
 * cudaStreamSynchronize measured 3-4 us slower per call than the poll on
 * an H200. */
static cudaError_t wait_spin(cudaStream_t s) {
  cudaError_t e;
  while ((e = cudaStreamQuery(s)) == cudaErrorNotReady) {
  }
  return e;
}

extern "C" int wl_peer_floor_measure(wl_peer_floor *f, char *why, size_t why_size) {
  const size_t bytes = 256u << 20;
  const int launches = 1000, copies = 10;
  void *src = NULL, *dst = NULL;
  cudaStream_t s = NULL;
  cudaEvent_t e0 = NULL, e1 = NULL;
  double v[1000];
  float ms[10];
  int rc = 0;
  memset(f, 0, sizeof *f);
  if (g_device < 0) {
    say(why, why_size, "wl_peer_open was not called");
    return -1;
  }
  cudaDeviceProp prop;
  TRY(cudaGetDeviceProperties(&prop, g_device), NULL);
  snprintf(f->device, sizeof f->device, "%.127s", prop.name);
  TRY(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking), NULL);
  for (int i = 0; i < 10 + launches; i++) {
    double t0 = now_us();
    TRY(wlp_launch_empty(s), "k_empty");
    TRY(wait_spin(s), "k_empty");
    if (i >= 10) v[i - 10] = now_us() - t0;
  }
  qsort(v, launches, sizeof *v, cmp_double);
  f->launch_p50_us = 0.5 * (v[launches / 2 - 1] + v[launches / 2]);
  TRY(cudaMalloc(&src, bytes), NULL);
  TRY(cudaMalloc(&dst, bytes), NULL);
  TRY(cudaMemsetAsync(src, 1, bytes, s), NULL);
  TRY(cudaEventCreate(&e0), NULL);
  TRY(cudaEventCreate(&e1), NULL);
  for (int kind = 0; kind < 2; kind++) {
    for (int i = 0; i < copies + 2; i++) {
      TRY(cudaEventRecord(e0, s), NULL);
      if (kind == 0) TRY(cudaMemcpyAsync(dst, src, bytes, cudaMemcpyDeviceToDevice, s), NULL);
      else TRY(wlp_launch_copy(src, dst, bytes / 16, g_sms, s), "k_copy");
      TRY(cudaEventRecord(e1, s), NULL);
      TRY(cudaEventSynchronize(e1), NULL);
      if (i >= 2) TRY(cudaEventElapsedTime(&ms[i - 2], e0, e1), NULL);
    }
    qsort(ms, copies, sizeof *ms, [](const void *a, const void *b) {
      float x = *(const float *)a, y = *(const float *)b;
      return x < y ? -1 : x > y;
    });
    double med = 0.5 * (ms[copies / 2 - 1] + ms[copies / 2]);
    double gbps = 2.0 * (double)bytes / (med * 1e-3) / 1e9;
    if (kind == 0) f->memcpy_gbps = gbps;
    else f->copy_kernel_gbps = gbps;
  }
done:
  if (e0) cudaEventDestroy(e0);
  if (e1) cudaEventDestroy(e1);
  cudaFree(src);
  cudaFree(dst);
  if (s) cudaStreamDestroy(s);
  return rc;
}

static const wlp_peer *find_peer(const char *name) {
  for (unsigned k = 0; k < wlp_peer_count; k++)
    if (!strcmp(wlp_peers[k].name, name)) return &wlp_peers[k];
  return NULL;
}

/* The timed call: clear what accumulates, launch, wait. */
static cudaError_t one_call(wlp_job *j, const wlp_peer *p) {
  const wl_instance *w = j->w;
  for (uint32_t i = 0; i < w->buf_count; i++)
    if (w->buf[i].clear) {
      snprintf(j->kernel, sizeof j->kernel, "cudaMemsetAsync (clear)");
      cudaError_t e = cudaMemsetAsync(j->d[i], 0, w->buf[i].size, j->stream);
      if (e != cudaSuccess) return e;
    }
  snprintf(j->kernel, sizeof j->kernel, "%s", p->name);
  cudaError_t e = p->launch(j);
  if (e != cudaSuccess) return e;
  return wait_spin(j->stream);
}

extern "C" int wl_peer_run(const char *name, const wl_instance *w, uint32_t warm, uint32_t runs,
                           double *us, void *const *outputs, char *why, size_t why_size) {
  if (why_size) why[0] = 0;
  const wlp_peer *p = find_peer(name);
  if (!p) {
    say(why, why_size, "no CUDA peer for workload '%s' in this library", name);
    return 1;
  }
  if (g_device < 0) {
    say(why, why_size, "wl_peer_open was not called");
    return -1;
  }
  wlp_job j;
  memset(&j, 0, sizeof j);
  j.w = w;
  j.sms = g_sms;
  int rc = 0;
  TRY(cudaStreamCreateWithFlags(&j.stream, cudaStreamNonBlocking), NULL);
  for (uint32_t i = 0; i < w->buf_count; i++) {
    if (!w->buf[i].size) continue;
    TRY(cudaMalloc(&j.d[i], w->buf[i].size), NULL);
    if (w->buf[i].data)
      TRY(cudaMemcpyAsync(j.d[i], w->buf[i].data, w->buf[i].size, cudaMemcpyHostToDevice, j.stream),
          NULL);
    else TRY(cudaMemsetAsync(j.d[i], 0, w->buf[i].size, j.stream), NULL);
  }
  {
    cudaError_t e = p->prepare(&j, why, why_size);
    if (e == cudaErrorInvalidValue && why[0]) {
      rc = -1;
      goto done;
    }
    TRY(e, j.kernel);
  }
  TRY(cudaStreamSynchronize(j.stream), j.kernel);
  for (uint32_t i = 0; i < warm + runs; i++) {
    double t0 = now_us();
    TRY(one_call(&j, p), j.kernel);
    if (i >= warm) us[i - warm] = now_us() - t0;
  }
  for (uint32_t i = 0, k = 0; i < w->buf_count; i++) {
    if (!w->buf[i].is_output) continue;
    if (w->buf[i].size)
      TRY(cudaMemcpy(outputs[k], j.d[i], w->buf[i].size, cudaMemcpyDeviceToHost), NULL);
    k++;
  }
done:
  for (uint32_t i = 0; i < WL_MAX_BUFFERS; i++) cudaFree(j.d[i]);
  cudaFree(j.scratch);
  if (j.stream) cudaStreamDestroy(j.stream);
  return rc;
}
