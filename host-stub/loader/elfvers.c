/* elfvers.c -- refuse a plugin whose symbol-version tables would make the dynamic linker read out of bounds: the DT_VERDEF and DT_VERNEED chains and every DT_VERSYM entry, read with pread before dlopen. */
#include "elfcheck.h"

#include <elf.h>
#include <link.h>
#include <string.h>

/* More version records than any real library has: a longer chain is corrupt. */
#define VERS_RECORDS_MAX 65536u

/* The `size` bytes the image has at address addr, read from the file. */
static int read_at(const vyre__elf *e, uint64_t addr, void *dst, size_t size) {
  uint64_t off;
  if (vyre__elf_addr_range(e, addr, size, &off, NULL) != 0) return -1;
  return e->read(e->ctx, off, dst, size) == (long)size ? 0 : -1;
}

typedef struct vers_tags {
  uint64_t versym, verdef, verneed, strsz;
  int has_versym, has_verdef, has_verneed;
} vers_tags;

/* The version tags of the dynamic section, read as dlopen reads it. */
static int read_tags(const vyre__elf *e, vers_tags *t) {
  memset(t, 0, sizeof *t);
  for (uint32_t i = 0; i < e->phnum; i++) {
    vyre__elf_phdr p;
    if (vyre__elf_phdr_read(e, i, &p, NULL, 0) != 0) return -1;
    if (p.type != PT_DYNAMIC) continue;
    for (uint64_t k = 0; k < p.filesz / sizeof(ElfW(Dyn)); k++) {
      ElfW(Dyn) d;
      if (read_at(e, p.vaddr + k * sizeof d, &d, sizeof d) != 0) return -1;
      if (d.d_tag == DT_NULL) break;
      if (d.d_tag == DT_VERSYM) t->versym = d.d_un.d_val, t->has_versym = 1;
      if (d.d_tag == DT_VERDEF) t->verdef = d.d_un.d_val, t->has_verdef = 1;
      if (d.d_tag == DT_VERNEED) t->verneed = d.d_un.d_val, t->has_verneed = 1;
      if (d.d_tag == DT_STRSZ) t->strsz = d.d_un.d_val;
    }
    return 0;
  }
  return 0;
}

/* Walk the DT_VERDEF chain as glibc does (vd_next until 0): every record
 * and its auxiliaries in the file, names in the string table; *high gets
 * the highest version index. */
static int walk_verdef(const vyre__elf *e, const vers_tags *t, unsigned *high, char *reason,
                       size_t size) {
  uint64_t at = t->verdef;
  for (unsigned n = 0; n < VERS_RECORDS_MAX; n++) {
    ElfW(Verdef) d;
    if (read_at(e, at, &d, sizeof d) != 0)
      return host_elf_fail(reason, size, "corrupt ELF file: a DT_VERDEF record (address 0x%llx) lies "
                           "outside the file contents every PT_LOAD segment maps",
                           (unsigned long long)at);
    if ((unsigned)(d.vd_ndx & 0x7fff) > *high) *high = d.vd_ndx & 0x7fff;
    uint64_t aux = at + d.vd_aux;
    for (unsigned k = 0; k < d.vd_cnt; k++) {
      ElfW(Verdaux) a;
      if (read_at(e, aux, &a, sizeof a) != 0 || a.vda_name >= t->strsz)
        return host_elf_fail(reason, size, "corrupt ELF file: a DT_VERDEF name record (address 0x%llx) "
                             "lies outside the file or names no string",
                             (unsigned long long)aux);
      if (a.vda_next == 0) break;
      aux += a.vda_next;
    }
    if (d.vd_next == 0) return 0;
    at += d.vd_next;
  }
  return host_elf_fail(reason, size, "corrupt ELF file: its DT_VERDEF chain has over %u records",
                       VERS_RECORDS_MAX);
}

/* The same for DT_VERNEED (vn_next, vna_next): file and version names. */
static int walk_verneed(const vyre__elf *e, const vers_tags *t, unsigned *high, char *reason,
                        size_t size) {
  uint64_t at = t->verneed;
  for (unsigned n = 0; n < VERS_RECORDS_MAX; n++) {
    ElfW(Verneed) v;
    if (read_at(e, at, &v, sizeof v) != 0 || v.vn_file >= t->strsz)
      return host_elf_fail(reason, size, "corrupt ELF file: a DT_VERNEED record (address 0x%llx) lies "
                           "outside the file or names no string",
                           (unsigned long long)at);
    uint64_t aux = at + v.vn_aux;
    for (unsigned k = 0; k < VERS_RECORDS_MAX; k++) {
      ElfW(Vernaux) a;
      if (read_at(e, aux, &a, sizeof a) != 0 || a.vna_name >= t->strsz)
        return host_elf_fail(reason, size, "corrupt ELF file: a DT_VERNEED version record (address "
                             "0x%llx) lies outside the file or names no string",
                             (unsigned long long)aux);
      if ((unsigned)(a.vna_other & 0x7fff) > *high) *high = a.vna_other & 0x7fff;
      if (a.vna_next == 0) break;
      aux += a.vna_next;
    }
    if (v.vn_next == 0) return 0;
    at += v.vn_next;
  }
  return host_elf_fail(reason, size, "corrupt ELF file: its DT_VERNEED chain has over %u records",
                       VERS_RECORDS_MAX);
}

/* Every DT_VERSYM entry names a version the file defines or needs (0 and
 * 1 are local and global): glibc indexes its version array with them
 * unchecked. */
static int check_versym(const vyre__elf *e, const vers_tags *t, uint64_t count, unsigned high,
                        char *reason, size_t size) {
  uint16_t chunk[256];
  for (uint64_t i = 0; i < count;) {
    size_t k = count - i < 256 ? (size_t)(count - i) : 256;
    if (read_at(e, t->versym + 2 * i, chunk, 2 * k) != 0)
      return host_elf_fail(reason, size, "corrupt ELF file: DT_VERSYM (%llu entries at address 0x%llx) "
                           "lies outside the file contents every PT_LOAD segment maps",
                           (unsigned long long)count, (unsigned long long)t->versym);
    for (size_t j = 0; j < k; j++, i++)
      if ((unsigned)(chunk[j] & 0x7fff) > high)
        return host_elf_fail(reason, size, "corrupt ELF file: DT_VERSYM gives symbol %llu version %u, "
                             "the file defines and needs versions up to %u",
                             (unsigned long long)i, chunk[j] & 0x7fffu, high);
  }
  return 0;
}

int host_elf_versions_fd(int fd, uint64_t file_size, char *reason, size_t reason_size) {
  vyre__elf e;
  if (vyre__elf_open(&e, vyre__elf_read_fd, &fd, file_size, reason, reason_size) != 0) return -1;
  vers_tags t;
  if (read_tags(&e, &t) != 0)
    return host_elf_fail(reason, reason_size, "corrupt ELF file: its dynamic section cannot be read");
  if (!t.has_versym) return 0;
  vyre__elf_symtab sym;
  if (vyre__elf_dynamic_symtab(&e, &sym, reason, reason_size) < 0) return -1;
  unsigned high = 1;
  if (t.has_verdef && walk_verdef(&e, &t, &high, reason, reason_size) != 0) return -1;
  if (t.has_verneed && walk_verneed(&e, &t, &high, reason, reason_size) != 0) return -1;
  return check_versym(&e, &t, sym.count, high, reason, reason_size);
}
