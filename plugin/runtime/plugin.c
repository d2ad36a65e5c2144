/* plugin.c -- libvyre-cuda's descriptor, entry and registration (the instance is backend.c). */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "config.h"
#include "backend.h"
#include "caps.h"
#include "plugin/codegen/codegen.h"
#include "vyre/vyre_cuda.h"
#include "vyre/vyre_program.h"
#include "vyre/vyre_support.h"

#define PLUGIN_ABI_MINOR_MIN 0
#define PLUGIN_ABI_MINOR_MAX VYRE_ABI_MINOR
#define VC_STRINGIFY_(x) #x
#define VC_STRINGIFY(x) VC_STRINGIFY_(x)

VYRE_PLUGIN_EXPORT const vyre_descriptor vyre_plugin_descriptor =
    VYRE_DESCRIPTOR_INIT(PLUGIN_ABI_MINOR_MIN, PLUGIN_ABI_MINOR_MAX, VYRE_BUILD_ID " cuda");

/* ------------------------------------------------------------------ */
/* Registration                                                        */
/* ------------------------------------------------------------------ */
static pthread_once_t math_once = PTHREAD_ONCE_INIT;
static int have_math;

/* Whether the code generator lowers `prog` for the oldest target the
 * backend serves under ulp budget `budget`. */
static int lowers(const vyre_program *prog, uint32_t budget) {
  cg_options o;
  memset(&o, 0, sizeof o);
  o.sm_major = VC_CAPS_MIN_SM_MAJOR;
  o.sm_minor = VC_CAPS_MIN_SM_MINOR;
  o.ulp_budget = budget;
  o.workgroup[0] = 32;
  o.workgroup[1] = o.workgroup[2] = 1;
  char *ptx = NULL;
  size_t len = 0;
  cg_kernel_info info;
  int ok = cg_emit_ptx(prog, &o, &ptx, &len, &info, NULL) == VYRE_OK;
  free(ptx);
  return ok;
}

/* Ask the code generator to lower every transcendental op, chained in one
 * program, under a loose budget (VC_MATH: it can only when it was built
 * with the PTX math library, whose code needs nothing newer than sm_70)
 * and under strict, ulp budget 0 (VC_MATH_CR: it selects each op's
 * correctly rounded variant, and refuses an op without one). */
static void probe_math(void) {
  vyre_builder *bld = vyre_builder_new(32, 1, 1);
  if (!bld) return;
  uint32_t x = vyre_b_buffer(bld, "x", UINT32_MAX, VYRE_ACCESS_READ_WRITE, VYRE_T_F32, 1, 0);
  uint32_t g = vyre_b_gid(bld, 0);
  uint32_t v = vyre_b_load(bld, x, g), n = 0;
  const vyre_op_info *all = vyre_op_all(&n);
  for (uint32_t i = 0; i < n; i++)
    if (all[i].flags & VYRE_OPF_TRANSCENDENTAL) v = vyre_b_un(bld, all[i].id, v);
  vyre_b_store(bld, x, g, v);
  void *bytes = NULL;
  size_t size = 0;
  vyre_program *prog = NULL;
  if (vyre_builder_finish(bld, &bytes, &size, NULL) == VYRE_OK &&
      vyre_program_decode(bytes, size, &prog, NULL) == VYRE_OK && lowers(prog, 1u << 20))
    have_math = VC_MATH | (lowers(prog, 0) ? VC_MATH_CR : 0);
  vyre_program_free(prog);
  free(bytes);
  vyre_builder_free(bld);
}

/* VC_MATH when the linked code generator lowers transcendentals (it does
 * only with the PTX math library), with VC_MATH_CR when it lowers them
 * correctly rounded under strict; probed once.  Thread-safe. */
static int vc_codegen_has_transcendentals(void) {
  pthread_once(&math_once, probe_math);
  return have_math;
}

/* The factory: the instance (backend.c) gets the capability this layer
 * probed, so the device probe never asks the code generator itself. */
static vyre_status create(const vyre_backend_options *options, vyre_backend **out,
                          vyre_error *err) {
  return vc_backend_create(options, vc_codegen_has_transcendentals(), out, err);
}

static pthread_once_t reg_once = PTHREAD_ONCE_INIT;
static uint16_t reg_ops[VYRE_OP_ID_LIMIT];
static vyre_registration registration;

static void registration_init(void) {
  uint32_t n = 0;
  const vyre_op_info *all = vyre_op_all(&n);
  uint32_t k = 0;
  int math = vc_codegen_has_transcendentals();
  for (uint32_t i = 0; i < n && k < VYRE_OP_ID_LIMIT; i++) {
    /* Every op codegen lowers; transcendentals only with the math library. */
    if ((all[i].flags & VYRE_OPF_TRANSCENDENTAL) && !(math & VC_MATH)) continue;
    reg_ops[k++] = all[i].id;
  }
  uint64_t storage = VYRE_TM_STORAGE; /* bool through f32; matrix types are for locals only */
  registration.struct_size = sizeof registration;
  registration.abi_major = VYRE_ABI_MAJOR;
  registration.abi_minor = VYRE_ABI_MINOR; /* the layout; the host records the negotiated one */
  registration.id = "cuda";
  registration.version = PACKAGE_VERSION;
  registration.description = "NVIDIA GPUs through the CUDA driver API (PTX JIT, libcuda.so.1 "
                             "loaded at run time)";
  registration.precedence = 5;
  registration.op_count = k;
  registration.ops = reg_ops;
  registration.capabilities = vc_caps_offered(math);
  registration.op_types = NULL; /* every op at every type its class allows */
  /* What get_extension serves (backend.c). */
  registration.extensions = VYRE_CUDA_INTEROP_NAME "@" VC_STRINGIFY(VYRE_CUDA_INTEROP_VERSION) " "
      VYRE_LIMITS_NAME "@" VC_STRINGIFY(VYRE_LIMITS_VERSION) " "
      VYRE_INDIRECT_NAME "@" VC_STRINGIFY(VYRE_INDIRECT_VERSION);
  registration.storage_types = storage;
  registration.create = create;
}

/* The plugin's one entry (vyre.h): check the host's version and hand out
 * the one registration, which serves every minor.  Thread-safe; never
 * touches the driver. */
VYRE_PLUGIN_EXPORT vyre_status vyre_plugin_entry(uint16_t host_abi_major, uint16_t host_abi_minor,
                                                 const vyre_registration **out, vyre_error *err);

vyre_status vyre_plugin_entry(uint16_t host_abi_major, uint16_t host_abi_minor,
                              const vyre_registration **out, vyre_error *err) {
  if (!out)
    return vyre_error_set(err, VYRE_INVALID_ARGUMENT, 0,
                          "cuda plugin entry: out is NULL. Fix: pass a const vyre_registration "
                          "** to receive the registration");
  *out = NULL;
  vyre_status st = vyre_check_host_abi("cuda plugin", host_abi_major, host_abi_minor,
                                       PLUGIN_ABI_MINOR_MIN, PLUGIN_ABI_MINOR_MAX, err);
  if (st != VYRE_OK) return st;
  pthread_once(&reg_once, registration_init);
  /* One registration for every minor: the host records the negotiated
   * minor and passes it to create (vyre_backend_options.abi_minor). */
  *out = &registration;
  return VYRE_OK;
}
