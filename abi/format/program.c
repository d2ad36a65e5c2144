/* program.c -- decode and validate untrusted program bytes into a vyre_program with derived tables: the stages in order (internal.h), and freeing. */
#include <stdlib.h>
#include <string.h>

#include "internal.h"

void vyre_program_free(vyre_program *p) {
  if (!p) return;
  free(p->buffers);
  free(p->local_types);
  free(p->insts);
  free(p->value_type);
  free(p->match);
  free(p->uniform);
  free(p->depth);
  free(p->bytes);
  free(p);
}

void vyre_program_hash_hex(const vyre_program *p, char out[65]) { vyre_hex(p->sha256, 32, out); }

/* ------------------------------------------------------------------ */
/* Entry                                                               */
/* ------------------------------------------------------------------ */
vyre_status vyre_program_decode(const void *bytes, size_t size, vyre_program **out,
                                vyre_error *err) {
  decoder d;
  memset(&d, 0, sizeof d);
  d.err = err;
  if (!out) return vyre_error_set(err, VYRE_INVALID_ARGUMENT, 0, "decode: out is NULL. Fix: pass "
                                  "a vyre_program ** to receive the program");
  *out = NULL;
  if (!bytes && size)
    return vyre_error_set(err, VYRE_INVALID_ARGUMENT, 0,
                          "decode: bytes is NULL with size %zu. Fix: pass the program image", size);
  vyre_program *p = calloc(1, sizeof *p);
  if (!p) return vyre_error_set(err, VYRE_OUT_OF_MEMORY, 0, "decode: out of host memory. Fix: free host memory");
  d.p = p;
  vyre_status st = vyre__decode_header(&d, bytes ? bytes : (const void *)"", size);
  if (st) goto done;
  const vyre_program_header *h = &p->header;
  p->bytes = malloc(size);
  if (!p->bytes) {
    st = fail(&d, VYRE_OUT_OF_MEMORY, "decode: out of host memory for a %zu-byte program. Fix: free host memory", size);
    goto done;
  }
  memcpy(p->bytes, bytes, size);
  p->size = size;
  const uint8_t *b = p->bytes;
  if ((st = vyre__decode_buffers(&d, b))) goto done;

  uint32_t n = h->inst_count;
  p->local_count = h->local_count;
  p->local_types = malloc(h->local_count ? h->local_count : 1);
  p->inst_count = n;
  p->insts = malloc((size_t)n * sizeof *p->insts);
  p->value_type = calloc(n, 1);
  p->match = malloc((size_t)n * sizeof *p->match);
  p->uniform = calloc(n, 1);
  p->depth = calloc(n, 1);
  d.scope = malloc((size_t)n * sizeof *d.scope);
  d.segment = malloc((size_t)n * sizeof *d.segment);
  d.open = calloc(n, 1);
  d.local_scope = malloc((h->local_count ? h->local_count : 1) * sizeof *d.local_scope);
  d.local_def = calloc(h->local_count ? h->local_count : 1, 1);
  d.stack = malloc(VYRE_MAX_NESTING * sizeof *d.stack);
  if (!p->local_types || !p->insts || !p->value_type || !p->match || !p->uniform || !p->depth ||
      !d.scope || !d.segment || !d.open || !d.local_scope || !d.local_def || !d.stack) {
    st = fail(&d, VYRE_OUT_OF_MEMORY, "decode: out of host memory for %u instructions. Fix: free host memory", n);
    goto done;
  }
  memcpy(p->local_types, b + h->local_offset, h->local_count);
  for (uint32_t s = 0; s < h->local_count; s++) {
    uint32_t lt = p->local_types[s];
    if (!vyre_type_is_value(lt) && !vyre_type_matrix_use(lt)) {
      st = fail(&d, VYRE_INVALID_PROGRAM,
                "invalid program: local %u has type %u, not a value type nor a matrix type. "
                "Fix: locals are %s, or a matrix type (mat_a_*, mat_b_*, mat_acc_*)",
                s, lt, TYPE_LIST(VYRE_TM_VALUE, " or "));
      goto done;
    }
  }
  memcpy(p->insts, b + h->inst_offset, (size_t)n * sizeof *p->insts);
  for (uint32_t i = 0; i < n; i++) p->match[i] = NONE;
  for (uint32_t i = 0; i < n; i++) {
    d.scope[i] = d.depth ? d.stack[d.depth - 1] : NONE;
    d.segment[i] = d.grid_segment;
    p->depth[i] = (uint8_t)(d.depth > 255 ? 255 : d.depth);
    if ((st = vyre__validate_inst(&d, i))) goto done;
    /* A block's opener and closer sit at the outer depth. */
    if (p->insts[i].op == VYRE_OP_END) p->depth[i] = (uint8_t)(d.depth > 255 ? 255 : d.depth);
    if (p->insts[i].op == VYRE_OP_ELSE) p->depth[i] = (uint8_t)(d.depth - 1 > 255 ? 255 : d.depth - 1);
    if (d.depth > p->max_depth) p->max_depth = d.depth;
  }
  if (d.depth) {
    st = fail(&d, VYRE_INVALID_PROGRAM,
              "invalid program: %u block(s) still open at the end (innermost opened at "
              "instruction %u). Fix: close every if/loop/block with end",
              d.depth, d.stack[d.depth - 1]);
    goto done;
  }
  if ((st = vyre__analyse_uniformity(&d))) goto done;
  vyre_sha256(p->bytes, p->size, p->sha256);
  *out = p;
  p = NULL; /* the caller's now: the decoder's scratch goes, the program stays */
done:
  free(d.scope);
  free(d.segment);
  free(d.open);
  free(d.local_scope);
  free(d.local_def);
  free(d.stack);
  vyre_program_free(p);
  return st;
}
