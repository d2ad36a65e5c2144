/* cli_json.h -- the JSON writer behind every `--json` of the `vyre` command: escaping, numbers, nesting, and the error document. */
#ifndef VYRE_CLI_JSON_H
#define VYRE_CLI_JSON_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#define CJ_MAX_DEPTH 32

/*
 * One JSON document written to a stream, value by value.  Commas and
 * the ": " after a key are the writer's business; the caller says only
 * what comes next.  Inside an object every value follows cj_key.  The
 * document ends with cj_end (a newline after the top-level value).
 * Misuse (a value without a key in an object, nesting past CJ_MAX_DEPTH)
 * is a bug in the caller: the writer then writes `null` or nothing
 * rather than invalid JSON where it can.  Not thread-safe; one writer
 * per document.
 */
typedef struct cj_writer {
  FILE *f;
  int depth;
  unsigned char in_object[CJ_MAX_DEPTH]; /* 1 object, 0 array */
  unsigned char count[CJ_MAX_DEPTH];     /* 0 until the level holds a value */
  int after_key;
} cj_writer;

/* Start a document on f.  When f is stdout, cj_stdout_documents() counts it. */
void cj_init(cj_writer *w, FILE *f);
void cj_object_begin(cj_writer *w);
void cj_object_end(cj_writer *w);
void cj_array_begin(cj_writer *w);
void cj_array_end(cj_writer *w);
/* The next member's name (escaped as a string). */
void cj_key(cj_writer *w, const char *key);
/* A string value; NULL writes null.  Bytes that are not valid UTF-8
 * become U+FFFD; control characters are escaped. */
void cj_string(cj_writer *w, const char *s);
/* n bytes of s (NUL bytes included, escaped as \u0000). */
void cj_string_n(cj_writer *w, const char *s, size_t n);
void cj_uint(cj_writer *w, uint64_t v);
void cj_int(cj_writer *w, int64_t v);
/* A finite double with up to 17 significant digits; NaN and infinities
 * (which JSON cannot hold) are written as null. */
void cj_double(cj_writer *w, double v);
void cj_bool(cj_writer *w, int v);
void cj_null(cj_writer *w);
/* A value already written as JSON text by the caller (a number in a
 * form of its own, true/false, a string literal): copied as it is. */
void cj_raw(cj_writer *w, const char *token);
/* Finish the document: a newline, and a flush. */
void cj_end(cj_writer *w);

/* Write s (n bytes) to f as a JSON string literal, quotes included. */
void cj_escape(FILE *f, const char *s, size_t n);

/* How many documents were begun on stdout by this process. */
unsigned cj_stdout_documents(void);
/* Count a document written to stdout by other code (the conformance
 * report). */
void cj_count_stdout_document(void);

#endif /* VYRE_CLI_JSON_H */
