/* guard.c -- the instance libvyre-host hands out: checks what the caller passes (guard_args.c), forwards every call to the plugin's instance, records the handles it hands out (guard_handles.c) and checks what comes back before the caller sees it (guard_expect.c). */
#include <pthread.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "guard.h"
#include "vyre/vyre_support.h"

/* Ours, live or destroyed (in quarantine), or NULL.  Only the head is
 * read before we know the object is ours: its vt points into itself. */
static host_guard *guard_of(vyre_backend *self) {
  host_guard *g = (host_guard *)self;
  if (!g || g->head.vt != &g->vt) return NULL;
  return g->magic == GUARD_MAGIC || g->magic == GUARD_DEAD ? g : NULL;
}

vyre_backend *vyre_host_backend_native(vyre_backend *backend) {
  /* Only the head is read before we know the object is ours: its vt
   * points into the object itself. */
  if (!backend ||
      (const void *)backend->vt != (const void *)((const char *)backend + offsetof(host_guard, vt)))
    return backend;
  host_guard *g = guard_of(backend);
  if (!g) return backend;
  return g->magic == GUARD_MAGIC ? g->inner : NULL; /* destroyed: nothing native left */
}

/* ------------------------------------------------------------------ */
/* The entries                                                         */
/* ------------------------------------------------------------------ */

/* The answer to a call on something that is not a live instance of ours. */
static vyre_status not_live(const host_guard *g, const char *entry, vyre_error *err) {
  if (g)
    return vyre_error_set(err, VYRE_INVALID_ARGUMENT, 0,
                          "%s: backend '%s' (instance %p) was destroyed. Fix: create a new "
                          "instance; do not use one after its destroy",
                          entry, g->id, (const void *)g);
  return vyre_error_set(err, VYRE_INVALID_ARGUMENT, 0,
                        "%s: self is not an instance made by vyre_host_create. Fix: pass the "
                        "vyre_backend * it returned",
                        entry);
}

#define GUARD(self, err, entry)                                                    \
  host_guard *g = guard_of(self);                                                  \
  if (!g || g->magic != GUARD_MAGIC) return not_live(g, entry, err);               \
  const vyre_backend_vtable *ivt = g->inner->vt

/* The caller's half of a dispatch on host buffers, checked before the
 * plugin runs. */
static vyre_status check_call(host_guard *g, const char *what, const vyre_program_ref *program,
                              const vyre_input *inputs, uint32_t input_count,
                              const vyre_dispatch_options *options, vyre_error *err) {
  vyre_status st = host_check_program(g, what, program, err);
  if (st == VYRE_OK) st = host_check_inputs(what, inputs, input_count, err);
  if (st == VYRE_OK) st = host_check_options(g, what, options, err);
  return st;
}

/* A misuse of a void entry: one line on stderr, since there is no error
 * record to fill. */
static void complain(const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 1, 2)))
#endif
    ;
static void complain(const char *fmt, ...) {
  char line[512];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(line, sizeof line, fmt, ap);
  va_end(ap);
  fprintf(stderr, "vyre-host: %s\n", line);
}

/* The instance is poisoned and kept in quarantine, not freed: a second
 * destroy, or any call through the stale pointer, finds GUARD_DEAD and is
 * a clear error instead of a use after free. */
static void g_destroy(vyre_backend *self) {
  host_guard *g = guard_of(self);
  if (!g) {
    if (self)
      complain("destroy: %p is not an instance made by vyre_host_create; ignored. Fix: pass the "
               "vyre_backend * it returned", (void *)self);
    return;
  }
  if (g->magic != GUARD_MAGIC) {
    complain("destroy: backend '%s' (instance %p) was already destroyed; ignored. Fix: destroy "
             "each instance once", g->id, (void *)g);
    return;
  }
  host_retire(g); /* frees the outputs still held, with the plugin's outputs_free */
  g->inner->vt->destroy(g->inner);
  g->inner = NULL;
  host_validate_free(g->validate);
  g->validate = NULL;
  vyre_program_free(g->cache);
  free(g->cache_bytes);
  free(g->path);
  g->cache = NULL, g->cache_bytes = NULL, g->path = NULL;
  pthread_mutex_destroy(&g->lock);
  g->magic = GUARD_DEAD;
  host_quarantine(g);
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
  if (st != VYRE_OK) return host_finish(g, "device_profile", st, &e, err);
  /* Strings a caller prints: terminated whatever the plugin wrote. */
  p.name[sizeof p.name - 1] = '\0';
  p.backend_id[sizeof p.backend_id - 1] = '\0';
  vyre__sized_write(out, &p, sizeof p);
  return VYRE_OK;
}

static vyre_status g_prepare(vyre_backend *self, vyre_error *err) {
  GUARD(self, err, "prepare");
  PLUGIN_ERROR(e);
  return host_finish(g, "prepare", ivt->prepare(g->inner, &e), &e, err);
}

static vyre_status g_shutdown(vyre_backend *self, vyre_error *err) {
  GUARD(self, err, "shutdown");
  PLUGIN_ERROR(e);
  return host_finish(g, "shutdown", ivt->shutdown(g->inner, &e), &e, err);
}

static vyre_status g_metrics(vyre_backend *self, vyre_metric *out, uint32_t capacity,
                             uint32_t *count, vyre_error *err) {
  GUARD(self, err, "metrics");
  if (!out && capacity)
    return vyre_error_set(err, VYRE_INVALID_ARGUMENT, 0,
                          "metrics: out is NULL with capacity %u. Fix: pass an array of capacity "
                          "vyre_metric, or capacity 0",
                          capacity);
  PLUGIN_ERROR(e);
  uint32_t n = 0;
  vyre_status st = ivt->metrics(g->inner, out, capacity, &n, &e);
  if (st != VYRE_OK) return host_finish(g, "metrics", st, &e, err);
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
  if (out) *out = NULL;
  vyre_status st = check_call(g, "dispatch", program, inputs, input_count, options, err);
  if (st != VYRE_OK) return st;
  if (HOST_VALIDATE_HOOK(g->validating, options))
    return host_validate_dispatch(g->validate, self, program, inputs, input_count, options, out,
                                  timing, err);
  vyre_outputs *o = NULL;
  vyre_timing t;
  PLUGIN_ERROR(e);
  st = ivt->dispatch(g->inner, program, inputs, input_count, options, out ? &o : NULL,
                     host_timing_in(timing, &t), &e);
  host_timing_out(timing, &t);
  /* On failure the plugin's *out is not looked at: it may be anything. */
  if (st != VYRE_OK || !out) return host_finish(g, "dispatch", st, &e, err);
  expect w;
  host_expect_for(g, program, inputs, input_count, options, &w);
  st = host_check_outputs(g, "dispatch", o, &w, err);
  if (st == VYRE_OK) st = host_record(g, "dispatch", HOST_KIND_OUTPUTS, (uintptr_t)o, NULL, err);
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
  vyre_status st = check_call(g, "dispatch_into", program, inputs, input_count, options, err);
  if (st == VYRE_OK) st = host_check_slots("dispatch_into", outputs, output_count, err);
  if (st != VYRE_OK) return st;
  if (HOST_VALIDATE_HOOK(g->validating, options))
    return host_validate_dispatch_into(g->validate, self, program, inputs, input_count, options,
                                       outputs, output_count, timing, err);
  vyre_timing t;
  PLUGIN_ERROR(e);
  st = ivt->dispatch_into(g->inner, program, inputs, input_count, options, outputs, output_count,
                          host_timing_in(timing, &t), &e);
  host_timing_out(timing, &t);
  if (st != VYRE_OK || !outputs) return host_finish(g, "dispatch_into", st, &e, err);
  expect w;
  host_expect_for(g, program, inputs, input_count, options, &w);
  if (w.refused[0])
    return host_violation(g, err, "dispatch_into", "it returned VYRE_OK for a call every backend "
                          "must refuse (%s)", w.refused);
  for (uint32_t k = 0; k < output_count; k++) {
    if (outputs[k].size > outputs[k].capacity)
      return host_violation(g, err, "dispatch_into",
                       "it says it wrote %llu bytes into output slot %u of %llu",
                       (unsigned long long)outputs[k].size, k,
                       (unsigned long long)outputs[k].capacity);
    if (w.sizes_known && k < w.count && outputs[k].size != w.size[k])
      return host_violation(g, err, "dispatch_into",
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
  if (out) *out = 0;
  vyre_status st = check_call(g, "dispatch_async", program, inputs, input_count, options, err);
  if (st != VYRE_OK) return st;
  if (HOST_VALIDATE_HOOK(g->validating, options))
    return host_validate_dispatch_async(g->validate, self, program, inputs, input_count, options,
                                        out, err);
  vyre_pending h = 0;
  PLUGIN_ERROR(e);
  st = ivt->dispatch_async(g->inner, program, inputs, input_count, options, out ? &h : NULL, &e);
  if (out) *out = 0;
  if (st != VYRE_OK || !out) return host_finish(g, "dispatch_async", st, &e, err);
  if (h == 0)
    return host_violation(g, err, "dispatch_async", "it returned VYRE_OK and pending handle 0");
  /* Without memory for what it must return, its outputs go unchecked. */
  expect *w = malloc(sizeof *w);
  if (w) host_expect_for(g, program, inputs, input_count, options, w);
  st = host_record(g, "dispatch_async", HOST_KIND_PENDING, h, w, err);
  if (st != VYRE_OK) {
    if (ivt->pending_release) ivt->pending_release(g->inner, h, &e);
    return st;
  }
  *out = h;
  return VYRE_OK;
}

static vyre_status g_pending_poll(vyre_backend *self, vyre_pending pending, int *ready,
                                  vyre_error *err) {
  GUARD(self, err, "pending_poll");
  vyre_status st = host_check_handle(g, "pending_poll", HOST_KIND_PENDING, pending, err);
  if (st != VYRE_OK) return st;
  int r = 0;
  PLUGIN_ERROR(e);
  st = ivt->pending_poll(g->inner, pending, ready ? &r : NULL, &e);
  if (st != VYRE_OK || !ready) return host_finish(g, "pending_poll", st, &e, err);
  if (r != 0 && r != 1)
    return host_violation(g, err, "pending_poll", "it set *ready to %d (0 or 1 expected)", r);
  *ready = r;
  return VYRE_OK;
}

static vyre_status g_pending_wait(vyre_backend *self, vyre_pending pending, vyre_outputs **out,
                                  vyre_timing *timing, vyre_error *err) {
  GUARD(self, err, "pending_wait");
  if (out) *out = NULL;
  if (HOST_VALIDATE_PENDING(g->validate_pending))
    return host_validate_pending_wait(g->validate, self, pending, out, timing, err);
  /* The wait releases the handle whatever it returns: so does the set. */
  void *info = NULL;
  vyre_status st = VYRE_OK;
  if (!host_forget(g, HOST_KIND_PENDING, pending, &info) &&
      (st = host_check_handle(g, "pending_wait", HOST_KIND_PENDING, pending, err)) != VYRE_OK)
    return st;
  expect w;
  memset(&w, 0, offsetof(expect, refused));
  w.refused[0] = '\0';
  if (info) memcpy(&w, info, sizeof w);
  free(info);
  vyre_outputs *o = NULL;
  vyre_timing t;
  PLUGIN_ERROR(e);
  st = ivt->pending_wait(g->inner, pending, out ? &o : NULL, host_timing_in(timing, &t), &e);
  host_timing_out(timing, &t);
  if (st != VYRE_OK || !out) return host_finish(g, "pending_wait", st, &e, err);
  st = host_check_outputs(g, "pending_wait", o, &w, err);
  if (st == VYRE_OK)
    st = host_record(g, "pending_wait", HOST_KIND_OUTPUTS, (uintptr_t)o, NULL, err);
  if (st != VYRE_OK) {
    if (o && ivt->outputs_free) ivt->outputs_free(g->inner, o);
    return st;
  }
  *out = o;
  return VYRE_OK;
}

static vyre_status g_pending_release(vyre_backend *self, vyre_pending pending, vyre_error *err) {
  GUARD(self, err, "pending_release");
  if (HOST_VALIDATE_PENDING(g->validate_pending))
    return host_validate_pending_release(g->validate, self, pending, err);
  vyre_status st = VYRE_OK;
  if (!host_forget(g, HOST_KIND_PENDING, pending, NULL) &&
      (st = host_check_handle(g, "pending_release", HOST_KIND_PENDING, pending, err)) != VYRE_OK)
    return st;
  PLUGIN_ERROR(e);
  return host_finish(g, "pending_release", ivt->pending_release(g->inner, pending, &e), &e, err);
}

/* Only outputs this instance returned, once: anything else would be a
 * double free in the plugin. */
static void g_outputs_free(vyre_backend *self, vyre_outputs *outputs) {
  host_guard *g = guard_of(self);
  if (!outputs) return;
  if (!g)
    complain("outputs_free: %p is not an instance made by vyre_host_create; outputs %p not "
             "freed. Fix: pass the vyre_backend * that returned them", (void *)self,
             (void *)outputs);
  else if (g->magic != GUARD_MAGIC)
    complain("outputs_free: backend '%s' (instance %p) was destroyed, and its destroy freed the "
             "outputs it had returned; %p not freed again. Fix: free outputs before destroying "
             "their instance", g->id, (void *)g, (void *)outputs);
  else if (!host_forget(g, HOST_KIND_OUTPUTS, (uintptr_t)outputs, NULL))
    complain("outputs_free: %p are not outputs backend '%s' returned, or were already freed; "
             "ignored. Fix: free each vyre_outputs once, with the instance that returned it",
             (void *)outputs, g->id);
  else
    g->inner->vt->outputs_free(g->inner, outputs);
}

static vyre_status g_resident_alloc(vyre_backend *self, uint64_t size, vyre_resident *out,
                                    vyre_error *err) {
  GUARD(self, err, "resident_alloc");
  vyre_resident h = 0;
  PLUGIN_ERROR(e);
  vyre_status st = ivt->resident_alloc(g->inner, size, out ? &h : NULL, &e);
  if (out) *out = 0;
  if (st != VYRE_OK || !out) return host_finish(g, "resident_alloc", st, &e, err);
  if (h == 0) return host_violation(g, err, "resident_alloc", "it returned VYRE_OK and handle 0");
  st = host_record(g, "resident_alloc", HOST_KIND_RESIDENT, h, NULL, err);
  if (st != VYRE_OK) {
    if (ivt->resident_free) ivt->resident_free(g->inner, h, &e);
    return st;
  }
  *out = h;
  return VYRE_OK;
}

/* Entries whose returns are a status and an error only, after the
 * caller's check `check` (a status expression). */
#define FORWARD(entry, params, check, args)                    \
  static vyre_status g_##entry params {                        \
    GUARD(self, err, #entry);                                  \
    vyre_status st = check;                                    \
    if (st != VYRE_OK) return st;                              \
    PLUGIN_ERROR(e);                                           \
    return host_finish(g, #entry, ivt->entry args, &e, err);   \
  }
#define BUFFER(entry) host_check_handle(g, #entry, HOST_KIND_RESIDENT, buffer, err)
#define BUFFER_AND(entry, name, ptr, size) \
  BUFFER(entry) != VYRE_OK ? VYRE_INVALID_HANDLE : host_check_bytes(#entry, name, ptr, size, err)
FORWARD(resident_size, (vyre_backend * self, vyre_resident buffer, uint64_t *size, vyre_error *err),
        BUFFER(resident_size), (g->inner, buffer, size, &e))
FORWARD(resident_upload,
        (vyre_backend * self, vyre_resident buffer, const void *data, uint64_t size, vyre_error *err),
        BUFFER_AND(resident_upload, "data", data, size), (g->inner, buffer, data, size, &e))
FORWARD(resident_upload_at,
        (vyre_backend * self, vyre_resident buffer, uint64_t offset, const void *data,
         uint64_t size, vyre_error *err),
        BUFFER_AND(resident_upload_at, "data", data, size),
        (g->inner, buffer, offset, data, size, &e))
FORWARD(resident_download,
        (vyre_backend * self, vyre_resident buffer, void *dst, uint64_t capacity, vyre_error *err),
        BUFFER_AND(resident_download, "dst", dst, capacity), (g->inner, buffer, dst, capacity, &e))
FORWARD(resident_download_range,
        (vyre_backend * self, vyre_resident buffer, uint64_t offset, void *dst, uint64_t size,
         vyre_error *err),
        BUFFER_AND(resident_download_range, "dst", dst, size),
        (g->inner, buffer, offset, dst, size, &e))
FORWARD(resident_upload_many,
        (vyre_backend * self, const vyre_resident_copy *copies, uint32_t count, vyre_error *err),
        host_check_copies(g, "resident_upload_many", copies, count, err), (g->inner, copies, count, &e))
FORWARD(resident_download_many,
        (vyre_backend * self, const vyre_resident_copy *copies, uint32_t count, vyre_error *err),
        host_check_copies(g, "resident_download_many", copies, count, err),
        (g->inner, copies, count, &e))
#undef BUFFER_AND
#undef BUFFER
#undef FORWARD

static vyre_status g_resident_free(vyre_backend *self, vyre_resident buffer, vyre_error *err) {
  GUARD(self, err, "resident_free");
  vyre_status st = host_check_handle(g, "resident_free", HOST_KIND_RESIDENT, buffer, err);
  if (st != VYRE_OK) return st;
  PLUGIN_ERROR(e);
  st = ivt->resident_free(g->inner, buffer, &e);
  if (st == VYRE_OK || st == VYRE_INVALID_HANDLE) host_forget(g, HOST_KIND_RESIDENT, buffer, NULL);
  return host_finish(g, "resident_free", st, &e, err);
}

static vyre_status g_dispatch_resident(vyre_backend *self, const vyre_program_ref *program,
                                       const vyre_resident *buffers, uint32_t buffer_count,
                                       const vyre_dispatch_options *options, vyre_timing *timing,
                                       vyre_error *err) {
  GUARD(self, err, "dispatch_resident");
  vyre_status st = host_check_program(g, "dispatch_resident", program, err);
  if (st == VYRE_OK)
    st = host_check_residents(g, "dispatch_resident", buffers, buffer_count, err);
  if (st == VYRE_OK) st = host_check_options(g, "dispatch_resident", options, err);
  if (st != VYRE_OK) return st;
  if (HOST_VALIDATE_HOOK(0, options))
    return host_validate_dispatch_resident(g->validate, self, program, buffers, buffer_count,
                                           options, timing, err);
  vyre_timing t;
  PLUGIN_ERROR(e);
  st = ivt->dispatch_resident(g->inner, program, buffers, buffer_count, options,
                              host_timing_in(timing, &t), &e);
  host_timing_out(timing, &t);
  return host_finish(g, "dispatch_resident", st, &e, err);
}

static vyre_status g_dispatch_sequence(vyre_backend *self, const vyre_sequence_step *steps,
                                       uint32_t step_count, uint32_t repeat,
                                       const vyre_resident_copy *reads, uint32_t read_count,
                                       vyre_timing *timing, vyre_error *err) {
  GUARD(self, err, "dispatch_sequence");
  vyre_status st = host_check_sequence(g, steps, step_count, reads, read_count, err);
  if (st != VYRE_OK) return st;
  vyre_timing t;
  PLUGIN_ERROR(e);
  st = ivt->dispatch_sequence(g->inner, steps, step_count, repeat, reads, read_count,
                              host_timing_in(timing, &t), &e);
  host_timing_out(timing, &t);
  return host_finish(g, "dispatch_sequence", st, &e, err);
}

static vyre_status g_pipeline_create(vyre_backend *self, const void *program_bytes,
                                     uint64_t program_size, const vyre_dispatch_options *options,
                                     vyre_pipeline *out, vyre_error *err) {
  GUARD(self, err, "pipeline_create");
  if (out) *out = 0;
  vyre_status st = program_bytes ? VYRE_OK
                   : program_size
                       ? host_check_bytes("pipeline_create", "program_bytes", NULL, program_size, err)
                       : vyre_error_set(err, VYRE_INVALID_ARGUMENT, 0,
                                        "pipeline_create: program_bytes is NULL. Fix: pass the "
                                        "program's image and its size");
  if (st == VYRE_OK) st = host_check_options(g, "pipeline_create", options, err);
  if (st != VYRE_OK) return st;
  if (HOST_VALIDATE_HOOK(g->validating, options))
    return host_validate_pipeline_create(g->validate, self, program_bytes, program_size, options,
                                         out, err);
  vyre_pipeline h = 0;
  PLUGIN_ERROR(e);
  st = ivt->pipeline_create(g->inner, program_bytes, program_size, options, out ? &h : NULL, &e);
  if (st != VYRE_OK || !out) return host_finish(g, "pipeline_create", st, &e, err);
  if (h == 0) return host_violation(g, err, "pipeline_create", "it returned VYRE_OK and pipeline 0");
  /* Keep the program's bytes, so that dispatches of the pipeline are
   * checked (decoded at the first one). */
  host_pipeline_info *info = calloc(1, sizeof *info);
  if (info && program_size && program_size <= SIZE_MAX) info->bytes = malloc((size_t)program_size);
  if (info && info->bytes) {
    memcpy(info->bytes, program_bytes, (size_t)program_size);
    info->size = program_size;
  } else {
    free(info); /* without memory, its dispatches go unchecked */
    info = NULL;
  }
  st = host_record(g, "pipeline_create", HOST_KIND_PIPELINE, h, info, err);
  if (st != VYRE_OK) {
    if (ivt->pipeline_release) ivt->pipeline_release(g->inner, h, &e);
    return st;
  }
  *out = h;
  return VYRE_OK;
}

static vyre_status g_pipeline_release(vyre_backend *self, vyre_pipeline pipeline,
                                      vyre_error *err) {
  GUARD(self, err, "pipeline_release");
  vyre_status st = host_check_handle(g, "pipeline_release", HOST_KIND_PIPELINE, pipeline, err);
  if (st != VYRE_OK) return st;
  PLUGIN_ERROR(e);
  st = ivt->pipeline_release(g->inner, pipeline, &e);
  if (st == VYRE_OK || st == VYRE_INVALID_HANDLE)
    host_forget(g, HOST_KIND_PIPELINE, pipeline, NULL);
  host_validate_pipeline_release(g->validate, pipeline);
  return host_finish(g, "pipeline_release", st, &e, err);
}

static vyre_status g_get_extension(vyre_backend *self, const char *name, uint32_t version,
                                   const void **out, vyre_error *err) {
  GUARD(self, err, "get_extension");
  const void *table = NULL;
  PLUGIN_ERROR(e);
  vyre_status st = ivt->get_extension(g->inner, name, version, out ? &table : NULL, &e);
  if (out) *out = NULL;
  if (st != VYRE_OK || !out) return host_finish(g, "get_extension", st, &e, err);
  if (!table)
    return host_violation(g, err, "get_extension", "it returned VYRE_OK and no table for '%s'",
                     name ? name : "(null)");
  vyre_extension_head head;
  memcpy(&head, table, sizeof head);
  if (head.struct_size < sizeof head || head.struct_size > HOST_STRUCT_MAX || head.version < version)
    return host_violation(g, err, "get_extension",
                     "its table for '%s' revision %u has struct_size %u and revision %u",
                     name ? name : "(null)", version, head.struct_size, head.version);
  /* Its functions take the native instance, out of the host's sight: the
   * handles they make (vyre.cuda.interop's resident_import) are unknown
   * here.  The core tables hold no functions. */
  if (!name || (strcmp(name, VYRE_LIMITS_NAME) != 0 && strcmp(name, VYRE_INDIRECT_NAME) != 0))
    g->extended = 1;
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
  g->validate = host_validate_new(e, &g->head, &g->validating, &g->validate_pending);
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
