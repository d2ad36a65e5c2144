/* metrics.c -- the metrics registry: readers registered by the modules that own the numbers (metrics.h). */
#include "metrics.h"

#include <stdio.h>
#include <string.h>

#include "util.h"

struct vc_metric_sink {
  vyre_metric *out;
  uint32_t capacity, count;
};

void vc_metric_emit(vc_metric_sink *s, const char *name, uint64_t value) {
  if (s->count < s->capacity) {
    vyre_metric *m = &s->out[s->count];
    memset(m->name, 0, sizeof m->name);
    snprintf(m->name, sizeof m->name, "%s", name);
    m->value = value;
  }
  s->count++;
}

void vc_metrics_init(vc_metrics *m) { memset(m, 0, sizeof *m); }

void vc_metrics_add(vc_metrics *m, vc_metrics_reader read, const void *state) {
  if (m->count == VC_METRICS_READERS) {
    vc_log("metrics registry full (%u readers): one is dropped; raise VC_METRICS_READERS",
           VC_METRICS_READERS);
    return;
  }
  m->readers[m->count].read = read;
  m->readers[m->count].state = state;
  m->count++;
}

vyre_status vc_metrics_snapshot(const vc_metrics *m, vyre_metric *out, uint32_t capacity,
                                uint32_t *count, vyre_error *err) {
  if (!count || (capacity && !out))
    return vyre_error_set(err, VYRE_INVALID_ARGUMENT, 0,
                          "metrics: count is NULL, or out is NULL with capacity %u. Fix: pass "
                          "both",
                          capacity);
  vc_metric_sink s = {out, capacity, 0};
  for (uint32_t i = 0; i < m->count; i++) m->readers[i].read(m->readers[i].state, &s);
  *count = s.count;
  return VYRE_OK;
}
