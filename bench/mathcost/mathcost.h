/* mathcost.h -- what the math-cost benchmark's driver (mathcost.c) and its CUDA peers (peers.cu) share: the functions and their input domains, the input generator (bit-identical on host and device), and the peers' dlopen interface. */
#ifndef VYRE_BENCH_MATHCOST_H
#define VYRE_BENCH_MATHCOST_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#ifdef __CUDACC__
#define MC_HD __host__ __device__
#else
#define MC_HD
#endif

/*
 * The fourteen functions: X(id, vyre op, domain kind, lo, hi).  Domains
 * (README.md, "Inputs"):
 *   MC_LIN: uniform in [lo, hi] (24 random bits; exact in double, so the
 *           host and the device round the same value to f32);
 *   MC_LOG: random f32 bits with an exponent uniform in [lo, hi] (a
 *           log-uniform positive input); MC_SLOG: the same with a random sign;
 *   MC_TRIG: uniform in [lo, hi] for the first 15/16 of the array, the last
 *           1/16 MC_SLOG with exponents 14..99 (|x| from 16384 to about
 *           1.3e30: the Payne-Hanek reduction), contiguous so that no warp
 *           mixes the two.
 */
#define MC_FUNCS(X)                      \
  X(rsqrt, "rsqrt", MC_LOG, -126, 127)   \
  X(exp, "exp", MC_LIN, -80, 80)         \
  X(exp2, "exp2", MC_LIN, -120, 120)     \
  X(log, "log", MC_LOG, -126, 99)        \
  X(log2, "log2", MC_LOG, -126, 99)      \
  X(sin, "sin", MC_TRIG, -10000, 10000)  \
  X(cos, "cos", MC_TRIG, -10000, 10000)  \
  X(tan, "tan", MC_TRIG, -10000, 10000)  \
  X(asin, "asin", MC_LIN, -1, 1)         \
  X(acos, "acos", MC_LIN, -1, 1)         \
  X(atan, "atan", MC_SLOG, -16, 24)      \
  X(sinh, "sinh", MC_LIN, -88, 88)       \
  X(cosh, "cosh", MC_LIN, -88, 88)       \
  X(tanh, "tanh", MC_LIN, -10, 10)

enum { MC_LIN, MC_LOG, MC_SLOG, MC_TRIG };

#define MC_ENUM(id, op, kind, lo, hi) MC_##id,
enum { MC_FUNCS(MC_ENUM) MC_FUNC_COUNT };
#undef MC_ENUM

/* The softmax's input (logits) is "function" MC_SOFTMAX: uniform in [-8, 8]. */
#define MC_SOFTMAX MC_FUNC_COUNT
#define MC_SOFTMAX_COLS 1024u

typedef struct mc_domain {
  int kind, lo, hi;
} mc_domain;

static MC_HD inline mc_domain mc_domain_of(int fn) {
  mc_domain d = {MC_LIN, -8, 8};
#define MC_CASE(id, op, k, l, h) \
  if (fn == MC_##id) {           \
    d.kind = k;                  \
    d.lo = l;                    \
    d.hi = h;                    \
  }
  MC_FUNCS(MC_CASE)
#undef MC_CASE
  return d;
}

/* 64 random bits for element i of function fn's input (splitmix64's
 * finaliser of a per-function stream). */
static MC_HD inline uint64_t mc_bits(int fn, uint64_t i) {
  uint64_t z = (i + 1) * 0x9e3779b97f4a7c15ull + ((uint64_t)fn << 56);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
  return z ^ (z >> 31);
}

static MC_HD inline float mc_from_bits(uint32_t u) {
  union {
    uint32_t u;
    float f;
  } c;
  c.u = u;
  return c.f;
}

/* Element i (of n) of function fn's input: the same bits on host and device. */
static MC_HD inline float mc_input(int fn, uint64_t i, uint64_t n) {
  mc_domain d = mc_domain_of(fn);
  uint64_t h = mc_bits(fn, i);
  int kind = d.kind;
  if (kind == MC_TRIG) {
    if (i >= n - n / 16) {
      kind = MC_SLOG;
      d.lo = 14;
      d.hi = 99;
    } else {
      kind = MC_LIN;
    }
  }
  if (kind == MC_LIN) {
    /* lo + (hi - lo) k 2^-24, k < 2^24: exact in double, one rounding to f32. */
    double k = (double)(h >> 40);
    return (float)((double)d.lo + (double)(d.hi - d.lo) * k * (1.0 / 16777216.0));
  }
  uint32_t e = (uint32_t)(d.lo + (int)((h >> 32) % (uint64_t)(d.hi - d.lo + 1)));
  uint32_t bits = ((e + 127u) << 23) | (uint32_t)(h & 0x7fffffu);
  if (kind == MC_SLOG && (h & 0x80000000u)) bits |= 0x80000000u;
  return mc_from_bits(bits);
}

/* ------------------------------------------------------------------ */
/* The CUDA peers (libmcpeers.so, built by run.sh with nvcc), reached  */
/* through dlopen.                                                      */
/* ------------------------------------------------------------------ */
#define MC_PEER_ABI 1

#if defined(__GNUC__)
#define MC_PEER_EXPORT __attribute__((visibility("default")))
#else
#define MC_PEER_EXPORT
#endif

/* What a peer kernel computes. */
enum {
  MC_K_COPY = 0,      /* y[i] = x[i]: the memory floor */
  MC_K_LIBDEVICE,     /* y[i] = f(x[i]) with libdevice (expf, logf, ...; no fast math) */
  MC_K_INTRINSIC,     /* y[i] = the hardware approximation (__expf, ex2.approx, ...) */
  MC_K_SOFTMAX,       /* row softmax, libdevice expf and IEEE division */
  MC_K_SOFTMAX_FAST,  /* row softmax, __expf and __fdividef */
  MC_K_COUNT
};

MC_PEER_EXPORT int mc_peer_abi(void);

/* Select CUDA device `device` (the runtime's primary context, the one vyre's
 * plugin uses) and allocate x and y, n f32 each (16-byte aligned);
 * *x_dev and *y_dev receive their device addresses.  0, or -1 with the
 * reason in why.  One driver thread calls the peers. */
MC_PEER_EXPORT int mc_peer_open(uint32_t device, uint64_t n, uint64_t *x_dev, uint64_t *y_dev,
                                char *why, size_t why_size);

/* Fill x[0..n) with mc_input(fn, i, n) on the device. */
MC_PEER_EXPORT int mc_peer_fill(int fn, uint64_t n, char *why, size_t why_size);

/* Set y[0..n) to all-ones bits (a NaN), so a kernel that writes nothing is seen. */
MC_PEER_EXPORT int mc_peer_poison(uint64_t n, char *why, size_t why_size);

/* Copy `count` elements of y, `stride` apart from element `first`, to out. */
MC_PEER_EXPORT int mc_peer_read(uint64_t first, uint64_t stride, uint32_t count, float *out,
                                char *why, size_t why_size);

/* Time kernel `kernel` (MC_K_*) of function fn over n elements (the softmax:
 * n / 1024 rows): `warm` untimed launches, then `runs` launches each between
 * two CUDA events; us[0..runs) receive the device times.  0; 1 when there is
 * no such kernel for fn (why says so); -1 on a CUDA failure. */
MC_PEER_EXPORT int mc_peer_time(int kernel, int fn, uint64_t n, uint32_t warm, uint32_t runs,
                                double *us, char *why, size_t why_size);

/* The name of the CUDA function kernel `kernel` of fn calls ("expf",
 * "__expf", ...), or NULL when there is none. */
MC_PEER_EXPORT const char *mc_peer_name(int kernel, int fn);

/* Free x and y. */
MC_PEER_EXPORT void mc_peer_close(void);

#ifdef __cplusplus
}
#endif

#endif /* VYRE_BENCH_MATHCOST_H */
