/* vyre_cuda.h -- the CUDA interop extension: run on the host's CUstream, wrap device memory the host owns, read back a resident buffer's device pointer (share/doc/vyre/abi.md, "CUDA interop"). */
#ifndef VYRE_VYRE_CUDA_H
#define VYRE_VYRE_CUDA_H

/*
 * A backend that serves this extension lists "vyre.cuda.interop@1" in
 * registration->extensions and returns the table below from
 *
 *   const vyre_cuda_interop *cu = NULL;
 *   b->vt->get_extension(b, VYRE_CUDA_INTEROP_NAME, 1, (const void **)&cu, &err);
 *
 * Its functions take the plugin's own instance: for one made by
 * libvyre-host's vyre_host_create, pass vyre_host_backend_native(b)
 * (resident handles are the same through either).
 *
 * This header needs neither cuda.h nor libcuda: CUDA handles travel as
 * void * (CUcontext, CUstream) and device addresses as uint64_t
 * (CUdeviceptr), so a host includes it whether or not it has the toolkit.
 *
 * OWNERSHIP
 *   - An imported buffer (resident_import) stays owned by the host: vyre
 *     never frees it.  resident_free on its handle forgets the handle only.
 *     The host keeps the memory alive (and does not free it) until it has
 *     freed the handle and every dispatch that uses it has completed.
 *   - A pointer from resident_pointer belongs to vyre: valid until that
 *     buffer's resident_free or the instance's destroy; the host must not
 *     free it.
 *   - A stream given in vyre_cuda_stream is borrowed for the call (for
 *     dispatch_async: until the pending handle is waited or released).
 *
 * STREAM ORDER (vyre_cuda_stream chained on vyre_dispatch_options.next)
 *   The call's device work starts after all work enqueued on the host's
 *   stream before the call, and work the host enqueues on that stream after
 *   the call returns starts after the call's device work.  A waiting call
 *   (dispatch, dispatch_into, dispatch_resident, dispatch_sequence: the
 *   first step's options) still waits for its own work, as without the
 *   extension; dispatch_async returns at once and the stream order holds
 *   for its kernels too.  Stream 0 (NULL) is the legacy default stream.
 *
 * THREADING: every function here may be called from any thread.
 */

#include <stdint.h>

#include "vyre/vyre.h"

#ifdef __cplusplus
extern "C" {
#endif

#define VYRE_CUDA_INTEROP_NAME "vyre.cuda.interop"
#define VYRE_CUDA_INTEROP_VERSION 1

/* Chain type of vyre_cuda_stream ("CU" 0001). */
#define VYRE_EXT_CUDA_STREAM 0x43550001u

/* Chained on vyre_dispatch_options.next: order the call on `stream`. */
typedef struct vyre_cuda_stream {
  vyre_ext head;  /* {sizeof(vyre_cuda_stream), VYRE_EXT_CUDA_STREAM, next} */
  void *stream;   /* CUstream of the instance's context (or its device's
                     primary context); NULL = the legacy default stream */
} vyre_cuda_stream;

/* The extension's function table (revision 1). */
typedef struct vyre_cuda_interop {
  vyre_extension_head head; /* struct_size, version (>= 1) */

  /* The CUcontext the instance runs in (its device's primary context) and
   * its CUdevice ordinal.  Either pointer may be NULL. */
  vyre_status (*context)(vyre_backend *self, void **cu_context, int32_t *cu_device,
                         vyre_error *err);

  /* Wrap `size` bytes of device memory at `device_ptr` (allocated by the
   * host: cuMemAlloc, cudaMalloc, a PyTorch or CuPy tensor) as a resident
   * buffer, without copying.  The range must lie inside one allocation
   * that the instance's device can address, and device_ptr must be
   * 16-byte aligned (kernels move up to 16 bytes at a time; a tensor view
   * at an odd offset is refused rather than faulting the context).
   * Imported bytes do not count against the resident budget
   * (vyre_device_profile.resident_budget: what vyre itself allocates).
   * *out receives the handle; refusals are VYRE_INVALID_ARGUMENT. */
  vyre_status (*resident_import)(vyre_backend *self, uint64_t device_ptr, uint64_t size,
                                 vyre_resident *out, vyre_error *err);

  /* The device address and size of a resident buffer (imported or made by
   * resident_alloc).  Either out pointer may be NULL. */
  vyre_status (*resident_pointer)(vyre_backend *self, vyre_resident buffer,
                                  uint64_t *device_ptr, uint64_t *size, vyre_error *err);
} vyre_cuda_interop;

VYRE_STATIC_ASSERT(offsetof(vyre_cuda_stream, stream) == 8 + sizeof(void *),
                   "vyre_cuda_stream.stream");
VYRE_STATIC_ASSERT(offsetof(vyre_cuda_interop, context) == 8, "vyre_cuda_interop.context");
VYRE_STATIC_ASSERT(sizeof(vyre_cuda_interop) == 8 + 3 * sizeof(void (*)(void)),
                   "vyre_cuda_interop layout (revision 1)");

#ifdef __cplusplus
}
#endif
#endif /* VYRE_VYRE_CUDA_H */
