/* validate_async.c -- the validation layer on dispatch_async: a checked dispatch runs on the reference when it is made (its inputs are borrowed only until then), and its pending_wait is judged against that. */
#include <stdlib.h>
#include <string.h>

#include "validate.h"
#include "vyre/vyre_support.h"

/* A record of c with copies of what the caller lent; NULL when out of memory. */
static host_vpending *pending_new(const host_vcall *c) {
  if (c->input_count > VYRE_MAX_BUFFERS) return NULL;
  host_vpending *p = calloc(1, sizeof *p);
  if (!p) return NULL;
  p->call = *c;
  uint64_t total = 0;
  for (uint32_t i = 0; i < c->input_count; i++) total += c->inputs[i].size;
  p->copy = total <= SIZE_MAX ? malloc(total ? (size_t)total : 1) : NULL;
  p->path = c->capsule_path ? strdup(c->capsule_path) : NULL;
  if (!p->copy || (c->capsule_path && !p->path)) {
    free(p->copy);
    free(p->path);
    free(p);
    return NULL;
  }
  uint64_t at = 0;
  for (uint32_t i = 0; i < c->input_count; i++) {
    if (c->inputs[i].size) memcpy(p->copy + at, c->inputs[i].data, (size_t)c->inputs[i].size);
    p->inputs[i].data = p->copy + at;
    p->inputs[i].size = c->inputs[i].size;
    at += c->inputs[i].size;
  }
  p->call.inputs = p->inputs;
  p->call.capsule_path = p->path;
  return p;
}

/* Keep p (the lock held by the caller); 0 when out of memory. */
static int pending_add(host_validate *v, host_vpending *p) {
  if (v->pending_count == v->pending_cap) {
    uint32_t cap = v->pending_cap ? v->pending_cap * 2 : 8;
    host_vpending **grown = realloc(v->pendings, cap * sizeof *grown);
    if (!grown) return 0;
    v->pendings = grown;
    v->pending_cap = cap;
  }
  v->pendings[v->pending_count++] = p;
  atomic_store(v->pending_flag, 1);
  return 1;
}

/* Take the record of `handle` out, or NULL. */
static host_vpending *pending_take(host_validate *v, vyre_pending handle) {
  host_vpending *p = NULL;
  pthread_mutex_lock(&v->lock);
  for (uint32_t i = 0; i < v->pending_count && !p; i++) {
    if (v->pendings[i]->handle != handle) continue;
    p = v->pendings[i];
    v->pendings[i] = v->pendings[--v->pending_count];
  }
  if (v->pending_count == 0) atomic_store(v->pending_flag, 0);
  pthread_mutex_unlock(&v->lock);
  return p;
}

/* The reference's run of a checked dispatch_async, kept for its wait. */
static void remember(host_validate *v, vyre_pending handle, const host_vcall *c, const void *bytes,
                     uint64_t size) {
  host_vpending *p = pending_new(c);
  if (!p) return; /* out of memory: this dispatch is not checked */
  p->handle = handle;
  if (!host_validate_run_reference(v, &p->call, bytes, size, &p->program, &p->want, &p->ro)) {
    host_validate_pending_free(v, p);
    return;
  }
  pthread_mutex_lock(&v->lock);
  int kept = pending_add(v, p);
  pthread_mutex_unlock(&v->lock);
  if (!kept) host_validate_pending_free(v, p);
}

vyre_status host_validate_dispatch_async(host_validate *v, vyre_backend *self,
                                         const vyre_program_ref *program, const vyre_input *inputs,
                                         uint32_t input_count, const vyre_dispatch_options *options,
                                         vyre_pending *out, vyre_error *err) {
  host_vstrip s;
  host_vcall c;
  const void *bytes;
  uint64_t size;
  int check_it;
  vyre_status st = host_validate_begin(v, "dispatch_async", program, inputs, input_count, options,
                                       &s, &c, &bytes, &size, &check_it, err);
  if (st != VYRE_OK) return st;
  host_validate_busy = 1;
  st = self->vt->dispatch_async(self, program, inputs, input_count, s.use, out, err);
  host_validate_busy = 0;
  /* The comparison happens at the wait: the outcome of this call is
   * "not checked" (yet). */
  if (check_it && st == VYRE_OK && out && *out) remember(v, *out, &c, bytes, size);
  host_validate_unstrip(&s, VYRE_VALIDATE_NOT_CHECKED);
  return st;
}

vyre_status host_validate_pending_wait(host_validate *v, vyre_backend *self, vyre_pending pending,
                                       vyre_outputs **out, vyre_timing *timing, vyre_error *err) {
  /* The wait releases the handle whatever it returns: so does the record. */
  host_vpending *p = pending_take(v, pending);
  vyre_error e = VYRE_ERROR_INIT;
  host_validate_busy = 1;
  vyre_status st = self->vt->pending_wait(self, pending, out, timing, &e);
  host_validate_busy = 0;
  if (st != VYRE_OK) vyre_error_copy(err, &e);
  if (p && out && (st == VYRE_OK || st == VYRE_TRAP)) {
    host_vresult got;
    memset(&got, 0, sizeof got);
    got.status = st;
    got.native_code = st == VYRE_TRAP ? e.native_code : 0;
    for (uint32_t k = 0; st == VYRE_OK && k < (*out)->count && k < VYRE_MAX_BUFFERS; k++) {
      got.data[k] = (*out)->items[k].data;
      got.size[k] = (*out)->items[k].size;
    }
    got.count = st == VYRE_OK ? (*out)->count : 0;
    uint32_t outcome;
    p->call.entry = "pending_wait";
    vyre_status cs = host_validate_judge(v, &p->call, &p->want, &got, &outcome, err);
    if (cs != VYRE_OK) {
      if (st == VYRE_OK) self->vt->outputs_free(self, *out);
      *out = NULL;
      st = cs;
    }
  }
  host_validate_pending_free(v, p);
  return st;
}

vyre_status host_validate_pending_release(host_validate *v, vyre_backend *self,
                                          vyre_pending pending, vyre_error *err) {
  host_validate_pending_free(v, pending_take(v, pending));
  host_validate_busy = 1;
  vyre_status st = self->vt->pending_release(self, pending, err);
  host_validate_busy = 0;
  return st;
}
