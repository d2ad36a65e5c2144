/* elfcheck.h -- is a file a complete shared object for this machine?  Checked with plain reads before dlopen maps it. */
#ifndef VYRE_HOST_ELFCHECK_H
#define VYRE_HOST_ELFCHECK_H

#include <stddef.h>
#include <stdint.h>

/* What a loadable file must be: this process's ELF class, byte order
 * and machine. */
typedef struct host_elf_want {
  uint8_t elf_class;  /* ELFCLASS64 / ELFCLASS32 */
  uint8_t elf_data;   /* ELFDATA2LSB / ELFDATA2MSB; must be the native order */
  uint16_t machine;   /* EM_X86_64, ...; 0 = do not check */
} host_elf_want;

/* Reads n bytes at offset off into dst; returns the number read (fewer
 * only at the end of the file), or -1 with errno set. */
typedef long (*host_elf_read_fn)(void *ctx, uint64_t off, void *dst, size_t n);

/*
 * Check that a file of `file_size` bytes, read through `read`, is a
 * complete ELF shared object (ET_DYN) of want's class, data encoding and
 * machine, whose program header table, every segment's file range
 * (p_offset + p_filesz) and dynamic section lie inside the file: what
 * dlopen maps and touches, so that a truncated or foreign file is refused
 * with a reason instead of a SIGBUS inside dlopen.  Reads at most the ELF
 * header and the program header table; never maps anything.
 * Returns 0 when the file passes; otherwise -1 and one line in `reason`
 * ("truncated: 4096 bytes, its PT_LOAD segment 1 ends at 14320").
 * Pure apart from `read`: thread-safe, no allocation.
 */
int host_elf_check(host_elf_read_fn read, void *ctx, uint64_t file_size,
                   const host_elf_want *want, char *reason, size_t reason_size);

/* The same over a byte buffer holding the whole file (for fuzzing). */
int host_elf_check_buffer(const void *data, size_t size, const host_elf_want *want,
                          char *reason, size_t reason_size);

/* The same over an open file descriptor (pread; its size from fstat). */
int host_elf_check_fd(int fd, const host_elf_want *want, char *reason, size_t reason_size);

/* This process: its class and byte order, and its machine (from the
 * compiler's target, else the ELF header of /proc/self/exe, else 0). */
void host_elf_want_host(host_elf_want *out);

/* "x86_64", "aarch64", ... or "machine N" written into buf. */
const char *host_elf_machine_name(uint16_t machine, char *buf, size_t size);

#endif /* VYRE_HOST_ELFCHECK_H */
