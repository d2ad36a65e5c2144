/* check_support.c -- libvyre's support layer: the environment reader, the byte-count grammar, size-prefixed struct copies, the growable buffer, device UUIDs. */
#include <check.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "abi/support/bytes.h"
#include "abi/support/config.h"
#include "abi/support/safetext.h"
#include "abi/support/sized.h"
#include "abi/support/strbuf.h"
#include "abi/support/uuid.h"

/* ---- config ------------------------------------------------------------ */

START_TEST(test_env_names) {
  ck_assert_str_eq(vyre__env_name(VYRE__ENV_LOG), "VYRE_LOG");
  ck_assert_str_eq(vyre__env_name(VYRE__ENV_CUDA_DRIVER), "VYRE_CUDA_DRIVER");
  ck_assert_str_eq(vyre__env_name((vyre__env_id)VYRE__ENV_COUNT_), "?");
  ck_assert_msg(vyre__env((vyre__env_id)VYRE__ENV_COUNT_) == NULL, "an unknown id reads nothing");
}
END_TEST

START_TEST(test_env_text) {
  unsetenv("VYRE_BACKEND");
  ck_assert_msg(vyre__env(VYRE__ENV_BACKEND) == NULL, "unset reads as NULL");
  setenv("VYRE_BACKEND", "", 1);
  ck_assert_msg(vyre__env(VYRE__ENV_BACKEND) == NULL, "empty reads as NULL");
  setenv("VYRE_BACKEND", "cuda", 1);
  ck_assert_str_eq(vyre__env(VYRE__ENV_BACKEND), "cuda");
  setenv("VYRE_BACKEND_PATH", "/a:/b", 1);
  ck_assert_str_eq(vyre__env(VYRE__ENV_BACKEND_PATH), "/a:/b");
  unsetenv("VYRE_BACKEND");
  unsetenv("VYRE_BACKEND_PATH");
}
END_TEST

START_TEST(test_env_uint) {
  unsetenv("VYRE_REF_THREADS");
  ck_assert_uint_eq(vyre__env_uint(VYRE__ENV_REF_THREADS, 7, 1, 256), 7);
  setenv("VYRE_REF_THREADS", "12", 1);
  ck_assert_uint_eq(vyre__env_uint(VYRE__ENV_REF_THREADS, 7, 1, 256), 12);
  setenv("VYRE_REF_THREADS", "twelve", 1);
  ck_assert_msg(vyre__env_uint(VYRE__ENV_REF_THREADS, 7, 1, 256) == 7,
                "a value that is not a number gives the default");
  setenv("VYRE_REF_THREADS", "12x", 1);
  ck_assert_msg(vyre__env_uint(VYRE__ENV_REF_THREADS, 7, 1, 256) == 7, "trailing junk is refused");
  setenv("VYRE_REF_THREADS", "-3", 1);
  ck_assert_msg(vyre__env_uint(VYRE__ENV_REF_THREADS, 7, 1, 256) == 7, "a sign is refused");
  setenv("VYRE_REF_THREADS", "0", 1);
  ck_assert_msg(vyre__env_uint(VYRE__ENV_REF_THREADS, 7, 1, 256) == 1, "below the range clamps up");
  setenv("VYRE_REF_THREADS", "100000", 1);
  ck_assert_msg(vyre__env_uint(VYRE__ENV_REF_THREADS, 7, 1, 256) == 256, "above clamps down");
  setenv("VYRE_REF_THREADS", "99999999999999999999999", 1);
  ck_assert_msg(vyre__env_uint(VYRE__ENV_REF_THREADS, 7, 1, 256) == 256,
                "digits past 2^64 - 1 are above the range: clamped to its maximum");
  setenv("VYRE_REF_THREADS", "4K", 1);
  ck_assert_msg(vyre__env_uint(VYRE__ENV_REF_THREADS, 7, 1, 256) == 7, "counts take no suffix");
  unsetenv("VYRE_REF_THREADS");
}
END_TEST

START_TEST(test_env_bytes) {
  const uint64_t max = UINT64_MAX;
  setenv("VYRE_CUDA_STAGING_CHUNK", "4096", 1);
  ck_assert_uint_eq(vyre__env_bytes(VYRE__ENV_CUDA_STAGING_CHUNK, 1, 0, max), 4096);
  setenv("VYRE_CUDA_STAGING_CHUNK", "64k", 1);
  ck_assert_uint_eq(vyre__env_bytes(VYRE__ENV_CUDA_STAGING_CHUNK, 1, 0, max), 64u << 10);
  setenv("VYRE_CUDA_STAGING_CHUNK", "3M", 1);
  ck_assert_uint_eq(vyre__env_bytes(VYRE__ENV_CUDA_STAGING_CHUNK, 1, 0, max), 3u << 20);
  setenv("VYRE_CUDA_STAGING_CHUNK", "2G", 1);
  ck_assert_uint_eq(vyre__env_bytes(VYRE__ENV_CUDA_STAGING_CHUNK, 1, 0, max), 2ull << 30);
  setenv("VYRE_CUDA_STAGING_CHUNK", "2t", 1);
  ck_assert_msg(vyre__env_bytes(VYRE__ENV_CUDA_STAGING_CHUNK, 1, 0, max) == 2ull << 40,
                "T (either case) is a suffix, as on the command line");
  setenv("VYRE_CUDA_STAGING_CHUNK", "2P", 1);
  ck_assert_msg(vyre__env_bytes(VYRE__ENV_CUDA_STAGING_CHUNK, 1, 0, max) == 1,
                "an unknown suffix gives the default");
  setenv("VYRE_CUDA_STAGING_CHUNK", "2MB", 1);
  ck_assert_msg(vyre__env_bytes(VYRE__ENV_CUDA_STAGING_CHUNK, 1, 0, max) == 1,
                "anything after the suffix is refused");
  setenv("VYRE_CUDA_STAGING_CHUNK", "17179869184G", 1);
  ck_assert_msg(vyre__env_bytes(VYRE__ENV_CUDA_STAGING_CHUNK, 1, 0, max) == 1,
                "a suffix that overflows 64 bits is refused");
  setenv("VYRE_CUDA_STAGING_CHUNK", "100", 1);
  ck_assert_msg(vyre__env_bytes(VYRE__ENV_CUDA_STAGING_CHUNK, 1, 256, max) == 256,
                "below the minimum clamps up");
  unsetenv("VYRE_CUDA_STAGING_CHUNK");
}
END_TEST

/* config is the floor: it returns what is wrong, and prints nothing. */
START_TEST(test_env_count_problem) {
  char why[512];
  uint64_t v = 0;
  unsetenv("VYRE_REF_THREADS");
  ck_assert_int_eq(vyre__env_count(VYRE__ENV_REF_THREADS, 7, 1, 256, &v, why, sizeof why), 0);
  ck_assert_msg(v == 7 && why[0] == '\0', "unset: the fallback, no problem");
  setenv("VYRE_REF_THREADS", "twelve", 1);
  ck_assert_int_eq(vyre__env_count(VYRE__ENV_REF_THREADS, 7, 1, 256, &v, why, sizeof why), -1);
  ck_assert_uint_eq(v, 7);
  ck_assert_str_eq(why, "VYRE_REF_THREADS='twelve' is not a count: using 7. Fix: set it to a "
                        "decimal number, or unset it");
  setenv("VYRE_REF_THREADS", "999", 1);
  ck_assert_int_eq(vyre__env_count(VYRE__ENV_REF_THREADS, 7, 1, 256, &v, why, sizeof why), -1);
  ck_assert_uint_eq(v, 256);
  ck_assert_str_eq(why, "VYRE_REF_THREADS=999 is outside 1..256: using 256. Fix: set it within "
                        "the range");
  ck_assert_int_eq(vyre__env_count(VYRE__ENV_REF_THREADS, 7, 1, 256, &v, NULL, 0), -1);
  /* Each of these is no count: the message names what is used instead. */
  static const char *const junk[] = {"garbage", "-1", "+4", "0x10", "1e3", " 4", "4 "};
  for (size_t i = 0; i < sizeof junk / sizeof junk[0]; i++) {
    char want[512];
    setenv("VYRE_REF_THREADS", junk[i], 1);
    ck_assert_int_eq(vyre__env_count_as(VYRE__ENV_REF_THREADS, 16, "the online CPUs", 1, 256, &v,
                                        why, sizeof why), -1);
    snprintf(want, sizeof want, "VYRE_REF_THREADS='%s' is not a count: using the online CPUs "
             "(16). Fix: set it to a decimal number, or unset it", junk[i]);
    ck_assert_msg(v == 16 && strcmp(why, want) == 0, "'%s': %s", junk[i], why);
  }
  setenv("VYRE_REF_THREADS", "99999999999999999999", 1);
  ck_assert_int_eq(vyre__env_count_as(VYRE__ENV_REF_THREADS, 16, "the online CPUs", 1, 256, &v,
                                      why, sizeof why), -1);
  ck_assert_uint_eq(v, 256);
  ck_assert_str_eq(why, "VYRE_REF_THREADS=99999999999999999999 is outside 1..256: using 256. "
                        "Fix: set it within the range");
  unsetenv("VYRE_REF_THREADS");
  setenv("VYRE_CUDA_STAGING_CHUNK", "16 M", 1);
  ck_assert_int_eq(vyre__env_count(VYRE__ENV_CUDA_STAGING_CHUNK, 9, 0, UINT64_MAX, &v, why,
                                   sizeof why), -1);
  ck_assert_str_eq(why, "VYRE_CUDA_STAGING_CHUNK='16 M' is not a byte count: using 9. Fix: set "
                        "it to " VYRE__BYTES_GRAMMAR ", or unset it");
  setenv("VYRE_CUDA_STAGING_CHUNK", "16m", 1);
  ck_assert_int_eq(vyre__env_count(VYRE__ENV_CUDA_STAGING_CHUNK, 9, 0, UINT64_MAX, &v, why,
                                   sizeof why), 0);
  ck_assert_uint_eq(v, 16u << 20);
  unsetenv("VYRE_CUDA_STAGING_CHUNK");
}
END_TEST

/* The readers the components call still say what is wrong (log.c prints
 * what config.c returns).  The level is read once per process: only a
 * forked test can see a warning after main set VYRE_LOG=off. */
static SRunner *runner;

START_TEST(test_env_warns) {
  if (srunner_fork_status(runner) == CK_NOFORK) return;
  unsetenv("VYRE_LOG");
  char path[] = "/tmp/check_support.XXXXXX";
  int fd = mkstemp(path);
  ck_assert_int_ge(fd, 0);
  fflush(stderr);
  int saved = dup(2);
  dup2(fd, 2);
  setenv("VYRE_REF_THREADS", "lots", 1);
  uint64_t v = vyre__env_uint(VYRE__ENV_REF_THREADS, 7, 1, 256);
  fflush(stderr);
  dup2(saved, 2);
  close(saved);
  char text[512] = {0};
  ssize_t n = pread(fd, text, sizeof text - 1, 0);
  close(fd);
  unlink(path);
  unsetenv("VYRE_REF_THREADS");
  ck_assert_uint_eq(v, 7);
  ck_assert_msg(n > 0 && strcmp(text, "vyre: VYRE_REF_THREADS='lots' is not a count: using 7. "
                                      "Fix: set it to a decimal number, or unset it\n") == 0,
                "the warning is printed, got '%s'", text);
}
END_TEST

/* ---- the byte-count grammar -------------------------------------------- */

START_TEST(test_parse_bytes) {
  static const struct {
    const char *s;
    int rc;
    uint64_t v;
  } cases[] = {
      {"0", 0, 0},
      {"1", 0, 1},
      {"4096", 0, 4096},
      {"1K", 0, 1024},
      {"1k", 0, 1024},
      {"16m", 0, 16u << 20},
      {"16M", 0, 16u << 20},
      {"3g", 0, 3ull << 30},
      {"1T", 0, 1ull << 40},
      {"1t", 0, 1ull << 40},
      {"0K", 0, 0},
      {"007", 0, 7},
      {"18446744073709551615", 0, UINT64_MAX},
      {"16777215T", 0, 16777215ull << 40},
      {"16777216T", -1, 0},           /* 2^64: overflow */
      {"18446744073709551616", -1, 0}, /* UINT64_MAX + 1 */
      {"99999999999999999999999", -1, 0},
      {"17179869184G", -1, 0},
      {"", -1, 0},
      {"K", -1, 0},
      {"x", -1, 0},
      {"-1", -1, 0},
      {"+1", -1, 0},
      {" 1", -1, 0},
      {"1 ", -1, 0},
      {"1.5M", -1, 0},
      {"1KB", -1, 0},
      {"1B", -1, 0},
      {"1KiB", -1, 0},
      {"1P", -1, 0},
      {"1KK", -1, 0},
      {"0x10", -1, 0},
  };
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
    uint64_t v = 12345;
    int rc = vyre__parse_bytes(cases[i].s, &v);
    ck_assert_msg(rc == cases[i].rc, "'%s': %d expected, got %d", cases[i].s, cases[i].rc, rc);
    if (rc == 0)
      ck_assert_msg(v == cases[i].v, "'%s' is %llu, got %llu", cases[i].s,
                    (unsigned long long)cases[i].v, (unsigned long long)v);
    else
      ck_assert_msg(v == 12345, "'%s': a refused value leaves *out alone", cases[i].s);
  }
  uint64_t v;
  ck_assert_msg(vyre__parse_bytes(NULL, &v) == -1, "NULL is refused");
}
END_TEST

START_TEST(test_parse_count) {
  uint64_t v = 0;
  ck_assert_int_eq(vyre__parse_count("0", &v), 0);
  ck_assert_uint_eq(v, 0);
  ck_assert_int_eq(vyre__parse_count("18446744073709551615", &v), 0);
  ck_assert_uint_eq(v, UINT64_MAX);
  ck_assert_int_eq(vyre__parse_count("18446744073709551616", &v), -1);
  ck_assert_int_eq(vyre__parse_count("4K", &v), -1);
  ck_assert_int_eq(vyre__parse_count("", &v), -1);
  ck_assert_int_eq(vyre__parse_count("12x", &v), -1);
  ck_assert_int_eq(vyre__parse_count(NULL, &v), -1);
}
END_TEST

/* ---- sized structs ----------------------------------------------------- */

typedef struct v1 {
  uint32_t struct_size;
  uint32_t a;
} v1;
typedef struct v2 {
  uint32_t struct_size;
  uint32_t a;
  uint64_t b;
} v2;

START_TEST(test_sized_read) {
  v1 old = {sizeof(v1), 5};
  v2 full;
  memset(&full, 0xee, sizeof full);
  ck_assert_uint_eq(vyre__sized_read(&full, sizeof full, &old), sizeof(v1));
  ck_assert_msg(full.struct_size == sizeof full && full.a == 5 && full.b == 0,
                "an older struct is read, the rest zeroed, the size ours");
  v2 newer = {sizeof(v2), 6, 7};
  v1 small;
  ck_assert_uint_eq(vyre__sized_read(&small, sizeof small, &newer), sizeof(v1));
  ck_assert_msg(small.struct_size == sizeof small && small.a == 6, "a newer struct is cut to ours");
  ck_assert_uint_eq(vyre__sized_read(&full, sizeof full, NULL), 0);
  ck_assert_msg(full.struct_size == sizeof full && full.a == 0 && full.b == 0, "NULL reads as zeros");
  uint32_t tiny = 2; /* struct_size shorter than the field itself */
  ck_assert_uint_eq(vyre__sized_read(&full, sizeof full, &tiny), 2);
  ck_assert_msg(full.struct_size == sizeof full && full.a == 0, "a 2-byte struct gives nothing");
}
END_TEST

START_TEST(test_sized_write) {
  v2 full = {sizeof(v2), 8, 9};
  struct {
    v1 caller;
    uint32_t guard;
  } out = {{sizeof(v1), 0}, 0xdeadbeefu};
  vyre__sized_write(&out.caller, &full, sizeof full);
  ck_assert_msg(out.caller.struct_size == sizeof(v1), "the caller's struct_size is never written");
  ck_assert_uint_eq(out.caller.a, 8);
  ck_assert_msg(out.guard == 0xdeadbeefu, "nothing past the caller's struct_size is written");
  v2 big = {sizeof(v2), 0, 0};
  v1 part = {sizeof(v1), 3};
  vyre__sized_write(&big, &part, sizeof part);
  ck_assert_msg(big.a == 3 && big.b == 0 && big.struct_size == sizeof(v2),
                "a smaller source writes only what it has");
  vyre__sized_write(NULL, &part, sizeof part); /* no crash */
}
END_TEST

/* ---- strbuf ------------------------------------------------------------ */

START_TEST(test_uuid) {
  static const uint8_t u[16] = {0x89, 0x32, 0xf9, 0x37, 0xd7, 0x2c, 0x4a, 0x35,
                                0x04, 0x11, 0x22, 0x33, 0x44, 0x55, 0x66, 0xff};
  static const uint8_t zero[16] = {0};
  char text[VYRE__UUID_TEXT_SIZE];
  ck_assert_str_eq(vyre__uuid_format(u, text), "GPU-8932f937-d72c-4a35-0411-2233445566ff");
  ck_assert_msg(strlen(text) + 1 == VYRE__UUID_TEXT_SIZE, "the text fills the buffer exactly");
  ck_assert_str_eq(vyre__uuid_format(zero, text), "none");
  ck_assert(vyre__uuid_is_zero(zero) && !vyre__uuid_is_zero(u));

  char hex[33];
  size_t n = 0;
  int gpu = -1;
  /* The whole form round-trips; case and the GPU- prefix do not matter. */
  vyre__uuid_format(u, text);
  ck_assert_int_eq(vyre__uuid_parse_prefix(text, hex, &n, &gpu), 0);
  ck_assert_uint_eq(n, 32);
  ck_assert_int_eq(gpu, 1);
  ck_assert_str_eq(hex, "8932f937d72c4a3504112233445566ff");
  ck_assert(vyre__uuid_matches(u, hex, n));
  ck_assert_int_eq(vyre__uuid_parse_prefix("8932F937-D7", hex, &n, &gpu), 0);
  ck_assert_uint_eq(n, 10);
  ck_assert_int_eq(gpu, 0);
  ck_assert_msg(vyre__uuid_matches(u, hex, n), "a prefix without GPU- matches");
  ck_assert_int_eq(vyre__uuid_parse_prefix("gpu-8932f93", hex, &n, NULL), 0);
  ck_assert(vyre__uuid_matches(u, hex, n));
  ck_assert_int_eq(vyre__uuid_parse_prefix("8932f937d72c", hex, &n, NULL), 0);
  ck_assert_msg(vyre__uuid_matches(u, hex, n), "dashes may be left out");
  ck_assert_int_eq(vyre__uuid_parse_prefix("8932f938", hex, &n, NULL), 0);
  ck_assert_msg(!vyre__uuid_matches(u, hex, n), "a different prefix does not match");
  ck_assert_msg(!vyre__uuid_matches(zero, "0", 1), "an unreported UUID matches nothing");

  /* Refused: empty, not hex, a dash out of place, too many digits. */
  static const char *bad[] = {"", "GPU-", "8932g937", "893-2f937", "8932f937--d72c",
                              "-8932", "8932f937d72c4a3504112233445566ff0", "GPU-GPU-1"};
  for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++)
    ck_assert_msg(vyre__uuid_parse_prefix(bad[i], hex, &n, NULL) == -1, "'%s' is refused",
                  bad[i]);
}
END_TEST

START_TEST(test_strbuf_bytes) {
  strbuf b;
  vyre__sb_init(&b);
  const uint8_t bytes[4] = {0, 1, 0, 2};
  vyre__sb_append(&b, bytes, sizeof bytes);
  vyre__sb_printf(&b, "%s-%d", "x", 42);
  ck_assert_uint_eq(b.len, 8);
  ck_assert_msg(memcmp(b.data, "\0\1\0\2x-42", 8) == 0 && b.data[8] == '\0',
                "bytes and text append, NUL-terminated past len");
  char big[1000];
  memset(big, 'a', sizeof big - 1);
  big[sizeof big - 1] = '\0';
  vyre__sb_printf(&b, "%s", big);
  ck_assert_uint_eq(b.len, 8 + 999);
  size_t len = 0;
  char *t = vyre__sb_take(&b, &len);
  ck_assert_msg(t && len == 1007 && b.data == NULL && b.len == 0, "take hands the text over");
  free(t);
  vyre__sb_free(&b);
}
END_TEST

/* The one sanitiser: every control byte and escape sequence a terminal
 * acts on becomes '?', well-formed UTF-8 stays. */
START_TEST(test_safe_text) {
  static const struct {
    const char *in, *line, *text;
  } rows[] = {
      {"plain text", "plain text", "plain text"},
      {"clear\033[2J", "clear?[2J", "clear?[2J"},
      {"title\033]0;x\007end", "title?]0;x?end", "title?]0;x?end"},
      {"a\nb\tc\rd\be", "a?b?c?d?e", "a\nb\tc?d?e"},
      {"del\177", "del?", "del?"},
      {"c1 \xc2\x9b" "2J", "c1 ??2J", "c1 ??2J"},
      {"lone \x9b" "2J", "lone ?2J", "lone ?2J"},
      {"caf\xc3\xa9 \xe6\x97\xa5 \xf0\x9f\x98\x80", "caf\xc3\xa9 \xe6\x97\xa5 \xf0\x9f\x98\x80",
       "caf\xc3\xa9 \xe6\x97\xa5 \xf0\x9f\x98\x80"},
      {"overlong \xc0\xaf \xe0\x80\xaf", "overlong ?? ???", "overlong ?? ???"},
      {"surrogate \xed\xa0\x80", "surrogate ???", "surrogate ???"},
      {"cut \xe6\x97", "cut ??", "cut ??"},
      {"nbsp \xc2\xa0 ok", "nbsp \xc2\xa0 ok", "nbsp \xc2\xa0 ok"},
  };
  char out[64];
  for (size_t i = 0; i < sizeof rows / sizeof rows[0]; i++) {
    vyre__safe_text(out, sizeof out, rows[i].in, strlen(rows[i].in), VYRE__SAFE_LINE);
    ck_assert_msg(strcmp(out, rows[i].line) == 0, "row %zu, one line: '%s'", i, out);
    vyre__safe_text(out, sizeof out, rows[i].in, strlen(rows[i].in), VYRE__SAFE_TEXT);
    ck_assert_msg(strcmp(out, rows[i].text) == 0, "row %zu, text: '%s'", i, out);
    /* In place gives the same. */
    snprintf(out, sizeof out, "%s", rows[i].in);
    vyre__safe_text(out, sizeof out, out, sizeof out, VYRE__SAFE_LINE);
    ck_assert_msg(strcmp(out, rows[i].line) == 0, "row %zu, in place: '%s'", i, out);
  }
  /* Bounds: len stops the read, size the write (always a NUL), NULL is "". */
  ck_assert_uint_eq(vyre__safe_text(out, sizeof out, "abcdef", 3, VYRE__SAFE_LINE), 3);
  ck_assert_str_eq(out, "abc");
  ck_assert_uint_eq(vyre__safe_text(out, 4, "abcdef", 6, VYRE__SAFE_LINE), 3);
  ck_assert_str_eq(out, "abc");
  ck_assert_uint_eq(vyre__safe_text(out, 4, "ab\xc3\xa9", 4, VYRE__SAFE_LINE), 3);
  ck_assert_msg(strcmp(out, "ab?") == 0, "a character cut by the end of dst is one '?': '%s'", out);
  ck_assert_uint_eq(vyre__safe_text(out, sizeof out, NULL, 5, VYRE__SAFE_LINE), 0);
  ck_assert_str_eq(out, "");
  ck_assert_uint_eq(vyre__safe_text(out, 0, "x", 1, VYRE__SAFE_LINE), 0);
}
END_TEST

static Suite *support_suite(void) {
  Suite *s = suite_create("support");
  TCase *config = tcase_create("config");
  tcase_add_test(config, test_env_names);
  tcase_add_test(config, test_env_text);
  tcase_add_test(config, test_env_uint);
  tcase_add_test(config, test_env_bytes);
  tcase_add_test(config, test_env_count_problem);
  tcase_add_test(config, test_env_warns);
  suite_add_tcase(s, config);
  TCase *bytes = tcase_create("bytes");
  tcase_add_test(bytes, test_parse_bytes);
  tcase_add_test(bytes, test_parse_count);
  suite_add_tcase(s, bytes);
  TCase *sized = tcase_create("sized");
  tcase_add_test(sized, test_sized_read);
  tcase_add_test(sized, test_sized_write);
  suite_add_tcase(s, sized);
  TCase *uuid = tcase_create("uuid");
  tcase_add_test(uuid, test_uuid);
  suite_add_tcase(s, uuid);
  TCase *buf = tcase_create("strbuf");
  tcase_add_test(buf, test_strbuf_bytes);
  suite_add_tcase(s, buf);
  TCase *safe = tcase_create("safetext");
  tcase_add_test(safe, test_safe_text);
  suite_add_tcase(s, safe);
  return s;
}

int main(void) {
  /* The number checks warn on stderr by design: keep the log quiet. */
  setenv("VYRE_LOG", "off", 1);
  SRunner *sr = srunner_create(support_suite());
  runner = sr;
  srunner_run_all(sr, CK_NORMAL);
  int failed = srunner_ntests_failed(sr);
  srunner_free(sr);
  return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
