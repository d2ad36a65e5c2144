/* format_corpus.h -- seeded generators of valid programs and of byte-level mutations, shared by the format and text tests. */
#ifndef VYRE_TESTS_FORMAT_CORPUS_H
#define VYRE_TESTS_FORMAT_CORPUS_H

#include <stddef.h>
#include <stdint.h>

#include "vyre/vyre_support.h"

/* A small deterministic generator (xorshift64*): the same seed gives the
 * same corpus on every machine, so a failure names a reproducible case. */
typedef struct corpus_rng {
  uint64_t state;
} corpus_rng;

void corpus_seed(corpus_rng *r, uint64_t seed);
uint32_t corpus_u32(corpus_rng *r);
uint64_t corpus_u64(corpus_rng *r);
/* Uniform in [0, n); n > 0. */
uint32_t corpus_below(corpus_rng *r, uint32_t n);

/*
 * Build a random program that vyre_program_decode accepts: random buffers
 * (every access mode, storage type, flag and range form), locals, nested
 * if/else/loop/block, every op class, atomics, subgroup ops and barriers in
 * uniform control flow, grid barriers, return and trap.  `max_insts` bounds
 * the body (about).  On success *bytes receives malloc'd memory the caller
 * frees.  Returns the builder's status (VYRE_OK in practice).
 */
vyre_status corpus_random_program(corpus_rng *r, uint32_t max_insts, void **bytes, size_t *size,
                                  vyre_error *err);

/*
 * Mutate a program image: bit flips, byte and field overwrites,
 * instruction field edits, truncation, extension and random instruction
 * streams.  *buf is realloc'd when the size changes; the new size is
 * returned.  The result is usually invalid and sometimes still valid.
 */
size_t corpus_mutate(corpus_rng *r, uint8_t **buf, size_t size);

#endif /* VYRE_TESTS_FORMAT_CORPUS_H */
