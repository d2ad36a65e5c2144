/* bytes.h -- the one grammar of counts and byte counts that vyre reads from people (environment, command line). */
#ifndef VYRE_SUPPORT_BYTES_H
#define VYRE_SUPPORT_BYTES_H

#include <stdint.h>

/* The byte-count grammar in words, for messages and Fix texts. */
#define VYRE__BYTES_GRAMMAR \
  "a decimal number of bytes with an optional K, M, G or T suffix (1K = 1024)"

/*
 * A byte count: one or more decimal digits, then at most one suffix
 * letter K, M, G or T in either case (binary multiples: 2^10, 2^20,
 * 2^30, 2^40), then nothing.  No sign, space, fraction, "B" or "iB".
 * "0", "4096", "64k", "16M", "1T".  0 with *out set; -1 (and *out
 * untouched) for an empty or NULL string, anything outside the grammar,
 * or a value past UINT64_MAX.  Pure; thread-safe.
 */
int vyre__parse_bytes(const char *s, uint64_t *out);

/* A count: decimal digits only (no suffix), otherwise as
 * vyre__parse_bytes. */
int vyre__parse_count(const char *s, uint64_t *out);

#endif /* VYRE_SUPPORT_BYTES_H */
