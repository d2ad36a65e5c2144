/* elfcheck.c -- refuse a truncated, corrupt or foreign ELF file with a reason before dlopen maps it (the one ELF reader, abi/support/elf.h: plain reads, no mmap). */
#include "elfcheck.h"

#include <elf.h>
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

/* More program headers than any real shared object has (glibc's
 * ld.so, musl and bionic libraries have under 20). */
#define ELF_PHNUM_MAX 4096u

int host_elf_fail(char *reason, size_t size, const char *fmt, ...) {
  if (reason && size) {
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(reason, size, fmt, ap);
    va_end(ap);
  }
  return -1;
}

void host_elf_want_host(host_elf_want *out) {
  memset(out, 0, sizeof *out);
  vyre__elf_host(&out->elf_class, &out->elf_data, &out->machine);
}

/* "ends at" text for segment i. */
static const char *segment_words(const vyre__elf_phdr *s, uint32_t i, char *buf, size_t size) {
  switch (s->type) {
  case PT_LOAD: snprintf(buf, size, "its PT_LOAD segment %u", i); break;
  case PT_DYNAMIC: snprintf(buf, size, "its dynamic section (program header %u)", i); break;
  default: snprintf(buf, size, "its program header %u (type 0x%x)", i, s->type); break;
  }
  return buf;
}

/* The reason for a header that cannot be read. */
static int unreadable(char *reason, size_t size) {
  return host_elf_fail(reason, size, "cannot read the ELF headers: %s",
                       errno ? strerror(errno) : "short read");
}

/* The identification bytes after vyre__elf_open (which returned
 * open_rc): the reader's words for a file too short for them or without
 * the magic; this host's words for another class, byte order or ELF
 * version, before a header the reader could not read is reported. */
static int check_ident(const vyre__elf *e, int open_rc, const host_elf_want *want, char *reason,
                       size_t reason_size) {
  const unsigned char *ident = e->ident;
  if (open_rc != 0 && (e->size < EI_NIDENT || memcmp(ident, ELFMAG, SELFMAG) != 0)) return -1;
  if (ident[EI_CLASS] != want->elf_class)
    return host_elf_fail(reason, reason_size, "built for %s, this host is %s",
                         ident[EI_CLASS] == ELFCLASS64   ? "64-bit ELF"
                         : ident[EI_CLASS] == ELFCLASS32 ? "32-bit ELF"
                         : "an unknown ELF class",
                         want->elf_class == ELFCLASS64 ? "64-bit" : "32-bit");
  if (ident[EI_DATA] != want->elf_data)
    return host_elf_fail(reason, reason_size, "built for a %s machine, this host is %s",
                         ident[EI_DATA] == ELFDATA2MSB   ? "big-endian"
                         : ident[EI_DATA] == ELFDATA2LSB ? "little-endian"
                         : "unknown-byte-order",
                         want->elf_data == ELFDATA2MSB ? "big-endian" : "little-endian");
  if (ident[EI_VERSION] != EV_CURRENT)
    return host_elf_fail(reason, reason_size, "corrupt ELF file: ELF version %u, expected %u",
                         ident[EI_VERSION], EV_CURRENT);
  if (open_rc == 0) return 0;
  /* A header the file is too short for is the reader's "truncated: ..";
   * else the header could not be read. */
  if (e->size < (e->is64 ? sizeof(Elf64_Ehdr) : sizeof(Elf32_Ehdr))) return -1;
  return unreadable(reason, reason_size);
}

/* The ELF header: machine, type, header sizes, the program header
 * table inside the file. */
static int check_head(const vyre__elf *e, const host_elf_want *want, char *reason,
                      size_t reason_size) {
  char b1[64], b2[32];
  if (want->machine && e->machine != want->machine)
    return host_elf_fail(reason, reason_size, "built for %s, this host is %s",
                         vyre__elf_machine_str(e->machine, b1, sizeof b1),
                         vyre__elf_machine_str(want->machine, b2, sizeof b2));
  if (e->type != ET_DYN)
    return host_elf_fail(reason, reason_size, "not a shared library: ELF type %s",
                         e->type == ET_EXEC   ? "EXEC (an executable)"
                         : e->type == ET_REL  ? "REL (an object file, not linked)"
                         : e->type == ET_CORE ? "CORE (a core dump)"
                         : "unknown");
  if (vyre__elf_check_sizes(e, reason, reason_size) != 0) return -1;
  if (e->phnum == 0 || e->phnum > ELF_PHNUM_MAX)
    return host_elf_fail(reason, reason_size, "corrupt ELF file: %u program headers", e->phnum);
  uint64_t table = (uint64_t)e->phnum * e->phentsize;
  if (vyre__elf_range_ok(e, e->phoff, table) != 0)
    return host_elf_fail(reason, reason_size, "truncated: %llu bytes, its program headers end at %llu",
                         (unsigned long long)e->size, (unsigned long long)vyre__elf_end(e->phoff, table));
  return 0;
}

/* The first pass over the program headers: every file range inside the
 * file, a PT_LOAD, one non-empty dynamic section (into *dyn), the
 * section headers inside the file. */
static int check_segments(const vyre__elf *e, vyre__elf_phdr *dyn, char *reason,
                          size_t reason_size) {
  uint32_t loads = 0, dynamics = 0;
  uint64_t load_end = 0; /* where the previous PT_LOAD ends in memory */
  char b1[64];
  for (uint32_t i = 0; i < e->phnum; i++) {
    vyre__elf_phdr s;
    if (vyre__elf_phdr_read(e, i, &s, NULL, 0) != 0) return unreadable(reason, reason_size);
    if (s.filesz && vyre__elf_range_ok(e, s.offset, s.filesz) != 0)
      return host_elf_fail(reason, reason_size, "truncated: %llu bytes, %s ends at %llu",
                           (unsigned long long)e->size, segment_words(&s, i, b1, sizeof b1),
                           (unsigned long long)vyre__elf_end(s.offset, s.filesz));
    if (s.type == PT_LOAD) {
      if (s.filesz > s.memsz)
        return host_elf_fail(reason, reason_size,
                             "corrupt ELF file: PT_LOAD segment %u has %llu bytes in the file but "
                             "%llu in memory",
                             i, (unsigned long long)s.filesz, (unsigned long long)s.memsz);
      /* The linker maps them in order, each after the last: a segment
       * that overlaps another would be mapped over it. */
      if (s.vaddr < load_end || s.memsz > UINT64_MAX - s.vaddr)
        return host_elf_fail(reason, reason_size,
                             "corrupt ELF file: PT_LOAD segment %u (address 0x%llx) overlaps the one "
                             "before it or is out of order",
                             i, (unsigned long long)s.vaddr);
      load_end = s.vaddr + s.memsz;
      loads++;
    } else if (s.type == PT_DYNAMIC) {
      *dyn = s;
      dynamics++;
    }
  }
  if (loads == 0) return host_elf_fail(reason, reason_size, "corrupt ELF file: no PT_LOAD segment");
  if (dynamics != 1)
    return host_elf_fail(reason, reason_size,
                         "not a loadable shared library: %u dynamic sections, expected 1", dynamics);
  if (dyn->filesz == 0)
    return host_elf_fail(reason, reason_size, "corrupt ELF file: its dynamic section is empty");
  /* dlopen never reads the section headers, but they are what an ELF
   * file ends with: a file cut short anywhere is refused here. */
  uint64_t sections = (uint64_t)e->shnum * e->shentsize;
  if (e->shoff && sections && vyre__elf_range_ok(e, e->shoff, sections) != 0)
    return host_elf_fail(reason, reason_size, "truncated: %llu bytes, its section headers end at %llu",
                         (unsigned long long)e->size,
                         (unsigned long long)vyre__elf_end(e->shoff, sections));
  return 0;
}

/* The whole check on a file vyre__elf_open returned open_rc for. */
static int check(const vyre__elf *e, int open_rc, const host_elf_want *want, char *reason,
                 size_t reason_size) {
  vyre__elf_phdr dyn = {0};
  if (check_ident(e, open_rc, want, reason, reason_size) != 0 ||
      check_head(e, want, reason, reason_size) != 0 ||
      check_segments(e, &dyn, reason, reason_size) != 0)
    return -1;
  /* The second pass: the dynamic section lies in memory some PT_LOAD
   * maps from the file. */
  for (uint32_t i = 0; i < e->phnum; i++) {
    vyre__elf_phdr s;
    if (vyre__elf_phdr_read(e, i, &s, NULL, 0) != 0) return unreadable(reason, reason_size);
    if (s.type == PT_LOAD && dyn.vaddr >= s.vaddr && dyn.vaddr - s.vaddr <= s.filesz &&
        dyn.filesz <= s.filesz - (dyn.vaddr - s.vaddr))
      return 0;
  }
  return host_elf_fail(reason, reason_size,
                       "corrupt ELF file: its dynamic section (%llu bytes at address 0x%llx) lies outside "
                       "the file contents every PT_LOAD segment maps",
                       (unsigned long long)dyn.filesz, (unsigned long long)dyn.vaddr);
}

int host_elf_check(vyre__elf_reader read, void *ctx, uint64_t file_size,
                   const host_elf_want *want, char *reason, size_t reason_size) {
  vyre__elf e;
  int rc = vyre__elf_open(&e, read, ctx, file_size, reason, reason_size);
  return check(&e, rc, want, reason, reason_size);
}

int host_elf_check_buffer(const void *data, size_t size, const host_elf_want *want,
                          char *reason, size_t reason_size) {
  vyre__elf e;
  vyre__elf_buffer b;
  int rc = vyre__elf_open_buffer(&e, &b, data, size, reason, reason_size);
  return check(&e, rc, want, reason, reason_size);
}

int host_elf_check_fd(int fd, const host_elf_want *want, char *reason, size_t reason_size) {
  struct stat st;
  if (fstat(fd, &st) != 0)
    return host_elf_fail(reason, reason_size, "cannot stat the file: %s", strerror(errno));
  if (!S_ISREG(st.st_mode)) return host_elf_fail(reason, reason_size, "not a regular file");
  return host_elf_check(vyre__elf_read_fd, &fd, (uint64_t)st.st_size, want, reason, reason_size);
}

/* ------------------------------------------------------------------ */
/* One exported data object, read from the file                        */
/* ------------------------------------------------------------------ */

enum { STT_OBJECT_ = 1, SHN_LORESERVE_ = 0xff00 };

static int object_read(const vyre__elf *e, const char *name, void *buf, size_t buf_size,
                       host_elf_object *out, char *reason, size_t reason_size) {
  vyre__elf_symtab t;
  int rc = vyre__elf_dynamic_symtab(e, &t, reason, reason_size);
  if (rc < 0) return -1;
  if (rc == 0) return 0; /* no dynamic symbols: not found */
  vyre__elf_sym s;
  rc = vyre__elf_sym_find(e, &t, name, &s, reason, reason_size);
  if (rc < 0) return -1;
  if (rc == 0) return 0;
  out->found = 1;
  out->type = s.info & 0xfu;
  out->shndx = s.shndx;
  out->address = s.value;
  out->size = s.size;
  /* A reserved section index (SHN_ABS, SHN_COMMON) is no place in the
   * file; a .bss object has no file bytes: neither is read. */
  uint64_t offset;
  if (out->type != STT_OBJECT_ || s.shndx >= SHN_LORESERVE_ || s.size == 0 ||
      vyre__elf_addr_range(e, s.value, s.size, &offset, NULL) != 0)
    return 0;
  out->in_file = 1;
  size_t n = s.size < buf_size ? (size_t)s.size : buf_size;
  if (n && e->read(e->ctx, offset, buf, n) != (long)n)
    return host_elf_fail(reason, reason_size, "cannot read '%s' at offset %llu: %s", name,
                         (unsigned long long)offset, errno ? strerror(errno) : "short read");
  out->copied = n;
  return 0;
}

int host_elf_object_read(vyre__elf_reader read, void *ctx, uint64_t file_size, const char *name,
                         void *buf, size_t buf_size, host_elf_object *out, char *reason,
                         size_t reason_size) {
  memset(out, 0, sizeof *out);
  vyre__elf e;
  errno = 0;
  if (vyre__elf_open(&e, read, ctx, file_size, reason, reason_size) != 0) return -1;
  return object_read(&e, name, buf, buf_size, out, reason, reason_size);
}

int host_elf_object_buffer(const void *data, size_t size, const char *name, void *buf,
                           size_t buf_size, host_elf_object *out, char *reason,
                           size_t reason_size) {
  memset(out, 0, sizeof *out);
  vyre__elf e;
  vyre__elf_buffer b;
  if (vyre__elf_open_buffer(&e, &b, data, size, reason, reason_size) != 0) return -1;
  return object_read(&e, name, buf, buf_size, out, reason, reason_size);
}

int host_elf_object_fd(int fd, const char *name, void *buf, size_t buf_size,
                       host_elf_object *out, char *reason, size_t reason_size) {
  struct stat st;
  memset(out, 0, sizeof *out);
  if (fstat(fd, &st) != 0)
    return host_elf_fail(reason, reason_size, "cannot stat the file: %s", strerror(errno));
  return host_elf_object_read(vyre__elf_read_fd, &fd, (uint64_t)st.st_size, name, buf, buf_size,
                              out, reason, reason_size);
}
