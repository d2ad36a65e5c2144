/* safetext.c -- text from plugins, case files and file names made safe to print: no control byte or escape sequence reaches a terminal (safetext.h). */
#include "safetext.h"

#include <stdint.h>

/* Length of the well-formed UTF-8 sequence at s (at most `left` bytes),
 * 0 when it is malformed (RFC 3629: no overlongs, no surrogates, at most
 * U+10FFFF). */
static size_t utf8_length(const unsigned char *s, size_t left) {
  unsigned char c = s[0];
  size_t n;
  uint32_t min, cp;
  if (c >= 0xc2 && c <= 0xdf) n = 2, min = 0x80, cp = c & 0x1f;
  else if (c >= 0xe0 && c <= 0xef) n = 3, min = 0x800, cp = c & 0x0f;
  else if (c >= 0xf0 && c <= 0xf4) n = 4, min = 0x10000, cp = c & 0x07;
  else return 0;
  if (n > left) return 0;
  for (size_t i = 1; i < n; i++) {
    if ((s[i] & 0xc0) != 0x80) return 0;
    cp = cp << 6 | (s[i] & 0x3f);
  }
  if (cp < min || cp > 0x10ffff || (cp >= 0xd800 && cp <= 0xdfff)) return 0;
  if (cp >= 0x80 && cp <= 0x9f) return 0; /* a C1 control */
  return n;
}

size_t vyre__safe_text(char *dst, size_t size, const char *src, size_t len, int mode) {
  if (size == 0) return 0;
  const unsigned char *s = (const unsigned char *)(src ? src : "");
  size_t n = 0;
  for (size_t i = 0; n + 1 < size && i < len && s[i];) {
    unsigned char c = s[i];
    if (c >= 0x20 && c < 0x7f) {
      dst[n++] = (char)c;
      i++;
      continue;
    }
    if (c < 0x80) {
      int keep = mode == VYRE__SAFE_TEXT && (c == '\n' || c == '\t');
      dst[n++] = keep ? (char)c : '?';
      i++;
      continue;
    }
    size_t k = 0;
    while (i + k < len && s[i + k] && k < 4) k++;
    size_t u = utf8_length(s + i, k);
    if (u == 0 || n + u + 1 > size) {
      /* Malformed, a C1 control, or cut at the end of dst: one '?' for
       * the lead byte; what follows is judged on its own. */
      dst[n++] = '?';
      i++;
      continue;
    }
    for (size_t j = 0; j < u; j++) dst[n++] = (char)s[i + j];
    i += u;
  }
  dst[n] = '\0';
  return n;
}
