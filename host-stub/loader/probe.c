/* probe.c -- vyre-probe: load one new plugin file in a process of its own, read its descriptor and registration, and report on stdout, so that a file that crashes or hangs kills only this process (docs/host.md, "Judging a new plugin in a child"). */
/*
 * Usage (libvyre-host runs it with posix_spawn; it is no user command):
 *   vyre-probe HOST_MINOR FILE
 * FILE is "/proc/self/fd/3" when the host passed its checked descriptor
 * as fd 3 (the file it judged, not whatever the path names now), else
 * the path.  HOST_MINOR is the ABI minor the host's entry call offers.
 *
 * The report, one line each (protocol 1; the host needs the first and
 * the last line, the ones between are for `VYRE_LOG=debug`):
 *   vyre-probe 1
 *   dlopen ok | dlopen failed
 *   entry STATUS            (the vyre_status number the entry returned)
 *   registration ID         (the id, control bytes as '?')
 *   end
 * Everything the host would read is read here first: the descriptor, the
 * registration struct, the id, version, description and extension
 * strings, the op and op-type arrays.  A clean failure (dlopen refused,
 * the entry refused) is a report too: the host then loads the file and
 * says why.  Then exit(0): the plugin's destructors run, as they would
 * when a host exits, so one that crashes or hangs there is caught too.
 */
#include <dlfcn.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "vyre/vyre.h"

#define PROBE_PROTOCOL 1
#define PROBE_STRUCT_MAX 65536u
#define PROBE_OPS_MAX 65536u

/* One report line on stdout (a pipe to the host), written at once. */
static void say(const char *fmt, ...) {
  char line[512];
  va_list ap;
  va_start(ap, fmt);
  int n = vsnprintf(line, sizeof line - 1, fmt, ap);
  va_end(ap);
  if (n < 0) return;
  if ((size_t)n > sizeof line - 2) n = (int)sizeof line - 2;
  line[n++] = '\n';
  for (ssize_t done = 0, w; done < n; done += w)
    if ((w = write(1, line + done, (size_t)(n - done))) <= 0) _exit(3);
}

/* Touch the bytes of a plugin string the host would read (at most max). */
static size_t touch_string(const char *s, size_t max) { return s ? strnlen(s, max) : 0; }

/* Read what the host reads of the registration, as the host reads it. */
static void read_registration(const vyre_registration *reg, uint16_t minor) {
  uint32_t size;
  memcpy(&size, reg, sizeof size);
  if (size < sizeof(uint32_t) || size > PROBE_STRUCT_MAX) {
    say("registration bad-size %u", size);
    return;
  }
  vyre_registration r;
  memset(&r, 0, sizeof r);
  memcpy(&r, reg, size < sizeof r ? size : sizeof r);
  volatile size_t sink = 0;
  sink += touch_string(r.id, 32) + touch_string(r.version, 64) + touch_string(r.description, 256);
  if (minor >= 1 && size >= offsetof(vyre_registration, extensions) + sizeof(void *))
    sink += touch_string(r.extensions, 256);
  if (r.ops && r.op_count < PROBE_OPS_MAX)
    for (uint32_t i = 0; i < r.op_count; i++) sink += r.ops[i];
  if (minor >= 1 && size >= offsetof(vyre_registration, op_types) + sizeof(void *) &&
      r.op_types && r.op_count < PROBE_OPS_MAX)
    for (uint32_t i = 0; i < r.op_count; i++) sink += r.op_types[i];
  (void)sink;
  char id[32] = "";
  size_t n = touch_string(r.id, sizeof id - 1);
  for (size_t i = 0; i < n; i++) {
    unsigned char c = (unsigned char)r.id[i];
    id[i] = (c <= 0x20 || c == 0x7f) ? '?' : (char)c;
  }
  id[n] = '\0';
  say("registration %s", n ? id : "(none)");
}

int main(int argc, char **argv) {
  if (argc != 3) {
    fprintf(stderr, "vyre-probe: usage: vyre-probe HOST_MINOR FILE (run by libvyre-host, not "
                    "by hand; docs/host.md)\n");
    return 2;
  }
  char *end;
  unsigned long minor = strtoul(argv[1], &end, 10);
  if (*end || minor > 0xffff) {
    fprintf(stderr, "vyre-probe: HOST_MINOR '%s' is not a minor version\n", argv[1]);
    return 2;
  }
  say("vyre-probe %d", PROBE_PROTOCOL);
  void *handle = dlopen(argv[2], RTLD_NOW | RTLD_LOCAL);
  if (!handle) {
    say("dlopen failed");
    say("end");
    _exit(0);
  }
  say("dlopen ok");
  const vyre_descriptor *d = dlsym(handle, VYRE_PLUGIN_DESCRIPTOR_SYMBOL);
  volatile uint32_t sink = d ? d->struct_size + d->magic + d->abi_major : 0;
  (void)sink;
  union {
    void *data;
    vyre_plugin_entry_fn fn;
  } entry = {.data = dlsym(handle, VYRE_PLUGIN_ENTRY_SYMBOL)};
  if (d && entry.data) {
    const vyre_registration *reg = NULL;
    vyre_error err = VYRE_ERROR_INIT;
    vyre_status st = entry.fn(VYRE_ABI_MAJOR, (uint16_t)minor, &reg, &err);
    say("entry %d", (int)st);
    if (st == VYRE_OK && reg) read_registration(reg, (uint16_t)minor);
  }
  say("end");
  exit(0);
}
