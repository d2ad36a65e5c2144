/* sized.c -- size-prefixed struct copies (sized.h). */
#include "sized.h"

#include <stdint.h>
#include <string.h>

static uint32_t size_of(const void *s) {
  uint32_t n;
  memcpy(&n, s, sizeof n);
  return n;
}

size_t vyre__sized_read(void *dst, size_t dst_size, const void *src) {
  memset(dst, 0, dst_size);
  size_t n = 0;
  if (src) {
    n = size_of(src);
    if (n > dst_size) n = dst_size;
    memcpy(dst, src, n);
  }
  uint32_t full = (uint32_t)dst_size;
  memcpy(dst, &full, sizeof full);
  return n;
}

void vyre__sized_write(void *dst, const void *src, size_t src_size) {
  if (!dst) return;
  size_t n = size_of(dst);
  if (n > src_size) n = src_size;
  if (n > sizeof(uint32_t))
    memcpy((char *)dst + sizeof(uint32_t), (const char *)src + sizeof(uint32_t),
           n - sizeof(uint32_t));
}
