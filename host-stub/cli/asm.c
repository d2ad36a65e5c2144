/* asm.c -- `vyre asm` (text -> binary) and `vyre disasm` (binary or text -> canonical text). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "vyre/vyre_support.h"
#include "vyre/vyre_text.h"
#include "cli.h"

/* IN and -o OUT from argv; 0 on success, else an exit code was printed. */
static int parse_in_out(const cli_command *self, int argc, char **argv, const char **in,
                        const char **out) {
  *in = NULL;
  *out = NULL;
  for (int i = 1; i < argc;) {
    const char *v = NULL;
    int m = cli_opt_value(self, argc, argv, &i, "-o", &v);
    if (m == 0) m = cli_opt_value(self, argc, argv, &i, "--output", &v);
    if (m < 0) return CLI_USAGE;
    if (m > 0) {
      if (*out) return cli_usage(self, "-o given twice");
      *out = v;
      continue;
    }
    if (argv[i][0] == '-' && argv[i][1] != '\0')
      return cli_usage(self, "unknown option '%s'", argv[i]);
    if (*in) return cli_usage(self, "takes one input file, got '%s' and '%s'", *in, argv[i]);
    *in = argv[i++];
  }
  if (!*in) return cli_usage(self, "the input file is missing");
  return CLI_OK;
}

static int run_asm(const cli_command *self, int argc, char **argv) {
  const char *in, *out;
  int rc = parse_in_out(self, argc, argv, &in, &out);
  if (rc != CLI_OK) return rc;
  if (!out)
    return cli_usage(self, "-o OUT is missing (the program is binary; use -o - for stdout)");
  void *text = NULL, *bytes = NULL;
  size_t text_size = 0, size = 0;
  vyre_error err = VYRE_ERROR_INIT;
  if (cli_read_program_file(in, &text, &text_size, &err) != 0) return cli_fail(self, "%s", err.message);
  uint32_t magic = 0;
  if (text_size >= 4) memcpy(&magic, text, 4);
  if (magic == VYRE_PROGRAM_MAGIC) {
    free(text);
    return cli_fail(self, "%s is already a binary program. Fix: `vyre disasm %s` shows its text",
                    in, in);
  }
  if (vyre_text_assemble(text, text_size, strcmp(in, "-") ? in : "<stdin>", &bytes, &size, &err) !=
      VYRE_OK) {
    free(text);
    return cli_fail(self, "%s", err.message);
  }
  free(text);
  rc = cli_write_file(out, bytes, size, &err) == 0 ? CLI_OK : cli_fail(self, "%s", err.message);
  free(bytes);
  return rc;
}

const cli_command cli_cmd_asm = {
    "asm",
    "asm IN -o OUT",
    "assemble a text program (.vyre) into the binary format (.vyrb)",
    "IN and OUT may be \"-\" for stdin/stdout.  The program is validated; errors read\n"
    "FILE:LINE:COL: what is wrong. Fix: how.\n\n"
    "exit status:\n"
    "  0  the program was assembled and written\n"
    "  1  the text is wrong, or a file cannot be read or written\n"
    "  2  the command line is wrong\n",
    run_asm,
    NULL,
};

static int run_disasm(const cli_command *self, int argc, char **argv) {
  const char *in, *out;
  int rc = parse_in_out(self, argc, argv, &in, &out);
  if (rc != CLI_OK) return rc;
  void *bytes = NULL;
  size_t size = 0;
  char *text = NULL;
  vyre_error err = VYRE_ERROR_INIT;
  if (cli_load_program(in, &bytes, &size, NULL, &err) != VYRE_OK)
    return cli_fail(self, "%s", err.message);
  if (vyre_text_disassemble(bytes, size, &text, &err) != VYRE_OK) {
    free(bytes);
    return cli_fail(self, "%s: %s", in, err.message);
  }
  free(bytes);
  rc = cli_write_file(out ? out : "-", text, strlen(text), &err) == 0
           ? CLI_OK
           : cli_fail(self, "%s", err.message);
  free(text);
  return rc;
}

const cli_command cli_cmd_disasm = {
    "disasm",
    "disasm IN [-o OUT]",
    "print a program (binary, or text to canonicalise) as canonical text",
    "IN may be binary (.vyrb) or text (.vyre; it is assembled first, so the output\n"
    "is its canonical form); \"-\" reads stdin.  The text goes to stdout unless\n"
    "-o OUT is given (-o - is stdout too); assembling it gives back identical\n"
    "bytes.\n\n"
    "exit status:\n"
    "  0  the text was written\n"
    "  1  the program is invalid, or a file cannot be read or written\n"
    "  2  the command line is wrong\n",
    run_disasm,
    "dis",
};
