/* check_ref.h -- what the check_ref test files share: the plugin under test and a dispatch helper. */
#ifndef VYRE_TESTS_CHECK_REF_H
#define VYRE_TESTS_CHECK_REF_H

#include <check.h>

#include "vyre/vyre.h"
#include "vyre/vyre_program.h"
#include "vyre/vyre_support.h"

/* The reference registration, from dlopen'ing the built plugin. */
extern const vyre_registration *tr_reg;

/* A new instance on ordinal 0; fails the test when create fails. */
vyre_backend *tr_new_backend(void);

/* Encode b (and free it), then dispatch on host buffers.  Returns the
 * dispatch's status; *out receives the outputs on success. */
vyre_status tr_dispatch(vyre_backend *be, vyre_builder *b, const vyre_input *inputs,
                        uint32_t input_count, const vyre_dispatch_options *options,
                        vyre_outputs **out, vyre_error *err);

/* Encode b (and free it) into *bytes and *size; fails the test on error. */
void tr_encode(vyre_builder *b, void **bytes, size_t *size);

/* Dispatch and fail the test unless it succeeds; returns the outputs. */
vyre_outputs *tr_run_ok(vyre_backend *be, vyre_builder *b, const vyre_input *inputs, uint32_t n,
                        const vyre_dispatch_options *options);
/* Zeroed dispatch options with struct_size set. */
vyre_dispatch_options tr_opts(void);
/* Element i of output `item` as u32 / u64 (bounds-checked). */
uint32_t tr_u32_at(const vyre_outputs *o, uint32_t item, uint32_t i);
uint64_t tr_u64_at(const vyre_outputs *o, uint32_t item, uint32_t i);
uint32_t tr_fbits(float f);
/* Fail unless the message carries a "Fix:" hint. */
void tr_assert_fix(const vyre_error *err);
/* y[i] = a * x[i] + y[i] over f32 buffers sized by their inputs. */
vyre_builder *tr_saxpy_program(float a);

/* The table-driven edge cases of every op (check_ref_ops.c). */
TCase *tr_ops_tcase(void);
/* Resident, pipeline, async, error and metrics cases (check_ref_api.c). */
void tr_add_api_tcases(Suite *s);
/* The limits (vyre_limits: step budget, timeout) cases (check_ref_limits.c). */
void tr_add_limits_tcases(Suite *s);
/* The MMA ops, their bound side channel and refusals (check_ref_mma.c). */
void tr_add_mma_tcases(Suite *s);
/* Indirect dispatch (vyre_indirect) cases (check_ref_indirect.c). */
void tr_add_indirect_tcases(Suite *s);

#endif /* VYRE_TESTS_CHECK_REF_H */
