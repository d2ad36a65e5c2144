/* peers_impl.h -- what peers.cu (the harness: upload, timing, floor) and peers_kernels.cu (the nine kernels) share; CUDA C++ only. */
#ifndef VYRE_BENCH_PEERS_IMPL_H
#define VYRE_BENCH_PEERS_IMPL_H

#include <cuda_runtime.h>

#include "peers.h"

/* One peer run: the instance, its buffers on the device (d[i] is
 * w->buf[i], NULL for an empty one) and what the workload's prepare step
 * allocated (scratch, freed by the harness). */
typedef struct wlp_job {
  const wl_instance *w;
  void *d[WL_MAX_BUFFERS];
  void *scratch;
  cudaStream_t stream;
  int sms; /* multiprocessors of the device */
  char kernel[64]; /* the kernel a failure names */
} wlp_job;

/* prepare: check the instance's shape, copy constants, allocate scratch
 * (once, untimed); launch: queue the kernel(s) on j->stream (timed).  Both
 * return cudaSuccess, or an error with j->kernel naming what failed;
 * prepare returns cudaErrorInvalidValue with why filled when the instance
 * has a shape the kernel does not handle. */
typedef struct wlp_peer {
  const char *name;
  cudaError_t (*prepare)(wlp_job *j, char *why, size_t why_size);
  cudaError_t (*launch)(wlp_job *j);
} wlp_peer;

extern const wlp_peer wlp_peers[];
extern const unsigned wlp_peer_count;

/* An empty kernel (the launch floor) and a uint4 copy of n16 16-byte words. */
cudaError_t wlp_launch_empty(cudaStream_t s);
cudaError_t wlp_launch_copy(const void *src, void *dst, size_t n16, int sms, cudaStream_t s);

#endif /* VYRE_BENCH_PEERS_IMPL_H */
