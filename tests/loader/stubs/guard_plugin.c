/* guard_plugin.c -- a trusting test plugin for the checking instance's suite: it accepts whatever it is given (every handle is good, every pointer is there) and counts the calls that reach it, so what the suite sees refused was refused by libvyre-host, the same for every backend. */
/*
 * Every instance hands out the handles 1, 2, 3, ... (one counter for
 * resident buffers, pipelines and pending dispatches): the worst case of a
 * 16-bit salt, where instance #65,536 and instance #0 make the same
 * numbers.  Its dispatches return one output of 16 bytes, which fits
 * STUB_EVIL_PROGRAM (stub_plugin.h).
 */
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#include "guard_plugin.h"
#include "vyre/vyre.h"
#include "vyre/vyre_support.h"

#define GUARD_EXPORT __attribute__((visibility("default")))
#define OUTPUT_BYTES 16u

GUARD_EXPORT guard_counters guard_calls;

typedef struct trusting {
  vyre_backend head;
  _Atomic uint64_t next; /* the last handle handed out */
} trusting;

typedef struct trusting_outputs {
  vyre_outputs o;
  vyre_output item;
  unsigned char data[OUTPUT_BYTES];
} trusting_outputs;

static void t_destroy(vyre_backend *self) {
  if (!self) return;
  guard_calls.destroy++;
  guard_calls.live--;
  free(self);
}

static uint64_t next_handle(vyre_backend *self) { return ++((trusting *)self)->next; }

static vyre_status t_outputs(vyre_outputs **out, vyre_error *err) {
  trusting_outputs *t = calloc(1, sizeof *t);
  if (!t) return vyre_error_set(err, VYRE_OUT_OF_MEMORY, 0, "trusting: out of memory. Fix: free memory");
  t->o.struct_size = sizeof t->o;
  t->o.count = 1;
  t->o.items = &t->item;
  t->item.data = t->data;
  t->item.size = OUTPUT_BYTES;
  memset(t->data, 7, sizeof t->data);
  guard_calls.outputs_made++;
  *out = &t->o;
  return VYRE_OK;
}

static void t_outputs_free(vyre_backend *self, vyre_outputs *outputs) {
  (void)self;
  if (!outputs) return;
  guard_calls.outputs_freed++;
  free(outputs); /* the trusting_outputs it heads */
}

static vyre_status t_profile(vyre_backend *self, vyre_device_profile *out, vyre_error *err) {
  (void)self, (void)err;
  guard_calls.calls++;
  vyre_device_profile p;
  memset(&p, 0, sizeof p);
  p.struct_size = out->struct_size;
  strcpy(p.name, "trusting device");
  strcpy(p.backend_id, "guarded");
  memcpy(out, &p, out->struct_size < sizeof p ? out->struct_size : sizeof p);
  return VYRE_OK;
}

static vyre_status t_ok(vyre_backend *self, vyre_error *err) {
  (void)self, (void)err;
  guard_calls.calls++;
  return VYRE_OK;
}

static vyre_status t_metrics(vyre_backend *self, vyre_metric *out, uint32_t capacity,
                             uint32_t *count, vyre_error *err) {
  (void)self, (void)err;
  guard_calls.calls++;
  if (capacity) {
    memset(&out[0], 0, sizeof out[0]);
    strcpy(out[0].name, "trusting.calls");
  }
  *count = 1;
  return VYRE_OK;
}

static vyre_status t_dispatch(vyre_backend *self, const vyre_program_ref *program,
                              const vyre_input *inputs, uint32_t input_count,
                              const vyre_dispatch_options *options, vyre_outputs **out,
                              vyre_timing *timing, vyre_error *err) {
  (void)self, (void)program, (void)inputs, (void)input_count, (void)options, (void)timing;
  guard_calls.calls++;
  return t_outputs(out, err);
}

static vyre_status t_dispatch_into(vyre_backend *self, const vyre_program_ref *program,
                                   const vyre_input *inputs, uint32_t input_count,
                                   const vyre_dispatch_options *options,
                                   vyre_output_slot *outputs, uint32_t output_count,
                                   vyre_timing *timing, vyre_error *err) {
  (void)self, (void)program, (void)inputs, (void)input_count, (void)options, (void)timing;
  (void)err;
  guard_calls.calls++;
  if (output_count && outputs[0].capacity >= OUTPUT_BYTES) {
    memset(outputs[0].data, 7, OUTPUT_BYTES);
    outputs[0].size = OUTPUT_BYTES;
  }
  return VYRE_OK;
}

static vyre_status t_dispatch_async(vyre_backend *self, const vyre_program_ref *program,
                                    const vyre_input *inputs, uint32_t input_count,
                                    const vyre_dispatch_options *options, vyre_pending *out,
                                    vyre_error *err) {
  (void)program, (void)inputs, (void)input_count, (void)options, (void)err;
  guard_calls.calls++;
  *out = next_handle(self);
  return VYRE_OK;
}

static vyre_status t_poll(vyre_backend *self, vyre_pending pending, int *ready, vyre_error *err) {
  (void)self, (void)pending, (void)err;
  guard_calls.calls++;
  *ready = 1;
  return VYRE_OK;
}

static vyre_status t_wait(vyre_backend *self, vyre_pending pending, vyre_outputs **out,
                          vyre_timing *timing, vyre_error *err) {
  (void)self, (void)pending, (void)timing;
  guard_calls.calls++;
  return t_outputs(out, err);
}

static vyre_status t_handle(vyre_backend *self, uint64_t handle, vyre_error *err) {
  (void)self, (void)handle, (void)err;
  guard_calls.calls++;
  return VYRE_OK;
}

static vyre_status t_new_handle(vyre_backend *self, uint64_t *out) {
  guard_calls.calls++;
  *out = next_handle(self);
  return VYRE_OK;
}

static vyre_status t_alloc(vyre_backend *self, uint64_t size, vyre_resident *out, vyre_error *err) {
  (void)size, (void)err;
  return t_new_handle(self, out);
}

static vyre_status t_size(vyre_backend *self, vyre_resident buffer, uint64_t *size, vyre_error *err) {
  (void)self, (void)buffer, (void)err;
  guard_calls.calls++;
  if (size) *size = OUTPUT_BYTES;
  return VYRE_OK;
}

static vyre_status t_upload(vyre_backend *self, vyre_resident buffer, const void *data,
                            uint64_t size, vyre_error *err) {
  (void)data, (void)size;
  return t_handle(self, buffer, err);
}

static vyre_status t_upload_at(vyre_backend *self, vyre_resident buffer, uint64_t offset,
                               const void *data, uint64_t size, vyre_error *err) {
  (void)offset, (void)data, (void)size;
  return t_handle(self, buffer, err);
}

static vyre_status t_download(vyre_backend *self, vyre_resident buffer, void *dst,
                              uint64_t capacity, vyre_error *err) {
  (void)dst, (void)capacity;
  return t_handle(self, buffer, err);
}

static vyre_status t_download_range(vyre_backend *self, vyre_resident buffer, uint64_t offset,
                                    void *dst, uint64_t size, vyre_error *err) {
  (void)offset, (void)dst, (void)size;
  return t_handle(self, buffer, err);
}

static vyre_status t_many(vyre_backend *self, const vyre_resident_copy *copies, uint32_t count,
                          vyre_error *err) {
  (void)copies, (void)count;
  return t_handle(self, 0, err);
}

static vyre_status t_dispatch_resident(vyre_backend *self, const vyre_program_ref *program,
                                       const vyre_resident *buffers, uint32_t buffer_count,
                                       const vyre_dispatch_options *options, vyre_timing *timing,
                                       vyre_error *err) {
  (void)program, (void)buffers, (void)buffer_count, (void)options, (void)timing;
  return t_handle(self, 0, err);
}

static vyre_status t_sequence(vyre_backend *self, const vyre_sequence_step *steps,
                              uint32_t step_count, uint32_t repeat,
                              const vyre_resident_copy *reads, uint32_t read_count,
                              vyre_timing *timing, vyre_error *err) {
  (void)steps, (void)step_count, (void)repeat, (void)reads, (void)read_count, (void)timing;
  return t_handle(self, 0, err);
}

static vyre_status t_pipeline_create(vyre_backend *self, const void *bytes, uint64_t size,
                                     const vyre_dispatch_options *options, vyre_pipeline *out,
                                     vyre_error *err) {
  (void)bytes, (void)size, (void)options, (void)err;
  return t_new_handle(self, out);
}

static vyre_status t_import(vyre_backend *self, vyre_resident *out, vyre_error *err) {
  (void)err;
  return t_new_handle(self, out);
}
static const guard_import_ext t_import_table = {{sizeof(guard_import_ext), 1}, t_import};

static vyre_status t_get_extension(vyre_backend *self, const char *name, uint32_t version,
                                   const void **out, vyre_error *err) {
  (void)self;
  guard_calls.calls++;
  *out = NULL;
  if (name && strcmp(name, GUARD_IMPORT_NAME) == 0 && version == 1) {
    *out = &t_import_table;
    return VYRE_OK;
  }
  return vyre_error_set(err, VYRE_UNSUPPORTED, 0,
                        "trusting get_extension: '%s' is not served. Fix: none, a test plugin",
                        name ? name : "(null)");
}

static const vyre_backend_vtable t_vtable = {
    .struct_size = sizeof(vyre_backend_vtable),
    .destroy = t_destroy,
    .device_profile = t_profile,
    .prepare = t_ok,
    .shutdown = t_ok,
    .metrics = t_metrics,
    .dispatch = t_dispatch,
    .dispatch_into = t_dispatch_into,
    .dispatch_async = t_dispatch_async,
    .pending_poll = t_poll,
    .pending_wait = t_wait,
    .pending_release = t_handle,
    .outputs_free = t_outputs_free,
    .resident_alloc = t_alloc,
    .resident_free = t_handle,
    .resident_size = t_size,
    .resident_upload = t_upload,
    .resident_upload_at = t_upload_at,
    .resident_download = t_download,
    .resident_download_range = t_download_range,
    .resident_upload_many = t_many,
    .resident_download_many = t_many,
    .dispatch_resident = t_dispatch_resident,
    .dispatch_sequence = t_sequence,
    .pipeline_create = t_pipeline_create,
    .pipeline_release = t_handle,
    .get_extension = t_get_extension,
};

static vyre_status t_create(const vyre_backend_options *options, vyre_backend **out,
                            vyre_error *err) {
  (void)options;
  guard_calls.create++;
  *out = NULL;
  const char *raw = getenv(GUARD_FACTORY_STATUS_ENV);
  if (raw && *raw) {
    vyre_error_set(err, VYRE_INTERNAL, 0, "trusting: told to return status %s", raw);
    return (vyre_status)atoi(raw);
  }
  trusting *b = calloc(1, sizeof *b);
  if (!b) return vyre_error_set(err, VYRE_OUT_OF_MEMORY, 0, "trusting: out of memory. Fix: free memory");
  b->head.struct_size = sizeof b->head;
  b->head.vt = &t_vtable;
  guard_calls.live++;
  *out = &b->head;
  return VYRE_OK;
}

static const uint16_t t_ops[] = {VYRE_OP_CONST, VYRE_OP_LOAD, VYRE_OP_ADD, VYRE_OP_STORE};
static const uint32_t t_op_types[] = {0, 0, 0, 0};

static const vyre_registration t_registration = {
    .struct_size = sizeof(vyre_registration),
    .abi_major = VYRE_ABI_MAJOR,
    .abi_minor = VYRE_ABI_MINOR,
    .id = "guarded",
    .version = "0.0.1-trusting",
    .description = "test plugin that trusts its caller (check_guard)",
    .precedence = 900,
    .op_count = sizeof t_ops / sizeof t_ops[0],
    .ops = t_ops,
    .capabilities = VYRE_CAP_ASYNC | VYRE_CAP_RESIDENT | VYRE_CAP_SEQUENCE | VYRE_CAP_PIPELINE,
    .storage_types = VYRE_TBIT(VYRE_T_U32),
    .create = t_create,
    .op_types = t_op_types,
    .extensions = GUARD_IMPORT_NAME "@1",
};

VYRE_PLUGIN_EXPORT const vyre_descriptor vyre_plugin_descriptor =
    VYRE_DESCRIPTOR_INIT(0, VYRE_ABI_MINOR, "trusting guard test plugin");

VYRE_PLUGIN_EXPORT vyre_status vyre_plugin_entry(uint16_t host_major, uint16_t host_minor,
                                                 const vyre_registration **out, vyre_error *err);
vyre_status vyre_plugin_entry(uint16_t host_major, uint16_t host_minor,
                              const vyre_registration **out, vyre_error *err) {
  *out = NULL;
  vyre_status st = vyre_check_host_abi("trusting plugin", host_major, host_minor, 0,
                                       VYRE_ABI_MINOR, err);
  if (st != VYRE_OK) return st;
  *out = &t_registration;
  return VYRE_OK;
}
