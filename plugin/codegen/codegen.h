/* codegen.h -- IR -> PTX lowering: pure C, no CUDA headers, testable on any machine. */
#ifndef VYRE_PLUGIN_CODEGEN_H
#define VYRE_PLUGIN_CODEGEN_H

#include <stddef.h>
#include <stdint.h>

#include "vyre/vyre_program.h"

/* Bumped whenever generated code changes meaning or shape: part of every
 * cache key (memory and disk). */
#define CG_VERSION 9u

/* "CRC-LENGTH" of the code generator's and ptxmath's sources (cksum),
 * made by the build: also part of every cache key, so a build whose
 * generator differs in any way never reuses another build's cubins, even
 * when CG_VERSION was not bumped. */
extern const char cg_source_id[];

/* cg_options.flags */
#define CG_NO_FASTPATH (1u << 0) /* never use the vectorised elementwise path */
/* Indirect dispatch (vyre_indirect): one more kernel parameter, `indirect`,
 * a .u64 pointer to three u32 workgroup counts (x, y, z) read when the
 * kernel starts; workgroups at or past the count on any axis exit at once,
 * and a count past the launched grid on any axis runs nothing and is
 * reported in the trap words (CG_INDIRECT_TRAP).  Implies the general
 * (logical grid) path and info.uses_trap (docs/kernel-abi.md). */
#define CG_INDIRECT (1u << 1)

/* The trap instruction word an over-bound indirect count leaves: this +
 * the axis (0 x, 1 y, 2 z, the first past its bound); the trap code word
 * then holds that axis's count.  Above any instruction index + 1
 * (VYRE_MAX_INSTS), so a program trap never reads as one. */
#define CG_INDIRECT_TRAP 0xFFFFFFF0u

typedef struct cg_options {
  uint32_t sm_major, sm_minor;   /* target compute capability, e.g. 9, 0 */
  uint32_t ulp_budget;           /* 0 = strict (docs/ulp.md) */
  uint32_t workgroup[3];         /* workgroup size the kernel will be launched with */
  uint32_t flags;                /* CG_* */
} cg_options;

/* How the runtime must size the launch. */
typedef enum cg_grid_mode {
  CG_GRID_LOGICAL = 0,    /* launch geometry->grid blocks of geometry->workgroup */
  CG_GRID_ELEMENTWISE = 1 /* launch ceil(element_count / (wg.x * elements_per_thread)) blocks;
                             the kernel covers invocations [0, element_count) */
} cg_grid_mode;

typedef struct cg_kernel_info {
  char entry[64];              /* .visible .entry name */
  uint32_t kernel_buffers;     /* .u64 pointer params before the params pointer */
  uint32_t params_words;       /* u32 words the params block needs */
  uint32_t shared_bytes;       /* static workgroup memory */
  uint32_t grid_mode;          /* cg_grid_mode */
  uint32_t elements_per_thread;/* >= 1 */
  uint32_t uses_grid_barrier;  /* needs cuLaunchCooperativeKernel */
  uint32_t uses_trap;          /* check the params trap words after the launch */
  uint32_t ptx_isa_major, ptx_isa_minor; /* .version written */
} cg_kernel_info;

/*
 * Lower a validated program to PTX text (docs/kernel-abi.md is the kernel
 * ABI).  *ptx receives a malloc'd NUL-terminated string (free with free()),
 * *length its strlen.  Fails with UNSUPPORTED naming the op and a Fix (for
 * example a transcendental under a strict ulp budget) or with
 * INVALID_ARGUMENT for a target it cannot emit.  Thread-safe, no global
 * state.
 */
vyre_status cg_emit_ptx(const vyre_program *program, const cg_options *options, char **ptx,
                        size_t *length, cg_kernel_info *info, vyre_error *err);

/*
 * 1 when cg_emit_ptx would lower a validated `program` under `options`
 * on the elementwise path (grid mode CG_GRID_ELEMENTWISE; docs/codegen.md
 * "Elementwise path"), 0 when not, when the options are not a target it
 * emits, or when host memory runs out: the same analysis, without
 * lowering anything.  Thread-safe, no global state.
 */
int cg_elementwise_query(const vyre_program *program, const cg_options *options);

#endif /* VYRE_PLUGIN_CODEGEN_H */
