/* util.c -- what the command files share: error reporting (and the --json error document), option scanning, number parsing, file reading and writing, program loading. */
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "abi/support/file.h"
#include "abi/support/safetext.h"
#include "vyre/vyre_support.h"
#include "vyre/vyre_text.h"
#include "abi/support/json.h"
#include "term.h"
#include "cli.h"

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

void cli_error_prefix_name(const char *name) {
  char prefix[96];
  snprintf(prefix, sizeof prefix, "vyre%s%s:", *name ? " " : "", name);
  cli_paint(stderr, CLI_SGR_ERROR, prefix);
  fputc(' ', stderr);
}

void cli_error_prefix(const cli_command *cmd) { cli_error_prefix_name(cmd->name); }

static void report(const cli_command *cmd, int code, const char *fmt, va_list ap) {
  char message[4096];
  vsnprintf(message, sizeof message, fmt, ap);
  /* Messages quote plugins, case files and file names: one sanitiser
   * (abi/support/safetext.h) stands between them and the terminal. */
  vyre__safe_text(message, sizeof message, message, sizeof message, VYRE__SAFE_TEXT);
  cli_error_record(code, message);
  cli_error_prefix_name(cmd->name);
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

/* Counts and sizes: an unsigned literal of the text form (decimal or 0x
 * hex, no sign; a leading zero is decimal, 010 is ten), as a constant
 * of `type` reads it. */
static int parse_unsigned(const char *text, uint32_t type, uint64_t *out) {
  if (!text) return -1;
  return vyre_text_parse_literal(text, strlen(text), type, VYRE_TEXT_LITERAL_CONST, out, NULL) ==
                 VYRE_OK
             ? 0
             : -1;
}

int cli_parse_u32(const char *text, uint32_t min, uint32_t max, uint32_t *out) {
  uint64_t v;
  if (parse_unsigned(text, VYRE_T_U32, &v) != 0 || v < min || v > max) return -1;
  *out = (uint32_t)v;
  return 0;
}

int cli_parse_u64(const char *text, uint64_t *out) { return parse_unsigned(text, VYRE_T_U64, out); }

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

/* A pipe or a device the user named (`--input <(cmd)`, /dev/stdin,
 * /dev/zero): read as a stream, to the bound, where vyre__file_read
 * takes only regular files (docs/cli.md, "Files"). */
static int is_stream(const char *path) {
  struct stat st;
  return stat(path, &st) == 0 && (S_ISFIFO(st.st_mode) || S_ISCHR(st.st_mode));
}

/* Open what cli_read_* reads as a stream: stdin for "-", else the named
 * FIFO or device (blocking: a pipe waits for its writer).  -1 with err. */
static int open_stream(const char *path, const char **name, vyre_error *err) {
  if (strcmp(path, "-") == 0) {
    *name = "<stdin>";
    return STDIN_FILENO;
  }
  *name = path;
  int fd = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY);
  if (fd < 0)
    vyre_error_set(err, VYRE_IO, errno, "cannot open %s: %s. Fix: check the path", path,
                   strerror(errno));
  return fd;
}

int cli_read_file(const char *path, uint64_t max, const char *too_long_fix, void **data,
                  size_t *size, vyre_error *err) {
  *data = NULL;
  *size = 0;
  if (strcmp(path, "-") && !is_stream(path))
    return vyre__file_read(path, max, too_long_fix, data, size, err) == VYRE_OK ? 0 : -1;
  const char *name;
  int fd = open_stream(path, &name, err);
  if (fd < 0) return -1;
  vyre_status st = vyre__file_read_fd(fd, name, max, too_long_fix, data, size, err);
  if (fd != STDIN_FILENO) close(fd);
  return st == VYRE_OK ? 0 : -1;
}

/* Program files: the binary magic chooses the bound (the largest image,
 * else the longest text), and text holds no NUL. */
typedef struct program_bound {
  uint64_t max;
  const char *what, *fix;
} program_bound;

static program_bound bound_of(const char *head, size_t n) {
  uint32_t magic = 0;
  if (n >= 4) memcpy(&magic, head, 4);
  if (magic == VYRE_PROGRAM_MAGIC)
    return (program_bound){VYRE_PROGRAM_MAX_SIZE,
                           ", the largest binary program the format allows (VYRE_PROGRAM_MAX_SIZE)",
                           "pass a program file (docs/program-format.md, \"Size\")"};
  return (program_bound){VYRE_TEXT_MAX_SIZE,
                         ", the longest program text vyre reads (VYRE_TEXT_MAX_SIZE)",
                         "split the program (docs/program-text.md, \"Size\")"};
}

/* Check what was read against its bound; frees *data on failure. */
static int check_program(const char *name, char **data, size_t size, vyre_error *err) {
  program_bound b = bound_of(*data, size);
  const char *nul = b.max == VYRE_TEXT_MAX_SIZE ? memchr(*data, '\0', size) : NULL;
  if (nul)
    vyre_error_set(err, VYRE_INVALID_PROGRAM, 0,
                   "%s is not a program: byte %zu is NUL and it does not start with the binary "
                   "magic \"VYRP\". Fix: pass a text (.vyre) or binary (.vyrb) program",
                   name, (size_t)(nul - *data));
  else if (size > b.max)
    vyre_error_set(err, VYRE_LIMIT, 0, "cannot read %s: it holds more than %llu bytes%s. Fix: %s",
                   name, (unsigned long long)b.max, b.what, b.fix);
  else
    return 0;
  free(*data);
  *data = NULL;
  return -1;
}

/* A stream cannot be read twice: its first 4096 bytes (or all of it)
 * choose the bound and are checked before the rest is read, so that
 * /dev/zero stops at its first NUL. */
static int read_program_stream(int fd, const char *name, void **data, size_t *size,
                               vyre_error *err) {
  char head[4096];
  size_t n = 0;
  while (n < sizeof head) {
    ssize_t got = read(fd, head + n, sizeof head - n);
    if (got < 0 && errno == EINTR) continue;
    if (got < 0) {
      vyre_error_set(err, VYRE_IO, errno, "cannot read %s: %s. Fix: check the file", name,
                     strerror(errno));
      return -1;
    }
    if (got == 0) break;
    n += (size_t)got;
  }
  char *first = malloc(n + 1);
  if (!first) goto fail_oom;
  memcpy(first, head, n);
  first[n] = '\0';
  if (check_program(name, &first, n, err) != 0) return -1;
  program_bound b = bound_of(head, n);
  void *rest = NULL;
  size_t more = 0;
  vyre_status st = n < sizeof head ? VYRE_OK
                                   : vyre__file_read_fd(fd, name, b.max - n, b.fix, &rest, &more,
                                                        err);
  if (st == VYRE_LIMIT) /* the bound is the whole file's, not the rest's */
    vyre_error_set(err, VYRE_LIMIT, 0, "cannot read %s: it holds more than %llu bytes%s. Fix: %s",
                   name, (unsigned long long)b.max, b.what, b.fix);
  if (st != VYRE_OK) {
    free(first);
    return -1;
  }
  char *all = realloc(first, n + more + 1);
  if (!all) {
    free(first);
    free(rest);
    goto fail_oom;
  }
  if (more) memcpy(all + n, rest, more);
  all[n + more] = '\0';
  free(rest);
  if (check_program(name, &all, n + more, err) != 0) return -1;
  *data = all;
  *size = n + more;
  return 0;
fail_oom:
  vyre_error_set(err, VYRE_OUT_OF_MEMORY, ENOMEM, "cannot read %s: out of memory. Fix: free memory",
                 name);
  return -1;
}

int cli_read_program_file(const char *path, void **data, size_t *size, vyre_error *err) {
  *data = NULL;
  *size = 0;
  if (strcmp(path, "-") && !is_stream(path)) {
    /* A regular file: read to the larger bound, then check its own. */
    if (vyre__file_read(path, VYRE_TEXT_MAX_SIZE > VYRE_PROGRAM_MAX_SIZE ? VYRE_TEXT_MAX_SIZE
                                                                         : VYRE_PROGRAM_MAX_SIZE,
                        "pass a program file (docs/program-format.md and docs/program-text.md, "
                        "\"Size\")", data, size, err) != VYRE_OK)
      return -1;
    return check_program(path, (char **)data, *size, err);
  }
  const char *name;
  int fd = open_stream(path, &name, err);
  if (fd < 0) return -1;
  int rc = read_program_stream(fd, name, data, size, err);
  if (fd != STDIN_FILENO) close(fd);
  return rc;
}

/* "-" is stdout; an existing FIFO or device (/dev/null, >(cmd)) is
 * written in place; anything else is replaced atomically, so a failed
 * write never leaves half a file (docs/cli.md, "Files"). */
int cli_write_file(const char *path, const void *data, size_t size, vyre_error *err) {
  if (strcmp(path, "-") && !is_stream(path))
    return vyre__file_write_atomic(path, data, size, 0666, err) == VYRE_OK ? 0 : -1;
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

/* The error document: what failed, with its Fix apart. */
void cli_error_document(const cli_command *cmd, int rc) {
  vyre__json w;
  vyre__json_init(&w, stdout);
  const char *message = first_error.set ? first_error.message
                                        : "the command failed; its standard error says why";
  const char *fix = strstr(message, " Fix: ");
  vyre__json_object_begin(&w);
  vyre__json_key(&w, "error");
  vyre__json_object_begin(&w);
  vyre__json_key(&w, "command");
  vyre__json_string(&w, cmd->name);
  vyre__json_key(&w, "exit_code");
  vyre__json_int(&w, rc);
  vyre__json_key(&w, "kind");
  vyre__json_string(&w, rc == CLI_USAGE ? "usage" : "failure");
  vyre__json_key(&w, "message");
  vyre__json_string_n(&w, message, fix ? (size_t)(fix - message) : strlen(message));
  vyre__json_key(&w, "fix");
  if (fix) vyre__json_string(&w, fix + 6);
  else if (rc == CLI_USAGE) {
    char text[96];
    snprintf(text, sizeof text, "`vyre help %s` shows the usage", cmd->name);
    vyre__json_string(&w, text);
  } else {
    vyre__json_null(&w);
  }
  vyre__json_object_end(&w);
  vyre__json_object_end(&w);
  vyre__json_end(&w);
}
