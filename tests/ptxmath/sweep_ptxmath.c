/* sweep_ptxmath.c -- long accuracy sweep of the ptxmath C model against the correctly rounded reference (run by hand; not part of make check). */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <vyre/vyre_program.h>

#include "plugin/ptxmath/ptxmath_model.h"
#include "ptxmath_ref.h"

/*
 * usage: sweep_ptxmath [-s STRIDE] [-a FIRST] [-b LAST] [-t THREADS] [-v acc|fast|cr]
 *                      [-q] [-o RECORDS] [OP...]
 * Visits the f32 bit patterns FIRST, FIRST+STRIDE, ... <= LAST (default:
 * all 2^32 with stride 1), skipping non-canonical ones (subnormals, NaNs
 * other than 0x7FC00000), for every existing variant of each OP (default:
 * all fourteen), and prints one line per (op, variant): inputs, max ULP
 * distance from the correctly rounded result, the worst input, how many
 * results are not correctly rounded, and how many references were
 * undecidable at long double precision (excluded).  -v runs one variant
 * only (cr: the correctly rounded one).  -q decides from the double libm
 * first and falls back to long double only near a rounding boundary
 * (pm_ref_quick: several times faster; the whole sweep of docs/ulp.md).
 * -o writes every undecided input and every result that is not correctly
 * rounded as "OP VARIANT KIND X OURS REF" lines for cr_resolve.py.
 */

static const uint32_t all_ops[] = {VYRE_OP_RSQRT, VYRE_OP_EXP,  VYRE_OP_EXP2, VYRE_OP_LOG,  VYRE_OP_LOG2,
                                   VYRE_OP_SIN,   VYRE_OP_COS,  VYRE_OP_TAN,  VYRE_OP_ASIN, VYRE_OP_ACOS,
                                   VYRE_OP_ATAN,  VYRE_OP_SINH, VYRE_OP_COSH, VYRE_OP_TANH};

static FILE *records;
static pthread_mutex_t records_lock = PTHREAD_MUTEX_INITIALIZER;
static int quick;

static const char *variant_name(pm_variant v) { return v == PM_FAST ? "fast" : v == PM_CR ? "cr" : "acc"; }

static void record(uint32_t op, pm_variant v, const char *kind, uint32_t x, uint32_t y, uint32_t r) {
  if (!records) return;
  pthread_mutex_lock(&records_lock);
  fprintf(records, "%s %s %s %08x %08x %08x\n", pm_ref_name(op), variant_name(v), kind, x, y, r);
  fflush(records); /* rare; a sweep stopped by a time limit keeps what it found */
  pthread_mutex_unlock(&records_lock);
}

typedef struct job {
  uint32_t op;
  pm_variant variant;
  uint64_t first, last, stride;
  unsigned index, count; /* this thread takes every count-th step */
  uint64_t inputs, not_cr, uncertain;
  uint32_t max_ulp, worst;
} job;

static void *run(void *arg) {
  job *j = arg;
  uint64_t step = j->stride * j->count;
  for (uint64_t b = j->first + j->stride * j->index; b <= j->last; b += step) {
    uint32_t x = (uint32_t)b;
    if (pm_canon(x) != x) continue;
    uint32_t y;
    pm_model(j->op, j->variant, x, &y);
    int unc;
    uint32_t r = quick ? pm_ref_quick(j->op, x, &unc) : pm_ref(j->op, x, &unc);
    j->inputs++;
    if (unc) {
      j->uncertain++;
      record(j->op, j->variant, "undecided", x, y, r);
      continue;
    }
    uint32_t d = pm_ulp_dist(y, r);
    if (d) j->not_cr++, record(j->op, j->variant, "mismatch", x, y, r);
    if (d > j->max_ulp) {
      j->max_ulp = d;
      j->worst = x;
    }
  }
  return NULL;
}

static uint32_t op_by_name(const char *s) {
  for (size_t i = 0; i < sizeof all_ops / sizeof *all_ops; i++)
    if (strcmp(pm_ref_name(all_ops[i]), s) == 0) return all_ops[i];
  return 0;
}

int main(int argc, char **argv) {
  uint64_t stride = 1, first = 0, last = 0xFFFFFFFFu;
  long threads = sysconf(_SC_NPROCESSORS_ONLN);
  int opt, only = -1;
  while ((opt = getopt(argc, argv, "s:a:b:t:v:qo:")) != -1) {
    switch (opt) {
      case 'v':
        only = strcmp(optarg, "acc") == 0 ? PM_ACCURATE : strcmp(optarg, "fast") == 0 ? PM_FAST
               : strcmp(optarg, "cr") == 0 ? PM_CR : -2;
        if (only == -2) {
          fprintf(stderr, "sweep_ptxmath: -v takes acc, fast or cr\n");
          return 2;
        }
        break;
      case 'q': quick = 1; break;
      case 'o':
        if (!(records = fopen(optarg, "w"))) {
          fprintf(stderr, "sweep_ptxmath: cannot write %s\n", optarg);
          return 2;
        }
        break;
      case 's': stride = strtoull(optarg, NULL, 0); break;
      case 'a': first = strtoull(optarg, NULL, 16); break;
      case 'b': last = strtoull(optarg, NULL, 16); break;
      case 't': threads = strtol(optarg, NULL, 0); break;
      default:
        fprintf(stderr, "usage: %s [-s STRIDE] [-a FIRSTHEX] [-b LASTHEX] [-t THREADS] [-v acc|fast|cr] [-q] "
                        "[-o RECORDS] [OP...]\n", argv[0]);
        return 2;
    }
  }
  if (stride == 0 || threads < 1 || threads > 256 || last > 0xFFFFFFFFu) {
    fprintf(stderr, "sweep_ptxmath: bad arguments: stride must be > 0, threads in 1..256, LAST <= ffffffff\n");
    return 2;
  }
  uint32_t ops[32];
  size_t nops = 0;
  for (int i = optind; i < argc && nops < 32; i++) {
    if (!(ops[nops++] = op_by_name(argv[i]))) {
      fprintf(stderr, "sweep_ptxmath: unknown op '%s'. Fix: use rsqrt exp exp2 log log2 sin cos tan asin acos atan sinh cosh tanh\n", argv[i]);
      return 2;
    }
  }
  if (!nops) {
    nops = sizeof all_ops / sizeof *all_ops;
    memcpy(ops, all_ops, sizeof all_ops);
  }
  printf("%-6s %-8s %12s %8s %10s %10s %10s\n", "op", "variant", "inputs", "max_ulp", "worst_x", "not_cr", "undecided");
  for (size_t i = 0; i < nops; i++) {
    for (int v = PM_ACCURATE; v <= PM_CR; v++) {
      uint32_t tmp;
      if ((only >= 0 && v != only) || pm_model(ops[i], (pm_variant)v, 0, &tmp) != 0) continue;
      job jobs[256];
      pthread_t tid[256];
      for (long t = 0; t < threads; t++) {
        jobs[t] = (job){.op = ops[i], .variant = (pm_variant)v, .first = first, .last = last, .stride = stride,
                        .index = (unsigned)t, .count = (unsigned)threads};
        pthread_create(&tid[t], NULL, run, &jobs[t]);
      }
      job sum = {0};
      for (long t = 0; t < threads; t++) {
        pthread_join(tid[t], NULL);
        sum.inputs += jobs[t].inputs;
        sum.not_cr += jobs[t].not_cr;
        sum.uncertain += jobs[t].uncertain;
        if (jobs[t].max_ulp > sum.max_ulp || (jobs[t].max_ulp == sum.max_ulp && jobs[t].worst < sum.worst)) {
          sum.max_ulp = jobs[t].max_ulp;
          sum.worst = jobs[t].worst;
        }
      }
      printf("%-6s %-8s %12llu %8u %10.8x %10llu %10llu%s\n", pm_ref_name(ops[i]),
             v == PM_FAST ? "fast*" : v == PM_CR ? "cr" : "accurate",
             (unsigned long long)sum.inputs, sum.max_ulp, sum.worst, (unsigned long long)sum.not_cr,
             (unsigned long long)sum.uncertain, v == PM_FAST ? "  (*model stand-in, not the hardware)" : "");
      fflush(stdout);
    }
  }
  if (records && fclose(records) != 0) {
    fprintf(stderr, "sweep_ptxmath: writing the records failed\n");
    return 1;
  }
  return 0;
}
