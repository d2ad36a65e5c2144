/* harness.h -- what the files of check_cuda_fake share: the plugin and the fake libcuda loaded once, the fixture, test programs and the kernel player. */
#ifndef VYRE_TESTS_CUDA_FAKE_HARNESS_H
#define VYRE_TESTS_CUDA_FAKE_HARNESS_H

#include <check.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cuda.h>

#include "../fakecuda/fakecuda.h"
#include "../fakeharness.h"
#include "vyre/vyre.h"
#include "vyre/vyre_cuda.h"
#include "vyre/vyre_program.h"
#include "vyre/vyre_support.h"

/* The names below are the ones the tests have always used (one program,
 * not a product): the files are the old check_cuda_fake.c cut at its
 * test cases, and keep its code as it was. */

/* The fake's control API (fakecuda.h), resolved by fake_load. */
typedef struct fake_api {
  fakecuda_reset_fn reset;
  fakecuda_get_config_fn get_config;
  fakecuda_set_config_fn set_config;
  fakecuda_inject_fn inject;
  fakecuda_clear_faults_fn clear_faults;
  fakecuda_calls_fn calls;
  fakecuda_names_fn names;
  fakecuda_live_fn live;
  fakecuda_launch_count_fn launch_count;
  fakecuda_launch_get_fn launch_get;
  fakecuda_set_hook_fn set_hook;
  fakecuda_hold_events_fn hold_events;
  fakecuda_complete_events_fn complete_events;
  fakecuda_hang_launches_fn hang_launches;
  fakecuda_violations_fn violations;
  fakecuda_jit_fail_fn jit_fail;
  fakecuda_jit_opt_level_fn jit_opt_level;
  fakecuda_jit_rendezvous_fn jit_rendezvous;
  fakecuda_jit_max_concurrent_fn jit_max_concurrent;
  fakecuda_pageable_copies_fn pageable_copies;
  fakecuda_poisoned_fn poisoned;
  fakecuda_fault_launch_fn fault_launch;
  fakecuda_op_count_fn op_count;
  fakecuda_op_get_fn op_get;
  fakecuda_allow_legacy_fn allow_legacy;
  CUresult (*ctx_release)(CUdevice);
  fakecuda_set_device_fn set_device;
  fakecuda_device_bytes_fn device_bytes;
} fake_api;

/* The fake's own entry points, for tests that play the host application
 * (its memory, streams and captures, in a context it retained). */
typedef struct fake_host_api {
  CUresult (*retain)(CUcontext *, CUdevice);
  CUresult (*push)(CUcontext);
  CUresult (*pop)(CUcontext *);
  CUresult (*mem_alloc)(CUdeviceptr *, size_t);
  CUresult (*mem_free)(CUdeviceptr);
  CUresult (*host_alloc)(void **, size_t, unsigned int);
  CUresult (*host_free)(void *);
  CUresult (*stream_create)(CUstream *, unsigned int);
  CUresult (*stream_destroy)(CUstream);
  CUresult (*begin_capture)(CUstream, CUstreamCaptureMode);
  CUresult (*end_capture)(CUstream, CUgraph *);
  CUresult (*graph_destroy)(CUgraph);
} fake_host_api;

extern fake_api fk;
extern fake_host_api host;
/* The plugin's registration, and the paths of the plugin and the fake. */
extern const vyre_registration *reg;
extern char plugin_path[1024], fake_path[1024];
/* This test's private temp dir (VYRE_CACHE_DIR is its "cache"), made by
 * the fixture and removed after the test. */
extern char tmpdir[256];

/* Load the plugin and the fake from $VYRE_BUILD_DIR (default "."):
 * 0, or 1 with a message on stderr.  Once, before the suite runs. */
int fake_load(void);

/* A test case of the suite with the fixture every case uses (a clean
 * environment pointing the plugin at the fake, a temp dir, a fresh fake;
 * after the test, no driver misuse) and `timeout` seconds per test. */
TCase *fake_tcase(Suite *s, const char *name, int timeout);

/* The test cases, one function per file, adding its tests in order. */
void fake_core_tests(TCase *tc);     /* core.c */
void fake_async_tests(TCase *tc);    /* async.c */
void fake_staging_tests(TCase *tc);  /* staging.c */
void fake_split_tests(TCase *tc);    /* split.c */
void fake_resident_tests(TCase *tc); /* resident.c */
void fake_interop_tests(TCase *tc);  /* interop.c */
void fake_pools_tests(TCase *tc);    /* caches.c */
void fake_caches_tests(TCase *tc);   /* caches.c */
void fake_errors_tests(TCase *tc);   /* errors.c */
void fake_timeout_tests(TCase *tc);  /* timeouts.c */
void fake_sweep_tests(TCase *tc);    /* sweep.c */
void fake_devices_tests(TCase *tc);  /* devices.c */
void fake_jit_tests(TCase *tc);      /* jit.c */
void fake_fusion_tests(TCase *tc);   /* fusion.c */
void fake_fill_tests(TCase *tc);     /* fill.c */
void fake_indirect_tests(TCase *tc); /* indirect.c */

/* A new instance on the default device; create must return `want`. */
vyre_backend *mk_status(vyre_status want, vyre_error *err);
/* A new instance; fails the test unless create succeeds. */
vyre_backend *mk(void);
/* One metric's value; fails the test when it is not reported. */
uint64_t metric(vyre_backend *b, const char *name);
/* After the last destroy: the primary context released and every driver
 * object freed by the plugin itself. */
void assert_no_leaks_after_destroy(const char *what);

/* An encoded test program (free bytes with free()): the fault and thread
 * suites' type (../fakeharness.h), whose builders serve the shared shapes. */
typedef fh_prog prog;

/* out[gid] = in[gid] * k  (u32; in sized by input, out fixed at n) */
prog prog_scale(uint32_t n, uint32_t k, uint32_t wg);
/* buf[gid] += 1  (u32 rw, sized by input / resident) */
prog prog_inc(uint32_t wg);
/* out (n u32, only bytes [off, off+size) read back) = gid */
prog prog_range(uint32_t n, uint32_t off, uint32_t size);
/* if gid == 5: trap 7; out[gid] = 1 */
prog prog_trap(uint32_t n);
/* store, grid barrier, load the neighbour */
prog prog_grid(uint32_t n, uint32_t wg);
/* out (bf16, n) = in (bf16) */
prog prog_bf16(uint32_t n);
vyre_program_ref ref_of(const prog *p);

/* The launch hook that plays the kernels the fake only records
 * (fk.set_hook(play, NULL)): hook_mode 1 scale by hook_k, 2 inc,
 * 3 trap 7 at prog_trap's trap, 4 range (out[i] = i); 0 nothing. */
extern int hook_mode;
extern uint32_t hook_k;
void play(const fakecuda_launch *l, void *user);

/* Dispatch prog_scale p on n input words. */
vyre_status run_scale(vyre_backend *b, const prog *p, uint32_t n, uint32_t *in,
                      vyre_outputs **out, vyre_timing *t, vyre_error *err);

/* How many files in dir end with suffix (0 when dir is missing). */
int count_files(const char *dir, const char *suffix);

/* The interop extension of b; fails the test when it is not served. */
const vyre_cuda_interop *interop_of(vyre_backend *b);

#endif /* VYRE_TESTS_CUDA_FAKE_HARNESS_H */
