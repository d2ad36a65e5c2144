/* peer_stub.c -- a CPU stand-in for libwlpeers.so (peers.h) that lets workloads.test drive the peer mode without a GPU: rule_eval computed right, quantified deliberately wrong by one bit, no peer for the rest. */
#include <string.h>

#include "peers.h"
#include "peers_logic.h"

int wl_peer_abi(void) { return WL_PEER_ABI; }

int wl_peer_open(uint32_t device, char *why, size_t why_size) {
  (void)device;
  (void)why;
  (void)why_size;
  return 0;
}

int wl_peer_floor_measure(wl_peer_floor *f, char *why, size_t why_size) {
  (void)why;
  (void)why_size;
  memset(f, 0, sizeof *f);
  f->launch_p50_us = 10.0;
  f->memcpy_gbps = 1000.0;
  f->copy_kernel_gbps = 2000.0; /* the larger one is the roofline's */
  strcpy(f->device, "host stub");
  return 0;
}

int wl_peer_run(const char *name, const wl_instance *w, uint32_t warm, uint32_t runs, double *us,
                void *const *outputs, char *why, size_t why_size) {
  (void)warm;
  int wrong = !strcmp(name, "quantified");
  if (strcmp(name, "rule_eval") && !wrong) {
    strncpy(why, "the stub has no peer for it", why_size);
    if (why_size) why[why_size - 1] = 0;
    return 1;
  }
  const uint32_t *it = w->buf[0].data, *tab = w->buf[1].data;
  for (uint64_t i = 0; i < w->items; i++) {
    uint32_t m = 0;
    if (!wrong) {
      for (int r = 0; r < 32; r++) {
        wlp_rule q = wlp_rule_decode(tab[4 * r], tab[4 * r + 1], tab[4 * r + 2], tab[4 * r + 3]);
        m |= wlp_rule_hit(&q, it[3 * i], it[3 * i + 1], it[3 * i + 2]) << r;
      }
      ((uint32_t *)outputs[0])[i] = m;
      continue;
    }
    uint32_t o[6];
    for (int j = 0; j < 6; j++) o[j] = (it[3 * i + j / 2] >> (16 * (j % 2))) & 0xffff;
    uint32_t p = wlp_present(o);
    for (int q = 0; q < 16; q++) {
      wlp_cond c = wlp_cond_decode(tab[2 * q], tab[2 * q + 1]);
      m |= wlp_cond_hit(&c, o, p) << q;
    }
    ((uint16_t *)outputs[0])[i] = (uint16_t)(m ^ (i == 0)); /* the deliberate error */
  }
  for (uint32_t i = 0; i < runs; i++) us[i] = 1.0 + i; /* p50 of 1 run: 1 us */
  return 0;
}
