/* internal.h -- libvyre-host's private types: one candidate plugin and the loader that fills it. */
#ifndef HOST_INTERNAL_H
#define HOST_INTERNAL_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <sys/stat.h>

#include "vyre/vyre.h"
#include "vyre/vyre_host.h"
#include "abi/support/config.h"
#include "abi/support/log.h"

/* The host's ABI minor.  Tests build a copy of the loader with another
 * value to exercise version skew (tests/host.mk, check_loader_skew). */
#ifndef VYRE_HOST_ABI_MINOR
#define VYRE_HOST_ABI_MINOR VYRE_ABI_MINOR
#endif

/* The smallest structures the host accepts: everything ABI minor 0
 * defines is read, so everything minor 0 defines must be there. */
#define HOST_DESCRIPTOR_MIN offsetof(vyre_descriptor, build_id)
#define HOST_REGISTRATION_MIN (offsetof(vyre_registration, create) + sizeof(void (*)(void)))
#define HOST_VTABLE_MIN (offsetof(vyre_backend_vtable, destroy) + sizeof(void (*)(void)))
#define HOST_BACKEND_MIN sizeof(vyre_backend)
/* Larger than any struct this ABI will grow to: a bigger size is garbage. */
#define HOST_STRUCT_MAX 65536u

/* Every capability bit this host has a name for (vyre.h VYRE_CAP_MAP). */
#define HOST_CAP_BIT_(name, ident, words) | VYRE_CAP_##name
#define VYRE_HOST_KNOWN_CAPS (0 VYRE_CAP_MAP(HOST_CAP_BIT_))

#define HOST_ID_MAX 31u
#define HOST_VERSION_MAX 63u
#define HOST_DESCRIPTION_MAX 255u

typedef vyre_status (*host_factory_fn)(const vyre_backend_options *options, vyre_backend **out,
                                       vyre_error *err);

/*
 * One candidate.  Everything but status and reason is written once by
 * vyre_host_open (single-threaded) and read-only afterwards; status and
 * reason are guarded by the host's lock.
 */
typedef struct host_entry {
  char *path;     /* as found */
  char *real;     /* realpath, for spotting one file reached twice; may be NULL */
  uint32_t origin;
  int registered; /* loaded and not a duplicate; fixed once open returns */
  int fallback;   /* loaded, but a later duplicate of a registered id: tried
                     when the ones before it cannot create an instance;
                     fixed once open returns */
  uint32_t status;
  char reason[VYRE_HOST_REASON_MAX];

  void *handle; /* dlopen handle, never closed */
  host_factory_fn create;
  char id[HOST_ID_MAX + 1];
  char version[HOST_VERSION_MAX + 1];
  char description[HOST_DESCRIPTION_MAX + 1];
  char build_id[64];
  int32_t precedence;
  uint16_t abi_major, abi_minor;
  uint16_t minor_min, minor_max;
  uint16_t registration_minor; /* the minor the registration's layout has */
  uint32_t op_count;
  uint16_t *ops;       /* host-owned copy of the known op ids */
  uint32_t *op_types;  /* per op: types supported (never 0) */
  uint32_t unknown_op_count; /* op ids listed that this host does not know */
  uint64_t capabilities;     /* known bits only */
  uint64_t unknown_capabilities; /* bits this host has no name for */
  char extensions[256];  /* registration.extensions, "" when none */
  uint64_t storage_types;
  uint32_t registration_size;
  uint32_t vtable_size;
  uint16_t release; /* the descriptor's release (0: a pre-1.0.0 build) */
  char note[128];   /* shown as the reason of a usable candidate ("pre-1.0.0 build"); "" */
  /* The host's registered "reference" entry (the validation layer's
   * oracle), or NULL; set by host_validate_link when vyre_host_open
   * returns, valid until vyre_host_close. */
  const struct host_entry *reference;
} host_entry;

/* The host (host.c); discover.c fills its candidate table. */
#define HOST_MAGIC 0x54534f4845525956ull /* "VYREHOST" while open; 0 once closed (quarantined) */
struct vyre_host {
  uint64_t magic;       /* HOST_MAGIC while open */
  pthread_mutex_t lock; /* guards entries[].status and entries[].reason */
  host_entry *entries;
  uint32_t count;
  uint32_t capacity;
  char *forced; /* forced id or NULL */
  int forced_from_env;
  int no_load; /* VYRE_HOST_NO_LOAD: candidates judged from their files only */
  char *probe_program; /* vyre-probe, when a new plugin file is judged in a
                          child first (child.c); NULL: not */
};

/* Fill host->entries from the search path (discover.c, docs/host.md
 * "Discovery"): options first, then $VYRE_BACKEND_PATH, the build tree
 * and the plugin directory, as opt->flags allow.  0, or -1 when out of
 * memory. */
int host_collect_candidates(vyre_host *host, const vyre_host_options *opt);

/*
 * Judge the file at e->path from its bytes (ELF checks, the descriptor
 * and the entry symbol read with pread: no plugin code runs); then,
 * unless `judge_only`, judge a new file in a vyre-probe child when
 * `probe_program` is not NULL (child.c), dlopen it, check the loaded descriptor equals the
 * file's, call the entry, check and copy the registration.  On any
 * failure e->status is VYRE_HOST_SKIPPED with a one-line reason; else
 * VYRE_HOST_LISTED (judge_only) or VYRE_HOST_LOADED.  A handle is kept
 * even on failure (never dlclose).  Not thread-safe on one entry;
 * different entries may load concurrently.
 */
void host_load_entry(host_entry *e, int judge_only, const char *probe_program);

/* The top of the build tree this library runs from (malloc'd), or NULL
 * when it runs installed (discover.c). */
char *host_build_tree(void);

/* ------------------------------------------------------------------ */
/* Judging a new plugin file in a child (child.c; docs/host.md)        */
/* ------------------------------------------------------------------ */
#define HOST_PROBE_TIMEOUT_MS 5000u /* then the child is killed: a hang */
#define HOST_PROBE_CACHE_MAX 256u   /* verdicts kept per user; the oldest go */

/* Whether vyre_host_open with these flags judges new files in a child:
 * not with VYRE_HOST_NO_PROBE, nor with VYRE_PROBE=0 in the environment
 * (read unless VYRE_HOST_NO_ENV). */
int host_probe_wanted(uint32_t flags);

/*
 * Judge the plugin file `path`, open on `fd` (its fstat in *st and a
 * fingerprint of its headers: the identity the verdict is cached under), in a child running `program`
 * (vyre-probe): the child is given the descriptor itself when `by_fd`
 * (it loads /proc/self/fd/3), else the path.  A cached verdict is used
 * when there is one.  0 when the child reported in full (the host may
 * load the file; also when it cannot start, said with VYRE_LOG=debug);
 * -1 with `reason` set (one line, no Fix) when it crashed, hung
 * (HOST_PROBE_TIMEOUT_MS, then SIGKILL) or ended early.  Thread-safe.
 */
int host_probe_file(const char *program, const char *path, int fd, const struct stat *st,
                    int by_fd, char *reason, size_t reason_size);

/* The error of vyre_host_create and the other create/select functions
 * on a host opened with VYRE_HOST_NO_LOAD: VYRE_INVALID_ARGUMENT, naming
 * `function` (loader.c). */
vyre_status host_no_load_error(const char *function, vyre_error *err);

/*
 * How deep this thread is in plugin code the host called: a plugin's
 * entry (loader.c) or its factory (host.c).  vyre_host_open,
 * vyre_host_create and vyre_host_probe refuse to run while it is not 0
 * (a plugin that opens a host from its entry, or creates the best
 * backend from its factory, would otherwise recurse until the stack
 * overflows).  host_reentry_error is that refusal: VYRE_INVALID_ARGUMENT
 * naming `function` (loader.c).
 */
extern _Thread_local unsigned host_plugin_depth;
vyre_status host_reentry_error(const char *function, vyre_error *err);

/* Set e->reason from a format (truncated to one line). */
void host_entry_reason(host_entry *e, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 2, 3)))
#endif
    ;

/*
 * Wrap the instance `inner` that entry e's factory made into the instance
 * callers get (guard.c): every call is forwarded to `inner` and what it
 * returns is checked first (docs/host.md, "What a backend returns").
 * *out receives the wrapper (its destroy destroys `inner`); on failure
 * (out of memory) *out is NULL and `inner` is left to the caller.
 */
vyre_status host_guard_wrap(const host_entry *e, vyre_backend *inner, vyre_backend **out,
                            vyre_error *err);

/* Registered candidates in selection order (ascending precedence, ties:
 * search order), as a malloc'd array of indices (*count of them; free
 * it); NULL when out of memory.  host.c; thread-safe. */
uint32_t *host_selection_order(const vyre_host *host, uint32_t *count);

/* Why the host's forced id is forced, for messages: " (forced by
 * VYRE_BACKEND)" or " (forced by the host options)".  Static text. */
const char *host_forced_by(const vyre_host *host);
/*
 * Check the vyre_backend_options a caller passes to vyre_host_create
 * (guard_args.c) before any factory sees them: NULL is accepted;
 * struct_size must reach `flags` and be at most HOST_STRUCT_MAX, flags 0,
 * and the `next` chain pass vyre__ext_chain_check.  VYRE_OK, or
 * VYRE_INVALID_ARGUMENT with one line naming `what` and a Fix.
 */
vyre_status host_check_backend_options(const char *what, const vyre_backend_options *options,
                                       vyre_error *err);

/*
 * Keep a poisoned host object (a destroyed instance of guard.c, a closed
 * vyre_host) allocated, plain malloc'ed memory, among the last
 * HOST_QUARANTINE_MAX such objects; the oldest is freed when one more
 * comes, the rest when libvyre-host is unloaded (guard_handles.c).  A
 * second destroy or close then reads our own memory and is a clear error.
 * Thread-safe.
 */
#define HOST_QUARANTINE_MAX 4096u
void host_quarantine(void *obj);

/*
 * A factory's status that is no vyre_status (999, 12345, -5) is the
 * plugin's bug (docs/abi.md section 11): returns 1 with *st set to
 * VYRE_INTERNAL and `reason` naming the raw value and the plugin file
 * `path`; 0 (nothing changed) for a vyre_status.  guard_expect.c.
 */
int host_factory_status(vyre_status *st, const char *path, char *reason, size_t reason_size);

/* ------------------------------------------------------------------ */
/* The validation layer (validate.c; docs/host.md, "Validation layer") */
/* ------------------------------------------------------------------ */
typedef struct host_validate host_validate;

/* Point every entry's `reference` at the registered entry with id
 * "reference" (called once by vyre_host_open, single-threaded). */
void host_validate_link(host_entry *entries, uint32_t count);

/*
 * The layer of one instance: `self` is the instance callers hold (the
 * layer calls back into it), e the entry it was made from.  Reads
 * $VYRE_VALIDATE and $VYRE_VALIDATE_DIR; *on receives 1 when they select
 * dispatches of this instance (the flag the hooks test); the layer keeps
 * *pending non-zero while it holds checked async dispatches (the flag the
 * pending hooks test).  NULL on out of memory.  Free with
 * host_validate_free (NULL accepted).
 */
host_validate *host_validate_new(const host_entry *e, vyre_backend *self, int *on,
                                 atomic_int *pending);
void host_validate_free(host_validate *v);

/* Set while the layer calls back into the instance, so the hooks let the
 * call through. */
extern _Thread_local int host_validate_busy;

/* Whether an entry goes through the layer: the instance is validated, or
 * the call's options have a chain (which may hold a vyre_validate to take
 * off).  Otherwise this is the whole cost of the layer on a call. */
#if defined(__GNUC__)
#define HOST_VALIDATE_UNLIKELY_(x) __builtin_expect(!!(x), 0)
#else
#define HOST_VALIDATE_UNLIKELY_(x) (x)
#endif
#define HOST_VALIDATE_HOOK(on, o)                                                            \
  HOST_VALIDATE_UNLIKELY_(                                                                  \
      ((on) || ((o) && (o)->struct_size >= sizeof(vyre_dispatch_options) && (o)->next)) && \
      !host_validate_busy)

/* Whether pending_wait and pending_release go through the layer: it
 * holds checked async dispatches. */
#define HOST_VALIDATE_PENDING(flag) \
  HOST_VALIDATE_UNLIKELY_(atomic_load_explicit(&(flag), memory_order_relaxed) && !host_validate_busy)

/* The entries through the layer: the same arguments as the vtable's,
 * `self` the instance callers hold; each takes vyre_validate off the
 * chain, calls self's entry, and (dispatch, dispatch_into; dispatch_async
 * at its pending_wait) checks the result against the reference when the
 * call is selected. */
vyre_status host_validate_dispatch(host_validate *v, vyre_backend *self,
                                   const vyre_program_ref *program, const vyre_input *inputs,
                                   uint32_t input_count, const vyre_dispatch_options *options,
                                   vyre_outputs **out, vyre_timing *timing, vyre_error *err);
vyre_status host_validate_dispatch_into(host_validate *v, vyre_backend *self,
                                        const vyre_program_ref *program, const vyre_input *inputs,
                                        uint32_t input_count, const vyre_dispatch_options *options,
                                        vyre_output_slot *outputs, uint32_t output_count,
                                        vyre_timing *timing, vyre_error *err);
vyre_status host_validate_dispatch_async(host_validate *v, vyre_backend *self,
                                         const vyre_program_ref *program, const vyre_input *inputs,
                                         uint32_t input_count, const vyre_dispatch_options *options,
                                         vyre_pending *out, vyre_error *err);
vyre_status host_validate_dispatch_resident(host_validate *v, vyre_backend *self,
                                            const vyre_program_ref *program,
                                            const vyre_resident *buffers, uint32_t buffer_count,
                                            const vyre_dispatch_options *options,
                                            vyre_timing *timing, vyre_error *err);
vyre_status host_validate_pipeline_create(host_validate *v, vyre_backend *self,
                                          const void *program_bytes, uint64_t program_size,
                                          const vyre_dispatch_options *options,
                                          vyre_pipeline *out, vyre_error *err);
vyre_status host_validate_pending_wait(host_validate *v, vyre_backend *self, vyre_pending pending,
                                       vyre_outputs **out, vyre_timing *timing, vyre_error *err);
vyre_status host_validate_pending_release(host_validate *v, vyre_backend *self,
                                          vyre_pending pending, vyre_error *err);
/* Forget a released pipeline's program (pipeline_release). */
void host_validate_pipeline_release(host_validate *v, vyre_pipeline pipeline);

/* Debug tracing (VYRE_LOG=debug), one "vyre-host: ..." line on stderr. */
#define host_log(...) vyre__log("vyre-host", __VA_ARGS__)

#endif /* HOST_INTERNAL_H */
