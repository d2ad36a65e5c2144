/* peers.h -- the hand-written CUDA peers of the workloads (libwlpeers.so, built by peers.sh with nvcc), as the workloads driver reaches them through dlopen. */
#ifndef VYRE_BENCH_PEERS_H
#define VYRE_BENCH_PEERS_H

#include <stddef.h>
#include <stdint.h>

#include "workloads.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Bumped when a signature below changes; wl_peer_abi returns it and the
 * driver refuses a library built against another value. */
#define WL_PEER_ABI 1

/* The library's entry points stay visible under -fvisibility=hidden. */
#if defined(__GNUC__)
#define WL_PEER_EXPORT __attribute__((visibility("default")))
#else
#define WL_PEER_EXPORT
#endif

/* The launch-and-wait floor and the device copy bandwidth, measured in the
 * process that times the peers. */
typedef struct wl_peer_floor {
  double launch_p50_us;   /* an empty kernel: launch + stream synchronise, p50 of 1000 */
  double memcpy_gbps;     /* cudaMemcpyAsync device to device of 256 MiB, read + write bytes */
  double copy_kernel_gbps; /* a uint4 copy kernel over the same 256 MiB, read + write bytes */
  char device[128];       /* the device's name */
} wl_peer_floor;

/* WL_PEER_ABI of the library. */
WL_PEER_EXPORT int wl_peer_abi(void);

/* Select CUDA device `device` (the runtime's primary context) for every
 * later call.  0, or -1 with the reason in why.  Not thread-safe: one
 * driver thread calls the peers. */
WL_PEER_EXPORT int wl_peer_open(uint32_t device, char *why, size_t why_size);

/* Measure *f (a few hundred milliseconds of GPU time).  0 or -1. */
WL_PEER_EXPORT int wl_peer_floor_measure(wl_peer_floor *f, char *why, size_t why_size);

/* Run the peer of workload `name` on the instance's inputs: every input
 * buffer uploaded once, outputs zeroed once, then `warm` untimed and `runs`
 * timed calls; us[i] (caller's, `runs` entries) is the host wall time of
 * timed call i in microseconds: the clearing memsets of the buffers marked
 * `clear`, the kernel launch(es) and a stream synchronise.  After the last
 * run output k (the k-th buffer with is_output, w->buf[].size bytes) is
 * copied into outputs[k] (caller-owned).  0 on success, 1 when this library
 * has no peer for `name` (why says so), -1 on a failure (why: the CUDA call,
 * its error name and text, and the kernel).  Device memory is freed before
 * it returns. */
WL_PEER_EXPORT int wl_peer_run(const char *name, const wl_instance *w, uint32_t warm,
                               uint32_t runs, double *us, void *const *outputs, char *why,
                               size_t why_size);

#ifdef __cplusplus
}
#endif

#endif /* VYRE_BENCH_PEERS_H */
