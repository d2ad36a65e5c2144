/* main.c -- the `vyre` command line: the command table, dispatch (with a suggestion for a mistyped command), help, manual pages and versions. */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "config.h"
#include "vyre/vyre_support.h"
#include "abi/support/json.h"
#include "term.h"
#include "cli.h"

static const cli_command cli_cmd_help;
static const cli_command cli_cmd_version;

/* The command table: `vyre help` lists it in this order. */
static const cli_command *const commands[] = {
    &cli_cmd_list, &cli_cmd_info,     &cli_cmd_run,  &cli_cmd_asm,
    &cli_cmd_disasm, &cli_cmd_emit_ptx, &cli_cmd_bench, &cli_cmd_conform, &cli_cmd_fuzz,
    &cli_cmd_help, &cli_cmd_version,
};
#define COMMAND_COUNT (sizeof commands / sizeof commands[0])

static const cli_command *find_command(const char *name) {
  for (size_t i = 0; i < COMMAND_COUNT; i++)
    if (strcmp(commands[i]->name, name) == 0 ||
        (commands[i]->alias && strcmp(commands[i]->alias, name) == 0))
      return commands[i];
  return NULL;
}

/* Edit distance of a and b (insertions, deletions, substitutions and
 * swaps of two neighbours, each 1), or 3 when it is more than 2.  Command
 * names are short: longer words are never near. */
static unsigned distance(const char *a, const char *b) {
  enum { MAX = 32 };
  size_t n = strlen(a), m = strlen(b);
  if (n >= MAX || m >= MAX || (n > m ? n - m : m - n) > 2) return 3;
  unsigned d[MAX][MAX];
  for (size_t i = 0; i <= n; i++) d[i][0] = (unsigned)i;
  for (size_t j = 0; j <= m; j++) d[0][j] = (unsigned)j;
  for (size_t i = 1; i <= n; i++) {
    for (size_t j = 1; j <= m; j++) {
      unsigned best = d[i - 1][j - 1] + (a[i - 1] != b[j - 1]);
      if (d[i - 1][j] + 1 < best) best = d[i - 1][j] + 1;
      if (d[i][j - 1] + 1 < best) best = d[i][j - 1] + 1;
      if (i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1] &&
          d[i - 2][j - 2] + 1 < best)
        best = d[i - 2][j - 2] + 1;
      d[i][j] = best;
    }
  }
  return d[n][m] > 2 ? 3 : d[n][m];
}

/* The command a mistyped `name` most likely meant: the nearest name or
 * alias at most two edits away (the first in the table on a tie), else
 * the first that `name` begins; NULL when none is near. */
static const char *suggest_command(const char *name) {
  const char *best = NULL;
  unsigned best_d = 3;
  for (size_t i = 0; i < COMMAND_COUNT; i++) {
    const char *names[2] = {commands[i]->name, commands[i]->alias};
    for (int k = 0; k < 2 && names[k]; k++) {
      unsigned d = distance(name, names[k]);
      if (d < best_d) {
        best_d = d;
        best = commands[i]->name;
      }
    }
  }
  for (size_t i = 0; !best && *name && i < COMMAND_COUNT; i++)
    if (strncmp(commands[i]->name, name, strlen(name)) == 0) best = commands[i]->name;
  return best;
}

/* " Did you mean 'run'?" for a mistyped name, else "" (in out). */
static const char *did_you_mean(const char *name, char *out, size_t size) {
  const char *near = suggest_command(name);
  if (near) snprintf(out, size, " Did you mean '%s'?", near);
  else if (size) out[0] = '\0';
  return out;
}

/* ------------------------------------------------------------------ */
/* Help and manual pages                                               */
/* ------------------------------------------------------------------ */

/* The overview's text around the command table: `vyre --help` prints
 * it and `vyre help --man` renders vyre(1) from the same strings. */
static const char overview_synopsis[] = "COMMAND [ARGS]\n--version\n--help";
static const char overview_summary[] = "run and inspect programs on vyre backend plugins";
static const char overview_description[] =
    "Run vyre programs on the best backend plugin found, inspect backends,\n"
    "and convert programs between text (.vyre) and binary (.vyrb).\n";
static const char overview_tail[] =
    "`vyre help COMMAND` or `vyre COMMAND --help` describes one command.\n\n"
    "global options:\n"
    "  (before or after COMMAND)\n"
    "  --color[=WHEN]  ANSI color on error prefixes and PASS/FAIL words: auto (the\n"
    "                  default: when the stream is a terminal, TERM is not dumb\n"
    "                  and NO_COLOR is unset or empty), always, or never\n"
    "  --version       print the versions (as `vyre version`)\n"
    "  --help, -h      print this overview, or one command's help\n\n"
    "conventions:\n"
    "  -               stands for stdin or stdout wherever a file is read or\n"
    "                  written\n"
    "  --json          list, info, run, conform, fuzz and bench print one JSON\n"
    "                  document on stdout; on failure, an error document\n\n"
    "environment:\n"
    "  VYRE_BACKEND_PATH  colon-separated plugin files/directories searched first\n"
    "  VYRE_BACKEND       force a backend id (e.g. reference, cuda)\n"
    "  VYRE_LOG=debug     trace plugin discovery on stderr\n"
    "  NO_COLOR           any non-empty value: no color under --color=auto\n\n"
    "exit status:\n"
    "  0  success\n"
    "  1  the work failed (backend, dispatch, program, file, a mismatch)\n"
    "  2  the command line is wrong\n";

static void print_overview(FILE *f) {
  fprintf(f, "usage: vyre COMMAND [ARGS]\n\n%s\ncommands:\n", overview_description);
  for (size_t i = 0; i < COMMAND_COUNT; i++)
    fprintf(f, "  %-10s %s%s%s%s\n", commands[i]->name, commands[i]->summary,
            commands[i]->alias ? " (also `" : "", commands[i]->alias ? commands[i]->alias : "",
            commands[i]->alias ? "`)" : "");
  fprintf(f, "\n%s", overview_tail);
}

static void print_command_help(FILE *f, const cli_command *cmd) {
  fprintf(f, "usage: vyre %s\n\n%s\n", cmd->synopsis, cmd->summary);
  if (cmd->help && *cmd->help) fprintf(f, "\n%s", cmd->help);
}

/* Write n bytes of text escaped for roff: backslashes, hyphens (so
 * options read as ASCII minus), quotes, and a control character at the
 * start of a line. */
static void roff_escape(FILE *f, const char *text, size_t n) {
  for (size_t i = 0; i < n; i++) {
    char c = text[i];
    if (i == 0 && (c == '.' || c == '\'')) fputs("\\&", f);
    if (c == '\\') fputs("\\e", f);
    else if (c == '-') fputs("\\-", f);
    else if (c == '\'') fputs("\\(aq", f);
    else if (c == '`') fputs("\\(ga", f);
    else fputc(c, f);
  }
}

/* A help line that names a section: lower-case words and a colon, alone
 * on the line ("options:", "exit status:"). */
static int section_line(const char *line, size_t n) {
  if (n < 2 || line[n - 1] != ':' || line[0] == ' ') return 0;
  for (size_t i = 0; i + 1 < n; i++)
    if (!((line[i] >= 'a' && line[i] <= 'z') || line[i] == ' ')) return 0;
  return 1;
}

/* Help text as man sections: each "name:" line starts a section (.SH
 * NAME); the lines in between keep their layout (no fill), so the page
 * reads line for line as --help does.  `first` names the section of the
 * lines before any header (NULL: they need none). */
static void roff_text(FILE *f, const char *text, const char *first) {
  int open = 0, blanks = 0;
  if (first) fprintf(f, ".SH %s\n", first);
  for (const char *p = text; *p;) {
    const char *nl = strchr(p, '\n');
    size_t n = nl ? (size_t)(nl - p) : strlen(p);
    if (n == 0) {
      blanks++; /* written before the next line of text, not before a header */
    } else if (section_line(p, n)) {
      if (open) fputs(".fi\n", f);
      open = blanks = 0;
      fputs(".SH ", f);
      for (size_t i = 0; i + 1 < n; i++)
        fputc(p[i] >= 'a' && p[i] <= 'z' ? p[i] - 'a' + 'A' : p[i], f);
      fputc('\n', f);
    } else {
      if (!open) fputs(".nf\n", f);
      if (open)
        for (; blanks > 0; blanks--) fputs(".sp\n", f);
      open = 1;
      blanks = 0;
      roff_escape(f, p, n);
      fputc('\n', f);
    }
    p += n + (nl != NULL);
  }
  if (open) fputs(".fi\n", f);
}

static void roff_header(FILE *f, const char *page, const char *summary) {
  fputs(".\\\" Generated by `vyre help --man` from the text of `vyre --help`; do not edit.\n", f);
  fputs(".TH ", f);
  for (const char *p = page; *p; p++) {
    if (*p == '-') fputs("\\-", f);
    else fputc(*p >= 'a' && *p <= 'z' ? *p - 'a' + 'A' : *p, f);
  }
  /* No hyphenation and a ragged right margin: words read as in --help. */
  fprintf(f, " 1 \"\" \"vyre %s\" \"vyre manual\"\n.nh\n.ad l\n.SH NAME\n", PACKAGE_VERSION);
  roff_escape(f, page, strlen(page));
  fputs(" \\- ", f);
  roff_escape(f, summary, strlen(summary));
  fputc('\n', f);
}

/* A synopsis: "vyre " before its first line, or (each_line) before every
 * line; continuation lines keep their indentation. */
static void roff_synopsis(FILE *f, const char *synopsis, int each_line) {
  fputs(".SH SYNOPSIS\n.nf\n", f);
  int first = 1;
  for (const char *p = synopsis; *p;) {
    const char *nl = strchr(p, '\n');
    size_t n = nl ? (size_t)(nl - p) : strlen(p);
    if (first || each_line) fputs("vyre ", f);
    first = 0;
    roff_escape(f, p, n);
    fputc('\n', f);
    p += n + (nl != NULL);
  }
  fputs(".fi\n", f);
}

static void print_man_overview(FILE *f) {
  roff_header(f, "vyre", overview_summary);
  roff_synopsis(f, overview_synopsis, 1);
  roff_text(f, overview_description, "DESCRIPTION");
  fputs(".SH COMMANDS\n", f);
  for (size_t i = 0; i < COMMAND_COUNT; i++) {
    fputs(".TP\n.BR vyre\\-", f);
    roff_escape(f, commands[i]->name, strlen(commands[i]->name));
    fputs(" (1)\n", f);
    roff_escape(f, commands[i]->summary, strlen(commands[i]->summary));
    if (commands[i]->alias) {
      fputs(" (also \\(ga", f);
      roff_escape(f, commands[i]->alias, strlen(commands[i]->alias));
      fputs("\\(ga)", f);
    }
    fputc('\n', f);
  }
  fputs(".PP\n", f);
  roff_text(f, overview_tail, NULL);
  fputs(".SH SEE ALSO\n", f);
  for (size_t i = 0; i < COMMAND_COUNT; i++)
    fprintf(f, ".BR vyre\\-%s (1)%s\n", commands[i]->name, i + 1 < COMMAND_COUNT ? "," : "");
  fputs(".PP\nThe full reference: docs/cli.md (installed under share/doc/vyre).\n", f);
}

static void print_man_command(FILE *f, const cli_command *cmd) {
  char page[64];
  snprintf(page, sizeof page, "vyre-%s", cmd->name);
  roff_header(f, page, cmd->summary);
  roff_synopsis(f, cmd->synopsis, 0);
  roff_text(f, cmd->help ? cmd->help : "", "DESCRIPTION");
  fputs(".SH SEE ALSO\n.BR vyre (1)\n.PP\nThe full reference: docs/cli.md (installed under "
        "share/doc/vyre).\n", f);
}

static int run_help(const cli_command *self, int argc, char **argv) {
  int man = 0;
  const char *name = NULL;
  for (int i = 1; i < argc; i++) {
    if (strcmp(argv[i], "--man") == 0) man = 1;
    else if (argv[i][0] == '-' && argv[i][1]) return cli_usage(self, "unknown option '%s'", argv[i]);
    else if (name) return cli_usage(self, "takes at most one command name, got '%s' and '%s'",
                                    name, argv[i]);
    else name = argv[i];
  }
  const cli_command *cmd = name ? find_command(name) : NULL;
  char hint[64];
  if (name && !cmd)
    return cli_usage(self, "unknown command '%s'.%s Fix: `vyre help` lists the commands", name,
                     did_you_mean(name, hint, sizeof hint));
  if (man && cmd) print_man_command(stdout, cmd);
  else if (man) print_man_overview(stdout);
  else if (cmd) print_command_help(stdout, cmd);
  else print_overview(stdout);
  return CLI_OK;
}

static const cli_command cli_cmd_help = {
    "help", "help [--man] [COMMAND]", "describe the commands, or one command",
    "Without COMMAND, the overview (as `vyre --help`); with it, that command's\n"
    "help (as `vyre COMMAND --help`).\n\n"
    "options:\n"
    "  --man        the same text as a manual page (roff): vyre(1), or\n"
    "               vyre-COMMAND(1); `make` builds the installed pages this way\n\n"
    "exit status:\n"
    "  0  the help was printed\n"
    "  2  an unknown command or option\n",
    run_help, NULL};

/* ------------------------------------------------------------------ */
/* Versions                                                            */
/* ------------------------------------------------------------------ */

static int run_version(const cli_command *self, int argc, char **argv) {
  (void)argv;
  if (argc > 1) return cli_usage(self, "takes no arguments, got '%s'", argv[1]);
  uint32_t lib_major = 0, lib_minor = 0, host_major = 0, host_minor = 0;
  const char *lib = vyre_version(&lib_major, &lib_minor);
  const char *host = vyre_host_version(&host_major, &host_minor);
  printf("vyre %s (host ABI %u.%u)\n", PACKAGE_VERSION, VYRE_ABI_MAJOR, VYRE_ABI_MINOR);
  printf("libvyre %s (ABI %u.%u)\n", lib ? lib : "unknown", lib_major, lib_minor);
  printf("libvyre-host %s (ABI %u.%u)\n", host ? host : "unknown", host_major, host_minor);
  return CLI_OK;
}

static const cli_command cli_cmd_version = {
    "version", "version", "print the versions of vyre, its ABI and the libraries it runs with",
    "Three lines: this vyre's release and the backend ABI it was built for\n"
    "(\"vyre 1.0.0 (host ABI 1.1)\"), then the release and ABI of the libvyre and\n"
    "libvyre-host it runs with (they may be newer than the headers it was built\n"
    "with).  `vyre --version` prints the same.\n\n"
    "exit status:\n"
    "  0  the versions were printed\n"
    "  2  an argument was given\n",
    run_version, NULL};

/* ------------------------------------------------------------------ */
/* main                                                                */
/* ------------------------------------------------------------------ */

/* Every command's output must reach stdout: a write that failed (a full
 * disk, /dev/full, a closed pipe) is reported and fails the command, so
 * `vyre list > FILE` never leaves a silently truncated FILE. */
static int finish_stdout(const char *name, int rc) {
  int failed_before = ferror(stdout);
  errno = 0;
  int flush_failed = fflush(stdout) != 0;
  int err = errno;
  if (fclose(stdout) != 0 && !flush_failed) {
    flush_failed = 1;
    err = errno;
  }
  if (!failed_before && !flush_failed) return rc;
  fprintf(stderr, "vyre%s%s: cannot write standard output: %s. Fix: check free space on the "
          "output's disk, or that the pipe's reader is still running\n", *name ? " " : "", name,
          err ? strerror(err) : "a write failed");
  return rc == CLI_OK ? CLI_FAIL : rc;
}

/* The commands whose --json prints its document on stdout. */
static int json_on_stdout(const cli_command *cmd, int argc, char **argv) {
  static const char *const json_commands[] = {"list", "info", "run", "conform", "fuzz", "bench"};
  size_t k = 0;
  while (k < sizeof json_commands / sizeof json_commands[0] && strcmp(json_commands[k], cmd->name))
    k++;
  if (k == sizeof json_commands / sizeof json_commands[0]) return 0;
  int conform = strcmp(cmd->name, "conform") == 0;
  for (int i = 2; i < argc; i++) {
    if (strcmp(argv[i], "--") == 0) break;
    if (strcmp(argv[i], "--json=-") == 0) return 1;
    if (strcmp(argv[i], "--json") != 0) continue;
    /* conform: `--json FILE` writes the report to FILE; alone, or with
     * "-", to stdout (conform.c). */
    if (!conform || i + 1 >= argc || argv[i + 1][0] == '-') return 1;
  }
  return 0;
}

static int run_main(int argc, char **argv) {
  if (argc < 2) {
    print_overview(stderr);
    return CLI_USAGE;
  }
  const char *name = argv[1];
  if (strcmp(name, "--help") == 0 || strcmp(name, "-h") == 0) {
    print_overview(stdout);
    return CLI_OK;
  }
  if (strcmp(name, "--version") == 0) return run_version(&cli_cmd_version, argc - 1, argv + 1);
  const cli_command *cmd = find_command(name);
  if (!cmd) {
    char hint[64];
    cli_error_prefix_name("");
    fprintf(stderr, "unknown command '%s'.%s Fix: `vyre help` lists the commands\n", name,
            did_you_mean(name, hint, sizeof hint));
    return CLI_USAGE;
  }
  for (int i = 2; i < argc; i++) {
    if (strcmp(argv[i], "--") == 0) break;
    if (strcmp(argv[i], "--help") == 0 || strcmp(argv[i], "-h") == 0) {
      print_command_help(stdout, cmd);
      return CLI_OK;
    }
  }
  int rc = cmd->run(cmd, argc - 1, argv + 1);
  if (rc != CLI_OK && json_on_stdout(cmd, argc, argv) && vyre__json_stdout_documents() == 0)
    cli_error_document(cmd, rc);
  return rc;
}

/*
 * --color, --color=WHEN and --color WHEN (WHEN: auto, always, never) may
 * stand anywhere before "--": they are taken out of argv here, so no
 * command sees them.  Returns the new argc, or -1 after a usage error.
 */
static int take_color_options(int argc, char **argv) {
  int out = 1;
  cli_color_mode mode = CLI_COLOR_AUTO;
  int done = 0;
  for (int i = 1; i < argc; i++) {
    const char *a = argv[i];
    if (!done && strcmp(a, "--") == 0) done = 1;
    if (done || strncmp(a, "--color", 7) != 0 || (a[7] != '\0' && a[7] != '=')) {
      argv[out++] = argv[i];
      continue;
    }
    if (a[7] == '=') {
      if (cli_color_parse(a + 8, &mode) != 0) {
        cli_error_prefix_name("");
        fprintf(stderr, "--color '%s' is not auto, always or never. Fix: --color=auto, "
                "--color=always or --color=never\n", a + 8);
        return -1;
      }
    } else if (i + 1 < argc && cli_color_parse(argv[i + 1], &mode) == 0) {
      i++;
    } else {
      mode = CLI_COLOR_ALWAYS;
    }
  }
  argv[out] = NULL;
  cli_color_set_mode(mode);
  return out;
}

int main(int argc, char **argv) {
  argc = take_color_options(argc, argv);
  if (argc < 0) return finish_stdout("", CLI_USAGE);
  int rc = run_main(argc, argv);
  const cli_command *cmd = argc >= 2 ? find_command(argv[1]) : NULL;
  return finish_stdout(cmd ? cmd->name : "", rc);
}
