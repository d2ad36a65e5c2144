/* driver.c -- loading libcuda at run time: dlopen, the entry table through cuGetProcAddress, CUresult names and fixes. */
#include "driver.h"

#include <dlfcn.h>
#include <string.h>

#include "abi/support/config.h"
#include "abi/support/file.h"
#include "util.h"

#define DEFAULT_DRIVER "libcuda.so.1"

/* Codes after which the context cannot be used again (CUDA driver API
 * reference, "Error Handling": "the process must terminate and relaunch"
 * for the context; a fresh primary context recovers). */
int vc_is_sticky(CUresult r) {
  switch (r) {
  case CUDA_ERROR_ILLEGAL_ADDRESS:
  case CUDA_ERROR_LAUNCH_FAILED:
  case CUDA_ERROR_LAUNCH_TIMEOUT:
  case CUDA_ERROR_ILLEGAL_INSTRUCTION:
  case CUDA_ERROR_MISALIGNED_ADDRESS:
  case CUDA_ERROR_INVALID_ADDRESS_SPACE:
  case CUDA_ERROR_INVALID_PC:
  case CUDA_ERROR_HARDWARE_STACK_ERROR:
  case CUDA_ERROR_ASSERT:
  case CUDA_ERROR_ECC_UNCORRECTABLE:
  case CUDA_ERROR_NVLINK_UNCORRECTABLE:
  case CUDA_ERROR_CONTEXT_IS_DESTROYED:
    return 1;
  default:
    return 0;
  }
}

void vc_driver_describe(const vc_driver *d, CUresult r, const char **name, const char **text) {
  *name = NULL;
  *text = NULL;
  if (d && d->api.f_cuGetErrorName && d->api.f_cuGetErrorName(r, name) != CUDA_SUCCESS)
    *name = NULL;
  if (d && d->api.f_cuGetErrorString && d->api.f_cuGetErrorString(r, text) != CUDA_SUCCESS)
    *text = NULL;
  if (!*name) *name = "unrecognised CUresult";
  if (!*text) *text = "the driver has no description for this code";
}

const char *vc_default_fix(CUresult r) {
  if (vc_is_sticky(r)) return "destroy and recreate the backend";
  switch (r) {
  case CUDA_ERROR_OUT_OF_MEMORY:
    return "free resident buffers or pipelines, dispatch smaller inputs, or call shutdown to "
           "return cached memory";
  case CUDA_ERROR_NOT_INITIALIZED:
  case CUDA_ERROR_NO_DEVICE:
  case CUDA_ERROR_INVALID_DEVICE:
    return "check the device with nvidia-smi and CUDA_VISIBLE_DEVICES";
  case CUDA_ERROR_INVALID_PTX:
  case CUDA_ERROR_UNSUPPORTED_PTX_VERSION:
    return "update the NVIDIA driver; if that does not help, report a codegen bug with the PTX "
           "(set VYRE_PTX_DUMP_DIR)";
  case CUDA_ERROR_COOPERATIVE_LAUNCH_TOO_LARGE:
    return "use fewer workgroups for a program with a grid barrier";
  case CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES:
    return "use a smaller workgroup";
  default:
    return "retry; if it persists, run with VYRE_LOG=debug and check the driver installation "
           "(nvidia-smi)";
  }
}

#if CUDA_VERSION >= 12000
typedef CUresult(CUDAAPI *vc_pfn_getproc_v2)(const char *symbol, void **pfn, int version,
                                              cuuint64_t flags,
                                              CUdriverProcAddressQueryResult *status);
#endif
typedef CUresult(CUDAAPI *vc_pfn_getproc_v1)(const char *symbol, void **pfn, int version,
                                              cuuint64_t flags);

/* A path (not a bare name the dynamic linker searches for): a FIFO
 * would block dlopen and a truncated library would SIGBUS inside it, so
 * it is judged from its file first (abi/support/file.h).  A file that
 * cannot be opened at all (native code: the errno) is left to dlopen,
 * whose dlerror() text says the same. */
static vyre_status check_driver_file(const char *path, vyre_error *err) {
  vyre_error refused = VYRE_ERROR_INIT;
  if (!strchr(path, '/') ||
      vyre__file_check_library(path, "point VYRE_CUDA_DRIVER at the NVIDIA driver's complete "
                               "libcuda.so.1 (ldconfig -p | grep libcuda), or unset it",
                               &refused) == VYRE_OK ||
      refused.native_code != 0)
    return VYRE_OK;
  return vyre_error_set(err, VYRE_NO_DEVICE, 0, "CUDA driver not loaded: VYRE_CUDA_DRIVER: %s",
                        refused.message);
}

vyre_status vc_driver_open(vc_driver *d, vyre_error *err) {
  const char *path = vyre__env(VYRE__ENV_CUDA_DRIVER);
  if (!path) path = DEFAULT_DRIVER;
  vyre_status st = check_driver_file(path, err);
  if (st != VYRE_OK) return st;
  dlerror();
  /* RTLD_NODELETE: libcuda keeps threads and atexit handlers; it must
   * never be unmapped, even when the last instance closes it. */
  d->dl = dlopen(path, RTLD_NOW | RTLD_LOCAL | RTLD_NODELETE);
  if (!d->dl) {
    const char *why = dlerror();
    return vyre_error_set(err, VYRE_NO_DEVICE, 0,
                          "CUDA driver not loaded: dlopen(\"%s\") failed: %s. Fix: install the "
                          "NVIDIA driver (it provides libcuda.so.1), or set VYRE_CUDA_DRIVER to "
                          "the path of libcuda.so",
                          path, why ? why : "unknown error");
  }
#if CUDA_VERSION >= 12000
  vc_pfn_getproc_v2 getproc2 = (vc_pfn_getproc_v2)dlsym(d->dl, "cuGetProcAddress_v2");
#endif
  vc_pfn_getproc_v1 getproc1 = (vc_pfn_getproc_v1)dlsym(d->dl, "cuGetProcAddress");
#if CUDA_VERSION >= 12000
  if (!getproc2 && !getproc1)
#else
  if (!getproc1)
#endif
    return vyre_error_set(err, VYRE_NO_DEVICE, 0,
                          "CUDA driver unusable: %s exports neither cuGetProcAddress_v2 nor "
                          "cuGetProcAddress (driver older than CUDA 11.3?). Fix: update the "
                          "NVIDIA driver",
                          path);
#define VC_RESOLVE_(name, version, params)                                                        \
  do {                                                                                     \
    void *fn = NULL;                                                                       \
    CUresult r;                                                                            \
    int why = 0;                                                                           \
    RESOLVE_CALL(#name, version, &fn, r, why);                                                      \
    if (r != CUDA_SUCCESS || !fn)                                                          \
      return vyre_error_set(err, VYRE_NO_DEVICE, (int64_t)r,                               \
                            "CUDA driver unusable: cuGetProcAddress(\"%s\", %d) failed "   \
                            "(CUresult %d%s). Fix: update the NVIDIA driver to one that "  \
                            "supports CUDA %d.%d",                                         \
                            #name, version, (int)r,                                         \
                            why == 2 ? ", version not sufficient"                          \
                                     : why == 1 ? ", symbol not found" : "",               \
                            CUDA_VERSION / 1000, CUDA_VERSION % 1000 / 10);                \
    memcpy(&d->api.f_##name, &fn, sizeof fn);                                              \
  } while (0);
#if CUDA_VERSION >= 12000
#define RESOLVE_CALL(sym, ver, fnp, r, why)                                             \
  do {                                                                                  \
    if (getproc2) {                                                                     \
      CUdriverProcAddressQueryResult qs = CU_GET_PROC_ADDRESS_SUCCESS;                  \
      r = getproc2(sym, fnp, ver, CU_GET_PROC_ADDRESS_DEFAULT, &qs);           \
      why = (int)qs;                                                                    \
    } else {                                                                            \
      r = getproc1(sym, fnp, ver, CU_GET_PROC_ADDRESS_DEFAULT);                          \
    }                                                                                   \
  } while (0)
#else
#define RESOLVE_CALL(sym, ver, fnp, r, why) (r = getproc1(sym, fnp, ver, CU_GET_PROC_ADDRESS_DEFAULT))
#endif
  VC_DRIVER_API(VC_RESOLVE_)
  /* Optional: the newer implementation, else the older one, else none.
   * Only "not found" (CUDA_ERROR_NOT_FOUND) means the driver lacks it;
   * any other failure of cuGetProcAddress is the driver's, and reported. */
#define VC_RESOLVE_OPT_(name, version, fallback, params)                                   \
  do {                                                                                  \
    void *fn = NULL;                                                                    \
    CUresult r;                                                                         \
    int why = 0, asked = version;                                                       \
    RESOLVE_CALL(#name, version, &fn, r, why);                                          \
    if (r == CUDA_ERROR_NOT_FOUND || (r == CUDA_SUCCESS && !fn)) {                      \
      fn = NULL;                                                                        \
      asked = fallback;                                                                 \
      RESOLVE_CALL(#name, fallback, &fn, r, why);                                       \
      if (r == CUDA_ERROR_NOT_FOUND) {                                                  \
        r = CUDA_SUCCESS;                                                               \
        fn = NULL;                                                                      \
      }                                                                                 \
    }                                                                                   \
    if (r != CUDA_SUCCESS)                                                              \
      return vyre_error_set(err, VYRE_NO_DEVICE, (int64_t)r,                            \
                            "CUDA driver unusable: cuGetProcAddress(\"%s\", %d) failed "  \
                            "(CUresult %d). Fix: update the NVIDIA driver, or check its " \
                            "installation (nvidia-smi)",                                 \
                            #name, asked, (int)r);                                       \
    (void)why;                                                                          \
    if (!fn) vc_log("driver %s has no %s: left out", path, #name);                      \
    memcpy(&d->api.f_##name, &fn, sizeof fn);                                           \
  } while (0);
  VC_DRIVER_OPTIONAL_API(VC_RESOLVE_OPT_)
#undef VC_RESOLVE_OPT_
#undef RESOLVE_CALL
#undef VC_RESOLVE_
  vc_log("driver %s loaded, %d entry points resolved for CUDA %d", path,
         (int)(sizeof(vc_api) / sizeof(void (*)(void))), CUDA_VERSION);
  return VYRE_OK;
}

void vc_driver_close(vc_driver *d) {
  if (d->dl) {
    dlclose(d->dl);
    d->dl = NULL;
  }
  memset(&d->api, 0, sizeof d->api);
}
