/* bench.h -- what the files of `vyre bench` share: the run's state, one row of the case table, the cases (bench_case.c, bench_compile.c) and the report (bench_report.c). */
#ifndef VYRE_CLI_BENCH_H
#define VYRE_CLI_BENCH_H

#include <stddef.h>
#include <stdint.h>

#include "cli.h"
#include "term.h"

/* Case groups (--cases). */
#define CASES_LATENCY (1u << 0)
#define CASES_BANDWIDTH (1u << 1)
#define CASES_COMPILE (1u << 2)
#define CASES_TRANSFER (1u << 3)

/* One measured case, kept for the --json document. */
typedef struct bench_case {
  char name[48];
  double us, gbps;
  char note[256]; /* a copy: some notes are built on the case's stack */
} bench_case;

typedef struct bench_xfer bench_xfer;       /* the transfer cases' buffers (bench_case.c) */
typedef struct bench_compile bench_compile; /* the compile cases' instances (bench_compile.c) */

/* One run of the suite on one device. */
typedef struct bench {
  const cli_command *cmd;
  vyre_backend *b;
  const char *id;
  int json; /* 1 --json (one document at the end), 2 --jsonl (a line per case) */
  bench_case *done;
  uint32_t done_count, done_cap;
  cli_progress progress;
  int cpu; /* the backend is a CPU: fewer, smaller runs */
  const char *cases;
  int device; /* tagged in the JSON objects under --device all; else -1 */
  vyre_error err;
  /* What the cases run on (bench.c makes it before the first case). */
  vyre_host *host;
  uint32_t ordinal;                 /* the device's */
  const vyre_device_profile *prof;
  void *saxpy;                      /* y = a*x + y, bytes */
  size_t saxpy_size;
  vyre_pipeline psaxpy, pcopy, psum; /* saxpy, y = x, the sum of a host input */
  uint64_t xfer_bytes;              /* S of the transfer cases (--xfer-mib) */
  /* Samples per case. */
  uint32_t lat_iters, bw_iters, seq_rounds, xfer_iters, compile_samples, warm_iters;
  /* State shared by several cases: made by a row's setup, released by
   * cli_bench_release (or a row's done). */
  bench_xfer *xfer;
  bench_compile *compile;
} bench;

/*
 * One case of the suite (bench.c keeps the table, in run order).  A sized
 * case's name ends in "_" and the size follows it: N elements of each
 * --sizes (the bandwidth cases, which run size by size), S bytes of
 * --xfer-mib, or S/4; a size of 0 skips the case.
 */
typedef enum bench_sized { SIZED_NONE, SIZED_N, SIZED_S, SIZED_S4 } bench_sized;
typedef struct bench_row {
  const char *name;
  uint32_t group; /* CASES_* */
  bench_sized sized;
  /* Make the state the case shares with others (NULL: none); idempotent.
   * VYRE_OK, or the failure with B->err set. */
  vyre_status (*setup)(bench *B);
  /* Measure and report (cli_bench_report) case `name` of size `size`. */
  vyre_status (*run)(bench *B, const struct bench_row *row, const char *name, uint64_t size);
  /* After the row, run or not: release what no later row needs (NULL: none). */
  void (*done)(bench *B);
  const char *measures; /* what it measures: the note beside its figure */
} bench_row;

/* bench_report.c: median, and the report of one case (a line of text or
 * of --jsonl, or kept for the --json document).  The clock is
 * vyre__now_ns (abi/support/clock.h). */
double cli_bench_median(double *v, uint32_t n);
void cli_bench_report(bench *B, const char *name, double us, double bytes, const char *note);
/* bench --json: the whole run as one object (docs/schemas/vyre-bench.schema.json). */
void cli_bench_print_document(const bench *B, const vyre_device_profile *prof);

/* bench_case.c: the benchmark programs and the latency, bandwidth,
 * codegen and transfer cases (the rows' setup, run and done). */
vyre_status cli_bench_build_saxpy(void **bytes, size_t *size, vyre_error *err);
/* The same with "+ k" when add_k (each k a new program: a cache miss). */
vyre_status cli_bench_build_saxpy_k(int add_k, float k, void **bytes, size_t *size,
                                    vyre_error *err);
vyre_status cli_bench_build_copy(void **bytes, size_t *size, vyre_error *err);
vyre_status cli_bench_build_sum(void **bytes, size_t *size, vyre_error *err);
vyre_status cli_bench_dispatch_pipeline(bench *B, const bench_row *row, const char *name,
                                        uint64_t size);
vyre_status cli_bench_dispatch_bytes(bench *B, const bench_row *row, const char *name,
                                     uint64_t size);
vyre_status cli_bench_roundtrip(bench *B, const bench_row *row, const char *name, uint64_t size);
vyre_status cli_bench_sequence(bench *B, const bench_row *row, const char *name, uint64_t size);
vyre_status cli_bench_graph(bench *B, const bench_row *row, const char *name, uint64_t size);
vyre_status cli_bench_saxpy_bw(bench *B, const bench_row *row, const char *name, uint64_t size);
vyre_status cli_bench_copy_bw(bench *B, const bench_row *row, const char *name, uint64_t size);
vyre_status cli_bench_codegen(bench *B, const bench_row *row, const char *name, uint64_t size);
vyre_status cli_bench_xfer_setup(bench *B);
vyre_status cli_bench_xfer_resident_setup(bench *B);
vyre_status cli_bench_host_dispatch(bench *B, const bench_row *row, const char *name,
                                    uint64_t size);
vyre_status cli_bench_saxpy_roundtrip(bench *B, const bench_row *row, const char *name,
                                      uint64_t size);
vyre_status cli_bench_resident_upload(bench *B, const bench_row *row, const char *name,
                                      uint64_t size);
vyre_status cli_bench_resident_download(bench *B, const bench_row *row, const char *name,
                                        uint64_t size);
void cli_bench_xfer_release(bench *B);

/* bench_compile.c: the compile cases. */
vyre_status cli_bench_compile_setup(bench *B);
vyre_status cli_bench_compile_disk_setup(bench *B);
vyre_status cli_bench_compile_cold(bench *B, const bench_row *row, const char *name,
                                   uint64_t size);
/* compile_set_8_serial / _threads (by the name), compile_jit_direct and
 * compile_jit_o (reports compile_jit_o0 .. _o4); the last two report
 * nothing on a backend other than cuda. */
vyre_status cli_bench_compile_set(bench *B, const bench_row *row, const char *name,
                                  uint64_t size);
vyre_status cli_bench_compile_jit_direct(bench *B, const bench_row *row, const char *name,
                                         uint64_t size);
vyre_status cli_bench_compile_jit_levels(bench *B, const bench_row *row, const char *name,
                                         uint64_t size);
vyre_status cli_bench_compile_warm_hit(bench *B, const bench_row *row, const char *name,
                                       uint64_t size);
vyre_status cli_bench_compile_disk_hit(bench *B, const bench_row *row, const char *name,
                                       uint64_t size);
void cli_bench_compile_release(bench *B);

#endif /* VYRE_CLI_BENCH_H */
