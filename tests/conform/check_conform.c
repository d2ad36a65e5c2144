/* check_conform.c -- the conformance harness: case parser, comparison rules, capsules, minimizer, ELF export check, coverage, certificate, fuzz generator, ptxas batches. */
#include <check.h>
#include <errno.h>
#include <ftw.h>
#include <limits.h>
#include <stdio.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "plugin/codegen/codegen.h"
#include "host-stub/conform/conform.h"
#include "host-stub/fuzz/fuzz.h"
#include "abi/support/file.h"
#include "vyre/vyre_host.h"
#include "vyre/vyre_text.h"

#define FORMAT(buf, size, ...) \
  ck_assert_msg(snprintf((buf), (size), __VA_ARGS__) < (int)(size), "string too long for its buffer")

/* ------------------------------------------------------------------ */
/* Fixtures: the reference through libvyre-host, a scratch directory    */
/* ------------------------------------------------------------------ */

static char build_dir[PATH_MAX];
static char tmp_dir[PATH_MAX];
static vyre_host *host;

static const char *build_path(const char *rel) {
  static char slots[8][PATH_MAX];
  static int next;
  char *p = slots[next++ % 8];
  FORMAT(p, PATH_MAX, "%s/%s", build_dir, rel);
  return p;
}

static const char *tmp(const char *name) {
  static char slots[8][PATH_MAX];
  static int next;
  char *p = slots[next++ % 8];
  FORMAT(p, PATH_MAX, "%s/%s", tmp_dir, name);
  return p;
}

static int rm_one(const char *path, const struct stat *st, int flag, struct FTW *ftw) {
  return remove(path);
}

static void setup(void) {
  const char *b = getenv("VYRE_BUILD_DIR");
  FORMAT(build_dir, sizeof build_dir, "%s", b && *b ? b : VYRE_TEST_BUILD_DIR);
  const char *base = getenv("TMPDIR");
  FORMAT(tmp_dir, sizeof tmp_dir, "%s/vyre-conform-XXXXXX", base && *base ? base : "/tmp");
  ck_assert_msg(mkdtemp(tmp_dir) != NULL, "mkdtemp failed: %s", strerror(errno));
  vyre_host_options o = {sizeof o, VYRE_HOST_NO_ENV | VYRE_HOST_NO_DEFAULT_DIRS,
                         build_path("host-stub/ref/.libs/libvyre-ref.so"), NULL};
  vyre_error err = VYRE_ERROR_INIT;
  ck_assert_msg(vyre_host_open(&o, &host, &err) == VYRE_OK, "host: %s", err.message);
}

static void teardown(void) {
  vyre_host_close(host);
  host = NULL;
  if (tmp_dir[0]) nftw(tmp_dir, rm_one, 16, FTW_DEPTH | FTW_PHYS);
  tmp_dir[0] = '\0';
}

/* A reference instance, created the way every host creates backends. */
static vyre_backend *reference(void) {
  vyre_backend *b = NULL;
  vyre_error err = VYRE_ERROR_INIT;
  ck_assert_msg(vyre_host_create(host, "reference", NULL, &b, NULL, &err) == VYRE_OK,
                "the reference plugin must load from the build tree: %s", err.message);
  return b;
}

static cf_case *parse_ok(const char *text, const char *path) {
  cf_case *c = NULL;
  vyre_error err = VYRE_ERROR_INIT;
  ck_assert_msg(cf_case_parse(text, strlen(text), path, &c, &err) == VYRE_OK,
                "the case must parse: %s", err.message);
  return c;
}

static void parse_fails(const char *text, const char *needle) {
  cf_case *c = NULL;
  vyre_error err = VYRE_ERROR_INIT;
  vyre_status st = cf_case_parse(text, strlen(text), "dir/bad.vyre", &c, &err);
  ck_assert_msg(st != VYRE_OK && c == NULL, "a bad case must be refused:\n%s", text);
  ck_assert_msg(strstr(err.message, needle) != NULL, "message '%s' should mention '%s'",
                err.message, needle);
  ck_assert_msg(strstr(err.message, "Fix") != NULL || strstr(err.message, "dir/bad.vyre:"),
                "message '%s' should locate or fix the problem", err.message);
}

static uint32_t u32_at(const cf_data *d, uint32_t i) {
  ck_assert_msg(d->size >= 4ull * (i + 1), "element %u is within %llu bytes", i,
                (unsigned long long)d->size);
  uint32_t v;
  memcpy(&v, d->bytes + 4 * i, 4);
  return v;
}

/* ------------------------------------------------------------------ */
/* case                                                                 */
/* ------------------------------------------------------------------ */

static const char *const two_in =
    ";@ input a values 1 2 0xffffffff max\n"
    ";@ input+ a values min -1\n"
    ";@ input b zeros 3\n"
    ";@ input+ b fill 2 7\n"
    ";@ input+ b iota 1 40\n"
    "workgroup 4\n"
    "buffer a ro u32\n"
    "buffer b ro i32 [6]\n"
    "buffer out wo u32 [6]\n"
    "%i = gid.x\n%x = load a %i\nstore out %i %x\n";

START_TEST(test_case_directives) {
  cf_case *c = parse_ok(two_in, "tests/conformance/ops.int/copy.u32.vyre");
  ck_assert_msg(strcmp(c->name, "copy.u32") == 0, "the name defaults to the file stem, got %s", c->name);
  ck_assert_msg(strcmp(c->category, "ops.int") == 0, "the category defaults to the directory, got %s",
                c->category);
  ck_assert_msg(c->input[0].present && c->input[0].size == 24, "a: 6 u32 elements (4 + 2 appended)");
  uint32_t want_a[] = {1, 2, 0xffffffffu, 0xffffffffu, 0, 0xffffffffu};
  for (uint32_t i = 0; i < 6; i++)
    ck_assert_msg(u32_at(&c->input[0], i) == want_a[i], "a[%u] = %#x, want %#x", i,
                  u32_at(&c->input[0], i), want_a[i]);
  uint32_t want_b[] = {0, 0, 0, 7, 7, 40};
  for (uint32_t i = 0; i < 6; i++)
    ck_assert_msg(u32_at(&c->input[1], i) == want_b[i], "b[%u] = %u, want %u", i,
                  u32_at(&c->input[1], i), want_b[i]);
  ck_assert_msg(c->expect == VYRE_OK && c->options.ulp_budget == 0 && c->tolerance == 0,
                "defaults: expect ok, strict, exact");
  cf_case_free(c);

  c = parse_ok(";@ case my.name\n;@ category cat\n;@ about two words\n;@ ulp 3\n"
               ";@ expect trap 9\n;@ workgroup 8\n;@ grid 2 3\n;@ fixpoint 4\n"
               ";@ requires subgroup trap\n;@ ops trap add\n"
               "workgroup 4\nbuffer out wo u32 [4]\ntrap 9\n",
               "x.vyre");
  ck_assert_str_eq(c->name, "my.name");
  ck_assert_str_eq(c->category, "cat");
  ck_assert_str_eq(c->about, "two words");
  ck_assert_msg(c->options.ulp_budget == 3 && c->tolerance == 3, "ulp sets the budget and the tolerance");
  ck_assert_msg(c->expect == VYRE_TRAP && c->expect_code_set && c->expect_code == 9, "expect trap 9");
  ck_assert_msg(c->options.workgroup[0] == 8 && c->options.workgroup[1] == 1, "workgroup override 8 1 1");
  ck_assert_msg(c->options.grid[0] == 2 && c->options.grid[1] == 3 && c->options.grid[2] == 1, "grid 2 3 1");
  ck_assert_msg(c->options.fixpoint_iterations == 4, "fixpoint 4");
  ck_assert_msg(c->extra_caps == (VYRE_CAP_SUBGROUP | VYRE_CAP_TRAP), "requires subgroup trap");
  ck_assert_msg(c->focus_set && ((c->focus[VYRE_OP_TRAP >> 6] >> (VYRE_OP_TRAP & 63)) & 1) &&
                    ((c->focus[VYRE_OP_ADD >> 6] >> (VYRE_OP_ADD & 63)) & 1) &&
                    !((c->focus[VYRE_OP_STORE >> 6] >> (VYRE_OP_STORE & 63)) & 1),
                "ops trap add: the ops under test");
  cf_case_free(c);
}
END_TEST

START_TEST(test_case_literals) {
  uint8_t out[8];
  char why[128];
  struct {
    uint32_t type;
    const char *word;
    uint64_t bits;
  } ok[] = {
      {VYRE_T_U8, "255", 255},          {VYRE_T_U8, "-1", 255},
      {VYRE_T_I8, "-128", 0x80},        {VYRE_T_I16, "min", 0x8000},
      {VYRE_T_U16, "max", 0xffff},      {VYRE_T_I64, "-1", UINT64_MAX},
      {VYRE_T_U64, "0xffffffffffffffff", UINT64_MAX},
      {VYRE_T_BOOL, "true", 1},         {VYRE_T_BOOL, "0x80000000", 0x80000000u},
      {VYRE_T_F32, "1.5", 0x3fc00000},  {VYRE_T_F32, "-0.0", 0x80000000u},
      {VYRE_T_F32, "nan", 0x7fc00000},  {VYRE_T_F32, "0x7f800001", 0x7f800001},
      {VYRE_T_F32, "-inf", 0xff800000}, {VYRE_T_F32, "0x1p-149", 1},
      {VYRE_T_F16, "1.0", 0x3c00},      {VYRE_T_F16, "65504", 0x7bff},
      {VYRE_T_F16, "0x7c01", 0x7c01},   {VYRE_T_BF16, "1.0", 0x3f80},
      {VYRE_T_BF16, "nan", 0x7fc0},
  };
  for (size_t k = 0; k < sizeof ok / sizeof ok[0]; k++) {
    memset(out, 0, sizeof out);
    ck_assert_msg(cf_parse_literal(ok[k].type, ok[k].word, strlen(ok[k].word), out, why, sizeof why) == 0,
                  "'%s' is a %s literal: %s", ok[k].word, vyre_type_name(ok[k].type), why);
    uint64_t v = 0;
    for (uint32_t i = 0; i < vyre_type_size(ok[k].type); i++) v |= (uint64_t)out[i] << (8 * i);
    ck_assert_msg(v == ok[k].bits, "'%s' as %s = %#llx, want %#llx", ok[k].word,
                  vyre_type_name(ok[k].type), (unsigned long long)v, (unsigned long long)ok[k].bits);
  }
  struct {
    uint32_t type;
    const char *word;
  } bad[] = {{VYRE_T_U8, "256"}, {VYRE_T_I8, "-129"}, {VYRE_T_U32, "0x1ffffffff"},
             {VYRE_T_F32, "1.5x"}, {VYRE_T_U32, "abc"}, {VYRE_T_BOOL, "yes"}, {VYRE_T_U32, ""},
             {VYRE_T_F16, "65520"} /* beyond the largest f16: write inf */, {VYRE_T_U8, "-0x1"}};
  for (size_t k = 0; k < sizeof bad / sizeof bad[0]; k++)
    ck_assert_msg(cf_parse_literal(bad[k].type, bad[k].word, strlen(bad[k].word), out, why, sizeof why) != 0 &&
                      why[0],
                  "'%s' is not a %s literal and the reason is given", bad[k].word,
                  vyre_type_name(bad[k].type));
}
END_TEST

START_TEST(test_case_generators) {
  static const char *const text =
      ";@ input a random 5 100\n;@ input b range 9 50 -2.0 2.0\n;@ input c hex 01 0203 ff\n"
      "workgroup 1\nbuffer a ro f32\nbuffer b ro f32\nbuffer c ro u8\nbuffer out wo u32 [1]\n"
      "%z = const u32 0\nstore out %z %z\n";
  cf_case *c1 = parse_ok(text, "g.vyre"), *c2 = parse_ok(text, "g.vyre");
  ck_assert_msg(c1->input[0].size == 400 && c1->input[1].size == 200 && c1->input[2].size == 4,
                "random 100 f32, range 50 f32, 4 hex bytes");
  ck_assert_msg(memcmp(c1->input[0].bytes, c2->input[0].bytes, 400) == 0 &&
                    memcmp(c1->input[1].bytes, c2->input[1].bytes, 200) == 0,
                "seeded generators are deterministic");
  int specials = 0;
  for (uint32_t i = 0; i < 100; i++) {
    uint32_t v = u32_at(&c1->input[0], i);
    specials += (v & 0x7f800000u) == 0x7f800000u || (v & 0x7f800000u) == 0;
  }
  ck_assert_msg(specials > 5, "random f32 data holds specials (NaN/inf/zero/subnormal): %d", specials);
  for (uint32_t i = 0; i < 50; i++) {
    float f;
    memcpy(&f, c1->input[1].bytes + 4 * i, 4);
    ck_assert_msg(f >= -2.0f && f <= 2.0f, "range keeps values in [-2, 2): %g", (double)f);
  }
  ck_assert_msg(c1->input[2].bytes[0] == 1 && c1->input[2].bytes[1] == 2 && c1->input[2].bytes[3] == 0xff,
                "hex bytes in order");
  cf_case_free(c1);
  cf_case_free(c2);
}
END_TEST

/* Case files are read by the one bounded reader (abi/support/file.h):
 * a device or a directory is refused before a byte is read, not read
 * to the 256 MiB bound. */
START_TEST(test_case_load_not_regular) {
  const char *paths[] = {"/dev/zero", tmp_dir};
  for (size_t i = 0; i < 2; i++) {
    cf_case *c = NULL;
    vyre_error err = VYRE_ERROR_INIT;
    ck_assert_msg(cf_case_load(paths[i], &c, &err) == VYRE_IO && c == NULL &&
                      strstr(err.message, "is not a regular file") && strstr(err.message, "Fix:"),
                  "%s is refused as no regular file: %s", paths[i], err.message);
  }
}
END_TEST

START_TEST(test_case_errors) {
  const char *prog = "workgroup 1\nbuffer a ro u32\nbuffer o wo u32 [2]\n%z = const u32 0\nstore o %z %z\n";
  char text[1024];
  FORMAT(text, sizeof text, ";@ bogus 1\n%s", prog);
  parse_fails(text, "unknown directive 'bogus'");
  FORMAT(text, sizeof text, ";@ input nosuch values 1\n%s", prog);
  parse_fails(text, "no buffer named 'nosuch'");
  FORMAT(text, sizeof text, ";@ input o values 1 2\n;@ input a values 1\n%s", prog);
  parse_fails(text, "takes no input");
  FORMAT(text, sizeof text, ";@ input a hex 123\n%s", prog);
  parse_fails(text, "odd number of digits");
  FORMAT(text, sizeof text, ";@ input a values 1 300000000000\n%s", prog);
  parse_fails(text, "dir/bad.vyre:1:");
  FORMAT(text, sizeof text, "%s", prog);
  parse_fails(text, "sized by its input but the case gives none");
  FORMAT(text, sizeof text, ";@ input a values 1\n;@ input a values 2\n%s", prog);
  parse_fails(text, "already has data");
  FORMAT(text, sizeof text, ";@ input a values 1\n;@ expect maybe\n%s", prog);
  parse_fails(text, "bad expectation");
  FORMAT(text, sizeof text, ";@ input a values 1\n;@ expect-output a values 1\n%s", prog);
  parse_fails(text, "is not an output");
  FORMAT(text, sizeof text, ";@ input a values 1\n;@ requires warp\n%s", prog);
  parse_fails(text, "unknown capability 'warp'");
  FORMAT(text, sizeof text, ";@ input a values 1\n;@ ops frobnicate\n%s", prog);
  parse_fails(text, "unknown op 'frobnicate'");
  parse_fails("workgroup 1\nbuffer o wo u32 [2]\n%z = const u32 0\nstore o %z %q\n", "bad.vyre:4");
  /* A generator one word short names what it needs and reads nothing past
   * the line (issue 13: `random SEED` read an uninitialised token).  The
   * token array gets stale, non-zero bytes first, so a read past the line
   * dereferences junk instead of passing by luck. */
  static const char *const short_gens[] = {"random 5", "random", "range 9 50 -2.0",
                                           "range 9", "range", "zeros", "fill 2", "iota"};
  for (size_t g = 0; g < sizeof short_gens / sizeof short_gens[0]; g++) {
    void *junk = malloc(120 * 1024);
    ck_assert(junk != NULL);
    memset(junk, 0xa5, 120 * 1024);
    free(junk);
    FORMAT(text, sizeof text, ";@ input a %s\n%s", short_gens[g], prog);
    parse_fails(text, "bad data generator");
  }
  /* A case's data is bounded in all (256 MiB): two generators of 256 MiB
   * each are refused before the second is made. */
  parse_fails(";@ input a zeros 33554432\n;@ input b zeros 33554432\nworkgroup 1\n"
              "buffer a ro u64\nbuffer b ro u64\nbuffer o wo u32 [1]\n%z = const u32 0\n"
              "store o %z %z\n",
              "more than 268435456 bytes");
  /* range with LO above HI is refused, whatever the type's order. */
  FORMAT(text, sizeof text, ";@ input a range 1 4 9 2\n%s", prog);
  parse_fails(text, "range LO '9' is above HI '2'");
  parse_fails(";@ input a range 1 4 -1 -2\nworkgroup 1\nbuffer a ro i32\nbuffer o wo u32 [2]\n"
              "%z = const u32 0\nstore o %z %z\n",
              "range LO '-1' is above HI '-2'");
  parse_fails(";@ input a range 1 4 2.5 -2.5\nworkgroup 1\nbuffer a ro f32\nbuffer o wo u32 [2]\n"
              "%z = const u32 0\nstore o %z %z\n",
              "range LO '2.5' is above HI '-2.5'");
  /* A second `expect` is refused, not silently the one that counts. */
  FORMAT(text, sizeof text, ";@ input a values 1\n;@ expect ok\n;@ expect trap 3\n%s", prog);
  parse_fails(text, "dir/bad.vyre:3: a second `expect` (line 2 has one)");
  /* A capsule format this vyre does not know is refused. */
  FORMAT(text, sizeof text, ";@ capsule 99\n;@ input a values 1\n%s", prog);
  parse_fails(text, "capsule format '99' is not one this vyre reads (1)");
  FORMAT(text, sizeof text, ";@ capsule 1 2\n;@ input a values 1\n%s", prog);
  parse_fails(text, "`capsule` takes at most the format version");
  /* values and hex are counted against the bound before they are made:
   * 256 MiB of zeros, then one value more is refused. */
  parse_fails(";@ input a zeros 67108864\n;@ input b values 1\nworkgroup 1\n"
              "buffer a ro u32\nbuffer b ro u32\nbuffer o wo u32 [1]\n%z = const u32 0\n"
              "store o %z %z\n",
              "this line's 4 bytes make the case's data more than 268435456 bytes");
  /* A fixed-count input must have exactly its count. */
  parse_fails(";@ input b values 1 2 3\nworkgroup 1\nbuffer b ro u32 [2]\nbuffer o wo u32 [1]\n"
              "%z = const u32 0\nstore o %z %z\n",
              "needs 8");
}
END_TEST

/* The directive table (host-stub/conform/directive.c): each directive's
 * argument count is checked against its row, with the row's usage as the
 * message; the lines a capsule records for people are accepted and
 * ignored. */
START_TEST(test_case_directive_table) {
  const char *prog = "workgroup 1\nbuffer a ro u32 [1]\nbuffer o wo u32 [2]\n%z = const u32 0\n"
                     "store o %z %z\n";
  static const struct {
    const char *line, *message;
  } bad[] = {
      {"case", "dir/bad.vyre:1: `case` takes one word. Fix: `;@ case NAME`"},
      {"category a b", "`category` takes one word. Fix: `;@ category NAME`"},
      {"input a", "`input` needs a buffer and a generator. Fix: `;@ input BUFFER values 1 2 3`"},
      {"expect-output+ o", "`expect-output+` needs a buffer and a generator"},
      {"expect", "bad expectation. Fix: `;@ expect ok`"},
      {"expect trap 1 2", "bad expectation"},
      {"ulp", "`ulp` takes one number. Fix: `;@ ulp N`"},
      {"tolerance x", "`tolerance` takes one number. Fix: `;@ tolerance N`"},
      {"fixpoint 1 2", "`fixpoint` takes one number"},
      {"workgroup", "`workgroup` takes 1 to 3 positive numbers. Fix: `;@ workgroup X [Y [Z]]`"},
      {"grid 1 2 3 4", "`grid` takes 1 to 3 positive numbers"},
      {"grid 0", "`grid` takes 1 to 3 positive numbers"},
      {"ops", "`ops` names the ops under test. Fix: `;@ ops add`"},
      {"program-sha256 00", "`program-sha256` takes 64 hex digits"},
      {"expect ok 3", "only `expect trap` takes a code"},
      {"indirect a", "`indirect` names the buffer holding the counts"},
      {"indirect a x", "`indirect` names the buffer holding the counts"},
      {"indirect nosuch 0", "no storage buffer named 'nosuch'"},
  };
  char text[1024];
  for (size_t k = 0; k < sizeof bad / sizeof bad[0]; k++) {
    FORMAT(text, sizeof text, ";@ %s\n%s", bad[k].line, prog);
    parse_fails(text, bad[k].message);
  }
  cf_case *c = parse_ok(";@ capsule\n;@ device some gpu\n;@ note n\n;@ mismatch m\n"
                        ";@ status-backend VYRE_OK\n;@ status-reference VYRE_OK\n"
                        ";@ output-backend o 1\n;@ output-backend+ o 2\n;@ output-reference o 1\n"
                        ";@ output-reference+ o 2\n;@ origin fuzz 7 3\n;@ backend cuda\n;@ requires\n"
                        "workgroup 1\nbuffer o wo u32 [2]\n%z = const u32 0\nstore o %z %z\n",
                        "cap.vyre");
  ck_assert_msg(c->is_capsule && strcmp(c->origin, "fuzz 7 3") == 0 && strcmp(c->backend, "cuda") == 0,
                "capsule, origin and backend are kept; the recorded lines are ignored");
  cf_case_free(c);
}
END_TEST

START_TEST(test_corpus_listing) {
  ck_assert_int_eq(mkdir(tmp("c"), 0777), 0);
  ck_assert_int_eq(mkdir(tmp("c/b"), 0777), 0);
  const char *files[] = {"c/b/two.vyre", "c/a.vyre", "c/skip.txt"};
  vyre_error err = VYRE_ERROR_INIT;
  for (int i = 0; i < 3; i++)
    ck_assert(vyre__file_write_atomic(tmp(files[i]), "x", 1, 0666, &err) == VYRE_OK);
  char **paths = NULL;
  uint32_t n = 0;
  ck_assert_msg(cf_corpus_list(tmp("c"), &paths, &n, &err) == VYRE_OK, "%s", err.message);
  ck_assert_msg(n == 2, "two .vyre files, the .txt ignored: %u", n);
  ck_assert_msg(strstr(paths[0], "c/a.vyre") && strstr(paths[1], "c/b/two.vyre"), "byte-wise order");
  char h1[65], h2[65];
  ck_assert(cf_corpus_hash(tmp("c"), paths, n, h1, &err) == VYRE_OK);
  ck_assert(vyre__file_write_atomic(tmp("c/a.vyre"), "y", 1, 0666, &err) == VYRE_OK);
  ck_assert(cf_corpus_hash(tmp("c"), paths, n, h2, &err) == VYRE_OK);
  ck_assert_msg(strcmp(h1, h2) != 0, "the corpus hash changes with a file's bytes");
  cf_corpus_list_free(paths, n);
  ck_assert_msg(cf_corpus_list(tmp("none"), &paths, &n, &err) == VYRE_IO && strstr(err.message, "Fix"),
                "a missing corpus is an error with a Fix: %s", err.message);
}
END_TEST

/* ------------------------------------------------------------------ */
/* compare                                                              */
/* ------------------------------------------------------------------ */

START_TEST(test_ulp_distance) {
  ck_assert_msg(cf_ulp_distance_f32(0x00000000, 0x80000000) == 0, "+0 and -0 are 0 ulp apart");
  ck_assert_msg(cf_ulp_distance_f32(0x3f800000, 0x3f800001) == 1, "adjacent values are 1 ulp apart");
  /* Programs see no subnormals: the zeros and +-2^-126 are neighbours. */
  ck_assert_msg(cf_ulp_distance_f32(0x00800000, 0x80800000) == 2,
                "the distance across zero counts the values a program can see between");
  ck_assert_msg(cf_ulp_distance_f32(0x00000000, 0x00800000) == 1, "0 and 2^-126 are neighbours");
  ck_assert_msg(cf_ulp_distance_f32(0x80000000, 0x00800001) == 2, "-0 .. 2^-126 (1 + 2^-23)");
  ck_assert_msg(cf_ulp_distance_f32(0x00000001, 0x00000000) == 0, "a subnormal sits with its zero");
  ck_assert_msg(cf_ulp_distance_f32(0x00800000, 0x00800001) == 1, "adjacent normals stay 1 apart");
  ck_assert_msg(cf_ulp_distance_f32(0x7fc00000, 0x7fc00000) == 0, "the same NaN is equal");
  ck_assert_msg(cf_ulp_distance_f32(0x7fc00000, 0x7fc00001) == UINT64_MAX, "NaN bits must match");
  ck_assert_msg(cf_ulp_distance_f32(0x7fc00000, 0x3f800000) == UINT64_MAX, "NaN vs a number: not comparable");
  ck_assert_msg(cf_ulp_distance_f32(0x7f800000, 0x7f7fffff) == UINT64_MAX,
                "inf vs MAX: specials are exact, not 1 ulp");
  ck_assert_msg(cf_ulp_distance_f32(0xff800000, 0xff800000) == 0, "-inf equals itself");
  ck_assert_msg(cf_ulp_distance_f16(0x3c00, 0x3c02) == 2, "f16 steps");
  ck_assert_msg(cf_ulp_distance_f16(0x7e00, 0x7c00) == UINT64_MAX, "f16 NaN vs inf");
  ck_assert_msg(cf_ulp_distance_bf16(0x3f80, 0xbf80) == 2u * 0x3f80u, "bf16 across zero");
}
END_TEST

/* A case with one output `o` of type `type` (8 elements). */
static cf_case *one_output(const char *type, uint32_t tolerance) {
  char text[512];
  FORMAT(text, sizeof text, ";@ tolerance %u\nworkgroup 1\nbuffer o wo %s [8]\n"
         "%%z = const u32 0\n%%l = buflen o\n%%v = cast %s %%l\nstore o %%z %%v\n",
         tolerance, type, strcmp(type, "f16") == 0 ? "f32" : type);
  return parse_ok(text, "cmp.vyre");
}

static void result_with(cf_result *r, const void *bytes, uint64_t size) {
  memset(r, 0, sizeof *r);
  r->output_count = 1;
  r->output[0].present = 1;
  r->output[0].size = size;
  r->output[0].bytes = malloc(size);
  memcpy(r->output[0].bytes, bytes, size);
}

START_TEST(test_compare_rules) {
  cf_case *c = one_output("f32", 0);
  uint32_t a[8] = {0, 0x3f800000, 0x7fc00000, 3, 4, 5, 6, 7}, b[8];
  memcpy(b, a, sizeof a);
  cf_result ra, rb;
  cf_diff d;
  result_with(&ra, a, sizeof a);
  b[0] = 0x80000000;
  result_with(&rb, b, sizeof b);
  ck_assert_msg(!cf_compare(c, &ra, &rb, &d) && d.kind == CF_DIFF_VALUE && d.element == 0,
                "tolerance 0: -0 differs from +0 (bit for bit)");
  ck_assert_msg(strstr(d.text, "output o (f32) element 0") != NULL, "the diff names output and element: %s", d.text);
  cf_result_free(&rb);
  c->tolerance = 1;
  result_with(&rb, b, sizeof b);
  ck_assert_msg(cf_compare(c, &ra, &rb, &d), "tolerance 1: +0 and -0 count as equal (0 ulp)");
  cf_result_free(&rb);
  memcpy(b, a, sizeof a);
  b[1] = 0x3f800001;
  result_with(&rb, b, sizeof b);
  ck_assert_msg(cf_compare(c, &ra, &rb, &d), "1 ulp is within tolerance 1");
  cf_result_free(&rb);
  b[1] = 0x3f800002;
  result_with(&rb, b, sizeof b);
  ck_assert_msg(!cf_compare(c, &ra, &rb, &d) && d.ulps == 2, "2 ulp exceeds tolerance 1");
  cf_result_free(&rb);
  memcpy(b, a, sizeof a);
  b[2] = 0x7fc00001;
  result_with(&rb, b, sizeof b);
  ck_assert_msg(!cf_compare(c, &ra, &rb, &d) && d.element == 2 && d.ulps == UINT64_MAX,
                "NaN bits are exact whatever the tolerance");
  cf_result_free(&rb);
  cf_result_free(&ra);
  cf_case_free(c);

  /* Integers: byte for byte, tolerance or not. */
  c = one_output("u32", 5);
  uint32_t x[8] = {1, 2, 3, 4, 5, 6, 7, 8}, y[8];
  memcpy(y, x, sizeof x);
  y[7] = 9;
  result_with(&ra, x, sizeof x);
  result_with(&rb, y, sizeof y);
  ck_assert_msg(!cf_compare(c, &ra, &rb, &d) && d.element == 7 && d.differing == 1,
                "integers ignore the tolerance: element 7 differs");
  cf_result_free(&rb);
  result_with(&rb, x, 28);
  ck_assert_msg(!cf_compare(c, &ra, &rb, &d) && d.kind == CF_DIFF_SIZE, "a short output is a size difference");
  cf_result_free(&rb);
  /* Statuses and trap codes. */
  memset(&rb, 0, sizeof rb);
  rb.status = VYRE_UNSUPPORTED;
  ck_assert_msg(!cf_compare(c, &ra, &rb, &d) && d.kind == CF_DIFF_STATUS && strstr(d.text, "VYRE_UNSUPPORTED"),
                "a status difference names both statuses: %s", d.text);
  cf_result_free(&ra);
  memset(&ra, 0, sizeof ra);
  ra.status = rb.status = VYRE_TRAP;
  ra.native_code = 1;
  rb.native_code = 2;
  ck_assert_msg(cf_compare(c, &ra, &rb, &d), "trap codes are unspecified unless the case names one");
  c->expect = VYRE_TRAP;
  c->expect_code_set = 1;
  c->expect_code = 1;
  ck_assert_msg(!cf_compare(c, &ra, &rb, &d), "a named trap code must match");
  ck_assert_msg(cf_check_expected(c, &ra, &d) && !cf_check_expected(c, &rb, &d),
                "expect trap 1: code 1 meets it, code 2 does not");
  cf_case_free(c);
}
END_TEST

/* Bounds on output 0 of r, as the reference's side channel writes them. */
static void bounds_with(cf_result *r, const double *b, uint32_t n) {
  r->bound[0] = malloc(n * sizeof *b);
  memcpy(r->bound[0], b, n * sizeof *b);
  r->bound_count[0] = n;
}

START_TEST(test_compare_mma_bound) {
  cf_case *c = one_output("f32", 0);
  /* 0: 1.0 (bound 2^-20); 1: NaN (bound 0); 2: +inf (bound 0); 3: 8.0
   * (bound +inf: partial sums may overflow); 4..7: not from an mma. */
  uint32_t a[8] = {0x3f800000, 0x7fc00000, 0x7f800000, 0x41000000, 4, 5, 6, 7}, b[8];
  const double bd[8] = {0x1p-20, 0, 0, INFINITY, -1, -1, -1, -1};
  cf_result ra, rb;
  cf_diff d;
  result_with(&ra, a, sizeof a);
  bounds_with(&ra, bd, 8);
  memcpy(b, a, sizeof a);
  b[0] = 0x3f800008;  /* 1 + 2^-20: on the bound */
  b[1] = 0xffc00123;  /* another NaN */
  b[3] = 0xff800000;  /* -inf where anything goes */
  result_with(&rb, b, sizeof b);
  ck_assert_msg(cf_compare(c, &ra, &rb, &d), "within the MMA bound under tolerance 0: %s", d.text);
  cf_result_free(&rb);
  b[0] = 0x3f800009;  /* 1 + 9 2^-23: over the bound by 2^-23 */
  result_with(&rb, b, sizeof b);
  ck_assert_msg(!cf_compare(c, &ra, &rb, &d) && d.element == 0 && d.bound == 0x1p-20 &&
                    d.over == 0x1p-23,
                "off by more than the bound fails, with the bound and the excess: %s", d.text);
  ck_assert_msg(strstr(d.text, "MMA bound 9.53674316e-07 by 1.1920929e-07") &&
                    strstr(d.text, "element 0") && strstr(d.text, "expected 0x3f800000"),
                "the report names the element, both values, the bound and the excess: %s", d.text);
  cf_result_free(&rb);
  memcpy(b, a, sizeof a);
  b[1] = 0x3f800000;
  result_with(&rb, b, sizeof b);
  ck_assert_msg(!cf_compare(c, &ra, &rb, &d) && d.element == 1 && strstr(d.text, "NaN"),
                "an MMA NaN needs a NaN: %s", d.text);
  cf_result_free(&rb);
  memcpy(b, a, sizeof a);
  b[2] = 0x7f7fffff;
  result_with(&rb, b, sizeof b);
  ck_assert_msg(!cf_compare(c, &ra, &rb, &d) && d.element == 2 && strstr(d.text, "infinity"),
                "an MMA infinity must be equal: %s", d.text);
  cf_result_free(&rb);
  b[2] = 0x7f800000;
  b[3] = 0x7fc00000;
  result_with(&rb, b, sizeof b);
  ck_assert_msg(cf_compare(c, &ra, &rb, &d),
                "an unconstrained element (bound +inf) may even be NaN: %s", d.text);
  cf_result_free(&rb);
  memcpy(b, a, sizeof a);
  b[4] = 3;
  result_with(&rb, b, sizeof b);
  ck_assert_msg(!cf_compare(c, &ra, &rb, &d) && d.element == 4 && d.bound < 0,
                "an element with bound -1 keeps the usual rules: %s", d.text);
  /* Goldens of float-MMA outputs hold within the reference's bound. */
  memcpy(b, a, sizeof a);
  b[0] = 0x3f800008;
  cf_result_free(&rb);
  result_with(&rb, b, sizeof b);
  c->golden[0].present = 1;
  c->golden[0].size = sizeof a;
  c->golden[0].bytes = malloc(sizeof a);
  memcpy(c->golden[0].bytes, a, sizeof a);
  ck_assert_msg(!cf_check_expected(c, &rb, &d), "without a bound the golden is bit for bit");
  ck_assert_msg(cf_check_expected_bounded(c, &rb, &ra, &d),
                "with the reference's bound the golden holds within it: %s", d.text);
  cf_result_free(&rb);
  cf_result_free(&ra);
  cf_case_free(c);
}
END_TEST

START_TEST(test_compare_ranges_and_goldens) {
  /* A range that cuts f32 elements is compared byte for byte. */
  cf_case *c = parse_ok(";@ tolerance 4\n;@ expect-output o hex 000080\nworkgroup 1\n"
                        "buffer o wo f32 [4] range 1 3\n%z = const u32 0\n%v = const f32 1.0\n"
                        "store o %z %v\n", "r.vyre");
  uint8_t want[3] = {0, 0x80, 0x3f}, got[3] = {0, 0x80, 0x3e};
  cf_result ra, rb;
  cf_diff d;
  result_with(&ra, want, 3);
  result_with(&rb, got, 3);
  ck_assert_msg(!cf_compare(c, &ra, &rb, &d) && d.byte == 2, "byte 2 differs (no ulp rule on cut elements)");
  ck_assert_msg(!cf_check_expected(c, &ra, &d) && strstr(d.text, "expect-output"),
                "the golden 00 00 80 differs from 00 80 3f: %s", d.text);
  cf_result_free(&ra);
  uint8_t golden[3] = {0, 0, 0x80};
  result_with(&ra, golden, 3);
  ck_assert_msg(cf_check_expected(c, &ra, &d), "the golden output itself meets the expectation");
  cf_result_free(&ra);
  cf_result_free(&rb);
  cf_case_free(c);
}
END_TEST

START_TEST(test_run_reference) {
  vyre_backend *ref = reference();
  cf_case *c = parse_ok(two_in, "run.vyre");
  cf_result r;
  cf_run(ref, c, &r);
  ck_assert_msg(r.status == VYRE_OK && r.output_count == 1 && r.output[0].size == 24, "%s", r.message);
  ck_assert_msg(u32_at(&r.output[0], 2) == 0xffffffffu && u32_at(&r.output[0], 4) == 0, "out = a");
  cf_diff d;
  ck_assert_msg(cf_check_expected(c, &r, &d), "no golden, status ok: %s", d.text);
  cf_result_free(&r);
  cf_case_free(c);
  /* Strict transcendental: the reference computes it correctly rounded
   * (sin 1 = 0x3f576aa4), and the golden saying so is met. */
  c = parse_ok(";@ ulp 0\n;@ input a values 1.0\n;@ expect-output o values 0x3f576aa4\n"
               "workgroup 1\nbuffer a ro f32\nbuffer o wo f32 [1]\n%z = const u32 0\n"
               "%x = load a %z\n%y = sin %x\nstore o %z %y\n", "strict.vyre");
  cf_run(ref, c, &r);
  ck_assert_msg(r.status == VYRE_OK, "strict sin runs on the reference: %s", r.message);
  ck_assert_msg(cf_check_expected(c, &r, &d), "the correctly rounded golden is met: %s", d.text);
  cf_result_free(&r);
  cf_case_free(c);
  ref->vt->destroy(ref);
}
END_TEST

/* `;@ indirect`: parsed, run through resident buffers with the counts
 * the named buffer holds, and kept by a capsule. */
START_TEST(test_run_indirect) {
  vyre_backend *ref = reference();
  const char *text = ";@ input cnt values 9 2 1 1\n;@ grid 4\n;@ indirect cnt 4\n"
                     "workgroup 2\nbuffer cnt ro u32\nbuffer out wo u32 [8]\n"
                     "%i = gid.x\n%one = const u32 1\n%v = add %i %one\nstore out %i %v\n";
  cf_case *c = parse_ok(text, "ind.vyre");
  ck_assert_msg(c->indirect && c->indirect_buffer == 0 && c->indirect_offset == 4,
                "indirect cnt 4: buffer 0, byte 4");
  ck_assert_msg((c->extra_caps & (VYRE_CAP_RESIDENT | VYRE_CAP_INDIRECT_DISPATCH)) ==
                    (VYRE_CAP_RESIDENT | VYRE_CAP_INDIRECT_DISPATCH),
                "an indirect case needs resident buffers and indirect_dispatch");
  cf_result r;
  cf_run(ref, c, &r);
  ck_assert_msg(r.status == VYRE_OK && r.output_count == 1 && r.output[0].size == 32, "%s",
                r.message);
  ck_assert_msg(u32_at(&r.output[0], 3) == 4 && u32_at(&r.output[0], 4) == 0,
                "2 of the 4 workgroups of 2 ran: out = 1 2 3 4 0 0 0 0");
  cf_result_free(&r);
  char *cap = NULL;
  size_t size = 0;
  vyre_error err = VYRE_ERROR_INIT;
  ck_assert_int_eq(cf_capsule_format(c, NULL, &cap, &size, &err), VYRE_OK);
  ck_assert_msg(strstr(cap, ";@ indirect cnt 4\n"), "the capsule keeps the directive:\n%s", cap);
  free(cap);
  cf_case_free(c);
  /* Past the bound: VYRE_LIMIT, as `expect limit` says. */
  c = parse_ok(";@ input cnt values 5 1 1\n;@ grid 4\n;@ indirect cnt 0\n;@ expect limit\n"
               "workgroup 2\nbuffer cnt ro u32\nbuffer out wo u32 [8]\n"
               "%i = gid.x\nstore out %i %i\n",
               "over.vyre");
  cf_run(ref, c, &r);
  cf_diff d;
  ck_assert_msg(r.status == VYRE_LIMIT && cf_check_expected(c, &r, &d), "%s", r.message);
  cf_result_free(&r);
  cf_case_free(c);
  ref->vt->destroy(ref);
}
END_TEST

/* ------------------------------------------------------------------ */
/* capsule                                                              */
/* ------------------------------------------------------------------ */

START_TEST(test_capsule_round_trip) {
  cf_case *c = parse_ok(";@ ulp 2\n;@ grid 3\n;@ expect-output o values 5 6 7 8\n"
                        ";@ input a values 1 2 3 4 -7\n;@ about an about line\n;@ ops load\nworkgroup 4\n"
                        "buffer a ro i32\nbuffer o rw i32 [4] output range 4 8\n%i = gid.x\n"
                        "%x = load a %i\nstore o %i %x\n",
                        "suite/capsule.vyre");
  cf_result want, got;
  memset(&want, 0, sizeof want);
  memset(&got, 0, sizeof got);
  int32_t w[2] = {2, 3}, g[2] = {2, 4};
  result_with(&want, w, 8);
  result_with(&got, g, 8);
  cf_diff d;
  ck_assert(!cf_compare(c, &want, &got, &d));
  cf_capsule_info info = {"conform suite/capsule", "mock", "9.9", "a device", &got, &want, &d, "a note"};
  vyre_error err = VYRE_ERROR_INIT;
  ck_assert_msg(cf_capsule_write(tmp("cap.vyre"), c, &info, &err) == VYRE_OK, "%s", err.message);
  cf_case *r = NULL;
  ck_assert_msg(cf_case_load(tmp("cap.vyre"), &r, &err) == VYRE_OK, "a capsule reads back as a case: %s",
                err.message);
  ck_assert_msg(r->is_capsule && r->sha_set && memcmp(r->sha256, c->decoded->sha256, 32) == 0,
                "the recorded program hash matches");
  ck_assert_msg(r->program_size == c->program_size && memcmp(r->program, c->program, c->program_size) == 0,
                "the program bytes are identical");
  ck_assert_msg(r->input[0].size == c->input[0].size &&
                    memcmp(r->input[0].bytes, c->input[0].bytes, c->input[0].size) == 0,
                "the inputs are identical (including -7)");
  ck_assert_msg(r->golden[1].present && r->golden[1].size == 16, "goldens carried over");
  ck_assert_msg(r->options.ulp_budget == 2 && r->tolerance == 2 && r->options.grid[0] == 3,
                "options carried over");
  ck_assert_str_eq(r->name, "capsule");
  ck_assert_str_eq(r->category, "suite");
  ck_assert_str_eq(r->origin, "conform suite/capsule");
  ck_assert_msg(r->focus_set && memcmp(r->focus, c->focus, sizeof r->focus) == 0, "ops carried over");
  ck_assert_msg(strstr(r->backend, "mock 9.9") != NULL, "backend recorded: %s", r->backend);
  ck_assert_msg(strstr(r->text, ";@ status-backend VYRE_OK") && strstr(r->text, ";@ output-backend o hex 0200000004000000") &&
                    strstr(r->text, ";@ output-reference o hex 0200000003000000") &&
                    strstr(r->text, ";@ mismatch output o (i32) element 1"),
                "both outputs and the first mismatch are recorded:\n%s", r->text);
  ck_assert_msg(!r->sha_mismatch, "an untouched capsule matches its hash");
  /* An edited capsule still loads; the hash mismatch is noted. */
  char *edited = strdup(r->text);
  char *wg = strstr(edited, "workgroup 4 1 1");
  ck_assert_msg(wg != NULL, "the capsule holds the canonical workgroup line");
  wg[10] = '8';
  cf_case_free(r);
  ck_assert(cf_case_parse(edited, strlen(edited), "edited.vyre", &r, &err) == VYRE_OK);
  ck_assert_msg(r->sha_mismatch, "an edited program no longer matches the recorded hash");
  free(edited);
  cf_case_free(r);
  /* A clone goes through the capsule text too. */
  ck_assert(cf_case_clone(c, &r, &err) == VYRE_OK);
  ck_assert(r->program_size == c->program_size && memcmp(r->program, c->program, c->program_size) == 0);
  cf_case_free(r);
  cf_result_free(&want);
  cf_result_free(&got);
  cf_case_free(c);
}
END_TEST

/* ------------------------------------------------------------------ */
/* minimize: a planted mismatch                                         */
/* ------------------------------------------------------------------ */

/* A "backend" that is the reference except that it flips bit 0 of the
 * first output byte of every program containing `mulhi`: a planted bug. */
typedef struct mutant {
  vyre_backend head;
  vyre_backend_vtable vt;
  vyre_backend *inner;
} mutant;

static vyre_status mutant_dispatch(vyre_backend *self, const vyre_program_ref *program,
                                   const vyre_input *inputs, uint32_t input_count,
                                   const vyre_dispatch_options *options, vyre_outputs **out,
                                   vyre_timing *timing, vyre_error *err) {
  mutant *m = (mutant *)self;
  vyre_status st = m->inner->vt->dispatch(m->inner, program, inputs, input_count, options, out,
                                          timing, err);
  if (st != VYRE_OK) return st;
  vyre_program *p = NULL;
  if (vyre_program_decode(program->bytes, program->size, &p, NULL) != VYRE_OK) return st;
  int planted = 0;
  for (uint32_t i = 0; i < p->inst_count; i++) planted |= p->insts[i].op == VYRE_OP_MULHI;
  vyre_program_free(p);
  if (planted && (*out)->count && (*out)->items[0].size) ((uint8_t *)(*out)->items[0].data)[0] ^= 1;
  return st;
}

static void mutant_outputs_free(vyre_backend *self, vyre_outputs *o) {
  mutant *m = (mutant *)self;
  m->inner->vt->outputs_free(m->inner, o);
}

static void mutant_init(mutant *m, vyre_backend *inner) {
  memset(m, 0, sizeof *m);
  m->inner = inner;
  m->vt = *inner->vt;
  m->vt.dispatch = mutant_dispatch;
  m->vt.outputs_free = mutant_outputs_free;
  m->head.struct_size = sizeof m->head;
  m->head.vt = &m->vt;
}

static const char *const big_program =
    ";@ input a values 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16\n"
    "workgroup 16\nbuffer a ro u32\nbuffer o wo u32 [16]\nbuffer p wo u32 [16]\n"
    "%i = gid.x\n%x = load a %i\n%c3 = const u32 3\n%y = mul %x %c3\n%c7 = const u32 7\n"
    "%z = add %y %c7\nlet acc %z\n%lo = const u32 0\n%hi = const u32 4\nloop k %lo %hi\n"
    "  %kv = get k\n  %cur = get acc\n  %nx = xor %cur %kv\n  assign acc %nx\nend\n"
    "%two = const u32 2\n%m = and %i %two\n%zero = const u32 0\n%odd = ne %m %zero\n"
    "if %odd\n  %q = const u32 99\n  store p %i %q\nelse\n  %w = get acc\n  store p %i %w\nend\n"
    "%h = mulhi %x %y\n%acc2 = get acc\n%s = add %h %acc2\nstore o %i %s\n"
    "%r = popcount %s\n%r2 = add %r %x\nstore p %i %r2\n";

START_TEST(test_minimize_planted) {
  vyre_backend *ref = reference();
  mutant m;
  mutant_init(&m, ref);
  cf_case *c = parse_ok(big_program, "min/planted.vyre");
  cf_result want, got;
  cf_run(ref, c, &want);
  cf_run(&m.head, c, &got);
  cf_diff d;
  ck_assert_msg(!cf_compare(c, &want, &got, &d) && d.kind == CF_DIFF_VALUE,
                "the planted bug shows: %s", d.text);
  cf_pair pair = {&m.head, ref, d.kind, got.status, want.status};
  cf_result_free(&want);
  cf_result_free(&got);
  cf_min_stats ms;
  vyre_error err = VYRE_ERROR_INIT;
  uint32_t before = c->decoded->inst_count;
  ck_assert_msg(cf_minimize(c, cf_pair_still_fails, &pair, 0, &ms, &err) == VYRE_OK, "%s", err.message);
  ck_assert_msg(ms.insts_before == before && ms.insts_after == c->decoded->inst_count,
                "the stats describe the shrink");
  ck_assert_msg(ms.insts_after <= 6 && ms.insts_after < before / 4,
                "%u instructions shrink to at most 6 (got %u after %u tries)", before,
                ms.insts_after, ms.tries);
  int has_mulhi = 0;
  for (uint32_t i = 0; i < c->decoded->inst_count; i++) has_mulhi |= c->decoded->insts[i].op == VYRE_OP_MULHI;
  ck_assert_msg(has_mulhi, "the minimized program keeps the planted op");
  ck_assert_msg(cf_pair_still_fails(&pair, c), "the minimized program still mismatches");
  /* The result is a valid program that disassembles and a capsule that replays. */
  char *text = NULL;
  ck_assert(vyre_text_disassemble(c->program, c->program_size, &text, &err) == VYRE_OK);
  free(text);
  cf_case_free(c);

  /* Without the planted op nothing fails, so nothing may shrink. */
  c = parse_ok(two_in, "min/clean.vyre");
  cf_run(ref, c, &want);
  pair.original_kind = CF_DIFF_VALUE;
  before = c->decoded->inst_count;
  ck_assert(cf_minimize(c, cf_pair_still_fails, &pair, 50, &ms, &err) == VYRE_OK);
  ck_assert_msg(c->decoded->inst_count == before && ms.accepted == 0,
                "a passing case is left alone by the minimizer");
  cf_result_free(&want);
  cf_case_free(c);
  ref->vt->destroy(ref);
}
END_TEST

/* A predicate without a backend: keep programs that still contain a store
 * of a value computed by `rotl` (exercises block unwrapping and constify). */
static int keeps_rotl(void *ctx, const cf_case *c) {
  (void)ctx;
  const vyre_program *p = c->decoded;
  for (uint32_t i = 0; i < p->inst_count; i++)
    if (p->insts[i].op == VYRE_OP_STORE && p->insts[p->insts[i].c].op == VYRE_OP_ROTL) return 1;
  return 0;
}

START_TEST(test_minimize_structure) {
  cf_case *c = parse_ok(";@ input a values 1 2 3 4\nworkgroup 4\nbuffer a ro u32\nbuffer o wo u32 [4]\n"
                        "%i = gid.x\n%x = load a %i\n%one = const u32 1\n%c = gt %x %one\n"
                        "if %c\n  block\n    %y = add %x %x\n    %r = rotl %y %x\n    store o %i %r\n"
                        "  end\nelse\n  store o %i %x\nend\n",
                        "min/structure.vyre");
  cf_min_stats ms;
  vyre_error err = VYRE_ERROR_INIT;
  ck_assert(cf_minimize(c, keeps_rotl, NULL, 500, &ms, &err) == VYRE_OK);
  const vyre_program *p = c->decoded;
  int blocks = 0;
  for (uint32_t i = 0; i < p->inst_count; i++)
    blocks += p->insts[i].op == VYRE_OP_IF || p->insts[i].op == VYRE_OP_BLOCK;
  ck_assert_msg(blocks == 0, "if/else and block are unwrapped");
  ck_assert_msg(p->inst_count <= 5, "rotl of constants stored: at most 5 instructions, got %u", p->inst_count);
  cf_case_free(c);
}
END_TEST

/* ------------------------------------------------------------------ */
/* elf                                                                  */
/* ------------------------------------------------------------------ */

START_TEST(test_elf_plugins) {
  cf_elf_report r;
  vyre_error err = VYRE_ERROR_INIT;
  char why[1024];
  ck_assert_msg(cf_elf_exports(build_path("host-stub/ref/.libs/libvyre-ref.so"), &r, &err) == VYRE_OK,
                "%s", err.message);
  ck_assert_msg(r.has_descriptor && r.has_entry && r.extra_count == 0 && r.exported == 2,
                "the reference exports exactly two symbols (got %u, extras %u)", r.exported, r.extra_count);
  ck_assert_msg(cf_elf_ok(&r, why, sizeof why), "%s", why);
  if (access(build_path("plugin/runtime/.libs/libvyre-cuda.so"), R_OK) == 0) {
    ck_assert(cf_elf_exports(build_path("plugin/runtime/.libs/libvyre-cuda.so"), &r, &err) == VYRE_OK);
    ck_assert_msg(cf_elf_ok(&r, why, sizeof why), "the CUDA plugin exports only the two: %s", why);
  }
  /* The host library is not a plugin: many exports, no descriptor. */
  ck_assert(cf_elf_exports(build_path("host-stub/loader/.libs/libvyre-host.so"), &r, &err) == VYRE_OK);
  ck_assert_msg(!cf_elf_ok(&r, why, sizeof why) && strstr(why, "does not export") && strstr(why, "Fix"),
                "libvyre-host is refused: %s", why);
}
END_TEST

START_TEST(test_elf_stub_extra_export) {
  const char *stub = build_path("tests/loader/stubs/.libs/libvyre-stub_good.so");
  if (access(stub, R_OK) != 0) {
    fprintf(stderr, "note: %s not built; the stub check is skipped\n", stub);
    return;
  }
  cf_elf_report r;
  vyre_error err = VYRE_ERROR_INIT;
  char why[1024];
  ck_assert(cf_elf_exports(stub, &r, &err) == VYRE_OK);
  ck_assert_msg(r.extra_count == 1 && strcmp(r.extra[0], "stub_calls") == 0,
                "the stub exports stub_calls besides the two");
  ck_assert_msg(!cf_elf_ok(&r, why, sizeof why) && strstr(why, "stub_calls") && strstr(why, "Fix"),
                "the extra export is named with a Fix: %s", why);
}
END_TEST

START_TEST(test_elf_garbage) {
  cf_elf_report r;
  vyre_error err = VYRE_ERROR_INIT;
  ck_assert(vyre__file_write_atomic(tmp("text.so"), "hello, not an ELF file at all, padding padding padding", 55, 0666, &err) == VYRE_OK);
  ck_assert_msg(cf_elf_exports(tmp("text.so"), &r, &err) == VYRE_INVALID_ARGUMENT &&
                    strstr(err.message, "not an ELF file") && strstr(err.message, "Fix"),
                "%s", err.message);
  /* A truncated copy of the reference: headers point past the end. */
  void *data = NULL;
  size_t size = 0;
  ck_assert(vyre__file_read(build_path("host-stub/ref/.libs/libvyre-ref.so"), CF_MAX_PLUGIN_BYTES, NULL, &data, &size, &err) == VYRE_OK);
  for (size_t cut = 64; cut < size; cut += size / 7) {
    ck_assert(vyre__file_write_atomic(tmp("cut.so"), data, cut, 0666, &err) == VYRE_OK);
    vyre_status st = cf_elf_exports(tmp("cut.so"), &r, &err);
    ck_assert_msg(st == VYRE_INVALID_ARGUMENT || (st == VYRE_OK && r.exported <= 2),
                  "a truncated file (%zu of %zu bytes) is refused or read within bounds", cut, size);
  }
  free(data);
  ck_assert_msg(cf_elf_exports(tmp("missing.so"), &r, &err) == VYRE_IO, "a missing file is VYRE_IO");
}
END_TEST

/* The harness and the loader name machines from one table
 * (abi/support/elf.h): a copy of the reference marked for another
 * machine is refused, named the way the loader names it. */
START_TEST(test_elf_foreign_machine) {
  void *data = NULL;
  size_t size = 0;
  vyre_error err = VYRE_ERROR_INIT;
  ck_assert(vyre__file_read(build_path("host-stub/ref/.libs/libvyre-ref.so"), CF_MAX_PLUGIN_BYTES, NULL, &data, &size, &err) == VYRE_OK);
  unsigned char *b = data;
  ck_assert_msg(size > 64 && b[5] == 1, "a little-endian ELF file");
  uint16_t mine = (uint16_t)(b[18] | b[19] << 8);
  uint16_t other = mine == 42 ? 43 : 42; /* superh, else sparc64 */
  b[18] = (unsigned char)other;
  b[19] = 0;
  cf_elf_report r;
  char why[1024];
  ck_assert_msg(cf_elf_exports_mem(data, size, "foreign.so", &r, &err) == VYRE_OK, "%s", err.message);
  ck_assert_msg(!cf_elf_ok(&r, why, sizeof why) &&
                    strstr(why, other == 42 ? "built for superh" : "built for sparc64") &&
                    strstr(why, "Fix"),
                "the foreign machine is named: %s", why);
  free(data);
}
END_TEST

/* ------------------------------------------------------------------ */
/* needs and offers                                                     */
/* ------------------------------------------------------------------ */

/* The needs of a program given as text (no directives needed). */
static void needs_of(const char *text, vyre_needs *needs) {
  cf_case *c = parse_ok(text, "needs.vyre");
  memset(needs, 0, sizeof *needs);
  needs->struct_size = sizeof *needs;
  ck_assert_msg(vyre_program_needs(c->decoded, &c->options, needs, NULL) == VYRE_OK,
                "vyre_program_needs of a decoded program");
  cf_case_free(c);
}

static const char *const add_f32 =
    "workgroup 4\nbuffer a ro f32 [4]\nbuffer out wo f32 [4]\n"
    "%i = gid.x\n%x = load a %i\n%y = add %x %x\nstore out %i %y\n";

/* A small backend's offer: gid load store, add at u32 only, storage u32
 * u64 f32, no capability. */
static cf_offer small_offer(void) {
  cf_offer o;
  memset(&o, 0, sizeof o);
  cf_offer_claim(&o, VYRE_OP_INVOCATION_ID, 0);
  cf_offer_claim(&o, VYRE_OP_LOAD, 0);
  cf_offer_claim(&o, VYRE_OP_STORE, 0);
  cf_offer_claim(&o, VYRE_OP_ADD, VYRE_TBIT(VYRE_T_U32));
  o.storage_types = VYRE_TBIT(VYRE_T_U32) | VYRE_TBIT(VYRE_T_U64) | VYRE_TBIT(VYRE_T_F32);
  return o;
}

/* Each op is needed at the type it is claimed at: the result type, the
 * operand type for compares and predicates, none for statements. */
START_TEST(test_needs_op_types) {
  vyre_needs n;
  needs_of(add_f32, &n);
  ck_assert_msg(n.op_types[VYRE_OP_ADD] == VYRE_TBIT(VYRE_T_F32), "add is used at f32: 0x%x",
                n.op_types[VYRE_OP_ADD]);
  ck_assert_msg(n.op_types[VYRE_OP_LOAD] == VYRE_TBIT(VYRE_T_F32) &&
                    n.op_types[VYRE_OP_INVOCATION_ID] == VYRE_TBIT(VYRE_T_U32),
                "load at its result type f32, gid at u32");
  ck_assert_msg(n.op_types[VYRE_OP_STORE] == 0 && VYRE_NEEDS_HAS_OP(&n, VYRE_OP_STORE),
                "store is needed, at no type (a statement)");
  needs_of("workgroup 4\nbuffer a ro i32 [4]\nbuffer b ro u8 [4]\nbuffer out wo u32 [4]\n"
           "%i = gid.x\n%x = load a %i\n%z = const i32 0\n%c = lt %x %z\n"
           "%w = load b %i\n%f = cast f32 %w\n%nan = isnan %f\n"
           "if %c\nstore out %i %w\nelse\nstore out %i %i\nend\n",
           &n);
  ck_assert_msg(n.op_types[VYRE_OP_LT] == VYRE_TBIT(VYRE_T_I32),
                "a compare is needed at its operand type i32, not at bool: 0x%x",
                n.op_types[VYRE_OP_LT]);
  ck_assert_msg(n.op_types[VYRE_OP_ISNAN] == VYRE_TBIT(VYRE_T_F32), "a predicate at its operand type");
  ck_assert_msg(n.op_types[VYRE_OP_CAST] == VYRE_TBIT(VYRE_T_F32), "a cast at its target type");
  ck_assert_msg(n.op_types[VYRE_OP_LOAD] == (VYRE_TBIT(VYRE_T_I32) | VYRE_TBIT(VYRE_T_U32)),
                "a u8 load is a load at u32 (its widened type); the u8 is a storage type");
  ck_assert_msg(n.storage_types == (VYRE_TBIT(VYRE_T_I32) | VYRE_TBIT(VYRE_T_U8) | VYRE_TBIT(VYRE_T_U32)),
                "the storage types of the buffers");
  ck_assert_msg(VYRE_NEEDS_HAS_OP(&n, VYRE_OP_ELSE) && n.op_types[VYRE_OP_ELSE] == 0 &&
                    n.op_types[VYRE_OP_IF] == 0,
                "if and else are needed, at no type");
  ck_assert_msg(!(n.capabilities & (VYRE_CAP_INT64 | VYRE_CAP_OUT_RANGE)), "no 64-bit value, no range");
}
END_TEST

/* int64: an instruction of type u64/i64; out_range: a ranged output. */
START_TEST(test_needs_int64_out_range) {
  vyre_needs n;
  needs_of("workgroup 4\nbuffer a ro u64 [4]\nbuffer out wo u64 [4]\n"
           "%i = gid.x\n%x = load a %i\nstore out %i %x\n", &n);
  ck_assert_msg(n.capabilities & VYRE_CAP_INT64, "loading a u64 makes a u64 value: int64");
  needs_of("workgroup 4\nbuffer a ro i32 [4]\nbuffer out wo i64 [4]\n"
           "%i = gid.x\n%x = load a %i\n%y = cast i64 %x\nstore out %i %y\n", &n);
  ck_assert_msg(n.capabilities & VYRE_CAP_INT64, "a cast to i64 makes an i64 value: int64");
  needs_of("workgroup 4\nbuffer a ro u64 [4]\nbuffer out wo u32 [4]\n"
           "%i = gid.x\n%n = buflen a\nstore out %i %n\n", &n);
  ck_assert_msg(!(n.capabilities & VYRE_CAP_INT64) && (n.storage_types & VYRE_TBIT(VYRE_T_U64)),
                "a u64 buffer no instruction reads needs its storage type only");
  needs_of("workgroup 16\nbuffer out wo u32 [16] range 8 16\n"
           "%i = gid.x\nstore out %i %i\n", &n);
  ck_assert_msg(n.capabilities & VYRE_CAP_OUT_RANGE, "an output range: out_range");
  ck_assert_msg(!(n.capabilities & VYRE_CAP_INT64), "no 64-bit value");
}
END_TEST

/* An offer covers a case only at the types it claims; the reason names
 * everything missing. */
START_TEST(test_offer_covers_types) {
  cf_offer o = small_offer();
  vyre_needs n;
  char why[512];
  needs_of("workgroup 4\nbuffer a ro u32 [4]\nbuffer out wo u32 [4]\n"
           "%i = gid.x\n%x = load a %i\nstore out %i %x\n", &n);
  ck_assert_msg(cf_offer_covers(&o, &n, why, sizeof why) && why[0] == '\0',
                "a u32 copy is covered: %s", why);
  needs_of("workgroup 4\nbuffer a ro u32 [4]\nbuffer out wo u32 [4]\n"
           "%i = gid.x\n%x = load a %i\n%y = add %x %x\nstore out %i %y\n", &n);
  ck_assert_msg(cf_offer_covers(&o, &n, why, sizeof why), "add at u32 is claimed: %s", why);
  needs_of(add_f32, &n);
  ck_assert_msg(!cf_offer_covers(&o, &n, why, sizeof why), "add at f32 is not claimed");
  ck_assert_msg(strcmp(why, "op add not claimed at f32") == 0, "the reason names op and type: %s", why);
  cf_offer_claim(&o, VYRE_OP_ADD, 0);
  ck_assert_msg(cf_offer_covers(&o, &n, why, sizeof why), "a 0 mask claims every type: %s", why);
  o = small_offer();
  needs_of("workgroup 4\nbuffer a ro u64 [4]\nbuffer b ro i8 [4]\nbuffer out wo u64 [4] range 0 8\n"
           "%i = gid.x\n%x = load a %i\n%y = sub %x %x\nstore out %i %y\n", &n);
  ck_assert_msg(!cf_offer_covers(&o, &n, why, sizeof why), "sub, int64, out_range, i8 missing");
  ck_assert_msg(strcmp(why, "op sub not claimed; capability int64 not offered; capability "
                            "out_range not offered; storage type i8 not offered") == 0,
                "every missing need is named: %s", why);
  o.caps = VYRE_CAP_INT64 | VYRE_CAP_OUT_RANGE;
  o.storage_types |= VYRE_TBIT(VYRE_T_I8);
  cf_offer_claim(&o, VYRE_OP_SUB, VYRE_TBIT(VYRE_T_U64) | VYRE_TBIT(VYRE_T_U8));
  ck_assert_msg(o.op_types[VYRE_OP_SUB] == VYRE_TBIT(VYRE_T_U64), "types sub cannot have are dropped");
  ck_assert_msg(cf_offer_covers(&o, &n, why, sizeof why), "now covered: %s", why);
  char tiny[8];
  o = small_offer();
  ck_assert_msg(!cf_offer_covers(&o, &n, tiny, sizeof tiny) && strlen(tiny) < sizeof tiny,
                "a short buffer is cut, the answer stays 0");
  ck_assert_msg(!cf_offer_covers(&o, &n, NULL, 0), "no buffer at all");
}
END_TEST

/* Write case files {relative path, text} under tmp("corpus"). */
static void write_corpus(const char *const (*files)[2], size_t count) {
  vyre_error err = VYRE_ERROR_INIT;
  for (size_t k = 0; k < count; k++) {
    char path[PATH_MAX], dir[PATH_MAX];
    FORMAT(path, sizeof path, "%s/%s", tmp("corpus"), files[k][0]);
    FORMAT(dir, sizeof dir, "%s", path);
    *strrchr(dir, '/') = '\0';
    ck_assert_msg(cf_mkdirs(dir, &err) == VYRE_OK, "%s", err.message);
    ck_assert_msg(vyre__file_write_atomic(path, files[k][1], strlen(files[k][1]), 0666, &err) == VYRE_OK, "%s",
                  err.message);
  }
}

/* vyre conform over tmp("corpus") with the reference standing in for a
 * backend that claims `offer`; the exit status, and what it printed in
 * out[] (NUL-terminated). */
static int conform_with_offer(const cf_offer *offer, const char *certificate, char *out,
                              size_t size) {
  vyre_backend *ref = reference();
  cf_target t;
  memset(&t, 0, sizeof t);
  snprintf(t.id, sizeof t.id, "small");
  snprintf(t.version, sizeof t.version, "0.0.1");
  snprintf(t.path, sizeof t.path, "%s", build_path("host-stub/ref/.libs/libvyre-ref.so"));
  t.loaded = 1;
  t.abi_major = VYRE_ABI_MAJOR;
  t.abi_minor = VYRE_ABI_MINOR;
  t.registration_size = sizeof(vyre_registration);
  t.vtable_size = sizeof(vyre_backend_vtable);
  t.offer = *offer;
  t.backend = ref;
  FILE *f = tmpfile();
  ck_assert_msg(f != NULL, "tmpfile: %s", strerror(errno));
  cf_options o;
  memset(&o, 0, sizeof o);
  o.corpus_dir = tmp("corpus");
  o.capsule_dir = tmp("caps");
  o.json_path = tmp("report.json");
  o.certificate_path = certificate;
  o.tool_version = "check_conform";
  o.verbose = 1;
  o.out = f;
  vyre_error err = VYRE_ERROR_INIT;
  int rc = cf_conform_run(&o, &t, 1, ref, &err);
  rewind(f);
  size_t n = fread(out, 1, size - 1, f);
  out[n] = '\0';
  fclose(f);
  ref->vt->destroy(ref);
  return rc;
}

static const char *const small_corpus[][2] = {
    {"ops/add.u32.vyre", ";@ ops add\n;@ input a iota 4\n"
                         "workgroup 4\nbuffer a ro u32 [4]\nbuffer out wo u32 [4]\n"
                         "%i = gid.x\n%x = load a %i\n%y = add %x %x\nstore out %i %y\n"},
    {"ops/add.f32.vyre", ";@ ops add\n;@ input a values 1.5 2 3 4\n"
                         "workgroup 4\nbuffer a ro f32 [4]\nbuffer out wo f32 [4]\n"
                         "%i = gid.x\n%x = load a %i\n%y = add %x %x\nstore out %i %y\n"},
    {"memory/copy.u64.vyre", ";@ input a values 1 2 3 max\n"
                             "workgroup 4\nbuffer a ro u64 [4]\nbuffer out wo u64 [4]\n"
                             "%i = gid.x\n%x = load a %i\nstore out %i %x\n"},
    {"memory/range.vyre", "workgroup 4\nbuffer out wo u32 [4] range 4 8\n"
                          "%i = gid.x\nstore out %i %i\n"},
    {"control/ifelse.vyre", "workgroup 4\nbuffer out wo u32 [4]\n"
                            "%i = gid.x\n%two = const u32 2\n%c = lt %i %two\n"
                            "if %c\nstore out %i %two\nelse\nstore out %i %i\nend\n"},
};

/* A backend claiming add at u32 only, no int64 and no out_range, and the
 * structural ops if/else/end without lt: the cases needing more are
 * skipped (not failed), and the ops only those cases contain are
 * unreachable within its claimed subset, which is not a failure. */
START_TEST(test_conform_small_backend) {
  write_corpus(small_corpus, sizeof small_corpus / sizeof small_corpus[0]);
  cf_offer offer = small_offer();
  cf_offer_claim(&offer, VYRE_OP_CONST, VYRE_TBIT(VYRE_T_U32));
  cf_offer_claim(&offer, VYRE_OP_IF, 0);
  cf_offer_claim(&offer, VYRE_OP_ELSE, 0);
  cf_offer_claim(&offer, VYRE_OP_END, 0);
  static char out[65536];
  int rc = conform_with_offer(&offer, tmp("cert.json"), out, sizeof out);
  ck_assert_msg(rc == 0, "nothing the backend claims fails: exit %d\n%s", rc, out);
  const char *want[] = {
      "ops/add.u32", "pass",
      "ops/add.f32", "skip: unsupported: op add not claimed at f32",
      "memory/copy.u64", "skip: unsupported: capability int64 not offered",
      "memory/range", "skip: unsupported: capability out_range not offered",
      "control/ifelse", "skip: unsupported: op lt not claimed",
  };
  for (size_t k = 0; k < sizeof want / sizeof want[0]; k += 2) {
    const char *line = strstr(out, want[k]);
    ck_assert_msg(line != NULL, "%s is listed:\n%s", want[k], out);
    const char *eol = strchr(line, '\n');
    const char *hit = strstr(line, want[k + 1]);
    ck_assert_msg(hit && (!eol || hit < eol), "%s: %s\n%s", want[k], want[k + 1], out);
  }
  ck_assert_msg(strstr(out, "unreachable within the claimed subset: else (no case this backend "
                            "runs contains it; e.g. control/ifelse: op lt not claimed)"),
                "else is reported unreachable, with an example:\n%s", out);
  ck_assert_msg(strstr(out, "unreachable within the claimed subset: if ") &&
                    strstr(out, "unreachable within the claimed subset: const "),
                "so are if and const:\n%s", out);
  ck_assert_msg(!strstr(out, "UNTESTED") && !strstr(out, "FAIL"), "and none is a failure:\n%s", out);
  ck_assert_msg(!strstr(out, "subset: add") && !strstr(out, "subset: load"), "add and load ran");
  ck_assert_msg(strstr(out, "CERTIFIED (1 passed, 0 failed, 4 skipped; 0 ops failed, 0 untested, "
                            "4 unreachable)"),
                "certified, with the unreachable ops counted:\n%s", out);
  char *text = NULL;
  size_t size = 0;
  vyre_error err = VYRE_ERROR_INIT;
  ck_assert(vyre__file_read(tmp("cert.json"), CF_MAX_CASE_BYTES, NULL, (void **)&text, &size, &err) == VYRE_OK);
  ck_assert_msg(strstr(text, "{\"id\": 196, \"op\": \"else\", \"result\": \"unreachable\"") &&
                    strstr(text, "\"ops_untested\": 0, \"ops_unreachable\": 4") &&
                    strstr(text, "{\"id\": 16, \"op\": \"add\", \"result\": \"pass\""),
                "the certificate says so:\n%s", text);
  free(text);
  ck_assert(vyre__file_read(tmp("report.json"), CF_MAX_CASE_BYTES, NULL, (void **)&text, &size, &err) == VYRE_OK);
  ck_assert_msg(strstr(text, "\"untested_ops\": 0, \"unreachable_ops\": 4"), "the report too:\n%s", text);
  free(text);
}
END_TEST

/* A strict case with a transcendental on a backend that does not claim
 * correctly_rounded is run, not skipped, and must be refused: the target
 * here is the reference (which computes it) behind an offer without the
 * bit, so the case fails; with the bit it passes. */
static const char *const strict_corpus[][2] = {
    {"ops.strict/exp.vyre", ";@ ulp 0\n;@ ops exp\n;@ input a values 0 1 -1 88.7\n"
                            "workgroup 4\nbuffer a ro f32 [4]\nbuffer out wo f32 [4]\n"
                            "%i = gid.x\n%x = load a %i\n%y = exp %x\nstore out %i %y\n"},
};

START_TEST(test_conform_strict_refusal) {
  write_corpus(strict_corpus, 1);
  cf_offer offer = small_offer();
  cf_offer_claim(&offer, VYRE_OP_EXP, 0);
  offer.caps = VYRE_CAP_TRANSCENDENTAL;
  vyre_needs n;
  cf_case *c = parse_ok(strict_corpus[0][1], "exp.vyre");
  cf_case_needs(c, &n);
  ck_assert_msg(cf_offer_must_refuse(&offer, &n), "transcendental without correctly_rounded: "
                "a refusal case");
  cf_result r;
  memset(&r, 0, sizeof r);
  r.status = VYRE_UNSUPPORTED;
  cf_diff d;
  ck_assert_msg(cf_check_refused(&r, &d), "UNSUPPORTED is the refusal");
  r.status = VYRE_OK;
  ck_assert_msg(!cf_check_refused(&r, &d) && d.kind == CF_DIFF_STATUS &&
                    strstr(d.text, "expected UNSUPPORTED") && strstr(d.text, "correctly_rounded"),
                "OK is not: %s", d.text);
  cf_offer lacking = offer;
  lacking.caps = 0;
  ck_assert_msg(!cf_offer_must_refuse(&lacking, &n), "lacking more than the bit: a skip");
  static char out[65536];
  int rc = conform_with_offer(&offer, tmp("cert.json"), out, sizeof out);
  ck_assert_msg(rc == 1 && strstr(out, "FAIL ops.strict/exp on small: status: expected UNSUPPORTED"),
                "a backend without the bit that computes it anyway fails: exit %d\n%s", rc, out);
  offer.caps |= VYRE_CAP_CORRECTLY_ROUNDED;
  ck_assert_msg(!cf_offer_must_refuse(&offer, &n), "with the bit: an ordinary case");
  rc = conform_with_offer(&offer, tmp("cert.json"), out, sizeof out);
  ck_assert_msg(rc == 0 && !strstr(out, "FAIL"), "with the bit it is compared and agrees: "
                "exit %d\n%s", rc, out);
  cf_case_free(c);
}
END_TEST

/* A claimed op that cases reach but none gives a verdict (the only case
 * with mul fails, blamed on add) is still UNTESTED, and fails the run. */
START_TEST(test_conform_untested_still_fails) {
  static const char *const files[][2] = {
      {"ops/muladd.vyre", ";@ ops add\n;@ input a iota 4\n;@ expect-output out values 9 9 9 9\n"
                          "workgroup 4\nbuffer a ro u32 [4]\nbuffer out wo u32 [4]\n"
                          "%i = gid.x\n%x = load a %i\n%y = mul %x %x\n%z = add %y %x\n"
                          "store out %i %z\n"},
  };
  write_corpus(files, 1);
  cf_offer offer = small_offer();
  cf_offer_claim(&offer, VYRE_OP_MUL, 0);
  static char out[65536];
  int rc = conform_with_offer(&offer, NULL, out, sizeof out);
  ck_assert_msg(rc == 1, "a failing case fails the run: exit %d\n%s", rc, out);
  ck_assert_msg(strstr(out, "UNTESTED: mul is claimed and 1 case containing it ran, but each "
                            "failed on other ops under test"),
                "mul was reached but never judged: untested\n%s", out);
  ck_assert_msg(!strstr(out, "unreachable"), "nothing is unreachable:\n%s", out);
}
END_TEST

/* ------------------------------------------------------------------ */
/* coverage and certificate                                             */
/* ------------------------------------------------------------------ */

START_TEST(test_coverage) {
  cf_case *c = parse_ok(two_in, "cov.vyre");
  cf_coverage *cov = calloc(1, sizeof *cov);
  cf_coverage_add(cov, c->decoded);
  ck_assert_msg(cov->op_type[VYRE_OP_LOAD][VYRE_T_U32] == 1 && cov->op_type[VYRE_OP_STORE][VYRE_T_U32] == 1,
                "load/store of u32 counted");
  ck_assert_msg(cov->axis[0][0] == 1, "gid.x counted");
  cf_opset only = {{0}};
  cf_opset_add(&only, VYRE_OP_LOAD);
  cf_opset_add(&only, VYRE_OP_INVOCATION_ID);
  FILE *f = fopen(tmp("cov.txt"), "w+");
  uint32_t miss = cf_coverage_report(cov, &only, 1u << VYRE_T_U32, 0, f, 1);
  ck_assert_msg(miss == 2, "gid.y and gid.z are missing, load u32 is covered: %u", miss);
  uint32_t all = cf_coverage_report(cov, NULL, VYRE_TM_STORAGE, ~0ull, NULL, 0);
  ck_assert_msg(all > 300, "nearly everything is missing for the whole format: %u", all);
  fclose(f);
  free(cov);
  cf_case_free(c);
}
END_TEST

/* A small JSON validator: values, objects, arrays, strings, numbers,
 * true/false/null.  Returns the position after the value, or NULL. */
static const char *json_value(const char *s);
static const char *json_ws(const char *s) {
  while (*s == ' ' || *s == '\n' || *s == '\t' || *s == '\r') s++;
  return s;
}
static const char *json_string(const char *s) {
  if (*s != '"') return NULL;
  for (s++; *s && *s != '"'; s++)
    if (*s == '\\' && !*++s) return NULL;
  return *s == '"' ? s + 1 : NULL;
}
static const char *json_value(const char *s) {
  s = json_ws(s);
  if (*s == '{' || *s == '[') {
    char close = *s == '{' ? '}' : ']';
    s = json_ws(s + 1);
    if (*s == close) return s + 1;
    for (;;) {
      if (close == '}') {
        s = json_string(json_ws(s));
        if (!s) return NULL;
        s = json_ws(s);
        if (*s++ != ':') return NULL;
      }
      s = json_value(s);
      if (!s) return NULL;
      s = json_ws(s);
      if (*s == ',') {
        s++;
        continue;
      }
      return *s == close ? s + 1 : NULL;
    }
  }
  if (*s == '"') return json_string(s);
  if (!strncmp(s, "true", 4)) return s + 4;
  if (!strncmp(s, "false", 5)) return s + 5;
  if (!strncmp(s, "null", 4)) return s + 4;
  char *end = NULL;
  strtod(s, &end);
  return end && end != s ? end : NULL;
}

START_TEST(test_certificate_shape) {
  cf_opset claimed = {{0}};
  cf_op_tally ops[256];
  memset(ops, 0, sizeof ops);
  cf_opset_add(&claimed, VYRE_OP_ADD);
  cf_opset_add(&claimed, VYRE_OP_SIN);
  cf_opset_add(&claimed, VYRE_OP_MUL);
  ops[VYRE_OP_ADD].passed = 5;
  ops[VYRE_OP_SIN].failed = 1;
  ops[VYRE_OP_SIN].passed = 2;
  ops[VYRE_OP_MUL].reached = 1;        /* reached, no verdict: untested */
  cf_opset_add(&claimed, VYRE_OP_ELSE); /* reached by no case: unreachable */
  vyre_device_profile prof;
  memset(&prof, 0, sizeof prof);
  snprintf(prof.name, sizeof prof.name, "Test \"GPU\"");
  prof.compute_major = 9;
  prof.capabilities = VYRE_CAP_SUBGROUP;
  cf_cert_input in = {0};
  in.plugin_path = build_path("host-stub/ref/.libs/libvyre-ref.so");
  in.backend_id = "mock";
  in.backend_version = "1.2.3";
  in.build_id = "build";
  in.abi_major = 1;
  in.profile = &prof;
  in.corpus_dir = "tests/conformance";
  in.corpus_hash = "abc";
  in.claimed = &claimed;
  in.claimed_caps = VYRE_CAP_SUBGROUP | VYRE_CAP_TRAP;
  in.claimed_storage = 1u << VYRE_T_F32;
  in.ops = ops;
  in.passed = 7;
  in.failed = 1;
  in.total = 8;
  in.elf_ok = in.static_ok = 1;
  in.date_utc = "2026-01-02T03:04:05Z";
  in.tool_version = "vyre-cuda test";
  vyre_error err = VYRE_ERROR_INIT;
  ck_assert_msg(cf_certificate_write(tmp("cert.json"), &in, &err) == VYRE_OK, "%s", err.message);
  char *text = NULL;
  size_t size = 0;
  ck_assert(vyre__file_read(tmp("cert.json"), CF_MAX_CASE_BYTES, NULL, (void **)&text, &size, &err) == VYRE_OK);
  const char *end = json_value(text);
  ck_assert_msg(end && *json_ws(end) == '\0', "the certificate is one well-formed JSON value:\n%s", text);
  char sha[65];
  ck_assert(cf_sha256_file(in.plugin_path, sha, &err) == VYRE_OK);
  const char *keys[] = {"\"schema\": \"vyre-conformance-certificate/1\"",
                        "\"date_utc\": \"2026-01-02T03:04:05Z\"",
                        "\"certified\": false",
                        "\"id\": \"mock\"",
                        "\"version\": \"1.2.3\"",
                        "\"abi_major\": 1",
                        "\"name\": \"Test \\\"GPU\\\"\"",
                        "\"compute_capability\": \"9.0\"",
                        "\"sha256\": \"abc\"",
                        "\"capabilities\": [\"subgroup\", \"trap\"]",
                        "\"storage_types\": [\"f32\"]",
                        "\"ops\": [\"add\", \"mul\", \"sin\", \"else\"]",
                        "{\"id\": 16, \"op\": \"add\", \"result\": \"pass\"",
                        "{\"id\": 84, \"op\": \"sin\", \"result\": \"fail\"",
                        "{\"id\": 18, \"op\": \"mul\", \"result\": \"untested\"",
                        "{\"id\": 17, \"op\": \"sub\", \"result\": \"not-claimed\"",
                        "{\"id\": 196, \"op\": \"else\", \"result\": \"unreachable\"",
                        "\"ops_failed\": 1, \"ops_untested\": 1, \"ops_unreachable\": 1"};
  for (size_t k = 0; k < sizeof keys / sizeof keys[0]; k++)
    ck_assert_msg(strstr(text, keys[k]) != NULL, "the certificate holds %s:\n%s", keys[k], text);
  ck_assert_msg(strstr(text, sha) != NULL, "the certificate holds the plugin's sha256 %s", sha);
  free(text);
  /* All claimed ops passing and no failure: certified. */
  ops[VYRE_OP_SIN].failed = 0;
  ops[VYRE_OP_MUL].passed = 1;
  in.failed = 0;
  ck_assert(cf_certificate_write(tmp("cert2.json"), &in, &err) == VYRE_OK);
  ck_assert(vyre__file_read(tmp("cert2.json"), CF_MAX_CASE_BYTES, NULL, (void **)&text, &size, &err) == VYRE_OK);
  ck_assert_msg(strstr(text, "\"certified\": true"),
                "everything claimed and reached passed (else is unreachable): certified");
  free(text);
  in.elf_ok = 0;
  ck_assert(cf_certificate_write(tmp("cert3.json"), &in, &err) == VYRE_OK);
  ck_assert(vyre__file_read(tmp("cert3.json"), CF_MAX_CASE_BYTES, NULL, (void **)&text, &size, &err) == VYRE_OK);
  ck_assert_msg(strstr(text, "\"certified\": false"), "bad exports: not certified");
  free(text);
}
END_TEST

/* Strings in a certificate go through the one JSON writer
 * (abi/support/json.h): short escapes for \b and \f, U+FFFD for bytes
 * that are not UTF-8. */
START_TEST(test_certificate_escapes) {
  cf_opset claimed = {{0}};
  cf_op_tally ops[256];
  memset(ops, 0, sizeof ops);
  cf_cert_input in = {0};
  in.backend_id = "mock";
  in.backend_version = "1";
  in.corpus_dir = "tests/conformance";
  in.corpus_hash = "abc";
  in.claimed = &claimed;
  in.ops = ops;
  in.static_note = "bell\b form\f tab\t bad\xff end";
  in.date_utc = "2026-01-02T03:04:05Z";
  in.tool_version = "vyre-cuda test";
  vyre_error err = VYRE_ERROR_INIT;
  ck_assert_msg(cf_certificate_write(tmp("esc.json"), &in, &err) == VYRE_OK, "%s", err.message);
  char *text = NULL;
  size_t size = 0;
  ck_assert(vyre__file_read(tmp("esc.json"), CF_MAX_CASE_BYTES, NULL, (void **)&text, &size, &err) == VYRE_OK);
  const char *end = json_value(text);
  ck_assert_msg(end && *json_ws(end) == '\0', "one well-formed JSON value:\n%s", text);
  ck_assert_msg(strstr(text, "\"static_note\": \"bell\\b form\\f tab\\t bad\\ufffd end\""),
                "control characters and a stray byte escaped by the JSON writer:\n%s", text);
  free(text);
}
END_TEST

/* A certificate replaces its file whole (abi/support/file.h): a link
 * at the path is replaced, not written through, and a directory that
 * does not exist fails with nothing left behind. */
START_TEST(test_certificate_atomic) {
  cf_opset claimed = {{0}};
  cf_op_tally ops[256];
  memset(ops, 0, sizeof ops);
  cf_cert_input in = {0};
  in.backend_id = "mock";
  in.backend_version = "1";
  in.claimed = &claimed;
  in.ops = ops;
  in.date_utc = "2026-01-02T03:04:05Z";
  vyre_error err = VYRE_ERROR_INIT;
  ck_assert(vyre__file_write_atomic(tmp("target"), "keep", 4, 0666, &err) == VYRE_OK);
  ck_assert(symlink(tmp("target"), tmp("link.json")) == 0);
  ck_assert_msg(cf_certificate_write(tmp("link.json"), &in, &err) == VYRE_OK, "%s", err.message);
  char *text = NULL;
  size_t size = 0;
  ck_assert(vyre__file_read(tmp("target"), 100, NULL, (void **)&text, &size, &err) == VYRE_OK);
  ck_assert_msg(size == 4 && memcmp(text, "keep", 4) == 0,
                "the file a link at the path names is untouched");
  free(text);
  struct stat st;
  ck_assert_msg(lstat(tmp("link.json"), &st) == 0 && S_ISREG(st.st_mode),
                "the path now holds the certificate itself");
  ck_assert_msg(cf_certificate_write(tmp("no/such/dir/cert.json"), &in, &err) == VYRE_IO &&
                    strstr(err.message, "cannot create") && strstr(err.message, "Fix:"),
                "a missing directory: %s", err.message);
}
END_TEST

/* ------------------------------------------------------------------ */
/* fuzz                                                                 */
/* ------------------------------------------------------------------ */

START_TEST(test_fuzz_deterministic_and_valid) {
  for (uint64_t i = 0; i < 200; i++) {
    fz_program a, b;
    vyre_error err = VYRE_ERROR_INIT;
    ck_assert_msg(fz_generate(11, i, 0, &a, &err) == VYRE_OK, "program %llu: %s", (unsigned long long)i, err.message);
    ck_assert(fz_generate(11, i, 0, &b, &err) == VYRE_OK);
    ck_assert_msg(a.size == b.size && memcmp(a.bytes, b.bytes, a.size) == 0 &&
                      a.input_count == b.input_count,
                  "program %llu is the same every time", (unsigned long long)i);
    for (uint32_t k = 0; k < a.input_count; k++)
      ck_assert_msg(a.inputs[k].size == b.inputs[k].size &&
                        memcmp(a.inputs[k].data, b.inputs[k].data, a.inputs[k].size) == 0,
                    "inputs of program %llu are the same every time", (unsigned long long)i);
    vyre_program *p = NULL;
    ck_assert_msg(vyre_program_decode(a.bytes, a.size, &p, &err) == VYRE_OK, "valid: %s", err.message);
    vyre_program_free(p);
    fz_program_free(&a);
    fz_program_free(&b);
  }
  fz_program a, b;
  vyre_error err = VYRE_ERROR_INIT;
  ck_assert(fz_generate(11, 0, 0, &a, &err) == VYRE_OK && fz_generate(12, 0, 0, &b, &err) == VYRE_OK);
  ck_assert_msg(a.size != b.size || memcmp(a.bytes, b.bytes, a.size) != 0, "seeds differ");
  fz_program_free(&a);
  fz_program_free(&b);
}
END_TEST

START_TEST(test_fuzz_flags) {
  uint32_t flags = PROGEN_NO_ATOMICS | PROGEN_NO_SUBGROUP | PROGEN_NO_F16 | PROGEN_NO_BF16 | PROGEN_NO_TRANSCENDENTAL |
                   PROGEN_NO_GRID_BARRIER | PROGEN_NO_TRAP | PROGEN_NO_WORKGROUP_MEMORY | PROGEN_NO_MMA;
  for (uint64_t i = 0; i < 300; i++) {
    fz_program a;
    vyre_error err = VYRE_ERROR_INIT;
    ck_assert(fz_generate(5, i, flags, &a, &err) == VYRE_OK);
    vyre_program *p = NULL;
    ck_assert(vyre_program_decode(a.bytes, a.size, &p, &err) == VYRE_OK);
    uint32_t bad = VYRE_FEAT_ATOMIC | VYRE_FEAT_SUBGROUP | VYRE_FEAT_F16 | VYRE_FEAT_BF16 |
                   VYRE_FEAT_TRANSCENDENTAL | VYRE_FEAT_GRID_BARRIER | VYRE_FEAT_TRAP |
                   VYRE_FEAT_WORKGROUP_MEMORY | VYRE_FEAT_BARRIER | VYRE_FEAT_MMA;
    ck_assert_msg((p->features & bad) == 0, "program %llu uses excluded features %#x",
                  (unsigned long long)i, p->features & bad);
    ck_assert_msg(a.options.ulp_budget == 0, "no transcendental, strict budget");
    vyre_program_free(p);
    fz_program_free(&a);
  }
  /* Without flags the generator reaches every feature somewhere. */
  uint32_t seen = 0;
  for (uint64_t i = 0; i < 400; i++) {
    fz_program a;
    vyre_error err = VYRE_ERROR_INIT;
    ck_assert(fz_generate(5, i, 0, &a, &err) == VYRE_OK);
    vyre_program *p = NULL;
    ck_assert(vyre_program_decode(a.bytes, a.size, &p, &err) == VYRE_OK);
    seen |= p->features;
    vyre_program_free(p);
    fz_program_free(&a);
  }
  uint32_t want = VYRE_FEAT_ATOMIC | VYRE_FEAT_ATOMIC64 | VYRE_FEAT_SUBGROUP | VYRE_FEAT_F16 |
                  VYRE_FEAT_BF16 | VYRE_FEAT_TRANSCENDENTAL | VYRE_FEAT_GRID_BARRIER |
                  VYRE_FEAT_TRAP | VYRE_FEAT_WORKGROUP_MEMORY | VYRE_FEAT_BARRIER |
                  VYRE_FEAT_RETURN | VYRE_FEAT_LOOP | VYRE_FEAT_MMA;
  ck_assert_msg((seen & want) == want, "400 programs reach every feature (missing %#x)", want & ~seen);
}
END_TEST

/* Races would make results depend on scheduling: run each program on a
 * one-thread and a two-thread reference and demand identical results. */
/* The race-free shape's rules that can be read off the program: the
 * contended accumulator `acc` is never loaded (its contents depend on the
 * order of the atomics); workgroup memory (`tile`, `wacc`) is loaded only
 * after a workgroup barrier and grid scratch (`gsc`) only after a grid
 * barrier; MMA outputs (`mo*`) are never loaded, MMA workgroup tiles
 * (`mt*`) only after the barrier.  NULL, or what is broken. */
static const char *race_free_rule_broken(const void *bytes, size_t size) {
  vyre_program *p = NULL;
  vyre_error err = VYRE_ERROR_INIT;
  if (vyre_program_decode(bytes, size, &p, &err) != VYRE_OK) return "the program does not decode";
  const char *broken = NULL;
  int wg_barrier = 0, grid_barrier = 0;
  for (uint32_t i = 0; i < p->inst_count && !broken; i++) {
    const vyre_inst *in = &p->insts[i];
    if (in->op == VYRE_OP_BARRIER) {
      wg_barrier = 1;
      grid_barrier |= in->mod == VYRE_BARRIER_GRID;
    }
    if (in->op == VYRE_OP_MMA_LOAD && !strncmp(p->buffers[in->b].name, "mt", 2) && !wg_barrier)
      broken = "an mma_load of a workgroup tile before the barrier";
    if (in->op == VYRE_OP_MMA_LOAD && !strncmp(p->buffers[in->b].name, "mo", 2))
      broken = "an mma_load of an MMA output";
    if (in->op != VYRE_OP_LOAD) continue;
    const char *name = p->buffers[in->a].name;
    if (strcmp(name, "acc") == 0) broken = "a load of the contended accumulator acc";
    else if (strncmp(name, "mo", 2) == 0) broken = "a load of an MMA output (float ones are only bounded)";
    else if ((!strcmp(name, "tile") || !strcmp(name, "wacc")) && !wg_barrier)
      broken = "a load of workgroup memory before the barrier";
    else if (!strcmp(name, "gsc") && !grid_barrier)
      broken = "a load of grid scratch before the grid barrier";
  }
  vyre_program_free(p);
  return broken;
}

START_TEST(test_fuzz_race_free_on_reference) {
  setenv("VYRE_REF_THREADS", "1", 1);
  vyre_backend *one = reference();
  setenv("VYRE_REF_THREADS", "2", 1);
  vyre_backend *two = reference();
  unsetenv("VYRE_REF_THREADS");
  uint32_t traps = 0;
  for (uint64_t i = 0; i < 300; i++) {
    fz_program a;
    vyre_error err = VYRE_ERROR_INIT;
    ck_assert(fz_generate(3, i, 0, &a, &err) == VYRE_OK);
    const char *broken = race_free_rule_broken(a.bytes, a.size);
    ck_assert_msg(broken == NULL, "program %llu keeps the race-free rules: %s",
                  (unsigned long long)i, broken ? broken : "");
    cf_case *c = NULL;
    ck_assert(cf_case_from_program(a.bytes, a.size, a.inputs, &a.options, "p", "fuzz", &c, &err) == VYRE_OK);
    cf_result r1, r2;
    cf_run(one, c, &r1);
    cf_run(two, c, &r2);
    ck_assert_msg(r1.status == VYRE_OK || r1.status == VYRE_TRAP, "program %llu runs on the reference: %s",
                  (unsigned long long)i, r1.message);
    traps += r1.status == VYRE_TRAP;
    cf_diff d;
    ck_assert_msg(cf_compare(c, &r1, &r2, &d), "program %llu gives the same results on 1 and 2 threads: %s\n%s",
                  (unsigned long long)i, d.text, c->text);
    cf_result_free(&r1);
    cf_result_free(&r2);
    cf_case_free(c);
    fz_program_free(&a);
  }
  ck_assert_msg(traps < 60, "traps stay rare (%u of 300)", traps);
  one->vt->destroy(one);
  two->vt->destroy(two);
}
END_TEST

/* Output k's f32 element e of r moved `by` away (bits re-read as f32). */
static void move_f32(cf_result *r, uint32_t k, uint64_t e, double by) {
  float v;
  memcpy(&v, r->output[k].bytes + 4 * e, 4);
  v = (float)((double)v + by);
  memcpy(r->output[k].bytes + 4 * e, &v, 4);
}

/* The first finite float-MMA element of r (finite bound), or 0. */
static int first_bounded(const cf_result *r, uint32_t *k, uint64_t *e) {
  for (*k = 0; *k < r->output_count; (*k)++) {
    for (*e = 0; r->bound[*k] && *e < r->bound_count[*k] && *e < r->output[*k].size / 4; (*e)++) {
      float v;
      memcpy(&v, r->output[*k].bytes + 4 * *e, 4);
      double b = r->bound[*k][*e];
      if (b > 0 && isfinite(b) && isfinite(v) && fabs(v) < 1e30) return 1;
    }
  }
  return 0;
}

/* --mma: every program has MMA sections in whole subgroups, keeps the
 * race-free rules, and together they reach the four ops, the four A/B
 * types, both layouts, workgroup tiles and K loops.  On the reference
 * against itself they agree; moving a float-MMA element past its bound is
 * a mismatch, half the bound is not; an integer MMA output off by one is. */
START_TEST(test_fuzz_mma) {
  vyre_backend *ref = reference();
  uint32_t ops = 0, comps = 0, layouts = 0, wg_tile = 0, in_loop = 0, caught = 0, kept = 0,
           caught_int = 0;
  for (uint64_t i = 0; i < 120; i++) {
    fz_program a;
    vyre_error err = VYRE_ERROR_INIT;
    ck_assert_msg(fz_generate(7, i, PROGEN_MMA, &a, &err) == VYRE_OK, "program %llu: %s",
                  (unsigned long long)i, err.message);
    vyre_program *p = NULL;
    ck_assert(vyre_program_decode(a.bytes, a.size, &p, &err) == VYRE_OK);
    const uint32_t *wg = p->header.workgroup_size;
    ck_assert_msg((p->features & VYRE_FEAT_MMA) && (wg[0] * wg[1] * wg[2]) % 32 == 0,
                  "program %llu has MMA ops, in whole subgroups", (unsigned long long)i);
    const char *broken = race_free_rule_broken(a.bytes, a.size);
    ck_assert_msg(!broken, "program %llu: %s", (unsigned long long)i, broken ? broken : "");
    int fl = cf_program_has_float_mma(p), in_t = 0;
    ck_assert_msg(!fl || a.options.ulp_budget >= 1, "a float mma carries a ulp budget");
    for (uint32_t k = 0; k < p->inst_count; k++) {
      const vyre_inst *in = &p->insts[k];
      if (in->op < VYRE_OP_MMA_FILL || in->op > VYRE_OP_MMA_STORE) continue;
      ops |= 1u << (in->op - VYRE_OP_MMA_FILL);
      if (in->op == VYRE_OP_MMA) {
        comps |= VYRE_TBIT(in->type);
        in_t |= in->type == VYRE_T_I8 || in->type == VYRE_T_U8;
        in_loop |= p->depth[k] > 0;
      }
      if (in->op == VYRE_OP_MMA_LOAD || in->op == VYRE_OP_MMA_STORE) layouts |= 1u << in->mod;
      if (in->op == VYRE_OP_MMA_LOAD)
        wg_tile |= p->buffers[in->b].decl.access == VYRE_ACCESS_WORKGROUP;
    }
    cf_case *c = NULL;
    ck_assert(cf_case_from_program(a.bytes, a.size, a.inputs, &a.options, "p", "fuzz", &c, &err) == VYRE_OK);
    cf_result want, got;
    cf_diff d;
    cf_run_reference(ref, c, &want);
    cf_run(ref, c, &got);
    ck_assert_msg(want.status == VYRE_OK || want.status == VYRE_TRAP, "program %llu runs: %s",
                  (unsigned long long)i, want.message);
    ck_assert_msg(cf_compare(c, &want, &got, &d), "program %llu agrees with itself: %s",
                  (unsigned long long)i, d.text);
    uint32_t k;
    uint64_t e;
    if (want.status == VYRE_OK && first_bounded(&want, &k, &e)) {
      double b = want.bound[k][e];
      move_f32(&got, k, e, b / 2);
      kept += cf_compare(c, &want, &got, &d);
      move_f32(&got, k, e, 2 * b);
      int miss = !cf_compare(c, &want, &got, &d);
      ck_assert_msg(miss && d.bound == b && strstr(d.text, "MMA bound"),
                    "program %llu: 2.5 bounds off is a mismatch naming the bound: %s",
                    (unsigned long long)i, d.text);
      caught++;
    }
    for (uint32_t b = 0; in_t && want.status == VYRE_OK && b < p->buffer_count; b++) {
      int32_t o = p->buffers[b].output_index;
      if (o < 0 || strncmp(p->buffers[b].name, "mo", 2) || p->buffers[b].decl.elem_type != VYRE_T_I32)
        continue;
      got.output[o].bytes[0] ^= 1;
      ck_assert_msg(!cf_compare(c, &want, &got, &d), "an integer MMA result off by one is a mismatch");
      got.output[o].bytes[0] ^= 1;
      caught_int++;
      break;
    }
    cf_result_free(&want);
    cf_result_free(&got);
    cf_case_free(c);
    vyre_program_free(p);
    fz_program_free(&a);
  }
  ck_assert_msg(ops == 0xf, "the four MMA ops (got %#x)", ops);
  ck_assert_msg(comps == (VYRE_TBIT(VYRE_T_F16) | VYRE_TBIT(VYRE_T_BF16) | VYRE_TBIT(VYRE_T_I8) |
                          VYRE_TBIT(VYRE_T_U8)),
                "mma at every A/B type (got %#x)", comps);
  ck_assert_msg(layouts == 3 && wg_tile && in_loop, "both layouts (%#x), workgroup tiles (%u), "
                "K loops (%u)", layouts, wg_tile, in_loop);
  ck_assert_msg(caught >= 10 && kept >= caught / 2 && caught_int >= 10,
                "mutations: %u float beyond the bound caught, %u within it kept, %u integer caught",
                caught, kept, caught_int);
  ref->vt->destroy(ref);
}
END_TEST

START_TEST(test_fuzz_flags_for_offer) {
  cf_offer o;
  memset(&o, 0, sizeof o);
  uint32_t f = fz_flags_for(&o);
  ck_assert_msg((f & (PROGEN_NO_ATOMICS | PROGEN_NO_SUBGROUP | PROGEN_NO_F16 | PROGEN_NO_TRANSCENDENTAL | PROGEN_NO_TRAP)) ==
                    (PROGEN_NO_ATOMICS | PROGEN_NO_SUBGROUP | PROGEN_NO_F16 | PROGEN_NO_TRANSCENDENTAL | PROGEN_NO_TRAP),
                "an empty offer excludes everything optional");
  uint32_t n = 0;
  const vyre_op_info *all = vyre_op_all(&n);
  for (uint32_t i = 0; i < n; i++) cf_offer_claim(&o, all[i].id, 0);
  o.caps = ~0ull;
  o.storage_types = ~0ull;
  ck_assert_msg(fz_flags_for(&o) == PROGEN_STRICT_TRANSCENDENTAL,
                "a full offer excludes nothing, and with correctly_rounded asks for strict "
                "transcendentals");
  o.caps &= ~VYRE_CAP_CORRECTLY_ROUNDED;
  ck_assert_msg(fz_flags_for(&o) == 0, "without the bit, transcendentals keep their budget");
}
END_TEST

/* PROGEN_STRICT_TRANSCENDENTAL: about half the programs with a
 * transcendental (and no float mma) run under strict; the programs and
 * inputs are those of a run without the flag. */
START_TEST(test_fuzz_strict_transcendental) {
  uint32_t trans = 0, strict = 0;
  for (uint64_t i = 0; i < 200; i++) {
    fz_program a, b;
    vyre_error err = VYRE_ERROR_INIT;
    ck_assert(fz_generate(9, i, PROGEN_NO_MMA, &a, &err) == VYRE_OK);
    ck_assert(fz_generate(9, i, PROGEN_NO_MMA | PROGEN_STRICT_TRANSCENDENTAL, &b, &err) == VYRE_OK);
    ck_assert_msg(a.size == b.size && memcmp(a.bytes, b.bytes, a.size) == 0 &&
                      a.input_count == b.input_count,
                  "program %llu is the same with the flag", (unsigned long long)i);
    for (uint32_t k = 0; k < a.input_count; k++)
      ck_assert_msg(a.inputs[k].size == b.inputs[k].size &&
                        memcmp(a.inputs[k].data, b.inputs[k].data, a.inputs[k].size) == 0,
                    "so are its inputs (program %llu, input %u)", (unsigned long long)i, k);
    vyre_program *p = NULL;
    ck_assert(vyre_program_decode(a.bytes, a.size, &p, &err) == VYRE_OK);
    if (p->features & VYRE_FEAT_TRANSCENDENTAL) {
      trans++;
      ck_assert_msg(a.options.ulp_budget == 1, "without the flag a transcendental has budget 1");
      ck_assert_msg(b.options.ulp_budget <= 1, "with it, 0 or 1");
      strict += b.options.ulp_budget == 0;
    } else {
      ck_assert_msg(b.options.ulp_budget == 0, "no transcendental: strict either way");
    }
    vyre_program_free(p);
    fz_program_free(&a);
    fz_program_free(&b);
  }
  ck_assert_msg(trans >= 10 && strict >= trans / 4 && strict <= trans * 3 / 4,
                "%u of %u programs with a transcendental run under strict", strict, trans);
}
END_TEST

/* Generating within claims: a full offer gives the programs of a run
 * without claims (so full backends fuzz as before); a small one (const,
 * gid, load, add, store at u32 only) gets programs within it from the
 * first attempt or a later one, and each decodes. */
START_TEST(test_fuzz_claims) {
  cf_offer full;
  memset(&full, 0, sizeof full);
  uint32_t n = 0;
  const vyre_op_info *all = vyre_op_all(&n);
  for (uint32_t i = 0; i < n; i++) cf_offer_claim(&full, all[i].id, 0);
  full.caps = ~0ull;
  full.storage_types = ~0ull;
  progen_claims *claims = malloc(sizeof *claims);
  ck_assert(claims != NULL);
  fz_claims_from(&full, claims);
  vyre_error err = VYRE_ERROR_INIT;
  for (uint64_t i = 0; i < 150; i++) {
    fz_program a, b;
    uint32_t flags = i % 5 == 0 ? PROGEN_MMA : 0;
    ck_assert(fz_generate(21, i, flags, &a, &err) == VYRE_OK);
    ck_assert(fz_generate_claimed(21, i, flags, claims, 0, &b, &err) == VYRE_OK);
    ck_assert_msg(a.size == b.size && memcmp(a.bytes, b.bytes, a.size) == 0,
                  "program %llu: a full offer generates what no claims do", (unsigned long long)i);
    fz_program_free(&a);
    fz_program_free(&b);
  }
  cf_offer small;
  memset(&small, 0, sizeof small);
  static const uint16_t ops[] = {VYRE_OP_CONST, VYRE_OP_INVOCATION_ID, VYRE_OP_LOAD, VYRE_OP_ADD,
                                 VYRE_OP_STORE};
  for (uint32_t i = 0; i < sizeof ops / sizeof ops[0]; i++)
    cf_offer_claim(&small, ops[i], VYRE_TBIT(VYRE_T_U32));
  small.storage_types = VYRE_TBIT(VYRE_T_U32);
  fz_claims_from(&small, claims);
  uint32_t flags = fz_flags_for(&small), within = 0, first = 0, adds = 0;
  for (uint64_t i = 0; i < 200; i++) {
    for (uint32_t k = 0; k < 8; k++) {
      fz_program a;
      ck_assert_msg(fz_generate_claimed(4, i, flags, claims, k, &a, &err) == VYRE_OK, "%s",
                    err.message);
      vyre_program *p = NULL;
      ck_assert_msg(vyre_program_decode(a.bytes, a.size, &p, &err) == VYRE_OK, "%s", err.message);
      vyre_needs needs = {.struct_size = sizeof needs};
      ck_assert_msg(vyre_program_needs(p, &a.options, &needs, &err) == VYRE_OK, "%s", err.message);
      char why[256];
      int ok = cf_offer_covers(&small, &needs, why, sizeof why);
      adds += ok && VYRE_NEEDS_HAS_OP(&needs, VYRE_OP_ADD);
      vyre_program_free(p);
      fz_program_free(&a);
      if (!ok) continue;
      within++;
      first += k == 0;
      break;
    }
  }
  ck_assert_msg(within >= 190, "%u of 200 programs within the small claims (want >= 190)", within);
  ck_assert_msg(first >= 100, "%u of 200 within them at the first attempt", first);
  ck_assert_msg(adds >= 100, "%u of them use add", adds);
  free(claims);
  /* The rule: nothing compared, or more than 10% skipped, fails. */
  ck_assert_msg(!fz_too_many_skipped(300, 0) && !fz_too_many_skipped(300, 30),
                "up to 10%% skipped passes");
  ck_assert_msg(fz_too_many_skipped(300, 31) && fz_too_many_skipped(300, 300) &&
                    fz_too_many_skipped(1, 1) && !fz_too_many_skipped(10, 1) &&
                    fz_too_many_skipped(9, 1),
                "more than 10%% skipped, or all, fails");
}
END_TEST

/* ------------------------------------------------------------------ */
/* ptxas batches                                                        */
/* ------------------------------------------------------------------ */

START_TEST(test_ptxas_batches) {
  const char *ptxas = getenv("PTXAS");
  ck_assert_msg(ptxas && *ptxas, "the ptxas case runs only with $PTXAS (main skips it)");
  fz_ptxas *b = NULL;
  vyre_error err = VYRE_ERROR_INIT;
  ck_assert_msg(fz_ptxas_open(ptxas, "sm_90", tmp("ptx"), &b, &err) == VYRE_OK, "%s", err.message);
  uint32_t with_math = 0;
  for (uint64_t i = 0; i < 30; i++) {
    fz_program a;
    ck_assert(fz_generate(2, i, PROGEN_NO_MMA, &a, &err) == VYRE_OK);
    vyre_program *p = NULL;
    ck_assert(vyre_program_decode(a.bytes, a.size, &p, &err) == VYRE_OK);
    with_math += (p->features & VYRE_FEAT_TRANSCENDENTAL) != 0;
    cg_options co = {9, 0, a.options.ulp_budget, {p->header.workgroup_size[0], p->header.workgroup_size[1],
                                                  p->header.workgroup_size[2]}, 0};
    char *ptx = NULL;
    size_t len = 0;
    cg_kernel_info info;
    ck_assert_msg(cg_emit_ptx(p, &co, &ptx, &len, &info, &err) == VYRE_OK, "%s", err.message);
    ck_assert(fz_ptxas_add(b, ptx, info.entry, "good", &err) == VYRE_OK);
    free(ptx);
    vyre_program_free(p);
    fz_program_free(&a);
  }
  /* A broken kernel in a batch of its own fails alone and is named. */
  const char *broken = "//\n.version 7.8\n.target sm_90\n.address_size 64\n\n.visible .entry broken_k()\n"
                       "{\n\tmov.b32 %nosuchreg, 1;\n\tret;\n}\n";
  ck_assert(fz_ptxas_add(b, broken, "broken_k", "the broken one", &err) == VYRE_OK);
  FILE *log = fopen(tmp("ptxas.log"), "w+");
  uint32_t kernels = 0, failures = 0;
  ck_assert(fz_ptxas_finish(b, log, &kernels, &failures, &err) == VYRE_OK);
  fz_ptxas_close(b);
  ck_assert_msg(kernels == 31 && failures == 1, "31 kernels, only the broken one fails (got %u, %u)",
                kernels, failures);
  ck_assert_msg(with_math >= 2, "some kernels share math subroutines in one batch (%u)", with_math);
  fflush(log);
  rewind(log);
  char buf[8192];
  size_t n = fread(buf, 1, sizeof buf - 1, log);
  buf[n] = '\0';
  fclose(log);
  ck_assert_msg(strstr(buf, "failing kernel: the broken one"), "the report names it:\n%s", buf);
}
END_TEST

static Suite *conform_suite(void) {
  Suite *s = suite_create("conform");
  TCase *tc = tcase_create("case");
  tcase_add_checked_fixture(tc, setup, teardown);
  tcase_add_test(tc, test_case_directives);
  tcase_add_test(tc, test_case_literals);
  tcase_add_test(tc, test_case_generators);
  tcase_add_test(tc, test_case_errors);
  tcase_add_test(tc, test_case_load_not_regular);
  tcase_add_test(tc, test_case_directive_table);
  tcase_add_test(tc, test_corpus_listing);
  suite_add_tcase(s, tc);

  tc = tcase_create("compare");
  tcase_add_checked_fixture(tc, setup, teardown);
  tcase_add_test(tc, test_ulp_distance);
  tcase_add_test(tc, test_compare_rules);
  tcase_add_test(tc, test_compare_ranges_and_goldens);
  tcase_add_test(tc, test_compare_mma_bound);
  tcase_add_test(tc, test_run_reference);
  tcase_add_test(tc, test_run_indirect);
  suite_add_tcase(s, tc);

  tc = tcase_create("capsule");
  tcase_add_checked_fixture(tc, setup, teardown);
  tcase_add_test(tc, test_capsule_round_trip);
  suite_add_tcase(s, tc);

  tc = tcase_create("minimize");
  tcase_add_checked_fixture(tc, setup, teardown);
  tcase_set_timeout(tc, 60);
  tcase_add_test(tc, test_minimize_planted);
  tcase_add_test(tc, test_minimize_structure);
  suite_add_tcase(s, tc);

  tc = tcase_create("elf");
  tcase_add_checked_fixture(tc, setup, teardown);
  tcase_add_test(tc, test_elf_plugins);
  tcase_add_test(tc, test_elf_stub_extra_export);
  tcase_add_test(tc, test_elf_garbage);
  tcase_add_test(tc, test_elf_foreign_machine);
  suite_add_tcase(s, tc);

  tc = tcase_create("needs");
  tcase_add_checked_fixture(tc, setup, teardown);
  tcase_add_test(tc, test_needs_op_types);
  tcase_add_test(tc, test_needs_int64_out_range);
  tcase_add_test(tc, test_offer_covers_types);
  tcase_add_test(tc, test_conform_small_backend);
  tcase_add_test(tc, test_conform_strict_refusal);
  tcase_add_test(tc, test_conform_untested_still_fails);
  suite_add_tcase(s, tc);

  tc = tcase_create("report");
  tcase_add_checked_fixture(tc, setup, teardown);
  tcase_add_test(tc, test_coverage);
  tcase_add_test(tc, test_certificate_shape);
  tcase_add_test(tc, test_certificate_escapes);
  tcase_add_test(tc, test_certificate_atomic);
  suite_add_tcase(s, tc);

  tc = tcase_create("fuzz");
  tcase_add_checked_fixture(tc, setup, teardown);
  tcase_set_timeout(tc, 120);
  tcase_add_test(tc, test_fuzz_deterministic_and_valid);
  tcase_add_test(tc, test_fuzz_flags);
  tcase_add_test(tc, test_fuzz_race_free_on_reference);
  tcase_add_test(tc, test_fuzz_flags_for_offer);
  tcase_add_test(tc, test_fuzz_strict_transcendental);
  tcase_add_test(tc, test_fuzz_claims);
  tcase_add_test(tc, test_fuzz_mma);
  suite_add_tcase(s, tc);
  return s;
}

/* Two programs are built from this file: check_conform (everything but
 * ptxas) and ptxas_conform (-DCHECK_PTXAS_ONLY: the ptxas batches alone,
 * which SKIP, exit 77, when PTXAS names no ptxas). */
static Suite *ptxas_suite(void) {
  Suite *s = suite_create("conform-ptxas");
  TCase *tc = tcase_create("ptxas");
  tcase_add_checked_fixture(tc, setup, teardown);
  tcase_set_timeout(tc, 120);
  tcase_add_test(tc, test_ptxas_batches);
  suite_add_tcase(s, tc);
  return s;
}

#ifdef CHECK_PTXAS_ONLY
enum { PTXAS_ONLY = 1 };
#else
enum { PTXAS_ONLY = 0 };
#endif

int main(void) {
  const char *ptxas = getenv("PTXAS");
  if (PTXAS_ONLY && (!ptxas || !*ptxas || access(ptxas, X_OK) != 0)) {
    printf("ptxas_conform: SKIP: no ptxas ($PTXAS is '%s'). Fix: install the CUDA toolkit and "
           "re-run configure\n", ptxas ? ptxas : "");
    return 77;
  }
  SRunner *sr = srunner_create(PTXAS_ONLY ? ptxas_suite() : conform_suite());
  srunner_run_all(sr, CK_NORMAL);
  int failed = srunner_ntests_failed(sr);
  srunner_free(sr);
  return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
