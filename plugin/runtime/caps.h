/* caps.h -- what a CUDA device offers: one table of capabilities, each with what it needs (a minimum SM, a driver feature, the PTX math library) and the Fix for a device without it. */
#ifndef VYRE_PLUGIN_CUDA_CAPS_H
#define VYRE_PLUGIN_CUDA_CAPS_H

#include <stdint.h>

/* The oldest compute capability the backend serves: the code generator
 * targets sm_70 and newer (docs/codegen.md). */
#define VC_CAPS_MIN_SM_MAJOR 7u
#define VC_CAPS_MIN_SM_MINOR 0u

/* What the table's conditions are asked of one device. */
typedef struct vc_caps_device {
  uint32_t sm;         /* compute capability, major * 10 + minor (e.g. 90) */
  int cooperative;     /* CU_DEVICE_ATTRIBUTE_COOPERATIVE_LAUNCH is set */
  int transcendentals; /* VC_MATH: the linked code generator lowers them (the PTX math
                          library); VC_MATH_CR too: correctly rounded under strict */
} vc_caps_device;

/* Bits of vc_caps_device.transcendentals (and of the `transcendentals`
 * the instance is created with). */
#define VC_MATH 1
#define VC_MATH_CR 2

/* The VYRE_CAP_* bits a device offers: the device profile's.  Pure. */
uint64_t vc_caps_of(const vc_caps_device *d);

/* The VYRE_CAP_* bits some device the backend serves offers (the newest
 * one with every driver feature) when the code generator's math is
 * `transcendentals` (VC_MATH, VC_MATH_CR bits): the registration's.  Pure. */
uint64_t vc_caps_offered(int transcendentals);

/*
 * How to do without the first capability in `missing` that the table
 * knows a Fix for (in the table's order), e.g. "use a device of compute
 * capability 8.0 or newer"; *bit receives that capability's VYRE_CAP_*
 * bit.  NULL (and *bit 0) when no capability in `missing` has one.
 * Static text; pure.
 */
const char *vc_caps_fix(uint64_t missing, uint64_t *bit);

#endif /* VYRE_PLUGIN_CUDA_CAPS_H */
