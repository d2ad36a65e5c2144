/* indirect.c -- a case with `;@ indirect BUFFER OFFSET`, run through resident buffers and dispatch_resident with a vyre_indirect chained (docs/conformance.md). */
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "conform.h"

#define HAS_ENTRY(vt, f) \
  ((vt)->struct_size >= offsetof(vyre_backend_vtable, f) + sizeof(void *) && (vt)->f)

static void fail(cf_result *out, vyre_status st, const char *what, const vyre_error *err) {
  out->status = st;
  snprintf(out->message, sizeof out->message, "%s%s", what, err ? err->message : "");
}

/* Upload every buffer (inputs as given, the rest zero), dispatch, and
 * download every output's readback range into out. */
static vyre_status run_on(vyre_backend *be, const cf_case *c, const vyre_geometry *g,
                          vyre_resident *res, const vyre_dispatch_options *o, cf_result *out,
                          vyre_error *err) {
  const vyre_program *p = c->decoded;
  vyre_resident bound[VYRE_MAX_BUFFERS];
  for (uint32_t i = 0; i < p->buffer_count; i++) {
    const vyre_buffer_info *bi = &p->buffers[i];
    if (bi->role == VYRE_ROLE_SHARED) continue;
    bound[bi->kernel_index] = res[i];
    void *zero = calloc(1, (size_t)g->buffer_bytes[i]);
    if (!zero) return vyre_error_set(err, VYRE_OUT_OF_MEMORY, 0, "out of memory");
    const void *src = bi->input_index >= 0 ? c->input[i].bytes : zero;
    vyre_status st = be->vt->resident_upload(be, res[i], src, g->buffer_bytes[i], err);
    free(zero);
    if (st != VYRE_OK) return st;
  }
  vyre_program_ref ref = VYRE_PROGRAM_BYTES(c->program, c->program_size);
  vyre_status st =
      be->vt->dispatch_resident(be, &ref, bound, p->kernel_buffer_count, o, NULL, err);
  if (st != VYRE_OK) return st;
  out->output_count = p->output_count;
  for (uint32_t i = 0; i < p->buffer_count; i++) {
    const vyre_buffer_info *bi = &p->buffers[i];
    if (!bi->is_output || bi->output_index < 0 || (uint32_t)bi->output_index >= CF_MAX_IO)
      continue;
    cf_data *d = &out->output[bi->output_index];
    d->size = g->out_size[i];
    d->present = 1;
    d->bytes = malloc(d->size ? (size_t)d->size : 1);
    if (!d->bytes) return vyre_error_set(err, VYRE_OUT_OF_MEMORY, 0, "out of memory");
    if (d->size) {
      st = be->vt->resident_download_range(be, res[i], g->out_offset[i], d->bytes, d->size, err);
      if (st != VYRE_OK) return st;
    }
  }
  return VYRE_OK;
}

void cf_run_indirect(vyre_backend *be, const cf_case *c, const vyre_dispatch_options *opts,
                     cf_result *out) {
  const vyre_program *p = c->decoded;
  const vyre_backend_vtable *vt = be->vt;
  if (!HAS_ENTRY(vt, dispatch_resident) || !HAS_ENTRY(vt, resident_download_range)) {
    fail(out, VYRE_UNSUPPORTED, "the backend has no resident dispatch. Fix: implement it", NULL);
    return;
  }
  vyre_input inputs[CF_MAX_IO];
  uint32_t n = 0;
  cf_case_inputs(c, inputs, &n);
  uint64_t sizes[VYRE_MAX_BUFFERS];
  for (uint32_t i = 0; i < n; i++) sizes[i] = inputs[i].size;
  vyre_geometry g;
  vyre_error err = VYRE_ERROR_INIT;
  vyre_status st = vyre_geometry_derive(p, sizes, NULL, &c->options, &g, &err);
  if (st != VYRE_OK) {
    fail(out, st, "", &err);
    return;
  }
  vyre_resident res[VYRE_MAX_BUFFERS];
  memset(res, 0, sizeof res);
  for (uint32_t i = 0; i < p->buffer_count && st == VYRE_OK; i++) {
    if (p->buffers[i].role == VYRE_ROLE_SHARED) continue;
    if (!g.buffer_bytes[i])
      st = vyre_error_set(&err, VYRE_INVALID_ARGUMENT, 0,
                          "an indirect case's buffer %s is empty (resident buffers have at "
                          "least 1 byte). Fix: give it data",
                          p->buffers[i].name);
    else
      st = vt->resident_alloc(be, g.buffer_bytes[i], &res[i], &err);
  }
  vyre_indirect ind;
  memset(&ind, 0, sizeof ind);
  ind.head.struct_size = sizeof ind;
  ind.head.type = VYRE_EXT_INDIRECT;
  ind.head.next = opts->struct_size >= sizeof *opts ? opts->next : NULL;
  ind.buffer = res[c->indirect_buffer];
  ind.offset = c->indirect_offset;
  vyre_dispatch_options o = *opts;
  o.struct_size = sizeof o;
  o.next = &ind.head;
  if (st == VYRE_OK) st = run_on(be, c, &g, res, &o, out, &err);
  for (uint32_t i = 0; i < p->buffer_count; i++) {
    vyre_error e2 = VYRE_ERROR_INIT;
    if (res[i]) vt->resident_free(be, res[i], &e2);
  }
  if (st != VYRE_OK) {
    /* What came back so far is dropped (cf_result_free's work; exec.c
     * calls this file, not the other way). */
    for (uint32_t i = 0; i < CF_MAX_IO; i++) free(out->output[i].bytes);
    memset(out, 0, sizeof *out);
    fail(out, st, "", &err);
    out->native_code = err.native_code;
  }
}
