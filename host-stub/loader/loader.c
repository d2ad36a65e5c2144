/* loader.c -- judge one plugin file from its bytes (descriptor read with pread, no plugin code run), then load it, negotiate the ABI, check its registration. */
#include <dlfcn.h>
#include <pthread.h>
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/stat.h>
#include <elf.h>
#if defined(__GLIBC__)
#include <link.h>
#endif

#include "abi/support/safetext.h"
#include "abi/support/file.h"
#include "elfcheck.h"
#include "internal.h"
#include "vyre/vyre_program.h"
#include "vyre/vyre_support.h"

void host_entry_reason(host_entry *e, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(e->reason, sizeof e->reason, fmt, ap);
  va_end(ap);
  /* `vyre list` prints one line per candidate: dlerror() and plugin
   * messages may carry newlines, file names escape sequences. */
  for (char *p = e->reason; *p; p++)
    if (*p == '\n' || *p == '\r' || *p == '\t') *p = ' ';
  vyre__safe_text(e->reason, sizeof e->reason, e->reason, sizeof e->reason, VYRE__SAFE_LINE);
}

vyre_status host_no_load_error(const char *function, vyre_error *err) {
  return vyre_error_set(err, VYRE_INVALID_ARGUMENT, 0,
                        "%s: the host was opened with VYRE_HOST_NO_LOAD: its candidates were "
                        "judged from their files and none was loaded, so none can create an "
                        "instance. Fix: open the host without VYRE_HOST_NO_LOAD",
                        function);
}

_Thread_local unsigned host_plugin_depth;

vyre_status host_reentry_error(const char *function, vyre_error *err) {
  return vyre_error_set(err, VYRE_INVALID_ARGUMENT, 0,
                        "%s: called from plugin code (a plugin's vyre_plugin_entry or factory, "
                        "which libvyre-host is running on this thread): refused, as it would "
                        "load or create that plugin again without end. Fix: do not open a host "
                        "or create a backend from a plugin's entry or factory; a plugin that "
                        "wraps another backend loads it itself",
                        function);
}

/* This process's ELF class, byte order and machine, found once. */
static host_elf_want elf_want;
static void elf_want_init(void) { host_elf_want_host(&elf_want); }

static void skip(host_entry *e) {
  e->status = VYRE_HOST_SKIPPED;
  host_log("skipped %s: %s", e->path, e->reason);
}

/* Copy at most `max` bytes of a plugin string (dst has max + 1), made
 * safe by the one sanitiser (abi/support/safetext.h): a hostile or broken
 * string cannot break one-line output or drive a terminal. */
static void copy_plugin_string(char *dst, size_t max, const char *src) {
  vyre__safe_text(dst, max + 1, src, max, VYRE__SAFE_LINE);
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
 * The size and type the dynamic linker's symbol table gives the object
 * at `address` (glibc's dladdr1): after dlopen, a second look at the
 * symbol the file check judged.  0 when the platform cannot tell.
 */
static size_t symbol_size(const void *address, int *is_object) {
  *is_object = 1;
  /* glibc's RTLD_DL_SYMENT is an enumerator, not a macro: test glibc. */
#if defined(__GLIBC__)
  Dl_info info;
  const ElfW(Sym) *sym = NULL;
  if (dladdr1(address, &info, (void **)&sym, RTLD_DL_SYMENT) && sym &&
      info.dli_saddr == address) {
    *is_object = ELF64_ST_TYPE(sym->st_info) == STT_OBJECT;
    return (size_t)sym->st_size;
  }
#else
  (void)address;
#endif
  return 0;
}

/* A descriptor of release 0 serving only minor 0 may be the 0.1 draft
 * (its vyre_program_ref layout differs): refused.  Release 0 serving
 * minor 1 or later is a pre-1.0.0 build of this ABI: accepted, noted. */
static int check_release(host_entry *e, const vyre_descriptor *d) {
  e->release = d->release;
  if (d->release != 0) return 0;
  if (d->abi_minor_max == 0) {
    host_entry_reason(e, "pre-1.0.0 build: descriptor release 0 serving only ABI %u.0, which "
                         "may be the 0.1 draft (its vyre_program_ref layout differs). Fix: "
                         "rebuild the plugin against the headers of vyre 1.0.0 or later "
                         "(VYRE_DESCRIPTOR_INIT sets release %u)",
                      d->abi_major, VYRE_DESCRIPTOR_RELEASE);
    return -1;
  }
  snprintf(e->note, sizeof e->note,
           "pre-1.0.0 build (descriptor release 0): rebuild it against vyre 1.0.0 or later");
  return 0;
}

/* Descriptor checks on its `size` bytes as the file holds them (the
 * symbol is at least HOST_DESCRIPTOR_MIN bytes); fills e's descriptor
 * fields.  0 when usable. */
static int check_descriptor(host_entry *e, const unsigned char *bytes, size_t size_in_file) {
  vyre_descriptor d;
  memset(&d, 0, sizeof d);
  memcpy(&d, bytes, HOST_DESCRIPTOR_MIN); /* the symbol has at least these */
  if (d.magic != VYRE_PLUGIN_MAGIC) {
    host_entry_reason(e, "bad plugin descriptor: magic 0x%08x, expected 0x%08x (\"VYPL\"). "
                         "Fix: this is not a vyre plugin, or it is corrupt; rebuild it",
                      d.magic, VYRE_PLUGIN_MAGIC);
    return -1;
  }
  uint32_t size = d.struct_size;
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
  /* The size-prefix rule: min(struct_size, sizeof) bytes, the rest 0. */
  size_t take = size < sizeof d ? size : sizeof d;
  if (take > size_in_file) {
    host_entry_reason(e, "bad plugin descriptor: struct_size %u but the symbol is only %zu bytes. "
                         "Fix: set struct_size = sizeof(vyre_descriptor)",
                      size, size_in_file);
    return -1;
  }
  memcpy(&d, bytes, take);
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
  if (check_release(e, &d) != 0) return -1;
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

/* The descriptor as the file holds it: its first bytes. */
typedef struct file_descriptor {
  unsigned char bytes[sizeof(vyre_descriptor)];
  size_t size; /* min(symbol size, sizeof bytes) */
} file_descriptor;

static const char *symbol_type_words(unsigned type) {
  switch (type) {
  case STT_NOTYPE: return "untyped (STT_NOTYPE)";
  case STT_FUNC: return "a function";
  case STT_SECTION: return "a section";
  case STT_TLS: return "thread-local";
  case STT_GNU_IFUNC: return "an indirect function";
  default: return "not a data object";
  }
}

/* The descriptor symbol in the file (fd): a data object of at least
 * HOST_DESCRIPTOR_MIN bytes in the file contents; its bytes into *out. */
static int read_file_descriptor(host_entry *e, int fd, file_descriptor *out) {
  char why[256];
  host_elf_object o;
  if (host_elf_object_fd(fd, VYRE_PLUGIN_DESCRIPTOR_SYMBOL, out->bytes, sizeof out->bytes, &o,
                         why, sizeof why) != 0) {
    host_entry_reason(e, "not a loadable plugin: %s. Fix: replace it with a complete build, or "
                         "remove it from the search path",
                      why);
    return -1;
  }
  if (!o.found) {
    host_entry_reason(e, "not a vyre plugin: it exports no '%s'. Fix: remove it from the search "
                         "path, or export the descriptor (-export-symbols-regex)",
                      VYRE_PLUGIN_DESCRIPTOR_SYMBOL);
    return -1;
  }
  if (o.type != STT_OBJECT) {
    host_entry_reason(e, "bad plugin descriptor: '%s' is %s, not a data object. Fix: define it "
                         "as `VYRE_PLUGIN_EXPORT const vyre_descriptor %s = VYRE_DESCRIPTOR_INIT(...)`",
                      VYRE_PLUGIN_DESCRIPTOR_SYMBOL, symbol_type_words(o.type),
                      VYRE_PLUGIN_DESCRIPTOR_SYMBOL);
    return -1;
  }
  if (o.size < HOST_DESCRIPTOR_MIN) {
    host_entry_reason(e, "bad plugin descriptor: the symbol '%s' is %llu bytes, the host needs at "
                         "least %zu. Fix: define it as a vyre_descriptor with VYRE_DESCRIPTOR_INIT "
                         "(rebuild against vyre.h)",
                      VYRE_PLUGIN_DESCRIPTOR_SYMBOL, (unsigned long long)o.size,
                      (size_t)HOST_DESCRIPTOR_MIN);
    return -1;
  }
  if (!o.in_file) {
    host_entry_reason(e, "bad plugin descriptor: its %llu bytes at address 0x%llx are not file "
                         "contents a PT_LOAD segment maps (%s). Fix: define it `const` and "
                         "initialised, with VYRE_DESCRIPTOR_INIT",
                      (unsigned long long)o.size, (unsigned long long)o.address,
                      o.shndx >= SHN_LORESERVE ? "an absolute or common symbol"
                                               : "a zero-filled .bss object, or a corrupt file");
    return -1;
  }
  out->size = o.copied;
  return 0;
}

/* The entry symbol in the file: a function. */
static int check_file_entry(host_entry *e, int fd) {
  char why[256];
  host_elf_object o;
  if (host_elf_object_fd(fd, VYRE_PLUGIN_ENTRY_SYMBOL, NULL, 0, &o, why, sizeof why) != 0) {
    host_entry_reason(e, "not a loadable plugin: %s. Fix: replace it with a complete build, or "
                         "remove it from the search path",
                      why);
    return -1;
  }
  if (!o.found || o.type != STT_FUNC) {
    host_entry_reason(e, "incomplete plugin: it exports no '%s'%s%s. Fix: export the entry "
                         "function (-export-symbols-regex '^vyre_plugin_')",
                      VYRE_PLUGIN_ENTRY_SYMBOL, o.found ? " function: the symbol is " : "",
                      o.found ? symbol_type_words(o.type) : "");
    return -1;
  }
  return 0;
}

/*
 * Judge the file without running any of its code: plain reads (pread),
 * never a mapping.  Is it a complete shared object for this machine
 * (dlopen maps the segments the program headers describe, and touching
 * a page past the end of the file raises SIGBUS: a truncated plugin
 * would kill every host)?  Do its dynamic section and tables lie in the
 * file?  Then the descriptor, read from the file where the dynamic
 * linker would find it, is judged, and the entry must be a function.
 * 0 when the plugin is compatible: only then is it dlopened (its
 * constructors run).  *desc receives the descriptor's bytes.
 *
 * The file judged is the one loaded: dlopen opens /proc/self/fd/N of
 * the descriptor judged (load_name), so replacing the file at the path
 * in between changes nothing; where /proc is absent the path is loaded
 * and the descriptor compared again once loaded.  The search path is trusted
 * as far as its owner is: the check guards against accidents, corrupt
 * and incompatible files, not against someone who can write the plugin
 * directory (they could install any code there).
 */
static int judge_file(host_entry *e, int fd, file_descriptor *desc) {
  static pthread_once_t once = PTHREAD_ONCE_INIT;
  pthread_once(&once, elf_want_init);
  char why[256];
  int rc = host_elf_check_fd(fd, &elf_want, why, sizeof why);
  struct stat st;
  if (rc == 0 && fstat(fd, &st) == 0)
    rc = host_elf_versions_fd(fd, (uint64_t)st.st_size, why, sizeof why);
  if (rc != 0)
    host_entry_reason(e, "not a loadable plugin: %s. Fix: replace it with a complete build "
                         "for this machine (an interrupted copy or build leaves a truncated "
                         "file), or remove it from the search path",
                      why);
  if (rc == 0) rc = read_file_descriptor(e, fd, desc);
  if (rc == 0) rc = check_descriptor(e, desc->bytes, desc->size);
  if (rc == 0) rc = check_file_entry(e, fd);
  return rc;
}

/* After dlopen: the descriptor dlsym finds is the object the file holds,
 * unchanged (a relocation or a constructor could have written it, or
 * the file could have been replaced since it was judged). */
static int check_loaded_descriptor(host_entry *e, const void *loaded,
                                   const file_descriptor *desc) {
  int is_object;
  size_t size = symbol_size(loaded, &is_object);
  if (size != 0 && (!is_object || size < desc->size)) {
    host_entry_reason(e, "bad plugin descriptor: the symbol dlsym found (%zu bytes, %s) is not "
                         "the one read from the file. Fix: rebuild the plugin; do not replace "
                         "it while hosts start",
                      size, is_object ? "a data object" : "not a data object");
    return -1;
  }
  if (memcmp(loaded, desc->bytes, desc->size) != 0) {
    host_entry_reason(e, "bad plugin descriptor: descriptor changed by relocation/constructor: "
                         "its loaded bytes differ from the file's. Fix: define it `const` with "
                         "VYRE_DESCRIPTOR_INIT and never write to it (or do not replace the "
                         "file while hosts start)");
    return -1;
  }
  return 0;
}

/* dlopen a judged plugin, check its descriptor again, call its entry
 * and take its registration. */
static void load(host_entry *e, const file_descriptor *desc, const char *name) {
  dlerror();
  host_log("dlopen %s (%s)", name, e->path);
  /* RTLD_LOCAL: two plugins may define the same internal symbols.
   * RTLD_NOW: a missing symbol fails here, not in the middle of a dispatch. */
  e->handle = dlopen(name, RTLD_NOW | RTLD_LOCAL);
  if (!e->handle) {
    const char *why = dlerror();
    /* A plugin that imports libvyre's functions from libvyre.so loads only
     * in a host that has loaded libvyre: name the packaging fix. */
    int imports_vyre = why && strstr(why, "undefined symbol: vyre_") != NULL;
    host_entry_reason(e, "dlopen failed: %s. Fix: %s", why ? why : "unknown error",
                      imports_vyre
                          ? "link libvyre into the plugin statically, as `pkg-config --libs "
                            "vyre-plugin` does (libvyre.a and the version script; docs/abi.md, "
                            "\"Packaging a plugin\")"
                          : "check that the file is a shared library for this machine and that "
                            "its dependencies resolve (ldd)");
    skip(e);
    return;
  }
  dlerror();
  const void *loaded = dlsym(e->handle, VYRE_PLUGIN_DESCRIPTOR_SYMBOL);
  if (!loaded) {
    host_entry_reason(e, "not a vyre plugin: dlsym finds no '%s' (its file has one). Fix: "
                         "rebuild the plugin; do not replace it while hosts start",
                      VYRE_PLUGIN_DESCRIPTOR_SYMBOL);
    skip(e);
    return;
  }
  if (check_loaded_descriptor(e, loaded, desc) != 0) {
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
  host_plugin_depth++;
  vyre_status st = entry.fn(VYRE_ABI_MAJOR, VYRE_HOST_ABI_MINOR, &reg, &perr);
  host_plugin_depth--;
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

/*
 * The libraries this process loaded through /proc/self/fd/N: the dynamic
 * linker knows a library by every name it was opened by, so each name
 * stays bound to its file for good.  Its descriptor N is kept open (the
 * number must not name another file later), and a later host loading
 * the same file (st_dev, st_ino) uses the same name (the linker answers
 * by name, no new descriptor is kept).  Bounded: past HOST_FD_LOADS_MAX
 * files, plugins are loaded by path.
 */
#define HOST_FD_LOADS_MAX 256u
static struct {
  dev_t dev;
  ino_t ino;
  int fd;
} fd_loads[HOST_FD_LOADS_MAX];
static unsigned fd_load_count;
static pthread_mutex_t fd_loads_lock = PTHREAD_MUTEX_INITIALIZER;

/*
 * The name dlopen loads the judged file by (buf or e->path): the kept
 * /proc/self/fd name of this file when there is one; else /proc/self/fd/N
 * of `fd` (the descriptor judged: a file replaced at the path in between
 * changes nothing), *keep_fd = 1 (record_fd_load keeps it once loaded);
 * else (no /proc, the table full, or N is a kept number closed behind the
 * host's back) the path.  *by_fd: fd itself names the file in /proc.
 */
static const char *load_name(const host_entry *e, int fd, const struct stat *st, char *buf,
                             size_t size, int *by_fd, int *keep_fd) {
  struct stat via;
  snprintf(buf, size, "/proc/self/fd/%d", fd);
  *keep_fd = 0;
  *by_fd = stat(buf, &via) == 0 && via.st_dev == st->st_dev && via.st_ino == st->st_ino;
  if (!*by_fd) {
    host_log("%s: /proc/self/fd is not available: loading it by its path (a file replaced "
             "after the check is caught by the descriptor comparison only)",
             e->path);
    return e->path;
  }
  const char *name = buf;
  pthread_mutex_lock(&fd_loads_lock);
  int reused = 0, full = fd_load_count == HOST_FD_LOADS_MAX;
  for (unsigned i = 0; i < fd_load_count; i++) {
    if (fd_loads[i].dev == st->st_dev && fd_loads[i].ino == st->st_ino) {
      snprintf(buf, size, "/proc/self/fd/%d", fd_loads[i].fd);
      pthread_mutex_unlock(&fd_loads_lock);
      return buf; /* loaded before under this name */
    }
    if (fd_loads[i].fd == fd) reused = 1;
  }
  pthread_mutex_unlock(&fd_loads_lock);
  if (reused || full) {
    host_log("%s: %s: loading it by its path", e->path,
             reused ? "its descriptor's number names a library loaded before (its descriptor "
                      "was closed behind the host's back)"
                    : "too many plugin files loaded by descriptor");
    name = e->path;
  } else {
    *keep_fd = 1;
  }
  return name;
}

/* Remember a library loaded through /proc/self/fd/fd (its descriptor stays open). */
static void record_fd_load(int fd, const struct stat *st) {
  pthread_mutex_lock(&fd_loads_lock);
  if (fd_load_count < HOST_FD_LOADS_MAX) {
    fd_loads[fd_load_count].dev = st->st_dev;
    fd_loads[fd_load_count].ino = st->st_ino;
    fd_loads[fd_load_count].fd = fd;
    fd_load_count++;
  }
  pthread_mutex_unlock(&fd_loads_lock);
}

void host_load_entry(host_entry *e, int judge_only, const char *probe_program) {
  host_log("%s %s", judge_only ? "judging" : "loading", e->path);
  file_descriptor desc;
  memset(&desc, 0, sizeof desc);
  int fd;
  vyre_error open_err = VYRE_ERROR_INIT;
  /* The one checked open (abi/support/file.h): a FIFO never blocks, only
   * a regular file is read. */
  if (vyre__file_open(e->path, UINT64_MAX, NULL, &fd, NULL, &open_err) != VYRE_OK) {
    if (open_err.native_code)
      host_entry_reason(e, "cannot open %s: %s. Fix: make it readable, or remove it from the "
                           "search path",
                        e->path, strerror((int)open_err.native_code));
    else /* "it is not a regular file (a FIFO). Fix: pass a regular file" */
      host_entry_reason(e, "%s, or remove it from the search path", open_err.message);
    skip(e);
    return;
  }
  struct stat st;
  if (fstat(fd, &st) != 0 || judge_file(e, fd, &desc) != 0) {
    if (!e->reason[0])
      host_entry_reason(e, "cannot stat %s: %s. Fix: make it readable", e->path, strerror(errno));
    close(fd);
    skip(e);
    return;
  }
  if (judge_only) {
    close(fd);
    e->status = VYRE_HOST_LISTED;
    host_log("listed %s (ABI %u.%u, not loaded)", e->path, e->abi_major, e->abi_minor);
    return;
  }
  char buf[64];
  int by_fd, keep_fd;
  const char *name = load_name(e, fd, &st, buf, sizeof buf, &by_fd, &keep_fd);
  char why[VYRE_HOST_REASON_MAX];
  if (probe_program &&
      host_probe_file(probe_program, e->path, fd, &st, by_fd, why, sizeof why) != 0) {
    host_entry_reason(e, "%s: never loaded in this process. Fix: fix or remove the plugin (a "
                         "rebuilt file is judged again), or open the host with VYRE_PROBE=0 to "
                         "load it unjudged",
                      why);
    close(fd);
    skip(e);
    return;
  }
  load(e, &desc, name);
  if (!e->handle && name != e->path) {
    /* A plugin whose RUNPATH says $ORIGIN finds its dependencies next to
     * its path, not in /proc/self/fd: loaded by the path instead. */
    host_log("%s: dlopen of %s failed (%s): trying its path", e->path, name, e->reason);
    keep_fd = 0;
    load(e, &desc, e->path);
  }
  /* A name the linker bound stays bound: its number is never given back. */
  if (keep_fd && e->handle) record_fd_load(fd, &st);
  else close(fd);
}
