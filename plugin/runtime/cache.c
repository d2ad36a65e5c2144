/* cache.c -- plans: program -> PTX -> cubin -> CUfunction, an in-memory LRU and an on-disk cubin cache. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cuda_internal.h"

#define MODCACHE_CAPACITY 64u
#define JIT_LOG_BYTES 8192u
#define DISK_MAGIC "VYRECUBN"
#define DISK_FORMAT 1u
#define DISK_MAX_PAYLOAD (256u << 20)

/* On-disk entry: this header, then the payload (cg_kernel_info, then the
 * cubin).  payload_sha256 detects torn or corrupted files; key must match
 * the name the file was looked up by. */
typedef struct disk_header {
  char magic[8];
  uint32_t format;
  uint32_t header_size;
  uint64_t payload_size;
  uint8_t payload_sha256[32];
  uint8_t key[32];
} disk_header;

static void put_u32(uint8_t *p, uint32_t v) {
  for (int i = 0; i < 4; i++) p[i] = (uint8_t)(v >> (8 * i));
}

/* ------------------------------------------------------------------ */
/* Memory cache                                                        */
/* ------------------------------------------------------------------ */
void vc_modcache_init(vc_backend *b) {
  memset(&b->modcache, 0, sizeof b->modcache);
  pthread_mutex_init(&b->modcache.lock, NULL);
  b->modcache.capacity = MODCACHE_CAPACITY;
  const char *cap = getenv("VYRE_CUDA_MODULE_CACHE");
  if (cap && *cap) {
    long v = strtol(cap, NULL, 10);
    if (v >= 1 && v <= 65536) b->modcache.capacity = (uint32_t)v;
  }
}

static void plan_free(vc_backend *b, vc_plan *p) {
  if (p->module && vc_cleanup_ok(b)) {
    CUresult r = VC_CU(b, cuModuleUnload, (p->module));
    if (r != CUDA_SUCCESS) vc_cu_note(b, r, "cuModuleUnload");
  }
  vc_mempool_release(&b->devpool, &p->params_block);
  free(p->params_copy);
  pthread_mutex_destroy(&p->params_lock);
  vyre_program_free(p->program);
  free(p);
}

void vc_plan_ref(vc_plan *plan) { atomic_fetch_add(&plan->refs, 1); }

void vc_plan_unref(vc_backend *b, vc_plan *plan) {
  if (plan && atomic_fetch_sub(&plan->refs, 1) == 1) plan_free(b, plan);
}

static void lru_unlink(vc_modcache *c, vc_plan *p) {
  if (p->prev) p->prev->next = p->next;
  else c->head = p->next;
  if (p->next) p->next->prev = p->prev;
  else c->tail = p->prev;
  p->prev = p->next = NULL;
  p->cached = 0;
  c->count--;
}

static void lru_push_front(vc_modcache *c, vc_plan *p) {
  p->prev = NULL;
  p->next = c->head;
  if (c->head) c->head->prev = p;
  c->head = p;
  if (!c->tail) c->tail = p;
  p->cached = 1;
  c->count++;
}

void vc_modcache_trim(vc_backend *b) {
  vc_modcache *c = &b->modcache;
  for (;;) {
    pthread_mutex_lock(&c->lock);
    vc_plan *p = c->head;
    while (p && atomic_load(&p->refs) > 1) p = p->next;
    if (p) lru_unlink(c, p);
    pthread_mutex_unlock(&c->lock);
    if (!p) break;
    vc_plan_unref(b, p);
  }
}

void vc_modcache_destroy(vc_backend *b) {
  vc_modcache *c = &b->modcache;
  for (;;) {
    pthread_mutex_lock(&c->lock);
    vc_plan *p = c->head;
    if (p) lru_unlink(c, p);
    pthread_mutex_unlock(&c->lock);
    if (!p) break;
    vc_plan_unref(b, p);
  }
  pthread_mutex_destroy(&c->lock);
}

/* ------------------------------------------------------------------ */
/* Disk cache                                                          */
/* ------------------------------------------------------------------ */
/* mkdir -p on a private copy (the instance's path is shared by threads). */
static int mkdir_p(const char *dir) {
  char path[sizeof ((vc_diskcache *)0)->dir];
  snprintf(path, sizeof path, "%s", dir);
  for (char *s = path + 1; *s; s++) {
    if (*s != '/') continue;
    *s = '\0';
    int r = mkdir(path, 0700);
    *s = '/';
    if (r != 0 && errno != EEXIST) return -1;
  }
  if (mkdir(path, 0700) != 0 && errno != EEXIST) return -1;
  return 0;
}

void vc_diskcache_init(vc_backend *b) {
  vc_diskcache *d = &b->disk;
  d->enabled = 0;
  d->dir[0] = '\0';
  const char *off = getenv("VYRE_CUDA_DISK_CACHE");
  if (off && strcmp(off, "0") == 0) return;
  const char *dir = getenv("VYRE_CACHE_DIR");
  int n;
  if (dir && *dir) {
    n = snprintf(d->dir, sizeof d->dir, "%s/cuda", dir);
  } else if ((dir = getenv("XDG_CACHE_HOME")) && *dir) {
    n = snprintf(d->dir, sizeof d->dir, "%s/vyre/cuda", dir);
  } else if ((dir = getenv("HOME")) && *dir) {
    n = snprintf(d->dir, sizeof d->dir, "%s/.cache/vyre/cuda", dir);
  } else {
    vc_log("disk cache off: neither VYRE_CACHE_DIR, XDG_CACHE_HOME nor HOME is set");
    return;
  }
  if (n <= 0 || (size_t)n >= sizeof d->dir - 80) {
    vc_log("disk cache off: cache directory path too long");
    return;
  }
  /* Created lazily on the first write, so a read-only home costs nothing. */
  d->enabled = 1;
}

/* Disk key: the plan key plus the device arch and driver version, since a
 * cubin is only valid for them. */
static void disk_key(vc_backend *b, const uint8_t plan_key[32], uint8_t out[32]) {
  vyre_sha256_ctx ctx;
  vyre_sha256_init(&ctx);
  vyre_sha256_update(&ctx, "vyre-cuda-cubin", 15);
  vyre_sha256_update(&ctx, plan_key, 32);
  uint8_t w[12];
  put_u32(w, b->profile.compute_major);
  put_u32(w + 4, b->profile.compute_minor);
  put_u32(w + 8, (uint32_t)b->driver_version);
  vyre_sha256_update(&ctx, w, sizeof w);
  vyre_sha256_final(&ctx, out);
}

static void disk_path(vc_backend *b, const uint8_t key[32], char *out, size_t size) {
  char hex[65];
  vyre_hex(key, 32, hex);
  snprintf(out, size, "%s/%s.cubin", b->disk.dir, hex);
}

/* Read and verify an entry.  1: *payload (malloc'd) valid; 0: absent;
 * -1: present but corrupt (removed so it is rebuilt). */
static int disk_read(vc_backend *b, const uint8_t key[32], uint8_t **payload, uint64_t *size) {
  char path[1200];
  disk_path(b, key, path, sizeof path);
  *payload = NULL;
  int fd = open(path, O_RDONLY | O_CLOEXEC);
  if (fd < 0) return 0;
  disk_header h;
  uint8_t *data = NULL;
  int ok = 0;
  if (read(fd, &h, sizeof h) == (ssize_t)sizeof h && memcmp(h.magic, DISK_MAGIC, 8) == 0 &&
      h.format == DISK_FORMAT && h.header_size == sizeof h && memcmp(h.key, key, 32) == 0 &&
      h.payload_size >= sizeof(cg_kernel_info) && h.payload_size <= DISK_MAX_PAYLOAD) {
    data = malloc((size_t)h.payload_size);
    if (data) {
      uint64_t got = 0;
      while (got < h.payload_size) {
        ssize_t n = read(fd, data + got, (size_t)(h.payload_size - got));
        if (n <= 0) break;
        got += (uint64_t)n;
      }
      uint8_t extra;
      if (got == h.payload_size && read(fd, &extra, 1) == 0) {
        uint8_t sha[32];
        vyre_sha256(data, (size_t)h.payload_size, sha);
        ok = memcmp(sha, h.payload_sha256, 32) == 0;
      }
    }
  }
  close(fd);
  if (!ok) {
    free(data);
    vc_log("disk cache entry %s is corrupt; rebuilding it", path);
    unlink(path);
    return -1;
  }
  *payload = data;
  *size = h.payload_size;
  return 1;
}

/* Write an entry atomically: a private temp file, then rename over the
 * final name, so concurrent processes see either nothing or a whole file. */
static int disk_write(vc_backend *b, const uint8_t key[32], const cg_kernel_info *info,
                      const void *cubin, size_t cubin_size) {
  static atomic_uint seq;
  if (mkdir_p(b->disk.dir) != 0) return -1;
  char path[1200], tmp[1300];
  disk_path(b, key, path, sizeof path);
  snprintf(tmp, sizeof tmp, "%s.tmp.%ld.%u", path, (long)getpid(), atomic_fetch_add(&seq, 1u));
  disk_header h;
  memset(&h, 0, sizeof h);
  memcpy(h.magic, DISK_MAGIC, 8);
  h.format = DISK_FORMAT;
  h.header_size = sizeof h;
  h.payload_size = sizeof *info + cubin_size;
  memcpy(h.key, key, 32);
  vyre_sha256_ctx ctx;
  vyre_sha256_init(&ctx);
  vyre_sha256_update(&ctx, info, sizeof *info);
  vyre_sha256_update(&ctx, cubin, cubin_size);
  vyre_sha256_final(&ctx, h.payload_sha256);
  int fd = open(tmp, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
  if (fd < 0) return -1;
  int ok = write(fd, &h, sizeof h) == (ssize_t)sizeof h &&
           write(fd, info, sizeof *info) == (ssize_t)sizeof *info;
  const uint8_t *p = cubin;
  size_t left = cubin_size;
  while (ok && left) {
    ssize_t n = write(fd, p, left);
    if (n <= 0) ok = 0;
    else {
      p += n;
      left -= (size_t)n;
    }
  }
  if (close(fd) != 0) ok = 0;
  if (!ok || rename(tmp, path) != 0) {
    unlink(tmp);
    return -1;
  }
  return 0;
}

/* ------------------------------------------------------------------ */
/* Building a plan                                                     */
/* ------------------------------------------------------------------ */
static void plan_key(const vyre_program *prog, const cg_options *cg, uint8_t out[32]) {
  uint8_t w[4 * 9];
  put_u32(w, CG_VERSION);
  put_u32(w + 4, cg->sm_major);
  put_u32(w + 8, cg->sm_minor);
  put_u32(w + 12, cg->ulp_budget);
  put_u32(w + 16, cg->workgroup[0]);
  put_u32(w + 20, cg->workgroup[1]);
  put_u32(w + 24, cg->workgroup[2]);
  put_u32(w + 28, cg->flags);
  put_u32(w + 32, (uint32_t)sizeof(cg_kernel_info));
  vyre_sha256_ctx ctx;
  vyre_sha256_init(&ctx);
  vyre_sha256_update(&ctx, prog->sha256, 32);
  vyre_sha256_update(&ctx, w, sizeof w);
  vyre_sha256_final(&ctx, out);
}

static void dump_ptx(const vc_plan *p, const char *ptx, size_t len) {
  const char *dir = getenv("VYRE_PTX_DUMP_DIR");
  if (!dir || !*dir) return;
  char hex[65], path[1200];
  vyre_hex(p->key, 32, hex);
  hex[16] = '\0';
  snprintf(path, sizeof path, "%s/%s-%s.ptx", dir, p->info.entry, hex);
  FILE *f = fopen(path, "w");
  if (!f) {
    vc_log("VYRE_PTX_DUMP_DIR: cannot write %s: %s", path, strerror(errno));
    return;
  }
  fwrite(ptx, 1, len, f);
  fclose(f);
  vc_log("PTX of %s written to %s", p->info.entry, path);
}

/* PTX -> cubin with the driver's linker (JIT for this device). *cubin is
 * malloc'd. */
static vyre_status link_ptx(vc_backend *b, const vc_plan *p, const char *ptx, size_t len,
                            void **cubin, size_t *cubin_size, vyre_error *err) {
  char *error_log = calloc(1, JIT_LOG_BYTES), *info_log = calloc(1, JIT_LOG_BYTES);
  vyre_status st = VYRE_OK;
  CUlinkState link = NULL;
  *cubin = NULL;
  if (!error_log || !info_log) {
    st = vyre_error_set(err, VYRE_OUT_OF_MEMORY, 0,
                        "compiling %s: no host memory for the JIT logs. Fix: free host memory",
                        p->info.entry);
    goto done;
  }
  CUjit_option opts[5] = {CU_JIT_ERROR_LOG_BUFFER, CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES,
                          CU_JIT_INFO_LOG_BUFFER, CU_JIT_INFO_LOG_BUFFER_SIZE_BYTES,
                          CU_JIT_LOG_VERBOSE};
  void *vals[5] = {error_log, (void *)(uintptr_t)(JIT_LOG_BYTES - 1), info_log,
                   (void *)(uintptr_t)(JIT_LOG_BYTES - 1), (void *)(uintptr_t)0};
  CUresult r = VC_CU(b, cuLinkCreate, (5, opts, vals, &link));
  if (r != CUDA_SUCCESS) {
    link = NULL;
    st = vc_cu_fail(b, err, r, "cuLinkCreate", p->info.entry, NULL);
    goto done;
  }
  r = VC_CU(b, cuLinkAddData, (link, CU_JIT_INPUT_PTX, (void *)ptx, len + 1, "vyre.ptx", 0, NULL,
                               NULL));
  const char *call = "cuLinkAddData";
  void *image = NULL;
  size_t image_size = 0;
  if (r == CUDA_SUCCESS) {
    call = "cuLinkComplete";
    r = VC_CU(b, cuLinkComplete, (link, &image, &image_size));
  }
  if (r != CUDA_SUCCESS) {
    if (vc_is_sticky(r)) {
      st = vc_cu_fail(b, err, r, call, p->info.entry, NULL);
      goto done;
    }
    const char *name = NULL;
    if (VC_CU(b, cuGetErrorName, (r, &name)) != CUDA_SUCCESS || !name) name = "unrecognised CUresult";
    error_log[JIT_LOG_BYTES - 1] = '\0';
    size_t l = strlen(error_log);
    while (l && (error_log[l - 1] == '\n' || error_log[l - 1] == ' ')) error_log[--l] = '\0';
    atomic_fetch_add(&b->n_driver_errors, 1);
    st = vyre_error_set(err, VYRE_COMPILE, (int64_t)r,
                        "PTX JIT of kernel %s failed: %s returned %s; JIT log: %s. Fix: update "
                        "the NVIDIA driver (the PTX needs ISA %u.%u); if it persists, report a "
                        "codegen bug with the PTX (set VYRE_PTX_DUMP_DIR to keep it)",
                        p->info.entry, call, name, l ? error_log : "(empty)",
                        p->info.ptx_isa_major, p->info.ptx_isa_minor);
    goto done;
  }
  if (!image || !image_size) {
    st = vyre_error_set(err, VYRE_COMPILE, 0,
                        "PTX JIT of kernel %s: cuLinkComplete returned an empty image. Fix: "
                        "update the NVIDIA driver",
                        p->info.entry);
    goto done;
  }
  /* The image belongs to the link state: copy it before destroying that. */
  *cubin = malloc(image_size);
  if (!*cubin) {
    st = vyre_error_set(err, VYRE_OUT_OF_MEMORY, 0,
                        "compiling %s: no host memory for a %zu-byte cubin. Fix: free host "
                        "memory",
                        p->info.entry, image_size);
    goto done;
  }
  memcpy(*cubin, image, image_size);
  *cubin_size = image_size;
  info_log[JIT_LOG_BYTES - 1] = '\0';
  if (info_log[0]) vc_log("JIT %s: %s", p->info.entry, info_log);

done:
  if (link) {
    CUresult dr = VC_CU(b, cuLinkDestroy, (link));
    if (dr != CUDA_SUCCESS) vc_cu_note(b, dr, "cuLinkDestroy");
  }
  free(error_log);
  free(info_log);
  return st;
}

static vyre_status load_module(vc_backend *b, vc_plan *p, const void *cubin, vyre_error *err) {
  CUresult r = VC_CU(b, cuModuleLoadData, (&p->module, cubin));
  if (r != CUDA_SUCCESS) {
    p->module = NULL;
    return vc_cu_fail(b, err, r, "cuModuleLoadData", p->info.entry, NULL);
  }
  r = VC_CU(b, cuModuleGetFunction, (&p->fn, p->module, p->info.entry));
  if (r != CUDA_SUCCESS) return vc_cu_fail(b, err, r, "cuModuleGetFunction", p->info.entry, NULL);
  if (p->info.uses_grid_barrier) {
    int per_sm = 0;
    int threads = (int)(p->cg.workgroup[0] * p->cg.workgroup[1] * p->cg.workgroup[2]);
    r = VC_CU(b, cuOccupancyMaxActiveBlocksPerMultiprocessor, (&per_sm, p->fn, threads, 0));
    if (r != CUDA_SUCCESS)
      return vc_cu_fail(b, err, r, "cuOccupancyMaxActiveBlocksPerMultiprocessor", p->info.entry,
                        NULL);
    uint64_t max = (uint64_t)(per_sm > 0 ? per_sm : 0) * (uint64_t)b->sm_count;
    p->coop_max_blocks = max > UINT32_MAX ? UINT32_MAX : (uint32_t)max;
  }
  return VYRE_OK;
}

static vyre_status build_plan(vc_backend *b, vc_plan *p, vyre_error *err) {
  uint8_t dkey[32];
  vyre_status st;
  if (b->disk.enabled) {
    disk_key(b, p->key, dkey);
    uint8_t *payload = NULL;
    uint64_t size = 0;
    int got = disk_read(b, dkey, &payload, &size);
    if (got == 1) {
      memcpy(&p->info, payload, sizeof p->info);
      p->info.entry[sizeof p->info.entry - 1] = '\0';
      st = load_module(b, p, payload + sizeof p->info, err);
      free(payload);
      if (st == VYRE_OK) {
        atomic_fetch_add(&b->disk.hits, 1);
        return VYRE_OK;
      }
      if (vc_is_lost(b)) return st;
      /* A cubin the driver refuses (for example written by a different
       * driver build with the same version number): rebuild it. */
      if (p->module) {
        CUresult r = VC_CU(b, cuModuleUnload, (p->module));
        if (r != CUDA_SUCCESS) vc_cu_note(b, r, "cuModuleUnload");
        p->module = NULL;
      }
      p->fn = NULL;
      atomic_fetch_add(&b->disk.corrupt, 1);
      vyre_error_clear(err);
    } else if (got < 0) {
      atomic_fetch_add(&b->disk.corrupt, 1);
    }
    atomic_fetch_add(&b->disk.misses, 1);
  }

  char *ptx = NULL;
  size_t len = 0;
  memset(&p->info, 0, sizeof p->info);
  st = cg_emit_ptx(p->program, &p->cg, &ptx, &len, &p->info, err);
  if (st != VYRE_OK) return st;
  p->info.entry[sizeof p->info.entry - 1] = '\0';
  if (p->info.kernel_buffers != p->program->kernel_buffer_count ||
      p->info.elements_per_thread == 0) {
    free(ptx);
    return vyre_error_set(err, VYRE_INTERNAL, 0,
                          "codegen returned kernel %s with %u buffer parameters and %u "
                          "elements per thread for a program with %u kernel buffers. Fix: "
                          "report a codegen bug",
                          p->info.entry, p->info.kernel_buffers, p->info.elements_per_thread,
                          p->program->kernel_buffer_count);
  }
  dump_ptx(p, ptx, len);
  void *cubin = NULL;
  size_t cubin_size = 0;
  st = link_ptx(b, p, ptx, len, &cubin, &cubin_size, err);
  free(ptx);
  if (st != VYRE_OK) return st;
  if (b->disk.enabled) {
    if (disk_write(b, dkey, &p->info, cubin, cubin_size) == 0) {
      atomic_fetch_add(&b->disk.writes, 1);
    } else {
      /* The disk cache only saves time; a failed write is not an error. */
      atomic_fetch_add(&b->disk.write_errors, 1);
      vc_log("disk cache: cannot write into %s: %s", b->disk.dir, strerror(errno));
    }
  }
  st = load_module(b, p, cubin, err);
  free(cubin);
  return st;
}

vyre_status vc_plan_get(vc_backend *b, vyre_program *program, const cg_options *cg,
                        vc_plan **out, vyre_error *err) {
  *out = NULL;
  uint8_t key[32];
  plan_key(program, cg, key);
  vc_modcache *c = &b->modcache;

  pthread_mutex_lock(&c->lock);
  for (vc_plan *p = c->head; p; p = p->next) {
    if (memcmp(p->key, key, 32) == 0) {
      lru_unlink(c, p);
      lru_push_front(c, p);
      vc_plan_ref(p);
      c->hits++;
      pthread_mutex_unlock(&c->lock);
      vyre_program_free(program);
      *out = p;
      return VYRE_OK;
    }
  }
  c->misses++;
  pthread_mutex_unlock(&c->lock);

  vc_plan *p = calloc(1, sizeof *p);
  if (p) pthread_mutex_init(&p->params_lock, NULL);
  if (!p) {
    vyre_program_free(program);
    return vyre_error_set(err, VYRE_OUT_OF_MEMORY, 0,
                          "compiling: no host memory for a plan. Fix: free host memory");
  }
  atomic_init(&p->refs, 1);
  memcpy(p->key, key, 32);
  p->program = program;
  p->cg = *cg;
  vyre_status st = build_plan(b, p, err);
  if (st != VYRE_OK) {
    plan_free(b, p);
    return st;
  }

  /* Another thread may have built the same plan meanwhile: keep one. */
  pthread_mutex_lock(&c->lock);
  c->compiles++;
  for (vc_plan *q = c->head; q; q = q->next) {
    if (memcmp(q->key, key, 32) == 0) {
      vc_plan_ref(q);
      pthread_mutex_unlock(&c->lock);
      plan_free(b, p);
      *out = q;
      return VYRE_OK;
    }
  }
  vc_plan_ref(p); /* the cache's reference */
  lru_push_front(c, p);
  vc_plan *evict = NULL;
  if (c->count > c->capacity) {
    evict = c->tail;
    lru_unlink(c, evict);
    c->evictions++;
  }
  pthread_mutex_unlock(&c->lock);
  if (evict) vc_plan_unref(b, evict);
  *out = p;
  return VYRE_OK;
}
