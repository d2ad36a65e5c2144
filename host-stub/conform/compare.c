/* compare.c -- the comparison rules: integers and bools byte for byte, floats bit-exact or within a ULP tolerance, NaN and infinities exact, float-MMA elements within the reference's bound. */
#include <inttypes.h>
#include <math.h>
#include <string.h>

#include "conform.h"
#include "abi/support/bits.h"
#include "host-stub/ref/tolerance.h"

/* Map a non-NaN float's bits (sign bit `sign`) onto a line where adjacent
 * representable values are adjacent integers and ±0 both sit at 0. */
static int64_t ordered(uint64_t bits, uint64_t sign) {
  return (bits & sign) ? -(int64_t)(bits & (sign - 1)) : (int64_t)bits;
}

static uint64_t ulp_distance(uint64_t a, uint64_t b, uint64_t sign, uint64_t exp_mask,
                             uint64_t mant_mask) {
  int a_nan = (a & exp_mask) == exp_mask && (a & mant_mask);
  int b_nan = (b & exp_mask) == exp_mask && (b & mant_mask);
  if (a_nan || b_nan) return a == b ? 0 : UINT64_MAX;
  int a_inf = (a & ~sign) == exp_mask, b_inf = (b & ~sign) == exp_mask;
  if (a_inf || b_inf) return a == b ? 0 : UINT64_MAX;
  int64_t x = ordered(a, sign), y = ordered(b, sign);
  return x > y ? (uint64_t)(x - y) : (uint64_t)(y - x);
}

/* f32 values a program sees have no subnormals (docs/semantics.md): on
 * that line the zeros and 2^-126 are neighbours, so a result within one
 * ulp of the boundary that one backend flushes and another rounds up to
 * 2^-126 is 1 ulp apart, not 2^23.  Subnormal bits (which only raw memory
 * holds) sit with the zero of their sign. */
static uint32_t f32_on_flushed_line(uint32_t bits) {
  uint32_t mag = bits & 0x7fffffffu;
  if (mag >= 0x7f800000u) return bits; /* inf, NaN: compared exactly */
  mag = mag < 0x00800000u ? 0 : mag - 0x007fffffu;
  return (bits & 0x80000000u) | mag;
}

uint64_t cf_ulp_distance_f32(uint32_t a, uint32_t b) {
  return ulp_distance(f32_on_flushed_line(a), f32_on_flushed_line(b), 0x80000000u, 0x7f800000u,
                      0x007fffffu);
}
uint64_t cf_ulp_distance_f16(uint16_t a, uint16_t b) {
  return ulp_distance(a, b, 0x8000u, 0x7c00u, 0x03ffu);
}
uint64_t cf_ulp_distance_bf16(uint16_t a, uint16_t b) {
  return ulp_distance(a, b, 0x8000u, 0x7f80u, 0x007fu);
}

uint32_t cf_output_type(const vyre_program *p, uint32_t index, uint32_t *buffer) {
  for (uint32_t i = 0; i < p->buffer_count; i++) {
    if (p->buffers[i].output_index == (int32_t)index) {
      if (buffer) *buffer = i;
      return p->buffers[i].decl.elem_type;
    }
  }
  if (buffer) *buffer = UINT32_MAX;
  return VYRE_T_U8;
}

static uint64_t get_le(const uint8_t *p, uint32_t n) {
  uint64_t v = 0;
  for (uint32_t i = 0; i < n; i++) v |= (uint64_t)p[i] << (8 * i);
  return v;
}

/* "0x3fc00000 (1.5)" for one element of type t. */
static void describe(char *out, size_t size, uint32_t t, uint64_t v) {
  switch (t) {
  case VYRE_T_F32: {
    uint32_t u = (uint32_t)v;
    snprintf(out, size, "0x%08x (%.9g)", u, (double)vyre__f32_from_bits(u));
    return;
  }
  case VYRE_T_F16:
  case VYRE_T_BF16: {
    uint32_t u = t == VYRE_T_F16 ? vyre_f16_to_f32((uint16_t)v) : vyre_bf16_to_f32((uint16_t)v);
    snprintf(out, size, "0x%04x (%.6g)", (unsigned)v, (double)vyre__f32_from_bits(u));
    return;
  }
  case VYRE_T_I8: snprintf(out, size, "%d", (int8_t)v); return;
  case VYRE_T_I16: snprintf(out, size, "%d", (int16_t)v); return;
  case VYRE_T_I32: snprintf(out, size, "%" PRId32 " (0x%08" PRIx32 ")", (int32_t)v, (uint32_t)v); return;
  case VYRE_T_I64: snprintf(out, size, "%" PRId64 " (0x%016" PRIx64 ")", (int64_t)v, v); return;
  case VYRE_T_BOOL: snprintf(out, size, "%s (0x%08" PRIx32 ")", v ? "true" : "false", (uint32_t)v); return;
  default: snprintf(out, size, "%" PRIu64 " (0x%" PRIx64 ")", v, v); return;
  }
}

/*
 * An f32 element with an MMA bound (docs/semantics.md, "Matrix
 * multiply-accumulate"): the verdict is the reference's own rule
 * (ref_mma_within: a bound of +inf, partial sums that may overflow,
 * accepts anything, NaN included; else a NaN matches any NaN, an
 * infinity matches only itself, and |got - want| <= bound).  Returns 1 when within; else 0
 * with *over (how far beyond the bound; +inf for a NaN or an infinity
 * that differs) and a note for the report.
 */
static int within_bound(uint32_t want, uint32_t got, double bound, double *over, char *note,
                        size_t size) {
  if (ref_mma_within(got, want, bound)) return 1;
  double w = (double)vyre__f32_from_bits(want), g = (double)vyre__f32_from_bits(got);
  *over = INFINITY;
  if (isnan(w)) snprintf(note, size, ", the MMA result is NaN (any NaN matches)");
  else if (isnan(g)) snprintf(note, size, ", a NaN where the MMA result is not one (bound %.9g)", bound);
  else if (isinf(w) || isinf(g)) snprintf(note, size, ", an MMA infinity must be equal (bound %.9g)", bound);
  else {
    double d = fabs(g - w);
    *over = d - bound;
    snprintf(note, size, ", |difference| %.9g > MMA bound %.9g by %.9g", d, bound, *over);
  }
  return 0;
}

/* How one output is compared: its element type, where its returned range
 * starts, the ULP tolerance, the MMA bounds (one per 4-byte element,
 * NULL when none). */
typedef struct rule {
  uint32_t t;
  uint64_t offset;
  uint32_t tolerance;
  const double *bound;
  uint64_t bound_count;
} rule;

static uint64_t float_ulps(uint32_t t, uint64_t x, uint64_t y) {
  return t == VYRE_T_F32 ? cf_ulp_distance_f32((uint32_t)x, (uint32_t)y)
         : t == VYRE_T_F16 ? cf_ulp_distance_f16((uint16_t)x, (uint16_t)y)
                           : cf_ulp_distance_bf16((uint16_t)x, (uint16_t)y);
}

/*
 * Compare `got` with `want` (bytes of one output under rule r).  Returns 1
 * when equal under the rule; else fills diff (kind, element, byte, ulps,
 * bound, over, differing, text) and returns 0.
 */
static int compare_bytes(const rule *r, const uint8_t *want, const uint8_t *got, uint64_t size,
                         const char *label, cf_diff *diff) {
  uint32_t t = r->t, esize = vyre_type_size(t);
  int is_float = t == VYRE_T_F32 || t == VYRE_T_F16 || t == VYRE_T_BF16;
  const double *bound = t == VYRE_T_F32 ? r->bound : NULL;
  if (esize == 0 || r->offset % esize || size % esize) {
    /* A byte range that cuts elements: bytes are all one can compare. */
    esize = 1;
    is_float = 0;
    t = VYRE_T_U8;
    bound = NULL;
  }
  uint64_t n = size / esize, first = UINT64_MAX, first_ulps = 0;
  uint32_t differing = 0;
  double first_bound = -1.0, first_over = 0.0;
  char note[192] = "";
  for (uint64_t e = 0; e < n; e++) {
    const uint8_t *a = want + e * esize, *b = got + e * esize;
    if (memcmp(a, b, esize) == 0) continue;
    uint64_t ulps = UINT64_MAX, x = get_le(a, esize), y = get_le(b, esize);
    double eb = bound && e < r->bound_count ? bound[e] : -1.0, over = 0.0;
    char why[192] = "";
    if (eb >= 0) {
      if (within_bound((uint32_t)x, (uint32_t)y, eb, &over, why, sizeof why)) continue;
    } else if (is_float) {
      ulps = float_ulps(t, x, y);
      if (r->tolerance > 0 && ulps <= r->tolerance) continue;
    }
    if (first == UINT64_MAX) {
      first = e;
      first_ulps = ulps;
      first_bound = eb;
      first_over = over;
      snprintf(note, sizeof note, "%s", why);
    }
    if (differing < UINT32_MAX) differing++;
  }
  if (first == UINT64_MAX) return 1;
  char ws[96], gs[96];
  describe(ws, sizeof ws, t, get_le(want + first * esize, esize));
  describe(gs, sizeof gs, t, get_le(got + first * esize, esize));
  if (is_float && first_bound < 0) {
    if (first_ulps == UINT64_MAX) snprintf(note, sizeof note, ", not comparable (NaN/inf/sign)");
    else if (r->tolerance == 0) snprintf(note, sizeof note, ", %" PRIu64 " ulp, bits must match", first_ulps);
    else snprintf(note, sizeof note, ", %" PRIu64 " ulp > tolerance %u", first_ulps, r->tolerance);
  }
  diff->kind = CF_DIFF_VALUE;
  diff->element = first;
  diff->byte = first * esize;
  diff->ulps = first_ulps;
  diff->bound = first_bound;
  diff->over = first_over;
  diff->differing = differing;
  snprintf(diff->text, sizeof diff->text,
           "%s (%s) element %" PRIu64 " (byte %" PRIu64 "): expected %s, got %s%s; %u of %" PRIu64
           " elements differ",
           label, vyre_type_name(t), first, first * esize, ws, gs, note, differing, n);
  return 0;
}

static void status_text(char *out, size_t size, const cf_result *r) {
  if (r->status == VYRE_TRAP)
    snprintf(out, size, "%s (code %" PRId64 ")", vyre_status_name(r->status), r->native_code);
  else
    snprintf(out, size, "%s", vyre_status_name(r->status));
}

static int compare_outputs(const cf_case *c, const cf_result *want, const cf_result *got,
                           cf_diff *diff, const char *want_name, const char *got_name) {
  const vyre_program *p = c->decoded;
  if (want->output_count != got->output_count) {
    diff->kind = CF_DIFF_COUNT;
    snprintf(diff->text, sizeof diff->text, "%s returned %u outputs, %s %u", want_name,
             want->output_count, got_name, got->output_count);
    return 0;
  }
  for (uint32_t o = 0; o < want->output_count; o++) {
    uint32_t bi;
    uint32_t t = cf_output_type(p, o, &bi);
    const char *bname = bi < p->buffer_count ? p->buffers[bi].name : "?";
    diff->output = o;
    diff->buffer = bi;
    if (want->output[o].size != got->output[o].size) {
      diff->kind = CF_DIFF_SIZE;
      snprintf(diff->text, sizeof diff->text, "output %s: %s returned %" PRIu64 " bytes, %s %" PRIu64,
               bname, want_name, want->output[o].size, got_name, got->output[o].size);
      return 0;
    }
    uint64_t offset = 0;
    if (bi < p->buffer_count && (p->buffers[bi].decl.flags & VYRE_BUF_OUT_RANGE))
      offset = p->buffers[bi].decl.out_range_offset;
    char label[96];
    snprintf(label, sizeof label, "output %s", bname);
    rule r = {t, offset, c->tolerance, want->bound[o], want->bound_count[o]};
    if (!compare_bytes(&r, want->output[o].bytes, got->output[o].bytes, want->output[o].size,
                       label, diff))
      return 0;
  }
  return 1;
}

static void diff_init(cf_diff *diff) {
  memset(diff, 0, sizeof *diff);
  diff->output = diff->buffer = UINT32_MAX;
  diff->bound = -1.0;
}

int cf_compare(const cf_case *c, const cf_result *want, const cf_result *got, cf_diff *diff) {
  diff_init(diff);
  int codes_matter = c->expect_code_set;
  if (want->status != got->status ||
      (want->status == VYRE_TRAP && codes_matter && want->native_code != got->native_code)) {
    char ws[96], gs[96];
    status_text(ws, sizeof ws, want);
    status_text(gs, sizeof gs, got);
    diff->kind = CF_DIFF_STATUS;
    snprintf(diff->text, sizeof diff->text, "status: reference %s, backend %s%s%.400s", ws, gs,
             got->status != VYRE_OK && got->message[0] ? ": " : "",
             got->status != VYRE_OK ? got->message : "");
    return 0;
  }
  if (want->status != VYRE_OK) return 1;
  return compare_outputs(c, want, got, diff, "the reference", "the backend");
}

int cf_check_refused(const cf_result *got, cf_diff *diff) {
  diff_init(diff);
  if (got->status == VYRE_UNSUPPORTED) return 1;
  char gs[96];
  status_text(gs, sizeof gs, got);
  diff->kind = CF_DIFF_STATUS;
  snprintf(diff->text, sizeof diff->text,
           "status: expected UNSUPPORTED (a strict request with a transcendental on a backend "
           "that does not claim correctly_rounded), got %s%s%.400s",
           gs, got->message[0] ? ": " : "", got->message);
  return 0;
}

int cf_check_expected(const cf_case *c, const cf_result *got, cf_diff *diff) {
  return cf_check_expected_bounded(c, got, NULL, diff);
}

int cf_check_expected_bounded(const cf_case *c, const cf_result *got, const cf_result *bounds,
                              cf_diff *diff) {
  diff_init(diff);
  if (got->status != c->expect ||
      (c->expect == VYRE_TRAP && c->expect_code_set && got->native_code != c->expect_code)) {
    char gs[96];
    status_text(gs, sizeof gs, got);
    diff->kind = CF_DIFF_STATUS;
    if (c->expect == VYRE_TRAP && c->expect_code_set)
      snprintf(diff->text, sizeof diff->text, "status: expected %s (code %" PRId64 "), got %s%s%.400s",
               vyre_status_name(c->expect), c->expect_code, gs, got->message[0] ? ": " : "",
               got->message);
    else
      snprintf(diff->text, sizeof diff->text, "status: expected %s, got %s%s%.400s",
               vyre_status_name(c->expect), gs, got->message[0] ? ": " : "", got->message);
    return 0;
  }
  if (got->status != VYRE_OK) return 1;
  const vyre_program *p = c->decoded;
  for (uint32_t i = 0; i < p->buffer_count; i++) {
    if (!c->golden[i].present) continue;
    int32_t o = p->buffers[i].output_index;
    diff->output = (uint32_t)o;
    diff->buffer = i;
    if (o < 0 || (uint32_t)o >= got->output_count) {
      diff->kind = CF_DIFF_COUNT;
      snprintf(diff->text, sizeof diff->text, "output %s is missing", p->buffers[i].name);
      return 0;
    }
    if (got->output[o].size != c->golden[i].size) {
      diff->kind = CF_DIFF_SIZE;
      snprintf(diff->text, sizeof diff->text,
               "output %s: expected %" PRIu64 " bytes (expect-output), got %" PRIu64,
               p->buffers[i].name, c->golden[i].size, got->output[o].size);
      return 0;
    }
    uint64_t offset = (p->buffers[i].decl.flags & VYRE_BUF_OUT_RANGE)
                          ? p->buffers[i].decl.out_range_offset : 0;
    char label[96];
    snprintf(label, sizeof label, "output %s vs expect-output", p->buffers[i].name);
    /* A golden of a float-MMA element holds within the reference's bound. */
    const cf_result *br = got->bound[o] ? got : bounds;
    rule r = {p->buffers[i].decl.elem_type, offset, c->tolerance, br ? br->bound[o] : NULL,
              br ? br->bound_count[o] : 0};
    if (!compare_bytes(&r, c->golden[i].bytes, got->output[o].bytes, c->golden[i].size, label,
                       diff))
      return 0;
  }
  return 1;
}
