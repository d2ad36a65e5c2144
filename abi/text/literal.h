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

/* Parse an unsigned decimal or 0x hex number of at most `max`; 0 or -1. */
int vyre__text_parse_uint(const char *s, size_t len, uint64_t max, uint64_t *out);

#endif /* VYRE_TEXT_LITERAL_H */
