/* stub_plugin.c -- one test plugin, compiled with -D flags into a good variant and one per way a plugin can be broken. */
/*
 * Knobs (tests/host.mk sets them per variant):
 *   STUB_ID "x"            registration id (default "stub")
 *   STUB_PRECEDENCE n      (default 50)
 *   STUB_MAJOR n           descriptor/registration ABI major (default VYRE_ABI_MAJOR)
 *   STUB_MINOR_MIN/MAX n   minor range served (default 0..VYRE_ABI_MINOR)
 *   STUB_MAGIC n           descriptor magic
 *   STUB_RELEASE n         descriptor release (default VYRE_DESCRIPTOR_RELEASE)
 *   STUB_SHORT_DESC        export a 16-byte descriptor (struct_size 16)
 *   STUB_TINY_DESC         export an 8-byte descriptor object (struct_size 88)
 *   STUB_FUNC_DESC         export a function named vyre_plugin_descriptor
 *   STUB_MUTABLE_DESC      a writable descriptor that a constructor changes
 *   STUB_IMPORTS_VYRE      import a vyre_ function no libvyre defines (a plugin
 *                          linked against a newer libvyre.so than the host has)
 *   STUB_CTOR_MARKER       an ELF constructor that creates the file named
 *                          by $STUB_CTOR_MARKER (proof that plugin code ran)
 *   STUB_DESC_REG_SIZE n   descriptor registration_size
 *   STUB_REG_SIZE n        registration struct_size
 *   STUB_NO_DESCRIPTOR     export no descriptor
 *   STUB_NO_ENTRY          export no entry function
 *   STUB_ENTRY_FAILS       the entry returns VYRE_INTERNAL
 *   STUB_LIE_MINOR         the registration claims abi_minor = STUB_MINOR_MAX
 *   STUB_FUTURE            a plugin of a newer minor: lists an op id and a
 *                          capability bit this host does not know, and its
 *                          registration has fields this host does not know
 *   STUB_DUP_OP            list one op id twice
 *   STUB_ABI10             an ABI 1.0 plugin: 1.0-sized registration and
 *                          vtable (no op_types, no get_extension)
 *   STUB_FACTORY_FAILS     create returns VYRE_NO_DEVICE
 *   STUB_VTABLE_SIZE n     the instance's vtable struct_size
 *   STUB_DESC_VTABLE_SIZE n  descriptor vtable_size
 *   STUB_SELECT            for choosing by program: also claims gid and mul
 *                          and f16 storage (its device profile has no f16)
 *   STUB_ESCAPES           version and description full of terminal escapes
 *   STUB_EVIL              a hostile backend: dispatch, the pending entries,
 *                          device_profile, metrics and get_extension return
 *                          what $STUB_EVIL asks for (the modes are listed
 *                          at evil_mode below); unset, they behave
 * The counters in `stub_calls` let tests see which plugin code ran.
 */
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "stub_plugin.h"
#include "vyre/vyre.h"
#include "vyre/vyre_program.h"
#include "vyre/vyre_support.h"

#define STUB_EXPORT __attribute__((visibility("default")))

#ifndef STUB_ID
#define STUB_ID "stub"
#endif
#ifndef STUB_PRECEDENCE
#define STUB_PRECEDENCE 50
#endif
#ifndef STUB_MAJOR
#define STUB_MAJOR VYRE_ABI_MAJOR
#endif
#ifndef STUB_MINOR_MIN
#define STUB_MINOR_MIN 0
#endif
#ifndef STUB_MINOR_MAX
#define STUB_MINOR_MAX VYRE_ABI_MINOR
#endif
#ifndef STUB_MAGIC
#define STUB_MAGIC VYRE_PLUGIN_MAGIC
#endif
#ifndef STUB_RELEASE
#define STUB_RELEASE VYRE_DESCRIPTOR_RELEASE
#endif
/* The sizes the 1.0 headers had: everything up to the 1.1 fields. */
#define STUB_REG_SIZE_10 offsetof(vyre_registration, op_types)
#define STUB_VTABLE_SIZE_10 offsetof(vyre_backend_vtable, get_extension)
/* A registration of a newer minor: 1.1's fields, then some we do not know. */
typedef struct stub_future_registration {
  vyre_registration r;
  uint64_t later[4];
} stub_future_registration;

#ifdef STUB_ABI10
#define STUB_DEFAULT_REG_SIZE STUB_REG_SIZE_10
#define STUB_DEFAULT_VTABLE_SIZE STUB_VTABLE_SIZE_10
#elif defined(STUB_FUTURE)
#define STUB_DEFAULT_REG_SIZE sizeof(stub_future_registration)
#define STUB_DEFAULT_VTABLE_SIZE sizeof(vyre_backend_vtable)
#else
#define STUB_DEFAULT_REG_SIZE sizeof(vyre_registration)
#define STUB_DEFAULT_VTABLE_SIZE sizeof(vyre_backend_vtable)
#endif
#ifndef STUB_DESC_REG_SIZE
#define STUB_DESC_REG_SIZE STUB_DEFAULT_REG_SIZE
#endif
#ifndef STUB_REG_SIZE
#define STUB_REG_SIZE STUB_DEFAULT_REG_SIZE
#endif
#ifndef STUB_VTABLE_SIZE
#define STUB_VTABLE_SIZE STUB_DEFAULT_VTABLE_SIZE
#endif
#ifndef STUB_DESC_VTABLE_SIZE
#define STUB_DESC_VTABLE_SIZE STUB_DEFAULT_VTABLE_SIZE
#endif

/* What ran, for the tests (read through dlsym). */
STUB_EXPORT stub_counters stub_calls;

typedef struct stub_backend {
  vyre_backend head;
  uint32_t ordinal;
} stub_backend;

static void stub_destroy(vyre_backend *self) {
  if (!self) return;
  stub_calls.destroy++;
  stub_calls.live--;
  memset(self, 0, sizeof(stub_backend));
  free(self);
}

static vyre_status stub_device_profile(vyre_backend *self, vyre_device_profile *out,
                                       vyre_error *err) {
  if (!out || out->struct_size < sizeof(uint32_t))
    return vyre_error_set(err, VYRE_INVALID_ARGUMENT, 0, "stub device_profile: bad out. Fix: set struct_size");
  vyre_device_profile p;
  memset(&p, 0, sizeof p);
  p.struct_size = out->struct_size;
  p.ordinal = ((stub_backend *)self)->ordinal;
  strcpy(p.name, "stub device");
  strcpy(p.backend_id, STUB_ID);
  p.compute_units = 1;
  p.subgroup_size = 32;
  p.capabilities = VYRE_CAP_BARRIER;
  memcpy(out, &p, out->struct_size < sizeof p ? out->struct_size : sizeof p);
  return VYRE_OK;
}

static vyre_status stub_ok(vyre_backend *self, vyre_error *err) { return VYRE_OK; }

static vyre_status stub_metrics(vyre_backend *self, vyre_metric *out, uint32_t capacity,
                                uint32_t *count, vyre_error *err) {
  if (capacity > 0 && out) {
    memset(&out[0], 0, sizeof out[0]);
    strcpy(out[0].name, "stub.creates");
    out[0].value = (uint64_t)stub_calls.create;
  }
  if (count) *count = 1;
  return VYRE_OK;
}

/* The test extension "vyre.stub.echo" revision 2: echo returns its
 * argument plus the instance's ordinal. */
static uint32_t stub_echo(vyre_backend *self, uint32_t value) {
  return value + ((stub_backend *)self)->ordinal;
}
static const stub_echo_ext stub_echo_table = {{sizeof(stub_echo_ext), 2}, stub_echo};

static vyre_status stub_get_extension(vyre_backend *self, const char *name, uint32_t version,
                                      const void **out, vyre_error *err) {
  (void)self;
  if (!out)
    return vyre_error_set(err, VYRE_INVALID_ARGUMENT, 0, "stub get_extension: out is NULL. Fix: pass one");
  *out = NULL;
  if (name && strcmp(name, STUB_ECHO_NAME) == 0 && version >= 1 &&
      version <= stub_echo_table.head.version) {
    *out = &stub_echo_table;
    return VYRE_OK;
  }
  return vyre_error_set(err, VYRE_UNSUPPORTED, 0,
                        "stub get_extension: '%s' revision %u is not served (only "
                        STUB_ECHO_NAME " 1 to 2). Fix: check registration->extensions",
                        name ? name : "(null)", version);
}

#ifdef STUB_EVIL
/*
 * $STUB_EVIL modes, each one way a backend can lie:
 *   count  3 outputs in an array of 1      items   items NULL
 *   data   16 bytes at data NULL           size    1 MiB claimed, 16 bytes there
 *   noout  VYRE_OK without outputs         status  status 77 (no vyre_status)
 *   nonul  an error message without NUL    poll    *ready = 7
 *   profile  device name and id without NUL
 *   metrics  metric names without NUL      ext     VYRE_OK without a table
 *   escmsg   an error message with terminal escapes (ESC [2J, OSC, C1 CSI)
 *   escname  a device name with terminal escapes
 */
static int evil_mode(const char *mode) {
  const char *m = getenv(STUB_EVIL_ENV);
  return m && strcmp(m, mode) == 0;
}

typedef struct evil_outputs {
  vyre_outputs o;
  vyre_output item[1];
  unsigned char data[STUB_EVIL_OUTPUT_BYTES];
} evil_outputs;

static vyre_status evil_outputs_make(vyre_outputs **out, vyre_error *err) {
  if (out) *out = NULL;
  if (evil_mode("status")) return (vyre_status)77;
  if (evil_mode("nonul")) {
    if (err && err->struct_size >= sizeof *err) {
      err->status = VYRE_DRIVER;
      memset(err->message, 'A', sizeof err->message);
    }
    return VYRE_DRIVER;
  }
  if (evil_mode("escmsg")) {
    if (err && err->struct_size >= sizeof *err) {
      err->status = VYRE_DRIVER;
      snprintf(err->message, sizeof err->message,
               "driver says \033[2J\033]0;pwned\a\xc2\x9b" "1m gone\nsecond line");
    }
    return VYRE_DRIVER;
  }
  if (evil_mode("noout") || !out) return VYRE_OK;
  evil_outputs *e = calloc(1, sizeof *e);
  if (!e) return vyre_error_set(err, VYRE_OUT_OF_MEMORY, 0, "stub: out of memory. Fix: free memory");
  e->o.struct_size = sizeof e->o;
  e->o.count = 1;
  e->o.items = e->item;
  e->item[0].data = e->data;
  e->item[0].size = STUB_EVIL_OUTPUT_BYTES;
  memset(e->data, 7, sizeof e->data);
  if (evil_mode("count")) e->o.count = 3;
  if (evil_mode("items")) e->o.items = NULL;
  if (evil_mode("data")) e->item[0].data = NULL;
  if (evil_mode("size")) e->item[0].size = 1u << 20;
  *out = &e->o;
  return VYRE_OK;
}

static vyre_status evil_dispatch(vyre_backend *self, const vyre_program_ref *program,
                                 const vyre_input *inputs, uint32_t input_count,
                                 const vyre_dispatch_options *options, vyre_outputs **out,
                                 vyre_timing *timing, vyre_error *err) {
  (void)self, (void)program, (void)inputs, (void)input_count, (void)options, (void)timing;
  return evil_outputs_make(out, err);
}

static void evil_outputs_free(vyre_backend *self, vyre_outputs *outputs) {
  (void)self;
  if (!outputs) return;
  stub_calls.outputs_freed++;
  free(outputs); /* the evil_outputs it heads */
}

static vyre_status evil_dispatch_async(vyre_backend *self, const vyre_program_ref *program,
                                       const vyre_input *inputs, uint32_t input_count,
                                       const vyre_dispatch_options *options, vyre_pending *out,
                                       vyre_error *err) {
  (void)self, (void)program, (void)inputs, (void)input_count, (void)options, (void)err;
  *out = 42;
  return VYRE_OK;
}

static vyre_status evil_pending_poll(vyre_backend *self, vyre_pending pending, int *ready,
                                     vyre_error *err) {
  (void)self, (void)pending, (void)err;
  *ready = evil_mode("poll") ? 7 : 1;
  return VYRE_OK;
}

static vyre_status evil_pending_wait(vyre_backend *self, vyre_pending pending,
                                     vyre_outputs **out, vyre_timing *timing, vyre_error *err) {
  (void)self, (void)pending, (void)timing;
  return evil_outputs_make(out, err);
}

static vyre_status evil_device_profile(vyre_backend *self, vyre_device_profile *out,
                                       vyre_error *err) {
  vyre_status st = stub_device_profile(self, out, err);
  if (st == VYRE_OK && evil_mode("profile") && out->struct_size >= sizeof *out) {
    memset(out->name, 'N', sizeof out->name);
    memset(out->backend_id, 'I', sizeof out->backend_id);
  }
  if (st == VYRE_OK && evil_mode("escname") && out->struct_size >= sizeof *out)
    snprintf(out->name, sizeof out->name, "GPU\033[2J\033[31m red");
  return st;
}

static vyre_status evil_metrics(vyre_backend *self, vyre_metric *out, uint32_t capacity,
                                uint32_t *count, vyre_error *err) {
  vyre_status st = stub_metrics(self, out, capacity, count, err);
  if (st == VYRE_OK && evil_mode("metrics") && capacity > 0 && out)
    memset(out[0].name, 'M', sizeof out[0].name);
  return st;
}

static vyre_status evil_get_extension(vyre_backend *self, const char *name, uint32_t version,
                                      const void **out, vyre_error *err) {
  if (evil_mode("ext")) {
    *out = NULL;
    return VYRE_OK;
  }
  return stub_get_extension(self, name, version, out, err);
}
#define STUB_DISPATCH evil_dispatch
#define STUB_OUTPUTS_FREE evil_outputs_free
#define STUB_DISPATCH_ASYNC evil_dispatch_async
#define STUB_PENDING_POLL evil_pending_poll
#define STUB_PENDING_WAIT evil_pending_wait
#define STUB_DEVICE_PROFILE evil_device_profile
#define STUB_METRICS evil_metrics
#define STUB_GET_EXTENSION evil_get_extension
#else
#define STUB_DISPATCH NULL
#define STUB_OUTPUTS_FREE NULL
#define STUB_DISPATCH_ASYNC NULL
#define STUB_PENDING_POLL NULL
#define STUB_PENDING_WAIT NULL
#define STUB_DEVICE_PROFILE stub_device_profile
#define STUB_METRICS stub_metrics
#define STUB_GET_EXTENSION stub_get_extension
#endif

/* Everything after metrics stays NULL except get_extension (and, in the
 * evil stub, dispatch and the pending entries): hosts must check before
 * calling. */
static const __attribute__((unused)) vyre_backend_vtable stub_vtable = {
    .struct_size = STUB_VTABLE_SIZE,
    .destroy = stub_destroy,
    .device_profile = STUB_DEVICE_PROFILE,
    .prepare = stub_ok,
    .shutdown = stub_ok,
    .metrics = STUB_METRICS,
    .dispatch = STUB_DISPATCH,
    .dispatch_async = STUB_DISPATCH_ASYNC,
    .pending_poll = STUB_PENDING_POLL,
    .pending_wait = STUB_PENDING_WAIT,
    .outputs_free = STUB_OUTPUTS_FREE,
    .get_extension = STUB_GET_EXTENSION,
};

static vyre_status stub_create(const vyre_backend_options *options, vyre_backend **out,
                               vyre_error *err) {
  stub_calls.create++;
  *out = NULL;
#ifdef STUB_FACTORY_FAILS
  return vyre_error_set(err, VYRE_NO_DEVICE, 0,
                        "stub '%s': no stub device here (told to fail). Fix: none, this is a "
                        "test plugin",
                        STUB_ID);
#else
  uint32_t ordinal = 0;
  if (options && options->struct_size >= offsetof(vyre_backend_options, flags))
    ordinal = options->device_ordinal;
  stub_calls.last_minor = -1;
  if (options && options->struct_size >= offsetof(vyre_backend_options, next))
    stub_calls.last_minor = (int)options->abi_minor;
  /* Walk the chain: count the structs of our test type, skip the rest. */
  if (options && options->struct_size >= offsetof(vyre_backend_options, next) + sizeof(void *))
    for (const vyre_ext *x = options->next; x; x = x->next)
      if (x->type == STUB_EXT_TYPE) stub_calls.ext_seen++;
  if (ordinal != 0)
    return vyre_error_set(err, VYRE_NO_DEVICE, 0,
                          "stub: device %u does not exist (1 device). Fix: use device 0", ordinal);
  stub_backend *b = calloc(1, sizeof *b);
  if (!b) return vyre_error_set(err, VYRE_OUT_OF_MEMORY, 0, "stub: out of memory. Fix: free memory");
  b->head.struct_size = sizeof b->head;
  b->head.vt = &stub_vtable;
  b->ordinal = ordinal;
  stub_calls.live++;
  stub_calls.last = b;
  *out = &b->head;
  return VYRE_OK;
#endif
}

static const __attribute__((unused)) uint16_t stub_ops[] = {
#ifdef STUB_SELECT
    VYRE_OP_INVOCATION_ID, VYRE_OP_MUL,
#endif
    VYRE_OP_CONST, VYRE_OP_LOAD, VYRE_OP_ADD, VYRE_OP_STORE,
#ifdef STUB_FUTURE
    250, /* an op id of a later minor */
#endif
#ifdef STUB_DUP_OP
    VYRE_OP_ADD,
#endif
};

#ifdef STUB_FUTURE
#define STUB_CAPS (VYRE_CAP_BARRIER | VYRE_CAP_F16 | (1ull << 40))
#else
#define STUB_CAPS (VYRE_CAP_BARRIER | VYRE_CAP_F16)
#endif
#ifdef STUB_SELECT
#define STUB_STORAGE_MORE VYRE_TBIT(VYRE_T_F16)
#else
#define STUB_STORAGE_MORE 0
#endif
#ifdef STUB_LIE_MINOR
#define STUB_REG_MINOR STUB_MINOR_MAX
#elif defined(STUB_ABI10)
#define STUB_REG_MINOR 0
#else
#define STUB_REG_MINOR VYRE_ABI_MINOR
#endif

/* Type masks: add only at u32, the rest at every type. */
static const uint32_t stub_op_types[] = {
#ifdef STUB_SELECT
                                         0, 0,
#endif
                                         0, 0, VYRE_TBIT(VYRE_T_U32), 0,
#ifdef STUB_FUTURE
                                         0,
#endif
#ifdef STUB_DUP_OP
                                         0,
#endif
};

#ifdef STUB_ESCAPES
/* Terminal escapes in every string a plugin gives: clear the screen (CSI
 * as ESC [ and as UTF-8 C2 9B, and a lone 0x9B), set the window title
 * (OSC ... BEL), a carriage return. */
#define STUB_VERSION "1.0\033]0;pwned\a"
#define STUB_DESCRIPTION "clears \033[2J the screen\r \xc2\x9b" "2J \x9b" "2J caf\xc3\xa9"
#else
#define STUB_VERSION "0.0.1-stub"
#define STUB_DESCRIPTION "test stub plugin (" STUB_ID ")"
#endif

/* Immutable: one registration for every minor (the host records the
 * negotiated one). */
static const __attribute__((unused)) stub_future_registration stub_registration = {{
    .struct_size = STUB_REG_SIZE,
    .abi_major = STUB_MAJOR,
    .abi_minor = STUB_REG_MINOR,
    .id = STUB_ID,
    .version = STUB_VERSION,
    .description = STUB_DESCRIPTION,
    .precedence = STUB_PRECEDENCE,
    .op_count = sizeof stub_ops / sizeof stub_ops[0],
    .ops = stub_ops,
    .capabilities = STUB_CAPS,
    .storage_types = VYRE_TBIT(VYRE_T_U32) | VYRE_TBIT(VYRE_T_F32) | STUB_STORAGE_MORE,
    .create = stub_create,
    .op_types = stub_op_types,
    .extensions = STUB_ECHO_NAME "@2",
}, {0, 0, 0, 0}};

#ifndef STUB_NO_DESCRIPTOR
#if defined(STUB_TINY_DESC)
/* 8 bytes: struct_size and magic of a full descriptor, nothing after. */
STUB_EXPORT const uint32_t vyre_plugin_descriptor[2] = {sizeof(vyre_descriptor), STUB_MAGIC};
#elif defined(STUB_FUNC_DESC)
/* A function where the descriptor should be (its code read as data
 * would start with instruction bytes). */
STUB_EXPORT void vyre_plugin_descriptor(void);
void vyre_plugin_descriptor(void) { stub_calls.entry += 1000; }
#elif defined(STUB_SHORT_DESC)
typedef struct {
  uint32_t struct_size, magic;
  uint16_t abi_major, abi_minor_min, abi_minor_max, reserved;
} stub_short_descriptor;
STUB_EXPORT const stub_short_descriptor vyre_plugin_descriptor = {
    sizeof(stub_short_descriptor), STUB_MAGIC, STUB_MAJOR, STUB_MINOR_MIN, STUB_MINOR_MAX, 0};
#else
/* Written out field by field (not VYRE_DESCRIPTOR_INIT) so that each
 * can be broken on purpose. */
#ifdef STUB_MUTABLE_DESC
#define STUB_DESC_QUALIFIER
#else
#define STUB_DESC_QUALIFIER const
#endif
VYRE_PLUGIN_EXPORT STUB_DESC_QUALIFIER vyre_descriptor vyre_plugin_descriptor = {
    .struct_size = sizeof(vyre_descriptor),
    .magic = STUB_MAGIC,
    .abi_major = STUB_MAJOR,
    .abi_minor_min = STUB_MINOR_MIN,
    .abi_minor_max = STUB_MINOR_MAX,
    .release = STUB_RELEASE,
    .registration_size = STUB_DESC_REG_SIZE,
    .vtable_size = STUB_DESC_VTABLE_SIZE,
    .build_id = "stub " STUB_ID,
};
#ifdef STUB_MUTABLE_DESC
/* Serve more minors once loaded than the file says. */
__attribute__((constructor)) static void stub_mutate_descriptor(void) {
  vyre_plugin_descriptor.abi_minor_max = 7;
}
#endif
#endif
#endif

#ifdef STUB_CTOR_MARKER
__attribute__((constructor)) static void stub_constructor(void) {
  const char *path = getenv("STUB_CTOR_MARKER");
  FILE *f = path && *path ? fopen(path, "w") : NULL;
  if (f) fclose(f);
}
#endif

#ifdef STUB_IMPORTS_VYRE
/* Not in any libvyre: dlopen (RTLD_NOW) fails with "undefined symbol". */
extern int vyre_stub_function_of_a_newer_libvyre(void);
__attribute__((used)) int stub_imports_vyre(void);
__attribute__((used)) int stub_imports_vyre(void) { return vyre_stub_function_of_a_newer_libvyre(); }
#endif

#ifndef STUB_NO_ENTRY
static const volatile uint16_t stub_minor_min = STUB_MINOR_MIN, stub_minor_max = STUB_MINOR_MAX;

STUB_EXPORT vyre_status vyre_plugin_entry(uint16_t host_major, uint16_t host_minor,
                                          const vyre_registration **out, vyre_error *err);
vyre_status vyre_plugin_entry(uint16_t host_major, uint16_t host_minor,
                              const vyre_registration **out, vyre_error *err) {
  stub_calls.entry++;
  *out = NULL;
#ifdef STUB_ENTRY_FAILS
  return vyre_error_set(err, VYRE_INTERNAL, 0,
                        "stub entry: initialisation failed (told to fail). Fix: none, this is a "
                        "test plugin");
#else
  if (host_major != STUB_MAJOR)
    return vyre_error_set(err, VYRE_ABI_MISMATCH, 0, "stub: host ABI %u, stub %u. Fix: rebuild",
                          host_major, (unsigned)STUB_MAJOR);
  uint16_t lo = stub_minor_min, hi = stub_minor_max;
  uint16_t minor = host_minor < hi ? host_minor : hi;
  if (minor < lo)
    return vyre_error_set(err, VYRE_ABI_MISMATCH, 0, "stub: host minor %u below %u. Fix: rebuild",
                          host_minor, lo);
  *out = &stub_registration.r;
  return VYRE_OK;
#endif
}
#endif
