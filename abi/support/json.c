/* json.c -- the one JSON writer: escaping, numbers, nesting (json.h). */
#include "json.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

static unsigned stdout_documents;

unsigned vyre__json_stdout_documents(void) { return stdout_documents; }

void vyre__json_count_stdout_document(void) { stdout_documents++; }

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

/* The short escape of c, or NULL. */
static const char *short_escape(unsigned char c) {
  switch (c) {
  case '"': return "\\\"";
  case '\\': return "\\\\";
  case '\b': return "\\b";
  case '\f': return "\\f";
  case '\n': return "\\n";
  case '\r': return "\\r";
  case '\t': return "\\t";
  default: return NULL;
  }
}

void vyre__json_escape(FILE *f, const char *s, size_t n) {
  const unsigned char *p = (const unsigned char *)s;
  fputc('"', f);
  for (size_t i = 0; i < n;) {
    unsigned char c = p[i];
    const char *esc = short_escape(c);
    size_t len = esc || c < 0x20 || c == 0x7f ? 1 : utf8_length(p + i, n - i);
    if (esc) fputs(esc, f);
    else if (c < 0x20 || c == 0x7f) fprintf(f, "\\u%04x", c);
    else if (len == 0) fputs("\\ufffd", f); /* one replacement per invalid byte */
    else fwrite(p + i, 1, len, f);
    i += len ? len : 1;
  }
  fputc('"', f);
}

void vyre__json_string_to(FILE *f, const char *s) {
  if (s) vyre__json_escape(f, s, strlen(s));
  else fputs("null", f);
}

void vyre__json_init(vyre__json *w, FILE *f) {
  memset(w, 0, sizeof *w);
  w->f = f;
}

/* Before any value: the comma and, at the top, the document count.
 * -1 when no value may come here. */
static int value_prefix(vyre__json *w) {
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

void vyre__json_key(vyre__json *w, const char *key) {
  int level = w->depth;
  if (level == 0 || !w->in_object[level] || w->after_key) return;
  if (w->count[level]) fputc(',', w->f);
  w->count[level] = 1;
  vyre__json_escape(w->f, key, strlen(key));
  fputc(':', w->f);
  w->after_key = 1;
}

static void open_level(vyre__json *w, int object) {
  if (w->depth + 1 >= VYRE__JSON_MAX_DEPTH || value_prefix(w) != 0) return;
  fputc(object ? '{' : '[', w->f);
  w->depth++;
  w->in_object[w->depth] = (unsigned char)object;
  w->count[w->depth] = 0;
}

static void close_level(vyre__json *w, int object) {
  if (w->depth == 0 || w->in_object[w->depth] != object) return;
  if (w->after_key) { /* a key without a value: keep the JSON valid */
    fputs("null", w->f);
    w->after_key = 0;
  }
  fputc(object ? '}' : ']', w->f);
  w->depth--;
}

void vyre__json_object_begin(vyre__json *w) { open_level(w, 1); }
void vyre__json_object_end(vyre__json *w) { close_level(w, 1); }
void vyre__json_array_begin(vyre__json *w) { open_level(w, 0); }
void vyre__json_array_end(vyre__json *w) { close_level(w, 0); }

void vyre__json_string_n(vyre__json *w, const char *s, size_t n) {
  if (value_prefix(w) != 0) return;
  if (s) vyre__json_escape(w->f, s, n);
  else fputs("null", w->f);
}

void vyre__json_string(vyre__json *w, const char *s) {
  vyre__json_string_n(w, s, s ? strlen(s) : 0);
}

void vyre__json_uint(vyre__json *w, uint64_t v) {
  if (value_prefix(w) == 0) fprintf(w->f, "%llu", (unsigned long long)v);
}

void vyre__json_int(vyre__json *w, int64_t v) {
  if (value_prefix(w) == 0) fprintf(w->f, "%lld", (long long)v);
}

/* The shortest text that reads back as v: the fewest significant
 * digits %g needs, then the plain decimal form of those digits when it
 * is no longer than %g's exponent form (10, not 1e+01). */
static void shortest(double v, char *out, size_t size) {
  char g[40];
  int prec = 1;
  for (; prec <= 17; prec++) {
    snprintf(g, sizeof g, "%.*g", prec, v);
    if (strtod(g, NULL) == v) break;
  }
  snprintf(out, size, "%s", g);
  const char *e = strchr(g, 'e');
  int exp10 = e ? atoi(e + 1) : 0;
  if (!e || exp10 < -20 || exp10 > 20) return;
  char f[64];
  int decimals = prec - 1 - exp10;
  snprintf(f, sizeof f, "%.*f", decimals > 0 ? decimals : 0, v);
  if (strlen(f) <= strlen(g) && strtod(f, NULL) == v) snprintf(out, size, "%s", f);
}

void vyre__json_double(vyre__json *w, double v) {
  if (value_prefix(w) != 0) return;
  if (!isfinite(v)) {
    fputs("null", w->f);
    return;
  }
  char buf[64];
  shortest(v, buf, sizeof buf);
  fputs(buf, w->f);
}

void vyre__json_bool(vyre__json *w, int v) {
  if (value_prefix(w) == 0) fputs(v ? "true" : "false", w->f);
}

void vyre__json_null(vyre__json *w) {
  if (value_prefix(w) == 0) fputs("null", w->f);
}

void vyre__json_raw(vyre__json *w, const char *token) {
  if (value_prefix(w) == 0) fputs(token, w->f);
}

void vyre__json_end(vyre__json *w) {
  while (w->depth > 0) close_level(w, w->in_object[w->depth]);
  fputc('\n', w->f);
  fflush(w->f);
}
