/* mma_check.h -- the tensor-core harness's logic that needs no GPU (bench/mma.c): the program's interface read from its text, sizes, bf16/f16 conversions, and the sampled check of C (exact, or within the MMA bound of docs/semantics.md); tested by bench/mma_check_test.c. */
#ifndef MMA_CHECK_H
#define MMA_CHECK_H

#include <stddef.h>
#include <stdint.h>

typedef enum mma_type { MMA_BF16, MMA_F16, MMA_I8 } mma_type;

enum { MMA_SAMPLES = 4096, MMA_MAX_BUFFERS = 32 };

/* Roles of a program's buffers, in declaration order. */
enum { MMA_DIMS, MMA_A, MMA_B, MMA_C, MMA_WORKGROUP };

/* What the harness needs of a program: its tile (the grid is N/bn, M/bm,
 * read from the header's "--grid N/BN,M/BM"), and its buffers. */
typedef struct mma_prog {
  char path[256];
  unsigned bm, bn;
  unsigned nbuffers;
  int role[MMA_MAX_BUFFERS];
  uint32_t count[MMA_MAX_BUFFERS]; /* declared count, 0 when none */
} mma_prog;

typedef struct mma_check_result {
  unsigned sampled, bad;
  double max_abs_err, worst_ratio; /* worst |got - want| / bound (float, random data) */
  unsigned first_row, first_col;   /* the first bad element */
  double first_got, first_want;
} mma_check_result;

/* "bf16", "f16" or "i8" -> *t; 0, else -1. */
int mma_type_parse(const char *s, mma_type *t);
const char *mma_type_name(mma_type t);
/* "MxNxK" (three positive integers) -> *m, *n, *k; 0, else -1. */
int mma_size_parse(const char *s, uint32_t *m, uint32_t *n, uint32_t *k);

/* Reads the program text at `path`: its "--grid N/BN,M/BM" and its buffer
 * declarations, which must be dims (uniform u32), A and B (ro, of type t),
 * C (wo or rw; f32, i32 for i8) and any number of workgroup buffers.
 * 0, else -1 with a message in err. */
int mma_prog_read(const char *path, mma_type t, mma_prog *p, char *err, size_t errlen);
/* 0 when the program takes M x N x K (M, N multiples of its tile, K of the
 * MMA depth: 16, 32 for i8; every matrix below 2^32 elements), else -1 and err. */
int mma_shape_check(const mma_prog *p, mma_type t, uint32_t m, uint32_t n, uint32_t k, char *err, size_t errlen);

/* Round to nearest even (the data are finite). */
uint16_t mma_f32_to_bf16(float f);
uint16_t mma_f32_to_f16(float f);
double mma_bf16_value(uint16_t h);
double mma_f16_value(uint16_t h);

/* The bound on |got - exact| of one f32 element of a K-deep product made of
 * K/16 chained mma (docs/semantics.md, "Matrix multiply-accumulate"), given
 * sum_abs = sum over k of |A[i][k] * B[k][j]|: the contract's bound carried
 * through the chain, plus the reference's own rounding per step, with the
 * running value bounded by sum_abs (so any order of the K slices). */
double mma_float_bound(double sum_abs, uint32_t k);

/* Row (or column) number i of `side` strata over [0, len): the first and
 * last strata give 0 and len - 1, the others a point inside themselves. */
uint32_t mma_stratum(uint32_t i, uint32_t side, uint32_t len);

/* Checks about nsamples elements of C (f32, or i32 for i8) spread over the
 * matrix (a grid of row and column strata, corners included) against the
 * exact product of A (M x K) and B (K x N; i8: N x K): int8 and exact = 1
 * bit for bit (int8 modulo 2^32), else within mma_float_bound. */
void mma_check_sampled(mma_type t, uint32_t m, uint32_t n, uint32_t k, const void *a, const void *b,
                       const void *c, unsigned nsamples, int exact, mma_check_result *res);

#endif
