/* bench_case.c -- the cases of `vyre bench` but the compile ones: the benchmark programs, dispatch latency, sequences, bandwidth, the code generator and end-to-end host transfers; each as a row's setup, run and done (bench.h). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "host-stub/fuzz/progen.h"
#include "plugin/codegen/codegen.h"
#include "vyre/vyre_support.h"
#include "abi/support/clock.h"
#include "bench.h"

/* ------------------------------------------------------------------ */
/* The programs                                                        */
/* ------------------------------------------------------------------ */

/* y[i] = a * x[i] + y[i] for i < len(y); a is a one-element uniform.
 * With add_k, y[i] = a * x[i] + y[i] + k: each k is another program (the
 * compile cases' cache misses). */
vyre_status cli_bench_build_saxpy_k(int add_k, float k, void **bytes, size_t *size,
                                    vyre_error *err) {
  vyre_builder *b = vyre_builder_new(256, 1, 1);
  if (!b) return vyre_error_set(err, VYRE_OUT_OF_MEMORY, 0, "bench: out of memory");
  uint32_t A = vyre_b_buffer(b, "a", UINT32_MAX, VYRE_ACCESS_UNIFORM, VYRE_T_F32, 1, 0);
  uint32_t X = vyre_b_buffer(b, "x", UINT32_MAX, VYRE_ACCESS_READ_ONLY, VYRE_T_F32, 0, 0);
  uint32_t Y = vyre_b_buffer(b, "y", UINT32_MAX, VYRE_ACCESS_READ_WRITE, VYRE_T_F32, 0, 0);
  uint32_t g = vyre_b_gid(b, 0);
  vyre_b_if(b, vyre_b_bin(b, VYRE_OP_LT, g, vyre_b_buflen(b, Y)));
  uint32_t av = vyre_b_load(b, A, vyre_b_u32(b, 0));
  uint32_t f = vyre_b_fma(b, av, vyre_b_load(b, X, g), vyre_b_load(b, Y, g));
  vyre_b_store(b, Y, g, add_k ? vyre_b_bin(b, VYRE_OP_ADD, f, vyre_b_f32(b, k)) : f);
  vyre_b_end(b);
  vyre_status st = vyre_builder_finish(b, bytes, size, err);
  vyre_builder_free(b);
  return st;
}

vyre_status cli_bench_build_saxpy(void **bytes, size_t *size, vyre_error *err) {
  return cli_bench_build_saxpy_k(0, 0.0f, bytes, size, err);
}

/* y[i] = x[i]: the bandwidth ceiling of a kernel that reads and writes. */
vyre_status cli_bench_build_copy(void **bytes, size_t *size, vyre_error *err) {
  vyre_builder *b = vyre_builder_new(256, 1, 1);
  if (!b) return vyre_error_set(err, VYRE_OUT_OF_MEMORY, 0, "bench: out of memory");
  uint32_t X = vyre_b_buffer(b, "x", UINT32_MAX, VYRE_ACCESS_READ_ONLY, VYRE_T_F32, 0, 0);
  uint32_t Y = vyre_b_buffer(b, "y", UINT32_MAX, VYRE_ACCESS_READ_WRITE, VYRE_T_F32, 0, 0);
  uint32_t g = vyre_b_gid(b, 0);
  vyre_b_store(b, Y, g, vyre_b_load(b, X, g));
  vyre_status st = vyre_builder_finish(b, bytes, size, err);
  vyre_builder_free(b);
  return st;
}

/* partial[g] = sum of x[k * G + g] over k, for G = 2^20 invocations:
 * reads every element of a host input of any size (enough loads in
 * flight that the kernel takes well under a millisecond for 1 GiB),
 * returns 4 MiB. */
#define SUM_LANES (1u << 20)
vyre_status cli_bench_build_sum(void **bytes, size_t *size, vyre_error *err) {
  vyre_builder *b = vyre_builder_new(256, 1, 1);
  if (!b) return vyre_error_set(err, VYRE_OUT_OF_MEMORY, 0, "bench: out of memory");
  uint32_t X = vyre_b_buffer(b, "x", UINT32_MAX, VYRE_ACCESS_READ_ONLY, VYRE_T_F32, 0, 0);
  uint32_t P = vyre_b_buffer(b, "partial", UINT32_MAX, VYRE_ACCESS_WRITE_ONLY, VYRE_T_F32,
                             SUM_LANES, 0);
  uint32_t g = vyre_b_gid(b, 0);
  uint32_t acc = vyre_b_local(b, VYRE_T_F32);
  vyre_b_let(b, acc, vyre_b_f32(b, 0.0f));
  uint32_t steps = vyre_b_bin(b, VYRE_OP_DIV,
                              vyre_b_bin(b, VYRE_OP_ADD, vyre_b_buflen(b, X),
                                         vyre_b_u32(b, SUM_LANES - 1)),
                              vyre_b_u32(b, SUM_LANES));
  uint32_t k = vyre_b_local(b, VYRE_T_U32);
  vyre_b_loop(b, k, vyre_b_u32(b, 0), steps);
  uint32_t at = vyre_b_bin(b, VYRE_OP_ADD,
                           vyre_b_bin(b, VYRE_OP_MUL, vyre_b_get(b, k), vyre_b_u32(b, SUM_LANES)),
                           vyre_b_gid(b, 0));
  vyre_b_assign(b, acc, vyre_b_bin(b, VYRE_OP_ADD, vyre_b_get(b, acc), vyre_b_load(b, X, at)));
  vyre_b_end(b);
  vyre_b_store(b, P, g, vyre_b_get(b, acc));
  vyre_status st = vyre_builder_finish(b, bytes, size, err);
  vyre_builder_free(b);
  return st;
}

static float *random_floats(uint64_t n, uint64_t seed) {
  float *v = malloc((size_t)n * sizeof *v);
  if (!v) return NULL;
  for (uint64_t i = 0; i < n; i++) {
    seed = seed * 6364136223846793005ull + 1442695040888963407ull;
    v[i] = (float)(seed >> 40) / (float)(1u << 24);
  }
  return v;
}

/* Resident buffers a, x, y of n floats (a: one float). */
typedef struct res3 {
  vyre_resident h[3];
} res3;

static vyre_status res3_make(bench *B, res3 *r, uint64_t n, uint64_t seed) {
  memset(r, 0, sizeof *r);
  vyre_backend *b = B->b;
  float a = 2.0f;
  float *x = random_floats(n, seed), *y = random_floats(n, seed + 1);
  vyre_status st = VYRE_OUT_OF_MEMORY;
  if (!x || !y) {
    vyre_error_set(&B->err, st, 0, "bench: out of host memory for %llu floats",
                   (unsigned long long)n);
    goto done;
  }
  if ((st = b->vt->resident_alloc(b, 4, &r->h[0], &B->err)) ||
      (st = b->vt->resident_alloc(b, n * 4, &r->h[1], &B->err)) ||
      (st = b->vt->resident_alloc(b, n * 4, &r->h[2], &B->err)))
    goto done;
  vyre_resident_copy up[3] = {{r->h[0], 0, &a, 4}, {r->h[1], 0, x, n * 4}, {r->h[2], 0, y, n * 4}};
  st = b->vt->resident_upload_many(b, up, 3, &B->err);
done:
  free(x);
  free(y);
  return st;
}

static void res3_free(bench *B, res3 *r) {
  for (int i = 0; i < 3; i++)
    if (r->h[i]) B->b->vt->resident_free(B->b, r->h[i], NULL);
  memset(r, 0, sizeof *r);
}

/* ------------------------------------------------------------------ */
/* Latency                                                             */
/* ------------------------------------------------------------------ */

/* Latency of dispatch_resident on 1024 elements: `ref` names the program
 * (a pipeline, or bytes: a first-level plan cache hit each time). */
static vyre_status case_dispatch_resident(bench *B, vyre_program_ref ref, const char *name,
                                          const char *note, uint32_t iters) {
  res3 r;
  vyre_status st = res3_make(B, &r, 1024, 1);
  double *v = calloc(iters, sizeof *v);
  if (!st && !v) st = vyre_error_set(&B->err, VYRE_OUT_OF_MEMORY, 0, "bench: out of memory");
  for (uint32_t i = 0; !st && i < iters / 10 + 1; i++)
    st = B->b->vt->dispatch_resident(B->b, &ref, r.h, 3, NULL, NULL, &B->err);
  for (uint32_t i = 0; !st && i < iters; i++) {
    uint64_t t0 = vyre__now_ns();
    st = B->b->vt->dispatch_resident(B->b, &ref, r.h, 3, NULL, NULL, &B->err);
    v[i] = (double)(vyre__now_ns() - t0) / 1e3;
  }
  if (!st) cli_bench_report(B, name, cli_bench_median(v, iters), 0, note);
  free(v);
  res3_free(B, &r);
  return st;
}

/* Latency of a host dispatch: 1024 floats in, compute, 1024 floats out. */
static vyre_status case_roundtrip(bench *B, vyre_pipeline pipe, uint32_t iters, const char *name,
                                  const char *measures) {
  float a = 2.0f;
  float *x = random_floats(1024, 3), *y = random_floats(1024, 4);
  float out[1024];
  double *v = calloc(iters, sizeof *v);
  vyre_status st = VYRE_OK;
  if (!x || !y || !v) st = vyre_error_set(&B->err, VYRE_OUT_OF_MEMORY, 0, "bench: out of memory");
  vyre_input in[3] = {{&a, 4}, {x, 4096}, {y, 4096}};
  vyre_program_ref ref = VYRE_PROGRAM_PIPELINE(pipe);
  for (uint32_t i = 0; !st && i < iters + iters / 10 + 1; i++) {
    vyre_output_slot slot = {out, sizeof out, 0};
    uint64_t t0 = vyre__now_ns();
    st = B->b->vt->dispatch_into(B->b, &ref, in, 3, NULL, &slot, 1, NULL, &B->err);
    if (i > iters / 10) v[i - iters / 10 - 1] = (double)(vyre__now_ns() - t0) / 1e3;
  }
  if (!st) cli_bench_report(B, name, cli_bench_median(v, iters), 0, measures);
  free(x);
  free(y);
  free(v);
  return st;
}

vyre_status cli_bench_dispatch_pipeline(bench *B, const bench_row *row, const char *name,
                                        uint64_t size) {
  (void)size;
  return case_dispatch_resident(B, (vyre_program_ref)VYRE_PROGRAM_PIPELINE(B->psaxpy), name,
                                row->measures, B->lat_iters);
}

vyre_status cli_bench_dispatch_bytes(bench *B, const bench_row *row, const char *name,
                                     uint64_t size) {
  (void)size;
  return case_dispatch_resident(B, (vyre_program_ref)VYRE_PROGRAM_BYTES(B->saxpy, B->saxpy_size),
                                name, row->measures, B->lat_iters);
}

vyre_status cli_bench_roundtrip(bench *B, const bench_row *row, const char *name, uint64_t size) {
  (void)size;
  return case_roundtrip(B, B->psaxpy, B->lat_iters / 2 > 10 ? B->lat_iters / 2 : 10, name,
                        row->measures);
}

/* Many small launches on one queue: a sequence of 100 steps, once
 * (queued launches, repeat 1) or repeated 10 times (graph replay where
 * offered), per step. */
static vyre_status case_sequence(bench *B, vyre_pipeline pipe, uint32_t rounds, const char *name,
                                 uint32_t repeat, const char *measures) {
  res3 r;
  vyre_status st = res3_make(B, &r, 1024, 5);
  enum { STEPS = 100 };
  vyre_sequence_step steps[STEPS];
  const vyre_program_ref ref = VYRE_PROGRAM_PIPELINE(pipe);
  for (int i = 0; i < STEPS; i++) {
    memset(&steps[i], 0, sizeof steps[i]);
    steps[i].struct_size = sizeof steps[i];
    steps[i].buffer_count = 3;
    steps[i].program = &ref;
    steps[i].buffers = r.h;
  }
  double *v = calloc(rounds, sizeof *v);
  if (!st && !v) st = vyre_error_set(&B->err, VYRE_OUT_OF_MEMORY, 0, "bench: out of memory");
  double *dev = calloc(rounds, sizeof *dev), *enq = calloc(rounds, sizeof *enq);
  if (!st && (!dev || !enq))
    st = vyre_error_set(&B->err, VYRE_OUT_OF_MEMORY, 0, "bench: out of memory");
  if (!st) {
    int have_device = 1;
    for (uint32_t i = 0; !st && i < rounds + 3; i++) {
      vyre_timing t;
      memset(&t, 0, sizeof t);
      t.struct_size = sizeof t;
      uint64_t t0 = vyre__now_ns();
      st = B->b->vt->dispatch_sequence(B->b, steps, STEPS, repeat, NULL, 0, &t,
                                       &B->err);
      double per = STEPS * repeat;
      if (i >= 3) {
        v[i - 3] = (double)(vyre__now_ns() - t0) / 1e3 / per;
        enq[i - 3] = (double)t.enqueue_ns / 1e3 / per;
        dev[i - 3] = (double)t.device_ns / 1e3 / per;
        if (!(t.valid & VYRE_TIMING_DEVICE)) have_device = 0;
      }
    }
    if (st) goto done;
    /* Where the time goes: the host's part before the last launch is
     * queued (enqueue) and the device's, between the first and the last
     * launch (device). */
    char note[160];
    double e = cli_bench_median(enq, rounds), d = have_device ? cli_bench_median(dev, rounds) : 0;
    snprintf(note, sizeof note, "%s; enqueue %.3f us, device %.3f us", measures, e, d);
    cli_bench_report(B, name, cli_bench_median(v, rounds), 0, note);
  }
done:
  free(dev);
  free(enq);
  free(v);
  res3_free(B, &r);
  return st;
}

vyre_status cli_bench_sequence(bench *B, const bench_row *row, const char *name, uint64_t size) {
  (void)size;
  return case_sequence(B, B->psaxpy, B->seq_rounds, name, 1, row->measures);
}

vyre_status cli_bench_graph(bench *B, const bench_row *row, const char *name, uint64_t size) {
  (void)size;
  return case_sequence(B, B->psaxpy, B->seq_rounds, name, 10, row->measures);
}

/* ------------------------------------------------------------------ */
/* Bandwidth and the code generator                                    */
/* ------------------------------------------------------------------ */

/* Device time of one kernel over n elements, alternating two buffer sets
 * so consecutive runs do not hit in L2. */
static vyre_status case_bandwidth(bench *B, vyre_pipeline pipe, const char *name, uint64_t n,
                                  double bytes_per_elem, int saxpy, uint32_t iters,
                                  const char *measures) {
  res3 r[2];
  memset(r, 0, sizeof r);
  vyre_status st = res3_make(B, &r[0], n, 7);
  if (!st) st = res3_make(B, &r[1], n, 9);
  double *v = calloc(iters, sizeof *v);
  if (!st && !v) st = vyre_error_set(&B->err, VYRE_OUT_OF_MEMORY, 0, "bench: out of memory");
  vyre_program_ref ref = VYRE_PROGRAM_PIPELINE(pipe);
  int have_device = 1;
  for (uint32_t i = 0; !st && i < iters + 3; i++) {
    vyre_timing t;
    memset(&t, 0, sizeof t);
    t.struct_size = sizeof t;
    const vyre_resident *h = saxpy ? r[i & 1].h : r[i & 1].h + 1;
    st = B->b->vt->dispatch_resident(B->b, &ref, h, saxpy ? 3 : 2, NULL, &t, &B->err);
    if (!st && i >= 3) {
      if (!(t.valid & VYRE_TIMING_DEVICE)) have_device = 0;
      v[i - 3] = (double)((t.valid & VYRE_TIMING_DEVICE) ? t.device_ns : t.wall_ns) / 1e3;
    }
  }
  if (!st)
    cli_bench_report(B, name, cli_bench_median(v, iters), bytes_per_elem * (double)n,
                     have_device ? measures : "host wall (no device timer)");
  free(v);
  res3_free(B, &r[0]);
  res3_free(B, &r[1]);
  return st;
}

vyre_status cli_bench_saxpy_bw(bench *B, const bench_row *row, const char *name, uint64_t size) {
  return case_bandwidth(B, B->psaxpy, name, size, 12.0, 1, B->bw_iters, row->measures);
}

vyre_status cli_bench_copy_bw(bench *B, const bench_row *row, const char *name, uint64_t size) {
  return case_bandwidth(B, B->pcopy, name, size, 8.0, 0, B->bw_iters, row->measures);
}

/* The target codegen_10k generates for where the device gives none (a CPU
 * backend) or one the code generator refuses: sm_90, the target of the
 * docs' `vyre emit-ptx` examples and of `vyre fuzz --arch`, so that
 * codegen_10k rows of different machines compare the same work.
 * codegen.h has no default target: the runtime always passes the
 * device's. */
enum { CODEGEN_BENCH_SM_MAJOR = 9, CODEGEN_BENCH_SM_MINOR = 0 };

/* codegen_10k: IR -> PTX of fz_progen_bench_program(10000) for this device's
 * target (CODEGEN_BENCH_SM_* on a CPU backend): the code generator alone,
 * no driver. */
static vyre_status case_codegen(bench *B, const vyre_device_profile *prof, const char *name) {
  void *bytes = NULL;
  size_t size = 0;
  vyre_program *p = NULL;
  vyre_status st = fz_progen_bench_program(10000, 0, &bytes, &size, &B->err);
  if (!st) st = vyre_program_decode(bytes, size, &p, &B->err);
  free(bytes);
  cg_options o;
  memset(&o, 0, sizeof o);
  o.sm_major = B->cpu ? CODEGEN_BENCH_SM_MAJOR : prof->compute_major;
  o.sm_minor = B->cpu ? CODEGEN_BENCH_SM_MINOR : prof->compute_minor;
  o.workgroup[0] = 256;
  o.workgroup[1] = o.workgroup[2] = 1;
  enum { RUNS = 51 };
  double v[RUNS];
  for (int r = 0; !st && r < RUNS; r++) {
    char *ptx = NULL;
    size_t len = 0;
    cg_kernel_info info;
    uint64_t t0 = vyre__now_ns();
    st = cg_emit_ptx(p, &o, &ptx, &len, &info, &B->err);
    v[r] = (double)(vyre__now_ns() - t0) / 1e3;
    free(ptx);
    if (st && r == 0 &&
        (o.sm_major != CODEGEN_BENCH_SM_MAJOR || o.sm_minor != CODEGEN_BENCH_SM_MINOR)) {
      /* A target this codegen does not know: measure the default's. */
      o.sm_major = CODEGEN_BENCH_SM_MAJOR;
      o.sm_minor = CODEGEN_BENCH_SM_MINOR;
      st = VYRE_OK;
      r--;
    }
  }
  char note[96];
  snprintf(note, sizeof note, "%u instructions -> PTX for sm_%u%u, host", p ? p->inst_count : 0,
           o.sm_major, o.sm_minor);
  if (!st) cli_bench_report(B, name, cli_bench_median(v, RUNS), 0, note);
  vyre_program_free(p);
  return st;
}

vyre_status cli_bench_codegen(bench *B, const bench_row *row, const char *name, uint64_t size) {
  (void)row;
  (void)size;
  return case_codegen(B, B->prof, name);
}

/* ------------------------------------------------------------------ */
/* End-to-end host transfers                                           */
/* ------------------------------------------------------------------ */

/* Median host wall of `iters` runs (after one warm-up) of one transfer
 * case; fn returns VYRE_OK or fails with B->err. */
typedef vyre_status (*xfer_fn)(bench *B, void *state);
static vyre_status time_xfer(bench *B, const char *name, double bytes, const char *note,
                             uint32_t iters, xfer_fn fn, void *state) {
  double v[16];
  if (iters > 16) iters = 16;
  vyre_status st = fn(B, state);
  for (uint32_t i = 0; !st && i < iters; i++) {
    uint64_t t0 = vyre__now_ns();
    st = fn(B, state);
    v[i] = (double)(vyre__now_ns() - t0) / 1e3;
  }
  if (!st) cli_bench_report(B, name, cli_bench_median(v, iters), bytes, note);
  return st;
}

typedef struct xfer_state {
  vyre_pipeline pipe;
  vyre_input in[3];
  vyre_output_slot slot;
  vyre_resident h;
  void *host;
  uint64_t bytes;
} xfer_state;

static vyre_status run_host_dispatch(bench *B, void *state) {
  xfer_state *x = state;
  vyre_program_ref ref = VYRE_PROGRAM_PIPELINE(x->pipe);
  x->slot.size = 0;
  return B->b->vt->dispatch_into(B->b, &ref, x->in, 1, NULL, &x->slot, 1, NULL, &B->err);
}

static vyre_status run_saxpy_roundtrip(bench *B, void *state) {
  xfer_state *x = state;
  vyre_program_ref ref = VYRE_PROGRAM_PIPELINE(x->pipe);
  x->slot.size = 0;
  return B->b->vt->dispatch_into(B->b, &ref, x->in, 3, NULL, &x->slot, 1, NULL, &B->err);
}

static vyre_status run_resident_up(bench *B, void *state) {
  xfer_state *x = state;
  return B->b->vt->resident_upload(B->b, x->h, x->host, x->bytes, &B->err);
}

static vyre_status run_resident_down(bench *B, void *state) {
  xfer_state *x = state;
  return B->b->vt->resident_download(B->b, x->h, x->host, x->bytes, &B->err);
}

/* The buffers of the transfer cases, made once for all four: x of S
 * bytes, y and yo of S/4, the sum's 4 MiB of partials, the resident
 * buffer of S bytes the upload and download cases share. */
struct bench_xfer {
  float a;
  float *x, *y, *part, *yo;
  vyre_resident h;
};

vyre_status cli_bench_xfer_setup(bench *B) {
  if (B->xfer) return VYRE_OK;
  uint64_t bytes = B->xfer_bytes, quarter = bytes / 4;
  bench_xfer *X = calloc(1, sizeof *X);
  if (X) {
    B->xfer = X;
    X->a = 2.0f;
    X->x = random_floats(bytes / 4, 11);
    X->y = quarter ? random_floats(quarter / 4, 12) : NULL;
    X->part = malloc(SUM_LANES * sizeof(float));
    X->yo = malloc(quarter ? quarter : 1);
  }
  if (!X || !X->x || !X->y || !X->part || !X->yo)
    return vyre_error_set(&B->err, VYRE_OUT_OF_MEMORY, 0,
                          "bench: out of host memory for the %llu-byte transfer cases. Fix: pass "
                          "a smaller --xfer-mib",
                          (unsigned long long)bytes);
  return VYRE_OK;
}

vyre_status cli_bench_xfer_resident_setup(bench *B) {
  vyre_status st = cli_bench_xfer_setup(B);
  if (!st && !B->xfer->h) st = B->b->vt->resident_alloc(B->b, B->xfer_bytes, &B->xfer->h, &B->err);
  return st;
}

void cli_bench_xfer_release(bench *B) {
  bench_xfer *X = B->xfer;
  if (!X) return;
  if (X->h) B->b->vt->resident_free(B->b, X->h, NULL);
  free(X->x);
  free(X->y);
  free(X->part);
  free(X->yo);
  free(X);
  B->xfer = NULL;
}

/* host_dispatch_S: a sum over an S-byte f32 host input (S up, 4 MiB down). */
vyre_status cli_bench_host_dispatch(bench *B, const bench_row *row, const char *name,
                                    uint64_t size) {
  bench_xfer *X = B->xfer;
  xfer_state s;
  memset(&s, 0, sizeof s);
  s.pipe = B->psum;
  s.in[0] = (vyre_input){X->x, size};
  s.slot = (vyre_output_slot){X->part, SUM_LANES * sizeof(float), 0};
  return time_xfer(B, name, (double)size, row->measures, B->xfer_iters, run_host_dispatch, &s);
}

/* saxpy_roundtrip_S/4: x and y of S/4 bytes up, y down. */
vyre_status cli_bench_saxpy_roundtrip(bench *B, const bench_row *row, const char *name,
                                      uint64_t size) {
  bench_xfer *X = B->xfer;
  xfer_state s;
  memset(&s, 0, sizeof s);
  s.pipe = B->psaxpy;
  s.in[0] = (vyre_input){&X->a, 4};
  s.in[1] = (vyre_input){X->x, size};
  s.in[2] = (vyre_input){X->y, size};
  s.slot = (vyre_output_slot){X->yo, size, 0};
  return time_xfer(B, name, 3.0 * (double)size, row->measures, B->xfer_iters,
                   run_saxpy_roundtrip, &s);
}

/* resident_upload_S and resident_download_S: one copy of S bytes between
 * pageable host memory and the resident buffer. */
static vyre_status resident_copy(bench *B, const bench_row *row, const char *name, uint64_t size,
                                 xfer_fn fn) {
  xfer_state s;
  memset(&s, 0, sizeof s);
  s.h = B->xfer->h;
  s.host = B->xfer->x;
  s.bytes = size;
  return time_xfer(B, name, (double)size, row->measures, B->xfer_iters, fn, &s);
}

vyre_status cli_bench_resident_upload(bench *B, const bench_row *row, const char *name,
                                      uint64_t size) {
  return resident_copy(B, row, name, size, run_resident_up);
}

vyre_status cli_bench_resident_download(bench *B, const bench_row *row, const char *name,
                                        uint64_t size) {
  return resident_copy(B, row, name, size, run_resident_down);
}
