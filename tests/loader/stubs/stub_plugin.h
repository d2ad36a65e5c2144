/* stub_plugin.h -- what the test stub plugins export besides the ABI: counters of the plugin code that ran. */
#ifndef VYRE_TESTS_STUB_PLUGIN_H
#define VYRE_TESTS_STUB_PLUGIN_H

#include "vyre/vyre.h"

/* Exported as `stub_calls` by every stub; atomic because the thread
 * tests create instances from many threads. */
typedef struct stub_counters {
  _Atomic int entry;   /* vyre_plugin_entry calls */
  _Atomic int create;  /* factory calls */
  _Atomic int destroy; /* instances destroyed */
  _Atomic int live;    /* instances alive */
  void *_Atomic last;  /* the latest instance (calloc'ed), so a test can
                          free one the host refused and could not destroy */
  _Atomic int last_minor; /* vyre_backend_options.abi_minor the last create
                             got; -1 when the options were too short */
  _Atomic int ext_seen;   /* STUB_EXT_TYPE structs seen in options chains */
  _Atomic int outputs_freed; /* outputs_free calls (STUB_EVIL) */
} stub_counters;

/* STUB_EVIL: the environment variable that picks what the stub's entries
 * get wrong (see stub_plugin.c), and the program its outputs fit: one
 * output of 4 u32, 16 bytes. */
#define STUB_EVIL_ENV "STUB_EVIL"
#define STUB_EVIL_PROGRAM \
  "workgroup 4\nbuffer y wo u32 [4]\n%i = gid.x\n%c = const u32 7\nstore y %i %c\n"
#define STUB_EVIL_OUTPUT_BYTES 16u

/* The chain type the stubs count in vyre_backend_options.next ("ST"). */
#define STUB_EXT_TYPE 0x53540001u

/* The test extension every full-size stub serves at revisions 1 and 2. */
#define STUB_ECHO_NAME "vyre.stub.echo"
typedef struct stub_echo_ext {
  vyre_extension_head head;
  uint32_t (*echo)(vyre_backend *self, uint32_t value);
} stub_echo_ext;

#define STUB_COUNTERS_SYMBOL "stub_calls"

#endif /* VYRE_TESTS_STUB_PLUGIN_H */
