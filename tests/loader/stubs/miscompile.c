/* miscompile.c -- a test plugin (id "miscompile") over the reference backend with a planted miscompile: a u32 `add` whose first input element is 0xffffffff comes out with bit 0 flipped (dispatch, dispatch_into, pipelines, async); everything else is the reference's answer (tests/loader/check_validate.c). */
/*
 * The validation layer of libvyre-host must catch the bug when a
 * dispatch meets the pattern, stay quiet when it does not, and write a
 * capsule that `vyre conform --replay CAPSULE --backend miscompile`
 * reproduces.  The plugin dlopens the build tree's reference plugin
 * (MISCOMPILE_INNER) and forwards every entry but get_extension to it
 * (the bug is in dispatch, dispatch_into and the pipelines' dispatches); like any plugin it exports only the descriptor and the
 * entry, and the counters the test reads (miscompile_seen).
 */
#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "vyre/vyre.h"
#include "vyre/vyre_program.h"
#include "vyre/vyre_support.h"

#define EXPORT __attribute__((visibility("default")))

/* What the plugin saw of the calls' extension chains: the test checks
 * that libvyre-host took vyre.validate off (0x56590003, vyre_host.h) and
 * left the other types there. */
typedef struct miscompile_seen {
  int validate_types; /* chain nodes of type 0x56590003 */
  int other_types;    /* any other chain node */
  int dispatches;
} miscompile_seen;
EXPORT miscompile_seen miscompile_seen_calls;

static const vyre_registration *inner_reg;
static vyre_registration reg;
static pthread_once_t once = PTHREAD_ONCE_INIT;
static char load_error[512];

#define PIPES_MAX 64
typedef struct miscompile {
  vyre_backend head;
  vyre_backend *inner;
  pthread_mutex_t lock;
  vyre_pipeline pipe[PIPES_MAX]; /* pipelines of programs with the planted add */
  uint32_t pipe_count;
  struct {
    vyre_pending handle; /* an async dispatch of such a program */
    vyre_input in0;      /* a copy of its first input, for the bug at its wait */
  } async[PIPES_MAX];
  uint32_t async_count;
} miscompile;

static void load_inner(void) {
  void *h = dlopen(MISCOMPILE_INNER, RTLD_NOW | RTLD_LOCAL);
  if (!h) {
    snprintf(load_error, sizeof load_error, "%s", dlerror());
    return;
  }
  vyre_plugin_entry_fn entry = (vyre_plugin_entry_fn)dlsym(h, VYRE_PLUGIN_ENTRY_SYMBOL);
  vyre_error err = VYRE_ERROR_INIT;
  if (!entry || entry(VYRE_ABI_MAJOR, VYRE_ABI_MINOR, &inner_reg, &err) != VYRE_OK) {
    snprintf(load_error, sizeof load_error, "the reference entry failed: %.400s", err.message);
    inner_reg = NULL;
  }
}

static void see(const vyre_dispatch_options *o) {
  miscompile_seen_calls.dispatches++;
  if (!o || o->struct_size < sizeof *o) return;
  for (const vyre_ext *x = o->next; x; x = x->next) {
    if (x->type == 0x56590003u) miscompile_seen_calls.validate_types++;
    else miscompile_seen_calls.other_types++;
  }
}

/* Whether the program image has a u32 add: the op the bug is in. */
static int has_add(const void *bytes, uint64_t size) {
  vyre_program *p = NULL;
  if (!bytes || vyre_program_decode(bytes, (size_t)size, &p, NULL) != VYRE_OK) return 0;
  int found = 0;
  for (uint32_t i = 0; i < p->inst_count; i++)
    found |= p->insts[i].op == VYRE_OP_ADD && p->insts[i].type == VYRE_T_U32;
  vyre_program_free(p);
  return found;
}

static int planted(miscompile *m, const vyre_program_ref *program) {
  if (!program) return 0;
  if (!program->pipeline) return has_add(program->bytes, program->size);
  int found = 0;
  pthread_mutex_lock(&m->lock);
  for (uint32_t i = 0; i < m->pipe_count; i++) found |= m->pipe[i] == program->pipeline;
  pthread_mutex_unlock(&m->lock);
  return found;
}

/* The bug: element i of output 0 gets bit 0 flipped where element i of
 * input 0 is 0xffffffff (a carry the generated code drops). */
static void corrupt(const vyre_input *inputs, uint32_t input_count, void *out, uint64_t size) {
  if (input_count == 0 || !inputs[0].data) return;
  const uint8_t *in = inputs[0].data;
  uint8_t *o = out;
  for (uint64_t i = 0; i + 4 <= inputs[0].size && i + 4 <= size; i += 4) {
    uint32_t x;
    memcpy(&x, in + i, 4);
    if (x == 0xffffffffu) o[i] ^= 1;
  }
}

static void m_destroy(vyre_backend *self) {
  if (!self) return;
  miscompile *m = (miscompile *)self;
  if (m->inner) m->inner->vt->destroy(m->inner);
  for (uint32_t i = 0; i < m->async_count; i++) free((void *)m->async[i].in0.data);
  pthread_mutex_destroy(&m->lock);
  free(m);
}

static vyre_status m_profile(vyre_backend *self, vyre_device_profile *out, vyre_error *err) {
  miscompile *m = (miscompile *)self;
  vyre_status st = m->inner->vt->device_profile(m->inner, out, err);
  if (st == VYRE_OK) {
    snprintf(out->name, sizeof out->name, "the reference with a planted add bug");
    snprintf(out->backend_id, sizeof out->backend_id, "miscompile");
    out->capabilities &= reg.capabilities;
  }
  return st;
}

static vyre_status m_dispatch(vyre_backend *self, const vyre_program_ref *program,
                              const vyre_input *inputs, uint32_t input_count,
                              const vyre_dispatch_options *options, vyre_outputs **out,
                              vyre_timing *timing, vyre_error *err) {
  miscompile *m = (miscompile *)self;
  see(options);
  vyre_status st = m->inner->vt->dispatch(m->inner, program, inputs, input_count, options, out,
                                          timing, err);
  if (st == VYRE_OK && out && (*out)->count && planted(m, program))
    corrupt(inputs, input_count, (*out)->items[0].data, (*out)->items[0].size);
  return st;
}

static vyre_status m_dispatch_into(vyre_backend *self, const vyre_program_ref *program,
                                   const vyre_input *inputs, uint32_t input_count,
                                   const vyre_dispatch_options *options, vyre_output_slot *outputs,
                                   uint32_t output_count, vyre_timing *timing, vyre_error *err) {
  miscompile *m = (miscompile *)self;
  see(options);
  vyre_status st = m->inner->vt->dispatch_into(m->inner, program, inputs, input_count, options,
                                               outputs, output_count, timing, err);
  if (st == VYRE_OK && output_count && planted(m, program))
    corrupt(inputs, input_count, outputs[0].data, outputs[0].size);
  return st;
}

static void m_outputs_free(vyre_backend *self, vyre_outputs *o) {
  miscompile *m = (miscompile *)self;
  m->inner->vt->outputs_free(m->inner, o);
}

static vyre_status m_pipeline_create(vyre_backend *self, const void *bytes, uint64_t size,
                                     const vyre_dispatch_options *options, vyre_pipeline *out,
                                     vyre_error *err) {
  miscompile *m = (miscompile *)self;
  see(options);
  vyre_status st = m->inner->vt->pipeline_create(m->inner, bytes, size, options, out, err);
  if (st == VYRE_OK && has_add(bytes, size)) {
    pthread_mutex_lock(&m->lock);
    if (m->pipe_count < PIPES_MAX) m->pipe[m->pipe_count++] = *out;
    pthread_mutex_unlock(&m->lock);
  }
  return st;
}

static vyre_status m_pipeline_release(vyre_backend *self, vyre_pipeline pipeline, vyre_error *err) {
  miscompile *m = (miscompile *)self;
  pthread_mutex_lock(&m->lock);
  for (uint32_t i = 0; i < m->pipe_count; i++)
    if (m->pipe[i] == pipeline) m->pipe[i] = m->pipe[--m->pipe_count];
  pthread_mutex_unlock(&m->lock);
  return m->inner->vt->pipeline_release(m->inner, pipeline, err);
}

/* Async: the bug shows at the wait, from a copy of the first input. */
static vyre_status m_dispatch_async(vyre_backend *self, const vyre_program_ref *program,
                                    const vyre_input *inputs, uint32_t input_count,
                                    const vyre_dispatch_options *options, vyre_pending *out,
                                    vyre_error *err) {
  miscompile *m = (miscompile *)self;
  see(options);
  vyre_status st = m->inner->vt->dispatch_async(m->inner, program, inputs, input_count, options,
                                                out, err);
  if (st != VYRE_OK || !out || !input_count || !planted(m, program)) return st;
  void *copy = malloc(inputs[0].size ? inputs[0].size : 1);
  if (!copy) return st;
  memcpy(copy, inputs[0].data, inputs[0].size);
  pthread_mutex_lock(&m->lock);
  if (m->async_count < PIPES_MAX) {
    m->async[m->async_count].handle = *out;
    m->async[m->async_count].in0.data = copy;
    m->async[m->async_count++].in0.size = inputs[0].size;
    copy = NULL;
  }
  pthread_mutex_unlock(&m->lock);
  free(copy);
  return st;
}

/* The copied first input of async dispatch `h`, taken out (data NULL: none). */
static vyre_input take_async(miscompile *m, vyre_pending h) {
  vyre_input in = {NULL, 0};
  pthread_mutex_lock(&m->lock);
  for (uint32_t i = 0; i < m->async_count && !in.data; i++)
    if (m->async[i].handle == h) in = m->async[i].in0, m->async[i] = m->async[--m->async_count];
  pthread_mutex_unlock(&m->lock);
  return in;
}

static vyre_status m_pending_wait(vyre_backend *self, vyre_pending pending, vyre_outputs **out,
                                  vyre_timing *timing, vyre_error *err) {
  miscompile *m = (miscompile *)self;
  vyre_input in = take_async(m, pending);
  vyre_status st = m->inner->vt->pending_wait(m->inner, pending, out, timing, err);
  if (st == VYRE_OK && out && in.data && (*out)->count)
    corrupt(&in, 1, (*out)->items[0].data, (*out)->items[0].size);
  free((void *)in.data);
  return st;
}

static vyre_status m_pending_release(vyre_backend *self, vyre_pending pending, vyre_error *err) {
  miscompile *m = (miscompile *)self;
  free((void *)take_async(m, pending).data);
  return m->inner->vt->pending_release(m->inner, pending, err);
}

/* The other entries: the reference's, on the inner instance. */
#define INNER(self) (((miscompile *)(self))->inner)
#define FORWARD(entry, params, args) \
  static vyre_status f_##entry params { return INNER(self)->vt->entry args; }
FORWARD(prepare, (vyre_backend * self, vyre_error *err), (INNER(self), err))
FORWARD(shutdown, (vyre_backend * self, vyre_error *err), (INNER(self), err))
FORWARD(metrics,
        (vyre_backend * self, vyre_metric *out, uint32_t capacity, uint32_t *count, vyre_error *err),
        (INNER(self), out, capacity, count, err))
FORWARD(pending_poll, (vyre_backend * self, vyre_pending pending, int *ready, vyre_error *err),
        (INNER(self), pending, ready, err))
FORWARD(resident_alloc, (vyre_backend * self, uint64_t size, vyre_resident *out, vyre_error *err),
        (INNER(self), size, out, err))
FORWARD(resident_free, (vyre_backend * self, vyre_resident buffer, vyre_error *err),
        (INNER(self), buffer, err))
FORWARD(resident_size, (vyre_backend * self, vyre_resident buffer, uint64_t *size, vyre_error *err),
        (INNER(self), buffer, size, err))
FORWARD(resident_upload,
        (vyre_backend * self, vyre_resident buffer, const void *data, uint64_t size, vyre_error *err),
        (INNER(self), buffer, data, size, err))
FORWARD(resident_upload_at,
        (vyre_backend * self, vyre_resident buffer, uint64_t offset, const void *data,
         uint64_t size, vyre_error *err),
        (INNER(self), buffer, offset, data, size, err))
FORWARD(resident_download,
        (vyre_backend * self, vyre_resident buffer, void *dst, uint64_t capacity, vyre_error *err),
        (INNER(self), buffer, dst, capacity, err))
FORWARD(resident_download_range,
        (vyre_backend * self, vyre_resident buffer, uint64_t offset, void *dst, uint64_t size,
         vyre_error *err),
        (INNER(self), buffer, offset, dst, size, err))
FORWARD(resident_upload_many,
        (vyre_backend * self, const vyre_resident_copy *copies, uint32_t count, vyre_error *err),
        (INNER(self), copies, count, err))
FORWARD(resident_download_many,
        (vyre_backend * self, const vyre_resident_copy *copies, uint32_t count, vyre_error *err),
        (INNER(self), copies, count, err))
FORWARD(dispatch_resident,
        (vyre_backend * self, const vyre_program_ref *program, const vyre_resident *buffers,
         uint32_t buffer_count, const vyre_dispatch_options *options, vyre_timing *timing,
         vyre_error *err),
        (INNER(self), program, buffers, buffer_count, options, timing, err))
FORWARD(dispatch_sequence,
        (vyre_backend * self, const vyre_sequence_step *steps, uint32_t step_count, uint32_t repeat,
         const vyre_resident_copy *reads, uint32_t read_count, vyre_timing *timing,
         vyre_error *err),
        (INNER(self), steps, step_count, repeat, reads, read_count, timing, err))
#undef FORWARD

static const vyre_backend_vtable vtable = {
    .struct_size = sizeof(vyre_backend_vtable),
    .destroy = m_destroy,
    .device_profile = m_profile,
    .dispatch = m_dispatch,
    .dispatch_into = m_dispatch_into,
    .outputs_free = m_outputs_free,
    .pipeline_create = m_pipeline_create,
    .pipeline_release = m_pipeline_release,
    .prepare = f_prepare,
    .shutdown = f_shutdown,
    .metrics = f_metrics,
    .dispatch_async = m_dispatch_async,
    .pending_poll = f_pending_poll,
    .pending_wait = m_pending_wait,
    .pending_release = m_pending_release,
    .resident_alloc = f_resident_alloc,
    .resident_free = f_resident_free,
    .resident_size = f_resident_size,
    .resident_upload = f_resident_upload,
    .resident_upload_at = f_resident_upload_at,
    .resident_download = f_resident_download,
    .resident_download_range = f_resident_download_range,
    .resident_upload_many = f_resident_upload_many,
    .resident_download_many = f_resident_download_many,
    .dispatch_resident = f_dispatch_resident,
    .dispatch_sequence = f_dispatch_sequence,
};

static vyre_status m_create(const vyre_backend_options *options, vyre_backend **out,
                            vyre_error *err) {
  *out = NULL;
  miscompile *m = calloc(1, sizeof *m);
  if (!m || pthread_mutex_init(&m->lock, NULL) != 0) {
    free(m);
    return vyre_error_set(err, VYRE_OUT_OF_MEMORY, 0, "miscompile: out of memory");
  }
  vyre_status st = inner_reg->create(options, &m->inner, err);
  if (st != VYRE_OK) {
    pthread_mutex_destroy(&m->lock);
    free(m);
    return st;
  }
  m->head.struct_size = sizeof m->head;
  m->head.vt = &vtable;
  *out = &m->head;
  return VYRE_OK;
}

VYRE_PLUGIN_EXPORT const vyre_descriptor vyre_plugin_descriptor =
    VYRE_DESCRIPTOR_INIT(0, VYRE_ABI_MINOR, "test miscompile");

EXPORT vyre_status vyre_plugin_entry(uint16_t major, uint16_t minor, const vyre_registration **out,
                                     vyre_error *err);
EXPORT vyre_status vyre_plugin_entry(uint16_t major, uint16_t minor, const vyre_registration **out,
                                     vyre_error *err) {
  if (major != VYRE_ABI_MAJOR)
    return vyre_error_set(err, VYRE_ABI_MISMATCH, 0, "miscompile: ABI major %u. Fix: rebuild", major);
  (void)minor;
  pthread_once(&once, load_inner);
  if (!inner_reg)
    return vyre_error_set(err, VYRE_INTERNAL, 0, "miscompile: cannot load the reference plugin: "
                          "%s. Fix: build host-stub/ref", load_error);
  reg = *inner_reg;
  reg.struct_size = sizeof reg;
  reg.id = "miscompile";
  reg.description = "the reference with a planted add bug (validation tests)";
  reg.precedence = 960;
  /* Every entry but get_extension is forwarded (so `vyre bench` runs on
   * it: BENCHMARKS.md, "Validation layer overhead"); the bug is only in
   * host dispatch, the entries the layer checks. */
  reg.capabilities &= ~VYRE_CAP_INDIRECT_DISPATCH;
  reg.extensions = NULL;
  reg.create = m_create;
  *out = &reg;
  return VYRE_OK;
}
