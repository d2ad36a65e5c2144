/* strbuf.c -- the one growable buffer (strbuf.h). */
#include "strbuf.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void vyre__sb_init(strbuf *sb) { memset(sb, 0, sizeof *sb); }

void vyre__sb_free(strbuf *sb) {
  free(sb->data);
  vyre__sb_init(sb);
}

static int reserve(strbuf *sb, size_t extra) {
  if (sb->failed) return 0;
  if (sb->len + extra + 1 <= sb->cap) return 1;
  size_t cap = sb->cap ? sb->cap : 4096;
  while (cap < sb->len + extra + 1) {
    if (cap > ((size_t)-1) / 2) {
      sb->failed = 1;
      return 0;
    }
    cap *= 2;
  }
  char *grown = realloc(sb->data, cap);
  if (!grown) {
    sb->failed = 1;
    return 0;
  }
  sb->data = grown;
  sb->cap = cap;
  return 1;
}

void vyre__sb_reserve(strbuf *sb, size_t extra) { (void)reserve(sb, extra); }

char *vyre__sb_room(strbuf *sb, size_t extra) {
  if (sb->len + extra + 1 > sb->cap && !reserve(sb, extra)) return NULL;
  if (sb->failed) return NULL;
  return sb->data + sb->len;
}

void vyre__sb_commit(strbuf *sb, size_t n) {
  sb->len += n;
  sb->data[sb->len] = '\0';
}

void vyre__sb_append(strbuf *sb, const void *data, size_t len) {
  if (!reserve(sb, len)) return;
  memcpy(sb->data + sb->len, data, len);
  sb->len += len;
  sb->data[sb->len] = '\0';
}

void vyre__sb_puts(strbuf *sb, const char *text) { vyre__sb_append(sb, text, strlen(text)); }

void vyre__sb_printf(strbuf *sb, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  char small[256];
  int n = vsnprintf(small, sizeof small, fmt, ap);
  va_end(ap);
  if (n < 0) {
    sb->failed = 1;
    return;
  }
  if ((size_t)n < sizeof small) {
    vyre__sb_append(sb, small, (size_t)n);
    return;
  }
  if (!reserve(sb, (size_t)n)) return;
  va_start(ap, fmt);
  vsnprintf(sb->data + sb->len, (size_t)n + 1, fmt, ap);
  va_end(ap);
  sb->len += (size_t)n;
}

char *vyre__sb_take(strbuf *sb, size_t *len) {
  if (sb->failed) {
    vyre__sb_free(sb);
    if (len) *len = 0;
    return NULL;
  }
  if (!sb->data && !reserve(sb, 0)) return NULL;
  char *out = sb->data;
  if (len) *len = sb->len;
  vyre__sb_init(sb);
  return out;
}

void vyre__sb_hex_lines(strbuf *sb, const char *key, const char *name, const unsigned char *data,
                        unsigned long long size) {
  static const char digits[] = "0123456789abcdef";
  enum { PER_LINE = 64 };
  if (size == 0) {
    vyre__sb_printf(sb, ";@ %s %s hex\n", key, name);
    return;
  }
  for (unsigned long long off = 0; off < size; off += PER_LINE) {
    vyre__sb_printf(sb, ";@ %s%s %s hex ", key, off ? "+" : "", name);
    char line[2 * PER_LINE + 2];
    unsigned long long m = size - off < PER_LINE ? size - off : PER_LINE;
    for (unsigned long long i = 0; i < m; i++) {
      line[2 * i] = digits[data[off + i] >> 4];
      line[2 * i + 1] = digits[data[off + i] & 15];
    }
    line[2 * m] = '\n';
    vyre__sb_append(sb, line, (size_t)(2 * m + 1));
  }
}
