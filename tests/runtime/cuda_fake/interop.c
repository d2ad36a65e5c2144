/* interop.c -- check_cuda_fake's interop case: the CUDA interop extension (vyre_cuda.h), imports, graphs and the host's stream. */
#include "harness.h"

/* The test plays the host application: it makes device memory and
 * streams itself, through the fake's entry points, in a context it
 * retained (so its memory outlives the instance, as a host's would). */
static CUcontext host_retain(CUdevice dev) {
  CUcontext ctx = NULL;
  ck_assert_int_eq(host.retain(&ctx, dev), CUDA_SUCCESS);
  return ctx;
}

static CUdeviceptr host_mem(CUcontext ctx, size_t n) {
  CUdeviceptr p = 0;
  CUcontext popped;
  ck_assert_int_eq(host.push(ctx), CUDA_SUCCESS);
  ck_assert_int_eq(host.mem_alloc(&p, n), CUDA_SUCCESS);
  ck_assert_int_eq(host.pop(&popped), CUDA_SUCCESS);
  return p;
}

static void host_mem_free(CUcontext ctx, CUdeviceptr p) {
  CUcontext popped;
  ck_assert_int_eq(host.push(ctx), CUDA_SUCCESS);
  ck_assert_msg(host.mem_free(p) == CUDA_SUCCESS, "the host's memory is still live: vyre did not "
                                                 "free it");
  ck_assert_int_eq(host.pop(&popped), CUDA_SUCCESS);
}

static CUstream host_stream(CUcontext ctx) {
  CUstream s = NULL;
  CUcontext popped;
  ck_assert_int_eq(host.push(ctx), CUDA_SUCCESS);
  ck_assert_int_eq(host.stream_create(&s, CU_STREAM_NON_BLOCKING), CUDA_SUCCESS);
  ck_assert_int_eq(host.pop(&popped), CUDA_SUCCESS);
  return s;
}

static void host_stream_destroy(CUcontext ctx, CUstream s) {
  CUcontext popped;
  ck_assert_int_eq(host.push(ctx), CUDA_SUCCESS);
  ck_assert_int_eq(host.stream_destroy(s), CUDA_SUCCESS);
  ck_assert_int_eq(host.pop(&popped), CUDA_SUCCESS);
}

START_TEST(test_interop_extension) {
  ck_assert_msg(reg->extensions && strcmp(reg->extensions, "vyre.cuda.interop@1 vyre.limits@1 "
                                                           "vyre.indirect@1") == 0,
                "registration.extensions lists the interop, limits and indirect extensions (%s)",
                reg->extensions ? reg->extensions : "NULL");
  vyre_backend *b = mk();
  vyre_error err = VYRE_ERROR_INIT;
  const vyre_cuda_interop *cu = interop_of(b);
  ck_assert_uint_eq(cu->head.version, VYRE_CUDA_INTEROP_VERSION);
  ck_assert_uint_ge(cu->head.struct_size, sizeof *cu);
  ck_assert_msg(cu->context && cu->resident_import && cu->resident_pointer,
                "every entry of revision 1 is there");
  vyre_backend *other = mk();
  ck_assert_msg(interop_of(other) == cu, "one table for every instance");
  other->vt->destroy(other);

  /* Refusals: VYRE_UNSUPPORTED, *out NULL, a Fix. */
  static const struct {
    const char *name;
    uint32_t version;
  } bad[] = {{VYRE_CUDA_INTEROP_NAME, 0},
             {VYRE_CUDA_INTEROP_NAME, VYRE_CUDA_INTEROP_VERSION + 1},
             {"vyre.cuda.interop2", 1},
             {"vyre.metal.interop", 1},
             {"", 1}};
  for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
    const void *t = &err;
    ck_assert_int_eq(b->vt->get_extension(b, bad[i].name, bad[i].version, &t, &err),
                     VYRE_UNSUPPORTED);
    ck_assert_msg(t == NULL, "a refused extension leaves *out NULL ('%s' %u)", bad[i].name,
                  bad[i].version);
    ck_assert_msg(strstr(err.message, "Fix:") != NULL, "the refusal says how to fix it: %s",
                  err.message);
  }
  const void *t = &err;
  ck_assert_int_eq(b->vt->get_extension(b, NULL, 1, &t, &err), VYRE_INVALID_ARGUMENT);
  ck_assert_ptr_null(t);
  ck_assert_int_eq(b->vt->get_extension(b, VYRE_CUDA_INTEROP_NAME, 1, NULL, &err),
                   VYRE_INVALID_ARGUMENT);

  /* context(): the device's primary context, the one a host retains. */
  void *ctx = NULL;
  int32_t dev = -1;
  ck_assert_int_eq(cu->context(b, &ctx, &dev, &err), VYRE_OK);
  ck_assert_int_eq(dev, 0);
  CUcontext mine = host_retain(0);
  ck_assert_msg(mine == (CUcontext)ctx, "the instance runs in the primary context");
  fk.ctx_release(0);
  ck_assert_int_eq(cu->context(b, NULL, NULL, &err), VYRE_OK);
  b->vt->destroy(b);
  assert_no_leaks_after_destroy("interop extension");
}
END_TEST

/* An import refused with VYRE_INVALID_ARGUMENT whose message holds `why`. */
static void import_refused(vyre_backend *b, const vyre_cuda_interop *cu, uint64_t ptr,
                           uint64_t size, const char *why) {
  vyre_error err = VYRE_ERROR_INIT;
  vyre_resident h = 7;
  vyre_status st = cu->resident_import(b, ptr, size, &h, &err);
  ck_assert_msg(st == VYRE_INVALID_ARGUMENT, "import of 0x%llx + %llu is refused (%s: %s)",
                (unsigned long long)ptr, (unsigned long long)size, vyre_status_name(st),
                err.message);
  ck_assert_msg(strstr(err.message, why) && strstr(err.message, "Fix:"),
                "the refusal says '%s' and how to fix it: %s", why, err.message);
  ck_assert_msg(h == 0, "a refused import leaves no handle");
}

START_TEST(test_interop_import) {
  vyre_backend *b = mk();
  const vyre_cuda_interop *cu = interop_of(b);
  vyre_error err = VYRE_ERROR_INIT;
  CUcontext ctx = host_retain(0);
  const size_t n = 4096;
  CUdeviceptr mem = host_mem(ctx, n);
  uint32_t *words = (uint32_t *)(uintptr_t)mem; /* fake device memory is host memory */
  for (uint32_t i = 0; i < n / 4; i++) words[i] = i * 3u;
  unsigned long frees = fk.calls("cuMemFree");

  vyre_resident h = 0;
  ck_assert_int_eq(cu->resident_import(b, mem, n, &h, &err), VYRE_OK);
  uint64_t size = 0, ptr = 0;
  ck_assert_int_eq(b->vt->resident_size(b, h, &size, &err), VYRE_OK);
  ck_assert_uint_eq(size, n);
  ck_assert_int_eq(cu->resident_pointer(b, h, &ptr, &size, &err), VYRE_OK);
  ck_assert_msg(ptr == mem && size == n, "resident_pointer of an import is the host's memory");
  ck_assert_int_eq(cu->resident_pointer(b, h, NULL, NULL, &err), VYRE_OK);
  ck_assert_uint_eq(metric(b, "resident.imported_buffers"), 1);
  ck_assert_uint_eq(metric(b, "resident.imported_bytes"), n);
  ck_assert_msg(metric(b, "resident.buffers") == 0 && metric(b, "resident.bytes") == 0,
                "an import is not counted against the resident budget");

  /* Zero copy: vyre's transfers and kernels see the host's memory. */
  uint32_t back[8];
  ck_assert_int_eq(b->vt->resident_download_range(b, h, 16, back, sizeof back, &err), VYRE_OK);
  ck_assert_uint_eq(back[0], 4 * 3);
  uint32_t patch[2] = {111, 222};
  ck_assert_int_eq(b->vt->resident_upload_at(b, h, 8, patch, sizeof patch, &err), VYRE_OK);
  ck_assert_msg(words[2] == 111 && words[3] == 222, "an upload lands in the host's memory");
  fk.set_hook(play, NULL);
  hook_mode = 2;
  prog p = prog_inc(64);
  vyre_program_ref r = ref_of(&p);
  ck_assert_int_eq(b->vt->dispatch_resident(b, &r, &h, 1, NULL, NULL, &err), VYRE_OK);
  fakecuda_launch l;
  fk.launch_get(fk.launch_count() - 1, &l);
  ck_assert_msg(l.params[0] == mem, "the kernel gets the host's pointer itself");
  ck_assert_msg(words[0] == 1 && words[2] == 112 && words[1023] == 1023u * 3u + 1u,
                "the kernel ran on the host's memory");
  vyre_resident_copy many[1] = {{h, 0, back, 8}};
  ck_assert_int_eq(b->vt->resident_download_many(b, many, 1, &err), VYRE_OK);
  ck_assert_uint_eq(back[1], 4);

  /* A range inside the allocation. */
  vyre_resident part = 0;
  ck_assert_int_eq(cu->resident_import(b, mem + 64, 1024, &part, &err), VYRE_OK);
  ck_assert_int_eq(cu->resident_pointer(b, part, &ptr, &size, &err), VYRE_OK);
  ck_assert_msg(ptr == mem + 64 && size == 1024, "a sub-range keeps its address and size");
  ck_assert_int_eq(b->vt->resident_download_range(b, part, 1020, back, 4, &err), VYRE_OK);
  ck_assert_int_eq(b->vt->resident_download_range(b, part, 1021, back, 4, &err),
                   VYRE_INVALID_ARGUMENT);

  /* Refusals. */
  ck_assert_int_eq(cu->resident_import(b, mem, n, NULL, &err), VYRE_INVALID_ARGUMENT);
  import_refused(b, cu, mem, 0, "size is 0");
  import_refused(b, cu, 0, 64, "device_ptr is 0");
  import_refused(b, cu, mem + 4, 64, "aligned");
  import_refused(b, cu, UINT64_MAX - 15, 32, "overflows");
  import_refused(b, cu, mem + 16, n, "run past their allocation");
  import_refused(b, cu, mem + n - 16, 17, "run past their allocation");
  uint8_t *stranger = aligned_alloc(256, 256);
  import_refused(b, cu, (uintptr_t)stranger, 256, "not memory CUDA knows of");
  free(stranger);
  void *pinned = NULL;
  CUcontext popped;
  ck_assert_int_eq(host.push(ctx), CUDA_SUCCESS);
  ck_assert_int_eq(host.host_alloc(&pinned, 4096, CU_MEMHOSTALLOC_PORTABLE), CUDA_SUCCESS);
  ck_assert_int_eq(host.pop(&popped), CUDA_SUCCESS);
  import_refused(b, cu, (uintptr_t)pinned, 4096, "host memory");
  ck_assert_int_eq(host.host_free(pinned), CUDA_SUCCESS);
  ck_assert_int_eq(cu->resident_pointer(b, h + (1ull << 32), &ptr, &size, &err),
                   VYRE_INVALID_HANDLE);
  ck_assert_msg(ptr == 0 && size == 0 && strstr(err.message, "Fix:"),
                "a stale handle has no pointer: %s", err.message);

  /* resident_pointer of vyre's own buffer. */
  vyre_resident own = 0;
  ck_assert_int_eq(b->vt->resident_alloc(b, 100, &own, &err), VYRE_OK);
  ck_assert_int_eq(cu->resident_pointer(b, own, &ptr, &size, &err), VYRE_OK);
  ck_assert_msg(ptr != 0 && size == 100 && ((uint8_t *)(uintptr_t)ptr)[99] == 0,
                "resident_pointer gives vyre's zero-filled allocation");
  ck_assert_int_eq(b->vt->resident_free(b, own, &err), VYRE_OK);

  /* Free forgets: the host's memory stays. */
  ck_assert_int_eq(b->vt->resident_free(b, h, &err), VYRE_OK);
  ck_assert_int_eq(b->vt->resident_free(b, h, &err), VYRE_INVALID_HANDLE);
  ck_assert_int_eq(b->vt->resident_download_range(b, h, 0, back, 4, &err), VYRE_INVALID_HANDLE);
  ck_assert_msg(fk.calls("cuMemFree") - frees == 1, "only vyre's own buffer was freed");
  ck_assert_uint_eq(metric(b, "resident.imported_buffers"), 1);
  ck_assert_uint_eq(metric(b, "resident.imported_bytes"), 1024);
  ck_assert_uint_eq(words[5], 16);
  /* destroy forgets the live import `part` too. */
  b->vt->destroy(b);
  host_mem_free(ctx, mem); /* still live: destroy did not free it */
  fk.ctx_release(0);
  assert_no_leaks_after_destroy("interop import");
  free(p.bytes);
}
END_TEST

START_TEST(test_interop_import_device) {
  /* Memory of another device is refused, naming both. */
  setenv("FAKECUDA_DEVICES", "2", 1);
  fk.reset();
  vyre_backend *b = mk(); /* device 0 */
  const vyre_cuda_interop *cu = interop_of(b);
  CUcontext ctx1 = host_retain(1);
  CUdeviceptr mem = host_mem(ctx1, 1024);
  import_refused(b, cu, mem, 1024, "memory of CUDA device 1; this instance runs on device 0");
  host_mem_free(ctx1, mem);
  b->vt->destroy(b);
  fk.ctx_release(1);
  assert_no_leaks_after_destroy("interop device");
}
END_TEST

START_TEST(test_interop_graphs) {
  /* An imported buffer in a replayed graph: freeing its handle drops
   * the graph before the host may free the memory. */
  vyre_backend *b = mk();
  const vyre_cuda_interop *cu = interop_of(b);
  vyre_error err = VYRE_ERROR_INIT;
  CUcontext ctx = host_retain(0);
  CUdeviceptr mem = host_mem(ctx, 1024);
  memset((void *)(uintptr_t)mem, 0, 1024);
  fk.set_hook(play, NULL);
  hook_mode = 2;
  prog p = prog_inc(64);
  vyre_program_ref r = ref_of(&p);
  vyre_resident h = 0;
  ck_assert_int_eq(cu->resident_import(b, mem, 1024, &h, &err), VYRE_OK);
  vyre_sequence_step step = {sizeof step, 1, &r, &h, NULL};
  uint32_t first = 0;
  vyre_resident_copy read = {h, 0, &first, 4};
  ck_assert_int_eq(b->vt->dispatch_sequence(b, &step, 1, 3, &read, 1, NULL, &err), VYRE_OK);
  ck_assert_int_eq(b->vt->dispatch_sequence(b, &step, 1, 3, &read, 1, NULL, &err), VYRE_OK);
  ck_assert_uint_eq(first, 6);
  ck_assert_uint_eq(metric(b, "graph.entries"), 1);
  ck_assert_uint_eq(metric(b, "graph.hits"), 1);
  ck_assert_int_eq(b->vt->resident_free(b, h, &err), VYRE_OK);
  ck_assert_uint_eq(metric(b, "graph.entries"), 0);
  fakecuda_live live;
  fk.live(&live);
  ck_assert_msg(live.graphs == 0 && live.execs == 0, "the graph that baked the pointer in is gone");
  /* The same memory again, under a new handle: a new graph. */
  ck_assert_int_eq(cu->resident_import(b, mem, 1024, &h, &err), VYRE_OK);
  read.buffer = h;
  ck_assert_int_eq(b->vt->dispatch_sequence(b, &step, 1, 2, &read, 1, NULL, &err), VYRE_OK);
  ck_assert_uint_eq(first, 8);
  ck_assert_uint_eq(metric(b, "graph.misses"), 2);
  b->vt->destroy(b);
  host_mem_free(ctx, mem);
  fk.ctx_release(0);
  assert_no_leaks_after_destroy("interop graphs");
  free(p.bytes);
}
END_TEST

/* The stream-ordered calls made since op index `from` (at most cap). */
static unsigned long ops_since(unsigned long from, fakecuda_op *out, unsigned long cap) {
  unsigned long n = fk.op_count() - from;
  ck_assert_msg(n <= cap, "%lu stream-ordered calls fit the test's buffer", n);
  for (unsigned long i = 0; i < n; i++) ck_assert_int_eq(fk.op_get(from + i, &out[i]), 0);
  return n;
}

/* The calls since `from` are one join: the host's stream records an
 * event, ours waits for it, then all of the call's work is on ours; with
 * `back`, the host's stream finally waits for our completion event. */
static void assert_joined(unsigned long from, CUstream hs, int back, const char *what) {
  fakecuda_op op[512];
  unsigned long n = ops_since(from, op, 512);
  ck_assert_msg(n >= 3, "%s: the call enqueued its work (%lu calls)", what, n);
  ck_assert_msg(!strcmp(op[0].call, "cuEventRecord") && op[0].stream == (void *)hs,
                "%s: the first call records an event on the host's stream (%s on %p)", what,
                op[0].call, op[0].stream);
  ck_assert_msg(!strcmp(op[1].call, "cuStreamWaitEvent") && op[1].event == op[0].event &&
                    op[1].stream != (void *)hs && op[1].stream != NULL,
                "%s: then vyre's stream waits for it (%s)", what, op[1].call);
  void *ours = op[1].stream;
  unsigned long end = back ? n - 1 : n;
  for (unsigned long i = 2; i < end; i++)
    ck_assert_msg(op[i].stream == ours, "%s: call %lu (%s) is on vyre's stream, after the wait",
                  what, i, op[i].call);
  if (back) {
    ck_assert_msg(!strcmp(op[n - 2].call, "cuEventRecord") &&
                      !strcmp(op[n - 1].call, "cuStreamWaitEvent") &&
                      op[n - 1].stream == (void *)hs && op[n - 1].event == op[n - 2].event,
                  "%s: the host's stream finally waits for vyre's completion event", what);
  }
}

/* What the parts of test_interop_stream share: the instance, the host's
 * context and stream, the programs, the options naming the host's stream
 * (o.next = &cs.head) and a resident buffer. */
typedef struct stream_case {
  vyre_backend *b;
  CUcontext ctx;
  CUstream hs;
  prog ps, pi;
  vyre_program_ref rs, ri;
  uint32_t in[256];
  vyre_input inputs[1];
  vyre_cuda_stream cs;
  vyre_dispatch_options o;
  vyre_resident a;
} stream_case;

/* dispatch, dispatch_into, dispatch_async: joined both ways. */
static void stream_host_dispatches(stream_case *c) {
  vyre_backend *b = c->b;
  vyre_error err = VYRE_ERROR_INIT;
  vyre_outputs *out = NULL;
  unsigned long from = fk.op_count(), waits = fk.calls("cuStreamWaitEvent");
  ck_assert_int_eq(b->vt->dispatch(b, &c->rs, c->inputs, 1, &c->o, &out, NULL, &err), VYRE_OK);
  assert_joined(from, c->hs, 1, "dispatch");
  ck_assert_uint_eq(fk.calls("cuStreamWaitEvent") - waits, 2);
  ck_assert_uint_eq(((uint32_t *)out->items[0].data)[7], 14);
  b->vt->outputs_free(b, out);
  uint32_t slot_data[256];
  vyre_output_slot slot = {slot_data, sizeof slot_data, 0};
  from = fk.op_count();
  ck_assert_int_eq(b->vt->dispatch_into(b, &c->rs, c->inputs, 1, &c->o, &slot, 1, NULL, &err),
                   VYRE_OK);
  assert_joined(from, c->hs, 1, "dispatch_into");
  vyre_pending pend = 0;
  from = fk.op_count();
  ck_assert_int_eq(b->vt->dispatch_async(b, &c->rs, c->inputs, 1, &c->o, &pend, &err), VYRE_OK);
  assert_joined(from, c->hs, 1, "dispatch_async");
  ck_assert_int_eq(b->vt->pending_wait(b, pend, &out, NULL, &err), VYRE_OK);
  b->vt->outputs_free(b, out);
  /* Without the extension nothing waits. */
  waits = fk.calls("cuStreamWaitEvent");
  ck_assert_int_eq(b->vt->dispatch(b, &c->rs, c->inputs, 1, NULL, &out, NULL, &err), VYRE_OK);
  b->vt->outputs_free(b, out);
  ck_assert_uint_eq(fk.calls("cuStreamWaitEvent") - waits, 0);
}

/* Resident dispatch and sequences: joined before (they return idle). */
static void stream_resident(stream_case *c) {
  vyre_backend *b = c->b;
  vyre_error err = VYRE_ERROR_INIT;
  hook_mode = 2;
  ck_assert_int_eq(b->vt->resident_alloc(b, 1024, &c->a, &err), VYRE_OK);
  unsigned long from = fk.op_count();
  ck_assert_int_eq(b->vt->dispatch_resident(b, &c->ri, &c->a, 1, &c->o, NULL, &err), VYRE_OK);
  assert_joined(from, c->hs, 0, "dispatch_resident");
  vyre_sequence_step steps[2] = {{sizeof steps[0], 1, &c->ri, &c->a, &c->o},
                                 {sizeof steps[0], 1, &c->ri, &c->a, NULL}};
  uint32_t word = 0;
  vyre_resident_copy read = {c->a, 0, &word, 4};
  from = fk.op_count();
  ck_assert_int_eq(b->vt->dispatch_sequence(b, steps, 2, 3, &read, 1, NULL, &err), VYRE_OK);
  assert_joined(from, c->hs, 0, "dispatch_sequence (graph)");
  ck_assert_uint_eq(word, 7);
  steps[1].options = &c->o; /* the same stream on a later step is fine */
  ck_assert_int_eq(b->vt->dispatch_sequence(b, steps, 2, 1, NULL, 0, NULL, &err), VYRE_OK);
  steps[0].options = NULL; /* a later step cannot choose the stream */
  unsigned long launches = fk.launch_count();
  ck_assert_int_eq(b->vt->dispatch_sequence(b, steps, 2, 1, NULL, 0, NULL, &err),
                   VYRE_INVALID_ARGUMENT);
  ck_assert_msg(strstr(err.message, "step 0") && strstr(err.message, "Fix:"),
                "a stream on step 1 only is refused: %s", err.message);
  ck_assert_uint_eq(fk.launch_count(), launches);
}

/* Unknown chain entries are skipped; the stream behind them counts.
 * Leaves c->o.next pointing at c->cs again. */
static void stream_unknown_entries(stream_case *c) {
  vyre_backend *b = c->b;
  vyre_error err = VYRE_ERROR_INIT;
  struct {
    vyre_ext head;
    uint64_t payload[2];
  } unknown = {{sizeof unknown, 0x12345678u, &c->cs.head}, {0, 0}};
  c->o.next = &unknown.head;
  unsigned long from = fk.op_count();
  ck_assert_int_eq(b->vt->dispatch_resident(b, &c->ri, &c->a, 1, &c->o, NULL, &err), VYRE_OK);
  assert_joined(from, c->hs, 0, "behind an unknown entry");
  unknown.head.next = NULL;
  unsigned long waits = fk.calls("cuStreamWaitEvent");
  ck_assert_int_eq(b->vt->dispatch_resident(b, &c->ri, &c->a, 1, &c->o, NULL, &err), VYRE_OK);
  ck_assert_uint_eq(fk.calls("cuStreamWaitEvent") - waits, 0);
  c->o.next = &c->cs.head; /* `unknown` ends here */
  /* Options from a 1.0 caller end before `next`: it is never read. */
  vyre_dispatch_options old = {.struct_size = offsetof(vyre_dispatch_options, next)};
  old.next = (const vyre_ext *)(uintptr_t)1;
  ck_assert_int_eq(b->vt->dispatch_resident(b, &c->ri, &c->a, 1, &old, NULL, &err), VYRE_OK);
}

/* Malformed chains are refused before anything runs. */
static void stream_bad_chains(stream_case *c) {
  vyre_backend *b = c->b;
  vyre_error err = VYRE_ERROR_INIT;
  vyre_outputs *out = NULL;
  vyre_cuda_stream cs2 = c->cs;
  struct {
    vyre_ext head;
  } tiny = {{4, 0x12345678u, NULL}}, zero = {{sizeof(vyre_ext), 0, NULL}}, loop;
  loop.head.struct_size = sizeof loop;
  loop.head.type = 0x777u;
  loop.head.next = &loop.head;
  vyre_cuda_stream short_cs = {{sizeof(vyre_ext), VYRE_EXT_CUDA_STREAM, NULL}, c->hs};
  cs2.head.next = &c->cs.head;
  c->cs.head.next = NULL;
  const struct {
    const vyre_ext *chain;
    const char *why;
  } bad[] = {{&tiny.head, "less than its"},
             {&zero.head, "type 0"},
             {&loop.head, "cycle"},
             {&short_cs.head, "vyre_cuda_stream (chain entry 0) has struct_size"},
             {&cs2.head, "two vyre_cuda_stream"}};
  unsigned long launches = fk.launch_count();
  for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
    c->o.next = bad[i].chain;
    ck_assert_int_eq(b->vt->dispatch(b, &c->rs, c->inputs, 1, &c->o, &out, NULL, &err),
                     VYRE_INVALID_ARGUMENT);
    ck_assert_msg(strstr(err.message, bad[i].why) && strstr(err.message, "Fix:"),
                  "chain %zu refused for '%s': %s", i, bad[i].why, err.message);
    ck_assert_int_eq(b->vt->dispatch_resident(b, &c->ri, &c->a, 1, &c->o, NULL, &err),
                     VYRE_INVALID_ARGUMENT);
    vyre_pipeline pl = 0;
    ck_assert_int_eq(b->vt->pipeline_create(b, c->pi.bytes, c->pi.size, &c->o, &pl, &err),
                     VYRE_INVALID_ARGUMENT);
  }
  ck_assert_uint_eq(fk.launch_count(), launches);
  c->o.next = &c->cs.head;
  vyre_pipeline pl = 0;
  ck_assert_int_eq(b->vt->pipeline_create(b, c->pi.bytes, c->pi.size, &c->o, &pl, &err), VYRE_OK);
  ck_assert_int_eq(b->vt->pipeline_release(b, pl, &err), VYRE_OK);
}

/* A stream under capture is refused: vyre's work cannot join a graph.
 * A dead stream is a driver error that names the call and the fix. */
static void stream_captured_and_dead(stream_case *c) {
  vyre_backend *b = c->b;
  vyre_error err = VYRE_ERROR_INIT;
  CUcontext popped;
  ck_assert_int_eq(host.push(c->ctx), CUDA_SUCCESS);
  ck_assert_int_eq(host.begin_capture(c->hs, CU_STREAM_CAPTURE_MODE_THREAD_LOCAL), CUDA_SUCCESS);
  ck_assert_int_eq(b->vt->dispatch_resident(b, &c->ri, &c->a, 1, &c->o, NULL, &err),
                   VYRE_INVALID_ARGUMENT);
  ck_assert_msg(strstr(err.message, "captured") && strstr(err.message, "Fix:"),
                "a capturing stream is refused: %s", err.message);
  CUgraph g = NULL;
  ck_assert_int_eq(host.end_capture(c->hs, &g), CUDA_SUCCESS);
  ck_assert_int_eq(host.graph_destroy(g), CUDA_SUCCESS);
  ck_assert_int_eq(host.pop(&popped), CUDA_SUCCESS);

  CUstream dead = host_stream(c->ctx);
  host_stream_destroy(c->ctx, dead);
  c->cs.stream = dead;
  ck_assert_int_eq(b->vt->dispatch_resident(b, &c->ri, &c->a, 1, &c->o, NULL, &err), VYRE_DRIVER);
  ck_assert_msg(strstr(err.message, "vyre_cuda_stream") && strstr(err.message, "Fix:"),
                "a bad stream is named: %s", err.message);
  char last[512];
  ck_assert_msg(fk.violations(last, sizeof last) == 1, "the fake saw the dead stream once: %s",
                last);
  fk.reset(); /* forgets that misuse (and the hook, counts and trace) */
  fk.set_hook(play, NULL);
}

START_TEST(test_interop_stream) {
  stream_case c;
  memset(&c, 0, sizeof c);
  /* The player plays one inc per launch: the inc steps run unfused. */
  setenv("VYRE_CUDA_FUSE", "0", 1);
  c.b = mk();
  vyre_backend *b = c.b;
  vyre_error err = VYRE_ERROR_INIT;
  c.ctx = host_retain(0);
  c.hs = host_stream(c.ctx);
  fk.set_hook(play, NULL);
  hook_mode = 1;
  hook_k = 2;
  c.ps = prog_scale(256, 2, 64);
  c.pi = prog_inc(64);
  c.rs = ref_of(&c.ps);
  c.ri = ref_of(&c.pi);
  for (int i = 0; i < 256; i++) c.in[i] = (uint32_t)i;
  c.inputs[0] = (vyre_input){c.in, sizeof c.in};
  c.cs = (vyre_cuda_stream){{sizeof c.cs, VYRE_EXT_CUDA_STREAM, NULL}, c.hs};
  c.o = (vyre_dispatch_options){.struct_size = sizeof c.o, .next = &c.cs.head};

  stream_host_dispatches(&c);
  stream_resident(&c);
  stream_unknown_entries(&c);
  stream_bad_chains(&c);
  stream_captured_and_dead(&c);

  /* NULL is the legacy default stream. */
  fk.allow_legacy(1);
  c.cs.stream = NULL;
  vyre_outputs *out = NULL;
  unsigned long from = fk.op_count();
  ck_assert_int_eq(b->vt->dispatch(b, &c.rs, c.inputs, 1, &c.o, &out, NULL, &err), VYRE_OK);
  b->vt->outputs_free(b, out);
  assert_joined(from, NULL, 1, "dispatch on the legacy stream");

  ck_assert_int_eq(b->vt->resident_free(b, c.a, &err), VYRE_OK);
  b->vt->destroy(b);
  host_stream_destroy(c.ctx, c.hs);
  fk.ctx_release(0);
  assert_no_leaks_after_destroy("interop stream");
  free(c.ps.bytes);
  free(c.pi.bytes);
}
END_TEST

void fake_interop_tests(TCase *tc) {
  tcase_add_test(tc, test_interop_extension);
  tcase_add_test(tc, test_interop_import);
  tcase_add_test(tc, test_interop_import_device);
  tcase_add_test(tc, test_interop_graphs);
  tcase_add_test(tc, test_interop_stream);
}
