/* conform.h -- what `vyre conform` and `vyre fuzz` share: opening the host, the reference and the backends under test. */
#ifndef VYRE_CLI_CONFORM_H
#define VYRE_CLI_CONFORM_H

#include "host-stub/conform/conform.h"
#include "vyre/vyre_host.h"
#include "cli.h"

/* Which backends a command wants. */
typedef struct cli_select {
  const char *backend; /* --backend ID, or NULL: forced ($VYRE_BACKEND) or best */
  const char *plugin;  /* --plugin FILE: searched first, and the one target */
  int all;             /* every loaded backend */
  int no_target;       /* none (coverage of the whole format, ptxas fuzzing) */
  int need_reference;  /* create the reference instance (the oracle) */
  uint32_t device;
  const char *device_uuid; /* --device GPU-...: resolved by cli_session_open */
} cli_select;

/* An open host with the reference and the targets.  Targets that cannot
 * be created here (no device) have backend NULL and a reason. */
typedef struct cli_session {
  vyre_host *host;
  vyre_backend *reference;
  cf_target *targets;
  uint32_t count;
  uint32_t device; /* the ordinal --device named (a UUID resolved) */
} cli_session;

/* Open the host (libvyre-host's default search, --plugin first) and make
 * the instances.  Returns CLI_OK, or an exit status after printing why
 * (call cli_session_close either way). */
int cli_session_open(const cli_command *cmd, const cli_select *sel, cli_session *s);
/* Destroy the instances and close the host.  Accepts a half-open session. */
void cli_session_close(cli_session *s);

/* Where the options that vyre conform and vyre fuzz share are stored. */
typedef struct cli_common {
  cli_select *sel;         /* --backend, --plugin, --device */
  const char **capsule_dir; /* --capsules DIR */
  int *minimize;            /* --no-minimize */
  uint32_t *minimize_tries; /* --minimize-tries N */
  int *verbose;             /* --verbose, -v */
} cli_common;

/*
 * One of the shared options at argv[*i]: 1 when it was one (consumed,
 * *i advanced), 0 when it is another, -1 when its value is wrong (the
 * usage error is printed; exit with CLI_USAGE).
 */
int cli_common_option(const cli_command *cmd, int argc, char **argv, int *i,
                      const cli_common *c);

#endif /* VYRE_CLI_CONFORM_H */
