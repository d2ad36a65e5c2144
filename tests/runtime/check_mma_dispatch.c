/* check_mma_dispatch.c -- the CUDA backend's refusals of MMA programs on the fake libcuda: a workgroup that is not whole subgroups, a device below sm_80, a float mma under strict. */
#include <check.h>
#include <stdlib.h>
#include <string.h>

#include "fakeharness.h"
#include "vyre/vyre_text.h"

static const char *const int_mma =
    "workgroup 32\nbuffer A ro i8\nbuffer C rw i32\nlocal a mat_a_i8\nlocal b mat_b_i8\n"
    "local acc mat_acc_i32\n%c0 = const u32 0\n%s = const u32 32\nmma_load a A %c0 %s\n"
    "mma_load.col b A %c0 %s\nmma acc a b acc\nmma_store C %c0 %s acc\n";
static const char *const float_mma =
    "workgroup 32\nbuffer A ro f16\nbuffer C rw f32\nlocal a mat_a_f16\nlocal b mat_b_f16\n"
    "local acc mat_acc_f32\n%c0 = const u32 0\n%s = const u32 16\nmma_load a A %c0 %s\n"
    "mma_load.col b A %c0 %s\nmma acc a b acc\nmma_store C %c0 %s acc\n";

/* Dispatch `text` on a fresh backend of the fake (compute capability sm)
 * with workgroup override wgx (0: none) and ulp budget `ulp`. */
static vyre_status run(const char *text, const char *sm, uint32_t wgx, uint32_t ulp,
                       vyre_error *e) {
  setenv("FAKECUDA_SM", sm, 1);
  fh_reset();
  vyre_backend *inst = NULL;
  ck_assert_msg(fh_reg->create(NULL, &inst, e) == VYRE_OK, "create: %s", e->message);
  void *bytes = NULL;
  size_t size = 0;
  ck_assert_msg(vyre_text_assemble(text, strlen(text), "test", &bytes, &size, e) == VYRE_OK,
                "assemble: %s", e->message);
  vyre_program_ref r;
  memset(&r, 0, sizeof r);
  r.struct_size = sizeof r;
  r.bytes = bytes;
  r.size = size;
  static int8_t a[4096];
  static int32_t c[1024];
  vyre_input in[2] = {{a, text == int_mma ? sizeof a : 1024}, {c, sizeof c}};
  vyre_dispatch_options o;
  memset(&o, 0, sizeof o);
  o.struct_size = sizeof o;
  o.workgroup[0] = wgx;
  o.ulp_budget = ulp;
  vyre_outputs *out = NULL;
  vyre_status st = inst->vt->dispatch(inst, &r, in, 2, &o, &out, NULL, e);
  if (out) inst->vt->outputs_free(inst, out);
  inst->vt->destroy(inst);
  free(bytes);
  return st;
}

START_TEST(test_refusals) {
  vyre_error e = VYRE_ERROR_INIT;
  ck_assert_msg(run(int_mma, "90", 48, 0, &e) == VYRE_INVALID_ARGUMENT &&
                    strstr(e.message, "whole number of subgroups") && strstr(e.message, "Fix:"),
                "a workgroup of 48 is not whole subgroups: INVALID_ARGUMENT with a Fix (%s)",
                e.message);
  ck_assert_msg(run(int_mma, "75", 0, 0, &e) == VYRE_UNSUPPORTED &&
                    strstr(e.message, "tensor") && strstr(e.message, "8.0"),
                "sm_75 has no tensor_cores: UNSUPPORTED naming it, with the Fix (%s)", e.message);
  ck_assert_msg(run(float_mma, "90", 0, 0, &e) == VYRE_UNSUPPORTED && strstr(e.message, "strict"),
                "a float mma under strict is refused (%s)", e.message);
  ck_assert_msg(run(int_mma, "80", 64, 0, &e) == VYRE_OK,
                "integer mma on sm_80, workgroup 64, strict: runs (%s)", e.message);
  /* Compiled whole-program (cuModuleLoadDataEx), not by the linker that
   * the harness's setting (disk cache off, VYRE_CUDA_JIT_DIRECT unset)
   * would otherwise use. */
  ck_assert_msg(fh.calls("cuModuleLoadDataEx") == 1 && fh.calls("cuLinkCreate") == 0,
                "an MMA kernel is compiled whole-program: %lu cuModuleLoadDataEx, %lu cuLinkCreate",
                fh.calls("cuModuleLoadDataEx"), fh.calls("cuLinkCreate"));
}
END_TEST

int main(void) {
  if (fh_load("check_mma_dispatch") != 0) return 1;
  Suite *s = suite_create("mma_dispatch");
  TCase *tc = tcase_create("errors");
  tcase_add_test(tc, test_refusals);
  suite_add_tcase(s, tc);
  SRunner *sr = srunner_create(s);
  srunner_set_fork_status(sr, CK_NOFORK);
  srunner_run_all(sr, CK_NORMAL);
  int failed = srunner_ntests_failed(sr);
  srunner_free(sr);
  return failed ? 1 : 0;
}
