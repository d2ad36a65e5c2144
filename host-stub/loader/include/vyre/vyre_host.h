/* vyre_host.h -- libvyre-host: find backend plugins, negotiate their ABI, pick one, create instances (share/doc/vyre/host.md). */
#ifndef VYRE_VYRE_HOST_H
#define VYRE_VYRE_HOST_H

/*
 * DISCOVERY (share/doc/vyre/host.md has the full rules)
 *   Candidates are considered in this order; the first plugin found with a
 *   given id wins and later ones are skipped as duplicates:
 *     1. options->search_path, then $VYRE_BACKEND_PATH: colon-separated
 *        entries; a file named there is a candidate whatever its name, a
 *        directory contributes only its files named libvyre-*.so (regular
 *        files, byte-wise sorted order); no other file in it is opened.
 *     2. The build tree, when the host library runs from one (it is loaded
 *        from <top>/host-stub/loader/.libs/) or $VYRE_BUILD_DIR names one: the
 *        plugins `make` builds there (host-stub/ref/.libs/libvyre-ref.so,
 *        plugin/runtime/.libs/libvyre-cuda.so).
 *     3. The installed plugin directory (${libdir}/vyre/backends).
 *   Each candidate is judged from its file first, with plain reads: the
 *   ELF headers and dynamic section, and the descriptor where the dynamic
 *   linker would find it (a data object of the right size); only a
 *   compatible plugin is dlopen'ed (RTLD_NOW | RTLD_LOCAL), so no code of
 *   an incompatible one ever runs (VYRE_HOST_NO_LOAD stops there).  Once
 *   loaded, its descriptor must still equal the file's; then
 *   vyre_plugin_entry is called with the host's version and returns the
 *   registration, which is checked too.  The host records the negotiated minor itself
 *   (min(host minor, descriptor's abi_minor_max)) and passes it to the
 *   factory in vyre_backend_options.abi_minor.  Op ids and capability
 *   bits the host does not know are left out and counted
 *   (vyre_host_candidate.unknown_*), never a reason to skip.  A candidate that fails any step is kept in the list as
 *   SKIPPED with a one-line reason; the others keep working.  Plugins are
 *   never dlclose'd.
 *
 * SELECTION
 *   An explicit id (vyre_host_create's `id`, else options->backend, else
 *   $VYRE_BACKEND) forces that backend: it is an error when it is absent,
 *   was skipped or its factory fails, and the error names the reason.
 *   Otherwise the loaded backends are tried by ascending precedence (ties:
 *   search order) and the first whose factory succeeds is used.
 *   vyre_host_create_for (libvyre-host 1.2) also looks at the program:
 *   it passes over backends that lack what the program needs.
 *
 * OWNERSHIP
 *   - A vyre_host is created by vyre_host_open and released by
 *     vyre_host_close.  Strings and arrays that vyre_host_backend_info
 *     points to are owned by the host and valid until vyre_host_close.
 *   - A vyre_backend made by vyre_host_create is owned by the caller and
 *     released with backend->vt->destroy(backend).  It stays valid after
 *     vyre_host_close (its plugin is never unloaded).
 *   - vyre_error is caller-owned storage (see vyre.h).
 *
 * THREADING
 *   Every function may be called from any thread, concurrently on one
 *   host, except vyre_host_close, which must not race other calls on the
 *   same host.  Plugin factories may run concurrently (vyre.h makes
 *   registrations immutable and backends free-threaded).
 *
 * ERRORS
 *   Functions return vyre_status and fill *err (may be NULL) with a
 *   message "what failed: why. Fix: how".  Nothing aborts or exits.
 */

#include <stddef.h>
#include <stdint.h>

#include "vyre/vyre.h"

#ifdef __cplusplus
extern "C" {
#endif

#if defined(__GNUC__)
#define VYRE_HOST_API __attribute__((visibility("default")))
#else
#define VYRE_HOST_API
#endif

typedef struct vyre_host vyre_host;

/* vyre_host_options.flags */
#define VYRE_HOST_NO_ENV (1u << 0)          /* ignore VYRE_BACKEND_PATH, VYRE_BACKEND, VYRE_BUILD_DIR */
#define VYRE_HOST_NO_DEFAULT_DIRS (1u << 1) /* search neither the build tree nor the plugin dir */
/* Added in libvyre-host 1.2: judge every candidate from its file only
 * (the descriptor read with pread) and load none: no plugin code runs;
 * compatible ones are VYRE_HOST_LISTED, and nothing can be created. */
#define VYRE_HOST_NO_LOAD (1u << 2)
/* Added after vyre 1.0.0 (no new symbol): load a plugin file met for the
 * first time without first judging it in a child process (vyre-probe), as
 * VYRE_PROBE=0 does (share/doc/vyre/host.md, "Judging a new plugin in a
 * child").  The libvyre-host of vyre 1.0.0 refuses it as an unknown flag
 * (VYRE_INVALID_ARGUMENT); vyre_host_version() names the one loaded. */
#define VYRE_HOST_NO_PROBE (1u << 3)

/* Options of vyre_host_open.  Zero-initialise and set struct_size; NULL
 * options mean all defaults. */
typedef struct vyre_host_options {
  uint32_t struct_size;
  uint32_t flags;          /* VYRE_HOST_* */
  const char *search_path; /* colon-separated files/dirs searched before
                              $VYRE_BACKEND_PATH; NULL = none.  Borrowed. */
  const char *backend;     /* id forced when vyre_host_create gets id NULL;
                              NULL = $VYRE_BACKEND.  Copied. */
} vyre_host_options;

/* What became of one candidate. */
typedef enum vyre_host_status {
  VYRE_HOST_LOADED = 0,      /* registered; factory not tried yet */
  VYRE_HOST_READY = 1,       /* its factory succeeded the last time it was tried */
  VYRE_HOST_UNAVAILABLE = 2, /* registered, but its factory failed the last time: reason */
  VYRE_HOST_SKIPPED = 3,     /* not loadable, bad ABI, bad registration or duplicate: reason */
  VYRE_HOST_LISTED = 4,      /* (1.2) judged from its file: compatible, not loaded
                                (VYRE_HOST_NO_LOAD); id and registration unknown */
  VYRE_HOST_STATUS_FORCE32_ = 0x7fffffff /* 32 bits whatever the enum options */
} vyre_host_status;

/* Where a candidate was found. */
typedef enum vyre_host_origin {
  VYRE_HOST_FROM_OPTIONS = 0,   /* vyre_host_options.search_path */
  VYRE_HOST_FROM_ENV = 1,       /* $VYRE_BACKEND_PATH */
  VYRE_HOST_FROM_BUILD = 2,     /* the build tree */
  VYRE_HOST_FROM_PLUGINDIR = 3, /* the installed plugin directory */
  VYRE_HOST_ORIGIN_FORCE32_ = 0x7fffffff
} vyre_host_origin;

#define VYRE_HOST_REASON_MAX 512

/*
 * One candidate, filled by vyre_host_backend_info.  Pointers are owned by
 * the host (valid until vyre_host_close); fields a SKIPPED candidate never
 * reached are "" / 0 / NULL.
 */
typedef struct vyre_host_candidate {
  uint32_t struct_size;
  uint32_t status;          /* vyre_host_status */
  const char *id;           /* "cuda"; "" when it never registered */
  const char *version;      /* backend version; "" when none */
  const char *description;  /* one line; "" when none */
  const char *path;         /* the file as the search found it */
  const char *build_id;     /* descriptor build_id; "" when unread */
  uint32_t origin;          /* vyre_host_origin */
  uint32_t search_index;    /* position in search order (= index) */
  int32_t precedence;       /* lower wins */
  uint16_t abi_major;       /* negotiated version */
  uint16_t abi_minor;
  uint16_t plugin_minor_min; /* minor range the descriptor offers */
  uint16_t plugin_minor_max;
  uint32_t op_count;
  const uint16_t *ops;      /* supported op ids (vyre_program.h), host-owned copy */
  uint64_t capabilities;    /* VYRE_CAP_* the plugin offers at best */
  uint64_t storage_types;   /* bit (1 << vyre_type) per supported buffer type */
  uint32_t registration_size; /* struct_size of the plugin's registration */
  uint32_t vtable_size;     /* descriptor vtable_size */
  char reason[VYRE_HOST_REASON_MAX]; /* why SKIPPED/UNAVAILABLE; otherwise "" or a note
                                        ("pre-1.0.0 build ...") */
  /* Appended in libvyre-host 1.1 (read them only when struct_size covers
   * them). */
  const uint32_t *op_types; /* op_count masks parallel to ops: bit (1 << vyre_type)
                               per type the op is supported at; 0 only for
                               ops without a type (statements) */
  uint32_t unknown_op_count; /* op ids the plugin listed that this host does
                               not know (a newer plugin); left out of ops */
  uint16_t registration_minor; /* the minor of the registration's layout */
  uint16_t release;         /* (libvyre-host 1.2; 0 before) the descriptor's release:
                               VYRE_DESCRIPTOR_RELEASE of its headers, 0 for a pre-1.0.0
                               build (then `reason` says so) or a descriptor never read */
  uint64_t unknown_capabilities; /* capability bits this host does not know;
                                    left out of capabilities */
  const char *extensions;   /* "name@version ..." the plugin serves; "" if none */
} vyre_host_candidate;

/*
 * Search, load and register every candidate (see DISCOVERY).  options may
 * be NULL.  Finding nothing is not an error (count 0).  On success *host
 * receives a new host (release with vyre_host_close); on failure (out of
 * memory, bad options) *host is NULL.  Thread-safe.
 */
VYRE_HOST_API vyre_status vyre_host_open(const vyre_host_options *options, vyre_host **host,
                                         vyre_error *err);

/* Release the host and its tables.  Backends it created stay valid;
 * plugins stay loaded.  NULL is accepted.  Must not race other calls. */
VYRE_HOST_API void vyre_host_close(vyre_host *host);

/* Number of candidates (loaded and skipped), in search order. */
VYRE_HOST_API uint32_t vyre_host_backend_count(const vyre_host *host);

/* Number of candidates with status SKIPPED. */
VYRE_HOST_API uint32_t vyre_host_skipped_count(const vyre_host *host);

/* Fill *info (caller sets info->struct_size; at most that many bytes are
 * written) for candidate `index`.  INVALID_ARGUMENT for a bad index. */
VYRE_HOST_API vyre_status vyre_host_backend_info(vyre_host *host, uint32_t index,
                                                 vyre_host_candidate *info,
                                                 vyre_error *err);

/* Index of the registered (not SKIPPED) backend with this id, or -1. */
VYRE_HOST_API int32_t vyre_host_find(const vyre_host *host, const char *id);

/*
 * Create a backend instance.  id: a backend id, or NULL for the forced
 * one (options->backend / $VYRE_BACKEND) or else the best (SELECTION).
 * options may be NULL (device 0).  On success *out receives the instance
 * (caller-owned, release with (*out)->vt->destroy) and *index (may be NULL)
 * the candidate index.  The plugin's instance is checked (its head and
 * vtable sizes must cover `destroy`) and handed out behind one the host
 * makes, with the same entries, that checks everything the plugin
 * returns (share/doc/vyre/host.md, "What a backend returns"); use
 * vyre_host_vtable_has before calling any entry but destroy.  When the
 * id's plugin cannot create an instance, a later plugin registering the
 * same id is tried (share/doc/vyre/host.md, "Duplicate ids").  On failure
 * *out is NULL and err names every reason.  Updates the candidates'
 * READY/UNAVAILABLE status.  Thread-safe.
 */
VYRE_HOST_API vyre_status vyre_host_create(vyre_host *host, const char *id,
                                           const vyre_backend_options *options,
                                           vyre_backend **out, uint32_t *index,
                                           vyre_error *err);

/*
 * Which backend vyre_host_create(host, NULL, options) would use: tries
 * factories as needed (creating and destroying instances) and stores the
 * candidate index in *index.  Errors as vyre_host_create.  Thread-safe.
 */
VYRE_HOST_API vyre_status vyre_host_select(vyre_host *host, const vyre_backend_options *options,
                                           uint32_t *index, vyre_error *err);

/* Try every registered backend's factory once (device 0; the instances
 * are destroyed) so that each status is READY or UNAVAILABLE.  Returns
 * how many are READY.  Thread-safe. */
VYRE_HOST_API uint32_t vyre_host_probe(vyre_host *host);

/* The forced id (options->backend, else $VYRE_BACKEND), or NULL.  Owned
 * by the host. */
VYRE_HOST_API const char *vyre_host_forced_id(const vyre_host *host);

/*
 * 1 when the instance's vtable is long enough to hold the entry at byte
 * `offset` of vyre_backend_vtable and that entry is non-NULL; else 0.
 * Use through VYRE_HOST_HAS(backend, dispatch).  NULL backend: 0.
 */
VYRE_HOST_API int vyre_host_vtable_has(const vyre_backend *backend, size_t offset);
#define VYRE_HOST_HAS(backend, entry) \
  vyre_host_vtable_has((backend), offsetof(vyre_backend_vtable, entry))

/*
 * The plugin's own instance behind `backend`.  vyre_host_create hands out
 * a host-made instance that forwards every vtable call to the plugin's
 * and checks what it returns (share/doc/vyre/host.md, "What a backend
 * returns"); extension functions (get_extension's tables) are the
 * plugin's own and take the plugin's instance: pass them
 * vyre_host_backend_native(b).
 * Any other backend (one a program created through a registration
 * itself, or NULL) is returned as it is; a destroyed host-made one gives
 * NULL.  The result lives as long as `backend`; destroy `backend`, never
 * the result (the host cannot see a destroy of the native instance, and
 * would destroy it again).  Thread-safe.
 */
VYRE_HOST_API vyre_backend *vyre_host_backend_native(vyre_backend *backend);

/*
 * The ABI minor a host speaking `host_minor` agrees on with a plugin
 * serving [min, max]: min(host_minor, max), stored in *out, VYRE_OK; or
 * VYRE_ABI_MISMATCH when that is below `min` or the range is inverted.
 * Pure; for plugins and hosts alike.
 */
VYRE_HOST_API vyre_status vyre_host_negotiate_minor(uint16_t host_minor, uint16_t min,
                                                    uint16_t max, uint16_t *out);

/* Names for printing: "loaded", "ready", "unavailable", "skipped", "listed"; and
 * "options", "VYRE_BACKEND_PATH", "build tree", "plugin dir".  "?" for
 * unknown values. */
VYRE_HOST_API const char *vyre_host_status_name(uint32_t status);
VYRE_HOST_API const char *vyre_host_origin_name(uint32_t origin);

/* Capability bit -> name ("f16", "subgroup", ...), or NULL for a bit the
 * host does not know.  bit is 0..63. */
VYRE_HOST_API const char *vyre_host_capability_name(uint32_t bit);

/* The library's own version (run-time, unlike the macros below, which are
 * the headers' a program was built with): the release ("1.0.0") and the
 * ABI it speaks.  Any pointer may be NULL. */
VYRE_HOST_API const char *vyre_host_version(uint32_t *abi_major, uint32_t *abi_minor);

/* Added in libvyre-host 1.2 */

/*
 * Create an instance of the best backend that can run `program` (an
 * image of `size` bytes, vyre_program.h) with dispatch options `dispatch`
 * (may be NULL; checked as a dispatch checks its options: struct_size,
 * flags 0, the extension chain, else VYRE_INVALID_ARGUMENT): what it
 * needs is vyre_program_needs (vyre_support.h).  Candidates are tried in the order vyre_host_create uses -- the forced
 * id (options->backend / $VYRE_BACKEND) first and only, else ascending
 * precedence -- and a candidate is passed over when its registration
 * lacks an op, an op type, a storage type or a capability the program
 * needs, or when the device of the instance it creates lacks a needed
 * capability (its device profile; the instance is then destroyed).  A
 * forced backend that lacks something is an error naming what, never
 * replaced by another.  options may be NULL (device 0).  On success *out
 * receives the instance, as from vyre_host_create, and *index (when index
 * is not NULL) the candidate that made it.  On failure *out is
 * NULL: VYRE_INVALID_PROGRAM (and the decoder's statuses) for a program
 * that does not decode; VYRE_UNSUPPORTED when some candidate lacks what
 * the program needs, the message naming each candidate tried and what it
 * lacks or why it failed ("no backend can run this program: fast (op div
 * not claimed); reference (...)"); else the factories' status
 * (VYRE_NO_DEVICE...) as vyre_host_create returns it.  Thread-safe.
 */
VYRE_HOST_API vyre_status vyre_host_create_for(vyre_host *host, const void *program,
                                               uint64_t size,
                                               const vyre_dispatch_options *dispatch,
                                               const vyre_backend_options *options,
                                               vyre_backend **out, uint32_t *index,
                                               vyre_error *err);

/* ------------------------------------------------------------------ */
/* Validation: the extension "vyre.validate" (share/doc/vyre/host.md, */
/* "Validation layer")                                                 */
/* ------------------------------------------------------------------ */
/* Read by libvyre-host only: an instance made by vyre_host_create takes
 * it off the chain before the plugin is called (the plugin never sees
 * it), so it works with every backend; a backend instance used without
 * libvyre-host skips it as an unknown type. */
#define VYRE_VALIDATE_NAME "vyre.validate"
#define VYRE_VALIDATE_VERSION 1
#define VYRE_EXT_VALIDATE 0x56590003u

/* vyre_validate.mode */
#define VYRE_VALIDATE_DEFAULT 0u /* as $VYRE_VALIDATE selects */
#define VYRE_VALIDATE_ON 1u      /* check this call */
#define VYRE_VALIDATE_OFF 2u     /* do not check this call */
/* vyre_validate.flags */
#define VYRE_VALIDATE_STRICT (1u << 0) /* a divergence fails the call (VYRE_INTERNAL) */
/* What *vyre_validate.outcome receives. */
#define VYRE_VALIDATE_NOT_CHECKED 0u /* not selected, the call failed, or an entry not checked */
#define VYRE_VALIDATE_AGREED 1u      /* the reference returned the same */
#define VYRE_VALIDATE_DIVERGED 2u    /* it did not: reported, a capsule written */
#define VYRE_VALIDATE_UNCHECKABLE 3u /* selected, but the reference could not run it (reported) */

/* Chained on vyre_dispatch_options.next of dispatch, dispatch_into or
 * dispatch_async (the entries that are checked, dispatch_async at its
 * pending_wait; on the other entries it is taken off the chain and
 * ignored): re-run this call on the reference backend and compare its
 * outputs.  A chain holds at most one. */
typedef struct vyre_validate {
  vyre_ext head;            /* {sizeof(vyre_validate), VYRE_EXT_VALIDATE, next} */
  uint32_t mode;            /* VYRE_VALIDATE_DEFAULT, _ON or _OFF */
  uint32_t flags;           /* VYRE_VALIDATE_STRICT, or 0: as $VYRE_VALIDATE says */
  const char *capsule_path; /* NULL: a new file under $VYRE_VALIDATE_DIR; else the
                               replay capsule is written to this file */
  uint32_t *outcome;        /* NULL, or receives VYRE_VALIDATE_NOT_CHECKED...UNCHECKABLE
                               when the call returns (dispatch_async: NOT_CHECKED;
                               its verdict comes at pending_wait) */
} vyre_validate;

/* Layout checks (LP64 and ILP32 where pointers are involved). */
VYRE_STATIC_ASSERT(sizeof(vyre_host_status) == 4 && sizeof(vyre_host_origin) == 4,
                   "host enums are 32 bits");
VYRE_STATIC_ASSERT(offsetof(vyre_host_options, search_path) == 8, "host_options.search_path");
VYRE_STATIC_ASSERT(sizeof(vyre_host_options) == 8 + 2 * sizeof(void *), "host_options layout");
VYRE_STATIC_ASSERT(offsetof(vyre_host_candidate, id) == 8, "candidate.id");
VYRE_STATIC_ASSERT(offsetof(vyre_host_candidate, origin) == 8 + 5 * sizeof(void *),
                   "candidate.origin");
VYRE_STATIC_ASSERT(offsetof(vyre_host_candidate, reason) == 56 + 6 * sizeof(void *),
                   "candidate.reason");
VYRE_STATIC_ASSERT(offsetof(vyre_host_candidate, op_types) ==
                       offsetof(vyre_host_candidate, reason) + VYRE_HOST_REASON_MAX,
                   "candidate.op_types");
VYRE_STATIC_ASSERT(offsetof(vyre_validate, mode) == sizeof(vyre_ext) &&
                       sizeof(vyre_validate) == sizeof(vyre_ext) + 8 + 2 * sizeof(void *),
                   "vyre_validate layout");

#ifdef __cplusplus
}
#endif
#endif /* VYRE_VYRE_HOST_H */
