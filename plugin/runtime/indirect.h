/* indirect.h -- indirect dispatch (vyre_indirect, vyre.h): the chained struct, read by abi/format/indirect.h, checked against the resident store. */
#ifndef VYRE_PLUGIN_CUDA_INDIRECT_H
#define VYRE_PLUGIN_CUDA_INDIRECT_H

#include "context.h"
#include "resident.h"
#include "abi/format/indirect.h" /* vyre__indirect_read, vyre__indirect_refuse */
#include "vyre/vyre.h"

/*
 * Check `ind` against the caller's resident buffers: a handle that is not
 * live is VYRE_INVALID_HANDLE, an offset not a multiple of 4 or with
 * offset + 12 past the buffer VYRE_INVALID_ARGUMENT.  *ptr: the device
 * address of the three counts.  Thread-safe.
 */
vyre_status vc_indirect_resolve(vc_resident_store *r, const vyre_indirect *ind, const char *what,
                                CUdeviceptr *ptr, vyre_error *err);

#endif /* VYRE_PLUGIN_CUDA_INDIRECT_H */
