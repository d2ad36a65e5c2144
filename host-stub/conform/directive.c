/* directive.c -- the `;@` directives of case files as a table: one row per directive (name, arity, usage, handler). */
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "abi/support/safetext.h"
#include "internal.h"

typedef struct directive_row directive_row;
typedef vyre_status (*directive_fn)(cf_parse_ctx *px, cf_pending *pd, const directive_row *row,
                                    const cf_tok *t, uint32_t n);

/* One directive: t[0] is its name, t[1..n-1] its arguments; a line whose
 * argument count is outside [min_args, max_args] gets `usage`. */
struct directive_row {
  const char *name;
  directive_fn handler;
  uint32_t min_args, max_args;
  const char *usage;
};

#define ANY UINT32_MAX

static vyre_status usage(cf_parse_ctx *px, const directive_row *row) {
  return cf_parse_error(px, VYRE_INVALID_ARGUMENT, "%s", row->usage);
}

static int status_by_name(const cf_tok *t) {
  for (int s = 0; s < VYRE_STATUS_COUNT_; s++) {
    const char *name = vyre_status_name(s) + 5; /* past "VYRE_" */
    if (strlen(name) != t->n) continue;
    size_t i = 0;
    while (i < t->n && tolower((unsigned char)name[i]) == tolower((unsigned char)t->s[i])) i++;
    if (i == t->n) return s;
  }
  return -1;
}

static int hexval(int c) {
  c = tolower(c);
  return isdigit(c) ? c - '0' : (c >= 'a' && c <= 'f') ? c - 'a' + 10 : -1;
}

static int find_buffer(const vyre_program *p, const cf_tok *t) {
  for (uint32_t i = 0; i < p->buffer_count; i++)
    if (strlen(p->buffers[i].name) == t->n && strncmp(p->buffers[i].name, t->s, t->n) == 0)
      return (int)i;
  return -1;
}

/* case NAME, category NAME */
static vyre_status d_name(cf_parse_ctx *px, cf_pending *pd, const directive_row *row,
                          const cf_tok *t, uint32_t n) {
  (void)pd;
  (void)n;
  cf_case *c = px->c;
  int is_case = strcmp(row->name, "case") == 0;
  char *dst = is_case ? c->name : c->category;
  size_t cap = is_case ? sizeof c->name : sizeof c->category;
  if (t[1].n >= cap)
    return cf_parse_error(px, VYRE_INVALID_ARGUMENT, "name too long (%zu bytes). Fix: at most %zu",
                          t[1].n, cap - 1);
  /* Names are printed and become file names: a control byte, an escape
   * sequence or malformed UTF-8 in one is refused, not printed. */
  if (vyre__safe_text(dst, cap, t[1].s, t[1].n, VYRE__SAFE_LINE) != t[1].n ||
      memcmp(dst, t[1].s, t[1].n) != 0) {
    dst[0] = '\0';
    return cf_parse_error(px, VYRE_INVALID_ARGUMENT,
                          "the %s name has a control byte or malformed UTF-8. Fix: use "
                          "printable text", row->name);
  }
  return VYRE_OK;
}

/* about TEXT, origin TEXT, backend TEXT: the rest of the line. */
static vyre_status d_text(cf_parse_ctx *px, cf_pending *pd, const directive_row *row,
                          const cf_tok *t, uint32_t n) {
  (void)pd;
  cf_case *c = px->c;
  const cf_tok *k = &t[0];
  const char *from = n > 1 ? t[1].s : k->s + k->n;
  const char *to = n > 1 ? t[n - 1].s + t[n - 1].n : from;
  size_t len = (size_t)(to - from);
  if (strcmp(row->name, "about") == 0) {
    free(c->about);
    c->about = malloc(len + 1);
    if (!c->about) return cf_parse_error(px, VYRE_OUT_OF_MEMORY, "out of memory. Fix: free memory");
    vyre__safe_text(c->about, len + 1, from, len, VYRE__SAFE_LINE);
  } else {
    /* Text for people, printed as it is read: made safe first. */
    int is_origin = strcmp(row->name, "origin") == 0;
    char *dst = is_origin ? c->origin : c->backend;
    size_t cap = is_origin ? sizeof c->origin : sizeof c->backend;
    vyre__safe_text(dst, cap, from, len, VYRE__SAFE_LINE);
  }
  return VYRE_OK;
}

/* input[+] BUFFER GENERATOR..., expect-output[+] BUFFER GENERATOR... */
static vyre_status d_data(cf_parse_ctx *px, cf_pending *pd, const directive_row *row,
                          const cf_tok *t, uint32_t n) {
  const vyre_program *p = px->c->decoded;
  const cf_tok *k = &t[0];
  int is_in = strncmp(row->name, "input", 5) == 0;
  int append = k->s[k->n - 1] == '+';
  int bi = find_buffer(p, &t[1]);
  if (bi < 0)
    return cf_parse_error(px, VYRE_INVALID_ARGUMENT,
                          "no buffer named '%.*s'. Fix: name a buffer the "
                          "program declares",
                          (int)t[1].n, t[1].s);
  const vyre_buffer_info *bf = &p->buffers[bi];
  if (is_in && bf->input_index < 0)
    return cf_parse_error(px, VYRE_INVALID_ARGUMENT,
                          "buffer %s takes no input (%s%s). Fix: give inputs "
                          "only to ro, uniform and rw buffers without the output flag",
                          bf->name, vyre_access_name(bf->decl.access),
                          bf->is_output ? ", output" : "");
  if (!is_in && !bf->is_output)
    return cf_parse_error(px, VYRE_INVALID_ARGUMENT,
                          "buffer %s is not an output. Fix: expect outputs "
                          "only of rw and wo buffers",
                          bf->name);
  strbuf *b = is_in ? &pd->in[bi] : &pd->out[bi];
  int *set = is_in ? &pd->in_set[bi] : &pd->out_set[bi];
  if (*set && !append)
    return cf_parse_error(px, VYRE_INVALID_ARGUMENT,
                          "buffer %s already has data. Fix: use `%.*s+` to "
                          "append",
                          bf->name, (int)k->n, k->s);
  if (!*set && append)
    return cf_parse_error(px, VYRE_INVALID_ARGUMENT,
                          "`%.*s` appends to nothing. Fix: start with `%.*s`", (int)k->n, k->s,
                          (int)k->n - 1, k->s);
  *set = 1;
  size_t before = b->len;
  vyre_status st = cf_generate(px, bf->decl.elem_type, &t[2], n - 2, b);
  if (st == VYRE_OK && b->failed)
    st = cf_parse_error(px, VYRE_OUT_OF_MEMORY, "out of memory. Fix: smaller inputs");
  px->data += b->len - before;
  if (st == VYRE_OK && px->data > CF_MAX_CASE_DATA)
    st = cf_parse_error(px, VYRE_LIMIT, "the case's data is more than %llu bytes. Fix: use less",
              (unsigned long long)CF_MAX_CASE_DATA);
  return st;
}

/* expect STATUS [CODE] */
static vyre_status d_expect(cf_parse_ctx *px, cf_pending *pd, const directive_row *row,
                            const cf_tok *t, uint32_t n) {
  cf_case *c = px->c;
  if (pd->expect_line)
    return cf_parse_error(px, VYRE_INVALID_ARGUMENT,
                          "a second `expect` (line %u has one). Fix: keep one `;@ expect` per "
                          "case", pd->expect_line);
  int s = status_by_name(&t[1]);
  if (s < 0) return usage(px, row);
  pd->expect_line = px->line;
  c->expect = s;
  if (n == 3) {
    uint32_t code;
    if (s != VYRE_TRAP || cf_tok_u32(&t[2], &code) != 0)
      return cf_parse_error(px, VYRE_INVALID_ARGUMENT,
                            "only `expect trap` takes a code (0..4294967295). "
                            "Fix: drop it or fix the number");
    c->expect_code_set = 1;
    c->expect_code = code;
  }
  return VYRE_OK;
}

/* ulp N, tolerance N, fixpoint N */
static vyre_status d_number(cf_parse_ctx *px, cf_pending *pd, const directive_row *row,
                            const cf_tok *t, uint32_t n) {
  (void)pd;
  (void)n;
  cf_case *c = px->c;
  uint32_t v;
  if (cf_tok_u32(&t[1], &v) != 0) return usage(px, row);
  if (strcmp(row->name, "ulp") == 0) c->options.ulp_budget = v;
  else if (strcmp(row->name, "tolerance") == 0) c->tolerance = v;
  else c->options.fixpoint_iterations = v;
  return VYRE_OK;
}

/* workgroup X [Y [Z]], grid X [Y [Z]] */
static vyre_status d_dims(cf_parse_ctx *px, cf_pending *pd, const directive_row *row,
                          const cf_tok *t, uint32_t n) {
  (void)pd;
  cf_case *c = px->c;
  uint32_t *out = strcmp(row->name, "workgroup") == 0 ? c->options.workgroup : c->options.grid;
  out[0] = out[1] = out[2] = 1;
  for (uint32_t i = 1; i < n; i++)
    if (cf_tok_u32(&t[i], &out[i - 1]) != 0 || out[i - 1] == 0) return usage(px, row);
  return VYRE_OK;
}

/* requires CAPABILITY... */
static vyre_status d_requires(cf_parse_ctx *px, cf_pending *pd, const directive_row *row,
                              const cf_tok *t, uint32_t n) {
  (void)pd;
  (void)row;
  for (uint32_t i = 1; i < n; i++) {
    int bit = vyre_capability_by_name(t[i].s, t[i].n);
    if (bit < 0)
      return cf_parse_error(px, VYRE_INVALID_ARGUMENT,
                            "unknown capability '%.*s'. Fix: use a name of "
                            "docs/conformance.md (\"requires\")",
                            (int)t[i].n, t[i].s);
    px->c->extra_caps |= 1ull << bit;
  }
  return VYRE_OK;
}

/* indirect BUFFER OFFSET: the case runs as an indirect dispatch whose
 * counts are the words of BUFFER (an input, or any buffer the dispatch
 * binds) at byte OFFSET; it needs resident buffers and indirect_dispatch. */
static vyre_status d_indirect(cf_parse_ctx *px, cf_pending *pd, const directive_row *row,
                              const cf_tok *t, uint32_t n) {
  (void)pd;
  (void)n;
  cf_case *c = px->c;
  int bi = find_buffer(c->decoded, &t[1]);
  uint32_t off;
  if (cf_tok_u32(&t[2], &off) != 0) return usage(px, row);
  if (bi < 0 || c->decoded->buffers[bi].role == VYRE_ROLE_SHARED)
    return cf_parse_error(px, VYRE_INVALID_ARGUMENT,
                          "no storage buffer named '%.*s' to hold the counts. Fix: name a "
                          "buffer the program declares (not a workgroup one)",
                          (int)t[1].n, t[1].s);
  c->indirect = 1;
  c->indirect_buffer = (uint32_t)bi;
  c->indirect_offset = off;
  c->extra_caps |= VYRE_CAP_RESIDENT | VYRE_CAP_INDIRECT_DISPATCH;
  return VYRE_OK;
}

/* ops MNEMONIC...: the ops under test */
static vyre_status d_ops(cf_parse_ctx *px, cf_pending *pd, const directive_row *row,
                         const cf_tok *t, uint32_t n) {
  (void)pd;
  (void)row;
  cf_case *c = px->c;
  for (uint32_t i = 1; i < n; i++) {
    const vyre_op_info *info = vyre_op_by_mnemonic(t[i].s, t[i].n);
    if (!info)
      return cf_parse_error(px, VYRE_INVALID_ARGUMENT, "unknown op '%.*s'. Fix: use a mnemonic of "
                  "docs/program-format.md", (int)t[i].n, t[i].s);
    c->focus[info->id >> 6] |= 1ull << (info->id & 63);
  }
  c->focus_set = 1;
  return VYRE_OK;
}

/* capsule [VERSION]: the capsule format, 1 (the only one) when left out */
static vyre_status d_capsule(cf_parse_ctx *px, cf_pending *pd, const directive_row *row,
                             const cf_tok *t, uint32_t n) {
  (void)pd;
  (void)row;
  uint32_t version = 1;
  if (n == 2 && (cf_tok_u32(&t[1], &version) != 0 || version != CF_CAPSULE_VERSION))
    return cf_parse_error(px, VYRE_UNSUPPORTED,
                          "capsule format '%.*s' is not one this vyre reads (%u). Fix: replay it "
                          "with the vyre that wrote it, or write `;@ capsule %u`",
                          (int)t[1].n, t[1].s, CF_CAPSULE_VERSION, CF_CAPSULE_VERSION);
  px->c->is_capsule = 1;
  return VYRE_OK;
}

/* program-sha256 HEX64 */
static vyre_status d_sha(cf_parse_ctx *px, cf_pending *pd, const directive_row *row,
                         const cf_tok *t, uint32_t n) {
  (void)pd;
  (void)n;
  cf_case *c = px->c;
  if (t[1].n != 64) return usage(px, row);
  for (int i = 0; i < 32; i++) {
    int hi = hexval((unsigned char)t[1].s[2 * i]), lo = hexval((unsigned char)t[1].s[2 * i + 1]);
    if (hi < 0 || lo < 0)
      return cf_parse_error(px, VYRE_INVALID_ARGUMENT,
                            "`program-sha256` is not hex. Fix: copy the hash");
    c->sha256[i] = (uint8_t)(hi << 4 | lo);
  }
  c->sha_set = 1;
  return VYRE_OK;
}

/* What a capsule recorded about the failing run: for people, not replayed. */
static vyre_status d_ignored(cf_parse_ctx *px, cf_pending *pd, const directive_row *row,
                             const cf_tok *t, uint32_t n) {
  (void)px;
  (void)pd;
  (void)row;
  (void)t;
  (void)n;
  return VYRE_OK;
}

#define ONE_WORD(name) "`" name "` takes one word. Fix: `;@ " name " NAME`"
#define DATA(name) \
  "`" name "` needs a buffer and a generator. Fix: `;@ " name " BUFFER values 1 2 3`"
#define NUMBER(name) "`" name "` takes one number. Fix: `;@ " name " N`"
#define DIMS(name) "`" name "` takes 1 to 3 positive numbers. Fix: `;@ " name " X [Y [Z]]`"

/* docs/conformance.md, "Case files". */
static const directive_row directives[] = {
    {"case", d_name, 1, 1, ONE_WORD("case")},
    {"category", d_name, 1, 1, ONE_WORD("category")},
    {"about", d_text, 0, ANY, NULL},
    {"origin", d_text, 0, ANY, NULL},
    {"backend", d_text, 0, ANY, NULL},
    {"input", d_data, 2, ANY, DATA("input")},
    {"input+", d_data, 2, ANY, DATA("input+")},
    {"expect-output", d_data, 2, ANY, DATA("expect-output")},
    {"expect-output+", d_data, 2, ANY, DATA("expect-output+")},
    {"expect", d_expect, 1, 2,
     "bad expectation. Fix: `;@ expect ok`, `;@ expect trap [CODE]`, `;@ expect unsupported`, "
     "or another status name"},
    {"ulp", d_number, 1, 1, NUMBER("ulp")},
    {"tolerance", d_number, 1, 1, NUMBER("tolerance")},
    {"fixpoint", d_number, 1, 1, NUMBER("fixpoint")},
    {"workgroup", d_dims, 1, 3, DIMS("workgroup")},
    {"grid", d_dims, 1, 3, DIMS("grid")},
    {"requires", d_requires, 0, ANY, NULL},
    {"indirect", d_indirect, 2, 2,
     "`indirect` names the buffer holding the counts and their byte offset. Fix: `;@ indirect "
     "BUFFER 0`"},
    {"ops", d_ops, 1, ANY, "`ops` names the ops under test. Fix: `;@ ops add`"},
    {"capsule", d_capsule, 0, 1,
     "`capsule` takes at most the format version. Fix: `;@ capsule 1`"},
    {"program-sha256", d_sha, 1, 1,
     "`program-sha256` takes 64 hex digits. Fix: copy the hash whole"},
    {"device", d_ignored, 0, ANY, NULL},
    {"note", d_ignored, 0, ANY, NULL},
    {"mismatch", d_ignored, 0, ANY, NULL},
    {"status-backend", d_ignored, 0, ANY, NULL},
    {"status-reference", d_ignored, 0, ANY, NULL},
    {"output-backend", d_ignored, 0, ANY, NULL},
    {"output-reference", d_ignored, 0, ANY, NULL},
    {"output-backend+", d_ignored, 0, ANY, NULL},
    {"output-reference+", d_ignored, 0, ANY, NULL},
};

vyre_status cf_directive(cf_parse_ctx *px, cf_pending *pd, const cf_tok *t, uint32_t n) {
  const cf_tok *k = &t[0];
  for (size_t i = 0; i < sizeof directives / sizeof directives[0]; i++) {
    const directive_row *row = &directives[i];
    if (!cf_word_is(k->s, k->n, row->name)) continue;
    if (n - 1 < row->min_args || n - 1 > row->max_args) return usage(px, row);
    return row->handler(px, pd, row, t, n);
  }
  return cf_parse_error(px, VYRE_INVALID_ARGUMENT,
                        "unknown directive '%.*s'. Fix: see docs/conformance.md "
                        "(\"Case files\"); ordinary comments start with `;` without `@`",
                        (int)k->n, k->s);
}
