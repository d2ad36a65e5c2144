/* progen.h -- a reusable generator of random VALID vyre programs and matching random inputs (tests and fuzzing). */
#ifndef VYRE_TESTS_PROGEN_H
#define VYRE_TESTS_PROGEN_H

/*
 * progen_generate(seed, options) builds a random program with the builder
 * (abi/vyre/vyre_support.h) and validates it with vyre_program_decode
 * before returning it, so every program it hands out is valid.  The same
 * seed and options always give the same bytes (a failing seed reproduces).
 *
 * What a program may contain (each can be excluded with a PROGEN_NO_* flag):
 *   - 1..6 buffers of every access mode and storage type (bool u8 u16 u32
 *     u64 i8 i16 i32 i64 f16 bf16 f32), sized by input (count 0) or fixed,
 *     outputs, workgroup buffers;
 *   - random expression trees over all value types and ops: integer and
 *     f32 arithmetic, compares, logic, bit ops, casts, select, fma,
 *     special f32 constants (NaN, inf, -0), transcendentals;
 *   - let/assign locals, if/else, loops with small uniform bounds, blocks;
 *   - loads/stores at in-bounds and out-of-bounds indices (gid, lid,
 *     constants, loop counters, arbitrary values);
 *   - atomics with every op and memory order on rw and workgroup buffers;
 *   - workgroup barriers, ballot/shuffle/reduce in uniform control flow,
 *     workgroup sizes that leave a partial last warp, 2-D/3-D workgroups;
 *   - an optional grid barrier at the top level, return and trap.
 *
 * PROGEN_ELEMENTWISE instead makes programs of the elementwise shape (1-D,
 * every load/store at gid.x or a constant index, no barriers, atomics,
 * subgroups, loops or trap; guarded by `if (gid < buflen(b)) {...}`, by
 * the early exit `if (gid >= buflen(b)) return;`, or not at all) that
 * exercise backends' vectorised fast paths; those programs also honour
 * the other flags.
 *
 * Thread-safe: no global state.
 */

#include <stddef.h>
#include <stdint.h>

#include "vyre/vyre_support.h"

#define PROGEN_NO_TRANSCENDENTAL (1u << 0)
#define PROGEN_NO_TRAP (1u << 1)
#define PROGEN_NO_GRID_BARRIER (1u << 2)
#define PROGEN_NO_ATOMICS (1u << 3)
#define PROGEN_NO_SUBGROUP (1u << 4)
#define PROGEN_NO_WORKGROUP_MEMORY (1u << 5)
#define PROGEN_NO_LOOPS (1u << 6)
#define PROGEN_NO_STORAGE_TYPES (1u << 7) /* only 4- and 8-byte element types */
#define PROGEN_NO_RETURN (1u << 8)
#define PROGEN_NO_BARRIER (1u << 9)
#define PROGEN_ELEMENTWISE (1u << 16)     /* the elementwise shape (see above) */

typedef struct progen_options {
  uint32_t flags;        /* PROGEN_* */
  uint32_t max_insts;    /* soft cap on instructions; 0 = 80 */
  uint32_t workgroup[3]; /* all 0 = random */
} progen_options;

/*
 * Generate the program of `seed`.  options may be NULL (everything on).
 * On success *bytes receives malloc'd program bytes (free with free()) and
 * *size their length.  Fails only when memory runs out or (a generator
 * bug) the program does not validate; err then says why.
 */
vyre_status progen_generate(uint64_t seed, const progen_options *options, void **bytes,
                            size_t *size, vyre_error *err);

/* Random inputs for a decoded program: one per input (program->input_count)
 * in input order.  A buffer with a fixed count gets exactly count
 * elements; a count-0 buffer gets `elements` elements.  Float buffers get a
 * mix of ordinary values and specials (NaN payloads, infinities, signed
 * zeros, subnormals); integers get edge values (0, 1, -1, MIN, MAX) and
 * random bits.  *inputs receives a malloc'd array of vyre_input whose data
 * are malloc'd too: free with progen_inputs_free. */
vyre_status progen_inputs(const vyre_program *program, uint64_t seed, uint32_t elements,
                          vyre_input **inputs, vyre_error *err);
void progen_inputs_free(const vyre_program *program, vyre_input *inputs);

#endif /* VYRE_TESTS_PROGEN_H */
