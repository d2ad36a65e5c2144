/* peer.c -- the workloads driver's side of the CUDA peers: libwlpeers.so opened with dlopen (never linked: the driver builds and runs without CUDA), and the roofline of each workload. */
#include <dlfcn.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "peers.h"
#include "workloads.h"

struct wl_peers {
  void *so;
  int (*abi)(void);
  int (*open)(uint32_t, char *, size_t);
  int (*floor)(wl_peer_floor *, char *, size_t);
  int (*run)(const char *, const wl_instance *, uint32_t, uint32_t, double *, void *const *, char *,
             size_t);
  wl_peer_floor fl;
};

int wl_peers_default_path(char *path, size_t size) {
  char exe[PATH_MAX];
  ssize_t n = readlink("/proc/self/exe", exe, sizeof exe - 1);
  if (n <= 0) return -1;
  exe[n] = 0;
  char *slash = strrchr(exe, '/');
  if (!slash) return -1;
  *slash = 0;
  /* libtool runs the real binary from .libs/ beside the wrapper */
  size_t len = strlen(exe);
  if (len >= 6 && !strcmp(exe + len - 6, "/.libs")) exe[len - 6] = 0;
  return snprintf(path, size, "%s/libwlpeers.so", exe) < (int)size ? 0 : -1;
}

void wl_peers_free(wl_peers *p) {
  if (!p) return;
  /* The CUDA runtime's state stays with the process: unloading it while
   * its primary context lives is not supported, so the library stays. */
  free(p);
}

/* One symbol of the library, or NULL with dlerror's text in why. */
static void *sym(void *so, const char *name, const char *path, char *why, size_t why_size) {
  dlerror();
  void *f = dlsym(so, name);
  if (!f) {
    const char *e = dlerror();
    snprintf(why, why_size, "%.900s lacks %s: %s. Fix: rebuild it with bench/workloads/peers.sh", path,
             name, e ? e : "NULL symbol");
  }
  return f;
}

wl_peers *wl_peers_load(const char *path, uint32_t device, char *why, size_t why_size) {
  wl_peers *p = calloc(1, sizeof *p);
  if (!p) {
    snprintf(why, why_size, "out of memory");
    return NULL;
  }
  p->so = dlopen(path, RTLD_NOW | RTLD_LOCAL);
  if (!p->so) {
    const char *e = dlerror();
    snprintf(why, why_size, "cannot load %s: %s. Fix: build it with bench/workloads/peers.sh "
             "BUILD_DIR (needs nvcc), or pass --peer PATH", path, e ? e : "dlopen failed");
    goto fail;
  }
  if (!(*(void **)&p->abi = sym(p->so, "wl_peer_abi", path, why, why_size)) ||
      !(*(void **)&p->open = sym(p->so, "wl_peer_open", path, why, why_size)) ||
      !(*(void **)&p->floor = sym(p->so, "wl_peer_floor_measure", path, why, why_size)) ||
      !(*(void **)&p->run = sym(p->so, "wl_peer_run", path, why, why_size)))
    goto fail;
  if (p->abi() != WL_PEER_ABI) {
    snprintf(why, why_size, "%s has peer ABI %d, this driver %d. Fix: rebuild it with "
             "bench/workloads/peers.sh", path, p->abi(), WL_PEER_ABI);
    goto fail;
  }
  char e[512];
  if (p->open(device, e, sizeof e)) {
    snprintf(why, why_size, "%s: device %u: %s", path, device, e);
    goto fail;
  }
  if (p->floor(&p->fl, e, sizeof e)) {
    snprintf(why, why_size, "%s: measuring the floor: %s", path, e);
    goto fail;
  }
  return p;
fail:
  /* dlclose of a library that started the CUDA runtime is not safe either */
  free(p);
  return NULL;
}

const wl_peer_floor *wl_peers_floor(const wl_peers *p) { return &p->fl; }

int wl_peers_run(wl_peers *p, const char *name, const wl_instance *w, uint32_t warm, uint32_t runs,
                 double *us, void *const *outputs, char *why, size_t why_size) {
  return p->run(name, w, warm, runs, us, outputs, why, why_size);
}

static void report_floor(const wl_peers *p, int json) {
  const wl_peer_floor *fl = &p->fl;
  if (json)
    printf("{\"peer\":\"cuda\",\"device\":\"%s\",\"launch_floor_us\":%.2f,"
           "\"memcpy_gbps\":%.1f,\"copy_kernel_gbps\":%.1f}\n", fl->device, fl->launch_p50_us,
           fl->memcpy_gbps, fl->copy_kernel_gbps);
  else
    printf("peer: CUDA on %s: launch + wait %.2f us; device copy %.0f GB/s (cudaMemcpy), "
           "%.0f GB/s (kernel)\n", fl->device, fl->launch_p50_us, fl->memcpy_gbps,
           fl->copy_kernel_gbps);
}

/* Why a library is not there: peers.sh's reason, left beside it in
 * libwlpeers.why, when there is one (then 1). */
static int missing(const char *so, char *why, size_t why_size) {
  char path[4096], text[512] = "";
  size_t n = strlen(so);
  if (n > 3 && n < sizeof path) {
    memcpy(path, so, n - 3);
    strcpy(path + n - 3, ".why");
    FILE *f = fopen(path, "r");
    if (f) {
      size_t got = fread(text, 1, sizeof text - 1, f);
      fclose(f);
      text[got] = 0;
      while (got && (text[got - 1] == '\n' || text[got - 1] == '\r')) text[--got] = 0;
    }
  }
  if (text[0])
    snprintf(why, why_size, "no %.900s: bench/workloads/peers.sh: %s", so, text);
  else
    snprintf(why, why_size, "no %.900s. Fix: build it with bench/workloads/peers.sh BUILD_DIR "
             "(needs nvcc), or pass --peer PATH", so);
  return text[0] != 0;
}

wl_peers *wl_peers_open(const char *arg, int given, int cpu, const char *backend, uint32_t device,
                        int json) {
  char path[4096], why[1024];
  const char *p = arg;
  wl_peers *peers = NULL;
  if (given && !strcmp(arg, "none")) {
    snprintf(why, sizeof why, "--peer none");
  } else if (!given && cpu) {
    snprintf(why, sizeof why, "backend %s runs on the CPU; --peer PATH runs the CUDA peers "
             "anyway", backend);
  } else if (!given && wl_peers_default_path(path, sizeof path)) {
    snprintf(why, sizeof why, "cannot name the directory of this program. Fix: pass --peer PATH");
  } else {
    if (!given) p = path;
    /* a named library that is missing: dlopen's own words, unless
     * peers.sh left its reason beside it */
    int absent = access(p, R_OK) != 0;
    if (!absent || (!missing(p, why, sizeof why) && given))
      peers = wl_peers_load(p, device, why, sizeof why);
  }
  if (peers) {
    report_floor(peers, json);
    return peers;
  }
  fprintf(stderr, "workloads: peer: skipped (%s)\n", why);
  if (json) {
    printf("{\"peer\":\"skipped\",\"reason\":\"");
    wl_json_text(why);
    printf("\"}\n");
  } else {
    printf("peer: skipped (%s)\n", why);
  }
  fflush(stdout);
  return NULL;
}

/* The bytes a workload must move: every input read once and every output
 * written once (bench/workloads/README.md, "Roofline"), except where less
 * is enough: compaction writes count + 4 bytes per kept record, and a
 * reach step reads only the frontier's edges of col. */
void wl_roofline_bytes(const char *name, const wl_instance *w, uint64_t *in, uint64_t *out) {
  *in = w->input_bytes;
  *out = 0;
  for (uint32_t i = 0; i < w->buf_count; i++)
    if (w->buf[i].is_output) *out += w->buf[i].size;
  if (!strcmp(name, "compaction") && w->expect[0]) {
    *out = 4 + 4ull * *(const uint32_t *)w->expect[0];
  } else if (!strcmp(name, "reach") && w->buf_count == 5) {
    const uint32_t *row = w->buf[0].data, *front = w->buf[2].data;
    uint64_t v = w->items, edges = 0;
    for (uint64_t u = 0; u < v; u++)
      if (front[u >> 5] >> (u & 31) & 1 && row[u + 1] > row[u]) edges += row[u + 1] - row[u];
    *in -= w->buf[1].size;
    *in += 4 * edges;
  }
}
