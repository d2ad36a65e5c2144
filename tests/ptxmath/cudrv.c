/* cudrv.c -- the driver API entry points of the ptxmath GPU tools (cudrv.h). */
#include "cudrv.h"

#include <dlfcn.h>
#include <stdio.h>

cu_api cu;

int cudrv_load(const char *prog) {
  void *h = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
  if (!h) {
    fprintf(stderr, "%s: SKIP: dlopen(libcuda.so.1) failed: %s\n", prog, dlerror());
    return -1;
  }
  struct { void **slot; const char *name; } syms[] = {
      {(void **)&cu.Init, "cuInit"},
      {(void **)&cu.DeviceGetCount, "cuDeviceGetCount"},
      {(void **)&cu.DeviceGet, "cuDeviceGet"},
      {(void **)&cu.DeviceGetName, "cuDeviceGetName"},
      {(void **)&cu.DevicePrimaryCtxRetain, "cuDevicePrimaryCtxRetain"},
      {(void **)&cu.DevicePrimaryCtxRelease, "cuDevicePrimaryCtxRelease_v2"},
      {(void **)&cu.CtxSetCurrent, "cuCtxSetCurrent"},
      {(void **)&cu.CtxSynchronize, "cuCtxSynchronize"},
      {(void **)&cu.ModuleLoadDataEx, "cuModuleLoadDataEx"},
      {(void **)&cu.ModuleUnload, "cuModuleUnload"},
      {(void **)&cu.ModuleGetFunction, "cuModuleGetFunction"},
      {(void **)&cu.MemAlloc, "cuMemAlloc_v2"},
      {(void **)&cu.MemFree, "cuMemFree_v2"},
      {(void **)&cu.MemcpyHtoD, "cuMemcpyHtoD_v2"},
      {(void **)&cu.MemcpyDtoH, "cuMemcpyDtoH_v2"},
      {(void **)&cu.MemsetD8, "cuMemsetD8_v2"},
      {(void **)&cu.LaunchKernel, "cuLaunchKernel"},
      {(void **)&cu.GetErrorName, "cuGetErrorName"},
  };
  for (size_t i = 0; i < sizeof syms / sizeof *syms; i++) {
    *syms[i].slot = dlsym(h, syms[i].name);
    if (!*syms[i].slot) {
      fprintf(stderr, "%s: SKIP: libcuda.so.1 lacks %s: %s\n", prog, syms[i].name, dlerror());
      return -1;
    }
  }
  return 0;
}

const char *cudrv_errname(CUresult r) {
  const char *s = NULL;
  if (cu.GetErrorName(r, &s) != CUDA_SUCCESS || !s) return "unknown CUresult";
  return s;
}

