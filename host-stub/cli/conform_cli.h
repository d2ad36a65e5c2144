/* conform_cli.h -- what `vyre conform` and `vyre fuzz` share: opening the host, the reference and the backends under test. */
#ifndef VYRE_CONFORM_CLI_H
#define VYRE_CONFORM_CLI_H

#include "host-stub/conform/conform.h"
#include "vyre/vyre_host.h"
#include "vyre_cli.h"

/* Which backends a command wants. */
typedef struct ccli_select {
  const char *backend; /* --backend ID, or NULL: forced ($VYRE_BACKEND) or best */
  const char *plugin;  /* --plugin FILE: searched first, and the one target */
  int all;             /* every loaded backend */
  int no_target;       /* none (coverage of the whole format, ptxas fuzzing) */
  int need_reference;  /* create the reference instance (the oracle) */
  uint32_t device;
} ccli_select;

/* An open host with the reference and the targets.  Targets that cannot
 * be created here (no device) have backend NULL and a reason. */
typedef struct ccli_session {
  vyre_host *host;
  vyre_backend *reference;
  cf_target *targets;
  uint32_t count;
} ccli_session;

/* Open the host (libvyre-host's default search, --plugin first) and make
 * the instances.  Returns CLI_OK, or an exit status after printing why
 * (call ccli_close either way). */
int ccli_open(const cli_command *cmd, const ccli_select *sel, ccli_session *s);
/* Destroy the instances and close the host.  Accepts a half-open session. */
void ccli_close(ccli_session *s);

/* Where the options that vyre conform and vyre fuzz share are stored. */
typedef struct ccli_common {
  ccli_select *sel;         /* --backend, --plugin, --device */
  const char **capsule_dir; /* --capsules DIR */
  int *minimize;            /* --no-minimize */
  uint32_t *minimize_tries; /* --minimize-tries N */
  int *verbose;             /* --verbose, -v */
} ccli_common;

/*
 * One of the shared options at argv[*i]: 1 when it was one (consumed,
 * *i advanced), 0 when it is another, -1 when its value is wrong (the
 * usage error is printed; exit with CLI_USAGE).
 */
int ccli_common_option(const cli_command *cmd, int argc, char **argv, int *i,
                       const ccli_common *c);

#endif /* VYRE_CONFORM_CLI_H */
