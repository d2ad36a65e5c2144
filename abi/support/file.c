/* file.c -- the one checked open (regular files only, bounded, no blocking on a FIFO), a library check before dlopen, a loop- and DAG-safe directory walk, and an atomic writer (file.h). */
#include "file.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "elf.h"
#include "errfill.h"

/* What a non-regular file is, for the message. */
static const char *file_kind(mode_t m) {
  if (S_ISDIR(m)) return "a directory";
  if (S_ISFIFO(m)) return "a FIFO";
  if (S_ISCHR(m)) return "a character device";
  if (S_ISBLK(m)) return "a block device";
  if (S_ISSOCK(m)) return "a socket";
  return "not a plain file";
}

/* read(2) until n bytes or the end; -1 on an error (errno set). */
static ssize_t read_full(int fd, char *dst, size_t n) {
  size_t done = 0;
  while (done < n) {
    ssize_t got = read(fd, dst + done, n - done);
    if (got < 0) {
      if (errno == EINTR) continue;
      return -1;
    }
    if (got == 0) break;
    done += (size_t)got;
  }
  return (ssize_t)done;
}

vyre_status vyre__file_read_fd(int fd, const char *name, uint64_t max, const char *too_big_fix,
                               void **data, size_t *size, vyre_error *err) {
  *data = NULL;
  *size = 0;
  size_t cap = 4096, used = 0;
  /* Read one byte past max to tell "too big" from "exactly max" (max is
   * the caller's, up to UINT64_MAX: no wrap). */
  uint64_t stop = max == UINT64_MAX ? UINT64_MAX : max + 1;
  char *buf = malloc(cap + 1);
  if (!buf) goto fail_oom;
  for (;;) {
    size_t want = cap - used;
    if ((uint64_t)used + want > stop) want = (size_t)(stop - used);
    ssize_t got = read_full(fd, buf + used, want);
    if (got < 0) {
      int e = errno;
      free(buf);
      return vyre__error_set(err, VYRE_IO, e, "cannot read %s: %s. Fix: check the file", name,
                             strerror(e));
    }
    used += (size_t)got;
    if (used > max) {
      free(buf);
      return vyre__error_set(err, VYRE_LIMIT, 0,
                             "cannot read %s: it holds more than %llu bytes. Fix: %s", name,
                             (unsigned long long)max,
                             too_big_fix ? too_big_fix : "pass a smaller file");
    }
    if ((size_t)got < want) break;
    if (used < cap) continue;
    if (cap > SIZE_MAX / 2 - 1) goto fail_oom;
    char *grown = realloc(buf, cap * 2 + 1);
    if (!grown) goto fail_oom;
    buf = grown;
    cap *= 2;
  }
  buf[used] = '\0';
  *data = buf;
  *size = used;
  return VYRE_OK;
fail_oom:
  free(buf);
  return vyre__error_set(err, VYRE_OUT_OF_MEMORY, ENOMEM,
                         "cannot read %s: out of memory. Fix: free memory", name);
}

vyre_status vyre__file_open(const char *path, uint64_t max, const char *too_big_fix, int *fd,
                            struct stat *st, vyre_error *err) {
  *fd = -1;
  /* O_NONBLOCK: opening a FIFO must not wait for a writer. */
  int f = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
  if (f < 0) {
    int e = errno;
    return vyre__error_set(err, VYRE_IO, e, "cannot open %s: %s. Fix: check the path", path,
                           strerror(e));
  }
  struct stat own;
  if (!st) st = &own;
  vyre_status s = VYRE_OK;
  if (fstat(f, st) != 0) {
    int e = errno;
    s = vyre__error_set(err, VYRE_IO, e, "cannot read %s: %s. Fix: check the file", path,
                        strerror(e));
  } else if (!S_ISREG(st->st_mode)) {
    s = vyre__error_set(err, VYRE_IO, 0,
                        "cannot read %s: it is not a regular file (%s). Fix: pass a regular file",
                        path, file_kind(st->st_mode));
  } else if ((uint64_t)st->st_size > max) {
    /* Known before reading a byte; a reader still stops at max + 1 for a
     * file that grows meanwhile. */
    s = vyre__error_set(err, VYRE_LIMIT, 0,
                        "cannot read %s: it holds more than %llu bytes. Fix: %s", path,
                        (unsigned long long)max, too_big_fix ? too_big_fix : "pass a smaller file");
  }
  if (s != VYRE_OK) {
    close(f);
    return s;
  }
  int flags = fcntl(f, F_GETFL);
  if (flags >= 0) (void)fcntl(f, F_SETFL, flags & ~O_NONBLOCK);
  *fd = f;
  return VYRE_OK;
}

vyre_status vyre__file_read(const char *path, uint64_t max, const char *too_big_fix, void **data,
                            size_t *size, vyre_error *err) {
  *data = NULL;
  *size = 0;
  int fd;
  vyre_status s = vyre__file_open(path, max, too_big_fix, &fd, NULL, err);
  if (s != VYRE_OK) return s;
  s = vyre__file_read_fd(fd, path, max, too_big_fix, data, size, err);
  close(fd);
  return s;
}

/* ------------------------------------------------------------------ */
/* A library dlopen can map                                            */
/* ------------------------------------------------------------------ */

#define ELF_ET_DYN 3
#define ELF_PT_LOAD 1
#define ELF_PHNUM_MAX 4096u /* more than any real shared object has */

/* The ELF reason a library cannot be mapped, into why; 0 when it can. */
static int library_why(int fd, uint64_t size, char *why, size_t why_size) {
  vyre__elf e;
  if (vyre__elf_open(&e, vyre__elf_read_fd, &fd, size, why, why_size) != 0) return -1;
  unsigned char cls, data;
  uint16_t machine;
  char b1[64], b2[64];
  vyre__elf_host(&cls, &data, &machine);
  if (e.ident[4] != cls || e.ident[5] != data) {
    snprintf(why, why_size, "built for %d-bit %s-endian ELF, this process is %d-bit %s-endian",
             e.is64 ? 64 : 32, e.big ? "big" : "little", cls == VYRE__ELF_CLASS64 ? 64 : 32,
             data == VYRE__ELF_DATA_MSB ? "big" : "little");
    return -1;
  }
  if (machine && e.machine != machine) {
    snprintf(why, why_size, "built for %s, this process is %s",
             vyre__elf_machine_str(e.machine, b1, sizeof b1),
             vyre__elf_machine_str(machine, b2, sizeof b2));
    return -1;
  }
  if (e.type != ELF_ET_DYN) {
    snprintf(why, why_size, "not a shared library (ELF type %u)", e.type);
    return -1;
  }
  if (vyre__elf_check_sizes(&e, why, why_size) != 0) return -1;
  uint64_t table = (uint64_t)e.phnum * e.phentsize;
  if (e.phnum == 0 || e.phnum > ELF_PHNUM_MAX) {
    snprintf(why, why_size, "corrupt ELF file: %u program headers", e.phnum);
    return -1;
  }
  if (vyre__elf_range_ok(&e, e.phoff, table) != 0) {
    snprintf(why, why_size, "truncated: %llu bytes, its program headers end at %llu",
             (unsigned long long)size, (unsigned long long)vyre__elf_end(e.phoff, table));
    return -1;
  }
  uint32_t loads = 0;
  for (uint32_t i = 0; i < e.phnum; i++) {
    vyre__elf_phdr ph;
    if (vyre__elf_phdr_read(&e, i, &ph, why, why_size) != 0) return -1;
    loads += ph.type == ELF_PT_LOAD;
    if (ph.filesz && vyre__elf_range_ok(&e, ph.offset, ph.filesz) != 0) {
      snprintf(why, why_size, "truncated: %llu bytes, its %s %u ends at %llu",
               (unsigned long long)size, ph.type == ELF_PT_LOAD ? "PT_LOAD segment" : "program header", i,
               (unsigned long long)vyre__elf_end(ph.offset, ph.filesz));
      return -1;
    }
  }
  if (!loads) {
    snprintf(why, why_size, "corrupt ELF file: no PT_LOAD segment");
    return -1;
  }
  /* dlopen never reads the section headers, but an ELF file ends with
   * them: a file cut short anywhere is refused here. */
  uint64_t sections = (uint64_t)e.shnum * e.shentsize;
  if (e.shoff && sections && vyre__elf_range_ok(&e, e.shoff, sections) != 0) {
    snprintf(why, why_size, "truncated: %llu bytes, its section headers end at %llu",
             (unsigned long long)size, (unsigned long long)vyre__elf_end(e.shoff, sections));
    return -1;
  }
  return 0;
}

vyre_status vyre__file_check_library(const char *path, const char *fix, vyre_error *err) {
  int fd;
  struct stat st;
  vyre_error open_err = VYRE_ERROR_INIT;
  char why[320];
  if (vyre__file_open(path, UINT64_MAX, NULL, &fd, &st, &open_err) != VYRE_OK) {
    /* "cannot open|read PATH: " is said once, by the caller's words. */
    const char *colon = strstr(open_err.message, ": ");
    const char *dot = strstr(open_err.message, ". Fix:");
    int n = dot ? (int)(dot - open_err.message) : (int)strlen(open_err.message);
    const char *from = colon && colon < open_err.message + n ? colon + 2 : open_err.message;
    snprintf(why, sizeof why, "%.*s", n - (int)(from - open_err.message), from);
    return vyre__error_set(err, VYRE_IO, open_err.native_code, "cannot load %s: %s. Fix: %s",
                           path, why, fix);
  }
  int rc = library_why(fd, (uint64_t)st.st_size, why, sizeof why);
  close(fd);
  if (rc == 0) return VYRE_OK;
  return vyre__error_set(err, VYRE_IO, 0, "cannot load %s: %s. Fix: %s", path, why, fix);
}

/* ------------------------------------------------------------------ */
/* A loop- and DAG-safe directory walk                                 */
/* ------------------------------------------------------------------ */

/* The directories met so far, by identity: an open-addressing set. */
typedef struct dir_set {
  struct dir_key {
    dev_t dev;
    ino_t ino;
    int used;
  } *slot;
  size_t cap, count;
} dir_set;

static size_t dir_hash(dev_t dev, ino_t ino, size_t cap) {
  uint64_t h = ((uint64_t)dev * 0x9e3779b97f4a7c15ull) ^ ((uint64_t)ino * 0xff51afd7ed558ccdull);
  return (size_t)(h ^ (h >> 29)) & (cap - 1);
}

/* 1 when (dev, ino) was added, 0 when it was there, -1 out of memory. */
static int dir_set_add(dir_set *s, dev_t dev, ino_t ino) {
  if ((s->count + 1) * 2 > s->cap) {
    size_t cap = s->cap ? s->cap * 2 : 64;
    struct dir_key *slot = calloc(cap, sizeof *slot);
    if (!slot) return -1;
    for (size_t i = 0; i < s->cap; i++) {
      if (!s->slot[i].used) continue;
      size_t k = dir_hash(s->slot[i].dev, s->slot[i].ino, cap);
      while (slot[k].used) k = (k + 1) & (cap - 1);
      slot[k] = s->slot[i];
    }
    free(s->slot);
    s->slot = slot;
    s->cap = cap;
  }
  size_t k = dir_hash(dev, ino, s->cap);
  for (; s->slot[k].used; k = (k + 1) & (s->cap - 1))
    if (s->slot[k].dev == dev && s->slot[k].ino == ino) return 0;
  s->slot[k] = (struct dir_key){dev, ino, 1};
  s->count++;
  return 1;
}

/* A directory met and not yet walked: the walk is breadth first, so
 * each directory is first met, and walked, at its least depth (a long
 * path to it cannot hide what the cap leaves reachable by a short one). */
typedef struct walk_item {
  char *path;
  unsigned depth;
} walk_item;

typedef struct walker {
  dir_set seen;
  walk_item *queue;
  size_t head, tail, cap;
  unsigned max_depth;
  const char *what, *fix;
  vyre__walk_fn on_file;
  void *ctx;
  vyre_error *err;
} walker;

static vyre_status walk_oom(walker *w, const char *dir) {
  return vyre__error_set(w->err, VYRE_OUT_OF_MEMORY, ENOMEM,
                         "cannot walk %s: out of memory. Fix: free memory", dir);
}

/* Queue `path` to be walked at `depth`. */
static vyre_status walk_push(walker *w, const char *path, unsigned depth) {
  if (w->tail == w->cap) {
    size_t cap = w->cap ? w->cap * 2 : 32;
    walk_item *q = realloc(w->queue, cap * sizeof *q);
    if (!q) return walk_oom(w, path);
    w->queue = q;
    w->cap = cap;
  }
  char *copy = strdup(path);
  if (!copy) return walk_oom(w, path);
  w->queue[w->tail++] = (walk_item){copy, depth};
  return VYRE_OK;
}

static int cmp_names(const void *a, const void *b) {
  return strcmp(*(char *const *)a, *(char *const *)b);
}

/* The names in d but "." ones, sorted: *names (free each and it). */
static vyre_status dir_names(walker *w, DIR *d, const char *dir, char ***names, size_t *count) {
  size_t cap = 0;
  *names = NULL;
  *count = 0;
  struct dirent *e;
  errno = 0;
  while ((e = readdir(d)) != NULL) {
    if (e->d_name[0] == '.') continue;
    if (*count == cap) {
      size_t ncap = cap ? cap * 2 : 32;
      char **grown = realloc(*names, ncap * sizeof *grown);
      if (!grown) goto fail_oom;
      *names = grown;
      cap = ncap;
    }
    if (!((*names)[*count] = strdup(e->d_name))) goto fail_oom;
    (*count)++;
    errno = 0;
  }
  if (errno)
    return vyre__error_set(w->err, VYRE_IO, errno, "cannot read %s %s: %s. Fix: %s", w->what, dir,
                           strerror(errno), w->fix);
  if (*count) qsort(*names, *count, sizeof **names, cmp_names);
  return VYRE_OK;
fail_oom:
  return vyre__error_set(w->err, VYRE_OUT_OF_MEMORY, ENOMEM,
                         "cannot read %s %s: out of memory. Fix: free memory", w->what, dir);
}

/* List one directory: on_file for its regular files, its directories
 * not met before queued (up to the depth cap). */
static vyre_status walk_dir(walker *w, const char *dir, unsigned depth) {
  DIR *d = opendir(dir);
  struct stat self;
  if (!d || fstat(dirfd(d), &self) != 0) {
    int e = errno;
    if (d) closedir(d);
    return vyre__error_set(w->err, VYRE_IO, e, "cannot read %s %s: %s. Fix: %s", w->what, dir,
                           strerror(e), w->fix);
  }
  int added = dir_set_add(&w->seen, self.st_dev, self.st_ino);
  char **names = NULL;
  size_t count = 0;
  vyre_status st = added < 0 ? walk_oom(w, dir) : dir_names(w, d, dir, &names, &count);
  closedir(d);
  for (size_t i = 0; i < count && st == VYRE_OK; i++) {
    char sub[4096];
    if ((size_t)snprintf(sub, sizeof sub, "%s/%s", dir, names[i]) >= sizeof sub) continue;
    struct stat sb;
    if (stat(sub, &sb) != 0) continue;
    if (S_ISREG(sb.st_mode)) {
      st = w->on_file(w->ctx, sub, w->err);
    } else if (S_ISDIR(sb.st_mode) && depth < w->max_depth) {
      /* Met before (an ancestor: a loop; or another path to it: a DAG):
       * its files are listed already or will be. */
      int fresh = dir_set_add(&w->seen, sb.st_dev, sb.st_ino);
      if (fresh < 0) st = walk_oom(w, dir);
      else if (fresh) st = walk_push(w, sub, depth + 1);
    }
  }
  for (size_t i = 0; i < count; i++) free(names[i]);
  free(names);
  return st;
}

vyre_status vyre__dir_walk(const char *root, unsigned max_depth, const char *what,
                           const char *fix, vyre__walk_fn on_file, void *ctx, vyre_error *err) {
  walker w = {{NULL, 0, 0}, NULL, 0, 0, 0, max_depth, what, fix, on_file, ctx, err};
  vyre_status st = walk_dir(&w, root, 0);
  for (; w.head < w.tail; w.head++) {
    if (st == VYRE_OK) st = walk_dir(&w, w.queue[w.head].path, w.queue[w.head].depth);
    free(w.queue[w.head].path);
  }
  free(w.queue);
  free(w.seen.slot);
  return st;
}

void vyre__file_atomic_abort(vyre__atomic_file *a) {
  if (!a) return;
  if (a->f) fclose(a->f);
  if (a->tmp) unlink(a->tmp);
  free(a->tmp);
  free(a->path);
  memset(a, 0, sizeof *a);
}

vyre_status vyre__file_atomic_begin(vyre__atomic_file *a, const char *path, mode_t mode,
                                    vyre_error *err) {
  static atomic_uint seq;
  memset(a, 0, sizeof *a);
  size_t n = strlen(path) + 64;
  a->path = strdup(path);
  a->tmp = malloc(n);
  if (!a->path || !a->tmp) {
    free(a->tmp);
    a->tmp = NULL; /* nothing was created: nothing to unlink */
    vyre__file_atomic_abort(a);
    return vyre__error_set(err, VYRE_OUT_OF_MEMORY, ENOMEM,
                           "cannot write %s: out of memory. Fix: free memory", path);
  }
  snprintf(a->tmp, n, "%s.tmp.%ld.%u", path, (long)getpid(), atomic_fetch_add(&seq, 1u));
  int fd = open(a->tmp, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC | O_NOCTTY, mode);
  if (fd >= 0 && !(a->f = fdopen(fd, "wb"))) close(fd);
  if (!a->f) {
    int e = errno;
    if (fd < 0) { /* not created: someone else's file may have the name */
      free(a->tmp);
      a->tmp = NULL;
    }
    vyre__file_atomic_abort(a);
    return vyre__error_set(err, VYRE_IO, e,
                           "cannot create %s: %s. Fix: check the directory exists and is writable",
                           path, strerror(e));
  }
  return VYRE_OK;
}

vyre_status vyre__file_atomic_commit(vyre__atomic_file *a, vyre_error *err) {
  /* Data the stream could not write shows in ferror or at fflush. */
  int bad = ferror(a->f) || fflush(a->f) != 0 || (!a->no_sync && fsync(fileno(a->f)) != 0);
  int e = bad ? (errno ? errno : EIO) : 0;
  if (fclose(a->f) != 0 && !bad) bad = 1, e = errno;
  a->f = NULL;
  vyre_status s = VYRE_OK;
  if (bad) {
    s = vyre__error_set(err, VYRE_IO, e, "cannot write %s: %s. Fix: check free space", a->path,
                        strerror(e));
  } else if (rename(a->tmp, a->path) != 0) {
    e = errno;
    s = vyre__error_set(err, VYRE_IO, e,
                        "cannot replace %s: %s. Fix: check that it is not a directory and that "
                        "its directory is writable",
                        a->path, strerror(e));
  } else {
    free(a->tmp); /* renamed: nothing left to remove */
    a->tmp = NULL;
  }
  vyre__file_atomic_abort(a);
  return s;
}

vyre_status vyre__file_write_atomic(const char *path, const void *data, size_t size, mode_t mode,
                                    vyre_error *err) {
  vyre__atomic_file a;
  vyre_status s = vyre__file_atomic_begin(&a, path, mode, err);
  if (s != VYRE_OK) return s;
  if (size) fwrite(data, 1, size, a.f);
  return vyre__file_atomic_commit(&a, err);
}
