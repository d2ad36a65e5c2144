/* seq.h -- what the sequence mode's generator (seqgen.c) and runner (seqrun.c) share: one random resident sequence. */
#ifndef VYRE_FUZZ_SEQ_H
#define VYRE_FUZZ_SEQ_H

#include <stddef.h>
#include <stdint.h>

#include "vyre/vyre_support.h"

#define FZ_SEQ_MAX_STEPS 8u
#define FZ_SEQ_MAX_BUFS 5u
#define FZ_SEQ_MAX_BIND 3u

/* A sequence: a pool of resident buffers (type, size, initial bytes) and
 * steps, each a program and the pool buffers it binds, run `repeat` times. */
typedef struct fz_seq {
  uint32_t nbuf, nstep, repeat, wg;
  int pipelines; /* run the steps through pipelines (the graph fast path) */
  uint32_t type[FZ_SEQ_MAX_BUFS];
  uint64_t bytes[FZ_SEQ_MAX_BUFS];
  uint8_t *init[FZ_SEQ_MAX_BUFS];
  void *prog[FZ_SEQ_MAX_STEPS];
  size_t size[FZ_SEQ_MAX_STEPS];
  uint32_t nbind[FZ_SEQ_MAX_STEPS];
  uint32_t bind[FZ_SEQ_MAX_STEPS][FZ_SEQ_MAX_BIND];
} fz_seq;

/* Sequence `index` of the run seeded `seed`: deterministic.  *q owns what
 * it holds (fz_seq_free); on failure it is empty and err says why. */
vyre_status fz_seq_generate(uint64_t seed, uint64_t index, fz_seq *q, vyre_error *err);
void fz_seq_free(fz_seq *q);

#endif /* VYRE_FUZZ_SEQ_H */
