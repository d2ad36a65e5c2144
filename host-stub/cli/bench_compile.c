/* bench_compile.c -- the compile cases of `vyre bench`: pipeline_create from program bytes to a loaded kernel, cold, from the memory cache, from another instance's disk cache, a set of eight from one thread and from eight, and the CUDA JIT's settings. */
#include <dirent.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "vyre/vyre_support.h"
#include "abi/support/clock.h"
#include "abi/support/config.h"
#include "bench.h"

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
  uint64_t t0 = vyre__now_ns();
  vyre_status st = b->vt->pipeline_create(b, bytes, size, NULL, &p, &B->err);
  *us = (double)(vyre__now_ns() - t0) / 1e3;
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

/*
 * compile_cold      a new program each sample (saxpy + a constant no sample
 *                   repeats), disk cache off: decode, codegen, JIT, load
 * compile_warm_hit  the same bytes again in the same instance
 * compile_disk_hit  a new program each sample, compiled (and written to a
 *                   private disk cache) by one instance, then made by a
 *                   second instance of the same backend that has not seen
 *                   it: a cubin read from disk and loaded
 * compile_set_8_serial   8 new programs made one after another, one thread:
 *                   the wall time of the set
 * compile_set_8_threads  the same from 8 threads, one program each, on
 *                   the same instance: what JITs running at once save
 * compile_jit_direct compile_cold with VYRE_CUDA_JIT_DIRECT=1 (CUDA only)
 * compile_jit_o      compile_cold at each CU_JIT_OPTIMIZATION_LEVEL 0..4
 *                   (VYRE_CUDA_JIT_OPT_LEVEL), reported as compile_jit_o0
 *                   to _o4, an instance each (CUDA only)
 * Every case times pipeline_create from program bytes to a loaded kernel.
 * Their instances share a private cache root (VYRE_CACHE_DIR) under /tmp.
 * The constants k start at a per-process salt: no two runs compile the
 * same PTX, so no JIT cache of the driver can answer for the JIT.
 */
struct bench_compile {
  char root[32];
  vyre_backend *cold, *writer, *reader;
  void *bytes; /* the last program made (compile_warm_hit's) */
  size_t size;
  float salt;  /* the first k of this run: a multiple of 2048, below 2^23 */
};

/* The k ranges of the cases, added to the salt (each below 2048). */
#define K_COLD 0.0f
#define K_SET_SERIAL 200.0f
#define K_SET_THREADS 600.0f
#define K_DIRECT 1000.0f
#define K_LEVELS 1100.0f /* + 150 per level */
#define SET_KERNELS 8
#define SET_SAMPLES 10

/* Build saxpy + k into C->bytes and time pipeline_create of it on b. */
static vyre_status build_and_time(bench *B, bench_compile *C, float k, vyre_backend *b,
                                  double *us) {
  free(C->bytes);
  C->bytes = NULL;
  vyre_status st = cli_bench_build_saxpy_k(1, k, &C->bytes, &C->size, &B->err);
  if (!st) st = time_create(B, b, C->bytes, C->size, us);
  return st;
}

/* The cache root and the cold instance (disk cache off), warmed up (first
 * use costs of the driver and the JIT). */
vyre_status cli_bench_compile_setup(bench *B) {
  if (B->compile) return VYRE_OK;
  bench_compile *C = calloc(1, sizeof *C);
  if (!C) return vyre_error_set(&B->err, VYRE_OUT_OF_MEMORY, 0, "bench: out of memory");
  B->compile = C;
  C->salt = (float)(1u + (uint32_t)(vyre__now_ns() / 1000u) % 4095u) * 2048.0f;
  snprintf(C->root, sizeof C->root, "%s", "/tmp/vyre-bench-cache-XXXXXX");
  if (!mkdtemp(C->root)) {
    C->root[0] = '\0';
    return vyre_error_set(&B->err, VYRE_IO, 0, "bench: cannot make a private cache directory "
                          "under /tmp. Fix: make /tmp writable");
  }
  setenv("VYRE_CACHE_DIR", C->root, 1);
  double unused;
  vyre_status st = fresh_instance(B, B->host, B->ordinal, 0, &C->cold);
  for (uint32_t i = 0; !st && i < 3; i++) st = build_and_time(B, C, -1.0f - (float)i, C->cold, &unused);
  return st;
}

/* Two more instances with the disk cache on: the writer compiles, the
 * reader (warmed up as above) loads what the writer wrote. */
vyre_status cli_bench_compile_disk_setup(bench *B) {
  vyre_status st = cli_bench_compile_setup(B);
  bench_compile *C = B->compile;
  if (st || C->reader) return st;
  double unused;
  st = fresh_instance(B, B->host, B->ordinal, 1, &C->writer);
  if (!st) st = fresh_instance(B, B->host, B->ordinal, 1, &C->reader);
  for (uint32_t i = 0; !st && i < 3; i++)
    st = build_and_time(B, C, -100.0f - (float)i, C->reader, &unused);
  return st;
}

void cli_bench_compile_release(bench *B) {
  bench_compile *C = B->compile;
  if (!C) return;
  if (C->cold) C->cold->vt->destroy(C->cold);
  if (C->writer) C->writer->vt->destroy(C->writer);
  if (C->reader) C->reader->vt->destroy(C->reader);
  if (C->root[0]) remove_cache_root(C->root);
  free(C->bytes);
  free(C);
  B->compile = NULL;
}

/* The median of B->compile_samples cold compiles on b (new programs, k
 * from C->salt + base), each checked to have missed the memory cache. */
static vyre_status cold_median(bench *B, bench_compile *C, vyre_backend *b, float base,
                               double *median) {
  uint32_t samples = B->compile_samples;
  uint64_t m0 = 0, m1 = 0;
  double *v = calloc(samples, sizeof *v);
  if (!v) return vyre_error_set(&B->err, VYRE_OUT_OF_MEMORY, 0, "bench: out of memory");
  int have_misses = metric_of(b, "cache.module.misses", &m0);
  vyre_status st = VYRE_OK;
  for (uint32_t i = 0; !st && i < samples; i++)
    st = build_and_time(B, C, C->salt + base + (float)i, b, &v[i]);
  /* Honest figures: every sample must have missed the memory cache. */
  if (!st && have_misses && metric_of(b, "cache.module.misses", &m1) && m1 - m0 != samples)
    st = vyre_error_set(&B->err, VYRE_INTERNAL, 0, "bench: a cold compile case saw %llu misses "
                        "in %u samples", (unsigned long long)(m1 - m0), samples);
  if (!st) *median = cli_bench_median(v, samples);
  free(v);
  return st;
}

/* The split of compile.{codegen,jit,load}_us (a backend that reports them). */
static void compile_split(vyre_backend *b, uint64_t out[3]) {
  static const char *names[3] = {"compile.codegen_us", "compile.jit_us", "compile.load_us"};
  for (int i = 0; i < 3; i++)
    if (!metric_of(b, names[i], &out[i])) out[i] = 0;
}

/* Report cold_median on b as `name`, with the mean split of a sample in
 * the note when the backend reports it. */
static vyre_status cold_report(bench *B, vyre_backend *b, float base, const char *name,
                               const char *measures) {
  double us = 0;
  uint64_t before[3], after[3];
  compile_split(b, before);
  vyre_status st = cold_median(B, B->compile, b, base, &us);
  compile_split(b, after);
  if (st) return st;
  char note[256];
  double n = (double)B->compile_samples;
  uint64_t level = 0;
  if (after[1] > before[1] && metric_of(b, "compile.jit_opt_level", &level))
    snprintf(note, sizeof note, "%s (JIT level %llu; mean: codegen %.0f us, JIT %.0f us, load "
             "%.0f us)", measures, (unsigned long long)level, (double)(after[0] - before[0]) / n,
             (double)(after[1] - before[1]) / n, (double)(after[2] - before[2]) / n);
  else
    snprintf(note, sizeof note, "%s", measures);
  cli_bench_report(B, name, us, 0, note);
  return VYRE_OK;
}

vyre_status cli_bench_compile_cold(bench *B, const bench_row *row, const char *name,
                                   uint64_t size) {
  (void)size;
  return cold_report(B, B->compile->cold, K_COLD, name, row->measures);
}

/* The last program's bytes again: the in-memory hit. */
vyre_status cli_bench_compile_warm_hit(bench *B, const bench_row *row, const char *name,
                                       uint64_t size) {
  (void)size;
  bench_compile *C = B->compile;
  uint32_t iters = B->warm_iters;
  double *v = calloc(iters, sizeof *v);
  if (!v) return vyre_error_set(&B->err, VYRE_OUT_OF_MEMORY, 0, "bench: out of memory");
  vyre_status st = VYRE_OK;
  for (uint32_t i = 0; !st && i < iters; i++) st = time_create(B, C->cold, C->bytes, C->size, &v[i]);
  if (!st) cli_bench_report(B, name, cli_bench_median(v, iters), 0, row->measures);
  free(v);
  return st;
}

vyre_status cli_bench_compile_disk_hit(bench *B, const bench_row *row, const char *name,
                                       uint64_t size) {
  (void)size;
  bench_compile *C = B->compile;
  uint32_t samples = B->compile_samples;
  uint64_t m0 = 0, m1 = 0;
  if (!metric_of(C->reader, "cache.disk.hits", &m0)) return VYRE_OK; /* no disk cache */
  double *v = calloc(samples, sizeof *v);
  if (!v) return vyre_error_set(&B->err, VYRE_OUT_OF_MEMORY, 0, "bench: out of memory");
  vyre_status st = VYRE_OK;
  for (uint32_t i = 0; !st && i < samples; i++) {
    double unused;
    st = build_and_time(B, C, 100000.0f + (float)i, C->writer, &unused);
    if (!st) st = time_create(B, C->reader, C->bytes, C->size, &v[i]);
  }
  if (!st) {
    if (metric_of(C->reader, "cache.disk.hits", &m1) && m1 - m0 != samples)
      st = vyre_error_set(&B->err, VYRE_INTERNAL, 0, "bench: compile_disk_hit saw %llu disk hits "
                          "in %u samples (is the disk cache off?)", (unsigned long long)(m1 - m0),
                          samples);
    else cli_bench_report(B, name, cli_bench_median(v, samples), 0, row->measures);
  }
  free(v);
  return st;
}

/* One thread of compile_set_8_threads: create (timed by the caller). */
typedef struct set_job {
  vyre_backend *b;
  void *bytes;
  size_t size;
  vyre_status st;
  vyre_error err;
} set_job;

static void *set_create(void *arg) {
  set_job *j = arg;
  vyre_pipeline p = 0;
  j->st = j->b->vt->pipeline_create(j->b, j->bytes, j->size, NULL, &p, &j->err);
  if (j->st == VYRE_OK) j->b->vt->pipeline_release(j->b, p, NULL);
  return NULL;
}

/* Wall time of making SET_KERNELS new programs on b, from one thread or
 * from a thread each; the programs are built before the clock starts. */
static vyre_status time_set(bench *B, bench_compile *C, vyre_backend *b, float base, int threads,
                            double *us) {
  set_job jobs[SET_KERNELS];
  pthread_t t[SET_KERNELS];
  int started = 0;
  vyre_status st = VYRE_OK;
  memset(jobs, 0, sizeof jobs);
  for (int i = 0; i < SET_KERNELS; i++) {
    jobs[i].b = b;
    jobs[i].err = (vyre_error)VYRE_ERROR_INIT;
    if (!st) st = cli_bench_build_saxpy_k(1, C->salt + base + (float)i, &jobs[i].bytes,
                                          &jobs[i].size, &B->err);
  }
  uint64_t t0 = vyre__now_ns();
  for (int i = 0; !st && i < SET_KERNELS; i++) {
    if (!threads) set_create(&jobs[i]);
    else if (pthread_create(&t[i], NULL, set_create, &jobs[i]) == 0) started++;
    else st = vyre_error_set(&B->err, VYRE_OUT_OF_MEMORY, 0, "bench: cannot start a thread");
  }
  for (int i = 0; i < started; i++) pthread_join(t[i], NULL);
  *us = (double)(vyre__now_ns() - t0) / 1e3;
  for (int i = 0; i < SET_KERNELS; i++) {
    if (!st && jobs[i].st != VYRE_OK) {
      vyre_error_copy(&B->err, &jobs[i].err);
      st = jobs[i].st;
    }
    free(jobs[i].bytes);
  }
  return st;
}

/* compile_set_8_serial and compile_set_8_threads: the median set, on the
 * cold instance (disk cache off). */
vyre_status cli_bench_compile_set(bench *B, const bench_row *row, const char *name,
                                  uint64_t size) {
  (void)size;
  bench_compile *C = B->compile;
  int threads = strstr(name, "threads") != NULL;
  double v[SET_SAMPLES];
  uint32_t samples = B->compile_samples < SET_SAMPLES ? B->compile_samples : SET_SAMPLES;
  vyre_status st = VYRE_OK;
  for (uint32_t i = 0; !st && i < samples; i++)
    st = time_set(B, C, C->cold, (threads ? K_SET_THREADS : K_SET_SERIAL) + (float)(i * SET_KERNELS),
                  threads, &v[i]);
  if (!st) cli_bench_report(B, name, cli_bench_median(v, samples), 0, row->measures);
  return st;
}

/* A fresh instance (disk cache off) with the CUDA JIT variable `id` set to
 * `value` while it is made (the one it had is put back), warmed up. */
static vyre_status jit_instance(bench *B, bench_compile *C, vyre__env_id id, const char *value,
                                vyre_backend **out) {
  const char *was = vyre__env(id);
  char saved[64];
  snprintf(saved, sizeof saved, "%s", was ? was : "");
  setenv(vyre__env_name(id), value, 1);
  vyre_status st = fresh_instance(B, B->host, B->ordinal, 0, out);
  if (saved[0]) setenv(vyre__env_name(id), saved, 1);
  else unsetenv(vyre__env_name(id));
  double unused;
  for (uint32_t i = 0; !st && i < 2; i++)
    st = build_and_time(B, C, -1000.0f - (float)i, *out, &unused);
  return st;
}

/* compile_jit_direct: compile_cold on an instance that JITs the PTX with
 * one cuModuleLoadDataEx.  CUDA only (nothing is reported elsewhere). */
vyre_status cli_bench_compile_jit_direct(bench *B, const bench_row *row, const char *name,
                                         uint64_t size) {
  (void)size;
  if (strcmp(B->id, "cuda") != 0) return VYRE_OK;
  vyre_backend *b = NULL;
  vyre_status st = jit_instance(B, B->compile, VYRE__ENV_CUDA_JIT_DIRECT, "1", &b);
  if (!st) st = cold_report(B, b, K_DIRECT, name, row->measures);
  if (b) b->vt->destroy(b);
  return st;
}

/* compile_jit_o: compile_cold at each JIT optimisation level, an instance
 * each, reported as compile_jit_o0 .. compile_jit_o4.  CUDA only. */
vyre_status cli_bench_compile_jit_levels(bench *B, const bench_row *row, const char *name,
                                         uint64_t size) {
  (void)size;
  if (strcmp(B->id, "cuda") != 0) return VYRE_OK;
  vyre_status st = VYRE_OK;
  for (uint32_t level = 0; !st && level <= 4; level++) {
    char value[4], label[48];
    snprintf(value, sizeof value, "%u", level);
    snprintf(label, sizeof label, "%s%u", name, level);
    vyre_backend *b = NULL;
    st = jit_instance(B, B->compile, VYRE__ENV_CUDA_JIT_OPT_LEVEL, value, &b);
    if (!st) st = cold_report(B, b, K_LEVELS + 150.0f * (float)level, label, row->measures);
    if (b) b->vt->destroy(b);
  }
  return st;
}
