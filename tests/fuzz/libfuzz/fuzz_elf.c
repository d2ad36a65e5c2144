/* fuzz_elf.c -- libFuzzer target: the ELF export reader of `vyre conform`'s static checks (host-stub/conform/elf.c) on any bytes. */
#include <stdint.h>

#include "host-stub/conform/conform.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  vyre_error err = VYRE_ERROR_INIT;
  cf_elf_report r;
  char why[1024];
  if (cf_elf_exports_mem(data, size, "fuzz.so", &r, &err) != VYRE_OK) return 0;
  (void)cf_elf_ok(&r, why, sizeof why);
  return 0;
}
