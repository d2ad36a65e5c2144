/* guard_expect.c -- what the checking instance expects a plugin to return: the outputs of a dispatch (from its program or its pipeline's), its statuses; contract violations. */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "abi/support/safetext.h"
#include "guard.h"
#include "vyre/vyre_support.h"

#define GUARD_FIX                                                                           \
  " Fix: this is a bug in the backend plugin %s; report it to its authors, or use another " \
  "backend (`vyre list` shows them; VYRE_BACKEND or --backend picks one)"

vyre_status host_violation(const host_guard *g, vyre_error *err, const char *entry,
                             const char *fmt, ...) {
  char what[VYRE_ERROR_MESSAGE_MAX / 2];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(what, sizeof what, fmt, ap);
  va_end(ap);
  host_log("backend '%s' %s: %s", g->id, entry, what);
  return vyre_error_set(err, VYRE_INTERNAL, 0, "backend '%s' broke the vyre ABI in %s: %s." GUARD_FIX,
                        g->id, entry, what, g->path);
}


/* Pass the plugin's failure on: the status must be a vyre_status, the
 * message is cut at its last byte if the plugin left no NUL. */
vyre_status host_finish(const host_guard *g, const char *entry, vyre_status st,
                          vyre_error *e, vyre_error *err) {
  if (st == VYRE_OK) return VYRE_OK;
  if ((uint32_t)st >= (uint32_t)VYRE_STATUS_COUNT_)
    return host_violation(g, err, entry, "it returned status %d, which is no vyre_status", (int)st);
  e->message[sizeof e->message - 1] = '\0';
  /* The plugin's text reaches terminals: no control byte or escape
   * sequence passes (newlines do: a JIT log has lines). */
  vyre__safe_text(e->message, sizeof e->message, e->message, sizeof e->message, VYRE__SAFE_TEXT);
  return vyre_error_set(err, st, e->native_code, "%s",
                        e->message[0] ? e->message : "(the backend gave no message)");
}

int host_factory_status(vyre_status *st, const char *path, char *reason, size_t reason_size) {
  if ((uint32_t)*st < (uint32_t)VYRE_STATUS_COUNT_) return 0;
  snprintf(reason, reason_size,
           "factory returned %d (0x%x), which is no vyre_status. Fix: this is a bug in the "
           "backend plugin %s; report it to its authors",
           (int)*st, (unsigned)*st, path);
  *st = VYRE_INTERNAL;
  return 1;
}

/* Fill *w from a decoded program and the call's inputs and options.  A
 * call whose geometry libvyre refuses is one every backend must refuse
 * (they derive it with the same vyre_geometry_derive): w->refused says
 * why, and the sizes stay unknown. */
static void expect_from(const vyre_program *p, const vyre_input *inputs, uint32_t input_count,
                        const vyre_dispatch_options *options, expect *w) {
  w->count_known = 1;
  w->count = p->output_count;
  if (input_count != p->input_count || (input_count && !inputs)) {
    snprintf(w->refused, sizeof w->refused, "the program takes %u input%s, the call passed %u",
             p->input_count, p->input_count == 1 ? "" : "s", input_count);
    return;
  }
  uint64_t sizes[VYRE_MAX_BUFFERS];
  for (uint32_t i = 0; i < input_count && i < VYRE_MAX_BUFFERS; i++) sizes[i] = inputs[i].size;
  vyre_geometry geo;
  if (vyre_geometry_derive(p, sizes, NULL, options, &geo, NULL) != VYRE_OK) {
    /* Derived again for its message: a 2 KiB error record is not zeroed
     * on every checked dispatch, only on this rare path.  "dispatch: grid
     * ... is over the limit .... Fix: ...": the why alone is kept. */
    vyre_error e = VYRE_ERROR_INIT;
    vyre_geometry_derive(p, sizes, NULL, options, &geo, &e);
    const char *why = strncmp(e.message, "dispatch: ", 10) == 0 ? e.message + 10 : e.message;
    size_t n = strcspn(why, ".");
    snprintf(w->refused, sizeof w->refused, "%.*s", (int)n, why);
    if (!w->refused[0]) snprintf(w->refused, sizeof w->refused, "%s", vyre_status_name(e.status));
    return;
  }
  for (uint32_t b = 0; b < p->buffer_count; b++) {
    int32_t k = p->buffers[b].output_index;
    if (k >= 0 && (uint32_t)k < VYRE_MAX_BUFFERS) w->size[k] = geo.out_size[b];
  }
  w->sizes_known = 1;
}

/* What the program of a dispatch must return.  A program the host cannot
 * decode (the plugin must have refused it) leaves everything unknown. */
void host_expect_for(host_guard *g, const vyre_program_ref *program, const vyre_input *inputs,
                       uint32_t input_count, const vyre_dispatch_options *options, expect *w) {
  memset(w, 0, offsetof(expect, refused)); /* the rest is written before it is read */
  w->refused[0] = '\0';
  vyre_program_ref ref;
  if (!program || vyre__sized_read(&ref, sizeof ref, program) < offsetof(vyre_program_ref, pipeline))
    return;
  if (program->struct_size < sizeof ref) ref.pipeline = 0;
  pthread_mutex_lock(&g->lock);
  if (ref.pipeline) {
    void *info = NULL;
    host_pipeline_info *t =
        host_handles_has(&g->handles, HOST_KIND_PIPELINE, ref.pipeline, &info) ? info : NULL;
    if (t && !t->program && t->bytes) {
      /* Decoded at the first dispatch, not at pipeline_create: creating
       * a pipeline of a cached plan stays a few hundred ns. */
      if (vyre_program_decode(t->bytes, (size_t)t->size, &t->program, NULL) != VYRE_OK)
        t->program = NULL;
      free(t->bytes);
      t->bytes = NULL;
    }
    /* A program this host cannot decode (a newer plugin's) goes unchecked. */
    if (t && t->program) expect_from(t->program, inputs, input_count, options, w);
  } else if (ref.bytes && ref.size) {
    /* One decoded program is kept: a caller dispatches the same one again
     * and again, and comparing bytes is cheaper than decoding them. */
    if (!(g->cache && g->cache_size == ref.size && memcmp(g->cache_bytes, ref.bytes, ref.size) == 0)) {
      vyre_program *p = NULL;
      void *copy = malloc(ref.size);
      if (copy && vyre_program_decode(ref.bytes, ref.size, &p, NULL) == VYRE_OK) {
        memcpy(copy, ref.bytes, ref.size);
        vyre_program_free(g->cache);
        free(g->cache_bytes);
        g->cache = p;
        g->cache_bytes = copy;
        g->cache_size = ref.size;
        copy = NULL;
      }
      free(copy);
    }
    if (g->cache && g->cache_size == ref.size && memcmp(g->cache_bytes, ref.bytes, ref.size) == 0)
      expect_from(g->cache, inputs, input_count, options, w);
  }
  pthread_mutex_unlock(&g->lock);
}

/* Check outputs the plugin returned with VYRE_OK. */
vyre_status host_check_outputs(const host_guard *g, const char *entry, const vyre_outputs *o,
                                 const expect *w, vyre_error *err) {
  if (w->refused[0])
    return host_violation(g, err, entry, "it returned VYRE_OK for a call every backend must "
                          "refuse (%s)", w->refused);
  if (!o) return host_violation(g, err, entry, "it returned VYRE_OK but no outputs");
  if (o->struct_size < offsetof(vyre_outputs, items) + sizeof(void *) ||
      o->struct_size > HOST_STRUCT_MAX)
    return host_violation(g, err, entry, "its vyre_outputs has struct_size %u (needs %zu to %u)",
                     o->struct_size, offsetof(vyre_outputs, items) + sizeof(void *),
                     HOST_STRUCT_MAX);
  if (w->count_known && o->count != w->count)
    return host_violation(g, err, entry, "it returned %u output%s for a program with %u", o->count,
                     o->count == 1 ? "" : "s", w->count);
  if (o->count > VYRE_MAX_BUFFERS)
    return host_violation(g, err, entry, "it returned %u outputs; a program has at most %u",
                     o->count, VYRE_MAX_BUFFERS);
  if (o->count && !o->items)
    return host_violation(g, err, entry, "it returned %u output%s with items NULL", o->count,
                     o->count == 1 ? "" : "s");
  for (uint32_t k = 0; k < o->count; k++) {
    const vyre_output *it = &o->items[k];
    if (w->sizes_known && it->size != w->size[k])
      return host_violation(g, err, entry, "output %u is %llu bytes, the program's output %u is %llu",
                       k, (unsigned long long)it->size, k, (unsigned long long)w->size[k]);
    if (it->size && !it->data)
      return host_violation(g, err, entry, "output %u has %llu bytes at a NULL data pointer", k,
                       (unsigned long long)it->size);
  }
  return VYRE_OK;
}
