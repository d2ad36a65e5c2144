/* plugin.c -- the only two symbols libvyre-ref.so exports: its descriptor and the entry that negotiates the ABI and returns the registration. */
#include "config.h"

#include "ref.h"

/* Every op of the format: the reference implements them all. */
static const uint16_t ref_ops[] = {
#define REF_OP_ID_(name, id, text, cls, mask, flags) id,
    VYRE_OP_MAP(REF_OP_ID_)
#undef REF_OP_ID_
};

/* Every storage type, bool through f32 (not the matrix types: locals only). */
#define REF_STORAGE_TYPES ((uint64_t)VYRE_TM_STORAGE)

/* The one registration: immutable, it serves every minor (the host
 * records the negotiated one), so the entry is thread-safe. */
static const vyre_registration ref_registration = {
    .struct_size = sizeof(vyre_registration),
    .abi_major = VYRE_ABI_MAJOR,
    .abi_minor = VYRE_ABI_MINOR,
    .id = REF_BACKEND_ID,
    .version = PACKAGE_VERSION,
    .description = "reference CPU interpreter: the conformance oracle",
    .precedence = REF_PRECEDENCE,
    .op_count = (uint32_t)(sizeof ref_ops / sizeof ref_ops[0]),
    .ops = ref_ops,
    .capabilities = REF_CAPABILITIES,
    .storage_types = REF_STORAGE_TYPES,
    .create = ref_backend_create,
    .op_types = NULL, /* every op at every type its class allows */
    .extensions = "vyre.limits@1 vyre.indirect@1", /* VYRE_LIMITS_NAME, VYRE_INDIRECT_NAME */
};

#define REF_ABI_MINOR_MIN 0

VYRE_PLUGIN_EXPORT const vyre_descriptor vyre_plugin_descriptor =
    VYRE_DESCRIPTOR_INIT(REF_ABI_MINOR_MIN, VYRE_ABI_MINOR, VYRE_BUILD_ID);

/*
 * The plugin entry (vyre.h vyre_plugin_entry_fn).  host_abi_major must be
 * VYRE_ABI_MAJOR and the host must speak a minor we serve.  *out receives
 * the registration, owned by the plugin for the life of the process.
 * Thread-safe.
 */
VYRE_PLUGIN_EXPORT vyre_status vyre_plugin_entry(uint16_t host_abi_major, uint16_t host_abi_minor,
                                                 const vyre_registration **out, vyre_error *err);
VYRE_PLUGIN_EXPORT vyre_status vyre_plugin_entry(uint16_t host_abi_major, uint16_t host_abi_minor,
                                                 const vyre_registration **out, vyre_error *err) {
  if (!out)
    return vyre_error_set(err, VYRE_INVALID_ARGUMENT, 0,
                          "reference plugin: out is NULL. Fix: pass a const vyre_registration "
                          "** to receive the registration");
  *out = NULL;
  /* A newer host is served at our newest minor, which the host records. */
  vyre_status st = vyre_check_host_abi("reference plugin", host_abi_major, host_abi_minor,
                                       REF_ABI_MINOR_MIN, VYRE_ABI_MINOR, err);
  if (st) return st;
  *out = &ref_registration;
  return VYRE_OK;
}
