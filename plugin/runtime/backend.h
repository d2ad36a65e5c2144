/* backend.h -- the CUDA backend instance: one state struct per module, wired together at create. */
#ifndef VYRE_PLUGIN_CUDA_BACKEND_H
#define VYRE_PLUGIN_CUDA_BACKEND_H

#include "vyre/vyre.h"

/*
 * The registration's factory (vyre.h): open the device, then build every
 * module over it.  `transcendentals`: the code generator lowers them (the
 * registration layer probes that; the profile's capability follows it).
 * Thread-safe.
 */
vyre_status vc_backend_create(const vyre_backend_options *options, int transcendentals,
                              vyre_backend **out, vyre_error *err);

#endif /* VYRE_PLUGIN_CUDA_BACKEND_H */
