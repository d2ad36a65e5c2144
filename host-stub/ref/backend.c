/* backend.c -- the reference backend instance, the top of libvyre-ref: create/destroy, device profile, metrics, prepare/shutdown, the vtable whose entries check the instance. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "ref.h"
#include "abi/support/config.h"
#include "abi/support/log.h"
#include "abi/support/sized.h"

#define REF_MAX_THREADS 256u

/* Defined at the bottom; ref_self compares an instance's vt with it. */
static const vyre_backend_vtable ref_vtable;

/* The instance behind `self`, or NULL when it is not a reference one. */
static ref_backend *ref_self(vyre_backend *self) {
  if (!self || self->vt != &ref_vtable) return NULL;
  return (ref_backend *)self;
}

/* The INVALID_ARGUMENT error of an entry `what` given a bad instance. */
static vyre_status ref_bad_self(vyre_error *err, const char *what) {
  return vyre_error_set(err, VYRE_INVALID_ARGUMENT, 0,
                        "%s: the backend is NULL or not a reference backend instance. Fix: pass "
                        "the vyre_backend that the reference registration's create returned",
                        what);
}

/* The extensions the reference serves: the core limits (vyre.h), both of
 * them, and indirect dispatch (a bare head; indirect.c does the work). */
static const vyre_limits_info ref_limits_info = {
    .head = {sizeof(vyre_limits_info), VYRE_LIMITS_VERSION},
    .enforced = VYRE_LIMITS_TIMEOUT | VYRE_LIMITS_STEPS,
};
static const vyre_extension_head ref_indirect_info = {sizeof(vyre_extension_head),
                                                      VYRE_INDIRECT_VERSION};

static vyre_status ref_get_extension(vyre_backend *self, const char *name, uint32_t version,
                                     const void **out, vyre_error *err) {
  if (out) *out = NULL;
  if (!ref_self(self)) return ref_bad_self(err, "get_extension");
  if (!out)
    return vyre_error_set(err, VYRE_INVALID_ARGUMENT, 0,
                          "get_extension: out is NULL. Fix: pass a const void ** to receive the "
                          "extension table");
  if (name && strcmp(name, VYRE_LIMITS_NAME) == 0 && version >= 1 &&
      version <= VYRE_LIMITS_VERSION) {
    *out = &ref_limits_info;
    return VYRE_OK;
  }
  if (name && strcmp(name, VYRE_INDIRECT_NAME) == 0 && version >= 1 &&
      version <= VYRE_INDIRECT_VERSION) {
    *out = &ref_indirect_info;
    return VYRE_OK;
  }
  return vyre_error_set(err, VYRE_UNSUPPORTED, 0,
                        "get_extension: the reference backend serves only %s@%u and %s@%u ('%s' "
                        "revision %u asked). Fix: check the backend's registration->extensions "
                        "(`vyre info`) before asking",
                        VYRE_LIMITS_NAME, VYRE_LIMITS_VERSION, VYRE_INDIRECT_NAME,
                        VYRE_INDIRECT_VERSION, name ? name : "(null)", version);
}

static const char *const metric_names[REF_M_COUNT_] = {
#define REF_METRIC_NAME_(name, text) text,
    REF_METRIC_MAP(REF_METRIC_NAME_)
#undef REF_METRIC_NAME_
};

/* Threads: VYRE_REF_THREADS when set (1 runs everything on the calling
 * thread), else the online CPUs. */
static uint32_t choose_threads(void) {
  long n = sysconf(_SC_NPROCESSORS_ONLN);
  uint64_t cpus = n < 1 ? 1 : (uint64_t)n > REF_MAX_THREADS ? REF_MAX_THREADS : (uint64_t)n;
  uint64_t v;
  char problem[512];
  if (vyre__env_count_as(VYRE__ENV_REF_THREADS, cpus, "the online CPUs", 1, REF_MAX_THREADS, &v,
                         problem, sizeof problem) != 0)
    vyre__warn("vyre", "%s", problem);
  return (uint32_t)v;
}

static uint64_t memory_pages(int which) {
  long pages = sysconf(which), size = sysconf(_SC_PAGESIZE);
  if (pages <= 0 || size <= 0) return 0;
  return (uint64_t)pages * (uint64_t)size;
}

vyre_status ref_backend_create(const vyre_backend_options *options, vyre_backend **out,
                               vyre_error *err) {
  if (!out)
    return vyre_error_set(err, VYRE_INVALID_ARGUMENT, 0,
                          "reference create: out is NULL. Fix: pass a vyre_backend ** to "
                          "receive the instance");
  *out = NULL;
  vyre_backend_options o;
  vyre__sized_read(&o, sizeof o, options);
  if (o.device_ordinal != 0)
    return vyre_error_set(err, VYRE_NO_DEVICE, 0,
                          "reference create: device ordinal %u does not exist: the reference "
                          "backend has exactly one device, the host CPU (ordinal 0). Fix: pass "
                          "device ordinal 0",
                          o.device_ordinal);
  if (o.flags)
    return vyre_error_set(err, VYRE_INVALID_ARGUMENT, 0,
                          "reference create: options->flags is 0x%x; no flags are defined. Fix: "
                          "set it to 0",
                          o.flags);
  ref_backend *b = calloc(1, sizeof *b);
  if (!b) goto fail_alloc;
  if (pthread_rwlock_init(&b->store_lock, NULL)) goto fail_store_lock;
  if (pthread_mutex_init(&b->budget_lock, NULL)) goto fail_budget_lock;
  if (pthread_mutex_init(&b->pipe_lock, NULL)) goto fail_pipe_lock;
  if (pthread_mutex_init(&b->q_lock, NULL)) goto fail_q_lock;
  if (pthread_cond_init(&b->q_work, NULL)) goto fail_q_work;
  if (pthread_cond_init(&b->q_done, NULL)) goto fail_q_done;
  vyre_handles_init(&b->residents, VYRE_HANDLE_RESIDENT);
  vyre_handles_init(&b->pendings, VYRE_HANDLE_PENDING);
  vyre_handles_init(&b->pipelines, VYRE_HANDLE_PIPELINE);
  b->head.struct_size = sizeof b->head;
  b->head.vt = &ref_vtable;
  b->threads = choose_threads();
  b->total_memory = memory_pages(_SC_PHYS_PAGES);
  /* Resident buffers may use half the machine's memory. */
  b->resident_budget = b->total_memory ? b->total_memory / 2 : (1ull << 32);
  for (int i = 0; i < REF_M_COUNT_; i++) atomic_init(&b->metrics[i], 0);
  *out = &b->head;
  return VYRE_OK;

fail_q_done:
  pthread_cond_destroy(&b->q_work);
fail_q_work:
  pthread_mutex_destroy(&b->q_lock);
fail_q_lock:
  pthread_mutex_destroy(&b->pipe_lock);
fail_pipe_lock:
  pthread_mutex_destroy(&b->budget_lock);
fail_budget_lock:
  pthread_rwlock_destroy(&b->store_lock);
fail_store_lock:
  free(b);
fail_alloc:
  return vyre_error_set(err, VYRE_OUT_OF_MEMORY, ENOMEM,
                        "reference create: out of host memory or locks for the instance. Fix: "
                        "free memory and retry");
}

static void ref_destroy(vyre_backend *self) {
  ref_backend *b = ref_self(self);
  if (!b) return;
  ref_async_stop(b);
  ref_async_drain(b);
  ref_pipeline_drain(b);
  ref_resident_drain(b);
  vyre_handles_destroy(&b->residents);
  vyre_handles_destroy(&b->pendings);
  vyre_handles_destroy(&b->pipelines);
  pthread_cond_destroy(&b->q_done);
  pthread_cond_destroy(&b->q_work);
  pthread_mutex_destroy(&b->q_lock);
  pthread_mutex_destroy(&b->pipe_lock);
  pthread_mutex_destroy(&b->budget_lock);
  pthread_rwlock_destroy(&b->store_lock);
  free(b);
}

static vyre_status ref_device_profile(vyre_backend *self, vyre_device_profile *out,
                                      vyre_error *err) {
  ref_backend *b = ref_self(self);
  if (!b) return ref_bad_self(err, "device_profile");
  if (!out || out->struct_size <= sizeof out->struct_size)
    return vyre_error_set(err, VYRE_INVALID_ARGUMENT, 0,
                          "device_profile: out is NULL or out->struct_size is not set. Fix: set "
                          "out->struct_size = sizeof(vyre_device_profile)");
  vyre_device_profile p;
  memset(&p, 0, sizeof p);
  p.struct_size = sizeof p;
  p.ordinal = 0;
  p.device_count = 1; /* the host CPU */
  snprintf(p.name, sizeof p.name, "%s", REF_DEVICE_NAME);
  snprintf(p.backend_id, sizeof p.backend_id, "%s", REF_BACKEND_ID);
  p.compute_units = b->threads;
  p.subgroup_size = REF_SUBGROUP;
  p.max_workgroup_size[0] = p.max_workgroup_size[1] = p.max_workgroup_size[2] =
      VYRE_MAX_WORKGROUP_INVOCATIONS;
  p.max_invocations_per_workgroup = VYRE_MAX_WORKGROUP_INVOCATIONS;
  p.max_workgroups[0] = 0x7fffffffu; /* abi/geometry.c limits */
  p.max_workgroups[1] = 65535u;
  p.max_workgroups[2] = 65535u;
  p.shared_memory_per_workgroup = VYRE_MAX_WORKGROUP_BYTES;
  p.total_memory = b->total_memory;
  p.free_memory = memory_pages(_SC_AVPHYS_PAGES);
  p.capabilities = REF_CAPABILITIES;
  p.resident_budget = b->resident_budget;
  vyre__sized_write(out, &p, sizeof p);
  return VYRE_OK;
}

static vyre_status ref_prepare(vyre_backend *self, vyre_error *err) {
  ref_backend *b = ref_self(self);
  if (!b) return ref_bad_self(err, "prepare");
  return ref_async_start(b, err);
}

static vyre_status ref_shutdown(vyre_backend *self, vyre_error *err) {
  ref_backend *b = ref_self(self);
  if (!b) return ref_bad_self(err, "shutdown");
  /* The reference caches nothing: waiting for queued work is all. */
  pthread_mutex_lock(&b->q_lock);
  while (b->q_unfinished) pthread_cond_wait(&b->q_done, &b->q_lock);
  pthread_mutex_unlock(&b->q_lock);
  return VYRE_OK;
}

static vyre_status ref_metrics(vyre_backend *self, vyre_metric *out, uint32_t capacity,
                               uint32_t *count, vyre_error *err) {
  ref_backend *b = ref_self(self);
  if (!b) return ref_bad_self(err, "metrics");
  if (!count || (capacity && !out))
    return vyre_error_set(err, VYRE_INVALID_ARGUMENT, 0,
                          "metrics: count is NULL, or out is NULL with capacity %u. Fix: pass "
                          "a count pointer and room for `capacity` metrics",
                          capacity);
  uint64_t values[REF_M_COUNT_];
  for (int i = 0; i < REF_M_COUNT_; i++)
    values[i] = atomic_load_explicit(&b->metrics[i], memory_order_relaxed);
  values[REF_M_RESIDENT_LIVE] = vyre_handles_live(&b->residents);
  values[REF_M_PENDING_LIVE] = vyre_handles_live(&b->pendings);
  values[REF_M_PIPELINE_LIVE] = vyre_handles_live(&b->pipelines);
  values[REF_M_RESIDENT_BUDGET] = b->resident_budget;
  values[REF_M_THREADS] = b->threads;
  *count = REF_M_COUNT_;
  for (uint32_t i = 0; i < capacity && i < REF_M_COUNT_; i++) {
    memset(&out[i], 0, sizeof out[i]);
    snprintf(out[i].name, sizeof out[i].name, "%s", metric_names[i]);
    out[i].value = values[i];
  }
  return VYRE_OK;
}

/* ------------------------------------------------------------------ */
/* The vtable: each entry checks the instance, then hands the call to  */
/* the file that owns it.                                              */
/* ------------------------------------------------------------------ */

static vyre_status dispatch(vyre_backend *self, const vyre_program_ref *program,
                            const vyre_input *inputs, uint32_t input_count,
                            const vyre_dispatch_options *options, vyre_outputs **out,
                            vyre_timing *timing, vyre_error *err) {
  ref_backend *b = ref_self(self);
  if (!b) return ref_bad_self(err, "dispatch");
  return ref_dispatch(b, program, inputs, input_count, options, out, timing, err);
}

static vyre_status dispatch_into(vyre_backend *self, const vyre_program_ref *program,
                                 const vyre_input *inputs, uint32_t input_count,
                                 const vyre_dispatch_options *options, vyre_output_slot *outputs,
                                 uint32_t output_count, vyre_timing *timing, vyre_error *err) {
  ref_backend *b = ref_self(self);
  if (!b) return ref_bad_self(err, "dispatch_into");
  return ref_dispatch_into(b, program, inputs, input_count, options, outputs, output_count, timing,
                           err);
}

static vyre_status dispatch_async(vyre_backend *self, const vyre_program_ref *program,
                                  const vyre_input *inputs, uint32_t input_count,
                                  const vyre_dispatch_options *options, vyre_pending *out,
                                  vyre_error *err) {
  ref_backend *b = ref_self(self);
  if (!b) return ref_bad_self(err, "dispatch_async");
  return ref_dispatch_async(b, program, inputs, input_count, options, out, err);
}

static vyre_status pending_poll(vyre_backend *self, vyre_pending pending, int *ready,
                                vyre_error *err) {
  ref_backend *b = ref_self(self);
  if (!b) return ref_bad_self(err, "pending_poll");
  return ref_pending_poll(b, pending, ready, err);
}

static vyre_status pending_wait(vyre_backend *self, vyre_pending pending, vyre_outputs **out,
                                vyre_timing *timing, vyre_error *err) {
  ref_backend *b = ref_self(self);
  if (!b) return ref_bad_self(err, "pending_wait");
  return ref_pending_wait(b, pending, out, timing, err);
}

static vyre_status pending_release(vyre_backend *self, vyre_pending pending, vyre_error *err) {
  ref_backend *b = ref_self(self);
  if (!b) return ref_bad_self(err, "pending_release");
  return ref_pending_release(b, pending, err);
}

static vyre_status resident_alloc(vyre_backend *self, uint64_t size, vyre_resident *out,
                                  vyre_error *err) {
  ref_backend *b = ref_self(self);
  if (!b) return ref_bad_self(err, "resident_alloc");
  return ref_resident_alloc(b, size, out, err);
}

static vyre_status resident_free(vyre_backend *self, vyre_resident buffer, vyre_error *err) {
  ref_backend *b = ref_self(self);
  if (!b) return ref_bad_self(err, "resident_free");
  return ref_resident_free(b, buffer, err);
}

static vyre_status resident_size(vyre_backend *self, vyre_resident buffer, uint64_t *size,
                                 vyre_error *err) {
  ref_backend *b = ref_self(self);
  if (!b) return ref_bad_self(err, "resident_size");
  return ref_resident_size(b, buffer, size, err);
}

static vyre_status resident_upload(vyre_backend *self, vyre_resident buffer, const void *data,
                                   uint64_t size, vyre_error *err) {
  ref_backend *b = ref_self(self);
  if (!b) return ref_bad_self(err, "resident_upload");
  return ref_resident_upload(b, buffer, data, size, err);
}

static vyre_status resident_upload_at(vyre_backend *self, vyre_resident buffer, uint64_t offset,
                                      const void *data, uint64_t size, vyre_error *err) {
  ref_backend *b = ref_self(self);
  if (!b) return ref_bad_self(err, "resident_upload_at");
  return ref_resident_upload_at(b, buffer, offset, data, size, err);
}

static vyre_status resident_download(vyre_backend *self, vyre_resident buffer, void *dst,
                                     uint64_t capacity, vyre_error *err) {
  ref_backend *b = ref_self(self);
  if (!b) return ref_bad_self(err, "resident_download");
  return ref_resident_download(b, buffer, dst, capacity, err);
}

static vyre_status resident_download_range(vyre_backend *self, vyre_resident buffer,
                                           uint64_t offset, void *dst, uint64_t size,
                                           vyre_error *err) {
  ref_backend *b = ref_self(self);
  if (!b) return ref_bad_self(err, "resident_download_range");
  return ref_resident_download_range(b, buffer, offset, dst, size, err);
}

static vyre_status resident_upload_many(vyre_backend *self, const vyre_resident_copy *copies,
                                        uint32_t count, vyre_error *err) {
  ref_backend *b = ref_self(self);
  if (!b) return ref_bad_self(err, "resident_upload_many");
  return ref_resident_upload_many(b, copies, count, err);
}

static vyre_status resident_download_many(vyre_backend *self, const vyre_resident_copy *copies,
                                          uint32_t count, vyre_error *err) {
  ref_backend *b = ref_self(self);
  if (!b) return ref_bad_self(err, "resident_download_many");
  return ref_resident_download_many(b, copies, count, err);
}

static vyre_status dispatch_resident(vyre_backend *self, const vyre_program_ref *program,
                                     const vyre_resident *buffers, uint32_t buffer_count,
                                     const vyre_dispatch_options *options, vyre_timing *timing,
                                     vyre_error *err) {
  ref_backend *b = ref_self(self);
  if (!b) return ref_bad_self(err, "dispatch_resident");
  return ref_dispatch_resident(b, program, buffers, buffer_count, options, timing, err);
}

static vyre_status dispatch_sequence(vyre_backend *self, const vyre_sequence_step *steps,
                                     uint32_t step_count, uint32_t repeat,
                                     const vyre_resident_copy *reads, uint32_t read_count,
                                     vyre_timing *timing, vyre_error *err) {
  ref_backend *b = ref_self(self);
  if (!b) return ref_bad_self(err, "dispatch_sequence");
  return ref_dispatch_sequence(b, steps, step_count, repeat, reads, read_count, timing, err);
}

static vyre_status pipeline_create(vyre_backend *self, const void *program_bytes,
                                   uint64_t program_size, const vyre_dispatch_options *options,
                                   vyre_pipeline *out, vyre_error *err) {
  ref_backend *b = ref_self(self);
  if (!b) return ref_bad_self(err, "pipeline_create");
  return ref_pipeline_create(b, program_bytes, program_size, options, out, err);
}

static vyre_status pipeline_release(vyre_backend *self, vyre_pipeline pipeline, vyre_error *err) {
  ref_backend *b = ref_self(self);
  if (!b) return ref_bad_self(err, "pipeline_release");
  return ref_pipeline_release(b, pipeline, err);
}

static const vyre_backend_vtable ref_vtable = {
    .struct_size = sizeof(vyre_backend_vtable),
    .reserved = 0,
    .destroy = ref_destroy,
    .device_profile = ref_device_profile,
    .prepare = ref_prepare,
    .shutdown = ref_shutdown,
    .metrics = ref_metrics,
    .dispatch = dispatch,
    .dispatch_into = dispatch_into,
    .dispatch_async = dispatch_async,
    .pending_poll = pending_poll,
    .pending_wait = pending_wait,
    .pending_release = pending_release,
    .outputs_free = ref_outputs_free,
    .resident_alloc = resident_alloc,
    .resident_free = resident_free,
    .resident_size = resident_size,
    .resident_upload = resident_upload,
    .resident_upload_at = resident_upload_at,
    .resident_download = resident_download,
    .resident_download_range = resident_download_range,
    .resident_upload_many = resident_upload_many,
    .resident_download_many = resident_download_many,
    .dispatch_resident = dispatch_resident,
    .dispatch_sequence = dispatch_sequence,
    .pipeline_create = pipeline_create,
    .pipeline_release = pipeline_release,
    .get_extension = ref_get_extension,
};
