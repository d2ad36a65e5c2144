/* check_ref.c -- the reference backend (libvyre-ref.so) through its plugin interface: ABI surface, every vtable entry, execution semantics. */
#include "config.h"

#include <dlfcn.h>
#include <elf.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "check_ref.h"

const vyre_registration *tr_reg;
static void *plugin;
static char plugin_path[4096];

/* ------------------------------------------------------------------ */
/* Harness                                                             */
/* ------------------------------------------------------------------ */
static int load_plugin(void) {
  const char *dir = getenv("VYRE_BUILD_DIR");
  snprintf(plugin_path, sizeof plugin_path, "%s/host-stub/ref/.libs/libvyre-ref.so",
           dir && *dir ? dir : ".");
  plugin = dlopen(plugin_path, RTLD_NOW | RTLD_LOCAL);
  if (!plugin) {
    fprintf(stderr, "check_ref: cannot load %s: %s\n", plugin_path, dlerror());
    return -1;
  }
  vyre_plugin_entry_fn entry;
  void *sym = dlsym(plugin, VYRE_PLUGIN_ENTRY_SYMBOL);
  memcpy(&entry, &sym, sizeof entry);
  vyre_error err = VYRE_ERROR_INIT;
  if (!entry || entry(VYRE_ABI_MAJOR, VYRE_ABI_MINOR, &tr_reg, &err) != VYRE_OK) {
    fprintf(stderr, "check_ref: %s has no working entry: %s\n", plugin_path, err.message);
    return -1;
  }
  return 0;
}

vyre_backend *tr_new_backend(void) {
  vyre_backend *be = NULL;
  vyre_error err = VYRE_ERROR_INIT;
  vyre_status st = tr_reg->create(NULL, &be, &err);
  ck_assert_msg(st == VYRE_OK && be, "creating the reference backend failed: %s", err.message);
  return be;
}

void tr_encode(vyre_builder *b, void **bytes, size_t *size) {
  vyre_error err = VYRE_ERROR_INIT;
  vyre_status st = vyre_builder_finish(b, bytes, size, &err);
  vyre_builder_free(b);
  ck_assert_msg(st == VYRE_OK, "encoding the test program failed: %s", err.message);
}

vyre_status tr_dispatch(vyre_backend *be, vyre_builder *b, const vyre_input *inputs,
                        uint32_t input_count, const vyre_dispatch_options *options,
                        vyre_outputs **out, vyre_error *err) {
  void *bytes;
  size_t size;
  tr_encode(b, &bytes, &size);
  vyre_program_ref ref = VYRE_PROGRAM_BYTES(bytes, size);
  vyre_status st = be->vt->dispatch(be, &ref, inputs, input_count, options, out, NULL, err);
  free(bytes);
  return st;
}

/* Dispatch and insist on success. */
vyre_outputs *tr_run_ok(vyre_backend *be, vyre_builder *b, const vyre_input *inputs,
                            uint32_t n, const vyre_dispatch_options *o) {
  vyre_outputs *out = NULL;
  vyre_error err = VYRE_ERROR_INIT;
  vyre_status st = tr_dispatch(be, b, inputs, n, o, &out, &err);
  ck_assert_msg(st == VYRE_OK, "dispatch failed (%s): %s", vyre_status_name(st), err.message);
  ck_assert_ptr_nonnull(out);
  return out;
}

vyre_dispatch_options tr_opts(void) {
  vyre_dispatch_options o;
  memset(&o, 0, sizeof o);
  o.struct_size = sizeof o;
  return o;
}

uint32_t tr_u32_at(const vyre_outputs *o, uint32_t item, uint32_t i) {
  uint32_t v;
  ck_assert_msg((uint64_t)(i + 1) * 4 <= o->items[item].size, "output %u has no element %u",
                item, i);
  memcpy(&v, (const uint8_t *)o->items[item].data + (size_t)i * 4, 4);
  return v;
}

uint64_t tr_u64_at(const vyre_outputs *o, uint32_t item, uint32_t i) {
  uint64_t v;
  ck_assert_msg((uint64_t)(i + 1) * 8 <= o->items[item].size, "output %u has no element %u",
                item, i);
  memcpy(&v, (const uint8_t *)o->items[item].data + (size_t)i * 8, 8);
  return v;
}

uint32_t tr_fbits(float f) {
  uint32_t b;
  memcpy(&b, &f, 4);
  return b;
}

void tr_assert_fix(const vyre_error *err) {
  ck_assert_msg(strstr(err->message, "Fix:") != NULL,
                "error messages say how to fix the problem, got: %s", err->message);
}

/* ------------------------------------------------------------------ */
/* plugin: descriptor, entry, registration, exported symbols           */
/* ------------------------------------------------------------------ */
START_TEST(test_descriptor) {
  const vyre_descriptor *d = dlsym(plugin, VYRE_PLUGIN_DESCRIPTOR_SYMBOL);
  ck_assert_msg(d != NULL, "the plugin exports vyre_plugin_descriptor");
  ck_assert_uint_eq(d->struct_size, sizeof(vyre_descriptor));
  ck_assert_uint_eq(d->magic, VYRE_PLUGIN_MAGIC);
  ck_assert_uint_eq(d->abi_major, VYRE_ABI_MAJOR);
  ck_assert_uint_eq(d->abi_minor_min, 0);
  ck_assert_uint_eq(d->abi_minor_max, VYRE_ABI_MINOR);
  ck_assert_msg(d->release == VYRE_DESCRIPTOR_RELEASE, "the reference is a 1.0.0-or-later build");
  ck_assert_uint_eq(d->registration_size, sizeof(vyre_registration));
  ck_assert_uint_eq(d->vtable_size, sizeof(vyre_backend_vtable));
  ck_assert_str_eq(d->build_id, VYRE_BUILD_ID);
}
END_TEST

START_TEST(test_entry_negotiation) {
  vyre_plugin_entry_fn entry;
  void *sym = dlsym(plugin, VYRE_PLUGIN_ENTRY_SYMBOL);
  memcpy(&entry, &sym, sizeof entry);
  const vyre_registration *reg = NULL;
  vyre_error err = VYRE_ERROR_INIT;
  /* A newer host minor negotiates down to ours. */
  ck_assert_int_eq(entry(VYRE_ABI_MAJOR, VYRE_ABI_MINOR + 7, &reg, &err), VYRE_OK);
  ck_assert_uint_eq(reg->abi_minor, VYRE_ABI_MINOR);
  ck_assert_uint_eq(reg->abi_major, VYRE_ABI_MAJOR);
  /* An older host gets the same immutable registration: its abi_minor is
   * the layout's, the host records the negotiated minor itself. */
  const vyre_registration *newest = reg;
  ck_assert_int_eq(entry(VYRE_ABI_MAJOR, 0, &reg, &err), VYRE_OK);
  ck_assert_ptr_eq(reg, newest);
  ck_assert_uint_eq(reg->abi_minor, VYRE_ABI_MINOR);
  /* Another major is refused, with a Fix, and *out cleared. */
  reg = tr_reg;
  ck_assert_int_eq(entry(VYRE_ABI_MAJOR + 1, 0, &reg, &err), VYRE_ABI_MISMATCH);
  ck_assert_ptr_null(reg);
  ck_assert_int_eq(err.status, VYRE_ABI_MISMATCH);
  tr_assert_fix(&err);
  ck_assert_msg(strstr(err.message, "reference plugin: the host speaks ABI ") &&
                    strstr(err.message, "(majors must match)"),
                "vyre_check_host_abi's wording: %s", err.message);
  ck_assert_int_eq(entry(0, 0, &reg, NULL), VYRE_ABI_MISMATCH);
  ck_assert_int_eq(entry(VYRE_ABI_MAJOR, 0, NULL, &err), VYRE_INVALID_ARGUMENT);
}
END_TEST

START_TEST(test_registration) {
  const vyre_registration *r = tr_reg;
  ck_assert_uint_eq(r->struct_size, sizeof(vyre_registration));
  ck_assert_str_eq(r->id, "reference");
  ck_assert_int_eq(r->precedence, 900);
  ck_assert_ptr_nonnull(r->version);
  ck_assert_ptr_nonnull(r->description);
  ck_assert_ptr_nonnull(r->create);
  /* Every op of the format, each once. */
  uint32_t count;
  const vyre_op_info *ops = vyre_op_all(&count);
  ck_assert_uint_eq(r->op_count, count);
  for (uint32_t i = 0; i < count; i++) {
    int seen = 0;
    for (uint32_t k = 0; k < r->op_count; k++) seen += r->ops[k] == ops[i].id;
    ck_assert_msg(seen == 1, "op %s is listed %d times (want once)", ops[i].mnemonic, seen);
  }
  for (uint32_t t = VYRE_T_BOOL; t < VYRE_T_COUNT_; t++)
    ck_assert_msg(!(r->storage_types & (1ull << t)) == !!vyre_type_matrix_use(t),
                  "storage type %s is supported (matrix types are none)", vyre_type_name(t));
  ck_assert_msg(!(r->storage_types & 1u), "void is not a storage type");
  uint64_t want = VYRE_CAP_F16 | VYRE_CAP_BF16 | VYRE_CAP_SUBGROUP | VYRE_CAP_ATOMIC64 |
                  VYRE_CAP_GRID_BARRIER | VYRE_CAP_ASYNC | VYRE_CAP_RESIDENT |
                  VYRE_CAP_SEQUENCE | VYRE_CAP_TIMING | VYRE_CAP_PIPELINE | VYRE_CAP_FIXPOINT |
                  VYRE_CAP_TRAP | VYRE_CAP_TRANSCENDENTAL | VYRE_CAP_WORKGROUP_MEMORY |
                  VYRE_CAP_ATOMICS | VYRE_CAP_BARRIER | VYRE_CAP_INT64 | VYRE_CAP_OUT_RANGE |
                  VYRE_CAP_TENSOR_CORES | VYRE_CAP_INDIRECT_DISPATCH | VYRE_CAP_CORRECTLY_ROUNDED;
  ck_assert_msg(r->capabilities == want, "capabilities 0x%llx, expected 0x%llx (no graph replay)",
                (unsigned long long)r->capabilities, (unsigned long long)want);
}
END_TEST

/* Defined, visible dynamic symbols of an ELF64 shared object. */
static int exported_symbols(const char *path, char names[][64], int max) {
  FILE *f = fopen(path, "rb");
  if (!f) return -1;
  fseek(f, 0, SEEK_END);
  long size = ftell(f);
  fseek(f, 0, SEEK_SET);
  unsigned char *buf = malloc((size_t)size);
  int n = -1;
  if (!buf || fread(buf, 1, (size_t)size, f) != (size_t)size) goto done;
  const Elf64_Ehdr *eh = (const Elf64_Ehdr *)buf;
  if (memcmp(eh->e_ident, ELFMAG, SELFMAG) != 0 || eh->e_ident[EI_CLASS] != ELFCLASS64) goto done;
  const Elf64_Shdr *sh = (const Elf64_Shdr *)(buf + eh->e_shoff);
  n = 0;
  for (int i = 0; i < eh->e_shnum; i++) {
    if (sh[i].sh_type != SHT_DYNSYM) continue;
    const Elf64_Sym *syms = (const Elf64_Sym *)(buf + sh[i].sh_offset);
    const char *strs = (const char *)(buf + sh[sh[i].sh_link].sh_offset);
    size_t count = sh[i].sh_size / sizeof(Elf64_Sym);
    for (size_t k = 0; k < count; k++) {
      int bind = ELF64_ST_BIND(syms[k].st_info), type = ELF64_ST_TYPE(syms[k].st_info);
      if (syms[k].st_shndx == SHN_UNDEF || (bind != STB_GLOBAL && bind != STB_WEAK)) continue;
      if (type == STT_SECTION || type == STT_FILE) continue;
      if (ELF64_ST_VISIBILITY(syms[k].st_other) != STV_DEFAULT) continue;
      if (n < max) snprintf(names[n], 64, "%s", strs + syms[k].st_name);
      n++;
    }
  }
done:
  free(buf);
  fclose(f);
  return n;
}

START_TEST(test_exports_only_two_symbols) {
  char names[16][64];
  int n = exported_symbols(plugin_path, names, 16);
  ck_assert_msg(n >= 0, "cannot read the ELF symbols of %s", plugin_path);
  for (int i = 0; i < n && i < 16; i++)
    ck_assert_msg(!strcmp(names[i], "vyre_plugin_descriptor") ||
                      !strcmp(names[i], "vyre_plugin_entry"),
                  "the plugin exports '%s'; it must export only the descriptor and the entry",
                  names[i]);
  ck_assert_msg(n == 2, "the plugin exports %d symbols, expected exactly 2", n);
  /* Internal and format-library names stay hidden. */
  ck_assert_ptr_null(dlsym(plugin, "ref_backend_create"));
  ck_assert_ptr_null(dlsym(plugin, "ref_execute"));
  ck_assert_ptr_null(dlsym(plugin, "vyre_program_decode"));
  ck_assert_ptr_null(dlsym(plugin, "vyre_handles_insert"));
}
END_TEST

START_TEST(test_create_options) {
  vyre_backend *be = NULL;
  vyre_error err = VYRE_ERROR_INIT;
  vyre_backend_options o = {sizeof o, 1, 0, 0, NULL};
  ck_assert_int_eq(tr_reg->create(&o, &be, &err), VYRE_NO_DEVICE);
  ck_assert_ptr_null(be);
  ck_assert_msg(strstr(err.message, "ordinal 1") != NULL, "names the ordinal: %s", err.message);
  tr_assert_fix(&err);
  o.device_ordinal = 0;
  o.flags = 4;
  ck_assert_int_eq(tr_reg->create(&o, &be, &err), VYRE_INVALID_ARGUMENT);
  ck_assert_int_eq(tr_reg->create(NULL, NULL, &err), VYRE_INVALID_ARGUMENT);
  o.flags = 0;
  ck_assert_int_eq(tr_reg->create(&o, &be, &err), VYRE_OK);
  ck_assert_uint_eq(be->struct_size, sizeof(vyre_backend));
  ck_assert_uint_eq(be->vt->struct_size, sizeof(vyre_backend_vtable));
  /* Every entry is implemented. */
  void (*const *fns)(void) = (void (*const *)(void))((const char *)be->vt + 8);
  for (size_t i = 0; i < (sizeof(vyre_backend_vtable) - 8) / sizeof(void (*)(void)); i++)
    ck_assert_msg(fns[i] != NULL, "vtable entry %zu is NULL", i);
  const vyre_backend_vtable *vt = be->vt;
  /* No extensions: refused with a reason, *out cleared. */
  const void *ext = &ext;
  ck_assert_int_eq(vt->get_extension(be, "vyre.cuda.interop", 1, &ext, &err), VYRE_UNSUPPORTED);
  ck_assert_ptr_null(ext);
  ck_assert_msg(strstr(err.message, "Fix:") != NULL, "%s", err.message);
  vt->destroy(be);
  vt->destroy(NULL); /* accepted */
}
END_TEST

/* ------------------------------------------------------------------ */
/* core: dispatch, buffers, control flow                               */
/* ------------------------------------------------------------------ */

/* y[i] = a * x[i] + y[i] over count-0 (input-sized) buffers. */
vyre_builder *tr_saxpy_program(float a) {
  vyre_builder *b = vyre_builder_new(64, 1, 1);
  uint32_t x = vyre_b_buffer(b, "x", UINT32_MAX, VYRE_ACCESS_READ_ONLY, VYRE_T_F32, 0, 0);
  uint32_t y = vyre_b_buffer(b, "y", UINT32_MAX, VYRE_ACCESS_READ_WRITE, VYRE_T_F32, 0, 0);
  uint32_t g = vyre_b_gid(b, 0);
  vyre_b_if(b, vyre_b_bin(b, VYRE_OP_LT, g, vyre_b_buflen(b, y)));
  uint32_t ax = vyre_b_bin(b, VYRE_OP_MUL, vyre_b_f32(b, a), vyre_b_load(b, x, g));
  vyre_b_store(b, y, g, vyre_b_bin(b, VYRE_OP_ADD, ax, vyre_b_load(b, y, g)));
  vyre_b_end(b);
  return b;
}

START_TEST(test_saxpy) {
  vyre_backend *be = tr_new_backend();
  enum { N = 1000 };
  float *x = malloc(N * sizeof *x), *y = malloc(N * sizeof *y);
  for (int i = 0; i < N; i++) {
    x[i] = (float)i;
    y[i] = (float)(2 * i);
  }
  vyre_input in[2] = {{x, N * sizeof *x}, {y, N * sizeof *y}};
  vyre_timing t = {sizeof t, 0, 0, 0, 0, 0};
  void *bytes;
  size_t size;
  tr_encode(tr_saxpy_program(3.0f), &bytes, &size);
  vyre_program_ref ref = VYRE_PROGRAM_BYTES(bytes, size);
  vyre_outputs *out = NULL;
  vyre_error err = VYRE_ERROR_INIT;
  ck_assert_int_eq(be->vt->dispatch(be, &ref, in, 2, NULL, &out, &t, &err), VYRE_OK);
  ck_assert_uint_eq(out->struct_size, sizeof *out);
  ck_assert_uint_eq(out->count, 1);
  ck_assert_uint_eq(out->items[0].size, N * sizeof(float));
  for (int i = 0; i < N; i++)
    ck_assert_msg(tr_u32_at(out, 0, (uint32_t)i) == tr_fbits((float)(5 * i)), "y[%d] = 3x + y = %d", i,
                  5 * i);
  ck_assert_uint_eq(t.valid, VYRE_TIMING_WALL | VYRE_TIMING_DEVICE | VYRE_TIMING_ENQUEUE |
                                 VYRE_TIMING_WAIT);
  ck_assert_msg(t.wall_ns >= t.device_ns && t.wall_ns >= t.enqueue_ns, "wall time covers the rest");
  /* The caller's input was copied, not written. */
  ck_assert_msg(y[7] == 14.0f, "inputs are borrowed read-only");
  be->vt->outputs_free(be, out);
  be->vt->outputs_free(be, NULL);
  /* A timing record of an older, smaller layout is written only so far. */
  unsigned char small[sizeof(vyre_timing)];
  memset(small, 0xab, sizeof small);
  vyre_timing *ts = (vyre_timing *)small;
  ts->struct_size = 16;
  ck_assert_int_eq(be->vt->dispatch(be, &ref, in, 2, NULL, &out, ts, &err), VYRE_OK);
  ck_assert_uint_eq(ts->valid & VYRE_TIMING_WALL, VYRE_TIMING_WALL);
  for (size_t i = 16; i < sizeof small; i++)
    ck_assert_msg(small[i] == 0xab, "byte %zu past the caller's struct_size was written", i);
  be->vt->outputs_free(be, out);
  free(bytes);
  free(x);
  free(y);
  be->vt->destroy(be);
}
END_TEST

/* Roles: rw in/out, rw+output (zeroed, backend-allocated), wo, out_range,
 * buflen of input-sized buffers, outputs in declaration order. */
START_TEST(test_roles_and_ranges) {
  vyre_backend *be = tr_new_backend();
  vyre_builder *b = vyre_builder_new(8, 1, 1);
  uint32_t io = vyre_b_buffer(b, "io", UINT32_MAX, VYRE_ACCESS_READ_WRITE, VYRE_T_U32, 0, 0);
  uint32_t in = vyre_b_buffer(b, "in", UINT32_MAX, VYRE_ACCESS_UNIFORM, VYRE_T_U32, 0, 0);
  uint32_t acc = vyre_b_buffer(b, "acc", UINT32_MAX, VYRE_ACCESS_READ_WRITE, VYRE_T_U32, 4,
                               VYRE_BUF_OUTPUT);
  uint32_t wo = vyre_b_buffer(b, "wo", UINT32_MAX, VYRE_ACCESS_WRITE_ONLY, VYRE_T_U32, 16, 0);
  vyre_b_buffer_range(b, wo, 8, 12); /* elements 2..4 */
  uint32_t g = vyre_b_gid(b, 0);
  vyre_b_if(b, vyre_b_bin(b, VYRE_OP_LT, g, vyre_b_buflen(b, io)));
  vyre_b_store(b, io, g, vyre_b_bin(b, VYRE_OP_MUL, vyre_b_load(b, io, g), vyre_b_u32(b, 2)));
  vyre_b_end(b);
  /* acc[0] counts the invocations (it starts zeroed); acc[1] = buflen(in). */
  vyre_b_atomic(b, VYRE_OP_ATOMIC_ADD, acc, vyre_b_u32(b, 0), vyre_b_u32(b, 1), VYRE_ORDER_RELAXED);
  vyre_b_store(b, acc, vyre_b_u32(b, 1), vyre_b_buflen(b, in));
  vyre_b_store(b, wo, g, vyre_b_bin(b, VYRE_OP_ADD, g, vyre_b_u32(b, 100)));
  uint32_t io_data[5] = {1, 2, 3, 4, 5}, in_data[3] = {0, 0, 0};
  vyre_input inputs[2] = {{io_data, sizeof io_data}, {in_data, sizeof in_data}};
  vyre_outputs *out = tr_run_ok(be, b, inputs, 2, NULL);
  ck_assert_uint_eq(out->count, 3);
  ck_assert_uint_eq(out->items[0].size, sizeof io_data);
  for (uint32_t i = 0; i < 5; i++) ck_assert_uint_eq(tr_u32_at(out, 0, i), 2 * (i + 1));
  /* 16 elements (the largest output) at width 8: 2 workgroups, 16 invocations. */
  ck_assert_uint_eq(out->items[1].size, 16);
  ck_assert_uint_eq(tr_u32_at(out, 1, 0), 16);
  ck_assert_uint_eq(tr_u32_at(out, 1, 1), 3);
  ck_assert_uint_eq(tr_u32_at(out, 1, 2), 0);
  ck_assert_uint_eq(out->items[2].size, 12);
  for (uint32_t i = 0; i < 3; i++) ck_assert_uint_eq(tr_u32_at(out, 2, i), 102 + i);
  be->vt->outputs_free(be, out);
  be->vt->destroy(be);
}
END_TEST

START_TEST(test_dispatch_into) {
  vyre_backend *be = tr_new_backend();
  void *bytes;
  size_t size;
  tr_encode(tr_saxpy_program(2.0f), &bytes, &size);
  vyre_program_ref ref = VYRE_PROGRAM_BYTES(bytes, size);
  float x[4] = {1, 2, 3, 4}, y[4] = {10, 20, 30, 40}, dst[5];
  vyre_input in[2] = {{x, sizeof x}, {y, sizeof y}};
  vyre_error err = VYRE_ERROR_INIT;
  /* Too small: INVALID_ARGUMENT naming the size, nothing written. */
  memset(dst, 0x5a, sizeof dst);
  vyre_output_slot slot = {dst, 12, 0};
  ck_assert_int_eq(be->vt->dispatch_into(be, &ref, in, 2, NULL, &slot, 1, NULL, &err),
                   VYRE_INVALID_ARGUMENT);
  ck_assert_msg(strstr(err.message, "16") != NULL, "the error names the 16 bytes needed: %s",
                err.message);
  tr_assert_fix(&err);
  for (int i = 0; i < 5; i++) ck_assert_uint_eq(tr_fbits(dst[i]), 0x5a5a5a5au);
  ck_assert_uint_eq(slot.size, 0);
  ck_assert_int_eq(be->vt->dispatch_into(be, &ref, in, 2, NULL, &slot, 2, NULL, &err),
                   VYRE_INVALID_ARGUMENT);
  ck_assert_int_eq(be->vt->dispatch_into(be, &ref, in, 2, NULL, NULL, 1, NULL, &err),
                   VYRE_INVALID_ARGUMENT);
  slot.capacity = sizeof dst;
  vyre_timing t = {sizeof t, 0, 0, 0, 0, 0};
  ck_assert_int_eq(be->vt->dispatch_into(be, &ref, in, 2, NULL, &slot, 1, &t, &err), VYRE_OK);
  ck_assert_uint_eq(slot.size, 16);
  for (int i = 0; i < 4; i++) ck_assert_msg(dst[i] == 2 * x[i] + y[i], "dst[%d]", i);
  ck_assert_uint_eq(tr_fbits(dst[4]), 0x5a5a5a5au);
  ck_assert_uint_ne(t.valid, 0);
  free(bytes);
  be->vt->destroy(be);
}
END_TEST

START_TEST(test_loops) {
  vyre_backend *be = tr_new_backend();
  vyre_builder *b = vyre_builder_new(1, 1, 1);
  uint32_t o = vyre_b_buffer(b, "o", UINT32_MAX, VYRE_ACCESS_WRITE_ONLY, VYRE_T_I32, 4, 0);
  uint32_t sum = vyre_b_local(b, VYRE_T_I32), i = vyre_b_local(b, VYRE_T_I32);
  uint32_t j = vyre_b_local(b, VYRE_T_U32), k = vyre_b_local(b, VYRE_T_U32);
  uint32_t cnt = vyre_b_local(b, VYRE_T_I32), m = vyre_b_local(b, VYRE_T_I32);
  vyre_b_if(b, vyre_b_bin(b, VYRE_OP_EQ, vyre_b_gid(b, 0), vyre_b_u32(b, 0)));
  /* sum of -3..1 (signed bounds) = -5 */
  vyre_b_let(b, sum, vyre_b_i32(b, 0));
  vyre_b_loop(b, i, vyre_b_i32(b, -3), vyre_b_i32(b, 2));
  vyre_b_assign(b, sum, vyre_b_bin(b, VYRE_OP_ADD, vyre_b_get(b, sum), vyre_b_get(b, i)));
  vyre_b_end(b);
  vyre_b_store(b, o, vyre_b_u32(b, 0), vyre_b_get(b, sum));
  /* start >= end runs nothing, also for u32 bounds that would be negative as i32 */
  vyre_b_let(b, cnt, vyre_b_i32(b, 0));
  vyre_b_loop(b, j, vyre_b_u32(b, 0x80000000u), vyre_b_u32(b, 5));
  vyre_b_assign(b, cnt, vyre_b_bin(b, VYRE_OP_ADD, vyre_b_get(b, cnt), vyre_b_i32(b, 1)));
  vyre_b_end(b);
  vyre_b_loop(b, k, vyre_b_u32(b, 5), vyre_b_u32(b, 5));
  vyre_b_assign(b, cnt, vyre_b_bin(b, VYRE_OP_ADD, vyre_b_get(b, cnt), vyre_b_i32(b, 1)));
  vyre_b_end(b);
  vyre_b_store(b, o, vyre_b_u32(b, 1), vyre_b_get(b, cnt));
  /* nested: 4 x 3 with an if/else inside: count of (a+b) odd = 6 */
  vyre_b_let(b, m, vyre_b_i32(b, 0));
  uint32_t a = vyre_b_local(b, VYRE_T_U32), c = vyre_b_local(b, VYRE_T_U32);
  vyre_b_loop(b, a, vyre_b_u32(b, 0), vyre_b_u32(b, 4));
  vyre_b_loop(b, c, vyre_b_u32(b, 0), vyre_b_u32(b, 3));
  uint32_t odd = vyre_b_bin(b, VYRE_OP_AND, vyre_b_bin(b, VYRE_OP_ADD, vyre_b_get(b, a), vyre_b_get(b, c)),
                            vyre_b_u32(b, 1));
  vyre_b_if(b, vyre_b_bin(b, VYRE_OP_EQ, odd, vyre_b_u32(b, 1)));
  vyre_b_assign(b, m, vyre_b_bin(b, VYRE_OP_ADD, vyre_b_get(b, m), vyre_b_i32(b, 1)));
  vyre_b_else(b);
  vyre_b_assign(b, m, vyre_b_bin(b, VYRE_OP_ADD, vyre_b_get(b, m), vyre_b_i32(b, 0)));
  vyre_b_end(b);
  vyre_b_end(b);
  vyre_b_end(b);
  vyre_b_store(b, o, vyre_b_u32(b, 2), vyre_b_get(b, m));
  /* a block is a plain scope */
  vyre_b_block(b);
  vyre_b_store(b, o, vyre_b_u32(b, 3), vyre_b_i32(b, 77));
  vyre_b_end(b);
  vyre_b_end(b);
  vyre_outputs *out = tr_run_ok(be, b, NULL, 0, NULL);
  ck_assert_int_eq((int32_t)tr_u32_at(out, 0, 0), -5);
  ck_assert_int_eq((int32_t)tr_u32_at(out, 0, 1), 0);
  ck_assert_int_eq((int32_t)tr_u32_at(out, 0, 2), 6);
  ck_assert_int_eq((int32_t)tr_u32_at(out, 0, 3), 77);
  be->vt->outputs_free(be, out);
  be->vt->destroy(be);
}
END_TEST

START_TEST(test_return) {
  vyre_backend *be = tr_new_backend();
  vyre_builder *b = vyre_builder_new(16, 1, 1);
  uint32_t o = vyre_b_buffer(b, "o", UINT32_MAX, VYRE_ACCESS_WRITE_ONLY, VYRE_T_U32, 64, 0);
  uint32_t g = vyre_b_gid(b, 0);
  vyre_b_if(b, vyre_b_bin(b, VYRE_OP_EQ, vyre_b_bin(b, VYRE_OP_AND, g, vyre_b_u32(b, 1)), vyre_b_u32(b, 1)));
  vyre_b_return(b);
  vyre_b_end(b);
  vyre_b_store(b, o, g, vyre_b_u32(b, 7));
  vyre_b_return(b);
  vyre_b_store(b, o, g, vyre_b_u32(b, 9)); /* never runs */
  vyre_outputs *out = tr_run_ok(be, b, NULL, 0, NULL);
  for (uint32_t i = 0; i < 64; i++)
    ck_assert_msg(tr_u32_at(out, 0, i) == (i & 1 ? 0u : 7u), "o[%u]: odd invocations returned", i);
  be->vt->outputs_free(be, out);
  be->vt->destroy(be);
}
END_TEST

/* Out of bounds: a load yields the typed zero, a store does nothing, an
 * atomic does nothing and yields 0. */
START_TEST(test_out_of_bounds) {
  vyre_backend *be = tr_new_backend();
  vyre_builder *b = vyre_builder_new(1, 1, 1);
  uint32_t f = vyre_b_buffer(b, "f", UINT32_MAX, VYRE_ACCESS_READ_ONLY, VYRE_T_F32, 0, 0);
  uint32_t m = vyre_b_buffer(b, "m", UINT32_MAX, VYRE_ACCESS_READ_WRITE, VYRE_T_I32, 0, 0);
  uint32_t o = vyre_b_buffer(b, "o", UINT32_MAX, VYRE_ACCESS_WRITE_ONLY, VYRE_T_U32, 4, 0);
  uint32_t wg = vyre_b_buffer(b, "s", UINT32_MAX, VYRE_ACCESS_WORKGROUP, VYRE_T_U32, 4, 0);
  vyre_b_if(b, vyre_b_bin(b, VYRE_OP_EQ, vyre_b_gid(b, 0), vyre_b_u32(b, 0)));
  uint32_t big = vyre_b_u32(b, 0xffffffffu), two = vyre_b_u32(b, 2);
  vyre_b_store(b, o, vyre_b_u32(b, 0), vyre_b_cast(b, VYRE_T_U32, vyre_b_bin(b, VYRE_OP_EQ,
               vyre_b_load(b, f, two), vyre_b_f32(b, 0.0f))));
  vyre_b_store(b, o, vyre_b_u32(b, 1), vyre_b_cast(b, VYRE_T_U32, vyre_b_load(b, m, big)));
  vyre_b_store(b, m, two, vyre_b_i32(b, 99));
  vyre_b_store(b, m, big, vyre_b_i32(b, 99));
  uint32_t old = vyre_b_atomic(b, VYRE_OP_ATOMIC_ADD, m, two, vyre_b_i32(b, 5), VYRE_ORDER_SEQ_CST);
  vyre_b_store(b, o, vyre_b_u32(b, 2), vyre_b_cast(b, VYRE_T_U32, old));
  vyre_b_store(b, wg, vyre_b_u32(b, 4), vyre_b_u32(b, 5));
  uint32_t wold = vyre_b_atomic(b, VYRE_OP_ATOMIC_OR, wg, vyre_b_u32(b, 4), vyre_b_u32(b, 1),
                                VYRE_ORDER_RELAXED);
  vyre_b_store(b, o, vyre_b_u32(b, 3), vyre_b_bin(b, VYRE_OP_ADD, wold, vyre_b_load(b, wg, vyre_b_u32(b, 4))));
  vyre_b_end(b);
  float fv[2] = {-1.0f, 2.0f};
  int32_t mv[2] = {11, 22};
  vyre_input in[2] = {{fv, sizeof fv}, {mv, sizeof mv}};
  vyre_outputs *out = tr_run_ok(be, b, in, 2, NULL);
  ck_assert_uint_eq(out->count, 2);
  ck_assert_uint_eq(out->items[0].size, sizeof mv);
  ck_assert_msg(tr_u64_at(out, 0, 0) == ((uint64_t)22 << 32 | 11), "m unchanged by OOB store/atomic");
  ck_assert_uint_eq(tr_u32_at(out, 1, 0), 1); /* OOB f32 load == +0.0 */
  ck_assert_uint_eq(tr_u32_at(out, 1, 1), 0);
  ck_assert_uint_eq(tr_u32_at(out, 1, 2), 0);
  ck_assert_uint_eq(tr_u32_at(out, 1, 3), 0);
  be->vt->outputs_free(be, out);
  be->vt->destroy(be);
}
END_TEST

/* Load widening and store narrowing of every storage type. */
typedef struct conv_case {
  vyre_type storage;
  int store; /* 0: load storage -> compute type; 1: store compute -> storage */
  uint32_t n;
  uint64_t in[16];
  uint64_t want[16];
} conv_case;

static const conv_case conv_cases[] = {
    {VYRE_T_U8, 0, 4, {0x00, 0x7f, 0x80, 0xff}, {0, 0x7f, 0x80, 0xff}},
    {VYRE_T_I8, 0, 4, {0x00, 0x7f, 0x80, 0xff}, {0, 0x7f, 0xffffff80, 0xffffffff}},
    {VYRE_T_U16, 0, 4, {0, 0x7fff, 0x8000, 0xffff}, {0, 0x7fff, 0x8000, 0xffff}},
    {VYRE_T_I16, 0, 4, {0, 0x7fff, 0x8000, 0xffff}, {0, 0x7fff, 0xffff8000, 0xffffffff}},
    {VYRE_T_U64, 0, 2, {0xffffffffffffffffull, 1}, {0xffffffffffffffffull, 1}},
    {VYRE_T_I64, 0, 1, {0x8000000000000000ull}, {0x8000000000000000ull}},
    {VYRE_T_F16, 0, 9,
     {0x3c00, 0x0001, 0x7c00, 0xfc00, 0x7e01, 0xfe00, 0x8000, 0x7bff, 0x8001},
     {0x3f800000, 0x33800000, 0x7f800000, 0xff800000, 0x7fc00000, 0x7fc00000, 0x80000000,
      0x477fe000, 0xb3800000}},
    {VYRE_T_BF16, 0, 6, {0x3f80, 0x0001, 0x8001, 0x7f81, 0xff80, 0x0080},
     {0x3f800000, 0, 0x80000000, 0x7fc00000, 0xff800000, 0x00800000}},
    {VYRE_T_F32, 0, 4, {0xffffffff, 0x00000001, 0x807fffff, 0x3f800000},
     {0x7fc00000, 0, 0x80000000, 0x3f800000}},
    {VYRE_T_BOOL, 0, 4, {0, 1, 2, 0x80000000}, {0, 1, 1, 1}},
    {VYRE_T_U8, 1, 4, {0x1ff, 0x100, 0x7f, 0xffffffff}, {0xff, 0x00, 0x7f, 0xff}},
    {VYRE_T_I8, 1, 4, {0xffffffff, 0x80, 0xffffff80, 0x17f}, {0xff, 0x80, 0x80, 0x7f}},
    {VYRE_T_U16, 1, 3, {0x12345, 0xffff, 0x10000}, {0x2345, 0xffff, 0}},
    {VYRE_T_I16, 1, 3, {0xffffffff, 0x8000, 0x12345}, {0xffff, 0x8000, 0x2345}},
    {VYRE_T_F16, 1, 13,
     {0x3f800000, 0x477ff000, 0x477fef00, 0x33800000, 0x33000000, 0x33400000, 0x7fc00000,
      0x80000000, 0xff800000, 0x3f801000, 0x3f803000, 0x7f7fffff, 0xb3000000},
     {0x3c00, 0x7c00, 0x7bff, 0x0001, 0x0000, 0x0001, 0x7e00, 0x8000, 0xfc00, 0x3c00, 0x3c02,
      0x7c00, 0x8000}},
    {VYRE_T_BF16, 1, 8,
     {0x3f800000, 0x3f808000, 0x3f818000, 0x3f808001, 0x7fc00000, 0x7f7fffff, 0x80000000,
      0xff800000},
     {0x3f80, 0x3f80, 0x3f82, 0x3f81, 0x7fc0, 0x7f80, 0x8000, 0xff80}},
    {VYRE_T_BOOL, 1, 2, {0, 1}, {0, 1}},
};

START_TEST(test_load_store_conversions) {
  vyre_backend *be = tr_new_backend();
  for (size_t c = 0; c < sizeof conv_cases / sizeof conv_cases[0]; c++) {
    const conv_case *k = &conv_cases[c];
    uint32_t compute = vyre_type_compute(k->storage);
    uint32_t src_t = k->store ? compute : k->storage, dst_t = k->store ? k->storage : compute;
    uint32_t ss = vyre_type_size(src_t), ds = vyre_type_size(dst_t);
    vyre_builder *b = vyre_builder_new(4, 1, 1);
    uint32_t s = vyre_b_buffer(b, "s", UINT32_MAX, VYRE_ACCESS_READ_ONLY, src_t, 0, 0);
    uint32_t d = vyre_b_buffer(b, "d", UINT32_MAX, VYRE_ACCESS_WRITE_ONLY, dst_t, k->n, 0);
    uint32_t g = vyre_b_gid(b, 0);
    vyre_b_store(b, d, g, vyre_b_load(b, s, g));
    uint8_t src[128];
    for (uint32_t i = 0; i < k->n; i++) memcpy(src + i * ss, &k->in[i], ss); /* little-endian */
    vyre_input in = {src, (uint64_t)k->n * ss};
    vyre_outputs *out = tr_run_ok(be, b, &in, 1, NULL);
    ck_assert_uint_eq(out->items[0].size, (uint64_t)k->n * ds);
    for (uint32_t i = 0; i < k->n; i++) {
      uint64_t got = 0;
      memcpy(&got, (uint8_t *)out->items[0].data + i * ds, ds);
      ck_assert_msg(got == k->want[i], "%s %s element %u: 0x%llx -> 0x%llx, expected 0x%llx",
                    k->store ? "store to" : "load from", vyre_type_name(k->storage), i,
                    (unsigned long long)k->in[i], (unsigned long long)got,
                    (unsigned long long)k->want[i]);
    }
    be->vt->outputs_free(be, out);
  }
  be->vt->destroy(be);
}
END_TEST

/* Every atomic over every type: the old value comes back, memory updates. */
typedef struct atomic_case {
  vyre_op op;
  vyre_type t;
  uint64_t init, value, desired, old, now;
} atomic_case;

#define AC(op, t, init, v, d, old, now) {VYRE_OP_ATOMIC_##op, VYRE_T_##t, init, v, d, old, now}
static const atomic_case atomic_cases[] = {
    AC(ADD, U32, 0xffffffff, 2, 0, 0xffffffff, 1),
    AC(AND, U32, 0xf0, 0x3c, 0, 0xf0, 0x30),
    AC(OR, U32, 0xf0, 0x3c, 0, 0xf0, 0xfc),
    AC(XOR, U32, 0xf0, 0x3c, 0, 0xf0, 0xcc),
    AC(MIN, U32, 5, 3, 0, 5, 3),
    AC(MIN, U32, 5, 0xffffffff, 0, 5, 5),
    AC(MAX, U32, 5, 0xffffffff, 0, 5, 0xffffffff),
    AC(EXCHANGE, U32, 7, 9, 0, 7, 9),
    AC(CAS, U32, 7, 7, 9, 7, 9),
    AC(CAS, U32, 7, 8, 9, 7, 7),
    AC(ADD, I32, 0x7fffffff, 1, 0, 0x7fffffff, 0x80000000),
    AC(MIN, I32, 5, 0xffffffff, 0, 5, 0xffffffff),
    AC(MIN, I32, 0x7fffffff, 0x80000000, 0, 0x7fffffff, 0x80000000),
    AC(MAX, I32, 0xfffffffb, 3, 0, 0xfffffffb, 3),
    AC(MAX, I32, 0x80000000, 0xffffffff, 0, 0x80000000, 0xffffffff),
    AC(XOR, I32, 0xffffffff, 0x0f0f0f0f, 0, 0xffffffff, 0xf0f0f0f0),
    AC(CAS, I32, 0xffffffff, 0xffffffff, 0x80000000, 0xffffffff, 0x80000000),
    AC(ADD, U64, 0xffffffffffffffffull, 2, 0, 0xffffffffffffffffull, 1),
    AC(ADD, U64, 0xffffffff, 1, 0, 0xffffffff, 0x100000000ull),
    AC(MAX, U64, 1, 0x8000000000000000ull, 0, 1, 0x8000000000000000ull),
    AC(MIN, U64, 0x100000000ull, 0xffffffff, 0, 0x100000000ull, 0xffffffff),
    AC(AND, U64, 0xff000000000000ffull, 0xf0000000000000f0ull, 0, 0xff000000000000ffull,
       0xf0000000000000f0ull),
    AC(OR, U64, 0x1, 0x8000000000000000ull, 0, 1, 0x8000000000000001ull),
    AC(CAS, U64, 0x100000000ull, 0x100000000ull, 5, 0x100000000ull, 5),
    AC(CAS, U64, 0x100000000ull, 0, 5, 0x100000000ull, 0x100000000ull),
    AC(MIN, I64, 0, 0x8000000000000000ull, 0, 0, 0x8000000000000000ull),
    AC(MAX, I64, 0x8000000000000000ull, 0xffffffffffffffffull, 0, 0x8000000000000000ull,
       0xffffffffffffffffull),
    AC(EXCHANGE, I64, 0xffffffffffffffffull, 3, 0, 0xffffffffffffffffull, 3),
    AC(XOR, U64, 0xffffffffffffffffull, 0xffffffff00000000ull, 0, 0xffffffffffffffffull,
       0xffffffffull),
};

START_TEST(test_atomics_every_op) {
  vyre_backend *be = tr_new_backend();
  for (size_t c = 0; c < sizeof atomic_cases / sizeof atomic_cases[0]; c++) {
    const atomic_case *k = &atomic_cases[c];
    uint32_t es = vyre_type_size(k->t);
    vyre_builder *b = vyre_builder_new(1, 1, 1);
    uint32_t m = vyre_b_buffer(b, "m", UINT32_MAX, VYRE_ACCESS_READ_WRITE, k->t, 2, 0);
    uint32_t r = vyre_b_buffer(b, "r", UINT32_MAX, VYRE_ACCESS_WRITE_ONLY, k->t, 1, 0);
    vyre_b_if(b, vyre_b_bin(b, VYRE_OP_EQ, vyre_b_gid(b, 0), vyre_b_u32(b, 0)));
    uint32_t v = vyre_b_const(b, k->t, k->value), old;
    if (k->op == VYRE_OP_ATOMIC_CAS)
      old = vyre_b_cas(b, m, vyre_b_u32(b, 0), v, vyre_b_const(b, k->t, k->desired), VYRE_ORDER_ACQ_REL);
    else
      old = vyre_b_atomic(b, k->op, m, vyre_b_u32(b, 0), v, VYRE_ORDER_SEQ_CST);
    vyre_b_store(b, r, vyre_b_u32(b, 0), old);
    vyre_b_end(b);
    uint8_t mem[16];
    uint64_t sentinel = 0x1122334455667788ull;
    memcpy(mem, &k->init, es);
    memcpy(mem + es, &sentinel, es);
    vyre_input in = {mem, 2u * es};
    vyre_outputs *out = tr_run_ok(be, b, &in, 1, NULL);
    uint64_t now = 0, old_v = 0, next = 0;
    memcpy(&now, out->items[0].data, es);
    memcpy(&next, (uint8_t *)out->items[0].data + es, es);
    memcpy(&old_v, out->items[1].data, es);
    const vyre_op_info *info = vyre_op_lookup(k->op);
    ck_assert_msg(old_v == k->old && now == k->now,
                  "%s %s on 0x%llx with 0x%llx: old 0x%llx now 0x%llx, expected old 0x%llx now "
                  "0x%llx",
                  info->mnemonic, vyre_type_name(k->t), (unsigned long long)k->init,
                  (unsigned long long)k->value, (unsigned long long)old_v,
                  (unsigned long long)now, (unsigned long long)k->old,
                  (unsigned long long)k->now);
    ck_assert_msg(memcmp(&next, &sentinel, es) == 0, "the neighbouring element is untouched");
    be->vt->outputs_free(be, out);
  }
  be->vt->destroy(be);
}
END_TEST

/* ------------------------------------------------------------------ */
/* collectives: workgroup memory, barriers, subgroups, atomics          */
/* ------------------------------------------------------------------ */

/* Workgroup memory is zero when every workgroup starts, even when the
 * same thread ran another workgroup just before. */
START_TEST(test_workgroup_memory_zeroed) {
  vyre_backend *be = tr_new_backend();
  vyre_builder *b = vyre_builder_new(8, 1, 1);
  uint32_t s = vyre_b_buffer(b, "s", UINT32_MAX, VYRE_ACCESS_WORKGROUP, VYRE_T_U32, 8, 0);
  uint32_t s2 = vyre_b_buffer(b, "s2", UINT32_MAX, VYRE_ACCESS_WORKGROUP, VYRE_T_F16, 3, 0);
  uint32_t o = vyre_b_buffer(b, "o", UINT32_MAX, VYRE_ACCESS_WRITE_ONLY, VYRE_T_U32, 64, 0);
  uint32_t l = vyre_b_builtin(b, VYRE_OP_LOCAL_ID, 0), g = vyre_b_gid(b, 0);
  uint32_t seen = vyre_b_load(b, s, l);
  uint32_t seen2 = vyre_b_cast(b, VYRE_T_U32, vyre_b_load(b, s2, vyre_b_u32(b, 1)));
  vyre_b_store(b, o, g, vyre_b_bin(b, VYRE_OP_ADD, seen, seen2));
  /* Every read above happens before any write below. */
  vyre_b_barrier(b, VYRE_BARRIER_WORKGROUP);
  vyre_b_store(b, s, l, vyre_b_bin(b, VYRE_OP_ADD, g, vyre_b_u32(b, 1)));
  vyre_b_store(b, s2, vyre_b_u32(b, 1), vyre_b_f32(b, 3.0f));
  vyre_outputs *out = tr_run_ok(be, b, NULL, 0, NULL);
  for (uint32_t i = 0; i < 64; i++) ck_assert_msg(tr_u32_at(out, 0, i) == 0, "o[%u] saw stale memory", i);
  be->vt->outputs_free(be, out);
  be->vt->destroy(be);
}
END_TEST

/* A tree reduction in workgroup memory with barriers inside a loop. */
START_TEST(test_block_reduction) {
  vyre_backend *be = tr_new_backend();
  enum { WG = 64, GROUPS = 10, N = WG * GROUPS };
  /* The partial sum travels through a local: values do not escape blocks. */
  vyre_builder *b = vyre_builder_new(WG, 1, 1);
  uint32_t x = vyre_b_buffer(b, "x", UINT32_MAX, VYRE_ACCESS_READ_ONLY, VYRE_T_U32, N, 0);
  uint32_t r = vyre_b_buffer(b, "r", UINT32_MAX, VYRE_ACCESS_WRITE_ONLY, VYRE_T_U32, N, 0);
  uint32_t s = vyre_b_buffer(b, "s", UINT32_MAX, VYRE_ACCESS_WORKGROUP, VYRE_T_U32, WG, 0);
  uint32_t k = vyre_b_local(b, VYRE_T_U32), t = vyre_b_local(b, VYRE_T_U32);
  uint32_t l = vyre_b_builtin(b, VYRE_OP_LOCAL_ID, 0), g = vyre_b_gid(b, 0);
  vyre_b_store(b, s, l, vyre_b_load(b, x, g));
  vyre_b_barrier(b, VYRE_BARRIER_WORKGROUP);
  vyre_b_let(b, t, vyre_b_u32(b, 0));
  vyre_b_loop(b, k, vyre_b_u32(b, 0), vyre_b_u32(b, 6));
  uint32_t off = vyre_b_bin(b, VYRE_OP_SHR, vyre_b_u32(b, WG / 2), vyre_b_get(b, k));
  vyre_b_if(b, vyre_b_bin(b, VYRE_OP_LT, l, off));
  vyre_b_assign(b, t, vyre_b_bin(b, VYRE_OP_ADD, vyre_b_load(b, s, l),
                                 vyre_b_load(b, s, vyre_b_bin(b, VYRE_OP_ADD, l, off))));
  vyre_b_end(b);
  vyre_b_barrier(b, VYRE_BARRIER_WORKGROUP);
  vyre_b_if(b, vyre_b_bin(b, VYRE_OP_LT, l, off));
  vyre_b_store(b, s, l, vyre_b_get(b, t));
  vyre_b_end(b);
  vyre_b_barrier(b, VYRE_BARRIER_WORKGROUP);
  vyre_b_end(b);
  vyre_b_if(b, vyre_b_bin(b, VYRE_OP_EQ, l, vyre_b_u32(b, 0)));
  vyre_b_store(b, r, vyre_b_builtin(b, VYRE_OP_WORKGROUP_ID, 0), vyre_b_load(b, s, vyre_b_u32(b, 0)));
  vyre_b_end(b);
  uint32_t *xs = malloc(N * sizeof *xs);
  uint32_t want[GROUPS] = {0};
  for (uint32_t i = 0; i < N; i++) {
    xs[i] = i * 7 + 3;
    want[i / WG] += xs[i];
  }
  vyre_input in = {xs, N * sizeof *xs};
  vyre_outputs *out = tr_run_ok(be, b, &in, 1, NULL);
  for (uint32_t w = 0; w < GROUPS; w++)
    ck_assert_msg(tr_u32_at(out, 0, w) == want[w], "workgroup %u sum %u, expected %u", w,
                  tr_u32_at(out, 0, w), want[w]);
  be->vt->outputs_free(be, out);
  free(xs);
  be->vt->destroy(be);
}
END_TEST

/* Subgroups in workgroups of 48: one full subgroup of 32, one partial of 16. */
START_TEST(test_subgroups_partial) {
  vyre_backend *be = tr_new_backend();
  enum { WG = 48, N = 96, OUTS = 10 };
  vyre_builder *b = vyre_builder_new(WG, 1, 1);
  uint32_t o[OUTS];
  static const char *const names[OUTS] = {"ballot", "shuffle", "radd", "rmin", "rmax",
                                          "rand",   "ror",     "rxor", "lane", "sgsize"};
  for (int i = 0; i < OUTS; i++)
    o[i] = vyre_b_buffer(b, names[i], UINT32_MAX, VYRE_ACCESS_WRITE_ONLY,
                         i == 3 || i == 4 ? VYRE_T_I32 : VYRE_T_U32, N, 0);
  uint32_t g = vyre_b_gid(b, 0), l = vyre_b_builtin(b, VYRE_OP_LOCAL_ID, 0);
  uint32_t lane = vyre_b_builtin(b, VYRE_OP_SUBGROUP_LANE, 0);
  uint32_t odd = vyre_b_bin(b, VYRE_OP_EQ, vyre_b_bin(b, VYRE_OP_AND, l, vyre_b_u32(b, 1)), vyre_b_u32(b, 1));
  vyre_b_store(b, o[0], g, vyre_b_ballot(b, odd));
  uint32_t src = vyre_b_bin(b, VYRE_OP_ADD, lane, vyre_b_u32(b, 1));
  vyre_b_store(b, o[1], g, vyre_b_shuffle(b, vyre_b_bin(b, VYRE_OP_MUL, g, vyre_b_u32(b, 10)), src));
  vyre_b_store(b, o[2], g, vyre_b_reduce(b, VYRE_REDUCE_ADD, l));
  uint32_t sv = vyre_b_bin(b, VYRE_OP_SUB, vyre_b_i32(b, 100), vyre_b_cast(b, VYRE_T_I32, vyre_b_bin(b, VYRE_OP_MUL, l, vyre_b_u32(b, 3))));
  vyre_b_store(b, o[3], g, vyre_b_reduce(b, VYRE_REDUCE_MIN, sv));
  vyre_b_store(b, o[4], g, vyre_b_reduce(b, VYRE_REDUCE_MAX, sv));
  uint32_t bits = vyre_b_bin(b, VYRE_OP_OR, vyre_b_bin(b, VYRE_OP_SHL, vyre_b_u32(b, 1), l), vyre_b_u32(b, 0x80000000u));
  vyre_b_store(b, o[5], g, vyre_b_reduce(b, VYRE_REDUCE_AND, bits));
  vyre_b_store(b, o[6], g, vyre_b_reduce(b, VYRE_REDUCE_OR, bits));
  vyre_b_store(b, o[7], g, vyre_b_reduce(b, VYRE_REDUCE_XOR, l));
  vyre_b_store(b, o[8], g, lane);
  vyre_b_store(b, o[9], g, vyre_b_builtin(b, VYRE_OP_SUBGROUP_SIZE, 0));
  vyre_outputs *out = tr_run_ok(be, b, NULL, 0, NULL);
  ck_assert_uint_eq(out->count, OUTS);
  for (uint32_t i = 0; i < N; i++) {
    uint32_t li = i % WG, ln = li % 32, base = li - ln, lanes = li < 32 ? 32 : 16;
    /* ballot: odd active lanes */
    uint32_t ballot = lanes == 32 ? 0xaaaaaaaau : 0x0000aaaau;
    ck_assert_msg(tr_u32_at(out, 0, i) == ballot, "ballot at %u: 0x%x", i, tr_u32_at(out, 0, i));
    /* shuffle from lane+1 (mod 32); a missing lane gives 0 */
    uint32_t s = (ln + 1) % 32;
    uint32_t want_sh = s < lanes ? (i - ln + s) * 10 : 0;
    ck_assert_msg(tr_u32_at(out, 1, i) == want_sh, "shuffle at %u: %u, expected %u", i,
                  tr_u32_at(out, 1, i), want_sh);
    uint32_t sum = 0, xr = 0, andv = 0xffffffffu, orv = 0;
    int32_t mn = INT32_MAX, mx = INT32_MIN;
    for (uint32_t k = base; k < base + lanes; k++) {
      sum += k;
      xr ^= k;
      int32_t v = 100 - (int32_t)(3 * k);
      mn = v < mn ? v : mn;
      mx = v > mx ? v : mx;
      andv &= (1u << (k % 32)) | 0x80000000u;
      orv |= (1u << (k % 32)) | 0x80000000u;
    }
    ck_assert_msg(tr_u32_at(out, 2, i) == sum, "reduce add at %u", i);
    ck_assert_msg((int32_t)tr_u32_at(out, 3, i) == mn, "reduce min at %u: %d, expected %d", i,
                  (int32_t)tr_u32_at(out, 3, i), mn);
    ck_assert_msg((int32_t)tr_u32_at(out, 4, i) == mx, "reduce max at %u", i);
    ck_assert_msg(tr_u32_at(out, 5, i) == andv, "reduce and at %u: 0x%x, expected 0x%x", i,
                  tr_u32_at(out, 5, i), andv);
    ck_assert_msg(tr_u32_at(out, 6, i) == orv, "reduce or at %u", i);
    ck_assert_msg(tr_u32_at(out, 7, i) == xr, "reduce xor at %u", i);
    ck_assert_uint_eq(tr_u32_at(out, 8, i), ln);
    ck_assert_uint_eq(tr_u32_at(out, 9, i), 32);
  }
  be->vt->outputs_free(be, out);
  be->vt->destroy(be);
}
END_TEST

/* 64-bit, f32 and bool lanes: identities of the wide types, typed zeros of
 * shuffles from missing lanes. */
START_TEST(test_subgroups_wide_types) {
  vyre_backend *be = tr_new_backend();
  enum { WG = 48 };
  vyre_builder *b = vyre_builder_new(WG, 1, 1);
  uint32_t rand64 = vyre_b_buffer(b, "rand64", UINT32_MAX, VYRE_ACCESS_WRITE_ONLY, VYRE_T_U64, WG, 0);
  uint32_t rmin64 = vyre_b_buffer(b, "rmin64", UINT32_MAX, VYRE_ACCESS_WRITE_ONLY, VYRE_T_I64, WG, 0);
  uint32_t rmax64 = vyre_b_buffer(b, "rmax64", UINT32_MAX, VYRE_ACCESS_WRITE_ONLY, VYRE_T_U64, WG, 0);
  uint32_t sh64 = vyre_b_buffer(b, "sh64", UINT32_MAX, VYRE_ACCESS_WRITE_ONLY, VYRE_T_U64, WG, 0);
  uint32_t shf = vyre_b_buffer(b, "shf", UINT32_MAX, VYRE_ACCESS_WRITE_ONLY, VYRE_T_F32, WG, 0);
  uint32_t shb = vyre_b_buffer(b, "shb", UINT32_MAX, VYRE_ACCESS_WRITE_ONLY, VYRE_T_U32, WG, 0);
  uint32_t g = vyre_b_gid(b, 0), lane = vyre_b_builtin(b, VYRE_OP_SUBGROUP_LANE, 0);
  uint32_t l64 = vyre_b_cast(b, VYRE_T_U64, lane);
  uint32_t notbit = vyre_b_un(b, VYRE_OP_BITNOT, vyre_b_bin(b, VYRE_OP_SHL, vyre_b_u64(b, 1), l64));
  vyre_b_store(b, rand64, g, vyre_b_reduce(b, VYRE_REDUCE_AND, notbit));
  uint32_t big = vyre_b_bin(b, VYRE_OP_ADD, vyre_b_i64(b, (int64_t)1 << 40), vyre_b_cast(b, VYRE_T_I64, lane));
  vyre_b_store(b, rmin64, g, vyre_b_reduce(b, VYRE_REDUCE_MIN, big));
  vyre_b_store(b, rmax64, g, vyre_b_reduce(b, VYRE_REDUCE_MAX, l64));
  uint32_t src = vyre_b_bin(b, VYRE_OP_ADD, lane, vyre_b_u32(b, 1));
  vyre_b_store(b, sh64, g, vyre_b_shuffle(b, vyre_b_bin(b, VYRE_OP_ADD, l64, vyre_b_u64(b, 0xff00000000ull)), src));
  vyre_b_store(b, shf, g, vyre_b_shuffle(b, vyre_b_f32(b, -1.5f), src));
  uint32_t t = vyre_b_shuffle(b, vyre_b_bool(b, 1), src);
  vyre_b_store(b, shb, g, vyre_b_cast(b, VYRE_T_U32, t));
  vyre_outputs *out = tr_run_ok(be, b, NULL, 0, NULL);
  for (uint32_t i = 0; i < WG; i++) {
    uint32_t ln = i % 32, lanes = i < 32 ? 32 : 16;
    uint64_t andv = lanes == 32 ? 0xffffffff00000000ull : 0xffffffffffff0000ull;
    ck_assert_msg(tr_u64_at(out, 0, i) == andv, "u64 and at %u: 0x%llx", i,
                  (unsigned long long)tr_u64_at(out, 0, i));
    ck_assert_msg(tr_u64_at(out, 1, i) == (1ull << 40), "i64 min at %u (identity is INT64_MAX)", i);
    ck_assert_uint_eq(tr_u64_at(out, 2, i), lanes - 1);
    uint32_t s = (ln + 1) % 32;
    int have = s < lanes;
    ck_assert_msg(tr_u64_at(out, 3, i) == (have ? 0xff00000000ull + s : 0), "u64 shuffle at %u", i);
    ck_assert_msg(tr_u32_at(out, 4, i) == (have ? 0xbfc00000u : 0u), "f32 shuffle at %u", i);
    ck_assert_msg(tr_u32_at(out, 5, i) == (have ? 1u : 0u), "bool shuffle at %u", i);
  }
  be->vt->outputs_free(be, out);
  be->vt->destroy(be);
}
END_TEST

/* f32 reduce follows exactly the tree of semantics.md, and inactive lanes
 * hold the identity (-0.0 for add, NaN for min/max). */
START_TEST(test_reduce_f32_tree) {
  vyre_backend *be = tr_new_backend();
  enum { WG = 48 };
  vyre_builder *b = vyre_builder_new(WG, 1, 1);
  uint32_t x = vyre_b_buffer(b, "x", UINT32_MAX, VYRE_ACCESS_READ_ONLY, VYRE_T_F32, WG, 0);
  uint32_t ra = vyre_b_buffer(b, "ra", UINT32_MAX, VYRE_ACCESS_WRITE_ONLY, VYRE_T_F32, WG, 0);
  uint32_t rn = vyre_b_buffer(b, "rn", UINT32_MAX, VYRE_ACCESS_WRITE_ONLY, VYRE_T_F32, WG, 0);
  uint32_t rx = vyre_b_buffer(b, "rx", UINT32_MAX, VYRE_ACCESS_WRITE_ONLY, VYRE_T_F32, WG, 0);
  uint32_t g = vyre_b_gid(b, 0), v = vyre_b_load(b, x, g);
  vyre_b_store(b, ra, g, vyre_b_reduce(b, VYRE_REDUCE_ADD, v));
  vyre_b_store(b, rn, g, vyre_b_reduce(b, VYRE_REDUCE_MIN, v));
  vyre_b_store(b, rx, g, vyre_b_reduce(b, VYRE_REDUCE_MAX, v));
  uint32_t xs[WG];
  xs[0] = 0x4b800000u; /* 2^24 */
  for (int i = 1; i < 32; i++) xs[i] = 0x3f800000u; /* 1.0 */
  xs[5] = 0x7fc00000u;                              /* a NaN: loses in min/max */
  /* The partial subgroup: all -0.0, and a NaN and a -2 */
  for (int i = 32; i < WG; i++) xs[i] = 0x80000000u;
  vyre_input in = {xs, sizeof xs};
  vyre_outputs *out = tr_run_ok(be, b, &in, 1, NULL);
  /* Full subgroup, add: lane 5 is NaN, so the sum is NaN; check min/max
   * there and the add on a second run without the NaN. */
  for (int i = 0; i < 32; i++) {
    ck_assert_uint_eq(tr_u32_at(out, 0, (uint32_t)i), 0x7fc00000u);
    ck_assert_uint_eq(tr_u32_at(out, 1, (uint32_t)i), 0x3f800000u);
    ck_assert_uint_eq(tr_u32_at(out, 2, (uint32_t)i), 0x4b800000u);
  }
  /* Partial subgroup: -0 + ... + identity(-0) = -0; min/max ignore the
   * NaN identity of the missing lanes. */
  for (int i = 32; i < WG; i++) {
    ck_assert_msg(tr_u32_at(out, 0, (uint32_t)i) == 0x80000000u, "add of -0s with -0 identity is -0");
    ck_assert_uint_eq(tr_u32_at(out, 1, (uint32_t)i), 0x80000000u);
    ck_assert_uint_eq(tr_u32_at(out, 2, (uint32_t)i), 0x80000000u);
  }
  be->vt->outputs_free(be, out);
  /* The add tree: 2^24 + 31 x 1.0.  Summed in order it stays 2^24 (each
   * +1 ties to even); the tree of semantics.md gives 2^24 + 30. */
  xs[5] = 0x3f800000u;
  b = vyre_builder_new(WG, 1, 1);
  x = vyre_b_buffer(b, "x", UINT32_MAX, VYRE_ACCESS_READ_ONLY, VYRE_T_F32, WG, 0);
  ra = vyre_b_buffer(b, "ra", UINT32_MAX, VYRE_ACCESS_WRITE_ONLY, VYRE_T_F32, WG, 0);
  g = vyre_b_gid(b, 0);
  vyre_b_store(b, ra, g, vyre_b_reduce(b, VYRE_REDUCE_ADD, vyre_b_load(b, x, g)));
  out = tr_run_ok(be, b, &in, 1, NULL);
  for (int i = 0; i < 32; i++)
    ck_assert_msg(tr_u32_at(out, 0, (uint32_t)i) == 0x4b80000fu, "tree sum at lane %d: 0x%08x, "
                  "expected 0x4b80000f (16777246)", i, tr_u32_at(out, 0, (uint32_t)i));
  be->vt->outputs_free(be, out);
  be->vt->destroy(be);
}
END_TEST

/* Contended atomics from several threads: a global histogram and one in
 * workgroup memory flushed after a barrier. */
START_TEST(test_atomics_contention) {
  setenv("VYRE_REF_THREADS", "4", 1);
  vyre_backend *be = tr_new_backend();
  unsetenv("VYRE_REF_THREADS");
  enum { N = 1 << 17, BINS = 16, WG = 64 };
  vyre_builder *b = vyre_builder_new(WG, 1, 1);
  uint32_t h = vyre_b_buffer(b, "h", UINT32_MAX, VYRE_ACCESS_READ_WRITE, VYRE_T_U32, BINS, VYRE_BUF_OUTPUT);
  uint32_t h64 = vyre_b_buffer(b, "h64", UINT32_MAX, VYRE_ACCESS_READ_WRITE, VYRE_T_U64, BINS, VYRE_BUF_OUTPUT);
  uint32_t h2 = vyre_b_buffer(b, "h2", UINT32_MAX, VYRE_ACCESS_READ_WRITE, VYRE_T_I32, BINS, VYRE_BUF_OUTPUT);
  uint32_t z = vyre_b_buffer(b, "z", UINT32_MAX, VYRE_ACCESS_WRITE_ONLY, VYRE_T_U32, N, 0);
  uint32_t s = vyre_b_buffer(b, "s", UINT32_MAX, VYRE_ACCESS_WORKGROUP, VYRE_T_I32, BINS, 0);
  uint32_t g = vyre_b_gid(b, 0), l = vyre_b_builtin(b, VYRE_OP_LOCAL_ID, 0);
  uint32_t bin = vyre_b_bin(b, VYRE_OP_MOD, g, vyre_b_u32(b, BINS));
  vyre_b_atomic(b, VYRE_OP_ATOMIC_ADD, h, bin, vyre_b_u32(b, 1), VYRE_ORDER_RELAXED);
  vyre_b_atomic(b, VYRE_OP_ATOMIC_ADD, h64, bin, vyre_b_u64(b, 0x100000001ull), VYRE_ORDER_RELAXED);
  vyre_b_atomic(b, VYRE_OP_ATOMIC_ADD, s, vyre_b_bin(b, VYRE_OP_MOD, l, vyre_b_u32(b, BINS)),
                vyre_b_i32(b, 1), VYRE_ORDER_RELAXED);
  vyre_b_store(b, z, g, g);
  vyre_b_barrier(b, VYRE_BARRIER_WORKGROUP);
  vyre_b_if(b, vyre_b_bin(b, VYRE_OP_LT, l, vyre_b_u32(b, BINS)));
  vyre_b_atomic(b, VYRE_OP_ATOMIC_ADD, h2, l, vyre_b_load(b, s, l), VYRE_ORDER_ACQ_REL);
  vyre_b_end(b);
  vyre_outputs *out = tr_run_ok(be, b, NULL, 0, NULL);
  for (uint32_t i = 0; i < BINS; i++) {
    ck_assert_msg(tr_u32_at(out, 0, i) == N / BINS, "bin %u counted %u, expected %u", i,
                  tr_u32_at(out, 0, i), N / BINS);
    ck_assert_uint_eq(tr_u64_at(out, 1, i), (uint64_t)(N / BINS) * 0x100000001ull);
    ck_assert_uint_eq(tr_u32_at(out, 2, i), N / BINS);
  }
  be->vt->outputs_free(be, out);
  vyre_metric m[64];
  uint32_t count = 0;
  ck_assert_int_eq(be->vt->metrics(be, m, 64, &count, NULL), VYRE_OK);
  for (uint32_t i = 0; i < count && i < 64; i++)
    if (!strcmp(m[i].name, "launch.max_threads"))
      ck_assert_msg(m[i].value > 1, "the launch ran on %llu threads; 4 were configured",
                    (unsigned long long)m[i].value);
  be->vt->destroy(be);
}
END_TEST

/* Grid barriers: writes of other workgroups are visible after one; locals
 * and workgroup memory live across it. */
START_TEST(test_grid_barrier) {
  setenv("VYRE_REF_THREADS", "2", 1);
  vyre_backend *be = tr_new_backend();
  unsetenv("VYRE_REF_THREADS");
  enum { WG = 64, N = 4096 };
  vyre_builder *b = vyre_builder_new(WG, 1, 1);
  uint32_t A = vyre_b_buffer(b, "A", UINT32_MAX, VYRE_ACCESS_READ_WRITE, VYRE_T_U32, N, VYRE_BUF_OUTPUT);
  uint32_t B = vyre_b_buffer(b, "B", UINT32_MAX, VYRE_ACCESS_READ_WRITE, VYRE_T_U32, N, VYRE_BUF_OUTPUT);
  uint32_t C = vyre_b_buffer(b, "C", UINT32_MAX, VYRE_ACCESS_WRITE_ONLY, VYRE_T_U32, N, 0);
  uint32_t D = vyre_b_buffer(b, "D", UINT32_MAX, VYRE_ACCESS_WRITE_ONLY, VYRE_T_U32, N, 0);
  uint32_t E = vyre_b_buffer(b, "E", UINT32_MAX, VYRE_ACCESS_WRITE_ONLY, VYRE_T_U32, N, 0);
  uint32_t S = vyre_b_buffer(b, "S", UINT32_MAX, VYRE_ACCESS_WORKGROUP, VYRE_T_U32, WG, 0);
  uint32_t x = vyre_b_local(b, VYRE_T_U32), gl = vyre_b_local(b, VYRE_T_U32), ll = vyre_b_local(b, VYRE_T_U32);
  uint32_t g = vyre_b_gid(b, 0), l = vyre_b_builtin(b, VYRE_OP_LOCAL_ID, 0);
  vyre_b_let(b, gl, g);
  vyre_b_let(b, ll, l);
  vyre_b_let(b, x, vyre_b_bin(b, VYRE_OP_MUL, g, vyre_b_u32(b, 3)));
  vyre_b_store(b, A, g, vyre_b_bin(b, VYRE_OP_ADD, g, vyre_b_u32(b, 1)));
  vyre_b_store(b, S, l, vyre_b_bin(b, VYRE_OP_ADD, vyre_b_builtin(b, VYRE_OP_WORKGROUP_ID, 0), vyre_b_u32(b, 7)));
  vyre_b_barrier(b, VYRE_BARRIER_GRID);
  g = vyre_b_get(b, gl);
  uint32_t nb = vyre_b_bin(b, VYRE_OP_MOD, vyre_b_bin(b, VYRE_OP_ADD, g, vyre_b_u32(b, 1)), vyre_b_u32(b, N));
  vyre_b_store(b, B, g, vyre_b_load(b, A, nb));
  vyre_b_store(b, C, g, vyre_b_get(b, x));
  vyre_b_store(b, D, g, vyre_b_load(b, S, vyre_b_get(b, ll)));
  vyre_b_barrier(b, VYRE_BARRIER_GRID);
  g = vyre_b_get(b, gl);
  uint32_t far = vyre_b_bin(b, VYRE_OP_MOD, vyre_b_bin(b, VYRE_OP_ADD, g, vyre_b_u32(b, WG)), vyre_b_u32(b, N));
  vyre_b_store(b, E, g, vyre_b_load(b, B, far));
  vyre_outputs *out = tr_run_ok(be, b, NULL, 0, NULL);
  for (uint32_t i = 0; i < N; i++) {
    ck_assert_uint_eq(tr_u32_at(out, 0, i), i + 1);
    ck_assert_msg(tr_u32_at(out, 1, i) == (i + 1) % N + 1, "B[%u] read its neighbour after the barrier", i);
    ck_assert_msg(tr_u32_at(out, 2, i) == 3 * i, "C[%u]: a local survived the grid barrier", i);
    ck_assert_msg(tr_u32_at(out, 3, i) == i / WG + 7, "D[%u]: workgroup memory survived", i);
    ck_assert_msg(tr_u32_at(out, 4, i) == (i + WG + 1) % N + 1, "E[%u] after the second barrier", i);
  }
  be->vt->outputs_free(be, out);

  /* A workgroup that returns (uniformly) before a grid barrier does not
   * hold the others up; fixpoint iterations restart every invocation. */
  b = vyre_builder_new(WG, 1, 1);
  A = vyre_b_buffer(b, "A", UINT32_MAX, VYRE_ACCESS_READ_WRITE, VYRE_T_U32, 256, VYRE_BUF_OUTPUT);
  gl = vyre_b_local(b, VYRE_T_U32);
  vyre_b_let(b, gl, vyre_b_gid(b, 0));
  vyre_b_if(b, vyre_b_bin(b, VYRE_OP_EQ, vyre_b_builtin(b, VYRE_OP_WORKGROUP_ID, 0), vyre_b_u32(b, 2)));
  vyre_b_return(b);
  vyre_b_end(b);
  vyre_b_barrier(b, VYRE_BARRIER_GRID);
  g = vyre_b_get(b, gl);
  vyre_b_store(b, A, g, vyre_b_bin(b, VYRE_OP_ADD, vyre_b_load(b, A, g), vyre_b_u32(b, 1)));
  vyre_dispatch_options o = tr_opts();
  o.fixpoint_iterations = 3;
  out = tr_run_ok(be, b, NULL, 0, &o);
  for (uint32_t i = 0; i < 256; i++)
    ck_assert_msg(tr_u32_at(out, 0, i) == (i / WG == 2 ? 0u : 3u), "A[%u] = %u", i, tr_u32_at(out, 0, i));
  be->vt->outputs_free(be, out);
  be->vt->destroy(be);
}
END_TEST

START_TEST(test_state_limit) {
  vyre_backend *be = tr_new_backend();
  vyre_builder *b = vyre_builder_new(1024, 1, 1);
  uint32_t a = vyre_b_buffer(b, "a", UINT32_MAX, VYRE_ACCESS_WRITE_ONLY, VYRE_T_U32, 4, 0);
  uint32_t gl = vyre_b_local(b, VYRE_T_U32);
  vyre_b_let(b, gl, vyre_b_gid(b, 0));
  vyre_b_barrier(b, VYRE_BARRIER_GRID);
  vyre_b_store(b, a, vyre_b_get(b, gl), vyre_b_u32(b, 1));
  vyre_dispatch_options o = tr_opts();
  o.grid[0] = 0x7fffffff;
  vyre_outputs *out = NULL;
  vyre_error err = VYRE_ERROR_INIT;
  ck_assert_int_eq(tr_dispatch(be, b, NULL, 0, &o, &out, &err), VYRE_LIMIT);
  ck_assert_ptr_null(out);
  tr_assert_fix(&err);
  /* Lockstep keeps a value slot per instruction per invocation of a
   * workgroup: 1024 x 140000 x 8 bytes is over the limit too. */
  b = vyre_builder_new(1024, 1, 1);
  a = vyre_b_buffer(b, "a", UINT32_MAX, VYRE_ACCESS_WRITE_ONLY, VYRE_T_U32, 4, 0);
  uint32_t v = vyre_b_u32(b, 1);
  for (int i = 0; i < 140000; i++) v = vyre_b_bin(b, VYRE_OP_ADD, v, v);
  vyre_b_barrier(b, VYRE_BARRIER_WORKGROUP);
  vyre_b_store(b, a, vyre_b_gid(b, 0), v);
  ck_assert_int_eq(tr_dispatch(be, b, NULL, 0, NULL, &out, &err), VYRE_LIMIT);
  ck_assert_msg(strstr(err.message, "MiB") != NULL, "says how much: %s", err.message);
  be->vt->destroy(be);
}
END_TEST

/* A trapping program: the dispatch fails with VYRE_TRAP naming the code
 * and the instruction; the backend stays usable. */
static vyre_builder *trap_program(uint32_t at, uint32_t code, int with_barrier, uint32_t *trap_inst) {
  vyre_builder *b = vyre_builder_new(64, 1, 1);
  uint32_t o = vyre_b_buffer(b, "o", UINT32_MAX, VYRE_ACCESS_WRITE_ONLY, VYRE_T_U32, 4096, 0);
  uint32_t g = vyre_b_gid(b, 0);
  if (with_barrier) vyre_b_barrier(b, VYRE_BARRIER_WORKGROUP);
  vyre_b_if(b, vyre_b_bin(b, VYRE_OP_EQ, g, vyre_b_u32(b, at)));
  *trap_inst = vyre_b_inst_count(b);
  vyre_b_trap(b, code);
  vyre_b_end(b);
  vyre_b_store(b, o, g, g);
  return b;
}

START_TEST(test_trap) {
  setenv("VYRE_REF_THREADS", "2", 1);
  vyre_backend *be = tr_new_backend();
  unsetenv("VYRE_REF_THREADS");
  for (int barrier = 0; barrier < 2; barrier++) {
    uint32_t inst;
    vyre_builder *b = trap_program(3001, 42, barrier, &inst);
    vyre_outputs *out = (vyre_outputs *)0x1;
    vyre_error err = VYRE_ERROR_INIT;
    ck_assert_int_eq(tr_dispatch(be, b, NULL, 0, NULL, &out, &err), VYRE_TRAP);
    ck_assert_ptr_null(out);
    ck_assert_int_eq(err.status, VYRE_TRAP);
    ck_assert_int_eq(err.native_code, 42);
    char want[64];
    snprintf(want, sizeof want, "code 42 at instruction %u", inst);
    ck_assert_msg(strstr(err.message, want) != NULL, "'%s' in: %s", want, err.message);
    ck_assert_msg(strstr(err.message, "workgroup (46, 0, 0), local id (57, 0, 0)"),
                  "names the invocation: %s", err.message);
  }
  /* Still usable. */
  uint32_t inst;
  vyre_builder *b = trap_program(99999, 1, 0, &inst);
  vyre_outputs *out = tr_run_ok(be, b, NULL, 0, NULL);
  ck_assert_uint_eq(tr_u32_at(out, 0, 4095), 4095);
  be->vt->outputs_free(be, out);
  be->vt->destroy(be);
}
END_TEST

START_TEST(test_fixpoint) {
  vyre_backend *be = tr_new_backend();
  vyre_builder *b = vyre_builder_new(32, 1, 1);
  uint32_t x = vyre_b_buffer(b, "x", UINT32_MAX, VYRE_ACCESS_READ_WRITE, VYRE_T_I64, 0, 0);
  uint32_t g = vyre_b_gid(b, 0);
  vyre_b_store(b, x, g, vyre_b_bin(b, VYRE_OP_MUL, vyre_b_load(b, x, g), vyre_b_i64(b, -2)));
  void *bytes;
  size_t size;
  tr_encode(b, &bytes, &size);
  vyre_program_ref ref = VYRE_PROGRAM_BYTES(bytes, size);
  int64_t xs[100];
  for (int i = 0; i < 100; i++) xs[i] = i;
  vyre_input in = {xs, sizeof xs};
  for (uint32_t it = 0; it <= 5; it++) {
    vyre_dispatch_options o = tr_opts();
    o.fixpoint_iterations = it;
    vyre_outputs *out = NULL;
    ck_assert_int_eq(be->vt->dispatch(be, &ref, &in, 1, &o, &out, NULL, NULL), VYRE_OK);
    int64_t f = 1;
    for (uint32_t k = 0; k < (it ? it : 1); k++) f *= -2;
    for (uint32_t i = 0; i < 100; i++)
      ck_assert_msg((int64_t)tr_u64_at(out, 0, i) == (int64_t)i * f, "x[%u] after %u launches", i, it);
    be->vt->outputs_free(be, out);
  }
  free(bytes);
  be->vt->destroy(be);
}
END_TEST

START_TEST(test_overrides) {
  vyre_backend *be = tr_new_backend();
  /* workgroup (4,2,1) over grid (2,3,1): 48 invocations, gid in 8 x 6 */
  vyre_builder *b = vyre_builder_new(64, 1, 1);
  uint32_t o = vyre_b_buffer(b, "o", UINT32_MAX, VYRE_ACCESS_WRITE_ONLY, VYRE_T_U32, 64, 0);
  uint32_t gx = vyre_b_gid(b, 0), gy = vyre_b_gid(b, 1);
  uint32_t idx = vyre_b_bin(b, VYRE_OP_ADD, vyre_b_bin(b, VYRE_OP_MUL, gy, vyre_b_u32(b, 8)), gx);
  uint32_t v = vyre_b_builtin(b, VYRE_OP_LOCAL_ID, 0);
  v = vyre_b_bin(b, VYRE_OP_OR, v, vyre_b_bin(b, VYRE_OP_SHL, vyre_b_builtin(b, VYRE_OP_LOCAL_ID, 1), vyre_b_u32(b, 4)));
  v = vyre_b_bin(b, VYRE_OP_OR, v, vyre_b_bin(b, VYRE_OP_SHL, vyre_b_builtin(b, VYRE_OP_WORKGROUP_ID, 0), vyre_b_u32(b, 8)));
  v = vyre_b_bin(b, VYRE_OP_OR, v, vyre_b_bin(b, VYRE_OP_SHL, vyre_b_builtin(b, VYRE_OP_WORKGROUP_ID, 1), vyre_b_u32(b, 12)));
  v = vyre_b_bin(b, VYRE_OP_OR, v, vyre_b_bin(b, VYRE_OP_SHL, vyre_b_builtin(b, VYRE_OP_SUBGROUP_LANE, 0), vyre_b_u32(b, 16)));
  v = vyre_b_bin(b, VYRE_OP_OR, v, vyre_b_bin(b, VYRE_OP_SHL, vyre_b_bin(b, VYRE_OP_ADD, vyre_b_gid(b, 2),
                 vyre_b_builtin(b, VYRE_OP_WORKGROUP_ID, 2)), vyre_b_u32(b, 24)));
  vyre_b_store(b, o, idx, vyre_b_bin(b, VYRE_OP_ADD, v, vyre_b_u32(b, 0x80000000u)));
  vyre_dispatch_options op = tr_opts();
  op.workgroup[0] = 4;
  op.workgroup[1] = 2;
  op.grid[0] = 2;
  op.grid[1] = 3;
  vyre_outputs *out = tr_run_ok(be, b, NULL, 0, &op);
  for (uint32_t y = 0; y < 6; y++)
    for (uint32_t x = 0; x < 8; x++) {
      uint32_t lx = x % 4, ly = y % 2, wx = x / 4, wy = y / 2, lane = lx + ly * 4;
      uint32_t want = 0x80000000u | lx | ly << 4 | wx << 8 | wy << 12 | lane << 16;
      ck_assert_msg(tr_u32_at(out, 0, y * 8 + x) == want, "gid (%u,%u): 0x%08x, expected 0x%08x", x, y,
                    tr_u32_at(out, 0, y * 8 + x), want);
    }
  for (uint32_t i = 48; i < 64; i++) ck_assert_uint_eq(tr_u32_at(out, 0, i), 0);
  be->vt->outputs_free(be, out);
  /* An override beyond 1024 invocations is a LIMIT with a Fix. */
  b = vyre_builder_new(64, 1, 1);
  o = vyre_b_buffer(b, "o", UINT32_MAX, VYRE_ACCESS_WRITE_ONLY, VYRE_T_U32, 64, 0);
  vyre_b_store(b, o, vyre_b_gid(b, 0), vyre_b_u32(b, 1));
  op = tr_opts();
  op.workgroup[0] = 64;
  op.workgroup[2] = 32;
  vyre_error err = VYRE_ERROR_INIT;
  ck_assert_int_eq(tr_dispatch(be, b, NULL, 0, &op, &out, &err), VYRE_LIMIT);
  tr_assert_fix(&err);
  be->vt->destroy(be);
}
END_TEST

START_TEST(test_ulp_budget) {
  vyre_backend *be = tr_new_backend();
  for (int budget = 0; budget < 2; budget++) {
    vyre_builder *b = vyre_builder_new(1, 1, 1);
    uint32_t o = vyre_b_buffer(b, "o", UINT32_MAX, VYRE_ACCESS_WRITE_ONLY, VYRE_T_F32, 1, 0);
    vyre_b_store(b, o, vyre_b_u32(b, 0), vyre_b_un(b, VYRE_OP_EXP, vyre_b_f32(b, 0.0f)));
    vyre_dispatch_options op = tr_opts();
    op.ulp_budget = (uint32_t)budget;
    vyre_outputs *out = NULL;
    vyre_error err = VYRE_ERROR_INIT;
    vyre_status st = tr_dispatch(be, b, NULL, 0, budget ? &op : NULL, &out, &err);
    /* Strict (NULL options: budget 0) admits exp: the reference claims
     * correctly_rounded. */
    ck_assert_msg(st == VYRE_OK, "exp under ulp budget %d runs: %s", budget, err.message);
    ck_assert_uint_eq(tr_u32_at(out, 0, 0), 0x3f800000u);
    be->vt->outputs_free(be, out);
  }
  /* rcp and sqrt are IEEE ops: fine under strict. */
  vyre_builder *b = vyre_builder_new(1, 1, 1);
  uint32_t o = vyre_b_buffer(b, "o", UINT32_MAX, VYRE_ACCESS_WRITE_ONLY, VYRE_T_F32, 1, 0);
  vyre_b_store(b, o, vyre_b_u32(b, 0), vyre_b_un(b, VYRE_OP_RCP, vyre_b_un(b, VYRE_OP_SQRT, vyre_b_f32(b, 4.0f))));
  vyre_outputs *out = tr_run_ok(be, b, NULL, 0, NULL);
  ck_assert_uint_eq(tr_u32_at(out, 0, 0), 0x3f000000u);
  be->vt->outputs_free(be, out);
  be->vt->destroy(be);
}
END_TEST

/* Transcendentals away from special values: the correctly rounded result
 * (rounded from 300-bit mpmath values), bit for bit, under strict and
 * under a budget alike (the reference computes ptxmath's PM_CR for every
 * budget). */
START_TEST(test_transcendental_accuracy) {
  static const struct {
    vyre_op op;
    uint32_t x, want;
  } cases[] = {
      {VYRE_OP_EXP, 0x3f800000u, 0x402df854u},  /* e */
      {VYRE_OP_LOG, 0x40000000u, 0x3f317218u},  /* ln 2 */
      {VYRE_OP_SIN, 0x3f800000u, 0x3f576aa4u},  /* sin 1 */
      {VYRE_OP_COS, 0x3f800000u, 0x3f0a5140u},  /* cos 1 */
      {VYRE_OP_TAN, 0x3f800000u, 0x3fc75923u},  /* tan 1 */
      {VYRE_OP_ATAN, 0x3f800000u, 0x3f490fdbu}, /* pi/4 */
      {VYRE_OP_EXP2, 0x3f000000u, 0x3fb504f3u}, /* sqrt 2 */
      {VYRE_OP_LOG2, 0x41200000u, 0x40549a78u}, /* log2 10 */
      {VYRE_OP_SINH, 0x3f800000u, 0x3f966cfeu}, /* sinh 1 */
      {VYRE_OP_COSH, 0x3f800000u, 0x3fc583abu}, /* cosh 1 */
      {VYRE_OP_TANH, 0x3f000000u, 0x3eec9a9fu}, /* tanh 0.5 */
      {VYRE_OP_ASIN, 0x3f000000u, 0x3f060a92u}, /* pi/6 */
      {VYRE_OP_ACOS, 0x3f000000u, 0x3f860a92u}, /* pi/3 */
      {VYRE_OP_RSQRT, 0x40000000u, 0x3f3504f3u},/* 1/sqrt 2 */
  };
  vyre_backend *be = tr_new_backend();
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
    for (uint32_t budget = 0; budget < 3; budget += 2) {
      vyre_builder *b = vyre_builder_new(1, 1, 1);
      uint32_t o = vyre_b_buffer(b, "o", UINT32_MAX, VYRE_ACCESS_WRITE_ONLY, VYRE_T_F32, 1, 0);
      vyre_b_store(b, o, vyre_b_u32(b, 0),
                   vyre_b_un(b, cases[i].op, vyre_b_const(b, VYRE_T_F32, cases[i].x)));
      vyre_dispatch_options op = tr_opts();
      op.ulp_budget = budget;
      vyre_outputs *out = tr_run_ok(be, b, NULL, 0, &op);
      uint32_t got = tr_u32_at(out, 0, 0);
      ck_assert_msg(got == cases[i].want, "%s(0x%08x) = 0x%08x under ulp %u, expected 0x%08x",
                    vyre_op_lookup(cases[i].op)->mnemonic, cases[i].x, got, budget, cases[i].want);
      be->vt->outputs_free(be, out);
    }
  }
  be->vt->destroy(be);
}
END_TEST

/* Many host threads on one instance at once. */
typedef struct caller_arg {
  vyre_backend *be;
  const void *bytes;
  size_t size;
  int failures;
  uint32_t seed;
} caller_arg;

static void *caller_main(void *p) {
  caller_arg *a = p;
  vyre_program_ref ref = VYRE_PROGRAM_BYTES(a->bytes, a->size);
  for (int rep = 0; rep < 20; rep++) {
    float x[300], y[300];
    for (int i = 0; i < 300; i++) {
      x[i] = (float)(i + (int)a->seed);
      y[i] = (float)rep;
    }
    vyre_input in[2] = {{x, sizeof x}, {y, sizeof y}};
    vyre_outputs *out = NULL;
    if (a->be->vt->dispatch(a->be, &ref, in, 2, NULL, &out, NULL, NULL) != VYRE_OK) {
      a->failures++;
      continue;
    }
    const float *r = out->items[0].data;
    for (int i = 0; i < 300; i++)
      if (r[i] != 3.0f * x[i] + y[i]) a->failures++;
    a->be->vt->outputs_free(a->be, out);
  }
  return NULL;
}

START_TEST(test_concurrent_callers) {
  vyre_backend *be = tr_new_backend();
  void *bytes;
  size_t size;
  tr_encode(tr_saxpy_program(3.0f), &bytes, &size);
  pthread_t th[4];
  caller_arg args[4];
  for (int i = 0; i < 4; i++) {
    args[i] = (caller_arg){be, bytes, size, 0, (uint32_t)i * 1000};
    ck_assert_int_eq(pthread_create(&th[i], NULL, caller_main, &args[i]), 0);
  }
  for (int i = 0; i < 4; i++) {
    pthread_join(th[i], NULL);
    ck_assert_msg(args[i].failures == 0, "caller %d saw %d wrong results", i, args[i].failures);
  }
  free(bytes);
  be->vt->destroy(be);
}
END_TEST

static Suite *ref_suite(void) {
  Suite *s = suite_create("ref");
  TCase *tc = tcase_create("plugin");
  tcase_add_test(tc, test_descriptor);
  tcase_add_test(tc, test_entry_negotiation);
  tcase_add_test(tc, test_registration);
  tcase_add_test(tc, test_exports_only_two_symbols);
  tcase_add_test(tc, test_create_options);
  suite_add_tcase(s, tc);

  tc = tcase_create("core");
  tcase_set_timeout(tc, 60);
  tcase_add_test(tc, test_saxpy);
  tcase_add_test(tc, test_roles_and_ranges);
  tcase_add_test(tc, test_dispatch_into);
  tcase_add_test(tc, test_loops);
  tcase_add_test(tc, test_return);
  tcase_add_test(tc, test_out_of_bounds);
  tcase_add_test(tc, test_load_store_conversions);
  tcase_add_test(tc, test_atomics_every_op);
  tcase_add_test(tc, test_fixpoint);
  tcase_add_test(tc, test_overrides);
  tcase_add_test(tc, test_ulp_budget);
  tcase_add_test(tc, test_transcendental_accuracy);
  tcase_add_test(tc, test_trap);
  tcase_add_test(tc, test_concurrent_callers);
  suite_add_tcase(s, tc);

  tc = tcase_create("collectives");
  tcase_set_timeout(tc, 60);
  tcase_add_test(tc, test_workgroup_memory_zeroed);
  tcase_add_test(tc, test_block_reduction);
  tcase_add_test(tc, test_subgroups_partial);
  tcase_add_test(tc, test_subgroups_wide_types);
  tcase_add_test(tc, test_reduce_f32_tree);
  tcase_add_test(tc, test_atomics_contention);
  tcase_add_test(tc, test_grid_barrier);
  tcase_add_test(tc, test_state_limit);
  suite_add_tcase(s, tc);

  suite_add_tcase(s, tr_ops_tcase());
  tr_add_api_tcases(s);
  tr_add_limits_tcases(s);
  tr_add_mma_tcases(s);
  tr_add_indirect_tcases(s);
  return s;
}

int main(void) {
  if (load_plugin() != 0) return 99; /* hard error: the plugin under test is missing */
  SRunner *sr = srunner_create(ref_suite());
  srunner_run_all(sr, CK_ENV); /* CK_VERBOSITY=verbose lists every test */
  int failed = srunner_ntests_failed(sr);
  srunner_free(sr);
  /* The plugin stays loaded until exit, as hosts keep it. */
  return failed ? 1 : 0;
}
