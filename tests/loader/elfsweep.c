/* elfsweep.c -- crafted-ELF sweep: copies of a real stub plugin with one dynamic entry or one program-header field changed, each opened by a host in this process; the host must never die (the probe child may). */
/*
 * Usage: elfsweep [--no-probe] [--all | --only N] [STUB]
 *   --no-probe  open the hosts with VYRE_HOST_NO_PROBE (to count what the
 *               probe saves: there the host is expected to die)
 *   STUB   the plugin copied (default: the good stub of the build tree,
 *          $VYRE_BUILD_DIR/tests/loader/stubs/.libs/libvyre-stub_good.so)
 *   --all  every variant; without it, every variant whose number is a
 *          multiple of a stride chosen to leave about 120 (make check).
 *   --only N  variant N alone (to study one).
 * Variants: for every entry of the dynamic section (DT_NULL included),
 * its value set to 0, 1, an address no segment maps, 2^32, 2^40, 2^62,
 * 2^64-1, value+8 and value/2, and its tag set to DT_NULL and to an
 * unknown tag; for every program header, each of p_type, p_flags,
 * p_offset, p_vaddr, p_paddr, p_filesz, p_memsz and p_align set to 0,
 * 2^64-1, 2^32, value+4096, 2*value and value-1.  A variant equal to the
 * original is left out.  Each is written to a file of its own (its own
 * identity: the probe verdict cache holds one entry each, in a temporary
 * VYRE_CACHE_DIR) and opened with vyre_host_open (the probe on) in a
 * child process of the sweep, which exits normally afterwards (so a
 * loaded variant's destructors run).  The
 * counts printed: refused by the file checks, refused in the probe
 * (crashed, hung or ended early), refused by dlopen or the plugin checks
 * after the probe, loaded.  Exit 0 when the process survived every one
 * (and its exit, which runs the loaded variant's destructors).
 */
#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "vyre/vyre_host.h"
#include "vyre/vyre_support.h"

#if UINTPTR_MAX > 0xffffffffu
typedef Elf64_Ehdr sweep_ehdr;
typedef Elf64_Phdr sweep_phdr;
typedef Elf64_Dyn sweep_dyn;
#else
#error "the sweep crafts 64-bit files"
#endif

#define FAR_AWAY 0x7ff00000u
#define BOUNDED_VARIANTS 120u

typedef struct sweep {
  const unsigned char *orig;
  size_t size;
  unsigned char *work;
  char dir[PATH_MAX];
  unsigned stride, number;
  long only; /* -1: all, or by stride */
  unsigned file_checks, probe, after_probe, loaded, other, died;
} sweep;

static int rm_one(const char *path, const struct stat *st, int flag, struct FTW *ftw) {
  (void)st, (void)flag, (void)ftw;
  return remove(path);
}

static unsigned char *slurp(const char *path, size_t *size) {
  FILE *f = fopen(path, "rb");
  if (!f) return NULL;
  fseek(f, 0, SEEK_END);
  long n = ftell(f);
  fseek(f, 0, SEEK_SET);
  unsigned char *data = n > 0 ? malloc((size_t)n) : NULL;
  if (data && fread(data, 1, (size_t)n, f) != (size_t)n) {
    free(data);
    data = NULL;
  }
  fclose(f);
  *size = (size_t)n;
  return data;
}

enum { KIND_FILE = 10, KIND_PROBE, KIND_AFTER, KIND_LOADED, KIND_OTHER };

/* In a child of the sweep: open a host on `path` and exit with what
 * became of the candidate (KIND_*), after printing it.  exit(), not
 * _exit: a loaded variant's destructors run, as at a host's exit. */
static uint32_t extra_flags; /* VYRE_HOST_NO_PROBE with --no-probe */

static void host_on(const char *path, unsigned n, const char *what) {
  vyre_host_options o = {.struct_size = sizeof o,
                         .flags = VYRE_HOST_NO_ENV | VYRE_HOST_NO_DEFAULT_DIRS | extra_flags,
                         .search_path = path};
  vyre_host *h = NULL;
  vyre_error err = VYRE_ERROR_INIT;
  if (vyre_host_open(&o, &h, &err) != VYRE_OK) {
    fprintf(stderr, "elfsweep: vyre_host_open: %s\n", err.message);
    exit(99);
  }
  vyre_host_candidate c = {.struct_size = sizeof c};
  vyre_host_backend_info(h, 0, &c, &err);
  int kind;
  if (c.status == VYRE_HOST_LOADED) kind = KIND_LOADED;
  else if (strstr(c.reason, "probe process")) kind = KIND_PROBE;
  else if (strstr(c.reason, "not a loadable plugin") || strstr(c.reason, "not a vyre plugin") ||
           strstr(c.reason, "bad plugin descriptor: the symbol") ||
           strstr(c.reason, "incomplete plugin: it exports no 'vyre_plugin_entry' function"))
    kind = KIND_FILE;
  else if (c.status == VYRE_HOST_SKIPPED) kind = KIND_AFTER;
  else kind = KIND_OTHER;
  static const char *const names[] = {"file", "probe", "after", "loaded", "other"};
  printf("%4u %-6s %-34s %s\n", n, names[kind - KIND_FILE], what, c.reason);
  fflush(stdout);
  vyre_host_close(h);
  exit(kind);
}

/* Write the variant in s->work, open a host on it in a child process (each
 * variant judged on its own, as a host meets one corrupt file among good
 * ones) and count what became of it; a child that died is the failure
 * this sweep looks for. */
static void try_variant(sweep *s, const char *what) {
  unsigned n = s->number++;
  if (memcmp(s->work, s->orig, s->size) == 0) {
    s->number--;
    return;
  }
  if (s->only >= 0 ? n != (unsigned long)s->only : n % s->stride != 0) return;
  char path[PATH_MAX + 64];
  snprintf(path, sizeof path, "%s/libvyre-sweep%04u.so", s->dir, n);
  int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
  if (fd < 0 || write(fd, s->work, s->size) != (ssize_t)s->size || close(fd) != 0) {
    fprintf(stderr, "elfsweep: cannot write %s: %s\n", path, strerror(errno));
    exit(99);
  }
  fflush(stdout);
  pid_t pid = fork();
  if (pid < 0) exit(99);
  if (pid == 0) host_on(path, n, what);
  int status;
  while (waitpid(pid, &status, 0) < 0)
    if (errno != EINTR) exit(99);
  int kind = WIFEXITED(status) ? WEXITSTATUS(status) : 0;
  switch (kind) {
  case KIND_FILE: s->file_checks++; break;
  case KIND_PROBE: s->probe++; break;
  case KIND_AFTER: s->after_probe++; break;
  case KIND_LOADED: s->loaded++; break;
  case KIND_OTHER: s->other++; break;
  default:
    s->died++;
    printf("%4u DIED   %-34s the host process %s %d\n", n, what,
           WIFSIGNALED(status) ? "was killed by signal" : "exited with status",
           WIFSIGNALED(status) ? WTERMSIG(status) : WEXITSTATUS(status));
  }
  unlink(path);
}

static const uint64_t value_set[] = {0, 1, FAR_AWAY, 1ull << 32, 1ull << 40, 1ull << 62, UINT64_MAX};

static void sweep_dynamic(sweep *s, const sweep_phdr *dynamic) {
  size_t count = dynamic->p_filesz / sizeof(sweep_dyn);
  for (size_t k = 0; k < count; k++) {
    size_t at = dynamic->p_offset + k * sizeof(sweep_dyn);
    sweep_dyn orig;
    memcpy(&orig, s->orig + at, sizeof orig);
    char what[64];
    uint64_t values[9];
    memcpy(values, value_set, sizeof value_set);
    values[7] = orig.d_un.d_val + 8;
    values[8] = orig.d_un.d_val / 2;
    for (size_t v = 0; v < 9; v++) {
      sweep_dyn d = orig;
      d.d_un.d_val = values[v];
      memcpy(s->work + at, &d, sizeof d);
      snprintf(what, sizeof what, "dyn[%zu] tag 0x%llx val=#%zu", k, (unsigned long long)orig.d_tag, v);
      try_variant(s, what);
    }
    int64_t tags[2] = {DT_NULL, 0x6fff0123};
    for (size_t t = 0; t < 2; t++) {
      sweep_dyn d = orig;
      d.d_tag = tags[t];
      memcpy(s->work + at, &d, sizeof d);
      snprintf(what, sizeof what, "dyn[%zu] tag 0x%llx tag=#%zu", k, (unsigned long long)orig.d_tag, t);
      try_variant(s, what);
    }
    memcpy(s->work + at, &orig, sizeof orig);
    if (orig.d_tag == DT_NULL) break;
  }
}

static const char *const phdr_fields[] = {"p_type", "p_flags", "p_offset", "p_vaddr",
                                          "p_paddr", "p_filesz", "p_memsz", "p_align"};

/* Field f of a program header: its offset and size in the struct. */
static void phdr_field(unsigned f, size_t *off, size_t *size) {
  static const size_t offs[] = {offsetof(sweep_phdr, p_type), offsetof(sweep_phdr, p_flags),
                                offsetof(sweep_phdr, p_offset), offsetof(sweep_phdr, p_vaddr),
                                offsetof(sweep_phdr, p_paddr), offsetof(sweep_phdr, p_filesz),
                                offsetof(sweep_phdr, p_memsz), offsetof(sweep_phdr, p_align)};
  *off = offs[f];
  *size = f < 2 ? 4 : 8;
}

static void sweep_phdrs(sweep *s, const sweep_ehdr *eh) {
  for (unsigned i = 0; i < eh->e_phnum; i++) {
    size_t base = eh->e_phoff + (size_t)i * eh->e_phentsize;
    for (unsigned f = 0; f < 8; f++) {
      size_t off, size;
      phdr_field(f, &off, &size);
      uint64_t orig = 0;
      memcpy(&orig, s->orig + base + off, size);
      uint64_t values[6] = {0, UINT64_MAX, 1ull << 32, orig + 4096, orig * 2, orig - 1};
      for (unsigned v = 0; v < 6; v++) {
        memcpy(s->work + base + off, &values[v], size);
        char what[64];
        snprintf(what, sizeof what, "phdr[%u].%s=#%u", i, phdr_fields[f], v);
        try_variant(s, what);
      }
      memcpy(s->work + base + off, s->orig + base + off, size);
    }
  }
}

/* Walk every variant once without opening any, to count them. */
static unsigned count_variants(sweep *s, const sweep_ehdr *eh, const sweep_phdr *dynamic) {
  unsigned stride = s->stride;
  s->stride = UINT32_MAX; /* only variant 0 would be opened: skip it too */
  s->number = 1;
  sweep_dynamic(s, dynamic);
  sweep_phdrs(s, eh);
  unsigned total = s->number - 1;
  s->stride = stride;
  s->number = 0;
  return total;
}

int main(int argc, char **argv) {
  if (argc > 1 && strcmp(argv[1], "--no-probe") == 0) {
    extra_flags = VYRE_HOST_NO_PROBE;
    argv++, argc--;
  }
  int all = argc > 1 && strcmp(argv[1], "--all") == 0;
  long only = argc > 2 && strcmp(argv[1], "--only") == 0 ? strtol(argv[2], NULL, 10) : -1;
  int skip = all ? 1 : only >= 0 ? 2 : 0;
  const char *stub = argc > 1 + skip ? argv[1 + skip] : NULL;
  char stub_path[PATH_MAX];
  if (!stub) {
    const char *build = getenv("VYRE_BUILD_DIR");
    snprintf(stub_path, sizeof stub_path, "%s/tests/loader/stubs/.libs/libvyre-stub_good.so",
             build && *build ? build : ".");
    stub = stub_path;
  }
  sweep s;
  memset(&s, 0, sizeof s);
  s.only = -1;
  s.orig = slurp(stub, &s.size);
  if (!s.orig || s.size < sizeof(sweep_ehdr) || memcmp(s.orig, ELFMAG, SELFMAG) != 0) {
    fprintf(stderr, "elfsweep: %s is not an ELF file to copy\n", stub);
    return 99;
  }
  s.work = malloc(s.size);
  memcpy(s.work, s.orig, s.size);
  const sweep_ehdr *eh = (const sweep_ehdr *)s.orig;
  const sweep_phdr *dynamic = NULL;
  for (unsigned i = 0; i < eh->e_phnum; i++) {
    const sweep_phdr *p = (const sweep_phdr *)(s.orig + eh->e_phoff + (size_t)i * eh->e_phentsize);
    if (p->p_type == PT_DYNAMIC) dynamic = p;
  }
  if (!dynamic) {
    fprintf(stderr, "elfsweep: %s has no PT_DYNAMIC\n", stub);
    return 99;
  }
  const char *base = getenv("TMPDIR");
  snprintf(s.dir, sizeof s.dir, "%s/vyre-elfsweep-XXXXXX", base && *base ? base : "/tmp");
  if (!mkdtemp(s.dir)) return 99;
  setenv("VYRE_CACHE_DIR", s.dir, 1);
  unsigned total = count_variants(&s, eh, dynamic);
  s.stride = all || total <= BOUNDED_VARIANTS ? 1 : total / BOUNDED_VARIANTS;
  s.only = only;
  printf("elfsweep: %s: %u variants, opening every %u%s\n", stub, total, s.stride,
         s.stride == 1 ? "" : (s.stride == 2 ? "nd" : (s.stride == 3 ? "rd" : "th")));
  sweep_dynamic(&s, dynamic);
  sweep_phdrs(&s, eh);
  unsigned opened = s.file_checks + s.probe + s.after_probe + s.loaded + s.other + s.died;
  printf("elfsweep: %u opened: %u refused by the file checks, %u refused in the probe (crashed, "
         "hung or ended early), %u refused after the probe (dlopen or the plugin checks), %u "
         "loaded, %u other; the host died on %u\n",
         opened, s.file_checks, s.probe, s.after_probe, s.loaded, s.other, s.died);
  nftw(s.dir, rm_one, 16, FTW_DEPTH | FTW_PHYS);
  free(s.work);
  free((void *)s.orig);
  if (s.died) return 1;
  return only >= 0 || opened >= (total < 100 ? total : 100u) ? 0 : 1;
}
