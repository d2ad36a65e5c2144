/* check_validate.c -- the validation layer of libvyre-host: VYRE_VALIDATE and vyre.validate@1 catch the planted miscompile of tests/loader/stubs/miscompile.c, write a capsule `vyre conform --replay` reproduces, and stay out of the way otherwise. */
#include <check.h>
#include <dirent.h>
#include <dlfcn.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "vyre/vyre_host.h"
#include "vyre/vyre_program.h"
#include "vyre/vyre_text.h"

#define FORMAT(buf, size, ...) \
  ck_assert_msg(snprintf((buf), (size), __VA_ARGS__) < (int)(size), "string too long for its buffer")

/* out[i] = a[i] + b[i] on four u32: the planted bug's op. */
static const char add_text[] = "workgroup 32\n"
                               "buffer a ro u32 [4]\n"
                               "buffer b ro u32 [4]\n"
                               "buffer out wo u32 [4]\n"
                               "%i = gid.x\n"
                               "%x = load a %i\n"
                               "%y = load b %i\n"
                               "%s = add %x %y\n"
                               "store out %i %s\n";

typedef struct seen {
  int validate_types, other_types, dispatches;
} seen;

static char build_dir[PATH_MAX];
static char plugin[PATH_MAX];
static char tmp_dir[PATH_MAX];
static void *program;
static size_t program_size;
static vyre_host *host;

static void setup(void) {
  const char *b = getenv("VYRE_BUILD_DIR");
  FORMAT(build_dir, sizeof build_dir, "%s", b && *b ? b : VYRE_TEST_BUILD_DIR);
  FORMAT(plugin, sizeof plugin, "%s/tests/loader/stubs/.libs/libmiscompile.so", build_dir);
  const char *t = getenv("TMPDIR");
  FORMAT(tmp_dir, sizeof tmp_dir, "%s/check_validate.XXXXXX", t && *t ? t : "/tmp");
  ck_assert_msg(mkdtemp(tmp_dir) != NULL, "cannot make a scratch directory");
  setenv("VYRE_VALIDATE_DIR", tmp_dir, 1);
  unsetenv("VYRE_VALIDATE");
  vyre_error err = VYRE_ERROR_INIT;
  ck_assert_msg(vyre_text_assemble(add_text, strlen(add_text), "add", &program, &program_size,
                                   &err) == VYRE_OK, "assembling: %s", err.message);
  vyre_host_options o = {sizeof o, 0, plugin, NULL};
  ck_assert_msg(vyre_host_open(&o, &host, &err) == VYRE_OK, "%s", err.message);
}

static void teardown(void) {
  vyre_host_close(host);
  host = NULL;
  free(program);
  char cmd[PATH_MAX + 16];
  FORMAT(cmd, sizeof cmd, "rm -rf '%s'", tmp_dir);
  ck_assert_int_eq(system(cmd), 0);
}

static vyre_backend *create(const char *id) {
  vyre_backend *b = NULL;
  vyre_error err = VYRE_ERROR_INIT;
  ck_assert_msg(vyre_host_create(host, id, NULL, &b, NULL, &err) == VYRE_OK, "creating %s: %s", id,
                err.message);
  return b;
}

static seen *plugin_seen(void) {
  void *h = dlopen(plugin, RTLD_NOW | RTLD_NOLOAD);
  ck_assert_msg(h != NULL, "the miscompile plugin is not loaded");
  seen *s = dlsym(h, "miscompile_seen_calls");
  ck_assert_msg(s != NULL, "miscompile_seen_calls not exported");
  dlclose(h);
  return s;
}

/* Dispatch the add on a and b = {1, 1, 1, 1}, chained `ext` (may be
 * NULL); *out2 receives out[2]. */
static vyre_status run_add(vyre_backend *b, const uint32_t a[4], const vyre_validate *ext,
                           uint32_t *out2, vyre_error *err) {
  static const uint32_t ones[4] = {1, 1, 1, 1};
  vyre_program_ref ref = VYRE_PROGRAM_BYTES(program, program_size);
  vyre_input in[2] = {{a, 16}, {ones, 16}};
  vyre_dispatch_options o;
  memset(&o, 0, sizeof o);
  o.struct_size = sizeof o;
  o.next = ext ? &ext->head : NULL;
  vyre_outputs *out = NULL;
  vyre_status st = b->vt->dispatch(b, &ref, in, 2, &o, &out, NULL, err);
  if (st == VYRE_OK) {
    ck_assert_uint_eq(out->count, 1);
    memcpy(out2, (const uint8_t *)out->items[0].data + 8, 4);
    b->vt->outputs_free(b, out);
  } else {
    ck_assert_msg(out == NULL, "a failed dispatch left outputs");
  }
  return st;
}

static vyre_validate ext_of(uint32_t mode, uint32_t flags, const char *path, uint32_t *outcome) {
  vyre_validate v;
  memset(&v, 0, sizeof v);
  v.head.struct_size = sizeof v;
  v.head.type = VYRE_EXT_VALIDATE;
  v.mode = mode;
  v.flags = flags;
  v.capsule_path = path;
  v.outcome = outcome;
  return v;
}

static const uint32_t trigger[4] = {1, 2, 0xffffffffu, 4}; /* element 2 meets the bug */
static const uint32_t harmless[4] = {1, 2, 3, 4};

/* The one capsule in tmp_dir (fails unless there is exactly one). */
static void only_capsule(char *path, size_t size) {
  DIR *d = opendir(tmp_dir);
  ck_assert_msg(d != NULL, "the capsule directory %s is missing", tmp_dir);
  int n = 0;
  for (struct dirent *e; (e = readdir(d));) {
    if (e->d_name[0] == '.') continue;
    ck_assert_msg(strncmp(e->d_name, "miscompile-", 11) == 0, "unexpected file %s", e->d_name);
    FORMAT(path, size, "%s/%s", tmp_dir, e->d_name);
    n++;
  }
  closedir(d);
  ck_assert_msg(n == 1, "%d capsules in %s, expected 1", n, tmp_dir);
}

static int capsule_count(void) {
  DIR *d = opendir(tmp_dir);
  if (!d) return 0;
  int n = 0;
  for (struct dirent *e; (e = readdir(d));) n += e->d_name[0] != '.';
  closedir(d);
  return n;
}

static char *slurp(const char *path) {
  FILE *f = fopen(path, "rb");
  ck_assert_msg(f != NULL, "cannot open %s", path);
  static char text[1 << 16];
  size_t n = fread(text, 1, sizeof text - 1, f);
  fclose(f);
  text[n] = '\0';
  return text;
}

/* Exit status of `vyre conform --replay CAPSULE --backend ID`. */
static int replay(const char *capsule, const char *id) {
  char cmd[4 * PATH_MAX];
  FORMAT(cmd, sizeof cmd,
         "VYRE_VALIDATE= VYRE_BACKEND_PATH='%s' '%s/host-stub/cli/vyre' conform --replay '%s' "
         "--backend %s --no-minimize >&2",
         plugin, build_dir, capsule, id);
  int rc = system(cmd);
  ck_assert_msg(rc != -1 && WIFEXITED(rc), "running %s failed", cmd);
  return WEXITSTATUS(rc);
}

START_TEST(test_catches_planted_add) {
  setenv("VYRE_VALIDATE", "all", 1);
  vyre_backend *b = create("miscompile");
  vyre_error err = VYRE_ERROR_INIT;
  uint32_t outcome = 99, got = 0;
  vyre_validate ext = ext_of(VYRE_VALIDATE_DEFAULT, 0, NULL, &outcome);
  ck_assert_int_eq(run_add(b, harmless, &ext, &got, &err), VYRE_OK);
  ck_assert_msg(outcome == VYRE_VALIDATE_AGREED, "a correct result: outcome %u", outcome);
  ck_assert_int_eq(capsule_count(), 0);
  ck_assert_msg(run_add(b, trigger, &ext, &got, &err) == VYRE_OK,
                "report mode returns the backend's result: %s", err.message);
  ck_assert_msg(got == 1, "the backend's (wrong) result is returned unchanged: 0x%x", got);
  ck_assert_msg(outcome == VYRE_VALIDATE_DIVERGED, "the planted bug: outcome %u", outcome);
  /* Reported once: the same call again writes nothing new. */
  ck_assert_int_eq(run_add(b, trigger, &ext, &got, &err), VYRE_OK);
  char capsule[PATH_MAX];
  only_capsule(capsule, sizeof capsule);
  const char *text = slurp(capsule);
  ck_assert_msg(strstr(text, ";@ category validate\n"), "category: %s", text);
  ck_assert_msg(strstr(text, ";@ backend miscompile "), "backend line: %s", text);
  ck_assert_msg(strstr(text, ";@ mismatch output out (u32) element 2"), "mismatch: %s", text);
  ck_assert_msg(strstr(text, ";@ input a hex 0100000002000000ffffffff04000000\n"), "%s", text);
  ck_assert_msg(strstr(text, ";@ expect-output out hex 02000000030000000000000005000000\n"),
                "the reference's outputs are the expectation: %s", text);
  ck_assert_msg(plugin_seen()->validate_types == 0, "the plugin saw vyre.validate");
  b->vt->destroy(b);
  ck_assert_msg(replay(capsule, "miscompile") == 1, "the replay reproduces the divergence");
  ck_assert_msg(replay(capsule, "reference") == 0, "the reference agrees with the capsule");
}
END_TEST

START_TEST(test_strict) {
  setenv("VYRE_VALIDATE", "all,strict", 1);
  vyre_backend *b = create("miscompile");
  vyre_error err = VYRE_ERROR_INIT;
  uint32_t got = 0;
  ck_assert_int_eq(run_add(b, harmless, NULL, &got, &err), VYRE_OK);
  ck_assert_int_eq(run_add(b, trigger, NULL, &got, &err), VYRE_INTERNAL);
  ck_assert_msg(strstr(err.message, "diverged from the reference") && strstr(err.message, tmp_dir),
                "the error names the divergence and the capsule: %s", err.message);
  /* dispatch_into fails the same way. */
  static const uint32_t ones[4] = {1, 1, 1, 1};
  uint32_t out[4];
  vyre_output_slot slot = {out, sizeof out, 0};
  vyre_input in[2] = {{trigger, 16}, {ones, 16}};
  vyre_program_ref ref = VYRE_PROGRAM_BYTES(program, program_size);
  ck_assert_int_eq(b->vt->dispatch_into(b, &ref, in, 2, NULL, &slot, 1, NULL, &err), VYRE_INTERNAL);
  b->vt->destroy(b);
}
END_TEST

START_TEST(test_extension_alone) {
  /* VYRE_VALIDATE unset: only the calls that ask are checked; strict
   * and the capsule path from the extension. */
  vyre_backend *b = create("miscompile");
  vyre_error err = VYRE_ERROR_INIT;
  uint32_t outcome = 99, got = 0;
  vyre_validate def = ext_of(VYRE_VALIDATE_DEFAULT, 0, NULL, &outcome);
  ck_assert_int_eq(run_add(b, trigger, &def, &got, &err), VYRE_OK);
  ck_assert_uint_eq(outcome, VYRE_VALIDATE_NOT_CHECKED);
  char path[PATH_MAX];
  FORMAT(path, sizeof path, "%s/exact.vyre", tmp_dir);
  vyre_validate on = ext_of(VYRE_VALIDATE_ON, VYRE_VALIDATE_STRICT, path, &outcome);
  ck_assert_int_eq(run_add(b, trigger, &on, &got, &err), VYRE_INTERNAL);
  ck_assert_uint_eq(outcome, VYRE_VALIDATE_DIVERGED);
  ck_assert_msg(access(path, R_OK) == 0, "the capsule is at the extension's path");
  ck_assert_msg(replay(path, "miscompile") == 1, "the replay reproduces the divergence");
  b->vt->destroy(b);
  /* mode OFF wins over VYRE_VALIDATE=all. */
  setenv("VYRE_VALIDATE", "all", 1);
  b = create("miscompile");
  vyre_validate off = ext_of(VYRE_VALIDATE_OFF, 0, NULL, &outcome);
  ck_assert_int_eq(run_add(b, trigger, &off, &got, &err), VYRE_OK);
  ck_assert_uint_eq(outcome, VYRE_VALIDATE_NOT_CHECKED);
  b->vt->destroy(b);
}
END_TEST

START_TEST(test_one_in_n) {
  setenv("VYRE_VALIDATE", "1/3", 1);
  vyre_backend *b = create("miscompile");
  vyre_error err = VYRE_ERROR_INIT;
  uint32_t got = 0;
  for (int k = 0; k < 7; k++) {
    uint32_t outcome = 99;
    vyre_validate def = ext_of(VYRE_VALIDATE_DEFAULT, 0, NULL, &outcome);
    ck_assert_int_eq(run_add(b, harmless, &def, &got, &err), VYRE_OK);
    ck_assert_msg(outcome == (k % 3 == 0 ? VYRE_VALIDATE_AGREED : VYRE_VALIDATE_NOT_CHECKED),
                  "dispatch %d: outcome %u", k, outcome);
  }
  b->vt->destroy(b);
}
END_TEST

START_TEST(test_by_program_and_pipeline) {
  vyre_program *p = NULL;
  ck_assert_int_eq(vyre_program_decode(program, program_size, &p, NULL), VYRE_OK);
  char hex[65], env[80];
  vyre_program_hash_hex(p, hex);
  vyre_program_free(p);
  uint32_t outcome = 99, got = 0;
  vyre_error err = VYRE_ERROR_INIT;
  vyre_validate def = ext_of(VYRE_VALIDATE_DEFAULT, 0, NULL, &outcome);
  FORMAT(env, sizeof env, "sha256=%.8s", hex);
  setenv("VYRE_VALIDATE", env, 1);
  vyre_backend *b = create("miscompile");
  ck_assert_int_eq(run_add(b, trigger, &def, &got, &err), VYRE_OK);
  ck_assert_msg(outcome == VYRE_VALIDATE_DIVERGED, "%s selects the program: outcome %u", env, outcome);
  b->vt->destroy(b);
  setenv("VYRE_VALIDATE", hex[0] == '0' ? "sha256=1" : "sha256=0", 1);
  b = create("miscompile");
  ck_assert_int_eq(run_add(b, trigger, &def, &got, &err), VYRE_OK);
  ck_assert_uint_eq(outcome, VYRE_VALIDATE_NOT_CHECKED);
  /* A pipeline made while validated: its dispatches are checked. */
  setenv("VYRE_VALIDATE", "all", 1);
  b->vt->destroy(b);
  b = create("miscompile");
  vyre_pipeline pipe = 0;
  ck_assert_int_eq(b->vt->pipeline_create(b, program, program_size, NULL, &pipe, &err), VYRE_OK);
  static const uint32_t ones[4] = {1, 1, 1, 1};
  uint32_t out[4];
  vyre_output_slot slot = {out, sizeof out, 0};
  vyre_input in[2] = {{trigger, 16}, {ones, 16}};
  vyre_program_ref ref = VYRE_PROGRAM_PIPELINE(pipe);
  vyre_dispatch_options o = {sizeof o, 0, {0}, {0}, 0, 0, &def.head};
  ck_assert_int_eq(b->vt->dispatch_into(b, &ref, in, 2, &o, &slot, 1, NULL, &err), VYRE_OK);
  ck_assert_msg(outcome == VYRE_VALIDATE_DIVERGED, "pipeline dispatch: outcome %u", outcome);
  ck_assert_int_eq(b->vt->pipeline_release(b, pipe, &err), VYRE_OK);
  b->vt->destroy(b);
}
END_TEST

START_TEST(test_chain_passed_on) {
  /* vyre.validate is taken off; the types around it reach the plugin. */
  vyre_backend *b = create("miscompile");
  vyre_error err = VYRE_ERROR_INIT;
  uint32_t outcome = 99, got = 0;
  vyre_limits lim;
  memset(&lim, 0, sizeof lim);
  lim.head.struct_size = sizeof lim;
  lim.head.type = VYRE_EXT_LIMITS;
  vyre_validate first = ext_of(VYRE_VALIDATE_ON, 0, NULL, &outcome);
  first.head.next = &lim.head;
  ck_assert_int_eq(run_add(b, harmless, &first, &got, &err), VYRE_OK);
  ck_assert_uint_eq(outcome, VYRE_VALIDATE_AGREED);
  vyre_validate second = ext_of(VYRE_VALIDATE_ON, 0, NULL, &outcome);
  lim.head.next = &second.head;
  vyre_dispatch_options o = {sizeof o, 0, {0}, {0}, 0, 0, &lim.head};
  vyre_program_ref ref = VYRE_PROGRAM_BYTES(program, program_size);
  static const uint32_t ones[4] = {1, 1, 1, 1};
  vyre_input in[2] = {{harmless, 16}, {ones, 16}};
  vyre_outputs *out = NULL;
  outcome = 99;
  ck_assert_int_eq(b->vt->dispatch(b, &ref, in, 2, &o, &out, NULL, &err), VYRE_OK);
  b->vt->outputs_free(b, out);
  ck_assert_uint_eq(outcome, VYRE_VALIDATE_AGREED);
  ck_assert_msg(lim.head.next == &second.head, "the caller's chain is left as it was");
  seen *s = plugin_seen();
  ck_assert_msg(s->validate_types == 0, "the plugin saw vyre.validate %d times", s->validate_types);
  ck_assert_msg(s->other_types == 2, "the plugin saw %d other chain nodes, expected 2",
                s->other_types);
  b->vt->destroy(b);
}
END_TEST

START_TEST(test_reference_and_bad_env) {
  setenv("VYRE_VALIDATE", "all", 1);
  vyre_backend *b = create("reference");
  vyre_error err = VYRE_ERROR_INIT;
  uint32_t outcome = 99, got = 0;
  vyre_validate def = ext_of(VYRE_VALIDATE_ON, 0, NULL, &outcome);
  ck_assert_int_eq(run_add(b, trigger, &def, &got, &err), VYRE_OK);
  ck_assert_msg(outcome == VYRE_VALIDATE_NOT_CHECKED, "the reference is not checked against itself");
  b->vt->destroy(b);
  setenv("VYRE_VALIDATE", "all,sometimes", 1);
  b = create("miscompile");
  vyre_validate d = ext_of(VYRE_VALIDATE_DEFAULT, 0, NULL, &outcome);
  ck_assert_int_eq(run_add(b, trigger, &d, &got, &err), VYRE_OK);
  ck_assert_msg(outcome == VYRE_VALIDATE_NOT_CHECKED, "a bad VYRE_VALIDATE turns it off");
  ck_assert_int_eq(capsule_count(), 0);
  b->vt->destroy(b);
}
END_TEST

/* dispatch_async + pending_wait of the add on a and ones: the status of the wait. */
static vyre_status run_async(vyre_backend *b, const uint32_t a[4], vyre_error *err) {
  static const uint32_t ones[4] = {1, 1, 1, 1};
  vyre_program_ref ref = VYRE_PROGRAM_BYTES(program, program_size);
  vyre_input in[2] = {{a, 16}, {ones, 16}};
  vyre_pending h = 0;
  ck_assert_int_eq(b->vt->dispatch_async(b, &ref, in, 2, NULL, &h, err), VYRE_OK);
  vyre_outputs *out = NULL;
  vyre_status st = b->vt->pending_wait(b, h, &out, NULL, err);
  if (st == VYRE_OK) b->vt->outputs_free(b, out);
  else ck_assert_msg(out == NULL, "a failed wait left outputs");
  return st;
}

START_TEST(test_async) {
  setenv("VYRE_VALIDATE", "all,strict", 1);
  vyre_backend *b = create("miscompile");
  vyre_error err = VYRE_ERROR_INIT;
  ck_assert_int_eq(run_async(b, harmless, &err), VYRE_OK);
  ck_assert_int_eq(capsule_count(), 0);
  ck_assert_int_eq(run_async(b, trigger, &err), VYRE_INTERNAL);
  ck_assert_msg(strstr(err.message, "pending_wait: backend 'miscompile' diverged"), "%s",
                err.message);
  char capsule[PATH_MAX];
  only_capsule(capsule, sizeof capsule);
  ck_assert_msg(strstr(slurp(capsule), ";@ input a hex 0100000002000000ffffffff04000000\n"),
                "the capsule holds the async dispatch's inputs, copied when it was made");
  /* A checked dispatch released without a wait leaves nothing behind. */
  static const uint32_t ones[4] = {1, 1, 1, 1};
  vyre_program_ref ref = VYRE_PROGRAM_BYTES(program, program_size);
  vyre_input in[2] = {{trigger, 16}, {ones, 16}};
  vyre_pending h = 0;
  ck_assert_int_eq(b->vt->dispatch_async(b, &ref, in, 2, NULL, &h, &err), VYRE_OK);
  ck_assert_int_eq(b->vt->pending_release(b, h, &err), VYRE_OK);
  ck_assert_int_eq(b->vt->dispatch_async(b, &ref, in, 2, NULL, &h, &err), VYRE_OK);
  b->vt->destroy(b); /* one still pending: the instance releases it */
}
END_TEST

static Suite *validate_suite(void) {
  Suite *s = suite_create("validate");
  TCase *tc = tcase_create("core");
  tcase_add_checked_fixture(tc, setup, teardown);
  tcase_set_timeout(tc, 60);
  tcase_add_test(tc, test_catches_planted_add);
  tcase_add_test(tc, test_strict);
  tcase_add_test(tc, test_extension_alone);
  tcase_add_test(tc, test_one_in_n);
  tcase_add_test(tc, test_by_program_and_pipeline);
  tcase_add_test(tc, test_chain_passed_on);
  tcase_add_test(tc, test_reference_and_bad_env);
  tcase_add_test(tc, test_async);
  suite_add_tcase(s, tc);
  return s;
}

int main(void) {
  SRunner *sr = srunner_create(validate_suite());
  srunner_run_all(sr, CK_NORMAL);
  int failed = srunner_ntests_failed(sr);
  srunner_free(sr);
  return failed ? 1 : 0;
}
