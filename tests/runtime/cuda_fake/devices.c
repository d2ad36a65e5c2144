/* devices.c -- check_cuda_fake's devices case: several devices, one instance each, used from threads; the disk cache per device; a bad ordinal; device UUIDs. */
#include <pthread.h>

#include "harness.h"

#define MD_DEVICES 4
#define MD_THREADS 3
#define MD_ROUNDS 12
#define MD_N 1000u

/* Plays prog_scale by the device the launch ran on: device d's program
 * multiplies by d + 2, so a launch in the wrong context gives a wrong
 * result. */
static void play_by_device(const fakecuda_launch *l, void *user) {
  (void)user;
  const uint32_t *in = (const uint32_t *)(uintptr_t)l->params[0];
  uint32_t *out = (uint32_t *)(uintptr_t)l->params[1];
  uint32_t n = l->counts[0], nin = l->counts[1], nout = l->counts[2];
  for (uint32_t i = 0; i < n && i < nin && i < nout; i++) out[i] = in[i] * (uint32_t)(l->device + 2);
}

typedef struct md_arg {
  vyre_backend *b;
  const prog *p;
  uint32_t device, thread;
  int failures;
  char first[256];
} md_arg;

static void *md_worker(void *v) {
  md_arg *a = v;
  uint32_t data[MD_N];
  for (int round = 0; round < MD_ROUNDS; round++) {
    for (uint32_t i = 0; i < MD_N; i++) data[i] = i * 2654435761u + a->thread * 7u + (uint32_t)round;
    vyre_outputs *out = NULL;
    vyre_error err = VYRE_ERROR_INIT;
    vyre_status st = run_scale(a->b, a->p, MD_N, data, &out, NULL, &err);
    int bad = st != VYRE_OK || out->count != 1 || out->items[0].size != MD_N * 4u;
    for (uint32_t i = 0; !bad && i < MD_N; i++)
      bad = ((const uint32_t *)out->items[0].data)[i] != data[i] * (a->device + 2);
    if (bad && !a->failures)
      snprintf(a->first, sizeof a->first, "round %d: %.200s", round,
               st != VYRE_OK ? err.message : "wrong result");
    a->failures += bad;
    if (st == VYRE_OK) a->b->vt->outputs_free(a->b, out);
  }
  return NULL;
}

static vyre_backend *mk_on(uint32_t ordinal) {
  vyre_backend_options o = {sizeof o, ordinal, 0, 0, NULL};
  vyre_backend *b = NULL;
  vyre_error err = VYRE_ERROR_INIT;
  vyre_status st = reg->create(&o, &b, &err);
  ck_assert_msg(st == VYRE_OK, "create on device %u: %s", ordinal, err.message);
  return b;
}

START_TEST(test_devices_concurrent) {
  setenv("FAKECUDA_DEVICES", "4", 1);
  fk.reset();
  fakecuda_device d2 = {"Fake Ampere", 512ull << 20, 8, 0, 108};
  fakecuda_device d3 = {"", 256ull << 20, 0, 0, 0};
  fk.set_device(2, &d2);
  fk.set_device(3, &d3);
  vyre_backend *b[MD_DEVICES];
  const vyre_cuda_interop *cu = NULL;
  void *ctx[MD_DEVICES];
  for (uint32_t d = 0; d < MD_DEVICES; d++) {
    b[d] = mk_on(d);
    vyre_device_profile p;
    memset(&p, 0, sizeof p);
    p.struct_size = sizeof p;
    vyre_error err = VYRE_ERROR_INIT;
    ck_assert_int_eq(b[d]->vt->device_profile(b[d], &p, &err), VYRE_OK);
    ck_assert_msg(p.ordinal == d, "instance %u reports ordinal %u", d, p.ordinal);
    ck_assert_msg(p.device_count == MD_DEVICES, "device %u's profile counts %u devices, expected 4",
                  d, p.device_count);
    ck_assert_uint_eq(p.total_memory, d == 2 ? 512ull << 20 : d == 3 ? 256ull << 20 : 1ull << 30);
    ck_assert_uint_eq(p.compute_major, d == 2 ? 8 : 9);
    ck_assert_uint_eq(p.compute_units, d == 2 ? 108 : 132);
    char want[64];
    if (d == 2) snprintf(want, sizeof want, "Fake Ampere");
    else if (d == 0) snprintf(want, sizeof want, "Fake CUDA Device");
    else snprintf(want, sizeof want, "Fake CUDA Device %u", d);
    ck_assert_str_eq(p.name, want);
    cu = interop_of(b[d]);
    int32_t dev = -1;
    ck_assert_int_eq(cu->context(b[d], &ctx[d], &dev, &err), VYRE_OK);
    ck_assert_msg(dev == (int32_t)d, "instance %u runs on CUdevice %d", d, dev);
    for (uint32_t e = 0; e < d; e++)
      ck_assert_msg(ctx[e] != ctx[d], "devices %u and %u have their own primary contexts", e, d);
  }

  /* Every device, several threads each, at once. */
  fk.set_hook(play_by_device, NULL);
  prog p[MD_DEVICES];
  md_arg a[MD_DEVICES][MD_THREADS];
  pthread_t t[MD_DEVICES][MD_THREADS];
  for (uint32_t d = 0; d < MD_DEVICES; d++) p[d] = prog_scale(MD_N, d + 2, 128);
  unsigned long launches0 = fk.launch_count();
  for (uint32_t d = 0; d < MD_DEVICES; d++)
    for (uint32_t k = 0; k < MD_THREADS; k++) {
      a[d][k] = (md_arg){b[d], &p[d], d, k, 0, ""};
      ck_assert_int_eq(pthread_create(&t[d][k], NULL, md_worker, &a[d][k]), 0);
    }
  for (uint32_t d = 0; d < MD_DEVICES; d++)
    for (uint32_t k = 0; k < MD_THREADS; k++) {
      pthread_join(t[d][k], NULL);
      ck_assert_msg(a[d][k].failures == 0, "device %u thread %u: %d bad dispatches, first: %s", d,
                    k, a[d][k].failures, a[d][k].first);
    }
  /* Each launch ran in the context of the device whose instance made it. */
  unsigned long per[MD_DEVICES] = {0};
  for (unsigned long i = launches0; i < fk.launch_count(); i++) {
    fakecuda_launch l;
    ck_assert_int_eq(fk.launch_get(i, &l), 0);
    ck_assert_msg(l.device >= 0 && l.device < MD_DEVICES, "launch %lu has a device (%d)", i,
                  l.device);
    ck_assert_msg(l.context == ctx[l.device], "launch %lu ran in device %d's primary context", i,
                  l.device);
    per[l.device]++;
  }
  for (uint32_t d = 0; d < MD_DEVICES; d++) {
    ck_assert_msg(per[d] == MD_THREADS * MD_ROUNDS, "device %u ran %lu launches, expected %d", d,
                  per[d], MD_THREADS * MD_ROUNDS);
    ck_assert_uint_eq(metric(b[d], "dispatch.count"), MD_THREADS * MD_ROUNDS);
    ck_assert_msg(fk.device_bytes(d) > 0, "device %u's pools hold its own memory", d);
  }

  /* A resident buffer lands on its instance's device only. */
  unsigned long long before[MD_DEVICES];
  for (uint32_t d = 0; d < MD_DEVICES; d++) before[d] = fk.device_bytes(d);
  vyre_resident h = 0;
  vyre_error err = VYRE_ERROR_INIT;
  ck_assert_int_eq(b[1]->vt->resident_alloc(b[1], 3u << 20, &h, &err), VYRE_OK);
  for (uint32_t d = 0; d < MD_DEVICES; d++)
    ck_assert_msg(d == 1 ? fk.device_bytes(d) >= before[d] + (3u << 20)
                         : fk.device_bytes(d) == before[d],
                  "3 MiB resident on device 1 changed device %u's memory %llu -> %llu", d,
                  before[d], fk.device_bytes(d));
  ck_assert_int_eq(b[1]->vt->resident_free(b[1], h, &err), VYRE_OK);

  /* One device's instance goes; the others keep their memory and work. */
  b[0]->vt->destroy(b[0]);
  ck_assert_msg(fk.device_bytes(0) == 0, "device 0's memory is all freed (%llu left)",
                fk.device_bytes(0));
  for (uint32_t d = 1; d < MD_DEVICES; d++) {
    ck_assert_msg(fk.device_bytes(d) > 0, "device %u keeps its memory", d);
    md_arg one = {b[d], &p[d], d, 9, 0, ""};
    md_worker(&one);
    ck_assert_msg(one.failures == 0, "device %u after device 0 went: %s", d, one.first);
  }
  for (uint32_t d = 1; d < MD_DEVICES; d++) b[d]->vt->destroy(b[d]);
  assert_no_leaks_after_destroy("devices");
  for (uint32_t d = 0; d < MD_DEVICES; d++) free(p[d].bytes);
}
END_TEST

/* The disk cache keeps one cubin per compute capability: the same program
 * on an sm_90 and an sm_80 device compiles twice, and each device then
 * finds its own. */
START_TEST(test_devices_disk_cache) {
  char cubins[512];
  snprintf(cubins, sizeof cubins, "%s/cache/cuda", tmpdir);
  setenv("FAKECUDA_DEVICES", "3", 1);
  fk.reset();
  fakecuda_device d1 = {"", 0, 8, 0, 0};
  fk.set_device(1, &d1);
  prog p = prog_scale(64, 2, 64);
  uint32_t in[64] = {0};
  vyre_outputs *out = NULL;
  vyre_error err = VYRE_ERROR_INIT;
  for (int pass = 0; pass < 2; pass++)
    for (uint32_t d = 0; d < 3; d++) {
      vyre_backend *b = mk_on(d);
      ck_assert_int_eq(run_scale(b, &p, 64, in, &out, NULL, &err), VYRE_OK);
      b->vt->outputs_free(b, out);
      /* Device 2 (sm_90, like device 0) finds device 0's cubin. */
      int hit = pass == 1 || d == 2;
      ck_assert_msg(metric(b, "cache.disk.hits") == (uint64_t)hit,
                    "pass %d device %u: disk cache %s", pass, d, hit ? "hit" : "miss");
      b->vt->destroy(b);
    }
  ck_assert_int_eq(count_files(cubins, ".cubin"), 2);
  assert_no_leaks_after_destroy("devices disk cache");
  free(p.bytes);
}
END_TEST

/* A bad ordinal: VYRE_NO_DEVICE naming the ordinal and the count, with
 * a fix; a device the backend cannot use does not spoil the others. */
START_TEST(test_devices_bad_ordinal) {
  setenv("FAKECUDA_DEVICES", "2", 1);
  fk.reset();
  vyre_error err = VYRE_ERROR_INIT;
  vyre_backend *b = NULL;
  uint32_t bad[] = {2, 7, 1024, UINT32_MAX};
  for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
    vyre_backend_options o = {sizeof o, bad[i], 0, 0, NULL};
    ck_assert_int_eq(reg->create(&o, &b, &err), VYRE_NO_DEVICE);
    ck_assert_ptr_null(b);
    char want[64];
    snprintf(want, sizeof want, "CUDA device %u not present", bad[i]);
    ck_assert_msg(strstr(err.message, want) && strstr(err.message, "sees 2 CUDA devices") &&
                      strstr(err.message, "ordinals 0 to 1") && strstr(err.message, "Fix:"),
                  "ordinal %u: %s", bad[i], err.message);
  }
  setenv("FAKECUDA_DEVICES", "1", 1);
  fk.reset();
  vyre_backend_options o1 = {sizeof o1, 1, 0, 0, NULL};
  ck_assert_int_eq(reg->create(&o1, &b, &err), VYRE_NO_DEVICE);
  ck_assert_msg(strstr(err.message, "sees 1 CUDA device (ordinals 0 to 0)") != NULL,
                "one device: %s", err.message);

  setenv("FAKECUDA_DEVICES", "2", 1);
  fk.reset();
  fakecuda_device old = {"Fake Pascal", 0, 6, 1, 0};
  fk.set_device(1, &old);
  vyre_backend_options o = {sizeof o, 1, 0, 0, NULL};
  ck_assert_int_eq(reg->create(&o, &b, &err), VYRE_NO_DEVICE);
  ck_assert_msg(strstr(err.message, "CUDA device 1 (Fake Pascal)") &&
                    strstr(err.message, "7.0 or newer") && strstr(err.message, "Fix:"),
                "old device: %s", err.message);
  b = mk_on(0);
  vyre_device_profile p;
  memset(&p, 0, sizeof p);
  p.struct_size = sizeof p;
  ck_assert_int_eq(b->vt->device_profile(b, &p, &err), VYRE_OK);
  ck_assert_uint_eq(p.device_count, 2);
  b->vt->destroy(b);
  assert_no_leaks_after_destroy("bad ordinal");
}
END_TEST

/* Device UUIDs: each device's from cuDeviceGetUuid_v2, the older entry
 * point when the driver serves only that, zeros (and a working instance)
 * when it has neither; a pre-UUID caller's shorter profile is never
 * written past its struct_size. */
static void uuid_of(uint32_t ordinal, uint8_t out[16], const char *what) {
  vyre_backend *b = mk_on(ordinal);
  vyre_device_profile p;
  memset(&p, 0xee, sizeof p);
  p.struct_size = sizeof p;
  vyre_error err = VYRE_ERROR_INIT;
  ck_assert_msg(b->vt->device_profile(b, &p, &err) == VYRE_OK, "%s: %s", what, err.message);
  memcpy(out, p.uuid, 16);
  b->vt->destroy(b);
}

START_TEST(test_devices_uuid) {
  setenv("FAKECUDA_DEVICES", "3", 1);
  static const uint8_t want0[16] = {0xfa, 0x4e, 0xc0, 0xda, 0, 0, 0x40, 0, 0x80, 0, 0, 0, 0, 0, 0, 0};
  for (int mode = 2; mode >= 0; mode--) {
    char m[8];
    snprintf(m, sizeof m, "%d", mode);
    setenv("FAKECUDA_UUID", m, 1);
    fk.reset();
    for (uint32_t d = 0; d < 3; d++) {
      uint8_t u[16], want[16];
      memcpy(want, want0, 16);
      want[5] = want[15] = (uint8_t)d;
      if (mode == 0) memset(want, 0, 16);
      uuid_of(d, u, "uuid");
      ck_assert_msg(memcmp(u, want, 16) == 0,
                    "FAKECUDA_UUID=%d device %u: the profile's uuid is the driver's "
                    "(%02x%02x%02x%02x...%02x), or zero without cuDeviceGetUuid",
                    mode, d, u[0], u[1], u[2], u[3], u[15]);
    }
    ck_assert_uint_eq(fk.calls("cuDeviceGetUuid"), mode ? 3 : 0);
    char last[512];
    ck_assert_msg(fk.violations(last, sizeof last) == 0, "mode %d: driver used correctly: %s",
                  mode, last);
  }
  /* A caller built before the field: 272 bytes, nothing written past them. */
  setenv("FAKECUDA_UUID", "2", 1);
  fk.reset();
  vyre_backend *b = mk_on(1);
  vyre_device_profile p;
  memset(&p, 0xee, sizeof p);
  p.struct_size = offsetof(vyre_device_profile, uuid);
  vyre_error err = VYRE_ERROR_INIT;
  ck_assert_int_eq(b->vt->device_profile(b, &p, &err), VYRE_OK);
  ck_assert_uint_eq(p.device_count, 3);
  for (int i = 0; i < 16; i++)
    ck_assert_msg(p.uuid[i] == 0xee, "byte %d past a 272-byte profile is left alone", i);
  b->vt->destroy(b);
  unsetenv("FAKECUDA_UUID");
  setenv("FAKECUDA_DEVICES", "1", 1);
  fk.reset();
  assert_no_leaks_after_destroy("uuid");
}
END_TEST

void fake_devices_tests(TCase *tc) {
  tcase_add_test(tc, test_devices_concurrent);
  tcase_add_test(tc, test_devices_disk_cache);
  tcase_add_test(tc, test_devices_bad_ordinal);
  tcase_add_test(tc, test_devices_uuid);
}
