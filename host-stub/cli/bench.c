/* bench.c -- `vyre bench`: its options and the table of cases (dispatch latency, memory bandwidth, end-to-end host transfers, compile latency: case for case with bench/peers.py), run on one device or each in turn. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "vyre/vyre_support.h"
#include "bench.h"

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
  const char *device_uuid; /* --device GPU-...: resolved to `device` in open_device */
} bench_args;

/* The cases, in the order they run.  The code generator runs before the
 * transfer cases: on a 16-vCPU H100 host it measured 1.2 ms after them
 * (their copy threads and freed GiBs) against 0.73 ms in a process of its
 * own.  The compile cases run last: they set VYRE_CACHE_DIR and
 * VYRE_CUDA_DISK_CACHE for the instances they make. */
static const bench_row rows[] = {
    {"dispatch_resident_1k", CASES_LATENCY, SIZED_NONE, NULL, cli_bench_dispatch_pipeline, NULL,
     "launch + wait, host wall"},
    {"dispatch_bytes_1k", CASES_LATENCY, SIZED_NONE, NULL, cli_bench_dispatch_bytes, NULL,
     "as dispatch_resident_1k, program as bytes"},
    {"roundtrip_1k", CASES_LATENCY, SIZED_NONE, NULL, cli_bench_roundtrip, NULL,
     "host -> device -> host, host wall"},
    {"sequence_1k_x100", CASES_LATENCY, SIZED_NONE, NULL, cli_bench_sequence, NULL,
     "per step: 100 queued launches, one wait"},
    {"graph_1k_x1000", CASES_LATENCY, SIZED_NONE, NULL, cli_bench_graph, NULL,
     "per step: 100 steps replayed 10x, one wait"},
    {"saxpy_bw_", CASES_BANDWIDTH, SIZED_N, NULL, cli_bench_saxpy_bw, NULL, "device time"},
    {"copy_bw_", CASES_BANDWIDTH, SIZED_N, NULL, cli_bench_copy_bw, NULL, "device time"},
    {"codegen_10k", CASES_COMPILE, SIZED_NONE, NULL, cli_bench_codegen, NULL,
     "IR -> PTX of a 10,000-instruction program, host"},
    {"host_dispatch_", CASES_TRANSFER, SIZED_S, cli_bench_xfer_setup, cli_bench_host_dispatch,
     NULL, "dispatch_into: input up, sum, host wall"},
    {"saxpy_roundtrip_", CASES_TRANSFER, SIZED_S4, cli_bench_xfer_setup,
     cli_bench_saxpy_roundtrip, NULL, "x, y up, y down, host wall"},
    {"resident_upload_", CASES_TRANSFER, SIZED_S, cli_bench_xfer_resident_setup,
     cli_bench_resident_upload, NULL, "pageable host -> device, host wall"},
    {"resident_download_", CASES_TRANSFER, SIZED_S, cli_bench_xfer_resident_setup,
     cli_bench_resident_download, cli_bench_xfer_release, "device -> pageable host, host wall"},
    {"compile_cold", CASES_COMPILE, SIZED_NONE, cli_bench_compile_setup, cli_bench_compile_cold,
     NULL, "new program: decode + codegen + JIT + load"},
    {"compile_warm_hit", CASES_COMPILE, SIZED_NONE, cli_bench_compile_setup,
     cli_bench_compile_warm_hit, NULL, "same bytes, same instance"},
    {"compile_disk_hit", CASES_COMPILE, SIZED_NONE, cli_bench_compile_disk_setup,
     cli_bench_compile_disk_hit, cli_bench_compile_release, "another instance's cubin, from disk"},
    {"compile_set_8_serial", CASES_COMPILE, SIZED_NONE, cli_bench_compile_setup,
     cli_bench_compile_set, NULL, "8 new programs, one thread: wall time of the set"},
    {"compile_set_8_threads", CASES_COMPILE, SIZED_NONE, cli_bench_compile_setup,
     cli_bench_compile_set, NULL, "8 new programs, a thread each: wall time of the set"},
    {"compile_jit_direct", CASES_COMPILE, SIZED_NONE, cli_bench_compile_setup,
     cli_bench_compile_jit_direct, NULL, "as compile_cold, VYRE_CUDA_JIT_DIRECT=1"},
    {"compile_jit_o", CASES_COMPILE, SIZED_NONE, cli_bench_compile_setup,
     cli_bench_compile_jit_levels, cli_bench_compile_release,
     "as compile_cold, VYRE_CUDA_JIT_OPT_LEVEL set"},
};
#define ROW_COUNT (sizeof rows / sizeof rows[0])

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

/* Every item of a --cases list is a group or names some case (a sized
 * case by its name and size, or a prefix). */
static int cases_valid(const char *text) {
  if (!*text) return 0;
  for (const char *p = text; *p;) {
    size_t n = strcspn(p, ",");
    int ok = n && case_group(p, n);
    for (size_t k = 0; n && !ok && k < ROW_COUNT; k++) {
      size_t l = strlen(rows[k].name);
      ok = strncmp(rows[k].name, p, n < l ? n : l) == 0;
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

/* The size of `row` for the k-th --sizes (0: the case is skipped). */
static uint64_t row_size(const bench *B, const bench_row *row, const bench_args *a, uint32_t k) {
  switch (row->sized) {
  case SIZED_N: return a->sizes[k];
  case SIZED_S: return B->xfer_bytes;
  case SIZED_S4: return B->xfer_bytes / 4;
  default: return 1;
  }
}

/* One row: its case name (with its size), whether --cases wants it, its
 * setup and its run; then its done, run or not. */
static vyre_status run_row(bench *B, const bench_row *row, uint64_t size) {
  char name[64];
  if (row->sized == SIZED_N)
    snprintf(name, sizeof name, "%s%llu", row->name, (unsigned long long)size);
  else if (row->sized != SIZED_NONE) {
    char label[24];
    size_label(label, sizeof label, size);
    snprintf(name, sizeof name, "%s%s", row->name, label);
  } else snprintf(name, sizeof name, "%s", row->name);
  vyre_status st = VYRE_OK;
  if (size && wanted(B, name, row->group)) {
    if (row->setup) st = row->setup(B);
    if (!st) st = row->run(B, row, name, size);
  }
  if (row->done) row->done(B);
  return st;
}

/* The table in order; the bandwidth rows run size by size (every one at
 * the first --sizes, then every one at the second, ...). */
static vyre_status run_suite(bench *B, const bench_args *a) {
  vyre_status st = VYRE_OK;
  for (size_t r = 0; !st && r < ROW_COUNT;) {
    size_t end = r + 1;
    while (rows[r].sized == SIZED_N && end < ROW_COUNT && rows[end].sized == SIZED_N) end++;
    uint32_t sizes = rows[r].sized == SIZED_N ? a->size_count : 1;
    for (uint32_t k = 0; !st && k < sizes; k++)
      for (size_t i = r; !st && i < end; i++) st = run_row(B, &rows[i], row_size(B, &rows[i], a, k));
    r = end;
  }
  cli_bench_xfer_release(B);
  cli_bench_compile_release(B);
  return st;
}

/* --sizes N[,N...]: each an unsigned literal of the text form (decimal or
 * hex, as every count of the command line), 1 to 2^31. */
static int parse_sizes(const char *text, bench_args *a) {
  a->size_count = 0;
  for (const char *p = text; *p;) {
    const char *comma = strchr(p, ',');
    size_t n = comma ? (size_t)(comma - p) : strlen(p);
    char item[32];
    uint64_t v;
    if (n == 0 || n >= sizeof item || a->size_count == MAX_SIZES) return -1;
    memcpy(item, p, n);
    item[n] = '\0';
    if (cli_parse_u64(item, &v) != 0 || v == 0 || v > (1ull << 31)) return -1;
    a->sizes[a->size_count++] = v;
    p = comma ? comma + 1 : p + n;
    if (comma && !*p) return -1; /* a trailing comma */
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
      if (m < 0 || cli_parse_devices(val, &a.device, &a.all_devices, &a.device_uuid))
        return cli_usage(self, "--device takes a device ordinal, a device UUID or 'all'");
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

/* Open the backend on the device and read its profile into *prof. */
static int open_device(const cli_command *self, const bench_args *a, bench *B,
                       vyre_device_profile *prof) {
  if (cli_open_host(&B->host, &B->err) != VYRE_OK) return cli_fail(self, "%s", B->err.message);
  if (a->device_uuid &&
      cli_device_by_uuid(B->host, a->backend, a->device_uuid, &B->ordinal, &B->err) != VYRE_OK)
    return cli_fail(self, "%s", B->err.message);
  vyre_backend_options bo = {sizeof bo, B->ordinal, 0, 0, NULL};
  uint32_t index = 0;
  if (vyre_host_create(B->host, a->backend, &bo, &B->b, &index, &B->err) != VYRE_OK)
    return cli_fail(self, "%s", B->err.message);
  vyre_host_candidate cand;
  memset(&cand, 0, sizeof cand);
  cand.struct_size = sizeof cand;
  vyre_host_backend_info(B->host, index, &cand, NULL);
  B->id = cand.id;
  memset(prof, 0, sizeof *prof);
  prof->struct_size = sizeof *prof;
  if (B->b->vt->device_profile(B->b, prof, &B->err) != VYRE_OK)
    return cli_fail(self, "device profile: %s", B->err.message);
  B->cpu = prof->compute_major == 0;
  if (!VYRE_HOST_HAS(B->b, pipeline_create) || !VYRE_HOST_HAS(B->b, dispatch_sequence))
    return cli_fail(self, "backend '%s' lacks pipelines or sequences. Fix: pick another backend",
                    B->id);
  B->prof = prof;
  return CLI_OK;
}

/* The defaults that depend on the device (sizes, samples), then the
 * programs and their pipelines; *copy and *sum receive program bytes
 * the caller frees. */
static int prepare(const cli_command *self, bench_args *a, bench *B, void **copy, void **sum) {
  if (!a->size_count) {
    if (B->cpu) {
      a->sizes[0] = 1u << 20;
      a->size_count = 1;
    } else {
      a->sizes[0] = 1u << 20;
      a->sizes[1] = 1u << 24;
      a->sizes[2] = 1u << 28;
      a->size_count = 3;
    }
  }
  B->lat_iters = a->iters ? a->iters : (B->cpu ? 100 : 2000);
  B->bw_iters = B->cpu ? 5 : 30;
  B->seq_rounds = B->cpu ? 3 : 30;
  B->xfer_iters = B->cpu ? 3 : 7;
  B->compile_samples = B->cpu ? 10 : 30;
  B->warm_iters = a->iters ? a->iters : 1000;
  if (!a->xfer_mib_set) a->xfer_mib = B->cpu ? 0 : 1024;
  B->xfer_bytes = (uint64_t)a->xfer_mib << 20;
  size_t copy_size = 0, sum_size = 0;
  if (cli_bench_build_saxpy(&B->saxpy, &B->saxpy_size, &B->err) ||
      cli_bench_build_copy(copy, &copy_size, &B->err) ||
      cli_bench_build_sum(sum, &sum_size, &B->err) ||
      B->b->vt->pipeline_create(B->b, B->saxpy, B->saxpy_size, NULL, &B->psaxpy, &B->err) ||
      B->b->vt->pipeline_create(B->b, *copy, copy_size, NULL, &B->pcopy, &B->err) ||
      B->b->vt->pipeline_create(B->b, *sum, sum_size, NULL, &B->psum, &B->err))
    return cli_fail(self, "preparing the benchmark programs: %s", B->err.message);
  return CLI_OK;
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
  B.ordinal = a.device;
  B.err.struct_size = sizeof B.err;
  cli_progress_init(&B.progress);
  vyre_device_profile prof;
  void *copy = NULL, *sum = NULL;
  int rc = open_device(self, &a, &B, &prof);
  if (rc == CLI_OK) rc = prepare(self, &a, &B, &copy, &sum);
  if (rc == CLI_OK) {
    if (!B.json && a.all_devices)
      printf("vyre bench: backend %s device %u: %s (%u compute units)\n", B.id, a.device,
             prof.name, prof.compute_units);
    else if (!B.json)
      printf("vyre bench: backend %s on %s (%u compute units)\n", B.id, prof.name,
             prof.compute_units);
    cli_progress_show(&B.progress, "vyre bench: measuring the first case");
    vyre_status st = run_suite(&B, &a);
    cli_progress_show(&B.progress, NULL);
    if (st) rc = cli_fail(self, "%s", B.err.message);
    else if (B.json == 1) cli_bench_print_document(&B, &prof);
  }
  cli_progress_show(&B.progress, NULL);
  free(B.done);
  if (B.b) {
    if (B.psaxpy) B.b->vt->pipeline_release(B.b, B.psaxpy, NULL);
    if (B.pcopy) B.b->vt->pipeline_release(B.b, B.pcopy, NULL);
    if (B.psum) B.b->vt->pipeline_release(B.b, B.psum, NULL);
    B.b->vt->destroy(B.b);
  }
  vyre_host_close(B.host);
  free(B.saxpy);
  free(copy);
  free(sum);
  return rc;
}

const cli_command cli_cmd_bench = {
    "bench",
    "bench [--backend ID] [--device N|UUID|all] [--cases LIST] [--sizes N,N,...] [--iters N] "
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
    "  compile_set_8_serial  8 new programs made one after another: wall time of the\n"
    "                        set\n"
    "  compile_set_8_threads the same 8 from 8 threads on one instance\n"
    "  compile_jit_direct    compile_cold with VYRE_CUDA_JIT_DIRECT=1 (cuda only)\n"
    "  compile_jit_o0..o4    compile_cold at JIT optimisation level 0..4\n"
    "                        (VYRE_CUDA_JIT_OPT_LEVEL; cuda only)\n"
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
    "                 device failed; a UUID (GPU-..., all of it or a unique\n"
    "                 prefix, as `vyre info` prints it): that device\n"
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
