/* json.h -- the one JSON writer: string escaping, numbers, nesting, for every --json output and report of the host side. */
#ifndef VYRE_SUPPORT_JSON_H
#define VYRE_SUPPORT_JSON_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#define VYRE__JSON_MAX_DEPTH 32

/*
 * Strings.  Escaping (RFC 8259): '"' and '\' get a backslash; \b \f \n
 * \r \t their short forms; every other byte below 0x20 and 0x7f become
 * \u00XX (lower-case hex); valid UTF-8 (RFC 3629: no overlong forms, no
 * surrogates, nothing past U+10FFFF) is copied as it is; every byte that
 * does not start a valid sequence becomes \ufffd (one per byte).  The
 * output is valid JSON and valid UTF-8 whatever the input.
 */
/* s (n bytes, NUL bytes included as \u0000) as a string literal, quotes
 * included. */
void vyre__json_escape(FILE *f, const char *s, size_t n);
/* A NUL-terminated string as a literal; NULL writes null. */
void vyre__json_string_to(FILE *f, const char *s);

/*
 * One JSON document written to a stream, value by value.  Commas and the
 * ':' after a key are the writer's business; the caller says only what
 * comes next.  Inside an object every value follows vyre__json_key.  The
 * document ends with vyre__json_end (a newline after the top-level value,
 * and a flush).  Misuse (a value without a key in an object, nesting past
 * VYRE__JSON_MAX_DEPTH) is a bug in the caller: the writer then writes
 * null or nothing rather than invalid JSON where it can.  Not
 * thread-safe; one writer per document.
 */
typedef struct vyre__json {
  FILE *f;
  int depth;
  unsigned char in_object[VYRE__JSON_MAX_DEPTH]; /* 1 object, 0 array */
  unsigned char count[VYRE__JSON_MAX_DEPTH];     /* 0 until the level holds a value */
  int after_key;
} vyre__json;

/* Start a document on f.  One begun on stdout is counted
 * (vyre__json_stdout_documents). */
void vyre__json_init(vyre__json *w, FILE *f);
void vyre__json_object_begin(vyre__json *w);
void vyre__json_object_end(vyre__json *w);
void vyre__json_array_begin(vyre__json *w);
void vyre__json_array_end(vyre__json *w);
/* The next member's name (escaped as a string). */
void vyre__json_key(vyre__json *w, const char *key);
/* A string value; NULL writes null. */
void vyre__json_string(vyre__json *w, const char *s);
/* n bytes of s (NUL bytes included); NULL writes null. */
void vyre__json_string_n(vyre__json *w, const char *s, size_t n);
void vyre__json_uint(vyre__json *w, uint64_t v);
void vyre__json_int(vyre__json *w, int64_t v);
/* A finite double as the shortest text that reads back as the same
 * double: the fewest significant digits, plain when that is no longer
 * than the exponent form ("10", "7840", "0.1", "1e-05", "5e-324"); NaN
 * and infinities (which JSON cannot hold) are written as null. */
void vyre__json_double(vyre__json *w, double v);
void vyre__json_bool(vyre__json *w, int v);
void vyre__json_null(vyre__json *w);
/* A value already written as JSON text by the caller: copied as it is. */
void vyre__json_raw(vyre__json *w, const char *token);
/* Close what is open, write a newline and flush. */
void vyre__json_end(vyre__json *w);

/* How many documents this process began on stdout, and counting one
 * written there by other code (a report printed without the writer).
 * Not thread-safe (one thread writes stdout). */
unsigned vyre__json_stdout_documents(void);
void vyre__json_count_stdout_document(void);

#endif /* VYRE_SUPPORT_JSON_H */
