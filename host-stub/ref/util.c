/* util.c -- the reference backend's helpers that every other file calls: metrics, timing records, dispatch options. */
#include <string.h>

#include "ref.h"
#include "abi/format/budget.h"
#include "abi/support/sized.h"

void ref_metric_add(ref_backend *b, ref_metric_id id, uint64_t v) {
  atomic_fetch_add_explicit(&b->metrics[id], v, memory_order_relaxed);
}

void ref_metric_max(ref_backend *b, ref_metric_id id, uint64_t v) {
  uint_fast64_t cur = atomic_load_explicit(&b->metrics[id], memory_order_relaxed);
  while (cur < v && !atomic_compare_exchange_weak(&b->metrics[id], &cur, v)) {
  }
}

void ref_timing_report(vyre_timing *timing, uint64_t t_entry, uint64_t t_enqueued,
                       uint64_t exec_ns, uint64_t t_end) {
  if (!timing || timing->struct_size <= sizeof timing->struct_size) return;
  vyre_timing t;
  memset(&t, 0, sizeof t);
  t.valid = VYRE_TIMING_WALL | VYRE_TIMING_DEVICE | VYRE_TIMING_ENQUEUE | VYRE_TIMING_WAIT;
  t.wall_ns = t_end - t_entry;
  t.device_ns = exec_ns; /* the interpreter's execution time */
  t.enqueue_ns = t_enqueued - t_entry;
  t.wait_ns = t_end - t_enqueued;
  vyre__sized_write(timing, &t, sizeof t);
}

vyre_status ref_read_options(const vyre_dispatch_options *in, vyre_dispatch_options *out,
                             ref_limits *lim, uint64_t t_entry, vyre_error *err) {
  vyre__sized_read(out, sizeof *out, NULL);
  if (lim) memset(lim, 0, sizeof *lim);
  if (!in) return VYRE_OK;
  if (in->struct_size < offsetof(vyre_dispatch_options, workgroup))
    return vyre_error_set(err, VYRE_INVALID_ARGUMENT, 0,
                          "dispatch: options->struct_size is %u, too small to be a "
                          "vyre_dispatch_options. Fix: set it to sizeof(vyre_dispatch_options)",
                          in->struct_size);
  vyre__sized_read(out, sizeof *out, in);
  if (out->flags)
    return vyre_error_set(err, VYRE_INVALID_ARGUMENT, 0,
                          "dispatch: options->flags is 0x%x; no flags are defined. Fix: set it "
                          "to 0",
                          out->flags);
  vyre_limits l;
  vyre_status st = vyre__limits_read(in, "dispatch", &l, err);
  if (st != VYRE_OK) return st;
  if (lim) {
    lim->max_steps = l.max_steps;
    lim->timeout_ns = l.timeout_ns;
    lim->deadline_ns = vyre__deadline(t_entry, l.timeout_ns);
  }
  return VYRE_OK;
}
