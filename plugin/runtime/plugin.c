/* plugin.c -- libvyre-cuda's descriptor, entry and registration; instance create/destroy, profile, metrics. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "config.h"
#include "cuda_internal.h"

#define PLUGIN_ABI_MINOR_MIN 0
#define PLUGIN_ABI_MINOR_MAX VYRE_ABI_MINOR
#define DEFAULT_PINNED_BUDGET (256ull << 20)
#define DEFAULT_DEVICE_BUDGET_CAP (2ull << 30)
#define DEFAULT_STAGING_CHUNK (8ull << 20)

/* Exported under the symbol name the ABI fixes; the C name differs only
 * because the typedef already owns `vyre_plugin_descriptor`. */
__attribute__((visibility("default"))) const vyre_plugin_descriptor plugin_descriptor
    __asm__("vyre_plugin_descriptor") = {
        .struct_size = sizeof(vyre_plugin_descriptor),
        .magic = VYRE_PLUGIN_MAGIC,
        .abi_major = VYRE_ABI_MAJOR,
        .abi_minor_min = PLUGIN_ABI_MINOR_MIN,
        .abi_minor_max = PLUGIN_ABI_MINOR_MAX,
        .reserved = 0,
        .registration_size = sizeof(vyre_registration),
        .vtable_size = sizeof(vyre_backend_vtable),
        .build_id = VYRE_BUILD_ID " cuda",
};

/* ------------------------------------------------------------------ */
/* Instance                                                            */
/* ------------------------------------------------------------------ */
static uint64_t env_bytes(const char *name, uint64_t fallback, uint64_t min) {
  const char *v = getenv(name);
  if (!v || !*v) return fallback;
  char *end = NULL;
  unsigned long long x = strtoull(v, &end, 10);
  if (end == v) return fallback;
  if (*end == 'k' || *end == 'K') x <<= 10;
  else if (*end == 'm' || *end == 'M') x <<= 20;
  else if (*end == 'g' || *end == 'G') x <<= 30;
  return x < min ? min : x;
}

static void destroy(vyre_backend *self);
static const vyre_backend_vtable vtable;

static vyre_status create(const vyre_backend_options *options, vyre_backend **out,
                          vyre_error *err) {
  if (!out)
    return vyre_error_set(err, VYRE_INVALID_ARGUMENT, 0,
                          "cuda create: out is NULL. Fix: pass a vyre_backend * to receive the "
                          "instance");
  *out = NULL;
  vyre_backend_options o;
  memset(&o, 0, sizeof o);
  if (options) {
    size_t n = options->struct_size < sizeof o ? options->struct_size : sizeof o;
    memcpy(&o, options, n);
  }
  if (o.flags)
    return vyre_error_set(err, VYRE_INVALID_ARGUMENT, 0,
                          "cuda create: unknown option flags 0x%x. Fix: pass flags = 0", o.flags);
  vc_backend *b = calloc(1, sizeof *b);
  if (!b)
    return vyre_error_set(err, VYRE_OUT_OF_MEMORY, 0,
                          "cuda create: no host memory for the instance. Fix: free host memory");
  b->head.struct_size = sizeof b->head;
  b->head.vt = &vtable;
  pthread_mutex_init(&b->lost_lock, NULL);
  vyre_status st = vc_context_open(b, o.device_ordinal, err);
  if (st != VYRE_OK) goto fail_context;

  CUresult r = VC_CU(b, cuCtxPushCurrent, (b->ctx));
  if (r != CUDA_SUCCESS) {
    st = vc_cu_fail(b, err, r, "cuCtxPushCurrent", NULL, NULL);
    goto fail_push;
  }
  uint64_t device_budget = b->profile.total_memory / 8;
  if (device_budget > DEFAULT_DEVICE_BUDGET_CAP) device_budget = DEFAULT_DEVICE_BUDGET_CAP;
  vc_mempool_init(&b->devpool, b, VC_POOL_DEVICE,
                  env_bytes("VYRE_CUDA_POOL_DEVICE_BYTES", device_budget, 0));
  vc_mempool_init(&b->hostpool, b, VC_POOL_PINNED,
                  env_bytes("VYRE_CUDA_POOL_PINNED_BYTES", DEFAULT_PINNED_BUDGET, 0));
  b->staging_chunk = env_bytes("VYRE_CUDA_STAGING_CHUNK", DEFAULT_STAGING_CHUNK, 256);
  vc_streampool_init(&b->streams);
  vc_resident_init(b);
  vc_modcache_init(b);
  vc_diskcache_init(b);
  vc_dispatch_init(b);
  b->profile.resident_budget =
      (uint64_t)((unsigned __int128)b->profile.total_memory * 9u / 10u);
  vc_leave(b);
  *out = &b->head;
  return VYRE_OK;

fail_push:
  vc_context_close(b);
fail_context:
  pthread_mutex_destroy(&b->lost_lock);
  free(b);
  return st;
}

static void destroy(vyre_backend *self) {
  if (!self) return;
  vc_backend *b = vc_self(self);
  CUresult r = VC_CU(b, cuCtxPushCurrent, (b->ctx));
  if (r != CUDA_SUCCESS) {
    /* Without a current context no object can be freed one by one; they
     * go with the context when it is released below. */
    vc_cu_note(b, r, "cuCtxPushCurrent");
    b->orphaned = 1;
  }
  /* Release what we can; a lost context takes its objects with it. */
  vc_dispatch_drain(b, 1);
  vc_resident_destroy(b);
  vc_modcache_destroy(b);
  vc_mempool_destroy(&b->devpool);
  vc_mempool_destroy(&b->hostpool);
  vc_streampool_destroy(b);
  if (r == CUDA_SUCCESS) vc_leave(b);
  vc_context_close(b);
  pthread_mutex_destroy(&b->lost_lock);
  free(b);
}

static vyre_status device_profile(vyre_backend *self, vyre_device_profile *out,
                                  vyre_error *err) {
  vc_backend *b = vc_self(self);
  if (!out || out->struct_size < 8)
    return vyre_error_set(err, VYRE_INVALID_ARGUMENT, 0,
                          "device_profile: out is NULL or its struct_size is too small. Fix: "
                          "pass a vyre_device_profile with struct_size = sizeof(vyre_device_profile)");
  vyre_status st = vc_enter(b, err);
  if (st != VYRE_OK) return st;
  vyre_device_profile p = b->profile;
  st = vc_context_memory(b, &p.free_memory, NULL, err);
  vc_leave(b);
  if (st != VYRE_OK) return st;
  uint32_t size = out->struct_size;
  size_t n = size < sizeof p ? size : sizeof p;
  memcpy((uint8_t *)out + 4, (const uint8_t *)&p + 4, n - 4);
  out->struct_size = size;
  return VYRE_OK;
}

static vyre_status prepare(vyre_backend *self, vyre_error *err) {
  vc_backend *b = vc_self(self);
  vyre_status st = vc_enter(b, err);
  if (st != VYRE_OK) return st;
  CUstream s = NULL;
  CUevent e0 = NULL, e1 = NULL, d = NULL;
  st = vc_stream_acquire(b, &s, err);
  if (st == VYRE_OK) st = vc_event_acquire(b, 0, &d, err);
  if (st == VYRE_OK) st = vc_event_acquire(b, 1, &e0, err);
  if (st == VYRE_OK) st = vc_event_acquire(b, 1, &e1, err);
  vc_event_release(b, 0, d);
  vc_event_release(b, 1, e0);
  vc_event_release(b, 1, e1);
  vc_stream_release(b, s);
  vc_leave(b);
  return st;
}

static vyre_status backend_shutdown(vyre_backend *self, vyre_error *err) {
  vc_backend *b = vc_self(self);
  vyre_status st = vc_enter(b, err);
  if (st != VYRE_OK) return st;
  CUresult r = VC_CU(b, cuCtxSynchronize, ());
  if (r != CUDA_SUCCESS) st = vc_cu_fail(b, err, r, "cuCtxSynchronize", NULL, NULL);
  vc_dispatch_drain(b, 0);
  vc_modcache_trim(b);
  vc_mempool_trim(&b->devpool);
  vc_mempool_trim(&b->hostpool);
  vc_streampool_trim(b);
  vc_leave(b);
  return st;
}

/* ------------------------------------------------------------------ */
/* Metrics                                                             */
/* ------------------------------------------------------------------ */
typedef struct metric_sink {
  vyre_metric *out;
  uint32_t capacity, count;
} metric_sink;

static void emit(metric_sink *s, const char *name, uint64_t value) {
  if (s->count < s->capacity) {
    vyre_metric *m = &s->out[s->count];
    memset(m->name, 0, sizeof m->name);
    snprintf(m->name, sizeof m->name, "%s", name);
    m->value = value;
  }
  s->count++;
}

static void emit_pool(metric_sink *s, const char *prefix, vc_mempool *p) {
  char name[56];
  struct {
    uint64_t hits, misses, cached_bytes, cache_count, live_bytes, budget, driver_allocs,
        driver_frees, release_errors;
  } c;
  pthread_mutex_lock(&p->lock);
  c.hits = p->hits;
  c.misses = p->misses;
  c.cached_bytes = p->cached_bytes;
  c.cache_count = p->cache_count;
  c.live_bytes = p->live_bytes;
  c.budget = p->budget;
  c.driver_allocs = p->driver_allocs;
  c.driver_frees = p->driver_frees;
  c.release_errors = p->release_errors;
  pthread_mutex_unlock(&p->lock);
#define POOL_METRIC_(field, text)                               \
  snprintf(name, sizeof name, "%s.%s", prefix, text);           \
  emit(s, name, c.field);
  POOL_METRIC_(hits, "hits")
  POOL_METRIC_(misses, "misses")
  POOL_METRIC_(cached_bytes, "cached_bytes")
  POOL_METRIC_(cache_count, "cached_blocks")
  POOL_METRIC_(live_bytes, "live_bytes")
  POOL_METRIC_(budget, "budget_bytes")
  POOL_METRIC_(driver_allocs, "driver_allocs")
  POOL_METRIC_(driver_frees, "driver_frees")
  POOL_METRIC_(release_errors, "release_errors")
#undef POOL_METRIC_
}

static vyre_status metrics(vyre_backend *self, vyre_metric *out, uint32_t capacity,
                           uint32_t *count, vyre_error *err) {
  vc_backend *b = vc_self(self);
  if (!count || (capacity && !out))
    return vyre_error_set(err, VYRE_INVALID_ARGUMENT, 0,
                          "metrics: count is NULL, or out is NULL with capacity %u. Fix: pass "
                          "both",
                          capacity);
  metric_sink s = {out, capacity, 0};
  emit_pool(&s, "pool.device", &b->devpool);
  emit_pool(&s, "pool.pinned", &b->hostpool);

  pthread_mutex_lock(&b->streams.lock);
  uint64_t sc = b->streams.streams.count, scr = b->streams.streams_created;
  uint64_t ec = b->streams.done_events.count + b->streams.timing_events.count;
  uint64_t ecr = b->streams.events_created, reuse = b->streams.reuses;
  uint64_t derr = b->streams.destroy_errors;
  pthread_mutex_unlock(&b->streams.lock);
  emit(&s, "pool.streams.cached", sc);
  emit(&s, "pool.streams.created", scr);
  emit(&s, "pool.events.cached", ec);
  emit(&s, "pool.events.created", ecr);
  emit(&s, "pool.streams_events.reuses", reuse);
  emit(&s, "pool.streams_events.destroy_errors", derr);

  pthread_mutex_lock(&b->resident.lock);
  uint64_t rb = b->resident.bytes, rc = b->resident.count, rr = b->resident.budget_rejects;
  pthread_mutex_unlock(&b->resident.lock);
  emit(&s, "resident.buffers", rc);
  emit(&s, "resident.bytes", rb);
  emit(&s, "resident.budget_bytes", b->profile.resident_budget);
  emit(&s, "resident.budget_rejects", rr);

  pthread_mutex_lock(&b->modcache.lock);
  uint64_t mh = b->modcache.hits, mm = b->modcache.misses, me = b->modcache.count;
  uint64_t mcap = b->modcache.capacity, mev = b->modcache.evictions, mco = b->modcache.compiles;
  pthread_mutex_unlock(&b->modcache.lock);
  emit(&s, "cache.module.hits", mh);
  emit(&s, "cache.module.misses", mm);
  emit(&s, "cache.module.entries", me);
  emit(&s, "cache.module.capacity", mcap);
  emit(&s, "cache.module.evictions", mev);
  emit(&s, "cache.module.compiles", mco);
  emit(&s, "cache.disk.enabled", (uint64_t)b->disk.enabled);
  emit(&s, "cache.disk.hits", atomic_load(&b->disk.hits));
  emit(&s, "cache.disk.misses", atomic_load(&b->disk.misses));
  emit(&s, "cache.disk.writes", atomic_load(&b->disk.writes));
  emit(&s, "cache.disk.corrupt", atomic_load(&b->disk.corrupt));
  emit(&s, "cache.disk.write_errors", atomic_load(&b->disk.write_errors));

  pthread_mutex_lock(&b->graphs.lock);
  uint64_t gh = b->graphs.hits, gm = b->graphs.misses, ge = b->graphs.count;
  uint64_t gl = b->graphs.launches;
  pthread_mutex_unlock(&b->graphs.lock);
  emit(&s, "graph.hits", gh);
  emit(&s, "graph.misses", gm);
  emit(&s, "graph.entries", ge);
  emit(&s, "graph.launches", gl);

  emit(&s, "dispatch.count", atomic_load(&b->n_dispatches));
  emit(&s, "dispatch.launches", atomic_load(&b->n_launches));
  emit(&s, "dispatch.fastpath_launches", atomic_load(&b->n_fastpath_launches));
  emit(&s, "dispatch.sequences", atomic_load(&b->n_sequences));
  emit(&s, "dispatch.params_reused", atomic_load(&b->n_params_reused));
  emit(&s, "dispatch.traps", atomic_load(&b->n_traps));
  emit(&s, "dispatch.in_flight", atomic_load(&b->n_pending_live));
  emit(&s, "pending.handles", vyre_handles_live(&b->pending));
  emit(&s, "pending.deferred", atomic_load(&b->deferred_count));
  emit(&s, "pending.deferred_reaped", atomic_load(&b->n_deferred_reaped));
  emit(&s, "pipeline.handles", vyre_handles_live(&b->pipelines));
  emit(&s, "driver.errors", atomic_load(&b->n_driver_errors));
  emit(&s, "driver.ctx_pop_errors", atomic_load(&b->n_ctx_pop_errors));
  emit(&s, "driver.version", (uint64_t)b->driver_version);
  emit(&s, "device.lost", (uint64_t)vc_is_lost(b));
  *count = s.count;
  return VYRE_OK;
}

static const vyre_backend_vtable vtable = {
    .struct_size = sizeof(vyre_backend_vtable),
    .reserved = 0,
    .destroy = destroy,
    .device_profile = device_profile,
    .prepare = prepare,
    .shutdown = backend_shutdown,
    .metrics = metrics,
    .dispatch = vc_dispatch,
    .dispatch_into = vc_dispatch_into,
    .dispatch_async = vc_dispatch_async,
    .pending_poll = vc_pending_poll,
    .pending_wait = vc_pending_wait,
    .pending_release = vc_pending_release,
    .outputs_free = vc_outputs_free,
    .resident_alloc = vc_resident_alloc,
    .resident_free = vc_resident_free,
    .resident_size = vc_resident_size,
    .resident_upload = vc_resident_upload,
    .resident_upload_at = vc_resident_upload_at,
    .resident_download = vc_resident_download,
    .resident_download_range = vc_resident_download_range,
    .resident_upload_many = vc_resident_upload_many,
    .resident_download_many = vc_resident_download_many,
    .dispatch_resident = vc_dispatch_resident,
    .dispatch_sequence = vc_dispatch_sequence,
    .pipeline_create = vc_pipeline_create,
    .pipeline_release = vc_pipeline_release,
};

/* ------------------------------------------------------------------ */
/* Registration                                                        */
/* ------------------------------------------------------------------ */
static pthread_once_t math_once = PTHREAD_ONCE_INIT;
static int have_math;

/* Ask the code generator to lower exp under a loose budget: it can only
 * when it was built with the PTX math library. */
static void probe_math(void) {
  vyre_builder *bld = vyre_builder_new(32, 1, 1);
  if (!bld) return;
  uint32_t x = vyre_b_buffer(bld, "x", UINT32_MAX, VYRE_ACCESS_READ_WRITE, VYRE_T_F32, 1, 0);
  uint32_t g = vyre_b_gid(bld, 0);
  vyre_b_store(bld, x, g, vyre_b_un(bld, VYRE_OP_EXP, vyre_b_load(bld, x, g)));
  void *bytes = NULL;
  size_t size = 0;
  vyre_program *prog = NULL;
  if (vyre_builder_finish(bld, &bytes, &size, NULL) == VYRE_OK &&
      vyre_program_decode(bytes, size, &prog, NULL) == VYRE_OK) {
    cg_options o;
    memset(&o, 0, sizeof o);
    o.sm_major = 9;
    o.ulp_budget = 1u << 20;
    o.workgroup[0] = 32;
    o.workgroup[1] = o.workgroup[2] = 1;
    char *ptx = NULL;
    size_t len = 0;
    cg_kernel_info info;
    have_math = cg_emit_ptx(prog, &o, &ptx, &len, &info, NULL) == VYRE_OK;
    free(ptx);
  }
  vyre_program_free(prog);
  free(bytes);
  vyre_builder_free(bld);
}

int vc_codegen_has_transcendentals(void) {
  pthread_once(&math_once, probe_math);
  return have_math;
}

static pthread_once_t reg_once = PTHREAD_ONCE_INIT;
static uint16_t reg_ops[VYRE_OP_ID_LIMIT];
static vyre_registration registration;

static void registration_init(void) {
  uint32_t n = 0;
  const vyre_op_info *all = vyre_op_all(&n);
  uint32_t k = 0;
  int math = vc_codegen_has_transcendentals();
  for (uint32_t i = 0; i < n && k < VYRE_OP_ID_LIMIT; i++) {
    /* Every op codegen lowers; transcendentals only with the math library. */
    if ((all[i].flags & VYRE_OPF_TRANSCENDENTAL) && !math) continue;
    reg_ops[k++] = all[i].id;
  }
  uint64_t storage = 0;
  for (uint32_t t = VYRE_T_BOOL; t < VYRE_T_COUNT_; t++) storage |= 1ull << t;
  registration.struct_size = sizeof registration;
  registration.abi_major = VYRE_ABI_MAJOR;
  registration.abi_minor = PLUGIN_ABI_MINOR_MAX;
  registration.id = "cuda";
  registration.version = PACKAGE_VERSION;
  registration.description = "NVIDIA GPUs through the CUDA driver API (PTX JIT, libcuda.so.1 "
                             "loaded at run time)";
  registration.precedence = 5;
  registration.op_count = k;
  registration.ops = reg_ops;
  registration.capabilities =
      VYRE_CAP_F16 | VYRE_CAP_BF16 | VYRE_CAP_SUBGROUP | VYRE_CAP_ATOMIC64 |
      VYRE_CAP_GRID_BARRIER | VYRE_CAP_ASYNC | VYRE_CAP_RESIDENT | VYRE_CAP_SEQUENCE |
      VYRE_CAP_TIMING | VYRE_CAP_PIPELINE | VYRE_CAP_FIXPOINT | VYRE_CAP_TRAP |
      VYRE_CAP_GRAPH_REPLAY | VYRE_CAP_WORKGROUP_MEMORY | VYRE_CAP_ATOMICS | VYRE_CAP_BARRIER |
      (math ? VYRE_CAP_TRANSCENDENTAL : 0);
  registration.storage_types = storage;
  registration.create = create;
}

/* The plugin's one entry (vyre.h): negotiate the minor version and hand
 * out the registration.  Thread-safe; never touches the driver. */
__attribute__((visibility("default"))) vyre_status vyre_plugin_entry(uint16_t host_abi_major,
                                                                     uint16_t host_abi_minor,
                                                                     const vyre_registration **out,
                                                                     vyre_error *err);

vyre_status vyre_plugin_entry(uint16_t host_abi_major, uint16_t host_abi_minor,
                              const vyre_registration **out, vyre_error *err) {
  if (!out)
    return vyre_error_set(err, VYRE_INVALID_ARGUMENT, 0,
                          "cuda plugin entry: out is NULL. Fix: pass a const vyre_registration "
                          "** to receive the registration");
  *out = NULL;
  if (host_abi_major != VYRE_ABI_MAJOR)
    return vyre_error_set(err, VYRE_ABI_MISMATCH, 0,
                          "cuda plugin: host ABI %u.%u, plugin ABI %u.[%u..%u]: majors differ. "
                          "Fix: rebuild the plugin against the host's vyre.h",
                          host_abi_major, host_abi_minor, VYRE_ABI_MAJOR, PLUGIN_ABI_MINOR_MIN,
                          PLUGIN_ABI_MINOR_MAX);
  uint16_t minor = host_abi_minor;
  if (minor > PLUGIN_ABI_MINOR_MAX) minor = PLUGIN_ABI_MINOR_MAX;
#if PLUGIN_ABI_MINOR_MIN > 0
  if (minor < PLUGIN_ABI_MINOR_MIN)
    return vyre_error_set(err, VYRE_ABI_MISMATCH, 0,
                          "cuda plugin: host ABI minor %u is older than the oldest this plugin "
                          "serves (%u). Fix: update the host",
                          host_abi_minor, PLUGIN_ABI_MINOR_MIN);
#else
  (void)minor;
#endif
  pthread_once(&reg_once, registration_init);
  /* Only one minor exists so far; a later one gets its own registration. */
  *out = &registration;
  return VYRE_OK;
}
