/* core.c -- check_cuda_fake's core case: registration, the device profile, dispatch round trips, launch parameters, graphs of sequences, timing, traps, cooperative launches. */
#include <dlfcn.h>

#include "harness.h"

START_TEST(test_registration) {
  ck_assert_str_eq(reg->id, "cuda");
  ck_assert_int_eq(reg->precedence, 5);
  ck_assert_uint_eq(reg->abi_major, VYRE_ABI_MAJOR);
  ck_assert_msg(reg->op_count > 60, "the op list names what codegen lowers (%u ops)",
                reg->op_count);
  int has_add = 0, has_exp = 0;
  for (uint32_t i = 0; i < reg->op_count; i++) {
    has_add |= reg->ops[i] == VYRE_OP_ADD;
    has_exp |= reg->ops[i] == VYRE_OP_EXP;
  }
  ck_assert_msg(has_add, "add is lowered");
  ck_assert_msg(((reg->capabilities & VYRE_CAP_TRANSCENDENTAL) != 0) == (has_exp != 0),
                "the transcendental capability and the exp op are offered together or not");
  /* This build's math library has a correctly rounded variant of every
   * op (ptxmath's PM_CR), which codegen selects under strict. */
  ck_assert_msg(((reg->capabilities & VYRE_CAP_CORRECTLY_ROUNDED) != 0) == (has_exp != 0),
                "correctly_rounded comes with the transcendentals");
  ck_assert_msg(reg->capabilities & VYRE_CAP_RESIDENT, "resident buffers are offered");
  ck_assert_msg(reg->storage_types & (1u << VYRE_T_BF16), "bf16 storage is offered");
  void *dl = dlopen(plugin_path, RTLD_NOW | RTLD_LOCAL);
  ck_assert_ptr_nonnull(dl);
  const vyre_descriptor *d = dlsym(dl, VYRE_PLUGIN_DESCRIPTOR_SYMBOL);
  ck_assert_msg(d != NULL, "vyre_plugin_descriptor is exported");
  ck_assert_uint_eq(d->magic, VYRE_PLUGIN_MAGIC);
  ck_assert_uint_eq(d->abi_major, VYRE_ABI_MAJOR);
  ck_assert_msg(d->release == VYRE_DESCRIPTOR_RELEASE, "the CUDA plugin is a 1.0.0-or-later build");
  ck_assert_uint_eq(d->registration_size, sizeof(vyre_registration));
  ck_assert_uint_eq(d->vtable_size, sizeof(vyre_backend_vtable));
  ck_assert_msg(dlsym(dl, "vc_dispatch") == NULL && dlsym(dl, "cg_emit_ptx") == NULL &&
                    dlsym(dl, "vyre_program_decode") == NULL,
                "the plugin exports nothing but its descriptor and entry");
  vyre_plugin_entry_fn entry = (vyre_plugin_entry_fn)dlsym(dl, VYRE_PLUGIN_ENTRY_SYMBOL);
  const vyre_registration *r2 = NULL;
  vyre_error err = VYRE_ERROR_INIT;
  ck_assert_int_eq(entry(VYRE_ABI_MAJOR + 1, 0, &r2, &err), VYRE_ABI_MISMATCH);
  ck_assert_msg(strstr(err.message, "Fix:") != NULL, "ABI mismatch says how to fix it");
  /* In libvyre's one wording (docs/abi.md section 11), for minors 0 to the headers'. */
  vyre_error want = VYRE_ERROR_INIT;
  ck_assert_int_eq(vyre_check_host_abi("cuda plugin", VYRE_ABI_MAJOR + 1, 0, 0, VYRE_ABI_MINOR,
                                       &want),
                   VYRE_ABI_MISMATCH);
  ck_assert_str_eq(err.message, want.message);
  ck_assert_int_eq(entry(VYRE_ABI_MAJOR, 7, &r2, &err), VYRE_OK);
  ck_assert_uint_eq(r2->abi_minor, VYRE_ABI_MINOR);
  dlclose(dl);
}
END_TEST

START_TEST(test_profile) {
  vyre_backend *b = mk();
  vyre_device_profile p;
  memset(&p, 0, sizeof p);
  p.struct_size = sizeof p;
  vyre_error err = VYRE_ERROR_INIT;
  ck_assert_int_eq(b->vt->device_profile(b, &p, &err), VYRE_OK);
  ck_assert_str_eq(p.name, "Fake CUDA Device");
  ck_assert_str_eq(p.backend_id, "cuda");
  ck_assert_uint_eq(p.compute_major, 9);
  ck_assert_uint_eq(p.compute_units, 132);
  ck_assert_uint_eq(p.subgroup_size, 32);
  ck_assert_uint_eq(p.max_invocations_per_workgroup, 1024);
  ck_assert_uint_eq(p.total_memory, 1ull << 30);
  ck_assert_msg(p.free_memory > 0 && p.free_memory <= p.total_memory, "free memory is probed");
  ck_assert_uint_eq(p.driver_version, 13000);
  ck_assert_uint_eq(p.resident_budget, (uint64_t)((1ull << 30) * 9 / 10));
  ck_assert_msg(p.capabilities & VYRE_CAP_BF16, "sm_90 has bf16");
  ck_assert_msg(p.capabilities & VYRE_CAP_GRID_BARRIER, "cooperative launch gives grid barriers");
  ck_assert_msg((p.capabilities & (VYRE_CAP_TRANSCENDENTAL | VYRE_CAP_CORRECTLY_ROUNDED)) ==
                    (reg->capabilities & (VYRE_CAP_TRANSCENDENTAL | VYRE_CAP_CORRECTLY_ROUNDED)),
                "the device has the transcendentals, correctly rounded, as registered");
  ck_assert_int_eq(b->vt->prepare(b, &err), VYRE_OK);
  ck_assert_uint_eq(metric(b, "pool.streams.cached"), 1);
  const vyre_backend_vtable *vt = b->vt;
  vt->destroy(b);
  vt->destroy(NULL);
  assert_no_leaks_after_destroy("profile");

  /* A smaller profile struct gets only its own bytes. */
  setenv("FAKECUDA_SM", "75", 1);
  setenv("FAKECUDA_COOP", "0", 1);
  fk.reset();
  b = mk();
  struct {
    vyre_device_profile p;
    uint8_t guard[16];
  } small;
  memset(&small, 0xEE, sizeof small);
  small.p.struct_size = 8 + 128;
  ck_assert_int_eq(b->vt->device_profile(b, &small.p, &err), VYRE_OK);
  ck_assert_str_eq(small.p.name, "Fake CUDA Device");
  ck_assert_msg(((uint8_t *)&small.p)[8 + 128] == 0xEE, "nothing past struct_size is written");
  p.struct_size = sizeof p;
  ck_assert_int_eq(b->vt->device_profile(b, &p, &err), VYRE_OK);
  ck_assert_msg(!(p.capabilities & VYRE_CAP_BF16), "sm_75 has no bf16");
  ck_assert_msg(p.capabilities & VYRE_CAP_F16, "sm_75 has f16");
  ck_assert_msg(!(p.capabilities & VYRE_CAP_GRID_BARRIER), "no cooperative launch, no grid barrier");
  b->vt->destroy(b);
}
END_TEST

START_TEST(test_dispatch_roundtrip) {
  vyre_backend *b = mk();
  fk.set_hook(play, NULL);
  hook_mode = 1;
  hook_k = 3;
  const uint32_t n = 1000;
  prog p = prog_scale(n, 3, 128);
  uint32_t in[1000];
  for (uint32_t i = 0; i < n; i++) in[i] = i + 1;
  vyre_outputs *out = NULL;
  vyre_error err = VYRE_ERROR_INIT;
  ck_assert_msg(run_scale(b, &p, n, in, &out, NULL, &err) == VYRE_OK, "dispatch: %s", err.message);
  ck_assert_uint_eq(out->count, 1);
  ck_assert_uint_eq(out->items[0].size, n * 4);
  const uint32_t *o = out->items[0].data;
  for (uint32_t i = 0; i < n; i++) ck_assert_uint_eq(o[i], (i + 1) * 3);
  b->vt->outputs_free(b, out);
  b->vt->outputs_free(b, NULL);
  ck_assert_uint_eq(fk.pageable_copies(), 0);

  /* The launch: logical grid ceil(1000/128) = 8, block 128, parameters
   * (in, out, counts, params), counts = {count, len(in), len(out)} by
   * value, params = 0 (no trap or grid words). */
  ck_assert_uint_eq(fk.launch_count(), 1);
  fakecuda_launch l;
  ck_assert_int_eq(fk.launch_get(0, &l), 0);
  ck_assert_uint_eq(l.nparams, 4);
  ck_assert_uint_eq(l.counts_bytes, 12);
  ck_assert_uint_eq(l.counts[0], n);
  ck_assert_uint_eq(l.counts[1], n);
  ck_assert_uint_eq(l.params[3], 0);
  ck_assert_uint_eq(l.block[0], 128);
  ck_assert_uint_eq(l.block[1], 1);
  ck_assert_uint_eq(l.grid[1], 1);
  if (metric(b, "dispatch.fastpath_launches") == 0) {
    ck_assert_msg(l.grid[0] == 8, "logical grid: ceil(1000 / 128) workgroups, got %u", l.grid[0]);
  } else {
    /* Elementwise path: ceil(n / (wg.x * elements_per_thread)) blocks,
     * fewer than the logical grid, still covering every element. */
    uint32_t ept = (n + l.grid[0] * 128 - 1) / (l.grid[0] * 128);
    ck_assert_msg(ept >= 2 && l.grid[0] == (n + 128 * ept - 1) / (128 * ept),
                  "elementwise grid %u for %u elements of workgroup 128", l.grid[0], n);
  }
  ck_assert_int_eq(l.cooperative, 0);
  ck_assert_msg(l.stream != NULL, "launches go to a plugin stream, not the legacy stream");

  /* Outputs start zeroed: with no kernel at all the fake's garbage must
   * not show through. */
  hook_mode = 0;
  ck_assert_int_eq(run_scale(b, &p, n, in, &out, NULL, &err), VYRE_OK);
  for (uint32_t i = 0; i < n; i++) ck_assert_uint_eq(((uint32_t *)out->items[0].data)[i], 0);
  b->vt->outputs_free(b, out);
  b->vt->destroy(b);
  assert_no_leaks_after_destroy("roundtrip");
  free(p.bytes);
}
END_TEST

/* The count words a launch passed by value, and its params block pointer,
 * seen by a hook. */
static uint32_t seen_params[16];
static unsigned seen_counts_bytes;
static unsigned long long seen_block;
static void grab_params(const fakecuda_launch *l, void *user) {
  (void)user;
  memcpy(seen_params, l->counts, sizeof seen_params);
  seen_counts_bytes = l->counts_bytes;
  seen_block = l->params[l->nparams - 1];
}

START_TEST(test_params_and_ranges) {
  vyre_backend *b = mk();
  fk.set_hook(grab_params, NULL);
  prog p = prog_scale(300, 2, 64);
  uint32_t in[250] = {0};
  vyre_outputs *out = NULL;
  vyre_error err = VYRE_ERROR_INIT;
  ck_assert_int_eq(run_scale(b, &p, 250, in, &out, NULL, &err), VYRE_OK);
  ck_assert_msg(seen_params[0] == 300, "word 0 is the element count (max over outputs): %u",
                seen_params[0]);
  ck_assert_uint_eq(seen_params[1], 250);
  ck_assert_uint_eq(seen_params[2], 300);
  ck_assert_msg(seen_counts_bytes == 4 * (1 + 2), "counts: word 0 and one per buffer (%u bytes)",
                seen_counts_bytes);
  ck_assert_msg(seen_block == 0, "a kernel without trap or grid words gets no params block");
  b->vt->outputs_free(b, out);
  ck_assert_uint_eq(metric(b, "dispatch.params_skipped"), 1);

  /* Nothing but the input is uploaded, and other sizes reach the kernel. */
  unsigned long h2d = fk.calls("cuMemcpyHtoDAsync");
  ck_assert_int_eq(run_scale(b, &p, 200, in, &out, NULL, &err), VYRE_OK);
  b->vt->outputs_free(b, out);
  ck_assert_msg(fk.calls("cuMemcpyHtoDAsync") == h2d + 1, "only the input is uploaded (%lu)",
                fk.calls("cuMemcpyHtoDAsync") - h2d);
  ck_assert_uint_eq(metric(b, "dispatch.params_skipped"), 2);
  ck_assert_msg(seen_params[1] == 200, "new sizes reach the kernel: %u", seen_params[1]);
  free(p.bytes);
  /* A kernel that writes its params (trap words) gets a block, uploaded
   * zeroed before every launch, and the counts by value too. */
  p = prog_trap(64);
  vyre_program_ref tr = ref_of(&p);
  for (int k = 0; k < 2; k++) {
    h2d = fk.calls("cuMemcpyHtoDAsync");
    vyre_status ts = b->vt->dispatch(b, &tr, NULL, 0, NULL, &out, NULL, &err);
    if (ts == VYRE_OK) b->vt->outputs_free(b, out);
    ck_assert_msg(seen_block != 0, "a trap kernel has its params block");
    ck_assert_uint_eq(fk.calls("cuMemcpyHtoDAsync"), h2d + 1);
    const uint32_t *blk = (const uint32_t *)(uintptr_t)seen_block;
    ck_assert_msg(blk[0] == seen_params[0] && blk[2] == 0 && blk[3] == 0,
                  "the block holds the same words, trap words zeroed");
  }
  ck_assert_uint_eq(metric(b, "dispatch.params_skipped"), 2);
  free(p.bytes);

  /* Ranged output: only bytes [40, 40 + 24) of 100 u32 come back. */
  fk.set_hook(play, NULL);
  hook_mode = 4;
  p = prog_range(100, 40, 24);
  vyre_program_ref r = ref_of(&p);
  ck_assert_int_eq(b->vt->dispatch(b, &r, NULL, 0, NULL, &out, NULL, &err), VYRE_OK);
  ck_assert_uint_eq(out->items[0].size, 24);
  for (uint32_t i = 0; i < 6; i++) ck_assert_uint_eq(((uint32_t *)out->items[0].data)[i], 10 + i);
  b->vt->outputs_free(b, out);

  /* dispatch_into: a slot too small is refused before anything runs. */
  unsigned long launches = fk.launch_count();
  uint8_t small[16];
  memset(small, 0x77, sizeof small);
  vyre_output_slot slot = {small, sizeof small, 0};
  ck_assert_int_eq(b->vt->dispatch_into(b, &r, NULL, 0, NULL, &slot, 1, NULL, &err),
                   VYRE_INVALID_ARGUMENT);
  ck_assert_msg(strstr(err.message, "needs 24 bytes") != NULL, "names the size needed: %s",
                err.message);
  ck_assert_uint_eq(fk.launch_count(), launches);
  ck_assert_uint_eq(small[0], 0x77);
  ck_assert_int_eq(b->vt->dispatch_into(b, &r, NULL, 0, NULL, &slot, 2, NULL, &err),
                   VYRE_INVALID_ARGUMENT);
  uint32_t big[8];
  vyre_output_slot ok = {big, sizeof big, 0};
  ck_assert_int_eq(b->vt->dispatch_into(b, &r, NULL, 0, NULL, &ok, 1, NULL, &err), VYRE_OK);
  ck_assert_uint_eq(ok.size, 24);
  ck_assert_uint_eq(big[0], 10);
  b->vt->destroy(b);
  free(p.bytes);
}
END_TEST

START_TEST(test_timing_fixpoint_grid) {
  vyre_backend *b = mk();
  prog p = prog_inc(64);
  uint32_t data[256] = {0};
  vyre_input in[1] = {{data, sizeof data}};
  vyre_program_ref r = ref_of(&p);
  vyre_dispatch_options o;
  memset(&o, 0, sizeof o);
  o.struct_size = sizeof o;
  o.fixpoint_iterations = 5;
  vyre_timing t;
  memset(&t, 0, sizeof t);
  t.struct_size = sizeof t;
  vyre_outputs *out = NULL;
  vyre_error err = VYRE_ERROR_INIT;
  fk.set_hook(play, NULL);
  hook_mode = 2;
  ck_assert_int_eq(b->vt->dispatch(b, &r, in, 1, &o, &out, &t, &err), VYRE_OK);
  ck_assert_uint_eq(fk.launch_count(), 5);
  ck_assert_uint_eq(((uint32_t *)out->items[0].data)[17], 5);
  ck_assert_msg((t.valid & (VYRE_TIMING_WALL | VYRE_TIMING_DEVICE | VYRE_TIMING_ENQUEUE |
                            VYRE_TIMING_WAIT)) ==
                    (VYRE_TIMING_WALL | VYRE_TIMING_DEVICE | VYRE_TIMING_ENQUEUE | VYRE_TIMING_WAIT),
                "all four timings are filled (valid 0x%x)", t.valid);
  ck_assert_msg(t.device_ns >= 4000 && t.device_ns <= 6000,
                "device time spans the 5 launches (fake: 1 us per operation): %llu ns",
                (unsigned long long)t.device_ns);
  ck_assert_msg(t.wall_ns >= t.enqueue_ns, "wall covers enqueue");
  b->vt->outputs_free(b, out);

  /* A grid override launches exactly that grid and turns the fast path off. */
  memset(&o, 0, sizeof o);
  o.struct_size = sizeof o;
  o.grid[0] = 3;
  o.grid[1] = 2;
  uint64_t compiles = metric(b, "cache.module.compiles");
  ck_assert_int_eq(b->vt->dispatch(b, &r, in, 1, &o, &out, NULL, &err), VYRE_OK);
  fakecuda_launch l;
  fk.launch_get(fk.launch_count() - 1, &l);
  ck_assert_uint_eq(l.grid[0], 3);
  ck_assert_uint_eq(l.grid[1], 2);
  ck_assert_uint_eq(l.grid[2], 1);
  ck_assert_uint_eq(metric(b, "cache.module.compiles"), compiles + 1);
  b->vt->outputs_free(b, out);

  /* A workgroup override is compiled in and launched. */
  o.grid[0] = o.grid[1] = 0;
  o.workgroup[0] = 32;
  ck_assert_int_eq(b->vt->dispatch(b, &r, in, 1, &o, &out, NULL, &err), VYRE_OK);
  fk.launch_get(fk.launch_count() - 1, &l);
  ck_assert_uint_eq(l.block[0], 32);
  b->vt->outputs_free(b, out);

  /* A smaller timing struct is honoured. */
  struct {
    uint32_t size, valid;
    uint64_t wall;
    uint64_t guard;
  } tiny = {16, 0, 0, 0xDEADull};
  ck_assert_int_eq(b->vt->dispatch(b, &r, in, 1, NULL, &out, (vyre_timing *)&tiny, &err), VYRE_OK);
  ck_assert_msg(tiny.valid & VYRE_TIMING_WALL, "wall time written");
  ck_assert_msg(tiny.guard == 0xDEADull, "nothing past struct_size is written");
  b->vt->outputs_free(b, out);
  b->vt->destroy(b);
  assert_no_leaks_after_destroy("timing");
  free(p.bytes);
}
END_TEST

START_TEST(test_trap_and_empty) {
  vyre_backend *b = mk();
  fk.set_hook(play, NULL);
  hook_mode = 3;
  prog p = prog_trap(64);
  vyre_program_ref r = ref_of(&p);
  vyre_outputs *out = NULL;
  vyre_error err = VYRE_ERROR_INIT;
  ck_assert_int_eq(b->vt->dispatch(b, &r, NULL, 0, NULL, &out, NULL, &err), VYRE_TRAP);
  ck_assert_ptr_null(out);
  ck_assert_int_eq(err.native_code, 7);
  ck_assert_msg(strstr(err.message, "trap code 7 at instruction 4") && strstr(err.message, "Fix:"),
                "names code and instruction: %s", err.message);
  ck_assert_uint_eq(metric(b, "dispatch.traps"), 1);
  /* Still usable; the trap words of the next run start at zero. */
  hook_mode = 0;
  ck_assert_int_eq(b->vt->dispatch(b, &r, NULL, 0, NULL, &out, NULL, &err), VYRE_OK);
  b->vt->outputs_free(b, out);
  free(p.bytes);

  /* No elements: nothing is launched, outputs are empty. */
  p = prog_inc(64);
  r = ref_of(&p);
  unsigned long launches = fk.launch_count();
  uint32_t dummy = 0;
  vyre_input in[1] = {{&dummy, 0}};
  ck_assert_int_eq(b->vt->dispatch(b, &r, in, 1, NULL, &out, NULL, &err), VYRE_OK);
  ck_assert_uint_eq(fk.launch_count(), launches);
  ck_assert_uint_eq(out->count, 1);
  ck_assert_uint_eq(out->items[0].size, 0);
  b->vt->outputs_free(b, out);
  b->vt->destroy(b);
  assert_no_leaks_after_destroy("trap");
  free(p.bytes);
}
END_TEST

/* A repeated sequence of pipeline steps checked once: later calls with the
 * same step list find its graph by the list as passed (graph.fast_hits),
 * resolve nothing, and still refuse a released pipeline or a freed buffer. */
START_TEST(test_graph_fast_path) {
  vyre_backend *b = mk();
  fk.set_hook(play, NULL);
  hook_mode = 2;
  prog p = prog_inc(64);
  vyre_error err = VYRE_ERROR_INIT;
  vyre_pipeline pl = 0;
  ck_assert_int_eq(b->vt->pipeline_create(b, p.bytes, p.size, NULL, &pl, &err), VYRE_OK);
  vyre_program_ref r = VYRE_PROGRAM_PIPELINE(pl);
  vyre_resident a = 0, c = 0;
  ck_assert_int_eq(b->vt->resident_alloc(b, 1024, &a, &err), VYRE_OK);
  ck_assert_int_eq(b->vt->resident_alloc(b, 512, &c, &err), VYRE_OK);
  vyre_sequence_step steps[3];
  memset(steps, 0, sizeof steps);
  for (int i = 0; i < 3; i++) {
    steps[i].struct_size = sizeof steps[i];
    steps[i].program = &r;
    steps[i].buffer_count = 1;
    steps[i].buffers = i == 1 ? &c : &a;
  }
  uint32_t first[2];
  vyre_resident_copy read = {a, 0, first, sizeof first};
  unsigned long captures = fk.calls("cuStreamBeginCapture");
  /* a: +2 per replay, c: +1; 3 replays, then 5, then 2. */
  ck_assert_int_eq(b->vt->dispatch_sequence(b, steps, 3, 3, &read, 1, NULL, &err), VYRE_OK);
  ck_assert_uint_eq(first[0], 6);
  ck_assert_uint_eq(metric(b, "graph.fast_hits"), 0);
  uint64_t launches = metric(b, "dispatch.launches");
  ck_assert_int_eq(b->vt->dispatch_sequence(b, steps, 3, 5, &read, 1, NULL, &err), VYRE_OK);
  ck_assert_uint_eq(first[0], 16);
  ck_assert_uint_eq(metric(b, "graph.fast_hits"), 1);
  ck_assert_uint_eq(metric(b, "dispatch.launches") - launches, 15);
  ck_assert_uint_eq(fk.calls("cuStreamBeginCapture") - captures, 1);
  /* Options are part of the list: two fixpoint iterations are another graph. */
  vyre_dispatch_options o;
  memset(&o, 0, sizeof o);
  o.struct_size = sizeof o;
  o.fixpoint_iterations = 2;
  steps[2].options = &o;
  ck_assert_int_eq(b->vt->dispatch_sequence(b, steps, 3, 2, &read, 1, NULL, &err), VYRE_OK);
  ck_assert_uint_eq(first[0], 16 + 2 * 3);
  ck_assert_uint_eq(fk.calls("cuStreamBeginCapture") - captures, 2);
  ck_assert_uint_eq(metric(b, "graph.fast_hits"), 1);
  ck_assert_int_eq(b->vt->dispatch_sequence(b, steps, 3, 2, &read, 1, NULL, &err), VYRE_OK);
  ck_assert_uint_eq(first[0], 22 + 2 * 3);
  ck_assert_uint_eq(metric(b, "graph.fast_hits"), 2);
  /* A read out of range is still refused before anything runs. */
  unsigned long before = fk.launch_count();
  vyre_resident_copy bad = {a, 2000, first, 16};
  ck_assert_int_eq(b->vt->dispatch_sequence(b, steps, 3, 2, &bad, 1, NULL, &err),
                   VYRE_INVALID_ARGUMENT);
  ck_assert_uint_eq(fk.launch_count(), before);
  /* A freed buffer drops the graphs using it: the stale handle is refused. */
  ck_assert_int_eq(b->vt->resident_free(b, c, &err), VYRE_OK);
  ck_assert_int_eq(b->vt->dispatch_sequence(b, steps, 3, 2, &read, 1, NULL, &err),
                   VYRE_INVALID_HANDLE);
  ck_assert_uint_eq(fk.launch_count(), before);
  /* A released pipeline's handle is refused, though a graph still matches. */
  steps[1].buffers = &a;
  steps[2].options = NULL;
  ck_assert_int_eq(b->vt->dispatch_sequence(b, steps, 3, 2, &read, 1, NULL, &err), VYRE_OK);
  ck_assert_int_eq(b->vt->dispatch_sequence(b, steps, 3, 2, &read, 1, NULL, &err), VYRE_OK);
  uint64_t hits = metric(b, "graph.fast_hits");
  ck_assert_uint_eq(metric(b, "graph.entries"), 1);
  before = fk.launch_count();
  ck_assert_int_eq(b->vt->pipeline_release(b, pl, &err), VYRE_OK);
  ck_assert_int_eq(b->vt->dispatch_sequence(b, steps, 3, 2, &read, 1, NULL, &err),
                   VYRE_INVALID_HANDLE);
  ck_assert_uint_eq(fk.launch_count(), before);
  /* (the fast key matched; the handle check sent it to the full path) */
  ck_assert_uint_eq(metric(b, "graph.fast_hits"), hits + 1);
  b->vt->destroy(b);
  assert_no_leaks_after_destroy("graph fast path");
  free(p.bytes);
}
END_TEST

START_TEST(test_cooperative) {
  setenv("FAKECUDA_MAX_BLOCKS_PER_SM", "2", 1);
  setenv("FAKECUDA_SMS", "4", 1);
  fk.reset();
  vyre_backend *b = mk();
  vyre_error err = VYRE_ERROR_INIT;
  vyre_outputs *out = NULL;
  prog p = prog_grid(8 * 64, 64); /* 8 workgroups = 2 per SM x 4 SMs: fits */
  vyre_program_ref r = ref_of(&p);
  ck_assert_int_eq(b->vt->dispatch(b, &r, NULL, 0, NULL, &out, NULL, &err), VYRE_OK);
  b->vt->outputs_free(b, out);
  fakecuda_launch l;
  fk.launch_get(fk.launch_count() - 1, &l);
  ck_assert_int_eq(l.cooperative, 1);
  ck_assert_uint_eq(l.grid[0], 8);
  free(p.bytes);
  p = prog_grid(9 * 64, 64);
  r = ref_of(&p);
  unsigned long launches = fk.launch_count();
  ck_assert_int_eq(b->vt->dispatch(b, &r, NULL, 0, NULL, &out, NULL, &err), VYRE_LIMIT);
  ck_assert_msg(strstr(err.message, "9 workgroups") && strstr(err.message, "fits only 8") &&
                    strstr(err.message, "Fix: use at most 8"),
                "refusal names the limit: %s", err.message);
  ck_assert_uint_eq(fk.launch_count(), launches);
  /* A grid override within the limit works. */
  vyre_dispatch_options o;
  memset(&o, 0, sizeof o);
  o.struct_size = sizeof o;
  o.grid[0] = 4;
  ck_assert_int_eq(b->vt->dispatch(b, &r, NULL, 0, &o, &out, NULL, &err), VYRE_OK);
  b->vt->outputs_free(b, out);
  b->vt->destroy(b);
  assert_no_leaks_after_destroy("cooperative");
  free(p.bytes);
}
END_TEST

void fake_core_tests(TCase *tc) {
  tcase_add_test(tc, test_registration);
  tcase_add_test(tc, test_profile);
  tcase_add_test(tc, test_dispatch_roundtrip);
  tcase_add_test(tc, test_params_and_ranges);
  tcase_add_test(tc, test_graph_fast_path);
  tcase_add_test(tc, test_timing_fixpoint_grid);
  tcase_add_test(tc, test_trap_and_empty);
  tcase_add_test(tc, test_cooperative);
}
