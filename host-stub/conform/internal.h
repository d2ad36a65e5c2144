/* internal.h -- what the conformance harness's files share beyond conform.h: case-file parsing (case.c, directive.c, generate.c, literal.c) and a run's corpus and reports (run.c, replay.c, report.c, corpus.c). */
#ifndef VYRE_CONFORM_INTERNAL_H
#define VYRE_CONFORM_INTERNAL_H

#include "conform.h"

/* Longest generated input: 64 Mi elements keeps a typo from eating memory. */
#define CF_MAX_GENERATED (1u << 26)
/* All the data of one case (inputs and expected outputs, generated or
 * written out) at most: a 100-byte capsule must not ask for 32 GiB
 * (64 buffers of 64 Mi u64 each).  docs/conformance.md, "Files the
 * harness reads". */
#define CF_MAX_CASE_DATA ((uint64_t)256 << 20)

/* ------------------------------------------------------------------ */
/* Case files                                                          */
/* ------------------------------------------------------------------ */

/* One word of a `;@` line (not NUL-terminated). */
typedef struct cf_tok {
  const char *s;
  size_t n;
} cf_tok;

/* Where a case file is being read: errors name path:line. */
typedef struct cf_parse_ctx {
  cf_case *c;
  const char *path;
  uint32_t line;
  vyre_error *err;
  uint64_t data; /* bytes of input and expected-output data so far */
} cf_parse_ctx;

/* Per-buffer data being assembled from `input` / `expect-output` lines. */
typedef struct cf_pending {
  strbuf in[CF_MAX_IO];
  strbuf out[CF_MAX_IO];
  int in_set[CF_MAX_IO], out_set[CF_MAX_IO];
  uint32_t expect_line; /* the line of the case's `expect`; 0: none yet */
} cf_pending;

/* util.c: the error of the line px is at, "PATH:LINE: what"; returns st. */
vyre_status cf_parse_error(cf_parse_ctx *px, vyre_status st, const char *fmt, ...)
    VYRE_PRINTF(3, 4);

/* literal.c: v as n little-endian bytes; 1 when the word is `lit`; an
 * unsigned 32/64-bit number (decimal, 0x hex, max) of a directive, 0 or -1. */
void cf_put_le(uint8_t *out, uint64_t v, uint32_t n);
int cf_word_is(const char *w, size_t len, const char *lit);
int cf_tok_u32(const cf_tok *t, uint32_t *out);
int cf_tok_u64(const cf_tok *t, uint64_t *out);

/* generate.c: run the data generator toks[0] (toks[1..n-1] its words),
 * appending elements of storage type `type` to b. */
vyre_status cf_generate(cf_parse_ctx *px, uint32_t type, const cf_tok *toks, uint32_t n,
                        strbuf *b);

/* directive.c: apply the `;@` line t[0..n-1] (n >= 1) to px->c and pd. */
vyre_status cf_directive(cf_parse_ctx *px, cf_pending *pd, const cf_tok *t, uint32_t n);

/* case.c: "CATEGORY/NAME", the name runs and reports use. */
void cf_case_full_name(const cf_case *c, char *out, size_t size);

/* ------------------------------------------------------------------ */
/* Runs: the corpus and the reports                                    */
/* ------------------------------------------------------------------ */

enum { R_PASS, R_FAIL, R_SKIP };
/* "pass", "fail", "skip" (report.c). */
extern const char *const cf_result_names[3];

/* What happened to one case on one target. */
typedef struct cf_case_outcome {
  int result;
  char reason[768];
  char capsule[4608];
  double ms;
} cf_case_outcome;

typedef struct cf_category_row {
  char name[64];
  uint32_t n[3];
} cf_category_row;

typedef struct cf_target_report {
  cf_target *t;
  int static_ok, elf_ok;
  char static_note[1024];
  cf_case_outcome *cases;   /* one per corpus case */
  cf_category_row *rows;
  uint32_t nrows;
  uint32_t n[3];
  uint32_t untested;     /* claimed ops that cases reached but none gave a verdict */
  uint32_t unreachable;  /* claimed ops no case the backend runs contains */
  cf_op_tally ops[256];
} cf_target_report;

/* corpus.c: the case files of a run, loaded. */
typedef struct cf_corpus {
  char **paths;
  uint32_t count;
  cf_case **cases;       /* NULL where a file does not load */
  char **errors;         /* why, where it does not */
  uint32_t selected;     /* cases matching the filter */
  char hash[65];
} cf_corpus;

/* Load every case file of o->corpus_dir; keep those matching o->filter
 * (files that fail to load are kept as errors whatever the filter says
 * about them).  An empty corpus, or a filter that keeps nothing, is an
 * error.  Free with cf_corpus_free, also after a failure. */
vyre_status cf_corpus_load(const cf_options *o, cf_corpus *cp, vyre_error *err);
void cf_corpus_free(cf_corpus *cp);

/* util.c: clear the live progress line before a line goes to o->out; a
 * pass/fail word, in color when o->color. */
void cf_progress_clear(const cf_options *o);
void cf_paint(const cf_options *o, const char *sgr, const char *word);

/* report.c: the summary row of category `name` (added when new); the
 * category table; --json (junit 0) or --junit (1) to path, and
 * --certificate: 0, or 1 when it could not be written. */
cf_category_row *cf_report_row(cf_target_report *r, const char *name);
void cf_report_table(FILE *f, const cf_target_report *r);
int cf_report_write(const char *path, int junit, const cf_options *o, const cf_corpus *cp,
                    cf_target_report *reps, uint32_t nt);
int cf_report_certificate(const cf_options *o, const cf_corpus *cp, cf_target_report *r,
                          vyre_error *err);

/* replay.c: minimize a failure into `path` and say how it went, one line. */
void cf_report_minimized(FILE *out, const char *indent, cf_case *m, const cf_target *t,
                         const cf_pair *pair, uint32_t tries, const char *origin,
                         const char *path);

#endif /* VYRE_CONFORM_INTERNAL_H */
