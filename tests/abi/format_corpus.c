/* format_corpus.c -- seeded random valid programs and byte mutations for the format and text robustness tests. */
#include "format_corpus.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void corpus_seed(corpus_rng *r, uint64_t seed) {
  r->state = seed * 0x9e3779b97f4a7c15ull + 0x2545f4914f6cdd1dull;
  if (!r->state) r->state = 1;
}

uint64_t corpus_u64(corpus_rng *r) {
  uint64_t x = r->state;
  x ^= x >> 12;
  x ^= x << 25;
  x ^= x >> 27;
  r->state = x;
  return x * 0x2545f4914f6cdd1dull;
}

uint32_t corpus_u32(corpus_rng *r) { return (uint32_t)(corpus_u64(r) >> 32); }

uint32_t corpus_below(corpus_rng *r, uint32_t n) { return (uint32_t)(((uint64_t)corpus_u32(r) * n) >> 32); }

/* ------------------------------------------------------------------ */
/* Random valid programs                                               */
/* ------------------------------------------------------------------ */
#define GEN_MAX_VALUES 512u
#define GEN_MAX_DEPTH 6u

typedef struct gen_buf {
  uint8_t access, elem;
} gen_buf;

typedef struct gen_val {
  uint32_t id;
  uint8_t type, uniform;
} gen_val;

typedef struct gen_local {
  uint8_t type, live, counter;
  uint32_t level; /* nesting depth it was declared at */
} gen_local;

typedef struct gen_block {
  uint16_t op;   /* IF, ELSE, LOOP, BLOCK */
  uint8_t uniform;
  uint8_t sync; /* a loop that holds a barrier or subgroup op */
  uint32_t values_mark;
} gen_block;

typedef struct gen {
  corpus_rng *r;
  vyre_builder *b;
  uint32_t nbuf;
  gen_buf bufs[VYRE_MAX_BUFFERS];
  gen_val vals[GEN_MAX_VALUES];
  uint32_t nvals;
  gen_local *locals;
  uint32_t nlocals, local_cap;
  gen_block blocks[GEN_MAX_DEPTH + 1];
  uint32_t depth;
  int diverged; /* a return/trap in divergent control flow was emitted */
  int oom;
} gen;

static const uint8_t value_types[] = {VYRE_T_BOOL, VYRE_T_U32, VYRE_T_U64,
                                      VYRE_T_I32,  VYRE_T_I64, VYRE_T_F32};

static uint8_t pick_type_in(gen *g, uint32_t mask) {
  uint8_t c[VYRE_T_COUNT_];
  uint32_t n = 0;
  for (uint32_t i = 0; i < sizeof value_types; i++)
    if (mask & VYRE_TBIT(value_types[i])) c[n++] = value_types[i];
  return n ? c[corpus_below(g->r, n)] : VYRE_T_VOID;
}

static int uniform_cf(const gen *g) {
  return !g->diverged && (g->depth == 0 || g->blocks[g->depth - 1].uniform);
}

static void push_value(gen *g, uint32_t id, uint8_t type, int uniform) {
  if (g->nvals < GEN_MAX_VALUES) g->vals[g->nvals++] = (gen_val){id, type, (uint8_t)uniform};
}

static uint32_t random_f32_bits(gen *g) {
  static const uint32_t special[] = {0x00000000u, 0x80000000u, 0x3f800000u, 0xbf800000u,
                                     0x7f800000u, 0xff800000u, 0x7fc00000u, 0x7f7fffffu,
                                     0x00800000u, 0x3dcccccdu, 0x4b800001u, 0x33800000u};
  if (corpus_below(g->r, 3) == 0) return special[corpus_below(g->r, sizeof special / 4)];
  return vyre_f32_canonical_bits(corpus_u32(g->r));
}

static uint64_t random_bits(gen *g, uint8_t type) {
  switch (type) {
  case VYRE_T_BOOL: return corpus_below(g->r, 2);
  case VYRE_T_F32: return random_f32_bits(g);
  case VYRE_T_U64:
  case VYRE_T_I64: return corpus_below(g->r, 2) ? corpus_u64(g->r) : corpus_below(g->r, 100);
  default: return corpus_below(g->r, 2) ? corpus_u32(g->r) : corpus_below(g->r, 100);
  }
}

static uint32_t emit_const(gen *g, uint8_t type) {
  uint32_t id = vyre_b_const(g->b, (vyre_type)type, random_bits(g, type));
  push_value(g, id, type, 1);
  return id;
}

/* A visible value of `type`: an existing one, or a new constant. */
static uint32_t value_of(gen *g, uint8_t type, int *uniform) {
  uint32_t cand[GEN_MAX_VALUES], n = 0;
  for (uint32_t i = 0; i < g->nvals; i++)
    if (g->vals[i].type == type) cand[n++] = i;
  if (n == 0 || corpus_below(g->r, 5) == 0) {
    if (uniform) *uniform = 1;
    return emit_const(g, type);
  }
  const gen_val *v = &g->vals[cand[corpus_below(g->r, n)]];
  if (uniform) *uniform = v->uniform;
  return v->id;
}

static int find_buffer(gen *g, int (*ok)(const gen_buf *), uint32_t *out) {
  uint32_t cand[VYRE_MAX_BUFFERS], n = 0;
  for (uint32_t i = 0; i < g->nbuf; i++)
    if (ok(&g->bufs[i])) cand[n++] = i;
  if (!n) return 0;
  *out = cand[corpus_below(g->r, n)];
  return 1;
}

static int buf_readable(const gen_buf *b) { return b->access != VYRE_ACCESS_WRITE_ONLY; }
static int buf_writable(const gen_buf *b) {
  return b->access != VYRE_ACCESS_READ_ONLY && b->access != VYRE_ACCESS_UNIFORM;
}
static int buf_any(const gen_buf *b) { return b != NULL; }
static int buf_atomic(const gen_buf *b) {
  return (b->access == VYRE_ACCESS_READ_WRITE || b->access == VYRE_ACCESS_WORKGROUP) &&
         (VYRE_TM_INT & VYRE_TBIT(b->elem));
}

static void mark_sync(gen *g) {
  for (uint32_t i = 0; i < g->depth; i++)
    if (g->blocks[i].op == VYRE_OP_LOOP) g->blocks[i].sync = 1;
}

static int loop_has_sync(const gen *g) {
  for (uint32_t i = 0; i < g->depth; i++)
    if (g->blocks[i].op == VYRE_OP_LOOP && g->blocks[i].sync) return 1;
  return 0;
}

static uint32_t new_local(gen *g, uint8_t type, int counter) {
  if (g->nlocals == g->local_cap) {
    uint32_t cap = g->local_cap ? g->local_cap * 2 : 16;
    gen_local *grown = realloc(g->locals, cap * sizeof *grown);
    if (!grown) {
      g->oom = 1;
      return UINT32_MAX;
    }
    g->locals = grown;
    g->local_cap = cap;
  }
  uint32_t slot = vyre_b_local(g->b, (vyre_type)type);
  g->locals[g->nlocals++] = (gen_local){type, 0, (uint8_t)counter, g->depth};
  return slot;
}

static int pick_local(gen *g, int assignable, uint32_t *out) {
  uint32_t n = 0, chosen = 0;
  for (uint32_t i = 0; i < g->nlocals; i++) {
    if (!g->locals[i].live || (assignable && g->locals[i].counter)) continue;
    if (corpus_below(g->r, ++n) == 0) chosen = i; /* reservoir sampling */
  }
  if (!n) return 0;
  *out = chosen;
  return 1;
}

/* One random value instruction of any class the state allows. */
static void emit_value_op(gen *g) {
  uint32_t count;
  const vyre_op_info *all = vyre_op_all(&count);
  const vyre_op_info *op = &all[corpus_below(g->r, count)];
  int ua = 1, ub = 1, uc = 1;
  uint32_t a, b, c, d, id, slot, buf;
  uint8_t t;
  switch ((vyre_op_class)op->op_class) {
  case VYRE_OC_CONST: emit_const(g, pick_type_in(g, VYRE_TM_VALUE)); return;
  case VYRE_OC_LOCAL_GET:
    if (!pick_local(g, 0, &slot)) return;
    push_value(g, vyre_b_get(g->b, slot), g->locals[slot].type, 0);
    return;
  case VYRE_OC_LOAD:
    if (!find_buffer(g, buf_readable, &buf)) return;
    a = value_of(g, VYRE_T_U32, &ua);
    id = vyre_b_load(g->b, buf, a);
    push_value(g, id, (uint8_t)vyre_type_compute(g->bufs[buf].elem),
               ua && (g->bufs[buf].access == VYRE_ACCESS_READ_ONLY ||
                      g->bufs[buf].access == VYRE_ACCESS_UNIFORM));
    return;
  case VYRE_OC_BUF_LEN:
    if (!find_buffer(g, buf_any, &buf)) return;
    push_value(g, vyre_b_buflen(g->b, buf), VYRE_T_U32, 1);
    return;
  case VYRE_OC_BUILTIN: {
    int axis_op = op->id != VYRE_OP_SUBGROUP_LANE && op->id != VYRE_OP_SUBGROUP_SIZE;
    id = vyre_b_builtin(g->b, (vyre_op)op->id, axis_op ? corpus_below(g->r, 3) : 0);
    push_value(g, id, VYRE_T_U32, op->id == VYRE_OP_WORKGROUP_ID || op->id == VYRE_OP_SUBGROUP_SIZE);
    return;
  }
  case VYRE_OC_BINARY:
  case VYRE_OC_COMPARE:
    t = pick_type_in(g, op->type_mask);
    a = value_of(g, t, &ua);
    b = value_of(g, t, &ub);
    id = vyre_b_bin(g->b, (vyre_op)op->id, a, b);
    push_value(g, id, op->op_class == VYRE_OC_COMPARE ? VYRE_T_BOOL : t, ua && ub);
    return;
  case VYRE_OC_UNARY:
  case VYRE_OC_PREDICATE:
    t = pick_type_in(g, op->type_mask);
    a = value_of(g, t, &ua);
    id = vyre_b_un(g->b, (vyre_op)op->id, a);
    push_value(g, id, op->op_class == VYRE_OC_PREDICATE ? VYRE_T_BOOL : t, ua);
    return;
  case VYRE_OC_SELECT:
    t = pick_type_in(g, VYRE_TM_VALUE);
    a = value_of(g, VYRE_T_BOOL, &ua);
    b = value_of(g, t, &ub);
    c = value_of(g, t, &uc);
    push_value(g, vyre_b_select(g->b, a, b, c), t, ua && ub && uc);
    return;
  case VYRE_OC_CAST:
    t = pick_type_in(g, VYRE_TM_VALUE);
    a = value_of(g, pick_type_in(g, VYRE_TM_VALUE), &ua);
    push_value(g, vyre_b_cast(g->b, (vyre_type)t, a), t, ua);
    return;
  case VYRE_OC_FMA:
    a = value_of(g, VYRE_T_F32, &ua);
    b = value_of(g, VYRE_T_F32, &ub);
    c = value_of(g, VYRE_T_F32, &uc);
    push_value(g, vyre_b_fma(g->b, a, b, c), VYRE_T_F32, ua && ub && uc);
    return;
  case VYRE_OC_ATOMIC:
  case VYRE_OC_ATOMIC_CAS:
    if (!find_buffer(g, buf_atomic, &buf)) return;
    t = g->bufs[buf].elem;
    a = value_of(g, VYRE_T_U32, NULL);
    b = value_of(g, t, NULL);
    if (op->op_class == VYRE_OC_ATOMIC) {
      id = vyre_b_atomic(g->b, (vyre_op)op->id, buf, a, b, (vyre_order)corpus_below(g->r, VYRE_ORDER_COUNT_));
    } else {
      d = value_of(g, t, NULL);
      id = vyre_b_cas(g->b, buf, a, b, d, (vyre_order)corpus_below(g->r, VYRE_ORDER_COUNT_));
    }
    push_value(g, id, t, 0);
    return;
  case VYRE_OC_BALLOT:
  case VYRE_OC_SHUFFLE:
  case VYRE_OC_REDUCE:
    if (!uniform_cf(g)) return;
    mark_sync(g);
    if (op->op_class == VYRE_OC_BALLOT) {
      a = value_of(g, VYRE_T_BOOL, NULL);
      push_value(g, vyre_b_ballot(g->b, a), VYRE_T_U32, 0);
    } else if (op->op_class == VYRE_OC_SHUFFLE) {
      t = pick_type_in(g, VYRE_TM_VALUE);
      a = value_of(g, t, NULL);
      b = value_of(g, VYRE_T_U32, NULL);
      push_value(g, vyre_b_shuffle(g->b, a, b), t, 0);
    } else {
      vyre_reduce kind = (vyre_reduce)corpus_below(g->r, VYRE_REDUCE_COUNT_);
      t = pick_type_in(g, kind >= VYRE_REDUCE_AND ? VYRE_TM_INT : VYRE_TM_NUM);
      a = value_of(g, t, NULL);
      push_value(g, vyre_b_reduce(g->b, kind, a), t, 0);
    }
    return;
  default: return; /* statements are chosen elsewhere */
  }
}

static void push_block(gen *g, uint16_t op, int uniform) {
  int outer = uniform_cf(g);
  gen_block *blk = &g->blocks[g->depth++];
  blk->op = op;
  blk->uniform = (uint8_t)(uniform && outer);
  blk->sync = 0;
  blk->values_mark = g->nvals;
}

/* Leave the innermost block: its values and locals go out of scope. */
static void pop_scope(gen *g) {
  gen_block *blk = &g->blocks[g->depth - 1];
  g->nvals = blk->values_mark;
  for (uint32_t i = 0; i < g->nlocals; i++)
    if (g->locals[i].live && g->locals[i].level >= g->depth) g->locals[i].live = 0;
}

static void emit_end(gen *g) {
  gen_block *blk = &g->blocks[g->depth - 1];
  if (blk->op == VYRE_OP_IF && corpus_below(g->r, 2) == 0) {
    pop_scope(g);
    vyre_b_else(g->b);
    blk->op = VYRE_OP_ELSE;
    return;
  }
  pop_scope(g);
  uint8_t sync = blk->sync;
  g->depth--;
  vyre_b_end(g->b);
  if (sync) mark_sync(g);
}

static void emit_statement(gen *g) {
  uint32_t roll = corpus_below(g->r, 100), buf, slot;
  int u;
  if (roll < 14) {
    if (!find_buffer(g, buf_writable, &buf)) return;
    uint32_t idx = value_of(g, VYRE_T_U32, NULL);
    uint32_t v = value_of(g, (uint8_t)vyre_type_compute(g->bufs[buf].elem), NULL);
    vyre_b_store(g->b, buf, idx, v);
  } else if (roll < 26) {
    uint8_t t = pick_type_in(g, VYRE_TM_VALUE);
    uint32_t v = value_of(g, t, NULL);
    slot = new_local(g, t, 0);
    if (slot == UINT32_MAX) return;
    vyre_b_let(g->b, slot, v);
    g->locals[slot].live = 1;
  } else if (roll < 36) {
    if (!pick_local(g, 1, &slot)) return;
    vyre_b_assign(g->b, slot, value_of(g, g->locals[slot].type, NULL));
  } else if (roll < 46) {
    if (g->depth >= GEN_MAX_DEPTH) return;
    uint32_t c = value_of(g, VYRE_T_BOOL, &u);
    vyre_b_if(g->b, c);
    push_block(g, VYRE_OP_IF, u);
  } else if (roll < 54) {
    if (g->depth >= GEN_MAX_DEPTH) return;
    uint8_t t = corpus_below(g->r, 2) ? VYRE_T_U32 : VYRE_T_I32;
    int u1, u2;
    uint32_t lo = value_of(g, t, &u1), hi = value_of(g, t, &u2);
    slot = new_local(g, t, 1);
    if (slot == UINT32_MAX) return;
    vyre_b_loop(g->b, slot, lo, hi);
    push_block(g, VYRE_OP_LOOP, u1 && u2);
    g->locals[slot].live = 1;
    g->locals[slot].level = g->depth;
  } else if (roll < 58) {
    if (g->depth >= GEN_MAX_DEPTH) return;
    vyre_b_block(g->b);
    push_block(g, VYRE_OP_BLOCK, 1);
  } else if (roll < 76) {
    if (g->depth) emit_end(g);
  } else if (roll < 80) {
    if (!uniform_cf(g)) {
      if (loop_has_sync(g)) return;
      g->diverged = 1;
    }
    if (corpus_below(g->r, 2)) vyre_b_return(g->b);
    else vyre_b_trap(g->b, corpus_below(g->r, 2) ? corpus_below(g->r, 16) : corpus_u32(g->r));
  } else if (roll < 92) {
    if (!uniform_cf(g)) return;
    mark_sync(g);
    vyre_b_barrier(g->b, VYRE_BARRIER_WORKGROUP);
  } else if (roll < 96) {
    if (g->depth || !uniform_cf(g)) return;
    vyre_b_barrier(g->b, VYRE_BARRIER_GRID);
    g->nvals = 0; /* values do not cross a grid barrier */
  } else {
    new_local(g, pick_type_in(g, VYRE_TM_VALUE), 0); /* declared, never used */
  }
}

static const char *const name_pool[] = {
    "x", "y", "out", "hist", "_tmp", "Data9", "tile", "ro", "u32", "output", "range", "loop",
    "end", "l0", "buffer", "a_rather_long_buffer_name_that_is_exactly_63_bytes_long_xxxxxxx"};

static void make_buffers(gen *g) {
  uint32_t n = corpus_below(g->r, 7), binding = corpus_below(g->r, 3), shared = 0;
  uint8_t used[sizeof name_pool / sizeof name_pool[0]] = {0};
  for (uint32_t i = 0; i < n; i++) {
    char name[VYRE_MAX_NAME + 1];
    uint32_t k = corpus_below(g->r, sizeof name_pool / sizeof name_pool[0]);
    if (!used[k]) {
      used[k] = 1;
      snprintf(name, sizeof name, "%s", name_pool[k]);
    } else {
      snprintf(name, sizeof name, "buf%u", i);
    }
    uint8_t access = (uint8_t)corpus_below(g->r, VYRE_ACCESS_COUNT_);
    uint8_t elem = (uint8_t)(1 + corpus_below(g->r, VYRE_T_COUNT_ - 1));
    uint32_t esize = vyre_type_size(elem), count, flags = 0;
    if (access == VYRE_ACCESS_WORKGROUP) {
      count = 1 + corpus_below(g->r, 256);
      uint32_t at = (shared + 15u) & ~15u;
      if (at + count * esize > VYRE_MAX_WORKGROUP_BYTES) continue;
      shared = at + count * esize;
    } else {
      if (access == VYRE_ACCESS_READ_WRITE && corpus_below(g->r, 3) == 0) flags |= VYRE_BUF_OUTPUT;
      if (access == VYRE_ACCESS_WRITE_ONLY && corpus_below(g->r, 4) == 0) flags |= VYRE_BUF_OUTPUT;
      int out_role = access == VYRE_ACCESS_WRITE_ONLY || (flags & VYRE_BUF_OUTPUT);
      count = out_role || corpus_below(g->r, 2) ? 1 + corpus_below(g->r, 1024) : 0;
      binding += 1 + (corpus_below(g->r, 4) == 0 ? corpus_below(g->r, 5) : 0);
    }
    uint32_t idx = vyre_b_buffer(g->b, name, binding, (vyre_access)access, (vyre_type)elem, count, flags);
    int is_output = access == VYRE_ACCESS_WRITE_ONLY || access == VYRE_ACCESS_READ_WRITE;
    if (is_output && corpus_below(g->r, 3) == 0) {
      uint32_t total = count ? count * esize : 4096u;
      uint32_t off = corpus_below(g->r, total + 1);
      vyre_b_buffer_range(g->b, idx, off, corpus_below(g->r, total - off + 1));
    }
    g->bufs[g->nbuf++] = (gen_buf){access, elem};
  }
}

vyre_status corpus_random_program(corpus_rng *r, uint32_t max_insts, void **bytes, size_t *size,
                                  vyre_error *err) {
  gen g;
  memset(&g, 0, sizeof g);
  g.r = r;
  uint32_t wx = 1u << corpus_below(r, 11), wy = 1, wz = 1;
  if (corpus_below(r, 3) == 0) wy = 1u << corpus_below(r, (10 - __builtin_ctz(wx)) + 1);
  if (corpus_below(r, 4) == 0 && wx * wy < 1024) wz = 1u + corpus_below(r, 1024 / (wx * wy));
  if (corpus_below(r, 5) == 0 && wx > 3) wx -= corpus_below(r, 3); /* not a power of two */
  g.b = vyre_builder_new(wx, wy, wz);
  if (!g.b) return vyre_error_set(err, VYRE_OUT_OF_MEMORY, 0, "corpus: out of memory");
  make_buffers(&g);
  uint32_t target = 1 + corpus_below(r, max_insts ? max_insts : 1);
  while (vyre_b_inst_count(g.b) < target && !g.oom) {
    if (corpus_below(r, 100) < 55) emit_value_op(&g);
    else emit_statement(&g);
  }
  while (g.depth) {
    pop_scope(&g);
    g.depth--;
    vyre_b_end(g.b);
  }
  vyre_status st = g.oom ? vyre_error_set(err, VYRE_OUT_OF_MEMORY, 0, "corpus: out of memory")
                         : vyre_builder_finish(g.b, bytes, size, err);
  vyre_builder_free(g.b);
  free(g.locals);
  return st;
}

/* ------------------------------------------------------------------ */
/* Mutations                                                           */
/* ------------------------------------------------------------------ */
static const uint32_t interesting[] = {0u, 1u, 2u, 3u, 4u, 7u, 31u, 32u, 63u, 64u, 255u, 256u,
                                       1024u, 65535u, 65536u, 0x7fffffffu, 0x80000000u,
                                       0xfffffffeu, 0xffffffffu, 0x7fc00000u, 0x00000001u};

static uint32_t interesting_u32(corpus_rng *r) {
  return corpus_below(r, 2) ? interesting[corpus_below(r, sizeof interesting / 4)]
                            : corpus_u32(r);
}

static uint32_t rd32(const uint8_t *p) {
  uint32_t v;
  memcpy(&v, p, 4);
  return v;
}

/* Where the instruction section lies, when the header still says so. */
static int inst_section(const uint8_t *buf, size_t size, size_t *at, uint32_t *count) {
  if (size < VYRE_PROGRAM_HEADER_SIZE) return 0;
  vyre_program_header h;
  memcpy(&h, buf, sizeof h);
  if (h.inst_count == 0 || h.inst_offset > size ||
      (uint64_t)h.inst_count * sizeof(vyre_inst) > size - h.inst_offset)
    return 0;
  *at = h.inst_offset;
  *count = h.inst_count;
  return 1;
}

/* Edit one field of one instruction: the mutation most likely to leave
 * a program valid (another operand, another constant, another op). */
static void mutate_inst_field(corpus_rng *r, uint8_t *buf, size_t size) {
  size_t at;
  uint32_t count;
  if (!inst_section(buf, size, &at, &count)) return;
  uint32_t i = corpus_below(r, count);
  vyre_inst in;
  memcpy(&in, buf + at + (size_t)i * sizeof in, sizeof in);
  uint32_t n;
  const vyre_op_info *all = vyre_op_all(&n);
  switch (corpus_below(r, 7)) {
  case 0: in.op = corpus_below(r, 4) ? all[corpus_below(r, n)].id : (uint16_t)corpus_u32(r); break;
  case 1: in.type = (uint8_t)corpus_below(r, 16); break;
  case 2: in.mod = (uint8_t)corpus_below(r, 8); break;
  case 3: in.a = i && corpus_below(r, 2) ? corpus_below(r, i) : interesting_u32(r); break;
  case 4: in.b = i && corpus_below(r, 2) ? corpus_below(r, i) : interesting_u32(r); break;
  case 5: in.c = i && corpus_below(r, 2) ? corpus_below(r, i) : interesting_u32(r); break;
  default: in.d = i && corpus_below(r, 2) ? corpus_below(r, i) : interesting_u32(r); break;
  }
  memcpy(buf + at + (size_t)i * sizeof in, &in, sizeof in);
}

/* Replace the instruction section with random instructions that name
 * real ops and small earlier operands. */
static void random_stream(corpus_rng *r, uint8_t *buf, size_t size) {
  size_t at;
  uint32_t count, n;
  if (!inst_section(buf, size, &at, &count)) return;
  const vyre_op_info *all = vyre_op_all(&n);
  for (uint32_t i = 0; i < count; i++) {
    vyre_inst in;
    memset(&in, 0, sizeof in);
    const vyre_op_info *op = &all[corpus_below(r, n)];
    in.op = op->id;
    in.type = (uint8_t)corpus_below(r, VYRE_T_COUNT_);
    if (corpus_below(r, 2)) in.mod = (uint8_t)corpus_below(r, 4);
    uint32_t *fields[4] = {&in.a, &in.b, &in.c, &in.d};
    uint32_t nf = corpus_below(r, 5);
    for (uint32_t k = 0; k < nf; k++) *fields[k] = i ? corpus_below(r, i) : corpus_below(r, 4);
    memcpy(buf + at + (size_t)i * sizeof in, &in, sizeof in);
  }
}

size_t corpus_mutate(corpus_rng *r, uint8_t **bufp, size_t size) {
  uint8_t *buf = *bufp;
  uint32_t steps = 1 + corpus_below(r, 3);
  for (uint32_t s = 0; s < steps; s++) {
    uint32_t kind = corpus_below(r, 100);
    if (kind < 20 && size) { /* flip a bit */
      size_t at = corpus_below(r, (uint32_t)size);
      buf[at] ^= (uint8_t)(1u << corpus_below(r, 8));
    } else if (kind < 30 && size) { /* overwrite a byte */
      buf[corpus_below(r, (uint32_t)size)] = (uint8_t)corpus_u32(r);
    } else if (kind < 45 && size >= 4) { /* overwrite an aligned word (header, decl, inst field) */
      size_t at = (size_t)corpus_below(r, (uint32_t)(size / 4)) * 4;
      uint32_t v = interesting_u32(r);
      memcpy(buf + at, &v, 4);
    } else if (kind < 50 && size >= 4) { /* nudge an aligned word */
      size_t at = (size_t)corpus_below(r, (uint32_t)(size / 4)) * 4;
      uint32_t v = rd32(buf + at) + (corpus_below(r, 2) ? 1u : 0xffffffffu);
      memcpy(buf + at, &v, 4);
    } else if (kind < 80) {
      mutate_inst_field(r, buf, size);
    } else if (kind < 86) {
      random_stream(r, buf, size);
    } else if (kind < 93 && size) { /* truncate */
      size = corpus_below(r, (uint32_t)size);
      uint8_t *shrunk = realloc(buf, size ? size : 1);
      if (shrunk) buf = shrunk;
    } else { /* extend with random bytes, sometimes fixing total_size */
      size_t extra = 1 + corpus_below(r, 16);
      uint8_t *grown = realloc(buf, size + extra);
      if (!grown) break;
      buf = grown;
      for (size_t k = 0; k < extra; k++) buf[size + k] = corpus_below(r, 2) ? 0 : (uint8_t)corpus_u32(r);
      size += extra;
      if (size >= VYRE_PROGRAM_HEADER_SIZE && corpus_below(r, 2)) {
        uint32_t total = (uint32_t)size;
        memcpy(buf + offsetof(vyre_program_header, total_size), &total, 4);
      }
    }
  }
  *bufp = buf;
  return size;
}
