/* error.c -- the public vyre_error functions, on the support layer's errfill.c. */
#include <stdio.h>
#include <string.h>

#include "abi/support/errfill.h"
#include "vyre/vyre_support.h"

static size_t message_room(const vyre_error *err) { return vyre__error_message_room(err); }

vyre_status vyre_error_vset(vyre_error *err, vyre_status status, int64_t native,
                            const char *fmt, va_list ap) {
  return vyre__error_vset(err, status, native, fmt, ap);
}

vyre_status vyre_error_set(vyre_error *err, vyre_status status, int64_t native,
                           const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  vyre_error_vset(err, status, native, fmt, ap);
  va_end(ap);
  return status;
}

void vyre_error_prefix(vyre_error *err, const char *fmt, ...) {
  if (!err) return;
  size_t room = message_room(err);
  if (!room) return;
  char prefix[256];
  va_list ap;
  va_start(ap, fmt);
  int n = vsnprintf(prefix, sizeof prefix, fmt, ap);
  va_end(ap);
  if (n <= 0) return;
  size_t plen = strlen(prefix);
  size_t mlen = strnlen(err->message, room - 1);
  if (plen + 2 >= room) return;
  size_t keep = mlen;
  if (plen + 2 + keep >= room) keep = room - plen - 3;
  memmove(err->message + plen + 2, err->message, keep);
  memcpy(err->message, prefix, plen);
  err->message[plen] = ':';
  err->message[plen + 1] = ' ';
  err->message[plen + 2 + keep] = '\0';
}

void vyre_error_clear(vyre_error *err) {
  if (!err) return;
  if (err->struct_size >= offsetof(vyre_error, native_code)) err->status = VYRE_OK;
  if (err->struct_size >= offsetof(vyre_error, message)) err->native_code = 0;
  if (message_room(err)) err->message[0] = '\0';
}

void vyre_error_copy(vyre_error *dst, const vyre_error *src) {
  if (!dst || !src) return;
  /* The source may be a smaller (older) record too: read only its bytes. */
  int32_t status = src->struct_size >= offsetof(vyre_error, native_code) ? src->status : 0;
  int64_t native = src->struct_size >= offsetof(vyre_error, message) ? src->native_code : 0;
  size_t room = message_room(src);
  int len = (int)strnlen(src->message, room);
  vyre_error_set(dst, (vyre_status)status, native, "%.*s", len, src->message);
}
