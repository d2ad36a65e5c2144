/* util.c -- small helpers of the conformance harness: files, hashing, XML text, patterns, the progress line and colors, case-file line errors. */
#include <errno.h>
#include <fnmatch.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "internal.h"

vyre_status cf_read_file(const char *path, size_t max, void **data, size_t *size,
                         vyre_error *err) {
  *data = NULL;
  *size = 0;
  int is_stdin = strcmp(path, "-") == 0; /* "-" is standard input */
  FILE *f = is_stdin ? stdin : fopen(path, "rb");
  if (!f)
    return vyre_error_set(err, VYRE_IO, errno, "cannot open %s: %s. Fix: check the path", path,
                          strerror(errno));
  if (is_stdin) path = "<stdin>";
  strbuf b = {0};
  char chunk[65536];
  size_t n;
  /* Never more than max + 1 bytes: one past the bound tells "too long". */
  while (b.len <= max && !b.failed &&
         (n = fread(chunk, 1, b.len + sizeof chunk > max + 1 ? max + 1 - b.len : sizeof chunk,
                    f)) > 0)
    vyre__sb_append(&b, chunk, n);
  int bad = ferror(f);
  if (!is_stdin) fclose(f);
  if (!bad && !b.failed && b.len > max) {
    vyre__sb_free(&b);
    return vyre_error_set(err, VYRE_LIMIT, 0,
                          "cannot read %s: it holds more than %zu bytes, the most vyre reads from "
                          "such a file (docs/conformance.md, \"Files the harness reads\"). Fix: "
                          "pass a regular file of the right kind",
                          path, max);
  }
  vyre__sb_append(&b, "", 1);
  if (bad || b.failed) {
    vyre__sb_free(&b);
    return vyre_error_set(err, bad ? VYRE_IO : VYRE_OUT_OF_MEMORY, 0,
                          "cannot read %s: %s. Fix: check the file", path,
                          bad ? "read error" : "out of memory");
  }
  *data = b.data;
  *size = b.len - 1;
  return VYRE_OK;
}

vyre_status cf_write_file(const char *path, const void *data, size_t size, vyre_error *err) {
  FILE *f = fopen(path, "wb");
  if (!f)
    return vyre_error_set(err, VYRE_IO, errno, "cannot create %s: %s. Fix: check the directory",
                          path, strerror(errno));
  size_t w = size ? fwrite(data, 1, size, f) : 0;
  int bad = w != size;
  if (fclose(f) != 0) bad = 1;
  if (bad)
    return vyre_error_set(err, VYRE_IO, errno, "cannot write %s: %s. Fix: check the disk space",
                          path, strerror(errno));
  return VYRE_OK;
}

vyre_status cf_sha256_file(const char *path, char hex[65], vyre_error *err) {
  FILE *f = fopen(path, "rb");
  if (!f)
    return vyre_error_set(err, VYRE_IO, errno, "cannot open %s: %s. Fix: check the path", path,
                          strerror(errno));
  vyre_sha256_ctx ctx;
  vyre_sha256_init(&ctx);
  char chunk[65536];
  size_t n;
  uint64_t total = 0;
  while (total <= CF_MAX_PLUGIN_BYTES && (n = fread(chunk, 1, sizeof chunk, f)) > 0) {
    vyre_sha256_update(&ctx, chunk, n);
    total += n;
  }
  int bad = ferror(f);
  fclose(f);
  if (bad) return vyre_error_set(err, VYRE_IO, 0, "cannot read %s. Fix: check the file", path);
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
