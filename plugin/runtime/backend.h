/* backend.h -- the CUDA backend instance: one state struct per module, wired together at create. */
#ifndef VYRE_PLUGIN_CUDA_BACKEND_H
#define VYRE_PLUGIN_CUDA_BACKEND_H

#include "vyre/vyre.h"

/*
 * The registration's factory (vyre.h): open the device, then build every
 * module over it.  `transcendentals`: VC_MATH when the code generator
 * lowers them, VC_MATH_CR too when correctly rounded under strict (caps.h;
 * the registration layer probes that; the profile's capabilities follow).
 * Thread-safe.
 */
vyre_status vc_backend_create(const vyre_backend_options *options, int transcendentals,
                              vyre_backend **out, vyre_error *err);

#endif /* VYRE_PLUGIN_CUDA_BACKEND_H */
