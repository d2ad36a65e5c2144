/* check_loader.c -- libvyre-host: discovery, descriptor and registration checks, negotiation, selection, search order. */
#include <check.h>
#include <dlfcn.h>
#include <errno.h>
#include <ftw.h>
#include <limits.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "stubs/stub_plugin.h"
#include "vyre/vyre_host.h"
#include "vyre/vyre_program.h"
#include "vyre/vyre_text.h"

/* check_loader_skew builds the host with another minor (tests/host.mk). */
#ifndef VYRE_HOST_ABI_MINOR
#define VYRE_HOST_ABI_MINOR VYRE_ABI_MINOR
#endif
#define HOST_MINOR VYRE_HOST_ABI_MINOR

/* ------------------------------------------------------------------ */
/* Fixtures and helpers                                                */
/* ------------------------------------------------------------------ */

/* snprintf whose truncation fails the test (paths are never cut short). */
#define FORMAT(buf, size, ...) \
  ck_assert_msg(snprintf((buf), (size), __VA_ARGS__) < (int)(size), "string too long for its buffer")

static char stub_dir[PATH_MAX];
static char tmp_dir[PATH_MAX];

static void find_stub_dir(void) {
  const char *build = getenv("VYRE_BUILD_DIR");
  if (build && *build)
    FORMAT(stub_dir, sizeof stub_dir, "%s/tests/loader/stubs/.libs", build);
  else
    FORMAT(stub_dir, sizeof stub_dir, "%s", VYRE_STUB_DIR);
}

/* Path of a stub variant; static storage rotated over 8 slots. */
static const char *stub(const char *variant) {
  static char slots[8][PATH_MAX];
  static int next;
  char *p = slots[next++ % 8];
  FORMAT(p, PATH_MAX, "%s/libvyre-stub_%s.so", stub_dir, variant);
  return p;
}

static int rm_one(const char *path, const struct stat *st, int flag, struct FTW *ftw) {
  return remove(path);
}

static void setup_tmp(void) {
  find_stub_dir();
  const char *base = getenv("TMPDIR");
  FORMAT(tmp_dir, sizeof tmp_dir, "%s/vyre-loader-XXXXXX", base && *base ? base : "/tmp");
  ck_assert_msg(mkdtemp(tmp_dir) != NULL, "mkdtemp %s failed: %s", tmp_dir, strerror(errno));
  unsetenv("VYRE_BACKEND");
  unsetenv("VYRE_BACKEND_PATH");
  unsetenv("VYRE_BUILD_DIR");
}

static void teardown_tmp(void) {
  if (tmp_dir[0]) nftw(tmp_dir, rm_one, 16, FTW_DEPTH | FTW_PHYS);
  tmp_dir[0] = '\0';
}

/* A file under tmp_dir (path returned in static storage slots). */
static const char *tmp(const char *name) {
  static char slots[8][PATH_MAX];
  static int next;
  char *p = slots[next++ % 8];
  FORMAT(p, PATH_MAX, "%s/%s", tmp_dir, name);
  return p;
}

static void mkdir_tmp(const char *name) {
  ck_assert_msg(mkdir(tmp(name), 0755) == 0, "mkdir %s: %s", name, strerror(errno));
}

static void link_stub(const char *variant, const char *name) {
  const char *target = stub(variant);
  ck_assert_msg(symlink(target, tmp(name)) == 0, "symlink %s -> %s: %s", name, target,
                strerror(errno));
}

static void write_file(const char *name, const void *data, size_t size) {
  FILE *f = fopen(tmp(name), "wb");
  ck_assert_msg(f != NULL, "cannot create %s", name);
  if (size) ck_assert_msg(fwrite(data, 1, size, f) == size, "short write to %s", name);
  fclose(f);
}

/* Open a host that searches `path` only (no env, no default dirs). */
static vyre_host *open_only(const char *path) {
  vyre_host_options opt = {sizeof opt, VYRE_HOST_NO_ENV | VYRE_HOST_NO_DEFAULT_DIRS, path, NULL};
  vyre_host *host = NULL;
  vyre_error err = VYRE_ERROR_INIT;
  vyre_status st = vyre_host_open(&opt, &host, &err);
  ck_assert_msg(st == VYRE_OK, "vyre_host_open(%s) should succeed, got %s: %s", path,
                vyre_status_name(st), err.message);
  ck_assert_msg(host != NULL, "vyre_host_open must return a host");
  return host;
}

static vyre_host_candidate info_at(vyre_host *host, uint32_t i) {
  vyre_host_candidate info;
  memset(&info, 0, sizeof info);
  info.struct_size = sizeof info;
  vyre_error err = VYRE_ERROR_INIT;
  ck_assert_msg(vyre_host_backend_info(host, i, &info, &err) == VYRE_OK,
                "backend_info(%u) should succeed: %s", i, err.message);
  return info;
}

/* Index of the candidate whose path ends with `suffix`, or -1. */
static int index_of(vyre_host *host, const char *suffix) {
  size_t n = strlen(suffix);
  for (uint32_t i = 0; i < vyre_host_backend_count(host); i++) {
    vyre_host_candidate info = info_at(host, i);
    size_t m = strlen(info.path);
    if (m >= n && strcmp(info.path + m - n, suffix) == 0) return (int)i;
  }
  return -1;
}

/* The stub's counters; the plugin must already be loaded. */
static stub_counters *counters(const char *variant) {
  void *h = dlopen(stub(variant), RTLD_NOW | RTLD_NOLOAD);
  if (!h) return NULL;
  stub_counters *c = dlsym(h, STUB_COUNTERS_SYMBOL);
  dlclose(h); /* drops only the reference RTLD_NOLOAD added */
  return c;
}

/* Path of a hostile stub (libhostile_NAME.so, beside the others). */
static const char *hostile(const char *name) {
  static char slots[4][PATH_MAX];
  static int next;
  char *p = slots[next++ % 4];
  FORMAT(p, PATH_MAX, "%s/libhostile_%s.so", stub_dir, name);
  return p;
}

/* The reference backend of this build tree (tests/loader/stubs/.libs is
 * four levels below its top). */
static const char *reference_plugin(void) {
  static char p[PATH_MAX];
  FORMAT(p, sizeof p, "%s/../../../../host-stub/ref/.libs/libvyre-ref.so", stub_dir);
  return p;
}

/* The counters of the already loaded plugin at `path`. */
static stub_counters *counters_at(const char *path) {
  void *h = dlopen(path, RTLD_NOW | RTLD_NOLOAD);
  if (!h) return NULL;
  stub_counters *c = dlsym(h, STUB_COUNTERS_SYMBOL);
  dlclose(h);
  return c;
}

/* The whole file at `path` (malloc'd); *size receives its length. */
static unsigned char *slurp(const char *path, size_t *size) {
  FILE *f = fopen(path, "rb");
  ck_assert_msg(f != NULL, "cannot open %s: %s", path, strerror(errno));
  ck_assert(fseek(f, 0, SEEK_END) == 0);
  long n = ftell(f);
  ck_assert(n > 0 && fseek(f, 0, SEEK_SET) == 0);
  unsigned char *data = malloc((size_t)n);
  ck_assert(data != NULL);
  ck_assert_msg(fread(data, 1, (size_t)n, f) == (size_t)n, "short read of %s", path);
  fclose(f);
  *size = (size_t)n;
  return data;
}

static int is_loaded(const char *variant) {
  void *h = dlopen(stub(variant), RTLD_NOW | RTLD_NOLOAD);
  if (h) dlclose(h);
  return h != NULL;
}

/* ------------------------------------------------------------------ */
/* core                                                                */
/* ------------------------------------------------------------------ */

START_TEST(test_good_stub_registers) {
  vyre_host *host = open_only(stub("good"));
  ck_assert_msg(vyre_host_backend_count(host) == 1, "one path, one candidate; got %u",
                vyre_host_backend_count(host));
  ck_assert_msg(vyre_host_skipped_count(host) == 0, "the good stub must not be skipped");
  vyre_host_candidate info = info_at(host, 0);
  ck_assert_msg(info.status == VYRE_HOST_LOADED, "status should be loaded before any factory "
                "ran, got %s (%s)", vyre_host_status_name(info.status), info.reason);
  ck_assert_str_eq(info.id, "stub");
  ck_assert_str_eq(info.version, "0.0.1-stub");
  ck_assert_str_eq(info.description, "test stub plugin (stub)");
  ck_assert_str_eq(info.path, stub("good"));
  ck_assert_str_eq(info.build_id, "stub stub");
  ck_assert_str_eq(info.reason, "");
  ck_assert_int_eq(info.origin, VYRE_HOST_FROM_OPTIONS);
  ck_assert_int_eq(info.precedence, 50);
  ck_assert_int_eq(info.abi_major, VYRE_ABI_MAJOR);
  ck_assert_msg(info.abi_minor == (HOST_MINOR < VYRE_ABI_MINOR ? HOST_MINOR : VYRE_ABI_MINOR),
                "the good stub serves minors 0 to %u", VYRE_ABI_MINOR);
  ck_assert_int_eq(info.registration_minor, VYRE_ABI_MINOR);
  ck_assert_int_eq(info.unknown_op_count, 0);
  ck_assert_msg(info.unknown_capabilities == 0, "no unknown capability bits");
  ck_assert_int_eq(info.op_count, 4);
  ck_assert_msg(info.ops[0] == VYRE_OP_CONST && info.ops[1] == VYRE_OP_LOAD &&
                    info.ops[2] == VYRE_OP_ADD && info.ops[3] == VYRE_OP_STORE,
                "the op list must be copied in order");
  ck_assert_msg(info.capabilities == (VYRE_CAP_BARRIER | VYRE_CAP_F16), "capabilities copied");
  ck_assert_msg(info.storage_types == ((1u << VYRE_T_U32) | (1u << VYRE_T_F32)),
                "storage types copied");
  ck_assert_int_eq(info.registration_size, sizeof(vyre_registration));
  ck_assert_int_eq(info.vtable_size, sizeof(vyre_backend_vtable));
  ck_assert_int_eq(vyre_host_find(host, "stub"), 0);
  ck_assert_int_eq(vyre_host_find(host, "nope"), -1);
  stub_counters *c = counters("good");
  ck_assert_msg(c != NULL, "the good stub should be loaded and export stub_calls");
  ck_assert_msg(c->entry == 1 && c->create == 0, "open calls the entry once and no factory "
                "(entry %d, create %d)", c->entry, c->create);
  vyre_host_close(host);
}
END_TEST

START_TEST(test_create_and_vtable_helper) {
  vyre_host *host = open_only(stub("good"));
  vyre_backend *b = NULL;
  uint32_t index = 99;
  vyre_error err = VYRE_ERROR_INIT;
  ck_assert_msg(vyre_host_create(host, NULL, NULL, &b, &index, &err) == VYRE_OK,
                "the good stub's factory works: %s", err.message);
  ck_assert_msg(b != NULL && index == 0, "create returns the instance and its index");
  ck_assert_msg(VYRE_HOST_HAS(b, destroy) && VYRE_HOST_HAS(b, device_profile) &&
                    VYRE_HOST_HAS(b, metrics),
                "entries the stub fills are present");
  ck_assert_msg(!VYRE_HOST_HAS(b, dispatch) && !VYRE_HOST_HAS(b, pipeline_release),
                "NULL entries are absent");
  ck_assert_msg(!vyre_host_vtable_has(b, 3), "a misaligned offset is never an entry");
  ck_assert_msg(!vyre_host_vtable_has(b, 0), "struct_size is not an entry");
  ck_assert_msg(!vyre_host_vtable_has(b, 4096), "an offset past the table is absent");
  ck_assert_msg(!vyre_host_vtable_has(NULL, offsetof(vyre_backend_vtable, destroy)),
                "NULL backend has nothing");
  vyre_device_profile prof = {.struct_size = sizeof prof};
  ck_assert_msg(b->vt->device_profile(b, &prof, &err) == VYRE_OK, "profile works");
  ck_assert_str_eq(prof.backend_id, "stub");
  ck_assert_int_eq(info_at(host, 0).status, VYRE_HOST_READY);
  /* Instances outlive the host: the plugin is never unloaded. */
  vyre_host_close(host);
  stub_counters *c = counters("good");
  ck_assert_msg(c->live == 1, "one live instance after close, got %d", c->live);
  b->vt->destroy(b);
  ck_assert_msg(c->live == 0 && c->destroy == 1, "destroy released it");
  ck_assert_msg(is_loaded("good"), "the plugin is never dlclose'd");
}
END_TEST

START_TEST(test_short_vtable_helper) {
  vyre_host *host = open_only(stub("shortvt"));
  vyre_backend *b = NULL;
  vyre_error err = VYRE_ERROR_INIT;
  ck_assert_msg(vyre_host_create(host, "shortvt", NULL, &b, NULL, &err) == VYRE_OK,
                "a vtable that covers destroy is accepted: %s", err.message);
  ck_assert_msg(VYRE_HOST_HAS(b, shutdown), "shutdown lies inside struct_size 40");
  ck_assert_msg(!VYRE_HOST_HAS(b, metrics),
                "metrics is set in memory but beyond struct_size 40: it must read as absent");
  b->vt->destroy(b);
  vyre_host_close(host);
}
END_TEST

/* ------------------------------------------------------------------ */
/* errors: each broken plugin is skipped with its reason               */
/* ------------------------------------------------------------------ */

typedef struct broken_case {
  const char *variant;
  uint32_t status;       /* after open */
  const char *reason;    /* substring of the reason */
  int entry_calls;       /* 0: refused from its file, never loaded */
} broken_case;

static char reason_buf[32][256];

static const broken_case *broken_cases(size_t *count) {
  static broken_case cases[32];
  size_t n = 0;
#define CASE(v, st, r, e) cases[n++] = (broken_case){v, st, r, e}
  CASE("major", VYRE_HOST_SKIPPED, "ABI mismatch: the plugin speaks vyre ABI 2.x, this host 1.x", 0);
  snprintf(reason_buf[0], sizeof reason_buf[0],
           "the plugin serves ABI 1.3 to 1.4, this host speaks 1.%u", HOST_MINOR);
  CASE("excl", VYRE_HOST_SKIPPED, reason_buf[0], 0);
  CASE("shortdesc", VYRE_HOST_SKIPPED, "the symbol 'vyre_plugin_descriptor' is 16 bytes, the host needs at least 24", 0);
  CASE("descreg", VYRE_HOST_SKIPPED, "registration_size 16, the host needs", 0);
  CASE("magic", VYRE_HOST_SKIPPED, "magic 0x12345678, expected 0x4c505956", 0);
  CASE("nodesc", VYRE_HOST_SKIPPED, "not a vyre plugin: it exports no 'vyre_plugin_descriptor'", 0);
  CASE("noentry", VYRE_HOST_SKIPPED, "it exports no 'vyre_plugin_entry'", 0);
  CASE("shortreg", VYRE_HOST_SKIPPED, "bad registration: struct_size 16, the host needs", 1);
  snprintf(reason_buf[1], sizeof reason_buf[1],
           "vyre_plugin_entry refused ABI 1.%u: VYRE_INTERNAL: stub entry: initialisation failed",
           HOST_MINOR);
  CASE("entryfail", VYRE_HOST_SKIPPED, reason_buf[1], 1);
  CASE("badid", VYRE_HOST_SKIPPED, "bad registration: id 'Bad ID!' is not 1 to 31 of [a-z0-9_-]", 1);
  CASE("longid", VYRE_HOST_SKIPPED, "id 'a234567890123456789012345678901...' is not 1 to 31", 1);
  CASE("dupop", VYRE_HOST_SKIPPED, "bad registration of 'dupop': op 16 listed twice", 1);
  /* A registration's own minor is its layout; the host records the
   * negotiated one, so a "lying" minor is no reason to refuse. */
  CASE("liar", VYRE_HOST_LOADED, "", 1);
  /* A newer plugin's unknown op id and capability bit are ignored. */
  CASE("future", VYRE_HOST_LOADED, "", 1);
  /* These register; their factory is what fails. */
  CASE("factory", VYRE_HOST_LOADED, "", 1);
  CASE("tinyvt", VYRE_HOST_LOADED, "", 1);
#undef CASE
  *count = n;
  return cases;
}

START_TEST(test_broken_plugin_skipped) {
  size_t n;
  const broken_case *c = &broken_cases(&n)[_i];
  vyre_host *host = open_only(stub(c->variant));
  ck_assert_int_eq(vyre_host_backend_count(host), 1);
  vyre_host_candidate info = info_at(host, 0);
  ck_assert_msg(info.status == c->status, "%s: status should be %s, got %s (%s)", c->variant,
                vyre_host_status_name(c->status), vyre_host_status_name(info.status),
                info.reason);
  ck_assert_msg(strstr(info.reason, c->reason) != NULL,
                "%s: reason should contain \"%s\", got \"%s\"", c->variant, c->reason, info.reason);
  if (c->status == VYRE_HOST_SKIPPED) {
    ck_assert_msg(strstr(info.reason, "Fix:") != NULL || c->entry_calls == 1,
                  "%s: a host-made reason says how to fix it: %s", c->variant, info.reason);
    ck_assert_msg(strchr(info.reason, '\n') == NULL, "%s: the reason is one line", c->variant);
    ck_assert_int_eq(vyre_host_skipped_count(host), 1);
    ck_assert_msg(vyre_host_find(host, c->variant) == -1, "%s: a skipped plugin is not found",
                  c->variant);
  }
  if (c->entry_calls == 0) {
    ck_assert_msg(!is_loaded(c->variant),
                  "%s: refused from its file alone, so never dlopened (none of its code ran)",
                  c->variant);
  } else {
    stub_counters *k = counters(c->variant);
    ck_assert_msg(k != NULL, "%s: the stub stays loaded (never dlclose)", c->variant);
    ck_assert_msg(k->entry == c->entry_calls,
                  "%s: vyre_plugin_entry should have run %d times (the descriptor is checked "
                  "before any plugin code runs), ran %d",
                  c->variant, c->entry_calls, k->entry);
    ck_assert_msg(k->create == 0, "%s: open never runs a factory", c->variant);
  }
  vyre_host_close(host);
}
END_TEST

START_TEST(test_factory_failure_reported) {
  vyre_host *host = open_only(stub("factory"));
  vyre_backend *b = (vyre_backend *)&b;
  vyre_error err = VYRE_ERROR_INIT;
  vyre_status st = vyre_host_create(host, NULL, NULL, &b, NULL, &err);
  ck_assert_msg(st == VYRE_NO_DEVICE, "the factory's status is passed on, got %s",
                vyre_status_name(st));
  ck_assert_msg(b == NULL, "no instance on failure");
  ck_assert_msg(strstr(err.message, "no usable vyre backend: factory: factory failed: "
                                    "VYRE_NO_DEVICE: stub 'factory': no stub device here") != NULL,
                "the error names the backend and its reason: %s", err.message);
  vyre_host_candidate info = info_at(host, 0);
  ck_assert_int_eq(info.status, VYRE_HOST_UNAVAILABLE);
  ck_assert_msg(strstr(info.reason, "factory failed: VYRE_NO_DEVICE") != NULL,
                "the reason is kept for `vyre list`: %s", info.reason);
  vyre_host_close(host);
}
END_TEST

START_TEST(test_malformed_instance_rejected) {
  vyre_host *host = open_only(stub("tinyvt"));
  vyre_backend *b = NULL;
  vyre_error err = VYRE_ERROR_INIT;
  vyre_status st = vyre_host_create(host, "tinyvt", NULL, &b, NULL, &err);
  ck_assert_msg(st == VYRE_ABI_MISMATCH && b == NULL,
                "an instance whose vtable cannot even hold destroy is refused, got %s",
                vyre_status_name(st));
  ck_assert_msg(strstr(err.message, "malformed instance") && strstr(err.message, "vtable size 8"),
                "the error says what is malformed: %s", err.message);
  ck_assert_int_eq(info_at(host, 0).status, VYRE_HOST_UNAVAILABLE);
  /* The host cannot release it (no destroy in reach); the test can. */
  stub_counters *c = counters("tinyvt");
  ck_assert_msg(c->live == 1 && c->destroy == 0, "the refused instance is left alone");
  free(c->last);
  vyre_host_close(host);
}
END_TEST

START_TEST(test_not_libraries) {
  mkdir_tmp("d");
  write_file("d/libvyre-text.so", "this is not an ELF file\n", 24);
  write_file("d/libvyre-empty.so", "", 0);
  /* The first 200 bytes of a real plugin: an ELF header with nothing behind it. */
  FILE *f = fopen(stub("good"), "rb");
  ck_assert_msg(f != NULL, "the good stub must exist");
  char head[200];
  ck_assert(fread(head, 1, sizeof head, f) == sizeof head);
  fclose(f);
  write_file("d/libvyre-trunc.so", head, sizeof head);
  mkdir_tmp("d/libvyre-dir.so");
  ck_assert(mkfifo(tmp("d/libvyre-fifo.so"), 0644) == 0);
  ck_assert(symlink("/nonexistent/libvyre-gone.so", tmp("d/libvyre-dangling.so")) == 0);
  write_file("d/README", "not a plugin name\n", 18);
  write_file("d/libvyre-versioned.so.1", "x", 1);
  link_stub("good", "d/libvyre-zgood.so");
  link_stub("fast", "d/libplain.so"); /* a working plugin, but not named as one */

  vyre_host *host = open_only(tmp("d"));
  ck_assert_msg(vyre_host_backend_count(host) == 7,
                "README and libvyre-versioned.so.1 are not candidates; 7 lib*.so are; got %u",
                vyre_host_backend_count(host));
  static const struct {
    const char *name, *reason;
  } want[] = {
      {"/libvyre-dangling.so", "No such file or directory"},
      {"/libvyre-dir.so", "not a regular file"},
      {"/libvyre-empty.so", "not a loadable plugin: not an ELF file: 0 bytes, too short"},
      {"/libvyre-fifo.so", "not a regular file"},
      {"/libvyre-text.so", "not a loadable plugin: not an ELF file: it starts with 74 68 69 73"},
      {"/libvyre-trunc.so", "not a loadable plugin: truncated: 200 bytes, its program headers end at"},
  };
  for (size_t k = 0; k < sizeof want / sizeof want[0]; k++) {
    int i = index_of(host, want[k].name);
    ck_assert_msg(i == (int)k, "%s should be candidate %zu (sorted order), is %d", want[k].name,
                  k, i);
    vyre_host_candidate info = info_at(host, (uint32_t)i);
    ck_assert_msg(info.status == VYRE_HOST_SKIPPED && strstr(info.reason, want[k].reason),
                  "%s: should be skipped with \"%s\", got %s \"%s\"", want[k].name,
                  want[k].reason, vyre_host_status_name(info.status), info.reason);
  }
  ck_assert_int_eq(vyre_host_skipped_count(host), 6);
  ck_assert_msg(vyre_host_find(host, "stub") == 6, "the good plugin behind the junk still loads");
  vyre_backend *b = NULL;
  ck_assert_msg(vyre_host_create(host, NULL, NULL, &b, NULL, NULL) == VYRE_OK,
                "and still works");
  b->vt->destroy(b);
  vyre_host_close(host);
}
END_TEST

/*
 * Truncated copies of real plugins (an interrupted copy or install) are
 * refused before dlopen, which would map their missing pages and die of
 * SIGBUS; the working plugin beside them still loads.
 */
START_TEST(test_truncated_plugins) {
  static const size_t cuts[] = {1000, 4096, 8192, 12288};
  const char *sources[] = {stub("good"), reference_plugin()};
  mkdir_tmp("d");
  for (size_t s = 0; s < 2; s++) {
    size_t size;
    unsigned char *data = slurp(sources[s], &size);
    for (size_t k = 0; k <= sizeof cuts / sizeof cuts[0]; k++) {
      /* The four cuts, then all but the last byte. */
      size_t n = k < sizeof cuts / sizeof cuts[0] ? cuts[k] : size - 1;
      if (n >= size) continue;
      char name[64];
      FORMAT(name, sizeof name, "d/libvyre-t%zu-%zu.so", s, n);
      write_file(name, data, n);
    }
    free(data);
  }
  link_stub("fast", "d/libvyre-zz.so");
  vyre_host *host = open_only(tmp("d"));
  uint32_t n = vyre_host_backend_count(host);
  ck_assert_msg(n >= 7, "every truncated copy is a candidate; %u", n);
  for (uint32_t i = 0; i + 1 < n; i++) {
    vyre_host_candidate c = info_at(host, i);
    const char *cut = strrchr(c.path, '-') + 1;
    char want[96];
    FORMAT(want, sizeof want, "not a loadable plugin: truncated: %lu bytes, its ",
           strtoul(cut, NULL, 10));
    ck_assert_msg(c.status == VYRE_HOST_SKIPPED && strstr(c.reason, want) &&
                      strstr(c.reason, " end") && strstr(c.reason, "Fix:"),
                  "%s: should be skipped with \"%s... ends at N\", got %s \"%s\"", c.path, want,
                  vyre_host_status_name(c.status), c.reason);
  }
  ck_assert_msg(vyre_host_find(host, "fast") == (int32_t)n - 1, "the complete plugin loads");
  vyre_backend *b = NULL;
  ck_assert(vyre_host_create(host, NULL, NULL, &b, NULL, NULL) == VYRE_OK);
  b->vt->destroy(b);
  vyre_host_close(host);
}
END_TEST

/* A complete library built for another machine, class or type is refused
 * with that reason (dlopen said "No such file or directory" for one). */
START_TEST(test_foreign_elf) {
  size_t size;
  unsigned char *data = slurp(stub("good"), &size);
  ck_assert(size > 64 && memcmp(data, "\177ELF", 4) == 0);
  uint16_t host_machine;
  memcpy(&host_machine, data + 18, 2);
  /* EM_AARCH64 (183) on any other host, EM_X86_64 (62) on aarch64. */
  uint16_t other = host_machine == 183 ? 62 : 183;
  const char *other_name = other == 183 ? "aarch64" : "x86_64";
  mkdir_tmp("d");
  unsigned char *copy = malloc(size);
  ck_assert(copy != NULL);

  memcpy(copy, data, size);
  memcpy(copy + 18, &other, 2); /* e_machine */
  write_file("d/libvyre-arch.so", copy, size);
  memcpy(copy, data, size);
  copy[4] = copy[4] == 2 ? 1 : 2; /* EI_CLASS: the other width */
  write_file("d/libvyre-class.so", copy, size);
  memcpy(copy, data, size);
  copy[16] = 2; /* e_type = ET_EXEC (little-endian low byte) */
  copy[17] = 0;
  write_file("d/libvyre-exec.so", copy, size);
  free(copy);
  free(data);

  vyre_host *host = open_only(tmp("d"));
  ck_assert_int_eq(vyre_host_backend_count(host), 3);
  char want[128];
  FORMAT(want, sizeof want, "not a loadable plugin: built for %s, this host is ", other_name);
  vyre_host_candidate c = info_at(host, 0);
  ck_assert_msg(c.status == VYRE_HOST_SKIPPED && strstr(c.reason, want) &&
                    !strstr(c.reason, "No such file"),
                "a foreign machine is named: %s", c.reason);
#if defined(__x86_64__)
  ck_assert_msg(strstr(c.reason, "built for aarch64, this host is x86_64"), "%s", c.reason);
#endif
  c = info_at(host, 1);
  ck_assert_msg(c.status == VYRE_HOST_SKIPPED &&
                    strstr(c.reason, sizeof(void *) == 8
                                         ? "not a loadable plugin: built for 32-bit ELF, this "
                                           "host is 64-bit"
                                         : "not a loadable plugin: built for 64-bit ELF, this "
                                           "host is 32-bit"),
                "the other ELF class is named: %s", c.reason);
  c = info_at(host, 2);
  ck_assert_msg(c.status == VYRE_HOST_SKIPPED &&
                    strstr(c.reason, "not a shared library: ELF type EXEC (an executable)"),
                "an executable is not a plugin: %s", c.reason);
  vyre_host_close(host);
}
END_TEST

START_TEST(test_missing_path_entry) {
  vyre_host *host = open_only("/nonexistent/vyre/dir::/nonexistent/libx.so");
  ck_assert_msg(vyre_host_backend_count(host) == 2, "two named entries (the empty one is "
                "ignored), got %u", vyre_host_backend_count(host));
  for (uint32_t i = 0; i < 2; i++) {
    vyre_host_candidate info = info_at(host, i);
    ck_assert_msg(info.status == VYRE_HOST_SKIPPED &&
                      strstr(info.reason, "No such file or directory") &&
                      strstr(info.reason, "Fix: correct the path in options"),
                  "a missing entry is reported with its origin: %s", info.reason);
  }
  vyre_host_close(host);
}
END_TEST

/* The whole stub directory: every broken one skipped, the good ones work. */
START_TEST(test_whole_stub_directory) {
  vyre_host *host = open_only(stub_dir);
  size_t n;
  const broken_case *cases = broken_cases(&n);
  for (size_t k = 0; k < n; k++) {
    char name[64];
    FORMAT(name, sizeof name, "/libvyre-stub_%s.so", cases[k].variant);
    int i = index_of(host, name);
    ck_assert_msg(i >= 0, "%s should be a candidate of the directory", name);
    vyre_host_candidate info = info_at(host, (uint32_t)i);
    ck_assert_msg(info.status == cases[k].status && strstr(info.reason, cases[k].reason),
                  "%s: want %s \"%s\", got %s \"%s\"", name,
                  vyre_host_status_name(cases[k].status), cases[k].reason,
                  vyre_host_status_name(info.status), info.reason);
  }
  int dup = index_of(host, "/libvyre-stub_zdup.so");
  vyre_host_candidate info = info_at(host, (uint32_t)dup);
  ck_assert_msg(info.status == VYRE_HOST_SKIPPED &&
                    strstr(info.reason, "duplicate id 'stub' (already loaded from ") &&
                    strstr(info.reason, "libvyre-stub_good.so)"),
                "zdup sorts after good and is the duplicate: %s", info.reason);
  uint32_t index = 0;
  vyre_error err = VYRE_ERROR_INIT;
  ck_assert_msg(vyre_host_select(host, NULL, &index, &err) == VYRE_OK, "selection works: %s",
                err.message);
  ck_assert_msg(strcmp(info_at(host, index).id, "fast") == 0,
                "factory (precedence 1) fails, so fast (10) wins; got %s",
                info_at(host, index).id);
  ck_assert_int_eq(info_at(host, (uint32_t)vyre_host_find(host, "factory")).status,
                   VYRE_HOST_UNAVAILABLE);
  vyre_host_close(host);
}
END_TEST

/* ------------------------------------------------------------------ */
/* negotiation: the version-skew matrix                                */
/* ------------------------------------------------------------------ */

START_TEST(test_negotiate_matrix) {
  static const struct {
    uint16_t host, lo, hi;
    int ok;
    uint16_t agreed;
  } rows[] = {
      {0, 0, 0, 1, 0},          /* same version */
      {0, 0, 3, 1, 0},          /* plugin newer: down to the host */
      {2, 0, 3, 1, 2},          /* plugin newer, host in range */
      {2, 0, 1, 1, 1},          /* host newer: the plugin's newest */
      {5, 5, 5, 1, 5},          /* exact single minor */
      {5, 2, 9, 1, 5},
      {9, 2, 5, 1, 5},
      {0, 1, 2, 0, 0},          /* plugin dropped minor 0 */
      {2, 3, 4, 0, 0},          /* plugin needs a newer host */
      {4, 3, 2, 0, 0},          /* inverted range */
      {65535, 0, 65535, 1, 65535},
      {0, 0, 65535, 1, 0},
      {65535, 65535, 65535, 1, 65535},
      {65534, 65535, 65535, 0, 0},
  };
  for (size_t i = 0; i < sizeof rows / sizeof rows[0]; i++) {
    uint16_t agreed = 12345;
    vyre_status st = vyre_host_negotiate_minor(rows[i].host, rows[i].lo, rows[i].hi, &agreed);
    if (rows[i].ok)
      ck_assert_msg(st == VYRE_OK && agreed == rows[i].agreed,
                    "host %u vs plugin [%u,%u] should agree on %u, got %s %u", rows[i].host,
                    rows[i].lo, rows[i].hi, rows[i].agreed, vyre_status_name(st), agreed);
    else
      ck_assert_msg(st == VYRE_ABI_MISMATCH && agreed == 12345,
                    "host %u vs plugin [%u,%u] should not agree (and leave out alone), got %s %u",
                    rows[i].host, rows[i].lo, rows[i].hi, vyre_status_name(st), agreed);
  }
}
END_TEST

/*
 * Real plugins of minors N-1 (abi10: serves 0..0, 1.0-sized structs),
 * N (good: 0..1), N+1 (future: 0..2) and beyond (newer 0..3, excl 3..4,
 * liar), against this host's minor (0, 1 or 2: the three builds of this
 * suite).  The host records the negotiated minor and hands it to create.
 */
START_TEST(test_negotiate_plugins) {
  static const char *const variants[] = {"abi10", "good", "future", "newer", "older", "excl",
                                         "liar"};
  /* Negotiated minor per host minor 0, 1, 2; -1 = refused. */
  static const int expect[][3] = {
      {0, 0, 0}, {0, 1, 1}, {0, 1, 2}, {0, 1, 2}, {0, 1, 1}, {-1, -1, -1}, {0, 1, 2},
  };
  enum { N = sizeof variants / sizeof variants[0] };
  ck_assert_msg(HOST_MINOR <= 2, "this table knows host minors 0 to 2");
  char path[N * PATH_MAX];
  path[0] = '\0';
  for (int i = 0; i < N; i++) {
    if (i) strcat(path, ":");
    strcat(path, stub(variants[i]));
  }
  vyre_host *host = open_only(path);
  ck_assert_int_eq(vyre_host_backend_count(host), N);
  for (uint32_t i = 0; i < N; i++) {
    vyre_host_candidate info = info_at(host, i);
    int minor = expect[i][HOST_MINOR];
    if (minor < 0) {
      ck_assert_msg(info.status == VYRE_HOST_SKIPPED, "%s at host minor %u must be refused",
                    variants[i], HOST_MINOR);
      continue;
    }
    ck_assert_msg(info.status == VYRE_HOST_LOADED && info.abi_minor == minor,
                  "%s at host minor %u should load with minor %d, got %s minor %u (%s)",
                  variants[i], HOST_MINOR, minor, vyre_host_status_name(info.status),
                  info.abi_minor, info.reason);
    ck_assert_msg(counters(variants[i])->entry == 1, "%s: entry ran once", variants[i]);
    /* The factory learns the negotiated minor from the host. */
    vyre_backend *b = NULL;
    vyre_error err = VYRE_ERROR_INIT;
    ck_assert_msg(vyre_host_create(host, info.id, NULL, &b, NULL, &err) == VYRE_OK,
                  "%s: create: %s", variants[i], err.message);
    ck_assert_msg(counters(variants[i])->last_minor == minor,
                  "%s: create got abi_minor %d, negotiated %d", variants[i],
                  (int)counters(variants[i])->last_minor, minor);
    /* get_extension exists exactly in plugins whose vtable has it. */
    ck_assert_int_eq(VYRE_HOST_HAS(b, get_extension), strcmp(variants[i], "abi10") != 0);
    b->vt->destroy(b);
  }
  ck_assert_msg(!is_loaded("excl"),
                "a range that excludes the host is refused from the file's descriptor alone, "
                "never loaded");
  vyre_host_close(host);
}
END_TEST

/* A plugin of a later minor: what this host does not know is left out
 * and counted, the rest works. */
START_TEST(test_future_plugin_loads) {
  vyre_host *host = open_only(stub("future"));
  vyre_host_candidate info = info_at(host, 0);
  ck_assert_msg(info.status == VYRE_HOST_LOADED, "future plugin loads: %s", info.reason);
  ck_assert_int_eq(info.op_count, 4);
  ck_assert_int_eq(info.unknown_op_count, 1);
  for (uint32_t k = 0; k < info.op_count; k++)
    ck_assert_msg(info.ops[k] != 250, "the unknown op id is not offered");
  ck_assert_msg(info.unknown_capabilities == (1ull << 40), "unknown bit counted");
  ck_assert_msg(info.capabilities == (VYRE_CAP_BARRIER | VYRE_CAP_F16),
                "unknown bit not offered");
  ck_assert_int_eq(info.registration_size, sizeof(vyre_registration) + 32);
  vyre_host_close(host);
}
END_TEST

/* Per-op type masks: read from a 1.1 registration when 1.1 was
 * negotiated; "every type the op allows" otherwise. */
START_TEST(test_op_type_masks) {
  char path[2 * PATH_MAX];
  FORMAT(path, sizeof path, "%s:%s", stub("good"), stub("abi10"));
  vyre_host *host = open_only(path);
  for (uint32_t i = 0; i < 2; i++) {
    vyre_host_candidate info = info_at(host, i);
    ck_assert_msg(info.status == VYRE_HOST_LOADED, "%s: %s", info.id, info.reason);
    ck_assert_int_eq(info.op_count, 4);
    /* A 1.0 registration could not say int64/out_range: the host grants them. */
    uint64_t granted = VYRE_CAP_INT64 | VYRE_CAP_OUT_RANGE;
    ck_assert_msg((info.capabilities & granted) == (i == 1 ? granted : 0),
                  "%s: int64/out_range granted only to the 1.0 registration", info.id);
    for (uint32_t k = 0; k < 4; k++) {
      const vyre_op_info *op = vyre_op_lookup(info.ops[k]);
      uint32_t want = op->type_mask;
      if (i == 0 && info.abi_minor >= 1 && info.ops[k] == VYRE_OP_ADD)
        want = VYRE_TBIT(VYRE_T_U32);
      ck_assert_msg(info.op_types[k] == want, "%s: op %s types 0x%x, expected 0x%x", info.id,
                    op->mnemonic, info.op_types[k], want);
    }
  }
  vyre_host_close(host);
}
END_TEST

/* The extension mechanism: a chain on the options, get_extension. */
START_TEST(test_extensions) {
  vyre_host *host = open_only(stub("good"));
  vyre_host_candidate info = info_at(host, 0);
  vyre_ext mine = {sizeof mine, STUB_EXT_TYPE, NULL};
  vyre_ext other = {sizeof other, 0x7a7a0001u, &mine}; /* a type nobody knows: skipped */
  vyre_backend_options bo = {sizeof bo, 0, 0, 0, &other};
  vyre_backend *b = NULL;
  vyre_error err = VYRE_ERROR_INIT;
  int before = counters("good")->ext_seen;
  ck_assert_msg(vyre_host_create(host, "stub", &bo, &b, NULL, &err) == VYRE_OK, "%s", err.message);
  /* A 1.0 host does not pass a chain (the plugin would not expect one). */
  ck_assert_int_eq(counters("good")->ext_seen - before, info.abi_minor >= 1 ? 1 : 0);
  ck_assert_str_eq(info.extensions, HOST_MINOR >= 1 ? STUB_ECHO_NAME "@2" : "");
  const void *table = NULL;
  ck_assert(VYRE_HOST_HAS(b, get_extension));
  ck_assert_msg(b->vt->get_extension(b, STUB_ECHO_NAME, 1, &table, &err) == VYRE_OK, "%s",
                err.message);
  const stub_echo_ext *echo = table;
  ck_assert_msg(echo->head.version == 2 && echo->head.struct_size == sizeof *echo,
                "revision 1 asked, the compatible revision 2 served");
  /* Extension functions are the plugin's: they take its own instance. */
  vyre_backend *native = vyre_host_backend_native(b);
  ck_assert_msg(native != NULL && native != b && native == counters("good")->last,
                "the host hands out its own instance; native() is the plugin's");
  ck_assert_msg(vyre_host_backend_native(native) == native && !vyre_host_backend_native(NULL),
                "a plugin's instance and NULL are their own native instance");
  ck_assert_int_eq(echo->echo(native, 41), 41);
  ck_assert(b->vt->get_extension(b, STUB_ECHO_NAME, 3, &table, &err) == VYRE_UNSUPPORTED);
  ck_assert_msg(table == NULL, "*out is NULL when refused");
  ck_assert(b->vt->get_extension(b, "vyre.nothing", 1, &table, &err) == VYRE_UNSUPPORTED);
  ck_assert_msg(strstr(err.message, "Fix:") != NULL, "refusal says how to fix: %s", err.message);
  b->vt->destroy(b);
  vyre_host_close(host);
}
END_TEST

/* Discovery opens only libvyre-*.so in a directory: the unrelated
 * library next to the stubs is never mapped, its constructor never runs. */
START_TEST(test_unrelated_library_never_opened) {
  char unrelated[PATH_MAX];
  FORMAT(unrelated, sizeof unrelated, "%s/libunrelated.so", stub_dir);
  ck_assert_msg(access(unrelated, R_OK) == 0, "the unrelated library is built: %s", unrelated);
  unsetenv("UNRELATED_CONSTRUCTOR_RAN");
  vyre_host *host = open_only(stub_dir);
  for (uint32_t i = 0; i < vyre_host_backend_count(host); i++) {
    vyre_host_candidate info = info_at(host, i);
    ck_assert_msg(strstr(info.path, "/libvyre-") != NULL, "only backends are listed: %s",
                  info.path);
  }
  ck_assert_msg(dlopen(unrelated, RTLD_NOW | RTLD_NOLOAD) == NULL,
                "libunrelated.so must not be mapped");
  ck_assert_msg(getenv("UNRELATED_CONSTRUCTOR_RAN") == NULL, "its constructor must not run");
  vyre_host_close(host);
}
END_TEST

/* ------------------------------------------------------------------ */
/* hostile: what a backend returns is checked before a caller sees it   */
/* ------------------------------------------------------------------ */

typedef struct hostile_case {
  const char *mode;   /* $STUB_EVIL */
  vyre_status status; /* from dispatch */
  const char *message;
  int freed;          /* outputs the host must have handed back */
} hostile_case;

static const hostile_case hostile_cases[] = {
    {"", VYRE_OK, "", 0},
    {"count", VYRE_INTERNAL, "backend 'evil' broke the vyre ABI in dispatch: it returned 3 "
                             "outputs for a program with 1", 1},
    {"items", VYRE_INTERNAL, "in dispatch: it returned 1 output with items NULL", 1},
    {"data", VYRE_INTERNAL, "in dispatch: output 0 has 16 bytes at a NULL data pointer", 1},
    {"size", VYRE_INTERNAL, "in dispatch: output 0 is 1048576 bytes, the program's output 0 is 16", 1},
    {"noout", VYRE_INTERNAL, "in dispatch: it returned VYRE_OK but no outputs", 0},
    {"status", VYRE_INTERNAL, "in dispatch: it returned status 77, which is no vyre_status", 0},
    {"nonul", VYRE_DRIVER, "AAAAAAAA", 0},
};

/* An instance of the evil stub and the program its outputs fit. */
static vyre_host *evil_open(vyre_backend **b, void **bytes, size_t *size) {
  vyre_host *host = open_only(hostile("evil"));
  vyre_error err = VYRE_ERROR_INIT;
  ck_assert_msg(vyre_host_create(host, "evil", NULL, b, NULL, &err) == VYRE_OK, "%s", err.message);
  ck_assert_msg(vyre_text_assemble(STUB_EVIL_PROGRAM, strlen(STUB_EVIL_PROGRAM), "evil.vyre",
                                   bytes, size, &err) == VYRE_OK,
                "the test program assembles: %s", err.message);
  return host;
}

START_TEST(test_hostile_dispatch) {
  const hostile_case *c = &hostile_cases[_i];
  vyre_backend *b = NULL;
  void *bytes = NULL;
  size_t size = 0;
  vyre_host *host = evil_open(&b, &bytes, &size);
  stub_counters *k = counters_at(hostile("evil"));
  ck_assert(k != NULL);
  int freed = k->outputs_freed;
  setenv(STUB_EVIL_ENV, c->mode, 1);
  vyre_program_ref ref = VYRE_PROGRAM_BYTES(bytes, size);
  vyre_outputs *outs = (vyre_outputs *)&outs;
  vyre_error err = VYRE_ERROR_INIT;
  memset(err.message, 'Z', sizeof err.message);
  vyre_status st = b->vt->dispatch(b, &ref, NULL, 0, NULL, &outs, NULL, &err);
  ck_assert_msg(st == c->status, "mode '%s': status %s expected, got %s (%.200s)", c->mode,
                vyre_status_name(c->status), vyre_status_name(st), err.message);
  if (st == VYRE_OK) {
    ck_assert_msg(outs && outs->count == 1 && outs->items[0].size == STUB_EVIL_OUTPUT_BYTES &&
                      ((unsigned char *)outs->items[0].data)[15] == 7,
                  "honest outputs pass unchanged");
    b->vt->outputs_free(b, outs);
  } else {
    ck_assert_msg(outs == NULL, "mode '%s': no outputs reach the caller on failure", c->mode);
    ck_assert_msg(strnlen(err.message, sizeof err.message) < sizeof err.message,
                  "mode '%s': the message the caller gets is NUL-terminated", c->mode);
    ck_assert_msg(strstr(err.message, c->message) != NULL, "mode '%s': \"%s\" expected in \"%s\"",
                  c->mode, c->message, err.message);
    if (st == VYRE_INTERNAL)
      ck_assert_msg(strstr(err.message, "Fix:") && strstr(err.message, hostile("evil")),
                    "the violation names the plugin file and a fix: %s", err.message);
  }
  ck_assert_msg(k->outputs_freed - freed == c->freed + (st == VYRE_OK),
                "mode '%s': refused outputs are handed back to the plugin (freed %d)", c->mode,
                k->outputs_freed - freed);
  unsetenv(STUB_EVIL_ENV);
  b->vt->destroy(b);
  free(bytes);
  vyre_host_close(host);
}
END_TEST

/* The other entries: pending, profile, metrics, extensions. */
START_TEST(test_hostile_entries) {
  vyre_backend *b = NULL;
  void *bytes = NULL;
  size_t size = 0;
  vyre_host *host = evil_open(&b, &bytes, &size);
  vyre_program_ref ref = VYRE_PROGRAM_BYTES(bytes, size);
  vyre_error err = VYRE_ERROR_INIT;

  setenv(STUB_EVIL_ENV, "count", 1);
  vyre_pending p = 0;
  ck_assert(b->vt->dispatch_async(b, &ref, NULL, 0, NULL, &p, &err) == VYRE_OK && p != 0);
  vyre_outputs *outs = NULL;
  ck_assert_int_eq(b->vt->pending_wait(b, p, &outs, NULL, &err), VYRE_INTERNAL);
  ck_assert_msg(outs == NULL && strstr(err.message, "in pending_wait: it returned 3 outputs for a "
                                                    "program with 1"),
                "pending_wait is checked against the program dispatch_async got: %s", err.message);

  setenv(STUB_EVIL_ENV, "poll", 1);
  int ready = 0;
  ck_assert(b->vt->dispatch_async(b, &ref, NULL, 0, NULL, &p, &err) == VYRE_OK && p != 0);
  ck_assert_int_eq(b->vt->pending_poll(b, p, &ready, &err), VYRE_INTERNAL);
  ck_assert_msg(strstr(err.message, "it set *ready to 7"), "%s", err.message);

  setenv(STUB_EVIL_ENV, "profile", 1);
  vyre_device_profile prof;
  memset(&prof, 0, sizeof prof);
  prof.struct_size = sizeof prof;
  ck_assert(b->vt->device_profile(b, &prof, &err) == VYRE_OK);
  ck_assert_msg(strnlen(prof.name, sizeof prof.name) < sizeof prof.name &&
                    strnlen(prof.backend_id, sizeof prof.backend_id) < sizeof prof.backend_id,
                "the profile's strings are terminated");
  /* A short caller struct is written only up to its size. */
  memset(&prof, 0xee, sizeof prof);
  prof.struct_size = 16;
  ck_assert(b->vt->device_profile(b, &prof, &err) == VYRE_OK);
  ck_assert_msg(prof.struct_size == 16 && (unsigned char)prof.name[8] == 0xee &&
                    prof.capabilities == 0xeeeeeeeeeeeeeeeeull,
                "nothing past struct_size is written");

  setenv(STUB_EVIL_ENV, "metrics", 1);
  vyre_metric m[2];
  uint32_t count = 0;
  ck_assert(b->vt->metrics(b, m, 1, &count, &err) == VYRE_OK);
  ck_assert_msg(strnlen(m[0].name, sizeof m[0].name) < sizeof m[0].name, "metric names are terminated");

  setenv(STUB_EVIL_ENV, "ext", 1);
  const void *table = (const void *)&table;
  ck_assert_int_eq(b->vt->get_extension(b, STUB_ECHO_NAME, 1, &table, &err), VYRE_INTERNAL);
  ck_assert_msg(table == NULL && strstr(err.message, "returned VYRE_OK and no table"), "%s",
                err.message);

  unsetenv(STUB_EVIL_ENV);
  /* Entries the plugin lacks are absent from the instance handed out. */
  ck_assert(VYRE_HOST_HAS(b, dispatch) && VYRE_HOST_HAS(b, pending_wait));
  ck_assert(!VYRE_HOST_HAS(b, dispatch_into) && !VYRE_HOST_HAS(b, resident_alloc));
  b->vt->destroy(b);
  free(bytes);
  vyre_host_close(host);
}
END_TEST

/* ------------------------------------------------------------------ */
/* selection                                                           */
/* ------------------------------------------------------------------ */

static const char *selected_id(vyre_host *host, vyre_error *err, vyre_status *st) {
  uint32_t index = 0;
  *st = vyre_host_select(host, NULL, &index, err);
  return *st == VYRE_OK ? info_at(host, index).id : NULL;
}

START_TEST(test_precedence_selection) {
  char path[3 * PATH_MAX];
  FORMAT(path, sizeof path, "%s:%s:%s", stub("good"), stub("fast"), stub("tie"));
  vyre_host *host = open_only(path);
  vyre_error err = VYRE_ERROR_INIT;
  vyre_status st;
  const char *id = selected_id(host, &err, &st);
  ck_assert_msg(id && strcmp(id, "fast") == 0, "lowest precedence (fast, 10) wins; got %s (%s)",
                id ? id : "none", err.message);
  ck_assert_msg(counters("good")->create == 0, "selection stops at the first working factory");
  ck_assert_msg(vyre_host_probe(host) == 3, "probe: all three factories work");
  for (uint32_t i = 0; i < 3; i++) ck_assert_int_eq(info_at(host, i).status, VYRE_HOST_READY);
  ck_assert_msg(counters("fast")->live == 0 && counters("good")->live == 0,
                "select and probe destroy the instances they make");
  vyre_host_close(host);
}
END_TEST

START_TEST(test_tie_uses_search_order) {
  char path[2 * PATH_MAX];
  vyre_error err = VYRE_ERROR_INIT;
  vyre_status st;
  FORMAT(path, sizeof path, "%s:%s", stub("good"), stub("tie"));
  vyre_host *host = open_only(path);
  const char *id = selected_id(host, &err, &st);
  ck_assert_msg(id && strcmp(id, "stub") == 0, "equal precedence: first found wins, got %s",
                id ? id : "none");
  vyre_host_close(host);
  FORMAT(path, sizeof path, "%s:%s", stub("tie"), stub("good"));
  host = open_only(path);
  id = selected_id(host, &err, &st);
  ck_assert_msg(id && strcmp(id, "tie") == 0, "equal precedence, reversed: tie first, got %s",
                id ? id : "none");
  vyre_host_close(host);
}
END_TEST

START_TEST(test_selection_skips_failing_factory) {
  char path[2 * PATH_MAX];
  FORMAT(path, sizeof path, "%s:%s", stub("good"), stub("factory"));
  vyre_host *host = open_only(path);
  vyre_error err = VYRE_ERROR_INIT;
  vyre_status st;
  const char *id = selected_id(host, &err, &st);
  ck_assert_msg(id && strcmp(id, "stub") == 0,
                "factory (precedence 1) fails here, so stub is chosen; got %s", id ? id : "none");
  vyre_host_candidate info = info_at(host, 1);
  ck_assert_msg(info.status == VYRE_HOST_UNAVAILABLE && strstr(info.reason, "no stub device"),
                "the failed factory keeps its reason: %s", info.reason);
  vyre_host_close(host);
}
END_TEST

START_TEST(test_forced_by_env) {
  char path[3 * PATH_MAX];
  FORMAT(path, sizeof path, "%s:%s:%s", stub("good"), stub("fast"), stub("factory"));
  setenv("VYRE_BACKEND_PATH", path, 1);
  vyre_host_options opt = {sizeof opt, VYRE_HOST_NO_DEFAULT_DIRS, NULL, NULL};
  vyre_error err = VYRE_ERROR_INIT;
  vyre_host *host = NULL;
  vyre_backend *b = NULL;
  uint32_t index = 0;

  setenv("VYRE_BACKEND", "stub", 1);
  ck_assert(vyre_host_open(&opt, &host, &err) == VYRE_OK);
  ck_assert_str_eq(vyre_host_forced_id(host), "stub");
  ck_assert_msg(vyre_host_create(host, NULL, NULL, &b, &index, &err) == VYRE_OK &&
                    strcmp(info_at(host, index).id, "stub") == 0,
                "VYRE_BACKEND=stub beats fast's precedence: %s", err.message);
  b->vt->destroy(b);
  ck_assert_msg(vyre_host_create(host, "fast", NULL, &b, &index, &err) == VYRE_OK &&
                    strcmp(info_at(host, index).id, "fast") == 0,
                "an explicit id beats VYRE_BACKEND");
  b->vt->destroy(b);
  vyre_host_close(host);

  setenv("VYRE_BACKEND", "nosuch", 1);
  ck_assert(vyre_host_open(&opt, &host, &err) == VYRE_OK);
  vyre_status st = vyre_host_create(host, NULL, NULL, &b, NULL, &err);
  ck_assert_msg(st == VYRE_NO_DEVICE && b == NULL, "a forced id that is absent is an error");
  ck_assert_msg(strstr(err.message, "backend 'nosuch' (forced by VYRE_BACKEND) not found "
                                    "(registered: stub, fast, factory)") &&
                    strstr(err.message, "Fix:"),
                "the error lists what exists: %s", err.message);
  vyre_host_close(host);

  setenv("VYRE_BACKEND", "factory", 1);
  ck_assert(vyre_host_open(&opt, &host, &err) == VYRE_OK);
  st = vyre_host_create(host, NULL, NULL, &b, NULL, &err);
  ck_assert_msg(st == VYRE_NO_DEVICE && b == NULL,
                "a forced backend whose factory fails is an error, not a fallback");
  ck_assert_msg(strstr(err.message, "backend 'factory' (forced by VYRE_BACKEND) cannot be used: "
                                    "factory failed: VYRE_NO_DEVICE"),
                "and says why: %s", err.message);
  vyre_host_close(host);

  /* The host options win over the environment. */
  opt.backend = "fast";
  ck_assert(vyre_host_open(&opt, &host, &err) == VYRE_OK);
  ck_assert(vyre_host_create(host, NULL, NULL, &b, &index, &err) == VYRE_OK);
  ck_assert_msg(strcmp(info_at(host, index).id, "fast") == 0, "options->backend beats VYRE_BACKEND");
  b->vt->destroy(b);
  vyre_host_close(host);
}
END_TEST

START_TEST(test_forced_skipped_names_reason) {
  char path[2 * PATH_MAX];
  FORMAT(path, sizeof path, "%s:%s", stub("good"), stub("dupop"));
  vyre_host_options opt = {sizeof opt, VYRE_HOST_NO_ENV | VYRE_HOST_NO_DEFAULT_DIRS, path, "dupop"};
  vyre_host *host = NULL;
  vyre_error err = VYRE_ERROR_INIT;
  ck_assert(vyre_host_open(&opt, &host, &err) == VYRE_OK);
  vyre_backend *b = NULL;
  ck_assert(vyre_host_create(host, NULL, NULL, &b, NULL, &err) != VYRE_OK);
  /* dupop's id is read before its op list is refused, so it is known. */
  ck_assert_msg(strstr(err.message, "backend 'dupop' (forced by the host options) was skipped") &&
                    strstr(err.message, "listed twice"),
                "a forced id that was skipped says why: %s", err.message);
  vyre_host_close(host);
}
END_TEST

START_TEST(test_no_backends) {
  vyre_host *host = open_only("");
  ck_assert_int_eq(vyre_host_backend_count(host), 0);
  vyre_backend *b = NULL;
  vyre_error err = VYRE_ERROR_INIT;
  ck_assert(vyre_host_create(host, NULL, NULL, &b, NULL, &err) == VYRE_NO_DEVICE);
  ck_assert_msg(strstr(err.message, "no vyre backend found (0 candidates skipped)") &&
                    strstr(err.message, "VYRE_BACKEND_PATH"),
                "an empty search says how to fix it: %s", err.message);
  ck_assert_int_eq(vyre_host_probe(host), 0);
  vyre_host_close(host);
}
END_TEST

START_TEST(test_device_ordinal_passed) {
  vyre_host *host = open_only(stub("good"));
  vyre_backend_options bo = {sizeof bo, 1, 0, 0, NULL};
  vyre_backend *b = NULL;
  vyre_error err = VYRE_ERROR_INIT;
  ck_assert(vyre_host_create(host, "stub", &bo, &b, NULL, &err) == VYRE_NO_DEVICE);
  ck_assert_msg(strstr(err.message, "device 1 does not exist"), "the options reach the factory: %s",
                err.message);
  bo.struct_size = 0;
  ck_assert_msg(vyre_host_create(host, "stub", &bo, &b, NULL, &err) == VYRE_INVALID_ARGUMENT,
                "options with struct_size 0 are refused");
  vyre_host_close(host);
}
END_TEST

/* ------------------------------------------------------------------ */
/* search: order, duplicates, directories, environment, build tree      */
/* ------------------------------------------------------------------ */

START_TEST(test_duplicate_first_wins) {
  char path[2 * PATH_MAX];
  FORMAT(path, sizeof path, "%s:%s", stub("good"), stub("zdup"));
  vyre_host *host = open_only(path);
  vyre_host_candidate dup = info_at(host, 1);
  char want[PATH_MAX + 64];
  FORMAT(want, sizeof want, "duplicate id 'stub' (already loaded from %s)", stub("good"));
  ck_assert_msg(dup.status == VYRE_HOST_SKIPPED && strstr(dup.reason, want),
                "the later one is the duplicate: %s", dup.reason);
  ck_assert_int_eq(info_at(host, 0).precedence, 50);
  vyre_host_close(host);

  FORMAT(path, sizeof path, "%s:%s", stub("zdup"), stub("good"));
  host = open_only(path);
  ck_assert_msg(info_at(host, 0).status == VYRE_HOST_LOADED && info_at(host, 0).precedence == 5,
                "reversed: zdup is the 'stub' that loads");
  ck_assert_int_eq(info_at(host, 1).status, VYRE_HOST_SKIPPED);
  vyre_host_close(host);
}
END_TEST

/* A duplicate that registers but cannot create an instance does not
 * shadow a later one that can (issue: a broken 'reference' plugin first
 * on the path hid the real one, even with VYRE_BACKEND=reference). */
START_TEST(test_duplicate_that_fails_falls_back) {
  char path[2 * PATH_MAX];
  FORMAT(path, sizeof path, "%s:%s", hostile("zfail"), stub("good"));
  vyre_host *host = open_only(path);
  vyre_host_candidate dup = info_at(host, 1);
  ck_assert_msg(dup.status == VYRE_HOST_SKIPPED && strstr(dup.reason, "duplicate id 'stub'") &&
                    strstr(dup.reason, "used only if that one cannot create an instance"),
                "the later one is listed as the duplicate and the fallback: %s", dup.reason);
  ck_assert_int_eq(vyre_host_skipped_count(host), 1);
  vyre_backend *b = NULL;
  uint32_t index = 99;
  vyre_error err = VYRE_ERROR_INIT;
  ck_assert_msg(vyre_host_create(host, "stub", NULL, &b, &index, &err) == VYRE_OK,
                "'stub' by id works through its fallback: %s", err.message);
  ck_assert_msg(index == 1, "the fallback made it, got index %u", index);
  b->vt->destroy(b);
  ck_assert_int_eq(info_at(host, 0).status, VYRE_HOST_UNAVAILABLE);
  ck_assert_int_eq(info_at(host, 1).status, VYRE_HOST_READY);
  ck_assert_msg(vyre_host_skipped_count(host) == 0, "a fallback in use is no longer skipped");
  ck_assert_msg(vyre_host_create(host, NULL, NULL, &b, &index, &err) == VYRE_OK && index == 1,
                "the best backend is the fallback too: %s", err.message);
  b->vt->destroy(b);
  ck_assert_int_eq(vyre_host_probe(host), 1);
  vyre_host_close(host);

  /* Both fail: the error gives both reasons. */
  FORMAT(path, sizeof path, "%s:%s", hostile("zfail"), hostile("zfail"));
  host = open_only(path);
  ck_assert_int_eq(vyre_host_backend_count(host), 1); /* one file, listed once */
  vyre_host_close(host);
}
END_TEST

START_TEST(test_fake_reference_does_not_shadow) {
  char path[2 * PATH_MAX];
  FORMAT(path, sizeof path, "%s:%s", hostile("fakeref"), reference_plugin());
  vyre_host_options opt = {sizeof opt, VYRE_HOST_NO_DEFAULT_DIRS, path, NULL};
  setenv("VYRE_BACKEND", "reference", 1);
  vyre_host *host = NULL;
  vyre_error err = VYRE_ERROR_INIT;
  ck_assert(vyre_host_open(&opt, &host, &err) == VYRE_OK);
  ck_assert_str_eq(info_at(host, 0).id, "reference");
  vyre_backend *b = NULL;
  uint32_t index = 99;
  ck_assert_msg(vyre_host_create(host, NULL, NULL, &b, &index, &err) == VYRE_OK,
                "VYRE_BACKEND=reference finds the real one behind the broken one: %s",
                err.message);
  ck_assert_int_eq(index, 1);
  vyre_device_profile prof = {.struct_size = sizeof prof};
  ck_assert(b->vt->device_profile(b, &prof, &err) == VYRE_OK);
  ck_assert_str_eq(prof.backend_id, "reference");
  b->vt->destroy(b);
  vyre_host_close(host);
}
END_TEST

START_TEST(test_directory_sorted) {
  mkdir_tmp("p");
  link_stub("fast", "p/libvyre-c.so");
  link_stub("good", "p/libvyre-a.so");
  link_stub("tie", "p/libvyre-b.so");
  link_stub("zdup", "p/libvyre-B.so"); /* 'B' < 'a' in byte order: first */
  vyre_host *host = open_only(tmp("p"));
  static const char *order[] = {"/libvyre-B.so", "/libvyre-a.so", "/libvyre-b.so", "/libvyre-c.so"};
  ck_assert_int_eq(vyre_host_backend_count(host), 4);
  for (int k = 0; k < 4; k++)
    ck_assert_msg(index_of(host, order[k]) == k, "%s should be candidate %d (byte order), is %d",
                  order[k], k, index_of(host, order[k]));
  ck_assert_msg(info_at(host, 1).status == VYRE_HOST_SKIPPED,
                "libvyre-a.so ('stub') comes after libvyre-B.so (also 'stub'): duplicate");
  vyre_host_close(host);
}
END_TEST

START_TEST(test_same_file_listed_once) {
  mkdir_tmp("p");
  link_stub("good", "p/libvyre-good.so");
  char path[2 * PATH_MAX];
  FORMAT(path, sizeof path, "%s:%s:%s", tmp("p"), stub("good"), tmp("p/libvyre-good.so"));
  vyre_host *host = open_only(path);
  ck_assert_msg(vyre_host_backend_count(host) == 1,
                "one file reached three ways is one candidate, got %u",
                vyre_host_backend_count(host));
  vyre_host_close(host);
}
END_TEST

START_TEST(test_env_path_after_options) {
  setenv("VYRE_BACKEND_PATH", stub("zdup"), 1);
  vyre_host_options opt = {sizeof opt, VYRE_HOST_NO_DEFAULT_DIRS, stub("good"), NULL};
  vyre_host *host = NULL;
  ck_assert(vyre_host_open(&opt, &host, NULL) == VYRE_OK);
  ck_assert_int_eq(vyre_host_backend_count(host), 2);
  vyre_host_candidate a = info_at(host, 0), b = info_at(host, 1);
  ck_assert_msg(a.origin == VYRE_HOST_FROM_OPTIONS && b.origin == VYRE_HOST_FROM_ENV,
                "options first, then VYRE_BACKEND_PATH");
  ck_assert_msg(a.status == VYRE_HOST_LOADED && b.status == VYRE_HOST_SKIPPED,
                "so the options' 'stub' wins");
  ck_assert_str_eq(vyre_host_origin_name(b.origin), "VYRE_BACKEND_PATH");
  vyre_host_close(host);

  opt.flags |= VYRE_HOST_NO_ENV;
  setenv("VYRE_BACKEND", "zzz", 1);
  ck_assert(vyre_host_open(&opt, &host, NULL) == VYRE_OK);
  ck_assert_msg(vyre_host_backend_count(host) == 1 && vyre_host_forced_id(host) == NULL,
                "VYRE_HOST_NO_ENV ignores VYRE_BACKEND_PATH and VYRE_BACKEND");
  vyre_host_close(host);
}
END_TEST

START_TEST(test_env_path_directory_and_files) {
  mkdir_tmp("e");
  link_stub("tie", "e/libvyre-tie.so");
  char path[3 * PATH_MAX];
  FORMAT(path, sizeof path, "%s:%s", stub("fast"), tmp("e"));
  setenv("VYRE_BACKEND_PATH", path, 1);
  vyre_host_options opt = {sizeof opt, VYRE_HOST_NO_DEFAULT_DIRS, NULL, NULL};
  vyre_host *host = NULL;
  ck_assert(vyre_host_open(&opt, &host, NULL) == VYRE_OK);
  ck_assert_int_eq(vyre_host_backend_count(host), 2);
  ck_assert_str_eq(info_at(host, 0).id, "fast");
  ck_assert_str_eq(info_at(host, 1).id, "tie");
  ck_assert_int_eq(info_at(host, 1).origin, VYRE_HOST_FROM_ENV);
  vyre_host_close(host);
}
END_TEST

START_TEST(test_build_tree) {
  mkdir_tmp("top");
  mkdir_tmp("top/host-stub");
  mkdir_tmp("top/host-stub/ref");
  mkdir_tmp("top/host-stub/ref/.libs");
  link_stub("tie", "top/host-stub/ref/.libs/libvyre-ref.so");
  setenv("VYRE_BUILD_DIR", tmp("top"), 1);
  setenv("VYRE_BACKEND_PATH", stub("good"), 1);
  vyre_host *host = NULL;
  ck_assert(vyre_host_open(NULL, &host, NULL) == VYRE_OK);
  int ref = index_of(host, "/top/host-stub/ref/.libs/libvyre-ref.so");
  ck_assert_msg(ref >= 0, "VYRE_BUILD_DIR's host-stub/ref/.libs/libvyre-ref.so is searched");
  vyre_host_candidate info = info_at(host, (uint32_t)ref);
  ck_assert_msg(info.origin == VYRE_HOST_FROM_BUILD && strcmp(info.id, "tie") == 0,
                "and registers from the build tree (%s, %s)", vyre_host_origin_name(info.origin),
                info.id);
  ck_assert_msg(index_of(host, "/libvyre-stub_good.so") < ref, "VYRE_BACKEND_PATH comes first");
  ck_assert_msg(index_of(host, "libvyre-cuda.so") < 0,
                "a build-tree plugin that was not built is not listed");
  vyre_host_close(host);
}
END_TEST

/* ------------------------------------------------------------------ */
/* api                                                                 */
/* ------------------------------------------------------------------ */

START_TEST(test_info_honours_struct_size) {
  vyre_host *host = open_only(stub("good"));
  vyre_host_candidate info;
  memset(&info, 0xab, sizeof info);
  info.struct_size = (uint32_t)offsetof(vyre_host_candidate, version);
  ck_assert(vyre_host_backend_info(host, 0, &info, NULL) == VYRE_OK);
  ck_assert_msg(info.struct_size == offsetof(vyre_host_candidate, version),
                "struct_size is left as the caller set it");
  ck_assert_str_eq(info.id, "stub");
  const unsigned char *tail = (const unsigned char *)&info.version;
  for (size_t k = 0; k < sizeof info - offsetof(vyre_host_candidate, version); k++)
    ck_assert_msg(tail[k] == 0xab, "byte %zu past the caller's struct_size was written",
                  k + offsetof(vyre_host_candidate, version));
  vyre_error err = VYRE_ERROR_INIT;
  info.struct_size = sizeof info;
  ck_assert(vyre_host_backend_info(host, 1, &info, &err) == VYRE_INVALID_ARGUMENT);
  ck_assert_msg(strstr(err.message, "index 1 out of range (1 candidates)"), "%s", err.message);
  info.struct_size = 0;
  ck_assert(vyre_host_backend_info(host, 0, &info, &err) == VYRE_INVALID_ARGUMENT);
  ck_assert(vyre_host_backend_info(host, 0, NULL, &err) == VYRE_INVALID_ARGUMENT);
  vyre_host_close(host);
}
END_TEST

START_TEST(test_bad_arguments) {
  vyre_error err = VYRE_ERROR_INIT;
  vyre_host *host = (vyre_host *)&err;
  ck_assert(vyre_host_open(NULL, NULL, &err) == VYRE_INVALID_ARGUMENT);
  vyre_host_options opt = {0, 0, NULL, NULL};
  ck_assert(vyre_host_open(&opt, &host, &err) == VYRE_INVALID_ARGUMENT);
  ck_assert_msg(host == NULL, "a failed open leaves *host NULL");
  ck_assert_msg(strstr(err.message, "struct_size 0 is invalid") && strstr(err.message, "Fix:"),
                "%s", err.message);
  opt.struct_size = sizeof opt;
  opt.flags = 0x80;
  ck_assert(vyre_host_open(&opt, &host, &err) == VYRE_INVALID_ARGUMENT);
  ck_assert_msg(strstr(err.message, "unknown flags 0x80"), "%s", err.message);
  /* A caller built against an older, shorter vyre_host_options. */
  opt.struct_size = offsetof(vyre_host_options, search_path);
  opt.flags = VYRE_HOST_NO_ENV | VYRE_HOST_NO_DEFAULT_DIRS;
  opt.search_path = "/garbage/not/read";
  ck_assert(vyre_host_open(&opt, &host, &err) == VYRE_OK);
  ck_assert_msg(vyre_host_backend_count(host) == 0, "fields past struct_size are not read");
  vyre_backend *b = NULL;
  ck_assert(vyre_host_create(host, NULL, NULL, NULL, NULL, &err) == VYRE_INVALID_ARGUMENT);
  ck_assert(vyre_host_create(NULL, NULL, NULL, &b, NULL, &err) == VYRE_INVALID_ARGUMENT);
  vyre_host_close(host);
  vyre_host_close(NULL);
  ck_assert_int_eq(vyre_host_backend_count(NULL), 0);
  ck_assert_int_eq(vyre_host_find(NULL, "x"), -1);
  ck_assert_int_eq(vyre_host_probe(NULL), 0);
}
END_TEST

START_TEST(test_names) {
  ck_assert_str_eq(vyre_host_status_name(VYRE_HOST_LOADED), "loaded");
  ck_assert_str_eq(vyre_host_status_name(VYRE_HOST_READY), "ready");
  ck_assert_str_eq(vyre_host_status_name(VYRE_HOST_UNAVAILABLE), "unavailable");
  ck_assert_str_eq(vyre_host_status_name(VYRE_HOST_SKIPPED), "skipped");
  ck_assert_str_eq(vyre_host_status_name(99), "?");
  ck_assert_str_eq(vyre_host_origin_name(VYRE_HOST_FROM_BUILD), "build tree");
  ck_assert_str_eq(vyre_host_origin_name(VYRE_HOST_FROM_PLUGINDIR), "plugin dir");
  ck_assert_str_eq(vyre_host_origin_name(7), "?");
  /* One name per VYRE_CAP_* bit of vyre.h, in bit order. */
  static const struct {
    uint64_t cap;
    const char *name;
  } caps[] = {{VYRE_CAP_F16, "f16"},
              {VYRE_CAP_SUBGROUP, "subgroup"},
              {VYRE_CAP_GRID_BARRIER, "grid_barrier"},
              {VYRE_CAP_TRANSCENDENTAL, "transcendental"},
              {VYRE_CAP_ATOMICS, "atomics"},
              {VYRE_CAP_BARRIER, "barrier"}};
  for (size_t i = 0; i < sizeof caps / sizeof caps[0]; i++) {
    uint32_t bit = (uint32_t)__builtin_ctzll(caps[i].cap);
    ck_assert_msg(vyre_host_capability_name(bit) && strcmp(vyre_host_capability_name(bit), caps[i].name) == 0,
                  "bit %u should be named %s", bit, caps[i].name);
  }
  ck_assert_str_eq(vyre_host_capability_name(17), "int64");
  ck_assert_str_eq(vyre_host_capability_name(18), "out_range");
  ck_assert_str_eq(vyre_host_capability_name(19), "tensor_cores");
  ck_assert_str_eq(vyre_host_capability_name(20), "indirect_dispatch");
  ck_assert_str_eq(vyre_host_capability_name(21), "correctly_rounded");
  ck_assert_msg(vyre_host_capability_name(22) == NULL && vyre_host_capability_name(63) == NULL,
                "bits past VYRE_CAP_CORRECTLY_ROUNDED are unknown to this host");
  /* The version: the host's ABI (this build's minor), either pointer NULL. */
  uint32_t major = 99, minor = 99;
  const char *v = vyre_host_version(&major, &minor);
  ck_assert_msg(v && v[0] && major == VYRE_ABI_MAJOR && minor == HOST_MINOR,
                "vyre_host_version: %s ABI %u.%u, expected ABI %u.%u", v ? v : "(null)", major,
                minor, VYRE_ABI_MAJOR, HOST_MINOR);
  ck_assert_msg(vyre_host_version(NULL, NULL) == v, "NULL outputs are allowed");
}
END_TEST

/* ------------------------------------------------------------------ */
/* threads                                                             */
/* ------------------------------------------------------------------ */

static void *hammer(void *arg) {
  vyre_host *host = arg;
  for (int k = 0; k < 200; k++) {
    vyre_backend *b = NULL, *other = NULL;
    vyre_error err = VYRE_ERROR_INIT;
    if (vyre_host_create(host, NULL, NULL, &b, NULL, &err) != VYRE_OK) return (void *)1;
    vyre_host_candidate info = {.struct_size = sizeof info};
    if (vyre_host_backend_info(host, 0, &info, &err) != VYRE_OK) return (void *)2;
    if (vyre_host_create(host, "factory", NULL, &other, NULL, &err) == VYRE_OK) return (void *)3;
    if (vyre_host_create(host, NULL, NULL, &other, NULL, &err) != VYRE_OK) return (void *)4;
    other->vt->destroy(other);
    b->vt->destroy(b);
  }
  return NULL;
}

START_TEST(test_concurrent_create) {
  char path[3 * PATH_MAX];
  FORMAT(path, sizeof path, "%s:%s:%s", stub("factory"), stub("good"), stub("fast"));
  vyre_host *host = open_only(path);
  pthread_t t[8];
  for (int i = 0; i < 8; i++) ck_assert(pthread_create(&t[i], NULL, hammer, host) == 0);
  for (int i = 0; i < 8; i++) {
    void *rc = NULL;
    pthread_join(t[i], &rc);
    ck_assert_msg(rc == NULL, "thread %d failed at step %ld", i, (long)(intptr_t)rc);
  }
  stub_counters *fast = counters("fast"), *factory = counters("factory");
  ck_assert_msg(fast->create == 8 * 200 * 2, "every best-selection created 'fast', got %d",
                fast->create);
  ck_assert_msg(factory->create == 8 * 200 * 3,
                "and tried 'factory' (precedence 1) first, plus the explicit tries: %d",
                factory->create);
  ck_assert_msg(fast->live == 0, "every instance was destroyed: %d live", fast->live);
  ck_assert_int_eq(info_at(host, 0).status, VYRE_HOST_UNAVAILABLE);
  ck_assert_int_eq(info_at(host, 2).status, VYRE_HOST_READY);
  vyre_host_close(host);
}
END_TEST

static Suite *loader_suite(void) {
  Suite *s = suite_create("loader");
  TCase *tc = tcase_create("core");
  tcase_add_checked_fixture(tc, setup_tmp, teardown_tmp);
  tcase_add_test(tc, test_good_stub_registers);
  tcase_add_test(tc, test_create_and_vtable_helper);
  tcase_add_test(tc, test_short_vtable_helper);
  suite_add_tcase(s, tc);

  tc = tcase_create("errors");
  tcase_add_checked_fixture(tc, setup_tmp, teardown_tmp);
  size_t n;
  broken_cases(&n);
  tcase_add_loop_test(tc, test_broken_plugin_skipped, 0, (int)n);
  tcase_add_test(tc, test_factory_failure_reported);
  tcase_add_test(tc, test_malformed_instance_rejected);
  tcase_add_test(tc, test_not_libraries);
  tcase_add_test(tc, test_missing_path_entry);
  tcase_add_test(tc, test_truncated_plugins);
  tcase_add_test(tc, test_foreign_elf);
  tcase_add_test(tc, test_whole_stub_directory);
  tcase_add_test(tc, test_unrelated_library_never_opened);
  suite_add_tcase(s, tc);

  tc = tcase_create("hostile");
  tcase_add_checked_fixture(tc, setup_tmp, teardown_tmp);
  tcase_add_loop_test(tc, test_hostile_dispatch, 0,
                      (int)(sizeof hostile_cases / sizeof hostile_cases[0]));
  tcase_add_test(tc, test_hostile_entries);
  suite_add_tcase(s, tc);

  tc = tcase_create("negotiation");
  tcase_add_checked_fixture(tc, setup_tmp, teardown_tmp);
  tcase_add_test(tc, test_negotiate_matrix);
  tcase_add_test(tc, test_negotiate_plugins);
  tcase_add_test(tc, test_future_plugin_loads);
  tcase_add_test(tc, test_op_type_masks);
  tcase_add_test(tc, test_extensions);
  suite_add_tcase(s, tc);

  tc = tcase_create("selection");
  tcase_add_checked_fixture(tc, setup_tmp, teardown_tmp);
  tcase_add_test(tc, test_precedence_selection);
  tcase_add_test(tc, test_tie_uses_search_order);
  tcase_add_test(tc, test_selection_skips_failing_factory);
  tcase_add_test(tc, test_forced_by_env);
  tcase_add_test(tc, test_forced_skipped_names_reason);
  tcase_add_test(tc, test_no_backends);
  tcase_add_test(tc, test_device_ordinal_passed);
  suite_add_tcase(s, tc);

  tc = tcase_create("search");
  tcase_add_checked_fixture(tc, setup_tmp, teardown_tmp);
  tcase_add_test(tc, test_duplicate_first_wins);
  tcase_add_test(tc, test_duplicate_that_fails_falls_back);
  tcase_add_test(tc, test_fake_reference_does_not_shadow);
  tcase_add_test(tc, test_directory_sorted);
  tcase_add_test(tc, test_same_file_listed_once);
  tcase_add_test(tc, test_env_path_after_options);
  tcase_add_test(tc, test_env_path_directory_and_files);
  tcase_add_test(tc, test_build_tree);
  suite_add_tcase(s, tc);

  tc = tcase_create("api");
  tcase_add_checked_fixture(tc, setup_tmp, teardown_tmp);
  tcase_add_test(tc, test_info_honours_struct_size);
  tcase_add_test(tc, test_bad_arguments);
  tcase_add_test(tc, test_names);
  suite_add_tcase(s, tc);

  tc = tcase_create("threads");
  tcase_add_checked_fixture(tc, setup_tmp, teardown_tmp);
  tcase_set_timeout(tc, 60);
  tcase_add_test(tc, test_concurrent_create);
  suite_add_tcase(s, tc);
  return s;
}

int main(void) {
  SRunner *sr = srunner_create(loader_suite());
  srunner_run_all(sr, CK_NORMAL);
  int failed = srunner_ntests_failed(sr);
  srunner_free(sr);
  return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
