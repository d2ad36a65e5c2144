/* plugin.c -- the only two symbols libvyre-ref.so exports: its descriptor and the entry that negotiates the ABI and returns the registration. */
#include "config.h"

#include "ref.h"

#define REF_EXPORT __attribute__((visibility("default")))

/* Every op of the format: the reference implements them all. */
static const uint16_t ref_ops[] = {
#define REF_OP_ID_(name, id, text, cls, mask, flags) id,
    VYRE_OP_MAP(REF_OP_ID_)
#undef REF_OP_ID_
};

/* Every storage type, bool through f32. */
#define REF_STORAGE_TYPES (((1ull << VYRE_T_COUNT_) - 1u) & ~(1ull << VYRE_T_VOID))

#define REF_REGISTRATION(minor)                                                  \
  {                                                                              \
    .struct_size = sizeof(vyre_registration), .abi_major = VYRE_ABI_MAJOR,       \
    .abi_minor = (minor), .id = REF_BACKEND_ID, .version = PACKAGE_VERSION,      \
    .description = "reference CPU interpreter: the conformance oracle",          \
    .precedence = REF_PRECEDENCE,                                                \
    .op_count = (uint32_t)(sizeof ref_ops / sizeof ref_ops[0]), .ops = ref_ops,  \
    .capabilities = REF_CAPABILITIES, .storage_types = REF_STORAGE_TYPES,        \
    .create = ref_backend_create                                                 \
  }

/* One registration per minor the plugin serves, each saying which minor
 * was negotiated; all immutable, so the entry is thread-safe. */
VYRE_STATIC_ASSERT(VYRE_ABI_MINOR == 0, "add a REF_REGISTRATION per served ABI minor");
static const vyre_registration ref_registrations[VYRE_ABI_MINOR + 1] = {REF_REGISTRATION(0)};

/* The descriptor's C name would clash with its typedef, so the exported
 * symbol name is given to the assembler. */
REF_EXPORT extern const vyre_plugin_descriptor ref_plugin_descriptor __asm__(
    VYRE_PLUGIN_DESCRIPTOR_SYMBOL);
REF_EXPORT const vyre_plugin_descriptor ref_plugin_descriptor = {
    .struct_size = sizeof(vyre_plugin_descriptor),
    .magic = VYRE_PLUGIN_MAGIC,
    .abi_major = VYRE_ABI_MAJOR,
    .abi_minor_min = 0,
    .abi_minor_max = VYRE_ABI_MINOR,
    .reserved = 0,
    .registration_size = sizeof(vyre_registration),
    .vtable_size = sizeof(vyre_backend_vtable),
    .build_id = VYRE_BUILD_ID,
};

/*
 * The plugin entry (vyre.h vyre_plugin_entry_fn).  host_abi_major must be
 * VYRE_ABI_MAJOR; the minor is negotiated to min(host minor, ours).  *out
 * receives a registration owned by the plugin for the life of the process.
 * Thread-safe.
 */
REF_EXPORT vyre_status vyre_plugin_entry(uint16_t host_abi_major, uint16_t host_abi_minor,
                                         const vyre_registration **out, vyre_error *err);
REF_EXPORT vyre_status vyre_plugin_entry(uint16_t host_abi_major, uint16_t host_abi_minor,
                                         const vyre_registration **out, vyre_error *err) {
  if (!out)
    return vyre_error_set(err, VYRE_INVALID_ARGUMENT, 0,
                          "reference plugin: out is NULL. Fix: pass a const vyre_registration "
                          "** to receive the registration");
  *out = NULL;
  if (host_abi_major != VYRE_ABI_MAJOR)
    return vyre_error_set(err, VYRE_ABI_MISMATCH, 0,
                          "reference plugin: the host speaks ABI %u.%u, this plugin ABI %u.%u to "
                          "%u.%u (majors must match). Fix: rebuild the host and the plugins "
                          "from one vyre release",
                          host_abi_major, host_abi_minor, VYRE_ABI_MAJOR,
                          ref_plugin_descriptor.abi_minor_min, VYRE_ABI_MAJOR, VYRE_ABI_MINOR);
  /* Read through the descriptor so the range lives in one place. */
  uint32_t lo = ref_plugin_descriptor.abi_minor_min, hi = ref_plugin_descriptor.abi_minor_max;
  uint32_t minor = host_abi_minor < hi ? host_abi_minor : hi;
  if (minor < lo)
    return vyre_error_set(err, VYRE_ABI_MISMATCH, 0,
                          "reference plugin: the host speaks ABI %u.%u, this plugin serves "
                          "minors %u to %u. Fix: update the host",
                          host_abi_major, host_abi_minor, lo, hi);
  *out = &ref_registrations[minor];
  return VYRE_OK;
}
