/* check_select.c -- libvyre-host: choosing a backend for a program (vyre_host_create_for): backends that lack an op, a storage type or, on their device, a capability are passed over; a forced one is not replaced; the errors name every reason. */
#include <check.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "vyre/vyre_host.h"
#include "vyre/vyre_support.h"
#include "vyre/vyre_text.h"

#define FORMAT(buf, size, ...) \
  ck_assert_msg(snprintf((buf), (size), __VA_ARGS__) < (int)(size), "string too long for its buffer")

static char stub_dir[PATH_MAX];

static void setup(void) {
  const char *build = getenv("VYRE_BUILD_DIR");
  if (build && *build)
    FORMAT(stub_dir, sizeof stub_dir, "%s/tests/loader/stubs/.libs", build);
  else
    FORMAT(stub_dir, sizeof stub_dir, "%s", VYRE_STUB_DIR);
  unsetenv("VYRE_BACKEND");
  unsetenv("VYRE_BACKEND_PATH");
  unsetenv("VYRE_BUILD_DIR");
}

/* The search path "A:B" of stub files, "reference" (this build's
 * reference backend, four levels above the stub directory) and "nocr"
 * (tests/conform's reference without correctly_rounded). */
static const char *path_of(const char *a, const char *b) {
  static char out[3 * PATH_MAX];
  char pa[PATH_MAX], pb[PATH_MAX];
  const char *files[2] = {a, b};
  char *dst[2] = {pa, pb};
  for (int k = 0; k < 2; k++) {
    if (!files[k]) dst[k][0] = '\0';
    else if (strcmp(files[k], "reference") == 0)
      FORMAT(dst[k], PATH_MAX, "%s/../../../../host-stub/ref/.libs/libvyre-ref.so", stub_dir);
    else if (strcmp(files[k], "nocr") == 0)
      FORMAT(dst[k], PATH_MAX, "%s/../../../conform/.libs/libconform_nocr.so", stub_dir);
    else FORMAT(dst[k], PATH_MAX, "%s/%s.so", stub_dir, files[k]);
  }
  FORMAT(out, sizeof out, "%s%s%s", pa, pb[0] ? ":" : "", pb);
  return out;
}

static vyre_host *open_host(const char *search_path, const char *forced) {
  vyre_host_options o = {sizeof o, VYRE_HOST_NO_ENV | VYRE_HOST_NO_DEFAULT_DIRS, search_path,
                         forced};
  vyre_host *h = NULL;
  vyre_error err = VYRE_ERROR_INIT;
  ck_assert_msg(vyre_host_open(&o, &h, &err) == VYRE_OK, "open: %s", err.message);
  return h;
}

/* The image of a program in text form (malloc'd). */
static void *image(const char *text, size_t *size) {
  void *bytes = NULL;
  vyre_error err = VYRE_ERROR_INIT;
  ck_assert_msg(vyre_text_assemble(text, strlen(text), "select.vyre", &bytes, size, &err) ==
                    VYRE_OK,
                "the test program assembles: %s", err.message);
  return bytes;
}

#define PROGRAM(op)                                                  \
  "workgroup 4\nbuffer a ro u32 [4]\nbuffer out wo u32 [4]\n"        \
  "%i = gid.x\n%x = load a %i\n%y = " op " %x %x\nstore out %i %y\n"
static const char *const uses_div = PROGRAM("div");
static const char *const uses_mul = PROGRAM("mul");
/* f16 storage: the nodiv stub's registration claims it, its device not. */
static const char *const uses_f16 =
    "workgroup 4\nbuffer h ro f16 [4]\nbuffer out wo u32 [4]\n"
    "%i = gid.x\n%x = load h %i\n%y = mul %x %x\nstore out %i %i\n";

/* vyre_host_create_for on `text`; the chosen backend's id (from its
 * device profile) in id[], or the error in *err. */
static vyre_status create_for(vyre_host *h, const char *text, char id[32], vyre_error *err) {
  size_t size = 0;
  void *bytes = image(text, &size);
  vyre_backend *b = (vyre_backend *)&size; /* must become NULL on failure */
  uint32_t index = UINT32_MAX;
  vyre_status st = vyre_host_create_for(h, bytes, size, NULL, NULL, &b, &index, err);
  free(bytes);
  id[0] = '\0';
  if (st != VYRE_OK) {
    ck_assert_msg(b == NULL, "*out is NULL on failure");
    return st;
  }
  ck_assert_msg(b != NULL, "an instance on success");
  vyre_device_profile p;
  memset(&p, 0, sizeof p);
  p.struct_size = sizeof p;
  ck_assert_msg(b->vt->device_profile(b, &p, NULL) == VYRE_OK, "the instance has a profile");
  snprintf(id, 32, "%s", p.backend_id);
  /* *index names the candidate that made it. */
  vyre_host_candidate c;
  memset(&c, 0, sizeof c);
  c.struct_size = sizeof c;
  ck_assert_msg(vyre_host_backend_info(h, index, &c, NULL) == VYRE_OK && strcmp(c.id, id) == 0,
                "*index %u is the candidate of '%s'", index, id);
  b->vt->destroy(b);
  return st;
}

/* Precedence 1 lacks div: skipped for a program using div, chosen for
 * one without.  vyre_host_create, which ignores the program, takes it. */
START_TEST(test_skips_what_lacks) {
  vyre_host *h = open_host(path_of("libselect_nodiv", "reference"), NULL);
  vyre_error err = VYRE_ERROR_INIT;
  char id[32];
  ck_assert_msg(create_for(h, uses_div, id, &err) == VYRE_OK, "div: %s", err.message);
  ck_assert_msg(strcmp(id, "reference") == 0, "div is the reference's: got '%s'", id);
  ck_assert_msg(create_for(h, uses_mul, id, &err) == VYRE_OK, "mul: %s", err.message);
  ck_assert_msg(strcmp(id, "nodiv") == 0, "without div the precedence-1 stub wins: got '%s'", id);
  uint32_t index = 99;
  ck_assert(vyre_host_select(h, NULL, &index, NULL) == VYRE_OK);
  ck_assert_msg(index == (uint32_t)vyre_host_find(h, "nodiv"),
                "vyre_host_select (no program) still takes precedence 1");
  vyre_host_close(h);
}
END_TEST

/* Nothing covers: UNSUPPORTED naming each candidate and what it lacks. */
START_TEST(test_none_covers) {
  vyre_host *h = open_host(path_of("libselect_nodiv", "libvyre-stub_good"), NULL);
  vyre_error err = VYRE_ERROR_INIT;
  char id[32];
  ck_assert_msg(create_for(h, uses_div, id, &err) == VYRE_UNSUPPORTED, "nothing has div: %s",
                err.message);
  ck_assert_msg(strstr(err.message, "no backend can run this program: nodiv (op div not claimed); "
                                    "stub (op gid not claimed; op div not claimed)") &&
                    strstr(err.message, "Fix: "),
                "each candidate, in selection order, with what it lacks, and a Fix: %s",
                err.message);
  vyre_host_close(h);
}
END_TEST

/* A forced backend that lacks an op fails with the reason; it is never
 * replaced by one that covers the program. */
START_TEST(test_forced_lacks) {
  vyre_host *h = open_host(path_of("libselect_nodiv", "reference"), "nodiv");
  vyre_error err = VYRE_ERROR_INIT;
  char id[32];
  ck_assert_msg(create_for(h, uses_div, id, &err) == VYRE_UNSUPPORTED, "forced nodiv, div: %s",
                err.message);
  ck_assert_msg(strstr(err.message, "backend 'nodiv' (forced by the host options): op div not "
                                    "claimed") &&
                    strstr(err.message, "Fix: "),
                "names the forced backend, why it is forced and what it lacks: %s", err.message);
  ck_assert_msg(create_for(h, uses_mul, id, &err) == VYRE_OK && strcmp(id, "nodiv") == 0,
                "what it covers runs on it: %s", err.message);
  vyre_host_close(h);
  /* The reference forced: the stub's precedence does not matter. */
  h = open_host(path_of("libselect_nodiv", "reference"), "reference");
  ck_assert_msg(create_for(h, uses_mul, id, &err) == VYRE_OK && strcmp(id, "reference") == 0,
                "forced reference: %s", err.message);
  vyre_host_close(h);
  /* Forced but absent: vyre_host_create's message. */
  h = open_host(path_of("libselect_nodiv", NULL), "nothere");
  ck_assert_msg(create_for(h, uses_mul, id, &err) == VYRE_NO_DEVICE &&
                    strstr(err.message, "backend 'nothere' (forced by the host options) not found"),
                "an absent forced id: %s", err.message);
  vyre_host_close(h);
}
END_TEST

/* A transcendental under strict (NULL dispatch options: ulp budget 0)
 * needs correctly_rounded: a backend without it is passed over (forced,
 * it fails naming the capability); under a budget it runs there. */
START_TEST(test_strict_transcendental) {
  static const char *const uses_exp =
      "workgroup 4\nbuffer a ro f32 [4]\nbuffer out wo f32 [4]\n"
      "%i = gid.x\n%x = load a %i\n%y = exp %x\nstore out %i %y\n";
  vyre_host *h = open_host(path_of("nocr", "reference"), "nocr");
  vyre_error err = VYRE_ERROR_INIT;
  char id[32];
  ck_assert_msg(create_for(h, uses_exp, id, &err) == VYRE_UNSUPPORTED &&
                    strstr(err.message, "backend 'nocr' (forced by the host options): capability "
                                        "correctly_rounded not offered"),
                "forced nocr, strict exp: %s", err.message);
  size_t size = 0;
  void *bytes = image(uses_exp, &size);
  vyre_dispatch_options o;
  memset(&o, 0, sizeof o);
  o.struct_size = sizeof o;
  o.ulp_budget = 1;
  vyre_backend *b = NULL;
  ck_assert_msg(vyre_host_create_for(h, bytes, size, &o, NULL, &b, NULL, &err) == VYRE_OK && b,
                "under ulp 1 the forced nocr runs it: %s", err.message);
  b->vt->destroy(b);
  vyre_host_close(h);
  h = open_host(path_of("nocr", "reference"), NULL);
  ck_assert_msg(create_for(h, uses_exp, id, &err) == VYRE_OK && strcmp(id, "reference") == 0,
                "strict exp goes to the reference, which has the bit: %s %s", id, err.message);
  vyre_host_close(h);
  free(bytes);
}
END_TEST

/* A duplicate id stands in as in vyre_host_create: a broken 'reference'
 * (a stub's claims, its factory fails) registered first does not hide
 * the real one, forced or not; the registration checked is the one that
 * made the instance. */
START_TEST(test_duplicate_stands_in) {
  const char *forced[] = {NULL, "reference"};
  for (int k = 0; k < 2; k++) {
    vyre_host *h = open_host(path_of("libhostile_fakeref", "reference"), forced[k]);
    vyre_error err = VYRE_ERROR_INIT;
    char id[32];
    ck_assert_msg(create_for(h, uses_div, id, &err) == VYRE_OK && strcmp(id, "reference") == 0,
                  "%s: the real reference runs div: %s", forced[k] ? "forced" : "chosen",
                  err.message);
    vyre_host_close(h);
  }
}
END_TEST

/* The registration claims f16, the device of the instance does not: the
 * instance is destroyed and the next candidate tried. */
START_TEST(test_device_lacks) {
  vyre_host *h = open_host(path_of("libselect_nodiv", "reference"), NULL);
  vyre_error err = VYRE_ERROR_INIT;
  char id[32];
  ck_assert_msg(create_for(h, uses_f16, id, &err) == VYRE_OK && strcmp(id, "reference") == 0,
                "f16 runs on the reference: '%s' %s", id, err.message);
  vyre_host_close(h);
  h = open_host(path_of("libselect_nodiv", NULL), NULL);
  ck_assert_msg(create_for(h, uses_f16, id, &err) == VYRE_UNSUPPORTED, "only nodiv: %s",
                err.message);
  ck_assert_msg(strstr(err.message, "nodiv (on device 0, stub device: capability f16 not offered)"),
                "names the device and the capability: %s", err.message);
  vyre_host_close(h);
}
END_TEST

/* Only factories failing: their status (NO_DEVICE), not UNSUPPORTED. */
START_TEST(test_only_devices) {
  vyre_host *h = open_host(path_of("libvyre-stub_factory", NULL), NULL);
  vyre_error err = VYRE_ERROR_INIT;
  char id[32];
  const char *text = "workgroup 4\nbuffer a ro u32 [4]\nbuffer out wo u32 [4]\n"
                     "%z = const u32 0\n%x = load a %z\n%y = add %x %x\nstore out %z %y\n";
  ck_assert_msg(create_for(h, text, id, &err) == VYRE_NO_DEVICE, "the factory fails: %s",
                err.message);
  ck_assert_msg(strstr(err.message, "no usable vyre backend: ") &&
                    strstr(err.message, "no stub device here"),
                "the factory's reason: %s", err.message);
  vyre_host_close(h);
  h = open_host(path_of("libvyre-stub_good", NULL), NULL);
  ck_assert_msg(create_for(h, text, id, &err) == VYRE_OK && strcmp(id, "stub") == 0,
                "a program within the good stub's claims: %s", err.message);
  vyre_host_close(h);
}
END_TEST

START_TEST(test_errors) {
  vyre_host *h = open_host(path_of("libselect_nodiv", NULL), NULL);
  vyre_error err = VYRE_ERROR_INIT;
  vyre_backend *b = NULL;
  ck_assert(vyre_host_create_for(h, NULL, 0, NULL, NULL, &b, NULL, &err) == VYRE_INVALID_ARGUMENT);
  ck_assert_msg(strstr(err.message, "program is NULL"), "%s", err.message);
  ck_assert(vyre_host_create_for(NULL, "x", 1, NULL, NULL, &b, NULL, &err) == VYRE_INVALID_ARGUMENT);
  ck_assert(vyre_host_create_for(h, "x", 1, NULL, NULL, NULL, NULL, &err) == VYRE_INVALID_ARGUMENT);
  const char junk[64] = "not a program";
  vyre_status st = vyre_host_create_for(h, junk, sizeof junk, NULL, NULL, &b, NULL, &err);
  ck_assert_msg(st != VYRE_OK && b == NULL &&
                    strncmp(err.message, "vyre_host_create_for: ", 22) == 0,
                "a bad image is the decoder's error: %s", err.message);
  size_t size = 0;
  void *bytes = image(uses_mul, &size);
  vyre_backend_options bo = {0, 0, 0, 0, NULL};
  ck_assert(vyre_host_create_for(h, bytes, size, NULL, &bo, &b, NULL, &err) == VYRE_INVALID_ARGUMENT);
  ck_assert_msg(strstr(err.message, "vyre_backend_options.struct_size is 0"), "%s", err.message);
  vyre_dispatch_options d;
  memset(&d, 0, sizeof d);
  d.struct_size = sizeof d;
  d.fixpoint_iterations = 3;
  ck_assert_msg(vyre_host_create_for(h, bytes, size, &d, NULL, &b, NULL, &err) == VYRE_UNSUPPORTED &&
                    strstr(err.message, "nodiv (capability fixpoint not offered)"),
                "the dispatch options count: %s", err.message);
  /* The dispatch options are checked as a dispatch checks them: flags, a
   * struct_size past the 1.0 layout, the extension chain. */
  d.fixpoint_iterations = 0;
  d.flags = 1;
  ck_assert_msg(vyre_host_create_for(h, bytes, size, &d, NULL, &b, NULL, &err) == VYRE_INVALID_ARGUMENT &&
                    strstr(err.message, "vyre_dispatch_options.flags is 0x1") && strstr(err.message, "Fix:"),
                "dispatch options with a flag are refused: %s", err.message);
  d.flags = 0;
  d.struct_size = 6;
  ck_assert_msg(vyre_host_create_for(h, bytes, size, &d, NULL, &b, NULL, &err) == VYRE_INVALID_ARGUMENT &&
                    strstr(err.message, "vyre_dispatch_options.struct_size is 6"),
                "dispatch options too short for any layout are refused: %s", err.message);
  free(bytes);
  vyre_host_close(h);
}
END_TEST

static Suite *select_suite(void) {
  Suite *s = suite_create("select");
  TCase *core = tcase_create("core");
  tcase_add_checked_fixture(core, setup, NULL);
  tcase_add_test(core, test_skips_what_lacks);
  tcase_add_test(core, test_forced_lacks);
  tcase_add_test(core, test_strict_transcendental);
  tcase_add_test(core, test_device_lacks);
  tcase_add_test(core, test_duplicate_stands_in);
  suite_add_tcase(s, core);
  TCase *errors = tcase_create("errors");
  tcase_add_checked_fixture(errors, setup, NULL);
  tcase_add_test(errors, test_none_covers);
  tcase_add_test(errors, test_only_devices);
  tcase_add_test(errors, test_errors);
  suite_add_tcase(s, errors);
  return s;
}

int main(void) {
  SRunner *sr = srunner_create(select_suite());
  srunner_run_all(sr, CK_NORMAL);
  int failed = srunner_ntests_failed(sr);
  srunner_free(sr);
  return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
