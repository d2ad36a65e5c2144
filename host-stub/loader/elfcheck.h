/* elfcheck.h -- is a file a complete shared object for this machine?  Checked with plain reads before dlopen maps it. */
#ifndef VYRE_HOST_ELFCHECK_H
#define VYRE_HOST_ELFCHECK_H

#include <stddef.h>
#include <stdint.h>

#include "abi/support/elf.h"

/* What a loadable file must be: this process's ELF class, byte order
 * and machine. */
typedef struct host_elf_want {
  unsigned char elf_class; /* ELFCLASS64 / ELFCLASS32 */
  unsigned char elf_data;  /* ELFDATA2LSB / ELFDATA2MSB; must be the native order */
  uint16_t machine;        /* EM_X86_64, ...; 0 = do not check */
} host_elf_want;

/*
 * Check that a file of `file_size` bytes, read through `read`, is a
 * complete ELF shared object (ET_DYN) of want's class, data encoding and
 * machine, whose program header table, every segment's file range
 * (p_offset + p_filesz) and dynamic section lie inside the file, PT_LOAD
 * segments in address order without overlap: what
 * dlopen maps and touches, so that a truncated or foreign file is refused
 * with a reason instead of a SIGBUS inside dlopen.  Reads at most the ELF
 * header and the program header table; never maps anything.
 * Returns 0 when the file passes; otherwise -1 and one line in `reason`
 * ("truncated: 4096 bytes, its PT_LOAD segment 1 ends at 14320").
 * The file is read by the one ELF reader (abi/support/elf.h,
 * vyre__elf_open: `read` is its reader); the machine is named from its
 * table.  Pure apart from `read`: thread-safe, no allocation.
 */
int host_elf_check(vyre__elf_reader read, void *ctx, uint64_t file_size,
                   const host_elf_want *want, char *reason, size_t reason_size);

/* The same over a byte buffer holding the whole file (for fuzzing). */
int host_elf_check_buffer(const void *data, size_t size, const host_elf_want *want,
                          char *reason, size_t reason_size);

/* The same over an open file descriptor (pread; its size from fstat). */
int host_elf_check_fd(int fd, const host_elf_want *want, char *reason, size_t reason_size);

/*
 * What a file says about one exported symbol, found the way the dynamic
 * linker finds it (the PT_DYNAMIC segment's symbol table, hash tables
 * and strings: vyre__elf_dynamic_symtab, vyre__elf_sym_find), with
 * plain reads, before anything maps the file.
 */
typedef struct host_elf_object {
  int found;              /* a defined global or weak dynamic symbol of that name */
  unsigned type;          /* its STT_* type: 1 = STT_OBJECT, 2 = STT_FUNC, ... */
  uint16_t shndx;         /* its section index; >= 0xff00: reserved (SHN_ABS, SHN_COMMON) */
  uint64_t address, size; /* st_value, st_size */
  int in_file;            /* a data object (STT_OBJECT, in a section, size > 0) whose
                             `size` bytes lie in the file contents of one PT_LOAD */
  size_t copied;          /* bytes copied into buf: min(size, buf_size) when in_file */
} host_elf_object;

/*
 * Find the dynamic symbol `name` of a file of `file_size` bytes read
 * through `read` and, when it is a data object in the file, copy its
 * first bytes into buf.  0 with *out filled (found 0: no such symbol, or
 * no dynamic symbol table); -1 with one line in `reason` when the file's
 * dynamic section or tables are corrupt ("corrupt ELF file: DT_SYMTAB
 * (...) lies outside the file contents every PT_LOAD segment maps").
 * Run host_elf_check first: this reads only what it needs.  Pure apart
 * from `read`: thread-safe, no allocation.
 */
int host_elf_object_read(vyre__elf_reader read, void *ctx, uint64_t file_size, const char *name,
                         void *buf, size_t buf_size, host_elf_object *out, char *reason,
                         size_t reason_size);

/* The same over a byte buffer holding the whole file (for fuzzing). */
int host_elf_object_buffer(const void *data, size_t size, const char *name, void *buf,
                           size_t buf_size, host_elf_object *out, char *reason,
                           size_t reason_size);

/* The same over an open file descriptor (pread; its size from fstat). */
int host_elf_object_fd(int fd, const char *name, void *buf, size_t buf_size,
                       host_elf_object *out, char *reason, size_t reason_size);

/* This process: its class, byte order and machine (vyre__elf_host). */
void host_elf_want_host(host_elf_want *out);

/* Write the printf-style reason (when `reason` and `size` allow) and
 * return -1: the one way the ELF checks (elfcheck.c, elfvers.c) fail. */
int host_elf_fail(char *reason, size_t size, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 3, 4)))
#endif
    ;

/*
 * The symbol-version tables of a file host_elf_check accepted, of this
 * process's class and byte order, open on fd (file_size bytes), read as
 * glibc reads them before any plugin code runs (elfvers.c): the
 * DT_VERDEF and DT_VERNEED chains lie in the file contents a PT_LOAD
 * maps (each record, followed by its next offset until 0) and name
 * strings inside DT_STRSZ; every DT_VERSYM entry (one per dynamic
 * symbol) names version 0, 1 or one those chains define or need.  glibc
 * indexes its version array with those entries unchecked: a corrupt
 * table read memory past it, and killed the host or not depending on
 * the layout (the crafted-ELF sweep, tests/loader/elfsweep.c).  0, or
 * -1 with a one-line reason ("corrupt ELF file: ...").
 */
int host_elf_versions_fd(int fd, uint64_t file_size, char *reason, size_t reason_size);

#endif /* VYRE_HOST_ELFCHECK_H */
