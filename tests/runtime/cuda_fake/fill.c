/* fill.c -- fill steps on the fake driver: a program whose whole effect is `store buf[gid] = constant` runs as one memset of the right word, value and count (direct, in a sequence, in a captured graph, through pipelines); near-fills launch their kernel. */
#include "harness.h"

static prog fin(vyre_builder *b) {
  prog p = {NULL, 0};
  vyre_error err = VYRE_ERROR_INIT;
  ck_assert_msg(vyre_builder_finish(b, &p.bytes, &p.size, &err) == VYRE_OK, "%s", err.message);
  vyre_builder_free(b);
  return p;
}

/* buf (elem, rw, sized by the buffer)[gid] = v, v a constant of type t;
 * with guard < UINT32_MAX, behind `if (gid >= guard) return`. */
static prog prog_fill(vyre_type elem, vyre_type t, uint64_t bits, uint32_t guard) {
  vyre_builder *b = vyre_builder_new(64, 1, 1);
  uint32_t buf = vyre_b_buffer(b, "buf", UINT32_MAX, VYRE_ACCESS_READ_WRITE, elem, 0, 0);
  uint32_t g = vyre_b_gid(b, 0);
  if (guard != UINT32_MAX) {
    vyre_b_if(b, vyre_b_bin(b, VYRE_OP_GE, g, vyre_b_u32(b, guard)));
    vyre_b_return(b);
    vyre_b_end(b);
  }
  vyre_b_store(b, buf, g, vyre_b_const(b, t, bits));
  return fin(b);
}

/* Near-fills: 0 stores gid, 1 a constant at gid + 1, 2 a constant plus
 * a load, 3 a constant into an f16 buffer (the store rounds). */
static prog prog_near(int kind) {
  vyre_builder *b = vyre_builder_new(64, 1, 1);
  vyre_type elem = kind == 3 ? VYRE_T_F16 : VYRE_T_U32;
  uint32_t buf = vyre_b_buffer(b, "buf", UINT32_MAX, VYRE_ACCESS_READ_WRITE, elem, 0, 0);
  uint32_t g = vyre_b_gid(b, 0);
  if (kind == 0) vyre_b_store(b, buf, g, g);
  if (kind == 1) vyre_b_store(b, buf, vyre_b_bin(b, VYRE_OP_ADD, g, vyre_b_u32(b, 1)), vyre_b_u32(b, 7));
  if (kind == 2)
    vyre_b_store(b, buf, g, vyre_b_bin(b, VYRE_OP_ADD, vyre_b_load(b, buf, g), vyre_b_u32(b, 7)));
  if (kind == 3) vyre_b_store(b, buf, g, vyre_b_f32(b, 0.1f));
  return fin(b);
}

/* The index-th fakecuda op from `from` on that is a memset (-1: none). */
static long next_memset(unsigned long from, fakecuda_op *op) {
  for (unsigned long i = from; i < fk.op_count(); i++) {
    ck_assert_int_eq(fk.op_get(i, op), 0);
    if (!strncmp(op->call, "cuMemsetD", 9)) return (long)i;
  }
  return -1;
}

static CUdeviceptr dev_of(vyre_backend *b, vyre_resident h) {
  uint64_t p = 0;
  vyre_error err = VYRE_ERROR_INIT;
  ck_assert_int_eq(interop_of(b)->resident_pointer(b, h, &p, NULL, &err), VYRE_OK);
  return (CUdeviceptr)p;
}

/* Dispatch p alone on h; how many kernels it launched. */
static unsigned long run_one(vyre_backend *b, prog *p, vyre_resident h) {
  vyre_error err = VYRE_ERROR_INIT;
  vyre_program_ref r = ref_of(p);
  unsigned long before = fk.launch_count();
  ck_assert_msg(b->vt->dispatch_resident(b, &r, &h, 1, NULL, NULL, &err) == VYRE_OK, "%s",
                err.message);
  return fk.launch_count() - before;
}

START_TEST(test_fill_memset) {
  vyre_backend *b = mk();
  vyre_error err = VYRE_ERROR_INIT;
  vyre_resident h;
  ck_assert_int_eq(b->vt->resident_alloc(b, 4096, &h, &err), VYRE_OK);
  prog p = prog_fill(VYRE_T_U32, VYRE_T_U32, 0xdeadbeefu, UINT32_MAX);
  unsigned long ops = fk.op_count();
  ck_assert_msg(run_one(b, &p, h) == 0, "a fill launches no kernel");
  fakecuda_op op;
  long at = next_memset(ops, &op);
  ck_assert_msg(at >= 0, "a fill is one memset");
  ck_assert_str_eq(op.call, "cuMemsetD32Async");
  ck_assert_uint_eq(op.unit, 4);
  ck_assert_uint_eq(op.value, 0xdeadbeefu);
  ck_assert_uint_eq(op.words, 1024);
  ck_assert_uint_eq(op.dst, dev_of(b, h));
  ck_assert_msg(next_memset((unsigned long)at + 1, &op) < 0, "exactly one memset");
  uint32_t back[1024];
  ck_assert_int_eq(b->vt->resident_download(b, h, back, sizeof back, &err), VYRE_OK);
  for (int i = 0; i < 1024; i++) ck_assert_uint_eq(back[i], 0xdeadbeefu);
  ck_assert_uint_eq(metric(b, "dispatch.fills"), 1);
  ck_assert_uint_eq(metric(b, "dispatch.launches"), 0);
  free(p.bytes);
  /* A guard `gid >= 100: return` bounds it: 100 words, the rest kept. */
  p = prog_fill(VYRE_T_I32, VYRE_T_I32, 5, 100);
  ops = fk.op_count();
  ck_assert_uint_eq(run_one(b, &p, h), 0);
  ck_assert_int_ge(next_memset(ops, &op), 0);
  ck_assert_uint_eq(op.words, 100);
  ck_assert_uint_eq(op.value, 5);
  ck_assert_int_eq(b->vt->resident_download(b, h, back, sizeof back, &err), VYRE_OK);
  ck_assert_uint_eq(back[99], 5);
  ck_assert_uint_eq(back[100], 0xdeadbeefu);
  free(p.bytes);
  /* u8 elements: D8 over the bytes, the constant's low byte. */
  p = prog_fill(VYRE_T_U8, VYRE_T_U32, 0x1abu, UINT32_MAX);
  ops = fk.op_count();
  ck_assert_uint_eq(run_one(b, &p, h), 0);
  ck_assert_int_ge(next_memset(ops, &op), 0);
  ck_assert_str_eq(op.call, "cuMemsetD8Async");
  ck_assert_uint_eq(op.words, 4096);
  ck_assert_uint_eq(op.value, 0xab);
  free(p.bytes);
  /* u16: D16.  u64 with equal halves: D32 over twice the words. */
  p = prog_fill(VYRE_T_U16, VYRE_T_U32, 0x12345u, UINT32_MAX);
  ops = fk.op_count();
  ck_assert_uint_eq(run_one(b, &p, h), 0);
  ck_assert_int_ge(next_memset(ops, &op), 0);
  ck_assert_str_eq(op.call, "cuMemsetD16Async");
  ck_assert_uint_eq(op.words, 2048);
  ck_assert_uint_eq(op.value, 0x2345);
  free(p.bytes);
  p = prog_fill(VYRE_T_U64, VYRE_T_U64, 0x0000000700000007ull, UINT32_MAX);
  ops = fk.op_count();
  ck_assert_uint_eq(run_one(b, &p, h), 0);
  ck_assert_int_ge(next_memset(ops, &op), 0);
  ck_assert_str_eq(op.call, "cuMemsetD32Async");
  ck_assert_uint_eq(op.words, 1024);
  ck_assert_uint_eq(op.value, 7);
  free(p.bytes);
  /* ... unequal halves are no one-word pattern: a kernel. */
  p = prog_fill(VYRE_T_U64, VYRE_T_U64, 0x0000000100000002ull, UINT32_MAX);
  ck_assert_uint_eq(run_one(b, &p, h), 1);
  free(p.bytes);
  ck_assert_uint_eq(metric(b, "dispatch.fills"), 5);
  b->vt->destroy(b);
  assert_no_leaks_after_destroy("fills");
}
END_TEST

START_TEST(test_fill_near) {
  vyre_backend *b = mk();
  vyre_error err = VYRE_ERROR_INIT;
  vyre_resident h;
  ck_assert_int_eq(b->vt->resident_alloc(b, 4096, &h, &err), VYRE_OK);
  for (int kind = 0; kind < 4; kind++) {
    prog p = prog_near(kind);
    unsigned long ops = fk.op_count();
    fakecuda_op op;
    ck_assert_msg(run_one(b, &p, h) == 1, "near-fill %d launches its kernel", kind);
    ck_assert_msg(next_memset(ops, &op) < 0, "near-fill %d is no memset", kind);
    free(p.bytes);
  }
  ck_assert_uint_eq(metric(b, "dispatch.fills"), 0);
  ck_assert_uint_eq(metric(b, "dispatch.launches"), 4);
  b->vt->destroy(b);
  assert_no_leaks_after_destroy("near fills");
}
END_TEST

/* Steps: fill(a) with 9, inc(c) (another size: not fused), fill(a) with 3
 * through u8 elements; once, then repeated (a captured graph), then the
 * same through pipelines (the graph found by the fast key). */
START_TEST(test_fill_sequence) {
  vyre_backend *b = mk();
  vyre_error err = VYRE_ERROR_INIT;
  vyre_resident h[2];
  ck_assert_int_eq(b->vt->resident_alloc(b, 4096, &h[0], &err), VYRE_OK);
  ck_assert_int_eq(b->vt->resident_alloc(b, 8192, &h[1], &err), VYRE_OK);
  prog p[3] = {prog_fill(VYRE_T_U32, VYRE_T_U32, 9, UINT32_MAX), prog_inc(64),
               prog_fill(VYRE_T_U8, VYRE_T_U32, 3, UINT32_MAX)};
  vyre_program_ref r[3];
  vyre_sequence_step s[3];
  memset(s, 0, sizeof s);
  for (int i = 0; i < 3; i++) {
    r[i] = ref_of(&p[i]);
    s[i].struct_size = sizeof s[i];
    s[i].program = &r[i];
    s[i].buffers = &h[i == 1];
    s[i].buffer_count = 1;
  }
  unsigned long ops = fk.op_count(), launches = fk.launch_count();
  ck_assert_int_eq(b->vt->dispatch_sequence(b, s, 3, 1, NULL, 0, NULL, &err), VYRE_OK);
  ck_assert_uint_eq(fk.launch_count() - launches, 1);
  fakecuda_op op;
  long at = next_memset(ops, &op);
  ck_assert_int_ge(at, 0);
  ck_assert_str_eq(op.call, "cuMemsetD32Async");
  ck_assert_uint_eq(op.value, 9);
  at = next_memset((unsigned long)at + 1, &op);
  ck_assert_int_ge(at, 0);
  ck_assert_str_eq(op.call, "cuMemsetD8Async");
  ck_assert_uint_eq(op.words, 4096);
  ck_assert_uint_eq(op.value, 3);
  ck_assert_uint_eq(metric(b, "dispatch.fills"), 2);
  /* Repeated: captured once (memset nodes), replayed; each replay's
   * memsets run from the graph.  From round 2 through pipelines: round 3
   * finds the graph by the step list as passed (the fast path). */
  for (int round = 0; round < 4; round++) {
    if (round == 2)
      for (int i = 0; i < 3; i++) {
        vyre_pipeline pl;
        ck_assert_int_eq(b->vt->pipeline_create(b, p[i].bytes, p[i].size, NULL, &pl, &err),
                         VYRE_OK);
        r[i] = (vyre_program_ref)VYRE_PROGRAM_PIPELINE(pl);
      }
    ops = fk.op_count();
    launches = fk.launch_count();
    ck_assert_int_eq(b->vt->dispatch_sequence(b, s, 3, 4, NULL, 0, NULL, &err), VYRE_OK);
    ck_assert_uint_eq(fk.launch_count() - launches, 4);
    int graph_memsets = 0;
    for (at = next_memset(ops, &op); at >= 0; at = next_memset((unsigned long)at + 1, &op)) {
      ck_assert_msg(op.from_graph, "the memsets of a repeated sequence run in its graph");
      graph_memsets++;
    }
    ck_assert_int_eq(graph_memsets, 8);
  }
  ck_assert_uint_eq(metric(b, "graph.fast_hits"), 1);
  ck_assert_uint_eq(fk.calls("cuStreamBeginCapture"), 1);
  ck_assert_uint_eq(metric(b, "dispatch.fills"), 2 + 4 * 8);
  uint8_t back[4096];
  ck_assert_int_eq(b->vt->resident_download(b, h[0], back, sizeof back, &err), VYRE_OK);
  for (int i = 0; i < 4096; i++) ck_assert_uint_eq(back[i], 3);
  for (int i = 0; i < 3; i++) {
    b->vt->pipeline_release(b, r[i].pipeline, NULL);
    free(p[i].bytes);
  }
  b->vt->destroy(b);
  assert_no_leaks_after_destroy("fill sequence");
}
END_TEST

/* Host dispatch of a fill over `n` u32 inputs (grid override gx when
 * non-zero): the memset words in total, and out[] checked against what
 * the kernel writes (the pattern below `covered`, the input above). */
static uint64_t run_host(vyre_backend *b, prog *p, uint32_t n, uint32_t gx, uint32_t covered) {
  uint32_t *in = malloc((size_t)n * 4u);
  ck_assert_ptr_nonnull(in);
  for (uint32_t i = 0; i < n; i++) in[i] = i * 2654435761u;
  vyre_input inputs[1] = {{in, (uint64_t)n * 4u}};
  vyre_program_ref r = ref_of(p);
  vyre_dispatch_options o;
  memset(&o, 0, sizeof o);
  o.struct_size = sizeof o;
  o.grid[0] = gx;
  o.grid[1] = o.grid[2] = gx ? 1 : 0;
  vyre_outputs *out = NULL;
  vyre_error err = VYRE_ERROR_INIT;
  unsigned long ops = fk.op_count(), launches = fk.launch_count();
  ck_assert_msg(b->vt->dispatch(b, &r, inputs, 1, &o, &out, NULL, &err) == VYRE_OK, "%s",
                err.message);
  ck_assert_uint_eq(fk.launch_count() - launches, 0);
  uint64_t words = 0;
  fakecuda_op op;
  for (long at = next_memset(ops, &op); at >= 0; at = next_memset((unsigned long)at + 1, &op))
    if (op.unit == 4 && op.value == 0x55u) words += op.words;
  const uint32_t *got = out->items[0].data;
  for (uint32_t i = 0; i < n; i++)
    ck_assert_msg(got[i] == (i < covered ? 0x55u : in[i]), "element %u", i);
  b->vt->outputs_free(b, out);
  free(in);
  return words;
}

START_TEST(test_fill_host) {
  setenv("VYRE_CUDA_SPLIT_CHUNK", "1M", 1);
  vyre_backend *b = mk();
  prog p = prog_fill(VYRE_T_U32, VYRE_T_U32, 0x55u, UINT32_MAX);
  ck_assert_uint_eq(run_host(b, &p, 1024, 0, 1024), 1024);
  /* A grid override (the general path): 3 workgroups of 64 run. */
  ck_assert_uint_eq(run_host(b, &p, 1024, 3, 192), 192);
  /* Chunked (1 MiB chunks of 131,072 elements): each chunk its own. */
  ck_assert_uint_eq(run_host(b, &p, 300000, 0, 300000), 300000);
  ck_assert_uint_ge(metric(b, "dispatch.split"), 1);
  ck_assert_uint_ge(metric(b, "dispatch.fills"), 2 + 3);
  free(p.bytes);
  b->vt->destroy(b);
  assert_no_leaks_after_destroy("host fills");
  unsetenv("VYRE_CUDA_SPLIT_CHUNK");
}
END_TEST

void fake_fill_tests(TCase *tc) {
  tcase_add_test(tc, test_fill_host);
  tcase_add_test(tc, test_fill_memset);
  tcase_add_test(tc, test_fill_near);
  tcase_add_test(tc, test_fill_sequence);
}
