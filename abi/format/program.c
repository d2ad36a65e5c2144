/* program.c -- decode and validate untrusted program bytes into a vyre_program with derived tables. */
#include <stdlib.h>
#include <string.h>

#include "vyre/vyre_support.h"

#define NONE UINT32_MAX

/* Decoder state: the program being built plus scratch tables. */
typedef struct decoder {
  vyre_program *p;
  vyre_error *err;
  uint32_t *scope;       /* per inst: opener index of the block defining it, NONE = top */
  uint32_t *segment;     /* per inst: grid-barrier segment it was defined in */
  uint8_t *open;         /* per opener index: block still open */
  uint32_t *local_scope; /* per slot: opener of its defining block, NONE = top */
  uint8_t *local_def;    /* per slot: 0 = not yet, 1 = let, 2 = loop counter */
  uint32_t *stack;       /* open block openers */
  uint32_t depth;
  uint32_t grid_segment;
} decoder;

static void fail_set(decoder *d, vyre_status st, const char *fmt, ...) VYRE_PRINTF(3, 4);
static void fail_set(decoder *d, vyre_status st, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  vyre_error_vset(d->err, st, 0, fmt, ap);
  va_end(ap);
}
/* Record the error and yield its status, a constant the compiler sees:
 * through a variadic call gcc -O3 cannot tell that a failing check never
 * returns VYRE_OK, and warns that its outputs may be unset. */
#define fail(d, st, ...) (fail_set((d), (st), __VA_ARGS__), (vyre_status)(st))

#define INST_FMT "invalid program: instruction %u (%s): "
/* A type list for a message, from VYRE_TYPE_MAP (a compound literal lives
 * to the end of the enclosing block, past the fail() call). */
#define TYPE_LIST(mask, last) vyre_type_list((mask), (last), (char[96]){0}, 96)

static const char *mnem(const vyre_inst *in) {
  const vyre_op_info *info = vyre_op_lookup(in->op);
  return info ? info->mnemonic : "?";
}

static uint32_t align4(uint64_t x) { return (uint32_t)((x + 3u) & ~(uint64_t)3u); }

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
/* Header and sections                                                 */
/* ------------------------------------------------------------------ */
static int zero_bytes(const uint8_t *b, uint64_t from, uint64_t to) {
  for (uint64_t i = from; i < to; i++)
    if (b[i]) return 0;
  return 1;
}

static vyre_status check_header(decoder *d, const uint8_t *bytes, size_t size) {
  vyre_program_header *h = &d->p->header;
  if (size < VYRE_PROGRAM_HEADER_SIZE)
    return fail(d, VYRE_INVALID_PROGRAM,
                "invalid program: %zu bytes is shorter than the %u-byte header. Fix: pass the "
                "whole program image (vyre asm writes one)",
                size, VYRE_PROGRAM_HEADER_SIZE);
  memcpy(h, bytes, sizeof *h);
  if (h->magic != VYRE_PROGRAM_MAGIC)
    return fail(d, VYRE_INVALID_PROGRAM,
                "invalid program: bad magic 0x%08x (expected 0x%08x \"VYRP\"). Fix: this is not "
                "a vyre program; assemble text with `vyre asm`",
                h->magic, VYRE_PROGRAM_MAGIC);
  if (h->version != VYRE_PROGRAM_VERSION)
    return fail(d, VYRE_INVALID_PROGRAM,
                "invalid program: format version %u, this library reads version %u. Fix: "
                "re-encode the program with a matching vyre",
                h->version, VYRE_PROGRAM_VERSION);
  if (h->header_size != VYRE_PROGRAM_HEADER_SIZE || h->flags != 0 || h->reserved != 0)
    return fail(d, VYRE_INVALID_PROGRAM,
                "invalid program: header_size %u / flags 0x%x / reserved %u (expected %u / 0 / 0). "
                "Fix: re-encode the program",
                h->header_size, h->flags, h->reserved, VYRE_PROGRAM_HEADER_SIZE);
  if (h->total_size != size)
    return fail(d, VYRE_INVALID_PROGRAM,
                "invalid program: header says %u bytes but %zu were given. Fix: pass exactly the "
                "program image, without truncation or trailing bytes",
                h->total_size, size);
  uint64_t inv = 1;
  for (int i = 0; i < 3; i++) {
    if (h->workgroup_size[i] == 0)
      return fail(d, VYRE_INVALID_PROGRAM,
                  "invalid program: workgroup size %u x %u x %u has a zero dimension. Fix: every "
                  "workgroup dimension must be at least 1",
                  h->workgroup_size[0], h->workgroup_size[1], h->workgroup_size[2]);
    inv *= h->workgroup_size[i];
    if (inv > VYRE_MAX_WORKGROUP_INVOCATIONS)
      return fail(d, VYRE_LIMIT,
                  "invalid program: workgroup size %u x %u x %u exceeds %u invocations. Fix: use "
                  "a smaller workgroup",
                  h->workgroup_size[0], h->workgroup_size[1], h->workgroup_size[2],
                  VYRE_MAX_WORKGROUP_INVOCATIONS);
  }
  if (h->buffer_count > VYRE_MAX_BUFFERS || h->local_count > VYRE_MAX_LOCALS ||
      h->inst_count > VYRE_MAX_INSTS || h->string_size > VYRE_MAX_STRINGS)
    return fail(d, VYRE_LIMIT,
                "invalid program: %u buffers, %u locals, %u instructions, %u string bytes exceed "
                "the limits (%u, %u, %u, %u). Fix: split the program",
                h->buffer_count, h->local_count, h->inst_count, h->string_size, VYRE_MAX_BUFFERS,
                VYRE_MAX_LOCALS, VYRE_MAX_INSTS, VYRE_MAX_STRINGS);
  if (h->inst_count == 0)
    return fail(d, VYRE_INVALID_PROGRAM,
                "invalid program: the body has no instructions. Fix: a program needs at least one "
                "statement");
  /* The layout is fixed: each section where the previous one ends. */
  uint64_t want = VYRE_PROGRAM_HEADER_SIZE;
  const char *bad = NULL;
  if (h->buffer_offset != want) bad = "buffer_offset";
  want = align4(want + (uint64_t)h->buffer_count * sizeof(vyre_buffer_decl));
  if (!bad && h->local_offset != want) bad = "local_offset";
  uint64_t local_end = want + h->local_count;
  want = align4(local_end);
  if (!bad && h->inst_offset != want) bad = "inst_offset";
  want = want + (uint64_t)h->inst_count * sizeof(vyre_inst);
  if (!bad && h->string_offset != want) bad = "string_offset";
  uint64_t string_end = want + h->string_size;
  want = align4(string_end);
  if (!bad && h->total_size != want) bad = "total_size";
  if (bad)
    return fail(d, VYRE_INVALID_PROGRAM,
                "invalid program: header field %s does not match the section layout "
                "(header, buffers, locals, instructions, strings, each 4-byte aligned). Fix: "
                "re-encode the program with vyre_builder_finish or `vyre asm`",
                bad);
  if (!zero_bytes(bytes, local_end, h->inst_offset) || !zero_bytes(bytes, string_end, size))
    return fail(d, VYRE_INVALID_PROGRAM,
                "invalid program: section padding bytes are not zero. Fix: re-encode the "
                "program; padding must be zero so the content hash is stable");
  return VYRE_OK;
}

static int name_char_ok(char c, int first) {
  if ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_') return 1;
  return !first && c >= '0' && c <= '9';
}

static vyre_status check_buffers(decoder *d, const uint8_t *bytes) {
  vyre_program *p = d->p;
  const vyre_program_header *h = &p->header;
  const char *strings = (const char *)bytes + h->string_offset;
  uint32_t name_pos = 0, last_binding = 0, kernel_index = 0, shared = 0;
  int have_binding = 0;
  p->buffer_count = h->buffer_count;
  p->buffers = calloc(h->buffer_count ? h->buffer_count : 1, sizeof *p->buffers);
  if (!p->buffers) return fail(d, VYRE_OUT_OF_MEMORY, "decode: out of host memory for buffers. Fix: free host memory");
  for (uint32_t i = 0; i < h->buffer_count; i++) {
    vyre_buffer_info *bi = &p->buffers[i];
    vyre_buffer_decl *bd = &bi->decl;
    memcpy(bd, bytes + h->buffer_offset + (size_t)i * sizeof *bd, sizeof *bd);
    if (bd->name_offset != name_pos || bd->name_size == 0 || bd->name_size > VYRE_MAX_NAME ||
        (uint64_t)bd->name_offset + bd->name_size > h->string_size)
      return fail(d, VYRE_INVALID_PROGRAM,
                  "invalid program: buffer %u: name at %u+%u is not the next 1..%u bytes of the "
                  "string section. Fix: names are stored back to back in declaration order",
                  i, bd->name_offset, bd->name_size, VYRE_MAX_NAME);
    memcpy(bi->name, strings + bd->name_offset, bd->name_size);
    bi->name[bd->name_size] = '\0';
    for (uint32_t k = 0; k < bd->name_size; k++) {
      if (!name_char_ok(bi->name[k], k == 0))
        return fail(d, VYRE_INVALID_PROGRAM,
                    "invalid program: buffer %u: name is not an identifier "
                    "([A-Za-z_][A-Za-z0-9_]*). Fix: rename the buffer",
                    i);
    }
    for (uint32_t j = 0; j < i; j++) {
      if (strcmp(p->buffers[j].name, bi->name) == 0)
        return fail(d, VYRE_INVALID_PROGRAM,
                    "invalid program: buffers %u and %u are both named '%s'. Fix: give each "
                    "buffer a unique name",
                    j, i, bi->name);
    }
    name_pos += bd->name_size;
    const char *nm = bi->name;
    if (bd->access >= VYRE_ACCESS_COUNT_)
      return fail(d, VYRE_INVALID_PROGRAM,
                  "invalid program: buffer %u '%s': access mode %u is unknown. Fix: use ro, rw, "
                  "wo, uniform or workgroup",
                  i, nm, bd->access);
    if (bd->elem_type == VYRE_T_VOID || bd->elem_type >= VYRE_T_COUNT_)
      return fail(d, VYRE_INVALID_PROGRAM,
                  "invalid program: buffer %u '%s': element type %u is not a storage type. Fix: "
                  "use one of %s",
                  i, nm, bd->elem_type, TYPE_LIST(VYRE_TM_STORAGE, NULL));
    if (bd->reserved0 || bd->reserved1 || (bd->flags & ~(VYRE_BUF_OUTPUT | VYRE_BUF_OUT_RANGE)))
      return fail(d, VYRE_INVALID_PROGRAM,
                  "invalid program: buffer %u '%s': reserved fields or unknown flags set. Fix: "
                  "zero them",
                  i, nm);
    bi->elem_size = vyre_type_size(bd->elem_type);
    bi->input_index = -1;
    bi->output_index = -1;
    if (bd->access == VYRE_ACCESS_WORKGROUP) {
      if (bd->binding != 0 || bd->flags != 0 || bd->count == 0 || bd->out_range_offset ||
          bd->out_range_size)
        return fail(d, VYRE_INVALID_PROGRAM,
                    "invalid program: buffer %u '%s': workgroup buffers need a fixed count > 0 "
                    "and no binding, flags or output range. Fix: declare e.g. `buffer %s "
                    "workgroup u32 [256]`",
                    i, nm, nm);
      uint64_t bytes_needed = (uint64_t)bd->count * bi->elem_size;
      uint32_t at = (shared + 15u) & ~15u;
      if (bytes_needed > VYRE_MAX_WORKGROUP_BYTES || at + bytes_needed > VYRE_MAX_WORKGROUP_BYTES)
        return fail(d, VYRE_LIMIT,
                    "invalid program: buffer %u '%s': workgroup memory would reach %llu bytes, "
                    "over the %u-byte limit. Fix: use fewer or smaller workgroup buffers",
                    i, nm, (unsigned long long)(at + bytes_needed), VYRE_MAX_WORKGROUP_BYTES);
      bi->role = VYRE_ROLE_SHARED;
      bi->shared_offset = at;
      bi->kernel_index = NONE;
      shared = at + (uint32_t)bytes_needed;
      p->features |= VYRE_FEAT_WORKGROUP_MEMORY;
      p->required_caps |= VYRE_CAP_WORKGROUP_MEMORY;
    } else {
      if (have_binding && bd->binding <= last_binding)
        return fail(d, VYRE_INVALID_PROGRAM,
                    "invalid program: buffer %u '%s': binding %u is not above the previous "
                    "binding %u. Fix: bindings increase strictly in declaration order",
                    i, nm, bd->binding, last_binding);
      have_binding = 1;
      last_binding = bd->binding;
      int flagged = (bd->flags & VYRE_BUF_OUTPUT) != 0;
      if (flagged && (bd->access == VYRE_ACCESS_READ_ONLY || bd->access == VYRE_ACCESS_UNIFORM))
        return fail(d, VYRE_INVALID_PROGRAM,
                    "invalid program: buffer %u '%s': a %s buffer cannot be an output. Fix: "
                    "declare it rw with the output flag, or wo",
                    i, nm, vyre_access_name(bd->access));
      if (bd->access == VYRE_ACCESS_WRITE_ONLY || flagged) bi->role = VYRE_ROLE_OUTPUT;
      else if (bd->access == VYRE_ACCESS_READ_WRITE) bi->role = VYRE_ROLE_INOUT;
      else bi->role = VYRE_ROLE_INPUT;
      bi->is_output = bi->role != VYRE_ROLE_INPUT;
      if (bi->role == VYRE_ROLE_OUTPUT && bd->count == 0)
        return fail(d, VYRE_INVALID_PROGRAM,
                    "invalid program: buffer %u '%s': a backend-allocated output needs a fixed "
                    "element count (0 means 'sized by its input', and it has none). Fix: give "
                    "the count, e.g. [1024]",
                    i, nm);
      if (bd->flags & VYRE_BUF_OUT_RANGE) {
        if (!bi->is_output)
          return fail(d, VYRE_INVALID_PROGRAM,
                      "invalid program: buffer %u '%s': only outputs have an output byte range. "
                      "Fix: drop the range or make the buffer an output",
                      i, nm);
        uint64_t end = (uint64_t)bd->out_range_offset + bd->out_range_size;
        if (bd->count && end > (uint64_t)bd->count * bi->elem_size)
          return fail(d, VYRE_INVALID_PROGRAM,
                      "invalid program: buffer %u '%s': output range [%u, %llu) is outside its "
                      "%llu bytes. Fix: shrink the range",
                      i, nm, bd->out_range_offset, (unsigned long long)end,
                      (unsigned long long)bd->count * bi->elem_size);
      } else if (bd->out_range_offset || bd->out_range_size) {
        return fail(d, VYRE_INVALID_PROGRAM,
                    "invalid program: buffer %u '%s': output range fields set without the "
                    "range flag. Fix: set VYRE_BUF_OUT_RANGE or zero them",
                    i, nm);
      }
      bi->kernel_index = kernel_index++;
      if (bi->role == VYRE_ROLE_INPUT || bi->role == VYRE_ROLE_INOUT)
        bi->input_index = (int32_t)p->input_count++;
      if (bi->is_output) bi->output_index = (int32_t)p->output_count++;
    }
    if (bd->elem_type == VYRE_T_F16) {
      p->features |= VYRE_FEAT_F16;
      p->required_caps |= VYRE_CAP_F16;
    }
    if (bd->elem_type == VYRE_T_BF16) {
      p->features |= VYRE_FEAT_BF16;
      p->required_caps |= VYRE_CAP_BF16;
    }
  }
  if (name_pos != h->string_size)
    return fail(d, VYRE_INVALID_PROGRAM,
                "invalid program: the string section has %u bytes but the names use %u. Fix: the "
                "string section holds exactly the buffer names",
                h->string_size, name_pos);
  p->kernel_buffer_count = kernel_index;
  p->shared_bytes = shared;
  return VYRE_OK;
}

/* ------------------------------------------------------------------ */
/* Instructions                                                        */
/* ------------------------------------------------------------------ */

/* Check that operand `v` of instruction i names a visible value; its type
 * goes to *type. */
static vyre_status value(decoder *d, uint32_t i, const char *which, uint32_t v, uint32_t *type) {
  vyre_program *p = d->p;
  const vyre_inst *in = &p->insts[i];
  if (v >= i)
    return fail(d, VYRE_INVALID_PROGRAM,
                INST_FMT "operand %s = %%%u is not an earlier instruction. Fix: operands name "
                         "values defined before their use",
                i, mnem(in), which, v);
  if (p->value_type[v] == VYRE_T_VOID)
    return fail(d, VYRE_INVALID_PROGRAM,
                INST_FMT "operand %s = %%%u is a statement (%s), not a value. Fix: name an "
                         "expression instruction",
                i, mnem(in), which, v, mnem(&p->insts[v]));
  if (d->scope[v] != NONE && !d->open[d->scope[v]])
    return fail(d, VYRE_INVALID_PROGRAM,
                INST_FMT "operand %s = %%%u was defined inside a block that has ended (at "
                         "instruction %u). Fix: values do not escape their block; carry them "
                         "out in a local (let/assign)",
                i, mnem(in), which, v, d->scope[v]);
  if (d->segment[v] != d->grid_segment)
    return fail(d, VYRE_INVALID_PROGRAM,
                INST_FMT "operand %s = %%%u was defined before a grid barrier. Fix: values do "
                         "not cross grid barriers; carry them in a local",
                i, mnem(in), which, v);
  *type = p->value_type[v];
  return VYRE_OK;
}

static vyre_status want_type(decoder *d, uint32_t i, const char *which, uint32_t got,
                             uint32_t want) {
  if (got == want) return VYRE_OK;
  return fail(d, VYRE_INVALID_PROGRAM,
              INST_FMT "operand %s has type %s, expected %s. Fix: pass a %s value, e.g. "
                       "convert it first with `cast %s`",
              i, mnem(&d->p->insts[i]), which, vyre_type_name(got), vyre_type_name(want),
              vyre_type_name(want), vyre_type_name(want));
}

static vyre_status operand(decoder *d, uint32_t i, const char *which, uint32_t v,
                           uint32_t want) {
  uint32_t t;
  vyre_status st = value(d, i, which, v, &t);
  return st ? st : want_type(d, i, which, t, want);
}

static vyre_status buffer_ref(decoder *d, uint32_t i, uint32_t buf, const vyre_buffer_info **out) {
  if (buf >= d->p->buffer_count)
    return fail(d, VYRE_INVALID_PROGRAM,
                INST_FMT "buffer %u does not exist (the program declares %u). Fix: name a "
                         "declared buffer",
                i, mnem(&d->p->insts[i]), buf, d->p->buffer_count);
  *out = &d->p->buffers[buf];
  return VYRE_OK;
}

static vyre_status slot_ref(decoder *d, uint32_t i, uint32_t slot, int must_be_live) {
  vyre_program *p = d->p;
  if (slot >= p->local_count)
    return fail(d, VYRE_INVALID_PROGRAM,
                INST_FMT "local %u does not exist (the program declares %u). Fix: declare the "
                         "local",
                i, mnem(&p->insts[i]), slot, p->local_count);
  if (must_be_live) {
    if (!d->local_def[slot])
      return fail(d, VYRE_INVALID_PROGRAM,
                  INST_FMT "local %u is used before its let. Fix: initialise it with let first",
                  i, mnem(&p->insts[i]), slot);
    if (d->local_scope[slot] != NONE && !d->open[d->local_scope[slot]])
      return fail(d, VYRE_INVALID_PROGRAM,
                  INST_FMT "local %u was declared in a block that has ended. Fix: declare it "
                           "(let) in a block that encloses this use",
                  i, mnem(&p->insts[i]), slot);
  }
  return VYRE_OK;
}

static vyre_status define_slot(decoder *d, uint32_t i, uint32_t slot, uint8_t how) {
  vyre_status st = slot_ref(d, i, slot, 0);
  if (st) return st;
  if (d->local_def[slot])
    return fail(d, VYRE_INVALID_PROGRAM,
                INST_FMT "local %u is declared twice. Fix: each local has exactly one let (or "
                         "loop); use assign to change it",
                i, mnem(&d->p->insts[i]), slot);
  d->local_def[slot] = how;
  d->local_scope[slot] = d->depth ? d->stack[d->depth - 1] : NONE;
  return VYRE_OK;
}

static vyre_status push_block(decoder *d, uint32_t i) {
  if (d->depth >= VYRE_MAX_NESTING)
    return fail(d, VYRE_LIMIT,
                INST_FMT "blocks nest deeper than %u. Fix: flatten the control flow", i,
                mnem(&d->p->insts[i]), VYRE_MAX_NESTING);
  d->stack[d->depth++] = i;
  d->open[i] = 1;
  return VYRE_OK;
}

/* Per-class checks.  Each checks the operands its class's schema
 * (VYRE_OP_CLASS_MAP) gives it, in the order the messages promise, and
 * sets the features the class implies; check_inst does what the schema
 * says for every class (unused fields zero, value or statement, op-flag
 * features). */
typedef vyre_status (*class_check)(decoder *d, uint32_t i, const vyre_op_info *info);

static int type_in_mask(const vyre_op_info *info, uint32_t t) {
  return t < VYRE_T_COUNT_ && (info->type_mask & VYRE_TBIT(t)) != 0;
}

static void need(vyre_program *p, uint32_t feature, uint64_t cap) {
  p->features |= feature;
  p->required_caps |= cap;
}

/* The range check of mod, by the class's mod kind. */
static vyre_status check_mod(decoder *d, uint32_t i, const vyre_op_info *info) {
  const vyre_inst *in = &d->p->insts[i];
  switch ((vyre_mod_kind)vyre_op_class_lookup(info->op_class)->mod) {
  case VYRE_MOD_AXIS:
    if (in->mod > 2)
      return fail(d, VYRE_INVALID_PROGRAM, INST_FMT "axis %u is not x, y or z. Fix: use "
                  "axis 0..2", i, mnem(in), in->mod);
    break;
  case VYRE_MOD_ORDER:
    if (in->mod >= VYRE_ORDER_COUNT_)
      return fail(d, VYRE_INVALID_PROGRAM, INST_FMT "memory order %u is unknown. Fix: use "
                  "relaxed acquire release acq_rel or seq_cst", i, mnem(in), in->mod);
    break;
  case VYRE_MOD_REDUCE:
    if (in->mod >= VYRE_REDUCE_COUNT_)
      return fail(d, VYRE_INVALID_PROGRAM, INST_FMT "reduction kind %u is unknown. Fix: use "
                  "add (0), min (1), max (2), and (3), or (4) or xor (5)", i, mnem(in), in->mod);
    break;
  case VYRE_MOD_SCOPE:
    if (in->mod > VYRE_BARRIER_GRID)
      return fail(d, VYRE_INVALID_PROGRAM, INST_FMT "barrier scope %u is unknown. Fix: use "
                  "workgroup (0) or grid (1)", i, mnem(in), in->mod);
    break;
  case VYRE_MOD_NONE: break;
  }
  return VYRE_OK;
}

/* A result type the class fixes (u32, f32) but the instruction differs. */
static vyre_status want_result(decoder *d, uint32_t i, uint32_t want, const char *what,
                               const char *fix) {
  if (d->p->insts[i].type == want) return VYRE_OK;
  return fail(d, VYRE_INVALID_PROGRAM, INST_FMT "%s must be %s. Fix: %s", i,
              mnem(&d->p->insts[i]), what, vyre_type_name(want), fix);
}

static vyre_status check_const(decoder *d, uint32_t i, const vyre_op_info *info) {
  const vyre_inst *in = &d->p->insts[i];
  uint32_t t = in->type;
  if (!type_in_mask(info, t))
    return fail(d, VYRE_INVALID_PROGRAM, INST_FMT "type %u is not a value type. Fix: use %s", i,
                mnem(in), t, TYPE_LIST(VYRE_TM_VALUE, " or "));
  if (t != VYRE_T_U64 && t != VYRE_T_I64 && in->b != 0)
    return fail(d, VYRE_INVALID_PROGRAM, INST_FMT "a 32-bit constant has high bits 0x%x. Fix: "
                "zero operand b", i, mnem(in), in->b);
  if (t == VYRE_T_BOOL && in->a > 1)
    return fail(d, VYRE_INVALID_PROGRAM, INST_FMT "bool constant %u is not 0 or 1. Fix: use "
                "true or false", i, mnem(in), in->a);
  if (t == VYRE_T_F32 && vyre_f32_canonical_bits(in->a) != in->a)
    return fail(d, VYRE_INVALID_PROGRAM, INST_FMT "f32 constant 0x%08x is not canonical "
                "(NaN must be 0x7fc00000, subnormals are flushed). Fix: write the canonical "
                "value", i, mnem(in), in->a);
  return VYRE_OK;
}

static vyre_status check_local_get(decoder *d, uint32_t i, const vyre_op_info *info) {
  (void)info;
  vyre_program *p = d->p;
  const vyre_inst *in = &p->insts[i];
  vyre_status st = slot_ref(d, i, in->a, 1);
  if (st) return st;
  if (in->type != p->local_types[in->a])
    return fail(d, VYRE_INVALID_PROGRAM, INST_FMT "type %s differs from local %u's type %s. "
                "Fix: use the local's type", i, mnem(in), vyre_type_name(in->type), in->a,
                vyre_type_name(p->local_types[in->a]));
  return VYRE_OK;
}

static vyre_status check_load(decoder *d, uint32_t i, const vyre_op_info *info) {
  (void)info;
  const vyre_inst *in = &d->p->insts[i];
  const vyre_buffer_info *buf;
  vyre_status st;
  if ((st = buffer_ref(d, i, in->a, &buf))) return st;
  if (buf->decl.access == VYRE_ACCESS_WRITE_ONLY)
    return fail(d, VYRE_INVALID_PROGRAM, INST_FMT "buffer '%s' is write-only. Fix: declare "
                "it rw (with the output flag if the backend should allocate it)", i, mnem(in),
                buf->name);
  if ((st = operand(d, i, "index", in->b, VYRE_T_U32))) return st;
  uint32_t yields = vyre_type_compute(buf->decl.elem_type);
  if (in->type != yields)
    return fail(d, VYRE_INVALID_PROGRAM, INST_FMT "type %s, but loading '%s' (%s) yields %s. "
                "Fix: set the load's type to %s", i, mnem(in), vyre_type_name(in->type),
                buf->name, vyre_type_name(buf->decl.elem_type), vyre_type_name(yields),
                vyre_type_name(yields));
  return VYRE_OK;
}

static vyre_status check_buf_len(decoder *d, uint32_t i, const vyre_op_info *info) {
  (void)info;
  const vyre_buffer_info *buf;
  vyre_status st = buffer_ref(d, i, d->p->insts[i].a, &buf);
  return st ? st : want_result(d, i, VYRE_T_U32, "type", "buflen is u32");
}

static vyre_status check_builtin(decoder *d, uint32_t i, const vyre_op_info *info) {
  vyre_status st = want_result(d, i, VYRE_T_U32, "type", "ids are u32");
  if (st) return st;
  return (info->flags & VYRE_OPF_AXIS) ? check_mod(d, i, info) : VYRE_OK;
}

/* The result of binary/compare/unary/predicate: bool for the classes whose
 * rule says so, else the operand type. */
static vyre_status check_result_rule(decoder *d, uint32_t i, const vyre_op_info *info,
                                     uint32_t operand_type) {
  uint32_t t = d->p->insts[i].type;
  uint32_t want = vyre_op_class_lookup(info->op_class)->result == VYRE_RES_BOOL
                      ? (uint32_t)VYRE_T_BOOL
                      : operand_type;
  if (t == want) return VYRE_OK;
  return fail(d, VYRE_INVALID_PROGRAM, INST_FMT "result type %s should be %s. Fix: set the "
              "instruction type", i, mnem(&d->p->insts[i]), vyre_type_name(t),
              vyre_type_name(want));
}

static vyre_status check_binary(decoder *d, uint32_t i, const vyre_op_info *info) {
  const vyre_inst *in = &d->p->insts[i];
  uint32_t ta, tb;
  vyre_status st;
  if ((st = value(d, i, "a", in->a, &ta)) || (st = value(d, i, "b", in->b, &tb))) return st;
  if (ta != tb)
    return fail(d, VYRE_INVALID_PROGRAM, INST_FMT "operands have types %s and %s. Fix: cast "
                "one so both match", i, mnem(in), vyre_type_name(ta), vyre_type_name(tb));
  if (!type_in_mask(info, ta))
    return fail(d, VYRE_INVALID_PROGRAM, INST_FMT "does not accept %s operands. Fix: see "
                "docs/program-format.md for the types each op takes", i, mnem(in),
                vyre_type_name(ta));
  return check_result_rule(d, i, info, ta);
}

static vyre_status check_unary(decoder *d, uint32_t i, const vyre_op_info *info) {
  const vyre_inst *in = &d->p->insts[i];
  uint32_t ta;
  vyre_status st = value(d, i, "a", in->a, &ta);
  if (st) return st;
  if (!type_in_mask(info, ta))
    return fail(d, VYRE_INVALID_PROGRAM, INST_FMT "does not accept a %s operand. Fix: see "
                "docs/program-format.md for the types each op takes", i, mnem(in),
                vyre_type_name(ta));
  return check_result_rule(d, i, info, ta);
}

static vyre_status check_select(decoder *d, uint32_t i, const vyre_op_info *info) {
  (void)info;
  const vyre_inst *in = &d->p->insts[i];
  uint32_t tb, tc;
  vyre_status st;
  if ((st = operand(d, i, "condition", in->a, VYRE_T_BOOL))) return st;
  if ((st = value(d, i, "b", in->b, &tb)) || (st = value(d, i, "c", in->c, &tc))) return st;
  if (tb != tc || in->type != tb)
    return fail(d, VYRE_INVALID_PROGRAM, INST_FMT "arms have types %s and %s, result %s. Fix: "
                "both arms and the result share one type", i, mnem(in), vyre_type_name(tb),
                vyre_type_name(tc), vyre_type_name(in->type));
  return VYRE_OK;
}

static vyre_status check_cast(decoder *d, uint32_t i, const vyre_op_info *info) {
  const vyre_inst *in = &d->p->insts[i];
  uint32_t ta;
  vyre_status st = value(d, i, "a", in->a, &ta);
  if (st) return st;
  if (!type_in_mask(info, in->type))
    return fail(d, VYRE_INVALID_PROGRAM, INST_FMT "target type %s is not a value type. Fix: "
                "cast to %s (narrow types are storage only)", i, mnem(in),
                vyre_type_name(in->type), TYPE_LIST(VYRE_TM_VALUE, " or "));
  return VYRE_OK;
}

static vyre_status check_fma(decoder *d, uint32_t i, const vyre_op_info *info) {
  (void)info;
  const vyre_inst *in = &d->p->insts[i];
  vyre_status st;
  if ((st = operand(d, i, "a", in->a, VYRE_T_F32)) || (st = operand(d, i, "b", in->b, VYRE_T_F32)) ||
      (st = operand(d, i, "c", in->c, VYRE_T_F32)))
    return st;
  return want_result(d, i, VYRE_T_F32, "result type", "fma is f32");
}

/* ATOMIC and ATOMIC_CAS (which also has d = desired). */
static vyre_status check_atomic(decoder *d, uint32_t i, const vyre_op_info *info) {
  vyre_program *p = d->p;
  const vyre_inst *in = &p->insts[i];
  uint32_t t = in->type;
  const vyre_buffer_info *buf;
  vyre_status st;
  if ((st = buffer_ref(d, i, in->a, &buf))) return st;
  if (buf->decl.access != VYRE_ACCESS_READ_WRITE && buf->decl.access != VYRE_ACCESS_WORKGROUP)
    return fail(d, VYRE_INVALID_PROGRAM, INST_FMT "buffer '%s' is %s; atomics need rw or "
                "workgroup. Fix: declare it rw (add the output flag for a zeroed output)", i,
                mnem(in), buf->name, vyre_access_name(buf->decl.access));
  if (!type_in_mask(info, buf->decl.elem_type))
    return fail(d, VYRE_INVALID_PROGRAM, INST_FMT "buffer '%s' holds %s; atomics work on u32 "
                "i32 u64 i64. Fix: change the element type", i, mnem(in), buf->name,
                vyre_type_name(buf->decl.elem_type));
  if (t != buf->decl.elem_type)
    return fail(d, VYRE_INVALID_PROGRAM, INST_FMT "type %s differs from buffer '%s' (%s). "
                "Fix: set the type to the element type", i, mnem(in), vyre_type_name(t),
                buf->name, vyre_type_name(buf->decl.elem_type));
  if ((st = operand(d, i, "index", in->b, VYRE_T_U32)) || (st = operand(d, i, "value", in->c, t)))
    return st;
  if (vyre_op_class_lookup(info->op_class)->operand[3] == VYRE_OPND_VALUE &&
      (st = operand(d, i, "desired", in->d, t)))
    return st;
  if ((st = check_mod(d, i, info))) return st;
  need(p, VYRE_FEAT_ATOMIC, VYRE_CAP_ATOMICS);
  if (t == VYRE_T_U64 || t == VYRE_T_I64) need(p, VYRE_FEAT_ATOMIC64, VYRE_CAP_ATOMIC64);
  return VYRE_OK;
}

static vyre_status check_ballot(decoder *d, uint32_t i, const vyre_op_info *info) {
  (void)info;
  vyre_status st = operand(d, i, "a", d->p->insts[i].a, VYRE_T_BOOL);
  return st ? st : want_result(d, i, VYRE_T_U32, "result type", "a ballot is a u32 lane mask");
}

static vyre_status check_shuffle(decoder *d, uint32_t i, const vyre_op_info *info) {
  (void)info;
  const vyre_inst *in = &d->p->insts[i];
  vyre_status st;
  if ((st = operand(d, i, "value", in->a, in->type)) ||
      (st = operand(d, i, "lane", in->b, VYRE_T_U32)))
    return st;
  return VYRE_OK;
}

static vyre_status check_reduce(decoder *d, uint32_t i, const vyre_op_info *info) {
  const vyre_inst *in = &d->p->insts[i];
  uint32_t t = in->type;
  vyre_status st;
  if ((st = operand(d, i, "value", in->a, t)) || (st = check_mod(d, i, info))) return st;
  if (!type_in_mask(info, t) || (t == VYRE_T_F32 && in->mod >= VYRE_REDUCE_AND))
    return fail(d, VYRE_INVALID_PROGRAM, INST_FMT "reduce %s over %s is not defined. Fix: "
                "add/min/max take integers or f32; and/or/xor take integers", i, mnem(in),
                vyre_reduce_name(in->mod), vyre_type_name(t));
  return VYRE_OK;
}

static vyre_status check_let(decoder *d, uint32_t i, const vyre_op_info *info) {
  (void)info;
  const vyre_inst *in = &d->p->insts[i];
  uint32_t tb;
  vyre_status st;
  if ((st = value(d, i, "value", in->b, &tb))) return st;
  if ((st = define_slot(d, i, in->a, 1))) return st;
  return want_type(d, i, "value", tb, d->p->local_types[in->a]);
}

static vyre_status check_assign(decoder *d, uint32_t i, const vyre_op_info *info) {
  (void)info;
  const vyre_inst *in = &d->p->insts[i];
  uint32_t tb;
  vyre_status st;
  if ((st = slot_ref(d, i, in->a, 1))) return st;
  if (d->local_def[in->a] == 2)
    return fail(d, VYRE_INVALID_PROGRAM, INST_FMT "local %u is a loop counter. Fix: loop "
                "counters are read-only; copy it into another local", i, mnem(in), in->a);
  if ((st = value(d, i, "value", in->b, &tb))) return st;
  return want_type(d, i, "value", tb, d->p->local_types[in->a]);
}

static vyre_status check_store(decoder *d, uint32_t i, const vyre_op_info *info) {
  (void)info;
  const vyre_inst *in = &d->p->insts[i];
  const vyre_buffer_info *buf;
  vyre_status st;
  if ((st = buffer_ref(d, i, in->a, &buf))) return st;
  if (buf->decl.access == VYRE_ACCESS_READ_ONLY || buf->decl.access == VYRE_ACCESS_UNIFORM)
    return fail(d, VYRE_INVALID_PROGRAM, INST_FMT "buffer '%s' is %s. Fix: declare it rw or "
                "wo to write it", i, mnem(in), buf->name, vyre_access_name(buf->decl.access));
  if ((st = operand(d, i, "index", in->b, VYRE_T_U32)) ||
      (st = operand(d, i, "value", in->c, vyre_type_compute(buf->decl.elem_type))))
    return st;
  return VYRE_OK;
}

static vyre_status check_if(decoder *d, uint32_t i, const vyre_op_info *info) {
  (void)info;
  vyre_status st = operand(d, i, "condition", d->p->insts[i].a, VYRE_T_BOOL);
  return st ? st : push_block(d, i);
}

static vyre_status check_else(decoder *d, uint32_t i, const vyre_op_info *info) {
  (void)info;
  vyre_program *p = d->p;
  uint32_t top = d->depth ? d->stack[d->depth - 1] : NONE;
  if (top == NONE || p->insts[top].op != VYRE_OP_IF || p->match[top] != NONE)
    return fail(d, VYRE_INVALID_PROGRAM, INST_FMT "does not follow an open if. Fix: else "
                "belongs to the innermost if, once", i, mnem(&p->insts[i]));
  p->match[top] = i;
  d->open[top] = 0;
  d->depth--;
  return push_block(d, i);
}

static vyre_status check_end(decoder *d, uint32_t i, const vyre_op_info *info) {
  (void)info;
  vyre_program *p = d->p;
  if (!d->depth)
    return fail(d, VYRE_INVALID_PROGRAM, INST_FMT "closes no block. Fix: remove the stray "
                "end", i, mnem(&p->insts[i]));
  uint32_t top = d->stack[--d->depth];
  d->open[top] = 0;
  p->match[i] = top;
  if (p->insts[top].op == VYRE_OP_ELSE) {
    /* The IF points at its ELSE; the ELSE points at this END. */
    p->match[top] = i;
  } else {
    if (p->match[top] == NONE) p->match[top] = i;
  }
  return VYRE_OK;
}

static vyre_status check_loop(decoder *d, uint32_t i, const vyre_op_info *info) {
  (void)info;
  vyre_program *p = d->p;
  const vyre_inst *in = &p->insts[i];
  vyre_status st;
  if ((st = slot_ref(d, i, in->a, 0))) return st;
  uint32_t lt = p->local_types[in->a];
  if (lt != VYRE_T_U32 && lt != VYRE_T_I32)
    return fail(d, VYRE_INVALID_PROGRAM, INST_FMT "loop counter local %u is %s. Fix: loop "
                "counters are u32 or i32", i, mnem(in), in->a, vyre_type_name(lt));
  if ((st = operand(d, i, "start", in->b, lt)) || (st = operand(d, i, "end", in->c, lt)))
    return st;
  if ((st = push_block(d, i))) return st;
  if ((st = define_slot(d, i, in->a, 2))) return st;
  p->features |= VYRE_FEAT_LOOP;
  return VYRE_OK;
}

static vyre_status check_block(decoder *d, uint32_t i, const vyre_op_info *info) {
  (void)info;
  return push_block(d, i);
}

static vyre_status check_return(decoder *d, uint32_t i, const vyre_op_info *info) {
  (void)i, (void)info;
  d->p->features |= VYRE_FEAT_RETURN;
  return VYRE_OK;
}

static vyre_status check_barrier(decoder *d, uint32_t i, const vyre_op_info *info) {
  const vyre_inst *in = &d->p->insts[i];
  vyre_status st = check_mod(d, i, info);
  if (st) return st;
  if (in->mod == VYRE_BARRIER_GRID) {
    if (d->depth)
      return fail(d, VYRE_INVALID_PROGRAM, INST_FMT "a grid barrier must be at the top level "
                  "of the body. Fix: move it out of every if/loop/block", i, mnem(in));
    d->grid_segment++;
    need(d->p, VYRE_FEAT_GRID_BARRIER, VYRE_CAP_GRID_BARRIER);
  } else {
    need(d->p, VYRE_FEAT_BARRIER, VYRE_CAP_BARRIER);
  }
  return VYRE_OK;
}

static vyre_status check_trap(decoder *d, uint32_t i, const vyre_op_info *info) {
  (void)i, (void)info;
  need(d->p, VYRE_FEAT_TRAP, VYRE_CAP_TRAP);
  return VYRE_OK;
}

static const class_check class_checks[VYRE_OC_COUNT_] = {
    [VYRE_OC_CONST] = check_const,       [VYRE_OC_LOCAL_GET] = check_local_get,
    [VYRE_OC_LOAD] = check_load,         [VYRE_OC_BUF_LEN] = check_buf_len,
    [VYRE_OC_BUILTIN] = check_builtin,   [VYRE_OC_BINARY] = check_binary,
    [VYRE_OC_COMPARE] = check_binary,    [VYRE_OC_UNARY] = check_unary,
    [VYRE_OC_PREDICATE] = check_unary,   [VYRE_OC_SELECT] = check_select,
    [VYRE_OC_CAST] = check_cast,         [VYRE_OC_FMA] = check_fma,
    [VYRE_OC_ATOMIC] = check_atomic,     [VYRE_OC_ATOMIC_CAS] = check_atomic,
    [VYRE_OC_BALLOT] = check_ballot,     [VYRE_OC_SHUFFLE] = check_shuffle,
    [VYRE_OC_REDUCE] = check_reduce,     [VYRE_OC_LET] = check_let,
    [VYRE_OC_ASSIGN] = check_assign,     [VYRE_OC_STORE] = check_store,
    [VYRE_OC_IF] = check_if,             [VYRE_OC_ELSE] = check_else,
    [VYRE_OC_END] = check_end,           [VYRE_OC_LOOP] = check_loop,
    [VYRE_OC_BLOCK] = check_block,       [VYRE_OC_RETURN] = check_return,
    [VYRE_OC_BARRIER] = check_barrier,   [VYRE_OC_TRAP] = check_trap,
};

/* The checks of one instruction; sets value_type[i]. */
static vyre_status check_inst(decoder *d, uint32_t i) {
  vyre_program *p = d->p;
  const vyre_inst *in = &p->insts[i];
  const vyre_op_info *info = vyre_op_lookup(in->op);
  if (!info)
    return fail(d, VYRE_INVALID_PROGRAM,
                "invalid program: instruction %u: unknown op id %u. Fix: the program was made "
                "for a newer format or is corrupt; see `vyre info` for supported ops",
                i, in->op);
  vyre_status st = class_checks[info->op_class](d, i, info);
  if (st) return st;
  if (info->flags & VYRE_OPF_SUBGROUP) need(p, VYRE_FEAT_SUBGROUP, VYRE_CAP_SUBGROUP);
  if (info->flags & VYRE_OPF_TRANSCENDENTAL) need(p, VYRE_FEAT_TRANSCENDENTAL, VYRE_CAP_TRANSCENDENTAL);
  /* Canonical encoding: every field the class does not use is zero. */
  uint32_t used = vyre_op_fields(info);
  if ((!(used & VYRE_FIELD_A) && in->a) || (!(used & VYRE_FIELD_B) && in->b) ||
      (!(used & VYRE_FIELD_C) && in->c) || (!(used & VYRE_FIELD_D) && in->d) ||
      (!(used & VYRE_FIELD_TYPE) && in->type) || (!(used & VYRE_FIELD_MOD) && in->mod))
    return fail(d, VYRE_INVALID_PROGRAM,
                INST_FMT "sets an operand, type or modifier field it does not use. Fix: zero "
                         "unused fields (one program, one encoding)",
                i, mnem(in));
  int is_value = vyre_op_class_lookup(info->op_class)->result != VYRE_RES_NONE;
  p->value_type[i] = is_value ? (uint8_t)in->type : VYRE_T_VOID;
  return VYRE_OK;
}

/* ------------------------------------------------------------------ */
/* Uniformity: which values and blocks are the same for every          */
/* invocation of a workgroup; barriers and subgroup ops need uniform    */
/* control flow.                                                        */
/* ------------------------------------------------------------------ */
static int value_uniform(const vyre_program *p, const uint8_t *local_uniform, uint32_t i) {
  const vyre_inst *in = &p->insts[i];
  const uint8_t *u = p->uniform;
  switch (in->op) {
  case VYRE_OP_CONST:
  case VYRE_OP_BUF_LEN:
  case VYRE_OP_WORKGROUP_ID:
  case VYRE_OP_SUBGROUP_SIZE: return 1;
  case VYRE_OP_INVOCATION_ID:
  case VYRE_OP_LOCAL_ID:
  case VYRE_OP_SUBGROUP_LANE: return 0;
  case VYRE_OP_LOCAL_GET: return local_uniform[in->a];
  case VYRE_OP_LOAD: {
    uint32_t acc = p->buffers[in->a].decl.access;
    return (acc == VYRE_ACCESS_READ_ONLY || acc == VYRE_ACCESS_UNIFORM) && u[in->b];
  }
  default: break;
  }
  const vyre_op_info *info = vyre_op_lookup(in->op);
  switch ((vyre_op_class)info->op_class) {
  case VYRE_OC_BINARY:
  case VYRE_OC_COMPARE: return u[in->a] && u[in->b];
  case VYRE_OC_UNARY:
  case VYRE_OC_PREDICATE:
  case VYRE_OC_CAST: return u[in->a];
  case VYRE_OC_SELECT:
  case VYRE_OC_FMA: return u[in->a] && u[in->b] && u[in->c];
  default: return 0; /* atomics, subgroup results */
  }
}

/* Scratch of the uniformity analysis. */
typedef struct uniformity {
  uint8_t *local_uniform; /* per slot */
  uint32_t *loop_diverges; /* per LOOP: 1 + the index of a divergent return/trap inside it, else 0 */
  uint8_t *cf;            /* per open block depth: control flow uniform */
  uint32_t *cause;        /* per depth: the instruction that made it divergent, or NONE */
  uint32_t *open_loops;
} uniformity;

/* One pass of the fixpoint: derive p->uniform, locals and loop
 * divergence from the facts so far; 1 when a fact changed. */
static int uniformity_pass(vyre_program *p, uniformity *u) {
  uint32_t n = p->inst_count;
  int changed = 0;
  uint32_t depth = 0, nloops = 0;
  u->cf[0] = 1;
  u->cause[0] = NONE;
  uint32_t diverged_at = NONE; /* a non-uniform return/trap was passed */
  for (uint32_t i = 0; i < n; i++) {
    const vyre_inst *in = &p->insts[i];
    int here = u->cf[depth] && diverged_at == NONE;
    uint32_t why = diverged_at != NONE ? diverged_at : u->cause[depth];
    if (p->value_type[i] != VYRE_T_VOID) p->uniform[i] = (uint8_t)value_uniform(p, u->local_uniform, i);
    else p->uniform[i] = (uint8_t)here;
    switch (in->op) {
    case VYRE_OP_LET:
    case VYRE_OP_ASSIGN:
      if (u->local_uniform[in->a] && !(here && p->uniform[in->b])) {
        u->local_uniform[in->a] = 0;
        changed = 1;
      }
      break;
    case VYRE_OP_IF:
      depth++;
      u->cf[depth] = (uint8_t)(here && p->uniform[in->a]);
      u->cause[depth] = here && !p->uniform[in->a] ? i : why;
      p->uniform[i] = u->cf[depth];
      break;
    case VYRE_OP_ELSE:
      /* Same uniformity as its IF, which is still u->cf[depth]. */
      p->uniform[i] = u->cf[depth];
      break;
    case VYRE_OP_LOOP: {
      int uni = here && p->uniform[in->b] && p->uniform[in->c] && !u->loop_diverges[i];
      if (u->local_uniform[in->a] && !uni) {
        u->local_uniform[in->a] = 0;
        changed = 1;
      }
      depth++;
      u->cf[depth] = (uint8_t)uni;
      u->cause[depth] = uni ? NONE : (here ? i : why);
      p->uniform[i] = (uint8_t)uni;
      u->open_loops[nloops++] = i;
      break;
    }
    case VYRE_OP_BLOCK:
      depth++;
      u->cf[depth] = (uint8_t)here;
      u->cause[depth] = why;
      break;
    case VYRE_OP_END:
      if (p->insts[p->match[i]].op == VYRE_OP_LOOP) nloops--;
      depth--;
      break;
    case VYRE_OP_RETURN:
    case VYRE_OP_TRAP:
      if (!here) {
        if (diverged_at == NONE) diverged_at = i;
        /* Later iterations of every enclosing loop run with fewer
         * invocations, so the whole loop body is divergent. */
        for (uint32_t k = 0; k < nloops; k++) {
          if (!u->loop_diverges[u->open_loops[k]]) {
            u->loop_diverges[u->open_loops[k]] = i + 1u;
            changed = 1;
          }
        }
      }
      break;
    default: break;
    }
  }
  return changed;
}

/* Check the placement rules (barriers and subgroup collectives in uniform
 * control flow) with the final facts. */
static vyre_status check_placement(decoder *d, uniformity *u) {
  vyre_program *p = d->p;
  uint32_t n = p->inst_count;
  vyre_status st = VYRE_OK;
  uint32_t depth = 0;
  u->cf[0] = 1;
  u->cause[0] = NONE;
  uint32_t diverged_at = NONE;
  for (uint32_t i = 0; i < n && !st; i++) {
    const vyre_inst *in = &p->insts[i];
    int here = u->cf[depth] && diverged_at == NONE;
    uint32_t why = diverged_at != NONE ? diverged_at : u->cause[depth];
    const char *what = NULL;
    if (in->op == VYRE_OP_BARRIER) what = in->mod == VYRE_BARRIER_GRID ? "grid barrier" : "barrier";
    else if (vyre_op_lookup(in->op)->flags & VYRE_OPF_COLLECTIVE)
      what = "subgroup operation";
    if (what && !here) {
      const vyre_inst *w = why != NONE ? &p->insts[why] : NULL;
      if (w && w->op == VYRE_OP_LOOP && u->loop_diverges[why] && p->uniform[w->b] &&
          p->uniform[w->c]) {
        /* The bounds are uniform: the loop diverges because an early
         * exit inside it drops invocations from later iterations. */
        uint32_t exit = u->loop_diverges[why] - 1u;
        st = fail(d, VYRE_INVALID_PROGRAM,
                  INST_FMT "%s inside the loop at instruction %u, which a %s in divergent "
                           "control flow (instruction %u) leaves early: later iterations run "
                           "without the invocations that left, so not every invocation "
                           "reaches it. Fix: guard the rest of the iteration with if instead "
                           "of the %s, or move the %s out of the loop",
                  i, mnem(in), what, why, mnem(&p->insts[exit]), exit, mnem(&p->insts[exit]),
                  what);
      } else if (w && (w->op == VYRE_OP_RETURN || w->op == VYRE_OP_TRAP))
        st = fail(d, VYRE_INVALID_PROGRAM,
                  INST_FMT "%s after a %s in divergent control flow (instruction %u): not "
                           "every invocation reaches it. Fix: guard the work with if instead "
                           "of returning early",
                  i, mnem(in), what, mnem(&p->insts[why]), why);
      else
        st = fail(d, VYRE_INVALID_PROGRAM,
                  INST_FMT "%s in control flow that differs between invocations (the "
                           "condition or bounds at instruction %u depend on the invocation). "
                           "Fix: move it out of that if/loop, or make the condition uniform "
                           "(constants, buflen, wgid, ro/uniform loads)",
                  i, mnem(in), what, why);
      break;
    }
    switch (in->op) {
    case VYRE_OP_IF:
    case VYRE_OP_LOOP:
      depth++;
      u->cf[depth] = p->uniform[i];
      u->cause[depth] = here && !p->uniform[i] ? i : why;
      break;
    case VYRE_OP_BLOCK:
      depth++;
      u->cf[depth] = (uint8_t)here;
      u->cause[depth] = why;
      break;
    case VYRE_OP_END: depth--; break;
    case VYRE_OP_RETURN:
    case VYRE_OP_TRAP:
      if (!here && diverged_at == NONE) diverged_at = i;
      break;
    default: break;
    }
  }
  return st;
}

static vyre_status analyse_uniformity(decoder *d) {
  vyre_program *p = d->p;
  uint32_t n = p->inst_count;
  uniformity u;
  u.local_uniform = malloc(p->local_count ? p->local_count : 1);
  u.loop_diverges = calloc(n, sizeof *u.loop_diverges);
  u.cf = malloc(VYRE_MAX_NESTING + 1);
  u.cause = malloc((VYRE_MAX_NESTING + 1) * sizeof *u.cause);
  u.open_loops = malloc((VYRE_MAX_NESTING + 1) * sizeof *u.open_loops);
  vyre_status st = VYRE_OK;
  if (!u.local_uniform || !u.loop_diverges || !u.cf || !u.cause || !u.open_loops) {
    st = fail(d, VYRE_OUT_OF_MEMORY, "decode: out of host memory for the uniformity analysis. Fix: free host memory");
    goto done;
  }
  memset(u.local_uniform, 1, p->local_count ? p->local_count : 1);
  int changed = 1;
  for (uint32_t pass = 0; changed && pass <= p->local_count + n + 1; pass++)
    changed = uniformity_pass(p, &u);
  st = check_placement(d, &u);
done:
  free(u.local_uniform);
  free(u.loop_diverges);
  free(u.cf);
  free(u.cause);
  free(u.open_loops);
  return st;
}

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
  vyre_status st = check_header(&d, bytes ? bytes : (const void *)"", size);
  if (st) goto fail;
  const vyre_program_header *h = &p->header;
  p->bytes = malloc(size);
  if (!p->bytes) {
    st = fail(&d, VYRE_OUT_OF_MEMORY, "decode: out of host memory for a %zu-byte program. Fix: free host memory", size);
    goto fail;
  }
  memcpy(p->bytes, bytes, size);
  p->size = size;
  const uint8_t *b = p->bytes;
  if ((st = check_buffers(&d, b))) goto fail;

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
    goto fail;
  }
  memcpy(p->local_types, b + h->local_offset, h->local_count);
  for (uint32_t s = 0; s < h->local_count; s++) {
    if (!vyre_type_is_value(p->local_types[s])) {
      st = fail(&d, VYRE_INVALID_PROGRAM,
                "invalid program: local %u has type %u, not a value type. Fix: locals are %s",
                s, p->local_types[s], TYPE_LIST(VYRE_TM_VALUE, " or "));
      goto fail;
    }
  }
  memcpy(p->insts, b + h->inst_offset, (size_t)n * sizeof *p->insts);
  for (uint32_t i = 0; i < n; i++) p->match[i] = NONE;
  for (uint32_t i = 0; i < n; i++) {
    d.scope[i] = d.depth ? d.stack[d.depth - 1] : NONE;
    d.segment[i] = d.grid_segment;
    p->depth[i] = (uint8_t)(d.depth > 255 ? 255 : d.depth);
    if ((st = check_inst(&d, i))) goto fail;
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
    goto fail;
  }
  if ((st = analyse_uniformity(&d))) goto fail;
  vyre_sha256(p->bytes, p->size, p->sha256);
  free(d.scope);
  free(d.segment);
  free(d.open);
  free(d.local_scope);
  free(d.local_def);
  free(d.stack);
  *out = p;
  return VYRE_OK;
fail:
  free(d.scope);
  free(d.segment);
  free(d.open);
  free(d.local_scope);
  free(d.local_def);
  free(d.stack);
  vyre_program_free(p);
  return st;
}
