/* errfill.c -- filling vyre_error records without ever writing past the caller's struct_size (errfill.h). */
#include "errfill.h"

#include <stddef.h>
#include <stdio.h>

size_t vyre__error_message_room(const vyre_error *err) {
  if (!err || err->struct_size <= offsetof(vyre_error, message)) return 0;
  size_t room = err->struct_size - offsetof(vyre_error, message);
  return room < VYRE_ERROR_MESSAGE_MAX ? room : VYRE_ERROR_MESSAGE_MAX;
}

vyre_status vyre__error_vset(vyre_error *err, vyre_status status, int64_t native,
                             const char *fmt, va_list ap) {
  if (!err) return status;
  if (err->struct_size >= offsetof(vyre_error, native_code)) err->status = (int32_t)status;
  if (err->struct_size >= offsetof(vyre_error, message)) err->native_code = native;
  size_t room = vyre__error_message_room(err);
  if (room) vsnprintf(err->message, room, fmt, ap);
  return status;
}

vyre_status vyre__error_set(vyre_error *err, vyre_status status, int64_t native,
                            const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  vyre__error_vset(err, status, native, fmt, ap);
  va_end(ap);
  return status;
}
