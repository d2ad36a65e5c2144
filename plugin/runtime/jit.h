/* jit.h -- PTX to a loaded CUfunction: the driver's linker (JIT) with its error log, module load, PTX dumps. */
#ifndef VYRE_PLUGIN_CUDA_JIT_H
#define VYRE_PLUGIN_CUDA_JIT_H

#include <stddef.h>
#include <stdint.h>

#include "context.h"
#include "plugin/codegen/codegen.h"

/* A loaded kernel. */
typedef struct vc_jit_module {
  CUmodule module;
  CUfunction fn;
  uint32_t coop_max_blocks; /* co-resident blocks (grid barrier kernels), 0 otherwise */
} vc_jit_module;

/* How an instance JITs, read once when it is created (docs/environment.md). */
typedef struct vc_jit_config {
  uint32_t opt_level; /* CU_JIT_OPTIMIZATION_LEVEL 0..4: VYRE_CUDA_JIT_OPT_LEVEL, default 4 */
  int direct;         /* VYRE_CUDA_JIT_DIRECT=1: without a disk cache, vc_jit_load_ptx */
} vc_jit_config;

/* Read VYRE_CUDA_JIT_OPT_LEVEL (a count out of 0..4 is warned about and
 * clamped) and VYRE_CUDA_JIT_DIRECT ("1" = on). */
void vc_jit_config_read(vc_jit_config *out);

/* VYRE_PTX_DUMP_DIR set: write the PTX to DIR/<entry>-<key prefix>.ptx
 * (a failure is logged).  Thread-safe. */
void vc_jit_dump_ptx(const uint8_t key[32], const char *entry, const char *ptx, size_t len);
/*
 * PTX (len bytes plus its NUL) -> cubin with the driver's linker for the
 * current context's device, at jc's optimisation level.  *cubin is
 * malloc'd (the caller frees).  A JIT failure is VYRE_COMPILE carrying
 * the call, the CUresult name and the JIT error log.  Context current;
 * thread-safe: no lock is held while the driver compiles.
 */
vyre_status vc_jit_link(vc_context *cx, const vc_jit_config *jc, const cg_kernel_info *info,
                        const char *ptx, size_t len, void **cubin, size_t *cubin_size,
                        vyre_error *err);
/*
 * Load a cubin and find its entry; for a grid-barrier kernel also the
 * co-resident block limit for a workgroup of `threads`.  On failure
 * out->module may be loaded: vc_jit_unload it.  Context current.
 */
vyre_status vc_jit_load(vc_context *cx, const void *cubin, const cg_kernel_info *info,
                        uint32_t threads, vc_jit_module *out, vyre_error *err);
/*
 * PTX (NUL-terminated) JIT-compiled and loaded in one cuModuleLoadDataEx
 * (no linker, no cubin to keep), at jc's optimisation level, then as
 * vc_jit_load: failures as vc_jit_link's, with "cuModuleLoadDataEx" as
 * the call.  On failure out->module may be loaded: vc_jit_unload it.
 * Context current; thread-safe.
 */
vyre_status vc_jit_load_ptx(vc_context *cx, const vc_jit_config *jc, const cg_kernel_info *info,
                            const char *ptx, uint32_t threads, vc_jit_module *out,
                            vyre_error *err);
/* Unload a module (NULL accepted) when cleanup is possible. */
void vc_jit_unload(vc_context *cx, CUmodule module);

#endif /* VYRE_PLUGIN_CUDA_JIT_H */
