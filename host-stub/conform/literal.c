/* literal.c -- the typed literals of case files through the text form's one grammar (vyre_text_parse_literal, input-data use), and the unsigned numbers of directives. */
#include <stdio.h>
#include <string.h>

#include "internal.h"
#include "vyre/vyre_text.h"

void cf_put_le(uint8_t *out, uint64_t v, uint32_t n) {
  for (uint32_t i = 0; i < n; i++) out[i] = (uint8_t)(v >> (8 * i));
}

int cf_word_is(const char *w, size_t len, const char *lit) {
  return strlen(lit) == len && strncmp(w, lit, len) == 0;
}

/* The literal's bits, or -1 with the grammar's message in why. */
static int parse_bits(uint32_t type, const char *w, size_t len, uint64_t *bits, char *why,
                      size_t why_size) {
  vyre_error err = VYRE_ERROR_INIT;
  if (vyre_text_parse_literal(w, len, type, VYRE_TEXT_LITERAL_DATA, bits, &err) == VYRE_OK)
    return 0;
  if (why_size) {
    size_t n = strlen(err.message);
    if (n >= why_size) n = why_size - 1;
    memcpy(why, err.message, n);
    why[n] = '\0';
  }
  return -1;
}

int cf_parse_literal(uint32_t type, const char *w, size_t len, uint8_t *out, char *why,
                     size_t why_size) {
  uint64_t v = 0;
  if (parse_bits(type, w, len, &v, why, why_size) != 0) return -1;
  cf_put_le(out, v, vyre_type_size(type));
  return 0;
}

/* A directive's number: a u32/u64 literal without a sign (decimal, 0x
 * hex, max, min). */
int cf_tok_u32(const cf_tok *t, uint32_t *out) {
  uint64_t v;
  char why[8];
  if (t->n && t->s[0] == '-') return -1;
  if (parse_bits(VYRE_T_U32, t->s, t->n, &v, why, sizeof why) != 0) return -1;
  *out = (uint32_t)v;
  return 0;
}

int cf_tok_u64(const cf_tok *t, uint64_t *out) {
  char why[8];
  if (t->n && t->s[0] == '-') return -1;
  return parse_bits(VYRE_T_U64, t->s, t->n, out, why, sizeof why);
}
