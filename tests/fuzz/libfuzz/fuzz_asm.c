/* fuzz_asm.c -- libFuzzer target: the text assembler on any text; what it accepts must decode, and disassemble and re-assemble to the same bytes. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "vyre/vyre_program.h"
#include "vyre/vyre_text.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  vyre_error err = VYRE_ERROR_INIT;
  void *bytes = NULL;
  size_t n = 0;
  if (vyre_text_assemble((const char *)data, size, "fuzz.vyre", &bytes, &n, &err) != VYRE_OK)
    return 0;
  vyre_program *p = NULL;
  if (vyre_program_decode(bytes, n, &p, &err) != VYRE_OK) abort(); /* assembled yet invalid */
  vyre_program_free(p);
  char *text = NULL;
  if (vyre_text_disassemble(bytes, n, &text, &err) != VYRE_OK) abort();
  void *again = NULL;
  size_t again_size = 0;
  if (vyre_text_assemble(text, strlen(text), "<disassembly>", &again, &again_size, &err) != VYRE_OK)
    abort();
  if (again_size != n || memcmp(again, bytes, n) != 0) abort(); /* the round trip changed it */
  free(again);
  free(text);
  free(bytes);
  return 0;
}
