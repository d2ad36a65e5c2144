/* fuzz_decode.c -- libFuzzer target: the program decoder and validator on any bytes; what it accepts must disassemble and re-assemble to the same bytes (the canonical round trip). */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "vyre/vyre_program.h"
#include "vyre/vyre_text.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  vyre_error err = VYRE_ERROR_INIT;
  vyre_program *p = NULL;
  if (vyre_program_decode(data, size, &p, &err) != VYRE_OK) return 0;
  vyre_program_free(p);
  char *text = NULL;
  if (vyre_text_disassemble(data, size, &text, &err) != VYRE_OK) abort(); /* valid yet no text */
  void *again = NULL;
  size_t again_size = 0;
  if (vyre_text_assemble(text, strlen(text), "<disassembly>", &again, &again_size, &err) != VYRE_OK)
    abort(); /* the disassembly does not assemble */
  if (again_size != size || memcmp(again, data, size) != 0) abort(); /* not canonical */
  free(again);
  free(text);
  return 0;
}
