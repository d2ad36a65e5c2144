/* run.h -- what the files of `vyre run` share: the input options, building inputs (run_input.c), printing outputs and timing (run_output.c). */
#ifndef VYRE_CLI_RUN_H
#define VYRE_CLI_RUN_H

#include <stdio.h>

#include "abi/support/json.h"
#include "cli.h"

typedef enum input_kind { INPUT_FILE, INPUT_RANDOM, INPUT_FILL, INPUT_IOTA } input_kind;

typedef struct input_spec {
  input_kind kind;
  const char *arg; /* as given */
} input_spec;

/* The option that gives an input of this kind ("--input", "--random",
 * "--fill", "--iota"). */
const char *cli_run_input_option(input_kind kind);
#define INPUT_KINDS 4

/* Build the bytes of input `spec` for buffer b (a file of at most
 * max_input bytes, or generated); *owned receives what in->data points
 * to (free() it).  Returns CLI_OK, or an exit code after printing the
 * problem. */
int cli_run_make_input(const cli_command *self, const input_spec *spec, uint64_t max_input,
                       const vyre_buffer_info *b, vyre_input *in, void **owned);
/* The program's inputs, one line each, to f (for a wrong input count). */
void cli_run_list_inputs(const vyre_program *p, FILE *f);

/* Whether outs is what p returns for these inputs and options, by
 * libvyre's own geometry (vyre_geometry_derive): one output per output
 * buffer, each of its size.  Nothing a backend returns is printed or
 * written before this passes, so that no output is read past what the
 * backend handed out.  CLI_OK, or CLI_FAIL after printing why (naming
 * backend `id`). */
int cli_run_check_outputs(const cli_command *self, const char *id, const vyre_program *p,
                          const vyre_input *inputs, const vyre_dispatch_options *options,
                          const vyre_outputs *outs);
/* Each output's elements as text, at most `show` per output (0: all). */
void cli_run_print_outputs_text(const vyre_program *p, const vyre_outputs *outs, uint32_t show);
/* The "outputs" member of --json: every output lossless (values, bits of
 * floats, or the bytes of a range that cuts elements). */
void cli_run_print_outputs_json(vyre__json *w, const vyre_program *p, const vyre_outputs *outs);
/* --output-raw DIR: DIR/<k>.<name>.bin holds output k's bytes.  CLI_OK,
 * or CLI_FAIL after printing why. */
int cli_run_write_raw_outputs(const cli_command *self, const char *dir, const vyre_program *p,
                              const vyre_outputs *outs);

typedef struct timing_log {
  vyre_timing *runs;
  uint32_t count;
} timing_log;

/* --timed: min / median / mean of each timing field, as text or as the
 * "timing" member of --json (every run's figure). */
void cli_run_print_timing_text(const timing_log *log);
void cli_run_print_timing_json(vyre__json *w, const timing_log *log);

#endif /* VYRE_CLI_RUN_H */
