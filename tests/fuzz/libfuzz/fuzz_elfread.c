/* fuzz_elfread.c -- libFuzzer target: the support layer's bounded ELF reader (abi/support/elf.c) over arbitrary file contents. */
/*
 * The input is a whole candidate ELF file, read through
 * vyre__elf_open_buffer: the header, every program and section header,
 * the dynamic symbol table and its symbols' names, and the same table
 * found through the dynamic section (vyre__elf_dynamic_symtab,
 * vyre__elf_sym_find, vyre__elf_addr_range).  Every call must
 * return one of its documented results without reading outside the
 * buffer, leave a NUL-terminated "why" on failure, and what it accepts
 * must lie inside the input (checked again here, independently).  Build
 * (the FUZZ_TARGETS rule of tests/fuzz/local.mk, `make fuzz`), or by hand:
 *   clang -g -fsanitize=fuzzer,address,undefined -I. \
 *     tests/fuzz/libfuzz/fuzz_elfread.c abi/support/elf.c -o fuzz_elfread
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "abi/support/elf.h"

/* Symbols read per input: the table may be the whole file. */
#define MAX_SYMS 4096u

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* A failing call leaves a NUL-terminated reason in why. */
static void expect_why(int rc, const char *why, size_t n) {
  if (rc == -1 && memchr(why, '\0', n) == NULL) abort();
}

static int inside(uint64_t offset, uint64_t len, size_t size) {
  return offset <= size && len <= size - offset;
}

static void read_symbols(const vyre__elf *e, size_t size) {
  char why[256];
  vyre__elf_symtab t;
  memset(why, 'x', sizeof why);
  int rc = vyre__elf_dynsym(e, &t, why, sizeof why);
  if (rc != 0 && rc != 1 && rc != -1) abort();
  expect_why(rc, why, sizeof why);
  if (rc != 1) return;
  if (!inside(t.str_offset, t.str_size, size) || t.entsize == 0 || t.offset > size ||
      t.count > (size - t.offset) / t.entsize)
    abort(); /* the tables it found lie in the file */
  for (uint64_t i = 0; i < t.count && i < MAX_SYMS; i++) {
    vyre__elf_sym s;
    memset(why, 'x', sizeof why);
    rc = vyre__elf_sym_read(e, &t, i, &s, why, sizeof why);
    if (rc != 0 && rc != -1) abort();
    expect_why(rc, why, sizeof why);
    if (rc) continue;
    char name[16]; /* small, so that long names are cut */
    memset(name, 'x', sizeof name);
    rc = vyre__elf_sym_name(e, &t, &s, name, sizeof name);
    if (rc < -1 || rc > 1 || memchr(name, '\0', sizeof name) == NULL) abort();
    if (rc == 0 && s.name >= t.str_size) abort();
  }
}

/* The dynamic symbol table as the dynamic linker finds it: what it
 * accepts lies in the file, and a lookup returns a defined symbol. */
static void read_dynamic(const vyre__elf *e, size_t size) {
  char why[256];
  vyre__elf_symtab t;
  memset(why, 'x', sizeof why);
  int rc = vyre__elf_dynamic_symtab(e, &t, why, sizeof why);
  if (rc != 0 && rc != 1 && rc != -1) abort();
  expect_why(rc, why, sizeof why);
  if (rc != 1) return;
  if (!inside(t.str_offset, t.str_size, size) || t.entsize == 0 || t.offset > size ||
      t.count > (size - t.offset) / t.entsize)
    abort();
  vyre__elf_sym s;
  memset(why, 'x', sizeof why);
  rc = vyre__elf_sym_find(e, &t, "vyre_plugin_descriptor", &s, why, sizeof why);
  if (rc != 0 && rc != 1 && rc != -1) abort();
  expect_why(rc, why, sizeof why);
  if (rc == 1 && s.shndx == 0) abort();
  uint64_t off = 0, avail = 0;
  if (rc == 1 && vyre__elf_addr_range(e, s.value, s.size, &off, &avail) == 0 &&
      (!inside(off, s.size, size) || avail < s.size))
    abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  /* A copy of exactly `size` bytes, so that ASan sees any overread. */
  uint8_t *copy = malloc(size ? size : 1);
  if (!copy) return 0;
  if (size) memcpy(copy, data, size);
  vyre__elf e;
  vyre__elf_buffer ctx;
  char why[256];
  memset(why, 'x', sizeof why);
  int rc = vyre__elf_open_buffer(&e, &ctx, copy, size, why, sizeof why);
  if (rc != 0 && rc != -1) abort();
  expect_why(rc, why, sizeof why);
  if (rc == 0) {
    if (e.size != size) abort();
    char machine[32];
    const char *m = vyre__elf_machine_str(e.machine, machine, sizeof machine);
    if (!m || !memchr(m, '\0', 64)) abort();
    memset(why, 'x', sizeof why);
    rc = vyre__elf_check_sizes(&e, why, sizeof why);
    expect_why(rc, why, sizeof why);
    for (uint32_t i = 0; i < e.phnum; i++) {
      vyre__elf_phdr p;
      memset(why, 'x', sizeof why);
      int r = vyre__elf_phdr_read(&e, i, &p, why, sizeof why);
      if (r != 0 && r != -1) abort();
      expect_why(r, why, sizeof why);
      /* range_ok agrees with an independent check of the segment. */
      if (r == 0 && (vyre__elf_range_ok(&e, p.offset, p.filesz) == 0) !=
                        inside(p.offset, p.filesz, size))
        abort();
    }
    for (uint32_t i = 0; i < e.shnum; i++) {
      vyre__elf_shdr s;
      memset(why, 'x', sizeof why);
      int r = vyre__elf_shdr_read(&e, i, &s, why, sizeof why);
      if (r != 0 && r != -1) abort();
      expect_why(r, why, sizeof why);
    }
    read_symbols(&e, size);
    read_dynamic(&e, size);
  }
  free(copy);
  return 0;
}
