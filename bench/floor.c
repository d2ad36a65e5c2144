/* floor.c -- the raw Driver-API floor: each latency and transfer case of `vyre bench`, done with bare driver calls and a hand-written kernel. */
/*
 * usage: floor [--sizes N,N,...] [--iters N]
 * Prints one JSON object per case, as `vyre bench --json` and
 * bench/peers.py do, with "peer": "floor".  Nothing here goes through
 * vyre: the numbers are what the driver and the GPU allow, so a vyre case
 * divided by its floor is the price of everything vyre adds.
 *
 * libcuda is opened with dlopen, as the plugin does, so this builds
 * wherever cuda.h is; without a driver it prints why and exits 77.
 */
#include <cuda.h>
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define XSTR(x) STR(x)
#define STR(x) #x

/* Each entry by the name cuda.h maps it to (cuMemAlloc -> cuMemAlloc_v2). */
#define FLOOR_API(X)                                                                        \
  X(cuInit) X(cuDeviceGet) X(cuDevicePrimaryCtxRetain) X(cuCtxSetCurrent) X(cuModuleLoadData) \
  X(cuModuleGetFunction) X(cuMemAlloc) X(cuMemFree) X(cuMemAllocHost) X(cuMemFreeHost)       \
  X(cuMemcpyHtoD) X(cuMemcpyDtoH) X(cuMemcpyHtoDAsync) X(cuMemcpyDtoHAsync) X(cuLaunchKernel) \
  X(cuStreamCreate) X(cuStreamDestroy) X(cuStreamSynchronize) X(cuStreamBeginCapture)         \
  X(cuStreamEndCapture) X(cuGraphInstantiate) X(cuGraphLaunch) X(cuGraphExecDestroy)          \
  X(cuGraphDestroy) X(cuEventCreate) X(cuEventRecord) X(cuEventSynchronize)                   \
  X(cuEventElapsedTime) X(cuEventDestroy) X(cuGetErrorName)

#define DECLARE(name) static __typeof__(&name) p_##name;
FLOOR_API(DECLARE)

#define CK(call)                                                                     \
  do {                                                                               \
    CUresult r_ = (call);                                                            \
    if (r_ != CUDA_SUCCESS) {                                                        \
      const char *n_ = "?";                                                          \
      if (p_cuGetErrorName) p_cuGetErrorName(r_, &n_);                               \
      fprintf(stderr, "floor: %s failed: %s (%d), line %d\n", #call, n_, (int)r_, __LINE__); \
      exit(1);                                                                       \
    }                                                                                \
  } while (0)

/* saxpy: y[i] = a * x[i] + y[i], one element per thread.
 * saxpy4: the same on float4, n a multiple of 4 (n4 = n / 4 vectors).
 * copy4: y = x on float4. */
static const char ptx[] =
    ".version 8.0\n.target sm_70\n.address_size 64\n"
    ".visible .entry saxpy(.param .f32 a, .param .u64 x, .param .u64 y, .param .u32 n) {\n"
    "  .reg .pred %p; .reg .b32 %r<6>; .reg .f32 %f<4>; .reg .b64 %d<6>;\n"
    "  mov.u32 %r0, %ctaid.x; mov.u32 %r1, %ntid.x; mov.u32 %r2, %tid.x;\n"
    "  mad.lo.u32 %r3, %r0, %r1, %r2; ld.param.u32 %r4, [n];\n"
    "  setp.ge.u32 %p, %r3, %r4; @%p ret;\n"
    "  ld.param.f32 %f0, [a]; ld.param.u64 %d0, [x]; ld.param.u64 %d1, [y];\n"
    "  mul.wide.u32 %d2, %r3, 4; add.u64 %d3, %d0, %d2; add.u64 %d4, %d1, %d2;\n"
    "  ld.global.f32 %f1, [%d3]; ld.global.f32 %f2, [%d4];\n"
    "  fma.rn.f32 %f3, %f0, %f1, %f2; st.global.f32 [%d4], %f3; ret;\n}\n"
    ".visible .entry saxpy4(.param .f32 a, .param .u64 x, .param .u64 y, .param .u32 n4) {\n"
    "  .reg .pred %p; .reg .b32 %r<6>; .reg .f32 %f<12>; .reg .b64 %d<6>;\n"
    "  mov.u32 %r0, %ctaid.x; mov.u32 %r1, %ntid.x; mov.u32 %r2, %tid.x;\n"
    "  mad.lo.u32 %r3, %r0, %r1, %r2; ld.param.u32 %r4, [n4];\n"
    "  setp.ge.u32 %p, %r3, %r4; @%p ret;\n"
    "  ld.param.f32 %f0, [a]; ld.param.u64 %d0, [x]; ld.param.u64 %d1, [y];\n"
    "  mul.wide.u32 %d2, %r3, 16; add.u64 %d3, %d0, %d2; add.u64 %d4, %d1, %d2;\n"
    "  ld.global.nc.v4.f32 {%f1, %f2, %f3, %f4}, [%d3];\n"
    "  ld.global.v4.f32 {%f5, %f6, %f7, %f8}, [%d4];\n"
    "  fma.rn.f32 %f5, %f0, %f1, %f5; fma.rn.f32 %f6, %f0, %f2, %f6;\n"
    "  fma.rn.f32 %f7, %f0, %f3, %f7; fma.rn.f32 %f8, %f0, %f4, %f8;\n"
    "  st.global.v4.f32 [%d4], {%f5, %f6, %f7, %f8}; ret;\n}\n"
    ".visible .entry copy4(.param .u64 x, .param .u64 y, .param .u32 n4) {\n"
    "  .reg .pred %p; .reg .b32 %r<6>; .reg .f32 %f<5>; .reg .b64 %d<6>;\n"
    "  mov.u32 %r0, %ctaid.x; mov.u32 %r1, %ntid.x; mov.u32 %r2, %tid.x;\n"
    "  mad.lo.u32 %r3, %r0, %r1, %r2; ld.param.u32 %r4, [n4];\n"
    "  setp.ge.u32 %p, %r3, %r4; @%p ret;\n"
    "  ld.param.u64 %d0, [x]; ld.param.u64 %d1, [y];\n"
    "  mul.wide.u32 %d2, %r3, 16; add.u64 %d3, %d0, %d2; add.u64 %d4, %d1, %d2;\n"
    "  ld.global.nc.v4.f32 {%f1, %f2, %f3, %f4}, [%d3];\n"
    "  st.global.v4.f32 [%d4], {%f1, %f2, %f3, %f4}; ret;\n}\n";

static CUfunction f_saxpy, f_saxpy4, f_copy4;
static CUstream stream;

static double now_us(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec * 1e6 + (double)ts.tv_nsec / 1e3;
}

static int cmp_double(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return x < y ? -1 : x > y;
}

static double median(double *v, unsigned n) {
  qsort(v, n, sizeof *v, cmp_double);
  return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

static void emit(const char *name, double us, double bytes) {
  printf("{\"peer\": \"floor\", \"case\": \"%s\", \"median_us\": %.3f", name, us);
  if (bytes > 0) printf(", \"gbps\": %.1f", bytes / (us * 1e-6) / 1e9);
  printf("}\n");
  fflush(stdout);
}

static void launch_saxpy(CUdeviceptr x, CUdeviceptr y, unsigned n) {
  float a = 2.0f;
  void *args[] = {&a, &x, &y, &n};
  CK(p_cuLaunchKernel(f_saxpy, (n + 255) / 256, 1, 1, 256, 1, 1, 0, stream, args, NULL));
}

static float *host_floats(size_t n) {
  float *v = malloc(n * sizeof *v);
  if (!v) {
    fprintf(stderr, "floor: out of host memory for %zu floats\n", n);
    exit(1);
  }
  for (size_t i = 0; i < n; i++) v[i] = (float)(i % 1000) * 0.001f;
  return v;
}

/* The latency cases on 1024 floats. */
static void latency_cases(unsigned iters) {
  enum { N = 1024, STEPS = 100 };
  CUdeviceptr x, y;
  CK(p_cuMemAlloc(&x, N * 4));
  CK(p_cuMemAlloc(&y, N * 4));
  float *hx = host_floats(N), *hy = host_floats(N), out[N];
  CK(p_cuMemcpyHtoD(x, hx, N * 4));
  CK(p_cuMemcpyHtoD(y, hy, N * 4));
  double *v = calloc(iters, sizeof *v);
  if (!v) exit(1);

  /* dispatch_resident_1k: launch + wait. */
  for (unsigned i = 0; i < iters / 10; i++) launch_saxpy(x, y, N);
  CK(p_cuStreamSynchronize(stream));
  for (unsigned i = 0; i < iters; i++) {
    double t0 = now_us();
    launch_saxpy(x, y, N);
    CK(p_cuStreamSynchronize(stream));
    v[i] = now_us() - t0;
  }
  emit("dispatch_resident_1k", median(v, iters), 0);

  /* roundtrip_1k: the caller's memory through pinned staging, as any
   * runtime must (the caller's arrays are pageable). */
  void *stage;
  CK(p_cuMemAllocHost(&stage, 3 * N * 4));
  float *sx = stage, *sy = sx + N, *so = sy + N;
  unsigned rt = iters / 2;
  for (unsigned i = 0; i < rt + rt / 10; i++) {
    double t0 = now_us();
    memcpy(sx, hx, N * 4);
    memcpy(sy, hy, N * 4);
    CK(p_cuMemcpyHtoDAsync(x, sx, N * 4, stream));
    CK(p_cuMemcpyHtoDAsync(y, sy, N * 4, stream));
    launch_saxpy(x, y, N);
    CK(p_cuMemcpyDtoHAsync(so, y, N * 4, stream));
    CK(p_cuStreamSynchronize(stream));
    memcpy(out, so, N * 4);
    if (i >= rt / 10) v[i - rt / 10] = now_us() - t0;
  }
  emit("roundtrip_1k", median(v, rt), 0);
  CK(p_cuMemFreeHost(stage));

  /* sequence_1k_x100: 100 queued launches, one wait, per launch. */
  unsigned rounds = 30;
  for (unsigned i = 0; i < rounds + 3; i++) {
    double t0 = now_us();
    for (int k = 0; k < STEPS; k++) launch_saxpy(x, y, N);
    CK(p_cuStreamSynchronize(stream));
    if (i >= 3) v[i - 3] = (now_us() - t0) / STEPS;
  }
  emit("sequence_1k_x100", median(v, rounds), 0);

  /* graph_1k_x1000: those 100 launches captured once, replayed 10 times. */
  CUgraph g;
  CUgraphExec ge;
  CK(p_cuStreamBeginCapture(stream, CU_STREAM_CAPTURE_MODE_THREAD_LOCAL));
  for (int k = 0; k < STEPS; k++) launch_saxpy(x, y, N);
  CK(p_cuStreamEndCapture(stream, &g));
  CK(p_cuGraphInstantiate(&ge, g, 0));
  for (unsigned i = 0; i < rounds + 3; i++) {
    double t0 = now_us();
    for (int r = 0; r < 10; r++) CK(p_cuGraphLaunch(ge, stream));
    CK(p_cuStreamSynchronize(stream));
    if (i >= 3) v[i - 3] = (now_us() - t0) / (STEPS * 10);
  }
  emit("graph_1k_x1000", median(v, rounds), 0);
  CK(p_cuGraphExecDestroy(ge));
  CK(p_cuGraphDestroy(g));
  CK(p_cuMemcpyDtoH(out, y, N * 4));
  free(v);
  free(hx);
  free(hy);
  CK(p_cuMemFree(x));
  CK(p_cuMemFree(y));
}

/* Device time of fn between two events, median of iters. */
static double event_median(void (*fn)(void *, int), void *ctx, unsigned iters) {
  CUevent e0, e1;
  CK(p_cuEventCreate(&e0, CU_EVENT_DEFAULT));
  CK(p_cuEventCreate(&e1, CU_EVENT_DEFAULT));
  double *v = calloc(iters, sizeof *v);
  if (!v) exit(1);
  for (unsigned i = 0; i < iters + 3; i++) {
    CK(p_cuEventRecord(e0, stream));
    fn(ctx, (int)(i & 1));
    CK(p_cuEventRecord(e1, stream));
    CK(p_cuEventSynchronize(e1));
    float ms;
    CK(p_cuEventElapsedTime(&ms, e0, e1));
    if (i >= 3) v[i - 3] = ms * 1e3;
  }
  double m = median(v, iters);
  free(v);
  CK(p_cuEventDestroy(e0));
  CK(p_cuEventDestroy(e1));
  return m;
}

typedef struct bw {
  CUdeviceptr x[2], y[2];
  unsigned n4;
} bw;

static void run_saxpy4(void *ctx, int k) {
  bw *b = ctx;
  float a = 2.0f;
  void *args[] = {&a, &b->x[k], &b->y[k], &b->n4};
  CK(p_cuLaunchKernel(f_saxpy4, (b->n4 + 255) / 256, 1, 1, 256, 1, 1, 0, stream, args, NULL));
}

static void run_copy4(void *ctx, int k) {
  bw *b = ctx;
  void *args[] = {&b->x[k], &b->y[k], &b->n4};
  CK(p_cuLaunchKernel(f_copy4, (b->n4 + 255) / 256, 1, 1, 256, 1, 1, 0, stream, args, NULL));
}

static void bandwidth_cases(unsigned long long n) {
  bw b;
  b.n4 = (unsigned)(n / 4);
  for (int k = 0; k < 2; k++) {
    CK(p_cuMemAlloc(&b.x[k], n * 4));
    CK(p_cuMemAlloc(&b.y[k], n * 4));
  }
  char name[64];
  snprintf(name, sizeof name, "saxpy_bw_%llu", n);
  emit(name, event_median(run_saxpy4, &b, 30), 12.0 * (double)n);
  snprintf(name, sizeof name, "copy_bw_%llu", n);
  emit(name, event_median(run_copy4, &b, 30), 8.0 * (double)n);
  for (int k = 0; k < 2; k++) {
    CK(p_cuMemFree(b.x[k]));
    CK(p_cuMemFree(b.y[k]));
  }
}

/* Host <-> device copies of `bytes`: pinned both ways, and pageable
 * (the driver stages it), host wall median of 5. */
/* Medians kept for the end-to-end floors (index: 0 = 256m, 1 = 1g). */
static double up_us[2], down_us[2];

static void transfer_cases(size_t bytes, const char *tag) {
  CUdeviceptr d;
  CK(p_cuMemAlloc(&d, bytes));
  void *pinned;
  CK(p_cuMemAllocHost(&pinned, bytes));
  memset(pinned, 1, bytes);
  char *pageable = malloc(bytes);
  if (!pageable) exit(1);
  memset(pageable, 2, bytes);
  double v[5];
  char name[64];
  struct {
    const char *what;
    void *host;
    int up;
  } kinds[] = {{"h2d_pinned", pinned, 1}, {"d2h_pinned", pinned, 0},
               {"h2d_pageable", pageable, 1}, {"d2h_pageable", pageable, 0}};
  for (int k = 0; k < 4; k++) {
    for (int i = 0; i < 6; i++) {
      double t0 = now_us();
      if (kinds[k].up) CK(p_cuMemcpyHtoD(d, kinds[k].host, bytes));
      else CK(p_cuMemcpyDtoH(kinds[k].host, d, bytes));
      if (i) v[i - 1] = now_us() - t0;
    }
    snprintf(name, sizeof name, "%s_%s", kinds[k].what, tag);
    double m = median(v, 5);
    emit(name, m, (double)bytes);
    if (k == 0) up_us[bytes >= (1u << 30)] = m;
    if (k == 1) down_us[bytes >= (1u << 30)] = m;
  }
  free(pageable);
  CK(p_cuMemFreeHost(pinned));
  CK(p_cuMemFree(d));
}

int main(int argc, char **argv) {
  unsigned long long sizes[8] = {1u << 20, 1u << 24, 1u << 28};
  unsigned nsizes = 3, iters = 2000;
  for (int i = 1; i < argc; i++) {
    if (!strcmp(argv[i], "--sizes") && i + 1 < argc) {
      nsizes = 0;
      for (char *p = argv[++i]; *p && nsizes < 8;) {
        char *end;
        sizes[nsizes] = strtoull(p, &end, 0);
        if (end == p || sizes[nsizes] == 0 || sizes[nsizes] % 4 || sizes[nsizes] > (1ull << 31)) {
          fprintf(stderr, "floor: --sizes takes multiples of 4 up to 2^31\n");
          return 2;
        }
        nsizes++;
        p = *end == ',' ? end + 1 : end;
      }
    } else if (!strcmp(argv[i], "--iters") && i + 1 < argc) {
      iters = (unsigned)strtoul(argv[++i], NULL, 0);
      if (iters < 10) iters = 10;
    } else {
      fprintf(stderr, "usage: floor [--sizes N,N,...] [--iters N]\n");
      return 2;
    }
  }
  void *lib = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
  if (!lib) {
    fprintf(stderr, "floor: no NVIDIA driver (%s): skipped\n", dlerror());
    return 77;
  }
#define LOAD(name)                                                         \
  if (!(*(void **)&p_##name = dlsym(lib, XSTR(name)))) {                   \
    fprintf(stderr, "floor: libcuda lacks %s\n", XSTR(name));              \
    return 1;                                                              \
  }
  FLOOR_API(LOAD)
  CUdevice dev;
  CUcontext ctx;
  CUmodule mod;
  if (p_cuInit(0) != CUDA_SUCCESS || p_cuDeviceGet(&dev, 0) != CUDA_SUCCESS) {
    fprintf(stderr, "floor: no CUDA device: skipped\n");
    return 77;
  }
  CK(p_cuDevicePrimaryCtxRetain(&ctx, dev));
  CK(p_cuCtxSetCurrent(ctx));
  CK(p_cuModuleLoadData(&mod, ptx));
  CK(p_cuModuleGetFunction(&f_saxpy, mod, "saxpy"));
  CK(p_cuModuleGetFunction(&f_saxpy4, mod, "saxpy4"));
  CK(p_cuModuleGetFunction(&f_copy4, mod, "copy4"));
  CK(p_cuStreamCreate(&stream, CU_STREAM_NON_BLOCKING));
  latency_cases(iters);
  for (unsigned k = 0; k < nsizes; k++) bandwidth_cases(sizes[k]);
  transfer_cases((size_t)256 << 20, "256m");
  transfer_cases((size_t)1 << 30, "1g");
  /* The floors of vyre bench's transfer cases: the same bytes at pinned
   * cuMemcpy speed, nothing else (no copy out of pageable memory). */
  emit("host_dispatch_1g", up_us[1], (double)(1u << 30));
  emit("saxpy_roundtrip_256m", 2 * up_us[0] + down_us[0], 3.0 * (double)(256u << 20));
  emit("resident_upload_1g", up_us[1], (double)(1u << 30));
  emit("resident_download_1g", down_us[1], (double)(1u << 30));
  CK(p_cuStreamDestroy(stream));
  return 0;
}
