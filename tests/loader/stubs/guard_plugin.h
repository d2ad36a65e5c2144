/* guard_plugin.h -- what the trusting test plugin of the checking instance's suite (libhostile_guard.so, tests/loader/check_guard.c) exports besides the ABI. */
#ifndef VYRE_TESTS_GUARD_PLUGIN_H
#define VYRE_TESTS_GUARD_PLUGIN_H

#include "vyre/vyre.h"

/* Exported as `guard_calls`: the plugin code that ran. */
typedef struct guard_counters {
  _Atomic int create;        /* factory calls */
  _Atomic int destroy;       /* instances destroyed */
  _Atomic int live;          /* instances alive */
  _Atomic int calls;         /* vtable entries (but destroy and outputs_free) that ran */
  _Atomic int outputs_made;  /* vyre_outputs handed out */
  _Atomic int outputs_freed; /* vyre_outputs freed */
} guard_counters;

#define GUARD_COUNTERS_SYMBOL "guard_calls"
/* The factory returns this number as its status when set (a decimal):
 * what a broken plugin might return instead of a vyre_status. */
#define GUARD_FACTORY_STATUS_ENV "GUARD_FACTORY_STATUS"

/* The extension it serves, "vyre.guarded.import" revision 1: a function
 * that makes a resident buffer out of the host's sight (as
 * vyre.cuda.interop's resident_import does).  It takes the native
 * instance. */
#define GUARD_IMPORT_NAME "vyre.guarded.import"
typedef struct guard_import_ext {
  vyre_extension_head head;
  vyre_status (*import)(vyre_backend *self, vyre_resident *out, vyre_error *err);
} guard_import_ext;

#endif /* VYRE_TESTS_GUARD_PLUGIN_H */
