/* lex.c -- the assembler's floor: errors at FILE:LINE:COL, the name maps, and the lexer (one line into tokens). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"

/* ------------------------------------------------------------------ */
/* Errors                                                             */
/* ------------------------------------------------------------------ */
/* Contract in internal.h. */
vyre_status vyre__asm_fail_at(assembler *a, uint32_t line, uint32_t col, vyre_status st,
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

vyre_status vyre__asm_oom(assembler *a) {
  return vyre__asm_fail_at(a, a->line, 1, VYRE_OUT_OF_MEMORY,
                           "out of host memory while assembling. Fix: "
                           "free memory or assemble a smaller program");
}

/* A token as it may be quoted in a message: printable, at most 48 chars. */
const char *vyre__asm_show(const tok *t, char out[64]) {
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
/* Names                                                              */
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

int vyre__asm_map_find(const name_map *m, const char *s, uint32_t len, uint32_t *value) {
  if (!m->cap) return 0;
  name_entry *e = map_slot(m, s, len);
  if (!e->s) return 0;
  *value = e->value;
  return 1;
}

/* Insert or overwrite; -1 when out of memory. */
int vyre__asm_map_put(name_map *m, const char *s, uint32_t len, uint32_t value) {
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

int vyre__asm_is_ident(const tok *t) {
  if (!t->len) return 0;
  for (uint32_t i = 0; i < t->len; i++) {
    char c = t->s[i];
    int alpha = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_';
    if (!alpha && !(i && c >= '0' && c <= '9')) return 0;
  }
  return 1;
}

int vyre__asm_is_word(const tok *t, const char *w) {
  return t->len == strlen(w) && memcmp(t->s, w, t->len) == 0;
}

/* ------------------------------------------------------------------ */
/* Lexer: one line into tokens                                        */
/* ------------------------------------------------------------------ */
static int is_space(char c) { return c == ' ' || c == '\t' || c == '\r' || c == '\v' || c == '\f'; }
static int is_single(char c) { return c == '[' || c == ']' || c == '='; }

vyre_status vyre__asm_lex_line(assembler *a, const char *s, size_t n) {
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
      return vyre__asm_fail_at(
          a, a->line, (uint32_t)i + 1, VYRE_INVALID_PROGRAM,
          "unexpected control character 0x%02x. Fix: program text is plain text; "
          "remove the character",
          (unsigned)(unsigned char)c);
    if (a->nt == MAX_TOKENS)
      return vyre__asm_fail_at(a, a->line, (uint32_t)i + 1, VYRE_INVALID_PROGRAM,
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

int vyre__asm_value_name_ok(const tok *t) {
  if (t->len < 2 || t->s[0] != '%') return 0;
  for (uint32_t i = 1; i < t->len; i++) {
    char c = t->s[i];
    if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_'))
      return 0;
  }
  return 1;
}

/* The line of a later `NAME =` that defines value token t, or 0. */
uint32_t vyre__asm_later_definition(const assembler *a, const tok *t) {
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
