/* check_elf.c -- abi/support/elf.c on crafted ELF images of both classes and byte orders, cut short and corrupted. */
#include <check.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "abi/support/elf.h"

/* A minimal shared object: the ELF header, PT_LOAD and PT_DYNAMIC, and
 * the sections null, .dynsym (3 symbols) and .dynstr. */
typedef struct image {
  unsigned char b[1024];
  size_t size;
  int is64, big;
  size_t phoff, symoff, stroff, shoff, strsize;
} image;

static const char strtab[] = "\0vyre_plugin_entry\0vyre_plugin_descriptor\0";

static void put(image *m, size_t off, uint64_t v, unsigned n) {
  for (unsigned i = 0; i < n; i++)
    m->b[off + (m->big ? n - 1 - i : i)] = (unsigned char)(v >> (8 * i));
}

static void word(image *m, size_t off, uint64_t v) { put(m, off, v, m->is64 ? 8 : 4); }

static void build(image *m, int is64, int big) {
  memset(m, 0, sizeof *m);
  m->is64 = is64, m->big = big;
  unsigned w = is64 ? 8 : 4, eh = is64 ? 64 : 52, ph = is64 ? 56 : 32, sh = is64 ? 64 : 40,
           sym = is64 ? 24 : 16;
  m->phoff = eh;
  m->symoff = m->phoff + 2 * ph;
  m->stroff = m->symoff + 3 * sym;
  m->strsize = sizeof strtab - 1;
  m->shoff = (m->stroff + m->strsize + 7) & ~(size_t)7;
  m->size = m->shoff + 3 * sh;
  memcpy(m->b, "\177ELF", 4);
  m->b[4] = is64 ? 2 : 1, m->b[5] = big ? 2 : 1, m->b[6] = 1;
  put(m, 16, 3, 2), put(m, 18, 62, 2), put(m, 20, 1, 4);
  word(m, 24, 0x1000), word(m, 24 + w, m->phoff), word(m, 24 + 2 * w, m->shoff);
  size_t p = 24 + 3 * w;
  put(m, p + 4, eh, 2), put(m, p + 6, ph, 2), put(m, p + 8, 2, 2);
  put(m, p + 10, sh, 2), put(m, p + 12, 3, 2), put(m, p + 14, 0, 2);
  for (int i = 0; i < 2; i++) { /* PT_LOAD over everything, PT_DYNAMIC */
    size_t o = m->phoff + (size_t)i * ph;
    uint64_t type = i ? 2 : 1, off = i ? m->symoff : 0, sz = i ? 16 : m->size;
    put(m, o, type, 4);
    if (is64) {
      put(m, o + 4, 5, 4), word(m, o + 8, off), word(m, o + 16, off);
      word(m, o + 32, sz), word(m, o + 40, sz);
    } else {
      word(m, o + 4, off), word(m, o + 8, off), word(m, o + 16, sz), word(m, o + 20, sz);
      put(m, o + 24, 5, 4);
    }
  }
  for (int i = 1; i < 3; i++) { /* symbols 1 and 2: global functions, defined */
    size_t o = m->symoff + (size_t)i * sym;
    put(m, o, i == 1 ? 1 : 19, 4);
    if (is64) m->b[o + 4] = 0x12, put(m, o + 6, 7, 2), word(m, o + 8, 0x2000u * i);
    else word(m, o + 4, 0x2000u * i), m->b[o + 12] = 0x12, put(m, o + 14, 7, 2);
  }
  memcpy(m->b + m->stroff, strtab, m->strsize);
  size_t s1 = m->shoff + sh, s2 = m->shoff + 2 * sh;
  put(m, s1 + 4, 11, 4), word(m, s1 + 8 + 2 * w, m->symoff), word(m, s1 + 8 + 3 * w, 3 * sym);
  put(m, s1 + 8 + 4 * w, 2, 4), word(m, s1 + 16 + 5 * w, sym);
  put(m, s2 + 4, 3, 4), word(m, s2 + 8 + 2 * w, m->stroff), word(m, s2 + 8 + 3 * w, m->strsize);
}

START_TEST(test_read_all_forms) {
  for (int form = 0; form < 4; form++) {
    image m;
    build(&m, form & 1, form >> 1);
    vyre__elf e;
    vyre__elf_buffer ctx;
    char why[256] = "";
    ck_assert_msg(vyre__elf_open_buffer(&e, &ctx, m.b, m.size, why, sizeof why) == 0,
                  "form %d opens: %s", form, why);
    ck_assert_msg(e.is64 == (form & 1) && e.big == (form >> 1), "class and byte order");
    ck_assert_msg(e.type == 3 && e.machine == 62 && e.version == 1 && e.entry == 0x1000,
                  "form %d: header fields", form);
    ck_assert_msg(e.phoff == m.phoff && e.phnum == 2 && e.shoff == m.shoff && e.shnum == 3,
                  "form %d: table fields", form);
    ck_assert_int_eq(vyre__elf_check_sizes(&e, why, sizeof why), 0);
    vyre__elf_phdr ph;
    ck_assert_int_eq(vyre__elf_phdr_read(&e, 0, &ph, why, sizeof why), 0);
    ck_assert_msg(ph.type == 1 && ph.flags == 5 && ph.filesz == m.size && ph.memsz == m.size,
                  "form %d: PT_LOAD", form);
    ck_assert_int_eq(vyre__elf_phdr_read(&e, 1, &ph, why, sizeof why), 0);
    ck_assert_msg(ph.type == 2 && ph.offset == m.symoff && ph.vaddr == m.symoff, "PT_DYNAMIC");
    ck_assert_int_eq(vyre__elf_phdr_read(&e, 2, &ph, why, sizeof why), -1);
    vyre__elf_symtab t;
    ck_assert_int_eq(vyre__elf_dynsym(&e, &t, why, sizeof why), 1);
    ck_assert_msg(t.count == 3 && t.str_offset == m.stroff && t.str_size == m.strsize, "symtab");
    const char *names[] = {"", "vyre_plugin_entry", "vyre_plugin_descriptor"};
    for (uint64_t i = 0; i < 3; i++) {
      vyre__elf_sym s;
      char name[64];
      ck_assert_int_eq(vyre__elf_sym_read(&e, &t, i, &s, why, sizeof why), 0);
      ck_assert_int_eq(vyre__elf_sym_name(&e, &t, &s, name, sizeof name), 0);
      ck_assert_str_eq(name, names[i]);
      if (i) ck_assert_msg(s.info == 0x12 && s.shndx == 7 && s.value == 0x2000u * i, "symbol");
    }
    vyre__elf_sym s;
    ck_assert_int_eq(vyre__elf_sym_read(&e, &t, 3, &s, why, sizeof why), -1);
    ck_assert_int_eq(vyre__elf_sym_read(&e, &t, 2, &s, why, sizeof why), 0);
    char small[5];
    ck_assert_int_eq(vyre__elf_sym_name(&e, &t, &s, small, sizeof small), 1);
    ck_assert_str_eq(small, "vyre");
  }
}
END_TEST

START_TEST(test_open_refused) {
  image m;
  build(&m, 1, 0);
  vyre__elf e;
  vyre__elf_buffer ctx;
  char why[256];
  ck_assert_int_eq(vyre__elf_open_buffer(&e, &ctx, m.b, 0, why, sizeof why), -1);
  ck_assert_str_eq(why, "not an ELF file: 0 bytes, too short for an ELF header (a truncated or "
                        "empty file)");
  ck_assert_int_eq(vyre__elf_open_buffer(&e, &ctx, m.b, 40, why, sizeof why), -1);
  ck_assert_str_eq(why, "truncated: 40 bytes, the ELF header alone needs 64");
  ck_assert_msg(e.ident[4] == 2, "the identification is kept for the caller");
  ck_assert_int_eq(vyre__elf_open_buffer(&e, &ctx, "MZ\x90\0 not an elf file", 20, why,
                                         sizeof why),
                   -1);
  ck_assert_str_eq(why, "not an ELF file: it starts with 4d 5a 90 00, not 7f 45 4c 46 (\\177ELF)");
  m.b[4] = 3;
  ck_assert_int_eq(vyre__elf_open_buffer(&e, &ctx, m.b, m.size, why, sizeof why), -1);
  ck_assert_str_eq(why, "corrupt ELF file: unknown ELF class 3");
  m.b[4] = 2, m.b[5] = 0;
  ck_assert_int_eq(vyre__elf_open_buffer(&e, &ctx, m.b, m.size, why, sizeof why), -1);
  ck_assert_str_eq(why, "corrupt ELF file: unknown byte order 0");
  m.b[5] = 1, m.b[6] = 2;
  ck_assert_int_eq(vyre__elf_open_buffer(&e, &ctx, m.b, m.size, why, sizeof why), 0);
  ck_assert_int_eq(vyre__elf_check_sizes(&e, why, sizeof why), -1);
  ck_assert_str_eq(why, "corrupt ELF file: ELF version 2, expected 1");
  m.b[6] = 1;
  put(&m, 54, 40, 2); /* e_phentsize */
  vyre__elf_open_buffer(&e, &ctx, m.b, m.size, why, sizeof why);
  ck_assert_int_eq(vyre__elf_check_sizes(&e, why, sizeof why), -1);
  ck_assert_str_eq(why, "corrupt ELF file: header size 64 and program header size 40, expected "
                        "64 and 56");
  vyre__elf_phdr ph;
  ck_assert_msg(vyre__elf_phdr_read(&e, 0, &ph, why, sizeof why) == -1,
                "entries shorter than the class's are refused");
  put(&m, 54, 56, 2);
  put(&m, 58, 40, 2); /* e_shentsize: too small for the class */
  vyre__elf_open_buffer(&e, &ctx, m.b, m.size, why, sizeof why);
  ck_assert_int_eq(vyre__elf_check_sizes(&e, why, sizeof why), 0);
  vyre__elf_shdr sh;
  ck_assert_int_eq(vyre__elf_shdr_read(&e, 1, &sh, why, sizeof why), -1);
  ck_assert_msg(strstr(why, "section header 1 of 3 (40 bytes each") != NULL, "%s", why);
  ck_assert_uint_eq(vyre__elf_end(10, 20), 30);
  ck_assert_uint_eq(vyre__elf_end(UINT64_MAX - 1, 2), UINT64_MAX);
}
END_TEST

START_TEST(test_tables_outside) {
  image m;
  build(&m, 1, 0);
  vyre__elf e;
  vyre__elf_buffer ctx;
  char why[256];
  vyre__elf_phdr ph;
  vyre__elf_symtab t;
  put(&m, 32, UINT64_MAX - 8, 8); /* e_phoff near the top: no wrap */
  vyre__elf_open_buffer(&e, &ctx, m.b, m.size, why, sizeof why);
  ck_assert_int_eq(vyre__elf_phdr_read(&e, 0, &ph, why, sizeof why), -1);
  ck_assert_msg(strstr(why, "program header 0 of 2") != NULL, "%s", why);
  build(&m, 1, 0);
  put(&m, 40, m.size - 10, 8); /* e_shoff: the table runs past the end */
  vyre__elf_open_buffer(&e, &ctx, m.b, m.size, why, sizeof why);
  ck_assert_int_eq(vyre__elf_dynsym(&e, &t, why, sizeof why), -1);
  build(&m, 1, 0);
  put(&m, m.shoff + 64 + 40, 9, 4); /* .dynsym's sh_link out of range */
  vyre__elf_open_buffer(&e, &ctx, m.b, m.size, why, sizeof why);
  ck_assert_int_eq(vyre__elf_dynsym(&e, &t, why, sizeof why), -1);
  ck_assert_str_eq(why, "corrupt ELF file: .dynsym names section 9 as its strings");
  build(&m, 1, 0);
  put(&m, m.shoff + 128 + 32, 1u << 20, 8); /* .dynstr's size past the end */
  vyre__elf_open_buffer(&e, &ctx, m.b, m.size, why, sizeof why);
  ck_assert_int_eq(vyre__elf_dynsym(&e, &t, why, sizeof why), -1);
  ck_assert_str_eq(why, "corrupt ELF file: .dynsym or .dynstr lies outside the file");
  build(&m, 1, 0);
  put(&m, m.shoff + 64 + 56, 0, 8); /* .dynsym's sh_entsize 0 */
  vyre__elf_open_buffer(&e, &ctx, m.b, m.size, why, sizeof why);
  ck_assert_int_eq(vyre__elf_dynsym(&e, &t, why, sizeof why), -1);
  build(&m, 1, 0);
  put(&m, m.shoff + 64 + 4, 3, 4); /* no SHT_DYNSYM */
  vyre__elf_open_buffer(&e, &ctx, m.b, m.size, why, sizeof why);
  ck_assert_int_eq(vyre__elf_dynsym(&e, &t, why, sizeof why), 0);
}
END_TEST

START_TEST(test_names_outside) {
  image m;
  build(&m, 0, 1);
  vyre__elf e;
  vyre__elf_buffer ctx;
  char why[256], name[64];
  vyre__elf_symtab t;
  vyre__elf_sym s;
  vyre__elf_open_buffer(&e, &ctx, m.b, m.size, why, sizeof why);
  ck_assert_int_eq(vyre__elf_dynsym(&e, &t, why, sizeof why), 1);
  vyre__elf_sym_read(&e, &t, 1, &s, why, sizeof why);
  s.name = (uint32_t)m.strsize;
  ck_assert_int_eq(vyre__elf_sym_name(&e, &t, &s, name, sizeof name), -1);
  /* The string table cut before the last name's NUL: unterminated. */
  t.str_size = m.strsize - 1;
  vyre__elf_sym_read(&e, &t, 2, &s, why, sizeof why);
  ck_assert_int_eq(vyre__elf_sym_name(&e, &t, &s, name, sizeof name), -1);
}
END_TEST

/* Every cut of a valid image, and random corruption: each call returns
 * 0, 1 or -1 and never reads outside (ASan builds check the reads). */
static void walk(const unsigned char *data, size_t size) {
  vyre__elf e;
  vyre__elf_buffer ctx;
  char why[256], name[32];
  if (vyre__elf_open_buffer(&e, &ctx, data, size, why, sizeof why) != 0) return;
  (void)vyre__elf_check_sizes(&e, why, sizeof why);
  vyre__elf_phdr ph;
  for (uint32_t i = 0; i < e.phnum && i < 64; i++)
    (void)vyre__elf_phdr_read(&e, i, &ph, why, sizeof why);
  vyre__elf_symtab t;
  if (vyre__elf_dynsym(&e, &t, why, sizeof why) != 1) return;
  for (uint64_t i = 0; i < t.count && i < 64; i++) {
    vyre__elf_sym s;
    if (vyre__elf_sym_read(&e, &t, i, &s, why, sizeof why) == 0)
      (void)vyre__elf_sym_name(&e, &t, &s, name, sizeof name);
  }
}

START_TEST(test_cut_and_corrupt) {
  for (int form = 0; form < 4; form++) {
    image m;
    build(&m, form & 1, form >> 1);
    for (size_t n = 0; n <= m.size; n++) {
      unsigned char *cut = malloc(n ? n : 1); /* exactly n bytes: ASan sees an overread */
      memcpy(cut, m.b, n);
      walk(cut, n);
      free(cut);
    }
    uint32_t x = 12345u + (uint32_t)form;
    for (int round = 0; round < 3000; round++) {
      image c = m;
      for (int k = 0; k < 4; k++) {
        x = x * 1103515245u + 12345u;
        size_t at = (x >> 8) % m.size;
        x = x * 1103515245u + 12345u;
        c.b[at] = (unsigned char)(x >> 16);
      }
      unsigned char *copy = malloc(m.size);
      memcpy(copy, c.b, m.size);
      walk(copy, m.size);
      free(copy);
    }
  }
}
END_TEST

START_TEST(test_fd_reader) {
  image m;
  build(&m, 1, 0);
  char path[] = "/tmp/check_elf.XXXXXX";
  int fd = mkstemp(path);
  ck_assert_int_ge(fd, 0);
  ck_assert_int_eq(write(fd, m.b, m.size), (ssize_t)m.size);
  vyre__elf e;
  char why[256];
  ck_assert_int_eq(vyre__elf_open(&e, vyre__elf_read_fd, &fd, m.size, why, sizeof why), 0);
  vyre__elf_symtab t;
  ck_assert_int_eq(vyre__elf_dynsym(&e, &t, why, sizeof why), 1);
  vyre__elf_sym s;
  char name[64];
  vyre__elf_sym_read(&e, &t, 2, &s, why, sizeof why);
  ck_assert_int_eq(vyre__elf_sym_name(&e, &t, &s, name, sizeof name), 0);
  ck_assert_str_eq(name, "vyre_plugin_descriptor");
  /* A size that claims more than the file holds: the short read fails. */
  ck_assert_int_eq(vyre__elf_open(&e, vyre__elf_read_fd, &fd, m.size, why, sizeof why), 0);
  e.size = m.size + 4096;
  e.shoff = m.size;
  ck_assert_int_eq(vyre__elf_dynsym(&e, &t, why, sizeof why), -1);
  close(fd);
  unlink(path);
}
END_TEST

START_TEST(test_machines) {
  char buf[32];
  ck_assert_str_eq(vyre__elf_machine_str(62, buf, sizeof buf), "x86_64");
  ck_assert_str_eq(vyre__elf_machine_str(183, buf, sizeof buf), "aarch64");
  ck_assert_str_eq(vyre__elf_machine_str(190, buf, sizeof buf), "nvidia cuda");
  ck_assert_str_eq(vyre__elf_machine_str(22, buf, sizeof buf), "s390x");
  ck_assert_str_eq(vyre__elf_machine_str(258, buf, sizeof buf), "loongarch");
  ck_assert_str_eq(vyre__elf_machine_str(9999, buf, sizeof buf), "machine 9999");
  unsigned char cls, data;
  uint16_t em;
  vyre__elf_host(&cls, &data, &em);
  ck_assert_uint_eq(cls, sizeof(void *) == 8 ? VYRE__ELF_CLASS64 : VYRE__ELF_CLASS32);
#if defined(__x86_64__)
  ck_assert_uint_eq(em, 62);
#elif defined(__aarch64__)
  ck_assert_uint_eq(em, 183);
#endif
}
END_TEST

static Suite *elf_suite(void) {
  Suite *s = suite_create("elf");
  TCase *core = tcase_create("core");
  tcase_add_test(core, test_read_all_forms);
  tcase_add_test(core, test_fd_reader);
  tcase_add_test(core, test_machines);
  suite_add_tcase(s, core);
  TCase *errors = tcase_create("errors");
  tcase_add_test(errors, test_open_refused);
  tcase_add_test(errors, test_tables_outside);
  tcase_add_test(errors, test_names_outside);
  tcase_set_timeout(errors, 60);
  tcase_add_test(errors, test_cut_and_corrupt);
  suite_add_tcase(s, errors);
  return s;
}

int main(void) {
  SRunner *sr = srunner_create(elf_suite());
  srunner_run_all(sr, CK_NORMAL);
  int failed = srunner_ntests_failed(sr);
  srunner_free(sr);
  return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
