/* check_format.h -- pieces of the check_format program shared between its source files. */
#ifndef VYRE_TESTS_CHECK_FORMAT_H
#define VYRE_TESTS_CHECK_FORMAT_H

#include <check.h>
#include <stddef.h>
#include <stdint.h>

#include "vyre/vyre_support.h"

/* Check's ck_assert_* record a "mark point" through a pipe on every
 * success, which dominates loops of many thousand checks (and makes
 * valgrind runs crawl); EXPECT costs nothing until it fails. */
#define EXPECT(expr, ...)                \
  do {                                   \
    if (!(expr)) ck_abort_msg(__VA_ARGS__); \
  } while (0)

/* Finish a builder into *bytes (malloc'd) and free the builder; fails
 * the test when the builder fails. */
void fmt_finish(vyre_builder *b, uint8_t **bytes, size_t *size);

/* Decode that must succeed; fails the test with the validator's message. */
vyre_program *fmt_decode_ok(const void *bytes, size_t size);

/* Re-encode a decoded program through the builder (decode -> encode). */
void fmt_reencode(const vyre_program *p, uint8_t **bytes, size_t *size);

/* Every validator rejection (check_format_reject.c). */
TCase *format_reject_tcase(void);
/* Seeded mutations of valid programs (check_format_fuzz.c). */
TCase *format_fuzz_tcase(void);

#endif /* VYRE_TESTS_CHECK_FORMAT_H */
