/* indirect.c -- indirect dispatch: reading vyre_indirect from a call's extension chain, the host dispatch's refusal, the count buffer's checks (indirect.h). */
#include "indirect.h"

#include "abi/format/chain.h"

static const vyre__ext_kind indirect_kind = {VYRE_EXT_INDIRECT, sizeof(vyre_indirect),
                                             "vyre_indirect", "vyre_indirect"};

vyre_status vc_indirect_read(const vyre_dispatch_options *o, const char *what,
                             const vyre_indirect **out, vyre_error *err) {
  const vyre_ext *e = NULL;
  vyre_status st = vyre__ext_find(o, &indirect_kind, what, &e, err);
  *out = st == VYRE_OK ? (const vyre_indirect *)e : NULL;
  return st;
}

vyre_status vc_indirect_refuse(const vyre_dispatch_options *o, const char *what,
                               vyre_error *err) {
  const vyre_indirect *ind;
  vyre_status st = vc_indirect_read(o, what, &ind, err);
  if (st != VYRE_OK || !ind) return st;
  return vyre_error_set(err, VYRE_INVALID_ARGUMENT, 0,
                        "%s: a vyre_indirect is chained, but a dispatch on host buffers has no "
                        "resident buffer to read its workgroup count from. Fix: run it with "
                        "dispatch_resident or as a dispatch_sequence step, or drop the "
                        "vyre_indirect",
                        what);
}

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
  if (ind->offset % 4u || ind->offset > size || size - ind->offset < 12u)
    return vyre_error_set(err, VYRE_INVALID_ARGUMENT, 0,
                          "%s: vyre_indirect offset %llu in a resident buffer of %llu bytes: the "
                          "three u32 counts must start at a multiple of 4 and end within it. "
                          "Fix: pass an offset that is a multiple of 4 and at most %lld",
                          what, (unsigned long long)ind->offset, (unsigned long long)size,
                          (long long)size - 12);
  *ptr = base + (CUdeviceptr)ind->offset;
  return VYRE_OK;
}
