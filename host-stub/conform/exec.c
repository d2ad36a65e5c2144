/* exec.c -- run one case on one backend instance and keep a private copy of what came back. */
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "conform.h"
#include "abi/support/clock.h"

void cf_result_free(cf_result *r) {
  if (!r) return;
  for (uint32_t i = 0; i < CF_MAX_IO; i++) free(r->output[i].bytes);
  memset(r, 0, sizeof *r);
}

/* cf_set_limits: read by every cf_run (set before runs start). */
static uint64_t limit_timeout_ns = CF_DEFAULT_TIMEOUT_NS, limit_max_steps;

void cf_set_limits(uint64_t timeout_ns, uint64_t max_steps) {
  limit_timeout_ns = timeout_ns;
  limit_max_steps = max_steps;
}

/* The options of one run: the case's, with the limits chained when the
 * backend serves them (a backend that does not is left unbounded, and
 * its extension chain untouched). */
static const vyre_dispatch_options *limited_options(vyre_backend *backend, const cf_case *c,
                                                    vyre_dispatch_options *o, vyre_limits *lim) {
  if (!limit_timeout_ns && !limit_max_steps) return &c->options;
  if (backend->vt->struct_size <
          offsetof(vyre_backend_vtable, get_extension) + sizeof(void (*)(void)) ||
      !backend->vt->get_extension)
    return &c->options;
  const void *t = NULL;
  vyre_error err = VYRE_ERROR_INIT;
  if (backend->vt->get_extension(backend, VYRE_LIMITS_NAME, VYRE_LIMITS_VERSION, &t, &err) !=
          VYRE_OK ||
      !t)
    return &c->options;
  *o = c->options;
  o->struct_size = sizeof *o;
  memset(lim, 0, sizeof *lim);
  lim->head.struct_size = sizeof *lim;
  lim->head.type = VYRE_EXT_LIMITS;
  lim->head.next = c->options.struct_size >= sizeof *o ? c->options.next : NULL;
  lim->timeout_ns = limit_timeout_ns;
  lim->max_steps = limit_max_steps;
  o->next = &lim->head;
  return o;
}

static void fail(cf_result *out, vyre_status st, const char *msg) {
  out->status = st;
  snprintf(out->message, sizeof out->message, "%s", msg);
}

void cf_run(vyre_backend *backend, const cf_case *c, cf_result *out) {
  memset(out, 0, sizeof *out);
  if (!backend || !backend->vt ||
      backend->vt->struct_size < offsetof(vyre_backend_vtable, dispatch) + sizeof(void *) ||
      !backend->vt->dispatch || !backend->vt->outputs_free) {
    fail(out, VYRE_UNSUPPORTED,
         "the backend's vtable has no dispatch/outputs_free entry. Fix: implement them");
    return;
  }
  vyre_input inputs[CF_MAX_IO];
  uint32_t n = 0;
  cf_case_inputs(c, inputs, &n);
  vyre_program_ref ref = VYRE_PROGRAM_BYTES(c->program, c->program_size);
  vyre_outputs *outs = NULL;
  vyre_error err = VYRE_ERROR_INIT;
  uint64_t t0 = vyre__now_ns();
  vyre_dispatch_options lo;
  vyre_limits lim;
  const vyre_dispatch_options *opts = limited_options(backend, c, &lo, &lim);
  if (c->indirect) {
    cf_run_indirect(backend, c, opts, out);
    out->wall_ns = vyre__elapsed_ns(t0);
    return;
  }
  vyre_status st = backend->vt->dispatch(backend, &ref, inputs, n, opts, &outs, NULL, &err);
  out->wall_ns = vyre__elapsed_ns(t0);
  out->status = st;
  out->native_code = err.native_code;
  if (st != VYRE_OK) {
    snprintf(out->message, sizeof out->message, "%s", err.message);
    if (outs) backend->vt->outputs_free(backend, outs);
    return;
  }
  if (!outs) {
    fail(out, VYRE_INTERNAL, "dispatch returned VYRE_OK without outputs. Fix: the backend "
                             "must return a vyre_outputs (count 0 when there are none)");
    return;
  }
  if (outs->count > CF_MAX_IO || (outs->count && !outs->items)) {
    backend->vt->outputs_free(backend, outs);
    fail(out, VYRE_INTERNAL, "dispatch returned a malformed output list. Fix: the backend");
    return;
  }
  out->output_count = outs->count;
  for (uint32_t i = 0; i < outs->count; i++) {
    uint64_t size = outs->items[i].size;
    out->output[i].size = size;
    out->output[i].present = 1;
    out->output[i].bytes = malloc(size ? size : 1);
    if (!out->output[i].bytes) {
      backend->vt->outputs_free(backend, outs);
      cf_result_free(out);
      fail(out, VYRE_OUT_OF_MEMORY, "copying the outputs: out of memory");
      return;
    }
    if (size) memcpy(out->output[i].bytes, outs->items[i].data, size);
  }
  backend->vt->outputs_free(backend, outs);
}

int cf_pair_still_fails(void *ctx, const cf_case *candidate) {
  cf_pair *pr = ctx;
  cf_result want, got;
  cf_run(pr->reference, candidate, &want);
  cf_run(pr->backend, candidate, &got);
  cf_diff d;
  int same = cf_compare(candidate, &want, &got, &d);
  int keep = 0;
  if (!same) {
    if (pr->original_kind == CF_DIFF_STATUS)
      /* The same pair of statuses: not some other failure met on the way. */
      keep = d.kind == CF_DIFF_STATUS && want.status == pr->reference_status &&
             got.status == pr->backend_status;
    else
      keep = d.kind != CF_DIFF_STATUS;
  }
  cf_result_free(&want);
  cf_result_free(&got);
  return keep;
}
