/* term.c -- color (--color, NO_COLOR, TERM) and the live progress line of the `vyre` command (term.h). */
#include <string.h>
#include <unistd.h>

#include "abi/support/config.h"
#include "abi/support/safetext.h"
#include "term.h"

static cli_color_mode color_mode = CLI_COLOR_AUTO;

int cli_color_parse(const char *text, cli_color_mode *mode) {
  if (strcmp(text, "auto") == 0) *mode = CLI_COLOR_AUTO;
  else if (strcmp(text, "always") == 0) *mode = CLI_COLOR_ALWAYS;
  else if (strcmp(text, "never") == 0) *mode = CLI_COLOR_NEVER;
  else return -1;
  return 0;
}

void cli_color_set_mode(cli_color_mode mode) { color_mode = mode; }

int cli_color_on(FILE *f) {
  if (color_mode == CLI_COLOR_ALWAYS) return 1;
  if (color_mode == CLI_COLOR_NEVER) return 0;
  /* https://no-color.org: any non-empty NO_COLOR turns color off
   * (vyre__env reads an empty variable as unset). */
  if (vyre__env(VYRE__ENV_NO_COLOR)) return 0;
  const char *term = vyre__env(VYRE__ENV_TERM);
  if (term && strcmp(term, "dumb") == 0) return 0;
  return f && isatty(fileno(f));
}

const char *cli_safe(char *buf, size_t size, const char *text) {
  vyre__safe_text(buf, size, text, size ? size - 1 : 0, VYRE__SAFE_LINE);
  return buf;
}

void cli_paint(FILE *f, const char *sgr, const char *text) {
  if (cli_color_on(f)) fprintf(f, "\033[%sm%s\033[0m", sgr, text);
  else fputs(text, f);
}

void cli_progress_init(cli_progress *p) {
  p->on = isatty(STDERR_FILENO);
  p->shown = 0;
}

void cli_progress_show(cli_progress *p, const char *text) {
  if (!p->on) return;
  size_t len = text ? strnlen(text, 200) : 0;
  if (!text && !p->shown) return;
  fputc('\r', stderr);
  if (text) fwrite(text, 1, len, stderr);
  for (size_t i = len; i < p->shown; i++) fputc(' ', stderr);
  if (!text || len < p->shown) fputc('\r', stderr);
  if (text && len < p->shown) fwrite(text, 1, len, stderr);
  p->shown = len;
  fflush(stderr);
}

void cli_progress_callback(void *ctx, const char *text) { cli_progress_show(ctx, text); }
