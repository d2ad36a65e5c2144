/* stub_plugin.c -- one test plugin, compiled with -D flags into a good variant and one per way a plugin can be broken. */
/*
 * Knobs (tests/host.mk sets them per variant):
 *   STUB_ID "x"            registration id (default "stub")
 *   STUB_PRECEDENCE n      (default 50)
 *   STUB_MAJOR n           descriptor/registration ABI major (default VYRE_ABI_MAJOR)
 *   STUB_MINOR_MIN/MAX n   minor range served (default VYRE_ABI_MINOR..VYRE_ABI_MINOR)
 *   STUB_MAGIC n           descriptor magic
 *   STUB_SHORT_DESC        export a 16-byte descriptor (struct_size 16)
 *   STUB_DESC_REG_SIZE n   descriptor registration_size
 *   STUB_REG_SIZE n        registration struct_size
 *   STUB_NO_DESCRIPTOR     export no descriptor
 *   STUB_NO_ENTRY          export no entry function
 *   STUB_ENTRY_FAILS       the entry returns VYRE_INTERNAL
 *   STUB_LIE_MINOR         the registration claims abi_minor = STUB_MINOR_MAX
 *   STUB_BAD_OP            list an op id that does not exist
 *   STUB_FACTORY_FAILS     create returns VYRE_NO_DEVICE
 *   STUB_VTABLE_SIZE n     the instance's vtable struct_size
 *   STUB_DESC_VTABLE_SIZE n  descriptor vtable_size
 * The counters in `stub_calls` let tests see which plugin code ran.
 */
#include <stdatomic.h>
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
#define STUB_MINOR_MIN VYRE_ABI_MINOR
#endif
#ifndef STUB_MINOR_MAX
#define STUB_MINOR_MAX VYRE_ABI_MINOR
#endif
#ifndef STUB_MAGIC
#define STUB_MAGIC VYRE_PLUGIN_MAGIC
#endif
#ifndef STUB_DESC_REG_SIZE
#define STUB_DESC_REG_SIZE sizeof(vyre_registration)
#endif
#ifndef STUB_REG_SIZE
#define STUB_REG_SIZE sizeof(vyre_registration)
#endif
#ifndef STUB_VTABLE_SIZE
#define STUB_VTABLE_SIZE sizeof(vyre_backend_vtable)
#endif
#ifndef STUB_DESC_VTABLE_SIZE
#define STUB_DESC_VTABLE_SIZE sizeof(vyre_backend_vtable)
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

/* Everything after metrics stays NULL: hosts must check before calling. */
static const __attribute__((unused)) vyre_backend_vtable stub_vtable = {
    .struct_size = STUB_VTABLE_SIZE,
    .destroy = stub_destroy,
    .device_profile = stub_device_profile,
    .prepare = stub_ok,
    .shutdown = stub_ok,
    .metrics = stub_metrics,
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
    VYRE_OP_CONST, VYRE_OP_LOAD, VYRE_OP_ADD, VYRE_OP_STORE,
#ifdef STUB_BAD_OP
    250,
#endif
};

static __attribute__((unused)) vyre_registration stub_registration = {
    .struct_size = STUB_REG_SIZE,
    .abi_major = STUB_MAJOR,
    .abi_minor = 0,
    .id = STUB_ID,
    .version = "0.0.1-stub",
    .description = "test stub plugin (" STUB_ID ")",
    .precedence = STUB_PRECEDENCE,
    .op_count = sizeof stub_ops / sizeof stub_ops[0],
    .ops = stub_ops,
    .capabilities = VYRE_CAP_BARRIER | VYRE_CAP_F16,
    .storage_types = VYRE_TBIT(VYRE_T_U32) | VYRE_TBIT(VYRE_T_F32),
    .create = stub_create,
};

#ifndef STUB_NO_DESCRIPTOR
/* The typedef and the exported object share a name, so the object gets
 * it through an assembler label. */
#ifdef STUB_SHORT_DESC
typedef struct {
  uint32_t struct_size, magic;
  uint16_t abi_major, abi_minor_min, abi_minor_max, reserved;
} stub_short_descriptor;
STUB_EXPORT const stub_short_descriptor stub_descriptor __asm__("vyre_plugin_descriptor") = {
    sizeof(stub_short_descriptor), STUB_MAGIC, STUB_MAJOR, STUB_MINOR_MIN, STUB_MINOR_MAX, 0};
#else
STUB_EXPORT const vyre_plugin_descriptor stub_descriptor __asm__("vyre_plugin_descriptor") = {
    .struct_size = sizeof(vyre_plugin_descriptor),
    .magic = STUB_MAGIC,
    .abi_major = STUB_MAJOR,
    .abi_minor_min = STUB_MINOR_MIN,
    .abi_minor_max = STUB_MINOR_MAX,
    .registration_size = STUB_DESC_REG_SIZE,
    .vtable_size = STUB_DESC_VTABLE_SIZE,
    .build_id = "stub " STUB_ID,
};
#endif
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
  /* Read the range from the descriptor, as a real plugin would. */
  uint16_t lo = stub_minor_min, hi = stub_minor_max;
  uint16_t minor = host_minor < hi ? host_minor : hi;
  if (minor < lo)
    return vyre_error_set(err, VYRE_ABI_MISMATCH, 0, "stub: host minor %u below %u. Fix: rebuild",
                          host_minor, lo);
#ifdef STUB_LIE_MINOR
  minor = STUB_MINOR_MAX;
#endif
  stub_registration.abi_minor = minor;
  *out = &stub_registration;
  return VYRE_OK;
#endif
}
#endif
