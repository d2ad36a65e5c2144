/* diskcache.c -- the on-disk cubin cache: verified entries, atomic writes, keyed by plan, arch and driver (diskcache.h). */
#include "diskcache.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "abi/support/config.h"
#include "abi/support/file.h"
#include "util.h"
#include "vyre/vyre_support.h"

#define DISK_MAGIC "VYRECUBN"
#define DISK_FORMAT 2u /* 1: the payload check was a SHA-256 (40 us per 16 KiB here) */
#define DISK_MAX_PAYLOAD (256u << 20)

/* On-disk entry: this header, then the payload (cg_kernel_info, then the
 * cubin).  payload_hash (vc_hash64) detects torn or corrupted files, which
 * is all it is for: the directory is the user's own (0700), and whoever
 * can write there could rewrite any checksum too.  key must match the
 * name the file was looked up by. */
typedef struct disk_header {
  char magic[8];
  uint32_t format;
  uint32_t header_size;
  uint64_t payload_size;
  uint64_t payload_hash;
  uint8_t reserved[24]; /* zero */
  uint8_t key[32];
} disk_header;

/* The payload check: the kernel info's hash seeds the cubin's. */
static uint64_t payload_hash(const void *info, const void *cubin, uint64_t cubin_size) {
  uint64_t seed = vc_hash64(info, sizeof(cg_kernel_info), 0x7679726563756269ull);
  return vc_hash64(cubin, cubin_size, seed);
}

static void put_u32(uint8_t *p, uint32_t v) {
  for (int i = 0; i < 4; i++) p[i] = (uint8_t)(v >> (8 * i));
}

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

void vc_diskcache_init(vc_diskcache *d, uint32_t sm_major, uint32_t sm_minor, int driver_version) {
  memset(d, 0, sizeof *d);
  d->sm_major = sm_major;
  d->sm_minor = sm_minor;
  d->driver_version = driver_version;
  const char *off = vyre__env(VYRE__ENV_CUDA_DISK_CACHE);
  if (off && strcmp(off, "0") == 0) return;
  const char *dir = vyre__env(VYRE__ENV_CACHE_DIR);
  int n;
  if (dir) {
    n = snprintf(d->dir, sizeof d->dir, "%s/cuda", dir);
  } else if ((dir = vyre__env(VYRE__ENV_XDG_CACHE_HOME))) {
    n = snprintf(d->dir, sizeof d->dir, "%s/vyre/cuda", dir);
  } else if ((dir = vyre__env(VYRE__ENV_HOME))) {
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
static void disk_key(const vc_diskcache *d, const uint8_t plan_key[32], uint8_t out[32]) {
  vyre_sha256_ctx ctx;
  vyre_sha256_init(&ctx);
  vyre_sha256_update(&ctx, "vyre-cuda-cubin", 15);
  vyre_sha256_update(&ctx, plan_key, 32);
  uint8_t w[12];
  put_u32(w, d->sm_major);
  put_u32(w + 4, d->sm_minor);
  put_u32(w + 8, (uint32_t)d->driver_version);
  vyre_sha256_update(&ctx, w, sizeof w);
  vyre_sha256_final(&ctx, out);
}

static void disk_path(const vc_diskcache *d, const uint8_t key[32], char *out, size_t size) {
  char hex[65];
  vyre_hex(key, 32, hex);
  snprintf(out, size, "%s/%s.cubin", d->dir, hex);
}

/* Read and verify the entry stored under disk key `key`.  1: *payload (malloc'd) valid; 0: absent;
 * -1: present but corrupt (removed so it is rebuilt), or not a regular file or larger than any
 * entry (left alone: the next write replaces it). */
static int disk_read(const vc_diskcache *d, const uint8_t key[32], uint8_t **payload, uint64_t *size) {
  char path[1200];
  disk_path(d, key, path, sizeof path);
  *payload = NULL;
  /* The one checked open: a FIFO or a device under the entry's name
   * never blocks nor is read; it is refused like a corrupt entry, and
   * the next write renames a regular file over it. */
  int fd;
  vyre_error open_err = VYRE_ERROR_INIT;
  if (vyre__file_open(path, sizeof(disk_header) + DISK_MAX_PAYLOAD, NULL, &fd, NULL,
                      &open_err) != VYRE_OK) {
    if (open_err.native_code != 0) return 0; /* absent or unreadable: a miss, as before */
    vc_log("disk cache entry refused: %s", open_err.message);
    return -1;
  }
  disk_header h;
  uint8_t *data = NULL;
  int ok = 0;
  ssize_t got_header = read(fd, &h, sizeof h);
  if (got_header == (ssize_t)sizeof h && memcmp(h.magic, DISK_MAGIC, 8) == 0 &&
      h.format != DISK_FORMAT) {
    /* An entry of another format (an older or newer vyre): not ours to
     * judge or remove; this build's entry replaces it on write. */
    close(fd);
    return 0;
  }
  if (got_header == (ssize_t)sizeof h && memcmp(h.magic, DISK_MAGIC, 8) == 0 &&
      h.header_size == sizeof h && memcmp(h.key, key, 32) == 0 &&
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
      if (got == h.payload_size && read(fd, &extra, 1) == 0)
        ok = payload_hash(data, data + sizeof(cg_kernel_info),
                          h.payload_size - sizeof(cg_kernel_info)) == h.payload_hash;
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

/* Write an entry atomically (abi/support/file.h: a private temporary
 * file, then rename over the final name), so concurrent processes see
 * either nothing or a whole file.  No fsync: every entry carries its
 * payload hash and a reader refuses one that does not match (disk_read),
 * so a file torn by a crash is a miss and a rebuild, never a wrong kernel,
 * and a compile miss does not wait for the disk (an fsync cost 0.4 to 0.8
 * ms a miss).  Mode 0600: the entries are the user's own. */
static vyre_status disk_write(const vc_diskcache *d, const uint8_t key[32],
                              const cg_kernel_info *info, const void *cubin, size_t cubin_size,
                              vyre_error *err) {
  if (mkdir_p(d->dir) != 0) {
    int e = errno;
    return vyre_error_set(err, VYRE_IO, e, "cannot create %s: %s", d->dir, strerror(e));
  }
  char path[1200];
  disk_path(d, key, path, sizeof path);
  disk_header h;
  memset(&h, 0, sizeof h);
  memcpy(h.magic, DISK_MAGIC, 8);
  h.format = DISK_FORMAT;
  h.header_size = sizeof h;
  h.payload_size = sizeof *info + cubin_size;
  memcpy(h.key, key, 32);
  h.payload_hash = payload_hash(info, cubin, cubin_size);
  vyre__atomic_file a;
  vyre_status st = vyre__file_atomic_begin(&a, path, 0600, err);
  if (st != VYRE_OK) return st;
  a.no_sync = 1;
  /* A short write shows as the stream's error, which commit reports. */
  fwrite(&h, sizeof h, 1, a.f);
  fwrite(info, sizeof *info, 1, a.f);
  if (cubin_size) fwrite(cubin, 1, cubin_size, a.f);
  return vyre__file_atomic_commit(&a, err);
}

int vc_diskcache_enabled(const vc_diskcache *d) { return d->enabled; }

int vc_diskcache_read(vc_diskcache *d, const uint8_t plan_key[32], uint8_t **payload,
                      uint64_t *size) {
  uint8_t key[32];
  disk_key(d, plan_key, key);
  int got = disk_read(d, key, payload, size);
  if (got < 0) atomic_fetch_add(&d->corrupt, 1);
  return got;
}

void vc_diskcache_write(vc_diskcache *d, const uint8_t plan_key[32], const cg_kernel_info *info,
                        const void *cubin, size_t cubin_size) {
  uint8_t key[32];
  disk_key(d, plan_key, key);
  vyre_error e = VYRE_ERROR_INIT;
  if (disk_write(d, key, info, cubin, cubin_size, &e) == VYRE_OK) {
    atomic_fetch_add(&d->writes, 1);
  } else {
    /* The disk cache only saves time; a failed write is not an error. */
    atomic_fetch_add(&d->write_errors, 1);
    vc_log("disk cache: %s", e.message);
  }
}

void vc_diskcache_count_hit(vc_diskcache *d) { atomic_fetch_add(&d->hits, 1); }

void vc_diskcache_count_refused(vc_diskcache *d) { atomic_fetch_add(&d->corrupt, 1); }

void vc_diskcache_count_miss(vc_diskcache *d) { atomic_fetch_add(&d->misses, 1); }

static void read_metrics(const void *state, vc_metric_sink *s) {
  vc_diskcache *d = (vc_diskcache *)state;
  vc_metric_emit(s, "cache.disk.enabled", (uint64_t)d->enabled);
  vc_metric_emit(s, "cache.disk.hits", atomic_load(&d->hits));
  vc_metric_emit(s, "cache.disk.misses", atomic_load(&d->misses));
  vc_metric_emit(s, "cache.disk.writes", atomic_load(&d->writes));
  vc_metric_emit(s, "cache.disk.corrupt", atomic_load(&d->corrupt));
  vc_metric_emit(s, "cache.disk.write_errors", atomic_load(&d->write_errors));
}

void vc_diskcache_add_metrics(vc_diskcache *d, vc_metrics *m) { vc_metrics_add(m, read_metrics, d); }
