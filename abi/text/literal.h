/* literal.h -- typed literals of the program text form (abi/text/literal.c): the one literal grammar and the shortest float formatter, for the assembler and the host's tools; not installed. */
#ifndef VYRE_TEXT_LITERAL_H
#define VYRE_TEXT_LITERAL_H

#include <stddef.h>
#include <stdint.h>

#include "vyre/vyre_support.h"
#include "vyre/vyre_text.h"
#include "abi/support/strbuf.h"

/* Write the canonical literal of a constant of value type `type` (bool
 * u32 u64 i32 i64 f32) whose bits are `bits` (as vyre_inst a|b<<32). */
void vyre__text_format_const(strbuf *b, uint32_t type, uint64_t bits);

/* What a literal is read for (vyre__text_parse_literal's `use`). */
#define VYRE__LITERAL_CONST VYRE_TEXT_LITERAL_CONST /* a program constant */
#define VYRE__LITERAL_DATA VYRE_TEXT_LITERAL_DATA   /* an element of input data */

/*
 * The one typed-literal grammar: parse s[0..len) (not NUL-terminated; no
 * blanks) as a literal of type `type` (a vyre_type) into *bits, the
 * element's representation in the low bits (as an f16 or u8 element is
 * stored).  Returns 0, or -1 with "what is wrong. Fix: how" in msg
 * (msg_size bytes, NUL-terminated) and *bits untouched.
 *
 *   bool           true, false, 1, 0 (input data: also any 32-bit word as
 *                  a u32 literal, 2 or 0x80000000; nonzero is true).
 *   u8 u16 u32 u64 decimal (42; leading zeros are decimal: 010 is ten,
 *                  there is no octal) or 0x hex (0x2a, 0X2A), no sign,
 *                  at most the type's maximum.
 *   i8 i16 i32 i64 signed decimal (-42, +7, 42) within the type's range,
 *                  or the two's complement bits as unsigned 0x hex of at
 *                  most the type's width (0xffffffd6 is i32 -42); no
 *                  signed hex.
 *   f32 f16 bf16   decimal (1.5, -2e-3, .5, 1e10), a C99 hex float with a
 *                  p exponent (0x1.8p3, -0x1p-2), the bits as unsigned 0x
 *                  hex of the type's width without a '.' (0x3fc00000 for
 *                  f32, 0x3e00 for f16), nan, inf, +inf, -inf.  Decimals
 *                  and hex floats are read in the C locale (strtof, then
 *                  rounded to nearest even to f16/bf16); a value beyond
 *                  the type's largest finite one, or one that is not 0
 *                  but rounds to 0, is refused; "infinity" and
 *                  "nan(...)" are not literals.
 *
 * use VYRE__LITERAL_CONST (the text form's `const TYPE LITERAL`): value
 * types only (bool u32 u64 i32 i64 f32); an f32 must be canonical: a
 * subnormal decimal, non-canonical bits, -nan and +nan are refused.
 * use VYRE__LITERAL_DATA (`vyre run --fill`, case files' input values):
 * every storage type, and any bits: subnormals are kept, -nan is the
 * negative quiet NaN (0xffc00000; f16 0xfe00; bf16 0xffc0), +nan is nan;
 * an integer also takes max and min of its type, an unsigned one a
 * negative decimal down to the signed minimum of its width (two's
 * complement: -1 is all ones), and a bool any u32 literal.
 *
 * The public vyre_text_parse_literal (vyre_text.h) is this function.
 *
 * Thread-safe; independent of the process locale.
 */
int vyre__text_parse_literal(const char *s, size_t len, uint32_t type, uint32_t use,
                             uint64_t *bits, char *msg, size_t msg_size);

/* Room for any string vyre__text_format_float writes, with its NUL. */
#define VYRE__TEXT_FLOAT_MAX VYRE_TEXT_FLOAT_MAX
/* vyre__text_format_float flag: always a '.' or an exponent ("10.0", not
 * "10"), so that the text reads as a float (the text form's constants). */
#define VYRE__TEXT_FLOAT_POINT VYRE_TEXT_FLOAT_POINT

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
