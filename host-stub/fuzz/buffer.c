/* buffer.c -- progen's buffer declarations: storage and atomic element types, and the buffers every shape declares through. */
#include <string.h>

#include "internal.h"

/* Whether buffers of storage type t may be declared under the claims:
 * the type is claimed, and values of its compute type can be made and loaded. */
static int storage_ok(const gen *g, uint8_t t) {
  uint8_t ct = (uint8_t)vyre_type_compute(t);
  return !g->claims || (((g->claims->storage_types >> t) & 1) && can_value(g, ct) &&
                        can(g, VYRE_OP_LOAD, ct));
}

uint8_t fz_storage_type(gen *g) {
  static const uint8_t all[] = {VYRE_T_BOOL, VYRE_T_U8,  VYRE_T_U16, VYRE_T_U32,
                                VYRE_T_U64,  VYRE_T_I8,  VYRE_T_I16, VYRE_T_I32,
                                VYRE_T_I64,  VYRE_T_F16, VYRE_T_BF16, VYRE_T_F32,
                                VYRE_T_U32,  VYRE_T_F32, VYRE_T_I32};
  /* Claims that allow none of them: any type (the program is then
   * outside them, and the caller's coverage check says so). */
  int any = 0;
  for (uint32_t k = 0; k < N(all); k++) any |= storage_ok(g, all[k]);
  for (;;) {
    uint8_t t = all[rnd(g, N(all))];
    if (t == VYRE_T_F16 && has(g, PROGEN_NO_F16)) continue;
    if (t == VYRE_T_BF16 && has(g, PROGEN_NO_BF16)) continue;
    if (has(g, PROGEN_NO_STORAGE_TYPES) && vyre_type_size(t) < 4) continue;
    if (any && !storage_ok(g, t)) continue;
    return t;
  }
}

int fz_atomic_ok(const gen *g, uint8_t t) {
  if (!g->claims) return 1;
  for (uint32_t op = VYRE_OP_ATOMIC_ADD; op <= VYRE_OP_ATOMIC_CAS; op++)
    if (!can(g, op, t)) return 0;
  return can_value(g, t) && ((g->claims->storage_types >> t) & 1);
}

uint8_t fz_atomic_type(gen *g) {
  static const uint8_t t64[] = {VYRE_T_U32, VYRE_T_I32, VYRE_T_U64, VYRE_T_I64};
  uint32_t n = has(g, PROGEN_NO_ATOMIC64) ? 2 : 4;
  uint8_t t = t64[rnd(g, n)];
  /* Not claimed: the first that is (fz_claims_flags leaves atomics out
   * when none of the 32-bit ones is). */
  for (uint32_t k = 0; k < n && !fz_atomic_ok(g, t); k++) t = t64[k];
  return t;
}

uint32_t fz_claims_flags(const gen *g) {
  if (!g->claims) return 0;
  uint32_t f = 0;
  if (!fz_atomic_ok(g, VYRE_T_U32) && !fz_atomic_ok(g, VYRE_T_I32)) f |= PROGEN_NO_ATOMICS;
  if (!fz_atomic_ok(g, VYRE_T_U64) && !fz_atomic_ok(g, VYRE_T_I64)) f |= PROGEN_NO_ATOMIC64;
  int blocks = can_do(g, VYRE_OP_IF) && can_do(g, VYRE_OP_END) && can_value(g, VYRE_T_BOOL);
  if (!can_do(g, VYRE_OP_BARRIER)) f |= PROGEN_NO_BARRIER | PROGEN_NO_GRID_BARRIER;
  /* Workgroup tiles are indexed by the local id. */
  if (!can_do(g, VYRE_OP_BARRIER) || !can(g, VYRE_OP_LOCAL_ID, VYRE_T_U32))
    f |= PROGEN_NO_WORKGROUP_MEMORY;
  if (!can_do(g, VYRE_OP_TRAP) || !blocks || !can(g, VYRE_OP_EQ, VYRE_T_U32)) f |= PROGEN_NO_TRAP;
  if (!can_do(g, VYRE_OP_RETURN) || !blocks) f |= PROGEN_NO_RETURN;
  if (!can_do(g, VYRE_OP_LOOP) || !can_do(g, VYRE_OP_END)) f |= PROGEN_NO_LOOPS;
  return f;
}

gbuf *fz_add_buf(gen *g, const char *name, uint32_t binding, uint8_t kind, vyre_access access,
                     uint8_t type, uint32_t count, uint32_t flags) {
  gbuf *fb = &g->buf[g->nb++];
  memset(fb, 0, sizeof *fb);
  fb->index = vyre_b_buffer(g->b, name, binding, access, (vyre_type)type, count, flags);
  fb->kind = kind;
  fb->access = (uint8_t)access;
  fb->type = type;
  fb->count = count;
  fb->readable = access != VYRE_ACCESS_WRITE_ONLY;
  return fb;
}
