/* compute_bound.c -- times vyre-generated PTX (matmul_tiled, matmul, sum) through the CUDA driver API with the kernel ABI of docs/kernel-abi.md; checks matmul_tiled against matmul bit for bit and the sum against a double-precision sum. Run by bench/compute_bound.sh. */
#include <cuda.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define CK(x)                                                                         \
  do {                                                                                \
    CUresult r_ = (x);                                                                \
    if (r_ != CUDA_SUCCESS) {                                                         \
      const char *s_ = NULL;                                                          \
      cuGetErrorString(r_, &s_);                                                      \
      fprintf(stderr, "%s:%d %s: %s\n", __FILE__, __LINE__, #x, s_ ? s_ : "?");      \
      exit(1);                                                                        \
    }                                                                                 \
  } while (0)

static char *slurp(const char *path) {
  FILE *f = fopen(path, "rb");
  if (!f) { perror(path); exit(1); }
  fseek(f, 0, SEEK_END);
  long n = ftell(f);
  fseek(f, 0, SEEK_SET);
  char *s = calloc(1, n + 1);
  if (fread(s, 1, n, f) != (size_t)n) exit(1);
  fclose(f);
  return s;
}

/* Loads the kernel of a PTX file; *words gets the size of its count-words
 * parameter (docs/kernel-abi.md: 1 + the program's buffer count). */
static CUfunction load(const char *path, CUmodule *mod, unsigned *words) {
  char *ptx = slurp(path);
  char *e = strstr(ptx, ".entry "), *c = strstr(ptx, "counts[");
  if (!c || sscanf(c + 7, "%u", words) != 1) {
    fprintf(stderr, "%s: no counts[] parameter (docs/kernel-abi.md)\n", path);
    exit(1);
  }
  *words /= 4;
  char name[64];
  sscanf(e + 7, "%63[^(]", name);
  char log[8192] = "";
  CUjit_option opt[2] = {CU_JIT_ERROR_LOG_BUFFER, CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES};
  void *val[2] = {log, (void *)(uintptr_t)sizeof log};
  CUresult r = cuModuleLoadDataEx(mod, ptx, 2, opt, val);
  if (r != CUDA_SUCCESS) { fprintf(stderr, "JIT %s: %d %s\n", path, r, log); exit(1); }
  CUfunction f;
  CK(cuModuleGetFunction(&f, *mod, name));
  free(ptx);
  return f;
}

static uint64_t rng = 0x9E3779B97F4A7C15ull;
static float frand(void) { /* [-1, 1) */
  rng = rng * 6364136223846793005ull + 1442695040888963407ull;
  return (float)((int32_t)(rng >> 32)) / 2147483648.0f;
}

static int cmpf(const void *a, const void *b) {
  float x = *(const float *)a, y = *(const float *)b;
  return x < y ? -1 : x > y;
}

static CUdeviceptr params(const uint32_t *counts, uint32_t n, uint32_t dispatch) {
  uint32_t w[64] = {0};
  w[0] = dispatch;
  for (uint32_t i = 0; i < n; i++) w[1 + i] = counts[i];
  CUdeviceptr d;
  CK(cuMemAlloc(&d, 4 * (n + 5)));
  CK(cuMemcpyHtoD(d, w, 4 * (n + 5)));
  return d;
}

static int matmul(const char *tiled_ptx, const char *naive_ptx, uint32_t M, uint32_t N, uint32_t K, int reps) {
  CUmodule m1, m2;
  unsigned wtn, wnn;
  CUfunction ft = load(tiled_ptx, &m1, &wtn), fn = load(naive_ptx, &m2, &wnn);
  if (wtn != 7 || wnn != 7) {
    fprintf(stderr, "matmul: %u and %u count words, expected 7 (dims, A, B, C, As, Bs)\n", wtn, wnn);
    return 1;
  }
  size_t na = (size_t)M * K, nb = (size_t)K * N, nc = (size_t)M * N;
  float *A = malloc(na * 4), *B = malloc(nb * 4), *C0 = malloc(nc * 4), *C1 = malloc(nc * 4), *C2 = malloc(nc * 4);
  for (size_t i = 0; i < na; i++) A[i] = frand();
  for (size_t i = 0; i < nb; i++) B[i] = frand();
  for (size_t i = 0; i < nc; i++) C0[i] = frand();
  uint32_t dims[3] = {M, N, K};
  CUdeviceptr dd, da, db, dc;
  CK(cuMemAlloc(&dd, 16));
  CK(cuMemAlloc(&da, na * 4));
  CK(cuMemAlloc(&db, nb * 4));
  CK(cuMemAlloc(&dc, nc * 4));
  CK(cuMemcpyHtoD(dd, dims, 12));
  CK(cuMemcpyHtoD(da, A, na * 4));
  CK(cuMemcpyHtoD(db, B, nb * 4));
  uint32_t ct[6] = {3, (uint32_t)na, (uint32_t)nb, (uint32_t)nc, 2048, 2048};
  uint32_t cn[6] = {3, (uint32_t)na, (uint32_t)nb, (uint32_t)nc, 256, 256};
  CUdeviceptr pt = params(ct, 6, (uint32_t)nc), pn = params(cn, 6, (uint32_t)nc);
  /* the count words by value, then the params block (docs/kernel-abi.md) */
  uint32_t wt[7] = {(uint32_t)nc, 3, (uint32_t)na, (uint32_t)nb, (uint32_t)nc, 2048, 2048};
  uint32_t wn[7] = {(uint32_t)nc, 3, (uint32_t)na, (uint32_t)nb, (uint32_t)nc, 256, 256};
  void *at[] = {&dd, &da, &db, &dc, wt, &pt}, *an[] = {&dd, &da, &db, &dc, wn, &pn};
  /* correctness: both from C0, bit for bit (same summation order) */
  CK(cuMemcpyHtoD(dc, C0, nc * 4));
  CK(cuLaunchKernel(ft, N / 128, M / 128, 1, 16, 16, 1, 0, 0, at, 0));
  CK(cuCtxSynchronize());
  CK(cuMemcpyDtoH(C1, dc, nc * 4));
  CK(cuMemcpyHtoD(dc, C0, nc * 4));
  CK(cuLaunchKernel(fn, (N + 15) / 16, (M + 15) / 16, 1, 16, 16, 1, 0, 0, an, 0));
  CK(cuCtxSynchronize());
  CK(cuMemcpyDtoH(C2, dc, nc * 4));
  size_t diff = 0;
  for (size_t i = 0; i < nc; i++) diff += memcmp(&C1[i], &C2[i], 4) != 0;
  /* and 512 sampled elements against a double-precision dot product */
  double worst = 0;
  for (int s = 0; s < 512; s++) {
    size_t r = (size_t)(rng % M), c = (size_t)((rng >> 20) % N);
    frand();
    double acc = 0, mag = 0;
    for (size_t k = 0; k < K; k++) {
      acc += (double)A[r * K + k] * B[k * N + c];
      mag += fabs((double)A[r * K + k] * B[k * N + c]);
    }
    acc += C0[r * N + c];
    mag += fabs(C0[r * N + c]);
    double err = fabs(C1[r * N + c] - acc) / (mag * 0x1p-24 * K);
    if (err > worst) worst = err;
  }
  printf("{\"case\":\"matmul_check\",\"M\":%u,\"N\":%u,\"K\":%u,\"tiled_vs_matmul_vyre_differing_elements\":%zu,"
         "\"worst_err_in_units_of_K_ulp_sum_abs\":%.4f}\n", M, N, K, diff, worst);
  CUevent e0, e1;
  CK(cuEventCreate(&e0, 0));
  CK(cuEventCreate(&e1, 0));
  for (int which = 0; which < 2; which++) {
    CUfunction f = which ? fn : ft;
    void **a = which ? an : at;
    unsigned gx = which ? (N + 15) / 16 : N / 128, gy = which ? (M + 15) / 16 : M / 128;
    int n = which ? reps / 4 + 1 : reps;
    float *ms = calloc(n, sizeof *ms);
    for (int w = 0; w < 2; w++) CK(cuLaunchKernel(f, gx, gy, 1, 16, 16, 1, 0, 0, a, 0));
    for (int r = 0; r < n; r++) {
      CK(cuEventRecord(e0, 0));
      CK(cuLaunchKernel(f, gx, gy, 1, 16, 16, 1, 0, 0, a, 0));
      CK(cuEventRecord(e1, 0));
      CK(cuEventSynchronize(e1));
      CK(cuEventElapsedTime(&ms[r], e0, e1));
    }
    qsort(ms, n, sizeof *ms, cmpf);
    double med = ms[n / 2];
    printf("{\"case\":\"%s\",\"M\":%u,\"N\":%u,\"K\":%u,\"median_ms\":%.4f,\"min_ms\":%.4f,\"tflops\":%.2f}\n",
           which ? "vyre_matmul_16x16" : "vyre_matmul_tiled", M, N, K, med, ms[0],
           2.0 * M * N * K / (med * 1e-3) / 1e12);
    free(ms);
  }
  return diff != 0;
}

static float *sx;
static double sref;
static CUdeviceptr dx;

static int sum(const char *ptx, size_t n, uint32_t G, int reps) {
  CUmodule m;
  unsigned nw;
  CUfunction f = load(ptx, &m, &nw);
  if (nw != 5) {
    fprintf(stderr, "sum: %u count words, expected 5 (cfg, x, partial, ws)\n", nw);
    return 1;
  }
  if (!sx) {
    float *x = sx = malloc(n * 4);
    for (size_t i = 0; i < n; i++) {
      rng = rng * 6364136223846793005ull + 1442695040888963407ull;
      x[i] = (float)(rng >> 40) / 16777216.0f; /* [0, 1) */
      sref += x[i];
    }
    CK(cuMemAlloc(&dx, n * 4));
    CK(cuMemcpyHtoD(dx, x, n * 4));
  }
  double ref = sref;
  CUdeviceptr cfg1, cfg2, p1, p2;
  uint32_t g1 = G, g2 = 1;
  CK(cuMemAlloc(&cfg1, 4));
  CK(cuMemAlloc(&cfg2, 4));
  CK(cuMemcpyHtoD(cfg1, &g1, 4));
  CK(cuMemcpyHtoD(cfg2, &g2, 4));
  CK(cuMemAlloc(&p1, 2048 * 4));
  CK(cuMemAlloc(&p2, 2048 * 4));
  CK(cuMemsetD32(p1, 0, 2048));
  CK(cuMemsetD32(p2, 0, 2048));
  uint32_t c1[4] = {1, (uint32_t)n, 2048, 8}, c2[4] = {1, 2048, 2048, 8};
  CUdeviceptr q1 = params(c1, 4, 2048), q2 = params(c2, 4, 2048);
  uint32_t w1[5] = {2048, 1, (uint32_t)n, 2048, 8}, w2[5] = {2048, 1, 2048, 2048, 8};
  void *a1[] = {&cfg1, &dx, &p1, w1, &q1}, *a2[] = {&cfg2, &p1, &p2, w2, &q2};
  float got[2];
  for (int k = 0; k < 2; k++) {
    CK(cuLaunchKernel(f, G, 1, 1, 256, 1, 1, 0, 0, a1, 0));
    CK(cuLaunchKernel(f, 1, 1, 1, 256, 1, 1, 0, 0, a2, 0));
    CK(cuCtxSynchronize());
    CK(cuMemcpyDtoH(&got[k], p2, 4));
  }
  printf("{\"case\":\"sum_check\",\"n\":%zu,\"G\":%u,\"got\":%.9g,\"ref_double\":%.9g,\"rel_err\":%.3g,"
         "\"deterministic\":%s}\n", n, G, got[0], ref, fabs(got[0] - ref) / ref,
         memcmp(&got[0], &got[1], 4) ? "false" : "true");
  CUevent e0, e1;
  CK(cuEventCreate(&e0, 0));
  CK(cuEventCreate(&e1, 0));
  float *ms = calloc(reps, sizeof *ms);
  for (int r = 0; r < reps; r++) {
    CK(cuEventRecord(e0, 0));
    CK(cuLaunchKernel(f, G, 1, 1, 256, 1, 1, 0, 0, a1, 0));
    CK(cuLaunchKernel(f, 1, 1, 1, 256, 1, 1, 0, 0, a2, 0));
    CK(cuEventRecord(e1, 0));
    CK(cuEventSynchronize(e1));
    CK(cuEventElapsedTime(&ms[r], e0, e1));
  }
  qsort(ms, reps, sizeof *ms, cmpf);
  printf("{\"case\":\"vyre_sum\",\"n\":%zu,\"G\":%u,\"median_us\":%.1f,\"min_us\":%.1f,\"GBps\":%.1f}\n", n, G,
         ms[reps / 2] * 1e3, ms[0] * 1e3, n * 4.0 / (ms[reps / 2] * 1e-3) / 1e9);
  free(ms);
  return fabs(got[0] - ref) / ref > 1e-4;
}

int main(int argc, char **argv) {
  CUdevice dev;
  CUcontext ctx;
  CK(cuInit(0));
  CK(cuDeviceGet(&dev, 0));
  CK(cuDevicePrimaryCtxRetain(&ctx, dev));
  CK(cuCtxSetCurrent(ctx));
  if (argc >= 7 && !strcmp(argv[1], "matmul"))
    return matmul(argv[2], argv[3], atoi(argv[4]), atoi(argv[5]), atoi(argv[6]), argc > 7 ? atoi(argv[7]) : 20);
  if (argc >= 5 && !strcmp(argv[1], "sum")) {
    int bad = 0;
    for (char *g = strtok(argv[4], ","); g; g = strtok(NULL, ","))
      bad |= sum(argv[2], strtoull(argv[3], 0, 10), (uint32_t)atoi(g), argc > 5 ? atoi(argv[5]) : 20);
    return bad;
  }
  fprintf(stderr, "usage: bench matmul TILED.ptx NAIVE.ptx M N K [reps] | sum SUM.ptx N G [reps]\n");
  return 2;
}
