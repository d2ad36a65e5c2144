/* hostile_code.c -- plugins whose own code attacks the host: a constructor that crashes, an entry that hangs, an entry or a factory that re-enters libvyre-host. */
/*
 * One knob per variant (tests/loader/local.mk):
 *   HOSTILE_CTOR_SEGV      an ELF constructor dereferences NULL (SIGSEGV)
 *   HOSTILE_ENTRY_HANG     vyre_plugin_entry never returns
 *   HOSTILE_ENTRY_REOPEN   vyre_plugin_entry calls vyre_host_open on
 *                          $HOSTILE_SEARCH_PATH (which holds this plugin)
 *   HOSTILE_CREATE_REENTER the factory opens a host on $HOSTILE_SEARCH_PATH
 *                          and creates its best backend (this plugin again)
 * vyre_host_open and vyre_host_create are looked up with dlsym in the
 * process that loaded the plugin (the plugin links no libvyre-host):
 * where there is none (a probe process), the entry returns
 * VYRE_UNSUPPORTED.  Without a re-entry guard, the last two recurse
 * until the stack overflows.
 */
#include <dlfcn.h>
#include <stdlib.h>
#include <unistd.h>

#include "vyre/vyre.h"
#include "vyre/vyre_host.h"
#include "vyre/vyre_support.h"

#ifndef HOSTILE_ID
#define HOSTILE_ID "hostile"
#endif

#ifdef HOSTILE_CTOR_SEGV
__attribute__((constructor)) static void hostile_constructor(void) {
  volatile int *volatile nowhere = NULL;
  *nowhere = 1;
}
#endif

typedef vyre_status (*open_fn)(const vyre_host_options *, vyre_host **, vyre_error *);
typedef vyre_status (*create_fn)(vyre_host *, const char *, const vyre_backend_options *,
                                 vyre_backend **, uint32_t *, vyre_error *);
typedef void (*close_fn)(vyre_host *);

/* Open a host on $HOSTILE_SEARCH_PATH, through the libvyre-host of the
 * process (RTLD_DEFAULT); VYRE_UNSUPPORTED when it has none. */
__attribute__((unused)) static vyre_status reopen(vyre_host **host, vyre_error *err) {
  union {
    void *data;
    open_fn fn;
  } open = {.data = dlsym(RTLD_DEFAULT, "vyre_host_open")};
  *host = NULL;
  if (!open.data)
    return vyre_error_set(err, VYRE_UNSUPPORTED, 0,
                          "hostile '%s': no vyre_host_open in this process. Fix: none, this "
                          "is a test plugin",
                          HOSTILE_ID);
  vyre_host_options o = {.struct_size = sizeof o,
                         .flags = VYRE_HOST_NO_ENV | VYRE_HOST_NO_DEFAULT_DIRS,
                         .search_path = getenv("HOSTILE_SEARCH_PATH")};
  return open.fn(&o, host, err);
}

static vyre_status hostile_create(const vyre_backend_options *options, vyre_backend **out,
                                  vyre_error *err) {
  (void)options;
  *out = NULL;
#ifdef HOSTILE_CREATE_REENTER
  vyre_host *host;
  vyre_status st = reopen(&host, err);
  if (st != VYRE_OK) return st;
  union {
    void *data;
    create_fn fn;
  } create = {.data = dlsym(RTLD_DEFAULT, "vyre_host_create")};
  union {
    void *data;
    close_fn fn;
  } close = {.data = dlsym(RTLD_DEFAULT, "vyre_host_close")};
  st = create.fn(host, NULL, NULL, out, NULL, err);
  close.fn(host);
  return st;
#else
  return vyre_error_set(err, VYRE_NO_DEVICE, 0,
                        "hostile '%s': no device (test plugin). Fix: none", HOSTILE_ID);
#endif
}

static const vyre_registration hostile_registration = {
    .struct_size = sizeof(vyre_registration),
    .abi_major = VYRE_ABI_MAJOR,
    .abi_minor = VYRE_ABI_MINOR,
    .id = HOSTILE_ID,
    .version = "0",
    .description = "a hostile test plugin",
    .precedence = 1,
    .create = hostile_create,
};

VYRE_PLUGIN_EXPORT const vyre_descriptor vyre_plugin_descriptor =
    VYRE_DESCRIPTOR_INIT(0, VYRE_ABI_MINOR, "hostile " HOSTILE_ID);

VYRE_PLUGIN_EXPORT vyre_status vyre_plugin_entry(uint16_t host_major, uint16_t host_minor,
                                                 const vyre_registration **out, vyre_error *err);
vyre_status vyre_plugin_entry(uint16_t host_major, uint16_t host_minor,
                              const vyre_registration **out, vyre_error *err) {
  (void)host_major, (void)host_minor;
  *out = NULL;
#ifdef HOSTILE_ENTRY_HANG
  for (;;) pause();
#endif
#ifdef HOSTILE_ENTRY_REOPEN
  vyre_host *host;
  vyre_status st = reopen(&host, err);
  if (st != VYRE_OK) return st;
  union {
    void *data;
    close_fn fn;
  } close = {.data = dlsym(RTLD_DEFAULT, "vyre_host_close")};
  close.fn(host);
#endif
  (void)err;
  *out = &hostile_registration;
  return VYRE_OK;
}
