/* check_util.c -- the host-side utility layer of abi/support: the JSON writer, the bounded file reader and atomic writer, the clock. */
#include <check.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#include "abi/support/clock.h"
#include "abi/support/file.h"
#include "abi/support/json.h"

/* ---- JSON ---------------------------------------------------------------- */

/* What the escaper writes for n bytes of s, in a static buffer. */
static const char *escaped(const char *s, size_t n) {
  static char out[4096];
  FILE *f = fmemopen(out, sizeof out, "w");
  ck_assert_ptr_nonnull(f);
  vyre__json_escape(f, s, n);
  fclose(f);
  return out;
}

START_TEST(test_json_controls) {
  for (unsigned c = 0; c < 0x20; c++) {
    char in = (char)c, want[16];
    switch (c) {
    case '\b': strcpy(want, "\"\\b\""); break;
    case '\f': strcpy(want, "\"\\f\""); break;
    case '\n': strcpy(want, "\"\\n\""); break;
    case '\r': strcpy(want, "\"\\r\""); break;
    case '\t': strcpy(want, "\"\\t\""); break;
    default: snprintf(want, sizeof want, "\"\\u%04x\"", c); break;
    }
    ck_assert_msg(strcmp(escaped(&in, 1), want) == 0, "control 0x%02x: %s expected, got %s", c,
                  want, escaped(&in, 1));
  }
  ck_assert_str_eq(escaped("\x7f", 1), "\"\\u007f\"");
  ck_assert_str_eq(escaped("a\"b\\c/", 6), "\"a\\\"b\\\\c/\"");
  ck_assert_str_eq(escaped("a\0b", 3), "\"a\\u0000b\"");
  ck_assert_str_eq(escaped("", 0), "\"\"");
}
END_TEST

START_TEST(test_json_utf8) {
  /* Valid sequences of each length pass through as they are. */
  ck_assert_str_eq(escaped("\xc3\xa9", 2), "\"\xc3\xa9\"");
  ck_assert_str_eq(escaped("\xe2\x82\xac", 3), "\"\xe2\x82\xac\"");
  ck_assert_str_eq(escaped("\xf0\x9f\x98\x80", 4), "\"\xf0\x9f\x98\x80\"");
  ck_assert_str_eq(escaped("\xf4\x8f\xbf\xbf", 4), "\"\xf4\x8f\xbf\xbf\""); /* U+10FFFF */
  /* Every byte that starts no valid sequence is one U+FFFD. */
  ck_assert_str_eq(escaped("\x80", 1), "\"\\ufffd\"");                /* lone continuation */
  ck_assert_str_eq(escaped("\xc0\x80", 2), "\"\\ufffd\\ufffd\"");     /* overlong NUL */
  ck_assert_str_eq(escaped("\xe0\x80\xaf", 3), "\"\\ufffd\\ufffd\\ufffd\""); /* overlong */
  ck_assert_str_eq(escaped("\xed\xa0\x80", 3), "\"\\ufffd\\ufffd\\ufffd\""); /* surrogate */
  ck_assert_str_eq(escaped("\xf4\x90\x80\x80", 4),
                   "\"\\ufffd\\ufffd\\ufffd\\ufffd\""); /* past U+10FFFF */
  ck_assert_str_eq(escaped("\xf5", 1), "\"\\ufffd\"");
  ck_assert_str_eq(escaped("\xff", 1), "\"\\ufffd\"");
  ck_assert_str_eq(escaped("\xe2\x82", 2), "\"\\ufffd\\ufffd\""); /* cut short */
  ck_assert_str_eq(escaped("\xe2\x82x", 3), "\"\\ufffd\\ufffdx\"");
  ck_assert_str_eq(escaped("a\xc3", 2), "\"a\\ufffd\""); /* cut by n, not by a NUL */
}
END_TEST

START_TEST(test_json_string_to) {
  char out[64];
  FILE *f = fmemopen(out, sizeof out, "w");
  vyre__json_string_to(f, "x\ty");
  fputc(' ', f);
  vyre__json_string_to(f, NULL);
  fclose(f);
  ck_assert_str_eq(out, "\"x\\ty\" null");
}
END_TEST

START_TEST(test_json_document) {
  char out[1024];
  FILE *f = fmemopen(out, sizeof out, "w");
  vyre__json w;
  vyre__json_init(&w, f);
  vyre__json_object_begin(&w);
  vyre__json_key(&w, "n");
  vyre__json_uint(&w, UINT64_MAX);
  vyre__json_key(&w, "i");
  vyre__json_int(&w, INT64_MIN);
  vyre__json_key(&w, "list");
  vyre__json_array_begin(&w);
  vyre__json_double(&w, 10.0);
  vyre__json_double(&w, 0.1);
  vyre__json_double(&w, 1.0 / 3.0);
  vyre__json_double(&w, 5e-324);
  vyre__json_double(&w, 7840.0);
  vyre__json_double(&w, 160.0);
  vyre__json_double(&w, 1e-5);
  vyre__json_double(&w, 0.00015);
  vyre__json_double(&w, 1e21);
  vyre__json_double(&w, -0.0);
  vyre__json_double(&w, 0.0 / 0.0);
  vyre__json_double(&w, 1.0 / 0.0);
  vyre__json_bool(&w, 1);
  vyre__json_null(&w);
  vyre__json_raw(&w, "1.50");
  vyre__json_string(&w, NULL);
  vyre__json_string_n(&w, "a\0", 2);
  vyre__json_array_end(&w);
  vyre__json_uint(&w, 5); /* a value without a key: dropped */
  vyre__json_key(&w, "open");
  vyre__json_object_begin(&w);
  vyre__json_key(&w, "dangling");
  vyre__json_end(&w); /* closes both, the dangling key gets null */
  fclose(f);
  ck_assert_str_eq(out, "{\"n\":18446744073709551615,\"i\":-9223372036854775808,\"list\":[10,"
                        "0.1,0.3333333333333333,5e-324,7840,160,1e-05,0.00015,1e+21,-0,null,null,"
                        "true,null,1.50,null,"
                        "\"a\\u0000\"],\"open\":{\"dangling\":null}}\n");
}
END_TEST

START_TEST(test_json_depth_and_count) {
  char out[1024];
  FILE *f = fmemopen(out, sizeof out, "w");
  vyre__json w;
  vyre__json_init(&w, f);
  for (int i = 0; i < VYRE__JSON_MAX_DEPTH + 5; i++) vyre__json_array_begin(&w);
  vyre__json_end(&w);
  fclose(f);
  size_t opens = strspn(out, "[");
  ck_assert_msg(opens == VYRE__JSON_MAX_DEPTH - 1, "nesting stops below the limit (%zu)", opens);
  ck_assert_msg(strspn(out + opens, "]") == opens, "and every level is closed: %s", out);
  unsigned before = vyre__json_stdout_documents();
  vyre__json_count_stdout_document();
  ck_assert_uint_eq(vyre__json_stdout_documents(), before + 1);
}
END_TEST

/* ---- files --------------------------------------------------------------- */

static char dir[64];

static void dir_setup(void) {
  strcpy(dir, "/tmp/check_util.XXXXXX");
  ck_assert_ptr_nonnull(mkdtemp(dir));
}

static void dir_teardown(void) {
  DIR *d = opendir(dir);
  if (!d) return;
  struct dirent *e;
  char p[512];
  while ((e = readdir(d)))
    if (strcmp(e->d_name, ".") && strcmp(e->d_name, "..")) {
      snprintf(p, sizeof p, "%s/%s", dir, e->d_name);
      if (rmdir(p) != 0) unlink(p);
    }
  closedir(d);
  rmdir(dir);
}

static const char *in_dir(const char *name) {
  static char p[4][256];
  static int k;
  k = (k + 1) % 4;
  snprintf(p[k], sizeof p[k], "%s/%s", dir, name);
  return p[k];
}

static void put(const char *name, const char *text) {
  FILE *f = fopen(in_dir(name), "wb");
  ck_assert_ptr_nonnull(f);
  fputs(text, f);
  fclose(f);
}

/* Files in the directory whose name holds ".tmp.". */
static int temp_files(void) {
  DIR *d = opendir(dir);
  int n = 0;
  struct dirent *e;
  while ((e = readdir(d))) n += strstr(e->d_name, ".tmp.") != NULL;
  closedir(d);
  return n;
}

START_TEST(test_read_regular) {
  put("ten", "0123456789");
  void *data = NULL;
  size_t size = 1;
  vyre_error err = VYRE_ERROR_INIT;
  ck_assert_int_eq(vyre__file_read(in_dir("ten"), 10, NULL, &data, &size, &err), VYRE_OK);
  ck_assert_msg(size == 10 && memcmp(data, "0123456789", 11) == 0, "the bytes and a NUL");
  free(data);
  put("empty", "");
  ck_assert_int_eq(vyre__file_read(in_dir("empty"), 10, NULL, &data, &size, &err), VYRE_OK);
  ck_assert_msg(size == 0 && data && ((char *)data)[0] == '\0', "empty: a buffer with a NUL");
  free(data);
  /* Larger than the first 4 KiB buffer: it grows. */
  char big[10000];
  memset(big, 'x', sizeof big - 1);
  big[sizeof big - 1] = '\0';
  put("big", big);
  ck_assert_int_eq(vyre__file_read(in_dir("big"), sizeof big, NULL, &data, &size, &err), VYRE_OK);
  ck_assert_msg(size == sizeof big - 1 && strcmp(data, big) == 0, "a file larger than a block");
  free(data);
}
END_TEST

START_TEST(test_read_refused) {
  void *data = (void *)1;
  size_t size = 1;
  vyre_error err = VYRE_ERROR_INIT;
  char want[512];
  const char *missing = in_dir("missing");
  ck_assert_int_eq(vyre__file_read(missing, 10, NULL, &data, &size, &err), VYRE_IO);
  ck_assert_msg(data == NULL && size == 0 && err.native_code == ENOENT, "nothing returned");
  snprintf(want, sizeof want, "cannot open %s: %s. Fix: check the path", missing,
           strerror(ENOENT));
  ck_assert_str_eq(err.message, want);
  ck_assert_int_eq(vyre__file_read(dir, 10, NULL, &data, &size, &err), VYRE_IO);
  snprintf(want, sizeof want,
           "cannot read %s: it is not a regular file (a directory). Fix: pass a regular file", dir);
  ck_assert_str_eq(err.message, want);
  ck_assert_int_eq(vyre__file_read("/dev/null", 10, NULL, &data, &size, &err), VYRE_IO);
  ck_assert_str_eq(err.message, "cannot read /dev/null: it is not a regular file (a character "
                                "device). Fix: pass a regular file");
  put("eleven", "0123456789a");
  ck_assert_int_eq(vyre__file_read(in_dir("eleven"), 10, NULL, &data, &size, &err), VYRE_LIMIT);
  snprintf(want, sizeof want,
           "cannot read %s: it holds more than 10 bytes. Fix: pass a smaller file",
           in_dir("eleven"));
  ck_assert_str_eq(err.message, want);
  ck_assert_int_eq(vyre__file_read(in_dir("eleven"), 0, "use a shorter one", &data, &size, &err),
                   VYRE_LIMIT);
  ck_assert_msg(strstr(err.message, "more than 0 bytes. Fix: use a shorter one") != NULL,
                "the caller's Fix: %s", err.message);
  ck_assert_msg(data == NULL && size == 0, "nothing returned");
}
END_TEST

/* A FIFO without a writer would block an open without O_NONBLOCK. */
START_TEST(test_read_fifo) {
  const char *fifo = in_dir("fifo");
  ck_assert_int_eq(mkfifo(fifo, 0600), 0);
  alarm(10); /* a blocked open fails the test instead of hanging it */
  void *data = NULL;
  size_t size = 0;
  vyre_error err = VYRE_ERROR_INIT;
  ck_assert_int_eq(vyre__file_read(fifo, 10, NULL, &data, &size, &err), VYRE_IO);
  alarm(0);
  ck_assert_msg(strstr(err.message, "it is not a regular file (a FIFO). Fix: pass a regular file"),
                "a FIFO is refused: %s", err.message);
}
END_TEST

START_TEST(test_read_fd) {
  int p[2];
  ck_assert_int_eq(pipe(p), 0);
  ck_assert_int_eq(write(p[1], "hello", 5), 5);
  close(p[1]);
  void *data = NULL;
  size_t size = 0;
  vyre_error err = VYRE_ERROR_INIT;
  ck_assert_int_eq(vyre__file_read_fd(p[0], "<stdin>", 5, NULL, &data, &size, &err), VYRE_OK);
  ck_assert_msg(size == 5 && strcmp(data, "hello") == 0, "a pipe is read to its end");
  free(data);
  close(p[0]);
  ck_assert_int_eq(pipe(p), 0);
  ck_assert_int_eq(write(p[1], "hello", 5), 5);
  close(p[1]);
  ck_assert_int_eq(vyre__file_read_fd(p[0], "<stdin>", 4, NULL, &data, &size, &err), VYRE_LIMIT);
  ck_assert_str_eq(err.message,
                   "cannot read <stdin>: it holds more than 4 bytes. Fix: pass a smaller file");
  close(p[0]);
  /* No bound at all (UINT64_MAX): "one byte past max" must not wrap to 0. */
  char big[10000];
  memset(big, 'x', sizeof big);
  ck_assert_int_eq(pipe(p), 0);
  ck_assert_int_eq(write(p[1], big, sizeof big), (ssize_t)sizeof big);
  close(p[1]);
  ck_assert_int_eq(vyre__file_read_fd(p[0], "<stdin>", UINT64_MAX, NULL, &data, &size, &err),
                   VYRE_OK);
  ck_assert_msg(size == sizeof big && memcmp(data, big, sizeof big) == 0,
                "an unbounded read returns every byte");
  free(data);
  close(p[0]);
}
END_TEST

START_TEST(test_write_atomic) {
  vyre_error err = VYRE_ERROR_INIT;
  const char *out = in_dir("out.bin");
  ck_assert_int_eq(vyre__file_write_atomic(out, "first", 5, 0644, &err), VYRE_OK);
  ck_assert_int_eq(vyre__file_write_atomic(out, "second!", 7, 0644, &err), VYRE_OK);
  void *data = NULL;
  size_t size = 0;
  ck_assert_int_eq(vyre__file_read(out, 100, NULL, &data, &size, &err), VYRE_OK);
  ck_assert_msg(size == 7 && strcmp(data, "second!") == 0, "the file is replaced");
  free(data);
  ck_assert_int_eq(vyre__file_write_atomic(in_dir("zero"), NULL, 0, 0644, &err), VYRE_OK);
  struct stat st;
  ck_assert_msg(stat(in_dir("zero"), &st) == 0 && st.st_size == 0, "an empty file is written");
  ck_assert_int_eq(temp_files(), 0);
}
END_TEST

START_TEST(test_write_atomic_fails) {
  vyre_error err = VYRE_ERROR_INIT;
  char want[512];
  /* The target is a directory: the rename fails after the write. */
  const char *sub = in_dir("sub");
  ck_assert_int_eq(mkdir(sub, 0700), 0);
  put("sub/keep", "x");
  ck_assert_int_eq(vyre__file_write_atomic(sub, "data", 4, 0644, &err), VYRE_IO);
  ck_assert_msg(strncmp(err.message, "cannot replace ", 15) == 0 &&
                    strstr(err.message, "Fix: check that it is not a directory"),
                "a directory is not replaced: %s", err.message);
  ck_assert_msg(temp_files() == 0, "the temporary file is removed on failure");
  unlink(in_dir("sub/keep"));
  /* A directory that does not exist. */
  const char *nowhere = in_dir("no/such/file");
  ck_assert_int_eq(vyre__file_write_atomic(nowhere, "data", 4, 0644, &err), VYRE_IO);
  snprintf(want, sizeof want,
           "cannot create %s: %s. Fix: check the directory exists and is writable", nowhere,
           strerror(ENOENT));
  ck_assert_str_eq(err.message, want);
  ck_assert_int_eq(temp_files(), 0);
}
END_TEST

START_TEST(test_write_stream) {
  vyre_error err = VYRE_ERROR_INIT;
  const char *out = in_dir("report.json");
  vyre__atomic_file a;
  ck_assert_int_eq(vyre__file_atomic_begin(&a, out, 0600, &err), VYRE_OK);
  fprintf(a.f, "{\"n\":%d}\n", 42);
  ck_assert_msg(access(out, F_OK) != 0, "nothing under the final name before the commit");
  ck_assert_int_eq(temp_files(), 1);
  ck_assert_int_eq(vyre__file_atomic_commit(&a, &err), VYRE_OK);
  ck_assert_msg(a.f == NULL && a.tmp == NULL && a.path == NULL, "commit releases the writer");
  void *data = NULL;
  size_t size = 0;
  ck_assert_int_eq(vyre__file_read(out, 100, NULL, &data, &size, &err), VYRE_OK);
  ck_assert_str_eq(data, "{\"n\":42}\n");
  free(data);
  struct stat st;
  ck_assert_msg(stat(out, &st) == 0 && (st.st_mode & 0777) == 0600, "the mode is kept");
  /* no_sync (a cache verified on read): begin leaves it off, and a commit
   * with it on still replaces the file whole. */
  ck_assert_int_eq(vyre__file_atomic_begin(&a, out, 0600, &err), VYRE_OK);
  ck_assert_msg(a.no_sync == 0, "begin syncs by default");
  a.no_sync = 1;
  fputs("unsynced", a.f);
  ck_assert_int_eq(vyre__file_atomic_commit(&a, &err), VYRE_OK);
  ck_assert_int_eq(vyre__file_read(out, 100, NULL, &data, &size, &err), VYRE_OK);
  ck_assert_str_eq(data, "unsynced");
  free(data);
  ck_assert_int_eq(temp_files(), 0);
  /* Abort: neither the file nor a temporary one is left. */
  ck_assert_int_eq(vyre__file_atomic_begin(&a, in_dir("dropped"), 0600, &err), VYRE_OK);
  fputs("partial", a.f);
  vyre__file_atomic_abort(&a);
  vyre__file_atomic_abort(&a); /* twice, and NULL: harmless */
  vyre__file_atomic_abort(NULL);
  ck_assert_msg(access(in_dir("dropped"), F_OK) != 0 && temp_files() == 0, "abort removes it");
}
END_TEST

/* A write that fails half-way (the file size limit, EFBIG) leaves the
 * old file and no temporary one. */
START_TEST(test_write_atomic_short) {
  vyre_error err = VYRE_ERROR_INIT;
  const char *out = in_dir("keep");
  ck_assert_int_eq(vyre__file_write_atomic(out, "old", 3, 0644, &err), VYRE_OK);
  signal(SIGXFSZ, SIG_IGN);
  struct rlimit old, small = {4096, 4096};
  getrlimit(RLIMIT_FSIZE, &old);
  small.rlim_max = old.rlim_max;
  ck_assert_int_eq(setrlimit(RLIMIT_FSIZE, &small), 0);
  static char big[100000];
  vyre_status st = vyre__file_write_atomic(out, big, sizeof big, 0644, &err);
  setrlimit(RLIMIT_FSIZE, &old);
  ck_assert_int_eq(st, VYRE_IO);
  char want[512];
  snprintf(want, sizeof want, "cannot write %s: %s. Fix: check free space", out, strerror(EFBIG));
  ck_assert_str_eq(err.message, want);
  ck_assert_msg(temp_files() == 0, "the temporary file is removed");
  void *data = NULL;
  size_t size = 0;
  ck_assert_int_eq(vyre__file_read(out, 100, NULL, &data, &size, &err), VYRE_OK);
  ck_assert_msg(size == 3 && strcmp(data, "old") == 0, "the old file is untouched");
  free(data);
}
END_TEST

/* ---- the clock ----------------------------------------------------------- */

START_TEST(test_clock) {
  uint64_t a = vyre__now_ns();
  usleep(2000);
  uint64_t b = vyre__now_ns();
  ck_assert_msg(b >= a + 1000000, "2 ms pass on the monotonic clock (%llu ns)",
                (unsigned long long)(b - a));
  ck_assert_msg(vyre__elapsed_ns(a) >= b - a, "elapsed counts from the start");
  ck_assert_uint_eq(vyre__elapsed_ns(UINT64_MAX), 0);
  double s = vyre__now_seconds();
  ck_assert_msg(s >= (double)b / 1e9 - 1e-3, "seconds on the same clock");
  ck_assert_int_eq(vyre__deadline_passed(0), 0);
  ck_assert_int_eq(vyre__deadline_passed(1), 1);
  ck_assert_int_eq(vyre__deadline_passed(UINT64_MAX), 0);
  ck_assert_uint_eq(vyre__deadline_left_ns(0), UINT64_MAX);
  ck_assert_uint_eq(vyre__deadline_left_ns(1), 0);
  uint64_t left = vyre__deadline_left_ns(vyre__now_ns() + 1000000000ull);
  ck_assert_msg(left > 0 && left <= 1000000000ull, "a deadline 1 s away");
}
END_TEST

static Suite *util_suite(void) {
  Suite *s = suite_create("util");
  TCase *json = tcase_create("json");
  tcase_add_test(json, test_json_controls);
  tcase_add_test(json, test_json_utf8);
  tcase_add_test(json, test_json_string_to);
  tcase_add_test(json, test_json_document);
  tcase_add_test(json, test_json_depth_and_count);
  suite_add_tcase(s, json);
  TCase *file = tcase_create("file");
  tcase_add_checked_fixture(file, dir_setup, dir_teardown);
  tcase_add_test(file, test_read_regular);
  tcase_add_test(file, test_read_refused);
  tcase_add_test(file, test_read_fifo);
  tcase_add_test(file, test_read_fd);
  tcase_add_test(file, test_write_atomic);
  tcase_add_test(file, test_write_atomic_fails);
  tcase_add_test(file, test_write_stream);
  tcase_add_test(file, test_write_atomic_short);
  suite_add_tcase(s, file);
  TCase *clock = tcase_create("clock");
  tcase_add_test(clock, test_clock);
  suite_add_tcase(s, clock);
  return s;
}

int main(void) {
  SRunner *sr = srunner_create(util_suite());
  srunner_run_all(sr, CK_NORMAL);
  int failed = srunner_ntests_failed(sr);
  srunner_free(sr);
  return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
