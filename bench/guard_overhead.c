/* guard_overhead.c -- the per-call cost of libvyre-host's checking instance (and of its validation layer when VYRE_VALIDATE is set): mean wall time of many back-to-back dispatches, best of several rounds. */
/*
 * usage: bench/guard_overhead [BACKEND [CALLS [ROUNDS]]]   (default cuda 200000 7)
 *
 * Two loops on 1024 u32 (out = a + b): dispatch_into with the program as
 * bytes (host buffers in and out), and dispatch_resident of a pipeline on
 * resident buffers.  Each round times CALLS calls with one clock read
 * before and one after, so the figure is a mean with no per-call clock
 * cost or quantisation; the best round is printed.  Built against the
 * public API only: run the same source against two builds of
 * libvyre-host to compare them (BENCHMARKS.md, "Validation layer
 * overhead"; with the fake libcuda, VYRE_CUDA_DRIVER, it measures host
 * work alone).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "vyre/vyre_host.h"
#include "vyre/vyre_text.h"

#define N 1024u

static const char text[] = "workgroup 64\n"
                           "buffer a ro u32 [1024]\n"
                           "buffer b ro u32 [1024]\n"
                           "buffer out wo u32 [1024]\n"
                           "%i = gid.x\n"
                           "%x = load a %i\n"
                           "%y = load b %i\n"
                           "%s = add %x %y\n"
                           "store out %i %s\n";

static double now_ns(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (double)t.tv_sec * 1e9 + (double)t.tv_nsec;
}

static int fail(const char *what, const vyre_error *err) {
  fprintf(stderr, "guard_overhead: %s: %s\n", what, err->message);
  return 1;
}

int main(int argc, char **argv) {
  const char *id = argc > 1 ? argv[1] : "cuda";
  long calls = argc > 2 ? atol(argv[2]) : 200000;
  int rounds = argc > 3 ? atoi(argv[3]) : 7;
  if (calls <= 0 || rounds <= 0) {
    fprintf(stderr, "usage: guard_overhead [BACKEND [CALLS [ROUNDS]]]\n");
    return 2;
  }
  vyre_error err = VYRE_ERROR_INIT;
  vyre_host *host = NULL;
  vyre_backend *b = NULL;
  void *prog = NULL;
  size_t size = 0;
  if (vyre_host_open(NULL, &host, &err)) return fail("vyre_host_open", &err);
  if (vyre_host_create(host, id, NULL, &b, NULL, &err)) return fail("vyre_host_create", &err);
  if (vyre_text_assemble(text, strlen(text), "add", &prog, &size, &err)) return fail("assemble", &err);
  static uint32_t a[N], c[N], out[N];
  for (uint32_t i = 0; i < N; i++) a[i] = i, c[i] = 3 * i;
  vyre_input in[2] = {{a, sizeof a}, {c, sizeof c}};
  vyre_program_ref bytes = VYRE_PROGRAM_BYTES(prog, size);
  vyre_resident r[3] = {0, 0, 0};
  vyre_pipeline pipe = 0;
  for (int k = 0; k < 3; k++)
    if (b->vt->resident_alloc(b, sizeof a, &r[k], &err)) return fail("resident_alloc", &err);
  if (b->vt->resident_upload(b, r[0], a, sizeof a, &err) ||
      b->vt->resident_upload(b, r[1], c, sizeof c, &err))
    return fail("resident_upload", &err);
  if (b->vt->pipeline_create(b, prog, size, NULL, &pipe, &err)) return fail("pipeline_create", &err);
  vyre_program_ref piped = VYRE_PROGRAM_PIPELINE(pipe);
  double best_into = 1e300, best_res = 1e300;
  for (int round = 0; round < rounds; round++) {
    double t0 = now_ns();
    for (long i = 0; i < calls; i++) {
      vyre_output_slot slot = {out, sizeof out, 0};
      if (b->vt->dispatch_into(b, &bytes, in, 2, NULL, &slot, 1, NULL, &err))
        return fail("dispatch_into", &err);
    }
    double t1 = now_ns();
    for (long i = 0; i < calls; i++)
      if (b->vt->dispatch_resident(b, &piped, r, 3, NULL, NULL, &err))
        return fail("dispatch_resident", &err);
    double t2 = now_ns();
    if ((t1 - t0) / calls < best_into) best_into = (t1 - t0) / calls;
    if ((t2 - t1) / calls < best_res) best_res = (t2 - t1) / calls;
  }
  printf("%s dispatch_into_bytes_1k %.1f ns\n", id, best_into);
  printf("%s dispatch_resident_pipeline_1k %.1f ns\n", id, best_res);
  b->vt->pipeline_release(b, pipe, &err);
  for (int k = 0; k < 3; k++) b->vt->resident_free(b, r[k], &err);
  b->vt->destroy(b);
  vyre_host_close(host);
  free(prog);
  return 0;
}
