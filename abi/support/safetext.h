/* safetext.h -- the one sanitiser of text from untrusted sources (plugins, case files, file names) before a terminal sees it. */
#ifndef VYRE_SUPPORT_SAFETEXT_H
#define VYRE_SUPPORT_SAFETEXT_H

#include <stddef.h>

/* What survives: VYRE__SAFE_LINE keeps one line (every control byte goes);
 * VYRE__SAFE_TEXT keeps newlines and tabs (a JIT log, a multi-line
 * message) and replaces every other control byte. */
#define VYRE__SAFE_LINE 0
#define VYRE__SAFE_TEXT 1

/*
 * Copy at most `len` bytes of src (stopping at a NUL) to dst (`size`
 * bytes, always NUL-terminated; size 0 writes nothing), replacing with
 * '?' each byte a terminal could act on: C0 controls (ESC, BEL, CR,
 * backspace, ... ; newline and tab survive only in VYRE__SAFE_TEXT),
 * DEL, the C1 controls U+0080..U+009F as UTF-8 (C2 80..C2 9F: CSI is
 * C2 9B), and each byte of malformed UTF-8 (a lone 0x9B is CSI to an
 * 8-bit terminal).  Well-formed UTF-8 text is kept as it is.  src NULL
 * copies "".  In place (dst == src) is allowed: the output is never
 * longer than the input.  Returns the bytes written, without the NUL.
 * Pure; thread-safe.
 */
size_t vyre__safe_text(char *dst, size_t size, const char *src, size_t len, int mode);

#endif /* VYRE_SUPPORT_SAFETEXT_H */
