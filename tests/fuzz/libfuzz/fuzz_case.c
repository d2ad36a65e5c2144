/* fuzz_case.c -- libFuzzer target: the conformance case parser (directives, generators, literals, the program) on any text, as `vyre conform --replay` reads a capsule. */
#include <stdint.h>
#include <stdlib.h>

#include "host-stub/conform/conform.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  vyre_error err = VYRE_ERROR_INIT;
  cf_case *c = NULL;
  if (cf_case_parse((const char *)data, size, "fuzz.vyre", &c, &err) != VYRE_OK) return 0;
  cf_case_free(c);
  return 0;
}
