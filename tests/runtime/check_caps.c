/* check_caps.c -- the capability table (plugin/runtime/caps.c): the profile's bits per device, the registration's, the Fix of each missing capability. */
#include <check.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "plugin/runtime/caps.h"
#include "vyre/vyre.h"

/* What every device the backend serves offers, whatever its SM, driver
 * features and build (the bits context.c set unconditionally before the
 * table). */
static const uint64_t always = VYRE_CAP_SUBGROUP | VYRE_CAP_ATOMIC64 | VYRE_CAP_ASYNC |
                               VYRE_CAP_RESIDENT | VYRE_CAP_SEQUENCE | VYRE_CAP_TIMING |
                               VYRE_CAP_PIPELINE | VYRE_CAP_FIXPOINT | VYRE_CAP_TRAP |
                               VYRE_CAP_GRAPH_REPLAY | VYRE_CAP_WORKGROUP_MEMORY |
                               VYRE_CAP_ATOMICS | VYRE_CAP_BARRIER | VYRE_CAP_INT64 |
                               VYRE_CAP_OUT_RANGE | VYRE_CAP_INDIRECT_DISPATCH;

static uint64_t caps(uint32_t sm, int cooperative, int math) {
  const vc_caps_device d = {sm, cooperative, math};
  return vc_caps_of(&d);
}

START_TEST(test_profile_bits) {
  /* The oldest served device: f16 (sm_53+), no bf16 (sm_80+). */
  ck_assert_msg(caps(70, 0, 0) == (always | VYRE_CAP_F16), "sm_70 offers the base set and f16");
  ck_assert_msg(caps(75, 0, 0) == (always | VYRE_CAP_F16), "sm_75 has no bf16");
  ck_assert_msg(caps(79, 0, 0) == (always | VYRE_CAP_F16), "bf16 starts at sm_80");
  ck_assert_msg(caps(80, 0, 0) == (always | VYRE_CAP_F16 | VYRE_CAP_BF16 | VYRE_CAP_TENSOR_CORES),
                "sm_80 has bf16 and tensor cores (mma.sync)");
  ck_assert_msg(caps(52, 0, 0) == always, "f16 starts at sm_53");
  ck_assert_msg(caps(53, 0, 0) == (always | VYRE_CAP_F16), "sm_53 has f16");
  ck_assert_msg(caps(90, 1, 0) == (always | VYRE_CAP_F16 | VYRE_CAP_BF16 | VYRE_CAP_TENSOR_CORES |
                                   VYRE_CAP_GRID_BARRIER),
                "cooperative launch gives the grid barrier");
  ck_assert_msg(caps(90, 0, 1) == (always | VYRE_CAP_F16 | VYRE_CAP_BF16 | VYRE_CAP_TENSOR_CORES |
                                   VYRE_CAP_TRANSCENDENTAL),
                "the PTX math library gives transcendentals");
  ck_assert_msg(caps(90, 0, VC_MATH | VC_MATH_CR) ==
                    (always | VYRE_CAP_F16 | VYRE_CAP_BF16 | VYRE_CAP_TENSOR_CORES |
                     VYRE_CAP_TRANSCENDENTAL | VYRE_CAP_CORRECTLY_ROUNDED),
                "its correctly rounded variants give correctly_rounded");
  ck_assert_msg(caps(70, 0, VC_MATH_CR) == (always | VYRE_CAP_F16),
                "correctly_rounded never comes without the math library");
}
END_TEST

START_TEST(test_registration_bits) {
  /* Exactly what plugin.c registered before the table. */
  uint64_t reg = VYRE_CAP_F16 | VYRE_CAP_BF16 | VYRE_CAP_SUBGROUP | VYRE_CAP_ATOMIC64 |
                 VYRE_CAP_GRID_BARRIER | VYRE_CAP_ASYNC | VYRE_CAP_RESIDENT | VYRE_CAP_SEQUENCE |
                 VYRE_CAP_TIMING | VYRE_CAP_PIPELINE | VYRE_CAP_FIXPOINT | VYRE_CAP_TRAP |
                 VYRE_CAP_GRAPH_REPLAY | VYRE_CAP_WORKGROUP_MEMORY | VYRE_CAP_ATOMICS |
                 VYRE_CAP_BARRIER | VYRE_CAP_INT64 | VYRE_CAP_OUT_RANGE | VYRE_CAP_TENSOR_CORES |
                 VYRE_CAP_INDIRECT_DISPATCH; /* indirect dispatch: every device */
  ck_assert_msg(vc_caps_offered(0) == reg, "registration without the math library: 0x%llx",
                (unsigned long long)vc_caps_offered(0));
  ck_assert_msg(vc_caps_offered(VC_MATH) == (reg | VYRE_CAP_TRANSCENDENTAL),
                "registration with the math library adds transcendentals");
  ck_assert_msg(vc_caps_offered(VC_MATH | VC_MATH_CR) ==
                    (reg | VYRE_CAP_TRANSCENDENTAL | VYRE_CAP_CORRECTLY_ROUNDED),
                "and correctly_rounded with its correctly rounded variants");
  /* Every device's profile is within the registration. */
  for (uint32_t sm = 50; sm <= 130; sm++)
    for (int k = 0; k < 8; k++) {
      uint64_t c = caps(sm, k & 1, k >> 1);
      ck_assert_msg((c & ~vc_caps_offered(k >> 1)) == 0,
                    "sm_%u offers 0x%llx outside the registration", sm, (unsigned long long)c);
    }
}
END_TEST

START_TEST(test_fixes) {
  /* The Fix texts and their order (program.c's messages). */
  static const struct {
    uint64_t bit;
    const char *fix;
  } want[] = {
      {VYRE_CAP_F16, "use a device of compute capability 5.3 or newer"},
      {VYRE_CAP_BF16, "use a device of compute capability 8.0 or newer"},
      {VYRE_CAP_TENSOR_CORES,
       "run the MMA ops on a device of compute capability 8.0 or newer (A100, H100, ...) or on "
       "the reference backend"},
      {VYRE_CAP_SUBGROUP, "use a device with 32-lane warps"},
      {VYRE_CAP_ATOMIC64, "use 32-bit atomics"},
      {VYRE_CAP_GRID_BARRIER,
       "use a device that supports cooperative launch, or split the program at the barrier"},
      {VYRE_CAP_TRANSCENDENTAL,
       "this build of the CUDA backend has no PTX math library; use the reference backend or "
       "avoid transcendental ops"},
      {VYRE_CAP_CORRECTLY_ROUNDED,
       "pass a ulp budget >= 1 (this build's PTX math library has no correctly rounded variant), "
       "or use the reference backend"},
      {VYRE_CAP_WORKGROUP_MEMORY, "drop workgroup buffers"},
      {VYRE_CAP_ATOMICS, "drop atomics"},
      {VYRE_CAP_BARRIER, "drop barriers"},
      {VYRE_CAP_TRAP, "drop trap"},
  };
  size_t n = sizeof want / sizeof want[0];
  uint64_t all = 0;
  for (size_t i = 0; i < n; i++) all |= want[i].bit;
  for (size_t i = 0; i < n; i++) {
    uint64_t bit = 0;
    const char *fix = vc_caps_fix(want[i].bit, &bit);
    ck_assert_msg(fix && strcmp(fix, want[i].fix) == 0 && bit == want[i].bit,
                  "the Fix for capability 0x%llx", (unsigned long long)want[i].bit);
    /* With this one and every later one missing, this one is reported. */
    uint64_t later = 0;
    for (size_t j = i; j < n; j++) later |= want[j].bit;
    fix = vc_caps_fix(later, &bit);
    ck_assert_msg(bit == want[i].bit, "capability 0x%llx is reported first of 0x%llx",
                  (unsigned long long)want[i].bit, (unsigned long long)later);
  }
  uint64_t bit = 1;
  ck_assert_msg(vc_caps_fix(vc_caps_offered(VC_MATH | VC_MATH_CR) & ~all, &bit) == NULL && bit == 0,
                "capabilities every served device has come with no Fix");
  ck_assert_msg(vc_caps_fix(0, &bit) == NULL && bit == 0, "nothing missing, no Fix");
}
END_TEST

int main(void) {
  Suite *s = suite_create("caps");
  TCase *core = tcase_create("core");
  tcase_add_test(core, test_profile_bits);
  tcase_add_test(core, test_registration_bits);
  tcase_add_test(core, test_fixes);
  suite_add_tcase(s, core);
  SRunner *sr = srunner_create(s);
  srunner_run_all(sr, CK_NORMAL);
  int failed = srunner_ntests_failed(sr);
  srunner_free(sr);
  return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
