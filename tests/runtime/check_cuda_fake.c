/* check_cuda_fake.c -- the CUDA plugin against a fake libcuda: pools, resident store, dispatch plumbing, caches, errors, fault sweeps; one file per test case under cuda_fake/, on its harness. */
#include "cuda_fake/harness.h"

static Suite *suite(void) {
  Suite *s = suite_create("cuda_fake");
  fake_core_tests(fake_tcase(s, "core", 60));
  fake_async_tests(fake_tcase(s, "async", 60));
  fake_staging_tests(fake_tcase(s, "staging", 120));
  fake_split_tests(fake_tcase(s, "split", 120));
  fake_resident_tests(fake_tcase(s, "resident", 60));
  fake_interop_tests(fake_tcase(s, "interop", 60));
  fake_pools_tests(fake_tcase(s, "pools", 60));
  fake_caches_tests(fake_tcase(s, "caches", 60));
  fake_jit_tests(fake_tcase(s, "jit", 60));
  /* Errors, the dispatch timeout and the fault sweeps: one case. */
  TCase *errors = fake_tcase(s, "errors", 600);
  fake_errors_tests(errors);
  fake_timeout_tests(errors);
  fake_sweep_tests(errors);
  fake_devices_tests(fake_tcase(s, "devices", 120));
  fake_fusion_tests(fake_tcase(s, "fusion", 60));
  fake_fill_tests(fake_tcase(s, "fill", 60));
  fake_indirect_tests(fake_tcase(s, "indirect", 60));
  return s;
}

int main(void) {
  if (fake_load() != 0) return 1;
  SRunner *sr = srunner_create(suite());
  srunner_run_all(sr, CK_NORMAL);
  int failed = srunner_ntests_failed(sr);
  srunner_free(sr);
  /* Hosts never dlclose plugins; neither do we. */
  return failed ? 1 : 0;
}
