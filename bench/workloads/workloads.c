/* workloads.c -- the workload suite's driver: for each workload, generate the data, time the multithreaded C baseline, run the vyre program on a backend from host memory and from resident buffers and its CUDA peer (peer.c), check each against the baseline, report them beside the roofline. */
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "vyre/vyre_host.h"
#include "vyre/vyre_support.h"
#include "vyre/vyre_text.h"
#include "peers.h"
#include "workloads.h"

#ifndef VYRE_WORKLOADS_DIR
#define VYRE_WORKLOADS_DIR "bench/workloads"
#endif

static const char usage[] =
    "usage: workloads [--backend ID] [--device N] [--json] [--only NAME[,NAME...]]\n"
    "                 [--runs N] [--baseline-runs N] [--scale F] [--threads N]\n"
    "                 [--mode host|resident|both|baseline|indirect] [--dir DIR] [--peer PATH|none]\n"
    "                 [--list]\n"
    "Runs each workload of bench/workloads/README.md on a vyre backend (default: the\n"
    "best) and as a multithreaded C baseline, checks the backend's outputs against the\n"
    "baseline's, and reports wall p50/p95 per dispatch and the speedup.\n"
    "  --runs N          timed dispatches per mode (default 50 on a GPU, 1 on a CPU backend)\n"
    "  --baseline-runs N timed baseline runs (default 10)\n"
    "  --scale F         fraction of the full size, 0 < F <= 1 (default 1)\n"
    "  --threads N       baseline threads (default: the online CPUs)\n"
    "  --mode M          host (dispatch from host memory), resident, both (default),\n"
    "                    baseline (the C baseline alone), or indirect (the survivors\n"
    "                    workload alone: indirect dispatch against a count read back)\n"
    "  --dir DIR         where NAME.vyre are (default " VYRE_WORKLOADS_DIR ",\n"
    "                    else ./bench/workloads when that is missing)\n"
    "  --peer PATH       the CUDA peers (bench/workloads/peers.sh builds them; default\n"
    "                    libwlpeers.so beside this program, on a GPU backend), or none\n"
    "Exit status: 0 when every output matched, 1 when one did not or a run failed, 2 usage.\n";

typedef struct args {
  const char *backend, *only, *dir, *peer;
  uint32_t device, runs, baseline_runs, threads;
  double scale;
  int json, host, resident, indirect, list, dir_given, peer_given;
} args;

typedef struct stats {
  double p50, p95;
} stats;

typedef struct driver {
  args a;
  vyre_backend *b;
  const char *id;
  int cpu;
  wl_pool *pool;
  void *clear_bytes;
  size_t clear_size;
  vyre_pipeline clear_pipe;
  vyre_error err;
  int failures;
  wl_peers *peers; /* NULL: the peer mode is skipped */
  double log_vp, log_vr; /* sums of log(vyre / peer), log(vyre / roofline) */
  uint32_t n_vp;
  char last[8192]; /* the last failure, for the JSON line */
} driver;

static uint64_t now_ns(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static int cmp_double(const void *x, const void *y) {
  double p = *(const double *)x, q = *(const double *)y;
  return p < q ? -1 : p > q;
}

/* p50 and p95 of v[0..n), microseconds; sorts v. */
static stats summarize(double *v, uint32_t n) {
  qsort(v, n, sizeof *v, cmp_double);
  stats s;
  s.p50 = n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
  uint32_t k = (uint32_t)ceil(0.95 * n);
  s.p95 = v[k ? k - 1 : 0];
  return s;
}

static void fail(driver *d, const char *wl, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(d->last, sizeof d->last, fmt, ap);
  va_end(ap);
  fprintf(stderr, "workloads: %s: %s\n", wl, d->last);
  d->failures++;
}

/* s as the inside of a JSON string (workloads.h). */
void wl_json_text(const char *s) {
  for (; *s; s++) {
    unsigned char c = (unsigned char)*s;
    if (c == '"' || c == '\\') printf("\\%c", c);
    else if (c < 0x20) printf("\\u%04x", c);
    else putchar(c);
  }
}

/* NAME.vyre from the directory, with every ${VAR} replaced; malloc'd. */
static char *read_program(driver *d, const char *name, const wl_instance *w, size_t *len) {
  char path[4096];
  snprintf(path, sizeof path, "%s/%s.vyre", d->a.dir, name);
  FILE *f = fopen(path, "rb");
  if (!f) {
    snprintf(d->last, sizeof d->last, "cannot open %s: %s. Fix: pass --dir DIR", path,
             strerror(errno));
    fprintf(stderr, "workloads: %s: %s\n", name, d->last);
    return NULL;
  }
  char *src = NULL, *out = NULL;
  size_t cap = 0, n = 0;
  for (;;) {
    if (n + 4096 > cap && !(src = realloc(src, cap = cap * 2 + 8192))) goto done;
    size_t got = fread(src + n, 1, cap - n, f);
    if (!got) break;
    n += got;
  }
  /* Values are at most 20 digits; every ${ is 2 bytes of a 4+ byte token. */
  out = malloc(n * 10 + 1);
  if (!out) goto done;
  size_t o = 0;
  for (size_t i = 0; i < n;) {
    if (src[i] == '$' && i + 1 < n && src[i + 1] == '{') {
      const char *end = memchr(src + i, '}', n - i);
      size_t k = 0;
      for (; end && k < (w ? w->var_count : 0); k++)
        if (strlen(w->var_name[k]) == (size_t)(end - src - i - 2) &&
            !memcmp(w->var_name[k], src + i + 2, (size_t)(end - src - i - 2)))
          break;
      if (!end || !w || k == w->var_count) {
        snprintf(d->last, sizeof d->last, "%s: byte %zu: no value for this ${...} placeholder", path, i);
        fprintf(stderr, "workloads: %s: %s\n", name, d->last);
        free(out);
        out = NULL;
        goto done;
      }
      o += (size_t)sprintf(out + o, "%llu", (unsigned long long)w->var_value[k]);
      i = (size_t)(end - src) + 1;
    } else {
      out[o++] = src[i++];
    }
  }
  out[o] = 0;
  *len = o;
done:
  fclose(f);
  free(src);
  return out;
}

static int assemble(driver *d, const char *name, const wl_instance *w, void **bytes, size_t *size) {
  size_t len = 0;
  char *text = read_program(d, name, w, &len);
  if (!text) return -1;
  char file[256];
  snprintf(file, sizeof file, "%s.vyre", name);
  vyre_status st = vyre_text_assemble(text, len, file, bytes, size, &d->err);
  free(text);
  if (st != VYRE_OK) {
    snprintf(d->last, sizeof d->last, "%s", d->err.message);
    fprintf(stderr, "workloads: %s\n", d->err.message);
  }
  return st == VYRE_OK ? 0 : -1;
}

/* The survivors workload's programs (survivors.c), with ${N} = n. */
static int surv_assemble(void *user, const char *name, uint64_t n, void **bytes, size_t *size) {
  wl_instance w;
  memset(&w, 0, sizeof w);
  w.var_name[0] = "N";
  w.var_value[0] = n;
  w.var_count = 1;
  return assemble(user, name, &w, bytes, size);
}

static int check_outputs(const wl_workload *wl, const wl_instance *w, void *const *got,
                         char *why, size_t why_size) {
  if (wl->check) return wl->check(w, got, why, why_size);
  uint32_t k = 0;
  for (uint32_t i = 0; i < w->buf_count; i++) {
    if (!w->buf[i].is_output) continue;
    const uint32_t *g = got[k], *e = w->expect[k];
    for (uint64_t j = 0; j < w->buf[i].size / 4; j++)
      if (g[j] != e[j]) {
        snprintf(why, why_size, "output %u word %llu is 0x%08x, the baseline's 0x%08x", k,
                 (unsigned long long)j, g[j], e[j]);
        return -1;
      }
    k++;
  }
  return 0;
}

static uint64_t output_bytes(const wl_instance *w) {
  uint64_t n = 0;
  for (uint32_t i = 0; i < w->buf_count; i++)
    if (w->buf[i].is_output) n += w->buf[i].size;
  return n;
}

/* One row; error non-NULL: the mode failed before it could be timed;
 * extra: more JSON fields (",\"k\":v..."), or NULL. */
static void report_x(const driver *d, const char *name, const char *mode, const wl_instance *w,
                     stats s, stats base, int ok, const char *error, const char *extra) {
  double speed = s.p50 > 0 ? base.p50 / s.p50 : 0;
  if (d->a.json) {
    printf("{\"workload\":\"%s\",\"backend\":\"%s\",\"mode\":\"%s\",\"p50_us\":%.2f,"
           "\"p95_us\":%.2f,\"baseline_p50_us\":%.2f,\"baseline_p95_us\":%.2f,\"speedup\":%.3f,"
           "\"items\":%llu,\"input_bytes\":%llu,\"output_bytes\":%llu,\"threads\":%u,"
           "\"scale\":%g,\"ok\":%s%s",
           name, strcmp(mode, "peer") ? d->id : "cuda-peer", mode, s.p50, s.p95, base.p50, base.p95,
           speed, (unsigned long long)w->items, (unsigned long long)w->input_bytes,
           (unsigned long long)output_bytes(w), wl_pool_threads(d->pool), d->a.scale,
           ok ? "true" : "false", extra ? extra : "");
    if (error) {
      printf(",\"error\":\"");
      wl_json_text(error);
      putchar('"');
    }
    printf("}\n");
  } else if (error) {
    printf("%-15s %-9s %9llu %8.2f  FAILED (see stderr)\n", name, mode,
           (unsigned long long)w->items, (double)w->input_bytes / 1e6);
  } else {
    printf("%-15s %-9s %9llu %8.2f %11.1f %11.1f %11.1f %9.2fx  %s\n", name, mode,
           (unsigned long long)w->items, (double)w->input_bytes / 1e6, s.p50, s.p95, base.p50,
           speed, ok ? "ok" : "MISMATCH");
  }
  fflush(stdout);
}

static void report(const driver *d, const char *name, const char *mode, const wl_instance *w,
                   stats s, stats base, int ok, const char *error) {
  report_x(d, name, mode, w, s, base, ok, error, NULL);
}

static void dispatch_options(const wl_instance *w, vyre_dispatch_options *o) {
  memset(o, 0, sizeof *o);
  o->struct_size = sizeof *o;
  if (w->grid) o->grid[0] = w->grid, o->grid[1] = o->grid[2] = 1;
}

/* Output slots for the outputs of w, malloc'd; free_slots releases. */
static int make_slots(const wl_instance *w, void **got, vyre_output_slot *slot, uint32_t *count) {
  uint32_t k = 0;
  for (uint32_t i = 0; i < w->buf_count; i++) {
    if (!w->buf[i].is_output) continue;
    if (!(got[k] = malloc(w->buf[i].size ? w->buf[i].size : 1))) return -1;
    slot[k] = (vyre_output_slot){got[k], w->buf[i].size, 0};
    k++;
  }
  *count = k;
  return 0;
}

static void free_slots(void **got) {
  for (int k = 0; k < WL_MAX_BUFFERS; k++) free(got[k]);
}

/* From host memory: dispatch_into with every input, every time, through
 * the workload's pipeline. */
static int run_host(driver *d, const wl_workload *wl, wl_instance *w, vyre_pipeline pipe,
                    stats base) {
  vyre_input in[WL_MAX_BUFFERS];
  uint32_t nin = 0;
  for (uint32_t i = 0; i < w->buf_count; i++)
    if (w->buf[i].data) in[nin++] = (vyre_input){w->buf[i].data, w->buf[i].size};
  void *got[WL_MAX_BUFFERS] = {0};
  vyre_output_slot slot[WL_MAX_BUFFERS];
  uint32_t nout = 0;
  uint32_t warm = d->cpu ? 0 : 3, runs = d->a.runs ? d->a.runs : (d->cpu ? 1 : 50);
  double *v = calloc(runs, sizeof *v);
  int rc = -1, ok = 0, reported = 0;
  if (!v || make_slots(w, got, slot, &nout)) {
    fail(d, wl->name, "out of memory");
    goto done;
  }
  vyre_dispatch_options opt;
  dispatch_options(w, &opt);
  vyre_program_ref ref = VYRE_PROGRAM_PIPELINE(pipe);
  /* The first run is checked; on a CPU backend it is also the timed one. */
  for (uint32_t i = 0; i < warm + runs; i++) {
    uint64_t t0 = now_ns();
    vyre_status st = d->b->vt->dispatch_into(d->b, &ref, in, nin, &opt, slot, nout, NULL, &d->err);
    uint64_t t1 = now_ns();
    if (st != VYRE_OK) {
      fail(d, wl->name, "host dispatch: %s", d->err.message);
      goto done;
    }
    if (i >= warm) v[i - warm] = (double)(t1 - t0) / 1e3;
    if (i == 0) {
      char why[256];
      ok = check_outputs(wl, w, got, why, sizeof why) == 0;
      if (!ok) fail(d, wl->name, "host dispatch: %s", why);
    }
  }
  report(d, wl->name, "host", w, summarize(v, runs), base, ok, NULL);
  reported = 1;
  rc = ok ? 0 : -1;
done:
  if (!reported) report(d, wl->name, "host", w, (stats){0, 0}, base, 0, d->last);
  free(v);
  free_slots(got);
  return rc;
}

/* Resident: buffers uploaded once, then dispatch_resident through the
 * pipeline; a workload whose outputs accumulate runs a two-step sequence
 * (clear, then the program) with one synchronisation instead. */
static int run_resident(driver *d, const wl_workload *wl, wl_instance *w, vyre_pipeline pipe,
                        stats base, stats *timed) {
  vyre_backend *b = d->b;
  vyre_resident h[WL_MAX_BUFFERS] = {0};
  void *got[WL_MAX_BUFFERS] = {0};
  uint32_t warm = d->cpu ? 0 : 3, runs = d->a.runs ? d->a.runs : (d->cpu ? 1 : 50);
  double *v = calloc(runs, sizeof *v);
  int rc = -1, ok = 0, reported = 0;
  vyre_dispatch_options opt;
  dispatch_options(w, &opt);
  if (!v) {
    fail(d, wl->name, "out of memory");
    goto done;
  }
  vyre_resident_copy up[WL_MAX_BUFFERS];
  uint32_t nup = 0;
  vyre_sequence_step steps[WL_MAX_BUFFERS + 1];
  vyre_program_ref clear_ref = VYRE_PROGRAM_PIPELINE(d->clear_pipe);
  vyre_program_ref ref = VYRE_PROGRAM_PIPELINE(pipe);
  uint32_t nsteps = 0;
  for (uint32_t i = 0; i < w->buf_count; i++) {
    if (b->vt->resident_alloc(b, w->buf[i].size, &h[i], &d->err) != VYRE_OK) {
      fail(d, wl->name, "resident_alloc of %llu bytes: %s", (unsigned long long)w->buf[i].size,
           d->err.message);
      goto done;
    }
    if (w->buf[i].data) up[nup++] = (vyre_resident_copy){h[i], 0, (void *)w->buf[i].data, w->buf[i].size};
    if (w->buf[i].clear) {
      memset(&steps[nsteps], 0, sizeof steps[nsteps]);
      steps[nsteps].struct_size = sizeof steps[nsteps];
      steps[nsteps].buffer_count = 1;
      steps[nsteps].program = &clear_ref;
      steps[nsteps].buffers = &h[i];
      nsteps++;
    }
  }
  memset(&steps[nsteps], 0, sizeof steps[nsteps]);
  steps[nsteps].struct_size = sizeof steps[nsteps];
  steps[nsteps].buffer_count = w->buf_count;
  steps[nsteps].program = &ref;
  steps[nsteps].buffers = h;
  steps[nsteps].options = &opt;
  nsteps++;
  if (b->vt->resident_upload_many(b, up, nup, &d->err) != VYRE_OK) {
    fail(d, wl->name, "resident_upload_many: %s", d->err.message);
    goto done;
  }
  for (uint32_t i = 0; i < warm + runs; i++) {
    uint64_t t0 = now_ns();
    vyre_status st = nsteps == 1
                         ? b->vt->dispatch_resident(b, &ref, h, w->buf_count, &opt, NULL, &d->err)
                         : b->vt->dispatch_sequence(b, steps, nsteps, 1, NULL, 0, NULL, &d->err);
    uint64_t t1 = now_ns();
    if (st != VYRE_OK) {
      fail(d, wl->name, "resident dispatch: %s", d->err.message);
      goto done;
    }
    if (i >= warm) v[i - warm] = (double)(t1 - t0) / 1e3;
  }
  /* After every run: the outputs of the last one must be the baseline's. */
  uint32_t k = 0;
  for (uint32_t i = 0; i < w->buf_count; i++) {
    if (!w->buf[i].is_output) continue;
    if (!(got[k] = malloc(w->buf[i].size))) {
      fail(d, wl->name, "out of memory");
      goto done;
    }
    if (b->vt->resident_download(b, h[i], got[k], w->buf[i].size, &d->err) != VYRE_OK) {
      fail(d, wl->name, "resident_download: %s", d->err.message);
      goto done;
    }
    k++;
  }
  char why[256];
  ok = check_outputs(wl, w, got, why, sizeof why) == 0;
  if (!ok) fail(d, wl->name, "resident dispatch: %s", why);
  *timed = summarize(v, runs);
  if (!ok) timed->p50 = 0;
  report(d, wl->name, "resident", w, *timed, base, ok, NULL);
  reported = 1;
  rc = ok ? 0 : -1;
done:
  if (!reported) report(d, wl->name, "resident", w, (stats){0, 0}, base, 0, d->last);
  for (uint32_t i = 0; i < WL_MAX_BUFFERS; i++)
    if (h[i]) b->vt->resident_free(b, h[i], NULL);
  free_slots(got);
  free(v);
  return rc;
}

/* The CUDA peer of the workload (peer.c), timed as the resident mode is,
 * checked against the same baseline, with the roofline and the ratios to
 * vyre's resident p50 (vyre.p50 0: not measured or wrong). */
static void run_peer(driver *d, const wl_workload *wl, wl_instance *w, stats base, stats vyre) {
  void *got[WL_MAX_BUFFERS] = {0};
  vyre_output_slot slot[WL_MAX_BUFFERS];
  uint32_t nout = 0, runs = d->a.runs ? d->a.runs : 50;
  double *v = calloc(runs, sizeof *v);
  char why[1024] = "", extra[1024];
  if (!v || make_slots(w, got, slot, &nout)) {
    fail(d, wl->name, "peer: out of memory");
    report_x(d, wl->name, "peer", w, (stats){0, 0}, base, 0, d->last, NULL);
    goto done;
  }
  int rc = wl_peers_run(d->peers, wl->name, w, 3, runs, v, got, why, sizeof why);
  if (rc == 1) { /* this library has no peer for it: a skip, not a failure */
    fprintf(stderr, "workloads: %s: peer: skipped (%s)\n", wl->name, why);
    goto done;
  }
  if (rc) {
    fail(d, wl->name, "peer: %s", why);
    report_x(d, wl->name, "peer", w, (stats){0, 0}, base, 0, d->last, NULL);
    goto done;
  }
  int ok = check_outputs(wl, w, got, why, sizeof why) == 0;
  if (!ok) fail(d, wl->name, "peer: %s", why);
  stats s = summarize(v, runs);
  const wl_peer_floor *fl = wl_peers_floor(d->peers);
  double gbps = fl->memcpy_gbps > fl->copy_kernel_gbps ? fl->memcpy_gbps : fl->copy_kernel_gbps;
  uint64_t in, out;
  wl_roofline_bytes(wl->name, w, &in, &out);
  double roof = (double)(in + out) / (gbps * 1e3) + fl->launch_p50_us; /* bytes / (GB/s) in us */
  double vp = vyre.p50 > 0 && s.p50 > 0 ? vyre.p50 / s.p50 : 0, vr = vyre.p50 / roof;
  if (ok && vp > 0) d->log_vp += log(vp), d->log_vr += log(vr), d->n_vp++;
  snprintf(extra, sizeof extra,
           ",\"roofline_bytes\":%llu,\"roofline_us\":%.2f,\"launch_floor_us\":%.2f,"
           "\"copy_gbps\":%.1f,\"vyre_p50_us\":%.2f,\"vyre_over_peer\":%.3f,"
           "\"vyre_over_roofline\":%.3f,\"peer_over_roofline\":%.3f",
           (unsigned long long)(in + out), roof, fl->launch_p50_us, gbps, vyre.p50, vp, vr,
           s.p50 / roof);
  report_x(d, wl->name, "peer", w, s, base, ok, NULL, extra);
  if (!d->a.json)
    printf("%-15s %-9s %9s %8.2f %11.1f %11s vyre/peer %.2fx, vyre/roofline %.2fx, "
           "peer/roofline %.2fx\n", wl->name, "roofline", "", (double)(in + out) / 1e6, roof, "",
           vp, vr, s.p50 / roof);
done:
  free(v);
  free_slots(got);
}

static stats run_baseline(driver *d, const wl_workload *wl, wl_instance *w) {
  uint32_t runs = d->a.baseline_runs;
  double *v = calloc(runs, sizeof *v);
  stats s = {0, 0};
  if (!v) return s;
  wl->baseline(w, d->pool); /* warm-up; also what the check compares against */
  for (uint32_t i = 0; i < runs; i++) {
    uint64_t t0 = now_ns();
    wl->baseline(w, d->pool);
    v[i] = (double)(now_ns() - t0) / 1e3;
  }
  s = summarize(v, runs);
  free(v);
  return s;
}

static int selected(const char *only, const char *name) {
  if (!only) return 1;
  size_t n = strlen(name);
  for (const char *p = only; *p;) {
    const char *e = strchr(p, ',');
    size_t len = e ? (size_t)(e - p) : strlen(p);
    if (len == n && !memcmp(p, name, n)) return 1;
    if (!e) break;
    p = e + 1;
  }
  return 0;
}

static void run_workload(driver *d, const wl_workload *wl) {
  wl_instance w;
  memset(&w, 0, sizeof w);
  void *bytes = NULL;
  size_t size = 0;
  vyre_pipeline pipe = 0;
  stats base = {0, 0};
  if (wl->gen(&w, d->a.scale)) {
    fail(d, wl->name, "generating the data: out of memory");
    goto failed;
  }
  if (assemble(d, wl->name, &w, &bytes, &size)) {
    d->failures++;
    goto failed;
  }
  /* Compiled once (validation, lowering, JIT), outside the timed runs. */
  if (d->b->vt->pipeline_create(d->b, bytes, size, NULL, &pipe, &d->err) != VYRE_OK) {
    fail(d, wl->name, "pipeline_create: %s", d->err.message);
    goto failed;
  }
  base = run_baseline(d, wl, &w);
  if (d->a.json)
    printf("{\"workload\":\"%s\",\"backend\":\"c\",\"mode\":\"baseline\",\"p50_us\":%.2f,"
           "\"p95_us\":%.2f,\"baseline_p50_us\":%.2f,\"baseline_p95_us\":%.2f,\"speedup\":1,"
           "\"items\":%llu,\"input_bytes\":%llu,\"threads\":%u,\"scale\":%g,\"ok\":true}\n",
           wl->name, base.p50, base.p95, base.p50, base.p95, (unsigned long long)w.items,
           (unsigned long long)w.input_bytes, wl_pool_threads(d->pool), d->a.scale);
  else
    printf("%-15s %-9s %9llu %8.2f %11.1f %11.1f %11s %10s  %u threads\n", wl->name, "baseline",
           (unsigned long long)w.items, (double)w.input_bytes / 1e6, base.p50, base.p95, "", "",
           wl_pool_threads(d->pool));
  if (d->a.host) run_host(d, wl, &w, pipe, base);
  stats vyre = {0, 0};
  if (d->a.resident) run_resident(d, wl, &w, pipe, base, &vyre);
  if (d->peers) run_peer(d, wl, &w, base, vyre); /* opened unless --mode baseline */
  goto done;
failed:
  if (d->a.host) report(d, wl->name, "host", &w, base, base, 0, d->last);
  if (d->a.resident) report(d, wl->name, "resident", &w, base, base, 0, d->last);
done:
  if (pipe) d->b->vt->pipeline_release(d->b, pipe, NULL);
  free(bytes);
  wl->release(&w);
}

/* The geometric means over the workloads whose peer and vyre both matched. */
static void peer_summary(const driver *d) {
  if (!d->peers) return;
  double vp = d->n_vp ? exp(d->log_vp / d->n_vp) : 0, vr = d->n_vp ? exp(d->log_vr / d->n_vp) : 0;
  if (d->a.json)
    printf("{\"summary\":\"peer\",\"backend\":\"%s\",\"workloads\":%u,"
           "\"geomean_vyre_over_peer\":%.3f,\"geomean_vyre_over_roofline\":%.3f}\n", d->id,
           d->n_vp, vp, vr);
  else
    printf("peer: over %u workloads, geometric mean of vyre resident p50 / peer p50 %.3fx, "
           "vyre / roofline %.3fx\n", d->n_vp, vp, vr);
}

static int parse_u32(const char *s, uint32_t lo, uint32_t hi, uint32_t *out) {
  char *end;
  errno = 0;
  unsigned long v = strtoul(s, &end, 10);
  if (errno || end == s || *end || v < lo || v > hi) return -1;
  *out = (uint32_t)v;
  return 0;
}

static int parse_args(int argc, char **argv, args *a) {
  memset(a, 0, sizeof *a);
  a->dir = VYRE_WORKLOADS_DIR;
  a->scale = 1.0;
  a->baseline_runs = 10;
  a->host = a->resident = 1;
  long cpus = sysconf(_SC_NPROCESSORS_ONLN);
  a->threads = cpus > 0 ? (uint32_t)cpus : 1;
  for (int i = 1; i < argc; i++) {
    const char *o = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
    if (!strcmp(o, "--json")) a->json = 1;
    else if (!strcmp(o, "--list")) a->list = 1;
    else if (!strcmp(o, "--help") || !strcmp(o, "-h")) {
      fputs(usage, stdout);
      exit(0);
    } else if (!v) {
      fprintf(stderr, "workloads: unknown option or missing value: %s\n%s", o, usage);
      return -1;
    } else if (!strcmp(o, "--backend")) a->backend = v, i++;
    else if (!strcmp(o, "--only")) a->only = v, i++;
    else if (!strcmp(o, "--dir")) a->dir = v, a->dir_given = 1, i++;
    else if (!strcmp(o, "--peer")) a->peer = v, a->peer_given = 1, i++;
    else if (!strcmp(o, "--device") && !parse_u32(v, 0, 1024, &a->device)) i++;
    else if (!strcmp(o, "--runs") && !parse_u32(v, 1, 100000, &a->runs)) i++;
    else if (!strcmp(o, "--baseline-runs") && !parse_u32(v, 1, 100000, &a->baseline_runs)) i++;
    else if (!strcmp(o, "--threads") && !parse_u32(v, 1, 4096, &a->threads)) i++;
    else if (!strcmp(o, "--scale")) {
      char *end;
      a->scale = strtod(v, &end);
      if (*end || !(a->scale > 0 && a->scale <= 1)) {
        fprintf(stderr, "workloads: --scale takes 0 < F <= 1, not '%s'\n", v);
        return -1;
      }
      i++;
    } else if (!strcmp(o, "--mode")) {
      a->host = !strcmp(v, "host") || !strcmp(v, "both");
      a->resident = !strcmp(v, "resident") || !strcmp(v, "both");
      a->indirect = !strcmp(v, "indirect");
      if (!a->host && !a->resident && !a->indirect && strcmp(v, "baseline")) {
        fprintf(stderr, "workloads: --mode takes host, resident, both, baseline or indirect, not "
                        "'%s'\n", v);
        return -1;
      }
      i++;
    } else {
      fprintf(stderr, "workloads: bad option or value: %s %s\n%s", o, v, usage);
      return -1;
    }
  }
  if (a->only)
    for (const char *p = a->only; *p;) {
      const char *e = strchr(p, ',');
      size_t len = e ? (size_t)(e - p) : strlen(p);
      uint32_t k = 0;
      while (k < wl_suite_count && !(strlen(wl_suite[k].name) == len && !memcmp(wl_suite[k].name, p, len))) k++;
      if (k == wl_suite_count) {
        fprintf(stderr, "workloads: --only: no workload '%.*s' (--list shows them)\n", (int)len, p);
        return -1;
      }
      if (!e) break;
      p = e + 1;
    }
  return 0;
}

int main(int argc, char **argv) {
  driver d;
  memset(&d, 0, sizeof d);
  d.err.struct_size = sizeof d.err;
  if (parse_args(argc, argv, &d.a)) return 2;
  /* The compiled-in directory is the source tree's; a tree copied
   * elsewhere (a GPU machine) has the programs under the working directory. */
  if (!d.a.dir_given && access(d.a.dir, R_OK) != 0 && access("bench/workloads/clear.vyre", R_OK) == 0)
    d.a.dir = "bench/workloads";
  if (d.a.list) {
    for (uint32_t k = 0; k < wl_suite_count; k++) printf("%-15s %s\n", wl_suite[k].name, wl_suite[k].about);
    return 0;
  }
  vyre_host *host = NULL;
  int rc = 1;
  if (vyre_host_open(NULL, &host, &d.err) != VYRE_OK) {
    fprintf(stderr, "workloads: %s\n", d.err.message);
    return 1;
  }
  vyre_backend_options bo = {sizeof bo, d.a.device, 0, 0, NULL};
  uint32_t index = 0;
  if (vyre_host_create(host, d.a.backend, &bo, &d.b, &index, &d.err) != VYRE_OK) {
    fprintf(stderr, "workloads: %s\n", d.err.message);
    goto done;
  }
  vyre_host_candidate cand;
  memset(&cand, 0, sizeof cand);
  cand.struct_size = sizeof cand;
  vyre_host_backend_info(host, index, &cand, NULL);
  d.id = cand.id;
  vyre_device_profile prof;
  memset(&prof, 0, sizeof prof);
  prof.struct_size = sizeof prof;
  if (d.b->vt->device_profile(d.b, &prof, &d.err) != VYRE_OK) {
    fprintf(stderr, "workloads: device profile: %s\n", d.err.message);
    goto done;
  }
  d.cpu = prof.compute_major == 0;
  if (!VYRE_HOST_HAS(d.b, dispatch_into) || !VYRE_HOST_HAS(d.b, pipeline_create) ||
      !VYRE_HOST_HAS(d.b, dispatch_sequence)) {
    fprintf(stderr, "workloads: backend '%s' lacks dispatch_into, pipelines or sequences. Fix: "
                    "pick another backend\n", d.id);
    goto done;
  }
  if (!(d.pool = wl_pool_new(d.a.threads))) {
    fprintf(stderr, "workloads: cannot start %u baseline threads\n", d.a.threads);
    goto done;
  }
  if (assemble(&d, "clear", NULL, &d.clear_bytes, &d.clear_size) ||
      d.b->vt->pipeline_create(d.b, d.clear_bytes, d.clear_size, NULL, &d.clear_pipe, &d.err)) {
    if (d.clear_bytes) fprintf(stderr, "workloads: clear.vyre: %s\n", d.err.message);
    goto done;
  }
  if (!d.a.json) {
    printf("workloads: backend %s on %s; baseline: %u threads, -O3; scale %g; wall per dispatch\n",
           d.id, prof.name, wl_pool_threads(d.pool), d.a.scale);
    printf("%-15s %-9s %9s %8s %11s %11s %11s %10s  %s\n", "workload", "mode", "items", "in_MB",
           "p50_us", "p95_us", "base_p50_us", "speedup", "check");
  }
  if (d.a.host || d.a.resident)
    d.peers = wl_peers_open(d.a.peer, d.a.peer_given, d.cpu, d.id, d.a.device, d.a.json);
  if (d.a.indirect) {
    wl_surv_env se = {d.b, d.id, d.a.json, d.cpu, d.a.runs, d.a.scale, surv_assemble, &d};
    if (wl_survivors_run(&se)) d.failures++;
  }
  for (uint32_t k = 0; k < wl_suite_count && !d.a.indirect; k++)
    if (selected(d.a.only, wl_suite[k].name)) run_workload(&d, &wl_suite[k]);
  peer_summary(&d);
  rc = d.failures ? 1 : 0;
done:
  if (d.b) {
    if (d.clear_pipe) d.b->vt->pipeline_release(d.b, d.clear_pipe, NULL);
    d.b->vt->destroy(d.b);
  }
  wl_pool_free(d.pool);
  wl_peers_free(d.peers);
  free(d.clear_bytes);
  vyre_host_close(host);
  return rc;
}
