/* decode.c -- the first stage of decoding untrusted program bytes: the header and the buffer table (internal.h). */
#include <stdlib.h>
#include <string.h>

#include "internal.h"

static uint32_t align4(uint64_t x) { return (uint32_t)((x + 3u) & ~(uint64_t)3u); }

static int zero_bytes(const uint8_t *b, uint64_t from, uint64_t to) {
  for (uint64_t i = from; i < to; i++)
    if (b[i]) return 0;
  return 1;
}

/* Contract in internal.h. */
vyre_status vyre__decode_header(decoder *d, const uint8_t *bytes, size_t size) {
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

/* Buffer i's name: the next name_size bytes of the string section
 * (*name_pos onward), an identifier, unique so far. */
static vyre_status buffer_name(decoder *d, const char *strings, uint32_t i, uint32_t *name_pos) {
  vyre_program *p = d->p;
  const vyre_program_header *h = &p->header;
  vyre_buffer_info *bi = &p->buffers[i];
  vyre_buffer_decl *bd = &bi->decl;
  if (bd->name_offset != *name_pos || bd->name_size == 0 || bd->name_size > VYRE_MAX_NAME ||
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
  *name_pos += bd->name_size;
  return VYRE_OK;
}

/* Workgroup buffer i: its place in workgroup memory after *shared bytes. */
static vyre_status buffer_shared(decoder *d, uint32_t i, uint32_t *shared) {
  vyre_program *p = d->p;
  vyre_buffer_info *bi = &p->buffers[i];
  vyre_buffer_decl *bd = &bi->decl;
  const char *nm = bi->name;
  if (bd->binding != 0 || bd->flags != 0 || bd->count == 0 || bd->out_range_offset ||
      bd->out_range_size)
    return fail(d, VYRE_INVALID_PROGRAM,
                "invalid program: buffer %u '%s': workgroup buffers need a fixed count > 0 "
                "and no binding, flags or output range. Fix: declare e.g. `buffer %s "
                "workgroup u32 [256]`",
                i, nm, nm);
  uint64_t bytes_needed = (uint64_t)bd->count * bi->elem_size;
  uint32_t at = (*shared + 15u) & ~15u;
  if (bytes_needed > VYRE_MAX_WORKGROUP_BYTES || at + bytes_needed > VYRE_MAX_WORKGROUP_BYTES)
    return fail(d, VYRE_LIMIT,
                "invalid program: buffer %u '%s': workgroup memory would reach %llu bytes, "
                "over the %u-byte limit. Fix: use fewer or smaller workgroup buffers",
                i, nm, (unsigned long long)(at + bytes_needed), VYRE_MAX_WORKGROUP_BYTES);
  bi->role = VYRE_ROLE_SHARED;
  bi->shared_offset = at;
  bi->kernel_index = NONE;
  *shared = at + (uint32_t)bytes_needed;
  p->features |= VYRE_FEAT_WORKGROUP_MEMORY;
  p->required_caps |= VYRE_CAP_WORKGROUP_MEMORY;
  return VYRE_OK;
}

/* The binding order of the kernel's buffers. */
typedef struct bindings {
  int have;      /* a kernel buffer came before */
  uint32_t last; /* its binding */
  uint32_t next_kernel_index;
} bindings;

/* Kernel buffer i (not workgroup): binding order, role, output range,
 * kernel and input/output indices. */
static vyre_status buffer_bound(decoder *d, uint32_t i, bindings *bs) {
  vyre_program *p = d->p;
  vyre_buffer_info *bi = &p->buffers[i];
  vyre_buffer_decl *bd = &bi->decl;
  const char *nm = bi->name;
  if (bs->have && bd->binding <= bs->last)
    return fail(d, VYRE_INVALID_PROGRAM,
                "invalid program: buffer %u '%s': binding %u is not above the previous "
                "binding %u. Fix: bindings increase strictly in declaration order",
                i, nm, bd->binding, bs->last);
  bs->have = 1;
  bs->last = bd->binding;
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
  bi->kernel_index = bs->next_kernel_index++;
  if (bi->role == VYRE_ROLE_INPUT || bi->role == VYRE_ROLE_INOUT)
    bi->input_index = (int32_t)p->input_count++;
  if (bi->is_output) bi->output_index = (int32_t)p->output_count++;
  return VYRE_OK;
}

/* Contract in internal.h. */
vyre_status vyre__decode_buffers(decoder *d, const uint8_t *bytes) {
  vyre_program *p = d->p;
  const vyre_program_header *h = &p->header;
  const char *strings = (const char *)bytes + h->string_offset;
  uint32_t name_pos = 0, shared = 0;
  bindings bs = {0, 0, 0};
  vyre_status st;
  p->buffer_count = h->buffer_count;
  p->buffers = calloc(h->buffer_count ? h->buffer_count : 1, sizeof *p->buffers);
  if (!p->buffers) return fail(d, VYRE_OUT_OF_MEMORY, "decode: out of host memory for buffers. Fix: free host memory");
  for (uint32_t i = 0; i < h->buffer_count; i++) {
    vyre_buffer_info *bi = &p->buffers[i];
    vyre_buffer_decl *bd = &bi->decl;
    memcpy(bd, bytes + h->buffer_offset + (size_t)i * sizeof *bd, sizeof *bd);
    if ((st = buffer_name(d, strings, i, &name_pos))) return st;
    const char *nm = bi->name;
    if (bd->access >= VYRE_ACCESS_COUNT_)
      return fail(d, VYRE_INVALID_PROGRAM,
                  "invalid program: buffer %u '%s': access mode %u is unknown. Fix: use ro, rw, "
                  "wo, uniform or workgroup",
                  i, nm, bd->access);
    if (bd->elem_type >= VYRE_T_COUNT_ || !(VYRE_TM_STORAGE & VYRE_TBIT(bd->elem_type)))
      return fail(d, VYRE_INVALID_PROGRAM,
                  "invalid program: buffer %u '%s': element type %u is not a storage type%s. "
                  "Fix: use one of %s",
                  i, nm, bd->elem_type,
                  vyre_type_matrix_use(bd->elem_type) ? " (only locals have matrix types)" : "",
                  TYPE_LIST(VYRE_TM_STORAGE, NULL));
    if (bd->reserved0 || bd->reserved1 || (bd->flags & ~(VYRE_BUF_OUTPUT | VYRE_BUF_OUT_RANGE)))
      return fail(d, VYRE_INVALID_PROGRAM,
                  "invalid program: buffer %u '%s': reserved fields or unknown flags set. Fix: "
                  "zero them",
                  i, nm);
    bi->elem_size = vyre_type_size(bd->elem_type);
    bi->input_index = -1;
    bi->output_index = -1;
    st = bd->access == VYRE_ACCESS_WORKGROUP ? buffer_shared(d, i, &shared)
                                              : buffer_bound(d, i, &bs);
    if (st) return st;
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
  p->kernel_buffer_count = bs.next_kernel_index;
  p->shared_bytes = shared;
  return VYRE_OK;
}
