/* cudrv.h -- the driver API entry points the ptxmath GPU tools use, loaded from libcuda.so.1 at run time. */
#ifndef VYRE_TESTS_PTXMATH_CUDRV_H
#define VYRE_TESTS_PTXMATH_CUDRV_H

#include <cuda.h>

typedef struct cu_api {
  CUresult (*Init)(unsigned);
  CUresult (*DeviceGetCount)(int *);
  CUresult (*DeviceGet)(CUdevice *, int);
  CUresult (*DeviceGetName)(char *, int, CUdevice);
  CUresult (*DevicePrimaryCtxRetain)(CUcontext *, CUdevice);
  CUresult (*DevicePrimaryCtxRelease)(CUdevice);
  CUresult (*CtxSetCurrent)(CUcontext);
  CUresult (*CtxSynchronize)(void);
  CUresult (*ModuleLoadDataEx)(CUmodule *, const void *, unsigned, CUjit_option *, void **);
  CUresult (*ModuleUnload)(CUmodule);
  CUresult (*ModuleGetFunction)(CUfunction *, CUmodule, const char *);
  CUresult (*MemAlloc)(CUdeviceptr *, size_t);
  CUresult (*MemFree)(CUdeviceptr);
  CUresult (*MemcpyHtoD)(CUdeviceptr, const void *, size_t);
  CUresult (*MemcpyDtoH)(void *, CUdeviceptr, size_t);
  CUresult (*MemsetD8)(CUdeviceptr, unsigned char, size_t);
  CUresult (*LaunchKernel)(CUfunction, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned,
                           CUstream, void **, void **);
  CUresult (*GetErrorName)(CUresult, const char **);
} cu_api;

extern cu_api cu;

/* Load libcuda.so.1 and fill `cu`: 0, or -1 after "PROG: SKIP: why" on stderr. */
int cudrv_load(const char *prog);

/* The CUresult's name, "unknown CUresult" if the driver has none. */
const char *cudrv_errname(CUresult r);

#endif /* VYRE_TESTS_PTXMATH_CUDRV_H */
