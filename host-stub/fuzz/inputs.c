/* inputs.c -- progen's random inputs: floats mixing ordinary values, the edge pool and specials (NaN payloads, infinities, signed zeros, subnormals); integers edge values and random bits. */
#include <stdlib.h>
#include <string.h>

#include "abi/support/bits.h"
#include "internal.h"

static uint32_t random_f32_bits(gen *g) {
  uint32_t r = rnd(g, 10);
  if (r == 0) return fz_f32_special(g);
  if (r == 1) {
    static const uint32_t s[] = {0x7f800001u, 0xffc00001u, 0x00000001u, 0x807fffffu,
                                 0x7fffffffu, 0x00400000u};
    return s[rnd(g, N(s))]; /* NaN payloads and subnormals: canonicalised by loads */
  }
  if (r == 2) return (uint32_t)next(g);
  if (r <= 5) return fz_edge_f32(g);
  float f = (float)((int32_t)rnd(g, 20001) - 10000) / 100.0f;
  return vyre__f32_bits(f);
}

static uint64_t random_element(gen *g, uint32_t type) {
  static const uint64_t edge[] = {0, 1, 0xffffffffffffffffull, 0x7fffffffull, 0x80000000ull,
                                  0x7fffffffffffffffull, 0x8000000000000000ull, 2, 31, 32, 64};
  switch (type) {
  case VYRE_T_F32: return random_f32_bits(g);
  case VYRE_T_F16: return rnd(g, 8) == 0 ? 0x7c01u + rnd(g, 4) : vyre_f32_to_f16(random_f32_bits(g));
  case VYRE_T_BF16: return rnd(g, 8) == 0 ? 0x0001u + rnd(g, 4) : (random_f32_bits(g) >> 16);
  case VYRE_T_BOOL: return rnd(g, 3) == 0 ? next(g) : rnd(g, 2);
  default: {
    uint32_t r = rnd(g, 4);
    if (r == 0) return edge[rnd(g, N(edge))];
    if (r == 1) return next(g);
    return rnd(g, 200);
  }
  }
}

vyre_status fz_make_inputs(gen *g, const vyre_program *p, progen_program *out,
                               vyre_error *err) {
  out->input_count = p->input_count;
  out->inputs = calloc(p->input_count ? p->input_count : 1, sizeof *out->inputs);
  if (!out->inputs) return vyre_error_set(err, VYRE_OUT_OF_MEMORY, 0, "progen: out of memory");
  for (uint32_t i = 0; i < p->buffer_count; i++) {
    const vyre_buffer_info *bf = &p->buffers[i];
    if (bf->input_index < 0) continue;
    const gbuf *fb = NULL;
    for (uint32_t k = 0; k < g->nb; k++)
      if (g->buf[k].index == i) fb = &g->buf[k];
    uint32_t count = bf->decl.count ? bf->decl.count : rf(g) && fb ? fb->count : g->elements;
    uint64_t size = (uint64_t)count * bf->elem_size;
    uint8_t *d = calloc(size ? size : 1, 1);
    if (!d) return vyre_error_set(err, VYRE_OUT_OF_MEMORY, 0, "progen: out of memory");
    out->inputs[bf->input_index].data = d;
    out->inputs[bf->input_index].size = size;
    if (fb && fb->kind == K_ACC && chance(g, 50)) continue; /* a zeroed accumulator */
    for (uint32_t e = 0; e < count; e++) {
      uint64_t v = random_element(g, bf->decl.elem_type);
      memcpy(d + (uint64_t)e * bf->elem_size, &v, bf->elem_size); /* little-endian host */
    }
  }
  return VYRE_OK;
}
