/* vyre_text.h -- the readable text form of programs: assembler and disassembler (share/doc/vyre/program-text.md). */
#ifndef VYRE_VYRE_TEXT_H
#define VYRE_VYRE_TEXT_H

#include <stddef.h>

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

#ifdef __cplusplus
}
#endif
#endif /* VYRE_VYRE_TEXT_H */
