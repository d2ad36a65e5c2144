/* conform_broken.c -- test plugins no host can use, one per way (-DBROKEN_<CASE>), and one with no device here (-DBROKEN_NO_DEVICE): `vyre conform --plugin` must fail each of the first and skip only the last. */
/*
 * Every one of them loads (descriptor, entry and registration are
 * accepted, and it exports only the two plugin symbols), so the static
 * checks pass and only what its factory or instance does is wrong:
 *   BROKEN_NO_DISPATCH   a vtable without dispatch (the slot is NULL)
 *   BROKEN_SHORT_VTABLE  a vtable whose struct_size ends before dispatch
 *   BROKEN_VT_NULL       an instance whose vt is NULL
 *   BROKEN_NO_DESTROY    an instance whose vt->destroy is NULL
 *   BROKEN_STRUCT_SIZE   an instance whose struct_size is 3
 *   BROKEN_NO_INSTANCE   VYRE_OK and *out left NULL
 *   BROKEN_BAD_STATUS    a status (999) that is no vyre_status
 *   BROKEN_FAILS         a plain refusal (VYRE_INTERNAL) that is not "no device"
 *   BROKEN_NO_DEVICE     VYRE_NO_DEVICE: a usable plugin on a machine without
 *                        its device (the one case reported SKIPPED)
 * tests/conform/conform_broken.test runs them.
 */
#include <stddef.h>
#include <stdlib.h>

#include "vyre/vyre.h"
#include "vyre/vyre_program.h"
#include "vyre/vyre_support.h"

#define EXPORT __attribute__((visibility("default")))

#if defined(BROKEN_NO_DISPATCH)
#define BROKEN_ID "broken-no-dispatch"
#elif defined(BROKEN_SHORT_VTABLE)
#define BROKEN_ID "broken-short-vtable"
#elif defined(BROKEN_VT_NULL)
#define BROKEN_ID "broken-vt-null"
#elif defined(BROKEN_NO_DESTROY)
#define BROKEN_ID "broken-no-destroy"
#elif defined(BROKEN_STRUCT_SIZE)
#define BROKEN_ID "broken-struct-size"
#elif defined(BROKEN_NO_INSTANCE)
#define BROKEN_ID "broken-no-instance"
#elif defined(BROKEN_BAD_STATUS)
#define BROKEN_ID "broken-bad-status"
#elif defined(BROKEN_FAILS)
#define BROKEN_ID "broken-fails"
#elif defined(BROKEN_NO_DEVICE)
#define BROKEN_ID "broken-no-device"
#else
#error "define one BROKEN_<CASE>"
#endif

typedef struct broken {
  vyre_backend head;
} broken;

#ifndef BROKEN_NO_DESTROY
static void b_destroy(vyre_backend *self) { free(self); }
#endif

#ifndef BROKEN_NO_DISPATCH
static vyre_status b_dispatch(vyre_backend *self, const vyre_program_ref *program,
                              const vyre_input *inputs, uint32_t input_count,
                              const vyre_dispatch_options *options, vyre_outputs **out,
                              vyre_timing *timing, vyre_error *err) {
  (void)self, (void)program, (void)inputs, (void)input_count, (void)options, (void)timing;
  *out = NULL;
  return vyre_error_set(err, VYRE_UNSUPPORTED, 0, BROKEN_ID ": runs nothing");
}
#endif

static void b_outputs_free(vyre_backend *self, vyre_outputs *o) {
  (void)self;
  free(o);
}

__attribute__((unused)) static const vyre_backend_vtable vtable = {
#ifdef BROKEN_SHORT_VTABLE
    .struct_size = (uint32_t)offsetof(vyre_backend_vtable, dispatch),
#else
    .struct_size = sizeof(vyre_backend_vtable),
#endif
#ifndef BROKEN_NO_DESTROY
    .destroy = b_destroy,
#endif
#ifndef BROKEN_NO_DISPATCH
    .dispatch = b_dispatch,
#endif
    .outputs_free = b_outputs_free,
};

static vyre_status b_create(const vyre_backend_options *options, vyre_backend **out,
                            vyre_error *err) {
  (void)options;
  *out = NULL;
#if defined(BROKEN_NO_INSTANCE)
  (void)err;
  return VYRE_OK;
#elif defined(BROKEN_BAD_STATUS)
  (void)err;
  return (vyre_status)999;
#elif defined(BROKEN_FAILS)
  return vyre_error_set(err, VYRE_INTERNAL, 0, BROKEN_ID ": the factory fails");
#elif defined(BROKEN_NO_DEVICE)
  return vyre_error_set(err, VYRE_NO_DEVICE, 0, BROKEN_ID ": no device here. Fix: run it on a "
                        "machine with one");
#else
  broken *b = calloc(1, sizeof *b);
  if (!b) return vyre_error_set(err, VYRE_OUT_OF_MEMORY, 0, BROKEN_ID ": out of memory");
  b->head.struct_size = sizeof b->head;
  b->head.vt = &vtable;
#if defined(BROKEN_VT_NULL)
  b->head.vt = NULL;
#elif defined(BROKEN_STRUCT_SIZE)
  b->head.struct_size = 3;
#endif
#if defined(BROKEN_VT_NULL) || defined(BROKEN_NO_DESTROY) || defined(BROKEN_STRUCT_SIZE) || \
    defined(BROKEN_SHORT_VTABLE)
  /* A host that refuses a malformed instance cannot release it either:
   * the last one is kept here, so that it is not lost (valgrind). */
  static broken *last;
  free(last);
  last = b;
#endif
  *out = &b->head;
  return VYRE_OK;
#endif
}

static const uint16_t broken_ops[] = {VYRE_OP_CONST, VYRE_OP_INVOCATION_ID, VYRE_OP_STORE};

static const vyre_registration reg = {
    .struct_size = sizeof(vyre_registration),
    .abi_major = VYRE_ABI_MAJOR,
    .abi_minor = VYRE_ABI_MINOR,
    .id = BROKEN_ID,
    .version = "0.1.0",
    .description = "a plugin no host can use (conformance tests)",
    .precedence = 990,
    .op_count = sizeof broken_ops / sizeof broken_ops[0],
    .ops = broken_ops,
    .storage_types = VYRE_TBIT(VYRE_T_U32),
    .create = b_create,
};

VYRE_PLUGIN_EXPORT const vyre_descriptor vyre_plugin_descriptor =
    VYRE_DESCRIPTOR_INIT(0, VYRE_ABI_MINOR, "conform " BROKEN_ID);

EXPORT vyre_status vyre_plugin_entry(uint16_t major, uint16_t minor, const vyre_registration **out,
                                     vyre_error *err);
EXPORT vyre_status vyre_plugin_entry(uint16_t major, uint16_t minor, const vyre_registration **out,
                                     vyre_error *err) {
  (void)minor;
  if (major != VYRE_ABI_MAJOR)
    return vyre_error_set(err, VYRE_ABI_MISMATCH, 0, BROKEN_ID ": ABI major %u. Fix: rebuild",
                          major);
  *out = &reg;
  return VYRE_OK;
}
