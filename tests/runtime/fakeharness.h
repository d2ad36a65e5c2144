/* fakeharness.h -- what the fault-sweep and thread suites share: the plugin and the fake libcuda loaded once, test programs, kernels played on the host. */
#ifndef VYRE_TESTS_FAKEHARNESS_H
#define VYRE_TESTS_FAKEHARNESS_H

#include <stddef.h>
#include <stdint.h>

#include <cuda.h>

#include "fakecuda/fakecuda.h"
#include "vyre/vyre.h"

/* The fake's control API (fakecuda.h), resolved by fh_load. */
typedef struct fh_fake {
  fakecuda_reset_fn reset;
  fakecuda_inject_fn inject;
  fakecuda_clear_faults_fn clear_faults;
  fakecuda_calls_fn calls;
  fakecuda_live_fn live;
  fakecuda_set_hook_fn set_hook;
  fakecuda_violations_fn violations;
  fakecuda_poisoned_fn poisoned;
  fakecuda_allow_legacy_fn allow_legacy;
  fakecuda_launch_count_fn launch_count;
  fakecuda_launch_get_fn launch_get;
  fakecuda_total_calls_fn total_calls;
  fakecuda_inject_call_fn inject_call;
  fakecuda_call_fault_fired_fn call_fault_fired;
  CUresult (*ctx_release)(CUdevice device); /* cuDevicePrimaryCtxRelease_v2 */
  CUresult (*ctx_pop)(CUcontext *ctx);       /* cuCtxPopCurrent_v2 */
} fh_fake;

extern fh_fake fh;
extern const vyre_registration *fh_reg;
extern char fh_fake_path[1024];

/* Load the plugin and the fake from $VYRE_BUILD_DIR (default "."), point
 * the plugin at the fake and install the kernel player; 0, or -1 with a
 * message on stderr. */
int fh_load(const char *who);

/* A new process for the fake (fakecuda_reset: no faults, no poison, no
 * objects, counters zero) with the kernel player installed again. */
void fh_reset(void);

/* Test programs, encoded (free bytes with free()).  The kernels they
 * compile to are played on the host by the fake's launch hook once
 * fh_learn has seen them, so outputs can be checked:
 *   scale: out (n u32) = in (u32) * k
 *   inc:   buf (u32 rw) += 1
 *   trap:  traps with code 7 (out n u32)
 *   grid:  buf[i] = i, grid barrier, out[i] = buf[i + 1] (cooperative) */
typedef struct fh_prog {
  void *bytes;
  size_t size;
} fh_prog;

fh_prog fh_prog_scale(uint32_t n, uint32_t k, uint32_t wg);
fh_prog fh_prog_inc(uint32_t wg);
fh_prog fh_prog_trap(uint32_t n);
fh_prog fh_prog_grid(uint32_t n, uint32_t wg);
vyre_program_ref fh_ref(const fh_prog *p);

/* What the player does for a kernel. */
typedef enum fh_kind { FH_SCALE = 1, FH_INC, FH_TRAP, FH_GRID } fh_kind;

/* Teach the player the kernel the last launch ran: it plays `kind` (with
 * factor k for FH_SCALE; k increments, 0 meaning 1, for FH_INC: a fused
 * sequence of k inc steps) for every later launch of that kernel.  Call
 * after one dispatch of the program (thread-safe; up to 32 kernels). */
void fh_learn(fh_kind kind, uint32_t k);
/* Forget every learnt kernel. */
void fh_forget(void);

/* An environment for the plugin: disk cache off, staging chunks of
 * `chunk` bytes (0: the default), `threads` copy threads. */
void fh_env(uint64_t chunk, unsigned threads);

/* One metric's value, or UINT64_MAX when it cannot be read. */
uint64_t fh_metric(vyre_backend *b, const char *name);

#endif /* VYRE_TESTS_FAKEHARNESS_H */
