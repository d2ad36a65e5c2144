/* cli_json.c -- the JSON writer behind every `--json` of the `vyre` command (cli_json.h). */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "cli_json.h"

static unsigned stdout_documents;

unsigned cj_stdout_documents(void) { return stdout_documents; }

void cj_count_stdout_document(void) { stdout_documents++; }

/* Length of the valid UTF-8 sequence at s (at most n bytes), or 0 when
 * it is not one: overlong forms, surrogates and code points past
 * U+10FFFF are invalid (RFC 3629). */
static size_t utf8_length(const unsigned char *s, size_t n) {
  unsigned char c = s[0];
  size_t len;
  uint32_t min, cp;
  if (c < 0x80) return 1;
  if (c >= 0xc2 && c <= 0xdf) len = 2, min = 0x80, cp = c & 0x1f;
  else if (c >= 0xe0 && c <= 0xef) len = 3, min = 0x800, cp = c & 0x0f;
  else if (c >= 0xf0 && c <= 0xf4) len = 4, min = 0x10000, cp = c & 0x07;
  else return 0;
  if (len > n) return 0;
  for (size_t i = 1; i < len; i++) {
    if ((s[i] & 0xc0) != 0x80) return 0;
    cp = (cp << 6) | (s[i] & 0x3f);
  }
  if (cp < min || cp > 0x10ffff || (cp >= 0xd800 && cp <= 0xdfff)) return 0;
  return len;
}

void cj_escape(FILE *f, const char *s, size_t n) {
  const unsigned char *p = (const unsigned char *)s;
  fputc('"', f);
  for (size_t i = 0; i < n;) {
    unsigned char c = p[i];
    switch (c) {
    case '"': fputs("\\\"", f); i++; continue;
    case '\\': fputs("\\\\", f); i++; continue;
    case '\b': fputs("\\b", f); i++; continue;
    case '\f': fputs("\\f", f); i++; continue;
    case '\n': fputs("\\n", f); i++; continue;
    case '\r': fputs("\\r", f); i++; continue;
    case '\t': fputs("\\t", f); i++; continue;
    default: break;
    }
    if (c < 0x20 || c == 0x7f) {
      fprintf(f, "\\u%04x", c);
      i++;
      continue;
    }
    size_t len = utf8_length(p + i, n - i);
    if (len == 0) {
      fputs("\\ufffd", f); /* one replacement per invalid byte */
      i++;
      continue;
    }
    fwrite(p + i, 1, len, f);
    i += len;
  }
  fputc('"', f);
}

void cj_init(cj_writer *w, FILE *f) {
  memset(w, 0, sizeof *w);
  w->f = f;
}

/* Before any value: the comma and, at the top, the document count. */
static int value_prefix(cj_writer *w) {
  if (w->depth == 0) {
    if (w->count[0]) return -1; /* one value per document */
    w->count[0] = 1;
    if (w->f == stdout) stdout_documents++;
    return 0;
  }
  int level = w->depth;
  if (w->in_object[level]) {
    if (!w->after_key) return -1;
    w->after_key = 0;
    return 0;
  }
  if (w->count[level]) fputc(',', w->f);
  w->count[level] = 1;
  return 0;
}

void cj_key(cj_writer *w, const char *key) {
  int level = w->depth;
  if (level == 0 || !w->in_object[level] || w->after_key) return;
  if (w->count[level]) fputc(',', w->f);
  w->count[level] = 1;
  cj_escape(w->f, key, strlen(key));
  fputc(':', w->f);
  w->after_key = 1;
}

static void open_level(cj_writer *w, int object) {
  if (w->depth + 1 >= CJ_MAX_DEPTH || value_prefix(w) != 0) return;
  fputc(object ? '{' : '[', w->f);
  w->depth++;
  w->in_object[w->depth] = (unsigned char)object;
  w->count[w->depth] = 0;
}

static void close_level(cj_writer *w, int object) {
  if (w->depth == 0 || w->in_object[w->depth] != object) return;
  if (w->after_key) { /* a key without a value: keep the JSON valid */
    fputs("null", w->f);
    w->after_key = 0;
  }
  fputc(object ? '}' : ']', w->f);
  w->depth--;
}

void cj_object_begin(cj_writer *w) { open_level(w, 1); }
void cj_object_end(cj_writer *w) { close_level(w, 1); }
void cj_array_begin(cj_writer *w) { open_level(w, 0); }
void cj_array_end(cj_writer *w) { close_level(w, 0); }

void cj_string_n(cj_writer *w, const char *s, size_t n) {
  if (value_prefix(w) != 0) return;
  if (s) cj_escape(w->f, s, n);
  else fputs("null", w->f);
}

void cj_string(cj_writer *w, const char *s) { cj_string_n(w, s, s ? strlen(s) : 0); }

void cj_uint(cj_writer *w, uint64_t v) {
  if (value_prefix(w) == 0) fprintf(w->f, "%llu", (unsigned long long)v);
}

void cj_int(cj_writer *w, int64_t v) {
  if (value_prefix(w) == 0) fprintf(w->f, "%lld", (long long)v);
}

void cj_double(cj_writer *w, double v) {
  if (value_prefix(w) != 0) return;
  if (!isfinite(v)) {
    fputs("null", w->f);
    return;
  }
  /* The shortest of %.15g..%.17g that reads back as v. */
  char buf[40];
  for (int prec = 15; prec <= 17; prec++) {
    snprintf(buf, sizeof buf, "%.*g", prec, v);
    if (strtod(buf, NULL) == v) break;
  }
  fputs(buf, w->f);
}

void cj_bool(cj_writer *w, int v) {
  if (value_prefix(w) == 0) fputs(v ? "true" : "false", w->f);
}

void cj_null(cj_writer *w) {
  if (value_prefix(w) == 0) fputs("null", w->f);
}

void cj_raw(cj_writer *w, const char *token) {
  if (value_prefix(w) == 0) fputs(token, w->f);
}

void cj_end(cj_writer *w) {
  while (w->depth > 0) close_level(w, w->in_object[w->depth]);
  fputc('\n', w->f);
  fflush(w->f);
}
