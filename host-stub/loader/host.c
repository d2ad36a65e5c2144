/* host.c -- libvyre-host: the search path, the candidate table, backend selection and the public API. */
#include "config.h"

#include <dirent.h>
#include <dlfcn.h>
#include <errno.h>
#include <stdarg.h>
#include <limits.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "internal.h"
#include "abi/support/sized.h"
#include "vyre/vyre_support.h"



/* First-found wins: a later candidate with a registered id is skipped,
 * and kept as that id's fallback (docs/host.md, "Duplicate ids"). */
static void load_all(vyre_host *host) {
  for (uint32_t i = 0; i < host->count; i++) {
    host_entry *e = &host->entries[i];
    if (e->status == VYRE_HOST_SKIPPED) {
      host_log("skipped %s: %s", e->path, e->reason);
      continue;
    }
    host_load_entry(e, host->no_load, host->probe_program);
    /* A listed candidate has no id yet (its entry never ran). */
    if (e->status == VYRE_HOST_SKIPPED || e->status == VYRE_HOST_LISTED) continue;
    for (uint32_t j = 0; j < i; j++) {
      const host_entry *prev = &host->entries[j];
      if (prev->registered && strcmp(prev->id, e->id) == 0) {
        host_entry_reason(e, "duplicate id '%s' (already loaded from %s); used only if that "
                             "one cannot create an instance. Fix: remove one of them from the "
                             "search path, or list the one you want first",
                          e->id, prev->path);
        e->status = VYRE_HOST_SKIPPED;
        e->fallback = 1;
        host_log("skipped %s: %s", e->path, e->reason);
        break;
      }
    }
    e->registered = e->status != VYRE_HOST_SKIPPED;
  }
}

#ifndef VYRE_PROBE_PROGRAM
#error "VYRE_PROBE_PROGRAM must name the installed vyre-probe: config-paths.h defines it (host-stub/loader/local.mk passes -include config-paths.h)"
#endif
/* Where `make` builds vyre-probe, relative to the top of a build tree. */
#define HOST_BUILD_PROBE "/host-stub/loader/vyre-probe"

/* The vyre-probe program (malloc'd): the build tree's when this library
 * runs from one, else the installed one; NULL when there is none (then
 * plugins load unjudged, said with VYRE_LOG=debug). */
static char *probe_program(void) {
  char *top = host_build_tree();
  const char *dir = top ? top : "";
  size_t len = strlen(dir) + sizeof HOST_BUILD_PROBE + sizeof VYRE_PROBE_PROGRAM;
  char *path = malloc(len);
  if (path) snprintf(path, len, "%s%s", dir, top ? HOST_BUILD_PROBE : VYRE_PROBE_PROGRAM);
  free(top);
  if (path && access(path, X_OK) != 0) {
    host_log("no vyre-probe at %s: new plugin files load without being judged in a child", path);
    free(path);
    path = NULL;
  }
  return path;
}

/* ------------------------------------------------------------------ */
/* Open / close / query                                                */
/* ------------------------------------------------------------------ */

vyre_status vyre_host_open(const vyre_host_options *options, vyre_host **out, vyre_error *err) {
  if (!out)
    return vyre_error_set(err, VYRE_INVALID_ARGUMENT, 0,
                          "vyre_host_open: host is NULL. Fix: pass the address of a vyre_host *");
  *out = NULL;
  if (host_plugin_depth) return host_reentry_error("vyre_host_open", err);
  vyre_host_options opt;
  memset(&opt, 0, sizeof opt);
  if (options) {
    if (options->struct_size < sizeof(uint32_t) || options->struct_size > HOST_STRUCT_MAX)
      return vyre_error_set(err, VYRE_INVALID_ARGUMENT, 0,
                            "vyre_host_open: options->struct_size %u is invalid. Fix: set it to "
                            "sizeof(vyre_host_options)",
                            options->struct_size);
    vyre__sized_read(&opt, sizeof opt, options);
  }
  if (opt.flags & ~(uint32_t)(VYRE_HOST_NO_ENV | VYRE_HOST_NO_DEFAULT_DIRS | VYRE_HOST_NO_LOAD |
                              VYRE_HOST_NO_PROBE))
    return vyre_error_set(err, VYRE_INVALID_ARGUMENT, 0,
                          "vyre_host_open: unknown flags 0x%x. Fix: use VYRE_HOST_* flags only",
                          opt.flags);
  vyre_host *host = calloc(1, sizeof *host);
  if (!host) goto fail_alloc;
  if (pthread_mutex_init(&host->lock, NULL) != 0) goto fail_mutex;
  host->magic = HOST_MAGIC;
  host->no_load = (opt.flags & VYRE_HOST_NO_LOAD) != 0;
  if (host_probe_wanted(opt.flags) && !host->no_load) host->probe_program = probe_program();
  const char *forced = opt.backend;
  if (!forced && !(opt.flags & VYRE_HOST_NO_ENV)) {
    forced = vyre__env(VYRE__ENV_BACKEND);
    host->forced_from_env = forced != NULL;
  }
  if (forced && *forced) {
    host->forced = strdup(forced);
    if (!host->forced) goto fail_forced;
  }
  if (host_collect_candidates(host, &opt) != 0) goto fail_collect;
  load_all(host);
  host_validate_link(host->entries, host->count);
  *out = host;
  return VYRE_OK;

fail_collect:
fail_forced:
  vyre_host_close(host);
  return vyre_error_set(err, VYRE_OUT_OF_MEMORY, ENOMEM,
                        "vyre_host_open: out of memory listing plugins. Fix: free memory");
fail_mutex:
  free(host);
fail_alloc:
  return vyre_error_set(err, VYRE_OUT_OF_MEMORY, ENOMEM,
                        "vyre_host_open: out of memory. Fix: free memory");
}

void vyre_host_close(vyre_host *host) {
  if (!host) return;
  if (host->magic != HOST_MAGIC) { /* kept, poisoned, by host_quarantine below */
    fprintf(stderr, "vyre-host: vyre_host_close: host %p was already closed; ignored. Fix: close "
                    "each host once\n", (void *)host);
    return;
  }
  /* Handles are deliberately leaked: see docs/host.md, "Never dlclose". */
  for (uint32_t i = 0; i < host->count; i++) {
    free(host->entries[i].path);
    free(host->entries[i].real);
    free(host->entries[i].ops);
    free(host->entries[i].op_types);
  }
  free(host->entries);
  free(host->forced);
  free(host->probe_program);
  host->entries = NULL, host->forced = NULL, host->probe_program = NULL, host->count = host->capacity = 0;
  pthread_mutex_destroy(&host->lock);
  host->magic = 0;
  host_quarantine(host);
}

uint32_t vyre_host_backend_count(const vyre_host *host) { return host ? host->count : 0; }

uint32_t vyre_host_skipped_count(const vyre_host *host) {
  if (!host) return 0;
  uint32_t n = 0;
  /* A fallback that stood in for its id is READY, no longer skipped. */
  pthread_mutex_lock((pthread_mutex_t *)&host->lock);
  for (uint32_t i = 0; i < host->count; i++)
    if (host->entries[i].status == VYRE_HOST_SKIPPED) n++;
  pthread_mutex_unlock((pthread_mutex_t *)&host->lock);
  return n;
}

const char *vyre_host_forced_id(const vyre_host *host) { return host ? host->forced : NULL; }

const char *host_forced_by(const vyre_host *host) {
  return host->forced_from_env ? " (forced by VYRE_BACKEND)" : " (forced by the host options)";
}

int32_t vyre_host_find(const vyre_host *host, const char *id) {
  if (!host || !id) return -1;
  for (uint32_t i = 0; i < host->count; i++) {
    const host_entry *e = &host->entries[i];
    if (e->registered && strcmp(e->id, id) == 0) return (int32_t)i;
  }
  return -1;
}

vyre_status vyre_host_backend_info(vyre_host *host, uint32_t index, vyre_host_candidate *info,
                                   vyre_error *err) {
  if (!host || !info)
    return vyre_error_set(err, VYRE_INVALID_ARGUMENT, 0,
                          "vyre_host_backend_info: host or info is NULL. Fix: pass both");
  if (info->struct_size < sizeof(uint32_t))
    return vyre_error_set(err, VYRE_INVALID_ARGUMENT, 0,
                          "vyre_host_backend_info: info->struct_size %u is invalid. Fix: set it "
                          "to sizeof(vyre_host_candidate)",
                          info->struct_size);
  if (index >= host->count)
    return vyre_error_set(err, VYRE_INVALID_ARGUMENT, 0,
                          "vyre_host_backend_info: index %u out of range (%u candidates). Fix: "
                          "use an index below vyre_host_backend_count()",
                          index, host->count);
  const host_entry *e = &host->entries[index];
  vyre_host_candidate full;
  memset(&full, 0, sizeof full);
  full.struct_size = info->struct_size;
  full.id = e->id;
  full.version = e->version;
  full.description = e->description;
  full.path = e->path;
  full.build_id = e->build_id;
  full.origin = e->origin;
  full.search_index = index;
  full.precedence = e->precedence;
  full.abi_major = e->abi_major;
  full.abi_minor = e->abi_minor;
  full.plugin_minor_min = e->minor_min;
  full.plugin_minor_max = e->minor_max;
  full.op_count = e->op_count;
  full.ops = e->ops;
  full.capabilities = e->capabilities;
  full.storage_types = e->storage_types;
  full.registration_size = e->registration_size;
  full.vtable_size = e->vtable_size;
  full.op_types = e->op_types;
  full.unknown_op_count = e->unknown_op_count;
  full.registration_minor = e->registration_minor;
  full.unknown_capabilities = e->unknown_capabilities;
  full.extensions = e->extensions;
  full.release = e->release;
  pthread_mutex_lock(&host->lock);
  full.status = e->status;
  memcpy(full.reason, e->reason, sizeof full.reason);
  /* A usable candidate's reason is "" or its note (a pre-1.0.0 build). */
  if (!full.reason[0] && e->note[0]) snprintf(full.reason, sizeof full.reason, "%s", e->note);
  pthread_mutex_unlock(&host->lock);
  vyre__sized_write(info, &full, sizeof full);
  return VYRE_OK;
}

/* ------------------------------------------------------------------ */
/* Selection                                                           */
/* ------------------------------------------------------------------ */

static void set_status(vyre_host *host, host_entry *e, uint32_t status, const char *reason) {
  pthread_mutex_lock(&host->lock);
  e->status = status;
  if (reason) host_entry_reason(e, "%s", reason);
  else e->reason[0] = '\0';
  pthread_mutex_unlock(&host->lock);
}

/* snprintf that may truncate on purpose (reasons are one bounded line). */
static void format_line(char *dst, size_t size, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 3, 4)))
#endif
    ;
static void format_line(char *dst, size_t size, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(dst, size, fmt, ap);
  va_end(ap);
}

/*
 * Run entry e's factory and check what it made.  On failure *reason holds
 * one line and *out is NULL.  Status is updated either way.
 */
static vyre_status try_factory(vyre_host *host, host_entry *e, const vyre_backend_options *options,
                               vyre_backend **out, char *reason, size_t reason_size) {
  /* The plugin learns the negotiated minor here: a copy of the caller's
   * options (of whatever size it gave) with abi_minor set by the host. */
  vyre_backend_options opts;
  vyre__sized_read(&opts, sizeof opts, options);
  opts.abi_minor = e->abi_minor;
  if (e->abi_minor < 1) opts.next = NULL; /* a 1.0 plugin has no chain */
  vyre_error perr = VYRE_ERROR_INIT;
  vyre_backend *b = NULL;
  *out = NULL;
  host_log("creating '%s'", e->id);
  host_plugin_depth++;
  vyre_status st = e->create(&opts, &b, &perr);
  host_plugin_depth--;
  perr.message[sizeof perr.message - 1] = '\0';
  if (host_factory_status(&st, e->path, reason, reason_size)) goto fail; /* no vyre_status */
  if (st != VYRE_OK) {
    /* An instance returned with a failure is the plugin's bug; leaving it
     * alone is safer than destroying something half-made. */
    format_line(reason, reason_size, "factory failed: %s: %s", vyre_status_name(st),
             perr.message[0] ? perr.message : "(no message)");
    goto fail;
  }
  if (!b) {
    st = VYRE_INTERNAL;
    format_line(reason, reason_size, "factory returned VYRE_OK but no instance. Fix: the plugin "
                                  "must store the instance in *out");
    goto fail;
  }
  if (b->struct_size < HOST_BACKEND_MIN || b->struct_size > HOST_STRUCT_MAX || !b->vt ||
      b->vt->struct_size < HOST_VTABLE_MIN || b->vt->struct_size > HOST_STRUCT_MAX ||
      !b->vt->destroy) {
    /* Without a usable destroy the instance cannot be released: it leaks. */
    st = VYRE_ABI_MISMATCH;
    format_line(reason, reason_size,
             "factory made a malformed instance (struct_size %u, vtable %s, vtable size %u; the "
             "host needs %zu and %zu with destroy set). Fix: rebuild the plugin against vyre.h",
             b->struct_size, b->vt ? "set" : "NULL", b->vt ? b->vt->struct_size : 0,
             (size_t)HOST_BACKEND_MIN, (size_t)HOST_VTABLE_MIN);
    goto fail;
  }
  set_status(host, e, VYRE_HOST_READY, NULL);
  *out = b;
  return VYRE_OK;
fail:
  for (char *p = reason; *p; p++)
    if (*p == '\n' || *p == '\r') *p = ' ';
  set_status(host, e, VYRE_HOST_UNAVAILABLE, reason);
  host_log("'%s' unavailable: %s", e->id, reason);
  return st;
}

/*
 * Run the factory of registered entry i, then, while it fails, those of
 * the later candidates that registered the same id (its fallbacks, in
 * search order).  *used receives the entry that made *out.  On failure
 * `reason` holds every entry's reason.
 */
static vyre_status try_id(vyre_host *host, uint32_t i, const vyre_backend_options *options,
                          vyre_backend **out, uint32_t *used, char *reason, size_t reason_size) {
  vyre_status st = try_factory(host, &host->entries[i], options, out, reason, reason_size);
  for (uint32_t j = i + 1; st != VYRE_OK && j < host->count; j++) {
    host_entry *f = &host->entries[j];
    if (!f->fallback || strcmp(f->id, host->entries[i].id) != 0) continue;
    char why[VYRE_HOST_REASON_MAX];
    vyre_status fst = try_factory(host, f, options, out, why, sizeof why);
    if (fst == VYRE_OK) {
      host_log("'%s' from %s stands in for the one from %s", f->id, f->path,
               host->entries[i].path);
      i = j;
      st = VYRE_OK;
      break;
    }
    size_t used_len = strnlen(reason, reason_size);
    if (used_len + 1 < reason_size)
      format_line(reason + used_len, reason_size - used_len, "; its duplicate %s: %s", f->path,
                  why);
  }
  if (st == VYRE_OK) *used = i;
  return st;
}

/* The instance a caller gets: the plugin's, wrapped so that what it
 * returns is checked (guard.c).  Out of memory destroys the plugin's. */
static vyre_status hand_out(vyre_host *host, uint32_t i, vyre_backend **out, vyre_error *err) {
  vyre_backend *inner = *out;
  *out = NULL;
  vyre_status st = host_guard_wrap(&host->entries[i], inner, out, err);
  if (st != VYRE_OK) inner->vt->destroy(inner);
  return st;
}

/* Registered entries in selection order: precedence, then search order. */
uint32_t *host_selection_order(const vyre_host *host, uint32_t *count) {
  uint32_t *order = malloc((host->count ? host->count : 1) * sizeof *order);
  if (!order) return NULL;
  uint32_t n = 0;
  for (uint32_t i = 0; i < host->count; i++)
    if (host->entries[i].registered) order[n++] = i;
  /* Insertion sort: stable, and there are only a handful. */
  for (uint32_t i = 1; i < n; i++) {
    uint32_t v = order[i], j = i;
    while (j > 0 && host->entries[order[j - 1]].precedence > host->entries[v].precedence) {
      order[j] = order[j - 1];
      j--;
    }
    order[j] = v;
  }
  *count = n;
  return order;
}

static vyre_status create_by_id(vyre_host *host, const char *id, const char *why_forced,
                                const vyre_backend_options *options, vyre_backend **out,
                                uint32_t *index, vyre_error *err) {
  int32_t i = vyre_host_find(host, id);
  if (i < 0) {
    for (uint32_t k = 0; k < host->count; k++) {
      const host_entry *e = &host->entries[k];
      if (!e->registered && strcmp(e->id, id) == 0)
        return vyre_error_set(err, VYRE_NO_DEVICE, 0,
                              "backend '%s'%s was skipped (%s): %s", id, why_forced, e->path,
                              e->reason);
    }
    char known[512] = "";
    size_t used = 0;
    for (uint32_t k = 0; k < host->count && used < sizeof known; k++) {
      const host_entry *e = &host->entries[k];
      if (!e->registered) continue;
      int n = snprintf(known + used, sizeof known - used, "%s%s", used ? ", " : "", e->id);
      if (n > 0) used += (size_t)n;
    }
    return vyre_error_set(err, VYRE_NO_DEVICE, 0,
                          "backend '%s'%s not found (registered: %s). Fix: run `vyre list` to "
                          "see the backends found, and add the plugin's directory to "
                          "VYRE_BACKEND_PATH",
                          id, why_forced, used ? known : "none");
  }
  char reason[VYRE_HOST_REASON_MAX * 2];
  uint32_t used = (uint32_t)i;
  vyre_status st = try_id(host, (uint32_t)i, options, out, &used, reason, sizeof reason);
  if (st != VYRE_OK)
    return vyre_error_set(err, st, 0, "backend '%s'%s cannot be used: %s", id, why_forced,
                          reason);
  st = hand_out(host, used, out, err);
  if (st == VYRE_OK && index) *index = used;
  return st;
}

static vyre_status create_best(vyre_host *host, const vyre_backend_options *options,
                               vyre_backend **out, uint32_t *index, vyre_error *err) {
  uint32_t n = 0;
  uint32_t *order = host_selection_order(host, &n);
  if (!order)
    return vyre_error_set(err, VYRE_OUT_OF_MEMORY, ENOMEM,
                          "selecting a backend: out of memory. Fix: free memory");
  char reasons[VYRE_ERROR_MESSAGE_MAX - 256] = "";
  size_t used = 0;
  vyre_status last = VYRE_NO_DEVICE;
  for (uint32_t k = 0; k < n; k++) {
    host_entry *e = &host->entries[order[k]];
    char reason[VYRE_HOST_REASON_MAX];
    uint32_t chosen = order[k];
    vyre_status st = try_id(host, order[k], options, out, &chosen, reason, sizeof reason);
    if (st == VYRE_OK) {
      free(order);
      st = hand_out(host, chosen, out, err);
      if (st == VYRE_OK && index) *index = chosen;
      return st;
    }
    last = st;
    int w = snprintf(reasons + used, sizeof reasons - used, "%s%s: %s", used ? "; " : "", e->id,
                     reason);
    if (w > 0) used = used + (size_t)w < sizeof reasons ? used + (size_t)w : sizeof reasons - 1;
  }
  free(order);
  uint32_t skipped = vyre_host_skipped_count(host);
  if (n == 0)
    return vyre_error_set(err, VYRE_NO_DEVICE, 0,
                          "no vyre backend found (%u candidate%s skipped). Fix: run `vyre list` "
                          "to see what was searched and why files were skipped; set "
                          "VYRE_BACKEND_PATH to a plugin file or directory",
                          skipped, skipped == 1 ? "" : "s");
  return vyre_error_set(err, last == VYRE_OK ? VYRE_NO_DEVICE : last, 0,
                        "no usable vyre backend: %s. Fix: see `vyre list`; install the missing "
                        "driver or device, or add a backend that works here",
                        reasons);
}

vyre_status vyre_host_create(vyre_host *host, const char *id, const vyre_backend_options *options,
                             vyre_backend **out, uint32_t *index, vyre_error *err) {
  if (out) *out = NULL;
  if (!host || !out || host->magic != HOST_MAGIC)
    return vyre_error_set(err, VYRE_INVALID_ARGUMENT, 0, "vyre_host_create: %s",
                          host && out ? "the host was closed. Fix: pass one vyre_host_open made, "
                                        "before its vyre_host_close"
                                      : "host or out is NULL. Fix: pass both");
  if (host_plugin_depth) return host_reentry_error("vyre_host_create", err);
  vyre_status st = host_check_backend_options("vyre_host_create", options, err);
  if (st != VYRE_OK) return st;
  if (host->no_load) return host_no_load_error("vyre_host_create", err);
  if (id) return create_by_id(host, id, "", options, out, index, err);
  if (host->forced)
    return create_by_id(host, host->forced,
                        host->forced_from_env ? " (forced by VYRE_BACKEND)"
                                              : " (forced by the host options)",
                        options, out, index, err);
  return create_best(host, options, out, index, err);
}

vyre_status vyre_host_select(vyre_host *host, const vyre_backend_options *options,
                             uint32_t *index, vyre_error *err) {
  vyre_backend *b = NULL;
  uint32_t chosen = 0;
  vyre_status st = vyre_host_create(host, NULL, options, &b, &chosen, err);
  if (st != VYRE_OK) return st;
  b->vt->destroy(b);
  if (index) *index = chosen;
  return VYRE_OK;
}

uint32_t vyre_host_probe(vyre_host *host) {
  uint32_t ready = 0;
  if (host_plugin_depth) {
    host_log("vyre_host_probe: called from plugin code; refused (nothing tried)");
    return 0;
  }
  for (uint32_t i = 0; host && i < host->count; i++) {
    host_entry *e = &host->entries[i];
    if (!e->registered) continue;
    vyre_backend *b = NULL;
    char reason[VYRE_HOST_REASON_MAX];
    uint32_t used = i;
    if (try_id(host, i, NULL, &b, &used, reason, sizeof reason) == VYRE_OK) {
      b->vt->destroy(b);
      ready++;
    }
  }
  return ready;
}
