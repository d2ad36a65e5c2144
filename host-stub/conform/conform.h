/* conform.h -- internal API of the conformance harness (vyre conform, vyre fuzz): cases, comparison, capsules, minimizer, ELF checks, coverage, certificates. */
#ifndef VYRE_CONFORM_H
#define VYRE_CONFORM_H

/*
 * docs/conformance.md is the user-facing description.  Everything here is
 * internal to host-stub (prefix cf_ for the harness, fz_ for the fuzzer)
 * and linked into the `vyre` CLI and tests/conform/check_conform from the
 * convenience library host-stub/libvyre-conform.la.
 *
 * THREADING: no function keeps global state; distinct objects may be used
 * from distinct threads.  ERRORS: functions return vyre_status and fill a
 * caller-owned vyre_error with "what failed: why. Fix: how".
 */

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "vyre/vyre.h"
#include "vyre/vyre_program.h"
#include "vyre/vyre_support.h"
#include "abi/support/strbuf.h"

/* ------------------------------------------------------------------ */
/* Small helpers (util.c)                                             */
/* ------------------------------------------------------------------ */

/* Read bounds (docs/conformance.md, "Files the harness reads"): a case
 * file or capsule, and a plugin file the static checks read, each read
 * with vyre__file_read (abi/support/file.h: a regular file, or standard
 * input for "-", never past the bound) and CF_TOO_BIG_FIX as the Fix of
 * a file over it. */
#define CF_MAX_CASE_BYTES ((size_t)256 << 20)
#define CF_MAX_PLUGIN_BYTES ((size_t)1 << 30)
#define CF_TOO_BIG_FIX                                                                        \
  "pass a file of the right kind; that is the most vyre reads from one (docs/conformance.md, " \
  "\"Files the harness reads\")"
/* The replay capsule format (`;@ capsule 1`, docs/conformance.md, "Replay capsules"). */
#define CF_CAPSULE_VERSION 1u

/* SHA-256 of a file as 64 hex chars + NUL. */
vyre_status cf_sha256_file(const char *path, char hex[65], vyre_error *err);
/* mkdir -p. */
vyre_status cf_mkdirs(const char *path, vyre_error *err);
/* XML-escaped text of s to f. */
void cf_xml_text(FILE *f, const char *s);
/* 1 when `name` matches the shell-style pattern (`*`, `?`, `[...]`);
 * a pattern without wildcards matches as a substring. */
int cf_pattern_match(const char *pattern, const char *name);


/* ------------------------------------------------------------------ */
/* Cases (case.c, literal.c, generate.c, directive.c, corpus.c)       */
/* ------------------------------------------------------------------ */

/* Most outputs a case may carry golden values for / a capsule records. */
#define CF_MAX_IO VYRE_MAX_BUFFERS

/* Bytes of one buffer's data (input, golden or recorded output). */
typedef struct cf_data {
  int present;
  uint8_t *bytes; /* malloc'd */
  uint64_t size;
} cf_data;

typedef struct cf_case {
  char name[128];      /* "add.u32" */
  char category[64];   /* "ops.int": the summary table's rows */
  char *about;         /* one line, may be NULL */
  char *path;          /* file it came from (or "<memory>") */
  char *text;          /* the whole source, NUL-terminated */
  size_t text_size;

  void *program;       /* assembled image (malloc'd) */
  size_t program_size;
  vyre_program *decoded;

  /* One per buffer in declaration order; only input buffers use theirs. */
  cf_data input[CF_MAX_IO];
  /* Golden outputs, one per buffer (only outputs): compared bytewise
   * (with the tolerance for f32/f16/bf16) against every backend. */
  cf_data golden[CF_MAX_IO];

  vyre_dispatch_options options; /* ulp budget, workgroup, grid, fixpoint */
  uint32_t tolerance;  /* ULPs allowed on float outputs (default: ulp budget) */
  int32_t expect;      /* vyre_status expected of every backend (default OK) */
  int expect_code_set; /* with VYRE_TRAP: the trap code must match */
  int64_t expect_code;
  uint64_t extra_caps; /* `requires` on top of what the program needs */
  int indirect;        /* `indirect BUFFER OFFSET`: run through resident buffers and
                          dispatch_resident with a vyre_indirect on that buffer */
  uint32_t indirect_buffer; /* the buffer (declaration index) holding the counts */
  uint64_t indirect_offset; /* byte offset of the counts in it */
  int focus_set;       /* `ops` given: a failure counts against these ops only */
  uint64_t focus[4];   /* op-id bit set (cf_opset layout) */

  /* Capsule fields (present when the file is a replay capsule). */
  int is_capsule;
  int sha_set;
  uint8_t sha256[32];  /* recorded program hash */
  int sha_mismatch;    /* the text no longer assembles to that hash (edited) */
  char origin[160];    /* "conform CASE", "fuzz SEED N" */
  char backend[64];    /* backend id the mismatch was seen on */
} cf_case;

/*
 * Parse a case (program text with `;@` directive lines, docs/conformance.md)
 * from `length` bytes of `text`; `path` names it in messages and gives the
 * default name and category (file stem; parent directory).  The program is
 * assembled and validated and every input is generated.  On success *out
 * is a new case (free with cf_case_free).  Errors read "PATH:LINE: ...".
 */
vyre_status cf_case_parse(const char *text, size_t length, const char *path, cf_case **out,
                          vyre_error *err);
vyre_status cf_case_load(const char *path, cf_case **out, vyre_error *err);
void cf_case_free(cf_case *c);

/*
 * Make a case from a program image (fuzzer, minimizer): copies bytes and
 * inputs (one per input of the program, in input order).  The text is the
 * disassembly.  options may be NULL.
 */
vyre_status cf_case_from_program(const void *bytes, size_t size, const vyre_input *inputs,
                                 const vyre_dispatch_options *options, const char *name,
                                 const char *category, cf_case **out, vyre_error *err);

/* Replace the case's program (keeps inputs, options, expectations): for
 * the minimizer.  The new image is validated; inputs must still fit. */
vyre_status cf_case_set_program(cf_case *c, const void *bytes, size_t size, vyre_error *err);

/* Inputs in the ABI's order (one per input buffer) pointing into the
 * case; *count receives program->input_count. */
void cf_case_inputs(const cf_case *c, vyre_input *inputs, uint32_t *count);

/* Parse one literal of element type `type` (storage type) into little-
 * endian bytes at out (vyre_type_size(type) of them): the text form's one
 * grammar, input-data use (vyre_text_parse_literal).  0 on success, else
 * -1 with the grammar's message ("'x' is not a u32 literal. Fix: ...")
 * in why[]. */
int cf_parse_literal(uint32_t type, const char *word, size_t len, uint8_t *out, char *why,
                     size_t why_size);

/* One random element of storage type `type` (vyre_type_size bytes) into
 * out: edge values, specials (NaN payloads, infinities, signed zeros,
 * subnormals) and random bits, as the `random` generator makes them. */
void cf_random_element(uint32_t type, uint64_t *rng, uint8_t *out);

/* List the case files (*.vyre) under dir recursively in byte-wise order:
 * *paths receives a malloc'd array of malloc'd strings. */
vyre_status cf_corpus_list(const char *dir, char ***paths, uint32_t *count, vyre_error *err);
void cf_corpus_list_free(char **paths, uint32_t count);

/* SHA-256 over the corpus: each file's relative path, a NUL, its bytes,
 * a NUL, in list order.  hex receives 64 chars + NUL. */
vyre_status cf_corpus_hash(const char *dir, char **paths, uint32_t count, char hex[65],
                           vyre_error *err);

/* ------------------------------------------------------------------ */
/* What a case needs and a backend offers (case.c)                    */
/* ------------------------------------------------------------------ */

/* 256-bit op-id set. */
typedef struct cf_opset {
  uint64_t w[4];
} cf_opset;
static inline void cf_opset_add(cf_opset *s, uint32_t op) {
  if (op < 256) s->w[op >> 6] |= 1ull << (op & 63);
}
static inline int cf_opset_has(const cf_opset *s, uint32_t op) {
  return op < 256 && (s->w[op >> 6] >> (op & 63)) & 1;
}

/*
 * What a case needs is libvyre's vyre_needs (vyre_program_needs in
 * vyre_support.h: one implementation for hosts, the harness and the
 * fuzzer); a case's `requires` comes on top (cf_case.extra_caps).  What a
 * backend offers is below; docs/conformance.md, "Skipped vs failed".
 */

/* What case c needs: vyre_program_needs of its program and options (the
 * options' extension chain left out: the harness chains its own structs
 * per call), plus its `requires` (cf_case.extra_caps). */
void cf_case_needs(const cf_case *c, vyre_needs *out);

/* What a backend offers: from its registration (and device profile).
 * Fill ops and op_types with cf_offer_claim. */
typedef struct cf_offer {
  cf_opset ops;
  uint64_t caps;
  uint64_t storage_types;
  uint32_t op_types[256]; /* per claimed op: VYRE_TBIT of each type it is claimed
                             at; 0 = every type its class allows */
} cf_offer;

/* Claim op at the types in `types` (VYRE_TBIT bits; 0 = every type the
 * op's class allows, as in vyre_registration.op_types).  Bits the op
 * cannot have are dropped; an op id of 256 or more is ignored. */
void cf_offer_claim(cf_offer *offer, uint32_t op, uint32_t types);

/* 1 when the backend offers everything; else 0 and why[] names what is
 * missing, every item, "; "-separated (vyre_needs_unmet's words: "op sin
 * not claimed", "op add not claimed at f32", "capability int64 not
 * offered", "storage type u64 not offered"). */
int cf_offer_covers(const cf_offer *offer, const vyre_needs *needs, char *why, size_t why_size);

/* 1 when the offer covers everything the needs name but correctly_rounded,
 * which the needs name and the offer lacks: a strict request with a
 * transcendental, which that backend must refuse with VYRE_UNSUPPORTED
 * rather than be skipped (docs/conformance.md, "Strict transcendentals"). */
int cf_offer_must_refuse(const cf_offer *offer, const vyre_needs *needs);

/* ------------------------------------------------------------------ */
/* Running and comparing (exec.c, compare.c)                          */
/* ------------------------------------------------------------------ */

/* The outcome of one dispatch, owning copies of the outputs. */
typedef struct cf_result {
  int32_t status;           /* vyre_status */
  int64_t native_code;      /* trap code with VYRE_TRAP */
  char message[VYRE_ERROR_MESSAGE_MAX];
  uint32_t output_count;
  cf_data output[CF_MAX_IO]; /* in output order */
  uint64_t wall_ns;
  /* cf_run_reference on a program with a float mma: per output, one bound
   * per 4-byte element (ref_mma_bound, host-stub/ref/tolerance.h): < 0
   * where the usual rules apply, else the MMA error bound; NULL elsewhere. */
  double *bound[CF_MAX_IO];
  uint64_t bound_count[CF_MAX_IO];
} cf_result;

/* Dispatch the case's program on `backend` with its inputs and options,
 * bounded by the limits of cf_set_limits when the backend serves
 * vyre.limits.  Never fails itself: the status lands in *out (free with
 * cf_result_free). */
void cf_run(vyre_backend *backend, const cf_case *c, cf_result *out);
/* cf_run of a case with `indirect` (indirect.c): every non-workgroup
 * buffer a resident one of the derived size (inputs uploaded, the rest
 * zero), dispatch_resident with `options` and a vyre_indirect on the
 * case's counts buffer chained in front of their chain, the outputs'
 * readback ranges downloaded; the resident buffers are freed. */
void cf_run_indirect(vyre_backend *backend, const cf_case *c,
                     const vyre_dispatch_options *options, cf_result *out);

/* The per-dispatch limits every later cf_run chains (vyre_limits, on
 * backends that serve vyre.limits; others run unbounded): a timeout in
 * ns and a step budget, 0 = none.  Until set: CF_DEFAULT_TIMEOUT_NS and
 * no step budget.  Process-wide; set it before runs start. */
#define CF_DEFAULT_TIMEOUT_NS (60ull * 1000000000ull)
void cf_set_limits(uint64_t timeout_ns, uint64_t max_steps);
void cf_result_free(cf_result *r);

/* cf_run on the reference backend: when the program has a float mma (an
 * mma at f16 or bf16) it also chains a ref_mma_bound and keeps the bounds
 * in out->bound (docs/conformance.md, "Comparison rules"). */
void cf_run_reference(vyre_backend *reference, const cf_case *c, cf_result *out);
/* 1 when the program has an mma at f16 or bf16. */
int cf_program_has_float_mma(const vyre_program *p);

/* ULP distance between two f32 bit patterns: ±0 are equal; NaN equals
 * only NaN of the same bits and infinities only themselves (UINT64_MAX
 * when not comparable).  cf_ulp_distance_f16/bf16 likewise. */
uint64_t cf_ulp_distance_f32(uint32_t a, uint32_t b);
uint64_t cf_ulp_distance_f16(uint16_t a, uint16_t b);
uint64_t cf_ulp_distance_bf16(uint16_t a, uint16_t b);

/* The first difference found by cf_compare. */
typedef enum cf_diff_kind {
  CF_SAME = 0,
  CF_DIFF_STATUS,   /* statuses (or trap codes) differ */
  CF_DIFF_COUNT,    /* number of outputs differs */
  CF_DIFF_SIZE,     /* an output's size differs */
  CF_DIFF_VALUE     /* an element differs beyond the rule */
} cf_diff_kind;

typedef struct cf_diff {
  int kind;            /* cf_diff_kind */
  uint32_t output;     /* output index */
  uint32_t buffer;     /* buffer index (declaration order) */
  uint64_t element;    /* element index within the returned bytes */
  uint64_t byte;       /* byte offset within the returned bytes */
  uint64_t ulps;       /* distance for floats (UINT64_MAX: not comparable) */
  uint32_t differing;  /* elements that differ in that output */
  double bound;        /* the first one's MMA bound, -1 when it has none */
  double over;         /* |got - want| - bound when it has one (inf: NaN/inf differ) */
  char text[640];      /* "output out (f32) element 3 (byte 12): expected 0x.. (1.5), got 0x.. (1.5000001), 1 ulp > tolerance 0" */
} cf_diff;

/*
 * Compare `got` (the backend) with `want` (the reference) under the case's
 * rule: statuses equal (and trap codes when the case names one or either
 * trapped), then for VYRE_OK the outputs: integers and bools byte for
 * byte, f32/f16/bf16 within c->tolerance ULPs (NaN and infinities exact).
 * Returns 1 when they agree; else 0 and *diff describes the first
 * difference.
 */
int cf_compare(const cf_case *c, const cf_result *want, const cf_result *got, cf_diff *diff);

/* Compare one result with the case's expectation (status, trap code,
 * golden outputs).  Returns 1 when it meets it; else 0 with *diff.
 * Golden elements with an MMA bound (got->bound, else `bounds`->bound:
 * the reference's result of the same dispatch, may be NULL) are compared
 * within it. */
int cf_check_expected(const cf_case *c, const cf_result *got, cf_diff *diff);

/* The judgement of cf_offer_must_refuse's cases: 1 when `got` is
 * VYRE_UNSUPPORTED; else 0 with *diff (kind CF_DIFF_STATUS). */
int cf_check_refused(const cf_result *got, cf_diff *diff);
int cf_check_expected_bounded(const cf_case *c, const cf_result *got, const cf_result *bounds,
                              cf_diff *diff);

/* Element type (storage type) of output `index` of the program. */
uint32_t cf_output_type(const vyre_program *p, uint32_t index, uint32_t *buffer);

/* ------------------------------------------------------------------ */
/* Replay capsules (capsule.c)                                        */
/* ------------------------------------------------------------------ */

typedef struct cf_capsule_info {
  const char *origin;        /* "conform ops.int/add.u32", "fuzz 1 37" */
  const char *backend_id;
  const char *backend_version;
  const char *device;        /* device profile name, may be NULL */
  const cf_result *backend;  /* what the backend returned */
  const cf_result *reference;
  const cf_diff *diff;
  const char *note;          /* e.g. "minimized from 83 to 7 instructions", may be NULL */
} cf_capsule_info;

/* Write the case as a replay capsule (a case file: canonical program
 * text, literal inputs, options, expectations, plus both outputs and the
 * first mismatch as directives) into *out (malloc'd text). */
vyre_status cf_capsule_format(const cf_case *c, const cf_capsule_info *info, char **out,
                              size_t *size, vyre_error *err);
vyre_status cf_capsule_write(const char *path, const cf_case *c, const cf_capsule_info *info,
                             vyre_error *err);

/* ------------------------------------------------------------------ */
/* Minimizer (min.c)                                                  */
/* ------------------------------------------------------------------ */

/* The property to preserve: return 1 when `candidate` (a valid program
 * with the original inputs) still shows the failure. */
typedef int (*cf_still_fails_fn)(void *ctx, const cf_case *candidate);

typedef struct cf_min_stats {
  uint32_t tries;       /* predicate evaluations */
  uint32_t accepted;    /* candidates that kept the failure */
  uint32_t insts_before, insts_after;
} cf_min_stats;

/*
 * Shrink c's program while still_fails holds: delete statements and
 * whole blocks (delta debugging over ever smaller chunks), unwrap if/else
 * and blocks, replace values by zero constants, drop dead values and
 * unused locals; every candidate is validated before the predicate sees
 * it.  At most max_tries predicate calls (0 = 2000).  On return c holds
 * the smallest failing program found (unchanged when nothing smaller
 * fails).  Fails only when memory runs out.
 */
vyre_status cf_minimize(cf_case *c, cf_still_fails_fn still_fails, void *ctx,
                        uint32_t max_tries, cf_min_stats *stats, vyre_error *err);

/* A predicate for cf_minimize: the backend and the reference still
 * disagree in the same way (status class or value) as `original`. */
typedef struct cf_pair {
  vyre_backend *backend;
  vyre_backend *reference;
  int original_kind;       /* cf_diff_kind of the first run */
  int32_t backend_status;  /* status pair of the original */
  int32_t reference_status;
} cf_pair;
int cf_pair_still_fails(void *ctx, const cf_case *candidate);

/* ------------------------------------------------------------------ */
/* ELF export check (elf.c)                                           */
/* ------------------------------------------------------------------ */

#define CF_ELF_MAX_LISTED 16

typedef struct cf_elf_report {
  uint32_t exported;        /* defined global/weak default-visibility dynamic symbols */
  int has_descriptor, has_entry;
  uint32_t extra_count;     /* exported symbols other than the two */
  char extra[CF_ELF_MAX_LISTED][96];
  uint32_t host_imports;    /* undefined vyre_* symbols (a plugin imports nothing from the host) */
  char imports[CF_ELF_MAX_LISTED][96];
  uint32_t machine;         /* e_machine (EM_*) */
  int is64;                 /* ELFCLASS64 */
} cf_elf_report;

/* Read the ELF (32/64-bit, either byte order) .dynsym of the file at
 * path.  VYRE_IO / VYRE_INVALID_ARGUMENT when it is not a readable ELF
 * shared object with a dynamic symbol table. */
vyre_status cf_elf_exports(const char *path, cf_elf_report *out, vyre_error *err);
/* The same on an image in memory; path only names it in messages. */
vyre_status cf_elf_exports_mem(const void *data, size_t size, const char *path, cf_elf_report *out,
                               vyre_error *err);
/* 1 when the report shows a plugin for this machine (e_machine and
 * class) exporting exactly the descriptor and the entry, with no host
 * imports; else 0 and why[] says what is wrong. */
int cf_elf_ok(const cf_elf_report *r, char *why, size_t why_size);

/* ------------------------------------------------------------------ */
/* Coverage (coverage.c)                                              */
/* ------------------------------------------------------------------ */

/* What a corpus exercises: (op, type) pairs, cast pairs, atomic orders,
 * reduce kinds, builtin axes, barrier scopes. */
typedef struct cf_coverage {
  uint32_t op_type[256][VYRE_T_COUNT_];    /* cases using op with type */
  uint32_t cast[VYRE_T_COUNT_][VYRE_T_COUNT_]; /* from, to */
  uint32_t order[256][VYRE_ORDER_COUNT_];  /* atomics */
  uint32_t reduce[VYRE_REDUCE_COUNT_][VYRE_T_COUNT_];
  uint32_t axis[16][3];                    /* gid/wgid/lid by axis (op - 5) */
  uint32_t scope[2];                       /* barrier workgroup/grid */
  uint32_t cases;
} cf_coverage;

void cf_coverage_add(cf_coverage *cov, const vyre_program *p);

/* Print the coverage table of the ops in `claimed` (NULL = every op) to f
 * and return the number of required combinations that no case covers
 * (listed as "MISSING ...").  storage_types limits load/store types; caps
 * without VYRE_CAP_ATOMIC64 drops 64-bit atomics.  verbose prints every
 * op, else only those with something missing. */
uint32_t cf_coverage_report(const cf_coverage *cov, const cf_opset *claimed,
                            uint64_t storage_types, uint64_t caps, FILE *f, int verbose);

/* ------------------------------------------------------------------ */
/* Per-op results and the certificate (cert.c)                        */
/* ------------------------------------------------------------------ */

typedef struct cf_op_tally {
  uint32_t passed, failed, skipped;
  uint32_t reached;         /* cases containing the op that ran (were not skipped) */
  char failed_cases[3][96]; /* the first failing cases blamed on the op */
  char blocked[256];        /* the first skipped case containing the op: "NAME: why" */
} cf_op_tally;

typedef struct cf_cert_input {
  const char *plugin_path;
  const char *backend_id, *backend_version, *build_id;
  uint32_t abi_major, abi_minor;
  const vyre_device_profile *profile; /* may be NULL (no device) */
  const char *corpus_dir;
  const char *corpus_hash;
  const cf_opset *claimed;
  uint64_t claimed_caps, claimed_storage;
  const cf_op_tally *ops;   /* [256] */
  uint32_t passed, failed, skipped, total;
  uint32_t elf_ok, static_ok;
  const char *static_note;
  const char *date_utc;     /* NULL = now */
  const char *tool_version;
} cf_cert_input;

/* Write the certificate JSON (docs/conformance.md "Certificate"). */
vyre_status cf_certificate_write(const char *path, const cf_cert_input *in, vyre_error *err);
void cf_certificate_print(FILE *f, const cf_cert_input *in);

/* A copy of a case (through its capsule text, so it also checks that
 * capsules read back). */
vyre_status cf_case_clone(const cf_case *c, cf_case **out, vyre_error *err);

/* Forget the golden outputs: they describe the original program, not one
 * the minimizer changed. */
void cf_case_drop_goldens(cf_case *c);

/* ------------------------------------------------------------------ */
/* Runs over backends (run.c, replay.c, host-stub/fuzz/run.c)         */
/* ------------------------------------------------------------------ */

/* One backend under test, as the CLI found it through libvyre-host. */
typedef struct cf_target {
  char id[32];
  char version[64];
  char build_id[64];
  char path[4096];
  int loaded;               /* registered (descriptor, entry and registration accepted) */
  char reason[640];         /* why it is not loaded / has no instance */
  uint32_t abi_major, abi_minor;
  uint32_t registration_size, vtable_size; /* as the descriptor/registration state */
  cf_offer offer;           /* registration: ops, capabilities, storage types */
  vyre_backend *backend;    /* an instance, or NULL when unavailable (no device) */
  int unusable;             /* loaded, but no host can use it (reason says why): a failure;
                               0 with backend NULL: no device here, SKIPPED */
  int has_profile;
  vyre_device_profile profile;
} cf_target;

/* What cf_minimize_to_capsule (min.c) did. */
typedef struct cf_min_capsule {
  cf_min_stats stats;
  int written;    /* 1: a smaller program was found and written */
  char note[256]; /* the note of the written capsule */
} cf_min_capsule;

/*
 * Shrink `c` in place (a case without goldens: cf_case_drop_goldens)
 * while t's backend still fails against the reference as `pair` says,
 * trying at most `tries` candidates (0 = 1000).  When it shrank, run
 * both again and write the smaller program to `path` as a capsule
 * recorded from `origin`, whose note says how far it shrank, followed by
 * `note_tail` when not NULL.  Fails when memory runs out or the capsule
 * cannot be written; out->written says whether a capsule was written.
 */
vyre_status cf_minimize_to_capsule(cf_case *c, const cf_target *t, const cf_pair *pair,
                                   uint32_t tries, const char *origin, const char *note_tail,
                                   const char *path, cf_min_capsule *out, vyre_error *err);

typedef struct cf_options {
  const char *corpus_dir;       /* tests/conformance */
  const char *filter;           /* glob or substring on "category/name"; NULL = all */
  const char *capsule_dir;      /* where failures go; NULL = "conform-failures" */
  const char *json_path, *junit_path, *certificate_path; /* may be NULL */
  const char *tool_version;     /* "vyre-cuda 1.0.0" */
  int minimize;                 /* shrink failing cases */
  uint32_t minimize_tries;      /* 0 = 1000 */
  int verbose;                  /* a line per case */
  FILE *out;                    /* progress and tables (stdout) */
  /* The live progress line: called with a one-line text after each case
   * and with NULL to clear it (before any other line is written to out,
   * and at the end).  NULL: no live line; out gets a count every 100
   * cases instead. */
  void (*progress)(void *ctx, const char *text);
  void *progress_ctx;
  int color;                    /* ANSI color on the pass/fail words written to out */
  unsigned *stdout_reports;     /* when not NULL, counts the reports written to stdout ("-") */
} cf_options;

/*
 * vyre conform: static checks of each target, then every corpus case on
 * the target and on `reference`, compared per the case's rule; tables,
 * reports, capsules, minimized capsules, the certificate.  Returns the
 * exit status: 0 when nothing failed (skips are fine), 1 otherwise
 * (2 for a bad corpus directory).  err carries the reason of a 1/2 that
 * is not a case failure.
 */
int cf_conform_run(const cf_options *o, cf_target *targets, uint32_t count,
                   vyre_backend *reference, vyre_error *err);

/* vyre conform --replay FILE: re-run a capsule (or any case file) on each
 * target and the reference; with o->minimize write FILE's .min.vyre.
 * 0 when they agree, 1 when they still differ. */
int cf_replay_run(const cf_options *o, const char *path, cf_target *targets, uint32_t count,
                  vyre_backend *reference, vyre_error *err);

/* vyre conform --coverage: the corpus coverage table; for each target,
 * the combinations of its claimed ops; with no target, of every op.
 * 0 when nothing required is missing. */
int cf_coverage_run(const cf_options *o, const cf_target *targets, uint32_t count,
                    vyre_error *err);

#endif /* VYRE_CONFORM_H */
