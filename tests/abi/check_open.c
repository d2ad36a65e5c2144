/* check_open.c -- the one checked open of abi/support/file.h: regular files only (a FIFO never blocks), the library check before dlopen (truncated, foreign, not ELF), and the directory walk (loops, DAGs of symlinks, the depth cap, order). */
#include <check.h>
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "abi/support/file.h"
#include "vyre/vyre_support.h"

static char dir[64];

static void dir_setup(void) {
  strcpy(dir, "/tmp/check_open.XXXXXX");
  ck_assert_ptr_nonnull(mkdtemp(dir));
}

static void dir_teardown(void) {
  char cmd[128];
  snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
  if (system(cmd) != 0) fprintf(stderr, "could not remove %s\n", dir);
}

static const char *in_dir(const char *name) {
  static char p[4][1024];
  static int k;
  k = (k + 1) % 4;
  snprintf(p[k], sizeof p[k], "%s/%s", dir, name);
  return p[k];
}

static void put_bytes(const char *path, const void *data, size_t n) {
  FILE *f = fopen(path, "wb");
  ck_assert_ptr_nonnull(f);
  ck_assert_uint_eq(fwrite(data, 1, n, f), n);
  fclose(f);
}

/* ---- open ---------------------------------------------------------------- */

START_TEST(test_open_regular) {
  put_bytes(in_dir("ten"), "0123456789", 10);
  int fd = -2;
  struct stat st;
  vyre_error err = VYRE_ERROR_INIT;
  ck_assert_int_eq(vyre__file_open(in_dir("ten"), 10, NULL, &fd, &st, &err), VYRE_OK);
  ck_assert_msg(fd >= 0 && st.st_size == 10, "a descriptor and its stat");
  ck_assert_msg((fcntl(fd, F_GETFL) & O_NONBLOCK) == 0, "O_NONBLOCK is cleared after the check");
  ck_assert_msg((fcntl(fd, F_GETFD) & FD_CLOEXEC) != 0, "close-on-exec");
  char b[16];
  ck_assert_int_eq(read(fd, b, sizeof b), 10);
  close(fd);
  ck_assert_int_eq(vyre__file_open(in_dir("ten"), 9, "use a shorter one", &fd, NULL, &err),
                   VYRE_LIMIT);
  ck_assert_msg(fd == -1, "no descriptor on failure");
  ck_assert_msg(strstr(err.message, "holds more than 9 bytes. Fix: use a shorter one") != NULL,
                "a size over the bound is refused before reading: %s", err.message);
  ck_assert_int_eq(vyre__file_open(in_dir("missing"), 9, NULL, &fd, NULL, &err), VYRE_IO);
  ck_assert_int_eq((int)err.native_code, ENOENT);
  ck_assert_int_eq(vyre__file_open(dir, UINT64_MAX, NULL, &fd, NULL, &err), VYRE_IO);
  ck_assert_msg(strstr(err.message, "it is not a regular file (a directory)") != NULL, "%s",
                err.message);
  ck_assert_int_eq((int)err.native_code, 0);
}
END_TEST

/* A FIFO with no writer: open(2) without O_NONBLOCK would wait forever. */
START_TEST(test_open_fifo) {
  ck_assert_int_eq(mkfifo(in_dir("fifo"), 0600), 0);
  alarm(10); /* a blocked open fails the test instead of hanging it */
  int fd;
  vyre_error err = VYRE_ERROR_INIT;
  ck_assert_int_eq(vyre__file_open(in_dir("fifo"), UINT64_MAX, NULL, &fd, NULL, &err), VYRE_IO);
  ck_assert_msg(strstr(err.message, "it is not a regular file (a FIFO). Fix: pass a regular file"),
                "%s", err.message);
  ck_assert_int_eq(vyre__file_check_library(in_dir("fifo"), "FIX", &err), VYRE_IO);
  ck_assert_msg(strstr(err.message, "cannot load ") && strstr(err.message, "it is not a regular "
                "file (a FIFO). Fix: FIX"), "the library check refuses it too: %s", err.message);
  alarm(0);
}
END_TEST

/* ---- the library check --------------------------------------------------- */

/* This process's C library: a complete shared object of its machine. */
static const char *libc_path(void) {
  Dl_info info;
  ck_assert_msg(dladdr((void *)&strlen, &info) && info.dli_fname, "dladdr finds libc");
  return info.dli_fname;
}

static unsigned char *slurp(const char *path, size_t *n) {
  void *data;
  vyre_error err = VYRE_ERROR_INIT;
  ck_assert_int_eq(vyre__file_read(path, 64u << 20, NULL, &data, n, &err), VYRE_OK);
  return data;
}

START_TEST(test_library_whole) {
  vyre_error err = VYRE_ERROR_INIT;
  ck_assert_msg(vyre__file_check_library(libc_path(), "FIX", &err) == VYRE_OK,
                "this process's libc passes: %s", err.message);
  size_t n;
  unsigned char *so = slurp(libc_path(), &n);
  put_bytes(in_dir("copy.so"), so, n);
  ck_assert_msg(vyre__file_check_library(in_dir("copy.so"), "FIX", &err) == VYRE_OK,
                "a whole copy passes: %s", err.message);
  free(so);
}
END_TEST

/* Every cut of a real library is refused: dlopen would map pages the
 * file does not have (SIGBUS). */
START_TEST(test_library_truncated) {
  size_t n;
  unsigned char *so = slurp(libc_path(), &n);
  const size_t cuts[] = {0, 3, 16, 63, 64, 200, 4096, n / 3, n / 2, n - 4096, n - 1};
  for (size_t i = 0; i < sizeof cuts / sizeof *cuts; i++) {
    put_bytes(in_dir("cut.so"), so, cuts[i]);
    vyre_error err = VYRE_ERROR_INIT;
    ck_assert_msg(vyre__file_check_library(in_dir("cut.so"), "FIX", &err) == VYRE_IO,
                  "a copy cut at %zu of %zu bytes is refused", cuts[i], n);
    ck_assert_msg((strstr(err.message, "truncated: ") || strstr(err.message, "not an ELF file")) &&
                      strstr(err.message, ". Fix: FIX"),
                  "cut at %zu: says why: %s", cuts[i], err.message);
  }
  free(so);
}
END_TEST

START_TEST(test_library_foreign) {
  size_t n;
  unsigned char *so = slurp(libc_path(), &n);
  vyre_error err = VYRE_ERROR_INIT;
  unsigned char *bad = malloc(n);
  ck_assert_ptr_nonnull(bad);
  memcpy(bad, so, n);
  bad[4] = bad[4] == 2 ? 1 : 2; /* the other ELF class */
  put_bytes(in_dir("class.so"), bad, n);
  ck_assert_int_eq(vyre__file_check_library(in_dir("class.so"), "FIX", &err), VYRE_IO);
  ck_assert_msg(strstr(err.message, "this process is") != NULL, "names the class: %s",
                err.message);
  memcpy(bad, so, n);
  bad[16] = 2; /* e_type ET_EXEC (both byte orders: 2 in one of the bytes) */
  bad[17] = 0;
  put_bytes(in_dir("exec.so"), bad, n);
  ck_assert_int_eq(vyre__file_check_library(in_dir("exec.so"), "FIX", &err), VYRE_IO);
  ck_assert_msg(strstr(err.message, "not a shared library") != NULL, "%s", err.message);
  put_bytes(in_dir("text.so"), "just text\n", 10);
  ck_assert_int_eq(vyre__file_check_library(in_dir("text.so"), "FIX", &err), VYRE_IO);
  ck_assert_msg(strstr(err.message, "not an ELF file") != NULL, "%s", err.message);
  ck_assert_int_eq(vyre__file_check_library(in_dir("none.so"), "FIX", &err), VYRE_IO);
  ck_assert_msg(strstr(err.message, "No such file or directory. Fix: FIX") != NULL, "%s",
                err.message);
  free(bad);
  free(so);
}
END_TEST

/* ---- the walk ------------------------------------------------------------ */

typedef struct seen {
  char paths[64][512];
  unsigned count, stop_at;
} seen;

static vyre_status record(void *ctx, const char *path, vyre_error *err) {
  seen *s = ctx;
  if (s->count < 64) snprintf(s->paths[s->count], sizeof s->paths[0], "%s", path);
  s->count++;
  if (s->stop_at && s->count == s->stop_at)
    return vyre_error_set(err, VYRE_NOT_READY, 0, "stopped at %u", s->count);
  return VYRE_OK;
}

static void mkdir_in(const char *name) { ck_assert_int_eq(mkdir(in_dir(name), 0700), 0); }

static void link_in(const char *target, const char *name) {
  ck_assert_int_eq(symlink(target, in_dir(name)), 0);
}

/* 4 symlinks in each of 10 levels to the next: 4^10 paths, 11 directories. */
START_TEST(test_walk_dag) {
  char name[64], target[64];
  for (int i = 0; i <= 10; i++) {
    snprintf(name, sizeof name, "d%d", i);
    mkdir_in(name);
    snprintf(name, sizeof name, "d%d/f%02d.vyre", i, i);
    put_bytes(in_dir(name), "x", 1);
    for (int k = 0; i < 10 && k < 4; k++) {
      snprintf(name, sizeof name, "d%d/l%d", i, k);
      snprintf(target, sizeof target, "../d%d", i + 1);
      link_in(target, name);
    }
  }
  seen *s = calloc(1, sizeof *s);
  vyre_error err = VYRE_ERROR_INIT;
  struct timespec t0, t1;
  clock_gettime(CLOCK_MONOTONIC, &t0);
  ck_assert_int_eq(vyre__dir_walk(in_dir("d0"), 16, "corpus directory", "FIX", record, s, &err),
                   VYRE_OK);
  clock_gettime(CLOCK_MONOTONIC, &t1);
  double secs = (double)(t1.tv_sec - t0.tv_sec) + (double)(t1.tv_nsec - t0.tv_nsec) / 1e9;
  ck_assert_msg(s->count == 11, "each directory once: 11 files, not one per path (%u)", s->count);
  ck_assert_msg(secs < 1.0, "well under a second (%.3f s)", secs);
  /* Breadth first, names in byte order: the shortest path to each directory. */
  ck_assert_msg(strstr(s->paths[1], "/d0/l0/f01.vyre") != NULL, "%s", s->paths[1]);
  ck_assert_msg(strstr(s->paths[10], "/d0/l0/l0/l0/l0/l0/l0/l0/l0/l0/l0/f10.vyre") != NULL, "%s",
                s->paths[10]);
  free(s);
}
END_TEST

START_TEST(test_walk_loop_and_depth) {
  mkdir_in("root");
  put_bytes(in_dir("root/b.vyre"), "x", 1);
  put_bytes(in_dir("root/a.vyre"), "x", 1);
  put_bytes(in_dir("root/.hidden.vyre"), "x", 1);
  link_in(".", "root/self");
  link_in("..", "root/up"); /* leads out of the root to the temp directory: walked once */
  ck_assert_int_eq(mkfifo(in_dir("root/fifo.vyre"), 0600), 0);
  char path[512] = "root";
  for (int i = 1; i <= 20; i++) { /* root/n/n/...: 20 levels, a file in each */
    strcat(path, "/n");
    mkdir_in(path);
    char file[600];
    snprintf(file, sizeof file, "%s/f%02d.vyre", path, i);
    put_bytes(in_dir(file), "x", 1);
  }
  seen *s = calloc(1, sizeof *s);
  vyre_error err = VYRE_ERROR_INIT;
  alarm(10);
  ck_assert_int_eq(vyre__dir_walk(in_dir("root"), 16, "corpus directory", "FIX", record, s, &err),
                   VYRE_OK);
  alarm(0);
  ck_assert_msg(strstr(s->paths[0], "root/a.vyre") && strstr(s->paths[1], "root/b.vyre"),
                "byte order within a directory; '.' names skipped; a FIFO is no file: %s %s",
                s->paths[0], s->paths[1]);
  unsigned deepest = 0;
  for (unsigned i = 0; i < s->count && i < 64; i++) {
    const char *f = strrchr(s->paths[i], 'f');
    if (strstr(s->paths[i], "/n/") && f && f[1] >= '0' && f[1] <= '9')
      deepest = (unsigned)atoi(f + 1) > deepest ? (unsigned)atoi(f + 1) : deepest;
  }
  ck_assert_msg(deepest == 16, "16 levels below the root are walked, not more (%u)", deepest);
  /* root: a, b; n1..n16; the loop "self" adds nothing. */
  ck_assert_msg(s->count == 18, "no file twice through the loop (%u)", s->count);
  s->count = 0;
  s->stop_at = 2;
  ck_assert_int_eq(vyre__dir_walk(in_dir("root"), 16, "corpus directory", "FIX", record, s, &err),
                   VYRE_NOT_READY);
  ck_assert_msg(s->count == 2 && strcmp(err.message, "stopped at 2") == 0,
                "the callback's status stops the walk");
  free(s);
}
END_TEST

/* A directory reached first by a long path and again by a short one:
 * what lies under it within the cap by the short path is listed. */
START_TEST(test_walk_shortest_path) {
  char path[512] = "root/a";
  mkdir_in("root");
  mkdir_in("root/a");
  for (int i = 0; i < 14; i++) { /* root/a/x/x/.../x: 15 levels */
    strcat(path, "/x");
    mkdir_in(path);
  }
  mkdir_in("root/t");
  mkdir_in("root/t/u");
  put_bytes(in_dir("root/t/u/deep.vyre"), "x", 1);
  /* root/a/x...x/t at level 16: walked there, depth first, its u (17)
   * would be beyond the cap, and root/t (level 1) already seen. */
  ck_assert_int_eq(symlink(in_dir("root/t"), in_dir("root/a/x/x/x/x/x/x/x/x/x/x/x/x/x/x/t")), 0);
  seen *s = calloc(1, sizeof *s);
  vyre_error err = VYRE_ERROR_INIT;
  ck_assert_int_eq(vyre__dir_walk(in_dir("root"), 16, "corpus directory", "FIX", record, s, &err),
                   VYRE_OK);
  ck_assert_msg(s->count == 1 && strstr(s->paths[0], "/root/t/u/deep.vyre"),
                "the file 3 levels down by its short path, once (%u: %s)", s->count,
                s->count ? s->paths[0] : "");
  free(s);
}
END_TEST

START_TEST(test_walk_errors) {
  vyre_error err = VYRE_ERROR_INIT;
  seen *s = calloc(1, sizeof *s);
  ck_assert_int_eq(vyre__dir_walk(in_dir("missing"), 16, "corpus directory", "pass --corpus DIR",
                                  record, s, &err),
                   VYRE_IO);
  ck_assert_msg(strstr(err.message, "cannot read corpus directory ") &&
                    strstr(err.message, "missing: No such file or directory. Fix: pass --corpus DIR"),
                "%s", err.message);
  ck_assert_int_eq(mkfifo(in_dir("fifo"), 0600), 0);
  alarm(10);
  ck_assert_int_eq(vyre__dir_walk(in_dir("fifo"), 16, "corpus directory", "FIX", record, s, &err),
                   VYRE_IO);
  alarm(0);
  ck_assert_msg(strstr(err.message, "Not a directory") != NULL, "a FIFO as the root: %s",
                err.message);
  free(s);
}
END_TEST

static Suite *open_suite(void) {
  Suite *s = suite_create("open");
  TCase *open = tcase_create("open");
  tcase_add_checked_fixture(open, dir_setup, dir_teardown);
  tcase_add_test(open, test_open_regular);
  tcase_add_test(open, test_open_fifo);
  suite_add_tcase(s, open);
  TCase *lib = tcase_create("library");
  tcase_add_checked_fixture(lib, dir_setup, dir_teardown);
  tcase_add_test(lib, test_library_whole);
  tcase_add_test(lib, test_library_truncated);
  tcase_add_test(lib, test_library_foreign);
  suite_add_tcase(s, lib);
  TCase *walk = tcase_create("walk");
  tcase_add_checked_fixture(walk, dir_setup, dir_teardown);
  tcase_set_timeout(walk, 30);
  tcase_add_test(walk, test_walk_dag);
  tcase_add_test(walk, test_walk_loop_and_depth);
  tcase_add_test(walk, test_walk_shortest_path);
  tcase_add_test(walk, test_walk_errors);
  suite_add_tcase(s, walk);
  return s;
}

int main(void) {
  SRunner *sr = srunner_create(open_suite());
  srunner_run_all(sr, CK_NORMAL);
  int failed = srunner_ntests_failed(sr);
  srunner_free(sr);
  return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
