/* validate_check.c -- the validation layer's verdict: a backend's result against the reference's (bit for bit, floats within the ulp budget), and the replay capsule of a divergence. */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "validate.h"
#include "abi/support/file.h"
#include "abi/support/strbuf.h"
#include "vyre/vyre_support.h"
#include "vyre/vyre_text.h"

/* ------------------------------------------------------------------ */
/* Comparison                                                          */
/* ------------------------------------------------------------------ */

/* Distance in ulps between two floats of one format (sign bit `sign`):
 * 0 for two NaNs (a NaN is a NaN), UINT64_MAX when one is NaN or an
 * infinity and they differ; ±0 are one point.  f32 is compared on the
 * flushed line (docs/semantics.md: a program sees no subnormals), as
 * the conformance harness does. */
static uint64_t ulps(uint64_t a, uint64_t b, uint64_t sign, uint64_t exp, uint64_t mant) {
  int an = (a & exp) == exp && (a & mant), bn = (b & exp) == exp && (b & mant);
  if (an || bn) return an && bn ? 0 : UINT64_MAX;
  if ((a & ~sign) == exp || (b & ~sign) == exp) return a == b ? 0 : UINT64_MAX;
  int64_t x = (a & sign) ? -(int64_t)(a & (sign - 1)) : (int64_t)a;
  int64_t y = (b & sign) ? -(int64_t)(b & (sign - 1)) : (int64_t)b;
  return x > y ? (uint64_t)(x - y) : (uint64_t)(y - x);
}

static uint32_t f32_flushed(uint32_t bits) {
  uint32_t mag = bits & 0x7fffffffu;
  if (mag >= 0x7f800000u) return bits;
  mag = mag < 0x00800000u ? 0 : mag - 0x007fffffu;
  return (bits & 0x80000000u) | mag;
}

static uint64_t float_ulps(uint32_t t, uint64_t a, uint64_t b) {
  if (t == VYRE_T_F32)
    return ulps(f32_flushed((uint32_t)a), f32_flushed((uint32_t)b), 0x80000000u, 0x7f800000u,
                0x007fffffu);
  if (t == VYRE_T_F16) return ulps(a, b, 0x8000u, 0x7c00u, 0x03ffu);
  return ulps(a, b, 0x8000u, 0x7f80u, 0x007fu);
}

static int is_nan(uint32_t t, uint64_t bits) {
  if (t == VYRE_T_F32) return (bits & 0x7fffffffu) > 0x7f800000u;
  if (t == VYRE_T_F16) return (bits & 0x7fffu) > 0x7c00u;
  return (bits & 0x7fffu) > 0x7f80u;
}

static uint64_t le(const uint8_t *p, uint32_t n) {
  uint64_t v = 0;
  for (uint32_t i = 0; i < n; i++) v |= (uint64_t)p[i] << (8 * i);
  return v;
}

/* Whether p has an mma at a float type: its f32 results have a
 * per-element bound only the reference's side channel knows. */
static int float_mma(const vyre_program *p) {
  if (!(p->features & VYRE_FEAT_MMA)) return 0;
  for (uint32_t i = 0; i < p->inst_count; i++)
    if (p->insts[i].op == VYRE_OP_MMA &&
        (p->insts[i].type == VYRE_T_F16 || p->insts[i].type == VYRE_T_BF16))
      return 1;
  return 0;
}

/* Compare one output (buffer b): 1 when equal under the rule. */
static int compare_one(const vyre_program *p, uint32_t b, uint32_t budget, const uint8_t *want,
                       const uint8_t *got, uint64_t size, char *what, size_t what_size) {
  uint32_t t = p->buffers[b].decl.elem_type, esize = vyre_type_size(t);
  int is_float = t == VYRE_T_F32 || t == VYRE_T_F16 || t == VYRE_T_BF16;
  if (esize == 0 || size % esize) esize = 1, is_float = 0, t = VYRE_T_U8;
  uint64_t n = size / esize, first = UINT64_MAX, differing = 0, first_ulps = 0;
  for (uint64_t e = 0; e < n; e++) {
    const uint8_t *a = want + e * esize, *g = got + e * esize;
    if (memcmp(a, g, esize) == 0) continue;
    uint64_t x = le(a, esize), y = le(g, esize);
    uint64_t d = is_float ? float_ulps(t, x, y) : UINT64_MAX;
    /* Without a budget bits must match, but a NaN is a NaN. */
    if (is_float && (budget ? d <= budget : d == 0 && is_nan(t, x))) continue;
    if (first == UINT64_MAX) first = e, first_ulps = d;
    differing++;
  }
  if (first == UINT64_MAX) return 1;
  char extra[64] = "";
  if (is_float && first_ulps != UINT64_MAX)
    snprintf(extra, sizeof extra, " (%" PRIu64 " ulp, budget %u)", first_ulps, budget);
  snprintf(what, what_size,
           "output %s (%s) element %" PRIu64 " (byte %" PRIu64 "): reference 0x%0*" PRIx64
           ", backend 0x%0*" PRIx64 "%s; %" PRIu64 " of %" PRIu64 " elements differ",
           p->buffers[b].name, vyre_type_name(t), first, first * esize, (int)(2 * esize),
           le(want + first * esize, esize), (int)(2 * esize), le(got + first * esize, esize),
           extra, differing, n);
  return 0;
}

int host_validate_compare(host_validate *v, const host_vcall *c, const host_vresult *want,
                          const host_vresult *got, char *what, size_t what_size) {
  const vyre_program *p = c->program;
  if (want->status != got->status ||
      (want->status == VYRE_TRAP && want->native_code != got->native_code)) {
    snprintf(what, what_size, "status: reference %s (code %" PRId64 "), backend %s (code %" PRId64 ")",
             vyre_status_name(want->status), want->native_code, vyre_status_name(got->status),
             got->native_code);
    return 0;
  }
  if (want->status != VYRE_OK) return 1;
  if (want->count != got->count) {
    snprintf(what, what_size, "the reference returned %u outputs, the backend %u", want->count,
             got->count);
    return 0;
  }
  int skip_floats = float_mma(p);
  for (uint32_t b = 0; b < p->buffer_count; b++) {
    int32_t k = p->buffers[b].output_index;
    if (k < 0 || (uint32_t)k >= want->count) continue;
    uint32_t t = p->buffers[b].decl.elem_type;
    if (skip_floats && (t == VYRE_T_F32 || t == VYRE_T_F16 || t == VYRE_T_BF16)) {
      pthread_mutex_lock(&v->lock);
      int said = v->notes & VALIDATE_NOTE_MMA;
      v->notes |= VALIDATE_NOTE_MMA;
      pthread_mutex_unlock(&v->lock);
      if (!said)
        vyre__warn("vyre-host", "validate: backend '%s': the float outputs of programs with a "
                   "float mma are not compared (their per-element bound is the reference's "
                   "own); their other outputs are", v->id);
      continue;
    }
    if (want->size[k] != got->size[k]) {
      snprintf(what, what_size, "output %s: reference %" PRIu64 " bytes, backend %" PRIu64,
               p->buffers[b].name, want->size[k], got->size[k]);
      return 0;
    }
    if (!compare_one(p, b, c->options.ulp_budget, want->data[k], got->data[k], want->size[k],
                     what, what_size))
      return 0;
  }
  return 1;
}

/* ------------------------------------------------------------------ */
/* Capsules                                                            */
/* ------------------------------------------------------------------ */

/* The options and the requirements of the call, as case directives. */
static void options_lines(strbuf *b, const host_vcall *c) {
  const vyre_dispatch_options *o = &c->options;
  vyre__sb_printf(b, ";@ ulp %u\n;@ tolerance %u\n", o->ulp_budget, o->ulp_budget);
  if (o->workgroup[0])
    vyre__sb_printf(b, ";@ workgroup %u %u %u\n", o->workgroup[0], o->workgroup[1] ? o->workgroup[1] : 1,
                    o->workgroup[2] ? o->workgroup[2] : 1);
  if (o->grid[0])
    vyre__sb_printf(b, ";@ grid %u %u %u\n", o->grid[0], o->grid[1] ? o->grid[1] : 1,
                    o->grid[2] ? o->grid[2] : 1);
  if (o->fixpoint_iterations) vyre__sb_printf(b, ";@ fixpoint %u\n", o->fixpoint_iterations);
  uint64_t caps = c->program->required_caps | (o->fixpoint_iterations > 1 ? VYRE_CAP_FIXPOINT : 0);
  if (caps) {
    vyre__sb_printf(b, ";@ requires");
    for (uint32_t bit = 0; bit < 64; bit++)
      if (((caps >> bit) & 1) && vyre_capability_name(bit))
        vyre__sb_printf(b, " %s", vyre_capability_name(bit));
    vyre__sb_append(b, "\n", 1);
  }
}

/* The capsule's directory (the parent of path) when it is $VYRE_VALIDATE_DIR. */
static vyre_status make_dir(const host_validate *v, const host_vcall *c, vyre_error *err) {
  if (c->capsule_path || mkdir(v->dir, 0777) == 0 || errno == EEXIST) return VYRE_OK;
  return vyre_error_set(err, VYRE_IO, errno,
                        "cannot create the capsule directory %s: %s. Fix: create it, or set "
                        "VYRE_VALIDATE_DIR to a writable directory",
                        v->dir, strerror(errno));
}

vyre_status host_validate_capsule(const host_validate *v, const host_vcall *c,
                                  const host_vresult *want, const char *what, const char *path,
                                  vyre_error *err) {
  const vyre_program *p = c->program;
  char *text = NULL;
  vyre_status st = vyre_text_disassemble(p->bytes, (size_t)p->size, &text, err);
  if (st != VYRE_OK) return st;
  char hash[65];
  vyre_hex(p->sha256, 32, hash);
  strbuf b = {0};
  vyre__sb_printf(&b, "; vyre validation replay capsule (docs/host.md, \"Validation layer\")\n"
                      "; re-run: vyre conform --replay THIS_FILE --backend %s\n"
                      ";@ capsule 1\n;@ case %.16s\n;@ category validate\n"
                      ";@ origin libvyre-host validation of %s\n;@ backend %s %s\n",
                  v->id, hash, c->entry, v->id, v->version);
  vyre__sb_puts(&b, ";@ mismatch ");
  for (const char *s = what; *s; s++) vyre__sb_append(&b, *s == '\n' ? " " : s, 1);
  vyre__sb_printf(&b, "\n;@ note expectation: the reference backend %s\n;@ program-sha256 %s\n",
                  v->ref_version, hash);
  options_lines(&b, c);
  if (want->status == VYRE_TRAP)
    vyre__sb_printf(&b, ";@ expect trap %" PRId64 "\n", want->native_code);
  else
    vyre__sb_printf(&b, ";@ expect ok\n");
  for (uint32_t i = 0; i < p->buffer_count; i++) {
    int32_t k = p->buffers[i].input_index;
    if (k >= 0 && (uint32_t)k < c->input_count)
      vyre__sb_hex_lines(&b, "input", p->buffers[i].name, c->inputs[k].data, c->inputs[k].size);
  }
  for (uint32_t i = 0; want->status == VYRE_OK && i < p->buffer_count; i++) {
    int32_t k = p->buffers[i].output_index;
    if (k >= 0 && (uint32_t)k < want->count)
      vyre__sb_hex_lines(&b, "expect-output", p->buffers[i].name, want->data[k], want->size[k]);
  }
  size_t n = strlen(text);
  vyre__sb_printf(&b, "\n%s%s", text, n && text[n - 1] == '\n' ? "" : "\n");
  free(text);
  if (b.failed) {
    vyre__sb_free(&b);
    return vyre_error_set(err, VYRE_OUT_OF_MEMORY, 0, "writing a capsule: out of memory. "
                          "Fix: free memory");
  }
  st = make_dir(v, c, err);
  if (st == VYRE_OK) st = vyre__file_write_atomic(path, b.data, b.len, 0666, err);
  vyre__sb_free(&b);
  return st;
}
