/* term.h -- what the `vyre` command does for a terminal: color (--color, NO_COLOR) and the live progress line. */
#ifndef VYRE_CLI_TERM_H
#define VYRE_CLI_TERM_H

#include <stddef.h>
#include <stdio.h>

/* --color=WHEN (docs/cli.md, "Color"). */
typedef enum cli_color_mode {
  CLI_COLOR_AUTO = 0, /* color when the stream is a terminal, TERM is not "dumb" and NO_COLOR is unset or empty */
  CLI_COLOR_ALWAYS,
  CLI_COLOR_NEVER
} cli_color_mode;

/* "auto", "always" or "never" -> *mode; 0, or -1 for another word. */
int cli_color_parse(const char *text, cli_color_mode *mode);
/* Set the process-wide mode (main does, from --color). */
void cli_color_set_mode(cli_color_mode mode);
/* Whether text written to f gets ANSI colors. */
int cli_color_on(FILE *f);

/* text made safe to print (abi/support/safetext.h, one line: control
 * bytes, escape sequences and malformed UTF-8 become '?') in buf of
 * `size` bytes, reading at most size - 1 bytes of text (an array without
 * a NUL of that size is read whole, never past); returns buf.  For what plugins, case files and file
 * names give: `vyre list`'s paths and reasons, device and metric names. */
const char *cli_safe(char *buf, size_t size, const char *text);

/* SGR sequences for cli_paint. */
#define CLI_SGR_ERROR "1;31"
#define CLI_SGR_WARN "1;33"
#define CLI_SGR_PASS "32"
#define CLI_SGR_FAIL "1;31"

/* Write text to f, wrapped in the SGR sequence `sgr` when cli_color_on(f). */
void cli_paint(FILE *f, const char *sgr, const char *text);

/*
 * The live progress line of long runs (conform, fuzz, bench): on stderr,
 * and only when stderr is a terminal.  Each update rewrites the line in
 * place (carriage return, the text, blanks over what is left of a longer
 * earlier text); clearing blanks it and puts the cursor back at column 0,
 * so whatever is written next starts on a clean line.  Writes no escape
 * sequence, so it works on any terminal.
 */
typedef struct cli_progress {
  int on;       /* stderr is a terminal */
  size_t shown; /* columns of the text on screen now; 0 = none */
} cli_progress;

void cli_progress_init(cli_progress *p);
/* Show text (a single line; longer ones are cut at 200 bytes); NULL clears. */
void cli_progress_show(cli_progress *p, const char *text);
/* The same, as a callback for the harnesses: ctx is a cli_progress. */
void cli_progress_callback(void *ctx, const char *text);

#endif /* VYRE_CLI_TERM_H */
