/* xfer_probe.c -- the floors a host transfer is measured against: pinned and pageable cuMemcpy, cuMemHostRegister per call, memcpy and streaming-store copies into and out of pinned memory by 1..16 threads (docs/cuda-runtime.md, "Large host transfers"). */
#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <cuda.h>

#if defined(__SSE2__)
#include <emmintrin.h>
#endif

/* usage: xfer_probe [MiB [libcuda]]  (default 1024, libcuda.so.1).
 * Prints one line per measurement: median of 5 after a warm-up. */

#define RUNS 5

static struct {
  CUresult (*init)(unsigned);
  CUresult (*device_get)(CUdevice *, int);
  CUresult (*retain)(CUcontext *, CUdevice);
  CUresult (*push)(CUcontext);
  CUresult (*mem_alloc)(CUdeviceptr *, size_t);
  CUresult (*host_alloc)(void **, size_t, unsigned);
  CUresult (*stream_create)(CUstream *, unsigned);
  CUresult (*sync)(CUstream);
  CUresult (*htod_async)(CUdeviceptr, const void *, size_t, CUstream);
  CUresult (*dtoh_async)(void *, CUdeviceptr, size_t, CUstream);
  CUresult (*htod)(CUdeviceptr, const void *, size_t);
  CUresult (*dtoh)(void *, CUdeviceptr, size_t);
  CUresult (*reg)(void *, size_t, unsigned);
  CUresult (*unreg)(void *);
} cu;

static double now_s(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static int cmp(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return x < y ? -1 : x > y;
}

static double med(double *v) {
  qsort(v, RUNS, sizeof *v, cmp);
  return v[RUNS / 2];
}

static void line(const char *what, size_t bytes, double s) {
  printf("  %-44s %9.3f ms %8.1f GB/s\n", what, s * 1e3, (double)bytes / s / 1e9);
  fflush(stdout);
}

#define CK(call)                                                       \
  do {                                                                 \
    CUresult r_ = (call);                                              \
    if (r_ != CUDA_SUCCESS) {                                          \
      fprintf(stderr, "xfer_probe: %s failed with %d\n", #call, r_); \
      return 1;                                                        \
    }                                                                  \
  } while (0)

typedef struct part {
  char *dst;
  const char *src;
  size_t len;
  int stream;
} part;

/* The staging ring's copy (plugin/runtime/staging.c): streaming stores. */
static void copy_stream(void *dst, const void *src, size_t n) {
#if defined(__SSE2__)
  unsigned char *d = dst;
  const unsigned char *s = src;
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
  _mm_sfence();
  memcpy(d, s, n % 64u);
#else
  memcpy(dst, src, n);
#endif
}

static void *copy_part(void *arg) {
  part *p = arg;
  if (p->stream) copy_stream(p->dst, p->src, p->len);
  else memcpy(p->dst, p->src, p->len);
  return NULL;
}

/* memcpy of `bytes` split over `t` threads (threads made per call: an
 * upper bound on what a kept crew costs). */
static void split_copy(char *dst, const char *src, size_t bytes, int t, int stream) {
  pthread_t tid[16];
  part p[16] = {{NULL, NULL, 0, 0}};
  size_t each = (bytes / (size_t)t + 4095) & ~(size_t)4095;
  for (int i = 0; i < t; i++) {
    size_t at = (size_t)i * each;
    p[i].dst = dst + at;
    p[i].src = src + at;
    p[i].len = at >= bytes ? 0 : bytes - at < each ? bytes - at : each;
    p[i].stream = stream;
    if (i) pthread_create(&tid[i], NULL, copy_part, &p[i]);
  }
  copy_part(&p[0]);
  for (int i = 1; i < t; i++) pthread_join(tid[i], NULL);
}

static int probe(size_t bytes, CUdeviceptr dev, char *page, char *pinned, CUstream s) {
  double v[RUNS], a[RUNS], b[RUNS];
  char what[96];
  size_t mib = bytes >> 20;
  for (int i = -1; i < RUNS; i++) {
    double t0 = now_s();
    CK(cu.htod_async(dev, pinned, bytes, s));
    CK(cu.sync(s));
    if (i >= 0) v[i] = now_s() - t0;
  }
  snprintf(what, sizeof what, "pinned HtoD %zu MiB (floor)", mib);
  line(what, bytes, med(v));
  for (int i = -1; i < RUNS; i++) {
    double t0 = now_s();
    CK(cu.dtoh_async(pinned, dev, bytes, s));
    CK(cu.sync(s));
    if (i >= 0) v[i] = now_s() - t0;
  }
  snprintf(what, sizeof what, "pinned DtoH %zu MiB (floor)", mib);
  line(what, bytes, med(v));
  for (int i = -1; i < RUNS; i++) {
    double t0 = now_s();
    CK(cu.htod(dev, page, bytes));
    if (i >= 0) v[i] = now_s() - t0;
  }
  snprintf(what, sizeof what, "pageable cuMemcpyHtoD %zu MiB", mib);
  line(what, bytes, med(v));
  for (int i = -1; i < RUNS; i++) {
    double t0 = now_s();
    CK(cu.dtoh(page, dev, bytes));
    if (i >= 0) v[i] = now_s() - t0;
  }
  snprintf(what, sizeof what, "pageable cuMemcpyDtoH %zu MiB", mib);
  line(what, bytes, med(v));
  for (int i = -1; i < RUNS; i++) {
    double t0 = now_s();
    CK(cu.reg(page, bytes, 0));
    double t1 = now_s();
    CK(cu.htod_async(dev, page, bytes, s));
    CK(cu.sync(s));
    double t2 = now_s();
    CK(cu.unreg(page));
    double t3 = now_s();
    if (i >= 0) {
      v[i] = t3 - t0;
      a[i] = t1 - t0;
      b[i] = t3 - t2;
    }
  }
  snprintf(what, sizeof what, "register + HtoD + unregister %zu MiB", mib);
  line(what, bytes, med(v));
  printf("    of which cuMemHostRegister %.3f ms, cuMemHostUnregister %.3f ms\n",
         med(a) * 1e3, med(b) * 1e3);
  for (int nt = 0; nt < 2; nt++) {
    for (int t = 1; t <= 16; t *= 2) {
      for (int i = -1; i < RUNS; i++) {
        double t0 = now_s();
        split_copy(pinned, page, bytes, t, nt);
        if (i >= 0) v[i] = now_s() - t0;
      }
      snprintf(what, sizeof what, "%s pageable -> pinned %zu MiB, %d thr", nt ? "stream" : "memcpy",
               mib, t);
      line(what, bytes, med(v));
    }
    for (int t = 1; t <= 16; t *= 2) {
      for (int i = -1; i < RUNS; i++) {
        double t0 = now_s();
        split_copy(page, pinned, bytes, t, nt);
        if (i >= 0) v[i] = now_s() - t0;
      }
      snprintf(what, sizeof what, "%s pinned -> pageable %zu MiB, %d thr", nt ? "stream" : "memcpy",
               mib, t);
      line(what, bytes, med(v));
    }
  }
  return 0;
}

int main(int argc, char **argv) {
  size_t mib = argc > 1 ? strtoul(argv[1], NULL, 0) : 1024;
  const char *lib = argc > 2 ? argv[2] : "libcuda.so.1";
  if (!mib) mib = 1024;
  void *dl = dlopen(lib, RTLD_NOW | RTLD_LOCAL);
  if (!dl) {
    fprintf(stderr, "xfer_probe: %s\n", dlerror());
    return 77;
  }
#define SYM(field, name)                                                   \
  if (!(*(void **)&cu.field = dlsym(dl, name))) {                          \
    fprintf(stderr, "xfer_probe: %s lacks %s\n", lib, name);               \
    return 1;                                                              \
  }
  SYM(init, "cuInit");
  SYM(device_get, "cuDeviceGet");
  SYM(retain, "cuDevicePrimaryCtxRetain");
  SYM(push, "cuCtxPushCurrent_v2");
  SYM(mem_alloc, "cuMemAlloc_v2");
  SYM(host_alloc, "cuMemHostAlloc");
  SYM(stream_create, "cuStreamCreate");
  SYM(sync, "cuStreamSynchronize");
  SYM(htod_async, "cuMemcpyHtoDAsync_v2");
  SYM(dtoh_async, "cuMemcpyDtoHAsync_v2");
  SYM(htod, "cuMemcpyHtoD_v2");
  SYM(dtoh, "cuMemcpyDtoH_v2");
  SYM(reg, "cuMemHostRegister_v2");
  SYM(unreg, "cuMemHostUnregister");
  if (cu.init(0) != CUDA_SUCCESS) return 77;
  CUdevice d;
  CUcontext ctx;
  CUdeviceptr dev;
  void *pinned;
  CUstream s;
  size_t bytes = mib << 20;
  CK(cu.device_get(&d, 0));
  CK(cu.retain(&ctx, d));
  CK(cu.push(ctx));
  CK(cu.mem_alloc(&dev, bytes));
  CK(cu.host_alloc(&pinned, bytes, CU_MEMHOSTALLOC_PORTABLE));
  CK(cu.stream_create(&s, CU_STREAM_NON_BLOCKING));
  char *page = malloc(bytes);
  if (!page) return 1;
  for (size_t i = 0; i < bytes; i += 64) page[i] = (char)i;
  printf("xfer_probe: %zu MiB and %zu MiB\n", mib, mib / 4);
  if (probe(bytes, dev, page, pinned, s)) return 1;
  if (mib >= 4 && probe(bytes / 4, dev, page, pinned, s)) return 1;
  return 0;
}
