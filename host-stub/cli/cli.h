/* cli.h -- the `vyre` command line: the command table, exit codes and helpers shared by the command files. */
#ifndef VYRE_CLI_H
#define VYRE_CLI_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "vyre/vyre.h"
#include "vyre/vyre_host.h"
#include "vyre/vyre_program.h"

/* Exit codes (docs/host.md, "Exit codes"). */
enum {
  CLI_OK = 0,    /* success */
  CLI_FAIL = 1,  /* the work failed: backend, dispatch, program, file */
  CLI_USAGE = 2  /* the command line is wrong */
};

/*
 * One command.  To add one (`vyre conform`, `vyre fuzz`, `vyre bench`):
 * write host-stub/cli/NAME.c defining `const cli_command
 * cli_cmd_NAME`, declare it below, add it to `commands` in main.c
 * and to host_stub_cli_vyre_SOURCES in host-stub/cli/local.mk.
 */
typedef struct cli_command {
  const char *name;
  const char *synopsis; /* "run PROGRAM [options]" */
  const char *summary;  /* one line for `vyre help` */
  const char *help;     /* the rest of `vyre help NAME`: options, examples */
  /* argv[0] is the command name; --help was handled already. */
  int (*run)(const struct cli_command *self, int argc, char **argv);
  const char *alias; /* another name, or NULL */
} cli_command;

extern const cli_command cli_cmd_list;
extern const cli_command cli_cmd_info;
extern const cli_command cli_cmd_run;
extern const cli_command cli_cmd_asm;
extern const cli_command cli_cmd_disasm;
extern const cli_command cli_cmd_emit_ptx;
extern const cli_command cli_cmd_bench;
extern const cli_command cli_cmd_conform; /* conform.c */
extern const cli_command cli_cmd_fuzz;    /* fuzz.c */

/* Print "vyre CMD: <message>" and a pointer to the help to stderr;
 * returns CLI_USAGE. */
int cli_usage(const cli_command *cmd, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 2, 3)))
#endif
    ;

/* Keep `message` (code: CLI_FAIL or CLI_USAGE) as the run's error
 * when none was kept yet: `--json` prints the first one as the error
 * document (docs/cli.md, "JSON output").  cli_usage and cli_fail call it;
 * a command that prints an error itself calls it too. */
void cli_error_record(int code, const char *message);

/* Print "vyre CMD: " to stderr, in the error color (--color). */
void cli_error_prefix(const cli_command *cmd);
/* The same for a command name ("": "vyre: ", before a command is known). */
void cli_error_prefix_name(const char *name);

/* Print the --json error document of a command that failed with exit
 * code rc to stdout: the first message kept (cli_error_record), with its
 * "Fix:" apart (docs/cli.md, "JSON output"). */
void cli_error_document(const cli_command *cmd, int rc);

/* Print "vyre CMD: <message>" to stderr; returns CLI_FAIL. */
int cli_fail(const cli_command *cmd, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 2, 3)))
#endif
    ;

/*
 * Option scanning.  cli_opt_value matches "--name VALUE" and
 * "--name=VALUE" at argv[*i]; on a match it stores the value, advances *i
 * past what it consumed and returns 1; a missing value is a usage error
 * (returns -1 after printing it).  Returns 0 when argv[*i] is another option.
 */
int cli_opt_value(const cli_command *cmd, int argc, char **argv, int *i, const char *name,
                  const char **value);
/* 1 when argv[i] is exactly the flag `name`. */
int cli_opt_flag(char **argv, int i, const char *name);

/* Parse an unsigned decimal/hex integer in [min, max]; 0 on success. */
int cli_parse_u32(const char *text, uint32_t min, uint32_t max, uint32_t *out);
/* Parse an unsigned decimal/hex integer (any u64); 0 on success.  Both
 * read the text form's unsigned literals: a leading zero is decimal. */
int cli_parse_u64(const char *text, uint64_t *out);
/* Parse "X", "X,Y" or "X,Y,Z" (missing axes = 1), each 1..2^31; 0 on success. */
int cli_parse_dim3(const char *text, uint32_t out[3]);
/* A duration in seconds, decimal ("0.2", "10", "1.5"; at most 9 digits
 * after the point, at most 1000000 s) into nanoseconds; "0" is 0.
 * Returns 0, or -1 for anything else (a sign, an exponent, junk). */
int cli_parse_seconds(const char *text, uint64_t *ns);

/*
 * Read a whole file ("-" = stdin) of at most max bytes into malloc'd
 * memory (*data, freed by the caller; a NUL is appended past *size).  The
 * read stops one byte past max: a longer file (or an endless device) is
 * an error naming the bound, with too_long_fix as its "Fix:".  0 on
 * success; else -1 with a message in err.
 */
int cli_read_file(const char *path, uint64_t max, const char *too_long_fix, void **data,
                  size_t *size, vyre_error *err);
/* The same for a program file: binary (the magic) at most
 * VYRE_PROGRAM_MAX_SIZE bytes, text at most VYRE_TEXT_MAX_SIZE and with
 * no NUL byte (docs/host.md, "Files vyre reads"). */
int cli_read_program_file(const char *path, void **data, size_t *size, vyre_error *err);
/* Write a file ("-" = stdout).  0 on success; else -1 with a message. */
int cli_write_file(const char *path, const void *data, size_t size, vyre_error *err);

/*
 * Load a program file: binary (starts with the "VYRP" magic) or text
 * (assembled).  *bytes receives malloc'd program bytes (free()).  *is_text
 * (may be NULL) says which it was.  The bytes are not validated here.
 */
vyre_status cli_load_program(const char *path, void **bytes, size_t *size, int *is_text,
                             vyre_error *err);

/* Open the host with the default search (environment, build tree,
 * plugin dir). */
vyre_status cli_open_host(vyre_host **host, vyre_error *err);

/* Capability bits as names separated by spaces ("none" when 0). */
void cli_format_caps(uint64_t caps, char *out, size_t size);

/*
 * Devices (devices.c; docs/abi.md, "Devices").  --device takes
 * ordinals 0..CLI_MAX_DEVICES-1.
 */
#define CLI_MAX_DEVICES 1025u
/* How many devices backend `id` has (NULL: the backend vyre_host_create
 * picks): creates it on ordinal 0 and reads the profile's device_count;
 * when that is 0 (not reported), probes ordinals 1, 2, ... until create
 * returns VYRE_NO_DEVICE.  On VYRE_OK *count >= 1 and *index (when
 * non-NULL) is the backend's candidate index; *first (when non-NULL) receives the instance
 * on ordinal 0 (the caller destroys it), else it is destroyed.  Otherwise
 * the failure to create on ordinal 0. */
vyre_status cli_backend_devices(vyre_host *host, const char *id, uint32_t *count,
                                uint32_t *index, vyre_backend **first, vyre_error *err);
/* Parse a --device value: an ordinal, "all" when `all` is non-NULL
 * (*all = 1), or, when `uuid` is non-NULL, a device UUID: the whole
 * "GPU-xxxxxxxx-xxxx-xxxx-xxxx-xxxxxxxxxxxx" or a prefix of it, "GPU-"
 * and dashes optional (a prefix of decimal digits only needs "GPU-",
 * else it is an ordinal); *uuid = text then (else NULL), to be resolved
 * with cli_device_by_uuid once the host is open.  0 on success. */
int cli_parse_devices(const char *text, uint32_t *ordinal, int *all, const char **uuid);
/* The ordinal of the device of backend `id` (NULL: the backend
 * vyre_host_create picks) whose profile's UUID matches `uuid` (from
 * cli_parse_devices): an instance is created on each ordinal (the count
 * as cli_backend_devices) and its profile read.  VYRE_OK with *ordinal;
 * VYRE_NO_DEVICE when no device or several match (the message lists
 * every device's UUID), VYRE_INVALID_ARGUMENT for text that is no UUID,
 * or the failure to create on ordinal 0. */
vyre_status cli_device_by_uuid(vyre_host *host, const char *id, const char *uuid,
                               uint32_t *ordinal, vyre_error *err);

#endif /* VYRE_CLI_H */
