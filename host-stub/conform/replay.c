/* replay.c -- vyre conform --replay (a capsule on each backend against the reference, minimized on a mismatch) and --coverage; the minimizer's one-line report. */
#include <stdlib.h>
#include <string.h>

#include "abi/support/safetext.h"
#include "internal.h"

void cf_report_minimized(FILE *out, const char *indent, cf_case *m, const cf_target *t,
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

/* ------------------------------------------------------------------ */
/* vyre conform --replay                                                */
/* ------------------------------------------------------------------ */

int cf_replay_run(const cf_options *o, const char *path, cf_target *targets, uint32_t nt,
                  vyre_backend *reference, vyre_error *err) {
  cf_case *c = NULL;
  if (cf_case_load(path, &c, err) != VYRE_OK) return 2;
  int exit_code = 0;
  char name[256];
  cf_case_full_name(c, name, sizeof name);
  char safe[4096]; /* the path as given: made safe to print */
  vyre__safe_text(safe, sizeof safe, path, sizeof safe - 1, VYRE__SAFE_LINE);
  fprintf(o->out, "replay %s (%s)%s%s\n", safe, name, c->origin[0] ? ", recorded from " : "",
          c->origin);
  if (c->sha_mismatch)
    fprintf(o->out, "  note: the program differs from the one the capsule recorded "
                    "(program-sha256): replaying the text as it is\n");
  for (uint32_t k = 0; k < nt; k++) {
    cf_target *t = &targets[k];
    if (!t->backend) {
      fprintf(o->out, "  %s: %s: %s\n", t->id, t->unusable ? "FAILED" : "SKIPPED", t->reason);
      if (t->unusable) exit_code = 1;
      continue;
    }
    vyre_needs needs;
    cf_case_needs(c, &needs);
    char why[256];
    if (cf_offer_must_refuse(&t->offer, &needs)) {
      cf_result got;
      cf_diff d;
      cf_run(t->backend, c, &got);
      int ok = cf_check_refused(&got, &d);
      fprintf(o->out, "  %s: ", t->id);
      cf_paint(o, ok ? "32" : "1;31", ok ? "refuses it (no correctly_rounded)" : "MISMATCH");
      fprintf(o->out, "%s%s\n", ok ? "" : ": ", ok ? "" : d.text);
      if (!ok) exit_code = 1;
      cf_result_free(&got);
      continue;
    }
    if (!cf_offer_covers(&t->offer, &needs, why, sizeof why)) {
      fprintf(o->out, "  %s: skipped-unsupported: %s\n", t->id, why);
      continue;
    }
    cf_result want, got;
    cf_run_reference(reference, c, &want);
    cf_run(t->backend, c, &got);
    cf_diff d;
    int ok_ref = cf_check_expected(c, &want, &d);
    if (!ok_ref) fprintf(o->out, "  reference does not meet the expectation: %s\n", d.text);
    int ok = cf_check_expected_bounded(c, &got, &want, &d) && cf_compare(c, &want, &got, &d);
    fprintf(o->out, "  %s: ", t->id);
    cf_paint(o, ok && ok_ref ? "32" : "1;31", ok && ok_ref ? "agrees with the reference" : "MISMATCH");
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
        cf_report_minimized(o->out, "  ", m, t, &pair, o->minimize_tries,
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
  cf_corpus cp;
  if (cf_corpus_load(o, &cp, err) != VYRE_OK) {
    cf_corpus_free(&cp);
    return 2;
  }
  cf_coverage *cov = calloc(1, sizeof *cov);
  if (!cov) {
    cf_corpus_free(&cp);
    vyre_error_set(err, VYRE_OUT_OF_MEMORY, 0, "out of memory");
    return 1;
  }
  int exit_code = 0;
  for (uint32_t i = 0; i < cp.count; i++) {
    if (cp.cases[i]) {
      cf_coverage_add(cov, cp.cases[i]->decoded);
    } else {
      cf_paint(o, "1;31", "FAIL");
      char safe[4096]; /* a file name of the corpus: made safe to print */
      vyre__safe_text(safe, sizeof safe, cp.paths[i], sizeof safe - 1, VYRE__SAFE_LINE);
      fprintf(o->out, " %s: %s\n", safe, cp.errors[i]);
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
  cf_corpus_free(&cp);
  return exit_code;
}
