/* check_format_fuzz.c -- seeded mutations of valid programs: the decoder never crashes, never over-reads, and accepts only consistent programs. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check_format.h"
#include "format_corpus.h"

#define SEED_PROGRAMS 48u
#define MUTATIONS 4000u

/* What an accepted program must satisfy beyond "no crash". */
static void check_accepted(const uint8_t *bytes, size_t size, vyre_program *p, uint32_t k) {
  EXPECT(p->size == size && memcmp(p->bytes, bytes, size) == 0,
                "mutation %u: the program holds exactly the accepted bytes", k);
  uint8_t digest[32];
  vyre_sha256(bytes, size, digest);
  EXPECT(memcmp(digest, p->sha256, 32) == 0, "mutation %u: hash is the SHA-256 of the bytes", k);
  /* Decoding the program's own image again gives the same hash. */
  vyre_program *q = fmt_decode_ok(p->bytes, p->size);
  EXPECT(memcmp(q->sha256, p->sha256, 32) == 0, "mutation %u: the hash is stable", k);
  vyre_program_free(q);
  /* One program, one encoding: re-encoding the decoded form is identical. */
  uint8_t *again;
  size_t again_size;
  fmt_reencode(p, &again, &again_size);
  EXPECT(again_size == size && memcmp(again, bytes, size) == 0,
                "mutation %u: an accepted program re-encodes to the same bytes", k);
  free(again);
  /* The derived tables are consistent. */
  for (uint32_t i = 0; i < p->inst_count; i++) {
    const vyre_inst *in = &p->insts[i];
    EXPECT(p->value_type[i] == VYRE_T_VOID || vyre_type_is_value(p->value_type[i]),
                  "mutation %u: inst %u yields a value type", k, i);
    EXPECT(p->depth[i] <= p->max_depth, "mutation %u: inst %u depth within max", k, i);
    if (in->op == VYRE_OP_END) {
      uint32_t open = p->match[i];
      EXPECT(open < i, "mutation %u: end %u matches an earlier opener", k, i);
      uint16_t op = p->insts[open].op;
      EXPECT(op == VYRE_OP_IF || op == VYRE_OP_ELSE || op == VYRE_OP_LOOP || op == VYRE_OP_BLOCK,
                    "mutation %u: end %u closes a block opener", k, i);
      EXPECT(op == VYRE_OP_ELSE ? p->match[p->match[open]] == open : p->match[open] == i,
             "mutation %u: opener %u and end %u point at each other", k, open, i);
    }
  }
}

static void check_rejected(vyre_status st, const vyre_error *err, uint32_t k) {
  EXPECT(st == VYRE_INVALID_PROGRAM || st == VYRE_LIMIT,
                "mutation %u: rejected as an invalid program, got %s: %s", k, vyre_status_name(st),
                err->message);
  EXPECT(err->status == (int32_t)st && err->message[0], "mutation %u: the error is filled in", k);
  EXPECT(strstr(err->message, "Fix:") != NULL, "mutation %u: message has a Fix: %s", k, err->message);
}

/* Decode from an exact-size heap copy: any read past the end is an
 * AddressSanitizer or valgrind error, not a silent pass. */
static int decode_exact(const uint8_t *bytes, size_t size, uint32_t k) {
  uint8_t *exact = malloc(size ? size : 1);
  EXPECT(exact != NULL, "out of memory");
  memcpy(exact, bytes, size);
  vyre_error err = VYRE_ERROR_INIT;
  vyre_program *p = NULL;
  vyre_status st = vyre_program_decode(exact, size, &p, &err);
  if (st == VYRE_OK) {
    check_accepted(exact, size, p, k);
    vyre_program_free(p);
  } else {
    EXPECT(p == NULL, "mutation %u: *out is NULL after a rejection", k);
    check_rejected(st, &err, k);
  }
  free(exact);
  return st == VYRE_OK;
}

START_TEST(mutations_never_crash) {
  uint8_t *seeds[SEED_PROGRAMS];
  size_t sizes[SEED_PROGRAMS];
  for (uint32_t i = 0; i < SEED_PROGRAMS; i++) {
    corpus_rng r;
    corpus_seed(&r, 1000 + i);
    void *raw;
    vyre_error err = VYRE_ERROR_INIT;
    ck_assert_int_eq(corpus_random_program(&r, 60, &raw, &sizes[i], &err), VYRE_OK);
    seeds[i] = raw;
  }
  corpus_rng r;
  corpus_seed(&r, 77);
  uint32_t accepted = 0, changed_and_accepted = 0;
  for (uint32_t k = 0; k < MUTATIONS; k++) {
    uint32_t s = k % SEED_PROGRAMS;
    uint8_t *buf = malloc(sizes[s]);
    EXPECT(buf != NULL, "out of memory");
    memcpy(buf, seeds[s], sizes[s]);
    size_t size = corpus_mutate(&r, &buf, sizes[s]);
    int ok = decode_exact(buf, size, k);
    accepted += (uint32_t)ok;
    if (ok && (size != sizes[s] || memcmp(buf, seeds[s], size) != 0)) changed_and_accepted++;
    free(buf);
  }
  printf("mutation corpus: %u mutations of %u programs, %u accepted (%u of them different "
         "programs), %u rejected with a Fix\n",
         MUTATIONS, SEED_PROGRAMS, accepted, changed_and_accepted, MUTATIONS - accepted);
  /* The corpus exercises both sides of the validator. */
  EXPECT(changed_and_accepted >= MUTATIONS / 50, "some mutations yield other valid programs (%u)",
                changed_and_accepted);
  EXPECT(MUTATIONS - accepted >= MUTATIONS / 2, "most mutations are rejected (%u)", MUTATIONS - accepted);
  for (uint32_t i = 0; i < SEED_PROGRAMS; i++) free(seeds[i]);
}
END_TEST

/* Every prefix of a program, and every single-bit flip of a small one. */
START_TEST(prefixes_and_bit_flips) {
  corpus_rng r;
  corpus_seed(&r, 5);
  void *raw;
  size_t size;
  vyre_error err = VYRE_ERROR_INIT;
  ck_assert_int_eq(corpus_random_program(&r, 12, &raw, &size, &err), VYRE_OK);
  uint8_t *bytes = raw;
  for (size_t len = 0; len < size; len++)
    EXPECT(!decode_exact(bytes, len, (uint32_t)len), "a %zu-byte prefix of %zu is rejected", len, size);
  uint32_t accepted = 0;
  for (size_t bit = 0; bit < size * 8; bit++) {
    bytes[bit / 8] ^= (uint8_t)(1u << (bit % 8));
    accepted += (uint32_t)decode_exact(bytes, size, (uint32_t)bit);
    bytes[bit / 8] ^= (uint8_t)(1u << (bit % 8));
  }
  printf("bit flips: %zu flips of a %zu-byte program, %u still valid\n", size * 8, size, accepted);
  free(raw);
}
END_TEST

TCase *format_fuzz_tcase(void) {
  TCase *tc = tcase_create("robustness");
  tcase_add_test(tc, mutations_never_crash);
  tcase_add_test(tc, prefixes_and_bit_flips);
  tcase_set_timeout(tc, 300);
  return tc;
}
