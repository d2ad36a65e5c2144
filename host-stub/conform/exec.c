/* exec.c -- run one case on one backend instance and keep a private copy of what came back. */
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "conform.h"
#include "abi/support/clock.h"
#include "host-stub/ref/tolerance.h"

void cf_result_free(cf_result *r) {
  if (!r) return;
  for (uint32_t i = 0; i < CF_MAX_IO; i++) {
    free(r->output[i].bytes);
    free(r->bound[i]);
  }
  memset(r, 0, sizeof *r);
}

int cf_program_has_float_mma(const vyre_program *p) {
  for (uint32_t i = 0; p && i < p->inst_count; i++)
    if (p->insts[i].op == VYRE_OP_MMA &&
        (p->insts[i].type == VYRE_T_F16 || p->insts[i].type == VYRE_T_BF16))
      return 1;
  return 0;
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

/*
 * Allocate one bound per 4-byte element of every f32 output the dispatch
 * will return (its size from the geometry every backend derives alike),
 * set to -1, and make *cb a view of case c whose options chain rb (holding
 * them) in front of c's chain.  Returns 1 then; 0 when the geometry does
 * not derive (the dispatch fails, nothing to bound) or memory runs out.
 */
static int bound_case(const cf_case *c, const vyre_input *inputs, uint32_t n, cf_case *cb,
                      ref_mma_bound *rb, cf_result *out) {
  const vyre_program *p = c->decoded;
  uint64_t sizes[CF_MAX_IO];
  for (uint32_t i = 0; i < n && i < CF_MAX_IO; i++) sizes[i] = inputs[i].size;
  vyre_geometry geo;
  if (vyre_geometry_derive(p, sizes, NULL, &c->options, &geo, NULL) != VYRE_OK) return 0;
  for (uint32_t b = 0; b < p->buffer_count; b++) {
    int32_t o = p->buffers[b].output_index;
    if (o < 0 || o >= (int32_t)CF_MAX_IO || p->buffers[b].decl.elem_type != VYRE_T_F32) continue;
    uint64_t count = (geo.out_size[b] + 3) / 4;
    out->bound[o] = malloc((count ? count : 1) * sizeof(double));
    if (!out->bound[o]) return 0;
    for (uint64_t e = 0; e < count; e++) out->bound[o][e] = -1.0;
    out->bound_count[o] = count;
  }
  *cb = *c; /* shallow: the view borrows c's data for this dispatch */
  memset(rb, 0, sizeof *rb);
  rb->head.struct_size = sizeof *rb;
  rb->head.type = REF_EXT_MMA_BOUND;
  rb->head.next = c->options.struct_size >= sizeof c->options ? c->options.next : NULL;
  rb->output_count = p->output_count < CF_MAX_IO ? p->output_count : CF_MAX_IO;
  rb->bound = out->bound;
  cb->options.struct_size = sizeof cb->options;
  cb->options.next = &rb->head;
  return 1;
}

/* One dispatch; `bounded`: chain a ref_mma_bound (the reference only). */
static void run(vyre_backend *backend, const cf_case *c, cf_result *out, int bounded) {
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
  cf_case cb;
  ref_mma_bound rb;
  if (bounded && cf_program_has_float_mma(c->decoded) && bound_case(c, inputs, n, &cb, &rb, out))
    c = &cb;
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

void cf_run(vyre_backend *backend, const cf_case *c, cf_result *out) { run(backend, c, out, 0); }

void cf_run_reference(vyre_backend *reference, const cf_case *c, cf_result *out) {
  run(reference, c, out, 1);
}

int cf_pair_still_fails(void *ctx, const cf_case *candidate) {
  cf_pair *pr = ctx;
  cf_result want, got;
  cf_run_reference(pr->reference, candidate, &want);
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
