/* sweep.c -- check_cuda_fake's errors case, the fault sweeps: every driver call of a workload failed in turn. */
#include "harness.h"

/* Calls whose failure happens during cleanup or is recoverable: the
 * workload may succeed, and (for frees) the object is left to context
 * destruction. */
static int cleanup_call(const char *name) {
  static const char *list[] = {"cuMemFree", "cuMemFreeHost", "cuStreamDestroy", "cuEventDestroy",
                               "cuModuleUnload", "cuLinkDestroy", "cuGraphExecDestroy",
                               "cuGraphDestroy", "cuCtxPopCurrent", "cuDevicePrimaryCtxRelease",
                               "cuEventElapsedTime", "cuEventQuery", "cuGetErrorName",
                               "cuGetErrorString", "cuModuleLoadData"};
  for (size_t i = 0; i < sizeof list / sizeof list[0]; i++)
    if (strcmp(list[i], name) == 0) return 1;
  return 0;
}

typedef struct sweep_programs {
  prog scale, inc, trap, grid;
} sweep_programs;

/* A representative workload; returns the first failure (and its message). */
static vyre_status workload(vyre_backend *b, const sweep_programs *sp, vyre_error *err) {
  vyre_status st;
  uint32_t in[256];
  for (int i = 0; i < 256; i++) in[i] = (uint32_t)i;
  vyre_outputs *out = NULL;
  vyre_timing t = {.struct_size = sizeof t};
  vyre_program_ref rs = ref_of(&sp->scale), ri = ref_of(&sp->inc);
  vyre_input inputs[1] = {{in, sizeof in}};
#define TRY(call)                \
  do {                           \
    st = (call);                 \
    if (st != VYRE_OK) return st; \
  } while (0)
  TRY(b->vt->prepare(b, err));
  TRY(b->vt->dispatch(b, &rs, inputs, 1, NULL, &out, &t, err));
  b->vt->outputs_free(b, out);
  out = NULL;
  vyre_pending h;
  TRY(b->vt->dispatch_async(b, &rs, inputs, 1, NULL, &h, err));
  int ready;
  st = b->vt->pending_poll(b, h, &ready, err);
  if (st != VYRE_OK) {
    b->vt->pending_release(b, h, NULL);
    return st;
  }
  TRY(b->vt->pending_wait(b, h, &out, &t, err));
  b->vt->outputs_free(b, out);
  out = NULL;
  TRY(b->vt->dispatch_async(b, &rs, inputs, 1, NULL, &h, err));
  TRY(b->vt->pending_release(b, h, err));
  vyre_resident a = 0;
  TRY(b->vt->resident_alloc(b, sizeof in, &a, err));
  st = b->vt->resident_upload(b, a, in, sizeof in, err);
  vyre_sequence_step step = {sizeof step, 1, &ri, &a, NULL};
  uint32_t back[16];
  vyre_resident_copy read = {a, 0, back, sizeof back};
  if (st == VYRE_OK) st = b->vt->dispatch_resident(b, &ri, &a, 1, NULL, &t, err);
  if (st == VYRE_OK) st = b->vt->dispatch_sequence(b, &step, 1, 3, &read, 1, &t, err);
  if (st == VYRE_OK) st = b->vt->resident_download(b, a, in, sizeof in, err);
  vyre_error ferr = VYRE_ERROR_INIT;
  vyre_status fst = b->vt->resident_free(b, a, &ferr);
  if (st != VYRE_OK) return st;
  if (fst != VYRE_OK) {
    vyre_error_copy(err, &ferr);
    return fst;
  }
  /* The interop extension: an import (of part of vyre's own buffer, so
   * the test makes no driver call of its own), dispatches ordered on the
   * legacy default stream. */
  const void *ext = NULL;
  TRY(b->vt->get_extension(b, VYRE_CUDA_INTEROP_NAME, 1, &ext, err));
  const vyre_cuda_interop *cu = ext;
  vyre_resident own = 0, imp = 0;
  TRY(b->vt->resident_alloc(b, sizeof in, &own, err));
  uint64_t dptr = 0;
  st = cu->resident_pointer(b, own, &dptr, NULL, err);
  if (st == VYRE_OK) st = cu->resident_import(b, dptr + 256, 512, &imp, err);
  vyre_cuda_stream cs = {{sizeof cs, VYRE_EXT_CUDA_STREAM, NULL}, NULL};
  vyre_dispatch_options so = {.struct_size = sizeof so, .next = &cs.head};
  if (st == VYRE_OK) st = b->vt->dispatch_resident(b, &ri, &imp, 1, &so, NULL, err);
  if (st == VYRE_OK) st = b->vt->dispatch(b, &rs, inputs, 1, &so, &out, NULL, err);
  b->vt->outputs_free(b, out);
  out = NULL;
  ferr = (vyre_error)VYRE_ERROR_INIT;
  fst = imp ? b->vt->resident_free(b, imp, &ferr) : VYRE_OK;
  if (fst == VYRE_OK) fst = b->vt->resident_free(b, own, &ferr);
  if (st != VYRE_OK) return st;
  if (fst != VYRE_OK) {
    vyre_error_copy(err, &ferr);
    return fst;
  }
  vyre_program_ref rg = ref_of(&sp->grid);
  TRY(b->vt->dispatch(b, &rg, NULL, 0, NULL, &out, NULL, err));
  b->vt->outputs_free(b, out);
  out = NULL;
  vyre_pipeline pl;
  TRY(b->vt->pipeline_create(b, sp->trap.bytes, sp->trap.size, NULL, &pl, err));
  vyre_program_ref rp = VYRE_PROGRAM_PIPELINE(pl);
  st = b->vt->dispatch(b, &rp, NULL, 0, NULL, &out, NULL, err);
  b->vt->outputs_free(b, out);
  b->vt->pipeline_release(b, pl, NULL);
  if (st != VYRE_OK) return st;
  return b->vt->shutdown(b, err);
#undef TRY
}

/* Fail call k of `call` with `code` in a fresh process running the
 * workload, and check what the plugin made of it; returns whether the
 * workload (or create) failed. */
static int sweep_one(const sweep_programs *sp, const char *call, unsigned long k, int code,
                     int sticky) {
  fk.reset();
  fk.allow_legacy(1);
  fk.inject(call, k, code, 1);
  vyre_error e = VYRE_ERROR_INIT;
  vyre_backend *x = NULL;
  vyre_status st = reg->create(NULL, &x, &e);
  if (st == VYRE_OK) {
    st = workload(x, sp, &e);
  }
  int fired = fk.calls(call) >= k; /* else it fires in destroy */
  if (st != VYRE_OK) {
    /* A sticky code spoils the process; when a later call is the one
     * that sees it (create's retain), the error says that instead. */
    int spoiled = sticky && strstr(e.message, "unusable in this process") != NULL;
    ck_assert_msg(strstr(e.message, call) != NULL || spoiled,
                  "failing call %lu of %s (code %d) gives an error naming it: %s [%s]", k,
                  call, code, e.message, vyre_status_name(st));
    ck_assert_msg(strstr(e.message, "Fix:") != NULL, "the error has a fix: %s", e.message);
    if (x && !sticky) {
      /* Not sticky: the instance is still usable. */
      vyre_error e2 = VYRE_ERROR_INIT;
      vyre_status again = workload(x, sp, &e2);
      ck_assert_msg(again == VYRE_OK,
                    "after call %lu of %s failed with a non-sticky code the instance works: "
                    "%s",
                    k, call, e2.message);
    }
    if (x && sticky && st == VYRE_DEVICE_LOST) {
      vyre_error e2 = VYRE_ERROR_INIT;
      ck_assert_int_eq(workload(x, sp, &e2), VYRE_DEVICE_LOST);
    }
  } else if (fired) {
    /* Out of memory on an allocation is retried after trimming the pools. */
    int retried = code == CUDA_ERROR_OUT_OF_MEMORY &&
                  (!strcmp(call, "cuMemAlloc") || !strcmp(call, "cuMemHostAlloc"));
    /* A sticky error at the very end (shutdown, destroy) reaches nobody
     * who could report it; create's health check tried a reset. */
    int reset = fk.calls("cuDevicePrimaryCtxReset") > 0;
    ck_assert_msg(retried || reset || cleanup_call(call) ||
                      (x && metric(x, "driver.errors") > 0),
                  "call %lu of %s failed (code %d) yet nothing was reported", k, call,
                  code);
  }
  if (x) x->vt->destroy(x);
  /* destroy cannot report; without a current context it leaves the
   * objects to the context's destruction. */
  int orphaned = !fired && fk.calls(call) >= k && !strcmp(call, "cuCtxPushCurrent");
  fakecuda_live l;
  fk.live(&l);
  if (strcmp(call, "cuDevicePrimaryCtxRelease") == 0 && l.ctx_refs > 0) {
    fk.ctx_release(0); /* the plugin could not; balance it for the next round */
    fk.live(&l);
  }
  ck_assert_msg(l.ctx_refs == 0, "after failing %s #%lu the context is released", call, k);
  if (!cleanup_call(call) && !sticky && !orphaned)
    ck_assert_msg(l.reclaimed == 0,
                  "after failing %s #%lu the plugin freed all it made (%lu objects left)",
                  call, k, l.reclaimed);
  char last[512];
  ck_assert_msg(fk.violations(last, sizeof last) == 0,
                "after failing %s #%lu the driver was used correctly: %s", call, k, last);
  return st != VYRE_OK;
}

static void sweep(int code, int sticky) {
  setenv("VYRE_CUDA_DISK_CACHE", "0", 1);
  setenv("VYRE_CUDA_STAGING_CHUNK", "512", 1);
  sweep_programs sp = {prog_scale(256, 2, 64), prog_inc(64), prog_trap(64), prog_grid(128, 64)};
  vyre_error err = VYRE_ERROR_INIT;

  /* A clean run gives the list of calls and how often each is made. */
  fk.reset();
  fk.allow_legacy(1);
  vyre_backend *b = mk();
  ck_assert_msg(workload(b, &sp, &err) == VYRE_OK, "clean workload: %s", err.message);
  b->vt->destroy(b);
  const char *names[128];
  unsigned n = fk.names(names, 128);
  char copy[128][64];
  unsigned long counts[128];
  for (unsigned i = 0; i < n; i++) {
    snprintf(copy[i], sizeof copy[i], "%s", names[i]);
    counts[i] = fk.calls(names[i]);
  }
  unsigned tried = 0, failed = 0;
  for (unsigned i = 0; i < n; i++) {
    /* The first six calls, and the last one (usually in shutdown or destroy). */
    unsigned long limit = counts[i] < 7 ? counts[i] : 7;
    for (unsigned long step = 1; step <= limit; step++) {
      unsigned long k = step < 7 ? step : counts[i];
      failed += (unsigned)sweep_one(&sp, copy[i], k, code, sticky);
      tried++;
    }
  }
  unsigned used = 0;
  for (unsigned i = 0; i < n; i++) used += counts[i] > 0;
  fprintf(stderr,
          "fault sweep (code %d): %u injected failures over the %u entry points the workload "
          "calls, %u surfaced as errors\n",
          code, tried, used, failed);
  ck_assert_msg(tried > 100, "the sweep covered the workload's calls (%u)", tried);
  free(sp.scale.bytes);
  free(sp.inc.bytes);
  free(sp.trap.bytes);
  free(sp.grid.bytes);
}

START_TEST(test_fault_sweep) { sweep(CUDA_ERROR_INVALID_VALUE, 0); }
END_TEST

START_TEST(test_fault_sweep_sticky) { sweep(CUDA_ERROR_LAUNCH_FAILED, 1); }
END_TEST

START_TEST(test_fault_sweep_oom) { sweep(CUDA_ERROR_OUT_OF_MEMORY, 0); }
END_TEST

void fake_sweep_tests(TCase *tc) {
  tcase_add_test(tc, test_fault_sweep);
  tcase_add_test(tc, test_fault_sweep_sticky);
  tcase_add_test(tc, test_fault_sweep_oom);
}
