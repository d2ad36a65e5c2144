/* report.c -- what a conformance run reports: the category table, the JSON and JUnit reports, the certificate. */
#include <stdlib.h>
#include <string.h>

#include "internal.h"
#include "abi/support/file.h"
#include "abi/support/json.h"

const char *const cf_result_names[3] = {"pass", "fail", "skip"};

cf_category_row *cf_report_row(cf_target_report *r, const char *name) {
  for (uint32_t i = 0; i < r->nrows; i++)
    if (strcmp(r->rows[i].name, name) == 0) return &r->rows[i];
  cf_category_row *row = &r->rows[r->nrows++];
  snprintf(row->name, sizeof row->name, "%s", name);
  return row;
}

void cf_report_table(FILE *f, const cf_target_report *r) {
  fprintf(f, "  %-24s %7s %7s %8s\n", "category", "passed", "failed", "skipped");
  for (uint32_t i = 0; i < r->nrows; i++)
    fprintf(f, "  %-24s %7u %7u %8u\n", r->rows[i].name, r->rows[i].n[R_PASS],
            r->rows[i].n[R_FAIL], r->rows[i].n[R_SKIP]);
  fprintf(f, "  %-24s %7u %7u %8u\n", "total", r->n[R_PASS], r->n[R_FAIL], r->n[R_SKIP]);
}

static void write_json(FILE *f, const cf_options *o, const char *hash, cf_case **cases,
                       uint32_t ncases, cf_target_report *reps, uint32_t nt) {
  fprintf(f, "{\n  \"schema\": \"vyre-conformance-report/1\",\n  \"tool\": ");
  vyre__json_string_to(f, o->tool_version);
  fprintf(f, ",\n  \"corpus\": {\"dir\": ");
  vyre__json_string_to(f, o->corpus_dir);
  fprintf(f, ", \"sha256\": ");
  vyre__json_string_to(f, hash);
  fprintf(f, ", \"cases\": %u},\n  \"backends\": [\n", ncases);
  for (uint32_t k = 0; k < nt; k++) {
    cf_target_report *r = &reps[k];
    fprintf(f, "    {\"id\": ");
    vyre__json_string_to(f, r->t->id);
    fprintf(f, ", \"version\": ");
    vyre__json_string_to(f, r->t->version);
    fprintf(f, ", \"path\": ");
    vyre__json_string_to(f, r->t->path);
    fprintf(f, ", \"available\": %s, \"reason\": ", r->t->backend ? "true" : "false");
    vyre__json_string_to(f, r->t->backend ? "" : r->t->reason);
    fprintf(f, ",\n     \"device\": ");
    vyre__json_string_to(f, r->t->has_profile ? r->t->profile.name : NULL);
    fprintf(f, ", \"static_ok\": %s, \"static\": ", r->static_ok ? "true" : "false");
    vyre__json_string_to(f, r->static_note);
    fprintf(f, ",\n     \"counts\": {\"passed\": %u, \"failed\": %u, \"skipped_unsupported\": %u, "
               "\"untested_ops\": %u, \"unreachable_ops\": %u},\n     \"categories\": [",
            r->n[R_PASS], r->n[R_FAIL], r->n[R_SKIP], r->untested, r->unreachable);
    for (uint32_t i = 0; i < r->nrows; i++) {
      fprintf(f, "%s{\"name\": ", i ? ", " : "");
      vyre__json_string_to(f, r->rows[i].name);
      fprintf(f, ", \"passed\": %u, \"failed\": %u, \"skipped\": %u}", r->rows[i].n[R_PASS],
              r->rows[i].n[R_FAIL], r->rows[i].n[R_SKIP]);
    }
    fprintf(f, "],\n     \"cases\": [\n");
    for (uint32_t i = 0; r->cases && i < ncases; i++) {
      char name[256];
      if (cases[i]) cf_case_full_name(cases[i], name, sizeof name);
      else snprintf(name, sizeof name, "#%u", i);
      fprintf(f, "       {\"name\": ");
      vyre__json_string_to(f, name);
      fprintf(f, ", \"result\": \"%s\", \"ms\": %.3f, \"reason\": ", cf_result_names[r->cases[i].result],
              r->cases[i].ms);
      vyre__json_string_to(f, r->cases[i].reason);
      if (r->cases[i].capsule[0]) {
        fprintf(f, ", \"capsule\": ");
        vyre__json_string_to(f, r->cases[i].capsule);
      }
      fprintf(f, "}%s\n", i + 1 < ncases ? "," : "");
    }
    fprintf(f, "     ]}%s\n", k + 1 < nt ? "," : "");
  }
  fprintf(f, "  ]\n}\n");
}

static void write_junit(FILE *f, cf_case **cases, uint32_t ncases, const char *const *paths,
                        cf_target_report *reps, uint32_t nt) {
  uint32_t tests = 0, failures = 0, skipped = 0;
  for (uint32_t k = 0; k < nt; k++) {
    tests += reps[k].cases ? ncases : 0;
    failures += reps[k].n[R_FAIL] + (reps[k].t->unusable ? 1u : 0u);
    skipped += reps[k].n[R_SKIP];
  }
  fprintf(f, "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<testsuites name=\"vyre conform\" "
             "tests=\"%u\" failures=\"%u\" skipped=\"%u\">\n", tests, failures, skipped);
  for (uint32_t k = 0; k < nt; k++) {
    cf_target_report *r = &reps[k];
    fprintf(f, "  <testsuite name=\"conform.");
    cf_xml_text(f, r->t->id);
    fprintf(f, "\" tests=\"%u\" failures=\"%u\" skipped=\"%u\">\n",
            r->cases ? ncases : r->t->unusable ? 1u : 0u, r->n[R_FAIL] + (r->t->unusable ? 1u : 0u),
            r->n[R_SKIP]);
    if (!r->cases) {
      fprintf(f, "    <properties><property name=\"unavailable\" value=\"");
      cf_xml_text(f, r->t->reason);
      fprintf(f, "\"/></properties>\n");
    }
    if (r->t->unusable) { /* no host can use it: one failure, not a skip */
      fprintf(f, "    <testcase classname=\"");
      cf_xml_text(f, r->t->id);
      fprintf(f, "\" name=\"instance\">\n      <failure message=\"");
      cf_xml_text(f, r->t->reason);
      fprintf(f, "\"/>\n    </testcase>\n");
    }
    for (uint32_t i = 0; r->cases && i < ncases; i++) {
      const cf_case_outcome *oc = &r->cases[i];
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

/* --certificate: the one target's certificate, written and printed.
 * 0, or 1 when it could not be made. */
int cf_report_certificate(const cf_options *o, const cf_corpus *cp, cf_target_report *r,
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

/* --json (junit 0) or --junit (1): the report, written to path ("-":
 * standard output; a file is replaced atomically).  0, or 1 when it
 * could not be written (said on standard error). */
int cf_report_write(const char *path, int junit, const cf_options *o, const cf_corpus *cp,
                        cf_target_report *reps, uint32_t nt) {
  int is_stdout = strcmp(path, "-") == 0; /* "-" is standard output */
  vyre__atomic_file a = {0};
  vyre_error err = VYRE_ERROR_INIT;
  if (!is_stdout && vyre__file_atomic_begin(&a, path, 0666, &err) != VYRE_OK) {
    fprintf(stderr, "vyre conform: %s\n", err.message);
    return 1;
  }
  FILE *f = is_stdout ? stdout : a.f;
  if (junit)
    write_junit(f, cp->cases, cp->count, (const char *const *)cp->paths, reps, nt);
  else
    write_json(f, o, cp->hash, cp->cases, cp->count, reps, nt);
  if (is_stdout) {
    if (o->stdout_reports) (*o->stdout_reports)++;
    return fflush(f) != 0;
  }
  if (vyre__file_atomic_commit(&a, &err) != VYRE_OK) {
    fprintf(stderr, "vyre conform: %s\n", err.message);
    return 1;
  }
  return 0;
}
