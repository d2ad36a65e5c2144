/* backend.c -- the reference backend instance: create/destroy, device profile, metrics, prepare/shutdown, the vtable. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "ref.h"
#include "abi/support/config.h"
#include "abi/format/budget.h"
#include "abi/support/sized.h"

#define REF_MAX_THREADS 256u

static void ref_destroy(vyre_backend *self);
static vyre_status ref_device_profile(vyre_backend *self, vyre_device_profile *out,
                                      vyre_error *err);
static vyre_status ref_prepare(vyre_backend *self, vyre_error *err);
static vyre_status ref_shutdown(vyre_backend *self, vyre_error *err);
static vyre_status ref_metrics(vyre_backend *self, vyre_metric *out, uint32_t capacity,
                               uint32_t *count, vyre_error *err);
static vyre_status ref_get_extension(vyre_backend *self, const char *name, uint32_t version,
                                     const void **out, vyre_error *err);

const vyre_backend_vtable ref_vtable = {
    .struct_size = sizeof(vyre_backend_vtable),
    .reserved = 0,
    .destroy = ref_destroy,
    .device_profile = ref_device_profile,
    .prepare = ref_prepare,
    .shutdown = ref_shutdown,
    .metrics = ref_metrics,
    .dispatch = ref_dispatch,
    .dispatch_into = ref_dispatch_into,
    .dispatch_async = ref_dispatch_async,
    .pending_poll = ref_pending_poll,
    .pending_wait = ref_pending_wait,
    .pending_release = ref_pending_release,
    .outputs_free = ref_outputs_free,
    .resident_alloc = ref_resident_alloc,
    .resident_free = ref_resident_free,
    .resident_size = ref_resident_size,
    .resident_upload = ref_resident_upload,
    .resident_upload_at = ref_resident_upload_at,
    .resident_download = ref_resident_download,
    .resident_download_range = ref_resident_download_range,
    .resident_upload_many = ref_resident_upload_many,
    .resident_download_many = ref_resident_download_many,
    .dispatch_resident = ref_dispatch_resident,
    .dispatch_sequence = ref_dispatch_sequence,
    .pipeline_create = ref_pipeline_create,
    .pipeline_release = ref_pipeline_release,
    .get_extension = ref_get_extension,
};

/* The one extension the reference serves: the core limits (vyre.h),
 * both of them. */
static const vyre_limits_info ref_limits_info = {
    .head = {sizeof(vyre_limits_info), VYRE_LIMITS_VERSION},
    .enforced = VYRE_LIMITS_TIMEOUT | VYRE_LIMITS_STEPS,
};

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
  return vyre_error_set(err, VYRE_UNSUPPORTED, 0,
                        "get_extension: the reference backend serves only %s@%u ('%s' "
                        "revision %u asked). Fix: check the backend's registration->extensions "
                        "(`vyre info`) before asking",
                        VYRE_LIMITS_NAME, VYRE_LIMITS_VERSION, name ? name : "(null)", version);
}

static const char *const metric_names[REF_M_COUNT_] = {
#define REF_METRIC_NAME_(name, text) text,
    REF_METRIC_MAP(REF_METRIC_NAME_)
#undef REF_METRIC_NAME_
};

ref_backend *ref_self(vyre_backend *self) {
  if (!self || self->vt != &ref_vtable) return NULL;
  return (ref_backend *)self;
}

void ref_metric_add(ref_backend *b, ref_metric_id id, uint64_t v) {
  atomic_fetch_add_explicit(&b->metrics[id], v, memory_order_relaxed);
}

void ref_metric_max(ref_backend *b, ref_metric_id id, uint64_t v) {
  uint_fast64_t cur = atomic_load_explicit(&b->metrics[id], memory_order_relaxed);
  while (cur < v && !atomic_compare_exchange_weak(&b->metrics[id], &cur, v)) {
  }
}

uint64_t ref_now_ns(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

void ref_timing_report(vyre_timing *timing, uint64_t t_entry, uint64_t t_enqueued,
                       uint64_t exec_ns, uint64_t t_end) {
  if (!timing || timing->struct_size <= sizeof timing->struct_size) return;
  vyre_timing t;
  memset(&t, 0, sizeof t);
  t.valid = VYRE_TIMING_WALL | VYRE_TIMING_DEVICE | VYRE_TIMING_ENQUEUE | VYRE_TIMING_WAIT;
  t.wall_ns = t_end - t_entry;
  t.device_ns = exec_ns; /* the interpreter's execution time */
  t.enqueue_ns = t_enqueued - t_entry;
  t.wait_ns = t_end - t_enqueued;
  vyre__sized_write(timing, &t, sizeof t);
}

vyre_status ref_read_options(const vyre_dispatch_options *in, vyre_dispatch_options *out,
                             ref_limits *lim, uint64_t t_entry, vyre_error *err) {
  vyre__sized_read(out, sizeof *out, NULL);
  if (lim) memset(lim, 0, sizeof *lim);
  if (!in) return VYRE_OK;
  if (in->struct_size < offsetof(vyre_dispatch_options, workgroup))
    return vyre_error_set(err, VYRE_INVALID_ARGUMENT, 0,
                          "dispatch: options->struct_size is %u, too small to be a "
                          "vyre_dispatch_options. Fix: set it to sizeof(vyre_dispatch_options)",
                          in->struct_size);
  vyre__sized_read(out, sizeof *out, in);
  if (out->flags)
    return vyre_error_set(err, VYRE_INVALID_ARGUMENT, 0,
                          "dispatch: options->flags is 0x%x; no flags are defined. Fix: set it "
                          "to 0",
                          out->flags);
  vyre_limits l;
  vyre_status st = vyre__limits_read(in, "dispatch", &l, err);
  if (st != VYRE_OK) return st;
  if (lim) {
    lim->max_steps = l.max_steps;
    lim->timeout_ns = l.timeout_ns;
    lim->deadline_ns = vyre__deadline(t_entry, l.timeout_ns);
  }
  return VYRE_OK;
}

/* Threads: VYRE_REF_THREADS when set (1 runs everything on the calling
 * thread), else the online CPUs. */
static uint32_t choose_threads(void) {
  uint64_t v = vyre__env_uint(VYRE__ENV_REF_THREADS, 0, 1, REF_MAX_THREADS);
  if (v) return (uint32_t)v;
  long n = sysconf(_SC_NPROCESSORS_ONLN);
  if (n < 1) return 1;
  return (uint64_t)n > REF_MAX_THREADS ? REF_MAX_THREADS : (uint32_t)n;
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

vyre_status ref_bad_self(vyre_error *err, const char *what) {
  return vyre_error_set(err, VYRE_INVALID_ARGUMENT, 0,
                        "%s: the backend is NULL or not a reference backend instance. Fix: pass "
                        "the vyre_backend that the reference registration's create returned",
                        what);
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
