/* literal.h -- typed literals of the program text form (abi/text/literal.c): the one literal grammar; not installed. */
#ifndef VYRE_TEXT_LITERAL_H
#define VYRE_TEXT_LITERAL_H

#include <stddef.h>
#include <stdint.h>

#include "vyre/vyre_support.h"
#include "abi/support/strbuf.h"

/* Write the canonical literal of a constant of value type `type` (bool
 * u32 u64 i32 i64 f32) whose bits are `bits` (as vyre_inst a|b<<32). */
void vyre__text_format_const(strbuf *b, uint32_t type, uint64_t bits);

/*
 * Parse the literal s[0..len) as a constant of value type `type`.
 * Returns 0 with *bits set, or -1 with "what is wrong. Fix: how" in msg.
 * f32 results are canonical or rejected.  Thread-safe.
 */
int vyre__text_parse_const(const char *s, size_t len, uint32_t type, uint64_t *bits, char *msg,
                           size_t msg_size);

/* Room for any string vyre__text_format_float writes, with its NUL. */
#define VYRE__TEXT_FLOAT_MAX 32u
/* vyre__text_format_float flag: always a '.' or an exponent ("10.0", not
 * "10"), so that the text reads as a float (the text form's constants). */
#define VYRE__TEXT_FLOAT_POINT 1u

/*
 * Write the shortest decimal that reads back to the same value of float
 * type `type` (VYRE_T_F32, VYRE_T_F16 or VYRE_T_BF16; bits in the low 32
 * or 16 bits of `bits`) into out, NUL-terminated; returns its length.
 * "Reads back": the literal parser of that type (vyre__text_parse_literal,
 * VYRE__LITERAL_DATA: strtof in the C locale, then round to nearest even
 * to f16/bf16) yields the same bits.  The fewest significant digits are
 * written positionally where the decimal exponent is -5..15 (10 -> "10",
 * 7840 -> "7840", 0.1 -> "0.1", 65504 -> "65504"), else in C's %e form
 * (1e-7 -> "1e-07", 3.4e38 -> "3.4e+38").  NaN (any payload) is "nan",
 * infinities "inf" and "-inf", zeros "0" and "-0".  Flags:
 * VYRE__TEXT_FLOAT_POINT appends ".0" to a result with neither '.' nor
 * 'e' ("10.0", "-0.0"; never to nan or inf).  The text form's f32
 * constants are exactly vyre__text_format_float(.., VYRE_T_F32, bits,
 * VYRE__TEXT_FLOAT_POINT).  Independent of the process locale;
 * thread-safe.
 */
size_t vyre__text_format_float(char out[VYRE__TEXT_FLOAT_MAX], uint32_t type, uint64_t bits,
                               uint32_t flags);

/* Parse an unsigned decimal or 0x hex number of at most `max`; 0 or -1. */
int vyre__text_parse_uint(const char *s, size_t len, uint64_t max, uint64_t *out);

#endif /* VYRE_TEXT_LITERAL_H */
