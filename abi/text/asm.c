/* asm.c -- the assembler: program text to a validated program image, every error at FILE:LINE:COL with a Fix. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"
#include "vyre/vyre_text.h"

/* ------------------------------------------------------------------ */
/* Lines                                                              */
/* ------------------------------------------------------------------ */
static vyre_status parse_line(assembler *a) {
  char sh[64];
  const tok *t0 = &a->t[0];
  if (t0->s[0] == '%') {
    if (a->nt < 3 || !vyre__asm_is_word(&a->t[1], "="))
      return FAIL(t0, "a value line reads `%s = OP ...`. Fix: add ` = ` and the instruction",
                  vyre__asm_value_name_ok(t0) ? vyre__asm_show(t0, sh) : "%name");
    if (!vyre__asm_value_name_ok(t0))
      return FAIL(t0,
                  "'%s' is not a value name. Fix: value names are %% followed by letters, "
                  "digits or _ (%%x, %%0)",
                  vyre__asm_show(t0, sh));
    return vyre__asm_inst(a, 2, t0);
  }
  if (vyre__asm_is_word(t0, "workgroup")) return vyre__asm_workgroup(a);
  if (vyre__asm_is_word(t0, "buffer")) return vyre__asm_buffer(a);
  if (vyre__asm_is_word(t0, "local")) return vyre__asm_local(a);
  if (vyre__asm_is_word(t0, "program")) {
    if (a->have_program) return FAIL(t0, "a second program statement. Fix: keep one");
    if (a->nt != 2 || !vyre__asm_is_ident(&a->t[1]))
      return FAIL(t0, "program takes one name. Fix: write e.g. `program saxpy`");
    a->have_program = 1;
    return VYRE_OK;
  }
  if (vyre__asm_is_word(t0, "=") || vyre__asm_is_word(t0, "[") || vyre__asm_is_word(t0, "]"))
    return FAIL(t0,
                "a line cannot start with '%s'. Fix: see docs/program-text.md for the "
                "statements",
                vyre__asm_show(t0, sh));
  return vyre__asm_inst(a, 0, NULL);
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
    return vyre__asm_oom(a);
  }
  vyre__asm_fail_at(a, line, col, st, "%s", msg.data);
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
    st = vyre__asm_lex_line(&a, line, n);
    if (!st && a.nt) st = parse_line(&a);
    pos += n + (nl ? 1 : 0);
  }
  if (!st && a.depth) {
    const open_block *ob = &a.stack[a.depth - 1];
    st = vyre__asm_fail_at(
        &a, ob->line, ob->col, VYRE_INVALID_PROGRAM,
        "this %s is never closed (%u block%s open at the end of the text). Fix: add "
        "`end` after its body",
        vyre_op_lookup(ob->op)->mnemonic, a.depth, a.depth == 1 ? "" : "s");
  }
  if (!st && !a.have_wg)
    st = vyre__asm_fail_at(
        &a, 1, 1, VYRE_INVALID_PROGRAM,
        "no workgroup statement. Fix: add `workgroup 64` (x [y [z]]) before the body");
  if (!st && !a.ninst)
    st = vyre__asm_fail_at(
        &a, last_line, 1, VYRE_INVALID_PROGRAM,
        "the program has no instructions. Fix: write at least one statement, e.g. "
        "`return`");
  void *out = NULL;
  size_t out_size = 0;
  if (!st) {
    vyre_error berr = VYRE_ERROR_INIT;
    st = vyre_builder_finish(a.b, &out, &out_size, &berr);
    if (st) st = vyre__asm_fail_at(&a, 1, 1, st, "%s", berr.message);
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
