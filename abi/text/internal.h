/* internal.h -- the assembler's state and the steps its files share (abi/text/: lex.c <- operands.c <- directives.c, mma.c <- insts.c <- asm.c); not installed. */
#ifndef VYRE_TEXT_INTERNAL_H
#define VYRE_TEXT_INTERNAL_H

#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include "vyre/vyre_support.h"
#include "abi/support/strbuf.h"

#define NONE UINT32_MAX
#define MAX_TOKENS 16u

typedef struct tok {
  const char *s;
  uint32_t len;
  uint32_t col; /* 1-based byte column */
} tok;

/* A string -> index map over names that point into the source text. */
typedef struct name_entry {
  const char *s;
  uint32_t len;
  uint32_t value;
} name_entry;

typedef struct name_map {
  name_entry *e;
  uint32_t cap, count;
} name_map;

typedef struct value_def {
  uint32_t inst;
  uint32_t block;   /* opener of the defining block, NONE at top level */
  uint32_t segment; /* grid-barrier segment */
  uint32_t line;
} value_def;

enum { LOCAL_DECLARED, LOCAL_LET, LOCAL_COUNTER };

typedef struct local_def {
  uint8_t type, state;
  uint32_t block; /* where its let/loop put it in scope */
  uint32_t line;  /* declaration line */
  uint32_t def_line;
  const char *name;
  uint32_t name_len;
} local_def;

typedef struct buf_def {
  uint8_t access, elem;
  uint32_t line, col;
} buf_def;

typedef struct open_block {
  uint32_t inst;
  uint16_t op;
  uint32_t line, col;
} open_block;

typedef struct assembler {
  const char *file;
  const char *src; /* the whole text, for hints that look ahead */
  size_t src_len, next_line_at;
  vyre_error *err;
  vyre_status status; /* first failure */
  vyre_builder *b;
  uint32_t line;
  tok t[MAX_TOKENS];
  uint32_t nt;

  int have_wg, have_program;
  uint32_t wg_line, wg_col;

  name_map buffer_names;
  buf_def bufs[VYRE_MAX_BUFFERS];
  uint32_t nbuf;

  name_map local_names;
  local_def *locals;
  uint32_t nlocals, local_cap;

  name_map value_names;
  value_def *vals;
  uint32_t nvals, val_cap;

  /* Per instruction: where it came from, its value type, its source
   * name, and (for block openers) whether the block is still open. */
  uint32_t *inst_line, *inst_col;
  uint8_t *inst_type, *open;
  const char **inst_name;
  uint32_t *inst_name_len;
  uint32_t ninst, inst_cap;

  open_block stack[VYRE_MAX_NESTING];
  uint32_t depth;
  uint32_t segment;
  uint32_t binding_max_buffer; /* 1 + the buffer declared @4294967295, or 0 */
  uint32_t *grid_lines; /* line of the grid barrier that ended segment k */
  uint32_t grid_cap;
} assembler;

/* Every function below takes the one assembler of a vyre_text_assemble
 * call; none keeps state of its own, so assembling is thread-safe.  A
 * failing step returns its status after recording the first failure
 * (a->status, a->err) with vyre__asm_fail_at. */

/* ---- lex.c ---- */

/* Record "FILE:LINE:COL: message" (printf format) with status st; returns st. */
vyre_status vyre__asm_fail_at(assembler *a, uint32_t line, uint32_t col, vyre_status st,
                              const char *fmt, ...) VYRE_PRINTF(5, 6);

/* Fail at token tk's column of the current line (VYRE_INVALID_PROGRAM). */
#define FAIL(tk, ...) vyre__asm_fail_at(a, a->line, (tk)->col, VYRE_INVALID_PROGRAM, __VA_ARGS__)

/* The out-of-memory failure (VYRE_OUT_OF_MEMORY, with a Fix). */
vyre_status vyre__asm_oom(assembler *a);

/* Token t as it may be quoted in a message (printable, at most 48
 * characters), written into out; returns out. */
const char *vyre__asm_show(const tok *t, char out[64]);

/* The value of name s[0..len) in m into *value: 1, or 0 when absent. */
int vyre__asm_map_find(const name_map *m, const char *s, uint32_t len, uint32_t *value);

/* Insert or overwrite name s[0..len) (borrowed: it points into the
 * source text); 0, or -1 when out of memory. */
int vyre__asm_map_put(name_map *m, const char *s, uint32_t len, uint32_t value);

/* Whether t is an identifier ([A-Za-z_][A-Za-z0-9_]*); whether t is w. */
int vyre__asm_is_ident(const tok *t);
int vyre__asm_is_word(const tok *t, const char *w);

/* Split line s[0..n) into a->t[0..a->nt) (comments dropped). */
vyre_status vyre__asm_lex_line(assembler *a, const char *s, size_t n);

/* Whether t is a value name (% then letters, digits or _). */
int vyre__asm_value_name_ok(const tok *t);

/* The line of a later `NAME =` that defines value token t, or 0. */
uint32_t vyre__asm_later_definition(const assembler *a, const tok *t);

/* ---- operands.c ---- */

/* A %value operand that is visible here: its instruction and type. */
vyre_status vyre__asm_value_ref(assembler *a, const tok *t, uint32_t *inst, uint32_t *type);

/* A declared buffer's name: its index into *idx. */
vyre_status vyre__asm_buffer_ref(assembler *a, const tok *t, uint32_t *idx);

/* A type name into *type: a storage type, or a value type when
 * value_only; a matrix type is refused (vyre__asm_local takes those). */
vyre_status vyre__asm_type_ref(assembler *a, const tok *t, int value_only, uint32_t *type);

/* Declare a local slot named t of `type`; *slot receives it. */
vyre_status vyre__asm_declare_local(assembler *a, const tok *t, uint32_t type, uint32_t *slot);

/* An unsigned decimal or 0x hex number of at most max; `what` names it in the message. */
vyre_status vyre__asm_parse_uint(assembler *a, const tok *t, uint64_t max, const char *what,
                                 uint64_t *out);

/* ---- directives.c: the statement in a->t ---- */
vyre_status vyre__asm_workgroup(assembler *a);
vyre_status vyre__asm_buffer(assembler *a);
vyre_status vyre__asm_local(assembler *a);

/* One instruction line being assembled: the op, its operand tokens, and
 * the fields the class parser fills. */
typedef struct inst_line {
  const tok *op, *arg;
  uint32_t nargs;
  const vyre_op_info *info;
  const char *mn;
  uint32_t mod, type;
  uint32_t f[4];         /* a b c d */
  uint32_t counter_slot; /* LOOP: the counter's local */
} inst_line;

/* ---- mma.c ---- */

/* The operands of an MMA line (mma_fill, mma_load, mma, mma_store; the
 * count and the .row/.col suffix were checked before): x->f and x->type,
 * the component type the locals and the buffer say. */
vyre_status vyre__asm_parse_mma(assembler *a, inst_line *x);

/* ---- insts.c ---- */

/* One instruction line: a->t[first] is the op, `name` the `%v` before
 * `=` or NULL.  Emits the instruction and keeps blocks and names. */
vyre_status vyre__asm_inst(assembler *a, uint32_t first, const tok *name);

#endif /* VYRE_TEXT_INTERNAL_H */
