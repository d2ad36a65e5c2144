/* program.c -- from program bytes to a plan: decode, capability and device-limit checks, codegen options (program.h). */
#include "program.h"

#include <string.h>

#include "caps.h"

static vyre_status check_program(vc_context *cx, const vyre_program *prog, const uint32_t wg[3],
                                 vyre_error *err) {
  const vyre_device_profile *prof = vc_context_profile(cx);
  const vc_device_info *dev = vc_context_device(cx);
  uint64_t missing = prog->required_caps & ~prof->capabilities;
  if (missing) {
    uint64_t bit;
    const char *fix = vc_caps_fix(missing, &bit);
    if (fix)
      return vyre_error_set(err, VYRE_UNSUPPORTED, 0,
                            "unsupported: the program needs %s, which CUDA device %u (%s, "
                            "sm_%u%u) does not offer. Fix: %s",
                            vyre_capability_text((uint32_t)__builtin_ctzll(bit)), dev->ordinal,
                            prof->name, prof->compute_major, prof->compute_minor, fix);
    return vyre_error_set(err, VYRE_UNSUPPORTED, 0,
                          "unsupported: the program needs capabilities 0x%llx that CUDA device "
                          "%u lacks. Fix: use another backend",
                          (unsigned long long)missing, dev->ordinal);
  }
  if (prog->shared_bytes > (uint32_t)dev->shared_per_block)
    return vyre_error_set(err, VYRE_UNSUPPORTED, 0,
                          "unsupported: the program uses %u bytes of workgroup memory, CUDA "
                          "device %u allows %d per workgroup. Fix: use smaller workgroup buffers",
                          prog->shared_bytes, dev->ordinal, dev->shared_per_block);
  uint64_t threads = (uint64_t)wg[0] * wg[1] * wg[2];
  for (int i = 0; i < 3; i++)
    if (wg[i] > prof->max_workgroup_size[i])
      return vyre_error_set(err, VYRE_UNSUPPORTED, 0,
                            "unsupported: workgroup %u x %u x %u exceeds CUDA device %u's "
                            "block limit %u x %u x %u. Fix: use a smaller workgroup",
                            wg[0], wg[1], wg[2], dev->ordinal, prof->max_workgroup_size[0],
                            prof->max_workgroup_size[1], prof->max_workgroup_size[2]);
  if ((prog->features & VYRE_FEAT_MMA) && threads % 32u)
    return vyre_error_set(err, VYRE_INVALID_ARGUMENT, 0,
                          "invalid argument: workgroup %u x %u x %u (%llu invocations) is not a "
                          "whole number of subgroups, which the program's MMA ops need. Fix: "
                          "use a workgroup whose invocation count is a multiple of 32",
                          wg[0], wg[1], wg[2], (unsigned long long)threads);
  if (threads > (uint64_t)dev->max_threads_per_block)
    return vyre_error_set(err, VYRE_UNSUPPORTED, 0,
                          "unsupported: workgroup of %llu invocations exceeds CUDA device %u's "
                          "%d threads per block. Fix: use a smaller workgroup",
                          (unsigned long long)threads, dev->ordinal, dev->max_threads_per_block);
  return VYRE_OK;
}

void vc_program_workgroup(const vyre_program *prog, const vyre_dispatch_options *o,
                          uint32_t wg[3]) {
  if (o->workgroup[0] || o->workgroup[1] || o->workgroup[2]) {
    for (int i = 0; i < 3; i++) wg[i] = o->workgroup[i] ? o->workgroup[i] : 1u;
  } else {
    for (int i = 0; i < 3; i++) wg[i] = prog->header.workgroup_size[i];
  }
}

int vc_has_grid_override(const vyre_dispatch_options *o) {
  return o->grid[0] || o->grid[1] || o->grid[2];
}

vyre_status vc_program_plan(vc_context *cx, vc_modcache *plans, vyre_program *prog,
                            const vyre_dispatch_options *o, uint32_t extra_flags, vc_plan **out,
                            vyre_error *err) {
  const vyre_device_profile *prof = vc_context_profile(cx);
  cg_options cg;
  memset(&cg, 0, sizeof cg);
  vc_program_workgroup(prog, o, cg.workgroup);
  vyre_status st = check_program(cx, prog, cg.workgroup, err);
  if (st != VYRE_OK) {
    vyre_program_free(prog);
    return st;
  }
  cg.sm_major = prof->compute_major;
  cg.sm_minor = prof->compute_minor;
  cg.ulp_budget = o->ulp_budget;
  /* With an explicit grid every invocation of that grid must run, so the
   * elementwise fast path (which covers [0, element count)) is off. */
  cg.flags = extra_flags | (vc_has_grid_override(o) ? CG_NO_FASTPATH : 0u);
  return vc_plan_get(plans, prog, &cg, out, err);
}

vyre_status vc_program_decode(const void *bytes, uint64_t size, vyre_program **prog,
                          vyre_error *err) {
  if (!bytes || !size)
    return vyre_error_set(err, VYRE_INVALID_ARGUMENT, 0,
                          "program: no bytes and no pipeline given. Fix: pass the program "
                          "image (bytes + size) or a pipeline handle");
  if (size > (uint64_t)SIZE_MAX)
    return vyre_error_set(err, VYRE_INVALID_PROGRAM, 0,
                          "program: %llu bytes do not fit size_t. Fix: pass a valid image",
                          (unsigned long long)size);
  return vyre_program_decode(bytes, (size_t)size, prog, err);
}

vyre_status vc_program_plan_bytes(vc_context *cx, vc_modcache *plans, const void *bytes,
                                  uint64_t size, const vyre_dispatch_options *o,
                                  uint32_t extra_flags, vc_plan **out, vyre_error *err) {
  *out = NULL;
  /* Everything vc_program_plan derives the codegen options from, besides
   * the image and the device. */
  uint32_t flags = extra_flags | (vc_has_grid_override(o) ? CG_NO_FASTPATH : 0u);
  vc_bytes_key key;
  int keyed = bytes && size && size <= (uint64_t)SIZE_MAX;
  if (keyed) {
    vc_bytes_key_init(&key, bytes, size, o->workgroup, o->ulp_budget, flags);
    if (vc_plan_find_bytes(plans, &key, out)) return VYRE_OK;
  }
  vyre_program *prog = NULL;
  vyre_status st = vc_program_decode(bytes, size, &prog, err);
  if (st != VYRE_OK) return st;
  st = vc_program_plan(cx, plans, prog, o, extra_flags, out, err);
  if (st == VYRE_OK && keyed) vc_plan_bind_bytes(plans, *out, &key);
  return st;
}
