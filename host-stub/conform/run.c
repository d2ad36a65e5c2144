/* run.c -- vyre conform: the static checks of each plugin, then the corpus on each backend against the reference, tallied per category and op; failures kept as capsules. */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "abi/support/safetext.h"
#include "internal.h"

static const char *capsule_root(const cf_options *o) {
  return o->capsule_dir ? o->capsule_dir : "conform-failures";
}

/* ------------------------------------------------------------------ */
/* Static checks                                                        */
/* ------------------------------------------------------------------ */

static void static_checks(cf_target_report *r) {
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

static void safe_file_name(const char *in, char *out, size_t size) {
  size_t k = 0;
  for (; in[k] && k + 1 < size; k++) {
    char ch = in[k];
    out[k] = (ch == '/' || ch == ' ' || ch == '\\') ? '.' : ch;
  }
  out[k] = '\0';
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
  cf_case_full_name(c, fname, sizeof fname);
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
  cf_report_minimized(o->out, "    ", m, t, &pair, o->minimize_tries, origin, path);
  cf_case_free(m);
}

/* A case the backend must refuse (cf_offer_must_refuse): pass when it
 * does; the case file is the reproducer, so no capsule is kept. */
static void run_refusal(const cf_options *o, cf_target *t, cf_case *c, cf_case_outcome *out) {
  cf_result got;
  cf_diff d;
  cf_run(t->backend, c, &got);
  out->ms = (double)got.wall_ns / 1e6;
  out->result = cf_check_refused(&got, &d) ? R_PASS : R_FAIL;
  if (out->result == R_FAIL) {
    char fname[256];
    cf_case_full_name(c, fname, sizeof fname);
    snprintf(out->reason, sizeof out->reason, "%s", d.text);
    cf_progress_clear(o);
    cf_paint(o, "1;31", "FAIL");
    fprintf(o->out, " %s on %s: %s\n", fname, t->id, out->reason);
  }
  cf_result_free(&got);
}

/* Judge one case on one target: skip, pass or fail (with reason). */
static void run_case(const cf_options *o, cf_target_report *r, vyre_backend *reference, cf_case *c,
                     cf_case_outcome *out) {
  cf_target *t = r->t;
  vyre_needs needs;
  cf_case_needs(c, &needs);
  char why[256];
  if (cf_offer_must_refuse(&t->offer, &needs)) {
    run_refusal(o, t, c, out);
    return;
  }
  if (!cf_offer_covers(&t->offer, &needs, why, sizeof why)) {
    out->result = R_SKIP;
    snprintf(out->reason, sizeof out->reason, "unsupported: %s", why);
    return;
  }
  cf_result want, got;
  cf_run_reference(reference, c, &want);
  cf_run(t->backend, c, &got);
  out->ms = (double)got.wall_ns / 1e6;
  cf_diff d;
  char origin[300];
  char fname[256];
  cf_case_full_name(c, fname, sizeof fname);
  snprintf(origin, sizeof origin, "conform %s", fname);
  out->result = R_PASS;
  if (!cf_check_expected(c, &want, &d)) {
    out->result = R_FAIL;
    snprintf(out->reason, sizeof out->reason, "the reference does not meet the case's expectation "
             "(a corpus or reference bug): %s", d.text);
  } else if (!cf_check_expected_bounded(c, &got, &want, &d) || !cf_compare(c, &want, &got, &d)) {
    out->result = R_FAIL;
    snprintf(out->reason, sizeof out->reason, "%s", d.text);
  }
  if (out->result == R_FAIL) {
    cf_progress_clear(o);
    cf_paint(o, "1;31", "FAIL");
    fprintf(o->out, " %s on %s: %s\n", fname, t->id, out->reason);
    if (d.kind == CF_SAME) cf_compare(c, &want, &got, &d);
    keep_failure(o, t, reference, c, &want, &got, &d, origin, out->capsule, sizeof out->capsule);
  }
  cf_result_free(&want);
  cf_result_free(&got);
}

/* ------------------------------------------------------------------ */
/* vyre conform                                                         */
/* ------------------------------------------------------------------ */

/* Passes and skips count for every op of the case; a failure counts
 * against the ops under test (`ops`), or every op when the case names
 * none.  A case that ran (passed or failed) reaches every op it
 * contains; the first skipped case containing an op is kept as the
 * example of why the op may be unreachable. */
static void tally_ops(cf_target_report *r, const cf_case *c, const cf_case_outcome *oc) {
  cf_opset seen = {{0}};
  for (uint32_t i = 0; i < c->decoded->inst_count; i++)
    cf_opset_add(&seen, c->decoded->insts[i].op);
  char name[256];
  cf_case_full_name(c, name, sizeof name);
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
      if (t->failed < 3)
        snprintf(t->failed_cases[t->failed], sizeof t->failed_cases[0], "%.95s", name);
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
static void claimed_without_verdict(const cf_options *o, cf_target_report *r) {
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

/* Case i of the corpus on target r: run (or report that its file does
 * not load), count, print its line or the progress. */
static void run_one(const cf_options *o, cf_target_report *r, vyre_backend *reference,
                    const cf_corpus *cp, uint32_t i) {
  cf_target *t = r->t;
  cf_case_outcome *oc = &r->cases[i];
  cf_case *c = cp->cases[i];
  cf_category_row *row;
  if (!c) {
    oc->result = R_FAIL;
    snprintf(oc->reason, sizeof oc->reason, "the case does not load: %s", cp->errors[i]);
    cf_progress_clear(o);
    cf_paint(o, "1;31", "FAIL");
    char path[4096]; /* a file name of the corpus: made safe to print */
    vyre__safe_text(path, sizeof path, cp->paths[i], sizeof path - 1, VYRE__SAFE_LINE);
    fprintf(o->out, " %s: %s\n", path, oc->reason);
    row = cf_report_row(r, "corpus-errors");
  } else {
    run_case(o, r, reference, c, oc);
    row = cf_report_row(r, c->category);
    tally_ops(r, c, oc);
  }
  row->n[oc->result]++;
  r->n[oc->result]++;
  if (o->verbose && c) {
    char name[256];
    cf_case_full_name(c, name, sizeof name);
    cf_progress_clear(o);
    fprintf(o->out, "  [%4u/%u] %-44s ", i + 1, cp->count, name);
    cf_paint(o, oc->result == R_FAIL ? "1;31" : oc->result == R_PASS ? "32" : "33",
             cf_result_names[oc->result]);
    fprintf(o->out, "%s%s\n", oc->result == R_SKIP ? ": " : "",
            oc->result == R_SKIP ? oc->reason : "");
  }
  if (o->progress) {
    char line[160];
    snprintf(line, sizeof line, "conform %.40s: [%u/%u] %u passed, %u failed, %u skipped",
             t->id, i + 1, cp->count, r->n[R_PASS], r->n[R_FAIL], r->n[R_SKIP]);
    o->progress(o->progress_ctx, line);
  } else if (!o->verbose && ((i + 1) % 100 == 0 || i + 1 == cp->count)) {
    fprintf(o->out, "  [%4u/%u] %u passed, %u failed, %u skipped\n", i + 1, cp->count,
            r->n[R_PASS], r->n[R_FAIL], r->n[R_SKIP]);
  }
}

/* Target r: its static checks, then every case.  0 when nothing failed,
 * 1 when something did, -1 when out of memory (the run stops). */
static int run_target(const cf_options *o, cf_target_report *r, vyre_backend *reference,
                      const cf_corpus *cp, vyre_error *err) {
  cf_target *t = r->t;
  int failed = 0;
  static_checks(r);
  fprintf(o->out, "\nbackend %s %s (%s)\n  static checks: ", t->id, t->version,
          t->path[0] ? t->path : "?");
  cf_paint(o, r->static_ok ? "32" : "1;31", r->static_ok ? "ok" : "FAILED");
  fprintf(o->out, ": %s\n", r->static_note);
  if (!r->static_ok) failed = 1;
  if (!t->backend && t->unusable) {
    /* Loaded, but no host can use it: a failure, never a skip. */
    fputs("  ", o->out);
    cf_paint(o, "1;31", "FAILED");
    fprintf(o->out, ": %s\n", t->reason);
    return 1;
  }
  if (!t->backend) {
    fprintf(o->out, "  SKIPPED: %s\n", t->reason[0] ? t->reason : "no instance");
    return failed;
  }
  if (t->has_profile)
    fprintf(o->out, "  device: %s (compute %u.%u, driver %u)\n", t->profile.name,
            t->profile.compute_major, t->profile.compute_minor, t->profile.driver_version);
  r->cases = calloc(cp->count, sizeof *r->cases);
  r->rows = calloc(cp->count + 1, sizeof *r->rows);
  if (!r->cases || !r->rows) {
    vyre_error_set(err, VYRE_OUT_OF_MEMORY, 0, "out of memory");
    return -1;
  }
  for (uint32_t i = 0; i < cp->count; i++) run_one(o, r, reference, cp, i);
  cf_progress_clear(o);
  cf_report_table(o->out, r);
  claimed_without_verdict(o, r);
  if (r->n[R_FAIL] || (r->untested && !o->filter)) failed = 1;
  return failed;
}

int cf_conform_run(const cf_options *o, cf_target *targets, uint32_t nt, vyre_backend *reference,
                   vyre_error *err) {
  cf_corpus cp;
  vyre_status st = cf_corpus_load(o, &cp, err);
  if (st != VYRE_OK) {
    cf_corpus_free(&cp);
    return 2;
  }
  if (o->certificate_path && nt != 1) {
    cf_corpus_free(&cp);
    vyre_error_set(err, VYRE_INVALID_ARGUMENT, 0, "--certificate needs exactly one backend, "
                   "got %u. Fix: pass --backend ID", nt);
    return 2;
  }
  cf_target_report *reps = calloc(nt ? nt : 1, sizeof *reps);
  if (!reps) {
    cf_corpus_free(&cp);
    vyre_error_set(err, VYRE_OUT_OF_MEMORY, 0, "out of memory");
    return 1;
  }
  int exit_code = 0;
  fprintf(o->out, "corpus %s: %u case file%s, sha256 %s\n", o->corpus_dir, cp.count,
          cp.count == 1 ? "" : "s", cp.hash);
  for (uint32_t k = 0; k < nt; k++) {
    reps[k].t = &targets[k];
    int rc = run_target(o, &reps[k], reference, &cp, err);
    if (rc) exit_code = 1;
    if (rc < 0) break;
  }
  if (o->json_path && cf_report_write(o->json_path, 0, o, &cp, reps, nt) != 0) exit_code = 1;
  if (o->junit_path && cf_report_write(o->junit_path, 1, o, &cp, reps, nt) != 0) exit_code = 1;
  if (o->certificate_path && nt == 1 && cf_report_certificate(o, &cp, &reps[0], err) != 0)
    exit_code = 1;
  fputs("\nconform: ", o->out);
  cf_paint(o, exit_code ? "1;31" : "32", exit_code ? "FAILED" : "ok");
  fputc('\n', o->out);
  for (uint32_t k = 0; k < nt; k++) {
    free(reps[k].cases);
    free(reps[k].rows);
  }
  free(reps);
  cf_corpus_free(&cp);
  return exit_code;
}
