/* fakecuda.h -- control API of the fake libcuda (tests/runtime/fakecuda/fakecuda.c), reached with dlsym on the loaded .so. */
#ifndef VYRE_TESTS_FAKECUDA_H
#define VYRE_TESTS_FAKECUDA_H

#include <stddef.h>
#include <stdint.h>

/*
 * The fake is a libcuda.so lookalike for tests without a GPU: device
 * memory is host memory (a CUdeviceptr is a malloc'd address), copies and
 * memsets really move bytes at the moment they are enqueued, launches only
 * record their arguments (and call an optional hook that may play the
 * kernel), streams, events and graphs complete at once unless events are
 * held.  Any entry point can be made to fail on its Nth call with any
 * CUresult, and any executed kernel can fault on the device (the context
 * is poisoned after its launch succeeded); a sticky code poisons the context until the primary context
 * is reset or released by its last holder, like the real driver.
 *
 * Pointer queries (cuPointerGetAttributes, cuMemGetAddressRange) answer
 * for the fake's allocations: device memory of the device whose context
 * was current at cuMemAlloc, pinned host memory, or unknown.
 *
 * Device properties come from the environment at load and at
 * fakecuda_reset() (a new process: the sticky-error poison is gone too): FAKECUDA_DEVICES (1), FAKECUDA_INIT_RESULT (0),
 * FAKECUDA_SM (90), FAKECUDA_SMS (132), FAKECUDA_MEM (1 GiB, bytes),
 * FAKECUDA_COOP (1), FAKECUDA_MAX_BLOCKS_PER_SM (0: 2048 / block size),
 * FAKECUDA_UUID (2: see fakecuda_config.uuid).
 * Every function here is thread-safe.
 */

typedef struct fakecuda_config {
  int devices;
  int init_result;      /* what cuInit returns */
  int sm_major, sm_minor;
  int sms;
  unsigned long long total_mem;
  unsigned long long reserved_mem; /* taken by "other processes": not free */
  int cooperative;
  int max_blocks_per_sm; /* 0: min(32, 2048 / block) */
  int driver_version;
  int max_threads_per_block;
  int shared_per_block;
  int warp_size;
  double ms_per_tick; /* event time: one tick per enqueued operation */
  char name[64];
  /* cuDeviceGetUuid (FAKECUDA_UUID): 2 = cuGetProcAddress serves it at
   * 11040 (cuDeviceGetUuid_v2) and 9020; 1 = only at 9020 (the plugin's
   * fallback); 0 = not at all (a driver without it; no violation).  Device
   * d's UUID is fa4ec0da-00dd-4000-8000-0000000000dd (dd = d in hex):
   * GPU-fa4ec0da-0000-4000-8000-000000000000 for device 0. */
  int uuid;
} fakecuda_config;

typedef struct fakecuda_live {
  long device_allocs;
  unsigned long long device_bytes;
  long host_allocs;
  long streams, events, modules, links, graphs, execs;
  long ctx_refs;
  unsigned long reclaimed; /* objects freed by context destruction, not by the client */
} fakecuda_live;

#define FAKECUDA_MAX_PARAMS 72
#define FAKECUDA_MAX_ARRAY_BYTES 512

typedef struct fakecuda_launch {
  char kernel[64];
  unsigned grid[3], block[3], shared_bytes;
  int cooperative;
  int from_graph;
  void *stream;
  unsigned nparams;
  unsigned long long params[FAKECUDA_MAX_PARAMS]; /* each parameter's value (0 for an array) */
  unsigned counts_bytes;                          /* the first array parameter, by value */
  uint32_t counts[FAKECUDA_MAX_ARRAY_BYTES / 4];
  int device;    /* ordinal of the device whose context was current */
  void *context; /* that CUcontext (each device has its own) */
} fakecuda_launch;

/* One stream-ordered call, in the order they were made (copies, memsets,
 * launches, graph launches, event records, stream waits). */
typedef struct fakecuda_op {
  char call[48];
  void *stream; /* the CUstream as passed (NULL: the legacy default stream) */
  void *event;  /* cuEventRecord, cuStreamWaitEvent: the CUevent */
  /* cuMemsetD8/D16/D32Async: direct, or a memset node of a graph replay
   * (traced as the replay runs it, before that cuGraphLaunch's own op): */
  unsigned long long dst;   /* device address */
  unsigned long long words; /* how many words of unit bytes */
  unsigned unit, value;     /* 1, 2 or 4; the word */
  int from_graph;
} fakecuda_op;

/* Called for every executed launch (direct or graph replay), without the
 * fake's lock held; device pointers in params are host addresses. */
typedef void (*fakecuda_hook)(const fakecuda_launch *launch, void *user);

typedef void (*fakecuda_reset_fn)(void);
typedef void (*fakecuda_get_config_fn)(fakecuda_config *out);
typedef void (*fakecuda_set_config_fn)(const fakecuda_config *in);
/* The `nth` call (1 = the next) of entry point `name` from now on, and the
 * `count` - 1 after it (count 0: every later call), return `code`. */
typedef void (*fakecuda_inject_fn)(const char *name, unsigned long nth, int code,
                                   unsigned long count);
typedef void (*fakecuda_clear_faults_fn)(void);
/* How many times `name` was called since the last reset. */
typedef unsigned long (*fakecuda_calls_fn)(const char *name);
/* The entry points called (or resolved) since the last reset, in first-use
 * order; returns how many exist. */
typedef unsigned (*fakecuda_names_fn)(const char **names, unsigned capacity);
typedef void (*fakecuda_live_fn)(fakecuda_live *out);
typedef unsigned long (*fakecuda_launch_count_fn)(void);
typedef int (*fakecuda_launch_get_fn)(unsigned long index, fakecuda_launch *out);
typedef void (*fakecuda_set_hook_fn)(fakecuda_hook hook, void *user);
/* Events recorded while held stay not-ready until a synchronisation or
 * fakecuda_complete_events(). */
typedef void (*fakecuda_hold_events_fn)(int on);
typedef void (*fakecuda_complete_events_fn)(void);
/* While on, every kernel executed (launched or replayed in a graph) never
 * finishes: events recorded on its stream after it stay not ready
 * (cuEventQuery: CUDA_ERROR_NOT_READY), and a cuEventSynchronize,
 * cuStreamSynchronize or cuCtxSynchronize that would wait for it is
 * recorded as misuse (it would block forever) and returns at once.  Off:
 * the hung kernels finish.  Reset turns it off; a stream destroyed with
 * its context goes with its kernel. */
typedef void (*fakecuda_hang_launches_fn)(int on);
/* Misuse the fake detected (a copy outside an allocation, a call without
 * a current context, a stale handle...): count, and the last message. */
typedef unsigned long (*fakecuda_violations_fn)(char *last, size_t capacity);
/* The next `count` PTX JIT links fail with CUDA_ERROR_INVALID_PTX and `log`. */
typedef void (*fakecuda_jit_fail_fn)(unsigned count, const char *log);
/* CU_JIT_OPTIMIZATION_LEVEL of the last JIT (cuLinkCreate or
 * cuModuleLoadDataEx), -1 when it did not pass one or none ran. */
typedef int (*fakecuda_jit_opt_level_fn)(void);
/* n > 0: every JIT call (cuLinkComplete, cuModuleLoadDataEx) waits, before
 * it takes the fake's lock, until n JIT calls have been inside at once, or
 * 2 s; 0 disarms.  Counting restarts here. */
typedef void (*fakecuda_jit_rendezvous_fn)(unsigned n);
/* The most JIT calls inside at once since the last rendezvous or reset. */
typedef unsigned (*fakecuda_jit_max_concurrent_fn)(void);
/* Host-to-device copies whose source was not pinned (cuMemHostAlloc) memory. */
typedef unsigned long (*fakecuda_pageable_copies_fn)(void);
/* The sticky error poisoning the context now, 0 if none. */
typedef int (*fakecuda_poisoned_fn)(void);
/* The `nth` kernel executed from now (1 = the next; a direct launch or a
 * graph replay's) faults on the device with `code`, as a kernel storing
 * to address 0 does on a GPU: its launch call succeeds and is recorded,
 * then the context is poisoned (a sticky code: every later context call
 * returns it).  nth = 0 cancels.  Cleared by fakecuda_reset and
 * fakecuda_clear_faults. */
typedef void (*fakecuda_fault_launch_fn)(unsigned long nth, int code);

/* The stream-ordered calls since the last reset: how many, and the
 * index-th (0 on success, -1 past the end). */
typedef unsigned long (*fakecuda_op_count_fn)(void);
typedef int (*fakecuda_op_get_fn)(unsigned long index, fakecuda_op *out);
/* on = 1: cuEventRecord, cuStreamWaitEvent and cuStreamIsCapturing on
 * the legacy default stream are no misuse (a host's stream may be it);
 * copies and launches there still are.  Cleared by fakecuda_reset. */
typedef void (*fakecuda_allow_legacy_fn)(int on);

/* Calls of every entry point together since the last reset (what
 * fakecuda_inject_call counts). */
typedef unsigned long (*fakecuda_total_calls_fn)(void);
/* The `nth` driver call from now on (1 = the next), whichever entry point
 * it is, returns `code` (a sticky code poisons the context, as an
 * injected fault does); the calls after it run normally.  nth = 0
 * cancels.  Cleared by fakecuda_reset and fakecuda_clear_faults. */
typedef void (*fakecuda_inject_call_fn)(unsigned long nth, int code);
/* Whether the failure fakecuda_inject_call armed has happened; `name`
 * receives the entry point it hit ("" before). */
typedef int (*fakecuda_call_fault_fired_fn)(char *name, size_t capacity);

/* Several devices (FAKECUDA_DEVICES, at most 8): each has its own primary
 * context, memory, objects (a context's death frees only its device's)
 * and properties.  By default device k > 0 is named "<name> k" and
 * otherwise has the config's properties; fakecuda_set_device overrides
 * them for one device (a field left 0 keeps the config's; sm_minor goes
 * with sm_major).  A launch that mixes devices (a stream, kernel or
 * buffer of another device than the current context's) is misuse.
 * Cleared by fakecuda_reset. */
typedef struct fakecuda_device {
  char name[64];
  unsigned long long total_mem;
  int sm_major, sm_minor;
  int sms;
} fakecuda_device;
typedef void (*fakecuda_set_device_fn)(int ordinal, const fakecuda_device *dev);
/* Bytes of device memory allocated on device `ordinal` now. */
typedef unsigned long long (*fakecuda_device_bytes_fn)(int ordinal);

#endif /* VYRE_TESTS_FAKECUDA_H */
