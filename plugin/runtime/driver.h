/* driver.h -- libcuda loaded at run time: the list of entry points, their table, and what a CUresult means. */
#ifndef VYRE_PLUGIN_CUDA_DRIVER_H
#define VYRE_PLUGIN_CUDA_DRIVER_H

#include <cuda.h>
#include <cudaTypedefs.h>

#include "vyre/vyre.h"
#include "vyre/vyre_support.h"

#if CUDA_VERSION < 11040
#error "libvyre-cuda needs cuda.h from CUDA 11.4 or newer (cuGraphInstantiateWithFlags, cuGetProcAddress)"
#endif

/*
 * Every driver entry point the plugin uses: X(base name, CUDA version of
 * the prototype, parameter list).  Each is resolved with
 * cuGetProcAddress(base name, that version): the driver hands back the
 * newest implementation whose ABI is that prototype's.  Asking with the
 * header's CUDA_VERSION instead is wrong: CUDA 13 answers
 * "cuCtxSynchronize" with cuCtxSynchronize_v2(CUcontext).  The version
 * and prototype are checked at compile time against cudaTypedefs.h's
 * PFN_<name>_v<version>.  The list is also what the fake-driver tests
 * iterate over.  Call sites use VC_CU(cx, name, (args)) (context.h) so the name they
 * report in errors is the base name from this list.
 */
#define VC_DRIVER_API(X)                                                                     \
  X(cuInit, 2000, (unsigned int flags))                                                            \
  X(cuDriverGetVersion, 2020, (int *version))                                                      \
  X(cuDeviceGetCount, 2000, (int *count))                                                          \
  X(cuDeviceGet, 2000, (CUdevice * device, int ordinal))                                           \
  X(cuDeviceGetName, 2000, (char *name, int len, CUdevice dev))                                    \
  X(cuDeviceGetAttribute, 2000, (int *value, CUdevice_attribute attrib, CUdevice dev))             \
  X(cuDeviceTotalMem, 3020, (size_t * bytes, CUdevice dev))                                        \
  X(cuDevicePrimaryCtxRetain, 7000, (CUcontext * ctx, CUdevice dev))                               \
  X(cuDevicePrimaryCtxRelease, 11000, (CUdevice dev))                                               \
  X(cuDevicePrimaryCtxReset, 11000, (CUdevice dev))                                                 \
  X(cuCtxPushCurrent, 4000, (CUcontext ctx))                                                       \
  X(cuCtxPopCurrent, 4000, (CUcontext * ctx))                                                      \
  X(cuCtxSynchronize, 2000, (void))                                                                \
  X(cuMemGetInfo, 3020, (size_t * free_bytes, size_t * total_bytes))                               \
  X(cuMemAlloc, 3020, (CUdeviceptr * dptr, size_t bytes))                                          \
  X(cuMemFree, 3020, (CUdeviceptr dptr))                                                           \
  X(cuMemHostAlloc, 2020, (void **pp, size_t bytes, unsigned int flags))                           \
  X(cuMemFreeHost, 2000, (void *p))                                                                \
  X(cuMemcpyHtoDAsync, 3020, (CUdeviceptr dst, const void *src, size_t bytes, CUstream stream))    \
  X(cuMemcpyDtoHAsync, 3020, (void *dst, CUdeviceptr src, size_t bytes, CUstream stream))          \
  X(cuMemsetD8Async, 3020, (CUdeviceptr dst, unsigned char value, size_t n, CUstream stream))      \
  X(cuMemsetD16Async, 3020, (CUdeviceptr dst, unsigned short value, size_t n, CUstream stream))    \
  X(cuMemsetD32Async, 3020, (CUdeviceptr dst, unsigned int value, size_t n, CUstream stream))      \
  X(cuStreamCreate, 2000, (CUstream * stream, unsigned int flags))                                 \
  X(cuStreamDestroy, 4000, (CUstream stream))                                                      \
  X(cuStreamSynchronize, 2000, (CUstream stream))                                                  \
  X(cuEventCreate, 2000, (CUevent * event, unsigned int flags))                                    \
  X(cuEventDestroy, 4000, (CUevent event))                                                         \
  X(cuEventRecord, 2000, (CUevent event, CUstream stream))                                         \
  X(cuEventQuery, 2000, (CUevent event))                                                           \
  X(cuEventSynchronize, 2000, (CUevent event))                                                     \
  X(cuEventElapsedTime, 2000, (float *ms, CUevent start, CUevent end))                             \
  X(cuStreamWaitEvent, 3020, (CUstream stream, CUevent event, unsigned int flags))                 \
  X(cuPointerGetAttributes, 7000, (unsigned int n, CUpointer_attribute *attributes, void **data,    \
                                   CUdeviceptr ptr))                                               \
  X(cuStreamIsCapturing, 10000, (CUstream stream, CUstreamCaptureStatus * status))                 \
  X(cuMemGetAddressRange, 3020, (CUdeviceptr * base, size_t *size, CUdeviceptr ptr))               \
  X(cuModuleLoadData, 2000, (CUmodule * module, const void *image))                                \
  X(cuModuleLoadDataEx, 2010, (CUmodule * module, const void *image, unsigned int n,               \
                         CUjit_option *options, void **values))                                  \
  X(cuModuleUnload, 2000, (CUmodule module))                                                       \
  X(cuModuleGetFunction, 2000, (CUfunction * fn, CUmodule module, const char *name))               \
  X(cuLinkCreate, 6050, (unsigned int n, CUjit_option *options, void **values, CUlinkState *state)) \
  X(cuLinkAddData, 6050, (CUlinkState state, CUjitInputType type, void *data, size_t size,         \
                    const char *name, unsigned int n, CUjit_option *options, void **values))  \
  X(cuLinkComplete, 5050, (CUlinkState state, void **cubin, size_t *size))                         \
  X(cuLinkDestroy, 5050, (CUlinkState state))                                                      \
  X(cuLaunchKernel, 4000, (CUfunction fn, unsigned int gx, unsigned int gy, unsigned int gz,       \
                     unsigned int bx, unsigned int by, unsigned int bz, unsigned int smem,   \
                     CUstream stream, void **params, void **extra))                          \
  X(cuLaunchCooperativeKernel, 9000, (CUfunction fn, unsigned int gx, unsigned int gy,             \
                                unsigned int gz, unsigned int bx, unsigned int by,           \
                                unsigned int bz, unsigned int smem, CUstream stream,         \
                                void **params))                                              \
  X(cuOccupancyMaxActiveBlocksPerMultiprocessor, 6050,                                             \
    (int *blocks, CUfunction fn, int block_size, size_t dynamic_smem))                       \
  X(cuStreamBeginCapture, 10010, (CUstream stream, CUstreamCaptureMode mode))                       \
  X(cuStreamEndCapture, 10000, (CUstream stream, CUgraph * graph))                                  \
  X(cuGraphInstantiateWithFlags, 11040, (CUgraphExec * exec, CUgraph graph, unsigned long long flags)) \
  X(cuGraphLaunch, 10000, (CUgraphExec exec, CUstream stream))                                      \
  X(cuGraphExecDestroy, 10000, (CUgraphExec exec))                                                  \
  X(cuGraphDestroy, 10000, (CUgraph graph))                                                         \
  X(cuGetErrorName, 6000, (CUresult error, const char **text))                                     \
  X(cuGetErrorString, 6000, (CUresult error, const char **text))

/*
 * Entry points the plugin uses when the driver has them and does without
 * otherwise: X(base name, version, fallback version, parameter list).
 * Each is resolved at `version`, then at `fallback` (the same prototype,
 * an older implementation); a driver that has neither leaves the slot
 * NULL, never an error.  cuDeviceGetUuid: 11040 is cuDeviceGetUuid_v2
 * (a MIG instance's own UUID), 9020 the original (the parent GPU's).
 */
#define VC_DRIVER_OPTIONAL_API(X) X(cuDeviceGetUuid, 11040, 9020, (CUuuid * uuid, CUdevice dev))

/* Our own function-pointer types, one per entry point. */
#define VC_PFN_TYPEDEF_(name, version, params) typedef CUresult(CUDAAPI *vc_pfn_##name) params;
#define VC_PFN_TYPEDEF_OPT_(name, version, fallback, params) \
  typedef CUresult(CUDAAPI *vc_pfn_##name) params;
VC_DRIVER_API(VC_PFN_TYPEDEF_)
VC_DRIVER_OPTIONAL_API(VC_PFN_TYPEDEF_OPT_)
#undef VC_PFN_TYPEDEF_OPT_
#undef VC_PFN_TYPEDEF_

/* Our prototypes are the driver's at the version we ask for. */
#define VC_PFN_CHECK_(name, version, params)                                             \
  _Static_assert(__builtin_types_compatible_p(vc_pfn_##name, PFN_##name##_v##version),    \
                 #name " prototype differs from cudaTypedefs.h PFN_" #name "_v" #version);
VC_DRIVER_API(VC_PFN_CHECK_)
#define VC_PFN_CHECK_OPT_(name, version, fallback, params)                                 \
  _Static_assert(__builtin_types_compatible_p(vc_pfn_##name, PFN_##name##_v##version),      \
                 #name " prototype differs from cudaTypedefs.h PFN_" #name "_v" #version); \
  _Static_assert(__builtin_types_compatible_p(vc_pfn_##name, PFN_##name##_v##fallback),     \
                 #name " prototype differs from cudaTypedefs.h PFN_" #name "_v" #fallback);
VC_DRIVER_OPTIONAL_API(VC_PFN_CHECK_OPT_)
#undef VC_PFN_CHECK_OPT_
#undef VC_PFN_CHECK_

typedef struct vc_api {
#define VC_PFN_FIELD_(name, version, params) vc_pfn_##name f_##name;
  VC_DRIVER_API(VC_PFN_FIELD_)
#define VC_PFN_FIELD_OPT_(name, version, fallback, params) vc_pfn_##name f_##name;
  VC_DRIVER_OPTIONAL_API(VC_PFN_FIELD_OPT_) /* NULL when the driver lacks it */
#undef VC_PFN_FIELD_OPT_
#undef VC_PFN_FIELD_
} vc_api;

/* The loaded driver: owned by the context module (context.h), which
 * every other module calls through with VC_CU. */
typedef struct vc_driver {
  void *dl;
  vc_api api;
  int version; /* cuDriverGetVersion */
} vc_driver;

/*
 * dlopen libcuda (VYRE_CUDA_DRIVER or libcuda.so.1, RTLD_NODELETE) and
 * resolve every entry point of VC_DRIVER_API, and of
 * VC_DRIVER_OPTIONAL_API those the driver has.  On failure err says why
 * (VYRE_NO_DEVICE, keeping the dlerror() text) and *d may hold a library
 * handle: vc_driver_close releases it.  Not thread-safe for one *d.
 */
vyre_status vc_driver_open(vc_driver *d, vyre_error *err);
/* Drop the library reference and clear the table (idempotent). */
void vc_driver_close(vc_driver *d);
/* Name and text of a CUresult; the lookups' own failures give fixed
 * texts.  d may be NULL or half-open.  Thread-safe. */
void vc_driver_describe(const vc_driver *d, CUresult r, const char **name, const char **text);
/* 1 when `r` leaves the context unusable (illegal address, launch failure...). */
int vc_is_sticky(CUresult r);
/* The Fix a failed call with code r deserves when the caller has none. */
const char *vc_default_fix(CUresult r);

#endif /* VYRE_PLUGIN_CUDA_DRIVER_H */
