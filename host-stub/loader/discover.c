/* discover.c -- libvyre-host: the search path and the candidate table it fills (docs/host.md, "Discovery"). */
#include "config.h"

#include <dirent.h>
#include <dlfcn.h>
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "internal.h"
#include "abi/support/sized.h"
#include "vyre/vyre_support.h"

#ifndef VYRE_PLUGINDIR
#error "VYRE_PLUGINDIR must name the installed plugin directory: config-paths.h defines it (make writes it at the top of the build tree; host-stub/loader/local.mk passes -include config-paths.h)"
#endif
/* The plugins `make` builds, relative to the top of a build tree. */
#ifndef VYRE_BUILD_PLUGINS
#define VYRE_BUILD_PLUGINS "host-stub/ref/.libs/libvyre-ref.so:plugin/runtime/.libs/libvyre-cuda.so"
#endif
/* Where libtool puts the uninstalled host library, relative to the top. */
#define HOST_BUILD_LIBDIR "/host-stub/loader/.libs"

/* ------------------------------------------------------------------ */
/* Candidate table                                                     */
/* ------------------------------------------------------------------ */

static host_entry *entry_new(vyre_host *host, const char *path, uint32_t origin) {
  if (host->count == host->capacity) {
    uint32_t cap = host->capacity ? host->capacity * 2 : 8;
    host_entry *grown = realloc(host->entries, cap * sizeof *grown);
    if (!grown) return NULL;
    host->entries = grown;
    host->capacity = cap;
  }
  host_entry *e = &host->entries[host->count];
  memset(e, 0, sizeof *e);
  e->path = strdup(path);
  if (!e->path) return NULL;
  e->origin = origin;
  e->status = VYRE_HOST_SKIPPED;
  host->count++;
  return e;
}

/* 1 when `real` names a file an earlier candidate already is. */
static int already_listed(const vyre_host *host, const char *real) {
  for (uint32_t i = 0; i < host->count; i++)
    if (host->entries[i].real && strcmp(host->entries[i].real, real) == 0) return 1;
  return 0;
}

/*
 * Add one file.  `quiet_missing`: a file that does not exist is not
 * listed (build-tree plugins that were not built).  Returns -1 only when
 * out of memory.
 */
static int add_file(vyre_host *host, const char *path, uint32_t origin, int quiet_missing) {
  struct stat st;
  int stat_errno = 0;
  if (stat(path, &st) != 0) {
    stat_errno = errno;
    if (quiet_missing) return 0;
  }
  char *real = stat_errno ? NULL : realpath(path, NULL);
  if (real && already_listed(host, real)) {
    host_log("%s: the same file as an earlier candidate, not listed twice", path);
    free(real);
    return 0;
  }
  host_entry *e = entry_new(host, path, origin);
  if (!e) {
    free(real);
    return -1;
  }
  e->real = real;
  if (stat_errno) {
    host_entry_reason(e, "cannot read %s: %s. Fix: correct the path in %s", path,
                      strerror(stat_errno), vyre_host_origin_name(origin));
    e->status = VYRE_HOST_SKIPPED;
  } else if (!S_ISREG(st.st_mode)) {
    /* dlopen would block on a FIFO and fail on a device: never try. */
    host_entry_reason(e, "not a regular file: %s. Fix: list plugin files or directories of them",
                      path);
    e->status = VYRE_HOST_SKIPPED;
  } else {
    e->status = VYRE_HOST_LOADED; /* pending: host_load_entry runs later */
  }
  return 0;
}

/* The names a directory offers as backends: libvyre-<something>.so.
 * Nothing else in a searched directory is ever opened (dlopen runs a
 * library's constructors, and it stays mapped for good). */
#define BACKEND_PREFIX "libvyre-"
static int name_is_backend(const char *name) {
  size_t n = strlen(name), p = sizeof BACKEND_PREFIX - 1;
  return n > p + 3 && strncmp(name, BACKEND_PREFIX, p) == 0 && strcmp(name + n - 3, ".so") == 0;
}

static int compare_names(const void *a, const void *b) {
  return strcmp(*(char *const *)a, *(char *const *)b);
}

/* Add a directory's libvyre-*.so files in byte-wise sorted order, so
 * the result does not depend on the file system or the locale. */
static int add_directory(vyre_host *host, const char *dir, uint32_t origin) {
  DIR *d = opendir(dir);
  if (!d) {
    host_entry *e = entry_new(host, dir, origin);
    if (!e) return -1;
    host_entry_reason(e, "cannot read directory %s: %s. Fix: correct the path in %s", dir,
                      strerror(errno), vyre_host_origin_name(origin));
    return 0;
  }
  char **names = NULL;
  size_t count = 0, cap = 0;
  int rc = 0;
  struct dirent *de;
  while ((de = readdir(d)) != NULL) {
    if (!name_is_backend(de->d_name)) continue;
    if (count == cap) {
      size_t ncap = cap ? cap * 2 : 16;
      char **grown = realloc(names, ncap * sizeof *grown);
      if (!grown) {
        rc = -1;
        goto done;
      }
      names = grown;
      cap = ncap;
    }
    names[count] = strdup(de->d_name);
    if (!names[count]) {
      rc = -1;
      goto done;
    }
    count++;
  }
  if (count) qsort(names, count, sizeof *names, compare_names);
  for (size_t i = 0; i < count && rc == 0; i++) {
    size_t len = strlen(dir) + 1 + strlen(names[i]) + 1;
    char *path = malloc(len);
    if (!path) {
      rc = -1;
      break;
    }
    snprintf(path, len, "%s/%s", dir, names[i]);
    rc = add_file(host, path, origin, 0);
    free(path);
  }
done:
  for (size_t i = 0; i < count; i++) free(names[i]);
  free(names);
  closedir(d);
  return rc;
}

/* A colon-separated list of files and directories; empty items ignored. */
static int add_path_list(vyre_host *host, const char *list, uint32_t origin) {
  char *copy = strdup(list);
  if (!copy) return -1;
  int rc = 0;
  char *save = NULL;
  for (char *item = strtok_r(copy, ":", &save); item && rc == 0;
       item = strtok_r(NULL, ":", &save)) {
    struct stat st;
    if (stat(item, &st) == 0 && S_ISDIR(st.st_mode)) rc = add_directory(host, item, origin);
    else rc = add_file(host, item, origin, 0);
  }
  free(copy);
  return rc;
}

/* The top of the build tree this library runs from, or NULL: libtool
 * keeps the uninstalled library in <top>/host-stub/loader/.libs/. */
char *host_build_tree(void) {
  Dl_info info;
  union {
    int (*fn)(vyre_host *, const vyre_host_options *);
    void *data;
  } self = {.fn = host_collect_candidates}; /* any function of this library */
  if (!dladdr(self.data, &info) || !info.dli_fname) return NULL;
  char *real = realpath(info.dli_fname, NULL);
  if (!real) return NULL;
  char *slash = strrchr(real, '/');
  size_t suffix = strlen(HOST_BUILD_LIBDIR);
  if (slash && (size_t)(slash - real) > suffix &&
      strncmp(slash - suffix, HOST_BUILD_LIBDIR, suffix) == 0) {
    slash[-(ptrdiff_t)suffix] = '\0';
    return real;
  }
  free(real);
  return NULL;
}

static int add_build_tree(vyre_host *host, const char *top) {
  char *list = strdup(VYRE_BUILD_PLUGINS);
  if (!list) return -1;
  int rc = 0;
  char *save = NULL;
  for (char *rel = strtok_r(list, ":", &save); rel && rc == 0; rel = strtok_r(NULL, ":", &save)) {
    size_t len = strlen(top) + 1 + strlen(rel) + 1;
    char *path = malloc(len);
    if (!path) {
      rc = -1;
      break;
    }
    snprintf(path, len, "%s/%s", top, rel);
    rc = add_file(host, path, VYRE_HOST_FROM_BUILD, 1);
    free(path);
  }
  free(list);
  return rc;
}

int host_collect_candidates(vyre_host *host, const vyre_host_options *opt) {
  int use_env = !(opt->flags & VYRE_HOST_NO_ENV);
  if (opt->search_path && add_path_list(host, opt->search_path, VYRE_HOST_FROM_OPTIONS) != 0)
    return -1;
  const char *env = use_env ? vyre__env(VYRE__ENV_BACKEND_PATH) : NULL;
  if (env && add_path_list(host, env, VYRE_HOST_FROM_ENV) != 0) return -1;
  if (opt->flags & VYRE_HOST_NO_DEFAULT_DIRS) return 0;

  /* The build tree comes before the installed directory: when both hold a
   * plugin, `make check` and ./host-stub/cli/vyre must test what was just built. */
  const char *build_env = use_env ? vyre__env(VYRE__ENV_BUILD_DIR) : NULL;
  if (build_env && *build_env) {
    if (add_build_tree(host, build_env) != 0) return -1;
  } else {
    char *top = host_build_tree();
    if (top) {
      host_log("running from the build tree %s", top);
      int rc = add_build_tree(host, top);
      free(top);
      if (rc != 0) return -1;
    }
  }
  struct stat st;
  if (stat(VYRE_PLUGINDIR, &st) == 0 && S_ISDIR(st.st_mode))
    return add_directory(host, VYRE_PLUGINDIR, VYRE_HOST_FROM_PLUGINDIR);
  host_log("plugin dir %s does not exist", VYRE_PLUGINDIR);
  return 0;
}
