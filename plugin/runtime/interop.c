/* interop.c -- the CUDA interop extension: get_extension's lookup, the instance's context, resident_import's checks (pointer attributes, allocation range), resident_pointer. */
#include "interop.h"

#include <string.h>

#include "util.h"

/* Kernels load and store up to 16 bytes at a time, so every buffer
 * pointer must be 16-byte aligned (docs/kernel-abi.md, "Parameters"). */
#define IMPORT_ALIGN 16u

void vc_interop_init(vc_interop *x, vc_context *cx, vc_deferred *deferred,
                     vc_resident_store *resident) {
  x->cx = cx;
  x->deferred = deferred;
  x->resident = resident;
}

/* The core limits (vyre.h): the CUDA backend enforces the timeout; it
 * has no step count, so max_steps is ignored. */
static const vyre_limits_info limits_info = {
    .head = {sizeof(vyre_limits_info), VYRE_LIMITS_VERSION},
    .enforced = VYRE_LIMITS_TIMEOUT,
};

/* Indirect dispatch (vyre.h): a bare head; the work is in sequence.c. */
static const vyre_extension_head indirect_info = {sizeof(vyre_extension_head),
                                                  VYRE_INDIRECT_VERSION};

vyre_status vc_interop_lookup(const vyre_cuda_interop *table, const char *name,
                              uint32_t version, const void **out, vyre_error *err) {
  if (!out)
    return vyre_error_set(err, VYRE_INVALID_ARGUMENT, 0,
                          "get_extension: out is NULL. Fix: pass a const void ** to receive the "
                          "extension table");
  *out = NULL;
  if (!name)
    return vyre_error_set(err, VYRE_INVALID_ARGUMENT, 0,
                          "get_extension: name is NULL. Fix: pass an extension name, e.g. "
                          "VYRE_CUDA_INTEROP_NAME");
  if (strcmp(name, VYRE_LIMITS_NAME) == 0) {
    if (version < 1 || version > VYRE_LIMITS_VERSION)
      return vyre_error_set(err, VYRE_UNSUPPORTED, 0,
                            "get_extension: %s revision %u is not served (this plugin serves "
                            "revision 1 to %u). Fix: ask for a revision in that range, or "
                            "update the plugin",
                            name, version, VYRE_LIMITS_VERSION);
    *out = &limits_info;
    return VYRE_OK;
  }
  if (strcmp(name, VYRE_INDIRECT_NAME) == 0) {
    if (version < 1 || version > VYRE_INDIRECT_VERSION)
      return vyre_error_set(err, VYRE_UNSUPPORTED, 0,
                            "get_extension: %s revision %u is not served (this plugin serves "
                            "revision 1 to %u). Fix: ask for a revision in that range, or "
                            "update the plugin",
                            name, version, VYRE_INDIRECT_VERSION);
    *out = &indirect_info;
    return VYRE_OK;
  }
  if (strcmp(name, VYRE_CUDA_INTEROP_NAME) != 0)
    return vyre_error_set(err, VYRE_UNSUPPORTED, 0,
                          "get_extension: the CUDA backend does not serve '%s' (it serves "
                          "%s@%u, %s@%u and %s@%u). Fix: check registration->extensions (`vyre "
                          "info`) before asking",
                          name, VYRE_CUDA_INTEROP_NAME, VYRE_CUDA_INTEROP_VERSION,
                          VYRE_LIMITS_NAME, VYRE_LIMITS_VERSION, VYRE_INDIRECT_NAME,
                          VYRE_INDIRECT_VERSION);
  if (version < 1 || version > VYRE_CUDA_INTEROP_VERSION)
    return vyre_error_set(err, VYRE_UNSUPPORTED, 0,
                          "get_extension: %s revision %u is not served (this plugin serves "
                          "revisions 1 to %u). Fix: ask for a revision in that range, or "
                          "update the plugin",
                          name, version, VYRE_CUDA_INTEROP_VERSION);
  *out = table;
  return VYRE_OK;
}

vyre_status vc_interop_context(vc_interop *x, void **cu_context, int32_t *cu_device,
                               vyre_error *err) {
  if (cu_context) *cu_context = NULL;
  if (cu_device) *cu_device = -1;
  /* A lost instance's context may have been reset under it. */
  if (vc_is_lost(x->cx)) return vc_lost_error(x->cx, err);
  if (cu_context) *cu_context = (void *)vc_context_handle(x->cx);
  if (cu_device) *cu_device = (int32_t)vc_context_cudevice(x->cx);
  return VYRE_OK;
}

/* A query about `ptr` that says "no such memory" is the caller's mistake;
 * any other failure is the driver's. */
static int says_unknown(CUresult r) {
  return r == CUDA_ERROR_INVALID_VALUE || r == CUDA_ERROR_NOT_FOUND;
}

/* [ptr, ptr + size) is device memory of this instance's device, inside one
 * allocation, addressable from its context.  Context current. */
static vyre_status check_range(vc_interop *x, uint64_t ptr, uint64_t size, vyre_error *err) {
  vc_context *cx = x->cx;
  unsigned int type = 0;
  int ordinal = -1;
  CUcontext owner = NULL;
  CUpointer_attribute attrs[3] = {CU_POINTER_ATTRIBUTE_MEMORY_TYPE,
                                  CU_POINTER_ATTRIBUTE_DEVICE_ORDINAL,
                                  CU_POINTER_ATTRIBUTE_CONTEXT};
  void *data[3] = {&type, &ordinal, &owner};
  /* Unlike cuPointerGetAttribute, a pointer CUDA does not know is no error
   * here: its memory type comes back 0. */
  CUresult r = VC_CU(cx, cuPointerGetAttributes, (3, attrs, data, (CUdeviceptr)ptr));
  if (r != CUDA_SUCCESS && !says_unknown(r)) {
    vyre_status st = vc_cu_fail(cx, err, r, "cuPointerGetAttributes", NULL, NULL);
    vyre_error_prefix(err, "resident_import of 0x%llx", (unsigned long long)ptr);
    return st;
  }
  if (r != CUDA_SUCCESS || type == 0)
    return vyre_error_set(err, VYRE_INVALID_ARGUMENT, (int64_t)r,
                          "resident_import: 0x%llx is not memory CUDA knows of "
                          "(cuPointerGetAttributes gives no memory type, CUresult %d). Fix: pass "
                          "a device address from cuMemAlloc, cudaMalloc or a CUDA tensor's "
                          "data_ptr(), allocated in this process and not freed",
                          (unsigned long long)ptr, (int)r);
  if (type != CU_MEMORYTYPE_DEVICE)
    return vyre_error_set(err, VYRE_INVALID_ARGUMENT, 0,
                          "resident_import: 0x%llx is %s memory (CUmemorytype %u), not device "
                          "memory. Fix: copy host data in with resident_upload, or import "
                          "memory allocated on the device",
                          (unsigned long long)ptr,
                          type == CU_MEMORYTYPE_HOST ? "pinned or registered host" : "array",
                          type);
  const vc_device_info *dev = vc_context_device(cx);
  if (ordinal != (int)dev->ordinal)
    return vyre_error_set(err, VYRE_INVALID_ARGUMENT, 0,
                          "resident_import: 0x%llx is memory of CUDA device %d; this instance "
                          "runs on device %u. Fix: create the backend on device %d "
                          "(vyre_backend_options.device_ordinal), or copy the data to device %u",
                          (unsigned long long)ptr, ordinal, dev->ordinal, ordinal, dev->ordinal);
  /* Memory of another context of the device is mapped only there (memory
   * mapped with cuMemMap has no context and is mapped per device). */
  if (owner && owner != vc_context_handle(cx))
    return vyre_error_set(err, VYRE_INVALID_ARGUMENT, 0,
                          "resident_import: 0x%llx belongs to CUDA context %p, not to the "
                          "device's primary context %p that this instance runs in. Fix: "
                          "allocate it in the primary context (the CUDA runtime, PyTorch and "
                          "CuPy do), or copy the data",
                          (unsigned long long)ptr, (void *)owner,
                          (void *)vc_context_handle(cx));
  CUdeviceptr base = 0;
  size_t whole = 0;
  r = VC_CU(cx, cuMemGetAddressRange, (&base, &whole, (CUdeviceptr)ptr));
  if (says_unknown(r))
    return vyre_error_set(err, VYRE_INVALID_ARGUMENT, (int64_t)r,
                          "resident_import: 0x%llx lies in no live allocation "
                          "(cuMemGetAddressRange: CUresult %d). Fix: pass an address inside "
                          "memory allocated in this process and not freed",
                          (unsigned long long)ptr, (int)r);
  if (r != CUDA_SUCCESS) {
    vyre_status st = vc_cu_fail(cx, err, r, "cuMemGetAddressRange", NULL, NULL);
    vyre_error_prefix(err, "resident_import of 0x%llx", (unsigned long long)ptr);
    return st;
  }
  uint64_t end = ptr + size, alloc_end = (uint64_t)base + (uint64_t)whole;
  if (ptr < (uint64_t)base || end > alloc_end)
    return vyre_error_set(err, VYRE_INVALID_ARGUMENT, 0,
                          "resident_import: bytes [0x%llx, 0x%llx) run past their allocation "
                          "[0x%llx, 0x%llx) (%llu bytes). Fix: import at most %llu bytes at "
                          "this address; a buffer lies inside one allocation",
                          (unsigned long long)ptr, (unsigned long long)end,
                          (unsigned long long)base, (unsigned long long)alloc_end,
                          (unsigned long long)whole,
                          (unsigned long long)(ptr < (uint64_t)base || ptr >= alloc_end
                                                   ? 0
                                                   : alloc_end - ptr));
  return VYRE_OK;
}

vyre_status vc_interop_import(vc_interop *x, uint64_t device_ptr, uint64_t size,
                              vyre_resident *out, vyre_error *err) {
  if (!out)
    return vyre_error_set(err, VYRE_INVALID_ARGUMENT, 0,
                          "resident_import: out is NULL. Fix: pass a vyre_resident to receive "
                          "the handle");
  *out = 0;
  if (size == 0)
    return vyre_error_set(err, VYRE_INVALID_ARGUMENT, 0,
                          "resident_import: size is 0. Fix: import at least one byte");
  if (device_ptr == 0)
    return vyre_error_set(err, VYRE_INVALID_ARGUMENT, 0,
                          "resident_import: device_ptr is 0. Fix: pass the device address of "
                          "the memory (cuMemAlloc, cudaMalloc, a tensor's data_ptr())");
  uint64_t end = 0;
  if (!vc_add_u64(device_ptr, size, &end))
    return vyre_error_set(err, VYRE_INVALID_ARGUMENT, 0,
                          "resident_import: 0x%llx + %llu bytes overflows 64 bits. Fix: pass "
                          "the memory's address and its size in bytes",
                          (unsigned long long)device_ptr, (unsigned long long)size);
  if (device_ptr % IMPORT_ALIGN)
    return vyre_error_set(err, VYRE_INVALID_ARGUMENT, 0,
                          "resident_import: 0x%llx is not %u-byte aligned; vyre's kernels move "
                          "up to %u bytes at a time (docs/kernel-abi.md). Fix: import an "
                          "aligned address (for a tensor view with a storage offset, import a "
                          "contiguous copy)",
                          (unsigned long long)device_ptr, IMPORT_ALIGN, IMPORT_ALIGN);
  vyre_status st = vc_deferred_enter(x->deferred, err);
  if (st != VYRE_OK) return st;
  st = check_range(x, device_ptr, size, err);
  if (st == VYRE_OK) st = vc_resident_import(x->resident, (CUdeviceptr)device_ptr, size, out, err);
  vc_leave(x->cx);
  return st;
}

vyre_status vc_interop_pointer(vc_interop *x, vyre_resident buffer, uint64_t *device_ptr,
                               uint64_t *size, vyre_error *err) {
  if (device_ptr) *device_ptr = 0;
  if (size) *size = 0;
  CUdeviceptr p = 0;
  uint64_t n = 0;
  vyre_status st = vc_resident_lookup(x->resident, buffer, "resident_pointer", &p, &n, err);
  if (st != VYRE_OK) return st;
  if (device_ptr) *device_ptr = (uint64_t)p;
  if (size) *size = n;
  return VYRE_OK;
}
