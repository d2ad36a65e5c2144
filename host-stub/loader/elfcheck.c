/* elfcheck.c -- refuse a truncated, corrupt or foreign ELF file with a reason before dlopen maps it (plain reads, no mmap). */
#include "elfcheck.h"

#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* More program headers than any real shared object has (glibc's
 * ld.so, musl and bionic libraries have under 20). */
#define ELF_PHNUM_MAX 4096u

static int fail(char *reason, size_t size, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 3, 4)))
#endif
    ;
static int fail(char *reason, size_t size, const char *fmt, ...) {
  if (reason && size) {
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(reason, size, fmt, ap);
    va_end(ap);
  }
  return -1;
}

const char *host_elf_machine_name(uint16_t machine, char *buf, size_t size) {
  /* Numbers, not EM_* names: an older elf.h may lack the newer ones. */
  static const struct {
    uint16_t em;
    const char *name;
  } names[] = {
      {3, "i386"},     {8, "mips"},       {20, "ppc"},     {21, "ppc64"},
      {22, "s390x"},   {40, "arm"},       {42, "superh"},  {43, "sparc64"},
      {50, "ia64"},    {62, "x86_64"},    {183, "aarch64"}, {190, "nvidia cuda"},
      {243, "riscv"},  {247, "bpf"},      {258, "loongarch"},
  };
  for (size_t i = 0; i < sizeof names / sizeof names[0]; i++)
    if (names[i].em == machine) return names[i].name;
  snprintf(buf, size, "machine %u", machine);
  return buf;
}

void host_elf_want_host(host_elf_want *out) {
  memset(out, 0, sizeof *out);
  out->elf_class = sizeof(void *) == 8 ? ELFCLASS64 : ELFCLASS32;
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__
  out->elf_data = ELFDATA2MSB;
#else
  out->elf_data = ELFDATA2LSB;
#endif
#if defined(__x86_64__)
  out->machine = EM_X86_64;
#elif defined(__aarch64__)
  out->machine = EM_AARCH64;
#elif defined(__i386__)
  out->machine = EM_386;
#elif defined(__arm__)
  out->machine = EM_ARM;
#elif defined(__powerpc64__)
  out->machine = EM_PPC64;
#elif defined(__s390x__)
  out->machine = EM_S390;
#elif defined(__riscv)
  out->machine = 243; /* EM_RISCV */
#else
  /* An architecture not listed above: ask the running executable. */
  int fd = open("/proc/self/exe", O_RDONLY | O_CLOEXEC);
  if (fd >= 0) {
    unsigned char h[20];
    if (pread(fd, h, sizeof h, 0) == (ssize_t)sizeof h && memcmp(h, ELFMAG, SELFMAG) == 0 &&
        h[EI_CLASS] == out->elf_class && h[EI_DATA] == out->elf_data)
      memcpy(&out->machine, h + 18, sizeof out->machine);
    close(fd);
  }
#endif
}

/* The fields the check needs, whatever the class. */
typedef struct elf_head {
  uint16_t type, machine;
  uint64_t phoff, shoff;
  uint16_t ehsize, phentsize, phnum, shentsize, shnum;
} elf_head;

typedef struct elf_seg {
  uint32_t type;
  uint64_t offset, vaddr, filesz, memsz;
} elf_seg;

static int read_exact(host_elf_read_fn read, void *ctx, uint64_t off, void *dst, size_t n) {
  long got = read(ctx, off, dst, n);
  return got >= 0 && (size_t)got == n ? 0 : -1;
}

/* "ends at" text for segment i. */
static const char *segment_words(const elf_seg *s, uint32_t i, char *buf, size_t size) {
  switch (s->type) {
  case PT_LOAD: snprintf(buf, size, "its PT_LOAD segment %u", i); break;
  case PT_DYNAMIC: snprintf(buf, size, "its dynamic section (program header %u)", i); break;
  default: snprintf(buf, size, "its program header %u (type 0x%x)", i, s->type); break;
  }
  return buf;
}

/* The reason for a header that cannot be read. */
static int unreadable(char *reason, size_t size) {
  return fail(reason, size, "cannot read the ELF headers: %s",
              errno ? strerror(errno) : "short read");
}

/* The identification bytes: magic, class, byte order, version.  *is64
 * receives the class. */
static int check_ident(host_elf_read_fn read, void *ctx, uint64_t file_size,
                       const host_elf_want *want, int *is64, char *reason, size_t reason_size) {
  unsigned char ident[EI_NIDENT];
  if (file_size < EI_NIDENT || read_exact(read, ctx, 0, ident, sizeof ident) != 0)
    return fail(reason, reason_size,
                "not an ELF file: %llu bytes, too short for an ELF header (a truncated or empty "
                "file)",
                (unsigned long long)file_size);
  if (memcmp(ident, ELFMAG, SELFMAG) != 0)
    return fail(reason, reason_size,
                "not an ELF file: it starts with %02x %02x %02x %02x, not 7f 45 4c 46 (\\177ELF)",
                ident[0], ident[1], ident[2], ident[3]);
  *is64 = ident[EI_CLASS] == ELFCLASS64;
  if (ident[EI_CLASS] != want->elf_class)
    return fail(reason, reason_size, "built for %s, this host is %s",
                ident[EI_CLASS] == ELFCLASS64   ? "64-bit ELF"
                : ident[EI_CLASS] == ELFCLASS32 ? "32-bit ELF"
                                                : "an unknown ELF class",
                want->elf_class == ELFCLASS64 ? "64-bit" : "32-bit");
  if (ident[EI_DATA] != want->elf_data)
    return fail(reason, reason_size, "built for a %s machine, this host is %s",
                ident[EI_DATA] == ELFDATA2MSB   ? "big-endian"
                : ident[EI_DATA] == ELFDATA2LSB ? "little-endian"
                                                : "unknown-byte-order",
                want->elf_data == ELFDATA2MSB ? "big-endian" : "little-endian");
  if (ident[EI_VERSION] != EV_CURRENT)
    return fail(reason, reason_size, "corrupt ELF file: ELF version %u, expected %u",
                ident[EI_VERSION], EV_CURRENT);
  return 0;
}

/* The ELF header: machine, type, header sizes, the program header
 * table inside the file.  Fills *h. */
static int check_head(host_elf_read_fn read, void *ctx, uint64_t file_size,
                      const host_elf_want *want, int is64, elf_head *h, char *reason,
                      size_t reason_size) {
  size_t ehdr_size = is64 ? sizeof(Elf64_Ehdr) : sizeof(Elf32_Ehdr);
  if (file_size < ehdr_size)
    return fail(reason, reason_size, "truncated: %llu bytes, the ELF header alone needs %zu",
                (unsigned long long)file_size, ehdr_size);
  if (is64) {
    Elf64_Ehdr e;
    if (read_exact(read, ctx, 0, &e, sizeof e) != 0) return unreadable(reason, reason_size);
    *h = (elf_head){e.e_type,  e.e_machine,   e.e_phoff, e.e_shoff,    e.e_ehsize,
                    e.e_phentsize, e.e_phnum, e.e_shentsize, e.e_shnum};
  } else {
    Elf32_Ehdr e;
    if (read_exact(read, ctx, 0, &e, sizeof e) != 0) return unreadable(reason, reason_size);
    *h = (elf_head){e.e_type,  e.e_machine,   e.e_phoff, e.e_shoff,    e.e_ehsize,
                    e.e_phentsize, e.e_phnum, e.e_shentsize, e.e_shnum};
  }
  char b1[64], b2[32];
  if (want->machine && h->machine != want->machine)
    return fail(reason, reason_size, "built for %s, this host is %s",
                host_elf_machine_name(h->machine, b1, sizeof b1),
                host_elf_machine_name(want->machine, b2, sizeof b2));
  if (h->type != ET_DYN)
    return fail(reason, reason_size, "not a shared library: ELF type %s",
                h->type == ET_EXEC   ? "EXEC (an executable)"
                : h->type == ET_REL  ? "REL (an object file, not linked)"
                : h->type == ET_CORE ? "CORE (a core dump)"
                                     : "unknown");
  size_t phdr_size = is64 ? sizeof(Elf64_Phdr) : sizeof(Elf32_Phdr);
  if (h->ehsize != ehdr_size || h->phentsize != phdr_size)
    return fail(reason, reason_size,
                "corrupt ELF file: header size %u and program header size %u, expected %zu and "
                "%zu",
                h->ehsize, h->phentsize, ehdr_size, phdr_size);
  if (h->phnum == 0 || h->phnum > ELF_PHNUM_MAX)
    return fail(reason, reason_size, "corrupt ELF file: %u program headers", h->phnum);
  uint64_t table = (uint64_t)h->phnum * phdr_size;
  if (h->phoff > file_size || table > file_size - h->phoff)
    return fail(reason, reason_size,
                "truncated: %llu bytes, its program headers end at %llu",
                (unsigned long long)file_size,
                h->phoff > UINT64_MAX - table ? (unsigned long long)UINT64_MAX
                                              : (unsigned long long)(h->phoff + table));
  return 0;
}

/* Program header i into *s. */
static int read_seg(host_elf_read_fn read, void *ctx, const elf_head *h, int is64, uint32_t i,
                    elf_seg *s) {
  size_t phdr_size = is64 ? sizeof(Elf64_Phdr) : sizeof(Elf32_Phdr);
  uint64_t off = h->phoff + (uint64_t)i * phdr_size;
  if (is64) {
    Elf64_Phdr p;
    if (read_exact(read, ctx, off, &p, sizeof p) != 0) return -1;
    *s = (elf_seg){p.p_type, p.p_offset, p.p_vaddr, p.p_filesz, p.p_memsz};
  } else {
    Elf32_Phdr p;
    if (read_exact(read, ctx, off, &p, sizeof p) != 0) return -1;
    *s = (elf_seg){p.p_type, p.p_offset, p.p_vaddr, p.p_filesz, p.p_memsz};
  }
  return 0;
}

/* The first pass over the program headers: every file range inside the
 * file, a PT_LOAD, one non-empty dynamic section (into *dyn), the
 * section headers inside the file. */
static int check_segments(host_elf_read_fn read, void *ctx, uint64_t file_size,
                          const elf_head *h, int is64, elf_seg *dyn, char *reason,
                          size_t reason_size) {
  uint32_t loads = 0, dynamics = 0;
  char b1[64];
  for (uint32_t i = 0; i < h->phnum; i++) {
    elf_seg s;
    if (read_seg(read, ctx, h, is64, i, &s) != 0) return unreadable(reason, reason_size);
    if (s.filesz && (s.offset > file_size || s.filesz > file_size - s.offset))
      return fail(reason, reason_size, "truncated: %llu bytes, %s ends at %llu",
                  (unsigned long long)file_size, segment_words(&s, i, b1, sizeof b1),
                  s.offset > UINT64_MAX - s.filesz ? (unsigned long long)UINT64_MAX
                                                   : (unsigned long long)(s.offset + s.filesz));
    if (s.type == PT_LOAD) {
      if (s.filesz > s.memsz)
        return fail(reason, reason_size,
                    "corrupt ELF file: PT_LOAD segment %u has %llu bytes in the file but "
                    "%llu in memory",
                    i, (unsigned long long)s.filesz, (unsigned long long)s.memsz);
      loads++;
    } else if (s.type == PT_DYNAMIC) {
      *dyn = s;
      dynamics++;
    }
  }
  if (loads == 0) return fail(reason, reason_size, "corrupt ELF file: no PT_LOAD segment");
  if (dynamics != 1)
    return fail(reason, reason_size,
                "not a loadable shared library: %u dynamic sections, expected 1", dynamics);
  if (dyn->filesz == 0)
    return fail(reason, reason_size, "corrupt ELF file: its dynamic section is empty");
  /* dlopen never reads the section headers, but they are what an ELF
   * file ends with: a file cut short anywhere is refused here. */
  uint64_t sections = (uint64_t)h->shnum * h->shentsize;
  if (h->shoff && (h->shoff > file_size || sections > file_size - h->shoff))
    return fail(reason, reason_size, "truncated: %llu bytes, its section headers end at %llu",
                (unsigned long long)file_size,
                h->shoff > UINT64_MAX - sections ? (unsigned long long)UINT64_MAX
                                                 : (unsigned long long)(h->shoff + sections));
  return 0;
}

int host_elf_check(host_elf_read_fn read, void *ctx, uint64_t file_size,
                   const host_elf_want *want, char *reason, size_t reason_size) {
  errno = 0;
  int is64 = 0;
  elf_head h = {0};
  elf_seg dyn = {0};
  if (check_ident(read, ctx, file_size, want, &is64, reason, reason_size) != 0 ||
      check_head(read, ctx, file_size, want, is64, &h, reason, reason_size) != 0 ||
      check_segments(read, ctx, file_size, &h, is64, &dyn, reason, reason_size) != 0)
    return -1;
  /* The second pass: the dynamic section lies in memory some PT_LOAD
   * maps from the file. */
  for (uint32_t i = 0; i < h.phnum; i++) {
    elf_seg s;
    if (read_seg(read, ctx, &h, is64, i, &s) != 0) return unreadable(reason, reason_size);
    if (s.type == PT_LOAD && dyn.vaddr >= s.vaddr && dyn.vaddr - s.vaddr <= s.filesz &&
        dyn.filesz <= s.filesz - (dyn.vaddr - s.vaddr))
      return 0;
  }
  return fail(reason, reason_size,
              "corrupt ELF file: its dynamic section (%llu bytes at address 0x%llx) lies outside "
              "the file contents every PT_LOAD segment maps",
              (unsigned long long)dyn.filesz, (unsigned long long)dyn.vaddr);
}

typedef struct buffer_ctx {
  const unsigned char *data;
  size_t size;
} buffer_ctx;

static long read_buffer(void *ctx, uint64_t off, void *dst, size_t n) {
  const buffer_ctx *b = ctx;
  if (off >= b->size) return 0;
  size_t avail = b->size - (size_t)off;
  if (n > avail) n = avail;
  memcpy(dst, b->data + off, n);
  return (long)n;
}

int host_elf_check_buffer(const void *data, size_t size, const host_elf_want *want,
                          char *reason, size_t reason_size) {
  buffer_ctx b = {data, size};
  return host_elf_check(read_buffer, &b, size, want, reason, reason_size);
}

static long read_fd(void *ctx, uint64_t off, void *dst, size_t n) {
  int fd = *(const int *)ctx;
  size_t done = 0;
  while (done < n) {
    ssize_t got = pread(fd, (char *)dst + done, n - done, (off_t)(off + done));
    if (got < 0) {
      if (errno == EINTR) continue;
      return -1;
    }
    if (got == 0) break;
    done += (size_t)got;
  }
  return (long)done;
}

int host_elf_check_fd(int fd, const host_elf_want *want, char *reason, size_t reason_size) {
  struct stat st;
  if (fstat(fd, &st) != 0)
    return fail(reason, reason_size, "cannot stat the file: %s", strerror(errno));
  if (!S_ISREG(st.st_mode)) return fail(reason, reason_size, "not a regular file");
  return host_elf_check(read_fd, &fd, (uint64_t)st.st_size, want, reason, reason_size);
}
