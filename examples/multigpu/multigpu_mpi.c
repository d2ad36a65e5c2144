/* multigpu_mpi.c -- one MPI rank per device: rank 0 scatters y = a*x + y's arrays, each rank runs its shard on device (node-local rank % device count), rank 0 gathers and checks bit for bit. */
/*
 * Usage: mpirun -np R multigpu_mpi [--backend ID] [-n ELEMENTS] [--passes P]
 *
 * Each rank opens its own host and creates one instance on device
 * (node-local rank) % (the backend's device count): with as many ranks per
 * node as GPUs, one rank per GPU; the reference backend (one device)
 * gives every rank device 0.  Rank 0 builds x and y, scatters one
 * contiguous shard per rank (MPI_Scatterv), every rank uploads its shard,
 * runs P passes of y = a*x + y (starting together, after a barrier) and
 * downloads; rank 0 gathers y (MPI_Gatherv) and each rank's times, prints
 * one line per rank and a total, and compares every element with the CPU.
 * A rank that fails says why; every rank then exits 1 (no rank waits
 * forever in a collective).  Exit status 0 when every element matches.
 */
#if !defined(_GNU_SOURCE) && !defined(_POSIX_C_SOURCE)
#define _POSIX_C_SOURCE 200809L /* clock_gettime and pthread barriers under -std=c11 */
#endif
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "shard.h"

/* 1 when every rank's `ok` is 1. */
static int all_ok(int ok) {
  int all = 0;
  MPI_Allreduce(&ok, &all, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
  return all;
}

int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  int rank = 0, ranks = 1, local = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &ranks);
  MPI_Comm node;
  MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, rank, MPI_INFO_NULL, &node);
  MPI_Comm_rank(node, &local);
  MPI_Comm_free(&node);

  const char *id = NULL;
  uint64_t n = 0;
  uint32_t passes = 10;
  int ok = 1;
  for (int i = 1; i < argc; i++) {
    const char *v = i + 1 < argc ? argv[i + 1] : NULL;
    char *end = NULL;
    if (!strcmp(argv[i], "--backend") && v) {
      id = v;
    } else if (!strcmp(argv[i], "-n") && v) {
      unsigned long long k = strtoull(v, &end, 0);
      if (*end || k == 0 || k > (1ull << 31)) ok = 0;
      n = k;
    } else if (!strcmp(argv[i], "--passes") && v) {
      unsigned long k = strtoul(v, &end, 10);
      if (*end || k == 0 || k > 100000) ok = 0;
      passes = (uint32_t)k;
    } else {
      ok = 0;
    }
    i++;
  }
  if (!ok) {
    if (rank == 0)
      fprintf(stderr, "multigpu_mpi: usage: mpirun -np R multigpu_mpi [--backend ID] "
                      "[-n 1..2^31] [--passes 1..100000]\n");
    MPI_Finalize();
    return 2;
  }

  /* This rank's device and instance. */
  vyre_host *host = NULL;
  vyre_backend *b = NULL;
  vyre_error err = VYRE_ERROR_INIT;
  char backend[64] = "?", name[128] = "?";
  uint32_t count = 0, ordinal = 0;
  int cpu = 0;
  if (vyre_host_open(NULL, &host, &err) == VYRE_OK) {
    vyre_backend_options o = {sizeof o, 0, 0, 0, NULL};
    uint32_t index = 0;
    if (vyre_host_create(host, id, &o, &b, &index, &err) == VYRE_OK) {
      vyre_host_candidate c;
      memset(&c, 0, sizeof c);
      c.struct_size = sizeof c;
      vyre_host_backend_info(host, index, &c, NULL);
      snprintf(backend, sizeof backend, "%s", c.id ? c.id : "?");
      count = shard_device_count(host, backend, b);
      ordinal = (uint32_t)local % count;
      if (ordinal != 0) { /* an instance on this rank's device instead */
        b->vt->destroy(b);
        b = NULL;
        o.device_ordinal = ordinal;
        if (vyre_host_create(host, backend, &o, &b, NULL, &err) != VYRE_OK) b = NULL;
      }
    }
  }
  vyre_device_profile p;
  memset(&p, 0, sizeof p);
  p.struct_size = sizeof p;
  if (b && b->vt->device_profile(b, &p, &err) == VYRE_OK) {
    snprintf(name, sizeof name, "%s", p.name);
    cpu = p.compute_major == 0;
  }
  if (!b) fprintf(stderr, "multigpu_mpi: rank %d: %s\n", rank, err.message);
  if (!all_ok(b != NULL)) goto out;
  int any_cpu = 0;
  MPI_Allreduce(&cpu, &any_cpu, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
  if (!n) n = any_cpu ? (1u << 20) : (1u << 26);

  /* Scatter the shards. */
  uint64_t first = 0, mine = 0;
  shard_range(n, (uint32_t)ranks, (uint32_t)rank, &first, &mine);
  int *counts = NULL, *displs = NULL;
  float *x = NULL, *y = NULL;
  float *sx = malloc(mine * sizeof *sx), *sy = malloc(mine * sizeof *sy);
  if (rank == 0) {
    counts = malloc((size_t)ranks * sizeof *counts);
    displs = malloc((size_t)ranks * sizeof *displs);
    x = malloc(n * sizeof *x);
    y = malloc(n * sizeof *y);
    if (counts && displs && x && y) {
      for (int r = 0; r < ranks; r++) {
        uint64_t f, k;
        shard_range(n, (uint32_t)ranks, (uint32_t)r, &f, &k);
        counts[r] = (int)k;
        displs[r] = (int)f;
      }
      for (uint64_t i = 0; i < n; i++) {
        x[i] = shard_x(i);
        y[i] = shard_y(i);
      }
    }
  }
  ok = sx && sy && (rank != 0 || (counts && displs && x && y));
  if (!ok) fprintf(stderr, "multigpu_mpi: rank %d: out of host memory. Fix: pass a smaller -n\n", rank);
  if (!all_ok(ok)) goto free_all;
  if (rank == 0)
    printf("multigpu_mpi: backend %s, %d rank%s, %llu f32 elements, y = a*x + y %u times\n",
           backend, ranks, ranks == 1 ? "" : "s", (unsigned long long)n, passes);
  MPI_Scatterv(x, counts, displs, MPI_FLOAT, sx, (int)mine, MPI_FLOAT, 0, MPI_COMM_WORLD);
  MPI_Scatterv(y, counts, displs, MPI_FLOAT, sy, (int)mine, MPI_FLOAT, 0, MPI_COMM_WORLD);

  /* This rank's shard on its device. */
  shard_job job;
  shard_times t = {0, 0, 0};
  vyre_status st = shard_prepare(&job, b, mine, &err);
  if (st == VYRE_OK) st = shard_upload(&job, sx, sy, &t.upload_s, &err);
  if (st == VYRE_OK) st = shard_warmup(&job, &err);
  if (!all_ok(st == VYRE_OK)) {
    if (st != VYRE_OK) fprintf(stderr, "multigpu_mpi: rank %d: %s\n", rank, err.message);
    shard_release(&job);
    goto free_all;
  }
  MPI_Barrier(MPI_COMM_WORLD);
  double t0 = MPI_Wtime();
  st = shard_kernels(&job, passes, &t.kernels_s, &err);
  MPI_Barrier(MPI_COMM_WORLD);
  double kernels_wall = MPI_Wtime() - t0;
  if (st == VYRE_OK) st = shard_download(&job, sy, &t.download_s, &err);
  shard_release(&job);
  if (st != VYRE_OK) fprintf(stderr, "multigpu_mpi: rank %d: %s\n", rank, err.message);
  if (!all_ok(st == VYRE_OK)) goto free_all;

  /* Gather the results and the times. */
  MPI_Gatherv(sy, (int)mine, MPI_FLOAT, y, counts, displs, MPI_FLOAT, 0, MPI_COMM_WORLD);
  double mine_t[4] = {t.upload_s, t.kernels_s, t.download_s, (double)ordinal};
  double *all_t = rank == 0 ? malloc((size_t)ranks * sizeof mine_t) : NULL;
  char *names = rank == 0 ? malloc((size_t)ranks * sizeof name) : NULL;
  MPI_Gather(mine_t, 4, MPI_DOUBLE, all_t, 4, MPI_DOUBLE, 0, MPI_COMM_WORLD);
  MPI_Gather(name, (int)sizeof name, MPI_CHAR, names, (int)sizeof name, MPI_CHAR, 0,
             MPI_COMM_WORLD);
  ok = 1;
  if (rank == 0) {
    for (int r = 0; r < ranks; r++) {
      double *rt = all_t + 4 * r;
      double g = rt[1] > 0 ? SHARD_BYTES_PER_ELEMENT * counts[r] * passes / rt[1] / 1e9 : 0;
      printf("rank %d device %.0f (%s): %d elements: upload %.3f ms, kernels %.3f ms (%.1f GB/s), "
             "download %.3f ms\n",
             r, rt[3], names + (size_t)r * sizeof name, counts[r], rt[0] * 1e3, rt[1] * 1e3, g,
             rt[2] * 1e3);
    }
    printf("total: %d rank%s: kernels %.3f ms wall, %.1f GB/s\n", ranks, ranks == 1 ? "" : "s",
           kernels_wall * 1e3,
           kernels_wall > 0 ? SHARD_BYTES_PER_ELEMENT * (double)n * passes / kernels_wall / 1e9 : 0);
    uint64_t bad = shard_check(y, 0, n, passes);
    if (bad)
      printf("check: %llu of %llu elements differ from the CPU\n", (unsigned long long)bad,
             (unsigned long long)n);
    else
      printf("check: all %llu elements bit-exact against the CPU\n", (unsigned long long)n);
    ok = bad == 0;
  }
  free(all_t);
  free(names);
  MPI_Bcast(&ok, 1, MPI_INT, 0, MPI_COMM_WORLD);
  if (ok) {
    free(sx);
    free(sy);
    free(x);
    free(y);
    free(counts);
    free(displs);
    b->vt->destroy(b);
    vyre_host_close(host);
    MPI_Finalize();
    return 0;
  }
free_all:
  free(sx);
  free(sy);
  free(x);
  free(y);
  free(counts);
  free(displs);
out:
  if (b) b->vt->destroy(b);
  vyre_host_close(host);
  MPI_Finalize();
  return 1;
}
