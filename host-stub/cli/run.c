/* run.c -- `vyre run`: build inputs, dispatch a program on a backend, print typed outputs (text or JSON) and timing. */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "abi/support/prng.h"
#include "vyre/vyre_support.h"
#include "cli_json.h"
#include "cli.h"
#include "abi/support/bits.h"

#define MAX_INPUTS VYRE_MAX_BUFFERS
#define MAX_REPEAT 1000000u

typedef enum input_kind { INPUT_FILE, INPUT_RANDOM, INPUT_FILL, INPUT_IOTA } input_kind;

typedef struct input_spec {
  input_kind kind;
  const char *arg; /* as given */
} input_spec;

typedef struct run_args {
  const char *program;
  const char *backend;
  input_spec inputs[MAX_INPUTS];
  uint32_t input_count;
  vyre_dispatch_options options;
  uint32_t device;
  uint32_t repeat;
  uint32_t show;
  int timed;
  int json;
  const char *output_raw; /* --output-raw DIR, or NULL */
  uint64_t timeout_ns;    /* --timeout SECONDS: 0 = none */
  uint64_t max_steps;     /* --max-steps N: 0 = none */
  vyre_limits limits;     /* chained on options when either is set */
  uint64_t max_input;     /* --max-input-bytes: the most one --input FILE may hold */
} run_args;

/* --max-input-bytes: default and ceiling (docs/host.md, "Files vyre reads"). */
#define DEFAULT_MAX_INPUT ((uint64_t)1 << 30)
#define CEILING_MAX_INPUT ((uint64_t)1 << 40)

static const char *const kind_option[] = {"--input", "--random", "--fill", "--iota"};
#define INPUT_KINDS 4

/* ------------------------------------------------------------------ */
/* Values                                                              */
/* ------------------------------------------------------------------ */

/* Store `bits` (the value's representation, low bytes first) as one
 * element of storage type `type`. */
static void put_element(uint8_t *dst, uint32_t type, uint64_t bits) {
  uint32_t size = vyre_type_size(type);
  memcpy(dst, &bits, size); /* little-endian: the low bytes */
}

/* Parse one --fill value for storage type `type` into its element bits.
 * 0 on success; else -1 with a reason in why. */
static int parse_value(const char *text, uint32_t type, uint64_t *bits, char *why, size_t why_size) {
  char *end = NULL;
  errno = 0;
  switch (type) {
  case VYRE_T_BOOL:
    if (!strcmp(text, "true") || !strcmp(text, "1")) *bits = 1;
    else if (!strcmp(text, "false") || !strcmp(text, "0")) *bits = 0;
    else {
      snprintf(why, why_size, "'%s' is not a bool (true, false, 1, 0)", text);
      return -1;
    }
    return 0;
  case VYRE_T_U8:
  case VYRE_T_U16:
  case VYRE_T_U32:
  case VYRE_T_U64: {
    uint32_t size = vyre_type_size(type);
    uint64_t max = size == 8 ? UINT64_MAX : (1ull << (8 * size)) - 1;
    if (text[0] == '-') {
      snprintf(why, why_size, "'%s' is negative, %s is unsigned", text, vyre_type_name(type));
      return -1;
    }
    unsigned long long v = strtoull(text, &end, 0);
    if (errno || !*text || *end || v > max) {
      snprintf(why, why_size, "'%s' is not a %s (0 to %llu)", text, vyre_type_name(type),
               (unsigned long long)max);
      return -1;
    }
    *bits = v;
    return 0;
  }
  case VYRE_T_I8:
  case VYRE_T_I16:
  case VYRE_T_I32:
  case VYRE_T_I64: {
    uint32_t size = vyre_type_size(type);
    int64_t max = size == 8 ? INT64_MAX : (int64_t)((1ull << (8 * size - 1)) - 1);
    int64_t min = -max - 1;
    long long v = strtoll(text, &end, 0);
    if (errno || !*text || *end || v > max || v < min) {
      snprintf(why, why_size, "'%s' is not an %s (%lld to %lld)", text, vyre_type_name(type),
               (long long)min, (long long)max);
      return -1;
    }
    *bits = (uint64_t)v;
    return 0;
  }
  case VYRE_T_F32:
  case VYRE_T_F16:
  case VYRE_T_BF16: {
    float f = strtof(text, &end);
    if (!*text || *end) {
      snprintf(why, why_size, "'%s' is not a number", text);
      return -1;
    }
    uint32_t u = vyre__f32_bits(f);
    *bits = type == VYRE_T_F32 ? u : type == VYRE_T_F16 ? vyre_f32_to_f16(u) : vyre_f32_to_bf16(u);
    return 0;
  }
  default:
    snprintf(why, why_size, "type %s cannot be filled", vyre_type_name(type));
    return -1;
  }
}

/* A random element: integers get random bits, floats uniform [-1, 1),
 * bools 0 or 1 (docs/host.md). */
static uint64_t random_element(uint64_t *state, uint32_t type) {
  uint64_t r = vyre__splitmix64(state);
  switch (type) {
  case VYRE_T_BOOL: return r & 1;
  case VYRE_T_F32:
  case VYRE_T_F16:
  case VYRE_T_BF16: {
    float f = (float)(r >> 40) * (1.0f / 8388608.0f) - 1.0f;
    uint32_t u = vyre__f32_bits(f);
    return type == VYRE_T_F32 ? u : type == VYRE_T_F16 ? vyre_f32_to_f16(u) : vyre_f32_to_bf16(u);
  }
  default: return r;
  }
}

/* Element k of --iota START: START + k in the element's type (integers
 * wrap, floats are rounded from START + k computed in double). */
static uint64_t iota_element(uint32_t type, uint64_t start_bits, uint32_t k) {
  switch (type) {
  case VYRE_T_BOOL: return (start_bits + k) & 1;
  case VYRE_T_F32:
  case VYRE_T_F16:
  case VYRE_T_BF16: {
    float start = type == VYRE_T_F32   ? vyre__f32_from_bits((uint32_t)start_bits)
                  : type == VYRE_T_F16 ? vyre__f32_from_bits(vyre_f16_to_f32((uint16_t)start_bits))
                                       : vyre__f32_from_bits(vyre_bf16_to_f32((uint16_t)start_bits));
    uint32_t u = vyre__f32_bits((float)((double)start + k));
    return type == VYRE_T_F32 ? u : type == VYRE_T_F16 ? vyre_f32_to_f16(u) : vyre_f32_to_bf16(u);
  }
  default: return start_bits + k;
  }
}

/* Shortest decimal that reads back as the same value of `type`. */
static void format_float(char *out, size_t size, uint32_t type, uint64_t bits) {
  float f = type == VYRE_T_F32   ? vyre__f32_from_bits((uint32_t)bits)
            : type == VYRE_T_F16 ? vyre__f32_from_bits(vyre_f16_to_f32((uint16_t)bits))
                                 : vyre__f32_from_bits(vyre_bf16_to_f32((uint16_t)bits));
  if (isnan(f)) {
    snprintf(out, size, "nan");
    return;
  }
  if (isinf(f)) {
    snprintf(out, size, f < 0 ? "-inf" : "inf");
    return;
  }
  for (int prec = 1; prec <= 9; prec++) {
    snprintf(out, size, "%.*g", prec, (double)f);
    uint32_t back = vyre__f32_bits(strtof(out, NULL));
    uint64_t again = type == VYRE_T_F32 ? back
                     : type == VYRE_T_F16 ? vyre_f32_to_f16(back)
                                          : vyre_f32_to_bf16(back);
    if (again == bits) return;
  }
}

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
    char num[48];
    format_float(num, sizeof num, type, bits);
    int special = !strcmp(num, "nan") || !strcmp(num, "inf") || !strcmp(num, "-inf");
    snprintf(out, size, json && special ? "\"%s\"" : "%s", num);
    return;
  }
  default: snprintf(out, size, "?"); return;
  }
}

/* ------------------------------------------------------------------ */
/* Inputs                                                              */
/* ------------------------------------------------------------------ */

static void describe_buffer(const vyre_buffer_info *b, char *out, size_t size) {
  if (b->decl.count) snprintf(out, size, "%s: %s[%u]", b->name, vyre_type_name(b->decl.elem_type),
                              b->decl.count);
  else snprintf(out, size, "%s: %s[]", b->name, vyre_type_name(b->decl.elem_type));
}

static void list_inputs(const vyre_program *p, FILE *f) {
  for (uint32_t i = 0; i < p->buffer_count; i++) {
    const vyre_buffer_info *b = &p->buffers[i];
    if (b->input_index < 0) continue;
    char d[160];
    describe_buffer(b, d, sizeof d);
    fprintf(f, "  input %d  %s%s\n", b->input_index, d,
            b->decl.count ? "" : "  (sized by its input: give N)");
  }
}

/* Split "VALUE[:COUNT]".  *count 0 when absent.  0 on success. */
static int split_count(const char *arg, char *value, size_t value_size, uint32_t *count) {
  const char *colon = strrchr(arg, ':');
  *count = 0;
  size_t len = colon ? (size_t)(colon - arg) : strlen(arg);
  if (len >= value_size) return -1;
  memcpy(value, arg, len);
  value[len] = '\0';
  if (colon && cli_parse_u32(colon + 1, 1, 1u << 28, count) != 0) return -1;
  return 0;
}

/* Build the bytes of input `spec` for buffer b.  Returns CLI_OK, or an
 * exit code after printing the problem. */
static int make_input(const cli_command *self, const input_spec *spec, uint64_t max_input,
                      const vyre_buffer_info *b, vyre_input *in, void **owned) {
  uint32_t type = b->decl.elem_type, esize = vyre_type_size(type);
  char desc[160];
  describe_buffer(b, desc, sizeof desc);
  *owned = NULL;
  if (spec->kind == INPUT_FILE) {
    void *data = NULL;
    size_t size = 0;
    vyre_error err = VYRE_ERROR_INIT;
    if (cli_read_file(spec->arg, max_input,
                      "raise --max-input-bytes, or give a file of the buffer's size", &data, &size,
                      &err) != 0)
      return cli_fail(self, "input %d (%s): %s", b->input_index, desc, err.message);
    if (size % esize || (b->decl.count && size != (uint64_t)b->decl.count * esize)) {
      free(data);
      if (b->decl.count)
        return cli_fail(self, "input %d (%s) needs exactly %llu bytes; %s has %zu. Fix: give a "
                        "file of %u little-endian %s values",
                        b->input_index, desc, (unsigned long long)b->decl.count * esize,
                        spec->arg, size, b->decl.count, vyre_type_name(type));
      return cli_fail(self, "input %d (%s): %s has %zu bytes, not a whole number of %u-byte "
                      "elements. Fix: give a file of little-endian %s values",
                      b->input_index, desc, spec->arg, size, esize, vyre_type_name(type));
    }
    *owned = data;
    in->data = data;
    in->size = size;
    return CLI_OK;
  }
  char value[128];
  uint32_t count = 0;
  if (split_count(spec->arg, value, sizeof value, &count) != 0)
    return cli_usage(self, "%s '%s': expected VALUE or VALUE:COUNT (COUNT 1 to 2^28)",
                     kind_option[spec->kind], spec->arg);
  if (b->decl.count) {
    if (count && count != b->decl.count)
      return cli_usage(self, "%s '%s': input %d (%s) has %u elements, not %u",
                       kind_option[spec->kind], spec->arg, b->input_index, desc, b->decl.count,
                       count);
    count = b->decl.count;
  } else if (!count) {
    return cli_usage(self, "input %d (%s) is sized by its input: say how many elements, e.g. "
                     "%s %s:1024",
                     b->input_index, desc, kind_option[spec->kind], value);
  }
  uint64_t bits = 0, seed = 0;
  char why[320];
  if (spec->kind == INPUT_FILL || spec->kind == INPUT_IOTA) {
    if (parse_value(value, type, &bits, why, sizeof why) != 0)
      return cli_usage(self, "%s for input %d (%s): %s", kind_option[spec->kind],
                       b->input_index, desc, why);
  } else {
    char *end = NULL;
    errno = 0;
    seed = strtoull(value, &end, 0);
    if (errno || !*value || *end || value[0] == '-')
      return cli_usage(self, "--random '%s': the seed must be an unsigned integer", value);
  }
  uint8_t *data = malloc((size_t)count * esize);
  if (!data) return cli_fail(self, "input %d: out of memory for %u elements", b->input_index, count);
  for (uint32_t k = 0; k < count; k++)
    put_element(data + (size_t)k * esize, type,
                spec->kind == INPUT_FILL   ? bits
                : spec->kind == INPUT_IOTA ? iota_element(type, bits, k)
                                           : random_element(&seed, type));
  *owned = data;
  in->data = data;
  in->size = (uint64_t)count * esize;
  return CLI_OK;
}

/* ------------------------------------------------------------------ */
/* Output                                                              */
/* ------------------------------------------------------------------ */

static const vyre_buffer_info *output_buffer(const vyre_program *p, uint32_t k) {
  for (uint32_t i = 0; i < p->buffer_count; i++)
    if (p->buffers[i].output_index == (int32_t)k) return &p->buffers[i];
  return NULL;
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

static void print_outputs_text(const vyre_program *p, const vyre_outputs *outs, uint32_t show) {
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
static void print_outputs_json(cj_writer *w, const vyre_program *p, const vyre_outputs *outs) {
  cj_key(w, "outputs");
  cj_array_begin(w);
  for (uint32_t k = 0; k < outs->count; k++) {
    const vyre_buffer_info *b = output_buffer(p, k);
    out_layout L = layout_of(p, outs, k);
    const uint8_t *data = outs->items[k].data;
    cj_object_begin(w);
    cj_key(w, "name");
    cj_string(w, b ? b->name : "?");
    cj_key(w, "type");
    cj_string(w, vyre_type_name(L.type));
    cj_key(w, "byte_offset");
    cj_uint(w, L.byte_offset);
    cj_key(w, "byte_size");
    cj_uint(w, L.byte_size);
    if (!L.aligned) {
      cj_key(w, "first");
      cj_null(w);
      cj_key(w, "count");
      cj_uint(w, 0);
      cj_key(w, "values");
      cj_array_begin(w);
      cj_array_end(w);
      cj_key(w, "hex");
      char *hex = malloc((size_t)L.byte_size * 2 + 1);
      for (uint64_t i = 0; hex && i < L.byte_size; i++) sprintf(hex + 2 * i, "%02x", data[i]);
      if (hex) hex[2 * L.byte_size] = '\0';
      cj_string(w, hex ? hex : "");
      free(hex);
      cj_object_end(w);
      continue;
    }
    cj_key(w, "first");
    cj_uint(w, L.first);
    cj_key(w, "count");
    cj_uint(w, L.count);
    cj_key(w, "values");
    cj_array_begin(w);
    for (uint64_t e = 0; e < L.count; e++) {
      char cell[64];
      format_element(cell, sizeof cell, L.type, data + e * L.esize, 1);
      cj_raw(w, cell);
    }
    cj_array_end(w);
    if (is_float(L.type)) {
      cj_key(w, "bits");
      cj_array_begin(w);
      for (uint64_t e = 0; e < L.count; e++) {
        uint64_t bits = 0;
        char cell[24];
        memcpy(&bits, data + e * L.esize, L.esize);
        snprintf(cell, sizeof cell, "0x%0*llx", (int)(2 * L.esize), (unsigned long long)bits);
        cj_string(w, cell);
      }
      cj_array_end(w);
    }
    cj_object_end(w);
  }
  cj_array_end(w);
}

/* --output-raw DIR: DIR/<k>.<name>.bin holds output k's bytes exactly as
 * the backend returned them (its range only, for a ranged output). */
static int write_raw_outputs(const cli_command *self, const char *dir, const vyre_program *p,
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

typedef struct timing_log {
  vyre_timing *runs;
  uint32_t count;
} timing_log;

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

static void print_timing_text(const timing_log *log) {
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

static void print_timing_json(cj_writer *w, const timing_log *log) {
  cj_key(w, "timing");
  cj_object_begin(w);
  cj_key(w, "runs");
  cj_uint(w, log->count);
  for (size_t f = 0; f < sizeof timing_fields / sizeof timing_fields[0]; f++) {
    char key[32];
    snprintf(key, sizeof key, "%s_ns", timing_fields[f].name);
    cj_key(w, key);
    double s[3];
    if (!timing_stats(log, timing_fields[f].bit, timing_fields[f].offset, s)) {
      cj_null(w);
      continue;
    }
    cj_array_begin(w);
    for (uint32_t i = 0; i < log->count; i++) {
      uint64_t v;
      memcpy(&v, (const char *)&log->runs[i] + timing_fields[f].offset, sizeof v);
      if (log->runs[i].valid & timing_fields[f].bit) cj_uint(w, v);
      else cj_null(w);
    }
    cj_array_end(w);
  }
  cj_object_end(w);
}

/* ------------------------------------------------------------------ */
/* The command                                                         */
/* ------------------------------------------------------------------ */

static int parse_args(const cli_command *self, int argc, char **argv, run_args *a) {
  memset(a, 0, sizeof *a);
  a->options.struct_size = sizeof a->options;
  a->repeat = 1;
  a->show = 64;
  a->max_input = DEFAULT_MAX_INPUT;
  for (int i = 1; i < argc;) {
    const char *v = NULL;
    int m;
    if (cli_opt_flag(argv, i, "--timed")) {
      a->timed = 1;
      i++;
      continue;
    }
    if (cli_opt_flag(argv, i, "--json")) {
      a->json = 1;
      i++;
      continue;
    }
#define VALUE_OPTION(name)                                        \
  if ((m = cli_opt_value(self, argc, argv, &i, name, &v)) < 0) return CLI_USAGE; \
  if (m > 0)
    VALUE_OPTION("--backend") {
      a->backend = v;
      continue;
    }
    VALUE_OPTION("--output-raw") {
      a->output_raw = v;
      continue;
    }
    for (int k = 0; k < INPUT_KINDS; k++) {
      if ((m = cli_opt_value(self, argc, argv, &i, kind_option[k], &v)) < 0) return CLI_USAGE;
      if (m > 0) {
        if (a->input_count == MAX_INPUTS)
          return cli_usage(self, "more than %u inputs", MAX_INPUTS);
        a->inputs[a->input_count].kind = (input_kind)k;
        a->inputs[a->input_count++].arg = v;
        goto next;
      }
    }
    VALUE_OPTION("--ulp") {
      if (cli_parse_u32(v, 0, 1u << 30, &a->options.ulp_budget) != 0)
        return cli_usage(self, "--ulp '%s' is not a number of ulps (0 = strict)", v);
      continue;
    }
    VALUE_OPTION("--wg") {
      if (cli_parse_dim3(v, a->options.workgroup) != 0)
        return cli_usage(self, "--wg '%s' is not X[,Y[,Z]] with each at least 1", v);
      continue;
    }
    VALUE_OPTION("--grid") {
      if (cli_parse_dim3(v, a->options.grid) != 0)
        return cli_usage(self, "--grid '%s' is not X[,Y[,Z]] with each at least 1", v);
      continue;
    }
    VALUE_OPTION("--iterations") {
      if (cli_parse_u32(v, 1, 1u << 30, &a->options.fixpoint_iterations) != 0)
        return cli_usage(self, "--iterations '%s' is not a count from 1 to %u", v, 1u << 30);
      continue;
    }
    VALUE_OPTION("--max-input-bytes") {
      if (cli_parse_bytes(v, 1, CEILING_MAX_INPUT, &a->max_input) != 0)
        return cli_usage(self, "--max-input-bytes '%s' is not a byte count from 1 to 1T (a "
                         "number with an optional K, M, G or T suffix)", v);
      continue;
    }
    VALUE_OPTION("--repeat") {
      if (cli_parse_u32(v, 1, MAX_REPEAT, &a->repeat) != 0)
        return cli_usage(self, "--repeat '%s' is not a count from 1 to %u", v, MAX_REPEAT);
      continue;
    }
    VALUE_OPTION("--show") {
      if (cli_parse_u32(v, 0, UINT32_MAX, &a->show) != 0)
        return cli_usage(self, "--show '%s' is not a count (0 = all)", v);
      continue;
    }
    VALUE_OPTION("--timeout") {
      if (cli_parse_seconds(v, &a->timeout_ns) != 0)
        return cli_usage(self, "--timeout '%s' is not a number of seconds from 0 to 1000000 "
                         "(decimals allowed, e.g. 0.5; 0 = none)", v);
      continue;
    }
    VALUE_OPTION("--max-steps") {
      char *end = NULL;
      errno = 0;
      unsigned long long n = (*v >= '0' && *v <= '9') ? strtoull(v, &end, 10) : 0;
      if (errno || !end || *end || n == 0)
        return cli_usage(self, "--max-steps '%s' is not a positive step count", v);
      a->max_steps = n;
      continue;
    }
    VALUE_OPTION("--device") {
      if (cli_parse_u32(v, 0, 1024, &a->device) != 0)
        return cli_usage(self, "--device '%s' is not a device number", v);
      continue;
    }
#undef VALUE_OPTION
    if (argv[i][0] == '-' && argv[i][1] != '\0')
      return cli_usage(self, "unknown option '%s'", argv[i]);
    if (a->program)
      return cli_usage(self, "takes one PROGRAM, got '%s' and '%s'", a->program, argv[i]);
    a->program = argv[i++];
  next:;
  }
  if (!a->program) return cli_usage(self, "PROGRAM is missing");
  /* Standard input ends after one read: one file may name it. */
  const char *first_stdin = strcmp(a->program, "-") == 0 ? "PROGRAM" : NULL;
  for (uint32_t k = 0; k < a->input_count; k++) {
    if (a->inputs[k].kind != INPUT_FILE || strcmp(a->inputs[k].arg, "-") != 0) continue;
    if (first_stdin)
      return cli_usage(self, "%s and --input %u both read stdin ('-'), which can be read once. "
                       "Fix: give one of them a file", first_stdin, k);
    first_stdin = "an --input";
  }
  if (a->output_raw && strcmp(a->output_raw, "-") == 0)
    return cli_usage(self, "--output-raw takes a directory, and '-' (stdout) is not one. Fix: "
                     "name a directory, or use --json, which gives every output's bytes "
                     "(values, and bits for floats) on stdout");
  return CLI_OK;
}

/* Chain --timeout and --max-steps on the options (vyre_limits) when the
 * backend serves vyre.limits; say on stderr what it will not enforce. */
static void attach_limits(run_args *a, vyre_backend *b, const char *id) {
  const void *t = NULL;
  vyre_error err = VYRE_ERROR_INIT;
  uint32_t enforced = 0;
  if (VYRE_HOST_HAS(b, get_extension) &&
      b->vt->get_extension(b, VYRE_LIMITS_NAME, VYRE_LIMITS_VERSION, &t, &err) == VYRE_OK && t)
    enforced = ((const vyre_limits_info *)t)->enforced;
  if (!enforced) {
    fprintf(stderr, "vyre run: backend '%s' does not serve %s: --timeout and --max-steps are "
                    "ignored\n", id, VYRE_LIMITS_NAME);
    return;
  }
  if (a->max_steps && !(enforced & VYRE_LIMITS_STEPS))
    fprintf(stderr, "vyre run: backend '%s' has no step count: --max-steps is ignored (use "
                    "--timeout)\n", id);
  if (a->timeout_ns && !(enforced & VYRE_LIMITS_TIMEOUT))
    fprintf(stderr, "vyre run: backend '%s' does not enforce --timeout: it is ignored\n", id);
  memset(&a->limits, 0, sizeof a->limits);
  a->limits.head.struct_size = sizeof a->limits;
  a->limits.head.type = VYRE_EXT_LIMITS;
  a->limits.timeout_ns = a->timeout_ns;
  a->limits.max_steps = a->max_steps;
  a->options.next = &a->limits.head;
}

static int run_run(const cli_command *self, int argc, char **argv) {
  run_args a;
  int rc = parse_args(self, argc, argv, &a);
  if (rc != CLI_OK) return rc;

  vyre_error err = VYRE_ERROR_INIT;
  void *bytes = NULL;
  size_t size = 0;
  vyre_program *prog = NULL;
  vyre_host *host = NULL;
  vyre_backend *b = NULL;
  vyre_outputs *outs = NULL;
  vyre_input inputs[MAX_INPUTS];
  void *owned[MAX_INPUTS] = {0};
  timing_log log = {NULL, 0};

  if (cli_load_program(a.program, &bytes, &size, NULL, &err) != VYRE_OK) {
    rc = cli_fail(self, "%s", err.message);
    goto done;
  }
  if (vyre_program_decode(bytes, size, &prog, &err) != VYRE_OK) {
    rc = cli_fail(self, "%s: %s", a.program, err.message);
    goto done;
  }
  if (a.input_count != prog->input_count) {
    char message[512];
    snprintf(message, sizeof message, "%s takes %u input%s, %u given. Fix: give one --input "
             "FILE, --random SEED[:N], --fill V[:N] or --iota START[:N] per input, in this "
             "order", a.program, prog->input_count, prog->input_count == 1 ? "" : "s",
             a.input_count);
    cli_error_record(CLI_USAGE, message);
    cli_error_prefix(self);
    fprintf(stderr, "%s:\n", message);
    list_inputs(prog, stderr);
    rc = CLI_USAGE;
    goto done;
  }
  for (uint32_t i = 0; i < prog->buffer_count; i++) {
    const vyre_buffer_info *buf = &prog->buffers[i];
    if (buf->input_index < 0) continue;
    uint32_t k = (uint32_t)buf->input_index;
    rc = make_input(self, &a.inputs[k], a.max_input, buf, &inputs[k], &owned[k]);
    if (rc != CLI_OK) goto done;
  }

  if (cli_open_host(&host, &err) != VYRE_OK) {
    rc = cli_fail(self, "%s", err.message);
    goto done;
  }
  vyre_backend_options bo = {sizeof bo, a.device, 0, 0, NULL};
  uint32_t index = 0;
  if (vyre_host_create(host, a.backend, &bo, &b, &index, &err) != VYRE_OK) {
    rc = cli_fail(self, "%s", err.message);
    goto done;
  }
  vyre_host_candidate cand;
  memset(&cand, 0, sizeof cand);
  cand.struct_size = sizeof cand;
  vyre_host_backend_info(host, index, &cand, NULL);
  if (!VYRE_HOST_HAS(b, dispatch) || !VYRE_HOST_HAS(b, outputs_free)) {
    rc = cli_fail(self, "backend '%s' has no dispatch entry (vtable of %u bytes). Fix: pick "
                  "another backend with --backend (see `vyre list`)",
                  cand.id, b->vt->struct_size);
    goto done;
  }
  if (a.timeout_ns || a.max_steps) attach_limits(&a, b, cand.id);
  if (a.timed) {
    log.runs = calloc(a.repeat, sizeof *log.runs);
    if (!log.runs) {
      rc = cli_fail(self, "out of memory for %u timing records", a.repeat);
      goto done;
    }
  }
  vyre_program_ref ref = VYRE_PROGRAM_BYTES(bytes, size);
  for (uint32_t r = 0; r < a.repeat; r++) {
    if (outs) b->vt->outputs_free(b, outs);
    outs = NULL;
    vyre_timing *t = NULL;
    if (a.timed) {
      t = &log.runs[r];
      t->struct_size = sizeof *t;
    }
    vyre_status st = b->vt->dispatch(b, &ref, inputs, prog->input_count, &a.options, &outs, t, &err);
    if (st != VYRE_OK) {
      rc = cli_fail(self, "%s on backend '%s' failed: %s%s", a.program, cand.id, err.message,
                    st == VYRE_UNSUPPORTED && a.options.ulp_budget == 0 &&
                            strstr(err.message, "strict")
                        ? " (vyre run: --ulp N allows an N-ulp bound)"
                        : "");
      goto done;
    }
    if (a.timed) log.count++;
    if (!outs) {
      rc = cli_fail(self, "backend '%s' returned VYRE_OK without outputs (a backend bug). Fix: "
                    "report it; try --backend reference", cand.id);
      goto done;
    }
  }

  if (a.output_raw && (rc = write_raw_outputs(self, a.output_raw, prog, outs)) != CLI_OK)
    goto done;
  if (a.json) {
    char hash[65];
    cj_writer w;
    vyre_program_hash_hex(prog, hash);
    cj_init(&w, stdout);
    cj_object_begin(&w);
    cj_key(&w, "program");
    cj_string(&w, a.program);
    cj_key(&w, "sha256");
    cj_string(&w, hash);
    cj_key(&w, "backend");
    cj_string(&w, cand.id);
    print_outputs_json(&w, prog, outs);
    if (a.timed) print_timing_json(&w, &log);
    cj_object_end(&w);
    cj_end(&w);
  } else {
    printf("backend: %s\n", cand.id);
    print_outputs_text(prog, outs, a.show);
    if (a.timed) print_timing_text(&log);
  }
  rc = fflush(stdout) == 0 ? CLI_OK : CLI_FAIL;

done:
  if (outs) b->vt->outputs_free(b, outs);
  if (b) b->vt->destroy(b);
  vyre_host_close(host);
  for (uint32_t k = 0; k < MAX_INPUTS; k++) free(owned[k]);
  vyre_program_free(prog);
  free(bytes);
  free(log.runs);
  return rc;
}

const cli_command cli_cmd_run = {
    "run",
    "run PROGRAM [--backend ID]\n"
    "           [--input FILE | --random SEED[:N] | --fill V[:N] | --iota START[:N]]...\n"
    "           [--ulp N] [--wg X,Y,Z] [--grid X,Y,Z] [--iterations N] [--device N]\n"
    "           [--timed] [--repeat N] [--json] [--show N] [--output-raw DIR]\n"
    "           [--max-input-bytes N] [--timeout SECONDS] [--max-steps N]",
    "run a program (text .vyre or binary .vyrb) on a backend and print its outputs",
    "PROGRAM is text or binary, told apart by the binary magic (\"VYRP\"); \"-\" reads\n"
    "stdin (as does --input -; only one of them may).  Give one input per input\n"
    "buffer (ro, uniform, rw without the output flag), in declaration order:\n"
    "  --input FILE      the buffer's raw little-endian bytes (\"-\": stdin)\n"
    "  --random SEED[:N] N pseudo-random elements (splitmix64 from SEED): integers\n"
    "                    get random bits, f32/f16/bf16 uniform in [-1, 1), bool 0/1\n"
    "  --fill V[:N]      N copies of V (a number of the buffer's type; true/false)\n"
    "  --iota START[:N]  START, START+1, ... (integers wrap; floats START+k rounded)\n"
    "N is needed only for buffers sized by their input (count 0); for the others\n"
    "it must match the declared count or be left out.\n\n"
    "options:\n"
    "  --backend ID      use this backend (default: VYRE_BACKEND, else the best)\n"
    "  --device N        device ordinal (default 0)\n"
    "  --ulp N           ulp budget for transcendentals (default 0 = strict)\n"
    "  --wg X,Y,Z        override the program's workgroup size\n"
    "  --grid X,Y,Z      override the derived grid\n"
    "  --iterations N    fixpoint launches on the same buffers\n"
    "  --repeat N        dispatch N times (outputs of the last run are printed)\n"
    "  --timed           print wall/device/enqueue/wait time (min/median/mean)\n"
    "  --json            print one JSON object: each output's byte range, its values\n"
    "                    (NaN/inf as strings) and for floats each value's bits\n"
    "  --output-raw DIR  write output k's bytes to DIR/<k>.<name>.bin (a directory:\n"
    "                    not \"-\")\n"
    "  --max-input-bytes N  the most an --input FILE may hold (default 1G; K, M, G, T\n"
    "                    suffixes): a larger file, or an endless one, is an error\n"
    "  --show N          print at most N elements per output (default 64, 0 = all)\n"
    "  --timeout SECONDS fail a dispatch still running SECONDS after it began\n"
    "                    (decimals allowed, e.g. 0.5; default none): \"budget\n"
    "                    exceeded\", exit status 1.  On CUDA the instance is then\n"
    "                    lost (a running kernel cannot be stopped)\n"
    "  --max-steps N     reference backend: fail a dispatch after N steps (an\n"
    "                    invocation started or an instruction executed; default none)\n\n"
    "example:\n"
    "  vyre run examples/saxpy.vyre --fill 2 --iota 0:1024 --fill 1:1024\n\n"
    "exit status:\n"
    "  0  the program ran and its outputs were printed\n"
    "  1  loading, the backend or the dispatch failed (a trap or an exceeded\n"
    "     --timeout or --max-steps included), or a file cannot be read or written\n"
    "  2  the command line is wrong, or the number of inputs is\n",
    run_run,
    NULL,
};
