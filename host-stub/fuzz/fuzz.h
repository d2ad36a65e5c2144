/* fuzz.h -- interface of the differential fuzzer (vyre fuzz): random valid programs, runs against the reference, ptxas batches, random resident sequences. */
#ifndef VYRE_FUZZ_H
#define VYRE_FUZZ_H

#include "host-stub/conform/conform.h"
#include "host-stub/fuzz/progen.h"

typedef struct fz_program {
  void *bytes;   /* malloc'd image */
  size_t size;
  vyre_input *inputs; /* one per program input, data malloc'd */
  uint32_t input_count;
  vyre_dispatch_options options; /* ulp budget 1 when it uses transcendentals */
} fz_program;

/*
 * Program number `index` of the run seeded `seed`: a random VALID and
 * race-free program (fz_progen_generate with PROGEN_RACE_FREE; flags are
 * PROGEN_NO_*) with random inputs.  Deterministic: the same (seed, index,
 * flags) gives the same bytes and inputs.  *out owns what it receives
 * (fz_program_free); on failure it is empty and err says why.
 */
vyre_status fz_generate(uint64_t seed, uint64_t index, uint32_t flags, fz_program *out,
                        vyre_error *err);
void fz_program_free(fz_program *p);

/*
 * The same within a backend's claims (progen_claims; NULL: none, as
 * fz_generate): attempt k > 0 is another program for (seed, index),
 * for when attempt k - 1 needs something the claims lack.  Deterministic.
 */
vyre_status fz_generate_claimed(uint64_t seed, uint64_t index, uint32_t flags,
                                const progen_claims *claims, uint32_t attempt, fz_program *out,
                                vyre_error *err);

/* The claims of a target's offer (its registration, capabilities
 * narrowed by its device profile), for fz_generate_claimed. */
void fz_claims_from(const cf_offer *offer, progen_claims *out);

/* ptxas batches: many kernels per ptxas run, assembled in the background. */
typedef struct fz_ptxas fz_ptxas;
/* dir: where batch files go (created).  arch "sm_90". */
vyre_status fz_ptxas_open(const char *ptxas, const char *arch, const char *dir, fz_ptxas **out,
                          vyre_error *err);
/* Add one kernel (its full PTX text; `entry` its entry name; `label`
 * names it in reports).  Copies what it needs. */
vyre_status fz_ptxas_add(fz_ptxas *b, const char *ptx, const char *entry, const char *label,
                         vyre_error *err);
/* Assemble what is pending and wait for every batch.  *failures receives
 * the number of kernels in failing batches; failing batches are kept on
 * disk and reported to `log`. */
vyre_status fz_ptxas_finish(fz_ptxas *b, FILE *log, uint32_t *kernels, uint32_t *failures,
                            vyre_error *err);
void fz_ptxas_close(fz_ptxas *b);

/* What a run did, for `vyre fuzz --json` (fz_options.summary). */
typedef struct fz_summary {
  uint64_t programs;       /* programs generated and run */
  uint32_t mismatches;     /* backend and reference disagree */
  uint32_t failures;       /* other failures: generator, reference, codegen, ptxas */
  uint32_t traps;          /* programs that trapped on the reference (and agreed) */
  uint32_t skipped;        /* needing an op or feature the backend lacks */
  uint32_t refused;        /* grid barrier over the device's co-resident limit */
  uint32_t kernels;        /* ptxas mode: kernels assembled */
  uint32_t ptxas_failures; /* ptxas mode: kernels ptxas rejected */
  uint32_t flags;          /* the generator flags used */
  int stopped;             /* stopped at --max-failures */
  double seconds;
} fz_summary;

typedef struct fz_options {
  uint64_t seed, count, start; /* programs start .. start + count - 1 of the seed */
  uint32_t flags;              /* PROGEN_NO_* on top of what the target lacks */
  int ptxas_mode;              /* no backend: reference + codegen + ptxas */
  const char *ptxas;           /* ptxas path (ptxas mode) */
  const char *arch;            /* "sm_90" */
  const char *work_dir;        /* ptxas batch files; NULL = capsule_dir */
  const char *capsule_dir;     /* NULL = "fuzz-failures" */
  int minimize;
  uint32_t minimize_tries;     /* 0 = 1000 */
  uint32_t max_failures;       /* stop after this many; 0 = 10 */
  int verbose;
  FILE *out;
  /* The live progress line, as cf_options.progress: a one-line text after
   * each program, NULL to clear it before a line goes to out.  May be NULL. */
  void (*progress)(void *ctx, const char *text);
  void *progress_ctx;
  int color;           /* ANSI color on MISMATCH and FAIL written to out */
  fz_summary *summary; /* filled at the end when not NULL */
} fz_options;

/* The PROGEN_NO_* flags a target's offer implies (ops, capabilities and
 * storage types it lacks), and PROGEN_STRICT_TRANSCENDENTAL when it
 * claims correctly_rounded. */
uint32_t fz_flags_for(const cf_offer *offer);

/* A run skipping more than this share of its programs (in percent), or
 * comparing none, fails (docs/fuzzing.md, "Small backends"). */
#define FZ_SKIP_PERCENT 10u

/* 1 when a run of `programs` programs, `skipped` of them skipped (no
 * program within the backend's claims), fails by that rule. */
int fz_too_many_skipped(uint64_t programs, uint64_t skipped);

/*
 * vyre fuzz: programs of the seed on target->backend and the reference
 * (or, in ptxas mode, target NULL: the reference, codegen and ptxas);
 * mismatches are written as capsules and minimized.  Programs are made
 * within the target's claims (fz_generate_claimed).  Returns the exit
 * status (0 clean, 1 mismatches or failures, or nothing compared, or
 * more than FZ_SKIP_PERCENT skipped), or 2 with err set when
 * nothing could run (a target without an instance: a plugin that did not
 * load is a failure, never a pass).
 */
int fz_run(const fz_options *o, cf_target *target, vyre_backend *reference, vyre_error *err);

/* ---- vyre fuzz --sequences ---- */
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

/*
 * vyre fuzz --sequences (docs/fuzzing.md, "Sequences"): sequences o->start
 * .. o->start + o->count - 1 of o->seed, random resident sequences of
 * random elementwise steps over shared buffers, each run on `fused` (the
 * backend as configured), `unfused` (an instance of it made with
 * VYRE_CUDA_FUSE=0) and `reference`, every buffer compared bit for bit.
 * Uses o's seed, count, start, max_failures, out, progress, color and
 * summary (programs counts sequences).  Returns 0 clean, 1 mismatches or
 * failures, 2 with err set when nothing could run.
 */
int fz_sequences_run(const fz_options *o, vyre_backend *fused, vyre_backend *unfused,
                     vyre_backend *reference, const char *id, vyre_error *err);

#endif /* VYRE_FUZZ_H */
