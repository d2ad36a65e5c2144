/* main.c -- the `vyre` command line: dispatch to commands, help, and the helpers the command files share. */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "config.h"
#include "vyre/vyre_support.h"
#include "vyre/vyre_text.h"
#include "cli_json.h"
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
  if (name && !cmd)
    return cli_usage(self, "unknown command '%s'. Fix: `vyre help` lists the commands", name);
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
    "(\"vyre 0.1.0 (host ABI 1.1)\"), then the release and ABI of the libvyre and\n"
    "libvyre-host it runs with (they may be newer than the headers it was built\n"
    "with).  `vyre --version` prints the same.\n\n"
    "exit status:\n"
    "  0  the versions were printed\n"
    "  2  an argument was given\n",
    run_version, NULL};

/* ------------------------------------------------------------------ */
/* Shared helpers                                                      */
/* ------------------------------------------------------------------ */

/* The first error of the run, for the error document of --json. */
static struct {
  int set, code;
  char message[4096];
} first_error;

void cli_error_record(int code, const char *message) {
  if (first_error.set) return;
  first_error.set = 1;
  first_error.code = code;
  snprintf(first_error.message, sizeof first_error.message, "%s", message);
}

/* "vyre CMD: " on stderr, in the error color. */
static void error_prefix(const char *name) {
  char prefix[96];
  snprintf(prefix, sizeof prefix, "vyre%s%s:", *name ? " " : "", name);
  cli_paint(stderr, CLI_SGR_ERROR, prefix);
  fputc(' ', stderr);
}

void cli_error_prefix(const cli_command *cmd) { error_prefix(cmd->name); }

static void report(const cli_command *cmd, int code, const char *fmt, va_list ap) {
  char message[4096];
  vsnprintf(message, sizeof message, fmt, ap);
  cli_error_record(code, message);
  error_prefix(cmd->name);
  fputs(message, stderr);
  fputc('\n', stderr);
}

int cli_usage(const cli_command *cmd, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  report(cmd, CLI_USAGE, fmt, ap);
  va_end(ap);
  fprintf(stderr, "`vyre help %s` shows the usage.\n", cmd->name);
  return CLI_USAGE;
}

int cli_fail(const cli_command *cmd, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  report(cmd, CLI_FAIL, fmt, ap);
  va_end(ap);
  return CLI_FAIL;
}

int cli_opt_flag(char **argv, int i, const char *name) { return strcmp(argv[i], name) == 0; }

int cli_opt_value(const cli_command *cmd, int argc, char **argv, int *i, const char *name,
                  const char **value) {
  const char *arg = argv[*i];
  size_t n = strlen(name);
  if (strncmp(arg, name, n) != 0) return 0;
  if (arg[n] == '=') {
    *value = arg + n + 1;
    *i += 1;
    return 1;
  }
  if (arg[n] != '\0') return 0;
  if (*i + 1 >= argc) {
    cli_usage(cmd, "option %s needs a value", name);
    return -1;
  }
  *value = argv[*i + 1];
  *i += 2;
  return 1;
}

int cli_parse_u32(const char *text, uint32_t min, uint32_t max, uint32_t *out) {
  if (!text || !*text || *text == '-' || *text == '+') return -1;
  char *end = NULL;
  errno = 0;
  unsigned long long v = strtoull(text, &end, 0);
  if (errno || *end || v < min || v > max) return -1;
  *out = (uint32_t)v;
  return 0;
}

int cli_parse_bytes(const char *text, uint64_t min, uint64_t max, uint64_t *out) {
  if (!text || !*text || *text == '-' || *text == '+') return -1;
  char *end = NULL;
  errno = 0;
  unsigned long long v = strtoull(text, &end, 10);
  if (errno || end == text) return -1;
  unsigned shift = 0;
  if (*end) {
    const char *units = "KMGT";
    const char *u = strchr(units, *end);
    if (!u || end[1] != '\0') return -1;
    shift = 10u * (unsigned)(u - units + 1);
  }
  if (v > (max >> shift)) return -1;
  v <<= shift;
  if (v < min) return -1;
  *out = v;
  return 0;
}

int cli_parse_seconds(const char *text, uint64_t *ns) {
  if (!text || !*text) return -1;
  uint64_t whole = 0, frac = 0, scale = 1000000000u;
  const char *p = text;
  int digits = 0;
  for (; *p >= '0' && *p <= '9'; p++, digits++) {
    whole = whole * 10u + (uint64_t)(*p - '0');
    if (whole > 1000000u) return -1;
  }
  if (*p == '.') {
    p++;
    for (; *p >= '0' && *p <= '9'; p++, digits++) {
      if (scale == 1) return -1; /* finer than a nanosecond */
      scale /= 10u;
      frac += (uint64_t)(*p - '0') * scale;
    }
  }
  if (*p || !digits) return -1;
  uint64_t v = whole * 1000000000u + frac;
  if (v > 1000000ull * 1000000000u) return -1;
  *ns = v;
  return 0;
}

int cli_parse_dim3(const char *text, uint32_t out[3]) {
  out[0] = out[1] = out[2] = 1;
  char buf[96];
  if (!text || strlen(text) >= sizeof buf) return -1;
  strcpy(buf, text);
  char *save = NULL;
  int axis = 0;
  for (char *part = strtok_r(buf, ",", &save); part; part = strtok_r(NULL, ",", &save)) {
    if (axis == 3 || cli_parse_u32(part, 1, 1u << 31, &out[axis]) != 0) return -1;
    axis++;
  }
  /* strtok_r skips empty fields: "4,,2" must not pass as "4,2". */
  if (axis == 0 || strstr(text, ",,") || text[0] == ',' || text[strlen(text) - 1] == ',')
    return -1;
  return 0;
}

/* Read f (named `path`) to its end, or until more than max bytes: the
 * read stops one byte past the bound, so an endless device ends.  With
 * `program`, the first bytes choose the bound (the binary magic: the
 * largest image; otherwise the longest text) and text stops at a NUL. */
static int read_bounded(FILE *f, const char *path, uint64_t max, int program,
                        const char *too_long_fix, void **data, size_t *size, vyre_error *err) {
  size_t cap = 4096, used = 0;
  char *buf = malloc(cap + 1);
  int is_text = 0;
  const char *what = "";
  if (!buf) goto fail_oom;
  for (;;) {
    size_t want = cap - used;
    if (used + want > max + 1) want = (size_t)(max + 1 - used);
    size_t got = fread(buf + used, 1, want, f);
    if (program && used == 0) {
      /* The first read holds 4096 bytes, or the whole file. */
      uint32_t magic = 0;
      if (got >= 4) memcpy(&magic, buf, 4);
      if (magic == VYRE_PROGRAM_MAGIC) {
        max = VYRE_PROGRAM_MAX_SIZE;
        what = ", the largest binary program the format allows (VYRE_PROGRAM_MAX_SIZE)";
        too_long_fix = "pass a program file (docs/program-format.md, \"Size\")";
      } else {
        is_text = 1;
        max = VYRE_TEXT_MAX_SIZE;
        what = ", the longest program text vyre reads (VYRE_TEXT_MAX_SIZE)";
        too_long_fix = "split the program (docs/program-text.md, \"Size\")";
      }
    }
    if (is_text) {
      const char *nul = memchr(buf + used, '\0', got);
      if (nul) {
        vyre_error_set(err, VYRE_INVALID_PROGRAM, 0,
                       "%s is not a program: byte %zu is NUL and it does not start with the "
                       "binary magic \"VYRP\". Fix: pass a text (.vyre) or binary (.vyrb) program",
                       path, (size_t)(nul - buf));
        free(buf);
        return -1;
      }
    }
    used += got;
    if (used > max) {
      vyre_error_set(err, VYRE_LIMIT, 0, "cannot read %s: it holds more than %llu bytes%s. Fix: %s",
                     path, (unsigned long long)max, what, too_long_fix);
      free(buf);
      return -1;
    }
    if (got < want) break;
    if (used < cap) continue;
    char *grown = realloc(buf, cap * 2 + 1);
    if (!grown) goto fail_oom;
    buf = grown;
    cap *= 2;
  }
  if (ferror(f)) {
    vyre_error_set(err, VYRE_IO, errno, "cannot read %s: %s. Fix: check the file", path,
                   strerror(errno));
    free(buf);
    return -1;
  }
  buf[used] = '\0';
  *data = buf;
  *size = used;
  return 0;
fail_oom:
  free(buf);
  vyre_error_set(err, VYRE_OUT_OF_MEMORY, ENOMEM, "reading %s: out of memory. Fix: free memory",
                 path);
  return -1;
}

static int read_file(const char *path, uint64_t max, int program, const char *too_long_fix,
                     void **data, size_t *size, vyre_error *err) {
  *data = NULL;
  *size = 0;
  int is_stdin = strcmp(path, "-") == 0;
  FILE *f = is_stdin ? stdin : fopen(path, "rb");
  if (!f) {
    vyre_error_set(err, VYRE_IO, errno, "cannot open %s: %s. Fix: check the path", path,
                   strerror(errno));
    return -1;
  }
  int rc = read_bounded(f, is_stdin ? "<stdin>" : path, max, program, too_long_fix, data, size,
                        err);
  if (!is_stdin) fclose(f);
  return rc;
}

int cli_read_file(const char *path, uint64_t max, const char *too_long_fix, void **data,
                  size_t *size, vyre_error *err) {
  return read_file(path, max, 0, too_long_fix, data, size, err);
}

int cli_read_program_file(const char *path, void **data, size_t *size, vyre_error *err) {
  return read_file(path, VYRE_TEXT_MAX_SIZE, 1, "", data, size, err);
}

int cli_write_file(const char *path, const void *data, size_t size, vyre_error *err) {
  int is_stdout = strcmp(path, "-") == 0;
  FILE *f = is_stdout ? stdout : fopen(path, "wb");
  if (!f) {
    vyre_error_set(err, VYRE_IO, errno, "cannot create %s: %s. Fix: check the directory exists "
                   "and is writable", path, strerror(errno));
    return -1;
  }
  size_t put = size ? fwrite(data, 1, size, f) : 0;
  int bad = put != size || fflush(f) != 0;
  if (!is_stdout && fclose(f) != 0) bad = 1;
  if (bad) {
    vyre_error_set(err, VYRE_IO, errno, "cannot write %s: %s. Fix: check free space", path,
                   strerror(errno));
    return -1;
  }
  return 0;
}

vyre_status cli_load_program(const char *path, void **bytes, size_t *size, int *is_text,
                             vyre_error *err) {
  void *data = NULL;
  size_t n = 0;
  *bytes = NULL;
  *size = 0;
  if (cli_read_program_file(path, &data, &n, err) != 0) return (vyre_status)err->status;
  uint32_t magic = 0;
  if (n >= 4) memcpy(&magic, data, 4);
  if (magic == VYRE_PROGRAM_MAGIC) {
    if (is_text) *is_text = 0;
    *bytes = data;
    *size = n;
    return VYRE_OK;
  }
  if (is_text) *is_text = 1;
  vyre_status st = vyre_text_assemble(data, n, strcmp(path, "-") ? path : "<stdin>", bytes, size,
                                      err);
  free(data);
  return st;
}

vyre_status cli_open_host(vyre_host **host, vyre_error *err) {
  return vyre_host_open(NULL, host, err);
}

void cli_format_caps(uint64_t caps, char *out, size_t size) {
  size_t used = 0;
  out[0] = '\0';
  for (uint32_t bit = 0; bit < 64; bit++) {
    if (!(caps & (1ull << bit))) continue;
    const char *name = vyre_host_capability_name(bit);
    char unknown[16];
    if (!name) {
      snprintf(unknown, sizeof unknown, "bit%u", bit);
      name = unknown;
    }
    int w = snprintf(out + used, size - used, "%s%s", used ? " " : "", name);
    if (w < 0 || (size_t)w >= size - used) break;
    used += (size_t)w;
  }
  if (!used) snprintf(out, size, "none");
}

void cli_json_string(FILE *f, const char *s) {
  if (s) cj_escape(f, s, strlen(s));
  else fputs("null", f);
}

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

/* The error document: what failed, with its Fix apart. */
static void print_error_document(const cli_command *cmd, int rc) {
  cj_writer w;
  cj_init(&w, stdout);
  const char *message = first_error.set ? first_error.message
                                        : "the command failed; its standard error says why";
  const char *fix = strstr(message, " Fix: ");
  cj_object_begin(&w);
  cj_key(&w, "error");
  cj_object_begin(&w);
  cj_key(&w, "command");
  cj_string(&w, cmd->name);
  cj_key(&w, "exit_code");
  cj_int(&w, rc);
  cj_key(&w, "kind");
  cj_string(&w, rc == CLI_USAGE ? "usage" : "failure");
  cj_key(&w, "message");
  cj_string_n(&w, message, fix ? (size_t)(fix - message) : strlen(message));
  cj_key(&w, "fix");
  if (fix) cj_string(&w, fix + 6);
  else if (rc == CLI_USAGE) {
    char text[96];
    snprintf(text, sizeof text, "`vyre help %s` shows the usage", cmd->name);
    cj_string(&w, text);
  } else {
    cj_null(&w);
  }
  cj_object_end(&w);
  cj_object_end(&w);
  cj_end(&w);
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
    error_prefix("");
    fprintf(stderr, "unknown command '%s'. Fix: `vyre help` lists the commands\n", name);
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
  if (rc != CLI_OK && json_on_stdout(cmd, argc, argv) && cj_stdout_documents() == 0)
    print_error_document(cmd, rc);
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
        error_prefix("");
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
