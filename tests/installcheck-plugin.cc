// installcheck-plugin.cc -- a small C++17 CPU backend built by `make installcheck` from the installed tree with `pkg-config --cflags --libs vyre-plugin` alone (tests/installcheck.sh).
//
// What it proves (docs/abi.md, section 14): a C++ plugin that uses the
// standard library (std::vector, std::unique_ptr, templates, so libstdc++
// instantiations are emitted into it) and libvyre exports exactly
// vyre_plugin_descriptor and vyre_plugin_entry, imports nothing from its
// host, and computes f32 with libvyre's vyre_f32_* so that `vyre conform
// --plugin` certifies it, underflow cases included.  Ops: const, gid,
// load, store; add, mul at u32 and f32; sub, div, fma at f32.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <new>
#include <vector>

#include <vyre/vyre.h>
#include <vyre/vyre_program.h>
#include <vyre/vyre_support.h>

namespace {

constexpr const char *kId = "cxxcpu";
constexpr uint32_t kTypes = VYRE_TBIT(VYRE_T_U32) | VYRE_TBIT(VYRE_T_F32);
constexpr uint32_t kF32 = VYRE_TBIT(VYRE_T_F32);
constexpr uint64_t kCaps = VYRE_CAP_OUT_RANGE;
const uint16_t kOps[] = {VYRE_OP_CONST, VYRE_OP_INVOCATION_ID, VYRE_OP_LOAD, VYRE_OP_STORE,
                         VYRE_OP_ADD,   VYRE_OP_MUL,           VYRE_OP_SUB,  VYRE_OP_DIV,
                         VYRE_OP_FMA};
const uint32_t kOpTypes[] = {kTypes, 0, kTypes, 0, kTypes, kTypes, kF32, kF32, kF32};
constexpr uint32_t kOpCount = sizeof kOps / sizeof kOps[0];

struct Backend {
  vyre_backend head;  // first: the host sees only this
};

using Program = std::unique_ptr<vyre_program, decltype(&vyre_program_free)>;

// One binary op on 32-bit words: u32 wraps, f32 is libvyre's rule.
template <uint32_t (*F32)(uint32_t, uint32_t), typename U32>
uint32_t binary(bool f32, uint32_t a, uint32_t b, U32 u32) {
  return f32 ? F32(a, b) : u32(a, b);
}

vyre_status check_claims(const vyre_program &p, vyre_error *err) {
  if (p.required_caps & ~kCaps)
    return vyre_error_set(err, VYRE_UNSUPPORTED, 0,
                          "cxxcpu: the program needs a capability this backend lacks. Fix: run it "
                          "on another backend");
  for (uint32_t i = 0; i < p.buffer_count; i++) {
    const vyre_buffer_decl &d = p.buffers[i].decl;
    if (!(kTypes & VYRE_TBIT(d.elem_type)) || d.access == VYRE_ACCESS_WORKGROUP)
      return vyre_error_set(err, VYRE_UNSUPPORTED, 0,
                            "cxxcpu: buffer '%s' is not a global u32 or f32 buffer. Fix: run it "
                            "on another backend",
                            p.buffers[i].name);
  }
  for (uint32_t i = 0; i < p.inst_count; i++) {
    uint32_t k = 0;
    while (k < kOpCount && kOps[k] != p.insts[i].op) k++;
    if (k == kOpCount || (kOpTypes[k] && !(kOpTypes[k] & VYRE_TBIT(p.value_type[i]))))
      return vyre_error_set(err, VYRE_UNSUPPORTED, 0,
                            "cxxcpu: instruction %u is not supported. Fix: run it on a backend "
                            "that registers it",
                            i);
  }
  return VYRE_OK;
}

void invoke(const vyre_program &p, const vyre_geometry &g, std::vector<std::vector<uint8_t>> &mem,
            const uint32_t gid[3], std::vector<uint32_t> &val) {
  for (uint32_t i = 0; i < p.inst_count; i++) {
    const vyre_inst &in = p.insts[i];
    bool f32 = p.value_type[i] == VYRE_T_F32;
    // The operands that are value ids (a and b of the arithmetic, b of a
    // load or store: the index); an earlier instruction's, by validation.
    uint32_t a = in.a < i ? val[in.a] : 0, b = in.b < i ? val[in.b] : 0;
    switch (in.op) {
    case VYRE_OP_CONST: val[i] = in.a; break;
    case VYRE_OP_INVOCATION_ID: val[i] = gid[in.mod]; break;
    case VYRE_OP_LOAD: {
      uint32_t w = 0;  // out of bounds: the typed zero
      if (b < g.buffer_elems[in.a]) std::memcpy(&w, mem[in.a].data() + 4u * b, 4);
      val[i] = f32 ? vyre_f32_canonical_bits(w) : w;
      break;
    }
    case VYRE_OP_STORE:
      if (b < g.buffer_elems[in.a]) std::memcpy(mem[in.a].data() + 4u * b, &val[in.c], 4);
      break;
    case VYRE_OP_ADD:
      val[i] = binary<vyre_f32_add>(f32, a, b, [](uint32_t x, uint32_t y) { return x + y; });
      break;
    case VYRE_OP_MUL:
      val[i] = binary<vyre_f32_mul>(f32, a, b, [](uint32_t x, uint32_t y) { return x * y; });
      break;
    case VYRE_OP_SUB: val[i] = vyre_f32_sub(a, b); break;
    case VYRE_OP_DIV: val[i] = vyre_f32_div(a, b); break;
    case VYRE_OP_FMA: val[i] = vyre_f32_fma(a, b, val[in.c]); break;
    default: break;  // check_claims let nothing else through
    }
  }
}

void outputs_free(vyre_backend *, vyre_outputs *o) {
  if (!o) return;
  for (uint32_t i = 0; i < o->count; i++) std::free(o->items[i].data);
  std::free(o->items);
  std::free(o);
}

vyre_status collect(const vyre_program &p, const vyre_geometry &g,
                    const std::vector<std::vector<uint8_t>> &mem, vyre_outputs **out) {
  auto *o = static_cast<vyre_outputs *>(std::calloc(1, sizeof(vyre_outputs)));
  if (!o) return VYRE_OUT_OF_MEMORY;
  o->struct_size = sizeof *o;
  o->items = static_cast<vyre_output *>(std::calloc(p.output_count ? p.output_count : 1, sizeof(vyre_output)));
  if (!o->items) {
    std::free(o);
    return VYRE_OUT_OF_MEMORY;
  }
  for (uint32_t i = 0; i < p.buffer_count; i++) {
    int32_t k = p.buffers[i].output_index;
    if (!p.buffers[i].is_output || k < 0) continue;
    vyre_output &item = o->items[k];
    item.size = g.out_size[i];
    item.data = std::malloc(item.size ? item.size : 1);
    if (!item.data) {
      outputs_free(nullptr, o);
      return VYRE_OUT_OF_MEMORY;
    }
    std::memcpy(item.data, mem[i].data() + g.out_offset[i], item.size);
    o->count++;
  }
  *out = o;
  return VYRE_OK;
}

vyre_status run(const vyre_program &p, const vyre_input *inputs, uint32_t input_count,
                const vyre_dispatch_options *options, vyre_outputs **out, vyre_error *err) {
  vyre_status st = vyre_check_inputs(inputs, input_count, p.input_count, "cxxcpu dispatch", err);
  if (st != VYRE_OK) return st;
  uint64_t sizes[VYRE_MAX_BUFFERS] = {0};
  for (uint32_t i = 0; i < input_count; i++) sizes[i] = inputs[i].size;
  vyre_geometry g;
  if ((st = vyre_geometry_derive(&p, sizes, nullptr, options, &g, err)) != VYRE_OK) return st;
  std::vector<std::vector<uint8_t>> mem(p.buffer_count);
  for (uint32_t i = 0; i < p.buffer_count; i++) {
    mem[i].resize(g.buffer_bytes[i] ? g.buffer_bytes[i] : 1);
    int32_t k = p.buffers[i].input_index;
    if (k >= 0 && inputs[k].size)
      std::memcpy(mem[i].data(), inputs[k].data,
                  inputs[k].size < g.buffer_bytes[i] ? inputs[k].size : g.buffer_bytes[i]);
  }
  std::vector<uint32_t> val(p.inst_count ? p.inst_count : 1);
  uint64_t n[3];
  for (int a = 0; a < 3; a++) n[a] = uint64_t(g.grid[a]) * g.workgroup[a];
  for (uint64_t z = 0; z < n[2]; z++)
    for (uint64_t y = 0; y < n[1]; y++)
      for (uint64_t x = 0; x < n[0]; x++) {
        const uint32_t gid[3] = {uint32_t(x), uint32_t(y), uint32_t(z)};
        invoke(p, g, mem, gid, val);
      }
  if (collect(p, g, mem, out) != VYRE_OK)
    return vyre_error_set(err, VYRE_OUT_OF_MEMORY, 0, "cxxcpu dispatch: out of memory");
  return VYRE_OK;
}

// No exception crosses the C ABI: std::bad_alloc becomes VYRE_OUT_OF_MEMORY.
vyre_status dispatch(vyre_backend *, const vyre_program_ref *program, const vyre_input *inputs,
                     uint32_t input_count, const vyre_dispatch_options *options, vyre_outputs **out,
                     vyre_timing *timing, vyre_error *err) {
  if (!out)
    return vyre_error_set(err, VYRE_INVALID_ARGUMENT, 0, "cxxcpu dispatch: out is NULL. Fix: pass one");
  *out = nullptr;
  vyre_status st = vyre_check_program_ref(program, "cxxcpu dispatch", err);
  if (st != VYRE_OK) return st;
  if (program->pipeline)
    return vyre_error_set(err, VYRE_INVALID_HANDLE, 0,
                          "cxxcpu dispatch: this backend makes no pipelines. Fix: pass the bytes");
  if (options && options->struct_size > offsetof(vyre_dispatch_options, fixpoint_iterations) &&
      options->fixpoint_iterations > 1)
    return vyre_error_set(err, VYRE_UNSUPPORTED, 0,
                          "cxxcpu dispatch: fixpoint iterations are not supported. Fix: dispatch "
                          "once per iteration");
  vyre_program *raw = nullptr;
  if ((st = vyre_program_decode(program->bytes, size_t(program->size), &raw, err)) != VYRE_OK)
    return st;
  Program p(raw, vyre_program_free);
  if ((st = check_claims(*p, err)) != VYRE_OK) return st;
  try {
    st = run(*p, inputs, input_count, options, out, err);
  } catch (const std::bad_alloc &) {
    st = vyre_error_set(err, VYRE_OUT_OF_MEMORY, 0, "cxxcpu dispatch: out of memory");
  }
  if (st == VYRE_OK && timing && timing->struct_size >= offsetof(vyre_timing, wall_ns))
    timing->valid = 0;
  return st;
}

void destroy(vyre_backend *self) { delete reinterpret_cast<Backend *>(self); }

vyre_status device_profile(vyre_backend *, vyre_device_profile *out, vyre_error *err) {
  if (!out || out->struct_size < sizeof(uint32_t))
    return vyre_error_set(err, VYRE_INVALID_ARGUMENT, 0,
                          "cxxcpu device_profile: no profile to fill. Fix: pass one");
  vyre_device_profile p{};
  p.struct_size = out->struct_size;
  p.device_count = 1;
  std::strcpy(p.name, "cxxcpu C++17 interpreter");
  std::strcpy(p.backend_id, kId);
  p.compute_units = 1;
  p.subgroup_size = 32;
  p.max_workgroup_size[0] = p.max_workgroup_size[1] = VYRE_MAX_WORKGROUP_INVOCATIONS;
  p.max_workgroup_size[2] = 64;
  p.max_invocations_per_workgroup = VYRE_MAX_WORKGROUP_INVOCATIONS;
  p.max_workgroups[0] = p.max_workgroups[1] = p.max_workgroups[2] = UINT32_MAX;
  p.capabilities = kCaps;
  std::memcpy(out, &p, out->struct_size < sizeof p ? out->struct_size : sizeof p);
  return VYRE_OK;
}

const vyre_backend_vtable &vtable() {
  static const vyre_backend_vtable vt = [] {
    vyre_backend_vtable v{};
    v.struct_size = sizeof v;
    v.destroy = destroy;
    v.device_profile = device_profile;
    v.dispatch = dispatch;
    v.outputs_free = outputs_free;
    return v;
  }();
  return vt;
}

vyre_status create(const vyre_backend_options *options, vyre_backend **out, vyre_error *err) {
  if (!out) return vyre_error_set(err, VYRE_INVALID_ARGUMENT, 0, "cxxcpu create: out is NULL. Fix: pass one");
  *out = nullptr;
  if (options && options->struct_size >= offsetof(vyre_backend_options, flags) &&
      options->device_ordinal != 0)
    return vyre_error_set(err, VYRE_NO_DEVICE, 0, "cxxcpu: no device %u (it has one). Fix: use device 0",
                          options->device_ordinal);
  auto *b = new (std::nothrow) Backend{};
  if (!b) return vyre_error_set(err, VYRE_OUT_OF_MEMORY, 0, "cxxcpu create: out of memory");
  b->head.struct_size = sizeof b->head;
  b->head.vt = &vtable();
  *out = &b->head;
  return VYRE_OK;
}

// C++17 has no designated initializers: the registration is built once,
// on first use (a function-local static: thread-safe), and never changes.
const vyre_registration &registration() {
  static const vyre_registration reg = [] {
    vyre_registration r{};
    r.struct_size = sizeof r;
    r.abi_major = VYRE_ABI_MAJOR;
    r.abi_minor = VYRE_ABI_MINOR;
    r.id = kId;
    r.version = "1.0";
    r.description = "C++17 CPU backend built by make installcheck";
    r.precedence = 1000;
    r.op_count = kOpCount;
    r.ops = kOps;
    r.capabilities = kCaps;
    r.storage_types = kTypes;
    r.create = create;
    r.op_types = kOpTypes;
    return r;
  }();
  return reg;
}

}  // namespace

VYRE_PLUGIN_EXPORT const vyre_descriptor vyre_plugin_descriptor =
    VYRE_DESCRIPTOR_INIT(0, VYRE_ABI_MINOR, "vyre-cxxcpu 1.0");

VYRE_PLUGIN_EXPORT vyre_status vyre_plugin_entry(uint16_t host_major, uint16_t host_minor,
                                                 const vyre_registration **out, vyre_error *err) {
  if (!out)
    return vyre_error_set(err, VYRE_INVALID_ARGUMENT, 0, "cxxcpu plugin: out is NULL. Fix: pass one");
  *out = nullptr;
  vyre_status st = vyre_check_host_abi("cxxcpu plugin", host_major, host_minor, 0, VYRE_ABI_MINOR, err);
  if (st != VYRE_OK) return st;
  *out = &registration();
  return VYRE_OK;
}
