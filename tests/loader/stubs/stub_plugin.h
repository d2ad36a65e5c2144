/* stub_plugin.h -- what the test stub plugins export besides the ABI: counters of the plugin code that ran. */
#ifndef VYRE_TESTS_STUB_PLUGIN_H
#define VYRE_TESTS_STUB_PLUGIN_H

/* Exported as `stub_calls` by every stub; atomic because the thread
 * tests create instances from many threads. */
typedef struct stub_counters {
  _Atomic int entry;   /* vyre_plugin_entry calls */
  _Atomic int create;  /* factory calls */
  _Atomic int destroy; /* instances destroyed */
  _Atomic int live;    /* instances alive */
  void *_Atomic last;  /* the latest instance (calloc'ed), so a test can
                          free one the host refused and could not destroy */
} stub_counters;

#define STUB_COUNTERS_SYMBOL "stub_calls"

#endif /* VYRE_TESTS_STUB_PLUGIN_H */
