/* codegen.c -- the PTX driver: target checks, kernel signature and prologue, control flow, facts, emission helpers. */
#include <stdlib.h>
#include <string.h>

#include "codegen_internal.h"

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

/* `if (cond) { return | trap } end`: the code after it runs where cond is false. */
static int is_early_exit(const vyre_program *p, uint32_t opener, uint32_t end) {
  if (p->insts[opener].op != VYRE_OP_IF || end != opener + 2) return 0;
  uint16_t op = p->insts[opener + 1].op;
  return op == VYRE_OP_RETURN || op == VYRE_OP_TRAP;
}

static int const_u32(cg_ctx *c, uint32_t v, uint32_t *out) {
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
  if (count && const_u32(c, bound, &k)) return k <= count;
  return 0;
}

int cg_index_in_bounds(cg_ctx *c, uint32_t b, uint32_t index) {
  uint32_t count = c->p->buffers[b].decl.count, k;
  if (count && const_u32(c, index, &k)) return k < count;
  /* Ids with a static range: lid.a < wg[a], lane < 32. */
  const vyre_inst *ii = &c->p->insts[index];
  if (count && ii->op == VYRE_OP_LOCAL_ID && c->wg[ii->mod] <= count) return 1;
  if (count && ii->op == VYRE_OP_SUBGROUP_LANE && count >= 32) return 1;
  /* The value range (codegen_analysis.c): index <= hi < count. */
  if (count && c->hi && c->hi[index] < count) return 1;
  uint32_t key = canon(c, index);
  for (uint32_t f = 0; f < c->nfacts; f++)
    if (c->facts[f].key == key && bound_fits(c, c->facts[f].bound, b)) return 1;
  return 0;
}

/* ------------------------------------------------------------------ */
/* Target                                                              */
/* ------------------------------------------------------------------ */
/* The lowest PTX ISA that knows each target (PTX ISA "Release notes" /
 * "Target ISA notes"): the lowest version keeps old drivers able to JIT it. */
static const struct {
  uint32_t sm, major, minor;
} ptx_versions[] = {
    {70, 6, 0}, {72, 6, 1}, {75, 6, 3}, {80, 7, 0}, {86, 7, 1}, {87, 7, 4},
    {88, 9, 0}, {89, 7, 8}, {90, 7, 8}, {100, 8, 6}, {101, 8, 6}, {103, 8, 8},
    {110, 9, 0}, {120, 8, 7}, {121, 8, 8},
};

static int target_version(uint32_t sm, uint32_t *major, uint32_t *minor) {
  for (size_t k = 0; k < sizeof ptx_versions / sizeof ptx_versions[0]; k++) {
    if (ptx_versions[k].sm == sm) {
      *major = ptx_versions[k].major;
      *minor = ptx_versions[k].minor;
      return 1;
    }
  }
  return 0;
}

/* ------------------------------------------------------------------ */
/* Statements and control flow                                         */
/* ------------------------------------------------------------------ */
static void vec_push_pred(cg_ctx *c, uint32_t pred) {
  c->pred_stack[c->pred_depth++] = c->vpred;
  c->vpred = pred;
}

const char *cg_vpred(cg_ctx *c) {
  return c->vpred == CG_NONE ? NULL : cg_name(c, "%q", c->vpred);
}

static void lower_if_vec(cg_ctx *c, uint32_t i) {
  const vyre_inst *in = &c->p->insts[i];
  if (c->vec_static && c->vec_static[i] == 1) {
    vec_push_pred(c, c->vpred);
    return;
  }
  if (c->vec_static && c->vec_static[i] == 2) {
    /* Statically false on the vector path (an early-exit guard). */
    uint32_t k = c->ntp++;
    cg_emit(c, "mov.pred %s, 0;", cg_name(c, "%q", k));
    vec_push_pred(c, k);
    return;
  }
  uint32_t k = c->ntp++;
  const char *q = cg_name(c, "%q", k);
  if (c->vpred != CG_NONE) cg_emit(c, "and.pred %s, %s, %s;", q, cg_vpred(c), cg_val(c, in->a));
  else cg_emit(c, "mov.pred %s, %s;", q, cg_val(c, in->a));
  vec_push_pred(c, k);
}

void cg_lower_range(cg_ctx *c, uint32_t from, uint32_t to);

static void lower_statement(cg_ctx *c, uint32_t i) {
  const vyre_program *p = c->p;
  const vyre_inst *in = &p->insts[i];
  /* Labels are per register copy, and per iteration of an unrolled loop. */
  uint32_t copy = c->utag ? c->utag : c->copy;
  switch (in->op) {
  case VYRE_OP_LET:
  case VYRE_OP_ASSIGN: {
    uint32_t t = p->local_types[in->a];
    const char *dst = cg_local(c, in->a), *src = cg_val(c, in->b);
    if (c->mode == CG_MODE_VEC && c->vpred != CG_NONE && in->op == VYRE_OP_ASSIGN)
      cg_emit(c, "@%s mov.%s %s, %s;", cg_vpred(c), cg_bty(t), dst, src);
    else
      cg_mov(c, t, dst, src);
    break;
  }
  case VYRE_OP_STORE: cg_store(c, i); break;
  case VYRE_OP_IF:
    if (c->mode == CG_MODE_VEC) {
      lower_if_vec(c, i);
    } else {
      if (c->fact_mark) c->fact_mark[i] = c->nfacts;
      facts_from(c, in->a, 0, 0);
      cg_emit(c, "@!%s bra%s $L%u_%u;", cg_val(c, in->a), p->uniform[i] ? ".uni" : "", copy,
              p->match[i]);
    }
    break;
  case VYRE_OP_ELSE: {
    uint32_t ifi = c->if_of[i];
    if (c->mode == CG_MODE_VEC) {
      /* The else region runs where the enclosing predicate holds and the
       * condition does not. */
      uint32_t outer = c->pred_stack[--c->pred_depth];
      c->vpred = outer;
      uint32_t k = c->ntp++;
      const char *q = cg_name(c, "%q", k);
      if (c->vec_static && c->vec_static[ifi] == 1) {
        cg_emit(c, "mov.pred %s, 0;", q); /* statically false on the vector path */
      } else if (outer != CG_NONE) {
        const char *nq = cg_tp(c);
        cg_emit(c, "not.pred %s, %s;", nq, cg_val(c, p->insts[ifi].a));
        cg_emit(c, "and.pred %s, %s, %s;", q, cg_vpred(c), nq);
      } else {
        cg_emit(c, "not.pred %s, %s;", q, cg_val(c, p->insts[ifi].a));
      }
      vec_push_pred(c, k);
    } else {
      if (c->fact_mark && ifi != CG_NONE) c->nfacts = c->fact_mark[ifi];
      cg_emit(c, "bra%s $L%u_%u;", p->uniform[i] ? ".uni" : "", copy, p->match[i]);
      cg_line(c, "$L%u_%u:", copy, i);
    }
    break;
  }
  case VYRE_OP_END: {
    uint32_t opener = p->match[i];
    const vyre_inst *op = &p->insts[opener];
    if (c->mode == CG_MODE_VEC) {
      if (op->op == VYRE_OP_IF || op->op == VYRE_OP_ELSE || op->op == VYRE_OP_BLOCK) {
        c->vpred = c->pred_stack[--c->pred_depth];
      }
      break;
    }
    if (op->op == VYRE_OP_LOOP) {
      const char *ctr = cg_local(c, op->a);
      cg_emit(c, "add.%s %s, %s, 1;", cg_ity(p->local_types[op->a]), ctr, ctr);
      cg_emit(c, "bra%s $T%u_%u;", p->uniform[opener] ? ".uni" : "", copy, opener);
    }
    if (c->fact_mark) {
      uint32_t root = op->op == VYRE_OP_ELSE ? c->if_of[opener] : opener;
      c->nfacts = c->fact_mark[root];
      /* Past `if (i >= n) return;` every invocation still here has i < n;
       * the fact lasts until the enclosing block ends. */
      if (is_early_exit(p, opener, i)) facts_from(c, op->a, 1, 0);
    }
    cg_line(c, "$L%u_%u:", copy, i);
    break;
  }
  case VYRE_OP_LOOP: {
    uint32_t t = p->local_types[in->a];
    const char *ctr = cg_local(c, in->a);
    cg_mov(c, t, ctr, cg_val(c, in->b));
    if (c->fact_mark) c->fact_mark[i] = c->nfacts;
    cg_line(c, "$T%u_%u:", copy, i);
    const char *q = cg_tp(c);
    cg_emit(c, "setp.ge.%s %s, %s, %s;", cg_ity(t), q, cg_local(c, in->a), cg_val(c, in->c));
    cg_emit(c, "@%s bra%s $L%u_%u;", q, p->uniform[i] ? ".uni" : "", copy, p->match[i]);
    if (t == VYRE_T_U32 && c->fact_mark) {
      /* Inside the body every read of the counter is below `end`. */
      if (c->nfacts < CG_MAX_FACTS) {
        c->facts[c->nfacts].key = 0x85000000u | in->a;
        c->facts[c->nfacts].bound = in->c;
        c->nfacts++;
      }
    }
    break;
  }
  case VYRE_OP_BLOCK:
    if (c->mode == CG_MODE_VEC) vec_push_pred(c, c->vpred);
    else if (c->fact_mark) c->fact_mark[i] = c->nfacts;
    break;
  case VYRE_OP_RETURN:
    if (c->mode == CG_MODE_VEC) break; /* only `if (gid >= len) return`: never on the vector path */
    if (c->tail_continue) {
      cg_emit(c, "bra $EWCONT;"); /* the tail's next element */
      break;
    }
    if (c->need_done && c->grid_seen < c->ngrid) {
      cg_emit(c, "mov.pred %%done, 1;");
      cg_emit(c, "bra $GB%u;", c->grid_seen);
    } else {
      cg_emit(c, "exit;");
    }
    break;
  case VYRE_OP_BARRIER:
    if (in->mod == VYRE_BARRIER_GRID) cg_grid_barrier(c, i);
    else cg_emit(c, "bar.sync 0;");
    break;
  case VYRE_OP_TRAP: cg_trap(c, i); break;
  default:
    cg_fail(c, VYRE_INTERNAL, "codegen: instruction %u: op %u has no lowering. Fix: report this "
            "as a bug", i, in->op);
    break;
  }
}

/* Constant-trip loops are unrolled fully when the trip count is at most
 * CG_UNROLL_TRIPS and trips x body at most CG_UNROLL_INSTS instructions
 * (counting nested unrolled loops): the counter becomes a constant per
 * copy, which ptxas folds into the addresses. */
#define CG_UNROLL_TRIPS 64u
#define CG_UNROLL_INSTS 8192u

/* Instructions the body of loop i emits once unrolled, or UINT32_MAX when
 * it is over the limit. */
static uint32_t unrolled_size(cg_ctx *c, uint32_t i, int depth);

/* Trip count of loop i when both bounds are constants, else UINT32_MAX. */
static uint32_t const_trips(cg_ctx *c, uint32_t i) {
  const vyre_program *p = c->p;
  const vyre_inst *in = &p->insts[i], *s = &p->insts[in->b], *e = &p->insts[in->c];
  if (s->op != VYRE_OP_CONST || e->op != VYRE_OP_CONST) return UINT32_MAX;
  if (p->local_types[in->a] == VYRE_T_U32) return e->a > s->a ? e->a - s->a : 0u;
  int32_t a = (int32_t)s->a, b = (int32_t)e->a;
  return b > a ? (uint32_t)((int64_t)b - a) : 0u;
}

static uint32_t unrolled_size(cg_ctx *c, uint32_t i, int depth) {
  const vyre_program *p = c->p;
  uint32_t trips = const_trips(c, i), end = p->match[i];
  if (trips > CG_UNROLL_TRIPS || depth > 8) return UINT32_MAX;
  uint64_t body = 0;
  for (uint32_t j = i + 1; j < end; j++) {
    if (p->insts[j].op == VYRE_OP_LOOP) {
      uint32_t inner = unrolled_size(c, j, depth + 1);
      body += inner == UINT32_MAX ? p->match[j] - j : inner;
      j = p->match[j];
    } else {
      body++;
    }
  }
  uint64_t total = body * trips;
  return total > CG_UNROLL_INSTS ? UINT32_MAX : (uint32_t)total;
}

static void lower_unrolled(cg_ctx *c, uint32_t i) {
  const vyre_program *p = c->p;
  const vyre_inst *in = &p->insts[i];
  uint32_t trips = const_trips(c, i), start = p->insts[in->b].a, saved = c->utag;
  uint32_t t = p->local_types[in->a];
  const char *name = NULL;
  for (uint32_t k = 0; k < trips && !c->st; k++) {
    uint32_t mark = c->nfacts;
    c->utag = ++c->utag_next;
    name = cg_local(c, in->a);
    if (t == VYRE_T_U32) cg_emit(c, "mov.b32 %s, %u;", name, start + k);
    else cg_emit(c, "mov.b32 %s, %d;", name, (int)(start + k));
    if (t == VYRE_T_U32 && c->nfacts < CG_MAX_FACTS) {
      c->facts[c->nfacts].key = 0x85000000u | in->a;
      c->facts[c->nfacts].bound = in->c;
      c->nfacts++;
    }
    cg_lower_range(c, i + 1, p->match[i]);
    c->nfacts = mark;
  }
  c->utag = saved;
}

void cg_lower_range(cg_ctx *c, uint32_t from, uint32_t to) {
  const vyre_program *p = c->p;
  for (uint32_t i = from; i < to && !c->st; i++) {
    if (p->insts[i].op == VYRE_OP_LOOP && c->mode == CG_MODE_GENERAL &&
        unrolled_size(c, i, 0) != UINT32_MAX) {
      lower_unrolled(c, i);
      i = p->match[i];
      continue;
    }
    if (p->value_type[i] != VYRE_T_VOID) {
      /* Gid-invariant values of the vector path are computed once, in copy 0. */
      if (c->mode == CG_MODE_VEC && c->copy > 0 && c->dep && !c->dep[i]) continue;
      cg_expr(c, i);
    } else {
      lower_statement(c, i);
    }
  }
}

/* ------------------------------------------------------------------ */
/* The kernel                                                          */
/* ------------------------------------------------------------------ */
/* 1 when the program has an f32 constant (they go through %opz). */
static int has_f32_const(const vyre_program *p) {
  for (uint32_t i = 0; i < p->inst_count; i++)
    if (p->insts[i].op == VYRE_OP_CONST && p->insts[i].type == VYRE_T_F32) return 1;
  return 0;
}

static void emit_prologue(cg_ctx *c) {
  const vyre_program *p = c->p;
  cg_emit(c, "ld.param.u64 %%pp, [params];");
  cg_emit(c, "cvta.to.global.u64 %%pp, %%pp;");
  for (uint32_t b = 0; b < p->buffer_count; b++) {
    const vyre_buffer_info *bi = &p->buffers[b];
    if (bi->role == VYRE_ROLE_SHARED) continue;
    cg_emit(c, "ld.param.u64 %s, [b%u];", cg_name(c, "%bp", b), bi->kernel_index);
    cg_emit(c, "cvta.to.global.u64 %s, %s;", cg_name(c, "%bp", b), cg_name(c, "%bp", b));
    if (!bi->decl.count)
      cg_emit(c, "ld.param.u32 %s, [counts+%u];", cg_name(c, "%len", b), 4u * (1u + b));
  }
  cg_emit(c, "mov.u32 %%ltid, %%tid.x;");
  if (c->wg[1] > 1 || c->wg[2] > 1) {
    cg_emit(c, "mov.u32 %%ty, %%tid.y;");
    cg_emit(c, "mov.u32 %%tz, %%tid.z;");
    cg_emit(c, "mad.lo.u32 %%ty, %%tz, %u, %%ty;", c->wg[1]);
    cg_emit(c, "mad.lo.u32 %%ltid, %%ty, %u, %%ltid;", c->wg[0]);
  }
  if ((p->features & VYRE_FEAT_SUBGROUP) || has_f32_const(p)) {
    /* A zero ptxas cannot see through: the launch passes no dynamic shared
     * memory, so %dynamic_smem_size is 0 at run time.  Shuffle sources are
     * xor'ed with it (codegen_mem.c shfl32): CUDA 13.0's ptxas folds a
     * shfl.sync of a value it knows at compile time into a wrong constant
     * (found by vyre fuzz on an H200; docs/codegen.md).  So are f32
     * constants (cg_expr): the 580 driver's JIT folds f32 arithmetic on
     * known values with a wrong rounding (vyre fuzz on an H100). */
    cg_emit(c, "mov.u32 %%opz, %%dynamic_smem_size;");
  }
  if (c->partial_warp) {
    /* Lanes that exist in this warp: all, or the tail of the last warp. */
    uint32_t last = c->nthreads / 32u, tail = c->nthreads % 32u;
    cg_emit(c, "shr.u32 %%t0, %%ltid, 5;");
    cg_emit(c, "setp.eq.u32 %%q0, %%t0, %u;", last);
    cg_emit(c, "selp.b32 %%lmask, %x, -1, %%q0;", (1u << tail) - 1u);
    cg_emit(c, "selp.b32 %%lcount, %u, 32, %%q0;", tail);
  }
  if (p->shared_bytes) {
    /* Workgroup memory starts zeroed: every thread clears 16-byte chunks. */
    uint32_t chunks = (p->shared_bytes + 15u) / 16u;
    cg_emit(c, "mov.u32 %%smbase, vyre_smem;");
    cg_emit(c, "mov.u32 %%t0, %%ltid;");
    cg_line(c, "$ZERO:");
    cg_emit(c, "setp.ge.u32 %%q0, %%t0, %u;", chunks);
    cg_emit(c, "@%%q0 bra $ZEROED;");
    cg_emit(c, "mad.lo.u32 %%t1, %%t0, 16, %%smbase;");
    cg_emit(c, "st.shared.v4.b32 [%%t1], {0, 0, 0, 0};");
    cg_emit(c, "add.u32 %%t0, %%t0, %u;", c->nthreads);
    cg_emit(c, "bra $ZERO;");
    cg_line(c, "$ZEROED:");
    cg_emit(c, "bar.sync 0;");
  }
  if (c->need_done) cg_emit(c, "mov.pred %%done, 0;");
}

/* The module text before the body: header, math functions, entry, declarations. */
static void assemble_header(cg_ctx *c, strbuf *out, const cg_kernel_info *info) {
  const vyre_program *p = c->p;
  vyre__sb_printf(out, "//\n// vyre codegen %u: program ", CG_VERSION);
  char hex[65];
  vyre_program_hash_hex(p, hex);
  vyre__sb_puts(out, hex);
  vyre__sb_printf(out, "\n//\n.version %u.%u\n.target sm_%u\n.address_size 64\n\n", info->ptx_isa_major,
            info->ptx_isa_minor, c->sm);
  if (c->funcs.len) vyre__sb_append(out, c->funcs.data, c->funcs.len);
  vyre__sb_printf(out, ".visible .entry %s(\n", info->entry);
  for (uint32_t k = 0; k < p->kernel_buffer_count; k++) vyre__sb_printf(out, "\t.param .u64 b%u,\n", k);
  /* The count words by value (constant bank: no memory round trip before
   * the first load); the params block only for trap and grid words. */
  vyre__sb_printf(out, "\t.param .align 4 .b8 counts[%u],\n", 4u * (1u + p->buffer_count));
  vyre__sb_puts(out, "\t.param .u64 params\n)\n");
  vyre__sb_printf(out, ".reqntid %u, %u, %u\n{\n", c->wg[0], c->wg[1], c->wg[2]);
  uint32_t nv = c->n * c->ncopies, nl = (p->local_count ? p->local_count : 1) * c->ncopies;
  vyre__sb_printf(out, "\t.reg .b32 %%v<%u>;\n\t.reg .b64 %%w<%u>;\n\t.reg .pred %%p<%u>;\n", nv, nv, nv);
  vyre__sb_printf(out, "\t.reg .b32 %%lv<%u>;\n\t.reg .b64 %%lw<%u>;\n\t.reg .pred %%lp<%u>;\n", nl, nl, nl);
  vyre__sb_printf(out, "\t.reg .b32 %%t<%u>;\n\t.reg .b64 %%u<%u>;\n\t.reg .pred %%q<%u>;\n",
            c->nt32 + 2, c->nt64 + 1, c->ntp + 1);
  vyre__sb_printf(out, "\t.reg .b16 %%h<%u>;\n\t.reg .f32 %%fa<%u>;\n", c->nt16 + 1, c->ntf + 1);
  uint32_t nb = p->buffer_count ? p->buffer_count : 1;
  vyre__sb_printf(out, "\t.reg .b64 %%pp, %%bp<%u>;\n\t.reg .b32 %%len<%u>;\n", nb, nb);
  vyre__sb_puts(out, "\t.reg .b32 %ltid, %ty, %tz, %lmask, %lcount, %smbase, %gidx, %minlen, %opz;\n");
  vyre__sb_puts(out, "\t.reg .b64 %ebase;\n\t.reg .pred %done;\n");
  if (p->shared_bytes)
    vyre__sb_printf(out, "\t.shared .align 16 .b8 vyre_smem[%u];\n", (p->shared_bytes + 15u) & ~15u);
}

/* The per-program tables: op classes, grid barriers, loop counters, the
 * if of each else, and whether a return or trap must still reach a later
 * grid barrier. */
static void scan_program(cg_ctx *c) {
  const vyre_program *program = c->p;
  uint32_t nops;
  const vyre_op_info *ops = vyre_op_all(&nops);
  for (uint32_t k = 0; k < nops; k++) c->op_class[ops[k].id] = ops[k].op_class;
  for (uint32_t i = 0; i < c->n; i++) {
    const vyre_inst *in = &program->insts[i];
    if (in->op == VYRE_OP_BARRIER && in->mod == VYRE_BARRIER_GRID) c->ngrid++;
    if (in->op == VYRE_OP_LOOP) c->is_counter[in->a] = 1;
    if (in->op == VYRE_OP_IF && program->insts[program->match[i]].op == VYRE_OP_ELSE)
      c->if_of[program->match[i]] = i;
  }
  if (c->ngrid) {
    /* A return or trap before the last grid barrier must still arrive at
     * the grid barriers after it. */
    uint32_t last = 0;
    for (uint32_t i = 0; i < c->n; i++) {
      const vyre_inst *in = &program->insts[i];
      if (in->op == VYRE_OP_BARRIER && in->mod == VYRE_BARRIER_GRID) last = i;
    }
    for (uint32_t i = 0; i < last; i++) {
      const vyre_inst *in = &program->insts[i];
      if (in->op == VYRE_OP_RETURN || in->op == VYRE_OP_TRAP) c->need_done = 1;
    }
  }
}

/* What the runtime needs to know of the kernel (the logical grid until the
 * elementwise path takes it). */
static void kernel_info(const cg_ctx *c, cg_kernel_info *info) {
  const vyre_program *program = c->p;
  char hex[65];
  vyre_program_hash_hex(program, hex);
  memcpy(info->entry, "vyre_", 5);
  memcpy(info->entry + 5, hex, 16);
  info->entry[21] = '\0';
  info->kernel_buffers = program->kernel_buffer_count;
  info->params_words = vyre_params_word_count(program);
  info->shared_bytes = program->shared_bytes;
  info->grid_mode = CG_GRID_LOGICAL;
  info->elements_per_thread = 1;
  info->uses_grid_barrier = c->ngrid != 0;
  info->uses_trap = (program->features & VYRE_FEAT_TRAP) != 0;
}

/* Frees a context and everything it holds; fields never allocated are
 * NULL or zeroed. */
static void ctx_free(cg_ctx *c) {
  vyre__sb_free(&c->body);
  vyre__sb_free(&c->funcs);
  free(c->dep);
  free(c->cur_raw);
  free(c->vec_static);
  free(c->ew_flags);
  free(c->fact_mark);
  free(c->pred_stack);
  free(c->is_counter);
  free(c->if_of);
  free(c->vname);
  free(c->fmts);
  cg_analysis_free(c);
  free(c);
}

vyre_status cg_emit_ptx(const vyre_program *program, const cg_options *options, char **ptx,
                        size_t *length, cg_kernel_info *info, vyre_error *err) {
  if (ptx) *ptx = NULL;
  if (length) *length = 0;
  if (!program || !options || !ptx || !info)
    return vyre_error_set(err, VYRE_INVALID_ARGUMENT, 0,
                          "codegen: program, options, ptx and info must not be NULL. Fix: pass "
                          "a decoded program, options and output pointers");
  memset(info, 0, sizeof *info);
  uint32_t sm = options->sm_major * 10u + options->sm_minor;
  if (options->sm_minor > 9 || !target_version(sm, &info->ptx_isa_major, &info->ptx_isa_minor))
    return vyre_error_set(err, VYRE_INVALID_ARGUMENT, 0,
                          "codegen: compute capability %u.%u is not a target this code generator "
                          "knows (sm_70, 72, 75, 80, 86, 87, 88, 89, 90, 100, 101, 103, 110, 120, "
                          "121). Fix: pass the device's compute capability",
                          options->sm_major, options->sm_minor);
  uint64_t inv = (uint64_t)options->workgroup[0] * options->workgroup[1] * options->workgroup[2];
  if (inv == 0 || inv > VYRE_MAX_WORKGROUP_INVOCATIONS)
    return vyre_error_set(err, VYRE_INVALID_ARGUMENT, 0,
                          "codegen: workgroup %u x %u x %u is empty or over %u invocations. Fix: "
                          "pass the workgroup size the kernel will be launched with",
                          options->workgroup[0], options->workgroup[1], options->workgroup[2],
                          VYRE_MAX_WORKGROUP_INVOCATIONS);

  cg_ctx *c = calloc(1, sizeof *c);
  if (!c) return vyre_error_set(err, VYRE_OUT_OF_MEMORY, 0, "codegen: out of host memory. Fix: free host memory");
  c->p = program;
  c->o = options;
  c->err = err;
  c->n = program->inst_count;
  c->sm = sm;
  c->ncopies = 1;
  c->utag_next = 64; /* unrolled-body label tags start past every register copy */
  for (int k = 0; k < 3; k++) c->wg[k] = options->workgroup[k];
  c->nthreads = (uint32_t)inv;
  c->partial_warp = (c->nthreads % 32u) != 0;
  vyre_status st = VYRE_OK;
  c->fact_mark = malloc((size_t)c->n * sizeof *c->fact_mark);
  c->pred_stack = malloc((VYRE_MAX_NESTING + 2) * sizeof *c->pred_stack);
  c->is_counter = calloc(program->local_count ? program->local_count : 1, 1);
  c->if_of = malloc((size_t)c->n * sizeof *c->if_of);
  c->vname = calloc(c->n, sizeof *c->vname);
  c->vpred = CG_NONE;
  if (!c->fact_mark || !c->pred_stack || !c->is_counter || !c->if_of || !c->vname) {
    st = vyre_error_set(err, VYRE_OUT_OF_MEMORY, 0, "codegen: out of host memory. Fix: free host memory");
    goto fail;
  }
  scan_program(c);
  if (!cg_analyse(c)) {
    st = vyre_error_set(err, VYRE_OUT_OF_MEMORY, 0, "codegen: out of host memory. Fix: free host memory");
    goto fail;
  }
  kernel_info(c, info);

  /* About 48 bytes of PTX per instruction: one allocation instead of a
   * chain of doublings. */
  vyre__sb_reserve(&c->body, 4096 + (size_t)c->n * 64u);
  /* The header is written last (it declares how many registers were used)
   * into a gap left at the front, padded with blanks: no second copy of
   * the body. */
  size_t gap = 2048u + 40u * program->buffer_count;
  for (size_t k = 0; k < gap; k += 64)
    vyre__sb_append(&c->body, "                                                                ",
              gap - k < 64 ? gap - k : 64);
  emit_prologue(c);
  if (!(options->flags & CG_NO_FASTPATH) && cg_elementwise_eligible(c)) {
    vyre__sb_reserve(&c->body, (size_t)c->n * 48u * CG_EPT);
    info->grid_mode = CG_GRID_ELEMENTWISE;
    info->elements_per_thread = CG_EPT;
    cg_elementwise_body(c);
  } else {
    c->mode = CG_MODE_GENERAL;
    c->copy = 0;
    cg_lower_range(c, 0, c->n);
  }
  if (c->st) {
    st = c->st;
    goto fail;
  }
  vyre__sb_puts(&c->body, "\texit;\n}\n");
  strbuf head;
  vyre__sb_init(&head);
  assemble_header(c, &head, info);
  if (head.failed || c->body.failed || c->funcs.failed) {
    vyre__sb_free(&head);
    st = vyre_error_set(err, VYRE_OUT_OF_MEMORY, 0, "codegen: out of host memory for the PTX text. Fix: free host memory");
    goto fail;
  }
  if (head.len < gap) {
    memcpy(c->body.data, head.data, head.len);
    c->body.data[gap - 1] = '\n'; /* blanks, then a line break before the body */
    *ptx = vyre__sb_take(&c->body, length);
  } else {
    /* Large math functions: header + body in a new buffer. */
    vyre__sb_append(&head, c->body.data + gap, c->body.len - gap);
    *ptx = vyre__sb_take(&head, length);
  }
  vyre__sb_free(&head);
  if (!*ptx) {
    st = vyre_error_set(err, VYRE_OUT_OF_MEMORY, 0, "codegen: out of host memory for the PTX text. Fix: free host memory");
    goto fail;
  }
  ctx_free(c);
  return VYRE_OK;

fail:
  ctx_free(c);
  if (length) *length = 0;
  return st;
}
