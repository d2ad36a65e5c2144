/* peers.cu -- the math-cost benchmark's CUDA peers (libmcpeers.so): the fourteen functions with libdevice and with the hardware approximations, a copy kernel (the memory floor) and the row softmax, timed with CUDA events on the same buffers vyre's plugin runs on (mathcost.h has the interface). */
#include <cuda_runtime.h>

#include <algorithm>
#include <cstdio>
#include <cstring>

#include "mathcost.h"

namespace {

float *g_x, *g_y;
uint64_t g_cap;

int fail(char *why, size_t why_size, const char *call, cudaError_t e, const char *kernel) {
  snprintf(why, why_size, "%s%s%s: %s (%s)", call, kernel ? " of " : "", kernel ? kernel : "",
           cudaGetErrorName(e), cudaGetErrorString(e));
  return -1;
}

#define TRY(call, kernel)                                                 \
  do {                                                                    \
    cudaError_t e_ = (call);                                              \
    if (e_ != cudaSuccess) return fail(why, why_size, #call, e_, kernel); \
  } while (0)

// The hardware approximations with no CUDA intrinsic of their own.
__device__ __forceinline__ float ex2_approx(float x) {
  float r;
  asm("ex2.approx.ftz.f32 %0, %1;" : "=f"(r) : "f"(x));
  return r;
}
__device__ __forceinline__ float rsqrt_approx(float x) {
  float r;
  asm("rsqrt.approx.ftz.f32 %0, %1;" : "=f"(r) : "f"(x));
  return r;
}
__device__ __forceinline__ float tanh_approx(float x) {
  float r;
  asm("tanh.approx.f32 %0, %1;" : "=f"(r) : "f"(x));
  return r;
}

// libdevice (compiled without --use_fast_math: the documented 1-4 ulp functions).
template <int F>
__device__ __forceinline__ float libdevice(float x) {
  switch (F) {
    case MC_rsqrt: return rsqrtf(x);
    case MC_exp: return expf(x);
    case MC_exp2: return exp2f(x);
    case MC_log: return logf(x);
    case MC_log2: return log2f(x);
    case MC_sin: return sinf(x);
    case MC_cos: return cosf(x);
    case MC_tan: return tanf(x);
    case MC_asin: return asinf(x);
    case MC_acos: return acosf(x);
    case MC_atan: return atanf(x);
    case MC_sinh: return sinhf(x);
    case MC_cosh: return coshf(x);
    default: return tanhf(x);
  }
}

// The intrinsic of each function that has one (has_intrinsic says which).
template <int F>
__device__ __forceinline__ float intrinsic(float x) {
  switch (F) {
    case MC_rsqrt: return rsqrt_approx(x);
    case MC_exp: return __expf(x);
    case MC_exp2: return ex2_approx(x);
    case MC_log: return __logf(x);
    case MC_log2: return __log2f(x);
    case MC_sin: return __sinf(x);
    case MC_cos: return __cosf(x);
    case MC_tan: return __tanf(x);
    default: return tanh_approx(x);  // MC_tanh: has_intrinsic says which F reach here
  }
}

const char *const libdevice_name[MC_FUNC_COUNT] = {"rsqrtf", "expf",  "exp2f", "logf",  "log2f",
                                                   "sinf",   "cosf",  "tanf",  "asinf", "acosf",
                                                   "atanf",  "sinhf", "coshf", "tanhf"};
const char *const intrinsic_name[MC_FUNC_COUNT] = {
    "rsqrt.approx.ftz", "__expf", "ex2.approx.ftz", "__logf", "__log2f", "__sinf", "__cosf",
    "__tanf",           NULL,     NULL,             NULL,     NULL,      NULL,     "tanh.approx"};

template <int F>
__global__ void k_libdevice(const float *__restrict__ x, float *__restrict__ y, uint64_t n) {
  uint64_t i = (uint64_t)blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) y[i] = libdevice<F>(x[i]);
}

template <int F>
__global__ void k_intrinsic(const float *__restrict__ x, float *__restrict__ y, uint64_t n) {
  uint64_t i = (uint64_t)blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) y[i] = intrinsic<F>(x[i]);
}

__global__ void k_copy(const float *__restrict__ x, float *__restrict__ y, uint64_t n) {
  uint64_t i = (uint64_t)blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) y[i] = x[i];
}

__global__ void k_fill(int fn, float *x, uint64_t n) {
  uint64_t i = (uint64_t)blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) x[i] = mc_input(fn, i, n);
}

// softmax.vyre's algorithm: a warp per row of 1024, lane l holding columns
// l, l + 32, ..., l + 992 in registers; the row's max and sum by butterfly
// shuffles; each result e / sum.
template <bool FAST>
__global__ void k_softmax(const float *__restrict__ x, float *__restrict__ y, uint32_t rows) {
  uint32_t g = blockIdx.x * blockDim.x + threadIdx.x;
  uint32_t row = g >> 5, lane = g & 31;
  if (row >= rows) return;
  const float *xr = x + (size_t)row * MC_SOFTMAX_COLS + lane;
  float *yr = y + (size_t)row * MC_SOFTMAX_COLS + lane;
  float v[32];
  float m = -INFINITY;
#pragma unroll
  for (int k = 0; k < 32; k++) {
    v[k] = xr[32 * k];
    m = fmaxf(m, v[k]);
  }
#pragma unroll
  for (int o = 16; o; o >>= 1) m = fmaxf(m, __shfl_xor_sync(0xffffffffu, m, o));
  float s = 0.0f;
#pragma unroll
  for (int k = 0; k < 32; k++) {
    v[k] = FAST ? __expf(v[k] - m) : expf(v[k] - m);
    s += v[k];
  }
#pragma unroll
  for (int o = 16; o; o >>= 1) s += __shfl_xor_sync(0xffffffffu, s, o);
#pragma unroll
  for (int k = 0; k < 32; k++) yr[32 * k] = FAST ? __fdividef(v[k], s) : v[k] / s;
}

typedef void (*unary_kernel)(const float *__restrict__, float *__restrict__, uint64_t);

constexpr bool has_intrinsic(int f) {
  return f != MC_asin && f != MC_acos && f != MC_atan && f != MC_sinh && f != MC_cosh;
}

// Only the intrinsic kernels that exist are instantiated (sass.sh lists
// every kernel of the library).
template <int F>
void table_row(unary_kernel *lib, unary_kernel *intr) {
  lib[F] = k_libdevice<F>;
  if constexpr (has_intrinsic(F)) intr[F] = k_intrinsic<F>;
  else intr[F] = nullptr;
}

struct tables {
  unary_kernel lib[MC_FUNC_COUNT], intr[MC_FUNC_COUNT];
  tables() {
#define MC_ROW(id, op, k, l, h) table_row<MC_##id>(lib, intr);
    MC_FUNCS(MC_ROW)
#undef MC_ROW
  }
};

const tables &kernels() {
  static const tables t;
  return t;
}

uint32_t blocks_of(uint64_t threads) { return (uint32_t)((threads + 255) / 256); }

}  // namespace

extern "C" {

int mc_peer_abi(void) { return MC_PEER_ABI; }

int mc_peer_open(uint32_t device, uint64_t n, uint64_t *x_dev, uint64_t *y_dev, char *why,
                 size_t why_size) {
  TRY(cudaSetDevice((int)device), nullptr);
  TRY(cudaMalloc(&g_x, n * sizeof(float)), nullptr);
  TRY(cudaMalloc(&g_y, n * sizeof(float)), nullptr);
  g_cap = n;
  *x_dev = (uint64_t)(uintptr_t)g_x;
  *y_dev = (uint64_t)(uintptr_t)g_y;
  return 0;
}

int mc_peer_fill(int fn, uint64_t n, char *why, size_t why_size) {
  if (n > g_cap) return fail(why, why_size, "mc_peer_fill", cudaErrorInvalidValue, "k_fill");
  k_fill<<<blocks_of(n), 256>>>(fn, g_x, n);
  TRY(cudaGetLastError(), "k_fill");
  TRY(cudaDeviceSynchronize(), "k_fill");
  return 0;
}

int mc_peer_poison(uint64_t n, char *why, size_t why_size) {
  TRY(cudaMemset(g_y, 0xff, std::min(n, g_cap) * sizeof(float)), nullptr);
  TRY(cudaDeviceSynchronize(), nullptr);
  return 0;
}

int mc_peer_read(uint64_t first, uint64_t stride, uint32_t count, float *out, char *why,
                 size_t why_size) {
  if (count && first + (uint64_t)(count - 1) * stride >= g_cap)
    return fail(why, why_size, "mc_peer_read", cudaErrorInvalidValue, nullptr);
  TRY(cudaMemcpy2D(out, sizeof(float), g_y + first, stride * sizeof(float), sizeof(float), count,
                   cudaMemcpyDeviceToHost),
      nullptr);
  return 0;
}

const char *mc_peer_name(int kernel, int fn) {
  if (kernel == MC_K_COPY) return "copy";
  if (kernel == MC_K_SOFTMAX) return "expf, IEEE division";
  if (kernel == MC_K_SOFTMAX_FAST) return "__expf, __fdividef";
  if (fn < 0 || fn >= MC_FUNC_COUNT) return nullptr;
  if (kernel == MC_K_LIBDEVICE) return libdevice_name[fn];
  if (kernel == MC_K_INTRINSIC) return intrinsic_name[fn];
  return nullptr;
}

int mc_peer_time(int kernel, int fn, uint64_t n, uint32_t warm, uint32_t runs, double *us,
                 char *why, size_t why_size) {
  if (n > g_cap) return fail(why, why_size, "mc_peer_time", cudaErrorInvalidValue, nullptr);
  if (!mc_peer_name(kernel, fn)) {
    snprintf(why, why_size, "no %s kernel for function %d", kernel == MC_K_INTRINSIC ? "intrinsic" : "such", fn);
    return 1;
  }
  const char *name = mc_peer_name(kernel, fn);
  cudaEvent_t e0 = nullptr, e1 = nullptr;
  int rc = 0;
  cudaError_t e = cudaEventCreate(&e0);
  if (e == cudaSuccess) e = cudaEventCreate(&e1);
  for (uint32_t r = 0; e == cudaSuccess && r < warm + runs; r++) {
    e = cudaEventRecord(e0, 0);
    if (e != cudaSuccess) break;
    switch (kernel) {
      case MC_K_COPY: k_copy<<<blocks_of(n), 256>>>(g_x, g_y, n); break;
      case MC_K_LIBDEVICE: kernels().lib[fn]<<<blocks_of(n), 256>>>(g_x, g_y, n); break;
      case MC_K_INTRINSIC: kernels().intr[fn]<<<blocks_of(n), 256>>>(g_x, g_y, n); break;
      case MC_K_SOFTMAX: k_softmax<false><<<blocks_of(n / 32), 256>>>(g_x, g_y, (uint32_t)(n / MC_SOFTMAX_COLS)); break;
      default: k_softmax<true><<<blocks_of(n / 32), 256>>>(g_x, g_y, (uint32_t)(n / MC_SOFTMAX_COLS)); break;
    }
    e = cudaGetLastError();
    if (e == cudaSuccess) e = cudaEventRecord(e1, 0);
    if (e == cudaSuccess) e = cudaEventSynchronize(e1);
    float ms = 0;
    if (e == cudaSuccess) e = cudaEventElapsedTime(&ms, e0, e1);
    if (e == cudaSuccess && r >= warm) us[r - warm] = ms * 1e3;
  }
  if (e != cudaSuccess) rc = fail(why, why_size, "launch or event", e, name);
  if (e0) cudaEventDestroy(e0);
  if (e1) cudaEventDestroy(e1);
  return rc;
}

void mc_peer_close(void) {
  cudaFree(g_x);
  cudaFree(g_y);
  g_x = g_y = nullptr;
  g_cap = 0;
}

}  // extern "C"
