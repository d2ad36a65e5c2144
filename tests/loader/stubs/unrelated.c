/* unrelated.c -- a shared library that sits in a plugin search directory without being a backend: opening it would run this constructor. */
#include <stdlib.h>

/* Marks the process when the library is mapped, so a test can tell even
 * without RTLD_NOLOAD. */
__attribute__((constructor)) static void unrelated_loaded(void) {
  setenv("UNRELATED_CONSTRUCTOR_RAN", "1", 1);
}

__attribute__((visibility("default"))) int unrelated_symbol(void);
int unrelated_symbol(void) { return 42; }
