/* cert.c -- the conformance certificate: a JSON record of what a backend plugin claims and how each claimed op fared on the corpus. */
#include <errno.h>
#include <string.h>
#include <time.h>

#include "conform.h"
#include "abi/support/file.h"
#include "abi/support/json.h"

/* pass: claimed, exercised, never failed; fail: claimed and failed at
 * least once; untested: claimed, cases containing it ran, but none gave
 * it a verdict; unreachable: claimed, but no case the backend ran
 * contains it (docs/conformance.md); not-claimed. */
static const char *op_status(const cf_cert_input *in, uint32_t op) {
  if (!cf_opset_has(in->claimed, op)) return "not-claimed";
  const cf_op_tally *t = &in->ops[op];
  if (t->failed) return "fail";
  if (t->passed) return "pass";
  if (!t->reached) return "unreachable";
  return "untested";
}

/* Op results of the certificate, counted. */
typedef struct op_counts {
  uint32_t untested, unreachable, failed;
} op_counts;

/* Certified: the static checks pass, nothing failed and every claimed op
 * that a case reached passed at least one case (an unreachable op is
 * reported, and does not block it). */
static int certified(const cf_cert_input *in, op_counts *n) {
  uint32_t nops = 0;
  const vyre_op_info *all = vyre_op_all(&nops);
  memset(n, 0, sizeof *n);
  for (uint32_t k = 0; k < nops; k++) {
    const char *s = op_status(in, all[k].id);
    if (strcmp(s, "untested") == 0) n->untested++;
    if (strcmp(s, "unreachable") == 0) n->unreachable++;
    if (strcmp(s, "fail") == 0) n->failed++;
  }
  return in->static_ok && in->elf_ok && in->failed == 0 && n->untested == 0 && n->failed == 0 &&
         in->passed > 0;
}

static void names_array(FILE *f, uint64_t bits, int caps) {
  int first = 1;
  fputc('[', f);
  for (uint32_t b = 0; b < 64; b++) {
    if (!((bits >> b) & 1)) continue;
    const char *n = caps ? vyre_capability_name(b) : (b < VYRE_T_COUNT_ ? vyre_type_name(b) : NULL);
    char tmp[32];
    if (!n) {
      snprintf(tmp, sizeof tmp, "bit%u", b);
      n = tmp;
    }
    fputs(first ? "" : ", ", f);
    vyre__json_string_to(f, n);
    first = 0;
  }
  fputc(']', f);
}

static void write_json(FILE *f, const cf_cert_input *in, const char *date, const char *sha) {
  op_counts n;
  int ok = certified(in, &n);
  fprintf(f, "{\n  \"schema\": \"vyre-conformance-certificate/1\",\n  \"date_utc\": ");
  vyre__json_string_to(f, date);
  fprintf(f, ",\n  \"tool\": ");
  vyre__json_string_to(f, in->tool_version);
  fprintf(f, ",\n  \"certified\": %s,\n", ok ? "true" : "false");
  fprintf(f, "  \"plugin\": {\n    \"path\": ");
  vyre__json_string_to(f, in->plugin_path);
  fprintf(f, ",\n    \"sha256\": ");
  vyre__json_string_to(f, sha);
  fprintf(f, ",\n    \"build_id\": ");
  vyre__json_string_to(f, in->build_id);
  fprintf(f, ",\n    \"exports_ok\": %s,\n    \"static_checks_ok\": %s,\n    \"static_note\": ",
          in->elf_ok ? "true" : "false", in->static_ok ? "true" : "false");
  vyre__json_string_to(f, in->static_note ? in->static_note : "");
  fprintf(f, "\n  },\n  \"backend\": {\n    \"id\": ");
  vyre__json_string_to(f, in->backend_id);
  fprintf(f, ",\n    \"version\": ");
  vyre__json_string_to(f, in->backend_version);
  fprintf(f, ",\n    \"abi_major\": %u,\n    \"abi_minor\": %u\n  },\n", in->abi_major, in->abi_minor);
  fprintf(f, "  \"device\": ");
  if (in->profile) {
    const vyre_device_profile *d = in->profile;
    fprintf(f, "{\n    \"name\": ");
    vyre__json_string_to(f, d->name);
    fprintf(f, ",\n    \"ordinal\": %u,\n    \"compute_capability\": \"%u.%u\",\n"
               "    \"compute_major\": %u,\n    \"compute_minor\": %u,\n"
               "    \"compute_units\": %u,\n    \"subgroup_size\": %u,\n"
               "    \"driver_version\": %u,\n    \"total_memory\": %llu,\n    \"capabilities\": ",
            d->ordinal, d->compute_major, d->compute_minor, d->compute_major, d->compute_minor,
            d->compute_units, d->subgroup_size, d->driver_version,
            (unsigned long long)d->total_memory);
    names_array(f, d->capabilities, 1);
    fprintf(f, "\n  },\n");
  } else {
    fprintf(f, "null,\n");
  }
  fprintf(f, "  \"corpus\": {\n    \"dir\": ");
  vyre__json_string_to(f, in->corpus_dir);
  fprintf(f, ",\n    \"sha256\": ");
  vyre__json_string_to(f, in->corpus_hash);
  fprintf(f, ",\n    \"cases\": %u\n  },\n", in->total);
  fprintf(f, "  \"claims\": {\n    \"ops\": [");
  uint32_t nops = 0, claimed = 0;
  const vyre_op_info *all = vyre_op_all(&nops);
  for (uint32_t k = 0; k < nops; k++) {
    if (!cf_opset_has(in->claimed, all[k].id)) continue;
    fputs(claimed++ ? ", " : "", f);
    vyre__json_string_to(f, all[k].mnemonic);
  }
  fprintf(f, "],\n    \"capabilities\": ");
  names_array(f, in->claimed_caps, 1);
  fprintf(f, ",\n    \"storage_types\": ");
  names_array(f, in->claimed_storage, 0);
  fprintf(f, "\n  },\n");
  fprintf(f, "  \"counts\": {\"passed\": %u, \"failed\": %u, \"skipped_unsupported\": %u, "
             "\"total\": %u, \"ops_claimed\": %u, \"ops_failed\": %u, \"ops_untested\": %u, "
             "\"ops_unreachable\": %u},\n",
          in->passed, in->failed, in->skipped, in->total, claimed, n.failed, n.untested,
          n.unreachable);
  fprintf(f, "  \"ops\": [\n");
  for (uint32_t k = 0; k < nops; k++) {
    const cf_op_tally *t = &in->ops[all[k].id];
    fprintf(f, "    {\"id\": %u, \"op\": ", all[k].id);
    vyre__json_string_to(f, all[k].mnemonic);
    fprintf(f, ", \"result\": ");
    vyre__json_string_to(f, op_status(in, all[k].id));
    fprintf(f, ", \"passed\": %u, \"failed\": %u, \"skipped\": %u", t->passed, t->failed,
            t->skipped);
    if (t->failed) {
      fprintf(f, ", \"failed_cases\": [");
      for (uint32_t j = 0; j < t->failed && j < 3; j++) {
        fputs(j ? ", " : "", f);
        vyre__json_string_to(f, t->failed_cases[j]);
      }
      fputc(']', f);
    }
    fprintf(f, "}%s\n", k + 1 < nops ? "," : "");
  }
  fprintf(f, "  ]\n}\n");
}

static void now_utc(char *out, size_t size) {
  time_t t = time(NULL);
  struct tm tm;
  gmtime_r(&t, &tm);
  strftime(out, size, "%Y-%m-%dT%H:%M:%SZ", &tm);
}

vyre_status cf_certificate_write(const char *path, const cf_cert_input *in, vyre_error *err) {
  char sha[65] = "";
  if (in->plugin_path) {
    vyre_status st = cf_sha256_file(in->plugin_path, sha, err);
    if (st != VYRE_OK) return st;
  }
  char date[32];
  if (in->date_utc) snprintf(date, sizeof date, "%s", in->date_utc);
  else now_utc(date, sizeof date);
  if (strcmp(path, "-") == 0) { /* "-" is standard output */
    write_json(stdout, in, date, sha);
    if (fflush(stdout) != 0)
      return vyre_error_set(err, VYRE_IO, errno, "cannot write certificate %s: %s. Fix: check the "
                            "disk", path, strerror(errno));
    return VYRE_OK;
  }
  /* A reader sees the old certificate or the new one, never a part. */
  vyre__atomic_file a;
  vyre_status st = vyre__file_atomic_begin(&a, path, 0666, err);
  if (st != VYRE_OK) return st;
  write_json(a.f, in, date, sha);
  return vyre__file_atomic_commit(&a, err);
}

void cf_certificate_print(FILE *f, const cf_cert_input *in) {
  op_counts n;
  int ok = certified(in, &n);
  fprintf(f, "certificate: %s %s: %s (%u passed, %u failed, %u skipped; %u ops failed, %u "
             "untested, %u unreachable)\n", in->backend_id, in->backend_version,
          ok ? "CERTIFIED" : "NOT certified", in->passed, in->failed, in->skipped, n.failed,
          n.untested, n.unreachable);
}
