/* format_corpus.h -- the seeded robustness corpus of the format and text tests: generated valid programs and byte-level mutations. */
#ifndef VYRE_TESTS_FORMAT_CORPUS_H
#define VYRE_TESTS_FORMAT_CORPUS_H

#include <stddef.h>
#include <stdint.h>

#include "vyre/vyre_support.h"

/* A seeded generator (splitmix64, abi/support/prng.h): the same seed gives
 * the same corpus on every machine, so a failure names a reproducible case. */
typedef struct corpus_rng {
  uint64_t state;
} corpus_rng;

void corpus_seed(corpus_rng *r, uint64_t seed);
uint32_t corpus_u32(corpus_rng *r);
uint64_t corpus_u64(corpus_rng *r);
/* Uniform in [0, n); n > 0. */
uint32_t corpus_below(corpus_rng *r, uint32_t n);

/*
 * A random valid program (fz_progen_generate with PROGEN_DECL_VARIETY: every
 * access mode, storage type, flag, binding and range form, every op,
 * control flow, collectives, return and trap) of at most about
 * 1 + rand(max_insts) instructions, seeded from r.  On success *bytes
 * receives malloc'd memory the caller frees.  Returns progen's status
 * (VYRE_OK in practice).
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
