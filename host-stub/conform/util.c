/* util.c -- small helpers of the conformance harness: hashing, XML text, patterns, the progress line and colors, case-file line errors. */
#include <errno.h>
#include <fnmatch.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "internal.h"
#include "abi/support/file.h"

vyre_status cf_sha256_file(const char *path, char hex[65], vyre_error *err) {
  /* The one checked open (a FIFO never blocks, a size over the bound is
   * refused before reading); streamed, not held whole. */
  int fd;
  vyre_status st = vyre__file_open(path, CF_MAX_PLUGIN_BYTES, "pass a plugin file", &fd, NULL, err);
  if (st != VYRE_OK) return st;
  vyre_sha256_ctx ctx;
  vyre_sha256_init(&ctx);
  char chunk[65536];
  ssize_t n;
  uint64_t total = 0;
  while (total <= CF_MAX_PLUGIN_BYTES && (n = read(fd, chunk, sizeof chunk)) != 0) {
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) {
      int e = errno;
      close(fd);
      return vyre_error_set(err, VYRE_IO, e, "cannot read %s: %s. Fix: check the file", path,
                            strerror(e));
    }
    vyre_sha256_update(&ctx, chunk, (size_t)n);
    total += (uint64_t)n;
  }
  close(fd);
  if (total > CF_MAX_PLUGIN_BYTES)
    return vyre_error_set(err, VYRE_LIMIT, 0, "cannot hash %s: it holds more than %zu bytes. Fix: "
                          "pass a plugin file", path, CF_MAX_PLUGIN_BYTES);
  uint8_t d[32];
  vyre_sha256_final(&ctx, d);
  vyre_hex(d, 32, hex);
  return VYRE_OK;
}

vyre_status cf_mkdirs(const char *path, vyre_error *err) {
  char tmp[4096];
  size_t n = strlen(path);
  if (n == 0 || n >= sizeof tmp)
    return vyre_error_set(err, VYRE_INVALID_ARGUMENT, 0,
                          "cannot create directory '%s': empty or too long a path. Fix: pass a "
                          "shorter path",
                          path);
  memcpy(tmp, path, n + 1);
  for (size_t i = 1; i <= n; i++) {
    if (tmp[i] != '/' && tmp[i] != '\0') continue;
    char save = tmp[i];
    tmp[i] = '\0';
    if (mkdir(tmp, 0777) != 0 && errno != EEXIST)
      return vyre_error_set(err, VYRE_IO, errno, "cannot create directory %s: %s. Fix: check "
                            "the permissions", tmp, strerror(errno));
    tmp[i] = save;
  }
  return VYRE_OK;
}

void cf_xml_text(FILE *f, const char *s) {
  for (const unsigned char *p = (const unsigned char *)(s ? s : ""); *p; p++) {
    switch (*p) {
    case '<': fputs("&lt;", f); break;
    case '>': fputs("&gt;", f); break;
    case '&': fputs("&amp;", f); break;
    case '"': fputs("&quot;", f); break;
    case '\'': fputs("&apos;", f); break;
    default:
      /* XML 1.0 has no place for other control characters. */
      if (*p < 0x20 && *p != '\n' && *p != '\t' && *p != '\r') fputc('?', f);
      else fputc(*p, f);
    }
  }
}

int cf_pattern_match(const char *pattern, const char *name) {
  if (!pattern || !*pattern) return 1;
  if (!strpbrk(pattern, "*?[")) return strstr(name, pattern) != NULL;
  return fnmatch(pattern, name, 0) == 0;
}

void cf_progress_clear(const cf_options *o) {
  if (o->progress) o->progress(o->progress_ctx, NULL);
}

void cf_paint(const cf_options *o, const char *sgr, const char *word) {
  if (o->color) fprintf(o->out, "\033[%sm%s\033[0m", sgr, word);
  else fputs(word, o->out);
}

vyre_status cf_parse_error(cf_parse_ctx *px, vyre_status st, const char *fmt, ...) {
  char msg[1536];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(msg, sizeof msg, fmt, ap);
  va_end(ap);
  return vyre_error_set(px->err, st, 0, "%s:%u: %s", px->path, px->line, msg);
}
