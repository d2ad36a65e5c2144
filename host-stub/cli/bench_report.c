/* bench_report.c -- what `vyre bench` reports: the clock and median of the samples, one line per case (text or --jsonl) and the --json document. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "abi/support/json.h"
#include "abi/support/uuid.h"
#include "bench.h"

static int cmp_double(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return x < y ? -1 : x > y;
}

double cli_bench_median(double *v, uint32_t n) {
  qsort(v, n, sizeof *v, cmp_double);
  return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

void cli_bench_report(bench *B, const char *name, double us, double bytes, const char *note) {
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
    /* The document comes at the end (cli_bench_print_document). */
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

void cli_bench_print_document(const bench *B, const vyre_device_profile *prof) {
  vyre__json w;
  char peer[96];
  snprintf(peer, sizeof peer, "vyre-%s", B->id);
  vyre__json_init(&w, stdout);
  vyre__json_object_begin(&w);
  vyre__json_key(&w, "backend");
  vyre__json_string(&w, B->id);
  if (B->device >= 0) {
    vyre__json_key(&w, "ordinal");
    vyre__json_uint(&w, (uint64_t)B->device);
  }
  vyre__json_key(&w, "device");
  vyre__json_string(&w, prof->name);
  char uuid[VYRE__UUID_TEXT_SIZE];
  vyre__json_key(&w, "uuid"); /* which GPU, whatever CUDA_VISIBLE_DEVICES said */
  vyre__json_string(&w, vyre__uuid_is_zero(prof->uuid) ? NULL : vyre__uuid_format(prof->uuid, uuid));
  vyre__json_key(&w, "compute_units");
  vyre__json_uint(&w, prof->compute_units);
  vyre__json_key(&w, "cases");
  vyre__json_array_begin(&w);
  for (uint32_t i = 0; i < B->done_count; i++) {
    const bench_case *c = &B->done[i];
    vyre__json_object_begin(&w);
    vyre__json_key(&w, "peer");
    vyre__json_string(&w, peer);
    vyre__json_key(&w, "case");
    vyre__json_string(&w, c->name);
    vyre__json_key(&w, "median_us");
    vyre__json_double(&w, c->us);
    vyre__json_key(&w, "gbps");
    if (c->gbps > 0) vyre__json_double(&w, c->gbps);
    else vyre__json_null(&w);
    vyre__json_key(&w, "note");
    vyre__json_string(&w, c->note);
    vyre__json_object_end(&w);
  }
  vyre__json_array_end(&w);
  vyre__json_object_end(&w);
  vyre__json_end(&w);
}
