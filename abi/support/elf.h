/* elf.h -- bounded reading of ELF files (header, program and section headers, dynamic symbols) and the one machine table; for files that may be hostile. */
#ifndef VYRE_SUPPORT_ELF_H
#define VYRE_SUPPORT_ELF_H

#include <stddef.h>
#include <stdint.h>

/*
 * Every read goes through `read` at an offset, never past `size`: a
 * buffer or a pread on a descriptor (no mmap).  Every offset and count
 * taken from the file is checked against `size` before use, with no
 * overflow; a failing call writes "why" (what is wrong, no "Fix:" --
 * the caller knows what the file was for) and returns -1.  Both classes
 * and both byte orders are read; fields are returned in host order.
 * Nothing is allocated.  Thread-safe as `read` is.
 */

/* Reads up to n bytes at off into dst; the count read, -1 on an error
 * (errno set).  A short count means the end of the file. */
typedef long (*vyre__elf_reader)(void *ctx, uint64_t off, void *dst, size_t n);

/* Identification bytes (System V ABI, "ELF Identification"). */
#define VYRE__ELF_CLASS32 1
#define VYRE__ELF_CLASS64 2
#define VYRE__ELF_DATA_LSB 1
#define VYRE__ELF_DATA_MSB 2

typedef struct vyre__elf {
  vyre__elf_reader read;
  void *ctx;
  uint64_t size;           /* bytes in the file */
  unsigned char ident[16]; /* e_ident, filled as soon as read */
  int is64, big;
  /* The ELF header, whatever the class. */
  uint16_t type, machine;
  uint32_t version, flags;
  uint64_t entry, phoff, shoff;
  uint16_t ehsize, phentsize, phnum, shentsize, shnum, shstrndx;
} vyre__elf;

typedef struct vyre__elf_phdr {
  uint32_t type, flags;
  uint64_t offset, vaddr, paddr, filesz, memsz, align;
} vyre__elf_phdr;

typedef struct vyre__elf_shdr {
  uint32_t name, type;
  uint64_t flags, addr, offset, size;
  uint32_t link, info;
  uint64_t addralign, entsize;
} vyre__elf_shdr;

typedef struct vyre__elf_sym {
  uint32_t name; /* offset in the symbol table's string table */
  unsigned char info, other;
  uint16_t shndx;
  uint64_t value, size;
} vyre__elf_sym;

/* A symbol table and its string table, checked to lie in the file. */
typedef struct vyre__elf_symtab {
  uint64_t offset, entsize, count; /* count includes the null symbol 0 */
  uint64_t str_offset, str_size;
} vyre__elf_symtab;

/*
 * Read the identification and the ELF header.  Fails ("not an ELF file:
 * N bytes, too short for an ELF header", "not an ELF file: it starts
 * with ..", "unknown ELF class N", "unknown ELF byte order N",
 * "truncated: N bytes, the ELF header alone needs M", "cannot read the
 * ELF header: ..") when the file cannot hold a header of its class.
 * e->ident is filled once 16 bytes could be read, so a caller may word a
 * class or byte order it refuses its own way.  The version, type,
 * machine and the entry sizes are returned, not judged: see
 * vyre__elf_check_sizes.
 */
int vyre__elf_open(vyre__elf *e, vyre__elf_reader read, void *ctx, uint64_t size, char *why,
                   size_t why_size);

/* vyre__elf_open on a buffer (`data` must outlive *e; *ctx is its
 * reader state, kept by the caller). */
typedef struct vyre__elf_buffer {
  const unsigned char *data;
  size_t size;
} vyre__elf_buffer;
int vyre__elf_open_buffer(vyre__elf *e, vyre__elf_buffer *ctx, const void *data, size_t size,
                          char *why, size_t why_size);

/* A reader for a descriptor: ctx points at the int (pread, EINTR
 * retried). */
long vyre__elf_read_fd(void *ctx, uint64_t off, void *dst, size_t n);

/* 0 when the identification's ELF version is current and e_ehsize and
 * e_phentsize are the sizes of the class ("corrupt ELF file: ELF version
 * N, expected 1", "corrupt ELF file: header size N and program header
 * size M, expected A and B").  Section header entries are checked where
 * they are read (at least the class's size). */
int vyre__elf_check_sizes(const vyre__elf *e, char *why, size_t why_size);

/* offset + size, or UINT64_MAX when that overflows: where something
 * the file describes ends, for messages ("ends at N"). */
uint64_t vyre__elf_end(uint64_t offset, uint64_t size);

/* Program header i (< phnum): -1 when the table entry lies outside the
 * file or e_phentsize is too small. */
int vyre__elf_phdr_read(const vyre__elf *e, uint32_t i, vyre__elf_phdr *out, char *why,
                        size_t why_size);

/* Section header i (< shnum), likewise. */
int vyre__elf_shdr_read(const vyre__elf *e, uint32_t i, vyre__elf_shdr *out, char *why,
                        size_t why_size);

/* 0 when [offset, offset + size) lies in the file. */
int vyre__elf_range_ok(const vyre__elf *e, uint64_t offset, uint64_t size);

/*
 * The dynamic symbol table: the first SHT_DYNSYM section and the string
 * table its sh_link names, both inside the file, entries at least one
 * symbol long.  1 when found, 0 when the file has none (no section
 * headers or no SHT_DYNSYM), -1 when corrupt.
 */
int vyre__elf_dynsym(const vyre__elf *e, vyre__elf_symtab *out, char *why, size_t why_size);

/* Symbol i (< t->count) of the table. */
int vyre__elf_sym_read(const vyre__elf *e, const vyre__elf_symtab *t, uint64_t i,
                       vyre__elf_sym *out, char *why, size_t why_size);

/* The symbol's name into buf (buf_size > 0, always NUL-terminated):
 * 0, or 1 when the name was longer than buf and cut, or -1 when the
 * name starts outside the string table or runs past its end. */
int vyre__elf_sym_name(const vyre__elf *e, const vyre__elf_symtab *t, const vyre__elf_sym *s,
                       char *buf, size_t buf_size);

/*
 * [addr, addr + size) of the loaded image (virtual addresses, relative
 * to the load base as in an ET_DYN file) as the file backs it: 0 when
 * the range lies wholly in the file contents (p_filesz, not p_memsz) of
 * one PT_LOAD segment; *offset (may be NULL) receives the file offset of
 * addr and *avail (may be NULL) the bytes that segment's file contents
 * hold from addr on.  -1 otherwise (in no segment, in the zero-filled
 * tail, across two segments, overflowing).
 */
int vyre__elf_addr_range(const vyre__elf *e, uint64_t addr, uint64_t size, uint64_t *offset,
                         uint64_t *avail);

/*
 * The dynamic symbol table as the dynamic linker finds it, with no
 * section headers (dlopen never reads them): the PT_DYNAMIC segment,
 * read at its address through the PT_LOAD that maps it; DT_SYMTAB,
 * DT_STRTAB, DT_STRSZ, DT_SYMENT (the class's symbol size when absent);
 * the symbol count from DT_GNU_HASH (the highest bucket's chain), else
 * DT_HASH (nchain).  Every address the entries give is mapped through
 * vyre__elf_addr_range, so every table lies in the file contents of one
 * PT_LOAD: the two tables above and the hash tables, and besides them
 * the other tables `dlopen` reads before any plugin code runs
 * (DT_RELA/DT_REL/DT_JMPREL/DT_RELR with their sizes, DT_INIT_ARRAY,
 * DT_FINI_ARRAY, DT_PREINIT_ARRAY with theirs, DT_VERSYM, DT_VERNEED,
 * DT_VERDEF, DT_INIT, DT_FINI) and every string offset (DT_NEEDED,
 * DT_SONAME, DT_RPATH, DT_RUNPATH) below DT_STRSZ.  Their contents are
 * not judged (relocations are the linker's).  *out receives file
 * offsets, usable with vyre__elf_sym_read / vyre__elf_sym_name.
 * 1 when found; 0 when the file has no PT_DYNAMIC or no DT_SYMTAB;
 * -1 when corrupt ("corrupt ELF file: DT_SYMTAB (address 0x..) lies
 * outside the file contents every PT_LOAD segment maps").
 */
int vyre__elf_dynamic_symtab(const vyre__elf *e, vyre__elf_symtab *out, char *why,
                             size_t why_size);

/* The first defined (st_shndx != 0), global or weak symbol of table t
 * named `name`, by a linear scan: 1 and *out; 0 when there is none; -1
 * when a symbol or name cannot be read. */
int vyre__elf_sym_find(const vyre__elf *e, const vyre__elf_symtab *t, const char *name,
                       vyre__elf_sym *out, char *why, size_t why_size);

/* e_machine's name ("x86_64", "aarch64", "nvidia cuda"), or "machine N"
 * written into buf for one not in the table. */
const char *vyre__elf_machine_str(uint16_t machine, char *buf, size_t size);

/* The class, byte order and e_machine of this process's code (machine 0
 * when unknown: an architecture not in the table). */
void vyre__elf_host(unsigned char *elf_class, unsigned char *elf_data, uint16_t *machine);

#endif /* VYRE_SUPPORT_ELF_H */
