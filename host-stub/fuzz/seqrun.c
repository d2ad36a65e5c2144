/* seqrun.c -- vyre fuzz --sequences: each random sequence on the backend with fusion on, with it off, and on the reference; every buffer compared bit for bit. */
#include <inttypes.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "abi/support/clock.h"
#include "fuzz.h"

/* The instance's table has entry e (struct_size covers it, not NULL). */
#define HAS(b, e)                                                                           \
  ((b)->vt->struct_size >= offsetof(vyre_backend_vtable, e) + sizeof(void (*)(void)) &&    \
   (b)->vt->e != NULL)

/* What one backend made of a sequence: every pool buffer's bytes. */
typedef struct seq_out {
  uint8_t *buf[FZ_SEQ_MAX_BUFS];
  vyre_status st;
  char message[256];
} seq_out;

static void out_free(seq_out *r) {
  for (uint32_t k = 0; k < FZ_SEQ_MAX_BUFS; k++) free(r->buf[k]);
  memset(r, 0, sizeof *r);
}

/* The steps as program references (bytes, or pipelines made here). */
static vyre_status make_refs(vyre_backend *b, const fz_seq *q, vyre_program_ref *ref,
                             vyre_pipeline *pipe, vyre_error *err) {
  int pipes = q->pipelines && HAS(b, pipeline_create) &&
              HAS(b, pipeline_release);
  for (uint32_t s = 0; s < q->nstep; s++) {
    vyre_program_ref r = VYRE_PROGRAM_BYTES(q->prog[s], q->size[s]);
    ref[s] = r;
    if (!pipes) continue;
    vyre_status st = b->vt->pipeline_create(b, q->prog[s], q->size[s], NULL, &pipe[s], err);
    if (st != VYRE_OK) return st;
    vyre_program_ref p = VYRE_PROGRAM_PIPELINE(pipe[s]);
    ref[s] = p;
  }
  return VYRE_OK;
}

/* Upload the pool, run the steps, download the pool into r. */
static void run_one(vyre_backend *b, const fz_seq *q, seq_out *r) {
  vyre_error err = VYRE_ERROR_INIT;
  vyre_resident h[FZ_SEQ_MAX_BUFS] = {0};
  vyre_pipeline pipe[FZ_SEQ_MAX_STEPS] = {0};
  vyre_program_ref ref[FZ_SEQ_MAX_STEPS];
  vyre_resident bound[FZ_SEQ_MAX_STEPS][FZ_SEQ_MAX_BIND];
  vyre_sequence_step steps[FZ_SEQ_MAX_STEPS];
  vyre_status st = VYRE_OK;
  memset(r, 0, sizeof *r);
  for (uint32_t k = 0; k < q->nbuf && st == VYRE_OK; k++) {
    st = b->vt->resident_alloc(b, q->bytes[k], &h[k], &err);
    if (st == VYRE_OK) st = b->vt->resident_upload(b, h[k], q->init[k], q->bytes[k], &err);
  }
  if (st == VYRE_OK) st = make_refs(b, q, ref, pipe, &err);
  for (uint32_t s = 0; s < q->nstep; s++) {
    for (uint32_t j = 0; j < q->nbind[s]; j++) bound[s][j] = h[q->bind[s][j]];
    vyre_sequence_step one = {sizeof one, q->nbind[s], &ref[s], bound[s], NULL};
    steps[s] = one;
  }
  if (st == VYRE_OK)
    st = b->vt->dispatch_sequence(b, steps, q->nstep, q->repeat, NULL, 0, NULL, &err);
  for (uint32_t k = 0; k < q->nbuf && st == VYRE_OK; k++) {
    r->buf[k] = malloc(q->bytes[k] ? q->bytes[k] : 1);
    if (!r->buf[k]) st = vyre_error_set(&err, VYRE_OUT_OF_MEMORY, 0, "fuzz: out of memory");
    else st = b->vt->resident_download(b, h[k], r->buf[k], q->bytes[k], &err);
  }
  for (uint32_t s = 0; s < q->nstep; s++)
    if (pipe[s]) b->vt->pipeline_release(b, pipe[s], NULL);
  for (uint32_t k = 0; k < q->nbuf; k++)
    if (h[k]) b->vt->resident_free(b, h[k], NULL);
  r->st = st;
  if (st != VYRE_OK) snprintf(r->message, sizeof r->message, "%.200s", err.message);
}

/* The first byte where a and b differ in any pool buffer: 1 and where,
 * or 0 when they agree. */
static int differs(const fz_seq *q, const seq_out *a, const seq_out *b, uint32_t *buf,
                   uint64_t *byte) {
  for (uint32_t k = 0; k < q->nbuf; k++)
    for (uint64_t i = 0; i < q->bytes[k]; i++)
      if (a->buf[k][i] != b->buf[k][i]) {
        *buf = k;
        *byte = i;
        return 1;
      }
  return 0;
}

static void report(const fz_options *o, const char *what, const char *id, uint64_t index,
                   const fz_seq *q, const char *detail) {
  if (o->progress) o->progress(o->progress_ctx, NULL);
  if (o->color) fprintf(o->out, "\033[1;31m%s\033[0m ", what);
  else fprintf(o->out, "%s ", what);
  fprintf(o->out,
          "sequence %" PRIu64 " (%u steps x %u, %u buffers, workgroup %u%s): %s\n"
          "  replay: vyre fuzz --sequences --backend %s --seed %" PRIu64 " --start %" PRIu64
          " --count 1\n",
          index, q->nstep, q->repeat, q->nbuf, q->wg, q->pipelines ? ", pipelines" : "", detail,
          id, o->seed, index);
}

/* Compare one sequence's three runs; 1 when it is a mismatch or failure. */
static int judge(const fz_options *o, const char *id, uint64_t index, const fz_seq *q,
                 const seq_out r[3], fz_summary *sum) {
  static const char *names[3] = {"fused", "unfused", "reference"};
  char detail[640];
  if (r[0].st || r[1].st || r[2].st) {
    if (r[0].st == r[1].st && r[1].st == r[2].st) return 0; /* refused alike */
    for (int k = 0; k < 3; k++)
      if (r[k].st) {
        snprintf(detail, sizeof detail, "%s failed: %s", names[k], r[k].message);
        break;
      }
    report(o, "FAIL", id, index, q, detail);
    sum->failures++;
    return 1;
  }
  for (int k = 1; k < 3; k++) {
    uint32_t buf;
    uint64_t byte;
    if (!differs(q, &r[0], &r[k], &buf, &byte)) continue;
    snprintf(detail, sizeof detail, "fused and %s differ in buffer %u (%s) at byte %" PRIu64
             ": 0x%02x vs 0x%02x", names[k], buf, vyre_type_name(q->type[buf]), byte,
             r[0].buf[buf][byte], r[k].buf[buf][byte]);
    report(o, "MISMATCH", id, index, q, detail);
    sum->mismatches++;
    return 1;
  }
  return 0;
}

/* The fused instance's fuse.* counters, said once at the end. */
static void say_fusion(const fz_options *o, vyre_backend *b) {
  vyre_metric m[256];
  uint32_t n = 0;
  if (!HAS(b, metrics) || b->vt->metrics(b, m, 256, &n, NULL) != VYRE_OK) return;
  for (uint32_t i = 0; i < n && i < 256; i++)
    if (strcmp(m[i].name, "fuse.steps") == 0 || strcmp(m[i].name, "fuse.launches_saved") == 0 ||
        strcmp(m[i].name, "fuse.refused") == 0)
      fprintf(o->out, "  %s %" PRIu64 "\n", m[i].name, m[i].value);
}

int fz_sequences_run(const fz_options *o, vyre_backend *fused, vyre_backend *unfused,
                     vyre_backend *reference, const char *id, vyre_error *err) {
  if (!fused || !unfused || !reference || !HAS(fused, dispatch_sequence) ||
      !HAS(fused, resident_alloc)) {
    vyre_error_set(err, VYRE_UNSUPPORTED, 0,
                   "fuzz --sequences: backend %s has no instance with resident buffers and "
                   "dispatch_sequence. Fix: fuzz a backend that offers sequences",
                   id ? id : "?");
    return 2;
  }
  fz_summary local, *sum = o->summary ? o->summary : &local;
  memset(sum, 0, sizeof *sum);
  uint64_t t0 = vyre__now_ns();
  uint32_t max = o->max_failures ? o->max_failures : 10;
  for (uint64_t i = o->start; i < o->start + o->count; i++) {
    fz_seq q;
    vyre_error gerr = VYRE_ERROR_INIT;
    if (fz_seq_generate(o->seed, i, &q, &gerr) != VYRE_OK) {
      report(o, "FAIL", id, i, &q, gerr.message);
      sum->failures++;
    } else {
      seq_out r[3];
      run_one(fused, &q, &r[0]);
      run_one(unfused, &q, &r[1]);
      run_one(reference, &q, &r[2]);
      judge(o, id, i, &q, r, sum);
      for (int k = 0; k < 3; k++) out_free(&r[k]);
      fz_seq_free(&q);
    }
    sum->programs++;
    if (o->progress) {
      char line[96];
      snprintf(line, sizeof line, "sequences %" PRIu64 "/%" PRIu64 ", %u bad", sum->programs,
               o->count, sum->mismatches + sum->failures);
      o->progress(o->progress_ctx, line);
    }
    if (sum->mismatches + sum->failures >= max) {
      sum->stopped = 1;
      break;
    }
  }
  if (o->progress) o->progress(o->progress_ctx, NULL);
  sum->seconds = (double)(vyre__now_ns() - t0) / 1e9;
  fprintf(o->out, "%" PRIu64 " sequences (fused, unfused, reference): %u mismatches, %u failures\n",
          sum->programs, sum->mismatches, sum->failures);
  say_fusion(o, fused);
  return sum->mismatches || sum->failures ? 1 : 0;
}
