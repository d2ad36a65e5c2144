/* run_output.c -- the outputs of `vyre run`: typed elements as text or lossless JSON, raw bytes to files, and the timing of --timed. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "vyre/vyre_support.h"
#include "vyre/vyre_text.h"
#include "run.h"

/* One element as text.  json: NaN/inf become strings, bools true/false. */
static void format_element(char *out, size_t size, uint32_t type, const uint8_t *src, int json) {
  uint64_t bits = 0;
  memcpy(&bits, src, vyre_type_size(type));
  switch (type) {
  case VYRE_T_BOOL: snprintf(out, size, "%s", bits ? "true" : "false"); return;
  case VYRE_T_U8:
  case VYRE_T_U16:
  case VYRE_T_U32:
  case VYRE_T_U64: snprintf(out, size, "%llu", (unsigned long long)bits); return;
  case VYRE_T_I8: snprintf(out, size, "%d", (int8_t)bits); return;
  case VYRE_T_I16: snprintf(out, size, "%d", (int16_t)bits); return;
  case VYRE_T_I32: snprintf(out, size, "%d", (int32_t)bits); return;
  case VYRE_T_I64: snprintf(out, size, "%lld", (long long)(int64_t)bits); return;
  case VYRE_T_F32:
  case VYRE_T_F16:
  case VYRE_T_BF16: {
    /* The shortest decimal that reads back (10, not 1e+01), the same
     * text in --json, where it is a JSON number (docs/cli.md). */
    char num[VYRE_TEXT_FLOAT_MAX];
    vyre_text_format_float(num, sizeof num, type, bits, 0);
    int special = !strcmp(num, "nan") || !strcmp(num, "inf") || !strcmp(num, "-inf");
    snprintf(out, size, json && special ? "\"%s\"" : "%s", num);
    return;
  }
  default: snprintf(out, size, "?"); return;
  }
}

static const vyre_buffer_info *output_buffer(const vyre_program *p, uint32_t k) {
  for (uint32_t i = 0; i < p->buffer_count; i++)
    if (p->buffers[i].output_index == (int32_t)k) return &p->buffers[i];
  return NULL;
}

int cli_run_check_outputs(const cli_command *self, const char *id, const vyre_program *p,
                          const vyre_input *inputs, const vyre_dispatch_options *options,
                          const vyre_outputs *outs) {
  uint64_t sizes[VYRE_MAX_BUFFERS] = {0};
  for (uint32_t i = 0; i < p->input_count && i < VYRE_MAX_BUFFERS; i++) sizes[i] = inputs[i].size;
  vyre_geometry geo;
  vyre_error e = VYRE_ERROR_INIT;
  if (vyre_geometry_derive(p, sizes, NULL, options, &geo, &e) != VYRE_OK)
    return cli_fail(self, "backend '%s' returned VYRE_OK for a dispatch it must refuse (%s); "
                    "its outputs are not printed. Fix: this is a bug in the backend: report it; "
                    "try --backend reference", id, e.message);
  if (outs->count != p->output_count || (outs->count && !outs->items))
    return cli_fail(self, "backend '%s' returned %u outputs for a program with %u; they are not "
                    "printed. Fix: this is a bug in the backend: report it", id, outs->count,
                    p->output_count);
  for (uint32_t i = 0; i < p->buffer_count; i++) {
    int32_t k = p->buffers[i].output_index;
    if (k < 0 || (uint32_t)k >= outs->count) continue;
    const vyre_output *it = &outs->items[k];
    if (it->size != geo.out_size[i] || (it->size && !it->data))
      return cli_fail(self, "backend '%s' returned %llu bytes at %p for output %d '%s', which has "
                      "%llu; it is not printed. Fix: this is a bug in the backend: report it",
                      id, (unsigned long long)it->size, it->data, k, p->buffers[i].name,
                      (unsigned long long)geo.out_size[i]);
  }
  return CLI_OK;
}

/*
 * Where output k's bytes sit in its buffer.  A range (out_range) may start
 * or end inside an element: then the bytes are reported as bytes and no
 * element is decoded from a shifted offset (`aligned` 0).
 */
typedef struct out_layout {
  uint32_t type, esize;
  uint64_t byte_offset, byte_size;
  int aligned;       /* byte_offset and byte_size are whole elements */
  uint64_t first;    /* element index of the first byte (aligned only) */
  uint64_t count;    /* elements (aligned only) */
} out_layout;

static out_layout layout_of(const vyre_program *p, const vyre_outputs *outs, uint32_t k) {
  const vyre_buffer_info *b = output_buffer(p, k);
  out_layout L;
  L.type = b ? b->decl.elem_type : VYRE_T_U8;
  L.esize = vyre_type_size(L.type);
  L.byte_offset = b && (b->decl.flags & VYRE_BUF_OUT_RANGE) ? b->decl.out_range_offset : 0;
  L.byte_size = outs->items[k].size;
  L.aligned = L.byte_offset % L.esize == 0 && L.byte_size % L.esize == 0;
  L.first = L.aligned ? L.byte_offset / L.esize : 0;
  L.count = L.aligned ? L.byte_size / L.esize : 0;
  return L;
}

static int is_float(uint32_t type) {
  return type == VYRE_T_F32 || type == VYRE_T_F16 || type == VYRE_T_BF16;
}

static void print_hex(const uint8_t *data, uint64_t size) {
  for (uint64_t i = 0; i < size; i++) printf("%02x", data[i]);
}

void cli_run_print_outputs_text(const vyre_program *p, const vyre_outputs *outs, uint32_t show) {
  for (uint32_t k = 0; k < outs->count; k++) {
    const vyre_buffer_info *b = output_buffer(p, k);
    out_layout L = layout_of(p, outs, k);
    uint32_t type = L.type, esize = L.esize;
    uint64_t count = L.count, first = L.first;
    if (!L.aligned) {
      /* A range that cuts elements: the exact bytes, never shifted values. */
      printf("output %u %s: %s, bytes %llu..%llu of the buffer (not whole elements)\n  ", k,
             b ? b->name : "?", vyre_type_name(type), (unsigned long long)L.byte_offset,
             (unsigned long long)(L.byte_offset + L.byte_size - 1));
      print_hex(outs->items[k].data, L.byte_size);
      printf("\n");
      continue;
    }
    printf("output %u %s: %s x %llu", k, b ? b->name : "?", vyre_type_name(type),
           (unsigned long long)count);
    if (first) printf(" (elements %llu..%llu)", (unsigned long long)first,
                      (unsigned long long)(first + count - 1));
    printf("\n");
    uint64_t shown = show && count > show ? show : count;
    const uint8_t *data = outs->items[k].data;
    for (uint64_t e = 0; e < shown; e++) {
      char cell[64];
      format_element(cell, sizeof cell, type, data + e * esize, 0);
      if (e % 8 == 0) printf("%s  [%5llu]", e ? "\n" : "", (unsigned long long)(first + e));
      printf(" %s", cell);
    }
    if (shown) printf("\n");
    if (shown < count)
      printf("  ... %llu more (--show 0 prints all)\n", (unsigned long long)(count - shown));
  }
}

/*
 * Lossless: every output reports its exact byte range; an element-aligned
 * one its values, and for f32/f16/bf16 also each value's bits ("bits", a
 * parallel array of hex strings), so NaN payloads and signed zeros are
 * visible; a range that cuts elements gives its bytes ("hex") and no
 * values.
 */
void cli_run_print_outputs_json(vyre__json *w, const vyre_program *p, const vyre_outputs *outs) {
  vyre__json_key(w, "outputs");
  vyre__json_array_begin(w);
  for (uint32_t k = 0; k < outs->count; k++) {
    const vyre_buffer_info *b = output_buffer(p, k);
    out_layout L = layout_of(p, outs, k);
    const uint8_t *data = outs->items[k].data;
    vyre__json_object_begin(w);
    vyre__json_key(w, "name");
    vyre__json_string(w, b ? b->name : "?");
    vyre__json_key(w, "type");
    vyre__json_string(w, vyre_type_name(L.type));
    vyre__json_key(w, "byte_offset");
    vyre__json_uint(w, L.byte_offset);
    vyre__json_key(w, "byte_size");
    vyre__json_uint(w, L.byte_size);
    if (!L.aligned) {
      vyre__json_key(w, "first");
      vyre__json_null(w);
      vyre__json_key(w, "count");
      vyre__json_uint(w, 0);
      vyre__json_key(w, "values");
      vyre__json_array_begin(w);
      vyre__json_array_end(w);
      vyre__json_key(w, "hex");
      char *hex = malloc((size_t)L.byte_size * 2 + 1);
      for (uint64_t i = 0; hex && i < L.byte_size; i++) sprintf(hex + 2 * i, "%02x", data[i]);
      if (hex) hex[2 * L.byte_size] = '\0';
      vyre__json_string(w, hex ? hex : "");
      free(hex);
      vyre__json_object_end(w);
      continue;
    }
    vyre__json_key(w, "first");
    vyre__json_uint(w, L.first);
    vyre__json_key(w, "count");
    vyre__json_uint(w, L.count);
    vyre__json_key(w, "values");
    vyre__json_array_begin(w);
    for (uint64_t e = 0; e < L.count; e++) {
      char cell[64];
      format_element(cell, sizeof cell, L.type, data + e * L.esize, 1);
      vyre__json_raw(w, cell);
    }
    vyre__json_array_end(w);
    if (is_float(L.type)) {
      vyre__json_key(w, "bits");
      vyre__json_array_begin(w);
      for (uint64_t e = 0; e < L.count; e++) {
        uint64_t bits = 0;
        char cell[24];
        memcpy(&bits, data + e * L.esize, L.esize);
        snprintf(cell, sizeof cell, "0x%0*llx", (int)(2 * L.esize), (unsigned long long)bits);
        vyre__json_string(w, cell);
      }
      vyre__json_array_end(w);
    }
    vyre__json_object_end(w);
  }
  vyre__json_array_end(w);
}

/* --output-raw DIR: DIR/<k>.<name>.bin holds output k's bytes exactly as
 * the backend returned them (its range only, for a ranged output). */
int cli_run_write_raw_outputs(const cli_command *self, const char *dir, const vyre_program *p,
                              const vyre_outputs *outs) {
  for (uint32_t k = 0; k < outs->count; k++) {
    const vyre_buffer_info *b = output_buffer(p, k);
    char path[4096];
    int n = snprintf(path, sizeof path, "%s/%u.%s.bin", dir, k, b ? b->name : "output");
    if (n < 0 || (size_t)n >= sizeof path)
      return cli_fail(self, "--output-raw: the path for output %u is too long. Fix: use a "
                      "shorter directory", k);
    FILE *f = fopen(path, "wb");
    if (!f)
      return cli_fail(self, "--output-raw: cannot create %s: %s. Fix: create the directory "
                      "or choose a writable one", path, strerror(errno));
    size_t want = (size_t)outs->items[k].size;
    size_t put = want ? fwrite(outs->items[k].data, 1, want, f) : 0;
    if (fclose(f) != 0 || put != want)
      return cli_fail(self, "--output-raw: writing %s failed: %s. Fix: free disk space", path,
                      strerror(errno));
  }
  return CLI_OK;
}

static int compare_u64(const void *a, const void *b) {
  uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
  return x < y ? -1 : x > y;
}

static void format_ns(char *out, size_t size, double ns) {
  if (ns >= 1e9) snprintf(out, size, "%.3f s", ns / 1e9);
  else if (ns >= 1e6) snprintf(out, size, "%.3f ms", ns / 1e6);
  else if (ns >= 1e3) snprintf(out, size, "%.3f us", ns / 1e3);
  else snprintf(out, size, "%.0f ns", ns);
}

/* min / median / mean of one timing field over the runs that have it. */
static int timing_stats(const timing_log *log, uint32_t bit, size_t offset, double stats[3]) {
  uint64_t *v = malloc((log->count ? log->count : 1) * sizeof *v);
  if (!v) return 0;
  uint32_t n = 0;
  double sum = 0;
  for (uint32_t i = 0; i < log->count; i++) {
    if (!(log->runs[i].valid & bit)) continue;
    memcpy(&v[n], (const char *)&log->runs[i] + offset, sizeof v[n]);
    sum += (double)v[n++];
  }
  if (n) {
    qsort(v, n, sizeof *v, compare_u64);
    stats[0] = (double)v[0];
    stats[1] = n % 2 ? (double)v[n / 2] : ((double)v[n / 2 - 1] + (double)v[n / 2]) / 2;
    stats[2] = sum / n;
  }
  free(v);
  return (int)n;
}

static const struct {
  const char *name;
  uint32_t bit;
  size_t offset;
} timing_fields[] = {
    {"wall", VYRE_TIMING_WALL, offsetof(vyre_timing, wall_ns)},
    {"device", VYRE_TIMING_DEVICE, offsetof(vyre_timing, device_ns)},
    {"enqueue", VYRE_TIMING_ENQUEUE, offsetof(vyre_timing, enqueue_ns)},
    {"wait", VYRE_TIMING_WAIT, offsetof(vyre_timing, wait_ns)},
};

void cli_run_print_timing_text(const timing_log *log) {
  printf("timing over %u run%s (min / median / mean):\n", log->count, log->count == 1 ? "" : "s");
  for (size_t f = 0; f < sizeof timing_fields / sizeof timing_fields[0]; f++) {
    double s[3];
    if (!timing_stats(log, timing_fields[f].bit, timing_fields[f].offset, s)) {
      printf("  %-8s n/a (this backend does not measure it)\n", timing_fields[f].name);
      continue;
    }
    char a[32], b[32], c[32];
    format_ns(a, sizeof a, s[0]);
    format_ns(b, sizeof b, s[1]);
    format_ns(c, sizeof c, s[2]);
    if (log->count == 1) printf("  %-8s %s\n", timing_fields[f].name, a);
    else printf("  %-8s %s / %s / %s\n", timing_fields[f].name, a, b, c);
  }
}

void cli_run_print_timing_json(vyre__json *w, const timing_log *log) {
  vyre__json_key(w, "timing");
  vyre__json_object_begin(w);
  vyre__json_key(w, "runs");
  vyre__json_uint(w, log->count);
  for (size_t f = 0; f < sizeof timing_fields / sizeof timing_fields[0]; f++) {
    char key[32];
    snprintf(key, sizeof key, "%s_ns", timing_fields[f].name);
    vyre__json_key(w, key);
    double s[3];
    if (!timing_stats(log, timing_fields[f].bit, timing_fields[f].offset, s)) {
      vyre__json_null(w);
      continue;
    }
    vyre__json_array_begin(w);
    for (uint32_t i = 0; i < log->count; i++) {
      uint64_t v;
      memcpy(&v, (const char *)&log->runs[i] + timing_fields[f].offset, sizeof v);
      if (log->runs[i].valid & timing_fields[f].bit) vyre__json_uint(w, v);
      else vyre__json_null(w);
    }
    vyre__json_array_end(w);
  }
  vyre__json_object_end(w);
}
