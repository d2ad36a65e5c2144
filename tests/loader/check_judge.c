/* check_judge.c -- libvyre-host judges a plugin from its file before running any of its code: hostile descriptors, crafted dynamic sections, VYRE_HOST_NO_LOAD. */
#include <check.h>
#include <dlfcn.h>
#include <elf.h>
#include <errno.h>
#include <ftw.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "stubs/stub_plugin.h"
#include "vyre/vyre_host.h"
#include "vyre/vyre_support.h"

/* The crafted files are this process's class (the host refuses others). */
#if UINTPTR_MAX > 0xffffffffu
typedef Elf64_Ehdr judge_ehdr;
typedef Elf64_Phdr judge_phdr;
typedef Elf64_Shdr judge_shdr;
typedef Elf64_Sym judge_sym;
typedef Elf64_Dyn judge_dyn;
#else
typedef Elf32_Ehdr judge_ehdr;
typedef Elf32_Phdr judge_phdr;
typedef Elf32_Shdr judge_shdr;
typedef Elf32_Sym judge_sym;
typedef Elf32_Dyn judge_dyn;
#endif

/* An address no segment of a stub plugin comes near. */
#define FAR_AWAY 0x7ff00000u

#define FORMAT(buf, size, ...) \
  ck_assert_msg(snprintf((buf), (size), __VA_ARGS__) < (int)(size), "string too long for its buffer")

/* ------------------------------------------------------------------ */
/* Fixtures and helpers                                                */
/* ------------------------------------------------------------------ */

static char stub_dir[PATH_MAX];
static char tmp_dir[PATH_MAX];

static int rm_one(const char *path, const struct stat *st, int flag, struct FTW *ftw) {
  return remove(path);
}

static void setup_tmp(void) {
  const char *build = getenv("VYRE_BUILD_DIR");
  if (build && *build) FORMAT(stub_dir, sizeof stub_dir, "%s/tests/loader/stubs/.libs", build);
  else FORMAT(stub_dir, sizeof stub_dir, "%s", VYRE_STUB_DIR);
  const char *base = getenv("TMPDIR");
  FORMAT(tmp_dir, sizeof tmp_dir, "%s/vyre-judge-XXXXXX", base && *base ? base : "/tmp");
  ck_assert_msg(mkdtemp(tmp_dir) != NULL, "mkdtemp %s failed: %s", tmp_dir, strerror(errno));
  unsetenv("VYRE_BACKEND");
  unsetenv("VYRE_BACKEND_PATH");
  unsetenv("VYRE_BUILD_DIR");
}

static void teardown_tmp(void) {
  if (tmp_dir[0]) nftw(tmp_dir, rm_one, 16, FTW_DEPTH | FTW_PHYS);
  tmp_dir[0] = '\0';
}

/* A path in static storage rotated over 8 slots. */
static char *slot(void) {
  static char slots[8][PATH_MAX];
  static int next;
  return slots[next++ % 8];
}

/* libjudge_NAME.so, a stub the directory scans never pick up. */
static const char *judge(const char *name) {
  char *p = slot();
  FORMAT(p, PATH_MAX, "%s/libjudge_%s.so", stub_dir, name);
  return p;
}

static const char *stub(const char *variant) {
  char *p = slot();
  FORMAT(p, PATH_MAX, "%s/libvyre-stub_%s.so", stub_dir, variant);
  return p;
}

static const char *tmp(const char *name) {
  char *p = slot();
  FORMAT(p, PATH_MAX, "%s/%s", tmp_dir, name);
  return p;
}

static int exists(const char *path) {
  struct stat st;
  return stat(path, &st) == 0;
}

/* 1 when the file at `path` is mapped in this process (its code may
 * have run). */
static int is_loaded(const char *path) {
  void *h = dlopen(path, RTLD_NOW | RTLD_NOLOAD);
  if (h) dlclose(h);
  return h != NULL;
}

static unsigned char *slurp(const char *path, size_t *size) {
  FILE *f = fopen(path, "rb");
  ck_assert_msg(f != NULL, "cannot open %s: %s", path, strerror(errno));
  ck_assert(fseek(f, 0, SEEK_END) == 0);
  long n = ftell(f);
  ck_assert(n > 0 && fseek(f, 0, SEEK_SET) == 0);
  unsigned char *data = malloc((size_t)n);
  ck_assert(data != NULL);
  ck_assert_msg(fread(data, 1, (size_t)n, f) == (size_t)n, "short read of %s", path);
  fclose(f);
  *size = (size_t)n;
  return data;
}

static void write_file(const char *path, const void *data, size_t size) {
  FILE *f = fopen(path, "wb");
  ck_assert_msg(f != NULL, "cannot create %s", path);
  ck_assert_msg(fwrite(data, 1, size, f) == size, "short write to %s", path);
  fclose(f);
}

static vyre_host *open_flags(const char *path, uint32_t flags) {
  vyre_host_options opt = {sizeof opt, VYRE_HOST_NO_ENV | VYRE_HOST_NO_DEFAULT_DIRS | flags, path,
                           NULL};
  vyre_host *host = NULL;
  vyre_error err = VYRE_ERROR_INIT;
  vyre_status st = vyre_host_open(&opt, &host, &err);
  ck_assert_msg(st == VYRE_OK && host, "vyre_host_open(%s, flags 0x%x) should succeed, got %s: %s",
                path, flags, vyre_status_name(st), err.message);
  return host;
}

static vyre_host_candidate info_at(vyre_host *host, uint32_t i) {
  vyre_host_candidate info;
  memset(&info, 0, sizeof info);
  info.struct_size = sizeof info;
  vyre_error err = VYRE_ERROR_INIT;
  ck_assert_msg(vyre_host_backend_info(host, i, &info, &err) == VYRE_OK,
                "backend_info(%u) should succeed: %s", i, err.message);
  return info;
}

/* Open a host on the one file `path` (plain, or judge-only) and check it
 * is skipped with `reason` and was never mapped. */
static void expect_refused(const char *path, uint32_t flags, const char *reason) {
  vyre_host *host = open_flags(path, flags);
  ck_assert_int_eq(vyre_host_backend_count(host), 1);
  vyre_host_candidate c = info_at(host, 0);
  ck_assert_msg(c.status == VYRE_HOST_SKIPPED && strstr(c.reason, reason) &&
                    strstr(c.reason, "Fix:") && !strchr(c.reason, '\n'),
                "%s: should be skipped with \"%s\" and a Fix, got %s \"%s\"", path, reason,
                vyre_host_status_name(c.status), c.reason);
  ck_assert_msg(!is_loaded(path), "%s: refused from its file, so never dlopened: none of its "
                "code may run", path);
  vyre_host_close(host);
}

/* ------------------------------------------------------------------ */
/* ELF surgery on a copy of a stub                                     */
/* ------------------------------------------------------------------ */

typedef struct elf_copy {
  unsigned char *data;
  size_t size;
  judge_ehdr *eh;
} elf_copy;

static elf_copy elf_load(const char *path) {
  elf_copy c;
  c.data = slurp(path, &c.size);
  ck_assert(c.size > sizeof(judge_ehdr) && memcmp(c.data, ELFMAG, SELFMAG) == 0);
  c.eh = (judge_ehdr *)c.data;
  return c;
}

static judge_phdr *elf_phdr(elf_copy *c, uint32_t i) {
  return (judge_phdr *)(c->data + c->eh->e_phoff + (size_t)i * c->eh->e_phentsize);
}

static judge_phdr *elf_segment(elf_copy *c, uint32_t type, int last) {
  judge_phdr *found = NULL;
  for (uint32_t i = 0; i < c->eh->e_phnum; i++)
    if (elf_phdr(c, i)->p_type == type && (!found || last)) found = elf_phdr(c, i);
  ck_assert_msg(found != NULL, "the stub has a segment of type %u", type);
  return found;
}

/* The dynamic entry with this tag (first), or NULL. */
static judge_dyn *elf_dyn(elf_copy *c, int64_t tag) {
  judge_phdr *d = elf_segment(c, PT_DYNAMIC, 0);
  judge_dyn *dyn = (judge_dyn *)(c->data + d->p_offset);
  for (size_t k = 0; k < d->p_filesz / sizeof *dyn && dyn[k].d_tag != DT_NULL; k++)
    if (dyn[k].d_tag == tag) return &dyn[k];
  return NULL;
}

/* The .dynsym entry of `name` (through the section headers: the test
 * finds it independently of the host's reader). */
static judge_sym *elf_dynsym(elf_copy *c, const char *name) {
  judge_shdr *sh = (judge_shdr *)(c->data + c->eh->e_shoff);
  for (uint32_t i = 0; i < c->eh->e_shnum; i++) {
    if (sh[i].sh_type != SHT_DYNSYM) continue;
    const char *strs = (const char *)c->data + sh[sh[i].sh_link].sh_offset;
    judge_sym *syms = (judge_sym *)(c->data + sh[i].sh_offset);
    for (size_t k = 0; k < sh[i].sh_size / sizeof *syms; k++)
      if (strcmp(strs + syms[k].st_name, name) == 0) return &syms[k];
  }
  ck_abort_msg("the stub has no dynamic symbol %s", name);
  return NULL;
}

static const char *elf_save(elf_copy *c, const char *name) {
  const char *path = tmp(name);
  write_file(path, c->data, c->size);
  free(c->data);
  c->data = NULL;
  return path;
}

/* ------------------------------------------------------------------ */
/* descriptor: what the file's symbol is                               */
/* ------------------------------------------------------------------ */

/* An 8-byte descriptor object (struct_size 88, magic) used to be read
 * 88 bytes long: whatever followed it was taken for the descriptor, and
 * at the end of a mapped page the host died of SIGSEGV. */
START_TEST(test_tiny_descriptor) {
  expect_refused(judge("tiny"), 0,
                 "bad plugin descriptor: the symbol 'vyre_plugin_descriptor' is 8 bytes, the host "
                 "needs at least 24");
}
END_TEST

/* The same 8-byte object moved to the last 8 bytes of the last page the
 * plugin maps: nothing may be read from the mapping at all. */
START_TEST(test_tiny_descriptor_at_page_end) {
  elf_copy c = elf_load(judge("tiny"));
  judge_phdr *last = elf_segment(&c, PT_LOAD, 1);
  uint64_t page = (uint64_t)sysconf(_SC_PAGESIZE);
  uint64_t end = (last->p_vaddr + last->p_memsz + page - 1) / page * page;
  judge_sym *s = elf_dynsym(&c, "vyre_plugin_descriptor");
  ck_assert_int_eq(s->st_size, 8);
  s->st_value = end - 8;
  expect_refused(elf_save(&c, "libvyre-tail.so"), 0,
                 "the symbol 'vyre_plugin_descriptor' is 8 bytes, the host needs at least 24");
}
END_TEST

/* A function named vyre_plugin_descriptor used to be read as data
 * ("magic 0x000000b8"). */
START_TEST(test_function_descriptor) {
  expect_refused(judge("funcdesc"), 0,
                 "bad plugin descriptor: 'vyre_plugin_descriptor' is a function, not a data "
                 "object");
  expect_refused(judge("funcdesc"), VYRE_HOST_NO_LOAD, "is a function, not a data object");
}
END_TEST

/* The descriptor lies in .bss (st_size 88, no file bytes): refused. */
START_TEST(test_descriptor_without_file_bytes) {
  elf_copy c = elf_load(stub("good"));
  judge_phdr *last = elf_segment(&c, PT_LOAD, 1);
  ck_assert_msg(last->p_memsz > last->p_filesz + 88, "the stub has a .bss (stub_calls)");
  judge_sym *s = elf_dynsym(&c, "vyre_plugin_descriptor");
  s->st_value = last->p_vaddr + last->p_memsz - 88;
  expect_refused(elf_save(&c, "libvyre-bss.so"), 0,
                 "are not file contents a PT_LOAD segment maps (a zero-filled .bss object");
}
END_TEST

/* ------------------------------------------------------------------ */
/* no code runs: constructors of refused and listed plugins            */
/* ------------------------------------------------------------------ */

/* A major-2 plugin used to be dlopened (its constructors ran, and it
 * stayed mapped) before its descriptor was read. */
START_TEST(test_major2_constructor_never_runs) {
  const char *marker = tmp("marker");
  setenv("STUB_CTOR_MARKER", marker, 1);
  expect_refused(judge("major2"), 0, "ABI mismatch: the plugin speaks vyre ABI 2.x, this host 1.x");
  ck_assert_msg(!exists(marker), "the refused plugin's constructor must not run");
  expect_refused(judge("major2"), VYRE_HOST_NO_LOAD, "the plugin speaks vyre ABI 2.x");
  ck_assert_msg(!exists(marker), "nor when only listing");
  /* The marker works: a compatible plugin's constructor does run. */
  vyre_host *host = open_flags(judge("ctor"), 0);
  ck_assert_int_eq(info_at(host, 0).status, VYRE_HOST_LOADED);
  ck_assert_msg(exists(marker), "a loaded plugin's constructor creates the marker");
  vyre_host_close(host);
  unsetenv("STUB_CTOR_MARKER");
}
END_TEST

START_TEST(test_no_load_lists) {
  const char *marker = tmp("marker");
  setenv("STUB_CTOR_MARKER", marker, 1);
  char path[3 * PATH_MAX];
  FORMAT(path, sizeof path, "%s:%s:%s", judge("ctor"), judge("major2"), stub("older"));
  vyre_host *host = open_flags(path, VYRE_HOST_NO_LOAD);
  ck_assert_int_eq(vyre_host_backend_count(host), 3);
  vyre_host_candidate c = info_at(host, 0);
  ck_assert_msg(c.status == VYRE_HOST_LISTED && c.reason[0] == '\0',
                "a compatible plugin is listed, got %s \"%s\"", vyre_host_status_name(c.status),
                c.reason);
  ck_assert_str_eq(vyre_host_status_name(c.status), "listed");
  ck_assert_msg(c.id[0] == '\0', "its id is unknown: the entry never ran");
  ck_assert_str_eq(c.build_id, "stub ctor");
  ck_assert_int_eq(c.abi_major, 1);
  ck_assert_int_eq(c.abi_minor, VYRE_ABI_MINOR);
  ck_assert_int_eq(c.plugin_minor_min, 0);
  ck_assert_int_eq(c.plugin_minor_max, VYRE_ABI_MINOR);
  ck_assert_int_eq(c.release, VYRE_DESCRIPTOR_RELEASE);
  ck_assert_int_eq(info_at(host, 1).status, VYRE_HOST_SKIPPED);
  c = info_at(host, 2);
  ck_assert_msg(c.status == VYRE_HOST_LISTED && c.plugin_minor_max == 1, "older [0,1] listed");
  ck_assert_int_eq(vyre_host_skipped_count(host), 1);
  ck_assert_msg(!exists(marker), "no constructor ran");
  ck_assert_msg(!is_loaded(judge("ctor")) && !is_loaded(stub("older")), "nothing was mapped");
  ck_assert_int_eq(vyre_host_find(host, "ctor"), -1);

  vyre_backend *b = (vyre_backend *)&b;
  vyre_error err = VYRE_ERROR_INIT;
  vyre_status st = vyre_host_create(host, NULL, NULL, &b, NULL, &err);
  ck_assert_msg(st == VYRE_INVALID_ARGUMENT && b == NULL &&
                    strstr(err.message, "opened with VYRE_HOST_NO_LOAD") &&
                    strstr(err.message, "Fix: open the host without VYRE_HOST_NO_LOAD"),
                "create on a listing host is refused clearly, got %s: %s", vyre_status_name(st),
                err.message);
  st = vyre_host_create(host, "ctor", NULL, &b, NULL, &err);
  ck_assert_msg(st == VYRE_INVALID_ARGUMENT && strstr(err.message, "VYRE_HOST_NO_LOAD"),
                "by id too: %s", err.message);
  uint32_t index = 77;
  st = vyre_host_select(host, NULL, &index, &err);
  ck_assert_msg(st == VYRE_INVALID_ARGUMENT && index == 77 &&
                    strstr(err.message, "VYRE_HOST_NO_LOAD"),
                "select too: %s", err.message);
  ck_assert_int_eq(vyre_host_probe(host), 0);
  ck_assert_msg(!exists(marker) && !is_loaded(judge("ctor")), "still nothing ran");
  vyre_host_close(host);
  unsetenv("STUB_CTOR_MARKER");
}
END_TEST

/* ------------------------------------------------------------------ */
/* release: stale builds                                               */
/* ------------------------------------------------------------------ */

START_TEST(test_draft_refused) {
  expect_refused(judge("draft"), 0,
                 "pre-1.0.0 build: descriptor release 0 serving only ABI 1.0, which may be the "
                 "0.1 draft");
  expect_refused(judge("draft"), 0,
                 "Fix: rebuild the plugin against the headers of vyre 1.0.0 or later");
  expect_refused(judge("draft"), VYRE_HOST_NO_LOAD, "may be the 0.1 draft");
  /* The same layout with release 1 loads (tests/loader check_loader:
   * abi10), so only the release decides. */
  vyre_host *host = open_flags(stub("abi10"), 0);
  ck_assert_int_eq(info_at(host, 0).status, VYRE_HOST_LOADED);
  vyre_host_close(host);
}
END_TEST

START_TEST(test_pre10_accepted_with_note) {
  vyre_host *host = open_flags(judge("pre10"), 0);
  vyre_host_candidate c = info_at(host, 0);
  ck_assert_msg(c.status == VYRE_HOST_LOADED && c.release == 0 &&
                    strstr(c.reason, "pre-1.0.0 build (descriptor release 0)"),
                "release 0 serving [0,1] loads with a note, got %s \"%s\"",
                vyre_host_status_name(c.status), c.reason);
  vyre_backend *b = NULL;
  ck_assert(vyre_host_create(host, "pre10", NULL, &b, NULL, NULL) == VYRE_OK);
  b->vt->destroy(b);
  c = info_at(host, 0);
  ck_assert_msg(c.status == VYRE_HOST_READY && strstr(c.reason, "pre-1.0.0 build"),
                "the note stays once ready: %s", c.reason);
  vyre_host_close(host);
  host = open_flags(judge("pre10"), VYRE_HOST_NO_LOAD);
  c = info_at(host, 0);
  ck_assert_msg(c.status == VYRE_HOST_LISTED && strstr(c.reason, "pre-1.0.0 build"),
                "listed with the note: %s", c.reason);
  vyre_host_close(host);
  host = open_flags(stub("good"), 0);
  c = info_at(host, 0);
  ck_assert_msg(c.release == VYRE_DESCRIPTOR_RELEASE && c.reason[0] == '\0',
                "a current build has release %u and no note: %u \"%s\"", VYRE_DESCRIPTOR_RELEASE,
                c.release, c.reason);
  vyre_host_close(host);
}
END_TEST

/* A descriptor that differs once loaded (a constructor wrote it) is
 * refused: what was judged must be what runs. */
/* The file offset of address `addr` (a PT_LOAD's file bytes). */
static size_t elf_offset(elf_copy *c, uint64_t addr) {
  for (uint32_t i = 0; i < c->eh->e_phnum; i++) {
    judge_phdr *p = elf_phdr(c, i);
    if (p->p_type == PT_LOAD && addr >= p->p_vaddr && addr - p->p_vaddr < p->p_filesz)
      return (size_t)(p->p_offset + (addr - p->p_vaddr));
  }
  ck_abort_msg("address 0x%llx is in no PT_LOAD's file bytes", (unsigned long long)addr);
  return 0;
}

/* A release above this host's (a later vyre) is accepted as it is. */
START_TEST(test_later_release_accepted) {
  elf_copy c = elf_load(stub("good"));
  judge_sym *s = elf_dynsym(&c, "vyre_plugin_descriptor");
  vyre_descriptor *d = (vyre_descriptor *)(c.data + elf_offset(&c, s->st_value));
  ck_assert_int_eq(d->release, VYRE_DESCRIPTOR_RELEASE);
  d->release = 7;
  const char *path = elf_save(&c, "libvyre-later.so");
  vyre_host *host = open_flags(path, 0);
  vyre_host_candidate info = info_at(host, 0);
  ck_assert_msg(info.status == VYRE_HOST_LOADED && info.release == 7 && info.reason[0] == '\0',
                "release 7 loads without a note, got %s release %u \"%s\"",
                vyre_host_status_name(info.status), info.release, info.reason);
  vyre_host_close(host);
}
END_TEST

START_TEST(test_descriptor_changed_after_load) {
  const char *path = judge("mutable");
  vyre_host *host = open_flags(path, VYRE_HOST_NO_LOAD);
  ck_assert_int_eq(info_at(host, 0).status, VYRE_HOST_LISTED);
  vyre_host_close(host);
  host = open_flags(path, 0);
  vyre_host_candidate c = info_at(host, 0);
  ck_assert_msg(c.status == VYRE_HOST_SKIPPED &&
                    strstr(c.reason, "descriptor changed by relocation/constructor") &&
                    strstr(c.reason, "Fix:"),
                "got %s \"%s\"", vyre_host_status_name(c.status), c.reason);
  vyre_host_close(host);
}
END_TEST

/* ------------------------------------------------------------------ */
/* crafted dynamic sections: refused before dlopen, no crash           */
/* ------------------------------------------------------------------ */

typedef struct craft_case {
  const char *stub; /* the judge stub patched; NULL: libvyre-stub_good.so */
  const char *name;
  int64_t tag;      /* the dynamic entry patched; 0: see `special` */
  uint64_t value;
  int special;      /* 1: no DT_NULL; 2: overlapping PT_LOAD; 3: e_shoff 2^62, e_shentsize 0;
                       4: symbol 1's DT_VERSYM entry names version 0x7ff0 */
  const char *reason; /* NULL: the file loads */
} craft_case;

static const craft_case craft_cases[] = {
    {NULL, "symtab", DT_SYMTAB, FAR_AWAY, 0, "corrupt ELF file: DT_SYMTAB ("},
    {NULL, "strtab", DT_STRTAB, FAR_AWAY, 0, "corrupt ELF file: DT_STRTAB ("},
    {NULL, "strsz", DT_STRSZ, 1ull << 40, 0, "corrupt ELF file: DT_STRTAB ("},
    {NULL, "gnuhash", DT_GNU_HASH, FAR_AWAY, 0, "corrupt ELF file: DT_GNU_HASH ("},
    {NULL, "rela", DT_RELA, FAR_AWAY, 0, "corrupt ELF file: DT_RELA ("},
    {NULL, "relasz", DT_RELASZ, 1ull << 32, 0, "corrupt ELF file: DT_RELA ("},
    {NULL, "jmprel", DT_JMPREL, FAR_AWAY, 0, "corrupt ELF file: DT_JMPREL ("},
    {NULL, "initarray", DT_INIT_ARRAY, FAR_AWAY, 0, "corrupt ELF file: DT_INIT_ARRAY ("},
    {NULL, "finiarray", DT_FINI_ARRAY, FAR_AWAY, 0, "corrupt ELF file: DT_FINI_ARRAY ("},
    {NULL, "versym", DT_VERSYM, FAR_AWAY, 0, "corrupt ELF file: DT_VERSYM ("},
    {NULL, "verneed", DT_VERNEED, FAR_AWAY, 0, "corrupt ELF file: DT_VERNEED ("},
    {NULL, "needed", DT_NEEDED, 1ull << 40, 0, "corrupt ELF file: DT_NEEDED names string 1099511627776"},
    {NULL, "syment", DT_SYMENT, 16, 0, "corrupt ELF file: DT_SYMENT 16, expected"},
    {NULL, "nonull", 0, 0, 1, "has no DT_NULL end"},
    {NULL, "overlap", 0, 0, 2, "overlaps the one before it or is out of order"},
    {NULL, "shoff", 0, 0, 3, NULL},
    {NULL, "versymndx", 0, 0, 4, "corrupt ELF file: DT_VERSYM gives symbol 1 version 32752"},
    {"sysv", "hash", DT_HASH, FAR_AWAY, 0, "corrupt ELF file: DT_HASH ("},
    {"sysv", "hashsymtab", DT_SYMTAB, FAR_AWAY, 0, "corrupt ELF file: DT_SYMTAB ("},
};

static void craft(elf_copy *c, const craft_case *k) {
  if (k->tag) {
    judge_dyn *d = elf_dyn(c, k->tag);
    ck_assert_msg(d != NULL, "%s: the stub has dynamic tag 0x%llx", k->name,
                  (unsigned long long)k->tag);
    d->d_un.d_val = k->value;
  } else if (k->special == 1) {
    judge_phdr *p = elf_segment(c, PT_DYNAMIC, 0);
    judge_dyn *dyn = (judge_dyn *)(c->data + p->p_offset);
    for (size_t i = 0; i < p->p_filesz / sizeof *dyn; i++)
      if (dyn[i].d_tag == DT_NULL) dyn[i].d_tag = DT_DEBUG;
  } else if (k->special == 2) {
    /* The second PT_LOAD starts inside the first (p_offset kept: it would
     * be mapped over it); the dynamic section's segment is untouched. */
    judge_phdr *first = elf_segment(c, PT_LOAD, 0), *second = NULL;
    for (uint32_t i = 0; i < c->eh->e_phnum && !second; i++)
      if (elf_phdr(c, i)->p_type == PT_LOAD && elf_phdr(c, i) != first) second = elf_phdr(c, i);
    ck_assert_msg(second && second != elf_segment(c, PT_LOAD, 1), "the stub has 3 PT_LOADs");
    second->p_vaddr = first->p_vaddr + first->p_memsz / 2;
    second->p_paddr = second->p_vaddr;
  } else if (k->special == 4) {
    /* glibc indexes its version array with this unchecked: a read past
     * it that killed the host or not depending on the layout. */
    judge_dyn *d = elf_dyn(c, DT_VERSYM);
    ck_assert_msg(d != NULL, "the stub has DT_VERSYM");
    uint16_t bad = 0x7ff0;
    memcpy(c->data + elf_offset(c, d->d_un.d_val) + 2, &bad, 2);
  } else {
    c->eh->e_shoff = 1ull << 62;
    c->eh->e_shentsize = 0;
  }
}

START_TEST(test_crafted_dynamic) {
  const craft_case *k = &craft_cases[_i];
  elf_copy c = elf_load(k->stub ? judge(k->stub) : stub("good"));
  craft(&c, k);
  char name[64];
  FORMAT(name, sizeof name, "libvyre-%s.so", k->name);
  const char *path = elf_save(&c, name);
  if (k->reason) {
    expect_refused(path, 0, k->reason);
    expect_refused(path, VYRE_HOST_NO_LOAD, k->reason);
    return;
  }
  /* dlopen never reads the section headers: nothing to refuse. */
  vyre_host *host = open_flags(path, 0);
  vyre_host_candidate info = info_at(host, 0);
  ck_assert_msg(info.status == VYRE_HOST_LOADED, "%s: loads, got %s \"%s\"", k->name,
                vyre_host_status_name(info.status), info.reason);
  vyre_host_close(host);
}
END_TEST

/* A plugin with only the old DT_HASH table: its symbol count comes
 * from nchain. */
START_TEST(test_sysv_hash) {
  vyre_host *host = open_flags(judge("sysv"), VYRE_HOST_NO_LOAD);
  vyre_host_candidate c = info_at(host, 0);
  ck_assert_msg(c.status == VYRE_HOST_LISTED, "listed: %s", c.reason);
  vyre_host_close(host);
  host = open_flags(judge("sysv"), 0);
  c = info_at(host, 0);
  ck_assert_msg(c.status == VYRE_HOST_LOADED && strcmp(c.id, "sysv") == 0, "loads: %s",
                c.reason);
  vyre_host_close(host);
}
END_TEST

START_TEST(test_imports_from_libvyre) {
  vyre_host *host = open_flags(judge("imports"), 0);
  vyre_host_candidate c = info_at(host, 0);
  ck_assert_msg(c.status == VYRE_HOST_SKIPPED && strstr(c.reason, "undefined symbol") &&
                    strstr(c.reason, "vyre-plugin"),
                "a plugin importing a vyre_ function the host's libvyre lacks is skipped, and the "
                "Fix names vyre-plugin: %s",
                c.reason);
  vyre_host_close(host);
}
END_TEST

START_TEST(test_flags) {
  vyre_host_options opt = {sizeof opt, VYRE_HOST_NO_PROBE << 1, NULL, NULL};
  vyre_host *host = (vyre_host *)&opt;
  vyre_error err = VYRE_ERROR_INIT;
  ck_assert_msg(vyre_host_open(&opt, &host, &err) == VYRE_INVALID_ARGUMENT && host == NULL,
                "an unknown flag is refused");
  ck_assert_str_eq(vyre_host_status_name(VYRE_HOST_LISTED), "listed");
  ck_assert_str_eq(vyre_host_status_name(5), "?");
}
END_TEST

static Suite *judge_suite(void) {
  Suite *s = suite_create("judge");
  TCase *tc = tcase_create("descriptor");
  tcase_add_checked_fixture(tc, setup_tmp, teardown_tmp);
  tcase_add_test(tc, test_tiny_descriptor);
  tcase_add_test(tc, test_tiny_descriptor_at_page_end);
  tcase_add_test(tc, test_function_descriptor);
  tcase_add_test(tc, test_descriptor_without_file_bytes);
  tcase_add_test(tc, test_descriptor_changed_after_load);
  suite_add_tcase(s, tc);

  tc = tcase_create("nocode");
  tcase_add_checked_fixture(tc, setup_tmp, teardown_tmp);
  tcase_add_test(tc, test_major2_constructor_never_runs);
  tcase_add_test(tc, test_no_load_lists);
  tcase_add_test(tc, test_flags);
  tcase_add_test(tc, test_sysv_hash);
  tcase_add_test(tc, test_imports_from_libvyre);
  suite_add_tcase(s, tc);

  tc = tcase_create("release");
  tcase_add_checked_fixture(tc, setup_tmp, teardown_tmp);
  tcase_add_test(tc, test_draft_refused);
  tcase_add_test(tc, test_pre10_accepted_with_note);
  tcase_add_test(tc, test_later_release_accepted);
  suite_add_tcase(s, tc);

  tc = tcase_create("crafted");
  tcase_add_checked_fixture(tc, setup_tmp, teardown_tmp);
  tcase_add_loop_test(tc, test_crafted_dynamic, 0,
                      (int)(sizeof craft_cases / sizeof craft_cases[0]));
  suite_add_tcase(s, tc);
  return s;
}

int main(void) {
  SRunner *sr = srunner_create(judge_suite());
  srunner_run_all(sr, CK_NORMAL);
  int failed = srunner_ntests_failed(sr);
  srunner_free(sr);
  return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
