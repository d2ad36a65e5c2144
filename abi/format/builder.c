/* builder.c -- encode programs from code: the writer side of the program format. */
#include <stdlib.h>
#include <string.h>

#include "vyre/vyre_support.h"

struct vyre_builder {
  vyre_program_header header;
  vyre_buffer_decl buffers[VYRE_MAX_BUFFERS];
  char names[VYRE_MAX_BUFFERS][VYRE_MAX_NAME + 1];
  uint32_t buffer_count;
  uint32_t next_binding;
  uint8_t *locals;
  uint32_t local_count, local_cap;
  vyre_inst *insts;
  uint8_t *types;
  uint32_t inst_count, inst_cap;
  int failed; /* 1 = out of memory, 2 = too many buffers/locals, 3 = bad name */
};

vyre_builder *vyre_builder_new(uint32_t x, uint32_t y, uint32_t z) {
  vyre_builder *b = calloc(1, sizeof *b);
  if (!b) return NULL;
  vyre_builder_set_workgroup(b, x, y, z);
  return b;
}

void vyre_builder_free(vyre_builder *b) {
  if (!b) return;
  free(b->locals);
  free(b->insts);
  free(b->types);
  free(b);
}

void vyre_builder_set_workgroup(vyre_builder *b, uint32_t x, uint32_t y, uint32_t z) {
  b->header.workgroup_size[0] = x;
  b->header.workgroup_size[1] = y;
  b->header.workgroup_size[2] = z;
}

uint32_t vyre_b_buffer(vyre_builder *b, const char *name, uint32_t binding, vyre_access access,
                       vyre_type elem, uint32_t count, uint32_t flags) {
  if (b->buffer_count >= VYRE_MAX_BUFFERS) {
    b->failed = 2;
    return b->buffer_count;
  }
  size_t len = name ? strlen(name) : 0;
  if (len == 0 || len > VYRE_MAX_NAME) {
    b->failed = 3;
    len = len > VYRE_MAX_NAME ? VYRE_MAX_NAME : len;
  }
  uint32_t i = b->buffer_count++;
  vyre_buffer_decl *d = &b->buffers[i];
  memset(d, 0, sizeof *d);
  if (len) memcpy(b->names[i], name, len);
  b->names[i][len] = '\0';
  d->name_size = (uint32_t)len;
  d->access = (uint8_t)access;
  d->elem_type = (uint8_t)elem;
  d->flags = (uint8_t)flags;
  d->count = count;
  if (access == VYRE_ACCESS_WORKGROUP) {
    d->binding = 0;
  } else {
    d->binding = binding == UINT32_MAX ? b->next_binding : binding;
    b->next_binding = d->binding + 1u;
  }
  return i;
}

void vyre_b_buffer_range(vyre_builder *b, uint32_t buffer, uint32_t offset, uint32_t size) {
  if (buffer >= b->buffer_count) {
    b->failed = 2;
    return;
  }
  b->buffers[buffer].flags |= VYRE_BUF_OUT_RANGE;
  b->buffers[buffer].out_range_offset = offset;
  b->buffers[buffer].out_range_size = size;
}

uint32_t vyre_b_local(vyre_builder *b, vyre_type type) {
  if (b->local_count >= VYRE_MAX_LOCALS) {
    b->failed = 2;
    return b->local_count;
  }
  if (b->local_count == b->local_cap) {
    uint32_t cap = b->local_cap ? b->local_cap * 2u : 16u;
    uint8_t *grown = realloc(b->locals, cap);
    if (!grown) {
      b->failed = 1;
      return b->local_count;
    }
    b->locals = grown;
    b->local_cap = cap;
  }
  b->locals[b->local_count] = (uint8_t)type;
  return b->local_count++;
}

uint32_t vyre_b_inst(vyre_builder *b, vyre_op op, uint32_t type, uint32_t mod, uint32_t a,
                     uint32_t bb, uint32_t c, uint32_t d) {
  if (b->inst_count == b->inst_cap) {
    uint32_t cap = b->inst_cap ? b->inst_cap * 2u : 64u;
    vyre_inst *gi = realloc(b->insts, (size_t)cap * sizeof *gi);
    if (gi) b->insts = gi;
    uint8_t *gt = realloc(b->types, cap);
    if (gt) b->types = gt;
    if (!gi || !gt) {
      b->failed = 1;
      return b->inst_count;
    }
    b->inst_cap = cap;
  }
  vyre_inst *in = &b->insts[b->inst_count];
  in->op = (uint16_t)op;
  in->type = (uint8_t)type;
  in->mod = (uint8_t)mod;
  in->a = a;
  in->b = bb;
  in->c = c;
  in->d = d;
  b->types[b->inst_count] = (uint8_t)type;
  return b->inst_count++;
}

uint32_t vyre_b_type_of(const vyre_builder *b, uint32_t v) {
  return v < b->inst_count ? b->types[v] : VYRE_T_VOID;
}

uint32_t vyre_b_inst_count(const vyre_builder *b) { return b->inst_count; }

uint32_t vyre_b_const(vyre_builder *b, vyre_type type, uint64_t bits) {
  int wide = type == VYRE_T_U64 || type == VYRE_T_I64;
  return vyre_b_inst(b, VYRE_OP_CONST, type, 0, (uint32_t)bits, wide ? (uint32_t)(bits >> 32) : 0,
                     0, 0);
}
uint32_t vyre_b_u32(vyre_builder *b, uint32_t v) { return vyre_b_const(b, VYRE_T_U32, v); }
uint32_t vyre_b_i32(vyre_builder *b, int32_t v) { return vyre_b_const(b, VYRE_T_I32, (uint32_t)v); }
uint32_t vyre_b_u64(vyre_builder *b, uint64_t v) { return vyre_b_const(b, VYRE_T_U64, v); }
uint32_t vyre_b_i64(vyre_builder *b, int64_t v) { return vyre_b_const(b, VYRE_T_I64, (uint64_t)v); }
uint32_t vyre_b_f32(vyre_builder *b, float v) {
  uint32_t bits;
  memcpy(&bits, &v, 4);
  return vyre_b_const(b, VYRE_T_F32, vyre_f32_canonical_bits(bits));
}
uint32_t vyre_b_bool(vyre_builder *b, int v) { return vyre_b_const(b, VYRE_T_BOOL, v ? 1u : 0u); }
uint32_t vyre_b_gid(vyre_builder *b, uint32_t axis) {
  return vyre_b_inst(b, VYRE_OP_INVOCATION_ID, VYRE_T_U32, axis, 0, 0, 0, 0);
}
uint32_t vyre_b_builtin(vyre_builder *b, vyre_op op, uint32_t axis) {
  return vyre_b_inst(b, op, VYRE_T_U32, axis, 0, 0, 0, 0);
}
uint32_t vyre_b_load(vyre_builder *b, uint32_t buffer, uint32_t index) {
  uint32_t t = buffer < b->buffer_count ? vyre_type_compute(b->buffers[buffer].elem_type) : 0;
  return vyre_b_inst(b, VYRE_OP_LOAD, t, 0, buffer, index, 0, 0);
}
uint32_t vyre_b_buflen(vyre_builder *b, uint32_t buffer) {
  return vyre_b_inst(b, VYRE_OP_BUF_LEN, VYRE_T_U32, 0, buffer, 0, 0, 0);
}
uint32_t vyre_b_get(vyre_builder *b, uint32_t slot) {
  uint32_t t = slot < b->local_count ? b->locals[slot] : 0;
  return vyre_b_inst(b, VYRE_OP_LOCAL_GET, t, 0, slot, 0, 0, 0);
}
uint32_t vyre_b_bin(vyre_builder *b, vyre_op op, uint32_t x, uint32_t y) {
  const vyre_op_info *info = vyre_op_lookup(op);
  uint32_t t = info && info->op_class == VYRE_OC_COMPARE ? VYRE_T_BOOL : vyre_b_type_of(b, x);
  return vyre_b_inst(b, op, t, 0, x, y, 0, 0);
}
uint32_t vyre_b_un(vyre_builder *b, vyre_op op, uint32_t x) {
  const vyre_op_info *info = vyre_op_lookup(op);
  uint32_t t = info && info->op_class == VYRE_OC_PREDICATE ? VYRE_T_BOOL : vyre_b_type_of(b, x);
  return vyre_b_inst(b, op, t, 0, x, 0, 0, 0);
}
uint32_t vyre_b_select(vyre_builder *b, uint32_t cond, uint32_t t, uint32_t f) {
  return vyre_b_inst(b, VYRE_OP_SELECT, vyre_b_type_of(b, t), 0, cond, t, f, 0);
}
uint32_t vyre_b_cast(vyre_builder *b, vyre_type to, uint32_t x) {
  return vyre_b_inst(b, VYRE_OP_CAST, to, 0, x, 0, 0, 0);
}
uint32_t vyre_b_fma(vyre_builder *b, uint32_t x, uint32_t y, uint32_t z) {
  return vyre_b_inst(b, VYRE_OP_FMA, VYRE_T_F32, 0, x, y, z, 0);
}
uint32_t vyre_b_atomic(vyre_builder *b, vyre_op op, uint32_t buffer, uint32_t index,
                       uint32_t value, vyre_order order) {
  uint32_t t = buffer < b->buffer_count ? b->buffers[buffer].elem_type : 0;
  return vyre_b_inst(b, op, t, order, buffer, index, value, 0);
}
uint32_t vyre_b_cas(vyre_builder *b, uint32_t buffer, uint32_t index, uint32_t expected,
                    uint32_t desired, vyre_order order) {
  uint32_t t = buffer < b->buffer_count ? b->buffers[buffer].elem_type : 0;
  return vyre_b_inst(b, VYRE_OP_ATOMIC_CAS, t, order, buffer, index, expected, desired);
}
uint32_t vyre_b_ballot(vyre_builder *b, uint32_t cond) {
  return vyre_b_inst(b, VYRE_OP_SUBGROUP_BALLOT, VYRE_T_U32, 0, cond, 0, 0, 0);
}
uint32_t vyre_b_shuffle(vyre_builder *b, uint32_t value, uint32_t lane) {
  return vyre_b_inst(b, VYRE_OP_SUBGROUP_SHUFFLE, vyre_b_type_of(b, value), 0, value, lane, 0, 0);
}
uint32_t vyre_b_reduce(vyre_builder *b, vyre_reduce kind, uint32_t value) {
  return vyre_b_inst(b, VYRE_OP_SUBGROUP_REDUCE, vyre_b_type_of(b, value), kind, value, 0, 0, 0);
}
void vyre_b_let(vyre_builder *b, uint32_t slot, uint32_t value) {
  vyre_b_inst(b, VYRE_OP_LET, 0, 0, slot, value, 0, 0);
}
void vyre_b_assign(vyre_builder *b, uint32_t slot, uint32_t value) {
  vyre_b_inst(b, VYRE_OP_ASSIGN, 0, 0, slot, value, 0, 0);
}
void vyre_b_store(vyre_builder *b, uint32_t buffer, uint32_t index, uint32_t value) {
  vyre_b_inst(b, VYRE_OP_STORE, 0, 0, buffer, index, value, 0);
}
void vyre_b_if(vyre_builder *b, uint32_t cond) { vyre_b_inst(b, VYRE_OP_IF, 0, 0, cond, 0, 0, 0); }
void vyre_b_else(vyre_builder *b) { vyre_b_inst(b, VYRE_OP_ELSE, 0, 0, 0, 0, 0, 0); }
void vyre_b_end(vyre_builder *b) { vyre_b_inst(b, VYRE_OP_END, 0, 0, 0, 0, 0, 0); }
void vyre_b_loop(vyre_builder *b, uint32_t slot, uint32_t start, uint32_t end) {
  vyre_b_inst(b, VYRE_OP_LOOP, 0, 0, slot, start, end, 0);
}
void vyre_b_block(vyre_builder *b) { vyre_b_inst(b, VYRE_OP_BLOCK, 0, 0, 0, 0, 0, 0); }
void vyre_b_return(vyre_builder *b) { vyre_b_inst(b, VYRE_OP_RETURN, 0, 0, 0, 0, 0, 0); }
void vyre_b_barrier(vyre_builder *b, vyre_barrier_scope scope) {
  vyre_b_inst(b, VYRE_OP_BARRIER, 0, scope, 0, 0, 0, 0);
}
void vyre_b_trap(vyre_builder *b, uint32_t code) {
  vyre_b_inst(b, VYRE_OP_TRAP, 0, 0, code, 0, 0, 0);
}

/* The component type of local `slot`'s matrix type (VOID for another). */
static uint32_t slot_component(const vyre_builder *b, uint32_t slot) {
  return slot < b->local_count ? vyre_type_matrix_component(b->locals[slot]) : VYRE_T_VOID;
}
void vyre_b_mma_fill(vyre_builder *b, uint32_t slot, uint32_t value) {
  vyre_b_inst(b, VYRE_OP_MMA_FILL, slot_component(b, slot), 0, slot, value, 0, 0);
}
void vyre_b_mma_load(vyre_builder *b, vyre_layout layout, uint32_t slot, uint32_t buffer,
                     uint32_t index, uint32_t stride) {
  vyre_b_inst(b, VYRE_OP_MMA_LOAD, slot_component(b, slot), layout, slot, buffer, index, stride);
}
void vyre_b_mma(vyre_builder *b, uint32_t d, uint32_t a, uint32_t bm, uint32_t c) {
  vyre_b_inst(b, VYRE_OP_MMA, slot_component(b, a), 0, d, a, bm, c);
}
void vyre_b_mma_store(vyre_builder *b, vyre_layout layout, uint32_t buffer, uint32_t index,
                      uint32_t stride, uint32_t slot) {
  vyre_b_inst(b, VYRE_OP_MMA_STORE, slot_component(b, slot), layout, buffer, index, stride, slot);
}

static uint32_t align4(uint64_t x) { return (uint32_t)((x + 3u) & ~(uint64_t)3u); }

vyre_status vyre_builder_finish(vyre_builder *b, void **bytes, size_t *size, vyre_error *err) {
  *bytes = NULL;
  *size = 0;
  if (b->failed == 1)
    return vyre_error_set(err, VYRE_OUT_OF_MEMORY, 0, "builder: ran out of host memory. Fix: free host memory");
  if (b->failed == 2)
    return vyre_error_set(err, VYRE_LIMIT, 0,
                          "builder: more than %u buffers or %u locals, or a bad buffer index. "
                          "Fix: split the program",
                          VYRE_MAX_BUFFERS, VYRE_MAX_LOCALS);
  if (b->failed == 3)
    return vyre_error_set(err, VYRE_INVALID_ARGUMENT, 0,
                          "builder: a buffer name is empty or longer than %u bytes. Fix: name "
                          "every buffer with 1..%u identifier characters",
                          VYRE_MAX_NAME, VYRE_MAX_NAME);
  vyre_program_header h = b->header;
  h.magic = VYRE_PROGRAM_MAGIC;
  h.version = VYRE_PROGRAM_VERSION;
  h.header_size = VYRE_PROGRAM_HEADER_SIZE;
  h.flags = 0;
  h.buffer_count = b->buffer_count;
  h.buffer_offset = VYRE_PROGRAM_HEADER_SIZE;
  h.local_count = b->local_count;
  h.local_offset = align4(h.buffer_offset + (uint64_t)b->buffer_count * sizeof(vyre_buffer_decl));
  h.inst_count = b->inst_count;
  h.inst_offset = align4((uint64_t)h.local_offset + b->local_count);
  uint64_t strings = 0;
  for (uint32_t i = 0; i < b->buffer_count; i++) strings += b->buffers[i].name_size;
  h.string_size = (uint32_t)strings;
  uint64_t string_offset = (uint64_t)h.inst_offset + (uint64_t)b->inst_count * sizeof(vyre_inst);
  uint64_t total = align4(string_offset + strings);
  if (total > UINT32_MAX)
    return vyre_error_set(err, VYRE_LIMIT, 0, "builder: program would be %llu bytes. Fix: split it",
                          (unsigned long long)total);
  h.string_offset = (uint32_t)string_offset;
  h.total_size = (uint32_t)total;
  uint8_t *out = calloc(1, (size_t)total);
  if (!out) return vyre_error_set(err, VYRE_OUT_OF_MEMORY, 0, "builder: out of host memory. Fix: free host memory");
  memcpy(out, &h, sizeof h);
  uint32_t name_at = 0;
  for (uint32_t i = 0; i < b->buffer_count; i++) {
    vyre_buffer_decl d = b->buffers[i];
    d.name_offset = name_at;
    memcpy(out + h.buffer_offset + (size_t)i * sizeof d, &d, sizeof d);
    memcpy(out + h.string_offset + name_at, b->names[i], d.name_size);
    name_at += d.name_size;
  }
  if (b->local_count) memcpy(out + h.local_offset, b->locals, b->local_count);
  if (b->inst_count) memcpy(out + h.inst_offset, b->insts, (size_t)b->inst_count * sizeof(vyre_inst));
  *bytes = out;
  *size = (size_t)total;
  return VYRE_OK;
}
