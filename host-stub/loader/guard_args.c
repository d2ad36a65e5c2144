/* guard_args.c -- what a host application passes in, checked once by the checking instance before any plugin code runs, so every backend answers one misuse the same way (docs/abi.md, "What a plugin may rely on when called through libvyre-host"). */
#include <stddef.h>
#include <stdio.h>
#include <stdint.h>

#include "guard.h"
#include "abi/support/callcheck.h"
#include "vyre/vyre_support.h"

/* The least struct_size of the options structs: enough to reach their
 * reserved flags word, which must be 0 (what the in-tree backends read). */
#define HOST_DISPATCH_OPTIONS_MIN (offsetof(vyre_dispatch_options, flags) + sizeof(uint32_t))
#define HOST_BACKEND_OPTIONS_MIN (offsetof(vyre_backend_options, flags) + sizeof(uint32_t))

static const char *kind_name(uint32_t kind) {
  switch (kind) {
  case HOST_KIND_RESIDENT: return "resident buffer";
  case HOST_KIND_PIPELINE: return "pipeline";
  case HOST_KIND_PENDING: return "pending dispatch";
  default: return "handle";
  }
}

static const char *kind_fix(uint32_t kind) {
  switch (kind) {
  case HOST_KIND_RESIDENT:
    return "a handle this instance's resident_alloc returned, before its resident_free";
  case HOST_KIND_PIPELINE:
    return "a handle this instance's pipeline_create returned, before its pipeline_release";
  default:
    return "a handle this instance's dispatch_async returned, before its pending_wait or "
           "pending_release";
  }
}

static vyre_status unknown_handle(const host_guard *g, const char *what, uint32_t kind,
                                  uint64_t handle, vyre_error *err) {
  return vyre_error_set(err, VYRE_INVALID_HANDLE, 0,
                        "%s: %s 0x%016llx was not handed out by this instance of backend '%s', "
                        "or was already released. Fix: pass %s",
                        what, kind_name(kind), (unsigned long long)handle, g->id, kind_fix(kind));
}

vyre_status host_check_handle(host_guard *g, const char *what, uint32_t kind, uint64_t handle,
                              vyre_error *err) {
  pthread_mutex_lock(&g->lock);
  int known = handle && host_handles_has(&g->handles, kind, handle, NULL);
  pthread_mutex_unlock(&g->lock);
  return known || (handle && g->extended) ? VYRE_OK : unknown_handle(g, what, kind, handle, err);
}

vyre_status host_check_bytes(const char *what, const char *name, const void *data, uint64_t size,
                             vyre_error *err) {
  if (data || !size) return VYRE_OK;
  return vyre_error_set(err, VYRE_INVALID_ARGUMENT, 0,
                        "%s: %s is NULL with %llu bytes. Fix: pass the memory, or size 0", what,
                        name, (unsigned long long)size);
}

vyre_status host_check_program(host_guard *g, const char *what, const vyre_program_ref *program,
                               vyre_error *err) {
  if (!program)
    return vyre_error_set(err, VYRE_INVALID_ARGUMENT, 0,
                          "%s: program is NULL. Fix: pass a vyre_program_ref", what);
  vyre_status st = vyre__program_ref_size_check(program->struct_size, what, err);
  if (st != VYRE_OK) return st;
  /* A 0.1-draft ref has the bytes pointer's high half here. */
  if (program->flags)
    return vyre_error_set(err, VYRE_INVALID_ARGUMENT, 0,
                          "%s: vyre_program_ref.flags is 0x%x; no flags are defined (a caller "
                          "built against the 0.1 draft?). Fix: set it to 0 (VYRE_PROGRAM_BYTES "
                          "and VYRE_PROGRAM_PIPELINE do)",
                          what, program->flags);
  if (program->pipeline) return host_check_handle(g, what, HOST_KIND_PIPELINE, program->pipeline, err);
  if (!program->bytes && program->size)
    return vyre_error_set(err, VYRE_INVALID_ARGUMENT, 0,
                          "%s: vyre_program_ref.bytes is NULL with size %llu. Fix: point bytes "
                          "at the program's image",
                          what, (unsigned long long)program->size);
  if (!program->bytes)
    return vyre_error_set(err, VYRE_INVALID_ARGUMENT, 0,
                          "%s: vyre_program_ref has neither bytes nor a pipeline. Fix: set bytes "
                          "and size (VYRE_PROGRAM_BYTES) or a pipeline handle "
                          "(VYRE_PROGRAM_PIPELINE)",
                          what);
  return VYRE_OK;
}

/* The resident buffer a chained vyre_indirect names (a chain already
 * checked, so the walk ends). */
static vyre_status check_indirect(host_guard *g, const char *what, const vyre_ext *chain,
                                  vyre_error *err) {
  for (const vyre_ext *e = chain; e; e = e->next) {
    if (e->type != VYRE_EXT_INDIRECT || e->struct_size < sizeof(vyre_indirect)) continue;
    vyre_status st =
        host_check_handle(g, what, HOST_KIND_RESIDENT, ((const vyre_indirect *)e)->buffer, err);
    if (st != VYRE_OK) return st;
  }
  return VYRE_OK;
}

vyre_status host_check_options(host_guard *g, const char *what,
                               const vyre_dispatch_options *options, vyre_error *err) {
  if (!options) return VYRE_OK;
  uint32_t size = options->struct_size;
  if (size < HOST_DISPATCH_OPTIONS_MIN || size > HOST_STRUCT_MAX)
    return vyre_error_set(err, VYRE_INVALID_ARGUMENT, 0,
                          "%s: vyre_dispatch_options.struct_size is %u, %zu to %u expected. Fix: "
                          "zero-initialise the options and set struct_size = "
                          "sizeof(vyre_dispatch_options)",
                          what, size, HOST_DISPATCH_OPTIONS_MIN, HOST_STRUCT_MAX);
  if (options->flags)
    return vyre_error_set(err, VYRE_INVALID_ARGUMENT, 0,
                          "%s: vyre_dispatch_options.flags is 0x%x; no flags are defined. Fix: "
                          "set it to 0",
                          what, options->flags);
  /* Options of a 1.0 caller end before `next`: no chain. */
  if (size < offsetof(vyre_dispatch_options, next) + sizeof options->next) return VYRE_OK;
  vyre_status st =
      vyre__ext_chain_check(options->next, what, "the options' extension chain", err);
  if (st == VYRE_OK && g) st = check_indirect(g, what, options->next, err);
  return st;
}

vyre_status host_check_backend_options(const char *what, const vyre_backend_options *options,
                                       vyre_error *err) {
  if (!options) return VYRE_OK;
  uint32_t size = options->struct_size;
  if (size < HOST_BACKEND_OPTIONS_MIN || size > HOST_STRUCT_MAX)
    return vyre_error_set(err, VYRE_INVALID_ARGUMENT, 0,
                          "%s: vyre_backend_options.struct_size is %u, %zu to %u expected. Fix: "
                          "zero-initialise the options and set struct_size = "
                          "sizeof(vyre_backend_options)",
                          what, size, HOST_BACKEND_OPTIONS_MIN, HOST_STRUCT_MAX);
  if (options->flags)
    return vyre_error_set(err, VYRE_INVALID_ARGUMENT, 0,
                          "%s: vyre_backend_options.flags is 0x%x; no flags are defined. Fix: "
                          "set it to 0",
                          what, options->flags);
  if (size < offsetof(vyre_backend_options, next) + sizeof options->next) return VYRE_OK;
  return vyre__ext_chain_check(options->next, what, "the backend options' extension chain", err);
}

/* An array of `count` elements must be there, and a program has at most
 * VYRE_MAX_BUFFERS buffers: a larger count is garbage, never walked. */
static vyre_status check_array(const char *what, const char *name, const void *array,
                               uint32_t count, uint32_t max, vyre_error *err) {
  if (count > max)
    return vyre_error_set(err, VYRE_INVALID_ARGUMENT, 0,
                          "%s: %u %s given; a program has at most %u buffers. Fix: pass one per "
                          "buffer of the program",
                          what, count, name, max);
  if (count && !array)
    return vyre_error_set(err, VYRE_INVALID_ARGUMENT, 0,
                          "%s: %s is NULL with a count of %u. Fix: pass an array of that many, "
                          "or a count of 0",
                          what, name, count);
  return VYRE_OK;
}

vyre_status host_check_inputs(const char *what, const vyre_input *inputs, uint32_t count,
                              vyre_error *err) {
  vyre_status st = check_array(what, "inputs", inputs, count, VYRE_MAX_BUFFERS, err);
  /* The count against the program is the plugin's (it decodes it). */
  return st != VYRE_OK ? st : vyre_check_inputs(inputs, count, count, what, err);
}

vyre_status host_check_slots(const char *what, const vyre_output_slot *slots, uint32_t count,
                             vyre_error *err) {
  vyre_status st = check_array(what, "output slots", slots, count, VYRE_MAX_BUFFERS, err);
  for (uint32_t k = 0; st == VYRE_OK && k < count; k++)
    if (!slots[k].data && slots[k].capacity)
      return vyre_error_set(err, VYRE_INVALID_ARGUMENT, 0,
                            "%s: output slot %u has capacity %llu but its data is NULL. Fix: "
                            "point it at memory of that capacity, or capacity 0",
                            what, k, (unsigned long long)slots[k].capacity);
  return st;
}

vyre_status host_check_residents(host_guard *g, const char *what, const vyre_resident *buffers,
                                 uint32_t count, vyre_error *err) {
  vyre_status st = check_array(what, "resident buffers", buffers, count, VYRE_MAX_BUFFERS, err);
  if (st != VYRE_OK || !count) return st;
  /* One lock for the whole array: this is on every resident dispatch. */
  uint32_t i = 0;
  pthread_mutex_lock(&g->lock);
  while (i < count && buffers[i] && host_handles_has(&g->handles, HOST_KIND_RESIDENT, buffers[i], NULL))
    i++;
  pthread_mutex_unlock(&g->lock);
  if (i == count) return VYRE_OK;
  return host_check_handle(g, what, HOST_KIND_RESIDENT, buffers[i], err) == VYRE_OK
             ? host_check_residents(g, what, buffers + i + 1, count - i - 1, err)
             : VYRE_INVALID_HANDLE;
}

vyre_status host_check_copies(host_guard *g, const char *what, const vyre_resident_copy *copies,
                              uint32_t count, vyre_error *err) {
  vyre_status st = check_array(what, "copies", copies, count, UINT32_MAX, err);
  for (uint32_t i = 0; st == VYRE_OK && i < count; i++) {
    st = host_check_handle(g, what, HOST_KIND_RESIDENT, copies[i].buffer, err);
    if (st == VYRE_OK && !copies[i].host && copies[i].size)
      return vyre_error_set(err, VYRE_INVALID_ARGUMENT, 0,
                            "%s: copy %u has %llu bytes but its host pointer is NULL. Fix: pass "
                            "the host memory, or size 0",
                            what, i, (unsigned long long)copies[i].size);
  }
  return st;
}

vyre_status host_check_sequence(host_guard *g, const vyre_sequence_step *steps, uint32_t count,
                                const vyre_resident_copy *reads, uint32_t read_count,
                                vyre_error *err) {
  const char *what = "dispatch_sequence";
  vyre_status st = check_array(what, "steps", steps, count, UINT32_MAX, err);
  for (uint32_t s = 0; st == VYRE_OK && s < count; s++) {
    const vyre_sequence_step *step = &steps[s];
    char name[48];
    snprintf(name, sizeof name, "dispatch_sequence step %u", s);
    if (step->struct_size != sizeof *step)
      return vyre_error_set(err, VYRE_INVALID_ARGUMENT, 0,
                            "%s: steps[%u].struct_size %u is not %zu (steps are frozen array "
                            "elements). Fix: set steps[i].struct_size = "
                            "sizeof(vyre_sequence_step)",
                            what, s, step->struct_size, sizeof *step);
    st = host_check_program(g, name, step->program, err);
    if (st == VYRE_OK) st = host_check_residents(g, name, step->buffers, step->buffer_count, err);
    if (st == VYRE_OK) st = host_check_options(g, name, step->options, err);
  }
  return st == VYRE_OK ? host_check_copies(g, what, reads, read_count, err) : st;
}
