/* check.c -- the argument checks every backend makes on entry, with one wording (vyre_support.h, docs/abi.md section 11). */
#include <stddef.h>

#include "vyre/vyre_support.h"
#include "abi/support/callcheck.h"

/* A NULL `what` still names something. */
static const char *name_of(const char *what) { return what ? what : "vyre"; }

vyre_status vyre_check_program_ref(const vyre_program_ref *program, const char *what,
                                   vyre_error *err) {
  if (!program)
    return vyre_error_set(err, VYRE_INVALID_ARGUMENT, 0,
                          "%s: program is NULL. Fix: pass a vyre_program_ref", name_of(what));
  /* One wording with libvyre-host's checking instance (callcheck.h). */
  return vyre__program_ref_size_check(program->struct_size, name_of(what), err);
}

vyre_status vyre_check_inputs(const vyre_input *inputs, uint32_t input_count, uint32_t expected,
                              const char *what, vyre_error *err) {
  if (input_count != expected)
    return vyre_error_set(err, VYRE_INVALID_ARGUMENT, 0,
                          "%s: %u inputs given, the program takes %u (its ro, uniform and rw "
                          "buffers without the output flag, in declaration order). Fix: pass "
                          "one vyre_input per input buffer",
                          name_of(what), input_count, expected);
  if (input_count && !inputs)
    return vyre_error_set(err, VYRE_INVALID_ARGUMENT, 0,
                          "%s: inputs is NULL with input_count %u. Fix: pass an array of "
                          "input_count vyre_input",
                          name_of(what), input_count);
  for (uint32_t i = 0; i < input_count; i++)
    if (inputs[i].size && !inputs[i].data)
      return vyre_error_set(err, VYRE_INVALID_ARGUMENT, 0,
                            "%s: input %u has %llu bytes but its data is NULL. Fix: pass the "
                            "input's memory, or size 0",
                            name_of(what), i, (unsigned long long)inputs[i].size);
  return VYRE_OK;
}

vyre_status vyre_check_host_abi(const char *plugin, uint16_t host_major, uint16_t host_minor,
                                uint16_t minor_min, uint16_t minor_max, vyre_error *err) {
  if (host_major != VYRE_ABI_MAJOR)
    return vyre_error_set(err, VYRE_ABI_MISMATCH, 0,
                          "%s: the host speaks ABI %u.%u, this plugin ABI %u.%u to %u.%u (majors "
                          "must match). Fix: rebuild the host and the plugins from one vyre "
                          "release",
                          name_of(plugin), host_major, host_minor, VYRE_ABI_MAJOR, minor_min,
                          VYRE_ABI_MAJOR, minor_max);
  if (host_minor < minor_min)
    return vyre_error_set(err, VYRE_ABI_MISMATCH, 0,
                          "%s: the host speaks ABI %u.%u, older than the oldest this plugin "
                          "serves (%u.%u). Fix: update the host, or use the plugin of the host's "
                          "vyre release",
                          name_of(plugin), host_major, host_minor, VYRE_ABI_MAJOR, minor_min);
  return VYRE_OK;
}
