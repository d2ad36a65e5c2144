/* emit.c -- the emitter under every lowering file: the line formatter, register and label names, type and f32 helpers, and the bounds facts. */
#include <stdlib.h>
#include <string.h>

#include "internal.h"

/* ------------------------------------------------------------------ */
/* Emission: a small formatter (vsnprintf costs ~10x more per line)     */
/* ------------------------------------------------------------------ */
static char *utoa_rev(char *end, uint64_t v, unsigned base) {
  static const char digits[] = "0123456789abcdef";
  char *s = end;
  do {
    *--s = digits[v % base];
    v /= base;
  } while (v);
  return s;
}

/* Write one numeric or char conversion (%u %d %x %X %U %c) at o; returns
 * the new end, or NULL for another spec.  %x and %X are PTX hex immediates,
 * written with all 8 / 16 digits. */
static char *put_conv(char *o, char spec, va_list *ap) {
  static const char hexd[] = "0123456789abcdef";
  char num[24], *end = num + sizeof num, *s;
  switch (spec) {
  case 'u':
    s = utoa_rev(end, va_arg(*ap, unsigned), 10);
    break;
  case 'U':
    s = utoa_rev(end, va_arg(*ap, uint64_t), 10);
    break;
  case 'd': {
    int v = va_arg(*ap, int);
    if (v < 0) *o++ = '-';
    s = utoa_rev(end, v < 0 ? (uint64_t)(-(int64_t)v) : (uint64_t)v, 10);
    break;
  }
  case 'x': {
    unsigned v = va_arg(*ap, unsigned);
    *o++ = '0';
    *o++ = 'x';
    for (int k = 0; k < 8; k++) *o++ = hexd[(v >> (28 - 4 * k)) & 15u];
    return o;
  }
  case 'X': {
    uint64_t v = va_arg(*ap, uint64_t);
    *o++ = '0';
    *o++ = 'x';
    for (int k = 0; k < 16; k++) *o++ = hexd[(v >> (60 - 4 * k)) & 15u];
    return o;
  }
  case 'c': *o++ = (char)va_arg(*ap, int); return o;
  default: return NULL;
  }
  while (s < end) *o++ = *s++;
  return o;
}

/* Format one line into `out` (at most CG_LINE_MAX - 1 bytes; longer text is
 * cut, which no PTX line comes near).  Returns the length. */
#define CG_LINE_MAX 1024
static size_t vformat(const cg_ctx *c, char *out, const char *fmt, va_list *ap) {
  /* Format strings are short literals and %s arguments are register names
   * or mnemonics: only %s is bounded, once per argument. */
  char *o = out, *const stop = out + CG_LINE_MAX - 80;
  for (const char *f = fmt; *f; f++) {
    if (*f != '%') {
      *o++ = *f;
      continue;
    }
    if (f[1] == 's') {
      const char *str = va_arg(*ap, const char *);
      f++;
      if (str >= c->ring[0] && str < c->ring[CG_RING] && o + 32 < stop) {
        /* A register name from the ring: its length is in the slot's last
         * byte and the slot is 48 bytes, so copy a fixed 32 and advance. */
        memcpy(o, str, 32);
        o += (unsigned char)str[sizeof c->ring[0] - 1];
        continue;
      }
      char *lim = stop - 64 > o ? stop - 64 : o;
      while (*str && o < lim) *o++ = *str++;
      continue;
    }
    char spec = *++f;
    char *next = spec == '%' ? NULL : put_conv(o, spec, ap);
    if (next) {
      o = next;
    } else if (spec == '%') {
      *o++ = '%';
    } else {
      f--; /* never used: keep the '%' literally */
      *o++ = '%';
    }
  }
  return (size_t)(o - out);
}

/* ---- The fast path: each format string is parsed once per call into
 * literal segments (kept padded, so they copy in fixed 16-byte moves) and
 * conversions. */
#define CG_FMT_SLOTS 256
#define CG_FMT_PARTS 16
#define CG_FMT_TEXT 192
struct cg_fmt {
  const char *fmt; /* the key: format strings are literals with fixed addresses */
  uint8_t nparts;
  uint8_t off[CG_FMT_PARTS], len[CG_FMT_PARTS];
  char spec[CG_FMT_PARTS]; /* conversion after each literal; 0 after the last */
  char text[CG_FMT_TEXT + 16];
};

static const cg_fmt *fmt_parse(cg_ctx *c, const char *fmt) {
  if (!c->fmts) {
    c->fmts = calloc(CG_FMT_SLOTS, sizeof *c->fmts);
    if (!c->fmts) return NULL;
  }
  size_t h = ((uintptr_t)fmt >> 3) % CG_FMT_SLOTS;
  for (size_t probe = 0; probe < CG_FMT_SLOTS / 2; probe++, h = (h + 1) % CG_FMT_SLOTS) {
    cg_fmt *e = &c->fmts[h];
    if (e->fmt == fmt) return e;
    if (e->fmt) continue;
    /* New entry. */
    size_t t = 0;
    uint8_t n = 0, start = 0;
    for (const char *f = fmt;; f++) {
      if (*f && *f != '%') {
        if (t >= CG_FMT_TEXT) return NULL;
        e->text[t++] = *f;
        continue;
      }
      if (n >= CG_FMT_PARTS) return NULL;
      e->off[n] = start;
      e->len[n] = (uint8_t)(t - start);
      if (!*f) {
        e->spec[n++] = 0;
        break;
      }
      e->spec[n++] = *++f;
      if (!*f) return NULL;
      start = (uint8_t)t;
    }
    e->nparts = n;
    e->fmt = fmt;
    return e;
  }
  return NULL;
}

/* The arguments come by pointer, not as a va_copy: copying the va_list
 * right after va_start stalls on store forwarding (a quarter of this
 * function's time when it copied). */
static size_t format_fast(const cg_ctx *c, const cg_fmt *e, char *out, va_list *ap) {
  char *o = out;
  /* Held in locals: stores through char * may alias *e, which would make
   * the compiler reload them after every 16-byte move. */
  const uint8_t nparts = e->nparts;
  for (uint8_t k = 0; k < nparts; k++) {
    const char *lit = e->text + e->off[k];
    const uint8_t len = e->len[k];
    for (uint8_t done = 0; done < len; done += 16) memcpy(o + done, lit + done, 16);
    o += len;
    char spec = e->spec[k];
    if (spec == 0) break;
    if (spec == 's') {
      const char *str = va_arg(*ap, const char *);
      if (str >= c->ring[0] && str < c->ring[CG_RING]) {
        /* A ring name: length in the slot's last byte, 48-byte slot. */
        memcpy(o, str, 32);
        o += (unsigned char)str[sizeof c->ring[0] - 1];
      } else if (c->vname && str >= c->vname[0] && str < c->vname[c->n]) {
        /* A cached value name: 16-byte slot, length in its last byte. */
        memcpy(o, str, 16);
        o += (unsigned char)str[15];
      } else {
        /* Mnemonics and type suffixes: a few bytes, cheaper copied inline
         * than through strnlen and memcpy calls. */
        for (size_t l = 0; l < 256 && str[l]; l++) *o++ = str[l];
      }
      continue;
    }
    char *next = put_conv(o, spec, ap);
    if (next) o = next;
    else *o++ = spec; /* %% */
  }
  return (size_t)(o - out);
}

/* Room for one line: the literal text (< 192 bytes) plus at most 16
 * conversions of at most 256 bytes each stays far below this. */
#define CG_LINE_ROOM (CG_FMT_TEXT + 16 + CG_FMT_PARTS * 264)

static void emit_line(cg_ctx *c, int indent, const char *fmt, va_list *ap) {
  const cg_fmt *e = fmt_parse(c, fmt);
  strbuf *sb = &c->body;
  /* vyre__sb_room's test inline: the buffer is sized up front, so it holds. */
  char *o = sb->len + CG_LINE_ROOM + 3 <= sb->cap && !sb->failed ? sb->data + sb->len
                                                                  : vyre__sb_room(sb, CG_LINE_ROOM + 2);
  if (!o) return; /* the strbuf remembers the failure */
  size_t n = 0;
  if (indent) o[n++] = '\t';
  if (e) {
    n += format_fast(c, e, o + n, ap);
  } else {
    char line[CG_LINE_MAX];
    size_t l = vformat(c, line, fmt, ap);
    memcpy(o + n, line, l);
    n += l;
  }
  o[n++] = '\n';
  o[n] = '\0'; /* vyre__sb_commit's work, inline */
  sb->len += n;
}

void cg_emit(cg_ctx *c, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  emit_line(c, 1, fmt, &ap);
  va_end(ap);
}

void cg_line(cg_ctx *c, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  emit_line(c, 0, fmt, &ap);
  va_end(ap);
}

vyre_status cg_fail(cg_ctx *c, vyre_status st, const char *fmt, ...) {
  if (c->st) return c->st;
  va_list ap;
  va_start(ap, fmt);
  vyre_error_vset(c->err, st, 0, fmt, ap);
  va_end(ap);
  c->st = st;
  return st;
}

/* ------------------------------------------------------------------ */
/* Register names                                                      */
/* ------------------------------------------------------------------ */
/* "prefix<k>" NUL-terminated at out; returns its length.  Register
 * numbers of the elementwise copies run to five digits: two digits a step
 * from a table, the count from comparisons. */
static size_t put_name(char *out, const char *prefix, uint32_t k) {
  static const char pairs[] = "00010203040506070809101112131415161718192021222324"
                              "25262728293031323334353637383940414243444546474849"
                              "50515253545556575859606162636465666768697071727374"
                              "75767778798081828384858687888990919293949596979899";
  size_t n = 0;
  while (prefix[n]) {
    out[n] = prefix[n];
    n++;
  }
  uint32_t digits = k < 10u ? 1 : k < 100u ? 2 : k < 1000u ? 3 : k < 10000u ? 4 : 5;
  for (uint32_t t = k / 100000u; t; t /= 10u) digits++;
  n += digits;
  out[n] = '\0';
  char *at = out + n;
  for (; k >= 100u; k /= 100u) {
    at -= 2;
    memcpy(at, pairs + 2u * (k % 100u), 2);
  }
  if (k >= 10u) memcpy(at - 2, pairs + 2u * k, 2);
  else at[-1] = (char)('0' + k);
  return n;
}

const char *cg_name(cg_ctx *c, const char *prefix, uint32_t k) {
  char *out = c->ring[c->ring_i++ % CG_RING];
  out[sizeof c->ring[0] - 1] = (char)put_name(out, prefix, k); /* the length, for the formatter */
  return out;
}

int cg_is64(uint32_t t) { return t == VYRE_T_U64 || t == VYRE_T_I64; }

const char *cg_ity(uint32_t t) {
  switch (t) {
  case VYRE_T_I32: return "s32";
  case VYRE_T_U64: return "u64";
  case VYRE_T_I64: return "s64";
  case VYRE_T_F32: return "f32";
  default: return "u32";
  }
}

const char *cg_bty(uint32_t t) {
  if (t == VYRE_T_BOOL) return "pred";
  return cg_is64(t) ? "b64" : "b32";
}

static const char *val_prefix(uint32_t t) {
  if (t == VYRE_T_BOOL) return "%p";
  return cg_is64(t) ? "%w" : "%v";
}

const char *cg_val(cg_ctx *c, uint32_t v) {
  uint32_t copy = c->copy;
  if (c->mode == CG_MODE_VEC && c->dep && !c->dep[v]) copy = 0;
  if (copy == 0 && c->vname) {
    /* Copy 0 names are made once and kept (most operands are copy 0); the
     * slot's last byte holds the length, for the formatter. */
    char *cached = c->vname[v];
    if (!cached[0]) /* "%v" and 10 digits at most: it fits */
      cached[15] = (char)put_name(cached, val_prefix(c->p->value_type[v]), v);
    return cached;
  }
  return cg_name(c, val_prefix(c->p->value_type[v]), copy * c->n + v);
}

const char *cg_local(cg_ctx *c, uint32_t slot) {
  uint32_t t = c->p->local_types[slot];
  const char *pre = t == VYRE_T_BOOL ? "%lp" : cg_is64(t) ? "%lw" : "%lv";
  return cg_name(c, pre, c->copy * c->p->local_count + slot);
}

const char *cg_t32(cg_ctx *c) { return cg_name(c, "%t", c->nt32++); }
const char *cg_t64(cg_ctx *c) { return cg_name(c, "%u", c->nt64++); }
const char *cg_tp(cg_ctx *c) { return cg_name(c, "%q", c->ntp++); }
const char *cg_t16(cg_ctx *c) { return cg_name(c, "%h", c->nt16++); }
const char *cg_tf(cg_ctx *c) { return cg_name(c, "%fa", c->ntf++); }
uint32_t cg_new_label(cg_ctx *c) { return c->label++; }

const char *cg_vpred(cg_ctx *c) {
  return c->vpred == CG_NONE ? NULL : cg_name(c, "%q", c->vpred);
}

const char *cg_len(cg_ctx *c, uint32_t b) {
  const vyre_buffer_info *bi = &c->p->buffers[b];
  if (bi->decl.count) {
    char *out = c->ring[c->ring_i++ % CG_RING];
    char num[12], *end = num + sizeof num, *s = utoa_rev(end, bi->decl.count, 10);
    memcpy(out, s, (size_t)(end - s));
    out[end - s] = '\0';
    out[sizeof c->ring[0] - 1] = (char)(end - s);
    return out;
  }
  return cg_name(c, "%len", b);
}

/* ------------------------------------------------------------------ */
/* Facts: what the enclosing control flow proves about an index         */
/* ------------------------------------------------------------------ */
/* A key equal for values that are provably equal. */
static uint32_t canon(cg_ctx *c, uint32_t v) {
  const vyre_inst *in = &c->p->insts[v];
  switch (in->op) {
  case VYRE_OP_INVOCATION_ID: return 0x81000000u | in->mod;
  case VYRE_OP_LOCAL_ID: return 0x82000000u | in->mod;
  case VYRE_OP_WORKGROUP_ID: return 0x83000000u | in->mod;
  case VYRE_OP_BUF_LEN: return 0x84000000u | in->a;
  case VYRE_OP_LOCAL_GET:
    if (c->p->local_types[in->a] == VYRE_T_U32 && c->is_counter && c->is_counter[in->a])
      return 0x85000000u | in->a;
    return v;
  default: return v;
  }
}

static void push_fact(cg_ctx *c, uint32_t key_value, uint32_t bound) {
  if (c->nfacts >= CG_MAX_FACTS) return; /* facts only remove checks: dropping one is safe */
  c->facts[c->nfacts].key = canon(c, key_value);
  c->facts[c->nfacts].bound = bound;
  c->nfacts++;
}

/* Facts that hold where `cond` is true (negated 0) or false (negated 1):
 * x < n from a u32 comparison (x < n, n > x; where false !(x >= n),
 * !(n <= x)), through && where true, through || and ! where false. */
static void facts_from(cg_ctx *c, uint32_t cond, int negated, int depth) {
  const vyre_inst *in = &c->p->insts[cond];
  if (depth > 8) return;
  uint16_t logical = negated ? VYRE_OP_LOGICAL_OR : VYRE_OP_LOGICAL_AND;
  uint16_t bitwise = negated ? VYRE_OP_OR : VYRE_OP_AND;
  if (in->op == logical || (in->op == bitwise && in->type == VYRE_T_BOOL)) {
    facts_from(c, in->a, negated, depth + 1);
    facts_from(c, in->b, negated, depth + 1);
    return;
  }
  if (negated && in->op == VYRE_OP_NOT) {
    facts_from(c, in->a, 0, depth + 1);
    return;
  }
  uint16_t below = negated ? VYRE_OP_GE : VYRE_OP_LT, above = negated ? VYRE_OP_LE : VYRE_OP_GT;
  if (in->op != below && in->op != above) return;
  if (c->p->value_type[in->a] != VYRE_T_U32) return;
  if (in->op == below) push_fact(c, in->a, in->b);
  else push_fact(c, in->b, in->a);
}

void cg_facts_from(cg_ctx *c, uint32_t cond, int negated) { facts_from(c, cond, negated, 0); }

int cg_const_u32(const cg_ctx *c, uint32_t v, uint32_t *out) {
  const vyre_inst *in = &c->p->insts[v];
  if (in->op != VYRE_OP_CONST || in->type != VYRE_T_U32) return 0;
  *out = in->a;
  return 1;
}

/* Is `bound` <= the element count of buffer b at every dispatch? */
static int bound_fits(cg_ctx *c, uint32_t bound, uint32_t b) {
  const vyre_program *p = c->p;
  uint32_t count = p->buffers[b].decl.count, k;
  const vyre_inst *bi = &p->insts[bound];
  if (bi->op == VYRE_OP_BUF_LEN) {
    if (bi->a == b) return 1;
    uint32_t other = p->buffers[bi->a].decl.count;
    return count && other && other <= count;
  }
  if (count && cg_const_u32(c, bound, &k)) return k <= count;
  return 0;
}

/* The largest value of a constant or a value with a static range (hi) or
 * a declared buffer length; UINT32_MAX when unknown. */
static uint32_t bound_hi(cg_ctx *c, uint32_t bound) {
  const vyre_inst *bi = &c->p->insts[bound];
  if (bi->op == VYRE_OP_BUF_LEN) {
    uint32_t n = c->p->buffers[bi->a].decl.count;
    return n ? n : UINT32_MAX;
  }
  return c->hi ? c->hi[bound] : UINT32_MAX;
}

/* hi_at: hi, narrowed by the facts of the region (x < B gives x <= hi(B) -
 * 1) and recomputed through add, mul and shl by a constant from narrowed
 * operands (each only while it cannot wrap). */
static uint32_t hi_at(cg_ctx *c, uint32_t v, int depth) {
  const vyre_program *p = c->p;
  uint32_t r = c->hi ? c->hi[v] : UINT32_MAX;
  if (p->value_type[v] != VYRE_T_U32) return r;
  uint32_t key = canon(c, v);
  for (uint32_t f = 0; f < c->nfacts; f++) {
    if (c->facts[f].key != key) continue;
    uint32_t bh = bound_hi(c, c->facts[f].bound);
    if (bh && bh != UINT32_MAX && bh - 1u < r) r = bh - 1u;
  }
  const vyre_inst *in = &p->insts[v];
  if (depth >= 4 || r == 0) return r;
  uint64_t x;
  uint32_t k;
  switch (in->op) {
  case VYRE_OP_ADD: x = (uint64_t)hi_at(c, in->a, depth + 1) + hi_at(c, in->b, depth + 1); break;
  case VYRE_OP_MUL: x = (uint64_t)hi_at(c, in->a, depth + 1) * hi_at(c, in->b, depth + 1); break;
  case VYRE_OP_SHL:
    if (!cg_const_u32(c, in->b, &k)) return r;
    x = (uint64_t)hi_at(c, in->a, depth + 1) << (k & 31u);
    break;
  default: return r;
  }
  return x < r ? (uint32_t)x : r;
}

uint32_t cg_hi_at(cg_ctx *c, uint32_t v) { return hi_at(c, v, 0); }

int cg_index_in_bounds(cg_ctx *c, uint32_t b, uint32_t index) {
  uint32_t count = c->p->buffers[b].decl.count, k;
  if (count && cg_const_u32(c, index, &k)) return k < count;
  /* Ids with a static range: lid.a < wg[a], lane < 32. */
  const vyre_inst *ii = &c->p->insts[index];
  if (count && ii->op == VYRE_OP_LOCAL_ID && c->wg[ii->mod] <= count) return 1;
  if (count && ii->op == VYRE_OP_SUBGROUP_LANE && count >= 32) return 1;
  /* The value range (analysis.c), narrowed by the region's facts: index
   * <= hi < count. */
  if (count && c->hi && cg_hi_at(c, index) < count) return 1;
  uint32_t key = canon(c, index);
  for (uint32_t f = 0; f < c->nfacts; f++)
    if (c->facts[f].key == key && bound_fits(c, c->facts[f].bound, b)) return 1;
  return 0;
}

/* ------------------------------------------------------------------ */
/* Moves and f32 helpers shared by expressions and memory              */
/* ------------------------------------------------------------------ */
void cg_mov(cg_ctx *c, uint32_t t, const char *dst, const char *src) {
  cg_emit(c, "mov.%s %s, %s;", cg_bty(t), dst, src);
}

const char *cg_canon_nan(cg_ctx *c, const char *v) {
  const char *q = cg_tp(c), *t = cg_t32(c);
  cg_emit(c, "testp.notanumber.f32 %s, %s;", q, v);
  cg_emit(c, "selp.b32 %s, %x, %s, %s;", t, VYRE_F32_CANONICAL_NAN, v, q);
  return t;
}

void cg_flush_subnormal(cg_ctx *c, const char *out, const char *in) {
  /* Bit test rather than an ftz no-op (ptxas may fold x*1 or x+(-0)). */
  const char *e = cg_t32(c), *s = cg_t32(c), *q = cg_tp(c);
  cg_emit(c, "and.b32 %s, %s, %x;", e, in, 0x7f800000u);
  cg_emit(c, "setp.eq.u32 %s, %s, 0;", q, e);
  cg_emit(c, "and.b32 %s, %s, %x;", s, in, 0x80000000u);
  cg_emit(c, "selp.b32 %s, %s, %s, %s;", out, s, in, q);
}

/* f32 min/max: PTX min/max let a NaN operand lose.  The signed-zero order
 * (min(-0,+0) = -0, max = +0) is what sm_90 hardware does (docs/semantics.md
 * "Checked on hardware") but the PTX ISA does not promise it, so on targets
 * not yet checked equal operands (which covers the +0/-0 pair) take the
 * OR/AND of the bits. */
void cg_f32_minmax(cg_ctx *c, const char *dst, const char *a, const char *b, int is_max) {
  if (c->sm >= 90) {
    cg_emit(c, "%s.ftz.f32 %s, %s, %s;", is_max ? "max" : "min", dst, a, b);
    return;
  }
  const char *m = cg_t32(c), *q = cg_tp(c), *t = cg_t32(c);
  cg_emit(c, "%s.ftz.f32 %s, %s, %s;", is_max ? "max" : "min", m, a, b);
  cg_emit(c, "setp.eq.ftz.f32 %s, %s, %s;", q, a, b);
  cg_emit(c, "%s.b32 %s, %s, %s;", is_max ? "and" : "or", t, a, b);
  cg_emit(c, "selp.b32 %s, %s, %s, %s;", dst, t, m, q);
}
