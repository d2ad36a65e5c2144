// abi_cxx_plugin.cc -- docs/abi.md's C++ registration form (section 7) compiles as C++17 (-pedantic -Werror) and answers as the C form does.
// Between the markers: the doc's block, verbatim (tests/abi/headers.test compares them).
// abi.md: begin
#include <vyre/vyre.h>
#include <vyre/vyre_support.h>

#include <type_traits>

VYRE_PLUGIN_EXPORT const vyre_descriptor vyre_plugin_descriptor =
    VYRE_DESCRIPTOR_INIT(0, VYRE_ABI_MINOR, "myplugin 1.0");

namespace {
const uint16_t ops[] = {VYRE_OP_ADD, VYRE_OP_MUL};
vyre_status create(const vyre_backend_options *options, vyre_backend **out, vyre_error *err);

// No designated initializers before C++20: a constexpr function (C++14)
// sets the fields by name, and the registration is still a constant,
// made at compile time: no constructor runs when a host loads the plugin.
constexpr vyre_registration make_registration() {
  vyre_registration r{};
  r.struct_size = sizeof(vyre_registration);
  r.abi_major = VYRE_ABI_MAJOR;
  r.abi_minor = VYRE_ABI_MINOR;
  r.id = "myplugin";
  r.version = "1.0";
  r.description = "my backend";
  r.precedence = 100;
  r.op_count = sizeof ops / sizeof ops[0];
  r.ops = ops;
  r.storage_types = 1ull << VYRE_T_U32;
  r.create = create;
  return r;
}
constexpr vyre_registration registration = make_registration();
}  // namespace

VYRE_PLUGIN_EXPORT vyre_status vyre_plugin_entry(uint16_t host_major, uint16_t host_minor,
                                                 const vyre_registration **out, vyre_error *err) {
  vyre_status st = vyre_check_host_abi("myplugin", host_major, host_minor, 0, VYRE_ABI_MINOR, err);
  if (st != VYRE_OK) return st;
  *out = &registration;
  return VYRE_OK;
}

// The entry has the type a host calls it through.
static_assert(std::is_same<decltype(&vyre_plugin_entry), vyre_plugin_entry_fn>::value,
              "vyre_plugin_entry is a vyre_plugin_entry_fn");
// abi.md: end

namespace {
// The doc leaves create to the reader; this one has no device.
vyre_status create(const vyre_backend_options *, vyre_backend **out, vyre_error *err) {
  *out = nullptr;
  return vyre_error_set(err, VYRE_NO_DEVICE, 0, "myplugin: no device. Fix: none, a test stub");
}
}  // namespace
