/* progen.h -- interface of libvyre-progen, the one random-program generator: random VALID vyre programs and random inputs, shaped by feature flags. */
#ifndef VYRE_PROGEN_H
#define VYRE_PROGEN_H

/*
 * fz_progen_generate builds a random program with libvyre's builder
 * (abi/vyre/vyre_support.h), validates it with vyre_program_decode and
 * makes random inputs for it.  Users: `vyre fuzz` (host-stub/fuzz, the
 * race-free shape), the codegen tests (tests/codegen: coverage for ptxas,
 * elementwise fast paths) and the format corpus (tests/abi: declaration
 * variety under byte mutations).
 *
 * What a program may contain (each optional part has a PROGEN_NO_* flag):
 *   - buffers of every access mode and storage type (bool u8 u16 u32 u64
 *     i8 i16 i32 i64 f16 bf16 f32), fixed or sized by their input, output
 *     flags and byte ranges, workgroup buffers;
 *   - expression trees over every value type and op: integer and f32
 *     arithmetic, compares, logic, bit ops, casts, select, fma, edge-value
 *     constants (NaN, inf, -0, MIN, MAX, shift amounts), transcendentals;
 *   - let/assign locals, if/else (uniform and divergent), loops of at most
 *     7 iterations, blocks;
 *   - loads and stores in and out of bounds, atomics with every op and
 *     memory order, workgroup and grid barriers, subgroup ballot/shuffle/
 *     reduce in uniform control flow, return and trap;
 *   - 1-D, 2-D and 3-D workgroups, some leaving a partial last warp;
 *   - race-free shape only: MMA sections (mma_fill, mma_load, mma,
 *     mma_store at every type and layout, tiles from storage and from
 *     workgroup memory after the barrier, K loops, indices and strides
 *     past the end or differing across lanes) in uniform control flow, in
 *     workgroups of a multiple of 32 invocations.
 *
 * Shapes (at most one of these three):
 *   - default: anything valid goes (stores and atomics anywhere, returns
 *     and traps mid-program): coverage for lowering and ptxas;
 *   - PROGEN_RACE_FREE: programs whose results do not depend on scheduling,
 *     by construction (docs/conformance.md "Fuzzing"): the differential
 *     fuzzer compares backends on them;
 *   - PROGEN_ELEMENTWISE: the elementwise shape (1-D, every load/store at
 *     gid.x or a constant index, no barriers, atomics, subgroups, loops or
 *     trap; guarded by `if (gid < buflen(b))`, by the early exit
 *     `if (gid >= buflen(b)) return;`, or not at all) that backends'
 *     vectorised fast paths take.
 * PROGEN_DECL_VARIETY adds to the default shape what only the codec and the
 * text form care about: explicit bindings with gaps, buffer names of every
 * length, arbitrary output byte ranges, workgroups up to 1024 invocations.
 *
 * Determinism: the same seed and options give the same bytes and inputs on
 * every machine (one PRNG, abi/support/prng.h).  Thread-safe: no global state.
 */

#include <stddef.h>
#include <stdint.h>

#include "vyre/vyre_support.h"

/* Exclusions: the program uses none of it (vyre_program.features says so). */
#define PROGEN_NO_TRANSCENDENTAL (1u << 0)
#define PROGEN_NO_TRAP (1u << 1)
#define PROGEN_NO_GRID_BARRIER (1u << 2)
#define PROGEN_NO_ATOMICS (1u << 3)
#define PROGEN_NO_SUBGROUP (1u << 4)
#define PROGEN_NO_WORKGROUP_MEMORY (1u << 5) /* no workgroup buffers and no barriers */
#define PROGEN_NO_ATOMIC64 (1u << 6)
#define PROGEN_NO_F16 (1u << 7)
#define PROGEN_NO_BF16 (1u << 8)
#define PROGEN_NO_LOOPS (1u << 9)
#define PROGEN_NO_STORAGE_TYPES (1u << 10) /* only 4- and 8-byte element types */
#define PROGEN_NO_RETURN (1u << 11)
#define PROGEN_NO_BARRIER (1u << 12)
#define PROGEN_NO_MMA (1u << 13) /* no mma_fill, mma_load, mma, mma_store */
/* Race-free shape: every program has MMA sections (else about one in six
 * has, unless PROGEN_NO_MMA). */
#define PROGEN_MMA (1u << 19)
/* Transcendentals under strict: a program whose only reason for a budget
 * is a transcendental (no float mma) gets ulp_budget 0 about half the time
 * (drawn after its inputs, so they are those of a run without the flag):
 * for a backend that claims VYRE_CAP_CORRECTLY_ROUNDED, compared bit for
 * bit (docs/fuzzing.md). */
#define PROGEN_STRICT_TRANSCENDENTAL (1u << 20)
/* Shapes (see above). */
#define PROGEN_RACE_FREE (1u << 16)
#define PROGEN_ELEMENTWISE (1u << 17)
#define PROGEN_DECL_VARIETY (1u << 18)

/*
 * What a backend claims (its registration's ops, op_types, storage_types
 * and capabilities, docs/conformance.md "Skipped vs failed"): with
 * progen_options.claims set, the race-free shape chooses only ops at
 * types, storage types and optional parts these allow (docs/fuzzing.md,
 * "Small backends").  Best effort: a program that needs something else
 * all the same (a part no claimed op can express) is left to the caller's
 * coverage check.  NULL claims: everything.
 */
typedef struct progen_claims {
  /* Per op id: VYRE_TBIT of each type it may have, as registrations
   * state them (a compare's operand type; VYRE_TBIT(VYRE_T_VOID) for a
   * statement); 0 = the op is not claimed. */
  uint32_t op_types[256];
  uint64_t storage_types; /* VYRE_TBIT of each buffer element type */
  uint64_t caps;          /* VYRE_CAP_* */
} progen_claims;

typedef struct progen_options {
  uint32_t flags;        /* PROGEN_* */
  uint32_t max_insts;    /* soft cap on instructions; 0 = 80 (race-free: 60..199 by seed) */
  uint32_t workgroup[3]; /* all 0 = random */
  uint32_t elements;     /* inputs of count-0 buffers; 0 = 64 (race-free: chosen by seed) */
  const progen_claims *claims; /* race-free shape: only what these claim; NULL: anything */
} progen_options;

typedef struct progen_program {
  void *bytes;         /* malloc'd program image */
  size_t size;
  vyre_input *inputs;  /* one per program input, in input order; data malloc'd */
  uint32_t input_count;
  uint32_t ulp_budget; /* 1 when it uses a transcendental or a float mma, else 0 (strict);
                          0 for some with transcendentals (PROGEN_STRICT_TRANSCENDENTAL) */
} progen_program;

/*
 * Generate the program of `seed`.  options may be NULL (default shape,
 * everything on).  On success *out owns the image and the inputs (free
 * with fz_progen_program_free).  Inputs: a fixed-count buffer gets exactly
 * its count; floats mix ordinary values and specials (NaN payloads,
 * infinities, signed zeros, subnormals), integers edge values (0, 1, -1,
 * MIN, MAX) and random bits.  Fails only when memory runs out or (a
 * generator bug) no program validates after a few deterministic retries;
 * err then says why and *out is empty.
 */
vyre_status fz_progen_generate(uint64_t seed, const progen_options *options, progen_program *out,
                               vyre_error *err);

/* Free what fz_progen_generate handed out and empty *p; NULL and empty are fine. */
void fz_progen_program_free(progen_program *p);

/*
 * The codegen speed benchmark's program (bench/codegen_bench, `vyre bench`
 * case codegen_10k): about `target` instructions of a fixed, realistic mix
 * (loads, f32 and integer arithmetic, compares, selects, locals, if/else,
 * stores) in a 256-invocation workgroup.  elementwise: every access at
 * gid.x, so it takes backends' elementwise paths (keep target <= 4096 for
 * the CUDA one).  Deterministic.  *bytes is malloc'd (free()).
 */
vyre_status fz_progen_bench_program(uint32_t target, int elementwise, void **bytes, size_t *size,
                                    vyre_error *err);

#endif /* VYRE_PROGEN_H */
