/* split.c -- chunked host dispatch: which elementwise programs can be cut at any element, and the pipeline of uploads, launches and readbacks over two streams (docs/cuda-runtime.md, "Chunked host dispatch"). */
#include "split.h"

#include <string.h>

#include "util.h"

/* Chunk boundaries fall on multiples of this many elements: every chunk
 * pointer stays 16-byte aligned (the vector path's loads) whatever the
 * element size, and chunks end on whole vector quads. */
#define CHUNK_ALIGN 4096u

static int is_gid(const vyre_program *p, uint32_t v) {
  return p->insts[v].op == VYRE_OP_INVOCATION_ID && p->insts[v].mod == 0;
}

static int is_len(const vyre_program *p, uint32_t v) {
  return p->insts[v].op == VYRE_OP_BUF_LEN;
}

/* The value operands of instruction i, by its class's schema: their
 * count, each in v[] with its field (0 = a, 1 = b...) in f[]. */
static uint32_t value_operands(const vyre_program *p, uint32_t i, uint32_t *v, uint32_t *f) {
  const vyre_inst *in = &p->insts[i];
  const vyre_op_info *op = vyre_op_lookup(in->op);
  const vyre_op_class_info *cls = op ? vyre_op_class_lookup(op->op_class) : NULL;
  const uint32_t field[4] = {in->a, in->b, in->c, in->d};
  uint32_t n = 0;
  for (uint32_t k = 0; cls && k < 4; k++)
    if (cls->operand[k] == VYRE_OPND_VALUE) {
      v[n] = field[k];
      f[n++] = k;
    }
  return n;
}

/* Mark what each use of gid and of a buffer length does: at[b] = 1 for
 * a buffer loaded, stored or bounds-checked at gid; other[b] = 1 for one
 * loaded elsewhere or whose length is a value.  0 when gid is used as a
 * value. */
static int scan_uses(const vyre_program *p, uint8_t *at, uint8_t *other) {
  for (uint32_t i = 0; i < p->inst_count; i++) {
    const vyre_inst *in = &p->insts[i];
    uint32_t v[4], f[4], n = value_operands(p, i, v, f);
    int compare = n == 2 && (in->op == VYRE_OP_LT || in->op == VYRE_OP_LE ||
                             in->op == VYRE_OP_GT || in->op == VYRE_OP_GE ||
                             in->op == VYRE_OP_EQ || in->op == VYRE_OP_NE);
    int memory = in->op == VYRE_OP_LOAD || in->op == VYRE_OP_STORE;
    if (memory) {
      if (is_gid(p, in->b)) at[in->a] = 1;
      else other[in->a] = 1;
    }
    for (uint32_t k = 0; k < n; k++) {
      if (is_gid(p, v[k])) {
        if (memory && f[k] == 1) continue; /* the index */
        /* gid against a length: the same relation in every chunk when
         * that buffer is cut with it and reaches past the last element. */
        if (compare && is_len(p, v[1 - k])) {
          at[p->insts[v[1 - k]].a] = 1;
          continue;
        }
        return 0;
      }
      if (is_len(p, v[k]) && !(compare && is_gid(p, v[1 - k]))) other[p->insts[v[k]].a] = 1;
    }
  }
  return 1;
}

int vc_split_classify(const vc_launch *L, uint8_t *cls) {
  const vc_kernel *kn = L->k;
  const vyre_program *p = kn->program;
  if (kn->info.grid_mode != CG_GRID_ELEMENTWISE || kn->info.uses_trap ||
      kn->info.uses_grid_barrier)
    return 0;
  if (L->params_words > 1u + VYRE_MAX_BUFFERS + VYRE_PARAMS_TRAP_WORDS + VYRE_PARAMS_GRID_WORDS)
    return 0;
  uint8_t at[VYRE_MAX_BUFFERS], other[VYRE_MAX_BUFFERS];
  memset(at, 0, sizeof at);
  memset(other, 0, sizeof other);
  if (!scan_uses(p, at, other)) return 0;
  uint32_t n = L->geo.element_count, ins = 0, outs = 0;
  for (uint32_t b = 0; b < p->buffer_count; b++) {
    const vyre_buffer_info *bi = &p->buffers[b];
    cls[b] = VC_SPLIT_WHOLE;
    if (!at[b]) continue;
    if (other[b] || bi->role == VYRE_ROLE_SHARED || L->geo.buffer_elems[b] < n) return 0;
    if (bi->is_output && L->geo.buffer_elems[b] != n) return 0;
    cls[b] = VC_SPLIT_CHUNK;
    ins += bi->role == VYRE_ROLE_INPUT || bi->role == VYRE_ROLE_INOUT;
    outs += bi->is_output;
  }
  /* A step of the staging pipeline moves at most VC_STEP_MAX_SEGS ranges
   * each way. */
  return ins + outs > 0 && ins <= VC_STEP_MAX_SEGS && outs <= VC_STEP_MAX_SEGS;
}

uint32_t vc_split_chunk_elems(const vc_launch *L, const uint8_t *cls, uint64_t chunk_bytes,
                              uint64_t staging_chunk) {
  const vyre_program *p = L->k->program;
  uint64_t in = 0, out = 0; /* bytes per element of the cut buffers, each way */
  for (uint32_t b = 0; b < p->buffer_count; b++) {
    if (cls[b] != VC_SPLIT_CHUNK) continue;
    const vyre_buffer_info *bi = &p->buffers[b];
    if (bi->role == VYRE_ROLE_INPUT || bi->role == VYRE_ROLE_INOUT) in += bi->elem_size;
    if (bi->is_output) out += bi->elem_size;
  }
  if (!chunk_bytes || !(in + out)) return 0;
  uint64_t e = chunk_bytes / (in + out);
  /* A chunk's inputs and outputs share one staging chunk. */
  if (e > staging_chunk / (in + out)) e = staging_chunk / (in + out);
  e -= e % CHUNK_ALIGN;
  if (!e || e >= L->geo.element_count || e > UINT32_MAX) return 0;
  /* At least two chunks, or nothing overlaps. */
  return L->geo.element_count >= 2 * e ? (uint32_t)e : 0;
}

/* Chunk c's elements: [*first, *first + *count). */
static void chunk_range(const vc_split_job *sj, uint32_t c, uint64_t *first, uint64_t *count) {
  uint64_t n = sj->L->geo.element_count;
  *first = (uint64_t)c * sj->chunk_elems;
  *count = n - *first < sj->chunk_elems ? n - *first : sj->chunk_elems;
}

/* Chunk c's ranges: its inputs' elements up, its outputs' declared
 * ranges back (vc_step_describe_fn). */
static void describe_chunk(void *user, uint32_t c, vc_step_io *io) {
  const vc_split_job *sj = user;
  const vc_launch *L = sj->L;
  const vyre_program *p = L->k->program;
  uint64_t first, count;
  chunk_range(sj, c, &first, &count);
  io->nin = io->nout = 0;
  for (uint32_t b = 0; b < p->buffer_count; b++) {
    const vyre_buffer_info *bi = &p->buffers[b];
    if (sj->cls[b] != VC_SPLIT_CHUNK) continue;
    uint64_t lo = first * bi->elem_size, hi = (first + count) * bi->elem_size;
    if (bi->role == VYRE_ROLE_INPUT || bi->role == VYRE_ROLE_INOUT) {
      vc_segment *g = &io->in[io->nin++];
      g->host = (uint8_t *)(uintptr_t)sj->src[b] + lo;
      g->dev = sj->dev[b] + lo;
      g->size = hi - lo;
    }
    if (!bi->is_output) continue;
    uint64_t off = L->geo.out_offset[b], end = off + L->geo.out_size[b];
    if (lo < off) lo = off;
    if (hi > end) hi = end;
    if (lo >= hi) continue;
    vc_segment *g = &io->out[io->nout++];
    g->host = (uint8_t *)sj->dst[b] + (lo - off);
    g->dev = sj->dev[b] + lo;
    g->size = hi - lo;
  }
}

/* Chunk c's launch: the cut buffers' pointers advanced to its first
 * element, its element count in the count words (the dispatch's, and
 * each cut buffer sized at run time), its grid. */
static vyre_status launch_chunk(void *user, uint32_t c, CUstream stream, vyre_error *err) {
  const vc_split_job *sj = user;
  const vyre_program *p = sj->L->k->program;
  uint64_t first, count;
  chunk_range(sj, c, &first, &count);
  uint32_t words[1u + VYRE_MAX_BUFFERS + VYRE_PARAMS_TRAP_WORDS + VYRE_PARAMS_GRID_WORDS];
  vc_launch Lc = *sj->L;
  memcpy(words, (const void *)(uintptr_t)sj->L->params_host.ptr,
         (size_t)sj->L->params_words * sizeof *words);
  words[0] = (uint32_t)count;
  for (uint32_t b = 0; b < p->buffer_count; b++) {
    const vyre_buffer_info *bi = &p->buffers[b];
    if (sj->cls[b] != VC_SPLIT_CHUNK) continue;
    Lc.ptrs[bi->kernel_index] = sj->dev[b] + first * bi->elem_size;
    /* A declared count is compiled in; it is at least element_count, so
     * past every chunk's elements as the run-time count is. */
    if (!bi->decl.count) words[1 + b] = (uint32_t)count;
  }
  Lc.params_host.ptr = (uint64_t)(uintptr_t)words;
  uint64_t per = (uint64_t)Lc.block[0] * Lc.k->info.elements_per_thread;
  Lc.grid[0] = (uint32_t)((count + per - 1) / per);
  return vc_launch_enqueue(sj->lx, &Lc, stream, 1, err);
}

vyre_status vc_split_run(const vc_split_job *sj, vyre_error *err) {
  uint64_t n = sj->L->geo.element_count;
  uint32_t chunks = (uint32_t)((n + sj->chunk_elems - 1) / sj->chunk_elems);
  vyre_status st = vc_staging_steps(sj->staging, sj->stream, chunks, describe_chunk, launch_chunk,
                                    (void *)(uintptr_t)sj, err);
  if (st != VYRE_OK) vyre_error_prefix(err, "chunked dispatch of %s", sj->L->k->info.entry);
  return st;
}
