/* indirect.h -- indirect dispatch (vyre_indirect, vyre.h): the chained struct read from a call's options and checked against the resident store. */
#ifndef VYRE_PLUGIN_CUDA_INDIRECT_H
#define VYRE_PLUGIN_CUDA_INDIRECT_H

#include "context.h"
#include "resident.h"
#include "vyre/vyre.h"

/*
 * The vyre_indirect chained on `o` into *out (NULL when there is none),
 * through the one chain walker (abi/format/chain.h): a second one, or
 * one shorter than sizeof(vyre_indirect), is VYRE_INVALID_ARGUMENT
 * naming `what`.  Reads only the caller's memory; thread-safe.
 */
vyre_status vc_indirect_read(const vyre_dispatch_options *o, const char *what,
                             const vyre_indirect **out, vyre_error *err);
/* A host dispatch (dispatch, dispatch_into, dispatch_async): a chained
 * vyre_indirect is VYRE_INVALID_ARGUMENT with a Fix; so is a bad chain. */
vyre_status vc_indirect_refuse(const vyre_dispatch_options *o, const char *what,
                               vyre_error *err);
/*
 * Check `ind` against the caller's resident buffers: a handle that is not
 * live is VYRE_INVALID_HANDLE, an offset not a multiple of 4 or with
 * offset + 12 past the buffer VYRE_INVALID_ARGUMENT.  *ptr: the device
 * address of the three counts.  Thread-safe.
 */
vyre_status vc_indirect_resolve(vc_resident_store *r, const vyre_indirect *ind, const char *what,
                                CUdeviceptr *ptr, vyre_error *err);

#endif /* VYRE_PLUGIN_CUDA_INDIRECT_H */
