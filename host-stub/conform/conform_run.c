/* conform_run.c -- vyre conform: static checks, the corpus on each backend against the reference, tables, JSON/JUnit reports, capsules, certificates, replay and coverage. */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "conform.h"

enum { R_PASS, R_FAIL, R_SKIP };
static const char *const result_names[] = {"pass", "fail", "skip"};

/* The live progress line: cleared before a line goes to o->out. */
static void progress_clear(const cf_options *o) {
  if (o->progress) o->progress(o->progress_ctx, NULL);
}

/* A pass/fail word, in color when o->color. */
static void paint(const cf_options *o, const char *sgr, const char *word) {
  if (o->color) fprintf(o->out, "\033[%sm%s\033[0m", sgr, word);
  else fputs(word, o->out);
}

/* What happened to one case on one target. */
typedef struct case_outcome {
  int result;
  char reason[768];
  char capsule[4608];
  double ms;
} case_outcome;

typedef struct category_row {
  char name[64];
  uint32_t n[3];
} category_row;

typedef struct target_report {
  cf_target *t;
  int static_ok, elf_ok;
  char static_note[1024];
  case_outcome *cases;   /* one per corpus case */
  category_row *rows;
  uint32_t nrows;
  uint32_t n[3];
  uint32_t untested;     /* claimed ops that cases reached but none gave a verdict */
  uint32_t unreachable;  /* claimed ops no case the backend runs contains */
  cf_op_tally ops[256];
} target_report;

static const char *capsule_root(const cf_options *o) {
  return o->capsule_dir ? o->capsule_dir : "conform-failures";
}

/* ------------------------------------------------------------------ */
/* Static checks                                                        */
/* ------------------------------------------------------------------ */

static void static_checks(target_report *r) {
  cf_target *t = r->t;
  size_t n = 0;
  char *note = r->static_note;
  size_t cap = sizeof r->static_note;
  r->static_ok = 1;
  r->elf_ok = 0;
  if (!t->path[0]) {
    r->static_ok = 0;
    snprintf(note, cap, "no plugin file to check");
    return;
  }
  cf_elf_report er;
  vyre_error err = VYRE_ERROR_INIT;
  char why[900];
  if (cf_elf_exports(t->path, &er, &err) != VYRE_OK) {
    n += (size_t)snprintf(note + n, cap - n, "exports: %s; ", err.message);
  } else if (!cf_elf_ok(&er, why, sizeof why)) {
    n += (size_t)snprintf(note + n, cap - n, "exports: %s; ", why);
  } else {
    r->elf_ok = 1;
    n += (size_t)snprintf(note + n, cap - n, "exports: only %s and %s; ",
                          VYRE_PLUGIN_DESCRIPTOR_SYMBOL, VYRE_PLUGIN_ENTRY_SYMBOL);
  }
  if (n >= cap) n = cap - 1;
  /* The sizes must at least reach the fields a host uses, and not be absurd. */
  size_t reg_min = offsetof(vyre_registration, create) + sizeof(void (*)(void));
  size_t vt_min = offsetof(vyre_backend_vtable, dispatch) + sizeof(void (*)(void));
  int sizes_ok = t->registration_size >= reg_min && t->registration_size <= 65536 &&
                 t->vtable_size >= vt_min && t->vtable_size <= 65536 &&
                 (t->vtable_size - 8) % sizeof(void (*)(void)) == 0;
  if (!sizes_ok) {
    r->static_ok = 0;
    n += (size_t)snprintf(note + n, cap - n, "sizes: registration %u (need %zu..65536), vtable "
                          "%u (need %zu..65536, 8 + a multiple of %zu); ", t->registration_size,
                          reg_min, t->vtable_size, vt_min, sizeof(void (*)(void)));
  } else {
    n += (size_t)snprintf(note + n, cap - n, "sizes: registration %u, vtable %u; ",
                          t->registration_size, t->vtable_size);
  }
  if (n >= cap) n = cap - 1;
  if (!t->loaded) {
    r->static_ok = 0;
    snprintf(note + n, cap - n, "load: %s", t->reason);
  } else {
    snprintf(note + n, cap - n, "load: RTLD_NOW ok, ABI %u.%u", t->abi_major, t->abi_minor);
  }
  if (!r->elf_ok) r->static_ok = 0;
}

/* ------------------------------------------------------------------ */
/* Running one case                                                     */
/* ------------------------------------------------------------------ */

static void full_name(const cf_case *c, char *out, size_t size) {
  snprintf(out, size, "%s/%s", c->category, c->name);
}

static void safe_file_name(const char *in, char *out, size_t size) {
  size_t k = 0;
  for (; in[k] && k + 1 < size; k++) {
    char ch = in[k];
    out[k] = (ch == '/' || ch == ' ' || ch == '\\') ? '.' : ch;
  }
  out[k] = '\0';
}

/* Minimize a failure into `path` and say how it went, one line. */
static void report_minimized(FILE *out, const char *indent, cf_case *m, const cf_target *t,
                             const cf_pair *pair, uint32_t tries, const char *origin,
                             const char *path) {
  vyre_error err = VYRE_ERROR_INIT;
  cf_min_capsule mc;
  if (cf_minimize_to_capsule(m, t, pair, tries, origin,
                             "the original's expect-output lines do not apply and are left out",
                             path, &mc, &err) != VYRE_OK)
    fprintf(out, "%sminimizer: %s\n", indent, err.message);
  else if (mc.written)
    fprintf(out, "%sminimized: %s (%s)\n", indent, path, mc.note);
  else
    fprintf(out, "%sminimizer: no smaller program keeps the failure (%u tries)\n", indent,
            mc.stats.tries);
}
/* Write the capsule of a failure, then try to minimize it. */
static void keep_failure(const cf_options *o, cf_target *t, vyre_backend *reference,
                         cf_case *c, const cf_result *want, const cf_result *got,
                         const cf_diff *d, const char *origin, char *capsule, size_t cap) {
  capsule[0] = '\0';
  char dir[4200], base[300], path[4600];
  snprintf(dir, sizeof dir, "%s/%s", capsule_root(o), t->id);
  vyre_error err = VYRE_ERROR_INIT;
  if (cf_mkdirs(dir, &err) != VYRE_OK) {
    fprintf(o->out, "    cannot keep the capsule: %s\n", err.message);
    return;
  }
  char fname[300];
  full_name(c, fname, sizeof fname);
  safe_file_name(fname, base, sizeof base);
  snprintf(path, sizeof path, "%s/%s.vyre", dir, base);
  cf_capsule_info info = {origin, t->id, t->version, t->has_profile ? t->profile.name : NULL,
                          got, want, d, NULL};
  if (cf_capsule_write(path, c, &info, &err) != VYRE_OK) {
    fprintf(o->out, "    cannot write %s: %s\n", path, err.message);
    return;
  }
  snprintf(capsule, cap, "%s", path);
  fprintf(o->out, "    capsule: %s\n", path);
  if (!o->minimize || !t->backend) return;
  cf_case *m = NULL;
  if (cf_case_clone(c, &m, &err) != VYRE_OK) {
    fprintf(o->out, "    cannot minimize: %s\n", err.message);
    return;
  }
  cf_case_drop_goldens(m);
  cf_pair pair = {t->backend, reference, d->kind, got->status, want->status};
  snprintf(path, sizeof path, "%s/%s.min.vyre", dir, base);
  report_minimized(o->out, "    ", m, t, &pair, o->minimize_tries, origin, path);
  cf_case_free(m);
}

/* Judge one case on one target: skip, pass or fail (with reason). */
static void run_case(const cf_options *o, target_report *r, vyre_backend *reference, cf_case *c,
                     case_outcome *out) {
  cf_target *t = r->t;
  cf_needs needs;
  cf_program_needs(c->decoded, &c->options, &needs);
  needs.caps |= c->extra_caps;
  char why[256];
  if (!cf_offer_covers(&t->offer, &needs, why, sizeof why)) {
    out->result = R_SKIP;
    snprintf(out->reason, sizeof out->reason, "unsupported: %s", why);
    return;
  }
  cf_result want, got;
  cf_run(reference, c, &want);
  cf_run(t->backend, c, &got);
  out->ms = (double)got.wall_ns / 1e6;
  cf_diff d;
  char origin[300];
  char fname[256];
  full_name(c, fname, sizeof fname);
  snprintf(origin, sizeof origin, "conform %s", fname);
  out->result = R_PASS;
  if (!cf_check_expected(c, &want, &d)) {
    out->result = R_FAIL;
    snprintf(out->reason, sizeof out->reason, "the reference does not meet the case's expectation "
             "(a corpus or reference bug): %s", d.text);
  } else if (!cf_check_expected(c, &got, &d) || !cf_compare(c, &want, &got, &d)) {
    out->result = R_FAIL;
    snprintf(out->reason, sizeof out->reason, "%s", d.text);
  }
  if (out->result == R_FAIL) {
    progress_clear(o);
    paint(o, "1;31", "FAIL");
    fprintf(o->out, " %s on %s: %s\n", fname, t->id, out->reason);
    if (d.kind == CF_SAME) cf_compare(c, &want, &got, &d);
    keep_failure(o, t, reference, c, &want, &got, &d, origin, out->capsule, sizeof out->capsule);
  }
  cf_result_free(&want);
  cf_result_free(&got);
}

/* ------------------------------------------------------------------ */
/* Reports                                                              */
/* ------------------------------------------------------------------ */

static category_row *row_for(target_report *r, const char *name) {
  for (uint32_t i = 0; i < r->nrows; i++)
    if (strcmp(r->rows[i].name, name) == 0) return &r->rows[i];
  category_row *row = &r->rows[r->nrows++];
  snprintf(row->name, sizeof row->name, "%s", name);
  return row;
}

static void print_table(FILE *f, const target_report *r) {
  fprintf(f, "  %-24s %7s %7s %8s\n", "category", "passed", "failed", "skipped");
  for (uint32_t i = 0; i < r->nrows; i++)
    fprintf(f, "  %-24s %7u %7u %8u\n", r->rows[i].name, r->rows[i].n[R_PASS],
            r->rows[i].n[R_FAIL], r->rows[i].n[R_SKIP]);
  fprintf(f, "  %-24s %7u %7u %8u\n", "total", r->n[R_PASS], r->n[R_FAIL], r->n[R_SKIP]);
}

static void write_json(FILE *f, const cf_options *o, const char *hash, cf_case **cases,
                       uint32_t ncases, target_report *reps, uint32_t nt) {
  fprintf(f, "{\n  \"schema\": \"vyre-conformance-report/1\",\n  \"tool\": ");
  cf_json_string(f, o->tool_version);
  fprintf(f, ",\n  \"corpus\": {\"dir\": ");
  cf_json_string(f, o->corpus_dir);
  fprintf(f, ", \"sha256\": ");
  cf_json_string(f, hash);
  fprintf(f, ", \"cases\": %u},\n  \"backends\": [\n", ncases);
  for (uint32_t k = 0; k < nt; k++) {
    target_report *r = &reps[k];
    fprintf(f, "    {\"id\": ");
    cf_json_string(f, r->t->id);
    fprintf(f, ", \"version\": ");
    cf_json_string(f, r->t->version);
    fprintf(f, ", \"path\": ");
    cf_json_string(f, r->t->path);
    fprintf(f, ", \"available\": %s, \"reason\": ", r->t->backend ? "true" : "false");
    cf_json_string(f, r->t->backend ? "" : r->t->reason);
    fprintf(f, ",\n     \"device\": ");
    cf_json_string(f, r->t->has_profile ? r->t->profile.name : NULL);
    fprintf(f, ", \"static_ok\": %s, \"static\": ", r->static_ok ? "true" : "false");
    cf_json_string(f, r->static_note);
    fprintf(f, ",\n     \"counts\": {\"passed\": %u, \"failed\": %u, \"skipped_unsupported\": %u, "
               "\"untested_ops\": %u, \"unreachable_ops\": %u},\n     \"categories\": [",
            r->n[R_PASS], r->n[R_FAIL], r->n[R_SKIP], r->untested, r->unreachable);
    for (uint32_t i = 0; i < r->nrows; i++) {
      fprintf(f, "%s{\"name\": ", i ? ", " : "");
      cf_json_string(f, r->rows[i].name);
      fprintf(f, ", \"passed\": %u, \"failed\": %u, \"skipped\": %u}", r->rows[i].n[R_PASS],
              r->rows[i].n[R_FAIL], r->rows[i].n[R_SKIP]);
    }
    fprintf(f, "],\n     \"cases\": [\n");
    for (uint32_t i = 0; r->cases && i < ncases; i++) {
      char name[256];
      if (cases[i]) full_name(cases[i], name, sizeof name);
      else snprintf(name, sizeof name, "#%u", i);
      fprintf(f, "       {\"name\": ");
      cf_json_string(f, name);
      fprintf(f, ", \"result\": \"%s\", \"ms\": %.3f, \"reason\": ", result_names[r->cases[i].result],
              r->cases[i].ms);
      cf_json_string(f, r->cases[i].reason);
      if (r->cases[i].capsule[0]) {
        fprintf(f, ", \"capsule\": ");
        cf_json_string(f, r->cases[i].capsule);
      }
      fprintf(f, "}%s\n", i + 1 < ncases ? "," : "");
    }
    fprintf(f, "     ]}%s\n", k + 1 < nt ? "," : "");
  }
  fprintf(f, "  ]\n}\n");
}

static void write_junit(FILE *f, cf_case **cases, uint32_t ncases, const char *const *paths,
                        target_report *reps, uint32_t nt) {
  uint32_t tests = 0, failures = 0, skipped = 0;
  for (uint32_t k = 0; k < nt; k++) {
    tests += reps[k].cases ? ncases : 0;
    failures += reps[k].n[R_FAIL];
    skipped += reps[k].n[R_SKIP];
  }
  fprintf(f, "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<testsuites name=\"vyre conform\" "
             "tests=\"%u\" failures=\"%u\" skipped=\"%u\">\n", tests, failures, skipped);
  for (uint32_t k = 0; k < nt; k++) {
    target_report *r = &reps[k];
    fprintf(f, "  <testsuite name=\"conform.");
    cf_xml_text(f, r->t->id);
    fprintf(f, "\" tests=\"%u\" failures=\"%u\" skipped=\"%u\">\n", r->cases ? ncases : 0,
            r->n[R_FAIL], r->n[R_SKIP]);
    if (!r->cases) {
      fprintf(f, "    <properties><property name=\"unavailable\" value=\"");
      cf_xml_text(f, r->t->reason);
      fprintf(f, "\"/></properties>\n");
    }
    for (uint32_t i = 0; r->cases && i < ncases; i++) {
      const case_outcome *oc = &r->cases[i];
      fprintf(f, "    <testcase classname=\"");
      cf_xml_text(f, r->t->id);
      fputc('.', f);
      cf_xml_text(f, cases[i] ? cases[i]->category : "corpus");
      fprintf(f, "\" name=\"");
      cf_xml_text(f, cases[i] ? cases[i]->name : paths[i]);
      fprintf(f, "\" time=\"%.6f\"", oc->ms / 1000.0);
      if (oc->result == R_PASS) {
        fprintf(f, "/>\n");
        continue;
      }
      fprintf(f, ">\n      <%s message=\"", oc->result == R_FAIL ? "failure" : "skipped");
      cf_xml_text(f, oc->reason);
      fprintf(f, "\"");
      if (oc->result == R_FAIL && oc->capsule[0]) {
        fprintf(f, ">replay: vyre conform --replay ");
        cf_xml_text(f, oc->capsule);
        fprintf(f, "</failure>\n");
      } else {
        fprintf(f, "/>\n");
      }
      fprintf(f, "    </testcase>\n");
    }
    fprintf(f, "  </testsuite>\n");
  }
  fprintf(f, "</testsuites>\n");
}

/* ------------------------------------------------------------------ */
/* The corpus                                                           */
/* ------------------------------------------------------------------ */

typedef struct corpus {
  char **paths;
  uint32_t count;
  cf_case **cases;       /* NULL where a file does not load */
  char **errors;         /* why, where it does not */
  uint32_t selected;     /* cases matching the filter */
  char hash[65];
} corpus;

static void corpus_free(corpus *cp) {
  for (uint32_t i = 0; i < cp->count; i++) {
    if (cp->cases) cf_case_free(cp->cases[i]);
    if (cp->errors) free(cp->errors[i]);
  }
  free(cp->cases);
  free(cp->errors);
  cf_corpus_list_free(cp->paths, cp->count);
  memset(cp, 0, sizeof *cp);
}

/* Load every case file; keep those matching the filter (files that fail
 * to load are kept as errors whatever the filter says about them). */
static vyre_status corpus_load(const cf_options *o, corpus *cp, vyre_error *err) {
  memset(cp, 0, sizeof *cp);
  vyre_status st = cf_corpus_list(o->corpus_dir, &cp->paths, &cp->count, err);
  if (st != VYRE_OK) return st;
  if (cp->count == 0) {
    cf_corpus_list_free(cp->paths, 0);
    cp->paths = NULL;
    return vyre_error_set(err, VYRE_INVALID_ARGUMENT, 0,
                          "the corpus %s holds no *.vyre case files. Fix: pass --corpus DIR "
                          "(the source tree's tests/conformance)", o->corpus_dir);
  }
  st = cf_corpus_hash(o->corpus_dir, cp->paths, cp->count, cp->hash, err);
  if (st != VYRE_OK) return st;
  cp->cases = calloc(cp->count, sizeof *cp->cases);
  cp->errors = calloc(cp->count, sizeof *cp->errors);
  if (!cp->cases || !cp->errors) return vyre_error_set(err, VYRE_OUT_OF_MEMORY, 0, "out of memory");
  uint32_t keep = 0;
  for (uint32_t i = 0; i < cp->count; i++) {
    vyre_error e = VYRE_ERROR_INIT;
    cf_case *c = NULL;
    if (cf_case_load(cp->paths[i], &c, &e) != VYRE_OK) {
      /* Judge a broken file by the name its path gives it. */
      const char *path = cp->paths[i];
      const char *slash = strrchr(path, '/');
      const char *base = slash ? slash + 1 : path;
      const char *dir = base;
      if (slash) {
        dir = slash;
        while (dir > path && dir[-1] != '/') dir--;
      }
      char guess[512];
      snprintf(guess, sizeof guess, "%.*s%.*s", (int)(base - dir), dir,
               (int)(strlen(base) > 5 ? strlen(base) - 5 : strlen(base)), base);
      if (cf_pattern_match(o->filter, guess)) {
        cp->errors[i] = strdup(e.message);
        keep++;
      }
      continue;
    }
    char name[256];
    full_name(c, name, sizeof name);
    if (!cf_pattern_match(o->filter, name)) {
      cf_case_free(c);
      continue;
    }
    cp->cases[i] = c;
    keep++;
  }
  if (keep == 0)
    return vyre_error_set(err, VYRE_INVALID_ARGUMENT, 0,
                          "--filter '%s' selects none of the %u case files of the corpus %s "
                          "(it matches CATEGORY/NAME, such as ops.int/add.u32). Fix: give a "
                          "glob over CATEGORY/NAME (--filter 'ops.int/add.*') or a substring "
                          "(--filter add); --verbose without --filter lists every case's name",
                          o->filter, cp->count, o->corpus_dir);
  /* Compact: the selected cases, in corpus order. */
  uint32_t k = 0;
  for (uint32_t i = 0; i < cp->count; i++) {
    if (!cp->cases[i] && !cp->errors[i]) {
      free(cp->paths[i]);
      continue;
    }
    cp->cases[k] = cp->cases[i];
    cp->errors[k] = cp->errors[i];
    cp->paths[k] = cp->paths[i];
    k++;
  }
  cp->count = k;
  cp->selected = keep;
  return VYRE_OK;
}

/* ------------------------------------------------------------------ */
/* vyre conform                                                         */
/* ------------------------------------------------------------------ */

/* Passes and skips count for every op of the case; a failure counts
 * against the ops under test (`ops`), or every op when the case names
 * none.  A case that ran (passed or failed) reaches every op it
 * contains; the first skipped case containing an op is kept as the
 * example of why the op may be unreachable. */
static void tally_ops(target_report *r, const cf_case *c, const case_outcome *oc) {
  cf_opset seen = {{0}};
  for (uint32_t i = 0; i < c->decoded->inst_count; i++) cf_opset_add(&seen, c->decoded->insts[i].op);
  char name[256];
  full_name(c, name, sizeof name);
  for (uint32_t op = 0; op < 256; op++) {
    if (!cf_opset_has(&seen, op)) continue;
    cf_op_tally *t = &r->ops[op];
    if (oc->result != R_SKIP) t->reached++;
    if (oc->result == R_PASS) {
      t->passed++;
    } else if (oc->result == R_SKIP) {
      t->skipped++;
      const char *why = oc->reason;
      if (strncmp(why, "unsupported: ", 13) == 0) why += 13;
      if (!t->blocked[0]) snprintf(t->blocked, sizeof t->blocked, "%.100s: %.140s", name, why);
    } else if (!c->focus_set || ((c->focus[op >> 6] >> (op & 63)) & 1)) {
      if (t->failed < 3) snprintf(t->failed_cases[t->failed], sizeof t->failed_cases[0], "%.95s", name);
      t->failed++;
    }
  }
}

/*
 * The claimed ops no verdict vouches for (docs/conformance.md, "Untested
 * and unreachable ops").  Unreachable: no case the backend runs contains
 * the op (every case with it needs something the backend does not claim,
 * or the corpus has none) -- informational.  Untested: cases containing
 * it ran, but none passed and none failed against it (each failed on
 * other ops under test) -- a failure.  With a filter the corpus is not
 * the whole story: counted, not printed.
 */
static void claimed_without_verdict(const cf_options *o, target_report *r) {
  uint32_t nops = 0;
  const vyre_op_info *all = vyre_op_all(&nops);
  for (uint32_t j = 0; j < nops; j++) {
    uint32_t op = all[j].id;
    const cf_op_tally *t = &r->ops[op];
    if (!cf_opset_has(&r->t->offer.ops, op) || t->passed + t->failed) continue;
    if (t->reached == 0) {
      r->unreachable++;
      if (o->filter) continue;
      if (t->blocked[0])
        fprintf(o->out, "  unreachable within the claimed subset: %s (no case this backend "
                        "runs contains it; e.g. %s)\n", all[j].mnemonic, t->blocked);
      else
        fprintf(o->out, "  unreachable within the claimed subset: %s (no case of the corpus "
                        "contains it)\n", all[j].mnemonic);
    } else {
      r->untested++;
      if (o->filter) continue;
      fprintf(o->out, "  UNTESTED: %s is claimed and %u case%s containing it ran, but each "
                      "failed on other ops under test. Fix: fix those failures, or add a case "
                      "that tests %s\n", all[j].mnemonic, t->reached, t->reached == 1 ? "" : "s",
              all[j].mnemonic);
    }
  }
}


/* --certificate: the one target's certificate, written and printed.
 * 0, or 1 when it could not be made. */
static int write_certificate(const cf_options *o, const corpus *cp, target_report *r,
                             vyre_error *err) {
  cf_target *t = r->t;
  if (!t->backend) {
    fprintf(o->out, "no certificate: %s is unavailable (%s)\n", t->id, t->reason);
    return 1;
  }
  cf_cert_input ci = {0};
  ci.plugin_path = t->path;
  ci.backend_id = t->id;
  ci.backend_version = t->version;
  ci.build_id = t->build_id;
  ci.abi_major = t->abi_major;
  ci.abi_minor = t->abi_minor;
  ci.profile = t->has_profile ? &t->profile : NULL;
  ci.corpus_dir = o->corpus_dir;
  ci.corpus_hash = cp->hash;
  ci.claimed = &t->offer.ops;
  ci.claimed_caps = t->offer.caps;
  ci.claimed_storage = t->offer.storage_types;
  ci.ops = r->ops;
  ci.passed = r->n[R_PASS];
  ci.failed = r->n[R_FAIL];
  ci.skipped = r->n[R_SKIP];
  ci.total = cp->count;
  ci.elf_ok = (uint32_t)r->elf_ok;
  ci.static_ok = (uint32_t)r->static_ok;
  ci.static_note = r->static_note;
  ci.tool_version = o->tool_version;
  if (o->filter)
    fprintf(o->out, "note: --filter narrows the corpus; the certificate says so through its "
                    "case count\n");
  if (cf_certificate_write(o->certificate_path, &ci, err) != VYRE_OK) {
    fprintf(o->out, "no certificate: %s\n", err->message);
    return 1;
  }
  cf_certificate_print(o->out, &ci);
  fprintf(o->out, "certificate written to %s\n", o->certificate_path);
  return 0;
}

/* --json (junit 0) or --junit (1): the report, written to path.  0, or 1
 * when it could not be written. */
static int write_report(const char *path, int junit, const cf_options *o, const corpus *cp,
                        target_report *reps, uint32_t nt) {
  int is_stdout = strcmp(path, "-") == 0; /* "-" is standard output */
  FILE *f = is_stdout ? stdout : fopen(path, "w");
  if (!f) {
    fprintf(stderr, "vyre conform: cannot write %s\n", path);
    return 1;
  }
  if (junit)
    write_junit(f, cp->cases, cp->count, (const char *const *)cp->paths, reps, nt);
  else
    write_json(f, o, cp->hash, cp->cases, cp->count, reps, nt);
  if (is_stdout && o->stdout_reports) (*o->stdout_reports)++;
  return is_stdout ? fflush(f) != 0 : fclose(f) != 0;
}


int cf_conform_run(const cf_options *o, cf_target *targets, uint32_t nt, vyre_backend *reference,
                   vyre_error *err) {
  corpus cp;
  vyre_status st = corpus_load(o, &cp, err);
  if (st != VYRE_OK) {
    corpus_free(&cp);
    return 2;
  }
  if (o->certificate_path && nt != 1) {
    corpus_free(&cp);
    vyre_error_set(err, VYRE_INVALID_ARGUMENT, 0, "--certificate needs exactly one backend, "
                   "got %u. Fix: pass --backend ID", nt);
    return 2;
  }
  target_report *reps = calloc(nt ? nt : 1, sizeof *reps);
  if (!reps) {
    corpus_free(&cp);
    vyre_error_set(err, VYRE_OUT_OF_MEMORY, 0, "out of memory");
    return 1;
  }
  int exit_code = 0;
  fprintf(o->out, "corpus %s: %u case file%s, sha256 %s\n", o->corpus_dir, cp.count,
          cp.count == 1 ? "" : "s", cp.hash);
  for (uint32_t k = 0; k < nt; k++) {
    target_report *r = &reps[k];
    cf_target *t = &targets[k];
    r->t = t;
    static_checks(r);
    fprintf(o->out, "\nbackend %s %s (%s)\n  static checks: ", t->id, t->version,
            t->path[0] ? t->path : "?");
    paint(o, r->static_ok ? "32" : "1;31", r->static_ok ? "ok" : "FAILED");
    fprintf(o->out, ": %s\n", r->static_note);
    if (!r->static_ok) exit_code = 1;
    if (!t->backend) {
      fprintf(o->out, "  SKIPPED: %s\n", t->reason[0] ? t->reason : "no instance");
      continue;
    }
    if (t->has_profile)
      fprintf(o->out, "  device: %s (compute %u.%u, driver %u)\n", t->profile.name,
              t->profile.compute_major, t->profile.compute_minor, t->profile.driver_version);
    r->cases = calloc(cp.count, sizeof *r->cases);
    r->rows = calloc(cp.count + 1, sizeof *r->rows);
    if (!r->cases || !r->rows) {
      vyre_error_set(err, VYRE_OUT_OF_MEMORY, 0, "out of memory");
      exit_code = 1;
      break;
    }
    for (uint32_t i = 0; i < cp.count; i++) {
      case_outcome *oc = &r->cases[i];
      cf_case *c = cp.cases[i];
      category_row *row;
      if (!c) {
        oc->result = R_FAIL;
        snprintf(oc->reason, sizeof oc->reason, "the case does not load: %s", cp.errors[i]);
        progress_clear(o);
        paint(o, "1;31", "FAIL");
        fprintf(o->out, " %s: %s\n", cp.paths[i], oc->reason);
        row = row_for(r, "corpus-errors");
      } else {
        run_case(o, r, reference, c, oc);
        row = row_for(r, c->category);
        tally_ops(r, c, oc);
      }
      row->n[oc->result]++;
      r->n[oc->result]++;
      if (o->verbose && c) {
        char name[256];
        full_name(c, name, sizeof name);
        progress_clear(o);
        fprintf(o->out, "  [%4u/%u] %-44s ", i + 1, cp.count, name);
        paint(o, oc->result == R_FAIL ? "1;31" : oc->result == R_PASS ? "32" : "33",
              result_names[oc->result]);
        fprintf(o->out, "%s%s\n", oc->result == R_SKIP ? ": " : "",
                oc->result == R_SKIP ? oc->reason : "");
      }
      if (o->progress) {
        char line[160];
        snprintf(line, sizeof line, "conform %.40s: [%u/%u] %u passed, %u failed, %u skipped",
                 t->id, i + 1, cp.count, r->n[R_PASS], r->n[R_FAIL], r->n[R_SKIP]);
        o->progress(o->progress_ctx, line);
      } else if (!o->verbose && ((i + 1) % 100 == 0 || i + 1 == cp.count)) {
        fprintf(o->out, "  [%4u/%u] %u passed, %u failed, %u skipped\n", i + 1, cp.count,
                r->n[R_PASS], r->n[R_FAIL], r->n[R_SKIP]);
      }
    }
    progress_clear(o);
    print_table(o->out, r);
    claimed_without_verdict(o, r);
    if (r->n[R_FAIL] || (r->untested && !o->filter)) exit_code = 1;
  }
  if (o->json_path && write_report(o->json_path, 0, o, &cp, reps, nt) != 0) exit_code = 1;
  if (o->junit_path && write_report(o->junit_path, 1, o, &cp, reps, nt) != 0) exit_code = 1;
  if (o->certificate_path && nt == 1 && write_certificate(o, &cp, &reps[0], err) != 0)
    exit_code = 1;
  fputs("\nconform: ", o->out);
  paint(o, exit_code ? "1;31" : "32", exit_code ? "FAILED" : "ok");
  fputc('\n', o->out);
  for (uint32_t k = 0; k < nt; k++) {
    free(reps[k].cases);
    free(reps[k].rows);
  }
  free(reps);
  corpus_free(&cp);
  return exit_code;
}

/* ------------------------------------------------------------------ */
/* vyre conform --replay                                                */
/* ------------------------------------------------------------------ */

int cf_replay_run(const cf_options *o, const char *path, cf_target *targets, uint32_t nt,
                  vyre_backend *reference, vyre_error *err) {
  cf_case *c = NULL;
  if (cf_case_load(path, &c, err) != VYRE_OK) return 2;
  int exit_code = 0;
  char name[256];
  full_name(c, name, sizeof name);
  fprintf(o->out, "replay %s (%s)%s%s\n", path, name, c->origin[0] ? ", recorded from " : "",
          c->origin);
  if (c->sha_mismatch)
    fprintf(o->out, "  note: the program differs from the one the capsule recorded "
                    "(program-sha256): replaying the text as it is\n");
  for (uint32_t k = 0; k < nt; k++) {
    cf_target *t = &targets[k];
    if (!t->backend) {
      fprintf(o->out, "  %s: SKIPPED: %s\n", t->id, t->reason);
      continue;
    }
    cf_needs needs;
    cf_program_needs(c->decoded, &c->options, &needs);
    needs.caps |= c->extra_caps;
    char why[256];
    if (!cf_offer_covers(&t->offer, &needs, why, sizeof why)) {
      fprintf(o->out, "  %s: skipped-unsupported: %s\n", t->id, why);
      continue;
    }
    cf_result want, got;
    cf_run(reference, c, &want);
    cf_run(t->backend, c, &got);
    cf_diff d;
    int ok_ref = cf_check_expected(c, &want, &d);
    if (!ok_ref) fprintf(o->out, "  reference does not meet the expectation: %s\n", d.text);
    int ok = cf_check_expected(c, &got, &d) && cf_compare(c, &want, &got, &d);
    fprintf(o->out, "  %s: ", t->id);
    paint(o, ok && ok_ref ? "32" : "1;31", ok && ok_ref ? "agrees with the reference" : "MISMATCH");
    fprintf(o->out, "%s%s\n", ok ? "" : ": ", ok ? "" : d.text);
    if (!ok || !ok_ref) exit_code = 1;
    if (!ok && o->minimize) {
      if (d.kind == CF_SAME) cf_compare(c, &want, &got, &d);
      cf_case *m = NULL;
      if (cf_case_clone(c, &m, err) == VYRE_OK) {
        cf_case_drop_goldens(m);
        cf_pair pair = {t->backend, reference, d.kind, got.status, want.status};
        char out[4200];
        size_t n = strlen(path);
        if (n > 5 && strcmp(path + n - 5, ".vyre") == 0) n -= 5;
        if (strcmp(path, "-") == 0) snprintf(out, sizeof out, "stdin.min.vyre");
        else snprintf(out, sizeof out, "%.*s.min.vyre", (int)n, path);
        report_minimized(o->out, "  ", m, t, &pair, o->minimize_tries,
                         c->origin[0] ? c->origin : path, out);
        cf_case_free(m);
      }
    }
    cf_result_free(&want);
    cf_result_free(&got);
  }
  cf_case_free(c);
  return exit_code;
}

/* ------------------------------------------------------------------ */
/* vyre conform --coverage                                              */
/* ------------------------------------------------------------------ */

int cf_coverage_run(const cf_options *o, const cf_target *targets, uint32_t nt, vyre_error *err) {
  corpus cp;
  if (corpus_load(o, &cp, err) != VYRE_OK) {
    corpus_free(&cp);
    return 2;
  }
  cf_coverage *cov = calloc(1, sizeof *cov);
  if (!cov) {
    corpus_free(&cp);
    vyre_error_set(err, VYRE_OUT_OF_MEMORY, 0, "out of memory");
    return 1;
  }
  int exit_code = 0;
  for (uint32_t i = 0; i < cp.count; i++) {
    if (cp.cases[i]) {
      cf_coverage_add(cov, cp.cases[i]->decoded);
    } else {
      paint(o, "1;31", "FAIL");
      fprintf(o->out, " %s: %s\n", cp.paths[i], cp.errors[i]);
      exit_code = 1;
    }
  }
  fprintf(o->out, "corpus %s: %u cases, sha256 %s\n", o->corpus_dir, cov->cases, cp.hash);
  if (nt == 0) {
    fprintf(o->out, "every op of the format:\n");
    if (cf_coverage_report(cov, NULL, VYRE_TM_STORAGE, ~0ull, o->out, o->verbose)) exit_code = 1;
  }
  for (uint32_t k = 0; k < nt; k++) {
    const cf_target *t = &targets[k];
    if (!t->loaded) {
      fprintf(o->out, "backend %s: not loaded (%s)\n", t->id, t->reason);
      continue;
    }
    fprintf(o->out, "backend %s: the ops it claims:\n", t->id);
    if (cf_coverage_report(cov, &t->offer.ops, t->offer.storage_types, t->offer.caps, o->out,
                           o->verbose))
      exit_code = 1;
  }
  free(cov);
  corpus_free(&cp);
  return exit_code;
}
