/* ptxas.c -- assemble generated kernels with ptxas in batches (many entries per file, two files in flight). */
#include <errno.h>
#include <fcntl.h>
#include <spawn.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "abi/support/config.h"
#include "abi/support/file.h"
#include "fuzz.h"

extern char **environ;

#define BATCH_KERNELS 100u
#define IN_FLIGHT 2u

typedef struct batch_file {
  char path[4096];
  pid_t pid;
  uint32_t count;
  char **labels;   /* label per kernel, for reports */
  char **entries;  /* entry names (duplicates are dropped) */
  uint32_t *first_line; /* 1-based line where each kernel starts */
  uint32_t lines;  /* lines written so far */
} batch_file;

struct fz_ptxas {
  char ptxas[4096];
  char arch[32];
  char dir[2048];
  FILE *f;
  char *header;      /* the header of the file being written */
  batch_file cur;
  batch_file flight[IN_FLIGHT];
  char **funcs;      /* .func definitions already in the file being written */
  uint32_t nfuncs, cap_funcs;
  uint32_t files, kernels, failures;
  FILE *log;
};

static void file_clear(batch_file *bf) {
  for (uint32_t i = 0; i < bf->count; i++) {
    free(bf->labels[i]);
    free(bf->entries[i]);
  }
  free(bf->labels);
  free(bf->entries);
  free(bf->first_line);
  memset(bf, 0, sizeof *bf);
}

/* 1 when `path` is a regular file we may execute (access(X_OK) alone
 * passes a directory, which posix_spawn then cannot run). */
static int is_program(const char *path) {
  struct stat st;
  return stat(path, &st) == 0 && S_ISREG(st.st_mode) && access(path, X_OK) == 0;
}

/* 1 when `name` (a path, or a command looked up in PATH as posix_spawnp
 * does) is an executable regular file: a child that cannot exec it would
 * only exit 127, which reads as a failed assembly. */
static int can_run(const char *name) {
  if (strchr(name, '/')) return is_program(name);
  const char *path = vyre__env(VYRE__ENV_EXEC_PATH);
  if (!path || !*path) path = "/bin:/usr/bin";
  char full[4096];
  for (const char *p = path; *p;) {
    const char *e = strchr(p, ':');
    size_t n = e ? (size_t)(e - p) : strlen(p);
    if (n == 0)
      snprintf(full, sizeof full, "%s", name);
    else
      snprintf(full, sizeof full, "%.*s/%s", (int)n, p, name);
    if (is_program(full)) return 1;
    if (!e) break;
    p = e + 1;
  }
  return 0;
}

vyre_status fz_ptxas_open(const char *ptxas, const char *arch, const char *dir, fz_ptxas **out,
                          vyre_error *err) {
  *out = NULL;
  if (!ptxas || !*ptxas)
    return vyre_error_set(err, VYRE_INVALID_ARGUMENT, 0, "fuzz --ptxas: no ptxas. Fix: set "
                          "PTXAS=/usr/local/cuda/bin/ptxas or put ptxas on PATH");
  struct stat sb;
  if (strchr(ptxas, '/') && stat(ptxas, &sb) == 0 && !S_ISREG(sb.st_mode))
    return vyre_error_set(err, VYRE_IO, 0,
                          "fuzz --ptxas: cannot run '%s': it is %s, not a program. Fix: pass "
                          "--ptxas-bin /usr/local/cuda/bin/ptxas (or set PTXAS) to the ptxas "
                          "executable itself",
                          ptxas, S_ISDIR(sb.st_mode) ? "a directory" : "not a regular file");
  if (!can_run(ptxas))
    return vyre_error_set(err, VYRE_IO, 0,
                          "fuzz --ptxas: cannot run '%s': no such executable%s. Fix: pass "
                          "--ptxas-bin /usr/local/cuda/bin/ptxas (or set PTXAS) to a ptxas that "
                          "exists",
                          ptxas, strchr(ptxas, '/') ? "" : " on PATH");
  vyre_status st = cf_mkdirs(dir, err);
  if (st != VYRE_OK) return st;
  fz_ptxas *b = calloc(1, sizeof *b);
  if (!b) return vyre_error_set(err, VYRE_OUT_OF_MEMORY, 0, "fuzz: out of memory");
  snprintf(b->ptxas, sizeof b->ptxas, "%s", ptxas);
  snprintf(b->arch, sizeof b->arch, "%s", arch);
  snprintf(b->dir, sizeof b->dir, "%s", dir);
  *out = b;
  return VYRE_OK;
}

/* Wait for one file in flight and judge it. */
static void collect(fz_ptxas *b, batch_file *bf) {
  if (!bf->pid) return;
  int status = 0;
  while (waitpid(bf->pid, &status, 0) < 0 && errno == EINTR) {
  }
  int ok = WIFEXITED(status) && WEXITSTATUS(status) == 0;
  char logpath[4200];
  snprintf(logpath, sizeof logpath, "%s.log", bf->path);
  if (!ok) {
    void *log_text = NULL;
    size_t log_size = 0;
    vyre_error log_err = VYRE_ERROR_INIT;
    if (vyre__file_read(logpath, CF_MAX_CASE_BYTES, NULL, &log_text, &log_size, &log_err) !=
        VYRE_OK)
      log_text = NULL;
    char *text = log_text;
    FILE *lf = b->log ? b->log : stderr;
    fprintf(lf, "ptxas -arch=%s failed on %s (kept, with %s):\n%s\n", b->arch, bf->path, logpath,
            text ? text : "(no log)");
    /* ptxas names lines ("file, line N; error ..."): map them to kernels. */
    uint8_t *bad = calloc(bf->count ? bf->count : 1, 1);
    uint32_t named = 0;
    for (const char *s = text; s && bad && (s = strstr(s, ", line ")) != NULL; s++) {
      uint32_t line = (uint32_t)strtoul(s + 7, NULL, 10);
      uint32_t k = 0;
      while (k + 1 < bf->count && bf->first_line[k + 1] <= line) k++;
      if (bf->count && line >= bf->first_line[0] && !bad[k]) {
        bad[k] = 1;
        named++;
      }
    }
    for (uint32_t i = 0; bad && i < bf->count; i++)
      if (bad[i]) fprintf(lf, "  failing kernel: %s (entry %s, from line %u)\n", bf->labels[i],
                          bf->entries[i], bf->first_line[i]);
    if (!named)
      fprintf(lf, "  the log names no kernel: all %u kernels of the batch count as failed\n",
              bf->count);
    b->failures += named ? named : bf->count;
    free(bad);
    free(text);
  } else {
    unlink(bf->path);
    unlink(logpath);
  }
  file_clear(bf);
}

static vyre_status launch(fz_ptxas *b, vyre_error *err) {
  batch_file *slot = NULL;
  for (uint32_t i = 0; i < IN_FLIGHT && !slot; i++)
    if (!b->flight[i].pid) slot = &b->flight[i];
  if (!slot) {
    collect(b, &b->flight[0]);
    slot = &b->flight[0];
  }
  *slot = b->cur;
  memset(&b->cur, 0, sizeof b->cur);
  char logpath[4200];
  snprintf(logpath, sizeof logpath, "%s.log", slot->path);
  char archopt[48];
  snprintf(archopt, sizeof archopt, "-arch=%s", b->arch);
  char *argv[] = {b->ptxas, archopt, "-o", "/dev/null", slot->path, NULL};
  posix_spawn_file_actions_t fa;
  posix_spawn_file_actions_init(&fa);
  posix_spawn_file_actions_addopen(&fa, 1, logpath, O_WRONLY | O_CREAT | O_TRUNC, 0644);
  posix_spawn_file_actions_adddup2(&fa, 1, 2);
  int rc = posix_spawnp(&slot->pid, b->ptxas, &fa, NULL, argv, environ);
  posix_spawn_file_actions_destroy(&fa);
  if (rc != 0) {
    slot->pid = 0;
    file_clear(slot);
    return vyre_error_set(err, VYRE_IO, rc, "cannot run %s: %s. Fix: set PTXAS to a working ptxas",
                          b->ptxas, strerror(rc));
  }
  return VYRE_OK;
}

static void funcs_clear(fz_ptxas *b) {
  for (uint32_t i = 0; i < b->nfuncs; i++) free(b->funcs[i]);
  b->nfuncs = 0;
}

static vyre_status flush(fz_ptxas *b, vyre_error *err) {
  funcs_clear(b);
  if (!b->f) return VYRE_OK;
  int bad = fclose(b->f) != 0;
  b->f = NULL;
  free(b->header);
  b->header = NULL;
  if (bad) return vyre_error_set(err, VYRE_IO, errno, "writing %s failed. Fix: check the disk", b->cur.path);
  return launch(b, err);
}

static uint32_t count_lines(const char *s, size_t n) {
  uint32_t k = 0;
  for (size_t i = 0; i < n; i++) k += s[i] == '\n';
  return k;
}

#define MAX_DEFS 64

/* One `.func` definition inside a kernel's PTX: from its `.func` line to
 * the closing brace at the start of a line. */
typedef struct fdef {
  const char *start;
  size_t len;
  const char *name;
  size_t name_len;
} fdef;

static uint32_t find_defs(const char *body, fdef *defs) {
  uint32_t n = 0;
  for (const char *p = body; p && *p && n < MAX_DEFS;) {
    if (strncmp(p, ".func", 5) == 0) {
      const char *end = strstr(p, "\n}\n");
      if (!end) break;
      fdef *d = &defs[n++];
      d->start = p;
      d->len = (size_t)(end + 3 - p);
      /* .func [(return params)] NAME (params) */
      const char *q = p + 5;
      while (*q == ' ') q++;
      if (*q == '(') {
        q = strchr(q, ')');
        q = q ? q + 1 : p + 5;
        while (*q == ' ') q++;
      }
      d->name = q;
      while (*q && *q != ' ' && *q != '(' && *q != '\n') q++;
      d->name_len = (size_t)(q - d->name);
      p = end + 3;
      continue;
    }
    p = strchr(p, '\n');
    if (p) p++;
  }
  return n;
}

/* 1: the file has this definition; 0: it has no function of that name;
 * -1: it has another definition under that name. */
static int func_known(const fz_ptxas *b, const fdef *d) {
  for (uint32_t i = 0; i < b->nfuncs; i++) {
    const char *f = b->funcs[i];
    fdef known;
    if (find_defs(f, &known) != 1) continue;
    if (known.name_len != d->name_len || strncmp(known.name, d->name, d->name_len) != 0) continue;
    return known.len == d->len && memcmp(f, d->start, d->len) == 0 ? 1 : -1;
  }
  return 0;
}

static int func_remember(fz_ptxas *b, const fdef *d) {
  if (b->nfuncs == b->cap_funcs) {
    uint32_t cap = b->cap_funcs ? b->cap_funcs * 2 : 16;
    char **grown = realloc(b->funcs, cap * sizeof *grown);
    if (!grown) return -1;
    b->funcs = grown;
    b->cap_funcs = cap;
  }
  b->funcs[b->nfuncs] = strndup(d->start, d->len);
  if (!b->funcs[b->nfuncs]) return -1;
  b->nfuncs++;
  return 0;
}

vyre_status fz_ptxas_add(fz_ptxas *b, const char *ptx, const char *entry, const char *label,
                         vyre_error *err) {
  static const char marker[] = ".address_size 64\n";
  const char *hend = strstr(ptx, marker);
  if (!hend)
    return vyre_error_set(err, VYRE_INVALID_ARGUMENT, 0, "PTX of %s has no .address_size line. "
                          "Fix: the codegen", label);
  hend += strlen(marker);
  /* The header proper starts at .version (comments before it name the program). */
  const char *hstart = strstr(ptx, ".version");
  if (!hstart || hstart > hend) hstart = ptx;
  size_t hlen = (size_t)(hend - hstart);
  /* Kernels calling math subroutines each define their .func: a batch
   * keeps the first definition of each name and drops identical repeats;
   * a different definition under a known name, or a different header,
   * starts a new file. */
  fdef defs[MAX_DEFS];
  uint32_t ndefs = find_defs(hend, defs);
  int conflict = ndefs == MAX_DEFS;
  for (uint32_t k = 0; k < ndefs && !conflict; k++)
    conflict = func_known(b, &defs[k]) < 0;
  if (b->f && (conflict || strlen(b->header) != hlen || strncmp(b->header, hstart, hlen) != 0)) {
    vyre_status st = flush(b, err);
    if (st != VYRE_OK) return st;
  }
  for (uint32_t i = 0; i < b->cur.count; i++)
    if (strcmp(b->cur.entries[i], entry) == 0) return VYRE_OK; /* the same program again */
  if (!b->f) {
    snprintf(b->cur.path, sizeof b->cur.path, "%s/batch_%s_%u.ptx", b->dir, b->arch, b->files++);
    b->f = fopen(b->cur.path, "w");
    if (!b->f)
      return vyre_error_set(err, VYRE_IO, errno, "cannot create %s: %s. Fix: check the directory",
                            b->cur.path, strerror(errno));
    b->header = strndup(hstart, hlen);
    b->cur.labels = calloc(BATCH_KERNELS, sizeof *b->cur.labels);
    b->cur.entries = calloc(BATCH_KERNELS, sizeof *b->cur.entries);
    b->cur.first_line = calloc(BATCH_KERNELS, sizeof *b->cur.first_line);
    if (!b->header || !b->cur.labels || !b->cur.entries || !b->cur.first_line)
      return vyre_error_set(err, VYRE_OUT_OF_MEMORY, 0, "fuzz: out of memory");
    fwrite(hstart, 1, hlen, b->f);
    b->cur.lines = count_lines(hstart, hlen);
  }
  b->cur.first_line[b->cur.count] = b->cur.lines + 1;
  const char *at = hend;
  for (uint32_t k = 0; k < ndefs; k++) {
    /* Text before this definition, then the definition unless the file has it. */
    fwrite(at, 1, (size_t)(defs[k].start - at), b->f);
    b->cur.lines += count_lines(at, (size_t)(defs[k].start - at));
    if (func_known(b, &defs[k]) == 0) {
      fwrite(defs[k].start, 1, defs[k].len, b->f);
      b->cur.lines += count_lines(defs[k].start, defs[k].len);
      if (func_remember(b, &defs[k]) != 0)
        return vyre_error_set(err, VYRE_OUT_OF_MEMORY, 0, "fuzz: out of memory");
    }
    at = defs[k].start + defs[k].len;
  }
  fputs(at, b->f);
  fputc('\n', b->f);
  b->cur.lines += count_lines(at, strlen(at)) + 1;
  b->cur.labels[b->cur.count] = strdup(label);
  b->cur.entries[b->cur.count] = strdup(entry);
  b->cur.count++;
  b->kernels++;
  if (b->cur.count == BATCH_KERNELS) return flush(b, err);
  return VYRE_OK;
}

vyre_status fz_ptxas_finish(fz_ptxas *b, FILE *log, uint32_t *kernels, uint32_t *failures,
                            vyre_error *err) {
  b->log = log;
  vyre_status st = flush(b, err);
  for (uint32_t i = 0; i < IN_FLIGHT; i++) collect(b, &b->flight[i]);
  *kernels = b->kernels;
  *failures = b->failures;
  return st;
}

void fz_ptxas_close(fz_ptxas *b) {
  if (!b) return;
  if (b->f) fclose(b->f);
  for (uint32_t i = 0; i < IN_FLIGHT; i++) collect(b, &b->flight[i]);
  free(b->header);
  file_clear(&b->cur);
  funcs_clear(b);
  free(b->funcs);
  free(b);
}
