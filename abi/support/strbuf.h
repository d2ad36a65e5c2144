/* strbuf.h -- the one growable buffer (text or bytes: PTX, program text, capsules, files read); allocation failure is sticky and reported once. */
#ifndef VYRE_SUPPORT_STRBUF_H
#define VYRE_SUPPORT_STRBUF_H

#include <stdarg.h>
#include <stddef.h>

typedef struct strbuf {
  char *data;   /* NUL-terminated when len > 0 (a byte more than len is always there) */
  size_t len;
  size_t cap;
  int failed;   /* 1 once an allocation failed; later appends do nothing */
} strbuf;

/* All functions accept a zeroed strbuf; none aborts. */
void vyre__sb_init(strbuf *sb);
void vyre__sb_free(strbuf *sb);
void vyre__sb_append(strbuf *sb, const void *data, size_t len);
void vyre__sb_puts(strbuf *sb, const char *text);
void vyre__sb_printf(strbuf *sb, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 2, 3)))
#endif
    ;
/* Make room for `extra` more bytes up front (a size hint; growth still
 * works past it). */
void vyre__sb_reserve(strbuf *sb, size_t extra);
/* Direct writing: a pointer to room for at least `extra` bytes at the end
 * (NULL once an allocation failed); then vyre__sb_commit the bytes written. */
char *vyre__sb_room(strbuf *sb, size_t extra);
void vyre__sb_commit(strbuf *sb, size_t n);
/* A case file's data directive (docs/conformance.md, "Case files"):
 * `;@ KEY NAME hex ...` with 64 bytes a line, continued as `;@ KEY+ NAME
 * hex ...`; an empty buffer is one `;@ KEY NAME hex` line.  Conformance
 * capsules and the validation layer's capsules write data with it. */
void vyre__sb_hex_lines(strbuf *sb, const char *key, const char *name, const unsigned char *data,
                        unsigned long long size);
/* Take the text (caller frees with free()); the strbuf is reset.  NULL
 * when an allocation failed. */
char *vyre__sb_take(strbuf *sb, size_t *len);

#endif /* VYRE_SUPPORT_STRBUF_H */
