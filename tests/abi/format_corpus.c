/* format_corpus.c -- the format and text robustness corpus: generated valid programs (libvyre-progen) and byte mutations of them. */
#include "format_corpus.h"

#include <stdlib.h>
#include <string.h>

#include "abi/support/prng.h"
#include "host-stub/fuzz/progen.h"

void corpus_seed(corpus_rng *r, uint64_t seed) { r->state = seed; }

uint64_t corpus_u64(corpus_rng *r) { return vyre__splitmix64(&r->state); }

uint32_t corpus_u32(corpus_rng *r) { return (uint32_t)(corpus_u64(r) >> 32); }

uint32_t corpus_below(corpus_rng *r, uint32_t n) { return (uint32_t)(((uint64_t)corpus_u32(r) * n) >> 32); }

/* ------------------------------------------------------------------ */
/* Random valid programs                                               */
/* ------------------------------------------------------------------ */
vyre_status corpus_random_program(corpus_rng *r, uint32_t max_insts, void **bytes, size_t *size,
                                  vyre_error *err) {
  progen_options o;
  memset(&o, 0, sizeof o);
  o.flags = PROGEN_DECL_VARIETY;
  o.max_insts = 1 + corpus_below(r, max_insts ? max_insts : 1);
  progen_program p;
  vyre_status st = fz_progen_generate(corpus_u64(r), &o, &p, err);
  *bytes = p.bytes; /* the caller owns the image; the inputs are not needed */
  *size = p.size;
  p.bytes = NULL;
  fz_progen_program_free(&p);
  return st;
}

/* ------------------------------------------------------------------ */
/* Mutations                                                           */
/* ------------------------------------------------------------------ */
static const uint32_t interesting[] = {0u, 1u, 2u, 3u, 4u, 7u, 31u, 32u, 63u, 64u, 255u, 256u,
                                       1024u, 65535u, 65536u, 0x7fffffffu, 0x80000000u,
                                       0xfffffffeu, 0xffffffffu, 0x7fc00000u, 0x00000001u};

static uint32_t interesting_u32(corpus_rng *r) {
  return corpus_below(r, 2) ? interesting[corpus_below(r, sizeof interesting / 4)]
                            : corpus_u32(r);
}

static uint32_t rd32(const uint8_t *p) {
  uint32_t v;
  memcpy(&v, p, 4);
  return v;
}

/* Where the instruction section lies, when the header still says so. */
static int inst_section(const uint8_t *buf, size_t size, size_t *at, uint32_t *count) {
  if (size < VYRE_PROGRAM_HEADER_SIZE) return 0;
  vyre_program_header h;
  memcpy(&h, buf, sizeof h);
  if (h.inst_count == 0 || h.inst_offset > size ||
      (uint64_t)h.inst_count * sizeof(vyre_inst) > size - h.inst_offset)
    return 0;
  *at = h.inst_offset;
  *count = h.inst_count;
  return 1;
}

/* Edit one field of one instruction: the mutation most likely to leave
 * a program valid (another operand, another constant, another op). */
static void mutate_inst_field(corpus_rng *r, uint8_t *buf, size_t size) {
  size_t at;
  uint32_t count;
  if (!inst_section(buf, size, &at, &count)) return;
  uint32_t i = corpus_below(r, count);
  vyre_inst in;
  memcpy(&in, buf + at + (size_t)i * sizeof in, sizeof in);
  uint32_t n;
  const vyre_op_info *all = vyre_op_all(&n);
  switch (corpus_below(r, 7)) {
  case 0: in.op = corpus_below(r, 4) ? all[corpus_below(r, n)].id : (uint16_t)corpus_u32(r); break;
  case 1: in.type = (uint8_t)corpus_below(r, 16); break;
  case 2: in.mod = (uint8_t)corpus_below(r, 8); break;
  case 3: in.a = i && corpus_below(r, 2) ? corpus_below(r, i) : interesting_u32(r); break;
  case 4: in.b = i && corpus_below(r, 2) ? corpus_below(r, i) : interesting_u32(r); break;
  case 5: in.c = i && corpus_below(r, 2) ? corpus_below(r, i) : interesting_u32(r); break;
  default: in.d = i && corpus_below(r, 2) ? corpus_below(r, i) : interesting_u32(r); break;
  }
  memcpy(buf + at + (size_t)i * sizeof in, &in, sizeof in);
}

/* Replace the instruction section with random instructions that name
 * real ops and small earlier operands. */
static void random_stream(corpus_rng *r, uint8_t *buf, size_t size) {
  size_t at;
  uint32_t count, n;
  if (!inst_section(buf, size, &at, &count)) return;
  const vyre_op_info *all = vyre_op_all(&n);
  for (uint32_t i = 0; i < count; i++) {
    vyre_inst in;
    memset(&in, 0, sizeof in);
    const vyre_op_info *op = &all[corpus_below(r, n)];
    in.op = op->id;
    in.type = (uint8_t)corpus_below(r, VYRE_T_COUNT_);
    if (corpus_below(r, 2)) in.mod = (uint8_t)corpus_below(r, 4);
    uint32_t *fields[4] = {&in.a, &in.b, &in.c, &in.d};
    uint32_t nf = corpus_below(r, 5);
    for (uint32_t k = 0; k < nf; k++) *fields[k] = i ? corpus_below(r, i) : corpus_below(r, 4);
    memcpy(buf + at + (size_t)i * sizeof in, &in, sizeof in);
  }
}

size_t corpus_mutate(corpus_rng *r, uint8_t **bufp, size_t size) {
  uint8_t *buf = *bufp;
  uint32_t steps = 1 + corpus_below(r, 3);
  for (uint32_t s = 0; s < steps; s++) {
    uint32_t kind = corpus_below(r, 100);
    if (kind < 20 && size) { /* flip a bit */
      size_t at = corpus_below(r, (uint32_t)size);
      buf[at] ^= (uint8_t)(1u << corpus_below(r, 8));
    } else if (kind < 30 && size) { /* overwrite a byte */
      buf[corpus_below(r, (uint32_t)size)] = (uint8_t)corpus_u32(r);
    } else if (kind < 45 && size >= 4) { /* overwrite an aligned word (header, decl, inst field) */
      size_t at = (size_t)corpus_below(r, (uint32_t)(size / 4)) * 4;
      uint32_t v = interesting_u32(r);
      memcpy(buf + at, &v, 4);
    } else if (kind < 50 && size >= 4) { /* nudge an aligned word */
      size_t at = (size_t)corpus_below(r, (uint32_t)(size / 4)) * 4;
      uint32_t v = rd32(buf + at) + (corpus_below(r, 2) ? 1u : 0xffffffffu);
      memcpy(buf + at, &v, 4);
    } else if (kind < 80) {
      mutate_inst_field(r, buf, size);
    } else if (kind < 86) {
      random_stream(r, buf, size);
    } else if (kind < 93 && size) { /* truncate */
      size = corpus_below(r, (uint32_t)size);
      uint8_t *shrunk = realloc(buf, size ? size : 1);
      if (shrunk) buf = shrunk;
    } else { /* extend with random bytes, sometimes fixing total_size */
      size_t extra = 1 + corpus_below(r, 16);
      uint8_t *grown = realloc(buf, size + extra);
      if (!grown) break;
      buf = grown;
      for (size_t k = 0; k < extra; k++) buf[size + k] = corpus_below(r, 2) ? 0 : (uint8_t)corpus_u32(r);
      size += extra;
      if (size >= VYRE_PROGRAM_HEADER_SIZE && corpus_below(r, 2)) {
        uint32_t total = (uint32_t)size;
        memcpy(buf + offsetof(vyre_program_header, total_size), &total, 4);
      }
    }
  }
  *bufp = buf;
  return size;
}
