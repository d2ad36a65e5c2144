/* fakecuda.c -- a fake libcuda.so for tests without a GPU: host-RAM device memory, recorded launches, fault injection. */
#include <errno.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <cuda.h>

#include "fakecuda.h"

#define API __attribute__((visibility("default")))
#define MAX_NAMES 128
#define MAX_RULES 64
#define MAX_STACK 32

/* ------------------------------------------------------------------ */
/* Objects                                                             */
/* ------------------------------------------------------------------ */
typedef enum kind { K_DEVMEM, K_HOSTMEM, K_STREAM, K_EVENT, K_MODULE, K_LINK, K_GRAPH, K_EXEC, K_COUNT } kind;

typedef struct node {
  struct fn *fn; /* NULL: a memset node */
  unsigned long long memset_dst, memset_words;
  unsigned memset_unit, memset_value;
  unsigned grid[3], block[3], smem;
  int cooperative;
  unsigned nparams;
  unsigned long long params[FAKECUDA_MAX_PARAMS];
  unsigned counts_bytes;
  unsigned char counts[FAKECUDA_MAX_ARRAY_BYTES];
} node;

typedef struct fn {
  char name[64];
  unsigned nparams;
  unsigned sizes[FAKECUDA_MAX_PARAMS];
  unsigned char is_array[FAKECUDA_MAX_PARAMS]; /* .b8 NAME[N]: passed by value, N bytes */
} fn;

typedef struct obj {
  kind k;
  struct obj *next;
  /* memory */
  void *mem;
  size_t size;
  int device; /* of the context current at allocation */
  /* stream */
  struct obj *capture; /* K_GRAPH being captured into */
  int hung;            /* a kernel on it never finishes (fakecuda_hang_launches) */
  /* event */
  unsigned flags;
  int recorded, ready;
  unsigned long long tick;
  struct obj *ev_stream;
  /* module */
  char *text;
  fn *fns;
  unsigned nfns;
  /* link */
  char *log;
  size_t log_size;
  char *image;
  size_t image_size;
  /* graph / exec */
  node *nodes;
  unsigned nnodes, capnodes;
} obj;

typedef struct rule {
  char name[64];
  unsigned long first, last; /* call numbers (1-based, inclusive); last 0 = forever */
  int code;
} rule;

struct CUctx_st {
  int refs;
  int device;
};

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static fakecuda_config cfg;
static int cfg_loaded;
static obj *objs[K_COUNT];
static long live_count[K_COUNT];
static unsigned long long device_bytes;
static struct CUctx_st contexts[8];
/* Several devices: each has its own primary context (contexts[d]), its
 * own memory (dev_bytes[d] of its total) and its own objects (obj.device),
 * and may differ from the config by fakecuda_set_device. */
static fakecuda_device dev_over[8];
static unsigned long long dev_bytes[8];
static int poisoned;
static char names[MAX_NAMES][64];
static unsigned long calls[MAX_NAMES];
static unsigned nnames;
static rule rules[MAX_RULES];
static unsigned nrules;
static fakecuda_launch *launches;
static unsigned long nlaunches, caplaunches;
static fakecuda_hook hook;
static void *hook_user;
static unsigned long fault_launch_at; /* nlaunches value of the launch that faults, 0: none */
static int fault_launch_code;
static int hold;
static int hang; /* kernels launched from now on never finish */
static unsigned long long ticks;
static unsigned long total_calls;   /* every entry point's calls since the last reset */
static unsigned long call_fault_at; /* total_calls value of the call that fails, 0: none */
static int call_fault_code;
static char call_fault_name[64]; /* the entry point that failed it, "" until it fires */
static unsigned long violations;
static char last_violation[512];
static unsigned jit_failures;
static char jit_log[512];
static int jit_opt_level = -1; /* CU_JIT_OPTIMIZATION_LEVEL of the last JIT, -1: not passed */
/* The JIT rendezvous (fakecuda_jit_rendezvous), under its own lock: the
 * JIT calls wait there before they take the fake's. */
static pthread_mutex_t rv_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t rv_cond = PTHREAD_COND_INITIALIZER;
static unsigned rv_want, rv_inside, rv_max;
static unsigned long pageable_copies;
static unsigned long reclaimed; /* objects the client never freed */
static fakecuda_op *ops;
static unsigned long nops, capops;
static int allow_legacy;
static _Thread_local CUcontext stack[MAX_STACK];
static _Thread_local int depth;

static int cur_device(void) { return depth > 0 && stack[depth - 1] ? stack[depth - 1]->device : -1; }

static void violation(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static void violation(const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(last_violation, sizeof last_violation, fmt, ap);
  va_end(ap);
  violations++;
  if (getenv("FAKECUDA_VERBOSE")) fprintf(stderr, "fakecuda violation: %s\n", last_violation);
}

static long env_long(const char *name, long fallback) {
  const char *v = getenv(name);
  return v && *v ? strtol(v, NULL, 0) : fallback;
}

static void load_config(void) {
  memset(&cfg, 0, sizeof cfg);
  cfg.devices = (int)env_long("FAKECUDA_DEVICES", 1);
  if (cfg.devices > 8) cfg.devices = 8;
  cfg.init_result = (int)env_long("FAKECUDA_INIT_RESULT", 0);
  long sm = env_long("FAKECUDA_SM", 90);
  cfg.sm_major = (int)(sm / 10);
  cfg.sm_minor = (int)(sm % 10);
  cfg.sms = (int)env_long("FAKECUDA_SMS", 132);
  const char *mem = getenv("FAKECUDA_MEM");
  cfg.total_mem = mem && *mem ? strtoull(mem, NULL, 0) : (1ull << 30);
  cfg.cooperative = (int)env_long("FAKECUDA_COOP", 1);
  cfg.max_blocks_per_sm = (int)env_long("FAKECUDA_MAX_BLOCKS_PER_SM", 0);
  cfg.uuid = (int)env_long("FAKECUDA_UUID", 2);
  cfg.driver_version = 13000;
  cfg.max_threads_per_block = 1024;
  cfg.shared_per_block = 49152;
  cfg.warp_size = 32;
  cfg.ms_per_tick = 0.001;
  snprintf(cfg.name, sizeof cfg.name, "Fake CUDA Device");
  cfg_loaded = 1;
}

static void ensure_config(void) {
  if (!cfg_loaded) load_config();
}

/* Device d's properties: its fakecuda_set_device override, else the
 * config's (device k > 0 is named "<config name> k"). */
static void dev_name(int d, char *out, size_t size) {
  if (dev_over[d].name[0]) snprintf(out, size, "%s", dev_over[d].name);
  else if (d == 0) snprintf(out, size, "%s", cfg.name);
  else snprintf(out, size, "%s %d", cfg.name, d);
}
static unsigned long long dev_mem(int d) {
  return dev_over[d].total_mem ? dev_over[d].total_mem : cfg.total_mem;
}
static int dev_sm_major(int d) { return dev_over[d].sm_major ? dev_over[d].sm_major : cfg.sm_major; }
static int dev_sm_minor(int d) { return dev_over[d].sm_major ? dev_over[d].sm_minor : cfg.sm_minor; }
static int dev_sms(int d) { return dev_over[d].sms ? dev_over[d].sms : cfg.sms; }

/* The device of the calling thread's current context, or -1. */
static int cur_device(void);

/* ------------------------------------------------------------------ */
/* Object registry                                                     */
/* ------------------------------------------------------------------ */
static obj *obj_new(kind k) {
  obj *o = calloc(1, sizeof *o);
  if (!o) return NULL;
  o->k = k;
  o->device = cur_device(); /* objects belong to the current context's device */
  o->next = objs[k];
  objs[k] = o;
  live_count[k]++;
  return o;
}

/* A live object of kind k at address p, or NULL (stale or foreign). */
static obj *obj_find(kind k, const void *p) {
  for (obj *o = objs[k]; o; o = o->next)
    if (o == p) return o;
  return NULL;
}

static void obj_free(obj *o) {
  obj **pp = &objs[o->k];
  while (*pp && *pp != o) pp = &(*pp)->next;
  if (*pp) *pp = o->next;
  live_count[o->k]--;
  if (o->k == K_DEVMEM) {
    device_bytes -= o->size;
    if (o->device >= 0 && o->device < 8) dev_bytes[o->device] -= o->size;
  }
  free(o->mem);
  free(o->text);
  free(o->fns);
  free(o->image);
  free(o->nodes);
  free(o);
}

/* Memory object containing [p, p + n), or NULL. */
static obj *mem_find(kind k, uintptr_t p, size_t n) {
  for (obj *o = objs[k]; o; o = o->next) {
    uintptr_t b = (uintptr_t)o->mem;
    if (p >= b && p - b <= o->size && n <= o->size - (p - b)) return o;
  }
  return NULL;
}

/* The primary context's death: everything in it goes. */
static void destroy_device_objects(int device);
static void destroy_context_objects(void) {
  for (int k = 0; k < K_COUNT; k++)
    while (objs[k]) {
      reclaimed++;
      obj_free(objs[k]);
    }
  /* `poisoned` stays: like the real driver, a sticky error spoils the
   * process's CUDA state until it exits (fakecuda_reset is a new process). */
}

/* One device's primary context dies: its objects go, the others' stay. */
static void destroy_device_objects(int device) {
  for (int k = 0; k < K_COUNT; k++) {
    obj *o = objs[k];
    while (o) {
      obj *next = o->next;
      if (o->device == device) {
        reclaimed++;
        obj_free(o);
      }
      o = next;
    }
  }
}

/* ------------------------------------------------------------------ */
/* Call accounting and fault injection                                 */
/* ------------------------------------------------------------------ */
static unsigned name_slot(const char *name) {
  for (unsigned i = 0; i < nnames; i++)
    if (strcmp(names[i], name) == 0) return i;
  if (nnames == MAX_NAMES) return MAX_NAMES - 1;
  snprintf(names[nnames], sizeof names[nnames], "%s", name);
  calls[nnames] = 0;
  return nnames++;
}

/* Count the call; an injected failure's code, or 0. */
static int count_call(const char *name) {
  unsigned s = name_slot(name);
  unsigned long n = ++calls[s];
  if (++total_calls == call_fault_at) {
    call_fault_at = 0;
    snprintf(call_fault_name, sizeof call_fault_name, "%s", name);
    return call_fault_code;
  }
  for (unsigned i = 0; i < nrules; i++) {
    rule *r = &rules[i];
    if (strcmp(r->name, name) == 0 && n >= r->first && (r->last == 0 || n <= r->last)) {
      return r->code;
    }
  }
  return 0;
}

static int is_sticky(int code) {
  switch (code) {
  case CUDA_ERROR_ILLEGAL_ADDRESS:
  case CUDA_ERROR_LAUNCH_FAILED:
  case CUDA_ERROR_LAUNCH_TIMEOUT:
  case CUDA_ERROR_ILLEGAL_INSTRUCTION:
  case CUDA_ERROR_MISALIGNED_ADDRESS:
  case CUDA_ERROR_INVALID_ADDRESS_SPACE:
  case CUDA_ERROR_INVALID_PC:
  case CUDA_ERROR_HARDWARE_STACK_ERROR:
  case CUDA_ERROR_ASSERT:
  case CUDA_ERROR_ECC_UNCORRECTABLE:
    return 1;
  default:
    return 0;
  }
}

/* Entry prologue.  ctx_bound: the call works in the current context
 * (fails when there is none, returns the sticky error when poisoned). */
#define ENTER(name, ctx_bound)                                                   \
  pthread_mutex_lock(&lock);                                                   \
  ensure_config();                                                             \
  do {                                                                         \
    int inj_ = count_call(name);                                               \
    if (inj_) {                                                                \
      if (is_sticky(inj_)) poisoned = inj_;                                    \
      pthread_mutex_unlock(&lock);                                             \
      return (CUresult)inj_;                                                   \
    }                                                                          \
    if (ctx_bound) {                                                           \
      if (depth == 0 || !stack[depth - 1] || stack[depth - 1]->refs <= 0) {    \
        violation("%s called without a current (retained) context", name);    \
        pthread_mutex_unlock(&lock);                                           \
        return CUDA_ERROR_INVALID_CONTEXT;                                     \
      }                                                                        \
      if (poisoned) {                                                          \
        int p_ = poisoned;                                                     \
        pthread_mutex_unlock(&lock);                                           \
        return (CUresult)p_;                                                   \
      }                                                                        \
    }                                                                          \
  } while (0)

#define RETURN(code)              \
  do {                            \
    CUresult rc_ = (code);        \
    pthread_mutex_unlock(&lock);  \
    return rc_;                   \
  } while (0)

/* Record a stream-ordered call (lock held). */
static void trace(const char *call, const void *stream, const void *event) {
  if (nops == capops) {
    unsigned long cap = capops ? capops * 2 : 256;
    fakecuda_op *grown = realloc(ops, cap * sizeof *grown);
    if (!grown) return;
    ops = grown;
    capops = cap;
  }
  fakecuda_op *op = &ops[nops++];
  memset(op, 0, sizeof *op);
  snprintf(op->call, sizeof op->call, "%s", call);
  op->stream = (void *)stream;
  op->event = (void *)event;
}

/* ------------------------------------------------------------------ */
/* Init, device, context                                               */
/* ------------------------------------------------------------------ */
API CUresult CUDAAPI cuInit(unsigned int flags) {
  ENTER("cuInit", 0);
  if (flags) RETURN(CUDA_ERROR_INVALID_VALUE);
  if (cfg.init_result) RETURN((CUresult)cfg.init_result);
  if (cfg.devices <= 0) RETURN(CUDA_ERROR_NO_DEVICE);
  RETURN(CUDA_SUCCESS);
}

API CUresult CUDAAPI cuDriverGetVersion(int *v) {
  ENTER("cuDriverGetVersion", 0);
  if (!v) RETURN(CUDA_ERROR_INVALID_VALUE);
  *v = cfg.driver_version;
  RETURN(CUDA_SUCCESS);
}

API CUresult CUDAAPI cuDeviceGetCount(int *n) {
  ENTER("cuDeviceGetCount", 0);
  if (!n) RETURN(CUDA_ERROR_INVALID_VALUE);
  *n = cfg.devices;
  RETURN(CUDA_SUCCESS);
}

API CUresult CUDAAPI cuDeviceGet(CUdevice *d, int ordinal) {
  ENTER("cuDeviceGet", 0);
  if (!d || ordinal < 0 || ordinal >= cfg.devices) RETURN(CUDA_ERROR_INVALID_DEVICE);
  *d = ordinal;
  RETURN(CUDA_SUCCESS);
}

API CUresult CUDAAPI cuDeviceGetName(char *name, int len, CUdevice d) {
  ENTER("cuDeviceGetName", 0);
  if (!name || len <= 0 || d < 0 || d >= cfg.devices) RETURN(CUDA_ERROR_INVALID_VALUE);
  dev_name(d, name, (size_t)len);
  RETURN(CUDA_SUCCESS);
}

/* Device d's UUID (fakecuda.h, fakecuda_config.uuid): deterministic, a
 * version-4 layout, distinct per ordinal.  The fake has no MIG: both
 * implementations answer the same. */
static CUresult device_uuid(CUuuid *u, CUdevice d) {
  if (!u || d < 0 || d >= cfg.devices) return CUDA_ERROR_INVALID_VALUE;
  static const unsigned char base[16] = {0xfa, 0x4e, 0xc0, 0xda, 0, 0, 0x40, 0,
                                         0x80, 0,    0,    0,    0, 0, 0,    0};
  memcpy(u->bytes, base, sizeof base);
  u->bytes[5] = (char)d;
  u->bytes[15] = (char)d;
  return CUDA_SUCCESS;
}

API CUresult CUDAAPI cuDeviceGetUuid_v2(CUuuid *u, CUdevice d) {
  ENTER("cuDeviceGetUuid", 0);
  RETURN(device_uuid(u, d));
}

#undef cuDeviceGetUuid
API CUresult CUDAAPI cuDeviceGetUuid(CUuuid *u, CUdevice d);
API CUresult CUDAAPI cuDeviceGetUuid(CUuuid *u, CUdevice d) {
  ENTER("cuDeviceGetUuid", 0);
  RETURN(device_uuid(u, d));
}

API CUresult CUDAAPI cuDeviceGetAttribute(int *v, CUdevice_attribute a, CUdevice d) {
  ENTER("cuDeviceGetAttribute", 0);
  if (!v || d < 0 || d >= cfg.devices) RETURN(CUDA_ERROR_INVALID_VALUE);
  switch (a) {
  case CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR: *v = dev_sm_major(d); break;
  case CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR: *v = dev_sm_minor(d); break;
  case CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT: *v = dev_sms(d); break;
  case CU_DEVICE_ATTRIBUTE_WARP_SIZE: *v = cfg.warp_size; break;
  case CU_DEVICE_ATTRIBUTE_MAX_BLOCK_DIM_X:
  case CU_DEVICE_ATTRIBUTE_MAX_BLOCK_DIM_Y: *v = 1024; break;
  case CU_DEVICE_ATTRIBUTE_MAX_BLOCK_DIM_Z: *v = 64; break;
  case CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_BLOCK: *v = cfg.max_threads_per_block; break;
  case CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_X: *v = 2147483647; break;
  case CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_Y:
  case CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_Z: *v = 65535; break;
  case CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK: *v = cfg.shared_per_block; break;
  case CU_DEVICE_ATTRIBUTE_L2_CACHE_SIZE: *v = 50 << 20; break;
  case CU_DEVICE_ATTRIBUTE_GLOBAL_MEMORY_BUS_WIDTH: *v = 5120; break;
  case CU_DEVICE_ATTRIBUTE_MEMORY_CLOCK_RATE: *v = 2619000; break;
  case CU_DEVICE_ATTRIBUTE_COOPERATIVE_LAUNCH: *v = cfg.cooperative; break;
  default:
    violation("cuDeviceGetAttribute: attribute %d is not modelled", (int)a);
    RETURN(CUDA_ERROR_INVALID_VALUE);
  }
  RETURN(CUDA_SUCCESS);
}

API CUresult CUDAAPI cuDeviceTotalMem(size_t *bytes, CUdevice d) {
  ENTER("cuDeviceTotalMem", 0);
  if (!bytes || d < 0 || d >= cfg.devices) RETURN(CUDA_ERROR_INVALID_VALUE);
  *bytes = (size_t)dev_mem(d);
  RETURN(CUDA_SUCCESS);
}

API CUresult CUDAAPI cuDevicePrimaryCtxRetain(CUcontext *ctx, CUdevice d) {
  ENTER("cuDevicePrimaryCtxRetain", 0);
  if (!ctx || d < 0 || d >= cfg.devices) RETURN(CUDA_ERROR_INVALID_DEVICE);
  /* Like the real driver (seen on an H200): after a sticky error no
   * primary context is handed out again in this process, reset or not. */
  if (poisoned) RETURN((CUresult)poisoned);
  contexts[d].device = d;
  contexts[d].refs++;
  *ctx = &contexts[d];
  RETURN(CUDA_SUCCESS);
}

API CUresult CUDAAPI cuDevicePrimaryCtxRelease(CUdevice d) {
  ENTER("cuDevicePrimaryCtxRelease", 0);
  if (d < 0 || d >= cfg.devices) RETURN(CUDA_ERROR_INVALID_DEVICE);
  if (contexts[d].refs <= 0) {
    violation("cuDevicePrimaryCtxRelease of device %d, which is not retained", d);
    RETURN(CUDA_ERROR_INVALID_CONTEXT);
  }
  if (--contexts[d].refs == 0) destroy_device_objects(d);
  RETURN(CUDA_SUCCESS);
}

API CUresult CUDAAPI cuDevicePrimaryCtxReset(CUdevice d) {
  ENTER("cuDevicePrimaryCtxReset", 0);
  if (d < 0 || d >= cfg.devices) RETURN(CUDA_ERROR_INVALID_DEVICE);
  destroy_device_objects(d);
  RETURN(CUDA_SUCCESS);
}

API CUresult CUDAAPI cuCtxPushCurrent(CUcontext ctx) {
  ENTER("cuCtxPushCurrent", 0);
  int ok = 0;
  for (int i = 0; i < 8; i++) ok |= ctx == &contexts[i];
  if (!ok || ctx->refs <= 0) {
    violation("cuCtxPushCurrent of a context that is not retained");
    RETURN(CUDA_ERROR_INVALID_CONTEXT);
  }
  if (depth == MAX_STACK) {
    violation("cuCtxPushCurrent: context stack deeper than %d (unbalanced push/pop?)", MAX_STACK);
    RETURN(CUDA_ERROR_INVALID_VALUE);
  }
  stack[depth++] = ctx;
  RETURN(CUDA_SUCCESS);
}

API CUresult CUDAAPI cuCtxPopCurrent(CUcontext *ctx) {
  ENTER("cuCtxPopCurrent", 0);
  if (depth == 0) {
    violation("cuCtxPopCurrent with an empty context stack");
    RETURN(CUDA_ERROR_INVALID_CONTEXT);
  }
  CUcontext c = stack[--depth];
  if (ctx) *ctx = c;
  RETURN(CUDA_SUCCESS);
}

/* Events behind a hung kernel never complete. */
static void complete_all(obj *stream) {
  for (obj *e = objs[K_EVENT]; e; e = e->next)
    if ((!stream || e->ev_stream == stream) && !(e->ev_stream && e->ev_stream->hung))
      e->ready = 1;
}

static int any_hung(void) {
  for (obj *o = objs[K_STREAM]; o; o = o->next)
    if (o->hung) return 1;
  return 0;
}

API CUresult CUDAAPI cuCtxSynchronize(void) {
  ENTER("cuCtxSynchronize", 1);
  if (any_hung())
    violation("cuCtxSynchronize with a kernel that never finishes: it would block forever");
  complete_all(NULL);
  RETURN(CUDA_SUCCESS);
}

/* ------------------------------------------------------------------ */
/* Memory                                                              */
/* ------------------------------------------------------------------ */
API CUresult CUDAAPI cuMemGetInfo(size_t *free_bytes, size_t *total) {
  ENTER("cuMemGetInfo", 1);
  int d = cur_device();
  unsigned long long used = dev_bytes[d] + cfg.reserved_mem, mem = dev_mem(d);
  if (free_bytes) *free_bytes = (size_t)(used >= mem ? 0 : mem - used);
  if (total) *total = (size_t)mem;
  RETURN(CUDA_SUCCESS);
}

API CUresult CUDAAPI cuMemAlloc(CUdeviceptr *p, size_t n) {
  ENTER("cuMemAlloc", 1);
  if (!p || n == 0) RETURN(CUDA_ERROR_INVALID_VALUE);
  int d = cur_device();
  if (n > dev_mem(d) || dev_bytes[d] + cfg.reserved_mem + n > dev_mem(d))
    RETURN(CUDA_ERROR_OUT_OF_MEMORY);
  obj *o = obj_new(K_DEVMEM);
  if (!o) RETURN(CUDA_ERROR_OUT_OF_MEMORY);
  /* Garbage, not zeros: the plugin must zero what it promises is zero. */
  o->mem = malloc(n);
  if (!o->mem) {
    obj_free(o);
    RETURN(CUDA_ERROR_OUT_OF_MEMORY);
  }
  memset(o->mem, 0xA5, n);
  o->size = n;
  o->device = stack[depth - 1]->device;
  device_bytes += n;
  dev_bytes[o->device] += n;
  *p = (CUdeviceptr)(uintptr_t)o->mem;
  RETURN(CUDA_SUCCESS);
}

static obj *devmem_base(CUdeviceptr p) {
  for (obj *o = objs[K_DEVMEM]; o; o = o->next)
    if ((uintptr_t)o->mem == (uintptr_t)p) return o;
  return NULL;
}

API CUresult CUDAAPI cuMemFree(CUdeviceptr p) {
  ENTER("cuMemFree", 1);
  obj *o = devmem_base(p);
  if (!o) {
    violation("cuMemFree of 0x%llx, which is not a live allocation", (unsigned long long)p);
    RETURN(CUDA_ERROR_INVALID_VALUE);
  }
  obj_free(o);
  RETURN(CUDA_SUCCESS);
}

API CUresult CUDAAPI cuMemHostAlloc(void **pp, size_t n, unsigned int flags) {
  ENTER("cuMemHostAlloc", 1);
  if (!pp || n == 0) RETURN(CUDA_ERROR_INVALID_VALUE);
  if (!(flags & CU_MEMHOSTALLOC_PORTABLE))
    violation("cuMemHostAlloc without CU_MEMHOSTALLOC_PORTABLE (flags 0x%x)", flags);
  obj *o = obj_new(K_HOSTMEM);
  if (!o) RETURN(CUDA_ERROR_OUT_OF_MEMORY);
  o->mem = malloc(n);
  if (!o->mem) {
    obj_free(o);
    RETURN(CUDA_ERROR_OUT_OF_MEMORY);
  }
  memset(o->mem, 0x5A, n);
  o->size = n;
  o->device = stack[depth - 1]->device;
  *pp = o->mem;
  RETURN(CUDA_SUCCESS);
}

API CUresult CUDAAPI cuMemFreeHost(void *p) {
  ENTER("cuMemFreeHost", 0);
  for (obj *o = objs[K_HOSTMEM]; o; o = o->next) {
    if (o->mem == p) {
      obj_free(o);
      RETURN(CUDA_SUCCESS);
    }
  }
  violation("cuMemFreeHost of %p, which is not a live pinned allocation", p);
  RETURN(CUDA_ERROR_INVALID_VALUE);
}

/* The allocation of kind k holding address p (p < end, unlike mem_find). */
static obj *mem_holding(kind k, uintptr_t p) {
  for (obj *o = objs[k]; o; o = o->next) {
    uintptr_t b = (uintptr_t)o->mem;
    if (p >= b && p - b < o->size) return o;
  }
  return NULL;
}

API CUresult CUDAAPI cuPointerGetAttributes(unsigned int n, CUpointer_attribute *attrs,
                                            void **data, CUdeviceptr p) {
  ENTER("cuPointerGetAttributes", 1);
  if (!n || !attrs || !data) RETURN(CUDA_ERROR_INVALID_VALUE);
  obj *o = mem_holding(K_DEVMEM, (uintptr_t)p);
  unsigned type = o ? CU_MEMORYTYPE_DEVICE : 0;
  if (!o && (o = mem_holding(K_HOSTMEM, (uintptr_t)p)) != NULL) type = CU_MEMORYTYPE_HOST;
  /* Unknown pointers get default values and success, like the driver. */
  for (unsigned i = 0; i < n; i++) {
    if (!data[i]) RETURN(CUDA_ERROR_INVALID_VALUE);
    switch (attrs[i]) {
    case CU_POINTER_ATTRIBUTE_MEMORY_TYPE: *(unsigned *)data[i] = type; break;
    case CU_POINTER_ATTRIBUTE_DEVICE_ORDINAL: *(int *)data[i] = o ? o->device : 0; break;
    case CU_POINTER_ATTRIBUTE_CONTEXT: *(CUcontext *)data[i] = o ? &contexts[o->device] : NULL; break;
    default:
      violation("cuPointerGetAttributes: attribute %d is not modelled", (int)attrs[i]);
      RETURN(CUDA_ERROR_INVALID_VALUE);
    }
  }
  RETURN(CUDA_SUCCESS);
}

API CUresult CUDAAPI cuMemGetAddressRange(CUdeviceptr *base, size_t *size, CUdeviceptr p) {
  ENTER("cuMemGetAddressRange", 1);
  obj *o = mem_holding(K_DEVMEM, (uintptr_t)p);
  if (!o) RETURN(CUDA_ERROR_NOT_FOUND);
  if (base) *base = (CUdeviceptr)(uintptr_t)o->mem;
  if (size) *size = o->size;
  RETURN(CUDA_SUCCESS);
}

static int stream_ok(CUstream s, const char *call, obj **out) {
  *out = NULL;
  if (!s) {
    violation("%s on the legacy default stream (the plugin must use its own streams)", call);
    return 1; /* allowed by CUDA, flagged here */
  }
  *out = obj_find(K_STREAM, s);
  if (!*out) {
    violation("%s on stream %p, which is not live", call, (void *)s);
    return 0;
  }
  if ((*out)->capture) {
    violation("%s on a stream that is being captured", call);
    return 0;
  }
  return 1;
}

/* stream_ok for calls that may name the host's stream: the legacy
 * default stream is fine there when the test said so. */
static int host_stream_ok(CUstream s, const char *call, obj **out) {
  if (!s && allow_legacy) {
    *out = NULL;
    return 1;
  }
  return stream_ok(s, call, out);
}

API CUresult CUDAAPI cuMemcpyHtoDAsync(CUdeviceptr dst, const void *src, size_t n, CUstream s) {
  ENTER("cuMemcpyHtoDAsync", 1);
  obj *so;
  if (!stream_ok(s, "cuMemcpyHtoDAsync", &so)) RETURN(CUDA_ERROR_INVALID_HANDLE);
  if (!n) RETURN(CUDA_SUCCESS);
  if (!mem_find(K_DEVMEM, (uintptr_t)dst, n)) {
    violation("cuMemcpyHtoDAsync: [0x%llx, +%zu) is not inside one device allocation",
              (unsigned long long)dst, n);
    RETURN(CUDA_ERROR_INVALID_VALUE);
  }
  if (!src) RETURN(CUDA_ERROR_INVALID_VALUE);
  if (!mem_find(K_HOSTMEM, (uintptr_t)src, n)) pageable_copies++;
  memcpy((void *)(uintptr_t)dst, src, n);
  ticks++;
  trace("cuMemcpyHtoDAsync", s, NULL);
  RETURN(CUDA_SUCCESS);
}

API CUresult CUDAAPI cuMemcpyDtoHAsync(void *dst, CUdeviceptr src, size_t n, CUstream s) {
  ENTER("cuMemcpyDtoHAsync", 1);
  obj *so;
  if (!stream_ok(s, "cuMemcpyDtoHAsync", &so)) RETURN(CUDA_ERROR_INVALID_HANDLE);
  if (!n) RETURN(CUDA_SUCCESS);
  if (!mem_find(K_DEVMEM, (uintptr_t)src, n)) {
    violation("cuMemcpyDtoHAsync: [0x%llx, +%zu) is not inside one device allocation",
              (unsigned long long)src, n);
    RETURN(CUDA_ERROR_INVALID_VALUE);
  }
  if (!dst) RETURN(CUDA_ERROR_INVALID_VALUE);
  memcpy(dst, (const void *)(uintptr_t)src, n);
  ticks++;
  trace("cuMemcpyDtoHAsync", s, NULL);
  RETURN(CUDA_SUCCESS);
}

static const char *memset_name(unsigned unit) {
  return unit == 4 ? "cuMemsetD32Async" : unit == 2 ? "cuMemsetD16Async" : "cuMemsetD8Async";
}

/* Write a memset node's words and trace it. */
static void run_memset(const node *n, const void *stream, int from_graph) {
  unsigned char *d = (unsigned char *)(uintptr_t)n->memset_dst, word[4] = {0, 0, 0, 0};
  int same = 1;
  for (unsigned b = 0; b < n->memset_unit; b++) {
    word[b] = (unsigned char)(n->memset_value >> (8 * b));
    same &= word[b] == word[0];
  }
  if (same) memset(d, word[0], (size_t)(n->memset_words * n->memset_unit));
  else
    for (unsigned long long w = 0; w < n->memset_words; w++)
      memcpy(d + w * n->memset_unit, word, n->memset_unit);
  ticks++;
  unsigned long before = nops;
  trace(memset_name(n->memset_unit), stream, NULL);
  if (nops == before) return; /* no memory for the trace */
  fakecuda_op *op = &ops[nops - 1];
  op->dst = n->memset_dst;
  op->words = n->memset_words;
  op->unit = n->memset_unit;
  op->value = n->memset_value;
  op->from_graph = from_graph;
}

static CUresult add_node(obj *g, const node *n);

/* cuMemsetD8/D16/D32Async: written now, or a node of the graph the
 * stream is capturing.  The address must be aligned to the word, as the
 * real driver requires. */
static CUresult memset_words(CUdeviceptr dst, unsigned unit, unsigned v, size_t n, CUstream s) {
  const char *call = memset_name(unit);
  obj *so = s ? obj_find(K_STREAM, s) : NULL;
  if (!s) violation("%s on the legacy default stream (the plugin must use its own streams)", call);
  else if (!so) {
    violation("%s on stream %p, which is not live", call, (void *)s);
    return CUDA_ERROR_INVALID_HANDLE;
  }
  if (!n) return CUDA_SUCCESS;
  if (dst % unit) {
    violation("%s: address 0x%llx is not aligned to %u bytes", call, (unsigned long long)dst, unit);
    return CUDA_ERROR_INVALID_VALUE;
  }
  if (!mem_find(K_DEVMEM, (uintptr_t)dst, n * unit)) {
    violation("%s: [0x%llx, +%zu) is not inside one device allocation", call,
              (unsigned long long)dst, n * unit);
    return CUDA_ERROR_INVALID_VALUE;
  }
  node nd;
  memset(&nd, 0, sizeof nd);
  nd.memset_dst = dst;
  nd.memset_words = n;
  nd.memset_unit = unit;
  nd.memset_value = v;
  if (so && so->capture) return add_node(so->capture, &nd);
  run_memset(&nd, s, 0);
  return CUDA_SUCCESS;
}

API CUresult CUDAAPI cuMemsetD8Async(CUdeviceptr dst, unsigned char v, size_t n, CUstream s) {
  ENTER("cuMemsetD8Async", 1);
  RETURN(memset_words(dst, 1, v, n, s));
}

API CUresult CUDAAPI cuMemsetD16Async(CUdeviceptr dst, unsigned short v, size_t n, CUstream s) {
  ENTER("cuMemsetD16Async", 1);
  RETURN(memset_words(dst, 2, v, n, s));
}

API CUresult CUDAAPI cuMemsetD32Async(CUdeviceptr dst, unsigned int v, size_t n, CUstream s) {
  ENTER("cuMemsetD32Async", 1);
  RETURN(memset_words(dst, 4, v, n, s));
}

/* ------------------------------------------------------------------ */
/* Streams and events                                                  */
/* ------------------------------------------------------------------ */
API CUresult CUDAAPI cuStreamCreate(CUstream *s, unsigned int flags) {
  ENTER("cuStreamCreate", 1);
  if (!s) RETURN(CUDA_ERROR_INVALID_VALUE);
  if (!(flags & CU_STREAM_NON_BLOCKING)) violation("cuStreamCreate without CU_STREAM_NON_BLOCKING");
  obj *o = obj_new(K_STREAM);
  if (!o) RETURN(CUDA_ERROR_OUT_OF_MEMORY);
  *s = (CUstream)o;
  RETURN(CUDA_SUCCESS);
}

API CUresult CUDAAPI cuStreamDestroy(CUstream s) {
  ENTER("cuStreamDestroy", 1);
  obj *o = obj_find(K_STREAM, s);
  if (!o) {
    violation("cuStreamDestroy of %p, which is not live", (void *)s);
    RETURN(CUDA_ERROR_INVALID_HANDLE);
  }
  if (o->capture) obj_free(o->capture); /* the capture is abandoned with the stream */
  for (obj *e = objs[K_EVENT]; e; e = e->next)
    if (e->ev_stream == o) e->ev_stream = NULL;
  obj_free(o);
  RETURN(CUDA_SUCCESS);
}

API CUresult CUDAAPI cuStreamSynchronize(CUstream s) {
  ENTER("cuStreamSynchronize", 1);
  obj *so;
  if (!stream_ok(s, "cuStreamSynchronize", &so)) RETURN(CUDA_ERROR_INVALID_HANDLE);
  if (so && so->hung)
    violation("cuStreamSynchronize on a stream whose kernel never finishes: it would block "
              "forever");
  complete_all(so);
  RETURN(CUDA_SUCCESS);
}

API CUresult CUDAAPI cuEventCreate(CUevent *e, unsigned int flags) {
  ENTER("cuEventCreate", 1);
  if (!e) RETURN(CUDA_ERROR_INVALID_VALUE);
  obj *o = obj_new(K_EVENT);
  if (!o) RETURN(CUDA_ERROR_OUT_OF_MEMORY);
  o->flags = flags;
  o->ready = 1;
  *e = (CUevent)o;
  RETURN(CUDA_SUCCESS);
}

API CUresult CUDAAPI cuEventDestroy(CUevent e) {
  ENTER("cuEventDestroy", 1);
  obj *o = obj_find(K_EVENT, e);
  if (!o) {
    violation("cuEventDestroy of %p, which is not live", (void *)e);
    RETURN(CUDA_ERROR_INVALID_HANDLE);
  }
  obj_free(o);
  RETURN(CUDA_SUCCESS);
}

API CUresult CUDAAPI cuEventRecord(CUevent e, CUstream s) {
  ENTER("cuEventRecord", 1);
  obj *o = obj_find(K_EVENT, e), *so;
  if (!o) {
    violation("cuEventRecord of %p, which is not live", (void *)e);
    RETURN(CUDA_ERROR_INVALID_HANDLE);
  }
  if (!host_stream_ok(s, "cuEventRecord", &so)) RETURN(CUDA_ERROR_INVALID_HANDLE);
  o->recorded = 1;
  o->ready = !hold && !(so && so->hung);
  o->tick = ticks;
  o->ev_stream = so;
  trace("cuEventRecord", s, e);
  RETURN(CUDA_SUCCESS);
}

API CUresult CUDAAPI cuStreamWaitEvent(CUstream s, CUevent e, unsigned int flags) {
  ENTER("cuStreamWaitEvent", 1);
  obj *o = obj_find(K_EVENT, e), *so;
  if (!o) {
    violation("cuStreamWaitEvent on event %p, which is not live", (void *)e);
    RETURN(CUDA_ERROR_INVALID_HANDLE);
  }
  if (flags & ~(unsigned)CU_EVENT_WAIT_EXTERNAL) violation("cuStreamWaitEvent flags 0x%x", flags);
  if (!host_stream_ok(s, "cuStreamWaitEvent", &so)) RETURN(CUDA_ERROR_INVALID_HANDLE);
  if (!o->recorded) violation("cuStreamWaitEvent on an event never recorded (waits for nothing)");
  trace("cuStreamWaitEvent", s, e);
  RETURN(CUDA_SUCCESS);
}

API CUresult CUDAAPI cuStreamIsCapturing(CUstream s, CUstreamCaptureStatus *status) {
  ENTER("cuStreamIsCapturing", 1);
  obj *so = NULL;
  if (!status) RETURN(CUDA_ERROR_INVALID_VALUE);
  if (s) {
    so = obj_find(K_STREAM, s);
    if (!so) {
      violation("cuStreamIsCapturing on stream %p, which is not live", (void *)s);
      RETURN(CUDA_ERROR_INVALID_HANDLE);
    }
  } else if (!allow_legacy) {
    violation("cuStreamIsCapturing on the legacy default stream");
  }
  *status = so && so->capture ? CU_STREAM_CAPTURE_STATUS_ACTIVE : CU_STREAM_CAPTURE_STATUS_NONE;
  RETURN(CUDA_SUCCESS);
}

API CUresult CUDAAPI cuEventQuery(CUevent e) {
  ENTER("cuEventQuery", 1);
  obj *o = obj_find(K_EVENT, e);
  if (!o) {
    violation("cuEventQuery of %p, which is not live", (void *)e);
    RETURN(CUDA_ERROR_INVALID_HANDLE);
  }
  RETURN(o->ready ? CUDA_SUCCESS : CUDA_ERROR_NOT_READY);
}

API CUresult CUDAAPI cuEventSynchronize(CUevent e) {
  ENTER("cuEventSynchronize", 1);
  obj *o = obj_find(K_EVENT, e);
  if (!o) {
    violation("cuEventSynchronize of %p, which is not live", (void *)e);
    RETURN(CUDA_ERROR_INVALID_HANDLE);
  }
  if (!o->ready && o->ev_stream && o->ev_stream->hung) {
    violation("cuEventSynchronize on an event behind a kernel that never finishes: it would "
              "block forever");
    RETURN(CUDA_SUCCESS);
  }
  o->ready = 1;
  RETURN(CUDA_SUCCESS);
}

API CUresult CUDAAPI cuEventElapsedTime(float *ms, CUevent a, CUevent b) {
  ENTER("cuEventElapsedTime", 1);
  obj *x = obj_find(K_EVENT, a), *y = obj_find(K_EVENT, b);
  if (!ms || !x || !y) RETURN(CUDA_ERROR_INVALID_HANDLE);
  if ((x->flags | y->flags) & CU_EVENT_DISABLE_TIMING) {
    violation("cuEventElapsedTime on an event created with CU_EVENT_DISABLE_TIMING");
    RETURN(CUDA_ERROR_INVALID_HANDLE);
  }
  if (!x->recorded || !y->recorded) RETURN(CUDA_ERROR_INVALID_HANDLE);
  if (!x->ready || !y->ready) RETURN(CUDA_ERROR_NOT_READY);
  *ms = (float)((double)(y->tick - x->tick) * cfg.ms_per_tick);
  RETURN(CUDA_SUCCESS);
}

/* ------------------------------------------------------------------ */
/* Modules and the linker                                              */
/* ------------------------------------------------------------------ */
#define CUBIN_MAGIC "FAKECUBIN\n"

/* Parse ".entry NAME(.param .u64 a, ...)" signatures out of PTX text. */
static int parse_entries(obj *m) {
  const char *p = m->text;
  while ((p = strstr(p, ".entry ")) != NULL) {
    p += 7;
    while (*p == ' ') p++;
    fn f;
    memset(&f, 0, sizeof f);
    size_t n = 0;
    while (p[n] && p[n] != '(' && p[n] != ' ' && p[n] != '\n' && n < sizeof f.name - 1) n++;
    memcpy(f.name, p, n);
    p += n;
    while (*p == ' ' || *p == '\n') p++;
    if (*p == '(') {
      const char *end = strchr(p, ')');
      if (!end) return -1;
      const char *q = p;
      while ((q = strstr(q, ".param")) != NULL && q < end) {
        q += 6;
        unsigned size = strncmp(q, " .u32", 5) == 0 || strncmp(q, " .b32", 5) == 0 ? 4u : 8u;
        /* An array (".align 4 .b8 counts[N]") is N bytes by value. */
        const char *stop = strpbrk(q, ",)");
        const char *br = strchr(q, '[');
        int array = br && stop && br < stop;
        if (array) size = (unsigned)strtoul(br + 1, NULL, 10);
        if (f.nparams < FAKECUDA_MAX_PARAMS) {
          f.is_array[f.nparams] = (unsigned char)array;
          f.sizes[f.nparams++] = size;
        }
      }
      p = end;
    }
    fn *grown = realloc(m->fns, (m->nfns + 1) * sizeof *grown);
    if (!grown) return -1;
    m->fns = grown;
    m->fns[m->nfns++] = f;
  }
  return m->nfns ? 0 : -1;
}

/* A module from a fake cubin or PTX text (lock held). */
static CUresult module_load(CUmodule *module, const char *text) {
  if (strncmp(text, CUBIN_MAGIC, strlen(CUBIN_MAGIC)) == 0) text += strlen(CUBIN_MAGIC);
  else if (!strstr(text, ".version")) return CUDA_ERROR_INVALID_IMAGE;
  obj *m = obj_new(K_MODULE);
  if (!m) return CUDA_ERROR_OUT_OF_MEMORY;
  /* Not strdup: the fake's own allocations come from its code, which a
   * test failing host allocations leaves alone (tests/runtime/failalloc.h). */
  size_t text_len = strlen(text) + 1;
  m->text = malloc(text_len);
  if (m->text) memcpy(m->text, text, text_len);
  if (!m->text || parse_entries(m) != 0) {
    obj_free(m);
    return CUDA_ERROR_INVALID_IMAGE;
  }
  *module = (CUmodule)m;
  return CUDA_SUCCESS;
}

API CUresult CUDAAPI cuModuleLoadData(CUmodule *module, const void *image) {
  ENTER("cuModuleLoadData", 1);
  if (!module || !image) RETURN(CUDA_ERROR_INVALID_VALUE);
  RETURN(module_load(module, image));
}

/* The JIT options a client passed (lock held): the error log buffer, its
 * size, and the optimisation level recorded for fakecuda_jit_opt_level. */
static void jit_read_options(unsigned n, const CUjit_option *options, void **values, char **log,
                             size_t *log_size) {
  jit_opt_level = -1;
  for (unsigned i = 0; i < n; i++) {
    if (options[i] == CU_JIT_ERROR_LOG_BUFFER) *log = values[i];
    if (options[i] == CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES) *log_size = (size_t)(uintptr_t)values[i];
    if (options[i] == CU_JIT_OPTIMIZATION_LEVEL) jit_opt_level = (int)(uintptr_t)values[i];
  }
}

/* Why the JIT refuses this PTX (an injected failure, or not PTX), or NULL
 * (lock held). */
static const char *jit_refusal(const char *text) {
  if (jit_failures) {
    jit_failures--;
    return jit_log;
  }
  if (!strstr(text, ".version") || !strstr(text, ".entry"))
    return "ptxas fatal   : no .version or .entry in the input";
  return NULL;
}

/* A JIT call arrives: count it among those inside, and while a
 * rendezvous of n is armed wait (at most 2 s) until n have been inside
 * together.  Called without the fake's lock, as a driver compiles. */
static void jit_rendezvous(void) {
  pthread_mutex_lock(&rv_lock);
  rv_inside++;
  if (rv_inside > rv_max) rv_max = rv_inside;
  if (rv_want && rv_max >= rv_want) pthread_cond_broadcast(&rv_cond);
  struct timespec until;
  clock_gettime(CLOCK_REALTIME, &until);
  until.tv_sec += 2;
  while (rv_want && rv_max < rv_want)
    if (pthread_cond_timedwait(&rv_cond, &rv_lock, &until) == ETIMEDOUT) break;
  rv_inside--;
  pthread_mutex_unlock(&rv_lock);
}

API CUresult CUDAAPI cuModuleLoadDataEx(CUmodule *module, const void *image, unsigned int n,
                                        CUjit_option *options, void **values) {
  jit_rendezvous();
  ENTER("cuModuleLoadDataEx", 1);
  if (!module || !image || (n && (!options || !values))) RETURN(CUDA_ERROR_INVALID_VALUE);
  char *log = NULL;
  size_t log_size = 0;
  jit_read_options(n, options, values, &log, &log_size);
  const char *text = image;
  if (strncmp(text, CUBIN_MAGIC, strlen(CUBIN_MAGIC)) != 0) {
    const char *why = jit_refusal(text);
    if (why) {
      if (log && log_size) snprintf(log, log_size, "%s", why);
      RETURN(CUDA_ERROR_INVALID_PTX);
    }
  }
  RETURN(module_load(module, text));
}

API CUresult CUDAAPI cuModuleUnload(CUmodule module) {
  ENTER("cuModuleUnload", 1);
  obj *m = obj_find(K_MODULE, module);
  if (!m) {
    violation("cuModuleUnload of %p, which is not live", (void *)module);
    RETURN(CUDA_ERROR_INVALID_HANDLE);
  }
  obj_free(m);
  RETURN(CUDA_SUCCESS);
}

API CUresult CUDAAPI cuModuleGetFunction(CUfunction *f, CUmodule module, const char *name) {
  ENTER("cuModuleGetFunction", 1);
  obj *m = obj_find(K_MODULE, module);
  if (!f || !m || !name) RETURN(CUDA_ERROR_INVALID_HANDLE);
  for (unsigned i = 0; i < m->nfns; i++) {
    if (strcmp(m->fns[i].name, name) == 0) {
      *f = (CUfunction)&m->fns[i];
      RETURN(CUDA_SUCCESS);
    }
  }
  RETURN(CUDA_ERROR_NOT_FOUND);
}

/* A live function object, or NULL. */
static fn *fn_find(CUfunction f) {
  for (obj *m = objs[K_MODULE]; m; m = m->next)
    for (unsigned i = 0; i < m->nfns; i++)
      if ((CUfunction)&m->fns[i] == f) return &m->fns[i];
  return NULL;
}

API CUresult CUDAAPI cuLinkCreate(unsigned int n, CUjit_option *options, void **values,
                                  CUlinkState *state) {
  ENTER("cuLinkCreate", 1);
  if (!state || (n && (!options || !values))) RETURN(CUDA_ERROR_INVALID_VALUE);
  obj *l = obj_new(K_LINK);
  if (!l) RETURN(CUDA_ERROR_OUT_OF_MEMORY);
  jit_read_options(n, options, values, &l->log, &l->log_size);
  *state = (CUlinkState)l;
  RETURN(CUDA_SUCCESS);
}

API CUresult CUDAAPI cuLinkAddData(CUlinkState state, CUjitInputType type, void *data,
                                   size_t size, const char *name, unsigned int n,
                                   CUjit_option *options, void **values) {
  ENTER("cuLinkAddData", 1);
  obj *l = obj_find(K_LINK, state);
  if (!l || !data || !size) RETURN(CUDA_ERROR_INVALID_VALUE);
  if (type != CU_JIT_INPUT_PTX) {
    violation("cuLinkAddData: input type %d, the fake only links PTX", (int)type);
    RETURN(CUDA_ERROR_INVALID_VALUE);
  }
  if (((const char *)data)[size - 1] != '\0') {
    violation("cuLinkAddData: PTX of %zu bytes is not NUL-terminated within its size", size);
    RETURN(CUDA_ERROR_INVALID_VALUE);
  }
  const char *text = data;
  const char *why = jit_refusal(text);
  if (why) {
    if (l->log && l->log_size) snprintf(l->log, l->log_size, "%s", why);
    RETURN(CUDA_ERROR_INVALID_PTX);
  }
  size_t len = strlen(text), magic = strlen(CUBIN_MAGIC);
  char *image = malloc(magic + len + 1);
  if (!image) RETURN(CUDA_ERROR_OUT_OF_MEMORY);
  memcpy(image, CUBIN_MAGIC, magic);
  memcpy(image + magic, text, len + 1);
  free(l->image);
  l->image = image;
  l->image_size = magic + len + 1;
  RETURN(CUDA_SUCCESS);
}

API CUresult CUDAAPI cuLinkComplete(CUlinkState state, void **cubin, size_t *size) {
  jit_rendezvous();
  ENTER("cuLinkComplete", 1);
  obj *l = obj_find(K_LINK, state);
  if (!l || !cubin || !size) RETURN(CUDA_ERROR_INVALID_VALUE);
  if (!l->image) RETURN(CUDA_ERROR_INVALID_IMAGE);
  *cubin = l->image;
  *size = l->image_size;
  RETURN(CUDA_SUCCESS);
}

API CUresult CUDAAPI cuLinkDestroy(CUlinkState state) {
  ENTER("cuLinkDestroy", 1);
  obj *l = obj_find(K_LINK, state);
  if (!l) {
    violation("cuLinkDestroy of %p, which is not live", (void *)state);
    RETURN(CUDA_ERROR_INVALID_HANDLE);
  }
  obj_free(l);
  RETURN(CUDA_SUCCESS);
}

/* ------------------------------------------------------------------ */
/* Launches and graphs                                                 */
/* ------------------------------------------------------------------ */
static int occupancy(int block) {
  if (cfg.max_blocks_per_sm > 0) return cfg.max_blocks_per_sm;
  if (block <= 0) return 0;
  int n = 2048 / block;
  return n > 32 ? 32 : n;
}

API CUresult CUDAAPI cuOccupancyMaxActiveBlocksPerMultiprocessor(int *blocks, CUfunction f,
                                                                 int block, size_t smem) {
  ENTER("cuOccupancyMaxActiveBlocksPerMultiprocessor", 1);
  if (!blocks || !fn_find(f) || block <= 0) RETURN(CUDA_ERROR_INVALID_VALUE);
  *blocks = occupancy(block);
  RETURN(CUDA_SUCCESS);
}

/* Shape and read a launch; CUDA_SUCCESS or the error the driver gives. */
static CUresult make_node(node *n, CUfunction f, unsigned gx, unsigned gy, unsigned gz,
                          unsigned bx, unsigned by, unsigned bz, unsigned smem, void **params,
                          int coop, const char *call) {
  fn *k = fn_find(f);
  if (!k) {
    violation("%s of a function that is not live", call);
    return CUDA_ERROR_INVALID_HANDLE;
  }
  if (!gx || !gy || !gz || !bx || !by || !bz) return CUDA_ERROR_INVALID_VALUE;
  if ((unsigned long long)bx * by * bz > (unsigned long long)cfg.max_threads_per_block)
    return CUDA_ERROR_INVALID_VALUE;
  if (k->nparams && !params) {
    violation("%s of %s without kernelParams", call, k->name);
    return CUDA_ERROR_INVALID_VALUE;
  }
  memset(n, 0, sizeof *n);
  n->fn = k;
  n->grid[0] = gx, n->grid[1] = gy, n->grid[2] = gz;
  n->block[0] = bx, n->block[1] = by, n->block[2] = bz;
  n->smem = smem;
  n->cooperative = coop;
  n->nparams = k->nparams;
  for (unsigned i = 0; i < k->nparams; i++) {
    unsigned long long v = 0;
    if (k->is_array[i]) {
      /* By value: the driver copies the bytes now; keep the first array. */
      if (!n->counts_bytes && k->sizes[i] <= sizeof n->counts) {
        memcpy(n->counts, params[i], k->sizes[i]);
        n->counts_bytes = k->sizes[i];
      }
      n->params[i] = 0;
      continue;
    }
    memcpy(&v, params[i], k->sizes[i]);
    n->params[i] = v;
    /* Every u64 parameter of a vyre kernel is a device pointer (or 0 for
     * an empty buffer). */
    if (k->sizes[i] == 8 && v && !mem_find(K_DEVMEM, (uintptr_t)v, 0))
      violation("%s of %s: parameter %u = 0x%llx is not device memory", call, k->name, i, v);
    else if (k->sizes[i] == 8 && v && mem_find(K_DEVMEM, (uintptr_t)v, 0)->device != cur_device())
      violation("%s of %s on device %d: parameter %u is memory of device %d", call, k->name,
                cur_device(), i, mem_find(K_DEVMEM, (uintptr_t)v, 0)->device);
  }
  if (coop) {
    unsigned long long blocks = (unsigned long long)gx * gy * gz;
    if (!cfg.cooperative) return CUDA_ERROR_NOT_SUPPORTED;
    if (blocks > (unsigned long long)occupancy((int)(bx * by * bz)) *
                     (unsigned long long)dev_sms(cur_device()))
      return CUDA_ERROR_COOPERATIVE_LAUNCH_TOO_LARGE;
  }
  return CUDA_SUCCESS;
}

/* Execute: record it; the hook plays the kernel.  Lock held on entry and
 * exit, dropped around the hook. */
static void run_node(const node *n, obj *stream, int from_graph) {
  if (nlaunches == caplaunches) {
    unsigned long cap = caplaunches ? caplaunches * 2 : 64;
    fakecuda_launch *grown = realloc(launches, cap * sizeof *grown);
    if (!grown) return;
    launches = grown;
    caplaunches = cap;
  }
  fakecuda_launch *l = &launches[nlaunches++];
  memset(l, 0, sizeof *l);
  snprintf(l->kernel, sizeof l->kernel, "%s", n->fn->name);
  memcpy(l->grid, n->grid, sizeof l->grid);
  memcpy(l->block, n->block, sizeof l->block);
  l->shared_bytes = n->smem;
  l->cooperative = n->cooperative;
  l->from_graph = from_graph;
  l->stream = stream;
  l->nparams = n->nparams;
  memcpy(l->params, n->params, sizeof l->params);
  l->counts_bytes = n->counts_bytes;
  memcpy(l->counts, n->counts, sizeof l->counts);
  l->device = cur_device();
  l->context = depth > 0 ? (void *)stack[depth - 1] : NULL;
  ticks++;
  if (hang && stream) stream->hung = 1;
  /* A kernel chosen with fakecuda_fault_launch faults on the device (as
   * one storing to address 0 would): the launch call already succeeded;
   * the context is poisoned from now on. */
  if (fault_launch_at && nlaunches == fault_launch_at) {
    poisoned = fault_launch_code;
    fault_launch_at = 0;
  }
  if (hook) {
    fakecuda_launch copy = *l;
    fakecuda_hook h = hook;
    void *u = hook_user;
    pthread_mutex_unlock(&lock);
    h(&copy, u);
    pthread_mutex_lock(&lock);
  }
}

/* Append a captured node to graph g. */
static CUresult add_node(obj *g, const node *n) {
  if (g->nnodes == g->capnodes) {
    unsigned cap = g->capnodes ? g->capnodes * 2 : 8;
    node *grown = realloc(g->nodes, cap * sizeof *grown);
    if (!grown) return CUDA_ERROR_OUT_OF_MEMORY;
    g->nodes = grown;
    g->capnodes = cap;
  }
  g->nodes[g->nnodes++] = *n;
  return CUDA_SUCCESS;
}

static CUresult launch(const char *call, CUfunction f, unsigned gx, unsigned gy, unsigned gz,
                       unsigned bx, unsigned by, unsigned bz, unsigned smem, CUstream s,
                       void **params, void **extra, int coop) {
  obj *so = NULL;
  if (s) {
    so = obj_find(K_STREAM, s);
    if (!so) {
      violation("%s on stream %p, which is not live", call, (void *)s);
      return CUDA_ERROR_INVALID_HANDLE;
    }
  } else {
    violation("%s on the legacy default stream", call);
  }
  if (extra) violation("%s with extra (the plugin passes kernelParams)", call);
  if (so && so->device != cur_device())
    violation("%s in device %d's context on a stream of device %d", call, cur_device(),
              so->device);
  for (obj *m = objs[K_MODULE]; m; m = m->next)
    for (unsigned i = 0; i < m->nfns; i++)
      if ((CUfunction)&m->fns[i] == f && m->device != cur_device())
        violation("%s in device %d's context of a kernel loaded on device %d", call,
                  cur_device(), m->device);
  node n;
  CUresult r = make_node(&n, f, gx, gy, gz, bx, by, bz, smem, params, coop, call);
  if (r != CUDA_SUCCESS) return r;
  if (so && so->capture) return add_node(so->capture, &n);
  run_node(&n, so, 0);
  trace(call, s, NULL);
  return CUDA_SUCCESS;
}

API CUresult CUDAAPI cuLaunchKernel(CUfunction f, unsigned int gx, unsigned int gy,
                                    unsigned int gz, unsigned int bx, unsigned int by,
                                    unsigned int bz, unsigned int smem, CUstream s, void **params,
                                    void **extra) {
  ENTER("cuLaunchKernel", 1);
  RETURN(launch("cuLaunchKernel", f, gx, gy, gz, bx, by, bz, smem, s, params, extra, 0));
}

API CUresult CUDAAPI cuLaunchCooperativeKernel(CUfunction f, unsigned int gx, unsigned int gy,
                                               unsigned int gz, unsigned int bx, unsigned int by,
                                               unsigned int bz, unsigned int smem, CUstream s,
                                               void **params) {
  ENTER("cuLaunchCooperativeKernel", 1);
  RETURN(launch("cuLaunchCooperativeKernel", f, gx, gy, gz, bx, by, bz, smem, s, params, NULL, 1));
}

API CUresult CUDAAPI cuStreamBeginCapture(CUstream s, CUstreamCaptureMode mode) {
  ENTER("cuStreamBeginCapture", 1);
  obj *so = obj_find(K_STREAM, s);
  if (!so) {
    violation("cuStreamBeginCapture on a stream that is not live");
    RETURN(CUDA_ERROR_INVALID_HANDLE);
  }
  if (so->capture) RETURN(CUDA_ERROR_ILLEGAL_STATE);
  obj *g = obj_new(K_GRAPH);
  if (!g) RETURN(CUDA_ERROR_OUT_OF_MEMORY);
  so->capture = g;
  RETURN(CUDA_SUCCESS);
}

API CUresult CUDAAPI cuStreamEndCapture(CUstream s, CUgraph *graph) {
  ENTER("cuStreamEndCapture", 1);
  obj *so = obj_find(K_STREAM, s);
  if (!so || !graph) RETURN(CUDA_ERROR_INVALID_VALUE);
  if (!so->capture) RETURN(CUDA_ERROR_ILLEGAL_STATE);
  *graph = (CUgraph)so->capture;
  so->capture = NULL;
  RETURN(CUDA_SUCCESS);
}

API CUresult CUDAAPI cuGraphInstantiateWithFlags(CUgraphExec *exec, CUgraph graph,
                                                 unsigned long long flags) {
  ENTER("cuGraphInstantiateWithFlags", 1);
  obj *g = obj_find(K_GRAPH, graph);
  if (!exec || !g) RETURN(CUDA_ERROR_INVALID_VALUE);
  obj *x = obj_new(K_EXEC);
  if (!x) RETURN(CUDA_ERROR_OUT_OF_MEMORY);
  if (g->nnodes) {
    x->nodes = malloc(g->nnodes * sizeof *x->nodes);
    if (!x->nodes) {
      obj_free(x);
      RETURN(CUDA_ERROR_OUT_OF_MEMORY);
    }
    memcpy(x->nodes, g->nodes, g->nnodes * sizeof *x->nodes);
  }
  x->nnodes = x->capnodes = g->nnodes;
  *exec = (CUgraphExec)x;
  RETURN(CUDA_SUCCESS);
}

API CUresult CUDAAPI cuGraphLaunch(CUgraphExec exec, CUstream s) {
  ENTER("cuGraphLaunch", 1);
  obj *x = obj_find(K_EXEC, exec), *so;
  if (!x) RETURN(CUDA_ERROR_INVALID_HANDLE);
  if (!stream_ok(s, "cuGraphLaunch", &so)) RETURN(CUDA_ERROR_INVALID_HANDLE);
  for (unsigned i = 0; i < x->nnodes; i++) {
    if (!x->nodes[i].fn) {
      run_memset(&x->nodes[i], s, 1);
      continue;
    }
    if (!fn_find((CUfunction)x->nodes[i].fn)) {
      violation("cuGraphLaunch: a kernel of the graph was unloaded");
      RETURN(CUDA_ERROR_INVALID_HANDLE);
    }
    run_node(&x->nodes[i], so, 1);
  }
  trace("cuGraphLaunch", s, NULL);
  RETURN(CUDA_SUCCESS);
}

API CUresult CUDAAPI cuGraphExecDestroy(CUgraphExec exec) {
  ENTER("cuGraphExecDestroy", 1);
  obj *x = obj_find(K_EXEC, exec);
  if (!x) {
    violation("cuGraphExecDestroy of %p, which is not live", (void *)exec);
    RETURN(CUDA_ERROR_INVALID_HANDLE);
  }
  obj_free(x);
  RETURN(CUDA_SUCCESS);
}

API CUresult CUDAAPI cuGraphDestroy(CUgraph graph) {
  ENTER("cuGraphDestroy", 1);
  obj *g = obj_find(K_GRAPH, graph);
  if (!g) {
    violation("cuGraphDestroy of %p, which is not live", (void *)graph);
    RETURN(CUDA_ERROR_INVALID_HANDLE);
  }
  obj_free(g);
  RETURN(CUDA_SUCCESS);
}

/* ------------------------------------------------------------------ */
/* Errors                                                              */
/* ------------------------------------------------------------------ */
static const struct {
  int code;
  const char *name, *text;
} errors[] = {
    {CUDA_SUCCESS, "CUDA_SUCCESS", "no error"},
    {CUDA_ERROR_INVALID_VALUE, "CUDA_ERROR_INVALID_VALUE", "invalid argument"},
    {CUDA_ERROR_OUT_OF_MEMORY, "CUDA_ERROR_OUT_OF_MEMORY", "out of memory"},
    {CUDA_ERROR_NOT_INITIALIZED, "CUDA_ERROR_NOT_INITIALIZED", "initialization error"},
    {CUDA_ERROR_NO_DEVICE, "CUDA_ERROR_NO_DEVICE", "no CUDA-capable device is detected"},
    {CUDA_ERROR_INVALID_DEVICE, "CUDA_ERROR_INVALID_DEVICE", "invalid device ordinal"},
    {CUDA_ERROR_INVALID_IMAGE, "CUDA_ERROR_INVALID_IMAGE", "device kernel image is invalid"},
    {CUDA_ERROR_INVALID_CONTEXT, "CUDA_ERROR_INVALID_CONTEXT", "invalid device context"},
    {CUDA_ERROR_INVALID_PTX, "CUDA_ERROR_INVALID_PTX", "a PTX JIT compilation failed"},
    {CUDA_ERROR_INVALID_HANDLE, "CUDA_ERROR_INVALID_HANDLE", "invalid resource handle"},
    {CUDA_ERROR_NOT_FOUND, "CUDA_ERROR_NOT_FOUND", "named symbol not found"},
    {CUDA_ERROR_NOT_READY, "CUDA_ERROR_NOT_READY", "device not ready"},
    {CUDA_ERROR_ILLEGAL_ADDRESS, "CUDA_ERROR_ILLEGAL_ADDRESS",
     "an illegal memory access was encountered"},
    {CUDA_ERROR_LAUNCH_FAILED, "CUDA_ERROR_LAUNCH_FAILED", "unspecified launch failure"},
    {CUDA_ERROR_ILLEGAL_INSTRUCTION, "CUDA_ERROR_ILLEGAL_INSTRUCTION",
     "an illegal instruction was encountered"},
    {CUDA_ERROR_MISALIGNED_ADDRESS, "CUDA_ERROR_MISALIGNED_ADDRESS", "misaligned address"},
    {CUDA_ERROR_HARDWARE_STACK_ERROR, "CUDA_ERROR_HARDWARE_STACK_ERROR", "hardware stack error"},
    {CUDA_ERROR_INVALID_PC, "CUDA_ERROR_INVALID_PC", "invalid program counter"},
    {CUDA_ERROR_ASSERT, "CUDA_ERROR_ASSERT", "device-side assert triggered"},
    {CUDA_ERROR_ECC_UNCORRECTABLE, "CUDA_ERROR_ECC_UNCORRECTABLE", "uncorrectable ECC error encountered"},
    {CUDA_ERROR_COOPERATIVE_LAUNCH_TOO_LARGE, "CUDA_ERROR_COOPERATIVE_LAUNCH_TOO_LARGE",
     "too many blocks in cooperative launch"},
    {CUDA_ERROR_NOT_SUPPORTED, "CUDA_ERROR_NOT_SUPPORTED", "operation not supported"},
    {CUDA_ERROR_ILLEGAL_STATE, "CUDA_ERROR_ILLEGAL_STATE", "the operation is not permitted in this state"},
    {CUDA_ERROR_UNKNOWN, "CUDA_ERROR_UNKNOWN", "unknown error"},
};

static CUresult lookup_error(CUresult r, const char **out, int text) {
  for (size_t i = 0; i < sizeof errors / sizeof errors[0]; i++) {
    if (errors[i].code == (int)r) {
      *out = text ? errors[i].text : errors[i].name;
      return CUDA_SUCCESS;
    }
  }
  *out = NULL;
  return CUDA_ERROR_INVALID_VALUE;
}

API CUresult CUDAAPI cuGetErrorName(CUresult r, const char **out) {
  ENTER("cuGetErrorName", 0);
  if (!out) RETURN(CUDA_ERROR_INVALID_VALUE);
  RETURN(lookup_error(r, out, 0));
}

API CUresult CUDAAPI cuGetErrorString(CUresult r, const char **out) {
  ENTER("cuGetErrorString", 0);
  if (!out) RETURN(CUDA_ERROR_INVALID_VALUE);
  RETURN(lookup_error(r, out, 1));
}

/* ------------------------------------------------------------------ */
/* cuGetProcAddress                                                    */
/* ------------------------------------------------------------------ */
/* Each entry with the CUDA version of the prototype it implements and the
 * version at which the real driver answers the same name with a different
 * ABI (0: none yet), so a plugin that asks for the wrong version is caught
 * here instead of on a GPU (CUDA 13 answers "cuCtxSynchronize" at 13000
 * with cuCtxSynchronize_v2(CUcontext)). */
#define ENTRY(name, proto, superseded) {#name, (void *)name, proto, superseded}
static const struct {
  const char *name;
  void *fn;
  int proto;
  int superseded;
} table[] = {
    ENTRY(cuInit, 2000, 0),
    ENTRY(cuDriverGetVersion, 2020, 0),
    ENTRY(cuDeviceGetCount, 2000, 0),
    ENTRY(cuDeviceGet, 2000, 0),
    ENTRY(cuDeviceGetName, 2000, 0),
    ENTRY(cuDeviceGetAttribute, 2000, 0),
    ENTRY(cuDeviceGetUuid, 9020, 11040), /* the original, before 11040 */
    {"cuDeviceGetUuid", (void *)cuDeviceGetUuid_v2, 11040, 0},
    ENTRY(cuDeviceTotalMem, 3020, 0),
    ENTRY(cuDevicePrimaryCtxRetain, 7000, 0),
    ENTRY(cuDevicePrimaryCtxRelease, 7000, 0),
    ENTRY(cuDevicePrimaryCtxReset, 7000, 0),
    ENTRY(cuCtxPushCurrent, 4000, 0),
    ENTRY(cuCtxPopCurrent, 4000, 0),
    ENTRY(cuCtxSynchronize, 2000, 13000),
    ENTRY(cuMemGetInfo, 3020, 0),
    ENTRY(cuMemAlloc, 3020, 0),
    ENTRY(cuMemFree, 3020, 0),
    ENTRY(cuMemHostAlloc, 2020, 0),
    ENTRY(cuMemFreeHost, 2000, 0),
    ENTRY(cuMemcpyHtoDAsync, 3020, 0),
    ENTRY(cuMemcpyDtoHAsync, 3020, 0),
    ENTRY(cuMemsetD8Async, 3020, 0),
    ENTRY(cuMemsetD16Async, 3020, 0),
    ENTRY(cuMemsetD32Async, 3020, 0),
    ENTRY(cuStreamCreate, 2000, 0),
    ENTRY(cuStreamDestroy, 4000, 0),
    ENTRY(cuStreamSynchronize, 2000, 0),
    ENTRY(cuEventCreate, 2000, 0),
    ENTRY(cuEventDestroy, 4000, 0),
    ENTRY(cuEventRecord, 2000, 0),
    ENTRY(cuEventQuery, 2000, 0),
    ENTRY(cuEventSynchronize, 2000, 0),
    ENTRY(cuEventElapsedTime, 2000, 0),
    ENTRY(cuStreamWaitEvent, 3020, 0),
    ENTRY(cuPointerGetAttributes, 7000, 0),
    ENTRY(cuStreamIsCapturing, 10000, 0),
    ENTRY(cuMemGetAddressRange, 3020, 0),
    ENTRY(cuModuleLoadData, 2000, 0),
    ENTRY(cuModuleLoadDataEx, 2010, 0),
    ENTRY(cuModuleUnload, 2000, 0),
    ENTRY(cuModuleGetFunction, 2000, 0),
    ENTRY(cuLinkCreate, 6050, 0),
    ENTRY(cuLinkAddData, 6050, 0),
    ENTRY(cuLinkComplete, 5050, 0),
    ENTRY(cuLinkDestroy, 5050, 0),
    ENTRY(cuLaunchKernel, 4000, 0),
    ENTRY(cuLaunchCooperativeKernel, 9000, 0),
    ENTRY(cuOccupancyMaxActiveBlocksPerMultiprocessor, 6050, 0),
    ENTRY(cuStreamBeginCapture, 10010, 0),
    ENTRY(cuStreamEndCapture, 10000, 0),
    ENTRY(cuGraphInstantiateWithFlags, 11040, 0),
    ENTRY(cuGraphLaunch, 10000, 0),
    ENTRY(cuGraphExecDestroy, 10000, 0),
    ENTRY(cuGraphDestroy, 10000, 0),
    ENTRY(cuGetErrorName, 6000, 0),
    ENTRY(cuGetErrorString, 6000, 0),
};

static CUresult getproc(const char *symbol, void **pfn, int version, int *status) {
  *status = CU_GET_PROC_ADDRESS_SYMBOL_NOT_FOUND;
  if (!symbol || !pfn) return CUDA_ERROR_INVALID_VALUE;
  *pfn = NULL;
  if (strcmp(symbol, "cuDeviceGetUuid") == 0 &&
      (cfg.uuid <= 0 || (cfg.uuid == 1 && version >= 11040)))
    return CUDA_ERROR_NOT_FOUND; /* a driver without it (fakecuda_config.uuid) */
  for (size_t i = 0; i < sizeof table / sizeof table[0]; i++) {
    if (strcmp(table[i].name, symbol) == 0) {
      /* A name served by several implementations: the one for `version`. */
      if (i + 1 < sizeof table / sizeof table[0] && strcmp(table[i + 1].name, symbol) == 0 &&
          table[i].superseded && version >= table[i].superseded)
        continue;
      if (version < table[i].proto) {
        violation("cuGetProcAddress(%s, %d): the fake implements the CUDA %d prototype; an "
                  "older version would be another ABI", symbol, version, table[i].proto);
        *status = CU_GET_PROC_ADDRESS_VERSION_NOT_SUFFICIENT;
        return CUDA_ERROR_NOT_FOUND;
      }
      if (table[i].superseded && version >= table[i].superseded) {
        violation("cuGetProcAddress(%s, %d): a real driver returns the CUDA %d prototype "
                  "there, not the CUDA %d one the caller declares", symbol, version,
                  table[i].superseded, table[i].proto);
        *status = CU_GET_PROC_ADDRESS_VERSION_NOT_SUFFICIENT;
        return CUDA_ERROR_NOT_FOUND;
      }
      *pfn = table[i].fn;
      *status = CU_GET_PROC_ADDRESS_SUCCESS;
      return CUDA_SUCCESS;
    }
  }
  violation("cuGetProcAddress(%s): not an entry point the fake provides", symbol);
  return CUDA_ERROR_NOT_FOUND;
}

API CUresult CUDAAPI cuGetProcAddress_v2(const char *symbol, void **pfn, int version,
                                         cuuint64_t flags, CUdriverProcAddressQueryResult *st) {
  ENTER("cuGetProcAddress", 0);
  int status;
  CUresult r = getproc(symbol, pfn, version, &status);
  if (st) *st = (CUdriverProcAddressQueryResult)status;
  if (r == CUDA_SUCCESS) name_slot(symbol);
  RETURN(r);
}

#undef cuGetProcAddress
API CUresult CUDAAPI cuGetProcAddress(const char *symbol, void **pfn, int version,
                                      cuuint64_t flags);
API CUresult CUDAAPI cuGetProcAddress(const char *symbol, void **pfn, int version,
                                      cuuint64_t flags) {
  ENTER("cuGetProcAddress", 0);
  int status;
  RETURN(getproc(symbol, pfn, version, &status));
}

/* ------------------------------------------------------------------ */
/* Control API (fakecuda.h)                                            */
/* ------------------------------------------------------------------ */
API void fakecuda_reset(void);
API void fakecuda_get_config(fakecuda_config *out);
API void fakecuda_set_config(const fakecuda_config *in);
API void fakecuda_inject(const char *name, unsigned long nth, int code, unsigned long count);
API void fakecuda_clear_faults(void);
API unsigned long fakecuda_calls(const char *name);
API unsigned fakecuda_names(const char **out, unsigned capacity);
API void fakecuda_objects(fakecuda_live *out);
API unsigned long fakecuda_launch_count(void);
API int fakecuda_launch_get(unsigned long index, fakecuda_launch *out);
API void fakecuda_set_hook(fakecuda_hook h, void *user);
API void fakecuda_hold_events(int on);
API void fakecuda_complete_events(void);
API void fakecuda_hang_launches(int on);
API unsigned long fakecuda_violations(char *last, size_t capacity);
API void fakecuda_jit_fail(unsigned count, const char *log);
API int fakecuda_jit_opt_level(void);
API void fakecuda_jit_rendezvous(unsigned n);
API unsigned fakecuda_jit_max_concurrent(void);
API unsigned long fakecuda_pageable_copies(void);
API int fakecuda_poisoned(void);
API void fakecuda_fault_launch(unsigned long nth, int code);
API unsigned long fakecuda_op_count(void);
API int fakecuda_op_get(unsigned long index, fakecuda_op *out);
API void fakecuda_allow_legacy_stream(int on);
API unsigned long fakecuda_total_calls(void);
API void fakecuda_inject_call(unsigned long nth, int code);
API int fakecuda_call_fault_fired(char *name, size_t capacity);

void fakecuda_reset(void) {
  pthread_mutex_lock(&lock);
  load_config();
  nnames = 0;
  nrules = 0;
  nlaunches = 0;
  hook = NULL;
  hook_user = NULL;
  hold = 0;
  hang = 0;
  violations = 0;
  last_violation[0] = '\0';
  jit_failures = 0;
  jit_opt_level = -1;
  pthread_mutex_lock(&rv_lock);
  rv_want = 0;
  rv_max = 0;
  pthread_mutex_unlock(&rv_lock);
  pageable_copies = 0;
  reclaimed = 0;
  poisoned = 0; /* a new process: its CUDA state starts clean */
  fault_launch_at = 0;
  nops = 0;
  allow_legacy = 0;
  total_calls = 0;
  call_fault_at = 0;
  call_fault_name[0] = '\0';
  memset(dev_over, 0, sizeof dev_over);
  pthread_mutex_unlock(&lock);
}

void fakecuda_get_config(fakecuda_config *out) {
  pthread_mutex_lock(&lock);
  ensure_config();
  *out = cfg;
  pthread_mutex_unlock(&lock);
}

void fakecuda_set_config(const fakecuda_config *in) {
  pthread_mutex_lock(&lock);
  cfg = *in;
  cfg_loaded = 1;
  pthread_mutex_unlock(&lock);
}

void fakecuda_inject(const char *name, unsigned long nth, int code, unsigned long count) {
  pthread_mutex_lock(&lock);
  if (nrules < MAX_RULES && nth > 0) {
    rule *r = &rules[nrules++];
    snprintf(r->name, sizeof r->name, "%s", name);
    unsigned long base = calls[name_slot(name)];
    r->first = base + nth;
    r->last = count ? r->first + count - 1 : 0;
    r->code = code;
  }
  pthread_mutex_unlock(&lock);
}

void fakecuda_clear_faults(void) {
  pthread_mutex_lock(&lock);
  nrules = 0;
  fault_launch_at = 0;
  call_fault_at = 0;
  pthread_mutex_unlock(&lock);
}

unsigned long fakecuda_calls(const char *name) {
  pthread_mutex_lock(&lock);
  unsigned long n = 0;
  for (unsigned i = 0; i < nnames; i++)
    if (strcmp(names[i], name) == 0) n = calls[i];
  pthread_mutex_unlock(&lock);
  return n;
}

unsigned fakecuda_names(const char **out, unsigned capacity) {
  pthread_mutex_lock(&lock);
  for (unsigned i = 0; i < nnames && i < capacity; i++) out[i] = names[i];
  unsigned n = nnames;
  pthread_mutex_unlock(&lock);
  return n;
}

void fakecuda_objects(fakecuda_live *out) {
  pthread_mutex_lock(&lock);
  out->device_allocs = live_count[K_DEVMEM];
  out->device_bytes = device_bytes;
  out->host_allocs = live_count[K_HOSTMEM];
  out->streams = live_count[K_STREAM];
  out->events = live_count[K_EVENT];
  out->modules = live_count[K_MODULE];
  out->links = live_count[K_LINK];
  out->graphs = live_count[K_GRAPH];
  out->execs = live_count[K_EXEC];
  out->ctx_refs = 0;
  out->reclaimed = reclaimed;
  for (int i = 0; i < 8; i++) out->ctx_refs += contexts[i].refs;
  pthread_mutex_unlock(&lock);
}

unsigned long fakecuda_launch_count(void) {
  pthread_mutex_lock(&lock);
  unsigned long n = nlaunches;
  pthread_mutex_unlock(&lock);
  return n;
}

int fakecuda_launch_get(unsigned long index, fakecuda_launch *out) {
  pthread_mutex_lock(&lock);
  int ok = index < nlaunches;
  if (ok) *out = launches[index];
  pthread_mutex_unlock(&lock);
  return ok ? 0 : -1;
}

void fakecuda_set_hook(fakecuda_hook h, void *user) {
  pthread_mutex_lock(&lock);
  hook = h;
  hook_user = user;
  pthread_mutex_unlock(&lock);
}

void fakecuda_hold_events(int on) {
  pthread_mutex_lock(&lock);
  hold = on;
  pthread_mutex_unlock(&lock);
}

void fakecuda_hang_launches(int on) {
  pthread_mutex_lock(&lock);
  hang = on;
  if (!on) {
    /* The hung kernels finish now. */
    for (obj *o = objs[K_STREAM]; o; o = o->next) {
      if (!o->hung) continue;
      o->hung = 0;
      for (obj *e = objs[K_EVENT]; e; e = e->next)
        if (e->ev_stream == o && e->recorded) e->ready = 1;
    }
  }
  pthread_mutex_unlock(&lock);
}

void fakecuda_complete_events(void) {
  pthread_mutex_lock(&lock);
  complete_all(NULL);
  pthread_mutex_unlock(&lock);
}

unsigned long fakecuda_violations(char *last, size_t capacity) {
  pthread_mutex_lock(&lock);
  unsigned long n = violations;
  if (last && capacity) snprintf(last, capacity, "%s", last_violation);
  pthread_mutex_unlock(&lock);
  return n;
}

void fakecuda_jit_fail(unsigned count, const char *log) {
  pthread_mutex_lock(&lock);
  jit_failures = count;
  snprintf(jit_log, sizeof jit_log, "%s", log ? log : "");
  pthread_mutex_unlock(&lock);
}

int fakecuda_jit_opt_level(void) {
  pthread_mutex_lock(&lock);
  int level = jit_opt_level;
  pthread_mutex_unlock(&lock);
  return level;
}

void fakecuda_jit_rendezvous(unsigned n) {
  pthread_mutex_lock(&rv_lock);
  rv_want = n;
  rv_max = rv_inside;
  pthread_cond_broadcast(&rv_cond);
  pthread_mutex_unlock(&rv_lock);
}

unsigned fakecuda_jit_max_concurrent(void) {
  pthread_mutex_lock(&rv_lock);
  unsigned n = rv_max;
  pthread_mutex_unlock(&rv_lock);
  return n;
}

unsigned long fakecuda_pageable_copies(void) {
  pthread_mutex_lock(&lock);
  unsigned long n = pageable_copies;
  pthread_mutex_unlock(&lock);
  return n;
}

int fakecuda_poisoned(void) {
  pthread_mutex_lock(&lock);
  int p = poisoned;
  pthread_mutex_unlock(&lock);
  return p;
}

/* The fake owns everything it handed out: free it at unload so leak
 * checkers see only the plugin's own leaks. */
__attribute__((destructor)) static void fakecuda_fini(void) {
  pthread_mutex_lock(&lock);
  destroy_context_objects();
  free(launches);
  launches = NULL;
  nlaunches = caplaunches = 0;
  free(ops);
  ops = NULL;
  nops = capops = 0;
  pthread_mutex_unlock(&lock);
}

void fakecuda_fault_launch(unsigned long nth, int code) {
  pthread_mutex_lock(&lock);
  fault_launch_at = nth ? nlaunches + nth : 0;
  fault_launch_code = code;
  pthread_mutex_unlock(&lock);
}

unsigned long fakecuda_op_count(void) {
  pthread_mutex_lock(&lock);
  unsigned long n = nops;
  pthread_mutex_unlock(&lock);
  return n;
}

int fakecuda_op_get(unsigned long index, fakecuda_op *out) {
  pthread_mutex_lock(&lock);
  int ok = index < nops;
  if (ok) *out = ops[index];
  pthread_mutex_unlock(&lock);
  return ok ? 0 : -1;
}

void fakecuda_allow_legacy_stream(int on) {
  pthread_mutex_lock(&lock);
  allow_legacy = on;
  pthread_mutex_unlock(&lock);
}

unsigned long fakecuda_total_calls(void) {
  pthread_mutex_lock(&lock);
  unsigned long n = total_calls;
  pthread_mutex_unlock(&lock);
  return n;
}

void fakecuda_inject_call(unsigned long nth, int code) {
  pthread_mutex_lock(&lock);
  call_fault_at = nth ? total_calls + nth : 0;
  call_fault_code = code;
  call_fault_name[0] = '\0';
  pthread_mutex_unlock(&lock);
}

int fakecuda_call_fault_fired(char *name, size_t capacity) {
  pthread_mutex_lock(&lock);
  int fired = call_fault_name[0] != '\0';
  if (name && capacity) snprintf(name, capacity, "%s", call_fault_name);
  pthread_mutex_unlock(&lock);
  return fired;
}

API void fakecuda_set_device(int ordinal, const fakecuda_device *dev);
API unsigned long long fakecuda_device_bytes(int ordinal);

void fakecuda_set_device(int ordinal, const fakecuda_device *dev) {
  pthread_mutex_lock(&lock);
  if (ordinal >= 0 && ordinal < 8) {
    if (dev) dev_over[ordinal] = *dev;
    else memset(&dev_over[ordinal], 0, sizeof dev_over[ordinal]);
  }
  pthread_mutex_unlock(&lock);
}

unsigned long long fakecuda_device_bytes(int ordinal) {
  pthread_mutex_lock(&lock);
  unsigned long long n = ordinal >= 0 && ordinal < 8 ? dev_bytes[ordinal] : 0;
  pthread_mutex_unlock(&lock);
  return n;
}
