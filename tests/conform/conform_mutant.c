/* conform_mutant.c -- test plugins wrapping the reference backend: one with a planted bug (programs using `mulhi` get bit 0 of their first output byte flipped; with $VYRE_MUTANT_MMA, MMA results moved beyond or within the bound), and with -DMUTANT_SMALL a small backend that claims and runs only a few ops and types. */
/*
 * `vyre conform --plugin .../libconform_mutant.so` and `vyre fuzz --plugin
 * ...` must find, capsule and minimize exactly that bug (tests/conform/conform.test,
 * tests/fuzz/fuzz.test).  The plugin dlopens the reference plugin
 * ($VYRE_MUTANT_INNER, else the build tree's) and forwards to it; like any
 * plugin it exports only the descriptor and the entry.
 *
 * $VYRE_MUTANT_MMA (the mutant only) plants an MMA bug instead, learning
 * from the reference's bound side channel (host-stub/ref/tolerance.h)
 * which f32 elements a float mma wrote: `over` moves the first finite one
 * with a finite bound to twice the bound away (and a little more, so that
 * it is more than the bound in f32), `within` to about half the bound away
 * (a correct backend may do that), `int` adds 1 to element 0 of the first
 * i32 output of a program with an integer mma.
 *
 * -DMUTANT_SMALL (libconform_small.so, id "small") is a backend as small
 * as ABI 1.1 lets one be described: the ops of small_ops only, add and
 * mul at u32 only (registration.op_types), storage u32 u64 f32, neither
 * int64 nor out_range.  Like a real small backend it refuses, with
 * VYRE_UNSUPPORTED, any program outside that (small_refuses), so a
 * harness that ran it on a case beyond its claims would see a failure.
 *
 * -DMUTANT_TINY (libconform_tiny.so, id "tiny") is smaller still: const,
 * gid, load, add and store, all at u32, storage u32 only; `vyre fuzz`
 * must find programs within that (tests/fuzz/fuzz.test).  -DMUTANT_NONE
 * (libconform_none.so, id "none") claims load, add and store at u32 and
 * no way to make an index or a value (neither const nor gid): no
 * program is within its claims, and `vyre fuzz` must say so and fail.
 *
 * -DMUTANT_NOCR (libconform_nocr.so, id "nocr") is the reference without
 * the planted bug and without correctly_rounded, as a backend whose
 * transcendentals are only within a bound: it refuses, with
 * VYRE_UNSUPPORTED, a strict dispatch (ulp budget 0) of a program with a
 * transcendental, which the harness must count as a pass.
 */
#include <dlfcn.h>
#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "vyre/vyre.h"
#include "vyre/vyre_program.h"
#include "vyre/vyre_support.h"
#include "host-stub/ref/tolerance.h"

#define EXPORT __attribute__((visibility("default")))

#if defined(MUTANT_TINY) || defined(MUTANT_NONE)
#define MUTANT_SMALL /* the small backend's machinery, with the tables below */
#endif
#if defined(MUTANT_TINY)
#define MUTANT_ID "tiny"
#define MUTANT_DEVICE "a tiny backend over the reference (const, gid, load, add, store at u32)"
#elif defined(MUTANT_NONE)
#define MUTANT_ID "none"
#define MUTANT_DEVICE "a backend over the reference that claims no whole program"
#elif defined(MUTANT_NOCR)
#define MUTANT_ID "nocr"
#define MUTANT_DEVICE "the reference without correctly rounded transcendentals"
#elif defined(MUTANT_SMALL)
#define MUTANT_ID "small"
#define MUTANT_DEVICE "a small backend over the reference (add and mul at u32 only)"
#else
#define MUTANT_ID "mutant"
#define MUTANT_DEVICE "mutant of the reference (mulhi flips a bit)"
#endif

static const vyre_registration *inner_reg;
static vyre_registration reg;
static pthread_once_t once = PTHREAD_ONCE_INIT;
static char load_error[512];

typedef struct mutant {
  vyre_backend head;
  vyre_backend *inner;
} mutant;

static void load_inner(void) {
  const char *path = getenv("VYRE_MUTANT_INNER");
  if (!path || !*path) path = MUTANT_INNER_DEFAULT;
  void *h = dlopen(path, RTLD_NOW | RTLD_LOCAL);
  if (!h) {
    snprintf(load_error, sizeof load_error, "%s", dlerror());
    return;
  }
  vyre_plugin_entry_fn entry = (vyre_plugin_entry_fn)dlsym(h, VYRE_PLUGIN_ENTRY_SYMBOL);
  vyre_error err = VYRE_ERROR_INIT;
  if (!entry || entry(VYRE_ABI_MAJOR, VYRE_ABI_MINOR, &inner_reg, &err) != VYRE_OK) {
    snprintf(load_error, sizeof load_error, "the reference entry failed: %.400s", err.message);
    inner_reg = NULL;
  }
}

static void m_destroy(vyre_backend *self) {
  if (!self) return;
  mutant *m = (mutant *)self;
  if (m->inner) m->inner->vt->destroy(m->inner);
  free(m);
}

static vyre_status m_profile(vyre_backend *self, vyre_device_profile *out, vyre_error *err) {
  mutant *m = (mutant *)self;
  vyre_status st = m->inner->vt->device_profile(m->inner, out, err);
  if (st == VYRE_OK) {
    snprintf(out->name, sizeof out->name, "%s", MUTANT_DEVICE);
    snprintf(out->backend_id, sizeof out->backend_id, "%s", MUTANT_ID);
    /* The device has what the wrapper offers, no more. */
    out->capabilities &= reg.capabilities;
  }
  return st;
}

#if defined(MUTANT_TINY)
#define U32_ (VYRE_TBIT(VYRE_T_U32))
static const uint16_t small_ops[] = {VYRE_OP_CONST, VYRE_OP_INVOCATION_ID, VYRE_OP_LOAD,
                                     VYRE_OP_ADD, VYRE_OP_STORE};
static const uint32_t small_op_types[] = {U32_, U32_, U32_, U32_, 0};
#define SMALL_STORAGE U32_
#elif defined(MUTANT_NONE)
#define U32_ (VYRE_TBIT(VYRE_T_U32))
static const uint16_t small_ops[] = {VYRE_OP_LOAD, VYRE_OP_ADD, VYRE_OP_STORE};
static const uint32_t small_op_types[] = {U32_, U32_, 0};
#define SMALL_STORAGE U32_
#elif defined(MUTANT_SMALL)
/* What the small backend supports; add and mul only at u32. */
static const uint16_t small_ops[] = {VYRE_OP_CONST, VYRE_OP_LOAD, VYRE_OP_INVOCATION_ID,
                                     VYRE_OP_ADD,   VYRE_OP_MUL,  VYRE_OP_STORE,
                                     VYRE_OP_IF,    VYRE_OP_ELSE, VYRE_OP_END};
static const uint32_t small_op_types[] = {0, 0, 0, VYRE_TBIT(VYRE_T_U32), VYRE_TBIT(VYRE_T_U32),
                                          0, 0, 0, 0};
#define SMALL_STORAGE (VYRE_TBIT(VYRE_T_U32) | VYRE_TBIT(VYRE_T_U64) | VYRE_TBIT(VYRE_T_F32))
#endif
#ifdef MUTANT_SMALL
#define SMALL_OP_COUNT (sizeof small_ops / sizeof small_ops[0])

/* Why the small backend cannot run p, or NULL when it can.  Written from
 * what it supports, not from the harness's rules. */
static const char *small_refuses(const vyre_program *p) {
  for (uint32_t i = 0; i < p->buffer_count; i++) {
    if (!((SMALL_STORAGE >> p->buffers[i].decl.elem_type) & 1)) return "a buffer type it lacks";
    if (p->buffers[i].decl.flags & VYRE_BUF_OUT_RANGE) return "output ranges";
  }
  for (uint32_t i = 0; i < p->inst_count; i++) {
    const vyre_inst *in = &p->insts[i];
    uint32_t k = 0;
    while (k < SMALL_OP_COUNT && small_ops[k] != in->op) k++;
    if (k == SMALL_OP_COUNT) return "an op it lacks";
    if (small_op_types[k] && !((small_op_types[k] >> in->type) & 1)) return "add or mul beyond u32";
    if (p->value_type[i] == VYRE_T_U64 || p->value_type[i] == VYRE_T_I64) return "64-bit values";
  }
  return NULL;
}
#endif

#if !defined(MUTANT_SMALL) && !defined(MUTANT_NOCR)
/* The MMA bug of $VYRE_MUTANT_MMA: 0 none, 1 over, 2 within, 3 int. */
static int mma_mode(void) {
  const char *m = getenv("VYRE_MUTANT_MMA");
  if (!m) return 0;
  return !strcmp(m, "over") ? 1 : !strcmp(m, "within") ? 2 : !strcmp(m, "int") ? 3 : 0;
}

/* f32 v moved by `by` (> 0) away from itself, at least by more than `by`
 * when over, at most by `by` when not. */
static float moved(float v, double bound, int over) {
  if (over) {
    float x = (float)((double)v + 2.0 * bound);
    while (fabs((double)x - (double)v) <= bound) x = nextafterf(x, INFINITY);
    return x;
  }
  float x = (float)((double)v + bound / 2.0);
  return fabs((double)x - (double)v) <= bound ? x : v;
}

/* Dispatch on the reference with the bounds chained; then move the first
 * float-MMA element (over/within) or bump the first i32 output (int). */
static vyre_status mma_dispatch(mutant *m, int mode, const vyre_program *p,
                                const vyre_program_ref *program, const vyre_input *inputs,
                                uint32_t input_count, const vyre_dispatch_options *options,
                                vyre_outputs **out, vyre_timing *timing, vyre_error *err) {
  double *bound[VYRE_MAX_BUFFERS] = {0};
  vyre_dispatch_options o = {0};
  if (options) memcpy(&o, options, options->struct_size < sizeof o ? options->struct_size : sizeof o);
  o.struct_size = sizeof o;
  ref_mma_bound rb = {{sizeof rb, REF_EXT_MMA_BOUND, o.next}, p->output_count, 0, bound};
  o.next = &rb.head;
  /* Sizes are known once the outputs are: dispatch twice (the reference is deterministic). */
  vyre_status st = m->inner->vt->dispatch(m->inner, program, inputs, input_count, &o, out, timing, err);
  if (st != VYRE_OK) return st;
  for (uint32_t k = 0; k < (*out)->count && k < VYRE_MAX_BUFFERS; k++)
    bound[k] = calloc((*out)->items[k].size / 4 + 1, sizeof(double));
  m->inner->vt->outputs_free(m->inner, *out);
  *out = NULL;
  st = m->inner->vt->dispatch(m->inner, program, inputs, input_count, &o, out, timing, err);
  for (uint32_t b = 0; st == VYRE_OK && b < p->buffer_count; b++) {
    int32_t k = p->buffers[b].output_index;
    if (k < 0 || (uint32_t)k >= (*out)->count || !bound[k]) continue;
    uint8_t *d = (*out)->items[k].data;
    uint64_t n = (*out)->items[k].size / 4;
    if (mode == 3 && p->buffers[b].decl.elem_type == VYRE_T_I32 && n) {
      uint32_t x;
      memcpy(&x, d, 4);
      x += 1;
      memcpy(d, &x, 4);
      break;
    }
    if (mode == 3 || p->buffers[b].decl.elem_type != VYRE_T_F32) continue;
    uint64_t e = 0;
    float v = 0;
    for (; e < n; e++) {
      memcpy(&v, d + 4 * e, 4);
      if (bound[k][e] >= 0 && isfinite(bound[k][e]) && isfinite(v)) break;
    }
    if (e == n) continue;
    v = moved(v, bound[k][e], mode == 1);
    memcpy(d + 4 * e, &v, 4);
    break;
  }
  for (uint32_t k = 0; k < VYRE_MAX_BUFFERS; k++) free(bound[k]);
  return st;
}

/* Whether p has an mma at f16/bf16 (float) or i8/u8 (int). */
static int has_mma(const vyre_program *p, int want_float) {
  for (uint32_t i = 0; i < p->inst_count; i++)
    if (p->insts[i].op == VYRE_OP_MMA &&
        (p->insts[i].type == VYRE_T_F16 || p->insts[i].type == VYRE_T_BF16) == want_float)
      return 1;
  return 0;
}
#endif

static vyre_status m_dispatch(vyre_backend *self, const vyre_program_ref *program,
                              const vyre_input *inputs, uint32_t input_count,
                              const vyre_dispatch_options *options, vyre_outputs **out,
                              vyre_timing *timing, vyre_error *err) {
  mutant *m = (mutant *)self;
#ifdef MUTANT_SMALL
  if (program && program->bytes) {
    vyre_program *q = NULL;
    vyre_status dst = vyre_program_decode(program->bytes, program->size, &q, err);
    if (dst != VYRE_OK) return dst;
    const char *why = small_refuses(q);
    vyre_program_free(q);
    if (why)
      return vyre_error_set(err, VYRE_UNSUPPORTED, 0, "small: the program uses %s. Fix: run it "
                            "on another backend", why);
  }
#elif defined(MUTANT_NOCR)
  vyre_dispatch_options o = {0};
  if (options)
    memcpy(&o, options, options->struct_size < sizeof o ? options->struct_size : sizeof o);
  if (o.ulp_budget == 0 && program && program->bytes) {
    vyre_program *q = NULL;
    vyre_status dst = vyre_program_decode(program->bytes, program->size, &q, err);
    if (dst != VYRE_OK) return dst;
    int trans = (q->features & VYRE_FEAT_TRANSCENDENTAL) != 0;
    vyre_program_free(q);
    if (trans)
      return vyre_error_set(err, VYRE_UNSUPPORTED, 0, "nocr: a transcendental is unsupported "
                            "under strict (ulp budget 0). Fix: pass a ulp budget >= 1");
  }
  return m->inner->vt->dispatch(m->inner, program, inputs, input_count, options, out, timing, err);
#else
  int mode = mma_mode();
  if (mode && program && program->bytes) {
    vyre_program *q = NULL;
    vyre_status dst = vyre_program_decode(program->bytes, program->size, &q, err);
    if (dst != VYRE_OK) return dst;
    /* The MMA bug alone: no mulhi bit flip beside it. */
    vyre_status st = has_mma(q, mode != 3)
                         ? mma_dispatch(m, mode, q, program, inputs, input_count, options, out,
                                        timing, err)
                         : m->inner->vt->dispatch(m->inner, program, inputs, input_count, options,
                                                  out, timing, err);
    vyre_program_free(q);
    return st;
  }
#endif
  vyre_status st = m->inner->vt->dispatch(m->inner, program, inputs, input_count, options, out,
                                          timing, err);
  if (st != VYRE_OK || !program || !program->bytes) return st;
  vyre_program *p = NULL;
  if (vyre_program_decode(program->bytes, program->size, &p, NULL) != VYRE_OK) return st;
  int planted = 0;
  for (uint32_t i = 0; i < p->inst_count; i++) planted |= p->insts[i].op == VYRE_OP_MULHI;
  vyre_program_free(p);
  if (planted && (*out)->count && (*out)->items[0].size) ((uint8_t *)(*out)->items[0].data)[0] ^= 1;
  return st;
}

static void m_outputs_free(vyre_backend *self, vyre_outputs *o) {
  mutant *m = (mutant *)self;
  m->inner->vt->outputs_free(m->inner, o);
}

/* Only what the harness uses; the rest is NULL (hosts check entries). */
static const vyre_backend_vtable vtable = {
    .struct_size = sizeof(vyre_backend_vtable),
    .destroy = m_destroy,
    .device_profile = m_profile,
    .dispatch = m_dispatch,
    .outputs_free = m_outputs_free,
};

static vyre_status m_create(const vyre_backend_options *options, vyre_backend **out, vyre_error *err) {
  *out = NULL;
  mutant *m = calloc(1, sizeof *m);
  if (!m) return vyre_error_set(err, VYRE_OUT_OF_MEMORY, 0, "mutant: out of memory");
  vyre_status st = inner_reg->create(options, &m->inner, err);
  if (st != VYRE_OK) {
    free(m);
    return st;
  }
  m->head.struct_size = sizeof m->head;
  m->head.vt = &vtable;
  *out = &m->head;
  return VYRE_OK;
}

VYRE_PLUGIN_EXPORT const vyre_descriptor vyre_plugin_descriptor =
    VYRE_DESCRIPTOR_INIT(0, VYRE_ABI_MINOR, "conform " MUTANT_ID);

EXPORT vyre_status vyre_plugin_entry(uint16_t major, uint16_t minor, const vyre_registration **out,
                                     vyre_error *err);
EXPORT vyre_status vyre_plugin_entry(uint16_t major, uint16_t minor, const vyre_registration **out,
                                     vyre_error *err) {
  if (major != VYRE_ABI_MAJOR)
    return vyre_error_set(err, VYRE_ABI_MISMATCH, 0, "mutant: ABI major %u. Fix: rebuild", major);
  (void)minor;
  pthread_once(&once, load_inner);
  if (!inner_reg)
    return vyre_error_set(err, VYRE_INTERNAL, 0, "mutant: cannot load the reference plugin: %s. "
                          "Fix: set VYRE_MUTANT_INNER", load_error);
  reg = *inner_reg;
  reg.struct_size = sizeof reg;
  reg.id = MUTANT_ID;
  reg.description = MUTANT_DEVICE " (conformance tests)";
  reg.precedence = 950;
  /* Only host dispatch is forwarded. */
  reg.capabilities &= ~(VYRE_CAP_ASYNC | VYRE_CAP_RESIDENT | VYRE_CAP_SEQUENCE | VYRE_CAP_PIPELINE |
                        VYRE_CAP_GRAPH_REPLAY | VYRE_CAP_TIMING);
#ifdef MUTANT_SMALL
  reg.op_count = SMALL_OP_COUNT;
  reg.ops = small_ops;
  reg.op_types = small_op_types;
  reg.storage_types = SMALL_STORAGE;
  reg.capabilities &= ~(VYRE_CAP_INT64 | VYRE_CAP_OUT_RANGE);
#endif
#ifdef MUTANT_NOCR
  reg.capabilities &= ~VYRE_CAP_CORRECTLY_ROUNDED;
#endif
  reg.create = m_create;
  *out = &reg;
  return VYRE_OK;
}
