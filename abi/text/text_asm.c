/* text_asm.c -- the assembler: program text to a validated program image, every error at FILE:LINE:COL with a Fix. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "text_internal.h"
#include "vyre/vyre_text.h"

#define NONE UINT32_MAX
#define MAX_TOKENS 16u

typedef struct tok {
  const char *s;
  uint32_t len;
  uint32_t col; /* 1-based byte column */
} tok;

/* A string -> index map over names that point into the source text. */
typedef struct name_entry {
  const char *s;
  uint32_t len;
  uint32_t value;
} name_entry;

typedef struct name_map {
  name_entry *e;
  uint32_t cap, count;
} name_map;

typedef struct value_def {
  uint32_t inst;
  uint32_t block;   /* opener of the defining block, NONE at top level */
  uint32_t segment; /* grid-barrier segment */
  uint32_t line;
} value_def;

enum { LOCAL_DECLARED, LOCAL_LET, LOCAL_COUNTER };

typedef struct local_def {
  uint8_t type, state;
  uint32_t block; /* where its let/loop put it in scope */
  uint32_t line;  /* declaration line */
  uint32_t def_line;
  const char *name;
  uint32_t name_len;
} local_def;

typedef struct buf_def {
  uint8_t access, elem;
  uint32_t line, col;
} buf_def;

typedef struct open_block {
  uint32_t inst;
  uint16_t op;
  uint32_t line, col;
} open_block;

typedef struct assembler {
  const char *file;
  const char *src; /* the whole text, for hints that look ahead */
  size_t src_len, next_line_at;
  vyre_error *err;
  vyre_status status; /* first failure */
  vyre_builder *b;
  uint32_t line;
  tok t[MAX_TOKENS];
  uint32_t nt;

  int have_wg, have_program;
  uint32_t wg_line, wg_col;

  name_map buffer_names;
  buf_def bufs[VYRE_MAX_BUFFERS];
  uint32_t nbuf;

  name_map local_names;
  local_def *locals;
  uint32_t nlocals, local_cap;

  name_map value_names;
  value_def *vals;
  uint32_t nvals, val_cap;

  /* Per instruction: where it came from, its value type, its source
   * name, and (for block openers) whether the block is still open. */
  uint32_t *inst_line, *inst_col;
  uint8_t *inst_type, *open;
  const char **inst_name;
  uint32_t *inst_name_len;
  uint32_t ninst, inst_cap;

  open_block stack[VYRE_MAX_NESTING];
  uint32_t depth;
  uint32_t segment;
  uint32_t binding_max_buffer; /* 1 + the buffer declared @4294967295, or 0 */
  uint32_t *grid_lines; /* line of the grid barrier that ended segment k */
  uint32_t grid_cap;
} assembler;

/* ------------------------------------------------------------------ */
/* Errors                                                              */
/* ------------------------------------------------------------------ */
static vyre_status fail_at(assembler *a, uint32_t line, uint32_t col, vyre_status st,
                           const char *fmt, ...) VYRE_PRINTF(5, 6);
static vyre_status fail_at(assembler *a, uint32_t line, uint32_t col, vyre_status st,
                           const char *fmt, ...) {
  char msg[VYRE_ERROR_MESSAGE_MAX];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(msg, sizeof msg, fmt, ap);
  va_end(ap);
  vyre_error_set(a->err, st, 0, "%s:%u:%u: %s", a->file, line, col, msg);
  a->status = st;
  return st;
}

#define FAIL(tk, ...) fail_at(a, a->line, (tk)->col, VYRE_INVALID_PROGRAM, __VA_ARGS__)

static vyre_status oom(assembler *a) {
  return fail_at(a, a->line, 1, VYRE_OUT_OF_MEMORY, "out of host memory while assembling. Fix: "
                                                    "free memory or assemble a smaller program");
}

/* A token as it may be quoted in a message: printable, at most 48 chars. */
static const char *show(const tok *t, char out[64]) {
  uint32_t n = t->len > 48 ? 45 : t->len, k = 0;
  for (uint32_t i = 0; i < n; i++) {
    unsigned char c = (unsigned char)t->s[i];
    out[k++] = c >= 0x20 && c < 0x7f ? (char)c : '?';
  }
  if (n < t->len) {
    memcpy(out + k, "...", 3);
    k += 3;
  }
  out[k] = '\0';
  return out;
}

/* ------------------------------------------------------------------ */
/* Names                                                               */
/* ------------------------------------------------------------------ */
static uint32_t hash_name(const char *s, uint32_t len) {
  uint32_t h = 2166136261u;
  for (uint32_t i = 0; i < len; i++) h = (h ^ (uint8_t)s[i]) * 16777619u;
  return h;
}

static name_entry *map_slot(const name_map *m, const char *s, uint32_t len) {
  uint32_t mask = m->cap - 1, i = hash_name(s, len) & mask;
  while (m->e[i].s && !(m->e[i].len == len && memcmp(m->e[i].s, s, len) == 0)) i = (i + 1) & mask;
  return &m->e[i];
}

static int map_find(const name_map *m, const char *s, uint32_t len, uint32_t *value) {
  if (!m->cap) return 0;
  name_entry *e = map_slot(m, s, len);
  if (!e->s) return 0;
  *value = e->value;
  return 1;
}

/* Insert or overwrite; -1 when out of memory. */
static int map_put(name_map *m, const char *s, uint32_t len, uint32_t value) {
  if ((m->count + 1) * 2 > m->cap) {
    uint32_t cap = m->cap ? m->cap * 2 : 64;
    name_entry *old = m->e;
    uint32_t old_cap = m->cap;
    m->e = calloc(cap, sizeof *m->e);
    if (!m->e) {
      m->e = old;
      return -1;
    }
    m->cap = cap;
    for (uint32_t i = 0; i < old_cap; i++)
      if (old[i].s) *map_slot(m, old[i].s, old[i].len) = old[i];
    free(old);
  }
  name_entry *e = map_slot(m, s, len);
  if (!e->s) m->count++;
  *e = (name_entry){s, len, value};
  return 0;
}

static int is_ident(const tok *t) {
  if (!t->len) return 0;
  for (uint32_t i = 0; i < t->len; i++) {
    char c = t->s[i];
    int alpha = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_';
    if (!alpha && !(i && c >= '0' && c <= '9')) return 0;
  }
  return 1;
}

static int is_word(const tok *t, const char *w) { return t->len == strlen(w) && memcmp(t->s, w, t->len) == 0; }

/* ------------------------------------------------------------------ */
/* Lexer: one line into tokens                                         */
/* ------------------------------------------------------------------ */
static int is_space(char c) { return c == ' ' || c == '\t' || c == '\r' || c == '\v' || c == '\f'; }
static int is_single(char c) { return c == '[' || c == ']' || c == '='; }

static vyre_status lex_line(assembler *a, const char *s, size_t n) {
  a->nt = 0;
  size_t i = 0;
  while (i < n) {
    char c = s[i];
    if (is_space(c)) {
      i++;
      continue;
    }
    if (c == ';' || c == '#') break;
    if ((unsigned char)c < 0x20 || c == 0x7f)
      return fail_at(a, a->line, (uint32_t)i + 1, VYRE_INVALID_PROGRAM,
                     "unexpected control character 0x%02x. Fix: program text is plain text; "
                     "remove the character",
                     (unsigned)(unsigned char)c);
    if (a->nt == MAX_TOKENS)
      return fail_at(a, a->line, (uint32_t)i + 1, VYRE_INVALID_PROGRAM,
                     "more than %u words on one line. Fix: write one statement per line",
                     MAX_TOKENS);
    size_t start = i++;
    if (!is_single(c))
      while (i < n && !is_space(s[i]) && !is_single(s[i]) && s[i] != ';' && s[i] != '#' &&
             (unsigned char)s[i] >= 0x20 && s[i] != 0x7f)
        i++;
    a->t[a->nt++] = (tok){s + start, (uint32_t)(i - start), (uint32_t)start + 1};
  }
  return VYRE_OK;
}

/* ------------------------------------------------------------------ */
/* Instructions and blocks                                             */
/* ------------------------------------------------------------------ */
static int grow_insts(assembler *a) {
  uint32_t cap = a->inst_cap ? a->inst_cap * 2 : 256;
  uint32_t *line = realloc(a->inst_line, cap * sizeof *line);
  if (line) a->inst_line = line;
  uint32_t *col = realloc(a->inst_col, cap * sizeof *col);
  if (col) a->inst_col = col;
  uint8_t *type = realloc(a->inst_type, cap);
  if (type) a->inst_type = type;
  uint8_t *open = realloc(a->open, cap);
  if (open) a->open = open;
  const char **name = realloc(a->inst_name, cap * sizeof *name);
  if (name) a->inst_name = name;
  uint32_t *name_len = realloc(a->inst_name_len, cap * sizeof *name_len);
  if (name_len) a->inst_name_len = name_len;
  if (!line || !col || !type || !open || !name || !name_len) return -1;
  a->inst_cap = cap;
  return 0;
}

/* Append one instruction; *out receives its index. */
static vyre_status emit(assembler *a, const tok *op, vyre_op code, uint32_t type, uint32_t mod,
                        uint32_t x, uint32_t y, uint32_t z, uint32_t w, uint32_t *out) {
  if (a->ninst >= VYRE_MAX_INSTS)
    return fail_at(a, a->line, op->col, VYRE_LIMIT,
                   "more than %u instructions. Fix: split the program", VYRE_MAX_INSTS);
  if (a->ninst == a->inst_cap && grow_insts(a)) return oom(a);
  uint32_t i = vyre_b_inst(a->b, code, type, mod, x, y, z, w);
  if (vyre_b_inst_count(a->b) != a->ninst + 1) return oom(a); /* the builder ran out of memory */
  a->inst_line[i] = a->line;
  a->inst_col[i] = op->col;
  a->inst_type[i] = (uint8_t)type;
  a->open[i] = 0;
  a->inst_name[i] = NULL;
  a->inst_name_len[i] = 0;
  a->ninst++;
  if (out) *out = i;
  return VYRE_OK;
}

static uint32_t current_block(const assembler *a) { return a->depth ? a->stack[a->depth - 1].inst : NONE; }

static vyre_status push_block(assembler *a, const tok *op, uint32_t inst, uint16_t code) {
  if (a->depth >= VYRE_MAX_NESTING)
    return fail_at(a, a->line, op->col, VYRE_LIMIT,
                   "blocks nest deeper than %u. Fix: flatten the control flow", VYRE_MAX_NESTING);
  a->stack[a->depth++] = (open_block){inst, code, a->line, op->col};
  a->open[inst] = 1;
  return VYRE_OK;
}

/* ------------------------------------------------------------------ */
/* Operands                                                            */
/* ------------------------------------------------------------------ */
static int value_name_ok(const tok *t) {
  if (t->len < 2 || t->s[0] != '%') return 0;
  for (uint32_t i = 1; i < t->len; i++) {
    char c = t->s[i];
    if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_'))
      return 0;
  }
  return 1;
}

/* The line of a later `NAME =` that defines value token t, or 0. */
static uint32_t later_definition(const assembler *a, const tok *t) {
  uint32_t line = a->line;
  for (size_t pos = a->next_line_at; pos < a->src_len;) {
    const char *s = a->src + pos, *nl = memchr(s, '\n', a->src_len - pos);
    size_t n = nl ? (size_t)(nl - s) : a->src_len - pos, i = 0;
    line++;
    while (i < n && is_space(s[i])) i++;
    if (n - i > t->len && memcmp(s + i, t->s, t->len) == 0) {
      i += t->len;
      while (i < n && is_space(s[i])) i++;
      if (i < n && s[i] == '=') return line;
    }
    pos += n + (nl ? 1 : 0);
  }
  return 0;
}

/* A %value operand that is visible here; its instruction and type. */
static vyre_status value_ref(assembler *a, const tok *t, uint32_t *inst, uint32_t *type) {
  char sh[64];
  if (!value_name_ok(t)) {
    if (t->len && t->s[0] == '%')
      return FAIL(t, "'%s' is not a value name. Fix: value names are %% followed by letters, "
                     "digits or _ (%%x, %%0)", show(t, sh));
    return FAIL(t, "expected a value (%%name), found '%s'. Fix: operands are values defined on "
                   "earlier lines; write a constant as `%%c = const u32 %s` first and use %%c",
                show(t, sh), show(t, sh));
  }
  uint32_t v;
  if (!map_find(&a->value_names, t->s + 1, t->len - 1, &v)) {
    uint32_t later = later_definition(a, t);
    if (later)
      return FAIL(t, "%s is used before its definition at line %u. Fix: move the definition above "
                     "this line (operands name values defined on earlier lines)", show(t, sh), later);
    return FAIL(t, "unknown value %s. Fix: define it on an earlier line (`%s = ...`)", show(t, sh),
                show(t, sh));
  }
  const value_def *d = &a->vals[v];
  if (d->block != NONE && !a->open[d->block])
    return FAIL(t, "%s (line %u) was defined inside a block that has ended (the block opened at "
                   "line %u). Fix: values do not leave their block; carry it out in a local "
                   "(`let` before the block, `assign` inside)",
                show(t, sh), d->line, a->inst_line[d->block]);
  if (d->segment != a->segment)
    return FAIL(t, "%s (line %u) was defined before the grid barrier at line %u. Fix: values do "
                   "not cross grid barriers; carry it in a local",
                show(t, sh), d->line, a->grid_lines[d->segment]);
  *inst = d->inst;
  *type = a->inst_type[d->inst];
  return VYRE_OK;
}

static vyre_status want_type(assembler *a, const tok *t, uint32_t have, uint32_t want,
                             const tok *op, const char *role) {
  if (have == want) return VYRE_OK;
  char sh[64], so[64];
  return FAIL(t, "%s is %s, but %s needs %s %s. Fix: pass a %s value (convert with `cast %s`)",
              show(t, sh), vyre_type_name(have), show(op, so), vyre_type_name(want), role,
              vyre_type_name(want), vyre_type_name(want));
}

static vyre_status want_mask(assembler *a, const tok *t, uint32_t have, uint32_t mask,
                             const char *mnemonic) {
  if (have < VYRE_T_COUNT_ && (mask & VYRE_TBIT(have))) return VYRE_OK;
  char sh[64], names[96];
  vyre_type_list(mask, NULL, names, sizeof names);
  return FAIL(t, "%s is %s, and %s does not take %s operands (it takes %s). Fix: convert with "
                 "`cast`, or use an op for %s",
              show(t, sh), vyre_type_name(have), mnemonic, vyre_type_name(have), names,
              vyre_type_name(have));
}

static vyre_status buffer_ref(assembler *a, const tok *t, uint32_t *idx) {
  char sh[64];
  if (!map_find(&a->buffer_names, t->s, t->len, idx))
    return FAIL(t, "unknown buffer '%s'. Fix: declare it before its use, e.g. `buffer %s rw u32`",
                show(t, sh), is_ident(t) ? show(t, sh) : "name");
  return VYRE_OK;
}

static vyre_status type_ref(assembler *a, const tok *t, int value_only, uint32_t *type) {
  char sh[64];
  char types[96];
  int ty = vyre_type_by_name(t->s, t->len);
  if (ty < 0)
    return FAIL(t, "'%s' is not a type. Fix: use one of %s", show(t, sh),
                vyre_type_list(VYRE_TM_STORAGE, NULL, types, sizeof types));
  if (value_only && !vyre_type_is_value((uint32_t)ty))
    return FAIL(t, "%s is a storage type; values are %s. Fix: use %s (a store to a %s buffer "
                   "narrows it)",
                vyre_type_name((uint32_t)ty), vyre_type_list(VYRE_TM_VALUE, " or ", types, sizeof types),
                vyre_type_name(vyre_type_compute((uint32_t)ty)), vyre_type_name((uint32_t)ty));
  *type = (uint32_t)ty;
  return VYRE_OK;
}

/* Declare a local slot named t; *slot receives it. */
static vyre_status declare_local(assembler *a, const tok *t, uint32_t type, uint32_t *slot) {
  char sh[64];
  if (!is_ident(t))
    return FAIL(t, "'%s' is not a local name. Fix: names are identifiers ([A-Za-z_][A-Za-z0-9_]*)",
                show(t, sh));
  uint32_t prev;
  if (map_find(&a->local_names, t->s, t->len, &prev))
    return FAIL(t, "local %s is already declared at line %u. Fix: pick another name",
                show(t, sh), a->locals[prev].line);
  if (a->nlocals >= VYRE_MAX_LOCALS)
    return fail_at(a, a->line, t->col, VYRE_LIMIT, "more than %u locals. Fix: reuse locals or "
                   "split the program", VYRE_MAX_LOCALS);
  if (a->nlocals == a->local_cap) {
    uint32_t cap = a->local_cap ? a->local_cap * 2 : 32;
    local_def *grown = realloc(a->locals, cap * sizeof *grown);
    if (!grown) return oom(a);
    a->locals = grown;
    a->local_cap = cap;
  }
  uint32_t s = vyre_b_local(a->b, (vyre_type)type);
  if (s != a->nlocals || map_put(&a->local_names, t->s, t->len, s)) return oom(a);
  a->locals[s] = (local_def){(uint8_t)type, LOCAL_DECLARED, NONE, a->line, 0, t->s, t->len};
  a->nlocals++;
  *slot = s;
  return VYRE_OK;
}

/* A local that must be defined (let or loop) and in scope. */
static vyre_status live_local(assembler *a, const tok *t, uint32_t *slot) {
  char sh[64];
  if (!map_find(&a->local_names, t->s, t->len, slot))
    return FAIL(t, "unknown local %s. Fix: declare it (`local %s TYPE`) and give it a value with "
                   "`let`", show(t, sh), is_ident(t) ? show(t, sh) : "name");
  const local_def *l = &a->locals[*slot];
  if (l->state == LOCAL_DECLARED)
    return FAIL(t, "local %s (declared at line %u) is used before its let. Fix: initialise it "
                   "with `let %s %%value` first", show(t, sh), l->line, show(t, sh));
  if (l->block != NONE && !a->open[l->block])
    return FAIL(t, "local %s was defined at line %u inside a block that has ended. Fix: `let` it "
                   "in a block that encloses this use", show(t, sh), l->def_line);
  return VYRE_OK;
}

/* ------------------------------------------------------------------ */
/* Statements                                                          */
/* ------------------------------------------------------------------ */
static vyre_status parse_uint_tok(assembler *a, const tok *t, uint64_t max, const char *what,
                                  uint64_t *out) {
  char sh[64];
  if (vyre__text_parse_uint(t->s, t->len, max, out))
    return FAIL(t, "%s '%s' is not a number in 0..%llu. Fix: write a decimal or 0x hex number",
                what, show(t, sh), (unsigned long long)max);
  return VYRE_OK;
}

static vyre_status stmt_workgroup(assembler *a) {
  const tok *kw = &a->t[0];
  if (a->have_wg)
    return FAIL(kw, "a second workgroup statement (the first is at line %u). Fix: keep one",
                a->wg_line);
  if (a->nt < 2 || a->nt > 4)
    return FAIL(kw, "workgroup takes 1 to 3 sizes. Fix: write `workgroup 64` or `workgroup 8 8 1`");
  uint32_t wg[3] = {1, 1, 1};
  uint64_t inv = 1;
  for (uint32_t i = 1; i < a->nt; i++) {
    uint64_t v;
    vyre_status st = parse_uint_tok(a, &a->t[i], UINT32_MAX, "workgroup size", &v);
    if (st) return st;
    if (v == 0)
      return FAIL(&a->t[i], "a workgroup size of 0. Fix: every dimension is at least 1");
    wg[i - 1] = (uint32_t)v;
    inv *= v;
  }
  if (inv > VYRE_MAX_WORKGROUP_INVOCATIONS)
    return fail_at(a, a->line, kw->col, VYRE_LIMIT,
                   "workgroup %u x %u x %u is %llu invocations, over %u. Fix: use a smaller "
                   "workgroup", wg[0], wg[1], wg[2], (unsigned long long)inv,
                   VYRE_MAX_WORKGROUP_INVOCATIONS);
  vyre_builder_set_workgroup(a->b, wg[0], wg[1], wg[2]);
  a->have_wg = 1;
  a->wg_line = a->line;
  a->wg_col = kw->col;
  return VYRE_OK;
}

static vyre_status stmt_buffer(assembler *a) {
  char sh[64];
  const tok *kw = &a->t[0];
  if (a->nt < 4)
    return FAIL(kw, "buffer needs a name, an access mode and a type. Fix: write e.g. `buffer x ro "
                    "f32` or `buffer out wo u32 [256]`");
  const tok *name = &a->t[1], *acc = &a->t[2], *ty = &a->t[3];
  uint32_t prev;
  if (!is_ident(name) || name->len > VYRE_MAX_NAME)
    return FAIL(name, "'%s' is not a buffer name. Fix: names are identifiers "
                      "([A-Za-z_][A-Za-z0-9_]*) of 1..%u characters", show(name, sh), VYRE_MAX_NAME);
  if (map_find(&a->buffer_names, name->s, name->len, &prev))
    return FAIL(name, "buffer %s is already declared at line %u. Fix: give each buffer its own name",
                show(name, sh), a->bufs[prev].line);
  if (a->nbuf >= VYRE_MAX_BUFFERS)
    return fail_at(a, a->line, kw->col, VYRE_LIMIT, "more than %u buffers. Fix: split the program",
                   VYRE_MAX_BUFFERS);
  int access = vyre_access_by_name(acc->s, acc->len);
  if (access < 0)
    return FAIL(acc, "'%s' is not an access mode. Fix: use ro, rw, wo, uniform or workgroup",
                show(acc, sh));
  uint32_t elem;
  vyre_status st = type_ref(a, ty, 0, &elem);
  if (st) return st;
  uint64_t count = 0, range_off = 0, range_size = 0, binding = UINT32_MAX;
  uint32_t flags = 0;
  int have_count = 0, have_range = 0, have_binding = 0;
  for (uint32_t i = 4; i < a->nt; i++) {
    const tok *t = &a->t[i];
    if (is_word(t, "[")) {
      if (have_count || i + 2 >= a->nt || !is_word(&a->t[i + 2], "]"))
        return FAIL(t, "a count is written [N], once, e.g. [256]. Fix: write `[%s]`",
                    i + 1 < a->nt ? show(&a->t[i + 1], sh) : "N");
      if ((st = parse_uint_tok(a, &a->t[i + 1], UINT32_MAX, "element count", &count))) return st;
      have_count = 1;
      i += 2;
    } else if (is_word(t, "output")) {
      if (flags & VYRE_BUF_OUTPUT) return FAIL(t, "output given twice. Fix: write it once");
      flags |= VYRE_BUF_OUTPUT;
    } else if (is_word(t, "range")) {
      if (have_range || i + 2 >= a->nt)
        return FAIL(t, "an output range is written once as `range OFFSET SIZE` (bytes). Fix: e.g. "
                       "`range 0 64`");
      if ((st = parse_uint_tok(a, &a->t[i + 1], UINT32_MAX, "range offset", &range_off)) ||
          (st = parse_uint_tok(a, &a->t[i + 2], UINT32_MAX, "range size", &range_size)))
        return st;
      have_range = 1;
      i += 2;
    } else if (t->len >= 1 && t->s[0] == '@') {
      tok num = {t->s + 1, t->len - 1, t->col + 1};
      if (have_binding) return FAIL(t, "the binding is given twice. Fix: write one @N");
      if (access == VYRE_ACCESS_WORKGROUP)
        return FAIL(t, "workgroup buffers have no binding. Fix: drop %s", show(t, sh));
      if (!num.len) return FAIL(t, "a binding is written @N, e.g. @3. Fix: add the number");
      if ((st = parse_uint_tok(a, &num, UINT32_MAX, "binding", &binding))) return st;
      have_binding = 1;
    } else {
      return FAIL(t, "unexpected '%s' in a buffer declaration. Fix: after the type come [COUNT], "
                     "output, range OFFSET SIZE and @BINDING", show(t, sh));
    }
  }
  char cname[VYRE_MAX_NAME + 1];
  memcpy(cname, name->s, name->len);
  cname[name->len] = '\0';
  /* The builder reads binding UINT32_MAX as "the next one"; an explicit
   * @4294967295 is written into the image after finishing. */
  if (binding == UINT32_MAX && have_binding) a->binding_max_buffer = a->nbuf + 1;
  uint32_t idx = vyre_b_buffer(a->b, cname, (uint32_t)binding, (vyre_access)access, (vyre_type)elem,
                               (uint32_t)count, flags);
  if (have_range) vyre_b_buffer_range(a->b, idx, (uint32_t)range_off, (uint32_t)range_size);
  if (idx != a->nbuf || map_put(&a->buffer_names, name->s, name->len, idx)) return oom(a);
  a->bufs[idx] = (buf_def){(uint8_t)access, (uint8_t)elem, a->line, name->col};
  a->nbuf++;
  return VYRE_OK;
}

static vyre_status stmt_local(assembler *a) {
  const tok *kw = &a->t[0];
  if (a->nt != 3)
    return FAIL(kw, "local takes a name and a type. Fix: write e.g. `local acc f32`");
  uint32_t type, slot;
  vyre_status st = type_ref(a, &a->t[2], 1, &type);
  return st ? st : declare_local(a, &a->t[1], type, &slot);
}

static int lookup_name(const char *const *names, uint32_t count, const char *s, uint32_t len) {
  for (uint32_t i = 0; i < count; i++)
    if (strlen(names[i]) == len && memcmp(names[i], s, len) == 0) return (int)i;
  return -1;
}

static const char *const order_names[] = {
#define ORDER_NAME_(name, text) text,
    VYRE_ORDER_MAP(ORDER_NAME_)
#undef ORDER_NAME_
};
static const char *const reduce_names[] = {
#define REDUCE_NAME_(name, text) text,
    VYRE_REDUCE_MAP(REDUCE_NAME_)
#undef REDUCE_NAME_
};
static const char *const axis_names[] = {"x", "y", "z"};

/* Bind `%name =` of a value line to instruction `inst`. */
static vyre_status bind_value(assembler *a, const tok *name, uint32_t inst) {
  char sh[64];
  uint32_t prev;
  if (map_find(&a->value_names, name->s + 1, name->len - 1, &prev)) {
    const value_def *d = &a->vals[prev];
    if ((d->block == NONE || a->open[d->block]) && d->segment == a->segment)
      return FAIL(name, "%s is already defined at line %u. Fix: pick another name (values are "
                        "defined once; use a local with let/assign for a value that changes)",
                  show(name, sh), d->line);
  }
  if (a->nvals == a->val_cap) {
    uint32_t cap = a->val_cap ? a->val_cap * 2 : 256;
    value_def *grown = realloc(a->vals, cap * sizeof *grown);
    if (!grown) return oom(a);
    a->vals = grown;
    a->val_cap = cap;
  }
  a->vals[a->nvals] = (value_def){inst, current_block(a), a->segment, a->line};
  if (map_put(&a->value_names, name->s + 1, name->len - 1, a->nvals)) return oom(a);
  a->nvals++;
  a->inst_name[inst] = name->s;
  a->inst_name_len[inst] = name->len;
  return VYRE_OK;
}

/* One instruction line being assembled: the op, its operand tokens, and
 * the fields the class parser fills. */
typedef struct inst_line {
  const tok *op, *arg;
  uint32_t nargs;
  const vyre_op_info *info;
  const char *mn;
  uint32_t mod, type;
  uint32_t f[4];         /* a b c d */
  uint32_t counter_slot; /* LOOP: the counter's local */
} inst_line;

/* Per-class operand parsers: each reads the operand tokens its class's
 * schema (VYRE_OP_CLASS_MAP) says it takes, in order, and sets the fields
 * and the result type.  Counts and suffixes were checked before. */
typedef vyre_status (*class_parse)(assembler *a, inst_line *x);

static vyre_status parse_const(assembler *a, inst_line *x) {
  vyre_status st = type_ref(a, &x->arg[0], 1, &x->type);
  if (st) return st;
  uint64_t bits;
  char msg[512];
  if (vyre__text_parse_const(x->arg[1].s, x->arg[1].len, x->type, &bits, msg, sizeof msg))
    return FAIL(&x->arg[1], "%s", msg);
  x->f[0] = (uint32_t)bits;
  x->f[1] = x->type == VYRE_T_U64 || x->type == VYRE_T_I64 ? (uint32_t)(bits >> 32) : 0;
  return VYRE_OK;
}

static vyre_status parse_local_get(assembler *a, inst_line *x) {
  vyre_status st = live_local(a, &x->arg[0], &x->f[0]);
  if (st) return st;
  x->type = a->locals[x->f[0]].type;
  return VYRE_OK;
}

static vyre_status parse_load(assembler *a, inst_line *x) {
  uint32_t ty;
  vyre_status st;
  if ((st = buffer_ref(a, &x->arg[0], &x->f[0])) || (st = value_ref(a, &x->arg[1], &x->f[1], &ty)) ||
      (st = want_type(a, &x->arg[1], ty, VYRE_T_U32, x->op, "as index")))
    return st;
  x->type = vyre_type_compute(a->bufs[x->f[0]].elem);
  return VYRE_OK;
}

static vyre_status parse_buf_len(assembler *a, inst_line *x) {
  vyre_status st = buffer_ref(a, &x->arg[0], &x->f[0]);
  if (st) return st;
  x->type = VYRE_T_U32;
  return VYRE_OK;
}

static vyre_status parse_builtin(assembler *a, inst_line *x) {
  (void)a;
  x->type = VYRE_T_U32;
  return VYRE_OK;
}

/* BINARY and COMPARE. */
static vyre_status parse_binary(assembler *a, inst_line *x) {
  char sh[64], so[64];
  uint32_t tx, ty;
  vyre_status st;
  if ((st = value_ref(a, &x->arg[0], &x->f[0], &tx)) || (st = value_ref(a, &x->arg[1], &x->f[1], &ty)))
    return st;
  if (tx != ty)
    return FAIL(&x->arg[1], "%s is %s but %s is %s; %s takes two operands of one type. Fix: "
                            "convert one with `cast`", show(&x->arg[1], sh), vyre_type_name(ty),
                show(&x->arg[0], so), vyre_type_name(tx), x->mn);
  if ((st = want_mask(a, &x->arg[0], tx, x->info->type_mask, x->mn))) return st;
  x->type = vyre_op_class_lookup(x->info->op_class)->result == VYRE_RES_BOOL ? VYRE_T_BOOL : tx;
  return VYRE_OK;
}

/* UNARY and PREDICATE. */
static vyre_status parse_unary(assembler *a, inst_line *x) {
  uint32_t tx;
  vyre_status st;
  if ((st = value_ref(a, &x->arg[0], &x->f[0], &tx)) ||
      (st = want_mask(a, &x->arg[0], tx, x->info->type_mask, x->mn)))
    return st;
  x->type = vyre_op_class_lookup(x->info->op_class)->result == VYRE_RES_BOOL ? VYRE_T_BOOL : tx;
  return VYRE_OK;
}

static vyre_status parse_select(assembler *a, inst_line *x) {
  char sh[64], so[64];
  uint32_t tx, ty, tz;
  vyre_status st;
  if ((st = value_ref(a, &x->arg[0], &x->f[0], &tx)) || (st = value_ref(a, &x->arg[1], &x->f[1], &ty)) ||
      (st = value_ref(a, &x->arg[2], &x->f[2], &tz)) ||
      (st = want_type(a, &x->arg[0], tx, VYRE_T_BOOL, x->op, "as condition")))
    return st;
  if (ty != tz)
    return FAIL(&x->arg[2], "%s is %s but %s is %s; both arms of select share one type. Fix: "
                            "convert one with `cast`", show(&x->arg[2], sh), vyre_type_name(tz),
                show(&x->arg[1], so), vyre_type_name(ty));
  x->type = ty;
  return VYRE_OK;
}

static vyre_status parse_cast(assembler *a, inst_line *x) {
  uint32_t tx;
  vyre_status st;
  if ((st = type_ref(a, &x->arg[0], 1, &x->type)) || (st = value_ref(a, &x->arg[1], &x->f[0], &tx)))
    return st;
  return VYRE_OK;
}

static vyre_status parse_fma(assembler *a, inst_line *x) {
  for (uint32_t k = 0; k < 3; k++) {
    uint32_t t;
    vyre_status st;
    if ((st = value_ref(a, &x->arg[k], &x->f[k], &t)) ||
        (st = want_type(a, &x->arg[k], t, VYRE_T_F32, x->op, "for every operand")))
      return st;
  }
  x->type = VYRE_T_F32;
  return VYRE_OK;
}

/* ATOMIC and ATOMIC_CAS (one more value operand: desired). */
static vyre_status parse_atomic(assembler *a, inst_line *x) {
  char sh[64];
  uint32_t ty, tz, tw;
  vyre_status st;
  if ((st = buffer_ref(a, &x->arg[0], &x->f[0]))) return st;
  const buf_def *bd = &a->bufs[x->f[0]];
  if (!(VYRE_TM_INT & VYRE_TBIT(bd->elem)))
    return FAIL(&x->arg[0], "buffer %s holds %s; atomics work on u32 i32 u64 i64 buffers. Fix: "
                            "declare it with an integer type", show(&x->arg[0], sh),
                vyre_type_name(bd->elem));
  x->type = bd->elem;
  if ((st = value_ref(a, &x->arg[1], &x->f[1], &ty)) ||
      (st = want_type(a, &x->arg[1], ty, VYRE_T_U32, x->op, "as index")) ||
      (st = value_ref(a, &x->arg[2], &x->f[2], &tz)) ||
      (st = want_type(a, &x->arg[2], tz, x->type, x->op, "(the buffer's element type)")))
    return st;
  if (vyre_op_class_lookup(x->info->op_class)->operand[3] == VYRE_OPND_VALUE &&
      ((st = value_ref(a, &x->arg[3], &x->f[3], &tw)) ||
       (st = want_type(a, &x->arg[3], tw, x->type, x->op, "(the buffer's element type)"))))
    return st;
  return VYRE_OK;
}

static vyre_status parse_ballot(assembler *a, inst_line *x) {
  uint32_t tx;
  vyre_status st;
  if ((st = value_ref(a, &x->arg[0], &x->f[0], &tx)) ||
      (st = want_type(a, &x->arg[0], tx, VYRE_T_BOOL, x->op, "as condition")))
    return st;
  x->type = VYRE_T_U32;
  return VYRE_OK;
}

static vyre_status parse_shuffle(assembler *a, inst_line *x) {
  uint32_t tx, ty;
  vyre_status st;
  if ((st = value_ref(a, &x->arg[0], &x->f[0], &tx)) || (st = value_ref(a, &x->arg[1], &x->f[1], &ty)) ||
      (st = want_type(a, &x->arg[1], ty, VYRE_T_U32, x->op, "as lane")))
    return st;
  x->type = tx;
  return VYRE_OK;
}

static vyre_status parse_reduce(assembler *a, inst_line *x) {
  uint32_t tx;
  vyre_status st;
  int bitwise = x->mod >= VYRE_REDUCE_AND;
  if ((st = value_ref(a, &x->arg[0], &x->f[0], &tx))) return st;
  if ((st = want_mask(a, &x->arg[0], tx, bitwise ? VYRE_TM_INT : VYRE_TM_NUM,
                      bitwise ? "a bitwise reduce" : "reduce")))
    return st;
  x->type = tx;
  return VYRE_OK;
}

static vyre_status parse_let(assembler *a, inst_line *x) {
  char sh[64], so[64];
  const tok *arg = x->arg;
  uint32_t ty, slot;
  vyre_status st;
  if ((st = value_ref(a, &arg[1], &x->f[1], &ty))) return st;
  if (!map_find(&a->local_names, arg[0].s, arg[0].len, &slot)) {
    if ((st = declare_local(a, &arg[0], ty, &slot))) return st;
  } else if (a->locals[slot].state != LOCAL_DECLARED) {
    return FAIL(&arg[0], "local %s already has its let (line %u). Fix: use `assign %s %%value` "
                         "to change it", show(&arg[0], sh), a->locals[slot].def_line,
                show(&arg[0], so));
  }
  x->f[0] = slot;
  if ((st = want_type(a, &arg[1], ty, a->locals[slot].type, x->op, "(the local's type)"))) return st;
  a->locals[slot].state = LOCAL_LET;
  a->locals[slot].block = current_block(a);
  a->locals[slot].def_line = a->line;
  return VYRE_OK;
}

static vyre_status parse_assign(assembler *a, inst_line *x) {
  char sh[64];
  const tok *arg = x->arg;
  uint32_t ty;
  vyre_status st;
  if ((st = live_local(a, &arg[0], &x->f[0]))) return st;
  const local_def *l = &a->locals[x->f[0]];
  if (l->state == LOCAL_COUNTER)
    return FAIL(&arg[0], "local %s is the counter of the loop at line %u and is read-only. Fix: "
                         "copy it into another local", show(&arg[0], sh), l->def_line);
  if ((st = value_ref(a, &arg[1], &x->f[1], &ty)) ||
      (st = want_type(a, &arg[1], ty, l->type, x->op, "(the local's type)")))
    return st;
  return VYRE_OK;
}

static vyre_status parse_store(assembler *a, inst_line *x) {
  char sh[64];
  const tok *arg = x->arg;
  uint32_t ty, tz;
  vyre_status st;
  if ((st = buffer_ref(a, &arg[0], &x->f[0]))) return st;
  const buf_def *bd = &a->bufs[x->f[0]];
  if (bd->access == VYRE_ACCESS_READ_ONLY || bd->access == VYRE_ACCESS_UNIFORM)
    return FAIL(&arg[0], "buffer %s is %s and cannot be written. Fix: declare it rw or wo",
                show(&arg[0], sh), vyre_access_name(bd->access));
  if ((st = value_ref(a, &arg[1], &x->f[1], &ty)) ||
      (st = want_type(a, &arg[1], ty, VYRE_T_U32, x->op, "as index")) ||
      (st = value_ref(a, &arg[2], &x->f[2], &tz)) ||
      (st = want_type(a, &arg[2], tz, vyre_type_compute(bd->elem), x->op,
                      "(the buffer's element type, widened)")))
    return st;
  return VYRE_OK;
}

static vyre_status parse_if(assembler *a, inst_line *x) {
  uint32_t tx;
  vyre_status st;
  if ((st = value_ref(a, &x->arg[0], &x->f[0], &tx)) ||
      (st = want_type(a, &x->arg[0], tx, VYRE_T_BOOL, x->op, "as condition")))
    return st;
  return VYRE_OK;
}

static vyre_status parse_else(assembler *a, inst_line *x) {
  if (!a->depth || a->stack[a->depth - 1].op != VYRE_OP_IF)
    return FAIL(x->op, "else without an open if%s. Fix: else follows the body of an if, once",
                a->depth ? (a->stack[a->depth - 1].op == VYRE_OP_ELSE ? " (this if already has its else)"
                                                                      : " (the innermost open block is not an if)")
                         : "");
  return VYRE_OK;
}

static vyre_status parse_end(assembler *a, inst_line *x) {
  if (!a->depth) return FAIL(x->op, "end without an open block. Fix: remove it, or open the block "
                                    "(if, loop, block) it should close");
  return VYRE_OK;
}

/* `loop LOCAL [TYPE] %start %end`: the counter is a fresh local. */
static vyre_status parse_loop(assembler *a, inst_line *x) {
  char sh[64];
  const tok *lt = &x->arg[0], *start = &x->arg[x->nargs - 2], *stop = &x->arg[x->nargs - 1];
  uint32_t decl_type = VYRE_T_VOID, ty, tz, slot;
  vyre_status st;
  if (x->nargs == 4 && (st = type_ref(a, &x->arg[1], 1, &decl_type))) return st;
  if ((st = value_ref(a, start, &x->f[1], &ty)) || (st = value_ref(a, stop, &x->f[2], &tz))) return st;
  if (!map_find(&a->local_names, lt->s, lt->len, &slot)) {
    if ((st = declare_local(a, lt, decl_type ? decl_type : ty, &slot))) return st;
  } else {
    if (a->locals[slot].state != LOCAL_DECLARED)
      return FAIL(lt, "local %s already has a value (line %u); a loop counter is a fresh local. "
                      "Fix: use a new name", show(lt, sh), a->locals[slot].def_line);
    if (decl_type && decl_type != a->locals[slot].type)
      return FAIL(&x->arg[1], "local %s is declared %s at line %u. Fix: drop the type or make it %s",
                  show(lt, sh), vyre_type_name(a->locals[slot].type), a->locals[slot].line,
                  vyre_type_name(a->locals[slot].type));
  }
  x->f[0] = slot;
  uint32_t ct = a->locals[slot].type;
  if (ct != VYRE_T_U32 && ct != VYRE_T_I32)
    return FAIL(lt, "loop counter %s is %s. Fix: loop counters are u32 or i32", show(lt, sh),
                vyre_type_name(ct));
  if ((st = want_type(a, start, ty, ct, x->op, "(the counter's type)")) ||
      (st = want_type(a, stop, tz, ct, x->op, "(the counter's type)")))
    return st;
  x->counter_slot = slot;
  return VYRE_OK;
}

/* `barrier [workgroup|grid]`: the scope is a word, not a suffix. */
static vyre_status parse_barrier(assembler *a, inst_line *x) {
  char sh[64];
  if (x->nargs) {
    if (is_word(&x->arg[0], "grid")) x->mod = VYRE_BARRIER_GRID;
    else if (!is_word(&x->arg[0], "workgroup"))
      return FAIL(&x->arg[0], "'%s' is not a barrier scope. Fix: write `barrier` (workgroup) or "
                              "`barrier grid`", show(&x->arg[0], sh));
  }
  if (x->mod == VYRE_BARRIER_GRID && a->depth) {
    const open_block *ob = &a->stack[a->depth - 1];
    return FAIL(x->op, "a grid barrier must be at the top level of the body (this one is inside "
                       "the %s at line %u). Fix: move it out of every if/loop/block",
                vyre_op_lookup(ob->op)->mnemonic, ob->line);
  }
  return VYRE_OK;
}

static vyre_status parse_trap(assembler *a, inst_line *x) {
  uint64_t code;
  vyre_status st = parse_uint_tok(a, &x->arg[0], UINT32_MAX, "trap code", &code);
  if (st) return st;
  x->f[0] = (uint32_t)code;
  return VYRE_OK;
}

static vyre_status parse_nothing(assembler *a, inst_line *x) {
  (void)a, (void)x;
  return VYRE_OK;
}

static const class_parse class_parsers[VYRE_OC_COUNT_] = {
    [VYRE_OC_CONST] = parse_const,       [VYRE_OC_LOCAL_GET] = parse_local_get,
    [VYRE_OC_LOAD] = parse_load,         [VYRE_OC_BUF_LEN] = parse_buf_len,
    [VYRE_OC_BUILTIN] = parse_builtin,   [VYRE_OC_BINARY] = parse_binary,
    [VYRE_OC_COMPARE] = parse_binary,    [VYRE_OC_UNARY] = parse_unary,
    [VYRE_OC_PREDICATE] = parse_unary,   [VYRE_OC_SELECT] = parse_select,
    [VYRE_OC_CAST] = parse_cast,         [VYRE_OC_FMA] = parse_fma,
    [VYRE_OC_ATOMIC] = parse_atomic,     [VYRE_OC_ATOMIC_CAS] = parse_atomic,
    [VYRE_OC_BALLOT] = parse_ballot,     [VYRE_OC_SHUFFLE] = parse_shuffle,
    [VYRE_OC_REDUCE] = parse_reduce,     [VYRE_OC_LET] = parse_let,
    [VYRE_OC_ASSIGN] = parse_assign,     [VYRE_OC_STORE] = parse_store,
    [VYRE_OC_IF] = parse_if,             [VYRE_OC_ELSE] = parse_else,
    [VYRE_OC_END] = parse_end,           [VYRE_OC_LOOP] = parse_loop,
    [VYRE_OC_BLOCK] = parse_nothing,     [VYRE_OC_RETURN] = parse_nothing,
    [VYRE_OC_BARRIER] = parse_barrier,   [VYRE_OC_TRAP] = parse_trap,
};

/* The .suffix of the op token, by the class's mod kind (axis, memory
 * order, reduction kind); *mod receives it. */
static vyre_status parse_suffix(assembler *a, const tok *op, const vyre_op_info *info,
                                uint32_t *mod) {
  char sh[64];
  const char *mn = info->mnemonic;
  const char *dot = memchr(op->s, '.', op->len);
  uint32_t base_len = dot ? (uint32_t)(dot - op->s) : op->len;
  tok suffix = {dot ? dot + 1 : op->s + op->len, dot ? op->len - base_len - 1 : 0,
                op->col + base_len + 1};
  vyre_mod_kind kind = (vyre_mod_kind)vyre_op_class_lookup(info->op_class)->mod;
  *mod = 0;
  if (kind == VYRE_MOD_AXIS && (info->flags & VYRE_OPF_AXIS)) {
    int ax = dot ? lookup_name(axis_names, 3, suffix.s, suffix.len) : -1;
    if (ax < 0)
      return FAIL(op, "%s needs an axis. Fix: write %s.x, %s.y or %s.z", mn, mn, mn, mn);
    *mod = (uint32_t)ax;
  } else if (kind == VYRE_MOD_ORDER) {
    if (dot) {
      int ord = lookup_name(order_names, VYRE_ORDER_COUNT_, suffix.s, suffix.len);
      if (ord < 0)
        return FAIL(&suffix, "'%s' is not a memory order. Fix: use %s.relaxed, .acquire, "
                             ".release, .acq_rel or .seq_cst", show(&suffix, sh), mn);
      *mod = (uint32_t)ord;
    }
  } else if (kind == VYRE_MOD_REDUCE) {
    int k = dot ? lookup_name(reduce_names, VYRE_REDUCE_COUNT_, suffix.s, suffix.len) : -1;
    if (k < 0)
      return FAIL(dot ? &suffix : op, "reduce needs its kind. Fix: write reduce.add, .min, .max, "
                                      ".and, .or or .xor");
    *mod = (uint32_t)k;
  } else if (dot) {
    return FAIL(op, "%s takes no .suffix. Fix: write %s", mn, mn);
  }
  return VYRE_OK;
}

/* The operand count the class's text form takes. */
static vyre_status check_arity(assembler *a, const inst_line *x) {
  const vyre_op_class_info *cls = vyre_op_class_lookup(x->info->op_class);
  uint32_t want_min = cls->text_min, want_max = cls->text_max;
  if (x->nargs >= want_min && x->nargs <= want_max) return VYRE_OK;
  const tok *at = x->nargs > want_max ? &x->arg[want_max] : x->op;
  /* The usage line with OP spelled as this op. */
  char use[128];
  const char *u = cls->usage, *opw = strstr(u, "OP");
  if (opw && x->info->op_class != VYRE_OC_ATOMIC)
    snprintf(use, sizeof use, "%.*s%s%s", (int)(opw - u), u, x->mn, opw + 2);
  else
    snprintf(use, sizeof use, "%s", u);
  return FAIL(at, "%s takes %u%s operand%s, found %u. Fix: write `%s`", x->mn, want_min,
              want_max > want_min ? " or more" : "", want_min == 1 && want_max == 1 ? "" : "s",
              x->nargs, use);
}

/* Block and grid-segment bookkeeping once instruction `inst` is emitted. */
static vyre_status after_emit(assembler *a, const inst_line *x, uint32_t inst) {
  switch ((vyre_op_class)x->info->op_class) {
  case VYRE_OC_IF:
  case VYRE_OC_BLOCK: return push_block(a, x->op, inst, x->info->id);
  case VYRE_OC_LOOP: {
    vyre_status st = push_block(a, x->op, inst, x->info->id);
    a->locals[x->counter_slot].state = LOCAL_COUNTER;
    a->locals[x->counter_slot].block = inst;
    a->locals[x->counter_slot].def_line = a->line;
    return st;
  }
  case VYRE_OC_ELSE:
    a->open[a->stack[a->depth - 1].inst] = 0;
    a->stack[a->depth - 1] = (open_block){inst, VYRE_OP_ELSE, a->line, x->op->col};
    a->open[inst] = 1;
    return VYRE_OK;
  case VYRE_OC_END: a->open[a->stack[--a->depth].inst] = 0; return VYRE_OK;
  case VYRE_OC_BARRIER:
    if (x->mod == VYRE_BARRIER_GRID) {
      if (a->segment + 1 >= a->grid_cap) {
        uint32_t cap = a->grid_cap ? a->grid_cap * 2 : 16;
        uint32_t *grown = realloc(a->grid_lines, cap * sizeof *grown);
        if (!grown) return oom(a);
        a->grid_lines = grown;
        a->grid_cap = cap;
      }
      a->grid_lines[a->segment++] = a->line;
    }
    return VYRE_OK;
  default: return VYRE_OK;
  }
}

/* One instruction line: t[first] is the op, `name` the `%v` before `=` or NULL. */
static vyre_status stmt_inst(assembler *a, uint32_t first, const tok *name) {
  char sh[64];
  inst_line x;
  memset(&x, 0, sizeof x);
  x.op = &a->t[first];
  x.arg = &a->t[first + 1];
  x.nargs = a->nt - first - 1;
  x.counter_slot = NONE;
  const char *dot = memchr(x.op->s, '.', x.op->len);
  uint32_t base_len = dot ? (uint32_t)(dot - x.op->s) : x.op->len;
  x.info = vyre_op_by_mnemonic(x.op->s, base_len);
  if (!x.info)
    return FAIL(x.op, "unknown instruction '%s'. Fix: see docs/program-text.md for the "
                      "instructions (add, load, store, if, loop, ...)", show(x.op, sh));
  x.mn = x.info->mnemonic;
  int is_value = vyre_op_class_lookup(x.info->op_class)->result != VYRE_RES_NONE;
  if (name && !is_value)
    return FAIL(name, "%s yields no value. Fix: remove `%s =`", x.mn, show(name, sh));
  vyre_status st;
  uint32_t inst = 0;
  if ((st = parse_suffix(a, x.op, x.info, &x.mod)) || (st = check_arity(a, &x)) ||
      (st = class_parsers[x.info->op_class](a, &x)))
    return st;
  if ((st = emit(a, x.op, (vyre_op)x.info->id, is_value ? x.type : 0, x.mod, x.f[0], x.f[1], x.f[2],
                 x.f[3], &inst)) ||
      (st = after_emit(a, &x, inst)))
    return st;
  return name ? bind_value(a, name, inst) : VYRE_OK;
}

static vyre_status parse_line(assembler *a) {
  char sh[64];
  const tok *t0 = &a->t[0];
  if (t0->s[0] == '%') {
    if (a->nt < 3 || !is_word(&a->t[1], "="))
      return FAIL(t0, "a value line reads `%s = OP ...`. Fix: add ` = ` and the instruction",
                  value_name_ok(t0) ? show(t0, sh) : "%name");
    if (!value_name_ok(t0))
      return FAIL(t0, "'%s' is not a value name. Fix: value names are %% followed by letters, "
                      "digits or _ (%%x, %%0)", show(t0, sh));
    return stmt_inst(a, 2, t0);
  }
  if (is_word(t0, "workgroup")) return stmt_workgroup(a);
  if (is_word(t0, "buffer")) return stmt_buffer(a);
  if (is_word(t0, "local")) return stmt_local(a);
  if (is_word(t0, "program")) {
    if (a->have_program) return FAIL(t0, "a second program statement. Fix: keep one");
    if (a->nt != 2 || !is_ident(&a->t[1]))
      return FAIL(t0, "program takes one name. Fix: write e.g. `program saxpy`");
    a->have_program = 1;
    return VYRE_OK;
  }
  if (is_word(t0, "=") || is_word(t0, "[") || is_word(t0, "]"))
    return FAIL(t0, "a line cannot start with '%s'. Fix: see docs/program-text.md for the "
                    "statements", show(t0, sh));
  return stmt_inst(a, 0, NULL);
}

/* ------------------------------------------------------------------ */
/* Validation errors mapped back to the source                         */
/* ------------------------------------------------------------------ */
static int read_index(const char *s, uint32_t *out) {
  if (*s < '0' || *s > '9') return 0;
  uint64_t v = 0;
  while (*s >= '0' && *s <= '9' && v <= UINT32_MAX) v = v * 10 + (uint64_t)(*s++ - '0');
  if (v > UINT32_MAX) return 0;
  *out = (uint32_t)v;
  return 1;
}

/* Rewrite a validator message for source readers: "%N" becomes the
 * source name of instruction N, "local N" the local's source name, and
 * every "instruction N" after the first gains "at line L". */
static void rewrite_message(const assembler *a, const char *msg, strbuf *out) {
  int seen_instruction = 0;
  for (const char *p = msg; *p;) {
    uint32_t idx;
    if (*p == '%' && read_index(p + 1, &idx) && idx < a->ninst && a->inst_name[idx]) {
      vyre__sb_append(out, a->inst_name[idx], a->inst_name_len[idx]);
      p++;
      while (*p >= '0' && *p <= '9') p++;
      continue;
    }
    if (strncmp(p, "local ", 6) == 0 && read_index(p + 6, &idx) && idx < a->nlocals) {
      vyre__sb_append(out, "local ", 6);
      vyre__sb_append(out, a->locals[idx].name, a->locals[idx].name_len);
      p += 6;
      while (*p >= '0' && *p <= '9') p++;
      continue;
    }
    if (strncmp(p, "instruction ", 12) == 0 && read_index(p + 12, &idx) && idx < a->ninst) {
      const char *end = p + 12;
      while (*end >= '0' && *end <= '9') end++;
      vyre__sb_append(out, p, (size_t)(end - p));
      if (seen_instruction) vyre__sb_printf(out, " at line %u", a->inst_line[idx]);
      seen_instruction = 1;
      p = end;
      continue;
    }
    vyre__sb_append(out, p, 1);
    p++;
  }
}

/* Where in the source a validator message points. */
static void locate(const assembler *a, const char *msg, uint32_t *line, uint32_t *col) {
  const char *at;
  uint32_t idx;
  *line = 1;
  *col = 1;
  if ((at = strstr(msg, "instruction ")) && read_index(at + 12, &idx) && idx < a->ninst) {
    *line = a->inst_line[idx];
    *col = a->inst_col[idx];
  } else if ((at = strstr(msg, "buffer ")) && read_index(at + 7, &idx) && idx < a->nbuf) {
    *line = a->bufs[idx].line;
    *col = a->bufs[idx].col;
  } else if ((at = strstr(msg, "local ")) && read_index(at + 6, &idx) && idx < a->nlocals) {
    *line = a->locals[idx].line;
  } else if (strstr(msg, "workgroup") && a->have_wg) {
    *line = a->wg_line;
    *col = a->wg_col;
  }
}

static vyre_status validate(assembler *a, const void *bytes, size_t size) {
  vyre_error verr = VYRE_ERROR_INIT;
  vyre_program *p = NULL;
  vyre_status st = vyre_program_decode(bytes, size, &p, &verr);
  vyre_program_free(p);
  if (!st) return VYRE_OK;
  uint32_t line, col;
  locate(a, verr.message, &line, &col);
  strbuf msg = {0};
  rewrite_message(a, verr.message, &msg);
  if (msg.failed) {
    free(msg.data);
    return oom(a);
  }
  fail_at(a, line, col, st, "%s", msg.data);
  free(msg.data);
  return st;
}

/* ------------------------------------------------------------------ */
/* Entry                                                               */
/* ------------------------------------------------------------------ */
static void assembler_free(assembler *a) {
  vyre_builder_free(a->b);
  free(a->buffer_names.e);
  free(a->local_names.e);
  free(a->value_names.e);
  free(a->locals);
  free(a->vals);
  free(a->inst_line);
  free(a->inst_col);
  free(a->inst_type);
  free(a->open);
  free(a->inst_name);
  free(a->inst_name_len);
  free(a->grid_lines);
}

/* Contract in vyre_text.h: source is borrowed for the call; *bytes is
 * malloc'd for the caller; no global state, so thread-safe. */
vyre_status vyre_text_assemble(const char *source, size_t length, const char *filename,
                               void **bytes, size_t *size, vyre_error *err) {
  if (!bytes || !size)
    return vyre_error_set(err, VYRE_INVALID_ARGUMENT, 0,
                          "assemble: bytes or size is NULL. Fix: pass where the image should go");
  *bytes = NULL;
  *size = 0;
  if (!source && length)
    return vyre_error_set(err, VYRE_INVALID_ARGUMENT, 0,
                          "assemble: source is NULL with length %zu. Fix: pass the text", length);
  if (length > VYRE_TEXT_MAX_SIZE)
    return vyre_error_set(err, VYRE_LIMIT, 0,
                          "assemble: %zu bytes of text is more than the %zu the assembler takes "
                          "(VYRE_TEXT_MAX_SIZE). Fix: split the program",
                          length, VYRE_TEXT_MAX_SIZE);
  assembler a;
  memset(&a, 0, sizeof a);
  a.file = filename ? filename : "<input>";
  a.src = source;
  a.src_len = length;
  a.err = err;
  a.b = vyre_builder_new(1, 1, 1);
  if (!a.b) return vyre_error_set(err, VYRE_OUT_OF_MEMORY, 0, "assemble: out of host memory. Fix: free host memory");
  vyre_status st = VYRE_OK;
  size_t pos = 0;
  uint32_t last_line = 1;
  while (pos < length && !st) {
    const char *line = source + pos;
    const char *nl = memchr(line, '\n', length - pos);
    size_t n = nl ? (size_t)(nl - line) : length - pos;
    a.line++;
    last_line = a.line;
    a.next_line_at = pos + n + (nl ? 1 : 0);
    st = lex_line(&a, line, n);
    if (!st && a.nt) st = parse_line(&a);
    pos += n + (nl ? 1 : 0);
  }
  if (!st && a.depth) {
    const open_block *ob = &a.stack[a.depth - 1];
    st = fail_at(&a, ob->line, ob->col, VYRE_INVALID_PROGRAM,
                 "this %s is never closed (%u block%s open at the end of the text). Fix: add "
                 "`end` after its body",
                 vyre_op_lookup(ob->op)->mnemonic, a.depth, a.depth == 1 ? "" : "s");
  }
  if (!st && !a.have_wg)
    st = fail_at(&a, 1, 1, VYRE_INVALID_PROGRAM,
                 "no workgroup statement. Fix: add `workgroup 64` (x [y [z]]) before the body");
  if (!st && !a.ninst)
    st = fail_at(&a, last_line, 1, VYRE_INVALID_PROGRAM,
                 "the program has no instructions. Fix: write at least one statement, e.g. "
                 "`return`");
  void *out = NULL;
  size_t out_size = 0;
  if (!st) {
    vyre_error berr = VYRE_ERROR_INIT;
    st = vyre_builder_finish(a.b, &out, &out_size, &berr);
    if (st) st = fail_at(&a, 1, 1, st, "%s", berr.message);
  }
  if (!st && a.binding_max_buffer) {
    uint32_t max = UINT32_MAX;
    memcpy((uint8_t *)out + VYRE_PROGRAM_HEADER_SIZE +
               (size_t)(a.binding_max_buffer - 1) * sizeof(vyre_buffer_decl) +
               offsetof(vyre_buffer_decl, binding),
           &max, sizeof max);
  }
  if (!st) st = validate(&a, out, out_size);
  assembler_free(&a);
  if (st) {
    free(out);
    return st;
  }
  *bytes = out;
  *size = out_size;
  return VYRE_OK;
}
