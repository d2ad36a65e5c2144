/* select.c -- libvyre-host: a backend for a program: the first candidate, in selection order, whose registration and then whose instance's device cover what the program needs (vyre_program_needs). */
#include "config.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "guard.h"
#include "internal.h"
#include "vyre/vyre_program.h"
#include "vyre/vyre_support.h"

/* What became of the candidates tried, for the one error message. */
typedef struct select_log {
  char text[VYRE_ERROR_MESSAGE_MAX - 384];
  size_t used;
  uint32_t lacking;  /* candidates that lack something the program needs */
  vyre_status last;  /* the last factory failure */
} select_log;

static void log_add(select_log *l, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void log_add(select_log *l, const char *fmt, ...) {
  if (l->used + 1 >= sizeof l->text) return;
  if (l->used) l->used += (size_t)snprintf(l->text + l->used, sizeof l->text - l->used, "; ");
  if (l->used + 1 >= sizeof l->text) {
    l->used = sizeof l->text - 1;
    return;
  }
  va_list ap;
  va_start(ap, fmt);
  int k = vsnprintf(l->text + l->used, sizeof l->text - l->used, fmt, ap);
  va_end(ap);
  l->used += k < 0 ? 0 : (size_t)k;
  if (l->used >= sizeof l->text) l->used = sizeof l->text - 1;
}

/* How many needs candidate i's registration lacks (why[] names them);
 * *c receives the candidate. */
static uint32_t registration_unmet(vyre_host *host, uint32_t i, const vyre_needs *n,
                                   vyre_host_candidate *c, char *why, size_t size) {
  memset(c, 0, sizeof *c);
  c->struct_size = sizeof *c;
  if (vyre_host_backend_info(host, i, c, NULL) != VYRE_OK) {
    snprintf(why, size, "no candidate %u", i);
    return 1;
  }
  return vyre_needs_unmet(n, c->ops, c->op_types, c->op_count, c->storage_types, c->capabilities,
                          why, size);
}

/* 1 when another candidate registering id `id` (a duplicate, which
 * stands in when the first cannot create an instance: docs/host.md,
 * "Duplicate ids") covers `n`. */
static int duplicate_covers(vyre_host *host, uint32_t i, const char *id, const vyre_needs *n) {
  uint32_t count = vyre_host_backend_count(host);
  for (uint32_t j = 0; j < count; j++) {
    vyre_host_candidate d;
    char why[8];
    if (j == i || registration_unmet(host, j, n, &d, why, sizeof why) != 0) continue;
    if (d.id && strcmp(d.id, id) == 0) return 1;
  }
  return 0;
}

/* How many needed capabilities the device of instance b lacks (its
 * profile: what this device really has; the registration says what the
 * plugin can offer at best).  An instance without a profile, or whose
 * profile fails, is taken at its registration's word, as the
 * conformance harness does. */
static uint32_t device_unmet(vyre_backend *b, const vyre_needs *n, char *why, size_t size) {
  if (!VYRE_HOST_HAS(b, device_profile)) return 0;
  vyre_device_profile p;
  memset(&p, 0, sizeof p);
  p.struct_size = sizeof p;
  vyre_error e = VYRE_ERROR_INIT;
  if (b->vt->device_profile(b, &p, &e) != VYRE_OK) {
    host_log("no device profile (%s): the registration's capabilities stand", e.message);
    return 0;
  }
  vyre_needs caps;
  memset(&caps, 0, sizeof caps);
  caps.struct_size = sizeof caps;
  caps.capabilities = n->capabilities;
  int k = snprintf(why, size, "on device %u, %.127s: ", p.ordinal, p.name);
  size_t used = k < 0 ? 0 : (size_t)k < size ? (size_t)k : size - 1;
  return vyre_needs_unmet(&caps, NULL, NULL, 0, 0, p.capabilities, why + used, size - used);
}

/*
 * Create candidate i's backend (vyre_host_create by its id, so that its
 * duplicates stand in as they would there) and check that the
 * registration that made it and its device cover `n`.  `forced_by`: NULL,
 * or why it is forced (host_forced_by), for the message.  VYRE_OK with
 * *out; else *out NULL and the reason logged: lacking (counted) or the
 * factory's failure (l->last).
 */
static vyre_status create_covering(vyre_host *host, uint32_t i, const char *forced_by,
                                   const vyre_needs *n, const vyre_backend_options *options,
                                   vyre_backend **out, uint32_t *chosen, select_log *l) {
  vyre_host_candidate c;
  char why[VYRE_HOST_REASON_MAX], label[HOST_ID_MAX + 64];
  *out = NULL;
  uint32_t missing = registration_unmet(host, i, n, &c, why, sizeof why);
  const char *id = c.id ? c.id : "?";
  /* "backend 'x' (forced by ...): what it lacks", else, one of a list,
   * "x (what it lacks)". */
  if (forced_by) snprintf(label, sizeof label, "backend '%s'%s: ", id, forced_by);
  else snprintf(label, sizeof label, "%s (", id);
  const char *end = forced_by ? "" : ")";
  /* Its factory is not run when no registration of the id covers the
   * program; when a duplicate does, the instance decides (below). */
  if (missing && !duplicate_covers(host, i, id, n)) {
    log_add(l, "%s%s%s", label, why, end);
    l->lacking++;
    return VYRE_UNSUPPORTED;
  }
  vyre_error e = VYRE_ERROR_INIT;
  vyre_backend *b = NULL;
  uint32_t used = i;
  vyre_status st = vyre_host_create(host, id, options, &b, &used, &e);
  if (st != VYRE_OK) {
    log_add(l, "%s", e.message); /* it names the backend */
    l->last = st;
    return st;
  }
  /* The registration that made the instance is the one that counts. */
  if (used != i) missing = registration_unmet(host, used, n, &c, why, sizeof why);
  if (!missing) missing = device_unmet(b, n, why, sizeof why);
  if (missing) {
    b->vt->destroy(b);
    log_add(l, "%s%s%s", label, why, end);
    l->lacking++;
    return VYRE_UNSUPPORTED;
  }
  host_log("'%s' (%s) covers the program", id, c.path);
  *out = b;
  if (chosen) *chosen = used;
  return VYRE_OK;
}

/* The forced backend, and only it: what it lacks is the error. */
static vyre_status create_forced(vyre_host *host, const vyre_needs *n,
                                 const vyre_backend_options *options, vyre_backend **out,
                                 uint32_t *index, vyre_error *err) {
  const char *id = vyre_host_forced_id(host);
  int32_t i = vyre_host_find(host, id);
  /* Absent or skipped: vyre_host_create says so, with the reason. */
  if (i < 0) return vyre_host_create(host, NULL, options, out, index, err);
  select_log l;
  memset(&l, 0, sizeof l);
  vyre_status st = create_covering(host, (uint32_t)i, host_forced_by(host), n, options, out, index,
                                   &l);
  if (st == VYRE_OK) return VYRE_OK;
  if (!l.lacking) return vyre_error_set(err, st, 0, "%s", l.text);
  return vyre_error_set(err, VYRE_UNSUPPORTED, 0,
                        "%s. Fix: force a backend that claims all of it, or none, so that one "
                        "that covers the program is chosen (`vyre list` shows what each claims)",
                        l.text);
}

/* Candidates in selection order; the first that covers `n` wins. */
static vyre_status create_best_for(vyre_host *host, const vyre_needs *n,
                                   const vyre_backend_options *options, vyre_backend **out,
                                   uint32_t *index, vyre_error *err) {
  uint32_t count = 0;
  uint32_t *order = host_selection_order(host, &count);
  if (!order)
    return vyre_error_set(err, VYRE_OUT_OF_MEMORY, ENOMEM,
                          "selecting a backend: out of memory. Fix: free memory");
  /* None registered: vyre_host_create's message says what was searched. */
  if (count == 0) {
    free(order);
    return vyre_host_create(host, NULL, options, out, index, err);
  }
  select_log l;
  memset(&l, 0, sizeof l);
  l.last = VYRE_NO_DEVICE;
  for (uint32_t k = 0; k < count; k++) {
    if (create_covering(host, order[k], NULL, n, options, out, index, &l) == VYRE_OK) {
      free(order);
      return VYRE_OK;
    }
  }
  free(order);
  if (l.lacking)
    return vyre_error_set(err, VYRE_UNSUPPORTED, 0,
                          "no backend can run this program: %s. Fix: add a backend that claims "
                          "what is missing (`vyre list` shows what each claims), or keep the "
                          "program within what one claims",
                          l.text);
  return vyre_error_set(err, l.last, 0,
                        "no usable vyre backend: %s. Fix: see `vyre list`; install the missing "
                        "driver or device, or add a backend that works here",
                        l.text);
}

vyre_status vyre_host_create_for(vyre_host *host, const void *program, uint64_t size,
                                 const vyre_dispatch_options *dispatch,
                                 const vyre_backend_options *options, vyre_backend **out,
                                 uint32_t *index, vyre_error *err) {
  if (out) *out = NULL;
  if (!host || !out || !program)
    return vyre_error_set(err, VYRE_INVALID_ARGUMENT, 0,
                          "vyre_host_create_for: %s is NULL. Fix: pass the host, the program's "
                          "bytes and the address of a vyre_backend *",
                          !host ? "host" : !out ? "out" : "program");
  if (host->magic != HOST_MAGIC)
    return vyre_error_set(err, VYRE_INVALID_ARGUMENT, 0,
                          "vyre_host_create_for: the host was closed. Fix: pass one "
                          "vyre_host_open made, before its vyre_host_close");
  if (host->no_load) return host_no_load_error("vyre_host_create_for", err);
  vyre_status checked = host_check_backend_options("vyre_host_create_for", options, err);
  if (checked != VYRE_OK) return checked;
  /* The dispatch options the program will run under: checked as a dispatch checks them. */
  checked = host_check_options(NULL, "vyre_host_create_for", dispatch, err);
  if (checked != VYRE_OK) return checked;
  if (size > VYRE_PROGRAM_MAX_SIZE)
    return vyre_error_set(err, VYRE_LIMIT, 0,
                          "vyre_host_create_for: the program is %llu bytes, over the %u the "
                          "format allows. Fix: pass a program image",
                          (unsigned long long)size, (unsigned)VYRE_PROGRAM_MAX_SIZE);
  vyre_program *p = NULL;
  vyre_status st = vyre_program_decode(program, (size_t)size, &p, err);
  if (st != VYRE_OK) {
    vyre_error_prefix(err, "vyre_host_create_for");
    return st;
  }
  vyre_needs n;
  memset(&n, 0, sizeof n);
  n.struct_size = sizeof n;
  st = vyre_program_needs(p, dispatch, &n, err);
  vyre_program_free(p);
  if (st != VYRE_OK) {
    vyre_error_prefix(err, "vyre_host_create_for");
    return st;
  }
  if (vyre_host_forced_id(host)) return create_forced(host, &n, options, out, index, err);
  return create_best_for(host, &n, options, out, index, err);
}
