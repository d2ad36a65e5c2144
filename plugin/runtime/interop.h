/* interop.h -- the CUDA interop extension (vyre_cuda.h): serving it through get_extension, the instance's context, importing host device memory, resident pointers. */
#ifndef VYRE_PLUGIN_CUDA_INTEROP_H
#define VYRE_PLUGIN_CUDA_INTEROP_H

#include <stdint.h>

#include "context.h"
#include "deferred.h"
#include "resident.h"
#include "vyre/vyre_cuda.h"

/* What the extension's functions use; fields private to interop.c. */
typedef struct vc_interop {
  vc_context *cx;
  vc_deferred *deferred;
  vc_resident_store *resident;
} vc_interop;

void vc_interop_init(vc_interop *x, vc_context *cx, vc_deferred *deferred,
                     vc_resident_store *resident);

/*
 * get_extension (vyre.h): `table` (the plugin's vyre_cuda_interop, owned
 * by the caller's caller and living until the process exits) when `name`
 * is VYRE_CUDA_INTEROP_NAME and 1 <= version <= VYRE_CUDA_INTEROP_VERSION;
 * otherwise VYRE_UNSUPPORTED (with a Fix) and *out NULL.  Thread-safe.
 */
vyre_status vc_interop_lookup(const vyre_cuda_interop *table, const char *name,
                              uint32_t version, const void **out, vyre_error *err);

/* The extension's functions (vyre_cuda.h), each thread-safe. */
vyre_status vc_interop_context(vc_interop *x, void **cu_context, int32_t *cu_device,
                               vyre_error *err);
vyre_status vc_interop_import(vc_interop *x, uint64_t device_ptr, uint64_t size,
                              vyre_resident *out, vyre_error *err);
vyre_status vc_interop_pointer(vc_interop *x, vyre_resident buffer, uint64_t *device_ptr,
                               uint64_t *size, vyre_error *err);

#endif /* VYRE_PLUGIN_CUDA_INTEROP_H */
