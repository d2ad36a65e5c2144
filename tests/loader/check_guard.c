/* check_guard.c -- libvyre-host's checking instance: what callers pass is checked once, before any plugin code, the same for every backend; handles it did not hand out are refused; destroyed instances and closed hosts are clear errors, not crashes; factory statuses are vyre_status. */
#include <check.h>
#include <dlfcn.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "stubs/guard_plugin.h"
#include "stubs/stub_plugin.h"
#include "vyre/vyre_host.h"
#include "vyre/vyre_program.h"
#include "vyre/vyre_support.h"
#include "vyre/vyre_text.h"

/* ------------------------------------------------------------------ */
/* Fixtures and helpers                                                */
/* ------------------------------------------------------------------ */

static char guard_path[PATH_MAX], ref_path[PATH_MAX];

static void find_plugins(void) {
  const char *dir = VYRE_STUB_DIR;
  ck_assert(snprintf(guard_path, sizeof guard_path, "%s/libhostile_guard.so", dir) <
            (int)sizeof guard_path);
  /* The reference backend of this build tree (tests/loader/stubs/.libs is
   * four levels below its top). */
  ck_assert(snprintf(ref_path, sizeof ref_path, "%s/../../../../host-stub/ref/.libs/libvyre-ref.so",
                     dir) < (int)sizeof ref_path);
}

static vyre_host *open_only(const char *path) {
  vyre_host_options opt = {sizeof opt, VYRE_HOST_NO_ENV | VYRE_HOST_NO_DEFAULT_DIRS, path, NULL};
  vyre_host *host = NULL;
  vyre_error err = VYRE_ERROR_INIT;
  ck_assert_msg(vyre_host_open(&opt, &host, &err) == VYRE_OK, "open %s: %s", path, err.message);
  return host;
}

/* An instance of `id` from the plugin at `path`, and the program whose
 * outputs the trusting plugin's fit. */
typedef struct fixture {
  vyre_host *host;
  vyre_backend *b;
  void *bytes;
  size_t size;
  guard_counters *k; /* the trusting plugin's counters (NULL for the reference) */
} fixture;

static void fixture_open(fixture *f, const char *path, const char *id) {
  memset(f, 0, sizeof *f);
  f->host = open_only(path);
  vyre_error err = VYRE_ERROR_INIT;
  ck_assert_msg(vyre_host_create(f->host, id, NULL, &f->b, NULL, &err) == VYRE_OK, "create %s: %s",
                id, err.message);
  ck_assert_msg(vyre_text_assemble(STUB_EVIL_PROGRAM, strlen(STUB_EVIL_PROGRAM), "guard.vyre",
                                   &f->bytes, &f->size, &err) == VYRE_OK,
                "the test program assembles: %s", err.message);
  void *h = dlopen(path, RTLD_NOW | RTLD_NOLOAD);
  if (h) {
    f->k = dlsym(h, GUARD_COUNTERS_SYMBOL);
    dlclose(h);
  }
}

static void fixture_close(fixture *f) {
  if (f->b) f->b->vt->destroy(f->b);
  free(f->bytes);
  vyre_host_close(f->host);
}

/* Everything written on stderr between capture_start and capture_end. */
typedef struct capture {
  FILE *file;
  int saved;
  char text[2048];
} capture;

static void capture_start(capture *c) {
  fflush(stderr);
  c->file = tmpfile();
  ck_assert(c->file != NULL);
  c->saved = dup(2);
  ck_assert(c->saved >= 0 && dup2(fileno(c->file), 2) >= 0);
}

static const char *capture_end(capture *c) {
  fflush(stderr);
  ck_assert(dup2(c->saved, 2) >= 0);
  close(c->saved);
  rewind(c->file);
  size_t n = fread(c->text, 1, sizeof c->text - 1, c->file);
  c->text[n] = '\0';
  fclose(c->file);
  return c->text;
}

#define EXPECT_REFUSED(call, status, want, err)                                                  \
  do {                                                                                          \
    vyre_status st_ = (call);                                                                   \
    ck_assert_msg(st_ == (status), "%s: %s expected, got %s (%s)", #call,                        \
                  vyre_status_name(status), vyre_status_name(st_), (err).message);              \
    ck_assert_msg(strstr((err).message, want) != NULL, "%s: \"%s\" expected in \"%s\"", #call,  \
                  want, (err).message);                                                         \
    ck_assert_msg(strstr((err).message, "Fix: ") != NULL, "%s: a Fix in \"%s\"", #call,          \
                  (err).message);                                                               \
  } while (0)

/* ------------------------------------------------------------------ */
/* What callers pass: checked once, before the plugin                  */
/* ------------------------------------------------------------------ */

typedef struct ref_case {
  uint32_t struct_size, flags;
  int with_bytes;
  uint64_t size, pipeline;
  vyre_status status;
  const char *message;
} ref_case;

static const ref_case ref_cases[] = {
    {0x5a3b2c10u, 0, 1, 0, 0, VYRE_INVALID_ARGUMENT,
     "dispatch: struct_size 0x5a3b2c10 (1513827344) is not a vyre_program_ref: built against the "
     "0.1 draft, whose vyre_program_ref began with the bytes pointer? Fix: rebuild"},
    {70000, 0, 1, 0, 0, VYRE_INVALID_ARGUMENT, "struct_size 0x00011170 (70000) is not a vyre_program_ref"},
    {0xffffffffu, 0, 1, 0, 0, VYRE_INVALID_ARGUMENT, "is not a vyre_program_ref: built against the 0.1 draft"},
    {0, 0, 1, 0, 0, VYRE_INVALID_ARGUMENT, "dispatch: vyre_program_ref.struct_size is 0 (not initialised, or a caller built against the 0.1 draft"},
    {8, 0, 1, 0, 0, VYRE_INVALID_ARGUMENT, "dispatch: vyre_program_ref.struct_size is 8, at least 32 expected"},
    {32, 1, 1, 0, 0, VYRE_INVALID_ARGUMENT, "dispatch: vyre_program_ref.flags is 0x1; no flags are defined"},
    {32, 0, 0, 5, 0, VYRE_INVALID_ARGUMENT, "dispatch: vyre_program_ref.bytes is NULL with size 5"},
    {32, 0, 0, 0, 0, VYRE_INVALID_ARGUMENT, "dispatch: vyre_program_ref has neither bytes nor a pipeline"},
    {32, 0, 0, 0, 77, VYRE_INVALID_HANDLE, "dispatch: pipeline 0x000000000000004d was not handed out by this instance of backend"},
};

/* Finding 4: every backend gives the same answer, and the plugin never
 * runs: the trusting plugin would have accepted each of these. */
START_TEST(test_program_ref_checked) {
  const ref_case *c = &ref_cases[_i];
  fixture g, r;
  fixture_open(&g, guard_path, "guarded");
  fixture_open(&r, ref_path, "reference");
  vyre_program_ref ref = {c->struct_size, c->flags, c->with_bytes ? g.bytes : NULL,
                          c->with_bytes ? g.size : c->size, c->pipeline};
  vyre_error eg = VYRE_ERROR_INIT, er = VYRE_ERROR_INIT;
  vyre_outputs *out = NULL;
  int calls = g.k->calls;
  EXPECT_REFUSED(g.b->vt->dispatch(g.b, &ref, NULL, 0, NULL, &out, NULL, &eg), c->status,
                 c->message, eg);
  ck_assert_msg(g.k->calls == calls, "the plugin was not called (case %d)", _i);
  EXPECT_REFUSED(r.b->vt->dispatch(r.b, &ref, NULL, 0, NULL, &out, NULL, &er), c->status,
                 c->message, er);
  if (c->status == VYRE_INVALID_ARGUMENT)
    ck_assert_msg(strcmp(eg.message, er.message) == 0,
                  "the same misuse reads the same on both backends:\n  %s\n  %s", eg.message,
                  er.message);
  vyre_pending p = 0;
  EXPECT_REFUSED(g.b->vt->dispatch_async(g.b, &ref, NULL, 0, NULL, &p, &eg), c->status, "", eg);
  vyre_resident none = 0;
  EXPECT_REFUSED(g.b->vt->dispatch_resident(g.b, &ref, &none, 0, NULL, NULL, &eg), c->status,
                 "dispatch_resident: ", eg);
  ck_assert_msg(g.k->calls == calls, "no plugin code ran for case %d", _i);
  fixture_close(&g);
  fixture_close(&r);
}
END_TEST

/* A caller built against the 0.1 draft: its program_ref was {bytes, size,
 * pipeline}, 24 bytes.  The struct is allocated exactly, so valgrind (make
 * check-valgrind) sees any read past it. */
START_TEST(test_draft_caller) {
  fixture g;
  fixture_open(&g, guard_path, "guarded");
  typedef struct draft_ref {
    const void *bytes;
    uint64_t size;
    uint64_t pipeline;
  } draft_ref;
  int calls = g.k->calls;
  draft_ref *d = malloc(sizeof *d);
  ck_assert(d != NULL);
  d->bytes = g.bytes;
  d->size = g.size;
  d->pipeline = 0;
  vyre_error err = VYRE_ERROR_INIT;
  vyre_outputs *out = NULL;
  EXPECT_REFUSED(g.b->vt->dispatch(g.b, (const vyre_program_ref *)d, NULL, 0, NULL, &out, NULL,
                                   &err),
                 VYRE_INVALID_ARGUMENT, "0.1 draft", err);
  d->bytes = NULL; /* a draft caller passing a pipeline */
  d->pipeline = 1;
  EXPECT_REFUSED(g.b->vt->dispatch(g.b, (const vyre_program_ref *)d, NULL, 0, NULL, &out, NULL,
                                   &err),
                 VYRE_INVALID_ARGUMENT, "struct_size is 0 (not initialised, or a caller built "
                                        "against the 0.1 draft", err);
  ck_assert_int_eq(g.k->calls, calls);
  free(d);
  fixture_close(&g);
}
END_TEST

typedef struct plain_ext {
  vyre_ext head;
  uint64_t payload;
} plain_ext;

/* Options and their chains (finding 4, issue 24 finding 16). */
START_TEST(test_options_checked) {
  fixture g, r;
  fixture_open(&g, guard_path, "guarded");
  fixture_open(&r, ref_path, "reference");
  vyre_program_ref ref = VYRE_PROGRAM_BYTES(g.bytes, g.size);
  vyre_error err = VYRE_ERROR_INIT, er = VYRE_ERROR_INIT;
  vyre_outputs *out = NULL;
  vyre_dispatch_options o;
  int calls = g.k->calls;
  uint32_t sizes[] = {0, 4, 70000, 0xffffffffu};
  for (unsigned i = 0; i < 4; i++) {
    memset(&o, 0, sizeof o);
    o.struct_size = sizes[i];
    EXPECT_REFUSED(g.b->vt->dispatch(g.b, &ref, NULL, 0, &o, &out, NULL, &err),
                   VYRE_INVALID_ARGUMENT, "dispatch: vyre_dispatch_options.struct_size is", err);
    ck_assert_msg(strstr(err.message, "8 to 65536 expected"), "%s", err.message);
  }
  memset(&o, 0, sizeof o);
  o.struct_size = sizeof o;
  o.flags = 2;
  EXPECT_REFUSED(g.b->vt->dispatch(g.b, &ref, NULL, 0, &o, &out, NULL, &err),
                 VYRE_INVALID_ARGUMENT, "vyre_dispatch_options.flags is 0x2", err);
  o.flags = 0;
  /* Chains. */
  plain_ext x[70];
  memset(x, 0, sizeof x);
  for (unsigned i = 0; i < 70; i++) {
    x[i].head.struct_size = sizeof x[i];
    x[i].head.type = 0x54540000u + i; /* types nobody knows: skipped by plugins */
    x[i].head.next = i + 1 < 70 ? &x[i + 1].head : NULL;
  }
  o.next = &x[0].head;
  EXPECT_REFUSED(g.b->vt->dispatch(g.b, &ref, NULL, 0, &o, &out, NULL, &err),
                 VYRE_INVALID_ARGUMENT, "the options' extension chain has more than 64 entries",
                 err);
  x[0].head.next = NULL;
  x[0].head.type = 0;
  EXPECT_REFUSED(g.b->vt->dispatch(g.b, &ref, NULL, 0, &o, &out, NULL, &err),
                 VYRE_INVALID_ARGUMENT, "extension chain entry 0 has type 0", err);
  x[0].head.type = 0x54540000u;
  uint32_t bad[] = {8, 70000, 0xffffffffu};
  for (unsigned i = 0; i < 3; i++) {
    x[0].head.struct_size = bad[i];
    EXPECT_REFUSED(g.b->vt->dispatch(g.b, &ref, NULL, 0, &o, &out, NULL, &err),
                   VYRE_INVALID_ARGUMENT, "extension chain entry 0 has struct_size", err);
  }
  x[0].head.struct_size = sizeof x[0];
  /* A vyre_limits that points to itself is a cycle, not "two entries";
   * so is a longer loop. */
  vyre_limits lim;
  memset(&lim, 0, sizeof lim);
  lim.head.struct_size = sizeof lim;
  lim.head.type = VYRE_EXT_LIMITS;
  lim.head.next = &lim.head;
  o.next = &lim.head;
  const char *self_cycle = "dispatch: the options' extension chain is a cycle: entry 0's next "
                           "points back to entry 0. Fix: end the chain with next = NULL";
  EXPECT_REFUSED(g.b->vt->dispatch(g.b, &ref, NULL, 0, &o, &out, NULL, &err),
                 VYRE_INVALID_ARGUMENT, self_cycle, err);
  EXPECT_REFUSED(r.b->vt->dispatch(r.b, &ref, NULL, 0, &o, &out, NULL, &er),
                 VYRE_INVALID_ARGUMENT, self_cycle, er);
  x[0].head.next = &x[1].head;
  x[1].head.next = &x[2].head;
  x[2].head.next = &x[1].head;
  o.next = &x[0].head;
  EXPECT_REFUSED(g.b->vt->dispatch(g.b, &ref, NULL, 0, &o, &out, NULL, &err),
                 VYRE_INVALID_ARGUMENT, "is a cycle: entry 2's next points back to entry 1", err);
  /* The same checks guard every entry that takes options. */
  vyre_pipeline pl = 0;
  EXPECT_REFUSED(g.b->vt->pipeline_create(g.b, g.bytes, g.size, &o, &pl, &err),
                 VYRE_INVALID_ARGUMENT, "pipeline_create: the options' extension chain is a cycle",
                 err);
  vyre_output_slot slot = {NULL, 0, 0};
  EXPECT_REFUSED(g.b->vt->dispatch_into(g.b, &ref, NULL, 0, &o, &slot, 1, NULL, &err),
                 VYRE_INVALID_ARGUMENT, "dispatch_into: the options' extension chain is a cycle",
                 err);
  ck_assert_int_eq(g.k->calls, calls);
  fixture_close(&g);
  fixture_close(&r);
}
END_TEST

/* Arrays and the pointers in them. */
START_TEST(test_arrays_checked) {
  fixture g;
  fixture_open(&g, guard_path, "guarded");
  vyre_program_ref ref = VYRE_PROGRAM_BYTES(g.bytes, g.size);
  vyre_error err = VYRE_ERROR_INIT;
  vyre_outputs *out = NULL;
  int calls = g.k->calls;
  EXPECT_REFUSED(g.b->vt->dispatch(g.b, &ref, NULL, 1, NULL, &out, NULL, &err),
                 VYRE_INVALID_ARGUMENT, "dispatch: inputs is NULL with a count of 1", err);
  vyre_input in = {NULL, 8};
  EXPECT_REFUSED(g.b->vt->dispatch(g.b, &ref, &in, 1, NULL, &out, NULL, &err),
                 VYRE_INVALID_ARGUMENT, "dispatch: input 0 has 8 bytes but its data is NULL", err);
  EXPECT_REFUSED(g.b->vt->dispatch(g.b, &ref, &in, 65, NULL, &out, NULL, &err),
                 VYRE_INVALID_ARGUMENT, "dispatch: 65 inputs given; a program has at most 64", err);
  EXPECT_REFUSED(g.b->vt->dispatch_into(g.b, &ref, NULL, 0, NULL, NULL, 1, NULL, &err),
                 VYRE_INVALID_ARGUMENT, "dispatch_into: output slots is NULL with a count of 1",
                 err);
  vyre_output_slot slot = {NULL, 16, 0};
  EXPECT_REFUSED(g.b->vt->dispatch_into(g.b, &ref, NULL, 0, NULL, &slot, 1, NULL, &err),
                 VYRE_INVALID_ARGUMENT, "output slot 0 has capacity 16 but its data is NULL", err);
  EXPECT_REFUSED(g.b->vt->dispatch_resident(g.b, &ref, NULL, 1, NULL, NULL, &err),
                 VYRE_INVALID_ARGUMENT, "dispatch_resident: resident buffers is NULL", err);
  EXPECT_REFUSED(g.b->vt->dispatch_sequence(g.b, NULL, 2, 1, NULL, 0, NULL, &err),
                 VYRE_INVALID_ARGUMENT, "dispatch_sequence: steps is NULL with a count of 2", err);
  vyre_resident buf = 0;
  ck_assert(g.b->vt->resident_alloc(g.b, 16, &buf, &err) == VYRE_OK);
  vyre_sequence_step step = {sizeof step, 1, &ref, &buf, NULL};
  step.struct_size = 4;
  EXPECT_REFUSED(g.b->vt->dispatch_sequence(g.b, &step, 1, 1, NULL, 0, NULL, &err),
                 VYRE_INVALID_ARGUMENT, "steps[0].struct_size 4 is not 32", err);
  step.struct_size = sizeof step;
  vyre_program_ref bad = ref;
  bad.flags = 4;
  step.program = &bad;
  EXPECT_REFUSED(g.b->vt->dispatch_sequence(g.b, &step, 1, 1, NULL, 0, NULL, &err),
                 VYRE_INVALID_ARGUMENT, "dispatch_sequence step 0: vyre_program_ref.flags is 0x4",
                 err);
  step.program = &ref;
  vyre_resident_copy read = {buf, 0, NULL, 16};
  EXPECT_REFUSED(g.b->vt->dispatch_sequence(g.b, &step, 1, 1, &read, 1, NULL, &err),
                 VYRE_INVALID_ARGUMENT, "copy 0 has 16 bytes but its host pointer is NULL", err);
  EXPECT_REFUSED(g.b->vt->resident_upload(g.b, buf, NULL, 16, &err), VYRE_INVALID_ARGUMENT,
                 "resident_upload: data is NULL with 16 bytes", err);
  EXPECT_REFUSED(g.b->vt->resident_download_range(g.b, buf, 0, NULL, 4, &err),
                 VYRE_INVALID_ARGUMENT, "resident_download_range: dst is NULL with 4 bytes", err);
  EXPECT_REFUSED(g.b->vt->pipeline_create(g.b, NULL, 0, NULL, &(vyre_pipeline){0}, &err),
                 VYRE_INVALID_ARGUMENT, "pipeline_create: program_bytes is NULL", err);
  EXPECT_REFUSED(g.b->vt->metrics(g.b, NULL, 4, &(uint32_t){0}, &err), VYRE_INVALID_ARGUMENT,
                 "metrics: out is NULL with capacity 4", err);
  ck_assert_int_eq(g.k->calls, calls + 1); /* resident_alloc only */
  /* Well-formed, the same calls reach the plugin. */
  unsigned char host[16];
  read.host = host;
  ck_assert(g.b->vt->dispatch_sequence(g.b, &step, 1, 1, &read, 1, NULL, &err) == VYRE_OK);
  ck_assert_int_eq(g.k->calls, calls + 2);
  fixture_close(&g);
}
END_TEST

/* vyre_backend_options and its chain, before any factory (24.16). */
START_TEST(test_backend_options_checked) {
  vyre_host *host = open_only(guard_path);
  guard_counters *k = dlsym(dlopen(guard_path, RTLD_NOW | RTLD_NOLOAD), GUARD_COUNTERS_SYMBOL);
  ck_assert(k != NULL);
  vyre_backend *b = NULL;
  vyre_error err = VYRE_ERROR_INIT;
  int created = k->create;
  vyre_backend_options bo;
  memset(&bo, 0, sizeof bo);
  bo.struct_size = 8;
  EXPECT_REFUSED(vyre_host_create(host, "guarded", &bo, &b, NULL, &err), VYRE_INVALID_ARGUMENT,
                 "vyre_host_create: vyre_backend_options.struct_size is 8, 12 to 65536 expected",
                 err);
  bo.struct_size = 70000;
  EXPECT_REFUSED(vyre_host_create(host, NULL, &bo, &b, NULL, &err), VYRE_INVALID_ARGUMENT,
                 "struct_size is 70000", err);
  bo.struct_size = sizeof bo;
  bo.flags = 1;
  EXPECT_REFUSED(vyre_host_create(host, "guarded", &bo, &b, NULL, &err), VYRE_INVALID_ARGUMENT,
                 "vyre_backend_options.flags is 0x1", err);
  bo.flags = 0;
  plain_ext x;
  memset(&x, 0, sizeof x);
  x.head.struct_size = sizeof x;
  x.head.type = STUB_EXT_TYPE;
  x.head.next = &x.head;
  bo.next = &x.head;
  EXPECT_REFUSED(vyre_host_create(host, "guarded", &bo, &b, NULL, &err), VYRE_INVALID_ARGUMENT,
                 "vyre_host_create: the backend options' extension chain is a cycle: entry 0's "
                 "next points back to entry 0",
                 err);
  x.head.next = NULL;
  x.head.struct_size = 8;
  EXPECT_REFUSED(vyre_host_create(host, "guarded", &bo, &b, NULL, &err), VYRE_INVALID_ARGUMENT,
                 "extension chain entry 0 has struct_size 8, less than its 16-byte head", err);
  x.head.struct_size = sizeof x;
  x.head.type = 0;
  EXPECT_REFUSED(vyre_host_create(host, "guarded", &bo, &b, NULL, &err), VYRE_INVALID_ARGUMENT,
                 "has type 0", err);
  ck_assert_msg(k->create == created && b == NULL, "no factory saw the options");
  x.head.type = STUB_EXT_TYPE;
  ck_assert_msg(vyre_host_create(host, "guarded", &bo, &b, NULL, &err) == VYRE_OK, "%s",
                err.message);
  ck_assert_int_eq(k->create, created + 1);
  b->vt->destroy(b);
  vyre_host_close(host);
}
END_TEST

/* ------------------------------------------------------------------ */
/* Factory statuses (finding 9, issue 24 finding 13)                   */
/* ------------------------------------------------------------------ */

static const char *const factory_statuses[] = {"999", "12345", "-5"};

START_TEST(test_factory_status_not_vyre_status) {
  const char *raw = factory_statuses[_i];
  setenv(GUARD_FACTORY_STATUS_ENV, raw, 1);
  vyre_host *host = open_only(guard_path);
  vyre_backend *b = NULL;
  vyre_error err = VYRE_ERROR_INIT;
  vyre_status st = vyre_host_create(host, "guarded", NULL, &b, NULL, &err);
  ck_assert_msg(st == VYRE_INTERNAL, "status %s becomes VYRE_INTERNAL, got %s: %s", raw,
                vyre_status_name(st), err.message);
  char want[64];
  snprintf(want, sizeof want, "factory returned %s (0x", raw);
  ck_assert_msg(strstr(err.message, want) && strstr(err.message, "which is no vyre_status") &&
                    strstr(err.message, guard_path) && strstr(err.message, "Fix:"),
                "the message names the raw value and the plugin: %s", err.message);
  ck_assert(b == NULL);
  vyre_host_close(host);
  unsetenv(GUARD_FACTORY_STATUS_ENV);
}
END_TEST

/* ------------------------------------------------------------------ */
/* Handles (finding 10)                                                */
/* ------------------------------------------------------------------ */

/* The trusting plugin makes the same numbers in every instance (a 16-bit
 * salt's worst case): only the guard tells them apart. */
START_TEST(test_foreign_and_stale_handles) {
  fixture a, b;
  fixture_open(&a, guard_path, "guarded");
  fixture_open(&b, guard_path, "guarded");
  vyre_error err = VYRE_ERROR_INIT;
  vyre_resident h = 0;
  ck_assert(a.b->vt->resident_alloc(a.b, 16, &h, &err) == VYRE_OK && h == 1);
  int calls = a.k->calls;
  uint64_t size = 0;
  EXPECT_REFUSED(b.b->vt->resident_size(b.b, h, &size, &err), VYRE_INVALID_HANDLE,
                 "resident_size: resident buffer 0x0000000000000001 was not handed out by this "
                 "instance of backend 'guarded', or was already released. Fix:",
                 err);
  vyre_program_ref ref = VYRE_PROGRAM_BYTES(a.bytes, a.size);
  EXPECT_REFUSED(b.b->vt->dispatch_resident(b.b, &ref, &h, 1, NULL, NULL, &err),
                 VYRE_INVALID_HANDLE, "dispatch_resident: resident buffer 0x0000000000000001", err);
  vyre_indirect ind = {{sizeof ind, VYRE_EXT_INDIRECT, NULL}, h, 0};
  vyre_dispatch_options o;
  memset(&o, 0, sizeof o);
  o.struct_size = sizeof o;
  o.next = &ind.head;
  vyre_resident own = 0;
  ck_assert(b.b->vt->resident_alloc(b.b, 16, &own, &err) == VYRE_OK && own == 1);
  ind.buffer = 2; /* one b never handed out */
  EXPECT_REFUSED(b.b->vt->dispatch_resident(b.b, &ref, &own, 1, &o, NULL, &err),
                 VYRE_INVALID_HANDLE, "resident buffer 0x0000000000000002", err);
  ck_assert_msg(a.k->calls == calls + 1, "only b's own alloc reached the plugin");
  /* Released: refused, whatever the plugin would say. */
  ck_assert(a.b->vt->resident_free(a.b, h, &err) == VYRE_OK);
  EXPECT_REFUSED(a.b->vt->resident_free(a.b, h, &err), VYRE_INVALID_HANDLE,
                 "or was already released", err);
  /* Kinds are apart: a buffer is no pipeline. */
  vyre_program_ref by_own = VYRE_PROGRAM_PIPELINE(own);
  vyre_outputs *out = NULL;
  EXPECT_REFUSED(b.b->vt->dispatch(b.b, &by_own, NULL, 0, NULL, &out, NULL, &err),
                 VYRE_INVALID_HANDLE, "dispatch: pipeline 0x0000000000000001", err);
  vyre_pipeline pl = 0;
  ck_assert(a.b->vt->pipeline_create(a.b, a.bytes, a.size, NULL, &pl, &err) == VYRE_OK);
  vyre_program_ref by_pl = VYRE_PROGRAM_PIPELINE(pl);
  ck_assert(a.b->vt->dispatch(a.b, &by_pl, NULL, 0, NULL, &out, NULL, &err) == VYRE_OK);
  a.b->vt->outputs_free(a.b, out);
  EXPECT_REFUSED(b.b->vt->pipeline_release(b.b, pl, &err), VYRE_INVALID_HANDLE,
                 "pipeline_release: pipeline", err);
  ck_assert(a.b->vt->pipeline_release(a.b, pl, &err) == VYRE_OK);
  EXPECT_REFUSED(a.b->vt->dispatch(a.b, &by_pl, NULL, 0, NULL, &out, NULL, &err),
                 VYRE_INVALID_HANDLE, "or was already released", err);
  /* Pending dispatches: another instance's, and one already waited for. */
  vyre_pending p = 0;
  ck_assert(a.b->vt->dispatch_async(a.b, &ref, NULL, 0, NULL, &p, &err) == VYRE_OK);
  int ready = 0;
  EXPECT_REFUSED(b.b->vt->pending_poll(b.b, p, &ready, &err), VYRE_INVALID_HANDLE,
                 "pending_poll: pending dispatch", err);
  ck_assert(a.b->vt->pending_wait(a.b, p, &out, NULL, &err) == VYRE_OK);
  a.b->vt->outputs_free(a.b, out);
  EXPECT_REFUSED(a.b->vt->pending_wait(a.b, p, &out, NULL, &err), VYRE_INVALID_HANDLE,
                 "pending_wait: pending dispatch", err);
  EXPECT_REFUSED(a.b->vt->pending_release(a.b, p, &err), VYRE_INVALID_HANDLE,
                 "pending_release: pending dispatch", err);
  fixture_close(&a);
  fixture_close(&b);
}
END_TEST

/* Handles an extension makes (through the native instance, out of the
 * host's sight) are the plugin's to judge once the instance has served a
 * table that may make them; before that, unknown handles are refused. */
START_TEST(test_extension_handles) {
  fixture g;
  fixture_open(&g, guard_path, "guarded");
  vyre_error err = VYRE_ERROR_INIT;
  uint64_t size = 0;
  EXPECT_REFUSED(g.b->vt->resident_size(g.b, 1, &size, &err), VYRE_INVALID_HANDLE,
                 "was not handed out by this instance", err);
  const guard_import_ext *ext = NULL;
  ck_assert(g.b->vt->get_extension(g.b, GUARD_IMPORT_NAME, 1, (const void **)&ext, &err) ==
            VYRE_OK);
  vyre_resident h = 0;
  ck_assert(ext->import(vyre_host_backend_native(g.b), &h, &err) == VYRE_OK && h == 1);
  int calls = g.k->calls;
  ck_assert_msg(g.b->vt->resident_size(g.b, h, &size, &err) == VYRE_OK && size == 16, "%s",
                err.message);
  vyre_program_ref ref = VYRE_PROGRAM_BYTES(g.bytes, g.size);
  ck_assert(g.b->vt->dispatch_resident(g.b, &ref, &h, 1, NULL, NULL, &err) == VYRE_OK);
  ck_assert(g.b->vt->resident_free(g.b, h, &err) == VYRE_OK);
  ck_assert_int_eq(g.k->calls, calls + 3);
  fixture_close(&g);
}
END_TEST

/* A pipeline whose program this host cannot decode (a newer plugin's, or
 * the guard out of memory) goes unchecked, like the bytes path: its first
 * dispatch dereferenced NULL (issue 24, finding 1). */
START_TEST(test_undecodable_pipeline) {
  fixture g;
  fixture_open(&g, guard_path, "guarded");
  static const char garbage[] = "not a vyre program";
  vyre_error err = VYRE_ERROR_INIT;
  vyre_pipeline pl = 0;
  ck_assert(g.b->vt->pipeline_create(g.b, garbage, sizeof garbage, NULL, &pl, &err) == VYRE_OK);
  vyre_program_ref ref = VYRE_PROGRAM_PIPELINE(pl);
  vyre_outputs *out = NULL;
  for (int i = 0; i < 2; i++) {
    ck_assert_msg(g.b->vt->dispatch(g.b, &ref, NULL, 0, NULL, &out, NULL, &err) == VYRE_OK, "%s",
                  err.message);
    g.b->vt->outputs_free(g.b, out);
  }
  vyre_pending p = 0;
  ck_assert(g.b->vt->dispatch_async(g.b, &ref, NULL, 0, NULL, &p, &err) == VYRE_OK);
  ck_assert(g.b->vt->pending_wait(g.b, p, &out, NULL, &err) == VYRE_OK);
  g.b->vt->outputs_free(g.b, out);
  fixture_close(&g);
}
END_TEST

/* Many handles in and out: the set stays exact (deletion in the open
 * addressing table moves entries; none may be lost). */
START_TEST(test_handle_churn) {
  fixture g;
  fixture_open(&g, guard_path, "guarded");
  enum { N = 3000 };
  vyre_resident *h = calloc(N, sizeof *h);
  ck_assert(h != NULL);
  vyre_error err = VYRE_ERROR_INIT;
  for (unsigned i = 0; i < N; i++) ck_assert(g.b->vt->resident_alloc(g.b, 4, &h[i], &err) == VYRE_OK);
  for (unsigned i = 0; i < N; i++) /* free two in three, in a scrambled order */
    if (((i * 7919u) % N) % 3) ck_assert(g.b->vt->resident_free(g.b, h[(i * 7919u) % N], &err) == VYRE_OK);
  uint64_t size = 0;
  for (unsigned i = 0; i < N; i++) {
    vyre_status st = g.b->vt->resident_size(g.b, h[i], &size, &err);
    ck_assert_msg(st == (i % 3 ? VYRE_INVALID_HANDLE : VYRE_OK), "handle %u: %s", i,
                  vyre_status_name(st));
  }
  free(h);
  fixture_close(&g);
}
END_TEST

/* ------------------------------------------------------------------ */
/* Lifetimes: poisoned, quarantined, never a crash (finding 10)        */
/* ------------------------------------------------------------------ */

START_TEST(test_double_destroy) {
  fixture g;
  fixture_open(&g, guard_path, "guarded");
  vyre_backend *b = g.b;
  int destroyed = g.k->destroy;
  b->vt->destroy(b);
  capture c;
  capture_start(&c);
  b->vt->destroy(b);
  const char *said = capture_end(&c);
  ck_assert_msg(strstr(said, "vyre-host: destroy: backend 'guarded' (instance ") &&
                    strstr(said, ") was already destroyed; ignored. Fix: destroy each instance "
                                 "once\n"),
                "one clear line: %s", said);
  ck_assert_int_eq(g.k->destroy, destroyed + 1);
  vyre_error err = VYRE_ERROR_INIT;
  vyre_program_ref ref = VYRE_PROGRAM_BYTES(g.bytes, g.size);
  vyre_outputs *out = NULL;
  EXPECT_REFUSED(b->vt->dispatch(b, &ref, NULL, 0, NULL, &out, NULL, &err), VYRE_INVALID_ARGUMENT,
                 "dispatch: backend 'guarded' (instance ", err);
  ck_assert_msg(strstr(err.message, ") was destroyed"), "%s", err.message);
  ck_assert_msg(vyre_host_backend_native(b) == NULL, "a destroyed instance has no native one");
  g.b = NULL;
  fixture_close(&g);
}
END_TEST

START_TEST(test_double_close) {
  vyre_host *host = open_only(guard_path);
  vyre_backend *b = NULL;
  vyre_error err = VYRE_ERROR_INIT;
  ck_assert(vyre_host_create(host, "guarded", NULL, &b, NULL, &err) == VYRE_OK);
  vyre_host_close(host);
  capture c;
  capture_start(&c);
  vyre_host_close(host);
  const char *said = capture_end(&c);
  ck_assert_msg(strstr(said, "vyre-host: vyre_host_close: host ") &&
                    strstr(said, " was already closed; ignored. Fix: close each host once\n"),
                "one clear line: %s", said);
  vyre_backend *b2 = NULL;
  EXPECT_REFUSED(vyre_host_create(host, NULL, NULL, &b2, NULL, &err), VYRE_INVALID_ARGUMENT,
                 "vyre_host_create: the host was closed. Fix:", err);
  /* An instance outlives its host (docs/abi.md section 9). */
  uint32_t n = 0;
  ck_assert(b->vt->metrics(b, NULL, 0, &n, &err) == VYRE_OK && n == 1);
  b->vt->destroy(b);
}
END_TEST

START_TEST(test_outputs_free_misuse) {
  fixture a, b;
  fixture_open(&a, guard_path, "guarded");
  fixture_open(&b, guard_path, "guarded");
  vyre_program_ref ref = VYRE_PROGRAM_BYTES(a.bytes, a.size);
  vyre_error err = VYRE_ERROR_INIT;
  vyre_outputs *out = NULL, *kept = NULL;
  int freed = a.k->outputs_freed;
  ck_assert(a.b->vt->dispatch(a.b, &ref, NULL, 0, NULL, &out, NULL, &err) == VYRE_OK);
  capture c;
  /* Through another instance: refused, not freed. */
  capture_start(&c);
  b.b->vt->outputs_free(b.b, out);
  const char *said = capture_end(&c);
  ck_assert_msg(strstr(said, "are not outputs backend 'guarded' returned, or were already freed; "
                             "ignored. Fix:"),
                "%s", said);
  ck_assert_int_eq(a.k->outputs_freed, freed);
  /* Twice: the second is refused (the plugin would free twice). */
  a.b->vt->outputs_free(a.b, out);
  capture_start(&c);
  a.b->vt->outputs_free(a.b, out);
  said = capture_end(&c);
  ck_assert_msg(strstr(said, "or were already freed"), "%s", said);
  ck_assert_int_eq(a.k->outputs_freed, freed + 1);
  /* After destroy: destroy freed them; outputs_free says so. */
  ck_assert(a.b->vt->dispatch(a.b, &ref, NULL, 0, NULL, &kept, NULL, &err) == VYRE_OK);
  vyre_backend *dead = a.b;
  dead->vt->destroy(dead);
  a.b = NULL;
  ck_assert_msg(a.k->outputs_freed == freed + 2, "destroy freed the outputs still held");
  capture_start(&c);
  dead->vt->outputs_free(dead, kept);
  said = capture_end(&c);
  ck_assert_msg(strstr(said, "outputs_free: backend 'guarded' (instance ") &&
                    strstr(said, "was destroyed, and its destroy freed the outputs it had "
                                 "returned;") &&
                    strstr(said, "Fix: free outputs before destroying their instance\n"),
                "%s", said);
  ck_assert_int_eq(a.k->outputs_freed, freed + 2);
  fixture_close(&a);
  fixture_close(&b);
}
END_TEST

/* ------------------------------------------------------------------ */
/* The reference backend's timeout message (issue 24 finding 16)       */
/* ------------------------------------------------------------------ */

static const char loop_forever[] =
    "workgroup 1\nbuffer o wo u32 [1]\n%zero = const u32 0\n%one = const u32 1\n"
    "%end = const u32 4294967295\nlet acc %one\nloop k %zero %end\n  %a = get acc\n"
    "  %t = const u32 3\n  %m = mul %a %t\n  %kv = get k\n  %s = add %m %kv\n  assign acc %s\n"
    "end\n%r = get acc\nstore o %zero %r\n";

START_TEST(test_timeout_message_truthful) {
  vyre_host *host = open_only(ref_path);
  vyre_backend *b = NULL;
  vyre_error err = VYRE_ERROR_INIT;
  ck_assert_msg(vyre_host_create(host, "reference", NULL, &b, NULL, &err) == VYRE_OK, "%s",
                err.message);
  void *bytes = NULL;
  size_t size = 0;
  ck_assert_msg(vyre_text_assemble(loop_forever, strlen(loop_forever), "loop.vyre", &bytes, &size,
                                   &err) == VYRE_OK,
                "%s", err.message);
  vyre_limits lim = {{sizeof lim, VYRE_EXT_LIMITS, NULL}, 1, 0};
  vyre_dispatch_options o;
  memset(&o, 0, sizeof o);
  o.struct_size = sizeof o;
  o.next = &lim.head;
  vyre_program_ref ref = VYRE_PROGRAM_BYTES(bytes, size);
  vyre_outputs *out = NULL;
  EXPECT_REFUSED(b->vt->dispatch(b, &ref, NULL, 0, &o, &out, NULL, &err), VYRE_LIMIT,
                 "the program was still running 1 ns after the call began", err);
  ck_assert_msg(!strstr(err.message, "0.000 s"), "%s", err.message);
  b->vt->destroy(b);
  free(bytes);
  vyre_host_close(host);
}
END_TEST

static Suite *guard_suite(void) {
  Suite *s = suite_create("guard");
  TCase *tc = tcase_create("args");
  tcase_add_unchecked_fixture(tc, find_plugins, NULL);
  tcase_add_loop_test(tc, test_program_ref_checked, 0, (int)(sizeof ref_cases / sizeof ref_cases[0]));
  tcase_add_test(tc, test_draft_caller);
  tcase_add_test(tc, test_options_checked);
  tcase_add_test(tc, test_arrays_checked);
  tcase_add_test(tc, test_backend_options_checked);
  tcase_add_test(tc, test_timeout_message_truthful);
  tcase_set_timeout(tc, 60);
  suite_add_tcase(s, tc);
  tc = tcase_create("status");
  tcase_add_unchecked_fixture(tc, find_plugins, NULL);
  tcase_add_loop_test(tc, test_factory_status_not_vyre_status, 0,
                      (int)(sizeof factory_statuses / sizeof factory_statuses[0]));
  suite_add_tcase(s, tc);
  tc = tcase_create("handles");
  tcase_add_unchecked_fixture(tc, find_plugins, NULL);
  tcase_add_test(tc, test_foreign_and_stale_handles);
  tcase_add_test(tc, test_handle_churn);
  tcase_add_test(tc, test_extension_handles);
  tcase_add_test(tc, test_undecodable_pipeline);
  tcase_set_timeout(tc, 60);
  suite_add_tcase(s, tc);
  tc = tcase_create("lifetimes");
  tcase_add_unchecked_fixture(tc, find_plugins, NULL);
  tcase_add_test(tc, test_double_destroy);
  tcase_add_test(tc, test_double_close);
  tcase_add_test(tc, test_outputs_free_misuse);
  suite_add_tcase(s, tc);
  return s;
}

int main(void) {
  SRunner *sr = srunner_create(guard_suite());
  srunner_run_all(sr, CK_NORMAL);
  int failed = srunner_ntests_failed(sr);
  srunner_free(sr);
  return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
