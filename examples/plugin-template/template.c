/* template.c -- the smallest vyre backend plugin: a CPU interpreter of const, gid, load, store, add and mul over u32 and f32 buffers. */
/*
 * Copy this file to start a backend (README.md).  What a plugin is:
 *   - two exported symbols, the descriptor (read before any plugin code
 *     runs) and the entry (returns one immutable registration);
 *   - a factory, `create`, that makes instances: a vyre_backend head
 *     followed by the plugin's state, with a function table;
 *   - no other export and no import from the host: libvyre (the decoder
 *     and validator, geometry, error records) is linked in statically.
 * The rules: share/doc/vyre/abi.md and the top comment of vyre/vyre.h.
 *
 * This backend claims exactly what it implements: the ops in tpl_ops at the
 * types in tpl_op_types, u32 and f32 buffers, output ranges.  Anything else
 * in a program is refused with VYRE_UNSUPPORTED before it runs; `vyre
 * conform --plugin` runs the corpus cases that stay within the claim
 * against the reference backend.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <vyre/vyre.h>
#include <vyre/vyre_program.h>
#include <vyre/vyre_support.h>

#define TPL_ID "template"
#define TPL_VERSION "1.0"
/* After the reference backend (900): installed beside it, the template is
 * used only when asked for by id. */
#define TPL_PRECEDENCE 1000
/* It returns output ranges as declared (VYRE_BUF_OUT_RANGE); nothing more. */
#define TPL_CAPABILITIES VYRE_CAP_OUT_RANGE
#define TPL_TYPES (VYRE_TBIT(VYRE_T_U32) | VYRE_TBIT(VYRE_T_F32))

/* The ops, and parallel to them the types each is supported at (0: every
 * type its class allows; gid is always u32, store has no type of its own). */
static const uint16_t tpl_ops[] = {VYRE_OP_CONST, VYRE_OP_INVOCATION_ID, VYRE_OP_LOAD,
                                   VYRE_OP_STORE, VYRE_OP_ADD,           VYRE_OP_MUL};
static const uint32_t tpl_op_types[] = {TPL_TYPES, 0, TPL_TYPES, 0, TPL_TYPES, TPL_TYPES};

typedef struct tpl_backend {
  vyre_backend head; /* first: the host sees only this */
  uint32_t ordinal;
} tpl_backend;

/* NULL is accepted (every destroy takes it). */
static void tpl_destroy(vyre_backend *self) { free(self); }

static vyre_status tpl_device_profile(vyre_backend *self, vyre_device_profile *out,
                                      vyre_error *err) {
  if (!out || out->struct_size < sizeof(uint32_t))
    return vyre_error_set(err, VYRE_INVALID_ARGUMENT, 0,
                          "template device_profile: no profile to fill. Fix: pass one with "
                          "struct_size = sizeof(vyre_device_profile)");
  vyre_device_profile p;
  memset(&p, 0, sizeof p);
  p.struct_size = out->struct_size;
  p.ordinal = ((tpl_backend *)self)->ordinal;
  p.device_count = 1; /* one device: the host CPU (ordinal 0) */
  strcpy(p.name, "template CPU interpreter");
  strcpy(p.backend_id, TPL_ID);
  p.compute_units = 1;
  p.subgroup_size = 32;
  p.max_workgroup_size[0] = p.max_workgroup_size[1] = VYRE_MAX_WORKGROUP_INVOCATIONS;
  p.max_workgroup_size[2] = 64;
  p.max_invocations_per_workgroup = VYRE_MAX_WORKGROUP_INVOCATIONS;
  p.max_workgroups[0] = p.max_workgroups[1] = p.max_workgroups[2] = UINT32_MAX;
  p.capabilities = TPL_CAPABILITIES;
  /* Write no more than the caller's struct holds (the size-prefix rule). */
  memcpy(out, &p, out->struct_size < sizeof p ? out->struct_size : sizeof p);
  return VYRE_OK;
}

/* Refuse, before running it, a program that needs what the registration
 * does not claim.  vyre_program_decode has validated everything else. */
static vyre_status tpl_check(const vyre_program *p, vyre_error *err) {
  uint64_t caps = p->required_caps & ~(uint64_t)TPL_CAPABILITIES;
  for (uint32_t bit = 0; bit < 64; bit++)
    if (caps & (1ull << bit))
      return vyre_error_set(err, VYRE_UNSUPPORTED, 0,
                            "template backend: the program needs %s. Fix: run it on a backend "
                            "that offers it (`vyre list`)",
                            vyre_capability_text(bit) ? vyre_capability_text(bit) : "a capability");
  for (uint32_t i = 0; i < p->buffer_count; i++) {
    const vyre_buffer_decl *d = &p->buffers[i].decl;
    if (!(TPL_TYPES & VYRE_TBIT(d->elem_type)) || d->access == VYRE_ACCESS_WORKGROUP)
      return vyre_error_set(err, VYRE_UNSUPPORTED, 0,
                            "template backend: buffer '%s' is %s %s; only u32 and f32 global "
                            "buffers are supported. Fix: run it on another backend",
                            p->buffers[i].name, vyre_access_name(d->access),
                            vyre_type_name(d->elem_type));
  }
  for (uint32_t i = 0; i < p->inst_count; i++) {
    const vyre_inst *in = &p->insts[i];
    uint32_t k = 0;
    while (k < sizeof tpl_ops / sizeof tpl_ops[0] && tpl_ops[k] != in->op) k++;
    if (k == sizeof tpl_ops / sizeof tpl_ops[0] ||
        (tpl_op_types[k] && !(tpl_op_types[k] & VYRE_TBIT(p->value_type[i])))) {
      const vyre_op_info *info = vyre_op_lookup(in->op);
      return vyre_error_set(err, VYRE_UNSUPPORTED, 0,
                            "template backend: instruction %u (%s %s) is not supported. Fix: "
                            "run it on a backend that registers it (`vyre info`)",
                            i, info ? info->mnemonic : "?", vyre_type_name(p->value_type[i]));
    }
  }
  return VYRE_OK;
}

/* Run one invocation.  Values are kept as 32-bit words (u32, or f32 bits);
 * share/doc/vyre/semantics.md says what each op computes. */
static void tpl_invoke(const vyre_program *p, const vyre_geometry *g, uint8_t **mem,
                       const uint32_t gid[3], uint32_t *val) {
  for (uint32_t i = 0; i < p->inst_count; i++) {
    const vyre_inst *in = &p->insts[i];
    int f32 = p->value_type[i] == VYRE_T_F32;
    switch (in->op) {
    case VYRE_OP_CONST: val[i] = in->a; break; /* 32-bit types: the low word */
    case VYRE_OP_INVOCATION_ID: val[i] = gid[in->mod]; break;
    case VYRE_OP_LOAD: {
      uint32_t index = val[in->b], w = 0; /* out of bounds: the typed zero */
      if (index < g->buffer_elems[in->a]) memcpy(&w, mem[in->a] + 4u * index, 4);
      val[i] = f32 ? vyre_f32_canonical_bits(w) : w; /* loads canonicalise f32 */
      break;
    }
    case VYRE_OP_STORE: {
      uint32_t index = val[in->b]; /* out of bounds: nothing happens */
      if (index < g->buffer_elems[in->a]) memcpy(mem[in->a] + 4u * index, &val[in->c], 4);
      break;
    }
    /* u32 wraps.  f32 is libvyre's vyre_f32_* (semantics.md, "Underflow"):
     * C's x * y rounds tiny products with gradual underflow, which is not
     * vyre's rule; vyre_f32_mul is bit for bit what every backend computes. */
    case VYRE_OP_ADD:
      val[i] = f32 ? vyre_f32_add(val[in->a], val[in->b]) : val[in->a] + val[in->b];
      break;
    case VYRE_OP_MUL:
      val[i] = f32 ? vyre_f32_mul(val[in->a], val[in->b]) : val[in->a] * val[in->b];
      break;
    default: break; /* tpl_check let nothing else through */
    }
  }
}

static void tpl_outputs_free(vyre_backend *self, vyre_outputs *outputs) {
  (void)self;
  if (!outputs) return;
  for (uint32_t i = 0; i < outputs->count; i++) free(outputs->items[i].data);
  free(outputs->items);
  free(outputs);
}

/* The outputs, in declaration order: each output buffer's readback range
 * (its whole contents unless it declares a range), copied out of mem. */
static vyre_status tpl_collect(const vyre_program *p, const vyre_geometry *g, uint8_t **mem,
                               vyre_outputs **out, vyre_error *err) {
  vyre_outputs *o = calloc(1, sizeof *o);
  if (!o || !(o->items = calloc(p->output_count ? p->output_count : 1, sizeof *o->items))) {
    free(o);
    return vyre_error_set(err, VYRE_OUT_OF_MEMORY, 0, "template dispatch: out of memory");
  }
  o->struct_size = sizeof *o;
  for (uint32_t i = 0; i < p->buffer_count; i++) {
    int32_t k = p->buffers[i].output_index;
    if (!p->buffers[i].is_output || k < 0) continue;
    vyre_output *item = &o->items[k];
    item->size = g->out_size[i];
    item->data = malloc(item->size ? item->size : 1);
    if (!item->data) {
      tpl_outputs_free(NULL, o);
      return vyre_error_set(err, VYRE_OUT_OF_MEMORY, 0, "template dispatch: out of memory");
    }
    memcpy(item->data, mem[i] + g->out_offset[i], item->size);
    o->count++;
  }
  *out = o;
  return VYRE_OK;
}

/* Decode (which validates: a plugin never trusts the host), check the
 * subset, lay the buffers out, run every invocation of the grid one after
 * the other (nothing claimed lets invocations communicate), collect. */
static vyre_status tpl_dispatch(vyre_backend *self, const vyre_program_ref *program,
                                const vyre_input *inputs, uint32_t input_count,
                                const vyre_dispatch_options *options, vyre_outputs **out,
                                vyre_timing *timing, vyre_error *err) {
  (void)self;
  if (!out)
    return vyre_error_set(err, VYRE_INVALID_ARGUMENT, 0,
                          "template dispatch: out is NULL. Fix: pass a vyre_outputs ** to "
                          "receive the outputs");
  *out = NULL;
  /* The argument checks every backend makes, in libvyre's one wording. */
  vyre_status st = vyre_check_program_ref(program, "template dispatch", err);
  if (st != VYRE_OK) return st;
  if (program->pipeline)
    return vyre_error_set(err, VYRE_INVALID_HANDLE, 0,
                          "template dispatch: this backend makes no pipelines. Fix: pass the "
                          "program's bytes");
  if (options && options->struct_size > offsetof(vyre_dispatch_options, fixpoint_iterations) &&
      options->fixpoint_iterations > 1)
    return vyre_error_set(err, VYRE_UNSUPPORTED, 0,
                          "template dispatch: fixpoint iterations are not supported. Fix: "
                          "dispatch once per iteration");

  vyre_program *p = NULL;
  st = vyre_program_decode(program->bytes, (size_t)program->size, &p, err);
  if (st != VYRE_OK) return st;
  uint8_t *mem[VYRE_MAX_BUFFERS] = {0};
  uint32_t *val = NULL;
  vyre_geometry g;
  uint64_t sizes[VYRE_MAX_BUFFERS] = {0};
  if ((st = tpl_check(p, err)) != VYRE_OK) goto done;
  st = vyre_check_inputs(inputs, input_count, p->input_count, "template dispatch", err);
  if (st != VYRE_OK) goto done;
  for (uint32_t i = 0; i < input_count; i++) sizes[i] = inputs[i].size;
  if ((st = vyre_geometry_derive(p, sizes, NULL, options, &g, err)) != VYRE_OK) goto done;

  /* Outputs start zeroed; inputs and in/out buffers start as given. */
  for (uint32_t i = 0; i < p->buffer_count; i++) {
    mem[i] = calloc(1, g.buffer_bytes[i] ? g.buffer_bytes[i] : 1);
    if (!mem[i]) {
      st = vyre_error_set(err, VYRE_OUT_OF_MEMORY, 0, "template dispatch: out of memory");
      goto done;
    }
    int32_t k = p->buffers[i].input_index;
    if (k >= 0 && inputs[k].size)
      memcpy(mem[i], inputs[k].data,
             inputs[k].size < g.buffer_bytes[i] ? inputs[k].size : g.buffer_bytes[i]);
  }
  if (!(val = malloc((p->inst_count ? p->inst_count : 1) * sizeof *val))) {
    st = vyre_error_set(err, VYRE_OUT_OF_MEMORY, 0, "template dispatch: out of memory");
    goto done;
  }
  /* Ids are u32 (they wrap past 2^32: share/doc/vyre/semantics.md). */
  uint64_t n[3];
  for (int a = 0; a < 3; a++) n[a] = (uint64_t)g.grid[a] * g.workgroup[a];
  for (uint64_t z = 0; z < n[2]; z++)
    for (uint64_t y = 0; y < n[1]; y++)
      for (uint64_t x = 0; x < n[0]; x++) {
        uint32_t gid[3] = {(uint32_t)x, (uint32_t)y, (uint32_t)z};
        tpl_invoke(p, &g, mem, gid, val);
      }
  st = tpl_collect(p, &g, mem, out, err);
  /* No timing: valid = 0 says so (written only if the caller's struct has it). */
  if (st == VYRE_OK && timing && timing->struct_size >= offsetof(vyre_timing, wall_ns))
    timing->valid = 0;

done:
  free(val);
  for (uint32_t i = 0; i < VYRE_MAX_BUFFERS; i++) free(mem[i]);
  vyre_program_free(p);
  return st;
}

/* Everything else stays NULL: a host checks an entry before calling it
 * (VYRE_HOST_HAS), and no capability that needs one is claimed. */
static const vyre_backend_vtable tpl_vtable = {
    .struct_size = sizeof(vyre_backend_vtable),
    .destroy = tpl_destroy,
    .device_profile = tpl_device_profile,
    .dispatch = tpl_dispatch,
    .outputs_free = tpl_outputs_free,
};

static vyre_status tpl_create(const vyre_backend_options *options, vyre_backend **out,
                              vyre_error *err) {
  if (!out)
    return vyre_error_set(err, VYRE_INVALID_ARGUMENT, 0, "template create: out is NULL. Fix: pass one");
  *out = NULL;
  uint32_t ordinal = 0;
  if (options && options->struct_size >= offsetof(vyre_backend_options, flags))
    ordinal = options->device_ordinal;
  if (ordinal != 0)
    return vyre_error_set(err, VYRE_NO_DEVICE, 0,
                          "template backend: no device %u (it has one, ordinal 0). Fix: use "
                          "device 0",
                          ordinal);
  tpl_backend *b = calloc(1, sizeof *b);
  if (!b) return vyre_error_set(err, VYRE_OUT_OF_MEMORY, 0, "template create: out of memory");
  b->head.struct_size = sizeof b->head;
  b->head.vt = &tpl_vtable;
  b->ordinal = ordinal;
  *out = &b->head;
  return VYRE_OK;
}

/* The one registration: immutable, for the life of the process. */
static const vyre_registration tpl_registration = {
    .struct_size = sizeof(vyre_registration),
    .abi_major = VYRE_ABI_MAJOR,
    .abi_minor = VYRE_ABI_MINOR,
    .id = TPL_ID,
    .version = TPL_VERSION,
    .description = "template CPU backend (examples/plugin-template)",
    .precedence = TPL_PRECEDENCE,
    .op_count = sizeof tpl_ops / sizeof tpl_ops[0],
    .ops = tpl_ops,
    .capabilities = TPL_CAPABILITIES,
    .storage_types = TPL_TYPES,
    .create = tpl_create,
    .op_types = tpl_op_types,
    .extensions = NULL,
};

/* Serves every minor from 0 (a 1.0 host reads the registration up to
 * `create` and ignores op_types) to the headers' own. */
VYRE_PLUGIN_EXPORT const vyre_descriptor vyre_plugin_descriptor =
    VYRE_DESCRIPTOR_INIT(0, VYRE_ABI_MINOR, "vyre-template " TPL_VERSION);

/* The entry (vyre_plugin_entry_fn in vyre.h): the same registration for
 * every host whose major matches (vyre_check_host_abi words a mismatch as
 * every plugin does).  Thread-safe; no side effect. */
VYRE_PLUGIN_EXPORT vyre_status vyre_plugin_entry(uint16_t host_abi_major, uint16_t host_abi_minor,
                                                 const vyre_registration **out, vyre_error *err);
VYRE_PLUGIN_EXPORT vyre_status vyre_plugin_entry(uint16_t host_abi_major, uint16_t host_abi_minor,
                                                 const vyre_registration **out, vyre_error *err) {
  if (!out)
    return vyre_error_set(err, VYRE_INVALID_ARGUMENT, 0,
                          "template plugin: out is NULL. Fix: pass a const vyre_registration **");
  *out = NULL;
  /* The same major, and a minor from 0 (what the descriptor says). */
  vyre_status st = vyre_check_host_abi("template plugin", host_abi_major, host_abi_minor, 0,
                                       VYRE_ABI_MINOR, err);
  if (st != VYRE_OK) return st;
  *out = &tpl_registration;
  return VYRE_OK;
}
