/* errors.c -- check_cuda_fake's errors case (its first part): no driver or device, unsupported and invalid calls, error text, a lost device, a faulting kernel. */
#include <dlfcn.h>

#include "harness.h"

START_TEST(test_no_driver_no_device) {
  vyre_error err = VYRE_ERROR_INIT;
  setenv("VYRE_CUDA_DRIVER", "/nonexistent/libcuda.so.1", 1);
  vyre_backend *b = mk_status(VYRE_NO_DEVICE, &err);
  ck_assert_ptr_null(b);
  ck_assert_msg(strstr(err.message, "dlopen") && strstr(err.message, "/nonexistent/libcuda.so.1") &&
                    strstr(err.message, "No such file") && strstr(err.message, "Fix:"),
                "keeps the dlerror text and a fix: %s", err.message);
  /* The plugin still registers. */
  const vyre_registration *r2 = NULL;
  void *dl = dlopen(plugin_path, RTLD_NOW | RTLD_LOCAL);
  vyre_plugin_entry_fn entry = (vyre_plugin_entry_fn)dlsym(dl, VYRE_PLUGIN_ENTRY_SYMBOL);
  ck_assert_int_eq(entry(VYRE_ABI_MAJOR, VYRE_ABI_MINOR, &r2, &err), VYRE_OK);
  ck_assert_str_eq(r2->id, "cuda");
  dlclose(dl);

  setenv("VYRE_CUDA_DRIVER", "/bin/sh", 1);
  b = mk_status(VYRE_NO_DEVICE, &err);
  ck_assert_msg(strstr(err.message, "dlopen") != NULL, "not a library: %s", err.message);

  setenv("VYRE_CUDA_DRIVER", fake_path, 1);
  setenv("FAKECUDA_DEVICES", "0", 1);
  fk.reset();
  b = mk_status(VYRE_NO_DEVICE, &err);
  ck_assert_msg(strstr(err.message, "cuInit") && strstr(err.message, "CUDA_ERROR_NO_DEVICE") &&
                    strstr(err.message, "Fix:"),
                "no device: %s", err.message);
  ck_assert_int_eq(err.native_code, CUDA_ERROR_NO_DEVICE);

  setenv("FAKECUDA_DEVICES", "1", 1);
  fk.reset();
  vyre_backend_options o = {sizeof o, 0, 1, 0, NULL};
  ck_assert_int_eq(reg->create(&o, &b, &err), VYRE_INVALID_ARGUMENT);
  o.flags = 0;
  o.device_ordinal = 3;
  ck_assert_int_eq(reg->create(&o, &b, &err), VYRE_NO_DEVICE);
  ck_assert_msg(strstr(err.message, "device 3 not present") != NULL, "ordinal: %s", err.message);

  fk.inject("cuInit", 1, CUDA_ERROR_NOT_INITIALIZED, 1);
  b = mk_status(VYRE_NO_DEVICE, &err);
  ck_assert_msg(strstr(err.message, "CUDA_ERROR_NOT_INITIALIZED") != NULL, "cuInit: %s", err.message);
  setenv("FAKECUDA_SM", "61", 1);
  fk.reset();
  b = mk_status(VYRE_NO_DEVICE, &err);
  ck_assert_msg(strstr(err.message, "7.0 or newer") != NULL, "old device: %s", err.message);
  assert_no_leaks_after_destroy("no device");
}
END_TEST

START_TEST(test_unsupported_and_invalid) {
  setenv("FAKECUDA_SM", "75", 1);
  setenv("FAKECUDA_COOP", "0", 1);
  fk.reset();
  vyre_backend *b = mk();
  vyre_error err = VYRE_ERROR_INIT;
  vyre_outputs *out = NULL;
  prog p = prog_bf16(64);
  vyre_program_ref r = ref_of(&p);
  uint16_t h[64] = {0};
  vyre_input in[1] = {{h, sizeof h}};
  ck_assert_int_eq(b->vt->dispatch(b, &r, in, 1, NULL, &out, NULL, &err), VYRE_UNSUPPORTED);
  ck_assert_msg(strstr(err.message, "bf16") && strstr(err.message, "8.0"), "bf16: %s", err.message);
  free(p.bytes);
  p = prog_grid(64, 64);
  r = ref_of(&p);
  ck_assert_int_eq(b->vt->dispatch(b, &r, NULL, 0, NULL, &out, NULL, &err), VYRE_UNSUPPORTED);
  ck_assert_msg(strstr(err.message, "grid barrier") && strstr(err.message, "Fix:"), "grid: %s",
                err.message);
  b->vt->destroy(b);

  /* Invalid bytes, counts and sizes. */
  fk.reset();
  b = mk();
  vyre_program_ref junk = VYRE_PROGRAM_BYTES("not a program at all, certainly", 32);
  ck_assert_int_eq(b->vt->dispatch(b, &junk, NULL, 0, NULL, &out, NULL, &err), VYRE_INVALID_PROGRAM);
  ck_assert_int_eq(b->vt->dispatch(b, NULL, NULL, 0, NULL, &out, NULL, &err), VYRE_INVALID_ARGUMENT);
  ck_assert_int_eq(b->vt->dispatch(b, &r, NULL, 0, NULL, NULL, NULL, &err), VYRE_INVALID_ARGUMENT);
  free(p.bytes);
  p = prog_scale(64, 2, 64);
  r = ref_of(&p);
  ck_assert_int_eq(b->vt->dispatch(b, &r, NULL, 0, NULL, &out, NULL, &err), VYRE_INVALID_ARGUMENT);
  ck_assert_msg(strstr(err.message, "0 inputs given, the program takes 1") != NULL, "count: %s",
                err.message);
  uint32_t three[3];
  vyre_input odd[1] = {{three, 7}};
  ck_assert_int_eq(b->vt->dispatch(b, &r, odd, 1, NULL, &out, NULL, &err), VYRE_INVALID_ARGUMENT);
  vyre_input nodata[1] = {{NULL, 8}};
  ck_assert_int_eq(b->vt->dispatch(b, &r, nodata, 1, NULL, &out, NULL, &err), VYRE_INVALID_ARGUMENT);
  vyre_dispatch_options o;
  memset(&o, 0, sizeof o);
  o.struct_size = sizeof o;
  o.flags = 4;
  vyre_input ok[1] = {{three, 12}};
  ck_assert_int_eq(b->vt->dispatch(b, &r, ok, 1, &o, &out, NULL, &err), VYRE_INVALID_ARGUMENT);
  o.flags = 0;
  o.workgroup[0] = 2048;
  ck_assert_int_eq(b->vt->dispatch(b, &r, ok, 1, &o, &out, NULL, &err), VYRE_UNSUPPORTED);
  ck_assert_uint_eq(fk.launch_count(), 0);
  b->vt->destroy(b);
  assert_no_leaks_after_destroy("invalid");
  free(p.bytes);
}
END_TEST

/* The argument checks are libvyre's (vyre_check_*, docs/abi.md section 11):
 * each refusal reads as libvyre's check words the same arguments, one
 * wording for every backend. */
START_TEST(test_argument_checks) {
  vyre_backend *b = mk();
  prog p = prog_scale(64, 2, 64);
  vyre_program_ref r = ref_of(&p), shortref = r;
  shortref.struct_size = 4;
  vyre_outputs *out = NULL;
  vyre_error err = VYRE_ERROR_INIT, want = VYRE_ERROR_INIT;
  uint32_t in[64] = {0};
  vyre_input nodata[1] = {{NULL, 8}}, ok[1] = {{in, sizeof in}};
  const vyre_status bad = VYRE_INVALID_ARGUMENT;

  ck_assert_int_eq(b->vt->dispatch(b, NULL, ok, 1, NULL, &out, NULL, &err), bad);
  ck_assert_int_eq(vyre_check_program_ref(NULL, "dispatch", &want), bad);
  ck_assert_str_eq(err.message, want.message);
  ck_assert_int_eq(b->vt->dispatch(b, &shortref, ok, 1, NULL, &out, NULL, &err), bad);
  ck_assert_int_eq(vyre_check_program_ref(&shortref, "dispatch", &want), bad);
  ck_assert_str_eq(err.message, want.message);
  ck_assert_int_eq(b->vt->dispatch(b, &r, NULL, 0, NULL, &out, NULL, &err), bad);
  ck_assert_int_eq(vyre_check_inputs(NULL, 0, 1, "dispatch", &want), bad);
  ck_assert_str_eq(err.message, want.message);
  ck_assert_msg(strstr(err.message, "without the output flag") != NULL, "count: %s", err.message);
  ck_assert_int_eq(b->vt->dispatch(b, &r, NULL, 1, NULL, &out, NULL, &err), bad);
  ck_assert_int_eq(vyre_check_inputs(NULL, 1, 1, "dispatch", &want), bad);
  ck_assert_str_eq(err.message, want.message);
  ck_assert_int_eq(b->vt->dispatch(b, &r, nodata, 1, NULL, &out, NULL, &err), bad);
  ck_assert_int_eq(vyre_check_inputs(nodata, 1, 1, "dispatch", &want), bad);
  ck_assert_str_eq(err.message, want.message);

  /* dispatch_resident names itself, for a short ref too. */
  vyre_resident a = 0;
  ck_assert_int_eq(b->vt->resident_alloc(b, sizeof in, &a, &err), VYRE_OK);
  ck_assert_int_eq(b->vt->dispatch_resident(b, NULL, &a, 1, NULL, NULL, &err), bad);
  ck_assert_int_eq(vyre_check_program_ref(NULL, "dispatch_resident", &want), bad);
  ck_assert_str_eq(err.message, want.message);
  ck_assert_int_eq(b->vt->dispatch_resident(b, &shortref, &a, 1, NULL, NULL, &err), bad);
  ck_assert_int_eq(vyre_check_program_ref(&shortref, "dispatch_resident", &want), bad);
  ck_assert_str_eq(err.message, want.message);
  ck_assert_int_eq(b->vt->resident_free(b, a, &err), VYRE_OK);
  ck_assert_uint_eq(fk.launch_count(), 0);
  b->vt->destroy(b);
  assert_no_leaks_after_destroy("argument checks");
  free(p.bytes);
}
END_TEST

/* The driver's own error lookups can fail; the message still names the call. */
START_TEST(test_error_text) {
  vyre_backend *b = mk();
  prog p = prog_scale(64, 2, 64);
  uint32_t in[64] = {0};
  vyre_outputs *out = NULL;
  vyre_error err = VYRE_ERROR_INIT;
  fk.inject("cuMemHostAlloc", 1, CUDA_ERROR_INVALID_VALUE, 1);
  fk.inject("cuGetErrorName", 1, CUDA_ERROR_INVALID_VALUE, 1);
  fk.inject("cuGetErrorString", 1, CUDA_ERROR_NOT_INITIALIZED, 1);
  ck_assert_int_eq(run_scale(b, &p, 64, in, &out, NULL, &err), VYRE_DRIVER);
  ck_assert_msg(strstr(err.message, "cuMemHostAlloc") && strstr(err.message, "unrecognised CUresult") &&
                    strstr(err.message, "no description") && strstr(err.message, "Fix:"),
                "falls back when the lookups fail: %s", err.message);
  ck_assert_int_eq(err.native_code, CUDA_ERROR_INVALID_VALUE);
  /* With working lookups: name and text, and the pool context. */
  fk.inject("cuMemHostAlloc", 1, CUDA_ERROR_INVALID_VALUE, 1);
  ck_assert_int_eq(run_scale(b, &p, 64, in, &out, NULL, &err), VYRE_DRIVER);
  ck_assert_msg(strstr(err.message, "pinned host pool") &&
                    strstr(err.message, "CUDA_ERROR_INVALID_VALUE (invalid argument)"),
                "names the pool, the code and its text: %s", err.message);
  /* A small error record is honoured. */
  struct {
    vyre_error e;
  } small;
  memset(&small, 0x11, sizeof small);
  small.e.struct_size = 16 + 20;
  fk.inject("cuMemHostAlloc", 1, CUDA_ERROR_INVALID_VALUE, 1);
  ck_assert_int_eq(run_scale(b, &p, 64, in, &out, NULL, &small.e), VYRE_DRIVER);
  ck_assert_msg(strlen(small.e.message) == 19 && (uint8_t)small.e.message[20] == 0x11,
                "at most struct_size bytes are written");
  ck_assert_int_eq(run_scale(b, &p, 64, in, &out, NULL, &err), VYRE_OK);
  b->vt->outputs_free(b, out);
  b->vt->destroy(b);
  assert_no_leaks_after_destroy("error text");
  free(p.bytes);
}
END_TEST

START_TEST(test_device_lost) {
  vyre_backend *b = mk();
  prog p = prog_scale(64, 2, 64);
  uint32_t in[64] = {0};
  vyre_outputs *out = NULL;
  vyre_error err = VYRE_ERROR_INIT;
  vyre_resident h;
  ck_assert_int_eq(b->vt->resident_alloc(b, 256, &h, &err), VYRE_OK);
  vyre_pending pend;
  vyre_program_ref r = ref_of(&p);
  vyre_input inputs[1] = {{in, sizeof in}};
  fk.hold_events(1);
  ck_assert_int_eq(b->vt->dispatch_async(b, &r, inputs, 1, NULL, &pend, &err), VYRE_OK);
  fk.hold_events(0);
  fk.inject("cuStreamSynchronize", 1, CUDA_ERROR_ILLEGAL_ADDRESS, 1);
  ck_assert_int_eq(run_scale(b, &p, 64, in, &out, NULL, &err), VYRE_DEVICE_LOST);
  ck_assert_msg(strstr(err.message, "cuStreamSynchronize") &&
                    strstr(err.message, "CUDA_ERROR_ILLEGAL_ADDRESS") &&
                    strstr(err.message, "destroy and recreate"),
                "names the call, the code and the fix: %s", err.message);
  ck_assert_uint_eq(metric(b, "device.lost"), 1);
  /* Later calls fail fast without touching the driver. */
  unsigned long before = fk.calls("cuCtxPushCurrent");
  ck_assert_int_eq(run_scale(b, &p, 64, in, &out, NULL, &err), VYRE_DEVICE_LOST);
  ck_assert_msg(strstr(err.message, "device lost") && strstr(err.message, "Fix: destroy and recreate"),
                "fail fast: %s", err.message);
  ck_assert_uint_eq(fk.calls("cuCtxPushCurrent"), before);
  ck_assert_int_eq(b->vt->resident_alloc(b, 16, &h, &err), VYRE_DEVICE_LOST);
  ck_assert_int_eq(b->vt->shutdown(b, &err), VYRE_DEVICE_LOST);
  ck_assert_int_eq(b->vt->pending_wait(b, pend, &out, NULL, &err), VYRE_DEVICE_LOST);
  ck_assert_int_eq(b->vt->pending_release(b, pend, &err), VYRE_INVALID_HANDLE);
  vyre_device_profile prof = {.struct_size = sizeof prof};
  ck_assert_int_eq(b->vt->device_profile(b, &prof, &err), VYRE_DEVICE_LOST);
  b->vt->destroy(b);
  fakecuda_live l;
  fk.live(&l);
  ck_assert_int_eq(l.ctx_refs, 0);

  /* The process stays spoiled (the real driver's rule, seen on an H200):
   * a new instance says so and what to do, and holds nothing. */
  ck_assert_int_eq(fk.poisoned(), CUDA_ERROR_ILLEGAL_ADDRESS);
  vyre_backend *x = NULL;
  ck_assert_int_eq(reg->create(NULL, &x, &err), VYRE_DEVICE_LOST);
  ck_assert_msg(x == NULL, "a failed create hands out nothing");
  ck_assert_msg(strstr(err.message, "unusable in this process") &&
                    strstr(err.message, "CUDA_ERROR_ILLEGAL_ADDRESS") &&
                    strstr(err.message, "Fix: restart the process"),
                "a new instance in the spoiled process explains it: %s", err.message);
  fk.live(&l);
  ck_assert_int_eq(l.ctx_refs, 0);

  /* A new process (fakecuda_reset) uses the device again. */
  fk.reset();
  b = mk();
  ck_assert_int_eq(run_scale(b, &p, 64, in, &out, NULL, &err), VYRE_OK);
  b->vt->outputs_free(b, out);

  /* Lost while another instance holds the primary context: that one is
   * lost too at its next call, and no new instance is made. */
  vyre_backend *c = mk();
  fk.inject("cuLaunchKernel", 1, CUDA_ERROR_LAUNCH_FAILED, 1);
  ck_assert_int_eq(run_scale(b, &p, 64, in, &out, NULL, &err), VYRE_DEVICE_LOST);
  ck_assert_int_eq(fk.poisoned(), CUDA_ERROR_LAUNCH_FAILED);
  ck_assert_int_eq(run_scale(c, &p, 64, in, &out, NULL, &err), VYRE_DEVICE_LOST);
  ck_assert_int_eq(reg->create(NULL, &x, &err), VYRE_DEVICE_LOST);
  ck_assert_msg(strstr(err.message, "restart the process") != NULL, "%s", err.message);
  b->vt->destroy(b);
  c->vt->destroy(c);
  fk.live(&l);
  ck_assert_int_eq(l.ctx_refs, 0);
  fk.reset();
  free(p.bytes);
}
END_TEST

/* A kernel that faults on the device (what a store to address 0 does on a
 * GPU; programs cannot, by design): the fake poisons the context after
 * the 2nd dispatch's launch succeeded, so the failure surfaces at a later
 * call of that dispatch, as on a GPU. */
START_TEST(test_kernel_fault) {
  vyre_backend *b = mk();
  prog p = prog_scale(64, 2, 64);
  uint32_t in[64] = {0};
  vyre_outputs *out = NULL;
  vyre_error err = VYRE_ERROR_INIT;
  unsigned long launches = fk.launch_count();
  fk.fault_launch(2, CUDA_ERROR_ILLEGAL_ADDRESS);
  ck_assert_int_eq(run_scale(b, &p, 64, in, &out, NULL, &err), VYRE_OK);
  b->vt->outputs_free(b, out);
  ck_assert_int_eq(run_scale(b, &p, 64, in, &out, NULL, &err), VYRE_DEVICE_LOST);
  ck_assert_msg(strstr(err.message, "CUDA_ERROR_ILLEGAL_ADDRESS") != NULL, "%s", err.message);
  ck_assert_msg(strstr(err.message, "Fix:") != NULL, "device lost names a fix: %s", err.message);
  ck_assert_int_eq(fk.poisoned(), CUDA_ERROR_ILLEGAL_ADDRESS);
  ck_assert_msg(fk.launch_count() == launches + 2,
                "the faulting kernel was launched (and nothing after it): %lu launches",
                fk.launch_count() - launches);
  fakecuda_launch first, l;
  fk.launch_get(fk.launch_count() - 2, &first);
  fk.launch_get(fk.launch_count() - 1, &l);
  ck_assert_str_eq(l.kernel, first.kernel);
  ck_assert_int_eq(run_scale(b, &p, 64, in, &out, NULL, &err), VYRE_DEVICE_LOST);
  ck_assert_msg(strstr(err.message, "device lost") != NULL, "later calls fail fast: %s",
                err.message);
  b->vt->destroy(b);
  fk.reset(); /* a new process: the fault spoiled this one's CUDA state */
  b = mk();
  ck_assert_int_eq(run_scale(b, &p, 64, in, &out, NULL, &err), VYRE_OK);
  b->vt->outputs_free(b, out);
  b->vt->destroy(b);
  free(p.bytes);
}
END_TEST

void fake_errors_tests(TCase *tc) {
  tcase_add_test(tc, test_no_driver_no_device);
  tcase_add_test(tc, test_unsupported_and_invalid);
  tcase_add_test(tc, test_argument_checks);
  tcase_add_test(tc, test_error_text);
  tcase_add_test(tc, test_device_lost);
  tcase_add_test(tc, test_kernel_fault);
}
