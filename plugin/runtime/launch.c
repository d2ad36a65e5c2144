/* launch.c -- shaping, params, trap words and enqueueing of one kernel launch; the dispatch counters (launch.h). */
#include "launch.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "util.h"

void vc_launcher_init(vc_launcher *lx, vc_context *cx, vc_mempool *devpool, vc_mempool *hostpool,
                      vc_modcache *plans) {
  memset(lx, 0, sizeof *lx);
  lx->cx = cx;
  lx->devpool = devpool;
  lx->hostpool = hostpool;
  lx->plans = plans;
}

void vc_launcher_count_dispatch(vc_launcher *lx) { atomic_fetch_add(&lx->dispatches, 1); }

void vc_launcher_count_sequence(vc_launcher *lx) { atomic_fetch_add(&lx->sequences, 1); }

void vc_launcher_in_flight(vc_launcher *lx, int delta) {
  if (delta >= 0) atomic_fetch_add(&lx->in_flight, (unsigned long long)delta);
  else atomic_fetch_sub(&lx->in_flight, (unsigned long long)-delta);
}

static void read_metrics(const void *state, vc_metric_sink *s) {
  vc_launcher *lx = (vc_launcher *)state;
  vc_metric_emit(s, "dispatch.count", atomic_load(&lx->dispatches));
  vc_metric_emit(s, "dispatch.launches", atomic_load(&lx->launches));
  vc_metric_emit(s, "dispatch.fastpath_launches", atomic_load(&lx->fastpath_launches));
  vc_metric_emit(s, "dispatch.sequences", atomic_load(&lx->sequences));
  vc_metric_emit(s, "dispatch.params_skipped", atomic_load(&lx->params_skipped));
  vc_metric_emit(s, "dispatch.traps", atomic_load(&lx->traps));
  vc_metric_emit(s, "dispatch.in_flight", atomic_load(&lx->in_flight));
  vc_metric_emit(s, "dispatch.fills", atomic_load(&lx->fills));
}

void vc_launcher_add_metrics(vc_launcher *lx, vc_metrics *m) { vc_metrics_add(m, read_metrics, lx); }

vyre_status vc_launch_shape(vc_launcher *lx, vc_launch *L, const uint64_t *input_sizes,
                            const uint64_t *resident_sizes, const vyre_dispatch_options *o,
                            vyre_error *err) {
  L->k = vc_plan_kernel(L->plan);
  const vc_kernel *p = L->k;
  const vyre_device_profile *prof = vc_context_profile(lx->cx);
  const vc_device_info *dev = vc_context_device(lx->cx);
  vyre_dispatch_options eff = *o;
  /* Geometry with the workgroup the kernel was compiled for. */
  memcpy(eff.workgroup, p->cg.workgroup, sizeof eff.workgroup);
  vyre_status st =
      vyre_geometry_derive(p->program, input_sizes, resident_sizes, &eff, &L->geo, err);
  if (st != VYRE_OK) return st;
  memcpy(L->block, L->geo.workgroup, sizeof L->block);
  if (p->info.grid_mode == CG_GRID_ELEMENTWISE) {
    uint64_t per = (uint64_t)L->geo.workgroup[0] * p->info.elements_per_thread;
    uint64_t gx = per ? ((uint64_t)L->geo.element_count + per - 1) / per : 0;
    L->grid[0] = (uint32_t)gx;
    L->grid[1] = L->grid[2] = gx ? 1u : 0u;
  } else {
    memcpy(L->grid, L->geo.grid, sizeof L->grid);
  }
  for (int i = 0; i < 3; i++)
    if (L->grid[i] > prof->max_workgroups[i])
      return vyre_error_set(err, VYRE_LIMIT, 0,
                            "dispatch: grid %u x %u x %u exceeds CUDA device %u's limit %u x %u "
                            "x %u. Fix: use a wider workgroup or a smaller grid",
                            L->grid[0], L->grid[1], L->grid[2], dev->ordinal,
                            prof->max_workgroups[0], prof->max_workgroups[1],
                            prof->max_workgroups[2]);
  if (p->info.uses_grid_barrier) {
    uint64_t blocks = (uint64_t)L->grid[0] * L->grid[1] * L->grid[2];
    if (!dev->cooperative)
      return vyre_error_set(err, VYRE_UNSUPPORTED, 0,
                            "unsupported: kernel %s has a grid barrier and CUDA device %u has no "
                            "cooperative launch. Fix: use another device or split the program "
                            "at the barrier",
                            p->info.entry, dev->ordinal);
    if (blocks > p->coop_max_blocks)
      return vyre_error_set(err, VYRE_LIMIT, 0,
                            "dispatch: kernel %s has a grid barrier, so all its %llu workgroups "
                            "must be resident at once, but CUDA device %u fits only %u (%d SMs). "
                            "Fix: use at most %u workgroups (a grid override) or a smaller "
                            "workgroup",
                            p->info.entry, (unsigned long long)blocks, dev->ordinal,
                            p->coop_max_blocks, dev->sm_count, p->coop_max_blocks);
  }
  L->iterations = o->fixpoint_iterations > 1 ? o->fixpoint_iterations : 1u;
  uint32_t words = vyre_params_word_count(p->program);
  L->params_words = p->info.params_words > words ? p->info.params_words : words;
  return VYRE_OK;
}

static uint32_t trap_word(const vc_launch *L) { return 1u + L->k->program->buffer_count; }

/* A kernel without trap or grid-barrier words never reads its params
 * block: its count words come by value (docs/kernel-abi.md), so it gets
 * no device block and no upload at all. */
static int has_no_block(const vc_launch *L) {
  return !L->k->info.uses_trap && !L->k->info.uses_grid_barrier;
}

/* Stage the params words in the pinned copy (the kernel's counts argument
 * and, for kernels with trap or grid words, the block to upload). */
vyre_status vc_launch_stage_params(vc_launcher *lx, vc_launch *L, vyre_error *err) {
  uint64_t bytes = (uint64_t)L->params_words * 4u;
  vyre_status st = vc_mempool_acquire(lx->hostpool, bytes * 2u, &L->params_host, err);
  if (st != VYRE_OK) return st;
  uint32_t *words = (uint32_t *)(uintptr_t)L->params_host.ptr;
  memset(words, 0, (size_t)bytes * 2u);
  vyre_params_fill(L->k->program, &L->geo, words);
  if (has_no_block(L)) {
    atomic_fetch_add(&lx->params_skipped, 1);
    return VYRE_OK;
  }
  return vc_mempool_acquire(lx->devpool, bytes, &L->params_dev, err);
}

vyre_status vc_launch_upload_params(vc_launcher *lx, const vc_launch *L, CUstream s,
                                    vyre_error *err) {
  vc_context *cx = lx->cx;
  if (!L->params_dev.ptr) return VYRE_OK; /* the kernel reads no params block */
  CUresult r = VC_CU(cx, cuMemcpyHtoDAsync, ((CUdeviceptr)L->params_dev.ptr,
                                            (const void *)(uintptr_t)L->params_host.ptr,
                                            (size_t)L->params_words * 4u, s));
  if (r != CUDA_SUCCESS) return vc_cu_fail(cx, err, r, "cuMemcpyHtoDAsync", L->k->info.entry, NULL);
  return VYRE_OK;
}

/* Read the trap words back into the second half of the pinned block. */
vyre_status vc_launch_read_trap(vc_launcher *lx, const vc_launch *L, CUstream s, vyre_error *err) {
  vc_context *cx = lx->cx;
  if (!L->k->info.uses_trap) return VYRE_OK;
  uint64_t off = (uint64_t)trap_word(L) * 4u;
  uint8_t *dst = (uint8_t *)(uintptr_t)L->params_host.ptr + (uint64_t)L->params_words * 4u + off;
  CUresult r = VC_CU(cx, cuMemcpyDtoHAsync, (dst, (CUdeviceptr)(L->params_dev.ptr + off),
                                            VYRE_PARAMS_TRAP_WORDS * 4u, s));
  if (r != CUDA_SUCCESS) return vc_cu_fail(cx, err, r, "cuMemcpyDtoHAsync", L->k->info.entry, NULL);
  return VYRE_OK;
}

/* After completion: VYRE_TRAP when the kernel recorded a trap. */
vyre_status vc_launch_check_trap(vc_launcher *lx, const vc_launch *L, int step, vyre_error *err) {
  if (!L->k->info.uses_trap) return VYRE_OK;
  const uint32_t *back =
      (const uint32_t *)(uintptr_t)L->params_host.ptr + L->params_words + trap_word(L);
  uint32_t code = back[0], inst1 = back[1];
  if (!inst1) return VYRE_OK;
  char where[48] = "";
  if (step >= 0) snprintf(where, sizeof where, " in sequence step %d", step);
  if (L->indirect && inst1 >= CG_INDIRECT_TRAP && inst1 - CG_INDIRECT_TRAP < 3u) {
    uint32_t axis = inst1 - CG_INDIRECT_TRAP;
    return vyre_error_set(err, VYRE_LIMIT, (int64_t)code,
                          "indirect dispatch%s: workgroup count %u on axis %c exceeds the bound "
                          "%u x %u x %u the launch was sized for (the derived grid or "
                          "options.grid); no invocation of this dispatch ran (kernel %s). Fix: "
                          "keep the counts within the bound, or dispatch with a larger grid "
                          "(options.grid)",
                          where, code, "xyz"[axis], L->grid[0], L->grid[1], L->grid[2],
                          L->k->info.entry);
  }
  atomic_fetch_add(&lx->traps, 1);
  return vyre_error_set(err, VYRE_TRAP, (int64_t)code,
                        "program trapped%s: trap code %u at instruction %u (kernel %s); the "
                        "outputs are discarded and the backend stays usable. Fix: the program "
                        "reached its trap on this input; check the condition guarding "
                        "instruction %u",
                        where, code, inst1 - 1u, L->k->info.entry, inst1 - 1u);
}

/* The memset that replaces fill launch L: 1 when L is a fill whose
 * buffer the word size divides (resident buffers always are aligned). */
static int fill_of(const vc_launch *L, CUdeviceptr *dst, uint64_t *words) {
  const vc_fill *f = &L->k->fill;
  if (!f->is_fill || L->indirect) return 0; /* the count decides what runs */
  *dst = L->ptrs[f->kernel_index];
  /* The count words as the kernel would get them: a chunk of a split
   * dispatch has its own (split.c). */
  *words = vc_fill_words(f, (const uint32_t *)(uintptr_t)L->params_host.ptr, L->grid, L->block);
  return *dst % f->unit == 0;
}

/* Fill L's buffer with one memset on s (a memset node under capture). */
static vyre_status enqueue_fill(vc_launcher *lx, const vc_launch *L, CUdeviceptr dst,
                                uint64_t words, CUstream s, int count, vyre_error *err) {
  vc_context *cx = lx->cx;
  const vc_fill *f = &L->k->fill;
  CUresult r = CUDA_SUCCESS;
  const char *call = f->unit == 4 ? "cuMemsetD32Async"
                     : f->unit == 2 ? "cuMemsetD16Async" : "cuMemsetD8Async";
  if (words && f->unit == 4) r = VC_CU(cx, cuMemsetD32Async, (dst, f->pattern, words, s));
  else if (words && f->unit == 2)
    r = VC_CU(cx, cuMemsetD16Async, (dst, (unsigned short)f->pattern, words, s));
  else if (words) r = VC_CU(cx, cuMemsetD8Async, (dst, (unsigned char)f->pattern, words, s));
  if (r != CUDA_SUCCESS) return vc_cu_fail(cx, err, r, call, L->k->info.entry, NULL);
  if (count) atomic_fetch_add(&lx->fills, 1);
  return VYRE_OK;
}

vyre_status vc_launch_enqueue(vc_launcher *lx, const vc_launch *L, CUstream s, int count,
                              vyre_error *err) {
  vc_context *cx = lx->cx;
  if (!L->grid[0] || !L->grid[1] || !L->grid[2]) return VYRE_OK; /* no elements: no launch */
  const vc_kernel *p = L->k;
  CUdeviceptr fill_dst;
  uint64_t fill_words;
  /* A fill is idempotent: one memset stands for every fixpoint iteration. */
  if (fill_of(L, &fill_dst, &fill_words))
    return enqueue_fill(lx, L, fill_dst, fill_words, s, count, err);
  CUdeviceptr vals[VYRE_MAX_BUFFERS + 2];
  void *args[VYRE_MAX_BUFFERS + 3];
  uint32_t n = p->info.kernel_buffers;
  for (uint32_t i = 0; i < n; i++) {
    vals[i] = L->ptrs[i];
    args[i] = &vals[i];
  }
  /* counts: the params words themselves, by value (the driver copies
   * them at the launch, or into the graph node at capture). */
  args[n] = (void *)(uintptr_t)L->params_host.ptr;
  vals[n] = (CUdeviceptr)L->params_dev.ptr;
  args[n + 1] = &vals[n];
  /* indirect: the counts' address (docs/kernel-abi.md); the kernel reads
   * them when it runs, so a graph node replays with the current ones. */
  vals[n + 1] = L->indirect;
  args[n + 2] = &vals[n + 1];
  for (uint32_t it = 0; it < L->iterations; it++) {
    CUresult r;
    /* 2^30 fixpoint launches take long to enqueue: with a deadline the
     * clock is read every 256 of them. */
    if (L->deadline && (it & 255u) == 255u && vyre__deadline_passed(L->deadline))
      return vc_timeout_fail(cx, err, "dispatch", p->info.entry, L->timeout_ns);
    if (p->info.uses_grid_barrier) {
      r = VC_CU(cx, cuLaunchCooperativeKernel, (p->fn, L->grid[0], L->grid[1], L->grid[2],
                                               L->block[0], L->block[1], L->block[2], 0, s,
                                               args));
      if (r != CUDA_SUCCESS)
        return vc_cu_fail(cx, err, r, "cuLaunchCooperativeKernel", p->info.entry, NULL);
    } else {
      r = VC_CU(cx, cuLaunchKernel, (p->fn, L->grid[0], L->grid[1], L->grid[2], L->block[0],
                                    L->block[1], L->block[2], 0, s, args, NULL));
      if (r != CUDA_SUCCESS) return vc_cu_fail(cx, err, r, "cuLaunchKernel", p->info.entry, NULL);
    }
    if (!count) continue;
    atomic_fetch_add(&lx->launches, 1);
    if (p->info.grid_mode == CG_GRID_ELEMENTWISE) atomic_fetch_add(&lx->fastpath_launches, 1);
  }
  return VYRE_OK;
}

void vc_launch_replay_counts(const vc_launch *L, uint32_t *launches, uint32_t *fastpath,
                             uint32_t *fills) {
  *launches = *fastpath = *fills = 0;
  if (!L->grid[0] || !L->grid[1] || !L->grid[2]) return;
  CUdeviceptr dst;
  uint64_t words;
  if (fill_of(L, &dst, &words)) {
    *fills = 1;
    return;
  }
  *launches = L->iterations;
  if (L->k->info.grid_mode == CG_GRID_ELEMENTWISE) *fastpath = L->iterations;
}

void vc_launcher_count_replays(vc_launcher *lx, uint64_t launches, uint64_t fastpath,
                               uint64_t fills) {
  atomic_fetch_add(&lx->launches, launches);
  atomic_fetch_add(&lx->fastpath_launches, fastpath);
  atomic_fetch_add(&lx->fills, fills);
}

void vc_launch_release(vc_launcher *lx, vc_launch *L) {
  vc_mempool_release(lx->hostpool, &L->params_host);
  vc_mempool_release(lx->devpool, &L->params_dev);
  if (L->plan) vc_plan_unref(lx->plans, L->plan);
  L->plan = NULL;
  L->k = NULL;
}

double vc_elapsed_ms(vc_context *cx, CUevent t0, CUevent t1, int *ok) {
  float ms = 0.0f;
  CUresult r = VC_CU(cx, cuEventElapsedTime, (&ms, t0, t1));
  *ok = r == CUDA_SUCCESS && ms >= 0.0f;
  if (r != CUDA_SUCCESS) vc_cu_note(cx, r, "cuEventElapsedTime");
  return ms;
}

void vc_write_timing(vyre_timing *out, const vyre_timing *t) {
  vyre__sized_write(out, t, sizeof *t);
}

vyre_status vc_check_timing(vyre_timing *t, vyre_error *err) {
  if (t && t->struct_size < 8)
    return vyre_error_set(err, VYRE_INVALID_ARGUMENT, 0,
                          "timing: struct_size %u is too small. Fix: set timing->struct_size = "
                          "sizeof(vyre_timing)",
                          t->struct_size);
  return VYRE_OK;
}

vyre_status vc_check_options(const vyre_dispatch_options *o, vyre_error *err) {
  if (o && o->struct_size < 8)
    return vyre_error_set(err, VYRE_INVALID_ARGUMENT, 0,
                          "dispatch options: struct_size %u is too small. Fix: set "
                          "struct_size = sizeof(vyre_dispatch_options)",
                          o->struct_size);
  if (o && o->flags)
    return vyre_error_set(err, VYRE_INVALID_ARGUMENT, 0,
                          "dispatch options: unknown flags 0x%x. Fix: pass flags = 0",
                          o->flags);
  return VYRE_OK;
}

