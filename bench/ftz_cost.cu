// ftz_cost.cu -- what each f32 underflow rule costs on the GPU: `.ftz` arithmetic (tininess after rounding, flushed: vyre's rule) against IEEE arithmetic with gradual underflow followed by an explicit flush of subnormal results (the rule vyre did not pick).  Elementwise (memory-bound) and an fma chain (compute-bound).
//
// Build and run on a GPU machine (docs/semantics.md, BENCHMARKS.md):
//   nvcc -O3 -arch=sm_90 -o ftz_cost bench/ftz_cost.cu && ./ftz_cost
// Prints GB/s and GFLOP/s of both variants and their ratio, and checks
// that the two differ exactly in the window (a product of 2^-126 and
// 1 - 2^-24: `.ftz` gives 0, gradual-then-flush gives 2^-126).
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <cuda_runtime.h>

#define CHECK(x)                                                                  \
  do {                                                                            \
    cudaError_t e_ = (x);                                                         \
    if (e_ != cudaSuccess) {                                                      \
      std::fprintf(stderr, "%s: %s\n", #x, cudaGetErrorString(e_));               \
      std::exit(1);                                                               \
    }                                                                             \
  } while (0)

// vyre's rule: one instruction.
__device__ __forceinline__ float fma_ftz(float a, float b, float c) {
  float r;
  asm("fma.rn.ftz.f32 %0, %1, %2, %3;" : "=f"(r) : "f"(a), "f"(b), "f"(c));
  return r;
}

// The other rule: IEEE fma with subnormals, then a subnormal result
// becomes the zero of its sign (testp + predicated and: 3 instructions).
__device__ __forceinline__ float fma_gradual_flush(float a, float b, float c) {
  float r;
  asm("{\n\t.reg .pred p;\n\t"
      "fma.rn.f32 %0, %1, %2, %3;\n\t"
      "testp.subnormal.f32 p, %0;\n\t"
      "@p and.b32 %0, %0, 0x80000000;\n\t}"
      : "=f"(r)
      : "f"(a), "f"(b), "f"(c));
  return r;
}

template <int FTZ>
__global__ void axpy(const float *x, float *y, float a, size_t n) {
  size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) y[i] = FTZ ? fma_ftz(a, x[i], y[i]) : fma_gradual_flush(a, x[i], y[i]);
}

// 256 dependent fmas per element, 4 independent chains per thread.
template <int FTZ>
__global__ void chain(const float *x, float *y, size_t n) {
  size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  float v0 = x[i], v1 = v0 + 1.0f, v2 = v0 + 2.0f, v3 = v0 + 3.0f;
  const float m = 0.999f, c = 0.001f;
#pragma unroll 16
  for (int k = 0; k < 64; k++) {
    if (FTZ) {
      v0 = fma_ftz(v0, m, c); v1 = fma_ftz(v1, m, c); v2 = fma_ftz(v2, m, c); v3 = fma_ftz(v3, m, c);
    } else {
      v0 = fma_gradual_flush(v0, m, c); v1 = fma_gradual_flush(v1, m, c);
      v2 = fma_gradual_flush(v2, m, c); v3 = fma_gradual_flush(v3, m, c);
    }
  }
  y[i] = v0 + v1 + v2 + v3;
}

template <int FTZ>
__global__ void window(float *out) {
  float m = __uint_as_float(0x3f7fffffu), t = __uint_as_float(0x00800000u);
  out[FTZ] = FTZ ? fma_ftz(m, t, 0.0f) : fma_gradual_flush(m, t, 0.0f);
}

template <typename F>
static float time_ms(F launch, int reps) {
  cudaEvent_t a, b;
  CHECK(cudaEventCreate(&a));
  CHECK(cudaEventCreate(&b));
  launch();  // warm up
  CHECK(cudaEventRecord(a));
  for (int r = 0; r < reps; r++) launch();
  CHECK(cudaEventRecord(b));
  CHECK(cudaEventSynchronize(b));
  float ms = 0;
  CHECK(cudaEventElapsedTime(&ms, a, b));
  return ms / reps;
}

int main() {
  const size_t n = 64u << 20;  // 64 Mi elements: 256 MiB per array
  float *x, *y, *w;
  CHECK(cudaMalloc(&x, n * 4));
  CHECK(cudaMalloc(&y, n * 4));
  CHECK(cudaMalloc(&w, 8));
  CHECK(cudaMemset(x, 0, n * 4));
  CHECK(cudaMemset(y, 0, n * 4));
  cudaDeviceProp prop;
  CHECK(cudaGetDeviceProperties(&prop, 0));
  const int block = 256;
  const unsigned grid = (unsigned)((n + block - 1) / block);
  const int reps = 20;

  window<1><<<1, 1>>>(w);
  window<0><<<1, 1>>>(w);
  unsigned bits[2];
  CHECK(cudaMemcpy(bits, w, 8, cudaMemcpyDeviceToHost));
  std::printf("device: %s\n", prop.name);
  std::printf("window witness fma(1-2^-24, 2^-126, 0): ftz 0x%08x, gradual+flush 0x%08x\n", bits[1],
              bits[0]);

  float ftz = time_ms([&] { axpy<1><<<grid, block>>>(x, y, 2.0f, n); }, reps);
  float grad = time_ms([&] { axpy<0><<<grid, block>>>(x, y, 2.0f, n); }, reps);
  double bytes = 3.0 * n * 4;
  std::printf("axpy 256 MiB x3: ftz %.3f ms %.0f GB/s | gradual+flush %.3f ms %.0f GB/s | ratio %.3f\n",
              ftz, bytes / ftz / 1e6, grad, bytes / grad / 1e6, grad / ftz);

  float cf = time_ms([&] { chain<1><<<grid, block>>>(x, y, n); }, 5);
  float cg = time_ms([&] { chain<0><<<grid, block>>>(x, y, n); }, 5);
  double flops = 2.0 * 256 * n;
  std::printf("fma chain 256/elem: ftz %.3f ms %.0f GFLOP/s | gradual+flush %.3f ms %.0f GFLOP/s | "
              "ratio %.3f\n",
              cf, flops / cf / 1e6, cg, flops / cg / 1e6, cg / cf);
  CHECK(cudaFree(x));
  CHECK(cudaFree(y));
  CHECK(cudaFree(w));
  return 0;
}
