/* vyre_cli.c -- the `vyre` command line: dispatch to commands, help, and the helpers the command files share. */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "config.h"
#include "vyre/vyre_support.h"
#include "vyre/vyre_text.h"
#include "vyre_cli.h"

static const cli_command cli_cmd_help;

/* The command table: `vyre help` lists it in this order. */
static const cli_command *const commands[] = {
    &cli_cmd_list, &cli_cmd_info,     &cli_cmd_run,  &cli_cmd_asm,
    &cli_cmd_disasm, &cli_cmd_emit_ptx, &cli_cmd_bench, &cli_cmd_conform, &cli_cmd_fuzz,
    &cli_cmd_help,
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
/* Help                                                                */
/* ------------------------------------------------------------------ */

static void print_overview(FILE *f) {
  fprintf(f, "usage: vyre COMMAND [ARGS]\n\n"
             "Run vyre programs on the best backend plugin found, inspect backends,\n"
             "and convert programs between text (.vyre) and binary (.vyrb).\n\n"
             "commands:\n");
  for (size_t i = 0; i < COMMAND_COUNT; i++)
    fprintf(f, "  %-10s %s%s%s%s\n", commands[i]->name, commands[i]->summary,
            commands[i]->alias ? " (also `" : "", commands[i]->alias ? commands[i]->alias : "",
            commands[i]->alias ? "`)" : "");
  fprintf(f, "\n`vyre help COMMAND` or `vyre COMMAND --help` describes one command.\n\n"
             "environment:\n"
             "  VYRE_BACKEND_PATH  colon-separated plugin files/directories searched first\n"
             "  VYRE_BACKEND       force a backend id (e.g. reference, cuda)\n"
             "  VYRE_LOG=debug     trace plugin discovery on stderr\n\n"
             "exit status: 0 success, 1 the work failed (backend, dispatch, program,\n"
             "file), 2 the command line is wrong.\n");
}

static void print_command_help(FILE *f, const cli_command *cmd) {
  fprintf(f, "usage: vyre %s\n\n%s\n", cmd->synopsis, cmd->summary);
  if (cmd->help && *cmd->help) fprintf(f, "\n%s", cmd->help);
}

static int run_help(const cli_command *self, int argc, char **argv) {
  if (argc < 2) {
    print_overview(stdout);
    return CLI_OK;
  }
  if (argc > 2) return cli_usage(self, "takes at most one command name, got %d words", argc - 1);
  const cli_command *cmd = find_command(argv[1]);
  if (!cmd)
    return cli_usage(self, "unknown command '%s'. Fix: `vyre help` lists the commands", argv[1]);
  print_command_help(stdout, cmd);
  return CLI_OK;
}

static const cli_command cli_cmd_help = {
    "help", "help [COMMAND]", "describe the commands, or one command", "", run_help, NULL};

/* ------------------------------------------------------------------ */
/* Shared helpers                                                      */
/* ------------------------------------------------------------------ */

int cli_usage(const cli_command *cmd, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  fprintf(stderr, "vyre %s: ", cmd->name);
  vfprintf(stderr, fmt, ap);
  va_end(ap);
  fprintf(stderr, "\n`vyre help %s` shows the usage.\n", cmd->name);
  return CLI_USAGE;
}

int cli_fail(const cli_command *cmd, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  fprintf(stderr, "vyre %s: ", cmd->name);
  vfprintf(stderr, fmt, ap);
  va_end(ap);
  fputc('\n', stderr);
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
  fputc('"', f);
  for (const unsigned char *p = (const unsigned char *)s; p && *p; p++) {
    if (*p == '"' || *p == '\\') fprintf(f, "\\%c", *p);
    else if (*p < 0x20) fprintf(f, "\\u%04x", *p);
    else fputc(*p, f);
  }
  fputc('"', f);
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
  if (strcmp(name, "--version") == 0) {
    printf("vyre %s (host ABI %u.%u)\n", PACKAGE_VERSION, VYRE_ABI_MAJOR, VYRE_ABI_MINOR);
    return CLI_OK;
  }
  const cli_command *cmd = find_command(name);
  if (!cmd) {
    fprintf(stderr, "vyre: unknown command '%s'. Fix: `vyre help` lists the commands\n", name);
    return CLI_USAGE;
  }
  for (int i = 2; i < argc; i++) {
    if (strcmp(argv[i], "--") == 0) break;
    if (strcmp(argv[i], "--help") == 0 || strcmp(argv[i], "-h") == 0) {
      print_command_help(stdout, cmd);
      return CLI_OK;
    }
  }
  return cmd->run(cmd, argc - 1, argv + 1);
}

int main(int argc, char **argv) {
  int rc = run_main(argc, argv);
  const cli_command *cmd = argc >= 2 ? find_command(argv[1]) : NULL;
  return finish_stdout(cmd ? cmd->name : "", rc);
}
