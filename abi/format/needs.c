/* needs.c -- what a program needs from a backend (ops and their types, capabilities, storage types) and what an offer lacks of it: the one implementation hosts, the harness and the fuzzer share (vyre_support.h). */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "abi/support/sized.h"
#include "indirect.h"
#include "vyre/vyre_program.h"
#include "vyre/vyre_support.h"

/* Larger than vyre_needs will ever grow: a bigger struct_size is garbage. */
#define NEEDS_STRUCT_MAX 65536u

/*
 * The type instruction i of p is claimed at (vyre_registration.op_types):
 * for compares and predicates the type of the operand (their result is
 * always bool); for statements (ops whose table type mask is 0) none
 * (VYRE_T_VOID); for every other op the instruction's type field (the
 * result type: a load's widened type, a cast's target type, an atomic's
 * element type).
 */
static uint32_t inst_claim_type(const vyre_program *p, uint32_t i) {
  const vyre_inst *in = &p->insts[i];
  const vyre_op_info *info = vyre_op_lookup(in->op);
  if (!info || info->type_mask == 0) return VYRE_T_VOID;
  if (info->op_class == VYRE_OC_COMPARE || info->op_class == VYRE_OC_PREDICATE)
    return in->a < i ? p->value_type[in->a] : VYRE_T_VOID;
  return in->type;
}

vyre_status vyre_program_needs(const vyre_program *program, const vyre_dispatch_options *options,
                               vyre_needs *out, vyre_error *err) {
  if (!program || !out)
    return vyre_error_set(err, VYRE_INVALID_ARGUMENT, 0,
                          "vyre_program_needs: %s is NULL. Fix: pass a decoded program and a "
                          "vyre_needs to fill",
                          program ? "out" : "program");
  if (out->struct_size < sizeof(uint32_t) || out->struct_size > NEEDS_STRUCT_MAX)
    return vyre_error_set(err, VYRE_INVALID_ARGUMENT, 0,
                          "vyre_program_needs: out->struct_size %u is invalid. Fix: set it to "
                          "sizeof(vyre_needs)",
                          out->struct_size);
  const vyre_indirect *indirect = NULL;
  vyre_status st = vyre__indirect_read(options, "vyre_program_needs", &indirect, err);
  if (st != VYRE_OK) return st;
  vyre_dispatch_options o;
  vyre__sized_read(&o, sizeof o, options);

  vyre_needs n;
  memset(&n, 0, sizeof n);
  n.struct_size = sizeof n;
  n.capabilities = program->required_caps;
  for (uint32_t i = 0; i < program->inst_count; i++) {
    uint32_t op = program->insts[i].op;
    if (op >= VYRE_OP_ID_LIMIT) continue;
    n.ops[op >> 6] |= 1ull << (op & 63);
    uint32_t t = inst_claim_type(program, i);
    if (t == VYRE_T_VOID || t >= VYRE_T_COUNT_) continue;
    n.op_types[op] |= VYRE_TBIT(t);
    /* Every u64/i64 value is made by an instruction of that type (a load,
     * a constant, a cast, an atomic...), so this finds them all; a buffer
     * no instruction touches needs only its storage type. */
    if (t == VYRE_T_U64 || t == VYRE_T_I64) n.capabilities |= VYRE_CAP_INT64;
  }
  if (o.fixpoint_iterations > 1) n.capabilities |= VYRE_CAP_FIXPOINT;
  /* Strict (budget 0, also for NULL options) admits a transcendental only
   * where it is correctly rounded. */
  if (o.ulp_budget == 0 && (program->features & VYRE_FEAT_TRANSCENDENTAL))
    n.capabilities |= VYRE_CAP_CORRECTLY_ROUNDED;
  /* vyre_indirect only exists on resident dispatches. */
  if (indirect) n.capabilities |= VYRE_CAP_INDIRECT_DISPATCH | VYRE_CAP_RESIDENT;
  for (uint32_t i = 0; i < program->buffer_count; i++) {
    n.storage_types |= 1ull << (program->buffers[i].decl.elem_type & 63u);
    if (program->buffers[i].decl.flags & VYRE_BUF_OUT_RANGE) n.capabilities |= VYRE_CAP_OUT_RANGE;
  }
  vyre__sized_write(out, &n, sizeof n);
  return VYRE_OK;
}

/* The items missing so far, appended "; "-separated to s[] (cut at size). */
typedef struct why_text {
  char *s;
  size_t size, used;
  uint32_t missing;
} why_text;

static void why_add(why_text *w, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void why_add(why_text *w, const char *fmt, ...) {
  w->missing++;
  if (!w->s || w->used + 1 >= w->size) return;
  if (w->used) w->used += (size_t)snprintf(w->s + w->used, w->size - w->used, "; ");
  if (w->used + 1 >= w->size) {
    w->used = w->size - 1;
    return;
  }
  va_list ap;
  va_start(ap, fmt);
  int k = vsnprintf(w->s + w->used, w->size - w->used, fmt, ap);
  va_end(ap);
  w->used += k < 0 ? 0 : (size_t)k;
  if (w->used >= w->size) w->used = w->size - 1;
}

/* The ops and op types the needs name that the offer lacks. */
static void unmet_ops(const vyre_needs *n, const uint16_t *ops, const uint32_t *op_types,
                      uint32_t op_count, why_text *w) {
  /* Per op id: offered, and at which types (0 = every type its class
   * allows).  An op listed twice is offered at the union. */
  uint8_t offered[VYRE_OP_ID_LIMIT];
  uint32_t types[VYRE_OP_ID_LIMIT];
  memset(offered, 0, sizeof offered);
  memset(types, 0, sizeof types);
  for (uint32_t k = 0; ops && k < op_count; k++) {
    uint32_t op = ops[k], mask = op_types ? op_types[k] : 0;
    if (op >= VYRE_OP_ID_LIMIT) continue;
    if (offered[op] == 2) continue; /* already every type */
    offered[op] = mask ? 1 : 2;
    types[op] |= mask;
  }
  for (uint32_t op = 0; op < VYRE_OP_ID_LIMIT; op++) {
    if (!VYRE_NEEDS_HAS_OP(n, op)) continue;
    const vyre_op_info *info = vyre_op_lookup(op);
    const char *name = info ? info->mnemonic : "?";
    if (!offered[op]) {
      why_add(w, "op %s not claimed", name);
      continue;
    }
    uint32_t lacking = offered[op] == 1 ? n->op_types[op] & ~types[op] : 0;
    if (lacking) {
      char list[128];
      why_add(w, "op %s not claimed at %s", name, vyre_type_list(lacking, NULL, list, sizeof list));
    }
  }
}

uint32_t vyre_needs_unmet(const vyre_needs *needs, const uint16_t *ops, const uint32_t *op_types,
                          uint32_t op_count, uint64_t storage_types, uint64_t capabilities,
                          char *why, size_t why_size) {
  why_text w = {why_size ? why : NULL, why_size, 0, 0};
  if (w.s) why[0] = '\0';
  if (!needs || needs->struct_size < sizeof(uint32_t) || needs->struct_size > NEEDS_STRUCT_MAX) {
    why_add(&w, "no valid vyre_needs given (NULL, or struct_size %u)",
            needs ? needs->struct_size : 0);
    return w.missing;
  }
  vyre_needs n;
  vyre__sized_read(&n, sizeof n, needs);
  unmet_ops(&n, ops, op_types, op_count, &w);
  uint64_t caps = n.capabilities & ~capabilities;
  for (uint32_t bit = 0; bit < 64; bit++) {
    if (!((caps >> bit) & 1)) continue;
    const char *name = vyre_capability_name(bit);
    if (name) why_add(&w, "capability %s not offered", name);
    else why_add(&w, "capability bit %u not offered", bit);
  }
  uint64_t types = n.storage_types & ~storage_types;
  for (uint32_t t = 0; t < 64; t++)
    if ((types >> t) & 1) why_add(&w, "storage type %s not offered", vyre_type_name(t));
  return w.missing;
}
