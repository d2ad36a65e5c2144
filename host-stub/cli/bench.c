/* bench.c -- `vyre bench`: dispatch latency, memory bandwidth, end-to-end host transfers and compile latency of a backend, case for case with bench/peers.py. */
#include <dirent.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "host-stub/fuzz/progen.h"
#include "plugin/codegen/codegen.h"
#include "vyre/vyre_support.h"
#include "cli_json.h"
#include "term.h"
#include "cli.h"

#define MAX_SIZES 8

typedef struct bench_args {
  const char *backend;
  uint32_t device;
  uint64_t sizes[MAX_SIZES];
  uint32_t size_count;
  uint32_t iters;   /* latency samples; 0 = by backend */
  uint32_t xfer_mib; /* host transfer cases' size in MiB (0: none) */
  int xfer_mib_set;  /* else by backend: 1024 on a GPU, none on a CPU */
  const char *cases; /* comma-separated case names or prefixes; NULL = all */
  int json;          /* 1 --json (one document), 2 --jsonl (a line per case) */
  int all_devices; /* --device all: the suite on every device in turn */
} bench_args;

/* Case groups (--cases). */
#define CASES_LATENCY (1u << 0)
#define CASES_BANDWIDTH (1u << 1)
#define CASES_COMPILE (1u << 2)
#define CASES_TRANSFER (1u << 3)

/* The group a --cases item names (its n bytes), or 0. */
static uint32_t case_group(const char *p, size_t n) {
  static const struct {
    const char *name;
    uint32_t group;
  } groups[] = {{"latency", CASES_LATENCY},
                {"bandwidth", CASES_BANDWIDTH},
                {"transfer", CASES_TRANSFER},
                {"compile", CASES_COMPILE},
                {"all", CASES_LATENCY | CASES_BANDWIDTH | CASES_TRANSFER | CASES_COMPILE}};
  for (size_t k = 0; k < sizeof groups / sizeof groups[0]; k++)
    if (strlen(groups[k].name) == n && strncmp(groups[k].name, p, n) == 0) return groups[k].group;
  return 0;
}

/* One measured case, kept for the --json document. */
typedef struct bench_case {
  char name[48];
  double us, gbps;
  char note[256]; /* a copy: some notes are built on the case's stack */
} bench_case;

typedef struct bench {
  const cli_command *cmd;
  vyre_backend *b;
  const char *id;
  int json; /* as bench_args.json */
  bench_case *done;
  uint32_t done_count, done_cap;
  cli_progress progress;
  int cpu; /* the backend is a CPU: fewer, smaller runs */
  const char *cases;
  int device; /* tagged in the JSON objects under --device all; else -1 */
  vyre_error err;
} bench;

/* Is the case named `name`, of group `group` (CASES_*), selected by
 * --cases (group names, case names or their prefixes)? */
static int wanted(const bench *B, const char *name, uint32_t group) {
  if (!B->cases) return 1;
  for (const char *p = B->cases; *p;) {
    size_t n = strcspn(p, ",");
    uint32_t g = case_group(p, n);
    if (g ? (g & group) != 0 : n && strncmp(name, p, n) == 0) return 1;
    p += n;
    if (*p == ',') p++;
  }
  return 0;
}

/* Every item of a --cases list is a group or names some case. */
static int cases_valid(const char *text) {
  static const char *const names[] = {
      "dispatch_resident_1k", "dispatch_bytes_1k", "roundtrip_1k", "sequence_1k_x100",
      "graph_1k_x1000", "saxpy_bw_", "copy_bw_", "host_dispatch_", "saxpy_roundtrip_",
      "resident_upload_", "resident_download_", "codegen_10k", "compile_cold",
      "compile_warm_hit", "compile_disk_hit"};
  if (!*text) return 0;
  for (const char *p = text; *p;) {
    size_t n = strcspn(p, ",");
    int ok = n && case_group(p, n);
    for (size_t k = 0; n && !ok && k < sizeof names / sizeof names[0]; k++) {
      size_t l = strlen(names[k]);
      ok = strncmp(names[k], p, n < l ? n : l) == 0;
    }
    if (!ok) return 0;
    p += n;
    if (*p == ',') p++;
  }
  return 1;
}

/* "1g", "256m", "4k": the size suffix of a transfer case's name. */
static void size_label(char *out, size_t cap, uint64_t bytes) {
  if (bytes >= (1ull << 30) && bytes % (1ull << 30) == 0)
    snprintf(out, cap, "%llug", (unsigned long long)(bytes >> 30));
  else if (bytes >= (1ull << 20) && bytes % (1ull << 20) == 0)
    snprintf(out, cap, "%llum", (unsigned long long)(bytes >> 20));
  else
    snprintf(out, cap, "%lluk", (unsigned long long)(bytes >> 10));
}

static uint64_t now_ns(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static int cmp_double(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return x < y ? -1 : x > y;
}

static double median(double *v, uint32_t n) {
  qsort(v, n, sizeof *v, cmp_double);
  return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

static void report(bench *B, const char *name, double us, double bytes, const char *note) {
  double gbps = bytes > 0 && us > 0 ? bytes / (us * 1e-6) / 1e9 : 0;
  char line[96];
  cli_progress_show(&B->progress, NULL);
  if (B->done_count == B->done_cap) {
    uint32_t cap = B->done_cap ? B->done_cap * 2 : 32;
    bench_case *grown = realloc(B->done, cap * sizeof *grown);
    if (grown) {
      B->done = grown;
      B->done_cap = cap;
    }
  }
  if (B->done_count < B->done_cap) {
    bench_case *c = &B->done[B->done_count++];
    snprintf(c->name, sizeof c->name, "%s", name);
    c->us = us;
    c->gbps = gbps;
    snprintf(c->note, sizeof c->note, "%s", note);
  }
  snprintf(line, sizeof line, "vyre bench: %u case%s done, the last %s", B->done_count,
           B->done_count == 1 ? "" : "s", name);
  if (B->json == 1) {
    /* The document comes at the end (print_document). */
  } else if (B->json) {
    printf("{\"peer\":\"vyre-%s\",\"case\":\"%s\",\"median_us\":%.3f", B->id, name, us);
    if (gbps > 0) printf(",\"gbps\":%.1f", gbps);
    if (B->device >= 0) printf(",\"device\":%d", B->device);
    printf("}\n");
  } else if (gbps > 0) {
    printf("  %-26s %12.3f us %10.1f GB/s  %s\n", name, us, gbps, note);
  } else {
    printf("  %-26s %12.3f us %15s  %s\n", name, us, "", note);
  }
  fflush(stdout);
  cli_progress_show(&B->progress, line);
}

/* bench --json: the whole run as one object (docs/schemas/vyre-bench.schema.json). */
static void print_document(const bench *B, const vyre_device_profile *prof) {
  cj_writer w;
  char peer[96];
  snprintf(peer, sizeof peer, "vyre-%s", B->id);
  cj_init(&w, stdout);
  cj_object_begin(&w);
  cj_key(&w, "backend");
  cj_string(&w, B->id);
  if (B->device >= 0) {
    cj_key(&w, "ordinal");
    cj_uint(&w, (uint64_t)B->device);
  }
  cj_key(&w, "device");
  cj_string(&w, prof->name);
  cj_key(&w, "compute_units");
  cj_uint(&w, prof->compute_units);
  cj_key(&w, "cases");
  cj_array_begin(&w);
  for (uint32_t i = 0; i < B->done_count; i++) {
    const bench_case *c = &B->done[i];
    cj_object_begin(&w);
    cj_key(&w, "peer");
    cj_string(&w, peer);
    cj_key(&w, "case");
    cj_string(&w, c->name);
    cj_key(&w, "median_us");
    cj_double(&w, c->us);
    cj_key(&w, "gbps");
    if (c->gbps > 0) cj_double(&w, c->gbps);
    else cj_null(&w);
    cj_key(&w, "note");
    cj_string(&w, c->note);
    cj_object_end(&w);
  }
  cj_array_end(&w);
  cj_object_end(&w);
  cj_end(&w);
}

/* y[i] = a * x[i] + y[i] for i < len(y); a is a one-element uniform. */
static vyre_status build_saxpy(void **bytes, size_t *size, vyre_error *err) {
  vyre_builder *b = vyre_builder_new(256, 1, 1);
  if (!b) return vyre_error_set(err, VYRE_OUT_OF_MEMORY, 0, "bench: out of memory");
  uint32_t A = vyre_b_buffer(b, "a", UINT32_MAX, VYRE_ACCESS_UNIFORM, VYRE_T_F32, 1, 0);
  uint32_t X = vyre_b_buffer(b, "x", UINT32_MAX, VYRE_ACCESS_READ_ONLY, VYRE_T_F32, 0, 0);
  uint32_t Y = vyre_b_buffer(b, "y", UINT32_MAX, VYRE_ACCESS_READ_WRITE, VYRE_T_F32, 0, 0);
  uint32_t g = vyre_b_gid(b, 0);
  vyre_b_if(b, vyre_b_bin(b, VYRE_OP_LT, g, vyre_b_buflen(b, Y)));
  uint32_t av = vyre_b_load(b, A, vyre_b_u32(b, 0));
  vyre_b_store(b, Y, g, vyre_b_fma(b, av, vyre_b_load(b, X, g), vyre_b_load(b, Y, g)));
  vyre_b_end(b);
  vyre_status st = vyre_builder_finish(b, bytes, size, err);
  vyre_builder_free(b);
  return st;
}

/* y[i] = x[i]: the bandwidth ceiling of a kernel that reads and writes. */
static vyre_status build_copy(void **bytes, size_t *size, vyre_error *err) {
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
static vyre_status build_sum(void **bytes, size_t *size, vyre_error *err) {
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
    uint64_t t0 = now_ns();
    st = B->b->vt->dispatch_resident(B->b, &ref, r.h, 3, NULL, NULL, &B->err);
    v[i] = (double)(now_ns() - t0) / 1e3;
  }
  if (!st) report(B, name, median(v, iters), 0, note);
  free(v);
  res3_free(B, &r);
  return st;
}

/* Latency of a host dispatch: 1024 floats in, compute, 1024 floats out. */
static vyre_status case_roundtrip(bench *B, vyre_pipeline pipe, uint32_t iters) {
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
    uint64_t t0 = now_ns();
    st = B->b->vt->dispatch_into(B->b, &ref, in, 3, NULL, &slot, 1, NULL, &B->err);
    if (i > iters / 10) v[i - iters / 10 - 1] = (double)(now_ns() - t0) / 1e3;
  }
  if (!st) report(B, "roundtrip_1k", median(v, iters), 0, "host -> device -> host, host wall");
  free(x);
  free(y);
  free(v);
  return st;
}

/* Many small launches on one queue: a sequence of 100 steps, once
 * (queued launches) and repeated 10 times (graph replay where offered). */
static vyre_status case_sequence(bench *B, vyre_pipeline pipe, uint32_t rounds) {
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
  static const struct {
    const char *name;
    uint32_t repeat;
    const char *note;
  } kinds[] = {{"sequence_1k_x100", 1, "per step: 100 queued launches, one wait"},
               {"graph_1k_x1000", 10, "per step: 100 steps replayed 10x, one wait"}};
  double *v = calloc(rounds, sizeof *v);
  if (!st && !v) st = vyre_error_set(&B->err, VYRE_OUT_OF_MEMORY, 0, "bench: out of memory");
  double *dev = calloc(rounds, sizeof *dev), *enq = calloc(rounds, sizeof *enq);
  if (!st && (!dev || !enq))
    st = vyre_error_set(&B->err, VYRE_OUT_OF_MEMORY, 0, "bench: out of memory");
  for (int k = 0; !st && k < 2; k++) {
    int have_device = 1;
    for (uint32_t i = 0; !st && i < rounds + 3; i++) {
      vyre_timing t;
      memset(&t, 0, sizeof t);
      t.struct_size = sizeof t;
      uint64_t t0 = now_ns();
      st = B->b->vt->dispatch_sequence(B->b, steps, STEPS, kinds[k].repeat, NULL, 0, &t,
                                       &B->err);
      double per = STEPS * kinds[k].repeat;
      if (i >= 3) {
        v[i - 3] = (double)(now_ns() - t0) / 1e3 / per;
        enq[i - 3] = (double)t.enqueue_ns / 1e3 / per;
        dev[i - 3] = (double)t.device_ns / 1e3 / per;
        if (!(t.valid & VYRE_TIMING_DEVICE)) have_device = 0;
      }
    }
    if (st) break;
    /* Where the time goes: the host's part before the last launch is
     * queued (enqueue) and the device's, between the first and the last
     * launch (device). */
    char note[160];
    double e = median(enq, rounds), d = have_device ? median(dev, rounds) : 0;
    snprintf(note, sizeof note, "%s; enqueue %.3f us, device %.3f us", kinds[k].note, e, d);
    report(B, kinds[k].name, median(v, rounds), 0, note);
  }
  free(dev);
  free(enq);
  free(v);
  res3_free(B, &r);
  return st;
}

/* Device time of one kernel over n elements, alternating two buffer sets
 * so consecutive runs do not hit in L2. */
static vyre_status case_bandwidth(bench *B, vyre_pipeline pipe, const char *name, uint64_t n,
                                  double bytes_per_elem, int saxpy, uint32_t iters) {
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
  char label[64];
  snprintf(label, sizeof label, "%s_%llu", name, (unsigned long long)n);
  if (!st)
    report(B, label, median(v, iters), bytes_per_elem * (double)n,
           have_device ? "device time" : "host wall (no device timer)");
  free(v);
  res3_free(B, &r[0]);
  res3_free(B, &r[1]);
  return st;
}

/* ------------------------------------------------------------------ */
/* Compile latency: program bytes -> loaded kernel                     */
/* ------------------------------------------------------------------ */
/* y[i] = a * x[i] + y[i] + k: each k is another program (a cache miss). */
static vyre_status build_saxpy_k(float k, void **bytes, size_t *size, vyre_error *err) {
  vyre_builder *b = vyre_builder_new(256, 1, 1);
  if (!b) return vyre_error_set(err, VYRE_OUT_OF_MEMORY, 0, "bench: out of memory");
  uint32_t A = vyre_b_buffer(b, "a", UINT32_MAX, VYRE_ACCESS_UNIFORM, VYRE_T_F32, 1, 0);
  uint32_t X = vyre_b_buffer(b, "x", UINT32_MAX, VYRE_ACCESS_READ_ONLY, VYRE_T_F32, 0, 0);
  uint32_t Y = vyre_b_buffer(b, "y", UINT32_MAX, VYRE_ACCESS_READ_WRITE, VYRE_T_F32, 0, 0);
  uint32_t g = vyre_b_gid(b, 0);
  vyre_b_if(b, vyre_b_bin(b, VYRE_OP_LT, g, vyre_b_buflen(b, Y)));
  uint32_t av = vyre_b_load(b, A, vyre_b_u32(b, 0));
  uint32_t f = vyre_b_fma(b, av, vyre_b_load(b, X, g), vyre_b_load(b, Y, g));
  vyre_b_store(b, Y, g, vyre_b_bin(b, VYRE_OP_ADD, f, vyre_b_f32(b, k)));
  vyre_b_end(b);
  vyre_status st = vyre_builder_finish(b, bytes, size, err);
  vyre_builder_free(b);
  return st;
}

/* A backend metric; 0 when the backend does not report it. */
static int metric_of(vyre_backend *b, const char *name, uint64_t *value) {
  vyre_metric m[160];
  uint32_t n = 0;
  if (!VYRE_HOST_HAS(b, metrics) || b->vt->metrics(b, m, 160, &n, NULL) != VYRE_OK) return 0;
  for (uint32_t i = 0; i < n && i < 160; i++) {
    if (strcmp(m[i].name, name) == 0) {
      *value = m[i].value;
      return 1;
    }
  }
  return 0;
}

/* Host wall time of pipeline_create (bytes -> loaded kernel), in us; the
 * pipeline is released untimed. */
static vyre_status time_create(bench *B, vyre_backend *b, const void *bytes, size_t size,
                               double *us) {
  vyre_pipeline p = 0;
  uint64_t t0 = now_ns();
  vyre_status st = b->vt->pipeline_create(b, bytes, size, NULL, &p, &B->err);
  *us = (double)(now_ns() - t0) / 1e3;
  if (st == VYRE_OK) b->vt->pipeline_release(b, p, NULL);
  return st;
}

/* A fresh instance of the measured backend, its disk cache on or off
 * (read from the environment when an instance is made). */
static vyre_status fresh_instance(bench *B, vyre_host *host, uint32_t device, int disk,
                                  vyre_backend **out) {
  setenv("VYRE_CUDA_DISK_CACHE", disk ? "1" : "0", 1);
  vyre_backend_options bo = {sizeof bo, device, 0, 0, NULL};
  uint32_t index = 0;
  return vyre_host_create(host, B->id, &bo, out, &index, &B->err);
}

/* rm -r of the bench's private cache root (two levels: DIR/cuda/FILE). */
static void remove_cache_root(const char *root) {
  char sub[600], path[900];
  snprintf(sub, sizeof sub, "%s/cuda", root);
  DIR *d = opendir(sub);
  if (d) {
    struct dirent *e;
    while ((e = readdir(d)) != NULL) {
      if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0) continue;
      snprintf(path, sizeof path, "%s/%s", sub, e->d_name);
      unlink(path);
    }
    closedir(d);
  }
  rmdir(sub);
  rmdir(root);
}

/* codegen_10k: IR -> PTX of fz_progen_bench_program(10000) for this device's
 * target (sm_90 on a CPU backend): the code generator alone, no driver. */
static vyre_status case_codegen(bench *B, const vyre_device_profile *prof) {
  void *bytes = NULL;
  size_t size = 0;
  vyre_program *p = NULL;
  vyre_status st = fz_progen_bench_program(10000, 0, &bytes, &size, &B->err);
  if (!st) st = vyre_program_decode(bytes, size, &p, &B->err);
  free(bytes);
  cg_options o;
  memset(&o, 0, sizeof o);
  o.sm_major = B->cpu ? 9 : prof->compute_major;
  o.sm_minor = B->cpu ? 0 : prof->compute_minor;
  o.workgroup[0] = 256;
  o.workgroup[1] = o.workgroup[2] = 1;
  enum { RUNS = 51 };
  double v[RUNS];
  for (int r = 0; !st && r < RUNS; r++) {
    char *ptx = NULL;
    size_t len = 0;
    cg_kernel_info info;
    uint64_t t0 = now_ns();
    st = cg_emit_ptx(p, &o, &ptx, &len, &info, &B->err);
    v[r] = (double)(now_ns() - t0) / 1e3;
    free(ptx);
    if (st && r == 0 && (o.sm_major != 9 || o.sm_minor != 0)) {
      /* A target this codegen does not know: measure sm_90's. */
      o.sm_major = 9;
      o.sm_minor = 0;
      st = VYRE_OK;
      r--;
    }
  }
  char note[96];
  snprintf(note, sizeof note, "%u instructions -> PTX for sm_%u%u, host", p ? p->inst_count : 0,
           o.sm_major, o.sm_minor);
  if (!st) report(B, "codegen_10k", median(v, RUNS), 0, note);
  vyre_program_free(p);
  return st;
}

/*
 * compile_cold      a new program each sample (saxpy + a constant no sample
 *                   repeats), disk cache off: decode, codegen, JIT, load
 * compile_warm_hit  the same bytes again in the same instance
 * compile_disk_hit  a new program each sample, compiled (and written to a
 *                   private disk cache) by one instance, then made by a
 *                   second instance of the same backend that has not seen
 *                   it: a cubin read from disk and loaded
 * Every case times pipeline_create from program bytes to a loaded kernel.
 */
static vyre_status case_compile(bench *B, vyre_host *host, uint32_t device, uint32_t samples,
                                uint32_t warm_iters) {
  char root[] = "/tmp/vyre-bench-cache-XXXXXX";
  if (!mkdtemp(root))
    return vyre_error_set(&B->err, VYRE_IO, 0, "bench: cannot make a private cache directory "
                          "under /tmp. Fix: make /tmp writable");
  setenv("VYRE_CACHE_DIR", root, 1);
  vyre_backend *cold = NULL, *writer = NULL, *reader = NULL;
  double *v = calloc(warm_iters > samples ? warm_iters : samples, sizeof *v);
  void *bytes = NULL;
  size_t size = 0;
  uint64_t m0 = 0, m1 = 0;
  vyre_status st = v ? VYRE_OK : vyre_error_set(&B->err, VYRE_OUT_OF_MEMORY, 0, "bench: out of memory");
  if (!st) st = fresh_instance(B, host, device, 0, &cold);
  /* Warm up the instance (first-use costs of the driver and the JIT). */
  for (uint32_t i = 0; !st && i < 3; i++) {
    free(bytes);
    bytes = NULL;
    st = build_saxpy_k(-1.0f - (float)i, &bytes, &size, &B->err);
    if (!st) st = time_create(B, cold, bytes, size, &v[0]);
  }
  int have_misses = !st && metric_of(cold, "cache.module.misses", &m0);
  for (uint32_t i = 0; !st && i < samples; i++) {
    free(bytes);
    bytes = NULL;
    st = build_saxpy_k((float)(i + 1), &bytes, &size, &B->err);
    if (!st) st = time_create(B, cold, bytes, size, &v[i]);
  }
  if (!st) {
    /* Honest figures: every sample must have missed the memory cache. */
    if (have_misses && metric_of(cold, "cache.module.misses", &m1) && m1 - m0 != samples)
      st = vyre_error_set(&B->err, VYRE_INTERNAL, 0, "bench: compile_cold saw %llu misses in %u "
                          "samples", (unsigned long long)(m1 - m0), samples);
    else report(B, "compile_cold", median(v, samples), 0, "new program: decode + codegen + JIT + load");
  }
  /* The last sample's bytes again: the in-memory hit. */
  for (uint32_t i = 0; !st && i < warm_iters; i++) st = time_create(B, cold, bytes, size, &v[i]);
  if (!st) report(B, "compile_warm_hit", median(v, warm_iters), 0, "same bytes, same instance");

  if (!st) st = fresh_instance(B, host, device, 1, &writer);
  if (!st) st = fresh_instance(B, host, device, 1, &reader);
  for (uint32_t i = 0; !st && i < 3; i++) { /* warm the reader up, as above */
    free(bytes);
    bytes = NULL;
    st = build_saxpy_k(-100.0f - (float)i, &bytes, &size, &B->err);
    if (!st) st = time_create(B, reader, bytes, size, &v[0]);
  }
  int have_disk = !st && metric_of(reader, "cache.disk.hits", &m0);
  for (uint32_t i = 0; !st && have_disk && i < samples; i++) {
    double unused;
    free(bytes);
    bytes = NULL;
    st = build_saxpy_k(100000.0f + (float)i, &bytes, &size, &B->err);
    if (!st) st = time_create(B, writer, bytes, size, &unused);
    if (!st) st = time_create(B, reader, bytes, size, &v[i]);
  }
  if (!st && have_disk) {
    if (metric_of(reader, "cache.disk.hits", &m1) && m1 - m0 != samples)
      st = vyre_error_set(&B->err, VYRE_INTERNAL, 0, "bench: compile_disk_hit saw %llu disk hits "
                          "in %u samples (is the disk cache off?)", (unsigned long long)(m1 - m0),
                          samples);
    else report(B, "compile_disk_hit", median(v, samples), 0, "another instance's cubin, from disk");
  }
  if (cold) cold->vt->destroy(cold);
  if (writer) writer->vt->destroy(writer);
  if (reader) reader->vt->destroy(reader);
  remove_cache_root(root);
  free(bytes);
  free(v);
  return st;
}

/* Median host wall of `iters` runs (after one warm-up) of one transfer
 * case; fn returns VYRE_OK or fails with B->err. */
typedef vyre_status (*xfer_fn)(bench *B, void *state);
static vyre_status time_xfer(bench *B, const char *name, double bytes, const char *note,
                             uint32_t iters, xfer_fn fn, void *state) {
  double v[16];
  if (iters > 16) iters = 16;
  vyre_status st = fn(B, state);
  for (uint32_t i = 0; !st && i < iters; i++) {
    uint64_t t0 = now_ns();
    st = fn(B, state);
    v[i] = (double)(now_ns() - t0) / 1e3;
  }
  if (!st) report(B, name, median(v, iters), bytes, note);
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

/* End-to-end host transfers, host wall: host_dispatch_S (sum over an
 * S-byte f32 host input: S up, 4 MiB down), saxpy_roundtrip_S/4 (x and
 * y of S/4 bytes up, y down), resident_upload_S and resident_download_S. */
static vyre_status case_transfers(bench *B, vyre_pipeline psum, vyre_pipeline psaxpy,
                                  uint64_t bytes, uint32_t iters) {
  char sz[16], name[64], names[4][64];
  uint64_t quarter = bytes / 4;
  size_label(sz, sizeof sz, bytes);
  snprintf(names[0], sizeof names[0], "host_dispatch_%s", sz);
  snprintf(names[1], sizeof names[1], "resident_upload_%s", sz);
  snprintf(names[2], sizeof names[2], "resident_download_%s", sz);
  size_label(sz, sizeof sz, quarter);
  snprintf(names[3], sizeof names[3], "saxpy_roundtrip_%s", sz);
  int any = 0;
  for (int k = 0; k < 4; k++) any |= wanted(B, names[k], CASES_TRANSFER);
  if (!any) return VYRE_OK; /* nothing to allocate S bytes for */
  float a = 2.0f;
  float *x = random_floats(bytes / 4, 11);
  float *y = quarter ? random_floats(quarter / 4, 12) : NULL;
  float *part = malloc(SUM_LANES * sizeof(float));
  float *yo = malloc(quarter ? quarter : 1);
  vyre_status st = VYRE_OK;
  if (!x || !y || !part || !yo)
    st = vyre_error_set(&B->err, VYRE_OUT_OF_MEMORY, 0,
                        "bench: out of host memory for the %llu-byte transfer cases. Fix: pass "
                        "a smaller --xfer-mib",
                        (unsigned long long)bytes);
  xfer_state s;
  memset(&s, 0, sizeof s);
  size_label(sz, sizeof sz, bytes);
  snprintf(name, sizeof name, "host_dispatch_%s", sz);
  if (!st && wanted(B, name, CASES_TRANSFER)) {
    s.pipe = psum;
    s.in[0] = (vyre_input){x, bytes};
    s.slot = (vyre_output_slot){part, SUM_LANES * sizeof(float), 0};
    st = time_xfer(B, name, (double)bytes, "dispatch_into: input up, sum, host wall", iters,
                   run_host_dispatch, &s);
  }
  size_label(sz, sizeof sz, quarter);
  snprintf(name, sizeof name, "saxpy_roundtrip_%s", sz);
  if (!st && quarter && wanted(B, name, CASES_TRANSFER)) {
    s.pipe = psaxpy;
    s.in[0] = (vyre_input){&a, 4};
    s.in[1] = (vyre_input){x, quarter};
    s.in[2] = (vyre_input){y, quarter};
    s.slot = (vyre_output_slot){yo, quarter, 0};
    st = time_xfer(B, name, 3.0 * (double)quarter, "x, y up, y down, host wall", iters,
                   run_saxpy_roundtrip, &s);
  }
  size_label(sz, sizeof sz, bytes);
  snprintf(name, sizeof name, "resident_upload_%s", sz);
  char name2[64];
  snprintf(name2, sizeof name2, "resident_download_%s", sz);
  if (!st && (wanted(B, name, CASES_TRANSFER) || wanted(B, name2, CASES_TRANSFER))) {
    s.host = x;
    s.bytes = bytes;
    st = B->b->vt->resident_alloc(B->b, bytes, &s.h, &B->err);
    if (!st && wanted(B, name, CASES_TRANSFER))
      st = time_xfer(B, name, (double)bytes, "pageable host -> device, host wall", iters,
                     run_resident_up, &s);
    if (!st && wanted(B, name2, CASES_TRANSFER))
      st = time_xfer(B, name2, (double)bytes, "device -> pageable host, host wall", iters,
                     run_resident_down, &s);
    if (s.h) B->b->vt->resident_free(B->b, s.h, NULL);
  }
  free(x);
  free(y);
  free(part);
  free(yo);
  return st;
}

static int parse_sizes(const char *text, bench_args *a) {
  a->size_count = 0;
  const char *p = text;
  while (*p) {
    char *end;
    unsigned long long v = strtoull(p, &end, 0);
    if (end == p || v == 0 || v > (1ull << 31) || a->size_count == MAX_SIZES) return -1;
    a->sizes[a->size_count++] = v;
    p = *end == ',' ? end + 1 : end;
    if (*end && *end != ',') return -1;
  }
  return a->size_count ? 0 : -1;
}

static int bench_device(const cli_command *self, const bench_args *args);

/* --device all: the suite on each device of the backend in turn, each
 * reported under its own heading (JSON: a "device" member); one device's
 * failure is reported and the others still run. */
static int bench_all_devices(const cli_command *self, const bench_args *args) {
  vyre_host *host = NULL;
  vyre_error err = VYRE_ERROR_INIT;
  if (cli_open_host(&host, &err) != VYRE_OK) return cli_fail(self, "%s", err.message);
  uint32_t count = 0, index = 0;
  char id[64] = "";
  if (cli_backend_devices(host, args->backend, &count, &index, NULL, &err) != VYRE_OK) {
    vyre_host_close(host);
    return cli_fail(self, "%s", err.message);
  }
  vyre_host_candidate c;
  memset(&c, 0, sizeof c);
  c.struct_size = sizeof c;
  if (vyre_host_backend_info(host, index, &c, NULL) == VYRE_OK && c.id)
    snprintf(id, sizeof id, "%s", c.id);
  vyre_host_close(host);
  bench_args a = *args;
  a.backend = id[0] ? id : args->backend; /* every device of the same backend */
  uint32_t failed = 0;
  /* --json: one document still, an array of the devices' documents. */
  if (a.json == 1) printf("[\n");
  for (uint32_t d = 0; d < count; d++) {
    a.device = d;
    if (a.json == 1 && d) printf(",\n");
    fflush(stdout);
    if (bench_device(self, &a) != CLI_OK) failed++;
  }
  if (a.json == 1) printf("]\n");
  if (!a.json)
    printf("vyre bench: %u device%s of backend %s, %u failed\n", count, count == 1 ? "" : "s",
           a.backend ? a.backend : "?", failed);
  return failed ? CLI_FAIL : CLI_OK;
}

static int run_bench(const cli_command *self, int argc, char **argv) {
  bench_args a;
  memset(&a, 0, sizeof a);
  for (int i = 1; i < argc;) {
    /* cli_opt_value advances i past what it consumed; flags advance here. */
    const char *val = NULL;
    int m;
    if ((m = cli_opt_value(self, argc, argv, &i, "--backend", &val)) != 0) {
      if (m < 0) return CLI_USAGE;
      a.backend = val;
    } else if ((m = cli_opt_value(self, argc, argv, &i, "--device", &val)) != 0) {
      if (m < 0 || cli_parse_devices(val, &a.device, &a.all_devices))
        return cli_usage(self, "--device takes a device ordinal or 'all'");
    } else if ((m = cli_opt_value(self, argc, argv, &i, "--sizes", &val)) != 0) {
      if (m < 0 || parse_sizes(val, &a))
        return cli_usage(self, "--sizes takes up to %d element counts 1..2^31, comma-separated",
                         MAX_SIZES);
    } else if ((m = cli_opt_value(self, argc, argv, &i, "--iters", &val)) != 0) {
      if (m < 0 || cli_parse_u32(val, 10, 1000000, &a.iters))
        return cli_usage(self, "--iters takes 10..1000000");
    } else if ((m = cli_opt_value(self, argc, argv, &i, "--xfer-mib", &val)) != 0) {
      if (m < 0 || cli_parse_u32(val, 0, 16384, &a.xfer_mib))
        return cli_usage(self, "--xfer-mib takes 0..16384 (0: no transfer cases)");
      a.xfer_mib_set = 1;
    } else if ((m = cli_opt_value(self, argc, argv, &i, "--cases", &val)) != 0) {
      if (m < 0 || !cases_valid(val))
        return cli_usage(self, "--cases takes groups (latency, bandwidth, transfer, compile, all) "
                               "or case names or prefixes, comma-separated");
      a.cases = val;
    } else if (cli_opt_flag(argv, i, "--json") || cli_opt_flag(argv, i, "--jsonl")) {
      int want = argv[i][6] == 'l' ? 2 : 1;
      if (a.json && a.json != want)
        return cli_usage(self, "--json and --jsonl exclude each other. Fix: --json for one "
                               "document, --jsonl for a line per case");
      a.json = want;
      i++;
    } else {
      return cli_usage(self, "unknown argument '%s'", argv[i]);
    }
  }
  return a.all_devices ? bench_all_devices(self, &a) : bench_device(self, &a);
}

/* The suite on device args->device. */
static int bench_device(const cli_command *self, const bench_args *args) {
  bench_args a = *args;
  bench B;
  memset(&B, 0, sizeof B);
  B.cmd = self;
  B.json = a.json;
  B.cases = a.cases;
  B.device = a.all_devices ? (int)a.device : -1;
  B.err.struct_size = sizeof B.err;
  cli_progress_init(&B.progress);
  vyre_host *host = NULL;
  void *saxpy = NULL, *copy = NULL, *sum = NULL;
  size_t saxpy_size = 0, copy_size = 0, sum_size = 0;
  vyre_pipeline psaxpy = 0, pcopy = 0, psum = 0;
  int rc = CLI_FAIL;
  if (cli_open_host(&host, &B.err) != VYRE_OK) {
    rc = cli_fail(self, "%s", B.err.message);
    goto done;
  }
  vyre_backend_options bo = {sizeof bo, a.device, 0, 0, NULL};
  uint32_t index = 0;
  if (vyre_host_create(host, a.backend, &bo, &B.b, &index, &B.err) != VYRE_OK) {
    rc = cli_fail(self, "%s", B.err.message);
    goto done;
  }
  vyre_host_candidate cand;
  memset(&cand, 0, sizeof cand);
  cand.struct_size = sizeof cand;
  vyre_host_backend_info(host, index, &cand, NULL);
  B.id = cand.id;
  vyre_device_profile prof;
  memset(&prof, 0, sizeof prof);
  prof.struct_size = sizeof prof;
  if (B.b->vt->device_profile(B.b, &prof, &B.err) != VYRE_OK) {
    rc = cli_fail(self, "device profile: %s", B.err.message);
    goto done;
  }
  B.cpu = prof.compute_major == 0;
  if (!VYRE_HOST_HAS(B.b, pipeline_create) || !VYRE_HOST_HAS(B.b, dispatch_sequence)) {
    rc = cli_fail(self, "backend '%s' lacks pipelines or sequences. Fix: pick another backend",
                  B.id);
    goto done;
  }
  if (!a.size_count) {
    if (B.cpu) {
      a.sizes[0] = 1u << 20;
      a.size_count = 1;
    } else {
      a.sizes[0] = 1u << 20;
      a.sizes[1] = 1u << 24;
      a.sizes[2] = 1u << 28;
      a.size_count = 3;
    }
  }
  uint32_t lat_iters = a.iters ? a.iters : (B.cpu ? 100 : 2000);
  uint32_t bw_iters = B.cpu ? 5 : 30;
  if (!a.xfer_mib_set) a.xfer_mib = B.cpu ? 0 : 1024;
  if (build_saxpy(&saxpy, &saxpy_size, &B.err) || build_copy(&copy, &copy_size, &B.err) ||
      build_sum(&sum, &sum_size, &B.err) ||
      B.b->vt->pipeline_create(B.b, saxpy, saxpy_size, NULL, &psaxpy, &B.err) ||
      B.b->vt->pipeline_create(B.b, copy, copy_size, NULL, &pcopy, &B.err) ||
      B.b->vt->pipeline_create(B.b, sum, sum_size, NULL, &psum, &B.err)) {
    rc = cli_fail(self, "preparing the benchmark programs: %s", B.err.message);
    goto done;
  }
  if (!B.json && a.all_devices)
    printf("vyre bench: backend %s device %u: %s (%u compute units)\n", B.id, a.device,
           prof.name, prof.compute_units);
  else if (!B.json)
    printf("vyre bench: backend %s on %s (%u compute units)\n", B.id, prof.name,
           prof.compute_units);
  cli_progress_show(&B.progress, "vyre bench: measuring the first case");
  vyre_status st = VYRE_OK;
  if (wanted(&B, "dispatch_resident_1k", CASES_LATENCY))
    st = case_dispatch_resident(&B, (vyre_program_ref)VYRE_PROGRAM_PIPELINE(psaxpy),
                                "dispatch_resident_1k", "launch + wait, host wall", lat_iters);
  if (!st && wanted(&B, "dispatch_bytes_1k", CASES_LATENCY))
    st = case_dispatch_resident(&B, (vyre_program_ref)VYRE_PROGRAM_BYTES(saxpy, saxpy_size),
                                "dispatch_bytes_1k", "as dispatch_resident_1k, program as bytes",
                                lat_iters);
  if (!st && wanted(&B, "roundtrip_1k", CASES_LATENCY))
    st = case_roundtrip(&B, psaxpy, lat_iters / 2 > 10 ? lat_iters / 2 : 10);
  if (!st && (wanted(&B, "sequence_1k_x100", CASES_LATENCY) ||
              wanted(&B, "graph_1k_x1000", CASES_LATENCY)))
    st = case_sequence(&B, psaxpy, B.cpu ? 3 : 30);
  for (uint32_t k = 0; !st && k < a.size_count; k++) {
    if (wanted(&B, "saxpy_bw", CASES_BANDWIDTH))
      st = case_bandwidth(&B, psaxpy, "saxpy_bw", a.sizes[k], 12.0, 1, bw_iters);
    if (!st && wanted(&B, "copy_bw", CASES_BANDWIDTH))
      st = case_bandwidth(&B, pcopy, "copy_bw", a.sizes[k], 8.0, 0, bw_iters);
  }
  /* The code generator before the transfer cases: on a 16-vCPU H100 host
   * it measured 1.2 ms after them (their copy threads and freed GiBs)
   * against 0.73 ms in a process of its own. */
  if (!st && wanted(&B, "codegen_10k", CASES_COMPILE)) st = case_codegen(&B, &prof);
  if (!st && a.xfer_mib)
    st = case_transfers(&B, psum, psaxpy, (uint64_t)a.xfer_mib << 20, B.cpu ? 3 : 7);
  /* Last: it sets VYRE_CACHE_DIR and VYRE_CUDA_DISK_CACHE for the
   * instances it makes. */
  if (!st && (wanted(&B, "compile_cold", CASES_COMPILE) ||
              wanted(&B, "compile_warm_hit", CASES_COMPILE) ||
              wanted(&B, "compile_disk_hit", CASES_COMPILE)))
    st = case_compile(&B, host, a.device, B.cpu ? 10 : 30, a.iters ? a.iters : 1000);
  cli_progress_show(&B.progress, NULL);
  if (st) {
    rc = cli_fail(self, "%s", B.err.message);
    goto done;
  }
  if (B.json == 1) print_document(&B, &prof);
  rc = CLI_OK;
done:
  cli_progress_show(&B.progress, NULL);
  free(B.done);
  if (B.b) {
    if (psaxpy) B.b->vt->pipeline_release(B.b, psaxpy, NULL);
    if (pcopy) B.b->vt->pipeline_release(B.b, pcopy, NULL);
    if (psum) B.b->vt->pipeline_release(B.b, psum, NULL);
    B.b->vt->destroy(B.b);
  }
  vyre_host_close(host);
  free(saxpy);
  free(copy);
  free(sum);
  return rc;
}

const cli_command cli_cmd_bench = {
    "bench",
    "bench [--backend ID] [--device N|all] [--cases LIST] [--sizes N,N,...] [--iters N] "
    "[--xfer-mib N] [--json | --jsonl]",
    "measure dispatch latency, memory bandwidth, host transfers and compile latency of a backend",
    "Cases (the same names as bench/peers.py, which measures PyTorch and CuPy):\n"
    "latency:\n"
    "  dispatch_resident_1k  y = a*x + y on 1024 resident floats through a\n"
    "                        compile-ahead pipeline: launch + wait, host wall median\n"
    "  dispatch_bytes_1k     the same with the program passed as bytes (a plan\n"
    "                        cache hit each time)\n"
    "  roundtrip_1k          1024 floats host -> device -> host (dispatch_into)\n"
    "  sequence_1k_x100      a resident sequence of 100 such steps, per step\n"
    "  graph_1k_x1000        the same sequence repeated 10 times (graph replay), per step\n"
    "bandwidth:\n"
    "  saxpy_bw_N            y = a*x + y on N floats: device time, GB/s at 12 bytes/elem\n"
    "  copy_bw_N             y = x on N floats: device time, GB/s at 8 bytes/elem\n"
    "transfer:\n"
    "  host_dispatch_S       a host input of S bytes (--xfer-mib) summed by a kernel\n"
    "                        (dispatch_into, 4 MiB back): end to end host wall,\n"
    "                        GB/s of the input\n"
    "  saxpy_roundtrip_S/4   y = a*x + y with x and y of S/4 bytes up and y down\n"
    "                        (dispatch_into): host wall, GB/s of the 3 x S/4 bytes\n"
    "  resident_upload_S     one resident_upload of S bytes from pageable memory\n"
    "  resident_download_S   one resident_download of S bytes to pageable memory\n"
    "compile (pipeline_create, program bytes -> loaded kernel, host wall median):\n"
    "  codegen_10k           IR -> PTX of a 10,000-instruction program (code generator\n"
    "                        alone, no driver)\n"
    "  compile_cold          y = a*x + y + k, a new k each sample, disk cache off\n"
    "  compile_warm_hit      the same bytes again (in-memory cache)\n"
    "  compile_disk_hit      a new program compiled by one instance, then made by a\n"
    "                        second one that has not seen it (cubin from disk)\n"
    "Bandwidth cases alternate two buffer sets so runs do not hit in L2.  Transfer\n"
    "cases report the median of 7 runs after a warm-up (3 on a CPU backend).  The\n"
    "compile cases use a private cache directory under /tmp, removed afterwards.\n\n"
    "options:\n"
    "  --backend ID   backend to measure (default: the best)\n"
    "  --device N     device ordinal (default 0); 'all': the whole suite on each\n"
    "                 device of the backend in turn, each under a heading\n"
    "                 \"vyre bench: backend ID device N: NAME\" (--jsonl: a \"device\"\n"
    "                 member in every line; --json: an array of one document per\n"
    "                 device, each with \"ordinal\"), then (text output only) \"vyre\n"
    "                 bench: K devices of backend ID, F failed\"; exit 1 when any\n"
    "                 device failed\n"
    "  --cases LIST   run only these: groups (latency, bandwidth, transfer, compile,\n"
    "                 all) or case names or their prefixes, comma-separated\n"
    "  --sizes LIST   element counts for the bandwidth cases (default 2^20,2^24,2^28\n"
    "                 on a GPU, 2^20 on a CPU backend)\n"
    "  --iters N      latency samples and compile_warm_hit samples (default 2000\n"
    "                 on a GPU, 100 on a CPU; compile_warm_hit 1000)\n"
    "  --xfer-mib N   size S of the transfer cases in MiB (default 1024 on a GPU;\n"
    "                 on a CPU backend none unless given; 0: none)\n"
    "  --json         one JSON object: the backend, its device and every case\n"
    "                 (docs/schemas/vyre-bench.schema.json)\n"
    "  --jsonl        one JSON object per case and line, as bench/peers.py prints\n"
    "                 (each as an element of --json's \"cases\")\n\n"
    "When stderr is a terminal, a progress line there counts the cases done.\n\n"
    "exit status:\n"
    "  0  every selected case was measured\n"
    "  1  the backend cannot be used, lacks pipelines or sequences, or a case\n"
    "     failed\n"
    "  2  the command line is wrong\n",
    run_bench,
    NULL,
};
