/* indirect.c -- vyre_indirect read from a call's extension chain, the host dispatch's refusal and the counts' range check, shared by every backend (indirect.h). */
#include "indirect.h"

#include "chain.h"
#include "vyre/vyre_support.h"

static const vyre__ext_kind indirect_kind = {VYRE_EXT_INDIRECT, sizeof(vyre_indirect),
                                             "vyre_indirect", "vyre_indirect"};

vyre_status vyre__indirect_read(const vyre_dispatch_options *o, const char *what,
                                const vyre_indirect **out, vyre_error *err) {
  const vyre_ext *e = NULL;
  vyre_status st = vyre__ext_find(o, &indirect_kind, what, &e, err);
  *out = st == VYRE_OK ? (const vyre_indirect *)e : NULL;
  return st;
}

vyre_status vyre__indirect_refuse(const vyre_dispatch_options *o, const char *what,
                                  vyre_error *err) {
  const vyre_indirect *ind;
  vyre_status st = vyre__indirect_read(o, what, &ind, err);
  if (st != VYRE_OK || !ind) return st;
  return vyre_error_set(err, VYRE_INVALID_ARGUMENT, 0,
                        "%s: a vyre_indirect is chained, but a dispatch on host buffers has no "
                        "resident buffer to read its workgroup count from. Fix: run it with "
                        "dispatch_resident or as a dispatch_sequence step, or drop the "
                        "vyre_indirect",
                        what);
}

vyre_status vyre__indirect_range(const vyre_indirect *ind, uint64_t size, const char *what,
                                 vyre_error *err) {
  if (ind->offset % 4u == 0 && ind->offset <= size && size - ind->offset >= 12u) return VYRE_OK;
  return vyre_error_set(err, VYRE_INVALID_ARGUMENT, 0,
                        "%s: vyre_indirect offset %llu in a resident buffer of %llu bytes: the "
                        "three u32 counts must start at a multiple of 4 and end within it. "
                        "Fix: pass an offset that is a multiple of 4 and at most %lld",
                        what, (unsigned long long)ind->offset, (unsigned long long)size,
                        (long long)size - 12);
}
