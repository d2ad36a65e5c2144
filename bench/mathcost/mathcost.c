/* mathcost.c -- the math-cost benchmark's driver: each f32 transcendental in an elementwise kernel and a row softmax, through vyre at each ulp budget and as CUDA C (libdevice, the hardware approximations, a copy floor) on the same device buffers, medians of device times, every result sampled against double-precision libm (README.md). */
#include <dlfcn.h>
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "mathcost.h"
#include "vyre/vyre_cuda.h"
#include "vyre/vyre_host.h"
#include "vyre/vyre_text.h"

#ifndef VYRE_MATHCOST_DIR
#define VYRE_MATHCOST_DIR "bench/mathcost"
#endif

#define MAX_BUDGETS 8
#define MAX_RUNS 1000
/* Room for a vyre_error message and what the driver says around it. */
#define NOTE 2400

static const char usage[] =
    "usage: mathcost [--backend ID] [--device N] [--n N] [--rows R] [--runs N] [--warm N]\n"
    "                [--budgets B,B...] [--only NAME,...] [--samples N] [--dir DIR]\n"
    "                [--peer PATH|none] [--jsonl FILE]\n"
    "Times y[i] = f(x[i]) over N f32 (default 268435456) for the fourteen transcendentals\n"
    "and a row softmax of R x 1024 f32 (default 32768 rows) through vyre at each ulp budget\n"
    "(default 0,1,2,4), and, on a GPU, their CUDA C peers (libmcpeers.so: libdevice, the\n"
    "hardware approximations, a copy kernel) on the same buffers; prints markdown tables.\n"
    "NAME: a function (rsqrt exp ... tanh) or softmax.  Exit status: 0, or 1 when a vyre\n"
    "result broke its ulp bound or a vyre run failed; 2 usage.\n";

static const char *const fn_name[MC_FUNC_COUNT + 1] = {
#define MC_NAME(id, op, k, l, h) op,
    MC_FUNCS(MC_NAME)
#undef MC_NAME
        "softmax"};

typedef struct args {
  const char *backend, *only, *dir, *peer, *jsonl;
  uint32_t device, runs, warm, samples, nbudgets, budget[MAX_BUDGETS];
  uint64_t n, rows;
} args;

/* One measurement: a median device time and the sampled error. */
typedef struct cell {
  int state; /* 0 not run, 1 measured, -1 failed, -2 refused (VYRE_UNSUPPORTED) */
  int wrong; /* measured, and a sampled result broke the bound */
  double us, min_us, max_ulp;
  char note[NOTE];
} cell;

/* Columns of the tables: one per budget, then the peers. */
enum { COL_LIB = MAX_BUDGETS, COL_INTR, COL_COPY, NCOL };

typedef struct peers {
  void *so;
  int (*abi)(void);
  int (*open)(uint32_t, uint64_t, uint64_t *, uint64_t *, char *, size_t);
  int (*fill)(int, uint64_t, char *, size_t);
  int (*poison)(uint64_t, char *, size_t);
  int (*read)(uint64_t, uint64_t, uint32_t, float *, char *, size_t);
  int (*time)(int, int, uint64_t, uint32_t, uint32_t, double *, char *, size_t);
  const char *(*name)(int, int);
  void (*close)(void);
} peers;

typedef struct bench {
  args a;
  vyre_backend *b;
  const char *id;
  int cpu, failures;
  peers *p;                     /* NULL: vyre alone, inputs made on the host */
  vyre_resident x, y, xs, ys;   /* unary and softmax views of the buffers */
  float *hx, *hy;               /* host copies (no peers: the inputs; the read-back) */
  FILE *jl;
  cell t[MC_FUNC_COUNT + 1][NCOL];
  vyre_error err;
} bench;

static int cmp_double(const void *x, const void *y) {
  double p = *(const double *)x, q = *(const double *)y;
  return p < q ? -1 : p > q;
}

static double median(double *v, uint32_t n) {
  qsort(v, n, sizeof *v, cmp_double);
  return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

static void note(cell *c, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(c->note, sizeof c->note, fmt, ap);
  va_end(ap);
  c->state = -1;
}

/* ------------------------------------------------------------------ */
/* The reference values and the error in ulp                           */
/* ------------------------------------------------------------------ */
static double exact(int fn, float xf) {
  double x = xf;
  switch (fn) {
    case MC_rsqrt: return 1.0 / sqrt(x);
    case MC_exp: return exp(x);
    case MC_exp2: return exp2(x);
    case MC_log: return log(x);
    case MC_log2: return log2(x);
    case MC_sin: return sin(x);
    case MC_cos: return cos(x);
    case MC_tan: return tan(x);
    case MC_asin: return asin(x);
    case MC_acos: return acos(x);
    case MC_atan: return atan(x);
    case MC_sinh: return sinh(x);
    case MC_cosh: return cosh(x);
    default: return tanh(x);
  }
}

/* |got - want| in ulp of want's f32 binade (at least 2^-149 x 2^23, the
 * smallest normal's: results vyre flushes to zero cost at most 1). */
static double ulp_error(float got, double want) {
  if (isnan(want) || isnan(got)) return isnan(want) && isnan(got) ? 0 : INFINITY;
  if (isinf(got) && fabs(want) >= 0x1.ffffffp127) return signbit(got) == signbit(want) ? 0 : INFINITY;
  if (isinf(got) || isinf(want)) return INFINITY;
  int e = want == 0 ? -126 : ilogb(want);
  if (e < -126) e = -126;
  return fabs((double)got - want) / ldexp(1.0, e - 23);
}

/* ------------------------------------------------------------------ */
/* Buffers: the peers' device memory imported into vyre, or vyre's own */
/* ------------------------------------------------------------------ */
static int fill_x(bench *B, int fn, uint64_t n, vyre_resident h, char *why, size_t why_size) {
  if (B->p) return B->p->fill(fn, n, why, why_size);
  for (uint64_t i = 0; i < n; i++) B->hx[i] = mc_input(fn, i, n);
  if (B->b->vt->resident_upload(B->b, h, B->hx, n * 4, &B->err) != VYRE_OK) {
    snprintf(why, why_size, "resident_upload: %s", B->err.message);
    return -1;
  }
  return 0;
}

static int poison_y(bench *B, uint64_t n, vyre_resident h, char *why, size_t why_size) {
  if (B->p) return B->p->poison(n, why, why_size);
  memset(B->hy, 0xff, n * 4);
  if (B->b->vt->resident_upload(B->b, h, B->hy, n * 4, &B->err) != VYRE_OK) {
    snprintf(why, why_size, "resident_upload: %s", B->err.message);
    return -1;
  }
  return 0;
}

/* out[k] = y[first + k stride], k < count. */
static int read_y(bench *B, uint64_t n, vyre_resident h, uint64_t first, uint64_t stride,
                  uint32_t count, float *out, char *why, size_t why_size) {
  if (B->p) return B->p->read(first, stride, count, out, why, why_size);
  if (B->b->vt->resident_download(B->b, h, B->hy, n * 4, &B->err) != VYRE_OK) {
    snprintf(why, why_size, "resident_download: %s", B->err.message);
    return -1;
  }
  for (uint32_t k = 0; k < count; k++) out[k] = B->hy[first + k * stride];
  return 0;
}

/* ------------------------------------------------------------------ */
/* The checks                                                          */
/* ------------------------------------------------------------------ */
/* The largest error over the sampled elements of function fn's output. */
static double check_unary(bench *B, int fn, char *why, size_t why_size) {
  uint64_t n = B->a.n;
  uint32_t count = B->a.samples < n ? B->a.samples : (uint32_t)n;
  uint64_t stride = n / count;
  float *got = malloc(count * sizeof *got);
  if (!got) return snprintf(why, why_size, "out of memory"), -1;
  double worst = -1;
  if (read_y(B, n, B->y, 0, stride, count, got, why, why_size) == 0) {
    worst = 0;
    for (uint32_t k = 0; k < count; k++) {
      uint64_t i = k * stride;
      double e = ulp_error(got[k], exact(fn, mc_input(fn, i, n)));
      if (e > worst) worst = e;
    }
  }
  free(got);
  return worst;
}

/* The largest error over sampled rows of the softmax (64, evenly spread). */
static double check_softmax(bench *B, char *why, size_t why_size) {
  uint64_t rows = B->a.rows, n = rows * MC_SOFTMAX_COLS;
  uint32_t nr = rows < 64 ? (uint32_t)rows : 64;
  float got[MC_SOFTMAX_COLS];
  double e[MC_SOFTMAX_COLS], worst = 0;
  for (uint32_t k = 0; k < nr; k++) {
    uint64_t r = k * (rows / nr), base = r * MC_SOFTMAX_COLS;
    if (read_y(B, n, B->ys, base, 1, MC_SOFTMAX_COLS, got, why, why_size)) return -1;
    double m = -INFINITY, s = 0;
    for (uint32_t c = 0; c < MC_SOFTMAX_COLS; c++) m = fmax(m, mc_input(MC_SOFTMAX, base + c, n));
    for (uint32_t c = 0; c < MC_SOFTMAX_COLS; c++) s += e[c] = exp(mc_input(MC_SOFTMAX, base + c, n) - m);
    for (uint32_t c = 0; c < MC_SOFTMAX_COLS; c++) {
      double err = ulp_error(got[c], e[c] / s);
      if (err > worst) worst = err;
    }
  }
  return worst;
}

/* ------------------------------------------------------------------ */
/* vyre                                                                */
/* ------------------------------------------------------------------ */
/* DIR/NAME with ${OP} and ${N} replaced, assembled; 0 or -1 (why). */
static int assemble(bench *B, const char *name, const char *op, uint64_t n, void **bytes,
                    size_t *size, char *why, size_t why_size) {
  char path[1024], num[24];
  snprintf(path, sizeof path, "%s/%s", B->a.dir, name);
  snprintf(num, sizeof num, "%llu", (unsigned long long)n);
  FILE *f = fopen(path, "rb");
  if (!f) return snprintf(why, why_size, "cannot open %s: %s. Fix: pass --dir DIR", path, strerror(errno)), -1;
  /* A value is at most 20 bytes and replaces a name of at least 4: the
   * text grows at most 5 times. */
  char *src = malloc(1 << 20), *out = malloc(5 * (1 << 20) + 1);
  size_t len = src ? fread(src, 1, 1 << 20, f) : 0, o = 0;
  fclose(f);
  int rc = -1;
  if (!src || !out || len == 1 << 20) {
    snprintf(why, why_size, "%s: out of memory or larger than 1 MiB", path);
    goto done;
  }
  for (size_t i = 0; i < len;) {
    const char *val = NULL;
    size_t skip = 0;
    if (len - i >= 5 && !memcmp(src + i, "${OP}", 5)) val = op, skip = 5;
    else if (len - i >= 4 && !memcmp(src + i, "${N}", 4)) val = num, skip = 4;
    if (val) {
      o += (size_t)snprintf(out + o, 21, "%s", val);
      i += skip;
    } else {
      out[o++] = src[i++];
    }
  }
  if (vyre_text_assemble(out, o, name, bytes, size, &B->err) != VYRE_OK) {
    snprintf(why, why_size, "%s", B->err.message);
    goto done;
  }
  rc = 0;
done:
  free(src);
  free(out);
  return rc;
}

/* Program `name` (op for unary.vyre) at ulp budget `budget` over buffers x, y:
 * compiled once, `warm` + `runs` resident dispatches, the median device time. */
static void run_vyre(bench *B, cell *c, const char *name, const char *op, uint64_t n,
                     vyre_resident x, vyre_resident y, uint32_t budget) {
  vyre_backend *b = B->b;
  void *bytes = NULL;
  size_t size = 0;
  vyre_pipeline pipe = 0;
  double v[MAX_RUNS];
  uint32_t timed = 0;
  int device = 1;
  vyre_status st = VYRE_OK;
  if (assemble(B, name, op, n, &bytes, &size, c->note, sizeof c->note)) goto failed;
  vyre_dispatch_options opt;
  memset(&opt, 0, sizeof opt);
  opt.struct_size = sizeof opt;
  opt.ulp_budget = budget;
  st = b->vt->pipeline_create(b, bytes, size, &opt, &pipe, &B->err);
  if (st != VYRE_OK) {
    snprintf(c->note, sizeof c->note, "%s", B->err.message);
    goto failed;
  }
  vyre_program_ref ref = VYRE_PROGRAM_PIPELINE(pipe);
  vyre_resident h[2] = {x, y};
  for (uint32_t r = 0; r < B->a.warm + B->a.runs; r++) {
    vyre_timing t;
    memset(&t, 0, sizeof t);
    t.struct_size = sizeof t;
    if ((st = b->vt->dispatch_resident(b, &ref, h, 2, &opt, &t, &B->err)) != VYRE_OK) {
      snprintf(c->note, sizeof c->note, "dispatch_resident: %s", B->err.message);
      goto failed;
    }
    if (r < B->a.warm) continue;
    if (!(t.valid & VYRE_TIMING_DEVICE)) device = 0;
    v[timed++] = (double)(device ? t.device_ns : t.wall_ns) / 1e3;
  }
  c->us = median(v, timed);
  c->min_us = v[0];
  c->state = 1;
  if (!device) snprintf(c->note, sizeof c->note, "wall time (the backend gave no device time)");
  goto done;
failed:
  /* A budget the backend refuses (the reference under strict, until it
   * computes the transcendentals correctly rounded) is a cell, not a failure. */
  c->state = st == VYRE_UNSUPPORTED ? -2 : -1;
  if (c->state == -1) B->failures++;
  fprintf(stderr, "mathcost: %s %s at ulp %u: %s\n", name, op ? op : "", budget, c->note);
done:
  if (pipe) b->vt->pipeline_release(b, pipe, NULL);
  free(bytes);
}

/* ------------------------------------------------------------------ */
/* The peers                                                           */
/* ------------------------------------------------------------------ */
static peers *peers_open(bench *B) {
  if (B->cpu || (B->a.peer && !strcmp(B->a.peer, "none"))) return NULL;
  char path[4096];
  if (B->a.peer) snprintf(path, sizeof path, "%s", B->a.peer);
  else snprintf(path, sizeof path, "libmcpeers.so");
  peers *p = calloc(1, sizeof *p);
  if (!p || !(p->so = dlopen(path, RTLD_NOW | RTLD_LOCAL))) {
    fprintf(stderr, "mathcost: peers skipped: %s. Fix: build them (bench/mathcost/run.sh) and "
                    "pass --peer PATH\n", p ? dlerror() : "out of memory");
    free(p);
    return NULL;
  }
#define SYM(field, sym) *(void **)&p->field = dlsym(p->so, sym)
  SYM(abi, "mc_peer_abi");
  SYM(open, "mc_peer_open");
  SYM(fill, "mc_peer_fill");
  SYM(poison, "mc_peer_poison");
  SYM(read, "mc_peer_read");
  SYM(time, "mc_peer_time");
  SYM(name, "mc_peer_name");
  SYM(close, "mc_peer_close");
#undef SYM
  if (!p->abi || !p->open || !p->fill || !p->poison || !p->read || !p->time || !p->name ||
      !p->close || p->abi() != MC_PEER_ABI) {
    fprintf(stderr, "mathcost: peers skipped: %s lacks an entry point or is of another ABI "
                    "(want %d). Fix: rebuild it\n", path, MC_PEER_ABI);
    dlclose(p->so);
    free(p);
    return NULL;
  }
  return p;
}

static void run_peer(bench *B, cell *c, int kernel, int fn, uint64_t n) {
  double v[MAX_RUNS];
  char why[NOTE];
  int rc = B->p->poison(n, why, sizeof why);
  if (rc == 0) rc = B->p->time(kernel, fn, n, B->a.warm, B->a.runs, v, why, sizeof why);
  if (rc == 1) {
    c->state = 0;
    return;
  }
  if (rc) {
    note(c, "%s", why);
    fprintf(stderr, "mathcost: peer %s of %s: %s\n", B->p->name(kernel, fn), fn_name[fn], why);
    return;
  }
  c->us = median(v, B->a.runs);
  c->min_us = v[0];
  c->state = 1;
  snprintf(c->note, sizeof c->note, "%s", B->p->name(kernel, fn));
}

/* ------------------------------------------------------------------ */
/* One function, the softmax, the tables                               */
/* ------------------------------------------------------------------ */
static void json_line(bench *B, int fn, const char *impl, int64_t budget, const cell *c, uint64_t n) {
  if (!B->jl || c->state == 0) return;
  fprintf(B->jl, "{\"part\":\"%s\",\"fn\":\"%s\",\"impl\":\"%s\",\"ulp\":%lld,\"n\":%llu,\"ok\":%s",
          fn == MC_SOFTMAX ? "softmax" : "unary", fn_name[fn], impl, (long long)budget,
          (unsigned long long)n, c->state == 1 && !c->wrong ? "true" : "false");
  if (c->state == -2) fprintf(B->jl, ",\"refused\":true");
  if (c->state == 1) {
    fprintf(B->jl, ",\"median_us\":%.3f,\"min_us\":%.3f,\"gbps\":%.1f", c->us, c->min_us,
            8.0 * n / (c->us * 1e3));
    /* JSON has no infinity: an unbounded error (NaN, inf, the poison) is null. */
    if (isfinite(c->max_ulp)) fprintf(B->jl, ",\"max_ulp\":%.4f", c->max_ulp);
    else fprintf(B->jl, ",\"max_ulp\":null");
  }
  fprintf(B->jl, ",\"note\":\"");
  for (const char *s = c->note; *s; s++) fprintf(B->jl, *s == '"' || *s == '\\' ? "\\%c" : "%c", *s);
  fprintf(B->jl, "\"}\n");
  fflush(B->jl);
}

/* Measure every column of function fn (MC_SOFTMAX: the softmax). */
static void run_function(bench *B, int fn) {
  int soft = fn == MC_SOFTMAX;
  uint64_t n = soft ? B->a.rows * MC_SOFTMAX_COLS : B->a.n;
  vyre_resident x = soft ? B->xs : B->x, y = soft ? B->ys : B->y;
  cell *row = B->t[fn];
  char why[NOTE];
  fprintf(stderr, "mathcost: %s over %llu elements\n", fn_name[fn], (unsigned long long)n);
  if (fill_x(B, fn, n, x, why, sizeof why)) {
    for (int k = 0; k < NCOL; k++) note(&row[k], "filling x: %s", why);
    fprintf(stderr, "mathcost: %s: filling x: %s\n", fn_name[fn], why);
    B->failures++;
    return;
  }
  for (uint32_t k = 0; k < B->a.nbudgets; k++) {
    cell *c = &row[k];
    uint32_t u = B->a.budget[k];
    if (poison_y(B, n, y, why, sizeof why)) note(c, "poisoning y: %s", why);
    else run_vyre(B, c, soft ? "softmax.vyre" : "unary.vyre", fn_name[fn], n, x, y, u);
    if (c->state == 1) {
      c->max_ulp = soft ? check_softmax(B, why, sizeof why) : check_unary(B, fn, why, sizeof why);
      /* Budget u: at most u steps from the correctly rounded result, so
       * less than u + 1/2 ulp from the exact value (the softmax: 16 ulp, a sanity bound). */
      double bound = soft ? 16 : u + 0.5 + 1e-6;
      if (c->max_ulp < 0) {
        note(c, "reading y: %s", why);
        B->failures++;
      } else if (c->max_ulp > bound) {
        snprintf(c->note, sizeof c->note, "WRONG: %.3g ulp from the exact value, bound %.6g", c->max_ulp, bound);
        c->wrong = 1;
        fprintf(stderr, "mathcost: %s at ulp %u: %s\n", fn_name[fn], u, c->note);
        B->failures++;
      }
    }
    json_line(B, fn, "vyre", u, c, n);
  }
  if (!B->p) return;
  static const int kernels[3][2] = {{COL_LIB, MC_K_LIBDEVICE}, {COL_INTR, MC_K_INTRINSIC}, {COL_COPY, MC_K_COPY}};
  for (int k = 0; k < 3; k++) {
    int kernel = soft ? (k == 0 ? MC_K_SOFTMAX : k == 1 ? MC_K_SOFTMAX_FAST : MC_K_COPY) : kernels[k][1];
    cell *c = &row[kernels[k][0]];
    run_peer(B, c, kernel, fn, n);
    if (c->state == 1 && kernel != MC_K_COPY) {
      c->max_ulp = soft ? check_softmax(B, why, sizeof why) : check_unary(B, fn, why, sizeof why);
      if (c->max_ulp < 0) note(c, "reading y: %s", why);
    }
    json_line(B, fn, kernel == MC_K_COPY ? "copy" : k == 0 ? "libdevice" : "intrinsic", -1, c, n);
  }
}

static void print_cell(const cell *c, uint64_t n) {
  if (c->state == 1) printf(" %.1f (%.0f)%s |", c->us, 8.0 * n / (c->us * 1e3), c->wrong ? " WRONG" : "");
  else if (c->state == -1) printf(" failed |");
  else if (c->state == -2) printf(" refused |");
  else printf(" - |");
}

static void print_ratio(const cell *p, const cell *q) {
  if (p->state == 1 && q->state == 1) printf(" %.2f |", p->us / q->us);
  else printf(" - |");
}

static void print_tables(bench *B) {
  const args *a = &B->a;
  uint32_t loose = a->nbudgets - 1, two = a->nbudgets;
  for (uint32_t k = 0; k < a->nbudgets; k++)
    if (a->budget[k] == 2) two = k;
  printf("\nmathcost: backend %s; median of %u runs after %u warm-ups; us (GB/s at 8 bytes an "
         "element); vyre: device time of dispatch_resident; CUDA C: CUDA events\n\n",
         B->id, a->runs, a->warm);
  for (int part = 0; part < 2; part++) {
    printf("| %s |", part ? "softmax" : "function");
    for (uint32_t k = 0; k < a->nbudgets; k++) printf(" vyre ulp %u%s |", a->budget[k], a->budget[k] ? "" : " (CR)");
    printf(part ? " CUDA expf, IEEE div | CUDA __expf, __fdividef | copy |" : " libdevice | intrinsic | copy |");
    printf(" ulp %u / %s |", a->budget[0], part ? "expf" : "libdevice");
    if (two < a->nbudgets) printf(" ulp 2 / %s |", part ? "expf" : "libdevice");
    printf(" ulp %u / %s |\n|---|", a->budget[loose], part ? "__expf" : "intrinsic");
    for (uint32_t k = 0; k < a->nbudgets + 5 + (two < a->nbudgets); k++) printf("---|");
    printf("\n");
    for (int fn = part ? MC_SOFTMAX : 0; fn < (part ? MC_SOFTMAX + 1 : MC_FUNC_COUNT); fn++) {
      cell *r = B->t[fn];
      if (!r[0].state && !r[COL_LIB].state && !r[COL_COPY].state) continue;
      uint64_t n = part ? a->rows * MC_SOFTMAX_COLS : a->n;
      printf("| %s |", fn_name[fn]);
      for (uint32_t k = 0; k < a->nbudgets; k++) print_cell(&r[k], n);
      print_cell(&r[COL_LIB], n);
      print_cell(&r[COL_INTR], n);
      print_cell(&r[COL_COPY], n);
      print_ratio(&r[0], &r[COL_LIB]);
      if (two < a->nbudgets) print_ratio(&r[two], &r[COL_LIB]);
      print_ratio(&r[loose], &r[COL_INTR]);
      printf("\n");
    }
    printf("\n");
  }
  printf("Largest error seen, in ulp of the exact value (double-precision libm on %u sampled "
         "elements a function, 64 sampled rows of the softmax):\n\n| function |", a->samples);
  for (uint32_t k = 0; k < a->nbudgets; k++) printf(" vyre ulp %u |", a->budget[k]);
  printf(" libdevice / expf | intrinsic / __expf |\n|---|");
  for (uint32_t k = 0; k < a->nbudgets + 2; k++) printf("---|");
  printf("\n");
  for (int fn = 0; fn <= MC_SOFTMAX; fn++) {
    cell *r = B->t[fn];
    if (!r[0].state && !r[COL_LIB].state) continue;
    printf("| %s |", fn_name[fn]);
    for (int k = 0; k < NCOL - 1; k++) {
      if (k >= (int)a->nbudgets && k < COL_LIB) continue;
      if (r[k].state == 1) printf(" %.3f%s |", r[k].max_ulp, r[k].wrong ? " WRONG" : "");
      else printf(" - |");
    }
    printf("\n");
  }
}

/* ------------------------------------------------------------------ */
/* Setup                                                               */
/* ------------------------------------------------------------------ */
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

static int parse_u64(const char *s, uint64_t lo, uint64_t hi, uint64_t *out) {
  char *end;
  errno = 0;
  unsigned long long v = strtoull(s, &end, 10);
  if (errno || end == s || *end || *s == '-' || v < lo || v > hi) return -1;
  *out = v;
  return 0;
}

static int parse_args(int argc, char **argv, args *a) {
  memset(a, 0, sizeof a[0]);
  a->n = 1ull << 28;
  a->rows = 32768;
  a->runs = 15;
  a->warm = 3;
  a->samples = 65536;
  a->dir = VYRE_MATHCOST_DIR;
  a->nbudgets = 4;
  for (uint32_t k = 0; k < 4; k++) a->budget[k] = k == 3 ? 4 : k;
  for (int i = 1; i < argc; i++) {
    const char *o = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
    uint64_t u = 0;
    if (!v) goto bad;
    if (!strcmp(o, "--backend")) a->backend = v;
    else if (!strcmp(o, "--only")) a->only = v;
    else if (!strcmp(o, "--dir")) a->dir = v;
    else if (!strcmp(o, "--peer")) a->peer = v;
    else if (!strcmp(o, "--jsonl")) a->jsonl = v;
    else if (!strcmp(o, "--device") && !parse_u64(v, 0, 1023, &u)) a->device = (uint32_t)u;
    else if (!strcmp(o, "--n") && !parse_u64(v, 64, 1ull << 30, &u)) a->n = u;
    else if (!strcmp(o, "--rows") && !parse_u64(v, 1, 1u << 20, &u)) a->rows = u;
    else if (!strcmp(o, "--runs") && !parse_u64(v, 1, MAX_RUNS, &u)) a->runs = (uint32_t)u;
    else if (!strcmp(o, "--warm") && !parse_u64(v, 0, 100, &u)) a->warm = (uint32_t)u;
    else if (!strcmp(o, "--samples") && !parse_u64(v, 1, 1u << 24, &u)) a->samples = (uint32_t)u;
    else if (!strcmp(o, "--budgets")) {
      a->nbudgets = 0;
      for (const char *p = v; *p;) {
        char *end;
        errno = 0;
        unsigned long b = strtoul(p, &end, 10);
        if (errno || end == p || b > 0xffffffffu || a->nbudgets == MAX_BUDGETS || (*end && *end != ','))
          goto bad;
        a->budget[a->nbudgets++] = (uint32_t)b;
        p = *end ? end + 1 : end;
      }
      if (!a->nbudgets) goto bad;
    } else goto bad;
    i++;
    continue;
  bad:
    fprintf(stderr, "mathcost: bad option or value: %s %s\n%s", o, v ? v : "(none)", usage);
    return -1;
  }
  if (a->only)
    for (const char *p = a->only; *p;) {
      const char *e = strchr(p, ',');
      size_t len = e ? (size_t)(e - p) : strlen(p);
      int k = 0;
      while (k <= MC_SOFTMAX && !(strlen(fn_name[k]) == len && !memcmp(fn_name[k], p, len))) k++;
      if (k > MC_SOFTMAX) {
        fprintf(stderr, "mathcost: --only: no function '%.*s' (rsqrt exp exp2 log log2 sin cos tan "
                        "asin acos atan sinh cosh tanh softmax)\n", (int)len, p);
        return -1;
      }
      if (!e) break;
      p = e + 1;
    }
  return 0;
}

/* x, y (unary, n elements) and xs, ys (softmax, rows x 1024) as resident
 * buffers: views of the peers' memory, else vyre's own. */
static int buffers(bench *B) {
  vyre_backend *b = B->b;
  uint64_t ns = B->a.rows * MC_SOFTMAX_COLS, cap = B->a.n > ns ? B->a.n : ns;
  if (B->p) {
    uint64_t dx = 0, dy = 0;
    char why[NOTE];
    const vyre_cuda_interop *cu = NULL;
    if (b->vt->get_extension(b, VYRE_CUDA_INTEROP_NAME, 1, (const void **)&cu, &B->err) != VYRE_OK)
      return fprintf(stderr, "mathcost: backend %s: no CUDA interop: %s\n", B->id, B->err.message), -1;
    if (B->p->open(B->a.device, cap, &dx, &dy, why, sizeof why))
      return fprintf(stderr, "mathcost: peers: %s\n", why), -1;
    vyre_backend *nb = vyre_host_backend_native(b);
    if (cu->resident_import(nb, dx, B->a.n * 4, &B->x, &B->err) ||
        cu->resident_import(nb, dy, B->a.n * 4, &B->y, &B->err) ||
        cu->resident_import(nb, dx, ns * 4, &B->xs, &B->err) ||
        cu->resident_import(nb, dy, ns * 4, &B->ys, &B->err))
      return fprintf(stderr, "mathcost: resident_import: %s\n", B->err.message), -1;
    return 0;
  }
  if (!(B->hx = malloc(cap * 4)) || !(B->hy = malloc(cap * 4)))
    return fprintf(stderr, "mathcost: out of memory for %llu elements\n", (unsigned long long)cap), -1;
  if (b->vt->resident_alloc(b, B->a.n * 4, &B->x, &B->err) ||
      b->vt->resident_alloc(b, B->a.n * 4, &B->y, &B->err) ||
      b->vt->resident_alloc(b, ns * 4, &B->xs, &B->err) ||
      b->vt->resident_alloc(b, ns * 4, &B->ys, &B->err))
    return fprintf(stderr, "mathcost: resident_alloc: %s\n", B->err.message), -1;
  return 0;
}

int main(int argc, char **argv) {
  static bench B;
  B.err.struct_size = sizeof B.err;
  if (parse_args(argc, argv, &B.a)) return 2;
  /* The compiled-in directory is the source tree's; a tree copied
   * elsewhere (a GPU machine) has the programs under the working directory. */
  if (access(B.a.dir, R_OK) != 0 && access("bench/mathcost/unary.vyre", R_OK) == 0) B.a.dir = "bench/mathcost";
  if (B.a.jsonl && !(B.jl = fopen(B.a.jsonl, "w"))) {
    fprintf(stderr, "mathcost: cannot write %s: %s\n", B.a.jsonl, strerror(errno));
    return 2;
  }
  vyre_host *host = NULL;
  int rc = 1;
  if (vyre_host_open(NULL, &host, &B.err) != VYRE_OK) {
    fprintf(stderr, "mathcost: %s\n", B.err.message);
    return 1;
  }
  vyre_backend_options bo = {sizeof bo, B.a.device, 0, 0, NULL};
  uint32_t index = 0;
  if (vyre_host_create(host, B.a.backend, &bo, &B.b, &index, &B.err) != VYRE_OK) {
    fprintf(stderr, "mathcost: %s\n", B.err.message);
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
    fprintf(stderr, "mathcost: device profile: %s\n", B.err.message);
    goto done;
  }
  B.cpu = prof.compute_major == 0;
  fprintf(stderr, "mathcost: backend %s on %s\n", B.id, prof.name);
  B.p = peers_open(&B);
  if (buffers(&B)) goto done;
  for (int fn = 0; fn <= MC_SOFTMAX; fn++)
    if (selected(B.a.only, fn_name[fn])) run_function(&B, fn);
  print_tables(&B);
  rc = B.failures ? 1 : 0;
done:
  if (B.b) {
    vyre_resident h[4] = {B.x, B.y, B.xs, B.ys};
    for (int k = 0; k < 4; k++)
      if (h[k]) B.b->vt->resident_free(B.b, h[k], NULL);
    B.b->vt->destroy(B.b);
  }
  if (B.p) {
    B.p->close();
    dlclose(B.p->so);
    free(B.p);
  }
  free(B.hx);
  free(B.hy);
  if (B.jl) fclose(B.jl);
  vyre_host_close(host);
  return rc;
}
