/* guard.c -- the instance libvyre-host hands out: forwards every call to the plugin's instance and checks what comes back before the caller sees it. */
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"
#include "abi/support/sized.h"
#include "vyre/vyre_program.h"
#include "vyre/vyre_support.h"

#define GUARD_MAGIC 0x4452415547455259ull /* "YREGUARD" */

/* What a dispatch must return: one output per output buffer of its
 * program, each of the byte size the program's geometry gives. */
typedef struct expect {
  int count_known, sizes_known;
  uint32_t count;
  uint64_t size[VYRE_MAX_BUFFERS];
} expect;

/* A pending dispatch (its expected outputs) or a pipeline (its program). */
typedef struct track {
  int is_pipeline;
  uint64_t handle;
  expect want;            /* pending */
  vyre_program *program;  /* pipeline: owned, decoded at its first dispatch */
  void *bytes;            /* pipeline: a copy of its image until then */
  uint64_t size;
} track;

typedef struct host_guard {
  vyre_backend head;      /* what callers hold; head.vt == &vt */
  vyre_backend_vtable vt; /* an entry is set exactly where the plugin's is */
  uint64_t magic;
  vyre_backend *inner;    /* the plugin's instance */
  char id[HOST_ID_MAX + 1];
  char *path;             /* the plugin file, for messages */
  pthread_mutex_t lock;   /* guards the cache and the tracks */
  void *cache_bytes;      /* the last program seen as bytes, and its decoding */
  uint64_t cache_size;
  vyre_program *cache;
  track *tracks;
  uint32_t track_count, track_cap;
  host_validate *validate; /* validate.c */
  int validating;          /* $VYRE_VALIDATE selects this instance's dispatches */
} host_guard;

static host_guard *guard_of(vyre_backend *self) {
  host_guard *g = (host_guard *)self;
  return g && g->head.vt == &g->vt && g->magic == GUARD_MAGIC ? g : NULL;
}

vyre_backend *vyre_host_backend_native(vyre_backend *backend) {
  /* Only the head is read before we know the object is ours: its vt
   * points into the object itself. */
  if (!backend ||
      (const void *)backend->vt != (const void *)((const char *)backend + offsetof(host_guard, vt)))
    return backend;
  host_guard *g = guard_of(backend);
  return g ? g->inner : backend;
}

/* ------------------------------------------------------------------ */
/* Errors                                                              */
/* ------------------------------------------------------------------ */

#define GUARD_FIX                                                                           \
  " Fix: this is a bug in the backend plugin %s; report it to its authors, or use another " \
  "backend (`vyre list` shows them; VYRE_BACKEND or --backend picks one)"

/* A contract violation: VYRE_INTERNAL naming the backend and the entry. */
static vyre_status violation(const host_guard *g, vyre_error *err, const char *entry,
                             const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 4, 5)))
#endif
    ;
static vyre_status violation(const host_guard *g, vyre_error *err, const char *entry,
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

/* A fresh error record for the plugin to write; only the head is cleared
 * (the message is 2 KiB and this is on every call). */
#define PLUGIN_ERROR(e) \
  vyre_error e;         \
  e.struct_size = sizeof e; e.status = 0; e.native_code = 0; e.message[0] = '\0'

/* Pass the plugin's failure on: the status must be a vyre_status, the
 * message is cut at its last byte if the plugin left no NUL. */
static vyre_status finish(const host_guard *g, const char *entry, vyre_status st,
                          vyre_error *e, vyre_error *err) {
  if (st == VYRE_OK) return VYRE_OK;
  if ((uint32_t)st >= (uint32_t)VYRE_STATUS_COUNT_)
    return violation(g, err, entry, "it returned status %d, which is no vyre_status", (int)st);
  e->message[sizeof e->message - 1] = '\0';
  return vyre_error_set(err, st, e->native_code, "%s",
                        e->message[0] ? e->message : "(the backend gave no message)");
}

/* ------------------------------------------------------------------ */
/* What a dispatch must return                                         */
/* ------------------------------------------------------------------ */

/* Fill *w from a decoded program and the call's inputs and options. */
static void expect_from(const vyre_program *p, const vyre_input *inputs, uint32_t input_count,
                        const vyre_dispatch_options *options, expect *w) {
  w->count_known = 1;
  w->count = p->output_count;
  if (input_count != p->input_count || (input_count && !inputs)) return;
  uint64_t sizes[VYRE_MAX_BUFFERS];
  for (uint32_t i = 0; i < input_count && i < VYRE_MAX_BUFFERS; i++) sizes[i] = inputs[i].size;
  vyre_geometry geo;
  if (vyre_geometry_derive(p, sizes, NULL, options, &geo, NULL) != VYRE_OK) return;
  for (uint32_t b = 0; b < p->buffer_count; b++) {
    int32_t k = p->buffers[b].output_index;
    if (k >= 0 && (uint32_t)k < VYRE_MAX_BUFFERS) w->size[k] = geo.out_size[b];
  }
  w->sizes_known = 1;
}

static track *find_track(host_guard *g, int is_pipeline, uint64_t handle) {
  for (uint32_t i = 0; i < g->track_count; i++)
    if (g->tracks[i].handle == handle && g->tracks[i].is_pipeline == is_pipeline)
      return &g->tracks[i];
  return NULL;
}

static void drop_track(host_guard *g, track *t) {
  vyre_program_free(t->program);
  free(t->bytes);
  *t = g->tracks[--g->track_count];
}

/* Called with the lock held.  Out of memory: the handle is not tracked
 * and its outputs are checked without a program. */
static track *add_track(host_guard *g, int is_pipeline, uint64_t handle) {
  track *old = find_track(g, is_pipeline, handle);
  if (old) drop_track(g, old); /* the plugin reused a handle */
  if (g->track_count == g->track_cap) {
    uint32_t cap = g->track_cap ? g->track_cap * 2 : 8;
    track *grown = realloc(g->tracks, cap * sizeof *grown);
    if (!grown) return NULL;
    g->tracks = grown;
    g->track_cap = cap;
  }
  track *t = &g->tracks[g->track_count++];
  memset(t, 0, sizeof *t);
  t->is_pipeline = is_pipeline;
  t->handle = handle;
  return t;
}

/* What the program of a dispatch must return.  A program the host cannot
 * decode (the plugin must have refused it) leaves everything unknown. */
static void expect_for(host_guard *g, const vyre_program_ref *program, const vyre_input *inputs,
                       uint32_t input_count, const vyre_dispatch_options *options, expect *w) {
  memset(w, 0, offsetof(expect, size));
  vyre_program_ref ref;
  if (!program || vyre__sized_read(&ref, sizeof ref, program) < offsetof(vyre_program_ref, pipeline))
    return;
  if (program->struct_size < sizeof ref) ref.pipeline = 0;
  pthread_mutex_lock(&g->lock);
  if (ref.pipeline) {
    track *t = find_track(g, 1, ref.pipeline);
    if (t && !t->program && t->bytes) {
      /* Decoded at the first dispatch, not at pipeline_create: creating
       * a pipeline of a cached plan stays a few hundred ns. */
      if (vyre_program_decode(t->bytes, (size_t)t->size, &t->program, NULL) != VYRE_OK)
        t->program = NULL;
      free(t->bytes);
      t->bytes = NULL;
    }
    if (t) expect_from(t->program, inputs, input_count, options, w);
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
static vyre_status check_outputs(const host_guard *g, const char *entry, const vyre_outputs *o,
                                 const expect *w, vyre_error *err) {
  if (!o) return violation(g, err, entry, "it returned VYRE_OK but no outputs");
  if (o->struct_size < offsetof(vyre_outputs, items) + sizeof(void *) ||
      o->struct_size > HOST_STRUCT_MAX)
    return violation(g, err, entry, "its vyre_outputs has struct_size %u (needs %zu to %u)",
                     o->struct_size, offsetof(vyre_outputs, items) + sizeof(void *),
                     HOST_STRUCT_MAX);
  if (w->count_known && o->count != w->count)
    return violation(g, err, entry, "it returned %u output%s for a program with %u", o->count,
                     o->count == 1 ? "" : "s", w->count);
  if (o->count > VYRE_MAX_BUFFERS)
    return violation(g, err, entry, "it returned %u outputs; a program has at most %u",
                     o->count, VYRE_MAX_BUFFERS);
  if (o->count && !o->items)
    return violation(g, err, entry, "it returned %u output%s with items NULL", o->count,
                     o->count == 1 ? "" : "s");
  for (uint32_t k = 0; k < o->count; k++) {
    const vyre_output *it = &o->items[k];
    if (w->sizes_known && it->size != w->size[k])
      return violation(g, err, entry, "output %u is %llu bytes, the program's output %u is %llu",
                       k, (unsigned long long)it->size, k, (unsigned long long)w->size[k]);
    if (it->size && !it->data)
      return violation(g, err, entry, "output %u has %llu bytes at a NULL data pointer", k,
                       (unsigned long long)it->size);
  }
  return VYRE_OK;
}

/* The caller's timing record, as a full-size copy the plugin writes. */
static vyre_timing *timing_in(const vyre_timing *caller, vyre_timing *copy) {
  if (!caller) return NULL;
  vyre__sized_read(copy, sizeof *copy, caller);
  return copy;
}
static void timing_out(vyre_timing *caller, const vyre_timing *copy) {
  if (caller) vyre__sized_write(caller, copy, sizeof *copy);
}

/* ------------------------------------------------------------------ */
/* The entries                                                         */
/* ------------------------------------------------------------------ */

#define GUARD(self, err, entry)                                                          \
  host_guard *g = guard_of(self);                                                        \
  if (!g)                                                                                \
    return vyre_error_set(err, VYRE_INVALID_ARGUMENT, 0,                                 \
                          entry ": self is not an instance made by vyre_host_create. "   \
                          "Fix: pass the vyre_backend * it returned");                   \
  const vyre_backend_vtable *ivt = g->inner->vt

static void guard_free(host_guard *g) {
  for (uint32_t i = 0; i < g->track_count; i++) vyre_program_free(g->tracks[i].program);
  free(g->tracks);
  vyre_program_free(g->cache);
  free(g->cache_bytes);
  host_validate_free(g->validate);
  free(g->path);
  pthread_mutex_destroy(&g->lock);
  g->magic = 0;
  free(g);
}

static void g_destroy(vyre_backend *self) {
  host_guard *g = guard_of(self);
  if (!g) return;
  g->inner->vt->destroy(g->inner);
  guard_free(g);
}

static vyre_status g_device_profile(vyre_backend *self, vyre_device_profile *out,
                                    vyre_error *err) {
  GUARD(self, err, "device_profile");
  if (!out || out->struct_size < sizeof(uint32_t))
    return vyre_error_set(err, VYRE_INVALID_ARGUMENT, 0,
                          "device_profile: out is NULL or its struct_size is unset. Fix: pass a "
                          "vyre_device_profile with struct_size = sizeof(vyre_device_profile)");
  vyre_device_profile p;
  vyre__sized_read(&p, sizeof p, out);
  p.struct_size = out->struct_size < sizeof p ? out->struct_size : (uint32_t)sizeof p;
  PLUGIN_ERROR(e);
  vyre_status st = ivt->device_profile(g->inner, &p, &e);
  if (st != VYRE_OK) return finish(g, "device_profile", st, &e, err);
  /* Strings a caller prints: terminated whatever the plugin wrote. */
  p.name[sizeof p.name - 1] = '\0';
  p.backend_id[sizeof p.backend_id - 1] = '\0';
  vyre__sized_write(out, &p, sizeof p);
  return VYRE_OK;
}

static vyre_status g_prepare(vyre_backend *self, vyre_error *err) {
  GUARD(self, err, "prepare");
  PLUGIN_ERROR(e);
  return finish(g, "prepare", ivt->prepare(g->inner, &e), &e, err);
}

static vyre_status g_shutdown(vyre_backend *self, vyre_error *err) {
  GUARD(self, err, "shutdown");
  PLUGIN_ERROR(e);
  return finish(g, "shutdown", ivt->shutdown(g->inner, &e), &e, err);
}

static vyre_status g_metrics(vyre_backend *self, vyre_metric *out, uint32_t capacity,
                             uint32_t *count, vyre_error *err) {
  GUARD(self, err, "metrics");
  PLUGIN_ERROR(e);
  uint32_t n = 0;
  vyre_status st = ivt->metrics(g->inner, out, capacity, &n, &e);
  if (st != VYRE_OK) return finish(g, "metrics", st, &e, err);
  /* *count may exceed capacity (how many exist); the names written are
   * the first min(count, capacity). */
  for (uint32_t i = 0; out && i < n && i < capacity; i++) out[i].name[sizeof out[i].name - 1] = '\0';
  if (count) *count = n;
  return VYRE_OK;
}

static vyre_status g_dispatch(vyre_backend *self, const vyre_program_ref *program,
                              const vyre_input *inputs, uint32_t input_count,
                              const vyre_dispatch_options *options, vyre_outputs **out,
                              vyre_timing *timing, vyre_error *err) {
  GUARD(self, err, "dispatch");
  if (HOST_VALIDATE_HOOK(g->validating, options))
    return host_validate_dispatch(g->validate, self, program, inputs, input_count, options, out,
                                  timing, err);
  if (out) *out = NULL;
  vyre_outputs *o = NULL;
  vyre_timing t;
  PLUGIN_ERROR(e);
  vyre_status st = ivt->dispatch(g->inner, program, inputs, input_count, options,
                                 out ? &o : NULL, timing_in(timing, &t), &e);
  timing_out(timing, &t);
  /* On failure the plugin's *out is not looked at: it may be anything. */
  if (st != VYRE_OK || !out) return finish(g, "dispatch", st, &e, err);
  expect w;
  expect_for(g, program, inputs, input_count, options, &w);
  st = check_outputs(g, "dispatch", o, &w, err);
  if (st != VYRE_OK) {
    if (o && ivt->outputs_free) ivt->outputs_free(g->inner, o);
    return st;
  }
  *out = o;
  return VYRE_OK;
}

static vyre_status g_dispatch_into(vyre_backend *self, const vyre_program_ref *program,
                                   const vyre_input *inputs, uint32_t input_count,
                                   const vyre_dispatch_options *options,
                                   vyre_output_slot *outputs, uint32_t output_count,
                                   vyre_timing *timing, vyre_error *err) {
  GUARD(self, err, "dispatch_into");
  if (HOST_VALIDATE_HOOK(g->validating, options))
    return host_validate_dispatch_into(g->validate, self, program, inputs, input_count, options,
                                       outputs, output_count, timing, err);
  vyre_timing t;
  PLUGIN_ERROR(e);
  vyre_status st = ivt->dispatch_into(g->inner, program, inputs, input_count, options, outputs,
                                      output_count, timing_in(timing, &t), &e);
  timing_out(timing, &t);
  if (st != VYRE_OK || !outputs) return finish(g, "dispatch_into", st, &e, err);
  expect w;
  expect_for(g, program, inputs, input_count, options, &w);
  for (uint32_t k = 0; k < output_count; k++) {
    if (outputs[k].size > outputs[k].capacity)
      return violation(g, err, "dispatch_into",
                       "it says it wrote %llu bytes into output slot %u of %llu",
                       (unsigned long long)outputs[k].size, k,
                       (unsigned long long)outputs[k].capacity);
    if (w.sizes_known && k < w.count && outputs[k].size != w.size[k])
      return violation(g, err, "dispatch_into",
                       "output %u is %llu bytes, the program's output %u is %llu", k,
                       (unsigned long long)outputs[k].size, k, (unsigned long long)w.size[k]);
  }
  return VYRE_OK;
}

static vyre_status g_dispatch_async(vyre_backend *self, const vyre_program_ref *program,
                                    const vyre_input *inputs, uint32_t input_count,
                                    const vyre_dispatch_options *options, vyre_pending *out,
                                    vyre_error *err) {
  GUARD(self, err, "dispatch_async");
  if (HOST_VALIDATE_HOOK(0, options))
    return host_validate_dispatch_async(g->validate, self, program, inputs, input_count, options,
                                        out, err);
  vyre_pending h = 0;
  PLUGIN_ERROR(e);
  vyre_status st = ivt->dispatch_async(g->inner, program, inputs, input_count, options,
                                       out ? &h : NULL, &e);
  if (out) *out = 0;
  if (st != VYRE_OK || !out) return finish(g, "dispatch_async", st, &e, err);
  if (h == 0) return violation(g, err, "dispatch_async", "it returned VYRE_OK and pending handle 0");
  expect w;
  expect_for(g, program, inputs, input_count, options, &w);
  pthread_mutex_lock(&g->lock);
  track *tr = add_track(g, 0, h);
  if (tr) tr->want = w;
  pthread_mutex_unlock(&g->lock);
  *out = h;
  return VYRE_OK;
}

static vyre_status g_pending_poll(vyre_backend *self, vyre_pending pending, int *ready,
                                  vyre_error *err) {
  GUARD(self, err, "pending_poll");
  int r = 0;
  PLUGIN_ERROR(e);
  vyre_status st = ivt->pending_poll(g->inner, pending, ready ? &r : NULL, &e);
  if (st != VYRE_OK || !ready) return finish(g, "pending_poll", st, &e, err);
  if (r != 0 && r != 1)
    return violation(g, err, "pending_poll", "it set *ready to %d (0 or 1 expected)", r);
  *ready = r;
  return VYRE_OK;
}

static vyre_status g_pending_wait(vyre_backend *self, vyre_pending pending, vyre_outputs **out,
                                  vyre_timing *timing, vyre_error *err) {
  GUARD(self, err, "pending_wait");
  if (out) *out = NULL;
  /* The wait releases the handle whatever it returns: so does the track. */
  expect w;
  memset(&w, 0, offsetof(expect, size));
  pthread_mutex_lock(&g->lock);
  track *tr = find_track(g, 0, pending);
  if (tr) {
    w = tr->want;
    drop_track(g, tr);
  }
  pthread_mutex_unlock(&g->lock);
  vyre_outputs *o = NULL;
  vyre_timing t;
  PLUGIN_ERROR(e);
  vyre_status st = ivt->pending_wait(g->inner, pending, out ? &o : NULL, timing_in(timing, &t), &e);
  timing_out(timing, &t);
  if (st != VYRE_OK || !out) return finish(g, "pending_wait", st, &e, err);
  st = check_outputs(g, "pending_wait", o, &w, err);
  if (st != VYRE_OK) {
    if (o && ivt->outputs_free) ivt->outputs_free(g->inner, o);
    return st;
  }
  *out = o;
  return VYRE_OK;
}

static vyre_status g_pending_release(vyre_backend *self, vyre_pending pending, vyre_error *err) {
  GUARD(self, err, "pending_release");
  pthread_mutex_lock(&g->lock);
  track *tr = find_track(g, 0, pending);
  if (tr) drop_track(g, tr);
  pthread_mutex_unlock(&g->lock);
  PLUGIN_ERROR(e);
  return finish(g, "pending_release", ivt->pending_release(g->inner, pending, &e), &e, err);
}

static void g_outputs_free(vyre_backend *self, vyre_outputs *outputs) {
  host_guard *g = guard_of(self);
  if (g) g->inner->vt->outputs_free(g->inner, outputs);
}

static vyre_status g_resident_alloc(vyre_backend *self, uint64_t size, vyre_resident *out,
                                    vyre_error *err) {
  GUARD(self, err, "resident_alloc");
  vyre_resident h = 0;
  PLUGIN_ERROR(e);
  vyre_status st = ivt->resident_alloc(g->inner, size, out ? &h : NULL, &e);
  if (out) *out = 0;
  if (st != VYRE_OK || !out) return finish(g, "resident_alloc", st, &e, err);
  if (h == 0) return violation(g, err, "resident_alloc", "it returned VYRE_OK and handle 0");
  *out = h;
  return VYRE_OK;
}

/* Entries whose returns are a status and an error only. */
#define FORWARD(entry, params, args)                                  \
  static vyre_status g_##entry params {                               \
    GUARD(self, err, #entry);                                         \
    PLUGIN_ERROR(e);                                                  \
    return finish(g, #entry, ivt->entry args, &e, err);               \
  }
FORWARD(resident_free, (vyre_backend * self, vyre_resident buffer, vyre_error *err),
        (g->inner, buffer, &e))
FORWARD(resident_size, (vyre_backend * self, vyre_resident buffer, uint64_t *size, vyre_error *err),
        (g->inner, buffer, size, &e))
FORWARD(resident_upload,
        (vyre_backend * self, vyre_resident buffer, const void *data, uint64_t size, vyre_error *err),
        (g->inner, buffer, data, size, &e))
FORWARD(resident_upload_at,
        (vyre_backend * self, vyre_resident buffer, uint64_t offset, const void *data,
         uint64_t size, vyre_error *err),
        (g->inner, buffer, offset, data, size, &e))
FORWARD(resident_download,
        (vyre_backend * self, vyre_resident buffer, void *dst, uint64_t capacity, vyre_error *err),
        (g->inner, buffer, dst, capacity, &e))
FORWARD(resident_download_range,
        (vyre_backend * self, vyre_resident buffer, uint64_t offset, void *dst, uint64_t size,
         vyre_error *err),
        (g->inner, buffer, offset, dst, size, &e))
FORWARD(resident_upload_many,
        (vyre_backend * self, const vyre_resident_copy *copies, uint32_t count, vyre_error *err),
        (g->inner, copies, count, &e))
FORWARD(resident_download_many,
        (vyre_backend * self, const vyre_resident_copy *copies, uint32_t count, vyre_error *err),
        (g->inner, copies, count, &e))
#undef FORWARD

static vyre_status g_dispatch_resident(vyre_backend *self, const vyre_program_ref *program,
                                       const vyre_resident *buffers, uint32_t buffer_count,
                                       const vyre_dispatch_options *options, vyre_timing *timing,
                                       vyre_error *err) {
  GUARD(self, err, "dispatch_resident");
  if (HOST_VALIDATE_HOOK(0, options))
    return host_validate_dispatch_resident(g->validate, self, program, buffers, buffer_count,
                                           options, timing, err);
  vyre_timing t;
  PLUGIN_ERROR(e);
  vyre_status st = ivt->dispatch_resident(g->inner, program, buffers, buffer_count, options,
                                          timing_in(timing, &t), &e);
  timing_out(timing, &t);
  return finish(g, "dispatch_resident", st, &e, err);
}

static vyre_status g_dispatch_sequence(vyre_backend *self, const vyre_sequence_step *steps,
                                       uint32_t step_count, uint32_t repeat,
                                       const vyre_resident_copy *reads, uint32_t read_count,
                                       vyre_timing *timing, vyre_error *err) {
  GUARD(self, err, "dispatch_sequence");
  vyre_timing t;
  PLUGIN_ERROR(e);
  vyre_status st = ivt->dispatch_sequence(g->inner, steps, step_count, repeat, reads, read_count,
                                          timing_in(timing, &t), &e);
  timing_out(timing, &t);
  return finish(g, "dispatch_sequence", st, &e, err);
}

static vyre_status g_pipeline_create(vyre_backend *self, const void *program_bytes,
                                     uint64_t program_size, const vyre_dispatch_options *options,
                                     vyre_pipeline *out, vyre_error *err) {
  GUARD(self, err, "pipeline_create");
  if (HOST_VALIDATE_HOOK(g->validating, options))
    return host_validate_pipeline_create(g->validate, self, program_bytes, program_size, options,
                                         out, err);
  vyre_pipeline h = 0;
  PLUGIN_ERROR(e);
  vyre_status st =
      ivt->pipeline_create(g->inner, program_bytes, program_size, options, out ? &h : NULL, &e);
  if (out) *out = 0;
  if (st != VYRE_OK || !out) return finish(g, "pipeline_create", st, &e, err);
  if (h == 0) return violation(g, err, "pipeline_create", "it returned VYRE_OK and pipeline 0");
  /* Keep the program's bytes, so that dispatches of the pipeline are
   * checked (decoded at the first one). */
  void *copy = program_bytes && program_size && program_size <= SIZE_MAX
                   ? malloc((size_t)program_size)
                   : NULL;
  if (copy) {
    memcpy(copy, program_bytes, (size_t)program_size);
    pthread_mutex_lock(&g->lock);
    track *tr = add_track(g, 1, h);
    if (tr) {
      tr->bytes = copy;
      tr->size = program_size;
    } else {
      free(copy);
    }
    pthread_mutex_unlock(&g->lock);
  }
  *out = h;
  return VYRE_OK;
}

static vyre_status g_pipeline_release(vyre_backend *self, vyre_pipeline pipeline,
                                      vyre_error *err) {
  GUARD(self, err, "pipeline_release");
  PLUGIN_ERROR(e);
  vyre_status st = ivt->pipeline_release(g->inner, pipeline, &e);
  host_validate_pipeline_release(g->validate, pipeline);
  pthread_mutex_lock(&g->lock);
  track *tr = find_track(g, 1, pipeline);
  if (tr) drop_track(g, tr);
  pthread_mutex_unlock(&g->lock);
  return finish(g, "pipeline_release", st, &e, err);
}

static vyre_status g_get_extension(vyre_backend *self, const char *name, uint32_t version,
                                   const void **out, vyre_error *err) {
  GUARD(self, err, "get_extension");
  const void *table = NULL;
  PLUGIN_ERROR(e);
  vyre_status st = ivt->get_extension(g->inner, name, version, out ? &table : NULL, &e);
  if (out) *out = NULL;
  if (st != VYRE_OK || !out) return finish(g, "get_extension", st, &e, err);
  if (!table)
    return violation(g, err, "get_extension", "it returned VYRE_OK and no table for '%s'",
                     name ? name : "(null)");
  vyre_extension_head head;
  memcpy(&head, table, sizeof head);
  if (head.struct_size < sizeof head || head.struct_size > HOST_STRUCT_MAX || head.version < version)
    return violation(g, err, "get_extension",
                     "its table for '%s' revision %u has struct_size %u and revision %u",
                     name ? name : "(null)", version, head.struct_size, head.version);
  *out = table;
  return VYRE_OK;
}

/* ------------------------------------------------------------------ */
/* Wrapping                                                            */
/* ------------------------------------------------------------------ */

vyre_status host_guard_wrap(const host_entry *e, vyre_backend *inner, vyre_backend **out,
                            vyre_error *err) {
  *out = NULL;
  host_guard *g = calloc(1, sizeof *g);
  if (!g) goto fail_alloc;
  g->path = strdup(e->path);
  if (!g->path) goto fail_path;
  if (pthread_mutex_init(&g->lock, NULL) != 0) goto fail_lock;
  g->magic = GUARD_MAGIC;
  g->inner = inner;
  memcpy(g->id, e->id, sizeof g->id);
  g->head.struct_size = sizeof g->head;
  g->head.vt = &g->vt;
  g->validate = host_validate_new(e, &g->head, &g->validating);
  if (!g->validate) goto fail_validate;
  /* The host's table is no longer than the plugin's, and has exactly the
   * entries the plugin has: VYRE_HOST_HAS answers as it would for the
   * plugin's own.  Entries beyond this host's vyre.h are not reachable
   * (the host could not check them). */
  uint32_t size = inner->vt->struct_size;
  g->vt.struct_size = size < sizeof g->vt ? size : (uint32_t)sizeof g->vt;
#define HAS(entry) vyre_host_vtable_has(inner, offsetof(vyre_backend_vtable, entry))
#define WRAP(entry) g->vt.entry = HAS(entry) ? g_##entry : NULL
  g->vt.destroy = g_destroy;
  WRAP(device_profile);
  WRAP(prepare);
  WRAP(shutdown);
  WRAP(metrics);
  WRAP(dispatch);
  WRAP(dispatch_into);
  WRAP(dispatch_async);
  WRAP(pending_poll);
  WRAP(pending_wait);
  WRAP(pending_release);
  WRAP(outputs_free);
  WRAP(resident_alloc);
  WRAP(resident_free);
  WRAP(resident_size);
  WRAP(resident_upload);
  WRAP(resident_upload_at);
  WRAP(resident_download);
  WRAP(resident_download_range);
  WRAP(resident_upload_many);
  WRAP(resident_download_many);
  WRAP(dispatch_resident);
  WRAP(dispatch_sequence);
  WRAP(pipeline_create);
  WRAP(pipeline_release);
  WRAP(get_extension);
#undef WRAP
#undef HAS
  /* outputs returned by dispatch are freed by outputs_free: one without
   * the other would leak or crash. */
  if (!g->vt.outputs_free) g->vt.dispatch = NULL, g->vt.pending_wait = NULL;
  *out = &g->head;
  return VYRE_OK;

fail_validate:
  pthread_mutex_destroy(&g->lock);
fail_lock:
  free(g->path);
fail_path:
  free(g);
fail_alloc:
  return vyre_error_set(err, VYRE_OUT_OF_MEMORY, 0,
                        "creating backend '%s': out of memory. Fix: free memory", e->id);
}
