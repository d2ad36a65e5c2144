/* elf.c -- bounded reading of ELF files that may be hostile: header, program and section headers, the dynamic section and symbols, machine names (elf.h). */
#include "elf.h"

#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

/* Constants of the System V ABI ("Object Files"); numbers, not <elf.h>
 * names, so that an older <elf.h> or none builds the same. */
enum {
  EHDR32 = 52, EHDR64 = 64, PHDR32 = 32, PHDR64 = 56, SHDR32 = 40, SHDR64 = 64,
  SYM32 = 16, SYM64 = 24, SHT_DYNSYM = 11, EV_CURRENT = 1,
};

#if defined(__GNUC__)
__attribute__((format(printf, 3, 4)))
#endif
static int fail(char *why, size_t size, const char *fmt, ...) {
  if (why && size) {
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(why, size, fmt, ap);
    va_end(ap);
  }
  return -1;
}

int vyre__elf_range_ok(const vyre__elf *e, uint64_t offset, uint64_t size) {
  return offset <= e->size && size <= e->size - offset ? 0 : -1;
}

/* n bytes at off, all in the file and all read; -1 otherwise. */
static int read_exact(const vyre__elf *e, uint64_t off, void *dst, size_t n) {
  if (vyre__elf_range_ok(e, off, n) != 0) return -1;
  long got = e->read(e->ctx, off, dst, n);
  return got >= 0 && (size_t)got == n ? 0 : -1;
}

/* An n-byte field at p in the file's byte order. */
static uint64_t field(const vyre__elf *e, const unsigned char *p, unsigned n) {
  uint64_t v = 0;
  for (unsigned i = 0; i < n; i++) v = (v << 8) | p[e->big ? i : n - 1 - i];
  return v;
}

/* The class's word: 4 bytes in ELF32, 8 in ELF64. */
static uint64_t word(const vyre__elf *e, const unsigned char *p) {
  return field(e, p, e->is64 ? 8 : 4);
}

static void read_header(vyre__elf *e, const unsigned char *h) {
  unsigned w = e->is64 ? 8 : 4; /* a word: addresses and offsets */
  e->type = (uint16_t)field(e, h + 16, 2);
  e->machine = (uint16_t)field(e, h + 18, 2);
  e->version = (uint32_t)field(e, h + 20, 4);
  e->entry = word(e, h + 24);
  e->phoff = word(e, h + 24 + w);
  e->shoff = word(e, h + 24 + 2 * w);
  const unsigned char *p = h + 24 + 3 * w; /* e_flags and the halves */
  e->flags = (uint32_t)field(e, p, 4);
  e->ehsize = (uint16_t)field(e, p + 4, 2);
  e->phentsize = (uint16_t)field(e, p + 6, 2);
  e->phnum = (uint16_t)field(e, p + 8, 2);
  e->shentsize = (uint16_t)field(e, p + 10, 2);
  e->shnum = (uint16_t)field(e, p + 12, 2);
  e->shstrndx = (uint16_t)field(e, p + 14, 2);
}

int vyre__elf_open(vyre__elf *e, vyre__elf_reader read, void *ctx, uint64_t size, char *why,
                   size_t why_size) {
  memset(e, 0, sizeof *e);
  e->read = read;
  e->ctx = ctx;
  e->size = size;
  errno = 0;
  if (read_exact(e, 0, e->ident, sizeof e->ident) != 0)
    return fail(why, why_size,
                "not an ELF file: %llu bytes, too short for an ELF header (a truncated or empty "
                "file)",
                (unsigned long long)size);
  const unsigned char *id = e->ident;
  if (memcmp(id, "\177ELF", 4) != 0)
    return fail(why, why_size,
                "not an ELF file: it starts with %02x %02x %02x %02x, not 7f 45 4c 46 (\\177ELF)",
                id[0], id[1], id[2], id[3]);
  if (id[4] != VYRE__ELF_CLASS32 && id[4] != VYRE__ELF_CLASS64)
    return fail(why, why_size, "corrupt ELF file: unknown ELF class %u", id[4]);
  if (id[5] != VYRE__ELF_DATA_LSB && id[5] != VYRE__ELF_DATA_MSB)
    return fail(why, why_size, "corrupt ELF file: unknown byte order %u", id[5]);
  e->is64 = id[4] == VYRE__ELF_CLASS64;
  e->big = id[5] == VYRE__ELF_DATA_MSB;
  unsigned char h[EHDR64];
  size_t n = e->is64 ? EHDR64 : EHDR32;
  if (size < n)
    return fail(why, why_size, "truncated: %llu bytes, the ELF header alone needs %zu",
                (unsigned long long)size, n);
  if (read_exact(e, 0, h, n) != 0)
    return fail(why, why_size, "cannot read the ELF header: %s",
                errno ? strerror(errno) : "short read");
  read_header(e, h);
  return 0;
}

static long read_buffer(void *ctx, uint64_t off, void *dst, size_t n) {
  const vyre__elf_buffer *b = ctx;
  if (off >= b->size) return 0;
  size_t avail = b->size - (size_t)off;
  if (n > avail) n = avail;
  memcpy(dst, b->data + off, n);
  return (long)n;
}

int vyre__elf_open_buffer(vyre__elf *e, vyre__elf_buffer *ctx, const void *data, size_t size,
                          char *why, size_t why_size) {
  ctx->data = data;
  ctx->size = size;
  return vyre__elf_open(e, read_buffer, ctx, size, why, why_size);
}

long vyre__elf_read_fd(void *ctx, uint64_t off, void *dst, size_t n) {
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

int vyre__elf_check_sizes(const vyre__elf *e, char *why, size_t why_size) {
  unsigned eh = e->is64 ? EHDR64 : EHDR32, ph = e->is64 ? PHDR64 : PHDR32;
  if (e->ident[6] != EV_CURRENT)
    return fail(why, why_size, "corrupt ELF file: ELF version %u, expected %u", e->ident[6],
                EV_CURRENT);
  if (e->ehsize != eh || e->phentsize != ph)
    return fail(why, why_size,
                "corrupt ELF file: header size %u and program header size %u, expected %u and %u",
                e->ehsize, e->phentsize, eh, ph);
  return 0;
}

uint64_t vyre__elf_end(uint64_t offset, uint64_t size) {
  return offset > UINT64_MAX - size ? UINT64_MAX : offset + size;
}

/* Entry i of a table of `count` entries of `entsize` (at least `need`
 * bytes) at `table`: its bytes into buf. */
static int table_entry(const vyre__elf *e, uint64_t table, uint64_t entsize, uint64_t count,
                       uint64_t i, unsigned need, unsigned char *buf) {
  if (i >= count || entsize < need) return -1;
  if (count > UINT64_MAX / entsize || vyre__elf_range_ok(e, table, count * entsize) != 0)
    return -1;
  return read_exact(e, table + i * entsize, buf, need);
}

int vyre__elf_phdr_read(const vyre__elf *e, uint32_t i, vyre__elf_phdr *out, char *why,
                        size_t why_size) {
  unsigned char p[PHDR64];
  unsigned need = e->is64 ? PHDR64 : PHDR32;
  if (table_entry(e, e->phoff, e->phentsize, e->phnum, i, need, p) != 0)
    return fail(why, why_size,
                "truncated or corrupt: program header %u of %u (%u bytes each at offset %llu) "
                "is not in the %llu-byte file",
                i, e->phnum, e->phentsize, (unsigned long long)e->phoff,
                (unsigned long long)e->size);
  out->type = (uint32_t)field(e, p, 4);
  if (e->is64) {
    out->flags = (uint32_t)field(e, p + 4, 4);
    out->offset = word(e, p + 8), out->vaddr = word(e, p + 16), out->paddr = word(e, p + 24);
    out->filesz = word(e, p + 32), out->memsz = word(e, p + 40), out->align = word(e, p + 48);
  } else {
    out->offset = word(e, p + 4), out->vaddr = word(e, p + 8), out->paddr = word(e, p + 12);
    out->filesz = word(e, p + 16), out->memsz = word(e, p + 20);
    out->flags = (uint32_t)field(e, p + 24, 4), out->align = word(e, p + 28);
  }
  return 0;
}

int vyre__elf_shdr_read(const vyre__elf *e, uint32_t i, vyre__elf_shdr *out, char *why,
                        size_t why_size) {
  unsigned char s[SHDR64];
  unsigned need = e->is64 ? SHDR64 : SHDR32;
  if (table_entry(e, e->shoff, e->shentsize, e->shnum, i, need, s) != 0)
    return fail(why, why_size,
                "truncated or corrupt: section header %u of %u (%u bytes each at offset %llu) "
                "is not in the %llu-byte file",
                i, e->shnum, e->shentsize, (unsigned long long)e->shoff,
                (unsigned long long)e->size);
  unsigned w = e->is64 ? 8 : 4;
  out->name = (uint32_t)field(e, s, 4);
  out->type = (uint32_t)field(e, s + 4, 4);
  out->flags = word(e, s + 8);
  out->addr = word(e, s + 8 + w);
  out->offset = word(e, s + 8 + 2 * w);
  out->size = word(e, s + 8 + 3 * w);
  out->link = (uint32_t)field(e, s + 8 + 4 * w, 4);
  out->info = (uint32_t)field(e, s + 12 + 4 * w, 4);
  out->addralign = word(e, s + 16 + 4 * w);
  out->entsize = word(e, s + 16 + 5 * w);
  return 0;
}

int vyre__elf_dynsym(const vyre__elf *e, vyre__elf_symtab *out, char *why, size_t why_size) {
  memset(out, 0, sizeof *out);
  if (e->shoff == 0 || e->shnum == 0) return 0;
  vyre__elf_shdr sh, str;
  uint32_t i;
  for (i = 0; i < e->shnum; i++) {
    if (vyre__elf_shdr_read(e, i, &sh, why, why_size) != 0) return -1;
    if (sh.type == SHT_DYNSYM) break;
  }
  if (i == e->shnum) return 0;
  if (sh.link >= e->shnum || sh.link == i)
    return fail(why, why_size, "corrupt ELF file: .dynsym names section %u as its strings",
                sh.link);
  if (vyre__elf_shdr_read(e, sh.link, &str, why, why_size) != 0) return -1;
  if (sh.entsize < (e->is64 ? SYM64 : SYM32) || vyre__elf_range_ok(e, sh.offset, sh.size) != 0 ||
      vyre__elf_range_ok(e, str.offset, str.size) != 0)
    return fail(why, why_size, "corrupt ELF file: .dynsym or .dynstr lies outside the file");
  out->offset = sh.offset;
  out->entsize = sh.entsize;
  out->count = sh.size / sh.entsize;
  out->str_offset = str.offset;
  out->str_size = str.size;
  return 1;
}

/* One symbol table entry of the file's class and byte order. */
static void sym_decode(const vyre__elf *e, const unsigned char *s, vyre__elf_sym *out) {
  out->name = (uint32_t)field(e, s, 4);
  if (e->is64) {
    out->info = s[4], out->other = s[5], out->shndx = (uint16_t)field(e, s + 6, 2);
    out->value = word(e, s + 8), out->size = word(e, s + 16);
  } else {
    out->value = word(e, s + 4), out->size = word(e, s + 8);
    out->info = s[12], out->other = s[13], out->shndx = (uint16_t)field(e, s + 14, 2);
  }
}

int vyre__elf_sym_read(const vyre__elf *e, const vyre__elf_symtab *t, uint64_t i,
                       vyre__elf_sym *out, char *why, size_t why_size) {
  unsigned char s[SYM64];
  unsigned need = e->is64 ? SYM64 : SYM32;
  if (table_entry(e, t->offset, t->entsize, t->count, i, need, s) != 0)
    return fail(why, why_size, "corrupt ELF file: symbol %llu lies outside its table",
                (unsigned long long)i);
  sym_decode(e, s, out);
  return 0;
}

int vyre__elf_sym_name(const vyre__elf *e, const vyre__elf_symtab *t, const vyre__elf_sym *s,
                       char *buf, size_t buf_size) {
  buf[0] = '\0';
  if (s->name >= t->str_size) return -1;
  uint64_t left = t->str_size - s->name, off = t->str_offset + s->name;
  size_t n = 0;
  /* Read in small pieces: the name ends at its NUL, well before the
   * table does. */
  while (left) {
    char piece[64];
    size_t k = left < sizeof piece ? (size_t)left : sizeof piece;
    if (read_exact(e, off, piece, k) != 0) return -1;
    for (size_t j = 0; j < k; j++) {
      if (piece[j] == '\0') {
        buf[n < buf_size ? n : buf_size - 1] = '\0';
        return n < buf_size ? 0 : 1;
      }
      if (n + 1 < buf_size) buf[n] = piece[j];
      n++;
    }
    off += k, left -= k;
  }
  buf[n < buf_size ? n : buf_size - 1] = '\0';
  return -1; /* unterminated */
}

/* ------------------------------------------------------------------ */
/* The dynamic section, read as the dynamic linker reads it           */
/* ------------------------------------------------------------------ */

enum { PT_LOAD_ = 1, PT_DYNAMIC_ = 2, STB_GLOBAL_ = 1, STB_WEAK_ = 2, STB_GNU_UNIQUE_ = 10 };

/* The dynamic tags read here (System V ABI "Dynamic Section", GNU
 * extensions), by name and number. */
#define ELF_DYN_TAGS(X)                                                                        \
  X(PLTRELSZ, 2) X(HASH, 4) X(STRTAB, 5) X(SYMTAB, 6) X(RELA, 7) X(RELASZ, 8) X(STRSZ, 10)     \
  X(SYMENT, 11) X(INIT, 12) X(FINI, 13) X(REL, 17) X(RELSZ, 18) X(JMPREL, 23)                  \
  X(INIT_ARRAY, 25) X(FINI_ARRAY, 26) X(INIT_ARRAYSZ, 27) X(FINI_ARRAYSZ, 28)                  \
  X(PREINIT_ARRAY, 32) X(PREINIT_ARRAYSZ, 33) X(RELRSZ, 35) X(RELR, 36)                        \
  X(GNU_HASH, 0x6ffffef5u) X(VERSYM, 0x6ffffff0u) X(VERDEF, 0x6ffffffcu) X(VERNEED, 0x6ffffffeu)
enum {
#define DYN_SLOT_(name, value) DYN_##name,
  ELF_DYN_TAGS(DYN_SLOT_)
#undef DYN_SLOT_
  DYN_TRACKED
};
static const uint64_t dyn_tag[] = {
#define DYN_VALUE_(name, value) value,
    ELF_DYN_TAGS(DYN_VALUE_)
#undef DYN_VALUE_
};
static const char *const dyn_name[] = {
#define DYN_NAME_(name, value) "DT_" #name,
    ELF_DYN_TAGS(DYN_NAME_)
#undef DYN_NAME_
};
/* Tags whose value is an offset in the string table. */
static const struct {
  uint64_t tag;
  const char *name;
} dyn_strings[] = {{1, "DT_NEEDED"}, {14, "DT_SONAME"}, {15, "DT_RPATH"}, {29, "DT_RUNPATH"}};

/* The tracked entries of one dynamic section (the last of each tag). */
typedef struct elf_dynamic {
  uint64_t offset, count; /* the entries in the file */
  uint64_t value[DYN_TRACKED];
  uint32_t have; /* bit per slot */
} elf_dynamic;

#define DYN_HAS(d, slot) (((d)->have >> (slot)) & 1u)

int vyre__elf_addr_range(const vyre__elf *e, uint64_t addr, uint64_t size, uint64_t *offset,
                         uint64_t *avail) {
  for (uint32_t i = 0; i < e->phnum; i++) {
    vyre__elf_phdr p;
    if (vyre__elf_phdr_read(e, i, &p, NULL, 0) != 0) return -1;
    if (p.type != PT_LOAD_ || addr < p.vaddr || vyre__elf_range_ok(e, p.offset, p.filesz) != 0)
      continue;
    uint64_t into = addr - p.vaddr;
    if (into >= p.filesz || size > p.filesz - into) continue;
    if (offset) *offset = p.offset + into;
    if (avail) *avail = p.filesz - into;
    return 0;
  }
  return -1;
}

static int outside(char *why, size_t why_size, const char *what, uint64_t addr, uint64_t size) {
  return fail(why, why_size,
              "corrupt ELF file: %s (%llu bytes at address 0x%llx) lies outside the file "
              "contents every PT_LOAD segment maps",
              what, (unsigned long long)size, (unsigned long long)addr);
}

/* Dynamic entry k of d: its tag and value. */
static int dyn_entry(const vyre__elf *e, const elf_dynamic *d, uint64_t k, uint64_t *tag,
                     uint64_t *value) {
  unsigned w = e->is64 ? 8 : 4;
  unsigned char b[16];
  if (read_exact(e, d->offset + k * 2 * w, b, 2 * w) != 0) return -1;
  *tag = word(e, b);
  *value = word(e, b + w);
  return 0;
}

/* The PT_DYNAMIC segment's entries up to DT_NULL: 1, 0 when there is no
 * PT_DYNAMIC, -1 when it cannot be read where the linker reads it. */
static int dyn_read(const vyre__elf *e, elf_dynamic *d, char *why, size_t why_size) {
  memset(d, 0, sizeof *d);
  vyre__elf_phdr p;
  uint32_t i;
  for (i = 0; i < e->phnum; i++) {
    if (vyre__elf_phdr_read(e, i, &p, why, why_size) != 0) return -1;
    if (p.type == PT_DYNAMIC_) break;
  }
  if (i == e->phnum) return 0;
  /* The linker reads the entries at p_vaddr of the loaded image. */
  if (vyre__elf_addr_range(e, p.vaddr, p.filesz, &d->offset, NULL) != 0)
    return outside(why, why_size, "its dynamic section", p.vaddr, p.filesz);
  uint64_t n = p.filesz / (e->is64 ? 16 : 8);
  errno = 0;
  for (uint64_t k = 0; k < n; k++) {
    uint64_t tag, value;
    if (dyn_entry(e, d, k, &tag, &value) != 0)
      return fail(why, why_size, "cannot read the dynamic section: %s",
                  errno ? strerror(errno) : "short read");
    if (tag == 0) {
      d->count = k;
      return 1;
    }
    for (unsigned s = 0; s < DYN_TRACKED; s++)
      if (dyn_tag[s] == tag) {
        d->value[s] = value;
        d->have |= 1u << s;
      }
  }
  return fail(why, why_size, "corrupt ELF file: its dynamic section (%llu entries) has no "
                             "DT_NULL end",
              (unsigned long long)n);
}

/* `n` 4-byte words at file offset off, in chunks; calls visit on each
 * until it returns nonzero (returned), or 0 after all; -1 unreadable. */
static int words_visit(const vyre__elf *e, uint64_t off, uint64_t n,
                       int (*visit)(void *ctx, uint64_t i, uint32_t v), void *ctx) {
  unsigned char b[256];
  for (uint64_t i = 0; i < n;) {
    uint64_t k = n - i < sizeof b / 4 ? n - i : sizeof b / 4;
    if (read_exact(e, off + i * 4, b, (size_t)k * 4) != 0) return -1;
    for (uint64_t j = 0; j < k; j++, i++) {
      int r = visit(ctx, i, (uint32_t)field(e, b + j * 4, 4));
      if (r) return r;
    }
  }
  return 0;
}

static int bucket_max(void *ctx, uint64_t i, uint32_t v) {
  uint32_t *max = ctx;
  if (v > *max) *max = v;
  return 0;
}

static int chain_end(void *ctx, uint64_t i, uint32_t v) {
  if (!(v & 1u)) return 0;
  *(uint64_t *)ctx = i;
  return 1;
}

/* The symbol count DT_GNU_HASH implies: one past the end of the chain
 * of the highest bucket (symbols below symoffset are not hashed). */
static int gnu_hash_count(const vyre__elf *e, uint64_t addr, uint64_t *count, char *why,
                          size_t why_size) {
  uint64_t off, avail;
  unsigned char h[16];
  if (vyre__elf_addr_range(e, addr, 16, &off, &avail) != 0 || read_exact(e, off, h, 16) != 0)
    return outside(why, why_size, "DT_GNU_HASH", addr, 16);
  uint32_t nbuckets = (uint32_t)field(e, h, 4), symoffset = (uint32_t)field(e, h + 4, 4);
  uint64_t bloom = field(e, h + 8, 4) * (uint64_t)(e->is64 ? 8 : 4);
  uint64_t head = 16 + bloom + 4 * (uint64_t)nbuckets; /* < 2^36: no overflow */
  if (head > avail) return outside(why, why_size, "DT_GNU_HASH", addr, head);
  uint32_t max = 0;
  if (words_visit(e, off + 16 + bloom, nbuckets, bucket_max, &max) < 0)
    return outside(why, why_size, "DT_GNU_HASH", addr, head);
  if (max == 0) { /* every bucket empty: only the unhashed symbols */
    *count = symoffset;
    return 0;
  }
  if (max < symoffset)
    return fail(why, why_size, "corrupt ELF file: a DT_GNU_HASH bucket names symbol %u, below "
                               "the first hashed one (%u)",
                max, symoffset);
  /* The chains follow the buckets in the same segment. */
  uint64_t skip = 4 * (uint64_t)(max - symoffset), end = UINT64_MAX;
  if (skip >= avail - head ||
      words_visit(e, off + head + skip, (avail - head - skip) / 4, chain_end, &end) != 1)
    return fail(why, why_size, "corrupt ELF file: the DT_GNU_HASH chain of symbol %u runs past "
                               "the end of its segment",
                max);
  *count = (uint64_t)max + end + 1;
  return 0;
}

/* The symbol count: DT_GNU_HASH (what glibc uses), else DT_HASH's nchain. */
static int symbol_count(const vyre__elf *e, const elf_dynamic *d, uint64_t *count, char *why,
                        size_t why_size) {
  if (DYN_HAS(d, DYN_GNU_HASH)) return gnu_hash_count(e, d->value[DYN_GNU_HASH], count, why, why_size);
  if (!DYN_HAS(d, DYN_HASH))
    return fail(why, why_size, "corrupt ELF file: no DT_GNU_HASH or DT_HASH, the dynamic linker "
                               "cannot look up its symbols");
  uint64_t addr = d->value[DYN_HASH], off;
  unsigned char h[8];
  if (vyre__elf_addr_range(e, addr, 8, &off, NULL) != 0 || read_exact(e, off, h, 8) != 0)
    return outside(why, why_size, "DT_HASH", addr, 8);
  uint64_t size = 8 + 4 * (field(e, h, 4) + field(e, h + 4, 4));
  if (vyre__elf_addr_range(e, addr, size, NULL, NULL) != 0)
    return outside(why, why_size, "DT_HASH", addr, size);
  *count = field(e, h + 4, 4);
  return 0;
}

/* Every other table dlopen reads lies in the file; string offsets lie in
 * the string table. */
static int dyn_tables_ok(const vyre__elf *e, const elf_dynamic *d, uint64_t symbols,
                         uint64_t strsz, char *why, size_t why_size) {
  static const struct {
    unsigned addr, size; /* slots; size DYN_TRACKED: fixed[] bytes */
    uint64_t fixed;
  } tables[] = {
      {DYN_RELA, DYN_RELASZ, 0},           {DYN_REL, DYN_RELSZ, 0},
      {DYN_JMPREL, DYN_PLTRELSZ, 0},       {DYN_RELR, DYN_RELRSZ, 0},
      {DYN_INIT_ARRAY, DYN_INIT_ARRAYSZ, 0}, {DYN_FINI_ARRAY, DYN_FINI_ARRAYSZ, 0},
      {DYN_PREINIT_ARRAY, DYN_PREINIT_ARRAYSZ, 0}, {DYN_INIT, DYN_TRACKED, 1},
      {DYN_FINI, DYN_TRACKED, 1},          {DYN_VERNEED, DYN_TRACKED, 16},
      {DYN_VERDEF, DYN_TRACKED, 20},       {DYN_VERSYM, DYN_TRACKED, 0},
  };
  for (size_t i = 0; i < sizeof tables / sizeof tables[0]; i++) {
    unsigned a = tables[i].addr, z = tables[i].size;
    if (!DYN_HAS(d, a)) continue;
    uint64_t size = z < DYN_TRACKED ? (DYN_HAS(d, z) ? d->value[z] : 0) : tables[i].fixed;
    if (a == DYN_VERSYM) size = 2 * symbols;
    if (size && vyre__elf_addr_range(e, d->value[a], size, NULL, NULL) != 0)
      return outside(why, why_size, dyn_name[a], d->value[a], size);
  }
  for (uint64_t k = 0; k < d->count; k++) {
    uint64_t tag, value;
    if (dyn_entry(e, d, k, &tag, &value) != 0) return -1;
    for (size_t s = 0; s < sizeof dyn_strings / sizeof dyn_strings[0]; s++)
      if (tag == dyn_strings[s].tag && value >= strsz)
        return fail(why, why_size,
                    "corrupt ELF file: %s names string %llu, the string table has %llu bytes",
                    dyn_strings[s].name, (unsigned long long)value, (unsigned long long)strsz);
  }
  return 0;
}

int vyre__elf_dynamic_symtab(const vyre__elf *e, vyre__elf_symtab *out, char *why,
                             size_t why_size) {
  memset(out, 0, sizeof *out);
  elf_dynamic d;
  int rc = dyn_read(e, &d, why, why_size);
  if (rc <= 0) return rc;
  if (!DYN_HAS(&d, DYN_SYMTAB)) return 0;
  if (!DYN_HAS(&d, DYN_STRTAB) || !DYN_HAS(&d, DYN_STRSZ))
    return fail(why, why_size, "corrupt ELF file: DT_SYMTAB without DT_STRTAB and DT_STRSZ");
  uint64_t entsize = e->is64 ? SYM64 : SYM32, count = 0;
  /* The linker reads symbols of the class's size whatever DT_SYMENT says. */
  if (DYN_HAS(&d, DYN_SYMENT) && d.value[DYN_SYMENT] != entsize)
    return fail(why, why_size, "corrupt ELF file: DT_SYMENT %llu, expected %llu",
                (unsigned long long)d.value[DYN_SYMENT], (unsigned long long)entsize);
  uint64_t strtab = d.value[DYN_STRTAB], strsz = d.value[DYN_STRSZ];
  if (vyre__elf_addr_range(e, strtab, strsz, &out->str_offset, NULL) != 0)
    return outside(why, why_size, "DT_STRTAB", strtab, strsz);
  out->str_size = strsz;
  if (symbol_count(e, &d, &count, why, why_size) != 0) return -1;
  uint64_t symtab = d.value[DYN_SYMTAB];
  if (count > UINT64_MAX / entsize ||
      vyre__elf_addr_range(e, symtab, count * entsize, &out->offset, NULL) != 0)
    return outside(why, why_size, "DT_SYMTAB", symtab,
                   count > UINT64_MAX / entsize ? UINT64_MAX : count * entsize);
  out->entsize = entsize;
  out->count = count;
  return dyn_tables_ok(e, &d, count, strsz, why, why_size) == 0 ? 1 : -1;
}

/* Symbol i of t (whose entries lie in the file) through `chunk`, which
 * holds symbols [*first, *first + *held): a scan reads a chunk at once. */
static int sym_cached(const vyre__elf *e, const vyre__elf_symtab *t, uint64_t i,
                      unsigned char *chunk, size_t chunk_size, uint64_t *first, uint64_t *held,
                      vyre__elf_sym *out) {
  uint64_t per = chunk_size / t->entsize;
  if (per == 0) return vyre__elf_sym_read(e, t, i, out, NULL, 0);
  if (i < *first || i >= *first + *held) {
    *first = i;
    *held = t->count - i < per ? t->count - i : per;
    if (read_exact(e, t->offset + i * t->entsize, chunk, (size_t)(*held * t->entsize)) != 0) {
      *held = 0;
      return -1;
    }
  }
  sym_decode(e, chunk + (i - *first) * t->entsize, out);
  return 0;
}

int vyre__elf_sym_find(const vyre__elf *e, const vyre__elf_symtab *t, const char *name,
                       vyre__elf_sym *out, char *why, size_t why_size) {
  char buf[128];
  size_t len = strlen(name);
  if (len >= sizeof buf) return fail(why, why_size, "symbol name too long to look up");
  unsigned char chunk[64 * SYM64]; /* symbols read 64 at a time */
  uint64_t first = 0, held = 0;
  if (t->entsize < (e->is64 ? SYM64 : SYM32) || t->count > UINT64_MAX / t->entsize ||
      vyre__elf_range_ok(e, t->offset, t->count * t->entsize) != 0)
    return fail(why, why_size, "corrupt ELF file: its symbol table lies outside the file");
  for (uint64_t i = 1; i < t->count; i++) {
    vyre__elf_sym s;
    if (sym_cached(e, t, i, chunk, sizeof chunk, &first, &held, &s) != 0)
      return fail(why, why_size, "corrupt ELF file: symbol %llu cannot be read",
                  (unsigned long long)i);
    unsigned bind = s.info >> 4;
    if (s.shndx == 0 || (bind != STB_GLOBAL_ && bind != STB_WEAK_ && bind != STB_GNU_UNIQUE_) ||
        s.name >= t->str_size || t->str_size - s.name < len + 1)
      continue;
    if (read_exact(e, t->str_offset + s.name, buf, len + 1) != 0)
      return fail(why, why_size, "corrupt ELF file: the name of symbol %llu cannot be read",
                  (unsigned long long)i);
    if (memcmp(buf, name, len) == 0 && buf[len] == '\0') {
      *out = s;
      return 1;
    }
  }
  return 0;
}

/* e_machine values (System V ABI; glibc <elf.h> EM_*), the union of what
 * the plugin pre-check and the conformance checks name. */
static const struct {
  uint16_t em;
  const char *name;
} machines[] = {
    {3, "i386"},    {8, "mips"},     {20, "ppc"},      {21, "ppc64"},    {22, "s390x"},
    {40, "arm"},    {42, "superh"},  {43, "sparc64"},  {50, "ia64"},     {62, "x86_64"},
    {183, "aarch64"}, {190, "nvidia cuda"}, {243, "riscv"}, {247, "bpf"}, {258, "loongarch"},
};

const char *vyre__elf_machine_str(uint16_t machine, char *buf, size_t size) {
  for (size_t i = 0; i < sizeof machines / sizeof machines[0]; i++)
    if (machines[i].em == machine) return machines[i].name;
  snprintf(buf, size, "machine %u", machine);
  return buf;
}

void vyre__elf_host(unsigned char *elf_class, unsigned char *elf_data, uint16_t *machine) {
  *elf_class = sizeof(void *) == 8 ? VYRE__ELF_CLASS64 : VYRE__ELF_CLASS32;
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__
  *elf_data = VYRE__ELF_DATA_MSB;
#else
  *elf_data = VYRE__ELF_DATA_LSB;
#endif
#if defined(__x86_64__)
  *machine = 62;
#elif defined(__aarch64__)
  *machine = 183;
#elif defined(__i386__)
  *machine = 3;
#elif defined(__arm__)
  *machine = 40;
#elif defined(__powerpc64__)
  *machine = 21;
#elif defined(__s390x__)
  *machine = 22;
#elif defined(__riscv)
  *machine = 243;
#else
  /* An architecture not listed above: ask the running executable. */
  *machine = 0;
  int fd = open("/proc/self/exe", O_RDONLY | O_CLOEXEC);
  if (fd < 0) return;
  vyre__elf e;
  if (vyre__elf_open(&e, vyre__elf_read_fd, &fd, UINT64_MAX, NULL, 0) == 0 &&
      e.ident[4] == *elf_class && e.ident[5] == *elf_data)
    *machine = e.machine;
  close(fd);
#endif
}
