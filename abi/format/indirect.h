/* indirect.h -- reading vyre_indirect (the core "vyre.indirect" extension, vyre.h) from a call's extension chain, and the checks every backend makes of it. */
#ifndef VYRE_FORMAT_INDIRECT_H
#define VYRE_FORMAT_INDIRECT_H

#include <stdint.h>

#include "vyre/vyre.h"

/*
 * The vyre_indirect chained on `o` into *out (NULL when there is none),
 * through the one chain walker (chain.h): a second one, or one shorter
 * than sizeof(vyre_indirect), is VYRE_INVALID_ARGUMENT naming `what`, and
 * *out NULL.  Reads only the caller's memory; thread-safe.
 */
vyre_status vyre__indirect_read(const vyre_dispatch_options *o, const char *what,
                                const vyre_indirect **out, vyre_error *err);

/* A dispatch on host buffers (dispatch, dispatch_into, dispatch_async):
 * a chained vyre_indirect is VYRE_INVALID_ARGUMENT with a Fix; so is a
 * bad chain. */
vyre_status vyre__indirect_refuse(const vyre_dispatch_options *o, const char *what,
                                  vyre_error *err);

/* The counts' place in a resident buffer of `size` bytes: an offset that
 * is not a multiple of 4, or three u32 that would end past the buffer,
 * is VYRE_INVALID_ARGUMENT naming `what`, with a Fix.  (Whether the
 * handle is live is the backend's own lookup.) */
vyre_status vyre__indirect_range(const vyre_indirect *ind, uint64_t size, const char *what,
                                 vyre_error *err);

#endif /* VYRE_FORMAT_INDIRECT_H */
