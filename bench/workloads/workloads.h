/* workloads.h -- the workload suite's parts: the thread pool the C baselines run on, the table of workloads (data, baseline, check), and the driver's side of the CUDA peers and the roofline. */
#ifndef VYRE_BENCH_WORKLOADS_H
#define VYRE_BENCH_WORKLOADS_H

#include <stddef.h>
#include <stdint.h>

/* ------------------------------------------------------------------ */
/* The baselines' thread pool (pool.c)                                  */
/* ------------------------------------------------------------------ */
typedef struct wl_pool wl_pool;

/* One parallel job: called once on every thread, tid 0 .. nthreads-1. */
typedef void (*wl_par_fn)(void *ctx, uint32_t tid, uint32_t nthreads);

/* A pool of `threads` threads (the caller's thread is thread 0, so
 * threads - 1 are started).  Returns NULL when a thread cannot start.
 * Free with wl_pool_free.  One caller at a time. */
wl_pool *wl_pool_new(uint32_t threads);
void wl_pool_free(wl_pool *pool);
uint32_t wl_pool_threads(const wl_pool *pool);
/* Run fn on every thread of the pool and return when all are done. */
void wl_pool_run(wl_pool *pool, wl_par_fn fn, void *ctx);
/* [*lo, *hi): the part of [0, n) thread tid of nthreads takes. */
void wl_chunk(uint64_t n, uint32_t tid, uint32_t nthreads, uint64_t *lo, uint64_t *hi);

/* ------------------------------------------------------------------ */
/* Workloads (suite.c)                                                  */
/* ------------------------------------------------------------------ */
#define WL_MAX_BUFFERS 8
#define WL_MAX_VARS 4

/* One non-workgroup buffer of the program, in declaration order. */
typedef struct wl_buffer {
  uint64_t size;    /* bytes */
  const void *data; /* the host input, or NULL for a buffer that is only an output */
  int is_output;    /* returned by a dispatch (wo, or rw output) */
  int clear;        /* accumulates: a resident run zeroes it first */
} wl_buffer;

/* One generated instance of a workload. */
typedef struct wl_instance {
  uint64_t items;       /* work items (matches, windows, nodes, MACs) */
  uint64_t input_bytes; /* bytes of input the dispatch reads */
  uint32_t grid;        /* workgroups to launch; 0: derived from the outputs */
  const char *var_name[WL_MAX_VARS]; /* ${NAME} in the program text ... */
  uint64_t var_value[WL_MAX_VARS];   /* ... and its value */
  uint32_t var_count;
  wl_buffer buf[WL_MAX_BUFFERS];
  uint32_t buf_count;
  void *expect[WL_MAX_BUFFERS]; /* the baseline's output k (k-th output buffer) */
  void *state;                  /* the workload's own data */
  void *scratch;                /* the baseline's working memory */
} wl_instance;

typedef struct wl_workload {
  const char *name;  /* also the program's file name: NAME.vyre */
  const char *about; /* one line */
  /* Generate the data for `scale` (0 < scale <= 1) of the full size,
   * deterministically; allocate expect[] for the outputs.  0 or -1. */
  int (*gen)(wl_instance *w, double scale);
  /* Compute expect[] on the pool (the timed baseline). */
  void (*baseline)(wl_instance *w, wl_pool *pool);
  /* Compare got[k] (output k, `size` bytes) with expect[k]: 0 when they
   * match, else -1 with the first difference in why.  NULL: bytes equal. */
  int (*check)(const wl_instance *w, void *const *got, char *why, size_t why_size);
  /* Free state and expect[] (the buffers' data is state's). */
  void (*release)(wl_instance *w);
} wl_workload;

extern const wl_workload wl_suite[];
extern const uint32_t wl_suite_count;

/* ------------------------------------------------------------------ */
/* The CUDA peers and the roofline (peer.c)                            */
/* ------------------------------------------------------------------ */
typedef struct wl_peers wl_peers;
struct wl_peer_floor;

/* libwlpeers.so beside the running binary (beside a libtool wrapper's
 * .libs/ directory) into path.  0, or -1 when it cannot be named. */
int wl_peers_default_path(char *path, size_t size);
/* dlopen path, check its ABI, select CUDA device `device` and measure the
 * floor (launch + wait, copy bandwidth).  NULL with the reason in why
 * (dlerror's text, or the CUDA failure).  Free with wl_peers_free. */
wl_peers *wl_peers_load(const char *path, uint32_t device, char *why, size_t why_size);
void wl_peers_free(wl_peers *p);
/* The driver's choice: arg (--peer PATH or "none", given: it was passed),
 * else libwlpeers.so beside the program unless the backend runs on the CPU
 * (cpu; backend: its id).  Loads it, prints the floor line, or prints why
 * the peer mode is skipped (one line; JSON when json) and returns NULL. */
wl_peers *wl_peers_open(const char *arg, int given, int cpu, const char *backend, uint32_t device,
                        int json);
const struct wl_peer_floor *wl_peers_floor(const wl_peers *p);
/* wl_peer_run of peers.h: 0 ok, 1 no peer for the workload, -1 failed. */
int wl_peers_run(wl_peers *p, const char *name, const wl_instance *w, uint32_t warm, uint32_t runs,
                 double *us, void *const *outputs, char *why, size_t why_size);
/* The bytes the workload must read (*in) and write (*out) at least:
 * bench/workloads/README.md, "Roofline", has the formula of each.  Call
 * after the baseline has filled expect[]. */
void wl_roofline_bytes(const char *name, const wl_instance *w, uint64_t *in, uint64_t *out);

/* ------------------------------------------------------------------ */
/* Indirect dispatch: survivors (survivors.c)                          */
/* ------------------------------------------------------------------ */
struct vyre_backend;

/* What the survivors workload needs of the driver. */
typedef struct wl_surv_env {
  struct vyre_backend *b;
  const char *id; /* the backend's id, for the report */
  int json, cpu;  /* JSON lines; a CPU backend (1 run, no warm-up by default) */
  uint32_t runs;  /* timed runs per mode; 0: the driver's default */
  double scale;   /* of 2^20 records */
  /* NAME.vyre assembled with ${N} = n: 0, or -1 (said on stderr). */
  int (*assemble)(void *user, const char *name, uint64_t n, void **bytes, size_t *size);
  void *user;
} wl_surv_env;

/* Compact 2^20 x scale records (1 in 16 survive) and process the
 * survivors, timed (a) as one dispatch_sequence whose process step is
 * indirect and (b) with the count read back and the process step sized on
 * the host; both checked against the C baseline; one JSON line (or text
 * row) per mode and a summary with the time the round trip costs.  0, or
 * -1 when a run failed or an output differed (stderr says why). */
int wl_survivors_run(const wl_surv_env *e);

/* Print s as the inside of a JSON string (quotes, backslashes and control
 * characters escaped) to stdout: the driver's and the peer mode's JSON lines. */
void wl_json_text(const char *s);

#endif /* VYRE_BENCH_WORKLOADS_H */
