/* internal.h -- the program decoder's state and the stages its files share (abi/format/: decode.c <- operands.c <- mma.c <- validate.c, uniformity.c <- program.c); not installed. */
#ifndef VYRE_FORMAT_INTERNAL_H
#define VYRE_FORMAT_INTERNAL_H

#include <stdarg.h>
#include <stdint.h>

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

/* Record the error of a failing check in d->err (printf format). */
static inline void vyre__decode_fail(decoder *d, vyre_status st, const char *fmt, ...)
    VYRE_PRINTF(3, 4);
static inline void vyre__decode_fail(decoder *d, vyre_status st, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  vyre_error_vset(d->err, st, 0, fmt, ap);
  va_end(ap);
}
/* Record the error and yield its status, a constant the compiler sees:
 * through a variadic call gcc -O3 cannot tell that a failing check never
 * returns VYRE_OK, and warns that its outputs may be unset. */
#define fail(d, st, ...) (vyre__decode_fail((d), (st), __VA_ARGS__), (vyre_status)(st))

#define INST_FMT "invalid program: instruction %u (%s): "
/* A type list for a message, from VYRE_TYPE_MAP (a compound literal lives
 * to the end of the enclosing block, past the fail() call). */
#define TYPE_LIST(mask, last) vyre_type_list((mask), (last), (char[96]){0}, 96)

/* The mnemonic of an instruction for messages ("?" for an unknown op). */
static inline const char *mnem(const vyre_inst *in) {
  const vyre_op_info *info = vyre_op_lookup(in->op);
  return info ? info->mnemonic : "?";
}

/* The stages of vyre_program_decode, in order.  Each reads the decoder's
 * program (d->p) and the caller's bytes, fills its part of the program,
 * and on a failure returns its status with the message in d->err. */

/* decode.c: the header of `size` bytes into d->p->header, checked
 * (magic, version, limits, the section layout, zero padding). */
vyre_status vyre__decode_header(decoder *d, const uint8_t *bytes, size_t size);

/* decode.c: the buffer table and names into d->p->buffers, with roles,
 * kernel and input/output indices, workgroup memory and the features
 * the element types need. */
vyre_status vyre__decode_buffers(decoder *d, const uint8_t *bytes);

/* operands.c: the operand checks of instruction i (messages name it).
 * vyre__operand_value: operand `which` = v names a visible earlier value;
 * its type goes to *type.  vyre__operand_type: a value of type `got`
 * where `want` is needed.  vyre__operand: both.  vyre__operand_buffer:
 * buffer `buf` exists (*out).  vyre__operand_slot: local `slot` exists
 * and, when must_be_live, has had its let or loop and is in scope. */
vyre_status vyre__operand_value(decoder *d, uint32_t i, const char *which, uint32_t v,
                                uint32_t *type);
vyre_status vyre__operand_type(decoder *d, uint32_t i, const char *which, uint32_t got,
                               uint32_t want);
vyre_status vyre__operand(decoder *d, uint32_t i, const char *which, uint32_t v, uint32_t want);
vyre_status vyre__operand_buffer(decoder *d, uint32_t i, uint32_t buf,
                                 const vyre_buffer_info **out);
vyre_status vyre__operand_slot(decoder *d, uint32_t i, uint32_t slot, int must_be_live);

/* mma.c: the checks of an MMA instruction i (mma_fill, mma_load, mma,
 * mma_store): its locals, buffer, values, type and the workgroup size;
 * the class check of the four MMA classes in validate.c's table. */
vyre_status vyre__check_mma(decoder *d, uint32_t i, const vyre_op_info *info);

/* validate.c: the checks of instruction i against the op table and the
 * blocks, locals and values before it; sets value_type[i], features. */
vyre_status vyre__validate_inst(decoder *d, uint32_t i);

/* uniformity.c: which values and blocks are uniform (p->uniform), then
 * the placement rules of barriers and subgroup operations. */
vyre_status vyre__analyse_uniformity(decoder *d);

#endif /* VYRE_FORMAT_INTERNAL_H */
