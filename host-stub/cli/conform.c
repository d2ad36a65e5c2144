/* conform.c -- `vyre conform` (and the backend loading `vyre fuzz` shares): backends through libvyre-host, then the conformance harness (host-stub/conform). */
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "config.h"
#include "abi/support/config.h"
#include "host-stub/conform/conform.h"
#include "abi/support/json.h"
#include "term.h"
#include "conform.h"
#include "cli.h"

/* Why the instance of t could not be made (vyre_host_create's st and
 * message): SKIPPED for VYRE_NO_DEVICE, otherwise t->unusable. */
static void unusable_reason(cf_target *t, vyre_status st, const char *message) {
  if (st == VYRE_NO_DEVICE) {
    snprintf(t->reason, sizeof t->reason, "%.600s", message);
    return;
  }
  t->unusable = 1;
  if ((int)st < 0 || (int)st >= VYRE_STATUS_COUNT_)
    snprintf(t->reason, sizeof t->reason, "instance: the factory returned %d, which is no "
             "vyre_status (%.420s). Fix: return a vyre_status; VYRE_NO_DEVICE when there is no "
             "device here", (int)st, message);
  else if (strstr(message, "Fix:"))
    snprintf(t->reason, sizeof t->reason, "instance: %.600s", message);
  else
    snprintf(t->reason, sizeof t->reason, "instance: %.460s. Fix: the factory may refuse only "
             "with VYRE_NO_DEVICE (no device here); otherwise it returns VYRE_OK and a "
             "well-formed instance", message);
}

/* Fill a target from candidate `index` and try to create an instance. */
static void target_from(vyre_host *host, uint32_t index, uint32_t device, cf_target *t) {
  memset(t, 0, sizeof *t);
  vyre_host_candidate cand;
  memset(&cand, 0, sizeof cand);
  cand.struct_size = sizeof cand;
  if (vyre_host_backend_info(host, index, &cand, NULL) != VYRE_OK) {
    snprintf(t->reason, sizeof t->reason, "no candidate %u", index);
    return;
  }
  snprintf(t->id, sizeof t->id, "%s", cand.id[0] ? cand.id : "?");
  snprintf(t->version, sizeof t->version, "%s", cand.version);
  snprintf(t->build_id, sizeof t->build_id, "%s", cand.build_id);
  snprintf(t->path, sizeof t->path, "%s", cand.path);
  t->abi_major = cand.abi_major;
  t->abi_minor = cand.abi_minor;
  t->registration_size = cand.registration_size;
  t->vtable_size = cand.vtable_size;
  /* Per-op types (ABI 1.1; the host fills them for every plugin: "every
   * type the op allows" where the registration gives none). */
  for (uint32_t i = 0; i < cand.op_count; i++)
    cf_offer_claim(&t->offer, cand.ops[i], cand.op_types ? cand.op_types[i] : 0);
  t->offer.caps = cand.capabilities;
  t->offer.storage_types = cand.storage_types;
  if (cand.status == VYRE_HOST_SKIPPED) {
    snprintf(t->reason, sizeof t->reason, "%.600s", cand.reason);
    return;
  }
  t->loaded = 1;
  vyre_backend_options bo = {sizeof bo, device, 0, 0, NULL};
  vyre_error err = VYRE_ERROR_INIT;
  vyre_backend *b = NULL;
  vyre_status st = vyre_host_create(host, t->id, &bo, &b, NULL, &err);
  if (st != VYRE_OK) {
    /* "No device here" is the one refusal a usable plugin makes: SKIPPED.
     * Any other (a malformed instance, VYRE_OK without one, a status that
     * is no vyre_status, a plain failure) means no host can use it. */
    unusable_reason(t, st, err.message);
    return;
  }
  if (!VYRE_HOST_HAS(b, dispatch) || !VYRE_HOST_HAS(b, outputs_free)) {
    t->unusable = 1;
    snprintf(t->reason, sizeof t->reason, "instance: its vtable (%u bytes) has no %s entry, so "
             "no host can run a program on it. Fix: set dispatch and outputs_free in the vtable",
             b->vt->struct_size, VYRE_HOST_HAS(b, dispatch) ? "outputs_free" : "dispatch");
    b->vt->destroy(b);
    return;
  }
  if (VYRE_HOST_HAS(b, device_profile)) {
    t->profile.struct_size = sizeof t->profile;
    if (b->vt->device_profile(b, &t->profile, &err) == VYRE_OK) {
      t->has_profile = 1;
      /* The registration says what the plugin can do at best; the device
       * what this one really has. */
      t->offer.caps &= t->profile.capabilities;
    }
  }
  t->backend = b;
}

int cli_session_open(const cli_command *cmd, const cli_select *sel, cli_session *s) {
  memset(s, 0, sizeof *s);
  vyre_error err = VYRE_ERROR_INIT;
  vyre_host_options ho = {sizeof ho, 0, sel->plugin, NULL};
  if (vyre_host_open(&ho, &s->host, &err) != VYRE_OK) return cli_fail(cmd, "%s", err.message);
  if (sel->need_reference) {
    vyre_backend_options bo = {sizeof bo, 0, 0, 0, NULL};
    if (vyre_host_create(s->host, "reference", &bo, &s->reference, NULL, &err) != VYRE_OK)
      return cli_fail(cmd, "the reference backend is needed as the oracle and cannot be used: "
                      "%s. Fix: build host-stub/libvyre-ref.so or put it on VYRE_BACKEND_PATH",
                      err.message);
  }
  uint32_t device = sel->device;
  if (sel->device_uuid && !sel->no_target) {
    if (sel->all)
      return cli_fail(cmd, "--device %s: a UUID names a device of one backend, not of all. Fix: "
                      "add --backend ID", sel->device_uuid);
    const char *id = sel->backend ? sel->backend : vyre_host_forced_id(s->host);
    vyre_host_candidate first;
    memset(&first, 0, sizeof first);
    first.struct_size = sizeof first;
    if (sel->plugin && vyre_host_backend_info(s->host, 0, &first, NULL) == VYRE_OK && *first.id)
      id = first.id;
    if (cli_device_by_uuid(s->host, id, sel->device_uuid, &device, &err) != VYRE_OK)
      return cli_fail(cmd, "%s", err.message);
  }
  s->device = device;
  uint32_t n = vyre_host_backend_count(s->host);
  s->targets = calloc(n ? n : 1, sizeof *s->targets);
  if (!s->targets) return cli_fail(cmd, "out of memory");
  if (sel->no_target) return CLI_OK;
  if (sel->plugin) {
    /* The file named by --plugin is candidate 0 (searched first). */
    vyre_host_candidate cand;
    memset(&cand, 0, sizeof cand);
    cand.struct_size = sizeof cand;
    if (n == 0 || vyre_host_backend_info(s->host, 0, &cand, NULL) != VYRE_OK ||
        cand.origin != VYRE_HOST_FROM_OPTIONS)
      return cli_fail(cmd, "--plugin %s: no such plugin file. Fix: check the path", sel->plugin);
    target_from(s->host, 0, device, &s->targets[0]);
    s->count = 1;
    return CLI_OK;
  }
  if (sel->all) {
    for (uint32_t i = 0; i < n; i++) {
      vyre_host_candidate cand;
      memset(&cand, 0, sizeof cand);
      cand.struct_size = sizeof cand;
      if (vyre_host_backend_info(s->host, i, &cand, NULL) != VYRE_OK) continue;
      if (cand.status == VYRE_HOST_SKIPPED) continue;
      target_from(s->host, i, device, &s->targets[s->count++]);
    }
    if (s->count == 0) return cli_fail(cmd, "no backend found. Fix: `vyre list` shows where "
                                            "plugins are searched");
    return CLI_OK;
  }
  const char *id = sel->backend ? sel->backend : vyre_host_forced_id(s->host);
  int32_t index = -1;
  if (id) {
    index = vyre_host_find(s->host, id);
    if (index < 0)
      return cli_fail(cmd, "backend '%s' is not loaded. Fix: `vyre list` shows the backends "
                      "found and why others were skipped", id);
  } else {
    uint32_t best = 0;
    vyre_backend_options bo = {sizeof bo, device, 0, 0, NULL};
    if (vyre_host_select(s->host, &bo, &best, &err) != VYRE_OK) return cli_fail(cmd, "%s", err.message);
    index = (int32_t)best;
  }
  target_from(s->host, (uint32_t)index, device, &s->targets[0]);
  s->count = 1;
  return CLI_OK;
}

void cli_session_close(cli_session *s) {
  for (uint32_t i = 0; i < s->count; i++)
    if (s->targets[i].backend) s->targets[i].backend->vt->destroy(s->targets[i].backend);
  free(s->targets);
  if (s->reference) s->reference->vt->destroy(s->reference);
  vyre_host_close(s->host);
  memset(s, 0, sizeof *s);
}

int cli_common_option(const cli_command *cmd, int argc, char **argv, int *i,
                      const cli_common *c) {
  const char *v = NULL;
  int r;
  if ((r = cli_opt_value(cmd, argc, argv, i, "--backend", &c->sel->backend)) != 0 ||
      (r = cli_opt_value(cmd, argc, argv, i, "--plugin", &c->sel->plugin)) != 0 ||
      (r = cli_opt_value(cmd, argc, argv, i, "--capsules", c->capsule_dir)) != 0)
    return r < 0 ? -1 : 1;
  if ((r = cli_opt_value(cmd, argc, argv, i, "--minimize-tries", &v)) != 0) {
    if (r < 0 || cli_parse_u32(v, 1, 1000000, c->minimize_tries) != 0) {
      cli_usage(cmd, "--minimize-tries takes a number 1..1000000");
      return -1;
    }
    return 1;
  }
  if ((r = cli_opt_value(cmd, argc, argv, i, "--timeout", &v)) != 0) {
    uint64_t ns = 0;
    if (r < 0 || cli_parse_seconds(v, &ns) != 0) {
      cli_usage(cmd, "--timeout takes seconds from 0 to 1000000 (decimals allowed, e.g. 0.5; "
                     "0 = none)");
      return -1;
    }
    cf_set_limits(ns, 0);
    return 1;
  }
  if ((r = cli_opt_value(cmd, argc, argv, i, "--device", &v)) != 0) {
    if (r < 0 || cli_parse_devices(v, &c->sel->device, NULL, &c->sel->device_uuid) != 0) {
      cli_usage(cmd, "--device takes an ordinal or a device UUID (GPU-..., all of it or a unique "
                     "prefix; `vyre info` prints it)");
      return -1;
    }
    return 1;
  }
  if (cli_opt_flag(argv, *i, "--no-minimize")) {
    *c->minimize = 0;
  } else if (cli_opt_flag(argv, *i, "--verbose") || cli_opt_flag(argv, *i, "-v")) {
    *c->verbose = 1;
  } else {
    return 0;
  }
  (*i)++;
  return 1;
}

/* The corpus: --corpus, $VYRE_CONFORM_CORPUS, $VYRE_SRC_DIR's, ./tests/conformance, the installed one. */
static const char *default_corpus(void) {
  const char *env = vyre__env(VYRE__ENV_CONFORM_CORPUS);
  if (env) return env;
  static char buf[4096];
  const char *src = vyre__env(VYRE__ENV_SRC_DIR);
  if (src) {
    snprintf(buf, sizeof buf, "%s/tests/conformance", src);
    if (access(buf, R_OK) == 0) return buf;
  }
  /* Run from a source tree, its corpus; otherwise the installed one. */
  if (access("tests/conformance", R_OK) == 0) return "tests/conformance";
#ifdef VYRE_CONFORM_CORPUS_DIR
  if (access(VYRE_CONFORM_CORPUS_DIR, R_OK) == 0) return VYRE_CONFORM_CORPUS_DIR;
#endif
  return "tests/conformance";
}

static int run_conform(const cli_command *self, int argc, char **argv) {
  /* Line-buffered, so a run cut short by a time limit keeps its log. */
  setvbuf(stdout, NULL, _IOLBF, 0);
  cli_select sel = {0};
  sel.need_reference = 1;
  cf_options o = {0};
  o.out = stdout;
  o.minimize = 1;
  o.tool_version = PACKAGE_STRING;
  const char *replay = NULL;
  int coverage = 0;
  const cli_common common = {&sel, &o.capsule_dir, &o.minimize, &o.minimize_tries, &o.verbose};
  for (int i = 1; i < argc;) {
    int r;
    if ((r = cli_common_option(self, argc, argv, &i, &common)) != 0) {
      if (r < 0) return CLI_USAGE;
    } else if ((r = cli_opt_value(self, argc, argv, &i, "--filter", &o.filter)) != 0) {
      if (r < 0) return CLI_USAGE;
    } else if (cli_opt_flag(argv, i, "--json") &&
               (i + 1 >= argc || (argv[i + 1][0] == '-' && argv[i + 1][1] != '\0'))) {
      o.json_path = "-"; /* --json alone: the report on stdout */
      i++;
    } else if ((r = cli_opt_value(self, argc, argv, &i, "--json", &o.json_path)) != 0) {
      if (r < 0) return CLI_USAGE;
    } else if ((r = cli_opt_value(self, argc, argv, &i, "--junit", &o.junit_path)) != 0) {
      if (r < 0) return CLI_USAGE;
    } else if ((r = cli_opt_value(self, argc, argv, &i, "--corpus", &o.corpus_dir)) != 0) {
      if (r < 0) return CLI_USAGE;
    } else if ((r = cli_opt_value(self, argc, argv, &i, "--replay", &replay)) != 0) {
      if (r < 0) return CLI_USAGE;
    } else if ((r = cli_opt_value(self, argc, argv, &i, "--certificate", &o.certificate_path)) != 0) {
      if (r < 0) return CLI_USAGE;
    } else if (cli_opt_flag(argv, i, "--all")) {
      sel.all = 1;
      i++;
    } else if (cli_opt_flag(argv, i, "--coverage")) {
      coverage = 1;
      i++;
    } else if (cli_opt_flag(argv, i, "--minimize")) {
      o.minimize = 1;
      i++;
    } else {
      return cli_usage(self, "unknown argument '%s'", argv[i]);
    }
  }
  if (sel.all + (sel.backend != NULL) + (sel.plugin != NULL) > 1)
    return cli_usage(self, "--backend, --plugin and --all exclude each other");
  if (replay && (coverage || o.certificate_path || o.json_path || o.junit_path))
    return cli_usage(self, "--replay runs one capsule: --coverage, --certificate, --json and "
                           "--junit do not apply");
  if (coverage && (o.certificate_path || o.json_path || o.junit_path))
    return cli_usage(self, "--coverage prints a table: --certificate, --json and --junit do not "
                           "apply. Fix: run them without --coverage");
  /* "-" is stdout: one report may take it, and the log moves to stderr. */
  const char *const reports[] = {o.json_path, o.junit_path, o.certificate_path};
  const char *const report_names[] = {"--json", "--junit", "--certificate"};
  int on_stdout = -1;
  for (int k = 0; k < 3; k++) {
    if (!reports[k] || strcmp(reports[k], "-") != 0) continue;
    if (on_stdout >= 0)
      return cli_usage(self, "%s and %s both write to stdout ('-'). Fix: give one of them a file",
                       report_names[on_stdout], report_names[k]);
    on_stdout = k;
  }
  if (on_stdout >= 0) o.out = stderr;
  unsigned stdout_reports = 0;
  o.stdout_reports = &stdout_reports;
  cli_progress progress;
  cli_progress_init(&progress);
  if (progress.on) {
    o.progress = cli_progress_callback;
    o.progress_ctx = &progress;
  }
  o.color = cli_color_on(o.out);
  if (!o.corpus_dir) o.corpus_dir = default_corpus();
  /* --coverage alone looks at the corpus and every op; with a backend,
   * at the ops it claims. */
  if (coverage && !sel.all && !sel.backend && !sel.plugin) sel.no_target = 1;
  if (coverage) sel.need_reference = 0;
  cli_session s;
  int rc = cli_session_open(self, &sel, &s);
  if (rc != CLI_OK) {
    cli_session_close(&s);
    return rc;
  }
  vyre_error err = VYRE_ERROR_INIT;
  if (coverage) rc = cf_coverage_run(&o, s.targets, s.count, &err);
  else if (replay) rc = cf_replay_run(&o, replay, s.targets, s.count, s.reference, &err);
  else rc = cf_conform_run(&o, s.targets, s.count, s.reference, &err);
  cli_progress_show(&progress, NULL);
  fflush(stdout);
  if (stdout_reports) vyre__json_count_stdout_document();
  if (rc != 0 && err.message[0]) cli_fail(self, "%s", err.message);
  cli_session_close(&s);
  return rc == 2 ? CLI_FAIL : rc;
}

const cli_command cli_cmd_conform = {
    "conform",
    "conform [--backend ID | --all | --plugin FILE] [--filter PATTERN] [--json [FILE]] "
    "[--junit FILE] [--corpus DIR] [--replay FILE] [--certificate FILE] [--coverage]",
    "certify a backend against the reference backend over the conformance corpus",
    "Runs every case of the corpus (docs/conformance.md) on the backend and on the\n"
    "reference backend and compares them: integers and bools byte for byte, f32\n"
    "bit for bit except within a case's ULP tolerance, NaN bits exactly.  A case\n"
    "using an op, capability or storage type the backend does not offer is\n"
    "skipped-unsupported; a claimed op that fails is a failure.  Each plugin is\n"
    "checked first: its ELF exports (only vyre_plugin_descriptor and\n"
    "vyre_plugin_entry), descriptor sizes, RTLD_NOW loading, then its\n"
    "instance: a factory failure other than VYRE_NO_DEVICE (SKIPPED), a\n"
    "malformed instance or one without dispatch fails.\n\n"
    "options:\n"
    "  --backend ID        the backend to certify (default: the one `vyre run` picks)\n"
    "  --all               every backend found (the reference is checked against itself)\n"
    "  --plugin FILE       a plugin file, searched before anything else\n"
    "  --device N          device ordinal (default 0), or the device's UUID\n"
    "  --timeout SECONDS   fail a dispatch still running SECONDS after it began\n"
    "                      (decimals allowed; default 60, 0 = none): the case fails\n"
    "                      with \"budget exceeded\" instead of hanging the run\n"
    "  --corpus DIR        case files (default: $VYRE_CONFORM_CORPUS, else\n"
    "                      $VYRE_SRC_DIR/tests/conformance, else ./tests/conformance,\n"
    "                      else the installed corpus)\n"
    "  --filter PATTERN    only cases whose CATEGORY/NAME matches (glob, or substring);\n"
    "                      a PATTERN that selects no case is an error (exit 1)\n"
    "  --json [FILE]       the report of every case as JSON, to FILE or, alone\n"
    "                      or as --json -, to stdout\n"
    "                      (docs/schemas/vyre-conform.schema.json)\n"
    "  --junit FILE        a JUnit XML report\n"
    "  --certificate FILE  write the certificate JSON (one backend)\n"
    "A report written to stdout (\"-\"; one at most) moves the log to stderr.\n"
    "  --capsules DIR      where failing cases are written (default conform-failures/)\n"
    "  --no-minimize       do not shrink failing cases\n"
    "  --minimize-tries N  runs the minimizer may spend per failure (default 1000)\n"
    "  --replay FILE       re-run a capsule (any case file; \"-\": stdin); unless\n"
    "                      --no-minimize, a mismatch also writes FILE.min.vyre\n"
    "                      (stdin.min.vyre for stdin)\n"
    "  --coverage          which ops and types the corpus exercises; fails when an\n"
    "                      op the backend claims (every op, without a backend) is not\n"
    "  --verbose, -v       one line per case\n"
    "When stderr is a terminal, a progress line there counts the cases.\n\n"
    "exit status:\n"
    "  0  nothing failed (skips are fine)\n"
    "  1  a case, a static check, the instance or a report failed, the corpus\n"
    "     cannot be read\n"
    "     or --filter selects none of it, or the backend or the reference\n"
    "     cannot be used\n"
    "  2  the command line is wrong\n\n"
    "examples:\n"
    "  vyre conform --backend cuda --certificate docs/certificates/cuda-h100.json\n"
    "  vyre conform --all --filter 'ops.*' --junit conform.xml\n"
    "  vyre conform --replay conform-failures/cuda/ops.int.add.u32.vyre --backend cuda\n",
    run_conform,
    NULL,
};
