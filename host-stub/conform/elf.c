/* elf.c -- read a plugin's ELF dynamic symbol table (no external tools): what it exports and what it imports from a host. */
#include <stdlib.h>
#include <string.h>

#include "conform.h"
#include "abi/support/file.h"

/* ELF constants (System V ABI, "Object Files"). */
#define EI_CLASS 4
#define EI_DATA 5
#define ELFCLASS32 1
#define ELFCLASS64 2
#define ELFDATA2LSB 1
#define ELFDATA2MSB 2
#define ET_DYN 3
#define SHT_DYNSYM 11
#define SHN_UNDEF 0
#define STB_GLOBAL 1
#define STB_WEAK 2
#define STB_GNU_UNIQUE 10
#define STV_DEFAULT 0
#define STV_PROTECTED 3

/* e_machine values (System V ABI; glibc <elf.h>) and this machine's. */
static const struct {
  uint32_t em;
  const char *name;
} machines[] = {{3, "i386"},     {8, "mips"},    {20, "ppc"},    {21, "ppc64"},
                {22, "s390x"},   {40, "arm"},    {62, "x86_64"}, {183, "aarch64"},
                {243, "riscv"},  {258, "loongarch"}};
#if defined(__x86_64__)
#define HOST_EM 62
#elif defined(__aarch64__)
#define HOST_EM 183
#elif defined(__i386__)
#define HOST_EM 3
#elif defined(__powerpc64__)
#define HOST_EM 21
#elif defined(__s390x__)
#define HOST_EM 22
#elif defined(__arm__)
#define HOST_EM 40
#elif defined(__riscv)
#define HOST_EM 243
#else
#define HOST_EM 0 /* unknown: not checked */
#endif

static const char *machine_name(uint32_t em, char *buf, size_t size) {
  for (size_t i = 0; i < sizeof machines / sizeof machines[0]; i++)
    if (machines[i].em == em) return machines[i].name;
  snprintf(buf, size, "machine %u", em);
  return buf;
}

typedef struct elf {
  const uint8_t *d;
  size_t size;
  int is64, big;
} elf;

/* Bounds-checked readers: out-of-range reads set *bad and yield 0. */
static uint64_t rd(const elf *e, uint64_t off, uint32_t n, int *bad) {
  if (off > e->size || n > e->size - off) {
    *bad = 1;
    return 0;
  }
  uint64_t v = 0;
  for (uint32_t i = 0; i < n; i++) {
    uint32_t k = e->big ? i : n - 1 - i;
    v = (v << 8) | e->d[off + k];
  }
  return v;
}

static void list_add(char list[][96], uint32_t *count, const char *name) {
  if (*count < CF_ELF_MAX_LISTED) snprintf(list[*count], 96, "%s", name);
  (*count)++;
}

vyre_status cf_elf_exports(const char *path, cf_elf_report *out, vyre_error *err) {
  memset(out, 0, sizeof *out);
  void *data = NULL;
  size_t size = 0;
  vyre_status st = vyre__file_read(path, CF_MAX_PLUGIN_BYTES, CF_TOO_BIG_FIX, &data, &size, err);
  if (st != VYRE_OK) return st;
  st = cf_elf_exports_mem(data, size, path, out, err);
  free(data);
  return st;
}

vyre_status cf_elf_exports_mem(const void *data, size_t size, const char *path, cf_elf_report *out,
                               vyre_error *err) {
  memset(out, 0, sizeof *out);
  elf e = {data, size, 0, 0};
  int bad = 0;
  const char *why = NULL;
  if (size < 52 || memcmp(data, "\177ELF", 4) != 0) {
    why = "not an ELF file";
    goto invalid;
  }
  e.is64 = e.d[EI_CLASS] == ELFCLASS64;
  e.big = e.d[EI_DATA] == ELFDATA2MSB;
  if ((e.d[EI_CLASS] != ELFCLASS32 && !e.is64) ||
      (e.d[EI_DATA] != ELFDATA2LSB && e.d[EI_DATA] != ELFDATA2MSB)) {
    why = "unknown ELF class or byte order";
    goto invalid;
  }
  out->machine = (uint32_t)rd(&e, 18, 2, &bad);
  out->is64 = e.is64;
  if (rd(&e, 16, 2, &bad) != ET_DYN) {
    why = "not a shared object (e_type is not ET_DYN)";
    goto invalid;
  }
  uint64_t shoff = e.is64 ? rd(&e, 0x28, 8, &bad) : rd(&e, 0x20, 4, &bad);
  uint64_t shentsize = rd(&e, e.is64 ? 0x3a : 0x2e, 2, &bad);
  uint64_t shnum = rd(&e, e.is64 ? 0x3c : 0x30, 2, &bad);
  if (bad || shoff == 0 || shnum == 0 || shentsize < (e.is64 ? 64u : 40u)) {
    why = "no section header table";
    goto invalid;
  }
  /* Find .dynsym by type; its sh_link names the string table. */
  uint64_t sym_off = 0, sym_size = 0, sym_ent = 0, str_off = 0, str_size = 0;
  int found = 0;
  for (uint64_t i = 0; i < shnum && !bad; i++) {
    uint64_t sh = shoff + i * shentsize;
    if (rd(&e, sh + 4, 4, &bad) != SHT_DYNSYM) continue;
    uint64_t link = rd(&e, sh + (e.is64 ? 0x28 : 0x18), 4, &bad);
    sym_off = e.is64 ? rd(&e, sh + 0x18, 8, &bad) : rd(&e, sh + 0x10, 4, &bad);
    sym_size = e.is64 ? rd(&e, sh + 0x20, 8, &bad) : rd(&e, sh + 0x14, 4, &bad);
    sym_ent = e.is64 ? rd(&e, sh + 0x38, 8, &bad) : rd(&e, sh + 0x24, 4, &bad);
    if (link >= shnum) {
      bad = 1;
      break;
    }
    uint64_t ls = shoff + link * shentsize;
    str_off = e.is64 ? rd(&e, ls + 0x18, 8, &bad) : rd(&e, ls + 0x10, 4, &bad);
    str_size = e.is64 ? rd(&e, ls + 0x20, 8, &bad) : rd(&e, ls + 0x14, 4, &bad);
    found = 1;
    break;
  }
  if (bad) {
    why = "truncated or corrupt section headers";
    goto invalid;
  }
  if (!found) {
    why = "no dynamic symbol table (.dynsym)";
    goto invalid;
  }
  if (sym_ent < (e.is64 ? 24u : 16u) || str_off > size || str_size > size - str_off ||
      sym_off > size || sym_size > size - sym_off) {
    why = "corrupt .dynsym or .dynstr";
    goto invalid;
  }
  for (uint64_t s = 1; s < sym_size / sym_ent; s++) {
    uint64_t so = sym_off + s * sym_ent;
    uint64_t name = rd(&e, so, 4, &bad);
    uint64_t info = rd(&e, so + (e.is64 ? 4 : 12), 1, &bad);
    uint64_t other = rd(&e, so + (e.is64 ? 5 : 13), 1, &bad);
    uint64_t shndx = rd(&e, so + (e.is64 ? 6 : 14), 2, &bad);
    if (bad || name >= str_size) {
      why = "a symbol outside its tables";
      goto invalid;
    }
    const char *nm = (const char *)e.d + str_off + name;
    size_t maxlen = str_size - name;
    if (strnlen(nm, maxlen) == maxlen) {
      why = "an unterminated symbol name";
      goto invalid;
    }
    if (!*nm) continue;
    uint32_t bind = (uint32_t)(info >> 4), vis = (uint32_t)(other & 3);
    int global = bind == STB_GLOBAL || bind == STB_WEAK || bind == STB_GNU_UNIQUE;
    if (!global) continue;
    if (shndx == SHN_UNDEF) {
      if (strncmp(nm, "vyre_", 5) == 0) list_add(out->imports, &out->host_imports, nm);
      continue;
    }
    if (vis != STV_DEFAULT && vis != STV_PROTECTED) continue;
    out->exported++;
    if (strcmp(nm, VYRE_PLUGIN_DESCRIPTOR_SYMBOL) == 0) out->has_descriptor = 1;
    else if (strcmp(nm, VYRE_PLUGIN_ENTRY_SYMBOL) == 0) out->has_entry = 1;
    else list_add(out->extra, &out->extra_count, nm);
  }
  return VYRE_OK;
invalid:
  return vyre_error_set(err, VYRE_INVALID_ARGUMENT, 0,
                        "reading the exports of %s: %s. Fix: pass a vyre plugin (an ELF shared "
                        "object built with libtool -module)",
                        path, why);
}

int cf_elf_ok(const cf_elf_report *r, char *why, size_t why_size) {
  why[0] = '\0';
  /* dlopen reports a foreign plugin as "No such file or directory"; say
   * what it is. */
  if (HOST_EM && (r->machine != HOST_EM || r->is64 != (sizeof(void *) == 8))) {
    char a[32], b[32];
    snprintf(why, why_size, "built for %s (%d-bit), but this machine is %s (%d-bit): no host "
             "here can load it. Fix: build the plugin for this machine",
             machine_name(r->machine, a, sizeof a), r->is64 ? 64 : 32,
             machine_name(HOST_EM, b, sizeof b), sizeof(void *) == 8 ? 64 : 32);
    return 0;
  }
  if (!r->has_descriptor || !r->has_entry) {
    snprintf(why, why_size, "does not export %s%s%s. Fix: export both with default visibility",
             r->has_descriptor ? "" : VYRE_PLUGIN_DESCRIPTOR_SYMBOL,
             !r->has_descriptor && !r->has_entry ? " and " : "",
             r->has_entry ? "" : VYRE_PLUGIN_ENTRY_SYMBOL);
    return 0;
  }
  if (r->extra_count) {
    size_t n = (size_t)snprintf(why, why_size, "exports %u symbol%s besides the descriptor and "
                                "the entry:", r->extra_count, r->extra_count == 1 ? "" : "s");
    for (uint32_t i = 0; i < r->extra_count && i < CF_ELF_MAX_LISTED && n < why_size; i++)
      n += (size_t)snprintf(why + n, why_size - n, " %s", r->extra[i]);
    if (n < why_size)
      snprintf(why + n, why_size - n, ". Fix: build with -fvisibility=hidden and libtool "
               "-export-symbols-regex '^vyre_plugin_(descriptor|entry)$'");
    return 0;
  }
  if (r->host_imports) {
    size_t n = (size_t)snprintf(why, why_size, "imports %u vyre_ symbol%s from its host:",
                                r->host_imports, r->host_imports == 1 ? "" : "s");
    for (uint32_t i = 0; i < r->host_imports && i < CF_ELF_MAX_LISTED && n < why_size; i++)
      n += (size_t)snprintf(why + n, why_size - n, " %s", r->imports[i]);
    if (n < why_size)
      snprintf(why + n, why_size - n, ". Fix: link the format library into the plugin; a "
               "plugin imports nothing from the host");
    return 0;
  }
  return 1;
}
