/* check_probe.c -- a plugin file met for the first time is judged in a child (vyre-probe): one that crashes or hangs it is skipped, never loaded; the verdict is cached; VYRE_PROBE=0 turns it off; plugins that re-enter libvyre-host are refused. */
#include <check.h>
#include <dirent.h>
#include <errno.h>
#include <ftw.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "vyre/vyre_host.h"
#include "vyre/vyre_support.h"

/* Under AddressSanitizer (the ASan+UBSan build of .ci/run) a plugin's
 * SEGV is caught by the sanitizer, which exits with status 1: the probe
 * child then "exited with status 1", not "crashed ... signal 11". */
#if defined(__SANITIZE_ADDRESS__)
#define SANITIZED 1
#define CRASH_REASON "exited with status 1"
#else
#define SANITIZED 0
#define CRASH_REASON "crashed the probe process: signal 11"
#endif

#define FORMAT(buf, size, ...) \
  ck_assert_msg(snprintf((buf), (size), __VA_ARGS__) < (int)(size), "string too long for its buffer")

static char stub_dir[PATH_MAX];
static char cache_dir[PATH_MAX];

static int rm_one(const char *path, const struct stat *st, int flag, struct FTW *ftw) {
  (void)st, (void)flag, (void)ftw;
  return remove(path);
}

static void setup(void) {
  const char *build = getenv("VYRE_BUILD_DIR");
  if (build && *build) FORMAT(stub_dir, sizeof stub_dir, "%s/tests/loader/stubs/.libs", build);
  else FORMAT(stub_dir, sizeof stub_dir, "%s", VYRE_STUB_DIR);
  const char *base = getenv("TMPDIR");
  FORMAT(cache_dir, sizeof cache_dir, "%s/vyre-probe-XXXXXX", base && *base ? base : "/tmp");
  ck_assert_msg(mkdtemp(cache_dir) != NULL, "mkdtemp failed: %s", strerror(errno));
  setenv("VYRE_CACHE_DIR", cache_dir, 1);
  unsetenv("VYRE_PROBE");
  unsetenv("VYRE_BACKEND");
  unsetenv("VYRE_BACKEND_PATH");
}

static void teardown(void) { nftw(cache_dir, rm_one, 16, FTW_DEPTH | FTW_PHYS); }

static void stub_path(char *out, size_t size, const char *name) {
  FORMAT(out, size, "%s/%s", stub_dir, name);
}

/* A host on one stub file, nothing else searched. */
static vyre_host *open_on(const char *file, uint32_t flags) {
  vyre_host_options o = {.struct_size = sizeof o,
                         .flags = VYRE_HOST_NO_DEFAULT_DIRS | flags,
                         .search_path = file};
  vyre_host *h = NULL;
  vyre_error err = VYRE_ERROR_INIT;
  vyre_status st = vyre_host_open(&o, &h, &err);
  ck_assert_msg(st == VYRE_OK, "vyre_host_open: %s", err.message);
  ck_assert_msg(vyre_host_backend_count(h) == 1, "one candidate expected, got %u",
                vyre_host_backend_count(h));
  return h;
}

static vyre_host_candidate info_of(vyre_host *h) {
  vyre_host_candidate c = {.struct_size = sizeof c};
  vyre_error err = VYRE_ERROR_INIT;
  ck_assert_msg(vyre_host_backend_info(h, 0, &c, &err) == VYRE_OK, "info: %s", err.message);
  return c;
}

/* The cache's verdict files (v1-*, no temporaries); the first one's path. */
static unsigned cache_entries(char *first, size_t size) {
  char dir[PATH_MAX];
  FORMAT(dir, sizeof dir, "%s/probe", cache_dir);
  DIR *d = opendir(dir);
  if (!d) return 0;
  unsigned n = 0;
  for (struct dirent *de; (de = readdir(d)) != NULL;) {
    if (strncmp(de->d_name, "v1-", 3) != 0) continue;
    ck_assert_msg(strchr(de->d_name, '~') == NULL, "temporary %s left behind", de->d_name);
    if (n++ == 0 && first) FORMAT(first, size, "%s/%s", dir, de->d_name);
  }
  closedir(d);
  return n;
}

static void write_file(const char *path, const char *text) {
  FILE *f = fopen(path, "w");
  ck_assert_msg(f != NULL, "cannot write %s", path);
  fputs(text, f);
  fclose(f);
}

/* ------------------------------------------------------------------ */
/* core: crashes and hangs stay in the child                           */
/* ------------------------------------------------------------------ */

START_TEST(test_constructor_segv_skipped) {
  char file[PATH_MAX];
  stub_path(file, sizeof file, "libhostile_segv.so");
  vyre_host *h = open_on(file, VYRE_HOST_NO_ENV);
  vyre_host_candidate c = info_of(h);
  ck_assert_msg(c.status == VYRE_HOST_SKIPPED, "a plugin whose constructor crashes is skipped");
  ck_assert_msg(strstr(c.reason, CRASH_REASON), "the reason names the crash: %s", c.reason);
  ck_assert_msg(strstr(c.reason, "never loaded in this process"), "and says so: %s", c.reason);
  ck_assert_msg(cache_entries(NULL, 0) == 1, "one verdict cached");
  vyre_host_close(h);
}
END_TEST

START_TEST(test_entry_hang_skipped) {
  char file[PATH_MAX];
  stub_path(file, sizeof file, "libhostile_hang.so");
  vyre_host *h = open_on(file, VYRE_HOST_NO_ENV);
  vyre_host_candidate c = info_of(h);
  ck_assert_msg(c.status == VYRE_HOST_SKIPPED, "a plugin whose entry hangs is skipped");
  ck_assert_msg(strstr(c.reason, "hung the probe process: no verdict in 5 s"),
                "the reason names the hang: %s", c.reason);
  vyre_host_close(h);
}
END_TEST

/* The second host uses the cached verdict: a verdict planted in the
 * cache entry is what the host reports (no child ran to replace it). */
START_TEST(test_cache_used) {
  char file[PATH_MAX], entry[PATH_MAX];
  stub_path(file, sizeof file, "libhostile_segv.so");
  vyre_host_close(open_on(file, VYRE_HOST_NO_ENV));
  ck_assert_msg(cache_entries(entry, sizeof entry) == 1, "the first host cached its verdict");
  write_file(entry, "vyre-probe-verdict 1 skip planted verdict\n");
  vyre_host *h = open_on(file, VYRE_HOST_NO_ENV);
  vyre_host_candidate c = info_of(h);
  ck_assert_msg(c.status == VYRE_HOST_SKIPPED && strstr(c.reason, "planted verdict"),
                "the second host takes the cached verdict: %s", c.reason);
  vyre_host_close(h);
  /* An unreadable entry is judged again, and rewritten. */
  write_file(entry, "garbage\n");
  h = open_on(file, VYRE_HOST_NO_ENV);
  c = info_of(h);
  ck_assert_msg(strstr(c.reason, CRASH_REASON), "re-probed: %s", c.reason);
  vyre_host_close(h);
  FILE *f = fopen(entry, "r");
  char line[256] = "";
  ck_assert_msg(f && fgets(line, sizeof line, f), "the entry was rewritten");
  fclose(f);
  ck_assert_msg(strncmp(line, "vyre-probe-verdict 1 skip ", 26) == 0 && strstr(line, CRASH_REASON),
                "verdict: %s", line);
}
END_TEST

/* A good plugin: probed once (cached "ok"), then loaded by the host. */
START_TEST(test_good_plugin_loads) {
  char file[PATH_MAX], entry[PATH_MAX];
  stub_path(file, sizeof file, "libvyre-stub_good.so");
  for (int round = 0; round < 2; round++) {
    vyre_host *h = open_on(file, VYRE_HOST_NO_ENV);
    vyre_host_candidate c = info_of(h);
    ck_assert_msg(c.status == VYRE_HOST_LOADED, "round %d: the good stub loads: %s", round,
                  c.reason);
    vyre_host_close(h);
  }
  ck_assert_msg(cache_entries(entry, sizeof entry) == 1, "one verdict");
  FILE *f = fopen(entry, "r");
  char line[128] = "";
  ck_assert_msg(f && fgets(line, sizeof line, f), "readable");
  fclose(f);
  ck_assert_str_eq(line, "vyre-probe-verdict 1 ok\n");
}
END_TEST

/* VYRE_PROBE=0 and VYRE_HOST_NO_PROBE: no child, nothing cached, and the
 * crashing plugin is loaded by the host itself (which dies: in a child). */
static int dies_loading(const char *file, uint32_t flags) {
  pid_t pid = fork();
  ck_assert_msg(pid >= 0, "fork");
  if (pid == 0) {
    vyre_host_options o = {.struct_size = sizeof o,
                           .flags = VYRE_HOST_NO_DEFAULT_DIRS | flags,
                           .search_path = file};
    vyre_host *h = NULL;
    vyre_error err = VYRE_ERROR_INIT;
    vyre_host_open(&o, &h, &err);
    _exit(0);
  }
  int status;
  ck_assert_msg(waitpid(pid, &status, 0) == pid, "waitpid");
  if (WIFSIGNALED(status)) return WTERMSIG(status);
  /* AddressSanitizer catches the SEGV and exits with status 1. */
  return SANITIZED && WIFEXITED(status) && WEXITSTATUS(status) != 0 ? SIGSEGV : 0;
}

START_TEST(test_probe_off) {
  char file[PATH_MAX];
  stub_path(file, sizeof file, "libhostile_segv.so");
  setenv("VYRE_PROBE", "0", 1);
  ck_assert_msg(dies_loading(file, 0) == SIGSEGV, "VYRE_PROBE=0: the host loads it itself");
  unsetenv("VYRE_PROBE");
  ck_assert_msg(dies_loading(file, VYRE_HOST_NO_PROBE) == SIGSEGV,
                "VYRE_HOST_NO_PROBE: the host loads it itself");
  ck_assert_msg(cache_entries(NULL, 0) == 0, "no verdict cached without the probe");
  ck_assert_msg(dies_loading(file, VYRE_HOST_NO_ENV) == 0, "with the probe the host survives");
  /* VYRE_PROBE=0 is the environment's: VYRE_HOST_NO_ENV ignores it. */
  setenv("VYRE_PROBE", "0", 1);
  ck_assert_msg(dies_loading(file, VYRE_HOST_NO_ENV) == 0, "VYRE_HOST_NO_ENV ignores VYRE_PROBE");
  unsetenv("VYRE_PROBE");
}
END_TEST

/* ------------------------------------------------------------------ */
/* reentry: plugin code that calls back into libvyre-host              */
/* ------------------------------------------------------------------ */

static void reentry_entry(uint32_t flags) {
  char file[PATH_MAX];
  stub_path(file, sizeof file, "libhostile_reopen.so");
  setenv("HOSTILE_SEARCH_PATH", file, 1);
  vyre_host *h = open_on(file, VYRE_HOST_NO_ENV | flags);
  vyre_host_candidate c = info_of(h);
  ck_assert_msg(c.status == VYRE_HOST_SKIPPED, "an entry that opens a host is refused");
  ck_assert_msg(strstr(c.reason, "vyre_host_open: called from plugin code"),
                "the reason names the re-entry: %s", c.reason);
  vyre_host_close(h);
  /* The guard is per call: the thread may open hosts again. */
  vyre_host_close(open_on(file, VYRE_HOST_NO_ENV | flags));
}

START_TEST(test_entry_reopens) { reentry_entry(0); }
END_TEST

START_TEST(test_entry_reopens_no_probe) { reentry_entry(VYRE_HOST_NO_PROBE); }
END_TEST

START_TEST(test_factory_recreates) {
  char file[PATH_MAX];
  stub_path(file, sizeof file, "libhostile_recreate.so");
  setenv("HOSTILE_SEARCH_PATH", file, 1);
  vyre_host *h = open_on(file, VYRE_HOST_NO_ENV);
  ck_assert_msg(info_of(h).status == VYRE_HOST_LOADED, "it registers");
  vyre_backend *b = NULL;
  vyre_error err = VYRE_ERROR_INIT;
  vyre_status st = vyre_host_create(h, NULL, NULL, &b, NULL, &err);
  ck_assert_msg(st != VYRE_OK && b == NULL, "its factory fails");
  ck_assert_msg(strstr(err.message, "vyre_host_open: called from plugin code"),
                "the error names the re-entry: %s", err.message);
  ck_assert_msg(info_of(h).status == VYRE_HOST_UNAVAILABLE, "the candidate is unavailable");
  ck_assert_msg(vyre_host_probe(h) == 0, "vyre_host_probe: nothing ready");
  vyre_host_close(h);
}
END_TEST

static Suite *probe_suite(void) {
  Suite *s = suite_create("probe");
  TCase *core = tcase_create("core");
  tcase_add_checked_fixture(core, setup, teardown);
  tcase_set_timeout(core, 60);
  tcase_add_test(core, test_constructor_segv_skipped);
  tcase_add_test(core, test_entry_hang_skipped);
  tcase_add_test(core, test_cache_used);
  tcase_add_test(core, test_good_plugin_loads);
  tcase_add_test(core, test_probe_off);
  suite_add_tcase(s, core);
  TCase *reentry = tcase_create("reentry");
  tcase_add_checked_fixture(reentry, setup, teardown);
  tcase_set_timeout(reentry, 60);
  tcase_add_test(reentry, test_entry_reopens);
  tcase_add_test(reentry, test_entry_reopens_no_probe);
  tcase_add_test(reentry, test_factory_recreates);
  suite_add_tcase(s, reentry);
  return s;
}

int main(void) {
  SRunner *sr = srunner_create(probe_suite());
  srunner_run_all(sr, CK_NORMAL);
  int failed = srunner_ntests_failed(sr);
  srunner_free(sr);
  return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
