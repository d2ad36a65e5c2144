/* fuzz_elfcheck.c -- libFuzzer target: libvyre-host's pre-dlopen ELF check over arbitrary file contents. */
/*
 * The input is a whole candidate plugin file.  host_elf_check_buffer
 * must return 0 or -1 without reading outside the buffer, and always
 * leave a NUL-terminated reason; a file it passes must have its program
 * headers, segments and dynamic section inside the input (checked again
 * here, independently, for the host's class), and the descriptor read
 * that follows (host_elf_object_buffer) must keep the same promises.  Build (the FUZZ_TARGETS
 * rule of tests/fuzz/local.mk, `make fuzz`), or by hand:
 *   clang -g -fsanitize=fuzzer,address,undefined -I. \
 *     tests/fuzz/libfuzz/fuzz_elfcheck.c host-stub/loader/elfcheck.c abi/support/elf.c -o fuzz_elfcheck
 */
#include <elf.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "host-stub/loader/elfcheck.h"

#if UINTPTR_MAX > 0xffffffffu
typedef Elf64_Ehdr fuzz_ehdr;
typedef Elf64_Phdr fuzz_phdr;
#else
typedef Elf32_Ehdr fuzz_ehdr;
typedef Elf32_Phdr fuzz_phdr;
#endif

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  static host_elf_want want;
  static int ready;
  if (!ready) {
    host_elf_want_host(&want);
    ready = 1;
  }
  /* A copy of exactly `size` bytes, so that ASan sees any overread. */
  uint8_t *copy = malloc(size ? size : 1);
  if (!copy) return 0;
  if (size) memcpy(copy, data, size);
  char reason[256];
  memset(reason, 'x', sizeof reason);
  int rc = host_elf_check_buffer(copy, size, &want, reason, sizeof reason);
  if (rc != 0 && rc != -1) abort();
  if (rc == -1 && memchr(reason, '\0', sizeof reason) == NULL) abort();
  if (rc == 0) {
    /* What passed must be a shared object of this machine whose program
     * headers and PT_LOAD file ranges lie inside the input. */
    fuzz_ehdr h;
    if (size < sizeof h) abort();
    memcpy(&h, copy, sizeof h);
    if (memcmp(h.e_ident, ELFMAG, SELFMAG) != 0 || h.e_type != ET_DYN ||
        (want.machine && h.e_machine != want.machine) || h.e_phnum == 0)
      abort();
    if (h.e_phoff > size || (uint64_t)h.e_phnum * sizeof(fuzz_phdr) > size - h.e_phoff) abort();
    for (uint32_t i = 0; i < h.e_phnum; i++) {
      fuzz_phdr p;
      memcpy(&p, copy + h.e_phoff + (uint64_t)i * sizeof p, sizeof p);
      if (p.p_filesz && (p.p_offset > size || p.p_filesz > size - p.p_offset)) abort();
    }
    /* The descriptor read that follows a passing check: 0 or -1 with a
     * reason, and what it copies lies in the file. */
    unsigned char desc[96];
    host_elf_object o;
    memset(reason, 'x', sizeof reason);
    rc = host_elf_object_buffer(copy, size, "vyre_plugin_descriptor", desc, sizeof desc, &o,
                                reason, sizeof reason);
    if (rc != 0 && rc != -1) abort();
    if (rc == -1 && memchr(reason, '\0', sizeof reason) == NULL) abort();
    if (rc == 0 && (o.copied > sizeof desc || (o.copied && (!o.in_file || !o.found)) ||
                    (o.in_file && o.size > size)))
      abort();
  }
  free(copy);
  return 0;
}
