/* file.c -- a bounded reader that refuses what is not a regular file, and an atomic writer (file.h). */
#include "file.h"

#include <errno.h>
#include <fcntl.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

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

vyre_status vyre__file_read(const char *path, uint64_t max, const char *too_big_fix, void **data,
                            size_t *size, vyre_error *err) {
  *data = NULL;
  *size = 0;
  /* O_NONBLOCK: opening a FIFO must not wait for a writer. */
  int fd = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
  if (fd < 0) {
    int e = errno;
    return vyre__error_set(err, VYRE_IO, e, "cannot open %s: %s. Fix: check the path", path,
                           strerror(e));
  }
  struct stat st;
  vyre_status s;
  if (fstat(fd, &st) != 0) {
    int e = errno;
    s = vyre__error_set(err, VYRE_IO, e, "cannot read %s: %s. Fix: check the file", path,
                        strerror(e));
  } else if (!S_ISREG(st.st_mode)) {
    s = vyre__error_set(err, VYRE_IO, 0,
                        "cannot read %s: it is not a regular file (%s). Fix: pass a regular file",
                        path, file_kind(st.st_mode));
  } else if ((uint64_t)st.st_size > max) {
    /* Known before reading a byte; the read below still stops at max + 1
     * for a file that grows meanwhile. */
    s = vyre__error_set(err, VYRE_LIMIT, 0,
                        "cannot read %s: it holds more than %llu bytes. Fix: %s", path,
                        (unsigned long long)max, too_big_fix ? too_big_fix : "pass a smaller file");
  } else {
    int flags = fcntl(fd, F_GETFL);
    if (flags >= 0) (void)fcntl(fd, F_SETFL, flags & ~O_NONBLOCK);
    s = vyre__file_read_fd(fd, path, max, too_big_fix, data, size, err);
  }
  close(fd);
  return s;
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
