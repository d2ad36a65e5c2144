// cr_oracle.cu -- the independent oracle of the exhaustive sweep (tests/ptxmath/cr_sweep.c): CUDA's
// double-precision libdevice functions, rounded to f32 where that rounding is certain.
//
// Build: nvcc -ptx -arch=sm_90 -o cr_oracle.ptx tests/ptxmath/cr_oracle.cu   (no fast math)
//
// For every input x (the canonical f32 of the pattern base + i) the kernel
// computes o = f((double)x) with libdevice: exp, log, sin, ... in double
// have documented maximum errors of 1 or 2 ulp of a double (CUDA Math API,
// "Double Precision Mathematical Functions"), i.e. below 2^-51 relative.
// If o scaled by 1 -/+ 2^-45 rounds to the same f32, the exact value rounds
// to that f32 too, since it lies within 2^-51 of o: that is the correctly
// rounded result, decided.  Otherwise the input is undecided and recorded
// for the host (cr_resolve.py, multiple precision).  A decided result that
// differs from the one under test is recorded as a mismatch.
#include <stdint.h>

// The order of cr_sweep.c's all_ops (not the op numbers of abi/vyre/vyre_program.h, which have gaps);
// cr_sweep passes the index 0..13 in this order.
enum { RSQRT, EXP, EXP2, LOG, LOG2, SIN, COS, TAN, ASIN, ACOS, ATAN, SINH, COSH, TANH };

__device__ static uint32_t canon(uint32_t w) {
  uint32_t a = w & 0x7FFFFFFFu;
  if (a > 0x7F800000u) return 0x7FC00000u;
  if (a < 0x00800000u) return w & 0x80000000u;
  return w;
}

__device__ static double oracle(int op, double x) {
  switch (op) {
    case RSQRT: return rsqrt(x);
    case EXP: return exp(x);
    case EXP2: return exp2(x);
    case LOG: return log(x);
    case LOG2: return log2(x);
    case SIN: return sin(x);
    case COS: return cos(x);
    case TAN: return tan(x);
    case ASIN: return asin(x);
    case ACOS: return acos(x);
    case ATAN: return atan(x);
    case SINH: return sinh(x);
    case COSH: return cosh(x);
    default: return tanh(x);
  }
}

__device__ static uint32_t f32_bits(double d) { return __float_as_uint(__double2float_rn(d)); }

// rec[k] = {x, ours, oracle's f32 (canonical), kind}: kind 0 a decided mismatch, 1 undecided.
// cnt: [1] undecided, [2] mismatches, [3] records dropped (rec full), [4] records claimed; [0] unused.
extern "C" __global__ void cr_check(int op, uint32_t base, const uint32_t *ours, uint32_t n, uint4 *rec,
                                    unsigned long long *cnt, uint32_t maxrec) {
  uint32_t i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  uint32_t x = canon(base + i);
  double o = oracle(op, (double)__uint_as_float(x));
  uint32_t lo = f32_bits(__dmul_rn(o, 1.0 - 0x1p-45)), hi = f32_bits(__dmul_rn(o, 1.0 + 0x1p-45));
  uint32_t c = canon(f32_bits(o));
  uint32_t y = ours[i];
  int undecided = lo != hi;
  int mismatch = !undecided && y != c;
  if (undecided || mismatch) {
    atomicAdd(&cnt[undecided ? 1 : 2], 1ull);
    unsigned long long k = atomicAdd(&cnt[4], 1ull);
    if (k < maxrec) rec[k] = make_uint4(x, y, c, undecided ? 1u : 0u);
    else atomicAdd(&cnt[3], 1ull);
  }
}
