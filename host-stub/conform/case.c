/* case.c -- conformance cases: a case file parsed (its `;@` lines through directive.c), a case made from a program, what a case needs and what a backend offers. */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "abi/support/errfill.h"
#include "abi/support/safetext.h"
#include "internal.h"
#include "abi/support/file.h"
#include "abi/support/sized.h"
#include "vyre/vyre_text.h"

/* Most words on one `;@` line. */
#define MAX_TOKS 4096

/* ------------------------------------------------------------------ */
/* Cases                                                               */
/* ------------------------------------------------------------------ */

static void default_names(cf_case *c, const char *path) {
  const char *slash = strrchr(path, '/');
  const char *base = slash ? slash + 1 : path;
  size_t n = strlen(base);
  if (n > 5 && strcmp(base + n - 5, ".vyre") == 0) n -= 5;
  snprintf(c->name, sizeof c->name, "%.*s", (int)n, base);
  if (slash && slash > path) {
    const char *d = slash;
    while (d > path && d[-1] != '/') d--;
    snprintf(c->category, sizeof c->category, "%.*s", (int)(slash - d), d);
  } else {
    snprintf(c->category, sizeof c->category, "misc");
  }
  /* From file names, printed in every report: made safe to print. */
  vyre__safe_text(c->name, sizeof c->name, c->name, sizeof c->name, VYRE__SAFE_LINE);
  vyre__safe_text(c->category, sizeof c->category, c->category, sizeof c->category,
                  VYRE__SAFE_LINE);
}

static cf_case *case_new(const char *path) {
  cf_case *c = calloc(1, sizeof *c);
  if (!c) return NULL;
  c->path = strdup(path ? path : "<memory>");
  if (!c->path) {
    free(c);
    return NULL;
  }
  c->options.struct_size = sizeof c->options;
  c->expect = VYRE_OK;
  c->tolerance = UINT32_MAX; /* "not set": becomes the ulp budget */
  default_names(c, c->path);
  return c;
}

void cf_case_free(cf_case *c) {
  if (!c) return;
  for (uint32_t i = 0; i < CF_MAX_IO; i++) {
    free(c->input[i].bytes);
    free(c->golden[i].bytes);
  }
  vyre_program_free(c->decoded);
  free(c->program);
  free(c->text);
  free(c->about);
  free(c->path);
  free(c);
}

/* Check the inputs against the declarations; give fixed-count inputs
 * without data zeros. */
static vyre_status finish_inputs(cf_case *c, vyre_error *err) {
  const vyre_program *p = c->decoded;
  for (uint32_t i = 0; i < p->buffer_count; i++) {
    const vyre_buffer_info *bf = &p->buffers[i];
    if (bf->input_index < 0) continue;
    uint64_t want = (uint64_t)bf->decl.count * bf->elem_size;
    cf_data *d = &c->input[i];
    if (!d->present) {
      if (bf->decl.count == 0)
        return vyre_error_set(err, VYRE_INVALID_ARGUMENT, 0,
                              "%s: buffer %s is sized by its input but the case gives none. "
                              "Fix: add `;@ input %s ...`", c->path, bf->name, bf->name);
      d->bytes = calloc(1, want ? want : 1);
      if (!d->bytes) return vyre_error_set(err, VYRE_OUT_OF_MEMORY, 0, "out of memory");
      d->size = want;
      d->present = 1;
      continue;
    }
    if (bf->decl.count && d->size != want)
      return vyre_error_set(err, VYRE_INVALID_ARGUMENT, 0,
                            "%s: the input of %s has %llu bytes but [%u] %s needs %llu. Fix: "
                            "give exactly %u elements", c->path, bf->name,
                            (unsigned long long)d->size, bf->decl.count,
                            vyre_type_name(bf->decl.elem_type), (unsigned long long)want,
                            bf->decl.count);
    if (d->size % bf->elem_size)
      return vyre_error_set(err, VYRE_INVALID_ARGUMENT, 0,
                            "%s: the input of %s is %llu bytes, not whole %s elements. Fix: "
                            "give whole elements", c->path, bf->name,
                            (unsigned long long)d->size, vyre_type_name(bf->decl.elem_type));
  }
  return VYRE_OK;
}

/* Run every `;@` line of the text: split into words, then the directive
 * table (directive.c). */
static vyre_status scan_directives(cf_parse_ctx *px, cf_pending *pd, cf_tok *toks,
                                   const char *text, size_t length) {
  const char *s = text, *end = text + length;
  while (s < end) {
    px->line++;
    const char *eol = memchr(s, '\n', (size_t)(end - s));
    if (!eol) eol = end;
    const char *q = s;
    while (q < eol && (*q == ' ' || *q == '\t')) q++;
    if (eol - q >= 2 && q[0] == ';' && q[1] == '@') {
      uint32_t n = 0;
      const char *w = q + 2;
      for (;;) {
        while (w < eol && (*w == ' ' || *w == '\t' || *w == '\r')) w++;
        if (w >= eol) break;
        const char *ws = w;
        while (w < eol && *w != ' ' && *w != '\t' && *w != '\r') w++;
        if (n == MAX_TOKS)
          return cf_parse_error(px, VYRE_LIMIT, "more than %d words on one line. Fix: continue "
                                "with `input+`", MAX_TOKS);
        toks[n].s = ws;
        toks[n].n = (size_t)(w - ws);
        n++;
      }
      if (n == 0)
        return cf_parse_error(px, VYRE_INVALID_ARGUMENT, "empty directive. Fix: write `;@ KEY "
                              "ARGS`");
      vyre_status st = cf_directive(px, pd, toks, n);
      if (st != VYRE_OK) return st;
    }
    s = eol + 1;
  }
  return VYRE_OK;
}

/* Move one buffer's assembled bytes into d (an empty one gets a 1-byte
 * allocation). */
static vyre_status take_data(cf_data *d, strbuf *from, vyre_error *err) {
  d->present = 1;
  d->size = from->len;
  d->bytes = from->data ? (uint8_t *)from->data : calloc(1, 1);
  from->data = NULL;
  if (!d->bytes) return vyre_error_set(err, VYRE_OUT_OF_MEMORY, 0, "out of memory");
  return VYRE_OK;
}

static void pending_free(cf_pending *pd) {
  if (!pd) return;
  for (uint32_t i = 0; i < CF_MAX_IO; i++) {
    vyre__sb_free(&pd->in[i]);
    vyre__sb_free(&pd->out[i]);
  }
  free(pd);
}

vyre_status cf_case_parse(const char *text, size_t length, const char *path, cf_case **out,
                          vyre_error *err) {
  *out = NULL;
  cf_case *c = case_new(path);
  cf_pending *pd = calloc(1, sizeof *pd);
  cf_tok *toks = malloc(MAX_TOKS * sizeof *toks);
  vyre_status st = VYRE_OUT_OF_MEMORY;
  if (!c || !pd || !toks) {
    vyre_error_set(err, st, 0, "loading case %s: out of memory. Fix: free memory", path);
    goto fail;
  }
  c->text = malloc(length + 1);
  if (!c->text) {
    vyre_error_set(err, st, 0, "loading case %s: out of memory. Fix: free memory", path);
    goto fail;
  }
  memcpy(c->text, text, length);
  c->text[length] = '\0';
  c->text_size = length;

  st = vyre_text_assemble(text, length, c->path, &c->program, &c->program_size, err);
  if (st != VYRE_OK) goto fail;
  st = vyre_program_decode(c->program, c->program_size, &c->decoded, err);
  if (st != VYRE_OK) {
    vyre_error_prefix(err, "%s", c->path);
    goto fail;
  }

  cf_parse_ctx px = {c, c->path, 0, err, 0};
  st = scan_directives(&px, pd, toks, text, length);
  if (st != VYRE_OK) goto fail;
  for (uint32_t i = 0; i < c->decoded->buffer_count && i < CF_MAX_IO; i++) {
    if (pd->in_set[i] && (st = take_data(&c->input[i], &pd->in[i], err)) != VYRE_OK) goto fail;
    if (pd->out_set[i] && (st = take_data(&c->golden[i], &pd->out[i], err)) != VYRE_OK)
      goto fail;
  }
  if (c->tolerance == UINT32_MAX) c->tolerance = c->options.ulp_budget;
  st = finish_inputs(c, err);
  if (st != VYRE_OK) goto fail;
  /* An edited capsule is still worth replaying: the runner notes it. */
  c->sha_mismatch = c->sha_set && memcmp(c->sha256, c->decoded->sha256, 32) != 0;
  pending_free(pd);
  free(toks);
  *out = c;
  return VYRE_OK;
fail:
  pending_free(pd);
  free(toks);
  cf_case_free(c);
  /* The message quotes the file (words, program text, its path): every
   * report prints it, so it is made safe to print here, once. */
  size_t room = vyre__error_message_room(err);
  if (room) vyre__safe_text(err->message, room, err->message, room, VYRE__SAFE_TEXT);
  return st;
}

vyre_status cf_case_load(const char *path, cf_case **out, vyre_error *err) {
  void *data = NULL;
  size_t size = 0;
  *out = NULL;
  int is_stdin = strcmp(path, "-") == 0; /* "-" is standard input */
  vyre_status st =
      is_stdin ? vyre__file_read_fd(0, "<stdin>", CF_MAX_CASE_BYTES, CF_TOO_BIG_FIX, &data, &size,
                                    err)
               : vyre__file_read(path, CF_MAX_CASE_BYTES, CF_TOO_BIG_FIX, &data, &size, err);
  if (st != VYRE_OK) return st;
  st = cf_case_parse(data, size, path, out, err);
  free(data);
  return st;
}

vyre_status cf_case_set_program(cf_case *c, const void *bytes, size_t size, vyre_error *err) {
  vyre_program *p = NULL;
  vyre_status st = vyre_program_decode(bytes, size, &p, err);
  if (st != VYRE_OK) return st;
  void *copy = malloc(size);
  if (!copy) {
    vyre_program_free(p);
    return vyre_error_set(err, VYRE_OUT_OF_MEMORY, 0, "out of memory");
  }
  memcpy(copy, bytes, size);
  vyre_program_free(c->decoded);
  free(c->program);
  c->decoded = p;
  c->program = copy;
  c->program_size = size;
  return VYRE_OK;
}

vyre_status cf_case_from_program(const void *bytes, size_t size, const vyre_input *inputs,
                                 const vyre_dispatch_options *options, const char *name,
                                 const char *category, cf_case **out, vyre_error *err) {
  *out = NULL;
  cf_case *c = case_new("<generated>");
  if (!c) return vyre_error_set(err, VYRE_OUT_OF_MEMORY, 0, "out of memory");
  vyre_status st = cf_case_set_program(c, bytes, size, err);
  if (st != VYRE_OK) goto fail;
  st = vyre_text_disassemble(bytes, size, &c->text, err);
  if (st != VYRE_OK) goto fail;
  c->text_size = strlen(c->text);
  snprintf(c->name, sizeof c->name, "%s", name ? name : "generated");
  snprintf(c->category, sizeof c->category, "%s", category ? category : "generated");
  if (options) vyre__sized_read(&c->options, sizeof c->options, options);
  c->tolerance = c->options.ulp_budget;
  const vyre_program *p = c->decoded;
  for (uint32_t i = 0; i < p->buffer_count; i++) {
    int32_t k = p->buffers[i].input_index;
    if (k < 0) continue;
    cf_data *d = &c->input[i];
    d->size = inputs[k].size;
    d->bytes = malloc(d->size ? d->size : 1);
    if (!d->bytes) {
      st = vyre_error_set(err, VYRE_OUT_OF_MEMORY, 0, "out of memory");
      goto fail;
    }
    if (d->size) memcpy(d->bytes, inputs[k].data, d->size);
    d->present = 1;
  }
  st = finish_inputs(c, err);
  if (st != VYRE_OK) goto fail;
  *out = c;
  return VYRE_OK;
fail:
  cf_case_free(c);
  return st;
}

void cf_case_inputs(const cf_case *c, vyre_input *inputs, uint32_t *count) {
  const vyre_program *p = c->decoded;
  for (uint32_t i = 0; i < p->buffer_count; i++) {
    int32_t k = p->buffers[i].input_index;
    if (k < 0) continue;
    inputs[k].data = c->input[i].bytes;
    inputs[k].size = c->input[i].size;
  }
  *count = p->input_count;
}

/* The name the runner and reports use: "CATEGORY/NAME". */
void cf_case_full_name(const cf_case *c, char *out, size_t size) {
  snprintf(out, size, "%s/%s", c->category, c->name);
}

/* ------------------------------------------------------------------ */
/* Needs and offers                                                    */
/* ------------------------------------------------------------------ */

void cf_case_needs(const cf_case *c, vyre_needs *out) {
  vyre_dispatch_options o = c->options;
  o.next = NULL;
  memset(out, 0, sizeof *out);
  out->struct_size = sizeof *out;
  /* Cannot fail: a decoded program, a full-sized out, no chain. */
  (void)vyre_program_needs(c->decoded, &o, out, NULL);
  out->capabilities |= c->extra_caps;
}

void cf_offer_claim(cf_offer *offer, uint32_t op, uint32_t types) {
  if (op >= 256) return;
  const vyre_op_info *info = vyre_op_lookup(op);
  uint32_t all = info ? info->type_mask : 0;
  /* A mask naming only types the op cannot have claims nothing usable. */
  if (types && all && !(types & all)) return;
  cf_opset_add(&offer->ops, op);
  offer->op_types[op] = (types && all) ? (types & all) : 0;
}

int cf_offer_covers(const cf_offer *offer, const vyre_needs *needs, char *why, size_t why_size) {
  /* The offer as a registration lists it, for libvyre's one comparison. */
  uint16_t ops[256];
  uint32_t types[256], n = 0;
  for (uint32_t op = 0; op < 256; op++) {
    if (!cf_opset_has(&offer->ops, op)) continue;
    ops[n] = (uint16_t)op;
    types[n++] = offer->op_types[op];
  }
  return vyre_needs_unmet(needs, ops, types, n, offer->storage_types, offer->caps, why,
                          why_size) == 0;
}

int cf_offer_must_refuse(const cf_offer *offer, const vyre_needs *needs) {
  if (!(needs->capabilities & VYRE_CAP_CORRECTLY_ROUNDED) ||
      (offer->caps & VYRE_CAP_CORRECTLY_ROUNDED))
    return 0;
  vyre_needs rest = *needs;
  rest.capabilities &= ~VYRE_CAP_CORRECTLY_ROUNDED;
  return cf_offer_covers(offer, &rest, NULL, 0);
}
