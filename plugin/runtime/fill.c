/* fill.c -- finding fill programs (one store of a constant at gid.x) by their instructions (fill.h). */
#include "fill.h"

#include <string.h>

/* What the scan knows of each instruction it accepted. */
enum { V_NONE, V_GID, V_CONST, V_BUFLEN, V_GE, V_LT };

typedef struct scan {
  const vyre_program *p;
  uint8_t *kind;       /* per instruction */
  uint32_t limit;      /* guards so far */
  uint64_t limit_buffers;
  uint32_t block_limit; /* the open `if (gid < X)` block's, UINT32_MAX none */
  uint64_t block_buffers;
  int in_block, stored;
  vc_fill *out;
} scan;

/* Narrow the limit by compare c (V_GE or V_LT of gid against X). */
static void bound_of(const scan *S, uint32_t c, uint32_t *limit, uint64_t *buffers) {
  const vyre_inst *x = &S->p->insts[S->p->insts[c].b];
  if (S->kind[S->p->insts[c].b] == V_CONST) {
    if (x->a < *limit) *limit = x->a;
  } else {
    *buffers |= 1ull << x->a;
  }
}

/* The store's constant, as the words it writes; 0 when not exact. */
static int pattern_of(scan *S, const vyre_inst *st) {
  const vyre_program *p = S->p;
  const vyre_inst *c = &p->insts[st->c];
  uint32_t vt = p->value_type[st->c], et = p->buffers[st->a].decl.elem_type;
  int int32 = vt == VYRE_T_U32 || vt == VYRE_T_I32, int64 = vt == VYRE_T_U64 || vt == VYRE_T_I64;
  vc_fill *f = S->out;
  f->words_per_elem = 1;
  switch (et) {
  case VYRE_T_U8:
  case VYRE_T_I8:
    f->unit = 1;
    f->pattern = c->a & 0xffu;
    return int32;
  case VYRE_T_U16:
  case VYRE_T_I16:
    f->unit = 2;
    f->pattern = c->a & 0xffffu;
    return int32;
  case VYRE_T_U32:
  case VYRE_T_I32:
    f->unit = 4;
    f->pattern = c->a;
    return int32;
  case VYRE_T_F32:
    f->unit = 4;
    f->pattern = c->a;
    return vt == VYRE_T_F32;
  case VYRE_T_BOOL:
    f->unit = 4;
    f->pattern = c->a != 0;
    return vt == VYRE_T_BOOL;
  case VYRE_T_U64:
  case VYRE_T_I64:
    f->unit = 4;
    f->words_per_elem = 2;
    f->pattern = c->a;
    return int64 && c->a == c->b;
  default:
    return 0; /* f16, bf16: the store rounds */
  }
}

/* A `gid >= X` or `gid < X` compare, X a u32 constant or a buflen. */
static int guard_compare(const scan *S, const vyre_inst *in) {
  return S->kind[in->a] == V_GID && S->p->value_type[in->b] == VYRE_T_U32 &&
         (S->kind[in->b] == V_CONST || S->kind[in->b] == V_BUFLEN);
}

/* Accept instruction i (and, for an early exit, the two after it):
 * the number consumed, 0 when the program is not a fill. */
static uint32_t step(scan *S, uint32_t i) {
  const vyre_program *p = S->p;
  const vyre_inst *in = &p->insts[i];
  switch (in->op) {
  case VYRE_OP_INVOCATION_ID:
    if (in->mod != 0) return 0;
    S->kind[i] = V_GID;
    return 1;
  case VYRE_OP_CONST:
    S->kind[i] = V_CONST;
    return 1;
  case VYRE_OP_BUF_LEN:
    S->kind[i] = V_BUFLEN;
    return 1;
  case VYRE_OP_GE:
  case VYRE_OP_LT:
    if (!guard_compare(S, in)) return 0;
    S->kind[i] = in->op == VYRE_OP_GE ? V_GE : V_LT;
    return 1;
  case VYRE_OP_IF:
    if (S->kind[in->a] == V_GE && i + 2 < p->inst_count && p->insts[i + 1].op == VYRE_OP_RETURN &&
        p->insts[i + 2].op == VYRE_OP_END && !S->in_block) {
      bound_of(S, in->a, &S->limit, &S->limit_buffers);
      return 3;
    }
    if (S->kind[in->a] != V_LT || S->in_block) return 0;
    S->in_block = 1;
    S->block_limit = UINT32_MAX;
    S->block_buffers = 0;
    bound_of(S, in->a, &S->block_limit, &S->block_buffers);
    return 1;
  case VYRE_OP_END:
    if (!S->in_block) return 0;
    S->in_block = 0;
    return 1;
  case VYRE_OP_STORE: {
    const vyre_buffer_info *b = &p->buffers[in->a];
    if (S->stored || S->kind[in->b] != V_GID || S->kind[in->c] != V_CONST ||
        b->kernel_index == UINT32_MAX || b->decl.access == VYRE_ACCESS_READ_ONLY ||
        !pattern_of(S, in))
      return 0;
    S->stored = 1;
    S->out->buffer = in->a;
    S->out->kernel_index = b->kernel_index;
    S->out->limit = S->limit;
    S->out->limit_buffers = S->limit_buffers;
    if (S->in_block) {
      if (S->block_limit < S->out->limit) S->out->limit = S->block_limit;
      S->out->limit_buffers |= S->block_buffers;
    }
    return 1;
  }
  default:
    return 0; /* loads, atomics, loops, barriers, traps, arithmetic... */
  }
}

void vc_fill_detect(const vyre_program *program, int elementwise, vc_fill *out) {
  memset(out, 0, sizeof *out);
  if (!program->inst_count || program->inst_count > 64 ||
      program->buffer_count > 64)
    return;
  uint8_t kind[64] = {0};
  scan S = {program, kind, UINT32_MAX, 0, UINT32_MAX, 0, 0, 0, out};
  for (uint32_t i = 0; i < program->inst_count;) {
    uint32_t used = step(&S, i);
    if (!used) {
      memset(out, 0, sizeof *out);
      return;
    }
    i += used;
  }
  if (!S.stored || S.in_block) {
    memset(out, 0, sizeof *out);
    return;
  }
  out->is_fill = 1;
  out->elementwise = elementwise != 0;
}

uint64_t vc_fill_words(const vc_fill *f, const uint32_t *counts, const uint32_t grid[3],
                       const uint32_t block[3]) {
  uint64_t n = counts[1 + f->buffer];
  /* The gids that run: the elementwise path covers the element count,
   * the general one every invocation of the grid along x. */
  uint64_t gids = f->elementwise ? counts[0] : (uint64_t)grid[0] * block[0];
  if (!grid[1] || !grid[2] || !block[1] || !block[2]) gids = 0;
  if (gids < n) n = gids;
  if (f->limit < n) n = f->limit;
  for (uint32_t k = 0; k < 64; k++)
    if ((f->limit_buffers >> k & 1u) && counts[1 + k] < n) n = counts[1 + k];
  return n * f->words_per_elem;
}
