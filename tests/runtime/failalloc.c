/* failalloc.c -- host allocation failures for tests: the process's malloc, calloc and realloc, the n-th of them failing on request (failalloc.h). */
#include "failalloc.h"

#include <dlfcn.h>
#include <errno.h>
#include <pthread.h>
#include <link.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

/* glibc's allocator under its own names (what it offers replacements). */
extern void *__libc_malloc(size_t size);
extern void *__libc_calloc(size_t n, size_t size);
extern void *__libc_realloc(void *p, size_t size);
extern void __libc_free(void *p);

static atomic_int armed;
static atomic_ulong counted, fail_at;
static atomic_int fired;
#define MAX_SKIP 4
static uintptr_t skip_lo[MAX_SKIP], skip_hi[MAX_SKIP]; /* excluded objects' mapped ranges */
static unsigned n_skip;
static uintptr_t track_lo, track_hi; /* the tracked object's mapped range */

/* Blocks the tracked object allocated and has not freed: an open-address
 * set of addresses (0 empty, 1 a deleted slot). */
#define TRACK_SLOTS 65536u
static uintptr_t tracked[TRACK_SLOTS];
static unsigned long n_tracked, track_overflow;
static pthread_mutex_t track_lock = PTHREAD_MUTEX_INITIALIZER;

static unsigned slot_of(uintptr_t p) { return (unsigned)((p >> 4) * 2654435761u) % TRACK_SLOTS; }

static void track_add(uintptr_t p) {
  pthread_mutex_lock(&track_lock);
  unsigned s = slot_of(p);
  for (unsigned k = 0; k < TRACK_SLOTS; k++, s = (s + 1) % TRACK_SLOTS)
    if (tracked[s] <= 1) {
      tracked[s] = p;
      n_tracked++;
      pthread_mutex_unlock(&track_lock);
      return;
    }
  track_overflow++;
  pthread_mutex_unlock(&track_lock);
}

static void track_remove(uintptr_t p) {
  pthread_mutex_lock(&track_lock);
  if (n_tracked) {
    unsigned s = slot_of(p);
    for (unsigned k = 0; k < TRACK_SLOTS && tracked[s]; k++, s = (s + 1) % TRACK_SLOTS)
      if (tracked[s] == p) {
        tracked[s] = 1;
        n_tracked--;
        break;
      }
  }
  pthread_mutex_unlock(&track_lock);
}

static int tracking(const void *caller) {
  uintptr_t c = (uintptr_t)caller;
  return atomic_load_explicit(&armed, memory_order_relaxed) && c >= track_lo && c < track_hi;
}

/* Count this call; 1 when it is the one that fails. */
static int fail_now(const void *caller) {
  if (!atomic_load_explicit(&armed, memory_order_relaxed)) return 0;
  uintptr_t c = (uintptr_t)caller;
  for (unsigned i = 0; i < n_skip; i++)
    if (c >= skip_lo[i] && c < skip_hi[i]) return 0;
  unsigned long n = atomic_fetch_add(&counted, 1) + 1;
  if (n == atomic_load(&fail_at)) {
    atomic_store(&fired, 1);
    errno = ENOMEM;
    return 1;
  }
  return 0;
}

/* Exported (the tree builds with hidden visibility) so that every object
 * of the process binds to these. */
#define EXPORT __attribute__((visibility("default")))

EXPORT void *malloc(size_t size) {
  const void *caller = __builtin_return_address(0);
  if (fail_now(caller)) return NULL;
  void *p = __libc_malloc(size);
  if (p && tracking(caller)) track_add((uintptr_t)p);
  return p;
}

EXPORT void *calloc(size_t n, size_t size) {
  const void *caller = __builtin_return_address(0);
  if (fail_now(caller)) return NULL;
  void *p = __libc_calloc(n, size);
  if (p && tracking(caller)) track_add((uintptr_t)p);
  return p;
}

EXPORT void *realloc(void *p, size_t size) {
  const void *caller = __builtin_return_address(0);
  /* A shrink to nothing frees; it cannot fail. */
  if (!(p && size == 0) && fail_now(caller)) return NULL;
  void *q = __libc_realloc(p, size);
  if (q || size == 0) {
    if (p) track_remove((uintptr_t)p);
    if (q && tracking(caller)) track_add((uintptr_t)q);
  }
  return q;
}

EXPORT void free(void *p) {
  if (p) track_remove((uintptr_t)p);
  __libc_free(p);
}

/* A mutex may need memory too (POSIX lets pthread_mutex_init fail with
 * ENOMEM or EAGAIN): counted with the allocations, so every module init
 * that makes a lock has its failure path run. */
EXPORT int pthread_mutex_init(pthread_mutex_t *m, const pthread_mutexattr_t *attr) {
  static int (*real)(pthread_mutex_t *, const pthread_mutexattr_t *);
  if (fail_now(__builtin_return_address(0))) return ENOMEM;
  if (!real) *(void **)&real = dlsym(RTLD_NEXT, "pthread_mutex_init");
  return real(m, attr);
}

int failalloc_active(void) {
  void *(*volatile m)(size_t) = malloc;
  unsigned long before = atomic_load(&counted);
  atomic_store(&fail_at, 0);
  atomic_store(&armed, 1);
  void *p = m(16);
  atomic_store(&armed, 0);
  unsigned long after = atomic_load(&counted);
  atomic_store(&counted, before);
  free(p);
  return after == before + 1;
}

typedef struct find {
  uintptr_t addr, lo, hi;
  int found;
} find;

static int find_object(struct dl_phdr_info *info, size_t size, void *data) {
  (void)size;
  find *f = data;
  uintptr_t lo = UINTPTR_MAX, hi = 0;
  for (int i = 0; i < info->dlpi_phnum; i++) {
    const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
    if (ph->p_type != PT_LOAD) continue;
    uintptr_t b = info->dlpi_addr + ph->p_vaddr, e = b + ph->p_memsz;
    if (b < lo) lo = b;
    if (e > hi) hi = e;
  }
  if (f->addr >= lo && f->addr < hi) {
    f->lo = lo;
    f->hi = hi;
    f->found = 1;
    return 1;
  }
  return 0;
}

static int range_of(const void *addr, uintptr_t *lo, uintptr_t *hi) {
  *lo = *hi = 0;
  if (!addr) return 0;
  find f = {(uintptr_t)addr, 0, 0, 0};
  dl_iterate_phdr(find_object, &f);
  if (!f.found) return -1;
  *lo = f.lo;
  *hi = f.hi;
  return 0;
}

int failalloc_exclude(const void *addr) {
  if (!addr) {
    n_skip = 0;
    return 0;
  }
  if (n_skip == MAX_SKIP || range_of(addr, &skip_lo[n_skip], &skip_hi[n_skip]) != 0) return -1;
  n_skip++;
  return 0;
}

int failalloc_track(const void *addr) { return range_of(addr, &track_lo, &track_hi); }

unsigned long failalloc_live(void) {
  pthread_mutex_lock(&track_lock);
  unsigned long n = n_tracked + track_overflow;
  pthread_mutex_unlock(&track_lock);
  return n;
}

void failalloc_arm(unsigned long nth) {
  pthread_mutex_lock(&track_lock);
  memset(tracked, 0, sizeof tracked);
  n_tracked = track_overflow = 0;
  pthread_mutex_unlock(&track_lock);
  atomic_store(&counted, 0);
  atomic_store(&fired, 0);
  atomic_store(&fail_at, nth);
  atomic_store(&armed, 1);
}

unsigned long failalloc_disarm(void) {
  atomic_store(&armed, 0);
  return atomic_load(&counted);
}

int failalloc_fired(void) { return atomic_load(&fired); }
