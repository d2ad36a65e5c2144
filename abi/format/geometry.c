/* geometry.c -- buffer sizes, readback ranges, workgroup and grid of a dispatch, and the kernel params block. */
#include <string.h>

#include "vyre/vyre_support.h"
#include "abi/support/sized.h"

#define MAX_GRID_X 0x7fffffffu
#define MAX_GRID_YZ 65535u

/* Size buffer i of p into g (elements, bytes, the output's readback
 * range) from the caller's input or resident sizes; *elems receives its
 * element count (0 for a workgroup buffer, which does not count toward
 * the dispatch's elements). */
static vyre_status buffer_size(const vyre_program *p, uint32_t i, const uint64_t *input_sizes,
                               const uint64_t *resident_sizes, vyre_geometry *g,
                               uint64_t *elems_out, vyre_error *err) {
  const vyre_buffer_info *b = &p->buffers[i];
  uint64_t es = b->elem_size, elems = b->decl.count;
  *elems_out = 0;
  if (b->role == VYRE_ROLE_SHARED) {
    g->buffer_elems[i] = b->decl.count;
    g->buffer_bytes[i] = (uint64_t)b->decl.count * es;
    return VYRE_OK;
  }
  uint64_t have = 0;
  int sized = 0;
  if (resident_sizes) {
    have = resident_sizes[b->kernel_index];
    sized = 1;
    if (elems && have < elems * es)
      return vyre_error_set(err, VYRE_INVALID_ARGUMENT, 0,
                            "dispatch: resident buffer for '%s' has %llu bytes, the program "
                            "declares %llu (%llu x %s). Fix: allocate at least %llu bytes",
                            b->name, (unsigned long long)have,
                            (unsigned long long)(elems * es), (unsigned long long)elems,
                            vyre_type_name(b->decl.elem_type),
                            (unsigned long long)(elems * es));
  } else if (b->input_index >= 0) {
    have = input_sizes ? input_sizes[b->input_index] : 0;
    sized = 1;
    if (elems && have != elems * es)
      return vyre_error_set(err, VYRE_INVALID_ARGUMENT, 0,
                            "dispatch: input %d '%s' is %llu bytes, the program declares %llu "
                            "(%llu x %s). Fix: pass exactly %llu bytes, or declare the count "
                            "0 to size it from the input",
                            b->input_index, b->name, (unsigned long long)have,
                            (unsigned long long)(elems * es), (unsigned long long)elems,
                            vyre_type_name(b->decl.elem_type),
                            (unsigned long long)(elems * es));
  }
  if (!elems) {
    if (!sized || have % es)
      return vyre_error_set(err, VYRE_INVALID_ARGUMENT, 0,
                            "dispatch: '%s' is %llu bytes, not a whole number of %s elements. "
                            "Fix: pass a multiple of %llu bytes",
                            b->name, (unsigned long long)have, vyre_type_name(b->decl.elem_type),
                            (unsigned long long)es);
    elems = have / es;
  }
  if (elems > UINT32_MAX)
    return vyre_error_set(err, VYRE_LIMIT, 0,
                          "dispatch: '%s' has %llu elements, over the 2^32-1 a u32 index "
                          "reaches. Fix: split the buffer",
                          b->name, (unsigned long long)elems);
  g->buffer_elems[i] = (uint32_t)elems;
  g->buffer_bytes[i] = elems * es;
  if (b->is_output) {
    uint64_t off = 0, size = g->buffer_bytes[i];
    if (b->decl.flags & VYRE_BUF_OUT_RANGE) {
      off = b->decl.out_range_offset;
      size = b->decl.out_range_size;
      if (off + size > g->buffer_bytes[i])
        return vyre_error_set(err, VYRE_INVALID_ARGUMENT, 0,
                              "dispatch: output range [%llu, %llu) of '%s' is outside its %llu "
                              "bytes. Fix: pass a larger input or shrink the range",
                              (unsigned long long)off, (unsigned long long)(off + size), b->name,
                              (unsigned long long)g->buffer_bytes[i]);
    }
    g->out_offset[i] = off;
    g->out_size[i] = size;
  }
  *elems_out = elems;
  return VYRE_OK;
}

vyre_status vyre_geometry_derive(const vyre_program *p, const uint64_t *input_sizes,
                                 const uint64_t *resident_sizes,
                                 const vyre_dispatch_options *o, vyre_geometry *g,
                                 vyre_error *err) {
  memset(g, 0, sizeof *g);
  vyre_dispatch_options opts;
  vyre__sized_read(&opts, sizeof opts, o);
  for (int i = 0; i < 3; i++) g->workgroup[i] = p->header.workgroup_size[i];
  if (opts.workgroup[0] || opts.workgroup[1] || opts.workgroup[2]) {
    uint64_t inv = 1;
    for (int i = 0; i < 3; i++) {
      g->workgroup[i] = opts.workgroup[i] ? opts.workgroup[i] : 1u;
      inv *= g->workgroup[i];
    }
    if (inv > VYRE_MAX_WORKGROUP_INVOCATIONS)
      return vyre_error_set(err, VYRE_LIMIT, 0,
                            "dispatch: workgroup override %u x %u x %u exceeds %u invocations. "
                            "Fix: choose a smaller override",
                            g->workgroup[0], g->workgroup[1], g->workgroup[2],
                            VYRE_MAX_WORKGROUP_INVOCATIONS);
    /* The validator held the declared workgroup to this; an override too. */
    if ((p->features & VYRE_FEAT_MMA) && inv % 32u)
      return vyre_error_set(err, VYRE_INVALID_ARGUMENT, 0,
                            "dispatch: workgroup override %u x %u x %u is %llu invocations, not "
                            "a multiple of 32, and the program has MMA ops (they run on whole "
                            "subgroups of 32). Fix: choose an override whose x*y*z is a "
                            "multiple of 32, or none",
                            g->workgroup[0], g->workgroup[1], g->workgroup[2],
                            (unsigned long long)inv);
  }
  uint32_t max_out = 0, max_all = 0;
  int any_out = 0;
  for (uint32_t i = 0; i < p->buffer_count; i++) {
    uint64_t elems;
    vyre_status st = buffer_size(p, i, input_sizes, resident_sizes, g, &elems, err);
    if (st != VYRE_OK) return st;
    if (p->buffers[i].role == VYRE_ROLE_SHARED) continue;
    if (p->buffers[i].is_output) {
      any_out = 1;
      if (elems > max_out) max_out = (uint32_t)elems;
    }
    if (elems > max_all) max_all = (uint32_t)elems;
  }
  g->element_count = any_out ? max_out : max_all;
  if (opts.grid[0] || opts.grid[1] || opts.grid[2]) {
    for (int i = 0; i < 3; i++) g->grid[i] = opts.grid[i] ? opts.grid[i] : 1u;
  } else {
    uint64_t gx = ((uint64_t)g->element_count + g->workgroup[0] - 1) / g->workgroup[0];
    g->grid[0] = (uint32_t)(gx > MAX_GRID_X ? MAX_GRID_X + 1ull : gx);
    g->grid[1] = g->element_count ? 1u : 0u;
    g->grid[2] = g->element_count ? 1u : 0u;
    if (gx > MAX_GRID_X)
      return vyre_error_set(err, VYRE_LIMIT, 0,
                            "dispatch: %u elements at workgroup width %u need %llu workgroups, "
                            "over %u. Fix: use a wider workgroup",
                            g->element_count, g->workgroup[0], (unsigned long long)gx, MAX_GRID_X);
  }
  if (g->grid[0] > MAX_GRID_X || g->grid[1] > MAX_GRID_YZ || g->grid[2] > MAX_GRID_YZ)
    return vyre_error_set(err, VYRE_LIMIT, 0,
                          "dispatch: grid %u x %u x %u is over the limit %u x %u x %u. Fix: "
                          "choose a smaller grid override",
                          g->grid[0], g->grid[1], g->grid[2], MAX_GRID_X, MAX_GRID_YZ, MAX_GRID_YZ);
  g->invocations = (uint64_t)g->grid[0] * g->grid[1] * g->grid[2] * g->workgroup[0] *
                   g->workgroup[1] * g->workgroup[2];
  return VYRE_OK;
}

uint32_t vyre_params_word_count(const vyre_program *p) {
  return 1u + p->buffer_count + VYRE_PARAMS_TRAP_WORDS + VYRE_PARAMS_GRID_WORDS;
}

void vyre_params_fill(const vyre_program *p, const vyre_geometry *g, uint32_t *words) {
  uint32_t n = vyre_params_word_count(p);
  memset(words, 0, (size_t)n * sizeof *words);
  words[0] = g->element_count;
  for (uint32_t i = 0; i < p->buffer_count; i++) words[1 + i] = g->buffer_elems[i];
}
