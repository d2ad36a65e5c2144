/* vyre_text.h -- the readable text form of programs: assembler and disassembler (share/doc/vyre/program-text.md). */
#ifndef VYRE_VYRE_TEXT_H
#define VYRE_VYRE_TEXT_H

#include <stddef.h>
#include <stdint.h>

#include "vyre/vyre.h"

#ifdef __cplusplus
extern "C" {
#endif

/* The longest program text the assembler takes (256 MiB); longer text is
 * VYRE_LIMIT, and readers of text files read no more
 * (share/doc/vyre/program-text.md, "Size"). */
#define VYRE_TEXT_MAX_SIZE ((size_t)256 << 20)

/*
 * Assemble `length` bytes of program text (at most VYRE_TEXT_MAX_SIZE).  `filename` (may be NULL) only
 * names the source in error messages, which read
 * "FILE:LINE:COL: what is wrong. Fix: how".  On success *bytes receives a
 * malloc'd program image (free with free()) that vyre_program_decode
 * accepts; the assembler validates what it writes.  Thread-safe.
 */
vyre_status vyre_text_assemble(const char *source, size_t length, const char *filename,
                               void **bytes, size_t *size, vyre_error *err);

/*
 * Disassemble a program image (validated first) into canonical text:
 * *text receives a malloc'd NUL-terminated string (free with free()).
 * Assembling that text yields identical bytes.  Thread-safe.
 */
vyre_status vyre_text_disassemble(const void *bytes, size_t size, char **text, vyre_error *err);

/* ------------------------------------------------------------------ */
/* Typed literals (libvyre 1.1): the one grammar of the text form's    */
/* constants, `vyre run --fill`, and case files' values                */
/* (share/doc/vyre/program-text.md, "Literals").                       */
/* ------------------------------------------------------------------ */

/* What a literal is read for (vyre_text_parse_literal's `use`). */
#define VYRE_TEXT_LITERAL_CONST 0u /* a program constant: value types, canonical f32 */
#define VYRE_TEXT_LITERAL_DATA 1u  /* an element of input data: storage types, any bits */

/*
 * Parse text[0..length) (need not be NUL-terminated; no blanks) as one
 * literal of type `type` (a vyre_type) into *bits: the element's bits in
 * the low bytes (an f16 or u8 element as it is stored; an f32 as its
 * IEEE bits).
 *
 *   bool           true, false, 1, 0.
 *   u8 u16 u32 u64 decimal (42; leading zeros are decimal: 010 is ten,
 *                  there is no octal) or 0x hex (0x2a, 0X2A), at most
 *                  the type's maximum.
 *   i8 i16 i32 i64 signed decimal (-42, +7) within the type's range, or
 *                  the two's complement bits as unsigned 0x hex of at
 *                  most the type's width (0xffffffd6 is i32 -42); there
 *                  is no signed hex (-0x2a is refused).
 *   f32 f16 bf16   decimal (1.5, -2e-3, .5), a C99 hex float (0x1.8p3),
 *                  the bits as unsigned 0x hex of the type's width
 *                  without a '.' or 'p' (0x3fc00000 for f32, 0x3e00 for
 *                  f16), nan, inf, +inf, -inf; read in the C locale and
 *                  rounded to nearest even; a value beyond the type's
 *                  largest finite one, or a nonzero one that rounds to
 *                  zero, is refused.
 *
 * use VYRE_TEXT_LITERAL_CONST (`const TYPE LITERAL`): value types only
 * (bool u32 u64 i32 i64 f32) and canonical f32 (no subnormal, one NaN).
 * use VYRE_TEXT_LITERAL_DATA (input data): every storage type and any
 * bits (subnormals, NaN payloads; -nan is the negative quiet NaN); a
 * bool is any 32-bit word written as a u32; an integer also takes `max`
 * and `min` of its type, and an unsigned one a negative decimal down to
 * the signed minimum of its width, stored as two's complement (-1 is
 * all ones).
 *
 * Returns VYRE_OK, or VYRE_INVALID_ARGUMENT with "what is wrong. Fix:
 * how" in *err (may be NULL) and *bits untouched; also for a NULL bits,
 * a NULL text with a nonzero length, or an unknown use.  Independent of
 * the process locale; thread-safe.
 */
vyre_status vyre_text_parse_literal(const char *text, size_t length, uint32_t type, uint32_t use,
                                    uint64_t *bits, vyre_error *err);

/* Room for any text vyre_text_format_float writes, NUL included. */
#define VYRE_TEXT_FLOAT_MAX 32u
/* vyre_text_format_float flag: keep a '.' or an exponent ("10.0", not
 * "10"), so that the text reads as a float (the text form's constants). */
#define VYRE_TEXT_FLOAT_POINT 1u

/*
 * Write the shortest decimal that reads back (vyre_text_parse_literal,
 * VYRE_TEXT_LITERAL_DATA) to the same value of float type `type`
 * (VYRE_T_F32, VYRE_T_F16 or VYRE_T_BF16; its bits in the low bytes of
 * `bits`): the fewest significant digits, positional where the decimal
 * exponent is -5..15 (10 -> "10", 7840 -> "7840", 0.1 -> "0.1"), else
 * C's %e form (1e-07, 3.4e+38); NaN (any payload) is "nan", infinities
 * "inf" and "-inf", zeros "0" and "-0".  flags: 0 or
 * VYRE_TEXT_FLOAT_POINT (appends ".0" to a result with neither '.' nor
 * 'e'; never to nan or inf).
 *
 * Like snprintf: writes at most `size` bytes of out (NUL-terminated when
 * size > 0; out may be NULL when size is 0) and returns the length of
 * the whole text, less than VYRE_TEXT_FLOAT_MAX; a buffer of
 * VYRE_TEXT_FLOAT_MAX bytes always holds it.  Another type writes ""
 * and returns 0.  Independent of the process locale; thread-safe.
 */
size_t vyre_text_format_float(char *out, size_t size, uint32_t type, uint64_t bits,
                              uint32_t flags);

#ifdef __cplusplus
}
#endif
#endif /* VYRE_VYRE_TEXT_H */
