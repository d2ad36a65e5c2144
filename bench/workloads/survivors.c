/* survivors.c -- the indirect-dispatch workload (README.md, "Indirect dispatch: survivors"): compact the records below a threshold, then process only the survivors, once as one sequence whose second step is indirect and once the way a host must without it (read the count back, size the launch). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "abi/support/prng.h"
#include "vyre/vyre_host.h"
#include "workloads.h"

#define SURV_WG 1024u /* survivors_process.vyre's workgroup */
#define SURV_THRESHOLD 0x10000000u /* values below it survive: 1 in 16 */

/* What one run holds: the data, the baseline's answer, the backend's
 * resident buffers and pipelines. */
typedef struct surv {
  const wl_surv_env *e;
  uint64_t n;
  uint32_t *vals, *want, count; /* want: out as the baseline computes it */
  vyre_resident h_vals, h_params, h_ctl, h_surv, h_out;
  vyre_pipeline p_clear, p_compact, p_process;
  double *t;
  char why[VYRE_ERROR_MESSAGE_MAX + 128];
} surv;

static uint64_t now_ns(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static int cmp_double(const void *x, const void *y) {
  double a = *(const double *)x, b = *(const double *)y;
  return a < b ? -1 : a > b;
}

/* survivors_process.vyre's mix, on the host. */
static uint32_t mix(uint32_t h) {
  for (int k = 0; k < 64; k++) {
    h *= 0x9e3779b1u;
    h ^= h >> 15;
  }
  return h;
}

static int gen(surv *s) {
  s->vals = malloc(s->n * 4);
  s->want = calloc(s->n, 4);
  if (!s->vals || !s->want) return -1;
  uint64_t st = 0x5eed5011ull;
  for (uint64_t i = 0; i < s->n; i++) {
    s->vals[i] = (uint32_t)(vyre__splitmix64(&st) >> 32);
    if (s->vals[i] < SURV_THRESHOLD) {
      s->want[i] = mix(s->vals[i]);
      s->count++;
    }
  }
  return 0;
}

static int fail(surv *s, const char *what, const vyre_error *err) {
  snprintf(s->why, sizeof s->why, "%.100s%s%s", what, err ? ": " : "", err ? err->message : "");
  return -1;
}

/* Buffers and pipelines; the inputs uploaded once. */
static int setup(surv *s, vyre_error *err) {
  struct vyre_backend *b = s->e->b;
  uint64_t sizes[5] = {s->n * 4, 4, 16, s->n * 4, s->n * 4};
  vyre_resident *hs[5] = {&s->h_vals, &s->h_params, &s->h_ctl, &s->h_surv, &s->h_out};
  for (int k = 0; k < 5; k++)
    if (b->vt->resident_alloc(b, sizes[k], hs[k], err) != VYRE_OK)
      return fail(s, "resident_alloc", err);
  uint32_t th = SURV_THRESHOLD;
  void *zero = calloc(s->n, 4);
  if (!zero) return fail(s, "out of memory", NULL);
  vyre_resident_copy up[3] = {{s->h_vals, 0, s->vals, s->n * 4},
                              {s->h_params, 0, &th, 4},
                              {s->h_out, 0, zero, s->n * 4}};
  vyre_status st = b->vt->resident_upload_many(b, up, 3, err);
  free(zero);
  if (st != VYRE_OK) return fail(s, "resident_upload_many", err);
  const char *names[3] = {"clear", "survivors_compact", "survivors_process"};
  vyre_pipeline *ps[3] = {&s->p_clear, &s->p_compact, &s->p_process};
  for (int k = 0; k < 3; k++) {
    void *bytes = NULL;
    size_t size = 0;
    if (s->e->assemble(s->e->user, names[k], s->n, &bytes, &size))
      return fail(s, names[k], NULL);
    st = b->vt->pipeline_create(b, bytes, size, NULL, ps[k], err);
    free(bytes);
    if (st != VYRE_OK) return fail(s, "pipeline_create", err);
  }
  return 0;
}

/* The outputs after a mode's runs: ctl's count and workgroups, out. */
static int check(surv *s, const char *mode, vyre_error *err) {
  struct vyre_backend *b = s->e->b;
  uint32_t ctl[4], *out = malloc(s->n * 4);
  if (!out) return fail(s, "out of memory", NULL);
  vyre_resident_copy dn[2] = {{s->h_ctl, 0, ctl, 16}, {s->h_out, 0, out, s->n * 4}};
  if (b->vt->resident_download_many(b, dn, 2, err) != VYRE_OK) {
    free(out);
    return fail(s, "resident_download_many", err);
  }
  uint32_t x = (s->count + SURV_WG - 1) / SURV_WG;
  int rc = 0;
  if (ctl[0] != s->count || ctl[1] != x || ctl[2] != 1 || ctl[3] != 1) {
    snprintf(s->why, sizeof s->why, "%s: ctl = %u %u %u %u, the baseline's %u %u 1 1", mode,
             ctl[0], ctl[1], ctl[2], ctl[3], s->count, x);
    rc = -1;
  }
  for (uint64_t i = 0; i < s->n && !rc; i++)
    if (out[i] != s->want[i]) {
      snprintf(s->why, sizeof s->why, "%s: out[%llu] = 0x%08x, the baseline's 0x%08x", mode,
               (unsigned long long)i, out[i], s->want[i]);
      rc = -1;
    }
  free(out);
  return rc;
}

/* (a) clear, compact, process indirect: one call, one synchronisation. */
static vyre_status run_indirect(surv *s, vyre_error *err) {
  struct vyre_backend *b = s->e->b;
  vyre_program_ref clear = VYRE_PROGRAM_PIPELINE(s->p_clear);
  vyre_program_ref compact = VYRE_PROGRAM_PIPELINE(s->p_compact);
  vyre_program_ref process = VYRE_PROGRAM_PIPELINE(s->p_process);
  vyre_resident cb[4] = {s->h_vals, s->h_params, s->h_ctl, s->h_surv};
  vyre_resident pb[4] = {s->h_vals, s->h_surv, s->h_ctl, s->h_out};
  vyre_indirect ind = {{sizeof ind, VYRE_EXT_INDIRECT, NULL}, s->h_ctl, 4};
  vyre_dispatch_options po = {.struct_size = sizeof po, .next = &ind.head};
  vyre_sequence_step steps[3] = {
      {.struct_size = sizeof steps[0], .program = &clear, .buffers = &s->h_ctl,
       .buffer_count = 1},
      {.struct_size = sizeof steps[0], .program = &compact, .buffers = cb, .buffer_count = 4},
      {.struct_size = sizeof steps[0], .program = &process, .buffers = pb, .buffer_count = 4,
       .options = &po}};
  return b->vt->dispatch_sequence(b, steps, 3, 1, NULL, 0, NULL, err);
}

/* (b) clear and compact reading the count back (one synchronisation),
 * then process on the grid the host sized from it (a second one). */
static vyre_status run_two_sync(surv *s, vyre_error *err) {
  struct vyre_backend *b = s->e->b;
  vyre_program_ref clear = VYRE_PROGRAM_PIPELINE(s->p_clear);
  vyre_program_ref compact = VYRE_PROGRAM_PIPELINE(s->p_compact);
  vyre_program_ref process = VYRE_PROGRAM_PIPELINE(s->p_process);
  vyre_resident cb[4] = {s->h_vals, s->h_params, s->h_ctl, s->h_surv};
  vyre_resident pb[4] = {s->h_vals, s->h_surv, s->h_ctl, s->h_out};
  vyre_sequence_step steps[2] = {
      {.struct_size = sizeof steps[0], .program = &clear, .buffers = &s->h_ctl,
       .buffer_count = 1},
      {.struct_size = sizeof steps[0], .program = &compact, .buffers = cb, .buffer_count = 4}};
  uint32_t count = 0;
  vyre_resident_copy read = {s->h_ctl, 0, &count, 4};
  vyre_status st = b->vt->dispatch_sequence(b, steps, 2, 1, &read, 1, NULL, err);
  if (st != VYRE_OK || !count) return st;
  vyre_dispatch_options po = {.struct_size = sizeof po};
  po.grid[0] = (count + SURV_WG - 1) / SURV_WG;
  po.grid[1] = po.grid[2] = 1;
  return b->vt->dispatch_resident(b, &process, pb, 4, &po, NULL, err);
}

/* Time one mode (warm-ups, then runs) and check what it left: p50 in us,
 * or -1 on a failure (s->why). */
static double time_mode(surv *s, const char *mode, vyre_status (*fn)(surv *, vyre_error *),
                        uint32_t warm, uint32_t runs, vyre_error *err) {
  struct vyre_backend *b = s->e->b;
  void *zero = calloc(s->n, 4);
  vyre_status st =
      zero ? b->vt->resident_upload(b, s->h_out, zero, s->n * 4, err) : VYRE_OUT_OF_MEMORY;
  free(zero);
  if (st != VYRE_OK) return fail(s, "clearing out", err);
  for (uint32_t i = 0; i < warm + runs; i++) {
    uint64_t t0 = now_ns();
    st = fn(s, err);
    uint64_t t1 = now_ns();
    if (st != VYRE_OK) {
      char what[64];
      snprintf(what, sizeof what, "%s run", mode);
      return fail(s, what, err);
    }
    if (i >= warm) s->t[i - warm] = (double)(t1 - t0) / 1e3;
  }
  if (check(s, mode, err)) return -1;
  qsort(s->t, runs, sizeof *s->t, cmp_double);
  return s->t[runs / 2];
}

static void report(const surv *s, const char *mode, double p50, int ok) {
  const wl_surv_env *e = s->e;
  if (e->json)
    printf("{\"workload\":\"survivors\",\"backend\":\"%s\",\"mode\":\"%s\",\"p50_us\":%.2f,"
           "\"items\":%llu,\"survivors\":%u,\"scale\":%g,\"ok\":%s}\n",
           e->id, mode, ok ? p50 : 0, (unsigned long long)s->n, s->count, e->scale,
           ok ? "true" : "false");
  else
    printf("%-15s %-9s %9llu %8.2f %11.1f %11s %11s %10s  %s\n", "survivors", mode,
           (unsigned long long)s->n, (double)s->n * 4 / 1e6, ok ? p50 : 0, "", "", "",
           ok ? "ok" : "FAILED");
}

static void release(surv *s) {
  struct vyre_backend *b = s->e->b;
  vyre_resident hs[5] = {s->h_vals, s->h_params, s->h_ctl, s->h_surv, s->h_out};
  for (int k = 0; k < 5; k++)
    if (hs[k]) b->vt->resident_free(b, hs[k], NULL);
  vyre_pipeline ps[3] = {s->p_clear, s->p_compact, s->p_process};
  for (int k = 0; k < 3; k++)
    if (ps[k]) b->vt->pipeline_release(b, ps[k], NULL);
  free(s->vals);
  free(s->want);
  free(s->t);
}

int wl_survivors_run(const wl_surv_env *e) {
  surv s;
  memset(&s, 0, sizeof s);
  s.e = e;
  s.n = (uint64_t)(1048576.0 * e->scale);
  if (s.n < 1024) s.n = 1024;
  uint32_t warm = e->cpu ? 0 : 3, runs = e->runs ? e->runs : (e->cpu ? 1 : 50);
  vyre_error err = VYRE_ERROR_INIT;
  double a = -1, b = -1;
  s.t = calloc(runs, sizeof *s.t);
  int rc = !s.t || gen(&s) ? fail(&s, "out of memory", NULL) : setup(&s, &err);
  if (!rc) a = time_mode(&s, "indirect", run_indirect, warm, runs, &err);
  report(&s, "indirect", a, a >= 0);
  if (!rc && a >= 0) b = time_mode(&s, "two_sync", run_two_sync, warm, runs, &err);
  report(&s, "two_sync", b, b >= 0);
  if (a < 0 || b < 0) {
    fprintf(stderr, "workloads: survivors: %s\n", s.why);
    rc = -1;
  } else if (e->json) {
    printf("{\"summary\":\"indirect\",\"backend\":\"%s\",\"indirect_p50_us\":%.2f,"
           "\"two_sync_p50_us\":%.2f,\"saved_us\":%.2f,\"two_sync_over_indirect\":%.3f}\n",
           e->id, a, b, b - a, a > 0 ? b / a : 0);
  } else {
    printf("survivors: one synchronisation (indirect) %.1f us, two (count read back) %.1f us: "
           "the round trip costs %.1f us (%.2fx)\n", a, b, b - a, a > 0 ? b / a : 0);
  }
  release(&s);
  return rc;
}
