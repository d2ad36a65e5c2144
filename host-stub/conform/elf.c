/* elf.c -- read a plugin's ELF dynamic symbol table with the one ELF reader (abi/support/elf.h): what it exports and what it imports from a host. */
#include <stdlib.h>
#include <string.h>

#include "conform.h"
#include "abi/support/elf.h"
#include "abi/support/file.h"

/* ELF constants (System V ABI, "Object Files"). */
#define ET_DYN 3
#define SHN_UNDEF 0
#define STB_GLOBAL 1
#define STB_WEAK 2
#define STB_GNU_UNIQUE 10
#define STV_DEFAULT 0
#define STV_PROTECTED 3

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

#define ODR_ASAN "__odr_asan."

/* A named dynamic symbol into the report: a defined global one of
 * default or protected visibility is an export, an undefined vyre_ one
 * an import from the host. */
static void add_symbol(cf_elf_report *out, const vyre__elf_sym *s, const char *nm) {
  unsigned bind = s->info >> 4, vis = s->other & 3u;
  if (bind != STB_GLOBAL && bind != STB_WEAK && bind != STB_GNU_UNIQUE) return;
  if (s->shndx == SHN_UNDEF) {
    if (strncmp(nm, "vyre_", 5) == 0) list_add(out->imports, &out->host_imports, nm);
    return;
  }
  if (vis != STV_DEFAULT && vis != STV_PROTECTED) return;
  /* AddressSanitizer gives every exported global an ODR indicator,
   * "__odr_asan.NAME", that the compiler makes and nothing calls: the
   * descriptor's is part of the descriptor, not an export of its own. */
  if (strncmp(nm, ODR_ASAN, sizeof ODR_ASAN - 1) == 0 &&
      strcmp(nm + sizeof ODR_ASAN - 1, VYRE_PLUGIN_DESCRIPTOR_SYMBOL) == 0)
    return;
  out->exported++;
  if (strcmp(nm, VYRE_PLUGIN_DESCRIPTOR_SYMBOL) == 0) out->has_descriptor = 1;
  else if (strcmp(nm, VYRE_PLUGIN_ENTRY_SYMBOL) == 0) out->has_entry = 1;
  else list_add(out->extra, &out->extra_count, nm);
}

vyre_status cf_elf_exports_mem(const void *data, size_t size, const char *path, cf_elf_report *out,
                               vyre_error *err) {
  memset(out, 0, sizeof *out);
  char why[256];
  vyre__elf e;
  vyre__elf_buffer buf;
  vyre__elf_symtab t;
  if (vyre__elf_open_buffer(&e, &buf, data, size, why, sizeof why) != 0) goto invalid;
  out->machine = e.machine;
  out->is64 = e.is64;
  if (e.type != ET_DYN) {
    snprintf(why, sizeof why, "not a shared object (e_type is not ET_DYN)");
    goto invalid;
  }
  int found = vyre__elf_dynsym(&e, &t, why, sizeof why);
  if (found < 0) goto invalid;
  if (!found) {
    snprintf(why, sizeof why, "%s", e.shoff == 0 || e.shnum == 0
                                        ? "no section header table"
                                        : "no dynamic symbol table (.dynsym)");
    goto invalid;
  }
  for (uint64_t i = 1; i < t.count; i++) { /* symbol 0 is the null symbol */
    vyre__elf_sym s;
    char nm[96]; /* a longer name is cut: it is none of the two, listed cut */
    if (vyre__elf_sym_read(&e, &t, i, &s, why, sizeof why) != 0) goto invalid;
    if (vyre__elf_sym_name(&e, &t, &s, nm, sizeof nm) < 0) {
      snprintf(why, sizeof why, "symbol %llu: its name lies outside .dynstr or is unterminated",
               (unsigned long long)i);
      goto invalid;
    }
    if (nm[0]) add_symbol(out, &s, nm);
  }
  return VYRE_OK;
invalid:
  return vyre_error_set(err, VYRE_INVALID_ARGUMENT, 0,
                        "reading the exports of %s: %s. Fix: pass a vyre plugin (an ELF shared "
                        "object built with libtool -module)",
                        path, why);
}

/* Append " NAME" for each listed name that leaves room for `fix`, " ..."
 * for the rest, then fix: the Fix is never cut off by a long list. */
static void list_then_fix(char *why, size_t why_size, size_t n, const char (*names)[96],
                          uint32_t count, const char *fix) {
  size_t reserve = strlen(fix) + 5;
  for (uint32_t i = 0; i < count && n < why_size; i++) {
    if (i >= CF_ELF_MAX_LISTED || n + 1 + strlen(names[i]) + reserve >= why_size) {
      n += (size_t)snprintf(why + n, why_size - n, " ...");
      break;
    }
    n += (size_t)snprintf(why + n, why_size - n, " %s", names[i]);
  }
  if (n < why_size) snprintf(why + n, why_size - n, "%s", fix);
}

int cf_elf_ok(const cf_elf_report *r, char *why, size_t why_size) {
  why[0] = '\0';
  /* dlopen reports a foreign plugin as "No such file or directory"; say
   * what it is. */
  unsigned char host_class, host_data;
  uint16_t host_machine;
  vyre__elf_host(&host_class, &host_data, &host_machine);
  int host64 = host_class == VYRE__ELF_CLASS64;
  if (host_machine && (r->machine != host_machine || r->is64 != host64)) {
    char a[32], b[32];
    snprintf(why, why_size, "built for %s (%d-bit), but this machine is %s (%d-bit): no host "
             "here can load it. Fix: build the plugin for this machine",
             vyre__elf_machine_str((uint16_t)r->machine, a, sizeof a), r->is64 ? 64 : 32,
             vyre__elf_machine_str(host_machine, b, sizeof b), host64 ? 64 : 32);
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
    list_then_fix(why, why_size, n, r->extra, r->extra_count,
                  ". Fix: link with $(pkg-config --libs vyre-plugin), whose version script "
                  "(share/vyre-cuda/vyre-plugin.map) exports only the two plugin symbols "
                  "(-fvisibility=hidden alone leaves C++ template instantiations exported), or "
                  "use libtool -export-symbols-regex '^vyre_plugin_(descriptor|entry)$'");
    return 0;
  }
  if (r->host_imports) {
    size_t n = (size_t)snprintf(why, why_size, "imports %u vyre_ symbol%s from its host:",
                                r->host_imports, r->host_imports == 1 ? "" : "s");
    list_then_fix(why, why_size, n, r->imports, r->host_imports,
                  ". Fix: link libvyre statically, libvyre.a with the version script, as "
                  "$(pkg-config --libs vyre-plugin) does, not -lvyre (pkg-config vyre): a plugin "
                  "imports nothing from its host, which may not have loaded libvyre");
    return 0;
  }
  return 1;
}
