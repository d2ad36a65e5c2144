/* errfill.h -- filling a vyre_error record from the support layer, which sits below abi/format's public vyre_error_set. */
#ifndef VYRE_SUPPORT_ERRFILL_H
#define VYRE_SUPPORT_ERRFILL_H

#include <stdarg.h>
#include <stdint.h>

#include "vyre/vyre.h"

#if defined(__GNUC__)
#define VYRE__ERR_PRINTF(f, a) __attribute__((format(printf, f, a)))
#else
#define VYRE__ERR_PRINTF(f, a)
#endif

/*
 * The contract of vyre_error_set and vyre_error_vset (vyre_support.h),
 * which are these: fill *err (NULL: nothing) with status, native code
 * and the formatted message, never writing past err->struct_size; return
 * `status`.  The support modules call these so that the floor of the
 * library calls nothing above it.  Thread-safe for distinct records.
 */
vyre_status vyre__error_vset(vyre_error *err, vyre_status status, int64_t native,
                             const char *fmt, va_list ap);
vyre_status vyre__error_set(vyre_error *err, vyre_status status, int64_t native,
                            const char *fmt, ...) VYRE__ERR_PRINTF(4, 5);

/* Bytes of err->message the caller's record really has (0 for NULL). */
size_t vyre__error_message_room(const vyre_error *err);

#endif /* VYRE_SUPPORT_ERRFILL_H */
