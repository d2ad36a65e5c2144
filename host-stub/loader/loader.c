/* loader.c -- open one plugin file, check its descriptor before running it, negotiate the ABI, check its registration. */
#include <dlfcn.h>
#include <pthread.h>
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#if defined(__GLIBC__)
#include <link.h>
#endif

#include "elfcheck.h"
#include "internal.h"
#include "vyre/vyre_program.h"

void host_entry_reason(host_entry *e, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(e->reason, sizeof e->reason, fmt, ap);
  va_end(ap);
  /* `vyre list` prints one line per candidate: dlerror() and plugin
   * messages may carry newlines. */
  for (char *p = e->reason; *p; p++)
    if (*p == '\n' || *p == '\r' || *p == '\t') *p = ' ';
}

/* This process's ELF class, byte order and machine, found once. */
static host_elf_want elf_want;
static void elf_want_init(void) { host_elf_want_host(&elf_want); }

static void skip(host_entry *e) {
  e->status = VYRE_HOST_SKIPPED;
  host_log("skipped %s: %s", e->path, e->reason);
}

/* Copy at most `max` bytes of a plugin string, replacing control bytes so
 * that a hostile or broken string cannot break one-line output. */
static void copy_plugin_string(char *dst, size_t max, const char *src) {
  size_t n = src ? strnlen(src, max) : 0;
  for (size_t i = 0; i < n; i++) {
    unsigned char c = (unsigned char)src[i];
    dst[i] = (c < 0x20 || c == 0x7f) ? '?' : (char)c;
  }
  dst[n] = '\0';
}

/* [a-z0-9_-]{1,31}, read without going past byte 32. */
static int id_is_valid(const char *id) {
  size_t n = strnlen(id, HOST_ID_MAX + 1);
  if (n == 0 || n > HOST_ID_MAX) return 0;
  for (size_t i = 0; i < n; i++) {
    char c = id[i];
    if (!((c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '_' || c == '-')) return 0;
  }
  return 1;
}

/*
 * The size the dynamic symbol table gives the descriptor, so that a
 * descriptor claiming more bytes than the object has is caught before it
 * is read.  0 when the platform cannot tell.
 */
static size_t symbol_size(const void *address, int *is_object) {
  *is_object = 1;
#if defined(__GLIBC__) && defined(RTLD_DL_SYMENT)
  Dl_info info;
  const ElfW(Sym) *sym = NULL;
  if (dladdr1(address, &info, (void **)&sym, RTLD_DL_SYMENT) && sym &&
      info.dli_saddr == address) {
    int type = ELF64_ST_TYPE(sym->st_info);
    *is_object = type == STT_OBJECT || type == STT_NOTYPE;
    return (size_t)sym->st_size;
  }
#else
  (void)address;
#endif
  return 0;
}

/* Descriptor checks; fills e's descriptor fields.  0 when usable. */
static int check_descriptor(host_entry *e, const void *symbol) {
  int is_object;
  size_t sym_size = symbol_size(symbol, &is_object);
  if (!is_object) {
    host_entry_reason(e, "bad plugin descriptor: '%s' is not a data object. Fix: define it as "
                         "`VYRE_PLUGIN_EXPORT const vyre_descriptor " VYRE_PLUGIN_DESCRIPTOR_SYMBOL " = VYRE_DESCRIPTOR_INIT(...)`",
                      VYRE_PLUGIN_DESCRIPTOR_SYMBOL);
    return -1;
  }
  if (sym_size != 0 && sym_size < 8) {
    host_entry_reason(e, "bad plugin descriptor: the symbol is %zu bytes, the header alone is 8. "
                         "Fix: rebuild the plugin against vyre.h",
                      sym_size);
    return -1;
  }
  uint32_t size;
  memcpy(&size, symbol, sizeof size);
  if (size < 8) {
    host_entry_reason(e, "bad plugin descriptor: struct_size %u is smaller than its own header "
                         "(8 bytes). Fix: set struct_size = sizeof(vyre_descriptor)",
                      size);
    return -1;
  }
  vyre_descriptor d;
  memset(&d, 0, sizeof d);
  size_t take = size < sizeof d ? size : sizeof d;
  if (sym_size != 0 && sym_size < take) {
    host_entry_reason(e, "bad plugin descriptor: struct_size %u but the symbol is only %zu bytes. "
                         "Fix: set struct_size = sizeof(vyre_descriptor)",
                      size, sym_size);
    return -1;
  }
  memcpy(&d, symbol, take);
  if (d.magic != VYRE_PLUGIN_MAGIC) {
    host_entry_reason(e, "bad plugin descriptor: magic 0x%08x, expected 0x%08x (\"VYPL\"). "
                         "Fix: this is not a vyre plugin, or it is corrupt; rebuild it",
                      d.magic, VYRE_PLUGIN_MAGIC);
    return -1;
  }
  if (size < HOST_DESCRIPTOR_MIN) {
    host_entry_reason(e, "bad plugin descriptor: struct_size %u, the host needs at least %zu. "
                         "Fix: rebuild the plugin against vyre.h (set struct_size = "
                         "sizeof(vyre_descriptor))",
                      size, (size_t)HOST_DESCRIPTOR_MIN);
    return -1;
  }
  if (size > HOST_STRUCT_MAX) {
    host_entry_reason(e, "bad plugin descriptor: struct_size %u is implausible (max %u). "
                         "Fix: set struct_size = sizeof(vyre_descriptor)",
                      size, HOST_STRUCT_MAX);
    return -1;
  }
  if (take >= offsetof(vyre_descriptor, build_id) + sizeof d.build_id)
    copy_plugin_string(e->build_id, sizeof e->build_id - 1, d.build_id);
  e->minor_min = d.abi_minor_min;
  e->minor_max = d.abi_minor_max;
  e->vtable_size = d.vtable_size;
  if (d.abi_major != VYRE_ABI_MAJOR) {
    host_entry_reason(e, "ABI mismatch: the plugin speaks vyre ABI %u.x, this host %u.x. "
                         "Fix: rebuild the plugin against vyre.h of ABI %u (or use a host of ABI %u)",
                      d.abi_major, VYRE_ABI_MAJOR, VYRE_ABI_MAJOR, d.abi_major);
    return -1;
  }
  uint16_t minor;
  if (d.abi_minor_min > d.abi_minor_max) {
    host_entry_reason(e, "bad plugin descriptor: minor range [%u, %u] is empty. "
                         "Fix: set abi_minor_min <= abi_minor_max",
                      d.abi_minor_min, d.abi_minor_max);
    return -1;
  }
  if (vyre_host_negotiate_minor(VYRE_HOST_ABI_MINOR, d.abi_minor_min, d.abi_minor_max, &minor) !=
      VYRE_OK) {
    host_entry_reason(e, "ABI mismatch: the plugin serves ABI %u.%u to %u.%u, this host speaks "
                         "%u.%u. Fix: use a plugin that still serves minor %u, or a newer host",
                      d.abi_major, d.abi_minor_min, d.abi_major, d.abi_minor_max, VYRE_ABI_MAJOR,
                      VYRE_HOST_ABI_MINOR, VYRE_HOST_ABI_MINOR);
    return -1;
  }
  e->abi_major = d.abi_major;
  e->abi_minor = minor;
  if (d.registration_size < HOST_REGISTRATION_MIN || d.registration_size > HOST_STRUCT_MAX) {
    host_entry_reason(e, "bad plugin descriptor: registration_size %u, the host needs %zu to %u. "
                         "Fix: set registration_size = sizeof(vyre_registration)",
                      d.registration_size, (size_t)HOST_REGISTRATION_MIN, HOST_STRUCT_MAX);
    return -1;
  }
  if (d.vtable_size < HOST_VTABLE_MIN || d.vtable_size > HOST_STRUCT_MAX) {
    host_entry_reason(e, "bad plugin descriptor: vtable_size %u, the host needs %zu to %u. "
                         "Fix: set vtable_size = sizeof(vyre_backend_vtable)",
                      d.vtable_size, (size_t)HOST_VTABLE_MIN, HOST_STRUCT_MAX);
    return -1;
  }
  return 0;
}

/*
 * Copy the op list (and its 1.1 type masks) into e.  An op id this host
 * does not know belongs to a newer plugin: it is left out and counted
 * (e->unknown_op_count, shown by `vyre list`), never fatal; a duplicate
 * or an array the count cannot describe is a broken registration.
 */
/* Op ids are uint16_t: this many values; a list holds fewer. */
#define HOST_OP_IDS 65536u

static int take_ops(host_entry *e, const vyre_registration *r) {
  if (r->op_count >= HOST_OP_IDS || (r->op_count && !r->ops)) {
    host_entry_reason(e, "bad registration of '%s': %u ops at %p. Fix: list each supported op id "
                         "once (at most %u)",
                      e->id, r->op_count, (const void *)r->ops, HOST_OP_IDS - 1u);
    return -1;
  }
  uint64_t seen[HOST_OP_IDS / 64]; /* one bit per possible op id */
  memset(seen, 0, sizeof seen);
  uint32_t known = 0;
  for (uint32_t i = 0; i < r->op_count; i++) {
    uint16_t op = r->ops[i];
    if (seen[op / 64] >> (op % 64) & 1u) {
      host_entry_reason(e, "bad registration of '%s': op %u listed twice. Fix: list each op once",
                        e->id, op);
      return -1;
    }
    seen[op / 64] |= 1ull << (op % 64);
    if (vyre_op_lookup(op)) known++;
  }
  e->unknown_op_count = r->op_count - known;
  if (known) {
    e->ops = malloc(known * sizeof *e->ops);
    e->op_types = malloc(known * sizeof *e->op_types);
    if (!e->ops || !e->op_types) {
      host_entry_reason(e, "loading '%s': out of memory copying %u op ids. Fix: free memory",
                        e->id, known);
      return -1;
    }
  }
  uint32_t n = 0;
  for (uint32_t i = 0; i < r->op_count; i++) {
    const vyre_op_info *info = vyre_op_lookup(r->ops[i]);
    if (!info) continue;
    uint32_t mask = r->op_types ? r->op_types[i] : 0;
    /* 0 = every type the op allows; bits the op cannot have are dropped,
     * and an op claimed only at types it cannot have is not claimed.  Ops
     * without a type (statements) keep 0. */
    uint32_t types = mask ? (mask & info->type_mask) : info->type_mask;
    if (mask && info->type_mask && !types) continue;
    e->ops[n] = r->ops[i];
    e->op_types[n] = types;
    n++;
  }
  e->op_count = n;
  return 0;
}

/* Registration checks and copy into e.  0 when usable. */
static int take_registration(host_entry *e, const vyre_registration *reg) {
  vyre_registration r;
  memset(&r, 0, sizeof r);
  uint32_t size;
  memcpy(&size, reg, sizeof size);
  if (size < HOST_REGISTRATION_MIN || size > HOST_STRUCT_MAX) {
    host_entry_reason(e, "bad registration: struct_size %u, the host needs %zu to %u. "
                         "Fix: set struct_size = sizeof(vyre_registration) in the plugin",
                      size, (size_t)HOST_REGISTRATION_MIN, HOST_STRUCT_MAX);
    return -1;
  }
  memcpy(&r, reg, size < sizeof r ? size : sizeof r);
  e->registration_size = size;
  if (!r.id || !id_is_valid(r.id)) {
    char shown[HOST_ID_MAX + 1];
    copy_plugin_string(shown, HOST_ID_MAX, r.id);
    int longer = r.id && strnlen(r.id, HOST_ID_MAX + 1) > HOST_ID_MAX;
    host_entry_reason(e, "bad registration: id %s%s%s%s is not 1 to 31 of [a-z0-9_-]. "
                         "Fix: give the plugin an id such as \"cuda\"",
                      r.id ? "'" : "", r.id ? shown : "NULL", longer ? "..." : "",
                      r.id ? "'" : "");
    return -1;
  }
  /* The id is known from here on, so a forced id can name this reason. */
  copy_plugin_string(e->id, HOST_ID_MAX, r.id);
  /* The registration's minor says which layout it has; the negotiated
   * minor is the host's to record (e->abi_minor), never the plugin's. */
  if (r.abi_major != VYRE_ABI_MAJOR) {
    host_entry_reason(e, "bad registration: it says ABI %u.%u, the descriptor %u.x. "
                         "Fix: set abi_major = VYRE_ABI_MAJOR in the registration",
                      r.abi_major, r.abi_minor, VYRE_ABI_MAJOR);
    return -1;
  }
  e->registration_minor = r.abi_minor;
  if (!r.create) {
    host_entry_reason(e, "bad registration of '%s': create is NULL. Fix: set the factory", r.id);
    return -1;
  }
  if (r.op_count > VYRE_OP_ID_LIMIT || (r.op_count && !r.ops)) {
    host_entry_reason(e, "bad registration of '%s': %u ops at %p. Fix: list each supported op id "
                         "once (at most %u)",
                      r.id, r.op_count, (const void *)r.ops, (unsigned)VYRE_OP_ID_LIMIT);
    return -1;
  }
  /* The 1.1 fields, read only when both sides speak 1.1 and the struct
   * has them (the memset above zeroed them otherwise). */
  if (e->abi_minor < 1 || size < offsetof(vyre_registration, extensions) + sizeof(void *))
    r.extensions = NULL;
  if (e->abi_minor < 1 || size < offsetof(vyre_registration, op_types) + sizeof(void *))
    r.op_types = NULL;
  if (take_ops(e, &r) != 0) return -1;
  copy_plugin_string(e->version, HOST_VERSION_MAX, r.version);
  copy_plugin_string(e->description, HOST_DESCRIPTION_MAX, r.description);
  e->precedence = r.precedence;
  /* Bits this host has no name for are a newer plugin's: not offered
   * (the host could not honour them), but kept for `vyre list`. */
  e->capabilities = r.capabilities & VYRE_HOST_KNOWN_CAPS;
  /* A 1.0-layout registration could not say int64 or out_range (1.1 added
   * the bits): it offers them, as every 1.0 plugin had to. */
  if (size < offsetof(vyre_registration, op_types) + sizeof(void *))
    e->capabilities |= VYRE_CAP_INT64 | VYRE_CAP_OUT_RANGE;
  e->unknown_capabilities = r.capabilities & ~VYRE_HOST_KNOWN_CAPS;
  copy_plugin_string(e->extensions, sizeof e->extensions - 1, r.extensions);
  e->storage_types = r.storage_types;
  e->create = r.create;
  return 0;
}

/*
 * Before dlopen: is the file a complete shared object for this machine?
 * dlopen maps the segments a file's program headers describe, and
 * touching a page past the end of the file raises SIGBUS: a truncated
 * plugin (an interrupted copy) anywhere on the search path would kill
 * every host.  The check reads (pread) the ELF header and the program
 * headers; it never maps the file.  0 when dlopen may be tried.
 *
 * The file can change between this check and dlopen (TOCTOU).  The
 * search path is trusted as far as its owner is: the check guards
 * against accidents and corrupt files, not against someone who can
 * write the plugin directory (they could install any code there).
 */
static int check_file(host_entry *e) {
  static pthread_once_t once = PTHREAD_ONCE_INIT;
  pthread_once(&once, elf_want_init);
  char why[256];
  int fd = open(e->path, O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY);
  if (fd < 0) {
    host_entry_reason(e, "cannot open %s: %s. Fix: make it readable, or remove it from the "
                         "search path",
                      e->path, strerror(errno));
    return -1;
  }
  int rc = host_elf_check_fd(fd, &elf_want, why, sizeof why);
  close(fd);
  if (rc != 0)
    host_entry_reason(e, "not a loadable plugin: %s. Fix: replace it with a complete build "
                         "for this machine (an interrupted copy or build leaves a truncated "
                         "file), or remove it from the search path",
                      why);
  return rc;
}

void host_load_entry(host_entry *e) {
  host_log("loading %s", e->path);
  if (check_file(e) != 0) {
    skip(e);
    return;
  }
  dlerror();
  /* RTLD_LOCAL: two plugins may define the same internal symbols.
   * RTLD_NOW: a missing symbol fails here, not in the middle of a dispatch. */
  e->handle = dlopen(e->path, RTLD_NOW | RTLD_LOCAL);
  if (!e->handle) {
    const char *why = dlerror();
    host_entry_reason(e, "dlopen failed: %s. Fix: check that the file is a shared library for "
                         "this machine and that its dependencies resolve (ldd)",
                      why ? why : "unknown error");
    skip(e);
    return;
  }
  dlerror();
  const void *desc = dlsym(e->handle, VYRE_PLUGIN_DESCRIPTOR_SYMBOL);
  if (!desc) {
    host_entry_reason(e, "not a vyre plugin: it exports no '%s'. Fix: remove it from the search "
                         "path, or export the descriptor (-export-symbols-regex)",
                      VYRE_PLUGIN_DESCRIPTOR_SYMBOL);
    skip(e);
    return;
  }
  if (check_descriptor(e, desc) != 0) {
    skip(e);
    return;
  }
  /* A data pointer and a function pointer are converted through the
   * union POSIX dlsym callers rely on. */
  union {
    void *data;
    vyre_plugin_entry_fn fn;
  } entry;
  dlerror();
  entry.data = dlsym(e->handle, VYRE_PLUGIN_ENTRY_SYMBOL);
  if (!entry.data) {
    host_entry_reason(e, "incomplete plugin: it exports no '%s'. Fix: export the entry function "
                         "(-export-symbols-regex '^vyre_plugin_')",
                      VYRE_PLUGIN_ENTRY_SYMBOL);
    skip(e);
    return;
  }
  vyre_error perr = VYRE_ERROR_INIT;
  const vyre_registration *reg = NULL;
  vyre_status st = entry.fn(VYRE_ABI_MAJOR, VYRE_HOST_ABI_MINOR, &reg, &perr);
  perr.message[sizeof perr.message - 1] = '\0';
  if (st != VYRE_OK) {
    host_entry_reason(e, "vyre_plugin_entry refused ABI %u.%u: %s: %s", VYRE_ABI_MAJOR,
                      VYRE_HOST_ABI_MINOR, vyre_status_name(st),
                      perr.message[0] ? perr.message : "(no message)");
    skip(e);
    return;
  }
  if (!reg) {
    host_entry_reason(e, "vyre_plugin_entry returned VYRE_OK but no registration. "
                         "Fix: store the registration in *out");
    skip(e);
    return;
  }
  if (take_registration(e, reg) != 0) {
    skip(e);
    return;
  }
  e->status = VYRE_HOST_LOADED;
  host_log("loaded '%s' %s (ABI %u.%u, precedence %d) from %s", e->id, e->version, e->abi_major,
           e->abi_minor, e->precedence, e->path);
}
