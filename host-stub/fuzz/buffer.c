/* buffer.c -- progen's buffer declarations: storage and atomic element types, and the buffers every shape declares through. */
#include <string.h>

#include "internal.h"

uint8_t fz_storage_type(gen *g) {
  static const uint8_t all[] = {VYRE_T_BOOL, VYRE_T_U8,  VYRE_T_U16, VYRE_T_U32,
                                VYRE_T_U64,  VYRE_T_I8,  VYRE_T_I16, VYRE_T_I32,
                                VYRE_T_I64,  VYRE_T_F16, VYRE_T_BF16, VYRE_T_F32,
                                VYRE_T_U32,  VYRE_T_F32, VYRE_T_I32};
  for (;;) {
    uint8_t t = all[rnd(g, N(all))];
    if (t == VYRE_T_F16 && has(g, PROGEN_NO_F16)) continue;
    if (t == VYRE_T_BF16 && has(g, PROGEN_NO_BF16)) continue;
    if (has(g, PROGEN_NO_STORAGE_TYPES) && vyre_type_size(t) < 4) continue;
    return t;
  }
}

uint8_t fz_atomic_type(gen *g) {
  static const uint8_t t64[] = {VYRE_T_U32, VYRE_T_I32, VYRE_T_U64, VYRE_T_I64};
  return t64[rnd(g, has(g, PROGEN_NO_ATOMIC64) ? 2 : 4)];
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
