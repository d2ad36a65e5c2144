/* indirect.c -- indirect dispatch: the count buffer of a vyre_indirect checked against the resident store (indirect.h; reading and refusing it: abi/format/indirect.h). */
#include "indirect.h"

#include "abi/format/indirect.h"

vyre_status vc_indirect_resolve(vc_resident_store *r, const vyre_indirect *ind, const char *what,
                                CUdeviceptr *ptr, vyre_error *err) {
  uint64_t size = 0;
  CUdeviceptr base = 0;
  if (vc_resident_lookup(r, ind->buffer, what, &base, &size, NULL) != VYRE_OK)
    return vyre_error_set(err, VYRE_INVALID_HANDLE, 0,
                          "%s: vyre_indirect buffer: resident handle 0x%016llx is not a live "
                          "resident buffer of this instance (freed, or from another one). Fix: "
                          "pass a handle that resident_alloc or resident_import returned",
                          what, (unsigned long long)ind->buffer);
  vyre_status st = vyre__indirect_range(ind, size, what, err);
  if (st != VYRE_OK) return st;
  *ptr = base + (CUdeviceptr)ind->offset;
  return VYRE_OK;
}
