/* check_cuda_faults.c -- systematic fault injection: every driver call, then every host allocation, of one workload fails in turn. */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cuda.h>

#include "fakeharness.h"
#if defined(FAULTS_ALLOCS) && !defined(FAULTS_NO_FAILALLOC)
#include "failalloc.h"
#endif
#include "vyre/vyre.h"
#include "vyre/vyre_cuda.h"
#include "vyre/vyre_support.h"

/* A sanitizer build's check_cuda_allocs has nothing to run (main says SKIP). */
#ifndef FAULTS_NO_FAILALLOC
/* ------------------------------------------------------------------ */
/* The workload                                                        */
/* ------------------------------------------------------------------ */
#define SMALL 64u   /* words: 256 bytes, below a staging chunk: the pinned pool */
#define BIG 1024u   /* words: 4 KiB, four staging chunks: the staging ring */
#define CHUNK 1024u /* VYRE_CUDA_STAGING_CHUNK for the sweeps */
#define K_SMALL 3u
#define K_BIG 5u

static fh_prog p_small, p_big, p_inc, p_trap, p_grid;

/* What one run holds, so that a failure at any step releases it all. */
typedef struct run {
  vyre_backend *b;
  vyre_resident res[3];
  vyre_pipeline pl;
  vyre_outputs *out;
  char wrong[512]; /* a call succeeded with a wrong result */
  unsigned steps;  /* steps completed */
} run;

static void wrong(run *r, const char *what, uint32_t i, uint32_t got, uint32_t want) {
  if (!r->wrong[0])
    snprintf(r->wrong, sizeof r->wrong, "%s: word %u is %u, expected %u", what, i, got, want);
}

static void check_words(run *r, const char *what, const uint32_t *got, const uint32_t *want,
                        uint32_t n) {
  for (uint32_t i = 0; i < n; i++)
    if (got[i] != want[i]) {
      wrong(r, what, i, got[i], want[i]);
      return;
    }
}

static void check_scaled(run *r, const char *what, const vyre_outputs *o, const uint32_t *in,
                         uint32_t n, uint32_t k) {
  if (!o || o->count != 1 || o->items[0].size != (uint64_t)n * 4u) {
    if (!r->wrong[0]) snprintf(r->wrong, sizeof r->wrong, "%s: outputs have the wrong shape", what);
    return;
  }
  const uint32_t *got = o->items[0].data;
  for (uint32_t i = 0; i < n; i++)
    if (got[i] != in[i] * k) {
      wrong(r, what, i, got[i], in[i] * k);
      return;
    }
}

#define STEP(call)              \
  do {                          \
    st = (call);                \
    if (st != VYRE_OK) return st; \
    r->steps++;                 \
  } while (0)

/* Every path the issue names, on one instance: sync, into, async (waited
 * and released), the staging ring both ways, resident buffers and every
 * transfer kind, a sequence replayed as a graph (captured, then the fast
 * path), a sequence of bytes, a pipeline, the interop extension on a host
 * stream, a trap, a cooperative launch, shutdown.  Timing everywhere it
 * can be asked (events).  Returns the first failure; handles stay in *r. */
static vyre_status workload(run *r, vyre_error *err) {
  vyre_backend *b = r->b;
  vyre_status st;
  uint32_t in[BIG], want[BIG], back[BIG];
  for (uint32_t i = 0; i < BIG; i++) in[i] = i * 7u + 1u;
  vyre_timing t = {.struct_size = sizeof t};
  vyre_program_ref rs = fh_ref(&p_small), rb = fh_ref(&p_big), ri = fh_ref(&p_inc);
  vyre_input small_in[1] = {{in, SMALL * 4u}}, big_in[1] = {{in, BIG * 4u}};

  STEP(b->vt->prepare(b, err));
  vyre_device_profile prof = {.struct_size = sizeof prof};
  STEP(b->vt->device_profile(b, &prof, err));
  /* sync, timed */
  STEP(b->vt->dispatch(b, &rs, small_in, 1, NULL, &r->out, &t, err));
  check_scaled(r, "dispatch", r->out, in, SMALL, K_SMALL);
  b->vt->outputs_free(b, r->out);
  r->out = NULL;
  /* into, through the ring both ways */
  vyre_output_slot slot = {back, sizeof back, 0};
  STEP(b->vt->dispatch_into(b, &rb, big_in, 1, NULL, &slot, 1, &t, err));
  for (uint32_t i = 0; i < BIG; i++) want[i] = in[i] * K_BIG;
  check_words(r, "dispatch_into (staging ring)", back, want, BIG);
  /* async: polled and waited, then one released unwaited */
  vyre_pending h = 0;
  STEP(b->vt->dispatch_async(b, &rb, big_in, 1, NULL, &h, err));
  int ready = 0;
  st = b->vt->pending_poll(b, h, &ready, err);
  if (st != VYRE_OK) {
    vyre_status rel = b->vt->pending_release(b, h, NULL);
    if (rel != VYRE_OK && !r->wrong[0])
      snprintf(r->wrong, sizeof r->wrong, "pending_release after a failed poll: %s",
               vyre_status_name(rel));
    return st;
  }
  STEP(b->vt->pending_wait(b, h, &r->out, &t, err));
  check_scaled(r, "dispatch_async", r->out, in, BIG, K_BIG);
  b->vt->outputs_free(b, r->out);
  r->out = NULL;
  STEP(b->vt->dispatch_async(b, &rs, small_in, 1, NULL, &h, err));
  STEP(b->vt->pending_release(b, h, err));
  /* resident: a ring-sized buffer and a small one */
  STEP(b->vt->resident_alloc(b, BIG * 4u, &r->res[0], err));
  STEP(b->vt->resident_upload(b, r->res[0], in, BIG * 4u, err));
  STEP(b->vt->dispatch_resident(b, &ri, &r->res[0], 1, NULL, &t, err));
  memset(back, 0, sizeof back);
  STEP(b->vt->resident_download(b, r->res[0], back, sizeof back, err));
  for (uint32_t i = 0; i < BIG; i++) want[i] = in[i] + 1u;
  check_words(r, "resident dispatch (staging ring)", back, want, BIG);
  STEP(b->vt->resident_alloc(b, SMALL * 4u, &r->res[1], err));
  vyre_resident_copy up[1] = {{r->res[1], 0, in, SMALL * 4u}};
  STEP(b->vt->resident_upload_many(b, up, 1, err));
  uint32_t patch[4] = {100, 101, 102, 103};
  STEP(b->vt->resident_upload_at(b, r->res[1], 16, patch, sizeof patch, err));
  uint32_t small_want[SMALL];
  memcpy(small_want, in, sizeof small_want);
  memcpy(small_want + 4, patch, sizeof patch);
  STEP(b->vt->resident_download_range(b, r->res[1], 16, back, sizeof patch, err));
  check_words(r, "resident_download_range", back, patch, 4);
  /* a pipeline, a sequence replayed as a graph: captured, then the fast path */
  STEP(b->vt->pipeline_create(b, p_inc.bytes, p_inc.size, NULL, &r->pl, err));
  vyre_program_ref rp = VYRE_PROGRAM_PIPELINE(r->pl);
  vyre_sequence_step step = {sizeof step, 1, &rp, &r->res[1], NULL};
  vyre_resident_copy read = {r->res[1], 0, back, SMALL * 4u};
  for (int round = 1; round <= 2; round++) {
    STEP(b->vt->dispatch_sequence(b, &step, 1, 3, &read, 1, &t, err));
    for (uint32_t i = 0; i < SMALL; i++) small_want[i] += 3u;
    check_words(r, round == 1 ? "sequence x3 (graph captured)" : "sequence x3 (graph replayed)",
                back, small_want, SMALL);
  }
  /* a sequence of bytes (the full path) over both buffers, ranged reads */
  vyre_sequence_step steps[2] = {{sizeof steps[0], 1, &ri, &r->res[0], NULL},
                                 {sizeof steps[1], 1, &ri, &r->res[1], NULL}};
  uint32_t back2[8];
  vyre_resident_copy reads[2] = {{r->res[0], 4 * 8, back2, 32}, {r->res[1], 0, back, SMALL * 4u}};
  STEP(b->vt->dispatch_sequence(b, steps, 2, 2, reads, 2, NULL, err));
  for (uint32_t i = 0; i < SMALL; i++) small_want[i] += 2u;
  check_words(r, "sequence of bytes x2", back, small_want, SMALL);
  for (uint32_t i = 0; i < 8; i++) want[i] = in[8 + i] + 3u;
  check_words(r, "sequence of bytes x2 (ranged read)", back2, want, 8);
  vyre_resident_copy down[1] = {{r->res[1], 0, back, SMALL * 4u}};
  STEP(b->vt->resident_download_many(b, down, 1, err));
  check_words(r, "resident_download_many", back, small_want, SMALL);
  /* interop: an import of part of a vyre buffer, dispatches on the host's stream */
  const void *ext = NULL;
  STEP(b->vt->get_extension(b, VYRE_CUDA_INTEROP_NAME, 1, &ext, err));
  const vyre_cuda_interop *cu = ext;
  uint64_t dptr = 0;
  STEP(cu->resident_pointer(b, r->res[0], &dptr, NULL, err));
  STEP(cu->resident_import(b, dptr + 256, 512, &r->res[2], err));
  vyre_cuda_stream cs = {{sizeof cs, VYRE_EXT_CUDA_STREAM, NULL}, NULL};
  vyre_dispatch_options so = {.struct_size = sizeof so, .next = &cs.head};
  STEP(b->vt->dispatch_resident(b, &ri, &r->res[2], 1, &so, NULL, err));
  STEP(b->vt->resident_download_range(b, r->res[0], 256, back, 512, err));
  for (uint32_t i = 0; i < 128; i++) want[i] = in[64 + i] + 1u + 2u + 1u;
  check_words(r, "dispatch on an import, on the host's stream", back, want, 128);
  STEP(b->vt->dispatch(b, &rs, small_in, 1, &so, &r->out, NULL, err));
  check_scaled(r, "dispatch on the host's stream", r->out, in, SMALL, K_SMALL);
  b->vt->outputs_free(b, r->out);
  r->out = NULL;
  /* a trap is an answer, not a failure */
  vyre_program_ref rt = fh_ref(&p_trap);
  vyre_error terr = VYRE_ERROR_INIT;
  st = b->vt->dispatch(b, &rt, NULL, 0, NULL, &r->out, NULL, &terr);
  if (st != VYRE_TRAP) {
    if (st == VYRE_OK) {
      b->vt->outputs_free(b, r->out);
      r->out = NULL;
      if (!r->wrong[0]) snprintf(r->wrong, sizeof r->wrong, "the trap program did not trap");
    }
    vyre_error_copy(err, &terr);
    return st == VYRE_OK ? VYRE_INTERNAL : st;
  }
  if (terr.native_code != 7 && !r->wrong[0])
    snprintf(r->wrong, sizeof r->wrong, "the trap's code is %lld, expected 7",
             (long long)terr.native_code);
  r->steps++;
  /* a grid barrier: a cooperative launch */
  vyre_program_ref rg = fh_ref(&p_grid);
  STEP(b->vt->dispatch(b, &rg, NULL, 0, NULL, &r->out, NULL, err));
  if (r->out && r->out->count == 2) {
    const uint32_t *o = r->out->items[1].data;
    for (uint32_t i = 0; i < 128; i++) want[i] = i + 1 < 128 ? i + 1 : 0;
    check_words(r, "grid barrier", o, want, 128);
  }
  b->vt->outputs_free(b, r->out);
  r->out = NULL;
  STEP(b->vt->shutdown(b, err));
  return VYRE_OK;
}
#undef STEP

/* Release what the run holds; each release must succeed, lost or not. */
static void release_all(run *r) {
  vyre_backend *b = r->b;
  b->vt->outputs_free(b, r->out);
  r->out = NULL;
  for (int i = 2; i >= 0; i--) {
    if (!r->res[i]) continue;
    vyre_error e = VYRE_ERROR_INIT;
    vyre_status st = b->vt->resident_free(b, r->res[i], &e);
    if (st != VYRE_OK && strstr(e.message, "the handle is still live") &&
        strstr(e.message, "Fix:")) {
      /* A free that could not run says so and keeps the handle: again. */
      st = b->vt->resident_free(b, r->res[i], &e);
    }
    /* A free whose driver call failed after the handle went says so. */
    int released = st != VYRE_OK && strstr(e.message, "the handle is released") &&
                   strstr(e.message, "Fix:");
    if (st != VYRE_OK && !released && !r->wrong[0])
      snprintf(r->wrong, sizeof r->wrong, "resident_free of buffer %d: %s (%.300s)", i,
               vyre_status_name(st), e.message);
    r->res[i] = 0;
  }
  if (r->pl) {
    vyre_error e = VYRE_ERROR_INIT;
    vyre_status st = b->vt->pipeline_release(b, r->pl, &e);
    if (st != VYRE_OK && strstr(e.message, "Fix:")) st = b->vt->pipeline_release(b, r->pl, &e);
    if (st != VYRE_OK && !r->wrong[0])
      snprintf(r->wrong, sizeof r->wrong, "pipeline_release: %s (%.300s)", vyre_status_name(st),
               e.message);
    r->pl = 0;
  }
}

/* One small dispatch, checked: VYRE_OK with the right words, or the status. */
static vyre_status check_dispatch(vyre_backend *b, char *why, size_t cap) {
  uint32_t in[SMALL];
  for (uint32_t i = 0; i < SMALL; i++) in[i] = i ^ 0x55u;
  vyre_program_ref rs = fh_ref(&p_small);
  vyre_input inputs[1] = {{in, sizeof in}};
  vyre_outputs *out = NULL;
  vyre_error e = VYRE_ERROR_INIT;
  vyre_status st = b->vt->dispatch(b, &rs, inputs, 1, NULL, &out, NULL, &e);
  if (st != VYRE_OK) {
    snprintf(why, cap, "%s", e.message);
    return st;
  }
  run r = {.b = b};
  check_scaled(&r, "check dispatch", out, in, SMALL, K_SMALL);
  b->vt->outputs_free(b, out);
  snprintf(why, cap, "%s", r.wrong);
  return r.wrong[0] ? VYRE_INTERNAL : VYRE_OK;
}

/* Teach the kernel player the sweep's kernels (one clean instance). */
static void learn_kernels(void) {
  fh_reset();
  vyre_backend *b = NULL;
  vyre_error e = VYRE_ERROR_INIT;
  ck_assert_msg(fh_reg->create(NULL, &b, &e) == VYRE_OK, "create: %s", e.message);
  uint32_t in[BIG] = {0};
  vyre_input small_in[1] = {{in, SMALL * 4u}}, big_in[1] = {{in, BIG * 4u}};
  struct {
    fh_prog *p;
    const vyre_input *in;
    fh_kind kind;
    uint32_t k;
  } list[] = {{&p_small, small_in, FH_SCALE, K_SMALL}, {&p_big, big_in, FH_SCALE, K_BIG},
              {&p_inc, small_in, FH_INC, 0}, {&p_trap, NULL, FH_TRAP, 0},
              {&p_grid, NULL, FH_GRID, 0}};
  for (size_t i = 0; i < sizeof list / sizeof list[0]; i++) {
    vyre_program_ref r = fh_ref(list[i].p);
    vyre_outputs *out = NULL;
    vyre_status st = b->vt->dispatch(b, &r, list[i].in, list[i].in ? 1 : 0, NULL, &out, NULL, &e);
    ck_assert_msg(st == VYRE_OK, "learning kernel %zu: %s", i, e.message);
    fh_learn(list[i].kind, list[i].k);
    b->vt->outputs_free(b, out);
  }
  b->vt->destroy(b);
}

static void setup(void) {
  fh_env(CHUNK, 2);
  fh_reset();
  p_small = fh_prog_scale(SMALL, K_SMALL, 32);
  p_big = fh_prog_scale(BIG, K_BIG, 64);
  p_inc = fh_prog_inc(32);
  p_trap = fh_prog_trap(64);
  p_grid = fh_prog_grid(128, 64);
  learn_kernels();
}

static void teardown(void) {
  free(p_small.bytes);
  free(p_big.bytes);
  free(p_inc.bytes);
  free(p_trap.bytes);
  free(p_grid.bytes);
  fh_forget();
}

#ifndef FAULTS_ALLOCS
/* A clean run: the workload passes and every output is right.  Returns
 * the driver calls it made (create to destroy). */
static unsigned long clean_run(void) {
  fh_reset();
  fh.allow_legacy(1);
  run r = {0};
  vyre_error e = VYRE_ERROR_INIT;
  ck_assert_msg(fh_reg->create(NULL, &r.b, &e) == VYRE_OK, "create: %s", e.message);
  vyre_status st = workload(&r, &e);
  ck_assert_msg(st == VYRE_OK, "the clean workload passes: %s", e.message);
  ck_assert_msg(!r.wrong[0], "the clean workload's outputs are right: %s", r.wrong);
  ck_assert_msg(fh_metric(r.b, "graph.fast_hits") > 0 && fh_metric(r.b, "graph.launches") > 0,
                "the repeated sequence was captured, then replayed through the fast path");
  ck_assert_msg(fh_metric(r.b, "staging.transfers") > 0, "big buffers took the staging ring");
  release_all(&r);
  ck_assert_msg(!r.wrong[0], "%s", r.wrong);
  r.b->vt->destroy(r.b);
  fakecuda_live l;
  fh.live(&l);
  ck_assert_msg(l.ctx_refs == 0 && l.reclaimed == 0, "the clean run leaves nothing behind");
  return fh.total_calls();
}

START_TEST(test_clean_workload) {
  unsigned long n = clean_run();
  ck_assert_msg(n > 300, "the workload makes many driver calls (%lu)", n);
  static const char *must[] = {"cuMemHostAlloc", "cuMemAlloc", "cuMemcpyHtoDAsync",
                               "cuMemcpyDtoHAsync", "cuLaunchKernel", "cuLaunchCooperativeKernel",
                               "cuModuleLoadData", "cuLinkCreate", "cuStreamBeginCapture",
                               "cuStreamEndCapture", "cuGraphInstantiateWithFlags",
                               "cuGraphLaunch", "cuEventRecord", "cuEventSynchronize",
                               "cuEventElapsedTime", "cuStreamCreate", "cuStreamWaitEvent",
                               "cuPointerGetAttributes", "cuMemFree", "cuGraphExecDestroy"};
  for (size_t i = 0; i < sizeof must / sizeof must[0]; i++)
    ck_assert_msg(fh.calls(must[i]) > 0, "the workload calls %s", must[i]);
}
END_TEST

/* ------------------------------------------------------------------ */
/* Driver fault sweep                                                  */
/* ------------------------------------------------------------------ */
static int sticky(int code) {
  return code == CUDA_ERROR_ILLEGAL_ADDRESS || code == CUDA_ERROR_LAUNCH_FAILED;
}

/* A failure of these is absorbed by design (docs/cuda-runtime.md,
 * "Errors"): cleanup and queries nobody can be told about, counted in
 * driver.errors, or the error-text lookups (which fall back). */
static int absorbable(const char *name) {
  static const char *list[] = {"cuMemFree", "cuMemFreeHost", "cuStreamDestroy", "cuEventDestroy",
                               "cuModuleUnload", "cuLinkDestroy", "cuGraphExecDestroy",
                               "cuGraphDestroy", "cuCtxPopCurrent", "cuDevicePrimaryCtxRelease",
                               "cuEventElapsedTime", "cuEventQuery", "cuGetErrorName",
                               "cuGetErrorString"};
  for (size_t i = 0; i < sizeof list / sizeof list[0]; i++)
    if (strcmp(list[i], name) == 0) return 1;
  return 0;
}

typedef struct tally {
  unsigned long injected, fired, errors, absorbed, lost, recovered;
} tally;

static void one_fault(unsigned long i, int code, tally *t) {
  fh_reset();
  fh.allow_legacy(1);
  fh.inject_call(i, code);
  run r = {0};
  vyre_error e = VYRE_ERROR_INIT;
  vyre_status st = fh_reg->create(NULL, &r.b, &e);
  if (st == VYRE_OK) st = workload(&r, &e);
  char name[64];
  int fired = fh.call_fault_fired(name, sizeof name);
  t->injected++;
  ck_assert_msg(!r.wrong[0], "call %lu (%s, code %d) failed: a call that succeeded gave a wrong "
                "result: %s", i, name, code, r.wrong);
  if (st != VYRE_OK) {
    t->errors++;
    ck_assert_msg(fired, "the workload failed although no fault fired: %s", e.message);
    ck_assert_msg(strstr(e.message, "Fix:") != NULL,
                  "call %lu (%s, code %d) failed: the error has a Fix: %s [%s]", i, name, code,
                  e.message, vyre_status_name(st));
    /* The error names the call that failed, with the status its code maps
     * to (docs/cuda-runtime.md, "Errors"); or, after a sticky code, it
     * says the device is lost or the process spoiled. */
    int names_it = strstr(e.message, name) != NULL;
    int lost_msg = strstr(e.message, "device lost") || strstr(e.message, "unusable in this process");
    ck_assert_msg(names_it || (sticky(code) && lost_msg),
                  "call %lu (%s, code %d) failed: the error names it: %s", i, name, code,
                  e.message);
    int jit = !strcmp(name, "cuLinkAddData") || !strcmp(name, "cuLinkComplete");
    vyre_status want = code == CUDA_ERROR_OUT_OF_MEMORY ? VYRE_OUT_OF_MEMORY
                       : sticky(code)                   ? VYRE_DEVICE_LOST
                       : jit                            ? VYRE_COMPILE
                                                        : VYRE_DRIVER;
    /* create has no device to use unless it ran out of memory */
    int create_ok = !r.b && (st == VYRE_NO_DEVICE || st == want);
    ck_assert_msg(st == want || create_ok,
                  "call %lu (%s, code %d) failed: the status is %s, expected %s: %s", i, name,
                  code, vyre_status_name(st), vyre_status_name(want), e.message);
  } else if (fired) {
    t->absorbed++;
    int retried = code == CUDA_ERROR_OUT_OF_MEMORY &&
                  (!strcmp(name, "cuMemAlloc") || !strcmp(name, "cuMemHostAlloc"));
    /* The health check at create reset a poisoned context. */
    int reset = fh.calls("cuDevicePrimaryCtxReset") > 0;
    int counted = r.b && fh_metric(r.b, "driver.errors") > 0;
    ck_assert_msg(retried || reset || counted || absorbable(name),
                  "call %lu (%s, code %d) failed, yet the workload passed and nothing counted it",
                  i, name, code);
  }
  if (r.b) {
    release_all(&r);
    fired = fh.call_fault_fired(name, sizeof name);
    ck_assert_msg(!r.wrong[0], "after call %lu (%s, code %d) failed: %s", i, name, code, r.wrong);
    if (!fired) {
      /* The fault is in destroy: it can only leak, which is checked below. */
      r.b->vt->destroy(r.b);
      fired = fh.call_fault_fired(name, sizeof name);
      ck_assert_msg(fired, "call %lu is made by destroy at the latest", i);
    } else {
      char why[2048];
      vyre_status again = check_dispatch(r.b, why, sizeof why);
      if (again == VYRE_OK) {
        t->recovered++;
        /* Everything works again, not just one dispatch. */
        run r2 = {.b = r.b};
        vyre_error e2 = VYRE_ERROR_INIT;
        vyre_status st2 = workload(&r2, &e2);
        release_all(&r2);
        ck_assert_msg(st2 == VYRE_OK && !r2.wrong[0],
                      "after call %lu (%s, code %d) failed the whole workload works again: %s %s",
                      i, name, code, e2.message, r2.wrong);
      } else {
        ck_assert_msg(again == VYRE_DEVICE_LOST && sticky(code),
                      "after call %lu (%s, code %d) failed the instance works again or is lost "
                      "(sticky codes only): %s [%s]", i, name, code, why,
                      vyre_status_name(again));
        ck_assert_msg(strstr(why, "Fix:") != NULL, "device lost has a Fix: %s", why);
        t->lost++;
        /* Fail fast: a lost instance answers without the driver. */
        unsigned long before = fh.total_calls();
        ck_assert_int_eq(check_dispatch(r.b, why, sizeof why), VYRE_DEVICE_LOST);
        ck_assert_msg(fh.total_calls() == before, "a lost instance makes no driver call");
      }
      r.b->vt->destroy(r.b);
    }
  }
  if (!strcmp(name, "cuCtxPopCurrent")) {
    /* A failed pop leaves the instance's context on this thread's stack
     * (docs/cuda-runtime.md); the host pops it. */
    CUcontext c = NULL;
    ck_assert_int_eq(fh.ctx_pop(&c), CUDA_SUCCESS);
  }
  fakecuda_live l;
  fh.live(&l);
  if (l.ctx_refs > 0 && !strcmp(name, "cuDevicePrimaryCtxRelease")) {
    fh.ctx_release(0); /* the plugin could not; balance it */
    fh.live(&l);
  }
  ck_assert_msg(l.ctx_refs == 0, "after call %lu (%s, code %d) failed the context is released",
                i, name, code);
  /* Objects left to the context's destruction: only when the driver
   * could not free them (a failed free, a lost context, no current
   * context in destroy). */
  int excused = absorbable(name) || (sticky(code) && fired) || !strcmp(name, "cuCtxPushCurrent");
  ck_assert_msg(l.reclaimed == 0 || excused,
                "after call %lu (%s, code %d) failed the plugin freed what it made (%lu left)", i,
                name, code, l.reclaimed);
  char last[512];
  ck_assert_msg(fh.violations(last, sizeof last) == 0,
                "after call %lu (%s, code %d) failed the driver was used correctly: %s", i, name,
                code, last);
  t->fired += fh.call_fault_fired(NULL, 0) != 0;
  /* A fresh instance: refused as documented in a spoiled process, working
   * in a new one. */
  vyre_backend *x = NULL;
  e = (vyre_error)VYRE_ERROR_INIT;
  st = fh_reg->create(NULL, &x, &e);
  if (st != VYRE_OK) {
    ck_assert_msg(st == VYRE_DEVICE_LOST && fh.poisoned() &&
                      strstr(e.message, "restart the process") != NULL,
                  "after call %lu (%s, code %d) failed a new instance works, or the process is "
                  "spoiled: %s [%s]", i, name, code, e.message, vyre_status_name(st));
    fh_reset();
    st = fh_reg->create(NULL, &x, &e);
    ck_assert_msg(st == VYRE_OK, "a new process creates an instance: %s", e.message);
  }
  char why[2048];
  ck_assert_msg(check_dispatch(x, why, sizeof why) == VYRE_OK,
                "after call %lu (%s, code %d) failed a fresh instance works: %s", i, name, code,
                why);
  x->vt->destroy(x);
}

START_TEST(test_driver_sweep) {
  unsigned long n = clean_run();
  static const int codes[] = {CUDA_ERROR_OUT_OF_MEMORY, CUDA_ERROR_UNKNOWN,
                              CUDA_ERROR_ILLEGAL_ADDRESS};
  tally t = {0};
  for (unsigned long i = 1; i <= n; i++)
    for (unsigned c = 0; c < 3; c++) one_fault(i, codes[c], &t);
  printf("check_cuda_faults: driver sweep: %lu calls per workload, %lu faults injected, %lu "
         "fired, %lu failed the call with a Fix, %lu absorbed by documented fallbacks; "
         "afterwards %lu instances worked, %lu reported device lost; all survived\n",
         n, t.injected, t.fired, t.errors, t.absorbed, t.recovered, t.lost);
  ck_assert_uint_eq(t.fired, t.injected);
}
END_TEST
#endif

#if defined(FAULTS_ALLOCS) && !defined(FAULTS_NO_FAILALLOC)
/* ------------------------------------------------------------------ */
/* Host allocation sweep                                               */
/* ------------------------------------------------------------------ */
/* create, the workload and release with the nth allocation failing (0:
 * none), armed until the caller disarms; the status, the error in *e. */
static vyre_status alloc_run(unsigned long nth, run *r, vyre_error *e) {
  fh_reset();
  fh.allow_legacy(1);
  memset(r, 0, sizeof *r);
  failalloc_arm(nth);
  vyre_status st = fh_reg->create(NULL, &r->b, e);
  if (st == VYRE_OK) st = workload(r, e);
  if (r->b) release_all(r);
  return st;
}

START_TEST(test_alloc_sweep) {
  /* No Check assertion while armed: Check allocates too. */
  run r;
  vyre_error e = VYRE_ERROR_INIT;
  vyre_status st = alloc_run(0, &r, &e);
  if (r.b) r.b->vt->destroy(r.b);
  unsigned long live = failalloc_live(), n = failalloc_disarm();
  ck_assert_msg(st == VYRE_OK, "clean run: %s", e.message);
  ck_assert_msg(!r.wrong[0], "clean run: %s", r.wrong);
  ck_assert_msg(live == 0, "the clean run frees what it allocates (%lu blocks left)", live);
  ck_assert_msg(n > 200, "the workload allocates (%lu calls)", n);
  unsigned long errors = 0, absorbed = 0;
  for (unsigned long i = 1; i <= n; i++) {
    e = (vyre_error)VYRE_ERROR_INIT;
    st = alloc_run(i, &r, &e);
    int fired_early = failalloc_fired();
    char why[2048] = "";
    vyre_status again = VYRE_OK;
    if (r.b && fired_early) again = check_dispatch(r.b, why, sizeof why);
    if (r.b) r.b->vt->destroy(r.b);
    int fired = failalloc_fired();
    live = failalloc_live();
    failalloc_disarm();
    ck_assert_msg(fired, "allocation %lu is made by destroy at the latest", i);
    ck_assert_msg(!r.wrong[0], "allocation %lu failed: a call that succeeded was wrong: %s", i,
                  r.wrong);
    if (st != VYRE_OK) {
      errors++;
      ck_assert_msg(fired_early, "the workload failed with no allocation failing: %s",
                    e.message);
      ck_assert_msg(st == VYRE_OUT_OF_MEMORY || (!r.b && st == VYRE_NO_DEVICE),
                    "allocation %lu failed: the status is %s (expected VYRE_OUT_OF_MEMORY): %s",
                    i, vyre_status_name(st), e.message);
      ck_assert_msg(strstr(e.message, "Fix:") != NULL,
                    "allocation %lu failed: the error has a Fix: %s", i, e.message);
    } else if (fired_early) {
      absorbed++;
    }
    ck_assert_msg(again == VYRE_OK, "after allocation %lu failed the instance works: %s [%s]", i,
                  why, vyre_status_name(again));
    ck_assert_msg(live == 0, "after allocation %lu failed (%s) the plugin freed what it "
                  "allocated (%lu blocks left)", i, e.message, live);
    fakecuda_live l;
    fh.live(&l);
    ck_assert_msg(l.ctx_refs == 0 && l.reclaimed == 0,
                  "after allocation %lu failed every driver object was freed (%lu left, %ld "
                  "context references)", i, l.reclaimed, l.ctx_refs);
    char last[512];
    ck_assert_msg(fh.violations(last, sizeof last) == 0,
                  "after allocation %lu failed the driver was used correctly: %s", i, last);
  }
  printf("check_cuda_allocs: allocation sweep: %lu host allocations per workload, each failed "
         "in turn: %lu failed the call with VYRE_OUT_OF_MEMORY and a Fix, %lu absorbed by "
         "fallbacks; the instance worked after each, nothing leaked\n", n, errors, absorbed);
}
END_TEST
#endif

/* ------------------------------------------------------------------ */
static Suite *suite(void) {
  Suite *s = suite_create("cuda_faults");
#ifdef FAULTS_ALLOCS
#ifndef FAULTS_NO_FAILALLOC
  TCase *al = tcase_create("allocations");
  tcase_add_checked_fixture(al, setup, teardown);
  tcase_set_timeout(al, 600);
  tcase_add_test(al, test_alloc_sweep);
  suite_add_tcase(s, al);
#endif
#else
  TCase *drv = tcase_create("driver");
  tcase_add_checked_fixture(drv, setup, teardown);
  tcase_set_timeout(drv, 600);
  tcase_add_test(drv, test_clean_workload);
  tcase_add_test(drv, test_driver_sweep);
  suite_add_tcase(s, drv);
#endif
  return s;
}

#endif /* FAULTS_NO_FAILALLOC */

int main(void) {
#ifdef FAULTS_NO_FAILALLOC
  printf("check_cuda_allocs: SKIP: a sanitizer build replaces malloc, so allocations cannot be "
         "failed one by one here (the plain build runs this sweep)\n");
  return 77;
#else
#ifdef FAULTS_ALLOCS
  /* The allocation sweep needs this program's malloc (failalloc.c). */
  if (!failalloc_active()) {
    printf("check_cuda_allocs: SKIP: malloc is replaced by a tool (valgrind?), so allocations "
           "cannot be failed one by one here (a plain run does it)\n");
    return 77;
  }
#endif
  if (fh_load("check_cuda_faults") != 0) return 1;
#if defined(FAULTS_ALLOCS) && !defined(FAULTS_NO_FAILALLOC)
  /* The fake driver's own memory is the driver's: its failures are the
   * driver sweep's business; this program's (Check's) are not under test. */
  if (failalloc_exclude((const void *)fh.reset) != 0 || failalloc_exclude((const void *)main) != 0) {
    fprintf(stderr, "check_cuda_allocs: cannot find the fake driver's mapping\n");
    return 1;
  }
  if (failalloc_track(fh_reg) != 0) {
    fprintf(stderr, "check_cuda_allocs: cannot find the plugin's mapping\n");
    return 1;
  }
#endif
  SRunner *sr = srunner_create(suite());
  srunner_run_all(sr, CK_NORMAL);
  int failed = srunner_ntests_failed(sr);
  srunner_free(sr);
  return failed ? 1 : 0;
#endif
}
