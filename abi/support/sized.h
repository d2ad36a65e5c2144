/* sized.h -- reading and writing the ABI's size-prefixed structs (each side reads only the smaller size; vyre.h). */
#ifndef VYRE_SUPPORT_SIZED_H
#define VYRE_SUPPORT_SIZED_H

#include <stddef.h>

/*
 * Read a caller's struct that starts with `uint32_t struct_size` into the
 * full struct `dst` of `dst_size` bytes: dst is zeroed, then the first
 * min(src->struct_size, dst_size) bytes are copied, and dst's struct_size
 * is set to dst_size.  src NULL leaves dst zeroed (with its struct_size).
 * Returns the number of bytes copied from src (0 for NULL), so that a
 * caller can refuse a struct too short to hold what it needs.
 */
size_t vyre__sized_read(void *dst, size_t dst_size, const void *src);

/*
 * Write the full struct `src` (`src_size` bytes, size-prefixed) into the
 * caller's struct `dst`: only the first dst->struct_size bytes, and never
 * dst's struct_size itself.  dst NULL does nothing.
 */
void vyre__sized_write(void *dst, const void *src, size_t src_size);

#endif /* VYRE_SUPPORT_SIZED_H */
