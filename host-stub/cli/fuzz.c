/* fuzz.c -- `vyre fuzz`: differential fuzzing of a backend against the reference, or of codegen with ptxas. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "abi/support/config.h"
#include "abi/support/json.h"
#include "term.h"
#include "conform.h"
#include "host-stub/fuzz/fuzz.h"

static const struct {
  const char *name;
  uint32_t flag;
} features[] = {
    {"transcendental", PROGEN_NO_TRANSCENDENTAL}, {"trap", PROGEN_NO_TRAP},
    {"grid-barrier", PROGEN_NO_GRID_BARRIER},     {"atomics", PROGEN_NO_ATOMICS},
    {"subgroup", PROGEN_NO_SUBGROUP},             {"workgroup-memory", PROGEN_NO_WORKGROUP_MEMORY},
    {"atomic64", PROGEN_NO_ATOMIC64},             {"f16", PROGEN_NO_F16},
    {"bf16", PROGEN_NO_BF16},                     {"mma", PROGEN_NO_MMA},
};

/* fuzz --json: one object (docs/schemas/vyre-fuzz.schema.json). */
static void print_summary(const fz_options *o, const fz_summary *r, const cf_target *t,
                          int sequences) {
  vyre__json w;
  char flags[16];
  vyre__json_init(&w, stdout);
  vyre__json_object_begin(&w);
  vyre__json_key(&w, "mode");
  vyre__json_string(&w, sequences ? "sequences" : t ? "backend" : "ptxas");
  vyre__json_key(&w, "backend");
  vyre__json_string(&w, t ? t->id : NULL);
  vyre__json_key(&w, "arch");
  vyre__json_string(&w, t ? NULL : o->arch);
  vyre__json_key(&w, "seed");
  vyre__json_uint(&w, o->seed);
  vyre__json_key(&w, "start");
  vyre__json_uint(&w, o->start);
  vyre__json_key(&w, "count");
  vyre__json_uint(&w, o->count);
  vyre__json_key(&w, "programs");
  vyre__json_uint(&w, r->programs);
  vyre__json_key(&w, "mismatches");
  vyre__json_uint(&w, r->mismatches);
  vyre__json_key(&w, "failures");
  vyre__json_uint(&w, r->failures);
  vyre__json_key(&w, "traps");
  vyre__json_uint(&w, r->traps);
  vyre__json_key(&w, "skipped");
  vyre__json_uint(&w, r->skipped);
  vyre__json_key(&w, "refused");
  vyre__json_uint(&w, r->refused);
  vyre__json_key(&w, "kernels");
  vyre__json_uint(&w, r->kernels);
  vyre__json_key(&w, "ptxas_failures");
  vyre__json_uint(&w, r->ptxas_failures);
  vyre__json_key(&w, "generator_flags");
  snprintf(flags, sizeof flags, "0x%x", r->flags);
  vyre__json_string(&w, flags);
  vyre__json_key(&w, "stopped_at_max_failures");
  vyre__json_bool(&w, r->stopped);
  vyre__json_key(&w, "capsule_dir");
  vyre__json_string(&w, o->capsule_dir ? o->capsule_dir : "fuzz-failures");
  vyre__json_key(&w, "seconds");
  vyre__json_double(&w, r->seconds);
  vyre__json_object_end(&w);
  vyre__json_end(&w);
}

/* --sequences: the target as configured, a second instance of it made
 * with VYRE_CUDA_FUSE=0 (read at create), and the reference. */
static int run_sequences(const fz_options *o, cli_session *s, uint32_t device, vyre_error *err) {
  cf_target *t = s->count ? &s->targets[0] : NULL;
  if (!t || !t->backend) {
    vyre_error_set(err, VYRE_NO_DEVICE, 0, "fuzz --sequences: no instance of the backend: %s",
                   t ? t->reason : "none selected");
    return 2;
  }
  const char *was = vyre__env(VYRE__ENV_CUDA_FUSE);
  char keep[64] = "";
  if (was) snprintf(keep, sizeof keep, "%s", was);
  setenv("VYRE_CUDA_FUSE", "0", 1);
  vyre_backend_options bo = {sizeof bo, device, 0, 0, NULL};
  vyre_backend *off = NULL;
  vyre_status st = vyre_host_create(s->host, t->id, &bo, &off, NULL, err);
  if (keep[0]) setenv("VYRE_CUDA_FUSE", keep, 1);
  else unsetenv("VYRE_CUDA_FUSE");
  if (st != VYRE_OK) return 2;
  int rc = fz_sequences_run(o, t->backend, off, s->reference, t->id, err);
  off->vt->destroy(off);
  return rc;
}

static int run_fuzz(const cli_command *self, int argc, char **argv) {
  /* Line-buffered, so a run cut short by a time limit keeps its log. */
  setvbuf(stdout, NULL, _IOLBF, 0);
  cli_select sel = {0};
  sel.need_reference = 1;
  fz_options o = {0};
  o.seed = 1;
  o.count = 1000;
  o.minimize = 1;
  o.out = stdout;
  o.arch = "sm_90";
  o.ptxas = vyre__env(VYRE__ENV_PTXAS);
  if (!o.ptxas) o.ptxas = "ptxas";
  const cli_common common = {&sel, &o.capsule_dir, &o.minimize, &o.minimize_tries, &o.verbose};
  int json = 0, sequences = 0;
  for (int i = 1; i < argc;) {
    const char *v = NULL;
    int r;
    if ((r = cli_common_option(self, argc, argv, &i, &common)) != 0) {
      if (r < 0) return CLI_USAGE;
    } else if ((r = cli_opt_value(self, argc, argv, &i, "--seed", &v)) != 0) {
      if (r < 0 || cli_parse_u64(v, &o.seed) != 0) return cli_usage(self, "--seed takes a number");
    } else if ((r = cli_opt_value(self, argc, argv, &i, "--count", &v)) != 0) {
      if (r < 0 || cli_parse_u64(v, &o.count) != 0 || o.count == 0)
        return cli_usage(self, "--count takes a positive number");
    } else if ((r = cli_opt_value(self, argc, argv, &i, "--start", &v)) != 0) {
      if (r < 0 || cli_parse_u64(v, &o.start) != 0) return cli_usage(self, "--start takes a number");
    } else if ((r = cli_opt_value(self, argc, argv, &i, "--work-dir", &o.work_dir)) != 0) {
      if (r < 0) return CLI_USAGE;
    } else if ((r = cli_opt_value(self, argc, argv, &i, "--ptxas-bin", &o.ptxas)) != 0) {
      if (r < 0) return CLI_USAGE;
    } else if ((r = cli_opt_value(self, argc, argv, &i, "--arch", &o.arch)) != 0) {
      if (r < 0) return CLI_USAGE;
    } else if ((r = cli_opt_value(self, argc, argv, &i, "--max-failures", &v)) != 0) {
      if (r < 0 || cli_parse_u32(v, 1, 1000000, &o.max_failures) != 0)
        return cli_usage(self, "--max-failures takes a number 1..1000000");
    } else if ((r = cli_opt_value(self, argc, argv, &i, "--without", &v)) != 0) {
      if (r < 0) return CLI_USAGE;
      size_t k = 0;
      while (k < sizeof features / sizeof features[0] && strcmp(features[k].name, v) != 0) k++;
      if (k == sizeof features / sizeof features[0])
        return cli_usage(self, "--without %s: unknown feature. Fix: one of transcendental, trap, "
                               "grid-barrier, atomics, subgroup, workgroup-memory, atomic64, "
                               "f16, bf16, mma", v);
      o.flags |= features[k].flag;
    } else if (cli_opt_flag(argv, i, "--json")) {
      json = 1;
      i++;
    } else if (cli_opt_flag(argv, i, "--mma")) {
      o.flags |= PROGEN_MMA;
      i++;
    } else if (cli_opt_flag(argv, i, "--sequences")) {
      sequences = 1;
      i++;
    } else if (cli_opt_flag(argv, i, "--ptxas")) {
      o.ptxas_mode = 1;
      i++;
    } else {
      return cli_usage(self, "unknown argument '%s'", argv[i]);
    }
  }
  if (o.ptxas_mode && sequences) return cli_usage(self, "--sequences and --ptxas exclude each other");
  if ((o.flags & PROGEN_MMA) && ((o.flags & PROGEN_NO_MMA) || sequences))
    return cli_usage(self, "--mma excludes --without mma and --sequences (elementwise steps)");
  if (o.ptxas_mode && (sel.backend || sel.plugin))
    return cli_usage(self, "--ptxas needs no backend (it runs the reference, codegen and ptxas)");
  if (sel.backend && sel.plugin) return cli_usage(self, "--backend and --plugin exclude each other");
  if (o.start + o.count < o.start) return cli_usage(self, "--start + --count overflows");
  sel.no_target = o.ptxas_mode;
  /* --json: the log goes to stderr, the summary is stdout's document. */
  fz_summary summary;
  if (json) {
    o.out = stderr;
    o.summary = &summary;
  }
  cli_progress progress;
  cli_progress_init(&progress);
  if (progress.on) {
    o.progress = cli_progress_callback;
    o.progress_ctx = &progress;
  }
  o.color = cli_color_on(o.out);
  cli_session s;
  int rc = cli_session_open(self, &sel, &s);
  if (rc == CLI_OK) {
    vyre_error err = VYRE_ERROR_INIT;
    rc = sequences ? run_sequences(&o, &s, s.device, &err)
                   : fz_run(&o, s.count ? &s.targets[0] : NULL, s.reference, &err);
    cli_progress_show(&progress, NULL);
    fflush(stdout);
    if (rc == 2) {
      rc = cli_fail(self, "%s", err.message);
    } else if (json) {
      print_summary(&o, &summary, o.ptxas_mode ? NULL : &s.targets[0], sequences);
    }
  }
  cli_session_close(&s);
  return rc;
}

const cli_command cli_cmd_fuzz = {
    "fuzz",
    "fuzz [--backend ID | --plugin FILE | --ptxas] [--mma | --sequences] [--seed S] [--count N] "
    "[--start I] [--json]",
    "differential fuzzing: random valid programs on a backend and the reference",
    "Generates random VALID, race-free programs (expression trees over every type\n"
    "and op, control flow, small loops, in/out-of-bounds loads and stores,\n"
    "atomics, barriers, subgroup ops, grid barriers, traps) with random inputs,\n"
    "runs each on the backend and on the reference backend and compares them as\n"
    "`vyre conform` does.  A mismatch is written as a replay capsule and\n"
    "minimized (`vyre conform --replay FILE` re-runs it).  The same seed always\n"
    "gives the same programs for a backend offering the same features.  Only\n"
    "ops, types and storage types the backend claims are used; a run that\n"
    "compares no program, or skips more than 10% of them, fails.\n\n"
    "options:\n"
    "  --backend ID       backend to test (default: the one `vyre run` picks)\n"
    "  --plugin FILE      a plugin file, searched before anything else\n"
    "  --seed S           (default 1)\n"
    "  --count N          programs (default 1000)\n"
    "  --start I          first program number (default 0): resume or bisect a run\n"
    "  --without FEATURE  leave out transcendental, trap, grid-barrier, atomics,\n"
    "                     subgroup, workgroup-memory, atomic64, f16, bf16 or mma\n"
    "  --mma              every program uses the MMA ops (mma_fill, mma_load, mma,\n"
    "                     mma_store; else about one in six does when the backend\n"
    "                     claims them); float results within the MMA bound\n"
    "  --capsules DIR     where mismatches go (default fuzz-failures/)\n"
    "  --no-minimize      keep mismatching programs as they are\n"
    "  --max-failures N   stop after N mismatches (default 10)\n"
    "  --device N         device ordinal (default 0), or the device's UUID\n"
    "  --timeout SECONDS  fail a dispatch still running SECONDS after it began\n"
    "                     (decimals allowed; default 60, 0 = none)\n"
    "  --ptxas            no GPU: run each program on the reference, lower it with\n"
    "                     the codegen and assemble it with ptxas (batched)\n"
    "  --ptxas-bin PATH   the ptxas to run (default $PTXAS, else ptxas on PATH)\n"
    "  --arch sm_XY       the ptxas target (default sm_90)\n"
    "  --work-dir DIR     where ptxas batch files go (failing ones are kept)\n"
    "  --sequences        random resident sequences of elementwise steps instead:\n"
    "                     each on the backend, on a second instance of it with\n"
    "                     fusion off (VYRE_CUDA_FUSE=0) and on the reference,\n"
    "                     every buffer compared bit for bit (--count sequences)\n"
    "  --json             the log to stderr, and on stdout one JSON object that\n"
    "                     counts what the run did\n"
    "                     (docs/schemas/vyre-fuzz.schema.json)\n"
    "  --verbose, -v      a count every 100 programs (else every 1000)\n"
    "  --minimize-tries N runs the minimizer may spend per mismatch (default 1000)\n"
    "When stderr is a terminal, a progress line there counts the programs.\n\n"
    "exit status:\n"
    "  0  no mismatch and no other failure\n"
    "  1  mismatches or other failures, no program compared or more than 10%\n"
    "     skipped, or the backend cannot be fuzzed\n"
    "  2  the command line is wrong\n\n"
    "examples:\n"
    "  vyre fuzz --backend cuda --seed 1 --count 20000\n"
    "  vyre fuzz --ptxas --seed 7 --count 500\n"
    "  vyre fuzz --sequences --backend cuda --seed 1 --count 5000\n",
    run_fuzz,
    NULL,
};
