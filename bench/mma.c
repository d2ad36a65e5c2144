/* mma.c -- times a tensor-core matmul program (examples/matmul_mma_*.vyre) through the CUDA driver API with the kernel ABI of docs/kernel-abi.md, and checks sampled elements of C exactly (int8, and float on small-integer data) or within the MMA bound of docs/semantics.md (float). Run by bench/mma.sh. */
#include <cuda.h>
#include <dlfcn.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mma_check.h"

#define XSTR(x) STR(x)
#define STR(x) #x

/* Each entry by the name cuda.h maps it to (cuMemAlloc -> cuMemAlloc_v2). */
#define MMA_API(X)                                                                            \
  X(cuInit) X(cuDeviceGet) X(cuDevicePrimaryCtxRetain) X(cuCtxPushCurrent) X(cuStreamCreate)  \
  X(cuStreamSynchronize) X(cuModuleLoadDataEx) X(cuModuleGetFunction) X(cuModuleUnload)       \
  X(cuMemAlloc) X(cuMemFree) X(cuMemcpyHtoDAsync) X(cuMemcpyDtoHAsync) X(cuMemsetD32Async)    \
  X(cuLaunchKernel) X(cuEventCreate) X(cuEventRecord) X(cuEventSynchronize)                   \
  X(cuEventElapsedTime) X(cuGetErrorName) X(cuGetErrorString)

#define DECLARE(name) static __typeof__(&name) p_##name;
MMA_API(DECLARE)

#define CK(x)                                                                         \
  do {                                                                                \
    CUresult r_ = (x);                                                                \
    if (r_ != CUDA_SUCCESS) {                                                         \
      const char *s_ = NULL, *n_ = NULL;                                              \
      if (p_cuGetErrorString(r_, &s_) != CUDA_SUCCESS) s_ = NULL;                     \
      if (p_cuGetErrorName(r_, &n_) != CUDA_SUCCESS) n_ = NULL;                       \
      fprintf(stderr, "mma: %s failed: %s: %s (%s:%d)\n", #x, n_ ? n_ : "?",          \
              s_ ? s_ : "?", __FILE__, __LINE__);                                     \
      exit(1);                                                                        \
    }                                                                                 \
  } while (0)

static CUstream stream; /* every copy, launch and event: one stream, waited on where it matters */

static void die(const char *what) {
  fprintf(stderr, "mma: %s\n", what);
  exit(1);
}

static void h2d(CUdeviceptr dst, const void *src, size_t n) {
  CK(p_cuMemcpyHtoDAsync(dst, src, n, stream));
  CK(p_cuStreamSynchronize(stream));
}

static void d2h(void *dst, CUdeviceptr src, size_t n) {
  CK(p_cuMemcpyDtoHAsync(dst, src, n, stream));
  CK(p_cuStreamSynchronize(stream));
}

static char *slurp(const char *path) {
  FILE *f = fopen(path, "rb");
  if (!f) { perror(path); exit(1); }
  fseek(f, 0, SEEK_END);
  long n = ftell(f);
  fseek(f, 0, SEEK_SET);
  char *s = calloc(1, (size_t)n + 1);
  if (!s || fread(s, 1, (size_t)n, f) != (size_t)n) die("cannot read a file");
  fclose(f);
  return s;
}

static int cmpf(const void *a, const void *b) {
  float x = *(const float *)a, y = *(const float *)b;
  return x < y ? -1 : x > y;
}

/* The kernel: entry name, block shape and the count words from the PTX. */
typedef struct kernel {
  CUmodule mod;
  CUfunction fn;
  unsigned block[3];
  unsigned kbufs, nwords; /* buffer pointers; count words (1 + buffer_count) */
} kernel;

static void load(const char *path, kernel *k) {
  char *ptx = slurp(path), name[80] = "";
  const char *e = strstr(ptx, ".entry "), *r = strstr(ptx, ".reqntid"), *c = strstr(ptx, "counts[");
  if (!e || sscanf(e + 7, "%79[^(]", name) != 1) die("no .entry in the PTX");
  if (!r || sscanf(r + 8, " %u , %u , %u", &k->block[0], &k->block[1], &k->block[2]) != 3)
    die("no .reqntid X, Y, Z in the PTX (docs/kernel-abi.md)");
  if (!c || sscanf(c + 7, "%u", &k->nwords) != 1 || k->nwords % 4) die("no counts[] parameter in the PTX");
  k->nwords /= 4;
  k->kbufs = 0;
  for (const char *p = ptx; (p = strstr(p, ".param .u64 b")); p++) k->kbufs++;
  char log[8192] = "";
  CUjit_option opt[2] = {CU_JIT_ERROR_LOG_BUFFER, CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES};
  void *val[2] = {log, (void *)(uintptr_t)sizeof log};
  CUresult res = p_cuModuleLoadDataEx(&k->mod, ptx, 2, opt, val);
  if (res != CUDA_SUCCESS) {
    fprintf(stderr, "mma: JIT of %s failed (%d): %s\n", path, (int)res, log);
    exit(1);
  }
  CK(p_cuModuleGetFunction(&k->fn, k->mod, name));
  free(ptx);
}

/* Bytes per element of A and B. */
static unsigned esize(mma_type t) { return t == MMA_I8 ? 1 : 2; }

static uint64_t rng = 0x9E3779B97F4A7C15ull;
static uint32_t rnd(void) {
  rng = rng * 6364136223846793005ull + 1442695040888963407ull;
  return (uint32_t)(rng >> 32);
}

/* Fills A (M x K) and B (bf16/f16: K x N; i8: N x K) with random values of
 * the type (floats uniform in [-1, 1), int8 over -128..127) or, exact = 1,
 * with small integers (-4..4) whose every partial sum is exact in f32. */
static void fill(mma_type t, void *buf, size_t n, int exact) {
  for (size_t i = 0; i < n; i++) {
    uint32_t u = rnd();
    if (t == MMA_I8) {
      ((int8_t *)buf)[i] = exact ? (int8_t)((int)(u % 9) - 4) : (int8_t)(u >> 24);
      continue;
    }
    float f = exact ? (float)((int)(u % 9) - 4) : (float)(int32_t)u / 2147483648.0f;
    ((uint16_t *)buf)[i] = t == MMA_BF16 ? mma_f32_to_bf16(f) : mma_f32_to_f16(f);
  }
}

typedef struct run {
  mma_type type;
  uint32_t M, N, K;
  unsigned grid[2];
  size_t na, nb, nc;
  CUdeviceptr dd, da, db, dc, dp;
  uint32_t *counts; /* the counts parameter's words, by value */
  uint32_t nwords;
} run;

/* One launch (kernel parameters: docs/kernel-abi.md). */
static void launch(const kernel *k, run *r) {
  void *args[] = {&r->dd, &r->da, &r->db, &r->dc, r->counts, &r->dp};
  CK(p_cuLaunchKernel(k->fn, r->grid[0], r->grid[1], 1, k->block[0], k->block[1], k->block[2], 0, stream,
                      args, 0));
}

/* Waits for the stream; a trap the kernel reported (docs/kernel-abi.md,
 * the params block's trap words) ends the run with status 1. */
static void trap_check(const run *r, const char *when) {
  uint32_t w[2];
  CK(p_cuStreamSynchronize(stream));
  d2h(w, r->dp + 4 * (r->nwords), 8);
  if (w[1]) {
    fprintf(stderr, "mma: the kernel trapped %s: code %u at instruction %u (M %u N %u K %u)\n", when, w[0],
            w[1] - 1, r->M, r->N, r->K);
    exit(1);
  }
}

/* A double as JSON: null when NaN or infinite (JSON has neither). */
static const char *jnum(char *buf, size_t n, double v) {
  if (isfinite(v))
    snprintf(buf, n, "%.6g", v);
  else
    snprintf(buf, n, "null");
  return buf;
}

/* Runs the kernel once on A, B and checks the sampled elements of C. */
static int check(const kernel *k, run *r, const mma_prog *p, int exact, void *A, void *B, void *C) {
  fill(r->type, A, r->na, exact);
  fill(r->type, B, r->nb, exact);
  h2d(r->da, A, r->na * esize(r->type));
  h2d(r->db, B, r->nb * esize(r->type));
  CK(p_cuMemsetD32Async(r->dc, 0x7FC00000u, r->nc, stream)); /* NaN: an element never stored fails */
  launch(k, r);
  trap_check(r, exact ? "on the exact-data run" : "on the random-data run");
  d2h(C, r->dc, r->nc * 4);
  mma_check_result res;
  char e1[32], e2[32];
  mma_check_sampled(r->type, r->M, r->N, r->K, A, B, C, MMA_SAMPLES, exact, &res);
  printf("{\"case\":\"vyre_mma_check\",\"path\":\"driver\",\"program\":\"%s\",\"type\":\"%s\",\"M\":%u,\"N\":%u,"
         "\"K\":%u,\"data\":\"%s\",\"sampled\":%u,\"mismatches\":%u,\"max_abs_err\":%s,"
         "\"worst_err_over_bound\":%s,\"rule\":\"%s\",\"ok\":%s}\n",
         p->path, mma_type_name(r->type), r->M, r->N, r->K, exact ? "small integers" : "random",
         res.sampled, res.bad, jnum(e1, sizeof e1, res.max_abs_err), jnum(e2, sizeof e2, res.worst_ratio),
         r->type == MMA_I8 || exact ? "bit-exact" : "mma bound (docs/semantics.md)", res.bad ? "false" : "true");
  if (res.bad)
    fprintf(stderr, "mma: %s %ux%ux%u: %u of %u sampled elements wrong; first at C[%u][%u]: got %.17g, want %.17g\n",
            mma_type_name(r->type), r->M, r->N, r->K, res.bad, res.sampled, res.first_row, res.first_col,
            res.first_got, res.first_want);
  return res.bad != 0;
}

static int bench(mma_type type, const char *prog_path, const char *ptx_path, uint32_t M, uint32_t N, uint32_t K,
                 int reps) {
  mma_prog p;
  char err[256];
  if (mma_prog_read(prog_path, type, &p, err, sizeof err)) die(err);
  if (mma_shape_check(&p, type, M, N, K, err, sizeof err)) die(err);
  kernel k;
  load(ptx_path, &k);
  if (k.kbufs != 4 || k.nwords != 1 + p.nbuffers) {
    fprintf(stderr, "mma: %s has %u buffer pointers and %u count words; %s declares %u buffers (4 in memory)\n",
            ptx_path, k.kbufs, k.nwords, prog_path, p.nbuffers);
    return 1;
  }
  run r = {.type = type, .M = M, .N = N, .K = K};
  r.grid[0] = N / p.bn;
  r.grid[1] = M / p.bm;
  r.na = (size_t)M * K;
  r.nb = (size_t)K * N;
  r.nc = (size_t)M * N;
  r.nwords = k.nwords;
  /* count words: word 0 the dispatch count (the largest output, C), then
   * every buffer's element count in declaration order (docs/kernel-abi.md) */
  uint32_t *w = calloc(r.nwords + 4, 4);
  w[0] = (uint32_t)r.nc;
  for (unsigned i = 0; i < p.nbuffers; i++) {
    int role = p.role[i];
    w[1 + i] = role == 0 ? 3 : role == 1 ? (uint32_t)r.na : role == 2 ? (uint32_t)r.nb : role == 3 ? (uint32_t)r.nc
                                                                                                     : p.count[i];
  }
  r.counts = w;
  void *A = malloc(r.na * esize(type)), *B = malloc(r.nb * esize(type)), *C = malloc(r.nc * 4);
  if (!w || !A || !B || !C) die("out of host memory");
  uint32_t dims[4] = {M, N, K, 0};
  CK(p_cuMemAlloc(&r.dd, 16));
  CK(p_cuMemAlloc(&r.da, r.na * esize(type)));
  CK(p_cuMemAlloc(&r.db, r.nb * esize(type)));
  CK(p_cuMemAlloc(&r.dc, r.nc * 4));
  CK(p_cuMemAlloc(&r.dp, 4 * (r.nwords + 4)));
  h2d(r.dd, dims, 16);
  h2d(r.dp, w, 4 * (r.nwords + 4));
  int bad = check(&k, &r, &p, 1, A, B, C);
  bad |= check(&k, &r, &p, 0, A, B, C); /* random data, which the timed runs use */
  CUevent e0, e1;
  CK(p_cuEventCreate(&e0, 0));
  CK(p_cuEventCreate(&e1, 0));
  float *ms = calloc((size_t)reps, sizeof *ms);
  for (int i = 0; i < 3; i++) launch(&k, &r);
  for (int i = 0; i < reps; i++) {
    CK(p_cuEventRecord(e0, stream));
    launch(&k, &r);
    CK(p_cuEventRecord(e1, stream));
    CK(p_cuEventSynchronize(e1));
    CK(p_cuEventElapsedTime(&ms[i], e0, e1));
  }
  trap_check(&r, "while timed");
  qsort(ms, (size_t)reps, sizeof *ms, cmpf);
  double med = ms[reps / 2];
  printf("{\"case\":\"vyre_mma\",\"path\":\"driver\",\"program\":\"%s\",\"type\":\"%s\",\"M\":%u,\"N\":%u,\"K\":%u,"
         "\"grid\":[%u,%u],\"block\":[%u,%u,%u],\"reps\":%d,\"median_ms\":%.4f,\"min_ms\":%.4f,\"tflops\":%.2f}\n",
         p.path, mma_type_name(type), M, N, K, r.grid[0], r.grid[1], k.block[0], k.block[1], k.block[2], reps, med,
         ms[0], 2.0 * M * N * K / (med * 1e-3) / 1e12);
  fflush(stdout);
  free(ms);
  free(A);
  free(B);
  free(C);
  free(w);
  CK(p_cuMemFree(r.dd));
  CK(p_cuMemFree(r.da));
  CK(p_cuMemFree(r.db));
  CK(p_cuMemFree(r.dc));
  CK(p_cuMemFree(r.dp));
  CK(p_cuModuleUnload(k.mod));
  return bad;
}

int main(int argc, char **argv) {
  mma_type t;
  uint32_t M, N, K;
  if (argc < 5 || mma_type_parse(argv[1], &t) || mma_size_parse(argv[4], &M, &N, &K)) {
    fprintf(stderr, "usage: mma bf16|f16|i8 PROGRAM.vyre PROGRAM.ptx MxNxK [REPS]\n");
    return 2;
  }
  int reps = argc > 5 ? atoi(argv[5]) : 30;
  if (reps < 1) reps = 1;
  void *lib = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
  if (!lib) {
    fprintf(stderr, "mma: no NVIDIA driver: %s\n", dlerror());
    return 1;
  }
#define LOAD(name)                                                         \
  if (!(*(void **)&p_##name = dlsym(lib, XSTR(name)))) {                   \
    fprintf(stderr, "mma: libcuda lacks %s\n", XSTR(name));                \
    return 1;                                                              \
  }
  MMA_API(LOAD)
  CUdevice dev;
  CUcontext ctx;
  CK(p_cuInit(0));
  CK(p_cuDeviceGet(&dev, 0));
  CK(p_cuDevicePrimaryCtxRetain(&ctx, dev));
  CK(p_cuCtxPushCurrent(ctx));
  CK(p_cuStreamCreate(&stream, CU_STREAM_NON_BLOCKING));
  return bench(t, argv[2], argv[3], M, N, K, reps);
}
