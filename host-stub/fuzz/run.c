/* run.c -- vyre fuzz: random programs on a backend and the reference (mismatches become minimized capsules), or the reference + codegen + ptxas without a GPU. */
#include <inttypes.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "abi/support/clock.h"
#include "plugin/codegen/codegen.h"
#include "fuzz.h"

uint32_t fz_flags_for(const cf_offer *offer) {
  uint32_t f = 0;
  for (uint32_t op = VYRE_OP_RSQRT; op <= VYRE_OP_TANH; op++)
    if (!cf_opset_has(&offer->ops, op)) f |= PROGEN_NO_TRANSCENDENTAL;
  if (!(offer->caps & VYRE_CAP_TRANSCENDENTAL)) f |= PROGEN_NO_TRANSCENDENTAL;
  /* Correctly rounded: transcendentals under strict too, bit for bit. */
  if (offer->caps & VYRE_CAP_CORRECTLY_ROUNDED) f |= PROGEN_STRICT_TRANSCENDENTAL;
  if (!(offer->caps & VYRE_CAP_TRAP) || !cf_opset_has(&offer->ops, VYRE_OP_TRAP)) f |= PROGEN_NO_TRAP;
  if (!(offer->caps & VYRE_CAP_GRID_BARRIER)) f |= PROGEN_NO_GRID_BARRIER;
  if (!(offer->caps & VYRE_CAP_ATOMICS)) f |= PROGEN_NO_ATOMICS;
  for (uint32_t op = VYRE_OP_ATOMIC_ADD; op <= VYRE_OP_ATOMIC_CAS; op++)
    if (!cf_opset_has(&offer->ops, op)) f |= PROGEN_NO_ATOMICS;
  if (!(offer->caps & VYRE_CAP_ATOMIC64)) f |= PROGEN_NO_ATOMIC64;
  if (!(offer->caps & VYRE_CAP_SUBGROUP)) f |= PROGEN_NO_SUBGROUP;
  for (uint32_t op = VYRE_OP_SUBGROUP_BALLOT; op <= VYRE_OP_SUBGROUP_REDUCE; op++)
    if (!cf_opset_has(&offer->ops, op)) f |= PROGEN_NO_SUBGROUP;
  if (!(offer->caps & VYRE_CAP_WORKGROUP_MEMORY) || !(offer->caps & VYRE_CAP_BARRIER))
    f |= PROGEN_NO_WORKGROUP_MEMORY;
  if (!(offer->caps & VYRE_CAP_TENSOR_CORES)) f |= PROGEN_NO_MMA;
  for (uint32_t op = VYRE_OP_MMA_FILL; op <= VYRE_OP_MMA_STORE; op++)
    if (!cf_opset_has(&offer->ops, op)) f |= PROGEN_NO_MMA;
  if (!(offer->caps & VYRE_CAP_F16) || !((offer->storage_types >> VYRE_T_F16) & 1)) f |= PROGEN_NO_F16;
  if (!(offer->caps & VYRE_CAP_BF16) || !((offer->storage_types >> VYRE_T_BF16) & 1)) f |= PROGEN_NO_BF16;
  return f;
}

void fz_claims_from(const cf_offer *offer, progen_claims *out) {
  memset(out, 0, sizeof *out);
  for (uint32_t op = 0; op < 256; op++) {
    const vyre_op_info *info = vyre_op_lookup(op);
    if (!info || !cf_opset_has(&offer->ops, op)) continue;
    /* A statement has no type; 0 claims every type the op allows. */
    uint32_t m = !info->type_mask ? VYRE_TBIT(VYRE_T_VOID)
                 : offer->op_types[op] ? offer->op_types[op] & info->type_mask
                                       : info->type_mask;
    /* 64-bit values need the int64 capability (vyre_program_needs). */
    if (!(offer->caps & VYRE_CAP_INT64)) m &= ~(VYRE_TBIT(VYRE_T_U64) | VYRE_TBIT(VYRE_T_I64));
    out->op_types[op] = m;
  }
  out->storage_types = offer->storage_types;
  out->caps = offer->caps;
}

vyre_status fz_generate(uint64_t seed, uint64_t index, uint32_t flags, fz_program *out,
                        vyre_error *err) {
  return fz_generate_claimed(seed, index, flags, NULL, 0, out, err);
}

vyre_status fz_generate_claimed(uint64_t seed, uint64_t index, uint32_t flags,
                                const progen_claims *claims, uint32_t attempt, fz_program *out,
                                vyre_error *err) {
  memset(out, 0, sizeof *out);
  progen_options po;
  memset(&po, 0, sizeof po);
  po.flags = (flags & ~(PROGEN_RACE_FREE | PROGEN_ELEMENTWISE | PROGEN_DECL_VARIETY)) | PROGEN_RACE_FREE;
  if (po.flags & PROGEN_NO_MMA) po.flags &= ~PROGEN_MMA;
  po.claims = claims;
  progen_program pp;
  uint64_t mixed = seed * 0x9e3779b97f4a7c15ull ^ (index + 1) * 0xd1b54a32d192ed03ull;
  /* Attempt 0 is the program of (seed, index) a run without claims has. */
  mixed ^= (uint64_t)attempt * 0xbf58476d1ce4e5b9ull;
  vyre_status st = fz_progen_generate(mixed, &po, &pp, err);
  if (st != VYRE_OK) {
    vyre_error_prefix(err, "fuzz: program %llu of seed %llu", (unsigned long long)index,
                      (unsigned long long)seed);
    return st;
  }
  out->bytes = pp.bytes;
  out->size = pp.size;
  out->inputs = pp.inputs;
  out->input_count = pp.input_count;
  out->options.struct_size = sizeof out->options;
  out->options.ulp_budget = pp.ulp_budget;
  return VYRE_OK;
}

void fz_program_free(fz_program *p) {
  if (!p) return;
  progen_program pp = {p->bytes, p->size, p->inputs, p->input_count, 0};
  fz_progen_program_free(&pp);
  memset(p, 0, sizeof *p);
}

/* Write the capsule of program `index` and, when asked, its minimized form. */
static void keep_mismatch(const fz_options *o, cf_target *t, vyre_backend *reference, cf_case *c,
                          const cf_result *want, const cf_result *got, const cf_diff *d,
                          uint64_t index) {
  const char *root = o->capsule_dir ? o->capsule_dir : "fuzz-failures";
  vyre_error err = VYRE_ERROR_INIT;
  if (cf_mkdirs(root, &err) != VYRE_OK) {
    fprintf(o->out, "  cannot keep the capsule: %s\n", err.message);
    return;
  }
  char origin[160], path[4200];
  snprintf(origin, sizeof origin, "fuzz seed %" PRIu64 " program %" PRIu64, o->seed, index);
  snprintf(path, sizeof path, "%s/fuzz-%s-%" PRIu64 "-%" PRIu64 ".vyre", root, t->id, o->seed,
           index);
  cf_capsule_info info = {origin, t->id, t->version, t->has_profile ? t->profile.name : NULL,
                          got, want, d, NULL};
  if (cf_capsule_write(path, c, &info, &err) != VYRE_OK) {
    fprintf(o->out, "  cannot write %s: %s\n", path, err.message);
    return;
  }
  fprintf(o->out, "  capsule: %s\n", path);
  if (!o->minimize) return;
  cf_pair pair = {t->backend, reference, d->kind, got->status, want->status};
  snprintf(path, sizeof path, "%s/fuzz-%s-%" PRIu64 "-%" PRIu64 ".min.vyre", root, t->id, o->seed,
           index);
  cf_min_capsule mc;
  if (cf_minimize_to_capsule(c, t, &pair, o->minimize_tries, origin, NULL, path, &mc, &err) !=
      VYRE_OK)
    fprintf(o->out, "  minimizer: %s\n", err.message);
  else if (mc.written)
    fprintf(o->out, "  minimized: %s (%s)\n", path, mc.note);
  else
    fprintf(o->out, "  minimizer: no smaller program keeps the mismatch (%u tries)\n",
            mc.stats.tries);
}

/* Clear the live progress line (before a line goes to o->out). */
static void progress_clear(const fz_options *o) {
  if (o->progress) o->progress(o->progress_ctx, NULL);
}

/* "WORD rest" on o->out, the word in color when o->color. */
static void say(const fz_options *o, const char *word, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
static void say(const fz_options *o, const char *word, const char *fmt, ...) {
  va_list ap;
  progress_clear(o);
  if (o->color) fprintf(o->out, "\033[%sm%s\033[0m ", strcmp(word, "REFUSED") ? "1;31" : "33", word);
  else fprintf(o->out, "%s ", word);
  va_start(ap, fmt);
  vfprintf(o->out, fmt, ap);
  va_end(ap);
}

static void show_progress(const fz_options *o, uint64_t done, uint32_t mismatches,
                          uint32_t failures) {
  if (!o->progress) return;
  char line[160];
  snprintf(line, sizeof line, "fuzz: %" PRIu64 "/%" PRIu64 " programs, %u mismatches, %u other "
           "failures", done, o->count, mismatches, failures);
  o->progress(o->progress_ctx, line);
}

/* The reference must run every generated program (or trap): anything
 * else is a generator or reference bug. */
static int reference_ok(const cf_result *r) { return r->status == VYRE_OK || r->status == VYRE_TRAP; }

static int run_ptxas(const fz_options *o, vyre_backend *reference, vyre_error *err) {
  const char *dir = o->work_dir ? o->work_dir : (o->capsule_dir ? o->capsule_dir : "fuzz-ptxas");
  fz_ptxas *bt = NULL;
  const char *arch = o->arch ? o->arch : "sm_90";
  uint32_t major = 9, minor = 0;
  if (sscanf(arch, "sm_%1u%1u", &major, &minor) != 2) {
    vyre_error_set(err, VYRE_INVALID_ARGUMENT, 0, "--arch %s: not of the form sm_XY. Fix: "
                   "--arch sm_90", arch);
    return 2;
  }
  if (fz_ptxas_open(o->ptxas, arch, dir, &bt, err) != VYRE_OK) return 2;
  /* MMA needs sm_80 codegen: only when asked for (--mma). */
  uint32_t flags = o->flags & PROGEN_MMA ? o->flags : o->flags | PROGEN_NO_MMA;
  /* Strict programs lower transcendentals to the correctly rounded variants. */
  flags |= PROGEN_STRICT_TRANSCENDENTAL;
  uint32_t bad = 0, traps = 0, unsupported = 0;
  uint64_t insts = 0;
  double t0 = vyre__now_seconds();
  uint64_t ran = 0;
  for (uint64_t i = o->start; i < o->start + o->count && bad < (o->max_failures ? o->max_failures : 10); i++) {
    fz_program fp;
    ran++;
    vyre_error e = VYRE_ERROR_INIT;
    if (fz_generate(o->seed, i, flags, &fp, &e) != VYRE_OK) {
      say(o, "FAIL", "program %" PRIu64 ": %s\n", i, e.message);
      bad++;
      continue;
    }
    cf_case *c = NULL;
    if (cf_case_from_program(fp.bytes, fp.size, fp.inputs, &fp.options, "fuzz", "fuzz", &c, &e) !=
        VYRE_OK) {
      say(o, "FAIL", "program %" PRIu64 ": %s\n", i, e.message);
      bad++;
      fz_program_free(&fp);
      continue;
    }
    insts += c->decoded->inst_count;
    cf_result r;
    cf_run_reference(reference, c, &r);
    if (!reference_ok(&r)) {
      say(o, "FAIL", "program %" PRIu64 ": the reference refused it: %s %s\n", i,
              vyre_status_name(r.status), r.message);
      bad++;
    }
    if (r.status == VYRE_TRAP) traps++;
    cf_result_free(&r);
    cg_options co = {major, minor, c->options.ulp_budget,
                     {c->decoded->header.workgroup_size[0], c->decoded->header.workgroup_size[1],
                      c->decoded->header.workgroup_size[2]}, 0};
    char *ptx = NULL;
    size_t len = 0;
    cg_kernel_info info;
    vyre_status st = cg_emit_ptx(c->decoded, &co, &ptx, &len, &info, &e);
    char label[96];
    snprintf(label, sizeof label, "seed %" PRIu64 " program %" PRIu64, o->seed, i);
    if (st == VYRE_UNSUPPORTED && (c->decoded->features & VYRE_FEAT_TRANSCENDENTAL)) {
      unsupported++; /* a build without the math library */
    } else if (st != VYRE_OK) {
      say(o, "FAIL", "%s: codegen: %s\n", label, e.message);
      bad++;
    } else if (fz_ptxas_add(bt, ptx, info.entry, label, &e) != VYRE_OK) {
      say(o, "FAIL", "%s: %s\n", label, e.message);
      bad++;
    }
    free(ptx);
    cf_case_free(c);
    fz_program_free(&fp);
    if (o->verbose && (i - o->start + 1) % 100 == 0) {
      progress_clear(o);
      fprintf(o->out, "  %" PRIu64 " programs\n", i - o->start + 1);
    }
    show_progress(o, i - o->start + 1, 0, bad);
  }
  uint32_t kernels = 0, failures = 0;
  progress_clear(o);
  vyre_status st = fz_ptxas_finish(bt, o->out, &kernels, &failures, err);
  fz_ptxas_close(bt);
  double dt = vyre__now_seconds() - t0;
  if (o->summary) {
    memset(o->summary, 0, sizeof *o->summary);
    o->summary->programs = ran;
    o->summary->failures = bad;
    o->summary->traps = traps;
    o->summary->skipped = unsupported;
    o->summary->kernels = kernels;
    o->summary->ptxas_failures = failures;
    o->summary->flags = flags;
    o->summary->stopped = bad >= (o->max_failures ? o->max_failures : 10);
    o->summary->seconds = dt;
  }
  fprintf(o->out, "fuzz --ptxas %s: seed %" PRIu64 ", %" PRIu64 " programs (%.1f instructions on "
          "average), %u traps on the reference, %u kernels assembled by ptxas, %u failed, %u "
          "without the math library; %u other failures; %.1f s\n", arch, o->seed, o->count,
          o->count ? (double)insts / (double)o->count : 0.0, traps, kernels, failures,
          unsupported, bad, dt);
  /* 2: the caller prints err (ptxas could not be run), never a bare 1. */
  if (st != VYRE_OK) return 2;
  return bad || failures ? 1 : 0;
}

/* Whether t can be fuzzed under o (else err says why: no instance, or
 * --mma on a backend that does not claim the MMA ops); *flags receives
 * the generator flags of the run. */
static int fuzzable(const fz_options *o, const cf_target *t, uint32_t *flags, vyre_error *err) {
  if (!t || !t->backend) {
    /* Nothing was fuzzed: a failure, not a pass (issue 13). */
    vyre_error_set(err, VYRE_UNSUPPORTED, 0, "backend %s%s%s%s cannot be fuzzed: %s",
                   t && t->id[0] ? t->id : "?", t && t->path[0] ? " (" : "",
                   t && t->path[0] ? t->path : "", t && t->path[0] ? ")" : "",
                   t && t->reason[0] ? t->reason : "no instance. Fix: `vyre list` shows why");
    return 0;
  }
  *flags = o->flags | fz_flags_for(&t->offer);
  if (!(*flags & PROGEN_MMA) || !(*flags & PROGEN_NO_MMA)) return 1;
  vyre_error_set(err, VYRE_UNSUPPORTED, 0, "backend %s does not claim the MMA ops (mma_fill, "
                 "mma_load, mma, mma_store and the tensor_cores capability), so --mma has "
                 "nothing to run. Fix: fuzz a backend that claims them (CUDA: compute "
                 "capability 8.0 or later), or drop --mma", t->id);
  return 0;
}

/* Attempts per program at one within the target's claims (fz_generate_claimed). */
#define CLAIMED_ATTEMPTS 8u

/*
 * Program `index` as a case within t's claims: attempt 0, else further
 * attempts while a program needs something t does not claim.  1: *out is
 * the case; 0: none was within them (why[] says what the last needed);
 * -1: a generator or decoder failure, said on o->out.
 */
static int claimed_case(const fz_options *o, const cf_target *t, const progen_claims *claims,
                        uint32_t flags, uint64_t index, cf_case **out, char *why,
                        size_t why_size) {
  *out = NULL;
  for (uint32_t k = 0; k < CLAIMED_ATTEMPTS; k++) {
    fz_program fp;
    vyre_error e = VYRE_ERROR_INIT;
    if (fz_generate_claimed(o->seed, index, flags, claims, k, &fp, &e) != VYRE_OK) {
      say(o, "FAIL", "program %" PRIu64 ": %s\n", index, e.message);
      return -1;
    }
    cf_case *c = NULL;
    vyre_status st = cf_case_from_program(fp.bytes, fp.size, fp.inputs, &fp.options, "program",
                                          "fuzz", &c, &e);
    fz_program_free(&fp);
    if (st != VYRE_OK) {
      say(o, "FAIL", "program %" PRIu64 ": %s\n", index, e.message);
      return -1;
    }
    snprintf(c->name, sizeof c->name, "s%" PRIu64 "-p%" PRIu64, o->seed, index);
    vyre_needs needs;
    cf_case_needs(c, &needs);
    if (cf_offer_covers(&t->offer, &needs, why, why_size)) {
      *out = c;
      return 1;
    }
    cf_case_free(c);
  }
  return 0;
}

int fz_too_many_skipped(uint64_t programs, uint64_t skipped) {
  return skipped && (skipped >= programs || skipped * 100 > programs * FZ_SKIP_PERCENT);
}

/* fz_too_many_skipped's verdict on o->out: 1 when the run fails by it. */
static int too_many_skipped(const fz_options *o, const cf_target *t, uint64_t done,
                            uint32_t skipped, const char *why) {
  if (!fz_too_many_skipped(done, skipped)) return 0;
  if (skipped >= done)
    say(o, "FAIL", "fuzz %s: no program was compared: each of the %" PRIu64 " needed something "
        "the backend does not claim (e.g. %s). Fix: check the plugin's registration (ops, "
        "op_types, storage_types, capabilities); `vyre conform --plugin FILE --coverage` "
        "lists its claims\n", t->id, done, why);
  else
    say(o, "FAIL", "fuzz %s: %u of %" PRIu64 " programs (more than %u%%) were skipped: no "
        "program within its claims was found in %u attempts (e.g. %s). Fix: leave the parts "
        "it lacks out with --without, or claim what it runs\n", t->id, skipped, done,
        FZ_SKIP_PERCENT, CLAIMED_ATTEMPTS, why);
  return 1;
}

int fz_run(const fz_options *o, cf_target *t, vyre_backend *reference, vyre_error *err) {
  if (o->ptxas_mode) return run_ptxas(o, reference, err);
  uint32_t flags = 0;
  if (!fuzzable(o, t, &flags, err)) return 2;
  uint32_t mismatches = 0, traps = 0, skipped = 0, errors = 0, refused = 0;
  uint32_t max_fail = o->max_failures ? o->max_failures : 10;
  uint64_t done = 0;
  double t0 = vyre__now_seconds();
  fprintf(o->out, "fuzz %s: seed %" PRIu64 ", programs %" PRIu64 "..%" PRIu64 ", generator flags "
          "0x%x\n", t->id, o->seed, o->start, o->start + o->count - 1, flags);
  progen_claims *claims = malloc(sizeof *claims);
  if (!claims) {
    vyre_error_set(err, VYRE_OUT_OF_MEMORY, 0, "fuzz: out of memory");
    return 2;
  }
  fz_claims_from(&t->offer, claims);
  char why[256] = "", last_why[256] = "";
  for (uint64_t i = o->start; i < o->start + o->count && mismatches + errors < max_fail; i++) {
    done++;
    cf_case *c = NULL;
    int got_case = claimed_case(o, t, claims, flags, i, &c, why, sizeof why);
    if (got_case < 0) {
      errors++;
      continue;
    }
    if (!got_case) {
      skipped++;
      snprintf(last_why, sizeof last_why, "%s", why);
    } else {
      cf_result want, got;
      cf_run_reference(reference, c, &want);
      cf_run(t->backend, c, &got);
      cf_diff d;
      if (!reference_ok(&want)) {
        say(o, "FAIL", "program %" PRIu64 ": the reference refused it: %s %s\n", i,
                vyre_status_name(want.status), want.message);
        errors++;
      } else if (got.status == VYRE_LIMIT &&
                 (want.status == VYRE_OK || want.status == VYRE_TRAP) &&
                 (c->decoded->features & VYRE_FEAT_GRID_BARRIER)) {
        /* A grid barrier needs the whole grid resident at once; a backend
         * may refuse a grid larger than its device holds (docs/semantics.md, the
         * grid-barrier rule).  Counted and shown, not a wrong answer; the refusal
         * comes before anything runs, so a program that traps on the
         * reference (seed 2026 program 7313) is refused, not mismatched. */
        refused++;
        say(o, "REFUSED", "program %" PRIu64 " (grid barrier, grid too large for the "
                "device): %s\n", i, got.message);
      } else if (!cf_compare(c, &want, &got, &d)) {
        mismatches++;
        say(o, "MISMATCH", "seed %" PRIu64 " program %" PRIu64 ": %s\n", o->seed,
                i, d.text);
        keep_mismatch(o, t, reference, c, &want, &got, &d, i);
      }
      if (want.status == VYRE_TRAP) traps++;
      cf_result_free(&want);
      cf_result_free(&got);
    }
    cf_case_free(c);
    show_progress(o, done, mismatches, errors);
    if ((o->verbose && done % 100 == 0) || done % 1000 == 0) {
      progress_clear(o);
      fprintf(o->out, "  %" PRIu64 " programs, %u mismatches (%.1f s)\n", done, mismatches,
              vyre__now_seconds() - t0);
      fflush(o->out); /* progress survives a killed run */
    }
  }
  progress_clear(o);
  if (o->summary) {
    memset(o->summary, 0, sizeof *o->summary);
    o->summary->programs = done;
    o->summary->mismatches = mismatches;
    o->summary->failures = errors;
    o->summary->traps = traps;
    o->summary->skipped = skipped;
    o->summary->refused = refused;
    o->summary->flags = flags;
    o->summary->stopped = mismatches + errors >= max_fail;
    o->summary->seconds = vyre__now_seconds() - t0;
  }
  fprintf(o->out, "fuzz %s: seed %" PRIu64 ", %" PRIu64 " programs, %u mismatches, %u other "
          "failures, %u traps (agreed), %u skipped-unsupported, %u refused (grid barrier over "
          "the device's co-resident limit); %.1f s%s\n", t->id, o->seed, done,
          mismatches, errors, traps, skipped, refused, vyre__now_seconds() - t0,
          mismatches + errors >= max_fail ? " (stopped at --max-failures)" : "");
  free(claims);
  int skips = too_many_skipped(o, t, done, skipped, last_why);
  return mismatches || errors || skips ? 1 : 0;
}
