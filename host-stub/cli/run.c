/* run.c -- `vyre run`: its options, then load, build inputs (run_input.c), dispatch on a backend and print outputs and timing (run_output.c). */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "abi/support/bytes.h"
#include "vyre/vyre_support.h"
#include "run.h"

#define MAX_INPUTS VYRE_MAX_BUFFERS
#define MAX_REPEAT 1000000u

typedef struct run_args {
  const char *program;
  const char *backend;
  input_spec inputs[MAX_INPUTS];
  uint32_t input_count;
  vyre_dispatch_options options;
  uint32_t device;
  const char *device_uuid; /* --device GPU-...: resolved into device by open_backend */
  uint32_t repeat;
  uint32_t show;
  int timed;
  int json;
  const char *output_raw; /* --output-raw DIR, or NULL */
  uint64_t timeout_ns;    /* --timeout SECONDS: 0 = none */
  uint64_t max_steps;     /* --max-steps N: 0 = none */
  vyre_limits limits;     /* chained on options when either is set */
  uint64_t max_input;     /* --max-input-bytes: the most one --input FILE may hold */
} run_args;

/* --max-input-bytes: default and ceiling (docs/host.md, "Files vyre reads"). */
#define DEFAULT_MAX_INPUT ((uint64_t)1 << 30)
#define CEILING_MAX_INPUT ((uint64_t)1 << 40)

/* parse_value_option: argv[*i] is none of its options. */
#define NOT_MINE (-1)

/*
 * The options with a value at argv[*i] (--backend, --output-raw, the
 * inputs, the numbers): CLI_OK when one was taken (*i advanced),
 * CLI_USAGE after a usage error, NOT_MINE for anything else.
 */
static int parse_value_option(const cli_command *self, int argc, char **argv, int *ip,
                              run_args *a) {
  const char *v = NULL;
  int m, i = *ip;
#define VALUE_OPTION(name)                                        \
  if ((m = cli_opt_value(self, argc, argv, &i, name, &v)) < 0) return CLI_USAGE; \
  if (m > 0)
  VALUE_OPTION("--backend") {
    a->backend = v;
    goto taken;
  }
  VALUE_OPTION("--output-raw") {
    a->output_raw = v;
    goto taken;
  }
  for (int k = 0; k < INPUT_KINDS; k++) {
    if ((m = cli_opt_value(self, argc, argv, &i, cli_run_input_option((input_kind)k), &v)) < 0)
      return CLI_USAGE;
    if (m > 0) {
      if (a->input_count == MAX_INPUTS)
        return cli_usage(self, "more than %u inputs", MAX_INPUTS);
      a->inputs[a->input_count].kind = (input_kind)k;
      a->inputs[a->input_count++].arg = v;
      goto taken;
    }
  }
  VALUE_OPTION("--ulp") {
    if (cli_parse_u32(v, 0, 1u << 30, &a->options.ulp_budget) != 0)
      return cli_usage(self, "--ulp '%s' is not a number of ulps (0 = strict)", v);
    goto taken;
  }
  VALUE_OPTION("--wg") {
    if (cli_parse_dim3(v, a->options.workgroup) != 0)
      return cli_usage(self, "--wg '%s' is not X[,Y[,Z]] with each at least 1", v);
    goto taken;
  }
  VALUE_OPTION("--grid") {
    if (cli_parse_dim3(v, a->options.grid) != 0)
      return cli_usage(self, "--grid '%s' is not X[,Y[,Z]] with each at least 1", v);
    goto taken;
  }
  VALUE_OPTION("--iterations") {
    if (cli_parse_u32(v, 1, 1u << 30, &a->options.fixpoint_iterations) != 0)
      return cli_usage(self, "--iterations '%s' is not a count from 1 to %u", v, 1u << 30);
    goto taken;
  }
  VALUE_OPTION("--max-input-bytes") {
    uint64_t bytes = 0;
    if (vyre__parse_bytes(v, &bytes) != 0 || bytes < 1 || bytes > CEILING_MAX_INPUT)
      return cli_usage(self, "--max-input-bytes '%s' is not a byte count from 1 to 1T (%s)", v,
                       VYRE__BYTES_GRAMMAR);
    a->max_input = bytes;
    goto taken;
  }
  VALUE_OPTION("--repeat") {
    if (cli_parse_u32(v, 1, MAX_REPEAT, &a->repeat) != 0)
      return cli_usage(self, "--repeat '%s' is not a count from 1 to %u", v, MAX_REPEAT);
    goto taken;
  }
  VALUE_OPTION("--show") {
    if (cli_parse_u32(v, 0, UINT32_MAX, &a->show) != 0)
      return cli_usage(self, "--show '%s' is not a count (0 = all)", v);
    goto taken;
  }
  VALUE_OPTION("--timeout") {
    if (cli_parse_seconds(v, &a->timeout_ns) != 0)
      return cli_usage(self, "--timeout '%s' is not a number of seconds from 0 to 1000000 "
                       "(decimals allowed, e.g. 0.5; 0 = none)", v);
    goto taken;
  }
  VALUE_OPTION("--max-steps") {
    uint64_t n = 0;
    if (cli_parse_u64(v, &n) != 0 || n == 0)
      return cli_usage(self, "--max-steps '%s' is not a positive step count", v);
    a->max_steps = n;
    goto taken;
  }
  VALUE_OPTION("--device") {
    if (cli_parse_devices(v, &a->device, NULL, &a->device_uuid) != 0)
      return cli_usage(self, "--device '%s' is not a device number or UUID", v);
    goto taken;
  }
#undef VALUE_OPTION
  return NOT_MINE;
taken:
  *ip = i;
  return CLI_OK;
}

/* Standard input ends after one read: one file may name it.  --output-raw
 * takes a directory.  CLI_OK, or CLI_USAGE after saying why. */
static int check_args(const cli_command *self, const run_args *a) {
  const char *first_stdin = strcmp(a->program, "-") == 0 ? "PROGRAM" : NULL;
  for (uint32_t k = 0; k < a->input_count; k++) {
    if (a->inputs[k].kind != INPUT_FILE || strcmp(a->inputs[k].arg, "-") != 0) continue;
    if (first_stdin)
      return cli_usage(self, "%s and --input %u both read stdin ('-'), which can be read once. "
                       "Fix: give one of them a file", first_stdin, k);
    first_stdin = "an --input";
  }
  if (a->output_raw && strcmp(a->output_raw, "-") == 0)
    return cli_usage(self, "--output-raw takes a directory, and '-' (stdout) is not one. Fix: "
                     "name a directory, or use --json, which gives every output's bytes "
                     "(values, and bits for floats) on stdout");
  return CLI_OK;
}

static int parse_args(const cli_command *self, int argc, char **argv, run_args *a) {
  memset(a, 0, sizeof *a);
  a->options.struct_size = sizeof a->options;
  a->repeat = 1;
  a->show = 64;
  a->max_input = DEFAULT_MAX_INPUT;
  for (int i = 1; i < argc;) {
    if (cli_opt_flag(argv, i, "--timed")) {
      a->timed = 1;
      i++;
      continue;
    }
    if (cli_opt_flag(argv, i, "--json")) {
      a->json = 1;
      i++;
      continue;
    }
    int rc = parse_value_option(self, argc, argv, &i, a);
    if (rc == CLI_OK) continue;
    if (rc != NOT_MINE) return rc;
    if (argv[i][0] == '-' && argv[i][1] != '\0')
      return cli_usage(self, "unknown option '%s'", argv[i]);
    if (a->program)
      return cli_usage(self, "takes one PROGRAM, got '%s' and '%s'", a->program, argv[i]);
    a->program = argv[i++];
  }
  if (!a->program) return cli_usage(self, "PROGRAM is missing");
  return check_args(self, a);
}

/* Chain --timeout and --max-steps on the options (vyre_limits) when the
 * backend serves vyre.limits; say on stderr what it will not enforce.  A
 * backend whose answer is not "served" or "not served" (a contract
 * violation the host refused, or another failure) gets no run: it would
 * run without the limit asked for, and the reason would be hidden. */
static int attach_limits(const cli_command *self, run_args *a, vyre_backend *b, const char *id) {
  const void *t = NULL;
  vyre_error err = VYRE_ERROR_INIT;
  uint32_t enforced = 0;
  if (VYRE_HOST_HAS(b, get_extension)) {
    vyre_status st = b->vt->get_extension(b, VYRE_LIMITS_NAME, VYRE_LIMITS_VERSION, &t, &err);
    if (st == VYRE_OK && t) enforced = ((const vyre_limits_info *)t)->enforced;
    else if (st != VYRE_UNSUPPORTED)
      return cli_fail(self, "%s needs %s, and asking backend '%s' for it failed: %s (the "
                      "program is not run without the limit asked for)",
                      a->max_steps ? "--max-steps" : "--timeout", VYRE_LIMITS_NAME, id,
                      err.message);
  }
  if (!enforced) {
    fprintf(stderr, "vyre run: backend '%s' does not serve %s: --timeout and --max-steps are "
                    "ignored\n", id, VYRE_LIMITS_NAME);
    return CLI_OK;
  }
  if (a->max_steps && !(enforced & VYRE_LIMITS_STEPS))
    fprintf(stderr, "vyre run: backend '%s' has no step count: --max-steps is ignored (use "
                    "--timeout)\n", id);
  if (a->timeout_ns && !(enforced & VYRE_LIMITS_TIMEOUT))
    fprintf(stderr, "vyre run: backend '%s' does not enforce --timeout: it is ignored\n", id);
  memset(&a->limits, 0, sizeof a->limits);
  a->limits.head.struct_size = sizeof a->limits;
  a->limits.head.type = VYRE_EXT_LIMITS;
  a->limits.timeout_ns = a->timeout_ns;
  a->limits.max_steps = a->max_steps;
  a->options.next = &a->limits.head;
  return CLI_OK;
}

/* What one `vyre run` holds, released by run_state_free. */
typedef struct run_state {
  void *bytes; /* the program image */
  size_t size;
  vyre_program *prog;
  vyre_host *host;
  vyre_backend *b;
  vyre_host_candidate cand; /* the backend's id */
  vyre_outputs *outs;       /* the last dispatch's */
  vyre_input inputs[MAX_INPUTS];
  void *owned[MAX_INPUTS]; /* the inputs' bytes */
  timing_log log;
  vyre_error err;
} run_state;

static void run_state_free(run_state *S) {
  if (S->outs) S->b->vt->outputs_free(S->b, S->outs);
  if (S->b) S->b->vt->destroy(S->b);
  vyre_host_close(S->host);
  for (uint32_t k = 0; k < MAX_INPUTS; k++) free(S->owned[k]);
  vyre_program_free(S->prog);
  free(S->bytes);
  free(S->log.runs);
}

/* Load and decode the program and build one input per input buffer. */
static int load_inputs(const cli_command *self, const run_args *a, run_state *S) {
  if (cli_load_program(a->program, &S->bytes, &S->size, NULL, &S->err) != VYRE_OK)
    return cli_fail(self, "%s", S->err.message);
  if (vyre_program_decode(S->bytes, S->size, &S->prog, &S->err) != VYRE_OK)
    return cli_fail(self, "%s: %s", a->program, S->err.message);
  const vyre_program *prog = S->prog;
  if (a->input_count != prog->input_count) {
    char message[512];
    snprintf(message, sizeof message, "%s takes %u input%s, %u given. Fix: give one --input "
             "FILE, --random SEED[:N], --fill V[:N] or --iota START[:N] per input, in this "
             "order", a->program, prog->input_count, prog->input_count == 1 ? "" : "s",
             a->input_count);
    cli_error_record(CLI_USAGE, message);
    cli_error_prefix(self);
    fprintf(stderr, "%s:\n", message);
    cli_run_list_inputs(prog, stderr);
    return CLI_USAGE;
  }
  for (uint32_t i = 0; i < prog->buffer_count; i++) {
    const vyre_buffer_info *buf = &prog->buffers[i];
    if (buf->input_index < 0) continue;
    uint32_t k = (uint32_t)buf->input_index;
    int rc = cli_run_make_input(self, &a->inputs[k], a->max_input, buf, &S->inputs[k],
                                &S->owned[k]);
    if (rc != CLI_OK) return rc;
  }
  return CLI_OK;
}

/* Create the backend and check it can dispatch: --backend ID's, else
 * the best that covers the program (vyre_host_create_for: docs/host.md,
 * "Selection for a program"). */
static int open_backend(const cli_command *self, run_args *a, run_state *S) {
  if (cli_open_host(&S->host, &S->err) != VYRE_OK) return cli_fail(self, "%s", S->err.message);
  if (a->device_uuid &&
      cli_device_by_uuid(S->host, a->backend, a->device_uuid, &a->device, &S->err) != VYRE_OK)
    return cli_fail(self, "%s", S->err.message);
  vyre_backend_options bo = {sizeof bo, a->device, 0, 0, NULL};
  uint32_t index = 0;
  memset(&S->cand, 0, sizeof S->cand);
  S->cand.struct_size = sizeof S->cand;
  if (a->backend) {
    if (vyre_host_create(S->host, a->backend, &bo, &S->b, &index, &S->err) != VYRE_OK)
      return cli_fail(self, "%s", S->err.message);
  } else {
    if (vyre_host_create_for(S->host, S->bytes, S->size, &a->options, &bo, &S->b, &index,
                             &S->err) != VYRE_OK)
      return cli_fail(self, "%s: %s", a->program, S->err.message);
  }
  vyre_host_backend_info(S->host, index, &S->cand, NULL);
  if (!VYRE_HOST_HAS(S->b, dispatch) || !VYRE_HOST_HAS(S->b, outputs_free))
    return cli_fail(self, "backend '%s' has no dispatch entry (vtable of %u bytes). Fix: pick "
                    "another backend with --backend (see `vyre list`)",
                    S->cand.id, S->b->vt->struct_size);
  if (a->timeout_ns || a->max_steps) return attach_limits(self, a, S->b, S->cand.id);
  return CLI_OK;
}

/* Dispatch --repeat times, timing each run under --timed. */
static int dispatch_all(const cli_command *self, const run_args *a, run_state *S) {
  vyre_backend *b = S->b;
  if (a->timed) {
    S->log.runs = calloc(a->repeat, sizeof *S->log.runs);
    if (!S->log.runs) return cli_fail(self, "out of memory for %u timing records", a->repeat);
  }
  vyre_program_ref ref = VYRE_PROGRAM_BYTES(S->bytes, S->size);
  for (uint32_t r = 0; r < a->repeat; r++) {
    if (S->outs) b->vt->outputs_free(b, S->outs);
    S->outs = NULL;
    vyre_timing *t = NULL;
    if (a->timed) {
      t = &S->log.runs[r];
      t->struct_size = sizeof *t;
    }
    vyre_status st = b->vt->dispatch(b, &ref, S->inputs, S->prog->input_count, &a->options,
                                     &S->outs, t, &S->err);
    if (st != VYRE_OK)
      return cli_fail(self, "%s on backend '%s' failed: %s%s", a->program, S->cand.id,
                      S->err.message,
                      st == VYRE_UNSUPPORTED && a->options.ulp_budget == 0 &&
                              strstr(S->err.message, "strict")
                          ? " (vyre run: --ulp N allows an N-ulp bound)"
                          : "");
    if (a->timed) S->log.count++;
    if (!S->outs)
      return cli_fail(self, "backend '%s' returned VYRE_OK without outputs (a backend bug). Fix: "
                      "report it; try --backend reference", S->cand.id);
  }
  return CLI_OK;
}

/* --output-raw, then the outputs (and --timed's figures) as text or JSON. */
static int print_results(const cli_command *self, const run_args *a, run_state *S) {
  int rc = cli_run_check_outputs(self, S->cand.id, S->prog, S->inputs, &a->options, S->outs);
  if (rc != CLI_OK) return rc;
  if (a->output_raw &&
      (rc = cli_run_write_raw_outputs(self, a->output_raw, S->prog, S->outs)) != CLI_OK)
    return rc;
  if (a->json) {
    char hash[65];
    vyre__json w;
    vyre_program_hash_hex(S->prog, hash);
    vyre__json_init(&w, stdout);
    vyre__json_object_begin(&w);
    vyre__json_key(&w, "program");
    vyre__json_string(&w, a->program);
    vyre__json_key(&w, "sha256");
    vyre__json_string(&w, hash);
    vyre__json_key(&w, "backend");
    vyre__json_string(&w, S->cand.id);
    cli_run_print_outputs_json(&w, S->prog, S->outs);
    if (a->timed) cli_run_print_timing_json(&w, &S->log);
    vyre__json_object_end(&w);
    vyre__json_end(&w);
  } else {
    printf("backend: %s\n", S->cand.id);
    cli_run_print_outputs_text(S->prog, S->outs, a->show);
    if (a->timed) cli_run_print_timing_text(&S->log);
  }
  return fflush(stdout) == 0 ? CLI_OK : CLI_FAIL;
}

static int run_run(const cli_command *self, int argc, char **argv) {
  run_args a;
  int rc = parse_args(self, argc, argv, &a);
  if (rc != CLI_OK) return rc;
  run_state S;
  memset(&S, 0, sizeof S);
  S.err = (vyre_error)VYRE_ERROR_INIT;
  rc = load_inputs(self, &a, &S);
  if (rc == CLI_OK) rc = open_backend(self, &a, &S);
  if (rc == CLI_OK) rc = dispatch_all(self, &a, &S);
  if (rc == CLI_OK) rc = print_results(self, &a, &S);
  run_state_free(&S);
  return rc;
}

const cli_command cli_cmd_run = {
    "run",
    "run PROGRAM [--backend ID]\n"
    "           [--input FILE | --random SEED[:N] | --fill V[:N] | --iota START[:N]]...\n"
    "           [--ulp N] [--wg X,Y,Z] [--grid X,Y,Z] [--iterations N] [--device N]\n"
    "           [--timed] [--repeat N] [--json] [--show N] [--output-raw DIR]\n"
    "           [--max-input-bytes N] [--timeout SECONDS] [--max-steps N]",
    "run a program (text .vyre or binary .vyrb) on a backend and print its outputs",
    "PROGRAM is text or binary, told apart by the binary magic (\"VYRP\"); \"-\" reads\n"
    "stdin (as does --input -; only one of them may).  Give one input per input\n"
    "buffer (ro, uniform, rw without the output flag), in declaration order:\n"
    "  --input FILE      the buffer's raw little-endian bytes (\"-\": stdin)\n"
    "  --random SEED[:N] N pseudo-random elements (splitmix64 from SEED): integers\n"
    "                    get random bits, f32/f16/bf16 uniform in [-1, 1), bool 0/1\n"
    "  --fill V[:N]      N copies of V (a number of the buffer's type; true/false)\n"
    "  --iota START[:N]  START, START+1, ... (integers wrap; floats START+k rounded)\n"
    "N is needed only for buffers sized by their input (count 0); for the others\n"
    "it must match the declared count or be left out.\n\n"
    "options:\n"
    "  --backend ID      use this backend (default: VYRE_BACKEND, else the best\n"
    "                    backend whose registration and device cover the program)\n"
    "  --device N        device ordinal (default 0), or the device's UUID\n"
    "                    (GPU-..., all of it or a unique prefix; `vyre info`)\n"
    "  --ulp N           ulp budget for transcendentals (default 0 = strict)\n"
    "  --wg X,Y,Z        override the program's workgroup size\n"
    "  --grid X,Y,Z      override the derived grid\n"
    "  --iterations N    fixpoint launches on the same buffers\n"
    "  --repeat N        dispatch N times (outputs of the last run are printed)\n"
    "  --timed           print wall/device/enqueue/wait time (min/median/mean)\n"
    "  --json            print one JSON object: each output's byte range, its values\n"
    "                    (NaN/inf as strings) and for floats each value's bits\n"
    "  --output-raw DIR  write output k's bytes to DIR/<k>.<name>.bin (a directory:\n"
    "                    not \"-\")\n"
    "  --max-input-bytes N  the most an --input FILE may hold (default 1G; K, M, G, T\n"
    "                    suffixes): a larger file, or an endless one, is an error\n"
    "  --show N          print at most N elements per output (default 64, 0 = all)\n"
    "  --timeout SECONDS fail a dispatch still running SECONDS after it began\n"
    "                    (decimals allowed, e.g. 0.5; default none): \"budget\n"
    "                    exceeded\", exit status 1.  On CUDA the instance is then\n"
    "                    lost (a running kernel cannot be stopped)\n"
    "  --max-steps N     reference backend: fail a dispatch after N steps (an\n"
    "                    invocation started or an instruction executed; default none)\n\n"
    "example:\n"
    "  vyre run examples/saxpy.vyre --fill 2 --iota 0:1024 --fill 1:1024\n\n"
    "exit status:\n"
    "  0  the program ran and its outputs were printed\n"
    "  1  loading, the backend or the dispatch failed (a trap or an exceeded\n"
    "     --timeout or --max-steps included), or a file cannot be read or written\n"
    "  2  the command line is wrong, or the number of inputs is\n",
    run_run,
    NULL,
};
