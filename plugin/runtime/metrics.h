/* metrics.h -- the instance's metrics registry: each module adds its readers at create; a snapshot runs them in order. */
#ifndef VYRE_PLUGIN_CUDA_METRICS_H
#define VYRE_PLUGIN_CUDA_METRICS_H

#include <stdint.h>

#include "vyre/vyre.h"
#include "vyre/vyre_support.h"

/* Where a reader writes its named values (metrics.c). */
typedef struct vc_metric_sink vc_metric_sink;

/* Write one metric.  Names longer than vyre_metric's name are cut. */
void vc_metric_emit(vc_metric_sink *s, const char *name, uint64_t value);

/* A module's reader: takes its own lock if it has one, then emits its
 * values.  `state` is what the module registered. */
typedef void (*vc_metrics_reader)(const void *state, vc_metric_sink *s);

#define VC_METRICS_READERS 24

/* The registry: filled while the instance is created (one thread), read
 * concurrently afterwards. */
typedef struct vc_metrics {
  uint32_t count;
  struct {
    vc_metrics_reader read;
    const void *state;
  } readers[VC_METRICS_READERS];
} vc_metrics;

void vc_metrics_init(vc_metrics *m);
/* Append a reader; metrics are reported in registration order.  Not
 * thread-safe (create time only); a full registry drops the reader and
 * says so in the debug log. */
void vc_metrics_add(vc_metrics *m, vc_metrics_reader read, const void *state);
/*
 * vtable->metrics: run every reader into out[0..capacity); *count is the
 * number of metrics that exist (may exceed capacity).  Thread-safe.
 */
vyre_status vc_metrics_snapshot(const vc_metrics *m, vyre_metric *out, uint32_t capacity,
                                uint32_t *count, vyre_error *err);

#endif /* VYRE_PLUGIN_CUDA_METRICS_H */
