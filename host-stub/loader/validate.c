/* validate.c -- the validation layer: dispatches chosen by $VYRE_VALIDATE or a chained vyre_validate re-run on the reference backend and compared, each divergence reported once with a replay capsule (docs/host.md, "Validation layer"). */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "validate.h"
#include "abi/support/sized.h"
#include "vyre/vyre_support.h"

_Thread_local int host_validate_busy;

#define DEFAULT_DIR "vyre-validate"
/* Longest extension chain walked; a longer one (a cycle) is left to the
 * backend's own checks, unchanged. */
#define CHAIN_MAX 64u

void host_validate_link(host_entry *entries, uint32_t count) {
  const host_entry *ref = NULL;
  for (uint32_t i = 0; i < count && !ref; i++)
    if (entries[i].registered && strcmp(entries[i].id, "reference") == 0) ref = &entries[i];
  for (uint32_t i = 0; i < count; i++) entries[i].reference = ref;
}

/* ------------------------------------------------------------------ */
/* $VYRE_VALIDATE                                                      */
/* ------------------------------------------------------------------ */

static int hex_digit(char ch) {
  return (ch >= '0' && ch <= '9') || (ch >= 'a' && ch <= 'f') || (ch >= 'A' && ch <= 'F');
}

/* One word of $VYRE_VALIDATE (n bytes); 0 when it is in the grammar. */
static int parse_word(host_validate *v, const char *w, size_t n) {
  char buf[80];
  if (n >= sizeof buf) return -1;
  memcpy(buf, w, n);
  buf[n] = '\0';
  char *end = NULL;
  if (strcmp(buf, "all") == 0) return v->all = 1, 0;
  if (strcmp(buf, "strict") == 0) return v->strict = 1, 0;
  if (strcmp(buf, "off") == 0 || strcmp(buf, "0") == 0) return 0;
  if (strncmp(buf, "1/", 2) == 0 && buf[2] >= '1' && buf[2] <= '9') {
    unsigned long long every = strtoull(buf + 2, &end, 10);
    if (*end || every == 0) return -1;
    v->every = every;
    return 0;
  }
  if (strncmp(buf, "sha256=", 7) == 0) {
    size_t k = strlen(buf + 7);
    if (k == 0 || k > 64) return -1;
    for (size_t i = 0; i < k; i++) {
      if (!hex_digit(buf[7 + i])) return -1;
      v->sha[i] = (char)(buf[7 + i] | 0x20);
    }
    v->sha[k] = '\0';
    return 0;
  }
  if (strncmp(buf, "pipeline=", 9) == 0 && buf[9]) {
    unsigned long long h = strtoull(buf + 9, &end, 16);
    if (*end || h == 0) return -1;
    v->pipeline = h;
    return 0;
  }
  return -1;
}

/* Read $VYRE_VALIDATE: words separated by commas or spaces.  A word out
 * of the grammar turns the selection off, with a warning. */
static void parse_env(host_validate *v) {
  const char *s = vyre__env(VYRE__ENV_VALIDATE);
  for (const char *p = s; p && *p;) {
    size_t n = strcspn(p, ", ");
    if (n && parse_word(v, p, n) != 0) {
      vyre__warn("vyre-host", "VYRE_VALIDATE='%s': '%.*s' is not a selector: validation is off. "
                 "Fix: use all, 1/N, sha256=PREFIX, pipeline=HANDLE and strict, separated by "
                 "commas (docs/environment.md)", s, (int)n, p);
      v->all = 0, v->every = 0, v->sha[0] = '\0', v->pipeline = 0, v->strict = 0;
      return;
    }
    p += n;
    p += strspn(p, ", ");
  }
}

host_validate *host_validate_new(const host_entry *e, vyre_backend *self, int *on,
                                 atomic_int *pending) {
  *on = 0;
  host_validate *v = calloc(1, sizeof *v);
  if (!v) return NULL;
  const char *dir = vyre__env(VYRE__ENV_VALIDATE_DIR);
  v->dir = strdup(dir ? dir : DEFAULT_DIR);
  if (!v->dir || pthread_mutex_init(&v->lock, NULL) != 0) {
    free(v->dir);
    free(v);
    return NULL;
  }
  v->self = self;
  v->pending_flag = pending;
  memcpy(v->id, e->id, sizeof v->id);
  memcpy(v->version, e->version, sizeof v->version);
  atomic_init(&v->calls, 0);
  v->is_reference = strcmp(e->id, "reference") == 0;
  if (e->reference) {
    v->ref_create = e->reference->create;
    v->ref_minor = e->reference->abi_minor;
    memcpy(v->ref_version, e->reference->version, sizeof v->ref_version);
  }
  parse_env(v);
  *on = !v->is_reference && (v->all || v->every || v->sha[0] || v->pipeline);
  return v;
}

void host_validate_pending_free(host_validate *v, host_vpending *p) {
  if (!p) return;
  if (p->ro && v->ref) v->ref->vt->outputs_free(v->ref, p->ro);
  vyre_program_free(p->program);
  free(p->copy);
  free(p->path);
  free(p);
}

void host_validate_free(host_validate *v) {
  if (!v) return;
  for (uint32_t i = 0; i < v->pending_count; i++) host_validate_pending_free(v, v->pendings[i]);
  free(v->pendings);
  if (v->ref) v->ref->vt->destroy(v->ref);
  for (uint32_t i = 0; i < v->pipe_count; i++) free(v->pipes[i].bytes);
  free(v->pipes);
  free(v->dir);
  pthread_mutex_destroy(&v->lock);
  free(v);
}

/* ------------------------------------------------------------------ */
/* Taking vyre_validate off the chain                                  */
/* ------------------------------------------------------------------ */

static int is_validate(const vyre_ext *x) {
  return x->type == VYRE_EXT_VALIDATE && x->struct_size >= sizeof(vyre_validate);
}

vyre_status host_validate_strip(const vyre_dispatch_options *o, host_vstrip *s, vyre_error *err) {
  memset(s, 0, sizeof *s);
  s->use = o;
  if (!o || o->struct_size < sizeof *o || !o->next) return VYRE_OK;
  const vyre_ext *last = NULL;
  size_t bytes = 0, before = 0;
  uint32_t n = 0;
  for (const vyre_ext *x = o->next; x && n < CHAIN_MAX; x = x->next, n++) {
    if (x->struct_size < sizeof(vyre_ext) || x->struct_size > HOST_STRUCT_MAX) return VYRE_OK;
    if (is_validate(x)) last = x, before = bytes, s->ext = *(const vyre_validate *)x;
    else bytes += (x->struct_size + 15u) & ~(size_t)15u;
  }
  if (!last) return VYRE_OK;
  s->found = 1;
  s->copy = *o;
  s->use = &s->copy;
  s->copy.next = last->next;
  if (before == 0) return VYRE_OK;
  s->heap = malloc(before);
  if (!s->heap)
    return vyre_error_set(err, VYRE_OUT_OF_MEMORY, 0, "dispatch: out of memory copying the "
                          "extension chain. Fix: free memory");
  /* Copy the nodes before `last` (not vyre_validate ones) and relink. */
  const vyre_ext **link = &s->copy.next;
  size_t at = 0;
  for (const vyre_ext *x = o->next; x != last; x = x->next) {
    if (is_validate(x)) continue;
    vyre_ext *c = (vyre_ext *)(s->heap + at);
    memcpy(c, x, x->struct_size);
    at += (x->struct_size + 15u) & ~(size_t)15u;
    *link = c;
    link = &c->next;
  }
  *link = last->next;
  return VYRE_OK;
}

void host_validate_unstrip(host_vstrip *s, uint32_t outcome) {
  if (s->found && s->ext.outcome) *s->ext.outcome = outcome;
  free(s->heap);
}

/* ------------------------------------------------------------------ */
/* Which calls are checked, and on what                                */
/* ------------------------------------------------------------------ */

void host_validate_note(host_validate *v, uint32_t note, const char *fmt, const char *detail) {
  pthread_mutex_lock(&v->lock);
  int said = v->notes & note;
  v->notes |= note;
  pthread_mutex_unlock(&v->lock);
  if (!said) vyre__warn("vyre-host", fmt, v->id, detail);
}

/* The program of a call: its bytes, or a pipeline's with the budget and
 * workgroup it was created with.  0 when unknown. */
static int program_of(host_validate *v, const vyre_program_ref *program, host_vcall *c,
                      const void **bytes, uint64_t *size) {
  vyre_program_ref ref;
  memset(&ref, 0, sizeof ref);
  if (!program || vyre__sized_read(&ref, sizeof ref, program) < offsetof(vyre_program_ref, pipeline))
    return 0;
  if (program->struct_size < sizeof ref) ref.pipeline = 0;
  if (!ref.pipeline) {
    *bytes = ref.bytes;
    *size = ref.size;
    return ref.bytes && ref.size;
  }
  int found = 0;
  pthread_mutex_lock(&v->lock);
  for (uint32_t i = 0; i < v->pipe_count && !found; i++) {
    host_vpipe *p = &v->pipes[i];
    if (p->handle != ref.pipeline) continue;
    found = 1;
    *bytes = p->bytes;
    *size = p->size;
    c->options.ulp_budget = p->ulp_budget;
    memcpy(c->options.workgroup, p->workgroup, sizeof p->workgroup);
  }
  pthread_mutex_unlock(&v->lock);
  return found;
}

/* Whether this call is checked: the extension's mode, else the selection. */
static int selected(host_validate *v, const host_vstrip *s, const vyre_program_ref *program,
                    const void *bytes, uint64_t size) {
  if (v->is_reference || (s->found && s->ext.mode == VYRE_VALIDATE_OFF)) return 0;
  if (s->found && s->ext.mode == VYRE_VALIDATE_ON) return 1;
  uint64_t k = atomic_fetch_add(&v->calls, 1);
  if (v->all || (v->every && k % v->every == 0)) return 1;
  if (v->pipeline && program && program->struct_size >= sizeof *program &&
      program->pipeline == v->pipeline)
    return 1;
  if (v->sha[0] && bytes && size <= SIZE_MAX) {
    uint8_t h[32];
    char hex[65];
    vyre_sha256(bytes, (size_t)size, h);
    vyre_hex(h, 32, hex);
    return strncmp(hex, v->sha, strlen(v->sha)) == 0;
  }
  return 0;
}

/* The reference instance, made at the first check; NULL when it cannot be. */
static vyre_backend *reference(host_validate *v) {
  pthread_mutex_lock(&v->lock);
  if (!v->ref && !v->ref_failed) {
    vyre_error e = VYRE_ERROR_INIT;
    vyre_status st = VYRE_NO_DEVICE;
    if (v->ref_create) {
      vyre_backend_options o;
      memset(&o, 0, sizeof o);
      o.struct_size = sizeof o;
      o.abi_minor = v->ref_minor;
      st = v->ref_create(&o, &v->ref, &e);
    } else {
      snprintf(e.message, sizeof e.message, "no plugin registers the id 'reference'");
    }
    if (st != VYRE_OK || !v->ref) {
      v->ref = NULL;
      v->ref_failed = 1;
      vyre__warn("vyre-host", "validate: backend '%s' is not validated: the reference backend "
                 "cannot be created: %s. Fix: make libvyre-ref.so findable (VYRE_BACKEND_PATH)",
                 v->id, e.message);
    }
  }
  vyre_backend *r = v->ref;
  pthread_mutex_unlock(&v->lock);
  return r;
}

/* ------------------------------------------------------------------ */
/* The check                                                           */
/* ------------------------------------------------------------------ */

/* 1 when (program, inputs, options) diverged before: reported already. */
static int seen_before(host_validate *v, const host_vcall *c, uint64_t *key) {
  vyre_sha256_ctx h;
  vyre_sha256_init(&h);
  vyre_sha256_update(&h, c->program->sha256, 32);
  vyre_sha256_update(&h, &c->options, offsetof(vyre_dispatch_options, next));
  for (uint32_t i = 0; i < c->input_count; i++) {
    vyre_sha256_update(&h, &c->inputs[i].size, sizeof c->inputs[i].size);
    if (c->inputs[i].data) vyre_sha256_update(&h, c->inputs[i].data, (size_t)c->inputs[i].size);
  }
  uint8_t d[32];
  vyre_sha256_final(&h, d);
  memcpy(key, d, sizeof *key);
  int seen = 0, full = 0;
  pthread_mutex_lock(&v->lock);
  for (uint32_t i = 0; i < v->seen_count && !seen; i++) seen = v->seen[i] == *key;
  if (!seen && v->seen_count < HOST_VALIDATE_SEEN_MAX) v->seen[v->seen_count++] = *key;
  else if (!seen) full = 1, v->dropped++;
  pthread_mutex_unlock(&v->lock);
  if (full)
    host_validate_note(v, VALIDATE_NOTE_FULL, "validate: backend '%s' diverged on more than %s programs "
              "and inputs: the later divergences are not reported", "256");
  return seen || full;
}

/* Report a divergence (once per program, inputs and options) with its
 * capsule; strict: the call fails. */
static vyre_status diverged(host_validate *v, const host_vcall *c, const host_vresult *want,
                            const char *what, vyre_error *err) {
  uint64_t key;
  char path[4200];
  if (c->capsule_path) snprintf(path, sizeof path, "%s", c->capsule_path);
  int repeat = seen_before(v, c, &key);
  if (!c->capsule_path)
    snprintf(path, sizeof path, "%s/%s-%016" PRIx64 ".vyre", v->dir, v->id, key);
  if (!repeat || c->capsule_path) {
    vyre_error e = VYRE_ERROR_INIT;
    if (host_validate_capsule(v, c, want, what, path, &e) != VYRE_OK)
      snprintf(path, sizeof path, "(not written: %.2000s)", e.message);
    vyre__warn("vyre-host", "validate: backend '%s' diverged from the reference in %s: %s. "
               "Replay capsule: %s (vyre conform --replay FILE --backend %s)", v->id, c->entry,
               what, path, v->id);
  }
  if (!c->strict) return VYRE_OK;
  return vyre_error_set(err, VYRE_INTERNAL, 0,
                        "%s: backend '%s' diverged from the reference backend (validation is "
                        "strict): %s; replay capsule %s. Fix: report it with the capsule to the "
                        "backend's authors, or use another backend",
                        c->entry, v->id, what, path);
}

int host_validate_run_reference(host_validate *v, host_vcall *c, const void *bytes,
                                uint64_t size, vyre_program **program, host_vresult *want,
                                vyre_outputs **ro) {
  *program = NULL;
  *ro = NULL;
  memset(want, 0, sizeof *want);
  vyre_backend *ref = reference(v);
  if (!ref) return 0;
  if (size > SIZE_MAX || vyre_program_decode(bytes, (size_t)size, program, NULL) != VYRE_OK)
    return 0;
  c->program = *program;
  vyre_program_ref pr = VYRE_PROGRAM_BYTES(bytes, size);
  vyre_error e = VYRE_ERROR_INIT;
  want->status = ref->vt->dispatch(ref, &pr, c->inputs, c->input_count, &c->options, ro, NULL, &e);
  want->native_code = e.native_code;
  if (want->status != VYRE_OK && want->status != VYRE_TRAP) {
    host_validate_note(v, VALIDATE_NOTE_REFERENCE, "validate: backend '%s': a call is not "
                       "checked: the reference backend failed: %s", e.message);
    vyre_program_free(*program);
    *program = NULL;
    return 0;
  }
  for (uint32_t k = 0; *ro && k < (*ro)->count && k < VYRE_MAX_BUFFERS; k++) {
    want->data[k] = (*ro)->items[k].data;
    want->size[k] = (*ro)->items[k].size;
  }
  want->count = *ro && (*ro)->count < VYRE_MAX_BUFFERS ? (*ro)->count : 0;
  return 1;
}

void host_validate_reference_free(host_validate *v, vyre_program *program, vyre_outputs *ro) {
  if (ro && v->ref) v->ref->vt->outputs_free(v->ref, ro);
  vyre_program_free(program);
}

vyre_status host_validate_judge(host_validate *v, const host_vcall *c, const host_vresult *want,
                                const host_vresult *got, uint32_t *outcome, vyre_error *err) {
  char what[1024];
  if (host_validate_compare(v, c, want, got, what, sizeof what)) {
    *outcome = VYRE_VALIDATE_AGREED;
    return VYRE_OK;
  }
  *outcome = VYRE_VALIDATE_DIVERGED;
  return diverged(v, c, want, what, err);
}

/* Run the call on the reference and judge what the backend returned
 * (got): VYRE_OK, or the strict failure; *outcome says what happened. */
static vyre_status check(host_validate *v, host_vcall *c, const void *bytes, uint64_t size,
                         const host_vresult *got, uint32_t *outcome, vyre_error *err) {
  vyre_program *p;
  vyre_outputs *ro;
  host_vresult want;
  *outcome = VYRE_VALIDATE_UNCHECKABLE;
  if (!host_validate_run_reference(v, c, bytes, size, &p, &want, &ro)) return VYRE_OK;
  vyre_status st = host_validate_judge(v, c, &want, got, outcome, err);
  host_validate_reference_free(v, p, ro);
  return st;
}

/* Set up one call: the chain stripped, the options copied, selection. */
vyre_status host_validate_begin(host_validate *v, const char *entry, const vyre_program_ref *program,
                         const vyre_input *inputs, uint32_t input_count,
                         const vyre_dispatch_options *options, host_vstrip *s, host_vcall *c,
                         const void **bytes, uint64_t *size, int *check_it, vyre_error *err) {
  vyre_status st = host_validate_strip(options, s, err);
  if (st != VYRE_OK) return st;
  memset(c, 0, sizeof *c);
  if (s->use) vyre__sized_read(&c->options, sizeof c->options, s->use);
  c->options.struct_size = sizeof c->options;
  c->options.next = NULL; /* limits and backend-specific types are the call's, not the check's */
  c->inputs = inputs;
  c->input_count = input_count;
  c->entry = entry;
  c->capsule_path = s->found ? s->ext.capsule_path : NULL;
  c->strict = v->strict || (s->found && (s->ext.flags & VYRE_VALIDATE_STRICT));
  *bytes = NULL;
  *size = 0;
  int known = program_of(v, program, c, bytes, size);
  *check_it = selected(v, s, program, *bytes, *size);
  if (*check_it && !known) {
    host_validate_note(v, VALIDATE_NOTE_PIPELINE, "validate: backend '%s': dispatches of a pipeline "
              "made while the instance was not validated are not checked%s", "");
    *check_it = 0;
  }
  return VYRE_OK;
}

/* ------------------------------------------------------------------ */
/* The entries                                                         */
/* ------------------------------------------------------------------ */

vyre_status host_validate_dispatch(host_validate *v, vyre_backend *self,
                                   const vyre_program_ref *program, const vyre_input *inputs,
                                   uint32_t input_count, const vyre_dispatch_options *options,
                                   vyre_outputs **out, vyre_timing *timing, vyre_error *err) {
  host_vstrip s;
  host_vcall c;
  const void *bytes;
  uint64_t size;
  int check_it;
  vyre_status st = host_validate_begin(v, "dispatch", program, inputs, input_count, options, &s, &c, &bytes,
                         &size, &check_it, err);
  if (st != VYRE_OK) return st;
  /* The backend's error is read (a trap's code) whatever err the caller passed. */
  vyre_error e = VYRE_ERROR_INIT;
  host_validate_busy = 1;
  st = self->vt->dispatch(self, program, inputs, input_count, s.use, out, timing, &e);
  host_validate_busy = 0;
  if (st != VYRE_OK) vyre_error_copy(err, &e);
  uint32_t outcome = VYRE_VALIDATE_NOT_CHECKED;
  if (check_it && out && (st == VYRE_OK || st == VYRE_TRAP)) {
    host_vresult got;
    memset(&got, 0, sizeof got);
    got.status = st;
    got.native_code = st == VYRE_TRAP ? e.native_code : 0;
    for (uint32_t k = 0; st == VYRE_OK && k < (*out)->count; k++) {
      got.data[k] = (*out)->items[k].data;
      got.size[k] = (*out)->items[k].size;
    }
    got.count = st == VYRE_OK ? (*out)->count : 0;
    vyre_status cs = check(v, &c, bytes, size, &got, &outcome, err);
    if (cs != VYRE_OK) {
      if (st == VYRE_OK) self->vt->outputs_free(self, *out);
      *out = NULL;
      st = cs;
    }
  }
  host_validate_unstrip(&s, outcome);
  return st;
}

vyre_status host_validate_dispatch_into(host_validate *v, vyre_backend *self,
                                        const vyre_program_ref *program, const vyre_input *inputs,
                                        uint32_t input_count, const vyre_dispatch_options *options,
                                        vyre_output_slot *outputs, uint32_t output_count,
                                        vyre_timing *timing, vyre_error *err) {
  host_vstrip s;
  host_vcall c;
  const void *bytes;
  uint64_t size;
  int check_it;
  vyre_status st = host_validate_begin(v, "dispatch_into", program, inputs, input_count, options, &s, &c,
                         &bytes, &size, &check_it, err);
  if (st != VYRE_OK) return st;
  vyre_error e = VYRE_ERROR_INIT;
  host_validate_busy = 1;
  st = self->vt->dispatch_into(self, program, inputs, input_count, s.use, outputs, output_count,
                               timing, &e);
  host_validate_busy = 0;
  if (st != VYRE_OK) vyre_error_copy(err, &e);
  uint32_t outcome = VYRE_VALIDATE_NOT_CHECKED;
  if (check_it && outputs && output_count <= VYRE_MAX_BUFFERS &&
      (st == VYRE_OK || st == VYRE_TRAP)) {
    host_vresult got;
    memset(&got, 0, sizeof got);
    got.status = st;
    got.native_code = st == VYRE_TRAP ? e.native_code : 0;
    for (uint32_t k = 0; st == VYRE_OK && k < output_count; k++) {
      got.data[k] = outputs[k].data;
      got.size[k] = outputs[k].size;
    }
    got.count = st == VYRE_OK ? output_count : 0;
    st = check(v, &c, bytes, size, &got, &outcome, err) != VYRE_OK ? VYRE_INTERNAL : st;
  }
  host_validate_unstrip(&s, outcome);
  return st;
}

vyre_status host_validate_dispatch_resident(host_validate *v, vyre_backend *self,
                                            const vyre_program_ref *program,
                                            const vyre_resident *buffers, uint32_t buffer_count,
                                            const vyre_dispatch_options *options,
                                            vyre_timing *timing, vyre_error *err) {
  (void)v;
  host_vstrip s;
  vyre_status st = host_validate_strip(options, &s, err);
  if (st != VYRE_OK) return st;
  host_validate_busy = 1;
  st = self->vt->dispatch_resident(self, program, buffers, buffer_count, s.use, timing, err);
  host_validate_busy = 0;
  host_validate_unstrip(&s, VYRE_VALIDATE_NOT_CHECKED);
  return st;
}

vyre_status host_validate_pipeline_create(host_validate *v, vyre_backend *self,
                                          const void *program_bytes, uint64_t program_size,
                                          const vyre_dispatch_options *options,
                                          vyre_pipeline *out, vyre_error *err) {
  host_vstrip s;
  vyre_status st = host_validate_strip(options, &s, err);
  if (st != VYRE_OK) return st;
  host_validate_busy = 1;
  st = self->vt->pipeline_create(self, program_bytes, program_size, s.use, out, err);
  host_validate_busy = 0;
  host_validate_unstrip(&s, VYRE_VALIDATE_NOT_CHECKED);
  if (st != VYRE_OK || !out || v->is_reference || program_size > SIZE_MAX) return st;
  /* Kept so that the pipeline's dispatches can be checked. */
  void *copy = malloc(program_size ? (size_t)program_size : 1);
  if (!copy) return st;
  memcpy(copy, program_bytes, (size_t)program_size);
  vyre_dispatch_options o;
  memset(&o, 0, sizeof o);
  if (s.use) vyre__sized_read(&o, sizeof o, s.use);
  pthread_mutex_lock(&v->lock);
  if (v->pipe_count == v->pipe_cap) {
    uint32_t cap = v->pipe_cap ? v->pipe_cap * 2 : 8;
    host_vpipe *grown = realloc(v->pipes, cap * sizeof *grown);
    if (grown) v->pipes = grown, v->pipe_cap = cap;
  }
  if (v->pipe_count < v->pipe_cap) {
    host_vpipe *p = &v->pipes[v->pipe_count++];
    p->handle = *out;
    p->bytes = copy;
    p->size = program_size;
    p->ulp_budget = o.ulp_budget;
    memcpy(p->workgroup, o.workgroup, sizeof p->workgroup);
    copy = NULL;
  }
  pthread_mutex_unlock(&v->lock);
  free(copy);
  return st;
}

void host_validate_pipeline_release(host_validate *v, vyre_pipeline pipeline) {
  pthread_mutex_lock(&v->lock);
  for (uint32_t i = 0; i < v->pipe_count; i++) {
    if (v->pipes[i].handle != pipeline) continue;
    free(v->pipes[i].bytes);
    v->pipes[i] = v->pipes[--v->pipe_count];
    break;
  }
  pthread_mutex_unlock(&v->lock);
}
