/* uuid.h -- device UUIDs as NVIDIA writes them ("GPU-xxxxxxxx-xxxx-xxxx-xxxx-xxxxxxxxxxxx"): formatting, and matching a full UUID or a prefix typed by a user. */
#ifndef VYRE_SUPPORT_UUID_H
#define VYRE_SUPPORT_UUID_H

#include <stddef.h>
#include <stdint.h>

/* "GPU-" + 36 characters + NUL. */
#define VYRE__UUID_TEXT_SIZE 41u

/* 1 when all 16 bytes are zero (vyre_device_profile.uuid: not reported). */
int vyre__uuid_is_zero(const uint8_t uuid[16]);

/*
 * Write `uuid` as "GPU-xxxxxxxx-xxxx-xxxx-xxxx-xxxxxxxxxxxx" (lower-case
 * hex, nvidia-smi's form) into out[VYRE__UUID_TEXT_SIZE]; all zero bytes
 * give "none".  Returns out.  Thread-safe.
 */
char *vyre__uuid_format(const uint8_t uuid[16], char *out);

/*
 * A UUID or a prefix of one as a user types it: an optional "GPU-"
 * (any case), then 1 to 32 hex digits (any case) with dashes allowed only
 * where the canonical form has them (after the 8th, 12th, 16th and 20th
 * digit).  On success the digits, lower-cased, go to hex[33]
 * (NUL-terminated), *digits receives their count and 0 is returned;
 * otherwise -1.  *gpu_prefix (may be NULL) says whether "GPU-" was
 * written.  Thread-safe.
 */
int vyre__uuid_parse_prefix(const char *text, char hex[33], size_t *digits, int *gpu_prefix);

/* 1 when `uuid` (not all zero) starts with the `digits` lower-case hex
 * digits of `hex` (from vyre__uuid_parse_prefix). */
int vyre__uuid_matches(const uint8_t uuid[16], const char *hex, size_t digits);

#endif /* VYRE_SUPPORT_UUID_H */
