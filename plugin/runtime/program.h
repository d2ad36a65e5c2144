/* program.h -- a program's way to a plan: decode, capability and limit checks, codegen options. */
#ifndef VYRE_PLUGIN_CUDA_PROGRAM_H
#define VYRE_PLUGIN_CUDA_PROGRAM_H

#include <stdint.h>

#include "context.h"
#include "modcache.h"
#include "vyre/vyre_program.h"

/* Decode and validate a program image (the plugin never trusts the host). */
vyre_status vc_program_decode(const void *bytes, uint64_t size, vyre_program **prog,
                              vyre_error *err);
/* The workgroup a dispatch runs with: the override, else the program's. */
void vc_program_workgroup(const vyre_program *prog, const vyre_dispatch_options *o,
                          uint32_t wg[3]);
/* 1 when the options override the grid. */
int vc_has_grid_override(const vyre_dispatch_options *o);
/*
 * Check prog against the device (capabilities, workgroup memory, block
 * limits) and get its plan under options o and codegen flags extra_flags.
 * prog is consumed.  *out holds one reference.  Context current.
 */
vyre_status vc_program_plan(vc_context *cx, vc_modcache *plans, vyre_program *prog,
                            const vyre_dispatch_options *o, uint32_t extra_flags, vc_plan **out,
                            vyre_error *err);

/*
 * vc_program_decode + vc_program_plan for an image, through the plan
 * cache's first level: bytes and settings seen before get their plan
 * without a decode, a validation or a device check (identical bytes and
 * settings give an identical plan).  *out holds one reference.  Context
 * current.
 */
vyre_status vc_program_plan_bytes(vc_context *cx, vc_modcache *plans, const void *bytes,
                                  uint64_t size, const vyre_dispatch_options *o,
                                  uint32_t extra_flags, vc_plan **out, vyre_error *err);

#endif /* VYRE_PLUGIN_CUDA_PROGRAM_H */
