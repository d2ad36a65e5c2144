/* file.h -- the one checked open of the host side (regular files only, bounded, never blocking on a FIFO), the library check before dlopen, the directory walk, the atomic writer. */
#ifndef VYRE_SUPPORT_FILE_H
#define VYRE_SUPPORT_FILE_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/stat.h>
#include <sys/types.h>

#include "vyre/vyre.h"

/*
 * Read the whole regular file `path`, at most `max` bytes, into a new
 * buffer: *data (free()) holds *size bytes and one NUL after them (text
 * may be used as a C string).  The file is opened with O_NONBLOCK and
 * refused unless fstat says it is a regular file, so a FIFO, a device or
 * a directory never blocks nor is read; then O_NONBLOCK is cleared.  At
 * most max + 1 bytes are read (one past the bound tells "too big").
 * Failures (*data NULL, *size 0, *err filled, the status returned):
 *   VYRE_IO            "cannot open PATH: <strerror>. Fix: check the path"
 *   VYRE_IO            "cannot read PATH: it is not a regular file (a
 *                      directory|a FIFO|...). Fix: pass a regular file"
 *   VYRE_LIMIT         "cannot read PATH: it holds more than MAX bytes.
 *                      Fix: <too_big_fix>" (NULL: "pass a smaller file")
 *   VYRE_IO            "cannot read PATH: <strerror>. Fix: check the file"
 *   VYRE_OUT_OF_MEMORY "cannot read PATH: out of memory. Fix: free memory"
 * Thread-safe.
 */
vyre_status vyre__file_read(const char *path, uint64_t max, const char *too_big_fix, void **data,
                            size_t *size, vyre_error *err);

/*
 * The one checked open of a file the project reads: `path` opened
 * read-only with O_NONBLOCK (a FIFO never waits for a writer), then
 * fstat: anything but a regular file is refused before a byte is read,
 * and so is one of more than `max` bytes (UINT64_MAX: any size).  Then
 * O_NONBLOCK is cleared.  *fd (close it) and *st (may be NULL) on
 * VYRE_OK; *fd -1 on failure, with the messages of vyre__file_read.
 * Thread-safe.
 */
vyre_status vyre__file_open(const char *path, uint64_t max, const char *too_big_fix, int *fd,
                            struct stat *st, vyre_error *err);

/*
 * Is `path` a shared library this process can map without a fault: a
 * regular file (vyre__file_open) holding a complete ELF shared object
 * (ET_DYN) of this process's class, byte order and machine, whose
 * program header table, every segment's file contents, at least one
 * PT_LOAD and the section header table lie inside the file (dlopen maps
 * what the program headers describe, and touching a page past the end
 * of a truncated file raises SIGBUS).  Read with pread through the one
 * ELF reader (elf.h), never mapped.  VYRE_OK, or VYRE_IO:
 *   "cannot load PATH: <the open error or the ELF reason>. Fix: <fix>"
 * The file can still change after the check (the caller's dlopen opens
 * it again): this guards against accidents, not an adversary.
 * Thread-safe.
 */
vyre_status vyre__file_check_library(const char *path, const char *fix, vyre_error *err);

/*
 * Walk the directory tree under `root` breadth first and call on_file
 * for each regular file (symlinks followed) whose name does not start
 * with '.'; the entries of each directory in byte-wise order.  Each
 * directory is walked once, identified by (st_dev, st_ino), however many
 * paths or symlinks lead to it, under its shortest path (breadth first:
 * a long path to it cannot hide what the depth cap leaves reachable by a
 * short one): a loop is not followed and a DAG of directory symlinks
 * costs its directories, not its paths.  Directories more than max_depth
 * levels below root are not walked.  on_file gets the path
 * ("root/sub/name") and returns VYRE_OK to go on; anything else stops
 * the walk and is returned.  Failures: the root or a directory that
 * cannot be opened or read (VYRE_IO "cannot read WHAT DIR: <strerror>.
 * Fix: <fix>", what: "corpus directory"), VYRE_OUT_OF_MEMORY.  Paths longer than 4095
 * bytes are skipped.  Thread-safe.
 */
typedef vyre_status (*vyre__walk_fn)(void *ctx, const char *path, vyre_error *err);
vyre_status vyre__dir_walk(const char *root, unsigned max_depth, const char *what,
                           const char *fix,
                           vyre__walk_fn on_file, void *ctx, vyre_error *err);

/*
 * The same from an open descriptor, read from where it stands to its
 * end, whatever it is (standard input: a pipe or a terminal may block
 * as the caller expects).  `name` names it in messages ("<stdin>").
 * The descriptor stays open.
 */
vyre_status vyre__file_read_fd(int fd, const char *name, uint64_t max, const char *too_big_fix,
                               void **data, size_t *size, vyre_error *err);

/*
 * Replace `path` atomically with what is written to a stream: the bytes
 * go to a new temporary file in the same directory ("PATH.tmp.PID.N",
 * created with O_EXCL and `mode` less the umask), which commit flushes,
 * fsyncs, closes and renames over `path`; a reader sees the old file or
 * the new one, never a part.  On any failure the temporary file is
 * removed and `path` is untouched.  "-" is not special here (standard
 * output is the caller's business).  Thread-safe (each call has its own
 * temporary name); one vyre__atomic_file per thread.
 *
 *   vyre__atomic_file a;
 *   if ((st = vyre__file_atomic_begin(&a, path, 0666, err))) return st;
 *   fprintf(a.f, ...);                       // any stdio writes
 *   return vyre__file_atomic_commit(&a, err); // or vyre__file_atomic_abort(&a)
 */
typedef struct vyre__atomic_file {
  FILE *f;    /* write here; owned by the writer */
  char *path; /* the final name */
  char *tmp;  /* the temporary name; NULL once nothing is left to remove */
  int no_sync; /* set after begin to skip the fsync at commit: for files
                * whose readers verify them (a cache), where a torn file
                * after a crash costs a rebuild, not a wrong result */
} vyre__atomic_file;

/* Create the temporary file and open a->f on it.  Failure (nothing left
 * behind, *a zeroed):
 *   VYRE_IO "cannot create PATH: <strerror>. Fix: check the directory
 *            exists and is writable" */
vyre_status vyre__file_atomic_begin(vyre__atomic_file *a, const char *path, mode_t mode,
                                    vyre_error *err);

/* Flush, fsync (unless a->no_sync), close and rename; always releases *a.  Failures (the
 * temporary file removed):
 *   VYRE_IO "cannot write PATH: <strerror>. Fix: check free space"
 *   VYRE_IO "cannot replace PATH: <strerror>. Fix: check that it is not
 *            a directory and that its directory is writable" */
vyre_status vyre__file_atomic_commit(vyre__atomic_file *a, vyre_error *err);

/* Give up: close and remove the temporary file, release *a.  Accepts
 * NULL, a zeroed or a failed one, and one already released. */
void vyre__file_atomic_abort(vyre__atomic_file *a);

/* The whole of `size` bytes of `data` (NULL when size is 0) as one
 * atomic replacement: begin, fwrite, commit. */
vyre_status vyre__file_write_atomic(const char *path, const void *data, size_t size, mode_t mode,
                                    vyre_error *err);

#endif /* VYRE_SUPPORT_FILE_H */
