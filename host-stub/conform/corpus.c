/* corpus.c -- the conformance corpus: its case files listed (vyre__dir_walk: each directory once, byte-wise order) and hashed, and loaded through a --filter for a run. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"
#include "abi/support/file.h"

typedef struct plist {
  char **v;
  uint32_t n, cap;
  int failed;
} plist;

static void plist_add(plist *l, const char *s) {
  if (l->failed) return;
  if (l->n == l->cap) {
    uint32_t cap = l->cap ? l->cap * 2 : 256;
    char **v = realloc(l->v, cap * sizeof *v);
    if (!v) {
      l->failed = 1;
      return;
    }
    l->v = v;
    l->cap = cap;
  }
  l->v[l->n] = strdup(s);
  if (!l->v[l->n]) l->failed = 1;
  else l->n++;
}

static int cmp_str(const void *a, const void *b) {
  return strcmp(*(char *const *)a, *(char *const *)b);
}

/* Deeper than any corpus: not walked (docs/conformance.md). */
#define CF_MAX_CORPUS_DEPTH 16

static vyre_status add_case_file(void *ctx, const char *path, vyre_error *err) {
  (void)err;
  size_t n = strlen(path);
  if (n > 5 && strcmp(path + n - 5, ".vyre") == 0) plist_add(ctx, path);
  return VYRE_OK;
}

vyre_status cf_corpus_list(const char *dir, char ***paths, uint32_t *count, vyre_error *err) {
  plist l = {0};
  *paths = NULL;
  *count = 0;
  /* Each directory once, however many symlinks lead to it: a loop is not
   * followed and a DAG of links costs its directories, not its paths. */
  vyre_status st = vyre__dir_walk(dir, CF_MAX_CORPUS_DEPTH, "corpus directory", "pass --corpus DIR", add_case_file,
                                  &l, err);
  if (st == VYRE_OK && l.failed) st = vyre_error_set(err, VYRE_OUT_OF_MEMORY, 0, "out of memory");
  if (st != VYRE_OK) {
    cf_corpus_list_free(l.v, l.n);
    return st;
  }
  if (l.n) qsort(l.v, l.n, sizeof *l.v, cmp_str);
  *paths = l.v;
  *count = l.n;
  return VYRE_OK;
}

void cf_corpus_list_free(char **paths, uint32_t count) {
  if (!paths) return;
  for (uint32_t i = 0; i < count; i++) free(paths[i]);
  free(paths);
}

vyre_status cf_corpus_hash(const char *dir, char **paths, uint32_t count, char hex[65],
                           vyre_error *err) {
  vyre_sha256_ctx ctx;
  vyre_sha256_init(&ctx);
  size_t dl = strlen(dir);
  for (uint32_t i = 0; i < count; i++) {
    const char *rel = paths[i];
    if (strncmp(rel, dir, dl) == 0 && rel[dl] == '/') rel += dl + 1;
    vyre_sha256_update(&ctx, rel, strlen(rel) + 1);
    void *data = NULL;
    size_t size = 0;
    vyre_status st =
        vyre__file_read(paths[i], CF_MAX_CASE_BYTES, CF_TOO_BIG_FIX, &data, &size, err);
    if (st != VYRE_OK) return st;
    vyre_sha256_update(&ctx, data, size);
    vyre_sha256_update(&ctx, "", 1);
    free(data);
  }
  uint8_t d[32];
  vyre_sha256_final(&ctx, d);
  vyre_hex(d, 32, hex);
  return VYRE_OK;
}

/* ------------------------------------------------------------------ */
/* A run's corpus                                                      */
/* ------------------------------------------------------------------ */

void cf_corpus_free(cf_corpus *cp) {
  for (uint32_t i = 0; i < cp->count; i++) {
    if (cp->cases) cf_case_free(cp->cases[i]);
    if (cp->errors) free(cp->errors[i]);
  }
  free(cp->cases);
  free(cp->errors);
  cf_corpus_list_free(cp->paths, cp->count);
  memset(cp, 0, sizeof *cp);
}

vyre_status cf_corpus_load(const cf_options *o, cf_corpus *cp, vyre_error *err) {
  memset(cp, 0, sizeof *cp);
  vyre_status st = cf_corpus_list(o->corpus_dir, &cp->paths, &cp->count, err);
  if (st != VYRE_OK) return st;
  if (cp->count == 0) {
    cf_corpus_list_free(cp->paths, 0);
    cp->paths = NULL;
    return vyre_error_set(err, VYRE_INVALID_ARGUMENT, 0,
                          "the corpus %s holds no *.vyre case files. Fix: pass --corpus DIR "
                          "(the source tree's tests/conformance)", o->corpus_dir);
  }
  st = cf_corpus_hash(o->corpus_dir, cp->paths, cp->count, cp->hash, err);
  if (st != VYRE_OK) return st;
  cp->cases = calloc(cp->count, sizeof *cp->cases);
  cp->errors = calloc(cp->count, sizeof *cp->errors);
  if (!cp->cases || !cp->errors) return vyre_error_set(err, VYRE_OUT_OF_MEMORY, 0, "out of memory");
  uint32_t keep = 0;
  for (uint32_t i = 0; i < cp->count; i++) {
    vyre_error e = VYRE_ERROR_INIT;
    cf_case *c = NULL;
    if (cf_case_load(cp->paths[i], &c, &e) != VYRE_OK) {
      /* Judge a broken file by the name its path gives it. */
      const char *path = cp->paths[i];
      const char *slash = strrchr(path, '/');
      const char *base = slash ? slash + 1 : path;
      const char *dir = base;
      if (slash) {
        dir = slash;
        while (dir > path && dir[-1] != '/') dir--;
      }
      char guess[512];
      snprintf(guess, sizeof guess, "%.*s%.*s", (int)(base - dir), dir,
               (int)(strlen(base) > 5 ? strlen(base) - 5 : strlen(base)), base);
      if (cf_pattern_match(o->filter, guess)) {
        cp->errors[i] = strdup(e.message);
        keep++;
      }
      continue;
    }
    char name[256];
    cf_case_full_name(c, name, sizeof name);
    if (!cf_pattern_match(o->filter, name)) {
      cf_case_free(c);
      continue;
    }
    cp->cases[i] = c;
    keep++;
  }
  if (keep == 0)
    return vyre_error_set(err, VYRE_INVALID_ARGUMENT, 0,
                          "--filter '%s' selects none of the %u case files of the corpus %s "
                          "(it matches CATEGORY/NAME, such as ops.int/add.u32). Fix: give a "
                          "glob over CATEGORY/NAME (--filter 'ops.int/add.*') or a substring "
                          "(--filter add); --verbose without --filter lists every case's name",
                          o->filter, cp->count, o->corpus_dir);
  /* Compact: the selected cases, in corpus order. */
  uint32_t k = 0;
  for (uint32_t i = 0; i < cp->count; i++) {
    if (!cp->cases[i] && !cp->errors[i]) {
      free(cp->paths[i]);
      continue;
    }
    cp->cases[k] = cp->cases[i];
    cp->errors[k] = cp->errors[i];
    cp->paths[k] = cp->paths[i];
    k++;
  }
  cp->count = k;
  cp->selected = keep;
  return VYRE_OK;
}

